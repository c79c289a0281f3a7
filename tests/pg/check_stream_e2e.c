/*
 * tests/pg/check_stream_e2e.c — the end-to-end differential test of query
 * invalidation with the stream as the write source (issue 15, test 1),
 * side by side with the statement triggers on the same writes.
 *
 * The harness of check_inval_e2e.c (inval_e2e.h: the same tables, the
 * same random subscriptions, the same generator of writes, the same loop)
 * with two sources: the four tables are watched by the triggers
 * (pgw_pq_watch_table) and by the stream (pgw_pq_stream_watch_table) at
 * once, with the same value columns. One listener has one NOTIFY tenant
 * feeding one pgw_index; another has one stream tenant (a temporary slot,
 * tests/support/pgwt_stream.h) feeding a second index; both indexes hold
 * the same subscriptions. After each commit the test waits for both (the
 * triggers: the harness's marker has arrived; the stream: it has read the
 * WAL up to the writer's position, pgwt_stream_sync()'s condition), re-runs
 * every subscription's SQL once and judges both indexes against the same
 * results: zero missed refreshes for each. It reports both over-refresh
 * ratios next to table-level invalidation's.
 *
 * Choices:
 *  - notes has no primary key in check_inval_e2e.c, and the stream refuses
 *    such a table (its UPDATE and DELETE would fail once published). Here
 *    it gets one: id, an identity column placed last, so the generator's
 *    writes (which give task_id and body) are unchanged. Both sources
 *    then see notes with a key; the keyless path of the triggers stays
 *    covered by check_inval_e2e.c.
 *  - Replica identities: tasks and notes FULL (full old tuples: changed
 *    columns and old values known), projects and tags DEFAULT (key-only
 *    old tuples on deletes and key changes; no old tuple on other
 *    updates, so changed columns unknown). Every table has value columns
 *    (notes: task_id, which its count subscriptions filter on), so that
 *    value-based skips meet both full and key-only old tuples.
 *  - The generator's extras (e2e_options.extras) add TOASTed values
 *    (3,200 incompressible bytes, out of line) to tasks.title (FULL, read
 *    by list and join subscriptions), projects.name (DEFAULT, read and
 *    sorted on) and notes.body (FULL), so later updates of other columns
 *    carry them as unchanged TOAST ('u'); TRUNCATE of two tables in one
 *    statement; statements rolled back to a savepoint. The trigger test
 *    keeps its own sequence.
 *  - Waiting for the stream: pgwt_stream_sync_flushed() (the stream has
 *    received the WAL up to the writer's flush position): the writer
 *    commits with synchronous_commit = on. Under the cluster's
 *    synchronous_commit = off and the insert position (pgwt_stream_sync),
 *    a third of the commits waited for the WAL writer's next round
 *    (10 ms).
 *  - The triggers start listening after a probe of unchanged TOAST on
 *    the stream alone (toast_probe()).
 * Per commit, the stream must deliver write sets exactly when rows
 * changed, all of one transaction (one commit LSN, later than the last);
 * over the run it streams once and resets the scope once (the new
 * temporary slot), with no lost connection and no gap.
 *
 * Deterministic: fixed seed (PGW_E2E_SEED); 5,000 committed writes,
 * scaled by PGW_TEST_SCALE (valgrind: 0.1). The figures repeat, except
 * which reason a few of the stream's refreshes name: a runner takes the
 * reason of the first row that hits it, and the stream lists rows in WAL
 * order (physical, which autovacuum's timing moves), the triggers by key.
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inval_e2e.h"
#include "pgw_test.h"
#include "pgwt_stream.h"

typedef struct stream_source {
    e2e_source src;
    pgwt_stream *s;
    unsigned long long last_lsn; /* of the last commit that delivered */
    long writes, transactions;
} stream_source;

/* The writer commits synchronously: its commits are flushed when they
 * return, and the flush position (pgwt_stream_sync_flushed) is where a
 * walsender can read to at once; the insert position also counts records
 * other sessions inserted but nobody flushed yet (HOT pruning by the
 * re-runs, autovacuum), which the stream reaches only after the WAL
 * writer's next round. */
