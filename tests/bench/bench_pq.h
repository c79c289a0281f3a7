/*
 * tests/bench/bench_pq.h — what the benchmarks against a server share.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGW_BENCH_PQ_H
#define PGW_BENCH_PQ_H

#include <libpq-fe.h>

/* Runs one SQL text; on failure prints it with the server's message and
 * exits 1 (a benchmark has nothing to measure after a failed set-up). */
void bench_exec(PGconn *c, const char *sql);

#endif
