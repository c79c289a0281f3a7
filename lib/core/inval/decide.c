/*
 * lib/core/inval/decide.c — the decision rules (the rule table in inval.h; the
 * rule numbers in comments refer to it). Pure and allocation-free: shared by
 * pgw_decide() and the reverse index.
 * SPDX-License-Identifier: MIT
 */
#include "inval_internal.h"
#include "typed.h"

const pgwi_tdep *pgwi_find_table(const pgwi_dview *d, const pgw_write *w)
{
    for (uint32_t i = 0; i < d->n_tables; i++) {
        const pgwi_tdep *t = &d->tables[i];
        if (pgwi_str_eq(t->table, w->table) && pgwi_str_eq(t->schema, w->schema))
            return t;
    }
    return NULL;
}

/* Whether range filter f admits the known value v: NULL never (a
 * comparison with NULL is never true), an unparsable value always (maybe
 * relevant), a parsed one when it lies within the bounds. */
void pgwi_range_prepare(pgwi_filter *f)
{
    pgwi_typed *b = (pgwi_typed *)(void *)(f->vals + 2);
    for (int k = 0; k < 2; k++)
        if ((k ? f->hi : f->lo) != PGW_BOUND_NONE)
            (void)pgwi_typed_parse(&b[k], (pgw_cmp_type)f->cmp, f->vals[k]->s, f->vals[k]->len);
}

/* Whether value x (parsed under f's type) lies within range filter f. */
static bool range_holds(const pgwi_filter *f, const pgwi_typed *x)
{
    const pgwi_typed *b = pgwi_range_bounds(f);
    if (f->lo != PGW_BOUND_NONE) {
        int c = pgwi_typed_cmp(x, &b[0]);
        if (c < 0 || (c == 0 && f->lo == PGW_BOUND_EXCLUSIVE))
            return false;
    }
    if (f->hi != PGW_BOUND_NONE) {
        int c = pgwi_typed_cmp(x, &b[1]);
        if (c > 0 || (c == 0 && f->hi == PGW_BOUND_EXCLUSIVE))
            return false;
    }
    return true;
}

static bool range_admits(const pgwi_filter *f, const pgwi_str *v)
{
    if (v == &pgwi_sqlnull)
        return false;
    pgwi_typed x;
    if (!pgwi_typed_parse(&x, (pgw_cmp_type)f->cmp, v->s, v->len))
        return true;
    return range_holds(f, &x);
}

bool pgwi_filter_admits(const pgwi_filter *f, const pgwi_str *v)
{
    if (f->op == PGW_FILTER_RANGE)
        return range_admits(f, v);
    if (v == &pgwi_sqlnull)
        return false; /* SQL: NULL = x is never true */
    for (uint32_t i = 0; i < f->n_vals; i++)
        if (pgwi_str_eq(f->vals[i], v))
            return true;
    return false;
}

/* The memo entry of name, resolved on first use; -1 when the memo is full. */
static inline int memo_at(pgwi_wmemo *m, const pgwi_str *name)
{
    for (uint32_t i = 0; i < m->n; i++)
        if (m->name[i] == name)
            return (int)i;
    if (m->n == PGWI_WMEMO_N)
        return -1;
    uint32_t i = m->n++;
    m->name[i] = name;
    m->vc[i] = pgwi_write_vcol(m->w, name);
    m->changed[i] = pgwi_write_changed(m->w, name);
    m->tsrc[i][0] = m->tsrc[i][1] = NULL;
    return (int)i;
}

/* pgwi_write_changed(m->w, name) through the memo. */
static inline bool w_changed(pgwi_wmemo *m, const pgwi_str *name)
{
    if (!(m->w->cols_mask & pgwi_bit(name)))
        return false;
    int i = memo_at(m, name);
    return i >= 0 ? m->changed[i] : pgwi_write_changed(m->w, name);
}

/* pgwi_write_vcol(m->w, name) through the memo. */
static inline int32_t w_vcol(pgwi_wmemo *m, const pgwi_str *name)
{
    if (m->w->n_vcols == 0)
        return -1;
    int i = memo_at(m, name);
    return i >= 0 ? m->vc[i] : pgwi_write_vcol(m->w, name);
}

static bool any_changed(pgwi_wmemo *m, const pgwi_str *const *names, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (w_changed(m, names[i]))
            return true;
    return false;
}

static bool filter_col_changed(pgwi_wmemo *m, const pgwi_tdep *t)
{
    for (uint32_t i = 0; i < t->n_filters; i++)
        if (w_changed(m, t->filters[i].col))
            return true;
    return false;
}

