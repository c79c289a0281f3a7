/*
 * tests/pg/inval_e2e.h — the harness of the end-to-end differential tests
 * of query invalidation on a real server: check_inval_e2e.c (the
 * statement triggers) and check_stream_e2e.c (the triggers and the stream
 * side by side, on the same writes).
 *
 * It holds what both need: the four tables and their first rows; the
 * random subscriptions, written as SQL with the dependencies they declare;
 * the random writes; and the loop that commits them, waits for every
 * write source, re-runs every subscription's SQL once and judges each
 * source's index against the same results. A source is a pgw_index fed
 * by one write source, with a function that waits until every write of
 * the last commit has been matched against it; each index holds the same
 * subscriptions.
 *
 * Judging a commit that changed rows: a subscription whose result changed
 * while its runner was not marked dirty in a source's index is a missed
 * refresh of that source. A commit that changed no row (zero-row
 * statements, a rollback) is not re-run: nothing can differ, so nothing
 * may be marked, except what a source declares it marks on its own (the
 * triggers' marker refreshes the undeclared subscriptions).
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWT_INVAL_E2E_H
#define PGWT_INVAL_E2E_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "pgwitness/pgwitness-pq.h"

#define E2E_N_SUBS 40
#define E2E_MAX_SOURCES 2
#define E2E_MAX_STATEMENTS 3

enum { E2E_PROJECTS, E2E_TASKS, E2E_TAGS, E2E_NOTES, E2E_N_TABLES };

/* The tables' names, by the enum above. */
extern const char *const e2e_tables[E2E_N_TABLES];

/* Drops and creates the four tables (projects; tasks; tags with a
 * composite key; notes) with their first rows, and drops the library's
 * schema. notes_key: notes gets a primary key, id, an identity column
 * last (so the writes, which name two values, fill it by default);
 * without it notes has none. */
void e2e_create_tables(PGconn *c, bool notes_key);

/* The commit the harness just made, as the sources' wait functions see
 * it. */
typedef struct e2e_commit {
    long number;       /* 1-based */
    long sent;         /* its writes: statements that changed rows and were
                          not rolled back (a TRUNCATE: one per table) */
    unsigned written;  /* bit per table those wrote */
    int n_statements;
    char sql[E2E_MAX_STATEMENTS][600]; /* its statements, for messages */
} e2e_commit;

typedef struct e2e_source e2e_source;
struct e2e_source {
    const char *name;  /* "triggers", "stream" */
    pgw_index *index;  /* borrowed */
    /* Returns once every write of the commit just made has been matched
     * against the index (writer: the writer's connection, idle). */
    void (*wait)(e2e_source *src, PGconn *writer, const e2e_commit *commit);
    /* A commit that changed no row may mark the undeclared subscriptions
     * (the source's own marker is a write in the scope). */
    bool quiet_marks_undeclared;
    void *userdata;

    /* Kept by the harness and the source's write callback: */
    char log[2048];    /* the commit's write sets (e2e_log), for messages */
    size_t log_len;
    long issued;       /* refreshes issued on commits that changed rows */
    long missed;
    long by_reason[PGW_REASON_COUNT];
    long long ms_wait;
};

/* Appends a write set's JSON (or any line) to the source's log of the
 * current commit; what does not fit is cut. */
void e2e_log(e2e_source *src, const char *json);

typedef struct e2e_options {
    uint64_t seed;
    long target;       /* committed writes to make */
    /* Writes beyond the trigger test's (that test's sequence stays as it
     * was): TOASTed values (a tasks title, a projects name, a notes body
     * of 3,200 incompressible bytes, stored out of line), key changes of
     * projects, TRUNCATE of two tables in one statement, and statements
     * rolled back to a savepoint inside multi-statement transactions. */
    bool extras;
} e2e_options;

typedef struct e2e_figures {
    long statements, writes, commits, rollbacks, savepoints;
    long pairs;        /* (subscription, commit) pairs judged */
    long needed;       /* results that changed */
    long table_level;  /* refreshes table-level invalidation would issue */
    long quiet;        /* commits that changed no row */
    long big_values;   /* TOASTed values written (extras) */
    long long ms_write, ms_rerun;
} e2e_figures;

/* Registers the random subscriptions in every source's index, runs them,
 * then commits random writes on `writer` until opts->target writes have
 * committed, judging every source after each commit (above). Prints the
 * figures as TAP diagnostics and asserts what holds for every source:
 * zero missed refreshes, fewer refreshes than table-level invalidation,
 * results that really change. c: a connection for the subscriptions. */
void e2e_run(e2e_figures *out, PGconn *c, PGconn *writer, const char *db,
             e2e_source *const *sources, int n_sources, const e2e_options *opts);

/* ---- the triggers as a source ---- */

typedef struct e2e_triggers {
    e2e_source src;
    pgw_pq_listener *l;
    pgw_pq_tenant_id tenant;
    long notifications; /* write sets from the triggers */
    long syncs;         /* the harness's markers */
    long before;
} e2e_triggers;

/* A listener with one NOTIFY tenant on db (scope p/acme/db) feeding idx,
 * LISTENING, its scope reset drained; the source waits for the marker the
 * harness sends after each commit. Fails the test on error. */
void e2e_triggers_open(e2e_triggers *t, pgw_index *idx, const char *db);
/* Asserts that the tenant never failed and frees the listener. */
void e2e_triggers_close(e2e_triggers *t);

/* Waits until one of the listener's sockets is ready (at most ms), then
 * processes what is ready: the event-loop integration, which unlike
 * pgw_pq_listener_run() returns as soon as something happened. */
void e2e_wait_and_process(pgw_pq_listener *l, int ms);

/* The seed: PGW_E2E_SEED when set, else 20240611. */
uint64_t e2e_seed(void);
/* The committed writes to make: 5,000 scaled by PGW_TEST_SCALE (a
 * fraction in (0, 1]; valgrind's setup sets 0.1), at least 300. */
long e2e_target(void);

long long e2e_now_ms(void);

#endif
