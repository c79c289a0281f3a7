/*
 * lib/core/snapshot/drift.c — the drift report.
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"
#include "json.h"
#include "pgwitness/drift.h"
#include "snapshot_internal.h"

#define PGW_DRIFT_FORMAT 1

struct pgw_drift {
    pgwi_arena arena;
    size_t snapshots, pairs, changed, profile_changed;
    size_t classes[PGW_CHANGE_CLASS_COUNT];
    size_t n_resources;
    pgw_drift_resource *resources;
    pgw_diff **diffs; /* every diff, for freeing */
    size_t n_diffs;
};

typedef struct item {
    const char *key;
    const pgw_snapshot *s;
    size_t index;
} item;

static int cmp_item(const void *x, const void *y)
{
    const item *a = x, *b = y;
    int c = strcmp(a->key, b->key);
    if (c)
        return c;
    if (a->s->captured_at != b->s->captured_at)
        return a->s->captured_at < b->s->captured_at ? -1 : 1;
    return a->index < b->index ? -1 : (a->index > b->index);
}

void pgw_drift_free(pgw_drift *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n_diffs; i++)
        pgw_diff_free(d->diffs[i]);
    pgwi_arena_free(&d->arena);
    pgwi_free(d);
}

int pgw_drift_report(pgw_drift **out, const pgw_snapshot *const *snaps, size_t n,
                     const pgw_diff_options *opts, pgw_error *err)
{
    if (PGWI_CHECK_NONNULL(err, "drift_report", out) < 0)
        return PGW_EINVAL;
    if (n && !snaps)
        return pgwi_error(err, PGW_EINVAL, "drift_report: snapshots is NULL with n %zu", n);
    for (size_t i = 0; i < n; i++)
        if (!snaps[i])
            return pgwi_error(err, PGW_EINVAL, "drift_report: snapshots[%zu] is NULL", i);
    pgw_drift *d = pgwi_calloc(1, sizeof *d);
    if (!d)
        return pgwi_enomem(err);
    pgwi_arena *ar = &d->arena;
    item *items = NULL;
    int rc = PGW_OK;
    d->snapshots = n;
    if (n) {
        items = pgwi_calloc(n, sizeof *items);
        d->diffs = pgwi_arena_calloc(ar, n, sizeof *d->diffs);
        if (!items || !d->diffs)
            goto nomem;
    }
    for (size_t i = 0; i < n; i++) {
        const pgw_snapshot *s = snaps[i];
        items[i].s = s;
        items[i].index = i;
        if (s->resource) {
            items[i].key = s->resource;
        } else {
            size_t len = strlen(s->schema) + strlen(s->table) + 2;
            char *k = pgwi_arena_alloc(ar, len);
            if (!k)
                goto nomem;
            snprintf(k, len, "%s.%s", s->schema, s->table);
            items[i].key = k;
        }
    }
    if (n)
        qsort(items, n, sizeof *items, cmp_item);
    size_t groups = 0;
    for (size_t i = 0; i < n; i++)
        groups += i == 0 || strcmp(items[i].key, items[i - 1].key) != 0;
    if (groups && !(d->resources = pgwi_arena_calloc(ar, groups, sizeof *d->resources)))
        goto nomem;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && strcmp(items[j].key, items[i].key) == 0)
            j++;
        pgw_drift_resource *r = &d->resources[d->n_resources++];
        r->resource = pgwi_arena_strdup(ar, items[i].key);
        if (!r->resource)
            goto nomem;
        r->snapshots = j - i;
        r->first = items[i].s->captured_at;
        r->last = items[j - 1].s->captured_at;
        r->pairs = r->n_steps = j - i - 1;
        pgw_drift_step *steps = NULL;
        if (r->n_steps && !(steps = pgwi_arena_calloc(ar, r->n_steps, sizeof *steps)))
            goto nomem;
        r->steps = steps;
        for (size_t k = i; k + 1 < j; k++) {
            pgw_diff *df = NULL;
            if ((rc = pgw_diff_snapshots(&df, items[k].s, items[k + 1].s, opts, err)) < 0)
                goto fail;
            d->diffs[d->n_diffs++] = df;
            pgw_drift_step *st = &steps[k - i];
            st->diff = df;
            st->change = pgw_diff_class(df);
            r->classes[st->change]++;
            r->changed_pairs += st->change != PGW_CHANGE_UNCHANGED;
            r->profile_changed_pairs += pgw_diff_profile_changed_count(df) > 0;
        }
        d->pairs += r->pairs;
        d->changed += r->changed_pairs;
        d->profile_changed += r->profile_changed_pairs;
        for (int c = 0; c < PGW_CHANGE_CLASS_COUNT; c++)
            d->classes[c] += r->classes[c];
        i = j;
    }
    pgwi_free(items);
    *out = d;
    return PGW_OK;
