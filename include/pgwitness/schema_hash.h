/*
 * pgwitness/schema_hash.h — the order-independent hash of a table's columns
 * and the `_s<hash>` table-name suffix built from it.
 *
 * The construction, reproducible from any language (docs/formats.md lists
 * known-answer vectors):
 *
 *   1. Take the column names, leaving out the collector metadata columns
 *      (by default `_source_dataset_id`, `_ingested_at`, `_source_url`;
 *      exact, case-sensitive byte comparison).
 *   2. Sort them bytewise (unsigned byte order, as memcmp/strcmp compare;
 *      a proper prefix sorts first).
 *   3. Concatenate them, each followed by one 0x00 byte.
 *   4. Hash the bytes with XXH3-64 (xxHash 0.8, XXH3_64bits, seed 0).
 *   5. Print the 64-bit result as 16 lowercase hexadecimal digits,
 *      most significant first (zero-padded).
 *
 * Names are hashed as the bytes given (PostgreSQL stores identifiers in the
 * database encoding; pgwitness assumes UTF-8). Column order, types and
 * values do not enter the hash: reordering columns never changes it, and a
 * retyped column is seen by diff_snapshots, not by the hash.
 *
 * Source: docs/formats.md "schema_hash" (with the known-answer vectors);
 * xxHash specification
 * (https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md), XXH3.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_SCHEMA_HASH_H
#define PGWITNESS_SCHEMA_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "pgwitness/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes needed for a schema hash in text form: 16 hex digits and a NUL. */
#define PGW_SCHEMA_HASH_SIZE 17
/** Bytes needed for a table-name suffix: "_s", 16 hex digits and a NUL. */
#define PGW_SCHEMA_SUFFIX_SIZE 19

/** Version of pgw_hash_options understood by this release. */
#define PGW_HASH_OPTIONS_VERSION 1

/**
 * Options for pgw_schema_hash() and pgw_schema_suffix().
 *
 * Initialise with PGW_HASH_OPTIONS_INIT, then change fields. Passing NULL
 * options is the same as passing PGW_HASH_OPTIONS_INIT.
 */
typedef struct pgw_hash_options {
    /** Must be PGW_HASH_OPTIONS_VERSION. */
    unsigned int version;
    /** Column names to leave out of the hash (borrowed for the call).
     *  NULL means the defaults: `_source_dataset_id`, `_ingested_at`,
     *  `_source_url`. To exclude nothing, pass a non-NULL pointer with
     *  n_exclude = 0. */
    const char *const *exclude;
    /** Number of entries in `exclude` (ignored when exclude is NULL). */
    size_t n_exclude;
} pgw_hash_options;

/** Initialiser for pgw_hash_options: default metadata exclusions. */
#define PGW_HASH_OPTIONS_INIT { PGW_HASH_OPTIONS_VERSION, NULL, 0 }

/**
 * Computes the schema hash of a set of column names, as a 64-bit integer.
 *
 * @param out      receives the XXH3-64 value (untouched on failure).
 * @param names    `n_names` NUL-terminated column names (borrowed), in any
 *                 order; may be NULL when n_names is 0.
 * @param n_names  number of names; 0 gives the hash of the empty input.
 * @param opts     exclusions, or NULL for the defaults.
 * @param err      optional detail on failure.
 * @return PGW_OK;
 *         PGW_EINVAL when out is NULL, names is NULL with n_names > 0, a
 *         name is NULL, the same name appears twice (a table's column names
 *         are unique), or opts has an unknown version or a NULL exclusion;
 *         PGW_ENOMEM when the sort buffer cannot be allocated.
 */
PGW_API int pgw_schema_hash64(uint64_t *out, const char *const *names, size_t n_names,
                              const pgw_hash_options *opts, pgw_error *err);

/**
 * Computes the schema hash of a set of column names in its text form.
 *
 * @param out      receives 16 lowercase hex digits and a NUL
 *                 (PGW_SCHEMA_HASH_SIZE bytes; untouched on failure).
 * @param names    as for pgw_schema_hash64().
 * @param n_names  as for pgw_schema_hash64().
 * @param opts     as for pgw_schema_hash64().
 * @param err      optional detail on failure.
 * @return as pgw_schema_hash64().
 */
PGW_API int pgw_schema_hash(char out[PGW_SCHEMA_HASH_SIZE], const char *const *names,
                            size_t n_names, const pgw_hash_options *opts, pgw_error *err);

/**
 * Builds the table-name suffix `_s<hash>` for a schema variant: "_s"
 * followed by the 16 hex digits of pgw_schema_hash() of the same names.
 * A collector appends it to a table name so that each column set gets its
 * own table; keep the base name at most 45 bytes so the result stays within
 * PostgreSQL's 63-byte identifier limit (NAMEDATALEN - 1).
 *
 * @param out      receives the 18-character suffix and a NUL
 *                 (PGW_SCHEMA_SUFFIX_SIZE bytes; untouched on failure).
 * @param names    as for pgw_schema_hash64().
 * @param n_names  as for pgw_schema_hash64().
 * @param opts     as for pgw_schema_hash64().
 * @param err      optional detail on failure.
 * @return as pgw_schema_hash64().
 */
PGW_API int pgw_schema_suffix(char out[PGW_SCHEMA_SUFFIX_SIZE], const char *const *names,
                              size_t n_names, const pgw_hash_options *opts, pgw_error *err);

#ifdef __cplusplus
}
#endif

#endif /* PGWITNESS_SCHEMA_HASH_H */
