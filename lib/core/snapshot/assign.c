/*
 * lib/core/snapshot/assign.c — pgwi_assign: an exact optimal one-to-one
 * assignment of rows to columns with a threshold (assign.h), for pairing a
 * table's removed columns with its added ones. A greedy choice (best pair
 * first) can pair a start column with an end column; this one maximises the
 * total.
 *
 * The problem is solved as a rectangular linear assignment problem of
 * minimum cost. Row i may take real column j (cost -score) when score >=
 * threshold, and its own "unassigned" column nc + i (cost 0); a pair below
 * the threshold is no edge at all, so no assignment can contain it. Every
 * row can always be assigned (to its own unassigned column), so an optimum
 * exists; taking a below-threshold pair is never possible, and leaving a row
 * unassigned is.
 *
 * 1. The Hungarian method: H. W. Kuhn, "The Hungarian method for the
 *    assignment problem", Naval Research Logistics Quarterly 2 (1955);
 *    J. Munkres, "Algorithms for the assignment and transportation
 *    problems", J. SIAM 5 (1957); here in the shortest-augmenting-path form
 *    of R. Jonker and A. Volgenant, "A shortest augmenting path algorithm
 *    for dense and sparse linear assignment problems", Computing 38 (1987),
 *    without their initialisation heuristics: rows are added one by one,
 *    each by a Dijkstra search over reduced costs c_ij - u_i - v_j, which
 *    the potentials u, v keep non-negative. O(nr^2 * nc) at worst, with nr
 *    columns more (one per row) that each cost O(1) per search step: a row's
 *    own unassigned column is reached only from that row.
 *
 * 2. The tie rule. The potentials are an optimal dual solution (u_i + v_j
 *    <= c_ij on every edge, v_j <= 0, v_j = 0 on an uncovered column), so by
 *    complementary slackness an assignment of every row is optimal exactly
 *    when it uses only tight edges (c_ij - u_i - v_j = 0) and covers every
 *    column with v_j < 0. Add one "slack" row per uncovered column, joined to
 *    every column with v_j = 0: the optimal assignments are then the perfect
 *    matchings of a square graph, and two of them differ by alternating
 *    cycles. Row by row, the row is moved to the lowest column it can reach
 *    by such a cycle through rows not yet fixed (a backward breadth-first
 *    search from the row's current column over the tight edges), and fixed
 *    there. That gives the lexicographically smallest optimal row_to_col
 *    (assign.h), in O(nr * (tight edges + nc + nr)) after the search, which
 *    is short in practice because a row without a tight edge to a lower free
 *    or unfixed column is fixed at once.
 *
 * Floating point: the search compares exactly, so the same input always
 * gives the same result; the tie rule counts reduced costs within
 * PGWI_ASSIGN_TIE_TOL of zero as tight and potentials within it of zero as
 * zero. The threshold is compared exactly (score >= threshold).
 * SPDX-License-Identifier: MIT
 */
#include "assign.h"

#include <math.h>
#include <string.h>

#include "internal.h"

#define TOL PGWI_ASSIGN_TIE_TOL

/* The solver's state. Columns 0..nc-1 are real, nc + i is row i's
 * unassigned column, and m = nc + nr is the search's virtual start. */
typedef struct lap {
    const double *score;
    size_t nr, nc, m;
    double threshold;
    double *u;       /* [nr] row potentials */
    double *v;       /* [m + 1] column potentials */
    double *minv;    /* [m + 1] the search's tentative distances */
    int32_t *owner;  /* [m + 1] the row holding each column, or -1 */
    int32_t *way;    /* [m + 1] the column before each in the search tree */
    int32_t *used;   /* [m + 1] stamped with i + 1 when reached for row i */
    int32_t *touched;/* [nr] unassigned columns the current search reached */
    int32_t *col;    /* [nr] the column each row holds */
} lap;

