/*
 * tests/pg/check_watch.c — the statement triggers of query invalidation
 * against the real server: every operation on a watched table produces
 * exactly the expected write set (single and multi-row insert, update and
 * delete, UPDATE ... SET x = x, key changes, composite keys, no key,
 * truncate, transactions, savepoints), the text of IDs and values does not
 * depend on the writer's session, the bounds (500 IDs, 100 columns, fewer
 * than 8000 bytes, 10,000 rows) degrade as docs/wire.md says and never fail
 * the writer, the triggers' firing mode (ENABLE ALWAYS under
 * session_replication_role = replica, DISABLE TRIGGER), the two-phase commit
 * warning and what it warns of, and pgw_pq_watch_table/pgw_pq_unwatch_table
 * with their errors.
 * Every payload is also checked to be byte for byte what pgw_payload_encode()
 * writes for the write set it decodes to (tests/support/pgwt_notify.c).
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
#include "pgwt_notify.h"
#include "pgwitness/payload.h"
#include "pgwitness/pgwitness-pq.h"
#include "pgwitness/inval_json.h"
#include "pgwitness/index.h"

#define CH PGW_PQ_DEFAULT_CHANNEL

/* Every test starts from an empty public schema and a fresh pgwitness. */
static PGconn *setup(void)
{
    PGconn *c = pgwt_connect();
    pgwt_exec(c, "SET client_min_messages = warning; "
                 "DROP SCHEMA IF EXISTS pgwitness CASCADE; DROP SCHEMA public CASCADE; "
                 "CREATE SCHEMA public; GRANT ALL ON SCHEMA public TO PUBLIC; "
                 "RESET client_min_messages");
    pgw_error err;
    int v = 0;
    ck_assert_int_eq(pgw_pq_install(&v, c, NULL, &err), PGW_OK);
    ck_assert_int_eq(v, PGW_PQ_SCHEMA_VERSION);
    return c;
}

static void watch(PGconn *c, const char *table, const char *const *vals, size_t n)
{
    pgw_pq_watch_options o = PGW_PQ_WATCH_OPTIONS_INIT;
    o.value_columns = vals;
    o.n_value_columns = n;
    pgw_error err;
    pgw_error_clear(&err);
    ck_assert_msg(pgw_pq_watch_table(c, "public", table, &o, &err) == PGW_OK, "watch %s: %s",
                  table, err.message);
}

static long long n_triggers(PGconn *c, const char *table)
{
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'public.%s'::regclass "
             "AND tgname LIKE 'pgwitness\\_%%'",
             table);
    return pgwt_int(c, sql);
}

/* ------------------------------------------------------------------ */
/* every operation                                                      */

static const char *const STATUS[] = {"status"};

START_TEST(insert_single_and_multi_row)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgwt_exec(c, "CREATE TABLE tasks (id int PRIMARY KEY, title text, status text)");
    watch(c, "tasks", STATUS, 1);
    pgwt_exec(c, "INSERT INTO tasks VALUES (7, 'seven', 'open')");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\","
                          "\"ids\":[\"7\"],\"ids_truncated\":false,\"columns\":null,"
                          "\"columns_truncated\":false,\"new\":[{\"status\":\"open\"}],"
                          "\"pk_changed\":false}");
    /* Rows in key order (the key's text, bytewise), SQL NULL as null. */
    pgwt_exec(c, "INSERT INTO tasks VALUES (3, 'c', NULL), (12, 'l', 'done'), (1, 'a', 'open')");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\","
                          "\"ids\":[\"1\",\"12\",\"3\"],\"ids_truncated\":false,\"columns\":null,"
                          "\"columns_truncated\":false,\"new\":[{\"status\":\"open\"},"
                          "{\"status\":\"done\"},{\"status\":null}],\"pk_changed\":false}");
    /* INSERT ... SELECT and COPY are statements like any other. */
    pgwt_exec(c, "INSERT INTO tasks SELECT g, 'g', 'open' FROM generate_series(20, 21) g");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\","
                          "\"ids\":[\"20\",\"21\"],\"ids_truncated\":false,\"columns\":null,"
                          "\"columns_truncated\":false,\"new\":[{\"status\":\"open\"},"
                          "{\"status\":\"open\"}],\"pk_changed\":false}");
    PGresult *r = PQexec(c, "COPY tasks FROM STDIN");
    ck_assert_int_eq(PQresultStatus(r), PGRES_COPY_IN);
    PQclear(r);
    const char *row = "30\tthirty\t\\N\n";
    ck_assert_int_eq(PQputCopyData(c, row, (int)strlen(row)), 1);
    ck_assert_int_eq(PQputCopyEnd(c, NULL), 1);
    r = PQgetResult(c);
    ck_assert_int_eq(PQresultStatus(r), PGRES_COMMAND_OK);
    PQclear(r);
    PQclear(PQgetResult(c));
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\","
                          "\"ids\":[\"30\"],\"ids_truncated\":false,\"columns\":null,"
                          "\"columns_truncated\":false,\"new\":[{\"status\":null}],"
                          "\"pk_changed\":false}");
    pgwt_expect_marker(c, lc, CH, "end");
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

START_TEST(update_single_multi_partial_and_noop)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgwt_exec(c, "CREATE TABLE tasks (id int PRIMARY KEY, title text, status text, n int); "
                 "INSERT INTO tasks VALUES (1, 'a', 'open', 0), (2, 'b', 'open', 0), "
                 "(3, 'c', 'done', 0)");
    watch(c, "tasks", STATUS, 1);
    pgwt_exec(c, "UPDATE tasks SET title = 'A' WHERE id = 1");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\","
                          "\"ids\":[\"1\"],\"ids_truncated\":false,\"columns\":[\"title\"],"
                          "\"columns_truncated\":false,\"old\":[{\"status\":\"open\"}],"
                          "\"new\":[{\"status\":\"open\"}],\"pk_changed\":false}");
    pgwt_exec(c, "UPDATE tasks SET status = 'done', n = n + 1 WHERE id IN (1, 2)");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\","
                          "\"ids\":[\"1\",\"2\"],\"ids_truncated\":false,"
                          "\"columns\":[\"status\",\"n\"],\"columns_truncated\":false,"
                          "\"old\":[{\"status\":\"open\"},{\"status\":\"open\"}],"
                          "\"new\":[{\"status\":\"done\"},{\"status\":\"done\"}],"
                          "\"pk_changed\":false}");
    /* Rows whose values do not change are not listed: row 2's title is
     * 'b' already, only row 3 changes. */
    pgwt_exec(c, "UPDATE tasks SET title = 'b' WHERE id IN (2, 3)");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\","
                          "\"ids\":[\"3\"],\"ids_truncated\":false,\"columns\":[\"title\"],"
                          "\"columns_truncated\":false,\"old\":[{\"status\":\"done\"}],"
                          "\"new\":[{\"status\":\"done\"}],\"pk_changed\":false}");
    /* UPDATE ... SET x = x: no row and no column changed (one row and
     * several rows take different paths in the trigger function). */
    pgwt_exec(c, "UPDATE tasks SET status = status WHERE id = 1");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\","
                          "\"ids\":[],\"ids_truncated\":false,\"columns\":[],"
                          "\"columns_truncated\":false,\"pk_changed\":false}");
    pgwt_exec(c, "UPDATE tasks SET status = status");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\","
                          "\"ids\":[],\"ids_truncated\":false,\"columns\":[],"
                          "\"columns_truncated\":false,\"pk_changed\":false}");
    /* NULL to a value and back are changes; NULL to NULL is not. */
    pgwt_exec(c, "UPDATE tasks SET n = NULL WHERE id = 3");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\","
                          "\"ids\":[\"3\"],\"ids_truncated\":false,\"columns\":[\"n\"],"
                          "\"columns_truncated\":false,\"old\":[{\"status\":\"done\"}],"
                          "\"new\":[{\"status\":\"done\"}],\"pk_changed\":false}");
    pgwt_exec(c, "UPDATE tasks SET n = NULL WHERE id = 3");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\","
                          "\"ids\":[],\"ids_truncated\":false,\"columns\":[],"
                          "\"columns_truncated\":false,\"pk_changed\":false}");
    pgwt_expect_marker(c, lc, CH, "end");
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

START_TEST(update_of_keys)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    /* DEFERRABLE: keys may collide inside a statement (swaps, shifts). */
    pgwt_exec(c, "CREATE TABLE k (id int PRIMARY KEY DEFERRABLE, v text); "
                 "INSERT INTO k VALUES (1, 'a'), (2, 'b'), (3, 'c')");
    static const char *const V[] = {"v"};
    watch(c, "k", V, 1);
    /* A re-keyed row: the old key does not exist after, the new one did
     * not exist before; the changed columns are unknown. */
    pgwt_exec(c, "UPDATE k SET id = 10 WHERE id = 1");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"k\",\"op\":\"update\","
                          "\"ids\":[\"1\",\"10\"],\"ids_truncated\":false,\"columns\":null,"
                          "\"columns_truncated\":false,\"old\":[{\"v\":\"a\"},null],"
                          "\"new\":[null,{\"v\":\"a\"}],\"pk_changed\":true}");
    /* A shift: key 3 exists before and after (different rows). */
    pgwt_exec(c, "UPDATE k SET id = id + 1 WHERE id IN (2, 3)");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"k\",\"op\":\"update\","
                          "\"ids\":[\"2\",\"3\",\"4\"],\"ids_truncated\":false,\"columns\":null,"
                          "\"columns_truncated\":false,"
                          "\"old\":[{\"v\":\"b\"},{\"v\":\"c\"},null],"
                          "\"new\":[null,{\"v\":\"b\"},{\"v\":\"c\"}],\"pk_changed\":true}");
    /* A swap leaves the set of keys as it was: by key, rows 3 and 4 had
     * their other columns changed (what a reader of the table sees). */
    pgwt_exec(c, "UPDATE k SET id = CASE id WHEN 3 THEN 4 ELSE 3 END WHERE id IN (3, 4)");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"k\",\"op\":\"update\","
                          "\"ids\":[\"3\",\"4\"],\"ids_truncated\":false,\"columns\":[\"v\"],"
                          "\"columns_truncated\":false,\"old\":[{\"v\":\"b\"},{\"v\":\"c\"}],"
                          "\"new\":[{\"v\":\"c\"},{\"v\":\"b\"}],\"pk_changed\":false}");
    /* Setting a key to itself changes nothing. */
    pgwt_exec(c, "UPDATE k SET id = id WHERE id = 10");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"k\",\"op\":\"update\","
                          "\"ids\":[],\"ids_truncated\":false,\"columns\":[],"
                          "\"columns_truncated\":false,\"pk_changed\":false}");
    pgwt_expect_marker(c, lc, CH, "end");
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

START_TEST(delete_single_and_multi_row)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgwt_exec(c, "CREATE TABLE tasks (id bigint PRIMARY KEY, status text); "
                 "INSERT INTO tasks SELECT g, 's' || g FROM generate_series(1, 5) g");
    watch(c, "tasks", STATUS, 1);
    pgwt_exec(c, "DELETE FROM tasks WHERE id = 5");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"delete\","
                          "\"ids\":[\"5\"],\"ids_truncated\":false,\"columns\":null,"
                          "\"columns_truncated\":false,\"old\":[{\"status\":\"s5\"}],"
                          "\"pk_changed\":false}");
    pgwt_exec(c, "DELETE FROM tasks WHERE id < 4");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"delete\","
                          "\"ids\":[\"1\",\"2\",\"3\"],\"ids_truncated\":false,\"columns\":null,"
                          "\"columns_truncated\":false,\"old\":[{\"status\":\"s1\"},"
                          "{\"status\":\"s2\"},{\"status\":\"s3\"}],\"pk_changed\":false}");
    pgwt_expect_marker(c, lc, CH, "end");
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

START_TEST(composite_key)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    /* Key order is the constraint's, not the table's. */
    pgwt_exec(c, "CREATE TABLE m (ws text, n int, id int, role text, "
                 "PRIMARY KEY (id, ws)); INSERT INTO m VALUES ('a', 0, 1, 'r')");
    watch(c, "m", NULL, 0);
    pgwt_exec(c, "INSERT INTO m VALUES ('b', 0, 1, 'r'), ('a', 0, 2, 'w')");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"m\",\"op\":\"insert\","
                          "\"ids\":[[\"1\",\"b\"],[\"2\",\"a\"]],\"ids_truncated\":false,"
                          "\"columns\":null,\"columns_truncated\":false,\"pk_changed\":false}");
    pgwt_exec(c, "UPDATE m SET role = 'x' WHERE id = 1");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"m\",\"op\":\"update\","
                          "\"ids\":[[\"1\",\"a\"],[\"1\",\"b\"]],\"ids_truncated\":false,"
                          "\"columns\":[\"role\"],\"columns_truncated\":false,"
                          "\"pk_changed\":false}");
    pgwt_exec(c, "UPDATE m SET ws = 'c' WHERE id = 2");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"m\",\"op\":\"update\","
                          "\"ids\":[[\"2\",\"a\"],[\"2\",\"c\"]],\"ids_truncated\":false,"
                          "\"columns\":null,\"columns_truncated\":false,\"pk_changed\":true}");
    pgwt_exec(c, "DELETE FROM m WHERE ws = 'a'");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"m\",\"op\":\"delete\","
                          "\"ids\":[[\"1\",\"a\"]],\"ids_truncated\":false,"
                          "\"columns\":null,\"columns_truncated\":false,\"pk_changed\":false}");
    pgwt_expect_marker(c, lc, CH, "end");
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

START_TEST(table_without_key_and_truncate)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgwt_exec(c, "CREATE TABLE log (at int, msg text)");
    watch(c, "log", STATUS, 1);
    pgwt_exec(c, "INSERT INTO log VALUES (1, 'a'), (2, 'b')");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"log\",\"op\":\"insert\","
                          "\"ids\":null,\"ids_truncated\":false,\"columns\":null,"
                          "\"columns_truncated\":false,\"pk_changed\":false}");
    pgwt_exec(c, "UPDATE log SET msg = 'c' WHERE at = 1");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"log\",\"op\":\"update\","
                          "\"ids\":null,\"ids_truncated\":false,\"columns\":null,"
                          "\"columns_truncated\":false,\"pk_changed\":false}");
    pgwt_exec(c, "DELETE FROM log");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"log\",\"op\":\"delete\","
                          "\"ids\":null,\"ids_truncated\":false,\"columns\":null,"
                          "\"columns_truncated\":false,\"pk_changed\":false}");
    pgwt_exec(c, "TRUNCATE log");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"log\",\"op\":\"truncate\","
                          "\"ids\":null,\"ids_truncated\":false,\"columns\":null,"
                          "\"columns_truncated\":false,\"pk_changed\":false}");
    /* A key added later is followed: the function reads the catalog. */
    pgwt_exec(c, "ALTER TABLE log ADD PRIMARY KEY (at)");
    pgwt_exec(c, "INSERT INTO log VALUES (5, 'e')");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"log\",\"op\":\"insert\","
                          "\"ids\":[\"5\"],\"ids_truncated\":false,\"columns\":null,"
                          "\"columns_truncated\":false,\"pk_changed\":false}");
    pgwt_expect_marker(c, lc, CH, "end");
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* the key after watching; the one-row path                             */

