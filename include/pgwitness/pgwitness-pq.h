/*
 * pgwitness/pgwitness-pq.h — libpgwitness-pq, the thin libpq adapter.
 *
 * The only pgwitness header that includes <libpq-fe.h>. The adapter borrows
 * the caller's PGconn: it never opens (except the listener's own LISTEN and
 * replication connections), closes or resets a connection it was given, and
 * leaves its session settings as it found them.
 *
 * Nothing in the adapter prints; every failure is a status code and a
 * pgw_error. Database errors are PGW_EPG with the server's SQLSTATE in
 * pgw_error.sqlstate and, in pgw_error.message, what the adapter was doing
 * and the server's message followed by its DETAIL and HINT when it sent
 * them, in one line (cut to fit, on a character boundary): "dropping the
 * table: cannot drop table t because other objects depend on it (DETAIL:
 * view v depends on table t) (HINT: Use DROP ... CASCADE to drop the
 * dependent objects too.)".
 *
 * Link with: cc $(pkg-config --cflags --libs pgwitness-pq libpq) — libpq is
 * named too because a program that includes this header calls libpq itself
 * (PQconnectdb, PQfinish); pgwitness-pq.pc lists it as Requires.private.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_PGWITNESS_PQ_H
#define PGWITNESS_PGWITNESS_PQ_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "pgwitness/pgwitness.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Oldest PostgreSQL server the adapter supports, as server_version_num:
 *  10.0, the first release with transition tables for statement triggers
 *  (PostgreSQL documentation, CREATE TRIGGER, "REFERENCING"). */
#define PGW_PQ_MIN_SERVER_VERSION 100000

/**
 * Checks that a connection can be used by the adapter.
 *
 * Reads only client-side state (no round trip): the connection status, the
 * transaction status, and the server version reported at connect time.
 *
 * @param out   receives the server version as server_version_num
 *              (e.g. 150004 for 15.4); may be NULL. Untouched on failure.
 * @param conn  a borrowed connection.
 * @param err   optional detail on failure.
 * @return PGW_OK;
 *         PGW_EINVAL when conn is NULL;
 *         PGW_ECONN when the connection is not CONNECTION_OK (the message
 *         carries libpq's PQerrorMessage);
 *         PGW_ESTATE when a command is in progress or the connection is in
 *         an aborted transaction (PQTRANS_ACTIVE, PQTRANS_INERROR);
 *         PGW_EVERSION when the server is older than
 *         PGW_PQ_MIN_SERVER_VERSION.
 */
PGW_API int pgw_pq_check(int *out, PGconn *conn, pgw_error *err);

/* ------------------------------------------------------------------ */
/* the library's schema                                                */

/** The schema pgwitness installs into when none is named. */
#define PGW_PQ_DEFAULT_SCHEMA "pgwitness"

/** The schema version this release installs (its newest migration). */
#define PGW_PQ_SCHEMA_VERSION 8

/**
 * Creates or upgrades the library's schema: the snapshots table, the drop
 * audit table and their indexes (migration 1), the statement trigger
 * function of query invalidation (migration 2), the stream's tables
 * (migration 3), the functions that give a watched table's partitions and
 * inheritance children their triggers (migration 4: watch_below(),
 * watch_descendant(); it applies migration 2's function again), the
 * announcement of definition changes and the DDL event triggers'
 * functions (migration 5: announce_ddl(), on_ddl_event(), watch_gaps()),
 * and what lets running streams follow a watched table's new name and
 * primary key (migration 6: it applies migrations 4 and 5 again, and
 * stream_tables keeps each table's key), and the event trigger's
 * announcements for a role without USAGE on the schema (migration 7: it
 * applies migrations 4 and 5 again), and what keeps a table published for
 * the stream from being left without a usable replica identity by a DDL
 * (migration 8: keep_replica_identity(); it applies migration 5 again),
 * through versioned migrations recorded in
 * `<schema>.schema_version` (lib/pq/sql/). Idempotent: running it again
 * does nothing; running it from two sessions at once is safe (the second
 * waits on a transaction-level advisory lock, then finds nothing to do).
 *
 * Runs in its own transaction, so the connection must not be inside one.
 *
 * @param out         receives the installed schema version after the call
 *                    (PGW_PQ_SCHEMA_VERSION); may be NULL.
 * @param conn        a borrowed connection, idle (not in a transaction).
 * @param pgw_schema  the library's schema name, or NULL for
 *                    PGW_PQ_DEFAULT_SCHEMA; any name (it is quoted).
 * @param err         optional detail on failure.
 * @return PGW_OK; PGW_EINVAL (NULL conn, empty schema name); PGW_ESTATE
 *         (the connection is in a transaction); PGW_EVERSION (the schema was
 *         installed by a newer pgwitness); PGW_EPG (e.g. no CREATE
 *         privilege: SQLSTATE 42501); PGW_ECONN; PGW_ENOMEM. On failure
 *         nothing is changed (the transaction is rolled back).
 */
PGW_API int pgw_pq_install(int *out, PGconn *conn, const char *pgw_schema, pgw_error *err);

/**
 * Reads the installed schema version.
 *
 * @param out         receives the version, or 0 when the schema is not
 *                    installed.
 * @param conn        a borrowed connection.
 * @param pgw_schema  the library's schema name, or NULL for the default.
 * @param err         optional detail on failure.
 * @return PGW_OK; PGW_EINVAL; PGW_EPG; PGW_ECONN; PGW_ENOMEM.
 */
PGW_API int pgw_pq_schema_version(int *out, PGconn *conn, const char *pgw_schema,
                                  pgw_error *err);

/* ------------------------------------------------------------------ */
/* capture                                                             */

/** Version of pgw_pq_capture_options understood by this release. */
#define PGW_PQ_CAPTURE_OPTIONS_VERSION 1

/** What a capture records besides the catalog. */
typedef struct pgw_pq_capture_options {
    /** Must be PGW_PQ_CAPTURE_OPTIONS_VERSION. */
    unsigned int version;
    /** Bounds and profile mode (borrowed); NULL for the defaults. */
    const pgw_snapshot_options *snapshot;
    /** The reason recorded; NULL for PGW_REASON_MANUAL. */
    const char *reason;
    /** The resource identity recorded; NULL for none. */
    const char *resource;
    /** The `extra` JSON object as text; NULL for {}. */
    const char *extra;
} pgw_pq_capture_options;

/** Initialiser for pgw_pq_capture_options: defaults everywhere. */
#define PGW_PQ_CAPTURE_OPTIONS_INIT { PGW_PQ_CAPTURE_OPTIONS_VERSION, NULL, NULL, NULL, NULL }

/**
 * Captures a table's snapshot from the catalog alone.
 *
 * One parameterised query over pg_class, pg_namespace, pg_attribute
 * (attnum > 0, not dropped), format_type() and pg_stats (anyarray read as
 * ::text::text[]); it never reads the table's data. Columns the role cannot
 * SELECT, and tables under active row-level security, come back without a
 * profile (pg_stats hides them); partitioned parents use the inherited
 * statistics. A table never analysed (reltuples -1) has a null row
 * estimate and stats_available false. The settings that change how values
 * print (DateStyle, IntervalStyle, extra_float_digits, bytea_output) are
 * set to fixed values for the capture when they differ, and restored.
 * captured_at is the server's clock_timestamp().
 * Sources: PostgreSQL documentation 53.11 pg_class, 53.7 pg_attribute,
 * 54.27 pg_stats, 9.26 System Information Functions (format_type).
 *
 * @param out     receives the snapshot (free with pgw_snapshot_free());
 *                untouched on failure.
 * @param conn    a borrowed connection (in a transaction or not; not in a
 *                failed one).
 * @param schema  the table's schema.
 * @param table   the table's name (exact, not quoted: "CamelCase" is the
 *                name CamelCase).
 * @param opts    what to record besides the catalog; NULL for defaults.
 * @param err     optional detail on failure.
 * @return PGW_OK; PGW_ENOTFOUND when there is no such table (tables,
 *         partitioned tables, materialized views and foreign tables
 *         count); PGW_EINVAL; PGW_ESTATE (failed transaction); PGW_EPG;
 *         PGW_ECONN; PGW_ENOMEM.
 */
PGW_API int pgw_pq_capture(pgw_snapshot **out, PGconn *conn, const char *schema,
                           const char *table, const pgw_pq_capture_options *opts,
                           pgw_error *err);

/* ------------------------------------------------------------------ */
/* store, load, prune                                                  */

/**
 * Stores a snapshot in `<pgw_schema>.snapshots` (one INSERT).
 *
 * @param out         receives the new row's id; may be NULL.
 * @param conn        a borrowed connection.
 * @param pgw_schema  the library's schema, or NULL for the default.
 * @param snap        the snapshot (borrowed).
 * @param err         optional detail on failure.
 * @return PGW_OK; PGW_EINVAL; PGW_ENOTFOUND when the schema is not
 *         installed (run pgw_pq_install); PGW_EPG; PGW_ECONN; PGW_ENOMEM.
 */
PGW_API int pgw_pq_store(int64_t *out, PGconn *conn, const char *pgw_schema,
                         const pgw_snapshot *snap, pgw_error *err);

/** Version of pgw_pq_filter understood by this release. Version 1 (no
 *  skip_undecodable) is still accepted. */
#define PGW_PQ_FILTER_VERSION 2

/** Which stored snapshots to load. Fields left at their initial value do
 *  not filter. */
typedef struct pgw_pq_filter {
    /** Must be PGW_PQ_FILTER_VERSION. */
    unsigned int version;
    /** One snapshot by id; 0 for any. */
    int64_t id;
    /** By table: schema and table name (both, or neither). */
    const char *schema;
    /** By table: the table name. */
    const char *table;
    /** By resource identity. */
    const char *resource;
    /** By table OID; 0 for any. */
    uint32_t table_oid;
    /** Captured at or after this time (usec since the epoch), when
     *  has_since. */
    bool has_since;
    int64_t since;
    /** Captured strictly before this time, when has_until. */
    bool has_until;
    int64_t until;
    /** At most this many snapshots; 0 for no limit. */
    size_t limit;
    /** Order newest first (default: oldest first). Ties break by id. */
    bool newest_first;
    /** (Version 2.) Leave out stored documents that do not decode - a
     *  format newer than this release, a row edited by hand - instead of
     *  failing the whole load; the set lists them with the reason
     *  (pgw_pq_snapshot_set_skipped()). A limit counts the rows read,
     *  see pgw_pq_load(). Default false. */
    bool skip_undecodable;
} pgw_pq_filter;

/** Initialiser for pgw_pq_filter: every stored snapshot, oldest first. */
#define PGW_PQ_FILTER_INIT \
    { PGW_PQ_FILTER_VERSION, 0, NULL, NULL, NULL, 0, false, 0, false, 0, 0, false, false }

/** Loaded snapshots with their ids (opaque). Free with
 *  pgw_pq_snapshot_set_free(). */
typedef struct pgw_pq_snapshot_set pgw_pq_snapshot_set;

