/*
 * examples/pgwitness/cmd_slots.c — `pgwitness slots`: the replication slots
 * the stream reads (pgw_pq_slots) and what WAL each keeps; `pgwitness slots
 * drop NAME` drops one (pgw_pq_drop_slot).
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"


/* Bytes for people: "0 B", "512 B", "1.5 KiB", "16.0 MiB", "2.3 GiB". */
static const char *human_bytes(char out[32], int64_t bytes)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024 && bytes > -1024) {
        snprintf(out, 32, "%" PRId64 " B", bytes);
        return out;
    }
    double v = (double)bytes;
    size_t u = 0;
    for (v /= 1024; (v >= 1024 || v <= -1024) && u + 1 < N(units); u++)
        v /= 1024;
    snprintf(out, 32, "%.1f %s", v, units[u]);
    return out;
}

/* An LSN as text, "-" for none (0). */
static const char *lsn_text(char out[PGW_LSN_TEXT_SIZE], uint64_t lsn)
{
    if (!lsn || pgw_lsn_format(out, lsn) != PGW_OK)
        snprintf(out, PGW_LSN_TEXT_SIZE, "-");
    return out;
}

/* The slots, loaded for a command; 0, or the exit code after reporting. */
typedef struct slot_list {
    pgw_pq_slot_info *a;
    size_t n;
} slot_list;

static int load_slots(slot_list *l, cli *c, PGconn *conn)
{
    pgw_error err;
    l->a = NULL;
    l->n = 0;
    int rc = pgw_pq_slots(&l->a, &l->n, conn, c->pgw_schema, &err);
    return rc == PGW_OK ? 0 : cli_fail_err(c, rc, &err);
}

static json_t *slot_json(const pgw_pq_slot_info *s)
{
    char restart[PGW_LSN_TEXT_SIZE], confirmed[PGW_LSN_TEXT_SIZE];
    lsn_text(restart, s->restart_lsn);
    lsn_text(confirmed, s->confirmed_lsn);
    return json_pack("{s:s, s:b, s:b, s:b, s:o, s:s, s:s, s:o, s:o, s:I, s:I, s:o, s:o}",
                     "name", s->name, "pgwitness", s->pgwitness, "temporary", s->temporary,
                     "active", s->active, "active_pid",
                     s->active_pid ? json_integer(s->active_pid) : json_null(), "database",
                     s->database, "plugin", s->plugin, "restart_lsn",
                     s->restart_lsn ? json_string(restart) : json_null(), "confirmed_lsn",
                     s->confirmed_lsn ? json_string(confirmed) : json_null(), "retained_bytes",
                     (json_int_t)s->retained_bytes, "lag_bytes", (json_int_t)s->lag_bytes,
                     "wal_status", s->wal_status[0] ? json_string(s->wal_status) : json_null(),
                     "safe_wal_size",
                     s->safe_wal_size >= 0 ? json_integer(s->safe_wal_size) : json_null());
}

static int list_slots(cli *c, PGconn *conn)
{
    slot_list l;
    int bad = load_slots(&l, c, conn);
    if (bad)
        return bad;
    if (c->json) {
        json_t *arr = json_array();
        for (size_t i = 0; arr && i < l.n; i++) {
            json_t *o = slot_json(&l.a[i]);
            if (!o || json_array_append_new(arr, o) != 0) {
                json_decref(arr);
                arr = NULL;
            }
        }
        pgw_free(l.a);
        return cli_print_json(c, arr);
    }
    char db[300];
    cli_ident(db, sizeof db, PQdb(conn));
    if (l.n == 0) {
        printf("no replication slots use pgoutput in database %s\n", ex_text(db));
        pgw_free(l.a);
        return 0;
    }
    size_t ours = 0, width = 4;
    for (size_t i = 0; i < l.n; i++) {
        ours += l.a[i].pgwitness;
        size_t len = strlen(ex_text(l.a[i].name));
        if (len > width)
            width = len;
    }
    printf("%zu replication slot%s use%s pgoutput in database %s, %zu made by pgwitness\n", l.n,
           l.n == 1 ? "" : "s", l.n == 1 ? "s" : "", ex_text(db), ours);
    printf("%-*s  %-9s  %-9s  %-16s  %-17s  %10s  %10s  %-10s  %s\n", (int)width, "slot",
           "made by", "kind", "active", "confirmed", "retained", "lag", "wal_status",
           "safe_wal_size");
    for (size_t i = 0; i < l.n; i++) {
        const pgw_pq_slot_info *s = &l.a[i];
        char active[32], confirmed[PGW_LSN_TEXT_SIZE], retained[32], lag[32], safe[32];
        if (s->active)
            snprintf(active, sizeof active, "yes (pid %d)", s->active_pid);
        else
            snprintf(active, sizeof active, "no");
        if (s->safe_wal_size < 0)
            snprintf(safe, sizeof safe, "unbounded");
        else
            human_bytes(safe, s->safe_wal_size);
        printf("%-*s  %-9s  %-9s  %-16s  %-17s  %10s  %10s  %-10s  %s\n", (int)width,
               ex_text(s->name), s->pgwitness ? "pgwitness" : "other",
               s->temporary ? "temporary" : "permanent", active,
               lsn_text(confirmed, s->confirmed_lsn), human_bytes(retained, s->retained_bytes),
               human_bytes(lag, s->lag_bytes), s->wal_status[0] ? ex_text(s->wal_status) : "-",
               safe);
    }
    pgw_free(l.a);
    return 0;
}

