/*
 * lib/core/snapshot/diff_json.c — the diff JSON format (format 1), written and read
 * strictly. Field-by-field documentation: docs/formats.md.
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "diff_internal.h"
#include "json.h"
#include "snapshot_internal.h"

#define PGW_DIFF_FORMAT 1

static const struct {
    unsigned flag;
    const char *name;
} anomaly_names[] = {
    {PGW_ANOMALY_BOM, "bom"},
    {PGW_ANOMALY_LEADING_SPACE, "leading_space"},
    {PGW_ANOMALY_TRAILING_SPACE, "trailing_space"},
    {PGW_ANOMALY_CONTROL, "control"},
};
#define N_ANOMALY (sizeof anomaly_names / sizeof anomaly_names[0])

/* ------------------------------------------------------------------ */
/* encode                                                              */

static json_t *side_json(const pgw_diff_side *s)
{
    char ts[PGW_TIMESTAMP_SIZE];
    if (pgw_timestamp_format(ts, s->captured_at) != PGW_OK)
        return NULL;
    json_t *o = json_object();
    if (!o || pgwi_json_set(o, "schema", json_string(s->schema), NULL) ||
        pgwi_json_set(o, "table", json_string(s->table), NULL) ||
        pgwi_json_set(o, "resource_identity",
                      s->resource ? json_string(s->resource) : json_null(), NULL) ||
        pgwi_json_set(o, "captured_at", json_string(ts), NULL) ||
        pgwi_json_set(o, "schema_hash", json_string(s->schema_hash), NULL)) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *columns_json(const pgw_diff_column *c, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        json_t *o = json_object();
        if (pgwi_json_append(a, o, NULL) ||
            pgwi_json_set(o, "column", json_string(c[i].column), NULL) ||
            pgwi_json_set(o, "type", json_string(c[i].type), NULL) ||
            pgwi_json_set(o, "position", json_integer(c[i].position), NULL)) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *diff_json(const pgw_diff *d)
{
    json_t *o = json_object();
    json_t *a = NULL;
    if (!o)
        return NULL;
    if (pgwi_json_set(o, "format", json_integer(PGW_DIFF_FORMAT), NULL) ||
        pgwi_json_set(o, "from", side_json(&d->from), NULL) ||
        pgwi_json_set(o, "to", side_json(&d->to), NULL) ||
        pgwi_json_set(o, "schema_changed", json_boolean(d->schema_changed), NULL) ||
        pgwi_json_set(o, "class", json_string(pgw_change_class_name(d->cls)), NULL) ||
        pgwi_json_set(o, "added", columns_json(d->added, d->n_added), NULL) ||
        pgwi_json_set(o, "removed", columns_json(d->removed, d->n_removed), NULL))
        goto fail;
    if (!(a = json_array()))
        goto fail;
    for (size_t i = 0; i < d->n_type; i++) {
        json_t *t = json_object();
        if (pgwi_json_append(a, t, NULL) ||
            pgwi_json_set(t, "column", json_string(d->type_changed[i].column), NULL) ||
            pgwi_json_set(t, "from", json_string(d->type_changed[i].from), NULL) ||
            pgwi_json_set(t, "to", json_string(d->type_changed[i].to), NULL))
            goto fail;
    }
    int rc = pgwi_json_set(o, "type_changed", a, NULL);
    a = NULL;
    if (rc || pgwi_json_set(o, "reordered", json_boolean(d->reordered), NULL) ||
        !(a = json_array()))
        goto fail;
    for (size_t i = 0; i < d->n_renamed; i++) {
        const pgw_rename *r = &d->renamed[i];
        json_t *t = json_object();
        if (pgwi_json_append(a, t, NULL) || pgwi_json_set(t, "from", json_string(r->from), NULL) ||
            pgwi_json_set(t, "to", json_string(r->to), NULL) ||
            pgwi_json_set(t, "from_type", json_string(r->from_type), NULL) ||
            pgwi_json_set(t, "to_type", json_string(r->to_type), NULL) ||
            pgwi_json_set(t, "score", pgwi_json_real(r->score), NULL) ||
            pgwi_json_set(t, "evidence", json_string(pgwi_evidence_name(r->evidence)), NULL))
            goto fail;
    }
    rc = pgwi_json_set(o, "renamed_candidates", a, NULL);
    a = NULL;
    if (rc || !(a = json_array()))
        goto fail;
    for (size_t i = 0; i < d->n_profile; i++) {
        json_t *t = json_object();
        if (pgwi_json_append(a, t, NULL) ||
            pgwi_json_set(t, "column", json_string(d->profile_changed[i].column), NULL) ||
            pgwi_json_set(t, "score", pgwi_json_real(d->profile_changed[i].score), NULL))
            goto fail;
    }
    rc = pgwi_json_set(o, "profile_changed", a, NULL);
    a = NULL;
    json_t *rows = json_object();
    if (rc || pgwi_json_set(o, "row_estimate", rows, NULL) ||
        pgwi_json_set(rows, "from",
                      d->from.has_row_estimate ? json_integer(d->from.row_estimate) : json_null(),
                      NULL) ||
        pgwi_json_set(rows, "to",
                      d->to.has_row_estimate ? json_integer(d->to.row_estimate) : json_null(),
                      NULL) ||
        !(a = json_array()))
        goto fail;
    for (size_t i = 0; i < d->n_anom; i++) {
        const pgw_name_anomaly_report *r = &d->anomalies[i];
        json_t *t = json_object(), *flags = json_array();
        if (pgwi_json_append(a, t, NULL)) {
            json_decref(flags);
            goto fail;
        }
        if (pgwi_json_set(t, "column", json_string(r->column), NULL) ||
            pgwi_json_set(t, "side", json_string(r->in_to ? "to" : "from"), NULL) ||
            pgwi_json_set(t, "anomalies", flags, NULL))
            goto fail;
        for (size_t k = 0; k < N_ANOMALY; k++)
            if ((r->anomalies & anomaly_names[k].flag) &&
                pgwi_json_append(flags, json_string(anomaly_names[k].name), NULL))
                goto fail;
    }
    rc = pgwi_json_set(o, "name_anomalies", a, NULL);
    a = NULL;
    if (rc)
        goto fail;
    return o;
fail:
    json_decref(a);
    json_decref(o);
    return NULL;
}

int pgw_diff_to_json(char **out, size_t *out_len, const pgw_diff *d, unsigned flags,
                     pgw_error *err)
{
    if (PGWI_CHECK_NONNULL(err, "diff_to_json", out, d) != PGW_OK)
        return PGW_EINVAL;
    if (flags & ~PGW_JSON_PRETTY)
        return pgwi_error(err, PGW_EINVAL, "diff_to_json: unknown flags 0x%x", flags);
    json_t *o = diff_json(d);
    if (!o)
        return pgwi_enomem(err);
    int rc = pgwi_json_dump(out, out_len, o, flags & PGW_JSON_PRETTY, err);
    json_decref(o);
    return rc;
}

/* ------------------------------------------------------------------ */
/* decode                                                              */

typedef struct rd {
    pgw_diff *d;
    pgw_error *err;
} rd;

/* A required string member copied into the diff's arena. */
static int str_member(const char **out, rd *r, const json_t *obj, const char *key, bool nullable,
                      const char *path)
{
    const json_t *m;
    char p[PGWI_JPATH_SIZE];
    int rc = pgwi_json_member(&m, obj, key, true, path, r->err);
    if (rc)
        return rc;
    if (nullable && json_is_null(m)) {
        *out = NULL;
        return PGW_OK;
    }
    pgwi_jpath_key(p, path, key);
    const char *s;
    size_t len;
    if ((rc = pgwi_json_string(&s, &len, m, 0, p, r->err)))
        return rc;
    if (len == 0)
        return pgwi_error_at(r->err, PGW_EPARSE, p, "%s: empty string", p);
    *out = pgwi_arena_strndup(&r->d->arena, s, len);
    return *out ? PGW_OK : pgwi_enomem(r->err);
}

static int num_member(double *out, rd *r, const json_t *obj, const char *key, const char *path)
{
    const json_t *m;
    char p[PGWI_JPATH_SIZE];
    int rc = pgwi_json_member(&m, obj, key, true, path, r->err);
    if (rc)
        return rc;
    pgwi_jpath_key(p, path, key);
    return pgwi_json_number(out, m, 0.0, 1.0, p, r->err);
}

static int bool_member(bool *out, rd *r, const json_t *obj, const char *key, const char *path)
{
    const json_t *m;
    char p[PGWI_JPATH_SIZE];
    int rc = pgwi_json_member(&m, obj, key, true, path, r->err);
    if (rc)
        return rc;
    pgwi_jpath_key(p, path, key);
    return pgwi_json_bool(out, m, p, r->err);
}

static int read_side(pgw_diff_side *s, rd *r, const json_t *v, const char *path)
{
    static const char *const keys[] = {"schema",      "table",       "resource_identity",
                                       "captured_at", "schema_hash", NULL};
    int rc = pgwi_json_object(v, path, r->err);
    if (!rc)
        rc = pgwi_json_only_keys(v, path, keys, r->err);
    const char *ts = NULL;
    if (!rc)
        rc = str_member(&s->schema, r, v, "schema", false, path);
    if (!rc)
        rc = str_member(&s->table, r, v, "table", false, path);
    if (!rc)
        rc = str_member(&s->resource, r, v, "resource_identity", true, path);
    if (!rc)
        rc = str_member(&ts, r, v, "captured_at", false, path);
    if (!rc)
        rc = str_member(&s->schema_hash, r, v, "schema_hash", false, path);
    if (rc)
        return rc;
    char p[PGWI_JPATH_SIZE];
    if (!pgwi_is_hex16(s->schema_hash)) {
        pgwi_jpath_key(p, path, "schema_hash");
        return pgwi_error_at(r->err, PGW_EPARSE, p, "%s: expected 16 lowercase hex digits", p);
    }
    if (pgw_timestamp_parse(&s->captured_at, ts, NULL) != PGW_OK) {
        pgwi_jpath_key(p, path, "captured_at");
        return pgwi_error_at(r->err, PGW_EPARSE, p, "%s: not an RFC 3339 timestamp", p);
    }
    return PGW_OK;
}

/* Reads an array member: checks it and sizes the destination. */
static int array_member(const json_t **arr, void **dst, size_t elem, rd *r, const json_t *obj,
                        const char *key, char p[PGWI_JPATH_SIZE])
{
    int rc = pgwi_json_member(arr, obj, key, true, "$", r->err);
    if (rc)
        return rc;
    pgwi_jpath_key(p, "$", key);
    if ((rc = pgwi_json_array(*arr, p, r->err)))
        return rc;
    size_t n = json_array_size(*arr);
    if (n > 1600 * 2)
        return pgwi_error_at(r->err, PGW_EPARSE, p, "%s: %zu entries is more than two tables "
                             "of 1600 columns can produce", p, n);
    *dst = NULL;
    if (n && !(*dst = pgwi_arena_calloc(&r->d->arena, n, elem)))
        return pgwi_enomem(r->err);
    return PGW_OK;
}

/* Checks an element is an object with exactly `keys`. */
static int element(const json_t *v, const char *const *keys, rd *r, const char *arrpath, size_t i,
                   char p[PGWI_JPATH_SIZE])
{
    pgwi_jpath_index(p, arrpath, i);
    int rc = pgwi_json_object(v, p, r->err);
    if (!rc)
        rc = pgwi_json_only_keys(v, p, keys, r->err);
    return rc;
}

static int read_columns(pgw_diff_column **out, size_t *n, rd *r, const json_t *obj,
                        const char *key)
{
    static const char *const keys[] = {"column", "type", "position", NULL};
    const json_t *arr;
    char ap[PGWI_JPATH_SIZE], p[PGWI_JPATH_SIZE];
    int rc = array_member(&arr, (void **)out, sizeof **out, r, obj, key, ap);
    if (rc)
        return rc;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *v = json_array_get(arr, i);
        pgw_diff_column *c = &(*out)[i];
        const json_t *m;
        int64_t pos;
        if ((rc = element(v, keys, r, ap, i, p)) || (rc = str_member(&c->column, r, v, "column", false, p)) ||
            (rc = str_member(&c->type, r, v, "type", false, p)) ||
            (rc = pgwi_json_member(&m, v, "position", true, p, r->err)))
            return rc;
        char pp[PGWI_JPATH_SIZE];
        pgwi_jpath_key(pp, p, "position");
        if ((rc = pgwi_json_int(&pos, m, 1, 1600, pp, r->err)))
            return rc;
        c->position = (uint32_t)pos;
        (*n)++;
    }
    return PGW_OK;
}

static int read_diff(pgw_diff *d, const json_t *v, pgw_error *err)
{
    static const char *const keys[] = {
        "format",   "from",    "to",           "schema_changed", "class",
        "added",    "removed", "type_changed", "reordered",      "renamed_candidates",
        "profile_changed", "row_estimate", "name_anomalies", NULL};
    rd r = {d, err};
    int rc = pgwi_json_object(v, "$", err);
    if (!rc)
        rc = pgwi_json_only_keys(v, "$", keys, err);
    if (rc)
        return rc;
    const json_t *m, *arr;
    char ap[PGWI_JPATH_SIZE], p[PGWI_JPATH_SIZE];
    int64_t n;
    if ((rc = pgwi_json_member(&m, v, "format", true, "$", err)) ||
        (rc = pgwi_json_int(&n, m, 0, INT32_MAX, "$.format", err)))
        return rc;
    if (n != PGW_DIFF_FORMAT)
        return pgwi_error_at(err, PGW_EVERSION, "$.format",
                             "diff format %lld is not supported (this release reads format %d)",
                             (long long)n, PGW_DIFF_FORMAT);
    if ((rc = pgwi_json_member(&m, v, "from", true, "$", err)) ||
        (rc = read_side(&d->from, &r, m, "$.from")) ||
        (rc = pgwi_json_member(&m, v, "to", true, "$", err)) ||
        (rc = read_side(&d->to, &r, m, "$.to")) ||
        (rc = bool_member(&d->schema_changed, &r, v, "schema_changed", "$")) ||
        (rc = bool_member(&d->reordered, &r, v, "reordered", "$")) ||
        (rc = read_columns(&d->added, &d->n_added, &r, v, "added")) ||
        (rc = read_columns(&d->removed, &d->n_removed, &r, v, "removed")))
        return rc;

    static const char *const tkeys[] = {"column", "from", "to", NULL};
    if ((rc = array_member(&arr, (void **)&d->type_changed, sizeof *d->type_changed, &r, v,
                           "type_changed", ap)))
        return rc;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *e = json_array_get(arr, i);
        pgw_type_change *t = &d->type_changed[i];
        if ((rc = element(e, tkeys, &r, ap, i, p)) ||
            (rc = str_member(&t->column, &r, e, "column", false, p)) ||
            (rc = str_member(&t->from, &r, e, "from", false, p)) ||
            (rc = str_member(&t->to, &r, e, "to", false, p)))
            return rc;
        d->n_type++;
    }

    static const char *const rkeys[] = {"from", "to", "from_type", "to_type", "score", "evidence",
                                        NULL};
    if ((rc = array_member(&arr, (void **)&d->renamed, sizeof *d->renamed, &r, v,
                           "renamed_candidates", ap)))
        return rc;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *e = json_array_get(arr, i);
        pgw_rename *t = &d->renamed[i];
        const char *ev;
        if ((rc = element(e, rkeys, &r, ap, i, p)) ||
            (rc = str_member(&t->from, &r, e, "from", false, p)) ||
            (rc = str_member(&t->to, &r, e, "to", false, p)) ||
            (rc = str_member(&t->from_type, &r, e, "from_type", false, p)) ||
            (rc = str_member(&t->to_type, &r, e, "to_type", false, p)) ||
            (rc = num_member(&t->score, &r, e, "score", p)) ||
            (rc = str_member(&ev, &r, e, "evidence", false, p)))
            return rc;
        if (strcmp(ev, "values") == 0)
            t->evidence = PGW_EVIDENCE_VALUES;
        else if (strcmp(ev, "name") == 0)
            t->evidence = PGW_EVIDENCE_NAME;
        else if (strcmp(ev, "both") == 0)
            t->evidence = PGW_EVIDENCE_BOTH;
        else {
            char ep[PGWI_JPATH_SIZE];
            pgwi_jpath_key(ep, p, "evidence");
            return pgwi_error_at(err, PGW_EPARSE, ep, "%s: \"%.40s\" is not values, name or both",
                                 ep, ev);
        }
        d->n_renamed++;
    }

    static const char *const pkeys[] = {"column", "score", NULL};
    if ((rc = array_member(&arr, (void **)&d->profile_changed, sizeof *d->profile_changed, &r, v,
                           "profile_changed", ap)))
        return rc;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *e = json_array_get(arr, i);
        pgw_profile_change *t = &d->profile_changed[i];
        if ((rc = element(e, pkeys, &r, ap, i, p)) ||
            (rc = str_member(&t->column, &r, e, "column", false, p)) ||
            (rc = num_member(&t->score, &r, e, "score", p)))
            return rc;
        d->n_profile++;
    }

    static const char *const wkeys[] = {"from", "to", NULL};
    if ((rc = pgwi_json_member(&m, v, "row_estimate", true, "$", err)) ||
        (rc = pgwi_json_object(m, "$.row_estimate", err)) ||
        (rc = pgwi_json_only_keys(m, "$.row_estimate", wkeys, err)))
        return rc;
    for (int side = 0; side < 2; side++) {
        const char *key = side ? "to" : "from";
        pgw_diff_side *s = side ? &d->to : &d->from;
        const json_t *w;
        if ((rc = pgwi_json_member(&w, m, key, true, "$.row_estimate", err)))
            return rc;
        if (json_is_null(w))
            continue;
        pgwi_jpath_key(p, "$.row_estimate", key);
        int64_t rows;
        if ((rc = pgwi_json_int(&rows, w, 0, INT64_MAX, p, err)))
            return rc;
        s->has_row_estimate = true;
        s->row_estimate = rows;
    }

    static const char *const akeys[] = {"column", "side", "anomalies", NULL};
    if ((rc = array_member(&arr, (void **)&d->anomalies, sizeof *d->anomalies, &r, v,
                           "name_anomalies", ap)))
        return rc;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *e = json_array_get(arr, i);
        pgw_name_anomaly_report *t = &d->anomalies[i];
        const char *side;
        const json_t *flags;
        if ((rc = element(e, akeys, &r, ap, i, p)) ||
            (rc = str_member(&t->column, &r, e, "column", false, p)) ||
            (rc = str_member(&side, &r, e, "side", false, p)) ||
            (rc = pgwi_json_member(&flags, e, "anomalies", true, p, err)))
            return rc;
        char fp[PGWI_JPATH_SIZE];
        pgwi_jpath_key(fp, p, "anomalies");
        if (strcmp(side, "from") != 0 && strcmp(side, "to") != 0)
            return pgwi_error_at(err, PGW_EPARSE, p, "%s.side: expected \"from\" or \"to\"", p);
        t->in_to = strcmp(side, "to") == 0;
        if ((rc = pgwi_json_array(flags, fp, err)))
            return rc;
        for (size_t k = 0; k < json_array_size(flags); k++) {
            char kp[PGWI_JPATH_SIZE];
            pgwi_jpath_index(kp, fp, k);
            const char *f;
            if ((rc = pgwi_json_string(&f, NULL, json_array_get(flags, k), 0, kp, err)))
                return rc;
            unsigned bit = 0;
            for (size_t q = 0; q < N_ANOMALY; q++)
                if (strcmp(f, anomaly_names[q].name) == 0)
                    bit = anomaly_names[q].flag;
            if (!bit || (t->anomalies & bit))
                return pgwi_error_at(err, PGW_EPARSE, kp, "%s: unknown or repeated anomaly "
                                     "\"%.40s\"", kp, f);
            t->anomalies |= bit;
        }
        if (!t->anomalies)
            return pgwi_error_at(err, PGW_EPARSE, fp, "%s: empty", fp);
        d->n_anom++;
    }

    const char *cls;
    if ((rc = str_member(&cls, &r, v, "class", false, "$")))
        return rc;
    d->cls = pgwi_diff_classify(d);
    if (strcmp(cls, pgw_change_class_name(d->cls)) != 0)
        return pgwi_error_at(err, PGW_EPARSE, "$.class",
                             "$.class: \"%.40s\" contradicts the lists, which make it \"%s\"", cls,
                             pgw_change_class_name(d->cls));
    return PGW_OK;
}

int pgw_diff_from_json(pgw_diff **out, const char *json, size_t len, pgw_error *err)
{
    if (PGWI_CHECK_NONNULL(err, "diff_from_json", out, json) != PGW_OK)
        return PGW_EINVAL;
    json_t *v = NULL;
    int rc = pgwi_json_parse(&v, json, len, PGW_SNAPSHOT_JSON_MAX_BYTES, err);
    if (rc)
        return rc;
    pgw_diff *d = pgwi_calloc(1, sizeof *d);
    if (!d) {
        json_decref(v);
        return pgwi_enomem(err);
    }
    rc = read_diff(d, v, err);
    json_decref(v);
    if (rc) {
        pgw_diff_free(d);
        return rc;
    }
    *out = d;
    return PGW_OK;
}