/**
 * Loads stored snapshots as core objects.
 *
 * @param out         receives the set (free with pgw_pq_snapshot_set_free());
 *                    possibly empty.
 * @param conn        a borrowed connection.
 * @param pgw_schema  the library's schema, or NULL for the default.
 * @param filter      which snapshots; NULL for all.
 * @param err         optional detail on failure.
 * A stored document that does not decode fails the load (PGW_EPARSE or
 * PGW_EVERSION), unless filter->skip_undecodable: then it is left out and
 * listed by pgw_pq_snapshot_set_skipped(). The filter's limit applies to
 * the rows read, so a load with a limit may return fewer snapshots when
 * some were skipped.
 *
 * @return PGW_OK; PGW_EINVAL (bad filter: only one of schema/table, an
 *         unknown version); PGW_ENOTFOUND when the schema is not installed;
 *         PGW_EPARSE or PGW_EVERSION when a stored document does not decode
 *         (err->message names its id; not with skip_undecodable); PGW_EPG;
 *         PGW_ECONN; PGW_ENOMEM.
 */
PGW_API int pgw_pq_load(pgw_pq_snapshot_set **out, PGconn *conn, const char *pgw_schema,
                        const pgw_pq_filter *filter, pgw_error *err);

/** Number of snapshots in a set. */
PGW_API size_t pgw_pq_snapshot_set_count(const pgw_pq_snapshot_set *set);
/** The i-th snapshot (owned by the set), or NULL when out of range. */
PGW_API const pgw_snapshot *pgw_pq_snapshot_set_get(const pgw_pq_snapshot_set *set, size_t i);
/** The stored id of the i-th snapshot, or 0 when out of range. */
PGW_API int64_t pgw_pq_snapshot_set_id(const pgw_pq_snapshot_set *set, size_t i);
/** All snapshots as an array of count elements (owned by the set), for
 *  pgw_drift_report(); NULL when empty. */
PGW_API const pgw_snapshot *const *pgw_pq_snapshot_set_all(const pgw_pq_snapshot_set *set);
/** Number of stored documents left out because they did not decode (only
 *  with pgw_pq_filter.skip_undecodable; 0 otherwise, and for NULL). */
PGW_API size_t pgw_pq_snapshot_set_skipped_count(const pgw_pq_snapshot_set *set);
/**
 * The i-th document left out (in the load's order).
 * @param set     the set.
 * @param i       0-based, below pgw_pq_snapshot_set_skipped_count().
 * @param reason  receives why it did not decode: the error message of a
 *                strict load followed by its JSON path, e.g. "stored
 *                snapshot 7 does not decode: ... (at $.format)"; owned by
 *                the set; may be NULL; untouched when i is out of range.
 * @return its stored id, or 0 when i is out of range.
 */
PGW_API int64_t pgw_pq_snapshot_set_skipped(const pgw_pq_snapshot_set *set, size_t i,
                                            const char **reason);
/** Frees a set and its snapshots. NULL is ignored. */
PGW_API void pgw_pq_snapshot_set_free(pgw_pq_snapshot_set *set);

/** What pgw_pq_prune() removed. */
typedef struct pgw_pq_prune_result {
    size_t removed;   /**< snapshots deleted */
    size_t resources; /**< resources that lost at least one */
    size_t kept;      /**< snapshots left */
} pgw_pq_prune_result;

/**
 * Applies the retention policy: per resource (resource_identity, else
 * schema.table), keeps the newest `keep` snapshots and every snapshot on
 * either side of a schema change (so each change stays visible as a pair),
 * and deletes the rest, in one statement.
 *
 * @param out         receives what was removed; may be NULL.
 * @param conn        a borrowed connection.
 * @param pgw_schema  the library's schema, or NULL for the default.
 * @param keep        snapshots to keep per resource, at least 1.
 * @param err         optional detail on failure.
 * @return PGW_OK; PGW_EINVAL (keep 0); PGW_ENOTFOUND (not installed);
 *         PGW_EPG; PGW_ECONN; PGW_ENOMEM.
 */
PGW_API int pgw_pq_prune(pgw_pq_prune_result *out, PGconn *conn, const char *pgw_schema,
                         size_t keep, pgw_error *err);

/* ------------------------------------------------------------------ */
/* the drop funnel                                                     */

/** Version of pgw_pq_drop_options understood by this release. */
#define PGW_PQ_DROP_OPTIONS_VERSION 1

/** Snapshot switch values for pgw_pq_drop_options.snapshots. */
enum {
    /** Follow the environment: PGWITNESS_SNAPSHOTS=0, off or false
     *  (any case) disables snapshots; anything else, or unset, enables. */
    PGW_PQ_SNAPSHOTS_ENV = -1,
    /** Never snapshot (the drop and the audit row still happen). */
    PGW_PQ_SNAPSHOTS_OFF = 0,
    /** Always snapshot, whatever the environment says. */
    PGW_PQ_SNAPSHOTS_ON = 1
};

/** How the drop funnel runs. */
typedef struct pgw_pq_drop_options {
    /** Must be PGW_PQ_DROP_OPTIONS_VERSION. */
    unsigned int version;
    /** The library's schema; NULL for the default. */
    const char *pgw_schema;
    /** The resource identity recorded with the snapshot and audit row. */
    const char *resource;
    /** PGW_PQ_SNAPSHOTS_ENV (default), _OFF or _ON. */
    int snapshots;
    /** statement_timeout for the snapshot, in milliseconds (default 2000). */
    int statement_timeout_ms;
    /** lock_timeout for the snapshot, in milliseconds (default 1000). */
    int lock_timeout_ms;
    /** Bounds and profile mode; NULL for the defaults. */
    const pgw_snapshot_options *snapshot;
} pgw_pq_drop_options;

/** Initialiser for pgw_pq_drop_options. */
#define PGW_PQ_DROP_OPTIONS_INIT \
    { PGW_PQ_DROP_OPTIONS_VERSION, NULL, NULL, PGW_PQ_SNAPSHOTS_ENV, 2000, 1000, NULL }

/** What the drop funnel did. */
typedef struct pgw_pq_drop_result {
    /** True when a table was dropped (false: it was already gone). */
    bool dropped;
    /** True when the snapshot was captured and stored. */
    bool snapshot_taken;
    /** The stored snapshot's id when snapshot_taken, else 0. */
    int64_t snapshot_id;
    /** PGW_OK when snapshot_taken; otherwise why not: the capture or store
     *  status (PGW_ENOTFOUND, PGW_EPG, PGW_ENOMEM, ...), or PGW_ESTATE when
     *  snapshots are switched off. */
    int snapshot_status;
    /** The reason in words ("snapshot failed: ..."), empty when taken. */
    char snapshot_error[PGW_ERROR_MESSAGE_SIZE];
    /** The SQLSTATE of a database failure of the snapshot, else empty. */
    char snapshot_sqlstate[6];
    /** The audit row's id, or 0 when it could not be written (then
     *  audit_error says why; the drop still happened). */
    int64_t audit_id;
    /** Why the audit row could not be written, else empty. */
    char audit_error[PGW_ERROR_MESSAGE_SIZE];
} pgw_pq_drop_result;

/**
 * The audited drop funnel: the one way a host should drop a table.
 *
 * Order: the table's ACCESS EXCLUSIVE lock, the one DROP TABLE takes,
 * waited for under the session's own statement_timeout and lock_timeout as
 * DROP TABLE would wait (so a reader holding the table delays the drop
 * rather than costing its snapshot, and what is captured is what is
 * dropped); then the snapshot — inside a SAVEPOINT of the drop's
 * transaction, with its own short statement_timeout and lock_timeout
 * (restored afterwards) — then store it, then DROP TABLE IF EXISTS, then
 * the audit row (also under a savepoint). Any failure of the snapshot — the
 * table already gone, a permission error, a timeout, the snapshots table
 * missing or refusing the insert, allocation failure — rolls back to the
 * savepoint, and the drop still happens; the result says why there is no
 * snapshot and the audit row keeps the reason. Snapshot failure never
 * prevents the drop. When the lock cannot be had (the session's
 * lock_timeout, a cancel), nothing is dropped and the call fails as DROP
 * TABLE would have (PGW_EPG, e.g. SQLSTATE 55P03), with no audit row (it
 * would have been part of the failed transaction). With snapshots switched
 * off the lock is left to DROP TABLE.
 *
 * Transactions: when the connection is idle the funnel opens and commits
 * its own transaction. Inside the caller's transaction it uses that one:
 * if the caller later rolls back, the snapshot and the audit row roll back
 * with the drop (the table still exists) — there is never a snapshot of a
 * table that was not dropped.
 *
 * @param out     receives what happened (the drop, the snapshot, the audit
 *                row); may be NULL. Filled on PGW_OK only.
 * @param conn    a borrowed connection, idle or in a transaction.
 * @param schema  the table's schema.
 * @param table   the table's name (exact, not quoted).
 * @param reason  why it is dropped (PGW_REASON_* or a host's word).
 * @param opts    options; NULL for the defaults.
 * @param err     optional detail on failure.
 * @return PGW_OK when the DROP succeeded (or the table was already gone),
 *         whatever happened to the snapshot; PGW_EINVAL; PGW_ESTATE (a
 *         failed transaction); PGW_EPG when the DROP itself failed (e.g.
 *         other objects depend on the table: SQLSTATE 2BP01) or its lock
 *         could not be had (55P03 under the session's lock_timeout, 57014
 *         cancelled) — then an own transaction is rolled back and the
 *         caller's is left aborted; PGW_ECONN; PGW_ENOMEM before anything
 *         ran.
 */
PGW_API int pgw_pq_drop_table(pgw_pq_drop_result *out, PGconn *conn, const char *schema,
                              const char *table, const char *reason,
                              const pgw_pq_drop_options *opts, pgw_error *err);

/* ------------------------------------------------------------------ */
/* the baseline pass                                                   */

/** Version of pgw_pq_baseline_options understood by this release. */
#define PGW_PQ_BASELINE_OPTIONS_VERSION 1

/** Which tables the baseline pass covers and how. */
typedef struct pgw_pq_baseline_options {
    /** Must be PGW_PQ_BASELINE_OPTIONS_VERSION. */
    unsigned int version;
    /** The library's schema; NULL for the default. */
    const char *pgw_schema;
    /** SQL LIKE pattern for schema names; NULL for all but system schemas. */
    const char *schema_pattern;
    /** SQL LIKE pattern for table names; NULL for all. */
    const char *table_pattern;
    /** Tables captured per run at most (default 1000); the rest wait for
     *  the next run. */
    size_t limit;
    /** Tables read per catalog query and stored per INSERT (default 250). */
    size_t batch;
    /** Bounds and profile mode; NULL for the defaults. */
    const pgw_snapshot_options *snapshot;
    /** Called after each batch with tables done and total for this run;
     *  may be NULL. */
    void (*progress)(size_t done, size_t total, void *userdata);
    /** Passed to progress. */
    void *userdata;
} pgw_pq_baseline_options;

/** Initialiser for pgw_pq_baseline_options. */
#define PGW_PQ_BASELINE_OPTIONS_INIT \
    { PGW_PQ_BASELINE_OPTIONS_VERSION, NULL, NULL, NULL, 1000, 250, NULL, NULL, NULL }

/** What a baseline run did. */
typedef struct pgw_pq_baseline_result {
    size_t backlog;   /**< tables without a snapshot of their OID, before the run */
    size_t captured;  /**< snapshots taken and stored by this run */
    size_t vanished;  /**< candidates dropped while the run went on */
    size_t remaining; /**< backlog left for later runs */
} pgw_pq_baseline_result;

