/*
 * tests/bench/bench_assign.c — pgwi_assign, the optimal assignment rename
 * detection will pair columns by (issue 17), side by side in one run with
 * the greedy pairing it replaces (every candidate pair sorted, best first,
 * as pair_renames does today). Median time per call over repeated calls:
 *   300 x 300 uniform scores at threshold 0.33, and at 0 (every pair a
 *     candidate);
 *   300 x 300 like a table whose 300 columns were all renamed: one true
 *     match per row at 0.7-1.0 in a shuffled column, the rest below 0.6, at
 *     threshold 0.5;
 *   300 x 300 all 0.5 (every assignment ties: the tie rule's worst case);
 *   20 x 20 with 2 pairs above the threshold, and 2 x 2 (a diff with two
 *     renames assigns 2 removed to 2 added columns).
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "snapshot/assign.h"

typedef struct cand {
    double score;
    int32_t r, c;
} cand;

static int cmp_cand(const void *pa, const void *pb)
{
    const cand *a = pa, *b = pb;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    if (a->r != b->r)
        return a->r < b->r ? -1 : 1;
    return (a->c > b->c) - (a->c < b->c);
}

/* Today's greedy pairing, for the side-by-side figure. */
static void greedy(int32_t *row_to_col, const double *s, size_t nr, size_t nc, double t)
{
    cand *cs = malloc(nr * nc * sizeof *cs);
    char *col_used = calloc(nc, 1);
    size_t n = 0;
    if (!cs || !col_used)
        abort();
    for (size_t i = 0; i < nr; i++)
        for (size_t j = 0; j < nc; j++)
            if (s[i * nc + j] >= t)
                cs[n++] = (cand){s[i * nc + j], (int32_t)i, (int32_t)j};
    qsort(cs, n, sizeof *cs, cmp_cand);
    for (size_t i = 0; i < nr; i++)
        row_to_col[i] = -1;
    for (size_t k = 0; k < n; k++)
        if (row_to_col[cs[k].r] < 0 && !col_used[cs[k].c]) {
            row_to_col[cs[k].r] = cs[k].c;
            col_used[cs[k].c] = 1;
        }
    free(cs);
    free(col_used);
}

static uint64_t g_rng = 17;

static double unit(void)
{
    uint64_t z = (g_rng += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

static double total(const int32_t *a, const double *s, size_t nr, size_t nc)
{
    double sum = 0;
    for (size_t i = 0; i < nr; i++)
        if (a[i] >= 0)
            sum += s[i * nc + (size_t)a[i]];
    return sum;
}

/* Median microseconds per call of pgwi_assign and of greedy, interleaved. */
static void measure(const char *label, const double *s, size_t nr, size_t nc, double t,
                    double min_ms)
{
    int32_t *a = malloc(nr * sizeof *a), *g = malloc(nr * sizeof *g);
    enum { ROUNDS = 15 };
    double ta[ROUNDS], tg[ROUNDS];
    if (!a || !g)
        abort();
    for (int round = 0; round < ROUNDS; round++) {
        size_t n = 0;
        uint64_t start = bench_now_ns(), now;
        do {
            if (pgwi_assign(a, s, nr, nc, t) < 0)
                abort();
            n++;
            now = bench_now_ns();
        } while ((double)(now - start) / 1e6 < min_ms / ROUNDS);
        ta[round] = (double)(now - start) / 1e3 / (double)n;
        n = 0;
        start = bench_now_ns();
        do {
            greedy(g, s, nr, nc, t);
            n++;
            now = bench_now_ns();
        } while ((double)(now - start) / 1e6 < min_ms / ROUNDS);
        tg[round] = (double)(now - start) / 1e3 / (double)n;
    }
    double ma = bench_median(ta, ROUNDS), mg = bench_median(tg, ROUNDS);
    size_t pairs = 0;
    for (size_t i = 0; i < nr; i++)
        pairs += a[i] >= 0;
    printf("%-46s %10.1f us/call  greedy %9.1f us (%5.2fx)  pairs %3zu  total %.3f (greedy %.3f)\n",
           label, ma, mg, ma / mg, pairs, total(a, s, nr, nc), total(g, s, nr, nc));
    free(a);
    free(g);
}

int main(void)
{
    enum { N = 300 };
    double *s = malloc((size_t)N * N * sizeof *s);
    if (!s)
        abort();
    printf("pgwi_assign benchmark (one thread); build with --buildtype=release\n");

    for (size_t k = 0; k < (size_t)N * N; k++)
        s[k] = unit();
    measure("300x300 uniform, threshold 0.33", s, N, N, 0.33, 1500);
    measure("300x300 uniform, threshold 0", s, N, N, 0.0, 1500);

    int32_t perm[N];
    for (int i = 0; i < N; i++)
        perm[i] = i;
    for (int i = N - 1; i > 0; i--) {
        int j = (int)(unit() * (i + 1));
        int32_t x = perm[i];
        perm[i] = perm[j];
        perm[j] = x;
    }
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < N; j++)
            s[i * N + j] = (int32_t)j == perm[i] ? 0.7 + 0.3 * unit() : 0.6 * unit();
    measure("300x300 all renamed, threshold 0.5", s, N, N, 0.5, 1500);

    for (size_t k = 0; k < (size_t)N * N; k++)
        s[k] = 0.5;
    measure("300x300 all 0.5 (all ties), threshold 0.5", s, N, N, 0.5, 1500);

    for (size_t i = 0; i < 20; i++)
        for (size_t j = 0; j < 20; j++)
            s[i * 20 + j] = (i == 3 && j == 5) || (i == 10 && j == 12) ? 0.9 : 0.4 * unit();
    measure("20x20, 2 pairs above threshold 0.5", s, 20, 20, 0.5, 500);
    measure("2x2, threshold 0.5", (const double[]){0.80, 0.82, 0.30, 0.81}, 2, 2, 0.5, 500);
    free(s);
    return 0;
}
