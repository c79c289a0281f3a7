/*
 * lib/core/snapshot/diff.c — diff_snapshots and the diff's accessors.
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"
#include "similarity.h"
#include "snapshot_internal.h"

const char *pgw_change_class_name(pgw_change_class c)
{
    switch (c) {
    case PGW_CHANGE_UNCHANGED:
        return "unchanged";
    case PGW_CHANGE_ADDITIVE:
        return "additive";
    case PGW_CHANGE_SUBTRACTIVE:
        return "subtractive";
    case PGW_CHANGE_RENAMED:
        return "renamed";
    case PGW_CHANGE_RETYPED:
        return "retyped";
    case PGW_CHANGE_REORDERED:
        return "reordered";
    case PGW_CHANGE_MIXED:
        return "mixed";
    }
    return "unknown";
}

const char *pgwi_evidence_name(pgw_rename_evidence e)
{
    switch (e) {
    case PGW_EVIDENCE_VALUES:
        return "values";
    case PGW_EVIDENCE_NAME:
        return "name";
    case PGW_EVIDENCE_BOTH:
        return "both";
    }
    return "unknown";
}

pgw_change_class pgwi_diff_classify(const pgw_diff *d)
{
    int kinds = 0;
    pgw_change_class only = PGW_CHANGE_UNCHANGED;
    if (d->n_added) {
        kinds++;
        only = PGW_CHANGE_ADDITIVE;
    }
    if (d->n_removed) {
        kinds++;
        only = PGW_CHANGE_SUBTRACTIVE;
    }
    if (d->n_renamed) {
        kinds++;
        only = PGW_CHANGE_RENAMED;
    }
    if (d->n_type) {
        kinds++;
        only = PGW_CHANGE_RETYPED;
    }
    if (d->reordered) {
        kinds++;
        only = PGW_CHANGE_REORDERED;
    }
    return kinds > 1 ? PGW_CHANGE_MIXED : only;
}

typedef struct cand {
    uint32_t r, d;   /* column indexes in a and b */
    double score;
    bool name;
    bool values;
} cand;

static int cmp_cand(const void *x, const void *y)
{
    const cand *p = x, *q = y;
    if (p->name != q->name)
        return p->name ? -1 : 1;
    if (p->score != q->score)
        return p->score > q->score ? -1 : 1;
    if (p->r != q->r)
        return p->r < q->r ? -1 : 1;
    return p->d < q->d ? -1 : (p->d > q->d);
}

static int copy_side(pgw_diff_side *side, pgwi_arena *ar, const pgw_snapshot *s)
{
    side->schema = pgwi_arena_strdup(ar, s->schema);
    side->table = pgwi_arena_strdup(ar, s->table);
    side->resource = s->resource ? pgwi_arena_strdup(ar, s->resource) : NULL;
    side->schema_hash = pgwi_arena_strdup(ar, s->hash);
    side->captured_at = s->captured_at;
    side->has_row_estimate = s->has_rows;
    side->row_estimate = s->has_rows ? s->rows : 0;
    if (!side->schema || !side->table || !side->schema_hash || (s->resource && !side->resource))
        return PGW_ENOMEM;
    return PGW_OK;
}

/* Pairs same-named columns: ma[i] = index in b or -1, mb[j] likewise. */
static void match_names(const pgw_snapshot *a, const pgw_snapshot *b, int32_t *ma, int32_t *mb)
{
    for (size_t i = 0; i < a->n_columns; i++)
        ma[i] = -1;
    for (size_t j = 0; j < b->n_columns; j++)
        mb[j] = -1;
    size_t i = 0, j = 0;
    while (i < a->n_columns && j < b->n_columns) {
        uint64_t ha = a->name_hash[a->by_name[i]], hb = b->name_hash[b->by_name[j]];
        if (ha < hb) {
            i++;
        } else if (hb < ha) {
            j++;
        } else {
            /* A run of equal hashes on each side: compare names pairwise
             * (a 64-bit collision is possible in principle). */
            size_t ie = i, je = j;
            while (ie < a->n_columns && a->name_hash[a->by_name[ie]] == ha)
                ie++;
            while (je < b->n_columns && b->name_hash[b->by_name[je]] == ha)
                je++;
            for (size_t x = i; x < ie; x++)
                for (size_t y = j; y < je; y++) {
                    uint32_t ca = a->by_name[x], cb = b->by_name[y];
                    if (mb[cb] < 0 && strcmp(a->columns[ca].name, b->columns[cb].name) == 0) {
                        ma[ca] = (int32_t)cb;
                        mb[cb] = (int32_t)ca;
                        break;
                    }
                }
            i = ie;
            j = je;
        }
    }
}

