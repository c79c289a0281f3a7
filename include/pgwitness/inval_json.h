/*
 * pgwitness/inval_json.h — the JSON forms of dependencies, write sets and
 * verdicts (field by field in docs/wire.md, "Dependencies (JSON form)",
 * "Write sets (JSON form)", "Verdicts"). Used by tests, by the CLI
 * (`pgwitness decide`) and by hosts that keep subscriptions outside C.
 *
 * Reading is strict: unknown keys, wrong types, duplicate keys, invalid
 * UTF-8 and documents over PGW_INVAL_JSON_MAX_BYTES are PGW_EPARSE, with the JSON
 * path of the problem in pgw_error.path ("$.tables[0].filters[1].op").
 * Writing is canonical: compact, keys in the documented order, optional
 * members written exactly when docs/wire.md says (a write set's "old" and
 * "new" only when it has values, a declaration's "undeclared" and
 * "time_dependent" only when set), so decode(encode(x)) encodes to the
 * same text.
 *
 * Dependencies:
 *   {"scope": {"project": "p1", "tenant": "acme", "database": "app"},
 *    "query": "tasks.list",
 *    "tables": [{"schema": "public", "table": "tasks",
 *                "columns": ["id", "title"] | "*",
 *                "filters": [{"column": "status", "op": "eq", "values": ["open"]},
 *                            {"column": "due_at", "op": "opaque"}],
 *                "order_by": ["updated_at"], "limit": 20 | null, "offset": 0}],
 *    "result_ids": ["17", ["1", "a"]] | null, "time_dependent": true}
 *   or {"scope": ..., "query": ..., "undeclared": true}, each with an
 *   optional last "time_dependent" (boolean, default false: the query
 *   reads the clock; pgw_deps_set_time_dependent()).
 * Write sets:
 *   {"scope": ..., "schema": "public", "table": "tasks", "op": "update",
 *    "ids": ["17"] | null, "ids_truncated": false,
 *    "columns": ["status"] | null, "columns_truncated": false,
 *    "old": [{"status": "open"}], "new": [{"status": null}], "pk_changed": false}
 *   with "op" one of insert, update, delete, truncate, unknown,
 *   {"scope": ..., "schema": ..., "table": ..., "op": "ddl"} when the
 *   table's definition changed, and {"scope": ..., "op": "reset"} for a
 *   scope reset. An element of "old" or
 *   "new" may be null: the row does not exist on that side (key changes).
 * Verdicts:
 *   {"verdict": "refresh", "reason": "FILTER_COLUMN_CHANGED"}.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_INVAL_JSON_H
#define PGWITNESS_INVAL_JSON_H

#include <stddef.h>

#include "pgwitness/common.h"
#include "pgwitness/inval.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest JSON document these decoders accept, in bytes (64 MiB: a
 *  declaration may carry a large result_ids list).
 *
 *  Memory: a decoder holds the parsed document (jansson's tree) while it
 *  builds the object, and that tree is much larger than the text: up to
 *  ~50 times for a list of short row IDs (a 20 MB result_ids list of 2
 *  million keys took ~390 MB at its peak). A host that decodes documents
 *  from untrusted sources should bound their length itself, well under this
 *  limit, or allocate through a bounded allocator (pgw_set_allocator()):
 *  an allocation refused there is PGW_ENOMEM, with nothing built. */
#define PGW_INVAL_JSON_MAX_BYTES ((size_t)64 << 20)

