/*
 * tests/support/pgw_test.h — helpers shared by the Check suites.
 *
 *  - pgwt_main(): runs a Check suite and reports it as TAP on stdout, which
 *    meson test reads (protocol: 'tap').
 *  - A counting / failing allocator installed through pgw_set_allocator, so
 *    tests can see the library's allocations and fail the Nth one.
 *  - PostgreSQL helpers for the pg suite: every test program gets its own
 *    fresh database on the server tests/run started (PGHOST, PGPORT, PGUSER
 *    from the environment) and drops it at exit.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGW_TEST_H
#define PGW_TEST_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>

/* Runs the suite with TAP output on stdout; returns the process exit code. */
int pgwt_main(Suite *s);

/* ---- allocator instrumentation ---- */

typedef struct pgwt_alloc_stats {
    size_t allocs;      /* successful malloc/realloc(NULL,..) calls */
    size_t reallocs;    /* successful realloc of a live block */
    size_t frees;       /* free of a non-NULL block */
    size_t live;        /* blocks currently allocated */
    size_t live_bytes;  /* bytes currently allocated */
    size_t peak_bytes;
    size_t calls;       /* every malloc/realloc request, failed or not */
} pgwt_alloc_stats;

/* Installs the counting allocator (resets the counters). */
void pgwt_alloc_install(void);
/* Restores the default allocator. */
void pgwt_alloc_uninstall(void);
/* Makes allocation request number n (1-based, counted from now) fail;
 * 0 disables failure injection. */
void pgwt_alloc_fail_at(size_t n);
/* True when the armed failure has been injected. */
bool pgwt_alloc_failed(void);
pgwt_alloc_stats pgwt_alloc_get(void);
void pgwt_alloc_reset(void);

/* ---- the reverse index ---- */

struct pgw_index;
/* Pops every dirty runner of idx, acknowledging each as unknown, and
 * returns them as "query:REASON" joined by commas, in pop order (a static
 * buffer, valid until the next call). Fails the test on error. */
const char *pgwt_drain(struct pgw_index *idx);

/* ---- PostgreSQL ---- */

typedef struct pg_conn PGconn;

/* Called once from main() of a pg test program, before pgwt_main: creates a
 * fresh database named after `prog` and the pid, exported as PGDATABASE for
 * the tests (and forked children). When no server is reachable, prints a
 * TAP skip plan ("1..0 # SKIP ...") and exits 0, which meson reports as a
 * skip — unless PGW_TEST_REQUIRE_PG=1 (set by tests/run), in which case it
 * bails out and fails. Drops the database at exit. */
void pgwt_pg_setup(const char *prog);
/* Connects to the test database (fails the current test on error). */
PGconn *pgwt_connect(void);
/* Connects with extra conninfo keywords appended ("user=x"), NULL on error. */
PGconn *pgwt_connect_opts(const char *extra);
/* The test database's name. */
const char *pgwt_dbname(void);
/* Runs SQL that must succeed (fails the test otherwise). */
void pgwt_exec(PGconn *c, const char *sql);
/* Runs SQL returning one value; returns a malloc'd copy (free()) or NULL for
 * SQL NULL; fails the test on error. */
char *pgwt_value(PGconn *c, const char *sql);
/* The same, as a long long. */
long long pgwt_int(PGconn *c, const char *sql);

#endif
