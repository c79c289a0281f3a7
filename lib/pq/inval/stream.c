/*
 * lib/pq/inval/stream.c — the stream's source of a listener tenant
 * (pgw_pq_listener_add_stream, pgwitness-pq.h): a replication=database
 * connection, its set-up, START_REPLICATION ... LOGICAL with pgoutput, the
 * CopyData it receives (decoded by the core, pgoutput.h), and the standby
 * status updates it sends. The tenant's life (connecting, backoff, the
 * cap, idle closes, the event loop) is listener.c's.
 *
 * Set-up, in the tenant's SETUP state, each step one simple query (a
 * replication connection takes no parameters: values are quoted into the
 * text) sent without blocking:
 *
 *   CONFIG   stream_config.sql: the server, the publication, the slot
 *   TARGETS  stream_targets.sql: the tables and how to report them
 *   DROP     DROP_REPLICATION_SLOT, for a permanent slot the server lost
 *   CREATE   CREATE_REPLICATION_SLOT ... LOGICAL pgoutput NOEXPORT_SNAPSHOT
 *            (a temporary slot on every connect; a permanent one when
 *            missing or lost)
 *   RECORD   INSERT into <schema>.slots, for a permanent slot just made
 *   START    START_REPLICATION SLOT ... LOGICAL <lsn> (proto_version '1',
 *            publication_names '...', messages 'true'), until COPY_BOTH
 *
 * Then READY: frames are read with PQgetCopyData (async), decoded, and
 * each committed transaction's write sets delivered. Positions (PostgreSQL
 * documentation, "Streaming Replication Protocol"): `handled` is the end
 * LSN of the last transaction delivered, or, while no transaction is in
 * flight, the end of WAL a keepalive reports (everything before it was
 * sent, and delivered); the standby status update confirms it as flushed.
 * A reconnect starts at `handled`, so this process never sees a
 * transaction twice; the server starts at the slot's confirmed position
 * when handled is 0 (a new process).
 * SPDX-License-Identifier: MIT
 */
#include "listener_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pg_array.h"

typedef enum phase {
    P_IDLE,
    P_CONFIG,
    P_TARGETS,
    P_REGISTRY,
    P_DROP,
    P_CREATE,
    P_RECORD,
    P_START,
    P_STREAMING
} phase;

typedef struct own_name {
    uint32_t relid;
    char *name; /* "schema\037table" */
} own_name;

struct pgwi_stream {
    pgw_pq_stream_options o;
    char *publication, *perm_slot, *pgw_schema;
    char slot[64];      /* the slot of this connection */
    pgw_pq_tenant_id id;
    unsigned temp_seq;  /* temporary slots made, for unique names */
    pgw_pgoutput *dec;
    phase ph;
    /* what CONFIG found */
    bool values_readable, slots_writable, remembers;
    bool slot_exists, slot_lost;
    /* the published tables' own names as TARGETS gave them */
    own_name *own;
    size_t n_own;
    /* set-up */
    bool slot_new;      /* the slot was made on this connection */
    bool ever_streamed; /* this process streamed from the permanent slot */
    bool registry_read; /* this connection asked <schema>.slots about it */
    bool registered;    /* ...and found that a pgwitness stream made it */
    /* positions */
    uint64_t received, handled, confirmed, server_lsn, start_lsn;
    uint64_t slot_confirmed; /* the slot's confirmed_flush_lsn at CONFIG */
    int64_t last_status_ms;
    int64_t last_commit_time, last_send_time; /* server clock, us since 2000 */
    bool reconfigure;   /* a configuration message: reconnect after its commit */
    bool start_missed;  /* START found the slot gone: check it again */
    char last_error[PGW_ERROR_MESSAGE_SIZE];
    int last_error_code;
    uint64_t status_updates, writes, resets;
};

/* ------------------------------------------------------------------ */
/* options                                                             */

static bool slot_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return false;
    return true;
}

int pgwi_stream_new(pgwi_stream **out, const pgw_pq_stream_options *opts,
                    const pgw_scope *scope, pgw_pq_tenant_id id, pgw_error *err)
{
    static const char fn[] = "pq_listener_add_stream";
    pgw_pq_stream_options defaults = PGW_PQ_STREAM_OPTIONS_INIT;
    const pgw_pq_stream_options *o = opts ? opts : &defaults;
    if (o->version != PGW_PQ_STREAM_OPTIONS_VERSION)
        return pgwi_error(err, PGW_EINVAL,
                          "%s: stream options version %u is not %u (use "
                          "PGW_PQ_STREAM_OPTIONS_INIT)",
                          fn, o->version, (unsigned)PGW_PQ_STREAM_OPTIONS_VERSION);
    if (o->slot && !slot_name_ok(o->slot))
        return pgwi_error(err, PGW_EINVAL,
                          "%s: slot name \"%.80s\" must be 1..63 bytes of a-z, 0-9 and _ "
                          "(PostgreSQL's rule for replication slots)",
                          fn, o->slot);
    int rc;
    if (o->publication &&
        ((rc = pgwi_pq_check_name("pq_listener_add_stream: publication", o->publication, err)) <
             0 ||
         strlen(o->publication) > 63))
        return rc < 0 ? rc
                      : pgwi_error(err, PGW_EINVAL, "%s: the publication name is over 63 bytes",
                                   fn);
    if (o->pgw_schema &&
        (rc = pgwi_pq_check_name("pq_listener_add_stream: pgw_schema", o->pgw_schema, err)) < 0)
        return rc;
    if (o->status_interval_ms < 10)
        return pgwi_error(err, PGW_EINVAL, "%s: status_interval_ms must be >= 10", fn);
    pgwi_stream *s = pgwi_calloc(1, sizeof *s);
    if (!s)
        return pgwi_enomem(err);
    s->o = *o;
    s->id = id;
    pgw_pgoutput_options po = PGW_PGOUTPUT_OPTIONS_INIT;
    po.max_ids_per_write = o->max_ids_per_write;
    po.max_txn_bytes = o->max_txn_bytes;
    s->publication = pgwi_strdup(o->publication ? o->publication : PGW_PQ_DEFAULT_PUBLICATION);
    s->pgw_schema = pgwi_strdup(pgwi_pq_schema(o->pgw_schema));
    s->perm_slot = pgwi_strdup(o->slot);
    if (!s->publication || !s->pgw_schema || (o->slot && !s->perm_slot)) {
        pgwi_stream_free(s);
        return pgwi_enomem(err);
    }
    if ((rc = pgw_pgoutput_new(&s->dec, scope, &po, err)) < 0) {
        pgwi_stream_free(s);
        if (rc == PGW_EINVAL)
            return pgwi_error(err, PGW_EINVAL,
                              "%s: max_ids_per_write must be >= 1 and max_txn_bytes >= 1024",
                              fn);
        return rc;
    }
    s->o.publication = s->publication;
    s->o.slot = s->perm_slot;
    s->o.pgw_schema = s->pgw_schema;
    *out = s;
    return PGW_OK;
}

