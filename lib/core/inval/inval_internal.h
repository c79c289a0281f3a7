/*
 * lib/core/inval/inval_internal.h — the invalidation model's internal
 * representation, shared by inval.c (builders), decide.c (the rules),
 * inval_json.c and payload.c (codecs) and index_*.c (the reverse index).
 *
 * Names and values are pgwi_str: bytes with their XXH3-64 hash, compared by
 * hash, length and bytes (exact). The decision core works on a pgwi_dview
 * (a declaration) and a pgw_write; a standalone pgw_deps and a runner
 * compiled into an index both present a pgwi_dview, so one implementation of
 * the rules serves pgw_decide() and pgw_index_match().
 * Not installed. SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_INVAL_INTERNAL_H
#define PGWITNESS_INVAL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arena.h"
#include "internal.h"
#include "pgwitness/inval.h"
#include "typed.h"

/* A block size rounded up for the 8-byte aligned structure that follows. */
#define ALIGN8(n) (((n) + 7) & ~(size_t)7)

/* ---- strings ---- */

typedef struct pgwi_str {
    uint64_t hash; /* XXH3-64 of the bytes */
    uint32_t len;  /* bytes, without the NUL */
    uint32_t refs; /* reference count inside an index's interner; 0 elsewhere */
    char s[];      /* len bytes and a NUL */
} pgwi_str;

/* The SQL NULL value in old/new rows (a sentinel, never dereferenced for
 * its bytes by comparisons: pointer identity). */
extern const pgwi_str pgwi_sqlnull;

uint64_t pgwi_hash_bytes(const void *p, size_t len);

static inline bool pgwi_str_eq(const pgwi_str *a, const pgwi_str *b)
{
    return a == b || (a && b && a->hash == b->hash && a->len == b->len &&
                      memcmp(a->s, b->s, a->len) == 0);
}

/* One bit of a 64-bit Bloom mask per name: disjoint masks prove disjoint
 * name sets; overlapping masks prove nothing. */
static inline uint64_t pgwi_bit(const pgwi_str *s)
{
    return (uint64_t)1 << (s->hash >> 58);
}

/* 32-bit fingerprint of a 64-bit hash; never 0 (0 marks empty slots). */
static inline uint32_t pgwi_fp32(uint64_t h)
{
    uint32_t f = (uint32_t)(h ^ (h >> 32));
    return f ? f : 1u;
}

/* ---- arena: many small immutable blocks freed together ---- */

/* A pgwi_str copy of s[0..len) in the arena; NULL on ENOMEM. */
pgwi_str *pgwi_arena_str(pgwi_arena *a, const char *s, size_t len);

/* ---- row IDs ---- */

typedef struct pgwi_rid {
    const char **parts; /* in the owner's arena */
    uint32_t n_parts;
    uint32_t fp; /* fingerprint of the key (pgwi_rid_fp) */
} pgwi_rid;

/* Fingerprint of a key: XXH3-64 over each part as a 4-byte little-endian
 * length followed by its bytes, folded to 32 bits. */
uint32_t pgwi_rid_fp(const char *const *parts, size_t n_parts);
/* Validates a pgw_rowid (1..32 parts, non-NULL UTF-8 parts). what names
 * the argument in messages. */
int pgwi_rowid_check(const pgw_rowid *id, const char *what, size_t i, pgw_error *err);
/* Copies n ids into the arena (dst has room for n); ENOMEM on failure. */
int pgwi_rids_copy(pgwi_rid *dst, pgwi_arena *a, const pgw_rowid *ids, size_t n);
/* Sorted unique fingerprints of n rids into fps (room for n); returns the
 * unique count. */
uint32_t pgwi_rids_fps(uint32_t *fps, const pgwi_rid *rids, size_t n);
/* Sorts fingerprints and removes duplicates in place; returns the count. */
uint32_t pgwi_fps_sort_unique(uint32_t *fps, size_t n);
/* Whether sorted fps[0..n) holds fp: a branch-free lower bound (the rules
 * ask it per written row, with outcomes no predictor learns). */
static inline bool pgwi_fps_contains(const uint32_t *fps, uint32_t n, uint32_t fp)
{
    if (n == 0)
        return false;
    const uint32_t *base = fps;
    while (n > 1) {
        uint32_t half = n / 2;
        base = base[half - 1] < fp ? base + half : base;
        n -= half;
    }
    return *base == fp;
}

/* ---- scope ---- */

typedef struct pgwi_scope {
    const pgwi_str *project, *tenant, *database; /* NULL = none */
} pgwi_scope;

int pgwi_scope_copy(pgwi_scope *dst, pgwi_arena *a, const pgw_scope *src, const char *what,
                    pgw_error *err);
bool pgwi_scope_eq(const pgwi_scope *a, const pgwi_scope *b);
uint64_t pgwi_scope_hash(const pgwi_scope *s);

