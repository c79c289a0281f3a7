/*
 * lib/core/snapshot/snapshot.c — the snapshot builder, its bounds, accessors, and
 * the preparation of profiles for comparison.
 * SPDX-License-Identifier: MIT
 */
#include "snapshot_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "pgwitness/schema_hash.h"
#include "value_shape.h"
#include "xxhash_inline.h"

/* PostgreSQL's MaxHeapAttributeNumber (src/include/access/htup_details.h). */
#define PGWI_MAX_COLUMNS 1600
#define PGWI_MAX_REASON_BYTES 200
#define PGWI_MAX_NAME_BYTES 1024 /* generous: PostgreSQL's limit is 63 */
#define PGWI_MAX_TYPE_BYTES 1024
#define PGWI_MAX_EXTRA_BYTES (64u * 1024u)

/* One column as the builder holds it (strings in the builder's arena). */
typedef struct bcol {
    char *name;
    char *type;
    uint64_t name_hash;
    bool has_profile;
    pgw_profile profile;
} bcol;

struct pgw_snapshot_builder {
    pgw_snapshot_options opts;
    char **hash_exclude; /* owned copy of opts.hash_exclude */
    pgwi_arena arena;
    char *schema, *table, *resource, *reason, *extra;
    uint32_t oid;
    bool has_captured_at;
    int64_t captured_at;
    bool has_rows;
    int64_t rows;
    bool stats_available;
    bcol *cols;
    size_t n_cols, cap_cols;
    uint32_t *slots; /* open-addressing set of column indexes + 1 */
    size_t n_slots;  /* power of two, or 0 */
};

/* ------------------------------------------------------------------ */
/* options                                                             */

int pgwi_snapshot_options_check(const pgw_snapshot_options *o, pgw_error *err)
{
    if (o->version != PGW_SNAPSHOT_OPTIONS_VERSION)
        return pgwi_error(err, PGW_EINVAL,
                          "snapshot options version %u is not %u (use "
                          "PGW_SNAPSHOT_OPTIONS_INIT)",
                          o->version, (unsigned)PGW_SNAPSHOT_OPTIONS_VERSION);
    if (o->max_values < 2 || o->max_values > 10000)
        return pgwi_error(err, PGW_EINVAL, "snapshot options: max_values %zu is outside [2, 10000]",
                          o->max_values);
    if (o->max_value_bytes < 4 || o->max_value_bytes > 1000000)
        return pgwi_error(err, PGW_EINVAL,
                          "snapshot options: max_value_bytes %zu is outside [4, 1000000]",
                          o->max_value_bytes);
    if (o->profile_mode != PGW_PROFILE_RAW && o->profile_mode != PGW_PROFILE_HASHED &&
        o->profile_mode != PGW_PROFILE_NONE)
        return pgwi_error(err, PGW_EINVAL, "snapshot options: unknown profile_mode %d",
                          (int)o->profile_mode);
    if (o->hash_exclude)
        for (size_t i = 0; i < o->n_hash_exclude; i++)
            if (!o->hash_exclude[i])
                return pgwi_error(err, PGW_EINVAL, "snapshot options: hash_exclude[%zu] is NULL",
                                  i);
    return PGW_OK;
}

int pgw_snapshot_builder_new(pgw_snapshot_builder **out, const pgw_snapshot_options *opts,
                             pgw_error *err)
{
    if (!out)
        return pgwi_error(err, PGW_EINVAL, "snapshot_builder_new: out is NULL");
    pgw_snapshot_options defaults = PGW_SNAPSHOT_OPTIONS_INIT;
    const pgw_snapshot_options *o = opts ? opts : &defaults;
    int rc;
    if ((rc = pgwi_snapshot_options_check(o, err)) < 0)
        return rc;
    pgw_snapshot_builder *b = pgwi_calloc(1, sizeof *b);
    if (!b)
        return pgwi_enomem(err);
    b->opts = *o;
    if (o->hash_exclude) {
        if (o->n_hash_exclude > 0) {
            b->hash_exclude = pgwi_calloc(o->n_hash_exclude, sizeof(char *));
            if (!b->hash_exclude)
                goto nomem;
            for (size_t i = 0; i < o->n_hash_exclude; i++) {
                b->hash_exclude[i] = pgwi_strdup(o->hash_exclude[i]);
                if (!b->hash_exclude[i])
                    goto nomem;
            }
            b->opts.hash_exclude = (const char *const *)b->hash_exclude;
        } else {
            /* "exclude nothing": a non-NULL empty list. */
            static const char *const none[1] = {NULL};
            b->opts.hash_exclude = none;
        }
    }
    *out = b;
    return PGW_OK;
nomem:
    pgw_snapshot_builder_free(b);
    return pgwi_enomem(err);
}

static void builder_reset(pgw_snapshot_builder *b)
{
    pgwi_arena_free(&b->arena);
    pgwi_free(b->cols);
    pgwi_free(b->slots);
    b->schema = b->table = b->resource = b->reason = b->extra = NULL;
    b->oid = 0;
    b->has_captured_at = false;
    b->captured_at = 0;
    b->has_rows = false;
    b->rows = 0;
    b->stats_available = false;
    b->cols = NULL;
    b->n_cols = b->cap_cols = 0;
    b->slots = NULL;
    b->n_slots = 0;
}