/* The write set of a statement on public.<table> without values, IDs and
 * columns as JSON ("[\"1\"]", "null", ...), no truncation, no key change. */
static void expect_write(PGconn *lc, const char *table, const char *op, const char *ids,
                         const char *columns)
{
    char want[1024];
    snprintf(want, sizeof want,
             "\"schema\":\"public\",\"table\":\"%s\",\"op\":\"%s\",\"ids\":%s,"
             "\"ids_truncated\":false,\"columns\":%s,\"columns_truncated\":false,"
             "\"pk_changed\":false}",
             table, op, ids, columns);
    pgwt_expect_write(lc, want);
}

/* The function describes the key it found when the table was watched only
 * while the catalog caches confirm it; every change of the key after
 * pgw_pq_watch_table() is followed. */
START_TEST(key_changes_after_watching)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgwt_exec(c, "CREATE TABLE t (id int PRIMARY KEY, other int NOT NULL, v text); "
                 "INSERT INTO t VALUES (1, 101, 'a')");
    watch(c, "t", NULL, 0);
    pgwt_exec(c, "UPDATE t SET v = 'b' WHERE id = 1");
    expect_write(lc, "t", "update", "[\"1\"]", "[\"v\"]");
    /* The names swapped: the column called id now is not the key. */
    pgwt_exec(c, "ALTER TABLE t RENAME id TO tmp; ALTER TABLE t RENAME other TO id; "
                 "ALTER TABLE t RENAME tmp TO other");
    pgwt_exec(c, "INSERT INTO t VALUES (2, 102, 'x')");
    expect_write(lc, "t", "insert", "[\"2\"]", "null");
    pgwt_exec(c, "UPDATE t SET v = 'c' WHERE other = 1");
    expect_write(lc, "t", "update", "[\"1\"]", "[\"v\"]");
    /* Another key. */
    pgwt_exec(c, "ALTER TABLE t DROP CONSTRAINT t_pkey; ALTER TABLE t ADD PRIMARY KEY (id)");
    pgwt_exec(c, "DELETE FROM t WHERE other = 2");
    expect_write(lc, "t", "delete", "[\"102\"]", "null");
    /* The key's type changes: IDs are the new type's text (a timestamp's
     * output text, not its JSON text "2024-01-02T03:05:41"). */
    pgwt_exec(c, "ALTER TABLE t ALTER id TYPE timestamp "
                 "USING timestamp '2024-01-02 03:04:00' + id * interval '1 second'");
    pgwt_exec(c, "UPDATE t SET v = 'd'");
    expect_write(lc, "t", "update", "[\"2024-01-02 03:05:41\"]", "[\"v\"]");
    /* A new index for the same key (REINDEX CONCURRENTLY), another replica
     * identity: the key is read from the catalog. */
    pgwt_exec(c, "ALTER TABLE t ALTER id TYPE int USING 7");
    pgwt_exec(c, "REINDEX TABLE CONCURRENTLY t");
    pgwt_exec(c, "UPDATE t SET v = 'e'");
    expect_write(lc, "t", "update", "[\"7\"]", "[\"v\"]");
    pgwt_exec(c, "ALTER TABLE t REPLICA IDENTITY FULL");
    pgwt_exec(c, "UPDATE t SET v = 'f'");
    expect_write(lc, "t", "update", "[\"7\"]", "[\"v\"]");
    /* No key: unknown IDs and columns. */
    pgwt_exec(c, "ALTER TABLE t DROP CONSTRAINT t_pkey");
    pgwt_exec(c, "UPDATE t SET v = 'g'");
    expect_write(lc, "t", "update", "null", "null");
    /* Watched again, with the key of now. */
    pgwt_exec(c, "ALTER TABLE t REPLICA IDENTITY DEFAULT; ALTER TABLE t ADD PRIMARY KEY (other)");
    watch(c, "t", NULL, 0);
    pgwt_exec(c, "UPDATE t SET v = 'h'");
    expect_write(lc, "t", "update", "[\"1\"]", "[\"v\"]");
    pgwt_expect_marker(c, lc, CH, "end");
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

/* Columns a primary key INCLUDEs are not part of the key. */
START_TEST(key_with_included_columns)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgwt_exec(c, "CREATE TABLE i1 (id int, x text, PRIMARY KEY (id) INCLUDE (x)); "
                 "CREATE TABLE i2 (a int, b text, x text, PRIMARY KEY (a, b) INCLUDE (x))");
    watch(c, "i1", NULL, 0);
    watch(c, "i2", NULL, 0);
    pgwt_exec(c, "INSERT INTO i1 VALUES (1, 'a')");
    expect_write(lc, "i1", "insert", "[\"1\"]", "null");
    pgwt_exec(c, "INSERT INTO i1 VALUES (2, 'b'), (3, 'c')");
    expect_write(lc, "i1", "insert", "[\"2\",\"3\"]", "null");
    pgwt_exec(c, "UPDATE i1 SET x = 'z' WHERE id = 1");
    expect_write(lc, "i1", "update", "[\"1\"]", "[\"x\"]");
    pgwt_exec(c, "INSERT INTO i2 VALUES (1, 'k', 'a')");
    expect_write(lc, "i2", "insert", "[[\"1\",\"k\"]]", "null");
    pgwt_expect_marker(c, lc, CH, "end");
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

/* A table watched without a key and without value columns. */
START_TEST(table_without_key_followed)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgwt_exec(c, "CREATE TABLE log (at int NOT NULL, msg text); "
                 "CREATE TABLE log2 (at int NOT NULL, msg text)");
    watch(c, "log", NULL, 0);
    watch(c, "log2", NULL, 0);
    pgwt_exec(c, "INSERT INTO log VALUES (1, 'a')");
    expect_write(lc, "log", "insert", "null", "null");
    pgwt_exec(c, "INSERT INTO log VALUES (2, 'b'), (3, 'c')");
    expect_write(lc, "log", "insert", "null", "null");
    pgwt_exec(c, "UPDATE log SET msg = 'x' WHERE false");
    pgwt_exec(c, "UPDATE log SET msg = 'x' WHERE at = 1");
    expect_write(lc, "log", "update", "null", "null");
    pgwt_exec(c, "DELETE FROM log WHERE at = 3");
    expect_write(lc, "log", "delete", "null", "null");
    /* A key added later is followed. */
    pgwt_exec(c, "ALTER TABLE log ADD PRIMARY KEY (at)");
    pgwt_exec(c, "UPDATE log SET msg = 'y' WHERE at = 1");
    expect_write(lc, "log", "update", "[\"1\"]", "[\"msg\"]");
    /* Unless the replica identity changed in between (the function cannot
     * tell a key from the replica identity cheaply): unknown IDs, which is
     * conservative, until the table is watched again. */
    pgwt_exec(c, "ALTER TABLE log2 REPLICA IDENTITY FULL; ALTER TABLE log2 ADD PRIMARY KEY (at); "
                 "INSERT INTO log2 VALUES (1, 'a')");
    expect_write(lc, "log2", "insert", "null", "null");
    watch(c, "log2", NULL, 0);
    pgwt_exec(c, "INSERT INTO log2 VALUES (2, 'b')");
    expect_write(lc, "log2", "insert", "[\"2\"]", "null");
    pgwt_expect_marker(c, lc, CH, "end");
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

/* Changed columns of one row, for values and names that look like the
 * JSON around them. */
START_TEST(changed_columns_of_one_row)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgwt_exec(c, "CREATE TABLE s (id int PRIMARY KEY, a text, b int, c text, f float8, "
                 "  n numeric); "
                 "INSERT INTO s VALUES (1, 'x', 1, 'y', 0, 1.0); "
                 "CREATE TABLE e (id text PRIMARY KEY, s text, j json, arr int[]); "
                 "INSERT INTO e (id, s) VALUES ('k\"1', 's'); "
                 "CREATE TABLE q (id int PRIMARY KEY, \"a,\"\"b\" text, \"c\\d\" text, "
                 "  \"x\"\":y\" text); "
                 "INSERT INTO q VALUES (1, 'a', 'c', 'x'); "
                 "CREATE TABLE w (id int PRIMARY KEY, \"e,\" int, v text); "
                 "INSERT INTO w VALUES (1, 1, 'v')");
    watch(c, "s", NULL, 0);
    watch(c, "e", NULL, 0);
    watch(c, "q", NULL, 0);
    watch(c, "w", NULL, 0);
    pgwt_exec(c, "UPDATE s SET c = 'z'");
    expect_write(lc, "s", "update", "[\"1\"]", "[\"c\"]");
    pgwt_exec(c, "UPDATE s SET c = 'z', b = 2, a = a");
    expect_write(lc, "s", "update", "[\"1\"]", "[\"b\"]");
    pgwt_exec(c, "UPDATE s SET a = 'p', c = 'q', b = b + 1");
    expect_write(lc, "s", "update", "[\"1\"]", "[\"a\",\"b\",\"c\"]");
    pgwt_exec(c, "UPDATE s SET a = a");
    expect_write(lc, "s", "update", "[]", "[]");
    /* Texts differ, values are equal: 0 and -0, 1.0 and 1.00. */
    pgwt_exec(c, "UPDATE s SET f = -f, n = 1.00");
    expect_write(lc, "s", "update", "[\"1\"]", "[\"f\",\"n\"]");
    /* Strings ending with a comma, on one side, then both. */
    pgwt_exec(c, "UPDATE e SET s = 'x,'");
    expect_write(lc, "e", "update", "[\"k\\\"1\"]", "[\"s\"]");
    pgwt_exec(c, "UPDATE e SET s = 'y,\",'");
    expect_write(lc, "e", "update", "[\"k\\\"1\"]", "[\"s\"]");
    /* json as written (blanks and all), arrays. */
    pgwt_exec(c, "UPDATE e SET j = '  {\"a\": 1, \"b\": [1, \"x\"]}'");
    expect_write(lc, "e", "update", "[\"k\\\"1\"]", "[\"j\"]");
    pgwt_exec(c, "UPDATE e SET j = '  {\"a\": 1,  \"b\": [1, \"x\"]}', s = 'z'");
    expect_write(lc, "e", "update", "[\"k\\\"1\"]", "[\"s\",\"j\"]");
    pgwt_exec(c, "UPDATE e SET arr = '{1,2}'");
    expect_write(lc, "e", "update", "[\"k\\\"1\"]", "[\"arr\"]");
    /* Names with a quote, a backslash, a quote and a colon, ending with a
     * comma. */
    pgwt_exec(c, "UPDATE q SET \"a,\"\"b\" = 'q', \"c\\d\" = 'r'");
    expect_write(lc, "q", "update", "[\"1\"]", "[\"a,\\\"b\",\"c\\\\d\"]");
    pgwt_exec(c, "UPDATE q SET \"x\"\":y\" = 's'");
    expect_write(lc, "q", "update", "[\"1\"]", "[\"x\\\":y\"]");
    pgwt_exec(c, "UPDATE w SET \"e,\" = 2");
    expect_write(lc, "w", "update", "[\"1\"]", "[\"e,\"]");
    pgwt_exec(c, "UPDATE w SET v = 'x'");
    expect_write(lc, "w", "update", "[\"1\"]", "[\"v\"]");
    pgwt_expect_marker(c, lc, CH, "end");
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

START_TEST(zero_row_statements_send_nothing)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgwt_exec(c, "CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t VALUES (1, 'a')");
    watch(c, "t", NULL, 0);
    pgwt_exec(c, "UPDATE t SET v = 'b' WHERE false");
    pgwt_exec(c, "DELETE FROM t WHERE id = 99");
    pgwt_exec(c, "INSERT INTO t SELECT 2, 'x' WHERE false");
    pgwt_exec(c, "INSERT INTO t VALUES (1, 'z') ON CONFLICT DO NOTHING");
    pgwt_expect_marker(c, lc, CH, "after-zero-rows");
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

START_TEST(transactions_commit_rollback_savepoints)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH), *other = pgwt_connect();
    pgwt_exec(c, "CREATE TABLE t (id int PRIMARY KEY, v text)");
    watch(c, "t", NULL, 0);
    const char *ins1 = "\"schema\":\"public\",\"table\":\"t\",\"op\":\"insert\",\"ids\":[\"1\"],"
                       "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                       "\"pk_changed\":false}";
    /* Each statement separately, delivered only at commit, in order. */
    pgwt_exec(c, "BEGIN");
    pgwt_exec(c, "INSERT INTO t VALUES (1, 'a')");
    pgwt_exec(c, "UPDATE t SET v = 'b' WHERE id = 1");
    pgwt_exec(c, "DELETE FROM t WHERE id = 1");
    pgwt_expect_marker(other, lc, CH, "before-commit");
    pgwt_exec(c, "COMMIT");
    pgwt_expect_write(lc, ins1);
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"t\",\"op\":\"update\","
                          "\"ids\":[\"1\"],\"ids_truncated\":false,\"columns\":[\"v\"],"
                          "\"columns_truncated\":false,\"pk_changed\":false}");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"t\",\"op\":\"delete\","
                          "\"ids\":[\"1\"],\"ids_truncated\":false,\"columns\":null,"
                          "\"columns_truncated\":false,\"pk_changed\":false}");
    /* Nothing after a rollback. */
    pgwt_exec(c, "BEGIN; INSERT INTO t VALUES (1, 'a'); UPDATE t SET v = 'c'; ROLLBACK");
    pgwt_expect_marker(other, lc, CH, "after-rollback");
    /* A rolled-back savepoint takes its statements' notifications along. */
    pgwt_exec(c, "BEGIN; INSERT INTO t VALUES (1, 'a'); SAVEPOINT s; "
                 "INSERT INTO t VALUES (2, 'b'); ROLLBACK TO SAVEPOINT s; "
                 "INSERT INTO t VALUES (3, 'c'); COMMIT");
    pgwt_expect_write(lc, ins1);
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"t\",\"op\":\"insert\","
                          "\"ids\":[\"3\"],\"ids_truncated\":false,\"columns\":null,"
                          "\"columns_truncated\":false,\"pk_changed\":false}");
    pgwt_expect_marker(other, lc, CH, "end");
    PQfinish(other);
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

/* IDs and values are the columns' output text under fixed settings,
 * whatever the writer's session says: compared with what libpq returns
 * for the same rows read with those settings. */
