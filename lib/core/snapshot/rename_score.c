/*
 * lib/core/snapshot/rename_score.c — the combined rename score: the name
 * score (name_score.c), the profile similarity (similarity.c) and the shape
 * of the values (value_shape.c) of one (removed, added) pair, with type and
 * position evidence, in one score (issue 17). The formula is documented on
 * pgw_rename_weights and pgw_rename_parts (diff.h) and in docs/formats.md.
 * SPDX-License-Identifier: MIT
 */
#include "rename_score.h"

#include <math.h>
#include <string.h>

#include "diff_internal.h"
#include "similarity.h"
#include "value_shape.h"

/* Type evidence of two columns of one family but different types. */
#define TYPE_SAME_FAMILY 0.5
/* The most type or position (or both together) may move the score. */
#define ADJUST_MAX 0.5

/* Rounded to 4 decimals, as pgw_similarity is, so that a part read back
 * from JSON is the part that was computed: round(x * 10000) / 10000 for x
 * in [0, 1], without the libm call (a diff rounds five parts of every
 * removed x added pair). For 0 <= y < 2^52, y - trunc(y) is exact, so this
 * is round() (halves away from zero). */
static double round4(double x)
{
    double y = x * 10000.0, t = (double)(int64_t)y;
    return (y - t >= 0.5 ? t + 1.0 : t) / 10000.0;
}

static int check_weight(double w, double lo, double hi, const char *name, pgw_error *err)
{
    if (!(w >= lo && w <= hi))
        return pgwi_error(err, PGW_EINVAL, "diff options: rename_weights.%s %g is outside [%g, %g]",
                          name, w, lo, hi);
    return PGW_OK;
}

int pgwi_diff_options_read(pgw_diff_options *out, const pgw_diff_options *opts, pgw_error *err)
{
    const pgw_diff_options defaults = PGW_DIFF_OPTIONS_INIT;
    pgw_diff_options o = defaults;
    if (opts) {
        if (opts->version != 1 && opts->version != PGW_DIFF_OPTIONS_VERSION)
            return pgwi_error(err, PGW_EINVAL,
                              "diff options version %u is neither 1 nor %u (use "
                              "PGW_DIFF_OPTIONS_INIT)",
                              opts->version, (unsigned)PGW_DIFF_OPTIONS_VERSION);
        /* Version 1 had these three members only. */
        o.version = opts->version;
        o.rename_threshold = opts->rename_threshold;
        o.profile_threshold = opts->profile_threshold;
        if (opts->version == 1) {
            o.rename_method = PGW_RENAME_PROFILE;
        } else {
            o.rename_method = opts->rename_method;
            o.rename_weights = opts->rename_weights;
        }
    }
    if (!(o.rename_threshold >= 0 && o.rename_threshold <= 1))
        return pgwi_error(err, PGW_EINVAL, "diff options: rename_threshold %g is outside [0, 1]",
                          o.rename_threshold);
    if (!(o.profile_threshold >= 0 && o.profile_threshold <= 1))
        return pgwi_error(err, PGW_EINVAL,
                          "diff options: profile_threshold %g is outside [0, 1]",
                          o.profile_threshold);
    if (o.rename_method != PGW_RENAME_COMBINED && o.rename_method != PGW_RENAME_PROFILE)
        return pgwi_error(err, PGW_EINVAL,
                          "diff options: rename_method %d is neither PGW_RENAME_COMBINED nor "
                          "PGW_RENAME_PROFILE",
                          (int)o.rename_method);
    const pgw_rename_weights *w = &o.rename_weights;
    int rc;
    if ((rc = check_weight(w->name, 0, INFINITY, "name", err)) < 0 ||
        (rc = check_weight(w->values, 0, INFINITY, "values", err)) < 0 ||
        (rc = check_weight(w->type, 0, ADJUST_MAX, "type", err)) < 0 ||
        (rc = check_weight(w->position, 0, ADJUST_MAX, "position", err)) < 0 ||
        (rc = check_weight(w->shape, 0, 1, "shape", err)) < 0 ||
        (rc = check_weight(w->contrast, 0, 1, "contrast", err)) < 0)
        return rc;
    if (!isfinite(w->name) || !isfinite(w->values) || !(w->name + w->values > 0) ||
        !isfinite(w->name + w->values))
        return pgwi_error(err, PGW_EINVAL,
                          "diff options: rename_weights.name (%g) and .values (%g) must be "
                          "finite with a sum above 0",
                          w->name, w->values);
    if (w->type + w->position > ADJUST_MAX)
        return pgwi_error(err, PGW_EINVAL,
                          "diff options: rename_weights.type + .position is %g, above %g (type "
                          "and position are weak evidence: they only scale the name and value "
                          "evidence)",
                          w->type + w->position, ADJUST_MAX);
    *out = o;
    return PGW_OK;
}

