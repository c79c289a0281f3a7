/*
 * tests/bench/bench_index.c — the reverse index at scale (issue 5,
 * "Performance"), printed side by side in one run:
 *
 *  1. 1,000,000 subscriptions over 10,000 tenants × 10 tables (10 distinct
 *     subscriptions per tenant and table), each with an equality filter, a
 *     sort, a window and up to 50 result IDs: the median time to match a
 *     write of up to 10 IDs (updates of a projected column, updates moving a
 *     row between filter values, inserts), on one core;
 *  2. the cost of a write whose candidate set is empty when the index holds
 *     1,000 vs 1,000,000 subscriptions in other scopes (ratio; timed over
 *     passes of 64 writes, a single call being below the clock's resolution);
 *  3. memory per subscription through the allocator hook;
 *  4. decisions per second of pgw_decide alone;
 *  7. range filters (issue 18): 100,000 subscriptions, 100 numeric price
 *     bands per tenant, declared opaque (today's only choice) and as typed
 *     ranges on two indexes: runners visited and marked per write and the
 *     match latency, then pgw_decide on one band, side by side. The typed
 *     runners form a range group: the write's values are compared with the
 *     coarse keys of each posting's bounds, and only the bands that may hold
 *     them are visited (as eq/in values select their runners).
 *
 * Match latencies are reported as median, p90 and p99 of single calls. After
 * a write marks runners they are rerun: acknowledged with the same result IDs
 * they were registered with (outside the timed call), so the index keeps its
 * shape (every subscription with its result IDs) for the whole run.
 *
 * The write set of a timed call is built just before it and freed after it
 * (outside the timed call), as in a host, which decodes a notification and
 * matches it at once: the write's own memory is in cache and the time is the
 * index's. The "pre-built writes" cases instead cycle through 4096 writes
 * built up front, so the write set's memory is cold as well (its scope,
 * IDs and values are several dependent cache misses before the index is
 * reached).
 *
 * A match on a large index is bound by memory latency: the write's bucket,
 * then its candidates' runner blocks, are dependent trips to memory, each
 * often with a TLB miss. So the run also measures (5) one dependent round
 * trip to memory on this machine (a pointer chase through 256 MiB, with
 * 4 KiB pages and with transparent huge pages), and (6) repeats the cases
 * of random tenants (single calls and batches) in a child process whose
 * heap is backed by transparent huge pages (glibc's glibc.malloc.hugetlb=1
 * tunable: the host's choice, documented in index.h), printed beside the
 * others.
 *
 * Usage: bench-index [subscriptions [cases [huge]]]
 * (BENCH_INDEX_REPS in the environment: writes per case, default 200000,
 * fewer for a run under callgrind)
 *   subscriptions: default 1000000; a multiple of 100
 *   cases: match cases to run (default 0123456789abcdefgh): 0-2 random
 *          tenants (projected column, owner move, insert), 3-5 the same
 *          over 16 active tenants, 6-8 as 0-2 with pre-built writes, 9-b as
 *          0-2 with tenants drawn from a Zipf(1) distribution (a few tenants
 *          write most: the usual skew of multi-tenant activity), c-e as 0-2
 *          matched in batches of 8 by pgw_index_match_batch() (the time of
 *          a batch divided by 8: a host that reads several notifications
 *          at once), f-h as 0-2 on a second index holding the same
 *          subscriptions registered in random order (as hosts register
 *          them, when users connect: a bucket's runner blocks are then
 *          scattered over the heap instead of next to each other), r the
 *          range filters of (7)
 *   huge: "yes" (default) runs (6) when the system offers transparent huge
 *         pages, "no" skips it; "child" is the child's own mode
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE /* madvise */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pgwitness/pgwitness.h"

/* ---- a counting allocator (bytes requested, as the library sees them) ---- */

typedef union hdr {
    size_t size;
    max_align_t align;
} hdr;
static size_t live_bytes;

static void *c_malloc(size_t n, void *ud)
{
    (void)ud;
    hdr *h = malloc(sizeof *h + n);
    if (!h)
        return NULL;
    h->size = n;
    live_bytes += n;
    return h + 1;
}
static void *c_realloc(void *p, size_t n, void *ud)
{
    if (!p)
        return c_malloc(n, ud);
    hdr *h = (hdr *)p - 1;
    size_t old = h->size;
    hdr *nh = realloc(h, sizeof *nh + n);
    if (!nh)
        return NULL;
    nh->size = n;
    live_bytes = live_bytes - old + n;
    return nh + 1;
}
static void c_free(void *p, void *ud)
{
    (void)ud;
    if (!p)
        return;
    hdr *h = (hdr *)p - 1;
    live_bytes -= h->size;
    free(h);
}

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void die(const char *what, int rc, const pgw_error *err)
{
    fprintf(stderr, "bench-index: %s: %s (%s)\n", what, pgw_strerror(rc),
            err ? err->message : "");
    exit(1);
}

