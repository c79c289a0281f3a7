/*
 * lib/core/inval/payload.c — the notification payload codec (payload.h).
 * SPDX-License-Identifier: MIT
 */
#include "inval_codec.h"
#include "pgwitness/payload.h"

#include <string.h>

/* Payloads larger than this are not even parsed for a table name. */
#define PGWI_PAYLOAD_PARSE_MAX ((size_t)1 << 20)

/* A fallback write set: an unknown write to the table the payload names,
 * or a scope reset. The diagnosis is kept in the write set. */
static int fallback(pgw_write **out, const pgw_scope *scope, const json_t *v, int status,
                    const pgw_error *why, pgw_error *err)
{
    const char *schema = NULL, *table = NULL;
    if (v && json_is_object(v)) {
        const json_t *s = json_object_get(v, "schema"), *t = json_object_get(v, "table");
        if (json_is_string(s) && json_is_string(t) && json_string_length(s) > 0 &&
            json_string_length(t) > 0) {
            schema = json_string_value(s);
            table = json_string_value(t);
        }
    }
    pgw_write *w = NULL;
    int rc;
    if ((rc = pgwi_write_alloc(&w, err)) < 0)
        return rc;
    pgw_error tmp;
    rc = pgwi_write_init(w, scope, schema, table, schema ? PGW_OP_UNKNOWN : PGW_OP_RESET, &tmp);
    if (rc == PGW_ENOMEM) {
        pgw_write_free(w);
        return pgwi_enomem(err);
    }
    if (rc < 0) { /* a bad scope string */
        pgw_write_free(w);
        return pgwi_error(err, rc, "payload_decode: %s", tmp.message);
    }
    size_t n = strlen(why->message);
    char *msg = pgwi_arena_alloc(&w->arena, n + 1);
    if (!msg) {
        pgw_write_free(w);
        return pgwi_enomem(err);
    }
    memcpy(msg, why->message, n + 1);
    w->fallback = status;
    w->fallback_msg = msg;
    *out = w;
    return PGW_OK;
}

/* Reads a faithful payload into *out; otherwise says why in `why`, and in
 * *status whether the payload is malformed (PGW_EPARSE) or of another
 * version (PGW_EVERSION). */
static int read_payload(pgw_write **out, int *status, const json_t *v, size_t len,
                        const pgw_scope *scope, pgw_error *why)
{
    const json_t *ver = json_is_object(v) ? json_object_get(v, "version") : NULL;
    *status = PGW_EPARSE;
    if (!json_is_object(v))
        return pgwi_json_object(v, "$", why);
    if (!ver)
        return pgwi_error_at(why, PGW_EPARSE, "$.version", "$: missing key \"version\"");
    if (!json_is_integer(ver))
        return pgwi_error_at(why, PGW_EPARSE, "$.version", "$.version: expected an integer");
    if (json_integer_value(ver) != PGW_PAYLOAD_VERSION) {
        *status = PGW_EVERSION;
        return pgwi_error_at(why, PGW_EVERSION, "$.version",
                             "$.version: payload version %lld is not %d",
                             (long long)json_integer_value(ver), PGW_PAYLOAD_VERSION);
    }
    if (len > PGW_PAYLOAD_MAX_BYTES)
        return pgwi_error_at(why, PGW_EPARSE, "$", "$: payload of %zu bytes exceeds %d bytes",
                             len, PGW_PAYLOAD_MAX_BYTES);
    pgwi_wdec how = {scope, true, PGW_PAYLOAD_MAX_IDS, PGW_PAYLOAD_MAX_COLUMNS};
    return pgwi_write_from_jobj(out, v, &how, why);
}