void pgw_snapshot_builder_free(pgw_snapshot_builder *b)
{
    if (!b)
        return;
    builder_reset(b);
    if (b->hash_exclude) {
        for (size_t i = 0; i < b->opts.n_hash_exclude; i++)
            pgwi_free(b->hash_exclude[i]);
        pgwi_free(b->hash_exclude);
    }
    pgwi_free(b);
}

void pgwi_snapshot_builder_set_mode(pgw_snapshot_builder *b, pgw_profile_mode mode)
{
    b->opts.profile_mode = mode;
}

/* ------------------------------------------------------------------ */
/* scalar setters                                                      */

/* Validates a required identifier-like string. */
static int check_text(const char *s, const char *what, size_t max, pgw_error *err)
{
    if (!s)
        return pgwi_error(err, PGW_EINVAL, "%s is NULL", what);
    size_t len = strlen(s);
    if (len == 0)
        return pgwi_error(err, PGW_EINVAL, "%s is empty", what);
    if (len > max)
        return pgwi_error(err, PGW_EINVAL, "%s is %zu bytes, more than %zu", what, len, max);
    if (!pgwi_utf8_valid(s, len))
        return pgwi_error(err, PGW_EINVAL, "%s is not valid UTF-8", what);
    return PGW_OK;
}

int pgw_snapshot_builder_set_table(pgw_snapshot_builder *b, const char *schema,
                                   const char *table, uint32_t oid, pgw_error *err)
{
    if (!b)
        return pgwi_error(err, PGW_EINVAL, "snapshot builder is NULL");
    int rc;
    if ((rc = check_text(schema, "schema name", PGWI_MAX_NAME_BYTES, err)) < 0)
        return rc;
    if ((rc = check_text(table, "table name", PGWI_MAX_NAME_BYTES, err)) < 0)
        return rc;
    char *s = pgwi_arena_strdup(&b->arena, schema);
    char *t = s ? pgwi_arena_strdup(&b->arena, table) : NULL;
    if (!t)
        return pgwi_enomem(err);
    b->schema = s;
    b->table = t;
    b->oid = oid;
    return PGW_OK;
}

int pgw_snapshot_builder_set_resource(pgw_snapshot_builder *b, const char *resource,
                                      pgw_error *err)
{
    if (!b)
        return pgwi_error(err, PGW_EINVAL, "snapshot builder is NULL");
    if (!resource) {
        b->resource = NULL;
        return PGW_OK;
    }
    int rc;
    if ((rc = check_text(resource, "resource identity", 4096, err)) < 0)
        return rc;
    char *r = pgwi_arena_strdup(&b->arena, resource);
    if (!r)
        return pgwi_enomem(err);
    b->resource = r;
    return PGW_OK;
}

int pgw_snapshot_builder_set_reason(pgw_snapshot_builder *b, const char *reason, pgw_error *err)
{
    if (!b)
        return pgwi_error(err, PGW_EINVAL, "snapshot builder is NULL");
    int rc;
    if ((rc = check_text(reason, "reason", PGWI_MAX_REASON_BYTES, err)) < 0)
        return rc;
    char *r = pgwi_arena_strdup(&b->arena, reason);
    if (!r)
        return pgwi_enomem(err);
    b->reason = r;
    return PGW_OK;
}

int pgw_snapshot_builder_set_captured_at(pgw_snapshot_builder *b, int64_t usec, pgw_error *err)
{
    if (!b)
        return pgwi_error(err, PGW_EINVAL, "snapshot builder is NULL");
    if (!pgwi_usec_in_range(usec))
        return pgwi_error(err, PGW_EINVAL,
                          "captured_at %lld is outside the years 0001-9999", (long long)usec);
    b->captured_at = usec;
    b->has_captured_at = true;
    return PGW_OK;
}

int pgw_snapshot_builder_set_reltuples(pgw_snapshot_builder *b, double reltuples, pgw_error *err)
{
    if (!b)
        return pgwi_error(err, PGW_EINVAL, "snapshot builder is NULL");
    if (!isfinite(reltuples) || reltuples > 4611686018427387904.0)
        return pgwi_error(err, PGW_EINVAL, "reltuples %g is not a usable row estimate",
                          reltuples);
    if (reltuples < 0) {
        b->has_rows = false; /* never analysed: unknown, never 0 */
        b->rows = 0;
        return PGW_OK;
    }
    b->has_rows = true;
    b->rows = (int64_t)llround(reltuples);
    return PGW_OK;
}

void pgw_snapshot_builder_set_stats_available(pgw_snapshot_builder *b, bool available)
{
    if (b)
        b->stats_available = available;
}

int pgw_snapshot_builder_set_extra(pgw_snapshot_builder *b, const char *json, pgw_error *err)
{
    if (!b)
        return pgwi_error(err, PGW_EINVAL, "snapshot builder is NULL");
    if (!json) {
        b->extra = NULL;
        return PGW_OK;
    }
    json_t *v = NULL;
    int rc;
    if ((rc = pgwi_json_parse(&v, json, strlen(json), PGWI_MAX_EXTRA_BYTES, err)) < 0)
        return rc;
    if (!json_is_object(v)) {
        json_decref(v);
        return pgwi_error_at(err, PGW_EPARSE, "$", "extra must be a JSON object");
    }
    char *text = NULL;
    size_t len = 0;
    rc = pgwi_json_dump(&text, &len, v, false, err);
    json_decref(v);
    if (rc < 0)
        return rc;
    char *copy = pgwi_arena_strndup(&b->arena, text, len);
    pgwi_free(text);
    if (!copy)
        return pgwi_enomem(err);
    b->extra = copy;
    return PGW_OK;
}

