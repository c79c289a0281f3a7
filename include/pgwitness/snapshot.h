/*
 * pgwitness/snapshot.h — the schema snapshot: what one table looked like at
 * one moment, built through a builder and read through accessors; its JSON
 * format; and RFC 3339 timestamps.
 *
 * A snapshot records a table's schema and name, OID, an optional
 * resource_identity (plain text naming the upstream resource, no foreign key
 * to anything), the reason it was taken, when, the row estimate
 * (pg_class.reltuples; -1 "never analysed" becomes null, never 0), whether
 * statistics were available, an `extra` JSON object, and its live columns in
 * order with their types (as format_type() prints them) and an optional
 * value profile read from pg_stats (PostgreSQL documentation, 54.27
 * "pg_stats"; field names are pg_stats's own).
 *
 * Snapshots are immutable once built: they can be read from many threads at
 * once. Everything a snapshot returns (strings, views) is owned by it and
 * valid until pgw_snapshot_free().
 *
 * Bounds (docs/formats.md "Snapshot JSON"; defaults, configurable through
 * pgw_snapshot_options): at most 20 values per profile list, each cut to at
 * most 120 bytes on a UTF-8 character boundary; profiles omitted for tables
 * of more than 300 columns (names and types are still recorded).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_SNAPSHOT_H
#define PGWITNESS_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgwitness/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* timestamps                                                          */

/** Bytes needed for a timestamp in its canonical text form
 *  "YYYY-MM-DDTHH:MM:SS.ffffffZ" plus the NUL. */
#define PGW_TIMESTAMP_SIZE 28

/**
 * Formats a time as canonical RFC 3339 text in UTC with microseconds:
 * "2026-11-30T09:10:44.123456Z" (always 27 characters).
 *
 * @param out   receives the text and a NUL (PGW_TIMESTAMP_SIZE bytes).
 * @param usec  microseconds since 1970-01-01T00:00:00Z (PostgreSQL's
 *              timestamptz resolution); years 0001 to 9999.
 * @return PGW_OK; PGW_EINVAL when out is NULL or the year is outside
 *         0001-9999.
 */
PGW_API int pgw_timestamp_format(char out[PGW_TIMESTAMP_SIZE], int64_t usec);

/**
 * Parses an RFC 3339 date-time ("2026-11-30T09:10:44Z",
 * "2026-11-30 09:10:44.5+01:00"; a space may replace the T) or a plain date
 * ("2026-11-30", meaning midnight UTC) into microseconds since the Unix
 * epoch. Fractions beyond microseconds are rejected rather than rounded.
 * Source: RFC 3339, section 5.6.
 *
 * @param out   receives microseconds since 1970-01-01T00:00:00Z; untouched
 *              on failure.
 * @param text  NUL-terminated text.
 * @param err   optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when out or text is NULL; PGW_EPARSE when the
 *         text is not such a timestamp or names an impossible date.
 */
PGW_API int pgw_timestamp_parse(int64_t *out, const char *text, pgw_error *err);

/* ------------------------------------------------------------------ */
/* the model                                                           */

/** An immutable schema snapshot (opaque). Free with pgw_snapshot_free(). */
typedef struct pgw_snapshot pgw_snapshot;

/** How the value lists of profiles are stored. */
typedef enum pgw_profile_mode {
    /** Values as PostgreSQL prints them, cut to the byte bound. */
    PGW_PROFILE_RAW = 0,
    /** Each value (after the byte cut) replaced by the 16 lowercase hex
     *  digits of its XXH3-64 hash (seed 0): overlap between snapshots can
     *  still be measured, the values cannot be read back. Profile values can
     *  be personal data; this mode keeps them out of storage. */
    PGW_PROFILE_HASHED = 1,
    /** No value profile at all (names, types and counts only). */
    PGW_PROFILE_NONE = 2
} pgw_profile_mode;

/**
 * A column's value profile: the statistics pg_stats keeps (PostgreSQL
 * documentation, 54.27 "pg_stats"). A read-only view owned by its snapshot.
 */
