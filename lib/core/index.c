/*
 * lib/core/index.c — the reverse index (index.h).
 *
 * Layout. Runners, scopes, buckets and interned names live in vectors
 * addressed by 32-bit indices (free slots chained for reuse). Six
 * open-addressing multimaps of 8-byte slots {32-bit fingerprint, 32-bit
 * index} find them by content: names, scopes, buckets, runner identities,
 * filter values (vpost) and result IDs (idpost). The maps use linear
 * probing with Robin Hood ordering and backward-shift deletion; the home
 * slot of a fingerprint is fp * capacity / 2^32, so capacities need not be
 * powers of two and grow by 1.25× at a load of 7/8 (load stays in
 * [0.7, 0.875]). Lookups compare fingerprints only; callers verify content
 * (a false fingerprint match costs one extra comparison or one extra
 * decision, never a wrong verdict).
 *
 * A runner's declaration is compiled into one block (pgwi_tdep entries,
 * their arrays, filter values) pointing at interned names.
 * SPDX-License-Identifier: MIT
 */
#include "inval_internal.h"
#include "pgwitness/index.h"
#include "xxhash_inline.h"

#include <stdalign.h>
#include <string.h>

#define NONE UINT32_MAX
#define ALIGN8(n) (((n) + 7) & ~(size_t)7)

/* ------------------------------------------------------------------ */
/* multimap                                                            */

typedef struct mslot {
    uint32_t fp; /* 0: empty */
    uint32_t val;
} mslot;

typedef struct mmap {
    mslot *s;
    uint32_t cap, n;
} mmap;

static inline uint32_t mm_home(const mmap *m, uint32_t fp)
{
    return (uint32_t)(((uint64_t)fp * m->cap) >> 32);
}

static inline uint32_t mm_dist(const mmap *m, uint32_t i, uint32_t fp)
{
    uint32_t h = mm_home(m, fp);
    return i >= h ? i - h : i + m->cap - h;
}

static void mm_put(mmap *m, uint32_t fp, uint32_t val)
{
    mslot cur = {fp, val};
    uint32_t i = mm_home(m, fp), d = 0;
    for (;;) {
        mslot *s = &m->s[i];
        if (s->fp == 0) {
            *s = cur;
            m->n++;
            return;
        }
        uint32_t sd = mm_dist(m, i, s->fp);
        if (sd < d) {
            mslot t = *s;
            *s = cur;
            cur = t;
            d = sd;
        }
        i = i + 1 == m->cap ? 0 : i + 1;
        d++;
    }
}

/* Makes room for `extra` more entries at load <= 7/8. */
static int mm_reserve(mmap *m, size_t extra)
{
    uint64_t need = (uint64_t)m->n + extra;
    if (need * 8 <= (uint64_t)m->cap * 7)
        return PGW_OK;
    uint64_t cap = m->cap < 16 ? 16 : m->cap + m->cap / 4;
    while (need * 8 > cap * 7)
        cap += cap / 4;
    if (cap > UINT32_MAX)
        return PGW_ELIMIT;
    mslot *s = pgwi_calloc((size_t)cap, sizeof *s);
    if (!s)
        return PGW_ENOMEM;
    mmap nm = {s, (uint32_t)cap, 0};
    for (uint32_t i = 0; i < m->cap; i++)
        if (m->s[i].fp)
            mm_put(&nm, m->s[i].fp, m->s[i].val);
    pgwi_free(m->s);
    *m = nm;
    return PGW_OK;
}

/* Iteration over the entries with fingerprint fp:
 *   for (uint32_t i = mm_first(m, fp); i != NONE; i = mm_next(m, fp, i))
 *       use m->s[i].val */
static inline uint32_t mm_scan(const mmap *m, uint32_t fp, uint32_t i, uint32_t d)
{
    for (;;) {
        const mslot *s = &m->s[i];
        if (s->fp == 0 || mm_dist(m, i, s->fp) < d)
            return NONE;
        if (s->fp == fp)
            return i;
        i = i + 1 == m->cap ? 0 : i + 1;
        d++;
    }
}

static inline uint32_t mm_first(const mmap *m, uint32_t fp)
{
    if (m->n == 0)
        return NONE;
    return mm_scan(m, fp, mm_home(m, fp), 0);
}

static inline uint32_t mm_next(const mmap *m, uint32_t fp, uint32_t i)
{
    uint32_t d = mm_dist(m, i, fp) + 1;
    i = i + 1 == m->cap ? 0 : i + 1;
    return mm_scan(m, fp, i, d);
}

static bool mm_del(mmap *m, uint32_t fp, uint32_t val)
{
    uint32_t i;
    for (i = mm_first(m, fp); i != NONE; i = mm_next(m, fp, i))
        if (m->s[i].val == val)
            break;
    if (i == NONE)
        return false;
    for (;;) {
        uint32_t j = i + 1 == m->cap ? 0 : i + 1;
        if (m->s[j].fp == 0 || mm_dist(m, j, m->s[j].fp) == 0)
            break;
        m->s[i] = m->s[j];
        i = j;
    }
    m->s[i].fp = 0;
    m->n--;
    return true;
}

/* Starts loading the home slot of fp: probes of a write's keys then overlap
 * their cache misses instead of paying them one after another. */
static inline void mm_prefetch(const mmap *m, uint32_t fp)
{
#if defined(__GNUC__) || defined(__clang__)
    if (m->cap)
        __builtin_prefetch(&m->s[mm_home(m, fp)]);
#else
    (void)m;
    (void)fp;
#endif
}

static inline uint32_t mix32(uint64_t a, uint64_t b)
{
    uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0xD6E8FEB86659FD93ull);
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ull;
    h ^= h >> 32;
    return pgwi_fp32(h);
}

/* ------------------------------------------------------------------ */
/* structures                                                          */

typedef struct igroup {
    const pgwi_str *vcol; /* NULL: no value index */
    uint64_t mmask;       /* union of member masks of tracked runners */
    uint32_t *r;          /* runner indices */
    uint32_t n, cap;
    uint8_t kind; /* 0: untracked; 1: tracked, offset 0; 2: tracked, offset > 0 */
} igroup;

typedef struct ibucket {
    const pgwi_str *schema, *table; /* interned; NULL for the undeclared bucket */
    igroup *g;
    uint32_t scope;
    uint32_t ng, capg;
    uint32_t n;         /* postings; 0 and !live: free (next free in scope) */
    bool live;
} ibucket;

typedef struct iscope {
    pgwi_scope s;  /* owned strings, in the block `mem` */
    void *mem;
    uint64_t hash;
    uint32_t n_runners;
    uint32_t all_head; /* all runners, via s_prev/s_next */
    uint32_t vol_head; /* running or tracked-without-IDs runners, via q_prev/q_next */
    uint32_t und;      /* the undeclared bucket, or NONE */
    uint32_t next_free;
    bool live;
} iscope;

typedef struct ipost {
    uint32_t bucket;
    uint32_t pos;    /* index in the group's runner vector */
    uint16_t group;
    uint16_t filter; /* the value filter of the group, or UINT16_MAX */
} ipost;

typedef struct rblob {
    const pgwi_str *query; /* interned */
    uint64_t ident;
    uint32_t n_tables;
    bool undeclared;
    /* then: pgwi_tdep tables[n_tables]; ipost post[max(n_tables, 1)];
     * then the entries' arrays and filter values */
} rblob;

#define RB_TABLES(b) ((pgwi_tdep *)((unsigned char *)(b) + ALIGN8(sizeof(rblob))))
#define RB_POST(b) ((ipost *)(RB_TABLES(b) + (b)->n_tables))

enum { ST_CLEAN = PGW_RUNNER_CLEAN, ST_DIRTY = PGW_RUNNER_DIRTY, ST_RUN = PGW_RUNNER_RUNNING,
       ST_RUN_DIRTY = PGW_RUNNER_RUNNING_DIRTY };