/**
 * The baseline pass: snapshots live tables (ordinary and partitioned, not
 * partitions) matching the patterns that have no snapshot of their current
 * OID yet, oldest OID first, up to the limit; reason PGW_REASON_BASELINE,
 * extra {"alive": true}. Reads the catalog in batches (many tables per
 * query) and stores each batch in one INSERT, each batch in its own
 * transaction; never reads the tables' data. Two runs walk forward through
 * the backlog; a run after all are captured does nothing.
 *
 * @param out   receives counts; may be NULL.
 * @param conn  a borrowed connection, idle (not in a transaction).
 * @param opts  options; NULL for the defaults.
 * @param err   optional detail on failure.
 * @return PGW_OK; PGW_EINVAL; PGW_ESTATE (in a transaction); PGW_ENOTFOUND
 *         (the schema is not installed); PGW_EPG; PGW_ECONN; PGW_ENOMEM.
 *         Batches stored before a failure stay stored.
 */
PGW_API int pgw_pq_baseline(pgw_pq_baseline_result *out, PGconn *conn,
                            const pgw_pq_baseline_options *opts, pgw_error *err);

/* ------------------------------------------------------------------ */
/* query invalidation: statement triggers                               */

/** The NOTIFY channel pgw_pq_watch_table() and the listener use when none
 *  is named. */
#define PGW_PQ_DEFAULT_CHANNEL "pgwitness"

/** Most columns whose old/new values a watched table's payloads carry. */
#define PGW_PQ_MAX_VALUE_COLUMNS 64

/** Version of pgw_pq_watch_options understood by this release: 2 added
 *  enable_always and result. pgw_pq_watch_table() accepts versions 1 and 2
 *  (version 1 reads only the members it had: enable_always false, no
 *  result). */
#define PGW_PQ_WATCH_OPTIONS_VERSION 2

/** Version of pgw_pq_watch_result understood by this release. */
#define PGW_PQ_WATCH_RESULT_VERSION 1

/** A warning of pgw_pq_watch_table() (bits of pgw_pq_watch_result.warnings). */
typedef enum pgw_pq_watch_warning {
    /** The server allows prepared transactions (max_prepared_transactions
     *  > 0), and writers of a watched table cannot use them: PREPARE
     *  TRANSACTION fails (SQLSTATE 0A000, "cannot PREPARE a transaction that
     *  has executed LISTEN, UNLISTEN, or NOTIFY") in every transaction that
     *  wrote to the table, and that transaction is rolled back. Watch the
     *  table with the stream instead (pgw_pq_stream_watch_table()), which
     *  decodes prepared transactions at their COMMIT PREPARED. */
    PGW_PQ_WATCH_WARN_PREPARED_TRANSACTIONS = 1
} pgw_pq_watch_warning;

/** What pgw_pq_watch_table() found besides success: warnings about the
 *  server that bear on the watched table's writers. Caller-owned: set
 *  `version` (PGW_PQ_WATCH_RESULT_INIT does) and point
 *  pgw_pq_watch_options.result at it; filled when the call returns PGW_OK,
 *  untouched otherwise. */
typedef struct pgw_pq_watch_result {
    /** Set by the caller: PGW_PQ_WATCH_RESULT_VERSION. */
    unsigned int version;
    /** PGW_PQ_WATCH_WARN_* bits; 0: nothing to warn about. */
    unsigned int warnings;
    /** The server's max_prepared_transactions (its setting when the call
     *  ran; 0: PREPARE TRANSACTION is refused anyway). */
    int max_prepared_transactions;
    /** One line of text per warning, separated by '\n', NUL-terminated
     *  ("" when warnings is 0), e.g. "max_prepared_transactions is 10:
     *  writers of watched tables cannot use PREPARE TRANSACTION (a NOTIFY
     *  cannot be prepared); watch them with the stream for two-phase
     *  commit". */
    char message[PGW_ERROR_MESSAGE_SIZE];
} pgw_pq_watch_result;

/** Initialiser for pgw_pq_watch_result. */
#define PGW_PQ_WATCH_RESULT_INIT { PGW_PQ_WATCH_RESULT_VERSION, 0, 0, "" }

/** How a table is watched. */
typedef struct pgw_pq_watch_options {
    /** Must be PGW_PQ_WATCH_OPTIONS_VERSION. */
    unsigned int version;
    /** The library's schema (where pgw_pq_install() put the trigger
     *  function); NULL for PGW_PQ_DEFAULT_SCHEMA. */
    const char *pgw_schema;
    /** The NOTIFY channel, 1..63 bytes of UTF-8 (a PostgreSQL identifier,
     *  used as is: case matters); NULL for PGW_PQ_DEFAULT_CHANNEL. */
    const char *channel;
    /** Columns whose old/new values each payload carries (docs/wire.md
     *  "old"/"new"), typically the columns subscriptions filter on with
     *  eq/in; borrowed for the call. Names that are not columns of the
     *  table, and columns of a type without a reliable text form (arrays,
     *  composites, json; see lib/pq/sql/migration_002.sql), are skipped
     *  when the trigger runs, which only makes decisions more conservative.
     *  NULL with 0 for none. */
    const char *const *value_columns;
    /** Number of value columns, 0..PGW_PQ_MAX_VALUE_COLUMNS. */
    size_t n_value_columns;
    /** (Version 2.) Install the triggers ENABLE ALWAYS (ALTER TABLE ...
     *  ENABLE ALWAYS TRIGGER), so that they fire also in sessions with
     *  session_replication_role = replica; false: plain ENABLE (they fire
     *  in the origin and local roles only). Part of the watch's
     *  configuration, like the channel: watching again without it returns
     *  ENABLE ALWAYS triggers to ENABLE. The triggers of the table's
     *  partitions and inheritance children take the same mode. Needs the
     *  table's owner (ALTER TABLE), where the triggers alone need the
     *  TRIGGER privilege. What it
     *  does not cover: see pgw_pq_watch_table(), "Silenced triggers". */
    bool enable_always;
    /** (Version 2.) Optional: receives the call's warnings (borrowed for
     *  the call; NULL for none). */
    pgw_pq_watch_result *result;
} pgw_pq_watch_options;

/** The table's watch lock: pgw_pq_watch_table() and
 *  pgw_pq_unwatch_table() take pg_advisory_xact_lock(PGW_PQ_WATCH_LOCK_BASE
 *  + the table's OID) before they read its triggers (0x7067770000000000:
 *  "pgw" in the high bytes; PostgreSQL documentation, "Advisory Locks"). */
#define PGW_PQ_WATCH_LOCK_BASE INT64_C(0x7067770000000000)

/** Initialiser for pgw_pq_watch_options: default schema and channel, no
 *  value columns, plain ENABLE, no result. */
#define PGW_PQ_WATCH_OPTIONS_INIT { PGW_PQ_WATCH_OPTIONS_VERSION, NULL, NULL, NULL, 0, false, NULL }

/**
 * Watches a table: installs (or replaces) its four statement triggers, so
 * that every INSERT, UPDATE, DELETE and TRUNCATE statement sends one
 * notification, the payload of docs/wire.md, on the channel.
 *
 * The triggers are AFTER ... FOR EACH STATEMENT: pgwitness_insert
 * (REFERENCING NEW TABLE), pgwitness_update (OLD TABLE and NEW TABLE),
 * pgwitness_delete (OLD TABLE) and pgwitness_truncate, all calling the one
 * installed function `<pgw_schema>.notify_statement()` with the channel,
 * the table's primary key as this call finds it, and the value columns as
 * trigger arguments (the configuration lives there: writers need no
 * privilege on the library schema). What the function sends — primary-key
 * IDs (at most 500), changed columns (at most 100), values, fewer than
 * 8000 bytes, degrading to the table-level form — and why it can never
 * make the writer's transaction fail are described in
 * lib/pq/sql/migration_002.sql — with one exception outside its reach: when
 * PostgreSQL's notification queue is full (a session that executed LISTEN
 * has stayed in one transaction for a long time) transactions that sent a
 * notification fail at commit (docs/wire.md; PostgreSQL documentation,
 * NOTIFY, "Notes"). NOTIFY is delivered at commit and never after a
 * rollback (PostgreSQL documentation, NOTIFY). The key in the
 * arguments only spares a catalog query: each statement checks it against
 * PostgreSQL's caches and reads the catalog when it no longer holds, so key
 * and column changes after this call are followed (watching again after a
 * key change or a REINDEX CONCURRENTLY brings back the cheaper path); a
 * table without a primary key sends unknown IDs.
 *
 * Idempotent: watching a watched table replaces its triggers when they
 * differ from what this call would create (a new channel or value columns
 * take effect, a changed primary key is described anew, a disabled trigger
 * is enabled), and leaves them untouched when they are the same — then it
 * takes no lock on the table (DROP and CREATE TRIGGER would take SHARE ROW
 * EXCLUSIVE and wait behind its open transactions). A trigger of one of the four names that
 * calls another function is the table owner's: the call then refuses
 * (PGW_EEXISTS) rather than replace it. Concurrent watch and unwatch calls
 * on one table run one after the other: each takes the table's watch lock
 * (a transaction-level advisory lock, key PGW_PQ_WATCH_LOCK_BASE + the
 * table's OID, held to the end of the transaction) before it reads the
 * triggers; a host that reads what is installed before deciding to watch
 * can take the same lock first (pg_advisory_xact_lock). The watch is
 * remembered in `<pgw_schema>.trigger_watches` (`sync_watch()`, schema
 * version 5 and later; a row per table: name, channel, value columns,
 * firing mode), so that the table dropped and made again without its
 * triggers is listed by pgw_pq_watch_gaps() and reported as a GAP at a
 * listener's connect, with or without the event triggers.
 *
 * Partitions and inheritance children. Statement triggers fire for the
 * table a statement names: a statement that names the watched table
 * reports the rows of its partitions and children too (its transition
 * tables hold them), but one that names a partition or a child fires only
 * that relation's triggers (PostgreSQL documentation, CREATE TRIGGER,
 * "Notes"). So the call also gives every descendant of the table, at every
 * level (partitions, sub-partitions, inheritance children, a child of
 * several parents), four triggers of its own, pgwitness_insert_<oid> ...
 * pgwitness_truncate_<oid> (<oid>: the watched table's), which send the
 * payload of a write to the watched table: its schema and name, its
 * primary key, its value columns (a foreign-table partition, which
 * PostgreSQL gives no transition tables, sends the table-level form). A
 * row moving across partitions is a key change when the partition key is
 * in the key. A descendant may be watched itself: it then has both sets.
 * A descendant detached or removed from the inheritance sends nothing for
 * the watched table (checked at each statement; its writer never fails),
 * and watching the table again drops its stale triggers. Partitions
 * attached or created and children made after this call have no triggers
 * until the table is watched again, or `<pgw_schema>.watch_descendant(rel)`
 * runs (e.g. from a ddl_command_end event trigger): pgw_pq_watch_gaps()
 * lists them, and a listener's tenant on the table's channel reports each
 * as a GAP event at every connect (PGW_PQ_LISTENER_GAP). A partition
 * cannot be watched by itself: watch its root.
 * This needs the library schema at version 4 (PGW_PQ_SCHEMA_VERSION).
 *
 * What it costs: each statement runs the trigger function in the writer's
 * transaction; under pgbench's TPC-B-like load writers keep about 0.43 of
 * their throughput (tests/bench/bench-triggers). The stream
 * (pgw_pq_stream_watch_table) has none of these costs and neither of the
 * two limits below (docs/stream.md, "Choosing a source").
 *
 * Two-phase commit. Writers of a watched table cannot use it: a NOTIFY
 * cannot be prepared, so PREPARE TRANSACTION fails with SQLSTATE 0A000
 * ("cannot PREPARE a transaction that has executed LISTEN, UNLISTEN, or
 * NOTIFY") in every transaction that wrote to the table, and that
 * transaction is rolled back whole (PostgreSQL documentation, PREPARE
 * TRANSACTION, "Notes"). The call warns when the server allows prepared
 * transactions (max_prepared_transactions > 0: PGW_PQ_WATCH_WARN_PREPARED_
 * TRANSACTIONS in opts->result); with it at 0 PREPARE TRANSACTION is
 * refused anyway. Hosts whose writers use two-phase commit watch with the
 * stream, which decodes a prepared transaction at its COMMIT PREPARED.
 *
 * Silenced triggers. A write fires no trigger, so sends nothing, in two
 * cases (PostgreSQL documentation, ALTER TABLE, "DISABLE/ENABLE [ REPLICA |
 * ALWAYS ] TRIGGER"; session_replication_role):
 *  - in a session with session_replication_role = replica (set by
 *    replication tools and bulk loaders; superuser or a granted SET
 *    privilege): plain triggers do not fire there. opts->enable_always
 *    installs them ENABLE ALWAYS, which fires in every role. It does not
 *    reach the logical replication apply worker's INSERT, UPDATE and DELETE
 *    on a subscriber's table, which fire row triggers only, never statement
 *    triggers (PostgreSQL documentation, Logical Replication, "Triggers";
 *    its initial table synchronization fires them for INSERT, like COPY);
 *  - after ALTER TABLE ... DISABLE TRIGGER (a trigger's name, ALL or USER,
 *    by the table's owner; pg_restore --disable-triggers does it for a
 *    data-only restore): a disabled trigger fires in no role, ENABLE ALWAYS
 *    or not, until it is enabled again (ENABLE TRIGGER ALL, which a
 *    data-only pg_restore runs after the data, makes an ALWAYS trigger a
 *    plain one again). Watching the table again enables disabled triggers
 *    (and restores ENABLE ALWAYS when asked).
 * Writes made while a trigger was silent are lost to the listeners: reset
 * the scope (pgw_index_reset_scope()) after such an operation, or watch
 * with the stream, which reads the WAL whatever the triggers and the role
 * (its one trigger, for a partition's TRUNCATE, is always ENABLE ALWAYS:
 * pgw_pq_stream_watch_table()).
 *
 * Transactions: when the connection is idle the call runs in its own
 * transaction; inside the caller's transaction it uses a savepoint, so a
 * failure leaves the caller's transaction usable (and the triggers take
 * effect when the caller commits). CREATE TRIGGER takes a SHARE ROW
 * EXCLUSIVE lock on the table.
 * Sources: PostgreSQL documentation, CREATE TRIGGER ("REFERENCING",
 * transition tables), NOTIFY, PL/pgSQL "Triggers on Data Changes".
 *
 * @param conn    a borrowed connection (idle or in a transaction, not a
 *                failed one); its role needs the TRIGGER privilege on the
 *                table and EXECUTE on the trigger function.
 * @param schema  the table's schema (exact name, not quoted).
 * @param table   the table's name (exact name, not quoted).
 * @param opts    options (borrowed for the call); NULL for
 *                PGW_PQ_WATCH_OPTIONS_INIT. Its result, when set, is
 *                filled on PGW_OK.
 * @param err     optional detail on failure.
 * @return PGW_OK;
 *         PGW_EINVAL on a NULL or empty name, names that are not UTF-8, a
 *         bad channel, too many or empty value columns, an options version
 *         other than 1 and 2, a result of another version, or a relation
 *         that is not an ordinary or partitioned table (a view, a foreign
 *         table), or a partition (err->message names its root, which to
 *         watch instead);
 *         PGW_ENOTFOUND when the table does not exist, or the library
 *         schema has no trigger function, or it is older than version 4
 *         and the table has partitions or inheritance children (run
 *         pgw_pq_install());
 *         PGW_EEXISTS when a trigger of one of the four names is not
 *         pgwitness's (err->message names it and the function it calls);
 *         PGW_ESTATE for a failed transaction; PGW_EPG (e.g. 42501 without
 *         the TRIGGER privilege, on a descendant too, or with
 *         enable_always (or ENABLE ALWAYS triggers to return to ENABLE) by
 *         a role that does not own the table; 42710 when a trigger of a
 *         descendant's names is not pgwitness's); PGW_ECONN; PGW_ENOMEM.
 *         On failure no trigger is changed.
 */