START_TEST(text_forms_do_not_depend_on_the_session)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgwt_exec(c, "CREATE TYPE mood AS ENUM ('sad', 'ok'); "
                 "CREATE DOMAIN code AS text; CREATE DOMAIN flag AS bool; "
                 "CREATE DOMAIN moment AS timestamptz; "
                 "CREATE TABLE ty (b bool, d date, ts timestamptz, ch char(4), u uuid, "
                 "  t timestamp, tm time, tz timetz, "
                 "  f8 float8, nu numeric, iv interval, by bytea, e mood, s text, cd code, "
                 "  j json, arr int[], fl flag, mo moment, "
                 "  PRIMARY KEY (b, d, ts, ch, u, t, tm, tz))");
    static const char *const VALS[] = {"f8", "nu", "iv", "by", "e", "s", "cd", "j", "arr",
                                       "b", "ts", "fl", "mo", "no_such_column"};
    watch(c, "ty", VALS, sizeof VALS / sizeof VALS[0]);
    /* A writer whose every print setting differs from the fixed ones. */
    pgwt_exec(c, "SET TimeZone = 'America/New_York'; SET DateStyle = 'SQL, DMY'; "
                 "SET IntervalStyle = 'sql_standard'; SET extra_float_digits = -3; "
                 "SET bytea_output = 'escape'");
    pgwt_exec(c, "INSERT INTO ty VALUES (true, '2024-02-29', '2024-03-01 12:34:56.789+05:30', "
                 "'ab', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '1999-12-31 23:59:59.5', "
                 "'10:11:12', '10:11:12+02', 0.1, 1.50, '1 day -02:03:04', '\\x00ff41', "
                 "'ok', E'q\"uo\\\\te é 😀', 'X', '{\"a\": 1}', '{1,2}', false, "
                 "'2000-01-01 00:00:00+01')");
    char *p = pgwt_next_payload(lc, 5000, NULL);
    ck_assert_ptr_nonnull(p);
    int fb = -1;
    char *got = pgwt_write_json(p, &fb);
    ck_assert_int_eq(fb, PGW_OK);
    /* What a host reads with the documented settings. */
    PGconn *h = pgwt_connect_opts("options='-c TimeZone=UTC -c DateStyle=ISO,YMD "
                                  "-c IntervalStyle=postgres -c extra_float_digits=1 "
                                  "-c bytea_output=hex'");
    ck_assert_ptr_nonnull(h);
    PGresult *r = PQexec(h, "SELECT b, d, ts, ch, u, t, tm, tz, f8, nu, iv, by, e, s, cd FROM ty");
    ck_assert_int_eq(PQresultStatus(r), PGRES_TUPLES_OK);
    char want[4096];
#define V(i) PQgetvalue(r, 0, i)
    /* JSON strings of the host's texts (format('%s') prints with the
     * output function, as libpq receives it: 't', not 'true'). */
    char sql[1024];
    snprintf(sql, sizeof sql,
             "SELECT concat_ws(',', to_json(format('%%s', b)), to_json(format('%%s', d)), "
             "to_json(format('%%s', ts)), to_json(format('%%s', ch)), to_json(format('%%s', u)), "
             "to_json(format('%%s', t)), to_json(format('%%s', tm)), to_json(format('%%s', tz))) "
             "FROM ty");
    PGresult *ids = PQexec(h, sql);
    ck_assert_int_eq(PQresultStatus(ids), PGRES_TUPLES_OK);
    snprintf(sql, sizeof sql,
             "SELECT concat_ws(',', '\"b\":' || to_json(format('%%s', b)), "
             "'\"ts\":' || to_json(format('%%s', ts)), '\"f8\":' || to_json(format('%%s', f8)), "
             "'\"nu\":' || to_json(format('%%s', nu)), '\"iv\":' || to_json(format('%%s', iv)), "
             "'\"by\":' || to_json(format('%%s', by)), '\"e\":' || to_json(format('%%s', e)), "
             "'\"s\":' || to_json(s), '\"cd\":' || to_json(format('%%s', cd)), "
             "'\"fl\":' || to_json(format('%%s', fl)), '\"mo\":' || to_json(format('%%s', mo))) "
             "FROM ty");
    PGresult *vals = PQexec(h, sql);
    ck_assert_int_eq(PQresultStatus(vals), PGRES_TUPLES_OK);
    snprintf(want, sizeof want,
             "\"schema\":\"public\",\"table\":\"ty\",\"op\":\"insert\",\"ids\":[[%s]],"
             "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
             "\"new\":[{%s}],\"pk_changed\":false}",
             PQgetvalue(ids, 0, 0), PQgetvalue(vals, 0, 0));
    ck_assert_msg(strcmp(got, want) == 0, "\n  got:  %.1500s\n  want: %.1500s", got, want);
    /* Spot checks against literal texts, so the test does not only compare
     * the server with itself. */
    ck_assert_str_eq(V(0), "t");
    ck_assert_str_eq(V(1), "2024-02-29");
    ck_assert_str_eq(V(2), "2024-03-01 07:04:56.789+00");
    ck_assert_str_eq(V(3), "ab  ");
    ck_assert_str_eq(V(5), "1999-12-31 23:59:59.5");
    ck_assert_str_eq(V(7), "10:11:12+02");
    ck_assert_str_eq(V(8), "0.1");
    ck_assert_str_eq(V(9), "1.50");
    ck_assert_str_eq(V(10), "1 day -02:03:04");
    ck_assert_str_eq(V(11), "\\x00ff41");
    ck_assert_msg(strstr(got, "[[\"t\",\"2024-02-29\",\"2024-03-01 07:04:56.789+00\",\"ab  \",") != NULL,
                  "%s", got);
    ck_assert_msg(strstr(got, "\"s\":\"q\\\"uo\\\\te é 😀\"") != NULL, "%s", got);
    ck_assert_msg(strstr(got, "\"fl\":\"f\",\"mo\":\"1999-12-31 23:00:00+00\"}") != NULL, "%s", got);
#undef V
    PQclear(ids);
    PQclear(vals);
    PQclear(r);
    /* An update: unchanged key columns pair the rows; a change in the
     * 17th significant digit of a float is a change (the writer's
     * extra_float_digits = -3 does not round it away). */
    /* The general path (value columns) pins the print settings for its own
     * duration: the writer's are its own again right after the statement,
     * inside its transaction as after it. */
    static const char *const SHOW =
        "SELECT concat_ws('|', current_setting('TimeZone'), current_setting('DateStyle'), "
        "current_setting('IntervalStyle'), current_setting('extra_float_digits'), "
        "current_setting('bytea_output'), current_setting('plan_cache_mode'), "
        "current_setting('enable_seqscan'), current_setting('search_path'))";
    static const char *const WRITER =
        "America/New_York|SQL, DMY|sql_standard|-3|escape|auto|on|\"$user\", public";
    pgwt_exec(c, "BEGIN; UPDATE ty SET f8 = f8 + 1e-17 * 2");
    char *settings = pgwt_value(c, SHOW);
    ck_assert_str_eq(settings, WRITER);
    free(settings);
    pgwt_exec(c, "COMMIT");
    settings = pgwt_value(c, SHOW);
    ck_assert_str_eq(settings, WRITER);
    free(settings);
    free(p);
    free(got);
    p = pgwt_next_payload(lc, 5000, NULL);
    ck_assert_ptr_nonnull(p);
    got = pgwt_write_json(p, &fb);
    ck_assert_msg(strstr(got, "\"columns\":[\"f8\"]") != NULL, "%s", got);
    char *f8 = pgwt_value(h, "SELECT f8 FROM ty");
    ck_assert_str_eq(f8, "0.10000000000000002");
    char f8json[64];
    snprintf(f8json, sizeof f8json, "\"f8\":\"%s\"", f8);
    ck_assert_msg(strstr(got, f8json) != NULL, "%s", got);
    free(f8);
    free(p);
    free(got);
    pgwt_expect_marker(c, lc, CH, "end");
    PQfinish(h);
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* bounds                                                               */

START_TEST(large_statements_degrade_and_commit)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgwt_exec(c, "CREATE TABLE big (id int PRIMARY KEY, v int, s text); "
                 "INSERT INTO big SELECT g, 0, 's' FROM generate_series(1, 10000) g");
    watch(c, "big", STATUS, 0);
    /* 10,000 rows: the IDs are left out (more than 500), the changed
     * columns still fit. The writer commits. */
    pgwt_exec(c, "UPDATE big SET v = v + 1");
    size_t len = pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"big\",\"op\":\"update\","
                                       "\"ids\":null,\"ids_truncated\":true,\"columns\":[\"v\"],"
                                       "\"columns_truncated\":false,\"pk_changed\":false}");
    ck_assert_uint_lt(len, 8000);
    ck_assert_int_eq(pgwt_int(c, "SELECT sum(v) FROM big"), 10000);
    /* 500 IDs are listed, 501 are not. */
    pgwt_exec(c, "UPDATE big SET v = 0 WHERE id <= 500");
    char *p = pgwt_next_payload(lc, 5000, NULL);
    ck_assert_ptr_nonnull(p);
    ck_assert_msg(strstr(p, "\"ids\":[\"1\",\"10\",\"100\",") != NULL, "%.200s", p);
    ck_assert_msg(strstr(p, "\"ids_truncated\":false") != NULL, "%.200s", p);
    ck_assert_uint_lt(strlen(p), 8000);
    int fb;
    char *w = pgwt_write_json(p, &fb);
    ck_assert_int_eq(fb, PGW_OK);
    free(w);
    free(p);
    pgwt_exec(c, "UPDATE big SET v = 7 WHERE id <= 501");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"big\",\"op\":\"update\","
                      "\"ids\":null,\"ids_truncated\":true,\"columns\":[\"v\"],"
                      "\"columns_truncated\":false,\"pk_changed\":false}");
    /* Inserts and deletes of 10,000 rows. */
    pgwt_exec(c, "DELETE FROM big");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"big\",\"op\":\"delete\","
                      "\"ids\":null,\"ids_truncated\":true,\"columns\":null,"
                      "\"columns_truncated\":false,\"pk_changed\":false}");
    pgwt_exec(c, "INSERT INTO big SELECT g, 0, 's' FROM generate_series(1, 10000) g");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"big\",\"op\":\"insert\","
                      "\"ids\":null,\"ids_truncated\":true,\"columns\":null,"
                      "\"columns_truncated\":false,\"pk_changed\":false}");
    pgwt_expect_marker(c, lc, CH, "end");
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

/* n columns named c<i> followed by `reps` times `fill` (SQL spelling of
 * the characters inside a quoted identifier). */
static void create_wide(PGconn *c, const char *table, int n, const char *fill, int reps)
{
    size_t size = (size_t)n * (8 + strlen(fill) * (size_t)reps + 24) + 256, len = 0;
    char *sql = malloc(size);
    ck_assert_ptr_nonnull(sql);
    len += (size_t)snprintf(sql + len, size - len, "CREATE TABLE %s (id int PRIMARY KEY", table);
    for (int i = 0; i < n; i++) {
        len += (size_t)snprintf(sql + len, size - len, ", \"c%03d", i);
        for (int k = 0; k < reps; k++)
            len += (size_t)snprintf(sql + len, size - len, "%s", fill);
        len += (size_t)snprintf(sql + len, size - len, "\" int DEFAULT 0");
    }
    len += (size_t)snprintf(sql + len, size - len,
                            "); INSERT INTO %s (id) SELECT generate_series(1, 3)", table);
    ck_assert_uint_lt(len, size);
    pgwt_exec(c, sql);
    free(sql);
}

static void update_all_columns(PGconn *c, const char *table)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "DO $$ BEGIN EXECUTE (SELECT 'UPDATE %s SET ' || string_agg(format('%%I = %%I + 1', "
             "attname, attname), ', ') FROM pg_attribute WHERE attrelid = '%s'::regclass AND "
             "attnum > 1 AND NOT attisdropped); END $$",
             table, table);
    pgwt_exec(c, sql);
}

START_TEST(hundred_columns_with_long_multibyte_names)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    create_wide(c, "w100", 100, "列", 19); /* names of 4 + 57 = 61 bytes */
    watch(c, "w100", NULL, 0);
    update_all_columns(c, "w100");
    char *p = pgwt_next_payload(lc, 5000, NULL);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_lt(strlen(p), 8000);
    int fb;
    char *w = pgwt_write_json(p, &fb);
    ck_assert_int_eq(fb, PGW_OK);
    /* All 100 names fit: the IDs and the columns are listed. */
    ck_assert_msg(strstr(w, "\"ids\":[\"1\",\"2\",\"3\"],\"ids_truncated\":false,"
                            "\"columns\":[\"c000列") != NULL, "%.300s", w);
    ck_assert_msg(strstr(w, "\"c099列列列列列列列列列列列列列列列列列列列\"],"
                            "\"columns_truncated\":false") != NULL, "%.300s", w);
    free(w);
    free(p);
    ck_assert_int_eq(pgwt_int(c, "SELECT sum(\"c099列列列列列列列列列列列列列列列列列列列\") FROM w100"), 3);
    /* 101 changed columns: more than 100, not listed. */
    create_wide(c, "w101", 101, "列", 19);
    watch(c, "w101", NULL, 0);
    update_all_columns(c, "w101");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"w101\",\"op\":\"update\","
                      "\"ids\":[\"1\",\"2\",\"3\"],\"ids_truncated\":false,\"columns\":null,"
                      "\"columns_truncated\":true,\"pk_changed\":false}");
    /* 100 names of 59 quote characters: each is 125 bytes in JSON, 100 of
     * them cannot fit. IDs go first, then the columns: the table-level
     * form. */
    create_wide(c, "wq", 100, "\"\"", 59);
    watch(c, "wq", NULL, 0);
    update_all_columns(c, "wq");
    size_t len = pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"wq\",\"op\":\"update\","
                                       "\"ids\":null,\"ids_truncated\":true,\"columns\":null,"
                                       "\"columns_truncated\":true,\"pk_changed\":false}");
    ck_assert_uint_lt(len, 8000);
    pgwt_expect_marker(c, lc, CH, "end");
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