nomem:
    rc = pgwi_enomem(err);
fail:
    pgwi_free(items);
    pgw_drift_free(d);
    return rc;
}

size_t pgw_drift_snapshots(const pgw_drift *d)
{
    return d ? d->snapshots : 0;
}

size_t pgw_drift_pairs(const pgw_drift *d)
{
    return d ? d->pairs : 0;
}

size_t pgw_drift_changed_pairs(const pgw_drift *d)
{
    return d ? d->changed : 0;
}

double pgw_drift_rate(const pgw_drift *d)
{
    return d && d->pairs ? (double)d->changed / (double)d->pairs : 0.0;
}

size_t pgw_drift_class_count(const pgw_drift *d, pgw_change_class c)
{
    if (!d || (int)c < 0 || (int)c >= PGW_CHANGE_CLASS_COUNT)
        return 0;
    return d->classes[c];
}

size_t pgw_drift_profile_changed_pairs(const pgw_drift *d)
{
    return d ? d->profile_changed : 0;
}

size_t pgw_drift_resource_count(const pgw_drift *d)
{
    return d ? d->n_resources : 0;
}

const pgw_drift_resource *pgw_drift_resource_at(const pgw_drift *d, size_t i)
{
    return d && i < d->n_resources ? &d->resources[i] : NULL;
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */

static json_t *ts_json(int64_t usec)
{
    char ts[PGW_TIMESTAMP_SIZE];
    if (pgw_timestamp_format(ts, usec) < 0)
        return NULL;
    return json_string(ts);
}

static json_t *classes_json(const size_t *classes)
{
    json_t *o = json_object();
    for (int c = 0; o && c < PGW_CHANGE_CLASS_COUNT; c++)
        if (pgwi_json_set(o, pgw_change_class_name((pgw_change_class)c),
                          json_integer((json_int_t)classes[c]), NULL) < 0) {
            json_decref(o);
            return NULL;
        }
    return o;
}

static json_t *rate_json(size_t changed, size_t pairs)
{
    return pairs ? pgwi_json_real((double)changed / (double)pairs) : json_null();
}

static json_t *names_json(const pgw_diff *df, int which)
{
    json_t *a = json_array();
    size_t n = which == 0   ? pgw_diff_added_count(df)
               : which == 1 ? pgw_diff_removed_count(df)
                            : pgw_diff_profile_changed_count(df);
    for (size_t i = 0; a && i < n; i++) {
        const char *name = which == 0   ? pgw_diff_added(df, i)->column
                           : which == 1 ? pgw_diff_removed(df, i)->column
                                        : pgw_diff_profile_changed(df, i)->column;
        if (pgwi_json_append(a, json_string(name), NULL) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *step_json(const pgw_drift_step *st)
{
    const pgw_diff *df = st->diff;
    const pgw_diff_side *f = pgw_diff_from(df), *t = pgw_diff_to(df);
    json_t *o = json_object(), *ren = NULL, *ty = NULL;
    if (!o || pgwi_json_set(o, "from", ts_json(f->captured_at), NULL) < 0 ||
        pgwi_json_set(o, "to", ts_json(t->captured_at), NULL) < 0 ||
        pgwi_json_set(o, "from_table", json_string(f->table), NULL) < 0 ||
        pgwi_json_set(o, "to_table", json_string(t->table), NULL) < 0 ||
        pgwi_json_set(o, "from_hash", json_string(f->schema_hash), NULL) < 0 ||
        pgwi_json_set(o, "to_hash", json_string(t->schema_hash), NULL) < 0 ||
        pgwi_json_set(o, "class", json_string(pgw_change_class_name(st->change)), NULL) < 0 ||
        pgwi_json_set(o, "added", names_json(df, 0), NULL) < 0 ||
        pgwi_json_set(o, "removed", names_json(df, 1), NULL) < 0)
        goto fail;
    if (!(ren = json_array()))
        goto fail;
    for (size_t i = 0; i < pgw_diff_renamed_count(df); i++) {
        const pgw_rename *r = pgw_diff_renamed(df, i);
        json_t *e = json_object();
        if (pgwi_json_append(ren, e, NULL) < 0 ||
            pgwi_json_set(e, "from", json_string(r->from), NULL) < 0 ||
            pgwi_json_set(e, "to", json_string(r->to), NULL) < 0 ||
            pgwi_json_set(e, "score", pgwi_json_real(r->score), NULL) < 0 ||
            pgwi_json_set(e, "evidence", json_string(pgwi_evidence_name(r->evidence)), NULL) < 0)
            goto fail;
    }
    int rc = pgwi_json_set(o, "renamed", ren, NULL);
    ren = NULL;
    if (rc < 0 || !(ty = json_array()))
        goto fail;
    for (size_t i = 0; i < pgw_diff_type_changed_count(df); i++) {
        const pgw_type_change *c = pgw_diff_type_changed(df, i);
        json_t *e = json_object();
        if (pgwi_json_append(ty, e, NULL) < 0 ||
            pgwi_json_set(e, "column", json_string(c->column), NULL) < 0 ||
            pgwi_json_set(e, "from", json_string(c->from), NULL) < 0 ||
            pgwi_json_set(e, "to", json_string(c->to), NULL) < 0)
            goto fail;
    }
    rc = pgwi_json_set(o, "type_changed", ty, NULL);
    ty = NULL;
    if (rc < 0 || pgwi_json_set(o, "reordered", json_boolean(pgw_diff_reordered(df)), NULL) < 0 ||
        pgwi_json_set(o, "profile_changed", names_json(df, 2), NULL) < 0)
        goto fail;
    return o;
fail:
    json_decref(ren);
    json_decref(ty);
    json_decref(o);
    return NULL;
}

static json_t *drift_json(const pgw_drift *d)
{
    json_t *o = json_object(), *res = NULL;
    if (!o || pgwi_json_set(o, "format", json_integer(PGW_DRIFT_FORMAT), NULL) < 0 ||
        pgwi_json_set(o, "snapshots", json_integer((json_int_t)d->snapshots), NULL) < 0 ||
        pgwi_json_set(o, "resources", json_integer((json_int_t)d->n_resources), NULL) < 0 ||
        pgwi_json_set(o, "pairs", json_integer((json_int_t)d->pairs), NULL) < 0 ||
        pgwi_json_set(o, "changed_pairs", json_integer((json_int_t)d->changed), NULL) < 0 ||
        pgwi_json_set(o, "rate", rate_json(d->changed, d->pairs), NULL) < 0 ||
        pgwi_json_set(o, "classes", classes_json(d->classes), NULL) < 0 ||
        pgwi_json_set(o, "profile_changed_pairs", json_integer((json_int_t)d->profile_changed),
                      NULL) < 0 ||
        !(res = json_array()))
        goto fail;
    for (size_t i = 0; i < d->n_resources; i++) {
        const pgw_drift_resource *r = &d->resources[i];
        json_t *e = json_object(), *tl = NULL;
        if (pgwi_json_append(res, e, NULL) < 0 ||
            pgwi_json_set(e, "resource", json_string(r->resource), NULL) < 0 ||
            pgwi_json_set(e, "snapshots", json_integer((json_int_t)r->snapshots), NULL) < 0 ||
            pgwi_json_set(e, "first", ts_json(r->first), NULL) < 0 ||
            pgwi_json_set(e, "last", ts_json(r->last), NULL) < 0 ||
            pgwi_json_set(e, "pairs", json_integer((json_int_t)r->pairs), NULL) < 0 ||
            pgwi_json_set(e, "changed_pairs", json_integer((json_int_t)r->changed_pairs),
                          NULL) < 0 ||
            pgwi_json_set(e, "rate", rate_json(r->changed_pairs, r->pairs), NULL) < 0 ||
            pgwi_json_set(e, "classes", classes_json(r->classes), NULL) < 0 ||
            pgwi_json_set(e, "profile_changed_pairs",
                          json_integer((json_int_t)r->profile_changed_pairs), NULL) < 0 ||
            pgwi_json_set(e, "timeline", tl = json_array(), NULL) < 0)
            goto fail;
        for (size_t k = 0; k < r->n_steps; k++)
            if (pgwi_json_append(tl, step_json(&r->steps[k]), NULL) < 0)
                goto fail;
    }
    int rc = pgwi_json_set(o, "per_resource", res, NULL);
    res = NULL;
    if (rc < 0)
        goto fail;
    return o;
fail:
    json_decref(res);
    json_decref(o);
    return NULL;
}

int pgw_drift_to_json(char **out, size_t *out_len, const pgw_drift *d, unsigned flags,
                      pgw_error *err)
{
    if (PGWI_CHECK_NONNULL(err, "drift_to_json", out, d) < 0)
        return PGW_EINVAL;
    if (flags & ~PGW_JSON_PRETTY)
        return pgwi_error(err, PGW_EINVAL, "drift_to_json: unknown flags 0x%x", flags);
    json_t *o = drift_json(d);
    if (!o)
        return pgwi_enomem(err);
    int rc = pgwi_json_dump(out, out_len, o, flags & PGW_JSON_PRETTY, err);
    json_decref(o);
    return rc;
}
