/*
 * tests/unit/inval_oracle.h — an in-test oracle for the invalidation rules:
 * two small random tables ("ta", "tb"; single or composite primary keys),
 * random queries over them, random statements, and the truthful write set
 * each statement produces. The oracle evaluates each query before and after
 * the statement; the library decides from the write set alone.
 *
 * Used by the differential test (check_inval_diff.c) and by the index
 * equivalence test (check_index.c).
 * SPDX-License-Identifier: MIT
 */
#ifndef PGW_INVAL_ORACLE_H
#define PGW_INVAL_ORACLE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgw_test.h"
#include "pgwitness/pgwitness.h"

/* ---- random numbers (splitmix64) ---- */

typedef struct orng {
    uint64_t s;
} orng;

static inline uint64_t orng_next(orng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline int orng_int(orng *r, int n) /* [0, n) */
{
    return (int)(orng_next(r) % (uint64_t)n);
}
static inline bool orng_p(orng *r, int percent)
{
    return orng_int(r, 100) < percent;
}

/* ---- tables ---- */

#define ONCOL 5
#define OMAXR 24
#define ONULL (-1)
static const char *const ocol[ONCOL] = {"id", "k", "a", "b", "c"};
static const char *const otab[2] = {"ta", "tb"};

typedef struct orow {
    int8_t v[ONCOL]; /* ONULL or 0..99 */
} orow;

typedef struct otable {
    orow r[OMAXR];
    int n;
    bool composite; /* key (id, k) instead of (id) */
    /* The comparison type of each column (the key columns are integers):
     * a data value v is written as the text of step 2v of its type
     * (o_typed_text), so text order follows v's order in every type. */
    pgw_cmp_type ty[ONCOL];
} otable;

/* ---- typed text ---- */

/* The text of step x2 in [-1, 7] of a comparison type: strictly increasing
 * in x2 under the type's order. Values are the even steps (v = x2 / 2),
 * in the canonical output form a write source sends; range bounds take
 * any step, odd ones between two values, spelt in one of several forms
 * (variant: 0 is canonical; others use leading zeros, exponents, 'T',
 * trailing zeros, other UTC offsets, infinities). */
static inline void o_typed_text(char out[48], pgw_cmp_type ty, int x2, int variant)
{
    static const char *const text[9] = {"", "A", "A ", "AB", "B", "a", "ab", "b", "\xc3\xa9"};
    static const char *const dates[9] = {"2024-02-26", "2024-02-27", "2024-02-28",
                                         "2024-02-29", "2024-03-01", "2024-03-02",
                                         "2024-03-03", "2024-03-04", "2024-03-05"};
    int q = x2 * 5 - 15; /* INT: -20..20; NUMERIC: q / 10 */
    int h = x2 + 1;      /* TIMESTAMP(TZ): 2024-02-29 23:59:58 UTC + h/2 s */
    switch (ty) {
    case PGW_CMP_INT:
        if (variant % 3 == 1)
            snprintf(out, 48, "%s0%d", q < 0 ? "-" : "+", q < 0 ? -q : q);
        else if (variant % 3 == 2)
            snprintf(out, 48, " %d ", q);
        else
            snprintf(out, 48, "%d", q);
        return;
    case PGW_CMP_NUMERIC: {
        int a = q < 0 ? -q : q;
        const char *sg = q < 0 ? "-" : "";
        switch (variant % 4) {
        case 1:
            snprintf(out, 48, "%s%de-1", sg, a);
            return;
        case 2:
            snprintf(out, 48, "%s00%d.%d000", q == 0 && variant > 4 ? "-" : sg, a / 10, a % 10);
            return;
        case 3:
            snprintf(out, 48, "%s%d.%d", sg, a / 10, a % 10);
            return;
        default:
            snprintf(out, 48, "%s%d.%d0", sg, a / 10, a % 10); /* numeric(3,2) */
            return;
        }
    }
    case PGW_CMP_DATE:
        if (variant % 3 == 1 && (x2 == -1 || x2 == 7))
            snprintf(out, 48, "%s", x2 < 0 ? "-infinity" : "infinity");
        else if (variant % 3 == 2 && x2 == -1)
            snprintf(out, 48, "2024-02-26 BC");
        else
            snprintf(out, 48, "%s", dates[h]);
        return;
    case PGW_CMP_TIMESTAMP:
    case PGW_CMP_TIMESTAMPTZ: {
        bool tz = ty == PGW_CMP_TIMESTAMPTZ;
        if (variant % 4 == 3 && (x2 == -1 || x2 == 7)) {
            snprintf(out, 48, "%s", x2 < 0 ? "-infinity" : "infinity");
            return;
        }
        /* seconds of the day in UTC, from 2024-02-29 23:59:58 */
        int sec = 86398 + h / 2, day = 29;
        int off = 0; /* minutes east of UTC */
        const char *offs = "+00";
        if (tz && variant % 4 == 1) {
            off = 330;
            offs = "+05:30";
        } else if (tz && variant % 4 == 2) {
            off = -480;
            offs = "-08";
        }
        sec += off * 60;
        if (sec >= 86400) {
            sec -= 86400;
            day++;
        }
        char frac[8] = "";
        if (h % 2)
            snprintf(frac, sizeof frac, "%s", variant % 2 ? ".500000" : ".5");
        snprintf(out, 48, "2024-%s %02d:%02d:%02d%s%s", day == 29 ? "02-29" : "03-01",
                 sec / 3600, sec / 60 % 60, sec % 60, frac, tz ? offs : "");
        if (!tz && variant % 2)
            out[10] = 'T';
        return;
    }
    default:
        snprintf(out, 48, "%s", text[h]);
        return;
    }
}

static inline int o_nkey(const otable *t)
{
    return t->composite ? 2 : 1;
}

static inline bool o_key_eq(const otable *t, const orow *x, const orow *y)
{
    return x->v[0] == y->v[0] && (!t->composite || x->v[1] == y->v[1]);
}

static inline bool o_key_used(const otable *t, const orow *x)
{
    for (int i = 0; i < t->n; i++)
        if (o_key_eq(t, &t->r[i], x))
            return true;
    return false;
}

static inline int8_t o_data(orng *r)
{
    return orng_p(r, 15) ? ONULL : (int8_t)orng_int(r, 4);
}

static inline void o_new_key(orng *r, const otable *t, orow *x)
{
    do {
        x->v[0] = (int8_t)orng_int(r, 20);
        if (t->composite)
            x->v[1] = (int8_t)orng_int(r, 2);
    } while (o_key_used(t, x));
}

static inline void o_table_random(orng *r, otable *t)
{
    t->composite = orng_p(r, 30);
    t->ty[0] = t->ty[1] = PGW_CMP_INT;
    for (int c = 2; c < ONCOL; c++)
        t->ty[c] = (pgw_cmp_type)(PGW_CMP_INT + orng_int(r, 6));
    t->n = 0;
    int n = orng_int(r, 9);
    for (int i = 0; i < n; i++) {
        orow x;
        for (int c = 0; c < ONCOL; c++)
            x.v[c] = o_data(r);
        o_new_key(r, t, &x);
        t->r[t->n++] = x;
    }
}

/* ---- queries ---- */

enum { F_EQ, F_EQ_NOVAL, F_IN, F_GT, F_ISNULL, F_COLEQ, F_RANGE, F_KINDS };
enum { Q_SINGLE, Q_TWO, Q_JOIN, Q_COUNT, Q_SUM };

typedef struct ofilter {
    int col, kind, v1, v2, col2;
    /* F_RANGE (and F_GT: lower exclusive at 2 v1): each bound's kind
     * (pgw_bound_kind) and step x2 in [-1, 7] (even on key columns), the
     * spelling of the bounds' text */
    int lk, hk, lu, hu, var;
} ofilter;

typedef struct oqtab {
    bool all;
    int proj;   /* bitmask of projected columns (when !all) */
    ofilter f[3];
    int nf;
    int sort[2];
    bool desc[2], nulls_first[2]; /* per sort column */
    int ns;
    int limit, offset; /* limit -1: none */
} oqtab;

typedef struct oquery {
    int kind;
    int sumcol; /* Q_SUM: the summed column */
    oqtab t[2];
    bool tracked;
} oquery;

static inline void o_qtab_random(orng *r, oqtab *q, bool window)
{
    q->all = orng_p(r, 20);
    q->proj = orng_int(r, 1 << ONCOL);
    q->nf = orng_int(r, 4);
    for (int i = 0; i < q->nf; i++) {
        ofilter *f = &q->f[i];
        f->col = orng_int(r, ONCOL);
        f->kind = orng_int(r, F_KINDS);
        f->v1 = orng_int(r, 4);
        f->v2 = orng_int(r, 4);
        f->col2 = (f->col + 1 + orng_int(r, ONCOL - 1)) % ONCOL;
        f->var = orng_int(r, 8);
        if (f->kind == F_GT) {
            f->lk = PGW_BOUND_EXCLUSIVE;
            f->lu = 2 * f->v1;
            f->hk = PGW_BOUND_NONE;
            f->hu = 0;
        } else if (f->kind == F_RANGE) {
            f->lk = orng_int(r, 3);
            f->hk = orng_int(r, 3);
            if (f->lk == PGW_BOUND_NONE && f->hk == PGW_BOUND_NONE)
                f->hk = PGW_BOUND_INCLUSIVE;
            f->lu = orng_int(r, 9) - 1;
            f->hu = orng_int(r, 9) - 1;
            if (f->col < 2) { /* integers of the key domain: even steps */
                f->lu &= ~1;
                f->hu &= ~1;
            }
        }
    }
    q->ns = orng_int(r, 3);
    for (int i = 0; i < q->ns; i++) {
        q->sort[i] = orng_int(r, ONCOL);
        q->desc[i] = orng_p(r, 40);
        q->nulls_first[i] = orng_p(r, 40);
        if (i == 1 && q->sort[1] == q->sort[0])
            q->ns = 1;
    }
    q->limit = -1;
    q->offset = 0;
    if (window && orng_p(r, 55)) {
        int w = orng_int(r, 4);
        if (w != 3)
            q->limit = 1 + orng_int(r, 4);
        if (w >= 2)
            q->offset = 1 + orng_int(r, 2);
    }
}

static inline void o_query_random(orng *r, oquery *q)
{
    int k = orng_int(r, 100);
    q->kind = k < 55 ? Q_SINGLE : k < 70 ? Q_TWO : k < 87 ? Q_JOIN : k < 94 ? Q_COUNT : Q_SUM;
    const bool agg = q->kind == Q_COUNT || q->kind == Q_SUM;
    o_qtab_random(r, &q->t[0], !agg);
    q->sumcol = 2 + orng_int(r, ONCOL - 2);
    o_qtab_random(r, &q->t[1], q->kind == Q_TWO);
    if (q->kind == Q_JOIN) {
        q->t[1].limit = q->t[0].limit; /* the query's window */
        q->t[1].offset = q->t[0].offset;
    }
    if (agg) {
        q->t[0].ns = 0;
        q->t[0].limit = -1;
        q->t[0].offset = 0;
    }
    /* A tracked count is declared with the result IDs a host passes for a
     * result that lists no rows: none (its first table reads no column, so
     * the rules must not use them). */
    q->tracked = orng_p(r, 55);
}

static inline bool o_pass(const ofilter *f, const orow *x)
{
    int v = x->v[f->col];
    switch (f->kind) {
    case F_EQ:
    case F_EQ_NOVAL:
        return v != ONULL && v == f->v1;
    case F_IN:
        return v != ONULL && (v == f->v1 || v == f->v2);
    case F_GT:
    case F_RANGE:
        if (v == ONULL)
            return false;
        if (f->lk == PGW_BOUND_INCLUSIVE ? 2 * v < f->lu : f->lk && 2 * v <= f->lu)
            return false;
        if (f->hk == PGW_BOUND_INCLUSIVE ? 2 * v > f->hu : f->hk && 2 * v >= f->hu)
            return false;
        return true;
    case F_ISNULL:
        return v == ONULL;
    default: {
        int w = x->v[f->col2];
        return v != ONULL && w != ONULL && v == w;
    }
    }
}

static inline bool o_relevant(const oqtab *q, const orow *x)
{
    for (int i = 0; i < q->nf; i++)
        if (!o_pass(&q->f[i], x))
            return false;
    return true;
}

/* Compares two values of sort column i: ASC or DESC, NULLS FIRST or
 * LAST (PostgreSQL documentation, SELECT, "ORDER BY Clause"). */
static inline int o_cmp_sortval(const oqtab *q, int i, int a, int b)
{
    if (a == b)
        return 0;
    if (a == ONULL || b == ONULL)
        return (a == ONULL) == q->nulls_first[i] ? -1 : 1;
    int c = a < b ? -1 : 1;
    return q->desc[i] ? -c : c;
}

/* Compares by the sort columns, then the key. */
static inline int o_cmp_rows(const oqtab *q, const otable *t, const orow *x, const orow *y)
{
    for (int i = 0; i < q->ns; i++) {
        int c = o_cmp_sortval(q, i, x->v[q->sort[i]], y->v[q->sort[i]]);
        if (c)
            return c;
    }
    for (int i = 0; i < o_nkey(t); i++)
        if (x->v[i] != y->v[i])
            return x->v[i] < y->v[i] ? -1 : 1;
    return 0;
}

static inline bool o_ordered(const oqtab *q)
{
    return q->ns > 0 || q->limit >= 0 || q->offset > 0;
}

/* A result: a sequence of small integers (tuples flattened with
 * separators), compared whole. */
#define ORES_MAX 1024
typedef struct ores {
    int16_t v[ORES_MAX];
    int n;
    /* result IDs (keys of ta's rows in the result) */
    orow ids[OMAXR * OMAXR];
    int nids;
    /* the window of ta's list (or of the join): its first and last rows of
     * ta, whether it holds `limit` rows; has_bounds false when it has no
     * window or no row */
    bool has_bounds, full;
    orow bfirst, blast;
    bool empty; /* that list or join returned no row */
} ores;

/* Records the bounds of a window of ta's rows first..last (n of them). */
static inline void o_set_bounds(ores *o, const oqtab *q, const orow *first, const orow *last,
                                int n)
{
    if (n <= 0) {
        o->empty = true;
        return;
    }
    if (q->limit < 0 && q->offset == 0)
        return;
    o->has_bounds = true;
    o->full = q->limit >= 0 && n == q->limit;
    o->bfirst = *first;
    o->blast = *last;
}

static inline void o_push(ores *o, int v)
{
    ck_assert_int_lt(o->n, ORES_MAX);
    o->v[o->n++] = (int16_t)v;
}

typedef struct otuple {
    int16_t v[2 * ONCOL + 4];
    int n;
} otuple;

static inline int o_cmp_tuple(const void *a, const void *b)
{
    const otuple *x = a, *y = b;
    for (int i = 0; i < x->n && i < y->n; i++)
        if (x->v[i] != y->v[i])
            return x->v[i] < y->v[i] ? -1 : 1;
    return (x->n > y->n) - (x->n < y->n);
}

static inline void o_tuple_add(otuple *t, const oqtab *q, const orow *x)
{
    for (int c = 0; c < ONCOL; c++)
        if (q->all || (q->proj & (1 << c)))
            t->v[t->n++] = x->v[c];
}

static inline void o_add_id(ores *o, const orow *x)
{
    o->ids[o->nids++] = *x;
}

typedef struct osorted {
    const orow *r[OMAXR * OMAXR];
    const orow *r2[OMAXR * OMAXR];
    int n;
} osorted;

static const oqtab *o_cmp_q;
static const otable *o_cmp_t;
static inline int o_qsort_rows(const void *a, const void *b)
{
    return o_cmp_rows(o_cmp_q, o_cmp_t, *(const orow *const *)a, *(const orow *const *)b);
}

/* Evaluates one list query (Q_SINGLE, or one half of Q_TWO). */
static inline void o_eval_list(ores *o, const oqtab *q, const otable *t, bool ids,
                               bool bounds)
{
    const orow *rows[OMAXR];
    int n = 0;
    for (int i = 0; i < t->n; i++)
        if (o_relevant(q, &t->r[i]))
            rows[n++] = &t->r[i];
    o_cmp_q = q;
    o_cmp_t = t;
    qsort(rows, (size_t)n, sizeof rows[0], o_qsort_rows);
    int from = q->offset, to = q->limit >= 0 ? q->offset + q->limit : n;
    if (to > n)
        to = n;
    if (bounds)
        o_set_bounds(o, q, to > from ? rows[from] : NULL, to > from ? rows[to - 1] : NULL,
                     to - from);
    otuple tup[OMAXR];
    int nt = 0;
    for (int i = from; i < to; i++) {
        otuple *tp = &tup[nt++];
        tp->n = 0;
        if (ids)
            for (int k = 0; k < o_nkey(t); k++)
                tp->v[tp->n++] = rows[i]->v[k];
        if (bounds) /* ta's rows in the result, whether it shows their keys */
            o_add_id(o, rows[i]);
        o_tuple_add(tp, q, rows[i]);
    }
    if (!o_ordered(q))
        qsort(tup, (size_t)nt, sizeof tup[0], o_cmp_tuple);
    for (int i = 0; i < nt; i++) {
        for (int k = 0; k < tup[i].n; k++)
            o_push(o, tup[i].v[k]);
        o_push(o, -100);
    }
}

static const oquery *o_join_q;
static const otable *o_join_t[2];
static inline int o_qsort_pairs(const void *a, const void *b)
{
    const orow *const *x = a, *const *y = b;
    int c = o_cmp_rows(&o_join_q->t[0], o_join_t[0], x[0], y[0]);
    if (c)
        return c;
    return o_cmp_rows(&o_join_q->t[1], o_join_t[1], x[1], y[1]);
}

/* Whether a tracked list's result carries its rows' IDs: only when its
 * first table reads a column. One that reads none (SELECT FROM t) lists
 * empty rows, as an aggregate of its rows; it is declared with the result
 * IDs a host would pass for it — none — which the rules must not use. */
static inline bool o_ids_in_result(const oquery *q)
{
    return q->tracked && (q->t[0].all || q->t[0].proj != 0);
}

static inline void o_eval(ores *o, const oquery *q, const otable tabs[2])
{
    o->n = 0;
    o->nids = 0;
    o->has_bounds = false;
    o->empty = false;
    switch (q->kind) {
    case Q_SINGLE:
        o_eval_list(o, &q->t[0], &tabs[0], o_ids_in_result(q), true);
        break;
    case Q_TWO:
        o_eval_list(o, &q->t[0], &tabs[0], o_ids_in_result(q), true);
        o_push(o, -200);
        o_eval_list(o, &q->t[1], &tabs[1], false, false);
        break;
    case Q_COUNT:
    case Q_SUM: {
        /* count(*) or sum(col) (NULL over no non-NULL value); the IDs of
         * the rows aggregated are what a careless host might acknowledge */
        int n = 0, sum = 0, nn = 0;
        for (int i = 0; i < tabs[0].n; i++) {
            const orow *x = &tabs[0].r[i];
            if (!o_relevant(&q->t[0], x))
                continue;
            n++;
            o_add_id(o, x);
            if (x->v[q->sumcol] != ONULL) {
                sum += x->v[q->sumcol];
                nn++;
            }
        }
        o_push(o, q->kind == Q_COUNT ? n : nn ? sum : -999);
        break;
    }
    default: { /* Q_JOIN: ta ⋈ tb ON ta.a = tb.a */
        static const orow *pairs[OMAXR * OMAXR][2];
        int n = 0;
        for (int i = 0; i < tabs[0].n; i++) {
            const orow *x = &tabs[0].r[i];
            if (!o_relevant(&q->t[0], x) || x->v[2] == ONULL)
                continue;
            for (int j = 0; j < tabs[1].n; j++) {
                const orow *y = &tabs[1].r[j];
                if (o_relevant(&q->t[1], y) && y->v[2] == x->v[2]) {
                    pairs[n][0] = x;
                    pairs[n][1] = y;
                    n++;
                }
            }
        }
        o_join_q = q;
        o_join_t[0] = &tabs[0];
        o_join_t[1] = &tabs[1];
        qsort(pairs, (size_t)n, sizeof pairs[0], o_qsort_pairs);
        const oqtab *w = &q->t[0];
        bool ordered = o_ordered(&q->t[0]) || q->t[1].ns > 0;
        int from = w->offset, to = w->limit >= 0 ? w->offset + w->limit : n;
        if (to > n)
            to = n;
        o_set_bounds(o, w, to > from ? pairs[from][0] : NULL, to > from ? pairs[to - 1][0] : NULL,
                     to - from);
        static otuple tup[OMAXR * OMAXR];
        int nt = 0;
        for (int i = from; i < to; i++) {
            otuple *tp = &tup[nt++];
            tp->n = 0;
            if (o_ids_in_result(q))
                for (int k = 0; k < o_nkey(&tabs[0]); k++)
                    tp->v[tp->n++] = pairs[i][0]->v[k];
            o_add_id(o, pairs[i][0]);
            o_tuple_add(tp, &q->t[0], pairs[i][0]);
            tp->v[tp->n++] = -50;
            o_tuple_add(tp, &q->t[1], pairs[i][1]);
        }
        if (!ordered)
            qsort(tup, (size_t)nt, sizeof tup[0], o_cmp_tuple);
        for (int i = 0; i < nt; i++) {
            for (int k = 0; k < tup[i].n; k++)
                o_push(o, tup[i].v[k]);
            o_push(o, -100);
        }
        break;
    }
    }
}

static inline bool o_res_eq(const ores *a, const ores *b)
{
    return a->n == b->n && memcmp(a->v, b->v, (size_t)a->n * sizeof a->v[0]) == 0;
}

/* ---- declarations ---- */

static inline void o_text(char out[8], int v)
{
    snprintf(out, 8, "%d", v);
}

/* The text a write source sends for value v of column c of table t. */
static inline void o_value_text(char out[48], const otable *t, int c, int v)
{
    if (v == ONULL)
        out[0] = '\0'; /* unused: the caller passes NULL */
    else if (c < 2)
        snprintf(out, 48, "%d", v);
    else
        o_typed_text(out, t->ty[c], 2 * v, 0);
}

/* How a declaration is written: as today's rules can (ranges opaque,
 * sort columns by name), with typed ranges and sort keys, or also with the
 * bounds of the window `before` shows. */
enum { O_TODAY = 0, O_TYPED = 1, O_BOUNDS = 2 };

/* A range filter's bound at step u of column c: its text in buf. */
static inline pgw_bound o_bound(char buf[48], const otable *tab, const ofilter *f, int kind,
                                int u)
{
    if (f->col < 2)
        snprintf(buf, 48, "%d", u / 2);
    else
        o_typed_text(buf, tab->ty[f->col], u, f->var);
    pgw_bound b = {(pgw_bound_kind)kind, buf};
    return b;
}

static inline void o_declare_tab(pgw_deps *d, const oquery *q, int ti, bool count,
                                 const otable *tab, int mode, const ores *before)
{
    const oqtab *t = &q->t[ti];
    size_t e;
    ck_assert_int_eq(pgw_deps_add_table(&e, d, "public", otab[ti], NULL), PGW_OK);
    const char *names[ONCOL + 4];
    size_t n = 0;
    if (count) {
        ck_assert_int_eq(pgw_deps_set_columns(d, e, names, 0, NULL), PGW_OK);
    } else if (!t->all) {
        for (int c = 0; c < ONCOL; c++)
            if (t->proj & (1 << c))
                names[n++] = ocol[c];
        ck_assert_int_eq(pgw_deps_set_columns(d, e, names, n, NULL), PGW_OK);
    }
    for (int i = 0; i < t->nf; i++) {
        const ofilter *f = &t->f[i];
        char v1[48], v2[48];
        o_value_text(v1, tab, f->col, f->v1);
        o_value_text(v2, tab, f->col, f->v2);
        const char *vals[2] = {v1, v2};
        if ((f->kind == F_GT || f->kind == F_RANGE) && mode != O_TODAY) {
            char lb[48], ub[48];
            pgw_bound lo = o_bound(lb, tab, f, f->lk, f->lu);
            pgw_bound hi = o_bound(ub, tab, f, f->hk, f->hu);
            pgw_error err;
            ck_assert_msg(pgw_deps_add_range(d, e, ocol[f->col],
                                             f->col < 2 ? PGW_CMP_INT : tab->ty[f->col], &lo,
                                             &hi, &err) == PGW_OK,
                          "%s", err.message);
            continue;
        }
        switch (f->kind) {
        case F_EQ:
            ck_assert_int_eq(pgw_deps_add_filter(d, e, ocol[f->col], PGW_FILTER_EQ, vals, 1, NULL),
                             PGW_OK);
            break;
        case F_EQ_NOVAL:
            ck_assert_int_eq(
                pgw_deps_add_filter(d, e, ocol[f->col], PGW_FILTER_EQ, NULL, 0, NULL), PGW_OK);
            break;
        case F_IN:
            ck_assert_int_eq(pgw_deps_add_filter(d, e, ocol[f->col], PGW_FILTER_IN, vals, 2, NULL),
                             PGW_OK);
            break;
        case F_COLEQ:
            ck_assert_int_eq(
                pgw_deps_add_filter(d, e, ocol[f->col2], PGW_FILTER_OPAQUE, NULL, 0, NULL),
                PGW_OK);
            /* fallthrough */
        default:
            ck_assert_int_eq(
                pgw_deps_add_filter(d, e, ocol[f->col], PGW_FILTER_OPAQUE, NULL, 0, NULL),
                PGW_OK);
        }
    }
    if (q->kind == Q_JOIN) /* the join condition */
        ck_assert_int_eq(pgw_deps_add_filter(d, e, "a", PGW_FILTER_OPAQUE, NULL, 0, NULL),
                         PGW_OK);
    n = 0;
    pgw_sort_key keys[ONCOL + 2];
    int kcol[ONCOL + 2];
    for (int i = 0; i < t->ns; i++) {
        kcol[n] = t->sort[i];
        pgw_sort_key k = {ocol[t->sort[i]], t->sort[i] < 2 ? PGW_CMP_INT : tab->ty[t->sort[i]],
                          t->desc[i], t->nulls_first[i]};
        keys[n++] = k;
    }
    bool join_ordered = q->kind == Q_JOIN && (o_ordered(&q->t[0]) || q->t[1].ns > 0);
    /* A host that acknowledges window bounds writes the key last in ORDER
     * BY (inval.h, "order_by"), so that no two rows tie. */
    bool key_last = mode == O_BOUNDS && ti == 0 && (t->limit >= 0 || t->offset > 0);
    if (join_ordered || key_last) {
        /* ORDER BY ta.sort..., ta.key, tb.sort..., tb.key: each key is an
         * ORDER BY column of its table. */
        for (int c = 0; c < (join_ordered || tab->composite ? 2 : 1); c++) {
            bool dup = false;
            for (size_t i = 0; i < n; i++)
                dup |= kcol[i] == c;
            if (!dup) {
                kcol[n] = c;
                pgw_sort_key k = {ocol[c], PGW_CMP_INT, false, false};
                keys[n++] = k;
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        names[i] = keys[i].column;
    if (n && mode == O_TODAY)
        ck_assert_int_eq(pgw_deps_set_order_by(d, e, names, n, NULL), PGW_OK);
    else if (n)
        ck_assert_int_eq(pgw_deps_set_sort_keys(d, e, keys, n, NULL), PGW_OK);
    const oqtab *w = q->kind == Q_JOIN ? &q->t[0] : t;
    if (w->limit >= 0 || w->offset > 0)
        ck_assert_int_eq(pgw_deps_set_window(d, e, w->limit, w->offset, NULL), PGW_OK);
    if (mode == O_BOUNDS && ti == 0 && before && before->empty) {
        const pgw_window_bounds none = {NULL, NULL, 0, false};
        ck_assert_int_eq(pgw_deps_set_window_bounds(d, &none, NULL), PGW_OK);
    } else if (mode == O_BOUNDS && ti == 0 && before && before->has_bounds && n) {
        /* the host's acknowledgement of the rerun that gave `before` */
        char fb[ONCOL + 2][48], lb[ONCOL + 2][48];
        const char *first[ONCOL + 2], *last[ONCOL + 2];
        for (size_t i = 0; i < n; i++) {
            int c = kcol[i], fv = before->bfirst.v[c], lv = before->blast.v[c];
            o_value_text(fb[i], tab, c, fv);
            o_value_text(lb[i], tab, c, lv);
            first[i] = fv == ONULL ? NULL : fb[i];
            last[i] = lv == ONULL ? NULL : lb[i];
        }
        pgw_window_bounds b = {first, last, n, before->full};
        pgw_error err;
        ck_assert_msg(pgw_deps_set_window_bounds(d, &b, &err) == PGW_OK, "%s", err.message);
    }
}

static inline void o_rowid(char buf[2][8], const char *parts[2], pgw_rowid *id, const orow *x,
                           bool composite)
{
    o_text(buf[0], x->v[0]);
    o_text(buf[1], x->v[1]);
    parts[0] = buf[0];
    parts[1] = buf[1];
    id->parts = parts;
    id->n_parts = composite ? 2 : 1;
}

/* Builds the declaration of q with its result IDs from `before`. */
static inline pgw_deps *o_declare(const oquery *q, const pgw_scope *sc, const ores *before,
                                  const otable tabs[2], int mode)
{
    const bool ta_composite = tabs[0].composite;
    pgw_deps *d = NULL;
    ck_assert_int_eq(pgw_deps_new(&d, sc, "q", NULL), PGW_OK);
    const bool agg = q->kind == Q_COUNT || q->kind == Q_SUM;
    o_declare_tab(d, q, 0, q->kind == Q_COUNT, &tabs[0], mode, before);
    if (q->kind == Q_SUM) {
        const char *col = ocol[q->sumcol];
        ck_assert_int_eq(pgw_deps_set_columns(d, 0, &col, 1, NULL), PGW_OK);
    }
    if (q->kind == Q_TWO || q->kind == Q_JOIN)
        o_declare_tab(d, q, 1, false, &tabs[1], mode, NULL);
    /* Today, a host declares result IDs of a list that shows its rows'
     * keys, and none for a count (ignored) or a sum (the docs say so);
     * with result kinds, it declares what the result is and passes the
     * IDs of the rows it read whatever it is: an aggregate's are ignored,
     * and a list that reads no column uses them. */
    if (mode != O_TODAY)
        ck_assert_int_eq(
            pgw_deps_set_result_kind(d, agg ? PGW_RESULT_AGGREGATE : PGW_RESULT_LIST, NULL),
            PGW_OK);
    if (q->tracked && (mode != O_TODAY || (!agg && o_ids_in_result(q)))) {
        static char bufs[OMAXR * OMAXR][2][8];
        static const char *parts[OMAXR * OMAXR][2];
        static pgw_rowid ids[OMAXR * OMAXR];
        for (int i = 0; i < before->nids; i++)
            o_rowid(bufs[i], parts[i], &ids[i], &before->ids[i], ta_composite);
        ck_assert_int_eq(pgw_deps_set_result_ids(d, ids, (size_t)before->nids, NULL), PGW_OK);
    }
    return d;
}

/* ---- statements and their write sets ---- */

/* Whether write sets carry every column of every row on each side it
 * exists, as a logical-replication stream does with REPLICA IDENTITY FULL
 * (else a random subset of columns, each value dropped one time in ten,
 * as statement triggers configured with some value columns send them). */
static bool o_full_rows;

typedef struct ostmt {
    int table; /* 0: ta, 1: tb */
    pgw_op op;
    otable after[2];
} ostmt;

/* Applies a random statement to a copy of `tabs` and builds the truthful
 * write set, randomly degraded the ways a real notification can be. */
static inline pgw_write *o_statement(orng *r, const otable tabs[2], ostmt *st,
                                     const pgw_scope *sc)
{
    st->table = orng_int(r, 2);
    st->after[0] = tabs[0];
    st->after[1] = tabs[1];
    otable *t = &st->after[st->table];
    const otable *b = &tabs[st->table];
    int k = orng_int(r, 100);
    st->op = k < 3 ? PGW_OP_TRUNCATE : k < 33 ? PGW_OP_INSERT : k < 78 ? PGW_OP_UPDATE
                                                                      : PGW_OP_DELETE;
    if (st->op != PGW_OP_INSERT && st->op != PGW_OP_TRUNCATE && b->n == 0)
        st->op = PGW_OP_INSERT;
    pgw_write *w = NULL;
    ck_assert_int_eq(pgw_write_new(&w, sc, "public", otab[st->table], st->op, NULL), PGW_OK);
    if (st->op == PGW_OP_TRUNCATE) {
        t->n = 0;
        return w;
    }
    /* rows: (old version or none, new version or none) */
    orow oldv[8], newv[8];
    bool has_old[8], has_new[8];
    int nrows = 0;
    bool pk_changed = false;
    int changed_cols = 0;
    int n = 1 + orng_int(r, 3);
    if (st->op == PGW_OP_INSERT) {
        if (t->n + n > OMAXR)
            n = OMAXR - t->n;
        for (int i = 0; i < n; i++) {
            orow x;
            for (int c = 0; c < ONCOL; c++)
                x.v[c] = o_data(r);
            o_new_key(r, t, &x);
            t->r[t->n++] = x;
            has_old[nrows] = false;
            has_new[nrows] = true;
            newv[nrows++] = x;
        }
    } else {
        if (n > b->n)
            n = b->n;
        if (st->op == PGW_OP_UPDATE && orng_p(r, 4))
            n = 0; /* UPDATE ... WHERE false */
        int pick[OMAXR], np = 0;
        for (int i = 0; i < t->n; i++)
            pick[np++] = i;
        for (int i = 0; i < n; i++) { /* partial shuffle */
            int j = i + orng_int(r, np - i);
            int tmp = pick[i];
            pick[i] = pick[j];
            pick[j] = tmp;
        }
        if (st->op == PGW_OP_DELETE) {
            bool del[OMAXR] = {false};
            for (int i = 0; i < n; i++) {
                del[pick[i]] = true;
                has_old[nrows] = true;
                has_new[nrows] = false;
                oldv[nrows++] = t->r[pick[i]];
            }
            int m = 0;
            for (int i = 0; i < t->n; i++)
                if (!del[i])
                    t->r[m++] = t->r[i];
            t->n = m;
        } else {
            for (int i = 0; i < n; i++) {
                orow *x = &t->r[pick[i]];
                orow o = *x;
                for (int c = 2; c < ONCOL; c++)
                    if (orng_p(r, 40))
                        x->v[c] = o_data(r);
                if (orng_p(r, 12)) { /* key change */
                    orow nk = *x;
                    o_new_key(r, t, &nk);
                    x->v[0] = nk.v[0];
                    x->v[1] = nk.v[1];
                } else if (!t->composite && orng_p(r, 30)) {
                    x->v[1] = o_data(r); /* k is plain data without a composite key */
                }
                for (int c = 0; c < ONCOL; c++)
                    if (o.v[c] != x->v[c])
                        changed_cols |= 1 << c;
                if (!o_key_eq(t, &o, x)) {
                    pk_changed = true;
                    has_old[nrows] = true;
                    has_new[nrows] = false;
                    oldv[nrows++] = o;
                    has_old[nrows] = false;
                    has_new[nrows] = true;
                    newv[nrows++] = *x;
                } else {
                    has_old[nrows] = has_new[nrows] = true;
                    oldv[nrows] = o;
                    newv[nrows++] = *x;
                }
            }
        }
    }
    /* ids */
    bool ids_unknown = orng_p(r, 4);
    if (!ids_unknown) {
        static char bufs[8][2][8];
        static const char *parts[8][2];
        pgw_rowid ids[8];
        for (int i = 0; i < nrows; i++)
            o_rowid(bufs[i], parts[i], &ids[i], has_old[i] ? &oldv[i] : &newv[i], t->composite);
        ck_assert_int_eq(pgw_write_set_ids(w, ids, (size_t)nrows, orng_p(r, 4), NULL), PGW_OK);
    }
    if (st->op == PGW_OP_UPDATE) {
        ck_assert_int_eq(pgw_write_set_pk_changed(w, pk_changed, NULL), PGW_OK);
        if (!orng_p(r, 5)) {
            const char *names[ONCOL];
            size_t nc = 0;
            for (int c = 0; c < ONCOL; c++)
                if (changed_cols & (1 << c))
                    names[nc++] = ocol[c];
            ck_assert_int_eq(pgw_write_set_columns(w, names, nc, orng_p(r, 3), NULL), PGW_OK);
        }
    } else if (orng_p(r, 50)) {
        ck_assert_int_eq(pgw_write_set_columns(w, ocol, ONCOL, false, NULL), PGW_OK);
    }
    /* old/new values of the configured columns */
    if (!ids_unknown) {
        int vcols = o_full_rows ? (1 << ONCOL) - 1 : orng_int(r, 1 << ONCOL);
        for (int i = 0; i < nrows; i++) {
            for (int side = 0; side < 2; side++) {
                bool exists = side == 0 ? has_old[i] : has_new[i];
                const orow *x = side == 0 ? &oldv[i] : &newv[i];
                if (!exists) {
                    if (pk_changed)
                        ck_assert_int_eq(
                            pgw_write_set_row_absent(w, (size_t)i, (pgw_side)side, NULL),
                            PGW_OK);
                    continue;
                }
                for (int c = 0; c < ONCOL; c++) {
                    if (!(vcols & (1 << c)) || (!o_full_rows && orng_p(r, 10)))
                        continue;
                    char v[48];
                    o_value_text(v, t, c, x->v[c]);
                    ck_assert_int_eq(pgw_write_set_value(w, (size_t)i, (pgw_side)side, ocol[c],
                                                         x->v[c] == ONULL ? NULL : v, NULL),
                                     PGW_OK);
                }
            }
        }
    }
    return w;
}

static inline bool o_reads(const oquery *q, int table)
{
    return table == 0 || q->kind == Q_TWO || q->kind == Q_JOIN;
}

#endif
