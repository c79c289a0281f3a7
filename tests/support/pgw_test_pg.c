/*
 * tests/support/pgw_test_pg.c — PostgreSQL helpers of pgw_test.h.
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "pgw_test.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* PostgreSQL                                                          */

static char g_dbname[64];

static PGconn *connect_db(const char *db, const char *extra)
{
    char conninfo[512];
    snprintf(conninfo, sizeof conninfo, "dbname=%s connect_timeout=10 %s", db,
             extra ? extra : "");
    return PQconnectdb(conninfo);
}

static void drop_db(void)
{
    if (!g_dbname[0] || getenv("PGW_TEST_KEEP_DB"))
        return;
    PGconn *c = connect_db("postgres", NULL);
    if (PQstatus(c) == CONNECTION_OK) {
        char sql[160];
        snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS \"%s\" WITH (FORCE)", g_dbname);
        PQclear(PQexec(c, sql));
    }
    PQfinish(c);
}

static pid_t g_owner_pid;

static void drop_db_at_exit(void)
{
    /* Forked test children exit too; only the process that created the
     * database drops it. */
    if (getpid() == g_owner_pid)
        drop_db();
}

void pgwt_pg_setup(const char *prog)
{
    const char *require = getenv("PGW_TEST_REQUIRE_PG");
    bool required = require && strcmp(require, "1") == 0;
    PGconn *c = connect_db("postgres", NULL);
    if (PQstatus(c) != CONNECTION_OK) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", PQerrorMessage(c));
        msg[strcspn(msg, "\n")] = '\0';
        PQfinish(c);
        if (required) {
            printf("Bail out! no PostgreSQL server reachable (PGHOST=%s PGPORT=%s): %s\n",
                   getenv("PGHOST") ? getenv("PGHOST") : "",
                   getenv("PGPORT") ? getenv("PGPORT") : "", msg);
            exit(EXIT_FAILURE);
        }
        /* A TAP skip plan (meson's TAP reader treats exit status 77 as an
         * error, so the skip is the plan and the exit status is 0). */
        printf("1..0 # SKIP no PostgreSQL server (run tests/run, which starts one): %s\n",
               msg);
        exit(EXIT_SUCCESS);
    }
    snprintf(g_dbname, sizeof g_dbname, "pgwt_%s_%ld", prog, (long)getpid());
    for (char *p = g_dbname; *p; p++)
        if (*p == '-')
            *p = '_';
    char sql[160];
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS \"%s\"", g_dbname);
    PQclear(PQexec(c, sql));
    snprintf(sql, sizeof sql, "CREATE DATABASE \"%s\"", g_dbname);
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        printf("Bail out! cannot create test database %s: %s", g_dbname,
               PQresultErrorMessage(r));
        exit(EXIT_FAILURE);
    }
    PQclear(r);
    PQfinish(c);
    setenv("PGDATABASE", g_dbname, 1);
    g_owner_pid = getpid();
    atexit(drop_db_at_exit);
}

const char *pgwt_dbname(void)
{
    return g_dbname;
}

PGconn *pgwt_connect_opts(const char *extra)
{
    PGconn *c = connect_db(g_dbname[0] ? g_dbname : "postgres", extra);
    if (PQstatus(c) != CONNECTION_OK) {
        PQfinish(c);
        return NULL;
    }
    return c;
}

PGconn *pgwt_connect(void)
{
    PGconn *c = connect_db(g_dbname[0] ? g_dbname : "postgres", NULL);
    ck_assert_msg(PQstatus(c) == CONNECTION_OK, "connect to %s: %s", g_dbname,
                  PQerrorMessage(c));
    return c;
}

void pgwt_exec(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    ExecStatusType st = PQresultStatus(r);
    ck_assert_msg(st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK, "SQL failed: %s\n%s",
                  sql, PQresultErrorMessage(r));
    PQclear(r);
}

char *pgwt_value(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK, "SQL failed: %s\n%s", sql,
                  PQresultErrorMessage(r));
    ck_assert_msg(PQntuples(r) == 1 && PQnfields(r) == 1, "expected one value from: %s",
                  sql);
    char *v = PQgetisnull(r, 0, 0) ? NULL : strdup(PQgetvalue(r, 0, 0));
    PQclear(r);
    return v;
}

long long pgwt_int(PGconn *c, const char *sql)
{
    char *v = pgwt_value(c, sql);
    ck_assert_msg(v != NULL, "NULL from: %s", sql);
    long long n = strtoll(v, NULL, 10);
    free(v);
    return n;
}
