/*
 * tests/pg/check_stream.c — the stream (logical decoding with pgoutput)
 * against the real server: exact write sets under REPLICA IDENTITY DEFAULT
 * and FULL, the triggers' text forms, unchanged TOASTed values, partitioned
 * tables and inheritance children reported as their watched table (a
 * partition's TRUNCATE too, under session_replication_role = replica), tables
 * refused because publishing them would fail their writers, key-only
 * placeholders never yielding a skip the re-run query contradicts, a
 * 200,000-row transaction in bounded memory, and the boundaries: rollbacks,
 * two tenant databases, unwatched tables, replica role, two-phase commit,
 * nothing before commit, confirmed positions, slots listed and dropped.
 * (Durability — terminated walsenders, killed hosts, lost slots — is
 * check_stream_durability.c.)
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
#include "pgwt_notify.h"
#include "pgwt_stream.h"

static double test_scale(void)
{
    const char *s = getenv("PGW_TEST_SCALE");
    double f = s ? atof(s) : 1.0;
    return f > 0 && f <= 1.0 ? f : 1.0;
}

/* A clean public schema, no publication or slot of ours, the library
 * installed. */
static PGconn *setup(void)
{
    PGconn *c = pgwt_connect();
    pgwt_exec(c, "SET client_min_messages = warning; "
                 "DROP PUBLICATION IF EXISTS pgwitness; "
                 "DROP SCHEMA IF EXISTS pgwitness CASCADE; DROP SCHEMA public CASCADE; "
                 "CREATE SCHEMA public; GRANT ALL ON SCHEMA public TO PUBLIC; "
                 "RESET client_min_messages");
    pgw_error err;
    ck_assert_msg(pgw_pq_install(NULL, c, NULL, &err) == PGW_OK, "%s", err.message);
    return c;
}

/* Drops a slot once its walsender is gone (it ends a moment after its
 * connection closes). */
static void drop_slot(PGconn *c, const char *slot)
{
    pgw_error err;
    int rc;
    for (int i = 0; i < 500; i++) {
        if ((rc = pgw_pq_drop_slot(c, slot, NULL, &err)) != PGW_ESTATE)
            break;
        usleep(10000);
    }
    ck_assert_msg(rc == PGW_OK, "dropping %s: %s", slot, err.message);
}

static void stream_watch(PGconn *c, const char *table, const char *values)
{
    const char *cols[16];
    size_t n = 0;
    char buf[256];
    if (values) {
        snprintf(buf, sizeof buf, "%s", values);
        for (char *p = strtok(buf, ","); p && n < 16; p = strtok(NULL, ","))
            cols[n++] = p;
    }
    pgw_pq_stream_watch_options o = PGW_PQ_STREAM_WATCH_OPTIONS_INIT;
    o.value_columns = cols;
    o.n_value_columns = n;
    pgw_error err;
    ck_assert_msg(pgw_pq_stream_watch_table(c, "public", table, &o, &err) == PGW_OK, "%s: %s",
                  table, err.message);
}

/* The next write set must be `want` (its JSON, scope left out). */
#define EXPECT_WRITE(s, want)                                                                 \
    do {                                                                                      \
        const char *got_ = pgwt_stream_take((s), NULL);                                       \
        ck_assert_msg(got_ != NULL, "no write set; expected %s", (want));                     \
        ck_assert_str_eq(got_, (want));                                                       \
    } while (0)
#define EXPECT_NO_WRITE(s)                                                                    \
    do {                                                                                      \
        const char *got_ = pgwt_stream_take((s), NULL);                                       \
        ck_assert_msg(got_ == NULL, "unexpected write set %s", got_);                         \
    } while (0)

/* ------------------------------------------------------------------ */

/* Every operation under REPLICA IDENTITY DEFAULT, then FULL. */
START_TEST(writes_as_write_sets)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE tasks (id int PRIMARY KEY, title text, status text, notes text)");
    stream_watch(c, "tasks", "status");
    pgwt_stream *s = pgwt_stream_open(NULL, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    ck_assert_int_eq(pgwt_stream_count(s, "STREAMING 0 1"), 1); /* a new slot: reset */
    /* Watching again without a change sends nothing: no reconnect. */
    stream_watch(c, "tasks", "status");
    pgwt_stream_sync(s, c);
    ck_assert_int_eq(s->streaming, 1);
    pgwt_exec(c, "INSERT INTO tasks VALUES (1, 'a', 'open', NULL), (2, 'b', 'open', 'x')");
    pgwt_exec(c, "UPDATE tasks SET status = 'done' WHERE id = 1");
    pgwt_exec(c, "DELETE FROM tasks WHERE id = 2");
    pgwt_exec(c, "UPDATE tasks SET id = 3 WHERE id = 1");
    pgwt_exec(c, "TRUNCATE tasks");
    pgwt_stream_sync(s, c);
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\","
                    "\"ids\":[\"1\",\"2\"],\"ids_truncated\":false,\"columns\":null,"
                    "\"columns_truncated\":false,\"new\":[{\"status\":\"open\"},"
                    "{\"status\":\"open\"}],\"pk_changed\":false}");
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\",\"ids\":[\"1\"],"
                    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                    "\"new\":[{\"status\":\"done\"}],\"pk_changed\":false}");
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"delete\",\"ids\":[\"2\"],"
                    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                    "\"pk_changed\":false}");
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\","
                    "\"ids\":[\"1\",\"3\"],\"ids_truncated\":false,\"columns\":null,"
                    "\"columns_truncated\":false,\"new\":[null,{\"status\":\"done\"}],"
                    "\"pk_changed\":true}");
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"truncate\",\"ids\":null,"
                    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                    "\"pk_changed\":false}");
    EXPECT_NO_WRITE(s);
    /* FULL: old rows, so changed columns and old values. */
    pgwt_exec(c, "ALTER TABLE tasks REPLICA IDENTITY FULL");
    pgwt_exec(c, "INSERT INTO tasks VALUES (5, 'e', 'open', NULL)");
    pgwt_exec(c, "UPDATE tasks SET status = 'done', notes = 'n' WHERE id = 5");
    pgwt_exec(c, "UPDATE tasks SET title = title WHERE id = 5");
    pgwt_exec(c, "DELETE FROM tasks WHERE id = 5");
    pgwt_stream_sync(s, c);
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\",\"ids\":[\"5\"],"
                    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                    "\"new\":[{\"status\":\"open\"}],\"pk_changed\":false}");
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\",\"ids\":[\"5\"],"
                    "\"ids_truncated\":false,\"columns\":[\"status\",\"notes\"],"
                    "\"columns_truncated\":false,\"old\":[{\"status\":\"open\"}],"
                    "\"new\":[{\"status\":\"done\"}],\"pk_changed\":false}");
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\",\"ids\":[],"
                    "\"ids_truncated\":false,\"columns\":[],\"columns_truncated\":false,"
                    "\"pk_changed\":false}");
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"delete\",\"ids\":[\"5\"],"
                    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                    "\"old\":[{\"status\":\"done\"}],\"pk_changed\":false}");
    EXPECT_NO_WRITE(s);
    ck_assert_int_eq(s->resets, 1);
    /* Unwatched: its writes are no longer sent; the stream renewed its
     * configuration at that commit (a temporary slot: with a reset). */
    bool was = false;
    pgw_error err;
    ck_assert_msg(pgw_pq_stream_unwatch_table(&was, c, "public", "tasks", NULL, &err) == PGW_OK,
                  "%s", err.message);
    ck_assert(was);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_publication_tables"), 0);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.stream_tables"), 0);
    pgwt_stream_until_streaming(s, 2);
    pgwt_exec(c, "INSERT INTO tasks VALUES (9, 'i', 'open', NULL)");
    pgwt_stream_sync(s, c);
    EXPECT_NO_WRITE(s);
    ck_assert_int_eq(pgw_pq_stream_unwatch_table(&was, c, "public", "tasks", NULL, &err), PGW_OK);
    ck_assert(!was);
    ck_assert_int_eq(pgw_pq_stream_unwatch_table(&was, c, "public", "nope", NULL, &err),
                     PGW_ENOTFOUND);
    pgwt_stream_close(s);
    PQfinish(c);
}
END_TEST

/* Both sources print a value the same way, whatever the writer's session
 * says: the walsender runs with the triggers' fixed settings. */