typedef struct irunner {
    rblob *b;       /* NULL: free slot */
    uint32_t *rids; /* n_rids sorted unique fingerprints */
    uint32_t n_rids;
    uint32_t gen, refs, scope, epoch;
    uint32_t q_prev, q_next; /* dirty queue or scope's volatile list */
    uint32_t s_prev, s_next; /* scope's runner list; s_next chains free slots */
    uint8_t state, reason;
    bool rids_known, tracked;
} irunner;

struct pgw_index {
    irunner *r;
    uint32_t n_r, cap_r, free_r;
    iscope *sc;
    uint32_t n_sc, cap_sc, free_sc;
    ibucket *bk;
    uint32_t n_bk, cap_bk, free_bk;
    pgwi_str **names;
    uint32_t n_names, cap_names, free_name;
    mmap m_names, m_scopes, m_buckets, m_ident, m_vpost, m_idpost;
    uint32_t q_head, q_tail;
    uint32_t epoch;
    uint64_t live_runners, live_scopes, live_buckets, subscriptions, n_dirty, n_running;
    uint64_t writes, visited, marked, coalesced;
    uint64_t by_reason[PGW_REASON_COUNT];
};

/* Grows a vector so that index `want` fits. */
static int vec_fit(void **v, uint32_t *cap, size_t elem, uint32_t want)
{
    if (want < *cap)
        return PGW_OK;
    if (want >= UINT32_MAX - 1)
        return PGW_ELIMIT;
    /* 1.25x: these vectors hold one record per runner, scope or bucket,
     * and their slack counts in the memory per subscription. */
    uint64_t nc = *cap < 8 ? 8 : (uint64_t)*cap + *cap / 4;
    if (nc <= want)
        nc = (uint64_t)want + 1;
    if (nc > UINT32_MAX - 1)
        nc = UINT32_MAX - 1;
    void *p = pgwi_reallocarray(*v, (size_t)nc, elem);
    if (!p)
        return PGW_ENOMEM;
    *v = p;
    *cap = (uint32_t)nc;
    return PGW_OK;
}

/* ------------------------------------------------------------------ */
/* interned names (reference counted)                                  */

static pgwi_str *name_find(const pgw_index *x, const pgwi_str *s)
{
    uint32_t fp = pgwi_fp32(s->hash);
    for (uint32_t i = mm_first(&x->m_names, fp); i != NONE; i = mm_next(&x->m_names, fp, i)) {
        pgwi_str *n = x->names[x->m_names.s[i].val];
        if (pgwi_str_eq(n, s))
            return n;
    }
    return NULL;
}

/* The interned copy of s with one more reference; NULL on ENOMEM. */
static const pgwi_str *name_get(pgw_index *x, const pgwi_str *s)
{
    pgwi_str *n = name_find(x, s);
    if (n) {
        n->refs++;
        return n;
    }
    uint32_t slot = x->free_name != NONE ? x->free_name : x->n_names;
    if (mm_reserve(&x->m_names, 1) != PGW_OK ||
        vec_fit((void **)&x->names, &x->cap_names, sizeof *x->names, slot) != PGW_OK)
        return NULL;
    n = pgwi_malloc(sizeof *n + s->len + 1);
    if (!n)
        return NULL;
    n->hash = s->hash;
    n->len = s->len;
    n->refs = 1;
    memcpy(n->s, s->s, s->len + 1);
    if (slot == x->free_name)
        x->free_name = (uint32_t)(uintptr_t)x->names[slot];
    else
        x->n_names++;
    x->names[slot] = n;
    mm_put(&x->m_names, pgwi_fp32(n->hash), slot);
    return n;
}

static void name_put(pgw_index *x, const pgwi_str *s)
{
    if (!s)
        return;
    pgwi_str *n = (pgwi_str *)s;
    if (--n->refs)
        return;
    uint32_t fp = pgwi_fp32(n->hash);
    for (uint32_t i = mm_first(&x->m_names, fp); i != NONE; i = mm_next(&x->m_names, fp, i)) {
        uint32_t slot = x->m_names.s[i].val;
        if (x->names[slot] == n) {
            mm_del(&x->m_names, fp, slot);
            x->names[slot] = (pgwi_str *)(uintptr_t)x->free_name;
            x->free_name = slot;
            break;
        }
    }
    pgwi_free(n);
}

/* ------------------------------------------------------------------ */
/* scopes                                                              */

static uint32_t scope_find(const pgw_index *x, const pgwi_scope *s, uint64_t h)
{
    uint32_t fp = pgwi_fp32(h);
    for (uint32_t i = mm_first(&x->m_scopes, fp); i != NONE;
         i = mm_next(&x->m_scopes, fp, i)) {
        uint32_t k = x->m_scopes.s[i].val;
        if (pgwi_scope_eq(&x->sc[k].s, s))
            return k;
    }
    return NONE;
}

static int scope_get(uint32_t *out, pgw_index *x, const pgwi_scope *s)
{
    uint64_t h = pgwi_scope_hash(s);
    uint32_t k = scope_find(x, s, h);
    if (k != NONE) {
        *out = k;
        return PGW_OK;
    }
    k = x->free_sc != NONE ? x->free_sc : x->n_sc;
    int rc = mm_reserve(&x->m_scopes, 1);
    if (rc == PGW_OK)
        rc = vec_fit((void **)&x->sc, &x->cap_sc, sizeof *x->sc, k);
    if (rc != PGW_OK)
        return rc;
    iscope sc;
    memset(&sc, 0, sizeof sc);
    const pgwi_str *src[3] = {s->project, s->tenant, s->database};
    const pgwi_str *dst[3] = {NULL, NULL, NULL};
    size_t need = 0;
    for (int i = 0; i < 3; i++)
        if (src[i])
            need += ALIGN8(sizeof(pgwi_str) + src[i]->len + 1);
    if (need && !(sc.mem = pgwi_malloc(need)))
        return PGW_ENOMEM;
    unsigned char *cur = sc.mem;
    for (int i = 0; i < 3; i++) {
        if (!src[i])
            continue;
        pgwi_str *c = (pgwi_str *)cur;
        cur += ALIGN8(sizeof(pgwi_str) + src[i]->len + 1);
        c->hash = src[i]->hash;
        c->len = src[i]->len;
        c->refs = 0;
        memcpy(c->s, src[i]->s, src[i]->len + 1);
        dst[i] = c;
    }
    sc.s.project = dst[0];
    sc.s.tenant = dst[1];
    sc.s.database = dst[2];
    sc.hash = h;
    sc.all_head = sc.vol_head = sc.und = NONE;
    sc.next_free = NONE;
    sc.live = true;
    if (k == x->free_sc)
        x->free_sc = x->sc[k].next_free;
    else
        x->n_sc++;
    x->sc[k] = sc;
    mm_put(&x->m_scopes, pgwi_fp32(h), k);
    x->live_scopes++;
    *out = k;
    return PGW_OK;
}

/* Frees a scope that has no runner left. */
static void scope_gc(pgw_index *x, uint32_t k)
{
    iscope *s = &x->sc[k];
    if (!s->live || s->n_runners)
        return;
    mm_del(&x->m_scopes, pgwi_fp32(s->hash), k);
    pgwi_free(s->mem);
    s->live = false;
    s->next_free = x->free_sc;
    x->free_sc = k;
    x->live_scopes--;
}

/* ------------------------------------------------------------------ */
/* buckets and groups                                                  */

static uint32_t bucket_key(uint32_t scope, const pgwi_str *schema, const pgwi_str *table)
{
    uint64_t h = schema ? schema->hash * 31 + table->hash : 0;
    return mix32(scope, h);
}

static uint32_t bucket_find(const pgw_index *x, uint32_t scope, const pgwi_str *schema,
                            const pgwi_str *table)
{
    uint32_t fp = bucket_key(scope, schema, table);
    for (uint32_t i = mm_first(&x->m_buckets, fp); i != NONE;
         i = mm_next(&x->m_buckets, fp, i)) {
        uint32_t k = x->m_buckets.s[i].val;
        const ibucket *b = &x->bk[k];
        if (b->scope == scope && (schema ? b->schema && pgwi_str_eq(b->schema, schema) &&
                                               pgwi_str_eq(b->table, table)
                                         : !b->schema))
            return k;
    }
    return NONE;
}

