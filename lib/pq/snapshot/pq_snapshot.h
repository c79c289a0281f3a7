/*
 * lib/pq/snapshot/pq_snapshot.h — what the snapshot half of the adapter
 * (capture, baseline, store, funnel) shares between its units. Not installed.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_PQ_SNAPSHOT_H
#define PGWITNESS_PQ_SNAPSHOT_H

#include "pq_internal.h"

/* Batch capture for the baseline pass. The print settings are fixed once
 * for the whole run (saved, then restored); pgwi_pq_capture_send queues
 * capture.sql for an OID array literal ("{16384,16390}") without waiting;
 * pgwi_pq_capture_rows turns its result into snapshots, calling `each` for
 * every table (ownership of the snapshot passes to it) and `pump` between
 * tables so the caller can read ahead on the connection. */
int pgwi_pq_print_settings_fix(PGconn *conn, char saved[4][64], bool *changed, pgw_error *err);
void pgwi_pq_print_settings_restore(PGconn *conn, char saved[4][64]);
typedef int (*pgwi_pq_capture_each)(uint32_t oid, pgw_snapshot *snap, void *userdata,
                                    pgw_error *err);
int pgwi_pq_capture_send(PGconn *conn, const char *oid_array, pgw_error *err);
int pgwi_pq_capture_rows(const PGresult *r, const pgw_pq_capture_options *opts,
                         pgwi_pq_capture_each each, void *userdata, void (*pump)(void *),
                         void *pump_arg, pgw_error *err);

/* A prepared store_batch.sql statement: its SQL and its parameters. */
typedef struct pgwi_pq_store_msg {
    char *sql;
    char *arrays[11];
    const char *params[12];
} pgwi_pq_store_msg;

/* Prepares the INSERT of n snapshots (encodes them). */
int pgwi_pq_store_prepare(pgwi_pq_store_msg *m, PGconn *conn, const char *pgw_schema,
                          const pgw_snapshot *const *snaps, size_t n, pgw_error *err);
/* Queues it without waiting (PQsendQueryParams). */
int pgwi_pq_store_send(PGconn *conn, const pgwi_pq_store_msg *m, pgw_error *err);
/* Checks its result: n ids, copied into ids when non-NULL. */
int pgwi_pq_store_result(PGresult *res, PGconn *conn, const char *pgw_schema, size_t n,
                         int64_t *ids, pgw_error *err);
void pgwi_pq_store_msg_free(pgwi_pq_store_msg *m);

/* Stores n snapshots in one INSERT; ids[i] receives each id (may be NULL). */
int pgwi_pq_store_many(PGconn *conn, const char *pgw_schema, const pgw_snapshot *const *snaps,
                       size_t n, int64_t *ids, pgw_error *err);

#endif /* PGWITNESS_PQ_SNAPSHOT_H */
