/*
 * lib/core/inval/index.c — the reverse index (index.h).
 *
 * Layout. A match on a large index costs its dependent cache misses (each
 * one a trip to memory, often with a TLB miss), so the data a write needs is
 * laid out in three levels, each fetched in one round of parallel loads:
 *
 *  1. The bucket map finds a (scope, table) bucket by content — the scope's
 *     hash and the table's names — in one lookup (no scope lookup first).
 *     Its 16-byte slots hold the address of the bucket block and the
 *     capacity of the block's table, so the block's first lines and the
 *     table slots a write's IDs probe are prefetched together.
 *  2. A bucket block is one allocation: the bucket's open-addressing table
 *     of value and result-ID postings lies below the header; the header,
 *     its groups and its postings follow. A posting holds the runner
 *     block's address, its group and the fingerprint of its value filter's
 *     value when it has one; a group of up to SCAN_MAX single-valued
 *     postings is value-probed by scanning them (no table entries), a
 *     larger one through the table. Table entries point at postings, so the
 *     runner they lead to is one load away.
 *  3. A runner block is one allocation: the runner's state and links, its
 *     compiled declaration (names interned and shared) and its result-ID
 *     fingerprints. The candidates found in level 2 are collected and their
 *     blocks prefetched before any is decided: the header and declaration
 *     only, as a match reads the result IDs where a rule asks and it has
 *     not recorded the written rows' hits (visit()).
 *
 * The scope of a bucket found by hash is verified (strings compared) after
 * its candidates are found and before any is decided, so that load overlaps
 * the others; a bucket that yields no candidate is not verified when no
 * other bucket has its fingerprint (the write then marks nothing either
 * way). Runners and buckets are also addressed by 32-bit indices
 * (vectors of block addresses; free slots tagged and chained), which the
 * lists, the postings' back references and the runner IDs use.
 *
 * The maps (names, scopes, runner identities, the bucket map and each
 * bucket's table) are rhmap.h's, instantiated twice: the multimap (mm_*)
 * over 8-byte slots {fingerprint, 32-bit value} for all but the bucket map
 * (bm_*), whose 16-byte slots also hold a block's address. They grow at a
 * load of 7/8 by 1.25× (bucket tables, which hold the result IDs, by
 * 1.125×: load in [0.78, 0.875]). Lookups compare fingerprints only;
 * callers verify content (a false fingerprint match costs one extra
 * comparison or one extra decision, never a wrong verdict).
 * SPDX-License-Identifier: MIT
 */
#include "inval_internal.h"
#include "pgwitness/index.h"
#include "xxhash_inline.h"

#include <stdalign.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* the maps                                                            */

/* The multimap: 8-byte slots {fingerprint, 32-bit value}. */
typedef struct mslot {
    uint32_t fp; /* 0: empty */
    uint32_t val;
} mslot;

#define RH_PREFIX mm
#define RH_SLOT mslot
#define RH_MAP mmap
#include "rhmap.h"

struct ibhdr;

/* The bucket map: 16-byte slots {fingerprint, table capacity, block}. */
typedef struct bslot {
    uint32_t fp;   /* 0: empty */
    uint32_t tcap; /* the block's table capacity (its table lies below b) */
    struct ibhdr *b;
} bslot;

#define RH_PREFIX bm
#define RH_SLOT bslot
#define RH_MAP bmap
#include "rhmap.h"

/* No index: the end of a list or of a map's iteration, no scope, ... */
#define NONE RH_NONE
#define ALIGN8(n) (((n) + 7) & ~(size_t)7)

/* The helpers that only prefetch are always inlined: GCC models
 * __builtin_prefetch as free of side effects, so a helper made of nothing
 * else that is not inlined early is found to do nothing and its calls are
 * deleted (GCC 12 did so to prefetch_bucket(): the bucket's lines were
 * never requested). */
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH_INLINE __attribute__((always_inline)) static inline
#else
#define PREFETCH_INLINE static inline
#endif

/* Starts loading a cache line: the loads of a level overlap instead of
 * being paid one after another. */
PREFETCH_INLINE void prefetch(const void *p)
{
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p);
#else
    (void)p;
#endif
}

/* Starts loading the slot a probe starts from, and the next line when the
 * slot is in the second half of its line: a probe scans on from its home
 * slot (4.5 slots on average at the tables' highest load). */
PREFETCH_INLINE void prefetch_probe(const void *home)
{
    prefetch(home);
    if (((uintptr_t)home & 63) >= 32)
        prefetch((const unsigned char *)home + 64);
}

/* The slot of multimap entry {fp, val}, or NONE. */
static uint32_t mm_find(const mmap *m, uint32_t fp, uint32_t val)
{
    uint32_t i;
    for (i = mm_first(m, fp); i != NONE; i = mm_next(m, fp, i))
        if (m->s[i].val == val)
            break;
    return i;
}

/* Points the entry {fp, from} at value `to` instead. */
static void mm_retarget(mmap *m, uint32_t fp, uint32_t from, uint32_t to)
{
    uint32_t i = mm_find(m, fp, from);
    if (i != NONE)
        m->s[i].val = to;
}

/* Removes the entry {fp, val}, if there is one. */
static void mm_del(mmap *m, uint32_t fp, uint32_t val)
{
    uint32_t i = mm_find(m, fp, val);
    if (i != NONE)
        mm_erase(m, i);
}

/* The slot holding block b (which must be in the map). */
static uint32_t bm_slot(const bmap *m, uint32_t fp, const struct ibhdr *b)
{
    uint32_t i;
    for (i = bm_first(m, fp); i != NONE; i = bm_next(m, fp, i))
        if (m->s[i].b == b)
            break;
    return i;
}