/* The names TARGETS gave the published tables (their own targets):
 * forgotten. */
static void forget_own_names(pgwi_stream *s)
{
    for (size_t i = 0; i < s->n_own; i++)
        pgwi_free(s->own[i].name);
    pgwi_free(s->own);
    s->own = NULL;
    s->n_own = 0;
}

/* Remembers a published table's name, "schema\037table"; false when memory
 * ran out. */
static bool remember_own_name(pgwi_stream *s, uint32_t relid, const char *schema,
                              const char *table)
{
    size_t ls = strlen(schema), lt = strlen(table);
    char *name = pgwi_malloc(ls + lt + 2);
    own_name *a = name ? pgwi_reallocarray(s->own, s->n_own + 1, sizeof *a) : NULL;
    if (!a) {
        pgwi_free(name);
        return false;
    }
    memcpy(name, schema, ls);
    name[ls] = '\037';
    memcpy(name + ls + 1, table, lt + 1);
    s->own = a;
    s->own[s->n_own].relid = relid;
    s->own[s->n_own++].name = name;
    return true;
}

/* Whether relation relid, which TARGETS gave as its own target, now has
 * another name than it gave (the last Relation message's). */
static bool renamed_since_targets(const pgwi_stream *s, uint32_t relid)
{
    const char *schema, *table;
    if (pgw_pgoutput_relation_name(&schema, &table, s->dec, relid) < 0)
        return false;
    if (!schema[0])
        schema = "pg_catalog";
    size_t ls = strlen(schema);
    for (size_t i = 0; i < s->n_own; i++) {
        const char *n = s->own[i].name;
        if (s->own[i].relid == relid)
            return !(strncmp(n, schema, ls) == 0 && n[ls] == '\037' &&
                     strcmp(n + ls + 1, table) == 0);
    }
    return false;
}

void pgwi_stream_free(pgwi_stream *s)
{
    if (!s)
        return;
    forget_own_names(s);
    pgw_pgoutput_free(s->dec);
    pgwi_free(s->publication);
    pgwi_free(s->perm_slot);
    pgwi_free(s->pgw_schema);
    pgwi_free(s);
}

const char *pgwi_stream_slot(const pgwi_stream *s)
{
    return s->perm_slot;
}

/* The session settings that make the walsender print values as the
 * triggers do (docs/wire.md, "Text forms"). */
static const char text_forms[] = "-c DateStyle=ISO,YMD -c IntervalStyle=postgres -c TimeZone=UTC "
                                 "-c extra_float_digits=3 -c bytea_output=hex";

void pgwi_stream_conn_params(const pgwi_stream *s, const char **kw, const char **val,
                             size_t *n_before, size_t *n_after)
{
    (void)s;
    kw[0] = "application_name";
    val[0] = "pgwitness-stream";
    *n_before = 1;
    kw[1] = "replication";
    val[1] = "database";
    kw[2] = "options";
    val[2] = text_forms;
    *n_after = 2;
}

/* ------------------------------------------------------------------ */
/* sending                                                             */

static int64_t pg_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 - PGW_PG_EPOCH_OFFSET_USEC;
}

/* Flushes libpq's output; false after a failure (the tenant then failed). */
static bool flush(pgw_pq_listener *l, pgwi_tenant *t, int64_t now)
{
    int f = PQflush(t->conn);
    if (f < 0) {
        pgwi_listener_fail_conn(l, t, "sending to the server", now);
        return false;
    }
    t->want_write = f == 1;
    return true;
}

/* Sends a simple query of the set-up; the next results belong to `next`. */
static void send_step(pgw_pq_listener *l, pgwi_tenant *t, const char *sql, phase next,
                      int64_t now)
{
    pgwi_stream *s = t->stream;
    if (!PQsendQuery(t->conn, sql)) {
        pgwi_listener_fail_conn(l, t, "setting up the stream", now);
        return;
    }
    s->ph = next;
    t->deadline = now + l->o.connect_timeout_ms;
    flush(l, t, now);
}