START_TEST(text_forms_match_the_triggers)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE kinds (at timestamptz, n numeric, d date, f float8, b boolean, "
                 "y bytea, i interval, ch char(4), t text, PRIMARY KEY (at, n))");
    pgwt_exec(c, "ALTER TABLE kinds REPLICA IDENTITY FULL");
    static const char *const cols[] = {"d", "f", "b", "y", "i", "ch", "t"};
    pgw_pq_watch_options wo = PGW_PQ_WATCH_OPTIONS_INIT;
    wo.channel = "kinds";
    wo.value_columns = cols;
    wo.n_value_columns = 7;
    pgw_error err;
    ck_assert_msg(pgw_pq_watch_table(c, "public", "kinds", &wo, &err) == PGW_OK, "%s",
                  err.message);
    stream_watch(c, "kinds", "d,f,b,y,i,ch,t");
    PGconn *lc = pgwt_listen("kinds");
    pgwt_stream *s = pgwt_stream_open(NULL, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    pgwt_exec(c, "SET DateStyle = 'German, DMY'; SET TimeZone = 'Asia/Tokyo'; "
                 "SET extra_float_digits = 0; SET bytea_output = 'escape'; "
                 "SET IntervalStyle = 'sql_standard'");
    const char *stmts[] = {
        "INSERT INTO kinds VALUES ('2024-02-29 23:59:59.123456+05:30', 1.50, '2024-01-31', "
        "0.1, true, '\\x00ff', '1 day 02:03:04.5', 'ab', 'x')",
        "UPDATE kinds SET f = 1e300, b = false, y = 'ab', i = '-3 months', ch = NULL, "
        "t = 'été' WHERE n = 1.50",
        "DELETE FROM kinds",
    };
    for (size_t k = 0; k < sizeof stmts / sizeof *stmts; k++) {
        pgwt_exec(c, stmts[k]);
        pgwt_stream_sync(s, c);
        char *payload = pgwt_next_payload(lc, 5000, NULL);
        ck_assert_ptr_nonnull(payload);
        int fb = 0;
        char *trig = pgwt_write_json(payload, &fb);
        ck_assert_int_eq(fb, PGW_OK);
        const char *stream = pgwt_stream_take(s, NULL);
        ck_assert_ptr_nonnull(stream);
        /* pgwt_write_json leaves out `{"scope":...,`; the recorder `"scope":...,`. */
        ck_assert_str_eq(stream + 1, trig);
        free(trig);
        free(payload);
    }
    EXPECT_NO_WRITE(s);
    pgwt_stream_close(s);
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

/* A large TOASTed value that an update does not touch is not reported as
 * changed (pgoutput sends it as 'u'), and its value is never invented. */
START_TEST(unchanged_toast_is_not_a_change)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE docs (id int PRIMARY KEY, title text, body text)");
    pgwt_exec(c, "ALTER TABLE docs REPLICA IDENTITY FULL");
    pgwt_exec(c, "ALTER TABLE docs ALTER body SET STORAGE EXTERNAL");
    stream_watch(c, "docs", "title");
    pgwt_stream *s = pgwt_stream_open(NULL, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    pgwt_exec(c, "INSERT INTO docs SELECT 1, 'draft', string_agg(md5(i::text), '') "
                 "FROM generate_series(1, 4000) i");
    ck_assert_int_gt(pgwt_int(c, "SELECT pg_column_size(body) FROM docs"), 100000);
    pgwt_exec(c, "UPDATE docs SET title = 'final' WHERE id = 1");
    pgwt_stream_sync(s, c);
    const char *ins = pgwt_stream_take(s, NULL);
    ck_assert_ptr_nonnull(ins);
    ck_assert_ptr_nonnull(strstr(ins, "\"op\":\"insert\""));
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"docs\",\"op\":\"update\",\"ids\":[\"1\"],"
                    "\"ids_truncated\":false,\"columns\":[\"title\"],\"columns_truncated\":false,"
                    "\"old\":[{\"title\":\"draft\"}],\"new\":[{\"title\":\"final\"}],"
                    "\"pk_changed\":false}");
    pgwt_stream_close(s);
    PQfinish(c);
}
END_TEST

/* publish_via_partition_root: an insert through the root, one straight
 * into a partition and an update that moves a row across partitions are
 * all writes to the partitioned table. A partition cannot be watched. */
START_TEST(partitioned_table_as_its_root)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE m (id int, k int, v text, PRIMARY KEY (id, k)) "
                 "PARTITION BY RANGE (k); "
                 "CREATE TABLE m1 PARTITION OF m FOR VALUES FROM (0) TO (10); "
                 "CREATE TABLE m2 PARTITION OF m FOR VALUES FROM (10) TO (20)");
    stream_watch(c, "m", "v");
    pgw_pq_stream_watch_options o = PGW_PQ_STREAM_WATCH_OPTIONS_INIT;
    pgw_error err;
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "m1", &o, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "public.m1 is a partition: watch its partitioned table "
                                  "public.m, whose writes include it (published via the "
                                  "partition root)");
    pgwt_stream *s = pgwt_stream_open(NULL, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    pgwt_exec(c, "INSERT INTO m VALUES (1, 5, 'a')");
    pgwt_exec(c, "INSERT INTO m2 VALUES (2, 12, 'b')");
    pgwt_exec(c, "UPDATE m SET k = 15 WHERE id = 1");
    /* A partition attached after the watch is covered too. */
    pgwt_exec(c, "CREATE TABLE m3 PARTITION OF m FOR VALUES FROM (20) TO (30)");
    pgwt_exec(c, "INSERT INTO m3 VALUES (3, 25, 'c')");
    pgwt_stream_sync(s, c);
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"m\",\"op\":\"insert\","
                    "\"ids\":[[\"1\",\"5\"]],\"ids_truncated\":false,\"columns\":null,"
                    "\"columns_truncated\":false,\"new\":[{\"v\":\"a\"}],\"pk_changed\":false}");
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"m\",\"op\":\"insert\","
                    "\"ids\":[[\"2\",\"12\"]],\"ids_truncated\":false,\"columns\":null,"
                    "\"columns_truncated\":false,\"new\":[{\"v\":\"b\"}],\"pk_changed\":false}");
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"m\",\"op\":\"delete\","
                    "\"ids\":[[\"1\",\"5\"]],\"ids_truncated\":false,\"columns\":null,"
                    "\"columns_truncated\":false,\"pk_changed\":false}");
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"m\",\"op\":\"insert\","
                    "\"ids\":[[\"1\",\"15\"]],\"ids_truncated\":false,\"columns\":null,"
                    "\"columns_truncated\":false,\"new\":[{\"v\":\"a\"}],\"pk_changed\":false}");
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"m\",\"op\":\"insert\","
                    "\"ids\":[[\"3\",\"25\"]],\"ids_truncated\":false,\"columns\":null,"
                    "\"columns_truncated\":false,\"new\":[{\"v\":\"c\"}],\"pk_changed\":false}");
    EXPECT_NO_WRITE(s);
    pgwt_stream_close(s);
    PQfinish(c);
}
END_TEST

/* The TRUNCATE of one partition is not published via the root: the
 * partition's TRUNCATE trigger sends it as a logical message, reported as
 * the root's truncate (issue 16). A partition attached later lacks the
 * trigger (a GAP) until the root is watched again; unwatching drops them. */
START_TEST(truncate_of_a_partition)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE tp (id int, k int, PRIMARY KEY (id, k)) PARTITION BY RANGE (k); "
                 "CREATE TABLE tp1 PARTITION OF tp FOR VALUES FROM (0) TO (10) "
                 "PARTITION BY RANGE (k); "
                 "CREATE TABLE tp1a PARTITION OF tp1 FOR VALUES FROM (0) TO (5); "
                 "CREATE TABLE tp2 PARTITION OF tp FOR VALUES FROM (10) TO (20)");
    stream_watch(c, "tp", NULL);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_trigger "
                                 "WHERE tgname ~ '^pgwitness_stream_truncate_[0-9]+$'"),
                     3);
    char slot[64];
    snprintf(slot, sizeof slot, "pgwt_trunc_%d", (int)getpid());
    pgwt_stream *s = pgwt_stream_open(slot, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    ck_assert_int_eq(s->gaps, 0);
    pgwt_exec(c, "INSERT INTO tp VALUES (1, 1), (2, 12)");
    pgwt_exec(c, "TRUNCATE tp2");
    pgwt_exec(c, "TRUNCATE tp1a");
    pgwt_stream_sync(s, c);
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"tp\",\"op\":\"insert\","
                    "\"ids\":[[\"1\",\"1\"],[\"2\",\"12\"]],\"ids_truncated\":false,"
                    "\"columns\":null,\"columns_truncated\":false,\"pk_changed\":false}");
    const char *trunc = "{\"schema\":\"public\",\"table\":\"tp\",\"op\":\"truncate\",\"ids\":null,"
                        "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                        "\"pk_changed\":false}";
    EXPECT_WRITE(s, trunc);
    EXPECT_WRITE(s, trunc);
    EXPECT_NO_WRITE(s);
    /* A partition created after the watch: a GAP at the next connect. */
    pgwt_exec(c, "CREATE TABLE tp3 PARTITION OF tp FOR VALUES FROM (20) TO (30)");
    pgwt_stream_close(s);
    s = pgwt_stream_open(slot, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    ck_assert_int_eq(s->gaps, 1);
    ck_assert_int_eq(pgwt_stream_count(s, "GAP 0 0 public.tp3 is a partition of public.tp "
                                          "without pgwitness's TRUNCATE trigger, so TRUNCATE "
                                          "public.tp3 is not sent (a publication via the "
                                          "partition root does not publish it): watch public.tp "
                                          "again (pgw_pq_stream_watch_table) to add it"),
                     1);
    char *gaps = pgwt_value(c, "SELECT string_agg(table_name || ' ' || source, ',') "
                               "FROM pgwitness.watch_gaps()");
    ck_assert_str_eq(gaps, "tp3 stream");
    free(gaps);
    stream_watch(c, "tp", NULL);
    pgwt_exec(c, "TRUNCATE tp3");
    pgwt_stream_sync(s, c);
    EXPECT_WRITE(s, trunc);
    EXPECT_NO_WRITE(s);
    /* TRUNCATE of the root: its Truncate message, and each partition's
     * trigger naming the root, give one write set. */
    pgwt_exec(c, "TRUNCATE tp");
    pgwt_stream_sync(s, c);
    EXPECT_WRITE(s, trunc);
    EXPECT_NO_WRITE(s);
    pgwt_stream_close(s);
    bool dropped = false;
    pgw_error err;
    ck_assert_int_eq(pgw_pq_stream_unwatch_table(&dropped, c, "public", "tp", NULL, &err),
                     PGW_OK);
    ck_assert(dropped);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'pgwitness%'"),
                     0);
    drop_slot(c, slot);
    PQfinish(c);
}
END_TEST

