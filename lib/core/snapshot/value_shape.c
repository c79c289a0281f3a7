/*
 * lib/core/snapshot/value_shape.c — value evidence that survives a change of
 * row set, period, region or labels: range, shape, pattern, length, digits
 * and the frequency profile. The formulas are documented in value_shape.h.
 * SPDX-License-Identifier: MIT
 */
#include "value_shape.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W_PATTERN 0.25
#define W_LENGTH 0.10
#define W_DIGITS 0.10
#define W_SHAPE 0.20
#define W_RANGE 0.15
#define W_FREQ 0.20

/* A tail share below this is rounding noise, not values outside the MCVs. */
#define TAIL_EPSILON 1e-9

/* ------------------------------------------------------------------ */
/* temporal values                                                     */

bool pgwi_temporal_seconds(const char *s, double *out)
{
    /* A cheap look before the parser: YYYY-MM-... */
    for (int i = 0; i < 4; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    if (s[4] != '-')
        return false;
    int64_t usec;
    if (pgw_timestamp_parse(&usec, s, NULL) < 0) {
        /* PostgreSQL's timestamp (without time zone) output has no zone:
         * read it as UTC. A date-only value already parsed above. */
        char buf[64];
        size_t len = strlen(s);
        if (len <= 10 || len + 2 > sizeof buf)
            return false;
        memcpy(buf, s, len);
        buf[len] = 'Z';
        buf[len + 1] = '\0';
        if (pgw_timestamp_parse(&usec, buf, NULL) < 0)
            return false;
    }
    *out = (double)usec / 1e6;
    return true;
}

/* ------------------------------------------------------------------ */
/* preparation                                                         */

/* FNV-1a, symbol by symbol: pattern signatures are short and few per
 * column, and hashing as they are produced needs no buffer. */
#define FNV_OFFSET UINT64_C(14695981039346656037)
#define FNV_PRIME UINT64_C(1099511628211)

static uint64_t fnv_add(uint64_t h, unsigned char c)
{
    return (h ^ c) * FNV_PRIME;
}

/* The class symbol of the character starting at *p, advancing p past it
 * (a whole UTF-8 sequence; the value is valid UTF-8). */
static unsigned char char_class(const unsigned char **p)
{
    unsigned char c = **p;
    (*p)++;
    if (c >= 0x80) {
        while ((**p & 0xC0) == 0x80)
            (*p)++;
        return 'a'; /* non-ASCII: a letter, caseless */
    }
    if (c >= '0' && c <= '9')
        return 'd';
    if (c >= 'A' && c <= 'Z')
        return 'A';
    if (c >= 'a' && c <= 'z')
        return 'a';
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v')
        return ' ';
    return c;
}

/* One value's fine and coarse signature hashes, length in characters and
 * digit count. */
static void read_value(const char *v, uint64_t *fine, uint64_t *coarse, size_t *chars,
                       size_t *digits)
{
    uint64_t hf = FNV_OFFSET, hc = FNV_OFFSET;
    unsigned char last_f = 0, last_c = 0;
    size_t n = 0, nd = 0;
    const unsigned char *p = (const unsigned char *)v;
    while (*p) {
        unsigned char k = char_class(&p);
        n++;
        if (k == 'd')
            nd++;
        /* fine: digits and punctuation kept one by one; a run of letters of
         * one case, or of white space, is one symbol */
        bool run = k == 'A' || k == 'a' || k == ' ';
        if (!(run && k == last_f))
            hf = fnv_add(hf, k);
        last_f = k;
        /* coarse: letters caseless, every run one symbol */
        unsigned char kc = k == 'A' ? 'a' : k;
        if (kc != last_c)
            hc = fnv_add(hc, kc);
        last_c = kc;
    }
    *fine = hf;
    *coarse = hc;
    *chars = n;
    *digits = nd;
}

static int cmp_hw(const void *a, const void *b)
{
    const pgwi_hw *x = a, *y = b;
    return x->h < y->h ? -1 : x->h > y->h;
}

static int cmp_xw(const void *a, const void *b)
{
    const pgwi_xw *x = a, *y = b;
    return x->x < y->x ? -1 : x->x > y->x;
}

/* Descending by x (frequency). */
static int cmp_xw_desc(const void *a, const void *b)
{
    const pgwi_xw *x = a, *y = b;
    return x->x > y->x ? -1 : x->x < y->x;
}

/* Sorts t[0..n) by hash, merges equal hashes, and copies the result into
 * the arena. */
static int store_hw(pgwi_hw **out, size_t *n_out, pgwi_arena *a, pgwi_hw *t, size_t n)
{
    qsort(t, n, sizeof *t, cmp_hw);
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        if (u && t[u - 1].h == t[i].h)
            t[u - 1].w += t[i].w;
        else
            t[u++] = t[i];
    }
    *out = pgwi_arena_calloc(a, u, sizeof **out);
    if (!*out)
        return PGW_ENOMEM;
    memcpy(*out, t, u * sizeof *t);
    *n_out = u;
    return PGW_OK;
}