/* A value filter with a value column in the write: where its column sits
 * among the write's value columns and whether it changed (true when the
 * changed columns are unknown). The first FMAP_N filters are resolved once
 * per decision, and only those that can reject a row are kept; later ones
 * per row (declarations with that many filters are rare). */
#define FMAP_N 16
typedef struct fmap {
    const pgwi_filter *f;
    int32_t vc;
    int16_t slot; /* the filter column's memo entry, or -1 */
    bool changed;
} fmap;

static fmap resolve(pgwi_wmemo *mm, const pgwi_filter *f)
{
    const pgw_write *w = mm->w;
    fmap m = {f, -1, -1, true};
    if (!pgwi_filter_rejects(f) || w->n_vcols == 0)
        return m;
    m.slot = (int16_t)memo_at(mm, f->col);
    m.vc = m.slot >= 0 ? mm->vc[m.slot] : pgwi_write_vcol(w, f->col);
    m.changed = !pgwi_cols_ok(w) || w_changed(mm, f->col);
    return m;
}

/* Whether filter f admits the known value v. */
static inline bool admits(const pgwi_filter *f, const pgwi_str *v)
{
    if (f->op == PGW_FILTER_RANGE)
        return range_admits(f, v);
    if (f->n_vals == 1) /* eq: most filters */
        return v != &pgwi_sqlnull && pgwi_str_eq(f->vals[0], v);
    return pgwi_filter_admits(f, v);
}

/* Whether the filter of m admits the known value v of row i on a side:
 * as admits(), with the first row's values parsed once per write and name
 * for every range on that name (an index decides many candidates, each
 * with its own range on one column, against one write). */
static bool range_admits_memo(pgwi_wmemo *mm, const fmap *m, const pgwi_str *v, int side);

static inline bool admits_row(pgwi_wmemo *mm, const fmap *m, const pgwi_str *v, uint32_t i,
                              int side)
{
    const pgwi_filter *f = m->f;
    if (f->op != PGW_FILTER_RANGE || i != 0 || m->slot < 0 || v == &pgwi_sqlnull)
        return admits(f, v);
    return range_admits_memo(mm, m, v, side);
}

/* admits_row() for a range on the first row, out of line: the eq/in path
 * stays small enough to inline. */
static bool range_admits_memo(pgwi_wmemo *mm, const fmap *m, const pgwi_str *v, int side)
{
    const pgwi_filter *f = m->f;
    const int s = m->slot;
    if (mm->tsrc[s][side] != v || mm->ttype[s][side] != f->cmp) {
        mm->tsrc[s][side] = v;
        mm->ttype[s][side] = f->cmp;
        mm->tok[s][side] = pgwi_typed_parse(&mm->tval[s][side], (pgw_cmp_type)f->cmp, v->s, v->len);
    }
    return !mm->tok[s][side] || range_holds(f, &mm->tval[s][side]);
}

/* The value filters of a decision that can reject a row: fm[0..n) and the
 * filters of t from `rest` on (resolved per row). */
typedef struct fset {
    fmap fm[FMAP_N];
    uint32_t n, rest;
} fset;

static void fset_init(fset *s, pgwi_wmemo *mm, const pgwi_tdep *t)
{
    s->n = 0;
    s->rest = t->n_filters;
    if (!mm->w->vals)
        return; /* no value: no filter rejects a row */
    for (uint32_t k = 0; k < t->n_filters; k++) {
        if (k == FMAP_N) {
            s->rest = k;
            break;
        }
        fmap m = resolve(mm, &t->filters[k]);
        if (m.vc >= 0)
            s->fm[s->n++] = m;
    }
}

/* Relevance of row i on a side: PGWI_NO when a value filter rejects a known
 * value, else PGWI_MAYBE. */
/* Inlined into decide_table (GCC 12 stopped doing so on its own once the
 * range filters came, which cost a fifth of pgw_decide's time). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((always_inline))
#endif
static inline int relevance(const pgwi_tdep *t, const fset *fs, pgwi_wmemo *mm,
                            const pgw_write *w, uint32_t i, int side)
{
    if (pgwi_row_exists(w, i, side) == PGWI_NO)
        return PGWI_NO;
    for (uint32_t k = 0; k < fs->n; k++) {
        const fmap *m = &fs->fm[k];
        const pgwi_str *v = pgwi_row_value(w, i, side, m->vc, m->changed);
        if (v && !admits_row(mm, m, v, i, side))
            return PGWI_NO;
    }
    for (uint32_t k = fs->rest; k < t->n_filters; k++) {
        fmap m = resolve(mm, &t->filters[k]);
        if (m.vc < 0)
            continue;
        const pgwi_str *v = pgwi_row_value(w, i, side, m.vc, m.changed);
        if (v && !pgwi_filter_admits(m.f, v))
            return PGWI_NO;
    }
    return PGWI_MAYBE;
}

/* ---- window bounds (rules W1 to W4) ---- */

