/*
 * lib/core/snapshot/diff.c — diff_snapshots and the diff's accessors.
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "assign.h"
#include "diff_internal.h"
#include "name_score.h"
#include "rename_score.h"
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

/* Best first for the combined method: higher score, then earlier in a,
 * then earlier in b. */
static int cmp_scored(const void *x, const void *y)
{
    const cand *p = x, *q = y;
    if (p->score != q->score)
        return p->score > q->score ? -1 : 1;
    if (p->r != q->r)
        return p->r < q->r ? -1 : 1;
    return p->d < q->d ? -1 : (p->d > q->d);
}

/* Best first for the rules of format 1: name evidence, then as above. */
static int cmp_cand(const void *x, const void *y)
{
    const cand *p = x, *q = y;
    if (p->name != q->name)
        return p->name ? -1 : 1;
    return cmp_scored(x, y);
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
void pgwi_match_names(const pgw_snapshot *a, const pgw_snapshot *b, int32_t *ma, int32_t *mb)
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

#define ADUP(s) pgwi_arena_strdup(ar, (s))

/* How the columns of a and b pair up. ma[i] is the index in b of a's
 * column i when b has a column of that name, else -1; mb[j] likewise for
 * b. pair_renames() marks the columns it pairs with -2. rem and add list
 * the unmatched columns of a (nr of them) and of b (nd). */
typedef struct pairing {
    int32_t *ma, *mb, *rem, *add;
    size_t nr, nd;
} pairing;

/* Whether the kept columns appear in b in another order than in a. */
static bool kept_columns_reordered(const pgw_snapshot *a, const pairing *pr)
{
    int32_t last = -1;
    for (size_t i = 0; i < a->n_columns; i++)
        if (pr->ma[i] >= 0) {
            if (pr->ma[i] < last)
                return true;
            last = pr->ma[i];
        }
    return false;
}

/* The type and profile changes of the kept columns, in b's order. */
static int diff_kept_columns(pgw_diff *d, const pgw_snapshot *a, const pgw_snapshot *b,
                             const pairing *pr, const pgw_diff_options *o)
{
    pgwi_arena *ar = &d->arena;
    size_t nk = 0;
    for (size_t j = 0; j < b->n_columns; j++)
        nk += pr->mb[j] >= 0;
    if (nk) {
        d->type_changed = pgwi_arena_calloc(ar, nk, sizeof *d->type_changed);
        d->profile_changed = pgwi_arena_calloc(ar, nk, sizeof *d->profile_changed);
        if (!d->type_changed || !d->profile_changed)
            return PGW_ENOMEM;
    }
    for (size_t j = 0; j < b->n_columns; j++) {
        if (pr->mb[j] < 0)
            continue;
        size_t i = (size_t)pr->mb[j];
        if (strcmp(a->norm_type[i], b->norm_type[j]) != 0) {
            pgw_type_change *t = &d->type_changed[d->n_type++];
            t->column = ADUP(b->columns[j].name);
            t->from = ADUP(a->columns[i].type);
            t->to = ADUP(b->columns[j].type);
            if (!t->column || !t->from || !t->to)
                return PGW_ENOMEM;
        }
        if (a->prep[i].has_values && b->prep[j].has_values) {
            pgw_similarity s;
            pgwi_similarity(&s, a, i, b, j);
            if (s.score < o->profile_threshold) {
                pgw_profile_change *p = &d->profile_changed[d->n_profile++];
                p->column = ADUP(b->columns[j].name);
                p->score = s.score;
                if (!p->column)
                    return PGW_ENOMEM;
            }
        }
    }
    return PGW_OK;
}

/* Every (removed, added) pair whose folded names agree or whose values are
 * similar enough, into a temporary array (pgwi_free). */
static int rename_candidates(cand **out, size_t *n_out, const pgw_snapshot *a,
                             const pgw_snapshot *b, const pairing *pr, const pgw_diff_options *o)
{
    cand *cands = NULL;
    size_t nc = 0, cap = 0;
    for (size_t x = 0; x < pr->nr; x++) {
        size_t i = (size_t)pr->rem[x];
        for (size_t y = 0; y < pr->nd; y++) {
            size_t j = (size_t)pr->add[y];
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
                cand *grown = pgwi_reallocarray(cands, ncap, sizeof *cands);
                if (!grown) {
                    pgwi_free(cands);
                    return PGW_ENOMEM;
                }
                cands = grown;
                cap = ncap;
            }
            cands[nc++] = (cand){(uint32_t)i, (uint32_t)j, score, name, values};
        }
    }
    *out = cands;
    *n_out = nc;
    return PGW_OK;
}

