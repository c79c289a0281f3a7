/*
 * tests/pg/check_inval_e2e.c — the end-to-end differential test of query
 * invalidation (issue 6, test 5): real SQL on a real server, the
 * statement triggers as the write source.
 *
 * Four watched tables (projects; tasks; tags with a composite key; notes
 * without a key) and random subscriptions written as SQL — equality, IN,
 * range and join filters, sorts, LIMIT/OFFSET windows, counts, sums, a
 * join, composite-key lists, undeclared queries — each registered in a
 * pgw_index with its declared dependencies (and, for lists, its result
 * IDs). A writer connection commits random statements (single- and
 * multi-row inserts, updates of any column including keys, no-op updates,
 * deletes by key and by predicate, truncates; some in multi-statement
 * transactions, some rolled back). After each commit the test waits until
 * the listener has received the notifications of every statement that
 * touched a row, re-runs every subscription's SQL and compares the result
 * with the previous one: a result that changed while its runner was not
 * marked dirty is a missed refresh, and there must be none. Dirty runners
 * are acknowledged with the result IDs of their new result. The
 * subscriptions, the writes and the loop are the harness's (inval_e2e.h),
 * which check_stream_e2e.c shares.
 *
 * Deterministic: fixed seed (PGW_E2E_SEED overrides it); 5,000 committed
 * writes (statements that changed rows) by default, PGW_TEST_SCALE
 * (valgrind: 0.1) scales that down. Reports, as TAP diagnostics, the
 * over-refresh ratio (refreshes issued / refreshes needed, per
 * subscription and commit) and table-level invalidation's ratio on the
 * same commits.
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>

#include "inval_e2e.h"
#include "pgw_test.h"

START_TEST(differential_on_a_real_server)
{
    e2e_options o = {e2e_seed(), e2e_target(), false};
    const char *db = pgwt_dbname();
    PGconn *c = pgwt_connect();
    e2e_create_tables(c, false);
    pgw_error err;
    ck_assert_int_eq(pgw_pq_install(NULL, c, NULL, &err), PGW_OK);
    /* the filter and sort columns the subscriptions compare (a range on
     * prio, window bounds on updated_at) */
    static const char *const vals[E2E_N_TABLES][4] = {
        {"archived", NULL}, {"status", "project_id", "prio", "updated_at"}, {"tag", NULL},
        {NULL, NULL}};
    for (int t = 0; t < E2E_N_TABLES; t++) {
        pgw_pq_watch_options wo = PGW_PQ_WATCH_OPTIONS_INIT;
        size_t nv = 0;
        while (nv < 4 && vals[t][nv])
            nv++;
        wo.value_columns = vals[t];
        wo.n_value_columns = nv;
        ck_assert_int_eq(pgw_pq_watch_table(c, "public", e2e_tables[t], &wo, &err), PGW_OK);
    }

    pgw_index *idx = NULL;
    ck_assert_int_eq(pgw_index_new(&idx, NULL, NULL), PGW_OK);
    e2e_triggers trig;
    e2e_triggers_open(&trig, idx, db);
    e2e_source *src[] = {&trig.src};
    PGconn *w = pgwt_connect();
    e2e_figures f;
    e2e_run(&f, c, w, db, src, 1, &o);
    printf("# notifications received: %ld for %ld writes (identical payloads within a "
           "transaction arrive once)\n",
           trig.notifications, f.writes);
    fflush(stdout);
    ck_assert_int_le(trig.notifications, f.writes);
    e2e_triggers_close(&trig);
    PQfinish(w);
    PQfinish(c);
    pgw_index_free(idx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("inval_e2e");
    TCase *tc = tcase_create("inval_e2e");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, differential_on_a_real_server);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    pgwt_pg_setup("inval_e2e");
    return pgwt_main(suite());
}
