/*
 * pgwitness/inval.h — query invalidation, the pure model: scopes, the
 * dependencies a subscription declares, the write set of one statement, and
 * the decision pgw_decide() between them, with a reason code.
 *
 * affected → refresh, unaffected → skip, unknown → refresh. Refreshing too
 * much costs time; missing a required refresh is a correctness bug, so every
 * rule below that skips says why it is sound, and a randomized differential
 * test (tests/unit/check_inval_diff.c) compares the rules with an oracle
 * that evaluates the queries before and after each write.
 *
 * ## What a declaration promises (the host's side of the contract)
 *
 * For each table a subscription reads, the host declares:
 *  - `columns`: every column the query reads from that table (projected,
 *    joined, aggregated), or all of them. Filter and sort columns are always
 *    treated as read, listed or not.
 *  - `filters`: a conjunction. Every predicate on the table's rows appears:
 *    `col = v` or `col IN (...)` as `eq`/`in` with their values when known;
 *    comparisons and BETWEEN of a column with constants as `range` with
 *    their bounds and the comparison type the query compares under
 *    (pgw_deps_add_range(), pgw_cmp_type: integers, numeric, date,
 *    timestamp, timestamptz, text under the C collation); every other
 *    predicate (LIKE, IS NULL, functions, other types and collations, join
 *    conditions, sub-queries) as `opaque` on each column it involves. A row
 *    that fails any declared filter does not influence the result.
 *    Values are compared as text, byte for byte, with the text the
 *    notification carries: the column's output text, as libpq returns it
 *    (`t` for true, not `true` as `column::text` says; char(n) padded),
 *    printed with DateStyle ISO, TimeZone UTC (docs/wire.md "Text forms"):
 *    declare `eq`/`in` values only for
 *    types whose equality is text equality (text, varchar, integers, uuid,
 *    boolean, enums, date) in their canonical output form; declare numeric,
 *    float, citext, non-deterministic collations and time zone dependent
 *    types as `opaque`. SQL `=` never matches NULL, so neither do values.
 *  - `order_by`: the sort columns of that table, optionally as sort keys
 *    with their comparison type, ASC/DESC and NULLS FIRST/LAST
 *    (pgw_deps_set_sort_keys()), which window bounds need. The result is
 *    taken to be ordered by the sort columns and then by the primary key
 *    (write the key last in ORDER BY so the window is deterministic).
 *    Without sort columns and without a window the result is an unordered
 *    multiset.
 *  - `limit`/`offset`: the window. For a query over several tables, declare
 *    the query's window on every table entry, and each ORDER BY column on
 *    the entry of the table it belongs to.
 *  - `result`: what the result is (pgw_deps_set_result_kind()): a list of
 *    the first table's rows, or an aggregate (count(x), sum(x), GROUP BY,
 *    DISTINCT, ...). Unspecified, a first table that declares no columns
 *    (count(*), EXISTS) is an aggregate and any other a list, as before
 *    result kinds: declare sum(x) and count(x) as aggregates.
 *  - `result_ids`: optionally, the primary keys of the rows of the *first*
 *    declared table that are in the current result. Used only when the
 *    result is a list; an aggregate's are ignored, here and in a
 *    pgw_index. They are kept as 32-bit fingerprints: a collision can only
 *    cause an extra refresh.
 *  - `window_bounds`: optionally, after a rerun, the sort-key values of
 *    the first and the last row of the first table's window, and whether
 *    it holds `limit` rows (pgw_deps_set_window_bounds(); a pgw_index keeps
 *    them per runner, pgw_index_ack_window()). For a query over several
 *    tables, the first table's sort keys must lead its ORDER BY.
 *  A subscription with no table declared is *undeclared*: every write in
 *  its scope refreshes it (the compatibility fallback).
 *
 * ## What a write set promises (the writer's side)
 *
 * One statement on one table: `ids` lists the primary key of every changed
 * row (for a key change: the old and the new key), or is unknown;
 * `columns` lists every column whose value differs between the old and the
 * new version of any updated row (following each row through the update,
 * key changes included), or is unknown; `old`/`new` optionally give, per
 * listed row, the values of some columns before and after, or say that the
 * row did not exist on that side; `pk_changed` is true when any key changed.
 *
 * ## The rule table of pgw_decide()
 *
 * Evaluated top to bottom; the first rule that applies gives the verdict.
 * Notation: T is the declaration's entry for the written table; R is the
 * set of result IDs (known only when T is the first table, result IDs were
 * declared, and the result is a list: declared so, or unspecified with T's
 * declared `columns` not empty — an entry declaring none, as count(*) or
 * EXISTS do, aggregates its rows and lists none, so its result IDs, a
 * host's "no IDs" for a count, say, are never used, whatever its filter
 * and sort columns); B, the window bounds, known when T is the first
 * table, the result is a list (as for R: an aggregate's window counts
 * groups, which a row can add in front of it or in an empty window), bounds
 * were declared, T is windowed (not needed for a window that holds no row),
 * and the result is not being rerun (an index runner's while it runs);
 * "read" = columns ∪ filter columns ∪ sort columns;
 * "windowed" = a limit or an offset > 0; "ordered" = windowed or sort
 * columns; the key counts as read when ordered or R is known.
 *
 * | # | condition | verdict, reason | why a skip is sound |
 * |---|-----------|-----------------|---------------------|
 * | 1 | write scope ≠ subscription scope | skip SCOPE_DISJOINT | scopes are separate databases or tenants |
 * | 2 | write is a scope reset | refresh SCOPE_RESET | |
 * | 3 | subscription undeclared | refresh UNDECLARED | |
 * | 4 | no entry for the written table | skip TABLE_NOT_READ | the result depends only on declared tables |
 * | 5 | truncate; ddl (the table's definition changed) | refresh TRUNCATE; refresh DDL | |
 * | 6 | operation unknown (degraded payload) | refresh WRITE_UNKNOWN | |
 * | 7 | update, columns known, none read by T, and not (key changed and key read) | skip COLUMNS_DISJOINT | every row keeps its relevance, its sort position and the values the query reads |
 * | E1 | B says the window holds no row; a delete, or an update with its changed columns known and no filter column among them | skip WINDOW_EMPTY | at most `offset` rows were relevant; a delete removes rows and such an update keeps every row's relevance, so none reaches the window |
 * | 8 | IDs unknown or truncated | insert: refresh INSERT_MAY_ENTER; else refresh IDS_UNKNOWN | |
 *
 * A ddl write set (PGW_OP_DDL: ALTER TABLE and the like changed the
 * table's definition, so any row and any column may differ) is decided by
 * rules 1 to 5 only, like a truncate: another scope skips
 * (SCOPE_DISJOINT), an undeclared subscription refreshes with UNDECLARED
 * (rule 3 comes first, as for every other operation), a subscription that
 * does not read the table skips (TABLE_NOT_READ: its result depends only on
 * the tables it declared), and every other one refreshes with DDL, whatever
 * columns, filters, window or result IDs it declared — those name columns
 * of the old definition.
 *
 * Then each listed row r is examined; the first row that needs a refresh
 * decides, and if none does the verdict is skip (VALUES_DISJOINT when some
 * row needed its values, else ROWS_DISJOINT; WINDOW_EMPTY, BEFORE_WINDOW
 * or BEYOND_WINDOW, in that order, when some row was skipped by a window
 * rule). Relevance of a row on a side (before/after) is "no" when some
 * `eq`/`in` filter with declared values has a known value on that side
 * that is NULL or not among the values, or some `range` filter has a
 * known value on that side that is NULL or that parses under its
 * comparison type and lies outside its bounds; "maybe" otherwise (an
 * unparsable value leaves it maybe). For an update without key change, a
 * value known on one side is also known on the other when its column is
 * not among the changed columns. Per filter:
 *
 * | filter | a known value v makes the row irrelevant on its side when | why that is sound |
 * |--------|------------------------------------------------------------|-------------------|
 * | `eq`/`in` with values | v is NULL or not among the values | declared only for types whose equality is text equality; `NULL = x` is never true |
 * | `range` | v is NULL, or v parses under the comparison type and lies outside the bounds (an excluded bound is outside) | the comparison follows the type's btree order, the one the query's `<`, `<=`, `BETWEEN` use; a comparison with NULL is never true |
 * | `range`, v unparsable | never | the text is not of the declared type: nothing is known of the comparison |
 * | `opaque`, `eq`/`in` without values | never | |
 *
 * The window rules compare a row's sort-key values on a side with B's
 * first and last rows, lexicographically in the keys' order (their types,
 * directions and NULLS orders): "beyond" is strictly after the last row,
 * "in front" strictly before the first; a tie on every key is neither, and
 * so is a row whose deciding value is unknown or unparsable.
 *
 * Update without key change (the row keeps its identity):
 * | # | condition | verdict, reason | why a skip is sound |
 * |---|-----------|-----------------|---------------------|
 * | 9 | r ∈ R | refresh ROW_IN_RESULT | |
 * | 10 | r irrelevant before and after | (skip) VALUES_DISJOINT | a row that fails a filter on both sides never influences the result |
 * | 11 | changed columns unknown | refresh COLUMNS_UNKNOWN | |
 * | 12 | R known, no filter column changed, and no sort column changed or not windowed | (skip) ROWS_DISJOINT | r ∉ R keeps its relevance and position: still outside the window (without a window, r ∉ R means r is irrelevant) |
 * | 13 | R known, a filter column changed, r irrelevant after, and (irrelevant before or offset 0) | (skip) VALUES_DISJOINT | r cannot enter; it can only leave from after the window, which changes nothing |
 * | E2 | B says the window holds no row, r irrelevant after | (skip) WINDOW_EMPTY | r can only leave the rows in front of the window: it stays empty |
 * | W1 | B known; r irrelevant or beyond before; r irrelevant after, or beyond after and B full | (skip) BEYOND_WINDOW | the row was not in the window nor in front of it, and does not enter a full one: rows up to the last are unchanged (a row beyond a window that is not full was irrelevant) |
 * | W2 | B known, no filter column changed, r in front before and after | (skip) BEFORE_WINDOW | its relevance is unchanged and it stays in front: the count in front of the window and the window's rows are unchanged |
 * | 14 | a filter column changed | refresh FILTER_COLUMN_CHANGED | |
 * | 15 | a sort column changed and ordered | refresh SORT_COLUMN_CHANGED | |
 * | 16 | R unknown (read columns of a row that may be in the result changed) | refresh RESULT_UNKNOWN | |
 *
 * Insert, delete, and update with key change (each listed row is a delete
 * of its old version, unless it did not exist before, plus an insert of its
 * new version, unless it does not exist after):
 * | # | condition | verdict, reason | why a skip is sound |
 * |---|-----------|-----------------|---------------------|
 * | 17 | deleted r ∈ R | refresh ROW_IN_RESULT | |
 * | 18 | deleted r irrelevant before | (skip) VALUES_DISJOINT | it was not in the result nor before the window |
 * | 19 | deleted r, R known, r ∉ R, offset 0 | (skip) ROWS_DISJOINT | r was irrelevant or after the window; removing it moves nothing inside |
 * | E3 | deleted r, B says the window holds no row | (skip) WINDOW_EMPTY | as E1 |
 * | W3 | deleted r, B known, r beyond before | (skip) BEYOND_WINDOW | removing a row after the last one moves nothing up to it |
 * | 20 | deleted r otherwise | refresh DELETE_IN_WINDOW | |
 * | 21 | inserted r irrelevant after | (skip) VALUES_DISJOINT | it cannot enter the result nor shift the window |
 * | W4 | inserted r, B known and full, r beyond after | (skip) BEYOND_WINDOW | a row after the last one of a full window stays out of it |
 * | 22 | inserted r otherwise | refresh INSERT_MAY_ENTER | |
 *
 * pgw_decide() is pure and allocates nothing. Sources: docs/wire.md
 * ("Dependencies", "Write sets", "Verdicts");
 * PostgreSQL documentation, SELECT ("LIMIT Clause": without ORDER BY the
 * subset is unpredictable; "ORDER BY Clause": ASC, DESC, NULLS FIRST and
 * LAST, NULLS LAST the default for ASC, FIRST for DESC), "Comparison
 * Functions and Operators" (a comparison with NULL is never true), and
 * CREATE TRIGGER ("REFERENCING", transition tables); window bounds follow
 * keyset pagination, which resumes a page from its last row's sort key; the idea of an equality index over subscriptions follows Electric
 * SQL's shape matching.
 *
 * Threading: no shared state; a pgw_deps or pgw_write may be read by many
 * threads once built; building is one thread at a time per object.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_INVAL_H
#define PGWITNESS_INVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgwitness/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Where a subscription lives and where a write happened: (project, tenant,
 * database). A small view of borrowed strings, valid for the call it is
 * passed to. Each member is a NUL-terminated UTF-8 string or NULL ("none":
 * e.g. a project-level, landlord scope has tenant NULL). NULL and "" are
 * different values. Two scopes are equal when all three members are equal.
 */
