/*
 * examples/pgwitness/cmd_watch.c — `pgwitness watch`: watch tables through
 * one of the two write sources, the statement triggers (the default) or
 * the stream (--source=wal: logical decoding of a publication), and print
 * each write set as it arrives; `pgwitness unwatch` undoes the watch.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_TABLES 64
#define MAX_VALUES 64

static volatile sig_atomic_t g_stop;    /* stop the loop */
static volatile sig_atomic_t g_signals; /* interrupts received */

static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
    g_signals = g_signals + 1;
}

/* Where write sets come from. */
typedef enum watch_source { SOURCE_TRIGGERS, SOURCE_WAL } watch_source;

typedef struct watch_state {
    cli *c;
    const pgw_scope *scope;
    watch_source source;
    const char *slot;       /* --slot (a permanent slot), or NULL */
    unsigned long writes;   /* write sets seen (not counting resets) */
    unsigned long resets;   /* scope resets: one per (re)connection */
    unsigned long listened; /* times the listener started listening or streaming */
    bool output_failed;     /* stdout could not be written */
    /* the GAP messages of recent connects (gap_said) */
    struct gap_seen {
        uint64_t hash;      /* FNV-1a of the message */
        bool last_connect;  /* reported at the last connect (its LISTENING or
                               STREAMING) */
        bool since;         /* reported since the last connect */
        bool this_attempt;  /* reported since the last connect or LOST */
    } gaps[64];
    size_t n_gaps;
} watch_state;

/* Every connect reports each gap still open, before its LISTENING or
 * STREAMING; the operator needs each gap once while it stays open. A GAP
 * is said unless it was reported at the last connect or since it (by a
 * connect attempt that failed, or earlier in this one): a gap that closes
 * (a connect without it) and reopens later is said again. Returns whether
 * the message is not to be said, and remembers it (after 64 gaps, every
 * new one is said). */
static bool gap_said(watch_state *st, const char *msg)
{
    uint64_t h = 1469598103934665603u;
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
        h = (h ^ *p) * 1099511628211u;
    struct gap_seen *g = NULL;
    for (size_t i = 0; i < st->n_gaps && !g; i++)
        if (st->gaps[i].hash == h)
            g = &st->gaps[i];
    if (!g) {
        if (st->n_gaps == N(st->gaps))
            return false;
        g = &st->gaps[st->n_gaps++];
        *g = (struct gap_seen){.hash = h};
    }
    bool said = g->last_connect || g->since;
    g->since = g->this_attempt = true;
    return said;
}

/* A connect attempt ended: `connected` (LISTENING or STREAMING: its GAPs
 * are those of the last connect now), or not (LOST: a failed attempt, or
 * a connection lost, whose next attempt reports the gaps again). */
static void gaps_attempt_ended(watch_state *st, bool connected)
{
    size_t kept = 0;
    for (size_t i = 0; i < st->n_gaps; i++) {
        struct gap_seen g = st->gaps[i];
        if (connected) {
            g.last_connect = g.this_attempt;
            g.since = false;
        }
        g.this_attempt = false;
        if (g.last_connect || g.since)
            st->gaps[kept++] = g; /* the others are forgotten: said again */
    }
    st->n_gaps = kept;
}

/* The JSON form of a write set (one line). */
static char *write_json(const pgw_write *w)
{
    char *t = NULL;
    return pgw_write_to_json(&t, NULL, w, NULL) == PGW_OK ? t : NULL;
}

/* "17, 42" or "1 row"-style summaries of a JSON array member. */
static void print_list(const json_t *o, const char *key, const char *truncated_key,
                       const char *unknown)
{
    const json_t *a = json_object_get(o, key);
    if (!json_is_array(a)) {
        printf("%s", json_is_true(json_object_get(o, truncated_key)) ? "too many to list"
                                                                       : unknown);
        return;
    }
    if (json_array_size(a) == 0) {
        printf("none");
        return;
    }
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *e = json_array_get(a, i);
        if (i == 8) {
            printf(", ... (%zu in all)", json_array_size(a));
            break;
        }
        printf("%s", i ? ", " : "");
        if (json_is_string(e)) {
            printf("%s", ex_text(json_string_value(e)));
        } else if (json_is_array(e)) { /* a composite key */
            printf("(");
            for (size_t k = 0; k < json_array_size(e); k++)
                printf("%s%s", k ? ", " : "", ex_text(json_string_value(json_array_get(e, k))));
            printf(")");
        }
    }
}

/* A value of --values: "text" (quotes doubled, controls escaped) or NULL. */
static void print_value(const json_t *v)
{
    if (!json_is_string(v)) {
        printf("NULL");
        return;
    }
    printf("\"");
    for (const char *p = json_string_value(v); *p;) {
        size_t n = strcspn(p, "\"");
        char part[256];
        while (n) { /* ex_text per piece: a quote is not a control */
            size_t k = n < sizeof part - 1 ? n : sizeof part - 1;
            while (k < n && k > 0 && ((unsigned char)p[k] & 0xC0) == 0x80)
                k--; /* not inside a UTF-8 sequence */
            memcpy(part, p, k);
            part[k] = '\0';
            printf("%s", ex_text(part));
            p += k;
            n -= k;
        }
        if (*p == '"') {
            printf("\"\"");
            p++;
        }
    }
    printf("\"");
}

/* The old/new values of the --values columns, one line per listed row
 * (at most 8): `  17: status "open" -> "closed"` for an update, the one
 * side for an insert (new) or a delete (old). */
static void print_values(const json_t *o)
{
    const json_t *ids = json_object_get(o, "ids"), *olds = json_object_get(o, "old"),
                 *news = json_object_get(o, "new");
    if (!json_is_array(ids) || (!json_is_array(olds) && !json_is_array(news)))
        return;
    for (size_t i = 0; i < json_array_size(ids) && i < 8; i++) {
        const json_t *id = json_array_get(ids, i);
        const json_t *ov = json_array_get(olds, i), *nv = json_array_get(news, i);
        printf("  ");
        if (json_is_string(id)) {
            printf("%s", ex_text(json_string_value(id)));
        } else if (json_is_array(id)) {
            printf("(");
            for (size_t k = 0; k < json_array_size(id); k++)
                printf("%s%s", k ? ", " : "", ex_text(json_string_value(json_array_get(id, k))));
            printf(")");
        }
        printf(":");
        /* The columns of either side, in the order they come. */
        const json_t *sides[2] = {ov, nv};
        bool any = false;
        for (int side = 0; side < 2; side++) {
            const char *key;
            const json_t *val;
            json_object_foreach((json_t *)sides[side], key, val) {
                if (side == 1 && json_is_object(ov) && json_object_get(ov, key))
                    continue; /* printed with the old side */
                (void)val;
                printf("%s %s ", any ? "," : "", ex_text(key));
                any = true;
                if (json_is_array(olds) && json_is_array(news)) {
                    if (json_is_object(ov) && json_object_get(ov, key))
                        print_value(json_object_get(ov, key));
                    else
                        printf(json_is_null(ov) ? "(no row)" : "?");
                    printf(" -> ");
                    if (json_is_object(nv) && json_object_get(nv, key))
                        print_value(json_object_get(nv, key));
                    else
                        printf(json_is_null(nv) ? "(no row)" : "?");
                } else {
                    print_value(json_object_get(sides[side], key));
                }
            }
        }
        if (!any)
            printf(" no values");
        printf("\n");
    }
    if (json_array_size(ids) > 8)
        printf("  ... (values of %zu rows in all)\n", json_array_size(ids));
}