/* ------------------------------------------------------------------ */
/* columns                                                             */

bool pgwi_is_hex16(const char *s)
{
    for (int i = 0; i < 16; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return s[16] == '\0';
}

uint64_t pgwi_value_hash(const char *value, pgw_profile_mode mode)
{
    if (mode == PGW_PROFILE_HASHED && pgwi_is_hex16(value))
        return strtoull(value, NULL, 16);
    return XXH3_64bits(value, strlen(value));
}

static uint64_t name_hash(const char *name)
{
    return XXH3_64bits(name, strlen(name));
}

/* Finds a column name in the builder's set; returns its index or -1. */
static long find_slot(const pgw_snapshot_builder *b, const char *name, uint64_t h)
{
    if (!b->n_slots)
        return -1;
    size_t mask = b->n_slots - 1;
    for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
        uint32_t s = b->slots[i];
        if (s == 0)
            return -1;
        const bcol *c = &b->cols[s - 1];
        if (c->name_hash == h && strcmp(c->name, name) == 0)
            return (long)(s - 1);
    }
}

static void insert_slot(pgw_snapshot_builder *b, size_t idx)
{
    size_t mask = b->n_slots - 1;
    size_t i = (size_t)b->cols[idx].name_hash & mask;
    while (b->slots[i] != 0)
        i = (i + 1) & mask;
    b->slots[i] = (uint32_t)(idx + 1);
}

/* Ensures room for one more column in cols and the name set. */
static int reserve_column(pgw_snapshot_builder *b)
{
    if (b->n_cols == b->cap_cols) {
        size_t cap = b->cap_cols ? b->cap_cols * 2 : 16;
        bcol *nc = pgwi_reallocarray(b->cols, cap, sizeof *nc);
        if (!nc)
            return PGW_ENOMEM;
        b->cols = nc;
        b->cap_cols = cap;
    }
    if ((b->n_cols + 1) * 2 > b->n_slots) {
        size_t n = b->n_slots ? b->n_slots * 2 : 32;
        uint32_t *ns = pgwi_calloc(n, sizeof *ns);
        if (!ns)
            return PGW_ENOMEM;
        pgwi_free(b->slots);
        b->slots = ns;
        b->n_slots = n;
        for (size_t i = 0; i < b->n_cols; i++)
            insert_slot(b, i);
    }
    return PGW_OK;
}

static int check_stats(const pgw_column_stats *s, const char *col, pgw_error *err)
{
    if (!(s->null_frac >= 0.0 && s->null_frac <= 1.0))
        return pgwi_error(err, PGW_EINVAL, "column \"%.100s\": null_frac %g is outside [0, 1]",
                          col, s->null_frac);
    if (!(s->n_distinct >= -1.0) || !isfinite(s->n_distinct))
        return pgwi_error(err, PGW_EINVAL, "column \"%.100s\": n_distinct %g is below -1", col,
                          s->n_distinct);
    if (s->avg_width < 0)
        return pgwi_error(err, PGW_EINVAL, "column \"%.100s\": avg_width %d is negative", col,
                          (int)s->avg_width);
    if (s->has_correlation && !(s->correlation >= -1.0 && s->correlation <= 1.0))
        return pgwi_error(err, PGW_EINVAL, "column \"%.100s\": correlation %g is outside [-1, 1]",
                          col, s->correlation);
    if (s->n_most_common && (!s->most_common_vals || !s->most_common_freqs))
        return pgwi_error(err, PGW_EINVAL,
                          "column \"%.100s\": n_most_common is %zu but the arrays are NULL", col,
                          s->n_most_common);
    if (s->n_histogram_bounds && !s->histogram_bounds)
        return pgwi_error(err, PGW_EINVAL,
                          "column \"%.100s\": n_histogram_bounds is %zu but the array is NULL",
                          col, s->n_histogram_bounds);
    for (size_t i = 0; i < s->n_most_common; i++) {
        double f = s->most_common_freqs[i];
        if (!(f >= 0.0 && f <= 1.0))
            return pgwi_error(err, PGW_EINVAL,
                              "column \"%.100s\": most_common_freqs[%zu] %g is outside [0, 1]",
                              col, i, f);
        if (!s->most_common_vals[i])
            return pgwi_error(err, PGW_EINVAL, "column \"%.100s\": most_common_vals[%zu] is NULL",
                              col, i);
    }
    for (size_t i = 0; i < s->n_histogram_bounds; i++)
        if (!s->histogram_bounds[i])
            return pgwi_error(err, PGW_EINVAL, "column \"%.100s\": histogram_bounds[%zu] is NULL",
                              col, i);
    return PGW_OK;
}

/* Copies one value under the bounds: validated, cut (or, strictly,
 * rejected), and hashed in hashed mode. */
