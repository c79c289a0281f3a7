/*
 * lib/core/inval/index_internal.h — the reverse index's structures (index.h),
 * shared by index_build.c (building, registration), index_match.c
 * (matching) and index_rerun.c (runner states, the rerun protocol and
 * introspection).
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
 * Not installed. SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_INDEX_INTERNAL_H
#define PGWITNESS_INDEX_INTERNAL_H

#include "inval_internal.h"
#include "pgwitness/index.h"

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
    /* one byte of flags, so that the header stays one cache line */
    bool rids_known : 1, tracked : 1, undeclared : 1;
    bool timed : 1;        /* time-dependent: its block holds an itime (RN_TIME) */
    bool bounds_full : 1;  /* its window bounds (*RN_BOUNDS) say the window is full */
    bool window_empty : 1; /* its first table's window holds no row */
    unsigned result_kind : 2; /* pgw_result_kind */
} irunner;

#define RN_TABLES(r) ((pgwi_tdep *)((unsigned char *)(r) + ALIGN8(sizeof(irunner))))
#define RN_POST(r) ((ipost *)(RN_TABLES(r) + (r)->n_tables))
#define RN_RIDS(r) ((uint32_t *)((unsigned char *)(r) + (r)->rids_off))

static inline uint32_t rn_nposts(const irunner *r)
{
    return r->undeclared ? 1 : r->n_tables;
}


/* The clock's record of a time-dependent runner (index_clock.c), in its
 * block after its postings (runner_new() makes room when r->timed). The
 * runners waiting for their interval (CLEAN or RUNNING, not yet marked) are
 * on one list, by slot, in the order of their base times: a base is always
 * the index's latest time when it is set, and that time never goes back, so
 * the list's head is the next due. */
typedef struct itime {
    int64_t base;        /* ms: the index's time when its result was taken; -1: unknown */
    uint32_t prev, next; /* the clock's list, by runner slot */
    bool linked;         /* on the list */
} itime;

/* The window bounds of its first table: pgwi_bounds_make()'s block (as many
 * values per row as the table's sort keys), or NULL; a slot after its
 * postings, out of the header. */
#define RN_BOUNDS(r)                                                                          \
    ((const pgwi_str ***)((unsigned char *)RN_POST(r) + ALIGN8(rn_nposts(r) * sizeof(ipost))))
#define RN_TIME(r) ((itime *)((unsigned char *)RN_BOUNDS(r) + ALIGN8(sizeof(void *))))

/* The declaration runner r presents to the rules. */
static inline void pgwi_runner_view(pgwi_dview *dv, const irunner *r)
{
    dv->tables = RN_TABLES(r);
    dv->n_tables = r->n_tables;
    dv->undeclared = r->undeclared;
    dv->rids_known = r->rids_known;
    dv->result_kind = r->result_kind;
    dv->n_rids = r->n_rids;
    dv->rids = RN_RIDS(r);
    dv->bounds = *RN_BOUNDS(r);
    dv->n_bounds = dv->bounds ? RN_TABLES(r)[0].n_sort : 0;
    dv->bounds_full = r->bounds_full;
    dv->window_empty = r->window_empty;
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
    uint8_t rtype;  /* a range group: the pgw_cmp_type of its postings' range
                     * on vcol (their vfp: range_key()); 0: an eq/in group */
} igroup;

/* A group of at most this many postings, each with a single filter value,
 * is value-probed by scanning its postings in the bucket block. */
enum { SCAN_MAX = 32 };

/* A posting: one runner reading the bucket's table. */
typedef struct ipent {
    irunner *r;
    uint32_t vfp; /* fingerprint of its value filter's only value; 0: none. In
                   * a range group, the coarse keys of its range's bounds:
                   * lower << 16 | upper (pgwi_typed_key16(); 0, 0xFFFF for
                   * none) */
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
    /* the clock (index_clock.c) */
    int64_t clock_interval; /* ms, >= 1 */
    int64_t clock_now;      /* ms: the latest now_ms passed to pgw_index_clock(); -1: none yet */
    uint32_t t_head, t_tail; /* runners waiting for their interval, by base time */
    uint64_t n_timed, clocked;
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

/* The fingerprint of bucket (scope, schema, table) in the bucket map; the
 * undeclared bucket has no schema (and table). Never 0. */
static inline uint32_t bucket_fp(uint64_t shash, const pgwi_str *schema, const pgwi_str *table)
{
    uint64_t h = schema ? schema->hash * 31 + table->hash : 0;
    return mix32(shash, h);
}

static inline pgw_runner_id runner_id(const irunner *r)
{
    return ((uint64_t)r->gen << 32) | r->self;
}

/* ------------------------------------------------------------------ */
/* across the files                                                    */

/* index_build.c */

/* The scope s (of hash h), or NONE. Not inlined: a match looks its scope up
 * only to reset it or when some scope has undeclared subscriptions, and
 * inlined into match_write() it lengthened the common path. */
uint32_t pgwi_index_scope_find(const pgw_index *x, const pgwi_scope *s, uint64_t h);

/* The runner vector slot of runner id; ENOTFOUND (with fn in the message)
 * when it is not registered. */
int pgwi_index_runner_at(uint32_t *out, const pgw_index *x, pgw_runner_id id, const char *fn,
                         pgw_error *err);

/* Makes room in the index for runner r's n new result IDs: *nr, a block to
 * move r into when its room is short (else NULL); *regroup, the tracking
 * group its first table's posting moves to (else NONE). ENOMEM or ELIMIT;
 * out-params untouched on failure. */
int pgwi_index_rids_reserve(irunner **nr, uint32_t *regroup, pgw_index *x, const irunner *r,
                            uint32_t n);

/* Replaces runner r's result IDs (r on no list) with fps[0..n), known or
 * not, into the room pgwi_index_rids_reserve() made (nr, regroup: what it
 * gave, or NULL and NONE when no room was needed). Cannot fail. Returns
 * the runner's block: nr when it moved. */
irunner *pgwi_index_rids_set(pgw_index *x, irunner *r, const uint32_t *fps, uint32_t n,
                             bool known, irunner *nr, uint32_t regroup);

/* index_rerun.c */

/* Moves runner r to state st (ST_*): the dirty and running totals and the
 * lists it is on follow. */
void pgwi_index_set_state(pgw_index *x, irunner *r, uint8_t st);

/* Takes r off whatever list its state puts it on. */
void pgwi_index_lists_leave(pgw_index *x, irunner *r);

/* index_clock.c (each only for a runner with r->timed) */

/* A new time-dependent runner (CLEAN) waits for its interval from the
 * index's time. */
void pgwi_index_clock_register(pgw_index *x, irunner *r);

/* A time-dependent runner leaves the index. */
void pgwi_index_clock_unregister(pgw_index *x, irunner *r);

/* The clock follows runner r's move from state `from` to `to`: a marked
 * runner stops waiting; one whose rerun starts waits anew from the index's
 * time. */
void pgwi_index_clock_follow(pgw_index *x, irunner *r, uint8_t from, uint8_t to);

#endif /* PGWITNESS_INDEX_INTERNAL_H */