/* Finds or creates a bucket; schema and table must be interned (or NULL). */
static int bucket_get(uint32_t *out, pgw_index *x, uint32_t scope, const pgwi_str *schema,
                      const pgwi_str *table)
{
    uint32_t k = bucket_find(x, scope, schema, table);
    if (k != NONE) {
        *out = k;
        return PGW_OK;
    }
    k = x->free_bk != NONE ? x->free_bk : x->n_bk;
    int rc = mm_reserve(&x->m_buckets, 1);
    if (rc == PGW_OK)
        rc = vec_fit((void **)&x->bk, &x->cap_bk, sizeof *x->bk, k);
    if (rc != PGW_OK)
        return rc;
    if (k == x->free_bk)
        x->free_bk = x->bk[k].n; /* free slots chain through n */
    else
        x->n_bk++;
    ibucket *b = &x->bk[k];
    memset(b, 0, sizeof *b);
    b->scope = scope;
    b->schema = schema;
    b->table = table;
    b->live = true;
    if (schema) {
        ((pgwi_str *)schema)->refs++;
        ((pgwi_str *)table)->refs++;
    } else {
        x->sc[scope].und = k;
    }
    mm_put(&x->m_buckets, bucket_key(scope, schema, table), k);
    x->live_buckets++;
    *out = k;
    return PGW_OK;
}

static void bucket_gc(pgw_index *x, uint32_t k)
{
    ibucket *b = &x->bk[k];
    if (!b->live || b->n)
        return;
    mm_del(&x->m_buckets, bucket_key(b->scope, b->schema, b->table), k);
    for (uint32_t i = 0; i < b->ng; i++)
        pgwi_free(b->g[i].r);
    pgwi_free(b->g);
    if (b->schema) {
        name_put(x, b->schema);
        name_put(x, b->table);
    } else if (x->sc[b->scope].und == k) {
        x->sc[b->scope].und = NONE;
    }
    memset(b, 0, sizeof *b);
    b->n = x->free_bk;
    x->free_bk = k;
    x->live_buckets--;
}

/* Finds or creates a group and makes room for one more runner in it. */
static int group_get(uint16_t *out, ibucket *b, const pgwi_str *vcol, uint8_t kind)
{
    uint32_t g;
    for (g = 0; g < b->ng; g++)
        if (b->g[g].vcol == vcol && b->g[g].kind == kind)
            break;
    if (g == b->ng) {
        if (b->ng >= 65535)
            return PGW_ELIMIT;
        if (b->ng == b->capg) { /* buckets have few groups: grow exactly */
            igroup *ng = pgwi_reallocarray(b->g, b->ng + 1, sizeof *ng);
            if (!ng)
                return PGW_ENOMEM;
            b->g = ng;
            b->capg = b->ng + 1;
        }
        memset(&b->g[g], 0, sizeof b->g[g]);
        b->g[g].vcol = vcol;
        b->g[g].kind = kind;
        b->ng++;
    }
    igroup *gr = &b->g[g];
    if (gr->n == gr->cap) { /* small vectors: 2, 3, 4, 6, 9, ... */
        uint32_t cap = gr->cap < 2 ? 2 : gr->cap + gr->cap / 2;
        if (cap < gr->cap)
            return PGW_ELIMIT;
        uint32_t *r = pgwi_reallocarray(gr->r, cap, sizeof *r);
        if (!r)
            return PGW_ENOMEM;
        gr->r = r;
        gr->cap = cap;
    }
    *out = (uint16_t)g;
    return PGW_OK;
}

static uint32_t vpost_key(uint32_t bucket, uint16_t group, const pgwi_str *v)
{
    return mix32(((uint64_t)bucket << 16) | group, v->hash);
}

static uint32_t idpost_key(uint32_t bucket, uint32_t fp)
{
    return mix32((uint64_t)bucket | ((uint64_t)1 << 40), fp);
}

/* ------------------------------------------------------------------ */
/* compiled declarations                                               */

static uint64_t hmix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h;
}

/* Identity of a subscription: scope, query and declaration. */
static uint64_t ident_hash(const pgw_deps *d)
{
    uint64_t h = hmix(pgwi_scope_hash(&d->scope), d->query->hash);
    h = hmix(h, d->n_tables);
    for (uint32_t i = 0; i < d->n_tables; i++) {
        const pgwi_tdep *t = &d->tables[i];
        h = hmix(hmix(h, t->schema->hash), t->table->hash);
        h = hmix(h, t->all_cols ? 0xA11 : t->n_cols);
        for (uint32_t k = 0; !t->all_cols && k < t->n_cols; k++)
            h = hmix(h, t->cols[k]->hash);
        h = hmix(h, t->n_filters);
        for (uint32_t k = 0; k < t->n_filters; k++) {
            const pgwi_filter *f = &t->filters[k];
            h = hmix(hmix(hmix(h, f->col->hash), f->op), f->vals_known ? f->n_vals : 0xFFFF);
            for (uint32_t v = 0; f->vals_known && v < f->n_vals; v++)
                h = hmix(h, f->vals[v]->hash);
        }
        h = hmix(h, t->n_sort);
        for (uint32_t k = 0; k < t->n_sort; k++)
            h = hmix(h, t->sort[k]->hash);
        h = hmix(hmix(h, (uint64_t)t->limit), (uint64_t)t->offset);
    }
    return h;
}

static bool names_eq(const pgwi_str *const *a, const pgwi_str *const *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (!pgwi_str_eq(a[i], b[i]))
            return false;
    return true;
}

static bool same_decl(const rblob *b, const pgw_deps *d)
{
    if (!pgwi_str_eq(b->query, d->query) || b->n_tables != d->n_tables)
        return false;
    for (uint32_t i = 0; i < d->n_tables; i++) {
        const pgwi_tdep *x = &RB_TABLES(b)[i], *y = &d->tables[i];
        if (!pgwi_str_eq(x->schema, y->schema) || !pgwi_str_eq(x->table, y->table) ||
            x->all_cols != y->all_cols || x->n_cols != y->n_cols ||
            x->n_filters != y->n_filters || x->n_sort != y->n_sort || x->limit != y->limit ||
            x->offset != y->offset)
            return false;
        if (!x->all_cols && !names_eq(x->cols, y->cols, x->n_cols))
            return false;
        if (!names_eq(x->sort, y->sort, x->n_sort))
            return false;
        for (uint32_t k = 0; k < x->n_filters; k++) {
            const pgwi_filter *f = &x->filters[k], *g = &y->filters[k];
            if (!pgwi_str_eq(f->col, g->col) || f->op != g->op ||
                f->vals_known != g->vals_known || f->n_vals != g->n_vals ||
                !names_eq(f->vals, g->vals, f->n_vals))
                return false;
        }
    }
    return true;
}

/* Releases the interned names a (possibly partial) blob holds. */
static void blob_free(pgw_index *x, rblob *b)
{
    if (!b)
        return;
    name_put(x, b->query);
    for (uint32_t i = 0; i < b->n_tables; i++) {
        pgwi_tdep *t = &RB_TABLES(b)[i];
        name_put(x, t->schema);
        name_put(x, t->table);
        for (uint32_t k = 0; k < t->n_cols; k++)
            name_put(x, t->cols[k]);
        for (uint32_t k = 0; k < t->n_sort; k++)
            name_put(x, t->sort[k]);
        for (uint32_t k = 0; k < t->n_filters; k++)
            name_put(x, t->filters[k].col);
    }
    pgwi_free(b);
}

/* Compiles deps into one block. Names are interned as they are copied; on
 * ENOMEM everything acquired is released. */