static int copy_value(char **out, pgw_snapshot_builder *b, const char *v, const char *col,
                      const char *list, size_t idx, bool strict, pgw_error *err)
{
    size_t len = strlen(v);
    if (!pgwi_utf8_valid(v, len))
        return pgwi_error(err, PGW_EINVAL, "column \"%.100s\": %s[%zu] is not valid UTF-8", col,
                          list, idx);
    pgw_profile_mode mode = b->opts.profile_mode;
    if (strict) {
        if (mode == PGW_PROFILE_HASHED && !pgwi_is_hex16(v))
            return pgwi_error(err, PGW_EINVAL,
                              "column \"%.100s\": %s[%zu] is not a 16-hex-digit hash "
                              "(profile_mode is hashed)",
                              col, list, idx);
        if (len > b->opts.max_value_bytes)
            return pgwi_error(err, PGW_EINVAL,
                              "column \"%.100s\": %s[%zu] is %zu bytes, more than %zu", col,
                              list, idx, len, b->opts.max_value_bytes);
        *out = pgwi_arena_strndup(&b->arena, v, len);
        return *out ? PGW_OK : PGW_ENOMEM;
    }
    size_t n = pgwi_utf8_cut(v, len, b->opts.max_value_bytes);
    if (mode == PGW_PROFILE_HASHED) {
        char hex[17];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)XXH3_64bits(v, n));
        *out = pgwi_arena_strndup(&b->arena, hex, 16);
    } else {
        *out = pgwi_arena_strndup(&b->arena, v, n);
    }
    return *out ? PGW_OK : PGW_ENOMEM;
}

typedef struct mcv_ix {
    size_t i;
    double f;
} mcv_ix;

static int cmp_mcv_desc(const void *a, const void *b)
{
    const mcv_ix *x = a, *y = b;
    if (x->f != y->f)
        return x->f > y->f ? -1 : 1;
    return x->i < y->i ? -1 : (x->i > y->i); /* stable */
}

static int build_profile(pgw_profile *p, pgw_snapshot_builder *b, const pgw_column_stats *s,
                         const char *col, bool strict, pgw_error *err)
{
    size_t maxv = b->opts.max_values;
    memset(p, 0, sizeof *p);
    p->null_frac = s->null_frac;
    p->n_distinct = s->n_distinct;
    p->avg_width = s->avg_width;
    p->has_correlation = s->has_correlation;
    p->correlation = s->has_correlation ? s->correlation : 0.0;
    if (strict && (s->n_most_common > maxv || s->n_histogram_bounds > maxv))
        return pgwi_error(err, PGW_EINVAL, "column \"%.100s\": a value list has more than %zu entries",
                          col, maxv);

    /* copy_value() reports PGW_ENOMEM without filling err; done: does. */
    mcv_ix *ix = NULL;
    int rc = PGW_OK;
    size_t nm = s->n_most_common < maxv ? s->n_most_common : maxv;
    if (nm) {
        /* Keep the most frequent, in descending frequency (PostgreSQL's own
         * order; a host's unordered list is ordered here). */
        ix = pgwi_calloc(s->n_most_common, sizeof *ix);
        if (!ix)
            return pgwi_enomem(err);
        for (size_t i = 0; i < s->n_most_common; i++) {
            ix[i].i = i;
            ix[i].f = s->most_common_freqs[i];
        }
        if (!strict)
            qsort(ix, s->n_most_common, sizeof *ix, cmp_mcv_desc);
        char **vals = pgwi_arena_calloc(&b->arena, nm, sizeof *vals);
        double *freqs = pgwi_arena_calloc(&b->arena, nm, sizeof *freqs);
        if (!vals || !freqs) {
            rc = PGW_ENOMEM;
            goto done;
        }
        for (size_t k = 0; k < nm; k++) {
            if ((rc = copy_value(&vals[k], b, s->most_common_vals[ix[k].i], col,
                                 "most_common_vals", ix[k].i, strict, err)) < 0)
                goto done;
            freqs[k] = s->most_common_freqs[ix[k].i];
        }
        p->n_most_common = nm;
        p->most_common_vals = (const char *const *)vals;
        p->most_common_freqs = freqs;
    }
    size_t nh_in = s->n_histogram_bounds;
    size_t nh = nh_in < maxv ? nh_in : maxv;
    if (nh) {
        char **vals = pgwi_arena_calloc(&b->arena, nh, sizeof *vals);
        if (!vals) {
            rc = PGW_ENOMEM;
            goto done;
        }
        for (size_t k = 0; k < nh; k++) {
            /* Evenly spaced, first and last kept: index round(k*(n-1)/(m-1)). */
            size_t src = nh == nh_in ? k
                                     : (size_t)(((double)k * (double)(nh_in - 1)) /
                                                    (double)(nh - 1) +
                                                0.5);
            if ((rc = copy_value(&vals[k], b, s->histogram_bounds[src], col, "histogram_bounds",
                                 src, strict, err)) < 0)
                goto done;
        }
        p->n_histogram_bounds = nh;
        p->histogram_bounds = (const char *const *)vals;
    }
done:
    pgwi_free(ix);
    return rc == PGW_ENOMEM ? pgwi_enomem(err) : rc;
}