typedef struct pgw_profile {
    /** Fraction of rows that are null, in [0, 1]. */
    double null_frac;
    /** Distinct values, in PostgreSQL's convention: > 0 an estimated count;
     *  < 0 minus the fraction of rows (-1 means every row is distinct);
     *  0 unknown. */
    double n_distinct;
    /** Average width in bytes of non-null values (pg_stats.avg_width). */
    int32_t avg_width;
    /** Number of entries in most_common_vals and most_common_freqs. */
    size_t n_most_common;
    /** The most common values as text, most frequent first (hex hashes in
     *  PGW_PROFILE_HASHED mode). */
    const char *const *most_common_vals;
    /** Their frequencies as fractions of all rows, each in [0, 1]. */
    const double *most_common_freqs;
    /** Number of entries in histogram_bounds. */
    size_t n_histogram_bounds;
    /** Bounds of equal-population buckets over the values not in
     *  most_common_vals, ascending in the column's sort order, thinned to
     *  the bound evenly (first and last always kept). */
    const char *const *histogram_bounds;
    /** Whether correlation is known (PostgreSQL leaves it null for types
     *  without a sort order). */
    bool has_correlation;
    /** Statistical correlation between physical and logical order, in
     *  [-1, 1]. */
    double correlation;
} pgw_profile;

/** A column of a snapshot: a read-only view owned by its snapshot. */
typedef struct pgw_column {
    /** The column name as stored in the catalog (UTF-8). */
    const char *name;
    /** The type as format_type(atttypid, atttypmod) prints it, e.g.
     *  "character varying(20)", "numeric", "timestamp with time zone". */
    const char *type;
    /** 1-based position among the live columns (dropped columns leave gaps
     *  in pg_attribute.attnum; positions do not). */
    uint32_t position;
    /** The value profile, or NULL when there is none (never analysed, no
     *  privilege, profile mode none, or too many columns). */
    const pgw_profile *profile;
} pgw_column;

/** Frees a snapshot and everything it handed out. NULL is ignored. */
PGW_API void pgw_snapshot_free(pgw_snapshot *snap);

/*
 * Accessors. What they return is owned by the snapshot and valid until
 * pgw_snapshot_free(). Given a NULL snapshot they return NULL, 0, false,
 * PGW_PROFILE_RAW or -1 (pgw_snapshot_find_column) and never fail.
 */

/** Schema (namespace) of the table. Never NULL for a snapshot. */
PGW_API const char *pgw_snapshot_schema(const pgw_snapshot *snap);
/** Name of the table. Never NULL for a snapshot. */
PGW_API const char *pgw_snapshot_table(const pgw_snapshot *snap);
/** The table's OID at capture time (pg_class.oid); 0 when unknown. */
PGW_API uint32_t pgw_snapshot_table_oid(const pgw_snapshot *snap);
/** The upstream resource this table holds, or NULL when none was given. */
PGW_API const char *pgw_snapshot_resource(const pgw_snapshot *snap);
/** Why the snapshot was taken (see PGW_REASON_*, or a host's own word).
 *  Never NULL for a snapshot. */
PGW_API const char *pgw_snapshot_reason(const pgw_snapshot *snap);
/** When it was taken: microseconds since the Unix epoch, UTC. */
PGW_API int64_t pgw_snapshot_captured_at(const pgw_snapshot *snap);
/**
 * The row estimate (pg_class.reltuples, rounded).
 * @param snap  the snapshot.
 * @param out   receives the estimate when known; may be NULL.
 * @return true when known; false when the table was never analysed
 *         (reltuples -1), in which case *out is untouched.
 */
PGW_API bool pgw_snapshot_row_estimate(const pgw_snapshot *snap, int64_t *out);
/** Whether pg_stats had statistics for the table when it was captured. */
PGW_API bool pgw_snapshot_stats_available(const pgw_snapshot *snap);
/** How profile values are stored. */
PGW_API pgw_profile_mode pgw_snapshot_profile_mode(const pgw_snapshot *snap);
/** True when profiles were left out because the table had more columns
 *  than pgw_snapshot_options.max_profiled_columns. */