/* The same by position. */
static int store_xw(pgwi_xw **out, size_t *n_out, pgwi_arena *a, pgwi_xw *t, size_t n)
{
    qsort(t, n, sizeof *t, cmp_xw);
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        if (u && t[u - 1].x == t[i].x)
            t[u - 1].w += t[i].w;
        else
            t[u++] = t[i];
    }
    *out = pgwi_arena_calloc(a, u, sizeof **out);
    if (!*out)
        return PGW_ENOMEM;
    memcpy(*out, t, u * sizeof *t);
    *n_out = u;
    return PGW_OK;
}

static int cmp_double_desc(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? 1 : a > b ? -1 : 0;
}

/* The rank-frequency profile: MCV shares descending, then the values
 * outside the list as one run of equal shares. */
static int prepare_ranks(pgwi_prep *pr, pgwi_arena *a, const pgw_profile *p, bool has_rows,
                         int64_t rows)
{
    size_t nm = p->n_most_common;
    if (nm == 0)
        return PGW_OK;
    double sum = 0, least = 1.0;
    for (size_t i = 0; i < nm; i++) {
        sum += p->most_common_freqs[i];
        if (p->most_common_freqs[i] < least)
            least = p->most_common_freqs[i];
    }
    double rest = 1.0 - p->null_frac - sum;
    if (rest < TAIL_EPSILON)
        rest = 0;
    double total = sum + rest;
    if (!(total > 0))
        return PGW_OK; /* every frequency 0: no profile */
    double nd = 0; /* absolute distinct count, 0 when unknown */
    if (p->n_distinct > 0)
        nd = p->n_distinct;
    else if (p->n_distinct < 0 && has_rows && rows > 0)
        nd = -p->n_distinct * (double)rows;
    double tail_n = 0;
    if (rest > 0) {
        tail_n = floor(nd + 0.5) - (double)nm;
        if (tail_n < 1)
            tail_n = least > 0 ? ceil(rest / least - 1e-9) : 1;
        if (tail_n < 1)
            tail_n = 1;
    }
    pr->rank = pgwi_arena_calloc(a, nm + 1, sizeof *pr->rank);
    if (!pr->rank)
        return PGW_ENOMEM;
    for (size_t i = 0; i < nm; i++) {
        pr->rank[i].x = p->most_common_freqs[i] / total;
        pr->rank[i].w = 1;
    }
    size_t n = nm;
    if (rest > 0) {
        pr->rank[n].x = rest / tail_n / total;
        pr->rank[n++].w = tail_n;
    }
    pr->mcv_share = pgwi_arena_calloc(a, nm, sizeof *pr->mcv_share);
    if (!pr->mcv_share)
        return PGW_ENOMEM;
    for (size_t i = 0; i < nm; i++)
        pr->mcv_share[i] = pr->rank[i].x;
    qsort(pr->mcv_share, nm, sizeof *pr->mcv_share, cmp_double_desc);
    pr->n_mcv_share = nm;
    pr->rank_tail = rest > 0;
    qsort(pr->rank, n, sizeof *pr->rank, cmp_xw_desc);
    pr->n_rank = n;
    return PGW_OK;
}