PGW_API int pgw_pq_watch_table(PGconn *conn, const char *schema, const char *table,
                               const pgw_pq_watch_options *opts, pgw_error *err);

/**
 * Stops watching a table: drops the four triggers pgw_pq_watch_table()
 * installed (those of the four names that call a notify_statement
 * function; a trigger of the same name that calls another function is the
 * owner's and stays), and the triggers it gave the table's partitions and
 * inheritance children (also those of relations no longer below it),
 * through the watch_below() of the schema those triggers call. Idempotent, concurrent calls included: a table that
 * is not watched is left as it is. Takes the table's watch lock
 * (PGW_PQ_WATCH_LOCK_BASE) first. Transactions as pgw_pq_watch_table().
 *
 * @param out     receives true when triggers were dropped, false when the
 *                table was not watched; may be NULL.
 * @param conn    a borrowed connection.
 * @param schema  the table's schema.
 * @param table   the table's name.
 * @param err     optional detail on failure.
 * @return PGW_OK; PGW_EINVAL; PGW_ENOTFOUND when the table does not exist;
 *         PGW_ESTATE; PGW_EPG; PGW_ECONN; PGW_ENOMEM.
 */
PGW_API int pgw_pq_unwatch_table(bool *out, PGconn *conn, const char *schema,
                                 const char *table, pgw_error *err);

/** A descendant of a watched table whose writes are not reported: a
 *  partition attached or created, or an inheritance child made, after the
 *  table was watched, or one whose trigger was disabled
 *  (pgw_pq_watch_gaps()). Or, from schema version 6, a watched table
 *  that was dropped and made again without its watch (by a role without
 *  USAGE on the library schema, while the DDL event triggers were not
 *  installed, or without a value column or usable replica identity): then
 *  watched_schema and watched_table name the table itself. */
typedef struct pgw_pq_watch_gap {
    char schema[64];         /**< the descendant's schema */
    char table[64];          /**< the descendant (a partition or an
                                  inheritance child, at any level) */
    char watched_schema[64]; /**< the watched table above it: its schema */
    char watched_table[64];  /**< and its name */
    char source[24];         /**< whose triggers it lacks: "triggers"
                                  (pgw_pq_watch_table(): its writes are
                                  not sent), "stream" (the TRUNCATE
                                  trigger of pgw_pq_stream_watch_table():
                                  its TRUNCATE is not sent) or "stream,
                                  triggers" */
} pgw_pq_watch_gap;

/**
 * Lists the descendants of watched tables that lack their triggers
 * (`<pgw_schema>.watch_gaps()`, lib/pq/sql/migration_004.sql). Nothing
 * runs when a partition is attached or created or an inheritance child is
 * made, so until the watched table is watched again (or
 * `<pgw_schema>.watch_descendant(rel)` is called, e.g. from a
 * ddl_command_end event trigger) such a descendant's writes are silent:
 * watch the named tables again. Also listed, each as its own watched
 * table: a watched table dropped and made again without its watch, and a
 * watched table whose own statement triggers are disabled (ALTER TABLE
 * ... DISABLE TRIGGER; source "triggers"). A listener's triggers tenant reports the
 * entries of its channel's tables as GAP events at every connect
 * (PGW_PQ_LISTENER_GAP; the listener resets the tenant then, and a GAP
 * says what that reset cannot cover from then on); a host that watches
 * for the stream, or that listens otherwise, calls this. Reads the
 * catalog and, when the role may read it, `<pgw_schema>.stream_tables`
 * (without that privilege the stream's gaps are not listed, and the
 * triggers' are).
 *
 * @param out         receives an array of *n_out entries, ordered by the
 *                    watched table then the descendant; caller frees with
 *                    pgw_free(); NULL when there are none. Untouched on
 *                    failure.
 * @param n_out       receives the number of entries.
 * @param conn        a borrowed connection.
 * @param pgw_schema  the library's schema, or NULL for the default.
 * @param err         optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a NULL argument or an empty schema name;
 *         PGW_ENOTFOUND when the schema has no watch_gaps() (not
 *         installed, or older than version 4: run pgw_pq_install());
 *         PGW_EPG; PGW_ECONN; PGW_ENOMEM.
 */
PGW_API int pgw_pq_watch_gaps(pgw_pq_watch_gap **out, size_t *n_out, PGconn *conn,
                              const char *pgw_schema, pgw_error *err);

/* ------------------------------------------------------------------ */
/* query invalidation: definition changes (DDL)                         */

/** pgw_pq_announce_options.version of this release. */
#define PGW_PQ_ANNOUNCE_OPTIONS_VERSION 1
/** Default announce options: the default schema, the triggers' channels. */
#define PGW_PQ_ANNOUNCE_OPTIONS_INIT {PGW_PQ_ANNOUNCE_OPTIONS_VERSION, NULL, NULL, 0}

/** Options of pgw_pq_announce_ddl(). NULL means PGW_PQ_ANNOUNCE_OPTIONS_INIT. */
typedef struct pgw_pq_announce_options {
    unsigned version;             /**< PGW_PQ_ANNOUNCE_OPTIONS_VERSION */
    const char *pgw_schema;       /**< the library's schema; NULL for the default */
    const char *const *channels;  /**< more channels to notify (each 1..63 bytes,
                                       case matters), besides the triggers' own;
                                       borrowed for the call; NULL when none */
    size_t n_channels;            /**< entries in channels */
} pgw_pq_announce_options;

