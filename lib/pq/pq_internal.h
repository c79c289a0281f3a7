/*
 * lib/pq/pq_internal.h — helpers shared by the adapter's units. Not installed.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_PQ_INTERNAL_H
#define PGWITNESS_PQ_INTERNAL_H

#include "../core/internal.h"
#include "pgwitness/pgwitness-pq.h"

/* Fills err from a failed PGresult: PGW_EPG, the primary message (prefixed
 * with `what`, which names the operation) and the SQLSTATE. A NULL result
 * (libpq out of memory or connection lost) gives PGW_ECONN with
 * PQerrorMessage(conn). Returns the code. */
int pgwi_pq_result_error(pgw_error *err, PGconn *conn, const PGresult *res, const char *what);

/* Fills err with PGW_ECONN and libpq's connection error text. */
int pgwi_pq_conn_error(pgw_error *err, PGconn *conn, const char *what);

#endif /* PGWITNESS_PQ_INTERNAL_H */