/* The partitions' TRUNCATE triggers are ENABLE ALWAYS: under
 * session_replication_role = replica (which never silences the stream's
 * WAL-decoded writes) a partition's TRUNCATE reaches the stream as the
 * root's truncate all the same. One made plain (ENABLE TRIGGER ALL, as a
 * data-only pg_restore runs) or disabled is a GAP and a watch gap until
 * the root is watched again, which alters it back to ALWAYS (the same
 * trigger). */
START_TEST(truncate_of_a_partition_under_replica_role)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE tp (id int, k int, PRIMARY KEY (id, k)) PARTITION BY RANGE (k); "
                 "CREATE TABLE tp1 PARTITION OF tp FOR VALUES FROM (0) TO (10) "
                 "PARTITION BY RANGE (k); "
                 "CREATE TABLE tp1a PARTITION OF tp1 FOR VALUES FROM (0) TO (5); "
                 "CREATE TABLE tp2 PARTITION OF tp FOR VALUES FROM (10) TO (20)");
    stream_watch(c, "tp", NULL);
    const char *modes_sql = "SELECT string_agg(tgrelid::regclass || ':' || tgenabled::text, ' ' "
                            "ORDER BY tgrelid::regclass::text) FROM pg_trigger "
                            "WHERE tgname ~ '^pgwitness_stream_truncate_[0-9]+$'";
    char *modes = pgwt_value(c, modes_sql);
    ck_assert_str_eq(modes, "tp1:A tp1a:A tp2:A");
    free(modes);
    pgwt_stream *s = pgwt_stream_open(NULL, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    ck_assert_int_eq(s->gaps, 0);
    pgwt_exec(c, "SET session_replication_role = replica");
    pgwt_exec(c, "INSERT INTO tp VALUES (1, 1), (2, 12)");
    pgwt_exec(c, "TRUNCATE tp2");
    pgwt_exec(c, "TRUNCATE tp1a");
    pgwt_exec(c, "RESET session_replication_role");
    pgwt_stream_sync(s, c);
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"tp\",\"op\":\"insert\","
                    "\"ids\":[[\"1\",\"1\"],[\"2\",\"12\"]],\"ids_truncated\":false,"
                    "\"columns\":null,\"columns_truncated\":false,\"pk_changed\":false}");
    const char *trunc = "{\"schema\":\"public\",\"table\":\"tp\",\"op\":\"truncate\",\"ids\":null,"
                        "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                        "\"pk_changed\":false}";
    EXPECT_WRITE(s, trunc);
    EXPECT_WRITE(s, trunc);
    EXPECT_NO_WRITE(s);
    pgwt_stream_close(s);
    /* Made plain, and disabled: reported, and planned as an ALTER. */
    char *oids = pgwt_value(c, "SELECT string_agg(oid::text, ',' ORDER BY oid) FROM pg_trigger "
                               "WHERE tgname LIKE 'pgwitness%'");
    pgwt_exec(c, "ALTER TABLE tp2 DISABLE TRIGGER ALL; ALTER TABLE tp2 ENABLE TRIGGER ALL; "
                 "ALTER TABLE tp1a DISABLE TRIGGER USER");
    modes = pgwt_value(c, modes_sql);
    ck_assert_str_eq(modes, "tp1:A tp1a:D tp2:O");
    free(modes);
    char *plan = pgwt_value(c, "SELECT string_agg(relid::regclass || ' ' || missing || ': ' || "
                               "regexp_replace(ddl, '_[0-9]+$', '_<oid>'), ' | ' "
                               "ORDER BY relid::regclass::text) FROM pgwitness.below_plan('tp')");
    ck_assert_str_eq(plan, "tp1a stream: ALTER TABLE public.tp1a ENABLE ALWAYS TRIGGER "
                           "pgwitness_stream_truncate_<oid> | "
                           "tp2 stream: ALTER TABLE public.tp2 ENABLE ALWAYS TRIGGER "
                           "pgwitness_stream_truncate_<oid>");
    free(plan);
    char *gaps = pgwt_value(c, "SELECT string_agg(table_name || ' ' || source, ',' "
                               "ORDER BY table_name) FROM pgwitness.watch_gaps()");
    ck_assert_str_eq(gaps, "tp1a stream,tp2 stream");
    free(gaps);
    s = pgwt_stream_open(NULL, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    ck_assert_int_eq(s->gaps, 2);
    ck_assert_int_eq(pgwt_stream_count(s, "GAP 0 0 public.tp1a is a partition of public.tp "
                                          "whose pgwitness TRUNCATE trigger is disabled, so "
                                          "TRUNCATE public.tp1a is not sent (a publication via "
                                          "the partition root does not publish it): watch "
                                          "public.tp again (pgw_pq_stream_watch_table) to make "
                                          "it ENABLE ALWAYS"),
                     1);
    ck_assert_int_eq(pgwt_stream_count(s, "GAP 0 0 public.tp2 is a partition of public.tp "
                                          "whose pgwitness TRUNCATE trigger is not ENABLE "
                                          "ALWAYS, so TRUNCATE public.tp2 is not sent under "
                                          "session_replication_role = replica (a publication "
                                          "via the partition root does not publish it): watch "
                                          "public.tp again (pgw_pq_stream_watch_table) to make "
                                          "it ENABLE ALWAYS"),
                     1);
    /* Watching again: ALWAYS again, the same triggers; nothing left. */
    stream_watch(c, "tp", NULL);
    modes = pgwt_value(c, modes_sql);
    ck_assert_str_eq(modes, "tp1:A tp1a:A tp2:A");
    free(modes);
    char *again = pgwt_value(c, "SELECT string_agg(oid::text, ',' ORDER BY oid) FROM pg_trigger "
                                "WHERE tgname LIKE 'pgwitness%'");
    ck_assert_str_eq(again, oids);
    free(again);
    free(oids);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.below_plan('tp')"), 0);
    pgwt_exec(c, "INSERT INTO tp VALUES (3, 13)");
    pgwt_exec(c, "SET session_replication_role = replica");
    pgwt_exec(c, "TRUNCATE tp2");
    pgwt_exec(c, "RESET session_replication_role");
    pgwt_stream_sync(s, c);
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"tp\",\"op\":\"insert\","
                    "\"ids\":[[\"3\",\"13\"]],\"ids_truncated\":false,"
                    "\"columns\":null,\"columns_truncated\":false,\"pk_changed\":false}");
    EXPECT_WRITE(s, trunc);
    EXPECT_NO_WRITE(s);
    pgwt_stream_close(s);
    PQfinish(c);
}
END_TEST

/* A subscription over a watched table, fed by the stream and re-run after
 * every write (the stream's counterpart of check_watch.c's rsub): its
 * result's first `n_key` columns are the table's primary key. */
typedef struct ssub {
    const char *sql;
    size_t n_key;
    pgw_index *idx;
    pgw_runner_id runner;
    char *result;
} ssub;

/* The whole result of `sql`, as one text (malloc'd). */
static char *ssub_rerun(PGconn *c, const char *sql)
{
    char q[1024];
    snprintf(q, sizeof q, "SELECT coalesce(string_agg(x::text, ';'), '') FROM (%s) x", sql);
    return pgwt_value(c, q);
}

/* Acknowledges the running runner with its result's row IDs. */
static void ssub_ack(PGconn *c, ssub *sb)
{
    PGresult *r = PQexec(c, sb->sql);
    ck_assert_int_eq(PQresultStatus(r), PGRES_TUPLES_OK);
    int n = PQntuples(r);
    const char **parts = calloc((size_t)n * sb->n_key + 1, sizeof *parts);
    pgw_rowid *ids = calloc((size_t)n + 1, sizeof *ids);
    ck_assert(parts && ids);
    for (int i = 0; i < n; i++) {
        for (size_t j = 0; j < sb->n_key; j++)
            parts[(size_t)i * sb->n_key + j] = PQgetvalue(r, i, (int)j);
        ids[i].parts = &parts[(size_t)i * sb->n_key];
        ids[i].n_parts = sb->n_key;
    }
    pgw_error err;
    ck_assert_msg(pgw_index_ack(sb->idx, sb->runner, ids, (size_t)n, &err) == PGW_OK, "%s",
                  err.message);
    free(parts);
    free(ids);
    PQclear(r);
    free(sb->result);
    sb->result = ssub_rerun(c, sb->sql);
}

/* Registers `tables` (a declaration's "tables") for sb->sql in a new
 * index, opens a stream on a temporary slot that feeds it, and runs the
 * subscription once streaming (the new slot's reset marked it dirty). */
static pgwt_stream *ssub_open(ssub *sb, PGconn *c, const char *tables)
{
    ck_assert_int_eq(pgw_index_new(&sb->idx, NULL, NULL), PGW_OK);
    char json[1024];
    snprintf(json, sizeof json, "{\"scope\":" PGWT_SCOPE_JSON ",\"query\":\"%s\",\"tables\":%s}",
             sb->sql, tables);
    pgw_deps *d = NULL;
    pgw_error err;
    ck_assert_msg(pgw_deps_from_json(&d, json, strlen(json), &err) == PGW_OK, "%s", err.message);
    ck_assert_int_eq(pgw_index_register(&sb->runner, sb->idx, d, &err), PGW_OK);
    pgw_deps_free(d);
    pgwt_stream *s = pgwt_stream_open(NULL, sb->idx, NULL);
    pgwt_stream_until_streaming(s, 1);
    pgw_dirty dd;
    bool popped = false;
    while (pgw_index_pop_dirty(&dd, sb->idx) == PGW_OK)
        popped = popped || dd.runner == sb->runner;
    if (!popped)
        ck_assert_int_eq(pgw_index_begin(sb->idx, sb->runner, &err), PGW_OK);
    sb->result = NULL;
    ssub_ack(c, sb);
    return s;
}

