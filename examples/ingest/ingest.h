/*
 * examples/ingest/ingest.h — a small collector: loads a CSV file into a
 * table whose columns the CSV header decides, recreating the table through
 * pgwitness's drop funnel when the header changes.
 *
 * This is the host side of the snapshot half: the code a data pipeline
 * already has, with pgw_pq_drop_table() where it used to say DROP TABLE.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGW_EXAMPLE_INGEST_H
#define PGW_EXAMPLE_INGEST_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgwitness/pgwitness-pq.h"

/** What one ingest did. */
typedef struct ingest_result {
    size_t columns;          /* columns in the CSV header */
    size_t truncated;        /* of them, names cut to 63 bytes (as PostgreSQL cuts them) */
    size_t rows;             /* rows loaded */
    bool existed;            /* the table existed before */
    bool recreated;          /* its header differed: dropped through the funnel */
    size_t old_columns;      /* columns of the table it replaced */
    pgw_pq_drop_result drop; /* the funnel's report, when recreated */
    char types[512];         /* the column types, "integer,numeric,text,...": inferred
                              * for a new table, the existing ones otherwise */
} ingest_result;

/**
 * Loads `csv_path` into `schema`.`table` in one transaction:
 *   - the file is read as pandas.read_csv() reads it by default
 *     (csvread.h): a leading UTF-8 byte order mark is dropped, lines end
 *     with "\n", "\r\n" or "\r" (the last one needs none), blank lines
 *     are skipped wherever they are, and a quoted field may hold
 *     delimiters, line ends and "" for a quote; it must be UTF-8 without
 *     NUL bytes;
 *   - the first line that is not blank is the header: it decides the
 *     columns, in order, named as pandas names them (an empty name is
 *     "Unnamed: I", I its 0-based position, so a header ending with a
 *     delimiter has one more column; a repeated name becomes name.1,
 *     name.2, ...); at most 1600 columns; a name longer than 63 bytes is
 *     cut to 63 on a character boundary, as PostgreSQL truncates an
 *     identifier (counted in out->truncated), and two names that are the
 *     same once cut are refused;
 *   - a row with fewer fields than the header has NULL for the ones it
 *     lacks (pandas' NaN); a row with more is refused, naming its line (as
 *     pandas refuses it), so that no value is dropped;
 *   - the values pandas reads as missing by default are NULL, quoted or
 *     not: the empty field, NA, NaN, nan, -NaN, -nan, N/A, n/a, NULL,
 *     null, None, <NA>, #N/A, #N/A N/A, #NA, 1.#IND, -1.#IND, 1.#QNAN,
 *     -1.#QNAN (csvread_is_na);
 *   - anything wrong with the file is refused before the database is
 *     touched;
 *   - a new table's column types are inferred from its values: integer
 *     (every value a whole number within bigint's range), numeric (every
 *     value a decimal number), else text; a column without a value (all
 *     missing, or no rows) is text;
 *   - if the table exists with other columns, it is dropped through the
 *     funnel (reason schema_mismatch_recreate, resource `resource`) and
 *     created anew; with the same columns (the collector's usual case) it
 *     is emptied and refilled, each value cast to its column's existing
 *     type — a value that no longer fits fails the load with a message
 *     naming the column;
 *   - the table is ANALYZEd, so its pg_stats describe it.
 * A failure rolls everything back, the drop and its snapshot included.
 *
 * @return PGW_OK or a PGW_E* code with err filled (PGW_EINVAL for a bad
 *         name or a value that no longer fits, PGW_ENOTFOUND for a file
 *         that cannot be read, PGW_EPARSE for a bad file: its header, or a
 *         row, named by its line); *out on success.
 */
int ingest_csv(ingest_result *out, PGconn *conn, const char *csv_path, const char *schema,
               const char *table, const char *resource, const char *pgw_schema,
               pgw_error *err);

#endif