START_TEST(byte_budget_rungs)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgwt_exec(c, "CREATE TABLE r (id text PRIMARY KEY, v text); "
                 "INSERT INTO r SELECT lpad(g::text, 3, '0'), repeat('é', 40) "
                 "FROM generate_series(1, 60) g");
    static const char *const V[] = {"v"};
    watch(c, "r", V, 1);
    /* 60 rows × two 80-byte values do not fit; without them, it does. */
    pgwt_exec(c, "UPDATE r SET v = v || 'x'");
    char *p = pgwt_next_payload(lc, 5000, NULL);
    ck_assert_ptr_nonnull(p);
    ck_assert_msg(strstr(p, "\"ids\":[\"001\",\"002\",") != NULL, "%.200s", p);
    ck_assert_msg(strstr(p, "\"old\"") == NULL && strstr(p, "\"new\"") == NULL, "%.200s", p);
    ck_assert_msg(strstr(p, "\"columns\":[\"v\"]") != NULL, "%.300s", p);
    free(p);
    /* 400 keys of 30 bytes: the IDs do not fit either. */
    pgwt_exec(c, "CREATE TABLE r2 (id text PRIMARY KEY, v int); "
                 "INSERT INTO r2 SELECT repeat('k', 26) || lpad(g::text, 4, '0'), 0 "
                 "FROM generate_series(1, 400) g");
    watch(c, "r2", V, 1);
    pgwt_exec(c, "UPDATE r2 SET v = 1");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"r2\",\"op\":\"update\","
                      "\"ids\":null,\"ids_truncated\":true,\"columns\":[\"v\"],"
                      "\"columns_truncated\":false,\"pk_changed\":false}");
    pgwt_expect_marker(c, lc, CH, "end");
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

/* In a LATIN1 database 'é' is one byte, in the UTF-8 the listener receives
 * two: the payload fits both. */
START_TEST(byte_budget_in_a_single_byte_database)
{
    PGconn *admin = pgwt_connect_opts("dbname=postgres");
    ck_assert_ptr_nonnull(admin);
    char db[96], sql[512];
    snprintf(db, sizeof db, "%s_latin1", pgwt_dbname());
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS \"%s\"", db);
    pgwt_exec(admin, sql);
    snprintf(sql, sizeof sql, "CREATE DATABASE \"%s\" ENCODING 'LATIN1' LC_COLLATE 'C' "
                              "LC_CTYPE 'C' TEMPLATE template0", db);
    pgwt_exec(admin, sql);
    snprintf(sql, sizeof sql, "dbname=%s", db);
    PGconn *c = pgwt_connect_opts(sql);
    ck_assert_ptr_nonnull(c);
    pgwt_exec(c, "SET client_encoding = 'UTF8'");
    PGconn *lc = pgwt_connect_opts(sql);
    ck_assert_ptr_nonnull(lc);
    pgwt_exec(lc, "SET client_encoding = 'UTF8'; LISTEN pgwitness");
    pgw_error err;
    ck_assert_int_eq(pgw_pq_install(NULL, c, NULL, &err), PGW_OK);
    /* 100 rows with values of 26 'é' on each side: 1 byte each in LATIN1,
     * 2 in UTF-8. */
    pgwt_exec(c, "CREATE TABLE l (id int PRIMARY KEY, v text); "
                 "INSERT INTO l SELECT g, repeat('é', 25) FROM generate_series(1, 100) g");
    pgw_pq_watch_options o = PGW_PQ_WATCH_OPTIONS_INIT;
    static const char *const V[] = {"v"};
    o.value_columns = V;
    o.n_value_columns = 1;
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "l", &o, &err), PGW_OK);
    pgwt_exec(c, "UPDATE l SET v = v || 'é'");
    /* The full payload would be, in LATIN1: the head (~100 bytes), 100
     * IDs "1".."100" (491 bytes), ,"columns":["v"] and the flags (~80),
     * and 200 objects {"v":"<26 é>"} (34 bytes each, with commas and the
     * two array keys ~7020): under 8000. In UTF-8 each é is one byte more:
     * 5200 more, over 8000. The trigger counts both. */
    size_t latin1 = 100 + 491 + 80 + 200 * 34 + 198 + 18;
    ck_assert_uint_lt(latin1, 8000);
    ck_assert_uint_gt(latin1 + 200 * 26, 8000);
    char *p = pgwt_next_payload(lc, 5000, NULL);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_lt(strlen(p), 8000);
    ck_assert_msg(strstr(p, "\"old\"") == NULL, "values dropped: %.200s", p);
    ck_assert_msg(strstr(p, "\"ids\":[\"1\",\"10\",\"100\",") != NULL, "%.200s", p);
    free(p);
    PQfinish(lc);
    PQfinish(c);
    snprintf(sql, sizeof sql, "DROP DATABASE \"%s\" WITH (FORCE)", db);
    pgwt_exec(admin, sql);
    PQfinish(admin);
}
END_TEST

/* ------------------------------------------------------------------ */
/* never fail the writer                                                */

START_TEST(failures_never_reach_the_writer)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    /* A column whose JSON form fails: to_json uses a type's own cast to
     * json, and this one divides by zero. */
    pgwt_exec(c, "CREATE TYPE bad AS ENUM ('x'); "
                 "CREATE FUNCTION bad_json(bad) RETURNS json LANGUAGE sql AS "
                 "$$ SELECT (1 / (length($1::text) - 1))::text::json $$; "
                 "CREATE CAST (bad AS json) WITH FUNCTION bad_json(bad); "
                 "CREATE TABLE b (id int PRIMARY KEY, v bad)");
    watch(c, "b", NULL, 0);
    pgwt_exec(c, "INSERT INTO b VALUES (1, 'x')");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"b\",\"op\":\"insert\","
                      "\"ids\":null,\"ids_truncated\":true,\"columns\":null,"
                      "\"columns_truncated\":true,\"pk_changed\":false}");
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM b"), 1);
    /* Triggers whose arguments make pg_notify itself fail (no channel; a
     * channel too long): nothing is sent, the writer commits. */
    pgwt_exec(c, "CREATE TABLE n (id int PRIMARY KEY); "
                 "CREATE TRIGGER x AFTER INSERT ON n REFERENCING NEW TABLE AS pgw_new "
                 "FOR EACH STATEMENT EXECUTE PROCEDURE pgwitness.notify_statement(); "
                 "CREATE TRIGGER y AFTER INSERT ON n REFERENCING NEW TABLE AS pgw_new "
                 "FOR EACH STATEMENT EXECUTE PROCEDURE pgwitness.notify_statement("
                 "'a_channel_name_that_is_much_longer_than_the_sixty_three_bytes_allowed')");
    pgwt_exec(c, "INSERT INTO n VALUES (1)");
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM n"), 1);
    pgwt_expect_marker(c, lc, CH, "end");
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

/* Writers need no privilege on the library's schema. */
START_TEST(writers_need_no_privilege_on_the_library)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgwt_exec(c, "SET client_min_messages = warning; DROP ROLE IF EXISTS pgwt_writer; "
                 "CREATE ROLE pgwt_writer LOGIN; RESET client_min_messages; "
                 "REVOKE ALL ON SCHEMA pgwitness FROM PUBLIC; "
                 "CREATE TABLE t (id int PRIMARY KEY, v text); "
                 "GRANT INSERT, UPDATE, SELECT ON t TO pgwt_writer");
    watch(c, "t", NULL, 0);
    PGconn *wc = pgwt_connect_opts("user=pgwt_writer");
    ck_assert_ptr_nonnull(wc);
    pgwt_exec(wc, "INSERT INTO t VALUES (1, 'a')");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"t\",\"op\":\"insert\","
                      "\"ids\":[\"1\"],\"ids_truncated\":false,\"columns\":null,"
                      "\"columns_truncated\":false,\"pk_changed\":false}");
    PQfinish(wc);
    pgwt_exec(c, "DROP TABLE t; DROP ROLE pgwt_writer");
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* watch and unwatch                                                    */

/* The OIDs of t's four triggers, in name order, as one text. */
static void trigger_oids(PGconn *c, char *out, size_t size)
{
    PGresult *r = PQexec(c, "SELECT string_agg(oid::text, ',' ORDER BY tgname) FROM pg_trigger "
                            "WHERE tgrelid = 'public.t'::regclass AND tgname LIKE 'pgwitness\\_%'");
    ck_assert_int_eq(PQresultStatus(r), PGRES_TUPLES_OK);
    snprintf(out, size, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
}

START_TEST(watch_is_idempotent_and_reconfigurable)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE t (id int PRIMARY KEY, status text, v text)");
    watch(c, "t", NULL, 0);
    char first[256], again[256];
    trigger_oids(c, first, sizeof first);
    /* The same watch again changes nothing: the triggers stay, no lock is
     * taken (a session holding the table in ACCESS SHARE does not hold it up:
     * the watch runs under a lock_timeout that would expire). */
    PGconn *reader = pgwt_connect();
    pgwt_exec(reader, "BEGIN; LOCK TABLE t IN ACCESS SHARE MODE");
    pgwt_exec(c, "SET lock_timeout = '200ms'");
    watch(c, "t", NULL, 0);
    pgwt_exec(c, "RESET lock_timeout");
    pgwt_exec(reader, "ROLLBACK");
    PQfinish(reader);
    trigger_oids(c, again, sizeof again);
    ck_assert_str_eq(again, first);
    ck_assert_int_eq(n_triggers(c, "t"), 4);
    /* A disabled trigger, other value columns, another key: made anew. */
    pgwt_exec(c, "ALTER TABLE t DISABLE TRIGGER pgwitness_update");
    watch(c, "t", NULL, 0);
    trigger_oids(c, again, sizeof again);
    ck_assert_str_ne(again, first);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 't'::regclass "
                                 "AND tgname LIKE 'pgwitness\\_%' AND tgenabled = 'O'"), 4);
    snprintf(first, sizeof first, "%s", again);
    watch(c, "t", STATUS, 1);
    trigger_oids(c, again, sizeof again);
    ck_assert_str_ne(again, first);
    snprintf(first, sizeof first, "%s", again);
    watch(c, "t", STATUS, 1);
    trigger_oids(c, again, sizeof again);
    ck_assert_str_eq(again, first);
    pgwt_exec(c, "ALTER TABLE t DROP CONSTRAINT t_pkey; ALTER TABLE t ADD PRIMARY KEY (v)");
    watch(c, "t", STATUS, 1);
    trigger_oids(c, again, sizeof again);
    ck_assert_str_ne(again, first);
    pgwt_exec(c, "ALTER TABLE t DROP CONSTRAINT t_pkey; ALTER TABLE t ADD PRIMARY KEY (id)");
    watch(c, "t", NULL, 0);
    ck_assert_int_eq(n_triggers(c, "t"), 4);
    /* A new channel and value columns replace the old ones. */
    PGconn *lc = pgwt_listen("other");
    pgw_pq_watch_options o = PGW_PQ_WATCH_OPTIONS_INIT;
    o.channel = "other";
    o.value_columns = STATUS;
    o.n_value_columns = 1;
    pgw_error err;
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", &o, &err), PGW_OK);
    ck_assert_int_eq(n_triggers(c, "t"), 4);
    pgwt_exec(c, "INSERT INTO t VALUES (1, 'open', 'x')");
    char *chan = NULL;
    char *p = pgwt_next_payload(lc, 5000, &chan);
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(chan, "other");
    ck_assert_msg(strstr(p, "\"new\":[{\"status\":\"open\"}]") != NULL, "%s", p);
    free(chan);
    free(p);
    bool dropped = false;
    ck_assert_int_eq(pgw_pq_unwatch_table(&dropped, c, "public", "t", &err), PGW_OK);
    ck_assert(dropped);
    ck_assert_int_eq(n_triggers(c, "t"), 0);
    dropped = true;
    ck_assert_int_eq(pgw_pq_unwatch_table(&dropped, c, "public", "t", &err), PGW_OK);
    ck_assert(!dropped);
    ck_assert_int_eq(pgw_pq_unwatch_table(NULL, c, "public", "t", &err), PGW_OK);
    pgwt_exec(c, "INSERT INTO t VALUES (2, 'open', 'x')");
    pgwt_expect_marker(c, lc, "other", "after-unwatch");
    /* Quoted, case-sensitive names. */
    pgwt_exec(c, "CREATE SCHEMA \"My Schema\"; "
                 "CREATE TABLE \"My Schema\".\"Odd \"\"Table\" (\"Id\" int PRIMARY KEY)");
    ck_assert_int_eq(pgw_pq_watch_table(c, "My Schema", "Odd \"Table", &o, &err), PGW_OK);
    pgwt_exec(c, "INSERT INTO \"My Schema\".\"Odd \"\"Table\" VALUES (5)");
    p = pgwt_next_payload(lc, 5000, NULL);
    ck_assert_ptr_nonnull(p);
    ck_assert_str_eq(p, "{\"version\":1,\"schema\":\"My Schema\",\"table\":\"Odd \\\"Table\","
                        "\"op\":\"insert\",\"ids\":[\"5\"],\"ids_truncated\":false,"
                        "\"columns\":null,\"columns_truncated\":false,"
                        "\"pk_changed\":false}");
    free(p);
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

START_TEST(watch_inside_a_transaction)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgw_error err;
    /* Created, watched and written in one transaction. */
    pgwt_exec(c, "BEGIN; CREATE TABLE t (id int PRIMARY KEY)");
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", NULL, &err), PGW_OK);
    ck_assert_int_eq(PQtransactionStatus(c), PQTRANS_INTRANS);
    pgwt_exec(c, "INSERT INTO t VALUES (1); COMMIT");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"t\",\"op\":\"insert\","
                      "\"ids\":[\"1\"],\"ids_truncated\":false,\"columns\":null,"
                      "\"columns_truncated\":false,\"pk_changed\":false}");
    /* A failure inside the caller's transaction leaves it usable. */
    pgwt_exec(c, "BEGIN; INSERT INTO t VALUES (2)");
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "missing", NULL, &err), PGW_ENOTFOUND);
    ck_assert_str_eq(err.message, "no table public.missing");
    ck_assert_int_eq(PQtransactionStatus(c), PQTRANS_INTRANS);
    pgwt_exec(c, "INSERT INTO t VALUES (3); COMMIT");
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM t"), 3);
    /* In a failed transaction: refused, nothing run. */
    pgwt_exec(c, "BEGIN");
    PQclear(PQexec(c, "SELECT 1 / 0"));
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", NULL, &err), PGW_ESTATE);
    ck_assert_int_eq(pgw_pq_unwatch_table(NULL, c, "public", "t", &err), PGW_ESTATE);
    pgwt_exec(c, "ROLLBACK");
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

/* A second session's watch or unwatch, run in a thread while the test
 * holds the table's watch lock in an open transaction. */
typedef struct other_call {
    bool unwatch;
    int rc;
    bool removed;
    pgw_error err;
} other_call;

static void *other_session(void *arg)
{
    other_call *oc = arg;
    PGconn *c = pgwt_connect();
    oc->rc = oc->unwatch ? pgw_pq_unwatch_table(&oc->removed, c, "public", "t", &oc->err)
                         : pgw_pq_watch_table(c, "public", "t", NULL, &oc->err);
    PQfinish(c);
    return NULL;
}