static void on_write(pgw_pq_tenant_id tenant, const pgw_write *w, void *userdata)
{
    (void)tenant;
    watch_state *st = userdata;
    if (pgw_write_op(w) == PGW_OP_RESET)
        st->resets++;
    else
        st->writes++;
    char *t = write_json(w);
    if (!t)
        return;
    if (st->c->json) {
        printf("%s\n", t);
    } else {
        json_t *o = json_loads(t, 0, NULL);
        if (pgw_write_op(w) == PGW_OP_RESET) {
            printf("scope reset: every subscription of this scope must refresh\n");
        } else if (pgw_write_op(w) == PGW_OP_DDL) {
            printf("ddl %s.%s: the table's definition changed: every subscription reading it "
                   "must refresh\n",
                   ex_text(pgw_write_schema(w)), ex_text(pgw_write_table(w)));
        } else if (o) {
            printf("%s %s.%s: rows ", pgw_op_name(pgw_write_op(w)),
                   ex_text(pgw_write_schema(w)), ex_text(pgw_write_table(w)));
            print_list(o, "ids", "ids_truncated", "unknown");
            if (pgw_write_op(w) == PGW_OP_UPDATE) {
                printf("; columns ");
                print_list(o, "columns", "columns_truncated", "unknown");
            }
            if (json_is_true(json_object_get(o, "pk_changed")))
                printf("; primary key changed");
            if (pgw_write_fallback_status(w) != PGW_OK)
                printf(" (undecodable notification: %s)",
                       ex_text(pgw_write_fallback_message(w)));
            printf("\n");
            print_values(o);
        }
        json_decref(o);
    }
    pgw_free(t);
    /* Nobody reads what cannot be written (a full disk): stop; main says
     * why (ex_finish_stdout). */
    if (!ex_flush(stdout)) {
        st->output_failed = true;
        g_stop = 1;
    }
}

/* Prints a scope reset in the stream of write sets (op "reset"), as the
 * listener reset the scope in its index. */
static void print_reset(pgw_pq_tenant_id tenant, watch_state *st)
{
    pgw_write *w = NULL;
    if (pgw_write_new_reset(&w, st->scope, NULL) == PGW_OK)
        on_write(tenant, w, st);
    pgw_write_free(w);
}

/* The confirmed position of the slot named `slot`, read on watch's own
 * connection (not the stream's): where a resumed permanent slot starts.
 * 0 when it cannot be read. */
static uint64_t slot_confirmed(cli *c, const char *slot)
{
    pgw_pq_slot_info *a = NULL;
    size_t n = 0;
    uint64_t lsn = 0;
    pgw_error err;
    if (!c->conn || pgw_pq_slots(&a, &n, c->conn, c->pgw_schema, &err) != PGW_OK)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(a[i].name, slot) == 0)
            lsn = a[i].confirmed_lsn;
    pgw_free(a);
    return lsn;
}

/* STREAMING: the slot, whether the scope was reset, where it resumes. */
static void say_streaming(watch_state *st, const pgw_pq_listener_event *ev)
{
    const char *prog = st->c->prog, *again = st->listened++ ? " again" : "";
    if (!st->slot) {
        /* A temporary slot is made on every connection: what was committed
         * before it is not streamed. */
        fprintf(stderr, "%s watch: streaming%s from a new temporary slot (scope reset%s)\n",
                prog, again,
                *again ? ": the writes in between were not streamed, so every subscription "
                         "refreshes"
                       : "");
        return;
    }
    if (ev->reset) {
        fprintf(stderr, "%s watch: streaming%s from slot %s, made now (scope reset)\n", prog,
                again, st->slot);
        return;
    }
    uint64_t at = ev->lsn ? ev->lsn : slot_confirmed(st->c, st->slot);
    char lsn[PGW_LSN_TEXT_SIZE];
    if (!at || pgw_lsn_format(lsn, at) != PGW_OK)
        snprintf(lsn, sizeof lsn, "?");
    fprintf(stderr, "%s watch: streaming%s from slot %s, resuming at %s (no scope reset%s)\n",
            prog, again, st->slot, at ? lsn : "its confirmed position",
            ev->lsn ? "" : ": writes committed while it was not streaming follow");
}

/* An event's message for the operator: where the library names its call
 * (pgw_pq_stream_watch_table, pgw_pq_watch_table), the command that runs
 * it. Returns msg, or buf holding the rewritten one. */
static const char *operator_message(char *buf, size_t size, const char *msg)
{
    static const char *const calls[][2] = {
        {"(pgw_pq_stream_watch_table)", "(pgwitness watch --source=wal)"},
        {"(pgw_pq_watch_table)", "(pgwitness watch)"}};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        const char *at = strstr(msg, calls[i][0]);
        if (at) {
            snprintf(buf, size, "%.*s%s%s", (int)(at - msg), msg, calls[i][1],
                     at + strlen(calls[i][0]));
            return buf;
        }
    }
    return msg;
}

static void on_event(const pgw_pq_listener_event *ev, void *userdata)
{
    watch_state *st = userdata;
    char buf[PGW_ERROR_MESSAGE_SIZE + 64];
    const char *message = operator_message(buf, sizeof buf, ev->message);
    switch (ev->kind) {
    case PGW_PQ_LISTENER_LISTENING:
        /* NOTIFY is not durable: what happened while not listening is
         * lost, so the scope is reset. Say so in the stream too. */
        gaps_attempt_ended(st, true);
        fprintf(stderr, "%s watch: listening%s\n", st->c->prog,
                st->listened++ ? " again (reconnected; scope reset: the writes in between were "
                                 "not seen, so every subscription refreshes)"
                               : "");
        print_reset(ev->tenant, st);
        break;
    case PGW_PQ_LISTENER_STREAMING:
        /* A new slot starts where it is made: the scope is reset, and
         * said in the stream too. A resumed permanent slot delivers what
         * was committed meanwhile instead. */
        gaps_attempt_ended(st, true);
        say_streaming(st, ev);
        if (ev->reset)
            print_reset(ev->tenant, st);
        break;
    case PGW_PQ_LISTENER_LOST:
        gaps_attempt_ended(st, false);
        fprintf(stderr, "%s watch: connection lost: %s; retrying in %u ms\n", st->c->prog,
                ex_text(message), (unsigned)ev->retry_ms);
        break;
    case PGW_PQ_LISTENER_FALLBACK:
        fprintf(stderr, "%s watch: %s\n", st->c->prog, ex_text(message));
        break;
    case PGW_PQ_LISTENER_RESET:
        /* Something could not be decoded: the listener reset the scope in
         * its place, and so does the stream of write sets. */
        fprintf(stderr, "%s watch: scope reset: %s\n", st->c->prog, ex_text(message));
        print_reset(ev->tenant, st);
        break;
    case PGW_PQ_LISTENER_SLOT_LOST:
        fprintf(stderr, "%s watch: slot lost: %s (the scope is reset when streaming resumes)\n",
                st->c->prog, ex_text(message));
        break;
    case PGW_PQ_LISTENER_GAP:
        /* each gap once while it stays open, though every (re)connect
         * reports it */
        if (!gap_said(st, message))
            fprintf(stderr, "%s watch: warning: %s\n", st->c->prog, ex_text(message));
        break;
    case PGW_PQ_LISTENER_CLOSED_IDLE:
    case PGW_PQ_LISTENER_CLOSED_EVICTED:
        break;
    }
    fflush(stderr);
}

