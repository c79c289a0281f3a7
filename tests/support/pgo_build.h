/*
 * tests/support/pgo_build.h — builds pgoutput messages (protocol version 1,
 * PostgreSQL documentation "Logical Replication Message Formats") and
 * replication frames byte by byte, for the decoder's unit tests, its fuzz
 * corpus and its benchmark. Header-only.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGO_BUILD_H
#define PGO_BUILD_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct pgo_msg {
    unsigned char b[1 << 16];
    size_t n;
} pgo_msg;

/* Tuple cells: a text value, or one of these. */
#define PGO_NULL ((const char *)0)
static const char pgo_unchanged_mark[] = "<unchanged toast>";
#define PGO_UNCHANGED (pgo_unchanged_mark)

static inline void pgo_u8(pgo_msg *m, unsigned v)
{
    m->b[m->n++] = (unsigned char)v;
}

static inline void pgo_be(pgo_msg *m, uint64_t v, int bytes)
{
    for (int i = bytes - 1; i >= 0; i--)
        pgo_u8(m, (unsigned)(v >> (8 * i)) & 0xff);
}

static inline void pgo_str(pgo_msg *m, const char *s)
{
    size_t len = strlen(s) + 1;
    memcpy(m->b + m->n, s, len);
    m->n += len;
}

static inline void pgo_reset(pgo_msg *m)
{
    m->n = 0;
}

static inline void pgo_begin(pgo_msg *m, uint64_t final_lsn, uint32_t xid)
{
    pgo_reset(m);
    pgo_u8(m, 'B');
    pgo_be(m, final_lsn, 8);
    pgo_be(m, 789000000, 8); /* commit time */
    pgo_be(m, xid, 4);
}

static inline void pgo_commit(pgo_msg *m, uint64_t lsn, uint64_t end_lsn)
{
    pgo_reset(m);
    pgo_u8(m, 'C');
    pgo_u8(m, 0);
    pgo_be(m, lsn, 8);
    pgo_be(m, end_lsn, 8);
    pgo_be(m, 789000000, 8);
}

/* A relation of n columns named by "name" or "*name" (a key column), of
 * the types types[i] with modifiers typmods[i] (NULL: text, no modifier). */
static inline void pgo_relation_typed(pgo_msg *m, uint32_t oid, const char *nsp,
                                      const char *name, char ident, size_t n,
                                      const char *const *cols, const uint32_t *types,
                                      const int32_t *typmods)
{
    pgo_reset(m);
    pgo_u8(m, 'R');
    pgo_be(m, oid, 4);
    pgo_str(m, nsp);
    pgo_str(m, name);
    pgo_u8(m, (unsigned char)ident);
    pgo_be(m, n, 2);
    for (size_t i = 0; i < n; i++) {
        int key = cols[i][0] == '*';
        pgo_u8(m, key ? 1 : 0);
        pgo_str(m, cols[i] + key);
        pgo_be(m, types ? types[i] : 25, 4); /* 25: text */
        pgo_be(m, typmods ? (uint32_t)typmods[i] : 0xffffffffu, 4);
    }
}

/* A relation of n text columns named by "name" or "*name" (a key column). */
static inline void pgo_relation(pgo_msg *m, uint32_t oid, const char *nsp, const char *name,
                                char ident, size_t n, const char *const *cols)
{
    pgo_relation_typed(m, oid, nsp, name, ident, n, cols, NULL, NULL);
}

static inline void pgo_tuple(pgo_msg *m, size_t n, const char *const *cells)
{
    pgo_be(m, n, 2);
    for (size_t i = 0; i < n; i++) {
        if (cells[i] == PGO_NULL) {
            pgo_u8(m, 'n');
        } else if (cells[i] == PGO_UNCHANGED) {
            pgo_u8(m, 'u');
        } else {
            size_t len = strlen(cells[i]);
            pgo_u8(m, 't');
            pgo_be(m, len, 4);
            memcpy(m->b + m->n, cells[i], len);
            m->n += len;
        }
    }
}

static inline void pgo_insert(pgo_msg *m, uint32_t oid, size_t n, const char *const *newt)
{
    pgo_reset(m);
    pgo_u8(m, 'I');
    pgo_be(m, oid, 4);
    pgo_u8(m, 'N');
    pgo_tuple(m, n, newt);
}

/* old_kind: 0 (no old tuple), 'K' or 'O'. */
static inline void pgo_update(pgo_msg *m, uint32_t oid, size_t n, char old_kind,
                              const char *const *oldt, const char *const *newt)
{
    pgo_reset(m);
    pgo_u8(m, 'U');
    pgo_be(m, oid, 4);
    if (old_kind) {
        pgo_u8(m, (unsigned char)old_kind);
        pgo_tuple(m, n, oldt);
    }
    pgo_u8(m, 'N');
    pgo_tuple(m, n, newt);
}

static inline void pgo_delete(pgo_msg *m, uint32_t oid, size_t n, char old_kind,
                              const char *const *oldt)
{
    pgo_reset(m);
    pgo_u8(m, 'D');
    pgo_be(m, oid, 4);
    pgo_u8(m, (unsigned char)old_kind);
    pgo_tuple(m, n, oldt);
}

static inline void pgo_truncate(pgo_msg *m, size_t n, const uint32_t *oids)
{
    pgo_reset(m);
    pgo_u8(m, 'T');
    pgo_be(m, n, 4);
    pgo_u8(m, 0);
    for (size_t i = 0; i < n; i++)
        pgo_be(m, oids[i], 4);
}

static inline void pgo_message(pgo_msg *m, int transactional, uint64_t lsn, const char *prefix,
                               const char *content)
{
    pgo_reset(m);
    pgo_u8(m, 'M');
    pgo_u8(m, transactional ? 1 : 0);
    pgo_be(m, lsn, 8);
    pgo_str(m, prefix);
    size_t len = strlen(content);
    pgo_be(m, len, 4);
    memcpy(m->b + m->n, content, len);
    m->n += len;
}

/* An XLogData frame around data. */
static inline void pgo_xlogdata(pgo_msg *m, uint64_t start, uint64_t end, const void *data,
                                size_t len)
{
    pgo_reset(m);
    pgo_u8(m, 'w');
    pgo_be(m, start, 8);
    pgo_be(m, end, 8);
    pgo_be(m, 42, 8);
    memcpy(m->b + m->n, data, len);
    m->n += len;
}

static inline void pgo_keepalive(pgo_msg *m, uint64_t end, int reply)
{
    pgo_reset(m);
    pgo_u8(m, 'k');
    pgo_be(m, end, 8);
    pgo_be(m, 42, 8);
    pgo_u8(m, reply ? 1 : 0);
}

#endif