/* Runs `sql`, expects exactly the write set `want` from the stream (and no
 * other) and, when the subscription's re-run result changed, that the
 * stream's write set marked it dirty in the index (a missed refresh
 * fails). Returns whether the result changed; *dirty (when non-NULL)
 * receives whether it was marked. */
static bool stream_write_and_rerun(PGconn *c, pgwt_stream *s, ssub *sb, const char *sql,
                                   const char *want, bool *dirty)
{
    pgwt_exec(c, sql);
    pgwt_stream_sync(s, c);
    const char *got = pgwt_stream_take(s, NULL);
    ck_assert_msg(got != NULL, "%s: no write set; expected %s", sql, want);
    ck_assert_msg(strcmp(got, want) == 0, "%s:\n got  %s\n want %s", sql, got, want);
    EXPECT_NO_WRITE(s);
    char *now = ssub_rerun(c, sb->sql);
    bool changed = strcmp(now, sb->result) != 0;
    free(now);
    pgw_dirty dd;
    bool marked = pgw_index_pop_dirty(&dd, sb->idx) == PGW_OK;
    ck_assert(!marked || dd.runner == sb->runner);
    ck_assert_msg(!changed || marked, "%s: the result of %s changed but it was not refreshed",
                  sql, sb->sql);
    if (marked) /* popped: running */
        ssub_ack(c, sb);
    if (dirty)
        *dirty = marked;
    return changed;
}

/* Issue 16, case 2 on the stream: a subscription over a partitioned root,
 * re-run after an insert through the root, one into a partition, the
 * TRUNCATE of a partition and of a sub-partition: each changed its
 * result, and each was refreshed (0 missed). An insert the filter leaves
 * out changes nothing and is skipped. */
START_TEST(partitions_rerun_subscription)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE rp (id int, k int, v text, PRIMARY KEY (id, k)) "
                 "PARTITION BY RANGE (k); "
                 "CREATE TABLE rp1 PARTITION OF rp FOR VALUES FROM (0) TO (10) "
                 "PARTITION BY RANGE (k); "
                 "CREATE TABLE rp1a PARTITION OF rp1 FOR VALUES FROM (0) TO (5); "
                 "CREATE TABLE rp1b PARTITION OF rp1 FOR VALUES FROM (5) TO (10); "
                 "CREATE TABLE rp2 PARTITION OF rp FOR VALUES FROM (10) TO (20)");
    stream_watch(c, "rp", "v");
    ssub sb = {"SELECT id, k FROM rp WHERE v = 'a' ORDER BY id, k", 2, NULL, 0, NULL};
    pgwt_stream *s =
        ssub_open(&sb, c,
                  "[{\"schema\":\"public\",\"table\":\"rp\",\"columns\":[\"id\",\"k\",\"v\"],"
                  "\"filters\":[{\"column\":\"v\",\"op\":\"eq\",\"values\":[\"a\"]}]}]");
    ck_assert_str_eq(sb.result, "");
    const char *trunc = "{\"schema\":\"public\",\"table\":\"rp\",\"op\":\"truncate\",\"ids\":null,"
                        "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                        "\"pk_changed\":false}";
    bool dirty = false;
    ck_assert(stream_write_and_rerun(c, s, &sb, "INSERT INTO rp VALUES (1, 1, 'a'), (2, 12, 'a')",
                                     "{\"schema\":\"public\",\"table\":\"rp\",\"op\":\"insert\","
                                     "\"ids\":[[\"1\",\"1\"],[\"2\",\"12\"]],"
                                     "\"ids_truncated\":false,\"columns\":null,"
                                     "\"columns_truncated\":false,\"new\":[{\"v\":\"a\"},"
                                     "{\"v\":\"a\"}],\"pk_changed\":false}",
                                     NULL));
    ck_assert_str_eq(sb.result, "(1,1);(2,12)");
    ck_assert(stream_write_and_rerun(c, s, &sb, "INSERT INTO rp2 VALUES (3, 13, 'a')",
                                     "{\"schema\":\"public\",\"table\":\"rp\",\"op\":\"insert\","
                                     "\"ids\":[[\"3\",\"13\"]],\"ids_truncated\":false,"
                                     "\"columns\":null,\"columns_truncated\":false,"
                                     "\"new\":[{\"v\":\"a\"}],\"pk_changed\":false}",
                                     NULL));
    ck_assert_str_eq(sb.result, "(1,1);(2,12);(3,13)");
    /* Not selected by the filter: skipped (the stream's IDs and values). */
    ck_assert(!stream_write_and_rerun(c, s, &sb, "INSERT INTO rp1b VALUES (4, 7, 'b')",
                                      "{\"schema\":\"public\",\"table\":\"rp\",\"op\":\"insert\","
                                      "\"ids\":[[\"4\",\"7\"]],\"ids_truncated\":false,"
                                      "\"columns\":null,\"columns_truncated\":false,"
                                      "\"new\":[{\"v\":\"b\"}],\"pk_changed\":false}",
                                      &dirty));
    ck_assert(!dirty);
    /* The TRUNCATE of a partition, and of a sub-partition: not published
     * via the root, sent by their triggers. */
    ck_assert(stream_write_and_rerun(c, s, &sb, "TRUNCATE rp2", trunc, NULL));
    ck_assert_str_eq(sb.result, "(1,1)");
    ck_assert(stream_write_and_rerun(c, s, &sb, "TRUNCATE rp1a", trunc, NULL));
    ck_assert_str_eq(sb.result, "");
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM rp"), 1); /* rp1b's row is left */
    pgwt_stream_close(s);
    free(sb.result);
    pgw_index_free(sb.idx);
    PQfinish(c);
}
END_TEST

/* An inheritance child's rows are the parent's too; a child made after
 * the watch is reported as a gap until the parent is watched again, which
 * adds it (and refreshes the parent table-wide, for what it missed). */
START_TEST(inheritance_children)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE par (id int PRIMARY KEY, v text); "
                 "CREATE TABLE ch1 (extra int) INHERITS (par); "
                 "ALTER TABLE ch1 ADD PRIMARY KEY (id)");
    stream_watch(c, "par", "v");
    /* A permanent slot: the reconnects below resume it (a temporary one
     * would be made anew, with a reset, each time). */
    char slot[64];
    snprintf(slot, sizeof slot, "pgwt_inh_%d", (int)getpid());
    pgwt_stream *s = pgwt_stream_open(slot, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    ck_assert_int_eq(s->gaps, 0);
    pgwt_exec(c, "INSERT INTO ch1 VALUES (7, 'x', 1)");
    pgwt_stream_sync(s, c);
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"par\",\"op\":\"insert\",\"ids\":[\"7\"],"
                    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                    "\"new\":[{\"v\":\"x\"}],\"pk_changed\":false}");
    /* ch1 is published in its own right (ADD TABLE ONLY ch1): its own
     * write set too, keyed by its own key. */
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"ch1\",\"op\":\"insert\",\"ids\":[\"7\"],"
                    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                    "\"pk_changed\":false}");
    EXPECT_NO_WRITE(s);
    /* A child made after the watch: its writes are not sent... */
    pgwt_exec(c, "CREATE TABLE ch2 () INHERITS (par); ALTER TABLE ch2 ADD PRIMARY KEY (id)");
    pgwt_exec(c, "INSERT INTO ch2 VALUES (8, 'y')");
    pgwt_stream_sync(s, c);
    EXPECT_NO_WRITE(s);
    /* ...which the next connect reports. */
    pgwt_exec(c, "SELECT pg_terminate_backend(pid) FROM pg_stat_replication "
                 "WHERE application_name = 'pgwitness-stream' AND pid IN (SELECT active_pid "
                 "FROM pg_replication_slots WHERE database = current_database())");
    pgwt_stream_until_streaming(s, 2);
    ck_assert_int_eq(s->gaps, 1);
    ck_assert_int_eq(pgwt_stream_count(s, "GAP 0 0 public.ch2 inherits from public.par but is "
                                          "not in publication pgwitness, so its writes are not "
                                          "sent: watch public.par again"),
                     1);
    /* Watching the parent again adds ch2; running streams refresh par
     * table-wide and read the configuration again at that commit. */
    stream_watch(c, "par", "v");
    pgwt_exec(c, "INSERT INTO ch2 VALUES (9, 'z')");
    pgwt_stream_sync(s, c);
    pgwt_stream_until_streaming(s, 3);
    pgwt_stream_sync(s, c);
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"par\",\"op\":\"update\",\"ids\":null,"
                    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                    "\"pk_changed\":false}");
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"par\",\"op\":\"insert\",\"ids\":[\"9\"],"
                    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                    "\"new\":[{\"v\":\"z\"}],\"pk_changed\":false}");
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"ch2\",\"op\":\"insert\",\"ids\":[\"9\"],"
                    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                    "\"pk_changed\":false}");
    EXPECT_NO_WRITE(s);
    ck_assert_int_eq(s->resets, 1); /* only the first, new slot */
    pgwt_stream_close(s);
    drop_slot(c, slot);
    PQfinish(c);
}
END_TEST

/* What would fail a writer is refused, naming the relation; nothing is
 * published, and the writers go on. */