/* Records the rename of a's column c->r as b's column c->d: its names,
 * types and score, and its parts with the diff's weights. */
static int add_rename(pgw_diff *d, const pgw_snapshot *a, const pgw_snapshot *b, pairing *pr,
                      const cand *c, pgw_rename_evidence evidence, const pgw_rename_parts *parts)
{
    pgwi_arena *ar = &d->arena;
    pr->ma[c->r] = pr->mb[c->d] = -2;
    pgw_rename *r = &d->renamed[d->n_renamed++];
    r->from = ADUP(a->columns[c->r].name);
    r->to = ADUP(b->columns[c->d].name);
    r->from_type = ADUP(a->columns[c->r].type);
    r->to_type = ADUP(b->columns[c->d].type);
    r->score = c->score;
    r->evidence = evidence;
    r->parts = *parts;
    if (!r->from || !r->to || !r->from_type || !r->to_type)
        return PGW_ENOMEM;
    return PGW_OK;
}

/* PGW_RENAME_PROFILE: the rules of format 1, greedy, best candidate first,
 * each column in at most one pair. */
static int pair_by_profile(pgw_diff *d, const pgw_snapshot *a, const pgw_snapshot *b,
                           pairing *pr, const pgw_diff_options *o)
{
    cand *cands;
    size_t nc;
    int rc;
    if ((rc = rename_candidates(&cands, &nc, a, b, pr, o)) < 0)
        return rc;
    if (nc)
        qsort(cands, nc, sizeof *cands, cmp_cand);
    for (size_t k = 0; k < nc; k++) {
        cand *c = &cands[k];
        if (pr->ma[c->r] == -2 || pr->mb[c->d] == -2)
            continue;
        pgw_rename_parts parts;
        const pgw_rename_weights *w = &o->rename_weights;
        pgwi_rename_parts_of(&parts, a, c->r, NULL, b, c->d, NULL, w);
        if (pgwi_rename_contrast_applies(&parts, w))
            pgwi_rename_contrast_apply(
                &parts, pgwi_rename_pair_contrast(a, c->r, b, c->d, pr->ma, pr->mb, w), w);
        pgw_rename_evidence ev = c->name && c->values ? PGW_EVIDENCE_BOTH
                                 : c->name            ? PGW_EVIDENCE_NAME
                                                      : PGW_EVIDENCE_VALUES;
        if ((rc = add_rename(d, a, b, pr, c, ev, &parts)) < 0)
            break;
    }
    pgwi_free(cands);
    return rc;
}

/* A chosen pair of the combined method: its place in the removed (x) and
 * added (y) lists, and its columns and score. */
typedef struct chosen_pair {
    cand c;
    uint32_t x, y;
} chosen_pair;

static int cmp_chosen(const void *p, const void *q)
{
    return cmp_scored(&((const chosen_pair *)p)->c, &((const chosen_pair *)q)->c);
}

/* Up to this many (removed, added) pairs, every pair's parts are kept for
 * the renames chosen (56 KB); above it, the chosen pairs are scored again
 * (a 300 x 300 diff would keep 5 MB). */
#define PARTS_KEPT 1024

/* The contrast of a pair (x, y) of the removed and added lists, from the
 * two sides' memos (side[x] for removed x, side[nr + y] for added y; below
 * -1 until computed). */
static double pair_contrast(double *side, const pgw_snapshot *a, const pgw_snapshot *b,
                            const pairing *pr, size_t x, size_t y, const pgw_rename_weights *w)
{
    size_t i = (size_t)pr->rem[x], j = (size_t)pr->add[y];
    if (side[x] < -1.0)
        side[x] = pgwi_rename_side_contrast(a, i, b, j, true, pr->mb, SIZE_MAX, SIZE_MAX, w);
    if (side[pr->nr + y] < -1.0)
        side[pr->nr + y] =
            pgwi_rename_side_contrast(a, i, b, j, false, pr->ma, SIZE_MAX, SIZE_MAX, w);
    return side[x] > side[pr->nr + y] ? side[x] : side[pr->nr + y];
}

/* PGW_RENAME_COMBINED: the combined score of every (removed, added) pair,
 * then the optimal one-to-one assignment of the pairs at or above the
 * threshold (and above 0), listed best first. The contrast only lowers a
 * score, so it is read only for pairs that clear the threshold without
 * it, and once per column. One scratch block holds the prepared names,
 * the score matrix (and for small diffs every pair's parts), the two
 * sides' contrasts, the assignment and the chosen pairs. */
