/*
 * tests/pg/check_store.c — store, load, prune and the baseline pass against
 * the real server.
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pgw_test.h"
#include "pgwitness/pgwitness-pq.h"

static PGconn *setup(void)
{
    PGconn *c = pgwt_connect();
    pgwt_exec(c, "SET client_min_messages = warning; "
                 "DROP SCHEMA IF EXISTS pgwitness CASCADE; DROP SCHEMA public CASCADE; "
                 "CREATE SCHEMA public; RESET client_min_messages");
    pgw_error err;
    ck_assert_int_eq(pgw_pq_install(NULL, c, NULL, &err), PGW_OK);
    return c;
}

static char *json_of(const pgw_snapshot *s)
{
    char *j = NULL;
    ck_assert_int_eq(pgw_snapshot_to_json(&j, NULL, s, 0, NULL), PGW_OK);
    return j;
}

static pgw_pq_snapshot_set *load(PGconn *c, const pgw_pq_filter *f)
{
    pgw_pq_snapshot_set *set = NULL;
    pgw_error err;
    pgw_error_clear(&err);
    ck_assert_msg(pgw_pq_load(&set, c, NULL, f, &err) == PGW_OK, "%s", err.message);
    return set;
}

START_TEST(store_and_load_round_trip)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE st (id int, \"名前\" text, \"\xEF\xBB\xBFtitle\" text, f float8)");
    pgwt_exec(c, "INSERT INTO st SELECT g, 'n' || (g % 4), 't' || (g % 3), g / 3.0 "
                 "FROM generate_series(1, 200) g");
    pgwt_exec(c, "ANALYZE st");
    pgw_pq_capture_options o = PGW_PQ_CAPTURE_OPTIONS_INIT;
    o.resource = "res/st";
    pgw_snapshot *s = NULL;
    pgw_error err;
    ck_assert_int_eq(pgw_pq_capture(&s, c, "public", "st", &o, &err), PGW_OK);
    int64_t id = 0;
    ck_assert_int_eq(pgw_pq_store(&id, c, NULL, s, &err), PGW_OK);
    ck_assert_int_gt(id, 0);
    char *want = json_of(s);

    /* By table, by resource, by OID, by id, by time: the same document. */
    pgw_pq_filter f[5];
    for (int i = 0; i < 5; i++)
        f[i] = (pgw_pq_filter)PGW_PQ_FILTER_INIT;
    f[0].schema = "public";
    f[0].table = "st";
    f[1].resource = "res/st";
    f[2].table_oid = pgw_snapshot_table_oid(s);
    f[3].id = id;
    f[4].has_since = true;
    f[4].since = pgw_snapshot_captured_at(s);
    f[4].has_until = true;
    f[4].until = pgw_snapshot_captured_at(s) + 1;
    for (int i = 0; i < 5; i++) {
        pgw_pq_snapshot_set *set = load(c, &f[i]);
        ck_assert_msg(pgw_pq_snapshot_set_count(set) == 1, "filter %d", i);
        ck_assert_int_eq(pgw_pq_snapshot_set_id(set, 0), id);
        char *got = json_of(pgw_pq_snapshot_set_get(set, 0));
        ck_assert_str_eq(got, want);
        pgw_free(got);
        pgw_pq_snapshot_set_free(set);
    }
    /* Time bounds are exact to the microsecond: until is exclusive. */
    f[4].until = pgw_snapshot_captured_at(s);
    pgw_pq_snapshot_set *none = load(c, &f[4]);
    ck_assert_uint_eq(pgw_pq_snapshot_set_count(none), 0);
    ck_assert_ptr_null(pgw_pq_snapshot_set_all(none));
    pgw_pq_snapshot_set_free(none);
    /* The indexed columns agree with the document. */
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT schema_hash = snapshot->>'schema_hash' AND column_count = 4 AND "
             "row_estimate = 200 AND stats_available AND extra = '{}'::jsonb "
             "FROM pgwitness.snapshots WHERE id = %lld",
             (long long)id);
    char *v = pgwt_value(c, sql);
    ck_assert_str_eq(v, "t");
    free(v);
    pgw_free(want);
    pgw_snapshot_free(s);
    PQfinish(c);
}
END_TEST