#define CHECK(what, call)                                                                     \
    do {                                                                                      \
        pgw_error err_;                                                                       \
        pgw_error_clear(&err_);                                                               \
        int rc_ = (call);                                                                     \
        if (rc_ != PGW_OK)                                                                    \
            die(what, rc_, &err_);                                                            \
    } while (0)

static const char *const cols[] = {"id", "title", "status", "updated_at"};
static const char *const sortc[] = {"updated_at"};

/* Result IDs of subscription s: up to 50 row IDs of its (tenant, table). */
static size_t result_ids(char buf[50][12], const char *parts[50], pgw_rowid ids[50], uint32_t s)
{
    size_t n = 1 + (s * 2654435761u >> 8) % 50;
    for (size_t i = 0; i < n; i++) {
        snprintf(buf[i], 12, "%u", (unsigned)((s % 10) * 1000 + i * 3));
        parts[i] = buf[i];
        ids[i].parts = &parts[i];
        ids[i].n_parts = 1;
    }
    return n;
}

static void scope_of(char tenant[24], pgw_scope *sc, uint32_t t)
{
    snprintf(tenant, 24, "tenant%u", (unsigned)t);
    sc->project = "p1";
    sc->tenant = tenant;
    sc->database = "app";
}

/* Registers subscription number s (tenant s / 100, table (s / 10) % 10). */
static size_t add_sub(pgw_index *x, uint32_t s, uint32_t tenant_offset)
{
    char tenant[24], table[16], owner[24];
    char buf[50][12];
    const char *parts[50];
    pgw_rowid ids[50];
    pgw_scope sc;
    scope_of(tenant, &sc, s / 100 + tenant_offset);
    snprintf(table, sizeof table, "table%u", (unsigned)((s / 10) % 10));
    snprintf(owner, sizeof owner, "user%u", (unsigned)(s % 10));
    const char *ov[] = {owner};
    pgw_deps *d = NULL;
    size_t t;
    CHECK("deps_new", pgw_deps_new(&d, &sc, "tasks.list", &err_));
    CHECK("add_table", pgw_deps_add_table(&t, d, "public", table, &err_));
    CHECK("set_columns", pgw_deps_set_columns(d, t, cols, 4, &err_));
    CHECK("add_filter", pgw_deps_add_filter(d, t, "owner", PGW_FILTER_EQ, ov, 1, &err_));
    CHECK("order_by", pgw_deps_set_order_by(d, t, sortc, 1, &err_));
    CHECK("window", pgw_deps_set_window(d, t, 50, 0, &err_));
    size_t n = result_ids(buf, parts, ids, s);
    CHECK("result_ids", pgw_deps_set_result_ids(d, ids, n, &err_));
    pgw_runner_id id;
    CHECK("register", pgw_index_register(&id, x, d, &err_));
    pgw_deps_free(d);
    return n;
}

/* A write of up to 10 IDs to (tenant, table) of kind k. */
static pgw_write *make_write(uint32_t tenant, uint32_t table, int k)
{
    char tname[24], tab[16];
    pgw_scope sc;
    scope_of(tname, &sc, tenant);
    snprintf(tab, sizeof tab, "table%u", (unsigned)table);
    pgw_op op = k == 2 ? PGW_OP_INSERT : PGW_OP_UPDATE;
    pgw_write *w = NULL;
    CHECK("write_new", pgw_write_new(&w, &sc, "public", tab, op, &err_));
    size_t n = 1 + rnd(10);
    char buf[10][12];
    const char *parts[10];
    pgw_rowid ids[10];
    for (size_t i = 0; i < n; i++) {
        snprintf(buf[i], 12, "%u", (unsigned)(rnd(10) * 1000 + rnd(200)));
        parts[i] = buf[i];
        ids[i].parts = &parts[i];
        ids[i].n_parts = 1;
    }
    CHECK("set_ids", pgw_write_set_ids(w, ids, n, false, &err_));
    if (k == 0) { /* a projected column */
        const char *c[] = {"title"};
        CHECK("set_columns", pgw_write_set_columns(w, c, 1, false, &err_));
    } else if (k == 1) { /* move rows between owners, values known */
        const char *c[] = {"owner"};
        CHECK("set_columns", pgw_write_set_columns(w, c, 1, false, &err_));
        for (size_t i = 0; i < n; i++) {
            char a[16], b[16];
            snprintf(a, sizeof a, "user%u", rnd(20));
            snprintf(b, sizeof b, "user%u", rnd(20));
            CHECK("old", pgw_write_set_value(w, i, PGW_SIDE_OLD, "owner", a, &err_));
            CHECK("new", pgw_write_set_value(w, i, PGW_SIDE_NEW, "owner", b, &err_));
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            char a[16];
            snprintf(a, sizeof a, "user%u", rnd(20));
            CHECK("new", pgw_write_set_value(w, i, PGW_SIDE_NEW, "owner", a, &err_));
        }
    }
    return w;
}

