/*
 * tests/unit/check_inval_diff.c — the differential soundness test of the
 * invalidation rules (issue 5, test 2).
 *
 * An oracle (inval_oracle.h) holds two small random tables and evaluates
 * random queries — equality, IN, range, IS NULL and column-to-column
 * filters, sorts, LIMIT/OFFSET windows, projections, two independent lists,
 * a join, a count — before and after random statements (single- and
 * multi-row inserts, updates of any columns including the key, deletes,
 * truncates, zero-row updates). pgw_decide() sees only the declaration and
 * the write set. A pair where the oracle's result changed and the library
 * said skip is a missed refresh: there must be none.
 *
 * Since issue 18 the columns have comparison types (their values are
 * written in each type's text form: integers, numerics, dates, timestamps,
 * timestamptz, C-collation text), the filters include ranges with every
 * bound kind, sorts are ASC or DESC with NULLS FIRST or LAST, a sum(x)
 * joins the count, and each query is declared three ways on the same
 * stream: as today's rules allow (ranges opaque, sort columns by name, no
 * result kind: a sum gets no result IDs), with typed ranges, sort keys and
 * result kinds (every tracked query passes the IDs of the rows it read,
 * which an aggregate's declaration must ignore), and with the window's
 * bounds acknowledged as well (the key last in ORDER BY). Two streams run:
 * write sets with some values (a random subset of columns, as statement
 * triggers configured with value columns send), and with every value of
 * every row (a logical-replication stream's full row images).
 *
 * Deterministic: the seed is fixed (PGW_DIFF_SEED overrides it). The pair
 * count is 200,000 per stream by default; PGW_TEST_SCALE (a factor, set by
 * the valgrind setup) scales it down. Reports, as TAP diagnostics, the
 * over-refresh ratio (refreshes issued / refreshes needed) of each way of
 * declaring, by reason, and, on the same pairs, the ratio of table-level
 * invalidation (refresh every subscription reading the written table).
 * SPDX-License-Identifier: MIT
 */
#include "inval_oracle.h"

#define QUERIES 16
#define WRITES 13

static double test_scale(void)
{
    const char *s = getenv("PGW_TEST_SCALE");
    double f = s ? atof(s) : 1.0;
    return f > 0 && f <= 1.0 ? f : 1.0;
}

#define NMODES 3
static const char *const mode_name[NMODES] = {
    "declared as today (ranges opaque)", "with typed ranges and sort keys",
    "with typed ranges, sort keys and window bounds"};

static const char *kind_name(int k)
{
    static const char *const n[] = {"single", "two-lists", "join", "count", "sum"};
    return n[k];
}

/* One run of the differential test on a stream of write sets that carry
 * some values (full_rows false) or every value (true). */