void pgwi_rename_parts_unknown(pgw_rename_parts *p)
{
    p->score = p->name = p->values = p->profile = p->shape = p->type = p->position =
        p->contrast = -1.0;
}

/* 1 for the same type, TYPE_SAME_FAMILY for one family, else 0. */
static double type_evidence(const pgw_snapshot *a, size_t i, const pgw_snapshot *b, size_t j)
{
    if (strcmp(a->norm_type[i], b->norm_type[j]) == 0)
        return 1.0;
    if (a->family[i] == b->family[j] && a->family[i] != PGWI_FAMILY_OTHER)
        return TYPE_SAME_FAMILY;
    return 0.0;
}

/* 1 - |ra - rb|, r = (position - 1/2) / columns. */
static double position_evidence(const pgw_snapshot *a, size_t i, const pgw_snapshot *b,
                                size_t j)
{
    double ra = ((double)a->columns[i].position - 0.5) / (double)a->n_columns;
    double rb = ((double)b->columns[j].position - 0.5) / (double)b->n_columns;
    return 1.0 - fabs(ra - rb);
}

/* The shape of the values S: for two numeric or two temporal columns that
 * have values outside their most-common values (measurements rather than
 * codes), the whole value-shape score, with the relabelling reading in it
 * for its frequency part; else, when both columns keep most-common values,
 * the relabelling reading alone (the frequency profiles, damped by the
 * share deviation that a change of rows and sampling do not explain);
 * else the value-shape score of the parts that could be read; else -1. */
static double shape_reading(const pgw_snapshot *a, size_t i, const pgw_snapshot *b, size_t j)
{
    const pgwi_prep *pa = &a->prep[i], *pb = &b->prep[j];
    double f = pgwi_value_relabelling(a, i, b, j, NULL);
    bool measured = pa->n_cdf && pb->n_cdf && pa->numeric == pb->numeric &&
                    pa->temporal == pb->temporal && (pa->numeric || pa->temporal) &&
                    (pa->rank_tail || pb->rank_tail || !pa->n_rank || !pb->n_rank);
    if (f >= 0 && !measured)
        return round4(f);
    pgwi_value_evidence ve;
    pgwi_value_evidence_of(&ve, a, i, b, j);
    if (f >= 0)
        return pgwi_value_evidence_rescore(&ve, f);
    if (ve.pattern >= 0 || ve.range >= 0)
        return ve.score;
    return -1.0;
}

/* The values channel V of column i of a and column j of b, with its two
 * readings (profile and S); all -1 unless both have sampled values. */
static void values_of(pgw_rename_parts *out, const pgw_snapshot *a, size_t i,
                      const pgw_snapshot *b, size_t j, const pgw_rename_weights *w)
{
    out->profile = out->shape = out->values = -1.0;
    if (a->prep[i].has_values && b->prep[j].has_values) {
        pgw_similarity s;
        pgwi_similarity(&s, a, i, b, j);
        out->profile = s.score;
        out->shape = shape_reading(a, i, b, j);
        out->values = out->shape >= 0
                          ? round4((1.0 - w->shape) * out->profile + w->shape * out->shape)
                          : out->profile;
    }
}

/* The score from the rounded parts (the formula on pgw_rename_weights). */
static double score_of(const pgw_rename_parts *p, const pgw_rename_weights *w)
{
    double v = p->values > 0 ? p->values : 0.0, c = p->contrast * w->contrast;
    if (p->contrast >= 0)
        v = v > c ? (v - c) / (1.0 - c) : 0.0;
    double e = (w->name * p->name + w->values * v) / (w->name + w->values);
    double adjust = 1.0 - w->type - w->position + w->type * p->type + w->position * p->position;
    double score = e * adjust;
    return score < 0 ? 0 : score > 1 ? 1 : round4(score);
}

bool pgwi_rename_contrast_applies(const pgw_rename_parts *p, const pgw_rename_weights *w)
{
    return p->values > 0 && (!w || w->contrast > 0);
}

double pgwi_rename_side_contrast(const pgw_snapshot *a, size_t i, const pgw_snapshot *b,
                                 size_t j, bool removed, const int32_t *m, size_t skip,
                                 size_t skip2, const pgw_rename_weights *w)
{
    double best = 0.0;
    const pgw_snapshot *other = removed ? b : a;
    const pgw_snapshot *self = removed ? a : b;
    size_t c = removed ? i : j;
    if (!self->prep[c].has_values)
        return 0.0;
    for (size_t q = 0; q < other->n_columns; q++) {
        /* A kept column with sampled values of the same type family: one
         * of another family is no rival (its type is evidence against it,
         * and its values channel is low). */
        if (m[q] < 0 || q == skip || q == skip2 || !other->prep[q].has_values ||
            other->family[q] != self->family[c] ||
            (self->family[c] == PGWI_FAMILY_OTHER &&
             strcmp(other->norm_type[q], self->norm_type[c]) != 0))
            continue;
        pgw_rename_parts p;
        if (removed)
            values_of(&p, a, i, b, q, w);
        else
            values_of(&p, a, q, b, j, w);
        if (p.values > best)
            best = p.values;
    }
    return best;
}

