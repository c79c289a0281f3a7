/*
 * lib/core/inval/inval.c — the invalidation model: strings, row IDs, scopes,
 * reason names, and the builders and accessors of pgw_deps and pgw_write.
 * The rules are in decide.c. SPDX-License-Identifier: MIT
 */
#include "inval_internal.h"
#include "typed.h"
#include "xxhash_inline.h"

#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const pgwi_str pgwi_sqlnull = {0, 0, 0};

uint64_t pgwi_hash_bytes(const void *p, size_t len)
{
    return XXH3_64bits(p, len);
}

/* ------------------------------------------------------------------ */
/* interned strings in an arena (arena.h)                               */

pgwi_str *pgwi_arena_str(pgwi_arena *a, const char *s, size_t len)
{
    if (len > UINT32_MAX - 1)
        return NULL;
    pgwi_str *p = pgwi_arena_alloc(a, sizeof *p + len + 1);
    if (!p)
        return NULL;
    p->hash = pgwi_hash_bytes(s, len);
    p->len = (uint32_t)len;
    p->refs = 0;
    memcpy(p->s, s, len);
    p->s[len] = '\0';
    return p;
}

/* A validated copy of a C string: non-NULL, UTF-8, optionally non-empty. */
static int copy_name(const pgwi_str **out, pgwi_arena *a, const char *s, bool nonempty,
                     const char *what, pgw_error *err)
{
    if (!s)
        return pgwi_error(err, PGW_EINVAL, "%s is NULL", what);
    size_t len = strlen(s);
    if (nonempty && len == 0)
        return pgwi_error(err, PGW_EINVAL, "%s is empty", what);
    if (!pgwi_utf8_valid(s, len))
        return pgwi_error(err, PGW_EINVAL, "%s is not valid UTF-8", what);
    const pgwi_str *p = pgwi_arena_str(a, s, len);
    if (!p)
        return pgwi_enomem(err);
    *out = p;
    return PGW_OK;
}

/* ------------------------------------------------------------------ */
/* row IDs                                                             */

uint32_t pgwi_rid_fp(const char *const *parts, size_t n_parts)
{
    XXH3_state_t st;
    XXH3_INITSTATE(&st);
    XXH3_64bits_reset(&st);
    for (size_t i = 0; i < n_parts; i++) {
        size_t len = strlen(parts[i]);
        unsigned char le[4] = {(unsigned char)len, (unsigned char)(len >> 8),
                               (unsigned char)(len >> 16), (unsigned char)(len >> 24)};
        XXH3_64bits_update(&st, le, 4);
        XXH3_64bits_update(&st, parts[i], len);
    }
    return pgwi_fp32(XXH3_64bits_digest(&st));
}

int pgwi_rowid_check(const pgw_rowid *id, const char *what, size_t i, pgw_error *err)
{
    if (id->n_parts == 0 || id->n_parts > PGW_ROWID_MAX_PARTS)
        return pgwi_error(err, PGW_EINVAL, "%s[%zu] has %zu parts (1..%d allowed)", what, i,
                          id->n_parts, PGW_ROWID_MAX_PARTS);
    if (!id->parts)
        return pgwi_error(err, PGW_EINVAL, "%s[%zu].parts is NULL", what, i);
    for (size_t k = 0; k < id->n_parts; k++) {
        if (!id->parts[k])
            return pgwi_error(err, PGW_EINVAL, "%s[%zu].parts[%zu] is NULL", what, i, k);
        if (!pgwi_utf8_valid(id->parts[k], strlen(id->parts[k])))
            return pgwi_error(err, PGW_EINVAL, "%s[%zu].parts[%zu] is not valid UTF-8", what,
                              i, k);
    }
    return PGW_OK;
}

int pgwi_rids_copy(pgwi_rid *dst, pgwi_arena *a, const pgw_rowid *ids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char **parts = pgwi_arena_alloc(a, ids[i].n_parts * sizeof *parts);
        if (!parts)
            return PGW_ENOMEM;
        for (size_t k = 0; k < ids[i].n_parts; k++) {
            const pgwi_str *s = pgwi_arena_str(a, ids[i].parts[k], strlen(ids[i].parts[k]));
            if (!s)
                return PGW_ENOMEM;
            parts[k] = s->s;
        }
        dst[i].parts = parts;
        dst[i].n_parts = (uint32_t)ids[i].n_parts;
        dst[i].fp = pgwi_rid_fp(parts, ids[i].n_parts);
    }
    return PGW_OK;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

uint32_t pgwi_fps_sort_unique(uint32_t *fps, size_t n)
{
    qsort(fps, n, sizeof *fps, cmp_u32);
    uint32_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || fps[u - 1] != fps[i])
            fps[u++] = fps[i];
    return u;
}

uint32_t pgwi_rids_fps(uint32_t *fps, const pgwi_rid *rids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fps[i] = rids[i].fp;
    return pgwi_fps_sort_unique(fps, n);
}

/* ------------------------------------------------------------------ */
/* scope                                                               */

int pgwi_scope_copy(pgwi_scope *dst, pgwi_arena *a, const pgw_scope *src, const char *what,
                    pgw_error *err)
{
    const char *parts[3] = {src->project, src->tenant, src->database};
    static const char *const names[3] = {"project", "tenant", "database"};
    const pgwi_str *out[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++) {
        if (!parts[i])
            continue;
        char w[64];
        snprintf(w, sizeof w, "%s.%s", what, names[i]);
        int rc;
        if ((rc = copy_name(&out[i], a, parts[i], false, w, err)) < 0)
            return rc;
    }
    dst->project = out[0];
    dst->tenant = out[1];
    dst->database = out[2];
    return PGW_OK;
}

static bool opt_eq(const pgwi_str *a, const pgwi_str *b)
{
    if (!a || !b)
        return a == b;
    return pgwi_str_eq(a, b);
}

bool pgwi_scope_eq(const pgwi_scope *a, const pgwi_scope *b)
{
    return opt_eq(a->project, b->project) && opt_eq(a->tenant, b->tenant) &&
           opt_eq(a->database, b->database);
}

uint64_t pgwi_scope_hash(const pgwi_scope *s)
{
    const pgwi_str *p[3] = {s->project, s->tenant, s->database};
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 3; i++) {
        uint64_t x = p[i] ? p[i]->hash : 0x5bd1e995u + (uint64_t)i;
        h = (h ^ x) * 0x100000001B3ull;
        h ^= h >> 29;
    }
    return h;
}

