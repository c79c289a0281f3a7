/*
 * tests/support/pgwt_snap.h — terse construction of snapshots for the
 * unit suites and benchmarks.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWT_SNAP_H
#define PGWT_SNAP_H

#include <stdbool.h>
#include <stddef.h>

#include "pgwitness/pgwitness.h"

/* One column: name, type, and optionally statistics. */
typedef struct pgwt_col {
    const char *name;
    const char *type;
    bool analysed;             /* false: no profile */
    double null_frac;
    double n_distinct;
    const char *const *mcv;    /* NULL-terminated, with freqs */
    const double *freqs;
    const char *const *hist;   /* NULL-terminated */
} pgwt_col;

/* Builds a snapshot of public.<table> captured at `usec` with the given
 * columns (n of them) and reltuples; fails the current test on error. */
pgw_snapshot *pgwt_snapshot(const char *table, long long usec, double reltuples,
                            const pgwt_col *cols, size_t n);
/* The same, with options and a resource identity (NULL for none). */
pgw_snapshot *pgwt_snapshot_opts(const char *table, const char *resource, long long usec,
                                 double reltuples, const pgwt_col *cols, size_t n,
                                 const pgw_snapshot_options *opts);

#endif
