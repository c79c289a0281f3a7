/*
 * lib/core/decide.c — the decision rules (the rule table in inval.h; the
 * rule numbers in comments refer to it). Pure and allocation-free: shared by
 * pgw_decide() and the reverse index.
 * SPDX-License-Identifier: MIT
 */
#include "inval_internal.h"

const pgwi_tdep *pgwi_find_table(const pgwi_dview *d, const pgw_write *w)
{
    for (uint32_t i = 0; i < d->n_tables; i++) {
        const pgwi_tdep *t = &d->tables[i];
        if (pgwi_str_eq(t->table, w->table) && pgwi_str_eq(t->schema, w->schema))
            return t;
    }
    return NULL;
}

bool pgwi_filter_admits(const pgwi_filter *f, const pgwi_str *v)
{
    if (v == &pgwi_sqlnull)
        return false; /* SQL: NULL = x is never true */
    for (uint32_t i = 0; i < f->n_vals; i++)
        if (pgwi_str_eq(f->vals[i], v))
            return true;
    return false;
}

static bool any_changed(const pgw_write *w, const pgwi_str *const *names, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (pgwi_write_changed(w, names[i]))
            return true;
    return false;
}

static bool filter_col_changed(const pgw_write *w, const pgwi_tdep *t)
{
    for (uint32_t i = 0; i < t->n_filters; i++)
        if (pgwi_write_changed(w, t->filters[i].col))
            return true;
    return false;
}

/* Where each value filter's column sits among the write's value columns.
 * The first FMAP_N filters are resolved once per decision; later ones per
 * row (declarations with that many filters are rare). */
#define FMAP_N 16
typedef struct fmap {
    int32_t vc;   /* value column, -1: none */
    bool changed; /* among the changed columns (true when those are unknown) */
} fmap;

static fmap resolve(const pgw_write *w, const pgwi_filter *f)
{
    fmap m = {-1, true};
    if (!f->vals_known || w->n_vcols == 0)
        return m;
    m.vc = pgwi_write_vcol(w, f->col);
    m.changed = !pgwi_cols_ok(w) || pgwi_write_changed(w, f->col);
    return m;
}

/* Relevance of row i on a side: PGWI_NO when a value filter rejects a known
 * value, else PGWI_MAYBE. `used` is set when a value decided. */
static int relevance(const pgwi_tdep *t, const fmap *fm, const pgw_write *w, uint32_t i,
                     int side)
{
    if (pgwi_row_exists(w, i, side) == PGWI_NO)
        return PGWI_NO;
    if (!w->vals)
        return PGWI_MAYBE;
    for (uint32_t k = 0; k < t->n_filters; k++) {
        const pgwi_filter *f = &t->filters[k];
        if (!f->vals_known)
            continue;
        fmap m = k < FMAP_N ? fm[k] : resolve(w, f);
        if (m.vc < 0)
            continue;
        const pgwi_str *v = pgwi_row_value(w, i, side, m.vc, m.changed);
        if (v && !pgwi_filter_admits(f, v))
            return PGWI_NO;
    }
    return PGWI_MAYBE;
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
                                bool r_unknown, const pgw_write *w)
{
    const bool windowed = t->limit >= 0 || t->offset > 0;
    const bool ordered = windowed || t->n_sort > 0;
    const bool tracked = first && d->rids_known && !r_unknown;
    const bool key_read = ordered || tracked;
    const bool cols_ok = pgwi_cols_ok(w);

    /* Rule 7: only unread columns changed. */
    if (w->op == PGW_OP_UPDATE && cols_ok) {
        bool read_hit = false;
        if (w->cols_mask & t->read_mask) {
            if (t->all_cols)
                read_hit = w->n_cols > 0;
            else
                read_hit = any_changed(w, t->cols, t->n_cols) || filter_col_changed(w, t) ||
                           any_changed(w, t->sort, t->n_sort);
        }
        if (!read_hit && !(w->pk_changed && key_read))
            return skip(PGW_REASON_COLUMNS_DISJOINT);
    }
    /* Rule 8: rows unknown. */
    if (!pgwi_ids_ok(w))
        return refresh(w->op == PGW_OP_INSERT ? PGW_REASON_INSERT_MAY_ENTER
                                              : PGW_REASON_IDS_UNKNOWN);

    fmap fm[FMAP_N];
    for (uint32_t k = 0; k < t->n_filters && k < FMAP_N; k++)
        fm[k] = resolve(w, &t->filters[k]);
    const bool fchg = !cols_ok || filter_col_changed(w, t);
    const bool schg = !cols_ok || any_changed(w, t->sort, t->n_sort);
    const bool same = pgwi_same_row(w);
    bool used_values = false;

    for (uint32_t i = 0; i < w->n_ids; i++) {
        /* Whether the row is in R, searched only where a rule asks (an
         * insert never does: the result IDs stay unread). */
#define IN_R() (tracked && pgwi_fps_contains(d->rids, d->n_rids, w->ids[i].fp))
        if (same) {
            if (IN_R())
                return refresh(PGW_REASON_ROW_IN_RESULT); /* 9 */
            int b = relevance(t, fm, w, i, PGW_SIDE_OLD);
            int a = relevance(t, fm, w, i, PGW_SIDE_NEW);
            if (b == PGWI_NO && a == PGWI_NO) { /* 10 */
                used_values = true;
                continue;
            }
            if (!cols_ok)
                return refresh(PGW_REASON_COLUMNS_UNKNOWN); /* 11 */
            if (tracked) {
                if (!fchg && (!schg || !windowed))
                    continue; /* 12: r ∉ R keeps relevance and position */
                if (fchg && a == PGWI_NO && (b == PGWI_NO || t->offset == 0)) {
                    used_values = true; /* 13 */
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
            if (relevance(t, fm, w, i, PGW_SIDE_OLD) == PGWI_NO)
                used_values = true; /* 18 */
            else if (!(tracked && t->offset == 0))
                return refresh(PGW_REASON_DELETE_IN_WINDOW); /* 20; else 19 */
        }
        if (pgwi_row_exists(w, i, PGW_SIDE_NEW) != PGWI_NO) {
            if (relevance(t, fm, w, i, PGW_SIDE_NEW) == PGWI_NO)
                used_values = true; /* 21 */
            else
                return refresh(PGW_REASON_INSERT_MAY_ENTER); /* 22 */
        }
#undef IN_R
    }
    return skip(used_values ? PGW_REASON_VALUES_DISJOINT : PGW_REASON_ROWS_DISJOINT);
}

pgw_verdict pgwi_decide_view(const pgwi_dview *d, bool r_unknown, const pgw_write *w)
{
    if (w->op == PGW_OP_RESET)
        return refresh(PGW_REASON_SCOPE_RESET); /* 2 */
    if (d->undeclared)
        return refresh(PGW_REASON_UNDECLARED); /* 3 */
    const pgwi_tdep *t = pgwi_find_table(d, w);
    if (!t)
        return skip(PGW_REASON_TABLE_NOT_READ); /* 4 */
    if (w->op == PGW_OP_TRUNCATE)
        return refresh(PGW_REASON_TRUNCATE); /* 5 */
    if (w->op != PGW_OP_INSERT && w->op != PGW_OP_UPDATE && w->op != PGW_OP_DELETE)
        return refresh(PGW_REASON_WRITE_UNKNOWN); /* 6 */
    return decide_table(t, t == &d->tables[0], d, r_unknown, w);
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
    *out = pgwi_decide_view(&d, false, write);
    return PGW_OK;
}
