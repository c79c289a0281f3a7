/*
 * examples/tasks/tasks.h — the query-invalidation half from a host's side:
 * the source design's `tasks.list` subscriptions (reads id, title, status,
 * updated_at; filters on status; ordered by updated_at) in two tenants,
 * each with its own database, kept fresh by the listener.
 *
 * For every notification the host prints the decision for each
 * subscription and its reason, then reruns what must refresh and
 * acknowledges the new result IDs (the rerun protocol of index.h).
 * SPDX-License-Identifier: MIT
 */
#ifndef PGW_EXAMPLE_TASKS_H
#define PGW_EXAMPLE_TASKS_H

#include <stdio.h>

#include "pgwitness/pgwitness-pq.h"

/** A tenant of the example: its name (the scope's tenant) and database. */
typedef struct tasks_tenant {
    const char *name;     /* "acme" */
    const char *conninfo; /* its database */
} tasks_tenant;

/**
 * Prepares each tenant's database (pgw_pq_install, a fresh `tasks` table,
 * watched with its `status` values in the payloads), registers the
 * subscriptions, starts the listener and runs the fixed script of writes
 * — inserts, updates of read and unread columns, a status change, a
 * delete, writes in the other tenant, and a forced reconnect (the LISTEN
 * backend of the first tenant is terminated and a write is made while
 * nobody listens: the reconnect resets the tenant's scope) — printing to
 * `out` what happens, in a stable form (no times, no process IDs).
 *
 * @return 0 on success; 1 with a message on `out` when something failed.
 */
int tasks_script(FILE *out, const tasks_tenant *tenants, size_t n_tenants);

/**
 * The same setup, then listens and prints the decisions for writes others
 * make (psql: INSERT INTO tasks ...) until `seconds` have passed (0: run
 * until interrupted).
 */
int tasks_watch(FILE *out, const tasks_tenant *tenants, size_t n_tenants, int seconds);

#endif
