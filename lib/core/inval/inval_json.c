/*
 * lib/core/inval/inval_json.c — JSON forms of dependencies, write sets and
 * verdicts (inval_json.h; docs/wire.md). SPDX-License-Identifier: MIT
 */
#include "inval_codec.h"
#include "pgwitness/inval_json.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* helpers                                                             */

/* Turns a builder's PGW_EINVAL/PGW_EEXISTS into PGW_EPARSE at path. */
static int as_parse(int rc, const pgw_error *tmp, const char *path, pgw_error *err)
{
    if (rc == PGW_ENOMEM)
        return pgwi_enomem(err);
    if (rc < 0) {
        const char *m = tmp->message;
        const char *c = strstr(m, ": ");
        if (c && (size_t)(c - m) < 32 && !memchr(m, ' ', (size_t)(c - m)))
            m = c + 2; /* drop the builder's "fn: " prefix */
        return pgwi_error_at(err, PGW_EPARSE, path, "%s: %s", path, m);
    }
    return PGW_OK;
}

static json_t *jstr(const pgwi_str *s)
{
    return s ? json_stringn(s->s, s->len) : json_null();
}

static json_t *jrid(const pgwi_rid *r)
{
    if (r->n_parts == 1)
        return json_string(r->parts[0]);
    json_t *a = json_array();
    if (!a)
        return NULL;
    for (uint32_t k = 0; k < r->n_parts; k++)
        if (json_array_append_new(a, json_string(r->parts[k])) < 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static int jrids(json_t **out, const pgwi_rid *r, uint32_t n, pgw_error *err)
{
    json_t *a = json_array();
    int rc;
    if (!a)
        return pgwi_enomem(err);
    for (uint32_t i = 0; i < n; i++)
        if ((rc = pgwi_json_append(a, jrid(&r[i]), err)) < 0) {
            json_decref(a);
            return rc;
        }
    *out = a;
    return PGW_OK;
}

static int jnames(json_t **out, const pgwi_str *const *names, uint32_t n, pgw_error *err)
{
    json_t *a = json_array();
    int rc;
    if (!a)
        return pgwi_enomem(err);
    for (uint32_t i = 0; i < n; i++)
        if ((rc = pgwi_json_append(a, jstr(names[i]), err)) < 0) {
            json_decref(a);
            return rc;
        }
    *out = a;
    return PGW_OK;
}

static int jscope(json_t **out, const pgwi_scope *s, pgw_error *err)
{
    json_t *o = json_object();
    int rc;
    if (!o)
        return pgwi_enomem(err);
    if ((rc = pgwi_json_set(o, "project", jstr(s->project), err)) < 0 ||
        (rc = pgwi_json_set(o, "tenant", jstr(s->tenant), err)) < 0 ||
        (rc = pgwi_json_set(o, "database", jstr(s->database), err)) < 0) {
        json_decref(o);
        return rc;
    }
    *out = o;
    return PGW_OK;
}

static int dump(char **out, size_t *out_len, json_t *v, pgw_error *err)
{
    int rc = pgwi_json_dump(out, out_len, v, false, err);
    json_decref(v);
    return rc;
}

int pgwi_scope_from_jobj(pgw_scope *out, const json_t *v, const char *path, pgw_error *err)
{
    pgw_scope s = {NULL, NULL, NULL};
    const pgwi_jfield f[] = {
        PGWI_JF_STRING("project", &s.project, PGWI_JF_OPTIONAL | PGWI_JF_NULLABLE),
        PGWI_JF_STRING("tenant", &s.tenant, PGWI_JF_OPTIONAL | PGWI_JF_NULLABLE),
        PGWI_JF_STRING("database", &s.database, PGWI_JF_OPTIONAL | PGWI_JF_NULLABLE),
    };
    int rc;
    if ((rc = pgwi_json_read_fields(v, path, f, PGWI_NFIELDS(f), 0, err)) < 0)
        return rc;
    *out = s;
    return PGW_OK;
}

pgw_op pgwi_op_from_name(const char *s)
{
    for (int op = PGW_OP_INSERT; op <= PGW_OP_DDL; op++)
        if (strcmp(pgw_op_name((pgw_op)op), s) == 0)
            return (pgw_op)op;
    return (pgw_op)0;
}

/* Reads an array of names into a temporary array (free with pgwi_free). */
static int read_names(const char ***out, size_t *n_out, const json_t *v, const char *path,
                      size_t max, pgw_error *err)
{
    int rc;
    if ((rc = pgwi_json_array(v, path, err)) < 0)
        return rc;
    size_t n = json_array_size(v);
    if (max && n > max)
        return pgwi_error_at(err, PGW_EPARSE, path, "%s: %zu entries exceed the limit of %zu",
                             path, n, max);
    const char **names = NULL;
    if (n && !(names = pgwi_calloc(n, sizeof *names)))
        return pgwi_enomem(err);
    for (size_t i = 0; i < n; i++) {
        char p[PGWI_JPATH_SIZE];
        pgwi_jpath_index(p, path, i);
        if ((rc = pgwi_json_string(&names[i], NULL, json_array_get(v, i), 0, p, err)) < 0) {
            pgwi_free(names);
            return rc;
        }
    }
    *out = names;
    *n_out = n;
    return PGW_OK;
}

/* Reads an array of row IDs into temporaries (free ids[0].parts base and
 * ids with pgwi_free via free_ids). */
typedef struct idbuf {
    pgw_rowid *ids;
    const char **parts;
    size_t n;
} idbuf;

static void free_ids(idbuf *b)
{
    pgwi_free(b->ids);
    pgwi_free(b->parts);
}

static int read_ids(idbuf *b, const json_t *v, const char *path, size_t max, pgw_error *err)
{
    memset(b, 0, sizeof *b);
    int rc;
    if ((rc = pgwi_json_array(v, path, err)) < 0)
        return rc;
    size_t n = json_array_size(v), total = 0;
    if (max && n > max)
        return pgwi_error_at(err, PGW_EPARSE, path, "%s: %zu row IDs exceed the limit of %zu",
                             path, n, max);
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(v, i);
        char p[PGWI_JPATH_SIZE];
        pgwi_jpath_index(p, path, i);
        if (json_is_string(e)) {
            total++;
            continue;
        }
        if (!json_is_array(e))
            return pgwi_error_at(err, PGW_EPARSE, p,
                                 "%s: a row ID is a string or an array of strings", p);
        size_t k = json_array_size(e);
        if (k == 0 || k > PGW_ROWID_MAX_PARTS)
            return pgwi_error_at(err, PGW_EPARSE, p, "%s: a row ID has 1..%d parts, not %zu", p,
                                 PGW_ROWID_MAX_PARTS, k);
        total += k;
    }
    if (n) {
        b->ids = pgwi_calloc(n, sizeof *b->ids);
        b->parts = pgwi_calloc(total, sizeof *b->parts);
        if (!b->ids || !b->parts) {
            free_ids(b);
            return pgwi_enomem(err);
        }
    }
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(v, i);
        char p[PGWI_JPATH_SIZE];
        pgwi_jpath_index(p, path, i);
        b->ids[i].parts = &b->parts[used];
        if (json_is_string(e)) {
            b->parts[used++] = json_string_value(e);
            b->ids[i].n_parts = 1;
            continue;
        }
        for (size_t k = 0; k < json_array_size(e); k++) {
            char q[PGWI_JPATH_SIZE];
            pgwi_jpath_index(q, p, k);
            if ((rc = pgwi_json_string(&b->parts[used++], NULL, json_array_get(e, k), 0, q,
                                       err)) < 0) {
                free_ids(b);
                return rc;
            }
        }
        b->ids[i].n_parts = json_array_size(e);
    }
    b->n = n;
    return PGW_OK;
}