static int check_options(const pgw_diff_options *o, pgw_error *err)
{
    if (o->version != PGW_DIFF_OPTIONS_VERSION)
        return pgwi_error(err, PGW_EINVAL,
                          "diff options version %u is not %u (use PGW_DIFF_OPTIONS_INIT)",
                          o->version, (unsigned)PGW_DIFF_OPTIONS_VERSION);
    if (!(o->rename_threshold >= 0 && o->rename_threshold <= 1))
        return pgwi_error(err, PGW_EINVAL, "diff options: rename_threshold %g is outside [0, 1]",
                          o->rename_threshold);
    if (!(o->profile_threshold >= 0 && o->profile_threshold <= 1))
        return pgwi_error(err, PGW_EINVAL,
                          "diff options: profile_threshold %g is outside [0, 1]",
                          o->profile_threshold);
    return PGW_OK;
}

#define ADUP(s) pgwi_arena_strdup(ar, (s))

int pgw_diff_snapshots(pgw_diff **out, const pgw_snapshot *a, const pgw_snapshot *b,
                       const pgw_diff_options *opts, pgw_error *err)
{
    if (PGWI_CHECK_NONNULL(err, "diff_snapshots", out, a, b) != PGW_OK)
        return PGW_EINVAL;
    pgw_diff_options defaults = PGW_DIFF_OPTIONS_INIT;
    const pgw_diff_options *o = opts ? opts : &defaults;
    int rc = check_options(o, err);
    if (rc != PGW_OK)
        return rc;

    size_t na = a->n_columns, nb = b->n_columns;
    pgw_diff *d = pgwi_calloc(1, sizeof *d);
    /* One scratch block: name matches, removed and added index lists, and
     * the paired flags. */
    size_t scratch_n = 2 * (na + nb) + 2;
    int32_t *scratch = pgwi_calloc(scratch_n, sizeof *scratch);
    cand *cands = NULL;
    if (!d || !scratch)
        goto nomem;
    pgwi_arena *ar = &d->arena;
    int32_t *ma = scratch, *mb = ma + na, *rem = mb + nb, *add = rem + na + 1;
    match_names(a, b, ma, mb);
    if (copy_side(&d->from, ar, a) != PGW_OK || copy_side(&d->to, ar, b) != PGW_OK)
        goto nomem;
    d->schema_changed = strcmp(a->hash, b->hash) != 0;

    /* Reordered: kept columns must appear in b in a's order. */
    int32_t last = -1;
    for (size_t i = 0; i < na; i++)
        if (ma[i] >= 0) {
            if (ma[i] < last)
                d->reordered = true;
            last = ma[i];
        }

    /* Type and profile changes of kept columns, in b's order. */
    size_t nk = 0;
    for (size_t j = 0; j < nb; j++)
        nk += mb[j] >= 0;
    if (nk) {
        d->type_changed = pgwi_arena_calloc(ar, nk, sizeof *d->type_changed);
        d->profile_changed = pgwi_arena_calloc(ar, nk, sizeof *d->profile_changed);
        if (!d->type_changed || !d->profile_changed)
            goto nomem;
    }
    for (size_t j = 0; j < nb; j++) {
        if (mb[j] < 0)
            continue;
        size_t i = (size_t)mb[j];
        if (strcmp(a->norm_type[i], b->norm_type[j]) != 0) {
            pgw_type_change *t = &d->type_changed[d->n_type++];
            t->column = ADUP(b->columns[j].name);
            t->from = ADUP(a->columns[i].type);
            t->to = ADUP(b->columns[j].type);
            if (!t->column || !t->from || !t->to)
                goto nomem;
        }
        if (a->prep[i].has_values && b->prep[j].has_values) {
            pgw_similarity s;
            pgwi_similarity(&s, a, i, b, j);
            if (s.score < o->profile_threshold) {
                pgw_profile_change *p = &d->profile_changed[d->n_profile++];
                p->column = ADUP(b->columns[j].name);
                p->score = s.score;
                if (!p->column)
                    goto nomem;
            }
        }
    }

    /* Rename candidates among removed x added. */
    size_t nr = 0, nd = 0;
    for (size_t i = 0; i < na; i++)
        if (ma[i] < 0)
            rem[nr++] = (int32_t)i;
    for (size_t j = 0; j < nb; j++)
        if (mb[j] < 0)
            add[nd++] = (int32_t)j;
    size_t nc = 0, cap = 0;
    for (size_t x = 0; x < nr; x++) {
        size_t i = (size_t)rem[x];
        for (size_t y = 0; y < nd; y++) {
            size_t j = (size_t)add[y];
            bool name = a->fold_hash[i] && a->fold_hash[i] == b->fold_hash[j];
            double score = 0;
            if (a->prep[i].has_values && b->prep[j].has_values) {
                pgw_similarity s;
                pgwi_similarity(&s, a, i, b, j);
                score = s.score;
            }
            bool values = score >= o->rename_threshold && score > 0;
            if (!name && !values)
                continue;
            if (nc == cap) {
                size_t ncap = cap ? cap * 2 : 16;
                cand *nc2 = pgwi_reallocarray(cands, ncap, sizeof *cands);
                if (!nc2)
                    goto nomem;
                cands = nc2;
                cap = ncap;
            }
            cands[nc++] = (cand){(uint32_t)i, (uint32_t)j, score, name, values};
        }
    }
    if (nc) {
        qsort(cands, nc, sizeof *cands, cmp_cand);
        d->renamed = pgwi_arena_calloc(ar, nr < nd ? nr : nd, sizeof *d->renamed);
        if (!d->renamed)
            goto nomem;
        /* ma/mb now mark paired columns with -2. */
        for (size_t k = 0; k < nc; k++) {
            cand *c = &cands[k];
            if (ma[c->r] == -2 || mb[c->d] == -2)
                continue;
            ma[c->r] = mb[c->d] = -2;
            pgw_rename *r = &d->renamed[d->n_renamed++];
            r->from = ADUP(a->columns[c->r].name);
            r->to = ADUP(b->columns[c->d].name);
            r->from_type = ADUP(a->columns[c->r].type);
            r->to_type = ADUP(b->columns[c->d].type);
            r->score = c->score;
            r->evidence = c->name && c->values ? PGW_EVIDENCE_BOTH
                          : c->name            ? PGW_EVIDENCE_NAME
                                               : PGW_EVIDENCE_VALUES;
            if (!r->from || !r->to || !r->from_type || !r->to_type)
                goto nomem;
        }
    }
    pgwi_free(cands);
    cands = NULL;

    /* Plain added and removed: what is left unpaired. */
    size_t left_r = 0, left_d = 0;
    for (size_t x = 0; x < nr; x++)
        left_r += ma[rem[x]] == -1;
    for (size_t y = 0; y < nd; y++)
        left_d += mb[add[y]] == -1;
    if (left_r && !(d->removed = pgwi_arena_calloc(ar, left_r, sizeof *d->removed)))
        goto nomem;
    if (left_d && !(d->added = pgwi_arena_calloc(ar, left_d, sizeof *d->added)))
        goto nomem;
    for (size_t x = 0; x < nr; x++) {
        size_t i = (size_t)rem[x];
        if (ma[i] != -1)
            continue;
        pgw_diff_column *c = &d->removed[d->n_removed++];
        c->column = ADUP(a->columns[i].name);
        c->type = ADUP(a->columns[i].type);
        c->position = a->columns[i].position;
        if (!c->column || !c->type)
            goto nomem;
    }
    for (size_t y = 0; y < nd; y++) {
        size_t j = (size_t)add[y];
        if (mb[j] != -1)
            continue;
        pgw_diff_column *c = &d->added[d->n_added++];
        c->column = ADUP(b->columns[j].name);
        c->type = ADUP(b->columns[j].type);
        c->position = b->columns[j].position;
        if (!c->column || !c->type)
            goto nomem;
    }

    /* Name anomalies of both sides. */
    size_t nan = 0;
    for (size_t i = 0; i < na; i++)
        nan += a->anomalies[i] != 0;
    for (size_t j = 0; j < nb; j++)
        nan += b->anomalies[j] != 0;
    if (nan && !(d->anomalies = pgwi_arena_calloc(ar, nan, sizeof *d->anomalies)))
        goto nomem;
    for (int side = 0; side < 2; side++) {
        const pgw_snapshot *s = side ? b : a;
        for (size_t i = 0; i < s->n_columns; i++) {
            if (!s->anomalies[i])
                continue;
            pgw_name_anomaly_report *r = &d->anomalies[d->n_anom++];
            r->column = ADUP(s->columns[i].name);
            r->in_to = side == 1;
            r->anomalies = s->anomalies[i];
            if (!r->column)
                goto nomem;
        }
    }
    d->cls = pgwi_diff_classify(d);
    pgwi_free(scratch);
    *out = d;
    return PGW_OK;
nomem:
    pgwi_free(cands);
    pgwi_free(scratch);
    pgw_diff_free(d);
    return pgwi_enomem(err);
}

