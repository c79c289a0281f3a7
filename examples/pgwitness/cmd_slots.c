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

#define N(a) (sizeof(a) / sizeof((a)[0]))

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

/* Workaround (to remove once the library is fixed): pgw_pq_slots and
 * pgw_pq_drop_slot ask whether <schema>.slots can be used with
 * format('%I.%I', $1, $2) on untyped parameters, which the server refuses
 * ("could not determine data type of parameter $1", SQLSTATE 42P18): the
 * listing fails always, the drop after the slot is dropped. Only that
 * failure takes the fallbacks below, which do what the library documents
 * (lib/pq/sql/slots.sql; the record in <schema>.slots). */
static bool untyped_bug(int rc, const pgw_error *err)
{
    return cli_untyped_parameter(rc, err);
}

static int cell_lsn(uint64_t *out, const char *text)
{
    *out = 0;
    return text[0] ? pgw_lsn_parse(out, text, NULL) : PGW_OK;
}

static void copy_cut(char *out, size_t size, const char *s)
{
    size_t n = strlen(s);
    if (n >= size)
        n = size - 1;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--; /* not inside a UTF-8 sequence */
    memcpy(out, s, n);
    out[n] = '\0';
}

static int fallback_error(pgw_error *err, int code, const char *what, const PGresult *r)
{
    char msg[256];
    pgw_error_clear(err);
    err->code = code;
    snprintf(err->message, sizeof err->message, "%s: %s", what,
             cli_result_message(msg, sizeof msg, r));
    return code;
}

/* The record of pgwitness's slots, "<schema>".slots quoted, when the role
 * may use it with `privilege`; NULL otherwise (*rc says whether reading
 * the catalog failed). Caller frees with PQfreemem. */
static char *registry(int *rc, PGconn *conn, const char *pgw_schema, const char *privilege,
                      pgw_error *err)
{
    const char *schema = pgw_schema ? pgw_schema : PGW_PQ_DEFAULT_SCHEMA;
    const char *params[2] = {schema, privilege};
    PGresult *r = PQexecParams(conn,
                               "SELECT coalesce(pg_catalog.has_table_privilege(pg_catalog."
                               "to_regclass(pg_catalog.format('%I.slots', $1::text)), "
                               "$2::text), false)",
                               2, NULL, params, NULL, NULL, 0);
    *rc = PGW_OK;
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        *rc = fallback_error(err, PGW_EPG, "reading the library schema", r);
        PQclear(r);
        return NULL;
    }
    bool usable = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
    PQclear(r);
    if (!usable)
        return NULL;
    char *q = PQescapeIdentifier(conn, schema, strlen(schema));
    char *t = q ? malloc(strlen(q) + 8) : NULL;
    if (t)
        sprintf(t, "%s.slots", q);
    PQfreemem(q);
    if (!t)
        *rc = fallback_error(err, PGW_ENOMEM, "reading the library schema", NULL);
    return t;
}

static int slots_fallback(pgw_pq_slot_info **out, size_t *n_out, PGconn *conn,
                          const char *pgw_schema, pgw_error *err)
{
    int rc;
    char *reg = registry(&rc, conn, pgw_schema, "SELECT", err);
    if (rc != PGW_OK)
        return rc;
    char *sql = malloc((reg ? strlen(reg) : 0) + 1200);
    if (!sql) {
        free(reg);
        return fallback_error(err, PGW_ENOMEM, "listing the replication slots", NULL);
    }
    char registered[400] = "false";
    if (reg)
        snprintf(registered, sizeof registered,
                 "EXISTS (SELECT FROM %s r WHERE r.slot_name = s.slot_name)", reg);
    free(reg);
    sprintf(sql,
            "SELECT s.slot_name::text, s.database::text, s.plugin::text, s.temporary, "
            "s.active, coalesce(s.active_pid, 0), %s, coalesce(s.restart_lsn::text, ''), "
            "coalesce(s.confirmed_flush_lsn::text, ''), coalesce(pg_catalog.pg_wal_lsn_diff("
            "pg_catalog.pg_current_wal_lsn(), s.restart_lsn), 0)::bigint, coalesce(pg_catalog."
            "pg_wal_lsn_diff(pg_catalog.pg_current_wal_lsn(), s.confirmed_flush_lsn), "
            "0)::bigint, coalesce(s.wal_status, ''), coalesce(s.safe_wal_size, -1) FROM "
            "pg_catalog.pg_replication_slots s WHERE s.slot_type = 'logical' AND s.plugin = "
            "'pgoutput' AND s.database = current_database() ORDER BY s.slot_name",
            registered);
    PGresult *r = PQexec(conn, sql);
    free(sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        rc = fallback_error(err, PGW_EPG, "listing the replication slots", r);
        PQclear(r);
        return rc;
    }
    size_t n = (size_t)PQntuples(r);
    pgw_pq_slot_info *a = n ? calloc(n, sizeof *a) : NULL;
    for (size_t i = 0; a && i < n; i++) {
        int row = (int)i;
        pgw_pq_slot_info *s = &a[i];
        copy_cut(s->name, sizeof s->name, PQgetvalue(r, row, 0));
        copy_cut(s->database, sizeof s->database, PQgetvalue(r, row, 1));
        copy_cut(s->plugin, sizeof s->plugin, PQgetvalue(r, row, 2));
        s->temporary = strcmp(PQgetvalue(r, row, 3), "t") == 0;
        s->active = strcmp(PQgetvalue(r, row, 4), "t") == 0;
        s->active_pid = atoi(PQgetvalue(r, row, 5));
        s->pgwitness = strcmp(PQgetvalue(r, row, 6), "t") == 0;
        cell_lsn(&s->restart_lsn, PQgetvalue(r, row, 7));
        cell_lsn(&s->confirmed_lsn, PQgetvalue(r, row, 8));
        s->retained_bytes = strtoll(PQgetvalue(r, row, 9), NULL, 10);
        s->lag_bytes = strtoll(PQgetvalue(r, row, 10), NULL, 10);
        copy_cut(s->wal_status, sizeof s->wal_status, PQgetvalue(r, row, 11));
        s->safe_wal_size = strtoll(PQgetvalue(r, row, 12), NULL, 10);
    }
    PQclear(r);
    if (n && !a)
        return fallback_error(err, PGW_ENOMEM, "listing the replication slots", NULL);
    *out = a;
    *n_out = n;
    return PGW_OK;
}

