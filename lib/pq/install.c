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
    const char *sql;
} migration;

/* In order; PGW_PQ_SCHEMA_VERSION is the last one's version. */
static const migration migrations[] = {
    {1, "schema snapshots and the drop audit", pgwi_sql_migration_001},
    {2, "the statement trigger function of query invalidation", pgwi_sql_migration_002},
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
    char *table = NULL;
    char *q = pgwi_pq_ident(conn, pgwi_pq_schema(pgw_schema), "schema_version", err);
    if (!q)
        return err ? err->code : PGW_ENOMEM;
    const char *params[1] = {q};
    PGresult *r = pgwi_pq_exec(conn, "SELECT to_regclass($1) IS NOT NULL", 1, params,
                               "reading the pgwitness schema version", err);
    if (!r) {
        pgwi_free(q);
        return err ? err->code : PGW_EPG;
    }
    bool exists = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
    PQclear(r);
    if (!exists) {
        pgwi_free(q);
        *out = 0;
        return PGW_OK;
    }
    size_t len = strlen(q) + 64;
    table = pgwi_malloc(len);
    if (!table) {
        pgwi_free(q);
        return pgwi_enomem(err);
    }
    snprintf(table, len, "SELECT coalesce(max(version), 0) FROM %s", q);
    pgwi_free(q);
    r = pgwi_pq_exec(conn, table, 0, NULL, "reading the pgwitness schema version", err);
    pgwi_free(table);
    if (!r)
        return err ? err->code : PGW_EPG;
    *out = atoi(PQgetvalue(r, 0, 0));
    PQclear(r);
    return PGW_OK;
}

int pgw_pq_schema_version(int *out, PGconn *conn, const char *pgw_schema, pgw_error *err)
{
    if (PGWI_CHECK_NONNULL(err, "pq_schema_version", out, conn) != PGW_OK)
        return PGW_EINVAL;
    int rc = check_schema_arg(pgw_schema, err);
    if (rc == PGW_OK)
        rc = pgw_pq_check(NULL, conn, err);
    if (rc != PGW_OK)
        return rc;
    pgw_error local;
    int v = 0;
    rc = read_version(&v, conn, pgw_schema, err ? err : &local);
    if (rc == PGW_OK)
        *out = v;
    return rc;
}

static void rollback(PGconn *conn)
{
    PQclear(PQexec(conn, "ROLLBACK"));
}

int pgw_pq_install(int *out, PGconn *conn, const char *pgw_schema, pgw_error *err)
{
    if (!conn)
        return pgwi_error(err, PGW_EINVAL, "pq_install: conn is NULL");
    int rc = check_schema_arg(pgw_schema, err);
    if (rc == PGW_OK)
        rc = pgw_pq_check(NULL, conn, err);
    if (rc != PGW_OK)
        return rc;
    if (PQtransactionStatus(conn) != PQTRANS_IDLE)
        return pgwi_error(err, PGW_ESTATE,
                          "pq_install runs its own transaction: commit or roll back first");
    pgw_error local;
    pgw_error *e = err ? err : &local;
    const char *schema = pgwi_pq_schema(pgw_schema);
    char *preamble = pgwi_pq_sql(conn, pgwi_sql_install, pgw_schema, e);
    if (!preamble)
        return e->code;

    /* One transaction: the lock, the preamble, every missing migration. */
    rc = pgwi_pq_run(conn,
                     "BEGIN; SET LOCAL client_min_messages = warning; "
                     "SET LOCAL lock_timeout = 0",
                     NULL, "starting the install transaction", e);
    if (rc == PGW_OK) {
        const char *params[1] = {schema};
        PGresult *r = pgwi_pq_exec(conn,
                                   "SELECT pg_advisory_xact_lock(" PGW_LOCK_CLASS
                                   ", hashtext('pgwitness.install:' || $1))",
                                   1, params, "taking the install lock", e);
        rc = r ? PGW_OK : e->code;
        PQclear(r);
    }
    if (rc == PGW_OK)
        rc = pgwi_pq_run(conn, preamble, NULL, "creating the pgwitness schema", e);
    pgwi_free(preamble);
    int current = 0;
    if (rc == PGW_OK)
        rc = read_version(&current, conn, pgw_schema, e);
    if (rc == PGW_OK && current > migrations[N_MIGRATIONS - 1].version)
        rc = pgwi_error(e, PGW_EVERSION,
                        "schema \"%.100s\" is at version %d, newer than this pgwitness "
                        "(%d): upgrade the library",
                        schema, current, migrations[N_MIGRATIONS - 1].version);
    char *ledger = NULL;
    if (rc == PGW_OK) {
        ledger = pgwi_pq_sql(conn,
                             "INSERT INTO :\"schema\".schema_version (version, description) "
                             "VALUES ($1::int, $2)",
                             pgw_schema, e);
        if (!ledger)
            rc = e->code;
    }
    for (size_t i = 0; rc == PGW_OK && i < N_MIGRATIONS; i++) {
        const migration *m = &migrations[i];
        if (m->version <= current)
            continue;
        char *sql = pgwi_pq_sql(conn, m->sql, pgw_schema, e);
        if (!sql) {
            rc = e->code;
            break;
        }
        char what[96];
        snprintf(what, sizeof what, "applying pgwitness migration %d", m->version);
        rc = pgwi_pq_run(conn, sql, NULL, what, e);
        pgwi_free(sql);
        if (rc == PGW_OK) {
            char num[16];
            snprintf(num, sizeof num, "%d", m->version);
            const char *params[2] = {num, m->description};
            PGresult *r = pgwi_pq_exec(conn, ledger, 2, params, what, e);
            rc = r ? PGW_OK : e->code;
            PQclear(r);
        }
    }
    pgwi_free(ledger);
    if (rc == PGW_OK)
        rc = pgwi_pq_run(conn, "COMMIT", NULL, "committing the install", e);
    if (rc != PGW_OK) {
        if (PQtransactionStatus(conn) != PQTRANS_IDLE)
            rollback(conn);
        return rc;
    }
    if (out)
        *out = migrations[N_MIGRATIONS - 1].version;
    return PGW_OK;
}