static void scope_view(pgw_scope *out, const pgwi_scope *s)
{
    out->project = s->project ? s->project->s : NULL;
    out->tenant = s->tenant ? s->tenant->s : NULL;
    out->database = s->database ? s->database->s : NULL;
}

/* ------------------------------------------------------------------ */
/* names of reasons and operations                                     */

static const char *const reason_names[PGW_REASON_COUNT] = {
    "SCOPE_DISJOINT",   "TABLE_NOT_READ",      "COLUMNS_DISJOINT",
    "ROWS_DISJOINT",    "VALUES_DISJOINT",     "SCOPE_RESET",
    "UNDECLARED",       "TRUNCATE",            "WRITE_UNKNOWN",
    "IDS_UNKNOWN",      "COLUMNS_UNKNOWN",     "ROW_IN_RESULT",
    "RESULT_UNKNOWN",   "FILTER_COLUMN_CHANGED", "SORT_COLUMN_CHANGED",
    "INSERT_MAY_ENTER", "DELETE_IN_WINDOW",    "DDL",
    "CLOCK",            "BEYOND_WINDOW",       "BEFORE_WINDOW",
    "WINDOW_EMPTY",
};

const char *pgw_reason_name(pgw_reason reason)
{
    if ((int)reason < 0 || (int)reason >= PGW_REASON_COUNT)
        return "UNKNOWN_REASON";
    return reason_names[reason];
}

int pgw_reason_from_name(pgw_reason *out, const char *name)
{
    if (!out || !name)
        return PGW_EINVAL;
    for (int i = 0; i < PGW_REASON_COUNT; i++)
        if (strcmp(reason_names[i], name) == 0) {
            *out = (pgw_reason)i;
            return PGW_OK;
        }
    return PGW_ENOTFOUND;
}

bool pgw_reason_refreshes(pgw_reason reason)
{
    return !(((int)reason >= 0 && (int)reason <= PGW_REASON_VALUES_DISJOINT) ||
             reason == PGW_REASON_BEYOND_WINDOW || reason == PGW_REASON_BEFORE_WINDOW ||
             reason == PGW_REASON_WINDOW_EMPTY);
}

const char *pgw_op_name(pgw_op op)
{
    switch (op) {
    case PGW_OP_INSERT:
        return "insert";
    case PGW_OP_UPDATE:
        return "update";
    case PGW_OP_DELETE:
        return "delete";
    case PGW_OP_TRUNCATE:
        return "truncate";
    case PGW_OP_UNKNOWN:
        return "unknown";
    case PGW_OP_RESET:
        return "reset";
    case PGW_OP_DDL:
        return "ddl";
    }
    return "invalid";
}

/* ------------------------------------------------------------------ */
/* dependencies                                                        */

int pgw_deps_new(pgw_deps **out, const pgw_scope *scope, const char *query, pgw_error *err)
{
    if (!out)
        return pgwi_error(err, PGW_EINVAL, "deps_new: out is NULL");
    if (!scope)
        return pgwi_error(err, PGW_EINVAL, "deps_new: scope is NULL");
    pgw_deps *d = pgwi_calloc(1, sizeof *d);
    if (!d)
        return pgwi_enomem(err);
    int rc;
    if ((rc = pgwi_scope_copy(&d->scope, &d->arena, scope, "deps_new: scope", err)) < 0)
        goto fail;
    if ((rc = copy_name(&d->query, &d->arena, query, false, "deps_new: query", err)) < 0)
        goto fail;
    *out = d;
    return PGW_OK;
fail:
    pgw_deps_free(d);
    return rc;
}

void pgw_deps_free(pgw_deps *d)
{
    if (!d)
        return;
    for (uint32_t i = 0; i < d->n_tables; i++) {
        pgwi_free((void *)d->tables[i].cols);
        pgwi_free((void *)d->tables[i].sort);
        pgwi_free((void *)d->tables[i].sort_kf);
        pgwi_free((void *)d->tables[i].filters);
    }
    pgwi_free((void *)d->bounds);
    pgwi_free(d->tables);
    pgwi_free(d->rids);
    pgwi_free(d->fps);
    pgwi_arena_free(&d->arena);
    pgwi_free(d);
}

void pgwi_tdep_masks(pgwi_tdep *t)
{
    uint64_t m = 0;
    for (uint32_t i = 0; i < t->n_filters; i++)
        m |= pgwi_bit(t->filters[i].col);
    for (uint32_t i = 0; i < t->n_sort; i++)
        m |= pgwi_bit(t->sort[i]);
    t->member_mask = m;
    if (t->all_cols) {
        t->read_mask = ~(uint64_t)0;
    } else {
        for (uint32_t i = 0; i < t->n_cols; i++)
            m |= pgwi_bit(t->cols[i]);
        t->read_mask = m;
    }
}

int pgw_deps_add_table(size_t *out, pgw_deps *d, const char *schema, const char *table,
                       pgw_error *err)
{
    if (!d)
        return pgwi_error(err, PGW_EINVAL, "deps_add_table: deps is NULL");
    const pgwi_str *s, *t;
    int rc;
    if ((rc = copy_name(&s, &d->arena, schema, true, "deps_add_table: schema", err)) < 0)
        return rc;
    if ((rc = copy_name(&t, &d->arena, table, true, "deps_add_table: table", err)) < 0)
        return rc;
    for (uint32_t i = 0; i < d->n_tables; i++)
        if (pgwi_str_eq(d->tables[i].schema, s) && pgwi_str_eq(d->tables[i].table, t))
            return pgwi_error(err, PGW_EEXISTS,
                              "deps_add_table: table \"%.100s\".\"%.100s\" is already declared",
                              schema, table);
    if (d->n_tables >= 65535)
        return pgwi_error(err, PGW_ELIMIT, "deps_add_table: more than 65535 tables");
    if (d->n_tables == d->cap_tables) {
        uint32_t cap = d->cap_tables ? d->cap_tables * 2 : 2;
        pgwi_tdep *nt = pgwi_reallocarray(d->tables, cap, sizeof *nt);
        if (!nt)
            return pgwi_enomem(err);
        d->tables = nt;
        d->cap_tables = cap;
    }
    pgwi_tdep *e = &d->tables[d->n_tables];
    memset(e, 0, sizeof *e);
    e->schema = s;
    e->table = t;
    e->all_cols = 1;
    e->limit = -1;
    pgwi_tdep_masks(e);
    if (out)
        *out = d->n_tables;
    d->n_tables++;
    return PGW_OK;
}