START_TEST(load_orders_limits_and_rejects_bad_rows)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE ord (a int)");
    int64_t ids[3];
    for (int i = 0; i < 3; i++) {
        pgw_snapshot *s = NULL;
        ck_assert_int_eq(pgw_pq_capture(&s, c, "public", "ord", NULL, NULL), PGW_OK);
        ck_assert_int_eq(pgw_pq_store(&ids[i], c, NULL, s, NULL), PGW_OK);
        pgw_snapshot_free(s);
    }
    pgw_pq_filter f = PGW_PQ_FILTER_INIT;
    f.newest_first = true;
    f.limit = 2;
    pgw_pq_snapshot_set *set = load(c, &f);
    ck_assert_uint_eq(pgw_pq_snapshot_set_count(set), 2);
    ck_assert_int_eq(pgw_pq_snapshot_set_id(set, 0), ids[2]);
    ck_assert_int_eq(pgw_pq_snapshot_set_id(set, 1), ids[1]);
    ck_assert_int_eq(pgw_pq_snapshot_set_id(set, 2), 0);
    ck_assert_ptr_null(pgw_pq_snapshot_set_get(set, 2));
    pgw_pq_snapshot_set_free(set);
    f = (pgw_pq_filter)PGW_PQ_FILTER_INIT;
    set = load(c, &f);
    ck_assert_uint_eq(pgw_pq_snapshot_set_count(set), 3);
    ck_assert_int_eq(pgw_pq_snapshot_set_id(set, 0), ids[0]);
    pgw_pq_snapshot_set_free(set);

    /* A stored document that no longer decodes names its id and path. */
    char sql[200];
    snprintf(sql, sizeof sql,
             "UPDATE pgwitness.snapshots SET snapshot = jsonb_set(snapshot, '{format}', '7') "
             "WHERE id = %lld", (long long)ids[1]);
    pgwt_exec(c, sql);
    pgw_error err;
    set = (pgw_pq_snapshot_set *)0x1;
    ck_assert_int_eq(pgw_pq_load(&set, c, NULL, NULL, &err), PGW_EVERSION);
    ck_assert_ptr_eq(set, (pgw_pq_snapshot_set *)0x1);
    char want[128];
    snprintf(want, sizeof want, "stored snapshot %lld does not decode: snapshot format 7",
             (long long)ids[1]);
    ck_assert_msg(strstr(err.message, want) == err.message, "%s", err.message);
    ck_assert_str_eq(err.path, "$.format");
    /* skip_undecodable: the others load, the bad one is listed with the
     * same reason and its path. */
    f = (pgw_pq_filter)PGW_PQ_FILTER_INIT;
    ck_assert_uint_eq(f.version, 2);
    ck_assert(!f.skip_undecodable);
    f.skip_undecodable = true;
    set = load(c, &f);
    ck_assert_uint_eq(pgw_pq_snapshot_set_count(set), 2);
    ck_assert_int_eq(pgw_pq_snapshot_set_id(set, 0), ids[0]);
    ck_assert_int_eq(pgw_pq_snapshot_set_id(set, 1), ids[2]);
    ck_assert_uint_eq(pgw_pq_snapshot_set_skipped_count(set), 1);
    const char *reason = NULL;
    ck_assert_int_eq(pgw_pq_snapshot_set_skipped(set, 0, &reason), ids[1]);
    ck_assert_msg(strstr(reason, want) == reason, "%s", reason);
    ck_assert_msg(strcmp(reason + strlen(reason) - strlen(" (at $.format)"), " (at $.format)") ==
                      0,
                  "%s", reason);
    ck_assert_int_eq(pgw_pq_snapshot_set_skipped(set, 1, &reason), 0);
    ck_assert_msg(strstr(reason, want) == reason, "untouched: %s", reason);
    ck_assert_ptr_nonnull(pgw_pq_snapshot_set_all(set));
    pgw_pq_snapshot_set_free(set);
    /* A limit counts rows read: the two oldest are ids[0] and the bad one. */
    f.limit = 2;
    set = load(c, &f);
    ck_assert_uint_eq(pgw_pq_snapshot_set_count(set), 1);
    ck_assert_uint_eq(pgw_pq_snapshot_set_skipped_count(set), 1);
    pgw_pq_snapshot_set_free(set);
    /* Every allocation of a skipping load failed in turn: PGW_ENOMEM and no
     * set (nothing leaks: the suites run under ASan and valgrind). */
    f.limit = 0;
    for (size_t n = 1;; n++) {
        ck_assert_uint_lt(n, 10000);
        pgwt_alloc_install();
        pgwt_alloc_fail_at(n);
        set = (pgw_pq_snapshot_set *)0x1;
        int rc = pgw_pq_load(&set, c, NULL, &f, &err);
        bool failed = pgwt_alloc_failed();
        size_t skipped = rc == PGW_OK ? pgw_pq_snapshot_set_skipped_count(set) : 0;
        if (rc == PGW_OK)
            pgw_pq_snapshot_set_free(set); /* with the allocator that made it */
        pgwt_alloc_uninstall();
        if (!failed) {
            ck_assert_int_eq(rc, PGW_OK);
            ck_assert_uint_eq(skipped, 1);
            break;
        }
        ck_assert_msg(rc == PGW_ENOMEM, "allocation %zu: %d %s", n, rc, err.message);
        ck_assert_ptr_eq(set, (pgw_pq_snapshot_set *)0x1);
    }
    /* A version-1 filter has no skip_undecodable: the load is strict. */
    f = (pgw_pq_filter)PGW_PQ_FILTER_INIT;
    f.version = 1;
    f.skip_undecodable = true; /* beyond a version-1 struct: not read */
    ck_assert_int_eq(pgw_pq_load(&set, c, NULL, &f, &err), PGW_EVERSION);
    f.version = 3;
    ck_assert_int_eq(pgw_pq_load(&set, c, NULL, &f, &err), PGW_EINVAL);
    ck_assert_msg(strstr(err.message, "filter version 3 is not 1 or 2") != NULL, "%s",
                  err.message);
    ck_assert_uint_eq(pgw_pq_snapshot_set_skipped_count(NULL), 0);
    ck_assert_int_eq(pgw_pq_snapshot_set_skipped(NULL, 0, NULL), 0);
    /* Bad filters; a schema that is not installed. */
    f = (pgw_pq_filter)PGW_PQ_FILTER_INIT;
    f.schema = "public";
    ck_assert_int_eq(pgw_pq_load(&set, c, NULL, &f, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_load(&set, c, "nowhere", NULL, &err), PGW_ENOTFOUND);
    ck_assert_msg(strstr(err.message, "pgwitness is not installed in schema \"nowhere\"") != NULL,
                  "%s", err.message);
    pgw_snapshot *s = NULL;
    ck_assert_int_eq(pgw_pq_capture(&s, c, "public", "ord", NULL, NULL), PGW_OK);
    ck_assert_int_eq(pgw_pq_store(NULL, c, "nowhere", s, &err), PGW_ENOTFOUND);
    pgw_snapshot_free(s);
    PQfinish(c);
}
END_TEST

