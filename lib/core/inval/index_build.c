/*
 * lib/core/inval/index_build.c — building the reverse index (index.h):
 * interned names, scopes, bucket blocks and their groups, runner blocks
 * (compiled declarations), postings, registration and unregistration, and
 * the result IDs an acknowledged rerun records. The structures are
 * index_internal.h's.
 * SPDX-License-Identifier: MIT
 */
#include "index_internal.h"

#include <string.h>

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
/* map entries by content                                              */

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
static uint32_t bm_slot(const bmap *m, uint32_t fp, const ibhdr *b)
{
    uint32_t i;
    for (i = bm_first(m, fp); i != NONE; i = bm_next(m, fp, i))
        if (m->s[i].b == b)
            break;
    return i;
}

static void bm_del(bmap *m, uint32_t fp, const ibhdr *b)
{
    uint32_t i = bm_slot(m, fp, b);
    if (i != NONE)
        bm_erase(m, i);
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
    if (mm_reserve(&x->m_names, 1) < 0 ||
        vec_fit((void **)&x->names, &x->cap_names, sizeof *x->names, slot) < 0)
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

uint32_t pgwi_index_scope_find(const pgw_index *x, const pgwi_scope *s, uint64_t h)
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
    uint32_t k = pgwi_index_scope_find(x, s, h);
    int rc;
    if (k != NONE) {
        *out = k;
        return PGW_OK;
    }
    k = x->free_sc != NONE ? x->free_sc : x->n_sc;
    if ((rc = mm_reserve(&x->m_scopes, 1)) < 0)
        return rc;
    if ((rc = vec_fit((void **)&x->sc, &x->cap_sc, sizeof *x->sc, k)) < 0)
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
    int rc;
    if (k != NONE) {
        *out = k;
        return PGW_OK;
    }
    k = x->free_bk != NONE ? x->free_bk : x->n_bk;
    if ((rc = bm_reserve(&x->m_buckets, 1)) < 0)
        return rc;
    if ((rc = vec_fit((void **)&x->bk, &x->cap_bk, sizeof *x->bk, k)) < 0)
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

static uint32_t group_find(const ibhdr *b, const pgwi_str *vcol, uint8_t kind, uint8_t rtype)
{
    const igroup *g = BK_GROUPS(b);
    for (uint32_t i = 0; i < b->ng; i++)
        if (g[i].vcol == vcol && g[i].kind == kind && g[i].rtype == rtype)
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
static uint64_t ident_hash(uint64_t scope_hash, const pgwi_str *query, bool timed,
                           uint8_t kind, const pgwi_tdep *tables, uint32_t n_tables)
{
    uint64_t h = hmix(scope_hash, query->hash);
    if (timed)
        h = hmix(h, 0x71AE);
    if (kind)
        h = hmix(h, 0x4E5D00u + kind);
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
            h = hmix(hmix(hmix(h, f->col->hash), f->op), f->vals ? f->n_vals : 0xFFFF);
            if (f->op == PGW_FILTER_RANGE)
                h = hmix(h, (uint64_t)f->cmp | (uint64_t)f->lo << 8 | (uint64_t)f->hi << 16);
            for (uint32_t v = 0; f->vals && v < f->n_vals; v++)
                h = hmix(h, f->vals[v]->hash);
        }
        h = hmix(h, t->n_sort);
        for (uint32_t k = 0; k < t->n_sort; k++)
            h = hmix(hmix(h, t->sort[k]->hash), t->sort_kf ? t->sort_kf[k] : 0);
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

/* Whether two entries' sort keys have the same flags (none: all 0). */
static bool kf_eq(const pgwi_tdep *x, const pgwi_tdep *y)
{
    for (uint32_t k = 0; k < x->n_sort; k++)
        if ((x->sort_kf ? x->sort_kf[k] : 0) != (y->sort_kf ? y->sort_kf[k] : 0))
            return false;
    return true;
}

static bool same_decl(const irunner *r, const pgw_deps *d)
{
    if (!pgwi_str_eq(r->query, d->query) || r->n_tables != d->n_tables ||
        r->timed != d->time_dependent || r->result_kind != d->result_kind)
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
        if (!names_eq(x->sort, y->sort, x->n_sort) || !kf_eq(x, y))
            return false;
        for (uint32_t k = 0; k < x->n_filters; k++) {
            const pgwi_filter *f = &x->filters[k], *g = &y->filters[k];
            if (!pgwi_str_eq(f->col, g->col) || f->op != g->op ||
                f->vals_known != g->vals_known || f->n_vals != g->n_vals ||
                f->cmp != g->cmp || f->lo != g->lo || f->hi != g->hi ||
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
    pgwi_free((void *)*RN_BOUNDS(r));
    pgwi_free(r);
}

/* Compiles deps into a runner block with its result IDs. Names are interned
 * as they are copied; on ENOMEM everything acquired is released. */
static int runner_new(irunner **out, pgw_index *x, const pgw_deps *d)
{
    /* header, tables, postings, the clock's record (RN_TIME), arrays */
    const size_t head = ALIGN8(sizeof(irunner)) + ALIGN8(d->n_tables * sizeof(pgwi_tdep)) +
                        ALIGN8((d->n_tables ? d->n_tables : 1) * sizeof(ipost)) +
                        ALIGN8(sizeof(void *)) + /* RN_BOUNDS */
                        (d->time_dependent ? ALIGN8(sizeof(itime)) : 0);
    size_t size = head;
    for (uint32_t i = 0; i < d->n_tables; i++) {
        const pgwi_tdep *t = &d->tables[i];
        size += ALIGN8(((t->all_cols ? 0 : t->n_cols) + t->n_sort) * sizeof(pgwi_str *));
        size += t->sort_kf ? ALIGN8(t->n_sort) : 0;
        size += ALIGN8(t->n_filters * sizeof(pgwi_filter));
        for (uint32_t k = 0; k < t->n_filters; k++) {
            const pgwi_filter *f = &t->filters[k];
            size += ALIGN8(f->op == PGW_FILTER_RANGE ? PGWI_RANGE_VALS_SIZE
                                                     : f->n_vals * sizeof(pgwi_str *));
            for (uint32_t v = 0; v < f->n_vals; v++)
                size += ALIGN8(sizeof(pgwi_str) + f->vals[v]->len + 1);
        }
    }
    /* Result IDs of a first table that reads no column (an aggregate such
     * as count(*)) are never used: the runner's result is unknown. */
    const bool rids_known =
        d->rids_known && d->n_tables && pgwi_lists_rows(d->result_kind, &d->tables[0]);
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
    r->timed = d->time_dependent;
    r->result_kind = d->result_kind;
    if (n_rids)
        memcpy(RN_RIDS(r), d->fps, n_rids * sizeof(uint32_t));
    unsigned char *cur = p + head;
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
        if (t->sort_kf) {
            memcpy(cur, t->sort_kf, t->n_sort);
            u->sort_kf = cur;
            cur += ALIGN8(t->n_sort);
        }
        pgwi_filter *fs = (pgwi_filter *)cur;
        cur += ALIGN8(t->n_filters * sizeof(pgwi_filter));
        u->filters = fs;
        for (uint32_t k = 0; k < t->n_filters; k++) {
            const pgwi_filter *f = &t->filters[k];
            fs[k].op = f->op;
            fs[k].vals_known = f->vals_known;
            fs[k].cmp = f->cmp;
            fs[k].lo = f->lo;
            fs[k].hi = f->hi;
            fs[k].n_vals = f->n_vals;
            const pgwi_str **vals = (const pgwi_str **)cur;
            cur += ALIGN8(f->op == PGW_FILTER_RANGE ? PGWI_RANGE_VALS_SIZE
                                                    : f->n_vals * sizeof(pgwi_str *));
            for (uint32_t v = 0; v < f->n_vals; v++) {
                pgwi_str *s = (pgwi_str *)cur;
                cur += ALIGN8(sizeof(pgwi_str) + f->vals[v]->len + 1);
                s->hash = f->vals[v]->hash;
                s->len = f->vals[v]->len;
                memcpy(s->s, f->vals[v]->s, s->len + 1);
                vals[v] = s;
            }
            fs[k].vals = f->vals ? vals : NULL;
            if (f->op == PGW_FILTER_RANGE)
                pgwi_range_prepare(&fs[k]);
            u->n_filters = k + 1;
            if (!(fs[k].col = name_get(x, f->col)))
                goto nomem;
        }
        pgwi_tdep_masks(u);
    }
    /* The declaration's window bounds (of a list, or of the window an
     * aggregate reads). */
    if (d->bounds && d->n_tables) {
        if (pgwi_bounds_copy(RN_BOUNDS(r), &RN_TABLES(r)[0], d->bounds, d->bounds_full) < 0)
            goto nomem;
        r->bounds_full = d->bounds_full;
    }
    r->window_empty = d->window_empty;
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
        t->sort_kf = rebase(t->sort_kf, lo, size, to);
        t->filters = rebase(t->filters, lo, size, to);
        pgwi_filter *fs = (pgwi_filter *)t->filters;
        for (uint32_t k = 0; k < t->n_filters; k++) {
            fs[k].vals = rebase(fs[k].vals, lo, size, to);
            const pgwi_str **vals = (const pgwi_str **)fs[k].vals;
            for (uint32_t v = 0; vals && v < fs[k].n_vals; v++)
                vals[v] = rebase(vals[v], lo, size, to);
            if (fs[k].op == PGW_FILTER_RANGE) /* its parsed bounds point into the texts */
                pgwi_range_prepare(&fs[k]);
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
 * declared values that has the fewest values, else its first range;
 * UINT16_MAX when none. */
static uint16_t value_filter(const pgwi_tdep *t)
{
    uint16_t best = UINT16_MAX, range = UINT16_MAX;
    for (uint32_t k = 0; k < t->n_filters && k < UINT16_MAX; k++) {
        if (t->filters[k].vals_known &&
            (best == UINT16_MAX || t->filters[k].n_vals < t->filters[best].n_vals))
            best = (uint16_t)k;
        if (t->filters[k].op == PGW_FILTER_RANGE && range == UINT16_MAX)
            range = (uint16_t)k;
    }
    return best != UINT16_MAX ? best : range;
}

/* The range of a range group's posting as the coarse keys of its bounds. */
static uint32_t range_key(const pgwi_filter *f)
{
    const pgwi_typed *b = pgwi_range_bounds(f);
    uint32_t lo = f->lo != PGW_BOUND_NONE ? pgwi_typed_key16(&b[0]) : 0;
    uint32_t hi = f->hi != PGW_BOUND_NONE ? pgwi_typed_key16(&b[1]) : 0xFFFF;
    return lo << 16 | hi;
}

/* Whether f is an eq/in filter whose values a group indexes (a range
 * group's filter has none there: its keys are in its postings). */
static inline bool has_values(const pgwi_filter *f)
{
    return f && f->op != PGW_FILTER_RANGE;
}

/* ------------------------------------------------------------------ */
/* lifecycle                                                           */

int pgw_index_new(pgw_index **out, const pgw_index_options *opts, pgw_error *err)
{
    if (!out)
        return pgwi_error(err, PGW_EINVAL, "index_new: out is NULL");
    /* Version 1 has no clock_interval_ms (a caller's struct may end before
     * it): the default interval. */
    if (opts && (opts->version < 1 || opts->version > PGW_INDEX_OPTIONS_VERSION))
        return pgwi_error(err, PGW_EINVAL,
                          "index_new: options version %u is not 1 to %u (use "
                          "PGW_INDEX_OPTIONS_INIT)",
                          opts->version, (unsigned)PGW_INDEX_OPTIONS_VERSION);
    int64_t interval = opts && opts->version >= 2 ? opts->clock_interval_ms
                                                  : PGW_INDEX_CLOCK_INTERVAL_MS;
    if (interval < 1)
        return pgwi_error(err, PGW_EINVAL,
                          "index_new: clock_interval_ms %lld is not positive (milliseconds, "
                          ">= 1)",
                          (long long)interval);
    pgw_index *x = pgwi_calloc(1, sizeof *x);
    if (!x)
        return pgwi_enomem(err);
    x->free_r = x->free_sc = x->free_bk = x->free_name = NONE;
    x->q_head = x->q_tail = NONE;
    x->t_head = x->t_tail = NONE;
    x->clock_interval = interval;
    x->clock_now = -1;
    x->epoch = 1;
    if (opts && opts->expected_runners) {
        size_t n = opts->expected_runners;
        if (n > UINT32_MAX / 2 || mm_reserve(&x->m_ident, n) < 0 ||
            vec_fit((void **)&x->r, &x->cap_r, sizeof *x->r, (uint32_t)n) < 0) {
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

int pgwi_index_runner_at(uint32_t *out, const pgw_index *x, pgw_runner_id id, const char *fn,
                         pgw_error *err)
{
    uint32_t k = (uint32_t)id, gen = (uint32_t)(id >> 32);
    if (k >= x->n_r || !slot_live(x->r[k]) || RUNNER(x, k)->gen != gen)
        return pgwi_error(err, PGW_ENOTFOUND, "%s: runner %llu is not registered", fn,
                          (unsigned long long)id);
    *out = k;
    return PGW_OK;
}

/* ------------------------------------------------------------------ */
/* postings                                                            */

/* The fingerprint of a runner's identity in m_ident. */
static uint32_t runner_ident(const pgw_index *x, const irunner *r)
{
    return pgwi_fp32(
        ident_hash(x->sc[r->scope].hash, r->query, r->timed, r->result_kind, RN_TABLES(r),
                   r->n_tables));
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
        for (uint32_t v = 0; has_values(f) && v < f->n_vals; v++) {
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
    if (!has_values(f))
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
    const uint8_t rtype = f && f->op == PGW_FILTER_RANGE ? f->cmp : 0;
    uint32_t gi = group_find(b, vcol, kind, rtype);
    int rc;
    if ((rc = bucket_reserve(x, k, gi == NONE ? 1 : 0, add_post,
                             tab + post_tab_need(b, gi, f))) < 0)
        return rc;
    b = BUCKET(x, k);
    if (gi == NONE) { /* an empty group stays if a later step fails */
        gi = b->ng++;
        igroup *g = &BK_GROUPS(b)[gi];
        memset(g, 0, sizeof *g);
        g->vcol = vcol;
        g->kind = kind;
        g->rtype = rtype;
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
    ipent *e = &BK_POSTS(b)[p->pos];
    if (g->rtype) {
        e->vfp = range_key(f);
        f = NULL; /* a range group's keys are in its postings: never hashed */
    } else {
        e->vfp = f && f->n_vals == 1 ? pgwi_fp32(f->vals[0]->hash) : 0;
    }
    uint32_t nv = f ? f->n_vals : 0;
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
    const pgwi_filter *f = g->rtype ? NULL : post_filter(r, p, i);
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

/* Enters runner r, with everything it needs acquired, into vector slot k
 * and scope sk, with its postings. Cannot fail. */
static void runner_commit(pgw_index *x, irunner *r, uint32_t k, uint32_t sk)
{
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
    r->tracked = r->n_tables && r->rids_known;
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
    if (r->timed)
        pgwi_index_clock_register(x, r);
    x->live_runners++;
    x->subscriptions++;
}

int pgw_index_register(pgw_runner_id *out, pgw_index *x, const pgw_deps *d, pgw_error *err)
{
    if (!out || !x || !d)
        return pgwi_error(err, PGW_EINVAL, "index_register: %s is NULL",
                          !out ? "out" : !x ? "index" : "deps");
    uint64_t sh = pgwi_scope_hash(&d->scope);
    uint64_t ident =
        ident_hash(sh, d->query, d->time_dependent, d->result_kind, d->tables, d->n_tables);
    uint32_t sk = pgwi_index_scope_find(x, &d->scope, sh);
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
    const uint32_t k = x->free_r != NONE ? x->free_r : x->n_r;
    const uint32_t np = d->n_tables ? d->n_tables : 1;
    uint32_t got = 0; /* postings whose bucket was found or created */
    int rc;
    if ((rc = scope_get(&sk, x, &d->scope)) < 0)
        return rc == PGW_ENOMEM ? pgwi_enomem(err)
                                : pgwi_error(err, rc, "index_register: too many scopes");
    if ((rc = runner_new(&r, x, d)) < 0)
        goto fail;
    if ((rc = vec_fit((void **)&x->r, &x->cap_r, sizeof *x->r, k)) < 0)
        goto fail;
    for (uint32_t i = 0; i < np; i++) {
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
        if ((rc = bucket_get(&p->bucket, x, sk, schema, table)) < 0)
            goto fail;
        got = i + 1;
        for (uint32_t j = 0; j < i; j++)
            if (RN_POST(r)[j].bucket == p->bucket) {
                rc = PGW_EINVAL; /* a table declared twice (builders refuse it) */
                goto fail;
            }
        uint32_t gi = 0;
        if ((rc = group_reserve(&gi, x, p->bucket, vcol, kind, f, 1, kind ? d->n_fps : 0)) < 0)
            goto fail;
        p->group = (uint16_t)gi;
    }
    if ((rc = mm_reserve(&x->m_ident, 1)) < 0)
        goto fail;
    runner_commit(x, r, k, sk);
    *out = runner_id(r);
    return PGW_OK;
fail:
    for (uint32_t i = 0; i < got; i++)
        bucket_gc(x, RN_POST(r)[i].bucket);
    runner_free(x, r);
    scope_gc(x, sk);
    if (rc == PGW_ENOMEM)
        return pgwi_enomem(err);
    return pgwi_error(err, rc, rc == PGW_EINVAL ? "index_register: a table is declared twice"
                                                : "index_register: index limit reached");
}

int pgw_index_unregister(pgw_index *x, pgw_runner_id id, pgw_error *err)
{
    if (!x)
        return pgwi_error(err, PGW_EINVAL, "index_unregister: index is NULL");
    uint32_t k = 0;
    int rc;
    if ((rc = pgwi_index_runner_at(&k, x, id, "index_unregister", err)) < 0)
        return rc;
    irunner *r = RUNNER(x, k);
    x->subscriptions--;
    if (--r->refs)
        return PGW_OK;
    pgwi_index_set_state(x, r, ST_CLEAN);
    pgwi_index_lists_leave(x, r); /* a tracked runner without IDs sits on the volatile list */
    if (r->timed)
        pgwi_index_clock_unregister(x, r);
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
/* the result IDs of a rerun                                           */

int pgwi_index_rids_reserve(irunner **nr, uint32_t *regroup, pgw_index *x, const irunner *r,
                            uint32_t n)
{
    uint32_t g = NONE;
    irunner *block = NULL;
    int rc;
    if (r->tracked) { /* room for the new entries while the old ones are still in */
        if ((rc = bucket_reserve(x, RN_POST(r)[0].bucket, 0, 0, n)) < 0)
            return rc;
    } else if (r->n_tables) {
        /* Its result IDs are known from now on, and pgw_decide uses them:
         * its first table's posting moves to a group that tracks them. */
        const pgwi_filter *f = post_filter(r, &RN_POST(r)[0], 0);
        if ((rc = group_reserve(&g, x, RN_POST(r)[0].bucket, f ? f->col : NULL,
                                tracked_kind(r), f, 0, n)) < 0)
            return rc;
    }
    if (n > r->cap_rids) {
        if ((size_t)n > (SIZE_MAX - r->rids_off) / sizeof(uint32_t))
            return PGW_ELIMIT;
        if (!(block = pgwi_malloc(r->rids_off + (size_t)n * sizeof(uint32_t))))
            return PGW_ENOMEM;
    }
    *nr = block;
    *regroup = g;
    return PGW_OK;
}

irunner *pgwi_index_rids_set(pgw_index *x, irunner *r, const uint32_t *fps, uint32_t n,
                             bool known, irunner *nr, uint32_t regroup)
{
    idpost_del(x, r);
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
    return r;
}
