/*
 * lib/core/inval/rhmap.h — the reverse index's hash map of fingerprints,
 * written once over its slot type.
 *
 * Linear probing with Robin Hood ordering and backward-shift deletion: the
 * home slot of a fingerprint is fp * capacity / 2^32, so capacities need not
 * be powers of two; a map grows at a load of 7/8. A slot is empty when its
 * fingerprint is 0 (fingerprints never are: pgwi_fp32()). Lookups compare
 * fingerprints only: several entries may share one, and callers verify
 * content.
 *
 * The map is a template, instantiated once per slot type as PostgreSQL's
 * lib/simplehash.h is: define RH_PREFIX (the functions' prefix), RH_SLOT
 * (a struct type with a uint32_t member fp, copied by assignment) and
 * RH_MAP (the name of the map type to define), then include this file.
 * It defines these, as static inline functions, so that each instantiation
 * compiles to the code a map written for its slot type would:
 *
 *   RH_MAP                       { RH_SLOT *s; uint32_t cap, n; }
 *   <prefix>_put(m, slot)        inserts (room reserved)
 *   <prefix>_put_all(m, src, n)  inserts the occupied slots of src[0..n)
 *   <prefix>_reserve(m, extra)   room for extra more entries (1.25×)
 *   <prefix>_first(m, fp)        the first slot holding fp, or RH_NONE
 *   <prefix>_next(m, fp, i)      the next one after slot i, or RH_NONE
 *   <prefix>_erase(m, i)         removes the entry in slot i
 *
 * and the parameters are undefined again, so that the next instantiation
 * can follow.
 * Not installed. SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_RHMAP_H
#define PGWITNESS_RHMAP_H

#include <stdint.h>
#include <string.h>

#include "internal.h"

/* The end of an iteration (no slot). */
#define RH_NONE UINT32_MAX

static inline uint32_t rh_home(uint32_t cap, uint32_t fp)
{
    return (uint32_t)(((uint64_t)fp * cap) >> 32);
}

/* The distance of slot i from the home slot of fp. */
static inline uint32_t rh_dist(uint32_t cap, uint32_t i, uint32_t fp)
{
    uint32_t h = rh_home(cap, fp);
    return i >= h ? i - h : i + cap - h;
}

static inline uint32_t rh_step(uint32_t cap, uint32_t i)
{
    return i + 1 == cap ? 0 : i + 1;
}

/* The capacity for `need` entries at load <= 7/8, growing `cap` by steps of
 * 1 + 1/div; 0 beyond 2^32 - 1 slots. */
static inline uint64_t rh_grow(uint32_t cap, uint64_t need, uint32_t div)
{
    if (need * 8 <= (uint64_t)cap * 7)
        return cap;
    uint64_t c = cap < 16 ? 16 : cap + cap / div;
    while (need * 8 > c * 7)
        c += c / div;
    return c > UINT32_MAX ? 0 : c;
}

#define RH_CAT_(a, b) a##_##b
#define RH_CAT(a, b) RH_CAT_(a, b)

#endif /* PGWITNESS_RHMAP_H */

/* ---- the template: one instantiation per inclusion ---- */

#if !defined(RH_PREFIX) || !defined(RH_SLOT) || !defined(RH_MAP)
#error "rhmap.h: define RH_PREFIX, RH_SLOT and RH_MAP before including it"
#endif

#define RH_FN(name) RH_CAT(RH_PREFIX, name)

typedef struct RH_MAP {
    RH_SLOT *s;
    uint32_t cap, n;
} RH_MAP;

static inline void RH_FN(put)(RH_MAP *m, RH_SLOT cur)
{
    uint32_t i = rh_home(m->cap, cur.fp), d = 0;
    for (;;) {
        RH_SLOT *s = &m->s[i];
        if (s->fp == 0) {
            *s = cur;
            m->n++;
            return;
        }
        uint32_t sd = rh_dist(m->cap, i, s->fp);
        if (sd < d) {
            RH_SLOT t = *s;
            *s = cur;
            cur = t;
            d = sd;
        }
        i = rh_step(m->cap, i);
        d++;
    }
}

static inline void RH_FN(put_all)(RH_MAP *m, const RH_SLOT *src, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (src[i].fp)
            RH_FN(put)(m, src[i]);
}

/* Makes room for `extra` more entries at load <= 7/8. */
static inline int RH_FN(reserve)(RH_MAP *m, size_t extra)
{
    uint64_t cap = rh_grow(m->cap, (uint64_t)m->n + extra, 4);
    if (cap == m->cap)
        return PGW_OK;
    if (cap == 0)
        return PGW_ELIMIT;
    RH_SLOT *s = pgwi_calloc((size_t)cap, sizeof *s);
    if (!s)
        return PGW_ENOMEM;
    RH_MAP nm = {s, (uint32_t)cap, 0};
    RH_FN(put_all)(&nm, m->s, m->cap);
    pgwi_free(m->s);
    *m = nm;
    return PGW_OK;
}

/* Iteration over the entries with fingerprint fp:
 *   for (uint32_t i = <prefix>_first(m, fp); i != RH_NONE; i = <prefix>_next(m, fp, i))
 *       use m->s[i] */
static inline uint32_t RH_FN(scan)(const RH_MAP *m, uint32_t fp, uint32_t i, uint32_t d)
{
    for (;;) {
        const RH_SLOT *s = &m->s[i];
        if (s->fp == 0 || rh_dist(m->cap, i, s->fp) < d)
            return RH_NONE;
        if (s->fp == fp)
            return i;
        i = rh_step(m->cap, i);
        d++;
    }
}

static inline uint32_t RH_FN(first)(const RH_MAP *m, uint32_t fp)
{
    if (m->n == 0)
        return RH_NONE;
    return RH_FN(scan)(m, fp, rh_home(m->cap, fp), 0);
}

static inline uint32_t RH_FN(next)(const RH_MAP *m, uint32_t fp, uint32_t i)
{
    uint32_t d = rh_dist(m->cap, i, fp) + 1;
    return RH_FN(scan)(m, fp, rh_step(m->cap, i), d);
}

/* Removes the entry in slot i: the entries after it that are not in their
 * home slot move back one (no tombstones). */
static inline void RH_FN(erase)(RH_MAP *m, uint32_t i)
{
    for (;;) {
        uint32_t j = rh_step(m->cap, i);
        if (m->s[j].fp == 0 || rh_dist(m->cap, j, m->s[j].fp) == 0)
            break;
        m->s[i] = m->s[j];
        i = j;
    }
    memset(&m->s[i], 0, sizeof m->s[i]);
    m->n--;
}

#undef RH_FN
#undef RH_PREFIX
#undef RH_SLOT
#undef RH_MAP
