/*
 * lib/core/util.c — stateless helpers compiled into both libraries (hidden
 * in each): error records, UTF-8, and allocation conveniences built on the
 * pgwi_malloc/pgwi_realloc/pgwi_free primitives (defined by common.c in the
 * core and by lib/pq/pq_alloc.c, forwarding to pgw_malloc, in the adapter).
 * SPDX-License-Identifier: MIT
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

void *pgwi_calloc(size_t n, size_t size)
{
    if (n == 0 || size == 0 || n > SIZE_MAX / size)
        return NULL;
    void *p = pgwi_malloc(n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

void *pgwi_reallocarray(void *ptr, size_t n, size_t size)
{
    if (n == 0 || size == 0 || n > SIZE_MAX / size)
        return NULL;
    return pgwi_realloc(ptr, n * size);
}

char *pgwi_strndup(const char *s, size_t len)
{
    if (!s)
        return NULL;
    char *d = pgwi_malloc(len + 1);
    if (!d)
        return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

char *pgwi_strdup(const char *s)
{
    return s ? pgwi_strndup(s, strlen(s)) : NULL;
}

/* ------------------------------------------------------------------ */
/* UTF-8                                                               */

/* Length of the well-formed sequence starting at s (at most `avail` bytes
 * available), or 0 when it is not well-formed (RFC 3629, table 3-7 of the
 * Unicode standard). */
static size_t utf8_seq(const unsigned char *s, size_t avail)
{
    unsigned char c = s[0];
    if (c >= 0x01 && c <= 0x7F)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        if (avail < 2 || (s[1] & 0xC0) != 0x80)
            return 0;
        return 2;
    }
    if (c >= 0xE0 && c <= 0xEF) {
        if (avail < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80)
            return 0;
        if (c == 0xE0 && s[1] < 0xA0)
            return 0; /* overlong */
        if (c == 0xED && s[1] > 0x9F)
            return 0; /* surrogates */
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (avail < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 ||
            (s[3] & 0xC0) != 0x80)
            return 0;
        if (c == 0xF0 && s[1] < 0x90)
            return 0; /* overlong */
        if (c == 0xF4 && s[1] > 0x8F)
            return 0; /* above U+10FFFF */
        return 4;
    }
    return 0; /* NUL, continuation byte, C0/C1, F5..FF */
}

bool pgwi_utf8_valid(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        size_t n = utf8_seq(p + i, len - i);
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}

size_t pgwi_utf8_repair(char *s)
{
    unsigned char *p = (unsigned char *)s;
    size_t len = strlen(s), i = 0, o = 0;
    while (i < len) {
        size_t n = utf8_seq(p + i, len - i);
        if (n == 0) { /* not a character: dropped */
            i++;
            continue;
        }
        memmove(p + o, p + i, n);
        o += n;
        i += n;
    }
    p[o] = '\0';
    return o;
}

size_t pgwi_utf8_cut(const char *s, size_t len, size_t max)
{
    if (len <= max)
        return len;
    size_t n = max;
    /* Step back over continuation bytes to the start of the character that
     * straddles the limit. */
    while (n > 0 && (((unsigned char)s[n]) & 0xC0) == 0x80)
        n--;
    return n;
}

void pgwi_copy_cut(char *dst, size_t size, const char *src)
{
    if (size == 0)
        return;
    if (!src) {
        dst[0] = '\0';
        return;
    }
    size_t len = strlen(src);
    size_t n = pgwi_utf8_cut(src, len, size - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* ------------------------------------------------------------------ */
/* error records                                                       */

int pgwi_verror(pgw_error *err, int code, const char *fmt, va_list ap)
{
    if (!err)
        return code;
    char buf[PGW_ERROR_MESSAGE_SIZE * 2];
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    if (n < 0)
        buf[0] = '\0';
    /* A name quoted with a byte precision (%.100s) or cut by the buffer may
     * end inside a character: messages are UTF-8 (common.h). */
    pgwi_utf8_repair(buf);
    err->code = code;
    pgwi_copy_cut(err->message, sizeof err->message, buf);
    err->path[0] = '\0';
    err->sqlstate[0] = '\0';
    return code;
}

int pgwi_error(pgw_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pgwi_verror(err, code, fmt, ap);
    va_end(ap);
    return code;
}

int pgwi_error_at(pgw_error *err, int code, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pgwi_verror(err, code, fmt, ap);
    va_end(ap);
    if (err) {
        pgwi_copy_cut(err->path, sizeof err->path, path);
        pgwi_utf8_repair(err->path);
    }
    return code;
}

int pgwi_enomem(pgw_error *err)
{
    return pgwi_error(err, PGW_ENOMEM, "out of memory");
}

int pgwi_check_nonnull(pgw_error *err, const char *fn, const char *names,
                       const void *const *ptrs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *end = strchr(names, ',');
        size_t len = end ? (size_t)(end - names) : strlen(names);
        if (!ptrs[i])
            return pgwi_error(err, PGW_EINVAL, "%s: %.*s is NULL", fn, (int)len, names);
        if (!end)
            break;
        names = end + 1;
        while (*names == ' ')
            names++;
    }
    return PGW_OK;
}
