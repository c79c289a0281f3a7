/*
 * tests/pg/check_funnel.c — the audited drop funnel against the real
 * server: a cycle of drops with the four source reasons, every way the
 * snapshot can fail while the drop still happens, the caller's rollback,
 * the environment switch, and a drop that itself fails.
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pgw_test.h"
#include "pgwitness/pgwitness-pq.h"

/* Every test starts from an empty public schema and a fresh pgwitness. */
static PGconn *setup(void)
{
    PGconn *c = pgwt_connect();
    pgwt_exec(c, "SET client_min_messages = warning; "
                 "DROP SCHEMA IF EXISTS pgwitness CASCADE; DROP SCHEMA public CASCADE; "
                 "CREATE SCHEMA public; GRANT ALL ON SCHEMA public TO PUBLIC; "
                 "RESET client_min_messages");
    pgw_error err;
    ck_assert_int_eq(pgw_pq_install(NULL, c, NULL, &err), PGW_OK);
    return c;
}

static bool table_exists(PGconn *c, const char *name)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT to_regclass('%s') IS NOT NULL", name);
    char *v = pgwt_value(c, sql);
    bool exists = strcmp(v, "t") == 0;
    free(v);
    return exists;
}

static pgw_pq_drop_result drop(PGconn *c, const char *table, const char *reason,
                               const pgw_pq_drop_options *o)
{
    pgw_pq_drop_result r;
    pgw_error err;
    pgw_error_clear(&err);
    int rc = pgw_pq_drop_table(&r, c, "public", table, reason, o, &err);
    ck_assert_msg(rc == PGW_OK, "drop %s: %s", table, err.message);
    return r;
}

START_TEST(one_snapshot_per_audited_drop)
{
    PGconn *c = setup();
    static const char *reasons[] = {PGW_REASON_SCHEMA_MISMATCH_RECREATE,
                                    PGW_REASON_RETAIN_RAW_VERSIONS, PGW_REASON_RAW_ORPHAN_CLEANUP,
                                    PGW_REASON_EMPTY_RAW_BLOAT};
    for (int i = 0; i < 4; i++) {
        char sql[256], name[32];
        snprintf(name, sizeof name, "cycle_%d", i);
        snprintf(sql, sizeof sql, "CREATE TABLE %s (id int, v%d text); INSERT INTO %s "
                                  "SELECT g, g::text FROM generate_series(1, 10) g; ANALYZE %s",
                 name, i, name, name);
        pgwt_exec(c, sql);
        pgw_pq_drop_options o = PGW_PQ_DROP_OPTIONS_INIT;
        o.resource = "upstream/cycle";
        pgw_pq_drop_result r = drop(c, name, reasons[i], &o);
        ck_assert(r.dropped);
        ck_assert_msg(r.snapshot_taken, "%s", r.snapshot_error);
        ck_assert_int_eq(r.snapshot_status, PGW_OK);
        ck_assert_str_eq(r.snapshot_error, "");
        ck_assert_int_gt(r.snapshot_id, 0);
        ck_assert_int_gt(r.audit_id, 0);
        ck_assert(!table_exists(c, name));
        snprintf(sql, sizeof sql,
                 "SELECT reason || '|' || table_name || '|' || resource_identity || '|' || "
                 "(snapshot->'columns'->1->>'name') || '|' || row_estimate "
                 "FROM pgwitness.snapshots WHERE id = %lld",
                 (long long)r.snapshot_id);
        char *v = pgwt_value(c, sql);
        char want[128];
        snprintf(want, sizeof want, "%s|%s|upstream/cycle|v%d|10", reasons[i], name, i);
        ck_assert_str_eq(v, want);
        free(v);
        snprintf(sql, sizeof sql,
                 "SELECT dropped::text || '|' || snapshot_id || '|' || reason || '|' || "
                 "coalesce(capture_error, '-') FROM pgwitness.drop_audit WHERE id = %lld",
                 (long long)r.audit_id);
        v = pgwt_value(c, sql);
        snprintf(want, sizeof want, "true|%lld|%s|-", (long long)r.snapshot_id, reasons[i]);
        ck_assert_str_eq(v, want);
        free(v);
    }
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.snapshots"), 4);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.drop_audit"), 4);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.drop_audit a JOIN "
                                 "pgwitness.snapshots s ON s.id = a.snapshot_id"),
                     4);
    ck_assert_int_eq(PQtransactionStatus(c), PQTRANS_IDLE);
    PQfinish(c);
}
END_TEST