void pgw_diff_free(pgw_diff *d)
{
    if (!d)
        return;
    pgwi_arena_free(&d->arena);
    pgwi_free(d);
}

const pgw_diff_side *pgw_diff_from(const pgw_diff *d)
{
    return d ? &d->from : NULL;
}

const pgw_diff_side *pgw_diff_to(const pgw_diff *d)
{
    return d ? &d->to : NULL;
}

bool pgw_diff_schema_changed(const pgw_diff *d)
{
    return d && d->schema_changed;
}

bool pgw_diff_reordered(const pgw_diff *d)
{
    return d && d->reordered;
}

pgw_change_class pgw_diff_class(const pgw_diff *d)
{
    return d ? d->cls : PGW_CHANGE_UNCHANGED;
}

#define LIST_ACCESSORS(kind, type, count, arr)                   \
    size_t pgw_diff_##kind##_count(const pgw_diff *d)            \
    {                                                            \
        return d ? d->count : 0;                                 \
    }                                                            \
    const type *pgw_diff_##kind(const pgw_diff *d, size_t i)     \
    {                                                            \
        return d && i < d->count ? &d->arr[i] : NULL;            \
    }

LIST_ACCESSORS(added, pgw_diff_column, n_added, added)
LIST_ACCESSORS(removed, pgw_diff_column, n_removed, removed)
LIST_ACCESSORS(type_changed, pgw_type_change, n_type, type_changed)
LIST_ACCESSORS(renamed, pgw_rename, n_renamed, renamed)
LIST_ACCESSORS(profile_changed, pgw_profile_change, n_profile, profile_changed)

size_t pgw_diff_name_anomaly_count(const pgw_diff *d)
{
    return d ? d->n_anom : 0;
}

const pgw_name_anomaly_report *pgw_diff_name_anomaly(const pgw_diff *d, size_t i)
{
    return d && i < d->n_anom ? &d->anomalies[i] : NULL;
}