/* A standby status update with the handled position. */
static bool send_status(pgw_pq_listener *l, pgwi_tenant *t, int64_t now, bool reply)
{
    pgwi_stream *s = t->stream;
    unsigned char buf[PGW_REPLICATION_STATUS_SIZE];
    uint64_t written = s->received > s->handled ? s->received : s->handled;
    pgw_replication_status(buf, written, s->handled, s->handled, pg_now_us(), reply);
    if (PQputCopyData(t->conn, (const char *)buf, (int)sizeof buf) != 1) {
        pgwi_listener_fail_conn(l, t, "sending a status update", now);
        return false;
    }
    s->confirmed = s->handled;
    s->last_status_ms = now;
    s->status_updates++;
    return flush(l, t, now);
}

/* ------------------------------------------------------------------ */
/* set-up                                                              */

/* Replaces `placeholder` in *tmpl (when there): when `use`, by `before`,
 * the quoted name of the library schema's object `obj`, then `after`;
 * else by `fallback`. *tmpl then points to the new text, which *owned
 * keeps (free it). */
static int substitute(char **owned, const char **tmpl, pgwi_tenant *t, const char *placeholder,
                      bool use, const char *obj, const char *before, const char *after,
                      const char *fallback, pgw_error *e)
{
    if (!strstr(*tmpl, placeholder))
        return PGW_OK;
    char sub[512], *id = NULL;
    snprintf(sub, sizeof sub, "%s", fallback);
    if (use) {
        int rc = pgwi_pq_ident(&id, t->conn, t->stream->pgw_schema, obj, e);
        if (rc < 0)
            return rc;
        snprintf(sub, sizeof sub, "%s%s%s", before, id, after);
        pgwi_free(id);
    }
    int rc = pgwi_pq_replace(owned, *tmpl, placeholder, sub, e);
    if (rc >= 0)
        *tmpl = *owned;
    return rc;
}

/* stream_config.sql or stream_targets.sql with the stream's names quoted
 * in, and its placeholders replaced; NULL after a failure (reported). */
static char *config_sql(pgw_pq_listener *l, pgwi_tenant *t, const char *tmpl, int64_t now)
{
    pgwi_stream *s = t->stream;
    char *with_gaps = NULL, *with_values = NULL, *sql = NULL;
    pgw_error e;
    pgw_error_clear(&e);
    const char *names[3] = {"publication", "schema", "slot"};
    const char *vals[3] = {s->publication, s->pgw_schema, s->perm_slot ? s->perm_slot : ""};
    if (substitute(&with_gaps, &tmpl, t, ":remembered_gaps", s->remembers, "remembered_gaps",
                   "(SELECT r.relid, r.schema_name, r.table_name, r.message FROM ",
                   "() r WHERE r.source = 'stream' AND r.publication = :'publication')",
                   "(SELECT 0::oid AS relid, ''::text AS schema_name, ''::text AS table_name, "
                   "''::text AS message WHERE false)",
                   &e) < 0 ||
        substitute(&with_values, &tmpl, t, ":values_join", s->values_readable, "stream_tables",
                   "coalesce((SELECT st.value_columns FROM ",
                   " st WHERE st.publication = :'publication' AND st.relid = p.relid), '{}')",
                   "'{}'::text[]", &e) < 0 ||
        pgwi_pq_sqlv(&sql, t->conn, tmpl, names, vals, 3, &e) < 0) {
        pgwi_listener_fail(l, t, e.code, e.message, now);
        sql = NULL;
    }
    pgwi_free(with_gaps);
    pgwi_free(with_values);
    return sql;
}

void pgwi_stream_connected(pgw_pq_listener *l, pgwi_tenant *t, int64_t now)
{
    pgwi_stream *s = t->stream;
    pgw_pgoutput_restart(s->dec);
    s->slot_new = false;
    s->registry_read = s->registered = false;
    s->reconfigure = false;
    char *sql = config_sql(l, t, pgwi_sql_stream_config, now);
    if (!sql)
        return;
    send_step(l, t, sql, P_CONFIG, now);
    pgwi_free(sql);
}

/* The set-up failed on the server: a LOST event with its message. */
static void fail_result(pgw_pq_listener *l, pgwi_tenant *t, const PGresult *r, const char *what,
                        int64_t now)
{
    pgw_error e;
    pgw_error_clear(&e);
    pgwi_pq_result_error(&e, t->conn, r, what);
    pgwi_listener_fail(l, t, e.code, e.message, now);
}

static bool is_true(const PGresult *r, int col)
{
    return strcmp(PQgetvalue(r, 0, col), "t") == 0;
}

static void start_replication(pgw_pq_listener *l, pgwi_tenant *t, int64_t now)
{
    pgwi_stream *s = t->stream;
    char *slot = PQescapeIdentifier(t->conn, s->slot, strlen(s->slot));
    char *pubid = PQescapeIdentifier(t->conn, s->publication, strlen(s->publication));
    char *publit = pubid ? PQescapeLiteral(t->conn, pubid, strlen(pubid)) : NULL;
    char lsn[PGW_LSN_TEXT_SIZE];
    s->start_lsn = s->handled;
    pgw_lsn_format(lsn, s->start_lsn);
    char *sql = NULL;
    if (slot && publit) {
        size_t len = strlen(slot) + strlen(publit) + 160;
        if ((sql = pgwi_malloc(len)))
            snprintf(sql, len,
                     "START_REPLICATION SLOT %s LOGICAL %s (proto_version '1', "
                     "publication_names %s, messages 'true')",
                     slot, lsn, publit);
    }
    PQfreemem(slot);
    PQfreemem(pubid);
    PQfreemem(publit);
    if (!sql) {
        pgwi_listener_fail(l, t, PGW_ENOMEM, "starting replication: out of memory", now);
        return;
    }
    send_step(l, t, sql, P_START, now);
    pgwi_free(sql);
}

