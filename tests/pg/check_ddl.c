/*
 * tests/pg/check_ddl.c — definition changes (DDL) of watched tables against
 * the real server, with no later write: ALTER COLUMN ... TYPE ... USING,
 * ADD COLUMN with a volatile default, DROP COLUMN, RENAME COLUMN, DROP
 * TABLE and CREATE TABLE each reach both write sources as the ddl write set
 * (a listener on the triggers' channel, and the stream), and mark the
 * subscription reading the table dirty with reason DDL: announced by the
 * event trigger (pgw_pq_install_ddl_trigger), or, without it, by
 * pgw_pq_announce_ddl(); the subscription's SQL, re-run after each, changed
 * every time, and was refreshed every time. With the event trigger, the
 * table made again is watched again on both sources, and other new tables
 * send nothing (their DDL can be prepared). Also: what it remembers of a
 * watch (a RENAME announces both names, a DROP uses the table's channel, a
 * table made again without a value column is announced but not watched),
 * the event trigger's install and removal
 * (idempotent; refused to a non-superuser before anything changes), a
 * failure inside it (the DDL commits, with a WARNING), new partitions
 * getting their triggers, announce_ddl's errors and transactions, a
 * table made again where stream_tables held several dropped tables'
 * rows of its name (one is adopted, the others deleted), and the upgrade
 * from schema version 4.
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pgw_test.h"
#include "pgwitness/index.h"
#include "pgwitness/inval_json.h"
#include "pgwitness/payload.h"
#include "pgwitness/pgwitness-pq.h"
#include "pgwt_notify.h"
#include "pgwt_stream.h"

#define CH PGW_PQ_DEFAULT_CHANNEL
#define DDL(t) "\"schema\":\"public\",\"table\":\"" t "\",\"op\":\"ddl\"}"

/* A clean public schema, no publication or event trigger of ours, the
 * library installed. */
static PGconn *setup(void)
{
    PGconn *c = pgwt_connect();
    pgwt_exec(c, "SET client_min_messages = warning; "
                 "DROP PUBLICATION IF EXISTS pgwitness; "
                 "DROP SCHEMA IF EXISTS pgwitness CASCADE; DROP SCHEMA public CASCADE; "
                 "CREATE SCHEMA public; GRANT ALL ON SCHEMA public TO PUBLIC; "
                 "RESET client_min_messages");
    pgw_error err;
    int v = 0;
    ck_assert_msg(pgw_pq_install(&v, c, NULL, &err) == PGW_OK, "%s", err.message);
    ck_assert_int_eq(v, PGW_PQ_SCHEMA_VERSION);
    return c;
}

static long long n_event_triggers(PGconn *c)
{
    return pgwt_int(c, "SELECT count(*) FROM pg_event_trigger WHERE evtname LIKE 'pgwitness\\_%'");
}


/* A subscription to every column of public.<table> in scope p/acme/db. */
static void subscribe(pgw_index *idx, const char *query, const char *table)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"scope\":{\"project\":\"p\",\"tenant\":\"acme\",\"database\":\"db\"},"
             "\"query\":\"%s\",\"tables\":[{\"schema\":\"public\",\"table\":\"%s\","
             "\"columns\":[\"id\",\"title\",\"n\"]}]}",
             query, table);
    pgw_deps *d = NULL;
    pgw_error err;
    ck_assert_msg(pgw_deps_from_json(&d, json, strlen(json), &err) == PGW_OK, "%s", err.message);
    pgw_runner_id r;
    ck_assert_int_eq(pgw_index_register(&r, idx, d, &err), PGW_OK);
    pgw_deps_free(d);
}

/* Both sources at once: a LISTEN connection whose payloads feed `idx`, and
 * the stream recorder feeding `sidx`; each index has one subscription on
 * public.tasks. */
typedef struct sources {
    PGconn *c, *lc;
    pgwt_stream *s;
    pgw_index *idx, *sidx;
} sources;

static void sources_open(sources *b, PGconn *c)
{
    b->c = c;
    b->lc = pgwt_listen(CH);
    ck_assert_int_eq(pgw_index_new(&b->idx, NULL, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_new(&b->sidx, NULL, NULL), PGW_OK);
    subscribe(b->idx, "tasks.all", "tasks");
    subscribe(b->sidx, "tasks.all", "tasks");
    b->s = pgwt_stream_open(NULL, b->sidx, NULL);
    pgwt_stream_until_streaming(b->s, 1);
    pgwt_drain(b->idx);
    pgwt_drain(b->sidx); /* the first STREAMING resets the scope */
}

static void sources_close(sources *b)
{
    pgwt_stream_close(b->s);
    pgw_index_free(b->idx);
    pgw_index_free(b->sidx);
    PQfinish(b->lc);
}

/* Nothing on either source, and no dirty subscription. */
static void expect_nothing(sources *b)
{
    ck_assert(pgwt_no_payload(b->lc, 200));
    pgwt_stream_sync(b->s, b->c);
    const char *got = pgwt_stream_take(b->s, NULL);
    ck_assert_msg(got == NULL, "unexpected write set %s", got ? got : "");
    ck_assert_str_eq(pgwt_drain(b->idx), "");
    ck_assert_str_eq(pgwt_drain(b->sidx), "");
}

/* The ddl write set of public.<table> on both sources, exactly once, and
 * the subscription of each marked dirty with reason DDL. */
static void expect_ddl(sources *b, const char *want, const char *what)
{
    char *payload = pgwt_next_payload(b->lc, 5000, NULL);
    ck_assert_msg(payload != NULL, "%s: no notification", what);
    int fb;
    char *json = pgwt_write_json(payload, &fb);
    ck_assert_msg(strcmp(json, want) == 0, "%s: %s", what, json);
    free(json);
    pgw_scope scope = {"p", "acme", "db"};
    pgw_write *w = NULL;
    ck_assert_int_eq(pgw_payload_decode(&w, &scope, payload, strlen(payload), NULL), PGW_OK);
    size_t n = 0;
    ck_assert_int_eq(pgw_index_match(&n, b->idx, w, NULL), PGW_OK);
    pgw_write_free(w);
    free(payload);
    ck_assert_msg(pgwt_no_payload(b->lc, 100), "%s: a second notification", what);
    ck_assert_str_eq(pgwt_drain(b->idx), "tasks.all:DDL");
    pgwt_stream_sync(b->s, b->c);
    const char *got = pgwt_stream_take(b->s, NULL);
    ck_assert_msg(got != NULL, "%s: no write set on the stream (%d events, the last: %s)", what,
                  b->s->n_events, b->s->n_events ? b->s->events[b->s->n_events - 1] : "");
    char full[256];
    snprintf(full, sizeof full, "{%s", want);
    ck_assert_msg(strcmp(got, full) == 0, "%s: %s", what, got);
    got = pgwt_stream_take(b->s, NULL);
    ck_assert_msg(got == NULL, "%s: a second write set %s", what, got ? got : "");
    ck_assert_str_eq(pgwt_drain(b->sidx), "tasks.all:DDL");
}

static void watch_both(PGconn *c, const char *table)
{
    pgw_error err;
    ck_assert_msg(pgw_pq_watch_table(c, "public", table, NULL, &err) == PGW_OK, "%s",
                  err.message);
    ck_assert_msg(pgw_pq_stream_watch_table(c, "public", table, NULL, &err) == PGW_OK, "%s",
                  err.message);
}

static const char *const DDLS[] = {
    "ALTER TABLE tasks ALTER COLUMN n TYPE text USING (n * 2)::text",
    "ALTER TABLE tasks ADD COLUMN r float8 DEFAULT random()",
    "ALTER TABLE tasks DROP COLUMN r",
    "ALTER TABLE tasks RENAME COLUMN title TO name",
    "DROP TABLE tasks",
    "CREATE TABLE tasks (id int PRIMARY KEY, title text, n int)",
};

/* The subscription's SQL, re-run: every row of tasks with its column
 * names, or the error's SQLSTATE (a dropped table). malloc'd. */
static char *tasks_result(PGconn *c)
{
    PGresult *r = PQexec(c, "SELECT coalesce(json_agg(t ORDER BY id)::text, '[]') FROM tasks t");
    char *out = PQresultStatus(r) == PGRES_TUPLES_OK
                    ? strdup(PQgetvalue(r, 0, 0))
                    : strdup(PQresultErrorField(r, PG_DIAG_SQLSTATE));
    PQclear(r);
    return out;
}

/* Each DDL with no later write; announced by the event trigger when
 * `trigger`, else by pgw_pq_announce_ddl() after it (nothing arrives
 * before). The subscription's SQL is re-run after each: every DDL changes
 * its result, and every one refreshed it on both sources (expect_ddl: 0
 * missed refreshes). */
static void each_ddl(bool trigger)
{
    PGconn *c = setup();
    pgw_error err;
    pgwt_exec(c, "CREATE TABLE tasks (id int PRIMARY KEY, title text, n int); "
                 "INSERT INTO tasks VALUES (1, 'a', 1), (2, 'b', 2)");
    watch_both(c, "tasks");
    if (trigger)
        ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_OK);
    sources b;
    sources_open(&b, c);
    char *before = tasks_result(c);
    for (size_t i = 0; i < sizeof DDLS / sizeof DDLS[0]; i++) {
        pgwt_exec(c, DDLS[i]);
        if (!trigger) {
            expect_nothing(&b);
            ck_assert_msg(pgw_pq_announce_ddl(c, "public", "tasks", NULL, &err) == PGW_OK, "%s",
                          err.message);
        }
        expect_ddl(&b, DDL("tasks"), DDLS[i]);
        char *after = tasks_result(c);
        ck_assert_msg(strcmp(after, before) != 0, "%s left the result %s", DDLS[i], after);
        free(before);
        before = after;
    }
    ck_assert_str_eq(before, "[]"); /* made again, empty */
    free(before);
    if (trigger) {
        /* The table made again under the watched name is watched again,
         * on both sources, as it was (the event trigger's rewatch()). The
         * stream read its configuration again on a new connection: its
         * temporary slot is new, so the scope was reset. */
        pgwt_stream_until_streaming(b.s, 2);
        ck_assert_int_eq(b.s->resets, 2);
        const char *reset = pgwt_drain(b.sidx); /* or drained with the DDL */
        ck_assert_msg(!*reset || strcmp(reset, "tasks.all:SCOPE_RESET") == 0, "%s", reset);
        ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.stream_tables WHERE "
                                     "relid = 'tasks'::regclass"),
                         1);
        pgwt_exec(c, "INSERT INTO tasks VALUES (3, 'c', 3)");
        char *p = pgwt_next_payload(b.lc, 5000, NULL);
        ck_assert_ptr_nonnull(p);
        char *j = pgwt_write_json(p, NULL);
        ck_assert_str_eq(j, "\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\","
                            "\"ids\":[\"3\"],\"ids_truncated\":false,\"columns\":null,"
                            "\"columns_truncated\":false,\"pk_changed\":false}");
        free(j);
        free(p);
        pgwt_stream_sync(b.s, c);
        ck_assert_str_eq(pgwt_stream_take(b.s, NULL),
                         "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\","
                         "\"ids\":[\"3\"],\"ids_truncated\":false,\"columns\":null,"
                         "\"columns_truncated\":false,\"pk_changed\":false}");
        ck_assert_ptr_null(pgwt_stream_take(b.s, NULL));
        ck_assert_str_eq(pgwt_drain(b.sidx), "tasks.all:INSERT_MAY_ENTER");
        ck_assert(pgwt_no_payload(b.lc, 100));
    }
    /* A table nothing watches, nor watched under its name: nothing on
     * either source, so its DDL's transaction can be prepared. */
    pgwt_exec(c, "CREATE TABLE other (id int); ALTER TABLE other ADD COLUMN v int; "
                 "CREATE TEMP TABLE scratch (id int); DROP TABLE scratch; DROP TABLE other");
    pgwt_exec(c, "BEGIN");
    pgwt_exec(c, "CREATE TABLE prepared (id int)");
    pgwt_exec(c, "PREPARE TRANSACTION 'pgwt_ddl'");
    pgwt_exec(c, "COMMIT PREPARED 'pgwt_ddl'");
    expect_nothing(&b);
    sources_close(&b);
    if (trigger)
        ck_assert_int_eq(pgw_pq_remove_ddl_trigger(c, NULL, &err), PGW_OK);
    PQfinish(c);
}