/* Patterns, lengths and digit shares of the sampled values. */
static int prepare_text(pgwi_prep *pr, pgwi_arena *a, const pgw_profile *p)
{
    size_t nm = p->n_most_common, nh = p->n_histogram_bounds, nv = nm + nh;
    double sum = 0;
    for (size_t i = 0; i < nm; i++)
        sum += p->most_common_freqs[i];
    double rest = 1.0 - p->null_frac - sum;
    if (rest < 0)
        rest = 0;
    double bound_w = nh ? rest / (double)nh : 0;
    double total = sum + (nh ? rest : 0);
    bool uniform = !(total > 0);

    pgwi_hw *fine = pgwi_calloc(2 * nv, sizeof *fine);
    pgwi_xw *len = pgwi_calloc(nv, sizeof *len);
    if (!fine || !len) {
        pgwi_free(fine);
        pgwi_free(len);
        return PGW_ENOMEM;
    }
    pgwi_hw *coarse = fine + nv;
    double digit_share = 0;
    for (size_t i = 0; i < nv; i++) {
        const char *v = i < nm ? p->most_common_vals[i] : p->histogram_bounds[i - nm];
        double w = uniform ? 1.0 / (double)nv
                           : (i < nm ? p->most_common_freqs[i] : bound_w) / total;
        size_t chars, digits;
        read_value(v, &fine[i].h, &coarse[i].h, &chars, &digits);
        fine[i].w = coarse[i].w = len[i].w = w;
        len[i].x = (double)chars;
        if (chars)
            digit_share += w * (double)digits / (double)chars;
    }
    int rc;
    if ((rc = store_hw(&pr->pat, &pr->n_pat, a, fine, nv)) < 0)
        goto done;
    if ((rc = store_hw(&pr->cpat, &pr->n_cpat, a, coarse, nv)) < 0)
        goto done;
    rc = store_xw(&pr->len, &pr->n_len, a, len, nv);
done:
    pgwi_free(fine);
    pgwi_free(len);
    if (rc < 0)
        return rc;
    pr->digit_share = digit_share > 1.0 ? 1.0 : digit_share;
    pr->has_shape = true;
    return PGW_OK;
}

int pgwi_value_shape_prepare(pgwi_prep *pr, pgwi_arena *a, const pgw_profile *p,
                             pgw_profile_mode mode, bool has_rows, int64_t rows)
{
    if (!pr->has_values)
        return PGW_OK;
    int rc = prepare_ranks(pr, a, p, has_rows, rows);
    if (rc < 0 || mode != PGW_PROFILE_RAW)
        return rc;
    if ((rc = prepare_text(pr, a, p)) < 0)
        return rc;
    if (pr->n_cdf) {
        double lo = pr->cdf_x[0], width = pr->cdf_x[pr->n_cdf - 1] - lo;
        if (width > 0 && isfinite(width)) {
            pr->shape_x = pgwi_arena_calloc(a, pr->n_cdf, sizeof(double));
            if (!pr->shape_x)
                return PGW_ENOMEM;
            for (size_t k = 0; k < pr->n_cdf; k++)
                pr->shape_x[k] = (pr->cdf_x[k] - lo) / width;
            pr->shape_x[pr->n_cdf - 1] = 1.0; /* exactly, whatever the rounding */
        }
    }
    return PGW_OK;
}

/* ------------------------------------------------------------------ */
/* comparison                                                          */

/* sum over hashes of min(wa, wb), both lists sorted by hash. */
static double hw_overlap(const pgwi_hw *a, size_t na, const pgwi_hw *b, size_t nb)
{
    double s = 0;
    size_t i = 0, j = 0;
    while (i < na && j < nb) {
        if (a[i].h < b[j].h) {
            i++;
        } else if (b[j].h < a[i].h) {
            j++;
        } else {
            s += a[i].w < b[j].w ? a[i].w : b[j].w;
            i++;
            j++;
        }
    }
    return s > 1.0 ? 1.0 : s;
}

/* ∫ min(Sa, Sb) / ∫ max(Sa, Sb) of the survival functions of two length
 * distributions, sorted by length. */
static double length_closeness(const pgwi_xw *a, size_t na, const pgwi_xw *b, size_t nb)
{
    double sa = 1.0, sb = 1.0, x0 = 0, lo = 0, hi = 0;
    size_t i = 0, j = 0;
    while (i < na || j < nb) {
        double x;
        if (j == nb || (i < na && a[i].x <= b[j].x))
            x = a[i].x;
        else
            x = b[j].x;
        double d = x - x0;
        lo += d * (sa < sb ? sa : sb);
        hi += d * (sa < sb ? sb : sa);
        while (i < na && a[i].x == x)
            sa -= a[i++].w;
        while (j < nb && b[j].x == x)
            sb -= b[j++].w;
        if (sa < 0)
            sa = 0;
        if (sb < 0)
            sb = 0;
        x0 = x;
    }
    return hi > 0 ? lo / hi : 1.0;
}

/* 1 - L1/2 of two rank-frequency sequences made of runs (x each, w
 * times), aligned by rank; past its end a sequence is 0. */
static double rank_closeness(const pgwi_xw *a, size_t na, const pgwi_xw *b, size_t nb)
{
    double l1 = 0;
    size_t i = 0, j = 0;
    double ra = na ? a[0].w : 0, rb = nb ? b[0].w : 0; /* left in the current run */
    while (i < na || j < nb) {
        double fa = i < na ? a[i].x : 0, fb = j < nb ? b[j].x : 0;
        double step;
        if (i == na)
            step = rb;
        else if (j == nb)
            step = ra;
        else
            step = ra < rb ? ra : rb;
        l1 += step * fabs(fa - fb);
        if (i < na && (ra -= step) <= 0 && ++i < na)
            ra = a[i].w;
        if (j < nb && (rb -= step) <= 0 && ++j < nb)
            rb = b[j].w;
    }
    double c = 1.0 - l1 / 2.0;
    return c < 0 ? 0 : c > 1 ? 1 : c;
}