static int check_table(const pgw_deps *d, size_t table, const char *fn, pgw_error *err)
{
    if (!d)
        return pgwi_error(err, PGW_EINVAL, "%s: deps is NULL", fn);
    if (table >= d->n_tables)
        return pgwi_error(err, PGW_EINVAL, "%s: table index %zu is not declared (%u tables)",
                          fn, table, (unsigned)d->n_tables);
    return PGW_OK;
}

/* Copies a list of distinct names into a new malloc'd array. */
static int name_list(const pgwi_str ***out, pgwi_arena *a, const char *const *names, size_t n,
                     const char *fn, const char *what, pgw_error *err)
{
    *out = NULL;
    if (n == 0)
        return PGW_OK;
    if (n > 65535)
        return pgwi_error(err, PGW_ELIMIT, "%s: more than 65535 %s", fn, what);
    if (!names)
        return pgwi_error(err, PGW_EINVAL, "%s: %s is NULL with %zu entries", fn, what, n);
    const pgwi_str **arr = pgwi_calloc(n, sizeof *arr);
    if (!arr)
        return pgwi_enomem(err);
    int rc;
    for (size_t i = 0; i < n; i++) {
        char w[96];
        snprintf(w, sizeof w, "%s: %s[%zu]", fn, what, i);
        if ((rc = copy_name(&arr[i], a, names[i], true, w, err)) < 0)
            goto fail;
        for (size_t k = 0; k < i; k++)
            if (pgwi_str_eq(arr[k], arr[i])) {
                rc = pgwi_error(err, PGW_EINVAL, "%s: %s[%zu] \"%.100s\" appears twice", fn,
                                what, i, names[i]);
                goto fail;
            }
    }
    *out = arr;
    return PGW_OK;
fail:
    pgwi_free(arr);
    return rc;
}

int pgw_deps_set_columns(pgw_deps *d, size_t table, const char *const *columns,
                         size_t n_columns, pgw_error *err)
{
    int rc;
    if ((rc = check_table(d, table, "deps_set_columns", err)) < 0)
        return rc;
    pgwi_tdep *t = &d->tables[table];
    if (!columns) {
        if (n_columns)
            return pgwi_error(err, PGW_EINVAL,
                              "deps_set_columns: columns is NULL with %zu entries", n_columns);
        pgwi_free((void *)t->cols);
        t->cols = NULL;
        t->n_cols = 0;
        t->all_cols = 1;
        pgwi_tdep_masks(t);
        return PGW_OK;
    }
    const pgwi_str **arr;
    if ((rc = name_list(&arr, &d->arena, columns, n_columns, "deps_set_columns", "columns",
                        err)) < 0)
        return rc;
    pgwi_free((void *)t->cols);
    t->cols = arr;
    t->n_cols = (uint16_t)n_columns;
    t->all_cols = 0;
    pgwi_tdep_masks(t);
    return PGW_OK;
}

/* Replaces the sort keys of entry `table` with names arr and key flags kf
 * (both allocated, owned from now on; kf NULL: every key of type 0, ASC,
 * NULLS LAST). */
static void put_sort(pgw_deps *d, size_t table, const pgwi_str **arr, uint8_t *kf, size_t n)
{
    pgwi_tdep *t = &d->tables[table];
    pgwi_free((void *)t->sort);
    pgwi_free((void *)t->sort_kf);
    t->sort = arr;
    t->sort_kf = kf;
    t->n_sort = (uint16_t)n;
    pgwi_tdep_masks(t);
    if (table == 0)
        pgw_deps_clear_window_bounds(d);
}

int pgw_deps_set_order_by(pgw_deps *d, size_t table, const char *const *columns,
                          size_t n_columns, pgw_error *err)
{
    int rc;
    if ((rc = check_table(d, table, "deps_set_order_by", err)) < 0)
        return rc;
    const pgwi_str **arr;
    if ((rc = name_list(&arr, &d->arena, columns, n_columns, "deps_set_order_by", "columns",
                        err)) < 0)
        return rc;
    put_sort(d, table, arr, NULL, n_columns);
    return PGW_OK;
}

int pgw_deps_set_sort_keys(pgw_deps *d, size_t table, const pgw_sort_key *keys, size_t n_keys,
                           pgw_error *err)
{
    int rc;
    if ((rc = check_table(d, table, "deps_set_sort_keys", err)) < 0)
        return rc;
    if (!keys && n_keys)
        return pgwi_error(err, PGW_EINVAL, "deps_set_sort_keys: keys is NULL with %zu entries",
                          n_keys);
    if (n_keys > 65535)
        return pgwi_error(err, PGW_ELIMIT, "deps_set_sort_keys: more than 65535 keys");
    const char **names = pgwi_malloc((n_keys ? n_keys : 1) * sizeof *names);
    uint8_t *kf = pgwi_malloc(n_keys ? n_keys : 1);
    if (!names || !kf) {
        pgwi_free(names);
        pgwi_free(kf);
        return pgwi_enomem(err);
    }
    const pgwi_str **arr = NULL;
    for (size_t i = 0; i < n_keys; i++) {
        int ty = (int)keys[i].type;
        if (ty != 0 && !pgwi_cmp_type_name(keys[i].type)) {
            rc = pgwi_error(err, PGW_EINVAL,
                            "deps_set_sort_keys: keys[%zu].type %d is neither 0 nor a "
                            "pgw_cmp_type",
                            i, ty);
            goto done;
        }
        names[i] = keys[i].column;
        kf[i] = (uint8_t)(ty | (keys[i].descending ? PGWI_SORT_DESC : 0) |
                          (keys[i].nulls_first ? PGWI_SORT_NULLS_FIRST : 0));
    }
    if ((rc = name_list(&arr, &d->arena, names, n_keys, "deps_set_sort_keys", "keys", err)) < 0)
        goto done;
    put_sort(d, table, arr, kf, n_keys);
    kf = NULL;
done:
    pgwi_free(names);
    pgwi_free(kf);
    return rc;
}

