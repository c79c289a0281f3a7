/*
 * lib/core/snapshot/similarity.c — profile_similarity: how alike two columns' values
 * are, from the statistics their snapshots keep. The formula is documented
 * on pgw_similarity (diff.h) and in docs/formats.md.
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <string.h>

#include "pgwitness/diff.h"
#include "similarity.h"

#define W_VALUES 0.35
#define W_DISTRIBUTION 0.35
#define W_NULL 0.15
#define W_DISTINCT 0.15
#define TYPE_FACTOR_OTHER_FAMILY 0.8

/* Frequency-weighted Jaccard (Ruzicka) of two MCV lists sorted by hash:
 * sum of min(fa, fb) over sum of max(fa, fb). The merge advances without
 * branching on the comparison (a diff runs it for every removed x added
 * pair, and the outcome of each comparison is unpredictable); the sum of
 * the maxima is the two totals less the sum of the minima. */
static double weighted_jaccard(const pgwi_prep *a, const pgwi_prep *b)
{
    double smin = 0;
    size_t i = 0, j = 0;
    while (i < a->n_mcv && j < b->n_mcv) {
        uint64_t x = a->mcv_hash[i], y = b->mcv_hash[j];
        double fa = a->mcv_freq[i], fb = b->mcv_freq[j];
        smin += x == y ? (fa < fb ? fa : fb) : 0.0;
        i += x <= y;
        j += y <= x;
    }
    double smax = a->mcv_total + b->mcv_total - smin;
    return smax > 0 ? smin / smax : 0.0;
}

/* Plain Jaccard of the sampled-value sets (sorted, unique), merged as
 * above. */
static double set_jaccard(const pgwi_prep *a, const pgwi_prep *b)
{
    size_t i = 0, j = 0, inter = 0;
    while (i < a->n_vals && j < b->n_vals) {
        uint64_t x = a->val_hash[i], y = b->val_hash[j];
        inter += x == y;
        i += x <= y;
        j += y <= x;
    }
    size_t uni = a->n_vals + b->n_vals - inter;
    return uni ? (double)inter / (double)uni : 0.0;
}

/* The CDF of p at x: its left limit F(x-) when `left`, else F(x). Between
 * breakpoints the CDF is linear; *cursor advances monotonically over p's
 * breakpoints as x grows (x must be non-decreasing across calls with the
 * same cursor, left before right at equal x). */
static double cdf_at(const pgwi_prep *p, size_t *cursor, double x, bool left)
{
    size_t k = *cursor;
    while (k < p->n_cdf && p->cdf_x[k] < x)
        k++;
    *cursor = k;
    if (k < p->n_cdf && p->cdf_x[k] == x)
        return left ? p->cdf_lo[k] : p->cdf_hi[k];
    if (k == 0)
        return 0.0;
    if (k == p->n_cdf)
        return 1.0;
    /* Strictly between breakpoints k-1 and k. */
    double x0 = p->cdf_x[k - 1], x1 = p->cdf_x[k];
    double f0 = p->cdf_hi[k - 1], f1 = p->cdf_lo[k];
    return f0 + (f1 - f0) * (x - x0) / (x1 - x0);
}

/* Kolmogorov-Smirnov distance sup |Fa - Fb|. Both CDFs are linear between
 * the union of their breakpoints, so the supremum is reached at a
 * breakpoint, on its left or right limit. */
static double ks_distance(const pgwi_prep *a, const pgwi_prep *b)
{
    if (a->cdf_x[a->n_cdf - 1] < b->cdf_x[0] || b->cdf_x[b->n_cdf - 1] < a->cdf_x[0])
        return 1.0; /* disjoint ranges */
    /* The same distribution (a kept column whose values did not change, the
     * common case of a diff): distance 0, without the merge. */
    size_t bytes = a->n_cdf * sizeof(double);
    if (a->n_cdf == b->n_cdf && memcmp(a->cdf_x, b->cdf_x, bytes) == 0 &&
        memcmp(a->cdf_lo, b->cdf_lo, bytes) == 0 && memcmp(a->cdf_hi, b->cdf_hi, bytes) == 0)
        return 0.0;
    size_t i = 0, j = 0;       /* merge position */
    size_t ca = 0, cb = 0;     /* cdf_at cursors */
    double d = 0;
    while (i < a->n_cdf || j < b->n_cdf) {
        double x;
        if (j == b->n_cdf || (i < a->n_cdf && a->cdf_x[i] <= b->cdf_x[j]))
            x = a->cdf_x[i];
        else
            x = b->cdf_x[j];
        while (i < a->n_cdf && a->cdf_x[i] == x)
            i++;
        while (j < b->n_cdf && b->cdf_x[j] == x)
            j++;
        double l = fabs(cdf_at(a, &ca, x, true) - cdf_at(b, &cb, x, true));
        double r = fabs(cdf_at(a, &ca, x, false) - cdf_at(b, &cb, x, false));
        if (l > d)
            d = l;
        if (r > d)
            d = r;
    }
    return d > 1.0 ? 1.0 : d;
}

