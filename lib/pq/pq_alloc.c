/*
 * lib/pq/pq_alloc.c — the adapter's allocation primitives. The allocator
 * hook lives in the core library; the adapter reaches it through the
 * exported pgw_malloc/pgw_realloc/pgw_free so both libraries share one hook.
 * SPDX-License-Identifier: MIT
 */
#include "internal.h"

void *pgwi_malloc(size_t size)
{
    return pgw_malloc(size);
}

void *pgwi_realloc(void *ptr, size_t size)
{
    return pgw_realloc(ptr, size);
}

void pgwi_free(void *ptr)
{
    pgw_free(ptr);
}