static int blob_new(rblob **out, pgw_index *x, const pgw_deps *d)
{
    size_t size = ALIGN8(sizeof(rblob)) + ALIGN8(d->n_tables * sizeof(pgwi_tdep)) +
                  ALIGN8((d->n_tables ? d->n_tables : 1) * sizeof(ipost));
    for (uint32_t i = 0; i < d->n_tables; i++) {
        const pgwi_tdep *t = &d->tables[i];
        size += ALIGN8(((t->all_cols ? 0 : t->n_cols) + t->n_sort) * sizeof(pgwi_str *));
        size += ALIGN8(t->n_filters * sizeof(pgwi_filter));
        for (uint32_t k = 0; k < t->n_filters; k++) {
            const pgwi_filter *f = &t->filters[k];
            size += ALIGN8(f->n_vals * sizeof(pgwi_str *));
            for (uint32_t v = 0; v < f->n_vals; v++)
                size += ALIGN8(sizeof(pgwi_str) + f->vals[v]->len + 1);
        }
    }
    unsigned char *p = pgwi_malloc(size);
    if (!p)
        return PGW_ENOMEM;
    memset(p, 0, size);
    rblob *b = (rblob *)p;
    /* Entries not yet filled are zero: blob_free releases only what they
     * hold. */
    b->n_tables = d->n_tables;
    unsigned char *cur = p + ALIGN8(sizeof(rblob)) + ALIGN8(d->n_tables * sizeof(pgwi_tdep)) +
                         ALIGN8((d->n_tables ? d->n_tables : 1) * sizeof(ipost));
    b->undeclared = d->n_tables == 0;
    if (!(b->query = name_get(x, d->query)))
        goto nomem;
    for (uint32_t i = 0; i < d->n_tables; i++) {
        const pgwi_tdep *t = &d->tables[i];
        pgwi_tdep *u = &RB_TABLES(b)[i];
        u->limit = t->limit;
        u->offset = t->offset;
        u->all_cols = t->all_cols;
        if (!(u->schema = name_get(x, t->schema)) || !(u->table = name_get(x, t->table)))
            goto nomem;
        const pgwi_str **names = (const pgwi_str **)cur;
        uint32_t nc = t->all_cols ? 0 : t->n_cols;
        cur += ALIGN8((nc + t->n_sort) * sizeof(pgwi_str *));
        u->cols = names;
        u->sort = names + nc;
        for (uint32_t k = 0; k < nc; k++, u->n_cols++)
            if (!(names[k] = name_get(x, t->cols[k])))
                goto nomem;
        for (uint32_t k = 0; k < t->n_sort; k++, u->n_sort++)
            if (!(names[nc + k] = name_get(x, t->sort[k])))
                goto nomem;
        pgwi_filter *fs = (pgwi_filter *)cur;
        cur += ALIGN8(t->n_filters * sizeof(pgwi_filter));
        u->filters = fs;
        for (uint32_t k = 0; k < t->n_filters; k++) {
            const pgwi_filter *f = &t->filters[k];
            fs[k].op = f->op;
            fs[k].vals_known = f->vals_known;
            fs[k].n_vals = f->n_vals;
            const pgwi_str **vals = (const pgwi_str **)cur;
            cur += ALIGN8(f->n_vals * sizeof(pgwi_str *));
            for (uint32_t v = 0; v < f->n_vals; v++) {
                pgwi_str *s = (pgwi_str *)cur;
                cur += ALIGN8(sizeof(pgwi_str) + f->vals[v]->len + 1);
                s->hash = f->vals[v]->hash;
                s->len = f->vals[v]->len;
                memcpy(s->s, f->vals[v]->s, s->len + 1);
                vals[v] = s;
            }
            fs[k].vals = f->vals_known ? vals : NULL;
            u->n_filters = k + 1;
            if (!(fs[k].col = name_get(x, f->col)))
                goto nomem;
        }
        pgwi_tdep_masks(u);
    }
    *out = b;
    return PGW_OK;
nomem:
    blob_free(x, b);
    return PGW_ENOMEM;
}

/* The value filter a table entry is indexed by: the eq/in filter with
 * declared values that has the fewest values; UINT16_MAX when none. */
static uint16_t value_filter(const pgwi_tdep *t)
{
    uint16_t best = UINT16_MAX;
    for (uint32_t k = 0; k < t->n_filters && k < UINT16_MAX; k++)
        if (t->filters[k].vals_known &&
            (best == UINT16_MAX || t->filters[k].n_vals < t->filters[best].n_vals))
            best = (uint16_t)k;
    return best;
}

/* ------------------------------------------------------------------ */
/* runner lists                                                        */

static void q_unlink(pgw_index *x, uint32_t k, uint32_t *head, uint32_t *tail)
{
    irunner *r = &x->r[k];
    if (r->q_prev != NONE)
        x->r[r->q_prev].q_next = r->q_next;
    else
        *head = r->q_next;
    if (r->q_next != NONE)
        x->r[r->q_next].q_prev = r->q_prev;
    else if (tail)
        *tail = r->q_prev;
    r->q_prev = r->q_next = NONE;
}

static void q_push_dirty(pgw_index *x, uint32_t k)
{
    irunner *r = &x->r[k];
    r->q_next = NONE;
    r->q_prev = x->q_tail;
    if (x->q_tail != NONE)
        x->r[x->q_tail].q_next = k;
    else
        x->q_head = k;
    x->q_tail = k;
}

static void vol_push(pgw_index *x, uint32_t k)
{
    irunner *r = &x->r[k];
    iscope *s = &x->sc[r->scope];
    r->q_prev = NONE;
    r->q_next = s->vol_head;
    if (s->vol_head != NONE)
        x->r[s->vol_head].q_prev = k;
    s->vol_head = k;
}

/* Whether a runner belongs on its scope's volatile list: decided with
 * unknown result IDs although its groups assume known ones. */
static bool vol_member(const irunner *r)
{
    return r->state == ST_RUN || (r->state == ST_CLEAN && r->tracked && !r->rids_known);
}

/* Leaves whatever list the runner is on (by state). */
static void lists_leave(pgw_index *x, uint32_t k)
{
    irunner *r = &x->r[k];
    if (r->state == ST_DIRTY)
        q_unlink(x, k, &x->q_head, &x->q_tail);
    else if (vol_member(r))
        q_unlink(x, k, &x->sc[r->scope].vol_head, NULL);
}

/* Enters the list its (new) state asks for. */
static void lists_enter(pgw_index *x, uint32_t k)
{
    irunner *r = &x->r[k];
    if (r->state == ST_DIRTY)
        q_push_dirty(x, k);
    else if (vol_member(r))
        vol_push(x, k);
}

static void set_state(pgw_index *x, uint32_t k, uint8_t st)
{
    irunner *r = &x->r[k];
    if ((r->state == ST_DIRTY) != (st == ST_DIRTY))
        x->n_dirty += st == ST_DIRTY ? 1 : (uint64_t)-1;
    bool was_run = r->state == ST_RUN || r->state == ST_RUN_DIRTY;
    bool is_run = st == ST_RUN || st == ST_RUN_DIRTY;
    if (was_run != is_run)
        x->n_running += is_run ? 1 : (uint64_t)-1;
    lists_leave(x, k);
    r->state = st;
    lists_enter(x, k);
}

/* A hit: the runner must refresh. Returns 1 when newly marked. */
static size_t mark(pgw_index *x, uint32_t k, pgw_reason why)
{
    irunner *r = &x->r[k];
    if (r->state == ST_DIRTY || r->state == ST_RUN_DIRTY) {
        x->coalesced++;
        return 0;
    }
    r->reason = (uint8_t)why;
    set_state(x, k, r->state == ST_RUN ? ST_RUN_DIRTY : ST_DIRTY);
    x->marked++;
    return 1;
}

/* ------------------------------------------------------------------ */
/* lifecycle                                                           */

