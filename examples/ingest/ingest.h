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
 *   - the first line is the header: it decides the columns, in order; it
 *     must be UTF-8, with non-empty names of at most 63 bytes, each once
 *     (anything else is refused before the database is touched);
 *   - `NA` and empty fields are NULL;
 *   - a new table's column types are inferred from its values: integer
 *     (every value a whole number within bigint's range), numeric (every
 *     value a decimal number), else text;
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
 *         that cannot be read, PGW_EPARSE for a bad header); *out on
 *         success.
 */
int ingest_csv(ingest_result *out, PGconn *conn, const char *csv_path, const char *schema,
               const char *table, const char *resource, const char *pgw_schema,
               pgw_error *err);

#endif