typedef struct pgw_scope {
    const char *project;  /**< project, or NULL */
    const char *tenant;   /**< tenant, or NULL for project-level scope */
    const char *database; /**< database name, or NULL */
} pgw_scope;

/**
 * A primary-key value in text form: one part per key column, in key order
 * (1 part for a single-column key, at most PGW_ROWID_MAX_PARTS). A view of
 * borrowed strings; each part is NUL-terminated UTF-8 (may be empty).
 */
typedef struct pgw_rowid {
    const char *const *parts; /**< n_parts key values as text */
    size_t n_parts;           /**< number of parts, 1..PGW_ROWID_MAX_PARTS */
} pgw_rowid;

/** Most key columns a row ID may have (PostgreSQL's INDEX_MAX_KEYS). */
#define PGW_ROWID_MAX_PARTS 32

/** The operation of a write set. */
typedef enum pgw_op {
    PGW_OP_INSERT = 1,   /**< rows inserted */
    PGW_OP_UPDATE = 2,   /**< rows updated */
    PGW_OP_DELETE = 3,   /**< rows deleted */
    PGW_OP_TRUNCATE = 4, /**< the table was truncated */
    PGW_OP_UNKNOWN = 5,  /**< an unknown write to the table (a malformed or
                              unknown-version notification) */
    PGW_OP_RESET = 6,    /**< no table: anything in the scope may have
                              changed (listener reconnect, unreadable
                              notification) */
    PGW_OP_DDL = 7       /**< the table's definition changed (ALTER TABLE
                              and the like): any row and column may differ;
                              no IDs, columns or values */
} pgw_op;

