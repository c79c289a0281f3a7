/*
 * pgwitness/diff.h — comparing two snapshots: profile_similarity and
 * diff_snapshots, and the JSON form of a diff.
 *
 * Pure functions over snapshots: they work on stored snapshots long after
 * both tables are gone. A diff is an immutable value owned by the caller;
 * it copies what it reports, so it stays valid after the snapshots are
 * freed.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_DIFF_H
#define PGWITNESS_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgwitness/common.h"
#include "pgwitness/snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* profile_similarity                                                  */

/**
 * The parts of a similarity score, each in [0, 1], or -1 when that part
 * could not be computed for the pair (and so did not count).
 */
typedef struct pgw_similarity {
    /** The score: type_factor times the weighted mean of the parts that
     *  could be computed. Exactly 0.0 when either side has no sampled
     *  values. */
    double score;
    /** Value overlap: the frequency-weighted Jaccard (Ruzicka) similarity
     *  of the two most-common-value distributions, sum of min(fa, fb) over
     *  sum of max(fa, fb); when either side has no most-common values, the
     *  plain Jaccard similarity of all sampled values (most-common values
     *  and histogram bounds). Weight 0.35, or 0.7 when `distribution` is
     *  not computed. */
    double values;
    /** Distribution overlap, numeric columns only: 1 minus the
     *  Kolmogorov-Smirnov distance between the two value distributions the
     *  statistics describe (most-common values as point masses, the rest
     *  spread evenly over the histogram's equal-population buckets). Weight
     *  0.35. */
    double distribution;
    /** Null closeness: 1 - |null_frac(a) - null_frac(b)|. Weight 0.15. */
    double null_frac;
    /** Distinct-count closeness: min/max of the two n_distinct estimates
     *  on one scale (a negative n_distinct is converted to a count with the
     *  snapshot's row estimate; without one, both must be fractions). Weight
     *  0.15. */
    double n_distinct;
    /** 1.0 when both types belong to one family (numeric, text, temporal,
     *  boolean, json, or the same other type), else 0.8. */
    double type_factor;
} pgw_similarity;

/**
 * Scores how alike two columns' values are, from the statistics their
 * snapshots keep (never from table data).
 *
 * Symmetric: swapping the sides gives the same score. Returns exactly 0.0
 * when either column has no sampled values (no most-common values and no
 * histogram): no evidence is not similarity, and a high score there would
 * invent a rename for every unanalysed table. Profiles stored in
 * PGW_PROFILE_HASHED mode compare with raw ones (the raw values are hashed
 * the same way); the numeric distribution is then not computed.
 *
 * Method: a combination of the instance-based matchers surveyed by
 * Valentine (Koutras et al., "Valentine: Evaluating Matching Techniques
 * for Dataset Discovery", ICDE 2021) — value overlap (Jaccard) and
 * distribution similarity (Zhang et al., "Automatic Discovery of
 * Attributes in Relational Databases", SIGMOD 2011) — computed on
 * PostgreSQL's own statistics (documentation 54.27 "pg_stats", 76.1 "Row
 * Estimation Examples") rather than on samples. The formula is in
 * docs/formats.md and on each field of pgw_similarity.
 *
 * @param out     receives the score in [0, 1]; untouched on failure.
 * @param detail  receives the parts; may be NULL.
 * @param a       first snapshot.
 * @param col_a   0-based column index in a.
 * @param b       second snapshot.
 * @param col_b   0-based column index in b.
 * @param err     optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when out, a or b is NULL or an index is out
 *         of range.
 */
PGW_API int pgw_profile_similarity(double *out, pgw_similarity *detail, const pgw_snapshot *a,
                                   size_t col_a, const pgw_snapshot *b, size_t col_b,
                                   pgw_error *err);

/* ------------------------------------------------------------------ */
/* diff_snapshots                                                      */

/** A diff of two snapshots (opaque, immutable). Free with pgw_diff_free(). */
typedef struct pgw_diff pgw_diff;

/** Version of pgw_diff_options understood by this release. */
#define PGW_DIFF_OPTIONS_VERSION 1

/** Thresholds of diff_snapshots. */
typedef struct pgw_diff_options {
    /** Must be PGW_DIFF_OPTIONS_VERSION. */
    unsigned int version;
    /** A removed and an added column whose profile similarity is at least
     *  this are a rename candidate (default 0.6, in [0, 1]). */
    double rename_threshold;
    /** A column kept under the same name whose profile similarity to itself
     *  falls below this is reported in profile_changed (default 0.6). */
    double profile_threshold;
} pgw_diff_options;

/** Initialiser with the defaults (0.6 and 0.6). */
#define PGW_DIFF_OPTIONS_INIT { PGW_DIFF_OPTIONS_VERSION, 0.6, 0.6 }