int pgw_index_new(pgw_index **out, const pgw_index_options *opts, pgw_error *err)
{
    if (!out)
        return pgwi_error(err, PGW_EINVAL, "index_new: out is NULL");
    if (opts && opts->version != PGW_INDEX_OPTIONS_VERSION)
        return pgwi_error(err, PGW_EINVAL,
                          "index_new: options version %u is not %u (use PGW_INDEX_OPTIONS_INIT)",
                          opts->version, (unsigned)PGW_INDEX_OPTIONS_VERSION);
    pgw_index *x = pgwi_calloc(1, sizeof *x);
    if (!x)
        return pgwi_enomem(err);
    x->free_r = x->free_sc = x->free_bk = x->free_name = NONE;
    x->q_head = x->q_tail = NONE;
    x->epoch = 1;
    if (opts && opts->expected_runners) {
        size_t n = opts->expected_runners;
        if (n > UINT32_MAX / 2 || mm_reserve(&x->m_ident, n) != PGW_OK ||
            mm_reserve(&x->m_vpost, n) != PGW_OK ||
            vec_fit((void **)&x->r, &x->cap_r, sizeof *x->r, (uint32_t)n) != PGW_OK) {
            pgw_index_free(x);
            return pgwi_enomem(err);
        }
    }
    *out = x;
    return PGW_OK;
}

void pgw_index_free(pgw_index *x)
{
    if (!x)
        return;
    for (uint32_t k = 0; k < x->n_r; k++)
        if (x->r[k].b) {
            blob_free(x, x->r[k].b);
            pgwi_free(x->r[k].rids);
        }
    for (uint32_t k = 0; k < x->n_bk; k++)
        if (x->bk[k].live) {
            for (uint32_t g = 0; g < x->bk[k].ng; g++)
                pgwi_free(x->bk[k].g[g].r);
            pgwi_free(x->bk[k].g);
            if (x->bk[k].schema) {
                name_put(x, x->bk[k].schema);
                name_put(x, x->bk[k].table);
            }
        }
    for (uint32_t k = 0; k < x->n_sc; k++)
        if (x->sc[k].live)
            pgwi_free(x->sc[k].mem);
    pgwi_free(x->r);
    pgwi_free(x->sc);
    pgwi_free(x->bk);
    pgwi_free(x->names);
    pgwi_free(x->m_names.s);
    pgwi_free(x->m_scopes.s);
    pgwi_free(x->m_buckets.s);
    pgwi_free(x->m_ident.s);
    pgwi_free(x->m_vpost.s);
    pgwi_free(x->m_idpost.s);
    pgwi_free(x);
}

static int runner_at(uint32_t *out, const pgw_index *x, pgw_runner_id id, const char *fn,
                     pgw_error *err)
{
    uint32_t k = (uint32_t)id, gen = (uint32_t)(id >> 32);
    if (k >= x->n_r || !x->r[k].b || x->r[k].gen != gen)
        return pgwi_error(err, PGW_ENOTFOUND, "%s: runner %llu is not registered", fn,
                          (unsigned long long)id);
    *out = k;
    return PGW_OK;
}

static pgw_runner_id runner_id(const pgw_index *x, uint32_t k)
{
    return ((uint64_t)x->r[k].gen << 32) | k;
}

/* Adds a runner's postings (capacity reserved by the caller). */
static void post_add(pgw_index *x, uint32_t k)
{
    irunner *r = &x->r[k];
    rblob *b = r->b;
    uint32_t np = b->undeclared ? 1 : b->n_tables;
    for (uint32_t i = 0; i < np; i++) {
        ipost *p = &RB_POST(b)[i];
        ibucket *bk = &x->bk[p->bucket];
        igroup *g = &bk->g[p->group];
        p->pos = g->n;
        g->r[g->n++] = k;
        bk->n++;
        if (g->kind)
            g->mmask |= RB_TABLES(b)[i].member_mask;
        if (p->filter != UINT16_MAX) {
            const pgwi_filter *f = &RB_TABLES(b)[i].filters[p->filter];
            for (uint32_t v = 0; v < f->n_vals; v++)
                mm_put(&x->m_vpost, vpost_key(p->bucket, p->group, f->vals[v]), k);
        }
    }
    if (r->tracked && r->rids_known)
        for (uint32_t i = 0; i < r->n_rids; i++)
            mm_put(&x->m_idpost, idpost_key(RB_POST(b)[0].bucket, r->rids[i]), k);
    mm_put(&x->m_ident, pgwi_fp32(b->ident), k);
}

static void idpost_del(pgw_index *x, uint32_t k)
{
    irunner *r = &x->r[k];
    if (!(r->tracked && r->rids_known))
        return;
    for (uint32_t i = 0; i < r->n_rids; i++)
        mm_del(&x->m_idpost, idpost_key(RB_POST(r->b)[0].bucket, r->rids[i]), k);
}

static void post_del(pgw_index *x, uint32_t k)
{
    irunner *r = &x->r[k];
    rblob *b = r->b;
    idpost_del(x, k);
    mm_del(&x->m_ident, pgwi_fp32(b->ident), k);
    uint32_t np = b->undeclared ? 1 : b->n_tables;
    for (uint32_t i = 0; i < np; i++) {
        ipost *p = &RB_POST(b)[i];
        ibucket *bk = &x->bk[p->bucket];
        igroup *g = &bk->g[p->group];
        if (p->filter != UINT16_MAX) {
            const pgwi_filter *f = &RB_TABLES(b)[i].filters[p->filter];
            for (uint32_t v = 0; v < f->n_vals; v++)
                mm_del(&x->m_vpost, vpost_key(p->bucket, p->group, f->vals[v]), k);
        }
        uint32_t last = g->r[--g->n];
        if (last != k) { /* move the last runner into the hole */
            g->r[p->pos] = last;
            rblob *lb = x->r[last].b;
            uint32_t lnp = lb->undeclared ? 1 : lb->n_tables;
            for (uint32_t j = 0; j < lnp; j++)
                if (RB_POST(lb)[j].bucket == p->bucket && RB_POST(lb)[j].group == p->group)
                    RB_POST(lb)[j].pos = p->pos;
        }
        if (g->n == 0)
            g->mmask = 0;
        bk->n--;
    }
    for (uint32_t i = 0; i < np; i++)
        bucket_gc(x, RB_POST(b)[i].bucket);
}