/** The kind of a declared filter. */
typedef enum pgw_filter_op {
    PGW_FILTER_EQ = 1,     /**< column = value (one value, or unknown) */
    PGW_FILTER_IN = 2,     /**< column IN (values...) (or unknown values) */
    PGW_FILTER_OPAQUE = 3, /**< any other predicate involving the column */
    PGW_FILTER_RANGE = 4   /**< column within bounds, compared under a
                                pgw_cmp_type (pgw_deps_add_range()) */
} pgw_filter_op;

/**
 * The comparison type of a range filter or a sort key: the order in which
 * values are compared, parsed from the text the write source carries
 * (docs/wire.md "Text forms": DateStyle ISO, TimeZone UTC). The order is
 * PostgreSQL's btree order for the type, the one `<`, `<=`, `BETWEEN` and
 * ORDER BY use. What each type accepts (any other text is *unparsable*: a
 * row whose value is unparsable is maybe relevant, never irrelevant; a
 * bound that is unparsable is refused):
 *
 *  - INT (int2, int4, int8): an optional sign and decimal digits within
 *    int64, white space around it allowed, leading zeros allowed.
 *  - NUMERIC: an exact decimal, `[+-]digits[.digits][e[+-]digits]`, or
 *    NaN, Infinity, -Infinity (any case), compared exactly: `1.50` = `1.5`
 *    = `15e-1`, `-0` = `0`; -Infinity < finite < Infinity < NaN, and NaN
 *    equals NaN ("Numeric Types", "Arbitrary Precision Numbers").
 *  - DATE: `YYYY-MM-DD` (4 to 7 year digits) with an optional ` BC`, or
 *    infinity, -infinity; proleptic Gregorian, the day must exist.
 *  - TIMESTAMP: a date, ` ` or `T`, `HH:MM:SS` with up to 6 fractional
 *    digits, an optional ` BC`; or ±infinity. No zone (PostgreSQL ignores
 *    one written on a timestamp, so it is unparsable here).
 *  - TIMESTAMPTZ: as TIMESTAMP with a UTC offset (`Z`, `+HH`, `+HH:MM`,
 *    `+HH:MM:SS`, `+HHMM`, up to 15 hours), compared as the instant:
 *    `2024-01-01 00:00:00+05:30` = `2023-12-31 18:30:00+00`. Without an
 *    offset it depends on the session's TimeZone: unparsable.
 *  - TEXT: any bytes, compared bytewise (memcmp, a prefix first): the C
 *    collation's order ("Collation Support"), code point order for UTF-8.
 *    Declare text ranges only for comparisons under COLLATE "C" (or a
 *    column whose collation is "C" or "POSIX"); other collations are
 *    `opaque`.
 *
 * Values are stable. Sources: PostgreSQL documentation, "Numeric Types"
 * (8.1), "Date/Time Types" (8.5), "Collation Support" (24.2).
 */
typedef enum pgw_cmp_type {
    PGW_CMP_INT = 1,         /**< int2, int4, int8 */
    PGW_CMP_NUMERIC = 2,     /**< numeric, as exact decimals */
    PGW_CMP_DATE = 3,        /**< date */
    PGW_CMP_TIMESTAMP = 4,   /**< timestamp without time zone */
    PGW_CMP_TIMESTAMPTZ = 5, /**< timestamp with time zone, as the instant */
    PGW_CMP_TEXT = 6         /**< text, varchar under the C collation (not char(n),
                                  whose comparison ignores trailing spaces) */
} pgw_cmp_type;

/** Whether a bound of a range filter is there, and whether it is included. */
typedef enum pgw_bound_kind {
    PGW_BOUND_NONE = 0,      /**< no bound on that side */
    PGW_BOUND_INCLUSIVE = 1, /**< `>=` (lower) or `<=` (upper) */
    PGW_BOUND_EXCLUSIVE = 2  /**< `>` (lower) or `<` (upper) */
} pgw_bound_kind;

/** One bound of a range filter: a borrowed view, valid for the call. */
typedef struct pgw_bound {
    pgw_bound_kind kind; /**< PGW_BOUND_NONE: `value` is ignored */
    const char *value;   /**< the bound as text, parsable under the filter's
                              comparison type (NUL-terminated UTF-8) */
} pgw_bound;