/* Until a session waits for an advisory lock (the watch lock). */
static void wait_for_advisory_waiter(PGconn *c)
{
    for (int i = 0; i < 500; i++) {
        if (pgwt_int(c, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' "
                        "AND NOT granted") == 1)
            return;
        usleep(10000);
    }
    ck_abort_msg("no session waited for the watch lock");
}

START_TEST(concurrent_watch_and_unwatch_serialize)
{
    /* Two first-time watches at once: the second waits for the first's
     * transaction, then sees its triggers and replaces them (before the
     * watch lock it read none and failed: "trigger already exists"). */
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgw_error err;
    pgwt_exec(c, "CREATE TABLE t (id int PRIMARY KEY)");
    pgwt_exec(c, "BEGIN");
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", NULL, &err), PGW_OK);
    other_call oc = {false, 1, false, {0}};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, other_session, &oc), 0);
    wait_for_advisory_waiter(c);
    pgwt_exec(c, "COMMIT");
    pthread_join(th, NULL);
    ck_assert_msg(oc.rc == PGW_OK, "%d %s", oc.rc, oc.err.message);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 't'::regclass"),
                     4);
    pgwt_exec(c, "INSERT INTO t VALUES (1)");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"t\",\"op\":\"insert\","
                      "\"ids\":[\"1\"],\"ids_truncated\":false,\"columns\":null,"
                      "\"columns_truncated\":false,\"pk_changed\":false}");
    /* Two unwatches at once: the second finds nothing left to drop. */
    pgwt_exec(c, "BEGIN");
    bool removed = false;
    ck_assert_int_eq(pgw_pq_unwatch_table(&removed, c, "public", "t", &err), PGW_OK);
    ck_assert(removed);
    other_call ou = {true, 1, true, {0}};
    ck_assert_int_eq(pthread_create(&th, NULL, other_session, &ou), 0);
    wait_for_advisory_waiter(c);
    pgwt_exec(c, "COMMIT");
    pthread_join(th, NULL);
    ck_assert_msg(ou.rc == PGW_OK, "%d %s", ou.rc, ou.err.message);
    ck_assert(!ou.removed);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 't'::regclass"),
                     0);
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

START_TEST(triggers_of_the_same_name_that_are_not_ours)
{
    /* The owner's trigger named like ours: watch refuses and changes
     * nothing; unwatch leaves it. */
    PGconn *c = setup();
    pgw_error err;
    pgwt_exec(c, "CREATE TABLE t (id int PRIMARY KEY); "
                 "CREATE FUNCTION userfn() RETURNS trigger LANGUAGE plpgsql AS "
                 "$$ BEGIN RETURN NULL; END $$; "
                 "CREATE TRIGGER pgwitness_update AFTER UPDATE ON t "
                 "FOR EACH STATEMENT EXECUTE PROCEDURE userfn()");
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", NULL, &err), PGW_EEXISTS);
    ck_assert_str_eq(err.message, "public.t has a trigger pgwitness_update (it calls userfn()) "
                                  "that pgwitness did not create: rename or drop it to watch "
                                  "the table");
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 't'::regclass"),
                     1);
    bool removed = true;
    ck_assert_int_eq(pgw_pq_unwatch_table(&removed, c, "public", "t", &err), PGW_OK);
    ck_assert(!removed);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 't'::regclass "
                                 "AND tgname = 'pgwitness_update'"),
                     1);
    /* Renamed out of the way, the table is watched; unwatch then drops
     * ours and leaves the owner's. */
    pgwt_exec(c, "ALTER TRIGGER pgwitness_update ON t RENAME TO owners");
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_unwatch_table(&removed, c, "public", "t", &err), PGW_OK);
    ck_assert(removed);
    char *v = pgwt_value(c, "SELECT string_agg(tgname, ',') FROM pg_trigger "
                            "WHERE tgrelid = 't'::regclass");
    ck_assert_str_eq(v, "owners");
    free(v);
    PQfinish(c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* silenced triggers; two-phase commit                                  */

static long long n_enabled(PGconn *c, const char *table, char mode)
{
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'public.%s'::regclass "
             "AND tgname LIKE 'pgwitness\\_%%' AND tgenabled = '%c'",
             table, mode);
    return pgwt_int(c, sql);
}

static void watch_always(PGconn *c, const char *table, bool always)
{
    pgw_pq_watch_options o = PGW_PQ_WATCH_OPTIONS_INIT;
    o.enable_always = always;
    pgw_error err;
    pgw_error_clear(&err);
    ck_assert_msg(pgw_pq_watch_table(c, "public", table, &o, &err) == PGW_OK, "watch %s: %s",
                  table, err.message);
}

#define T_INSERT(id)                                                                         \
    "\"schema\":\"public\",\"table\":\"t\",\"op\":\"insert\",\"ids\":[\"" id "\"],"          \
    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"                  \
    "\"pk_changed\":false}"

/* The triggers below a watched table take its firing mode: a partition's
 * and an inheritance child's triggers are ENABLE ALWAYS with the option,
 * and plain again without it. */
START_TEST(enable_always_covers_descendants)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgwt_exec(c, "CREATE TABLE t (id int PRIMARY KEY, status text) PARTITION BY RANGE (id); "
                 "CREATE TABLE t1 PARTITION OF t FOR VALUES FROM (0) TO (100); "
                 "CREATE TABLE h (id int PRIMARY KEY); CREATE TABLE h1 () INHERITS (h)");
    watch_always(c, "t", true);
    watch_always(c, "h", true);
    ck_assert_int_eq(n_enabled(c, "t", 'A'), 4);
    ck_assert_int_eq(n_enabled(c, "t1", 'A'), 4);
    ck_assert_int_eq(n_enabled(c, "h1", 'A'), 4);
    /* Straight into the partition, and into the child, under replica. */
    pgwt_exec(c, "SET session_replication_role = replica; INSERT INTO t1 VALUES (5, 'a')");
    pgwt_expect_write(lc, T_INSERT("5"));
    pgwt_exec(c, "INSERT INTO h1 VALUES (6); RESET session_replication_role");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"h\",\"op\":\"insert\","
                          "\"ids\":[\"6\"],\"ids_truncated\":false,\"columns\":null,"
                          "\"columns_truncated\":false,\"pk_changed\":false}");
    /* Again with the option: nothing below changes. */
    char *before = pgwt_value(c, "SELECT string_agg(oid::text, ',' ORDER BY oid) FROM pg_trigger "
                                 "WHERE tgname LIKE 'pgwitness\\_%'");
    watch_always(c, "t", true);
    char *after = pgwt_value(c, "SELECT string_agg(oid::text, ',' ORDER BY oid) FROM pg_trigger "
                                "WHERE tgname LIKE 'pgwitness\\_%'");
    ck_assert_str_eq(after, before);
    free(after);
    /* Without it: plain below too (the same triggers, altered), and silent
     * under replica again. */
    watch_always(c, "t", false);
    ck_assert_int_eq(n_enabled(c, "t", 'O'), 4);
    ck_assert_int_eq(n_enabled(c, "t1", 'O'), 4);
    ck_assert_int_eq(n_enabled(c, "h1", 'A'), 4); /* h's watch is unchanged */
    after = pgwt_value(c, "SELECT string_agg(oid::text, ',' ORDER BY oid) FROM pg_trigger "
                          "WHERE tgname LIKE 'pgwitness\\_%'");
    ck_assert_str_eq(after, before);
    free(before);
    free(after);
    pgwt_exec(c, "SET session_replication_role = replica; INSERT INTO t1 VALUES (7, 'a'); "
                 "RESET session_replication_role");
    pgwt_expect_marker(c, lc, CH, "replica, plain below");
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

/* session_replication_role = replica silences plain triggers, not ENABLE
 * ALWAYS ones; DISABLE TRIGGER USER silences both; watching again sets the
 * mode asked, without recreating or locking what is already right. */
START_TEST(enable_always_fires_under_replica_role)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgwt_exec(c, "CREATE TABLE t (id int PRIMARY KEY, status text)");
    watch(c, "t", NULL, 0);
    ck_assert_int_eq(n_enabled(c, "t", 'O'), 4);
    pgwt_exec(c, "SET session_replication_role = replica; INSERT INTO t VALUES (1, 'a'); "
                 "UPDATE t SET status = 'b'; DELETE FROM t; TRUNCATE t; "
                 "RESET session_replication_role");
    pgwt_expect_marker(c, lc, CH, "replica, plain triggers");
    watch_always(c, "t", true);
    ck_assert_int_eq(n_enabled(c, "t", 'A'), 4);
    pgwt_exec(c, "SET session_replication_role = replica; INSERT INTO t VALUES (2, 'a')");
    pgwt_expect_write(lc, T_INSERT("2"));
    pgwt_exec(c, "TRUNCATE t; RESET session_replication_role");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"t\",\"op\":\"truncate\","
                          "\"ids\":null,\"ids_truncated\":false,\"columns\":null,"
                          "\"columns_truncated\":false,\"pk_changed\":false}");
    pgwt_exec(c, "INSERT INTO t VALUES (3, 'a')"); /* and in the origin role */
    pgwt_expect_write(lc, T_INSERT("3"));
    /* Again with the option: nothing changes, no lock is taken. */
    char first[256], again[256];
    trigger_oids(c, first, sizeof first);
    PGconn *reader = pgwt_connect();
    pgwt_exec(reader, "BEGIN; LOCK TABLE t IN ACCESS SHARE MODE");
    pgwt_exec(c, "SET lock_timeout = '200ms'");
    watch_always(c, "t", true);
    pgwt_exec(c, "RESET lock_timeout");
    pgwt_exec(reader, "ROLLBACK");
    PQfinish(reader);
    trigger_oids(c, again, sizeof again);
    ck_assert_str_eq(again, first);
    /* Without it: back to plain ENABLE (the same triggers, altered). */
    watch_always(c, "t", false);
    ck_assert_int_eq(n_enabled(c, "t", 'O'), 4);
    trigger_oids(c, again, sizeof again);
    ck_assert_str_eq(again, first);
    pgwt_exec(c, "SET session_replication_role = replica; INSERT INTO t VALUES (4, 'a'); "
                 "RESET session_replication_role");
    pgwt_expect_marker(c, lc, CH, "replica, plain again");
    /* DISABLE TRIGGER USER silences ALWAYS triggers too, in every role. */
    watch_always(c, "t", true);
    pgwt_exec(c, "ALTER TABLE t DISABLE TRIGGER USER");
    ck_assert_int_eq(n_enabled(c, "t", 'D'), 4);
    pgwt_exec(c, "INSERT INTO t VALUES (5, 'a'); SET session_replication_role = replica; "
                 "INSERT INTO t VALUES (6, 'a'); RESET session_replication_role");
    pgwt_expect_marker(c, lc, CH, "disabled");
    /* listed as a gap of its own while disabled */
    pgw_pq_watch_gap *gaps = NULL;
    size_t n_gaps = 0;
    pgw_error gerr;
    ck_assert_int_eq(pgw_pq_watch_gaps(&gaps, &n_gaps, c, NULL, &gerr), PGW_OK);
    ck_assert_uint_eq(n_gaps, 1);
    ck_assert_str_eq(gaps[0].table, "t");
    ck_assert_str_eq(gaps[0].watched_table, "t");
    ck_assert_str_eq(gaps[0].source, "triggers");
    pgw_free(gaps);
    watch_always(c, "t", true); /* made anew, ALWAYS */
    ck_assert_int_eq(pgw_pq_watch_gaps(&gaps, &n_gaps, c, NULL, &gerr), PGW_OK);
    ck_assert_uint_eq(n_gaps, 0);
    pgw_free(gaps);
    ck_assert_int_eq(n_enabled(c, "t", 'A'), 4);
    pgwt_exec(c, "SET session_replication_role = replica; INSERT INTO t VALUES (7, 'a'); "
                 "RESET session_replication_role");
    pgwt_expect_write(lc, T_INSERT("7"));
    /* ENABLE TRIGGER ALL (what a data-only pg_restore --disable-triggers
     * runs after the data) makes them plain again. */
    pgwt_exec(c, "ALTER TABLE t DISABLE TRIGGER ALL; ALTER TABLE t ENABLE TRIGGER ALL");
    ck_assert_int_eq(n_enabled(c, "t", 'O'), 4);
    /* Version 1 options have no enable_always: plain ENABLE. */
    watch_always(c, "t", true);
    pgw_pq_watch_options v1 = PGW_PQ_WATCH_OPTIONS_INIT;
    v1.version = 1;
    v1.enable_always = true; /* not a member of a version 1 struct: not read */
    pgw_error err;
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", &v1, &err), PGW_OK);
    ck_assert_int_eq(n_enabled(c, "t", 'O'), 4);
    /* ALTER TABLE needs the owner: a role with the TRIGGER privilege may
     * watch, not with enable_always; nothing is changed then. */
    pgwt_exec(c, "SET client_min_messages = warning; DROP ROLE IF EXISTS pgwt_trigger_only; "
                 "CREATE ROLE pgwt_trigger_only LOGIN; RESET client_min_messages; "
                 "CREATE TABLE u (id int PRIMARY KEY); GRANT TRIGGER ON u TO pgwt_trigger_only; "
                 "GRANT USAGE ON SCHEMA pgwitness TO pgwt_trigger_only");
    PGconn *nc = pgwt_connect_opts("user=pgwt_trigger_only");
    ck_assert_ptr_nonnull(nc);
    watch_always(nc, "u", false);
    ck_assert_int_eq(n_enabled(c, "u", 'O'), 4);
    pgw_pq_watch_options o = PGW_PQ_WATCH_OPTIONS_INIT;
    o.enable_always = true;
    ck_assert_int_eq(pgw_pq_watch_table(nc, "public", "u", &o, &err), PGW_EPG);
    ck_assert_str_eq(err.sqlstate, "42501");
    ck_assert_msg(strstr(err.message, "must be owner of table u") != NULL, "%s", err.message);
    ck_assert_int_eq(PQtransactionStatus(nc), PQTRANS_IDLE);
    ck_assert_int_eq(n_enabled(c, "u", 'O'), 4);
    PQfinish(nc);
    pgwt_exec(c, "DROP TABLE u; REVOKE ALL ON SCHEMA pgwitness FROM pgwt_trigger_only; "
                 "DROP ROLE pgwt_trigger_only");
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

/* The server allows prepared transactions (the test cluster has 10): the
 * watch warns, and PREPARE TRANSACTION after a write to the watched table
 * fails with 0A000, the writer's transaction rolled back whole. */