/* The index whose subscriptions were registered in random order, and the
 * subscription in each of its runner slots. */
static pgw_index *shuffled_index;
static const uint32_t *shuffled_sub;

/* Reruns the dirty runners: each is acknowledged with the result IDs it was
 * registered with (runners are registered into an index without
 * unregistrations, so runner slot k is the k-th subscription registered:
 * subscription k, or shuffled_sub[k] in the shuffled index). */
static void drain(pgw_index *x)
{
    pgw_dirty d;
    char buf[50][12];
    const char *parts[50];
    pgw_rowid ids[50];
    while (pgw_index_pop_dirty(&d, x) == PGW_OK) {
        uint32_t sub = (uint32_t)d.runner;
        if (x == shuffled_index)
            sub = shuffled_sub[sub];
        size_t n = result_ids(buf, parts, ids, sub);
        CHECK("ack", pgw_index_ack(x, d.runner, ids, n, &err_));
    }
}

typedef struct lat {
    double p50, p90, p99;
} lat;

static lat percentiles(double *t, size_t reps)
{
    qsort(t, reps, sizeof *t, cmp_double);
    lat l = {t[reps / 2], t[reps * 9 / 10], t[reps * 99 / 100]};
    return l;
}

/* Percentiles of `reps` timings of matching each of the writes in turn. */
static lat time_match(pgw_index *x, pgw_write **ws, size_t nw, size_t reps)
{
    double *t = malloc(reps * sizeof *t);
    for (size_t i = 0; i < reps; i++) {
        pgw_write *w = ws[i % nw];
        double a = now_ns();
        size_t n;
        pgw_index_match(&n, x, w, NULL);
        double b = now_ns();
        t[i] = b - a;
        if (n)
            drain(x);
    }
    lat l = percentiles(t, reps);
    free(t);
    return l;
}

/* A write to build: its (tenant, table) and the seed of its IDs and values. */
typedef struct wspec {
    uint32_t tenant, table;
    uint64_t seed;
} wspec;

static pgw_write *build_write(const wspec *s, int kind)
{
    uint64_t saved = rng;
    rng = s->seed;
    pgw_write *w = make_write(s->tenant, s->table, kind);
    rng = saved;
    return w;
}

/* Percentiles of `reps` timings of matching writes built just before. */
static lat time_match_fresh(pgw_index *x, const wspec *ws, size_t nw, int kind, size_t reps)
{
    double *t = malloc(reps * sizeof *t);
    for (size_t i = 0; i < reps; i++) {
        pgw_write *w = build_write(&ws[i % nw], kind);
        double a = now_ns();
        size_t n;
        pgw_index_match(&n, x, w, NULL);
        double b = now_ns();
        t[i] = b - a;
        pgw_write_free(w);
        if (n)
            drain(x);
    }
    lat l = percentiles(t, reps);
    free(t);
    return l;
}

/* Percentiles over `reps` writes matched in batches of BATCH, each batch
 * built just before its call: per batch, its time divided by BATCH. */
enum { BATCH = 8 };
static lat time_match_batch(pgw_index *x, const wspec *ws, size_t nw, int kind, size_t reps)
{
    size_t nb = reps / BATCH;
    double *t = malloc(nb * sizeof *t);
    for (size_t i = 0; i < nb; i++) {
        pgw_write *bw[BATCH];
        size_t outs[BATCH], n = 0;
        for (size_t j = 0; j < BATCH; j++)
            bw[j] = build_write(&ws[(i * BATCH + j) % nw], kind);
        double a = now_ns();
        pgw_index_match_batch(outs, x, bw, BATCH, NULL);
        double b = now_ns();
        t[i] = (b - a) / BATCH;
        for (size_t j = 0; j < BATCH; j++) {
            n += outs[j];
            pgw_write_free(bw[j]);
        }
        if (n)
            drain(x);
    }
    lat l = percentiles(t, nb);
    free(t);
    return l;
}