static void create_slot(pgw_pq_listener *l, pgwi_tenant *t, int64_t now)
{
    pgwi_stream *s = t->stream;
    if (s->perm_slot) {
        pgwi_copy_cut(s->slot, sizeof s->slot, s->perm_slot);
    } else {
        snprintf(s->slot, sizeof s->slot, "pgwitness_%ld_%llu_%u", (long)getpid(),
                 (unsigned long long)s->id, ++s->temp_seq);
    }
    char sql[160];
    snprintf(sql, sizeof sql, "CREATE_REPLICATION_SLOT \"%s\" %sLOGICAL pgoutput NOEXPORT_SNAPSHOT",
             s->slot, s->perm_slot ? "" : "TEMPORARY ");
    send_step(l, t, sql, P_CREATE, now);
}

/* After the configuration: what the slot needs before START. */
static void slot_step(pgw_pq_listener *l, pgwi_tenant *t, int64_t now)
{
    pgwi_stream *s = t->stream;
    if (!s->perm_slot) {
        s->handled = s->received = 0; /* a new slot starts where it is made */
        create_slot(l, t, now);
        return;
    }
    pgwi_copy_cut(s->slot, sizeof s->slot, s->perm_slot);
    if (s->slot_exists && s->slot_lost) {
        char msg[200];
        snprintf(msg, sizeof msg,
                 "replication slot %s was invalidated by the server (wal_status lost: it kept "
                 "more WAL than max_slot_wal_keep_size): making it again",
                 s->slot);
        pgwi_listener_emit(l, t, PGW_PQ_LISTENER_SLOT_LOST, PGW_ESTATE, msg, 0, false, 0);
        s->handled = s->received = 0;
        char sql[128];
        snprintf(sql, sizeof sql, "DROP_REPLICATION_SLOT \"%s\"", s->slot);
        send_step(l, t, sql, P_DROP, now);
        return;
    }
    if (s->slot_exists && s->handled != 0 && s->slot_confirmed > s->handled) {
        /* This process confirms at most what it handled; a slot confirmed
         * past that was read by another consumer meanwhile (two streams
         * sharing one slot name), and what it read never reaches this
         * one. */
        char msg[300], ours[PGW_LSN_TEXT_SIZE], theirs[PGW_LSN_TEXT_SIZE];
        pgw_lsn_format(ours, s->handled);
        pgw_lsn_format(theirs, s->slot_confirmed);
        snprintf(msg, sizeof msg,
                 "replication slot %s was read by another consumer while this stream was "
                 "away (confirmed up to %s, past this stream's %s): what it read is lost here "
                 "(give each stream its own slot)",
                 s->slot, theirs, ours);
        pgwi_listener_emit(l, t, PGW_PQ_LISTENER_SLOT_LOST, PGW_EEXISTS, msg, 0, false, 0);
        s->handled = s->received = 0;
        s->slot_new = true; /* the STREAMING that follows resets the scope */
    }
    if (!s->slot_exists) {
        if (!s->ever_streamed && s->slots_writable && !s->registry_read) {
            /* Did a pgwitness stream make it, and someone drop it? */
            char tmpl[256], *tbl = NULL, *sql = NULL;
            pgw_error e;
            if (pgwi_pq_ident(&tbl, t->conn, s->pgw_schema, "slots", &e) >= 0) {
                snprintf(tmpl, sizeof tmpl,
                         "SELECT count(*) FROM %.150s WHERE slot_name = :'slot'", tbl);
                pgwi_free(tbl);
                const char *names[1] = {"slot"}, *vals[1] = {s->slot};
                if (pgwi_pq_sqlv(&sql, t->conn, tmpl, names, vals, 1, &e) >= 0) {
                    s->registry_read = true;
                    send_step(l, t, sql, P_REGISTRY, now);
                    pgwi_free(sql);
                    return;
                }
            }
        }
        if (s->ever_streamed || s->registered) {
            char msg[200];
            snprintf(msg, sizeof msg, "replication slot %s was dropped: making it again",
                     s->slot);
            pgwi_listener_emit(l, t, PGW_PQ_LISTENER_SLOT_LOST, PGW_ENOTFOUND, msg, 0, false, 0);
        }
        s->handled = s->received = 0;
        create_slot(l, t, now);
        return;
    }
    start_replication(l, t, now);
}