/* ------------------------------------------------------------------ */
/* dependencies                                                        */

/* The filter ops' names, from PGW_FILTER_EQ on. */
static const char *const filter_ops[] = {"eq", "in", "opaque", "range", NULL};
static const char *const result_kinds[] = {"list", "aggregate", NULL};

/* The bounds of a range filter at path (op "range"): "type", "lower" and
 * "upper" (strings, or null or absent for none), "lower_inclusive" and
 * "upper_inclusive" (booleans, required with their bound, refused
 * without it). */
static int read_range(pgw_deps *d, size_t t, const char *column, const json_t *f,
                      const char *path, pgw_error *err)
{
    int type = 0;
    const char *lo = NULL, *hi = NULL;
    bool lo_in = false, hi_in = false, has_lo = false, has_hi = false, has_loi = false,
         has_hii = false;
    pgwi_jfield rows[] = {
        PGWI_JF_ENUM("type", &type, pgwi_cmp_type_names, 0),
        PGWI_JF_STRING("lower", &lo, PGWI_JF_OPTIONAL | PGWI_JF_NULLABLE),
        PGWI_JF_BOOL("lower_inclusive", &lo_in, PGWI_JF_OPTIONAL),
        PGWI_JF_STRING("upper", &hi, PGWI_JF_OPTIONAL | PGWI_JF_NULLABLE),
        PGWI_JF_BOOL("upper_inclusive", &hi_in, PGWI_JF_OPTIONAL),
    };
    rows[1].present = &has_lo;
    rows[2].present = &has_loi;
    rows[3].present = &has_hi;
    rows[4].present = &has_hii;
    int rc;
    if ((rc = pgwi_json_read_fields(f, path, rows, PGWI_NFIELDS(rows), PGWI_JSON_SUBSET,
                                    err)) < 0)
        return rc;
    for (int s = 0; s < 2; s++) {
        bool has = s ? has_hi : has_lo, inc = s ? has_hii : has_loi;
        const char *side = s ? "upper" : "lower";
        char p[PGWI_JPATH_SIZE], k[32];
        snprintf(k, sizeof k, "%s_inclusive", side);
        pgwi_jpath_key(p, path, k);
        if (has && !inc)
            return pgwi_error_at(err, PGW_EPARSE, p,
                                 "%s: missing key \"%s\" (a bound says whether it is included)",
                                 path, k);
        if (!has && inc)
            return pgwi_error_at(err, PGW_EPARSE, p, "%s: \"%s\" without \"%s\"", path, k,
                                 side);
    }
    pgw_bound lb = {has_lo ? (lo_in ? PGW_BOUND_INCLUSIVE : PGW_BOUND_EXCLUSIVE)
                           : PGW_BOUND_NONE,
                    lo};
    pgw_bound ub = {has_hi ? (hi_in ? PGW_BOUND_INCLUSIVE : PGW_BOUND_EXCLUSIVE)
                           : PGW_BOUND_NONE,
                    hi};
    pgw_error tmp;
    rc = pgw_deps_add_range(d, t, column, (pgw_cmp_type)(PGW_CMP_INT + type), &lb, &ub, &tmp);
    return as_parse(rc, &tmp, path, err);
}

static int read_filter(pgw_deps *d, size_t t, const json_t *f, const char *path,
                       pgw_error *err)
{
    const char *column;
    int op;
    const json_t *vals = NULL;
    /* A range's own keys, read by read_range() and refused for other ops. */
    const json_t *rk[5] = {NULL};
    const pgwi_jfield rows[] = {
        PGWI_JF_STRING("column", &column, 0),
        PGWI_JF_ENUM("op", &op, filter_ops, 0),
        PGWI_JF_VALUE("values", &vals, PGWI_JF_OPTIONAL | PGWI_JF_NULLABLE),
        PGWI_JF_VALUE("type", &rk[0], PGWI_JF_OPTIONAL | PGWI_JF_NULLABLE),
        PGWI_JF_VALUE("lower", &rk[1], PGWI_JF_OPTIONAL | PGWI_JF_NULLABLE),
        PGWI_JF_VALUE("lower_inclusive", &rk[2], PGWI_JF_OPTIONAL | PGWI_JF_NULLABLE),
        PGWI_JF_VALUE("upper", &rk[3], PGWI_JF_OPTIONAL | PGWI_JF_NULLABLE),
        PGWI_JF_VALUE("upper_inclusive", &rk[4], PGWI_JF_OPTIONAL | PGWI_JF_NULLABLE),
    };
    int rc;
    if ((rc = pgwi_json_read_fields(f, path, rows, PGWI_NFIELDS(rows), PGWI_JSON_KEYS_FIRST,
                                    err)) < 0)
        return rc;
    if (PGW_FILTER_EQ + op == PGW_FILTER_RANGE) {
        if (json_object_get(f, "values")) { /* null too: a range has no values at all */
            char pv[PGWI_JPATH_SIZE];
            pgwi_jpath_key(pv, path, "values");
            return pgwi_error_at(err, PGW_EPARSE, pv,
                                 "%s: a range has \"lower\" and \"upper\", not values", pv);
        }
        return read_range(d, t, column, f, path, err);
    }
    for (size_t i = 3; i < PGWI_NFIELDS(rows); i++)
        if (json_object_get(f, rows[i].key)) {
            char pk[PGWI_JPATH_SIZE];
            pgwi_jpath_key(pk, path, rows[i].key);
            return pgwi_error_at(err, PGW_EPARSE, pk, "%s: only a range has \"%s\"", pk,
                                 rows[i].key);
        }
    const char **names = NULL;
    size_t n = 0;
    if (vals) {
        char pv[PGWI_JPATH_SIZE];
        pgwi_jpath_key(pv, path, "values");
        /* values may not hold null: check before the generic reader. */
        if (json_is_array(vals))
            for (size_t i = 0; i < json_array_size(vals); i++)
                if (json_is_null(json_array_get(vals, i))) {
                    char p[PGWI_JPATH_SIZE];
                    pgwi_jpath_index(p, pv, i);
                    return pgwi_error_at(err, PGW_EPARSE, p,
                                         "%s: null is not a value (SQL = never matches NULL; "
                                         "declare IS NULL as opaque)",
                                         p);
                }
        if ((rc = read_names(&names, &n, vals, pv, 0, err)) < 0)
            return rc;
    }
    pgw_error tmp;
    rc = pgw_deps_add_filter(d, t, column, (pgw_filter_op)(PGW_FILTER_EQ + op),
                             vals ? (names ? names : &column) : NULL, n, &tmp);
    pgwi_free(names);
    return as_parse(rc, &tmp, path, err);
}