/* n_distinct on an absolute scale when possible. Returns false when the
 * two cannot be put on one scale. */
static bool distinct_closeness(double *out, double da, bool ra_known, int64_t ra, double db,
                               bool rb_known, int64_t rb)
{
    if (da == 0 || db == 0)
        return false; /* unknown */
    if ((da < 0) != (db < 0)) {
        /* Mixed conventions: convert the fraction with its row estimate. */
        if (da < 0) {
            if (!ra_known || ra <= 0)
                return false;
            da = -da * (double)ra;
        } else {
            if (!rb_known || rb <= 0)
                return false;
            db = -db * (double)rb;
        }
    }
    da = fabs(da);
    db = fabs(db);
    *out = da < db ? da / db : db / da;
    return true;
}

void pgwi_similarity(pgw_similarity *out, const pgw_snapshot *sa, size_t ia,
                     const pgw_snapshot *sb, size_t ib)
{
    out->score = 0.0;
    out->values = out->distribution = out->null_frac = out->n_distinct = -1.0;
    out->type_factor = 1.0;
    const pgwi_prep *a = &sa->prep[ia], *b = &sb->prep[ib];
    int fa = sa->family[ia], fb = sb->family[ib];
    bool same_family = fa == fb && (fa != PGWI_FAMILY_OTHER ||
                                    strcmp(sa->norm_type[ia], sb->norm_type[ib]) == 0);
    out->type_factor = same_family ? 1.0 : TYPE_FACTOR_OTHER_FAMILY;
    if (!a->has_values || !b->has_values)
        return; /* no evidence is not similarity */
    const pgw_profile *pa = sa->columns[ia].profile, *pb = sb->columns[ib].profile;

    double sum = 0, weight = 0;
    if ((a->sig & b->sig) == 0)
        out->values = 0.0; /* no common value hash at all */
    else
        out->values = (a->n_mcv && b->n_mcv) ? weighted_jaccard(a, b) : set_jaccard(a, b);
    double wv = W_VALUES;
    if (a->numeric && b->numeric && a->n_cdf && b->n_cdf) {
        out->distribution = 1.0 - ks_distance(a, b);
        sum += W_DISTRIBUTION * out->distribution;
        weight += W_DISTRIBUTION;
    } else {
        wv += W_DISTRIBUTION;
    }
    sum += wv * out->values;
    weight += wv;
    out->null_frac = 1.0 - fabs(pa->null_frac - pb->null_frac);
    sum += W_NULL * out->null_frac;
    weight += W_NULL;
    double dc;
    if (distinct_closeness(&dc, pa->n_distinct, sa->has_rows, sa->rows, pb->n_distinct,
                           sb->has_rows, sb->rows)) {
        out->n_distinct = dc;
        sum += W_DISTINCT * dc;
        weight += W_DISTINCT;
    }
    double score = out->type_factor * sum / weight;
    /* Clamp rounding noise; report with 4 decimals so that JSON output and
     * comparisons against thresholds agree. */
    if (score < 0)
        score = 0;
    if (score > 1)
        score = 1;
    out->score = round(score * 10000.0) / 10000.0;
}

int pgw_profile_similarity(double *out, pgw_similarity *detail, const pgw_snapshot *a,
                           size_t col_a, const pgw_snapshot *b, size_t col_b, pgw_error *err)
{
    if (PGWI_CHECK_NONNULL(err, "profile_similarity", out, a, b) < 0)
        return PGW_EINVAL;
    if (col_a >= a->n_columns || col_b >= b->n_columns)
        return pgwi_error(err, PGW_EINVAL,
                          "profile_similarity: column index out of range (%zu of %zu, %zu of %zu)",
                          col_a, a->n_columns, col_b, b->n_columns);
    pgw_similarity s;
    pgwi_similarity(&s, a, col_a, b, col_b);
    *out = s.score;
    if (detail)
        *detail = s;
    return PGW_OK;
}