/** Which version of a row a value belongs to. */
typedef enum pgw_side {
    PGW_SIDE_OLD = 0, /**< before the statement */
    PGW_SIDE_NEW = 1  /**< after the statement */
} pgw_side;

/**
 * Why a verdict was reached. Values are stable; new reasons may be added.
 * Each reason implies its verdict (pgw_reason_refreshes()).
 */
typedef enum pgw_reason {
    PGW_REASON_SCOPE_DISJOINT = 0,        /**< skip: another scope */
    PGW_REASON_TABLE_NOT_READ = 1,        /**< skip: the table is not read */
    PGW_REASON_COLUMNS_DISJOINT = 2,      /**< skip: only unread columns changed */
    PGW_REASON_ROWS_DISJOINT = 3,         /**< skip: changed rows outside the result, membership fixed */
    PGW_REASON_VALUES_DISJOINT = 4,       /**< skip: known values keep rows out of the result */
    PGW_REASON_SCOPE_RESET = 5,           /**< refresh: the whole scope was reset */
    PGW_REASON_UNDECLARED = 6,            /**< refresh: no declared dependencies */
    PGW_REASON_TRUNCATE = 7,              /**< refresh: the table was truncated */
    PGW_REASON_WRITE_UNKNOWN = 8,         /**< refresh: the write could not be described */
    PGW_REASON_IDS_UNKNOWN = 9,           /**< refresh: changed rows unknown or truncated */
    PGW_REASON_COLUMNS_UNKNOWN = 10,      /**< refresh: changed columns unknown or truncated */
    PGW_REASON_ROW_IN_RESULT = 11,        /**< refresh: a changed row is in the result */
    PGW_REASON_RESULT_UNKNOWN = 12,       /**< refresh: read columns changed, result rows unknown */
    PGW_REASON_FILTER_COLUMN_CHANGED = 13,/**< refresh: a row may enter or leave */
    PGW_REASON_SORT_COLUMN_CHANGED = 14,  /**< refresh: a row may move */
    PGW_REASON_INSERT_MAY_ENTER = 15,     /**< refresh: an inserted row may enter */
    PGW_REASON_DELETE_IN_WINDOW = 16,     /**< refresh: a deleted row may be in or before the window */
    PGW_REASON_DDL = 17,  /**< refresh: the table's definition changed (DDL) */
    PGW_REASON_CLOCK = 18, /**< refresh: the query reads the clock and its interval passed */
    PGW_REASON_BEYOND_WINDOW = 19, /**< skip: changed rows lie strictly beyond the last
                                        row of a full window (window bounds) */
    PGW_REASON_BEFORE_WINDOW = 20, /**< skip: updated rows stay strictly before the first
                                        row of the window (window bounds) */
    PGW_REASON_WINDOW_EMPTY = 21   /**< skip: the window holds no row and the write cannot
                                        add one (window bounds) */
} pgw_reason;

/** Number of reason codes defined by this release (one past the largest). */
#define PGW_REASON_COUNT 22

/** A decision: refresh or skip, and why. */
typedef struct pgw_verdict {
    bool refresh;      /**< true: rerun the subscription; false: skip it */
    pgw_reason reason; /**< the rule that decided (see the rule table) */
} pgw_verdict;

/**
 * The upper-case name of a reason, as used in the JSON verdict
 * ("FILTER_COLUMN_CHANGED").
 *
 * @param reason  a pgw_reason.
 * @return a static string; "UNKNOWN_REASON" for values outside the enum.
 */
PGW_API const char *pgw_reason_name(pgw_reason reason);

/**
 * Looks a reason up by its name (exact, case-sensitive).
 *
 * @param out   receives the reason (untouched on failure).
 * @param name  a NUL-terminated name such as "ROWS_DISJOINT".
 * @return PGW_OK; PGW_EINVAL when out or name is NULL; PGW_ENOTFOUND when
 *         no reason has that name.
 */
PGW_API int pgw_reason_from_name(pgw_reason *out, const char *name);

/**
 * Whether a reason implies a refresh (true) or a skip (false).
 *
 * @param reason  a pgw_reason; values outside the enum give true.
 */
PGW_API bool pgw_reason_refreshes(pgw_reason reason);

/**
 * The lower-case name of an operation ("insert", "update", "delete",
 * "truncate", "unknown", "reset", "ddl"), as in the JSON forms.
 *
 * @param op  a pgw_op.
 * @return a static string; "invalid" for values outside the enum.
 */
PGW_API const char *pgw_op_name(pgw_op op);

/**
 * The lower-case name of a comparison type ("int", "numeric", "date",
 * "timestamp", "timestamptz", "text"), as in the JSON forms.
 *
 * @param type  a pgw_cmp_type.
 * @return a static string; "invalid" for values outside the enum.
 */
PGW_API const char *pgw_cmp_type_name(pgw_cmp_type type);

/**
 * Looks a comparison type up by its name (exact, case-sensitive).
 *
 * @param out   receives the type (untouched on failure).
 * @param name  a NUL-terminated name such as "timestamptz".
 * @return PGW_OK; PGW_EINVAL when out or name is NULL; PGW_ENOTFOUND when
 *         no type has that name.
 */
PGW_API int pgw_cmp_type_from_name(pgw_cmp_type *out, const char *name);

/* ------------------------------------------------------------------ */
/* dependencies                                                         */

/** The declared dependencies of one subscription (opaque). */
typedef struct pgw_deps pgw_deps;

/**
 * Creates a declaration with no table yet — undeclared, i.e. the
 * compatibility fallback, until pgw_deps_add_table() is called.
 *
 * @param out    receives the new object; caller frees with pgw_deps_free().
 * @param scope  the subscription's scope (strings copied).
 * @param query  the host's key for the query (e.g. "tasks.list"), non-NULL
 *               UTF-8, copied. Identical subscriptions share a runner in a
 *               pgw_index when scope, query and declaration are equal.
 * @param err    optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when out, scope or query is NULL or a string
 *         is not valid UTF-8; PGW_ENOMEM.
 */
PGW_API int pgw_deps_new(pgw_deps **out, const pgw_scope *scope, const char *query,
                         pgw_error *err);