int pgw_index_register(pgw_runner_id *out, pgw_index *x, const pgw_deps *d, pgw_error *err)
{
    if (!out || !x || !d)
        return pgwi_error(err, PGW_EINVAL, "index_register: %s is NULL",
                          !out ? "out" : !x ? "index" : "deps");
    uint64_t ident = ident_hash(d);
    uint64_t sh = pgwi_scope_hash(&d->scope);
    uint32_t sk = scope_find(x, &d->scope, sh);
    if (sk != NONE) {
        uint32_t fp = pgwi_fp32(ident);
        for (uint32_t i = mm_first(&x->m_ident, fp); i != NONE;
             i = mm_next(&x->m_ident, fp, i)) {
            uint32_t k = x->m_ident.s[i].val;
            if (x->r[k].scope == sk && same_decl(x->r[k].b, d)) {
                if (x->r[k].refs == UINT32_MAX)
                    return pgwi_error(err, PGW_ELIMIT, "index_register: too many references");
                x->r[k].refs++;
                x->subscriptions++;
                *out = runner_id(x, k);
                return PGW_OK;
            }
        }
    }
    /* A new runner: acquire everything, then commit without failing. */
    rblob *b = NULL;
    uint32_t *rids = NULL;
    int rc = scope_get(&sk, x, &d->scope);
    if (rc != PGW_OK)
        return rc == PGW_ENOMEM ? pgwi_enomem(err)
                                : pgwi_error(err, rc, "index_register: too many scopes");
    rc = blob_new(&b, x, d);
    if (rc == PGW_OK && d->rids_known && d->n_fps) {
        rids = pgwi_calloc(d->n_fps, sizeof *rids);
        if (!rids)
            rc = PGW_ENOMEM;
        else
            memcpy(rids, d->fps, d->n_fps * sizeof *rids);
    }
    uint32_t k = x->free_r != NONE ? x->free_r : x->n_r;
    if (rc == PGW_OK)
        rc = vec_fit((void **)&x->r, &x->cap_r, sizeof *x->r, k);
    const uint32_t np = d->n_tables ? d->n_tables : 1;
    uint32_t held = 0; /* postings whose bucket is held (its count raised) */
    size_t nvals = 0;
    for (uint32_t i = 0; rc == PGW_OK && i < np; i++) {
        ipost *p = &RB_POST(b)[i];
        uint8_t kind = 0;
        const pgwi_str *vcol = NULL, *schema = NULL, *table = NULL;
        p->filter = UINT16_MAX;
        if (d->n_tables) {
            const pgwi_tdep *t = &RB_TABLES(b)[i];
            schema = t->schema;
            table = t->table;
            p->filter = value_filter(t);
            if (p->filter != UINT16_MAX) {
                vcol = t->filters[p->filter].col;
                nvals += t->filters[p->filter].n_vals;
            }
            if (i == 0 && d->rids_known)
                kind = t->offset > 0 ? 2 : 1;
        }
        rc = bucket_get(&p->bucket, x, sk, schema, table);
        if (rc != PGW_OK)
            break;
        x->bk[p->bucket].n++; /* hold it: a failure below must not free it twice */
        held = i + 1;
        rc = group_get(&p->group, &x->bk[p->bucket], vcol, kind);
    }
    if (rc == PGW_OK)
        rc = mm_reserve(&x->m_ident, 1);
    if (rc == PGW_OK)
        rc = mm_reserve(&x->m_vpost, nvals);
    if (rc == PGW_OK && d->rids_known)
        rc = mm_reserve(&x->m_idpost, d->n_fps);
    for (uint32_t i = 0; i < held; i++)
        x->bk[RB_POST(b)[i].bucket].n--; /* post_add counts them for real */
    if (rc != PGW_OK) {
        for (uint32_t i = 0; i < held; i++)
            bucket_gc(x, RB_POST(b)[i].bucket);
        blob_free(x, b);
        pgwi_free(rids);
        scope_gc(x, sk);
        return rc == PGW_ENOMEM ? pgwi_enomem(err)
                                : pgwi_error(err, rc, "index_register: index limit reached");
    }
    b->ident = ident;
    if (k == x->free_r)
        x->free_r = x->r[k].s_next;
    else {
        x->n_r++;
        x->r[k].gen = 0;
    }
    irunner *r = &x->r[k];
    uint32_t gen = r->gen + 1;
    memset(r, 0, sizeof *r);
    r->b = b;
    r->gen = gen ? gen : 1;
    r->refs = 1;
    r->scope = sk;
    r->rids = rids;
    r->n_rids = d->rids_known ? d->n_fps : 0;
    r->rids_known = d->rids_known;
    r->tracked = d->n_tables && d->rids_known;
    r->q_prev = r->q_next = NONE;
    r->state = ST_CLEAN;
    iscope *s = &x->sc[sk];
    r->s_prev = NONE;
    r->s_next = s->all_head;
    if (s->all_head != NONE)
        x->r[s->all_head].s_prev = k;
    s->all_head = k;
    s->n_runners++;
    post_add(x, k);
    x->live_runners++;
    x->subscriptions++;
    *out = runner_id(x, k);
    return PGW_OK;
}

int pgw_index_unregister(pgw_index *x, pgw_runner_id id, pgw_error *err)
{
    if (!x)
        return pgwi_error(err, PGW_EINVAL, "index_unregister: index is NULL");
    uint32_t k = 0;
    int rc = runner_at(&k, x, id, "index_unregister", err);
    if (rc != PGW_OK)
        return rc;
    irunner *r = &x->r[k];
    x->subscriptions--;
    if (--r->refs)
        return PGW_OK;
    set_state(x, k, ST_CLEAN);
    lists_leave(x, k); /* a tracked runner without IDs sits on the volatile list */
    iscope *s = &x->sc[r->scope];
    if (r->s_prev != NONE)
        x->r[r->s_prev].s_next = r->s_next;
    else
        s->all_head = r->s_next;
    if (r->s_next != NONE)
        x->r[r->s_next].s_prev = r->s_prev;
    post_del(x, k);
    blob_free(x, r->b);
    pgwi_free(r->rids);
    uint32_t sk = r->scope, gen = r->gen;
    memset(r, 0, sizeof *r);
    r->gen = gen;
    r->s_next = x->free_r;
    x->free_r = k;
    s->n_runners--;
    scope_gc(x, sk);
    x->live_runners--;
    return PGW_OK;
}

/* ------------------------------------------------------------------ */
/* matching                                                            */

typedef struct mctx {
    pgw_index *x;
    const pgw_write *w;
    uint32_t epoch;
    size_t marked;
} mctx;

static void visit(mctx *c, uint32_t k)
{
    pgw_index *x = c->x;
    irunner *r = &x->r[k];
    if (r->epoch == c->epoch)
        return;
    r->epoch = c->epoch;
    if (r->state == ST_DIRTY || r->state == ST_RUN_DIRTY) {
        x->coalesced++;
        return;
    }
    const rblob *b = r->b;
    pgwi_dview dv = {RB_TABLES(b), b->n_tables, b->undeclared, r->rids_known, r->n_rids, r->rids};
    pgw_verdict v = pgwi_decide_view(&dv, r->state == ST_RUN, c->w);
    x->visited++;
    x->by_reason[v.reason]++;
    if (v.refresh)
        c->marked += mark(x, k, v.reason);
}

static void scan_group(mctx *c, const igroup *g)
{
    for (uint32_t i = 0; i < g->n; i++)
        visit(c, g->r[i]);
}

/* Probes the value index for a group with a value column. Returns false
 * (and probes nothing) when some row lacks a value the rules would need. */
static bool probe_values(mctx *c, uint32_t bk, uint16_t gi, const igroup *g)
{
    const pgw_write *w = c->w;
    int32_t vc = pgwi_write_vcol(w, g->vcol);
    if (vc < 0)
        return false;
    bool changed = !pgwi_cols_ok(w) || pgwi_write_changed(w, g->vcol);
    for (uint32_t i = 0; i < w->n_ids; i++)
        for (int side = 0; side < 2; side++)
            if (pgwi_row_exists(w, i, side) != PGWI_NO &&
                !pgwi_row_value(w, i, side, vc, changed))
                return false;
    const mmap *m = &c->x->m_vpost;
    for (uint32_t i = 0; i < w->n_ids && i < 32; i++)
        for (int side = 0; side < 2; side++) {
            const pgwi_str *v = pgwi_row_exists(w, i, side) != PGWI_NO
                                    ? pgwi_row_value(w, i, side, vc, changed)
                                    : NULL;
            if (v && v != &pgwi_sqlnull)
                mm_prefetch(m, vpost_key(bk, gi, v));
        }
    enum { SEEN = 32 }; /* small writes: probe each distinct value once */
    const pgwi_str *seen[SEEN];
    uint32_t n_seen = 0;
    for (uint32_t i = 0; i < w->n_ids; i++)
        for (int side = 0; side < 2; side++) {
            if (pgwi_row_exists(w, i, side) == PGWI_NO)
                continue;
            const pgwi_str *v = pgwi_row_value(w, i, side, vc, changed);
            if (v == &pgwi_sqlnull)
                continue; /* NULL matches no value */
            bool dup = false;
            for (uint32_t k = 0; k < n_seen && !dup; k++)
                dup = pgwi_str_eq(seen[k], v);
            if (dup)
                continue;
            if (n_seen < SEEN)
                seen[n_seen++] = v;
            uint32_t fp = vpost_key(bk, gi, v);
            for (uint32_t s = mm_first(m, fp); s != NONE; s = mm_next(m, fp, s))
                visit(c, m->s[s].val);
        }
    return true;
}

