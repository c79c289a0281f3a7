/*
 * lib/core/arena.h — a bump allocator for objects that are built once and
 * freed whole (snapshots, diffs). Chunks come from the allocator hook.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_ARENA_H
#define PGWITNESS_ARENA_H

#include <stddef.h>

typedef struct pgwi_arena_chunk pgwi_arena_chunk;

typedef struct pgwi_arena {
    pgwi_arena_chunk *head;
    size_t used; /* bytes used in head */
    size_t cap;  /* capacity of head */
    size_t total; /* bytes handed out, for accounting */
} pgwi_arena;

#define PGWI_ARENA_INIT { NULL, 0, 0, 0 }

/* n bytes aligned for any type; NULL on allocation failure (n > 0). */
void *pgwi_arena_alloc(pgwi_arena *a, size_t n);
/* n * size zeroed bytes, with overflow check. */
void *pgwi_arena_calloc(pgwi_arena *a, size_t n, size_t size);
/* A copy of s[0..len) plus a NUL. */
char *pgwi_arena_strndup(pgwi_arena *a, const char *s, size_t len);
char *pgwi_arena_strdup(pgwi_arena *a, const char *s);
/* Moves every chunk of src into dst (freed with dst); src becomes empty.
 * Allocation continues in dst's current chunk. */
void pgwi_arena_adopt(pgwi_arena *dst, pgwi_arena *src);
/* Releases every chunk; the arena is empty and reusable afterwards. */
void pgwi_arena_free(pgwi_arena *a);

#endif