/* CONFIG's row. False when the tenant failed. */
static bool took_config(pgw_pq_listener *l, pgwi_tenant *t, const PGresult *r, int64_t now)
{
    pgwi_stream *s = t->stream;
    enum { VER, WAL, PUB, ALLOPS, VIAROOT, VALUES, SLOT, PLUGIN, SLOTDB, WALSTAT, PID, SLOTS,
           DB, CONFIRMED, REMEMBERS };
    char msg[PGW_ERROR_MESSAGE_SIZE];
    if (PQntuples(r) != 1 || PQnfields(r) != REMEMBERS + 1) {
        pgwi_listener_fail(l, t, PGW_EPG, "setting up the stream: unexpected configuration", now);
        return false;
    }
    if (atoi(PQgetvalue(r, 0, VER)) < PGW_PQ_STREAM_MIN_SERVER_VERSION) {
        snprintf(msg, sizeof msg,
                 "server version %s is older than %d (PostgreSQL 14, whose pgoutput sends "
                 "logical messages)",
                 PQgetvalue(r, 0, VER), PGW_PQ_STREAM_MIN_SERVER_VERSION);
        pgwi_listener_fail(l, t, PGW_EVERSION, msg, now);
        return false;
    }
    if (strcmp(PQgetvalue(r, 0, WAL), "logical") != 0) {
        snprintf(msg, sizeof msg,
                 "the server's wal_level is %.20s: the stream needs wal_level = logical (set it "
                 "in postgresql.conf and restart the server)",
                 PQgetvalue(r, 0, WAL));
        pgwi_listener_fail(l, t, PGW_ESTATE, msg, now);
        return false;
    }
    if (!is_true(r, PUB)) {
        snprintf(msg, sizeof msg,
                 "publication %.63s does not exist: watch a table for the stream "
                 "(pgw_pq_stream_watch_table) or CREATE PUBLICATION",
                 s->publication);
        pgwi_listener_fail(l, t, PGW_ENOTFOUND, msg, now);
        return false;
    }
    s->values_readable = is_true(r, VALUES);
    s->remembers = is_true(r, REMEMBERS);
    s->slots_writable = is_true(r, SLOTS);
    s->slot_exists = is_true(r, SLOT);
    s->slot_lost = strcmp(PQgetvalue(r, 0, WALSTAT), "lost") == 0;
    s->slot_confirmed = 0;
    if (PQgetvalue(r, 0, CONFIRMED)[0] &&
        pgw_lsn_parse(&s->slot_confirmed, PQgetvalue(r, 0, CONFIRMED), NULL) < 0)
        s->slot_confirmed = 0;
    if (s->slot_exists) {
        if (strcmp(PQgetvalue(r, 0, PLUGIN), "pgoutput") != 0 ||
            strcmp(PQgetvalue(r, 0, SLOTDB), PQgetvalue(r, 0, DB)) != 0) {
            snprintf(msg, sizeof msg,
                     "replication slot %.63s belongs to database %.63s with plugin %.63s, not "
                     "to this database with pgoutput: name another slot",
                     s->perm_slot, PQgetvalue(r, 0, SLOTDB), PQgetvalue(r, 0, PLUGIN));
            pgwi_listener_fail(l, t, PGW_EEXISTS, msg, now);
            return false;
        }
        if (atoi(PQgetvalue(r, 0, PID)) != 0) {
            snprintf(msg, sizeof msg,
                     "replication slot %.63s is in use by process %s (another stream, or this "
                     "one's last connection not yet gone)",
                     s->perm_slot, PQgetvalue(r, 0, PID));
            pgwi_listener_fail(l, t, PGW_ESTATE, msg, now);
            return false;
        }
    }
    return true;
}

/* Parses a text[] cell; false on a malformed or unreadable literal. */
static bool cell_array(pgwi_pg_array *a, const PGresult *r, int row, int col)
{
    return pgwi_pg_array_parse(a, PQgetvalue(r, row, col), (size_t)PQgetlength(r, row, col)) >= 0;
}

/* A TARGETS row's relation, as the catalog defines it now: what the
 * decoder compares its first Relation message with (a DDL between now and
 * its first change is a definition change). Known relations are kept. */
static int expect_relation(pgwi_stream *s, const PGresult *r, int row, pgw_error *e)
{
    pgwi_pg_array names = {0, NULL, NULL}, types = {0, NULL, NULL}, mods = {0, NULL, NULL};
    uint32_t *oids = NULL;
    int32_t *tm = NULL;
    int rc = PGW_OK;
    if (!cell_array(&names, r, row, 9) || !cell_array(&types, r, row, 10) ||
        !cell_array(&mods, r, row, 11) || types.n != names.n || mods.n != names.n) {
        rc = pgwi_error(e, PGW_EPG, "setting up the stream: an unreadable column definition");
        goto done;
    }
    if (names.n &&
        (!(oids = pgwi_calloc(names.n, sizeof *oids)) || !(tm = pgwi_calloc(names.n, sizeof *tm)))) {
        rc = pgwi_enomem(e);
        goto done;
    }
    for (size_t k = 0; k < names.n; k++) {
        oids[k] = (uint32_t)strtoul(types.items[k], NULL, 10);
        tm[k] = (int32_t)strtol(mods.items[k], NULL, 10);
    }
    rc = pgw_pgoutput_expect_relation(s->dec, (uint32_t)strtoul(PQgetvalue(r, row, 1), NULL, 10),
                                      PQgetvalue(r, row, 2), PQgetvalue(r, row, 3), names.n,
                                      (const char *const *)names.items, oids, tm, e);
    if (rc == PGW_EEXISTS)
        rc = PGW_OK;
done:
    pgwi_pg_array_free(&names);
    pgwi_pg_array_free(&types);
    pgwi_pg_array_free(&mods);
    pgwi_free(oids);
    pgwi_free(tm);
    return rc;
}

/* TARGETS' rows: the decoder's targets and the gaps. False when the
 * tenant failed. */