/* Whether an order_by array holds a sort key written as an object. */
static bool has_key_objects(const json_t *om)
{
    for (size_t i = 0; json_is_array(om) && i < json_array_size(om); i++)
        if (json_is_object(json_array_get(om, i)))
            return true;
    return false;
}

/* An order_by array with sort keys written as objects ({"column", "type",
 * "descending", "nulls_first"}) or names, at path. */
static int read_sort_keys(pgw_deps *d, size_t t, const json_t *om, const char *path,
                          pgw_error *err)
{
    size_t n = json_array_size(om);
    pgw_sort_key *keys = pgwi_malloc((n ? n : 1) * sizeof *keys);
    if (!keys)
        return pgwi_enomem(err);
    int rc;
    pgw_error tmp;
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(om, i);
        char p[PGWI_JPATH_SIZE];
        pgwi_jpath_index(p, path, i);
        pgw_sort_key k = {NULL, (pgw_cmp_type)0, false, false};
        if (json_is_string(e)) {
            k.column = json_string_value(e);
            keys[i] = k;
            continue;
        }
        int type = -1;
        bool has_nf = false;
        pgwi_jfield rows[] = {
            PGWI_JF_STRING("column", &k.column, 0),
            PGWI_JF_ENUM("type", &type, pgwi_cmp_type_names, PGWI_JF_OPTIONAL | PGWI_JF_NULLABLE),
            PGWI_JF_BOOL("descending", &k.descending, PGWI_JF_OPTIONAL),
            PGWI_JF_BOOL("nulls_first", &k.nulls_first, PGWI_JF_OPTIONAL),
        };
        rows[3].present = &has_nf;
        if ((rc = pgwi_json_read_fields(e, p, rows, PGWI_NFIELDS(rows), PGWI_JSON_KEYS_FIRST,
                                        err)) < 0)
            goto done;
        if (type >= 0)
            k.type = (pgw_cmp_type)(PGW_CMP_INT + type);
        if (!has_nf) /* PostgreSQL's default: NULLS FIRST for DESC, LAST for ASC */
            k.nulls_first = k.descending;
        keys[i] = k;
    }
    rc = as_parse(pgw_deps_set_sort_keys(d, t, keys, n, &tmp), &tmp, path, err);
done:
    pgwi_free(keys);
    return rc;
}

/* A window bound of a table at path: m is its value, NULL for none. */
static int read_window(int64_t *out, const json_t *m, int64_t none, const char *path,
                       const char *key, pgw_error *err)
{
    char p[PGWI_JPATH_SIZE];
    *out = none;
    if (!m)
        return PGW_OK;
    pgwi_jpath_key(p, path, key);
    return pgwi_json_int(out, m, 0, INT64_MAX, p, err);
}

static int read_table(pgw_deps *d, const json_t *to, const char *path, pgw_error *err)
{
    const char *schema, *table;
    const json_t *cm = NULL, *fm = NULL, *om = NULL, *lm = NULL, *offm = NULL;
    const pgwi_jfield f[] = {
        PGWI_JF_STRING("schema", &schema, 0),
        PGWI_JF_STRING("table", &table, 0),
        PGWI_JF_VALUE("columns", &cm, PGWI_JF_OPTIONAL),
        PGWI_JF_VALUE("filters", &fm, PGWI_JF_OPTIONAL),
        PGWI_JF_VALUE("order_by", &om, PGWI_JF_OPTIONAL),
        PGWI_JF_VALUE("limit", &lm, PGWI_JF_OPTIONAL | PGWI_JF_NULLABLE),
        PGWI_JF_VALUE("offset", &offm, PGWI_JF_OPTIONAL | PGWI_JF_NULLABLE),
    };
    pgw_error tmp;
    char p[PGWI_JPATH_SIZE];
    const char **names;
    size_t t, n;
    int rc;
    if ((rc = pgwi_json_read_fields(to, path, f, PGWI_NFIELDS(f), PGWI_JSON_KEYS_FIRST,
                                    err)) < 0 ||
        (rc = as_parse(pgw_deps_add_table(&t, d, schema, table, &tmp), &tmp, path, err)) < 0)
        return rc;
    pgwi_jpath_key(p, path, "columns");
    if (cm && !(json_is_string(cm) && strcmp(json_string_value(cm), "*") == 0)) {
        if (json_is_string(cm))
            return pgwi_error_at(err, PGW_EPARSE, p,
                                 "%s: expected \"*\" or an array of column names", p);
        if ((rc = read_names(&names, &n, cm, p, 0, err)) < 0)
            return rc;
        rc = pgw_deps_set_columns(d, t, names ? names : &schema, n, &tmp);
        pgwi_free(names);
        if ((rc = as_parse(rc, &tmp, p, err)) < 0)
            return rc;
    }
    if (fm) {
        pgwi_jpath_key(p, path, "filters");
        if ((rc = pgwi_json_array(fm, p, err)) < 0)
            return rc;
        for (size_t i = 0; i < json_array_size(fm); i++) {
            char q[PGWI_JPATH_SIZE];
            pgwi_jpath_index(q, p, i);
            if ((rc = read_filter(d, t, json_array_get(fm, i), q, err)) < 0)
                return rc;
        }
    }
    if (om && has_key_objects(om)) {
        pgwi_jpath_key(p, path, "order_by");
        if ((rc = read_sort_keys(d, t, om, p, err)) < 0)
            return rc;
    } else if (om) {
        pgwi_jpath_key(p, path, "order_by");
        if ((rc = read_names(&names, &n, om, p, 0, err)) < 0)
            return rc;
        rc = as_parse(pgw_deps_set_order_by(d, t, names, n, &tmp), &tmp, p, err);
        pgwi_free(names);
        if (rc < 0)
            return rc;
    }
    int64_t limit, offset;
    if ((rc = read_window(&limit, lm, -1, path, "limit", err)) < 0 ||
        (rc = read_window(&offset, offm, 0, path, "offset", err)) < 0)
        return rc;
    return as_parse(pgw_deps_set_window(d, t, limit, offset, &tmp), &tmp, path, err);
}