START_TEST(event_trigger_announces_every_ddl)
{
    each_ddl(true);
}
END_TEST

START_TEST(announce_ddl_after_every_ddl)
{
    each_ddl(false);
}
END_TEST

/* A partition names its watched root; the caller's transaction decides;
 * channels of the options are added; a dropped table is announced by
 * name on the default channel. */
START_TEST(announce_targets_and_transactions)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH), *oc = pgwt_listen("pgwt_other");
    pgw_error err;
    pgwt_exec(c, "CREATE TABLE m (id int PRIMARY KEY) PARTITION BY RANGE (id); "
                 "CREATE TABLE m1 PARTITION OF m FOR VALUES FROM (0) TO (10) "
                 "PARTITION BY RANGE (id); "
                 "CREATE TABLE m11 PARTITION OF m1 FOR VALUES FROM (0) TO (5)");
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "m", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_announce_ddl(c, "public", "m11", NULL, &err), PGW_OK);
    pgwt_expect_write(lc, DDL("m"));
    ck_assert(pgwt_no_payload(lc, 100));
    /* Rolled back: nothing; committed: at commit. */
    pgwt_exec(c, "BEGIN");
    ck_assert_int_eq(pgw_pq_announce_ddl(c, "public", "m1", NULL, &err), PGW_OK);
    ck_assert_int_eq(PQtransactionStatus(c), PQTRANS_INTRANS);
    ck_assert(pgwt_no_payload(lc, 100));
    pgwt_exec(c, "ROLLBACK");
    ck_assert(pgwt_no_payload(lc, 100));
    pgwt_exec(c, "BEGIN");
    ck_assert_int_eq(pgw_pq_announce_ddl(c, "public", "m", NULL, &err), PGW_OK);
    pgwt_exec(c, "COMMIT");
    pgwt_expect_write(lc, DDL("m"));
    /* More channels. */
    const char *chans[] = {"pgwt_other"};
    pgw_pq_announce_options o = PGW_PQ_ANNOUNCE_OPTIONS_INIT;
    o.channels = chans;
    o.n_channels = 1;
    ck_assert_int_eq(pgw_pq_announce_ddl(c, "public", "m", &o, &err), PGW_OK);
    pgwt_expect_write(lc, DDL("m"));
    pgwt_expect_write(oc, DDL("m"));
    /* A dropped (or never watched) table: by name, on the options'
     * channels, else the default one. */
    ck_assert_int_eq(pgw_pq_announce_ddl(c, "public", "gone", NULL, &err), PGW_OK);
    pgwt_expect_write(lc, DDL("gone"));
    ck_assert_int_eq(pgw_pq_announce_ddl(c, "public", "gone", &o, &err), PGW_OK);
    pgwt_expect_write(oc, DDL("gone"));
    ck_assert(pgwt_no_payload(lc, 100));
    ck_assert(pgwt_no_payload(oc, 100));
    PQfinish(oc);
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

START_TEST(announce_errors)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgw_error err;
    ck_assert_int_eq(pgw_pq_announce_ddl(NULL, "public", "t", NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "pq_announce_ddl: conn is NULL");
    ck_assert_int_eq(pgw_pq_announce_ddl(c, "", "t", NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_announce_ddl(c, "public", NULL, NULL, &err), PGW_EINVAL);
    pgw_pq_announce_options o = PGW_PQ_ANNOUNCE_OPTIONS_INIT;
    o.version = 0;
    ck_assert_int_eq(pgw_pq_announce_ddl(c, "public", "t", &o, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "announce options version 0 is not 1 (use "
                                  "PGW_PQ_ANNOUNCE_OPTIONS_INIT)");
    o = (pgw_pq_announce_options)PGW_PQ_ANNOUNCE_OPTIONS_INIT;
    o.n_channels = 1;
    ck_assert_int_eq(pgw_pq_announce_ddl(c, "public", "t", &o, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "announce options: channels is NULL with 1 entries");
    const char *empty[] = {""};
    o.channels = empty;
    ck_assert_int_eq(pgw_pq_announce_ddl(c, "public", "t", &o, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "channel name must be 1..63 bytes, not 0");
    o = (pgw_pq_announce_options)PGW_PQ_ANNOUNCE_OPTIONS_INIT;
    o.pgw_schema = "nope";
    ck_assert_int_eq(pgw_pq_announce_ddl(c, "public", "t", &o, &err), PGW_ENOTFOUND);
    ck_assert_str_eq(err.message, "schema \"nope\" has no announce_ddl(text,text,text[],boolean) "
                                  "(pgwitness schema version 5): run pgw_pq_install() to "
                                  "install or upgrade it");
    /* Without USAGE on the library schema: said, with the GRANT that
     * fixes it; then with USAGE but without the EXECUTE privilege: the
     * server's error. Each time a caller's transaction stays usable. */
    pgwt_exec(c, "SET client_min_messages = warning; DROP ROLE IF EXISTS \"pgwt ddl_user\"; "
                 "CREATE ROLE \"pgwt ddl_user\"; RESET client_min_messages; "
                 "REVOKE EXECUTE ON FUNCTION pgwitness.announce_ddl(text, text, text[], boolean) "
                 "FROM PUBLIC; SET ROLE \"pgwt ddl_user\"; BEGIN");
    ck_assert_int_eq(pgw_pq_announce_ddl(c, "public", "t", NULL, &err), PGW_EPG);
    ck_assert_str_eq(err.message, "role pgwt ddl_user has no USAGE on schema \"pgwitness\": "
                                  "grant it (GRANT USAGE ON SCHEMA pgwitness TO \"pgwt "
                                  "ddl_user\")");
    ck_assert_str_eq(err.sqlstate, "42501");
    ck_assert_int_eq(PQtransactionStatus(c), PQTRANS_INTRANS);
    pgwt_exec(c, "COMMIT; RESET ROLE; GRANT USAGE ON SCHEMA pgwitness TO \"pgwt ddl_user\"; "
                 "SET ROLE \"pgwt ddl_user\"; BEGIN");
    ck_assert_int_eq(pgw_pq_announce_ddl(c, "public", "t", NULL, &err), PGW_EPG);
    ck_assert_str_eq(err.sqlstate, "42501");
    ck_assert_ptr_nonnull(strstr(err.message, "permission denied for function announce_ddl"));
    ck_assert_int_eq(PQtransactionStatus(c), PQTRANS_INTRANS);
    pgwt_exec(c, "COMMIT; RESET ROLE; REVOKE USAGE ON SCHEMA pgwitness FROM \"pgwt ddl_user\"; "
                 "DROP ROLE \"pgwt ddl_user\"");
    ck_assert(pgwt_no_payload(lc, 100));
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

START_TEST(ddl_trigger_install_and_remove)
{
    PGconn *c = setup();
    pgw_error err;
    ck_assert_int_eq(pgw_pq_remove_ddl_trigger(c, NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_OK);
    ck_assert_int_eq(n_event_triggers(c), 2);
    char *before = pgwt_value(c, "SELECT string_agg(oid::text || evtname || evtevent || "
                                 "evtfoid::regproc::text, ',' ORDER BY evtname) "
                                 "FROM pg_event_trigger");
    char *names = pgwt_value(c, "SELECT string_agg(evtname || ' ' || evtevent || ' ' || "
                                "evtfoid::regproc::text, ',' ORDER BY evtname) "
                                "FROM pg_event_trigger");
    ck_assert_str_eq(names, "pgwitness_ddl_command_end ddl_command_end "
                            "pgwitness.on_ddl_event,"
                            "pgwitness_sql_drop sql_drop pgwitness.on_ddl_event");
    free(names);
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_OK);
    char *after = pgwt_value(c, "SELECT string_agg(oid::text || evtname || evtevent || "
                                "evtfoid::regproc::text, ',' ORDER BY evtname) "
                                "FROM pg_event_trigger");
    ck_assert_str_eq(before, after); /* unchanged: the same OIDs */
    free(before);
    free(after);
    /* A non-superuser: refused, nothing changes; checked first, so also
     * when the triggers are installed already (no success for a role
     * that could not have made them). */
    pgwt_exec(c, "SET client_min_messages = warning; DROP ROLE IF EXISTS pgwt_ddl_admin; "
                 "CREATE ROLE pgwt_ddl_admin; RESET client_min_messages; "
                 "SET ROLE pgwt_ddl_admin");
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_EPG);
    ck_assert_str_eq(err.sqlstate, "42501");
    ck_assert_str_eq(err.message,
                     "installing the pgwitness event triggers needs a superuser (PostgreSQL: "
                     "CREATE EVENT TRIGGER, DROP EVENT TRIGGER), and the current user is not "
                     "one: without them, call pgw_pq_announce_ddl() (pgwitness announce) after "
                     "each migration");
    ck_assert_int_eq(pgw_pq_remove_ddl_trigger(c, NULL, &err), PGW_EPG);
    ck_assert_str_eq(err.sqlstate, "42501");
    ck_assert_str_eq(err.message,
                     "removing the pgwitness event triggers needs a superuser (PostgreSQL: "
                     "CREATE EVENT TRIGGER, DROP EVENT TRIGGER), and the current user is not "
                     "one: without them, call pgw_pq_announce_ddl() (pgwitness announce) after "
                     "each migration");
    pgwt_exec(c, "RESET ROLE");
    ck_assert_int_eq(n_event_triggers(c), 2);
    ck_assert_int_eq(pgw_pq_remove_ddl_trigger(c, NULL, &err), PGW_OK);
    ck_assert_int_eq(n_event_triggers(c), 0);
    ck_assert_int_eq(pgw_pq_remove_ddl_trigger(c, NULL, &err), PGW_OK);
    pgwt_exec(c, "SET ROLE pgwt_ddl_admin");
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_EPG);
    ck_assert_str_eq(err.sqlstate, "42501");
    ck_assert_str_eq(err.message,
                     "installing the pgwitness event triggers needs a superuser (PostgreSQL: "
                     "CREATE EVENT TRIGGER, DROP EVENT TRIGGER), and the current user is not "
                     "one: without them, call pgw_pq_announce_ddl() (pgwitness announce) after "
                     "each migration");
    /* Nothing to drop: refused all the same, with the same error. */
    ck_assert_int_eq(pgw_pq_remove_ddl_trigger(c, NULL, &err), PGW_EPG);
    ck_assert_str_eq(err.sqlstate, "42501");
    ck_assert_str_eq(err.message,
                     "removing the pgwitness event triggers needs a superuser (PostgreSQL: "
                     "CREATE EVENT TRIGGER, DROP EVENT TRIGGER), and the current user is not "
                     "one: without them, call pgw_pq_announce_ddl() (pgwitness announce) after "
                     "each migration");
    /* Before the other checks too: a schema that does not exist. */
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, "nope", &err), PGW_EPG);
    ck_assert_str_eq(err.sqlstate, "42501");
    pgwt_exec(c, "RESET ROLE; DROP ROLE pgwt_ddl_admin");
    ck_assert_int_eq(n_event_triggers(c), 0);
    /* Inside a caller's transaction: undone with it. */
    pgwt_exec(c, "BEGIN");
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_OK);
    pgwt_exec(c, "ROLLBACK");
    ck_assert_int_eq(n_event_triggers(c), 0);
    /* An event trigger of one of the names that is not this schema's. */
    pgwt_exec(c, "CREATE FUNCTION public.mine() RETURNS event_trigger LANGUAGE plpgsql "
                 "AS $$BEGIN END$$; "
                 "CREATE EVENT TRIGGER pgwitness_sql_drop ON sql_drop EXECUTE PROCEDURE mine()");
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_EEXISTS);
    ck_assert_str_eq(err.message, "an event trigger pgwitness_sql_drop (it calls mine()) is not "
                                  "this schema's (\"pgwitness\"): drop it, or use the schema "
                                  "whose it is");
    ck_assert_int_eq(pgw_pq_remove_ddl_trigger(c, NULL, &err), PGW_EEXISTS);
    ck_assert_int_eq(n_event_triggers(c), 1);
    pgwt_exec(c, "DROP EVENT TRIGGER pgwitness_sql_drop");
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(NULL, NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, "nope", &err), PGW_ENOTFOUND);
    PQfinish(c);
}
END_TEST