/* Stores a snapshot of `table` with the given columns under a resource,
 * captured at day `day`. */
static void store_version(PGconn *c, const char *resource, const char *cols, int day)
{
    char sql[256];
    pgwt_exec(c, "DROP TABLE IF EXISTS pv");
    snprintf(sql, sizeof sql, "CREATE TABLE pv (%s)", cols);
    pgwt_exec(c, sql);
    pgw_pq_capture_options o = PGW_PQ_CAPTURE_OPTIONS_INIT;
    o.resource = resource;
    pgw_snapshot *s = NULL;
    ck_assert_int_eq(pgw_pq_capture(&s, c, "public", "pv", &o, NULL), PGW_OK);
    int64_t id;
    ck_assert_int_eq(pgw_pq_store(&id, c, NULL, s, NULL), PGW_OK);
    pgw_snapshot_free(s);
    snprintf(sql, sizeof sql,
             "UPDATE pgwitness.snapshots SET captured_at = '2025-01-01'::timestamptz + "
             "interval '%d days' WHERE id = %lld",
             day, (long long)id);
    pgwt_exec(c, sql);
}

START_TEST(prune_keeps_newest_and_both_sides_of_changes)
{
    PGconn *c = setup();
    /* r1: days 1..6, the schema changes between day 3 and day 4. */
    for (int d = 1; d <= 6; d++)
        store_version(c, "r1", d <= 3 ? "a int" : "a int, b int", d);
    /* r2: four identical snapshots. */
    for (int d = 1; d <= 4; d++)
        store_version(c, "r2", "x text", d);
    pgw_pq_prune_result pr;
    pgw_error err;
    ck_assert_int_eq(pgw_pq_prune(&pr, c, NULL, 2, &err), PGW_OK);
    /* r1 keeps days 5, 6 (newest) and 3, 4 (the change); r2 keeps 3, 4. */
    ck_assert_uint_eq(pr.removed, 4);
    ck_assert_uint_eq(pr.resources, 2);
    ck_assert_uint_eq(pr.kept, 6);
    char *v = pgwt_value(c, "SELECT string_agg(resource_identity || ':' || "
                            "extract(day FROM captured_at), ',' ORDER BY resource_identity, "
                            "captured_at) FROM pgwitness.snapshots");
    ck_assert_str_eq(v, "r1:4,r1:5,r1:6,r1:7,r2:4,r2:5");
    free(v);
    /* Idempotent. */
    ck_assert_int_eq(pgw_pq_prune(&pr, c, NULL, 2, &err), PGW_OK);
    ck_assert_uint_eq(pr.removed, 0);
    ck_assert_int_eq(pgw_pq_prune(&pr, c, NULL, 0, &err), PGW_EINVAL);
    PQfinish(c);
}
END_TEST