/**
 * Releases a declaration.
 *
 * @param deps  the object, or NULL (ignored).
 */
PGW_API void pgw_deps_free(pgw_deps *deps);

/**
 * Declares that the subscription reads a table. The new entry reads every
 * column (until pgw_deps_set_columns()), has no filter, no sort and no
 * window.
 *
 * @param out     receives the entry's index (0 for the first table, whose
 *                rows result IDs name); may be NULL.
 * @param deps    the declaration.
 * @param schema  schema name, non-empty UTF-8 (copied), as in the catalog.
 * @param table   table name, non-empty UTF-8 (copied), as in the catalog.
 * @param err     optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when an argument is NULL, empty or not UTF-8;
 *         PGW_EEXISTS when the table is already declared (declare a
 *         self-join once, with the union of its columns and only filters
 *         every alias satisfies); PGW_ELIMIT beyond 65535 tables; PGW_ENOMEM.
 */
PGW_API int pgw_deps_add_table(size_t *out, pgw_deps *deps, const char *schema,
                               const char *table, pgw_error *err);

/**
 * Sets the columns the subscription reads from a declared table.
 *
 * @param deps       the declaration.
 * @param table      an entry index from pgw_deps_add_table().
 * @param columns    n_columns distinct non-empty UTF-8 names (copied), or
 *                   NULL for "every column".
 * @param n_columns  number of names (0 with a non-NULL pointer: the query
 *                   reads no column of the table, e.g. count(*); any array
 *                   will do, as `static const char *const none[1];` then
 *                   `(deps, table, none, 0, err)`).
 * @param err        optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a bad index, a NULL/empty/non-UTF-8 name or
 *         a duplicate; PGW_ELIMIT beyond 65535 names; PGW_ENOMEM. The
 *         previous list is kept on failure.
 */
PGW_API int pgw_deps_set_columns(pgw_deps *deps, size_t table, const char *const *columns,
                                 size_t n_columns, pgw_error *err);

/**
 * Adds a filter (one conjunct of the WHERE clause) on a declared table.
 *
 * @param deps      the declaration.
 * @param table     an entry index.
 * @param column    the column, non-empty UTF-8 (copied).
 * @param op        PGW_FILTER_EQ, PGW_FILTER_IN or PGW_FILTER_OPAQUE (a
 *                  range is added with pgw_deps_add_range()).
 * @param values    for EQ (exactly 1) and IN (1 or more): the values as
 *                  text in the column's canonical output form (copied;
 *                  none may be NULL — SQL `=` never matches NULL; declare
 *                  `IS NULL` as opaque); NULL with n_values 0 when the
 *                  values are not known (then the filter only names its
 *                  column). Must be NULL for OPAQUE.
 * @param n_values  number of values.
 * @param err       optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a bad index, op, column, value or count;
 *         PGW_ELIMIT beyond 65535 filters; PGW_ENOMEM.
 */
PGW_API int pgw_deps_add_filter(pgw_deps *deps, size_t table, const char *column,
                                pgw_filter_op op, const char *const *values, size_t n_values,
                                pgw_error *err);

/**
 * Adds a range filter (one conjunct of the WHERE clause: `column > a`,
 * `column <= b`, `column BETWEEN a AND b`, or two comparisons of one
 * column AND-ed) on a declared table. A row whose value of the column is
 * known on a side is irrelevant on that side when the value is SQL NULL (a
 * comparison with NULL is never true) or when it parses under `type` and
 * lies outside the bounds; an unparsable value leaves the row maybe
 * relevant (pgw_cmp_type). Declare a range only when the query compares
 * under the type's order: an integer column compared with integers, a
 * numeric column with numerics, a date or timestamp column with values of
 * its own type, and text only under the C collation; anything else
 * (casts, floating point, other collations, mixed types such as a date
 * compared with a timestamp) is `opaque`.
 *
 * @param deps    the declaration.
 * @param table   an entry index.
 * @param column  the column, non-empty UTF-8 (copied).
 * @param type    its comparison type.
 * @param lower   the lower bound, or NULL for none (as kind
 *                PGW_BOUND_NONE); its value is copied.
 * @param upper   the upper bound, or NULL for none; copied.
 *                A range whose lower bound lies above its upper bound
 *                admits no row, and is allowed.
 * @param err     optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a bad index, column or type, a bound kind
 *         outside pgw_bound_kind, a present bound whose value is NULL, not
 *         UTF-8 or unparsable under type (the message names the bound and
 *         the type), or no bound at all (declare such a predicate opaque);
 *         PGW_ELIMIT beyond 65535 filters; PGW_ENOMEM.
 */
PGW_API int pgw_deps_add_range(pgw_deps *deps, size_t table, const char *column,
                               pgw_cmp_type type, const pgw_bound *lower,
                               const pgw_bound *upper, pgw_error *err);

/**
 * Sets the sort columns of a declared table (ORDER BY columns of that
 * table, in order; the primary key is implied last).
 *
 * @param deps       the declaration.
 * @param table      an entry index.
 * @param columns    n_columns distinct non-empty UTF-8 names (copied); NULL
 *                   with 0 for none.
 * @param n_columns  number of names.
 * @param err        optional detail on failure.
 * @return as pgw_deps_set_columns().
 */
PGW_API int pgw_deps_set_order_by(pgw_deps *deps, size_t table, const char *const *columns,
                                  size_t n_columns, pgw_error *err);

/**
 * One sort key of a declared table: an ORDER BY column, its comparison
 * type, its direction and where its NULLs sort. A borrowed view, valid
 * for the call.
 */
typedef struct pgw_sort_key {
    const char *column;  /**< the column, non-empty UTF-8 */
    pgw_cmp_type type;   /**< its comparison type (pgw_cmp_type: the query
                              sorts under that type's order), or 0 when it
                              is none of them: the key is then not compared,
                              and window bounds cannot be declared */
    bool descending;     /**< DESC (false: ASC) */
    bool nulls_first;    /**< NULLS FIRST (false: NULLS LAST). PostgreSQL's
                              default is NULLS LAST for ASC and NULLS FIRST
                              for DESC: state the query's order */
} pgw_sort_key;

