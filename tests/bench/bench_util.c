/*
 * tests/bench/bench_util.c — see bench_util.h.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_util.h"

#include <stdlib.h>
#include <time.h>

#include "pgwitness/common.h"

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t bench_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef union hdr {
    size_t size;
    max_align_t align;
} hdr;

static size_t g_allocs, g_live;

static void *c_malloc(size_t n, void *ud)
{
    (void)ud;
    hdr *h = malloc(sizeof(hdr) + n);
    if (!h)
        return NULL;
    h->size = n;
    g_allocs++;
    g_live += n;
    return h + 1;
}

static void *c_realloc(void *p, size_t n, void *ud)
{
    if (!p)
        return c_malloc(n, ud);
    hdr *old = (hdr *)p - 1;
    size_t before = old->size;
    hdr *h = realloc(old, sizeof(hdr) + n);
    if (!h)
        return NULL;
    h->size = n;
    g_allocs++;
    g_live = g_live - before + n;
    return h + 1;
}

static void c_free(void *p, void *ud)
{
    (void)ud;
    if (!p)
        return;
    hdr *h = (hdr *)p - 1;
    g_live -= h->size;
    free(h);
}

void bench_count_allocs(void)
{
    pgw_allocator a = {c_malloc, c_realloc, c_free, NULL};
    pgw_set_allocator(&a);
}

size_t bench_allocs(void)
{
    return g_allocs;
}

size_t bench_live_bytes(void)
{
    return g_live;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_percentile(double *v, size_t n, double p)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, cmp_d);
    size_t i = (size_t)((p / 100.0) * (double)(n - 1) + 0.5);
    return v[i];
}

double bench_median(double *v, size_t n)
{
    return bench_percentile(v, n, 50);
}