/* Reads "window_bounds" at $.window_bounds into d (its tables declared). */
static int read_bounds(pgw_deps *d, const json_t *bm, pgw_error *err)
{
    const json_t *fm, *lm;
    bool full;
    const pgwi_jfield rows[] = {
        PGWI_JF_VALUE("first", &fm, 0),
        PGWI_JF_VALUE("last", &lm, 0),
        PGWI_JF_BOOL("full", &full, 0),
    };
    int rc;
    if ((rc = pgwi_json_read_fields(bm, "$.window_bounds", rows, PGWI_NFIELDS(rows),
                                    PGWI_JSON_KEYS_FIRST, err)) < 0)
        return rc;
    const json_t *arr[2] = {fm, lm};
    pgw_error tmp;
    if (json_is_null(fm) && json_is_null(lm)) { /* the window holds no row */
        const pgw_window_bounds none = {NULL, NULL, 0, full};
        if (full)
            return pgwi_error_at(err, PGW_EPARSE, "$.window_bounds.full",
                                 "$.window_bounds: a window with no row is not full");
        return as_parse(pgw_deps_set_window_bounds(d, &none, &tmp), &tmp, "$.window_bounds",
                        err);
    }
    size_t n = json_is_array(fm) ? json_array_size(fm) : 0;
    const char **vals = pgwi_malloc((n ? 2 * n : 1) * sizeof *vals);
    if (!vals)
        return pgwi_enomem(err);
    for (int s = 0; s < 2; s++) {
        char p[PGWI_JPATH_SIZE];
        pgwi_jpath_key(p, "$.window_bounds", s ? "last" : "first");
        if ((rc = pgwi_json_array(arr[s], p, err)) < 0)
            goto done;
        if (json_array_size(arr[s]) != n) {
            rc = pgwi_error_at(err, PGW_EPARSE, p, "%s: %zu values, \"first\" has %zu", p,
                               json_array_size(arr[s]), n);
            goto done;
        }
        for (size_t k = 0; k < n; k++) {
            const json_t *v = json_array_get(arr[s], k);
            char q[PGWI_JPATH_SIZE];
            pgwi_jpath_index(q, p, k);
            vals[s * n + k] = NULL;
            if (!json_is_null(v) &&
                (rc = pgwi_json_string(&vals[s * n + k], NULL, v, 0, q, err)) < 0)
                goto done;
        }
    }
    pgw_window_bounds b = {vals, vals + n, n, full};
    rc = as_parse(pgw_deps_set_window_bounds(d, &b, &tmp), &tmp, "$.window_bounds", err);
done:
    pgwi_free(vals);
    return rc;
}

static int deps_from_jobj(pgw_deps **out, const json_t *v, pgw_error *err)
{
    const json_t *sm, *qm, *tm = NULL, *rm = NULL, *um = NULL, *cm = NULL, *bm = NULL;
    int kind = -1;
    const pgwi_jfield f[] = {
        PGWI_JF_VALUE("scope", &sm, 0),
        PGWI_JF_VALUE("query", &qm, 0),
        PGWI_JF_VALUE("tables", &tm, PGWI_JF_OPTIONAL),
        PGWI_JF_ENUM("result", &kind, result_kinds, PGWI_JF_OPTIONAL),
        PGWI_JF_VALUE("result_ids", &rm, PGWI_JF_OPTIONAL),
        PGWI_JF_VALUE("window_bounds", &bm, PGWI_JF_OPTIONAL | PGWI_JF_NULLABLE),
        PGWI_JF_VALUE("undeclared", &um, PGWI_JF_OPTIONAL),
        PGWI_JF_VALUE("time_dependent", &cm, PGWI_JF_OPTIONAL),
    };
    pgw_scope scope;
    const char *query;
    bool undeclared = false, timed = false;
    int rc;
    if ((rc = pgwi_json_read_fields(v, "$", f, PGWI_NFIELDS(f), 0, err)) < 0 ||
        (rc = pgwi_scope_from_jobj(&scope, sm, "$.scope", err)) < 0 ||
        (rc = pgwi_json_string(&query, NULL, qm, 0, "$.query", err)) < 0)
        return rc;
    if (um && (rc = pgwi_json_bool(&undeclared, um, "$.undeclared", err)) < 0)
        return rc;
    if (cm && (rc = pgwi_json_bool(&timed, cm, "$.time_dependent", err)) < 0)
        return rc;
    if (undeclared && tm)
        return pgwi_error_at(err, PGW_EPARSE, "$.tables",
                             "$: an undeclared subscription has no \"tables\"");
    if (undeclared && rm)
        return pgwi_error_at(err, PGW_EPARSE, "$.result_ids",
                             "$: an undeclared subscription has no \"result_ids\"");
    if (!undeclared && !tm)
        return pgwi_error_at(err, PGW_EPARSE, "$.tables",
                             "$: missing key \"tables\" (or \"undeclared\": true)");
    if (tm) {
        if ((rc = pgwi_json_array(tm, "$.tables", err)) < 0)
            return rc;
        if (json_array_size(tm) == 0)
            return pgwi_error_at(err, PGW_EPARSE, "$.tables",
                                 "$.tables: empty (a subscription without tables is "
                                 "\"undeclared\": true)");
    }
    pgw_deps *d = NULL;
    pgw_error tmp;
    if ((rc = as_parse(pgw_deps_new(&d, &scope, query, &tmp), &tmp, "$", err)) < 0)
        goto fail;
    for (size_t i = 0; tm && i < json_array_size(tm); i++) {
        char p[PGWI_JPATH_SIZE];
        pgwi_jpath_index(p, "$.tables", i);
        if ((rc = read_table(d, json_array_get(tm, i), p, err)) < 0)
            goto fail;
    }
    if (rm && !json_is_null(rm)) {
        idbuf b;
        if ((rc = read_ids(&b, rm, "$.result_ids", 0, err)) < 0)
            goto fail;
        rc = as_parse(pgw_deps_set_result_ids(d, b.ids, b.n, &tmp), &tmp, "$.result_ids", err);
        free_ids(&b);
        if (rc < 0)
            goto fail;
    }
    if (kind >= 0 && undeclared) {
        rc = pgwi_error_at(err, PGW_EPARSE, "$.result",
                           "$: an undeclared subscription has no \"result\"");
        goto fail;
    }
    if (kind >= 0)
        d->result_kind = (uint8_t)(PGW_RESULT_LIST + kind);
    if (bm && undeclared) {
        rc = pgwi_error_at(err, PGW_EPARSE, "$.window_bounds",
                           "$: an undeclared subscription has no \"window_bounds\"");
        goto fail;
    }
    if (bm && (rc = read_bounds(d, bm, err)) < 0)
        goto fail;
    d->time_dependent = timed;
    *out = d;
    return PGW_OK;
fail:
    pgw_deps_free(d);
    return rc;
}