int pgwi_bounds_make(const pgwi_str ***out, const pgwi_tdep *t, const pgw_window_bounds *b,
                     const char *fn, pgw_error *err)
{
    if (!b->first && !b->last) { /* the window holds no row */
        if (b->full)
            return pgwi_error(err, PGW_EINVAL, "%s: a window with no row is not full", fn);
        *out = NULL;
        return PGW_OK;
    }
    if (t->limit < 0 && t->offset == 0)
        return pgwi_error(err, PGW_EINVAL,
                          "%s: the first table has no window (limit or offset)", fn);
    if (t->limit == 0)
        return pgwi_error(err, PGW_EINVAL, "%s: a window of limit 0 holds no row", fn);
    if (b->full && t->limit < 0)
        return pgwi_error(err, PGW_EINVAL, "%s: a window without a limit is never full", fn);
    if (t->n_sort == 0)
        return pgwi_error(err, PGW_EINVAL, "%s: the first table has no sort keys", fn);
    if (b->n != t->n_sort)
        return pgwi_error(err, PGW_EINVAL, "%s: %zu values per row for %u sort keys", fn, b->n,
                          (unsigned)t->n_sort);
    if (!b->first || !b->last)
        return pgwi_error(err, PGW_EINVAL, "%s: %s is NULL", fn, b->first ? "last" : "first");
    size_t size = ALIGN8(2 * b->n * sizeof(pgwi_str *));
    for (size_t k = 0; k < b->n; k++) {
        int ty = t->sort_kf ? t->sort_kf[k] & PGWI_SORT_TYPE : 0;
        if (!ty)
            return pgwi_error(err, PGW_EINVAL, "%s: sort key %s has no comparison type", fn,
                              t->sort[k]->s);
        for (int s = 0; s < 2; s++) {
            const char *v = s ? b->last[k] : b->first[k];
            if (!v)
                continue;
            size_t len = strlen(v);
            pgwi_typed x;
            if (!pgwi_utf8_valid(v, len))
                return pgwi_error(err, PGW_EINVAL, "%s: %s[%zu] (sort key %s) is not valid UTF-8",
                                  fn, s ? "last" : "first", k, t->sort[k]->s);
            if (!pgwi_typed_parse(&x, (pgw_cmp_type)ty, v, len))
                return pgwi_error(err, PGW_EINVAL,
                                  "%s: %s[%zu] \"%.64s\" (sort key %s) does not parse as %s",
                                  fn, s ? "last" : "first", k, v, t->sort[k]->s,
                                  pgwi_cmp_type_name((pgw_cmp_type)ty));
            size += ALIGN8(sizeof(pgwi_str) + len + 1);
        }
    }
    unsigned char *blk = pgwi_malloc(size);
    if (!blk)
        return pgwi_enomem(err);
    const pgwi_str **vals = (const pgwi_str **)blk;
    unsigned char *cur = blk + ALIGN8(2 * b->n * sizeof(pgwi_str *));
    for (size_t k = 0; k < b->n; k++)
        for (int s = 0; s < 2; s++) {
            const char *v = s ? b->last[k] : b->first[k];
            if (!v) {
                vals[s * b->n + k] = &pgwi_sqlnull;
                continue;
            }
            size_t len = strlen(v);
            pgwi_str *p = (pgwi_str *)cur;
            cur += ALIGN8(sizeof(pgwi_str) + len + 1);
            p->hash = pgwi_hash_bytes(v, len);
            p->len = (uint32_t)len;
            p->refs = 0;
            memcpy(p->s, v, len + 1);
            vals[s * b->n + k] = p;
        }
    if (pgwi_bounds_order(t, vals) > 0) {
        pgwi_free(blk);
        return pgwi_error(err, PGW_EINVAL,
                          "%s: the first row sorts after the last in the sort keys' order", fn);
    }
    *out = vals;
    return PGW_OK;
}

int pgwi_bounds_copy(const pgwi_str ***out, const pgwi_tdep *t, const pgwi_str *const *bounds,
                     bool full)
{
    const uint32_t n = t->n_sort;
    const char **v = pgwi_malloc((n ? 2 * (size_t)n : 1) * sizeof *v);
    if (!v)
        return PGW_ENOMEM;
    for (uint32_t i = 0; i < 2 * n; i++)
        v[i] = bounds[i] == &pgwi_sqlnull ? NULL : bounds[i]->s;
    pgw_window_bounds b = {v, v + n, n, full};
    int rc = pgwi_bounds_make(out, t, &b, "bounds_copy", NULL);
    pgwi_free(v);
    return rc;
}

int pgw_deps_set_window_bounds(pgw_deps *d, const pgw_window_bounds *b, pgw_error *err)
{
    if (!d || !b)
        return pgwi_error(err, PGW_EINVAL, "deps_set_window_bounds: %s is NULL",
                          d ? "bounds" : "deps");
    if (d->n_tables == 0)
        return pgwi_error(err, PGW_EINVAL, "deps_set_window_bounds: no table is declared");
    const pgwi_str **vals;
    int rc = pgwi_bounds_make(&vals, &d->tables[0], b, "deps_set_window_bounds", err);
    if (rc < 0)
        return rc;
    pgwi_free((void *)d->bounds);
    d->bounds = vals;
    d->bounds_full = b->full;
    d->window_empty = !vals;
    return PGW_OK;
}

void pgw_deps_clear_window_bounds(pgw_deps *d)
{
    if (!d)
        return;
    pgwi_free((void *)d->bounds);
    d->bounds = NULL;
    d->bounds_full = false;
    d->window_empty = false;
}

/* Appends filter f to entry t. */
static int push_filter(pgwi_tdep *t, const pgwi_filter *f, pgw_error *err)
{
    pgwi_filter *nf = pgwi_reallocarray((void *)t->filters, t->n_filters + 1, sizeof *nf);
    if (!nf)
        return pgwi_enomem(err);
    nf[t->n_filters] = *f;
    t->filters = nf;
    t->n_filters++;
    pgwi_tdep_masks(t);
    return PGW_OK;
}

