/*
 * tests/unit/check_assign.c — pgwi_assign (lib/core/snapshot/assign.h): the
 * optimal one-to-one assignment with a threshold that rename detection
 * pairs removed with added columns by.
 *
 * Fixed matrices with their exact assignments (among them four where the
 * greedy choice, best pair first, is wrong), the tie rule, the argument
 * checks, two randomized differential tests (against brute force over every
 * assignment up to 7x7, and against a dynamic program over column subsets
 * for tall and wide matrices up to 40 rows or columns), every allocation
 * failing, and a 300x300 matrix.
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pgwitness/common.h"
#include "snapshot/assign.h"
#include "pgw_test.h"

#define MAXN 512

/* ------------------------------------------------------------------ */
/* helpers                                                             */

static double scale_factor(void)
{
    const char *s = getenv("PGW_TEST_SCALE");
    double f = s ? atof(s) : 1.0;
    return f > 0 && f <= 1 ? f : 1.0;
}

/* splitmix64: a fixed, portable sequence. */
typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rng_next(rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double rng_unit(rng *r)
{
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

static size_t rng_below(rng *r, size_t n)
{
    return (size_t)(rng_next(r) % n);
}

/* The sum of the assigned scores; fails the test when an assignment is not
 * one to one or uses a pair below the threshold. */
static double checked_total(const int32_t *a, const double *s, size_t nr, size_t nc, double t)
{
    bool taken[MAXN] = {false};
    ck_assert_uint_le(nc, sizeof taken);
    double sum = 0;
    for (size_t i = 0; i < nr; i++) {
        if (a[i] < 0) {
            ck_assert_int_eq(a[i], -1);
            continue;
        }
        ck_assert_int_lt(a[i], (int32_t)nc);
        ck_assert_msg(!taken[a[i]], "column %d assigned twice", a[i]);
        taken[a[i]] = true;
        double v = s[i * nc + (size_t)a[i]];
        ck_assert_msg(v >= t, "row %zu: pair score %.17g below threshold %.17g", i, v, t);
        sum += v;
    }
    return sum;
}

static void expect(const double *s, size_t nr, size_t nc, double t, const int32_t *want)
{
    int32_t got[MAXN];
    ck_assert_uint_le(nr, MAXN);
    for (size_t i = 0; i < nr; i++)
        got[i] = 77;
    ck_assert_int_eq(pgwi_assign(got, s, nr, nc, t), PGW_OK);
    for (size_t i = 0; i < nr; i++)
        ck_assert_msg(got[i] == want[i], "row %zu: got column %d, want %d", i, got[i], want[i]);
    checked_total(got, s, nr, nc, t);
}

/* Best pair first, ties to the lower (row, col): today's pair_renames. */
static double greedy_total(const double *s, size_t nr, size_t nc, double t)
{
    bool row_used[MAXN] = {false}, col_used[MAXN] = {false};
    double sum = 0;
    for (;;) {
        double best = -1;
        size_t bi = 0, bj = 0;
        for (size_t i = 0; i < nr; i++)
            for (size_t j = 0; j < nc; j++)
                if (!row_used[i] && !col_used[j] && s[i * nc + j] >= t && s[i * nc + j] > best) {
                    best = s[i * nc + j];
                    bi = i;
                    bj = j;
                }
        if (best < 0)
            return sum;
        row_used[bi] = col_used[bj] = true;
        sum += best;
    }
}

/* Optimal and greedy totals, for the cases where greedy is wrong. */
static void greedy_is_worse(const double *s, size_t nr, size_t nc, double t, double greedy,
                            double optimal)
{
    int32_t got[MAXN];
    ck_assert_int_eq(pgwi_assign(got, s, nr, nc, t), PGW_OK);
    ck_assert_double_eq_tol(checked_total(got, s, nr, nc, t), optimal, 1e-12);
    ck_assert_double_eq_tol(greedy_total(s, nr, nc, t), greedy, 1e-12);
}

/* ------------------------------------------------------------------ */
/* fixed matrices                                                      */

/* Removed start_station_id, end_station_id; added from_station_id,
 * to_station_id. The two station columns hold the same stations, so every
 * pair's values look alike; the single best pair is start -> to. Greedy
 * takes it and is left with end -> from; the optimum pairs start -> from,
 * end -> to. */
START_TEST(greedy_wrong_stations)
{
    const double s[] = {0.80, 0.82, /* start: from, to */
                        0.30, 0.81 /* end: from, to */};
    expect(s, 2, 2, 0.25, (const int32_t[]){0, 1});
    greedy_is_worse(s, 2, 2, 0.25, 0.82 + 0.30, 0.80 + 0.81);
    /* At 0.5, greedy leaves end unpaired. */
    expect(s, 2, 2, 0.5, (const int32_t[]){0, 1});
    greedy_is_worse(s, 2, 2, 0.5, 0.82, 0.80 + 0.81);
}
END_TEST

START_TEST(greedy_wrong_3x3)
{
    const double s[] = {0.90, 0.85, 0.10, /**/ 0.88, 0.20, 0.10, /**/ 0.10, 0.86, 0.60};
    /* Greedy: (0,0) 0.90, (2,1) 0.86, row 1 has only 0.10 left. */
    expect(s, 3, 3, 0.5, (const int32_t[]){1, 0, 2});
    greedy_is_worse(s, 3, 3, 0.5, 0.90 + 0.86, 0.85 + 0.88 + 0.60);
}
END_TEST

/* Wide (2x3) and tall (3x2) matrices where greedy's first pair takes the
 * only column another row could have. */
START_TEST(greedy_wrong_rectangular)
{
    const double wide[] = {0.95, 0.90, -1, /**/ 0.93, -1, -1};
    expect(wide, 2, 3, 0.5, (const int32_t[]){1, 0});
    greedy_is_worse(wide, 2, 3, 0.5, 0.95, 0.90 + 0.93);

    const double tall[] = {0.6, 0.0, /**/ 0.9, 0.8, /**/ 0.7, -1};
    expect(tall, 3, 2, 0.5, (const int32_t[]){-1, 1, 0});
    greedy_is_worse(tall, 3, 2, 0.5, 0.9, 0.8 + 0.7);
}
END_TEST

START_TEST(rectangular_both_ways)
{
    const double wide[] = {0.1, 0.7, 0.9, 0.2, /**/ 0.3, 0.8, 0.95, 0.6};
    expect(wide, 2, 4, 0.5, (const int32_t[]){2, 1});
    double tall[8];
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 4; j++)
            tall[j * 2 + i] = wide[i * 4 + j];
    expect(tall, 4, 2, 0.5, (const int32_t[]){-1, 1, 0, -1});
    /* One row, many columns; many rows, one column. */
    const double one_row[] = {0.2, 0.9, 0.4, 0.9, 0.1};
    expect(one_row, 1, 5, 0.3, (const int32_t[]){1});
    expect(one_row, 5, 1, 0.3, (const int32_t[]){-1, 0, -1, -1, -1});
}
END_TEST

START_TEST(all_below_threshold)
{
    const double s[] = {0.4, 0.4, 0.4, /**/ 0.49, 0.1, 0.0, /**/ 0.3, 0.2, 0.4999};
    expect(s, 3, 3, 0.5, (const int32_t[]){-1, -1, -1});
    const double neg[] = {-0.1, -1, /**/ -0.5, -INFINITY};
    expect(neg, 2, 2, 0.0, (const int32_t[]){-1, -1});
}
END_TEST

/* The tie rule: the lexicographically smallest row_to_col among the
 * optimal assignments, -1 after every column. */
START_TEST(ties)
{
    const double flat[] = {0.5, 0.5, 0.5, /**/ 0.5, 0.5, 0.5, /**/ 0.5, 0.5, 0.5};
    expect(flat, 3, 3, 0.5, (const int32_t[]){0, 1, 2});
    expect(flat, 3, 3, 0.0, (const int32_t[]){0, 1, 2});
    /* Both perfect assignments total 1.5. */
    const double two[] = {0.75, 0.5, /**/ 1.0, 0.75};
    expect(two, 2, 2, 0.5, (const int32_t[]){0, 1});
    const double two_b[] = {0.5, 0.75, /**/ 0.75, 1.0};
    expect(two_b, 2, 2, 0.5, (const int32_t[]){0, 1});
    /* Both rows are worth most on column 1: either may have it. */
    const double col1[] = {0.5, 1.0, /**/ 0.5, 1.0};
    expect(col1, 2, 2, 0.5, (const int32_t[]){0, 1});
    /* One pair of 1.0 or two of 0.5: row 0's lower column wins. */
    const double fewer[] = {1.0, 0.5, /**/ 0.5, -1};
    expect(fewer, 2, 2, 0.5, (const int32_t[]){0, -1});
    const double more[] = {0.5, 1.0, /**/ -1, 0.5};
    expect(more, 2, 2, 0.5, (const int32_t[]){0, 1});
    /* An assigned row ranks before an unassigned one at equal totals: a
     * pair of score 0 at threshold 0 adds nothing but is taken. */
    const double zero[] = {0.7, -1, /**/ -1, 0.0};
    expect(zero, 2, 2, 0.0, (const int32_t[]){0, 1});
    expect(zero, 2, 2, 0.1, (const int32_t[]){0, -1});
    /* Row 0 takes column 1 in every optimum: column 0 would leave row 2
     * nothing (its column 2 is not a candidate). */
    const double forced[] = {-1, 0.5, 0.5, /**/ 0.5, 0.5, 0.5, /**/ 0.5, 0.5, -1};
    expect(forced, 3, 3, 0.5, (const int32_t[]){1, 2, 0});
    /* Tied 4x4 blocks: rows 0-1 tie on columns 2-3, rows 2-3 on 0-1. */
    const double blocks[] = {0.0, 0.0, 0.5, 0.5, /**/ 0.0, 0.0, 0.5, 0.5,
                             0.5, 0.5, 0.0, 0.0, /**/ 0.5, 0.5, 0.0, 0.0};
    expect(blocks, 4, 4, 0.25, (const int32_t[]){2, 3, 0, 1});
    /* Two rows tied on a column nothing else wants: the first row. */
    const double share[] = {0.5, 0.5};
    expect(share, 2, 1, 0.5, (const int32_t[]){0, -1});
}
END_TEST

START_TEST(threshold_at_a_score)
{
    expect((const double[]){0.5}, 1, 1, 0.5, (const int32_t[]){0});
    expect((const double[]){nextafter(0.5, 0)}, 1, 1, 0.5, (const int32_t[]){-1});
    expect((const double[]){1.0}, 1, 1, 1.0, (const int32_t[]){0});
    expect((const double[]){0.0}, 1, 1, 0.0, (const int32_t[]){0});
    /* [1, 0] totals 1.0 against [0, -1]'s 0.6 only while 0.5 counts. */
    const double s[] = {0.6, 0.5, /**/ 0.5, -1};
    expect(s, 2, 2, 0.5, (const int32_t[]){1, 0});
    expect(s, 2, 2, nextafter(0.5, 1), (const int32_t[]){0, -1});
}
END_TEST

START_TEST(one_by_one_and_empty)
{
    expect((const double[]){0.7}, 1, 1, 0.5, (const int32_t[]){0});
    expect((const double[]){0.3}, 1, 1, 0.5, (const int32_t[]){-1});
    expect((const double[]){-0.2}, 1, 1, 0.0, (const int32_t[]){-1});
    /* 0 x N: nothing to fill; NULLs are fine. */
    int32_t out[3] = {77, 77, 77};
    ck_assert_int_eq(pgwi_assign(NULL, NULL, 0, 5, 0.5), PGW_OK);
    ck_assert_int_eq(pgwi_assign(out, (const double[]){0.9}, 0, 1, 0.5), PGW_OK);
    ck_assert_int_eq(out[0], 77);
    ck_assert_int_eq(pgwi_assign(NULL, NULL, 0, 0, 0.5), PGW_OK);
    /* N x 0: every row unassigned. */
    ck_assert_int_eq(pgwi_assign(out, NULL, 3, 0, 0.5), PGW_OK);
    ck_assert_int_eq(out[0], -1);
    ck_assert_int_eq(out[1], -1);
    ck_assert_int_eq(out[2], -1);
}
END_TEST

/* A negative score is no candidate, even at threshold 0, and -inf is a
 * negative score. */
START_TEST(negatives_are_not_candidates)
{
    const double s[] = {-0.1, -1, /**/ -0.5, 0.2};
    expect(s, 2, 2, 0.0, (const int32_t[]){-1, 1});
    const double inf[] = {-INFINITY, 0.4, /**/ 0.3, -0.0};
    /* -0.0 equals 0.0, which is >= 0: a candidate of score 0. */
    expect(inf, 2, 2, 0.0, (const int32_t[]){1, 0});
    const double negzero[] = {-0.0};
    expect(negzero, 1, 1, 0.0, (const int32_t[]){0});
}
END_TEST

START_TEST(invalid_arguments)
{
    int32_t out[2] = {77, 77};
    const double ok[] = {0.5, 0.6, 0.7, 0.8};
    ck_assert_int_eq(pgwi_assign(out, ok, 2, 2, NAN), PGW_EINVAL);
    ck_assert_int_eq(pgwi_assign(out, ok, 2, 2, -0.01), PGW_EINVAL);
    ck_assert_int_eq(pgwi_assign(out, ok, 2, 2, 1.01), PGW_EINVAL);
    ck_assert_int_eq(pgwi_assign(out, ok, 2, 2, INFINITY), PGW_EINVAL);
    ck_assert_int_eq(pgwi_assign(NULL, NULL, 0, 0, NAN), PGW_EINVAL);
    ck_assert_int_eq(pgwi_assign(NULL, ok, 2, 2, 0.5), PGW_EINVAL);
    ck_assert_int_eq(pgwi_assign(out, NULL, 2, 2, 0.5), PGW_EINVAL);
    const double nan_score[] = {0.5, 0.6, NAN, 0.8};
    ck_assert_int_eq(pgwi_assign(out, nan_score, 2, 2, 0.5), PGW_EINVAL);
    const double above[] = {0.5, 1.5, 0.7, 0.8};
    ck_assert_int_eq(pgwi_assign(out, above, 2, 2, 0.5), PGW_EINVAL);
    const double inf[] = {0.5, 0.6, 0.7, INFINITY};
    ck_assert_int_eq(pgwi_assign(out, inf, 2, 2, 0.5), PGW_EINVAL);
    /* nr * nc overflows; nr + nc beyond the int32 indexes. */
    ck_assert_int_eq(pgwi_assign(out, ok, SIZE_MAX / 2, 3, 0.5), PGW_EINVAL);
    ck_assert_int_eq(pgwi_assign(out, ok, 2, (size_t)INT32_MAX, 0.5), PGW_EINVAL);
    /* Nothing was written. */
    ck_assert_int_eq(out[0], 77);
    ck_assert_int_eq(out[1], 77);
}
END_TEST

/* ------------------------------------------------------------------ */
/* differential tests                                                  */

/* Brute force: every one-to-one assignment, rows in order, each row trying
 * its columns in order and then "unassigned". The first assignment met with
 * the largest total (a later one replaces it only when larger by more than
 * 1e-9) is the lexicographically smallest optimum. */
typedef struct brute {
    const double *s;
    size_t nr, nc;
    double t;
    int32_t cur[8], best[8];
    double best_total;
    bool used[8];
} brute;

static void brute_rec(brute *b, size_t i, double total)
{
    if (i == b->nr) {
        if (total > b->best_total + 1e-9) {
            b->best_total = total;
            memcpy(b->best, b->cur, sizeof b->cur);
        }
        return;
    }
    for (size_t j = 0; j < b->nc; j++) {
        double v = b->s[i * b->nc + j];
        if (b->used[j] || !(v >= b->t))
            continue;
        b->used[j] = true;
        b->cur[i] = (int32_t)j;
        brute_rec(b, i + 1, total + v);
        b->used[j] = false;
    }
    b->cur[i] = -1;
    brute_rec(b, i + 1, total);
}

/* Fills s[nr * nc] in one of three styles: 0 continuous scores, with some
 * non-candidates; 1 eighths (sums exact in binary, so ties are exact); 2
 * only 0.5 and 1.0 and non-candidates (ties everywhere). Returns the
 * threshold. */
static double random_matrix(rng *r, double *s, size_t nr, size_t nc, int style)
{
    for (size_t k = 0; k < nr * nc; k++) {
        if (rng_below(r, 5) == 0) {
            s[k] = -rng_unit(r) - 0.01;
        } else if (style == 0) {
            s[k] = rng_unit(r);
        } else if (style == 1) {
            s[k] = (double)rng_below(r, 9) / 8;
        } else {
            s[k] = rng_below(r, 2) ? 1.0 : 0.5;
        }
    }
    switch (rng_below(r, 4)) {
    case 0:
        return 0.0;
    case 1:
        return 0.5;
    case 2:
        return style == 0 ? rng_unit(r) : (double)rng_below(r, 9) / 8;
    default:
        return style == 2 ? 1.0 : 0.25;
    }
}

START_TEST(differential_brute_force)
{
    rng r = {20251117};
    int per_shape = (int)(25 * scale_factor());
    if (per_shape < 3)
        per_shape = 3;
    long matrices = 0, greedy_worse = 0, tie_cases = 0;
    double s[49];
    for (size_t nr = 1; nr <= 7; nr++)
        for (size_t nc = 1; nc <= 7; nc++)
            for (int style = 0; style < 3; style++)
                for (int k = 0; k < per_shape; k++) {
                    double t = random_matrix(&r, s, nr, nc, style);
                    brute b = {.s = s, .nr = nr, .nc = nc, .t = t, .best_total = -1};
                    brute_rec(&b, 0, 0);
                    int32_t got[8];
                    ck_assert_int_eq(pgwi_assign(got, s, nr, nc, t), PGW_OK);
                    double total = checked_total(got, s, nr, nc, t);
                    ck_assert_msg(fabs(total - b.best_total) <= 1e-9,
                                  "%zux%zu style %d case %d: total %.17g, optimum %.17g", nr,
                                  nc, style, k, total, b.best_total);
                    for (size_t i = 0; i < nr; i++)
                        ck_assert_msg(got[i] == b.best[i],
                                      "%zux%zu style %d case %d row %zu: column %d, the "
                                      "lexicographically smallest optimum has %d",
                                      nr, nc, style, k, i, got[i], b.best[i]);
                    matrices++;
                    greedy_worse += greedy_total(s, nr, nc, t) < b.best_total - 1e-9;
                    tie_cases += style > 0;
                }
    ck_assert_int_ge(matrices, 3 * 49 * 3);
    /* The random matrices do hit the cases greedy gets wrong. */
    ck_assert_int_gt(greedy_worse, matrices / 20);
    ck_assert_int_gt(tie_cases, 0);
}
END_TEST

/* A dynamic program over the subsets of columns (nc <= 10): best[i][mask]
 * is the largest total rows i.. can add when the columns in mask are
 * taken. The lexicographically smallest optimum is then read row by row. */
static void dp_solve(const double *s, size_t nr, size_t nc, double t, int32_t *out,
                     double *total)
{
    size_t nm = (size_t)1 << nc;
    double *best = calloc((nr + 1) * nm, sizeof *best);
    ck_assert_ptr_nonnull(best);
    for (size_t i = nr; i-- > 0;)
        for (size_t mask = 0; mask < nm; mask++) {
            double b = best[(i + 1) * nm + mask];
            for (size_t j = 0; j < nc; j++) {
                double v = s[i * nc + j];
                if (!(mask >> j & 1) && v >= t) {
                    double c = v + best[(i + 1) * nm + (mask | (size_t)1 << j)];
                    if (c > b)
                        b = c;
                }
            }
            best[i * nm + mask] = b;
        }
    *total = best[0];
    size_t mask = 0;
    double need = best[0];
    for (size_t i = 0; i < nr; i++) {
        out[i] = -1;
        for (size_t j = 0; j < nc; j++) {
            double v = s[i * nc + j];
            if (!(mask >> j & 1) && v >= t &&
                v + best[(i + 1) * nm + (mask | (size_t)1 << j)] >= need - 1e-9) {
                out[i] = (int32_t)j;
                break;
            }
        }
        if (out[i] >= 0) {
            need -= s[i * nc + (size_t)out[i]];
            mask |= (size_t)1 << out[i];
        }
    }
    free(best);
}

START_TEST(differential_subsets)
{
    rng r = {7};
    int rounds = (int)(150 * scale_factor());
    if (rounds < 15)
        rounds = 15;
    double s[40 * 10], st[40 * 10];
    for (int k = 0; k < rounds; k++) {
        size_t nr = 1 + rng_below(&r, 40), nc = 1 + rng_below(&r, 10);
        int style = k % 3;
        double t = random_matrix(&r, s, nr, nc, style);
        int32_t want[40], got[40];
        double optimum;
        dp_solve(s, nr, nc, t, want, &optimum);
        ck_assert_int_eq(pgwi_assign(got, s, nr, nc, t), PGW_OK);
        ck_assert_double_eq_tol(checked_total(got, s, nr, nc, t), optimum, 1e-9);
        for (size_t i = 0; i < nr; i++)
            ck_assert_msg(got[i] == want[i], "%zux%zu style %d row %zu: %d, want %d", nr, nc,
                          style, i, got[i], want[i]);
        /* The same matrix transposed (nc rows, nr columns) has the same
         * optimum. */
        for (size_t i = 0; i < nr; i++)
            for (size_t j = 0; j < nc; j++)
                st[j * nr + i] = s[i * nc + j];
        ck_assert_int_eq(pgwi_assign(got, st, nc, nr, t), PGW_OK);
        ck_assert_double_eq_tol(checked_total(got, st, nc, nr, t), optimum, 1e-9);
    }
}
END_TEST

/* ------------------------------------------------------------------ */
/* allocation failure                                                  */

/* Each allocation of pgwi_assign fails in turn: PGW_ENOMEM, row_to_col
 * untouched, nothing leaked; returns how many allocations it made. */
static size_t every_failure(const double *s, size_t nr, size_t nc, double t)
{
    int32_t out[MAXN];
    pgwt_alloc_install();
    size_t n;
    for (n = 1; n < 100; n++) {
        for (size_t i = 0; i < nr; i++)
            out[i] = 77;
        pgwt_alloc_fail_at(n);
        int rc = pgwi_assign(out, s, nr, nc, t);
        bool failed = pgwt_alloc_failed();
        pgwt_alloc_fail_at(0);
        ck_assert_uint_eq(pgwt_alloc_get().live, 0);
        if (!failed) {
            ck_assert_int_eq(rc, PGW_OK);
            checked_total(out, s, nr, nc, t);
            break;
        }
        ck_assert_msg(rc == PGW_ENOMEM, "allocation %zu failed but rc = %d", n, rc);
        for (size_t i = 0; i < nr; i++)
            ck_assert_int_eq(out[i], 77);
    }
    pgwt_alloc_uninstall();
    return n - 1;
}

START_TEST(allocation_failures)
{
    /* No tie: one allocation. */
    const double plain[] = {0.9, 0.1, /**/ 0.2, 0.8};
    ck_assert_uint_eq(every_failure(plain, 2, 2, 0.5), 1);
    /* A tie the search leaves unordered: the tie rule's graph too. */
    const double fewer[] = {1.0, 0.5, /**/ 0.5, -1};
    ck_assert_uint_eq(every_failure(fewer, 2, 2, 0.5), 2);
    rng r = {99};
    double s[30 * 20];
    random_matrix(&r, s, 30, 20, 2);
    ck_assert_uint_eq(every_failure(s, 30, 20, 0.5), 2);
    /* Nothing to allocate. */
    ck_assert_uint_eq(every_failure(NULL, 3, 0, 0.5), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* size                                                                */

/* 300 x 300 random scores (a third below the threshold): a valid
 * assignment, at least as good as greedy's, the same total as the
 * transpose's and the same result when repeated. The time is measured by
 * bench-assign. */
START_TEST(large_random)
{
    enum { N = 300 };
    double *s = malloc(N * N * sizeof *s), *st = malloc(N * N * sizeof *st);
    int32_t *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    ck_assert(s && st && a && b);
    rng r = {300};
    for (size_t k = 0; k < (size_t)N * N; k++)
        s[k] = rng_unit(&r);
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < N; j++)
            st[j * N + i] = s[i * N + j];
    ck_assert_int_eq(pgwi_assign(a, s, N, N, 0.33), PGW_OK);
    double total = checked_total(a, s, N, N, 0.33);
    ck_assert_int_eq(pgwi_assign(b, s, N, N, 0.33), PGW_OK);
    ck_assert_mem_eq(a, b, N * sizeof *a);
    ck_assert_int_eq(pgwi_assign(b, st, N, N, 0.33), PGW_OK);
    ck_assert_double_eq_tol(checked_total(b, st, N, N, 0.33), total, 1e-9);
    /* Random 300x300 scores: nearly every row gets a pair near 1. */
    ck_assert_double_gt(total, greedy_total(s, N, N, 0.33));
    ck_assert_double_gt(total, 0.99 * N);
    free(s);
    free(st);
    free(a);
    free(b);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("assign");
    TCase *tc = tcase_create("assign");
    tcase_add_test(tc, greedy_wrong_stations);
    tcase_add_test(tc, greedy_wrong_3x3);
    tcase_add_test(tc, greedy_wrong_rectangular);
    tcase_add_test(tc, rectangular_both_ways);
    tcase_add_test(tc, all_below_threshold);
    tcase_add_test(tc, ties);
    tcase_add_test(tc, threshold_at_a_score);
    tcase_add_test(tc, one_by_one_and_empty);
    tcase_add_test(tc, negatives_are_not_candidates);
    tcase_add_test(tc, invalid_arguments);
    tcase_add_test(tc, differential_brute_force);
    tcase_add_test(tc, differential_subsets);
    tcase_add_test(tc, allocation_failures);
    tcase_add_test(tc, large_random);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return pgwt_main(suite());
}