static char warnings[2048];
static void collect_notice(void *arg, const PGresult *r)
{
    (void)arg;
    const char *sev = PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED);
    if (sev && strcmp(sev, "WARNING") == 0) {
        size_t n = strlen(warnings);
        snprintf(warnings + n, sizeof warnings - n, "%s\n",
                 PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY));
    }
}

/* Runs `sql` on `c`, collecting its WARNINGs in `warnings` (one message
 * per line, cleared first), then gives `c` its notice receiver back. */
static void exec_collecting_warnings(PGconn *c, const char *sql)
{
    warnings[0] = '\0';
    PQnoticeReceiver old = PQsetNoticeReceiver(c, collect_notice, NULL);
    pgwt_exec(c, sql);
    PQsetNoticeReceiver(c, old, NULL);
}

/* A failure inside the event trigger leaves the DDL committed, with a
 * WARNING: here its role may not run announce_ddl(). */
START_TEST(failure_inside_is_a_warning)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgw_error err;
    pgwt_exec(c, "SET client_min_messages = warning; DROP ROLE IF EXISTS pgwt_ddl_owner; "
                 "CREATE ROLE pgwt_ddl_owner; RESET client_min_messages; "
                 "CREATE TABLE t (id int PRIMARY KEY); ALTER TABLE t OWNER TO pgwt_ddl_owner; "
                 "REVOKE EXECUTE ON FUNCTION pgwitness.announce_ddl(text, text, text[], boolean) "
                 "FROM PUBLIC");
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_OK);
    warnings[0] = '\0';
    PQsetNoticeReceiver(c, collect_notice, NULL);
    /* Without USAGE on the library schema, then without EXECUTE. */
    pgwt_exec(c, "SET ROLE pgwt_ddl_owner; ALTER TABLE t ADD COLUMN w int; "
                 "CREATE TABLE mine (id int); ALTER TABLE mine ADD COLUMN v int; "
                 "DROP TABLE mine; RESET ROLE");
    /* (nothing for its own table, which nothing watches) */
    ck_assert_str_eq(warnings, "pgwitness: the definition change of public.t was not announced: "
                               "role pgwt_ddl_owner has no USAGE on the pgwitness schema\n");
    warnings[0] = '\0';
    pgwt_exec(c, "CREATE TABLE t2 (id int); ALTER TABLE t2 OWNER TO pgwt_ddl_owner");
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "t2", NULL, &err), PGW_OK);
    pgwt_exec(c, "SET ROLE pgwt_ddl_owner; DROP TABLE t2; RESET ROLE");
    ck_assert_str_eq(warnings, "pgwitness: public.t2 was dropped by role pgwt_ddl_owner, which "
                               "has no USAGE on the pgwitness schema: its drop was announced on "
                               "the default channel (pgwitness) and to the stream only, and a "
                               "table made again under its name will not be watched\n");
    /* (from the catalog alone: on the default channel) */
    pgwt_expect_write(lc, DDL("t2"));
    /* A partition it makes of a watched table gets no triggers: said so,
     * and listed as a gap. */
    pgwt_exec(c, "CREATE TABLE pm (id int PRIMARY KEY) PARTITION BY RANGE (id); "
                 "ALTER TABLE pm OWNER TO pgwt_ddl_owner");
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "pm", NULL, &err), PGW_OK);
    warnings[0] = '\0';
    pgwt_exec(c, "SET ROLE pgwt_ddl_owner; "
                 "CREATE TABLE pm1 PARTITION OF pm FOR VALUES FROM (0) TO (10); RESET ROLE");
    ck_assert_str_eq(warnings, "pgwitness: public.pm1 lies below a watched table, but role "
                               "pgwt_ddl_owner has no USAGE on the pgwitness schema: it was not "
                               "given the triggers that report its writes, and its making was "
                               "not announced\n");
    pgw_pq_watch_gap *gaps = NULL;
    size_t n_gaps = 0;
    ck_assert_int_eq(pgw_pq_watch_gaps(&gaps, &n_gaps, c, NULL, &err), PGW_OK);
    ck_assert_uint_eq(n_gaps, 1);
    ck_assert_str_eq(gaps[0].table, "pm1");
    pgw_free(gaps);
    pgwt_exec(c, "DROP TABLE pm");
    pgwt_expect_write(lc, DDL("pm"));
    warnings[0] = '\0';
    pgwt_exec(c, "GRANT USAGE ON SCHEMA pgwitness TO pgwt_ddl_owner; "
                 "SET ROLE pgwt_ddl_owner; ALTER TABLE t ADD COLUMN v int; RESET ROLE");
    ck_assert_str_eq(warnings, "pgwitness: the definition change of public.t was not announced: "
                               "permission denied for function announce_ddl\n");
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_attribute WHERE attrelid = 't'::regclass "
                                 "AND attname IN ('v', 'w')"),
                     2);
    ck_assert(pgwt_no_payload(lc, 200)); /* (CREATE TABLE t2: nothing watched it) */
    /* As the superuser it announces again. */
    warnings[0] = '\0';
    pgwt_exec(c, "ALTER TABLE t DROP COLUMN v");
    ck_assert_str_eq(warnings, "");
    pgwt_expect_write(lc, DDL("t"));
    ck_assert_int_eq(pgw_pq_remove_ddl_trigger(c, NULL, &err), PGW_OK);
    pgwt_exec(c, "DROP TABLE t; REVOKE USAGE ON SCHEMA pgwitness FROM pgwt_ddl_owner; "
                 "DROP ROLE pgwt_ddl_owner");
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

/* A partition created or attached after the watch gets its triggers from
 * the event trigger: watch_gaps() is empty, and its writes are the watched
 * table's. */
START_TEST(new_partitions_get_their_triggers)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgw_error err;
    pgwt_exec(c, "CREATE TABLE m (id int PRIMARY KEY) PARTITION BY RANGE (id); "
                 "CREATE TABLE m1 PARTITION OF m FOR VALUES FROM (0) TO (10)");
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "m", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_OK);
    pgwt_exec(c, "CREATE TABLE m2 PARTITION OF m FOR VALUES FROM (10) TO (20)");
    pgwt_expect_write(lc, DDL("m"));
    pgwt_exec(c, "CREATE TABLE m3 (id int PRIMARY KEY)"); /* not below m yet: nothing */
    pgwt_exec(c, "ALTER TABLE m ATTACH PARTITION m3 FOR VALUES FROM (20) TO (30)");
    pgwt_expect_write(lc, DDL("m"));
    ck_assert(pgwt_no_payload(lc, 100));
    pgw_pq_watch_gap *gaps = NULL;
    size_t n = 99;
    ck_assert_int_eq(pgw_pq_watch_gaps(&gaps, &n, c, NULL, &err), PGW_OK);
    ck_assert_uint_eq(n, 0);
    pgwt_exec(c, "INSERT INTO m2 VALUES (11); INSERT INTO m3 VALUES (21)");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"m\",\"op\":\"insert\",\"ids\":"
                          "[\"11\"],\"ids_truncated\":false,\"columns\":null,"
                          "\"columns_truncated\":false,\"pk_changed\":false}");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"m\",\"op\":\"insert\",\"ids\":"
                          "[\"21\"],\"ids_truncated\":false,\"columns\":null,"
                          "\"columns_truncated\":false,\"pk_changed\":false}");
    /* Dropping a partition: its rows left m. */
    pgwt_exec(c, "DROP TABLE m2");
    pgwt_expect_write(lc, DDL("m"));
    ck_assert(pgwt_no_payload(lc, 100));
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

/* With the event trigger installed, a watch with enable_always (whose
 * ALTER TABLE ... ENABLE ALWAYS TRIGGER statements are DDL events, some
 * fired while watch_below() is still making a partition's triggers)
 * succeeds, and a partition made later gets its four triggers, ALWAYS. */
START_TEST(enable_always_with_the_event_trigger)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgw_error err;
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_OK);
    pgwt_exec(c, "CREATE TABLE w (id int, k int, PRIMARY KEY (id, k)) PARTITION BY RANGE (k); "
                 "CREATE TABLE w1 PARTITION OF w FOR VALUES FROM (0) TO (10)");
    pgw_pq_watch_options o = PGW_PQ_WATCH_OPTIONS_INIT;
    ck_assert_msg(pgw_pq_watch_table(c, "public", "w", &o, &err) == PGW_OK, "%s", err.message);
    o.enable_always = true;
    /* In the caller's transaction, as pgwitness watch calls it. */
    pgwt_exec(c, "BEGIN");
    ck_assert_msg(pgw_pq_watch_table(c, "public", "w", &o, &err) == PGW_OK, "%s", err.message);
    pgwt_exec(c, "COMMIT");
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'w1'::regclass "
                                 "AND tgname LIKE 'pgwitness\\_%' AND tgenabled = 'A'"),
                     4);
    pgwt_exec(c, "CREATE TABLE w2 PARTITION OF w FOR VALUES FROM (10) TO (20)");
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'w2'::regclass "
                                 "AND tgname LIKE 'pgwitness\\_%' AND tgenabled = 'A'"),
                     4);
    pgw_pq_watch_gap *gaps = NULL;
    size_t n = 99;
    ck_assert_int_eq(pgw_pq_watch_gaps(&gaps, &n, c, NULL, &err), PGW_OK);
    ck_assert_uint_eq(n, 0);
    /* Drain the announcements, then a write into the new partition under
     * the replica role arrives as w's. */
    char *p;
    while ((p = pgwt_next_payload(lc, 200, NULL)) != NULL)
        free(p);
    pgwt_exec(c, "SET session_replication_role = replica; INSERT INTO w2 VALUES (1, 11); "
                 "RESET session_replication_role");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"w\",\"op\":\"insert\",\"ids\":"
                          "[[\"1\",\"11\"]],\"ids_truncated\":false,\"columns\":null,"
                          "\"columns_truncated\":false,\"pk_changed\":false}");
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

/* The stream alone: a partition's DDL names the stream-watched root; a
 * dropped stream-watched table (stream_tables lists it) is announced by
 * name; an inheritance child made after the watch gets its triggers. */
START_TEST(stream_only_and_inheritance)
{
    PGconn *c = setup(), *lc = pgwt_listen(CH);
    pgw_error err;
    pgwt_exec(c, "CREATE TABLE m (id int PRIMARY KEY) PARTITION BY RANGE (id); "
                 "CREATE TABLE m1 PARTITION OF m FOR VALUES FROM (0) TO (10); "
                 "CREATE TABLE s1 (id int PRIMARY KEY); CREATE TABLE base (id int)");
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "m", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "s1", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "base", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_OK);
    pgwt_stream *s = pgwt_stream_open(NULL, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    pgwt_exec(c, "ALTER TABLE m1 ADD CONSTRAINT small CHECK (id < 5)");
    pgwt_stream_sync(s, c);
    ck_assert_str_eq(pgwt_stream_take(s, NULL), "{" DDL("m"));
    ck_assert_ptr_null(pgwt_stream_take(s, NULL));
    ck_assert(pgwt_no_payload(lc, 100)); /* no trigger watches m: no channel */
    pgwt_exec(c, "DROP TABLE s1");
    pgwt_stream_sync(s, c);
    ck_assert_str_eq(pgwt_stream_take(s, NULL), "{" DDL("s1"));
    ck_assert_ptr_null(pgwt_stream_take(s, NULL));
    ck_assert(pgwt_no_payload(lc, 100)); /* the stream alone watched it: no NOTIFY */
    pgwt_stream_close(s);
    pgwt_exec(c, "CREATE TABLE kid (extra int) INHERITS (base)");
    pgwt_expect_write(lc, DDL("base"));
    pgw_pq_watch_gap *gaps = NULL;
    size_t n = 99;
    ck_assert_int_eq(pgw_pq_watch_gaps(&gaps, &n, c, NULL, &err), PGW_OK);
    ck_assert_uint_eq(n, 0);
    pgwt_exec(c, "INSERT INTO kid VALUES (1, 2)");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"base\",\"op\":\"insert\","
                          "\"ids\":null,\"ids_truncated\":false,\"columns\":null,"
                          "\"columns_truncated\":false,\"pk_changed\":false}");
    ck_assert(pgwt_no_payload(lc, 100));
    /* NO INHERIT: kid's rows leave base's results, announced as base's;
     * then kid's writes are no longer base's. */
    pgwt_exec(c, "ALTER TABLE kid NO INHERIT base");
    pgwt_expect_write(lc, DDL("base"));
    ck_assert(pgwt_no_payload(lc, 100));
    pgwt_exec(c, "INSERT INTO kid VALUES (2, 3)");
    ck_assert(pgwt_no_payload(lc, 100));
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