int pgw_deps_add_filter(pgw_deps *d, size_t table, const char *column, pgw_filter_op op,
                        const char *const *values, size_t n_values, pgw_error *err)
{
    int rc;
    if ((rc = check_table(d, table, "deps_add_filter", err)) < 0)
        return rc;
    pgwi_tdep *t = &d->tables[table];
    if (op == PGW_FILTER_RANGE)
        return pgwi_error(err, PGW_EINVAL,
                          "deps_add_filter: a range is added with pgw_deps_add_range()");
    if (op != PGW_FILTER_EQ && op != PGW_FILTER_IN && op != PGW_FILTER_OPAQUE)
        return pgwi_error(err, PGW_EINVAL, "deps_add_filter: op %d is not a pgw_filter_op",
                          (int)op);
    if (!values && n_values)
        return pgwi_error(err, PGW_EINVAL, "deps_add_filter: values is NULL with %zu entries",
                          n_values);
    if (op == PGW_FILTER_OPAQUE && values)
        return pgwi_error(err, PGW_EINVAL, "deps_add_filter: an opaque filter has no values");
    if (values && op == PGW_FILTER_EQ && n_values != 1)
        return pgwi_error(err, PGW_EINVAL,
                          "deps_add_filter: eq takes exactly 1 value, not %zu (use in)",
                          n_values);
    if (values && op == PGW_FILTER_IN && n_values == 0)
        return pgwi_error(err, PGW_EINVAL, "deps_add_filter: in needs at least 1 value");
    if (n_values > UINT32_MAX / 2)
        return pgwi_error(err, PGW_ELIMIT, "deps_add_filter: too many values");
    if (t->n_filters >= 65535)
        return pgwi_error(err, PGW_ELIMIT, "deps_add_filter: more than 65535 filters");
    pgwi_filter f = {0};
    f.op = (uint8_t)op;
    if ((rc = copy_name(&f.col, &d->arena, column, true, "deps_add_filter: column", err)) < 0)
        return rc;
    if (values) {
        const pgwi_str **vals = pgwi_arena_alloc(&d->arena, n_values * sizeof *vals);
        if (!vals)
            return pgwi_enomem(err);
        for (size_t i = 0; i < n_values; i++) {
            if (!values[i])
                return pgwi_error(err, PGW_EINVAL,
                                  "deps_add_filter: values[%zu] is NULL (SQL = never matches "
                                  "NULL; declare IS NULL as opaque)",
                                  i);
            char w[64];
            snprintf(w, sizeof w, "deps_add_filter: values[%zu]", i);
            if ((rc = copy_name(&vals[i], &d->arena, values[i], false, w, err)) < 0)
                return rc;
        }
        f.vals = vals;
        f.n_vals = (uint32_t)n_values;
        f.vals_known = 1;
    }
    return push_filter(t, &f, err);
}

/* The text of one bound of a range (checked: kind, UTF-8, parsable under
 * type), copied into the arena; "" for an absent bound. */
static int copy_bound(const pgwi_str **out, uint8_t *kind, pgwi_arena *a, const pgw_bound *b,
                      pgw_cmp_type type, const char *what, pgw_error *err)
{
    *kind = PGW_BOUND_NONE;
    if (!b || b->kind == PGW_BOUND_NONE)
        return copy_name(out, a, "", false, what, err);
    if (b->kind != PGW_BOUND_INCLUSIVE && b->kind != PGW_BOUND_EXCLUSIVE)
        return pgwi_error(err, PGW_EINVAL, "deps_add_range: %s kind %d is not a pgw_bound_kind",
                          what, (int)b->kind);
    char w[64];
    snprintf(w, sizeof w, "deps_add_range: %s bound", what);
    int rc = copy_name(out, a, b->value, false, w, err);
    if (rc < 0)
        return rc;
    pgwi_typed x;
    if (!pgwi_typed_parse(&x, type, (*out)->s, (*out)->len))
        return pgwi_error(err, PGW_EINVAL, "deps_add_range: %s bound \"%.64s\" does not parse as %s",
                          what, b->value, pgwi_cmp_type_name(type));
    *kind = (uint8_t)b->kind;
    return PGW_OK;
}

int pgw_deps_add_range(pgw_deps *d, size_t table, const char *column, pgw_cmp_type type,
                       const pgw_bound *lower, const pgw_bound *upper, pgw_error *err)
{
    int rc;
    if ((rc = check_table(d, table, "deps_add_range", err)) < 0)
        return rc;
    pgwi_tdep *t = &d->tables[table];
    if (!pgwi_cmp_type_name(type))
        return pgwi_error(err, PGW_EINVAL, "deps_add_range: type %d is not a pgw_cmp_type",
                          (int)type);
    if (t->n_filters >= 65535)
        return pgwi_error(err, PGW_ELIMIT, "deps_add_range: more than 65535 filters");
    pgwi_filter f = {0};
    f.op = PGW_FILTER_RANGE;
    f.cmp = (uint8_t)type;
    const pgwi_str **vals = pgwi_arena_alloc(&d->arena, PGWI_RANGE_VALS_SIZE);
    if (!vals)
        return pgwi_enomem(err);
    uint8_t lo, hi;
    if ((rc = copy_name(&f.col, &d->arena, column, true, "deps_add_range: column", err)) < 0 ||
        (rc = copy_bound(&vals[0], &lo, &d->arena, lower, type, "lower", err)) < 0 ||
        (rc = copy_bound(&vals[1], &hi, &d->arena, upper, type, "upper", err)) < 0)
        return rc;
    f.lo = lo;
    f.hi = hi;
    if (f.lo == PGW_BOUND_NONE && f.hi == PGW_BOUND_NONE)
        return pgwi_error(err, PGW_EINVAL,
                          "deps_add_range: no bound on %s (declare the predicate opaque)",
                          column);
    f.vals = vals;
    f.n_vals = 2;
    pgwi_range_prepare(&f);
    return push_filter(t, &f, err);
}

int pgw_deps_set_window(pgw_deps *d, size_t table, int64_t limit, int64_t offset,
                        pgw_error *err)
{
    int rc;
    if ((rc = check_table(d, table, "deps_set_window", err)) < 0)
        return rc;
    if (limit < -1)
        return pgwi_error(err, PGW_EINVAL, "deps_set_window: limit %lld is below -1",
                          (long long)limit);
    if (offset < 0)
        return pgwi_error(err, PGW_EINVAL, "deps_set_window: offset %lld is negative",
                          (long long)offset);
    d->tables[table].limit = limit;
    d->tables[table].offset = offset;
    if (table == 0)
        pgw_deps_clear_window_bounds(d);
    return PGW_OK;
}

