/*
 * lib/core/snapshot/snapshot_json.c — the snapshot JSON format (format 1), written
 * and read strictly. Field-by-field documentation: docs/formats.md.
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "snapshot_internal.h"

static const char *mode_name(pgw_profile_mode m)
{
    switch (m) {
    case PGW_PROFILE_RAW:
        return "raw";
    case PGW_PROFILE_HASHED:
        return "hashed";
    case PGW_PROFILE_NONE:
        return "none";
    }
    return "raw";
}

/* ------------------------------------------------------------------ */
/* encode                                                              */

static json_t *string_array(const char *const *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_string(v[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static json_t *real_array(const double *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, pgwi_json_real(v[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static json_t *profile_json(const pgw_profile *p)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    if (pgwi_json_set(o, "null_frac", pgwi_json_real(p->null_frac), NULL) ||
        pgwi_json_set(o, "n_distinct", pgwi_json_real(p->n_distinct), NULL) ||
        pgwi_json_set(o, "avg_width", json_integer(p->avg_width), NULL) ||
        pgwi_json_set(o, "most_common_vals", string_array(p->most_common_vals, p->n_most_common),
                      NULL) ||
        pgwi_json_set(o, "most_common_freqs", real_array(p->most_common_freqs, p->n_most_common),
                      NULL) ||
        pgwi_json_set(o, "histogram_bounds",
                      string_array(p->histogram_bounds, p->n_histogram_bounds), NULL) ||
        pgwi_json_set(o, "correlation",
                      p->has_correlation ? pgwi_json_real(p->correlation) : json_null(), NULL)) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *snapshot_json(const pgw_snapshot *s)
{
    json_t *o = json_object();
    json_t *extra = NULL, *cols = NULL;
    if (!o)
        return NULL;
    char ts[PGW_TIMESTAMP_SIZE];
    if (pgw_timestamp_format(ts, s->captured_at) != PGW_OK)
        goto fail;
    json_error_t je;
    extra = json_loads(s->extra, 0, &je);
    if (!extra)
        goto fail;
    if (pgwi_json_set(o, "format", json_integer(PGW_SNAPSHOT_FORMAT), NULL) ||
        pgwi_json_set(o, "schema", json_string(s->schema), NULL) ||
        pgwi_json_set(o, "table", json_string(s->table), NULL) ||
        pgwi_json_set(o, "table_oid", json_integer(s->oid), NULL) ||
        pgwi_json_set(o, "resource_identity", s->resource ? json_string(s->resource) : json_null(),
                      NULL) ||
        pgwi_json_set(o, "reason", json_string(s->reason), NULL) ||
        pgwi_json_set(o, "captured_at", json_string(ts), NULL) ||
        pgwi_json_set(o, "row_estimate", s->has_rows ? json_integer(s->rows) : json_null(), NULL) ||
        pgwi_json_set(o, "stats_available", json_boolean(s->stats_available), NULL) ||
        pgwi_json_set(o, "profile_mode", json_string(mode_name(s->mode)), NULL) ||
        pgwi_json_set(o, "profiles_omitted", json_boolean(s->profiles_omitted), NULL) ||
        pgwi_json_set(o, "schema_hash", json_string(s->hash), NULL))
        goto fail;
    int rc = pgwi_json_set(o, "extra", extra, NULL);
    extra = NULL;
    if (rc)
        goto fail;
    cols = json_array();
    if (!cols)
        goto fail;
    for (size_t i = 0; i < s->n_columns; i++) {
        const pgw_column *c = &s->columns[i];
        json_t *co = json_object();
        if (!co || pgwi_json_append(cols, co, NULL))
            goto fail;
        if (pgwi_json_set(co, "name", json_string(c->name), NULL) ||
            pgwi_json_set(co, "type", json_string(c->type), NULL) ||
            pgwi_json_set(co, "position", json_integer(c->position), NULL) ||
            pgwi_json_set(co, "profile", c->profile ? profile_json(c->profile) : json_null(), NULL))
            goto fail;
    }
    rc = pgwi_json_set(o, "columns", cols, NULL);
    cols = NULL;
    if (rc)
        goto fail;
    return o;
fail:
    json_decref(extra);
    json_decref(cols);
    json_decref(o);
    return NULL;
}

int pgw_snapshot_to_json(char **out, size_t *out_len, const pgw_snapshot *snap, unsigned flags,
                         pgw_error *err)
{
    if (PGWI_CHECK_NONNULL(err, "snapshot_to_json", out, snap) != PGW_OK)
        return PGW_EINVAL;
    if (flags & ~PGW_JSON_PRETTY)
        return pgwi_error(err, PGW_EINVAL, "snapshot_to_json: unknown flags 0x%x", flags);
    json_t *o = snapshot_json(snap);
    if (!o)
        return pgwi_enomem(err);
    int rc = pgwi_json_dump(out, out_len, o, flags & PGW_JSON_PRETTY, err);
    json_decref(o);
    return rc;
}

/* ------------------------------------------------------------------ */
/* decode                                                              */

/* Reads a list of strings into a temporary array (pgwi_free). */
static int read_strings(const char ***out, size_t *n, const json_t *v, size_t max_items,
                        const char *path, pgw_error *err)
{
    int rc = pgwi_json_array(v, path, err);
    if (rc)
        return rc;
    size_t len = json_array_size(v);
    if (len > max_items)
        return pgwi_error_at(err, PGW_EPARSE, path, "%s: %zu values, more than the bound of %zu",
                             path, len, max_items);
    *n = len;
    *out = NULL;
    if (!len)
        return PGW_OK;
    const char **arr = pgwi_calloc(len, sizeof *arr);
    if (!arr)
        return pgwi_enomem(err);
    for (size_t i = 0; i < len; i++) {
        char p[PGWI_JPATH_SIZE];
        pgwi_jpath_index(p, path, i);
        rc = pgwi_json_string(&arr[i], NULL, json_array_get(v, i), 0, p, err);
        if (rc) {
            pgwi_free(arr);
            return rc;
        }
    }
    *out = arr;
    return PGW_OK;
}

static int read_reals(double **out, size_t *n, const json_t *v, size_t max_items, double lo,
                      double hi, const char *path, pgw_error *err)
{
    int rc = pgwi_json_array(v, path, err);
    if (rc)
        return rc;
    size_t len = json_array_size(v);
    if (len > max_items)
        return pgwi_error_at(err, PGW_EPARSE, path, "%s: %zu values, more than the bound of %zu",
                             path, len, max_items);
    *n = len;
    *out = NULL;
    if (!len)
        return PGW_OK;
    double *arr = pgwi_calloc(len, sizeof *arr);
    if (!arr)
        return pgwi_enomem(err);
    for (size_t i = 0; i < len; i++) {
        char p[PGWI_JPATH_SIZE];
        pgwi_jpath_index(p, path, i);
        rc = pgwi_json_number(&arr[i], json_array_get(v, i), lo, hi, p, err);
        if (rc) {
            pgwi_free(arr);
            return rc;
        }
    }
    *out = arr;
    return PGW_OK;
}

/* Builder errors are argument errors; in a document they are parse errors
 * at the path being read. */
static int as_parse_error(int rc, const char *path, pgw_error *err)
{
    if (rc == PGW_EINVAL) {
        if (err) {
            char msg[PGW_ERROR_MESSAGE_SIZE];
            memcpy(msg, err->message, sizeof msg);
            pgwi_error_at(err, PGW_EPARSE, path, "%s: %s", path, msg);
        }
        return PGW_EPARSE;
    }
    return rc;
}

static int read_profile(pgw_column_stats *st, const char ***mcv, double **freqs,
                        const char ***hist, const json_t *v, size_t max_values, const char *path,
                        pgw_error *err)
{
    static const char *const keys[] = {"null_frac",        "n_distinct",        "avg_width",
                                       "most_common_vals", "most_common_freqs", "histogram_bounds",
                                       "correlation",      NULL};
    int rc = pgwi_json_object(v, path, err);
    if (!rc)
        rc = pgwi_json_only_keys(v, path, keys, err);
    if (rc)
        return rc;
    const json_t *m;
    char p[PGWI_JPATH_SIZE];
    int64_t w;
    size_t nmv = 0, nmf = 0, nh = 0;
#define MEMBER(key)                                                     \
    do {                                                                \
        rc = pgwi_json_member(&m, v, key, true, path, err);             \
        if (rc)                                                         \
            return rc;                                                  \
        pgwi_jpath_key(p, path, key);                                   \
    } while (0)
    MEMBER("null_frac");
    if ((rc = pgwi_json_number(&st->null_frac, m, 0.0, 1.0, p, err)))
        return rc;
    MEMBER("n_distinct");
    if ((rc = pgwi_json_number(&st->n_distinct, m, -1.0, 1e300, p, err)))
        return rc;
    MEMBER("avg_width");
    if ((rc = pgwi_json_int(&w, m, 0, INT32_MAX, p, err)))
        return rc;
    st->avg_width = (int32_t)w;
    MEMBER("most_common_vals");
    if ((rc = read_strings(mcv, &nmv, m, max_values, p, err)))
        return rc;
    MEMBER("most_common_freqs");
    if ((rc = read_reals(freqs, &nmf, m, max_values, 0.0, 1.0, p, err)))
        return rc;
    if (nmv != nmf)
        return pgwi_error_at(err, PGW_EPARSE, p,
                             "%s: %zu frequencies for %zu most_common_vals", p, nmf, nmv);
    MEMBER("histogram_bounds");
    if ((rc = read_strings(hist, &nh, m, max_values, p, err)))
        return rc;
    MEMBER("correlation");
    if (json_is_null(m)) {
        st->has_correlation = false;
    } else {
        if ((rc = pgwi_json_number(&st->correlation, m, -1.0, 1.0, p, err)))
            return rc;
        st->has_correlation = true;
    }
#undef MEMBER
    st->most_common_vals = *mcv;
    st->most_common_freqs = *freqs;
    st->n_most_common = nmv;
    st->histogram_bounds = *hist;
    st->n_histogram_bounds = nh;
    return PGW_OK;
}

int pgw_snapshot_builder_add_column_json(pgw_snapshot_builder *b, const char *name,
                                         const char *type, const char *profile_json,
                                         pgw_error *err)
{
    if (!b)
        return pgwi_error(err, PGW_EINVAL, "snapshot builder is NULL");
    if (!profile_json)
        return pgw_snapshot_builder_add_column(b, name, type, NULL, err);
    json_t *v = NULL;
    int rc = pgwi_json_parse(&v, profile_json, strlen(profile_json), PGW_SNAPSHOT_JSON_MAX_BYTES, err);
    if (rc)
        return rc;
    pgw_column_stats st = PGW_COLUMN_STATS_INIT;
    const char **mcv = NULL, **hist = NULL;
    double *freqs = NULL;
    rc = read_profile(&st, &mcv, &freqs, &hist, v, PGW_PROFILE_JSON_MAX_VALUES, "$", err);
    if (rc == PGW_OK)
        rc = pgw_snapshot_builder_add_column(b, name, type, &st, err);
    pgwi_free(mcv);
    pgwi_free(freqs);
    pgwi_free(hist);
    json_decref(v);
    return rc;
}

static int read_column(pgw_snapshot_builder *b, const json_t *v, size_t idx, size_t max_values,
                       const pgwi_build_ctl *ctl, const char *path, pgw_error *err)
{
    static const char *const keys[] = {"name", "type", "position", "profile", NULL};
    int rc = pgwi_json_object(v, path, err);
    if (!rc)
        rc = pgwi_json_only_keys(v, path, keys, err);
    if (rc)
        return rc;
    const json_t *m;
    char p[PGWI_JPATH_SIZE];
    const char *name, *type;
    size_t name_len, type_len;
    int64_t pos;
    if ((rc = pgwi_json_member(&m, v, "name", true, path, err)))
        return rc;
    pgwi_jpath_key(p, path, "name");
    if ((rc = pgwi_json_string(&name, &name_len, m, 0, p, err)))
        return rc;
    if ((rc = pgwi_json_member(&m, v, "type", true, path, err)))
        return rc;
    pgwi_jpath_key(p, path, "type");
    if ((rc = pgwi_json_string(&type, &type_len, m, 0, p, err)))
        return rc;
    if ((rc = pgwi_json_member(&m, v, "position", true, path, err)))
        return rc;
    pgwi_jpath_key(p, path, "position");
    if ((rc = pgwi_json_int(&pos, m, 1, 1600, p, err)))
        return rc;
    if ((size_t)pos != idx + 1)
        return pgwi_error_at(err, PGW_EPARSE, p, "%s: position %lld, expected %zu (positions are "
                             "1..n in order)", p, (long long)pos, idx + 1);
    if ((rc = pgwi_json_member(&m, v, "profile", true, path, err)))
        return rc;
    pgwi_jpath_key(p, path, "profile");
    pgw_column_stats st = PGW_COLUMN_STATS_INIT;
    const char **mcv = NULL, **hist = NULL;
    double *freqs = NULL;
    bool has_profile = !json_is_null(m);
    if (has_profile) {
        rc = read_profile(&st, &mcv, &freqs, &hist, m, max_values, p, err);
        if (rc)
            goto done;
    }
    rc = pgwi_snapshot_builder_add_column_ctl(b, name, type, has_profile ? &st : NULL, ctl, err);
    rc = as_parse_error(rc, path, err);
done:
    pgwi_free(mcv);
    pgwi_free(freqs);
    pgwi_free(hist);
    return rc;
}

static int read_snapshot(pgw_snapshot **out, const json_t *v, const pgw_snapshot_options *o,
                         pgw_error *err)
{
    static const char *const keys[] = {
        "format",          "schema",       "table",        "table_oid",        "resource_identity",
        "reason",          "captured_at",  "row_estimate", "stats_available",  "profile_mode",
        "profiles_omitted", "schema_hash", "extra",        "columns",          NULL};
    int rc = pgwi_json_object(v, "$", err);
    if (!rc)
        rc = pgwi_json_only_keys(v, "$", keys, err);
    if (rc)
        return rc;
    const json_t *m;
    int64_t n;
    pgw_snapshot_builder *b = NULL;
#define MEMBER(key)                                                    \
    do {                                                               \
        rc = pgwi_json_member(&m, v, key, true, "$", err);             \
        if (rc)                                                        \
            goto done;                                                 \
    } while (0)
    MEMBER("format");
    if ((rc = pgwi_json_int(&n, m, 0, INT32_MAX, "$.format", err)))
        goto done;
    if (n != PGW_SNAPSHOT_FORMAT) {
        rc = pgwi_error_at(err, PGW_EVERSION, "$.format",
                           "snapshot format %lld is not supported (this release reads format %d)",
                           (long long)n, PGW_SNAPSHOT_FORMAT);
        goto done;
    }

    pgw_snapshot_options opts = *o;
    MEMBER("profile_mode");
    const char *mode;
    if ((rc = pgwi_json_string(&mode, NULL, m, 0, "$.profile_mode", err)))
        goto done;
    if (strcmp(mode, "raw") == 0)
        opts.profile_mode = PGW_PROFILE_RAW;
    else if (strcmp(mode, "hashed") == 0)
        opts.profile_mode = PGW_PROFILE_HASHED;
    else if (strcmp(mode, "none") == 0)
        opts.profile_mode = PGW_PROFILE_NONE;
    else {
        rc = pgwi_error_at(err, PGW_EPARSE, "$.profile_mode",
                           "$.profile_mode: \"%.40s\" is not raw, hashed or none", mode);
        goto done;
    }
    if ((rc = pgw_snapshot_builder_new(&b, &opts, err)))
        goto done;
    pgwi_build_ctl ctl = {true, false, true, {0}};
    const char *s1, *s2;
    bool flag;
    MEMBER("schema");
    if ((rc = pgwi_json_string(&s1, NULL, m, 0, "$.schema", err)))
        goto done;
    MEMBER("table");
    if ((rc = pgwi_json_string(&s2, NULL, m, 0, "$.table", err)))
        goto done;
    MEMBER("table_oid");
    if ((rc = pgwi_json_int(&n, m, 0, UINT32_MAX, "$.table_oid", err)))
        goto done;
    if ((rc = as_parse_error(pgw_snapshot_builder_set_table(b, s1, s2, (uint32_t)n, err), "$",
                             err)))
        goto done;
    MEMBER("resource_identity");
    if (!json_is_null(m)) {
        if ((rc = pgwi_json_string(&s1, NULL, m, 0, "$.resource_identity", err)) ||
            (rc = as_parse_error(pgw_snapshot_builder_set_resource(b, s1, err),
                                 "$.resource_identity", err)))
            goto done;
    }
    MEMBER("reason");
    if ((rc = pgwi_json_string(&s1, NULL, m, 0, "$.reason", err)) ||
        (rc = as_parse_error(pgw_snapshot_builder_set_reason(b, s1, err), "$.reason", err)))
        goto done;
    MEMBER("captured_at");
    int64_t usec;
    if ((rc = pgwi_json_string(&s1, NULL, m, 0, "$.captured_at", err)))
        goto done;
    if ((rc = pgw_timestamp_parse(&usec, s1, err))) {
        char msg[PGW_ERROR_MESSAGE_SIZE];
        memcpy(msg, err ? err->message : "", err ? sizeof msg : 1);
        rc = pgwi_error_at(err, PGW_EPARSE, "$.captured_at", "$.captured_at: %s", msg);
        goto done;
    }
    pgw_snapshot_builder_set_captured_at(b, usec, NULL);
    MEMBER("row_estimate");
    if (json_is_null(m)) {
        pgw_snapshot_builder_set_reltuples(b, -1, NULL);
    } else {
        if ((rc = pgwi_json_int(&n, m, 0, INT64_C(4611686018427387904), "$.row_estimate", err)))
            goto done;
        pgw_snapshot_builder_set_reltuples(b, (double)n, NULL);
    }
    MEMBER("profiles_omitted");
    if ((rc = pgwi_json_bool(&ctl.profiles_omitted, m, "$.profiles_omitted", err)))
        goto done;
    MEMBER("schema_hash");
    if ((rc = pgwi_json_string(&s1, NULL, m, 0, "$.schema_hash", err)))
        goto done;
    if (!pgwi_is_hex16(s1)) {
        rc = pgwi_error_at(err, PGW_EPARSE, "$.schema_hash",
                           "$.schema_hash: expected 16 lowercase hex digits");
        goto done;
    }
    memcpy(ctl.hash, s1, 17);
    MEMBER("extra");
    if ((rc = pgwi_json_object(m, "$.extra", err)))
        goto done;
    {
        char *text = NULL;
        if ((rc = pgwi_json_dump(&text, NULL, m, false, err)))
            goto done;
        rc = pgw_snapshot_builder_set_extra(b, text, err);
        pgwi_free(text);
        if ((rc = as_parse_error(rc == PGW_EPARSE ? PGW_EINVAL : rc, "$.extra", err)))
            goto done;
    }
    MEMBER("columns");
    if ((rc = pgwi_json_array(m, "$.columns", err)))
        goto done;
    size_t ncols = json_array_size(m);
    for (size_t i = 0; i < ncols; i++) {
        char p[PGWI_JPATH_SIZE];
        pgwi_jpath_index(p, "$.columns", i);
        if ((rc = read_column(b, json_array_get(m, i), i, opts.max_values, &ctl, p, err)))
            goto done;
    }
    MEMBER("stats_available");
    if ((rc = pgwi_json_bool(&flag, m, "$.stats_available", err)))
        goto done;
    pgw_snapshot_builder_set_stats_available(b, flag);
    rc = as_parse_error(pgwi_snapshot_builder_finish_ctl(out, b, &ctl, err), "$", err);
#undef MEMBER
done:
    pgw_snapshot_builder_free(b);
    return rc;
}

int pgw_snapshot_from_json(pgw_snapshot **out, const char *json, size_t len,
                           const pgw_snapshot_options *opts, pgw_error *err)
{
    if (PGWI_CHECK_NONNULL(err, "snapshot_from_json", out, json) != PGW_OK)
        return PGW_EINVAL;
    pgw_snapshot_options defaults = PGW_SNAPSHOT_OPTIONS_INIT;
    const pgw_snapshot_options *o = opts ? opts : &defaults;
    int rc = pgwi_snapshot_options_check(o, err);
    if (rc)
        return rc;
    json_t *v = NULL;
    rc = pgwi_json_parse(&v, json, len, PGW_SNAPSHOT_JSON_MAX_BYTES, err);
    if (rc)
        return rc;
    pgw_snapshot *s = NULL;
    rc = read_snapshot(&s, v, o, err);
    json_decref(v);
    if (rc == PGW_OK)
        *out = s;
    return rc;
}