/* ---- declarations ---- */

typedef struct pgwi_filter {
    const pgwi_str *col;
    /* EQ/IN: n_vals values, NULL when unknown. RANGE: n_vals 2, the texts
     * of the lower and the upper bound ("" for an absent one; each present
     * one parses under cmp), followed in the same block by the two bounds
     * parsed (pgwi_range_bounds(), filled by pgwi_range_prepare()). */
    const pgwi_str *const *vals;
    uint32_t n_vals;
    /* in one word, so that a filter stays 24 bytes */
    unsigned op : 3;         /* pgw_filter_op */
    unsigned vals_known : 1; /* EQ/IN with declared values */
    unsigned cmp : 3;        /* RANGE: pgw_cmp_type */
    unsigned lo : 2, hi : 2; /* RANGE: pgw_bound_kind of each bound */
} pgwi_filter;

/* Bytes of a range filter's vals block: the two pointers, then the two
 * parsed bounds. */
#define PGWI_RANGE_VALS_SIZE (2 * sizeof(pgwi_str *) + 2 * sizeof(pgwi_typed))

/* The parsed bounds of range filter f (lower, upper; absent ones unset). */
static inline const pgwi_typed *pgwi_range_bounds(const pgwi_filter *f)
{
    return (const pgwi_typed *)(const void *)(f->vals + 2);
}

/* Parses range filter f's bounds into its vals block, from the texts it
 * holds (after the block and the texts were copied or moved, as the
 * parsed values point into the texts). */
void pgwi_range_prepare(pgwi_filter *f);

/* Whether a filter can reject a row from a known value: an eq/in with
 * declared values, or a range. */
static inline bool pgwi_filter_rejects(const pgwi_filter *f)
{
    return f->vals_known || f->op == PGW_FILTER_RANGE;
}

typedef struct pgwi_tdep {
    const pgwi_str *schema, *table;
    const pgwi_str *const *cols; /* n_cols read columns (ignored when all_cols) */
    const pgwi_str *const *sort; /* n_sort sort columns */
    const uint8_t *sort_kf;      /* n_sort key flags (PGWI_SORT_*), or NULL: type 0, ASC,
                                  * NULLS LAST */
    const pgwi_filter *filters;  /* n_filters filters */
    int64_t limit;               /* -1: none */
    int64_t offset;              /* 0: none */
    uint64_t read_mask;          /* Bloom of cols ∪ filter cols ∪ sort (~0 when all) */
    uint64_t member_mask;        /* Bloom of filter cols ∪ sort cols */
    uint16_t n_cols, n_sort, n_filters; /* builders refuse more than 65535 */
    uint8_t all_cols;
} pgwi_tdep;

/* Whether a result of kind `kind` (pgw_result_kind) whose first table entry
 * is t lists rows of t, so that its result IDs are used (inval.h, "R"): a
 * list does, an aggregate does not, and an unspecified kind does when t
 * reads a column (count(*), EXISTS read none: an aggregate of its rows). */
static inline bool pgwi_lists_rows(uint8_t kind, const pgwi_tdep *t)
{
    if (kind != PGW_RESULT_UNSPECIFIED)
        return kind == PGW_RESULT_LIST;
    return t->all_cols || t->n_cols > 0;
}

/* The flags of a sort key: its pgw_cmp_type (0: none), DESC, NULLS FIRST. */
enum { PGWI_SORT_TYPE = 0x7, PGWI_SORT_DESC = 0x8, PGWI_SORT_NULLS_FIRST = 0x10 };

typedef struct pgwi_dview {
    const pgwi_tdep *tables;
    uint32_t n_tables;
    bool undeclared;
    bool rids_known;      /* result IDs of tables[0] known */
    uint8_t result_kind;  /* pgw_result_kind */
    uint32_t n_rids;      /* sorted unique fingerprints */
    const uint32_t *rids;
    /* window bounds of tables[0]: n_bounds values of its first row, then
     * n_bounds of its last (&pgwi_sqlnull: NULL); n_bounds 0: none */
    const pgwi_str *const *bounds;
    uint32_t n_bounds;
    bool bounds_full;
    bool window_empty; /* tables[0]'s window holds no row */
} pgwi_dview;

struct pgw_deps {
    pgwi_arena arena;  /* strings and ID parts */
    pgwi_scope scope;
    const pgwi_str *query;
    pgwi_tdep *tables; /* cap_tables; arrays of each entry are separately allocated */
    uint32_t n_tables, cap_tables;
    bool rids_known;
    pgwi_rid *rids; /* n_rids as given (JSON round trip) */
    uint32_t n_rids;
    uint32_t *fps; /* n_fps sorted unique fingerprints */
    uint32_t n_fps;
    bool time_dependent; /* the query reads the clock (pgw_index_clock()) */
    uint8_t result_kind; /* pgw_result_kind */
    /* window bounds (pgw_deps_set_window_bounds()): one block of two rows of
     * as many pointers as tables[0] has sort keys (changing them clears the
     * bounds), then their strings; NULL: none */
    const pgwi_str **bounds;
    bool bounds_full;
    bool window_empty; /* the bounds say the window holds no row (bounds NULL) */
};