int cli_slots(pgw_pq_slot_info **out, size_t *n_out, bool *lib_owned, PGconn *conn,
              const char *pgw_schema, pgw_error *err)
{
    int rc = pgw_pq_slots(out, n_out, conn, pgw_schema, err);
    *lib_owned = true;
    if (rc != PGW_OK && untyped_bug(rc, err)) {
        *lib_owned = false;
        rc = slots_fallback(out, n_out, conn, pgw_schema, err);
    }
    return rc;
}

void cli_slots_free(pgw_pq_slot_info *slots, bool lib_owned)
{
    if (lib_owned)
        pgw_free(slots);
    else
        free(slots);
}

/* After the slot was dropped: forgets it in <schema>.slots, as
 * pgw_pq_drop_slot would have (a schema without that table, or whose
 * table the role may not change, has nothing to forget). */
static int forget_slot_fallback(PGconn *conn, const char *pgw_schema, const char *slot,
                                pgw_error *err)
{
    int rc;
    char *reg = registry(&rc, conn, pgw_schema, "DELETE", err);
    if (!reg)
        return rc;
    char *sql = malloc(strlen(reg) + 64);
    if (!sql) {
        free(reg);
        return fallback_error(err, PGW_ENOMEM, "forgetting the slot", NULL);
    }
    sprintf(sql, "DELETE FROM %s WHERE slot_name = $1", reg);
    free(reg);
    const char *params[1] = {slot};
    PGresult *r = PQexecParams(conn, sql, 1, NULL, params, NULL, NULL, 0);
    free(sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        rc = fallback_error(err, PGW_EPG, "forgetting the slot", r);
    PQclear(r);
    return rc;
}

/* The slots, loaded for a command; 0, or the exit code after reporting. */
typedef struct slot_list {
    pgw_pq_slot_info *a;
    size_t n;
    bool lib_owned;
} slot_list;

static int load_slots(slot_list *l, cli *c, PGconn *conn)
{
    pgw_error err;
    l->a = NULL;
    l->n = 0;
    int rc = cli_slots(&l->a, &l->n, &l->lib_owned, conn, c->pgw_schema, &err);
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
        cli_slots_free(l.a, l.lib_owned);
        return cli_print_json(c, arr);
    }
    char db[300];
    cli_ident(db, sizeof db, PQdb(conn));
    if (l.n == 0) {
        printf("no replication slots use pgoutput in database %s\n", ex_text(db));
        cli_slots_free(l.a, l.lib_owned);
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
    cli_slots_free(l.a, l.lib_owned);
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
        cli_slots_free(l.a, l.lib_owned);
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
    if (rc != PGW_OK && untyped_bug(rc, &err)) /* dropped; not yet forgotten */
        rc = forget_slot_fallback(conn, c->pgw_schema, slot, &err);
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
    const cli_opt opts[] = {{"dbname", 'd', true, &c->conninfo, NULL},
                            {"schema", 0, true, &c->pgw_schema, NULL},
                            {"pgw-schema", 0, true, &c->pgw_schema, NULL},
                            {"json", 0, false, NULL, &c->json},
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
