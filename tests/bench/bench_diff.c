/*
 * tests/bench/bench_diff.c — diff_snapshots throughput (issues 3 and 17).
 *
 * Two workloads, each measured side by side in one run, interleaved:
 *   - the default diff: renames by the combined score and the optimal
 *     assignment (PGW_RENAME_COMBINED);
 *   - the same with the contrast off (rename_weights.contrast 0: the kept
 *     columns are not read), to show what the contrast costs;
 *   - today's rules before issue 17 (PGW_RENAME_PROFILE: folded names or
 *     profile similarity, greedy; contrast 0, as they read no kept column),
 *     the figure the combined score is held to (issue 17: within 1.5x for
 *     A; B at most 40 ms);
 *   - the same diff with profiles left out (names and types only).
 *   A. two 20-column analysed snapshots, 2 columns renamed;
 *   B. two 300-column analysed snapshots, every column renamed.
 * Times are the thread's CPU time (bench_thread_cpu_ns), so that the
 * time slices other processes get on a shared machine do not count.
 * Also: allocations per diff, through the allocator hook.
 * SPDX-License-Identifier: MIT
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "pgwitness/pgwitness.h"

/* Builds an analysed snapshot: even columns numeric with a 20-bound
 * histogram over a range of their own, odd columns text with 20 MCVs of
 * their own values. `renamed` names every column listed with a new name. */
static pgw_snapshot *make(size_t ncols, const bool *renamed, pgw_profile_mode mode,
                          bool profiles)
{
    pgw_snapshot_options o = PGW_SNAPSHOT_OPTIONS_INIT;
    o.profile_mode = mode;
    pgw_snapshot_builder *b;
    if (pgw_snapshot_builder_new(&b, &o, NULL))
        abort();
    pgw_snapshot_builder_set_table(b, "public", "bench", 1, NULL);
    pgw_snapshot_builder_set_captured_at(b, 1764493844000000LL, NULL);
    pgw_snapshot_builder_set_reltuples(b, 100000, NULL);
    for (size_t c = 0; c < ncols; c++) {
        char name[32], vals[20][32];
        const char *ptr[20];
        double freqs[20];
        snprintf(name, sizeof name, "%s_%03zu", renamed && renamed[c] ? "renamed" : "col", c);
        pgw_column_stats st = PGW_COLUMN_STATS_INIT;
        st.null_frac = (double)(c % 7) / 100.0;
        st.avg_width = 8;
        for (int k = 0; k < 20; k++) {
            if (c % 2 == 0)
                snprintf(vals[k], sizeof vals[k], "%zu.%d", c * 1000 + (size_t)k * 37, k);
            else
                snprintf(vals[k], sizeof vals[k], "value-%zu-%d", c, k);
            ptr[k] = vals[k];
            freqs[k] = 0.04 - k * 0.001;
        }
        if (c % 2 == 0) {
            st.n_distinct = -0.5;
            st.histogram_bounds = ptr;
            st.n_histogram_bounds = 20;
        } else {
            st.n_distinct = 40;
            st.most_common_vals = ptr;
            st.most_common_freqs = freqs;
            st.n_most_common = 20;
        }
        if (pgw_snapshot_builder_add_column(b, name, c % 2 ? "text" : "numeric",
                                            profiles ? &st : NULL, NULL))
            abort();
    }
    pgw_snapshot *s;
    if (pgw_snapshot_builder_finish(&s, b, NULL))
        abort();
    pgw_snapshot_builder_free(b);
    return s;
}

/* Diffs per second over at least `min_ms` milliseconds, with options o
 * (NULL: the defaults). */
static double rate(const pgw_snapshot *a, const pgw_snapshot *b, const pgw_diff_options *o,
                   double min_ms, size_t *renames)
{
    size_t n = 0;
    uint64_t start = bench_thread_cpu_ns(), now;
    do {
        for (int k = 0; k < 16; k++) {
            pgw_diff *d;
            if (pgw_diff_snapshots(&d, a, b, o, NULL))
                abort();
            *renames = pgw_diff_renamed_count(d);
            pgw_diff_free(d);
            n++;
        }
        now = bench_thread_cpu_ns();
    } while ((double)(now - start) / 1e6 < min_ms);
    return (double)n / ((double)(now - start) / 1e9);
}

/* `limit` names the bound for this workload, printed beside the
 * figures. */