int pgw_deps_from_json(pgw_deps **out, const char *json, size_t len, pgw_error *err)
{
    if (!out || !json)
        return pgwi_error(err, PGW_EINVAL, "deps_from_json: %s is NULL", out ? "json" : "out");
    json_t *v;
    int rc;
    if ((rc = pgwi_json_parse(&v, json, len, PGW_INVAL_JSON_MAX_BYTES, err)) < 0)
        return rc;
    rc = deps_from_jobj(out, v, err);
    json_decref(v);
    return rc;
}

/* The keys of a range filter after "column" and "op": "type", then each
 * present bound and whether it is included. */
static int jrange(json_t *fo, const pgwi_filter *f, pgw_error *err)
{
    int rc;
    if ((rc = pgwi_json_set(fo, "type", json_string(pgwi_cmp_type_names[f->cmp - PGW_CMP_INT]), err)) < 0)
        return rc;
    for (int s = 0; s < 2; s++) {
        uint8_t kind = s ? f->hi : f->lo;
        if (kind == PGW_BOUND_NONE)
            continue;
        if ((rc = pgwi_json_set(fo, s ? "upper" : "lower", jstr(f->vals[s]), err)) < 0 ||
            (rc = pgwi_json_set(fo, s ? "upper_inclusive" : "lower_inclusive",
                                json_boolean(kind == PGW_BOUND_INCLUSIVE), err)) < 0)
            return rc;
    }
    return PGW_OK;
}

/* A table's order_by: each key a name when it has no comparison type and
 * sorts ASC NULLS LAST, else {"column", "type", "descending",
 * "nulls_first"}. */
static int jsort(json_t **out, const pgwi_tdep *t, pgw_error *err)
{
    json_t *a = json_array();
    int rc;
    if (!a)
        return pgwi_enomem(err);
    for (uint32_t k = 0; k < t->n_sort; k++) {
        uint8_t kf = t->sort_kf ? t->sort_kf[k] : 0;
        if (kf == 0) {
            if ((rc = pgwi_json_append(a, jstr(t->sort[k]), err)) < 0)
                goto fail;
            continue;
        }
        json_t *ko = json_object();
        int ty = kf & PGWI_SORT_TYPE;
        if ((rc = pgwi_json_append(a, ko, err)) < 0 ||
            (rc = pgwi_json_set(ko, "column", jstr(t->sort[k]), err)) < 0 ||
            (rc = pgwi_json_set(ko, "type",
                                ty ? json_string(pgwi_cmp_type_names[ty - PGW_CMP_INT]) : json_null(),
                                err)) < 0 ||
            (rc = pgwi_json_set(ko, "descending", json_boolean(kf & PGWI_SORT_DESC), err)) < 0 ||
            (rc = pgwi_json_set(ko, "nulls_first", json_boolean(kf & PGWI_SORT_NULLS_FIRST),
                                err)) < 0)
            goto fail;
    }
    *out = a;
    return PGW_OK;
fail:
    json_decref(a);
    return rc;
}

static int jtable(json_t **out, const pgwi_tdep *t, pgw_error *err)
{
    json_t *o = json_object(), *a, *fs;
    int rc;
    if (!o)
        return pgwi_enomem(err);
    if ((rc = pgwi_json_set(o, "schema", jstr(t->schema), err)) < 0 ||
        (rc = pgwi_json_set(o, "table", jstr(t->table), err)) < 0)
        goto fail;
    if (t->all_cols)
        a = json_string("*");
    else if ((rc = jnames(&a, t->cols, t->n_cols, err)) < 0)
        goto fail;
    if ((rc = pgwi_json_set(o, "columns", a, err)) < 0)
        goto fail;
    fs = json_array();
    if ((rc = pgwi_json_set(o, "filters", fs, err)) < 0)
        goto fail;
    for (uint32_t i = 0; i < t->n_filters; i++) {
        const pgwi_filter *f = &t->filters[i];
        json_t *fo = json_object();
        if ((rc = pgwi_json_append(fs, fo, err)) < 0 ||
            (rc = pgwi_json_set(fo, "column", jstr(f->col), err)) < 0 ||
            (rc = pgwi_json_set(fo, "op", json_string(filter_ops[f->op - PGW_FILTER_EQ]),
                                err)) < 0)
            goto fail;
        if (f->op == PGW_FILTER_OPAQUE)
            continue;
        if (f->op == PGW_FILTER_RANGE) {
            if ((rc = jrange(fo, f, err)) < 0)
                goto fail;
            continue;
        }
        a = json_null();
        if (f->vals_known && (rc = jnames(&a, f->vals, f->n_vals, err)) < 0)
            goto fail;
        if ((rc = pgwi_json_set(fo, "values", a, err)) < 0)
            goto fail;
    }
    if ((rc = jsort(&a, t, err)) < 0 || (rc = pgwi_json_set(o, "order_by", a, err)) < 0 ||
        (rc = pgwi_json_set(o, "limit", t->limit >= 0 ? json_integer(t->limit) : json_null(),
                            err)) < 0 ||
        (rc = pgwi_json_set(o, "offset", json_integer(t->offset), err)) < 0)
        goto fail;
    *out = o;
    return PGW_OK;
fail:
    json_decref(o);
    return rc;
}

/* Ends a declaration's object with its last key, `time_dependent` (only
 * when set), and dumps it (consumes o). */