PGW_API bool pgw_snapshot_profiles_omitted(const pgw_snapshot *snap);
/** The schema hash: 16 lowercase hex digits (see schema_hash.h). Never
 *  NULL for a snapshot. */
PGW_API const char *pgw_snapshot_schema_hash(const pgw_snapshot *snap);
/** The `extra` JSON object as canonical compact text ("{}" when empty). */
PGW_API const char *pgw_snapshot_extra(const pgw_snapshot *snap);
/** Number of columns. */
PGW_API size_t pgw_snapshot_column_count(const pgw_snapshot *snap);
/**
 * The i-th column (0-based; its position field is i + 1).
 * @return a view owned by the snapshot, or NULL when i is out of range.
 */
PGW_API const pgw_column *pgw_snapshot_column(const pgw_snapshot *snap, size_t i);
/**
 * Finds a column by exact (bytewise) name.
 * @return its 0-based index, or -1 when there is no such column.
 */
PGW_API long pgw_snapshot_find_column(const pgw_snapshot *snap, const char *name);

/* ------------------------------------------------------------------ */
/* reasons                                                             */

/** The table's format changed upstream; it is dropped to be recreated. */
#define PGW_REASON_SCHEMA_MISMATCH_RECREATE "schema_mismatch_recreate"
/** An older raw version is dropped under a retention policy. */
#define PGW_REASON_RETAIN_RAW_VERSIONS "retain_raw_versions"
/** A raw table no longer referenced by any resource is cleaned up. */
#define PGW_REASON_RAW_ORPHAN_CLEANUP "raw_orphan_cleanup"
/** An empty raw table is dropped to reduce catalog bloat. */
#define PGW_REASON_EMPTY_RAW_BLOAT "empty_raw_bloat"
/** A baseline pass recorded a live table. */
#define PGW_REASON_BASELINE "baseline"
/** An operator asked for it. */
#define PGW_REASON_MANUAL "manual"

/* ------------------------------------------------------------------ */
/* the builder                                                         */

/** Version of pgw_snapshot_options understood by this release. */
#define PGW_SNAPSHOT_OPTIONS_VERSION 1

/** Bounds and profile mode applied by the builder. */
typedef struct pgw_snapshot_options {
    /** Must be PGW_SNAPSHOT_OPTIONS_VERSION. */
    unsigned int version;
    /** Maximum values kept per profile list (default 20, at least 2).
     *  most_common_vals keeps the most frequent; histogram_bounds keeps
     *  evenly spaced bounds including the first and the last. */
    size_t max_values;
    /** Maximum bytes per value (default 120, at least 4); longer values are
     *  cut on a UTF-8 character boundary. */
    size_t max_value_bytes;
    /** Tables with more columns than this keep no profiles (default 300). */
    size_t max_profiled_columns;
    /** How values are stored (default PGW_PROFILE_RAW). */
    pgw_profile_mode profile_mode;
    /** Column names left out of the schema hash (borrowed for the calls
     *  that take these options); NULL means the defaults of
     *  PGW_HASH_OPTIONS_INIT (see schema_hash.h). */
    const char *const *hash_exclude;
    /** Entries in hash_exclude. */
    size_t n_hash_exclude;
} pgw_snapshot_options;

/** Initialiser with the defaults: 20 values, 120 bytes, 300 columns, raw. */
#define PGW_SNAPSHOT_OPTIONS_INIT \
    { PGW_SNAPSHOT_OPTIONS_VERSION, 20, 120, 300, PGW_PROFILE_RAW, NULL, 0 }

/** Accumulates one snapshot (opaque). Free with
 *  pgw_snapshot_builder_free(). One thread at a time. */
typedef struct pgw_snapshot_builder pgw_snapshot_builder;

