/*
 * pgwitness/payload.h — the notification payload: what a statement trigger
 * sends with pg_notify() for one statement, and how a listener turns it into
 * a write set. Field by field in docs/wire.md.
 *
 * Version 1, compact JSON, always under 8000 bytes:
 *
 *   {"version":1,"schema":"public","table":"tasks","op":"update",
 *    "ids":["17",["1","a"]],"ids_truncated":false,
 *    "columns":["status"],"columns_truncated":false,
 *    "old":[{"status":"open"}],"new":[{"status":"closed"}],"pk_changed":false}
 *
 *  - version: 1. Any other value: the payload is not understood.
 *  - schema, table: the written table (catalog names, UTF-8).
 *  - op: "insert", "update", "delete", "truncate" or "ddl". A ddl
 *    ({"version":1,"schema":S,"table":T,"op":"ddl"}, no other key) says the
 *    table's definition changed: every subscription reading it refreshes.
 *    A listener that predates "ddl" reads it as malformed, an unknown write
 *    to the table, which refreshes the same subscriptions.
 *  - ids: the changed rows' primary keys (a string, or an array of strings
 *    for a composite key), at most PGW_PAYLOAD_MAX_IDS; null when unknown
 *    (no primary key, too many rows, or over the byte budget). For a key
 *    change both the old and the new key are listed.
 *  - ids_truncated: true when rows were left out (ids is then null).
 *  - columns: changed columns of an update, at most PGW_PAYLOAD_MAX_COLUMNS;
 *    null when unknown. columns_truncated: true when left out.
 *  - old, new (optional): aligned with ids; each element an object of the
 *    configured columns' values as text (null for SQL NULL), or null when
 *    the row does not exist on that side (key changes).
 *  - pk_changed: true when the statement changed any primary key.
 *
 * The budget: PostgreSQL requires a NOTIFY payload "shorter than 8000 bytes"
 * in the default configuration, counted in bytes of the database encoding
 * (PostgreSQL documentation, SQL Commands, NOTIFY; src/backend/commands/
 * async.c, NOTIFY_PAYLOAD_MAX_LENGTH). pgwitness counts UTF-8 bytes. When a
 * payload would not fit it degrades, in this order: drop old/new values;
 * drop ids (ids null, ids_truncated true); drop columns (columns null,
 * columns_truncated true) — the last step is the table-level form, which
 * always fits for PostgreSQL identifiers (at most 63 bytes each).
 *
 * Decoding never fails on a bad payload: a notification that is malformed or
 * of an unknown version becomes an unknown write to the table it names
 * (PGW_OP_UNKNOWN: every subscription reading the table refreshes), or, when
 * no table can be read from it, a scope reset. pgw_write_fallback_status()
 * tells the cases apart. The listener passes the result to
 * pgw_index_match().
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_PAYLOAD_H
#define PGWITNESS_PAYLOAD_H

#include <stddef.h>

#include "pgwitness/common.h"
#include "pgwitness/inval.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The payload format version this release writes and reads. */
#define PGW_PAYLOAD_VERSION 1
/** Largest payload in bytes: PostgreSQL requires fewer than 8000. */
#define PGW_PAYLOAD_MAX_BYTES 7999
/** Most row IDs a payload lists. */
#define PGW_PAYLOAD_MAX_IDS 500
/** Most changed columns a payload lists. */
#define PGW_PAYLOAD_MAX_COLUMNS 100

/** Version of pgw_payload_options understood by this release. */
#define PGW_PAYLOAD_OPTIONS_VERSION 1

/**
 * Options of pgw_payload_encode(). Initialise with PGW_PAYLOAD_OPTIONS_INIT;
 * NULL options mean the defaults.
 */
typedef struct pgw_payload_options {
    /** Must be PGW_PAYLOAD_OPTIONS_VERSION. */
    unsigned int version;
    /** Byte budget, 1..PGW_PAYLOAD_MAX_BYTES (default PGW_PAYLOAD_MAX_BYTES). */
    size_t max_bytes;
    /** Most IDs listed, 0..PGW_PAYLOAD_MAX_IDS; beyond it ids is null and
     *  ids_truncated true (default PGW_PAYLOAD_MAX_IDS). */
    size_t max_ids;
    /** Most columns listed, 0..PGW_PAYLOAD_MAX_COLUMNS (default
     *  PGW_PAYLOAD_MAX_COLUMNS). */
    size_t max_columns;
} pgw_payload_options;

/** Initialiser for pgw_payload_options: the documented defaults. */
#define PGW_PAYLOAD_OPTIONS_INIT \
    { PGW_PAYLOAD_OPTIONS_VERSION, PGW_PAYLOAD_MAX_BYTES, PGW_PAYLOAD_MAX_IDS, \
      PGW_PAYLOAD_MAX_COLUMNS }

/**
 * Turns a notification payload into a write set.
 *
 * Total: a malformed payload, one over PGW_PAYLOAD_MAX_BYTES or over the ID
 * and column caps, or one of another version, gives PGW_OK and a fallback
 * write set (an unknown write to the named table, or a scope reset) whose
 * pgw_write_fallback_status() is PGW_EPARSE or PGW_EVERSION and whose
 * pgw_write_fallback_message() says why.
 *
 * @param out      receives a new write set; caller frees with
 *                 pgw_write_free(). Untouched on failure.
 * @param scope    the scope the notification came from (the listener knows
 *                 the tenant database); strings copied.
 * @param payload  the payload bytes (borrowed); need not be NUL-terminated;
 *                 may be NULL when len is 0.
 * @param len      its length in bytes.
 * @param err      optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when out or scope is NULL, payload is NULL
 *         with len > 0, or a scope string is not UTF-8; PGW_ENOMEM (the
 *         caller should then treat the notification as a scope reset, which
 *         pgw_index_reset_scope() performs without allocating).
 */
PGW_API int pgw_payload_decode(pgw_write **out, const pgw_scope *scope, const char *payload,
                               size_t len, pgw_error *err);

/**
 * Writes the payload a statement trigger would send for a write set,
 * degrading as documented above to stay within the byte budget. Used by
 * tests, and by hosts that emit notifications themselves.
 *
 * @param out      receives a NUL-terminated payload of at most
 *                 opts->max_bytes bytes; caller frees with pgw_free().
 *                 Untouched on failure.
 * @param out_len  receives its length in bytes; may be NULL.
 * @param write    an insert, update, delete, truncate or ddl (the scope is
 *                 not part of the payload).
 * @param opts     options, or NULL for PGW_PAYLOAD_OPTIONS_INIT.
 * @param err      optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when out or write is NULL, the write is an
 *         unknown write or a reset, or opts is out of range or of another
 *         version; PGW_ELIMIT when even the table-level form exceeds the
 *         budget (names longer than PostgreSQL allows); PGW_ENOMEM.
 */
PGW_API int pgw_payload_encode(char **out, size_t *out_len, const pgw_write *write,
                               const pgw_payload_options *opts, pgw_error *err);

#ifdef __cplusplus
}
#endif

#endif /* PGWITNESS_PAYLOAD_H */