/* Median time of one match over `passes` timings of matching all nw writes
 * in turn: for writes that cost tens of nanoseconds, a single call is below
 * the clock's resolution (10 ns here) and its overhead. */
static double median_pass(pgw_index *x, pgw_write **ws, size_t nw, size_t passes)
{
    double *t = malloc(passes * sizeof *t);
    for (size_t p = 0; p < passes; p++) {
        double a = now_ns();
        for (size_t i = 0; i < nw; i++)
            pgw_index_match(NULL, x, ws[i], NULL);
        t[p] = (now_ns() - a) / (double)nw;
    }
    double m = percentiles(t, passes).p50;
    free(t);
    return m;
}

/* ---- the machine's memory latency, and transparent huge pages ---- */

/* Nanoseconds of one dependent load from memory: a pointer chase through a
 * random cyclic permutation of the cache lines of 256 MiB (far beyond the
 * caches and the TLB's reach with 4 KiB pages), its pages huge or not.
 * Returns 0 when the memory cannot be had. */
static double round_trip_ns(bool huge)
{
    const size_t bytes = (size_t)256 << 20, lines = bytes / 64;
    unsigned char *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                            -1, 0);
    if (m == MAP_FAILED)
        return 0;
#ifdef MADV_HUGEPAGE
    madvise(m, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
#else
    (void)huge;
#endif
    uint32_t *order = malloc(lines * sizeof *order);
    if (!order) {
        munmap(m, bytes);
        return 0;
    }
    for (size_t i = 0; i < lines; i++)
        order[i] = (uint32_t)i;
    uint64_t chase = 0x9E3779B97F4A7C15ull;
    for (size_t i = lines - 1; i > 0; i--) { /* Fisher-Yates */
        chase ^= chase << 13; /* its own generator: the cases' writes stay as they were */
        chase ^= chase >> 7;
        chase ^= chase << 17;
        size_t j = (size_t)(chase % (i + 1));
        uint32_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < lines; i++) /* line order[i] leads to order[i + 1] */
        *(size_t *)(m + (size_t)order[i] * 64) = (size_t)order[(i + 1) % lines] * 64;
    free(order);
    size_t at = 0, steps = 2000000;
    for (size_t i = 0; i < steps / 10; i++) /* warm the page tables' caches */
        at = *(volatile size_t *)(m + at);
    double a = now_ns();
    for (size_t i = 0; i < steps; i++)
        at = *(volatile size_t *)(m + at);
    double ns = (now_ns() - a) / (double)steps;
    munmap(m, bytes);
    return ns;
}

/* Whether the system offers transparent huge pages to a process asking
 * for them (madvise or always). */
static bool thp_available(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f)
        return false;
    char line[128] = "";
    bool ok = fgets(line, sizeof line, f) && !strstr(line, "[never]");
    fclose(f);
    return ok;
}

/* Anonymous memory of this process in huge pages, and in all, in kB. */
static void anon_kb(size_t *huge_kb, size_t *rss_kb)
{
    *huge_kb = *rss_kb = 0;
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        size_t v;
        if (sscanf(line, "AnonHugePages: %zu kB", &v) == 1)
            *huge_kb = v;
        else if (sscanf(line, "Rss: %zu kB", &v) == 1)
            *rss_kb = v;
    }
    fclose(f);
}

/* Runs this program again for the random-tenant cases, its heap backed by
 * transparent huge pages through glibc's tunable. */
static void run_huge_child(const char *self, uint32_t subs, const char *cases)
{
    char sub_arg[16], case_arg[16] = "";
    size_t n = 0;
    for (const char *c = "012cdefgh"; *c; c++)
        if (strchr(cases, *c))
            case_arg[n++] = *c;
    if (!n)
        return;
    snprintf(sub_arg, sizeof sub_arg, "%u", (unsigned)subs);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("bench-index: fork");
        return;
    }
    if (pid == 0) {
        setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1);
        execl(self, self, sub_arg, case_arg, "child", (char *)NULL);
        perror("bench-index: exec");
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
}

/* ---- 7: range filters, declared as today (opaque) and typed ---- */

enum { RB_TENANTS = 1000, RB_BANDS = 100 };

/* Subscription `band` of a tenant: SELECT id, title, price FROM items WHERE
 * price >= band AND price < band + 1 (numeric), typed or opaque. */