static void stream_wait(e2e_source *src, PGconn *writer, const e2e_commit *cm)
{
    stream_source *ss = src->userdata;
    pgwt_stream_sync_flushed(ss->s, writer);
    const char *json;
    unsigned long long lsn, first = 0;
    long n = 0;
    while ((json = pgwt_stream_take(ss->s, &lsn)) != NULL) {
        e2e_log(src, json);
        if (n++ == 0)
            first = lsn;
        ck_assert_msg(lsn == first, "commit %ld: write sets of two transactions (%llx, %llx)",
                      cm->number, first, lsn);
    }
    /* Write sets exactly when rows changed, of this commit's transaction. */
    ck_assert_msg((n > 0) == (cm->sent > 0),
                  "commit %ld (%s): %ld write sets for %ld writes (stream: %d events, %d "
                  "resets, the last event: %s)",
                  cm->number, cm->sql[0], n, cm->sent, ss->s->n_events, ss->s->resets,
                  ss->s->n_events ? ss->s->events[ss->s->n_events - 1] : "none");
    if (n) {
        ck_assert_msg(first > ss->last_lsn, "commit %ld: LSN %llx after %llx", cm->number,
                      first, ss->last_lsn);
        ss->last_lsn = first;
        ss->transactions++;
    }
    ss->writes += n;
}

/* Unchanged TOAST on the real server, before the run: updates of another
 * column of a row whose text is stored out of line (pg_column_size 3200:
 * uncompressed, external), which the new tuple carries as unchanged
 * ('u'). Under FULL (tasks) the old tuple is whole: only prio changed,
 * and the old and new values are known. Under DEFAULT (projects) there is
 * no old tuple: the changed columns are unknown, the new values known. */
static void toast_probe(pgwt_stream *s, PGconn *w)
{
#define PROBE_BIG "(SELECT string_agg(md5(g::text), '') FROM generate_series(1, 100) g)"
#define PROBE_TASK(col, p0, p1)                                                        \
    "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\",\"ids\":[\"1\"],"    \
    "\"ids_truncated\":false,\"columns\":[\"" col "\"],\"columns_truncated\":false,"   \
    "\"old\":[{\"status\":\"done\",\"project_id\":\"2\",\"prio\":\"" p0 "\","          \
    "\"updated_at\":\"1\"}],"                                                           \
    "\"new\":[{\"status\":\"done\",\"project_id\":\"2\",\"prio\":\"" p1 "\","          \
    "\"updated_at\":\"1\"}],\"pk_changed\":false}"
#define PROBE_PROJECT(archived)                                                        \
    "{\"schema\":\"public\",\"table\":\"projects\",\"op\":\"update\",\"ids\":[\"1\"]," \
    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"            \
    "\"new\":[{\"archived\":\"" archived "\"}],\"pk_changed\":false}"
    static const char *const probe[][2] = {
        {"UPDATE tasks SET title = " PROBE_BIG " WHERE id = 1", PROBE_TASK("title", "1", "1")},
        {"UPDATE tasks SET prio = prio + 1 WHERE id = 1", PROBE_TASK("prio", "1", "2")},
        {"UPDATE projects SET name = " PROBE_BIG " WHERE id = 1", PROBE_PROJECT("f")},
        {"UPDATE projects SET archived = NOT archived WHERE id = 1", PROBE_PROJECT("t")},
    };
    for (size_t i = 0; i < sizeof probe / sizeof *probe; i++) {
        pgwt_exec(w, probe[i][0]);
        pgwt_stream_sync_flushed(s, w);
        const char *json = pgwt_stream_take(s, NULL);
        ck_assert_ptr_nonnull(json);
        ck_assert_str_eq(json, probe[i][1]);
        ck_assert_ptr_null(pgwt_stream_take(s, NULL));
    }
    ck_assert_int_eq(pgwt_int(w, "SELECT pg_column_size(title) FROM tasks WHERE id = 1"), 3200);
    ck_assert_int_eq(pgwt_int(w, "SELECT pg_column_size(name) FROM projects WHERE id = 1"), 3200);
#undef PROBE_BIG
#undef PROBE_TASK
#undef PROBE_PROJECT
}

static long long toast_bytes(PGconn *c, const char *table)
{
    char sql[160];
    snprintf(sql, sizeof sql,
             "SELECT pg_relation_size(reltoastrelid) FROM pg_class "
             "WHERE oid = 'public.%s'::regclass",
             table);
    return pgwt_int(c, sql);
}