START_TEST(prepared_transactions_warning)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    ck_assert_int_eq(pgwt_int(c, "SELECT current_setting('max_prepared_transactions')::int"),
                     10);
    pgwt_exec(c, "CREATE TABLE t (id int PRIMARY KEY, status text); "
                 "CREATE TABLE plain (id int PRIMARY KEY)");
    pgw_pq_watch_result res = PGW_PQ_WATCH_RESULT_INIT;
    pgw_pq_watch_options o = PGW_PQ_WATCH_OPTIONS_INIT;
    o.result = &res;
    pgw_error err;
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", &o, &err), PGW_OK);
    ck_assert_uint_eq(res.warnings, PGW_PQ_WATCH_WARN_PREPARED_TRANSACTIONS);
    ck_assert_int_eq(res.max_prepared_transactions, 10);
    ck_assert_str_eq(res.message, "max_prepared_transactions is 10: writers of watched tables "
                                  "cannot use PREPARE TRANSACTION (a NOTIFY cannot be "
                                  "prepared); watch them with the stream for two-phase commit");
    /* Filled on every success (the table is already watched), untouched on
     * failure. */
    memset(&res, 0x5a, sizeof res);
    res.version = PGW_PQ_WATCH_RESULT_VERSION;
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", &o, &err), PGW_OK);
    ck_assert_uint_eq(res.warnings, PGW_PQ_WATCH_WARN_PREPARED_TRANSACTIONS);
    ck_assert_int_eq(res.max_prepared_transactions, 10);
    res.warnings = 77;
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "nope", &o, &err), PGW_ENOTFOUND);
    ck_assert_uint_eq(res.warnings, 77);
    res.version = 9;
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", &o, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "watch options: result version 9 is not 1 (use "
                                  "PGW_PQ_WATCH_RESULT_INIT)");
    ck_assert_uint_eq(res.warnings, 77);
    /* What the warning is about, on the real server. */
    pgwt_exec(c, "BEGIN; INSERT INTO t VALUES (1, 'open')");
    PGresult *r = PQexec(c, "PREPARE TRANSACTION 'pgwt_watched'");
    ck_assert_int_eq(PQresultStatus(r), PGRES_FATAL_ERROR);
    ck_assert_str_eq(PQresultErrorField(r, PG_DIAG_SQLSTATE), "0A000");
    ck_assert_str_eq(PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY),
                     "cannot PREPARE a transaction that has executed LISTEN, UNLISTEN, or "
                     "NOTIFY");
    PQclear(r);
    /* The transaction is over, rolled back: no row, nothing prepared,
     * nothing sent. */
    ck_assert_int_eq(PQtransactionStatus(c), PQTRANS_IDLE);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM t"), 0);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_prepared_xacts"), 0);
    pgwt_expect_marker(c, lc, CH, "after the failed prepare");
    /* The same on a table that is not watched prepares and commits. */
    pgwt_exec(c, "BEGIN");
    pgwt_exec(c, "INSERT INTO plain VALUES (1)");
    pgwt_exec(c, "PREPARE TRANSACTION 'pgwt_plain'");
    pgwt_exec(c, "COMMIT PREPARED 'pgwt_plain'");
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM plain"), 1);
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

START_TEST(watch_refusals_and_bad_arguments)
{
    PGconn *c = setup();
    pgw_error err;
    pgwt_exec(c, "CREATE TABLE t (id int PRIMARY KEY); CREATE VIEW v AS SELECT * FROM t; "
                 "CREATE TABLE pt (id int, PRIMARY KEY (id)) PARTITION BY RANGE (id); "
                 "CREATE TABLE pt1 PARTITION OF pt FOR VALUES FROM (0) TO (10); "
                 "CREATE MATERIALIZED VIEW mv AS SELECT 1 AS x");
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "v", NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message,
                     "public.v is a view: only tables (ordinary or partitioned) can be watched");
    /* A partitioned table is watched with its partitions (issue 16); a
     * partition is refused, naming its root. */
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "pt", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "pt1", NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "public.pt1 is a partition of public.pt: watch public.pt, "
                                  "whose watch covers every partition below it");
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "mv", NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "nope", NULL, &err), PGW_ENOTFOUND);
    ck_assert_int_eq(pgw_pq_unwatch_table(NULL, c, "public", "nope", &err), PGW_ENOTFOUND);
    ck_assert_int_eq(pgw_pq_watch_table(c, "nope", "t", NULL, &err), PGW_ENOTFOUND);
    ck_assert_int_eq(n_triggers(c, "t"), 0);
    /* A library schema without the trigger function. */
    pgw_pq_watch_options o = PGW_PQ_WATCH_OPTIONS_INIT;
    o.pgw_schema = "not_installed";
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", &o, &err), PGW_ENOTFOUND);
    ck_assert_str_eq(err.message, "schema \"not_installed\" has no pgwitness trigger function "
                                  "(notify_statement): run pgw_pq_install() to install or "
                                  "upgrade it");
    ck_assert_int_eq(n_triggers(c, "t"), 0);
    /* Arguments. */
    ck_assert_int_eq(pgw_pq_watch_table(NULL, "public", "t", NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_watch_table(c, NULL, "t", NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "", NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t\xff", NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_unwatch_table(NULL, NULL, "public", "t", &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_unwatch_table(NULL, c, "", "t", &err), PGW_EINVAL);
    o = (pgw_pq_watch_options)PGW_PQ_WATCH_OPTIONS_INIT;
    o.version = 3;
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", &o, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "watch options version 3 is not 1 to 2 (use "
                                  "PGW_PQ_WATCH_OPTIONS_INIT)");
    o.version = 0;
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", &o, &err), PGW_EINVAL);
    o = (pgw_pq_watch_options)PGW_PQ_WATCH_OPTIONS_INIT;
    o.channel = "";
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", &o, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "channel name must be 1..63 bytes, not 0");
    o.channel = "0123456789012345678901234567890123456789012345678901234567890123";
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", &o, &err), PGW_EINVAL);
    o.channel = "012345678901234567890123456789012345678901234567890123456789012";
    static const char *const cols[PGW_PQ_MAX_VALUE_COLUMNS + 1] = {"a"};
    o.value_columns = cols;
    o.n_value_columns = PGW_PQ_MAX_VALUE_COLUMNS + 1;
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", &o, &err), PGW_EINVAL);
    o.n_value_columns = 2; /* cols[1] is NULL */
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", &o, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "watch options: value column 1 is NULL or empty");
    o.value_columns = NULL;
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", &o, &err), PGW_EINVAL);
    o.n_value_columns = 1;
    o.value_columns = cols;
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", &o, &err), PGW_OK);
    ck_assert_int_eq(n_triggers(c, "t"), 4);
    /* Without the TRIGGER privilege: PostgreSQL's error, nothing changed. */
    pgwt_exec(c, "SET client_min_messages = warning; DROP ROLE IF EXISTS pgwt_nobody; "
                 "CREATE ROLE pgwt_nobody LOGIN; RESET client_min_messages; "
                 "CREATE TABLE u (id int PRIMARY KEY)");
    PGconn *nc = pgwt_connect_opts("user=pgwt_nobody");
    ck_assert_ptr_nonnull(nc);
    ck_assert_int_eq(pgw_pq_watch_table(nc, "public", "u", NULL, &err), PGW_EPG);
    ck_assert_str_eq(err.sqlstate, "42501");
    ck_assert_int_eq(PQtransactionStatus(nc), PQTRANS_IDLE);
    PQfinish(nc);
    ck_assert_int_eq(n_triggers(c, "u"), 0);
    pgwt_exec(c, "DROP TABLE u; DROP ROLE pgwt_nobody");
    PQfinish(c);
}
END_TEST

/* A schema installed by an older release (version 1) is upgraded. */
START_TEST(install_upgrades_version_1)
{
    PGconn *c = setup();
    pgw_error err;
    int v = 0;
    ck_assert_int_eq(pgw_pq_install(&v, c, "pgw_up", &err), PGW_OK);
    pgwt_exec(c, "DROP FUNCTION pgw_up.notify_statement(); "
                 "DELETE FROM pgw_up.schema_version WHERE version >= 2; "
                 "DROP TABLE pgw_up.stream_tables, pgw_up.slots; "
                 "CREATE TABLE t (id int PRIMARY KEY)");
    ck_assert_int_eq(pgw_pq_schema_version(&v, c, "pgw_up", &err), PGW_OK);
    ck_assert_int_eq(v, 1);
    pgw_pq_watch_options o = PGW_PQ_WATCH_OPTIONS_INIT;
    o.pgw_schema = "pgw_up";
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", &o, &err), PGW_ENOTFOUND);
    ck_assert_int_eq(pgw_pq_install(&v, c, "pgw_up", &err), PGW_OK);
    ck_assert_int_eq(v, PGW_PQ_SCHEMA_VERSION);
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", &o, &err), PGW_OK);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_trigger WHERE tgfoid = "
                                 "'pgw_up.notify_statement()'::regprocedure"),
                     4);
    PQfinish(c);
}
END_TEST