/* The normalised CDF of p at u, its left and right limits, where *k is the
 * first breakpoint at or above u (u is at or past breakpoint *k - 1):
 * at a breakpoint its two limits, between two a linear step. Advances *k
 * past u when u is a breakpoint. */
static void ncdf_at(const pgwi_prep *p, size_t *k, double u, double *left, double *right)
{
    size_t i = *k, n = p->n_cdf;
    if (i < n && p->shape_x[i] == u) {
        *left = p->cdf_lo[i];
        *right = p->cdf_hi[i];
        /* Normalising may round two breakpoints onto one u: the last one's
         * right limit is F(u). */
        while (++i < n && p->shape_x[i] == u)
            *right = p->cdf_hi[i];
        *k = i;
        return;
    }
    double f;
    if (i == 0) {
        f = 0.0;
    } else if (i == n) {
        f = 1.0;
    } else {
        double u0 = p->shape_x[i - 1], f0 = p->cdf_hi[i - 1];
        f = f0 + (p->cdf_lo[i] - f0) * (u - u0) / (p->shape_x[i] - u0);
    }
    *left = *right = f;
}

/* Kolmogorov-Smirnov distance of the two normalised CDFs: linear between
 * the union of their breakpoints, so the supremum is at a breakpoint, on
 * its left or right limit. One merge over both. */
static double normalised_ks(const pgwi_prep *a, const pgwi_prep *b)
{
    size_t i = 0, j = 0;
    double d = 0;
    while (i < a->n_cdf || j < b->n_cdf) {
        double u;
        if (j == b->n_cdf || (i < a->n_cdf && a->shape_x[i] <= b->shape_x[j]))
            u = a->shape_x[i];
        else
            u = b->shape_x[j];
        double al, ar, bl, br;
        ncdf_at(a, &i, u, &al, &ar);
        ncdf_at(b, &j, u, &bl, &br);
        double l = fabs(al - bl), r = fabs(ar - br);
        if (l > d)
            d = l;
        if (r > d)
            d = r;
    }
    return d > 1.0 ? 1.0 : d;
}

/* Range and shape of two numeric or two temporal columns. */
static void range_and_shape(pgwi_value_evidence *out, const pgwi_prep *a, const pgwi_prep *b)
{
    double la = a->cdf_x[0], ha = a->cdf_x[a->n_cdf - 1];
    double lb = b->cdf_x[0], hb = b->cdf_x[b->n_cdf - 1];
    double wa = ha - la, wb = hb - lb;
    if (!(wa > 0) && !(wb > 0)) {
        out->range = la == lb ? 1.0 : 0.0;
        out->shape = 1.0;
        return;
    }
    if (!(wa > 0) || !(wb > 0) || !a->shape_x || !b->shape_x) {
        out->range = 0.0;
        out->shape = 0.0;
        return;
    }
    double inter = (ha < hb ? ha : hb) - (la > lb ? la : lb);
    double r = inter > 0 ? inter / sqrt(wa * wb) : 0.0;
    out->range = r > 1.0 ? 1.0 : r;
    out->shape = 1.0 - normalised_ks(a, b);
}

double pgwi_value_freq_profile(const pgw_snapshot *sa, size_t ia, const pgw_snapshot *sb,
                               size_t ib)
{
    const pgwi_prep *a = &sa->prep[ia], *b = &sb->prep[ib];
    if (!a->has_values || !b->has_values || !a->n_rank || !b->n_rank)
        return -1.0;
    return rank_closeness(a->rank, a->n_rank, b->rank, b->n_rank);
}

/* The relabelling reading (value_shape.h, "relabelling"). */
#define RELABEL_SAMPLE 30000.0 /* rows ANALYZE samples at default_statistics_target 100 */
#define RELABEL_Z 3.0          /* standard errors of sampling allowed */
#define RELABEL_FLOOR 0.005    /* float4 frequencies, rounding of the estimate */
#define RELABEL_SCALE 0.10     /* excess at which the reading is 0 */

/* Sampling variance of a share p estimated by ANALYZE from a table of n
 * rows: it reads min(n, RELABEL_SAMPLE) of them, without replacement. */
static double share_variance(double p, double n)
{
    double m = n < RELABEL_SAMPLE ? n : RELABEL_SAMPLE;
    double v = p * (1.0 - p) / m * (1.0 - m / n);
    return v > 0 ? v : 0.0;
}

