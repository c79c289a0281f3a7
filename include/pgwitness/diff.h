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

/** Version of pgw_diff_options understood by this release: 2 added
 *  rename_method and rename_weights (the combined rename score). Version 1
 *  is still accepted: its rename_threshold was a profile-similarity
 *  threshold, so a version-1 options struct keeps the rules of version 1
 *  (PGW_RENAME_PROFILE) and reads only the members it had. */
#define PGW_DIFF_OPTIONS_VERSION 2

/** How removed and added columns are paired as renames. */
typedef enum pgw_rename_method {
    /** The combined score (default): name, values, type and position
     *  evidence in one score per (removed, added) pair (pgw_rename_score()),
     *  then the optimal one-to-one assignment of the pairs scoring at least
     *  rename_threshold. */
    PGW_RENAME_COMBINED = 1,
    /** The rules of diff format 1: a pair when the folded names are equal
     *  or the profile similarity is at least rename_threshold, chosen
     *  greedily (name evidence first, then higher similarity, then earlier
     *  positions). Kept for comparison and for version-1 callers. */
    PGW_RENAME_PROFILE = 2
} pgw_rename_method;

/**
 * The weights of the combined rename score (pgw_rename_score()). The
 * defaults of name, values and shape (with the threshold) were chosen on
 * the rename corpus (tests/data/renames) on a coarse grid by F1 and
 * checked by leave-one-pair-out; type and position were fixed at 0.05
 * beforehand, as weak evidence. docs/formats.md ("Rename detection")
 * reports the measured figures.
 *
 * evidence E = (name * N + values * V') / (name + values)
 * score      = E * (1 - type - position + type * T + position * P)
 * V          = (1 - shape) * profile + shape * S   (V = profile when S is not
 *              computable; V counts 0 when either column has no sampled values)
 * V'         = (V - c) / (1 - c) when V > c, else 0, with c = contrast * C;
 *              V' = V when C is -1 (the contrast was not applied)
 *
 * where N, V, C, T, P, profile and S are the parts of pgw_rename_parts.
 * Type and position only scale E, by at most type + position: they never
 * make a rename on their own. The contrast C keeps only the part of the
 * value evidence that sets the pair apart from the columns both snapshots
 * keep: values no more alike than a kept sibling's count for nothing.
 */
typedef struct pgw_rename_weights {
    /** Weight of the name score N in E (>= 0; default 0.45). */
    double name;
    /** Weight of the values channel V in E (>= 0; default 0.55). name +
     *  values must be above 0. */
    double values;
    /** How much the type evidence T moves the score, in [0, 0.5] (default
     *  0.05: a pair of unrelated types keeps 95% of E). */
    double type;
    /** How much the position evidence P moves the score, in [0, 0.5]
     *  (default 0.05). type + position must not exceed 0.5. */
    double position;
    /** Share of V given to the shape of the values S, in [0, 1] (default
     *  0.6); the rest goes to the profile similarity. */
    double shape;
    /** How much of the contrast C counts, in [0, 1] (default 1). 0 turns
     *  it off: the kept columns are not read, C is -1 in every rename's
     *  parts, and a diff costs what it did before the contrast (bench-diff
     *  prints both). */
    double contrast;
} pgw_rename_weights;

/** The default weights: { 0.45, 0.55, 0.05, 0.05, 0.6, 1 }, chosen with
 *  PGW_RENAME_THRESHOLD on the rename corpus (docs/formats.md, "Rename
 *  detection"). */
#define PGW_RENAME_WEIGHTS_INIT { 0.45, 0.55, 0.05, 0.05, 0.6, 1.0 }

/** The default rename threshold of PGW_RENAME_COMBINED (chosen on the
 *  corpus with the default weights, docs/formats.md "Rename detection"). */
#define PGW_RENAME_THRESHOLD 0.35