START_TEST(refusals_keep_writers_working)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE nokey (a int, b text); INSERT INTO nokey VALUES (1, 'x');"
                 "CREATE TABLE nothing (id int PRIMARY KEY, v text); "
                 "ALTER TABLE nothing REPLICA IDENTITY NOTHING; INSERT INTO nothing VALUES (1, 'x');"
                 "CREATE TABLE par (id int PRIMARY KEY); CREATE TABLE kid () INHERITS (par);"
                 "CREATE VIEW vw AS SELECT 1 AS x");
    pgw_pq_stream_watch_options o = PGW_PQ_STREAM_WATCH_OPTIONS_INIT;
    pgw_error err;
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "nokey", &o, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message,
                     "public.nokey has no primary key: the stream needs one for row IDs, and "
                     "PostgreSQL fails the UPDATE and DELETE of a published table without a "
                     "replica identity (add a primary key)");
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "nothing", &o, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message,
                     "cannot publish public.nothing without failing writers: public.nothing has "
                     "no usable replica identity (REPLICA IDENTITY NOTHING): add a primary key, "
                     "or run ALTER TABLE public.nothing REPLICA IDENTITY FULL");
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "par", &o, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message,
                     "cannot publish public.par without failing writers: public.kid has no "
                     "usable replica identity (REPLICA IDENTITY DEFAULT without a primary key): "
                     "add a primary key, or run ALTER TABLE public.kid REPLICA IDENTITY FULL");
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "vw", &o, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "public.vw is a view: only tables can be watched");
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "none", &o, &err), PGW_ENOTFOUND);
    ck_assert_str_eq(err.message, "no table public.none");
    /* Nothing changed: no publication was even made. */
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_publication"), 0);
    pgwt_exec(c, "UPDATE nokey SET b = 'y'; DELETE FROM nokey; UPDATE nothing SET v = 'y'; "
                 "DELETE FROM nothing; INSERT INTO kid VALUES (1); UPDATE kid SET id = 2; "
                 "DELETE FROM kid");
    /* The same inside the caller's transaction: it stays usable. */
    pgwt_exec(c, "BEGIN");
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "nokey", &o, &err), PGW_EINVAL);
    pgwt_exec(c, "INSERT INTO nokey VALUES (2, 'z'); COMMIT");
    /* Bad arguments. */
    ck_assert_int_eq(pgw_pq_stream_watch_table(NULL, "public", "t", &o, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "", "t", &o, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "pq_stream_watch_table: schema is NULL or empty");
    o.version = 7;
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "t", &o, &err), PGW_EINVAL);
    PQfinish(c);
}
END_TEST

/* A publication made by hand that does not publish every operation is
 * refused rather than silently missing deletes. */
START_TEST(incomplete_publication_refused)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE t (id int PRIMARY KEY); "
                 "CREATE PUBLICATION pgwitness WITH (publish = 'insert, update')");
    pgw_error err;
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "t", NULL, &err), PGW_ESTATE);
    ck_assert_str_eq(err.message, "publication pgwitness does not publish every operation: "
                                  "ALTER PUBLICATION pgwitness SET (publish = 'insert, update, "
                                  "delete, truncate')");
    PQfinish(c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* placeholders against the re-run query                                */

typedef struct psub {
    const char *sql;     /* its SQL; a list's first column is its row ID */
    const char *tables;  /* its declaration's "tables" */
    bool list;           /* acknowledged with its IDs (else as unknown) */
    pgw_runner_id runner;
    char *result;
} psub;

static char *result_of(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK, "%s: %s", sql, PQerrorMessage(c));
    size_t len = 1;
    for (int i = 0; i < PQntuples(r); i++)
        for (int j = 0; j < PQnfields(r); j++)
            len += (size_t)PQgetlength(r, i, j) + 2;
    char *out = calloc(1, len);
    ck_assert_ptr_nonnull(out);
    for (int i = 0; i < PQntuples(r); i++)
        for (int j = 0; j < PQnfields(r); j++) {
            strcat(out, PQgetvalue(r, i, j));
            strcat(out, j + 1 < PQnfields(r) ? "," : ";");
        }
    PQclear(r);
    return out;
}

static void ack(pgw_index *idx, PGconn *c, psub *sb)
{
    if (!sb->list) {
        ck_assert_int_eq(pgw_index_ack_unknown(idx, sb->runner, NULL), PGW_OK);
        return;
    }
    PGresult *r = PQexec(c, sb->sql);
    ck_assert_int_eq(PQresultStatus(r), PGRES_TUPLES_OK);
    int n = PQntuples(r);
    const char **parts = calloc((size_t)n + 1, sizeof *parts);
    pgw_rowid *ids = calloc((size_t)n + 1, sizeof *ids);
    for (int i = 0; i < n; i++) {
        parts[i] = PQgetvalue(r, i, 0);
        ids[i].parts = &parts[i];
        ids[i].n_parts = 1;
    }
    pgw_error err;
    ck_assert_msg(pgw_index_ack(idx, sb->runner, ids, (size_t)n, &err) == PGW_OK, "%s",
                  err.message);
    free(parts);
    free(ids);
    PQclear(r);
}

/* Under DEFAULT, and on a DEFAULT partition of a FULL partitioned table,
 * the old tuples of deletes and key changes carry only the key: random
 * writes, every subscription re-run after each, and a changed result
 * whose runner was not marked is a missed refresh. */