static void bm_del(bmap *m, uint32_t fp, const struct ibhdr *b)
{
    uint32_t i = bm_slot(m, fp, b);
    if (i != NONE)
        bm_erase(m, i);
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

/* One table a runner reads: where its posting is. */
typedef struct ipost {
    uint32_t bucket;
    uint32_t pos;    /* its entry in the bucket's postings */
    uint16_t group;
    uint16_t filter; /* the value filter of the group, or UINT16_MAX */
} ipost;

/* A runner block: this header, then pgwi_tdep tables[n_tables], ipost
 * post[max(n_tables, 1)], the entries' arrays and filter values, then at
 * rids_off room for cap_rids result-ID fingerprints (n_rids sorted unique). */
typedef struct irunner {
    const pgwi_str *query;   /* interned */
    uint32_t q_prev, q_next; /* dirty queue or its bucket's volatile list */
    uint32_t s_prev, s_next; /* its scope's runner list */
    uint32_t self, gen;      /* its slot in the runner vector; generation */
    uint32_t refs, scope, epoch;
    uint32_t n_rids, cap_rids, rids_off;
    uint16_t n_tables;
    uint8_t state, reason;
    bool rids_known, tracked, undeclared;
} irunner;

#define RN_TABLES(r) ((pgwi_tdep *)((unsigned char *)(r) + ALIGN8(sizeof(irunner))))
#define RN_POST(r) ((ipost *)(RN_TABLES(r) + (r)->n_tables))
#define RN_RIDS(r) ((uint32_t *)((unsigned char *)(r) + (r)->rids_off))

static inline uint32_t rn_nposts(const irunner *r)
{
    return r->undeclared ? 1 : r->n_tables;
}

/* Cache lines to prefetch for a runner block: its header and declaration
 * (it may straddle one more), not its result IDs, which a match reads only
 * when it has not recorded the hits of the write's rows (see visit()). */
static inline uint8_t rn_lines(const irunner *r)
{
    size_t n = ((size_t)r->rids_off + 63) / 64 + 1;
    return (uint8_t)(n > 10 ? 10 : n);
}

enum { ST_CLEAN = PGW_RUNNER_CLEAN, ST_DIRTY = PGW_RUNNER_DIRTY, ST_RUN = PGW_RUNNER_RUNNING,
       ST_RUN_DIRTY = PGW_RUNNER_RUNNING_DIRTY };

/* A group of a bucket: the postings with the same value column and kind. */
typedef struct igroup {
    const pgwi_str *vcol; /* NULL: no value index */
    uint64_t mmask;       /* union of member masks of tracked runners */
    uint32_t n;           /* postings */
    uint32_t nvals;       /* values of their value filters */
    uint8_t kind;   /* 0: untracked; 1: tracked, offset 0; 2: tracked, offset > 0 */
    bool hashed;    /* its values are in the bucket's table (else: scan) */
} igroup;

/* A group of at most this many postings, each with a single filter value,
 * is value-probed by scanning its postings in the bucket block. */
enum { SCAN_MAX = 32 };

/* A posting: one runner reading the bucket's table. */
typedef struct ipent {
    irunner *r;
    uint32_t vfp; /* fingerprint of its value filter's only value; 0: none */
    uint16_t group;
    uint8_t lines; /* rn_lines(r) */
    uint8_t pad;
} ipent;

/* A bucket block: mslot table[tcap] (value and result-ID postings, values
 * are posting indices), then this header, igroup g[capg], ipent
 * post[cap_post]. The block's address is the header's. */
typedef struct ibhdr {
    uint64_t shash;                 /* the scope's hash */
    const pgwi_scope *ss;           /* the scope's strings (owned by the scope) */
    const pgwi_str *schema, *table; /* interned; NULL for the undeclared bucket */
    uint32_t idx, scope;            /* its slot in the bucket vector; its scope */
    uint32_t n, cap_post;           /* postings (dense), capacity */
    uint32_t tcap, tn;              /* the table's capacity and entries */
    uint32_t vol_head;              /* volatile runners whose first table is this */
    uint16_t ng, capg;
} ibhdr;

#define BK_TAB(b) ((mslot *)(b) - (b)->tcap)
#define BK_GROUPS(b) ((igroup *)((unsigned char *)(b) + sizeof(ibhdr)))
#define BK_POSTS(b) ((ipent *)(BK_GROUPS(b) + (b)->capg))

static inline mmap bk_tab(const ibhdr *b)
{
    mmap m = {(mslot *)BK_TAB(b), b->tcap, b->tn};
    return m;
}

/* Table entries: a value posting's key is a hash of its group and value,
 * and its value is the posting's index with VBIT set; a result-ID posting's
 * key is a bijection of the row's fingerprint (never 0, as the fingerprint
 * is not), so a hit without VBIT is exact membership in the result. */
#define VBIT 0x80000000u

static inline uint32_t vkey_h(uint16_t group, uint64_t hash)
{
    return mix32(0x100000000ull | group, hash);
}

static inline uint32_t vkey(uint16_t group, const pgwi_str *v)
{
    return vkey_h(group, v->hash);
}

static inline uint32_t idkey(uint32_t fp)
{
    fp ^= fp >> 16;
    fp *= 0x85EBCA6Bu;
    fp ^= fp >> 13;
    fp *= 0xC2B2AE35u;
    fp ^= fp >> 16;
    return fp;
}

typedef struct iscope {
    pgwi_scope *sp; /* owned: the struct, then its strings, in one block */
    uint64_t hash;
    uint32_t n_runners;
    uint32_t all_head; /* all runners, via s_prev/s_next */
    uint32_t und;      /* the undeclared bucket, or NONE */
    uint32_t next_free;
    bool live;
} iscope;

struct pgw_index {
    uint64_t *r; /* runner blocks, or free slots (tagged) */
    uint32_t n_r, cap_r, free_r;
    iscope *sc;
    uint32_t n_sc, cap_sc, free_sc;
    uint64_t *bk; /* bucket blocks, or free slots (tagged) */
    uint32_t n_bk, cap_bk, free_bk;
    pgwi_str **names;
    uint32_t n_names, cap_names, free_name;
    mmap m_names, m_scopes, m_ident;
    bmap m_buckets;
    uint32_t q_head, q_tail; /* the dirty queue */
    irunner *q_tail_r;       /* the block of q_tail */
    uint32_t epoch;
    uint32_t n_und; /* undeclared buckets */
    uint64_t live_runners, live_scopes, live_buckets, subscriptions, n_dirty, n_running;
    uint64_t writes, visited, marked, coalesced;
    uint64_t by_reason[PGW_REASON_COUNT];
};

/* Vector slots: a block's address, or a free slot tagged with bit 0 that
 * chains the free slots and keeps the generation of its last runner. */
static inline bool slot_live(uint64_t v)
{
    return v != 0 && !(v & 1);
}

static inline uint64_t slot_of(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

static inline uint64_t slot_free(uint32_t next, uint32_t gen)
{
    return ((uint64_t)gen << 33) | ((uint64_t)next << 1) | 1;
}

static inline uint32_t slot_next(uint64_t v)
{
    return (uint32_t)(v >> 1);
}

static inline uint32_t slot_gen(uint64_t v)
{
    return (uint32_t)(v >> 33);
}

#define RUNNER(x, k) ((irunner *)(uintptr_t)(x)->r[k])
#define BUCKET(x, k) ((ibhdr *)(uintptr_t)(x)->bk[k])

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
    mm_put(&x->m_names, (mslot){pgwi_fp32(n->hash), slot});
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
            mm_erase(&x->m_names, i);
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
        if (pgwi_scope_eq(x->sc[k].sp, s))
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
    const pgwi_str *src[3] = {s->project, s->tenant, s->database};
    const pgwi_str *dst[3] = {NULL, NULL, NULL};
    size_t need = ALIGN8(sizeof(pgwi_scope));
    for (int i = 0; i < 3; i++)
        if (src[i])
            need += ALIGN8(sizeof(pgwi_str) + src[i]->len + 1);
    unsigned char *mem = pgwi_malloc(need);
    if (!mem)
        return PGW_ENOMEM;
    unsigned char *cur = mem + ALIGN8(sizeof(pgwi_scope));
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
    iscope sc;
    memset(&sc, 0, sizeof sc);
    sc.sp = (pgwi_scope *)mem;
    sc.sp->project = dst[0];
    sc.sp->tenant = dst[1];
    sc.sp->database = dst[2];
    sc.hash = h;
    sc.all_head = sc.und = NONE;
    sc.next_free = NONE;
    sc.live = true;
    if (k == x->free_sc)
        x->free_sc = x->sc[k].next_free;
    else
        x->n_sc++;
    x->sc[k] = sc;
    mm_put(&x->m_scopes, (mslot){pgwi_fp32(h), k});
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
    pgwi_free(s->sp);
    s->sp = NULL;
    s->live = false;
    s->next_free = x->free_sc;
    x->free_sc = k;
    x->live_scopes--;
}

/* ------------------------------------------------------------------ */
/* buckets                                                             */

static uint32_t bucket_fp(uint64_t shash, const pgwi_str *schema, const pgwi_str *table)
{
    uint64_t h = schema ? schema->hash * 31 + table->hash : 0;
    return mix32(shash, h);
}

static uint32_t bucket_find(const pgw_index *x, uint32_t scope, const pgwi_str *schema,
                            const pgwi_str *table)
{
    const bmap *m = &x->m_buckets;
    uint32_t fp = bucket_fp(x->sc[scope].hash, schema, table);
    for (uint32_t i = bm_first(m, fp); i != NONE; i = bm_next(m, fp, i)) {
        const ibhdr *b = m->s[i].b;
        if (b->scope == scope && (schema ? b->schema && pgwi_str_eq(b->schema, schema) &&
                                               pgwi_str_eq(b->table, table)
                                         : !b->schema))
            return b->idx;
    }
    return NONE;
}

/* Allocates a bucket block with these capacities (the table zeroed). */
static ibhdr *block_alloc(uint32_t tcap, uint32_t capg, uint32_t cap_post)
{
    uint64_t size = (uint64_t)tcap * sizeof(mslot) + sizeof(ibhdr) +
                    (uint64_t)capg * sizeof(igroup) + (uint64_t)cap_post * sizeof(ipent);
    if (size > SIZE_MAX)
        return NULL;
    unsigned char *p = pgwi_malloc((size_t)size);
    if (!p)
        return NULL;
    memset(p, 0, (size_t)tcap * sizeof(mslot));
    return (ibhdr *)(p + (size_t)tcap * sizeof(mslot));
}

/* Moves bucket b into a block with larger capacities: the map slot and the
 * vector follow; postings keep their indices. */
static int bucket_grow(pgw_index *x, ibhdr *b, uint32_t tcap, uint32_t capg, uint32_t cap_post)
{
    ibhdr *nb = block_alloc(tcap, capg, cap_post);
    if (!nb)
        return PGW_ENOMEM;
    *nb = *b;
    nb->tcap = tcap;
    nb->tn = 0;
    nb->capg = (uint16_t)capg;
    nb->cap_post = cap_post;
    if (b->ng)
        memcpy(BK_GROUPS(nb), BK_GROUPS(b), b->ng * sizeof(igroup));
    if (b->n)
        memcpy(BK_POSTS(nb), BK_POSTS(b), b->n * sizeof(ipent));
    mmap t = bk_tab(nb);
    mm_put_all(&t, BK_TAB(b), b->tcap);
    nb->tn = t.n;
    uint32_t fp = bucket_fp(b->shash, b->schema, b->table);
    bslot *s = &x->m_buckets.s[bm_slot(&x->m_buckets, fp, b)];
    s->b = nb;
    s->tcap = tcap;
    x->bk[b->idx] = slot_of(nb);
    pgwi_free(BK_TAB(b));
    return PGW_OK;
}

/* Makes room in bucket k for more groups, postings and table entries. */
static int bucket_reserve(pgw_index *x, uint32_t k, uint32_t add_groups, uint32_t add_posts,
                          uint64_t add_tab)
{
    ibhdr *b = BUCKET(x, k);
    uint32_t capg = b->capg, cap_post = b->cap_post;
    if (b->ng + add_groups > capg) { /* buckets have few groups: grow exactly */
        if (b->ng + add_groups > 65535)
            return PGW_ELIMIT;
        capg = b->ng + add_groups;
    }
    if ((uint64_t)b->n + add_posts > cap_post) { /* free entries are reused */
        uint64_t c = (uint64_t)cap_post + (cap_post / 4 ? cap_post / 4 : 1);
        if (c < (uint64_t)b->n + add_posts)
            c = (uint64_t)b->n + add_posts;
        if (c >= VBIT)
            return PGW_ELIMIT;
        cap_post = (uint32_t)c;
    }
    uint64_t tcap = b->tcap;
    if (add_tab) {
        /* 1.125×: these tables hold the result IDs, most of the memory */
        tcap = rh_grow(b->tcap, (uint64_t)b->tn + add_tab, 8);
        if (tcap == 0)
            return PGW_ELIMIT;
    }
    if (capg == b->capg && cap_post == b->cap_post && tcap == b->tcap)
        return PGW_OK;
    return bucket_grow(x, b, (uint32_t)tcap, capg, cap_post);
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
    int rc = bm_reserve(&x->m_buckets, 1);
    if (rc == PGW_OK)
        rc = vec_fit((void **)&x->bk, &x->cap_bk, sizeof *x->bk, k);
    if (rc != PGW_OK)
        return rc;
    ibhdr *b = block_alloc(0, 0, 0);
    if (!b)
        return PGW_ENOMEM;
    memset(b, 0, sizeof *b);
    b->shash = x->sc[scope].hash;
    b->ss = x->sc[scope].sp;
    b->schema = schema;
    b->table = table;
    b->idx = k;
    b->scope = scope;
    b->vol_head = NONE;
    if (k == x->free_bk)
        x->free_bk = slot_next(x->bk[k]);
    else
        x->n_bk++;
    x->bk[k] = slot_of(b);
    if (schema) {
        ((pgwi_str *)schema)->refs++;
        ((pgwi_str *)table)->refs++;
    } else {
        x->sc[scope].und = k;
        x->n_und++;
    }
    bslot s = {bucket_fp(b->shash, schema, table), 0, b};
    bm_put(&x->m_buckets, s);
    x->live_buckets++;
    *out = k;
    return PGW_OK;
}

static void bucket_free(pgw_index *x, ibhdr *b)
{
    if (b->schema) {
        name_put(x, b->schema);
        name_put(x, b->table);
    }
    pgwi_free(BK_TAB(b));
}

/* Frees a bucket without postings. */
static void bucket_gc(pgw_index *x, uint32_t k)
{
    if (!slot_live(x->bk[k]))
        return;
    ibhdr *b = BUCKET(x, k);
    if (b->n)
        return;
    bm_del(&x->m_buckets, bucket_fp(b->shash, b->schema, b->table), b);
    if (!b->schema) {
        if (x->sc[b->scope].und == k)
            x->sc[b->scope].und = NONE;
        x->n_und--;
    }
    bucket_free(x, b);
    x->bk[k] = slot_free(x->free_bk, 0);
    x->free_bk = k;
    x->live_buckets--;
}

static uint32_t group_find(const ibhdr *b, const pgwi_str *vcol, uint8_t kind)
{
    const igroup *g = BK_GROUPS(b);
    for (uint32_t i = 0; i < b->ng; i++)
        if (g[i].vcol == vcol && g[i].kind == kind)
            return i;
    return NONE;
}

/* ------------------------------------------------------------------ */
/* compiled declarations                                               */

static uint64_t hmix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h;
}