/* A slot pgwitness did not make may be a subscriber's or a standby's:
 * dropping it loses what it kept for them. Returns 0 to go on, or the
 * exit code after refusing. */
static int check_ours(cli *c, PGconn *conn, const char *slot)
{
    const char *params[1] = {slot};
    PGresult *r = PQexecParams(conn,
                               "SELECT s.slot_type::text, coalesce(s.plugin::text, ''), "
                               "coalesce(s.database::text, ''), s.database = "
                               "current_database() FROM pg_catalog.pg_replication_slots s "
                               "WHERE s.slot_name = $1",
                               1, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        char msg[256];
        cli_result_message(msg, sizeof msg, r);
        PQclear(r);
        return cli_fail(c, "reading the replication slots: %s", msg);
    }
    if (PQntuples(r) == 0) { /* none: pgw_pq_drop_slot says so */
        PQclear(r);
        return 0;
    }
    char what[400];
    const char *type = PQgetvalue(r, 0, 0), *plugin = PQgetvalue(r, 0, 1),
               *database = PQgetvalue(r, 0, 2);
    bool here = strcmp(PQgetvalue(r, 0, 3), "t") == 0;
    if (strcmp(type, "logical") != 0)
        snprintf(what, sizeof what, "a %s slot (a standby's)", type);
    else if (!here)
        snprintf(what, sizeof what, "a slot of database %s", database);
    else if (strcmp(plugin, "pgoutput") != 0)
        snprintf(what, sizeof what, "a slot of plugin %s", plugin);
    else
        what[0] = '\0';
    PQclear(r);
    if (!what[0]) {
        slot_list l;
        int bad = load_slots(&l, c, conn);
        if (bad)
            return bad;
        bool ours = false;
        for (size_t i = 0; i < l.n; i++)
            if (strcmp(l.a[i].name, slot) == 0)
                ours = l.a[i].pgwitness;
        pgw_free(l.a);
        if (ours)
            return 0;
        snprintf(what, sizeof what, "a pgoutput slot that pgwitness did not make");
    }
    return cli_fail(c, "replication slot %s is %s: whoever reads it would lose what it keeps; "
                       "nothing was dropped (give --force to drop it anyway)",
                    slot, what);
}

static int drop_slot(cli *c, PGconn *conn, const char *slot, bool force)
{
    int bad = force ? 0 : check_ours(c, conn, slot);
    if (bad)
        return bad;
    pgw_error err;
    int rc = pgw_pq_drop_slot(conn, slot, c->pgw_schema, &err);
    if (rc != PGW_OK)
        return cli_fail_err(c, rc, &err);
    if (c->json)
        return cli_print_json(c, json_pack("{s:s, s:b}", "slot", slot, "dropped", 1));
    printf("dropped replication slot %s\n", slot);
    return 0;
}

int cmd_slots(cli *c, int argc, char **argv)
{
    bool force = false;
    const cli_opt opts[] = {COMMON_OPTS(c),
                            SCHEMA_OPT(c),
                            {"force", 0, false, NULL, &force}};
    const char *pos[2];
    size_t n_pos;
    if (!cli_parse(c, argc, argv, opts, N(opts), pos, 2, &n_pos))
        return EXIT_USAGE;
    bool drop = n_pos > 0;
    if (drop && strcmp(pos[0], "drop") != 0)
        return cli_usage(c, "unknown action '%s' (pgwitness slots, or pgwitness slots drop "
                            "NAME)",
                         pos[0]);
    if (drop && n_pos < 2)
        return cli_usage(c, "which slot? (pgwitness slots drop NAME)");
    if (force && !drop)
        return cli_usage(c, "--force is for pgwitness slots drop NAME");
    if (drop && !cli_check_slot(c, NULL, pos[1]))
        return EXIT_USAGE;
    PGconn *conn = cli_connect(c);
    if (!conn)
        return 1;
    return drop ? drop_slot(c, conn, pos[1], force) : list_slots(c, conn);
}
