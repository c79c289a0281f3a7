/*
 * tests/pg/check_pq_basic.c — the adapter against the real server that
 * tests/run starts: connection checks and error translation (the server's
 * DETAIL and HINT kept in one line; the same codes without a pgw_error).
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

/* The next snapshot id is 1 again. */
static void rewind_ids(PGconn *c)
{
    pgwt_exec(c, "SELECT setval(pg_get_serial_sequence('pgwitness.snapshots', 'id'), 1, false)");
}

START_TEST(db_error_keeps_detail)
{
    pgw_snapshot *s = NULL;
    PGconn *c = install_with_table("dup", &s);
    int64_t id = 0;
    ck_assert_int_eq(pgw_pq_store(&id, c, NULL, s, NULL), PGW_OK);
    ck_assert_int_eq(id, 1);
    rewind_ids(c);
    pgw_error err;
    id = -1;
    ck_assert_int_eq(pgw_pq_store(&id, c, NULL, s, &err), PGW_EPG);
    ck_assert_int_eq(id, -1);
    ck_assert_int_eq(err.code, PGW_EPG);
    ck_assert_str_eq(err.sqlstate, "23505");
    ck_assert_str_eq(err.message, "storing snapshots: duplicate key value violates unique "
                                  "constraint \"snapshots_pkey\" (DETAIL: Key (id)=(1) already "
                                  "exists.)");
    /* The same code without a pgw_error. */
    rewind_ids(c);
    ck_assert_int_eq(pgw_pq_store(&id, c, NULL, s, NULL), PGW_EPG);
    ck_assert_int_eq(id, -1);
    pgw_snapshot_free(s);
    PQfinish(c);
}
END_TEST

START_TEST(db_error_keeps_hint)
{
    pgw_snapshot *s = NULL;
    PGconn *c = install_with_table("hinted", &s);
    pgwt_exec(c, "CREATE FUNCTION calls_missing() RETURNS trigger LANGUAGE plpgsql AS "
                 "$$BEGIN PERFORM pgwt_no_such_fn(1); RETURN NEW; END$$");
    pgwt_exec(c, "CREATE TRIGGER calls_missing BEFORE INSERT ON pgwitness.snapshots "
                 "FOR EACH ROW EXECUTE FUNCTION calls_missing()");
    pgw_error err;
    ck_assert_int_eq(pgw_pq_store(NULL, c, NULL, s, &err), PGW_EPG);
    ck_assert_str_eq(err.sqlstate, "42883");
    /* PostgreSQL 19 split the hint: its first sentence became a DETAIL. */
    ck_assert_str_eq(err.message,
                     PQserverVersion(c) >= 190000
                         ? "storing snapshots: function pgwt_no_such_fn(integer) does not exist "
                           "(DETAIL: No function of that name accepts the given argument types.) "
                           "(HINT: You might need to add explicit type casts.)"
                         : "storing snapshots: function pgwt_no_such_fn(integer) does not exist "
                           "(HINT: No function matches the given name and argument types. You "
                           "might need to add explicit type casts.)");
    ck_assert_int_eq(pgw_pq_store(NULL, c, NULL, s, NULL), PGW_EPG);
    pgw_snapshot_free(s);
    PQfinish(c);
}
END_TEST

START_TEST(db_error_keeps_detail_and_hint)
{
    pgw_snapshot *s = NULL;
    PGconn *c = install_with_table("base", &s);
    pgw_snapshot_free(s);
    pgwt_exec(c, "CREATE VIEW dep AS SELECT a FROM base");
    pgw_error err;
    ck_assert_int_eq(pgw_pq_drop_table(NULL, c, "public", "base", "test", NULL, &err), PGW_EPG);
    ck_assert_str_eq(err.sqlstate, "2BP01");
    ck_assert_str_eq(err.message, "dropping the table: cannot drop table base because other "
                                  "objects depend on it (DETAIL: view dep depends on table "
                                  "base) (HINT: Use DROP ... CASCADE to drop the dependent "
                                  "objects too.)");
    /* A DETAIL of several lines stays one line, inside its parentheses. */
    pgwt_exec(c, "CREATE VIEW dep2 AS SELECT a FROM base");
    ck_assert_int_eq(pgw_pq_drop_table(NULL, c, "public", "base", "test", NULL, &err), PGW_EPG);
    ck_assert_msg(strpbrk(err.message, "\n\r\t") == NULL, "one line: %s", err.message);
    ck_assert_msg(strstr(err.message, "(DETAIL: view dep depends on table base; view dep2 "
                                      "depends on table base) (HINT: ") ||
                      strstr(err.message, "(DETAIL: view dep2 depends on table base; view dep "
                                          "depends on table base) (HINT: "),
                  "%s", err.message);
    ck_assert_int_eq(pgw_pq_drop_table(NULL, c, "public", "base", "test", NULL, NULL), PGW_EPG);
    PQfinish(c);
}
END_TEST

START_TEST(db_error_cut_on_character)
{
    /* 31 two-byte characters: a 62-byte name; the index key repeats it. */
    char name[64] = "";
    for (int i = 0; i < 31; i++)
        strcat(name, "\xC3\xA9");
    pgw_snapshot *s = NULL;
    PGconn *c = install_with_table(name, &s);
    pgwt_exec(c, "CREATE UNIQUE INDEX snapshots_long ON pgwitness.snapshots "
                 "((repeat(table_name, 8)))");
    ck_assert_int_eq(pgw_pq_store(NULL, c, NULL, s, NULL), PGW_OK);
    pgw_error err;
    ck_assert_int_eq(pgw_pq_store(NULL, c, NULL, s, &err), PGW_EPG);
    ck_assert_str_eq(err.sqlstate, "23505");
    /* The message fills the buffer with whole characters of the key. */
    char want[PGW_ERROR_MESSAGE_SIZE];
    int n = snprintf(want, sizeof want, "storing snapshots: duplicate key value violates "
                                        "unique constraint \"snapshots_long\" (DETAIL: Key "
                                        "(repeat(table_name, 8))=(");
    while ((size_t)n + 2 < sizeof want)
        n += snprintf(want + n, sizeof want - (size_t)n, "\xC3\xA9");
    ck_assert_str_eq(err.message, want);
    pgw_snapshot_free(s);
    PQfinish(c);
}
END_TEST

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
    tcase_add_test(tc, db_error_keeps_detail);
    tcase_add_test(tc, db_error_keeps_hint);
    tcase_add_test(tc, db_error_keeps_detail_and_hint);
    tcase_add_test(tc, db_error_cut_on_character);
    tcase_add_test(tc, codes_without_err);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    pgwt_pg_setup("pq_basic");
    return pgwt_main(suite());
}
