/*
 * lib/pq/pq_internal.h — helpers shared by the adapter's units. Not installed.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_PQ_INTERNAL_H
#define PGWITNESS_PQ_INTERNAL_H

#include "../core/internal.h"
#include "pgwitness/pgwitness-pq.h"
#include "pq_sql.h"

/* Fills err from a failed PGresult: PGW_EPG, the primary message (prefixed
 * with `what`, which names the operation) and the SQLSTATE. A NULL result
 * (libpq out of memory or connection lost) gives PGW_ECONN with
 * PQerrorMessage(conn). Returns the code. */
int pgwi_pq_result_error(pgw_error *err, PGconn *conn, const PGresult *res, const char *what);

/* Copies a libpq message into dst[size] as one line: line breaks (and the
 * indentation after them) become "; ", trailing blanks are dropped, the
 * cut falls on a UTF-8 boundary. NULL or empty gives "connection lost". */
void pgwi_pq_one_line(char *dst, size_t size, const char *src);

/* Fills err with PGW_ECONN and libpq's connection error text. */
int pgwi_pq_conn_error(pgw_error *err, PGconn *conn, const char *what);

/* The library schema's name: s, or PGW_PQ_DEFAULT_SCHEMA when NULL. */
const char *pgwi_pq_schema(const char *s);

/* A quoted identifier (PQescapeIdentifier) copied into our allocator;
 * free with pgwi_free. "a"."b" when schema is given. */
char *pgwi_pq_ident(PGconn *conn, const char *schema, const char *name, pgw_error *err);

/* An embedded SQL text with every :"schema" replaced by the library schema
 * quoted as an identifier and every :'schema' by it quoted as a literal
 * (the psql variable syntax the .sql files use). pgwi_free. */
char *pgwi_pq_sql(PGconn *conn, const char *tmpl, const char *pgw_schema, pgw_error *err);

/* Runs a parameterised statement; returns the result when it succeeded
 * (COMMAND_OK or TUPLES_OK), else NULL with err filled (PQclear done). */
PGresult *pgwi_pq_exec(PGconn *conn, const char *sql, int nparams, const char *const *params,
                       const char *what, pgw_error *err);

/* Runs one or more statements without parameters (simple query protocol)
 * and collects every result; returns PGW_OK when all succeeded. The last
 * tuple-returning result is handed back in *last (PQclear it) when last is
 * non-NULL. */
int pgwi_pq_run(PGconn *conn, const char *sql, PGresult **last, const char *what,
                pgw_error *err);

/* Checks a NOTIFY channel name: 1..63 bytes of UTF-8 (an identifier). */
int pgwi_pq_check_channel(const char *channel, pgw_error *err);

/* True when a failed result means "the table/schema does not exist"
 * (SQLSTATE 42P01 undefined_table or 3F000 invalid_schema_name). */
bool pgwi_pq_missing_relation(const pgw_error *err);

/* Turns a missing-relation failure on the library's own tables into
 * PGW_ENOTFOUND with a message saying to install the schema. */
int pgwi_pq_not_installed(pgw_error *err, const char *pgw_schema);

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

#endif /* PGWITNESS_PQ_INTERNAL_H */