/** Why a rename candidate was proposed. */
typedef enum pgw_rename_evidence {
    /** The profiles scored at least the rename threshold. */
    PGW_EVIDENCE_VALUES = 1,
    /** The names are equal once folded (case, punctuation, spaces and BOM
     *  ignored: "Culmen Length (mm)" and "culmen_length_mm"). */
    PGW_EVIDENCE_NAME = 2,
    /** Both. */
    PGW_EVIDENCE_BOTH = 3
} pgw_rename_evidence;

/** Name anomalies, as bit flags. */
typedef enum pgw_name_anomaly {
    PGW_ANOMALY_BOM = 1,            /**< contains U+FEFF (a byte-order mark) */
    PGW_ANOMALY_LEADING_SPACE = 2,  /**< starts with white space */
    PGW_ANOMALY_TRAILING_SPACE = 4, /**< ends with white space */
    PGW_ANOMALY_CONTROL = 8         /**< contains a control character (C0, DEL, C1) */
} pgw_name_anomaly;

/** How a pair of consecutive snapshots changed (the drift report's classes). */
typedef enum pgw_change_class {
    PGW_CHANGE_UNCHANGED = 0,   /**< nothing added, removed, renamed, retyped or reordered */
    PGW_CHANGE_ADDITIVE = 1,    /**< only columns added */
    PGW_CHANGE_SUBTRACTIVE = 2, /**< only columns removed */
    PGW_CHANGE_RENAMED = 3,     /**< only renames */
    PGW_CHANGE_RETYPED = 4,     /**< only type changes */
    PGW_CHANGE_REORDERED = 5,   /**< only the order of kept columns */
    PGW_CHANGE_MIXED = 6        /**< more than one of the above */
} pgw_change_class;

/** Number of pgw_change_class values. */
#define PGW_CHANGE_CLASS_COUNT 7

/**
 * The class's name as used in JSON: "unchanged", "additive", "subtractive",
 * "renamed", "retyped", "reordered", "mixed"; "unknown" otherwise. Static.
 */
PGW_API const char *pgw_change_class_name(pgw_change_class c);

/** One side of a diff: which snapshot it came from. A view owned by the
 *  diff. */
typedef struct pgw_diff_side {
    const char *schema;      /**< schema name */
    const char *table;       /**< table name */
    const char *resource;    /**< resource identity, or NULL */
    int64_t captured_at;     /**< microseconds since the Unix epoch */
    const char *schema_hash; /**< 16 hex digits */
    bool has_row_estimate;   /**< whether row_estimate is known */
    int64_t row_estimate;    /**< rows, when known */
} pgw_diff_side;

/** A column added or removed. A view owned by the diff. */
typedef struct pgw_diff_column {
    const char *column; /**< its name */
    const char *type;   /**< its type as the snapshot recorded it */
    uint32_t position;  /**< its 1-based position in its snapshot */
} pgw_diff_column;

/** A column kept under the same name whose type changed (synonyms such
 *  as int4/integer are not changes). A view owned by the diff. */
typedef struct pgw_type_change {
    const char *column; /**< the name */
    const char *from;   /**< the old type, as recorded */
    const char *to;     /**< the new type, as recorded */
} pgw_type_change;

/** A rename candidate: a removed and an added column that look like one
 *  column under two names. A view owned by the diff. */
typedef struct pgw_rename {
    const char *from;             /**< the removed column's name */
    const char *to;               /**< the added column's name */
    const char *from_type;        /**< its old type */
    const char *to_type;          /**< its new type */
    double score;                 /**< profile similarity in [0, 1] */
    pgw_rename_evidence evidence; /**< values, name, or both */
} pgw_rename;

/** A column kept under the same name whose values changed form. A view
 *  owned by the diff. */
typedef struct pgw_profile_change {
    const char *column; /**< the name */
    double score;       /**< its similarity to itself, below the threshold */
} pgw_profile_change;

/** A column name with anomalies. A view owned by the diff. */
typedef struct pgw_name_anomaly_report {
    const char *column; /**< the name as recorded */
    bool in_to;         /**< false: in the "from" snapshot; true: in "to" */
    unsigned anomalies; /**< pgw_name_anomaly flags */
} pgw_name_anomaly_report;

/**
 * Compares two snapshots of (typically) the same resource, `a` older.
 *
 * Reports: schema_changed (the schema hashes differ); added and removed
 * columns (by exact name); type_changed (same name, types that are not
 * synonyms); reordered (the relative order of the columns both keep
 * changed — never changes the hash); renamed candidates (removed x added
 * pairs scoring at least rename_threshold, or with equal folded names;
 * one-to-one, best first: name evidence, then score, then position); a
 * column in a rename pair is not also reported as added or removed;
 * profile_changed (same name, both profiled, similarity below
 * profile_threshold); the row estimates; and name anomalies of either
 * snapshot.
 *
 * @param out   receives the diff (free with pgw_diff_free()).
 * @param a     the older snapshot (borrowed for the call).
 * @param b     the newer snapshot (borrowed for the call).
 * @param opts  thresholds; NULL for the defaults.
 * @param err   optional detail on failure.
 * @return PGW_OK; PGW_EINVAL (NULL argument, unknown options version, a
 *         threshold outside [0, 1]); PGW_ENOMEM.
 */