double pgwi_value_relabelling(const pgw_snapshot *sa, size_t ia, const pgw_snapshot *sb,
                              size_t ib, double *excess_out)
{
    double f = pgwi_value_freq_profile(sa, ia, sb, ib);
    if (excess_out)
        *excess_out = -1.0;
    if (f < 0)
        return -1.0;
    if (!sa->has_rows || !sb->has_rows || sa->rows <= 0 || sb->rows <= 0)
        return f; /* no row counts: no tolerance can be told, no damping */
    const pgwi_prep *a = &sa->prep[ia], *b = &sb->prep[ib];
    double na = (double)sa->rows, nb = (double)sb->rows;
    double lo = na < nb ? na : nb, hi = na < nb ? nb : na;
    double moved = (hi - lo) / hi;
    size_t n = a->n_mcv_share > b->n_mcv_share ? a->n_mcv_share : b->n_mcv_share;
    double excess = 0;
    for (size_t k = 0; k < n; k++) {
        double x, y;
        if (k < a->n_mcv_share)
            x = a->mcv_share[k];
        else if (a->rank_tail)
            break; /* the share at this rank is not known */
        else
            x = 0;
        if (k < b->n_mcv_share)
            y = b->mcv_share[k];
        else if (b->rank_tail)
            break;
        else
            y = 0;
        double p = (x + y) / 2.0;
        double tol = RELABEL_FLOOR + moved +
                     RELABEL_Z * sqrt(share_variance(p, na) + share_variance(p, nb));
        double d = fabs(x - y) - tol;
        if (d > 0)
            excess += d;
    }
    if (excess_out)
        *excess_out = excess;
    double damp = 1.0 - excess / RELABEL_SCALE;
    return damp > 0 ? f * damp : 0.0;
}

double pgwi_value_evidence_rescore(const pgwi_value_evidence *ve, double freq)
{
    double sum = 0, weight = 0;
    if (ve->pattern >= 0) {
        sum += W_PATTERN * ve->pattern + W_LENGTH * ve->length + W_DIGITS * ve->digits;
        weight += W_PATTERN + W_LENGTH + W_DIGITS;
    }
    if (ve->range >= 0) {
        sum += W_RANGE * ve->range + W_SHAPE * ve->shape;
        weight += W_RANGE + W_SHAPE;
    }
    if (freq >= 0) {
        sum += W_FREQ * freq;
        weight += W_FREQ;
    }
    if (!(weight > 0))
        return 0.0;
    double score = sum / weight;
    score = score < 0 ? 0 : score > 1 ? 1 : score;
    return round(score * 10000.0) / 10000.0;
}

void pgwi_value_evidence_of(pgwi_value_evidence *out, const pgw_snapshot *sa, size_t ia,
                            const pgw_snapshot *sb, size_t ib)
{
    out->range = out->shape = out->pattern = out->length = out->digits = -1.0;
    out->freq_profile = -1.0;
    out->score = 0.0;
    const pgwi_prep *a = &sa->prep[ia], *b = &sb->prep[ib];
    if (!a->has_values || !b->has_values)
        return; /* no evidence is not similarity */
    double sum = 0, weight = 0;
    if (a->has_shape && b->has_shape) {
        out->pattern = (hw_overlap(a->pat, a->n_pat, b->pat, b->n_pat) +
                        hw_overlap(a->cpat, a->n_cpat, b->cpat, b->n_cpat)) /
                       2.0;
        out->length = length_closeness(a->len, a->n_len, b->len, b->n_len);
        out->digits = 1.0 - fabs(a->digit_share - b->digit_share);
        sum += W_PATTERN * out->pattern + W_LENGTH * out->length + W_DIGITS * out->digits;
        weight += W_PATTERN + W_LENGTH + W_DIGITS;
        if (a->n_cdf && b->n_cdf && a->numeric == b->numeric && a->temporal == b->temporal &&
            (a->numeric || a->temporal)) {
            range_and_shape(out, a, b);
            sum += W_RANGE * out->range + W_SHAPE * out->shape;
            weight += W_RANGE + W_SHAPE;
        }
    }
    if (a->n_rank && b->n_rank) {
        out->freq_profile = pgwi_value_freq_profile(sa, ia, sb, ib);
        sum += W_FREQ * out->freq_profile;
        weight += W_FREQ;
    }
    if (weight > 0) {
        double score = sum / weight;
        if (score < 0)
            score = 0;
        if (score > 1)
            score = 1;
        out->score = round(score * 10000.0) / 10000.0;
    }
}