int pgw_deps_set_result_ids(pgw_deps *d, const pgw_rowid *ids, size_t n_ids, pgw_error *err)
{
    if (!d)
        return pgwi_error(err, PGW_EINVAL, "deps_set_result_ids: deps is NULL");
    if (d->n_tables == 0)
        return pgwi_error(err, PGW_EINVAL,
                          "deps_set_result_ids: result IDs name rows of the first table; "
                          "declare it first");
    if (!ids && n_ids)
        return pgwi_error(err, PGW_EINVAL, "deps_set_result_ids: ids is NULL with %zu entries",
                          n_ids);
    if (n_ids > UINT32_MAX / 2)
        return pgwi_error(err, PGW_ELIMIT, "deps_set_result_ids: too many IDs");
    for (size_t i = 0; i < n_ids; i++) {
        int rc;
        if ((rc = pgwi_rowid_check(&ids[i], "deps_set_result_ids: ids", i, err)) < 0)
            return rc;
    }
    pgwi_rid *rids = NULL;
    uint32_t *fps = NULL;
    if (n_ids) {
        rids = pgwi_calloc(n_ids, sizeof *rids);
        fps = pgwi_calloc(n_ids, sizeof *fps);
        if (!rids || !fps || pgwi_rids_copy(rids, &d->arena, ids, n_ids) < 0) {
            pgwi_free(rids);
            pgwi_free(fps);
            return pgwi_enomem(err);
        }
    }
    pgwi_free(d->rids);
    pgwi_free(d->fps);
    d->rids = rids;
    d->fps = fps;
    d->n_rids = (uint32_t)n_ids;
    d->n_fps = n_ids ? pgwi_rids_fps(fps, rids, n_ids) : 0;
    d->rids_known = true;
    return PGW_OK;
}

void pgw_deps_clear_result_ids(pgw_deps *d)
{
    if (!d)
        return;
    pgwi_free(d->rids);
    pgwi_free(d->fps);
    d->rids = NULL;
    d->fps = NULL;
    d->n_rids = d->n_fps = 0;
    d->rids_known = false;
}

const char *pgw_deps_query(const pgw_deps *d)
{
    return d ? d->query->s : NULL;
}

int pgw_deps_scope(pgw_scope *out, const pgw_deps *d)
{
    if (!out || !d)
        return PGW_EINVAL;
    scope_view(out, &d->scope);
    return PGW_OK;
}

size_t pgw_deps_n_tables(const pgw_deps *d)
{
    return d ? d->n_tables : 0;
}

int pgw_deps_set_time_dependent(pgw_deps *d, bool on, pgw_error *err)
{
    if (!d)
        return pgwi_error(err, PGW_EINVAL, "deps_set_time_dependent: deps is NULL");
    d->time_dependent = on;
    return PGW_OK;
}

bool pgw_deps_time_dependent(const pgw_deps *d)
{
    return d && d->time_dependent;
}

void pgwi_deps_view(pgwi_dview *out, const pgw_deps *d)
{
    out->tables = d->tables;
    out->n_tables = d->n_tables;
    out->undeclared = d->n_tables == 0;
    out->rids_known = d->rids_known;
    out->result_kind = d->result_kind;
    out->n_rids = d->n_fps;
    out->rids = d->fps;
    out->bounds = d->bounds;
    out->n_bounds = d->bounds ? d->tables[0].n_sort : 0;
    out->bounds_full = d->bounds_full;
    out->window_empty = d->window_empty;
}

/* ------------------------------------------------------------------ */
/* write sets                                                          */

int pgwi_write_alloc(pgw_write **out, pgw_error *err)
{
    pgw_write *w = pgwi_calloc(1, sizeof *w);
    if (!w)
        return pgwi_enomem(err);
    w->fallback_msg = "";
    *out = w;
    return PGW_OK;
}

int pgwi_write_init(pgw_write *w, const pgw_scope *scope, const char *schema,
                    const char *table, pgw_op op, pgw_error *err)
{
    if (!scope)
        return pgwi_error(err, PGW_EINVAL, "write_new: scope is NULL");
    int rc;
    if ((rc = pgwi_scope_copy(&w->scope, &w->arena, scope, "write_new: scope", err)) < 0)
        return rc;
    if (op == PGW_OP_RESET) {
        w->op = PGW_OP_RESET;
        return PGW_OK;
    }
    if (op != PGW_OP_INSERT && op != PGW_OP_UPDATE && op != PGW_OP_DELETE &&
        op != PGW_OP_TRUNCATE && op != PGW_OP_UNKNOWN && op != PGW_OP_DDL)
        return pgwi_error(err, PGW_EINVAL, "write_new: op %d is not a table operation",
                          (int)op);
    if ((rc = copy_name(&w->schema, &w->arena, schema, true, "write_new: schema", err)) < 0)
        return rc;
    if ((rc = copy_name(&w->table, &w->arena, table, true, "write_new: table", err)) < 0)
        return rc;
    w->op = (uint8_t)op;
    return PGW_OK;
}

int pgw_write_new(pgw_write **out, const pgw_scope *scope, const char *schema,
                  const char *table, pgw_op op, pgw_error *err)
{
    if (!out)
        return pgwi_error(err, PGW_EINVAL, "write_new: out is NULL");
    if (op == PGW_OP_RESET)
        return pgwi_error(err, PGW_EINVAL, "write_new: use pgw_write_new_reset for a reset");
    pgw_write *w = NULL;
    int rc;
    if ((rc = pgwi_write_alloc(&w, err)) < 0)
        return rc;
    if ((rc = pgwi_write_init(w, scope, schema, table, op, err)) < 0) {
        pgw_write_free(w);
        return rc;
    }
    *out = w;
    return PGW_OK;
}

int pgw_write_new_reset(pgw_write **out, const pgw_scope *scope, pgw_error *err)
{
    if (!out)
        return pgwi_error(err, PGW_EINVAL, "write_new_reset: out is NULL");
    pgw_write *w = NULL;
    int rc;
    if ((rc = pgwi_write_alloc(&w, err)) < 0)
        return rc;
    if ((rc = pgwi_write_init(w, scope, NULL, NULL, PGW_OP_RESET, err)) < 0) {
        pgw_write_free(w);
        return rc;
    }
    *out = w;
    return PGW_OK;
}

static void drop_values(pgw_write *w)
{
    pgwi_free(w->vcols);
    pgwi_free(w->vals);
    pgwi_free(w->rstate);
    w->vcols = NULL;
    w->vals = NULL;
    w->rstate = NULL;
    w->n_vcols = 0;
    w->has_side[0] = w->has_side[1] = false;
}

void pgw_write_free(pgw_write *w)
{
    if (!w)
        return;
    pgwi_free(w->ids);
    pgwi_free(w->cols);
    drop_values(w);
    pgwi_arena_free(&w->arena);
    pgwi_free(w);
}

static bool row_op(const pgw_write *w)
{
    return w->op == PGW_OP_INSERT || w->op == PGW_OP_UPDATE || w->op == PGW_OP_DELETE;
}

/* Why a write set that is not a row operation has no rows, for the
 * setters' errors ("" where the operation's name says it). */
static const char *no_rows_why(const pgw_write *w)
{
    return w->op == PGW_OP_DDL ? " (the table's definition changed: any row and column may "
                                 "differ)"
                               : "";
}