START_TEST(watch_allocation_failures)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE t (id int PRIMARY KEY)");
    pgw_pq_watch_options o = PGW_PQ_WATCH_OPTIONS_INIT;
    o.value_columns = STATUS;
    o.n_value_columns = 1;
    pgwt_alloc_install();
    bool succeeded = false;
    for (size_t n = 1; n < 100 && !succeeded; n++) {
        pgwt_alloc_reset();
        pgwt_alloc_fail_at(n);
        pgw_error err;
        int rc = pgw_pq_watch_table(c, "public", "t", &o, &err);
        bool failed = pgwt_alloc_failed();
        pgwt_alloc_fail_at(0);
        if (failed) {
            ck_assert_int_eq(rc, PGW_ENOMEM);
            ck_assert_int_eq(PQtransactionStatus(c), PQTRANS_IDLE);
        } else {
            ck_assert_int_eq(rc, PGW_OK);
            succeeded = true;
        }
        ck_assert_uint_eq(pgwt_alloc_get().live, 0);
    }
    pgwt_alloc_uninstall();
    ck_assert(succeeded);
    ck_assert_int_eq(n_triggers(c, "t"), 4);
    PQfinish(c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* below a watched table: partitions and inheritance children (issue 16) */

/* A subscription over a watched table, re-run after every write: its
 * result's first `n_key` columns are the table's primary key. */
typedef struct rsub {
    const char *sql;
    size_t n_key;
    pgw_index *idx;
    pgw_runner_id runner;
    char *result;
} rsub;

/* The whole result of `sql`, as one text (malloc'd). */
static char *rerun(PGconn *c, const char *sql)
{
    char q[1024];
    snprintf(q, sizeof q, "SELECT coalesce(string_agg(x::text, ';'), '') FROM (%s) x", sql);
    return pgwt_value(c, q);
}

static void rsub_ack(PGconn *c, rsub *s)
{
    PGresult *r = PQexec(c, s->sql);
    ck_assert_int_eq(PQresultStatus(r), PGRES_TUPLES_OK);
    int n = PQntuples(r);
    const char **parts = calloc((size_t)n * s->n_key + 1, sizeof *parts);
    pgw_rowid *ids = calloc((size_t)n + 1, sizeof *ids);
    for (int i = 0; i < n; i++) {
        for (size_t j = 0; j < s->n_key; j++)
            parts[(size_t)i * s->n_key + j] = PQgetvalue(r, i, (int)j);
        ids[i].parts = &parts[(size_t)i * s->n_key];
        ids[i].n_parts = s->n_key;
    }
    pgw_error err;
    ck_assert_msg(pgw_index_ack(s->idx, s->runner, ids, (size_t)n, &err) == PGW_OK, "%s",
                  err.message);
    free(parts);
    free(ids);
    PQclear(r);
    free(s->result);
    s->result = rerun(c, s->sql);
}

/* Registers `tables` (a declaration's "tables") for s->sql in a new
 * index and runs it. */
static void rsub_new(rsub *s, PGconn *c, const char *tables)
{
    pgw_index *idx = NULL;
    ck_assert_int_eq(pgw_index_new(&idx, NULL, NULL), PGW_OK);
    char json[1024];
    snprintf(json, sizeof json, "{\"scope\":" PGWT_SCOPE_JSON ",\"query\":\"%s\",\"tables\":%s}",
             s->sql, tables);
    pgw_deps *d = NULL;
    pgw_error err;
    ck_assert_msg(pgw_deps_from_json(&d, json, strlen(json), &err) == PGW_OK, "%s", err.message);
    ck_assert_int_eq(pgw_index_register(&s->runner, idx, d, &err), PGW_OK);
    pgw_deps_free(d);
    s->idx = idx;
    s->result = NULL;
    ck_assert_int_eq(pgw_index_begin(idx, s->runner, &err), PGW_OK);
    rsub_ack(c, s);
}

/* Runs `sql`, expects exactly the write set `want` (as pgwt_expect_write)
 * and, when the subscription's re-run result changed, that matching the
 * write set marked it dirty (a missed refresh fails). Returns whether the
 * result changed. */
static bool write_and_rerun(PGconn *c, PGconn *lc, rsub *s, const char *sql, const char *want)
{
    pgwt_exec(c, sql);
    char *payload = pgwt_next_payload(lc, 5000, NULL);
    ck_assert_msg(payload != NULL, "%s: no notification; expected %s", sql, want);
    int fb = 0;
    char *got = pgwt_write_json(payload, &fb);
    ck_assert_int_eq(fb, PGW_OK);
    ck_assert_msg(strcmp(got, want) == 0, "%s:\n got  %s\n want %s", sql, got, want);
    free(got);
    pgw_scope scope = {"p", "acme", "db"};
    pgw_write *w = NULL;
    pgw_error err;
    pgw_payload_decode(&w, &scope, payload, strlen(payload), &err);
    ck_assert_ptr_nonnull(w);
    free(payload);
    size_t marked = 0;
    ck_assert_int_eq(pgw_index_match(&marked, s->idx, w, &err), PGW_OK);
    pgw_write_free(w);
    char *now = rerun(c, s->sql);
    bool changed = strcmp(now, s->result) != 0;
    free(now);
    pgw_dirty dd;
    bool dirty = pgw_index_pop_dirty(&dd, s->idx) == PGW_OK;
    ck_assert_msg(!changed || dirty, "%s: the result of %s changed but it was not refreshed",
                  sql, s->sql);
    if (dirty) /* popped: running */
        rsub_ack(c, s);
    return changed;
}

#define W(t, op, ids, cols, rest)                                                             \
    "\"schema\":\"public\",\"table\":\"" t "\",\"op\":\"" op "\",\"ids\":" ids                \
    ",\"ids_truncated\":false,\"columns\":" cols ",\"columns_truncated\":false" rest          \
    ",\"pk_changed\":false}"
#define TRUNC(t)                                                                              \
    "\"schema\":\"public\",\"table\":\"" t "\",\"op\":\"truncate\",\"ids\":null,"             \
    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,\"pk_changed\":false}"

static char *below_triggers(PGconn *c)
{
    return pgwt_value(c, "SELECT coalesce(string_agg(tgrelid::regclass || ':' || "
                         "regexp_replace(tgname, '_[0-9]+$', '_<oid>'), ' ' ORDER BY "
                         "tgrelid::regclass::text, tgname), '') FROM pg_trigger "
                         "WHERE tgname LIKE 'pgwitness\\_%\\_%\\_%' OR tgname ~ '^pgwitness_[a-z]+_[0-9]+$'");
}

/* A partitioned table: writes through the root, straight into a partition
 * and a sub-partition, rows moving across partitions and a partition's
 * TRUNCATE are all writes to the root, with the root's key. */
START_TEST(partitioned_table_and_its_partitions)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgwt_exec(c, "CREATE TABLE m (id int, k int, v text, PRIMARY KEY (id, k)) "
                 "PARTITION BY RANGE (k); "
                 "CREATE TABLE m1 PARTITION OF m FOR VALUES FROM (0) TO (10) PARTITION BY RANGE (k); "
                 "CREATE TABLE m1a PARTITION OF m1 FOR VALUES FROM (0) TO (5); "
                 "CREATE TABLE m1b PARTITION OF m1 FOR VALUES FROM (5) TO (10); "
                 "CREATE TABLE m2 (v text, k int NOT NULL, id int NOT NULL); " /* another column order */
                 "ALTER TABLE m ATTACH PARTITION m2 FOR VALUES FROM (10) TO (20)");
    static const char *const V[] = {"v"};
    watch(c, "m", V, 1);
    char *t = below_triggers(c);
    ck_assert_str_eq(t, "m1:pgwitness_delete_<oid> m1:pgwitness_insert_<oid> "
                        "m1:pgwitness_truncate_<oid> m1:pgwitness_update_<oid> "
                        "m1a:pgwitness_delete_<oid> m1a:pgwitness_insert_<oid> "
                        "m1a:pgwitness_truncate_<oid> m1a:pgwitness_update_<oid> "
                        "m1b:pgwitness_delete_<oid> m1b:pgwitness_insert_<oid> "
                        "m1b:pgwitness_truncate_<oid> m1b:pgwitness_update_<oid> "
                        "m2:pgwitness_delete_<oid> m2:pgwitness_insert_<oid> "
                        "m2:pgwitness_truncate_<oid> m2:pgwitness_update_<oid>");
    free(t);
    ck_assert_int_eq(n_triggers(c, "m"), 4);
    rsub s = {"SELECT id, k FROM m WHERE v = 'a' ORDER BY id, k", 2, NULL, 0, NULL};
    rsub_new(&s, c,
             "[{\"schema\":\"public\",\"table\":\"m\",\"columns\":[\"id\",\"k\",\"v\"],"
             "\"filters\":[{\"column\":\"v\",\"op\":\"eq\",\"values\":[\"a\"]}]}]");
    ck_assert(write_and_rerun(c, lc, &s, "INSERT INTO m VALUES (1, 1, 'a')",
                              W("m", "insert", "[[\"1\",\"1\"]]", "null", ",\"new\":[{\"v\":\"a\"}]")));
    ck_assert(write_and_rerun(c, lc, &s, "INSERT INTO m2 (id, k, v) VALUES (2, 12, 'a')",
                              W("m", "insert", "[[\"2\",\"12\"]]", "null", ",\"new\":[{\"v\":\"a\"}]")));
    ck_assert(write_and_rerun(c, lc, &s, "INSERT INTO m1a VALUES (3, 3, 'a'), (4, 4, 'b')",
                              W("m", "insert", "[[\"3\",\"3\"],[\"4\",\"4\"]]", "null",
                                ",\"new\":[{\"v\":\"a\"},{\"v\":\"b\"}]")));
    ck_assert(write_and_rerun(c, lc, &s, "UPDATE m1 SET v = 'b' WHERE id = 3",
                              W("m", "update", "[[\"3\",\"3\"]]", "[\"v\"]",
                                ",\"old\":[{\"v\":\"a\"}],\"new\":[{\"v\":\"b\"}]")));
    /* A row moving from m1a to m1b through m1, and from m1 to m2 through
     * the root: a key change (k is in the key). */
    ck_assert(write_and_rerun(c, lc, &s, "UPDATE m1 SET k = 7 WHERE id = 1",
                              "\"schema\":\"public\",\"table\":\"m\",\"op\":\"update\","
                              "\"ids\":[[\"1\",\"1\"],[\"1\",\"7\"]],\"ids_truncated\":false,"
                              "\"columns\":null,\"columns_truncated\":false,"
                              "\"old\":[{\"v\":\"a\"},null],\"new\":[null,{\"v\":\"a\"}],"
                              "\"pk_changed\":true}"));
    ck_assert(write_and_rerun(c, lc, &s, "UPDATE m SET k = 17 WHERE id = 1",
                              "\"schema\":\"public\",\"table\":\"m\",\"op\":\"update\","
                              "\"ids\":[[\"1\",\"17\"],[\"1\",\"7\"]],\"ids_truncated\":false,"
                              "\"columns\":null,\"columns_truncated\":false,"
                              "\"old\":[null,{\"v\":\"a\"}],\"new\":[{\"v\":\"a\"},null],"
                              "\"pk_changed\":true}"));
    ck_assert(write_and_rerun(c, lc, &s, "DELETE FROM m2 WHERE id = 2",
                              W("m", "delete", "[[\"2\",\"12\"]]", "null", ",\"old\":[{\"v\":\"a\"}]")));
    /* TRUNCATE of one partition (the root's trigger does not fire). */
    ck_assert(write_and_rerun(c, lc, &s, "TRUNCATE m2", TRUNC("m")));
    /* (m1a holds only row 4, which the subscription does not select.) */
    ck_assert(!write_and_rerun(c, lc, &s, "TRUNCATE m1a", TRUNC("m")));
    pgwt_expect_marker(c, lc, CH, "end");
    /* The partition itself stays refused, naming its root. */
    pgw_error err;
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "m1a", NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "public.m1a is a partition of public.m: watch public.m, "
                                  "whose watch covers every partition below it");
    /* Unwatching drops them all. */
    bool dropped = false;
    ck_assert_int_eq(pgw_pq_unwatch_table(&dropped, c, "public", "m", &err), PGW_OK);
    ck_assert(dropped);
    t = below_triggers(c);
    ck_assert_str_eq(t, "");
    free(t);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'pgwitness%'"),
                     0);
    free(s.result);
    pgw_index_free(s.idx);
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

/* Issue 16, case 5: a table watched with enable_always, written under
 * session_replication_role = replica (which silences plain triggers): a
 * subscription re-run after its INSERT, UPDATE, DELETE and TRUNCATE
 * changed each time and was refreshed each time (0 missed). So was one
 * over a partitioned table watched with enable_always, after a write
 * straight into its partition (whose triggers take the table's mode). */
START_TEST(enable_always_rerun_under_replica_role)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgwt_exec(c, "CREATE TABLE t (id int PRIMARY KEY, status text); "
                 "CREATE TABLE p (id int PRIMARY KEY, status text) PARTITION BY RANGE (id); "
                 "CREATE TABLE p1 PARTITION OF p FOR VALUES FROM (0) TO (100)");
    watch_always(c, "t", true);
    watch_always(c, "p", true);
    ck_assert_int_eq(n_enabled(c, "t", 'A'), 4);
    ck_assert_int_eq(n_enabled(c, "p", 'A'), 4);
    ck_assert_int_eq(n_enabled(c, "p1", 'A'), 4);
    rsub s = {"SELECT id, status FROM t ORDER BY id", 1, NULL, 0, NULL};
    rsub_new(&s, c, "[{\"schema\":\"public\",\"table\":\"t\",\"columns\":[\"id\",\"status\"]}]");
    rsub sp = {"SELECT id, status FROM p ORDER BY id", 1, NULL, 0, NULL};
    rsub_new(&sp, c, "[{\"schema\":\"public\",\"table\":\"p\",\"columns\":[\"id\",\"status\"]}]");
    pgwt_exec(c, "SET session_replication_role = replica");
    ck_assert(write_and_rerun(c, lc, &s, "INSERT INTO t VALUES (1, 'a'), (2, 'a')",
                              W("t", "insert", "[\"1\",\"2\"]", "null", "")));
    ck_assert_str_eq(s.result, "(1,a);(2,a)");
    ck_assert(write_and_rerun(c, lc, &s, "UPDATE t SET status = 'b' WHERE id = 1",
                              W("t", "update", "[\"1\"]", "[\"status\"]", "")));
    ck_assert_str_eq(s.result, "(1,b);(2,a)");
    ck_assert(write_and_rerun(c, lc, &s, "DELETE FROM t WHERE id = 1",
                              W("t", "delete", "[\"1\"]", "null", "")));
    ck_assert_str_eq(s.result, "(2,a)");
    ck_assert(write_and_rerun(c, lc, &s, "TRUNCATE t", TRUNC("t")));
    ck_assert_str_eq(s.result, "");
    ck_assert(write_and_rerun(c, lc, &sp, "INSERT INTO p1 VALUES (5, 'a')",
                              W("p", "insert", "[\"5\"]", "null", "")));
    ck_assert_str_eq(sp.result, "(5,a)");
    pgwt_exec(c, "RESET session_replication_role");
    pgwt_expect_marker(c, lc, CH, "end");
    free(s.result);
    pgw_index_free(s.idx);
    free(sp.result);
    pgw_index_free(sp.idx);
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

/* Inheritance children, at two levels, one with two parents, and one
 * watched on its own: each child's writes are writes to every watched
 * ancestor (and to itself when it is watched). A child made after the
 * watch is a gap until the parent is watched again. */