/**
 * Announces that the definition of schema.table changed (a DDL: ALTER
 * COLUMN ... TYPE, ADD COLUMN with a volatile default, DROP or RENAME
 * COLUMN, DROP TABLE, ATTACH or DETACH PARTITION...), so that every
 * subscription reading it refreshes (PGW_REASON_DDL) even when no write
 * follows: such a DDL fires no row trigger, and the stream sees it only in
 * the Relation message before the table's next change. For hosts without
 * a superuser (managed services), where pgw_pq_install_ddl_trigger() is
 * refused: a migration tool calls it after its migrations.
 *
 * It sends the ddl write set (docs/wire.md,
 * `{"version":1,"schema":S,"table":T,"op":"ddl"}`), naming each watched
 * table the change reaches: the table itself and each ancestor (the
 * partitioned table of a partition, the parent of an inheritance child)
 * watched by either source (`<pgw_schema>.ddl_targets()`,
 * lib/pq/sql/migration_005.sql). For each: pg_notify() on the channel of
 * its statement triggers (the first trigger argument,
 * pgw_pq_watch_table()) and on opts->channels; and, when the server's
 * wal_level is logical, pg_logical_emit_message(true, 'pgwitness', ...),
 * which the stream decodes at commit. When the relation does not exist
 * (it was dropped: no trigger is left to read a channel from) or nothing
 * above it is watched, the payload names schema.table itself, on
 * opts->channels, or PGW_PQ_DEFAULT_CHANNEL when none is given.
 * Whether the stream watches a table is read from `<pgw_schema>.stream_tables`:
 * for a role that may not read it, a table (or ancestor) watched by the
 * stream only is not found, and the payload names schema.table itself.
 * Both are transactional: in the caller's transaction (a savepoint, kept
 * on success) the announcement goes out when it commits, and not if it
 * rolls back; on an idle connection, in a transaction of its own. On
 * failure nothing is sent and a caller's transaction stays usable.
 * It first does what the event triggers of pgw_pq_install_ddl_trigger()
 * would have done at the DDL: the partitions and inheritance children made,
 * attached or made children of schema.table (or of a table below it)
 * since the watch get the triggers of every watched table above them
 * (`watch_descendant()` and `watch_below()`, migration 4; a trigger
 * disabled on purpose stays disabled), and inheritance children join the
 * stream's publications (`publish_child()`), so that pgw_pq_watch_gaps()
 * has nothing left to list for them. A migration that makes partitions
 * announces their parent (or the partitions). When that fails (a role
 * that may not create triggers on them) it is a WARNING, and the
 * announcement still goes out.
 * A table at or below schema.table that a publication of the stream's
 * publishes and that the DDL left without a usable replica identity (its
 * primary key or REPLICA IDENTITY index dropped, REPLICA IDENTITY
 * NOTHING), whose writers' UPDATE and DELETE PostgreSQL then fails, is
 * given REPLICA IDENTITY FULL first, with a WARNING (the connection's
 * notice receiver); when current_user does not own it, the WARNING gives
 * the ALTER TABLE to run and the table is left as it is
 * (`<pgw_schema>.keep_replica_identity()`, migration 8; docs/stream.md,
 * "Writers never fail"). That step's failure is a WARNING too: the
 * announcement still goes out.
 * Needs the library schema at version 5, USAGE on that schema and the
 * EXECUTE privilege on `<pgw_schema>.announce_ddl()` (granted to PUBLIC
 * by default); no privilege on the table.
 * Sources: PostgreSQL documentation, NOTIFY; "Replication Management
 * Functions" (pg_logical_emit_message).
 *
 * @param conn    a borrowed connection.
 * @param schema  the table's schema (1..63 bytes of UTF-8; case matters).
 * @param table   the table's name (the same rules).
 * @param opts    NULL for the defaults.
 * @param err     optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a NULL conn, a bad name or channel, or bad
 *         options; PGW_ENOTFOUND when the schema has no announce_ddl()
 *         (not installed, or older than version 5: run pgw_pq_install());
 *         PGW_EPG with err->sqlstate 42501 when current_user has no USAGE
 *         on the library schema, checked first ("role R has no USAGE on
 *         schema \"S\": grant it (GRANT USAGE ON SCHEMA S TO R)", the
 *         names quoted as SQL identifiers in the GRANT), or without the
 *         EXECUTE privilege (the server's error), or another server error;
 *         PGW_ECONN; PGW_ENOMEM.
 */
PGW_API int pgw_pq_announce_ddl(PGconn *conn, const char *schema, const char *table,
                                const pgw_pq_announce_options *opts, pgw_error *err);

/**
 * Installs the opt-in event triggers that announce every definition change
 * of a watched table as pgw_pq_announce_ddl() does, without the host
 * calling it: `pgwitness_ddl_command_end` (ON ddl_command_end) and
 * `pgwitness_sql_drop` (ON sql_drop), both calling `<pgw_schema>.on_ddl_event()`
 * (lib/pq/sql/migration_005.sql). After each command
 * on a table, or on an index or constraint of a table, that is watched or
 * lies below a watched table, it gives new partitions and inheritance
 * children their triggers (`watch_descendant()`, migration 4: CREATE
 * TABLE ... PARTITION OF / INHERITS, ALTER TABLE ... ATTACH PARTITION /
 * INHERIT), then announces. The event triggers remember each table
 * watched by the triggers (`<pgw_schema>.trigger_watches`: its name,
 * channel, value columns and firing mode, copied from its triggers when
 * they are made; the watches that exist when they are installed are
 * recorded then) and each one watched for the stream (stream_tables), so:
 * a table renamed (ALTER TABLE ... RENAME TO, SET SCHEMA) is announced
 * under its old name and its new one; a dropped watched table is announced
 * by name on its own channel (by logical message only, when only the
 * stream watched it); and a table made again under the name of a dropped
 * watched table is watched again as it was (its four triggers, with the
 * key read from the catalog until the next pgw_pq_watch_table(); its
 * publications, when it has a usable replica identity and the role may
 * change them, else a WARNING saying what to do), then announced, so
 * the drop and make-again of an ingest pipeline keeps its readers
 * refreshed and its writes reported. Any other new table sends nothing: a
 * DDL transaction of tables nobody watches can still be prepared
 * (PREPARE TRANSACTION refuses one that sent a NOTIFY; the DDL of a
 * watched table does send one, as its writes do). Temporary tables are
 * left out. A dropped partition or child announces the watched table
 * above it. A DDL that leaves a table published for the stream without a
 * usable replica identity gets REPLICA IDENTITY FULL for it at once, with
 * a WARNING, as pgw_pq_announce_ddl() does (including the index drop of
 * REPLICA IDENTITY USING INDEX, which names no table: then every table
 * the stream watches is checked). A failure inside
 * them never fails the DDL: it is raised as a WARNING and that
 * announcement is lost. They run as the user running the DDL (SECURITY
 * INVOKER: a definer's rights would create triggers and send for any role),
 * who needs USAGE on the library schema: for a role without it, a DDL of a
 * table with pgwitness triggers or in a publication (or below one) raises a
 * WARNING saying so (for a new partition or child: that it got no
 * triggers, which pgw_pq_watch_gaps() then lists), and other DDL is left
 * alone.
 * Cost (tests/bench/bench-ddl, server CPU per statement): a CREATE or
 * DROP of a table nobody watches costs about what it did without them; an
 * ALTER of a watched table about 1.3 ms more; making and dropping a
 * partition of a watched table about 4 ms more (its triggers are made).
 * Event triggers belong to the database: one library schema per database
 * can have them. Idempotent: when they already are these, nothing
 * changes — but a role that is not a superuser is refused all the same
 * (checked first), so that the call never reports success to a role that
 * could not have made the change. The same transaction rules as
 * pgw_pq_announce_ddl().
 * Sources: PostgreSQL documentation, "Event Triggers" (creating one needs
 * a superuser in PostgreSQL 15), CREATE EVENT TRIGGER.
 *
 * @param conn        a borrowed connection.
 * @param pgw_schema  the library's schema, or NULL for the default.
 * @param err         optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a NULL conn or a bad schema name;
 *         PGW_ENOTFOUND when the schema is older than version 5 (run
 *         pgw_pq_install()); PGW_EEXISTS when an event trigger of one of
 *         these names calls another function (another schema's); PGW_EPG
 *         with err->sqlstate 42501 when current_user is not a superuser,
 *         checked before anything else (whether or not the triggers are
 *         installed already) and before anything changes (use
 *         pgw_pq_announce_ddl() instead), or another server error;
 *         PGW_ECONN; PGW_ENOMEM.
 */
PGW_API int pgw_pq_install_ddl_trigger(PGconn *conn, const char *pgw_schema, pgw_error *err);

/**
 * Drops the event triggers of pgw_pq_install_ddl_trigger(). Idempotent:
 * when there are none, nothing changes. Dropping them needs a superuser
 * (their owner), checked first: a role that is not one is refused also
 * when there is nothing to drop. The same transaction rules as
 * pgw_pq_announce_ddl(). Source: PostgreSQL documentation, DROP EVENT
 * TRIGGER.
 *
 * @param conn        a borrowed connection.
 * @param pgw_schema  the library's schema, or NULL for the default.
 * @param err         optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a NULL conn or a bad schema name;
 *         PGW_EEXISTS when an event trigger of one of these names calls
 *         another function (nothing is dropped); PGW_EPG (42501 when not a
 *         superuser, before anything else); PGW_ECONN; PGW_ENOMEM.
 */
PGW_API int pgw_pq_remove_ddl_trigger(PGconn *conn, const char *pgw_schema, pgw_error *err);

/* ------------------------------------------------------------------ */
/* query invalidation: the stream (logical decoding, pgoutput)          */

/**
 * The second write source: a logical replication stream of a publication,
 * decoded by the core (pgoutput.h) into the same write sets as the
 * triggers, with the same text forms. Writers pay no trigger: the server
 * decodes its write-ahead log. The stream is durable: a permanent slot
 * keeps every committed change until pgwitness confirms it, so writes made
 * while nothing listens are delivered when the stream resumes, and no
 * scope reset is needed (docs/stream.md). A tenant chooses its source:
 * pgw_pq_listener_add_tenant() for the triggers, pgw_pq_listener_add_stream()
 * for the stream.
 *
 * What the stream needs of the server: wal_level = logical, a free
 * replication slot and walsender (max_replication_slots,
 * max_wal_senders), PostgreSQL 14 or later (the "messages" option of
 * pgoutput), and a role with the REPLICATION attribute (or the managed
 * services' equivalent, e.g. rds_replication) for the stream's own
 * connection. pgw_pq_stream_watch_table() needs to own the table and the
 * publication (or CREATE on the database to create it).
 */

/** The publication pgwitness manages and the stream reads when none is
 *  named. */
#define PGW_PQ_DEFAULT_PUBLICATION "pgwitness"

/** Oldest server the stream supports (server_version_num): PostgreSQL 14,
 *  whose pgoutput sends logical messages (PostgreSQL documentation,
 *  "Logical Streaming Replication Protocol Parameters", messages). */
#define PGW_PQ_STREAM_MIN_SERVER_VERSION 140000

/** Version of pgw_pq_stream_watch_options understood by this release. */
#define PGW_PQ_STREAM_WATCH_OPTIONS_VERSION 1

/** How a table is watched for the stream. */
typedef struct pgw_pq_stream_watch_options {
    /** Must be PGW_PQ_STREAM_WATCH_OPTIONS_VERSION. */
    unsigned int version;
    /** The library's schema, where pgw_pq_install() keeps the value
     *  columns of each watched table (<schema>.stream_tables); NULL for
     *  PGW_PQ_DEFAULT_SCHEMA. */
    const char *pgw_schema;
    /** The publication, 1..63 bytes of UTF-8 (an identifier, used as is);
     *  NULL for PGW_PQ_DEFAULT_PUBLICATION. Created when missing. */
    const char *publication;
    /** Columns whose old/new values the write sets carry, as for the
     *  triggers (pgw_pq_watch_options.value_columns); names the table
     *  lacks are skipped. Borrowed for the call; NULL with 0 for none. */
    const char *const *value_columns;
    /** Number of value columns, 0..PGW_PQ_MAX_VALUE_COLUMNS. */
    size_t n_value_columns;
} pgw_pq_stream_watch_options;

/** Initialiser for pgw_pq_stream_watch_options: default schema and
 *  publication, no value columns. */
#define PGW_PQ_STREAM_WATCH_OPTIONS_INIT \
    { PGW_PQ_STREAM_WATCH_OPTIONS_VERSION, NULL, NULL, NULL, 0 }

