/*
 * pgwitness/pgwitness-pq.h — libpgwitness-pq, the thin libpq adapter.
 *
 * The only pgwitness header that includes <libpq-fe.h>. The adapter borrows
 * the caller's PGconn: it never opens (except the listener's own LISTEN
 * connections), closes or resets a connection it was given, and leaves its
 * session settings as it found them.
 *
 * Nothing in the adapter prints; every failure is a status code and a
 * pgw_error. Database errors are PGW_EPG with the server's SQLSTATE in
 * pgw_error.sqlstate and its primary message in pgw_error.message.
 *
 * Link with: cc $(pkg-config --cflags --libs pgwitness-pq)
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_PGWITNESS_PQ_H
#define PGWITNESS_PGWITNESS_PQ_H

#include <libpq-fe.h>

#include "pgwitness/pgwitness.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Oldest PostgreSQL server the adapter supports, as server_version_num:
 *  10.0, the first release with transition tables for statement triggers
 *  (PostgreSQL documentation, CREATE TRIGGER, "REFERENCING"). */
#define PGW_PQ_MIN_SERVER_VERSION 100000

/**
 * Checks that a connection can be used by the adapter.
 *
 * Reads only client-side state (no round trip): the connection status, the
 * transaction status, and the server version reported at connect time.
 *
 * @param out   receives the server version as server_version_num
 *              (e.g. 150004 for 15.4); may be NULL. Untouched on failure.
 * @param conn  a borrowed connection.
 * @param err   optional detail on failure.
 * @return PGW_OK;
 *         PGW_EINVAL when conn is NULL;
 *         PGW_ECONN when the connection is not CONNECTION_OK (the message
 *         carries libpq's PQerrorMessage);
 *         PGW_ESTATE when a command is in progress or the connection is in
 *         an aborted transaction (PQTRANS_ACTIVE, PQTRANS_INERROR);
 *         PGW_EVERSION when the server is older than
 *         PGW_PQ_MIN_SERVER_VERSION.
 */
PGW_API int pgw_pq_check(int *out, PGconn *conn, pgw_error *err);

#ifdef __cplusplus
}
#endif

#endif /* PGWITNESS_PGWITNESS_PQ_H */
