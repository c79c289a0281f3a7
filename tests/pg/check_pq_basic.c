/*
 * tests/pg/check_pq_basic.c — the adapter against the real server that
 * tests/run starts: connection checks and error translation (the same
 * codes without a pgw_error).
 * SPDX-License-Identifier: MIT
 */
#include <libpq-fe.h>
#include <stdio.h>
#include <string.h>

#include "pgw_test.h"
#include "pgwitness/pgwitness-pq.h"

START_TEST(check_accepts_live_connection)
{
    PGconn *c = pgwt_connect();
    int version = 0;
    pgw_error err;
    pgw_error_clear(&err);
    ck_assert_int_eq(pgw_pq_check(&version, c, &err), PGW_OK);
    ck_assert_int_ge(version, PGW_PQ_MIN_SERVER_VERSION);
    ck_assert_int_eq(version, PQserverVersion(c));
    ck_assert_int_eq(err.code, PGW_OK);
    /* Inside an open transaction is fine. */
    pgwt_exec(c, "BEGIN");
    ck_assert_int_eq(pgw_pq_check(NULL, c, &err), PGW_OK);
    pgwt_exec(c, "ROLLBACK");
    PQfinish(c);
}
END_TEST

START_TEST(check_rejects_aborted_transaction)
{
    PGconn *c = pgwt_connect();
    pgwt_exec(c, "BEGIN");
    PQclear(PQexec(c, "SELECT * FROM no_such_table_xyz"));
    int version = -1;
    pgw_error err;
    ck_assert_int_eq(pgw_pq_check(&version, c, &err), PGW_ESTATE);
    ck_assert_int_eq(version, -1);
    ck_assert_str_eq(err.message,
                     "connection is in an aborted transaction: roll it back first");
    pgwt_exec(c, "ROLLBACK");
    ck_assert_int_eq(pgw_pq_check(&version, c, &err), PGW_OK);
    PQfinish(c);
}
END_TEST

START_TEST(check_rejects_bad_connection)
{
    PGconn *c = PQconnectdb("host=/nonexistent-pgwitness-dir port=1 connect_timeout=2");
    ck_assert_int_eq(PQstatus(c), CONNECTION_BAD);
    pgw_error err;
    ck_assert_int_eq(pgw_pq_check(NULL, c, &err), PGW_ECONN);
    ck_assert_int_eq(err.code, PGW_ECONN);
    ck_assert_msg(strstr(err.message, "connection is not usable: ") == err.message,
                  "message: %s", err.message);
    ck_assert_msg(strstr(err.message, "/nonexistent-pgwitness-dir") != NULL,
                  "libpq's reason is carried: %s", err.message);
    /* One line: libpq's "\n\tIs the server running ...?" hint is joined. */
    ck_assert_msg(strpbrk(err.message, "\n\r\t") == NULL, "one line: %s", err.message);
    ck_assert_msg(strstr(err.message, "; Is the server running") != NULL, "hint joined: %s",
                  err.message);
    PQfinish(c);
    ck_assert_int_eq(pgw_pq_check(NULL, NULL, &err), PGW_EINVAL);
}
END_TEST

START_TEST(check_detects_terminated_backend)
{
    PGconn *victim = pgwt_connect();
    PGconn *killer = pgwt_connect();
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(%d)", PQbackendPID(victim));
    pgwt_exec(killer, sql);
    /* The victim notices on its next round trip. */
    PQclear(PQexec(victim, "SELECT 1"));
    pgw_error err;
    ck_assert_int_eq(pgw_pq_check(NULL, victim, &err), PGW_ECONN);
    PQfinish(victim);
    PQfinish(killer);
}
END_TEST

/* A fresh pgwitness schema and a table to snapshot; *snap its capture. */
static PGconn *install_with_table(const char *table, pgw_snapshot **snap)
{
    PGconn *c = pgwt_connect();
    pgwt_exec(c, "SET client_min_messages = warning; DROP SCHEMA IF EXISTS pgwitness CASCADE; "
                 "DROP SCHEMA public CASCADE; CREATE SCHEMA public; RESET client_min_messages");
    pgw_error err;
    ck_assert_msg(pgw_pq_install(NULL, c, NULL, &err) == PGW_OK, "%s", err.message);
    char sql[200];
    snprintf(sql, sizeof sql, "CREATE TABLE \"%s\" (a int)", table);
    pgwt_exec(c, sql);
    ck_assert_int_eq(pgw_pq_capture(snap, c, "public", table, NULL, NULL), PGW_OK);
    return c;
}

/* Every failure has its code without a pgw_error, as with one. */
START_TEST(codes_without_err)
{
    pgw_snapshot *s = NULL;
    PGconn *c = install_with_table("t", &s);
    int v = -1;
    ck_assert_int_eq(pgw_pq_schema_version(&v, c, "nowhere", NULL), PGW_OK);
    ck_assert_int_eq(v, 0);
    pgw_pq_snapshot_set *set = (pgw_pq_snapshot_set *)0x1;
    ck_assert_int_eq(pgw_pq_load(&set, c, "nowhere", NULL, NULL), PGW_ENOTFOUND);
    ck_assert_ptr_eq(set, (pgw_pq_snapshot_set *)0x1);
    ck_assert_int_eq(pgw_pq_store(NULL, c, "nowhere", s, NULL), PGW_ENOTFOUND);
    ck_assert_int_eq(pgw_pq_prune(NULL, c, "nowhere", 1, NULL), PGW_ENOTFOUND);
    pgw_pq_baseline_options bo = PGW_PQ_BASELINE_OPTIONS_INIT;
    bo.pgw_schema = "nowhere";
    ck_assert_int_eq(pgw_pq_baseline(NULL, c, &bo, NULL), PGW_ENOTFOUND);
    pgw_snapshot *none = NULL;
    ck_assert_int_eq(pgw_pq_capture(&none, c, "public", "missing", NULL, NULL), PGW_ENOTFOUND);
    ck_assert_ptr_null(none);
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "missing", NULL, NULL), PGW_ENOTFOUND);
    ck_assert_int_eq(pgw_pq_unwatch_table(NULL, c, "public", "missing", NULL), PGW_ENOTFOUND);
    /* A database error: the same PGW_EPG with and without. */
    pgwt_exec(c, "BEGIN; SET LOCAL lock_timeout = '10ms'");
    PGconn *other = pgwt_connect();
    pgwt_exec(other, "BEGIN; LOCK TABLE t IN EXCLUSIVE MODE");
    pgw_pq_watch_options wo = PGW_PQ_WATCH_OPTIONS_INIT;
    pgw_error err;
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", &wo, &err), PGW_EPG);
    ck_assert_str_eq(err.sqlstate, "55P03");
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", &wo, NULL), PGW_EPG);
    pgwt_exec(c, "ROLLBACK");
    pgwt_exec(other, "ROLLBACK");
    PQfinish(other);
    pgw_snapshot_free(s);
    PQfinish(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pq_basic");
    TCase *tc = tcase_create("pq_basic");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, check_accepts_live_connection);
    tcase_add_test(tc, check_rejects_aborted_transaction);
    tcase_add_test(tc, check_rejects_bad_connection);
    tcase_add_test(tc, check_detects_terminated_backend);
    tcase_add_test(tc, codes_without_err);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    pgwt_pg_setup("pq_basic");
    return pgwt_main(suite());
}