/* Adds row i to the assignment: a Dijkstra search from row i over reduced
 * costs, growing a tree of columns (and the rows that hold them) until it
 * reaches a free column, with the potentials shifted at each step so that
 * the tree's edges stay tight; then the augmentation along the tree's path.
 * Costs may be negative: row i's potential starts at 0 and the first step
 * lowers it to row i's smallest cost. */
static void add_row(lap *L, size_t i)
{
    const size_t nc = L->nc, m = L->m;
    const int32_t stamp = (int32_t)i + 1;
    double *u = L->u, *v = L->v, *minv = L->minv;
    int32_t *owner = L->owner, *way = L->way, *used = L->used;
    size_t ntouched = 0;

    for (size_t j = 0; j < nc; j++)
        minv[j] = HUGE_VAL;
    owner[m] = (int32_t)i;
    size_t j0 = m;
    do {
        used[j0] = stamp;
        size_t i0 = (size_t)owner[j0];
        const double *row = L->score + i0 * nc;
        const double ui = u[i0];
        double delta = HUGE_VAL;
        size_t j1 = m;
        for (size_t j = 0; j < nc; j++) {
            if (used[j] == stamp)
                continue;
            double s = row[j];
            if (s >= L->threshold) {
                double cur = -s - ui - v[j];
                if (cur < minv[j]) {
                    minv[j] = cur;
                    way[j] = (int32_t)j0;
                }
            }
            if (minv[j] < delta) {
                delta = minv[j];
                j1 = j;
            }
        }
        /* Row i0's own unassigned column: reached only from row i0, and
         * free (row i0 holds column j0, or is row i, which holds none). */
        size_t jd = nc + i0;
        minv[jd] = -ui - v[jd];
        way[jd] = (int32_t)j0;
        L->touched[ntouched++] = (int32_t)jd;
        for (size_t t = 0; t < ntouched; t++) {
            size_t j = (size_t)L->touched[t];
            if (minv[j] < delta) {
                delta = minv[j];
                j1 = j;
            }
        }
        /* Shift the potentials by delta: the reached columns (and their
         * rows) keep their reduced costs, the others come delta closer. */
        for (size_t j = 0; j < nc; j++) {
            if (used[j] == stamp) {
                u[owner[j]] += delta;
                v[j] -= delta;
            } else {
                minv[j] -= delta;
            }
        }
        for (size_t t = 0; t < ntouched; t++)
            minv[L->touched[t]] -= delta;
        u[owner[m]] += delta;
        v[m] -= delta;
        j0 = j1;
    } while (owner[j0] >= 0);
    /* Augment along the path back to the start. */
    do {
        size_t j1 = (size_t)way[j0];
        owner[j0] = owner[j1];
        j0 = j1;
    } while (j0 != m);
}

/* Whether row i's edge to column j (real or its own unassigned one) is an
 * edge that is tight under the final potentials. */
static bool tight(const lap *L, size_t i, size_t j)
{
    double c;
    if (j < L->nc) {
        double s = L->score[i * L->nc + j];
        if (!(s >= L->threshold))
            return false;
        c = -s;
    } else {
        if (j != L->nc + i)
            return false;
        c = 0;
    }
    return c - L->u[i] - L->v[j] <= TOL;
}

/* The tie rule's graph: for each column, the rows with a tight edge to it
 * (compressed rows: rev[rev_start[j] .. rev_start[j + 1])), and the search's
 * scratch arrays. */
typedef struct ties {
    int32_t *block;
    int32_t *rev_start; /* [m + 1] */
    int32_t *rev;       /* [number of tight edges] */
    int32_t *good;      /* [m] stamped with i + 1: can be freed for row i */
    int32_t *next;      /* [m] where the holder of a good column moves */
    int32_t *queue;     /* [m] */
} ties;