START_TEST(stream_and_triggers_side_by_side)
{
    e2e_options o = {e2e_seed(), e2e_target(), true};
    const char *db = pgwt_dbname();
    PGconn *c = pgwt_connect();
    e2e_create_tables(c, true);
    pgwt_exec(c, "ALTER TABLE tasks REPLICA IDENTITY FULL; "
                 "ALTER TABLE notes REPLICA IDENTITY FULL");
    pgw_error err;
    ck_assert_int_eq(pgw_pq_install(NULL, c, NULL, &err), PGW_OK);
    static const char *const vals[E2E_N_TABLES][4] = {
        {"archived", NULL}, {"status", "project_id", "prio", "updated_at"}, {"tag", NULL},
        {"task_id", NULL}};
    for (int t = 0; t < E2E_N_TABLES; t++) {
        size_t nv = 0;
        while (nv < 4 && vals[t][nv])
            nv++;
        pgw_pq_watch_options wo = PGW_PQ_WATCH_OPTIONS_INIT;
        wo.value_columns = vals[t];
        wo.n_value_columns = nv;
        ck_assert_msg(pgw_pq_watch_table(c, "public", e2e_tables[t], &wo, &err) == PGW_OK,
                      "%s: %s", e2e_tables[t], err.message);
        pgw_pq_stream_watch_options so = PGW_PQ_STREAM_WATCH_OPTIONS_INIT;
        so.value_columns = vals[t];
        so.n_value_columns = nv;
        ck_assert_msg(pgw_pq_stream_watch_table(c, "public", e2e_tables[t], &so, &err) ==
                          PGW_OK,
                      "%s: %s", e2e_tables[t], err.message);
    }
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_publication_tables WHERE pubname = '"
                                 PGW_PQ_DEFAULT_PUBLICATION "'"),
                     E2E_N_TABLES);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_class WHERE relname IN ('tasks', "
                                 "'notes') AND relreplident = 'f'"),
                     2);

    pgw_index *ti = NULL, *si = NULL;
    ck_assert_int_eq(pgw_index_new(&ti, NULL, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_new(&si, NULL, NULL), PGW_OK);
    stream_source ss;
    memset(&ss, 0, sizeof ss);
    ss.src.name = "stream";
    ss.src.index = si;
    ss.src.wait = stream_wait;
    ss.src.quiet_marks_undeclared = false;
    ss.src.userdata = &ss;
    pgw_scope scope = {"p", "acme", db};
    ss.s = pgwt_stream_open_db(db, &scope, NULL, si, NULL);
    pgwt_stream_until_streaming(ss.s, 1);
    ck_assert_int_eq(ss.s->resets, 1); /* a new temporary slot */
    PGconn *w = pgwt_connect();
    pgwt_exec(w, "SET synchronous_commit = on");
    toast_probe(ss.s, w);
    pgw_dirty d;
    while (pgw_index_pop_dirty(&d, si) == PGW_OK)
        pgw_index_ack_unknown(si, d.runner, NULL);
    /* The triggers listen from here on: the probe's notifications are
     * not theirs to count, and LISTEN resets their scope. */
    e2e_triggers trig;
    e2e_triggers_open(&trig, ti, db);

    e2e_source *src[] = {&trig.src, &ss.src};
    e2e_figures f;
    e2e_run(&f, c, w, db, src, 2, &o);

    pgw_pq_stream_stats st;
    ck_assert_int_eq(pgw_pq_listener_stream_stats(&st, ss.s->l, ss.s->tenant, NULL), PGW_OK);
    long long toast_tasks = toast_bytes(c, "tasks"), toast_projects = toast_bytes(c, "projects");
    printf("# triggers: %ld notifications for %ld writes; stream: %ld write sets in %ld "
           "transactions (decoder: %llu transactions, %llu messages, peak %zu bytes buffered; "
           "%llu status updates)\n",
           trig.notifications, f.writes, ss.writes, ss.transactions,
           (unsigned long long)st.transactions, (unsigned long long)st.messages,
           st.peak_txn_bytes, (unsigned long long)st.status_updates);
    printf("# TOAST relations at the end: tasks %lld bytes, projects %lld bytes\n", toast_tasks,
           toast_projects);
    fflush(stdout);
    ck_assert_int_le(trig.notifications, f.writes);
    ck_assert_int_gt(f.big_values, 0);
    ck_assert_int_gt(f.savepoints, 0);
    ck_assert_int_gt(toast_tasks, 0);    /* values out of line, FULL */
    ck_assert_int_gt(toast_projects, 0); /* and DEFAULT */
    ck_assert_uint_eq(st.writes, (uint64_t)ss.writes + 4); /* and the probe's */
    ck_assert_msg(ss.s->streaming == 1 && ss.s->resets == 1 && ss.s->lost == 0 &&
                      ss.s->gaps == 0 && ss.s->slot_lost == 0,
                  "streamed %d, resets %d, lost %d, gaps %d, slot lost %d (last event: %s)",
                  ss.s->streaming, ss.s->resets, ss.s->lost, ss.s->gaps, ss.s->slot_lost,
                  ss.s->n_events ? ss.s->events[ss.s->n_events - 1] : "none");
    ck_assert_uint_eq(st.resets, 1);
    e2e_triggers_close(&trig);
    pgwt_stream_close(ss.s);
    PQfinish(w);
    PQfinish(c);
    pgw_index_free(ti);
    pgw_index_free(si);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("stream_e2e");
    TCase *tc = tcase_create("stream_e2e");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, stream_and_triggers_side_by_side);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    pgwt_pg_setup("stream_e2e");
    return pgwt_main(suite());
}
