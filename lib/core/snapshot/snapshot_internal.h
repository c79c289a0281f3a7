/*
 * lib/core/snapshot/snapshot_internal.h — the snapshot's layout, shared by the
 * snapshot, similarity, diff and drift units. Not installed.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_SNAPSHOT_INTERNAL_H
#define PGWITNESS_SNAPSHOT_INTERNAL_H

#include "arena.h"
#include "internal.h"
#include "pgwitness/snapshot.h"

/* A hash and its weight. */
typedef struct pgwi_hw {
    uint64_t h;
    double w;
} pgwi_hw;

/* A position and its weight. */
typedef struct pgwi_xw {
    double x;
    double w;
} pgwi_xw;

/* A profile prepared for comparison, computed once when the snapshot is
 * built so that diffs only compare arrays. */
typedef struct pgwi_prep {
    bool has_values;      /* any most_common_vals or histogram_bounds */
    size_t n_mcv;         /* most_common_vals, sorted by hash */
    uint64_t *mcv_hash;
    double *mcv_freq;
    double mcv_total;     /* sum of mcv_freq */
    size_t n_vals;        /* every sampled value (MCVs and bounds), unique */
    uint64_t *val_hash;   /* sorted */
    uint64_t sig;         /* bit (h & 63) set for every sampled value hash:
                             disjoint signatures prove disjoint values */
    bool numeric;         /* every sampled value parses as a finite number */
    size_t n_cdf;         /* breakpoints of the non-null value distribution */
    double *cdf_x;        /* ascending */
    double *cdf_lo;       /* F(x-) */
    double *cdf_hi;       /* F(x)  */
    bool temporal;        /* every sampled value is a date or timestamp (not
                             all numbers): cdf_x holds seconds since the
                             epoch (value_shape.h) */

    /* Value shape (value_shape.c). Raw profiles only: */
    bool has_shape;       /* the sampled values could be read */
    size_t n_pat;         /* fine pattern signatures: hash and weight, by hash */
    pgwi_hw *pat;
    size_t n_cpat;        /* coarse pattern signatures, by hash */
    pgwi_hw *cpat;
    size_t n_len;         /* value lengths in characters: length and weight, */
    pgwi_xw *len;         /* ascending by length */
    double digit_share;   /* weighted mean share of digit characters */
    double *shape_x;      /* cdf_x min-max normalised to [0, 1]; NULL when the
                             range has zero width or there is no CDF */
    /* Any mode: */
    size_t n_rank;        /* MCV frequency profile, descending: runs of n */
    pgwi_xw *rank;        /* values of share x each (x: frequency, w: count) */
    size_t n_mcv_share;   /* the MCV shares of rank alone, descending, */
    double *mcv_share;
    bool rank_tail;       /* and whether values outside the MCVs remain */
} pgwi_prep;

struct pgw_snapshot {
    pgwi_arena arena; /* owns every string and array below */
    char *schema;
    char *table;
    uint32_t oid;
    char *resource; /* NULL when none */
    char *reason;
    int64_t captured_at;
    bool has_rows;
    int64_t rows;
    bool stats_available;
    pgw_profile_mode mode;
    bool profiles_omitted;
    char hash[17];
    char *extra; /* canonical compact JSON object */
    size_t n_columns;
    pgw_column *columns;
    pgw_profile *profiles; /* parallel to columns; used when columns[i].profile */
    pgwi_prep *prep;       /* parallel to columns */
    int *family;           /* type family per column (types.c) */
    char **norm_type;      /* normalized type per column (types.c) */
    uint64_t *name_hash;   /* XXH3-64 of each name */
    uint64_t *fold_hash;   /* XXH3-64 of each folded name, 0 when it folds to "" */
    unsigned *anomalies;   /* pgw_name_anomaly flags per column */
    uint32_t *by_name;     /* column indexes sorted by (name_hash, index) */
};

/* names.c */
/* The name folded for name evidence: BOM removed, ASCII letters lowered,
 * every run of other ASCII characters (spaces, punctuation, NBSP)
 * collapsed to one '_', and '_' trimmed at both ends; its XXH3-64, or 0
 * when nothing is left. */
uint64_t pgwi_fold_hash(const char *name);
/* pgw_name_anomaly flags of a name. */
unsigned pgwi_name_anomalies(const char *name);

/* Decoding uses the builder in strict mode: bounds are errors, not cuts,
 * and values are taken as stored (already hashed in hashed mode). */
typedef struct pgwi_build_ctl {
    bool strict;
    bool profiles_omitted; /* as read from a document */
    bool has_hash;
    char hash[17];         /* as read from a document */
} pgwi_build_ctl;

int pgwi_snapshot_builder_finish_ctl(pgw_snapshot **out, pgw_snapshot_builder *b,
                                     const pgwi_build_ctl *ctl, pgw_error *err);
int pgwi_snapshot_builder_add_column_ctl(pgw_snapshot_builder *b, const char *name,
                                         const char *type, const pgw_column_stats *stats,
                                         const pgwi_build_ctl *ctl, pgw_error *err);
void pgwi_snapshot_builder_set_mode(pgw_snapshot_builder *b, pgw_profile_mode mode);
int pgwi_snapshot_options_check(const pgw_snapshot_options *o, pgw_error *err);

/* XXH3-64 of a value as the profiles compare it: in hashed mode the value
 * is already the hex form of that hash. */
uint64_t pgwi_value_hash(const char *value, pgw_profile_mode mode);
/* 16 lowercase hex digits? */
bool pgwi_is_hex16(const char *s);

/* types.c */
enum {
    PGWI_FAMILY_OTHER = 0,
    PGWI_FAMILY_NUMERIC,
    PGWI_FAMILY_TEXT,
    PGWI_FAMILY_TEMPORAL,
    PGWI_FAMILY_BOOLEAN,
    PGWI_FAMILY_JSON,
};
/* Normalizes a type name so that synonyms compare equal ("int4" and
 * "integer", "timestamptz" and "timestamp with time zone", "varchar(20)"
 * and "character varying(20)"); the result is allocated in the arena. */
char *pgwi_type_normalize(pgwi_arena *a, const char *type);
/* The family of a normalized type (arrays are OTHER unless the element
 * family matches on both sides: the family of "integer[]" is OTHER). */
int pgwi_type_family(const char *normalized);

/* timestamp.c */
bool pgwi_usec_in_range(int64_t usec);

#endif
