/*
 * tests/pg/check_pq_basic.c — the adapter against the real server that
 * tests/run starts: connection checks and error translation.
 * SPDX-License-Identifier: MIT
 */
#include <libpq-fe.h>
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

static Suite *suite(void)
{
    Suite *s = suite_create("pq_basic");
    TCase *tc = tcase_create("pq_basic");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, check_accepts_live_connection);
    tcase_add_test(tc, check_rejects_aborted_transaction);
    tcase_add_test(tc, check_rejects_bad_connection);
    tcase_add_test(tc, check_detects_terminated_backend);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    pgwt_pg_setup("pq_basic");
    return pgwt_main(suite());
}