START_TEST(table_already_gone)
{
    PGconn *c = setup();
    pgw_pq_drop_result r = drop(c, "never_existed", PGW_REASON_RAW_ORPHAN_CLEANUP, NULL);
    ck_assert(!r.dropped);
    ck_assert(!r.snapshot_taken);
    ck_assert_int_eq(r.snapshot_status, PGW_ENOTFOUND);
    ck_assert_str_eq(r.snapshot_error,
                     "snapshot failed: no table public.never_existed (already dropped?)");
    char *v = pgwt_value(c, "SELECT dropped::text || '|' || coalesce(snapshot_id::text, '-') "
                            "|| '|' || capture_error FROM pgwitness.drop_audit");
    ck_assert_str_eq(v, "false|-|snapshot failed: no table public.never_existed (already "
                        "dropped?)");
    free(v);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.snapshots"), 0);
    PQfinish(c);
}
END_TEST

START_TEST(snapshot_insert_raises)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
                 "$$BEGIN RAISE EXCEPTION 'snapshots are read-only today'; END$$");
    pgwt_exec(c, "CREATE TRIGGER refuse BEFORE INSERT ON pgwitness.snapshots "
                 "FOR EACH ROW EXECUTE FUNCTION refuse()");
    pgwt_exec(c, "CREATE TABLE victim (a int)");
    pgw_pq_drop_result r = drop(c, "victim", PGW_REASON_RETAIN_RAW_VERSIONS, NULL);
    ck_assert(r.dropped);
    ck_assert(!r.snapshot_taken);
    ck_assert_int_eq(r.snapshot_status, PGW_EPG);
    ck_assert_str_eq(r.snapshot_sqlstate, "P0001");
    ck_assert_str_eq(r.snapshot_error,
                     "snapshot failed: storing snapshots: snapshots are read-only today");
    ck_assert(!table_exists(c, "victim"));
    char *v = pgwt_value(c, "SELECT capture_sqlstate || '|' || capture_error "
                            "FROM pgwitness.drop_audit");
    ck_assert_str_eq(v, "P0001|snapshot failed: storing snapshots: snapshots are read-only today");
    free(v);
    PQfinish(c);
}
END_TEST

START_TEST(snapshots_table_missing)
{
    PGconn *c = setup();
    pgwt_exec(c, "DROP TABLE pgwitness.snapshots");
    pgwt_exec(c, "CREATE TABLE victim2 (a int)");
    pgw_pq_drop_result r = drop(c, "victim2", PGW_REASON_MANUAL, NULL);
    ck_assert(r.dropped);
    ck_assert_int_eq(r.snapshot_status, PGW_ENOTFOUND);
    ck_assert_msg(strstr(r.snapshot_error, "pgwitness is not installed in schema") != NULL, "%s",
                  r.snapshot_error);
    ck_assert_int_gt(r.audit_id, 0);
    /* And with no pgwitness schema at all: the drop still happens, the
     * audit row cannot be written, and the result says so. */
    pgwt_exec(c, "DROP SCHEMA pgwitness CASCADE");
    pgwt_exec(c, "CREATE TABLE victim3 (a int)");
    r = drop(c, "victim3", PGW_REASON_MANUAL, NULL);
    ck_assert(r.dropped);
    ck_assert(!table_exists(c, "victim3"));
    ck_assert_int_eq(r.audit_id, 0);
    ck_assert_msg(strstr(r.audit_error, "pgwitness is not installed") != NULL, "%s",
                  r.audit_error);
    PQfinish(c);
}
END_TEST

typedef struct holder {
    PGconn *conn;
    int hold_ms;
} holder;

static void *release_later(void *arg)
{
    holder *h = arg;
    usleep((useconds_t)h->hold_ms * 1000);
    PQclear(PQexec(h->conn, "COMMIT"));
    return NULL;
}