/* Splits "a,b,c" in place; false (usage reported) for an empty or bad
 * name, or more than `max`. */
static bool split_values(const cli *c, char *s, const char **out, size_t max, size_t *n)
{
    *n = 0;
    for (char *p = s;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        const char *problem = ex_name_problem(p);
        if (problem) {
            cli_usage(c, "--values: column name %zu %s", *n + 1, problem);
            return false;
        }
        if (*n == max) {
            cli_usage(c, "--values: at most %zu columns", max);
            return false;
        }
        for (size_t k = 0; k < *n; k++)
            if (strcmp(out[k], p) == 0) {
                char q[300];
                cli_usage(c, "--values: column %s is named twice", cli_ident(q, sizeof q, p));
                return false;
            }
        out[(*n)++] = p;
        if (!comma)
            return true;
        p = comma + 1;
    }
}

/* The trigger skips value columns the table does not have; the operator
 * means columns that exist, so a name that is a column of none of the
 * watched tables is refused before any trigger changes, and one missing
 * from some of them is said. A table that does not exist is not judged
 * here: nothing is said and the watch names it (no table ...). Returns 0,
 * or the exit code. */
static int check_value_columns(cli *c, PGconn *conn, char schemas[][256], char tables[][256],
                               size_t n_tables, const char *const *cols, size_t n_cols,
                               bool notes)
{
    PGresult *rs[MAX_TABLES] = {NULL};
    int rc = 0;
    bool missing = false;
    for (size_t t = 0; t < n_tables && !rc && !missing; t++) {
        const char *params[2] = {schemas[t], tables[t]};
        rs[t] = PQexecParams(conn,
                             /* a row per column; one NULL for none */
                             "SELECT a.attname FROM pg_class k JOIN pg_namespace n ON "
                             "n.oid = k.relnamespace LEFT JOIN pg_attribute a ON "
                             "a.attrelid = k.oid AND a.attnum > 0 AND NOT a.attisdropped "
                             "WHERE n.nspname = $1 AND k.relname = $2 AND k.relkind IN "
                             "('r', 'p')",
                             2, NULL, params, NULL, NULL, 0);
        if (PQresultStatus(rs[t]) != PGRES_TUPLES_OK) {
            char msg[256];
            rc = cli_fail(c, "reading the columns of %s.%s: %s", schemas[t], tables[t],
                          cli_result_message(msg, sizeof msg, rs[t]));
        }
        missing = PQntuples(rs[t]) == 0; /* no such table */
    }
    unsigned found[MAX_VALUES] = {0};
    for (size_t t = 0; t < n_tables && !rc && !missing; t++) {
        for (size_t k = 0; k < n_cols; k++) {
            bool here = false;
            for (int i = 0; i < PQntuples(rs[t]) && !here; i++)
                here = strcmp(PQgetvalue(rs[t], i, 0), cols[k]) == 0;
            if (here) {
                found[k]++;
            } else if (n_tables > 1 && notes) {
                char q[300];
                fprintf(stderr, "%s watch: note: %s.%s has no column %s: its writes carry no "
                                "values of it\n",
                        c->prog, ex_text(schemas[t]), ex_text(tables[t]),
                        ex_text(cli_ident(q, sizeof q, cols[k])));
            }
        }
    }
    for (size_t t = 0; t < n_tables; t++)
        PQclear(rs[t]);
    for (size_t k = 0; k < n_cols && !notes && !rc && !missing; k++) {
        if (found[k])
            continue;
        char q[300];
        if (n_tables == 1)
            return cli_usage(c, "--values: %s is not a column of %s.%s (names are taken "
                                "as written)",
                             cli_ident(q, sizeof q, cols[k]), schemas[0], tables[0]);
        return cli_usage(c, "--values: %s is a column of none of the %zu watched tables "
                            "(names are taken as written)",
                         cli_ident(q, sizeof q, cols[k]), n_tables);
    }
    return rc;
}

/* The trigger arguments of the table's pgwitness_update trigger (TG_ARGV:
 * the channel, three arguments describing the key, then the value columns;
 * lib/pq/sql/migration_002.sql) and its firing mode in *mode
 * (pg_trigger.tgenabled: 'O' plain ENABLE, 'A' ALWAYS, 'R' REPLICA, 'D'
 * disabled; watch puts the four triggers in one mode): *n is -1 when the
 * table has none (or does not exist: pgw_pq_watch_table says so).
 * Returns 0, or the exit code after reporting. Runs in the transaction of
 * the install. */
#define MAX_ARGS (4 + PGW_PQ_MAX_VALUE_COLUMNS + 8)
static int installed_args(cli *c, PGconn *conn, const char *schema, const char *table,
                          char **buf, const char **args, int *n, char *mode)
{
    *n = -1;
    *buf = NULL;
    *mode = '\0';
    const char *params[2] = {schema, table};
    /* First the table's watch lock (pgwitness-pq.h, PGW_PQ_WATCH_LOCK_BASE;
     * held to the end of the transaction, as pgw_pq_watch_table takes it),
     * so that what is read is what a concurrent watch committed. Then the
     * arguments of pgwitness's update trigger (one that calls a
     * notify_statement function; a trigger of that name calling anything
     * else is the owner's, and pgw_pq_watch_table refuses it). */
    char lock_sql[256];
    snprintf(lock_sql, sizeof lock_sql,
             "SELECT pg_catalog.pg_advisory_xact_lock(%" PRId64 " + k.oid::int8) "
             "FROM pg_catalog.pg_class k JOIN pg_catalog.pg_namespace n ON n.oid = "
             "k.relnamespace WHERE n.nspname = $1 AND k.relname = $2",
             (int64_t)PGW_PQ_WATCH_LOCK_BASE);
    PGresult *r = PQexecParams(conn, lock_sql, 2, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(r) == PGRES_TUPLES_OK) {
        PQclear(r);
        r = PQexecParams(conn,
                         "SELECT t.tgargs, t.tgenabled FROM pg_catalog.pg_trigger t JOIN "
                         "pg_catalog.pg_class k ON k.oid = t.tgrelid JOIN "
                         "pg_catalog.pg_namespace n ON n.oid = k.relnamespace JOIN "
                         "pg_catalog.pg_proc p ON p.oid = t.tgfoid WHERE "
                         "n.nspname = $1 AND k.relname = $2 AND t.tgname = "
                         "'pgwitness_update' AND p.proname = 'notify_statement'",
                         2, NULL, params, NULL, NULL,
                         1 /* binary: the bytes; "char" is its one byte */);
    }
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        char msg[256];
        cli_result_message(msg, sizeof msg, r);
        PQclear(r);
        return cli_fail(c, "reading the triggers of %s.%s: %s", schema, table, msg);
    }
    if (PQntuples(r) == 1) {
        /* tgargs: each argument followed by a NUL byte. */
        int len = PQgetlength(r, 0, 0);
        if (!(*buf = malloc((size_t)len + 1))) {
            PQclear(r);
            return cli_fail(c, "out of memory");
        }
        memcpy(*buf, PQgetvalue(r, 0, 0), (size_t)len);
        (*buf)[len] = '\0';
        if (PQgetlength(r, 0, 1) == 1)
            *mode = PQgetvalue(r, 0, 1)[0];
        *n = 0;
        for (int at = 0; at < len && *n < MAX_ARGS; at += (int)strlen(*buf + at) + 1)
            args[(*n)++] = *buf + at;
    }
    PQclear(r);
    return 0;
}