static int deps_dump(char **out, size_t *out_len, json_t *o, const pgw_deps *d,
                     pgw_error *err)
{
    int rc;
    if (d->time_dependent && (rc = pgwi_json_set(o, "time_dependent", json_true(), err)) < 0) {
        json_decref(o);
        return rc;
    }
    return dump(out, out_len, o, err);
}

/* "window_bounds": {"first": [...], "last": [...], "full": bool}, values
 * strings or null. */
static int jbounds(json_t *o, const pgw_deps *d, pgw_error *err)
{
    json_t *b = json_object();
    int rc;
    if ((rc = pgwi_json_set(o, "window_bounds", b, err)) < 0)
        return rc;
    for (int s = 0; s < 2; s++) {
        json_t *a = d->window_empty ? json_null() : json_array();
        if ((rc = pgwi_json_set(b, s ? "last" : "first", a, err)) < 0)
            return rc;
        const uint32_t n = d->window_empty ? 0 : d->tables[0].n_sort;
        for (uint32_t k = 0; k < n; k++) {
            const pgwi_str *v = d->bounds[s * n + k];
            if ((rc = pgwi_json_append(a, v == &pgwi_sqlnull ? json_null() : jstr(v), err)) < 0)
                return rc;
        }
    }
    return pgwi_json_set(b, "full", json_boolean(d->bounds_full), err);
}

int pgw_deps_to_json(char **out, size_t *out_len, const pgw_deps *d, pgw_error *err)
{
    if (!out || !d)
        return pgwi_error(err, PGW_EINVAL, "deps_to_json: %s is NULL", out ? "deps" : "out");
    json_t *o = json_object(), *a, *ts;
    int rc;
    if (!o)
        return pgwi_enomem(err);
    if ((rc = jscope(&a, &d->scope, err)) < 0 ||
        (rc = pgwi_json_set(o, "scope", a, err)) < 0 ||
        (rc = pgwi_json_set(o, "query", jstr(d->query), err)) < 0)
        goto fail;
    if (d->n_tables == 0) {
        if ((rc = pgwi_json_set(o, "undeclared", json_true(), err)) < 0)
            goto fail;
        return deps_dump(out, out_len, o, d, err);
    }
    ts = json_array();
    if ((rc = pgwi_json_set(o, "tables", ts, err)) < 0)
        goto fail;
    for (uint32_t i = 0; i < d->n_tables; i++)
        if ((rc = jtable(&a, &d->tables[i], err)) < 0 ||
            (rc = pgwi_json_append(ts, a, err)) < 0)
            goto fail;
    if (d->result_kind != PGW_RESULT_UNSPECIFIED &&
        (rc = pgwi_json_set(o, "result",
                            json_string(result_kinds[d->result_kind - PGW_RESULT_LIST]),
                            err)) < 0)
        goto fail;
    a = json_null();
    if (d->rids_known && (rc = jrids(&a, d->rids, d->n_rids, err)) < 0)
        goto fail;
    if ((rc = pgwi_json_set(o, "result_ids", a, err)) < 0)
        goto fail;
    if ((d->bounds || d->window_empty) && (rc = jbounds(o, d, err)) < 0)
        goto fail;
    return deps_dump(out, out_len, o, d, err);
fail:
    json_decref(o);
    return rc;
}

/* ------------------------------------------------------------------ */
/* write sets                                                          */

static int read_rows(pgw_write *w, const json_t *arr, pgw_side side, const char *path,
                     pgw_error *err)
{
    int rc;
    if ((rc = pgwi_json_array(arr, path, err)) < 0)
        return rc;
    if (!w->ids_known)
        return pgwi_error_at(err, PGW_EPARSE, path, "%s: rows need \"ids\"", path);
    if (json_array_size(arr) != w->n_ids)
        return pgwi_error_at(err, PGW_EPARSE, path,
                             "%s: has %zu entries but ids has %u (one entry per ID)", path,
                             json_array_size(arr), (unsigned)w->n_ids);
    if (w->op == PGW_OP_INSERT && side == PGW_SIDE_OLD)
        return pgwi_error_at(err, PGW_EPARSE, path, "%s: an insert has no old rows", path);
    if (w->op == PGW_OP_DELETE && side == PGW_SIDE_NEW)
        return pgwi_error_at(err, PGW_EPARSE, path, "%s: a delete has no new rows", path);
    pgw_error tmp;
    for (size_t i = 0; i < w->n_ids; i++) {
        const json_t *row = json_array_get(arr, i);
        char p[PGWI_JPATH_SIZE];
        pgwi_jpath_index(p, path, i);
        if (json_is_null(row)) {
            if ((rc = as_parse(pgw_write_set_row_absent(w, i, side, &tmp), &tmp, p, err)) < 0)
                return rc;
            continue;
        }
        if ((rc = pgwi_json_object(row, p, err)) < 0)
            return rc;
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)row, key, val) {
            char q[PGWI_JPATH_SIZE];
            pgwi_jpath_key(q, p, key);
            const char *s = NULL;
            if (!json_is_null(val) && (rc = pgwi_json_string(&s, NULL, val, 0, q, err)) < 0)
                return rc;
            if ((rc = as_parse(pgw_write_set_value(w, i, side, key, s, &tmp), &tmp, q, err)) < 0)
                return rc;
        }
    }
    w->has_side[side] = true;
    return PGW_OK;
}