/**
 * Sets the sort keys of a declared table: its ORDER BY columns in order,
 * each with its comparison type, direction and NULLS order (the primary
 * key is implied last, ascending). pgw_deps_set_order_by() is this with
 * every key of type 0, ASC, NULLS LAST. The rules of today's table read
 * only the names; window bounds (pgw_deps_set_window_bounds()) compare
 * rows by the types and orders (PostgreSQL documentation, SELECT, "ORDER
 * BY Clause"; "Indexes and ORDER BY"). Clears the declaration's window
 * bounds when table is 0.
 *
 * @param deps    the declaration.
 * @param table   an entry index.
 * @param keys    n_keys keys with distinct non-empty UTF-8 columns (copied);
 *                NULL with 0 for none.
 * @param n_keys  number of keys.
 * @param err     optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a bad index, a NULL/empty/non-UTF-8 or
 *         duplicate column, or a type that is neither 0 nor a
 *         pgw_cmp_type; PGW_ELIMIT beyond 65535 keys; PGW_ENOMEM. The
 *         previous keys are kept on failure.
 */
PGW_API int pgw_deps_set_sort_keys(pgw_deps *deps, size_t table, const pgw_sort_key *keys,
                                   size_t n_keys, pgw_error *err);

/**
 * Sets the window (LIMIT/OFFSET) of a declared table. Clears the
 * declaration's window bounds when table is 0.
 *
 * @param deps    the declaration.
 * @param table   an entry index.
 * @param limit   rows, >= 0; -1 for no limit.
 * @param offset  rows skipped, >= 0 (0 = none).
 * @param err     optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a bad index or a value out of range.
 */
PGW_API int pgw_deps_set_window(pgw_deps *deps, size_t table, int64_t limit, int64_t offset,
                                pgw_error *err);

/**
 * Sets the result IDs: the primary keys of the first table's rows in the
 * current result. Replaces any previous list; n_ids 0 declares an empty
 * result (known). Needs a declared table.
 *
 * @param deps   the declaration.
 * @param ids    n_ids row IDs (copied); may be NULL when n_ids is 0.
 * @param n_ids  number of IDs; duplicates are allowed.
 * @param err    optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when deps is NULL, no table is declared, or an
 *         ID has 0 or more than PGW_ROWID_MAX_PARTS parts or a NULL/non-UTF-8
 *         part; PGW_ENOMEM (the previous IDs are kept).
 */
PGW_API int pgw_deps_set_result_ids(pgw_deps *deps, const pgw_rowid *ids, size_t n_ids,
                                    pgw_error *err);

/**
 * Forgets the result IDs: the result is unknown (the default).
 *
 * @param deps  the declaration; NULL is ignored.
 */
PGW_API void pgw_deps_clear_result_ids(pgw_deps *deps);

/**
 * The bounds of the first table's current window: the sort-key values of
 * its first and its last row, and whether it is full. A borrowed view,
 * valid for the call.
 */
typedef struct pgw_window_bounds {
    const char *const *first; /**< n values, one per sort key of the first
                                   table, in order: the window's first row's,
                                   as text in the form a write source sends
                                   (docs/wire.md "Text forms"); NULL entries
                                   are SQL NULL. NULL with `last` NULL: the
                                   window holds no row */
    const char *const *last;  /**< n values: the window's last row's */
    size_t n;                 /**< number of sort keys */
    bool full;                /**< the window holds `limit` rows (always false
                                   without a limit; must be false for a window
                                   with no row) */
} pgw_window_bounds;

/**
 * Declares the bounds of the first table's window after a rerun, so that
 * writes to rows outside it skip (the window rules of the rule table):
 * a row strictly beyond the last row, on each side it exists and is
 * relevant, changes nothing of a full window (a deleted one nothing of any
 * window), and an updated row that stays strictly before the first row, of
 * an update that changes no filter column, leaves the count in front of
 * the window unchanged. "Strictly" is in the order of the sort keys alone:
 * a row that ties the boundary row on every key is not beyond it, as the
 * key breaking the tie is not compared. A window that holds no row
 * (first and last NULL: the query returned nothing, or nothing after its
 * offset) needs neither a window clause nor sort keys: a delete, and an
 * update that changes no filter column or leaves its rows irrelevant,
 * cannot add a row to it (WINDOW_EMPTY). For a query over several tables
 * the bounds are the first table's, and its sort keys must lead the
 * query's ORDER BY (ORDER BY t1.a, t1.id, t2.b: declare a, id on t1).
 *
 * Bounds are used only for a list result (pgw_deps_set_result_kind(); as
 * result IDs are): an aggregate's window counts groups, so one row can add
 * a group in front of it or to an empty one, and its bounds are ignored.
 * Like result IDs, bounds describe one result: set them from the rerun
 * they came from, and clear them when the result may have changed (a
 * pgw_index keeps them per runner: pgw_index_ack_window()). Replaced by
 * each call; cleared by pgw_deps_clear_window_bounds() and by changing
 * the first table's sort keys or window.
 *
 * @param deps    the declaration.
 * @param bounds  the bounds (values copied); bounds->n must equal the
 *                first table's number of sort keys.
 * @param err     optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when deps or bounds is NULL, no table is
 *         declared, or, for a window with rows, the first table has no
 *         window (no limit and offset 0) or no sort keys, a sort key has no
 *         comparison type, n differs from the number of sort keys, one of
 *         first and last is NULL, the limit is 0, full is set without a
 *         limit, the first row sorts after the last, or a value
 *         is not UTF-8 or does not parse under its key's type (the message
 *         names it); PGW_ENOMEM (the previous bounds are kept).
 */
PGW_API int pgw_deps_set_window_bounds(pgw_deps *deps, const pgw_window_bounds *bounds,
                                       pgw_error *err);

/**
 * Forgets the window bounds (the default: none).
 *
 * @param deps  the declaration; NULL is ignored.
 */
PGW_API void pgw_deps_clear_window_bounds(pgw_deps *deps);

/**
 * The query key of a declaration.
 * @param deps  the declaration.
 * @return a borrowed string valid while deps lives; NULL when deps is NULL.
 */
PGW_API const char *pgw_deps_query(const pgw_deps *deps);

/**
 * The scope of a declaration.
 * @param out   receives borrowed strings valid while deps lives.
 * @param deps  the declaration.
 * @return PGW_OK; PGW_EINVAL when an argument is NULL.
 */
PGW_API int pgw_deps_scope(pgw_scope *out, const pgw_deps *deps);

