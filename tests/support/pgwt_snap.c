/*
 * tests/support/pgwt_snap.c — see pgwt_snap.h.
 * SPDX-License-Identifier: MIT
 */
#include "pgwt_snap.h"

#include <check.h>

static size_t count(const char *const *v)
{
    size_t n = 0;
    while (v && v[n])
        n++;
    return n;
}

pgw_snapshot *pgwt_snapshot_opts(const char *table, const char *resource, long long usec,
                                 double reltuples, const pgwt_col *cols, size_t n,
                                 const pgw_snapshot_options *opts)
{
    pgw_snapshot_builder *b = NULL;
    pgw_error err;
    ck_assert_int_eq(pgw_snapshot_builder_new(&b, opts, &err), PGW_OK);
    ck_assert_int_eq(pgw_snapshot_builder_set_table(b, "public", table, 16384, &err), PGW_OK);
    ck_assert_int_eq(pgw_snapshot_builder_set_resource(b, resource, &err), PGW_OK);
    ck_assert_int_eq(pgw_snapshot_builder_set_captured_at(b, usec, &err), PGW_OK);
    ck_assert_int_eq(pgw_snapshot_builder_set_reltuples(b, reltuples, &err), PGW_OK);
    for (size_t i = 0; i < n; i++) {
        const pgwt_col *c = &cols[i];
        pgw_column_stats st = PGW_COLUMN_STATS_INIT;
        st.null_frac = c->null_frac;
        st.n_distinct = c->n_distinct;
        st.avg_width = 8;
        st.most_common_vals = c->mcv;
        st.most_common_freqs = c->freqs;
        st.n_most_common = count(c->mcv);
        st.histogram_bounds = c->hist;
        st.n_histogram_bounds = count(c->hist);
        int rc = pgw_snapshot_builder_add_column(b, c->name, c->type, c->analysed ? &st : NULL,
                                                 &err);
        ck_assert_msg(rc == PGW_OK, "add_column %s: %s", c->name, err.message);
    }
    pgw_snapshot *s = NULL;
    ck_assert_int_eq(pgw_snapshot_builder_finish(&s, b, &err), PGW_OK);
    pgw_snapshot_builder_free(b);
    return s;
}

pgw_snapshot *pgwt_snapshot(const char *table, long long usec, double reltuples,
                            const pgwt_col *cols, size_t n)
{
    return pgwt_snapshot_opts(table, NULL, usec, reltuples, cols, n, NULL);
}