int pgwi_write_from_jobj(pgw_write **out, const json_t *obj, const pgwi_wdec *how,
                         pgw_error *err)
{
    static const char *const keys_json[] = {
        "scope", "schema", "table", "op", "ids", "ids_truncated", "columns",
        "columns_truncated", "old", "new", "pk_changed", NULL};
    static const char *const keys_payload[] = {
        "version", "schema", "table", "op", "ids", "ids_truncated", "columns",
        "columns_truncated", "old", "new", "pk_changed", NULL};
    int rc;
    if ((rc = pgwi_json_object(obj, "$", err)) < 0 ||
        (rc = pgwi_json_only_keys(obj, "$", how->payload ? keys_payload : keys_json, err)) < 0)
        return rc;
    pgw_scope scope;
    if (how->scope) {
        scope = *how->scope;
    } else {
        const json_t *sm;
        if ((rc = pgwi_json_member(&sm, obj, "scope", true, "$", err)) < 0 ||
            (rc = pgwi_scope_from_jobj(&scope, sm, "$.scope", err)) < 0)
            return rc;
    }
    const json_t *opm;
    const char *ops;
    if ((rc = pgwi_json_member(&opm, obj, "op", true, "$", err)) < 0 ||
        (rc = pgwi_json_string(&ops, NULL, opm, 0, "$.op", err)) < 0)
        return rc;
    pgw_op op = pgwi_op_from_name(ops);
    if (!op || (how->payload && (op == PGW_OP_RESET || op == PGW_OP_UNKNOWN)))
        return pgwi_error_at(err, PGW_EPARSE, "$.op",
                             "$.op: \"%.40s\" is not %s", ops,
                             how->payload
                                 ? "insert, update, delete, truncate or ddl"
                                 : "insert, update, delete, truncate, ddl, unknown or reset");
    const bool rows = op == PGW_OP_INSERT || op == PGW_OP_UPDATE || op == PGW_OP_DELETE;
    if (op == PGW_OP_RESET) {
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)obj, key, val) {
            if (strcmp(key, "scope") && strcmp(key, "op")) {
                char p[PGWI_JPATH_SIZE];
                pgwi_jpath_key(p, "$", key);
                return pgwi_error_at(err, PGW_EPARSE, p, "$: a reset has no \"%s\"", key);
            }
        }
    }
    const json_t *im = NULL, *cm = NULL, *om = NULL, *nm = NULL;
    const char *schema = NULL, *table = NULL;
    bool ids_tr = false, cols_tr = false, pk = false;
    const pgwi_jfield f[] = {
        PGWI_JF_STRING("schema", &schema, 0),
        PGWI_JF_STRING("table", &table, 0),
        PGWI_JF_VALUE("ids", &im, PGWI_JF_OPTIONAL | PGWI_JF_NULLABLE),
        PGWI_JF_VALUE("columns", &cm, PGWI_JF_OPTIONAL | PGWI_JF_NULLABLE),
        PGWI_JF_VALUE("old", &om, PGWI_JF_OPTIONAL),
        PGWI_JF_VALUE("new", &nm, PGWI_JF_OPTIONAL),
        PGWI_JF_BOOL("ids_truncated", &ids_tr, PGWI_JF_OPTIONAL),
        PGWI_JF_BOOL("columns_truncated", &cols_tr, PGWI_JF_OPTIONAL),
        PGWI_JF_BOOL("pk_changed", &pk, PGWI_JF_OPTIONAL),
    };
    if (op != PGW_OP_RESET) {
        if ((rc = pgwi_json_read_fields(obj, "$", f, PGWI_NFIELDS(f),
                                        PGWI_JSON_SUBSET | PGWI_JSON_KEYS_FIRST, err)) < 0)
            return rc;
        if (!rows) {
            const char *bad = im ? "ids" : cm ? "columns" : om ? "old" : nm ? "new"
                              : ids_tr ? "ids_truncated" : cols_tr ? "columns_truncated"
                              : pk ? "pk_changed" : NULL;
            if (bad) {
                char p[PGWI_JPATH_SIZE];
                pgwi_jpath_key(p, "$", bad);
                return pgwi_error_at(err, PGW_EPARSE, p, "$: a %s has no \"%s\"", ops, bad);
            }
        }
        if (pk && op != PGW_OP_UPDATE)
            return pgwi_error_at(err, PGW_EPARSE, "$.pk_changed",
                                 "$.pk_changed: only an update changes keys");
    }
    pgw_write *w = NULL;
    pgw_error tmp;
    if ((rc = pgwi_write_alloc(&w, err)) < 0)
        return rc;
    if ((rc = as_parse(pgwi_write_init(w, &scope, schema, table, op, &tmp), &tmp, "$", err)) < 0)
        goto fail;
    w->pk_changed = pk;
    if (im) {
        idbuf b;
        if ((rc = read_ids(&b, im, "$.ids", how->max_ids, err)) < 0)
            goto fail;
        rc = as_parse(pgw_write_set_ids(w, b.ids, b.n, ids_tr, &tmp), &tmp, "$.ids", err);
        free_ids(&b);
        if (rc < 0)
            goto fail;
    }
    w->ids_truncated = ids_tr;
    if (cm) {
        const char **names;
        size_t n;
        if ((rc = read_names(&names, &n, cm, "$.columns", how->max_cols, err)) < 0)
            goto fail;
        rc = as_parse(pgw_write_set_columns(w, names, n, cols_tr, &tmp), &tmp, "$.columns", err);
        pgwi_free(names);
        if (rc < 0)
            goto fail;
    }
    w->cols_truncated = cols_tr;
    if (om && (rc = read_rows(w, om, PGW_SIDE_OLD, "$.old", err)) < 0)
        goto fail;
    if (nm && (rc = read_rows(w, nm, PGW_SIDE_NEW, "$.new", err)) < 0)
        goto fail;
    *out = w;
    return PGW_OK;
fail:
    pgw_write_free(w);
    return rc;
}

static int jrows(json_t **out, const pgw_write *w, int side, pgw_error *err)
{
    json_t *a = json_array();
    int rc;
    if (!a)
        return pgwi_enomem(err);
    for (uint32_t i = 0; i < w->n_ids; i++) {
        if (w->rstate && w->rstate[i * 2 + (uint32_t)side] == PGWI_ROW_ABSENT) {
            if ((rc = pgwi_json_append(a, json_null(), err)) < 0)
                goto fail;
            continue;
        }
        json_t *o = json_object();
        if ((rc = pgwi_json_append(a, o, err)) < 0)
            goto fail;
        for (uint32_t c = 0; w->vals && c < w->n_vcols; c++) {
            const pgwi_str *v = w->vals[(i * 2 + (uint32_t)side) * w->n_vcols + c];
            if (v && (rc = pgwi_json_set(o, w->vcols[c]->s,
                                         v == &pgwi_sqlnull ? json_null() : jstr(v), err)) < 0)
                goto fail;
        }
    }
    *out = a;
    return PGW_OK;
fail:
    json_decref(a);
    return rc;
}

/* The members of a write set after its scope (or version), a reset's
 * aside. */