static int build_ties(ties *t, const lap *L)
{
    const size_t nr = L->nr, nc = L->nc, m = L->m;
    uint64_t n_tight = 0;
    for (size_t i = 0; i < nr; i++) {
        for (size_t j = 0; j < nc; j++)
            n_tight += tight(L, i, j);
        n_tight += tight(L, i, nc + i);
    }
    uint64_t count = (uint64_t)(m + 1) + 3 * (uint64_t)m + n_tight;
    if (count > SIZE_MAX / sizeof(int32_t))
        return PGW_ENOMEM;
    if (!(t->block = pgwi_calloc((size_t)count, sizeof(int32_t))))
        return PGW_ENOMEM;
    t->rev_start = t->block;
    t->good = t->rev_start + m + 1;
    t->next = t->good + m;
    t->queue = t->next + m;
    t->rev = t->queue + m;
    /* Count per column into rev_start[j + 1], sum, then fill in row order
     * (each column's rows end up ascending). */
    for (size_t i = 0; i < nr; i++) {
        for (size_t j = 0; j < nc; j++)
            t->rev_start[j + 1] += tight(L, i, j);
        t->rev_start[nc + i + 1] += tight(L, i, nc + i);
    }
    for (size_t j = 0; j < m; j++)
        t->rev_start[j + 1] += t->rev_start[j];
    int32_t *fill = t->next; /* scratch: the next free slot of each column */
    memcpy(fill, t->rev_start, m * sizeof *fill);
    for (size_t i = 0; i < nr; i++) {
        for (size_t j = 0; j < nc; j++)
            if (tight(L, i, j))
                t->rev[fill[j]++] = (int32_t)i;
        if (tight(L, i, nc + i))
            t->rev[fill[nc + i]++] = (int32_t)i;
    }
    return PGW_OK;
}

/* The lowest real column below row i's current one that row i has a tight
 * edge to and that no fixed row (< i) holds; m when there is none. Row i's
 * own unassigned column ranks after every real column, so it is never a
 * better choice. */
static size_t first_candidate(const lap *L, size_t i)
{
    size_t limit = (size_t)L->col[i] < L->nc ? (size_t)L->col[i] : L->nc;
    for (size_t j = 0; j < limit; j++) {
        int32_t h = L->owner[j];
        if ((h < 0 || (size_t)h > i) && tight(L, i, j))
            return j;
    }
    return L->m;
}

/* Moves row i to the lowest candidate column it can have in an optimal
 * assignment that keeps rows 0..i-1 where they are, if that is lower than
 * its current column. `first` is first_candidate(L, i) (< m). */
static void improve_row(lap *L, ties *t, size_t i, size_t first)
{
    const size_t nc = L->nc, m = L->m;
    const int32_t gen = (int32_t)i + 1;
    int32_t *good = t->good, *next = t->next, *queue = t->queue;
    int32_t *owner = L->owner, *col = L->col;
    const size_t old = (size_t)col[i];

    /* Backward search: a column is good when its holder can give it up and
     * be moved, along tight edges through rows after i, until the chain
     * ends in row i's current column (which row i gives up). A free column
     * is held by a slack row, which can move to any good column with a zero
     * potential (leaving it uncovered). */
    size_t head = 0, tail = 0;
    bool slack_done = false;
    good[old] = gen;
    queue[tail++] = (int32_t)old;
    while (head < tail && good[first] != gen) {
        size_t b = (size_t)queue[head++];
        for (int32_t e = t->rev_start[b]; e < t->rev_start[b + 1]; e++) {
            size_t k = (size_t)t->rev[e];
            if (k <= i)
                continue;
            size_t a = (size_t)col[k];
            if (a != b && good[a] != gen) {
                good[a] = gen;
                next[a] = (int32_t)b;
                queue[tail++] = (int32_t)a;
            }
        }
        if (!slack_done && L->v[b] >= -TOL) {
            slack_done = true;
            for (size_t f = 0; f < m; f++) {
                if (owner[f] < 0 && good[f] != gen) {
                    good[f] = gen;
                    next[f] = (int32_t)b;
                    queue[tail++] = (int32_t)f;
                }
            }
        }
    }
    size_t c = m;
    size_t limit = old < nc ? old : nc;
    for (size_t j = first; j < limit; j++) {
        int32_t h = owner[j];
        if (good[j] == gen && (h < 0 || (size_t)h > i) && tight(L, i, j)) {
            c = j;
            break;
        }
    }
    if (c == m)
        return;
    /* Rotate the cycle: row i takes c, c's holder moves to next[c], and so
     * on until row i's old column is taken (or left uncovered, when a slack
     * row is the one that moves there). mover -1 is a slack row. */
    int32_t mover = (int32_t)i;
    size_t cur = c;
    for (;;) {
        int32_t held_by = owner[cur];
        owner[cur] = mover;
        if (mover >= 0)
            col[mover] = (int32_t)cur;
        if (cur == old)
            break;
        mover = held_by;
        cur = (size_t)next[cur];
    }
}

