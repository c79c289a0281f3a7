/*
 * lib/core/arena.c — see arena.h.
 * SPDX-License-Identifier: MIT
 */
#include "arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

struct pgwi_arena_chunk {
    pgwi_arena_chunk *next;
    alignas(max_align_t) unsigned char data[];
};

/* The first chunk is small (a write set or a dependency list needs little);
 * each next one doubles, up to CHUNK_MAX; larger requests get their own. */
#define CHUNK_MIN 1024u
#define CHUNK_MAX 65536u
#define ALIGN (alignof(max_align_t))

void *pgwi_arena_alloc(pgwi_arena *a, size_t n)
{
    if (n == 0)
        n = 1;
    size_t rounded = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if (rounded < n)
        return NULL;
    if (!a->head || a->cap - a->used < rounded) {
        size_t cap = CHUNK_MIN;
        if (a->head && a->cap < CHUNK_MAX)
            cap = a->cap * 2;
        else if (a->head)
            cap = CHUNK_MAX;
        if (rounded > cap)
            cap = rounded;
        if (cap > SIZE_MAX - sizeof(pgwi_arena_chunk))
            return NULL;
        pgwi_arena_chunk *c = pgwi_malloc(sizeof(pgwi_arena_chunk) + cap);
        if (!c)
            return NULL;
        c->next = a->head;
        a->head = c;
        a->used = 0;
        a->cap = cap;
    }
    void *p = a->head->data + a->used;
    a->used += rounded;
    a->total += rounded;
    return p;
}

void *pgwi_arena_calloc(pgwi_arena *a, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    void *p = pgwi_arena_alloc(a, n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

char *pgwi_arena_strndup(pgwi_arena *a, const char *s, size_t len)
{
    if (len == SIZE_MAX)
        return NULL;
    char *d = pgwi_arena_alloc(a, len + 1);
    if (!d)
        return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

char *pgwi_arena_strdup(pgwi_arena *a, const char *s)
{
    return pgwi_arena_strndup(a, s, strlen(s));
}

void pgwi_arena_adopt(pgwi_arena *dst, pgwi_arena *src)
{
    if (!src->head)
        return;
    if (!dst->head) {
        *dst = *src;
    } else {
        pgwi_arena_chunk *tail = dst->head;
        while (tail->next)
            tail = tail->next;
        tail->next = src->head;
        dst->total += src->total;
    }
    src->head = NULL;
    src->used = src->cap = src->total = 0;
}

void pgwi_arena_free(pgwi_arena *a)
{
    pgwi_arena_chunk *c = a->head;
    while (c) {
        pgwi_arena_chunk *next = c->next;
        pgwi_free(c);
        c = next;
    }
    a->head = NULL;
    a->used = a->cap = a->total = 0;
}