/**
 * The statistics of one column handed to the builder, as read from
 * pg_stats. The builder copies everything it keeps; the arrays are borrowed
 * for the call only.
 */
typedef struct pgw_column_stats {
    /** Fraction of null rows, in [0, 1]. */
    double null_frac;
    /** n_distinct in PostgreSQL's convention: >= -1 (see pgw_profile). */
    double n_distinct;
    /** Average width in bytes, >= 0. */
    int32_t avg_width;
    /** most_common_vals: n_most_common NUL-terminated UTF-8 values. */
    const char *const *most_common_vals;
    /** most_common_freqs: n_most_common fractions in [0, 1]. */
    const double *most_common_freqs;
    /** Entries in both arrays above (0 when pg_stats has none). */
    size_t n_most_common;
    /** histogram_bounds: n_histogram_bounds values, ascending. */
    const char *const *histogram_bounds;
    /** Entries in histogram_bounds (0 when pg_stats has none). */
    size_t n_histogram_bounds;
    /** Whether correlation is known. */
    bool has_correlation;
    /** Correlation in [-1, 1] when has_correlation. */
    double correlation;
} pgw_column_stats;

/** Initialiser for pgw_column_stats: no values, nothing known. */
#define PGW_COLUMN_STATS_INIT { 0.0, 0.0, 0, NULL, NULL, 0, NULL, 0, false, 0.0 }

/**
 * Creates a builder.
 *
 * @param out   receives the builder (free with pgw_snapshot_builder_free).
 * @param opts  bounds and profile mode, copied; NULL for the defaults.
 * @param err   optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when out is NULL or an option is out of range
 *         (unknown version, max_values < 2, max_value_bytes < 4, unknown
 *         profile_mode, NULL hash_exclude entry); PGW_ENOMEM.
 */
PGW_API int pgw_snapshot_builder_new(pgw_snapshot_builder **out,
                                     const pgw_snapshot_options *opts, pgw_error *err);

/** Frees a builder and what it accumulated. NULL is ignored. */
PGW_API void pgw_snapshot_builder_free(pgw_snapshot_builder *b);

/**
 * Sets the table the snapshot describes (required).
 *
 * @param b       the builder.
 * @param schema  schema name, non-empty UTF-8 (copied).
 * @param table   table name, non-empty UTF-8 (copied).
 * @param oid     pg_class.oid, or 0 when unknown (another database).
 * @param err     optional detail on failure.
 * @return PGW_OK; PGW_EINVAL (NULL, empty or not UTF-8, naming which);
 *         PGW_ENOMEM (the builder is unchanged).
 */
PGW_API int pgw_snapshot_builder_set_table(pgw_snapshot_builder *b, const char *schema,
                                           const char *table, uint32_t oid, pgw_error *err);

/**
 * Sets or clears the resource identity: free text naming the upstream
 * resource the table holds (a dataset id, a URL). It has no foreign key to
 * anything, so it outlives what it names.
 *
 * @param b         the builder.
 * @param resource  non-empty UTF-8 (copied), or NULL to clear.
 * @param err       optional detail on failure.
 * @return PGW_OK; PGW_EINVAL (empty or not UTF-8); PGW_ENOMEM.
 */
PGW_API int pgw_snapshot_builder_set_resource(pgw_snapshot_builder *b, const char *resource,
                                              pgw_error *err);

/**
 * Sets the reason (default PGW_REASON_MANUAL).
 *
 * @param b       the builder.
 * @param reason  non-empty UTF-8 of at most 200 bytes (copied); the
 *                library's words are the PGW_REASON_* macros, hosts may pass
 *                their own.
 * @param err     optional detail on failure.
 * @return PGW_OK; PGW_EINVAL; PGW_ENOMEM.
 */
PGW_API int pgw_snapshot_builder_set_reason(pgw_snapshot_builder *b, const char *reason,
                                            pgw_error *err);

