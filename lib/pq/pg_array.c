/*
 * lib/pq/pg_array.c — see pg_array.h.
 * SPDX-License-Identifier: MIT
 */
#include "pg_array.h"

#include <string.h>

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

void pgwi_pg_array_free(pgwi_pg_array *a)
{
    if (!a)
        return;
    pgwi_free(a->items);
    pgwi_free(a->buf);
    a->items = NULL;
    a->buf = NULL;
    a->n = 0;
}

int pgwi_pg_array_parse(pgwi_pg_array *out, const char *lit, size_t len)
{
    const char *p = lit, *end = lit + len;
    while (p < end && is_space(*p))
        p++;
    /* Dimension decorations: "[lo:hi]" once (one dimension), then '='. */
    if (p < end && *p == '[') {
        const char *q = memchr(p, ']', (size_t)(end - p));
        if (!q || q + 1 >= end || q[1] != '=')
            return PGW_EPARSE;
        p = q + 2;
    }
    if (p >= end || *p != '{')
        return PGW_EPARSE;
    p++;
    /* The unescaped text is never longer than the literal; elements are
     * separated by NULs in buf. */
    size_t cap_items = 8;
    char *buf = pgwi_malloc(len + 1);
    char **items = pgwi_malloc(cap_items * sizeof *items);
    if (!buf || !items) {
        pgwi_free(buf);
        pgwi_free(items);
        return PGW_ENOMEM;
    }
    size_t n = 0, o = 0;
    int rc = PGW_OK;
    while (p < end && is_space(*p))
        p++;
    if (p < end && *p == '}') {
        p++; /* the empty array */
    } else {
        for (;;) {
            while (p < end && is_space(*p))
                p++;
            if (p >= end) {
                rc = PGW_EPARSE;
                break;
            }
            if (n == cap_items) {
                char **ni = pgwi_reallocarray(items, cap_items * 2, sizeof *items);
                if (!ni) {
                    rc = PGW_ENOMEM;
                    break;
                }
                items = ni;
                cap_items *= 2;
            }
            items[n] = buf + o;
            if (*p == '"') {
                p++;
                while (p < end && *p != '"') {
                    if (*p == '\\') {
                        if (++p >= end)
                            break;
                    }
                    buf[o++] = *p++;
                }
                if (p >= end) {
                    rc = PGW_EPARSE; /* no closing quote */
                    break;
                }
                p++;
                while (p < end && is_space(*p))
                    p++;
            } else {
                if (*p == '{' || *p == ',' || *p == '}') {
                    rc = PGW_EPARSE; /* nested array or empty element */
                    break;
                }
                size_t start = o;
                while (p < end && *p != ',' && *p != '}' && *p != '"' && *p != '{') {
                    if (*p == '\\') {
                        if (++p >= end)
                            break;
                    }
                    buf[o++] = *p++;
                }
                while (o > start && is_space(buf[o - 1]))
                    o--;
                if (o - start == 4 && (buf[start] | 0x20) == 'n' &&
                    (buf[start + 1] | 0x20) == 'u' && (buf[start + 2] | 0x20) == 'l' &&
                    (buf[start + 3] | 0x20) == 'l') {
                    rc = PGW_EPARSE; /* a NULL element */
                    break;
                }
            }
            buf[o++] = '\0';
            n++;
            if (p < end && *p == ',') {
                p++;
                continue;
            }
            if (p < end && *p == '}') {
                p++;
                break;
            }
            rc = PGW_EPARSE;
            break;
        }
    }
    if (rc < 0)
        goto fail;
    while (p < end && is_space(*p))
        p++;
    if (p != end) {
        rc = PGW_EPARSE;
        goto fail;
    }
    out->n = n;
    out->items = items;
    out->buf = buf;
    return PGW_OK;
fail:
    pgwi_free(buf);
    pgwi_free(items);
    return rc;
}