int pgwi_snapshot_builder_add_column_ctl(pgw_snapshot_builder *b, const char *name,
                                         const char *type, const pgw_column_stats *stats,
                                         const pgwi_build_ctl *ctl, pgw_error *err)
{
    if (!b)
        return pgwi_error(err, PGW_EINVAL, "snapshot builder is NULL");
    int rc;
    if ((rc = check_text(name, "column name", PGWI_MAX_NAME_BYTES, err)) < 0)
        return rc;
    if ((rc = check_text(type, "column type", PGWI_MAX_TYPE_BYTES, err)) < 0)
        return rc;
    if (b->n_cols >= PGWI_MAX_COLUMNS)
        return pgwi_error(err, PGW_EINVAL,
                          "a table has at most %d columns (PostgreSQL's MaxHeapAttributeNumber)",
                          PGWI_MAX_COLUMNS);
    uint64_t h = name_hash(name);
    if (find_slot(b, name, h) >= 0)
        return pgwi_error(err, PGW_EINVAL, "column name \"%.200s\" appears twice", name);
    if (stats) {
        if ((rc = check_stats(stats, name, err)) < 0)
            return rc;
        if (ctl && ctl->strict && b->opts.profile_mode == PGW_PROFILE_NONE)
            return pgwi_error(err, PGW_EINVAL,
                              "column \"%.100s\" has a profile, but profile_mode is none", name);
    }
    if (reserve_column(b) < 0)
        return pgwi_enomem(err);

    /* Everything below allocates in the arena: on failure the arena keeps
     * some garbage until the builder is freed or reset, but the builder's
     * visible state (the column list) is unchanged. */
    bool strict = ctl && ctl->strict;
    bcol c;
    memset(&c, 0, sizeof c);
    c.name = pgwi_arena_strdup(&b->arena, name);
    c.type = c.name ? pgwi_arena_strdup(&b->arena, type) : NULL;
    if (!c.type)
        return pgwi_enomem(err);
    c.name_hash = h;
    if (stats && b->opts.profile_mode != PGW_PROFILE_NONE) {
        if ((rc = build_profile(&c.profile, b, stats, name, strict, err)) < 0)
            return rc;
        c.has_profile = true;
    }
    b->cols[b->n_cols] = c;
    insert_slot(b, b->n_cols);
    b->n_cols++;
    if (stats && !strict)
        b->stats_available = true;
    return PGW_OK;
}

int pgw_snapshot_builder_add_column(pgw_snapshot_builder *b, const char *name, const char *type,
                                    const pgw_column_stats *stats, pgw_error *err)
{
    return pgwi_snapshot_builder_add_column_ctl(b, name, type, stats, NULL, err);
}

/* ------------------------------------------------------------------ */
/* preparing profiles                                                  */

static bool parse_number(const char *s, double *out)
{
    /* PostgreSQL prints numbers as [-]digits[.digits][e[+-]digits], plus
     * NaN/Infinity which are not usable as positions. */
    if (!*s)
        return false;
    char *end;
    double d = strtod(s, &end);
    if (*end != '\0' || !isfinite(d))
        return false;
    /* strtod accepts hex floats and leading spaces; PostgreSQL never
     * prints those, and text columns that happen to hold them are text. */
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || *p == '-' || *p == '+' || *p == '.' || *p == 'e' ||
              *p == 'E'))
            return false;
    *out = d;
    return true;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct hf {
    uint64_t h;
    double f;
} hf;

