/*
 * tests/bench/bench_trigger_cost.c — where the statement trigger's time goes
 * (issue 6, "Performance"): the server CPU of one one-row UPDATE transaction
 * with the pgwitness trigger, against the same transaction with no trigger
 * and with trigger functions that do only part of the work. It answers
 * "how cheap can a PL/pgSQL statement trigger with transition tables be on
 * this machine", the floor under the pgbench ratio of bench-triggers.
 *
 * A table t(id int primary key, a int, b text, c timestamptz); a procedure
 * runs N transactions (UPDATE of one row, COMMIT) in one backend; the
 * backend's CPU time comes from /proc/<pid>/schedstat (nanoseconds; Linux
 * only) around the CALL, so neither the client round trip nor other
 * processes on the machine count. Each variant is measured ROUNDS times,
 * interleaved, and the minimum is printed with its excess over no trigger.
 * The variants, each attached as the table's AFTER UPDATE ... FOR EACH
 * STATEMENT trigger with OLD TABLE and NEW TABLE:
 *   empty        a PL/pgSQL function that returns
 *   set          + the two SET clauses notify_statement() has
 *   subxact      + a BEGIN ... EXCEPTION block (a subtransaction)
 *   read rows    + reading the old and new row as JSON text (one query)
 *   key check    + notify_statement()'s check that the key is the same
 *   notify       only pg_notify() with a 150-byte payload
 *   pgwitness    notify_statement(), as pgw_pq_watch_table() attaches it
 * Nobody listens on the channel (NOTIFY's own cost at commit is in
 * "notify"). PGW_BENCH_TX (default 10000) and PGW_BENCH_ROUNDS (default 5)
 * override the sizes. Works in a scratch schema it drops at the end.
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_pq.h"
#include "pgwitness/pgwitness-pq.h"

#define SCHEMA "pgw_bench_trigger_cost"

typedef struct variant {
    const char *name;
    const char *function; /* the trigger function, schema-qualified; "pgwitness": watched */
    const char *body;     /* CREATE FUNCTION ... text, or NULL (no trigger / pgwitness) */
} variant;

/* The trigger arguments notify_statement() gets for t (set in main). */
static char pgw_args[256];

static const variant VARIANTS[] = {
    {"no trigger", NULL, NULL},
    {"empty", SCHEMA ".v_empty",
     "CREATE FUNCTION " SCHEMA ".v_empty() RETURNS trigger LANGUAGE plpgsql STABLE AS $$"
     " BEGIN RETURN NULL; END $$"},
    {"set", SCHEMA ".v_set",
     "CREATE FUNCTION " SCHEMA ".v_set() RETURNS trigger LANGUAGE plpgsql STABLE"
     " SET search_path = pg_catalog, pg_temp SET extra_float_digits = 3 AS $$"
     " BEGIN RETURN NULL; END $$"},
    {"set+subxact", SCHEMA ".v_subxact",
     "CREATE FUNCTION " SCHEMA ".v_subxact() RETURNS trigger LANGUAGE plpgsql STABLE"
     " SET search_path = pg_catalog, pg_temp SET extra_float_digits = 3 AS $$"
     " DECLARE x int; BEGIN BEGIN x := 1; EXCEPTION WHEN OTHERS THEN x := 2; END;"
     " RETURN NULL; END $$"},
    {"set+subxact+read rows", SCHEMA ".v_read",
     "CREATE FUNCTION " SCHEMA ".v_read() RETURNS trigger LANGUAGE plpgsql STABLE"
     " SET search_path = pg_catalog, pg_temp SET extra_float_digits = 3 AS $$"
     " DECLARE _ot text; _nt text; BEGIN BEGIN"
     " SELECT to_json(o.*)::text, to_json(n.*)::text INTO STRICT _ot, _nt"
     " FROM pgw_old o, pgw_new n;"
     " EXCEPTION WHEN OTHERS THEN _ot := NULL; END; RETURN NULL; END $$"},
    {"set+subxact+read rows+key check", SCHEMA ".v_key",
     "CREATE FUNCTION " SCHEMA ".v_key() RETURNS trigger LANGUAGE plpgsql STABLE"
     " SET search_path = pg_catalog, pg_temp SET extra_float_digits = 3 AS $$"
     " DECLARE _ot text; _nt text; _b boolean; BEGIN BEGIN"
     " SELECT to_json(o.*)::text, to_json(n.*)::text INTO STRICT _ot, _nt"
     " FROM pgw_old o, pgw_new n;"
     " _b := pg_get_replica_identity_index(TG_RELID) IS DISTINCT FROM TG_ARGV[1]::oid"
     " OR pg_get_indexdef(TG_ARGV[1]::oid, 1, false) IS DISTINCT FROM TG_ARGV[3];"
     " EXCEPTION WHEN OTHERS THEN _ot := NULL; END; RETURN NULL; END $$"},
    {"pg_notify only", SCHEMA ".v_notify",
     "CREATE FUNCTION " SCHEMA ".v_notify() RETURNS trigger LANGUAGE plpgsql STABLE AS $$"
     " DECLARE _x text; BEGIN _x := pg_notify('pgw_bench_trigger_cost',"
     " '{\"version\":1,\"schema\":\"public\",\"table\":\"t\",\"op\":\"update\",\"ids\":[\"3\"],"
     "\"ids_truncated\":false,\"columns\":[\"a\"],\"columns_truncated\":false,"
     "\"pk_changed\":false}')::text; RETURN NULL; END $$"},
    {"pgwitness notify_statement()", "pgwitness", NULL},
};
#define N_VARIANTS (sizeof VARIANTS / sizeof VARIANTS[0])

