/*
 * lib/core/inval/inval_codec.h — the write-set ⇄ JSON object mapping shared by the
 * JSON form (inval_json.c) and the notification payload (payload.c).
 * Not installed. SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_INVAL_CODEC_H
#define PGWITNESS_INVAL_CODEC_H

#include "inval_internal.h"
#include "json.h"

/* How a write set is read from a JSON object. */
typedef struct pgwi_wdec {
    const pgw_scope *scope; /* NULL: read the "scope" member */
    bool payload;           /* notification payload: "version" key, no reset/unknown */
    size_t max_ids;         /* 0: unlimited */
    size_t max_cols;        /* 0: unlimited */
} pgwi_wdec;

int pgwi_write_from_jobj(pgw_write **out, const json_t *obj, const pgwi_wdec *how,
                         pgw_error *err);

/* How a write set is written as a JSON object. */
typedef struct pgwi_wenc {
    bool payload;     /* "version" first, no "scope" */
    bool drop_values; /* omit old/new */
    bool drop_ids;    /* "ids": null, "ids_truncated": true (and no values) */
    bool drop_cols;   /* "columns": null, "columns_truncated": true */
} pgwi_wenc;

int pgwi_write_to_jobj(json_t **out, const pgw_write *w, const pgwi_wenc *how, pgw_error *err);

/* Reads a scope object into a view of borrowed strings. */
int pgwi_scope_from_jobj(pgw_scope *out, const json_t *v, const char *path, pgw_error *err);

/* The op named s, or 0. */
pgw_op pgwi_op_from_name(const char *s);

#endif
