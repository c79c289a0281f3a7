/*
 * tests/bench/bench_value_shape.c — the cost of the value-shape evidence
 * (lib/core/snapshot/value_shape.h, issue 17): every pair of two 300-column
 * analysed snapshots, 90,000 calls of pgwi_value_evidence_of, measured side
 * by side in one run with pgwi_similarity over the same pairs; and the
 * cost of building such a snapshot, where the evidence is prepared.
 * Links the core's objects (the evidence is internal).
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "similarity.h"
#include "value_shape.h"

#define NCOLS 300

/* Four kinds of columns in turn, each with values of its own: a numeric
 * one with 20 histogram bounds, a text one with 20 MCVs, a timestamp one
 * with 20 bounds, and an integer one with 10 MCVs and 20 bounds. */
static pgw_snapshot *make(unsigned seed)
{
    pgw_snapshot_builder *b;
    if (pgw_snapshot_builder_new(&b, NULL, NULL))
        abort();
    pgw_snapshot_builder_set_table(b, "public", "bench", 1, NULL);
    pgw_snapshot_builder_set_captured_at(b, 1764493844000000LL, NULL);
    pgw_snapshot_builder_set_reltuples(b, 100000, NULL);
    for (size_t c = 0; c < NCOLS; c++) {
        char name[32], vals[30][40];
        const char *mcv[10], *hist[20], *text[20];
        double freqs[20];
        snprintf(name, sizeof name, "col_%u_%03zu", seed, c);
        pgw_column_stats st = PGW_COLUMN_STATS_INIT;
        st.null_frac = (double)(c % 7) / 100.0;
        st.avg_width = 8;
        size_t kind = c % 4;
        for (int k = 0; k < 20; k++) {
            switch (kind) {
            case 0:
                snprintf(vals[k], sizeof vals[k], "%.4f", -74.0 + (double)(c + seed) + k * 0.0137);
                hist[k] = vals[k];
                break;
            case 1:
                snprintf(vals[k], sizeof vals[k], "Value %zu-%u %c", c, k + seed, 'A' + k);
                text[k] = vals[k];
                freqs[k] = 0.04 - k * 0.001;
                break;
            case 2:
                snprintf(vals[k], sizeof vals[k], "2019-%02zu-%02d %02d:%02d:%02d",
                         1 + (c + seed) % 12, 1 + k, k, (k * 7) % 60, (k * 13) % 60);
                hist[k] = vals[k];
                break;
            default:
                snprintf(vals[k], sizeof vals[k], "%d", 10 + k * (int)(c % 9 + 1));
                hist[k] = vals[k];
                if (k < 10) {
                    snprintf(vals[20 + k], sizeof vals[20 + k], "%d", k);
                    mcv[k] = vals[20 + k];
                    freqs[k] = 0.05 - k * 0.003;
                }
            }
        }
        if (kind == 1) {
            st.n_distinct = 40;
            st.most_common_vals = text;
            st.most_common_freqs = freqs;
            st.n_most_common = 20;
        } else {
            st.n_distinct = -0.5;
            st.histogram_bounds = hist;
            st.n_histogram_bounds = 20;
            if (kind == 3) {
                st.most_common_vals = mcv;
                st.most_common_freqs = freqs;
                st.n_most_common = 10;
            }
        }
        if (pgw_snapshot_builder_add_column(b, name, kind == 2 ? "timestamp" : "text", &st,
                                            NULL))
            abort();
    }
    pgw_snapshot *s;
    if (pgw_snapshot_builder_finish(&s, b, NULL))
        abort();
    pgw_snapshot_builder_free(b);
    return s;
}

static volatile double sink;

/* Milliseconds for all 300 x 300 pairs, the least of `rounds`. */
static double all_pairs(const pgw_snapshot *a, const pgw_snapshot *b, bool shape, int rounds)
{
    double best = 1e30;
    for (int r = 0; r < rounds; r++) {
        uint64_t t0 = bench_thread_cpu_ns();
        double acc = 0;
        for (size_t i = 0; i < NCOLS; i++)
            for (size_t j = 0; j < NCOLS; j++) {
                if (shape) {
                    pgwi_value_evidence e;
                    pgwi_value_evidence_of(&e, a, i, b, j);
                    acc += e.score;
                } else {
                    pgw_similarity s;
                    pgwi_similarity(&s, a, i, b, j);
                    acc += s.score;
                }
            }
        double ms = (double)(bench_thread_cpu_ns() - t0) / 1e6;
        sink = acc;
        if (ms < best)
            best = ms;
    }
    return best;
}

int main(void)
{
    printf("pgwitness %s — value-shape evidence benchmark (one thread, CPU time)\n",
           pgw_version());
    double build_best = 1e30;
    for (int r = 0; r < 20; r++) {
        uint64_t t0 = bench_thread_cpu_ns();
        pgw_snapshot *s = make(1);
        double ms = (double)(bench_thread_cpu_ns() - t0) / 1e6;
        pgw_snapshot_free(s);
        if (ms < build_best)
            build_best = ms;
    }
    pgw_snapshot *a = make(1), *b = make(2);
    double ve = 0, sim = 0;
    for (int round = 0; round < 3; round++) { /* interleaved: noise hits both */
        double x = all_pairs(a, b, true, 5), y = all_pairs(a, b, false, 5);
        ve = round == 0 || x < ve ? x : ve;
        sim = round == 0 || y < sim ? y : sim;
    }
    printf("%-52s %8.2f ms  %6.1f ns/pair\n", "value evidence, 300 x 300 column pairs", ve,
           ve * 1e6 / (NCOLS * NCOLS));
    printf("%-52s %8.2f ms  %6.1f ns/pair\n", "  beside: pgw_similarity over the same pairs", sim,
           sim * 1e6 / (NCOLS * NCOLS));
    printf("%-52s %8.2f ms\n", "building one 300-column snapshot (preparation included)",
           build_best);
    pgw_snapshot_free(a);
    pgw_snapshot_free(b);
    return 0;
}