/**
 * Watches a table for the stream: adds it to the publication (created when
 * missing, publishing INSERT, UPDATE, DELETE and TRUNCATE with
 * publish_via_partition_root, so that a partitioned table's partitions,
 * and rows moving between them, arrive as writes to it), together with its
 * inheritance children, and records its value columns.
 *
 * Writers never fail because of it. PostgreSQL fails the UPDATE and DELETE
 * of a published table that has no replica identity (PostgreSQL
 * documentation, "Logical Replication", "Publication"): so the call
 * refuses a table without a primary key, and a table, partition or child
 * whose replica identity is NOTHING or DEFAULT without a primary key,
 * naming it and what to set, before anything changes. A primary key is
 * needed anyway: row IDs are its values. REPLICA IDENTITY FULL gives the
 * stream old rows, and so changed columns and old values (docs/stream.md).
 *
 * Idempotent: watching a watched table again updates its value columns
 * and adds the inheritance children created since (their writes were not
 * published before: the call therefore also emits a table-wide write set
 * for the table). A call that changes something (the publication, the
 * value columns) emits logical messages (prefix "pgwitness") in its
 * transaction that tell running streams to read the configuration again
 * at its commit, so nothing in between is reported under the wrong table:
 * they reconnect there (a stream on a temporary slot makes a new one, and
 * resets its scope). A call that changes nothing sends nothing. A partition cannot be watched: watch its partitioned table.
 * The record of the table replaces, in its publication, those of dropped
 * tables of the same name (made again while the event triggers were not
 * installed, or by a role without USAGE on the library schema): they are
 * deleted, so that a table made again under the name later has one record
 * to take over (pgw_pq_install_ddl_trigger()).
 *
 * The TRUNCATE of a partition. A publication via the partition root does
 * not publish a TRUNCATE that names a partition (only one that names the
 * root), so for a partitioned table the call also gives each partition,
 * at every level, an AFTER TRUNCATE statement trigger,
 * pgwitness_stream_truncate_<oid> (<oid>: the root's), that sends the
 * truncate payload of the root (docs/wire.md) as a transactional logical
 * message with prefix "pgwitness" (pg_logical_emit_message): the stream
 * reports it as the root's truncate at its commit. The trigger is always
 * ENABLE ALWAYS (ALTER TABLE ... ENABLE ALWAYS TRIGGER), so that it fires
 * under session_replication_role = replica too, like the stream sees every
 * other write; watching again makes an existing one ALWAYS again (the same
 * trigger, altered) when it was made plain (ENABLE TRIGGER ALL) or
 * disabled. A partition attached later lacks it until the table is
 * watched again: the stream reports it as a GAP, and pgw_pq_watch_gaps()
 * lists it; so does a partition whose trigger is not ALWAYS. This needs the library
 * schema at version 4. The triggers serve every publication that watches
 * the root; the stream unwatch drops them once no publication's record of
 * the root is left.
 * Transactions as pgw_pq_watch_table(): its own when the connection is
 * idle, a savepoint inside the caller's.
 *
 * @param conn    a borrowed connection; the role needs to own the table
 *                (and, for a partitioned table, each partition: the
 *                TRUNCATE triggers are made ENABLE ALWAYS) and the
 *                publication (or CREATE on the database), and
 *                SELECT/INSERT/UPDATE/DELETE on <pgw_schema>.stream_tables.
 * @param schema  the table's schema (exact name).
 * @param table   the table's name (exact name).
 * @param opts    options; NULL for PGW_PQ_STREAM_WATCH_OPTIONS_INIT.
 * @param err     optional detail on failure.
 * @return PGW_OK;
 *         PGW_EINVAL on a NULL or empty name, names that are not UTF-8, too
 *         many or empty value columns, another options version, or a
 *         relation that is not an ordinary or partitioned table (a view, a
 *         partition: err->message names its root), or a table without a
 *         primary key or with an unusable replica identity (err->message
 *         names the relation and the ALTER TABLE to run);
 *         PGW_ENOTFOUND when the table does not exist, or the library schema
 *         is not installed, or, for a partitioned table, older than
 *         version 4 (run pgw_pq_install());
 *         PGW_EVERSION when the server is older than
 *         PGW_PQ_STREAM_MIN_SERVER_VERSION;
 *         PGW_ESTATE when wal_level is not logical, for a failed
 *         transaction, or a publication that exists
 *         but does not publish every operation or not via the partition
 *         root (err->message says what to ALTER);
 *         PGW_EPG (e.g. 42501 without ownership; when publishing is
 *         refused, err->message adds what the role needs: to own the
 *         publication and the table, or CREATE on the database);
 *         PGW_ECONN; PGW_ENOMEM.
 *         On failure nothing changed.
 */
PGW_API int pgw_pq_stream_watch_table(PGconn *conn, const char *schema, const char *table,
                                      const pgw_pq_stream_watch_options *opts,
                                      pgw_error *err);

/**
 * Stops watching a table for the stream: drops it (and its inheritance
 * children) from the publication and forgets its value columns; running
 * streams read the configuration again at the commit. Idempotent.
 *
 * @param out     receives true when the table was watched; may be NULL.
 * @param conn    a borrowed connection.
 * @param schema  the table's schema.
 * @param table   the table's name.
 * @param opts    options (schema and publication; value columns ignored);
 *                NULL for the defaults.
 * @param err     optional detail on failure.
 * @return PGW_OK; PGW_EINVAL; PGW_ENOTFOUND when the table does not exist;
 *         PGW_ESTATE; PGW_EPG; PGW_ECONN; PGW_ENOMEM.
 */
PGW_API int pgw_pq_stream_unwatch_table(bool *out, PGconn *conn, const char *schema,
                                        const char *table,
                                        const pgw_pq_stream_watch_options *opts,
                                        pgw_error *err);

/** A logical replication slot, as pgw_pq_slots() lists it. */
typedef struct pgw_pq_slot_info {
    char name[64];           /**< slot_name */
    char database[64];       /**< its database */
    char plugin[64];         /**< its output plugin (pgoutput) */
    bool temporary;          /**< dropped when its session ends */
    bool active;             /**< a walsender is streaming from it */
    int active_pid;          /**< that walsender's process, or 0 */
    bool pgwitness;          /**< created by a pgwitness stream (recorded in
                                  <pgw_schema>.slots) */
    uint64_t restart_lsn;    /**< the oldest WAL it keeps (0: none) */
    uint64_t confirmed_lsn;  /**< confirmed_flush_lsn: changes before it
                                  are not sent again */
    int64_t retained_bytes;  /**< WAL the server keeps for it:
                                  pg_current_wal_lsn() - restart_lsn */
    int64_t lag_bytes;       /**< pg_current_wal_lsn() - confirmed_lsn */
    char wal_status[16];     /**< reserved, extended, unreserved or lost
                                  (lost: invalidated by
                                  max_slot_wal_keep_size) */
    int64_t safe_wal_size;   /**< bytes of WAL that may still be written
                                  before it is lost; -1 when unbounded
                                  (max_slot_wal_keep_size = -1) */
} pgw_pq_slot_info;

/**
 * Lists the logical slots of the connection's database that use pgoutput,
 * with what they retain: a slot that nobody streams from keeps WAL until
 * it is confirmed or dropped, bounded only by max_slot_wal_keep_size
 * (docs/stream.md, "WAL retention"). PostgreSQL documentation,
 * pg_replication_slots.
 *
 * @param out     receives an array of *n_out entries, by name; caller
 *                frees with pgw_free(); NULL when there are none.
 *                Untouched on failure.
 * @param n_out   receives the number of entries.
 * @param conn    a borrowed connection.
 * @param pgw_schema  the library's schema (which slots pgwitness made),
 *                    or NULL for the default; a schema that is not
 *                    installed marks none as pgwitness's.
 * @param err     optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a NULL argument; PGW_EPG; PGW_ECONN;
 *         PGW_ENOMEM.
 */
PGW_API int pgw_pq_slots(pgw_pq_slot_info **out, size_t *n_out, PGconn *conn,
                         const char *pgw_schema, pgw_error *err);

/**
 * Drops a replication slot, releasing the WAL it keeps. A stream that used
 * it reports SLOT_LOST and starts on a new one with a scope reset.
 *
 * @param conn  a borrowed connection (not inside a transaction).
 * @param slot  the slot's name.
 * @param pgw_schema  the library's schema (its record of the slot is
 *                    removed too), or NULL for the default.
 * @param err   optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a NULL or empty name; PGW_ENOTFOUND when
 *         no such slot exists; PGW_ESTATE when a walsender is using it
 *         (55006) or inside a transaction; PGW_EPG; PGW_ECONN; PGW_ENOMEM.
 */
PGW_API int pgw_pq_drop_slot(PGconn *conn, const char *slot, const char *pgw_schema,
                             pgw_error *err);

/* ------------------------------------------------------------------ */
/* query invalidation: the listener                                    */

/**
 * The listener: one connection per active tenant database, which turns
 * what the tenant's write source sends into write sets and feeds them to a
 * pgw_index (pgw_index_match()) and/or to a callback (opaque). Each tenant
 * has its own source: the statement triggers' notifications, on a LISTEN
 * connection (pgw_pq_listener_add_tenant(), described first below), or the
 * stream, on a replication connection (pgw_pq_listener_add_stream(),
 * described there). Both kinds share the cap, the idle close, the
 * backoff and the event loop integration.
 *
 * Tenants are registered with a scope and a conninfo and start inactive.
 * pgw_pq_listener_touch() marks a tenant active: its connection is opened
 * (non-blocking: PQconnectStartParams/PQconnectPoll), the watch's gaps on
 * the tenant's channel are read and reported (GAP events, below), then
 * LISTEN is sent; once LISTEN is in effect the tenant's scope is reset
 * (every runner of the scope dirty, reason SCOPE_RESET), because NOTIFY is
 * not durable: writes
 * committed while nobody listened are lost (PostgreSQL documentation,
 * LISTEN, NOTIFY). The same happens on every reconnect.
 *
 * At most `max_connections` tenants are active; activating one more closes
 * the least recently touched. A tenant not touched for `idle_timeout_ms` is
 * closed. A closed tenant is not watched: hosts should treat its runners as
 * not live until it is touched again (which resets its scope).
 *
 * A lost connection (PQconsumeInput failure, socket error, a failed
 * connection attempt or LISTEN, an attempt that takes longer than
 * `connect_timeout_ms`) is retried after a capped exponential backoff:
 * `backoff_initial_ms`, doubled per failure up to `backoff_max_ms`, back to
 * the start after a successful LISTEN.
 *
 * Driving it. Either call pgw_pq_listener_run() (a poll() loop for small
 * hosts), or integrate with an event loop (poll, epoll, libuv): after every
 * call, get the sockets and the events each one waits for with
 * pgw_pq_listener_sockets() (the set changes as connections open and
 * close), call pgw_pq_listener_process() for each ready socket, and call
 * pgw_pq_listener_tick() when the delay it returned has passed. Times come
 * from CLOCK_MONOTONIC.
 *
 * Memory: the listener allocates through the library's allocator hook;
 * libpq's own memory (connections, results, notifications) is libpq's. A
 * notification that cannot be decoded for lack of memory resets its scope
 * instead (pgw_index_reset_scope() never allocates): nothing is lost.
 *
 * Threading: one thread at a time per listener (and per index it feeds).
 * Nothing is printed; what happens is reported through `on_event`.
 */
typedef struct pgw_pq_listener pgw_pq_listener;

/** Identifies a tenant of a listener; never 0. */
typedef uint64_t pgw_pq_tenant_id;