/** Thresholds and rename rules of diff_snapshots. */
typedef struct pgw_diff_options {
    /** PGW_DIFF_OPTIONS_VERSION (or 1, see above). */
    unsigned int version;
    /** In [0, 1]. PGW_RENAME_COMBINED: a (removed, added) pair whose
     *  combined score is at least this may be paired (default
     *  PGW_RENAME_THRESHOLD, 0.35; with the default weights, on the 25
     *  format changes of the rename corpus with 77 true renames
     *  (tests/data/renames, bench-renames): precision 1.000, recall 0.948,
     *  F1 0.973, in-sample, since the defaults were chosen on it; tuned
     *  again for each pair on the 24 others (leave one pair out):
     *  precision 0.986, recall 0.935, F1 0.960; docs/formats.md, "Rename
     *  detection"). PGW_RENAME_PROFILE: the profile similarity
     *  that pairs a removed and an added column (0.6 in version 1). A pair
     *  must also score above 0. */
    double rename_threshold;
    /** A column kept under the same name whose profile similarity to itself
     *  falls below this is reported in profile_changed (default 0.6). */
    double profile_threshold;
    /** (Version 2.) How renames are found (default PGW_RENAME_COMBINED). */
    pgw_rename_method rename_method;
    /** (Version 2.) The weights of the combined score (default
     *  PGW_RENAME_WEIGHTS_INIT). Used by PGW_RENAME_COMBINED to pair, and
     *  by both methods to fill each rename's parts. The diff document
     *  (pgw_diff_to_json()) does not record them, nor rename_threshold:
     *  with other weights its renames' scores cannot be recomputed from
     *  their parts alone. */
    pgw_rename_weights rename_weights;
} pgw_diff_options;

/** Initialiser with the defaults. */
#define PGW_DIFF_OPTIONS_INIT                                                          \
    { PGW_DIFF_OPTIONS_VERSION, PGW_RENAME_THRESHOLD, 0.6, PGW_RENAME_COMBINED,      \
      PGW_RENAME_WEIGHTS_INIT }

/** Why a rename candidate was proposed: which kinds of evidence are strong.
 *  With PGW_RENAME_COMBINED, the name counts when its score N is at least
 *  0.5 and the values when their channel V is at least 0.5 (the midpoint
 *  of each scale); a pair that clears the threshold with neither at 0.5
 *  reports the larger of the two (both when they are equal). With
 *  PGW_RENAME_PROFILE (and in format-1 documents): the values count when
 *  the profile similarity reached the threshold, the name when the folded
 *  names are equal. */