#define INS(t, ids) "{\"schema\":\"public\",\"table\":\"" t "\",\"op\":\"insert\",\"ids\":" ids \
                    ",\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false," \
                    "\"pk_changed\":false}"

/* The last GAP event of the stream containing `needle`, or NULL. */
static const char *stream_gap(const pgwt_stream *s, const char *needle)
{
    for (int i = s->n_events - 1; i >= 0; i--)
        if (strncmp(s->events[i], "GAP ", 4) == 0 && strstr(s->events[i], needle))
            return s->events[i];
    return NULL;
}

/* A running stream follows a watched table's new name: with the event
 * triggers, the RENAME itself makes it read its targets again
 * (sync_stream()); without them, the Relation message of the next write
 * (a ddl write set of a name no target has) does, after that write's
 * commit. Either way the writes after it are the new name's. */
static void stream_follows_rename(bool event_trigger)
{
    PGconn *c = setup();
    pgw_error err;
    pgwt_exec(c, "CREATE TABLE fr (id int PRIMARY KEY, v text)");
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "fr", NULL, &err), PGW_OK);
    if (event_trigger)
        ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_OK);
    pgwt_stream *s = pgwt_stream_open(NULL, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    pgwt_exec(c, "ALTER TABLE fr RENAME TO fr2");
    if (event_trigger) {
        pgwt_stream_sync(s, c);
        ck_assert_str_eq(pgwt_stream_take(s, NULL), "{" DDL("fr"));
        ck_assert_str_eq(pgwt_stream_take(s, NULL), "{" DDL("fr2"));
        ck_assert_ptr_null(pgwt_stream_take(s, NULL));
    } else {
        /* nothing says so until the next write: its Relation message
         * differs from the definition read at connect
         * (pgw_pgoutput_expect_relation()), so the ddl write sets of both
         * names come first, then the write as the targets were read */
        pgwt_exec(c, "INSERT INTO fr2 VALUES (1, 'a')");
        pgwt_stream_sync(s, c);
        ck_assert_str_eq(pgwt_stream_take(s, NULL), "{" DDL("fr"));
        ck_assert_str_eq(pgwt_stream_take(s, NULL), "{" DDL("fr2"));
        ck_assert_str_eq(pgwt_stream_take(s, NULL), INS("fr", "[\"1\"]"));
        ck_assert_ptr_null(pgwt_stream_take(s, NULL));
    }
    pgwt_stream_until_streaming(s, 2);
    pgwt_exec(c, "INSERT INTO fr2 VALUES (2, 'b')");
    pgwt_stream_sync(s, c);
    /* with the event triggers, the first Relation message after the
     * reconnect is still compared with what the decoder knew of fr (read
     * at the first connect): the new name once more, a refresh too many */
    if (event_trigger)
        ck_assert_str_eq(pgwt_stream_take(s, NULL), "{" DDL("fr2"));
    ck_assert_str_eq(pgwt_stream_take(s, NULL), INS("fr2", "[\"2\"]"));
    ck_assert_ptr_null(pgwt_stream_take(s, NULL));
    /* A definition change that keeps the name and key: no new targets. */
    pgwt_exec(c, "ALTER TABLE fr2 ADD COLUMN n int");
    if (!event_trigger)
        pgwt_exec(c, "INSERT INTO fr2 VALUES (3, 'c')");
    pgwt_stream_sync(s, c);
    ck_assert_str_eq(pgwt_stream_take(s, NULL), "{" DDL("fr2"));
    if (!event_trigger)
        ck_assert_str_eq(pgwt_stream_take(s, NULL), INS("fr2", "[\"3\"]"));
    ck_assert_ptr_null(pgwt_stream_take(s, NULL));
    pgwt_stream_run(s, 300);
    ck_assert_int_eq(s->streaming, 2);
    pgwt_stream_close(s);
    PQfinish(c);
}

/* No event triggers, no announcement: a column added after the stream
 * connected and before the table's first change there. The first
 * Relation message is compared with the definition read at connect
 * (pgw_pgoutput_expect_relation()), so the change that follows brings
 * the ddl write set first; a second such ALTER likewise. */
START_TEST(stream_sees_ddl_before_the_first_write)
{
    PGconn *c = setup();
    pgw_error err;
    pgwt_exec(c, "CREATE TABLE fw (id int PRIMARY KEY, status text); "
                 "INSERT INTO fw VALUES (1, 'open'), (2, 'done')");
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "fw", NULL, &err), PGW_OK);
    pgwt_stream *s = pgwt_stream_open(NULL, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    for (int round = 0; round < 2; round++) {
        pgwt_exec(c, round ? "ALTER TABLE fw ADD COLUMN note2 text DEFAULT 'x'"
                           : "ALTER TABLE fw ADD COLUMN note text DEFAULT 'hello'");
        pgwt_exec(c, "INSERT INTO fw (id, status) VALUES (10 + 0, 'new') "
                     "ON CONFLICT (id) DO UPDATE SET status = 'again'");
        pgwt_stream_sync(s, c);
        ck_assert_str_eq(pgwt_stream_take(s, NULL), "{" DDL("fw"));
        const char *w = pgwt_stream_take(s, NULL);
        ck_assert_msg(w && strstr(w, "\"table\":\"fw\"") && !strstr(w, "\"op\":\"ddl\""),
                      "round %d: %s", round, w ? w : "no write set");
        ck_assert_ptr_null(pgwt_stream_take(s, NULL));
    }
    pgwt_stream_close(s);
    PQfinish(c);
}
END_TEST

START_TEST(stream_follows_rename_with_event_trigger)
{
    stream_follows_rename(true);
}
END_TEST

START_TEST(stream_follows_rename_from_relation_message)
{
    stream_follows_rename(false);
}
END_TEST

/* REPLICA IDENTITY FULL sends every column of an old row, so a new
 * primary key shows in no Relation message: with the event triggers, the
 * ALTER makes running streams read their targets again (stream_tables
 * keeps the key they read), and later writes carry the new key's values.
 * So does pgw_pq_announce_ddl() without them. */
START_TEST(stream_follows_new_primary_key)
{
    PGconn *c = setup();
    pgw_error err;
    pgwt_exec(c, "CREATE TABLE nk (a int CONSTRAINT nk_pk PRIMARY KEY, b int NOT NULL); "
                 "ALTER TABLE nk REPLICA IDENTITY FULL");
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "nk", NULL, &err), PGW_OK);
    char *v = pgwt_value(c, "SELECT key_columns::text || full_rows FROM pgwitness.stream_tables");
    ck_assert_str_eq(v, "{a}true");
    free(v);
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_OK);
    pgwt_stream *s = pgwt_stream_open(NULL, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    pgwt_exec(c, "ALTER TABLE nk DROP CONSTRAINT nk_pk, ADD PRIMARY KEY (b)");
    pgwt_stream_sync(s, c);
    ck_assert_str_eq(pgwt_stream_take(s, NULL), "{" DDL("nk"));
    ck_assert_ptr_null(pgwt_stream_take(s, NULL));
    pgwt_stream_until_streaming(s, 2);
    pgwt_exec(c, "INSERT INTO nk VALUES (1, 100)");
    pgwt_stream_sync(s, c);
    ck_assert_str_eq(pgwt_stream_take(s, NULL), INS("nk", "[\"100\"]"));
    ck_assert_ptr_null(pgwt_stream_take(s, NULL));
    /* By hand, without the event triggers: the announcement does it. */
    ck_assert_int_eq(pgw_pq_remove_ddl_trigger(c, NULL, &err), PGW_OK);
    pgwt_exec(c, "ALTER TABLE nk DROP CONSTRAINT nk_pkey, ADD PRIMARY KEY (a)");
    ck_assert_int_eq(pgw_pq_announce_ddl(c, "public", "nk", NULL, &err), PGW_OK);
    pgwt_stream_sync(s, c);
    ck_assert_str_eq(pgwt_stream_take(s, NULL), "{" DDL("nk"));
    ck_assert_ptr_null(pgwt_stream_take(s, NULL));
    pgwt_stream_until_streaming(s, 3);
    pgwt_exec(c, "INSERT INTO nk VALUES (2, 200)");
    pgwt_stream_sync(s, c);
    ck_assert_str_eq(pgwt_stream_take(s, NULL), INS("nk", "[\"2\"]"));
    ck_assert_ptr_null(pgwt_stream_take(s, NULL));
    /* An announcement that changes nothing the targets hold: no reconnect. */
    ck_assert_int_eq(pgw_pq_announce_ddl(c, "public", "nk", NULL, &err), PGW_OK);
    pgwt_stream_sync(s, c);
    ck_assert_str_eq(pgwt_stream_take(s, NULL), "{" DDL("nk"));
    pgwt_stream_run(s, 300);
    ck_assert_int_eq(s->streaming, 3);
    pgwt_stream_close(s);
    PQfinish(c);
}
END_TEST

/* A table watched for the stream, dropped and made again without a usable
 * replica identity, cannot be published again: the event trigger warns
 * the role that made it, running streams read their configuration again
 * and report it as a GAP, and pgw_pq_watch_gaps() lists it; watched again
 * once it has a key, the gap is gone. */
START_TEST(stream_table_made_again_without_identity_is_a_gap)
{
    PGconn *c = setup();
    pgw_error err;
    pgwt_exec(c, "CREATE TABLE ri (id int PRIMARY KEY)");
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "ri", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_OK);
    pgwt_stream *s = pgwt_stream_open(NULL, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    int gaps = s->gaps;
    warnings[0] = '\0';
    PQsetNoticeReceiver(c, collect_notice, NULL);
    pgwt_exec(c, "DROP TABLE ri; CREATE TABLE ri (id int)");
    ck_assert_str_eq(warnings, "pgwitness: public.ri was watched for the stream (publication "
                               "pgwitness) "
                               "before it was dropped, and is not published again: it has no "
                               "usable replica identity\n");
    PQsetNoticeReceiver(c, NULL, NULL);
    pgwt_stream_until_streaming(s, 2);
    ck_assert_int_eq(s->gaps, gaps + 1);
    const char *g = stream_gap(s, "public.ri was watched");
    ck_assert_msg(g && strstr(g, "public.ri was watched for the stream (publication pgwitness) "
                                 "before it was dropped, and was made again outside the "
                                 "publication, so its writes are not sent: give it a primary key "
                                 "(or REPLICA IDENTITY FULL) and watch public.ri again "
                                 "(pgw_pq_stream_watch_table)"),
                  "%s", g ? g : "no GAP");
    pgw_pq_watch_gap *list = NULL;
    size_t n = 0;
    ck_assert_int_eq(pgw_pq_watch_gaps(&list, &n, c, NULL, &err), PGW_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(list[0].table, "ri");
    ck_assert_str_eq(list[0].watched_table, "ri");
    ck_assert_str_eq(list[0].source, "stream");
    pgw_free(list);
    pgwt_exec(c, "ALTER TABLE ri ADD PRIMARY KEY (id)");
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "ri", NULL, &err), PGW_OK);
    list = NULL;
    ck_assert_int_eq(pgw_pq_watch_gaps(&list, &n, c, NULL, &err), PGW_OK);
    ck_assert_uint_eq(n, 0);
    pgwt_stream_until_streaming(s, 3);
    pgwt_exec(c, "INSERT INTO ri VALUES (5)");
    pgwt_stream_sync(s, c);
    const char *w;
    while ((w = pgwt_stream_take(s, NULL)) && strcmp(w, INS("ri", "[\"5\"]")) != 0)
        ;
    ck_assert_msg(w != NULL, "the insert into ri was not reported");
    pgwt_stream_close(s);
    PQfinish(c);
}
END_TEST

/* The stream_tables rows named public.<table>, sorted, each as
 * "publication|1 when its relid is the table's now, 0 for a dropped
 * table's|value_columns", joined by spaces ("" for none). */
