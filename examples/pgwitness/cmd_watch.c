/*
 * examples/pgwitness/cmd_watch.c — `pgwitness watch`: install the statement
 * triggers on tables and print each write set as it arrives.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_TABLES 64
#define MAX_VALUES 64

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

typedef struct watch_state {
    cli *c;
    const pgw_scope *scope;
    unsigned long writes;   /* write sets seen (not counting resets) */
    unsigned long resets;   /* scope resets: one per (re)connection */
    unsigned long listened; /* times the listener started listening */
} watch_state;

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
        }
        json_decref(o);
    }
    pgw_free(t);
    /* Nobody reads what cannot be written (a full disk): stop; main says
     * why (ex_finish_stdout). */
    if (!ex_flush(stdout))
        g_stop = 1;
}

static void on_event(const pgw_pq_listener_event *ev, void *userdata)
{
    watch_state *st = userdata;
    switch (ev->kind) {
    case PGW_PQ_LISTENER_LISTENING: {
        /* NOTIFY is not durable: what happened while not listening is
         * lost, so the scope is reset. Say so in the stream too. */
        fprintf(stderr, "%s watch: listening%s\n", st->c->prog,
                st->listened++ ? " again (reconnected; writes in between were not seen)" : "");
        pgw_write *w = NULL;
        if (pgw_write_new_reset(&w, st->scope, NULL) == PGW_OK)
            on_write(ev->tenant, w, userdata);
        pgw_write_free(w);
        break;
    }
    case PGW_PQ_LISTENER_LOST:
        fprintf(stderr, "%s watch: connection lost: %s; retrying in %u ms\n", st->c->prog,
                ex_text(ev->message), (unsigned)ev->retry_ms);
        break;
    case PGW_PQ_LISTENER_FALLBACK:
    case PGW_PQ_LISTENER_RESET:
        fprintf(stderr, "%s watch: %s\n", st->c->prog, ex_text(ev->message));
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
                cli_usage(c, "--values: column \"%s\" is named twice", p);
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
 * from some of them is said. Returns 0, or the exit code. */
static int check_value_columns(cli *c, PGconn *conn, char schemas[][256], char tables[][256],
                               size_t n_tables, const char *const *cols, size_t n_cols)
{
    unsigned found[MAX_VALUES] = {0};
    for (size_t t = 0; t < n_tables; t++) {
        const char *params[2] = {schemas[t], tables[t]};
        PGresult *r = PQexecParams(conn,
                                   "SELECT a.attname FROM pg_attribute a JOIN pg_class k ON "
                                   "k.oid = a.attrelid JOIN pg_namespace n ON n.oid = "
                                   "k.relnamespace WHERE n.nspname = $1 AND k.relname = $2 "
                                   "AND k.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT "
                                   "a.attisdropped",
                                   2, NULL, params, NULL, NULL, 0);
        if (PQresultStatus(r) != PGRES_TUPLES_OK) {
            char msg[256];
            snprintf(msg, sizeof msg, "%s", PQresultErrorMessage(r));
            msg[strcspn(msg, "\n")] = '\0';
            PQclear(r);
            return cli_fail(c, "reading the columns of %s.%s: %s", schemas[t], tables[t], msg);
        }
        if (PQntuples(r) == 0) { /* no such table: pgw_pq_watch_table says so */
            PQclear(r);
            continue;
        }
        for (size_t k = 0; k < n_cols; k++) {
            bool here = false;
            for (int i = 0; i < PQntuples(r) && !here; i++)
                here = strcmp(PQgetvalue(r, i, 0), cols[k]) == 0;
            if (here)
                found[k]++;
            else if (n_tables > 1)
                fprintf(stderr, "%s watch: note: %s.%s has no column \"%s\": its writes carry "
                                "no values of it\n",
                        c->prog, ex_text(schemas[t]), ex_text(tables[t]), ex_text(cols[k]));
        }
        PQclear(r);
    }
    for (size_t k = 0; k < n_cols; k++) {
        if (found[k])
            continue;
        if (n_tables == 1)
            return cli_usage(c, "--values: \"%s\" is not a column of %s.%s (names are taken "
                                "as written)",
                             cols[k], schemas[0], tables[0]);
        return cli_usage(c, "--values: \"%s\" is a column of none of the %zu watched tables "
                            "(names are taken as written)",
                         cols[k], n_tables);
    }
    return 0;
}

/* Runs a transaction command; on failure reports it and returns false. */
static bool sql_ok(cli *c, PGconn *conn, const char *sql)
{
    PGresult *r = PQexec(conn, sql);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s", PQresultErrorMessage(r));
        msg[strcspn(msg, "\n")] = '\0';
        cli_fail(c, "%s: %s", sql, msg);
    }
    PQclear(r);
    return ok;
}

int cmd_watch(cli *c, int argc, char **argv)
{
    const char *channel = NULL, *values = NULL, *project = NULL, *tenant = NULL,
               *database = NULL, *seconds_s = NULL;
    const cli_opt opts[] = {{"dbname", 'd', true, &c->conninfo, NULL},
                            {"schema", 0, true, &c->pgw_schema, NULL},
                            {"pgw-schema", 0, true, &c->pgw_schema, NULL},
                            {"json", 0, false, NULL, &c->json},
                            {"channel", 0, true, &channel, NULL},
                            {"values", 0, true, &values, NULL},
                            {"project", 0, true, &project, NULL},
                            {"tenant", 0, true, &tenant, NULL},
                            {"database", 0, true, &database, NULL},
                            {"seconds", 0, true, &seconds_s, NULL}};
    const char *pos[MAX_TABLES];
    size_t n_pos;
    if (!cli_parse(c, argc, argv, opts, N(opts), pos, MAX_TABLES, &n_pos))
        return EXIT_USAGE;
    if (n_pos == 0)
        return cli_usage(c, "which tables? (pgwitness watch TABLE...)");
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
    const char *problem = channel ? ex_name_problem(channel) : NULL;
    if (problem)
        return cli_usage(c, "--channel: the channel name %s", problem);
    const char *scope_opts[3][2] = {
        {"--project", project}, {"--tenant", tenant}, {"--database", database}};
    for (size_t i = 0; i < 3; i++) /* "" is a value of its own (pgw_scope) */
        if (scope_opts[i][1] && !ex_utf8_valid(scope_opts[i][1], strlen(scope_opts[i][1])))
            return cli_usage(c, "%s is not valid UTF-8", scope_opts[i][0]);
    char schemas[MAX_TABLES][256], tables[MAX_TABLES][256];
    for (size_t i = 0; i < n_pos; i++) {
        if (!cli_table_arg(c, pos[i], schemas[i], sizeof schemas[i], tables[i],
                           sizeof tables[i]))
            return EXIT_USAGE;
        for (size_t k = 0; k < i; k++)
            if (strcmp(schemas[k], schemas[i]) == 0 && strcmp(tables[k], tables[i]) == 0) {
                if (strcmp(pos[k], pos[i]) == 0)
                    return cli_usage(c, "table '%s' is named twice", pos[i]);
                return cli_usage(c, "table %s.%s is named twice (as '%s' and '%s')",
                                 schemas[i], tables[i], pos[k], pos[i]);
            }
    }
    PGconn *conn = cli_connect(c);
    if (!conn)
        return 1;
    if (n_values) {
        int bad = check_value_columns(c, conn, schemas, tables, n_pos, value_cols, n_values);
        if (bad)
            return bad;
    }
    pgw_error err;
    pgw_pq_watch_options wo = PGW_PQ_WATCH_OPTIONS_INIT;
    wo.pgw_schema = c->pgw_schema;
    wo.channel = channel;
    wo.value_columns = n_values ? value_cols : NULL;
    wo.n_value_columns = n_values;
    /* All or nothing: the tables are watched in one transaction (each call
     * then uses a savepoint), rolled back when one of them fails. */
    if (!sql_ok(c, conn, "BEGIN"))
        return 1;
    for (size_t i = 0; i < n_pos; i++) {
        int rc = pgw_pq_watch_table(conn, schemas[i], tables[i], &wo, &err);
        if (rc != PGW_OK) {
            PQclear(PQexec(conn, "ROLLBACK"));
            char buf[CLI_ERR_MESSAGE_SIZE];
            return cli_fail(c, "cannot watch %s.%s: %s%s", schemas[i], tables[i],
                            cli_err_message(c, rc, &err, buf, sizeof buf),
                            n_pos > 1 ? " (no trigger was changed)" : "");
        }
    }
    if (!sql_ok(c, conn, "COMMIT"))
        return 1;
    /* The scope of what arrives: the connection's database, and the
     * project and tenant the operator names (to match a deps file). */
    pgw_scope scope = {project, tenant, database ? database : PQdb(conn)};
    watch_state st = {c, &scope, 0, 0, 0};
    pgw_pq_listener_options lo = PGW_PQ_LISTENER_OPTIONS_INIT;
    lo.channel = channel;
    lo.idle_timeout_ms = 0;
    lo.on_write = on_write;
    lo.on_event = on_event;
    lo.userdata = &st;
    pgw_pq_listener *l = NULL;
    int rc = pgw_pq_listener_new(&l, &lo, &err);
    pgw_pq_tenant_id tid;
    /* The listener opens its own connection: the same conninfo, or (when
     * the PG* environment chose the server) the database by name, the
     * rest coming from the same environment. */
    char conninfo[1100];
    if (c->conninfo && c->conninfo[0]) {
        snprintf(conninfo, sizeof conninfo, "%s", c->conninfo);
    } else {
        char *q = conninfo;
        q += snprintf(q, 16, "dbname='");
        for (const char *p = PQdb(conn); *p && q < conninfo + sizeof conninfo - 4; p++) {
            if (*p == '\\' || *p == '\'')
                *q++ = '\\';
            *q++ = *p;
        }
        *q++ = '\'';
        *q = '\0';
    }
    if (rc == PGW_OK)
        rc = pgw_pq_listener_add_tenant(&tid, l, &scope, conninfo, &err);
    if (rc == PGW_OK)
        rc = pgw_pq_listener_touch(l, tid, &err); /* connect now */
    if (rc != PGW_OK) {
        pgw_pq_listener_free(l);
        return cli_fail_err(c, rc, &err);
    }
    fprintf(stderr, "%s watch: triggers on %zu table%s; Ctrl-C to stop\n", c->prog, n_pos,
            n_pos == 1 ? "" : "s");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    long long waited_ms = 0;
    while (!g_stop && (seconds == 0 || waited_ms < (long long)seconds * 1000)) {
        rc = pgw_pq_listener_run(l, 200, &err);
        if (rc != PGW_OK)
            break;
        pgw_pq_listener_touch(l, tid, NULL);
        waited_ms += 200;
    }
    pgw_pq_listener_free(l);
    if (rc != PGW_OK)
        return cli_fail_err(c, rc, &err);
    fprintf(stderr, "%s watch: %lu write set%s seen, %lu scope reset%s\n", c->prog, st.writes,
            st.writes == 1 ? "" : "s", st.resets, st.resets == 1 ? "" : "s");
    return 0;
}