static pgw_deps *band_sub(uint32_t tenant, uint32_t band, bool typed)
{
    char tname[24], lo[16], hi[16], q[32];
    pgw_scope sc;
    scope_of(tname, &sc, tenant);
    snprintf(lo, sizeof lo, "%u", band);
    snprintf(hi, sizeof hi, "%u", band + 1);
    snprintf(q, sizeof q, "items.band%u", band);
    static const char *const rcols[] = {"id", "title", "price"};
    pgw_deps *d = NULL;
    size_t t;
    CHECK("deps_new", pgw_deps_new(&d, &sc, q, &err_));
    CHECK("add_table", pgw_deps_add_table(&t, d, "public", "items", &err_));
    CHECK("set_columns", pgw_deps_set_columns(d, t, rcols, 3, &err_));
    if (typed) {
        pgw_bound l = {PGW_BOUND_INCLUSIVE, lo}, h = {PGW_BOUND_EXCLUSIVE, hi};
        CHECK("add_range", pgw_deps_add_range(d, t, "price", PGW_CMP_NUMERIC, &l, &h, &err_));
    } else {
        CHECK("add_filter", pgw_deps_add_filter(d, t, "price", PGW_FILTER_OPAQUE, NULL, 0, &err_));
    }
    return d;
}

/* A write of one row of items in a tenant: an insert at price p, or an
 * update of its price from p to q (values known, as a stream with the
 * row's old and new image carries them). */
static pgw_write *band_write(uint32_t tenant, bool update, const char *p, const char *q)
{
    char tname[24];
    pgw_scope sc;
    scope_of(tname, &sc, tenant);
    pgw_write *w = NULL;
    const char *id = "7";
    pgw_rowid rid = {&id, 1};
    CHECK("write_new", pgw_write_new(&w, &sc, "public", "items",
                                     update ? PGW_OP_UPDATE : PGW_OP_INSERT, &err_));
    CHECK("set_ids", pgw_write_set_ids(w, &rid, 1, false, &err_));
    if (update) {
        const char *c[] = {"price"};
        CHECK("set_columns", pgw_write_set_columns(w, c, 1, false, &err_));
        CHECK("old", pgw_write_set_value(w, 0, PGW_SIDE_OLD, "price", p, &err_));
        CHECK("new", pgw_write_set_value(w, 0, PGW_SIDE_NEW, "price", q, &err_));
    } else {
        CHECK("new", pgw_write_set_value(w, 0, PGW_SIDE_NEW, "price", p, &err_));
    }
    return w;
}

static void bench_ranges(size_t reps)
{
    pgw_index *ix[2] = {NULL, NULL};
    for (int m = 0; m < 2; m++) {
        CHECK("index_new", pgw_index_new(&ix[m], NULL, &err_));
        for (uint32_t t = 0; t < RB_TENANTS; t++)
            for (uint32_t b = 0; b < RB_BANDS; b++) {
                pgw_deps *d = band_sub(t, b, m == 1);
                pgw_runner_id id;
                CHECK("register", pgw_index_register(&id, ix[m], d, &err_));
                pgw_deps_free(d);
            }
    }
    printf("range filters: %u subscriptions (%u tenants x %u price bands, price >= b AND "
           "price < b + 1, numeric), declared opaque as today and as typed ranges, on two "
           "indexes:\n",
           RB_TENANTS * RB_BANDS, RB_TENANTS, RB_BANDS);
    enum { NW = 1024 };
    static pgw_write *ws[NW];
    for (int kind = 0; kind < 2; kind++) {
        for (size_t i = 0; i < NW; i++) {
            char p[24], q[24];
            snprintf(p, sizeof p, "%u.%02u", rnd(RB_BANDS), rnd(100));
            snprintf(q, sizeof q, "%u.%02u", rnd(RB_BANDS), rnd(100));
            ws[i] = band_write(rnd(RB_TENANTS), kind == 1, p, q);
        }
        lat l[2];
        double visited[2], marked[2];
        for (int m = 0; m < 2; m++) {
            pgw_index_stats s0 = PGW_INDEX_STATS_INIT, s1 = PGW_INDEX_STATS_INIT;
            pgw_index_stats_get(&s0, ix[m]);
            double *t = malloc(reps * sizeof *t);
            for (size_t i = 0; i < reps; i++) {
                size_t n;
                double a = now_ns();
                pgw_index_match(&n, ix[m], ws[i % NW], NULL);
                t[i] = now_ns() - a;
                pgw_dirty dd;
                while (pgw_index_pop_dirty(&dd, ix[m]) == PGW_OK)
                    CHECK("ack_unknown", pgw_index_ack_unknown(ix[m], dd.runner, &err_));
            }
            l[m] = percentiles(t, reps);
            free(t);
            pgw_index_stats_get(&s1, ix[m]);
            visited[m] = (double)(s1.visited - s0.visited) / reps;
            marked[m] = (double)(s1.marked - s0.marked) / reps;
        }
        printf("  %s: today %.1f visited, %.2f marked per write, median %.0f ns (p99 %.0f); "
               "typed ranges %.1f visited, %.2f marked, median %.0f ns (p99 %.0f): marked "
               "ratio %.3f, time ratio %.2f\n",
               kind ? "update of price, old and new known" : "insert, price known",
               visited[0], marked[0], l[0].p50, l[0].p99, visited[1], marked[1], l[1].p50,
               l[1].p99, marked[1] / marked[0], l[1].p50 / l[0].p50);
        for (size_t i = 0; i < NW; i++)
            pgw_write_free(ws[i]);
    }
    /* pgw_decide alone, one band against the insert, side by side */
    pgw_deps *d[2] = {band_sub(0, 42, false), band_sub(0, 42, true)};
    pgw_write *w[3] = {band_write(0, false, "42.50", NULL), band_write(0, false, "7.25", NULL),
                       band_write(0, true, "7.25", "99.99")};
    double ns[2];
    size_t refresh[2] = {0, 0}, iters = 3000000;
    for (int m = 0; m < 2; m++) {
        double a = now_ns();
        for (size_t i = 0; i < iters; i++) {
            pgw_verdict v;
            pgw_decide(&v, d[m], w[i % 3], NULL);
            refresh[m] += v.refresh;
        }
        ns[m] = (now_ns() - a) / iters;
    }
    printf("  pgw_decide, one band against 1-row writes (in the band, below it, an update "
           "across it): today %.0f ns (%zu refreshes of %zu), typed %.0f ns (%zu): ratio "
           "%.2f\n",
           ns[0], refresh[0], iters, ns[1], refresh[1], ns[1] / ns[0]);
    for (int m = 0; m < 2; m++) {
        pgw_deps_free(d[m]);
        pgw_index_free(ix[m]);
    }
    for (int k = 0; k < 3; k++)
        pgw_write_free(w[k]);
}