double pgwi_rename_pair_contrast(const pgw_snapshot *a, size_t i, const pgw_snapshot *b,
                                 size_t j, const int32_t *ma, const int32_t *mb,
                                 const pgw_rename_weights *w)
{
    /* The kept columns other than the pair's own: a column of b named as
     * a's column i (i is then no removed column) and one of a named as b's
     * column j are not its rivals. */
    size_t own_b = ma[i] >= 0 ? (size_t)ma[i] : SIZE_MAX;
    size_t own_a = mb[j] >= 0 ? (size_t)mb[j] : SIZE_MAX;
    double ca = pgwi_rename_side_contrast(a, i, b, j, true, mb, j, own_b, w);
    double cb = pgwi_rename_side_contrast(a, i, b, j, false, ma, i, own_a, w);
    return ca > cb ? ca : cb;
}

void pgwi_rename_contrast_apply(pgw_rename_parts *p, double contrast,
                                const pgw_rename_weights *w)
{
    p->contrast = pgwi_rename_contrast_applies(p, w) ? contrast : -1.0;
    p->score = score_of(p, w);
}

void pgwi_rename_parts_of(pgw_rename_parts *out, const pgw_snapshot *a, size_t i,
                          const pgwi_name_prep *na, const pgw_snapshot *b, size_t j,
                          const pgwi_name_prep *nb, const pgw_rename_weights *w)
{
    double n;
    if (na && nb) {
        n = pgwi_name_score_prepared(na, nb, NULL);
    } else {
        n = pgwi_name_score(a->columns[i].name, b->columns[j].name, NULL);
    }
    out->name = round4(n);
    out->type = type_evidence(a, i, b, j);
    out->position = round4(position_evidence(a, i, b, j));
    values_of(out, a, i, b, j, w);
    out->contrast = -1.0;
    out->score = score_of(out, w);
}

pgw_rename_evidence pgwi_rename_evidence_of(const pgw_rename_parts *p)
{
    bool name = p->name >= PGWI_EVIDENCE_BAR, values = p->values >= PGWI_EVIDENCE_BAR;
    if (name && values)
        return PGW_EVIDENCE_BOTH;
    if (name)
        return PGW_EVIDENCE_NAME;
    if (values)
        return PGW_EVIDENCE_VALUES;
    if (p->name == p->values)
        return PGW_EVIDENCE_BOTH;
    return p->name > p->values ? PGW_EVIDENCE_NAME : PGW_EVIDENCE_VALUES;
}

int pgw_rename_score(double *out, pgw_rename_parts *parts, const pgw_snapshot *a, size_t col_a,
                     const pgw_snapshot *b, size_t col_b, const pgw_diff_options *opts,
                     pgw_error *err)
{
    int rc;
    if ((rc = PGWI_CHECK_NONNULL(err, "rename_score", out, a, b)) < 0)
        return rc;
    if (col_a >= a->n_columns || col_b >= b->n_columns)
        return pgwi_error(err, PGW_EINVAL,
                          "rename_score: column index out of range (%zu of %zu, %zu of %zu)",
                          col_a, a->n_columns, col_b, b->n_columns);
    pgw_diff_options o;
    if ((rc = pgwi_diff_options_read(&o, opts, err)) < 0)
        return rc;
    const pgw_rename_weights *w = &o.rename_weights;
    pgw_rename_parts p;
    pgwi_rename_parts_of(&p, a, col_a, NULL, b, col_b, NULL, w);
    if (pgwi_rename_contrast_applies(&p, w)) {
        /* ma[i]: the column of b named as a's column i, or -1; mb likewise. */
        int32_t *ma = pgwi_malloc((a->n_columns + b->n_columns) * sizeof *ma);
        if (!ma)
            return pgwi_error(err, PGW_ENOMEM, "rename_score: out of memory");
        int32_t *mb = ma + a->n_columns;
        pgwi_match_names(a, b, ma, mb);
        double c = pgwi_rename_pair_contrast(a, col_a, b, col_b, ma, mb, w);
        pgwi_free(ma);
        pgwi_rename_contrast_apply(&p, c, w);
    }
    *out = p.score;
    if (parts)
        *parts = p;
    return PGW_OK;
}
