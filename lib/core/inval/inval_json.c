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
    if (rc == PGW_OK)
        return rc;
    if (rc == PGW_ENOMEM)
        return pgwi_enomem(err);
    const char *m = tmp->message;
    const char *c = strstr(m, ": ");
    if (c && (size_t)(c - m) < 32 && !memchr(m, ' ', (size_t)(c - m)))
        m = c + 2; /* drop the builder's "fn: " prefix */
    return pgwi_error_at(err, PGW_EPARSE, path, "%s: %s", path, m);
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
        if (json_array_append_new(a, json_string(r->parts[k])) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static int jrids(json_t **out, const pgwi_rid *r, uint32_t n, pgw_error *err)
{
    json_t *a = json_array();
    if (!a)
        return pgwi_enomem(err);
    for (uint32_t i = 0; i < n; i++) {
        int rc = pgwi_json_append(a, jrid(&r[i]), err);
        if (rc != PGW_OK) {
            json_decref(a);
            return rc;
        }
    }
    *out = a;
    return PGW_OK;
}

static int jnames(json_t **out, const pgwi_str *const *names, uint32_t n, pgw_error *err)
{
    json_t *a = json_array();
    if (!a)
        return pgwi_enomem(err);
    for (uint32_t i = 0; i < n; i++) {
        int rc = pgwi_json_append(a, jstr(names[i]), err);
        if (rc != PGW_OK) {
            json_decref(a);
            return rc;
        }
    }
    *out = a;
    return PGW_OK;
}

static int jscope(json_t **out, const pgwi_scope *s, pgw_error *err)
{
    json_t *o = json_object();
    if (!o)
        return pgwi_enomem(err);
    int rc = pgwi_json_set(o, "project", jstr(s->project), err);
    if (rc == PGW_OK)
        rc = pgwi_json_set(o, "tenant", jstr(s->tenant), err);
    if (rc == PGW_OK)
        rc = pgwi_json_set(o, "database", jstr(s->database), err);
    if (rc != PGW_OK) {
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
    static const char *const keys[] = {"project", "tenant", "database", NULL};
    int rc = pgwi_json_object(v, path, err);
    if (rc == PGW_OK)
        rc = pgwi_json_only_keys(v, path, keys, err);
    if (rc != PGW_OK)
        return rc;
    const char *vals[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++) {
        const json_t *m;
        char p[PGWI_JPATH_SIZE];
        pgwi_jpath_key(p, path, keys[i]);
        rc = pgwi_json_member(&m, v, keys[i], false, path, err);
        if (rc == PGW_OK && m && !json_is_null(m))
            rc = pgwi_json_string(&vals[i], NULL, m, 0, p, err);
        if (rc != PGW_OK)
            return rc;
    }
    out->project = vals[0];
    out->tenant = vals[1];
    out->database = vals[2];
    return PGW_OK;
}

pgw_op pgwi_op_from_name(const char *s)
{
    for (int op = PGW_OP_INSERT; op <= PGW_OP_RESET; op++)
        if (strcmp(pgw_op_name((pgw_op)op), s) == 0)
            return (pgw_op)op;
    return (pgw_op)0;
}

/* Reads an array of names into a temporary array (free with pgwi_free). */
static int read_names(const char ***out, size_t *n_out, const json_t *v, const char *path,
                      size_t max, pgw_error *err)
{
    int rc = pgwi_json_array(v, path, err);
    if (rc != PGW_OK)
        return rc;
    size_t n = json_array_size(v);
    if (max && n > max)
        return pgwi_error_at(err, PGW_EPARSE, path, "%s: %zu entries exceed the limit of %zu",
                             path, n, max);
    const char **names = NULL;
    if (n) {
        names = pgwi_calloc(n, sizeof *names);
        if (!names)
            return pgwi_enomem(err);
    }
    for (size_t i = 0; i < n; i++) {
        char p[PGWI_JPATH_SIZE];
        pgwi_jpath_index(p, path, i);
        rc = pgwi_json_string(&names[i], NULL, json_array_get(v, i), 0, p, err);
        if (rc != PGW_OK) {
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
    int rc = pgwi_json_array(v, path, err);
    if (rc != PGW_OK)
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
            rc = pgwi_json_string(&b->parts[used++], NULL, json_array_get(e, k), 0, q, err);
            if (rc != PGW_OK) {
                free_ids(b);
                return rc;
            }
        }
        b->ids[i].n_parts = json_array_size(e);
    }
    b->n = n;
    return PGW_OK;
}

static int opt_bool(bool *out, const json_t *obj, const char *key, const char *path,
                    pgw_error *err)
{
    const json_t *m;
    char p[PGWI_JPATH_SIZE];
    pgwi_jpath_key(p, path, key);
    int rc = pgwi_json_member(&m, obj, key, false, path, err);
    if (rc == PGW_OK && m)
        rc = pgwi_json_bool(out, m, p, err);
    return rc;
}

/* ------------------------------------------------------------------ */
/* dependencies                                                        */

static int read_filter(pgw_deps *d, size_t t, const json_t *f, const char *path,
                       pgw_error *err)
{
    static const char *const keys[] = {"column", "op", "values", NULL};
    int rc = pgwi_json_object(f, path, err);
    if (rc == PGW_OK)
        rc = pgwi_json_only_keys(f, path, keys, err);
    const json_t *col = NULL, *op = NULL, *vals = NULL;
    if (rc == PGW_OK)
        rc = pgwi_json_member(&col, f, "column", true, path, err);
    if (rc == PGW_OK)
        rc = pgwi_json_member(&op, f, "op", true, path, err);
    if (rc == PGW_OK)
        rc = pgwi_json_member(&vals, f, "values", false, path, err);
    if (rc != PGW_OK)
        return rc;
    char pc[PGWI_JPATH_SIZE], po[PGWI_JPATH_SIZE], pv[PGWI_JPATH_SIZE];
    pgwi_jpath_key(pc, path, "column");
    pgwi_jpath_key(po, path, "op");
    pgwi_jpath_key(pv, path, "values");
    const char *cs, *os;
    rc = pgwi_json_string(&cs, NULL, col, 0, pc, err);
    if (rc == PGW_OK)
        rc = pgwi_json_string(&os, NULL, op, 0, po, err);
    if (rc != PGW_OK)
        return rc;
    pgw_filter_op fop;
    if (strcmp(os, "eq") == 0)
        fop = PGW_FILTER_EQ;
    else if (strcmp(os, "in") == 0)
        fop = PGW_FILTER_IN;
    else if (strcmp(os, "opaque") == 0)
        fop = PGW_FILTER_OPAQUE;
    else
        return pgwi_error_at(err, PGW_EPARSE, po,
                             "%s: \"%.40s\" is not eq, in or opaque", po, os);
    const char **names = NULL;
    size_t n = 0;
    bool have = vals && !json_is_null(vals);
    if (have) {
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
        rc = read_names(&names, &n, vals, pv, 0, err);
        if (rc != PGW_OK)
            return rc;
    }
    pgw_error tmp;
    rc = pgw_deps_add_filter(d, t, cs, fop, have ? (names ? names : (const char **)&cs) : NULL,
                             n, &tmp);
    pgwi_free(names);
    return as_parse(rc, &tmp, path, err);
}

static int read_window(int64_t *out, const json_t *tobj, const char *key, int64_t none,
                       const char *path, pgw_error *err)
{
    const json_t *m;
    char p[PGWI_JPATH_SIZE];
    pgwi_jpath_key(p, path, key);
    *out = none;
    int rc = pgwi_json_member(&m, tobj, key, false, path, err);
    if (rc == PGW_OK && m && !json_is_null(m))
        rc = pgwi_json_int(out, m, 0, INT64_MAX, p, err);
    return rc;
}

static int read_table(pgw_deps *d, const json_t *to, const char *path, pgw_error *err)
{
    static const char *const keys[] = {"schema", "table",  "columns", "filters",
                                       "order_by", "limit", "offset", NULL};
    int rc = pgwi_json_object(to, path, err);
    if (rc == PGW_OK)
        rc = pgwi_json_only_keys(to, path, keys, err);
    const json_t *sm = NULL, *tm = NULL, *cm = NULL, *fm = NULL, *om = NULL;
    if (rc == PGW_OK)
        rc = pgwi_json_member(&sm, to, "schema", true, path, err);
    if (rc == PGW_OK)
        rc = pgwi_json_member(&tm, to, "table", true, path, err);
    if (rc == PGW_OK)
        rc = pgwi_json_member(&cm, to, "columns", false, path, err);
    if (rc == PGW_OK)
        rc = pgwi_json_member(&fm, to, "filters", false, path, err);
    if (rc == PGW_OK)
        rc = pgwi_json_member(&om, to, "order_by", false, path, err);
    if (rc != PGW_OK)
        return rc;
    char p[PGWI_JPATH_SIZE];
    const char *schema, *table;
    pgwi_jpath_key(p, path, "schema");
    rc = pgwi_json_string(&schema, NULL, sm, 0, p, err);
    pgwi_jpath_key(p, path, "table");
    if (rc == PGW_OK)
        rc = pgwi_json_string(&table, NULL, tm, 0, p, err);
    if (rc != PGW_OK)
        return rc;
    pgw_error tmp;
    size_t t;
    rc = as_parse(pgw_deps_add_table(&t, d, schema, table, &tmp), &tmp, path, err);
    if (rc != PGW_OK)
        return rc;
    pgwi_jpath_key(p, path, "columns");
    if (cm && !(json_is_string(cm) && strcmp(json_string_value(cm), "*") == 0)) {
        if (json_is_string(cm))
            return pgwi_error_at(err, PGW_EPARSE, p,
                                 "%s: expected \"*\" or an array of column names", p);
        const char **names;
        size_t n;
        rc = read_names(&names, &n, cm, p, 0, err);
        if (rc != PGW_OK)
            return rc;
        rc = pgw_deps_set_columns(d, t, names ? names : &schema, n, &tmp);
        pgwi_free(names);
        rc = as_parse(rc, &tmp, p, err);
        if (rc != PGW_OK)
            return rc;
    }
    if (fm) {
        pgwi_jpath_key(p, path, "filters");
        rc = pgwi_json_array(fm, p, err);
        for (size_t i = 0; rc == PGW_OK && i < json_array_size(fm); i++) {
            char q[PGWI_JPATH_SIZE];
            pgwi_jpath_index(q, p, i);
            rc = read_filter(d, t, json_array_get(fm, i), q, err);
        }
        if (rc != PGW_OK)
            return rc;
    }
    if (om) {
        pgwi_jpath_key(p, path, "order_by");
        const char **names;
        size_t n;
        rc = read_names(&names, &n, om, p, 0, err);
        if (rc != PGW_OK)
            return rc;
        rc = as_parse(pgw_deps_set_order_by(d, t, names, n, &tmp), &tmp, p, err);
        pgwi_free(names);
        if (rc != PGW_OK)
            return rc;
    }
    int64_t limit, offset;
    rc = read_window(&limit, to, "limit", -1, path, err);
    if (rc == PGW_OK)
        rc = read_window(&offset, to, "offset", 0, path, err);
    if (rc == PGW_OK)
        rc = as_parse(pgw_deps_set_window(d, t, limit, offset, &tmp), &tmp, path, err);
    return rc;
}

static int deps_from_jobj(pgw_deps **out, const json_t *v, pgw_error *err)
{
    static const char *const keys[] = {"scope", "query", "tables", "result_ids", "undeclared",
                                       NULL};
    int rc = pgwi_json_object(v, "$", err);
    if (rc == PGW_OK)
        rc = pgwi_json_only_keys(v, "$", keys, err);
    const json_t *sm = NULL, *qm = NULL, *tm = NULL, *rm = NULL, *um = NULL;
    if (rc == PGW_OK)
        rc = pgwi_json_member(&sm, v, "scope", true, "$", err);
    if (rc == PGW_OK)
        rc = pgwi_json_member(&qm, v, "query", true, "$", err);
    if (rc == PGW_OK)
        rc = pgwi_json_member(&tm, v, "tables", false, "$", err);
    if (rc == PGW_OK)
        rc = pgwi_json_member(&rm, v, "result_ids", false, "$", err);
    if (rc == PGW_OK)
        rc = pgwi_json_member(&um, v, "undeclared", false, "$", err);
    if (rc != PGW_OK)
        return rc;
    pgw_scope scope;
    const char *query;
    bool undeclared = false;
    rc = pgwi_scope_from_jobj(&scope, sm, "$.scope", err);
    if (rc == PGW_OK)
        rc = pgwi_json_string(&query, NULL, qm, 0, "$.query", err);
    if (rc == PGW_OK && um)
        rc = pgwi_json_bool(&undeclared, um, "$.undeclared", err);
    if (rc != PGW_OK)
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
        rc = pgwi_json_array(tm, "$.tables", err);
        if (rc != PGW_OK)
            return rc;
        if (json_array_size(tm) == 0)
            return pgwi_error_at(err, PGW_EPARSE, "$.tables",
                                 "$.tables: empty (a subscription without tables is "
                                 "\"undeclared\": true)");
    }
    pgw_deps *d = NULL;
    pgw_error tmp;
    rc = as_parse(pgw_deps_new(&d, &scope, query, &tmp), &tmp, "$", err);
    for (size_t i = 0; rc == PGW_OK && tm && i < json_array_size(tm); i++) {
        char p[PGWI_JPATH_SIZE];
        pgwi_jpath_index(p, "$.tables", i);
        rc = read_table(d, json_array_get(tm, i), p, err);
    }
    if (rc == PGW_OK && rm && !json_is_null(rm)) {
        idbuf b;
        rc = read_ids(&b, rm, "$.result_ids", 0, err);
        if (rc == PGW_OK) {
            rc = as_parse(pgw_deps_set_result_ids(d, b.ids, b.n, &tmp), &tmp, "$.result_ids",
                          err);
            free_ids(&b);
        }
    }
    if (rc != PGW_OK) {
        pgw_deps_free(d);
        return rc;
    }
    *out = d;
    return PGW_OK;
}

int pgw_deps_from_json(pgw_deps **out, const char *json, size_t len, pgw_error *err)
{
    if (!out || !json)
        return pgwi_error(err, PGW_EINVAL, "deps_from_json: %s is NULL", out ? "json" : "out");
    json_t *v;
    int rc = pgwi_json_parse(&v, json, len, PGW_INVAL_JSON_MAX_BYTES, err);
    if (rc != PGW_OK)
        return rc;
    rc = deps_from_jobj(out, v, err);
    json_decref(v);
    return rc;
}

static const char *op_names[] = {NULL, "eq", "in", "opaque"};

static int jtable(json_t **out, const pgwi_tdep *t, pgw_error *err)
{
    json_t *o = json_object();
    if (!o)
        return pgwi_enomem(err);
    int rc = pgwi_json_set(o, "schema", jstr(t->schema), err);
    if (rc == PGW_OK)
        rc = pgwi_json_set(o, "table", jstr(t->table), err);
    json_t *a = NULL;
    if (rc == PGW_OK) {
        if (t->all_cols)
            rc = pgwi_json_set(o, "columns", json_string("*"), err);
        else if ((rc = jnames(&a, t->cols, t->n_cols, err)) == PGW_OK)
            rc = pgwi_json_set(o, "columns", a, err);
    }
    json_t *fs = rc == PGW_OK ? json_array() : NULL;
    if (rc == PGW_OK && !fs)
        rc = pgwi_enomem(err);
    for (uint32_t i = 0; rc == PGW_OK && i < t->n_filters; i++) {
        const pgwi_filter *f = &t->filters[i];
        json_t *fo = json_object();
        if (!fo) {
            rc = pgwi_enomem(err);
            break;
        }
        rc = pgwi_json_append(fs, fo, err);
        if (rc == PGW_OK)
            rc = pgwi_json_set(fo, "column", jstr(f->col), err);
        if (rc == PGW_OK)
            rc = pgwi_json_set(fo, "op", json_string(op_names[f->op]), err);
        if (rc == PGW_OK && f->op != PGW_FILTER_OPAQUE) {
            json_t *vs = json_null();
            if (f->vals_known)
                rc = jnames(&vs, f->vals, f->n_vals, err);
            if (rc == PGW_OK)
                rc = pgwi_json_set(fo, "values", vs, err);
        }
    }
    if (fs) {
        if (rc == PGW_OK)
            rc = pgwi_json_set(o, "filters", fs, err);
        else
            json_decref(fs);
    }
    if (rc == PGW_OK && (rc = jnames(&a, t->sort, t->n_sort, err)) == PGW_OK)
        rc = pgwi_json_set(o, "order_by", a, err);
    if (rc == PGW_OK)
        rc = pgwi_json_set(o, "limit", t->limit >= 0 ? json_integer(t->limit) : json_null(),
                           err);
    if (rc == PGW_OK)
        rc = pgwi_json_set(o, "offset", json_integer(t->offset), err);
    if (rc != PGW_OK) {
        json_decref(o);
        return rc;
    }
    *out = o;
    return PGW_OK;
}

int pgw_deps_to_json(char **out, size_t *out_len, const pgw_deps *d, pgw_error *err)
{
    if (!out || !d)
        return pgwi_error(err, PGW_EINVAL, "deps_to_json: %s is NULL", out ? "deps" : "out");
    json_t *o = json_object(), *s = NULL;
    if (!o)
        return pgwi_enomem(err);
    int rc = jscope(&s, &d->scope, err);
    if (rc == PGW_OK)
        rc = pgwi_json_set(o, "scope", s, err);
    if (rc == PGW_OK)
        rc = pgwi_json_set(o, "query", jstr(d->query), err);
    if (rc == PGW_OK && d->n_tables == 0)
        rc = pgwi_json_set(o, "undeclared", json_true(), err);
    if (rc == PGW_OK && d->n_tables) {
        json_t *ts = json_array();
        rc = pgwi_json_set(o, "tables", ts, err);
        for (uint32_t i = 0; rc == PGW_OK && i < d->n_tables; i++) {
            json_t *t = NULL;
            rc = jtable(&t, &d->tables[i], err);
            if (rc == PGW_OK)
                rc = pgwi_json_append(ts, t, err);
        }
        json_t *r = json_null();
        if (rc == PGW_OK && d->rids_known)
            rc = jrids(&r, d->rids, d->n_rids, err);
        if (rc == PGW_OK)
            rc = pgwi_json_set(o, "result_ids", r, err);
    }
    if (rc != PGW_OK) {
        json_decref(o);
        return rc;
    }
    return dump(out, out_len, o, err);
}

/* ------------------------------------------------------------------ */
/* write sets                                                          */

static int read_rows(pgw_write *w, const json_t *arr, pgw_side side, const char *path,
                     pgw_error *err)
{
    int rc = pgwi_json_array(arr, path, err);
    if (rc != PGW_OK)
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
            rc = as_parse(pgw_write_set_row_absent(w, i, side, &tmp), &tmp, p, err);
            if (rc != PGW_OK)
                return rc;
            continue;
        }
        rc = pgwi_json_object(row, p, err);
        if (rc != PGW_OK)
            return rc;
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)row, key, val) {
            char q[PGWI_JPATH_SIZE];
            pgwi_jpath_key(q, p, key);
            const char *s = NULL;
            if (!json_is_null(val)) {
                rc = pgwi_json_string(&s, NULL, val, 0, q, err);
                if (rc != PGW_OK)
                    return rc;
            }
            rc = as_parse(pgw_write_set_value(w, i, side, key, s, &tmp), &tmp, q, err);
            if (rc != PGW_OK)
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
    int rc = pgwi_json_object(obj, "$", err);
    if (rc == PGW_OK)
        rc = pgwi_json_only_keys(obj, "$", how->payload ? keys_payload : keys_json, err);
    if (rc != PGW_OK)
        return rc;
    pgw_scope scope;
    if (how->scope) {
        scope = *how->scope;
    } else {
        const json_t *sm;
        rc = pgwi_json_member(&sm, obj, "scope", true, "$", err);
        if (rc == PGW_OK)
            rc = pgwi_scope_from_jobj(&scope, sm, "$.scope", err);
        if (rc != PGW_OK)
            return rc;
    }
    const json_t *opm;
    const char *ops;
    rc = pgwi_json_member(&opm, obj, "op", true, "$", err);
    if (rc == PGW_OK)
        rc = pgwi_json_string(&ops, NULL, opm, 0, "$.op", err);
    if (rc != PGW_OK)
        return rc;
    pgw_op op = pgwi_op_from_name(ops);
    if (!op || (how->payload && (op == PGW_OP_RESET || op == PGW_OP_UNKNOWN)))
        return pgwi_error_at(err, PGW_EPARSE, "$.op",
                             "$.op: \"%.40s\" is not %s", ops,
                             how->payload ? "insert, update, delete or truncate"
                                          : "insert, update, delete, truncate, unknown or reset");
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
    const json_t *sm = NULL, *tm = NULL, *im = NULL, *cm = NULL, *om = NULL, *nm = NULL;
    const char *schema = NULL, *table = NULL;
    bool ids_tr = false, cols_tr = false, pk = false;
    if (op != PGW_OP_RESET) {
        rc = pgwi_json_member(&sm, obj, "schema", true, "$", err);
        if (rc == PGW_OK)
            rc = pgwi_json_member(&tm, obj, "table", true, "$", err);
        if (rc == PGW_OK)
            rc = pgwi_json_string(&schema, NULL, sm, 0, "$.schema", err);
        if (rc == PGW_OK)
            rc = pgwi_json_string(&table, NULL, tm, 0, "$.table", err);
        if (rc == PGW_OK)
            rc = pgwi_json_member(&im, obj, "ids", false, "$", err);
        if (rc == PGW_OK)
            rc = pgwi_json_member(&cm, obj, "columns", false, "$", err);
        if (rc == PGW_OK)
            rc = pgwi_json_member(&om, obj, "old", false, "$", err);
        if (rc == PGW_OK)
            rc = pgwi_json_member(&nm, obj, "new", false, "$", err);
        if (rc == PGW_OK)
            rc = opt_bool(&ids_tr, obj, "ids_truncated", "$", err);
        if (rc == PGW_OK)
            rc = opt_bool(&cols_tr, obj, "columns_truncated", "$", err);
        if (rc == PGW_OK)
            rc = opt_bool(&pk, obj, "pk_changed", "$", err);
        if (rc != PGW_OK)
            return rc;
        if (im && json_is_null(im))
            im = NULL;
        if (cm && json_is_null(cm))
            cm = NULL;
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
    rc = pgwi_write_alloc(&w, err);
    if (rc != PGW_OK)
        return rc;
    rc = as_parse(pgwi_write_init(w, &scope, schema, table, op, &tmp), &tmp, "$", err);
    if (rc == PGW_OK && pk)
        w->pk_changed = true;
    if (rc == PGW_OK && im) {
        idbuf b;
        rc = read_ids(&b, im, "$.ids", how->max_ids, err);
        if (rc == PGW_OK) {
            rc = as_parse(pgw_write_set_ids(w, b.ids, b.n, ids_tr, &tmp), &tmp, "$.ids", err);
            free_ids(&b);
        }
    }
    w->ids_truncated = ids_tr;
    if (rc == PGW_OK && cm) {
        const char **names;
        size_t n;
        rc = read_names(&names, &n, cm, "$.columns", how->max_cols, err);
        if (rc == PGW_OK) {
            rc = as_parse(pgw_write_set_columns(w, names, n, cols_tr, &tmp), &tmp, "$.columns",
                          err);
            pgwi_free(names);
        }
    }
    w->cols_truncated = cols_tr;
    if (rc == PGW_OK && om)
        rc = read_rows(w, om, PGW_SIDE_OLD, "$.old", err);
    if (rc == PGW_OK && nm)
        rc = read_rows(w, nm, PGW_SIDE_NEW, "$.new", err);
    if (rc != PGW_OK) {
        pgw_write_free(w);
        return rc;
    }
    *out = w;
    return PGW_OK;
}

static int jrows(json_t **out, const pgw_write *w, int side, pgw_error *err)
{
    json_t *a = json_array();
    if (!a)
        return pgwi_enomem(err);
    int rc = PGW_OK;
    for (uint32_t i = 0; rc == PGW_OK && i < w->n_ids; i++) {
        if (w->rstate && w->rstate[i * 2 + (uint32_t)side] == PGWI_ROW_ABSENT) {
            rc = pgwi_json_append(a, json_null(), err);
            continue;
        }
        json_t *o = json_object();
        rc = pgwi_json_append(a, o, err);
        for (uint32_t c = 0; rc == PGW_OK && w->vals && c < w->n_vcols; c++) {
            const pgwi_str *v = w->vals[(i * 2 + (uint32_t)side) * w->n_vcols + c];
            if (!v)
                continue;
            rc = pgwi_json_set(o, w->vcols[c]->s, v == &pgwi_sqlnull ? json_null() : jstr(v),
                               err);
        }
    }
    if (rc != PGW_OK) {
        json_decref(a);
        return rc;
    }
    *out = a;
    return PGW_OK;
}

int pgwi_write_to_jobj(json_t **out, const pgw_write *w, const pgwi_wenc *how, pgw_error *err)
{
    json_t *o = json_object();
    if (!o)
        return pgwi_enomem(err);
    int rc = PGW_OK;
    if (how->payload) {
        rc = pgwi_json_set(o, "version", json_integer(1), err);
    } else {
        json_t *s;
        rc = jscope(&s, &w->scope, err);
        if (rc == PGW_OK)
            rc = pgwi_json_set(o, "scope", s, err);
    }
    if (rc == PGW_OK && w->op == PGW_OP_RESET)
        rc = pgwi_json_set(o, "op", json_string("reset"), err);
    else if (rc == PGW_OK) {
        const bool rows = w->op == PGW_OP_INSERT || w->op == PGW_OP_UPDATE ||
                          w->op == PGW_OP_DELETE;
        const bool drop_ids = how->drop_ids && rows;
        const bool drop_cols = how->drop_cols && rows;
        rc = pgwi_json_set(o, "schema", jstr(w->schema), err);
        if (rc == PGW_OK)
            rc = pgwi_json_set(o, "table", jstr(w->table), err);
        if (rc == PGW_OK)
            rc = pgwi_json_set(o, "op", json_string(pgw_op_name((pgw_op)w->op)), err);
        json_t *a = json_null();
        if (rc == PGW_OK && w->ids_known && !drop_ids)
            rc = jrids(&a, w->ids, w->n_ids, err);
        if (rc == PGW_OK)
            rc = pgwi_json_set(o, "ids", a, err);
        if (rc == PGW_OK)
            rc = pgwi_json_set(o, "ids_truncated", json_boolean(w->ids_truncated || drop_ids),
                               err);
        a = json_null();
        if (rc == PGW_OK && w->cols_known && !drop_cols)
            rc = jnames(&a, w->cols, w->n_cols, err);
        if (rc == PGW_OK)
            rc = pgwi_json_set(o, "columns", a, err);
        if (rc == PGW_OK)
            rc = pgwi_json_set(o, "columns_truncated",
                               json_boolean(w->cols_truncated || drop_cols), err);
        for (int side = 0; side < 2; side++) {
            if (rc != PGW_OK || !w->has_side[side] || how->drop_values || drop_ids ||
                !w->ids_known)
                continue;
            rc = jrows(&a, w, side, err);
            if (rc == PGW_OK)
                rc = pgwi_json_set(o, side == 0 ? "old" : "new", a, err);
        }
        if (rc == PGW_OK)
            rc = pgwi_json_set(o, "pk_changed", json_boolean(w->pk_changed), err);
    }
    if (rc != PGW_OK) {
        json_decref(o);
        return rc;
    }
    *out = o;
    return PGW_OK;
}

int pgw_write_from_json(pgw_write **out, const char *json, size_t len, pgw_error *err)
{
    if (!out || !json)
        return pgwi_error(err, PGW_EINVAL, "write_from_json: %s is NULL", out ? "json" : "out");
    json_t *v;
    int rc = pgwi_json_parse(&v, json, len, PGW_INVAL_JSON_MAX_BYTES, err);
    if (rc != PGW_OK)
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
    int rc = pgwi_write_to_jobj(&o, w, &how, err);
    if (rc != PGW_OK)
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
    static const char *const keys[] = {"verdict", "reason", NULL};
    json_t *v;
    int rc = pgwi_json_parse(&v, json, len, 4096, err);
    if (rc != PGW_OK)
        return rc;
    const json_t *vm = NULL, *rm = NULL;
    const char *vs = NULL, *rs = NULL;
    rc = pgwi_json_object(v, "$", err);
    if (rc == PGW_OK)
        rc = pgwi_json_only_keys(v, "$", keys, err);
    if (rc == PGW_OK)
        rc = pgwi_json_member(&vm, v, "verdict", true, "$", err);
    if (rc == PGW_OK)
        rc = pgwi_json_member(&rm, v, "reason", true, "$", err);
    if (rc == PGW_OK)
        rc = pgwi_json_string(&vs, NULL, vm, 0, "$.verdict", err);
    if (rc == PGW_OK)
        rc = pgwi_json_string(&rs, NULL, rm, 0, "$.reason", err);
    pgw_verdict r = {false, PGW_REASON_SCOPE_DISJOINT};
    if (rc == PGW_OK) {
        if (strcmp(vs, "refresh") == 0)
            r.refresh = true;
        else if (strcmp(vs, "skip") != 0)
            rc = pgwi_error_at(err, PGW_EPARSE, "$.verdict",
                               "$.verdict: \"%.40s\" is not refresh or skip", vs);
    }
    if (rc == PGW_OK && pgw_reason_from_name(&r.reason, rs) != PGW_OK)
        rc = pgwi_error_at(err, PGW_EPARSE, "$.reason", "$.reason: unknown reason \"%.60s\"",
                           rs);
    if (rc == PGW_OK && pgw_reason_refreshes(r.reason) != r.refresh)
        rc = pgwi_error_at(err, PGW_EPARSE, "$.reason", "$.reason: %s implies %s, not %s", rs,
                           r.refresh ? "skip" : "refresh", vs);
    json_decref(v);
    if (rc == PGW_OK)
        *out = r;
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
    if (!o)
        return pgwi_enomem(err);
    int rc = pgwi_json_set(o, "verdict", json_string(v->refresh ? "refresh" : "skip"), err);
    if (rc == PGW_OK)
        rc = pgwi_json_set(o, "reason", json_string(pgw_reason_name(v->reason)), err);
    if (rc != PGW_OK) {
        json_decref(o);
        return rc;
    }
    return dump(out, out_len, o, err);
}
