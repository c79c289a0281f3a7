/*
 * lib/core/internal.h — helpers shared by the library's translation units.
 * Not installed. Internal names use the prefix pgwi_ so that the export test
 * (and the version script's pgw_* pattern) can never pick them up.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_INTERNAL_H
#define PGWITNESS_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgwitness/common.h"

#if defined(__GNUC__) || defined(__clang__)
#  define PGWI_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#  define PGWI_UNUSED __attribute__((unused))
#else
#  define PGWI_PRINTF(fmt, args)
#  define PGWI_UNUSED
#endif

/* ---- allocation: every allocation of the library goes through these ---- */

/* malloc through the installed allocator; NULL on failure or size 0. */
void *pgwi_malloc(size_t size);
/* calloc with overflow check; NULL on failure, overflow or a zero product. */
void *pgwi_calloc(size_t n, size_t size);
/* realloc; size must be > 0. On failure returns NULL and leaves ptr valid. */
void *pgwi_realloc(void *ptr, size_t size);
/* realloc of an array with overflow check. */
void *pgwi_reallocarray(void *ptr, size_t n, size_t size);
void pgwi_free(void *ptr);
/* Allocation failures seen on this thread so far through the hook —
 * the library's own and jansson's (counted while pgw_set_allocator() has
 * installed the hook into jansson). Core library only. */
unsigned long pgwi_alloc_failures(void);
/* Copies of strings; NULL in gives NULL out (and is not a failure). */
char *pgwi_strdup(const char *s);
char *pgwi_strndup(const char *s, size_t len);

/* ---- errors ---- */

/* Fills err (if non-NULL) with code and a formatted message; returns code.
 * Never allocates. The message is cut on a UTF-8 boundary to fit. */
int pgwi_error(pgw_error *err, int code, const char *fmt, ...) PGWI_PRINTF(3, 4);
int pgwi_verror(pgw_error *err, int code, const char *fmt, va_list ap) PGWI_PRINTF(3, 0);
/* The same, with a JSON path recorded in err->path. */
int pgwi_error_at(pgw_error *err, int code, const char *path, const char *fmt, ...)
    PGWI_PRINTF(4, 5);
/* Shorthand for the out-of-memory failure. */
int pgwi_enomem(pgw_error *err);
/* PGW_OK when none of the n pointers is NULL; otherwise PGW_EINVAL with the
 * message "<fn>: <name> is NULL", naming the first NULL one. `names` is the
 * comma-separated list of their names, as PGWI_CHECK_NONNULL writes it. */
int pgwi_check_nonnull(pgw_error *err, const char *fn, const char *names,
                       const void *const *ptrs, size_t n);
#define PGWI_CHECK_NONNULL(err, fn, ...)                                                      \
    pgwi_check_nonnull((err), (fn), #__VA_ARGS__, (const void *const[]){__VA_ARGS__},         \
                       sizeof((const void *const[]){__VA_ARGS__}) / sizeof(const void *))

/* ---- UTF-8 ---- */

/* True when s[0..len) is well-formed UTF-8 (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF). Embedded NULs are rejected. */
bool pgwi_utf8_valid(const char *s, size_t len);
/* The largest n <= max such that s[0..n) ends on a character boundary of
 * the valid UTF-8 string s[0..len). */
size_t pgwi_utf8_cut(const char *s, size_t len, size_t max);
/* Drops from the NUL-terminated s, in place, every byte that does not
 * belong to a valid UTF-8 character (as a byte precision such as %.100s
 * leaves when it cuts a character); returns the new length. */
size_t pgwi_utf8_repair(char *s);
/* Copies src into dst[size], cut on a UTF-8 boundary, always NUL-terminated
 * (size > 0). */
void pgwi_copy_cut(char *dst, size_t size, const char *src);

#endif /* PGWITNESS_INTERNAL_H */