static bool took_targets(pgw_pq_listener *l, pgwi_tenant *t, const PGresult *r, int64_t now)
{
    pgwi_stream *s = t->stream;
    pgw_error e;
    pgw_error_clear(&e);
    if (PQnfields(r) != 12) {
        pgwi_listener_fail(l, t, PGW_EPG, "setting up the stream: unexpected targets", now);
        return false;
    }
    pgw_pgoutput_clear_targets(s->dec, NULL);
    forget_own_names(s);
    for (int i = 0; i < PQntuples(r); i++) {
        if (PQgetvalue(r, i, 0)[0] == 'g') {
            pgwi_listener_emit(l, t, PGW_PQ_LISTENER_GAP, PGW_OK, PQgetvalue(r, i, 6), 0, false,
                               0);
            continue;
        }
        if (strcmp(PQgetvalue(r, i, 7), "0") == 0 &&
            !remember_own_name(s, (uint32_t)strtoul(PQgetvalue(r, i, 1), NULL, 10),
                               PQgetvalue(r, i, 2), PQgetvalue(r, i, 3))) {
            pgwi_listener_fail(l, t, PGW_ENOMEM, "setting up the stream: out of memory", now);
            return false;
        }
        pgwi_pg_array key = {0, NULL, NULL}, vals = {0, NULL, NULL};
        int rc = PGW_OK;
        if (!cell_array(&key, r, i, 4) || !cell_array(&vals, r, i, 5)) {
            rc = pgwi_error(&e, PGW_EPG, "setting up the stream: an unreadable column list");
        } else {
            /* Value columns beyond the decoder's bound are left out (more
             * conservative); NULL elements never occur in these lists. */
            size_t nv = vals.n > 64 ? 64 : vals.n;
            rc = pgw_pgoutput_add_target(s->dec, (uint32_t)strtoul(PQgetvalue(r, i, 1), NULL, 10),
                                         PQgetvalue(r, i, 2), PQgetvalue(r, i, 3),
                                         (const char *const *)key.items, key.n,
                                         (const char *const *)vals.items, nv, &e);
            if (rc == PGW_EEXISTS || rc == PGW_ELIMIT)
                rc = PGW_OK; /* reported twice, or too many: the first ones serve */
            if (rc >= 0 && strcmp(PQgetvalue(r, i, 8), "t") == 0)
                rc = pgw_pgoutput_set_full_rows(
                    s->dec, (uint32_t)strtoul(PQgetvalue(r, i, 1), NULL, 10), true, &e);
            /* (its own target, depth 0: the row names the relation
             * itself; a relation below sends its Relation message under
             * its own name, which the row does not hold) */
            if (rc >= 0 && strcmp(PQgetvalue(r, i, 7), "0") == 0)
                rc = expect_relation(s, r, i, &e);
        }
        pgwi_pg_array_free(&key);
        pgwi_pg_array_free(&vals);
        if (rc < 0) {
            pgwi_listener_fail(l, t, rc, e.message, now);
            return false;
        }
    }
    return true;
}

/* Records a permanent slot just made in <schema>.slots (so that a later
 * process can tell it was dropped); true when the step was sent. Not being
 * able to record it costs nothing but that. */
static bool record_slot(pgw_pq_listener *l, pgwi_tenant *t, int64_t now)
{
    pgwi_stream *s = t->stream;
    char *tbl = NULL, *sql = NULL;
    pgw_error e;
    if (pgwi_pq_ident(&tbl, t->conn, s->pgw_schema, "slots", &e) < 0)
        return false;
    char tmpl[320];
    snprintf(tmpl, sizeof tmpl,
             "INSERT INTO %.150s (slot_name, publication) VALUES (:'slot', :'publication') "
             "ON CONFLICT (slot_name) DO UPDATE SET publication = EXCLUDED.publication, "
             "created_at = now()",
             tbl);
    pgwi_free(tbl);
    const char *names[2] = {"slot", "publication"}, *vals[2] = {s->slot, s->publication};
    if (pgwi_pq_sqlv(&sql, t->conn, tmpl, names, vals, 2, &e) < 0)
        return false;
    send_step(l, t, sql, P_RECORD, now);
    pgwi_free(sql);
    return true;
}