int pgwi_assign(int32_t *row_to_col, const double *score, size_t nr, size_t nc,
                double threshold)
{
    if (isnan(threshold) || threshold < 0 || threshold > 1)
        return PGW_EINVAL;
    if (nr == 0)
        return PGW_OK;
    if (!row_to_col)
        return PGW_EINVAL;
    if (nc > 0 && nr > SIZE_MAX / nc)
        return PGW_EINVAL;
    if (nr >= INT32_MAX || nc >= INT32_MAX || nr + nc >= INT32_MAX)
        return PGW_EINVAL;
    if (nc == 0) {
        for (size_t i = 0; i < nr; i++)
            row_to_col[i] = -1;
        return PGW_OK;
    }
    if (!score)
        return PGW_EINVAL;
    for (size_t k = 0; k < nr * nc; k++)
        if (isnan(score[k]) || score[k] > 1)
            return PGW_EINVAL;

    lap L = {.score = score, .nr = nr, .nc = nc, .m = nc + nr, .threshold = threshold};
    const size_t m = L.m;
    /* One block: the doubles first, then the int32 arrays. */
    uint64_t n_dbl = (uint64_t)nr + 2 * ((uint64_t)m + 1);
    uint64_t n_int = 3 * ((uint64_t)m + 1) + 2 * (uint64_t)nr;
    if (n_dbl > SIZE_MAX / sizeof(double) ||
        n_int > (SIZE_MAX - n_dbl * sizeof(double)) / sizeof(int32_t))
        return PGW_ENOMEM;
    char *block = pgwi_malloc((size_t)(n_dbl * sizeof(double) + n_int * sizeof(int32_t)));
    if (!block)
        return PGW_ENOMEM;
    L.u = (double *)(void *)block;
    L.v = L.u + nr;
    L.minv = L.v + m + 1;
    L.owner = (int32_t *)(void *)(L.minv + m + 1);
    L.way = L.owner + m + 1;
    L.used = L.way + m + 1;
    L.touched = L.used + m + 1;
    L.col = L.touched + nr;
    for (size_t i = 0; i < nr; i++)
        L.u[i] = 0;
    for (size_t j = 0; j <= m; j++) {
        L.v[j] = 0;
        L.owner[j] = -1;
        L.used[j] = 0;
    }

    for (size_t i = 0; i < nr; i++)
        add_row(&L, i);
    for (size_t j = 0; j < m; j++)
        if (L.owner[j] >= 0)
            L.col[L.owner[j]] = (int32_t)j;

    int rc = PGW_OK;
    ties t = {0};
    for (size_t i = 0; i < nr; i++) {
        size_t first = first_candidate(&L, i);
        if (first == m)
            continue;
        if (!t.block && (rc = build_ties(&t, &L)) < 0)
            goto done;
        improve_row(&L, &t, i, first);
    }
    for (size_t i = 0; i < nr; i++)
        row_to_col[i] = (size_t)L.col[i] < nc ? L.col[i] : -1;
done:
    pgwi_free(t.block);
    pgwi_free(block);
    return rc;
}