static void match_bucket(mctx *c, uint32_t bk)
{
    const pgw_write *w = c->w;
    const ibucket *b = &c->x->bk[bk];
    const bool rows = w->op == PGW_OP_INSERT || w->op == PGW_OP_UPDATE ||
                      w->op == PGW_OP_DELETE;
    const bool known = rows && pgwi_ids_ok(w);
    bool probe_ids = false;
    for (uint16_t gi = 0; gi < b->ng; gi++) {
        const igroup *g = &b->g[gi];
        if (g->n == 0)
            continue;
        if (!known) {
            scan_group(c, g);
            continue;
        }
        bool id_prunable = false;
        if (g->kind && w->op == PGW_OP_DELETE && g->kind == 1)
            id_prunable = true; /* rule 19: rows outside R, offset 0 */
        if (g->kind && pgwi_same_row(w) && pgwi_cols_ok(w) && !(w->cols_mask & g->mmask))
            id_prunable = true; /* rule 12: no filter or sort column changed */
        if (id_prunable) {
            probe_ids = true;
            continue;
        }
        if (g->vcol && probe_values(c, bk, gi, g)) {
            if (g->kind)
                probe_ids = true; /* rows in R are visited whatever their values */
            continue;
        }
        scan_group(c, g);
    }
    if (probe_ids && w->op != PGW_OP_INSERT) {
        const mmap *m = &c->x->m_idpost;
        for (uint32_t i = 0; i < w->n_ids && i < 64 && m->n; i++)
            mm_prefetch(m, idpost_key(bk, w->ids[i].fp));
        for (uint32_t i = 0; i < w->n_ids && m->n; i++) {
            uint32_t fp = idpost_key(bk, w->ids[i].fp);
            for (uint32_t s = mm_first(m, fp); s != NONE; s = mm_next(m, fp, s))
                visit(c, m->s[s].val);
        }
    }
}

static bool posts_bucket(const irunner *r, uint32_t bk)
{
    uint32_t np = r->b->undeclared ? 1 : r->b->n_tables;
    for (uint32_t i = 0; i < np; i++)
        if (RB_POST(r->b)[i].bucket == bk)
            return true;
    return false;
}

static size_t reset_scope(pgw_index *x, uint32_t sk)
{
    size_t n = 0;
    for (uint32_t k = x->sc[sk].all_head; k != NONE; k = x->r[k].s_next) {
        x->by_reason[PGW_REASON_SCOPE_RESET]++;
        n += mark(x, k, PGW_REASON_SCOPE_RESET);
    }
    return n;
}

static void next_epoch(pgw_index *x)
{
    if (++x->epoch == 0) {
        for (uint32_t k = 0; k < x->n_r; k++)
            x->r[k].epoch = 0;
        x->epoch = 1;
    }
}

int pgw_index_match(size_t *out, pgw_index *x, const pgw_write *w, pgw_error *err)
{
    if (!x || !w)
        return pgwi_error(err, PGW_EINVAL, "index_match: %s is NULL", x ? "write" : "index");
    x->writes++;
    size_t marked = 0;
    uint32_t sk = x->m_scopes.n ? scope_find(x, &w->scope, pgwi_scope_hash(&w->scope)) : NONE;
    if (sk != NONE) {
        if (w->op == PGW_OP_RESET) {
            marked = reset_scope(x, sk);
        } else {
            next_epoch(x);
            mctx c = {x, w, x->epoch, 0};
            const iscope *s = &x->sc[sk];
            if (s->und != NONE)
                scan_group(&c, &x->bk[s->und].g[0]);
            uint32_t bk = bucket_find(x, sk, w->schema, w->table);
            if (bk != NONE) {
                match_bucket(&c, bk);
                /* Runners decided with unknown result IDs although their
                 * group may have been pruned. */
                for (uint32_t k = s->vol_head; k != NONE;) {
                    uint32_t next = x->r[k].q_next; /* visit may unlink k */
                    if (posts_bucket(&x->r[k], bk))
                        visit(&c, k);
                    k = next;
                }
            }
            marked = c.marked;
        }
    }
    if (out)
        *out = marked;
    return PGW_OK;
}

int pgw_index_reset_scope(size_t *out, pgw_index *x, const pgw_scope *scope, pgw_error *err)
{
    if (!x || !scope)
        return pgwi_error(err, PGW_EINVAL, "index_reset_scope: %s is NULL",
                          x ? "scope" : "index");
    /* Look the scope up without copying it: hash the borrowed strings. */
    const char *p[3] = {scope->project, scope->tenant, scope->database};
    uint64_t hs[3] = {0, 0, 0};
    size_t ls[3] = {0, 0, 0};
    pgwi_str h0, h1, h2;
    pgwi_str *hp[3] = {&h0, &h1, &h2};
    pgwi_scope s = {NULL, NULL, NULL};
    const pgwi_str **dst[3] = {&s.project, &s.tenant, &s.database};
    for (int i = 0; i < 3; i++) {
        if (!p[i])
            continue;
        ls[i] = strlen(p[i]);
        hs[i] = pgwi_hash_bytes(p[i], ls[i]);
        hp[i]->hash = hs[i]; /* pgwi_scope_hash reads only the hashes */
        *dst[i] = hp[i];
    }
    size_t marked = 0;
    uint32_t fp = pgwi_fp32(pgwi_scope_hash(&s));
    for (uint32_t i = mm_first(&x->m_scopes, fp); i != NONE; i = mm_next(&x->m_scopes, fp, i)) {
        uint32_t k = x->m_scopes.s[i].val;
        const pgwi_str *have[3] = {x->sc[k].s.project, x->sc[k].s.tenant, x->sc[k].s.database};
        bool eq = true;
        for (int j = 0; j < 3 && eq; j++) {
            if (!p[j] || !have[j])
                eq = !p[j] && !have[j];
            else
                eq = have[j]->hash == hs[j] && have[j]->len == ls[j] &&
                     memcmp(have[j]->s, p[j], ls[j]) == 0;
        }
        if (eq) {
            x->writes++;
            marked = reset_scope(x, k);
            break;
        }
    }
    if (out)
        *out = marked;
    return PGW_OK;
}

/* ------------------------------------------------------------------ */
/* the rerun protocol                                                  */

int pgw_index_pop_dirty(pgw_dirty *out, pgw_index *x)
{
    if (!out || !x)
        return PGW_EINVAL;
    uint32_t k = x->q_head;
    if (k == NONE)
        return PGW_ENOTFOUND;
    set_state(x, k, ST_RUN);
    out->runner = runner_id(x, k);
    out->reason = (pgw_reason)x->r[k].reason;
    return PGW_OK;
}

int pgw_index_begin(pgw_index *x, pgw_runner_id id, pgw_error *err)
{
    if (!x)
        return pgwi_error(err, PGW_EINVAL, "index_begin: index is NULL");
    uint32_t k = 0;
    int rc = runner_at(&k, x, id, "index_begin", err);
    if (rc != PGW_OK)
        return rc;
    if (x->r[k].state == ST_RUN || x->r[k].state == ST_RUN_DIRTY)
        return pgwi_error(err, PGW_ESTATE, "index_begin: runner %llu is already running",
                          (unsigned long long)id);
    set_state(x, k, ST_RUN);
    return PGW_OK;
}

static int ack_check(uint32_t *k, pgw_index *x, pgw_runner_id id, const char *fn,
                     pgw_error *err)
{
    if (!x)
        return pgwi_error(err, PGW_EINVAL, "%s: index is NULL", fn);
    int rc = runner_at(k, x, id, fn, err);
    if (rc != PGW_OK)
        return rc;
    if (x->r[*k].state != ST_RUN && x->r[*k].state != ST_RUN_DIRTY)
        return pgwi_error(err, PGW_ESTATE, "%s: runner %llu is not running (pop or begin it)",
                          fn, (unsigned long long)id);
    return PGW_OK;
}

/* Moves a runner's first-table posting into group ng of its bucket (room
 * reserved by the caller): from now on it tracks its result IDs. */