int main(int argc, char **argv)
{
    uint32_t subs = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1000000;
    if (subs < 1000 || subs % 100)
        subs = 1000000;
    const char *cases = argc > 2 ? argv[2] : "0123456789abcdefghr";
    const char *huge = argc > 3 ? argv[3] : "yes";
    const bool child = strcmp(huge, "child") == 0;
    pgw_allocator a = {c_malloc, c_realloc, c_free, NULL};
    pgw_set_allocator(&a);
    if (!child) {
        printf("pgwitness %s reverse index benchmark\n", pgw_version());
        double rt4 = round_trip_ns(false), rth = thp_available() ? round_trip_ns(true) : 0;
        printf("one dependent round trip to memory on this machine: %.0f ns with 4 KiB pages",
               rt4);
        if (rth > 0)
            printf(", %.0f ns with transparent huge pages (ratio %.2f)", rth, rt4 / rth);
        printf("\n");
    }

    /* 1 + 3: the big index and its memory */
    pgw_index *big = NULL;
    CHECK("index_new", pgw_index_new(&big, NULL, &err_));
    size_t before = live_bytes, nids = 0;
    double t0 = now_ns();
    for (uint32_t s = 0; s < subs; s++)
        nids += add_sub(big, s, 0);
    double t1 = now_ns();
    size_t bytes = live_bytes - before;
    if (child) {
        size_t hkb, rkb;
        anon_kb(&hkb, &rkb);
        printf("huge pages (a child process, GLIBC_TUNABLES=glibc.malloc.hugetlb=1): "
               "%zu of %zu MiB of its memory in huge pages\n",
               hkb >> 10, rkb >> 10);
    } else {
        printf("registered %u subscriptions (%u tenants x 10 tables x 10) with %zu result IDs "
           "in %.2f s (%.2f us each)\n",
           subs, subs / 100, nids, (t1 - t0) / 1e9, (t1 - t0) / 1e3 / subs);
    printf("memory through the allocator hook: %zu bytes = %.1f bytes per subscription; "
           "%.1f bytes per subscription + 16 per result ID (target <= 300)\n",
           bytes, (double)bytes / subs, ((double)bytes - 16.0 * (double)nids) / subs);
    }

    /* The same subscriptions registered in random order (cases f-h). */
    pgw_index *shuffled = NULL;
    if (strpbrk(cases, "fgh")) {
        uint32_t *order = malloc((size_t)subs * sizeof *order);
        uint64_t x = 0x9E3779B97F4A7C15ull; /* its own generator: rng stays as it was */
        for (uint32_t s = 0; s < subs; s++)
            order[s] = s;
        for (uint32_t s = subs - 1; s > 0; s--) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            uint32_t j = (uint32_t)(x % (s + 1)), tmp = order[s];
            order[s] = order[j];
            order[j] = tmp;
        }
        CHECK("index_new", pgw_index_new(&shuffled, NULL, &err_));
        double r0 = now_ns();
        for (uint32_t s = 0; s < subs; s++)
            add_sub(shuffled, order[s], 0);
        if (!child)
            printf("registered the same subscriptions in random order into a second index in "
                   "%.2f s\n", (now_ns() - r0) / 1e9);
        shuffled_index = shuffled;
        shuffled_sub = order;
    }

    const char *reps_env = getenv("BENCH_INDEX_REPS");
    size_t reps = reps_env ? strtoul(reps_env, NULL, 10) : 200000;
    if (reps < 1000)
        reps = 1000;
    enum { NW = 4096 };
    static wspec specs[NW];
    static pgw_write *ws[NW];
    const uint32_t n_tenants = subs / 100;
    double *zipf = malloc(n_tenants * sizeof *zipf); /* cumulative, rank order */
    double zsum = 0;
    for (uint32_t i = 0; i < n_tenants; i++)
        zipf[i] = zsum += 1.0 / (i + 1);
    for (int k = 0; k < 18; k++) {
        /* k < 3: writes to random tenants among all (cold caches);
         * 3 <= k < 6: the same kinds over 16 active tenants (warm caches);
         * 6 <= k < 9: as k < 3 with writes built up front (cold write sets);
         * 9 <= k < 12: tenants by Zipf(1) rank, ranks scattered over the
         * tenants (7919 is prime to the tenant count, a multiple of 10);
         * 12 <= k < 15: as k < 3, matched in batches of BATCH;
         * k >= 15: as k < 3 on the index registered in random order. */
        if (!strchr(cases, "0123456789abcdefgh"[k]))
            continue;
        bool hot = k >= 3 && k < 6, prebuilt = k >= 6 && k < 9, skewed = k >= 9 && k < 12,
             batched = k >= 12 && k < 15, random_order = k >= 15;
        pgw_index *ix = random_order ? shuffled : big;
        for (size_t i = 0; i < NW; i++) {
            if (skewed) {
                double u = (rnd(1u << 30) + 0.5) / (double)(1u << 30) * zsum;
                uint32_t lo = 0, hi = n_tenants - 1;
                while (lo < hi) {
                    uint32_t mid = (lo + hi) / 2;
                    if (zipf[mid] < u)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                specs[i].tenant = (uint32_t)((uint64_t)lo * 7919 % n_tenants);
            } else {
                specs[i].tenant = hot ? rnd(16) : rnd(n_tenants);
            }
            specs[i].table = rnd(10);
            specs[i].seed = 0x9E3779B97F4A7C15ull * (i + 1 + (uint64_t)k * NW) | 1;
        }
        pgw_index_stats s0 = PGW_INDEX_STATS_INIT, s1 = PGW_INDEX_STATS_INIT;
        pgw_index_stats_get(&s0, ix);
        lat l;
        if (prebuilt) {
            for (size_t i = 0; i < NW; i++)
                ws[i] = build_write(&specs[i], k % 3);
            l = time_match(ix, ws, NW, reps);
            for (size_t i = 0; i < NW; i++)
                pgw_write_free(ws[i]);
        } else if (batched) {
            l = time_match_batch(ix, specs, NW, k % 3, reps);
        } else {
            l = time_match_fresh(ix, specs, NW, k % 3, reps);
        }
        pgw_index_stats_get(&s1, ix);
        static const char *const kinds[] = {
            "update of a projected column (<=10 IDs)",
            "update moving rows between owners, values known (<=10 IDs)",
            "insert, values known (<=10 IDs)"};
        printf("%smatch, %s, %s%s%s: median %.0f ns (p90 %.0f, p99 %.0f); %.2f candidates "
               "visited and %.3f runners marked per write%s\n",
               child ? "huge pages: " : "", kinds[k % 3],
               hot ? "16 active tenants" : skewed ? "Zipf(1) tenants" : "random tenants",
               random_order ? " (subscriptions registered in random order)" : "",
               prebuilt ? ", pre-built writes" : batched ? ", batches of 8 (per write)" : "",
               l.p50, l.p90, l.p99,
               (double)(s1.visited - s0.visited) / reps,
               (double)(s1.marked - s0.marked) / reps,
               prebuilt || batched ? "" : " (target: median <= 1000 ns)");
    }
    free(zipf);
    pgw_index_free(shuffled);
    free((void *)shuffled_sub);
    if (child) {
        pgw_index_free(big);
        return 0;
    }

    /* 2: a write with an empty candidate set, small vs big index. The
     * written scopes exist in both indexes; their table has no reader. */
    pgw_index *small = NULL;
    CHECK("index_new", pgw_index_new(&small, NULL, &err_));
    for (uint32_t s = 0; s < 1000; s++)
        add_sub(small, s, 0);
    enum { NE = 64 };
    pgw_write *empty[NE];
    for (int i = 0; i < NE; i++) {
        char tname[24];
        pgw_scope sc;
        scope_of(tname, &sc, (uint32_t)i % 10);
        CHECK("write_new", pgw_write_new(&empty[i], &sc, "public", "unread_table",
                                         PGW_OP_INSERT, &err_));
    }
    double ms = 0, mb = 0;
    for (int round = 0; round < 5; round++) { /* interleaved, to share the machine's noise */
        ms += median_pass(small, empty, NE, 200000 / NE);
        mb += median_pass(big, empty, NE, 200000 / NE);
    }
    printf("empty candidate set: median %.1f ns with 1,000 subscriptions, %.1f ns with %u: "
           "ratio %.2f (target <= 1.2)\n",
           ms / 5, mb / 5, subs, mb / ms);
    for (int i = 0; i < NE; i++)
        pgw_write_free(empty[i]);

    /* 4: pgw_decide alone */
    pgw_scope sc = {"p1", "tenant0", "app"};
    pgw_deps *d = NULL;
    size_t t;
    const char *open[] = {"open"};
    CHECK("deps_new", pgw_deps_new(&d, &sc, "tasks.list", &err_));
    CHECK("add_table", pgw_deps_add_table(&t, d, "public", "tasks", &err_));
    CHECK("set_columns", pgw_deps_set_columns(d, t, cols, 4, &err_));
    CHECK("add_filter", pgw_deps_add_filter(d, t, "status", PGW_FILTER_EQ, open, 1, &err_));
    CHECK("order_by", pgw_deps_set_order_by(d, t, sortc, 1, &err_));
    CHECK("window", pgw_deps_set_window(d, t, 20, 0, &err_));
    char buf[50][12];
    const char *parts[50];
    pgw_rowid rids[50];
    size_t nr = result_ids(buf, parts, rids, 49);
    CHECK("result_ids", pgw_deps_set_result_ids(d, rids, nr, &err_));
    pgw_write *dw[3];
    for (int k = 0; k < 3; k++) {
        char tname[24];
        pgw_scope s2;
        scope_of(tname, &s2, 0);
        (void)s2;
        CHECK("write_new", pgw_write_new(&dw[k], &sc, "public", "tasks",
                                         k == 2 ? PGW_OP_DELETE : PGW_OP_UPDATE, &err_));
        const char *p3[3] = {"5", "77", "120"};
        pgw_rowid i3[3] = {{&p3[0], 1}, {&p3[1], 1}, {&p3[2], 1}};
        CHECK("set_ids", pgw_write_set_ids(dw[k], i3, 3, false, &err_));
        const char *c1[] = {k == 0 ? "title" : "status"};
        if (k < 2)
            CHECK("set_columns", pgw_write_set_columns(dw[k], c1, 1, false, &err_));
        if (k == 1)
            for (size_t i = 0; i < 3; i++) {
                CHECK("old", pgw_write_set_value(dw[k], i, PGW_SIDE_OLD, "status", "done", &err_));
                CHECK("new", pgw_write_set_value(dw[k], i, PGW_SIDE_NEW, "status", "late", &err_));
            }
    }
    size_t iters = 3000000, refresh = 0;
    double d0 = now_ns();
    for (size_t i = 0; i < iters; i++) {
        pgw_verdict v;
        pgw_decide(&v, d, dw[i % 3], NULL);
        refresh += v.refresh;
    }
    double d1 = now_ns();
    printf("pgw_decide alone: %.1f million decisions/s (%.0f ns each; a 4-column declaration "
           "with a filter, a sort, a window and %zu result IDs against 3-row writes; %zu "
           "refreshes)\n",
           iters / ((d1 - d0) / 1e9) / 1e6, (d1 - d0) / iters, nr, refresh);
    for (int k = 0; k < 3; k++)
        pgw_write_free(dw[k]);
    pgw_deps_free(d);
    pgw_index_free(small);
    pgw_index_free(big);
    if (strchr(cases, 'r'))
        bench_ranges(reps);
    printf("live bytes after freeing everything: %zu\n", live_bytes);
    if (strcmp(huge, "no") != 0) {
        if (thp_available())
            run_huge_child("/proc/self/exe", subs, cases);
        else
            printf("huge pages: not offered by this system (transparent_hugepage is never)\n");
    }
    return 0;
}
