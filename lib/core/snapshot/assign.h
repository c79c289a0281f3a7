/*
 * lib/core/snapshot/assign.h — an exact optimal one-to-one assignment with a
 * threshold, for pairing removed with added columns. Not installed.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_ASSIGN_H
#define PGWITNESS_ASSIGN_H

#include <stddef.h>
#include <stdint.h>

/* Reduced costs within this of zero count as tight, and column potentials
 * within it of zero as zero, when ties are broken (assign.c). In effect,
 * two totals that agree to within about (nr + nc) * PGWI_ASSIGN_TIE_TOL are
 * a tie. */
#define PGWI_ASSIGN_TIE_TOL 1e-12

/*
 * Pairs rows with columns, one to one, so that the sum of the scores of the
 * chosen pairs is as large as possible.
 *
 * score: nr x nc, row-major (score[i * nc + j] is row i with column j). A
 * score is in [0, 1], or negative for "not a candidate". Only pairs with
 * score >= threshold (compared exactly) may be chosen: a pair below it is
 * never chosen, whatever that would gain elsewhere, and a row may stay
 * unassigned. A pair of score 0 at threshold 0 may be chosen.
 *
 * Fills row_to_col[nr] with the column assigned to each row, or -1. Of the
 * assignments with the largest total, it returns the lexicographically
 * smallest vector row_to_col with -1 ranked after every column: row 0 gets
 * the lowest column it has in any optimal assignment (an assigned row
 * before an unassigned one), then row 1 the lowest it has in any optimal
 * assignment that keeps row 0's, and so on. Totals are equal up to
 * PGWI_ASSIGN_TIE_TOL (above). The result is deterministic.
 *
 * Method: the Hungarian method (Kuhn 1955; Munkres 1957) in the
 * shortest-augmenting-path form of Jonker and Volgenant (1987), O(nr * nc *
 * min(nr, nc)) at worst, then a walk over the tight edges of the optimal
 * potentials for the tie rule (assign.c says how, with the references).
 *
 * Returns PGW_OK; PGW_EINVAL (row_to_col NULL with nr > 0, score NULL with
 * nr * nc > 0, threshold NaN or outside [0, 1], a score NaN or above 1,
 * nr * nc overflowing size_t, nr + nc + 1 beyond INT32_MAX); PGW_ENOMEM
 * (allocations go through pgwi_malloc). On failure row_to_col is left
 * untouched.
 */
int pgwi_assign(int32_t *row_to_col, const double *score, size_t nr, size_t nc,
                double threshold);

#endif
