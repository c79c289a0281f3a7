/*
 * lib/pq/pq_internal.h — helpers shared by the adapter's units. Not installed.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_PQ_INTERNAL_H
#define PGWITNESS_PQ_INTERNAL_H

#include "internal.h"
#include "pgwitness/pgwitness-pq.h"
#include "pq_sql.h"

/* Fills err from a failed PGresult: PGW_EPG, the SQLSTATE, and the message
 * "<what>: <primary> (DETAIL: <detail>) (HINT: <hint>)" in one line — `what`
 * names the operation; each part is made one line by pgwi_pq_one_line, and
 * the DETAIL and HINT parts are there only when the server sent them; the
 * whole is cut on a UTF-8 boundary. A NULL result (libpq out of memory or
 * connection lost) or a broken connection gives PGW_ECONN with
 * PQerrorMessage(conn). Returns the code, the same with or without err. */
int pgwi_pq_result_error(pgw_error *err, PGconn *conn, const PGresult *res, const char *what);

/* Copies a libpq message into dst[size] as one line: line breaks (and the
 * indentation after them) become "; ", trailing blanks are dropped, the
 * cut falls on a UTF-8 boundary. NULL or empty gives "connection lost". */
void pgwi_pq_one_line(char *dst, size_t size, const char *src);

/* Fills err with PGW_ECONN and libpq's connection error text. */
int pgwi_pq_conn_error(pgw_error *err, PGconn *conn, const char *what);

/* The library schema's name: s, or PGW_PQ_DEFAULT_SCHEMA when NULL. */
const char *pgwi_pq_schema(const char *s);

/* *out = a quoted identifier (PQescapeIdentifier) copied into our
 * allocator, "a"."b" when schema is given; free with pgwi_free. PGW_ECONN
 * when libpq cannot quote (its message in err), PGW_ENOMEM; *out is
 * untouched on failure. */
int pgwi_pq_ident(char **out, PGconn *conn, const char *schema, const char *name,
                  pgw_error *err);

/* *out = an embedded SQL text with every :"schema" replaced by the library
 * schema quoted as an identifier and every :'schema' by it quoted as a
 * literal (the psql variable syntax the .sql files use); pgwi_free.
 * PGW_ECONN or PGW_ENOMEM as pgwi_pq_ident; *out is untouched on failure. */
int pgwi_pq_sql(char **out, PGconn *conn, const char *tmpl, const char *pgw_schema,
                pgw_error *err);
/* *out = text with every `token` replaced by `with`, as is (for the
 * placeholders of a fragment of SQL that the .sql files document);
 * pgwi_free. PGW_ENOMEM. */
int pgwi_pq_replace(char **out, const char *text, const char *token, const char *with,
                    pgw_error *err);

/* The same for n variables: every :"names[i]" becomes values[i] quoted as
 * an identifier, every :'names[i]' it quoted as a literal (names at most
 * 64 bytes). For the statements a replication connection runs, which take
 * no parameters (simple query protocol only). */
int pgwi_pq_sqlv(char **out, PGconn *conn, const char *tmpl, const char *const *names,
                 const char *const *values, size_t n, pgw_error *err);

/* Runs a parameterised statement; *out = its result when it succeeded
 * (COMMAND_OK or TUPLES_OK; PQclear it). Otherwise returns
 * pgwi_pq_result_error's code (PGW_EPG or PGW_ECONN) with err filled, the
 * result cleared and *out untouched. */
int pgwi_pq_exec(PGresult **out, PGconn *conn, const char *sql, int nparams,
                 const char *const *params, const char *what, pgw_error *err);

/* Runs one or more statements without parameters (simple query protocol)
 * and collects every result; returns PGW_OK when all succeeded. The last
 * tuple-returning result is handed back in *last (PQclear it) when last is
 * non-NULL. */
int pgwi_pq_run(PGconn *conn, const char *sql, PGresult **last, const char *what,
                pgw_error *err);

/* Checks a NOTIFY channel name: 1..63 bytes of UTF-8 (an identifier). */
int pgwi_pq_check_channel(const char *channel, pgw_error *err);
/* Runs `fn` (a qualified <schema>.watch_below, migration_004.sql) on the
 * table of OID `relid` (text); adds the relations it changed to *changed
 * (may be NULL). lib/pq/inval/watch.c. */
/* *out: whether <pgw_schema>.<signature> (e.g. "watch_gaps()") exists.
 * lib/pq/inval/watch.c. */
int pgwi_pq_has_function(bool *out, PGconn *conn, const char *pgw_schema, const char *signature,
                         pgw_error *err);
int pgwi_pq_watch_below(int *changed, PGconn *conn, const char *fn, const char *relid,
                        pgw_error *err);

/* True when a failed result means "the table/schema does not exist"
 * (SQLSTATE 42P01 undefined_table or 3F000 invalid_schema_name). */
bool pgwi_pq_missing_relation(const pgw_error *err);

/* Turns a missing-relation failure on the library's own tables into
 * PGW_ENOTFOUND with a message saying to install the schema. */
int pgwi_pq_not_installed(pgw_error *err, const char *pgw_schema);

/* PGW_OK when name is a non-empty UTF-8 string; else PGW_EINVAL naming
 * `what` ("pq_watch_table: schema is NULL or empty"). */
int pgwi_pq_check_name(const char *what, const char *name, pgw_error *err);

/* A unit of work that changes the database: its own transaction when the
 * connection is idle (*own), otherwise a savepoint of the given name in
 * the caller's. pgwi_pq_unit_end() ends it whose status is rc: commits (or
 * releases) after a success, undoes after a failure or a failed commit,
 * keeping the first failure's detail, and returns the final status. */
int pgwi_pq_unit_begin(PGconn *conn, bool *own, const char *savepoint, const char *what,
                       pgw_error *err);
int pgwi_pq_unit_end(PGconn *conn, bool own, int rc, const char *savepoint, const char *what,
                     pgw_error *err);

/* *out = a text[] literal, {"first","items[0]",...}, every element quoted
 * (first may be NULL: items only); pgwi_free. PGW_ENOMEM. */
int pgwi_pq_text_array(char **out, const char *first, const char *const *items, size_t n,
                       pgw_error *err);

#endif /* PGWITNESS_PQ_INTERNAL_H */