typedef struct progress {
    size_t calls, last_done, last_total;
} progress;

static void on_progress(size_t done, size_t total, void *ud)
{
    progress *p = ud;
    ck_assert_uint_gt(done, p->last_done);
    p->calls++;
    p->last_done = done;
    p->last_total = total;
}

START_TEST(baseline_walks_the_backlog)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE SCHEMA app; CREATE SCHEMA other");
    for (int i = 0; i < 25; i++) {
        char sql[160];
        snprintf(sql, sizeof sql, "CREATE TABLE app.t%02d (id int, v%d text)", i, i);
        pgwt_exec(c, sql);
    }
    pgwt_exec(c, "CREATE TABLE other.skip (a int)");
    pgwt_exec(c, "CREATE TABLE app.parted (k int) PARTITION BY RANGE (k); "
                 "CREATE TABLE app.parted_1 PARTITION OF app.parted FOR VALUES FROM (0) TO (9)");
    pgw_pq_baseline_options o = PGW_PQ_BASELINE_OPTIONS_INIT;
    o.schema_pattern = "app";
    o.limit = 10;
    o.batch = 4;
    progress p = {0, 0, 0};
    o.progress = on_progress;
    o.userdata = &p;
    pgw_pq_baseline_result r;
    pgw_error err;
    ck_assert_int_eq(pgw_pq_baseline(&r, c, &o, &err), PGW_OK);
    ck_assert_uint_eq(r.backlog, 26); /* 25 tables and the partitioned parent */
    ck_assert_uint_eq(r.captured, 10);
    ck_assert_uint_eq(r.remaining, 16);
    ck_assert_uint_eq(p.calls, 3); /* batches of 4, 4, 2 */
    ck_assert_uint_eq(p.last_done, 10);
    ck_assert_uint_eq(p.last_total, 10);
    /* Oldest first: t00..t09. */
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.snapshots WHERE table_name "
                                 "BETWEEN 't00' AND 't09'"),
                     10);
    char *v = pgwt_value(c, "SELECT string_agg(DISTINCT reason || '|' || (extra->>'alive') || "
                            "'|' || (snapshot->'extra'->>'alive'), ',') FROM pgwitness.snapshots");
    ck_assert_str_eq(v, "baseline|true|true");
    free(v);
    p = (progress){0, 0, 0};
    ck_assert_int_eq(pgw_pq_baseline(&r, c, &o, &err), PGW_OK);
    ck_assert_uint_eq(r.captured, 10);
    ck_assert_uint_eq(r.remaining, 6);
    o.limit = 100;
    p = (progress){0, 0, 0};
    ck_assert_int_eq(pgw_pq_baseline(&r, c, &o, &err), PGW_OK);
    ck_assert_uint_eq(r.captured, 6);
    ck_assert_uint_eq(r.remaining, 0);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.snapshots WHERE table_name = "
                                 "'parted'"),
                     1);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.snapshots WHERE table_name IN "
                                 "('parted_1', 'skip')"),
                     0);
    /* Nothing left: a run does nothing. */
    p = (progress){0, 0, 0};
    ck_assert_int_eq(pgw_pq_baseline(&r, c, &o, &err), PGW_OK);
    ck_assert_uint_eq(r.backlog, 0);
    ck_assert_uint_eq(r.captured, 0);
    ck_assert_uint_eq(p.calls, 0);
    /* A table recreated under the same name has a new OID: a candidate. */
    p = (progress){0, 0, 0};
    pgwt_exec(c, "DROP TABLE app.t03; CREATE TABLE app.t03 (id int, changed text)");
    ck_assert_int_eq(pgw_pq_baseline(&r, c, &o, &err), PGW_OK);
    ck_assert_uint_eq(r.captured, 1);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.snapshots"), 27);
    /* Refusals. */
    pgwt_exec(c, "BEGIN");
    ck_assert_int_eq(pgw_pq_baseline(&r, c, &o, &err), PGW_ESTATE);
    pgwt_exec(c, "ROLLBACK");
    o.batch = 0;
    ck_assert_int_eq(pgw_pq_baseline(&r, c, &o, &err), PGW_EINVAL);
    o.batch = 4;
    o.pgw_schema = "not_installed";
    ck_assert_int_eq(pgw_pq_baseline(&r, c, &o, &err), PGW_ENOTFOUND);
    PQfinish(c);
}
END_TEST

