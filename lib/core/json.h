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
/* A string that is one of the NULL-terminated `names`: *out is its index.
 * Otherwise "<path>: \"<value>\" is not a, b or c". */
int pgwi_json_enum(int *out, const json_t *v, const char *const *names, const char *path,
                   pgw_error *err);

/* ---- Reading an object's members through a table ----
 *
 * Each row names a member, what it must hold and where it goes; one call
 * reads them all, in row order, with the errors the readers above give at
 * the member's path ("$.from.schema"). Rows are built on the stack, where
 * they can point at locals:
 *
 *     const char *schema;
 *     double score;
 *     const pgwi_jfield f[] = {
 *         PGWI_JF_STRING("schema", &schema, 0),
 *         PGWI_JF_NUMBER("score", &score, 0.0, 1.0, 0),
 *     };
 *     if ((rc = pgwi_json_read_fields(v, path, f, PGWI_NFIELDS(f), 0, err)) < 0)
 *         return rc;
 */
typedef enum pgwi_jkind {
    PGWI_JSON_STRING, /* const char *, borrowed from the document */
    PGWI_JSON_BOOL,   /* bool */
    PGWI_JSON_INT,    /* int64_t within [imin, imax] */
    PGWI_JSON_NUMBER, /* double within [dmin, dmax] */
    PGWI_JSON_ENUM,   /* int: the index of the string in names (pgwi_json_enum) */
    PGWI_JSON_VALUE,  /* const json_t *, borrowed, unchecked: the caller reads it */
} pgwi_jkind;

/* Row flags. A member that is absent (OPTIONAL) or null (NULLABLE) leaves
 * the destination untouched. */
#define PGWI_JF_OPTIONAL 0x1u /* the key may be absent */
#define PGWI_JF_NULLABLE 0x2u /* null is accepted, as no value */
#define PGWI_JF_NONEMPTY 0x4u /* STRING, ENUM: "" fails with "<path>: empty string" */

typedef struct pgwi_jfield {
    const char *key;
    pgwi_jkind kind;
    unsigned flags;           /* PGWI_JF_* */
    void *dst;                /* of the kind's type (the PGWI_JF_ macros check it) */
    bool *present;            /* when set: whether a value was stored */
    int64_t imin, imax;       /* PGWI_JSON_INT */
    double dmin, dmax;        /* PGWI_JSON_NUMBER */
    const char *const *names; /* PGWI_JSON_ENUM */
} pgwi_jfield;

/* Row constructors; a destination of the wrong type is a compiler warning. */
#define PGWI_JF_DST_(type, p) ((void *)(1 ? (p) : (type *)0))
#define PGWI_JF_STRING(k, p, fl) \
    {.key = (k), .kind = PGWI_JSON_STRING, .flags = (fl), .dst = PGWI_JF_DST_(const char *, p)}
#define PGWI_JF_BOOL(k, p, fl) \
    {.key = (k), .kind = PGWI_JSON_BOOL, .flags = (fl), .dst = PGWI_JF_DST_(bool, p)}
#define PGWI_JF_INT(k, p, min, max, fl)                                                        \
    {.key = (k), .kind = PGWI_JSON_INT, .flags = (fl), .dst = PGWI_JF_DST_(int64_t, p),        \
     .imin = (min), .imax = (max)}
#define PGWI_JF_NUMBER(k, p, min, max, fl)                                                     \
    {.key = (k), .kind = PGWI_JSON_NUMBER, .flags = (fl), .dst = PGWI_JF_DST_(double, p),      \
     .dmin = (min), .dmax = (max)}
#define PGWI_JF_ENUM(k, p, nm, fl)                                                             \
    {.key = (k), .kind = PGWI_JSON_ENUM, .flags = (fl), .dst = PGWI_JF_DST_(int, p),           \
     .names = (nm)}
#define PGWI_JF_VALUE(k, p, fl) \
    {.key = (k), .kind = PGWI_JSON_VALUE, .flags = (fl), .dst = PGWI_JF_DST_(const json_t *, p)}
/* A nullable number: *has says whether it held one. */
#define PGWI_JF_INT_OR_NULL(k, p, has, min, max)                                               \
    {.key = (k), .kind = PGWI_JSON_INT, .flags = PGWI_JF_NULLABLE,                            \
     .dst = PGWI_JF_DST_(int64_t, p), .present = (has), .imin = (min), .imax = (max)}
#define PGWI_JF_NUMBER_OR_NULL(k, p, has, min, max)                                            \
    {.key = (k), .kind = PGWI_JSON_NUMBER, .flags = PGWI_JF_NULLABLE,                         \
     .dst = PGWI_JF_DST_(double, p), .present = (has), .dmin = (min), .dmax = (max)}

#define PGWI_NFIELDS(f) (sizeof(f) / sizeof((f)[0]))

/* `how` flags of pgwi_json_read_fields. */
#define PGWI_JSON_SUBSET 0x1u     /* the rows are some of obj's members: the caller has
                                   * checked that obj is an object and its keys */
#define PGWI_JSON_KEYS_FIRST 0x2u /* look every required key up before reading any value,
                                   * so a missing key is reported before a wrong value */

/* Reads the rows of `fields` from obj at path, in order. Unless SUBSET,
 * obj must first be an object with no key outside the rows (the errors of
 * pgwi_json_object and pgwi_json_only_keys). A required member that is
 * absent fails as pgwi_json_member does; a value of the wrong kind, as the
 * kind's reader does. On failure, rows before the failing one may have
 * been stored. */
int pgwi_json_read_fields(const json_t *obj, const char *path, const pgwi_jfield *fields,
                          size_t n_fields, unsigned how, pgw_error *err);

/* Builders that check allocation: they steal `value` (decref on failure)
 * and return PGW_ENOMEM when jansson fails. */
int pgwi_json_set(json_t *obj, const char *key, json_t *value, pgw_error *err);
int pgwi_json_append(json_t *arr, json_t *value, pgw_error *err);
/* A real rounded for output: NaN/inf are refused with PGW_EINVAL. */
json_t *pgwi_json_real(double v);

#endif /* PGWITNESS_JSON_H */