/* Compares value v of a sort key with flags kf to a boundary value b (b
 * parses under the key's type, or is &pgwi_sqlnull): -1, 0, 1 in the key's
 * order (its direction and NULLS order), or 2 when v does not parse. */
static int key_cmp(uint8_t kf, const pgwi_str *v, const pgwi_str *b)
{
    const bool vn = v == &pgwi_sqlnull, bn = b == &pgwi_sqlnull;
    if (vn || bn) {
        if (vn && bn)
            return 0;
        return vn == ((kf & PGWI_SORT_NULLS_FIRST) != 0) ? -1 : 1;
    }
    const pgw_cmp_type ty = (pgw_cmp_type)(kf & PGWI_SORT_TYPE);
    pgwi_typed x, y;
    if (!pgwi_typed_parse(&x, ty, v->s, v->len))
        return 2;
    (void)pgwi_typed_parse(&y, ty, b->s, b->len);
    int c = pgwi_typed_cmp(&x, &y);
    return (kf & PGWI_SORT_DESC) ? -c : c;
}

/* Compares row i's sort-key values on a side with a boundary row (n
 * values): lexicographically, -1, 0 or 1; 2 when a value that decides is
 * unknown or unparsable. */
static int tuple_cmp(const pgwi_tdep *t, const pgwi_str *const *bound, pgwi_wmemo *mm,
                     const pgw_write *w, uint32_t i, int side, bool cols_ok)
{
    for (uint32_t k = 0; k < t->n_sort; k++) {
        const pgwi_str *col = t->sort[k];
        const pgwi_str *v =
            pgwi_row_value(w, i, side, w_vcol(mm, col), !cols_ok || w_changed(mm, col));
        if (!v)
            return 2;
        int c = key_cmp(t->sort_kf[k], v, bound[k]);
        if (c)
            return c;
    }
    return 0;
}

enum { POS_INSIDE = 0, POS_BEFORE = 1, POS_BEYOND = 2 };

int pgwi_bounds_order(const pgwi_tdep *t, const pgwi_str *const *bounds)
{
    for (uint32_t k = 0; k < t->n_sort; k++) {
        int c = key_cmp(t->sort_kf[k], bounds[k], bounds[t->n_sort + k]);
        if (c)
            return c;
    }
    return 0;
}

/* Where row i lies on a side against the window's bounds: strictly beyond
 * its last row, strictly before its first, or otherwise (within, tied with
 * a boundary row, or unknown). Out of line: decide_table's common path,
 * without bounds, stays as small as it was (inlined, its four calls made
 * pgw_decide a fifth slower). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static int window_pos(const pgwi_tdep *t, const pgwi_dview *d, pgwi_wmemo *mm,
                      const pgw_write *w, uint32_t i, int side, bool cols_ok)
{
    if (tuple_cmp(t, d->bounds + d->n_bounds, mm, w, i, side, cols_ok) == 1)
        return POS_BEYOND;
    if (tuple_cmp(t, d->bounds, mm, w, i, side, cols_ok) == -1)
        return POS_BEFORE;
    return POS_INSIDE;
}

/* The rules that skipped rows of a decision, for its reason. */
enum { USED_VALUES = 1, USED_BEYOND = 2, USED_BEFORE = 4, USED_EMPTY = 8 };

/* Rules W1 and W2 for row i of an update that keeps row identity, whose
 * relevance before is b and after a (not both PGWI_NO), fchg whether a
 * filter column changed: USED_BEYOND or USED_BEFORE when one skips the
 * row, else 0. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static unsigned window_update(const pgwi_tdep *t, const pgwi_dview *d, pgwi_wmemo *mm,
                              const pgw_write *w, uint32_t i, int b, int a, bool fchg)
{
    const int po = b == PGWI_NO ? POS_INSIDE : window_pos(t, d, mm, w, i, PGW_SIDE_OLD, true);
    const int pn = a == PGWI_NO ? POS_INSIDE : window_pos(t, d, mm, w, i, PGW_SIDE_NEW, true);
    if ((b == PGWI_NO || po == POS_BEYOND) &&
        (a == PGWI_NO || (pn == POS_BEYOND && d->bounds_full)))
        return USED_BEYOND; /* W1 */
    if (!fchg && po == POS_BEFORE && pn == POS_BEFORE)
        return USED_BEFORE; /* W2 */
    return 0;
}