START_TEST(lock_held_by_another_session_delays_the_drop_not_its_snapshot)
{
    /* A reader holds the table for longer than the snapshot's own
     * lock_timeout: the funnel waits for the drop's lock as DROP TABLE
     * would (the session has no lock_timeout), then takes the snapshot. */
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE busy (a int)");
    PGconn *other = pgwt_connect();
    pgwt_exec(other, "BEGIN; LOCK TABLE busy IN ACCESS SHARE MODE");
    holder h = {other, 1500};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, release_later, &h), 0);
    pgw_pq_drop_options o = PGW_PQ_DROP_OPTIONS_INIT;
    o.lock_timeout_ms = 200;
    o.statement_timeout_ms = 400;
    pgw_pq_drop_result r = drop(c, "busy", PGW_REASON_MANUAL, &o);
    pthread_join(t, NULL);
    ck_assert(r.dropped);
    ck_assert_msg(r.snapshot_taken, "%s", r.snapshot_error);
    ck_assert_int_eq(r.snapshot_status, PGW_OK);
    ck_assert(!table_exists(c, "busy"));
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.snapshots s JOIN "
                                 "pgwitness.drop_audit a ON a.snapshot_id = s.id "
                                 "WHERE s.table_name = 'busy' AND a.dropped"),
                     1);
    /* The short timeouts did not leak into the session. */
    char *v = pgwt_value(c, "SELECT current_setting('lock_timeout') || '|' || "
                            "current_setting('statement_timeout')");
    ck_assert_str_eq(v, "0|0");
    free(v);
    PQfinish(other);
    PQfinish(c);
}
END_TEST

START_TEST(lock_not_had_under_the_sessions_timeout_drops_nothing)
{
    /* The session's own lock_timeout is what DROP TABLE would obey: when it
     * runs out, nothing is dropped, stored or audited, and the own
     * transaction is gone. */
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE held (a int)");
    PGconn *other = pgwt_connect();
    pgwt_exec(other, "BEGIN; LOCK TABLE held IN ACCESS SHARE MODE");
    pgwt_exec(c, "SET lock_timeout = 200");
    pgw_pq_drop_result r;
    memset(&r, 0x5a, sizeof r);
    pgw_error err;
    ck_assert_int_eq(pgw_pq_drop_table(&r, c, "public", "held", PGW_REASON_MANUAL, NULL, &err),
                     PGW_EPG);
    ck_assert_str_eq(err.sqlstate, "55P03");
    ck_assert_msg(strstr(err.message, "locking the table to drop") != NULL, "%s", err.message);
    ck_assert_int_eq(((unsigned char *)&r)[0], 0x5a); /* out untouched */
    ck_assert_int_eq(PQtransactionStatus(c), PQTRANS_IDLE);
    pgwt_exec(other, "COMMIT");
    ck_assert(table_exists(c, "held"));
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.snapshots"), 0);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.drop_audit"), 0);
    char *v = pgwt_value(c, "SELECT current_setting('lock_timeout')");
    ck_assert_str_eq(v, "200ms");
    free(v);
    PQfinish(other);
    PQfinish(c);
}
END_TEST

START_TEST(role_without_privilege_on_snapshots)
{
    PGconn *c = setup();
    pgwt_exec(c, "DROP ROLE IF EXISTS pgw_owner; CREATE ROLE pgw_owner LOGIN");
    pgwt_exec(c, "GRANT CREATE, USAGE ON SCHEMA public TO pgw_owner");
    pgwt_exec(c, "GRANT USAGE ON SCHEMA pgwitness TO pgw_owner");
    pgwt_exec(c, "GRANT INSERT ON pgwitness.drop_audit TO pgw_owner");
    pgwt_exec(c, "GRANT USAGE ON SEQUENCE pgwitness.drop_audit_id_seq TO pgw_owner");
    PGconn *w = pgwt_connect_opts("user=pgw_owner");
    ck_assert_ptr_nonnull(w);
    pgwt_exec(w, "CREATE TABLE owned (a int)");
    pgw_pq_drop_result r;
    pgw_error err;
    ck_assert_int_eq(pgw_pq_drop_table(&r, w, "public", "owned", PGW_REASON_MANUAL, NULL, &err),
                     PGW_OK);
    ck_assert(r.dropped);
    ck_assert(!r.snapshot_taken);
    ck_assert_str_eq(r.snapshot_sqlstate, "42501");
    ck_assert_int_gt(r.audit_id, 0);
    PQfinish(w);
    ck_assert(!table_exists(c, "owned"));
    char *v = pgwt_value(c, "SELECT capture_sqlstate FROM pgwitness.drop_audit");
    ck_assert_str_eq(v, "42501");
    free(v);
    PQfinish(c);
}
END_TEST

