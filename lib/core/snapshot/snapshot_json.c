/*
 * lib/core/snapshot/snapshot_json.c — the snapshot JSON format (format 1), written
 * and read strictly. Field-by-field documentation: docs/formats.md.
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "snapshot_internal.h"

/* The profile modes' names, indexed by pgw_profile_mode. */
static const char *const mode_names[] = {"raw", "hashed", "none", NULL};

static const char *mode_name(pgw_profile_mode m)
{
    return (unsigned)m <= PGW_PROFILE_NONE ? mode_names[m] : "raw";
}

/* ------------------------------------------------------------------ */
/* encode                                                              */

static json_t *string_array(const char *const *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_string(v[i])) < 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static json_t *real_array(const double *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, pgwi_json_real(v[i])) < 0) {
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
    if (pgwi_json_set(o, "null_frac", pgwi_json_real(p->null_frac), NULL) < 0 ||
        pgwi_json_set(o, "n_distinct", pgwi_json_real(p->n_distinct), NULL) < 0 ||
        pgwi_json_set(o, "avg_width", json_integer(p->avg_width), NULL) < 0 ||
        pgwi_json_set(o, "most_common_vals", string_array(p->most_common_vals, p->n_most_common),
                      NULL) < 0 ||
        pgwi_json_set(o, "most_common_freqs", real_array(p->most_common_freqs, p->n_most_common),
                      NULL) < 0 ||
        pgwi_json_set(o, "histogram_bounds",
                      string_array(p->histogram_bounds, p->n_histogram_bounds), NULL) < 0 ||
        pgwi_json_set(o, "correlation",
                      p->has_correlation ? pgwi_json_real(p->correlation) : json_null(),
                      NULL) < 0) {
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
    if (pgw_timestamp_format(ts, s->captured_at) < 0)
        goto fail;
    json_error_t je;
    extra = json_loads(s->extra, 0, &je);
    if (!extra)
        goto fail;
    if (pgwi_json_set(o, "format", json_integer(PGW_SNAPSHOT_FORMAT), NULL) < 0 ||
        pgwi_json_set(o, "schema", json_string(s->schema), NULL) < 0 ||
        pgwi_json_set(o, "table", json_string(s->table), NULL) < 0 ||
        pgwi_json_set(o, "table_oid", json_integer(s->oid), NULL) < 0 ||
        pgwi_json_set(o, "resource_identity", s->resource ? json_string(s->resource) : json_null(),
                      NULL) < 0 ||
        pgwi_json_set(o, "reason", json_string(s->reason), NULL) < 0 ||
        pgwi_json_set(o, "captured_at", json_string(ts), NULL) < 0 ||
        pgwi_json_set(o, "row_estimate", s->has_rows ? json_integer(s->rows) : json_null(),
                      NULL) < 0 ||
        pgwi_json_set(o, "stats_available", json_boolean(s->stats_available), NULL) < 0 ||
        pgwi_json_set(o, "profile_mode", json_string(mode_name(s->mode)), NULL) < 0 ||
        pgwi_json_set(o, "profiles_omitted", json_boolean(s->profiles_omitted), NULL) < 0 ||
        pgwi_json_set(o, "schema_hash", json_string(s->hash), NULL) < 0)
        goto fail;
    int rc = pgwi_json_set(o, "extra", extra, NULL);
    extra = NULL;
    if (rc < 0)
        goto fail;
    cols = json_array();
    if (!cols)
        goto fail;
    for (size_t i = 0; i < s->n_columns; i++) {
        const pgw_column *c = &s->columns[i];
        json_t *co = json_object();
        if (!co || pgwi_json_append(cols, co, NULL) < 0)
            goto fail;
        if (pgwi_json_set(co, "name", json_string(c->name), NULL) < 0 ||
            pgwi_json_set(co, "type", json_string(c->type), NULL) < 0 ||
            pgwi_json_set(co, "position", json_integer(c->position), NULL) < 0 ||
            pgwi_json_set(co, "profile", c->profile ? profile_json(c->profile) : json_null(),
                          NULL) < 0)
            goto fail;
    }
    rc = pgwi_json_set(o, "columns", cols, NULL);
    cols = NULL;
    if (rc < 0)
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
    int rc;
    if ((rc = PGWI_CHECK_NONNULL(err, "snapshot_to_json", out, snap)) < 0)
        return rc;
    if (flags & ~PGW_JSON_PRETTY)
        return pgwi_error(err, PGW_EINVAL, "snapshot_to_json: unknown flags 0x%x", flags);
    json_t *o = snapshot_json(snap);
    if (!o)
        return pgwi_enomem(err);
    rc = pgwi_json_dump(out, out_len, o, flags & PGW_JSON_PRETTY, err);
    json_decref(o);
    return rc;
}

/* ------------------------------------------------------------------ */
/* decode                                                              */

/* Reads the array member `key` of obj, of at most max_items values, into a
 * temporary array (pgwi_free): strings into *strs or, when strs is NULL,
 * frequencies (numbers within [0, 1]) into *freqs. */
static int read_list(const char ***strs, double **freqs, size_t *n, const json_t *obj,
                     const char *key, size_t max_items, const char *parent, pgw_error *err)
{
    const json_t *v;
    char path[PGWI_JPATH_SIZE];
    int rc;
    if ((rc = pgwi_json_member(&v, obj, key, true, parent, err)) < 0)
        return rc;
    pgwi_jpath_key(path, parent, key);
    if ((rc = pgwi_json_array(v, path, err)) < 0)
        return rc;
    size_t len = json_array_size(v);
    if (len > max_items)
        return pgwi_error_at(err, PGW_EPARSE, path, "%s: %zu values, more than the bound of %zu",
                             path, len, max_items);
    *n = len;
    if (!len)
        return PGW_OK;
    const char **s = strs ? pgwi_calloc(len, sizeof *s) : NULL;
    double *f = strs ? NULL : pgwi_calloc(len, sizeof *f);
    if (!s && !f)
        return pgwi_enomem(err);
    for (size_t i = 0; i < len; i++) {
        char p[PGWI_JPATH_SIZE];
        pgwi_jpath_index(p, path, i);
        const json_t *e = json_array_get(v, i);
        if ((rc = s ? pgwi_json_string(&s[i], NULL, e, 0, p, err)
                    : pgwi_json_number(&f[i], e, 0.0, 1.0, p, err)) < 0) {
            pgwi_free(s);
            pgwi_free(f);
            return rc;
        }
    }
    if (strs)
        *strs = s;
    else
        *freqs = f;
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

/* Reads a profile into st; its lists go into temporaries the caller frees
 * (pgwi_free), successful or not. */
static int read_profile(pgw_column_stats *st, const char ***mcv, double **freqs,
                        const char ***hist, const json_t *v, size_t max_values, const char *path,
                        pgw_error *err)
{
    static const char *const keys[] = {"null_frac",        "n_distinct",        "avg_width",
                                       "most_common_vals", "most_common_freqs", "histogram_bounds",
                                       "correlation",      NULL};
    int64_t width;
    const pgwi_jfield head[] = {
        PGWI_JF_NUMBER("null_frac", &st->null_frac, 0.0, 1.0, 0),
        PGWI_JF_NUMBER("n_distinct", &st->n_distinct, -1.0, 1e300, 0),
        PGWI_JF_INT("avg_width", &width, 0, INT32_MAX, 0),
    };
    const pgwi_jfield tail[] = {PGWI_JF_NUMBER_OR_NULL("correlation", &st->correlation,
                                                       &st->has_correlation, -1.0, 1.0)};
    size_t nmv = 0, nmf = 0, nh = 0;
    int rc;
    if ((rc = pgwi_json_object(v, path, err)) < 0 ||
        (rc = pgwi_json_only_keys(v, path, keys, err)) < 0 ||
        (rc = pgwi_json_read_fields(v, path, head, PGWI_NFIELDS(head), PGWI_JSON_SUBSET, err)) < 0)
        return rc;
    st->avg_width = (int32_t)width;
    if ((rc = read_list(mcv, NULL, &nmv, v, "most_common_vals", max_values, path, err)) < 0 ||
        (rc = read_list(NULL, freqs, &nmf, v, "most_common_freqs", max_values, path, err)) < 0)
        return rc;
    if (nmv != nmf) {
        char p[PGWI_JPATH_SIZE];
        pgwi_jpath_key(p, path, "most_common_freqs");
        return pgwi_error_at(err, PGW_EPARSE, p,
                             "%s: %zu frequencies for %zu most_common_vals", p, nmf, nmv);
    }
    if ((rc = read_list(hist, NULL, &nh, v, "histogram_bounds", max_values, path, err)) < 0 ||
        (rc = pgwi_json_read_fields(v, path, tail, 1, PGWI_JSON_SUBSET, err)) < 0)
        return rc;
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
    int rc;
    if ((rc = pgwi_json_parse(&v, profile_json, strlen(profile_json),
                              PGW_SNAPSHOT_JSON_MAX_BYTES, err)) < 0)
        return rc;
    pgw_column_stats st = PGW_COLUMN_STATS_INIT;
    const char **mcv = NULL, **hist = NULL;
    double *freqs = NULL;
    if ((rc = read_profile(&st, &mcv, &freqs, &hist, v, PGW_PROFILE_JSON_MAX_VALUES, "$",
                           err)) < 0)
        goto done;
    rc = pgw_snapshot_builder_add_column(b, name, type, &st, err);
done:
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
    const char *name, *type;
    int64_t pos;
    const pgwi_jfield f[] = {
        PGWI_JF_STRING("name", &name, 0),
        PGWI_JF_STRING("type", &type, 0),
        PGWI_JF_INT("position", &pos, 1, 1600, 0),
    };
    const json_t *m;
    char p[PGWI_JPATH_SIZE];
    int rc;
    if ((rc = pgwi_json_object(v, path, err)) < 0 ||
        (rc = pgwi_json_only_keys(v, path, keys, err)) < 0 ||
        (rc = pgwi_json_read_fields(v, path, f, PGWI_NFIELDS(f), PGWI_JSON_SUBSET, err)) < 0)
        return rc;
    if ((size_t)pos != idx + 1) {
        pgwi_jpath_key(p, path, "position");
        return pgwi_error_at(err, PGW_EPARSE, p, "%s: position %lld, expected %zu (positions are "
                             "1..n in order)", p, (long long)pos, idx + 1);
    }
    if ((rc = pgwi_json_member(&m, v, "profile", true, path, err)) < 0)
        return rc;
    pgwi_jpath_key(p, path, "profile");
    pgw_column_stats st = PGW_COLUMN_STATS_INIT;
    const char **mcv = NULL, **hist = NULL;
    double *freqs = NULL;
    bool has_profile = !json_is_null(m);
    if (has_profile &&
        (rc = read_profile(&st, &mcv, &freqs, &hist, m, max_values, p, err)) < 0)
        goto done;
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
    pgw_snapshot_builder *b = NULL;
    const json_t *m;
    const char *s;
    int64_t n;
    int rc;
#define MEMBER(key)                                                                            \
    do {                                                                                       \
        if ((rc = pgwi_json_member(&m, v, key, true, "$", err)) < 0)                           \
            goto done;                                                                         \
    } while (0)
    if ((rc = pgwi_json_object(v, "$", err)) < 0 ||
        (rc = pgwi_json_only_keys(v, "$", keys, err)) < 0)
        return rc;
    MEMBER("format");
    if ((rc = pgwi_json_int(&n, m, 0, INT32_MAX, "$.format", err)) < 0)
        goto done;
    if (n != PGW_SNAPSHOT_FORMAT) {
        rc = pgwi_error_at(err, PGW_EVERSION, "$.format",
                           "snapshot format %lld is not supported (this release reads format %d)",
                           (long long)n, PGW_SNAPSHOT_FORMAT);
        goto done;
    }

    pgw_snapshot_options opts = *o;
    int mode;
    MEMBER("profile_mode");
    if ((rc = pgwi_json_enum(&mode, m, mode_names, "$.profile_mode", err)) < 0)
        goto done;
    opts.profile_mode = (pgw_profile_mode)mode;
    if ((rc = pgw_snapshot_builder_new(&b, &opts, err)) < 0)
        goto done;
    pgwi_build_ctl ctl = {true, false, true, {0}};
    const char *schema, *table;
    const pgwi_jfield names[] = {
        PGWI_JF_STRING("schema", &schema, 0),
        PGWI_JF_STRING("table", &table, 0),
        PGWI_JF_INT("table_oid", &n, 0, UINT32_MAX, 0),
    };
    if ((rc = pgwi_json_read_fields(v, "$", names, PGWI_NFIELDS(names), PGWI_JSON_SUBSET,
                                    err)) < 0 ||
        (rc = as_parse_error(pgw_snapshot_builder_set_table(b, schema, table, (uint32_t)n, err),
                             "$", err)) < 0)
        goto done;
    MEMBER("resource_identity");
    if (!json_is_null(m) &&
        ((rc = pgwi_json_string(&s, NULL, m, 0, "$.resource_identity", err)) < 0 ||
         (rc = as_parse_error(pgw_snapshot_builder_set_resource(b, s, err),
                              "$.resource_identity", err)) < 0))
        goto done;
    MEMBER("reason");
    if ((rc = pgwi_json_string(&s, NULL, m, 0, "$.reason", err)) < 0 ||
        (rc = as_parse_error(pgw_snapshot_builder_set_reason(b, s, err), "$.reason", err)) < 0)
        goto done;
    MEMBER("captured_at");
    int64_t usec;
    if ((rc = pgwi_json_string(&s, NULL, m, 0, "$.captured_at", err)) < 0)
        goto done;
    if ((rc = pgw_timestamp_parse(&usec, s, err)) < 0) {
        char msg[PGW_ERROR_MESSAGE_SIZE];
        memcpy(msg, err ? err->message : "", err ? sizeof msg : 1);
        rc = pgwi_error_at(err, PGW_EPARSE, "$.captured_at", "$.captured_at: %s", msg);
        goto done;
    }
    pgw_snapshot_builder_set_captured_at(b, usec, NULL);
    bool has_rows;
    const pgwi_jfield counts[] = {
        PGWI_JF_INT_OR_NULL("row_estimate", &n, &has_rows, 0, INT64_C(4611686018427387904)),
        PGWI_JF_BOOL("profiles_omitted", &ctl.profiles_omitted, 0),
        PGWI_JF_STRING("schema_hash", &s, 0),
    };
    if ((rc = pgwi_json_read_fields(v, "$", counts, PGWI_NFIELDS(counts), PGWI_JSON_SUBSET,
                                    err)) < 0)
        goto done;
    pgw_snapshot_builder_set_reltuples(b, has_rows ? (double)n : -1, NULL);
    if (!pgwi_is_hex16(s)) {
        rc = pgwi_error_at(err, PGW_EPARSE, "$.schema_hash",
                           "$.schema_hash: expected 16 lowercase hex digits");
        goto done;
    }
    memcpy(ctl.hash, s, 17);
    MEMBER("extra");
    if ((rc = pgwi_json_object(m, "$.extra", err)) < 0)
        goto done;
    {
        char *text = NULL;
        if ((rc = pgwi_json_dump(&text, NULL, m, false, err)) < 0)
            goto done;
        rc = pgw_snapshot_builder_set_extra(b, text, err);
        pgwi_free(text);
        if ((rc = as_parse_error(rc == PGW_EPARSE ? PGW_EINVAL : rc, "$.extra", err)) < 0)
            goto done;
    }
    MEMBER("columns");
    if ((rc = pgwi_json_array(m, "$.columns", err)) < 0)
        goto done;
    size_t ncols = json_array_size(m);
    for (size_t i = 0; i < ncols; i++) {
        char p[PGWI_JPATH_SIZE];
        pgwi_jpath_index(p, "$.columns", i);
        if ((rc = read_column(b, json_array_get(m, i), i, opts.max_values, &ctl, p, err)) < 0)
            goto done;
    }
    bool stats;
    MEMBER("stats_available");
    if ((rc = pgwi_json_bool(&stats, m, "$.stats_available", err)) < 0)
        goto done;
    pgw_snapshot_builder_set_stats_available(b, stats);
    rc = as_parse_error(pgwi_snapshot_builder_finish_ctl(out, b, &ctl, err), "$", err);
#undef MEMBER
done:
    pgw_snapshot_builder_free(b);
    return rc;
}

int pgw_snapshot_from_json(pgw_snapshot **out, const char *json, size_t len,
                           const pgw_snapshot_options *opts, pgw_error *err)
{
    int rc;
    if ((rc = PGWI_CHECK_NONNULL(err, "snapshot_from_json", out, json)) < 0)
        return rc;
    pgw_snapshot_options defaults = PGW_SNAPSHOT_OPTIONS_INIT;
    const pgw_snapshot_options *o = opts ? opts : &defaults;
    json_t *v = NULL;
    if ((rc = pgwi_snapshot_options_check(o, err)) < 0 ||
        (rc = pgwi_json_parse(&v, json, len, PGW_SNAPSHOT_JSON_MAX_BYTES, err)) < 0)
        return rc;
    pgw_snapshot *s = NULL;
    rc = read_snapshot(&s, v, o, err);
    json_decref(v);
    if (rc < 0)
        return rc;
    *out = s;
    return PGW_OK;
}
