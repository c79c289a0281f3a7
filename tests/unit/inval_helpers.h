/*
 * tests/unit/inval_helpers.h — terse builders for invalidation tests:
 * comma-separated lists become name and ID arrays. Every call asserts
 * success, so a test reads like the scenario it checks.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGW_INVAL_HELPERS_H
#define PGW_INVAL_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgw_test.h"
#include "pgwitness/pgwitness.h"

#define IH_MAX 600

typedef struct ih_list {
    char buf[8192];
    const char *items[IH_MAX];
    size_t n;
} ih_list;

/* Splits "a,b,c" (empty string: no item). Composite IDs use '|': "1|x". */
static inline void ih_split(ih_list *l, const char *csv, char sep)
{
    l->n = 0;
    if (!csv || !*csv)
        return;
    strncpy(l->buf, csv, sizeof l->buf - 1);
    l->buf[sizeof l->buf - 1] = '\0';
    char *p = l->buf;
    for (;;) {
        ck_assert_uint_lt(l->n, IH_MAX);
        l->items[l->n++] = p;
        char *c = strchr(p, sep);
        if (!c)
            break;
        *c = '\0';
        p = c + 1;
    }
}

typedef struct ih_ids {
    ih_list parts[1];
    ih_list tmp;
    const char *flat[IH_MAX];
    pgw_rowid ids[IH_MAX];
    size_t n;
} ih_ids;

/* "1,2,3|x" → row IDs (a '|' makes a composite key). */
static inline void ih_ids_parse(ih_ids *r, const char *csv)
{
    ih_split(&r->parts[0], csv, ',');
    r->n = 0;
    size_t used = 0;
    for (size_t i = 0; i < r->parts[0].n; i++) {
        char *s = (char *)r->parts[0].items[i];
        size_t start = used;
        for (;;) {
            r->flat[used++] = s;
            char *c = strchr(s, '|');
            if (!c)
                break;
            *c = '\0';
            s = c + 1;
        }
        r->ids[r->n].parts = &r->flat[start];
        r->ids[r->n].n_parts = used - start;
        r->n++;
    }
}

static const pgw_scope IH_ACME = {"p1", "acme", "app"};
static const pgw_scope IH_GLOBEX = {"p1", "globex", "app"};
static const pgw_scope IH_LANDLORD = {"p1", NULL, "landlord"};

static inline pgw_deps *ih_deps(const pgw_scope *sc, const char *query)
{
    pgw_deps *d = NULL;
    pgw_error err;
    ck_assert_int_eq(pgw_deps_new(&d, sc, query, &err), PGW_OK);
    return d;
}

static inline size_t ih_table(pgw_deps *d, const char *table)
{
    size_t t;
    ck_assert_int_eq(pgw_deps_add_table(&t, d, "public", table, NULL), PGW_OK);
    return t;
}

static inline void ih_cols(pgw_deps *d, size_t t, const char *csv)
{
    ih_list l;
    ih_split(&l, csv, ',');
    ck_assert_int_eq(pgw_deps_set_columns(d, t, l.items, l.n, NULL), PGW_OK);
}

static inline void ih_filter(pgw_deps *d, size_t t, const char *col, pgw_filter_op op,
                             const char *csv)
{
    ih_list l;
    ih_split(&l, csv, ',');
    ck_assert_int_eq(pgw_deps_add_filter(d, t, col, op, csv ? l.items : NULL, l.n, NULL),
                     PGW_OK);
}

static inline void ih_sort(pgw_deps *d, size_t t, const char *csv)
{
    ih_list l;
    ih_split(&l, csv, ',');
    ck_assert_int_eq(pgw_deps_set_order_by(d, t, l.items, l.n, NULL), PGW_OK);
}

static inline void ih_result(pgw_deps *d, const char *csv)
{
    ih_ids r;
    ih_ids_parse(&r, csv);
    ck_assert_int_eq(pgw_deps_set_result_ids(d, r.ids, r.n, NULL), PGW_OK);
}

static inline pgw_write *ih_write(const pgw_scope *sc, const char *table, pgw_op op)
{
    pgw_write *w = NULL;
    ck_assert_int_eq(pgw_write_new(&w, sc, "public", table, op, NULL), PGW_OK);
    return w;
}

static inline void ih_wids(pgw_write *w, const char *csv, bool truncated)
{
    ih_ids r;
    ih_ids_parse(&r, csv);
    ck_assert_int_eq(pgw_write_set_ids(w, r.ids, r.n, truncated, NULL), PGW_OK);
}

static inline void ih_wcols(pgw_write *w, const char *csv, bool truncated)
{
    ih_list l;
    ih_split(&l, csv, ',');
    ck_assert_int_eq(pgw_write_set_columns(w, l.items, l.n, truncated, NULL), PGW_OK);
}

static inline void ih_wval(pgw_write *w, size_t row, pgw_side side, const char *col,
                           const char *val)
{
    ck_assert_int_eq(pgw_write_set_value(w, row, side, col, val, NULL), PGW_OK);
}

/* Asserts the exact verdict and reason of pgw_decide. */
#define IH_EXPECT(d, w, want_refresh, want_reason)                                          \
    do {                                                                                    \
        pgw_verdict v_;                                                                     \
        ck_assert_int_eq(pgw_decide(&v_, (d), (w), NULL), PGW_OK);                          \
        ck_assert_msg(v_.refresh == (want_refresh) && v_.reason == (want_reason),           \
                      "verdict %s %s, expected %s %s", v_.refresh ? "refresh" : "skip",     \
                      pgw_reason_name(v_.reason), (want_refresh) ? "refresh" : "skip",     \
                      pgw_reason_name(want_reason));                                        \
    } while (0)

#endif