void pgwi_deps_view(pgwi_dview *out, const pgw_deps *d);

/* Window bounds b of first table entry t, checked (as
 * pgw_deps_set_window_bounds() documents; fn names the caller in
 * messages) and copied into one allocation: 2 b->n pointers (the first
 * row's values, then the last row's; &pgwi_sqlnull for NULL), then their
 * strings. Freed with pgwi_free(). *out is NULL for a window that holds no
 * row (first and last NULL). PGW_EINVAL or PGW_ENOMEM. */
int pgwi_bounds_make(const pgwi_str ***out, const pgwi_tdep *t, const pgw_window_bounds *b,
                     const char *fn, pgw_error *err);
/* Compares the first row of bounds (pgwi_bounds_make()'s, for entry t)
 * with its last in t's sort-key order: -1, 0 or 1. */
int pgwi_bounds_order(const pgwi_tdep *t, const pgwi_str *const *bounds);
/* A copy of bounds made by pgwi_bounds_make() for an entry with the same
 * sort keys: PGW_OK or PGW_ENOMEM. */
int pgwi_bounds_copy(const pgwi_str ***out, const pgwi_tdep *t, const pgwi_str *const *bounds,
                     bool full);
/* Recomputes the Bloom masks of an entry. */
void pgwi_tdep_masks(pgwi_tdep *t);

/* ---- write sets ---- */

enum { PGWI_ROW_PRESENT = 0, PGWI_ROW_ABSENT = 1 };

struct pgw_write {
    pgwi_arena arena;
    pgwi_scope scope;
    const pgwi_str *schema, *table; /* NULL for a reset */
    uint8_t op;
    bool ids_known, ids_truncated;
    bool cols_known, cols_truncated;
    bool pk_changed;
    pgwi_rid *ids; /* n_ids */
    uint32_t n_ids;
    const pgwi_str **cols; /* n_cols changed columns */
    uint32_t n_cols;
    uint64_t cols_mask;
    /* old/new values: columns with at least one value, and a dense matrix
     * vals[(row * 2 + side) * n_vcols + vc] (NULL = unknown, &pgwi_sqlnull =
     * SQL NULL); rstate[row * 2 + side] is PGWI_ROW_PRESENT or ABSENT. */
    const pgwi_str **vcols;
    uint32_t n_vcols;
    const pgwi_str **vals;
    uint8_t *rstate;
    bool has_side[2]; /* an old / new array was given */
    int fallback;     /* PGW_OK, PGW_EPARSE or PGW_EVERSION */
    const char *fallback_msg;
    uint64_t lsn;     /* commit LSN of its transaction; 0: unknown */
    struct pgw_write *qnext; /* the pgoutput decoder's queue of ready write sets */
};

/* Creates an empty write set (op, scope and table still to fill). */
int pgwi_write_alloc(pgw_write **out, pgw_error *err);
/* Sets scope/schema/table/op (validated). */
int pgwi_write_init(pgw_write *w, const pgw_scope *scope, const char *schema,
                    const char *table, pgw_op op, pgw_error *err);
/* The column index of name in w->vcols, or -1. (Inline, as the next
 * helpers: the rules call them per row and side on the match path.) */
static inline int32_t pgwi_write_vcol(const pgw_write *w, const pgwi_str *name)
{
    for (uint32_t i = 0; i < w->n_vcols; i++)
        if (pgwi_str_eq(w->vcols[i], name))
            return (int32_t)i;
    return -1;
}
/* Whether name is among the changed columns (exact; columns known). */
static inline bool pgwi_write_changed(const pgw_write *w, const pgwi_str *name)
{
    if (!(w->cols_mask & pgwi_bit(name)))
        return false;
    for (uint32_t i = 0; i < w->n_cols; i++)
        if (pgwi_str_eq(w->cols[i], name))
            return true;
    return false;
}

/* Bulk building, for the pgoutput decoder (pgoutput.c): after
 * pgw_write_set_ids(), pgwi_write_vcols() declares the value columns (names
 * valid UTF-8, distinct; replaces any values) and lays out an empty matrix;
 * pgwi_write_put() fills one cell (value valid UTF-8, or NULL for SQL NULL;
 * row < n_ids, side allowed for the op, vc < n); pgwi_write_absent() marks
 * a row absent on a side (an update with pk_changed, no values on that
 * side). Each returns PGW_OK or PGW_ENOMEM, and checks nothing else. */
