/*
 * lib/pq/pq.c — connection checks and libpq error translation.
 * SPDX-License-Identifier: MIT
 */
#include "pq_internal.h"

#include <string.h>

/* libpq error texts end with a newline; drop it and any trailing spaces. */
static void copy_trimmed(char *dst, size_t size, const char *src)
{
    pgwi_copy_cut(dst, size, src ? src : "");
    size_t n = strlen(dst);
    while (n > 0 && (dst[n - 1] == '\n' || dst[n - 1] == ' ' || dst[n - 1] == '\r'))
        dst[--n] = '\0';
}

int pgwi_pq_conn_error(pgw_error *err, PGconn *conn, const char *what)
{
    if (!err)
        return PGW_ECONN;
    char msg[PGW_ERROR_MESSAGE_SIZE];
    copy_trimmed(msg, sizeof msg, conn ? PQerrorMessage(conn) : "no connection");
    if (msg[0] == '\0')
        pgwi_copy_cut(msg, sizeof msg, "connection lost");
    return pgwi_error(err, PGW_ECONN, "%s: %s", what, msg);
}

int pgwi_pq_result_error(pgw_error *err, PGconn *conn, const PGresult *res, const char *what)
{
    if (!res)
        return pgwi_pq_conn_error(err, conn, what);
    if (!err)
        return PGW_EPG;
    const char *primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
    const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
    char msg[PGW_ERROR_MESSAGE_SIZE];
    copy_trimmed(msg, sizeof msg, primary ? primary : PQresultErrorMessage(res));
    if (msg[0] == '\0' && conn)
        copy_trimmed(msg, sizeof msg, PQerrorMessage(conn));
    pgwi_error(err, PGW_EPG, "%s: %s", what, msg);
    if (state && strlen(state) == 5)
        memcpy(err->sqlstate, state, 6);
    return PGW_EPG;
}

int pgw_pq_check(int *out, PGconn *conn, pgw_error *err)
{
    if (!conn)
        return pgwi_error(err, PGW_EINVAL, "pq_check: conn is NULL");
    if (PQstatus(conn) != CONNECTION_OK)
        return pgwi_pq_conn_error(err, conn, "connection is not usable");
    switch (PQtransactionStatus(conn)) {
    case PQTRANS_ACTIVE:
        return pgwi_error(err, PGW_ESTATE,
                          "connection is busy: a command is in progress");
    case PQTRANS_INERROR:
        return pgwi_error(err, PGW_ESTATE,
                          "connection is in an aborted transaction: roll it back first");
    case PQTRANS_UNKNOWN:
        return pgwi_pq_conn_error(err, conn, "connection is not usable");
    case PQTRANS_IDLE:
    case PQTRANS_INTRANS:
        break;
    }
    int version = PQserverVersion(conn);
    if (version < PGW_PQ_MIN_SERVER_VERSION)
        return pgwi_error(err, PGW_EVERSION,
                          "server version %d is older than %d (PostgreSQL 10, the first "
                          "with transition tables)",
                          version, PGW_PQ_MIN_SERVER_VERSION);
    if (out)
        *out = version;
    return PGW_OK;
}