static pgw_verdict refresh(pgw_reason r)
{
    pgw_verdict v = {true, r};
    return v;
}

static pgw_verdict skip(pgw_reason r)
{
    pgw_verdict v = {false, r};
    return v;
}

static pgw_verdict decide_table(const pgwi_tdep *t, bool first, const pgwi_dview *d,
                                bool r_unknown, const pgw_write *w, pgwi_wmemo *mm)
{
    const bool windowed = t->limit >= 0 || t->offset > 0;
    const bool ordered = windowed || t->n_sort > 0;
    /* The row-aware rules (R, rules 12, 13, 19) and the window rules (B)
     * hold only for a list of the first table's rows: an aggregate's
     * window counts groups, which a row can add or remove in front of it
     * or in an empty one. */
    const bool listed = first && !r_unknown && pgwi_lists_rows(d->result_kind, t);
    const bool tracked = listed && d->rids_known;
    const bool key_read = ordered || tracked;
    const bool cols_ok = pgwi_cols_ok(w);
    /* Whether a filter or sort column changed (true when the changed
     * columns are unknown). */
    const bool fchg = !cols_ok || filter_col_changed(mm, t);
    const bool schg = !cols_ok || any_changed(mm, t->sort, t->n_sort);
    /* The window's bounds are known (rules W1 to W4). Their setters keep
     * them consistent with the entry: they need its window and typed sort
     * keys (one value per key), and changing either clears them. */
    const bool bounded = listed && d->n_bounds;
    /* The window holds no row (rules E1 to E3). */
    const bool empty = listed && d->window_empty;

    /* Rule 7: only unread columns changed. */
    if (w->op == PGW_OP_UPDATE && cols_ok) {
        bool read_hit = false;
        if (w->cols_mask & t->read_mask) {
            if (t->all_cols)
                read_hit = w->n_cols > 0;
            else
                read_hit = fchg || schg || any_changed(mm, t->cols, t->n_cols);
        }
        if (!read_hit && !(w->pk_changed && key_read))
            return skip(PGW_REASON_COLUMNS_DISJOINT);
    }
    /* E1: nothing can enter an empty window: a delete only removes rows,
     * an update that changes no filter column keeps every row's relevance
     * (whatever its rows). */
    if (empty && (w->op == PGW_OP_DELETE || (w->op == PGW_OP_UPDATE && cols_ok && !fchg)))
        return skip(PGW_REASON_WINDOW_EMPTY);
    /* Rule 8: rows unknown. */
    if (!pgwi_ids_ok(w))
        return refresh(w->op == PGW_OP_INSERT ? PGW_REASON_INSERT_MAY_ENTER
                                              : PGW_REASON_IDS_UNKNOWN);

    fset fs;
    fset_init(&fs, mm, t);
    const bool same = pgwi_same_row(w);
    unsigned used = 0; /* USED_*: the rules that skipped rows */

    for (uint32_t i = 0; i < w->n_ids; i++) {
        /* Whether the row is in R, searched only where a rule asks (an
         * insert never does: the result IDs stay unread). */
#define IN_R() (tracked && pgwi_fps_contains(d->rids, d->n_rids, w->ids[i].fp))
        if (same) {
            if (IN_R())
                return refresh(PGW_REASON_ROW_IN_RESULT); /* 9 */
            int b = relevance(t, &fs, mm, w, i, PGW_SIDE_OLD);
            int a = relevance(t, &fs, mm, w, i, PGW_SIDE_NEW);
            if (b == PGWI_NO && a == PGWI_NO) { /* 10 */
                used |= USED_VALUES;
                continue;
            }
            if (!cols_ok)
                return refresh(PGW_REASON_COLUMNS_UNKNOWN); /* 11 */
            if (tracked) {
                if (!fchg && (!schg || !windowed))
                    continue; /* 12: r ∉ R keeps relevance and position */
                if (fchg && a == PGWI_NO && (b == PGWI_NO || t->offset == 0)) {
                    used |= USED_VALUES; /* 13 */
                    continue;
                }
            }
            if (empty && a == PGWI_NO) {
                used |= USED_EMPTY; /* E2: it cannot enter */
                continue;
            }
            if (bounded) {
                int wr = window_update(t, d, mm, w, i, b, a, fchg);
                if (wr) {
                    used |= wr; /* W1, W2 */
                    continue;
                }
            }
            if (fchg)
                return refresh(PGW_REASON_FILTER_COLUMN_CHANGED); /* 14 */
            if (schg && ordered)
                return refresh(PGW_REASON_SORT_COLUMN_CHANGED); /* 15 */
            return refresh(PGW_REASON_RESULT_UNKNOWN);          /* 16 */
        }
        /* Delete of the old version, insert of the new one. */
        if (pgwi_row_exists(w, i, PGW_SIDE_OLD) != PGWI_NO) {
            if (IN_R())
                return refresh(PGW_REASON_ROW_IN_RESULT); /* 17 */
            if (relevance(t, &fs, mm, w, i, PGW_SIDE_OLD) == PGWI_NO)
                used |= USED_VALUES; /* 18 */
            else if (tracked && t->offset == 0)
                ; /* 19 */
            else if (empty)
                used |= USED_EMPTY; /* E3 */
            else if (bounded &&
                     window_pos(t, d, mm, w, i, PGW_SIDE_OLD, cols_ok) == POS_BEYOND)
                used |= USED_BEYOND; /* W3 */
            else
                return refresh(PGW_REASON_DELETE_IN_WINDOW); /* 20 */
        }
        if (pgwi_row_exists(w, i, PGW_SIDE_NEW) != PGWI_NO) {
            if (relevance(t, &fs, mm, w, i, PGW_SIDE_NEW) == PGWI_NO)
                used |= USED_VALUES; /* 21 */
            else if (bounded && d->bounds_full &&
                     window_pos(t, d, mm, w, i, PGW_SIDE_NEW, cols_ok) == POS_BEYOND)
                used |= USED_BEYOND; /* W4 */
            else
                return refresh(PGW_REASON_INSERT_MAY_ENTER); /* 22 */
        }
#undef IN_R
    }
    if (used & USED_EMPTY)
        return skip(PGW_REASON_WINDOW_EMPTY);
    if (used & USED_BEFORE)
        return skip(PGW_REASON_BEFORE_WINDOW);
    if (used & USED_BEYOND)
        return skip(PGW_REASON_BEYOND_WINDOW);
    return skip(used & USED_VALUES ? PGW_REASON_VALUES_DISJOINT : PGW_REASON_ROWS_DISJOINT);
}

