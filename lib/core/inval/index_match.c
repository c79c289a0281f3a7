/*
 * lib/core/inval/index_match.c — matching writes against the reverse index
 * (index.h): pgw_index_match(), pgw_index_match_batch() and scope resets.
 * The levels a match fetches are described at the top of index_internal.h.
 * SPDX-License-Identifier: MIT
 */
#include "index_internal.h"

#include <string.h>

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

/* ------------------------------------------------------------------ */
/* matching                                                            */

/* A hit: the runner must refresh. Returns 1 when newly marked. */
static size_t mark(pgw_index *x, irunner *r, pgw_reason why)
{
    if (r->state == ST_DIRTY || r->state == ST_RUN_DIRTY) {
        x->coalesced++;
        return 0;
    }
    r->reason = (uint8_t)why;
    pgwi_index_set_state(x, r, r->state == ST_RUN ? ST_RUN_DIRTY : ST_DIRTY);
    x->marked++;
    return 1;
}

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
    pgwi_dview dv;
    pgwi_runner_view(&dv, r);
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

/* Probes range group gi: adds the postings whose range's coarse keys admit
 * the key of some value the write's rows have on a side they exist (a value
 * outside every posting's keys lies outside its range: the runner finds
 * every such row irrelevant, rules 10, 18, 21). Returns false (and adds
 * nothing) when some row lacks a value the rules would need or has one
 * that does not parse (maybe relevant to every range). NULL fails every
 * range. */
static bool probe_ranges(mctx *c, const ibhdr *b, uint32_t gi, const igroup *g)
{
    const pgw_write *w = c->w;
    int32_t vc = pgwi_write_vcol(w, g->vcol);
    if (vc < 0)
        return false;
    const bool changed = !pgwi_cols_ok(w) || pgwi_write_changed(w, g->vcol);
    enum { NK = 64 };
    uint16_t ks[NK];
    uint32_t nk = 0;
    for (uint32_t i = 0; i < w->n_ids; i++)
        for (int side = 0; side < 2; side++) {
            if (pgwi_row_exists(w, i, side) == PGWI_NO)
                continue;
            const pgwi_str *v = pgwi_row_value(w, i, side, vc, changed);
            if (!v)
                return false;
            if (v == &pgwi_sqlnull)
                continue;
            pgwi_typed x;
            if (nk == NK || !pgwi_typed_parse(&x, (pgw_cmp_type)g->rtype, v->s, v->len))
                return false;
            ks[nk++] = pgwi_typed_key16(&x);
        }
    const ipent *e = BK_POSTS(b);
    for (uint32_t j = 0; j < b->n; j++) {
        if (e[j].group != gi)
            continue;
        const uint32_t lo = e[j].vfp >> 16, hi = e[j].vfp & 0xFFFF;
        bool admit = false;
        for (uint32_t k = 0; k < nk && !admit; k++)
            admit = ks[k] >= lo && ks[k] <= hi;
        if (admit)
            add(c, &e[j]);
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
            if (g->vcol &&
                (g->rtype ? probe_ranges(c, b, gi, g) : probe_values(c, b, gi, g))) {
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
            sk = pgwi_index_scope_find(x, &w->scope, sh);
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
    /* Groups of GROUP writes: each level of a match (index_internal.h's
     * top) is taken for all of them before the next, then each write is
     * decided in order. GROUP bounds the loads in flight (each write starts
     * a few dozen) and the stack (a match state per write). */
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