START_TEST(placeholders_never_skip_wrongly)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE acc (id int PRIMARY KEY, owner text, status text);"
                 "CREATE TABLE prt (id int, k int, owner text, status text, PRIMARY KEY (id, k)) "
                 "PARTITION BY RANGE (k);"
                 "ALTER TABLE prt REPLICA IDENTITY FULL;"
                 "CREATE TABLE prt1 PARTITION OF prt FOR VALUES FROM (0) TO (50);"
                 "CREATE TABLE prt2 PARTITION OF prt FOR VALUES FROM (50) TO (100);"
                 "ALTER TABLE prt2 REPLICA IDENTITY FULL");
    char *idents = pgwt_value(c, "SELECT string_agg(relname || '=' || relreplident::text, ',' "
                                 "ORDER BY relname) FROM pg_class WHERE relname LIKE 'prt%' "
                                 "AND relkind IN ('r', 'p')");
    ck_assert_str_eq(idents, "prt=f,prt1=d,prt2=f");
    free(idents);
    stream_watch(c, "acc", "owner,status");
    stream_watch(c, "prt", "owner,status");
    pgw_index *idx = NULL;
    ck_assert_int_eq(pgw_index_new(&idx, NULL, NULL), PGW_OK);
    psub subs[] = {
        {"SELECT count(*) FROM acc WHERE status = 'open'",
         "[{\"schema\":\"public\",\"table\":\"acc\",\"columns\":[],"
         "\"filters\":[{\"column\":\"status\",\"op\":\"eq\",\"values\":[\"open\"]}]}]", false},
        {"SELECT id FROM acc WHERE status = 'open' ORDER BY id",
         "[{\"schema\":\"public\",\"table\":\"acc\",\"columns\":[\"id\"],"
         "\"filters\":[{\"column\":\"status\",\"op\":\"eq\",\"values\":[\"open\"]}]}]", true},
        {"SELECT id FROM acc WHERE owner = 'ann' ORDER BY id",
         "[{\"schema\":\"public\",\"table\":\"acc\",\"columns\":[\"id\"],"
         "\"filters\":[{\"column\":\"owner\",\"op\":\"eq\",\"values\":[\"ann\"]}]}]", true},
        {"SELECT id, status FROM acc ORDER BY id LIMIT 3",
         "[{\"schema\":\"public\",\"table\":\"acc\",\"columns\":[\"id\",\"status\"],"
         "\"order_by\":[\"id\"],\"limit\":3}]", true},
        {"SELECT count(*) FROM prt WHERE status = 'open'",
         "[{\"schema\":\"public\",\"table\":\"prt\",\"columns\":[],"
         "\"filters\":[{\"column\":\"status\",\"op\":\"eq\",\"values\":[\"open\"]}]}]", false},
        {"SELECT sum(k) FROM prt WHERE owner = 'ann'",
         "[{\"schema\":\"public\",\"table\":\"prt\",\"columns\":[\"k\"],"
         "\"filters\":[{\"column\":\"owner\",\"op\":\"eq\",\"values\":[\"ann\"]}]}]", false},
        {"SELECT count(*) FROM prt WHERE owner = 'bob' AND status = 'done'",
         "[{\"schema\":\"public\",\"table\":\"prt\",\"columns\":[],"
         "\"filters\":[{\"column\":\"owner\",\"op\":\"eq\",\"values\":[\"bob\"]},"
         "{\"column\":\"status\",\"op\":\"eq\",\"values\":[\"done\"]}]}]", false},
    };
    size_t n_subs = sizeof subs / sizeof *subs;
    for (size_t i = 0; i < n_subs; i++) {
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"scope\":{\"project\":\"p\",\"tenant\":\"acme\",\"database\":\"db\"},"
                 "\"query\":\"q%zu\",\"tables\":%s}",
                 i, subs[i].tables);
        pgw_deps *d = NULL;
        pgw_error err;
        ck_assert_msg(pgw_deps_from_json(&d, json, strlen(json), &err) == PGW_OK, "%s",
                      err.message);
        ck_assert_int_eq(pgw_index_register(&subs[i].runner, idx, d, &err), PGW_OK);
        pgw_deps_free(d);
    }
    pgwt_stream *s = pgwt_stream_open(NULL, idx, NULL);
    pgwt_stream_until_streaming(s, 1);
    /* The new slot reset the scope: every runner is dirty; rerun all. */
    pgw_dirty dd;
    while (pgw_index_pop_dirty(&dd, idx) == PGW_OK)
        ;
    for (size_t i = 0; i < n_subs; i++) {
        subs[i].result = result_of(c, subs[i].sql);
        ack(idx, c, &subs[i]);
    }
    static const char *const owners[] = {"ann", "bob", "cy"};
    static const char *const stats[] = {"open", "done"};
    uint64_t seed = 0x9e3779b97f4a7c15u;
    int writes = (int)(400 * test_scale()), skips = 0, refreshes = 0;
    for (int w = 0; w < writes; w++) {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        const char *tbl = (seed >> 60) & 1 ? "prt" : "acc";
        int id = (int)(seed % 24), op = (int)((seed >> 8) % 6);
        int k = (int)((seed >> 16) % 100);
        const char *ow = owners[(seed >> 24) % 3], *st = stats[(seed >> 28) % 2];
        char sql[256];
        bool part = strcmp(tbl, "prt") == 0;
        switch (op) {
        case 0:
        case 1:
            if (part)
                snprintf(sql, sizeof sql,
                         "INSERT INTO prt VALUES (%d, %d, '%s', '%s') ON CONFLICT DO NOTHING", id,
                         k, ow, st);
            else
                snprintf(sql, sizeof sql,
                         "INSERT INTO acc VALUES (%d, '%s', '%s') ON CONFLICT DO NOTHING", id,
                         ow, st);
            break;
        case 2:
            snprintf(sql, sizeof sql, "UPDATE %s SET status = '%s' WHERE id %% 3 = %d", tbl, st,
                     id % 3);
            break;
        case 3: /* a key change: under DEFAULT, a key-only old tuple */
            snprintf(sql, sizeof sql,
                     part ? "UPDATE prt SET k = (k + 37) %% 100 WHERE id = %d"
                          : "UPDATE acc SET id = id + 24 WHERE id = %d AND NOT EXISTS (SELECT "
                            "FROM acc a WHERE a.id = %d + 24)",
                     id, id);
            break;
        case 4: /* deletes: a key-only old tuple under DEFAULT */
            snprintf(sql, sizeof sql, "DELETE FROM %s WHERE owner = '%s' AND id %% 4 = %d", tbl,
                     ow, id % 4);
            break;
        default:
            snprintf(sql, sizeof sql, "UPDATE %s SET owner = '%s' WHERE id = %d", tbl, ow, id);
            break;
        }
        pgwt_exec(c, sql);
        pgwt_stream_sync(s, c);
        bool dirty[16] = {false};
        while (pgw_index_pop_dirty(&dd, idx) == PGW_OK)
            for (size_t i = 0; i < n_subs; i++)
                if (subs[i].runner == dd.runner)
                    dirty[i] = true;
        for (size_t i = 0; i < n_subs; i++) {
            char *now = result_of(c, subs[i].sql);
            bool changed = strcmp(now, subs[i].result) != 0;
            ck_assert_msg(!changed || dirty[i],
                          "missed refresh of %s after %s: %s -> %s", subs[i].sql, sql,
                          subs[i].result, now);
            free(subs[i].result);
            subs[i].result = now;
            if (dirty[i]) {
                refreshes++;
                ack(idx, c, &subs[i]);
            } else {
                skips++;
            }
        }
    }
    /* Something was skipped, or the test proves nothing. */
    ck_assert_int_gt(skips, 0);
    ck_assert_int_gt(refreshes, 0);
    for (size_t i = 0; i < n_subs; i++)
        free(subs[i].result);
    pgwt_stream_close(s);
    pgw_index_free(idx);
    PQfinish(c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* boundaries                                                           */

/* What never reaches the stream, and what does only at its commit. */
START_TEST(boundaries)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE t (id int PRIMARY KEY, v text); CREATE TABLE other (id int "
                 "PRIMARY KEY)");
    stream_watch(c, "t", NULL);
    pgwt_stream *s = pgwt_stream_open(NULL, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    PGconn *w = pgwt_connect();
    /* A rollback is invisible. */
    pgwt_exec(w, "BEGIN; INSERT INTO t VALUES (1, 'a'); ROLLBACK");
    pgwt_stream_sync(s, w);
    EXPECT_NO_WRITE(s);
    /* Nothing before the commit: an open transaction's write is not
     * delivered, even after the stream read past it. */
    pgwt_exec(w, "BEGIN; INSERT INTO t VALUES (2, 'b')");
    pgwt_stream_sync(s, c);
    EXPECT_NO_WRITE(s);
    pgwt_exec(w, "COMMIT");
    pgwt_stream_sync(s, w);
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"t\",\"op\":\"insert\",\"ids\":[\"2\"],"
                    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                    "\"pk_changed\":false}");
    /* An unwatched table's writes are never delivered. */
    pgwt_exec(w, "INSERT INTO other VALUES (1); UPDATE other SET id = 2; DELETE FROM other");
    pgwt_stream_sync(s, w);
    EXPECT_NO_WRITE(s);
    /* Under session_replication_role = replica (which silences triggers)
     * the write is in the WAL all the same. */
    pgwt_exec(w, "SET session_replication_role = replica; INSERT INTO t VALUES (3, 'c'); "
                 "RESET session_replication_role");
    pgwt_stream_sync(s, w);
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"t\",\"op\":\"insert\",\"ids\":[\"3\"],"
                    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                    "\"pk_changed\":false}");
    /* Two-phase commit: delivered when, and only when, COMMIT PREPARED
     * runs; a ROLLBACK PREPARED never. */
    char gid[64];
    snprintf(gid, sizeof gid, "pgwt_2pc_%d", (int)getpid());
    char sql[256];
    snprintf(sql, sizeof sql, "BEGIN; INSERT INTO t VALUES (4, 'd'); PREPARE TRANSACTION '%s'",
             gid);
    pgwt_exec(w, sql);
    pgwt_stream_sync(s, w);
    EXPECT_NO_WRITE(s);
    snprintf(sql, sizeof sql, "COMMIT PREPARED '%s'", gid);
    pgwt_exec(w, sql);
    pgwt_stream_sync(s, w);
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"t\",\"op\":\"insert\",\"ids\":[\"4\"],"
                    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                    "\"pk_changed\":false}");
    snprintf(sql, sizeof sql, "BEGIN; INSERT INTO t VALUES (5, 'e'); PREPARE TRANSACTION '%s'",
             gid);
    pgwt_exec(w, sql);
    snprintf(sql, sizeof sql, "ROLLBACK PREPARED '%s'", gid);
    pgwt_exec(w, sql);
    pgwt_stream_sync(s, w);
    EXPECT_NO_WRITE(s);
    /* A truncate of the watched table is delivered. */
    pgwt_exec(w, "TRUNCATE t");
    pgwt_stream_sync(s, w);
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"t\",\"op\":\"truncate\",\"ids\":null,"
                    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                    "\"pk_changed\":false}");
    EXPECT_NO_WRITE(s);
    ck_assert_int_eq(s->resets, 1);
    ck_assert_int_eq(s->lost, 0);
    PQfinish(w);
    pgwt_stream_close(s);
    PQfinish(c);
}
END_TEST

/* Two tenant databases, each with its stream: their writes never mix. */
START_TEST(two_tenant_databases_never_mix)
{
    PGconn *c = setup();
    char other[64], sql[256];
    snprintf(other, sizeof other, "%s_b", pgwt_dbname());
    PGconn *a = pgwt_connect_opts("dbname=postgres");
    ck_assert_ptr_nonnull(a);
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS \"%s\" WITH (FORCE)", other);
    pgwt_exec(a, sql);
    snprintf(sql, sizeof sql, "CREATE DATABASE \"%s\"", other);
    pgwt_exec(a, sql);
    snprintf(sql, sizeof sql, "dbname=%s", other);
    PGconn *b = pgwt_connect_opts(sql);
    ck_assert_ptr_nonnull(b);
    pgw_error err;
    ck_assert_int_eq(pgw_pq_install(NULL, b, NULL, &err), PGW_OK);
    pgwt_exec(c, "CREATE TABLE t (id int PRIMARY KEY)");
    pgwt_exec(b, "CREATE TABLE t (id int PRIMARY KEY)");
    stream_watch(c, "t", NULL);
    ck_assert_int_eq(pgw_pq_stream_watch_table(b, "public", "t", NULL, &err), PGW_OK);
    pgwt_stream *sa = pgwt_stream_open(NULL, NULL, NULL);
    pgw_scope globex = {"p", "globex", "db"};
    pgwt_stream *sb = pgwt_stream_open_db(other, &globex, NULL, NULL, NULL);
    pgwt_stream_until_streaming(sa, 1);
    pgwt_stream_until_streaming(sb, 1);
    pgwt_exec(c, "INSERT INTO t VALUES (1)");
    pgwt_exec(b, "INSERT INTO t VALUES (2)");
    pgwt_stream_sync(sa, c);
    pgwt_stream_sync(sb, b);
    pgwt_stream_sync(sa, b); /* WAL is cluster-wide: sa reads past b's write too */
    EXPECT_WRITE(sa, "{\"schema\":\"public\",\"table\":\"t\",\"op\":\"insert\",\"ids\":[\"1\"],"
                     "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                     "\"pk_changed\":false}");
    EXPECT_NO_WRITE(sa);
    EXPECT_WRITE(sb, "{\"schema\":\"public\",\"table\":\"t\",\"op\":\"insert\",\"ids\":[\"2\"],"
                     "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                     "\"pk_changed\":false}");
    EXPECT_NO_WRITE(sb);
    pgwt_stream_close(sa);
    pgwt_stream_close(sb);
    PQfinish(b);
    /* Its walsender ends a moment after the stream closed; until then its
     * temporary slot keeps the database in use. */
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS \"%s\" WITH (FORCE)", other);
    bool dropped = false;
    for (int i = 0; i < 500 && !dropped; i++) {
        PGresult *r = PQexec(a, sql);
        dropped = PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
        if (!dropped)
            usleep(10000);
    }
    ck_assert(dropped);
    PQfinish(a);
    PQfinish(c);
}
END_TEST

/* A transaction of 200,000 rows: every write set delivered, in bounded
 * memory (the decoder's buffer, measured through the allocator hook), and,
 * past a small budget, as one table-wide write set. */