static void start_tracking(pgw_index *x, uint32_t k, uint16_t ng)
{
    irunner *r = &x->r[k];
    rblob *b = r->b;
    ipost *p = &RB_POST(b)[0];
    ibucket *bk = &x->bk[p->bucket];
    const pgwi_filter *f =
        p->filter != UINT16_MAX ? &RB_TABLES(b)[0].filters[p->filter] : NULL;
    igroup *g = &bk->g[p->group];
    for (uint32_t v = 0; f && v < f->n_vals; v++)
        mm_del(&x->m_vpost, vpost_key(p->bucket, p->group, f->vals[v]), k);
    uint32_t last = g->r[--g->n];
    if (last != k) { /* move the last runner into the hole */
        g->r[p->pos] = last;
        rblob *lb = x->r[last].b;
        uint32_t lnp = lb->undeclared ? 1 : lb->n_tables;
        for (uint32_t j = 0; j < lnp; j++)
            if (RB_POST(lb)[j].bucket == p->bucket && RB_POST(lb)[j].group == p->group)
                RB_POST(lb)[j].pos = p->pos;
    }
    if (g->n == 0)
        g->mmask = 0;
    p->group = ng;
    g = &bk->g[ng];
    p->pos = g->n;
    g->r[g->n++] = k;
    g->mmask |= RB_TABLES(b)[0].member_mask;
    for (uint32_t v = 0; f && v < f->n_vals; v++)
        mm_put(&x->m_vpost, vpost_key(p->bucket, ng, f->vals[v]), k);
    r->tracked = true;
}

/* ng: the tracking group a runner that did not track its result IDs moves
 * to, or UINT16_MAX. */
static void ack_finish(pgw_index *x, uint32_t k, uint32_t *rids, uint32_t n, bool known,
                       uint16_t ng)
{
    irunner *r = &x->r[k];
    idpost_del(x, k);
    if (ng != UINT16_MAX)
        start_tracking(x, k, ng);
    pgwi_free(r->rids);
    r->rids = rids;
    r->n_rids = n;
    r->rids_known = known;
    if (r->tracked && known)
        for (uint32_t i = 0; i < n; i++)
            mm_put(&x->m_idpost, idpost_key(RB_POST(r->b)[0].bucket, rids[i]), k);
    set_state(x, k, r->state == ST_RUN_DIRTY ? ST_DIRTY : ST_CLEAN);
}

int pgw_index_ack(pgw_index *x, pgw_runner_id id, const pgw_rowid *ids, size_t n_ids,
                  pgw_error *err)
{
    uint32_t k = 0;
    int rc = ack_check(&k, x, id, "index_ack", err);
    if (rc != PGW_OK)
        return rc;
    if (!ids && n_ids)
        return pgwi_error(err, PGW_EINVAL, "index_ack: ids is NULL with %zu entries", n_ids);
    if (n_ids > UINT32_MAX / 2)
        return pgwi_error(err, PGW_ELIMIT, "index_ack: too many IDs");
    for (size_t i = 0; i < n_ids; i++) {
        rc = pgwi_rowid_check(&ids[i], "index_ack: ids", i, err);
        if (rc != PGW_OK)
            return rc;
    }
    uint32_t *fps = NULL;
    uint32_t n = 0;
    if (n_ids) {
        fps = pgwi_calloc(n_ids, sizeof *fps);
        if (!fps)
            return pgwi_enomem(err);
        for (size_t i = 0; i < n_ids; i++)
            fps[i] = pgwi_rid_fp(ids[i].parts, ids[i].n_parts);
        n = pgwi_fps_sort_unique(fps, n_ids);
    }
    irunner *r = &x->r[k];
    uint16_t ng = UINT16_MAX;
    if (!r->tracked && !r->b->undeclared) {
        /* Its result IDs are known from now on, and pgw_decide uses them
         * (a row of the result refreshes whatever its values): its first
         * table's posting moves to a group that tracks them. */
        const ipost *p = &RB_POST(r->b)[0];
        const pgwi_tdep *t = &RB_TABLES(r->b)[0];
        const pgwi_filter *f = p->filter != UINT16_MAX ? &t->filters[p->filter] : NULL;
        rc = group_get(&ng, &x->bk[p->bucket], f ? f->col : NULL, t->offset > 0 ? 2 : 1);
        if (rc == PGW_OK && f)
            rc = mm_reserve(&x->m_vpost, f->n_vals);
        if (rc != PGW_OK)
            ng = UINT16_MAX;
    }
    if (rc == PGW_OK && (r->tracked || ng != UINT16_MAX))
        /* room for the new entries while the old ones are still in */
        rc = mm_reserve(&x->m_idpost, n);
    if (rc != PGW_OK) {
        pgwi_free(fps);
        return rc == PGW_ENOMEM ? pgwi_enomem(err)
                                : pgwi_error(err, rc, "index_ack: index limit reached");
    }
    ack_finish(x, k, fps, n, true, ng);
    return PGW_OK;
}

int pgw_index_ack_unknown(pgw_index *x, pgw_runner_id id, pgw_error *err)
{
    uint32_t k = 0;
    int rc = ack_check(&k, x, id, "index_ack_unknown", err);
    if (rc != PGW_OK)
        return rc;
    ack_finish(x, k, NULL, 0, false, UINT16_MAX);
    return PGW_OK;
}

/* ------------------------------------------------------------------ */
/* introspection                                                       */

int pgw_index_decide(pgw_verdict *out, const pgw_index *x, pgw_runner_id id,
                     const pgw_write *w, pgw_error *err)
{
    if (!out || !x || !w)
        return pgwi_error(err, PGW_EINVAL, "index_decide: %s is NULL",
                          !out ? "out" : !x ? "index" : "write");
    uint32_t k = 0;
    int rc = runner_at(&k, x, id, "index_decide", err);
    if (rc != PGW_OK)
        return rc;
    const irunner *r = &x->r[k];
    if (!pgwi_scope_eq(&x->sc[r->scope].s, &w->scope)) {
        out->refresh = false;
        out->reason = PGW_REASON_SCOPE_DISJOINT;
        return PGW_OK;
    }
    pgwi_dview dv = {RB_TABLES(r->b), r->b->n_tables, r->b->undeclared, r->rids_known, r->n_rids,
                     r->rids};
    *out = pgwi_decide_view(&dv, r->state == ST_RUN, w);
    return PGW_OK;
}

int pgw_index_runner(pgw_runner_info *out, const pgw_index *x, pgw_runner_id id,
                     pgw_error *err)
{
    if (!out || !x)
        return pgwi_error(err, PGW_EINVAL, "index_runner: %s is NULL", out ? "index" : "out");
    uint32_t k = 0;
    int rc = runner_at(&k, x, id, "index_runner", err);
    if (rc != PGW_OK)
        return rc;
    const irunner *r = &x->r[k];
    out->refs = r->refs;
    out->state = (pgw_runner_state)r->state;
    out->reason = (pgw_reason)r->reason;
    out->result_known = r->rids_known;
    out->n_result_ids = r->n_rids;
    out->query = r->b->query->s;
    return PGW_OK;
}

int pgw_index_stats_get(pgw_index_stats *out, const pgw_index *x)
{
    if (!out || !x || out->version != PGW_INDEX_STATS_VERSION)
        return PGW_EINVAL;
    out->subscriptions = x->subscriptions;
    out->runners = x->live_runners;
    out->scopes = x->live_scopes;
    out->buckets = x->live_buckets;
    out->dirty = x->n_dirty;
    out->running = x->n_running;
    out->writes = x->writes;
    out->visited = x->visited;
    out->marked = x->marked;
    out->coalesced = x->coalesced;
    return PGW_OK;
}

uint64_t pgw_index_reason_count(const pgw_index *x, pgw_reason reason)
{
    if (!x || (int)reason < 0 || (int)reason >= PGW_REASON_COUNT)
        return 0;
    return x->by_reason[reason];
}