START_TEST(baseline_reads_no_table_data)
{
    PGconn *c = setup();
    PGconn *r = pgwt_connect();
    pgwt_exec(c, "CREATE TABLE bl_big AS SELECT g AS id FROM generate_series(1, 50000) g");
    pgwt_exec(c, "ANALYZE bl_big");
    pgwt_exec(r, "SET stats_fetch_consistency = none");
    pgwt_exec(c, "SELECT pg_stat_force_next_flush()");
    const char *q = "SELECT seq_scan + coalesce(idx_scan, 0) FROM pg_stat_user_tables "
                    "WHERE relname = 'bl_big'";
    usleep(500000);
    long long before = pgwt_int(r, q);
    pgw_pq_baseline_result res;
    pgw_pq_baseline_options o = PGW_PQ_BASELINE_OPTIONS_INIT;
    o.schema_pattern = "public";
    ck_assert_int_eq(pgw_pq_baseline(&res, c, &o, NULL), PGW_OK);
    ck_assert_uint_eq(res.captured, 1);
    pgwt_exec(c, "SELECT pg_stat_force_next_flush()");
    usleep(500000);
    ck_assert_int_eq(pgwt_int(r, q), before);
    PQfinish(r);
    PQfinish(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("store");
    TCase *tc = tcase_create("store");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, store_and_load_round_trip);
    tcase_add_test(tc, load_orders_limits_and_rejects_bad_rows);
    tcase_add_test(tc, prune_keeps_newest_and_both_sides_of_changes);
    tcase_add_test(tc, baseline_walks_the_backlog);
    tcase_add_test(tc, baseline_reads_no_table_data);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    pgwt_pg_setup("store");
    return pgwt_main(suite());
}