int pgw_payload_decode(pgw_write **out, const pgw_scope *scope, const char *payload,
                       size_t len, pgw_error *err)
{
    if (!out)
        return pgwi_error(err, PGW_EINVAL, "payload_decode: out is NULL");
    if (!scope)
        return pgwi_error(err, PGW_EINVAL, "payload_decode: scope is NULL");
    if (!payload && len)
        return pgwi_error(err, PGW_EINVAL, "payload_decode: payload is NULL with %zu bytes",
                          len);
    const char *sp[3] = {scope->project, scope->tenant, scope->database};
    for (int i = 0; i < 3; i++)
        if (sp[i] && !pgwi_utf8_valid(sp[i], strlen(sp[i])))
            return pgwi_error(err, PGW_EINVAL, "payload_decode: a scope string is not valid UTF-8");
    pgw_error why;
    pgw_error_clear(&why);
    json_t *v = NULL;
    pgw_write *w = NULL;
    int status = PGW_EPARSE;
    int rc;
    if ((rc = pgwi_json_parse(&v, payload ? payload : "", len, PGWI_PAYLOAD_PARSE_MAX,
                              &why)) < 0 ||
        (rc = read_payload(&w, &status, v, len, scope, &why)) < 0)
        rc = rc == PGW_ENOMEM ? pgwi_enomem(err) : fallback(&w, scope, v, status, &why, err);
    json_decref(v);
    if (rc < 0)
        return rc;
    *out = w;
    return PGW_OK;
}

int pgw_payload_encode(char **out, size_t *out_len, const pgw_write *w,
                       const pgw_payload_options *opts, pgw_error *err)
{
    static const pgw_payload_options defaults = PGW_PAYLOAD_OPTIONS_INIT;
    if (!out)
        return pgwi_error(err, PGW_EINVAL, "payload_encode: out is NULL");
    if (!w)
        return pgwi_error(err, PGW_EINVAL, "payload_encode: write is NULL");
    if (!opts)
        opts = &defaults;
    if (opts->version != PGW_PAYLOAD_OPTIONS_VERSION)
        return pgwi_error(err, PGW_EINVAL,
                          "payload_encode: options version %u is not %u (use "
                          "PGW_PAYLOAD_OPTIONS_INIT)",
                          opts->version, (unsigned)PGW_PAYLOAD_OPTIONS_VERSION);
    if (opts->max_bytes < 1 || opts->max_bytes > PGW_PAYLOAD_MAX_BYTES ||
        opts->max_ids > PGW_PAYLOAD_MAX_IDS || opts->max_columns > PGW_PAYLOAD_MAX_COLUMNS)
        return pgwi_error(err, PGW_EINVAL,
                          "payload_encode: options out of range (max_bytes 1..%d, max_ids "
                          "0..%d, max_columns 0..%d)",
                          PGW_PAYLOAD_MAX_BYTES, PGW_PAYLOAD_MAX_IDS, PGW_PAYLOAD_MAX_COLUMNS);
    if (w->op == PGW_OP_RESET || w->op == PGW_OP_UNKNOWN)
        return pgwi_error(err, PGW_EINVAL, "payload_encode: a %s has no payload form",
                          pgw_op_name((pgw_op)w->op));
    pgwi_wenc how = {true, false, false, false};
    how.drop_ids = w->ids_known && w->n_ids > opts->max_ids;
    how.drop_cols = w->cols_known && w->n_cols > opts->max_columns;
    for (int rung = 0;; rung++) {
        /* rung 0: as is; 1: no values; 2: no ids; 3: no columns */
        if (rung >= 1)
            how.drop_values = true;
        if (rung >= 2)
            how.drop_ids = how.drop_ids || w->ids_known;
        if (rung >= 3)
            how.drop_cols = how.drop_cols || w->cols_known;
        json_t *o;
        int rc;
        if ((rc = pgwi_write_to_jobj(&o, w, &how, err)) < 0)
            return rc;
        char *text;
        size_t len;
        rc = pgwi_json_dump(&text, &len, o, false, err);
        json_decref(o);
        if (rc < 0)
            return rc;
        if (len <= opts->max_bytes) {
            *out = text;
            if (out_len)
                *out_len = len;
            return PGW_OK;
        }
        pgwi_free(text);
        if (rung == 3)
            return pgwi_error(err, PGW_ELIMIT,
                              "payload_encode: the table-level form of %zu bytes exceeds the "
                              "budget of %zu bytes",
                              len, opts->max_bytes);
    }
}