static char *stream_rows(PGconn *c, const char *table)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT coalesce(string_agg(r, ' ' ORDER BY r), '') FROM ("
             "SELECT concat_ws('|', publication, (relid = coalesce(to_regclass("
             "'public.%s')::oid, 0))::int, value_columns) AS r "
             "FROM pgwitness.stream_tables WHERE (schema_name, table_name) = "
             "('public', '%s')) x",
             table, table);
    return pgwt_value(c, sql);
}

/* How many publications named `pub` hold public.<table>. */
static long long published_in(PGconn *c, const char *pub, const char *table)
{
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM pg_publication_tables WHERE pubname = '%s' AND "
             "schemaname = 'public' AND tablename = '%s'",
             pub, table);
    return pgwt_int(c, sql);
}

/* With the event triggers installed (now) and a stream running, drops
 * public.<table> and makes it again (id int PRIMARY KEY, v text), in one
 * transaction: no WARNING, its stream_tables rows are then exactly
 * `want_rows` (stream_rows()), no gap, it is in the default publication,
 * and the stream, which read its configuration again, reports one ddl
 * write set of the table, then an insert into it as exactly `want`. */
static void made_again_published(PGconn *c, const char *table, const char *want_rows,
                                 const char *want)
{
    pgw_error err;
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_OK);
    pgwt_stream *s = pgwt_stream_open(NULL, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    char sql[160];
    snprintf(sql, sizeof sql, "DROP TABLE %s; CREATE TABLE %s (id int PRIMARY KEY, v text)",
             table, table);
    exec_collecting_warnings(c, sql);
    ck_assert_msg(warnings[0] == '\0', "%s", warnings);
    char *v = stream_rows(c, table);
    ck_assert_str_eq(v, want_rows);
    free(v);
    ck_assert_int_eq(published_in(c, PGW_PQ_DEFAULT_PUBLICATION, table), 1);
    pgw_pq_watch_gap *list = NULL;
    size_t n = 99;
    ck_assert_int_eq(pgw_pq_watch_gaps(&list, &n, c, NULL, &err), PGW_OK);
    ck_assert_uint_eq(n, 0);
    pgwt_stream_until_streaming(s, 2);
    pgwt_stream_sync(s, c);
    char ddl[128];
    snprintf(ddl, sizeof ddl, "{\"schema\":\"public\",\"table\":\"%s\",\"op\":\"ddl\"}", table);
    /* the drop and the make: one transaction, one ddl write set */
    const char *w = pgwt_stream_take(s, NULL);
    ck_assert_msg(w && strcmp(w, ddl) == 0, "%s", w ? w : "no ddl write set");
    ck_assert_ptr_null(pgwt_stream_take(s, NULL));
    snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (1, 'x')", table);
    pgwt_exec(c, sql);
    pgwt_stream_sync(s, c);
    w = pgwt_stream_take(s, NULL);
    ck_assert_msg(w && strcmp(w, want) == 0, "%s", w ? w : "the insert was not reported");
    ck_assert_ptr_null(pgwt_stream_take(s, NULL));
    pgwt_stream_close(s);
}

/* A table watched for the stream, dropped and made again while the event
 * triggers are not installed, and then watched again: the watch of the
 * new OID forgets the dropped table's row of the same publication and
 * name, so one row is left; dropped and made again once more, now with
 * the event triggers, the table is published again and its row follows
 * it (newcomer trial D2: two remembered rows of the name both took the
 * new OID, "duplicate key value violates unique constraint", and the
 * table was left out of the publication with a WARNING). */
START_TEST(stream_table_made_again_after_a_watch_of_the_new_table)
{
    PGconn *c = setup();
    pgw_error err;
    pgwt_exec(c, "CREATE TABLE ma (id int PRIMARY KEY, v text)");
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "ma", NULL, &err), PGW_OK);
    pgwt_exec(c, "DROP TABLE ma; CREATE TABLE ma (id int PRIMARY KEY, v text)");
    char *v = stream_rows(c, "ma");
    ck_assert_str_eq(v, "pgwitness|0|{}");
    free(v);
    ck_assert_int_eq(published_in(c, PGW_PQ_DEFAULT_PUBLICATION, "ma"), 0);
    ck_assert_msg(pgw_pq_stream_watch_table(c, "public", "ma", NULL, &err) == PGW_OK, "%s",
                  err.message);
    v = stream_rows(c, "ma");
    ck_assert_str_eq(v, "pgwitness|1|{}");
    free(v);
    made_again_published(c, "ma", "pgwitness|1|{}", INS("ma", "[\"1\"]"));
    PQfinish(c);
}
END_TEST

/* Several rows of dropped tables under one publication and name (left by
 * a version that did not forget them, made here by hand): when a table
 * is made again under the name, the newest of them (watched_at) takes
 * its OID, with its value columns, and the others of that publication
 * are deleted; the row of another publication is adopted there, and a
 * dropped table of another name keeps its row. */
START_TEST(stream_table_made_again_adopts_one_of_several_rows)
{
    PGconn *c = setup();
    pgw_error err;
    pgwt_exec(c, "CREATE PUBLICATION pgwt_adopt_other WITH (publish = 'insert, update, "
                 "delete, truncate', publish_via_partition_root = true); "
                 "CREATE TABLE sr (id int PRIMARY KEY, v text); "
                 "CREATE TABLE sr_gone (id int PRIMARY KEY)");
    const char *vals[] = {"v"};
    pgw_pq_stream_watch_options o = PGW_PQ_STREAM_WATCH_OPTIONS_INIT;
    o.value_columns = vals;
    o.n_value_columns = 1;
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "sr", &o, &err), PGW_OK);
    pgw_pq_stream_watch_options other = PGW_PQ_STREAM_WATCH_OPTIONS_INIT;
    other.publication = "pgwt_adopt_other";
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "sr", &other, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "sr_gone", NULL, &err), PGW_OK);
    /* two older rows of dropped tables named sr in the default
     * publication (the OIDs of two tables made and dropped for it) */
    pgwt_exec(c, "CREATE TABLE pgwt_d1 (); CREATE TABLE pgwt_d2 (); "
                 "INSERT INTO pgwitness.stream_tables (publication, relid, value_columns, "
                 "watched_at, schema_name, table_name, key_columns, full_rows) "
                 "SELECT 'pgwitness', t::regclass::oid, ARRAY[t], now() - interval '1 day', "
                 "'public', 'sr', '{id}', false FROM unnest(ARRAY['pgwt_d1', 'pgwt_d2']) t; "
                 "DROP TABLE pgwt_d1, pgwt_d2; DROP TABLE sr_gone");
    char *v = stream_rows(c, "sr");
    ck_assert_str_eq(v, "pgwitness|0|{pgwt_d1} pgwitness|0|{pgwt_d2} pgwitness|1|{v} "
                        "pgwt_adopt_other|1|{}");
    free(v);
    made_again_published(c, "sr", "pgwitness|1|{v} pgwt_adopt_other|1|{}",
                         "{\"schema\":\"public\",\"table\":\"sr\",\"op\":\"insert\","
                         "\"ids\":[\"1\"],\"ids_truncated\":false,\"columns\":null,"
                         "\"columns_truncated\":false,\"new\":[{\"v\":\"x\"}],"
                         "\"pk_changed\":false}");
    ck_assert_int_eq(published_in(c, "pgwt_adopt_other", "sr"), 1);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.stream_tables "
                                 "WHERE table_name = 'sr_gone' AND publication = 'pgwitness'"),
                     1);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.stream_tables"), 3);
    pgwt_exec(c, "DROP PUBLICATION pgwt_adopt_other");
    PQfinish(c);
}
END_TEST

/* A role without USAGE on the pgwitness schema drops a watched table and
 * makes it again: nothing of the event triggers' schema can run for it,
 * so what the catalog says does: the drop is announced on the default
 * channel and by logical message, the new table is announced and running
 * streams read their configuration again, which reports it as a GAP, and
 * both warn the role what to do. The new table has no triggers;
 * pgw_pq_watch_gaps() lists it, on both sources. */
START_TEST(made_again_without_usage_is_a_gap)
{
    PGconn *c = setup();
    pgw_error err;
    pgwt_exec(c, "SET client_min_messages = warning; DROP ROLE IF EXISTS pgwt_nousage; "
                 "RESET client_min_messages; CREATE ROLE pgwt_nousage; "
                 "CREATE TABLE nu (id int PRIMARY KEY); ALTER TABLE nu OWNER TO pgwt_nousage");
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "nu", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "nu", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_OK);
    PGconn *lc = pgwt_listen(CH);
    pgwt_stream *s = pgwt_stream_open(NULL, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    int gaps = s->gaps;
    exec_collecting_warnings(c, "SET ROLE pgwt_nousage; DROP TABLE nu; "
                                "CREATE TABLE nu (id int PRIMARY KEY); RESET ROLE");
    ck_assert_str_eq(warnings,
                     "pgwitness: public.nu was dropped by role pgwt_nousage, which has no USAGE "
                     "on the pgwitness schema: its drop was announced on the default channel "
                     "(pgwitness) and to the stream only, and a table made again under its name "
                     "will not be watched\n"
                     "pgwitness: public.nu was watched before it was dropped, and is not watched "
                     "again: role pgwt_nousage has no USAGE on the pgwitness schema, so its "
                     "writes reach no subscription\n");
    /* the drop and the making, on both sources (one notification: the
     * same payload twice in one transaction is sent once) */
    pgwt_expect_write(lc, DDL("nu"));
    pgwt_stream_sync(s, c);
    ck_assert_str_eq(pgwt_stream_take(s, NULL), "{" DDL("nu"));
    pgwt_stream_until_streaming(s, 2);
    ck_assert_int_eq(s->gaps, gaps + 1);
    const char *g = stream_gap(s, "public.nu was watched");
    ck_assert_msg(g && strstr(g, "public.nu was watched for the stream (publication pgwitness) "
                                 "before it was dropped, and was made again outside the "
                                 "publication, so its writes are not sent: watch public.nu "
                                 "again (pgw_pq_stream_watch_table)"),
                  "%s", g ? g : "no GAP");
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'nu'::regclass"),
                     0);
    pgw_pq_watch_gap *list = NULL;
    size_t n = 0;
    ck_assert_int_eq(pgw_pq_watch_gaps(&list, &n, c, NULL, &err), PGW_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(list[0].schema, "public");
    ck_assert_str_eq(list[0].table, "nu");
    ck_assert_str_eq(list[0].watched_table, "nu");
    ck_assert_str_eq(list[0].source, "stream");
    ck_assert_str_eq(list[1].table, "nu");
    ck_assert_str_eq(list[1].source, "triggers");
    pgw_free(list);
    char *v = pgwt_value(c, "SELECT message FROM pgwitness.remembered_gaps() "
                            "WHERE source = 'triggers'");
    ck_assert_str_eq(v, "public.nu was watched by the triggers (channel pgwitness) before it was "
                        "dropped, and was made again without them, so its writes are not sent: "
                        "watch public.nu again (pgw_pq_watch_table)");
    free(v);
    pgwt_stream_close(s);
    /* watched again: no gap */
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "nu", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "nu", NULL, &err), PGW_OK);
    list = NULL;
    ck_assert_int_eq(pgw_pq_watch_gaps(&list, &n, c, NULL, &err), PGW_OK);
    ck_assert_uint_eq(n, 0);
    /* Made again in another session: only the drop's warning said so (the
     * names dropped are remembered for the session); the gaps list it. */
    pgwt_exec(c, "SET ROLE pgwt_nousage; DROP TABLE nu; RESET ROLE");
    pgwt_expect_write(lc, DDL("nu"));
    PGconn *c2 = pgwt_connect();
    exec_collecting_warnings(c2, "SET ROLE pgwt_nousage; CREATE TABLE nu (id int PRIMARY KEY); "
                                 "RESET ROLE");
    ck_assert_str_eq(warnings, "");
    PQfinish(c2);
    list = NULL;
    ck_assert_int_eq(pgw_pq_watch_gaps(&list, &n, c, NULL, &err), PGW_OK);
    ck_assert_uint_eq(n, 2);
    pgw_free(list);
    PQfinish(lc);
    ck_assert_int_eq(pgw_pq_remove_ddl_trigger(c, NULL, &err), PGW_OK);
    pgwt_exec(c, "DROP TABLE nu; DROP ROLE pgwt_nousage");
    PQfinish(c);
}
END_TEST

