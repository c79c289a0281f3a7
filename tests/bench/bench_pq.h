/*
 * tests/bench/bench_pq.h — what the benchmarks against a server share:
 * running SQL, running pgbench and reading its figures, and where the CPU
 * went (Linux: /proc/<pid>/stat; elsewhere the CPU figures are 0).
 * SPDX-License-Identifier: MIT
 */
#ifndef PGW_BENCH_PQ_H
#define PGW_BENCH_PQ_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Runs one SQL text; on failure prints it with the server's message and
 * exits 1 (a benchmark has nothing to measure after a failed set-up). */
void bench_exec(PGconn *c, const char *sql);

/* The first value of a query's first row, copied into buf (cap bytes);
 * exits 1 like bench_exec on failure or when there is no row. */
const char *bench_value(PGconn *c, const char *sql, char *buf, size_t cap);

/* pg_current_wal_insert_lsn() on c: how far c's transactions wrote. */
uint64_t bench_wal_insert_lsn(PGconn *c);

/* Unwatches a table for the stream (pgw_pq_stream_unwatch_table()). Exits
 * 1 on failure. */
void bench_stream_unwatch(PGconn *c, const char *schema, const char *table);

/* The pgbench of the server under test: $PGW_PG_BINDIR/pgbench, else the
 * one on the PATH. */
const char *bench_pgbench_path(void);

/* Starts args[0] (NULL-terminated argv, searched on the PATH) with its
 * stdout and stderr going to the file `log`; exits 1 when it cannot. */
pid_t bench_spawn(char *const *args, const char *log);

/* Waits for a process bench_spawn() started; false unless it exited 0. */
bool bench_wait(pid_t pid);

/* From a pgbench log: its "tps = " figure (-1 when absent) and, in *tx, the
 * number of transactions actually processed (0 when absent). */
double bench_pgbench_tps(const char *log, long *tx);

/* CPU seconds of a process from /proc/<pid>/stat: its own (utime + stime)
 * when children is false, else its reaped children's (cutime + cstime);
 * 0 when unknown (not Linux, no such process). 10 ms resolution. */
double bench_proc_cpu(long pid, bool children);

/* CPU seconds of this process (RUSAGE_SELF: every thread) or of its
 * reaped children (RUSAGE_CHILDREN), from getrusage. */
double bench_rusage_cpu(int who);

/* CPU nanoseconds a process has run, from /proc/<pid>/schedstat (its first
 * field; nanosecond resolution, unlike /proc/<pid>/stat); -1 when the file
 * cannot be read (not Linux, or another user's process). */
double bench_schedstat_ns(long pid);

/* The parent of a process (a backend's postmaster), 0 when unknown. */
long bench_parent_pid(long pid);

/* Whether a process still exists (has not been reaped): /proc/<pid>. */
bool bench_proc_alive(long pid);

/* Waits (up to 10 s) until the backends of a client that has ended, named
 * by their application_name, are gone and reaped by the postmaster, so that
 * their CPU is in the postmaster's children's (bench_proc_cpu). */
void bench_wait_backends_gone(PGconn *c, const char *application_name);

/* Sleeps for ms milliseconds. */
void bench_sleep_ms(int ms);

#endif
