/*
 * lib/core/json.h — strict JSON reading and canonical writing on top of
 * jansson, shared by every codec of the core (snapshot, diff, drift,
 * dependencies, write sets, verdicts, notification payloads).
 *
 * Reading is total: every failure is PGW_EPARSE with a JSON path
 * ("$.columns[3].name") in pgw_error.path and a reason in the message.
 * Paths are built on the stack in fixed buffers (no allocation).
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_JSON_H
#define PGWITNESS_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/* Size of a path buffer; longer paths are cut (still useful for humans). */
#define PGWI_JPATH_SIZE 192

/* Significant digits used when writing reals: every statistic PostgreSQL
 * keeps is float4 (6-9 digits), so 15 digits print them exactly and make
 * encode(decode(text)) == text for canonical documents. */
#define PGWI_JSON_REAL_PRECISION 15

/* Child paths: parent + ".key" (or ["key"] when key is not a plain
 * identifier) and parent + "[i]". */
void pgwi_jpath_key(char out[PGWI_JPATH_SIZE], const char *parent, const char *key);
void pgwi_jpath_index(char out[PGWI_JPATH_SIZE], const char *parent, size_t i);

/* Parses text[0..len) as one JSON value. Rejects: more than max_len bytes
 * (oversized), invalid UTF-8, NUL characters, duplicate object keys, and
 * anything after the value. The error path is "$" and the message carries
 * jansson's reason with line and column. *out is a new reference.
 * An allocation failure is PGW_ENOMEM: jansson reports some as syntax
 * errors and, worse, can return a value with bytes missing from a string;
 * the hook's failure count (pgwi_alloc_failures) catches both. */
int pgwi_json_parse(json_t **out, const char *text, size_t len, size_t max_len,
                    pgw_error *err);

/* Writes a value in canonical form (compact, keys in insertion order, reals
 * with PGWI_JSON_REAL_PRECISION digits) or indented when pretty. The result
 * is allocated through the hook (free with pgwi_free / pgw_free). */
int pgwi_json_dump(char **out, size_t *out_len, const json_t *v, bool pretty, pgw_error *err);

/* Type checks: PGW_EPARSE "expected an object" etc. at path. */
int pgwi_json_object(const json_t *v, const char *path, pgw_error *err);
int pgwi_json_array(const json_t *v, const char *path, pgw_error *err);

/* Fails with PGW_EPARSE at the first key of obj that is not in the
 * NULL-terminated list `allowed` ("unknown key \"x\""). */
int pgwi_json_only_keys(const json_t *obj, const char *path, const char *const *allowed,
                        pgw_error *err);

/* Member access. *out is borrowed from obj. `required` members that are
 * absent fail with "missing key"; optional ones give *out = NULL. A JSON
 * null is returned as the null value (callers decide what null means). */
int pgwi_json_member(const json_t **out, const json_t *obj, const char *key, bool required,
                     const char *path, pgw_error *err);

/* Scalar readers: v must have the right type (path names v itself).
 * Strings are borrowed (valid while v lives); `max_bytes` 0 = unlimited. */
int pgwi_json_string(const char **out, size_t *out_len, const json_t *v, size_t max_bytes,
                     const char *path, pgw_error *err);
int pgwi_json_bool(bool *out, const json_t *v, const char *path, pgw_error *err);
/* An integer within [min, max]. */
int pgwi_json_int(int64_t *out, const json_t *v, int64_t min, int64_t max, const char *path,
                  pgw_error *err);
/* A number (integer or real) within [min, max]; NaN never appears in JSON. */
int pgwi_json_number(double *out, const json_t *v, double min, double max, const char *path,
                     pgw_error *err);

/* Builders that check allocation: they steal `value` (decref on failure)
 * and return PGW_ENOMEM when jansson fails. */
int pgwi_json_set(json_t *obj, const char *key, json_t *value, pgw_error *err);
int pgwi_json_append(json_t *arr, json_t *value, pgw_error *err);
/* A real rounded for output: NaN/inf are refused with PGW_EINVAL. */
json_t *pgwi_json_real(double v);

#endif /* PGWITNESS_JSON_H */