START_TEST(large_transaction_bounded)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE big (id int PRIMARY KEY, v text)");
    stream_watch(c, "big", "v");
    int rows = (int)(200000 * test_scale());
    char sql[256];
    /* The default budget (64 MiB): 1000 IDs a write set, all delivered. */
    pgwt_alloc_install();
    pgwt_stream *s = pgwt_stream_open(NULL, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    size_t base = pgwt_alloc_get().live_bytes;
    pgwt_alloc_reset();
    snprintf(sql, sizeof sql, "INSERT INTO big SELECT i, 'v' || i FROM generate_series(1, %d) i",
             rows);
    pgwt_exec(c, sql);
    pgwt_stream_sync(s, c);
    size_t peak = pgwt_alloc_get().peak_bytes;
    size_t writes = 0, ids = 0;
    const char *j;
    while ((j = pgwt_stream_take(s, NULL)) != NULL) {
        writes++;
        ck_assert_ptr_nonnull(strstr(j, "\"op\":\"insert\""));
        for (const char *p = strstr(j, "\"ids\":["); p && *p != ']'; p++)
            ids += *p == ',' || (p[0] == '[' && p[1] == '"');
    }
    ck_assert_uint_eq(writes, (size_t)(rows + 999) / 1000);
    ck_assert_uint_eq(ids, (size_t)rows);
    pgw_pq_stream_stats st;
    ck_assert_int_eq(pgw_pq_listener_stream_stats(&st, s->l, s->tenant, NULL), PGW_OK);
    ck_assert_uint_le(st.peak_txn_bytes, (size_t)64 << 20);
    fprintf(stderr, "# %d rows: %zu write sets, decoder buffer peak %zu bytes, allocator peak "
                    "%zu bytes above %zu\n",
            rows, writes, st.peak_txn_bytes, peak, base);
    ck_assert_uint_le(peak, (size_t)96 << 20);
    pgwt_stream_close(s);
    /* A 1 MiB budget: one write set with unknown IDs, memory bounded by
     * the budget whatever the transaction's size. */
    pgw_pq_stream_options so = PGW_PQ_STREAM_OPTIONS_INIT;
    so.status_interval_ms = 100;
    so.max_txn_bytes = (size_t)1 << 20;
    s = pgwt_stream_open(NULL, NULL, &so);
    pgwt_stream_until_streaming(s, 1);
    pgwt_alloc_reset();
    snprintf(sql, sizeof sql, "UPDATE big SET v = v || '!'");
    pgwt_exec(c, sql);
    pgwt_stream_sync(s, c);
    peak = pgwt_alloc_get().peak_bytes;
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"big\",\"op\":\"update\",\"ids\":null,"
                    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                    "\"pk_changed\":false}");
    EXPECT_NO_WRITE(s);
    ck_assert_int_eq(pgw_pq_listener_stream_stats(&st, s->l, s->tenant, NULL), PGW_OK);
    fprintf(stderr, "# %d rows under a 1 MiB budget: decoder buffer peak %zu bytes, allocator "
                    "peak %zu bytes\n",
            rows, st.peak_txn_bytes, peak);
    ck_assert_uint_le(peak, 3u << 20);
    pgwt_stream_close(s);
    ck_assert_uint_eq(pgwt_alloc_get().live, 0);
    pgwt_alloc_uninstall();
    PQfinish(c);
}
END_TEST

/* The slot's confirmed position follows what was handled, and, while
 * nothing is in flight, the server's position too: WAL does not pile up
 * behind writes to unwatched tables. */
START_TEST(confirmed_position_advances)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE t (id int PRIMARY KEY); CREATE TABLE other (id int)");
    stream_watch(c, "t", NULL);
    char slot[64], sql[256];
    snprintf(slot, sizeof slot, "pgwt_conf_%d", (int)getpid());
    pgwt_stream *s = pgwt_stream_open(slot, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    pgwt_exec(c, "INSERT INTO t VALUES (1)");
    pgwt_stream_sync(s, c);
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"t\",\"op\":\"insert\",\"ids\":[\"1\"],"
                    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                    "\"pk_changed\":false}");
    /* Unwatched traffic only. */
    pgwt_exec(c, "INSERT INTO other SELECT generate_series(1, 20000)");
    char *target = pgwt_value(c, "SELECT pg_current_wal_insert_lsn()");
    snprintf(sql, sizeof sql,
             "SELECT confirmed_flush_lsn >= '%s'::pg_lsn FROM pg_replication_slots "
             "WHERE slot_name = '%s'",
             target, slot);
    free(target);
    bool reached = false;
    for (int i = 0; i < 400 && !reached; i++) {
        pgwt_stream_run(s, 10);
        char *v = pgwt_value(c, sql);
        reached = strcmp(v, "t") == 0;
        free(v);
    }
    ck_assert_msg(reached, "the slot's confirmed position did not pass unwatched traffic");
    pgw_pq_stream_stats st;
    ck_assert_int_eq(pgw_pq_listener_stream_stats(&st, s->l, s->tenant, NULL), PGW_OK);
    ck_assert_str_eq(st.slot, slot);
    ck_assert_uint_ge(st.confirmed_lsn, st.handled_lsn > 0 ? 1 : 0);
    ck_assert_uint_gt(st.status_updates, 0);
    ck_assert_uint_eq(st.writes, 1);
    ck_assert_uint_eq(st.resets, 1);
    /* pgw_pq_slots lists it as pgwitness's, active; it cannot be dropped
     * while in use; closed, it keeps its WAL until dropped. */
    pgw_pq_slot_info *slots = NULL;
    size_t n = 0;
    pgw_error err;
    ck_assert_int_eq(pgw_pq_slots(&slots, &n, c, NULL, &err), PGW_OK);
    const pgw_pq_slot_info *mine = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(slots[i].name, slot) == 0)
            mine = &slots[i];
    ck_assert_ptr_nonnull(mine);
    ck_assert(mine->pgwitness);
    ck_assert(mine->active);
    ck_assert(!mine->temporary);
    ck_assert_str_eq(mine->plugin, "pgoutput");
    ck_assert_str_eq(mine->database, pgwt_dbname());
    ck_assert_str_eq(mine->wal_status, "reserved");
    ck_assert_int_eq(mine->safe_wal_size, -1);
    ck_assert_int_gt(mine->confirmed_lsn, 0);
    pgw_free(slots);
    ck_assert_int_eq(pgw_pq_drop_slot(c, slot, NULL, &err), PGW_ESTATE);
    ck_assert_msg(strstr(err.message, "is active for PID"), "%s", err.message);
    pgwt_stream_close(s);
    drop_slot(c, slot);
    ck_assert_int_eq(pgw_pq_drop_slot(c, slot, NULL, &err), PGW_ENOTFOUND);
    ck_assert_msg(strstr(err.message, "does not exist"), "%s", err.message);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.slots"), 0);
    PQfinish(c);
}
END_TEST

/* Closing a stream on purpose confirms what it handled: a slot whose
 * status updates are a minute apart still resumes right after the last
 * write set delivered. */
START_TEST(close_confirms_what_was_handled)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE t (id int PRIMARY KEY)");
    stream_watch(c, "t", NULL);
    char slot[64], sql[256];
    snprintf(slot, sizeof slot, "pgwt_close_%d", (int)getpid());
    pgw_pq_stream_options so = PGW_PQ_STREAM_OPTIONS_INIT;
    so.status_interval_ms = 60000;
    pgwt_stream *s = pgwt_stream_open(slot, NULL, &so);
    pgwt_stream_until_streaming(s, 1);
    pgwt_exec(c, "INSERT INTO t VALUES (1)");
    pgwt_stream_sync(s, c);
    ck_assert_ptr_nonnull(pgwt_stream_take(s, NULL));
    pgw_pq_stream_stats st;
    ck_assert_int_eq(pgw_pq_listener_stream_stats(&st, s->l, s->tenant, NULL), PGW_OK);
    ck_assert_uint_gt(st.handled_lsn, st.confirmed_lsn);
    char handled[PGW_LSN_TEXT_SIZE];
    pgw_lsn_format(handled, st.handled_lsn);
    pgwt_stream_close(s);
    snprintf(sql, sizeof sql,
             "SELECT NOT active AND confirmed_flush_lsn >= '%s'::pg_lsn FROM "
             "pg_replication_slots WHERE slot_name = '%s'",
             handled, slot);
    bool ok = false;
    for (int i = 0; i < 500 && !ok; i++) {
        char *v = pgwt_value(c, sql);
        ok = strcmp(v, "t") == 0;
        free(v);
        if (!ok)
            usleep(10000);
    }
    ck_assert_msg(ok, "the slot was not confirmed up to %s on close", handled);
    /* The next process starts after it: nothing again. */
    s = pgwt_stream_open(slot, NULL, &so);
    pgwt_stream_until_streaming(s, 1);
    ck_assert_int_eq(s->resets, 0);
    pgwt_stream_sync(s, c);
    EXPECT_NO_WRITE(s);
    pgwt_stream_close(s);
    drop_slot(c, slot);
    PQfinish(c);
}
END_TEST

/* A definition change reaches the stream in the Relation message pgoutput
 * sends before the table's next change: ALTER TABLE ... RENAME COLUMN then
 * INSERT gives the ddl write set, then the insert; so does an ALTER inside
 * the transaction that wrote the table before and after it (the ddl
 * first). A DDL with no later write sends nothing: it needs the
 * announcement, a logical message with the ddl payload. */