static void run_stream(bool full_rows)
{
    o_full_rows = full_rows;
    const char *seed_env = getenv("PGW_DIFF_SEED");
    uint64_t seed = seed_env ? strtoull(seed_env, NULL, 0) : 20240607u;
    long target = (long)(200000 * test_scale());
    if (target < 2000)
        target = 2000;
    orng r = {seed};
    const pgw_scope sc = {"p", "t", "db"};
    /* [O_TODAY]: declared as today's rules can (ranges opaque); [O_TYPED]:
     * with typed ranges. Both decide the same pairs. */
    long pairs = 0, needed = 0, table_level = 0, issued[NMODES] = {0}, missed[NMODES] = {0};
    static long by_reason[NMODES][PGW_REASON_COUNT], unneeded[NMODES][PGW_REASON_COUNT];
    static ores before[QUERIES], after;
    oquery q[QUERIES];
    pgw_deps *d[NMODES][QUERIES];

    while (pairs < target) {
        otable tabs[2];
        o_table_random(&r, &tabs[0]);
        o_table_random(&r, &tabs[1]);
        for (int i = 0; i < QUERIES; i++) {
            o_query_random(&r, &q[i]);
            o_eval(&before[i], &q[i], tabs);
            for (int m = 0; m < NMODES; m++)
                d[m][i] = o_declare(&q[i], &sc, &before[i], tabs, m);
        }
        for (int k = 0; k < WRITES; k++) {
            ostmt st;
            pgw_write *w = o_statement(&r, tabs, &st, &sc);
            for (int i = 0; i < QUERIES; i++) {
                o_eval(&after, &q[i], st.after);
                bool changed = !o_res_eq(&before[i], &after);
                pairs++;
                needed += changed;
                table_level += o_reads(&q[i], st.table);
                for (int m = 0; m < NMODES; m++) {
                    pgw_verdict v;
                    ck_assert_int_eq(pgw_decide(&v, d[m][i], w, NULL), PGW_OK);
                    ck_assert(v.refresh == pgw_reason_refreshes(v.reason));
                    issued[m] += v.refresh;
                    by_reason[m][v.reason]++;
                    unneeded[m][v.reason] += v.refresh && !changed;
                    if (changed && !v.refresh) {
                        if (missed[m] < 5)
                            printf("# MISSED (%s): query %s tracked=%d on %s, op %s, reason %s "
                                   "(seed %llu, pair %ld)\n",
                                   mode_name[m], kind_name(q[i].kind), q[i].tracked,
                                   otab[st.table], pgw_op_name(st.op),
                                   pgw_reason_name(v.reason), (unsigned long long)seed, pairs);
                        missed[m]++;
                    }
                }
            }
            pgw_write_free(w);
        }
        for (int m = 0; m < NMODES; m++)
            for (int i = 0; i < QUERIES; i++)
                pgw_deps_free(d[m][i]);
    }
    printf("# %s\n", full_rows ? "write sets with every value of every row (a stream's full "
                                  "row images)"
                                : "write sets with some values (configured value columns)");
    printf("# differential: seed %llu, %ld (query, write) pairs, %ld results changed, "
           "%ld missed refreshes (%ld declared as today, %ld without bounds)\n",
           (unsigned long long)seed, pairs, needed, missed[O_BOUNDS], missed[O_TODAY],
           missed[O_TYPED]);
    printf("# table-level invalidation: %.3f (%ld/%ld)\n", (double)table_level / (double)needed,
           table_level, needed);
    for (int m = 0; m < NMODES; m++) {
        printf("# %s: over-refresh ratio (issued/needed) %.3f (%ld/%ld)\n", mode_name[m],
               (double)issued[m] / (double)needed, issued[m], needed);
        printf("#   verdicts by reason:");
        for (int i = 0; i < PGW_REASON_COUNT; i++)
            if (by_reason[m][i])
                printf(" %s=%ld", pgw_reason_name((pgw_reason)i), by_reason[m][i]);
        printf("\n#   refreshes whose result did not change, by reason:");
        for (int i = 0; i < PGW_REASON_COUNT; i++)
            if (unneeded[m][i])
                printf(" %s=%ld", pgw_reason_name((pgw_reason)i), unneeded[m][i]);
        printf("\n");
    }
    fflush(stdout);
    ck_assert_int_ge(pairs, target);
    ck_assert_int_gt(needed, pairs / 20); /* the test exercises real changes */
    ck_assert_int_lt(issued[O_TODAY], table_level); /* and the rules skip something */
    ck_assert_int_lt(issued[O_TYPED], issued[O_TODAY]);  /* ranges skip more */
    ck_assert_int_lt(issued[O_BOUNDS], issued[O_TYPED]); /* and so do bounds */
    for (int m = 0; m < NMODES; m++)
        ck_assert_msg(missed[m] == 0, "%ld missed refreshes %s (seed %llu)", missed[m],
                      mode_name[m], (unsigned long long)seed);
}

START_TEST(differential)
{
    run_stream(false);
}
END_TEST

START_TEST(differential_full_rows)
{
    run_stream(true);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("inval_diff");
    TCase *tc = tcase_create("diff");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, differential);
    tcase_add_test(tc, differential_full_rows);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return pgwt_main(suite());
}