/* ` with value columns "a", "b"` (or ` without value columns`) into out. */
static void describe_values(char *out, size_t size, const char *const *cols, size_t n_cols)
{
    char q[300];
    if (n_cols == 0) {
        snprintf(out, size, " without value columns");
        return;
    }
    size_t used = 0;
    out[0] = '\0';
    for (size_t k = 0; k < n_cols && used < size; k++)
        used += (size_t)snprintf(out + used, size - used, "%s%s",
                                 k ? ", " : n_cols == 1 ? " with value column "
                                                        : " with value columns ",
                                 cli_ident(q, sizeof q, cols[k]));
}

/* `channel "x" with value columns "a", "b"` into out. */
static void describe_watch(char *out, size_t size, const char *channel,
                           const char *const *cols, size_t n_cols)
{
    char q[300];
    size_t used = (size_t)snprintf(out, size, "channel %s", cli_ident(q, sizeof q, channel));
    if (used < size)
        describe_values(out + used, size - used, cols, n_cols);
}

/* Whether the value columns `had` are those asked, in any order. */
static bool same_columns(const char *const *had, size_t n_had, const char *const *cols,
                         size_t n_cols)
{
    bool same = n_had == n_cols;
    for (size_t k = 0; same && k < n_cols; k++) {
        bool found = false;
        for (size_t j = 0; j < n_had && !found; j++)
            found = strcmp(cols[k], had[j]) == 0;
        same = found;
    }
    return same;
}

/* A firing mode (pg_trigger.tgenabled) in words. */
static const char *mode_name(char mode)
{
    switch (mode) {
    case 'A':
        return "ENABLE ALWAYS";
    case 'R':
        return "ENABLE REPLICA";
    case 'D':
        return "disabled";
    default:
        return "plain ENABLE";
    }
}

/* The table's existing watch, when it has another channel, other value
 * columns or another firing mode than asked (`always`: --enable-always):
 * refused (exit 1) unless --replace. A watch turns ENABLE ALWAYS triggers
 * plain again, and plain ones ALWAYS, which a host that chose the mode
 * did not ask for (plain ones miss the writes of sessions with
 * session_replication_role = replica). Disabled triggers are not a
 * choice of the host's to keep: watching enables them (documented), so
 * they are not refused. Returns 0 to go on, or the exit code after
 * reporting. */
static int check_existing(cli *c, PGconn *conn, const char *schema, const char *table,
                          const char *channel, const char *const *cols, size_t n_cols,
                          bool always)
{
    char *buf;
    const char *args[MAX_ARGS];
    int n;
    char had_mode;
    int rc = installed_args(c, conn, schema, table, &buf, args, &n, &had_mode);
    if (rc || n < 0)
        return rc;
    const char *had_channel = n >= 1 ? args[0] : "";
    const char *const *had_cols = n > 4 ? args + 4 : NULL;
    size_t n_had = n > 4 ? (size_t)(n - 4) : 0;
    char asked_mode = always ? 'A' : 'O';
    bool mode_differs = had_mode != 'D' && had_mode != asked_mode;
    if (strcmp(had_channel, channel) != 0 || !same_columns(had_cols, n_had, cols, n_cols) ||
        mode_differs) {
        char had[4096], asked[4096];
        describe_watch(had, sizeof had, had_channel, had_cols, n_had);
        describe_watch(asked, sizeof asked, channel, cols, n_cols);
        if (mode_differs) {
            /* The modes only when they differ: `..., ENABLE ALWAYS`. */
            size_t lh = strlen(had), la = strlen(asked);
            snprintf(had + lh, sizeof had - lh, ", %s", mode_name(had_mode));
            snprintf(asked + la, sizeof asked - la, ", %s", mode_name(asked_mode));
        }
        rc = cli_fail(c, "%s.%s is already watched on %s (asked: %s): no trigger was "
                         "changed; watch it with the same --channel and --values%s, or give "
                         "--replace to replace its triggers (whoever relies on them then "
                         "misses writes or values)",
                      schema, table, had, asked,
                      !mode_differs     ? ""
                      : had_mode == 'A' ? " and with --enable-always"
                      : had_mode == 'O' ? " and without --enable-always"
                                        : " (no option of watch keeps ENABLE REPLICA)");
    }
    free(buf);
    return rc;
}

/* The stream's counterpart of check_existing: the value columns a table
 * is watched with for the stream, in the publication (<schema>.
 * stream_tables, kept by pgw_pq_stream_watch_table; a row counts while
 * the table is published), refused when they are not those asked, unless
 * --replace. First takes the lock pgw_pq_stream_watch_table takes (SHARE
 * UPDATE EXCLUSIVE, which conflicts with itself), so that what is read
 * stays until the commit. A missing table or library schema is left to
 * pgw_pq_stream_watch_table to report. Returns 0 to go on, or the exit
 * code after reporting. Runs in the transaction of the watch. */