int pgwi_write_vcols(pgw_write *w, const char *const *names, uint32_t n);
int pgwi_write_put(pgw_write *w, uint32_t row, int side, uint32_t vc, const char *value);
int pgwi_write_absent(pgw_write *w, uint32_t row, int side);

/* Tri-state knowledge used by the rules. */
enum { PGWI_NO = 0, PGWI_MAYBE = 1 };

/* True when the write is an update that keeps row identity. */
static inline bool pgwi_same_row(const pgw_write *w)
{
    return w->op == PGW_OP_UPDATE && !w->pk_changed;
}
static inline bool pgwi_ids_ok(const pgw_write *w)
{
    return w->ids_known && !w->ids_truncated;
}
static inline bool pgwi_cols_ok(const pgw_write *w)
{
    return w->cols_known && !w->cols_truncated;
}
/* Whether row i exists on a side: PGWI_NO or PGWI_MAYBE. */
static inline int pgwi_row_exists(const pgw_write *w, uint32_t i, int side)
{
    switch (w->op) {
    case PGW_OP_INSERT:
        return side == PGW_SIDE_OLD ? PGWI_NO : PGWI_MAYBE;
    case PGW_OP_DELETE:
        return side == PGW_SIDE_NEW ? PGWI_NO : PGWI_MAYBE;
    case PGW_OP_UPDATE:
        if (w->pk_changed && w->rstate && w->rstate[i * 2 + (uint32_t)side] == PGWI_ROW_ABSENT)
            return PGWI_NO;
        return PGWI_MAYBE;
    default:
        return PGWI_MAYBE;
    }
}
/* The value of value column vc for row i on a side, inferring it from the
 * other side for an update without key change when the column did not
 * change (changed_vc: whether it is among the changed columns, or true when
 * those are unknown). NULL when unknown. */
static inline const pgwi_str *pgwi_row_value(const pgw_write *w, uint32_t i, int side,
                                             int32_t vc, bool changed_vc)
{
    if (vc < 0 || !w->vals)
        return NULL;
    const pgwi_str *v = w->vals[(i * 2 + (uint32_t)side) * w->n_vcols + (uint32_t)vc];
    if (!v && pgwi_same_row(w) && !changed_vc)
        v = w->vals[(i * 2 + (uint32_t)(1 - side)) * w->n_vcols + (uint32_t)vc];
    return v;
}

/* ---- the rules ---- */

/* What the rules ask of a write about a column name — its value column and
 * whether it changed — remembered by the name's address over a series of
 * decisions against one write (an index's names are interned, so its
 * runners share one address per name and each name is resolved once per
 * match). Entries are exact: an address is only ever one string. When
 * schema and table are set, they are the interned names equal to the
 * write's (a declaration with interned names then finds its entry for the
 * written table by address). Set up with pgwi_wmemo_init(). */
enum { PGWI_WMEMO_N = 16 };
typedef struct pgwi_wmemo {
    const pgw_write *w;
    const pgwi_str *schema, *table; /* interned equals of w's; NULL: unknown */
    uint32_t n;
    const pgwi_str *name[PGWI_WMEMO_N];
    int32_t vc[PGWI_WMEMO_N]; /* pgwi_write_vcol() */
    bool changed[PGWI_WMEMO_N]; /* pgwi_write_changed() */
    /* The first row's value of the name on each side as a range filter
     * parsed it, for the next range on that name: the value it parsed
     * (NULL: none yet), under which type, whether it parsed, and to what. */
    const pgwi_str *tsrc[PGWI_WMEMO_N][2];
    uint8_t ttype[PGWI_WMEMO_N][2];
    bool tok[PGWI_WMEMO_N][2];
    pgwi_typed tval[PGWI_WMEMO_N][2];
} pgwi_wmemo;

static inline void pgwi_wmemo_init(pgwi_wmemo *m, const pgw_write *w)
{
    m->w = w;
    m->schema = m->table = NULL;
    m->n = 0;
}

/* Finds the entry of d for the written table, or NULL. */
const pgwi_tdep *pgwi_find_table(const pgwi_dview *d, const pgw_write *w);
/* The rule table of inval.h, rules 2..22 (scope equality is the caller's).
 * r_unknown: treat the result IDs as unknown (a runner being rerun). m: a
 * memo of m->w == w (pgwi_wmemo_init()), kept across calls. */
pgw_verdict pgwi_decide_view(const pgwi_dview *d, bool r_unknown, const pgw_write *w,
                             pgwi_wmemo *m);
/* Whether the filter admits value v (v known, not unknown). */
bool pgwi_filter_admits(const pgwi_filter *f, const pgwi_str *v);

#endif /* PGWITNESS_INVAL_INTERNAL_H */