static int cmp_hf(const void *a, const void *b)
{
    const hf *x = a, *y = b;
    return x->h < y->h ? -1 : x->h > y->h;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct pt {
    double x;
    double mass;  /* point mass at x */
} pt;

static int cmp_pt(const void *a, const void *b)
{
    const pt *x = a, *y = b;
    return x->x < y->x ? -1 : x->x > y->x;
}

/* Builds the non-null value distribution PostgreSQL's statistics describe:
 * each most-common value carries its frequency; the remaining non-null
 * mass is spread evenly over the histogram's buckets (equal population by
 * construction, uniform within a bucket), zero-width buckets becoming point
 * masses. The CDF is stored at its breakpoints as left and right limits;
 * between breakpoints it is linear. Normalised to total mass 1. */
static int prepare_cdf(pgwi_prep *pr, pgwi_arena *a, const pgw_profile *p, const double *mcv_x,
                       const double *hist_x)
{
    size_t nm = p->n_most_common, nh = p->n_histogram_bounds;
    double rest = 1.0 - p->null_frac;
    for (size_t i = 0; i < nm; i++)
        rest -= p->most_common_freqs[i];
    if (rest < 0)
        rest = 0;
    if (nh == 0)
        rest = 0;
    double total = rest;
    for (size_t i = 0; i < nm; i++)
        total += p->most_common_freqs[i];
    if (!(total > 0))
        return PGW_OK; /* nothing measurable: no distribution */

    /* Point masses: MCVs, plus zero-width buckets and a lone bound. */
    size_t npts_cap = nm + nh + 1;
    pt *pts = pgwi_calloc(npts_cap, sizeof *pts);
    double *xs = pgwi_calloc(nm + nh + 1, sizeof *xs);
    if (!pts || !xs) {
        pgwi_free(pts);
        pgwi_free(xs);
        return PGW_ENOMEM;
    }
    size_t npts = 0, nx = 0;
    for (size_t i = 0; i < nm; i++) {
        pts[npts].x = mcv_x[i];
        pts[npts++].mass = p->most_common_freqs[i] / total;
        xs[nx++] = mcv_x[i];
    }
    double bucket = nh >= 2 ? rest / (double)(nh - 1) / total : 0;
    if (nh == 1 && rest > 0) {
        pts[npts].x = hist_x[0];
        pts[npts++].mass = rest / total;
    }
    for (size_t i = 0; i < nh; i++)
        xs[nx++] = hist_x[i];
    for (size_t i = 0; i + 1 < nh; i++)
        if (hist_x[i + 1] <= hist_x[i]) { /* zero-width (or out of order) */
            pts[npts].x = hist_x[i];
            pts[npts++].mass = bucket;
        }
    qsort(pts, npts, sizeof *pts, cmp_pt);
    qsort(xs, nx, sizeof *xs, cmp_double);

    /* Unique breakpoints. */
    size_t nu = 0;
    for (size_t i = 0; i < nx; i++)
        if (nu == 0 || xs[i] != xs[nu - 1])
            xs[nu++] = xs[i];
    pr->cdf_x = pgwi_arena_calloc(a, nu, sizeof(double));
    pr->cdf_lo = pgwi_arena_calloc(a, nu, sizeof(double));
    pr->cdf_hi = pgwi_arena_calloc(a, nu, sizeof(double));
    if (!pr->cdf_x || !pr->cdf_lo || !pr->cdf_hi) {
        pgwi_free(pts);
        pgwi_free(xs);
        return PGW_ENOMEM;
    }
    /* Continuous part: mass of the histogram at or below x. */
    size_t ip = 0;
    double points_below = 0;
    for (size_t k = 0; k < nu; k++) {
        double x = xs[k];
        double cont = 0;
        for (size_t i = 0; i + 1 < nh; i++) {
            double lo = hist_x[i], hi = hist_x[i + 1];
            if (hi <= lo)
                continue; /* counted as a point mass */
            if (x >= hi)
                cont += bucket;
            else if (x > lo)
                cont += bucket * (x - lo) / (hi - lo);
        }
        while (ip < npts && pts[ip].x < x)
            points_below += pts[ip++].mass;
        double at = 0;
        for (size_t j = ip; j < npts && pts[j].x == x; j++)
            at += pts[j].mass;
        pr->cdf_x[k] = x;
        pr->cdf_lo[k] = cont + points_below;
        pr->cdf_hi[k] = cont + points_below + at;
        if (pr->cdf_hi[k] > 1.0)
            pr->cdf_hi[k] = 1.0;
        if (pr->cdf_lo[k] > 1.0)
            pr->cdf_lo[k] = 1.0;
    }
    pr->n_cdf = nu;
    pgwi_free(pts);
    pgwi_free(xs);
    return PGW_OK;
}

static int prepare_profile(pgwi_prep *pr, pgwi_arena *a, const pgw_profile *p,
                           pgw_profile_mode mode, bool has_rows, int64_t rows)
{
    memset(pr, 0, sizeof *pr);
    size_t nm = p->n_most_common, nh = p->n_histogram_bounds;
    if (nm + nh == 0)
        return PGW_OK;
    pr->has_values = true;

    /* Most-common values by hash, with their frequencies. */
    if (nm) {
        hf *tmp = pgwi_calloc(nm, sizeof *tmp);
        pr->mcv_hash = pgwi_arena_calloc(a, nm, sizeof(uint64_t));
        pr->mcv_freq = pgwi_arena_calloc(a, nm, sizeof(double));
        if (!tmp || !pr->mcv_hash || !pr->mcv_freq) {
            pgwi_free(tmp);
            return PGW_ENOMEM;
        }
        for (size_t i = 0; i < nm; i++) {
            tmp[i].h = pgwi_value_hash(p->most_common_vals[i], mode);
            tmp[i].f = p->most_common_freqs[i];
        }
        qsort(tmp, nm, sizeof *tmp, cmp_hf);
        /* Merge duplicates (two values cut to the same prefix). */
        size_t n = 0;
        for (size_t i = 0; i < nm; i++) {
            if (n && pr->mcv_hash[n - 1] == tmp[i].h) {
                pr->mcv_freq[n - 1] += tmp[i].f;
            } else {
                pr->mcv_hash[n] = tmp[i].h;
                pr->mcv_freq[n++] = tmp[i].f;
            }
            pr->mcv_total += tmp[i].f;
        }
        pr->n_mcv = n;
        pgwi_free(tmp);
    }

    /* Every sampled value, unique, by hash. */
    pr->val_hash = pgwi_arena_calloc(a, nm + nh, sizeof(uint64_t));
    if (!pr->val_hash)
        return PGW_ENOMEM;
    size_t nv = 0;
    for (size_t i = 0; i < nm; i++)
        pr->val_hash[nv++] = pgwi_value_hash(p->most_common_vals[i], mode);
    for (size_t i = 0; i < nh; i++)
        pr->val_hash[nv++] = pgwi_value_hash(p->histogram_bounds[i], mode);
    qsort(pr->val_hash, nv, sizeof(uint64_t), cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < nv; i++)
        if (u == 0 || pr->val_hash[i] != pr->val_hash[u - 1])
            pr->val_hash[u++] = pr->val_hash[i];
    pr->n_vals = u;
    for (size_t i = 0; i < u; i++)
        pr->sig |= UINT64_C(1) << (pr->val_hash[i] & 63);

    /* Numeric distribution, when every sampled value is a number; else a
     * temporal one, when every sampled value is a date or timestamp
     * (value_shape.h; pgw_similarity compares numeric ones only). */
    if (mode == PGW_PROFILE_HASHED)
        return pgwi_value_shape_prepare(pr, a, p, mode, has_rows, rows);
    double *mx = pgwi_calloc(nm + nh + 1, sizeof *mx);
    if (!mx)
        return PGW_ENOMEM;
    double *hx = mx + nm;
    bool numeric = true;
    for (size_t i = 0; numeric && i < nm; i++)
        numeric = parse_number(p->most_common_vals[i], &mx[i]);
    for (size_t i = 0; numeric && i < nh; i++)
        numeric = parse_number(p->histogram_bounds[i], &hx[i]);
    bool temporal = !numeric;
    for (size_t i = 0; temporal && i < nm; i++)
        temporal = pgwi_temporal_seconds(p->most_common_vals[i], &mx[i]);
    for (size_t i = 0; temporal && i < nh; i++)
        temporal = pgwi_temporal_seconds(p->histogram_bounds[i], &hx[i]);
    int rc = PGW_OK;
    if (numeric || temporal) {
        pr->numeric = numeric;
        pr->temporal = temporal;
        rc = prepare_cdf(pr, a, p, mx, hx);
    }
    pgwi_free(mx);
    if (rc < 0)
        return rc;
    return pgwi_value_shape_prepare(pr, a, p, mode, has_rows, rows);
}

/* ------------------------------------------------------------------ */
/* finish                                                              */

/* qsort has no context argument; the hashes being sorted by are passed
 * through a thread-local. */
static _Thread_local const uint64_t *g_sort_hashes;

static int cmp_by_name_hash(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint64_t hx = g_sort_hashes[x], hy = g_sort_hashes[y];
    if (hx != hy)
        return hx < hy ? -1 : 1;
    return x < y ? -1 : x > y;
}

int pgwi_snapshot_builder_finish_ctl(pgw_snapshot **out, pgw_snapshot_builder *b,
                                     const pgwi_build_ctl *ctl, pgw_error *err)
{
    if (!out)
        return pgwi_error(err, PGW_EINVAL, "snapshot_builder_finish: out is NULL");
    if (!b)
        return pgwi_error(err, PGW_EINVAL, "snapshot builder is NULL");
    if (!b->table)
        return pgwi_error(err, PGW_EINVAL, "the snapshot's table was not set "
                                           "(pgw_snapshot_builder_set_table)");
    if (!b->has_captured_at)
        return pgwi_error(err, PGW_EINVAL, "the snapshot's captured_at was not set "
                                           "(pgw_snapshot_builder_set_captured_at)");
    bool strict = ctl && ctl->strict;
    bool omitted = strict ? ctl->profiles_omitted : b->n_cols > b->opts.max_profiled_columns;
    if (strict) {
        bool any = false;
        for (size_t i = 0; i < b->n_cols; i++)
            any = any || b->cols[i].has_profile;
        if (any && omitted)
            return pgwi_error(err, PGW_EINVAL,
                              "profiles_omitted is true, but columns carry profiles");
        if (any && b->n_cols > b->opts.max_profiled_columns)
            return pgwi_error(err, PGW_EINVAL,
                              "%zu columns carry profiles, but profiles are kept for at most "
                              "%zu columns",
                              b->n_cols, b->opts.max_profiled_columns);
    }

    pgw_snapshot *s = pgwi_calloc(1, sizeof *s);
    if (!s)
        return pgwi_enomem(err);
    /* The snapshot's own arena holds the arrays; the strings stay in the
     * builder's arena, which moves into the snapshot on success. */
    pgwi_arena *a = &s->arena;
    size_t n = b->n_cols;
    int rc = PGW_OK;
    const char **names = NULL;
    if (n) {
        s->columns = pgwi_arena_calloc(a, n, sizeof *s->columns);
        s->profiles = pgwi_arena_calloc(a, n, sizeof *s->profiles);
        s->prep = pgwi_arena_calloc(a, n, sizeof *s->prep);
        s->family = pgwi_arena_calloc(a, n, sizeof *s->family);
        s->norm_type = pgwi_arena_calloc(a, n, sizeof *s->norm_type);
        s->name_hash = pgwi_arena_calloc(a, n, sizeof *s->name_hash);
        s->fold_hash = pgwi_arena_calloc(a, n, sizeof *s->fold_hash);
        s->anomalies = pgwi_arena_calloc(a, n, sizeof *s->anomalies);
        s->by_name = pgwi_arena_calloc(a, n, sizeof *s->by_name);
        names = pgwi_calloc(n, sizeof *names);
        if (!s->columns || !s->profiles || !s->prep || !s->family || !s->norm_type ||
            !s->name_hash || !s->fold_hash || !s->anomalies || !s->by_name || !names)
            goto nomem;
    }
    for (size_t i = 0; i < n; i++) {
        const bcol *c = &b->cols[i];
        names[i] = c->name;
        s->columns[i].name = c->name;
        s->columns[i].type = c->type;
        s->columns[i].position = (uint32_t)(i + 1);
        s->norm_type[i] = pgwi_type_normalize(a, c->type);
        if (!s->norm_type[i])
            goto nomem;
        s->family[i] = pgwi_type_family(s->norm_type[i]);
        s->name_hash[i] = c->name_hash;
        s->fold_hash[i] = pgwi_fold_hash(c->name);
        s->anomalies[i] = pgwi_name_anomalies(c->name);
        s->by_name[i] = (uint32_t)i;
        if (c->has_profile && !omitted) {
            s->profiles[i] = c->profile;
            s->columns[i].profile = &s->profiles[i];
            if (prepare_profile(&s->prep[i], a, &c->profile, b->opts.profile_mode, b->has_rows,
                                b->rows) < 0)
                goto nomem;
        }
    }
    if (strict && ctl->has_hash) {
        memcpy(s->hash, ctl->hash, sizeof s->hash);
    } else {
        pgw_hash_options ho = PGW_HASH_OPTIONS_INIT;
        ho.exclude = b->opts.hash_exclude;
        ho.n_exclude = b->opts.n_hash_exclude;
        if ((rc = pgw_schema_hash(s->hash, names, n, &ho, err)) < 0)
            goto fail;
    }
    pgwi_free(names);
    names = NULL;
    g_sort_hashes = s->name_hash;
    if (n)
        qsort(s->by_name, n, sizeof *s->by_name, cmp_by_name_hash);
    s->extra = b->extra ? b->extra : pgwi_arena_strdup(a, "{}");
    s->reason = b->reason ? b->reason : pgwi_arena_strdup(a, PGW_REASON_MANUAL);
    if (!s->extra || !s->reason)
        goto nomem;

    s->schema = b->schema;
    s->table = b->table;
    s->oid = b->oid;
    s->resource = b->resource;
    s->captured_at = b->captured_at;
    s->has_rows = b->has_rows;
    s->rows = b->rows;
    s->stats_available = b->stats_available;
    s->mode = b->opts.profile_mode;
    s->profiles_omitted = omitted;
    s->n_columns = n;

    /* The builder's arena (the strings) moves into the snapshot. */
    pgwi_arena_adopt(&s->arena, &b->arena);
    builder_reset(b);
    *out = s;
    return PGW_OK;
nomem:
    rc = pgwi_enomem(err);
fail:
    pgwi_free(names);
    pgw_snapshot_free(s);
    return rc;
}

int pgw_snapshot_builder_finish(pgw_snapshot **out, pgw_snapshot_builder *b, pgw_error *err)
{
    return pgwi_snapshot_builder_finish_ctl(out, b, NULL, err);
}

/* ------------------------------------------------------------------ */
/* accessors                                                           */

void pgw_snapshot_free(pgw_snapshot *snap)
{
    if (!snap)
        return;
    pgwi_arena_free(&snap->arena);
    pgwi_free(snap);
}

const char *pgw_snapshot_schema(const pgw_snapshot *s)
{
    return s ? s->schema : NULL;
}

const char *pgw_snapshot_table(const pgw_snapshot *s)
{
    return s ? s->table : NULL;
}

uint32_t pgw_snapshot_table_oid(const pgw_snapshot *s)
{
    return s ? s->oid : 0;
}

const char *pgw_snapshot_resource(const pgw_snapshot *s)
{
    return s ? s->resource : NULL;
}

const char *pgw_snapshot_reason(const pgw_snapshot *s)
{
    return s ? s->reason : NULL;
}

int64_t pgw_snapshot_captured_at(const pgw_snapshot *s)
{
    return s ? s->captured_at : 0;
}

bool pgw_snapshot_row_estimate(const pgw_snapshot *s, int64_t *out)
{
    if (!s || !s->has_rows)
        return false;
    if (out)
        *out = s->rows;
    return true;
}

bool pgw_snapshot_stats_available(const pgw_snapshot *s)
{
    return s && s->stats_available;
}

pgw_profile_mode pgw_snapshot_profile_mode(const pgw_snapshot *s)
{
    return s ? s->mode : PGW_PROFILE_RAW;
}

bool pgw_snapshot_profiles_omitted(const pgw_snapshot *s)
{
    return s && s->profiles_omitted;
}

const char *pgw_snapshot_schema_hash(const pgw_snapshot *s)
{
    return s ? s->hash : NULL;
}

const char *pgw_snapshot_extra(const pgw_snapshot *s)
{
    return s ? s->extra : NULL;
}

size_t pgw_snapshot_column_count(const pgw_snapshot *s)
{
    return s ? s->n_columns : 0;
}

const pgw_column *pgw_snapshot_column(const pgw_snapshot *s, size_t i)
{
    if (!s || i >= s->n_columns)
        return NULL;
    return &s->columns[i];
}

long pgw_snapshot_find_column(const pgw_snapshot *s, const char *name)
{
    if (!s || !name)
        return -1;
    for (size_t i = 0; i < s->n_columns; i++)
        if (strcmp(s->columns[i].name, name) == 0)
            return (long)i;
    return -1;
}