static int check_existing_stream(cli *c, PGconn *conn, const char *schema, const char *table,
                                 const char *publication, const char *const *cols,
                                 size_t n_cols)
{
    const char *pgw_schema = c->pgw_schema ? c->pgw_schema : PGW_PQ_DEFAULT_SCHEMA;
    const char *params[3] = {schema, table, pgw_schema};
    char msg[256];
    PGresult *r = PQexecParams(conn,
                               "SELECT k.oid::text, pg_catalog.to_regclass(pg_catalog.format("
                               "'%I.stream_tables', $3::text)) IS NOT NULL FROM "
                               "pg_catalog.pg_class k JOIN pg_catalog.pg_namespace n ON n.oid "
                               "= k.relnamespace WHERE n.nspname = $1 AND k.relname = $2",
                               3, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        cli_fail(c, "reading the table %s.%s: %s", schema, table, cli_result_message(msg, sizeof msg, r));
        PQclear(r);
        return 1;
    }
    if (PQntuples(r) != 1 || strcmp(PQgetvalue(r, 0, 1), "t") != 0) {
        PQclear(r);
        return 0;
    }
    char relid[32];
    snprintf(relid, sizeof relid, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    char *qs = PQescapeIdentifier(conn, schema, strlen(schema));
    char *qt = PQescapeIdentifier(conn, table, strlen(table));
    char *qp = PQescapeIdentifier(conn, pgw_schema, strlen(pgw_schema));
    char *sql = NULL;
    size_t len = (qs ? strlen(qs) : 0) + (qt ? strlen(qt) : 0) + (qp ? strlen(qp) : 0) + 800;
    if (qs && qt && qp && (sql = malloc(len)))
        snprintf(sql, len, "LOCK TABLE %s.%s IN SHARE UPDATE EXCLUSIVE MODE", qs, qt);
    r = sql ? PQexec(conn, sql) : NULL;
    bool locked = r && PQresultStatus(r) == PGRES_COMMAND_OK;
    if (locked) {
        PQclear(r);
        snprintf(sql, len,
                 "SELECT u.v FROM %s.stream_tables st LEFT JOIN LATERAL "
                 "pg_catalog.unnest(st.value_columns) WITH ORDINALITY u(v, o) ON true WHERE "
                 "st.publication = $1 AND st.relid = $2::oid AND EXISTS (SELECT FROM "
                 "pg_catalog.pg_publication p WHERE p.pubname = st.publication AND "
                 "(p.puballtables OR EXISTS (SELECT FROM pg_catalog.pg_publication_rel pr "
                 "WHERE pr.prpubid = p.oid AND pr.prrelid = st.relid))) ORDER BY u.o",
                 qp);
        const char *p2[2] = {publication, relid};
        r = PQexecParams(conn, sql, 2, NULL, p2, NULL, NULL, 0);
    }
    PQfreemem(qs);
    PQfreemem(qt);
    PQfreemem(qp);
    free(sql);
    if (!r)
        return cli_fail(c, "out of memory");
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        /* Refused on stream_tables (not on the table's LOCK): say what the
         * watch needs there (record_values() upserts and deletes). */
        const char *st = PQresultErrorField(r, PG_DIAG_SQLSTATE);
        bool denied = locked && st && strcmp(st, "42501") == 0;
        cli_fail(c, "reading how %s.%s is watched for the stream: %s%s%s%s", schema, table,
                 cli_result_message(msg, sizeof msg, r),
                 denied ? " (watching for the stream needs SELECT, INSERT, UPDATE and DELETE "
                          "on the table stream_tables of schema "
                        : "",
                 denied ? pgw_schema : "",
                 denied ? ", and USAGE on that schema: a role that owns it grants them)" : "");
        PQclear(r);
        return 1;
    }
    int rc = 0, n = PQntuples(r);
    if (n > 0) { /* watched: one row per value column, or one NULL for none */
        const char *had[MAX_VALUES + 1];
        size_t n_had = 0;
        for (int i = 0; i < n && n_had <= MAX_VALUES; i++)
            if (!PQgetisnull(r, i, 0))
                had[n_had++] = PQgetvalue(r, i, 0);
        if (!same_columns(had, n_had, cols, n_cols)) {
            char was[4096], asked[4096], q[300];
            describe_values(was, sizeof was, had, n_had);
            describe_values(asked, sizeof asked, cols, n_cols);
            rc = cli_fail(c, "%s.%s is already watched for the stream in publication %s%s "
                             "(asked:%s): nothing was changed; watch it with the same "
                             "--values, or give --replace to change its value columns "
                             "(whoever streams it then misses values)",
                          schema, table, cli_ident(q, sizeof q, publication), was, asked);
        }
    }
    PQclear(r);
    return rc;
}

/* After "no table S.T" for a TABLE argument with a comma in it (a guess
 * at a list of tables, or at a table and its columns): the real syntax,
 * as " (...)"; "" for any other argument. `values`: the command takes
 * --values. */
static const char *comma_hint(const char *arg, bool values)
{
    if (!strchr(arg, ','))
        return "";
    return values ? " (a comma is part of a table name: give each table as an argument of "
                    "its own, and value columns with --values COL,...; rows are identified "
                    "by the primary key)"
                  : " (a comma is part of a table name: give each table as an argument of "
                    "its own)";
}

/* Whether a watch or unwatch call failed for want of the table. */
static bool no_table(int rc, const pgw_error *err)
{
    return rc == PGW_ENOTFOUND && strncmp(err->message, "no table ", 9) == 0;
}

/* The TABLE arguments, each a table name and none named twice; false
 * (usage reported) otherwise. */
static bool table_args(const cli *c, const char *const *pos, size_t n_pos,
                       char schemas[][256], char tables[][256])
{
    for (size_t i = 0; i < n_pos; i++) {
        if (!cli_table_arg(c, pos[i], schemas[i], 256, tables[i], 256))
            return false;
        for (size_t k = 0; k < i; k++)
            if (strcmp(schemas[k], schemas[i]) == 0 && strcmp(tables[k], tables[i]) == 0) {
                if (strcmp(pos[k], pos[i]) == 0)
                    cli_usage(c, "table '%s' is named twice", pos[i]);
                else
                    cli_usage(c, "table %s.%s is named twice (as '%s' and '%s')", schemas[i],
                              tables[i], pos[k], pos[i]);
                return false;
            }
    }
    return true;
}

/* Runs a transaction command; on failure reports it and returns false. */
static bool sql_ok(cli *c, PGconn *conn, const char *sql)
{
    PGresult *r = PQexec(conn, sql);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok) {
        char msg[256];
        cli_fail(c, "%s: %s", sql, cli_result_message(msg, sizeof msg, r));
    }
    PQclear(r);
    return ok;
}

/* --source: triggers (the default) or wal; false (usage reported) for
 * anything else. */
static bool parse_source(const cli *c, const char *s, watch_source *out)
{
    if (!s || strcmp(s, "triggers") == 0)
        *out = SOURCE_TRIGGERS;
    else if (strcmp(s, "wal") == 0)
        *out = SOURCE_WAL;
    else
        return cli_usage(c, "--source takes triggers or wal, not '%s'", s), false;
    return true;
}

/* --slot and --publication are the stream's; false (usage reported) when
 * given without --source=wal, or when a name is bad. */
static bool check_stream_options(const cli *c, watch_source source, const char *slot,
                                 const char *publication)
{
    const char *const names[2] = {"--slot", "--publication"}, *values[2] = {slot, publication};
    for (int i = 0; i < 2; i++)
        if (values[i] && source != SOURCE_WAL) {
            cli_usage(c, "%s is for the stream: give --source=wal", names[i]);
            return false;
        }
    if (slot && !cli_check_slot(c, "--slot", slot))
        return false;
    const char *problem = publication ? ex_name_problem(publication) : NULL;
    if (problem) {
        cli_usage(c, "--publication: the publication name %s", problem);
        return false;
    }
    return true;
}

/* Before --source=wal changes anything: can this role open a replication
 * connection (the REPLICATION attribute, or a managed service's
 * replication role: only the server can say), and is --slot free? Returns
 * 0 to go on, or the exit status (the failure said). */
static int check_stream_ready(const cli *c, PGconn *conn, const char *conninfo,
                              const char *slot)
{
    const char *keys[] = {"dbname", "replication", "fallback_application_name", NULL};
    const char *vals[] = {conninfo, "database", "pgwitness", NULL};
    PGconn *rc = PQconnectdbParams(keys, vals, 1);
    if (!rc || PQstatus(rc) != CONNECTION_OK) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", rc ? PQerrorMessage(rc) : "out of memory");
        msg[strcspn(msg, "\n")] = '\0';
        PQfinish(rc);
        return cli_fail(c,
                        "cannot open a replication connection (%s): the stream needs a role "
                        "that may replicate (the REPLICATION attribute, or the managed "
                        "service's replication role; docs/stream.md); nothing was changed",
                        msg);
    }
    PQfinish(rc);
    if (!slot)
        return 0;
    const char *params[1] = {slot};
    PGresult *r = PQexecParams(conn,
                               "SELECT active_pid FROM pg_catalog.pg_replication_slots "
                               "WHERE slot_name = $1::text AND active_pid IS NOT NULL",
                               1, NULL, params, NULL, NULL, 0);
    int st = 0;
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        st = cli_fail(c, "reading replication slot %s: %s", slot, PQerrorMessage(conn));
    else if (PQntuples(r) > 0)
        st = cli_fail(c,
                      "replication slot %s is in use by process %s (another stream reads "
                      "it): give this watch its own --slot; nothing was changed",
                      slot, PQgetvalue(r, 0, 0));
    PQclear(r);
    return st;
}