/**
 * Reads a declaration from its JSON form.
 *
 * @param out   receives a new declaration; caller frees with pgw_deps_free().
 *              Untouched on failure.
 * @param json  UTF-8 JSON text (borrowed), not necessarily NUL-terminated.
 * @param len   its length in bytes.
 * @param err   optional detail on failure (message and JSON path).
 * @return PGW_OK; PGW_EINVAL when out or json is NULL; PGW_EPARSE for
 *         malformed JSON, unknown keys, wrong types, an empty "tables",
 *         "undeclared" with tables or result IDs, a duplicate table or column,
 *         an "eq" with other than one value, values on "opaque", NULL among
 *         values, a negative limit/offset, a row ID with 0 or more than
 *         PGW_ROWID_MAX_PARTS parts, a "range" without "type" or without a
 *         bound, with "values", with a bound that does not parse or an
 *         "_inclusive" missing or alone, range keys on another op, an
 *         order_by key that is not a name or a {"column", "type",
 *         "descending", "nulls_first"} object, "result" other than "list"
 *         or "aggregate", or "window_bounds" that
 *         pgw_deps_set_window_bounds() refuses (the path names the key, the
 *         message the problem); PGW_ENOMEM.
 */
PGW_API int pgw_deps_from_json(pgw_deps **out, const char *json, size_t len, pgw_error *err);

/**
 * Writes a declaration in its canonical JSON form.
 *
 * @param out      receives a NUL-terminated string; caller frees with
 *                 pgw_free(). Untouched on failure.
 * @param out_len  receives its length in bytes (without the NUL); may be NULL.
 * @param deps     the declaration.
 * @param err      optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when out or deps is NULL; PGW_ENOMEM.
 */
PGW_API int pgw_deps_to_json(char **out, size_t *out_len, const pgw_deps *deps,
                             pgw_error *err);

/**
 * Reads a write set from its JSON form.
 *
 * @param out   receives a new write set; caller frees with pgw_write_free().
 *              Untouched on failure.
 * @param json  UTF-8 JSON text (borrowed).
 * @param len   its length in bytes.
 * @param err   optional detail on failure (message and JSON path).
 * @return PGW_OK; PGW_EINVAL when out or json is NULL; PGW_EPARSE for
 *         malformed JSON, unknown keys, wrong types, an unknown op, "old"
 *         or "new" not aligned with "ids", old rows for an insert or new
 *         rows for a delete, a null row without pk_changed, or row IDs and
 *         columns on a truncate, unknown write, ddl or reset; PGW_ENOMEM.
 */
PGW_API int pgw_write_from_json(pgw_write **out, const char *json, size_t len,
                                pgw_error *err);

/**
 * Writes a write set in its canonical JSON form.
 *
 * @param out      receives a NUL-terminated string; caller frees with
 *                 pgw_free(). Untouched on failure.
 * @param out_len  receives its length in bytes; may be NULL.
 * @param write    the write set.
 * @param err      optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when out or write is NULL; PGW_ENOMEM.
 */
PGW_API int pgw_write_to_json(char **out, size_t *out_len, const pgw_write *write,
                              pgw_error *err);

/**
 * Reads a verdict: {"verdict": "refresh"|"skip", "reason": NAME}.
 *
 * @param out   receives the verdict (untouched on failure).
 * @param json  UTF-8 JSON text (borrowed).
 * @param len   its length in bytes.
 * @param err   optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when out or json is NULL; PGW_EPARSE for
 *         malformed JSON, unknown keys, an unknown reason, or a reason that
 *         implies the other verdict (pgw_reason_refreshes()); PGW_ENOMEM.
 */
PGW_API int pgw_verdict_from_json(pgw_verdict *out, const char *json, size_t len,
                                  pgw_error *err);

/**
 * Writes a verdict in its canonical JSON form.
 *
 * @param out      receives a NUL-terminated string; caller frees with
 *                 pgw_free(). Untouched on failure.
 * @param out_len  receives its length in bytes; may be NULL.
 * @param verdict  the verdict.
 * @param err      optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when out or verdict is NULL, the reason is
 *         outside the enum, or the reason implies the other verdict
 *         (pgw_reason_refreshes(); pgw_verdict_from_json() refuses such a
 *         document); PGW_ENOMEM.
 */
PGW_API int pgw_verdict_to_json(char **out, size_t *out_len, const pgw_verdict *verdict,
                                pgw_error *err);

#ifdef __cplusplus
}
#endif

#endif /* PGWITNESS_INVAL_JSON_H */
