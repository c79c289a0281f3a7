/*
 * lib/pq/install.c — pgw_pq_install and pgw_pq_schema_version: versioned,
 * idempotent migrations of the library's schema (lib/pq/sql/).
 * SPDX-License-Identifier: MIT
 */
#include "pq_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct migration {
    int version;
    const char *description;
    int again[3]; /* earlier migrations applied again first (their versions, in order;
                     0 ends the list) */
    const char *sql;
} migration;

/* In order; PGW_PQ_SCHEMA_VERSION is the last one's version. Migration 2
 * holds the trigger function's current text (CREATE OR REPLACE): a
 * migration that changes the function applies it again. */
static const migration migrations[] = {
    {1, "schema snapshots and the drop audit", {0}, pgwi_sql_migration_001},
    {2, "the statement trigger function of query invalidation", {0}, pgwi_sql_migration_002},
    {3, "the stream's value columns and slots", {0}, pgwi_sql_migration_003},
    {4, "the triggers below watched tables: partitions and inheritance children", {2},
     pgwi_sql_migration_004},
    {5, "announcing definition changes: announce_ddl() and the event trigger functions", {0},
     pgwi_sql_migration_005},
    {6, "streams follow a watched table's name and key; tables made again unwatched are gaps",
     {4, 5}, pgwi_sql_migration_006},
    {7, "DDL by a role without USAGE announced from the catalog; stale stream rows adopted",
     {4, 5}, pgwi_sql_migration_007},
    {8, "a table published for the stream is never left without a usable replica identity",
     {5}, pgwi_sql_migration_008},
};
#define N_MIGRATIONS (sizeof migrations / sizeof migrations[0])

/* A class id for pgwitness's advisory locks ("pgw!"); the object id is a
 * hash of the schema name, so installs of different schemas do not wait on
 * each other. */
#define PGW_LOCK_CLASS "1885828897"

static int check_schema_arg(const char *pgw_schema, pgw_error *err)
{
    if (pgw_schema && !pgw_schema[0])
        return pgwi_error(err, PGW_EINVAL, "the pgwitness schema name is empty");
    if (pgw_schema && !pgwi_utf8_valid(pgw_schema, strlen(pgw_schema)))
        return pgwi_error(err, PGW_EINVAL, "the pgwitness schema name is not valid UTF-8");
    return PGW_OK;
}

static int read_version(int *out, PGconn *conn, const char *pgw_schema, pgw_error *err)
{
    /* to_regclass first: a missing schema is "not installed", not an error. */
    char *q = NULL, *table = NULL;
    PGresult *r;
    int rc;
    if ((rc = pgwi_pq_ident(&q, conn, pgwi_pq_schema(pgw_schema), "schema_version", err)) < 0)
        return rc;
    const char *params[1] = {q};
    if ((rc = pgwi_pq_exec(&r, conn, "SELECT to_regclass($1) IS NOT NULL", 1, params,
                           "reading the pgwitness schema version", err)) < 0)
        goto done;
    bool exists = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
    PQclear(r);
    if (!exists) {
        *out = 0;
        goto done;
    }
    size_t len = strlen(q) + 64;
    if (!(table = pgwi_malloc(len))) {
        rc = pgwi_enomem(err);
        goto done;
    }
    snprintf(table, len, "SELECT coalesce(max(version), 0) FROM %s", q);
    if ((rc = pgwi_pq_exec(&r, conn, table, 0, NULL, "reading the pgwitness schema version",
                           err)) < 0)
        goto done;
    *out = atoi(PQgetvalue(r, 0, 0));
    PQclear(r);
done:
    pgwi_free(q);
    pgwi_free(table);
    return rc;
}

int pgw_pq_schema_version(int *out, PGconn *conn, const char *pgw_schema, pgw_error *err)
{
    if (PGWI_CHECK_NONNULL(err, "pq_schema_version", out, conn) < 0)
        return PGW_EINVAL;
    int rc;
    if ((rc = check_schema_arg(pgw_schema, err)) < 0)
        return rc;
    if ((rc = pgw_pq_check(NULL, conn, err)) < 0)
        return rc;
    int v = 0;
    if ((rc = read_version(&v, conn, pgw_schema, err)) < 0)
        return rc;
    *out = v;
    return PGW_OK;
}

