/*
 * lib/pq/inval/ddl.c — pgw_pq_announce_ddl, pgw_pq_install_ddl_trigger and
 * pgw_pq_remove_ddl_trigger: a table's definition change announced to both
 * write sources (<schema>.announce_ddl() and the event trigger functions,
 * lib/pq/sql/migration_005.sql; the event triggers' state,
 * lib/pq/sql/ddl_trigger.sql).
 *
 * Each runs as one unit: its own transaction when the connection is idle,
 * else a savepoint in the caller's (pgwi_pq_unit_begin), undone on failure.
 * SPDX-License-Identifier: MIT
 */
#include "pq_internal.h"

#include <stdio.h>
#include <string.h>

static int need_version_5(PGconn *conn, const char *schema, const char *signature,
                          pgw_error *err)
{
    bool installed;
    int rc;
    if ((rc = pgwi_pq_has_function(&installed, conn, schema, signature, err)) < 0)
        return rc;
    if (!installed)
        return pgwi_error(err, PGW_ENOTFOUND,
                          "schema \"%.100s\" has no %s (pgwitness schema version 5): run "
                          "pgw_pq_install() to install or upgrade it",
                          schema, signature);
    return PGW_OK;
}

/* USAGE on the library schema, which announce_ddl() needs: without it
 * the server says only "permission denied for schema", not what to do.
 * A schema that does not exist passes (need_version_5 says so). */
static int need_usage(PGconn *conn, const char *schema, pgw_error *err)
{
    const char *params[1] = {schema};
    PGresult *r;
    int rc;
    if ((rc = pgwi_pq_exec(&r, conn,
                           "SELECT current_user, pg_catalog.format('GRANT USAGE ON SCHEMA %I "
                           "TO %I', $1::text, current_user) FROM pg_catalog.pg_namespace n "
                           "WHERE n.nspname = $1::text AND NOT "
                           "pg_catalog.has_schema_privilege(n.oid, 'USAGE')",
                           1, params, "checking the privileges on the pgwitness schema",
                           err)) < 0)
        return rc;
    if (PQntuples(r) == 1) {
        rc = pgwi_error(err, PGW_EPG,
                        "role %.100s has no USAGE on schema \"%.100s\": grant it (%.250s)",
                        PQgetvalue(r, 0, 0), schema, PQgetvalue(r, 0, 1));
        if (err)
            memcpy(err->sqlstate, "42501", 6);
    }
    PQclear(r);
    return rc;
}

static int check_announce_options(const pgw_pq_announce_options *o, pgw_error *err)
{
    int rc;
    if (o->version != PGW_PQ_ANNOUNCE_OPTIONS_VERSION)
        return pgwi_error(err, PGW_EINVAL,
                          "announce options version %u is not %u (use "
                          "PGW_PQ_ANNOUNCE_OPTIONS_INIT)",
                          o->version, (unsigned)PGW_PQ_ANNOUNCE_OPTIONS_VERSION);
    if (o->pgw_schema &&
        (rc = pgwi_pq_check_name("announce options: the pgwitness schema name", o->pgw_schema,
                                 err)) < 0)
        return rc;
    if (o->n_channels && !o->channels)
        return pgwi_error(err, PGW_EINVAL, "announce options: channels is NULL with %zu entries",
                          o->n_channels);
    for (size_t i = 0; i < o->n_channels; i++) {
        if (!o->channels[i])
            return pgwi_error(err, PGW_EINVAL, "announce options: channel %zu is NULL", i);
        if ((rc = pgwi_pq_check_channel(o->channels[i], err)) < 0)
            return rc;
    }
    return PGW_OK;
}