/* Identity of a subscription: scope, query and declaration (of a pgw_deps
 * at registration, of a runner block at unregistration: the same hash). */
static uint64_t ident_hash(uint64_t scope_hash, const pgwi_str *query, const pgwi_tdep *tables,
                           uint32_t n_tables)
{
    uint64_t h = hmix(scope_hash, query->hash);
    h = hmix(h, n_tables);
    for (uint32_t i = 0; i < n_tables; i++) {
        const pgwi_tdep *t = &tables[i];
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

static bool same_decl(const irunner *r, const pgw_deps *d)
{
    if (!pgwi_str_eq(r->query, d->query) || r->n_tables != d->n_tables)
        return false;
    for (uint32_t i = 0; i < d->n_tables; i++) {
        const pgwi_tdep *x = &RN_TABLES(r)[i], *y = &d->tables[i];
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

/* Releases the interned names a (possibly partial) runner block holds, and
 * the block. */
static void runner_free(pgw_index *x, irunner *r)
{
    if (!r)
        return;
    name_put(x, r->query);
    for (uint32_t i = 0; i < r->n_tables; i++) {
        pgwi_tdep *t = &RN_TABLES(r)[i];
        name_put(x, t->schema);
        name_put(x, t->table);
        for (uint32_t k = 0; k < t->n_cols; k++)
            name_put(x, t->cols[k]);
        for (uint32_t k = 0; k < t->n_sort; k++)
            name_put(x, t->sort[k]);
        for (uint32_t k = 0; k < t->n_filters; k++)
            name_put(x, t->filters[k].col);
    }
    pgwi_free(r);
}

/* Compiles deps into a runner block with its result IDs. Names are interned
 * as they are copied; on ENOMEM everything acquired is released. */
static int runner_new(irunner **out, pgw_index *x, const pgw_deps *d)
{
    size_t size = ALIGN8(sizeof(irunner)) + ALIGN8(d->n_tables * sizeof(pgwi_tdep)) +
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
    /* Result IDs of a first table that reads no column (an aggregate such
     * as count(*)) are never used: the runner's result is unknown. */
    const bool rids_known = d->rids_known && d->n_tables && pgwi_tdep_lists_rows(&d->tables[0]);
    uint32_t n_rids = rids_known ? d->n_fps : 0;
    if (size > UINT32_MAX || n_rids > (SIZE_MAX - size) / sizeof(uint32_t))
        return PGW_ELIMIT;
    size_t rids_off = size;
    size += (size_t)n_rids * sizeof(uint32_t);
    unsigned char *p = pgwi_malloc(size);
    if (!p)
        return PGW_ENOMEM;
    memset(p, 0, size);
    irunner *r = (irunner *)p;
    /* Entries not yet filled are zero: runner_free releases only what they
     * hold. */
    r->n_tables = (uint16_t)d->n_tables;
    r->undeclared = d->n_tables == 0;
    r->rids_off = (uint32_t)rids_off;
    r->cap_rids = r->n_rids = n_rids;
    r->rids_known = rids_known;
    if (n_rids)
        memcpy(RN_RIDS(r), d->fps, n_rids * sizeof(uint32_t));
    unsigned char *cur = p + ALIGN8(sizeof(irunner)) + ALIGN8(d->n_tables * sizeof(pgwi_tdep)) +
                         ALIGN8((d->n_tables ? d->n_tables : 1) * sizeof(ipost));
    if (!(r->query = name_get(x, d->query)))
        goto nomem;
    for (uint32_t i = 0; i < d->n_tables; i++) {
        const pgwi_tdep *t = &d->tables[i];
        pgwi_tdep *u = &RN_TABLES(r)[i];
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
    *out = r;
    return PGW_OK;
nomem:
    runner_free(x, r);
    return PGW_ENOMEM;
}

/* p rebased from the block at lo (size `size`) to the block at to. */
static const void *rebase(const void *p, uintptr_t lo, size_t size, uintptr_t to)
{
    uintptr_t a = (uintptr_t)p;
    return a >= lo && a - lo < size ? (const void *)(to + (a - lo)) : p;
}

/* Moves runner r (on no list) into block nr, allocated for cap result IDs:
 * copies its header and declaration, rebases the declaration's pointers
 * into itself, and redirects the runner vector and its postings. Returns
 * nr; r is freed. The result IDs are the caller's to fill. */
static irunner *runner_move(pgw_index *x, irunner *r, irunner *nr, uint32_t cap)
{
    size_t size = r->rids_off;
    memcpy(nr, r, size);
    uintptr_t lo = (uintptr_t)r, to = (uintptr_t)nr;
    for (uint32_t i = 0; i < nr->n_tables; i++) {
        pgwi_tdep *t = &RN_TABLES(nr)[i];
        t->cols = rebase(t->cols, lo, size, to);
        t->sort = rebase(t->sort, lo, size, to);
        t->filters = rebase(t->filters, lo, size, to);
        pgwi_filter *fs = (pgwi_filter *)t->filters;
        for (uint32_t k = 0; k < t->n_filters; k++) {
            fs[k].vals = rebase(fs[k].vals, lo, size, to);
            const pgwi_str **vals = (const pgwi_str **)fs[k].vals;
            for (uint32_t v = 0; vals && v < fs[k].n_vals; v++)
                vals[v] = rebase(vals[v], lo, size, to);
        }
    }
    nr->cap_rids = cap;
    nr->n_rids = 0;
    x->r[nr->self] = slot_of(nr);
    uint32_t np = rn_nposts(nr);
    for (uint32_t i = 0; i < np; i++) {
        const ipost *p = &RN_POST(nr)[i];
        ipent *e = &BK_POSTS(BUCKET(x, p->bucket))[p->pos];
        e->r = nr;
        e->lines = rn_lines(nr);
    }
    if (x->q_tail == nr->self)
        x->q_tail_r = nr;
    pgwi_free(r);
    return nr;
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

/* The head of the volatile list a runner belongs on: its first table's
 * bucket (the one whose groups assume its result IDs). */
static uint32_t *vol_head(pgw_index *x, const irunner *r)
{
    return &BUCKET(x, RN_POST(r)[0].bucket)->vol_head;
}

static void q_unlink(pgw_index *x, irunner *r, uint32_t *head, bool dirty_queue)
{
    if (r->q_prev != NONE)
        RUNNER(x, r->q_prev)->q_next = r->q_next;
    else
        *head = r->q_next;
    if (r->q_next != NONE) {
        RUNNER(x, r->q_next)->q_prev = r->q_prev;
    } else if (dirty_queue) {
        x->q_tail = r->q_prev;
        x->q_tail_r = r->q_prev != NONE ? RUNNER(x, r->q_prev) : NULL;
    }
    r->q_prev = r->q_next = NONE;
}

static void q_push_dirty(pgw_index *x, irunner *r)
{
    r->q_next = NONE;
    r->q_prev = x->q_tail;
    if (x->q_tail != NONE)
        x->q_tail_r->q_next = r->self;
    else
        x->q_head = r->self;
    x->q_tail = r->self;
    x->q_tail_r = r;
}

static void vol_push(pgw_index *x, irunner *r)
{
    uint32_t *head = vol_head(x, r);
    r->q_prev = NONE;
    r->q_next = *head;
    if (*head != NONE)
        RUNNER(x, *head)->q_prev = r->self;
    *head = r->self;
}

/* Whether a runner belongs on its volatile list: decided with unknown
 * result IDs although its groups assume known ones. */
static bool vol_member(const irunner *r)
{
    return r->state == ST_RUN || (r->state == ST_CLEAN && r->tracked && !r->rids_known);
}

/* Leaves whatever list the runner is on (by state). */
static void lists_leave(pgw_index *x, irunner *r)
{
    if (r->state == ST_DIRTY)
        q_unlink(x, r, &x->q_head, true);
    else if (vol_member(r))
        q_unlink(x, r, vol_head(x, r), false);
}

/* Enters the list its (new) state asks for. */
static void lists_enter(pgw_index *x, irunner *r)
{
    if (r->state == ST_DIRTY)
        q_push_dirty(x, r);
    else if (vol_member(r))
        vol_push(x, r);
}

/* Counts a state change in the dirty and running totals. */
static void count_state(pgw_index *x, uint8_t from, uint8_t to)
{
    if ((from == ST_DIRTY) != (to == ST_DIRTY))
        x->n_dirty += to == ST_DIRTY ? 1 : (uint64_t)-1;
    bool was_run = from == ST_RUN || from == ST_RUN_DIRTY;
    bool is_run = to == ST_RUN || to == ST_RUN_DIRTY;
    if (was_run != is_run)
        x->n_running += is_run ? 1 : (uint64_t)-1;
}

static void set_state(pgw_index *x, irunner *r, uint8_t st)
{
    count_state(x, r->state, st);
    lists_leave(x, r);
    r->state = st;
    lists_enter(x, r);
}

/* A hit: the runner must refresh. Returns 1 when newly marked. */
static size_t mark(pgw_index *x, irunner *r, pgw_reason why)
{
    if (r->state == ST_DIRTY || r->state == ST_RUN_DIRTY) {
        x->coalesced++;
        return 0;
    }
    r->reason = (uint8_t)why;
    set_state(x, r, r->state == ST_RUN ? ST_RUN_DIRTY : ST_DIRTY);
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
        if (slot_live(x->r[k]))
            runner_free(x, RUNNER(x, k));
    for (uint32_t k = 0; k < x->n_bk; k++)
        if (slot_live(x->bk[k]))
            bucket_free(x, BUCKET(x, k));
    for (uint32_t k = 0; k < x->n_sc; k++)
        if (x->sc[k].live)
            pgwi_free(x->sc[k].sp);
    pgwi_free(x->r);
    pgwi_free(x->sc);
    pgwi_free(x->bk);
    pgwi_free(x->names);
    pgwi_free(x->m_names.s);
    pgwi_free(x->m_scopes.s);
    pgwi_free(x->m_buckets.s);
    pgwi_free(x->m_ident.s);
    pgwi_free(x);
}

static int runner_at(uint32_t *out, const pgw_index *x, pgw_runner_id id, const char *fn,
                     pgw_error *err)
{
    uint32_t k = (uint32_t)id, gen = (uint32_t)(id >> 32);
    if (k >= x->n_r || !slot_live(x->r[k]) || RUNNER(x, k)->gen != gen)
        return pgwi_error(err, PGW_ENOTFOUND, "%s: runner %llu is not registered", fn,
                          (unsigned long long)id);
    *out = k;
    return PGW_OK;
}

static pgw_runner_id runner_id(const irunner *r)
{
    return ((uint64_t)r->gen << 32) | r->self;
}

/* ------------------------------------------------------------------ */
/* postings                                                            */

/* The fingerprint of a runner's identity in m_ident. */
static uint32_t runner_ident(const pgw_index *x, const irunner *r)
{
    return pgwi_fp32(ident_hash(x->sc[r->scope].hash, r->query, RN_TABLES(r), r->n_tables));
}

/* The filter of runner r's posting p (its i-th), or NULL. */
static const pgwi_filter *post_filter(const irunner *r, const ipost *p, uint32_t i)
{
    return p->filter != UINT16_MAX ? &RN_TABLES(r)[i].filters[p->filter] : NULL;
}

/* Puts (or removes) the value entries of bucket b's posting entry pos. */
static void post_values(ibhdr *b, uint32_t bk, uint32_t pos, bool put)
{
    const ipent *e = &BK_POSTS(b)[pos];
    const irunner *r = e->r;
    uint32_t np = rn_nposts(r);
    for (uint32_t i = 0; i < np; i++) {
        const ipost *p = &RN_POST(r)[i];
        if (p->bucket != bk)
            continue;
        const pgwi_filter *f = post_filter(r, p, i);
        mmap t = bk_tab(b);
        for (uint32_t v = 0; f && v < f->n_vals; v++) {
            if (put)
                mm_put(&t, (mslot){vkey(p->group, f->vals[v]), pos | VBIT});
            else
                mm_del(&t, vkey(p->group, f->vals[v]), pos | VBIT);
        }
        b->tn = t.n;
        return;
    }
}

/* Table entries a new posting needs: its values when its group is (or
 * becomes) hashed, with those of the group's other postings when it
 * becomes hashed. */
static uint64_t post_tab_need(const ibhdr *b, uint32_t gi, const pgwi_filter *f)
{
    if (!f)
        return 0;
    if (gi == NONE)
        return f->n_vals > 1 ? f->n_vals : 0;
    const igroup *g = &BK_GROUPS(b)[gi];
    if (g->hashed)
        return f->n_vals;
    if (g->n + 1 > SCAN_MAX || f->n_vals > 1)
        return (uint64_t)g->nvals + f->n_vals;
    return 0;
}

/* Finds or creates group (vcol, kind) of bucket k for a posting with value
 * filter f, with room for add_post more postings and for the table entries
 * the posting needs plus `tab` more. */
static int group_reserve(uint32_t *out, pgw_index *x, uint32_t k, const pgwi_str *vcol,
                         uint8_t kind, const pgwi_filter *f, uint32_t add_post, uint64_t tab)
{
    ibhdr *b = BUCKET(x, k);
    uint32_t gi = group_find(b, vcol, kind);
    int rc = bucket_reserve(x, k, gi == NONE ? 1 : 0, add_post, tab + post_tab_need(b, gi, f));
    if (rc != PGW_OK)
        return rc;
    b = BUCKET(x, k);
    if (gi == NONE) { /* an empty group stays if a later step fails */
        gi = b->ng++;
        igroup *g = &BK_GROUPS(b)[gi];
        memset(g, 0, sizeof *g);
        g->vcol = vcol;
        g->kind = kind;
    }
    *out = gi;
    return PGW_OK;
}

/* The kind of group a runner's first table is in while it tracks its
 * result IDs. */
static uint8_t tracked_kind(const irunner *r)
{
    return RN_TABLES(r)[0].offset > 0 ? 2 : 1;
}

/* Puts runner r's i-th posting (its entry in place) into its group p->group. */
static void group_join(ibhdr *b, irunner *r, uint32_t i)
{
    const ipost *p = &RN_POST(r)[i];
    igroup *g = &BK_GROUPS(b)[p->group];
    const pgwi_filter *f = post_filter(r, p, i);
    uint32_t nv = f ? f->n_vals : 0;
    ipent *e = &BK_POSTS(b)[p->pos];
    e->vfp = nv == 1 ? pgwi_fp32(f->vals[0]->hash) : 0;
    e->group = p->group;
    g->n++;
    g->nvals += nv;
    if (g->kind)
        g->mmask |= RN_TABLES(r)[i].member_mask;
    if (f && !g->hashed && (g->n > SCAN_MAX || nv > 1)) {
        g->hashed = true; /* index the values of the group's other postings too */
        for (uint32_t j = 0; j < b->n; j++)
            if (j != p->pos && BK_POSTS(b)[j].group == p->group)
                post_values(b, p->bucket, j, true);
    }
    if (f && g->hashed)
        post_values(b, p->bucket, p->pos, true);
}

/* Takes runner r's i-th posting out of its group (its entry stays). */
static void group_leave(ibhdr *b, irunner *r, uint32_t i)
{
    const ipost *p = &RN_POST(r)[i];
    igroup *g = &BK_GROUPS(b)[p->group];
    const pgwi_filter *f = post_filter(r, p, i);
    if (f && g->hashed)
        post_values(b, p->bucket, p->pos, false);
    g->n--;
    g->nvals -= f ? f->n_vals : 0;
    if (g->n == 0) {
        g->mmask = 0;
        g->hashed = false;
    }
}

static void idpost_put(pgw_index *x, irunner *r)
{
    if (!(r->tracked && r->rids_known))
        return;
    ibhdr *b = BUCKET(x, RN_POST(r)[0].bucket);
    mmap t = bk_tab(b);
    for (uint32_t i = 0; i < r->n_rids; i++)
        mm_put(&t, (mslot){idkey(RN_RIDS(r)[i]), RN_POST(r)[0].pos});
    b->tn = t.n;
}

/* Adds a runner's postings (room reserved by the caller). */
static void post_add(pgw_index *x, irunner *r)
{
    uint32_t np = rn_nposts(r);
    for (uint32_t i = 0; i < np; i++) {
        ipost *p = &RN_POST(r)[i];
        ibhdr *b = BUCKET(x, p->bucket);
        uint32_t pos = b->n++;
        ipent *e = &BK_POSTS(b)[pos];
        e->r = r;
        e->lines = rn_lines(r);
        e->pad = 0;
        p->pos = pos;
        group_join(b, r, i);
    }
    idpost_put(x, r);
    mm_put(&x->m_ident, (mslot){runner_ident(x, r), r->self});
}

static void idpost_del(pgw_index *x, irunner *r)
{
    if (!(r->tracked && r->rids_known))
        return;
    ibhdr *b = BUCKET(x, RN_POST(r)[0].bucket);
    mmap t = bk_tab(b);
    for (uint32_t i = 0; i < r->n_rids; i++)
        mm_del(&t, idkey(RN_RIDS(r)[i]), RN_POST(r)[0].pos);
    b->tn = t.n;
}

/* Bucket b's last posting moves to entry `to`: its runner and the table
 * entries that point at it follow. */
static void post_move_last(ibhdr *b, uint32_t bk, uint32_t to)
{
    uint32_t from = b->n - 1;
    irunner *r = BK_POSTS(b)[from].r;
    uint32_t np = rn_nposts(r);
    for (uint32_t i = 0; i < np; i++) {
        ipost *p = &RN_POST(r)[i];
        if (p->bucket != bk)
            continue;
        const pgwi_filter *f = post_filter(r, p, i);
        mmap t = bk_tab(b);
        if (f && BK_GROUPS(b)[p->group].hashed)
            for (uint32_t v = 0; v < f->n_vals; v++)
                mm_retarget(&t, vkey(p->group, f->vals[v]), from | VBIT, to | VBIT);
        if (i == 0 && r->tracked && r->rids_known)
            for (uint32_t k = 0; k < r->n_rids; k++)
                mm_retarget(&t, idkey(RN_RIDS(r)[k]), from, to);
        p->pos = to;
        break;
    }
    BK_POSTS(b)[to] = BK_POSTS(b)[from];
}

static void post_del(pgw_index *x, irunner *r)
{
    idpost_del(x, r);
    mm_del(&x->m_ident, runner_ident(x, r), r->self);
    uint32_t np = rn_nposts(r);
    for (uint32_t i = 0; i < np; i++) {
        const ipost *p = &RN_POST(r)[i];
        ibhdr *b = BUCKET(x, p->bucket);
        group_leave(b, r, i);
        if (p->pos != b->n - 1) /* postings stay dense */
            post_move_last(b, p->bucket, p->pos);
        b->n--;
    }
    for (uint32_t i = 0; i < np; i++)
        bucket_gc(x, RN_POST(r)[i].bucket);
}

int pgw_index_register(pgw_runner_id *out, pgw_index *x, const pgw_deps *d, pgw_error *err)
{
    if (!out || !x || !d)
        return pgwi_error(err, PGW_EINVAL, "index_register: %s is NULL",
                          !out ? "out" : !x ? "index" : "deps");
    uint64_t sh = pgwi_scope_hash(&d->scope);
    uint64_t ident = ident_hash(sh, d->query, d->tables, d->n_tables);
    uint32_t sk = scope_find(x, &d->scope, sh);
    if (sk != NONE) {
        uint32_t fp = pgwi_fp32(ident);
        for (uint32_t i = mm_first(&x->m_ident, fp); i != NONE;
             i = mm_next(&x->m_ident, fp, i)) {
            irunner *r = RUNNER(x, x->m_ident.s[i].val);
            if (r->scope == sk && same_decl(r, d)) {
                if (r->refs == UINT32_MAX)
                    return pgwi_error(err, PGW_ELIMIT, "index_register: too many references");
                r->refs++;
                x->subscriptions++;
                *out = runner_id(r);
                return PGW_OK;
            }
        }
    }
    /* A new runner: acquire everything, then commit without failing. */
    irunner *r = NULL;
    int rc = scope_get(&sk, x, &d->scope);
    if (rc != PGW_OK)
        return rc == PGW_ENOMEM ? pgwi_enomem(err)
                                : pgwi_error(err, rc, "index_register: too many scopes");
    rc = runner_new(&r, x, d);
    uint32_t k = x->free_r != NONE ? x->free_r : x->n_r;
    if (rc == PGW_OK)
        rc = vec_fit((void **)&x->r, &x->cap_r, sizeof *x->r, k);
    const uint32_t np = d->n_tables ? d->n_tables : 1;
    uint32_t got = 0; /* postings whose bucket was found or created */
    for (uint32_t i = 0; rc == PGW_OK && i < np; i++) {
        ipost *p = &RN_POST(r)[i];
        uint8_t kind = 0;
        const pgwi_str *vcol = NULL, *schema = NULL, *table = NULL;
        const pgwi_filter *f = NULL;
        p->filter = UINT16_MAX;
        if (d->n_tables) {
            const pgwi_tdep *t = &RN_TABLES(r)[i];
            schema = t->schema;
            table = t->table;
            p->filter = value_filter(t);
            if (p->filter != UINT16_MAX) {
                f = &t->filters[p->filter];
                vcol = f->col;
            }
            if (i == 0 && r->rids_known)
                kind = tracked_kind(r);
        }
        rc = bucket_get(&p->bucket, x, sk, schema, table);
        if (rc != PGW_OK)
            break;
        got = i + 1;
        for (uint32_t j = 0; j < i; j++)
            if (RN_POST(r)[j].bucket == p->bucket)
                rc = PGW_EINVAL; /* a table declared twice (builders refuse it) */
        uint32_t gi = 0;
        if (rc == PGW_OK)
            rc = group_reserve(&gi, x, p->bucket, vcol, kind, f, 1, kind ? d->n_fps : 0);
        p->group = (uint16_t)gi;
    }
    if (rc == PGW_OK)
        rc = mm_reserve(&x->m_ident, 1);
    if (rc != PGW_OK) {
        for (uint32_t i = 0; i < got; i++)
            bucket_gc(x, RN_POST(r)[i].bucket);
        runner_free(x, r);
        scope_gc(x, sk);
        if (rc == PGW_ENOMEM)
            return pgwi_enomem(err);
        return pgwi_error(err, rc, rc == PGW_EINVAL ? "index_register: a table is declared twice"
                                                    : "index_register: index limit reached");
    }
    uint32_t gen = 1;
    if (k == x->free_r) {
        gen = slot_gen(x->r[k]) + 1;
        if (gen > 0x7FFFFFFFu)
            gen = 1;
        x->free_r = slot_next(x->r[k]);
    } else {
        x->n_r++;
    }
    x->r[k] = slot_of(r);
    r->self = k;
    r->gen = gen;
    r->refs = 1;
    r->scope = sk;
    r->tracked = d->n_tables && r->rids_known;
    r->q_prev = r->q_next = NONE;
    r->state = ST_CLEAN;
    iscope *s = &x->sc[sk];
    r->s_prev = NONE;
    r->s_next = s->all_head;
    if (s->all_head != NONE)
        RUNNER(x, s->all_head)->s_prev = k;
    s->all_head = k;
    s->n_runners++;
    post_add(x, r);
    x->live_runners++;
    x->subscriptions++;
    *out = runner_id(r);
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
    irunner *r = RUNNER(x, k);
    x->subscriptions--;
    if (--r->refs)
        return PGW_OK;
    set_state(x, r, ST_CLEAN);
    lists_leave(x, r); /* a tracked runner without IDs sits on the volatile list */
    iscope *s = &x->sc[r->scope];
    if (r->s_prev != NONE)
        RUNNER(x, r->s_prev)->s_next = r->s_next;
    else
        s->all_head = r->s_next;
    if (r->s_next != NONE)
        RUNNER(x, r->s_next)->s_prev = r->s_prev;
    post_del(x, r);
    uint32_t sk = r->scope, gen = r->gen;
    runner_free(x, r);
    x->r[k] = slot_free(x->free_r, gen);
    x->free_r = k;
    s->n_runners--;
    scope_gc(x, sk);
    x->live_runners--;
    return PGW_OK;
}

/* ------------------------------------------------------------------ */
/* matching                                                            */

/* Candidates are collected (their blocks prefetched) and decided in
 * batches of up to NCAND. */
enum { NCAND = 64 };

/* Result-ID hits of a match kept for its candidates' decisions. */
enum { NHITS = 64 };

typedef struct mctx {
    pgw_index *x;
    const pgw_write *w;
    const ibhdr *verify; /* bucket found by hash whose scope is still to compare */
    bool wrong;          /* it belongs to another scope: decide nothing */
    uint32_t epoch;
    size_t marked;
    uint32_t n;
    irunner *cand[NCAND];
    bool defer;    /* collecting for pgw_index_match_batch: decide nothing yet */
    bool overflow; /* ... and more than NCAND candidates came: match it alone */
    /* When held is set, every (posting, row) pair of its table where a
     * runner's result holds one of the write's rows: hpos[i], hfp[i]. */
    const ibhdr *held;
    uint32_t nh;
    uint32_t hpos[NHITS], hfp[NHITS];
    pgwi_wmemo memo; /* the write's column lookups, shared by its decisions */
} mctx;

/* The fingerprints of the write's rows that runner r's result holds
 * (sorted, unique) from the recorded hits of its first table's posting. */
static uint32_t held_rows(uint32_t *out, const mctx *c, const irunner *r)
{
    uint32_t pos = RN_POST(r)[0].pos, n = 0;
    for (uint32_t h = 0; h < c->nh; h++) {
        if (c->hpos[h] != pos)
            continue;
        uint32_t fp = c->hfp[h], j = n;
        while (j > 0 && out[j - 1] > fp)
            j--;
        if (j > 0 && out[j - 1] == fp)
            continue; /* a row written twice */
        memmove(&out[j + 1], &out[j], (n - j) * sizeof *out);
        out[j] = fp;
        n++;
    }
    return n;
}

static void visit(mctx *c, irunner *r)
{
    pgw_index *x = c->x;
    if (r->epoch == c->epoch)
        return;
    r->epoch = c->epoch;
    if (r->state == ST_DIRTY || r->state == ST_RUN_DIRTY) {
        x->coalesced++;
        return;
    }
    pgwi_dview dv = {RN_TABLES(r), r->n_tables, r->undeclared, r->rids_known, r->n_rids,
                     RN_RIDS(r)};
    uint32_t held[NHITS];
    if (c->held && r->tracked && r->rids_known && RN_POST(r)[0].bucket == c->held->idx) {
        /* The rules ask only whether the write's rows are in the result:
         * its intersection with them answers alike, without searching it. */
        dv.n_rids = held_rows(held, c, r);
        dv.rids = held;
    }
    pgw_verdict v = pgwi_decide_view(&dv, r->state == ST_RUN, c->w, &c->memo);
    x->visited++;
    x->by_reason[v.reason]++;
    if (v.refresh)
        c->marked += mark(x, r, v.reason);
}

/* Decides the collected candidates, once the bucket's scope is verified. */
static void flush(mctx *c)
{
    if (c->verify) {
        c->wrong = !pgwi_scope_eq(c->verify->ss, &c->w->scope);
        c->verify = NULL;
    }
    uint32_t n = c->n;
    c->n = 0;
    for (uint32_t i = 0; i < n && !c->wrong; i++)
        visit(c, c->cand[i]);
}

/* Starts loading the strings of the scope still to verify, once the first
 * candidate's block is on its way: a write without candidates never needs
 * them (match_table), and a prefetch that misses the TLB holds up the
 * instructions behind it while the page is walked. */
PREFETCH_INLINE void prefetch_scope(const mctx *c)
{
    if (c->verify) {
        prefetch(c->verify->ss);
        prefetch((const unsigned char *)c->verify->ss + 64);
    }
}

static inline void add(mctx *c, const ipent *e)
{
    if (c->n == NCAND) {
        if (c->defer) {
            c->overflow = true;
            return;
        }
        flush(c);
    }
    const unsigned char *p = (const unsigned char *)e->r;
    for (uint32_t l = 0; l < e->lines; l++)
        prefetch(p + 64 * l);
    if (c->n == 0)
        prefetch_scope(c);
    c->cand[c->n++] = e->r;
}

/* Adds every posting of the groups in mask (bit g: group g < 64), or of
 * group gi when mask is 0. */
static void scan(mctx *c, const ibhdr *b, uint64_t mask, uint32_t gi)
{
    const ipent *e = BK_POSTS(b);
    for (uint32_t j = 0; j < b->n; j++) {
        if (mask ? e[j].group < 64 && (mask >> e[j].group & 1) : e[j].group == gi)
            add(c, &e[j]);
    }
}

/* Probes the equality index of group gi. Returns false (and probes
 * nothing) when some row lacks a value the rules would need.
 *
 * The old values are not probed in a group that tracks results with no
 * offset (kind 1) when an update keeping row identity, with its changed
 * columns known, changes the group's value column: a runner whose value
 * none of the new rows has is then decided by rule 13 for every row outside
 * its result (the column is a filter column of every runner in the group,
 * so a filter column changed, and the new row is not relevant), and the
 * rows in its result are found through the result-ID index. */
static bool probe_values(mctx *c, const ibhdr *b, uint32_t gi, const igroup *g)
{
    const pgw_write *w = c->w;
    int32_t vc = pgwi_write_vcol(w, g->vcol);
    if (vc < 0)
        return false;
    bool changed = !pgwi_cols_ok(w) || pgwi_write_changed(w, g->vcol);
    const int side0 =
        g->kind == 1 && pgwi_same_row(w) && pgwi_cols_ok(w) && changed ? PGW_SIDE_NEW : 0;
    /* The hashes of the rows' values, all known (NULL matches no value),
     * once each: the probes below compare only hashes and fingerprints of
     * them, so values with one hash probe alike and one probe serves them. */
    enum { NV = 64 };
    uint64_t hs[NV];
    uint32_t nv = 0;
    uint64_t seen = 0; /* a bit per hash in hs (a Bloom mask gating the search) */
    bool more = false;
    for (uint32_t i = 0; i < w->n_ids; i++)
        for (int side = side0; side < 2; side++) {
            if (pgwi_row_exists(w, i, side) == PGWI_NO)
                continue;
            const pgwi_str *v = pgwi_row_value(w, i, side, vc, changed);
            if (!v)
                return false;
            if (v == &pgwi_sqlnull)
                continue;
            const uint64_t h = v->hash, bit = (uint64_t)1 << (h >> 58);
            bool dup = false;
            for (uint32_t k = 0; (seen & bit) && k < nv && !dup; k++)
                dup = hs[k] == h;
            if (dup)
                continue;
            if (nv < NV) {
                hs[nv++] = h;
                seen |= bit;
            } else {
                more = true;
            }
        }
    const ipent *e = BK_POSTS(b);
    if (!g->hashed) {
        /* At most SCAN_MAX postings, each with one value (or none): compare
         * their fingerprints with the values'. */
        uint32_t fps[NV];
        uint64_t bloom = 0;
        for (uint32_t k = 0; k < nv; k++) {
            fps[k] = pgwi_fp32(hs[k]);
            bloom |= (uint64_t)1 << (fps[k] & 63);
        }
        for (uint32_t j = 0; j < b->n; j++) {
            if (e[j].group != gi || !e[j].vfp ||
                (!more && !(bloom >> (e[j].vfp & 63) & 1)))
                continue;
            bool match = false;
            for (uint32_t k = 0; k < nv && !match; k++)
                match = fps[k] == e[j].vfp;
            for (uint32_t i = 0; more && !match && i < w->n_ids; i++)
                for (int side = side0; side < 2 && !match; side++) {
                    if (pgwi_row_exists(w, i, side) == PGWI_NO)
                        continue;
                    const pgwi_str *v = pgwi_row_value(w, i, side, vc, changed);
                    match = v != &pgwi_sqlnull && pgwi_fp32(v->hash) == e[j].vfp;
                }
            if (match)
                add(c, &e[j]);
        }
        return true;
    }
    const mmap t = bk_tab(b);
    for (uint32_t k = 0; k < nv; k++)
        prefetch(&t.s[rh_home(t.cap, vkey_h((uint16_t)gi, hs[k]))]);
    for (uint32_t k = 0; k < nv; k++) {
        uint32_t fp = vkey_h((uint16_t)gi, hs[k]);
        for (uint32_t s = mm_first(&t, fp); s != NONE; s = mm_next(&t, fp, s))
            if (t.s[s].val & VBIT)
                add(c, &e[t.s[s].val & ~VBIT]);
    }
    for (uint32_t i = 0; more && i < w->n_ids; i++) /* beyond NV values: each row */
        for (int side = side0; side < 2; side++) {
            if (pgwi_row_exists(w, i, side) == PGWI_NO)
                continue;
            const pgwi_str *v = pgwi_row_value(w, i, side, vc, changed);
            if (v == &pgwi_sqlnull)
                continue;
            uint32_t fp = vkey((uint16_t)gi, v);
            for (uint32_t s = mm_first(&t, fp); s != NONE; s = mm_next(&t, fp, s))
                if (t.s[s].val & VBIT)
                    add(c, &e[t.s[s].val & ~VBIT]);
        }
    return true;
}

/* Whether a write's result-ID probes may be needed (their slots are then
 * prefetched with the bucket block). */
static bool probes_ids(const pgw_write *w)
{
    return (w->op == PGW_OP_UPDATE || w->op == PGW_OP_DELETE) && pgwi_ids_ok(w);
}

static void match_bucket(mctx *c, const ibhdr *b)
{
    const pgw_write *w = c->w;
    const bool rows = w->op == PGW_OP_INSERT || w->op == PGW_OP_UPDATE ||
                      w->op == PGW_OP_DELETE;
    const bool known = rows && pgwi_ids_ok(w);
    const igroup *gs = BK_GROUPS(b);
    bool probe_ids = false;
    uint64_t scan_mask = 0;
    for (uint32_t gi = 0; gi < b->ng; gi++) {
        const igroup *g = &gs[gi];
        if (g->n == 0)
            continue;
        if (known) {
            bool id_prunable = false;
            if (g->kind && w->op == PGW_OP_DELETE && g->kind == 1)
                id_prunable = true; /* rule 19: rows outside R, offset 0 */
            if (g->kind && pgwi_same_row(w) && pgwi_cols_ok(w) && !(w->cols_mask & g->mmask))
                id_prunable = true; /* rule 12: no filter or sort column changed */
            if (id_prunable) {
                probe_ids = true;
                continue;
            }
            if (g->vcol && probe_values(c, b, gi, g)) {
                if (g->kind)
                    probe_ids = true; /* rows in R are visited whatever their values */
                continue;
            }
        }
        if (known && g->kind)
            probe_ids = true; /* its runners then decide on the recorded hits */
        if (gi < 64)
            scan_mask |= (uint64_t)1 << gi;
        else
            scan(c, b, 0, gi);
    }
    if (scan_mask)
        scan(c, b, scan_mask, 0);
    if (probe_ids && probes_ids(w)) {
        /* The runners holding the rows; every hit is recorded (when they
         * fit), so the candidates' results are known on the write's rows. */
        const mmap t = bk_tab(b);
        const ipent *e = BK_POSTS(b);
        bool all = true;
        c->nh = 0;
        for (uint32_t i = 0; i < w->n_ids && b->tn; i++) {
            uint32_t fp = w->ids[i].fp, key = idkey(fp);
            for (uint32_t s = mm_first(&t, key); s != NONE; s = mm_next(&t, key, s)) {
                uint32_t pos = t.s[s].val;
                if (pos & VBIT)
                    continue;
                if (c->nh < NHITS) {
                    c->hpos[c->nh] = pos;
                    c->hfp[c->nh++] = fp;
                } else {
                    all = false;
                }
                add(c, &e[pos]);
            }
        }
        c->held = all ? b : NULL;
    }
}

/* Visits the runners on a bucket's volatile list. */
static void match_volatile(mctx *c, const ibhdr *b)
{
    for (uint32_t k = b->vol_head; k != NONE;) {
        irunner *r = RUNNER(c->x, k);
        k = r->q_next; /* visit may unlink r */
        visit(c, r);
    }
}

/* Level 2 in one round: the header, groups and first postings of the
 * bucket of map slot s, and, when the write's match may probe them
 * (probes_ids()), the table slots of its IDs. */
PREFETCH_INLINE void prefetch_bucket(const bslot *s, const pgw_write *w, bool ids)
{
    const ibhdr *b = s->b;
    for (uint32_t l = 0; l < 6; l++)
        prefetch((const unsigned char *)b + 64 * l);
    if (ids && s->tcap) {
        const mslot *tab = (const mslot *)b - s->tcap;
        for (uint32_t j = 0; j < w->n_ids && j < 64; j++)
            prefetch_probe(&tab[rh_home(s->tcap, idkey(w->ids[j].fp))]);
    }
}

/* Whether bucket b, found by hash, is the write's: its scope hash, schema
 * and table, and its scope when known (sk; NONE: its strings are compared
 * later, see collect()). */
static inline bool bucket_is(const ibhdr *b, const pgw_write *w, uint64_t sh, uint32_t sk)
{
    return b->shash == sh && pgwi_str_eq(b->schema, w->schema) &&
           pgwi_str_eq(b->table, w->table) && (sk == NONE || b->scope == sk);
}

/* Collects the write's candidates in bucket b, their runners requested. */
static void collect(mctx *c, const ibhdr *b, uint32_t sk)
{
    /* The scope's strings are compared before deciding (sk == NONE), and
     * loaded once there is something to decide. */
    c->verify = sk == NONE ? b : NULL;
    c->wrong = false;
    c->memo.schema = b->schema; /* equal to the write's: found by address */
    c->memo.table = b->table;
    c->held = NULL;
    if (b->vol_head != NONE)
        prefetch_scope(c);
    match_bucket(c, b);
}

/* Whether the match of bucket b (the write's bucket map slot i) ends with
 * nothing to decide and no other bucket this write could be for: whichever
 * scope b is, the write then marks nothing (its scope's strings stay
 * unread). */
static inline bool nothing_to_decide(const mctx *c, const ibhdr *b, uint32_t fp, uint32_t i)
{
    return c->verify && c->n == 0 && b->vol_head == NONE &&
           bm_next(&c->x->m_buckets, fp, i) == NONE;
}

/* Decides what collect() found in bucket b (map slot i), then b's volatile
 * runners. Returns false when b turns out to be another scope's with the
 * same hash (nothing decided). */
static bool finish(mctx *c, const ibhdr *b, uint32_t fp, uint32_t i)
{
    if (nothing_to_decide(c, b, fp, i))
        return true;
    flush(c);
    if (c->wrong)
        return false;
    match_volatile(c, b);
    return true;
}

/* Finds the write's bucket and matches it. sk: the write's scope when
 * already known (then compared by index), else NONE (then its strings are
 * compared once the candidates are found). */
static void match_table(mctx *c, uint64_t sh, uint32_t sk)
{
    const pgw_write *w = c->w;
    const bmap *m = &c->x->m_buckets;
    uint32_t fp = bucket_fp(sh, w->schema, w->table);
    const bool ids = probes_ids(w);
    if (m->n)
        prefetch_probe(&m->s[rh_home(m->cap, fp)]);
    for (uint32_t i = bm_first(m, fp); i != NONE; i = bm_next(m, fp, i)) {
        const bslot *s = &m->s[i];
        const ibhdr *b = s->b;
        prefetch_bucket(s, w, ids);
        if (!bucket_is(b, w, sh, sk))
            continue;
        collect(c, b, sk);
        if (finish(c, b, fp, i))
            return;
        /* another scope with the same hash: on to the next bucket */
    }
}

static size_t reset_scope(pgw_index *x, uint32_t sk)
{
    size_t n = 0;
    for (uint32_t k = x->sc[sk].all_head; k != NONE;) {
        irunner *r = RUNNER(x, k);
        k = r->s_next;
        x->by_reason[PGW_REASON_SCOPE_RESET]++;
        n += mark(x, r, PGW_REASON_SCOPE_RESET);
    }
    return n;
}

static void next_epoch(pgw_index *x)
{
    if (++x->epoch == 0) {
        for (uint32_t k = 0; k < x->n_r; k++)
            if (slot_live(x->r[k]))
                RUNNER(x, k)->epoch = 0;
        x->epoch = 1;
    }
}

static void mctx_init(mctx *c, pgw_index *x, const pgw_write *w)
{
    c->x = x;
    c->w = w;
    c->verify = NULL;
    c->wrong = false;
    c->epoch = 0;
    c->marked = 0;
    c->n = 0;
    c->defer = c->overflow = false;
    c->held = NULL;
    c->nh = 0;
    pgwi_wmemo_init(&c->memo, w);
}

/* pgw_index_match() of a valid write; sh: the hash of its scope, or 0 to
 * compute it here. Returns the runners newly marked. */
static size_t match_write(pgw_index *x, const pgw_write *w, uint64_t sh)
{
    x->writes++;
    size_t marked = 0;
    if (x->m_scopes.n) {
        if (sh == 0)
            sh = pgwi_scope_hash(&w->scope);
        uint32_t sk = NONE;
        if (w->op == PGW_OP_RESET || x->n_und) /* else the bucket map alone */
            sk = scope_find(x, &w->scope, sh);
        if (w->op == PGW_OP_RESET) {
            if (sk != NONE)
                marked = reset_scope(x, sk);
        } else if (sk != NONE || !x->n_und) {
            next_epoch(x);
            mctx c;
            mctx_init(&c, x, w);
            c.epoch = x->epoch;
            if (sk != NONE && x->sc[sk].und != NONE) {
                const ibhdr *u = BUCKET(x, x->sc[sk].und);
                scan(&c, u, ~(uint64_t)0, 0);
                flush(&c);
            }
            if (w->schema)
                match_table(&c, sh, sk);
            marked = c.marked;
        }
    }
    return marked;
}

int pgw_index_match(size_t *out, pgw_index *x, const pgw_write *w, pgw_error *err)
{
    if (!x || !w)
        return pgwi_error(err, PGW_EINVAL, "index_match: %s is NULL", x ? "write" : "index");
    size_t marked = match_write(x, w, 0);
    if (out)
        *out = marked;
    return PGW_OK;
}

int pgw_index_match_batch(size_t *out, pgw_index *x, pgw_write *const *ws, size_t n,
                          pgw_error *err)
{
    if (!x)
        return pgwi_error(err, PGW_EINVAL, "index_match_batch: index is NULL");
    if (n && !ws)
        return pgwi_error(err, PGW_EINVAL, "index_match_batch: writes is NULL (n = %zu)", n);
    for (size_t i = 0; i < n; i++)
        if (!ws[i])
            return pgwi_error(err, PGW_EINVAL, "index_match_batch: writes[%zu] is NULL", i);
    /* Groups of GROUP writes: each level of a match (index.c's top) is
     * taken for all of them before the next, then each write is decided
     * in order. GROUP bounds the loads in flight (each write starts a few
     * dozen) and the stack (a match state per write). */
    enum { GROUP = 8 };
    const bmap *m = &x->m_buckets;
    for (size_t g = 0; g < n; g += GROUP) {
        const size_t k = n - g < GROUP ? n - g : GROUP;
        uint64_t sh[GROUP];
        uint32_t fp[GROUP], slot[GROUP];
        mctx cs[GROUP];
        for (size_t i = 0; i < k; i++) { /* level 1: the bucket map slots */
            const pgw_write *w = ws[g + i];
            sh[i] = x->m_scopes.n ? pgwi_scope_hash(&w->scope) : 0;
            fp[i] = 0; /* no bucket to find (bucket_fp() is never 0) */
            if (m->n && w->schema && w->op != PGW_OP_RESET) {
                fp[i] = bucket_fp(sh[i], w->schema, w->table);
                prefetch_probe(&m->s[rh_home(m->cap, fp[i])]);
            }
        }
        for (size_t i = 0; i < k; i++) { /* level 2: their buckets */
            uint32_t j = fp[i] ? bm_first(m, fp[i]) : NONE;
            if (j != NONE)
                prefetch_bucket(&m->s[j], ws[g + i], probes_ids(ws[g + i]));
        }
        /* Level 3: each write's candidates are collected (their runners
         * requested) before the first is decided. Collecting reads only
         * the buckets' structure, which deciding and marking leave as it
         * is, so it may run ahead of the earlier writes' decisions. A
         * write whose match takes another path (undeclared subscriptions
         * in any scope, a reset, no bucket, more than NCAND candidates) is
         * matched whole in its turn instead. */
        const bool simple = x->m_scopes.n && !x->n_und;
        for (size_t i = 0; i < k; i++) {
            slot[i] = NONE;
            if (!fp[i] || !simple)
                continue;
            mctx *c = &cs[i];
            mctx_init(c, x, ws[g + i]);
            c->defer = true;
            uint32_t j = bm_first(m, fp[i]);
            while (j != NONE && !bucket_is(m->s[j].b, ws[g + i], sh[i], NONE))
                j = bm_next(m, fp[i], j);
            if (j == NONE)
                continue;
            collect(c, m->s[j].b, NONE);
            if (!c->overflow)
                slot[i] = j;
        }
        for (size_t i = 0; i < k; i++) { /* in order: decide and mark */
            mctx *c = &cs[i];
            const ibhdr *b = slot[i] != NONE ? m->s[slot[i]].b : NULL;
            size_t marked;
            /* Unless there is nothing to decide, the bucket's scope is
             * compared here, as flush() would, and not again; if it is
             * another scope's, the whole match goes on past it. */
            if (b && !nothing_to_decide(c, b, fp[i], slot[i])) {
                if (pgwi_scope_eq(b->ss, &ws[g + i]->scope))
                    c->verify = NULL;
                else
                    b = NULL;
            }
            if (b) {
                x->writes++;
                next_epoch(x);
                c->epoch = x->epoch;
                finish(c, b, fp[i], slot[i]);
                marked = c->marked;
            } else {
                marked = match_write(x, ws[g + i], sh[i]);
            }
            if (out)
                out[g + i] = marked;
        }
    }
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
        const pgwi_scope *sp = x->sc[k].sp;
        const pgwi_str *have[3] = {sp->project, sp->tenant, sp->database};
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
    irunner *r = RUNNER(x, k);
    set_state(x, r, ST_RUN);
    out->runner = runner_id(r);
    out->reason = (pgw_reason)r->reason;
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
    irunner *r = RUNNER(x, k);
    if (r->state == ST_RUN || r->state == ST_RUN_DIRTY)
        return pgwi_error(err, PGW_ESTATE, "index_begin: runner %llu is already running",
                          (unsigned long long)id);
    set_state(x, r, ST_RUN);
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
    const irunner *r = RUNNER(x, *k);
    if (r->state != ST_RUN && r->state != ST_RUN_DIRTY)
        return pgwi_error(err, PGW_ESTATE, "%s: runner %llu is not running (pop or begin it)",
                          fn, (unsigned long long)id);
    return PGW_OK;
}

/* Ends a rerun with n result IDs (known) or none (unknown). nr: a block to
 * move the runner into when its room for result IDs is short (else NULL);
 * regroup: the tracking group its first table's posting moves to (else
 * NONE); the room in the bucket is reserved. Cannot fail. */
static void ack_finish(pgw_index *x, irunner *r, const uint32_t *fps, uint32_t n, bool known,
                       irunner *nr, uint32_t regroup)
{
    uint8_t st = r->state == ST_RUN_DIRTY ? ST_DIRTY : ST_CLEAN;
    idpost_del(x, r);
    lists_leave(x, r); /* on no list while it moves */
    if (nr)
        r = runner_move(x, r, nr, n);
    if (regroup != NONE) {
        ibhdr *b = BUCKET(x, RN_POST(r)[0].bucket);
        group_leave(b, r, 0);
        RN_POST(r)[0].group = (uint16_t)regroup;
        group_join(b, r, 0);
        r->tracked = true;
    }
    if (n)
        memcpy(RN_RIDS(r), fps, n * sizeof *fps);
    r->n_rids = n;
    r->rids_known = known;
    idpost_put(x, r);
    count_state(x, r->state, st);
    r->state = st;
    lists_enter(x, r);
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
    irunner *r = RUNNER(x, k), *nr = NULL;
    if (r->n_tables && !pgwi_tdep_lists_rows(&RN_TABLES(r)[0])) {
        /* An aggregate's result lists no rows: its IDs are not used. */
        ack_finish(x, r, NULL, 0, false, NULL, NONE);
        return PGW_OK;
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
    uint32_t regroup = NONE;
    if (r->tracked) { /* room for the new entries while the old ones are still in */
        rc = bucket_reserve(x, RN_POST(r)[0].bucket, 0, 0, n);
    } else if (r->n_tables) {
        /* Its result IDs are known from now on, and pgw_decide uses them:
         * its first table's posting moves to a group that tracks them. */
        const pgwi_filter *f = post_filter(r, &RN_POST(r)[0], 0);
        rc = group_reserve(&regroup, x, RN_POST(r)[0].bucket, f ? f->col : NULL,
                           tracked_kind(r), f, 0, n);
    }
    if (rc == PGW_OK && n > r->cap_rids) {
        if ((size_t)n > (SIZE_MAX - r->rids_off) / sizeof *fps)
            rc = PGW_ELIMIT;
        else if (!(nr = pgwi_malloc(r->rids_off + (size_t)n * sizeof *fps)))
            rc = PGW_ENOMEM;
    }
    if (rc != PGW_OK) {
        pgwi_free(fps);
        return rc == PGW_ENOMEM ? pgwi_enomem(err)
                                : pgwi_error(err, rc, "index_ack: index limit reached");
    }
    ack_finish(x, r, fps, n, true, nr, regroup);
    pgwi_free(fps);
    return PGW_OK;
}

int pgw_index_ack_unknown(pgw_index *x, pgw_runner_id id, pgw_error *err)
{
    uint32_t k = 0;
    int rc = ack_check(&k, x, id, "index_ack_unknown", err);
    if (rc != PGW_OK)
        return rc;
    ack_finish(x, RUNNER(x, k), NULL, 0, false, NULL, NONE);
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
    const irunner *r = RUNNER(x, k);
    if (!pgwi_scope_eq(x->sc[r->scope].sp, &w->scope)) {
        out->refresh = false;
        out->reason = PGW_REASON_SCOPE_DISJOINT;
        return PGW_OK;
    }
    pgwi_dview dv = {RN_TABLES(r), r->n_tables, r->undeclared, r->rids_known, r->n_rids,
                     RN_RIDS(r)};
    pgwi_wmemo m;
    pgwi_wmemo_init(&m, w);
    *out = pgwi_decide_view(&dv, r->state == ST_RUN, w, &m);
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
    const irunner *r = RUNNER(x, k);
    out->refs = r->refs;
    out->state = (pgw_runner_state)r->state;
    out->reason = (pgw_reason)r->reason;
    out->result_known = r->rids_known;
    out->n_result_ids = r->n_rids;
    out->query = r->query->s;
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