START_TEST(inheritance_children_and_gaps)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgwt_exec(c, "CREATE TABLE par (id int PRIMARY KEY, v text); "
                 "CREATE TABLE ch (extra int) INHERITS (par); "
                 "CREATE TABLE gch () INHERITS (ch); "
                 "CREATE TABLE other (id int PRIMARY KEY, v text)");
    static const char *const V[] = {"v"};
    watch(c, "par", V, 1);
    rsub s = {"SELECT id FROM par WHERE v = 'a' ORDER BY id", 1, NULL, 0, NULL};
    rsub_new(&s, c,
             "[{\"schema\":\"public\",\"table\":\"par\",\"columns\":[\"id\",\"v\"],"
             "\"filters\":[{\"column\":\"v\",\"op\":\"eq\",\"values\":[\"a\"]}]}]");
    ck_assert(write_and_rerun(c, lc, &s, "INSERT INTO ch VALUES (1, 'a', 10)",
                              W("par", "insert", "[\"1\"]", "null", ",\"new\":[{\"v\":\"a\"}]")));
    ck_assert(write_and_rerun(c, lc, &s, "UPDATE ch SET v = 'b', extra = 11 WHERE id = 1",
                              W("par", "update", "[\"1\"]", "[\"v\",\"extra\"]",
                                ",\"old\":[{\"v\":\"a\"}],\"new\":[{\"v\":\"b\"}]")));
    ck_assert(write_and_rerun(c, lc, &s, "INSERT INTO gch VALUES (2, 'a', 20)",
                              W("par", "insert", "[\"2\"]", "null", ",\"new\":[{\"v\":\"a\"}]")));
    ck_assert(write_and_rerun(c, lc, &s, "DELETE FROM gch",
                              W("par", "delete", "[\"2\"]", "null", ",\"old\":[{\"v\":\"a\"}]")));
    ck_assert(write_and_rerun(c, lc, &s, "INSERT INTO ch VALUES (3, 'a', 30)",
                              W("par", "insert", "[\"3\"]", "null", ",\"new\":[{\"v\":\"a\"}]")));
    /* TRUNCATE of a table fires the trigger of every table it truncates
     * (ch's and gch's here, the parent's too for TRUNCATE par): identical
     * notifications of one transaction arrive once (NOTIFY, "Notes"). */
    ck_assert(write_and_rerun(c, lc, &s, "TRUNCATE ch", TRUNC("par")));
    ck_assert(!write_and_rerun(c, lc, &s, "TRUNCATE par", TRUNC("par")));
    pgwt_expect_marker(c, lc, CH, "inherit");
    /* A child watched on its own has both sets: its writes are its own
     * (without a key of its own: PostgreSQL's children do not inherit
     * the parent's primary key, so IDs unknown) and its parent's. */
    watch(c, "ch", NULL, 0);
    pgwt_exec(c, "INSERT INTO ch VALUES (4, 'a', 40)");
    char *p1 = pgwt_next_payload(lc, 5000, NULL), *p2 = pgwt_next_payload(lc, 5000, NULL);
    ck_assert_ptr_nonnull(p1);
    ck_assert_ptr_nonnull(p2);
    bool par_first = strstr(p1, "\"table\":\"par\"") != NULL;
    ck_assert_str_eq(par_first ? p2 : p1,
                     "{\"version\":1,\"schema\":\"public\",\"table\":\"ch\",\"op\":\"insert\","
                     "\"ids\":null,\"ids_truncated\":false,\"columns\":null,"
                     "\"columns_truncated\":false,\"pk_changed\":false}");
    ck_assert_str_eq(par_first ? p1 : p2,
                     "{\"version\":1,\"schema\":\"public\",\"table\":\"par\",\"op\":\"insert\","
                     "\"ids\":[\"4\"],\"ids_truncated\":false,\"columns\":null,"
                     "\"columns_truncated\":false,\"new\":[{\"v\":\"a\"}],\"pk_changed\":false}");
    free(p1);
    free(p2);
    /* A child with two parents, made after the watch: its writes are not
     * reported (a gap) until the parent is watched again. */
    pgwt_exec(c, "CREATE TABLE late () INHERITS (par, other)");
    char *gaps = pgwt_value(c, "SELECT string_agg(table_name || ' below ' || watched_table || "
                               "' (' || source || ')', ', ') FROM pgwitness.watch_gaps()");
    ck_assert_str_eq(gaps, "late below par (triggers)");
    free(gaps);
    pgw_pq_watch_gap *g = NULL;
    size_t ng = 0;
    pgw_error err;
    ck_assert_int_eq(pgw_pq_watch_gaps(&g, &ng, c, NULL, &err), PGW_OK);
    ck_assert_uint_eq(ng, 1);
    ck_assert_str_eq(g[0].schema, "public");
    ck_assert_str_eq(g[0].table, "late");
    ck_assert_str_eq(g[0].watched_schema, "public");
    ck_assert_str_eq(g[0].watched_table, "par");
    ck_assert_str_eq(g[0].source, "triggers");
    pgw_free(g);
    /* The same for a role that may not read stream_tables. */
    pgwt_exec(c, "SET client_min_messages = warning; DROP ROLE IF EXISTS pgwt_gap_reader; "
                 "CREATE ROLE pgwt_gap_reader; RESET client_min_messages; "
                 "GRANT USAGE ON SCHEMA pgwitness TO pgwt_gap_reader; SET ROLE pgwt_gap_reader");
    ck_assert_msg(pgw_pq_watch_gaps(&g, &ng, c, NULL, &err) == PGW_OK, "%s", err.message);
    ck_assert_uint_eq(ng, 1);
    ck_assert_str_eq(g[0].table, "late");
    pgw_free(g);
    pgwt_exec(c, "RESET ROLE; REVOKE USAGE ON SCHEMA pgwitness FROM pgwt_gap_reader; "
                 "DROP ROLE pgwt_gap_reader");
    pgwt_exec(c, "INSERT INTO late VALUES (5, 'a')");
    pgwt_expect_marker(c, lc, CH, "gap"); /* nothing was sent */
    watch(c, "other", NULL, 0);
    watch(c, "par", V, 1);
    ck_assert_int_eq(pgw_pq_watch_gaps(&g, &ng, c, NULL, &err), PGW_OK);
    ck_assert_uint_eq(ng, 0);
    ck_assert_ptr_null(g);
    pgwt_exec(c, "UPDATE late SET v = 'b'");
    p1 = pgwt_next_payload(lc, 5000, NULL);
    p2 = pgwt_next_payload(lc, 5000, NULL);
    ck_assert_ptr_nonnull(p1);
    ck_assert_ptr_nonnull(p2);
    par_first = strstr(p1, "\"table\":\"par\"") != NULL;
    ck_assert_str_eq(par_first ? p1 : p2,
                     "{\"version\":1,\"schema\":\"public\",\"table\":\"par\",\"op\":\"update\","
                     "\"ids\":[\"5\"],\"ids_truncated\":false,\"columns\":[\"v\"],"
                     "\"columns_truncated\":false,\"old\":[{\"v\":\"a\"}],\"new\":[{\"v\":\"b\"}],"
                     "\"pk_changed\":false}");
    ck_assert_str_eq(par_first ? p2 : p1,
                     "{\"version\":1,\"schema\":\"public\",\"table\":\"other\",\"op\":\"update\","
                     "\"ids\":[\"5\"],\"ids_truncated\":false,\"columns\":[\"v\"],"
                     "\"columns_truncated\":false,\"pk_changed\":false}");
    free(p1);
    free(p2);
    pgwt_expect_marker(c, lc, CH, "rewatched");
    /* watch_descendant(), the entry point for an event trigger, covers a
     * new child at once. */
    pgwt_exec(c, "CREATE TABLE later () INHERITS (ch)");
    /* (two watched tables above it: ch and par) */
    ck_assert_int_eq(pgwt_int(c, "SELECT pgwitness.watch_descendant('later')"), 2);
    ck_assert_int_eq(pgwt_int(c, "SELECT pgwitness.watch_descendant('later')"), 0);
    pgwt_exec(c, "INSERT INTO later VALUES (6, 'c', 0)");
    p1 = pgwt_next_payload(lc, 5000, NULL);
    p2 = pgwt_next_payload(lc, 5000, NULL);
    ck_assert_ptr_nonnull(p1);
    ck_assert_ptr_nonnull(p2);
    par_first = strstr(p1, "\"table\":\"par\"") != NULL;
    ck_assert_str_eq(par_first ? p1 : p2,
                     "{\"version\":1,\"schema\":\"public\",\"table\":\"par\",\"op\":\"insert\","
                     "\"ids\":[\"6\"],\"ids_truncated\":false,\"columns\":null,"
                     "\"columns_truncated\":false,\"new\":[{\"v\":\"c\"}],\"pk_changed\":false}");
    ck_assert_str_eq(par_first ? p2 : p1, /* ch has no key of its own */
                     "{\"version\":1,\"schema\":\"public\",\"table\":\"ch\",\"op\":\"insert\","
                     "\"ids\":null,\"ids_truncated\":false,\"columns\":null,"
                     "\"columns_truncated\":false,\"pk_changed\":false}");
    free(p1);
    free(p2);
    pgwt_expect_marker(c, lc, CH, "later");
    /* Unwatching the parent drops its triggers below it, not the child's
     * own nor the other parent's. */
    bool dropped = false;
    ck_assert_int_eq(pgw_pq_unwatch_table(&dropped, c, "public", "par", &err), PGW_OK);
    ck_assert(dropped);
    char *t = below_triggers(c);
    ck_assert_str_eq(t, "gch:pgwitness_delete_<oid> gch:pgwitness_insert_<oid> "
                        "gch:pgwitness_truncate_<oid> gch:pgwitness_update_<oid> "
                        "late:pgwitness_delete_<oid> late:pgwitness_insert_<oid> "
                        "late:pgwitness_truncate_<oid> late:pgwitness_update_<oid> "
                        "later:pgwitness_delete_<oid> later:pgwitness_insert_<oid> "
                        "later:pgwitness_truncate_<oid> later:pgwitness_update_<oid>");
    free(t);
    ck_assert_int_eq(pgw_pq_unwatch_table(&dropped, c, "public", "ch", &err), PGW_OK);
    ck_assert(dropped);
    ck_assert_int_eq(pgw_pq_unwatch_table(&dropped, c, "public", "other", &err), PGW_OK);
    ck_assert(dropped);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'pgwitness%'"),
                     0);
    ck_assert_int_eq(pgw_pq_unwatch_table(&dropped, c, "public", "par", &err), PGW_OK);
    ck_assert(!dropped);
    free(s.result);
    pgw_index_free(s.idx);
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

/* Watching again changes nothing and locks nothing; a descendant's
 * triggers never fail a writer: after the parent's key is dropped, after
 * NO INHERIT and DETACH, after the parent is dropped. */
START_TEST(below_idempotent_and_never_failing)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgwt_exec(c, "CREATE TABLE par (id int PRIMARY KEY, v text); "
                 "CREATE TABLE ch () INHERITS (par); "
                 "CREATE TABLE m (id int, k int, PRIMARY KEY (id, k)) PARTITION BY RANGE (k); "
                 "CREATE TABLE m1 PARTITION OF m FOR VALUES FROM (0) TO (10)");
    watch(c, "par", NULL, 0);
    watch(c, "m", NULL, 0);
    const char *oids = "SELECT string_agg(oid::text, ',' ORDER BY oid) FROM pg_trigger";
    char *before = pgwt_value(c, oids);
    /* Another session holds a lock on the child that CREATE TRIGGER would
     * wait for: watching again must not wait. */
    PGconn *o = pgwt_connect();
    pgwt_exec(o, "BEGIN; LOCK TABLE ch, m1 IN ROW EXCLUSIVE MODE");
    pgwt_exec(c, "SET lock_timeout = '1s'");
    watch(c, "par", NULL, 0);
    watch(c, "m", NULL, 0);
    pgwt_exec(c, "RESET lock_timeout");
    pgwt_exec(o, "COMMIT");
    PQfinish(o);
    char *after = pgwt_value(c, oids);
    ck_assert_str_eq(before, after);
    free(before);
    free(after);
    /* The parent's key dropped: IDs unknown, the writer commits. */
    pgwt_exec(c, "ALTER TABLE par DROP CONSTRAINT par_pkey");
    pgwt_exec(c, "INSERT INTO ch VALUES (1, 'a')");
    pgwt_expect_write(lc, W("par", "insert", "null", "null", ""));
    /* NO INHERIT / DETACH: the rows are no longer the parent's; nothing is
     * sent, nothing fails. */
    pgwt_exec(c, "ALTER TABLE ch NO INHERIT par");
    pgwt_exec(c, "INSERT INTO ch VALUES (2, 'b'); UPDATE ch SET v = 'c'; DELETE FROM ch; "
                 "TRUNCATE ch");
    pgwt_exec(c, "ALTER TABLE m DETACH PARTITION m1");
    pgwt_exec(c, "INSERT INTO m1 VALUES (1, 1); TRUNCATE m1");
    pgwt_expect_marker(c, lc, CH, "detached");
    /* ... and watching again removes their stale triggers. */
    watch(c, "par", NULL, 0);
    watch(c, "m", NULL, 0);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_trigger "
                                 "WHERE tgrelid IN ('ch'::regclass, 'm1'::regclass)"),
                     0);
    /* A dropped watched parent: its child's triggers (made by hand here,
     * as a dump restored elsewhere would leave them) stay harmless. */
    pgwt_exec(c, "CREATE TABLE ch2 () INHERITS (par)");
    watch(c, "par", NULL, 0);
    pgwt_exec(c, "ALTER TABLE ch2 NO INHERIT par; DROP TABLE par; INSERT INTO ch2 VALUES (3, 'x')");
    pgwt_expect_marker(c, lc, CH, "dropped");
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

START_TEST(watch_gaps_allocation_failures)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE par (id int PRIMARY KEY); CREATE TABLE a () INHERITS (par)");
    watch(c, "par", NULL, 0);
    pgwt_exec(c, "CREATE TABLE b () INHERITS (par)");
    pgwt_alloc_install();
    bool succeeded = false;
    for (size_t n = 1; n < 100 && !succeeded; n++) {
        pgwt_alloc_reset();
        pgwt_alloc_fail_at(n);
        pgw_error err;
        pgw_pq_watch_gap *g = NULL;
        size_t ng = 7;
        int rc = pgw_pq_watch_gaps(&g, &ng, c, NULL, &err);
        bool failed = pgwt_alloc_failed();
        pgwt_alloc_fail_at(0);
        if (failed) {
            ck_assert_int_eq(rc, PGW_ENOMEM);
            ck_assert_ptr_null(g);
            ck_assert_uint_eq(ng, 7);
        } else {
            ck_assert_int_eq(rc, PGW_OK);
            ck_assert_uint_eq(ng, 1);
            ck_assert_str_eq(g[0].table, "b");
            pgw_free(g);
            succeeded = true;
        }
        ck_assert_uint_eq(pgwt_alloc_get().live, 0);
    }
    pgwt_alloc_uninstall();
    ck_assert(succeeded);
    pgw_error err;
    pgw_pq_watch_gap *g = NULL;
    size_t ng = 0;
    ck_assert_int_eq(pgw_pq_watch_gaps(NULL, &ng, c, NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_watch_gaps(&g, &ng, c, "not_installed", &err), PGW_ENOTFOUND);
    ck_assert_str_eq(err.message, "schema \"not_installed\" has no watch_gaps() (pgwitness "
                                  "schema version 4): run pgw_pq_install() to install or "
                                  "upgrade it");
    PQfinish(c);
}
END_TEST

/* A schema at version 3 is upgraded: migration 2's function is applied
 * again (it serves descendants now), then migration 4. */
START_TEST(install_upgrades_version_3)
{
    PGconn *c = setup();
    pgw_error err;
    int v = 0;
    pgwt_exec(c, "DROP FUNCTION pgwitness.watch_gaps(), pgwitness.watch_descendant(regclass), "
                 "pgwitness.watch_below(regclass, regclass), "
                 "pgwitness.below_plan(regclass, regclass), pgwitness.trigger_args(bytea); "
                 "CREATE OR REPLACE FUNCTION pgwitness.notify_statement() RETURNS trigger "
                 "LANGUAGE plpgsql AS $$BEGIN RETURN NULL; END$$; "
                 "DELETE FROM pgwitness.schema_version WHERE version >= 4; "
                 "CREATE TABLE m (id int PRIMARY KEY) PARTITION BY RANGE (id); "
                 "CREATE TABLE m1 PARTITION OF m FOR VALUES FROM (0) TO (10)");
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "m", NULL, &err), PGW_ENOTFOUND);
    ck_assert_str_eq(err.message, "public.m has partitions or inheritance children, whose "
                                  "writes need triggers of their own, and schema \"pgwitness\" "
                                  "is older than pgwitness schema version 4 (no watch_below()): "
                                  "run pgw_pq_install() to upgrade it");
    ck_assert_int_eq(n_triggers(c, "m"), 0);
    ck_assert_int_eq(pgw_pq_install(&v, c, NULL, &err), PGW_OK);
    ck_assert_int_eq(v, PGW_PQ_SCHEMA_VERSION);
    PGconn *lc = pgwt_listen(CH);
    watch(c, "m", NULL, 0);
    pgwt_exec(c, "INSERT INTO m1 VALUES (1)");
    pgwt_expect_write(lc, W("m", "insert", "[\"1\"]", "null", ""));
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("watch");
    TCase *tc = tcase_create("watch");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, insert_single_and_multi_row);
    tcase_add_test(tc, update_single_multi_partial_and_noop);
    tcase_add_test(tc, update_of_keys);
    tcase_add_test(tc, delete_single_and_multi_row);
    tcase_add_test(tc, composite_key);
    tcase_add_test(tc, table_without_key_and_truncate);
    tcase_add_test(tc, key_changes_after_watching);
    tcase_add_test(tc, key_with_included_columns);
    tcase_add_test(tc, table_without_key_followed);
    tcase_add_test(tc, changed_columns_of_one_row);
    tcase_add_test(tc, zero_row_statements_send_nothing);
    tcase_add_test(tc, transactions_commit_rollback_savepoints);
    tcase_add_test(tc, text_forms_do_not_depend_on_the_session);
    tcase_add_test(tc, large_statements_degrade_and_commit);
    tcase_add_test(tc, hundred_columns_with_long_multibyte_names);
    tcase_add_test(tc, byte_budget_rungs);
    tcase_add_test(tc, byte_budget_in_a_single_byte_database);
    tcase_add_test(tc, failures_never_reach_the_writer);
    tcase_add_test(tc, concurrent_watch_and_unwatch_serialize);
    tcase_add_test(tc, triggers_of_the_same_name_that_are_not_ours);
    tcase_add_test(tc, writers_need_no_privilege_on_the_library);
    tcase_add_test(tc, watch_is_idempotent_and_reconfigurable);
    tcase_add_test(tc, watch_inside_a_transaction);
    tcase_add_test(tc, watch_refusals_and_bad_arguments);
    tcase_add_test(tc, enable_always_fires_under_replica_role);
    tcase_add_test(tc, enable_always_covers_descendants);
    tcase_add_test(tc, prepared_transactions_warning);
    tcase_add_test(tc, install_upgrades_version_1);
    tcase_add_test(tc, watch_allocation_failures);
    tcase_add_test(tc, partitioned_table_and_its_partitions);
    tcase_add_test(tc, enable_always_rerun_under_replica_role);
    tcase_add_test(tc, inheritance_children_and_gaps);
    tcase_add_test(tc, below_idempotent_and_never_failing);
    tcase_add_test(tc, watch_gaps_allocation_failures);
    tcase_add_test(tc, install_upgrades_version_3);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    pgwt_pg_setup("watch");
    return pgwt_main(suite());
}
