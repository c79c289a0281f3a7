/*
 * tests/bench/bench_pq.c — see bench_pq.h.
 * SPDX-License-Identifier: MIT
 */
#include "bench_pq.h"

#include <stdio.h>
#include <stdlib.h>

void bench_exec(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK) {
        fprintf(stderr, "bench: %s\n%s", sql, PQresultErrorMessage(r));
        exit(1);
    }
    PQclear(r);
}