int pgw_write_set_ids(pgw_write *w, const pgw_rowid *ids, size_t n_ids, bool truncated,
                      pgw_error *err)
{
    if (!w)
        return pgwi_error(err, PGW_EINVAL, "write_set_ids: write is NULL");
    if (!row_op(w))
        return pgwi_error(err, PGW_EINVAL, "write_set_ids: a %s has no row IDs%s",
                          pgw_op_name((pgw_op)w->op), no_rows_why(w));
    if (!ids && n_ids)
        return pgwi_error(err, PGW_EINVAL, "write_set_ids: ids is NULL with %zu entries",
                          n_ids);
    if (n_ids > UINT32_MAX / 4)
        return pgwi_error(err, PGW_ELIMIT, "write_set_ids: too many IDs");
    for (size_t i = 0; i < n_ids; i++) {
        int rc;
        if ((rc = pgwi_rowid_check(&ids[i], "write_set_ids: ids", i, err)) < 0)
            return rc;
    }
    pgwi_rid *r = NULL;
    if (n_ids) {
        r = pgwi_calloc(n_ids, sizeof *r);
        if (!r || pgwi_rids_copy(r, &w->arena, ids, n_ids) < 0) {
            pgwi_free(r);
            return pgwi_enomem(err);
        }
    }
    pgwi_free(w->ids);
    drop_values(w);
    w->ids = r;
    w->n_ids = (uint32_t)n_ids;
    w->ids_known = true;
    w->ids_truncated = truncated;
    return PGW_OK;
}

int pgw_write_set_columns(pgw_write *w, const char *const *columns, size_t n_columns,
                          bool truncated, pgw_error *err)
{
    if (!w)
        return pgwi_error(err, PGW_EINVAL, "write_set_columns: write is NULL");
    if (!row_op(w))
        return pgwi_error(err, PGW_EINVAL, "write_set_columns: a %s has no changed columns%s",
                          pgw_op_name((pgw_op)w->op), no_rows_why(w));
    const pgwi_str **arr;
    int rc;
    if ((rc = name_list(&arr, &w->arena, columns, n_columns, "write_set_columns", "columns",
                        err)) < 0)
        return rc;
    pgwi_free(w->cols);
    w->cols = arr;
    w->n_cols = (uint32_t)n_columns;
    w->cols_known = true;
    w->cols_truncated = truncated;
    uint64_t m = 0;
    for (uint32_t i = 0; i < w->n_cols; i++)
        m |= pgwi_bit(w->cols[i]);
    w->cols_mask = m;
    return PGW_OK;
}

int pgw_write_set_pk_changed(pgw_write *w, bool pk_changed, pgw_error *err)
{
    if (!w)
        return pgwi_error(err, PGW_EINVAL, "write_set_pk_changed: write is NULL");
    if (w->op != PGW_OP_UPDATE && !row_op(w))
        return pgwi_error(err, PGW_EINVAL,
                          "write_set_pk_changed: only an update changes keys, not a %s%s",
                          pgw_op_name((pgw_op)w->op), no_rows_why(w));
    if (w->op != PGW_OP_UPDATE)
        return pgwi_error(err, PGW_EINVAL, "write_set_pk_changed: only an update changes keys");
    if (!pk_changed && w->rstate) {
        for (uint32_t i = 0; i < w->n_ids * 2; i++)
            if (w->rstate[i] == PGWI_ROW_ABSENT)
                return pgwi_error(err, PGW_EINVAL,
                                  "write_set_pk_changed: row %u is marked absent", i / 2);
    }
    w->pk_changed = pk_changed;
    return PGW_OK;
}

static int check_row_side(const pgw_write *w, size_t row, pgw_side side, const char *fn,
                          pgw_error *err)
{
    if (!w)
        return pgwi_error(err, PGW_EINVAL, "%s: write is NULL", fn);
    if (!row_op(w))
        return pgwi_error(err, PGW_EINVAL, "%s: a %s has no rows%s", fn,
                          pgw_op_name((pgw_op)w->op), no_rows_why(w));
    if (!w->ids_known)
        return pgwi_error(err, PGW_EINVAL, "%s: set the row IDs first", fn);
    if (row >= w->n_ids)
        return pgwi_error(err, PGW_EINVAL, "%s: row %zu is not listed (%u IDs)", fn, row,
                          (unsigned)w->n_ids);
    if (side != PGW_SIDE_OLD && side != PGW_SIDE_NEW)
        return pgwi_error(err, PGW_EINVAL, "%s: side %d is not a pgw_side", fn, (int)side);
    if (w->op == PGW_OP_INSERT && side == PGW_SIDE_OLD)
        return pgwi_error(err, PGW_EINVAL, "%s: an insert has no old rows", fn);
    if (w->op == PGW_OP_DELETE && side == PGW_SIDE_NEW)
        return pgwi_error(err, PGW_EINVAL, "%s: a delete has no new rows", fn);
    return PGW_OK;
}

static int ensure_rstate(pgw_write *w)
{
    if (w->rstate || w->n_ids == 0)
        return PGW_OK;
    w->rstate = pgwi_calloc((size_t)w->n_ids * 2, 1);
    return w->rstate ? PGW_OK : PGW_ENOMEM;
}

int pgw_write_set_value(pgw_write *w, size_t row, pgw_side side, const char *column,
                        const char *value, pgw_error *err)
{
    int rc;
    if ((rc = check_row_side(w, row, side, "write_set_value", err)) < 0)
        return rc;
    if (w->rstate && w->rstate[row * 2 + side] == PGWI_ROW_ABSENT)
        return pgwi_error(err, PGW_EINVAL, "write_set_value: row %zu is marked absent on the %s side",
                          row, side == PGW_SIDE_OLD ? "old" : "new");
    const pgwi_str *col, *val = &pgwi_sqlnull;
    if ((rc = copy_name(&col, &w->arena, column, true, "write_set_value: column", err)) < 0)
        return rc;
    if (value &&
        (rc = copy_name(&val, &w->arena, value, false, "write_set_value: value", err)) < 0)
        return rc;
    if (ensure_rstate(w) < 0)
        return pgwi_enomem(err);
    int32_t vc = pgwi_write_vcol(w, col);
    if (vc < 0) {
        /* A new value column: grow the column list and re-lay the matrix. */
        uint32_t nv = w->n_vcols + 1;
        size_t cells = (size_t)w->n_ids * 2;
        const pgwi_str **cols = pgwi_reallocarray(NULL, nv, sizeof *cols);
        const pgwi_str **vals = pgwi_calloc(cells * nv, sizeof *vals);
        if (!cols || !vals) {
            pgwi_free(cols);
            pgwi_free(vals);
            return pgwi_enomem(err);
        }
        if (w->n_vcols)
            memcpy(cols, w->vcols, w->n_vcols * sizeof *cols);
        cols[w->n_vcols] = col;
        for (size_t c = 0; c < cells && w->vals; c++)
            memcpy(&vals[c * nv], &w->vals[c * w->n_vcols], w->n_vcols * sizeof *vals);
        pgwi_free(w->vcols);
        pgwi_free(w->vals);
        w->vcols = cols;
        w->vals = vals;
        vc = (int32_t)w->n_vcols;
        w->n_vcols = nv;
    }
    w->vals[(row * 2 + side) * w->n_vcols + (uint32_t)vc] = val;
    w->has_side[side] = true;
    return PGW_OK;
}