START_TEST(ddl_then_insert)
{
    PGconn *c = setup();
    pgwt_exec(c, "CREATE TABLE tasks (id int PRIMARY KEY, title text, status text, notes text)");
    stream_watch(c, "tasks", "status");
    pgwt_stream *s = pgwt_stream_open(NULL, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    const char *ddl = "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"ddl\"}";
    pgwt_exec(c, "INSERT INTO tasks VALUES (1, 'a', 'open', NULL)");
    pgwt_stream_sync(s, c);
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\",\"ids\":[\"1\"],"
                    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                    "\"new\":[{\"status\":\"open\"}],\"pk_changed\":false}");
    pgwt_exec(c, "ALTER TABLE tasks RENAME COLUMN notes TO remarks");
    pgwt_exec(c, "INSERT INTO tasks VALUES (2, 'b', 'open', NULL)");
    pgwt_stream_sync(s, c);
    EXPECT_WRITE(s, ddl);
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\",\"ids\":[\"2\"],"
                    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                    "\"new\":[{\"status\":\"open\"}],\"pk_changed\":false}");
    EXPECT_NO_WRITE(s);
    /* In one transaction, around the ALTER. */
    pgwt_exec(c, "BEGIN; INSERT INTO tasks VALUES (3, 'c', 'open', NULL); "
                 "ALTER TABLE tasks ADD COLUMN due date; "
                 "INSERT INTO tasks VALUES (4, 'd', 'done', NULL, '2024-01-01'); COMMIT");
    pgwt_stream_sync(s, c);
    EXPECT_WRITE(s, ddl);
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\","
                    "\"ids\":[\"3\",\"4\"],\"ids_truncated\":false,\"columns\":null,"
                    "\"columns_truncated\":false,\"new\":[{\"status\":\"open\"},"
                    "{\"status\":\"done\"}],\"pk_changed\":false}");
    EXPECT_NO_WRITE(s);
    /* A changed type: the same names, another type. */
    pgwt_exec(c, "ALTER TABLE tasks ALTER COLUMN title TYPE varchar(40)");
    pgwt_exec(c, "UPDATE tasks SET status = 'done' WHERE id = 1");
    pgwt_stream_sync(s, c);
    EXPECT_WRITE(s, ddl);
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\",\"ids\":[\"1\"],"
                    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                    "\"new\":[{\"status\":\"done\"}],\"pk_changed\":false}");
    EXPECT_NO_WRITE(s);
    /* Without a later write: nothing, until announced. */
    pgwt_exec(c, "ALTER TABLE tasks DROP COLUMN remarks");
    pgwt_stream_sync(s, c);
    EXPECT_NO_WRITE(s);
    pgwt_exec(c, "SELECT pg_logical_emit_message(true, 'pgwitness', "
                 "'{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"ddl\"}')");
    pgwt_stream_sync(s, c);
    EXPECT_WRITE(s, ddl);
    EXPECT_NO_WRITE(s);
    /* The next write's Relation message shows the dropped column: a ddl
     * again (the stream cannot tell it was announced). */
    pgwt_exec(c, "DELETE FROM tasks WHERE id = 4");
    pgwt_stream_sync(s, c);
    EXPECT_WRITE(s, ddl);
    EXPECT_WRITE(s, "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"delete\",\"ids\":[\"4\"],"
                    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                    "\"pk_changed\":false}");
    EXPECT_NO_WRITE(s);
    ck_assert_int_eq(s->resets, 1);
    pgwt_stream_close(s);
    PQfinish(c);
}
END_TEST

/* A role that may not publish the table is told what it lacks: the
 * server's message names the object only. Nothing is left watched. */
START_TEST(watch_without_the_right_to_publish)
{
    PGconn *c = setup();
    pgw_error err;
    pgwt_exec(c, "SET client_min_messages = warning; DROP ROLE IF EXISTS pgwt_pub_r; "
                 "RESET client_min_messages; CREATE ROLE pgwt_pub_r; "
                 "GRANT USAGE ON SCHEMA pgwitness TO pgwt_pub_r; "
                 "GRANT SELECT, INSERT, UPDATE ON pgwitness.stream_tables TO pgwt_pub_r; "
                 "CREATE TABLE pr (id int PRIMARY KEY); ALTER TABLE pr OWNER TO pgwt_pub_r; "
                 "CREATE TABLE other (id int PRIMARY KEY)");
    /* the default publication exists, owned by another role */
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "other", NULL, &err), PGW_OK);
    pgwt_exec(c, "SET ROLE pgwt_pub_r");
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "pr", NULL, &err), PGW_EPG);
    ck_assert_str_eq(err.sqlstate, "42501");
    ck_assert_str_eq(err.message,
                     "publishing the table: must be owner of publication pgwitness (publishing "
                     "needs a role that owns publication pgwitness and the table, or CREATE on "
                     "the database to make the publication: pass a publication the role owns "
                     "(pgw_pq_stream_watch_options.publication, --publication))");
    pgwt_exec(c, "RESET ROLE");
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.stream_tables "
                                 "WHERE relid = 'pr'::regclass"),
                     0);
    pgwt_exec(c, "DROP TABLE pr; REVOKE ALL ON pgwitness.stream_tables FROM pgwt_pub_r; "
                 "REVOKE USAGE ON SCHEMA pgwitness FROM pgwt_pub_r; DROP ROLE pgwt_pub_r");
    PQfinish(c);
}
END_TEST

START_TEST(bad_arguments)
{
    pgw_pq_listener *l = NULL;
    ck_assert_int_eq(pgw_pq_listener_new(&l, NULL, NULL), PGW_OK);
    pgw_scope sc = {"p", "acme", "db"};
    pgw_pq_tenant_id t = 0, t2;
    pgw_pq_stream_options o = PGW_PQ_STREAM_OPTIONS_INIT;
    pgw_error err;
    o.slot = "Bad-Name";
    ck_assert_int_eq(pgw_pq_listener_add_stream(&t, l, &sc, "dbname=x", &o, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "pq_listener_add_stream: slot name \"Bad-Name\" must be 1..63 "
                                  "bytes of a-z, 0-9 and _ (PostgreSQL's rule for replication "
                                  "slots)");
    o = (pgw_pq_stream_options)PGW_PQ_STREAM_OPTIONS_INIT;
    o.status_interval_ms = 1;
    ck_assert_int_eq(pgw_pq_listener_add_stream(&t, l, &sc, "dbname=x", &o, &err), PGW_EINVAL);
    o = (pgw_pq_stream_options)PGW_PQ_STREAM_OPTIONS_INIT;
    o.max_txn_bytes = 5;
    ck_assert_int_eq(pgw_pq_listener_add_stream(&t, l, &sc, "dbname=x", &o, &err), PGW_EINVAL);
    o = (pgw_pq_stream_options)PGW_PQ_STREAM_OPTIONS_INIT;
    o.version = 0;
    ck_assert_int_eq(pgw_pq_listener_add_stream(&t, l, &sc, "dbname=x", &o, &err), PGW_EINVAL);
    o = (pgw_pq_stream_options)PGW_PQ_STREAM_OPTIONS_INIT;
    o.slot = "s1";
    ck_assert_int_eq(pgw_pq_listener_add_stream(&t, l, &sc, "", &o, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_listener_add_stream(&t, l, &sc, "dbname=x", &o, &err), PGW_OK);
    pgw_scope other = {"p", "globex", "db"};
    ck_assert_int_eq(pgw_pq_listener_add_stream(&t2, l, &other, "dbname=x", &o, &err),
                     PGW_EEXISTS);
    ck_assert_str_eq(err.message, "pq_listener_add_stream: tenant 1 streams from slot s1 already");
    ck_assert_int_eq(pgw_pq_listener_add_stream(&t2, l, &sc, "dbname=x", NULL, &err),
                     PGW_EEXISTS);
    ck_assert_int_eq(pgw_pq_listener_add_stream(NULL, l, &sc, "dbname=x", NULL, &err),
                     PGW_EINVAL);
    pgw_pq_stream_stats st;
    ck_assert_int_eq(pgw_pq_listener_stream_stats(&st, l, 99, &err), PGW_ENOTFOUND);
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&t2, l, &other, "dbname=x", &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_listener_stream_stats(&st, l, t2, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_listener_stream_stats(&st, l, t, &err), PGW_OK);
    ck_assert_str_eq(st.slot, "");
    pgw_pq_listener_free(l);
    pgw_pq_slot_info *slots;
    size_t n;
    ck_assert_int_eq(pgw_pq_slots(NULL, &n, NULL, NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_slots(&slots, NULL, NULL, NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_drop_slot(NULL, "x", NULL, &err), PGW_EINVAL);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("stream");
    TCase *tc = tcase_create("stream");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, writes_as_write_sets);
    tcase_add_test(tc, text_forms_match_the_triggers);
    tcase_add_test(tc, unchanged_toast_is_not_a_change);
    tcase_add_test(tc, partitioned_table_as_its_root);
    tcase_add_test(tc, truncate_of_a_partition);
    tcase_add_test(tc, truncate_of_a_partition_under_replica_role);
    tcase_add_test(tc, partitions_rerun_subscription);
    tcase_add_test(tc, inheritance_children);
    tcase_add_test(tc, refusals_keep_writers_working);
    tcase_add_test(tc, incomplete_publication_refused);
    tcase_add_test(tc, placeholders_never_skip_wrongly);
    tcase_add_test(tc, boundaries);
    tcase_add_test(tc, two_tenant_databases_never_mix);
    tcase_add_test(tc, large_transaction_bounded);
    tcase_add_test(tc, confirmed_position_advances);
    tcase_add_test(tc, close_confirms_what_was_handled);
    tcase_add_test(tc, ddl_then_insert);
    tcase_add_test(tc, watch_without_the_right_to_publish);
    tcase_add_test(tc, bad_arguments);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    pgwt_pg_setup("stream");
    return pgwt_main(suite());
}