START_TEST(allocation_failure_in_snapshot)
{
    PGconn *c = setup();
    /* Fail each allocation in turn: whenever the failure lands in the
     * snapshot, the drop still happens; when it lands before anything ran,
     * nothing happens and the table is still there. */
    int dropped_without_snapshot = 0, refused = 0;
    for (size_t n = 1; n < 400; n++) {
        pgwt_exec(c, "CREATE TABLE IF NOT EXISTS oom (id int, t text); "
                     "INSERT INTO oom SELECT g, 'v' || g FROM generate_series(1, 20) g; "
                     "ANALYZE oom");
        pgwt_alloc_install();
        pgwt_alloc_fail_at(n);
        pgw_pq_drop_result r;
        pgw_error err;
        int rc = pgw_pq_drop_table(&r, c, "public", "oom", PGW_REASON_MANUAL, NULL, &err);
        bool failed = pgwt_alloc_failed();
        pgwt_alloc_uninstall();
        ck_assert_int_eq(PQtransactionStatus(c), PQTRANS_IDLE);
        if (!failed) {
            ck_assert_int_eq(rc, PGW_OK);
            ck_assert(r.snapshot_taken);
            break;
        }
        if (rc == PGW_ENOMEM) {
            refused++;
            ck_assert(table_exists(c, "oom"));
            continue;
        }
        ck_assert_int_eq(rc, PGW_OK);
        ck_assert(r.dropped);
        ck_assert(!table_exists(c, "oom"));
        ck_assert(!r.snapshot_taken);
        ck_assert_int_eq(r.snapshot_status, PGW_ENOMEM);
        ck_assert_str_eq(r.snapshot_error, "snapshot failed: out of memory");
        dropped_without_snapshot++;
    }
    ck_assert_int_gt(dropped_without_snapshot, 10);
    ck_assert_int_ge(refused, 1);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.drop_audit WHERE "
                                 "capture_error = 'snapshot failed: out of memory'"),
                     dropped_without_snapshot);
    PQfinish(c);
}
END_TEST

START_TEST(callers_other_work_survives_failed_snapshot)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE ledger (note text); CREATE TABLE tx_victim (a int)");
    pgwt_exec(c, "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
                 "$$BEGIN RAISE EXCEPTION 'no'; END$$");
    pgwt_exec(c, "CREATE TRIGGER refuse BEFORE INSERT ON pgwitness.snapshots "
                 "FOR EACH ROW EXECUTE FUNCTION refuse()");
    pgwt_exec(c, "BEGIN; INSERT INTO ledger VALUES ('before')");
    pgw_pq_drop_result r = drop(c, "tx_victim", PGW_REASON_MANUAL, NULL);
    ck_assert(!r.snapshot_taken);
    ck_assert_int_eq(PQtransactionStatus(c), PQTRANS_INTRANS);
    pgwt_exec(c, "INSERT INTO ledger VALUES ('after')");
    pgwt_exec(c, "COMMIT");
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM ledger"), 2);
    ck_assert(!table_exists(c, "tx_victim"));
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.drop_audit"), 1);
    PQfinish(c);
}
END_TEST

START_TEST(callers_rollback_takes_snapshot_with_it)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE kept (a int)");
    pgwt_exec(c, "SET lock_timeout = '7s'");
    pgwt_exec(c, "BEGIN; SET LOCAL client_min_messages = notice");
    pgw_pq_drop_result r = drop(c, "kept", PGW_REASON_SCHEMA_MISMATCH_RECREATE, NULL);
    ck_assert(r.dropped && r.snapshot_taken);
    ck_assert_int_eq(PQtransactionStatus(c), PQTRANS_INTRANS);
    /* Inside the caller's transaction its settings are as they were. */
    char *v = pgwt_value(c, "SELECT current_setting('lock_timeout') || '|' || "
                            "current_setting('client_min_messages')");
    ck_assert_str_eq(v, "7s|notice");
    free(v);
    pgwt_exec(c, "ROLLBACK");
    ck_assert(table_exists(c, "kept"));
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.snapshots"), 0);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.drop_audit"), 0);
    PQfinish(c);
}
END_TEST