/* A trigger of a partition disabled on purpose (ALTER TABLE ... DISABLE
 * TRIGGER) stays disabled through later DDL with the event triggers
 * (they only make missing triggers); the gaps report it, and only a watch
 * enables it again. */
START_TEST(disabled_partition_trigger_stays_disabled)
{
    PGconn *c = setup();
    pgw_error err;
    pgwt_exec(c, "CREATE TABLE dp (id int PRIMARY KEY) PARTITION BY RANGE (id); "
                 "CREATE TABLE dp1 PARTITION OF dp FOR VALUES FROM (0) TO (10)");
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "dp", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_OK);
    char sql[256];
    snprintf(sql, sizeof sql, "ALTER TABLE dp1 DISABLE TRIGGER pgwitness_insert_%lld",
             (long long)pgwt_int(c, "SELECT 'dp'::regclass::oid"));
    pgwt_exec(c, sql);
    pgwt_exec(c, "ALTER TABLE dp1 ADD CONSTRAINT small CHECK (id < 5); "
                 "CREATE TABLE dp2 PARTITION OF dp FOR VALUES FROM (10) TO (20)");
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'dp1'::regclass "
                                 "AND tgname LIKE 'pgwitness\\_insert\\_%' AND tgenabled = 'D'"),
                     1);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'dp2'::regclass "
                                 "AND tgname LIKE 'pgwitness\\_%' AND tgenabled = 'O'"),
                     4);
    pgw_pq_watch_gap *list = NULL;
    size_t n = 0;
    ck_assert_int_eq(pgw_pq_watch_gaps(&list, &n, c, NULL, &err), PGW_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(list[0].table, "dp1");
    ck_assert_str_eq(list[0].source, "triggers");
    pgw_free(list);
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "dp", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'dp1'::regclass "
                                 "AND tgname LIKE 'pgwitness\\_%' AND tgenabled = 'O'"),
                     4);
    PQfinish(c);
}
END_TEST

/* A role with USAGE on the pgwitness schema but no SELECT on
 * stream_tables drops a table watched for the stream and makes it again:
 * the remembered publication is still found (remembered_publications()),
 * and since the role may not change the publication, it is warned and
 * running streams report the table as a GAP. */
START_TEST(stream_made_again_by_role_that_cannot_read_stream_tables)
{
    PGconn *c = setup();
    pgw_error err;
    pgwt_exec(c, "SET client_min_messages = warning; DROP ROLE IF EXISTS pgwt_usage_only; "
                 "RESET client_min_messages; CREATE ROLE pgwt_usage_only; "
                 "GRANT USAGE ON SCHEMA pgwitness TO pgwt_usage_only; "
                 "CREATE TABLE su (id int PRIMARY KEY); ALTER TABLE su OWNER TO pgwt_usage_only");
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "su", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_OK);
    pgwt_stream *s = pgwt_stream_open(NULL, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    int gaps = s->gaps;
    exec_collecting_warnings(c, "SET ROLE pgwt_usage_only; DROP TABLE su; "
                                "CREATE TABLE su (id int PRIMARY KEY); RESET ROLE");
    ck_assert_str_eq(warnings, "pgwitness: public.su was watched for the stream (publication "
                               "pgwitness) before it was dropped, and is not published again: "
                               "must be owner of publication pgwitness\n");
    pgwt_stream_sync(s, c);
    ck_assert_str_eq(pgwt_stream_take(s, NULL), "{" DDL("su"));
    pgwt_stream_until_streaming(s, 2);
    ck_assert_int_eq(s->gaps, gaps + 1);
    ck_assert_ptr_nonnull(stream_gap(s, "public.su was watched for the stream"));
    pgwt_stream_close(s);
    ck_assert_int_eq(pgw_pq_remove_ddl_trigger(c, NULL, &err), PGW_OK);
    pgwt_exec(c, "DROP TABLE su; REVOKE USAGE ON SCHEMA pgwitness FROM pgwt_usage_only; "
                 "DROP ROLE pgwt_usage_only");
    PQfinish(c);
}
END_TEST

/* The stream's TRUNCATE trigger of a partition disabled: the role is
 * warned, and running streams read their configuration again at once,
 * which reports it as a GAP (not only at their next connect). */
START_TEST(disabled_stream_truncate_trigger_is_a_gap_at_once)
{
    PGconn *c = setup();
    pgw_error err;
    pgwt_exec(c, "CREATE TABLE sdp (id int PRIMARY KEY) PARTITION BY RANGE (id); "
                 "CREATE TABLE sdp1 PARTITION OF sdp FOR VALUES FROM (0) TO (10)");
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "sdp", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_OK);
    pgwt_stream *s = pgwt_stream_open(NULL, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    int gaps = s->gaps;
    char sql[256], want[512];
    long long root = pgwt_int(c, "SELECT 'sdp'::regclass::oid");
    snprintf(sql, sizeof sql, "ALTER TABLE sdp1 DISABLE TRIGGER pgwitness_stream_truncate_%lld",
             root);
    exec_collecting_warnings(c, sql);
    snprintf(want, sizeof want, "pgwitness: trigger pgwitness_stream_truncate_%lld of public.sdp1 "
                                "is disabled, so the writes it reports reach no subscription\n",
             root);
    ck_assert_str_eq(warnings, want);
    pgwt_stream_until_streaming(s, 2);
    ck_assert_int_eq(s->gaps, gaps + 1);
    const char *g = stream_gap(s, "sdp1");
    ck_assert_msg(g != NULL, "no GAP for sdp1");
    pgwt_stream_close(s);
    PQfinish(c);
}
END_TEST

/* The stream: an inheritance child made, or made a child, while a stream
 * runs joins the parent's publication through the event trigger, the
 * stream reads its configuration again, and the child's insert arrives as
 * the parent's; a child without a replica identity is left out with a
 * WARNING (publishing it would fail its writers), the stream's GAP. */
START_TEST(stream_child_made_while_streaming)
{
    PGconn *c = setup();
    pgw_error err;
    pgwt_exec(c, "CREATE TABLE sp (id int PRIMARY KEY, v text)");
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "sp", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_OK);
    pgwt_stream *s = pgwt_stream_open(NULL, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);
    pgwt_exec(c, "CREATE TABLE sk (PRIMARY KEY (id)) INHERITS (sp)");
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_publication_tables WHERE pubname = "
                                 "'pgwitness' AND tablename = 'sk'"),
                     1);
    pgwt_stream_sync(s, c);
    /* sk is published in its own right: the stream reports it under its
     * own name too (stream_published()) */
    ck_assert_str_eq(pgwt_stream_take(s, NULL), "{" DDL("sk"));
    ck_assert_str_eq(pgwt_stream_take(s, NULL), "{" DDL("sp"));
    ck_assert_ptr_null(pgwt_stream_take(s, NULL));
    pgwt_stream_until_streaming(s, 2); /* it read its configuration again */
    pgwt_exec(c, "INSERT INTO sk VALUES (7, 'a')");
    pgwt_stream_sync(s, c);
    ck_assert_str_eq(pgwt_stream_take(s, NULL),
                     "{\"schema\":\"public\",\"table\":\"sp\",\"op\":\"insert\","
                     "\"ids\":[\"7\"],\"ids_truncated\":false,\"columns\":null,"
                     "\"columns_truncated\":false,\"pk_changed\":false}");
    ck_assert_str_eq(pgwt_stream_take(s, NULL), INS("sk", "[\"7\"]"));
    ck_assert_ptr_null(pgwt_stream_take(s, NULL));
    /* A definition change of the child: its own name too, since the
     * stream reports its writes under it as well. */
    pgwt_exec(c, "ALTER TABLE sk ADD COLUMN extra int");
    pgwt_stream_sync(s, c);
    ck_assert_str_eq(pgwt_stream_take(s, NULL), "{" DDL("sk"));
    ck_assert_str_eq(pgwt_stream_take(s, NULL), "{" DDL("sp"));
    ck_assert_ptr_null(pgwt_stream_take(s, NULL));
    /* No replica identity: not published, a warning; its writers work. */
    pgwt_exec(c, "SET client_min_messages = error; CREATE TABLE snokey () INHERITS (sp); "
                 "RESET client_min_messages");
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_publication_tables WHERE pubname = "
                                 "'pgwitness' AND tablename = 'snokey'"),
                     0);
    pgwt_exec(c, "INSERT INTO snokey VALUES (8, 'b'); UPDATE snokey SET v = 'c'; "
                 "DELETE FROM snokey");
    pgwt_stream_close(s);
    PQfinish(c);
}
END_TEST

/* What the event triggers remember of a watch (trigger_watches, and the
 * names in stream_tables): recorded at install for a watch made before;
 * a RENAME announces both names on the table's own channel and on the
 * stream; a DROP announces on that channel; a table made again under the
 * name is watched again as it was (channel, value columns), and announced;
 * made again without a value column, it is announced but not watched
 * (a WARNING says so); an unwatch forgets it. */
START_TEST(remembered_watches)
{
    PGconn *c = setup(), *lc = pgwt_listen("pgwt_other");
    pgw_error err;
    pgwt_exec(c, "CREATE TABLE r (id int PRIMARY KEY, v text)");
    const char *vals[] = {"v"};
    pgw_pq_watch_options o = PGW_PQ_WATCH_OPTIONS_INIT;
    o.channel = "pgwt_other";
    o.value_columns = vals;
    o.n_value_columns = 1;
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "r", &o, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "r", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_OK);
    const char *remembered = "SELECT string_agg(concat_ws('|', schema_name, table_name, channel, "
                             "value_columns, enable_always, coalesce((relid = to_regclass(schema_name "
                             "|| '.' || table_name)::oid)::int::text, '-'), dropped_at IS NOT "
                             "NULL), ' ') "
                             "FROM pgwitness.trigger_watches";
    char *v = pgwt_value(c, remembered);
    ck_assert_str_eq(v, "public|r|pgwt_other|{v}|f|1|f");
    free(v);
    pgwt_stream *s = pgwt_stream_open(NULL, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);

    pgwt_exec(c, "ALTER TABLE r RENAME TO r2");
    pgwt_expect_write(lc, DDL("r"));
    pgwt_expect_write(lc, DDL("r2"));
    ck_assert(pgwt_no_payload(lc, 100));
    pgwt_stream_sync(s, c);
    ck_assert_str_eq(pgwt_stream_take(s, NULL), "{" DDL("r"));
    ck_assert_str_eq(pgwt_stream_take(s, NULL), "{" DDL("r2"));
    ck_assert_ptr_null(pgwt_stream_take(s, NULL));
    /* its targets named r: the stream reads them again (sync_stream()) */
    pgwt_stream_until_streaming(s, 2);
    v = pgwt_value(c, remembered);
    ck_assert_str_eq(v, "public|r2|pgwt_other|{v}|f|1|f");
    free(v);
    v = pgwt_value(c, "SELECT schema_name || '.' || table_name FROM pgwitness.stream_tables");
    ck_assert_str_eq(v, "public.r2");
    free(v);

    pgwt_exec(c, "DROP TABLE r2");
    pgwt_expect_write(lc, DDL("r2")); /* on its own channel */
    ck_assert(pgwt_no_payload(lc, 100));
    pgwt_stream_sync(s, c);
    ck_assert_str_eq(pgwt_stream_take(s, NULL), "{" DDL("r2"));
    ck_assert_ptr_null(pgwt_stream_take(s, NULL));
    v = pgwt_value(c, remembered);
    ck_assert_str_eq(v, "public|r2|pgwt_other|{v}|f|-|t");
    free(v);

    pgwt_exec(c, "CREATE TABLE r2 (id int PRIMARY KEY, v text)");
    pgwt_expect_write(lc, DDL("r2"));
    ck_assert(pgwt_no_payload(lc, 100));
    v = pgwt_value(c, remembered);
    ck_assert_str_eq(v, "public|r2|pgwt_other|{v}|f|1|f");
    free(v);
    pgwt_exec(c, "INSERT INTO r2 VALUES (1, 'x')");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"r2\",\"op\":\"insert\",\"ids\":"
                          "[\"1\"],\"ids_truncated\":false,\"columns\":null,"
                          "\"columns_truncated\":false,\"new\":[{\"v\":\"x\"}],"
                          "\"pk_changed\":false}");
    pgw_pq_watch_gap *gaps = NULL;
    size_t n = 99;
    ck_assert_int_eq(pgw_pq_watch_gaps(&gaps, &n, c, NULL, &err), PGW_OK);
    ck_assert_uint_eq(n, 0);
    /* Watching it again describes its key; nothing else changes. */
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "r2", &o, &err), PGW_OK);
    v = pgwt_value(c, remembered);
    ck_assert_str_eq(v, "public|r2|pgwt_other|{v}|f|1|f");
    free(v);
    char *p;
    while ((p = pgwt_next_payload(lc, 200, NULL)) != NULL)
        free(p);

    /* Made again without its value column: announced, not watched. */
    warnings[0] = '\0';
    PQsetNoticeReceiver(c, collect_notice, NULL);
    pgwt_exec(c, "DROP TABLE r2; CREATE TABLE r2 (id int PRIMARY KEY)");
    ck_assert_str_eq(warnings, "pgwitness: public.r2 was watched (channel pgwt_other) before it was "
                               "dropped, and is not watched again: it has no value column v\n");
    /* the drop and the make-again: one transaction, and NOTIFY folds the
     * same payload on the same channel into one */
    pgwt_expect_write(lc, DDL("r2"));
    ck_assert(pgwt_no_payload(lc, 100));
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'r2'::regclass"),
                     0);
    pgwt_stream_sync(s, c);
    while (pgwt_stream_take(s, NULL))
        ;
    pgwt_stream_close(s);

    /* Watched again by hand, then unwatched: forgotten. */
    pgwt_exec(c, "ALTER TABLE r2 ADD COLUMN v text");
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "r2", &o, &err), PGW_OK);
    v = pgwt_value(c, remembered);
    ck_assert_str_eq(v, "public|r2|pgwt_other|{v}|f|1|f");
    free(v);
    bool dropped = false;
    ck_assert_int_eq(pgw_pq_unwatch_table(&dropped, c, "public", "r2", &err), PGW_OK);
    ck_assert(dropped);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.trigger_watches"), 0);
    ck_assert_int_eq(pgw_pq_remove_ddl_trigger(c, NULL, &err), PGW_OK);
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