int pgw_write_set_row_absent(pgw_write *w, size_t row, pgw_side side, pgw_error *err)
{
    int rc;
    if ((rc = check_row_side(w, row, side, "write_set_row_absent", err)) < 0)
        return rc;
    if (w->op != PGW_OP_UPDATE || !w->pk_changed)
        return pgwi_error(err, PGW_EINVAL,
                          "write_set_row_absent: only an update with pk_changed has rows "
                          "that exist on one side");
    if (w->vals)
        for (uint32_t c = 0; c < w->n_vcols; c++)
            if (w->vals[(row * 2 + side) * w->n_vcols + c])
                return pgwi_error(err, PGW_EINVAL,
                                  "write_set_row_absent: row %zu has values on that side", row);
    if (w->rstate && w->rstate[row * 2 + (1 - side)] == PGWI_ROW_ABSENT)
        return pgwi_error(err, PGW_EINVAL,
                          "write_set_row_absent: row %zu is already absent on the other side",
                          row);
    if (ensure_rstate(w) < 0)
        return pgwi_enomem(err);
    w->rstate[row * 2 + side] = PGWI_ROW_ABSENT;
    w->has_side[side] = true;
    return PGW_OK;
}

pgw_op pgw_write_op(const pgw_write *w)
{
    return w ? (pgw_op)w->op : (pgw_op)0;
}

const char *pgw_write_schema(const pgw_write *w)
{
    return w && w->schema ? w->schema->s : NULL;
}

const char *pgw_write_table(const pgw_write *w)
{
    return w && w->table ? w->table->s : NULL;
}

int pgw_write_scope(pgw_scope *out, const pgw_write *w)
{
    if (!out || !w)
        return PGW_EINVAL;
    scope_view(out, &w->scope);
    return PGW_OK;
}

size_t pgw_write_n_ids(const pgw_write *w)
{
    return w && w->ids_known ? w->n_ids : 0;
}

bool pgw_write_ids_known(const pgw_write *w)
{
    return w && pgwi_ids_ok(w);
}

bool pgw_write_columns_known(const pgw_write *w)
{
    return w && pgwi_cols_ok(w);
}

int pgw_write_fallback_status(const pgw_write *w)
{
    return w ? w->fallback : PGW_OK;
}

const char *pgw_write_fallback_message(const pgw_write *w)
{
    return w && w->fallback_msg ? w->fallback_msg : "";
}


int pgw_write_set_lsn(pgw_write *w, uint64_t lsn, pgw_error *err)
{
    if (!w)
        return pgwi_error(err, PGW_EINVAL, "write_set_lsn: write is NULL");
    w->lsn = lsn;
    return PGW_OK;
}

uint64_t pgw_write_lsn(const pgw_write *w)
{
    return w ? w->lsn : 0;
}

/* ------------------------------------------------------------------ */
/* bulk building (the pgoutput decoder)                                 */

int pgwi_write_vcols(pgw_write *w, const char *const *names, uint32_t n)
{
    drop_values(w);
    if (n == 0 || w->n_ids == 0)
        return PGW_OK;
    const pgwi_str **cols = pgwi_reallocarray(NULL, n, sizeof *cols);
    const pgwi_str **vals = pgwi_calloc((size_t)w->n_ids * 2 * n, sizeof *vals);
    uint8_t *rstate = pgwi_calloc((size_t)w->n_ids * 2, 1);
    bool ok = cols && vals && rstate;
    for (uint32_t i = 0; ok && i < n; i++)
        ok = (cols[i] = pgwi_arena_str(&w->arena, names[i], strlen(names[i]))) != NULL;
    if (!ok) {
        pgwi_free(cols);
        pgwi_free(vals);
        pgwi_free(rstate);
        return PGW_ENOMEM;
    }
    w->vcols = cols;
    w->n_vcols = n;
    w->vals = vals;
    w->rstate = rstate;
    return PGW_OK;
}

int pgwi_write_put(pgw_write *w, uint32_t row, int side, uint32_t vc, const char *value)
{
    const pgwi_str *v = &pgwi_sqlnull;
    if (value && !(v = pgwi_arena_str(&w->arena, value, strlen(value))))
        return PGW_ENOMEM;
    w->vals[(row * 2 + (uint32_t)side) * w->n_vcols + vc] = v;
    w->has_side[side] = true;
    return PGW_OK;
}

int pgwi_write_absent(pgw_write *w, uint32_t row, int side)
{
    if (!w->rstate && !(w->rstate = pgwi_calloc((size_t)w->n_ids * 2, 1)))
        return PGW_ENOMEM;
    w->rstate[row * 2 + (uint32_t)side] = PGWI_ROW_ABSENT;
    return PGW_OK;
}

int pgw_deps_set_result_kind(pgw_deps *d, pgw_result_kind kind, pgw_error *err)
{
    if (!d)
        return pgwi_error(err, PGW_EINVAL, "deps_set_result_kind: deps is NULL");
    if (kind != PGW_RESULT_UNSPECIFIED && kind != PGW_RESULT_LIST &&
        kind != PGW_RESULT_AGGREGATE)
        return pgwi_error(err, PGW_EINVAL,
                          "deps_set_result_kind: kind %d is not a pgw_result_kind", (int)kind);
    d->result_kind = (uint8_t)kind;
    return PGW_OK;
}

pgw_result_kind pgw_deps_result_kind(const pgw_deps *d)
{
    return d ? (pgw_result_kind)d->result_kind : PGW_RESULT_UNSPECIFIED;
}