/** What a listener reports through `on_event`. */
typedef enum pgw_pq_listener_event_kind {
    /** LISTEN is in effect on a (re)opened connection (after the GAP
     *  events of its connect, if any), and the tenant's scope was reset
     *  (SCOPE_RESET). */
    PGW_PQ_LISTENER_LISTENING = 1,
    /** The connection was lost, or an attempt to connect or to LISTEN
     *  failed or timed out; `retry_ms` later a new attempt starts.
     *  `status` is PGW_ECONN or PGW_EPG (PGW_ENOMEM when the gaps could
     *  not be read for lack of memory: the attempt fails rather than pass
     *  a gap over), `message` says why. */
    PGW_PQ_LISTENER_LOST = 2,
    /** The tenant was idle for idle_timeout_ms: its connection is closed. */
    PGW_PQ_LISTENER_CLOSED_IDLE = 3,
    /** The tenant was the least recently touched when another needed a
     *  connection beyond max_connections: its connection is closed. */
    PGW_PQ_LISTENER_CLOSED_EVICTED = 4,
    /** A notification was not a faithful payload (pgw_payload_decode()
     *  gave a fallback: an unknown write to a table, or a scope reset);
     *  `status` is PGW_EPARSE or PGW_EVERSION, `message` says why. The
     *  fallback was matched like any write. */
    PGW_PQ_LISTENER_FALLBACK = 5,
    /** A notification could not be decoded for lack of memory: the
     *  tenant's scope was reset instead. `status` is PGW_ENOMEM. On a
     *  stream: a transaction could not be decoded (`status` PGW_ENOMEM, or
     *  PGW_EPARSE for a malformed message, `message` naming its byte
     *  offset), and the scope was reset in its place. */
    PGW_PQ_LISTENER_RESET = 6,
    /** A stream tenant is streaming from its slot, from `lsn` on. `reset`
     *  says whether its scope was reset: only when the slot is new (a
     *  temporary slot, which every connection makes anew; a permanent one
     *  created now, the first time or after SLOT_LOST). A resumed
     *  permanent slot delivers what was committed meanwhile instead. */
    PGW_PQ_LISTENER_STREAMING = 7,
    /** A stream tenant's permanent slot is gone: `status` is PGW_ENOTFOUND
     *  when it was dropped, PGW_ESTATE when the server invalidated it
     *  (wal_status "lost": it kept more WAL than max_slot_wal_keep_size);
     *  `message` names the slot and which. Changes since its last
     *  confirmed position are lost: pgwitness creates the slot again, and
     *  the STREAMING that follows resets the scope (once). PGW_EEXISTS:
     *  the slot is there, but another consumer read it while this tenant
     *  was disconnected (its confirmed position is past the tenant's: two
     *  streams share one slot name); what that consumer read is lost to
     *  this tenant, so the STREAMING that follows resets the scope (once),
     *  and streaming goes on from the slot's position. */
    PGW_PQ_LISTENER_SLOT_LOST = 8,
    /** Writes a tenant's connection found it cannot see, one event per
     *  gap, reported at every connect (and reconnect) before LISTENING or
     *  STREAMING; `status` is PGW_OK, `message` names the relation and
     *  what to do, and the tenant goes on.
     *
     *  A triggers tenant (pgw_pq_listener_add_tenant()): a partition or
     *  inheritance child, at any level, of a table watched on the
     *  tenant's channel (pgw_pq_watch_table(): TG_ARGV[0] of its
     *  pgwitness_insert trigger) that lacks the triggers that report its
     *  writes as the watched table's — attached, created or made a child
     *  since the watch without the DDL event trigger
     *  (pgw_pq_install_ddl_trigger()) — so its writes are not sent: "S.D
     *  is a partition of S.W without pgwitness's triggers, so its writes
     *  are not sent: watch S.W again (pgw_pq_watch_table) to add them"
     *  ("inherits from" for an inheritance child; names quoted as SQL
     *  identifiers when they need it). These are pgw_pq_watch_gaps()'s
     *  entries whose source includes "triggers", for this channel's
     *  tables, read with the library schema's watch_gaps() logic
     *  (below_plan(), lib/pq/sql/listen_gaps.sql; the schema is the one
     *  whose notify_statement() the watched table's triggers call). The
     *  tenant needs no privilege on that schema: without USAGE on it (or
     *  EXECUTE on its functions), with a schema older than version 4 or
     *  none, or when the server refuses the query, no GAP is reported and
     *  the tenant listens all the same.
     *
     *  A stream tenant: an inheritance child of a watched table that is
     *  not in the publication (created since the watch: watch the table
     *  again), a partition without pgwitness's TRUNCATE trigger (attached
     *  since the watch: its TRUNCATE is not sent; watch the table again),
     *  a publication that does not publish every operation or publishes
     *  partitions under their own names, a published table without a
     *  primary key.
     *
     *  A GAP does not reset the scope (`reset` is false), on either
     *  source: the LISTENING (or, on a new slot, STREAMING) that follows
     *  covers what was written before the connect, but no reset covers the
     *  relation's writes from then on. The host acts on the message
     *  (watches the table again); until then, results that read the
     *  watched table can miss that relation's writes. */
    PGW_PQ_LISTENER_GAP = 9
} pgw_pq_listener_event_kind;

/** An event, valid for the duration of the callback. */
typedef struct pgw_pq_listener_event {
    pgw_pq_listener_event_kind kind; /**< what happened */
    pgw_pq_tenant_id tenant;         /**< to which tenant */
    const pgw_scope *scope;          /**< its scope (borrowed) */
    int status;                      /**< PGW_OK or the failure's code */
    const char *message;             /**< why, in one line; "" when none */
    uint32_t retry_ms;               /**< for LOST: delay before the next attempt */
    bool reset;                      /**< LISTENING, STREAMING: the scope was reset */
    uint64_t lsn;                    /**< STREAMING: where streaming starts
                                          (0: at the slot's confirmed
                                          position) */
} pgw_pq_listener_event;

/** Version of pgw_pq_listener_options understood by this release. */
#define PGW_PQ_LISTENER_OPTIONS_VERSION 1

/** Options of pgw_pq_listener_new(). */
typedef struct pgw_pq_listener_options {
    /** Must be PGW_PQ_LISTENER_OPTIONS_VERSION. */
    unsigned int version;
    /** The index notifications are matched against (pgw_index_match(),
     *  pgw_index_reset_scope()), and whose clock pgw_pq_listener_tick()
     *  drives (pgw_index_clock() with CLOCK_MONOTONIC milliseconds: a host
     *  that calls pgw_index_clock() on it too must pass the same clock);
     *  borrowed, must outlive the listener; may be NULL when only the
     *  callbacks are wanted. */
    pgw_index *index;
    /** The channel to LISTEN on, 1..63 bytes; NULL for
     *  PGW_PQ_DEFAULT_CHANNEL. Copied. */
    const char *channel;
    /** Most tenants with a connection at once, >= 1 (default 16). */
    size_t max_connections;
    /** Close a tenant not touched for this long, in milliseconds; 0 never
     *  (default 300000, five minutes). */
    uint32_t idle_timeout_ms;
    /** Give up a connection attempt (connect and LISTEN, with the reading
     *  of the gaps for a triggers tenant) after this long, in
     *  milliseconds, >= 1 (default 10000). */
    uint32_t connect_timeout_ms;
    /** First retry delay after a failure, in milliseconds, >= 1 (default
     *  100). */
    uint32_t backoff_initial_ms;
    /** Longest retry delay, in milliseconds, >= backoff_initial_ms
     *  (default 30000). */
    uint32_t backoff_max_ms;
    /** Called with every write set decoded from a notification, after it
     *  was matched against the index (borrowed for the call; fallbacks
     *  included); may be NULL. Must not call back into the listener. */
    void (*on_write)(pgw_pq_tenant_id tenant, const pgw_write *write, void *userdata);
    /** Called with every event; may be NULL. Must not call back into the
     *  listener. */
    void (*on_event)(const pgw_pq_listener_event *event, void *userdata);
    /** Passed to the callbacks. */
    void *userdata;
} pgw_pq_listener_options;

/** Initialiser for pgw_pq_listener_options: no index, no callbacks, the
 *  documented defaults. */
#define PGW_PQ_LISTENER_OPTIONS_INIT \
    { PGW_PQ_LISTENER_OPTIONS_VERSION, NULL, NULL, 16, 300000, 10000, 100, 30000, NULL, NULL, \
      NULL }

/**
 * Creates a listener without tenants.
 *
 * @param out   receives the listener; caller frees with
 *              pgw_pq_listener_free(). Untouched on failure.
 * @param opts  options (copied; the index and userdata stay borrowed);
 *              NULL for PGW_PQ_LISTENER_OPTIONS_INIT.
 * @param err   optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when out is NULL or an option is out of range
 *         or of another version; PGW_ENOMEM.
 */
PGW_API int pgw_pq_listener_new(pgw_pq_listener **out, const pgw_pq_listener_options *opts,
                                pgw_error *err);

/**
 * Closes every connection (PQfinish) and releases the listener. No event
 * is reported.
 *
 * @param listener  the listener, or NULL (ignored).
 */
PGW_API void pgw_pq_listener_free(pgw_pq_listener *listener);

/**
 * Registers a tenant, inactive (no connection until
 * pgw_pq_listener_touch()).
 *
 * @param out       receives the tenant's identifier; untouched on failure.
 * @param listener  the listener.
 * @param scope     the scope its notifications belong to (copied): the
 *                  database the conninfo names, as the index knows it.
 *                  Two tenants may not have equal scopes.
 * @param conninfo  a libpq connection string or URI for the tenant's
 *                  database (copied). The listener forces
 *                  client_encoding=UTF8 and, unless the conninfo says
 *                  otherwise, sets application_name=pgwitness-listener
 *                  and TCP keepalives (so a silently dropped peer is
 *                  noticed; libpq "Parameter Key Words").
 * @param err       optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a NULL argument, a string that is not
 *         UTF-8, or an empty conninfo; PGW_EEXISTS when a tenant has an
 *         equal scope; PGW_ENOMEM.
 */
PGW_API int pgw_pq_listener_add_tenant(pgw_pq_tenant_id *out, pgw_pq_listener *listener,
                                       const pgw_scope *scope, const char *conninfo,
                                       pgw_error *err);

/** Version of pgw_pq_stream_options understood by this release. */
#define PGW_PQ_STREAM_OPTIONS_VERSION 1

/** How a stream tenant reads its publication. */
typedef struct pgw_pq_stream_options {
    /** Must be PGW_PQ_STREAM_OPTIONS_VERSION. */
    unsigned int version;
    /** The publication, as pgw_pq_stream_watch_table() made it or one the
     *  host manages (1..63 bytes); NULL for PGW_PQ_DEFAULT_PUBLICATION.
     *  Copied. */
    const char *publication;
    /** A permanent slot's name (1..63 bytes of a-z, 0-9 and _): created
     *  when missing, resumed from its confirmed position on every
     *  connect, after a restart of the host too. NULL for a temporary
     *  slot, which the server drops with the connection: every connect
     *  then makes a new one and resets the scope, as LISTEN does. Copied. */
    const char *slot;
    /** The library's schema, where the value columns of watched tables are
     *  kept and slots made are recorded; NULL for PGW_PQ_DEFAULT_SCHEMA.
     *  Copied. */
    const char *pgw_schema;
    /** Send a standby status update at least this often, in milliseconds,
     *  >= 10 (default 10000, as wal_receiver_status_interval). */
    uint32_t status_interval_ms;
    /** Most IDs in one write set (pgw_pgoutput_options; default 1000). */
    size_t max_ids_per_write;
    /** Bytes of rows one transaction may buffer before its write sets
     *  degrade to unknown IDs (pgw_pgoutput_options; default 64 MiB). */
    size_t max_txn_bytes;
} pgw_pq_stream_options;

