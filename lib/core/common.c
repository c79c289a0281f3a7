/*
 * lib/core/common.c — versions, status texts and the allocator hook (core
 * library only; lib/core/util.c holds the stateless helpers both libraries
 * compile in).
 * SPDX-License-Identifier: MIT
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* ------------------------------------------------------------------ */
/* versions                                                            */

const char *pgw_version(void)
{
    return PGW_VERSION_STRING;
}

int pgw_version_number(void)
{
    return PGW_VERSION_NUMBER;
}

/* ------------------------------------------------------------------ */
/* status texts                                                        */

const char *pgw_strerror(int code)
{
    switch ((pgw_status)code) {
    case PGW_OK:
        return "success";
    case PGW_ENOMEM:
        return "out of memory";
    case PGW_EINVAL:
        return "invalid argument";
    case PGW_ENOTFOUND:
        return "not found";
    case PGW_EPARSE:
        return "malformed input";
    case PGW_ELIMIT:
        return "limit exceeded";
    case PGW_EPG:
        return "PostgreSQL reported an error";
    case PGW_ECONN:
        return "database connection unusable";
    case PGW_ESTATE:
        return "wrong state for this call";
    case PGW_EVERSION:
        return "unsupported version";
    case PGW_EEXISTS:
        return "already exists";
    }
    return "unknown pgwitness status code";
}

void pgw_error_clear(pgw_error *err)
{
    if (!err)
        return;
    err->code = PGW_OK;
    err->message[0] = '\0';
    err->path[0] = '\0';
    err->sqlstate[0] = '\0';
}

/* ------------------------------------------------------------------ */
/* allocator                                                           */

static void *default_malloc(size_t size, void *ud)
{
    (void)ud;
    return malloc(size);
}

static void *default_realloc(void *ptr, size_t size, void *ud)
{
    (void)ud;
    return realloc(ptr, size);
}

static void default_free(void *ptr, void *ud)
{
    (void)ud;
    free(ptr);
}

static pgw_allocator g_alloc = {default_malloc, default_realloc, default_free, NULL};

/* Allocation failures seen by jansson in this thread. jansson reports some
 * of them as syntax errors (json_loadb), so the JSON layer compares this
 * count before and after a parse (pgwi_json_oom_count). Thread-local: no
 * shared mutable state. */
static _Thread_local unsigned long g_jansson_oom;

unsigned long pgwi_json_oom_count(void)
{
    return g_jansson_oom;
}

/* jansson's hooks take no userdata: trampolines read the installed one. */
static void *jansson_malloc(size_t size)
{
    void *p = size ? g_alloc.malloc_fn(size, g_alloc.userdata) : NULL;
    if (!p)
        g_jansson_oom++;
    return p;
}

static void jansson_free(void *ptr)
{
    if (ptr)
        g_alloc.free_fn(ptr, g_alloc.userdata);
}

int pgw_set_allocator(const pgw_allocator *allocator)
{
    if (!allocator) {
        g_alloc.malloc_fn = default_malloc;
        g_alloc.realloc_fn = default_realloc;
        g_alloc.free_fn = default_free;
        g_alloc.userdata = NULL;
        json_set_alloc_funcs(malloc, free);
        return PGW_OK;
    }
    if (!allocator->malloc_fn || !allocator->realloc_fn || !allocator->free_fn)
        return PGW_EINVAL;
    g_alloc = *allocator;
    json_set_alloc_funcs(jansson_malloc, jansson_free);
    return PGW_OK;
}

void *pgwi_malloc(size_t size)
{
    if (size == 0)
        return NULL;
    return g_alloc.malloc_fn(size, g_alloc.userdata);
}

void *pgwi_realloc(void *ptr, size_t size)
{
    if (size == 0)
        return NULL;
    return g_alloc.realloc_fn(ptr, size, g_alloc.userdata);
}

void pgwi_free(void *ptr)
{
    if (ptr)
        g_alloc.free_fn(ptr, g_alloc.userdata);
}

void *pgw_malloc(size_t size)
{
    return pgwi_malloc(size);
}

void *pgw_realloc(void *ptr, size_t size)
{
    return pgwi_realloc(ptr, size);
}

void pgw_free(void *ptr)
{
    pgwi_free(ptr);
}