START_TEST(environment_switch_and_override)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE sw1 (a int); CREATE TABLE sw2 (a int); CREATE TABLE sw3 (a int)");
    static const char *offs[] = {"0", "off", "FALSE"};
    setenv("PGWITNESS_SNAPSHOTS", offs[0], 1);
    pgw_pq_drop_result r = drop(c, "sw1", PGW_REASON_MANUAL, NULL);
    ck_assert(r.dropped && !r.snapshot_taken);
    ck_assert_int_eq(r.snapshot_status, PGW_ESTATE);
    ck_assert_str_eq(r.snapshot_error, "snapshots are switched off (PGWITNESS_SNAPSHOTS or "
                                       "options)");
    setenv("PGWITNESS_SNAPSHOTS", offs[1], 1);
    pgw_pq_drop_options o = PGW_PQ_DROP_OPTIONS_INIT;
    o.snapshots = PGW_PQ_SNAPSHOTS_ON; /* options override the environment */
    r = drop(c, "sw2", PGW_REASON_MANUAL, &o);
    ck_assert(r.snapshot_taken);
    setenv("PGWITNESS_SNAPSHOTS", offs[2], 1);
    r = drop(c, "sw3", PGW_REASON_MANUAL, NULL);
    ck_assert(!r.snapshot_taken);
    unsetenv("PGWITNESS_SNAPSHOTS");
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.drop_audit"), 3);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.snapshots"), 1);
    PQfinish(c);
}
END_TEST

START_TEST(drop_that_fails_changes_nothing)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE base (a int); CREATE VIEW dep AS SELECT a FROM base");
    pgw_pq_drop_result r;
    memset(&r, 0x5a, sizeof r);
    pgw_error err;
    ck_assert_int_eq(pgw_pq_drop_table(&r, c, "public", "base", PGW_REASON_MANUAL, NULL, &err),
                     PGW_EPG);
    ck_assert_str_eq(err.sqlstate, "2BP01");
    ck_assert_int_eq(PQtransactionStatus(c), PQTRANS_IDLE);
    ck_assert(table_exists(c, "base"));
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.snapshots"), 0);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.drop_audit"), 0);
    /* Bad arguments. */
    ck_assert_int_eq(pgw_pq_drop_table(&r, c, "public", "base", "", NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_drop_table(&r, c, "public", "base", NULL, NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "pq_drop_table: reason is NULL");
    ck_assert_int_eq(pgw_pq_drop_table(&r, c, NULL, "base", "x", NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "pq_drop_table: schema is NULL");
    pgw_pq_drop_options o = PGW_PQ_DROP_OPTIONS_INIT;
    o.lock_timeout_ms = 0;
    ck_assert_int_eq(pgw_pq_drop_table(&r, c, "public", "base", "x", &o, &err), PGW_EINVAL);
    pgwt_exec(c, "BEGIN");
    PQclear(PQexec(c, "SELECT 1/0"));
    ck_assert_int_eq(pgw_pq_drop_table(&r, c, "public", "base", "x", NULL, &err), PGW_ESTATE);
    pgwt_exec(c, "ROLLBACK");
    ck_assert(table_exists(c, "base"));
    PQfinish(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("funnel");
    TCase *tc = tcase_create("funnel");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, one_snapshot_per_audited_drop);
    tcase_add_test(tc, table_already_gone);
    tcase_add_test(tc, snapshot_insert_raises);
    tcase_add_test(tc, snapshots_table_missing);
    tcase_add_test(tc, lock_held_by_another_session_delays_the_drop_not_its_snapshot);
    tcase_add_test(tc, lock_not_had_under_the_sessions_timeout_drops_nothing);
    tcase_add_test(tc, role_without_privilege_on_snapshots);
    tcase_add_test(tc, allocation_failure_in_snapshot);
    tcase_add_test(tc, callers_other_work_survives_failed_snapshot);
    tcase_add_test(tc, callers_rollback_takes_snapshot_with_it);
    tcase_add_test(tc, environment_switch_and_override);
    tcase_add_test(tc, drop_that_fails_changes_nothing);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    pgwt_pg_setup("funnel");
    return pgwt_main(suite());
}