static void rollback(PGconn *conn)
{
    PQclear(PQexec(conn, "ROLLBACK"));
}

int pgw_pq_install(int *out, PGconn *conn, const char *pgw_schema, pgw_error *err)
{
    if (!conn)
        return pgwi_error(err, PGW_EINVAL, "pq_install: conn is NULL");
    int rc;
    if ((rc = check_schema_arg(pgw_schema, err)) < 0)
        return rc;
    if ((rc = pgw_pq_check(NULL, conn, err)) < 0)
        return rc;
    if (PQtransactionStatus(conn) != PQTRANS_IDLE)
        return pgwi_error(err, PGW_ESTATE,
                          "pq_install runs its own transaction: commit or roll back first");
    const char *schema = pgwi_pq_schema(pgw_schema);
    char *preamble = NULL;
    if ((rc = pgwi_pq_sql(&preamble, conn, pgwi_sql_install, pgw_schema, err)) < 0)
        return rc;
    const char *lock_params[1] = {schema};
    char *ledger = NULL;
    int current = 0;
    PGresult *r;

    /* One transaction: the lock, the preamble, every missing migration. */
    if ((rc = pgwi_pq_run(conn,
                          "BEGIN; SET LOCAL client_min_messages = warning; "
                          "SET LOCAL lock_timeout = 0",
                          NULL, "starting the install transaction", err)) < 0)
        goto done;
    if ((rc = pgwi_pq_exec(&r, conn,
                           "SELECT pg_advisory_xact_lock(" PGW_LOCK_CLASS
                           ", hashtext('pgwitness.install:' || $1))",
                           1, lock_params, "taking the install lock", err)) < 0)
        goto done;
    PQclear(r);
    if ((rc = pgwi_pq_run(conn, preamble, NULL, "creating the pgwitness schema", err)) < 0)
        goto done;
    if ((rc = read_version(&current, conn, pgw_schema, err)) < 0)
        goto done;
    if (current > migrations[N_MIGRATIONS - 1].version) {
        rc = pgwi_error(err, PGW_EVERSION,
                        "schema \"%.100s\" is at version %d, newer than this pgwitness "
                        "(%d): upgrade the library",
                        schema, current, migrations[N_MIGRATIONS - 1].version);
        goto done;
    }
    if ((rc = pgwi_pq_sql(&ledger, conn,
                          "INSERT INTO :\"schema\".schema_version (version, description) "
                          "VALUES ($1::int, $2)",
                          pgw_schema, err)) < 0)
        goto done;
    for (size_t i = 0; i < N_MIGRATIONS; i++) {
        const migration *m = &migrations[i];
        if (m->version <= current)
            continue;
        char what[96];
        snprintf(what, sizeof what, "applying pgwitness migration %d", m->version);
        /* the earlier migrations again, unless this install just applied
         * them, then this one */
        for (size_t part = 0; part <= sizeof m->again / sizeof m->again[0]; part++) {
            bool last = part == sizeof m->again / sizeof m->again[0] || !m->again[part];
            if (!last && m->again[part] > current)
                continue;
            const char *text = last ? m->sql : migrations[m->again[part] - 1].sql;
            char *sql = NULL;
            if ((rc = pgwi_pq_sql(&sql, conn, text, pgw_schema, err)) < 0)
                goto done;
            rc = pgwi_pq_run(conn, sql, NULL, what, err);
            pgwi_free(sql);
            if (rc < 0)
                goto done;
            if (last)
                break;
        }
        char num[16];
        snprintf(num, sizeof num, "%d", m->version);
        const char *params[2] = {num, m->description};
        if ((rc = pgwi_pq_exec(&r, conn, ledger, 2, params, what, err)) < 0)
            goto done;
        PQclear(r);
    }
    rc = pgwi_pq_run(conn, "COMMIT", NULL, "committing the install", err);
done:
    pgwi_free(preamble);
    pgwi_free(ledger);
    if (rc < 0) {
        if (PQtransactionStatus(conn) != PQTRANS_IDLE)
            rollback(conn);
        return rc;
    }
    if (out)
        *out = migrations[N_MIGRATIONS - 1].version;
    return PGW_OK;
}