/**
 * Number of declared tables (0: undeclared).
 * @param deps  the declaration; NULL gives 0.
 */
PGW_API size_t pgw_deps_n_tables(const pgw_deps *deps);

/** What the result of a declaration is, for its result IDs. */
typedef enum pgw_result_kind {
    PGW_RESULT_UNSPECIFIED = 0, /**< the default, as before result kinds: a list when
                                     the first table reads a column, an aggregate
                                     when it reads none (count(*), EXISTS) */
    PGW_RESULT_LIST = 1,        /**< a list of the first table's rows, one result row
                                     per row (its primary key identifies it) */
    PGW_RESULT_AGGREGATE = 2    /**< anything else: an aggregate (count(x), sum(x),
                                     GROUP BY), DISTINCT, rows of another table */
} pgw_result_kind;

/**
 * Declares what the result is. Result IDs (pgw_deps_set_result_ids()) are
 * used only for a list: an aggregate's are ignored by pgw_decide() and by
 * a pgw_index, at registration and at acknowledgement (pgw_index_ack()),
 * so that sum(x) and count(x) are safe however their host acknowledges
 * them. PGW_RESULT_UNSPECIFIED keeps the rule that came before: a first
 * table with an empty column list is an aggregate. The kind takes part in
 * a runner's identity and in the JSON form (`"result": "list"` or
 * `"aggregate"`, docs/wire.md).
 *
 * @param deps  the declaration.
 * @param kind  a pgw_result_kind.
 * @param err   optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when deps is NULL or kind is outside the enum.
 */
PGW_API int pgw_deps_set_result_kind(pgw_deps *deps, pgw_result_kind kind, pgw_error *err);

/**
 * The declared result kind (pgw_deps_set_result_kind()).
 * @param deps  the declaration; NULL gives PGW_RESULT_UNSPECIFIED.
 */
PGW_API pgw_result_kind pgw_deps_result_kind(const pgw_deps *deps);

/**
 * Declares whether the query reads the clock: `now()`,
 * `current_timestamp`, `current_date`, `current_time`, `localtimestamp`,
 * `localtime`, `transaction_timestamp()`, `statement_timestamp()`,
 * `clock_timestamp()`, `timeofday()`, or the input strings 'now', 'today',
 * 'tomorrow', 'yesterday' (PostgreSQL documentation, "Date/Time Functions
 * and Operators", "Current Date/Time"; "Date/Time Types", "Special
 * Values"). Such a result changes with no write, so no write set can tell
 * when: a pgw_index (index.h) marks a time-dependent runner dirty, with
 * reason CLOCK, once its result is older than the index's clock interval
 * (pgw_index_clock()). The flag takes part in a runner's identity (two
 * declarations that differ only in it never share a runner) and in the
 * JSON form (`"time_dependent": true`, docs/wire.md); pgw_decide() ignores
 * it: a write is decided as without it. Default false. A query that reads
 * time only from its parameters (`created_at > $1`, with the host passing
 * the time) is not time-dependent.
 *
 * @param deps  the declaration.
 * @param on    whether the query reads the clock.
 * @param err   optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when deps is NULL.
 */
PGW_API int pgw_deps_set_time_dependent(pgw_deps *deps, bool on, pgw_error *err);

/**
 * Whether a declaration reads the clock (pgw_deps_set_time_dependent()).
 * @param deps  the declaration; NULL gives false.
 */
PGW_API bool pgw_deps_time_dependent(const pgw_deps *deps);

/* ------------------------------------------------------------------ */
/* write sets                                                           */

/** The write set of one statement (opaque). */
typedef struct pgw_write pgw_write;

/**
 * Creates a write set for one statement on one table. IDs and changed
 * columns start unknown (the conservative default); no old/new values;
 * pk_changed false.
 *
 * @param out     receives the new object; caller frees with pgw_write_free().
 * @param scope   where the write happened (strings copied).
 * @param schema  schema name, non-empty UTF-8 (copied).
 * @param table   table name, non-empty UTF-8 (copied).
 * @param op      PGW_OP_INSERT, UPDATE, DELETE, TRUNCATE, UNKNOWN or DDL
 *                (a truncate, an unknown write and a ddl have no IDs,
 *                columns, values or key change: their setters refuse them).
 * @param err     optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a NULL/empty/non-UTF-8 argument or an op
 *         outside that list (PGW_OP_RESET: use pgw_write_new_reset());
 *         PGW_ENOMEM.
 */
PGW_API int pgw_write_new(pgw_write **out, const pgw_scope *scope, const char *schema,
                          const char *table, pgw_op op, pgw_error *err);

/**
 * Creates a scope reset: "anything in this scope may have changed". Every
 * subscription of the scope refreshes (SCOPE_RESET).
 *
 * @param out    receives the new object; caller frees with pgw_write_free().
 * @param scope  the scope (strings copied).
 * @param err    optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a NULL argument or non-UTF-8 string;
 *         PGW_ENOMEM.
 */
PGW_API int pgw_write_new_reset(pgw_write **out, const pgw_scope *scope, pgw_error *err);

/**
 * Releases a write set.
 * @param write  the object, or NULL (ignored).
 */
PGW_API void pgw_write_free(pgw_write *write);

/**
 * Sets the changed row IDs (replacing any previous list and any old/new
 * values). With truncated true the list is a prefix of a longer one and the
 * decision treats the IDs as unknown.
 *
 * @param write      an insert, update or delete.
 * @param ids        n_ids row IDs (copied); may be NULL when n_ids is 0.
 * @param n_ids      number of IDs; 0 with truncated false: no row changed.
 * @param truncated  whether rows beyond the list changed too.
 * @param err        optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a NULL write, another op, or a malformed
 *         ID; PGW_ENOMEM (the write set is unchanged).
 */
PGW_API int pgw_write_set_ids(pgw_write *write, const pgw_rowid *ids, size_t n_ids,
                              bool truncated, pgw_error *err);

/**
 * Sets the changed columns (meaningful for updates; informational for
 * inserts and deletes). With truncated true the list is incomplete and the
 * decision treats the columns as unknown.
 *
 * @param write      an insert, update or delete.
 * @param columns    n_columns distinct non-empty UTF-8 names (copied);
 *                   may be NULL when n_columns is 0.
 * @param n_columns  number of names; 0 with truncated false: no column
 *                   value changed (e.g. UPDATE t SET x = x).
 * @param truncated  whether other columns changed too.
 * @param err        optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a NULL write, another op, or a bad or
 *         duplicate name; PGW_ENOMEM (the write set is unchanged).
 */