static int pair_by_score(pgw_diff *d, const pgw_snapshot *a, const pgw_snapshot *b,
                         pairing *pr, const pgw_diff_options *o)
{
    size_t nr = pr->nr, nd = pr->nd;
    const pgw_rename_weights *w = &o->rename_weights;
    /* nr, nd <= 1600 columns: these sizes cannot overflow. */
    size_t names_bytes = (nr + nd) * sizeof(pgwi_name_prep);
    size_t score_bytes = nr * nd * sizeof(double);
    size_t parts_bytes = nr * nd <= PARTS_KEPT ? nr * nd * sizeof(pgw_rename_parts) : 0;
    size_t chosen_bytes = nr * sizeof(chosen_pair);
    size_t side_bytes = (nr + nd) * sizeof(double);
    char *block = pgwi_malloc(names_bytes + score_bytes + parts_bytes + chosen_bytes +
                              side_bytes + nr * sizeof(int32_t));
    if (!block)
        return PGW_ENOMEM;
    pgwi_name_prep *names = (pgwi_name_prep *)block;
    double *score = (double *)(block + names_bytes);
    pgw_rename_parts *kept = parts_bytes ? (pgw_rename_parts *)(block + names_bytes + score_bytes)
                                         : NULL;
    chosen_pair *chosen = (chosen_pair *)(block + names_bytes + score_bytes + parts_bytes);
    double *side = (double *)(block + names_bytes + score_bytes + parts_bytes + chosen_bytes);
    int32_t *to = (int32_t *)(block + names_bytes + score_bytes + parts_bytes + chosen_bytes +
                              side_bytes);
    for (size_t k = 0; k < nr + nd; k++)
        side[k] = -2.0;
    for (size_t x = 0; x < nr; x++)
        pgwi_name_prepare(&names[x], a->columns[pr->rem[x]].name);
    for (size_t y = 0; y < nd; y++)
        pgwi_name_prepare(&names[nr + y], b->columns[pr->add[y]].name);
    for (size_t x = 0; x < nr; x++)
        for (size_t y = 0; y < nd; y++) {
            pgw_rename_parts p;
            pgwi_rename_parts_of(&p, a, (size_t)pr->rem[x], &names[x], b, (size_t)pr->add[y],
                                 &names[nr + y], w);
            if (p.score >= o->rename_threshold && pgwi_rename_contrast_applies(&p, w))
                pgwi_rename_contrast_apply(&p, pair_contrast(side, a, b, pr, x, y, w), w);
            score[x * nd + y] = p.score > 0 ? p.score : -1.0; /* 0 is no evidence */
            if (kept)
                kept[x * nd + y] = p;
        }
    int rc;
    if ((rc = pgwi_assign(to, score, nr, nd, o->rename_threshold)) < 0)
        goto done;
    size_t n = 0;
    for (size_t x = 0; x < nr; x++)
        if (to[x] >= 0) {
            size_t y = (size_t)to[x];
            chosen[n++] = (chosen_pair){{(uint32_t)pr->rem[x], (uint32_t)pr->add[y],
                                         score[x * nd + y], false, false},
                                        (uint32_t)x, (uint32_t)y};
        }
    if (n)
        qsort(chosen, n, sizeof *chosen, cmp_chosen);
    for (size_t k = 0; k < n; k++) {
        const chosen_pair *c = &chosen[k];
        pgw_rename_parts p;
        if (kept)
            p = kept[(size_t)c->x * nd + c->y];
        else {
            pgwi_rename_parts_of(&p, a, c->c.r, &names[c->x], b, c->c.d, &names[nr + c->y], w);
            if (pgwi_rename_contrast_applies(&p, w))
                pgwi_rename_contrast_apply(&p, pair_contrast(side, a, b, pr, c->x, c->y, w), w);
        }
        if ((rc = add_rename(d, a, b, pr, &c->c, pgwi_rename_evidence_of(&p), &p)) < 0)
            break;
    }
done:
    pgwi_free(block);
    return rc;
}

/* Lists the unmatched columns of each side, then pairs them as renames by
 * the options' method. */
static int pair_renames(pgw_diff *d, const pgw_snapshot *a, const pgw_snapshot *b, pairing *pr,
                        const pgw_diff_options *o)
{
    for (size_t i = 0; i < a->n_columns; i++)
        if (pr->ma[i] < 0)
            pr->rem[pr->nr++] = (int32_t)i;
    for (size_t j = 0; j < b->n_columns; j++)
        if (pr->mb[j] < 0)
            pr->add[pr->nd++] = (int32_t)j;
    if (!pr->nr || !pr->nd)
        return PGW_OK;
    d->renamed = pgwi_arena_calloc(&d->arena, pr->nr < pr->nd ? pr->nr : pr->nd,
                                   sizeof *d->renamed);
    if (!d->renamed)
        return PGW_ENOMEM;
    return o->rename_method == PGW_RENAME_PROFILE ? pair_by_profile(d, a, b, pr, o)
                                                  : pair_by_score(d, a, b, pr, o);
}