/* Reads the results of the set-up step in flight; moves to the next. */
static void advance_setup(pgw_pq_listener *l, pgwi_tenant *t, int64_t now)
{
    pgwi_stream *s = t->stream;
    while (t->conn && t->state == PGWI_T_SETUP && !PQisBusy(t->conn)) {
        PGresult *r = PQgetResult(t->conn);
        phase ph = s->ph;
        if (r && PQresultStatus(r) == PGRES_COPY_BOTH && ph == P_START) {
            PQclear(r);
            s->ph = P_STREAMING;
            if (s->perm_slot)
                s->ever_streamed = true;
            bool reset = s->slot_new;
            if (reset)
                s->resets++;
            s->last_status_ms = now;
            pgwi_listener_ready(l, t, PGW_PQ_LISTENER_STREAMING, reset, s->start_lsn);
            return;
        }
        if (r) {
            ExecStatusType st = PQresultStatus(r);
            if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
                const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
                if (ph == P_START && s->perm_slot && state &&
                    (strcmp(state, "42704") == 0 || strcmp(state, "55000") == 0)) {
                    /* The slot went away between CONFIG and START (dropped:
                     * undefined_object; invalidated: "can no longer get
                     * changes", object_not_in_prerequisite_state). */
                    s->slot_exists = strcmp(state, "55000") == 0;
                    s->slot_lost = s->slot_exists;
                    s->start_missed = true;
                    PQclear(r);
                    continue;
                }
                if (ph == P_REGISTRY || ph == P_RECORD) {
                    /* pgwitness's record of its slots is a help, not a
                     * need (a role without the privilege): go on without. */
                    PQclear(r);
                    continue;
                }
                static const char *const what[] = {"",
                                                   "reading the stream's configuration",
                                                   "reading the stream's tables",
                                                   "reading the slots pgwitness made",
                                                   "dropping the lost slot",
                                                   "making the replication slot",
                                                   "recording the replication slot",
                                                   "starting replication",
                                                   ""};
                fail_result(l, t, r, what[ph], now);
                PQclear(r);
                return;
            }
            bool ok = true;
            if (ph == P_CONFIG)
                ok = took_config(l, t, r, now);
            else if (ph == P_TARGETS)
                ok = took_targets(l, t, r, now);
            else if (ph == P_REGISTRY)
                s->registered = PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, 0), "0") != 0;
            else if (ph == P_CREATE)
                s->slot_new = true;
            PQclear(r);
            if (!ok)
                return;
            continue;
        }
        /* This step's results are all read: the next step. */
        switch (ph) {
        case P_CONFIG: {
            char *sql = config_sql(l, t, pgwi_sql_stream_targets, now);
            if (sql) {
                send_step(l, t, sql, P_TARGETS, now);
                pgwi_free(sql);
            }
            return;
        }
        case P_TARGETS:
        case P_REGISTRY:
            slot_step(l, t, now);
            return;
        case P_DROP:
            create_slot(l, t, now);
            return;
        case P_CREATE:
            if (s->perm_slot && s->slots_writable && record_slot(l, t, now))
                return;
            start_replication(l, t, now);
            return;
        case P_RECORD:
            start_replication(l, t, now);
            return;
        case P_START:
            if (s->start_missed) {
                s->start_missed = false;
                slot_step(l, t, now);
                return;
            }
            /* fall through */
        default:
            pgwi_listener_fail(l, t, PGW_EPG, "setting up the stream: unexpected end of results",
                               now);
            return;
        }
    }
}

/* ------------------------------------------------------------------ */
/* streaming                                                           */

static void deliver_ready(pgw_pq_listener *l, pgwi_tenant *t)
{
    pgwi_stream *s = t->stream;
    pgw_pgoutput_change c;
    while (pgw_pgoutput_next(&c, s->dec) >= 0) {
        if (c.reset) {
            s->resets++;
            pgwi_listener_reset_scope(l, t);
            pgwi_listener_emit(l, t, PGW_PQ_LISTENER_RESET,
                               s->last_error_code ? s->last_error_code : PGW_ENOMEM,
                               s->last_error[0] ? s->last_error
                                                : "a transaction could not be decoded",
                               0, true, c.lsn);
            s->last_error_code = 0;
            s->last_error[0] = '\0';
            continue;
        }
        t->notifications++;
        s->writes++;
        pgwi_listener_deliver(l, t, c.write);
        pgw_write_free(c.write);
    }
}

/* One XLogData frame: its pgoutput message. */
static void take_xlogdata(pgw_pq_listener *l, pgwi_tenant *t, const pgw_replication_frame *f)
{
    pgwi_stream *s = t->stream;
    uint64_t end = f->wal_start > f->wal_end ? f->wal_start : f->wal_end;
    if (end > s->received)
        s->received = end;
    if (f->wal_end > s->server_lsn)
        s->server_lsn = f->wal_end;
    s->last_send_time = f->send_time;
    pgw_pgoutput_message m;
    pgw_error e;
    pgw_error_clear(&e);
    int rc = pgw_pgoutput_decode(&m, s->dec, f->data, f->len, &e);
    if (rc < 0) {
        s->last_error_code = rc;
        pgwi_copy_cut(s->last_error, sizeof s->last_error, e.message);
    } else if (m.type == 'M' && m.prefix &&
               strcmp(m.prefix, PGW_PGOUTPUT_MESSAGE_PREFIX ".config") == 0) {
        s->reconfigure = true;
    } else if (m.type == 'R' && renamed_since_targets(s, m.relid)) {
        /* A published table renamed (or moved) since the targets were
         * read, with no DDL event trigger to say so (sync_stream(),
         * migration 5): the targets are stale. The decoder compared this
         * Relation message with the definition it knew (read at connect,
         * pgw_pgoutput_expect_relation(), or sent before), so the ddl
         * write sets of both names come with this transaction's, which
         * are under the old one; read the targets again after its commit,
         * so that later writes are reported under the new name. */
        s->reconfigure = true;
    }
    deliver_ready(l, t);
    if (rc >= 0 && m.type == 'C') {
        if (m.end_lsn > s->handled)
            s->handled = m.end_lsn;
        s->last_commit_time = m.commit_time;
    }
}

static void take_keepalive(pgw_pq_listener *l, pgwi_tenant *t, const pgw_replication_frame *f,
                           int64_t now)
{
    pgwi_stream *s = t->stream;
    if (f->wal_end > s->server_lsn)
        s->server_lsn = f->wal_end;
    if (f->wal_end > s->received)
        s->received = f->wal_end;
    s->last_send_time = f->send_time;
    /* Nothing in flight: everything before the server's position was sent,
     * and what was sent is delivered. */
    if (!pgw_pgoutput_in_transaction(s->dec) && f->wal_end > s->handled)
        s->handled = f->wal_end;
    if (f->reply_requested)
        send_status(l, t, now, false);
}