/* The conninfo of the listener's own connection: the same conninfo, or
 * (when the PG* environment chose the server) the database by name, the
 * rest coming from the same environment. */
static void listener_conninfo(char *out, size_t size, const cli *c, PGconn *conn)
{
    if (c->conninfo && c->conninfo[0]) {
        snprintf(out, size, "%s", c->conninfo);
        return;
    }
    char *q = out;
    q += snprintf(q, 16, "dbname='");
    for (const char *p = PQdb(conn); *p && q < out + size - 4; p++) {
        if (*p == '\\' || *p == '\'')
            *q++ = '\\';
        *q++ = *p;
    }
    *q++ = '\'';
    *q = '\0';
}


int cmd_watch(cli *c, int argc, char **argv)
{
    const char *channel = NULL, *values = NULL, *project = NULL, *tenant = NULL,
               *database = NULL, *seconds_s = NULL, *source_s = NULL, *slot = NULL,
               *publication = NULL;
    bool replace = false, enable_always = false;
    const cli_opt opts[] = {COMMON_OPTS(c),
                            SCHEMA_OPT(c),
                            {"source", 0, true, &source_s, NULL},
                            {"channel", 0, true, &channel, NULL},
                            {"slot", 0, true, &slot, NULL},
                            {"publication", 0, true, &publication, NULL},
                            {"values", 0, true, &values, NULL},
                            {"project", 0, true, &project, NULL},
                            {"tenant", 0, true, &tenant, NULL},
                            {"database", 0, true, &database, NULL},
                            {"seconds", 0, true, &seconds_s, NULL},
                            {"replace", 0, false, NULL, &replace},
                            {"enable-always", 0, false, NULL, &enable_always}};
    const char *pos[MAX_TABLES];
    size_t n_pos;
    if (!cli_parse(c, argc, argv, opts, N(opts), pos, MAX_TABLES, &n_pos))
        return EXIT_USAGE;
    if (n_pos == 0)
        return cli_usage(c, "which tables? (pgwitness watch TABLE...)");
    watch_source source;
    if (!parse_source(c, source_s, &source))
        return EXIT_USAGE;
    unsigned long long seconds = 0;
    if (seconds_s && !ex_parse_ull(seconds_s, 0, 2147483647, &seconds))
        return cli_usage(c, "--seconds takes a number of seconds from 0 (until interrupted) to "
                            "2147483647, not '%s'",
                         seconds_s);
    char values_buf[4096] = "";
    const char *value_cols[MAX_VALUES];
    size_t n_values = 0;
    if (values) {
        if (strlen(values) >= sizeof values_buf)
            return cli_usage(c, "--values is too long");
        strcpy(values_buf, values);
        if (!split_values(c, values_buf, value_cols, MAX_VALUES, &n_values))
            return EXIT_USAGE;
    }
    if (channel && source == SOURCE_WAL)
        return cli_usage(c, "--channel is for the triggers: the stream reads a publication "
                            "(--publication)");
    if (enable_always && source == SOURCE_WAL)
        return cli_usage(c, "--enable-always is for the triggers: the stream reads the WAL "
                            "whatever the triggers and the replication role");
    const char *problem = channel ? ex_name_problem(channel) : NULL;
    if (problem)
        return cli_usage(c, "--channel: the channel name %s", problem);
    if (!check_stream_options(c, source, slot, publication))
        return EXIT_USAGE;
    const char *scope_opts[3][2] = {
        {"--project", project}, {"--tenant", tenant}, {"--database", database}};
    for (size_t i = 0; i < 3; i++) /* "" is a value of its own (pgw_scope) */
        if (scope_opts[i][1] && !ex_utf8_valid(scope_opts[i][1], strlen(scope_opts[i][1])))
            return cli_usage(c, "%s is not valid UTF-8", scope_opts[i][0]);
    char schemas[MAX_TABLES][256], tables[MAX_TABLES][256];
    if (!table_args(c, pos, n_pos, schemas, tables))
        return EXIT_USAGE;
    PGconn *conn = cli_connect(c);
    if (!conn)
        return 1;
    if (n_values) {
        int bad =
            check_value_columns(c, conn, schemas, tables, n_pos, value_cols, n_values, false);
        if (bad)
            return bad;
    }
    const char *pub = publication ? publication : PGW_PQ_DEFAULT_PUBLICATION;
    char conninfo[1100];
    listener_conninfo(conninfo, sizeof conninfo, c, conn);
    if (source == SOURCE_WAL) {
        int bad = check_stream_ready(c, conn, conninfo, slot);
        if (bad)
            return bad;
    }
    pgw_error err;
    pgw_pq_watch_options wo = PGW_PQ_WATCH_OPTIONS_INIT;
    wo.pgw_schema = c->pgw_schema;
    wo.channel = channel;
    wo.value_columns = n_values ? value_cols : NULL;
    wo.n_value_columns = n_values;
    wo.enable_always = enable_always;
    pgw_pq_watch_result wres = PGW_PQ_WATCH_RESULT_INIT;
    wo.result = &wres;
    pgw_pq_stream_watch_options so = PGW_PQ_STREAM_WATCH_OPTIONS_INIT;
    so.pgw_schema = c->pgw_schema;
    so.publication = pub;
    so.value_columns = wo.value_columns;
    so.n_value_columns = n_values;
    /* All or nothing: the tables are watched in one transaction (each call
     * then uses a savepoint), rolled back when one of them fails. */
    if (!sql_ok(c, conn, "BEGIN"))
        return 1;
    /* Another watcher (a host) may depend on these triggers or on the
     * stream's value columns: they are not changed unless asked. */
    for (size_t i = 0; i < n_pos && !replace; i++) {
        int bad = source == SOURCE_WAL
                      ? check_existing_stream(c, conn, schemas[i], tables[i], pub, value_cols,
                                              n_values)
                      : check_existing(c, conn, schemas[i], tables[i],
                                       channel ? channel : PGW_PQ_DEFAULT_CHANNEL, value_cols,
                                       n_values, enable_always);
        if (bad) {
            PQclear(PQexec(conn, "ROLLBACK"));
            return bad;
        }
    }
    /* Value columns some of the tables lack: said once nothing refuses. */
    if (n_values && n_pos > 1)
        check_value_columns(c, conn, schemas, tables, n_pos, value_cols, n_values, true);
    for (size_t i = 0; i < n_pos; i++) {
        int rc = source == SOURCE_WAL
                     ? pgw_pq_stream_watch_table(conn, schemas[i], tables[i], &so, &err)
                     : pgw_pq_watch_table(conn, schemas[i], tables[i], &wo, &err);
        if (rc != PGW_OK) {
            PQclear(PQexec(conn, "ROLLBACK"));
            char buf[CLI_ERR_MESSAGE_SIZE];
            return cli_fail(c, "cannot watch %s.%s: %s%s%s", schemas[i], tables[i],
                            cli_err_message(c, rc, &err, buf, sizeof buf),
                            no_table(rc, &err) ? comma_hint(pos[i], true) : "",
                            n_pos == 1               ? ""
                            : source == SOURCE_WAL ? " (nothing was changed)"
                                                     : " (no trigger was changed)");
        }
    }
    if (!sql_ok(c, conn, "COMMIT"))
        return 1;
    /* What the server's settings mean for the writers (one line; the
     * triggers are installed, the exit status stays 0). */
    if (source == SOURCE_TRIGGERS && (wres.warnings & PGW_PQ_WATCH_WARN_PREPARED_TRANSACTIONS))
        fprintf(stderr,
                "%s watch: warning: max_prepared_transactions is %d: writers of watched "
                "tables cannot use PREPARE TRANSACTION (a NOTIFY cannot be prepared); use "
                "--source=wal for two-phase commit\n",
                c->prog, wres.max_prepared_transactions);
    /* The scope of what arrives: the connection's database, and the
     * project and tenant the operator names (to match a deps file). */
    pgw_scope scope = {project, tenant, database ? database : PQdb(conn)};
    watch_state st = {.c = c, .scope = &scope, .source = source, .slot = slot};
    pgw_pq_listener_options lo = PGW_PQ_LISTENER_OPTIONS_INIT;
    lo.channel = channel;
    lo.idle_timeout_ms = 0;
    lo.on_write = on_write;
    lo.on_event = on_event;
    lo.userdata = &st;
    pgw_pq_listener *l = NULL;
    int rc = pgw_pq_listener_new(&l, &lo, &err);
    pgw_pq_tenant_id tid;
    pgw_pq_stream_options sto = PGW_PQ_STREAM_OPTIONS_INIT;
    sto.publication = pub;
    sto.slot = slot;
    sto.pgw_schema = c->pgw_schema;
    if (rc == PGW_OK)
        rc = source == SOURCE_WAL
                 ? pgw_pq_listener_add_stream(&tid, l, &scope, conninfo, &sto, &err)
                 : pgw_pq_listener_add_tenant(&tid, l, &scope, conninfo, &err);
    if (rc == PGW_OK)
        rc = pgw_pq_listener_touch(l, tid, &err); /* connect now */
    if (rc != PGW_OK) {
        pgw_pq_listener_free(l);
        return cli_fail_err(c, rc, &err);
    }
    if (source == SOURCE_WAL) {
        char q[300];
        fprintf(stderr, "%s watch: the stream of publication %s for %zu table%s, %s%s; Ctrl-C "
                        "to stop\n",
                c->prog, ex_text(cli_ident(q, sizeof q, pub)), n_pos, n_pos == 1 ? "" : "s",
                slot ? "slot " : "a temporary slot", slot ? slot : "");
    } else {
        fprintf(stderr, "%s watch: triggers on %zu table%s; Ctrl-C to stop\n", c->prog, n_pos,
                n_pos == 1 ? "" : "s");
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    long long waited_ms = 0;
    while (!g_stop && (seconds == 0 || waited_ms < (long long)seconds * 1000)) {
        rc = pgw_pq_listener_run(l, 200, &err);
        if (rc != PGW_OK)
            break;
        pgw_pq_listener_touch(l, tid, NULL);
        waited_ms += 200;
    }
    /* Freeing the listener confirms what it handled (a last standby status
     * update): the next run with this slot resumes right after it. */
    char confirmed[80] = "";
    if (rc == PGW_OK && source == SOURCE_WAL && slot) {
        pgw_pq_stream_stats ss;
        if (pgw_pq_listener_stream_stats(&ss, l, tid, NULL) == PGW_OK && ss.handled_lsn) {
            char lsn[PGW_LSN_TEXT_SIZE];
            pgw_lsn_format(lsn, ss.handled_lsn);
            snprintf(confirmed, sizeof confirmed, "; slot %s confirmed up to %s", slot, lsn);
        }
    }
    pgw_pq_listener_free(l);
    if (rc != PGW_OK)
        return cli_fail_err(c, rc, &err);
    fprintf(stderr, "%s watch: %lu write set%s seen, %lu scope reset%s%s\n", c->prog, st.writes,
            st.writes == 1 ? "" : "s", st.resets, st.resets == 1 ? "" : "s", confirmed);
    return 0;
}

/* ------------------------------------------------------------------ */
/* unwatch                                                             */

int cmd_unwatch(cli *c, int argc, char **argv)
{
    const char *source_s = NULL, *publication = NULL;
    const cli_opt opts[] = {COMMON_OPTS(c),
                            SCHEMA_OPT(c),
                            {"source", 0, true, &source_s, NULL},
                            {"publication", 0, true, &publication, NULL}};
    const char *pos[MAX_TABLES];
    size_t n_pos;
    if (!cli_parse(c, argc, argv, opts, N(opts), pos, MAX_TABLES, &n_pos))
        return EXIT_USAGE;
    if (n_pos == 0)
        return cli_usage(c, "which tables? (pgwitness unwatch TABLE...)");
    watch_source source;
    if (!parse_source(c, source_s, &source) ||
        !check_stream_options(c, source, NULL, publication))
        return EXIT_USAGE;
    char schemas[MAX_TABLES][256], tables[MAX_TABLES][256];
    if (!table_args(c, pos, n_pos, schemas, tables))
        return EXIT_USAGE;
    PGconn *conn = cli_connect(c);
    if (!conn)
        return 1;
    const char *pub = publication ? publication : PGW_PQ_DEFAULT_PUBLICATION;
    pgw_pq_stream_watch_options so = PGW_PQ_STREAM_WATCH_OPTIONS_INIT;
    so.pgw_schema = c->pgw_schema;
    so.publication = pub;
    /* All or nothing, as watch. */
    bool removed[MAX_TABLES];
    if (!sql_ok(c, conn, "BEGIN"))
        return 1;
    for (size_t i = 0; i < n_pos; i++) {
        pgw_error err;
        int rc = source == SOURCE_WAL ? pgw_pq_stream_unwatch_table(&removed[i], conn,
                                                                    schemas[i], tables[i], &so,
                                                                    &err)
                                      : pgw_pq_unwatch_table(&removed[i], conn, schemas[i],
                                                             tables[i], &err);
        if (rc != PGW_OK) {
            PQclear(PQexec(conn, "ROLLBACK"));
            char buf[CLI_ERR_MESSAGE_SIZE];
            return cli_fail(c, "cannot unwatch %s.%s: %s%s%s", schemas[i], tables[i],
                            cli_err_message(c, rc, &err, buf, sizeof buf),
                            no_table(rc, &err) ? comma_hint(pos[i], false) : "",
                            n_pos == 1               ? ""
                            : source == SOURCE_WAL ? " (nothing was changed)"
                                                     : " (no trigger was changed)");
        }
    }
    if (!sql_ok(c, conn, "COMMIT"))
        return 1;
    if (c->json) {
        json_t *arr = json_array();
        for (size_t i = 0; arr && i < n_pos; i++)
            json_array_append_new(arr, json_pack("{s:s, s:s, s:b}", "schema", schemas[i],
                                                 "table", tables[i], "removed", removed[i]));
        return cli_print_json(c, arr);
    }
    char q[300];
    cli_ident(q, sizeof q, pub);
    /* A table not in the publication may be so because the publication
     * itself does not exist (a misspelt --publication): say which. */
    bool any_kept = false, no_publication = false;
    for (size_t i = 0; i < n_pos; i++)
        any_kept |= !removed[i];
    if (source == SOURCE_WAL && any_kept) {
        const char *params[] = {pub};
        PGresult *r = PQexecParams(conn, "SELECT 1 FROM pg_catalog.pg_publication "
                                         "WHERE pubname = $1",
                                   1, NULL, params, NULL, NULL, 0);
        no_publication = r && PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 0;
        PQclear(r);
    }
    for (size_t i = 0; i < n_pos; i++) {
        if (source == SOURCE_WAL)
            printf("%s.%s: %s%s%s\n", ex_text(schemas[i]), ex_text(tables[i]),
                   removed[i] ? "removed from publication " : "not watched for the stream (not "
                                                              "in publication ",
                   ex_text(q),
                   removed[i]       ? ""
                   : no_publication ? ": there is no such publication)"
                                    : ")");
        else
            printf("%s.%s: %s\n", ex_text(schemas[i]), ex_text(tables[i]),
                   removed[i] ? "triggers removed" : "not watched (no pgwitness trigger)");
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* announce, ddl-trigger                                               */

int cmd_announce(cli *c, int argc, char **argv)
{
    const char *channel = NULL;
    const cli_opt opts[] = {COMMON_OPTS(c),
                            SCHEMA_OPT(c),
                            {"channel", 0, true, &channel, NULL}};
    const char *pos[MAX_TABLES];
    size_t n_pos;
    if (!cli_parse(c, argc, argv, opts, N(opts), pos, MAX_TABLES, &n_pos))
        return EXIT_USAGE;
    if (n_pos == 0)
        return cli_usage(c, "which tables? (pgwitness announce TABLE...)");
    const char *problem = channel ? ex_name_problem(channel) : NULL;
    if (problem)
        return cli_usage(c, "--channel: the channel name %s", problem);
    char schemas[MAX_TABLES][256], tables[MAX_TABLES][256];
    if (!table_args(c, pos, n_pos, schemas, tables))
        return EXIT_USAGE;
    PGconn *conn = cli_connect(c);
    if (!conn)
        return 1;
    pgw_pq_announce_options ao = PGW_PQ_ANNOUNCE_OPTIONS_INIT;
    ao.pgw_schema = c->pgw_schema;
    const char *chans[1] = {channel};
    if (channel) {
        ao.channels = chans;
        ao.n_channels = 1;
    }
    /* One transaction: all tables announced at its commit, or none. */
    if (!sql_ok(c, conn, "BEGIN"))
        return 1;
    for (size_t i = 0; i < n_pos; i++) {
        pgw_error err;
        int rc = pgw_pq_announce_ddl(conn, schemas[i], tables[i], &ao, &err);
        if (rc != PGW_OK) {
            PQclear(PQexec(conn, "ROLLBACK"));
            char buf[CLI_ERR_MESSAGE_SIZE];
            return cli_fail(c, "cannot announce %s.%s: %s%s", schemas[i], tables[i],
                            cli_err_message(c, rc, &err, buf, sizeof buf),
                            n_pos == 1 ? "" : " (nothing was announced)");
        }
    }
    /* A name no table has now is announced all the same (a table dropped
     * by a migration: its readers refresh), but say so: it may be a typo. */
    for (size_t i = 0; i < n_pos; i++) {
        const char *params[2] = {schemas[i], tables[i]};
        PGresult *r = PQexecParams(conn,
                                   "SELECT pg_catalog.to_regclass(pg_catalog.format('%I.%I', $1::text, "
                                   "$2::text)) IS NULL",
                                   2, NULL, params, NULL, NULL, 0);
        if (PQresultStatus(r) == PGRES_TUPLES_OK && strcmp(PQgetvalue(r, 0, 0), "t") == 0)
            fprintf(stderr,
                    "%s announce: note: no table %s.%s exists now; announced by name all the "
                    "same (subscriptions reading that name refresh)%s\n",
                    c->prog, ex_text(schemas[i]), ex_text(tables[i]),
                    comma_hint(pos[i], false));
        PQclear(r);
    }
    if (!sql_ok(c, conn, "COMMIT"))
        return 1;
    if (c->json) {
        json_t *arr = json_array();
        for (size_t i = 0; arr && i < n_pos; i++)
            json_array_append_new(arr, json_pack("{s:s, s:s}", "schema", schemas[i], "table",
                                                 tables[i]));
        return cli_print_json(c, arr);
    }
    for (size_t i = 0; i < n_pos; i++)
        printf("%s.%s: announced\n", ex_text(schemas[i]), ex_text(tables[i]));
    return 0;
}

int cmd_ddl_trigger(cli *c, int argc, char **argv)
{
    const cli_opt opts[] = {COMMON_OPTS(c), SCHEMA_OPT(c)};
    const char *pos[2];
    size_t n_pos;
    if (!cli_parse(c, argc, argv, opts, N(opts), pos, 2, &n_pos))
        return EXIT_USAGE;
    if (n_pos == 0)
        return cli_usage(c, "install or remove? (pgwitness ddl-trigger install|remove)");
    if (n_pos > 1)
        return cli_usage(c, "unexpected argument '%s' (pgwitness ddl-trigger install|remove)",
                         ex_text(pos[1]));
    bool install = strcmp(pos[0], "install") == 0;
    if (!install && strcmp(pos[0], "remove") != 0)
        return cli_usage(c, "'%s' is neither install nor remove (pgwitness ddl-trigger "
                         "install|remove)", ex_text(pos[0]));
    PGconn *conn = cli_connect(c);
    if (!conn)
        return 1;
    /* Whether they were there before: the calls are idempotent, the
     * message should not claim a change that did not happen. */
    PGresult *r = PQexec(conn, "SELECT count(*) FROM pg_catalog.pg_event_trigger WHERE evtname IN "
                               "('pgwitness_ddl_command_end', 'pgwitness_sql_drop')");
    int before = PQresultStatus(r) == PGRES_TUPLES_OK ? atoi(PQgetvalue(r, 0, 0)) : -1;
    PQclear(r);
    pgw_error err;
    int rc = install ? pgw_pq_install_ddl_trigger(conn, c->pgw_schema, &err)
                     : pgw_pq_remove_ddl_trigger(conn, c->pgw_schema, &err);
    if (rc != PGW_OK)
        return cli_fail_err(c, rc, &err);
    bool nothing = install ? before == 2 : before == 0;
    if (c->json)
        return cli_print_json(c, json_pack("{s:s, s:[s, s], s:b}", "action",
                                           install ? "install" : "remove", "event_triggers",
                                           "pgwitness_ddl_command_end", "pgwitness_sql_drop",
                                           "changed", !nothing));
    printf("event triggers pgwitness_ddl_command_end and pgwitness_sql_drop %s\n",
           install ? (nothing ? "were installed already (nothing changed)" : "installed")
                   : (nothing ? "were not installed (nothing changed)" : "removed"));
    return 0;
}