/* The unmatched columns of one side that no rename paired, in order. */
static int list_unpaired(pgw_diff_column **out, size_t *n_out, pgwi_arena *ar,
                         const pgw_snapshot *s, const int32_t *match, const int32_t *unmatched,
                         size_t n)
{
    size_t left = 0;
    for (size_t x = 0; x < n; x++)
        left += match[unmatched[x]] == -1;
    if (left && !(*out = pgwi_arena_calloc(ar, left, sizeof **out)))
        return PGW_ENOMEM;
    for (size_t x = 0; x < n; x++) {
        size_t i = (size_t)unmatched[x];
        if (match[i] != -1)
            continue;
        pgw_diff_column *c = &(*out)[(*n_out)++];
        c->column = ADUP(s->columns[i].name);
        c->type = ADUP(s->columns[i].type);
        c->position = s->columns[i].position;
        if (!c->column || !c->type)
            return PGW_ENOMEM;
    }
    return PGW_OK;
}

/* The name anomalies of a's columns, then of b's. */
static int list_name_anomalies(pgw_diff *d, const pgw_snapshot *a, const pgw_snapshot *b)
{
    pgwi_arena *ar = &d->arena;
    size_t n = 0;
    for (size_t i = 0; i < a->n_columns; i++)
        n += a->anomalies[i] != 0;
    for (size_t j = 0; j < b->n_columns; j++)
        n += b->anomalies[j] != 0;
    if (n && !(d->anomalies = pgwi_arena_calloc(ar, n, sizeof *d->anomalies)))
        return PGW_ENOMEM;
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
                return PGW_ENOMEM;
        }
    }
    return PGW_OK;
}

int pgw_diff_snapshots(pgw_diff **out, const pgw_snapshot *a, const pgw_snapshot *b,
                       const pgw_diff_options *opts, pgw_error *err)
{
    int rc;
    if ((rc = PGWI_CHECK_NONNULL(err, "diff_snapshots", out, a, b)) < 0)
        return rc;
    pgw_diff_options opt;
    const pgw_diff_options *o = &opt;
    if ((rc = pgwi_diff_options_read(&opt, opts, err)) < 0)
        return rc;

    size_t na = a->n_columns, nb = b->n_columns;
    pgw_diff *d = pgwi_calloc(1, sizeof *d);
    /* One scratch block: name matches, removed and added index lists. */
    int32_t *scratch = pgwi_calloc(2 * (na + nb) + 2, sizeof *scratch);
    if (!d || !scratch) {
        rc = PGW_ENOMEM;
        goto done;
    }
    pairing pr = {scratch, scratch + na, scratch + na + nb, scratch + 2 * na + nb + 1, 0, 0};
    pgwi_match_names(a, b, pr.ma, pr.mb);
    if ((rc = copy_side(&d->from, &d->arena, a)) < 0 ||
        (rc = copy_side(&d->to, &d->arena, b)) < 0)
        goto done;
    d->schema_changed = strcmp(a->hash, b->hash) != 0;
    d->method = o->rename_method;

    d->reordered = kept_columns_reordered(a, &pr);
    if ((rc = diff_kept_columns(d, a, b, &pr, o)) < 0)
        goto done;
    if ((rc = pair_renames(d, a, b, &pr, o)) < 0)
        goto done;
    if ((rc = list_unpaired(&d->removed, &d->n_removed, &d->arena, a, pr.ma, pr.rem, pr.nr)) < 0)
        goto done;
    if ((rc = list_unpaired(&d->added, &d->n_added, &d->arena, b, pr.mb, pr.add, pr.nd)) < 0)
        goto done;
    if ((rc = list_name_anomalies(d, a, b)) < 0)
        goto done;
    d->cls = pgwi_diff_classify(d);
done:
    pgwi_free(scratch);
    if (rc < 0) {
        pgw_diff_free(d);
        return pgwi_enomem(err);
    }
    *out = d;
    return PGW_OK;
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

pgw_rename_method pgw_diff_rename_method(const pgw_diff *d)
{
    return d ? d->method : PGW_RENAME_COMBINED;
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