#define KEPT(t, was)                                                                           \
    "pgwitness: public." t " was left without a usable replica identity (REPLICA IDENTITY " was \
    ") while published for the stream (publication pgwitness), which would fail its writers' " \
    "UPDATE and DELETE: it is REPLICA IDENTITY FULL now\n"

static char *replica_identities(PGconn *c, const char *like)
{
    char q[256];
    snprintf(q, sizeof q,
             "SELECT string_agg(relname || '=' || relreplident::text, ' ' ORDER BY relname) "
             "FROM pg_class WHERE relkind = 'r' AND relname LIKE '%s'",
             like);
    return pgwt_value(c, q);
}

/* A DDL that leaves a table published for the stream without a usable
 * replica identity would fail every writer's UPDATE and DELETE of it
 * (PostgreSQL documentation, "Logical Replication", "Publication"): the
 * event trigger gives it REPLICA IDENTITY FULL with a WARNING, running
 * streams read their configuration again, and the writers' UPDATEs then
 * succeed and reach the stream. Each way there: the primary key dropped,
 * the index of REPLICA IDENTITY USING INDEX dropped (sql_drop, which does
 * not name the table), REPLICA IDENTITY NOTHING, a partitioned root's key
 * dropped (every partition); without the event triggers,
 * pgw_pq_announce_ddl() does it; a role that does not own the table is
 * told the ALTER TABLE to run, and the table is left as it is. */
START_TEST(stream_table_keeps_a_replica_identity)
{
    PGconn *c = setup();
    pgw_error err;
    pgwt_exec(c, "CREATE TABLE ki (id int CONSTRAINT ki_pk PRIMARY KEY, v int); "
                 "INSERT INTO ki VALUES (1, 1); "
                 "CREATE TABLE kp (id int PRIMARY KEY, v int) PARTITION BY RANGE (id); "
                 "CREATE TABLE kp1 PARTITION OF kp FOR VALUES FROM (0) TO (10); "
                 "CREATE TABLE kp2 PARTITION OF kp FOR VALUES FROM (10) TO (20); "
                 "INSERT INTO kp VALUES (1, 1), (11, 1); "
                 "CREATE TABLE other (id int, v int); "
                 "CREATE PUBLICATION pgwt_theirs FOR TABLE other");
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "ki", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "kp", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_OK);
    pgwt_stream *s = pgwt_stream_open(NULL, NULL, NULL);
    pgwt_stream_until_streaming(s, 1);

    /* The primary key dropped: FULL at once, in the DDL's transaction,
     * so an UPDATE after it in that transaction succeeds. */
    exec_collecting_warnings(c, "BEGIN; ALTER TABLE ki DROP CONSTRAINT ki_pk; "
                                "UPDATE ki SET v = 2 WHERE id = 1; COMMIT");
    ck_assert_str_eq(warnings, KEPT("ki", "DEFAULT"));
    char *v = replica_identities(c, "k%");
    ck_assert_str_eq(v, "ki=f kp1=d kp2=d");
    free(v);
    v = pgwt_value(c, "SELECT key_columns::text || full_rows FROM pgwitness.stream_tables "
                      "WHERE table_name = 'ki'");
    ck_assert_str_eq(v, "{}true");
    free(v);
    pgwt_stream_sync(s, c);
    ck_assert_str_eq(pgwt_stream_take(s, NULL), "{" DDL("ki"));
    const char *w = pgwt_stream_take(s, NULL);
    ck_assert_msg(w && strstr(w, "\"table\":\"ki\",\"op\":\"update\""), "%s", w ? w : "none");
    ck_assert_ptr_null(pgwt_stream_take(s, NULL));
    pgwt_stream_until_streaming(s, 2); /* its targets went stale: read again */

    /* REPLICA IDENTITY USING INDEX, then the index dropped. */
    exec_collecting_warnings(c, "ALTER TABLE ki ALTER id SET NOT NULL; "
                                "CREATE UNIQUE INDEX ki_u ON ki (id); "
                                "ALTER TABLE ki REPLICA IDENTITY USING INDEX ki_u");
    ck_assert_str_eq(warnings, "");
    exec_collecting_warnings(c, "DROP INDEX ki_u");
    ck_assert_str_eq(warnings, KEPT("ki", "USING INDEX"));
    /* NOTHING, asked for: still FULL, and said so. */
    exec_collecting_warnings(c, "ALTER TABLE ki REPLICA IDENTITY NOTHING");
    ck_assert_str_eq(warnings, KEPT("ki", "NOTHING"));
    v = replica_identities(c, "ki");
    ck_assert_str_eq(v, "ki=f");
    free(v);
    pgwt_exec(c, "DELETE FROM ki WHERE id = 1");

    /* A partitioned root's key dropped: each partition loses its own. */
    exec_collecting_warnings(c, "ALTER TABLE kp DROP CONSTRAINT kp_pkey");
    ck_assert_str_eq(warnings, KEPT("kp1", "DEFAULT") KEPT("kp2", "DEFAULT"));
    v = replica_identities(c, "kp%");
    ck_assert_str_eq(v, "kp1=f kp2=f");
    free(v);
    pgwt_exec(c, "UPDATE kp SET v = 3");
    /* A table in a publication of someone else's is not ours to change. */
    exec_collecting_warnings(c, "ALTER TABLE other REPLICA IDENTITY NOTHING");
    ck_assert_str_eq(warnings, "");

    /* Without the event triggers: the announcement does it. */
    ck_assert_int_eq(pgw_pq_remove_ddl_trigger(c, NULL, &err), PGW_OK);
    pgwt_exec(c, "ALTER TABLE ki ADD PRIMARY KEY (id), REPLICA IDENTITY DEFAULT; "
                 "ALTER TABLE ki DROP CONSTRAINT ki_pkey");
    v = replica_identities(c, "ki");
    ck_assert_str_eq(v, "ki=d");
    free(v);
    warnings[0] = '\0';
    PQnoticeReceiver old = PQsetNoticeReceiver(c, collect_notice, NULL);
    ck_assert_int_eq(pgw_pq_announce_ddl(c, "public", "ki", NULL, &err), PGW_OK);
    PQsetNoticeReceiver(c, old, NULL);
    ck_assert_str_eq(warnings, KEPT("ki", "DEFAULT"));
    v = replica_identities(c, "ki");
    ck_assert_str_eq(v, "ki=f");
    free(v);

    /* A role that does not own it: told what to run; nothing changes. */
    pgwt_exec(c, "ALTER TABLE ki REPLICA IDENTITY NOTHING; "
                 "SET client_min_messages = warning; DROP ROLE IF EXISTS pgwt_announcer; "
                 "CREATE ROLE pgwt_announcer; RESET client_min_messages; "
                 "GRANT USAGE ON SCHEMA pgwitness TO pgwt_announcer");
    warnings[0] = '\0';
    old = PQsetNoticeReceiver(c, collect_notice, NULL);
    pgwt_exec(c, "SET ROLE pgwt_announcer");
    ck_assert_int_eq(pgw_pq_announce_ddl(c, "public", "ki", NULL, &err), PGW_OK);
    pgwt_exec(c, "RESET ROLE");
    PQsetNoticeReceiver(c, old, NULL);
    ck_assert_str_eq(warnings, "pgwitness: public.ki has no usable replica identity (REPLICA "
                               "IDENTITY NOTHING) and is published for the stream (publication "
                               "pgwitness), so PostgreSQL fails its writers' UPDATE and DELETE; "
                               "role pgwt_announcer does not own it\n");
    v = replica_identities(c, "ki");
    ck_assert_str_eq(v, "ki=n");
    free(v);
    pgwt_exec(c, "REVOKE USAGE ON SCHEMA pgwitness FROM pgwt_announcer; "
                 "DROP ROLE pgwt_announcer");

    /* The owner has no USAGE on the library schema: nothing of it can be
     * called, so the WARNING says what its writers meet and what to run. */
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_OK);
    pgwt_exec(c, "SET client_min_messages = warning; DROP ROLE IF EXISTS pgwt_nousage_ri; "
                 "CREATE ROLE pgwt_nousage_ri; RESET client_min_messages; "
                 "ALTER TABLE ki ADD PRIMARY KEY (id), REPLICA IDENTITY DEFAULT; "
                 "ALTER TABLE ki OWNER TO pgwt_nousage_ri");
    exec_collecting_warnings(c, "SET ROLE pgwt_nousage_ri; ALTER TABLE ki DROP CONSTRAINT "
                                "ki_pkey; RESET ROLE");
    ck_assert_str_eq(warnings,
                     "pgwitness: the definition change of public.ki was not announced: role "
                     "pgwt_nousage_ri has no USAGE on the pgwitness schema\n"
                     "pgwitness: public.ki is published without a usable replica identity "
                     "(REPLICA IDENTITY DEFAULT), so PostgreSQL fails its writers' UPDATE and "
                     "DELETE; role pgwt_nousage_ri has no USAGE on the pgwitness schema, so it "
                     "was not made REPLICA IDENTITY FULL\n");
    v = replica_identities(c, "ki");
    ck_assert_str_eq(v, "ki=d");
    free(v);
    pgwt_exec(c, "DROP TABLE ki; DROP ROLE pgwt_nousage_ri");
    pgwt_stream_close(s);
    PQfinish(c);
}
END_TEST

/* Without the event triggers, a watch is remembered all the same
 * (trigger_watches, at pgw_pq_watch_table()), so a table watched by the
 * triggers, dropped and made again without them, is listed as a gap. */