/**
 * Sets when the snapshot was taken (required: the core reads no clock).
 *
 * @param b     the builder.
 * @param usec  microseconds since the Unix epoch, UTC; years 0001-9999.
 * @param err   optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when outside the representable years.
 */
PGW_API int pgw_snapshot_builder_set_captured_at(pgw_snapshot_builder *b, int64_t usec,
                                                 pgw_error *err);

/**
 * Sets the row estimate from pg_class.reltuples.
 *
 * @param b          the builder.
 * @param reltuples  the estimate; any negative value (PostgreSQL 14+ uses
 *                   -1 for "never vacuumed or analysed") records null —
 *                   unknown, never 0. Rounded to the nearest integer.
 * @param err        optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when reltuples is NaN, infinite or above 2^62.
 */
PGW_API int pgw_snapshot_builder_set_reltuples(pgw_snapshot_builder *b, double reltuples,
                                               pgw_error *err);

/**
 * Records whether pg_stats had statistics for the table. Adding a column
 * with statistics sets it to true; set it explicitly when statistics exist
 * but are not kept (PGW_PROFILE_NONE).
 */
PGW_API void pgw_snapshot_builder_set_stats_available(pgw_snapshot_builder *b, bool available);

/**
 * Sets the `extra` JSON object (default {}). A baseline carries
 * {"alive": true}.
 *
 * @param b     the builder.
 * @param json  a JSON object as UTF-8 text of at most 64 KiB, or NULL for {}.
 * @param err   optional detail on failure.
 * @return PGW_OK; PGW_EPARSE when json is not one JSON object (with the
 *         path and reason); PGW_ENOMEM.
 */
PGW_API int pgw_snapshot_builder_set_extra(pgw_snapshot_builder *b, const char *json,
                                           pgw_error *err);

/**
 * Appends the next live column, in table order; its position is the number
 * of columns added before it plus one.
 *
 * Values are bounded as the options say (cut to max_value_bytes on a UTF-8
 * boundary, at most max_values per list) and stored as the profile mode
 * says. When the table ends up with more than max_profiled_columns columns,
 * pgw_snapshot_builder_finish() drops every profile.
 *
 * @param b      the builder.
 * @param name   column name, non-empty UTF-8, unique within the table.
 * @param type   type as format_type() prints it, non-empty UTF-8.
 * @param stats  the column's pg_stats row, or NULL when it has none.
 * @param err    optional detail on failure.
 * @return PGW_OK; PGW_EINVAL (bad name or type, duplicate name, a statistic
 *         out of range — null_frac or a frequency outside [0, 1],
 *         n_distinct < -1, negative avg_width, correlation outside [-1, 1],
 *         NaN — a NULL or non-UTF-8 value, or more than 1600 columns,
 *         PostgreSQL's MaxHeapAttributeNumber); PGW_ENOMEM. On failure the
 *         builder is unchanged.
 */
PGW_API int pgw_snapshot_builder_add_column(pgw_snapshot_builder *b, const char *name,
                                            const char *type, const pgw_column_stats *stats,
                                            pgw_error *err);

/** Longest list accepted by pgw_snapshot_builder_add_column_json():
 *  PostgreSQL's largest statistics target (10000) plus one histogram bound. */
#define PGW_PROFILE_JSON_MAX_VALUES 10001

/**
 * Appends the next live column with its statistics given as a profile JSON
 * object — the "profile" form of docs/formats.md: `null_frac`,
 * `n_distinct`, `avg_width`, `most_common_vals`, `most_common_freqs`,
 * `histogram_bounds`, `correlation` (number or null), all required, no
 * other key. The libpq adapter builds this object in SQL from pg_stats, so
 * hosts reading statistics from elsewhere can use the same form.
 *
 * Unlike pgw_snapshot_from_json(), the bounds are applied, not enforced:
 * lists of up to PGW_PROFILE_JSON_MAX_VALUES values are thinned and values
 * cut exactly as pgw_snapshot_builder_add_column() does.
 *
 * @param b             the builder.
 * @param name          column name, as for pgw_snapshot_builder_add_column().
 * @param type          column type, as for pgw_snapshot_builder_add_column().
 * @param profile_json  the profile object as UTF-8 text, or NULL when the
 *                      column has no statistics.
 * @param err           optional detail on failure.
 * @return PGW_OK; PGW_EPARSE when profile_json is not such an object (with
 *         the path, e.g. "$.most_common_freqs[3]"); PGW_EINVAL and
 *         PGW_ENOMEM as pgw_snapshot_builder_add_column(). On failure the
 *         builder is unchanged.
 */