int pgw_pq_announce_ddl(PGconn *conn, const char *schema, const char *table,
                        const pgw_pq_announce_options *opts, pgw_error *err)
{
    if (!conn)
        return pgwi_error(err, PGW_EINVAL, "pq_announce_ddl: conn is NULL");
    int rc;
    if ((rc = pgwi_pq_check_name("pq_announce_ddl: schema", schema, err)) < 0 ||
        (rc = pgwi_pq_check_name("pq_announce_ddl: table", table, err)) < 0)
        return rc;
    pgw_pq_announce_options defaults = PGW_PQ_ANNOUNCE_OPTIONS_INIT;
    const pgw_pq_announce_options *o = opts ? opts : &defaults;
    if ((rc = check_announce_options(o, err)) < 0 || (rc = pgw_pq_check(NULL, conn, err)) < 0)
        return rc;
    const char *pgw_schema = pgwi_pq_schema(o->pgw_schema);
    char *fn = NULL, *sql = NULL, *chans = NULL;
    if ((rc = pgwi_pq_ident(&fn, conn, pgw_schema, "announce_ddl", err)) < 0)
        return rc;
    size_t len = strlen(fn) + 64;
    if (!(sql = pgwi_malloc(len))) {
        rc = pgwi_enomem(err);
        goto done;
    }
    snprintf(sql, len, "SELECT count(*) FROM %s($1, $2, $3::text[])", fn);
    if ((rc = pgwi_pq_text_array(&chans, NULL, o->channels, o->n_channels, err)) < 0)
        goto done;
    bool own;
    if ((rc = pgwi_pq_unit_begin(conn, &own, "pgwitness_announce", "starting the announcement",
                                 err)) < 0)
        goto done;
    const char *params[3] = {schema, table, chans};
    PGresult *r;
    if ((rc = need_usage(conn, pgw_schema, err)) < 0 ||
        (rc = need_version_5(conn, pgw_schema, "announce_ddl(text,text,text[],boolean)", err)) < 0)
        goto end;
    if ((rc = pgwi_pq_exec(&r, conn, sql, 3, params, "announcing the definition change", err)) < 0)
        goto end;
    PQclear(r);
end:
    rc = pgwi_pq_unit_end(conn, own, rc, "pgwitness_announce", "committing the announcement",
                          err);
done:
    pgwi_free(fn);
    pgwi_free(sql);
    pgwi_free(chans);
    return rc;
}

/* install: the two event triggers; remove: drops them. Both are refused
 * unless a superuser, checked first: also when there is nothing to do
 * (installed already, or nothing to drop), so that a role that could not
 * make the change is never told it is made. */
static int ddl_trigger(PGconn *conn, const char *pgw_schema, bool install, pgw_error *err)
{
    const char *what = install ? "pq_install_ddl_trigger" : "pq_remove_ddl_trigger";
    if (!conn)
        return pgwi_error(err, PGW_EINVAL, "%s: conn is NULL", what);
    const char *schema = pgwi_pq_schema(pgw_schema);
    int rc;
    if ((rc = pgwi_pq_check_name("the pgwitness schema name", schema, err)) < 0 ||
        (rc = pgw_pq_check(NULL, conn, err)) < 0)
        return rc;
    bool own;
    if ((rc = pgwi_pq_unit_begin(conn, &own, "pgwitness_ddl_trigger",
                                 "starting the event trigger change", err)) < 0)
        return rc;
    const char *params[2] = {schema, install ? "install" : "remove"};
    PGresult *r;
    if ((rc = pgwi_pq_exec(&r, conn, pgwi_sql_ddl_trigger, 2, params,
                           "reading pgwitness's event triggers", err)) < 0)
        return pgwi_pq_unit_end(conn, own, rc, "pgwitness_ddl_trigger",
                                "ending the event trigger change", err);
    bool super = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
    const char *ddl = PQgetvalue(r, 0, 2);
    if (!super) {
        rc = pgwi_error(err, PGW_EPG,
                        "%s the pgwitness event triggers needs a superuser (PostgreSQL: "
                        "CREATE EVENT TRIGGER, DROP EVENT TRIGGER), and the current user is "
                        "not one: without them, call pgw_pq_announce_ddl() (pgwitness "
                        "announce) after each migration",
                        install ? "installing" : "removing");
        if (err)
            memcpy(err->sqlstate, "42501", 6);
    } else if (!PQgetisnull(r, 0, 1)) {
        rc = pgwi_error(err, PGW_EEXISTS,
                        "an event trigger %.200s is not this schema's (\"%.100s\"): drop it, "
                        "or use the schema whose it is",
                        PQgetvalue(r, 0, 1), schema);
    } else if (ddl[0] && install &&
               (rc = need_version_5(conn, schema, "on_ddl_event()", err)) < 0) {
        /* rc set */
    } else if (ddl[0]) {
        rc = pgwi_pq_run(conn, ddl, NULL,
                         install ? "creating the event triggers" : "dropping the event triggers",
                         err);
    }
    PQclear(r);
    return pgwi_pq_unit_end(conn, own, rc, "pgwitness_ddl_trigger",
                            "committing the event trigger change", err);
}

int pgw_pq_install_ddl_trigger(PGconn *conn, const char *pgw_schema, pgw_error *err)
{
    return ddl_trigger(conn, pgw_schema, true, err);
}

int pgw_pq_remove_ddl_trigger(PGconn *conn, const char *pgw_schema, pgw_error *err)
{
    return ddl_trigger(conn, pgw_schema, false, err);
}