static void attach(PGconn *c, const variant *v)
{
    bench_exec(c, "DROP TRIGGER IF EXISTS v_update ON " SCHEMA ".t");
    pgw_error err = {0};
    bool removed;
    if (pgw_pq_unwatch_table(&removed, c, SCHEMA, "t", &err) != PGW_OK) {
        fprintf(stderr, "bench-trigger-cost: unwatch: %s\n", err.message);
        exit(1);
    }
    if (!v->function)
        return;
    if (strcmp(v->function, "pgwitness") == 0) {
        if (pgw_pq_watch_table(c, SCHEMA, "t", NULL, &err) != PGW_OK) {
            fprintf(stderr, "bench-trigger-cost: watch: %s\n", err.message);
            exit(1);
        }
        return;
    }
    char fn[600], sql[1024];
    snprintf(fn, sizeof fn, "%s(%s)", v->function, pgw_args);
    snprintf(sql, sizeof sql,
             "CREATE TRIGGER v_update AFTER UPDATE ON " SCHEMA ".t"
             " REFERENCING OLD TABLE AS pgw_old NEW TABLE AS pgw_new"
             " FOR EACH STATEMENT EXECUTE PROCEDURE %s",
             fn);
    bench_exec(c, sql);
}

int main(void)
{
    long n_tx = getenv("PGW_BENCH_TX") ? atol(getenv("PGW_BENCH_TX")) : 10000;
    int rounds = getenv("PGW_BENCH_ROUNDS") ? atoi(getenv("PGW_BENCH_ROUNDS")) : 5;
    if (n_tx < 100 || rounds < 1) {
        fprintf(stderr, "bench-trigger-cost: PGW_BENCH_TX >= 100 and PGW_BENCH_ROUNDS >= 1\n");
        return 2;
    }
    PGconn *c = PQconnectdb("");
    if (PQstatus(c) != CONNECTION_OK || pgw_pq_install(NULL, c, NULL, NULL) != PGW_OK) {
        fprintf(stderr, "bench-trigger-cost: %s", PQerrorMessage(c));
        return 1;
    }
    int pid = PQbackendPID(c);
    if (bench_schedstat_ns(pid) < 0) {
        printf("bench-trigger-cost: cannot read /proc/%d/schedstat (not Linux, or the server "
               "runs as another user): skipped\n",
               pid);
        PQfinish(c);
        return 0;
    }
    bench_exec(c, "SET client_min_messages = warning");
    bench_exec(c, "DROP SCHEMA IF EXISTS " SCHEMA " CASCADE");
    bench_exec(c, "CREATE SCHEMA " SCHEMA);
    bench_exec(c, "CREATE TABLE " SCHEMA ".t (id int PRIMARY KEY, a int NOT NULL, b text, "
            "c timestamptz)");
    bench_exec(c, "INSERT INTO " SCHEMA ".t SELECT g, 0, 'row ' || g, now() FROM generate_series(1, "
            "100) g");
    bench_exec(c, "CREATE PROCEDURE " SCHEMA ".run(n int) LANGUAGE plpgsql AS $$ BEGIN"
            " FOR i IN 1..n LOOP UPDATE " SCHEMA ".t SET a = a + 1 WHERE id = 3; COMMIT;"
            " END LOOP; END $$");
    for (size_t i = 0; i < N_VARIANTS; i++)
        if (VARIANTS[i].body)
            bench_exec(c, VARIANTS[i].body);
    /* The key arguments notify_statement() would get, for the key check. */
    PGresult *r = PQexec(c, "SELECT quote_literal(i.indexrelid::text) || ', ''id'', ''id'''"
                            "  FROM pg_index i WHERE i.indrelid = '" SCHEMA ".t'::regclass"
                            "   AND i.indisprimary");
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
        fprintf(stderr, "bench-trigger-cost: no primary key index\n");
        return 1;
    }
    snprintf(pgw_args, sizeof pgw_args, "'pgw_bench_trigger_cost', %s", PQgetvalue(r, 0, 0));
    PQclear(r);

    char call[128];
    snprintf(call, sizeof call, "CALL " SCHEMA ".run(%ld)", n_tx);
    double best[N_VARIANTS];
    for (size_t i = 0; i < N_VARIANTS; i++)
        best[i] = -1;
    for (int round = 0; round < rounds; round++) {
        for (size_t i = 0; i < N_VARIANTS; i++) {
            attach(c, &VARIANTS[i]);
            bench_exec(c, "CALL " SCHEMA ".run(200)"); /* warm the caches and the plans */
            double t0 = bench_schedstat_ns(pid);
            bench_exec(c, call);
            double us = (bench_schedstat_ns(pid) - t0) / 1e3 / (double)n_tx;
            if (best[i] < 0 || us < best[i])
                best[i] = us;
        }
    }
    printf("server CPU per one-row UPDATE transaction (backend schedstat, min of %d rounds of "
           "%ld transactions, interleaved)\n",
           rounds, n_tx);
    for (size_t i = 0; i < N_VARIANTS; i++)
        printf("  %-34s %7.1f us  (+%.1f us over no trigger, %.2fx)\n", VARIANTS[i].name, best[i],
               best[i] - best[0], best[i] / best[0]);
    attach(c, &VARIANTS[0]);
    bench_exec(c, "DROP SCHEMA " SCHEMA " CASCADE");
    PQfinish(c);
    return 0;
}