PGW_API int pgw_snapshot_builder_add_column_json(pgw_snapshot_builder *b, const char *name,
                                                 const char *type, const char *profile_json,
                                                 pgw_error *err);

/**
 * Builds the snapshot: applies the column bound, computes the schema hash
 * and prepares the profiles for comparison.
 *
 * On success the builder is emptied (as if new, same options) and can build
 * another snapshot; on failure it is unchanged.
 *
 * @param out  receives the snapshot (free with pgw_snapshot_free()).
 * @param b    the builder.
 * @param err  optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when the table or captured_at was not set;
 *         PGW_ENOMEM.
 */
PGW_API int pgw_snapshot_builder_finish(pgw_snapshot **out, pgw_snapshot_builder *b,
                                        pgw_error *err);

/* ------------------------------------------------------------------ */
/* JSON                                                                */

/** The snapshot JSON format version written by this release. */
#define PGW_SNAPSHOT_FORMAT 1

/** Largest snapshot or diff document accepted by the decoders, in bytes. */
#define PGW_SNAPSHOT_JSON_MAX_BYTES (8u * 1024u * 1024u)

/**
 * Encodes a snapshot as JSON (format 1, documented field by field in
 * docs/formats.md). The compact form is canonical: decoding it and encoding
 * again gives the same bytes.
 *
 * @param out      receives NUL-terminated UTF-8 (free with pgw_free()).
 * @param out_len  receives its length in bytes, without the NUL; may be NULL.
 * @param snap     the snapshot.
 * @param flags    0 or PGW_JSON_PRETTY.
 * @param err      optional detail on failure.
 * @return PGW_OK; PGW_EINVAL (NULL argument, unknown flag); PGW_ENOMEM.
 */
PGW_API int pgw_snapshot_to_json(char **out, size_t *out_len, const pgw_snapshot *snap,
                                 unsigned flags, pgw_error *err);

/**
 * Decodes a snapshot document.
 *
 * Strict and total: the document must be one JSON object of format 1 with
 * exactly the documented keys and types, well-formed UTF-8, at most
 * PGW_SNAPSHOT_JSON_MAX_BYTES, within the bounds of `opts` (a value longer than
 * max_value_bytes or a list longer than max_values is an error here, not
 * cut), and consistent (positions 1..n in order, unique names, matching
 * list lengths, a 16-hex-digit schema_hash). The stored schema_hash is kept
 * as written (it may have been computed with other exclusions).
 *
 * @param out   receives the snapshot (free with pgw_snapshot_free());
 *              untouched on failure — there is never a partial object.
 * @param json  the text (need not be NUL-terminated).
 * @param len   its length in bytes.
 * @param opts  the bounds to enforce; NULL for the defaults.
 * @param err   optional detail: for PGW_EPARSE, err->path holds the JSON
 *              path of the offending value ("$.columns[3].profile") and the
 *              message the reason.
 * @return PGW_OK; PGW_EINVAL (NULL argument or bad options); PGW_EPARSE;
 *         PGW_EVERSION when "format" is a version this release does not
 *         know; PGW_ENOMEM.
 */
PGW_API int pgw_snapshot_from_json(pgw_snapshot **out, const char *json, size_t len,
                                   const pgw_snapshot_options *opts, pgw_error *err);

#ifdef __cplusplus
}
#endif

#endif /* PGWITNESS_SNAPSHOT_H */