pgw_verdict pgwi_decide_view(const pgwi_dview *d, bool r_unknown, const pgw_write *w,
                             pgwi_wmemo *m)
{
    if (w->op == PGW_OP_RESET)
        return refresh(PGW_REASON_SCOPE_RESET); /* 2 */
    if (d->undeclared)
        return refresh(PGW_REASON_UNDECLARED); /* 3 */
    const pgwi_tdep *t = NULL;
    if (m->table) { /* interned names: compared by address */
        for (uint32_t i = 0; i < d->n_tables && !t; i++)
            if (d->tables[i].table == m->table && d->tables[i].schema == m->schema)
                t = &d->tables[i];
    } else {
        t = pgwi_find_table(d, w);
    }
    if (!t)
        return skip(PGW_REASON_TABLE_NOT_READ); /* 4 */
    if (w->op == PGW_OP_TRUNCATE)
        return refresh(PGW_REASON_TRUNCATE); /* 5 */
    if (w->op == PGW_OP_DDL)
        return refresh(PGW_REASON_DDL); /* 5: any row and column may differ */
    if (w->op != PGW_OP_INSERT && w->op != PGW_OP_UPDATE && w->op != PGW_OP_DELETE)
        return refresh(PGW_REASON_WRITE_UNKNOWN); /* 6 */
    return decide_table(t, t == &d->tables[0], d, r_unknown, w, m);
}

int pgw_decide(pgw_verdict *out, const pgw_deps *deps, const pgw_write *write, pgw_error *err)
{
    if (!out)
        return pgwi_error(err, PGW_EINVAL, "decide: out is NULL");
    if (!deps)
        return pgwi_error(err, PGW_EINVAL, "decide: deps is NULL");
    if (!write)
        return pgwi_error(err, PGW_EINVAL, "decide: write is NULL");
    if (!pgwi_scope_eq(&deps->scope, &write->scope)) {
        out->refresh = false; /* 1 */
        out->reason = PGW_REASON_SCOPE_DISJOINT;
        return PGW_OK;
    }
    pgwi_dview d;
    pgwi_deps_view(&d, deps);
    pgwi_wmemo m;
    pgwi_wmemo_init(&m, write);
    *out = pgwi_decide_view(&d, false, write, &m);
    return PGW_OK;
}