typedef enum pgw_rename_evidence {
    /** The values (PGW_RENAME_PROFILE: the profiles scored at least the
     *  rename threshold). */
    PGW_EVIDENCE_VALUES = 1,
    /** The name (PGW_RENAME_PROFILE: the names are equal once folded, with
     *  case, punctuation, spaces and BOM ignored: "Culmen Length (mm)" and
     *  "culmen_length_mm"). */
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

/**
 * The combined rename score of one (removed, added) pair and its parts
 * (pgw_rename_score(), and each rename of a diff). Every part is in [0, 1]
 * and rounded to 4 decimals, or -1 when it could not be computed; score is
 * computed from the rounded parts (formula on pgw_rename_weights), so it
 * can be recomputed from them and the weights. A diff document records
 * the parts and the score but neither the weights nor the threshold: from
 * a document alone the score can be recomputed only when the diff was
 * made with the default weights (PGW_RENAME_WEIGHTS_INIT). Sources: the combination of several weak
 * matchers, by name and by instance, into one similarity per pair follows
 * COMA (Do & Rahm, "COMA - A system for flexible combination of schema
 * matching approaches", VLDB 2002); the instance matchers (value overlap,
 * distribution) are those Valentine compares (Koutras et al., "Valentine:
 * Evaluating Matching Techniques for Dataset Discovery", ICDE 2021).
 */
typedef struct pgw_rename_parts {
    /** The combined score, in [0, 1]. */
    double score;
    /** Name score N: the graded similarity of the two names (tokens,
     *  abbreviations, edit distance, synonyms, counterpart roles such as
     *  start/end halved, and names whose heads both go unmatched, such as
     *  bill_depth_mm/bill_length_mm, halved; formula in docs/formats.md);
     *  1 when the names are
     *  equal once folded, 0 when one folds to nothing. Always computed. */
    double name;
    /** Values channel V: (1 - shape) * profile + shape * S, or profile when
     *  S is not computable; -1 when either column has no sampled values. */
    double values;
    /** The profile similarity (pgw_profile_similarity(): overlap of
     *  values, distribution, null and distinct closeness); -1 when either
     *  column has no sampled values. */
    double profile;
    /** The shape of the values S, which survives relabelling and a change
     *  of period or region: the closeness of the two frequency profiles
     *  (most-common-value frequencies sorted, whatever their labels: M/F
     *  and male/female with the same shares give 1) when both columns keep
     *  most-common values; otherwise the value-shape score of their
     *  character patterns, lengths, digit shares, ranges and normalised
     *  distributions. -1 when neither can be read: no sampled values, or
     *  hashed profiles without most-common values (hashes cannot be read). */
    double shape;
    /** Type evidence T: 1 for the same type (synonyms equal), 0.5 for two
     *  types of one family (numeric, text, temporal, boolean, json), else 0. */
    double type;
    /** Position evidence P: 1 - |ra - rb|, where r = (position - 1/2) /
     *  columns is a column's relative position in its snapshot. */
    double position;
    /** Contrast C: how alike the values of either column are to a column
     *  that both snapshots keep (same name in each; not one named as the
     *  pair's own columns), the best values
     *  channel V of the removed column against the newer snapshot's kept
     *  columns of its type family, and of the added column against the
     *  older snapshot's (0 when there are none with sampled values). It is applied,
     *  as V' in the formula on pgw_rename_weights, to every pair whose V is
     *  above 0 (with rename_weights.contrast above 0), so values count only
     *  as far as the pair is more alike than the removed or the added
     *  column is to a kept sibling (bill_depth_mm against bill_length_mm
     *  is about as alike as against body_mass_g; Sepal.Length against
     *  Petal.Length as against Petal.Width); -1 when it is not applied. Scores of this kind compare a match with the
     *  best competing match, as the ratio test of Lowe ("Distinctive image
     *  features from scale-invariant keypoints", IJCV 2004) and the
     *  relative similarities of Melnik et al. ("Similarity flooding",
     *  ICDE 2002) do. */
    double contrast;
} pgw_rename_parts;

/** A rename candidate: a removed and an added column that look like one
 *  column under two names. A view owned by the diff (the library
 *  allocates it, so members may be added at the end). */
typedef struct pgw_rename {
    const char *from;             /**< the removed column's name */
    const char *to;               /**< the added column's name */
    const char *from_type;        /**< its old type */
    const char *to_type;          /**< its new type */
    /** The score the pairing compared with rename_threshold, in [0, 1]:
     *  the combined score (PGW_RENAME_COMBINED), or the profile similarity
     *  (PGW_RENAME_PROFILE, and every rename of a format-1 document). */
    double score;
    pgw_rename_evidence evidence; /**< values, name, or both */
    /** (Diff format 2.) The combined score and its parts, with the diff's
     *  weights, whatever the method; every member -1 in a diff read from a
     *  format-1 document, which did not record them. */
    pgw_rename_parts parts;
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
 * The combined rename score of column col_a of `a` (taken as removed) and
 * column col_b of `b` (taken as added), with its parts: the score
 * PGW_RENAME_COMBINED compares with rename_threshold. Pure and
 * deterministic; of the other columns it reads only those both snapshots
 * keep (the contrast C), so it explains why a pair was or was not paired:
 * a diff gives each pair it pairs this score and these parts, though it
 * reads the contrast only of pairs that could clear its threshold.
 * Symmetric in the values parts; name and type are symmetric too, position
 * compares each column within its own snapshot.
 *
 * Hashed profiles (PGW_PROFILE_HASHED) keep only hashes of the values:
 * profile compares by hash as pgw_profile_similarity() does (without the
 * numeric distribution), and shape is the frequency profile alone (-1
 * without most-common values); patterns, lengths and ranges cannot be read.
 *
 * @param out     receives the score in [0, 1]; untouched on failure.
 * @param parts   receives the parts; may be NULL.
 * @param a       the older snapshot.
 * @param col_a   0-based column index in a.
 * @param b       the newer snapshot.
 * @param col_b   0-based column index in b.
 * @param opts    its rename_weights are used (rename_method and the
 *                thresholds are not); NULL for the defaults. A version-1
 *                struct uses the default weights.
 * @param err     optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when out, a or b is NULL, an index is out of
 *         range, or the options are invalid (as pgw_diff_snapshots());
 *         PGW_ENOMEM when the kept columns cannot be listed (one int32 per
 *         column of each snapshot).
 */
PGW_API int pgw_rename_score(double *out, pgw_rename_parts *parts, const pgw_snapshot *a,
                             size_t col_a, const pgw_snapshot *b, size_t col_b,
                             const pgw_diff_options *opts, pgw_error *err);

/**
 * Compares two snapshots of (typically) the same resource, `a` older.
 *
 * Reports: schema_changed (the schema hashes differ); added and removed
 * columns (by exact name); type_changed (same name, types that are not
 * synonyms); reordered (the relative order of the columns both keep
 * changed — never changes the hash); renamed candidates; a column in a
 * rename pair is not also reported as added or removed; profile_changed
 * (same name, both profiled, similarity below profile_threshold); the row
 * estimates; and name anomalies of either snapshot.
 *
 * Renames pair only a removed column (its name not in b) with an added one
 * (its name not in a): no rename without a removal. With
 * PGW_RENAME_COMBINED every (removed, added) pair gets its combined score
 * (pgw_rename_score()), and the pairs are chosen one to one so that the
 * sum of their scores is the largest possible, among the pairs scoring at
 * least rename_threshold and above 0: the Hungarian method in the
 * shortest-augmenting-path form of Jonker & Volgenant ("A shortest
 * augmenting path algorithm for dense and sparse linear assignment
 * problems", Computing 38, 1987). A greedy choice is what pairs a start
 * column with an end column whose values are the same set; the optimal
 * assignment with the name evidence (counterpart roles are halved) keeps
 * them apart. Among assignments of equal total, the removed columns in
 * order take the earliest added columns. Renames are listed best first:
 * higher score, then earlier in a, then earlier in b. With
 * PGW_RENAME_PROFILE the rules of format 1 apply (see pgw_rename_method).
 *
 * @param out   receives the diff (free with pgw_diff_free()).
 * @param a     the older snapshot (borrowed for the call).
 * @param b     the newer snapshot (borrowed for the call).
 * @param opts  thresholds and rename rules; NULL for the defaults
 *              (PGW_DIFF_OPTIONS_INIT).
 * @param err   optional detail on failure.
 * @return PGW_OK; PGW_EINVAL (NULL argument, an options version other than
 *         1 and 2, a threshold outside [0, 1], an unknown rename_method, a
 *         weight that is negative or not finite, name + values not above 0,
 *         type or position above 0.5 or their sum above 0.5, shape or
 *         contrast outside [0, 1]); PGW_ENOMEM.
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

/** How the renames of the diff were found: the method of its options, or
 *  PGW_RENAME_PROFILE for a diff read from a format-1 document (NULL gives
 *  PGW_RENAME_COMBINED). */
PGW_API pgw_rename_method pgw_diff_rename_method(const pgw_diff *d);

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
 * Encodes a diff as JSON (format 2, docs/formats.md): the keys
 * `format`, `from`, `to`, `schema_changed`, `class`, `added`, `removed`,
 * `type_changed`, `reordered`, `rename_method`, `renamed_candidates` (each
 * with its `parts`), `profile_changed`, `row_estimate`, `name_anomalies`.
 * The compact form is canonical.
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
 * Decodes a diff document written by pgw_diff_to_json(): format 2, or
 * format 1 as earlier releases wrote it (its renames then have every part
 * -1 and the method PGW_RENAME_PROFILE). Strict and total, like
 * pgw_snapshot_from_json(): each format's keys are required and no other
 * key is allowed. A document no diff can be is refused too: a class the
 * lists contradict; with PGW_RENAME_COMBINED, a score other than
 * parts.score or an evidence the parts contradict; a name twice among
 * added, removed and the renames' from and to (renames are one to one and
 * change the name, and their columns are not also added or removed); parts
 * with shape null and values other than profile, with a shape but no
 * profile, or with a contrast but values null or 0 (parts.contrast may be
 * absent: documents written before it was recorded did not apply it). The weights and the threshold the diff was made with are not
 * in the document, so a score is not recomputed.
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