/** Initialiser for pgw_pq_stream_options: the default publication, a
 *  temporary slot, the documented defaults. */
#define PGW_PQ_STREAM_OPTIONS_INIT \
    { PGW_PQ_STREAM_OPTIONS_VERSION, NULL, NULL, NULL, 10000, 1000, (size_t)64 << 20 }

/**
 * Registers a tenant whose writes come from the stream, inactive (no
 * connection until pgw_pq_listener_touch()).
 *
 * Connecting: a replication=database connection whose session settings
 * pin the text forms the triggers use (docs/wire.md, "Text forms"); then
 * the configuration of the publication is read (its tables, their
 * primary keys and value columns, the inheritance children and partitions
 * to report as their watched table) and the slot is checked (created when
 * missing or lost); then START_REPLICATION ... LOGICAL from the position
 * this process last handled, else from the slot's confirmed position,
 * with pgoutput protocol version 1 (PostgreSQL documentation, "Streaming
 * Replication Protocol"). Each step is non-blocking.
 *
 * Streaming: each committed transaction's write sets (pgoutput.h) are
 * matched against the index and passed to on_write, in commit order,
 * once its Commit has arrived; none before. Then its position is
 * *handled*: the next standby status update (at least every
 * status_interval_ms, and whenever the server asks) confirms it, and the
 * slot frees the WAL before it. While nothing is in flight, keepalives
 * advance the confirmed position too, so WAL does not pile up behind
 * unwatched traffic.
 *
 * Durability: after a lost connection the stream resumes at the position
 * this process handled, so nothing is delivered twice. A tenant whose
 * connection is closed on purpose (idle, evicted, removed, the listener
 * freed) confirms what it handled with a last status update, so a later
 * process resumes right after it. After a crash of the host (no such
 * update) it resumes at the slot's confirmed position, so the write sets
 * of the transactions handled since the last status update are delivered
 * again (at least once; a host restarting reruns every subscription
 * anyway). A tenant closed for idleness or by the cap keeps its slot,
 * which keeps WAL meanwhile (docs/stream.md, "WAL retention").
 *
 * @param out       receives the tenant's identifier; untouched on failure.
 * @param listener  the listener.
 * @param scope     the scope its writes belong to (copied); two tenants
 *                  may not have equal scopes.
 * @param conninfo  a libpq connection string or URI for the tenant's
 *                  database (copied), for a role that may replicate. The
 *                  listener forces replication=database,
 *                  client_encoding=UTF8 and the settings of the text
 *                  forms; application_name defaults to pgwitness-stream.
 * @param opts      options (copied); NULL for PGW_PQ_STREAM_OPTIONS_INIT.
 * @param err       optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a NULL argument, a string that is not
 *         UTF-8, an empty conninfo, a bad slot or publication name, or an
 *         option out of range or of another version; PGW_EEXISTS when a
 *         tenant has an equal scope, or another stream tenant of this
 *         listener uses the same permanent slot; PGW_ENOMEM.
 */
PGW_API int pgw_pq_listener_add_stream(pgw_pq_tenant_id *out, pgw_pq_listener *listener,
                                       const pgw_scope *scope, const char *conninfo,
                                       const pgw_pq_stream_options *opts, pgw_error *err);

/** What a stream tenant has done since it was added. */
typedef struct pgw_pq_stream_stats {
    char slot[64];             /**< the slot (a temporary slot: its current
                                    name; "" before the first connect) */
    uint64_t received_lsn;     /**< the furthest WAL position received */
    uint64_t handled_lsn;      /**< the position handled: every transaction
                                    that committed before it is matched */
    uint64_t confirmed_lsn;    /**< the flush position of the last standby
                                    status update sent */
    uint64_t server_lsn;       /**< how far the server had decoded, at the
                                    last frame */
    uint64_t lag_bytes;        /**< server_lsn - handled_lsn, 0 when caught
                                    up */
    int64_t lag_ms;            /**< when behind: server time of the last
                                    frame minus the commit time of the last
                                    handled transaction; 0 when caught up */
    uint64_t messages;         /**< pgoutput messages decoded */
    uint64_t transactions;     /**< transactions decoded */
    uint64_t writes;           /**< write sets handed out */
    uint64_t resets;           /**< resets: new slots and undecodable
                                    transactions */
    uint64_t status_updates;   /**< standby status updates sent */
    size_t peak_txn_bytes;     /**< the most one transaction buffered */
} pgw_pq_stream_stats;

/**
 * Describes a stream tenant's progress.
 *
 * @param out       receives the counters; untouched on failure.
 * @param listener  the listener.
 * @param tenant    a stream tenant.
 * @param err       optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a NULL argument or a tenant of the
 *         triggers; PGW_ENOTFOUND for an unknown tenant.
 */
PGW_API int pgw_pq_listener_stream_stats(pgw_pq_stream_stats *out,
                                         const pgw_pq_listener *listener,
                                         pgw_pq_tenant_id tenant, pgw_error *err);

/**
 * Unregisters a tenant and closes its connection (no event).
 *
 * @param listener  the listener.
 * @param tenant    the tenant.
 * @param err       optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when listener is NULL; PGW_ENOTFOUND for an
 *         unknown tenant.
 */
PGW_API int pgw_pq_listener_remove_tenant(pgw_pq_listener *listener, pgw_pq_tenant_id tenant,
                                          pgw_error *err);

/**
 * Marks a tenant active now: restarts its idle clock and, when it has no
 * connection (inactive, or closed idle or evicted), starts one — closing
 * the least recently touched tenant when max_connections are in use. A
 * tenant waiting to retry after a failure keeps its retry time. Cheap
 * enough to call on every request of the tenant.
 *
 * @param listener  the listener.
 * @param tenant    the tenant.
 * @param err       optional detail on failure.
 * @return PGW_OK (a connection that cannot even be started is reported as
 *         LOST and retried); PGW_EINVAL when listener is NULL;
 *         PGW_ENOTFOUND for an unknown tenant.
 */
PGW_API int pgw_pq_listener_touch(pgw_pq_listener *listener, pgw_pq_tenant_id tenant,
                                  pgw_error *err);

/** What a tenant's connection is doing. */
typedef enum pgw_pq_tenant_state {
    PGW_PQ_TENANT_INACTIVE = 0,  /**< no connection (never touched, or closed) */
    PGW_PQ_TENANT_CONNECTING = 1,/**< connecting, or LISTEN not yet in effect */
    PGW_PQ_TENANT_LISTENING = 2, /**< LISTEN in effect, or streaming: writes flow */
    PGW_PQ_TENANT_RETRYING = 3   /**< waiting to retry after a failure */
} pgw_pq_tenant_state;

/** A snapshot of one tenant. */
typedef struct pgw_pq_tenant_info {
    pgw_pq_tenant_state state; /**< its state */
    int backend_pid;           /**< the LISTEN connection's server process
                                    (PQbackendPID) when LISTENING, else 0 */
    uint64_t connects;         /**< times LISTEN came into effect (each one
                                    reset the scope) */
    uint64_t failures;         /**< lost connections and failed attempts */
    uint64_t notifications;    /**< notifications received (a stream: write
                                    sets handed out) */
    uint32_t retry_ms;         /**< when RETRYING: the delay that was chosen */
} pgw_pq_tenant_info;

/**
 * Describes a tenant.
 *
 * @param out       receives the description; untouched on failure.
 * @param listener  the listener.
 * @param tenant    the tenant.
 * @param err       optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a NULL argument; PGW_ENOTFOUND.
 */
PGW_API int pgw_pq_listener_tenant(pgw_pq_tenant_info *out, const pgw_pq_listener *listener,
                                   pgw_pq_tenant_id tenant, pgw_error *err);

/** Events a socket waits for (bits of pgw_pq_listener_socket.events). */
enum {
    PGW_PQ_WAIT_READ = 1,  /**< readable (POLLIN, EPOLLIN, UV_READABLE) */
    PGW_PQ_WAIT_WRITE = 2  /**< writable (POLLOUT, EPOLLOUT, UV_WRITABLE) */
};

/** A socket to wait on. */
typedef struct pgw_pq_listener_socket {
    int fd;                  /**< the descriptor (PQsocket) */
    unsigned events;         /**< PGW_PQ_WAIT_READ and/or PGW_PQ_WAIT_WRITE */
    pgw_pq_tenant_id tenant; /**< whose connection it is */
} pgw_pq_listener_socket;

/**
 * Lists the sockets to wait on and what for. The set changes whenever a
 * connection opens or closes: get it again after every call that may
 * have done so (process, tick, touch, remove).
 *
 * @param out       receives the number of sockets (which may exceed cap).
 * @param sockets   array of cap entries receiving the first min(cap, *out)
 *                  sockets; may be NULL when cap is 0.
 * @param cap       its capacity.
 * @param listener  the listener.
 * @param err       optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when out or listener is NULL, or sockets is
 *         NULL with cap > 0.
 */
PGW_API int pgw_pq_listener_sockets(size_t *out, pgw_pq_listener_socket *sockets, size_t cap,
                                    const pgw_pq_listener *listener, pgw_error *err);

/**
 * Handles a socket the event loop found ready: advances a connection
 * attempt, or reads notifications (PQconsumeInput, PQnotifies) and matches
 * them. Calling it when nothing is ready is harmless.
 *
 * @param listener  the listener.
 * @param fd        a descriptor from pgw_pq_listener_sockets().
 * @param events    what was ready (PGW_PQ_WAIT_* bits; errors and hang-ups
 *                  may be passed as PGW_PQ_WAIT_READ: reading finds them).
 * @param err       optional detail on failure.
 * @return PGW_OK (connection problems are events, not errors);
 *         PGW_EINVAL when listener is NULL; PGW_ENOTFOUND when no
 *         connection has that descriptor (e.g. it was closed meanwhile).
 */
PGW_API int pgw_pq_listener_process(pgw_pq_listener *listener, int fd, unsigned events,
                                    pgw_error *err);

/**
 * Runs the timers that are due: retries after backoff, connection attempts
 * that took too long, idle closes, and the clock of the listener's index
 * (pgw_index_clock() with the current CLOCK_MONOTONIC milliseconds: the
 * time-dependent runners whose interval passed become dirty, reason CLOCK;
 * index.h, "Time-dependent runners").
 *
 * @param out       receives the milliseconds until the next timer is due
 *                  (call tick again then; the index's next clock deadline,
 *                  pgw_index_clock_next(), is one), or -1 when no timer is
 *                  set; may be NULL.
 * @param listener  the listener.
 * @param err       optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when listener is NULL.
 */
PGW_API int pgw_pq_listener_tick(int64_t *out, pgw_pq_listener *listener, pgw_error *err);

/**
 * A simple blocking loop for small hosts: waits on every socket with
 * poll(), processes what is ready and runs the timers, until `timeout_ms`
 * has passed.
 *
 * @param listener    the listener.
 * @param timeout_ms  how long to run, in milliseconds (0: handle what is
 *                    ready now and return).
 * @param err         optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when listener is NULL or timeout_ms is
 *         negative; PGW_ECONN when poll() fails for another reason than a
 *         signal.
 */
PGW_API int pgw_pq_listener_run(pgw_pq_listener *listener, int timeout_ms, pgw_error *err);

#ifdef __cplusplus
}
#endif

#endif /* PGWITNESS_PGWITNESS_PQ_H */