START_TEST(watch_remembered_without_the_event_triggers)
{
    PGconn *c = setup();
    pgw_error err;
    pgwt_exec(c, "CREATE TABLE rw (id int PRIMARY KEY)");
    ck_assert_int_eq(n_event_triggers(c), 0);
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "rw", NULL, &err), PGW_OK);
    char *v = pgwt_value(c, "SELECT string_agg(concat_ws('|', schema_name, table_name, channel, "
                            "relid = 'rw'::regclass::oid, dropped_at IS NULL), ' ') "
                            "FROM pgwitness.trigger_watches");
    ck_assert_str_eq(v, "public|rw|pgwitness|t|t");
    free(v);
    /* watching again changes nothing there */
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "rw", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.trigger_watches"), 1);
    pgwt_exec(c, "DROP TABLE rw; CREATE TABLE rw (id int PRIMARY KEY)");
    pgw_pq_watch_gap *list = NULL;
    size_t n = 0;
    ck_assert_int_eq(pgw_pq_watch_gaps(&list, &n, c, NULL, &err), PGW_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(list[0].table, "rw");
    ck_assert_str_eq(list[0].watched_table, "rw");
    ck_assert_str_eq(list[0].source, "triggers");
    pgw_free(list);
    /* watched again: no gap */
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "rw", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_watch_gaps(&list, &n, c, NULL, &err), PGW_OK);
    ck_assert_uint_eq(n, 0);
    pgw_free(list);
    PQfinish(c);
}
END_TEST

/* Without the event triggers, pgw_pq_announce_ddl() after a migration
 * does what they would have done at its DDL: a partition made and an
 * inheritance child made since the watch get their triggers (both
 * sources), the child joins the stream's publication, and nothing is
 * left in pgw_pq_watch_gaps(); the partition's writes then reach the
 * listener as the root's. */
START_TEST(announce_covers_new_descendants)
{
    PGconn *c = setup();
    pgw_error err;
    pgwt_exec(c, "CREATE TABLE pt (id int PRIMARY KEY) PARTITION BY RANGE (id); "
                 "CREATE TABLE pt1 PARTITION OF pt FOR VALUES FROM (0) TO (10); "
                 "CREATE TABLE pw (id int PRIMARY KEY) PARTITION BY RANGE (id); "
                 "CREATE TABLE pw1 PARTITION OF pw FOR VALUES FROM (0) TO (10); "
                 "CREATE TABLE par (id int PRIMARY KEY)");
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "pt", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_watch_table(c, "public", "par", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "pw", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_stream_watch_table(c, "public", "par", NULL, &err), PGW_OK);
    pgwt_exec(c, "CREATE TABLE pt5 PARTITION OF pt FOR VALUES FROM (10) TO (20); "
                 "CREATE TABLE pw5 PARTITION OF pw FOR VALUES FROM (10) TO (20); "
                 "SET client_min_messages = warning; "
                 "CREATE TABLE c1 (id int PRIMARY KEY) INHERITS (par); "
                 "RESET client_min_messages");
    pgw_pq_watch_gap *gaps = NULL;
    size_t n = 0;
    ck_assert_int_eq(pgw_pq_watch_gaps(&gaps, &n, c, NULL, &err), PGW_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(gaps[0].table, "c1");
    ck_assert_str_eq(gaps[0].source, "triggers");
    ck_assert_str_eq(gaps[1].table, "pt5");
    ck_assert_str_eq(gaps[1].source, "triggers");
    ck_assert_str_eq(gaps[2].table, "pw5");
    ck_assert_str_eq(gaps[2].source, "stream");
    pgw_free(gaps);
    PGconn *lc = pgwt_listen(CH);
    ck_assert_int_eq(pgw_pq_announce_ddl(c, "public", "pt", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_announce_ddl(c, "public", "pw", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_announce_ddl(c, "public", "par", NULL, &err), PGW_OK);
    pgwt_expect_write(lc, DDL("pt"));
    pgwt_expect_write(lc, DDL("par"));
    ck_assert(pgwt_no_payload(lc, 100));
    ck_assert_int_eq(pgw_pq_watch_gaps(&gaps, &n, c, NULL, &err), PGW_OK);
    ck_assert_uint_eq(n, 0);
    pgw_free(gaps);
    char *v = pgwt_value(c, "SELECT string_agg(prrelid::regclass::text, ' ' ORDER BY "
                            "prrelid::regclass::text) FROM pg_publication_rel");
    ck_assert_str_eq(v, "c1 par pw");
    free(v);
    pgwt_exec(c, "INSERT INTO pt5 VALUES (15)");
    pgwt_expect_write(lc, "\"schema\":\"public\",\"table\":\"pt\",\"op\":\"insert\",\"ids\":"
                          "[\"15\"],\"ids_truncated\":false,\"columns\":null,"
                          "\"columns_truncated\":false,\"pk_changed\":false}");
    ck_assert(pgwt_no_payload(lc, 100));
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

START_TEST(install_upgrades_version_4)
{
    PGconn *c = setup();
    pgw_error err;
    int v = 0;
    pgwt_exec(c, "DROP FUNCTION pgwitness.on_ddl_event(), "
                 "pgwitness.announce_ddl(text, text, text[], boolean), pgwitness.ddl_targets(regclass); "
                 "DELETE FROM pgwitness.schema_version WHERE version >= 5");
    ck_assert_int_eq(pgw_pq_schema_version(&v, c, NULL, &err), PGW_OK);
    ck_assert_int_eq(v, 4);
    ck_assert_int_eq(pgw_pq_announce_ddl(c, "public", "t", NULL, &err), PGW_ENOTFOUND);
    ck_assert_int_eq(pgw_pq_install_ddl_trigger(c, NULL, &err), PGW_ENOTFOUND);
    ck_assert_str_eq(err.message, "schema \"pgwitness\" has no on_ddl_event() (pgwitness "
                                  "schema version 5): run pgw_pq_install() to install or "
                                  "upgrade it");
    ck_assert_int_eq(pgw_pq_install(&v, c, NULL, &err), PGW_OK);
    ck_assert_int_eq(v, PGW_PQ_SCHEMA_VERSION);
    PGconn *lc = pgwt_listen(CH);
    ck_assert_int_eq(pgw_pq_announce_ddl(c, "public", "t", NULL, &err), PGW_OK);
    pgwt_expect_write(lc, DDL("t"));
    PQfinish(lc);
    /* From version 6: migrations 4 and 5 again, then 7 and 8. */
    pgwt_exec(c, "DROP FUNCTION pgwitness.remembered_publications(regclass); "
                 "DELETE FROM pgwitness.schema_version WHERE version >= 7");
    ck_assert_int_eq(pgw_pq_install(&v, c, NULL, &err), PGW_OK);
    ck_assert_int_eq(v, PGW_PQ_SCHEMA_VERSION);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_proc "
                                 "WHERE proname = 'remembered_publications' AND prosecdef"),
                     1);
    /* From version 7: migration 5 again (on_ddl_event() and announce_ddl()
     * as they are now, from migration 7's), then 8. */
    pgwt_exec(c, "DROP FUNCTION pgwitness.keep_replica_identity(oid[]), "
                 "pgwitness.identity_gaps(oid[]); "
                 "CREATE OR REPLACE FUNCTION pgwitness.on_ddl_event() RETURNS event_trigger "
                 "LANGUAGE plpgsql AS $$BEGIN END$$; "
                 "DELETE FROM pgwitness.schema_version WHERE version >= 8");
    ck_assert_int_eq(pgw_pq_schema_version(&v, c, NULL, &err), PGW_OK);
    ck_assert_int_eq(v, 7);
    ck_assert_int_eq(pgw_pq_install(&v, c, NULL, &err), PGW_OK);
    ck_assert_int_eq(v, 8);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_proc WHERE proname = 'on_ddl_event' "
                                 "AND prosrc LIKE '%keep_replica_identity(_again::oid[])%'"),
                     1);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_proc "
                                 "WHERE proname = 'identity_gaps' AND prosecdef"),
                     1);
    pgwt_exec(c, "CREATE TABLE up8 (id int PRIMARY KEY); "
                 "CREATE PUBLICATION pgwt_up8 FOR TABLE up8; "
                 "INSERT INTO pgwitness.stream_tables (publication, relid, value_columns) "
                 "SELECT 'pgwt_up8', 'up8'::regclass, '{}'");
    ck_assert_int_eq(pgwt_int(c, "SELECT pgwitness.keep_replica_identity(NULL)"), 0);
    pgwt_exec(c, "SET client_min_messages = error; ALTER TABLE up8 DROP CONSTRAINT up8_pkey; "
                 "RESET client_min_messages");
    ck_assert_int_eq(pgwt_int(c, "SELECT pgwitness.keep_replica_identity(NULL)"), 1);
    PQfinish(c);
}
END_TEST

/* Every allocation of pgw_pq_announce_ddl and of the event triggers'
 * install and removal fails in turn: PGW_ENOMEM, nothing sent or changed,
 * the connection idle, nothing leaked; then it succeeds. */
START_TEST(allocation_failures)
{
    PGconn *c = setup(), *lc = pgwt_listen("pgwt_other");
    const char *chans[] = {"pgwt_other"};
    pgw_pq_announce_options o = PGW_PQ_ANNOUNCE_OPTIONS_INIT;
    o.channels = chans;
    o.n_channels = 1;
    for (int which = 0; which < 3; which++) {
        pgwt_alloc_install();
        bool succeeded = false;
        for (size_t n = 1; n < 100 && !succeeded; n++) {
            pgwt_alloc_reset();
            pgwt_alloc_fail_at(n);
            pgw_error err;
            int rc = which == 0   ? pgw_pq_announce_ddl(c, "public", "t", &o, &err)
                     : which == 1 ? pgw_pq_install_ddl_trigger(c, NULL, &err)
                                  : pgw_pq_remove_ddl_trigger(c, NULL, &err);
            bool failed = pgwt_alloc_failed();
            pgwt_alloc_fail_at(0);
            if (failed) {
                ck_assert_int_eq(rc, PGW_ENOMEM);
                ck_assert_int_eq(PQtransactionStatus(c), PQTRANS_IDLE);
                ck_assert_int_eq(n_event_triggers(c), which == 2 ? 2 : 0);
            } else {
                ck_assert_msg(rc == PGW_OK, "%s", err.message);
                succeeded = true;
            }
            ck_assert_uint_eq(pgwt_alloc_get().live, 0);
        }
        pgwt_alloc_uninstall();
        ck_assert(succeeded);
    }
    ck_assert_int_eq(n_event_triggers(c), 0);
    pgwt_expect_write(lc, DDL("t")); /* the one announcement that succeeded */
    ck_assert(pgwt_no_payload(lc, 100));
    PQfinish(lc);
    PQfinish(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("ddl");
    TCase *tc = tcase_create("ddl");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, event_trigger_announces_every_ddl);
    tcase_add_test(tc, announce_ddl_after_every_ddl);
    tcase_add_test(tc, announce_targets_and_transactions);
    tcase_add_test(tc, announce_errors);
    tcase_add_test(tc, ddl_trigger_install_and_remove);
    tcase_add_test(tc, failure_inside_is_a_warning);
    tcase_add_test(tc, new_partitions_get_their_triggers);
    tcase_add_test(tc, enable_always_with_the_event_trigger);
    tcase_add_test(tc, stream_child_made_while_streaming);
    tcase_add_test(tc, stream_only_and_inheritance);
    tcase_add_test(tc, remembered_watches);
    tcase_add_test(tc, stream_sees_ddl_before_the_first_write);
    tcase_add_test(tc, stream_follows_rename_with_event_trigger);
    tcase_add_test(tc, stream_follows_rename_from_relation_message);
    tcase_add_test(tc, stream_follows_new_primary_key);
    tcase_add_test(tc, stream_table_made_again_without_identity_is_a_gap);
    tcase_add_test(tc, stream_table_made_again_after_a_watch_of_the_new_table);
    tcase_add_test(tc, stream_table_made_again_adopts_one_of_several_rows);
    tcase_add_test(tc, made_again_without_usage_is_a_gap);
    tcase_add_test(tc, stream_made_again_by_role_that_cannot_read_stream_tables);
    tcase_add_test(tc, disabled_stream_truncate_trigger_is_a_gap_at_once);
    tcase_add_test(tc, disabled_partition_trigger_stays_disabled);
    tcase_add_test(tc, stream_table_keeps_a_replica_identity);
    tcase_add_test(tc, watch_remembered_without_the_event_triggers);
    tcase_add_test(tc, announce_covers_new_descendants);
    tcase_add_test(tc, install_upgrades_version_4);
    tcase_add_test(tc, allocation_failures);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    pgwt_pg_setup("ddl");
    return pgwt_main(suite());
}