static void workload(const char *label, size_t ncols, size_t nrenamed, double min_ms,
                     const char *limit)
{
    bool *ren = calloc(ncols, sizeof *ren);
    for (size_t i = 0; i < nrenamed; i++)
        ren[(i * 7 + 3) % ncols] = true;
    pgw_snapshot *a = make(ncols, NULL, PGW_PROFILE_RAW, true);
    pgw_snapshot *b = make(ncols, ren, PGW_PROFILE_RAW, true);
    pgw_snapshot *a0 = make(ncols, NULL, PGW_PROFILE_RAW, false);
    pgw_snapshot *b0 = make(ncols, ren, PGW_PROFILE_RAW, false);
    pgw_diff_options today = PGW_DIFF_OPTIONS_INIT;
    today.rename_method = PGW_RENAME_PROFILE;
    today.rename_threshold = 0.6;
    /* Today's rules read no kept column: the parts they fill are not
     * contrasted (rename_weights.contrast 0). */
    today.rename_weights.contrast = 0;
    pgw_diff_options flat = PGW_DIFF_OPTIONS_INIT;
    flat.rename_weights.contrast = 0;
    size_t renames = 0, renames_t = 0, renames0 = 0, renames_f = 0;
    /* Interleave the measurements so machine noise hits all four. */
    double r = 0, rt = 0, r0 = 0, rf = 0;
    for (int round = 0; round < 3; round++) {
        r += rate(a, b, NULL, min_ms, &renames);
        rf += rate(a, b, &flat, min_ms, &renames_f);
        rt += rate(a, b, &today, min_ms, &renames_t);
        r0 += rate(a0, b0, NULL, min_ms, &renames0);
    }
    r /= 3;
    rf /= 3;
    rt /= 3;
    r0 /= 3;
    size_t before = bench_allocs();
    pgw_diff *d;
    pgw_diff_snapshots(&d, a, b, NULL, NULL);
    size_t allocs = bench_allocs() - before;
    pgw_diff_free(d);
    before = bench_allocs();
    pgw_diff_snapshots(&d, a, b, &today, NULL);
    size_t allocs_t = bench_allocs() - before;
    pgw_diff_free(d);
    printf("%s\n", label);
    printf("  %-42s %10.0f diffs/s  %9.2f us/diff  %3zu allocations/diff  renames found %zu/%zu\n",
           "combined score + assignment (default)", r, 1e6 / r, allocs, renames, nrenamed);
    printf("  %-42s %10.0f diffs/s  %9.2f us/diff                       renames found %zu/%zu\n",
           "the same, contrast off (contrast 0)", rf, 1e6 / rf, renames_f, nrenamed);
    printf("  %-42s %10.0f diffs/s  %9.2f us/diff  %3zu allocations/diff  renames found %zu/%zu\n",
           "today's rules (PGW_RENAME_PROFILE)", rt, 1e6 / rt, allocs_t, renames_t, nrenamed);
    printf("  %-42s %10.0f diffs/s  %9.2f us/diff  (names and types only)\n",
           "baseline: same shapes, no profiles", r0, 1e6 / r0);
    printf("  %-42s %10.2f x today's rules\n", "cost of the combined score", rt / r);
    printf("  %-42s %10.2f x today's rules\n", "  of which without the contrast", rt / rf);
    printf("  %-42s %10.2f x the same diff without it\n", "cost of the contrast", rf / r);
    printf("  %-42s %s\n", "issue 17", limit);
    printf("  %-42s %10.2f x the names-only diff\n", "cost of value-based comparison", r0 / r);
    pgw_snapshot_free(a);
    pgw_snapshot_free(b);
    pgw_snapshot_free(a0);
    pgw_snapshot_free(b0);
    free(ren);
}

int main(int argc, char **argv)
{
    /* No arguments: --help (or -h) says so; anything else is refused. */
    if (argc > 1) {
        bool help = argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0);
        fprintf(help ? stdout : stderr,
                "usage: bench-diff   (no arguments)\n"
                "Diffs a 20-column table with 2 renames and a 300-column one, all renamed,\n"
                "and prints diffs/s and time per diff beside the rules before issue 17.\n");
        return help ? 0 : 2;
    }
    bench_count_allocs();
    printf("pgwitness %s — diff_snapshots benchmark (one thread)\n", pgw_version());
    workload("A: 20 columns, 2 renamed", 20, 2, 300,
             "within 1.5 x today's diffs/s (today's rules, in the row above)");
    workload("B: 300 columns, all renamed", 300, 300, 1000,
             "at most 40 ms per diff (40000 us; the first row)");
    return 0;
}
