/*
 * tests/support/pgw_test.c — see pgw_test.h.
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "pgw_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgwitness/common.h"
#include "pgwitness/index.h"
#include "pgwitness/inval.h"

int pgwt_main(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_set_tap(sr, "-");
    srunner_run_all(sr, CK_SILENT);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* ------------------------------------------------------------------ */
/* counting allocator: a header before each block records its size      */

typedef union hdr {
    size_t size;
    max_align_t align;
} hdr;

static pgwt_alloc_stats g_stats;
static size_t g_fail_at;
static bool g_failed;

static bool should_fail(void)
{
    g_stats.calls++;
    if (g_fail_at && g_stats.calls == g_fail_at) {
        g_failed = true;
        return true;
    }
    return false;
}

static void *t_malloc(size_t size, void *ud)
{
    (void)ud;
    if (should_fail())
        return NULL;
    hdr *h = malloc(sizeof(hdr) + size);
    if (!h)
        return NULL;
    h->size = size;
    g_stats.allocs++;
    g_stats.live++;
    g_stats.live_bytes += size;
    if (g_stats.live_bytes > g_stats.peak_bytes)
        g_stats.peak_bytes = g_stats.live_bytes;
    return h + 1;
}

static void *t_realloc(void *ptr, size_t size, void *ud)
{
    if (!ptr)
        return t_malloc(size, ud);
    if (should_fail())
        return NULL;
    hdr *old = (hdr *)ptr - 1;
    size_t old_size = old->size;
    hdr *h = realloc(old, sizeof(hdr) + size);
    if (!h)
        return NULL;
    h->size = size;
    g_stats.reallocs++;
    g_stats.live_bytes = g_stats.live_bytes - old_size + size;
    if (g_stats.live_bytes > g_stats.peak_bytes)
        g_stats.peak_bytes = g_stats.live_bytes;
    return h + 1;
}

static void t_free(void *ptr, void *ud)
{
    (void)ud;
    if (!ptr)
        return;
    hdr *h = (hdr *)ptr - 1;
    g_stats.frees++;
    g_stats.live--;
    g_stats.live_bytes -= h->size;
    free(h);
}

void pgwt_alloc_install(void)
{
    pgw_allocator a = {t_malloc, t_realloc, t_free, NULL};
    memset(&g_stats, 0, sizeof g_stats);
    g_fail_at = 0;
    g_failed = false;
    ck_assert_int_eq(pgw_set_allocator(&a), PGW_OK);
}

void pgwt_alloc_uninstall(void)
{
    g_fail_at = 0;
    pgw_set_allocator(NULL);
}

void pgwt_alloc_fail_at(size_t n)
{
    g_failed = false;
    g_fail_at = n ? g_stats.calls + n : 0;
}

bool pgwt_alloc_failed(void)
{
    return g_failed;
}

pgwt_alloc_stats pgwt_alloc_get(void)
{
    return g_stats;
}

void pgwt_alloc_reset(void)
{
    size_t live = g_stats.live, live_bytes = g_stats.live_bytes;
    memset(&g_stats, 0, sizeof g_stats);
    g_stats.live = live;
    g_stats.live_bytes = live_bytes;
    g_fail_at = 0;
    g_failed = false;
}

const char *pgwt_drain(pgw_index *idx)
{
    static char out[2048];
    out[0] = '\0';
    pgw_dirty d;
    while (pgw_index_pop_dirty(&d, idx) == PGW_OK) {
        pgw_runner_info ri;
        ck_assert_int_eq(pgw_index_runner(&ri, idx, d.runner, NULL), PGW_OK);
        size_t n = strlen(out);
        snprintf(out + n, sizeof out - n, "%s%s:%s", n ? "," : "", ri.query,
                 pgw_reason_name(d.reason));
        ck_assert_int_eq(pgw_index_ack_unknown(idx, d.runner, NULL), PGW_OK);
    }
    return out;
}