PGW_API int pgw_write_set_columns(pgw_write *write, const char *const *columns,
                                  size_t n_columns, bool truncated, pgw_error *err);

/**
 * Sets whether the statement changed the primary key of any row (then each
 * listed ID is treated as a deleted old version and an inserted new one).
 *
 * @param write       an update.
 * @param pk_changed  the flag.
 * @param err         optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a NULL write, another op, or clearing the
 *         flag while a row is marked absent.
 */
PGW_API int pgw_write_set_pk_changed(pgw_write *write, bool pk_changed, pgw_error *err);

/**
 * Records the value of one column of one listed row, before or after the
 * statement. Values of configured columns only; columns without a value
 * are unknown.
 *
 * @param write   the write set, after pgw_write_set_ids() (not truncated).
 * @param row     index into the ID list.
 * @param side    PGW_SIDE_OLD or PGW_SIDE_NEW (inserts have only NEW,
 *                deletes only OLD).
 * @param column  non-empty UTF-8 name (copied).
 * @param value   the value as text (the column's output text, copied; see
 *                docs/wire.md "Text forms"), or NULL for SQL NULL.
 * @param err     optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a write that is not an insert, update or
 *         delete, a bad row, side, name or value, or a row marked absent on
 *         that side; PGW_ENOMEM (the write set is unchanged).
 */
PGW_API int pgw_write_set_value(pgw_write *write, size_t row, pgw_side side,
                                const char *column, const char *value, pgw_error *err);

/**
 * Marks that a listed row did not exist before (side OLD: the new key of a
 * re-keyed row) or does not exist after (side NEW: the old key). Only for
 * updates with pk_changed set.
 *
 * @param write  the write set.
 * @param row    index into the ID list.
 * @param side   the side on which the row does not exist.
 * @param err    optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a write that is not an update with
 *         pk_changed, a bad row or side, a row with values on that side, or
 *         a row absent on both sides.
 */
PGW_API int pgw_write_set_row_absent(pgw_write *write, size_t row, pgw_side side,
                                     pgw_error *err);

/**
 * The operation of a write set (0 when write is NULL).
 * @param write  the write set.
 */
PGW_API pgw_op pgw_write_op(const pgw_write *write);

/**
 * The schema of the written table.
 * @param write  the write set.
 * @return a borrowed string valid while write lives; NULL for a scope
 *         reset or a NULL write.
 */
PGW_API const char *pgw_write_schema(const pgw_write *write);

/**
 * The name of the written table.
 * @param write  the write set.
 * @return a borrowed string valid while write lives; NULL for a scope
 *         reset or a NULL write.
 */
PGW_API const char *pgw_write_table(const pgw_write *write);

/**
 * The scope of a write set.
 * @param out    receives borrowed strings valid while write lives.
 * @param write  the write set.
 * @return PGW_OK; PGW_EINVAL when an argument is NULL.
 */
PGW_API int pgw_write_scope(pgw_scope *out, const pgw_write *write);

/**
 * Number of listed row IDs (0 when unknown).
 * @param write  the write set; NULL gives 0.
 */
PGW_API size_t pgw_write_n_ids(const pgw_write *write);

/**
 * Whether the row IDs are known and complete (not unknown, not truncated).
 * @param write  the write set; NULL gives false.
 */
PGW_API bool pgw_write_ids_known(const pgw_write *write);

/**
 * Whether the changed columns are known and complete.
 * @param write  the write set; NULL gives false.
 */
PGW_API bool pgw_write_columns_known(const pgw_write *write);

/**
 * Why a decoded notification became a fallback write set.
 *
 * pgw_payload_decode() never fails on a bad payload: it returns a table-level
 * unknown write or a scope reset. This tells the two cases apart.
 *
 * @param write  the write set; NULL gives PGW_OK.
 * @return PGW_OK for a faithful write set; PGW_EPARSE for a malformed
 *         payload; PGW_EVERSION for an unknown payload version.
 */
PGW_API int pgw_write_fallback_status(const pgw_write *write);

/**
 * The message describing why a notification became a fallback write set
 * (names the problem and the JSON path), for logs.
 *
 * @param write  the write set.
 * @return a borrowed string valid while write lives; "" for faithful write
 *         sets and for NULL.
 */
PGW_API const char *pgw_write_fallback_message(const pgw_write *write);

/**
 * Records the commit LSN of the transaction the write set belongs to: the
 * logical-replication decoder (pgoutput.h) sets it, so that a host can tell
 * how far its index has caught up with the server (compare it with
 * pg_current_wal_lsn() read after its own commit). Not part of the JSON
 * forms or the notification payload.
 *
 * @param write  the write set.
 * @param lsn    the position, in bytes of WAL; 0: unknown.
 * @param err    optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when write is NULL.
 */
PGW_API int pgw_write_set_lsn(pgw_write *write, uint64_t lsn, pgw_error *err);

/**
 * The commit LSN of the write set's transaction (pgw_write_set_lsn()).
 * @param write  the write set.
 * @return the position; 0 when unknown (write sets of the statement
 *         triggers, of the JSON forms, of hand-made ones) and for NULL.
 */
PGW_API uint64_t pgw_write_lsn(const pgw_write *write);

/* ------------------------------------------------------------------ */
/* the decision                                                         */

/**
 * Decides whether a write can affect a subscription (the rule table at the
 * top of this header).
 *
 * Pure: reads its arguments, allocates nothing, changes nothing; safe to
 * call from many threads on shared objects. Cost: linear in the rows and
 * columns of the write and the declaration of the written table, plus a
 * binary search in the result IDs per row.
 *
 * @param out    receives the verdict (untouched on failure).
 * @param deps   the subscription's declaration (borrowed).
 * @param write  the write set (borrowed).
 * @param err    optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when an argument is NULL.
 */
PGW_API int pgw_decide(pgw_verdict *out, const pgw_deps *deps, const pgw_write *write,
                       pgw_error *err);

#ifdef __cplusplus
}
#endif

#endif /* PGWITNESS_INVAL_H */
