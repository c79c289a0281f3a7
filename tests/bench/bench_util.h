/*
 * tests/bench/bench_util.h — timing and allocation counting for the
 * benchmark programs. Benchmarks print figures; they are never run by
 * meson test and assert nothing about time.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGW_BENCH_UTIL_H
#define PGW_BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Monotonic clock in nanoseconds. */
uint64_t bench_now_ns(void);
/* CPU time of the calling thread in nanoseconds (CLOCK_THREAD_CPUTIME_ID):
 * what it ran, without the time slices other processes had. */
uint64_t bench_thread_cpu_ns(void);
/* Installs a counting allocator through pgw_set_allocator. */
void bench_count_allocs(void);
/* Allocation calls (malloc + realloc) since bench_count_allocs. */
size_t bench_allocs(void);
/* Bytes currently allocated through the hook. */
size_t bench_live_bytes(void);
/* Median of n values (sorts in place). */
double bench_median(double *v, size_t n);
/* The p-th percentile (0..100) of n values (sorts in place). */
double bench_percentile(double *v, size_t n, double p);

#endif
