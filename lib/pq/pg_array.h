/*
 * lib/pq/pg_array.h — parsing the one-dimensional array literals PostgreSQL
 * prints (PostgreSQL documentation 8.15.6 "Array Input and Output Syntax"),
 * for the value lists of pg_stats read as anyarray::text. Pure: no libpq.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_PG_ARRAY_H
#define PGWITNESS_PG_ARRAY_H

#include <stddef.h>

#include "internal.h"

/* The elements of an array literal: n NUL-terminated strings that point
 * into one buffer. Free with pgwi_pg_array_free. */
typedef struct pgwi_pg_array {
    size_t n;
    char **items;
    char *buf;
} pgwi_pg_array;

/* Parses lit[0..len): "{a,b,\"c, d\",\"e\\\"f\"}", optionally preceded by
 * dimension decorations ("[0:2]={...}"). Unquoted elements are taken as
 * they are (outer white space trimmed); quoted ones have their backslash
 * escapes undone. Returns PGW_OK; PGW_EPARSE for anything else — a
 * multi-dimensional array, an unquoted NULL element (statistics hold no
 * nulls), a missing brace or quote, trailing text; PGW_ENOMEM. *out is
 * untouched on failure. */
int pgwi_pg_array_parse(pgwi_pg_array *out, const char *lit, size_t len);
void pgwi_pg_array_free(pgwi_pg_array *a);

#endif