static int jwrite_members(json_t *o, const pgw_write *w, const pgwi_wenc *how, pgw_error *err)
{
    const bool rows = w->op == PGW_OP_INSERT || w->op == PGW_OP_UPDATE || w->op == PGW_OP_DELETE;
    const bool drop_ids = how->drop_ids && rows;
    const bool drop_cols = how->drop_cols && rows;
    json_t *a;
    int rc;
    if ((rc = pgwi_json_set(o, "schema", jstr(w->schema), err)) < 0 ||
        (rc = pgwi_json_set(o, "table", jstr(w->table), err)) < 0 ||
        (rc = pgwi_json_set(o, "op", json_string(pgw_op_name((pgw_op)w->op)), err)) < 0)
        return rc;
    if (w->op == PGW_OP_DDL)
        return PGW_OK; /* no IDs, columns, values or key change: nothing else */
    a = json_null();
    if (w->ids_known && !drop_ids && (rc = jrids(&a, w->ids, w->n_ids, err)) < 0)
        return rc;
    if ((rc = pgwi_json_set(o, "ids", a, err)) < 0 ||
        (rc = pgwi_json_set(o, "ids_truncated", json_boolean(w->ids_truncated || drop_ids),
                            err)) < 0)
        return rc;
    a = json_null();
    if (w->cols_known && !drop_cols && (rc = jnames(&a, w->cols, w->n_cols, err)) < 0)
        return rc;
    if ((rc = pgwi_json_set(o, "columns", a, err)) < 0 ||
        (rc = pgwi_json_set(o, "columns_truncated", json_boolean(w->cols_truncated || drop_cols),
                            err)) < 0)
        return rc;
    for (int side = 0; side < 2; side++) {
        if (!w->has_side[side] || how->drop_values || drop_ids || !w->ids_known)
            continue;
        if ((rc = jrows(&a, w, side, err)) < 0 ||
            (rc = pgwi_json_set(o, side == 0 ? "old" : "new", a, err)) < 0)
            return rc;
    }
    return pgwi_json_set(o, "pk_changed", json_boolean(w->pk_changed), err);
}

int pgwi_write_to_jobj(json_t **out, const pgw_write *w, const pgwi_wenc *how, pgw_error *err)
{
    json_t *o = json_object(), *s;
    int rc;
    if (!o)
        return pgwi_enomem(err);
    if (how->payload) {
        if ((rc = pgwi_json_set(o, "version", json_integer(1), err)) < 0)
            goto fail;
    } else if ((rc = jscope(&s, &w->scope, err)) < 0 ||
               (rc = pgwi_json_set(o, "scope", s, err)) < 0) {
        goto fail;
    }
    if (w->op == PGW_OP_RESET)
        rc = pgwi_json_set(o, "op", json_string("reset"), err);
    else
        rc = jwrite_members(o, w, how, err);
    if (rc < 0)
        goto fail;
    *out = o;
    return PGW_OK;
fail:
    json_decref(o);
    return rc;
}

int pgw_write_from_json(pgw_write **out, const char *json, size_t len, pgw_error *err)
{
    if (!out || !json)
        return pgwi_error(err, PGW_EINVAL, "write_from_json: %s is NULL", out ? "json" : "out");
    json_t *v;
    int rc;
    if ((rc = pgwi_json_parse(&v, json, len, PGW_INVAL_JSON_MAX_BYTES, err)) < 0)
        return rc;
    pgwi_wdec how = {NULL, false, 0, 0};
    rc = pgwi_write_from_jobj(out, v, &how, err);
    json_decref(v);
    return rc;
}

int pgw_write_to_json(char **out, size_t *out_len, const pgw_write *w, pgw_error *err)
{
    if (!out || !w)
        return pgwi_error(err, PGW_EINVAL, "write_to_json: %s is NULL", out ? "write" : "out");
    pgwi_wenc how = {false, false, false, false};
    json_t *o;
    int rc;
    if ((rc = pgwi_write_to_jobj(&o, w, &how, err)) < 0)
        return rc;
    return dump(out, out_len, o, err);
}

/* ------------------------------------------------------------------ */
/* verdicts                                                            */

int pgw_verdict_from_json(pgw_verdict *out, const char *json, size_t len, pgw_error *err)
{
    if (!out || !json)
        return pgwi_error(err, PGW_EINVAL, "verdict_from_json: %s is NULL",
                          out ? "json" : "out");
    const char *vs, *rs;
    const pgwi_jfield f[] = {
        PGWI_JF_STRING("verdict", &vs, 0),
        PGWI_JF_STRING("reason", &rs, 0),
    };
    pgw_verdict r = {false, PGW_REASON_SCOPE_DISJOINT};
    json_t *v;
    int rc;
    if ((rc = pgwi_json_parse(&v, json, len, 4096, err)) < 0)
        return rc;
    if ((rc = pgwi_json_read_fields(v, "$", f, PGWI_NFIELDS(f), PGWI_JSON_KEYS_FIRST, err)) < 0)
        goto done;
    if (strcmp(vs, "refresh") == 0) {
        r.refresh = true;
    } else if (strcmp(vs, "skip") != 0) {
        rc = pgwi_error_at(err, PGW_EPARSE, "$.verdict",
                           "$.verdict: \"%.40s\" is not refresh or skip", vs);
        goto done;
    }
    if (pgw_reason_from_name(&r.reason, rs) < 0) {
        rc = pgwi_error_at(err, PGW_EPARSE, "$.reason", "$.reason: unknown reason \"%.60s\"",
                           rs);
        goto done;
    }
    if (pgw_reason_refreshes(r.reason) != r.refresh) {
        rc = pgwi_error_at(err, PGW_EPARSE, "$.reason", "$.reason: %s implies %s, not %s", rs,
                           r.refresh ? "skip" : "refresh", vs);
        goto done;
    }
    *out = r;
done:
    json_decref(v);
    return rc;
}

int pgw_verdict_to_json(char **out, size_t *out_len, const pgw_verdict *v, pgw_error *err)
{
    if (!out || !v)
        return pgwi_error(err, PGW_EINVAL, "verdict_to_json: %s is NULL",
                          out ? "verdict" : "out");
    if ((int)v->reason < 0 || (int)v->reason >= PGW_REASON_COUNT)
        return pgwi_error(err, PGW_EINVAL, "verdict_to_json: reason %d is not a pgw_reason",
                          (int)v->reason);
    if (pgw_reason_refreshes(v->reason) != v->refresh) /* what from_json refuses */
        return pgwi_error(err, PGW_EINVAL, "verdict_to_json: %s implies %s, not %s",
                          pgw_reason_name(v->reason), v->refresh ? "skip" : "refresh",
                          v->refresh ? "refresh" : "skip");
    json_t *o = json_object();
    int rc;
    if (!o)
        return pgwi_enomem(err);
    if ((rc = pgwi_json_set(o, "verdict", json_string(v->refresh ? "refresh" : "skip"),
                            err)) < 0 ||
        (rc = pgwi_json_set(o, "reason", json_string(pgw_reason_name(v->reason)), err)) < 0) {
        json_decref(o);
        return rc;
    }
    return dump(out, out_len, o, err);
}