PGW_API int pgw_diff_snapshots(pgw_diff **out, const pgw_snapshot *a, const pgw_snapshot *b,
                               const pgw_diff_options *opts, pgw_error *err);

/** Frees a diff. NULL is ignored. */
PGW_API void pgw_diff_free(pgw_diff *d);

/*
 * Accessors. What they return is owned by the diff and valid until
 * pgw_diff_free(). Given a NULL diff they return NULL, 0, false or
 * PGW_CHANGE_UNCHANGED and never fail; an index out of range gives NULL.
 */

/** The older side ("from"). */
PGW_API const pgw_diff_side *pgw_diff_from(const pgw_diff *d);
/** The newer side ("to"). */
PGW_API const pgw_diff_side *pgw_diff_to(const pgw_diff *d);
/** True when the schema hashes differ. */
PGW_API bool pgw_diff_schema_changed(const pgw_diff *d);
/** True when the columns kept by both snapshots are in another order. */
PGW_API bool pgw_diff_reordered(const pgw_diff *d);
/** The class of the change (see pgw_change_class). */
PGW_API pgw_change_class pgw_diff_class(const pgw_diff *d);

/** Number of added columns (not counting rename targets). */
PGW_API size_t pgw_diff_added_count(const pgw_diff *d);
/** The i-th added column in the newer snapshot's order, or NULL. */
PGW_API const pgw_diff_column *pgw_diff_added(const pgw_diff *d, size_t i);
/** Number of removed columns (not counting rename sources). */
PGW_API size_t pgw_diff_removed_count(const pgw_diff *d);
/** The i-th removed column in the older snapshot's order, or NULL. */
PGW_API const pgw_diff_column *pgw_diff_removed(const pgw_diff *d, size_t i);
/** Number of type changes. */
PGW_API size_t pgw_diff_type_changed_count(const pgw_diff *d);
/** The i-th type change in the newer snapshot's order, or NULL. */
PGW_API const pgw_type_change *pgw_diff_type_changed(const pgw_diff *d, size_t i);
/** Number of rename candidates. */
PGW_API size_t pgw_diff_renamed_count(const pgw_diff *d);
/** The i-th rename candidate, best first, or NULL. */
PGW_API const pgw_rename *pgw_diff_renamed(const pgw_diff *d, size_t i);
/** Number of same-named columns whose profile changed. */
PGW_API size_t pgw_diff_profile_changed_count(const pgw_diff *d);
/** The i-th profile change in the newer snapshot's order, or NULL. */
PGW_API const pgw_profile_change *pgw_diff_profile_changed(const pgw_diff *d, size_t i);
/** Number of anomalous column names (both sides). */
PGW_API size_t pgw_diff_name_anomaly_count(const pgw_diff *d);
/** The i-th anomalous name ("from" side first), or NULL. */
PGW_API const pgw_name_anomaly_report *pgw_diff_name_anomaly(const pgw_diff *d, size_t i);

/**
 * Encodes a diff as JSON (format 1, docs/formats.md): the keys
 * `format`, `from`, `to`, `schema_changed`, `class`, `added`, `removed`,
 * `type_changed`, `reordered`, `renamed_candidates`, `profile_changed`,
 * `row_estimate`, `name_anomalies`. The compact form is canonical.
 *
 * @param out      receives NUL-terminated UTF-8 (free with pgw_free()).
 * @param out_len  receives its length without the NUL; may be NULL.
 * @param d        the diff.
 * @param flags    0 or PGW_JSON_PRETTY.
 * @param err      optional detail on failure.
 * @return PGW_OK; PGW_EINVAL; PGW_ENOMEM.
 */
PGW_API int pgw_diff_to_json(char **out, size_t *out_len, const pgw_diff *d, unsigned flags,
                             pgw_error *err);

/**
 * Decodes a diff document written by pgw_diff_to_json(). Strict and total,
 * like pgw_snapshot_from_json().
 *
 * @param out   receives the diff (free with pgw_diff_free()); untouched on
 *              failure.
 * @param json  the text (need not be NUL-terminated).
 * @param len   its length in bytes (at most PGW_SNAPSHOT_JSON_MAX_BYTES).
 * @param err   optional detail; for PGW_EPARSE err->path names the
 *              offending value.
 * @return PGW_OK; PGW_EINVAL (NULL argument); PGW_EPARSE; PGW_EVERSION
 *         (unknown format); PGW_ENOMEM.
 */
PGW_API int pgw_diff_from_json(pgw_diff **out, const char *json, size_t len, pgw_error *err);

#ifdef __cplusplus
}
#endif

#endif /* PGWITNESS_DIFF_H */
