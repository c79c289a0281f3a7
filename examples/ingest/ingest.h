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
    char types[512];         /* the inferred types, "integer,numeric,text,..." */
} ingest_result;

/**
 * Loads `csv_path` into `schema`.`table` in one transaction:
 *   - the first line is the header: it decides the columns, in order;
 *   - `NA` and empty fields are NULL;
 *   - each column's type is inferred from its values: integer (every value
 *     a whole number within bigint's range), numeric (every value a
 *     decimal number), else text;
 *   - if the table exists with other columns, it is dropped through the
 *     funnel (reason schema_mismatch_recreate, resource `resource`) and
 *     created anew; with the same columns it is emptied and refilled;
 *   - the table is ANALYZEd, so its pg_stats describe it.
 * A failure rolls everything back, the drop and its snapshot included.
 *
 * @return PGW_OK or a PGW_E* code with err filled; *out on success.
 */
int ingest_csv(ingest_result *out, PGconn *conn, const char *csv_path, const char *schema,
               const char *table, const char *resource, const char *pgw_schema,
               pgw_error *err);

#endif
