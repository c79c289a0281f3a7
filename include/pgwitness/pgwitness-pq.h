/*
 * pgwitness/pgwitness-pq.h — libpgwitness-pq, the thin libpq adapter.
 *
 * The only pgwitness header that includes <libpq-fe.h>. The adapter borrows
 * the caller's PGconn: it never opens (except the listener's own LISTEN
 * connections), closes or resets a connection it was given, and leaves its
 * session settings as it found them.
 *
 * Nothing in the adapter prints; every failure is a status code and a
 * pgw_error. Database errors are PGW_EPG with the server's SQLSTATE in
 * pgw_error.sqlstate and its primary message in pgw_error.message.
 *
 * Link with: cc $(pkg-config --cflags --libs pgwitness-pq)
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
#define PGW_PQ_SCHEMA_VERSION 1

/**
 * Creates or upgrades the library's schema: the snapshots table, the drop
 * audit table and their indexes, through versioned migrations recorded in
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

/** Version of pgw_pq_filter understood by this release. */
#define PGW_PQ_FILTER_VERSION 1

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
} pgw_pq_filter;

/** Initialiser for pgw_pq_filter: every stored snapshot, oldest first. */
#define PGW_PQ_FILTER_INIT \
    { PGW_PQ_FILTER_VERSION, 0, NULL, NULL, NULL, 0, false, 0, false, 0, 0, false }

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
 * @return PGW_OK; PGW_EINVAL (bad filter: only one of schema/table);
 *         PGW_ENOTFOUND when the schema is not installed; PGW_EPARSE when a
 *         stored document does not decode (err->message names its id);
 *         PGW_EPG; PGW_ECONN; PGW_ENOMEM.
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
 * Order: snapshot — inside a SAVEPOINT of the drop's transaction, with
 * its own short statement_timeout and lock_timeout (restored afterwards),
 * taking the table's ACCESS EXCLUSIVE lock first so that what is captured
 * is what is dropped — then store it, then DROP TABLE IF EXISTS, then the
 * audit row (also under a savepoint). Any failure of the snapshot — the
 * table already gone, a permission error, a timeout, the snapshots table
 * missing or refusing the insert, allocation failure — rolls back to the
 * savepoint, and the drop still happens; the result says why there is no
 * snapshot and the audit row keeps the reason. Snapshot failure never
 * prevents the drop.
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
 *         other objects depend on the table: SQLSTATE 2BP01) — then an own
 *         transaction is rolled back and the caller's is left aborted;
 *         PGW_ECONN.
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

#ifdef __cplusplus
}
#endif

#endif /* PGWITNESS_PGWITNESS_PQ_H */