static void read_stream(pgw_pq_listener *l, pgwi_tenant *t, int64_t now)
{
    pgwi_stream *s = t->stream;
    if (!PQconsumeInput(t->conn)) {
        pgwi_listener_fail_conn(l, t, "connection lost", now);
        return;
    }
    for (;;) {
        char *buf = NULL;
        int n = PQgetCopyData(t->conn, &buf, 1);
        if (n == 0)
            break;
        if (n < 0) {
            if (n == -1) {
                PGresult *r = PQgetResult(t->conn);
                char msg[PGW_ERROR_MESSAGE_SIZE];
                pgwi_pq_one_line(msg, sizeof msg, r ? PQresultErrorMessage(r) : NULL);
                PQclear(r);
                pgwi_listener_fail(l, t, PGW_ECONN,
                                   msg[0] ? msg : "the server ended the replication stream",
                                   now);
            } else {
                pgwi_listener_fail_conn(l, t, "reading the replication stream", now);
            }
            return;
        }
        pgw_replication_frame f;
        pgw_error e;
        if (pgw_replication_parse(&f, buf, (size_t)n, &e) < 0) {
            PQfreemem(buf);
            pgwi_listener_fail(l, t, PGW_EPARSE, e.message, now);
            return;
        }
        if (f.kind == PGW_REPLICATION_XLOGDATA)
            take_xlogdata(l, t, &f);
        else
            take_keepalive(l, t, &f, now);
        PQfreemem(buf);
        if (!t->conn)
            return; /* failed while answering */
        if (s->reconfigure && !pgw_pgoutput_in_transaction(s->dec)) {
            /* The configuration changed at this commit: confirm what is
             * handled, then read the configuration again on a new
             * connection, which resumes right after it. (Not on this one:
             * a walsender of PostgreSQL 15 ends a second logical
             * START_REPLICATION of its session at once. A temporary slot
             * therefore ends with it, and the new one resets the scope.) */
            s->reconfigure = false;
            send_status(l, t, now, false);
            if (t->conn) {
                PQputCopyEnd(t->conn, NULL);
                PQflush(t->conn);
                pgwi_listener_restart(l, t, now);
            }
            return;
        }
    }
    if (s->handled > s->confirmed && now - s->last_status_ms >= (int64_t)s->o.status_interval_ms)
        send_status(l, t, now, false);
}

void pgwi_stream_process(pgw_pq_listener *l, pgwi_tenant *t, int64_t now)
{
    if (t->want_write && !flush(l, t, now))
        return;
    if (t->state == PGWI_T_SETUP) {
        if (!PQconsumeInput(t->conn)) {
            pgwi_listener_fail_conn(l, t, "setting up the stream", now);
            return;
        }
        advance_setup(l, t, now);
        if (!(t->conn && t->state == PGWI_T_READY))
            return;
    }
    read_stream(l, t, now);
}

unsigned pgwi_stream_events(const pgwi_tenant *t)
{
    return PGW_PQ_WAIT_READ | (t->want_write ? PGW_PQ_WAIT_WRITE : 0u);
}

void pgwi_stream_tick(pgw_pq_listener *l, pgwi_tenant *t, int64_t now, int64_t *next)
{
    pgwi_stream *s = t->stream;
    int64_t due = s->last_status_ms + (int64_t)s->o.status_interval_ms;
    if (now >= due) {
        if (!send_status(l, t, now, false))
            return;
        due = now + (int64_t)s->o.status_interval_ms;
    }
    if (due < *next)
        *next = due;
}

void pgwi_stream_closing(pgwi_tenant *t)
{
    pgwi_stream *s = t->stream;
    if (t->state != PGWI_T_READY || s->handled <= s->confirmed ||
        PQstatus(t->conn) != CONNECTION_OK)
        return;
    /* A last standby status update, written out before the connection
     * ends (blocking for its 34 bytes at most): the walsender reads it
     * before it sees the connection end. Best effort: a failure here is
     * a connection already lost, and the slot then resumes where it was. */
    unsigned char buf[PGW_REPLICATION_STATUS_SIZE];
    uint64_t written = s->received > s->handled ? s->received : s->handled;
    pgw_replication_status(buf, written, s->handled, s->handled, pg_now_us(), false);
    if (PQputCopyData(t->conn, (const char *)buf, (int)sizeof buf) == 1 &&
        PQsetnonblocking(t->conn, 0) == 0 && PQflush(t->conn) == 0) {
        s->confirmed = s->handled;
        s->status_updates++;
    }
}

void pgwi_stream_closed(pgwi_tenant *t)
{
    pgwi_stream *s = t->stream;
    s->ph = P_IDLE;
    pgw_pgoutput_restart(s->dec);
}

void pgwi_stream_stats(pgw_pq_stream_stats *out, const pgwi_tenant *t, int64_t now)
{
    const pgwi_stream *s = t->stream;
    (void)now;
    memset(out, 0, sizeof *out);
    pgwi_copy_cut(out->slot, sizeof out->slot, s->slot);
    out->received_lsn = s->received;
    out->handled_lsn = s->handled;
    out->confirmed_lsn = s->confirmed;
    out->server_lsn = s->server_lsn;
    out->lag_bytes = s->server_lsn > s->handled ? s->server_lsn - s->handled : 0;
    out->lag_ms = out->lag_bytes && s->last_commit_time && s->last_send_time > s->last_commit_time
                      ? (s->last_send_time - s->last_commit_time) / 1000
                      : 0;
    pgw_pgoutput_stats ds;
    pgw_pgoutput_stats_get(&ds, s->dec);
    out->messages = ds.messages;
    out->transactions = ds.transactions;
    out->writes = s->writes;
    out->resets = s->resets;
    out->status_updates = s->status_updates;
    out->peak_txn_bytes = ds.peak_txn_bytes;
}
