/*
 * pgwitness/pgoutput.h — the second write source, pure: logical decoding
 * with PostgreSQL's pgoutput plugin, turned into the same write sets
 * (inval.h) that the statement triggers give, with the same text forms.
 *
 * A logical replication stream arrives as CopyData messages of the
 * streaming replication protocol (PostgreSQL documentation, "Streaming
 * Replication Protocol", START_REPLICATION ... LOGICAL): XLogData ('w'),
 * whose data is one pgoutput message, and primary keepalives ('k'). The
 * client answers with standby status updates ('r'). pgw_replication_parse()
 * and pgw_replication_status() read and write those frames.
 *
 * pgw_pgoutput decodes the pgoutput messages themselves (PostgreSQL
 * documentation, "Logical Replication Message Formats"), protocol version 1
 * without streaming of in-progress transactions: Begin, Commit, Origin,
 * Relation, Type, Insert, Update, Delete, Truncate and Message
 * (pg_logical_emit_message). pgoutput sends a transaction only once it has
 * committed, between its Begin and its Commit; the decoder buffers its
 * changes and hands out their write sets at the Commit, so nothing can mark
 * a runner dirty before its transaction commits.
 *
 * Write sets. Each (transaction, table, operation) gives one write set, or
 * several of at most max_ids_per_write IDs each, in the order their table
 * and operation first appeared in the transaction, transactions in commit
 * order. Each carries its transaction's commit LSN (pgw_write_lsn()). Rows
 * are reported under the *targets* the host configured for their relation
 * (pgw_pgoutput_add_target(): the table name subscriptions read, its
 * primary key, the value columns): a partition or an inheritance child can
 * be reported as its watched parent. A relation with no target is reported
 * under its own name with unknown IDs.
 *
 * What a write set knows depends on the relation's replica identity
 * (PostgreSQL documentation, ALTER TABLE, REPLICA IDENTITY):
 *  - IDs: the target's primary key, read from the new tuple (insert,
 *    update) or the old one (delete; the old key of an update that changed
 *    it). Never from the Relation message's key flags: under FULL every
 *    column is flagged.
 *  - An update with a full old tuple ('O' of a relation declared with
 *    pgw_pgoutput_set_full_rows()): the changed columns are those whose
 *    old and new text differ; a row whose every column prints the same is not listed (as
 *    the triggers do for UPDATE t SET x = x). Old and new values of the
 *    value columns are known.
 *  - An update without an old tuple (DEFAULT, key unchanged): the changed
 *    columns are unknown; new values are known.
 *  - A key-only old tuple ('K': DEFAULT or USING INDEX, on a key change or
 *    a delete) carries the key columns only. Its other columns are sent as
 *    'n' placeholders, which mean *unknown*, never NULL: taking them for
 *    NULL old values would make a value-based skip unsound.
 *  - The kind byte alone cannot be trusted: pgoutput marks an old tuple
 *    'O' by the replica identity of the relation it *reports* (with
 *    publish_via_partition_root, the partitioned table), while the tuple
 *    holds what the partition that was written logged — under a FULL
 *    partitioned table, a partition that is not FULL itself sends its key
 *    and placeholders marked 'O'. So an 'O' tuple counts as a full row only
 *    for a relation the host declared with pgw_pgoutput_set_full_rows();
 *    for every other relation it is read as a key-only tuple.
 *  - An unchanged TOASTed value ('u') is known not to have changed; its
 *    value is taken from the old tuple when there is one, and never
 *    invented.
 *  - An update that changed a row's key is a write set of its own
 *    (pk_changed): the old key with its old values, absent after; the new
 *    key with its new values, absent before; changed columns unknown.
 *  - Truncate: one truncate write set per target of each relation.
 *  - A definition change (DDL): pgoutput sends a relation's Relation
 *    message before its first change on a connection, and again after
 *    anything invalidated the relation (an ALTER TABLE among others). When
 *    one arrives for a relation already known with another definition —
 *    other columns (count, order, names), other types or type modifiers,
 *    or another name or schema — the decoder gives one ddl write set
 *    (PGW_OP_DDL: every subscription reading the table refreshes, reason
 *    DDL) per target of the relation, or under its own name when it has
 *    none, as its rows would be reported (a renamed relation with targets
 *    also gives one under its new own name: its targets keep the names the
 *    host gave them, until the host gives new ones); at the transaction's Commit with
 *    its commit LSN, before the transaction's other write sets for that
 *    table (one per table and transaction); outside a transaction, which
 *    pgoutput never does, at once with LSN 0 (a Relation message carries
 *    no position). A change of the replica identity alone (the relation's
 *    setting, the columns' key flags) is not a definition change: it
 *    changes what the stream can say about old rows, not what a query
 *    returns. The cache takes the new definition either way.
 *  - What this cannot see. pgoutput sends nothing for DDL itself (nor the
 *    rows a table rewrite writes), only the Relation message before the
 *    table's next change: a DDL followed by no write to the table (DROP
 *    COLUMN, ALTER COLUMN ... TYPE, RENAME, until the next INSERT, UPDATE,
 *    DELETE or TRUNCATE of it) reaches the stream only when someone
 *    announces it, as a logical message with the prefix message_prefix and
 *    the ddl payload {"version":1,"schema":S,"table":T,"op":"ddl"}
 *    (docs/wire.md), which the message path below decodes (transactional:
 *    at its commit; not: at once). DDL that leaves the name, columns and
 *    types as they are (a default, a constraint, an index, a trigger, a
 *    row-level security policy) gives no other Relation message at all;
 *    of those, what can change a query's result (a policy) is seen only
 *    when announced. A relation is compared with what the decoder last
 *    knew of it: a new connection (pgw_pgoutput_restart()) compares with
 *    the previous one's, but a decoder created afresh (a restarted host)
 *    knows no relation, and the first Relation message of each is no
 *    change; a DDL made while no decoder lived is then seen only by
 *    comparing the host's own snapshots (a restarted host reruns its
 *    subscriptions anyway).
 *  - A Message whose prefix is message_prefix carries a notification
 *    payload (payload.h, docs/wire.md) and becomes the write set
 *    pgw_payload_decode() gives (a fallback for a payload that is not
 *    faithful); transactional messages are handed out at their commit,
 *    others at once. A transactional truncate or ddl message for a table
 *    the same transaction already truncates (or already announced) adds
 *    nothing: TRUNCATE of a partitioned root is the root's Truncate and a
 *    message from each partition's TRUNCATE trigger naming the root, and
 *    every ALTER of a watched table is announced. Messages with other
 *    prefixes are ignored.
 *
 * Bounded memory. A transaction's buffered rows are counted in bytes; past
 * max_txn_bytes its write sets degrade to one per target and operation with
 * unknown IDs (the changed columns stay known where they were), and further
 * rows are counted, not kept: memory stays bounded whatever the
 * transaction's size, and every subscription reading those tables still
 * refreshes. A committed transaction's write sets are built one at a time
 * as they are taken, so the decoder holds about max_txn_bytes and one write
 * set at a time. There is no 500-ID cap: no NOTIFY budget applies here.
 *
 * Bad input. A malformed message gives PGW_EPARSE with a message naming the
 * message type and the byte offset (err->message), and never crashes (a
 * fuzz target runs the decoder, tests/fuzz/fuzz_pgoutput.c). A message that
 * cannot be decoded, or cannot be kept for lack of memory, spoils its
 * transaction: the rest of its changes are passed over, and at its Commit
 * the decoder hands out a scope reset instead of its write sets (the
 * transaction is already committed, so a reset then covers it). Outside a
 * transaction, the reset is handed out at once.
 *
 * Memory through the allocator hook. Threading: one thread at a time per
 * decoder; write sets handed out are independent objects.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_PGOUTPUT_H
#define PGWITNESS_PGOUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgwitness/common.h"
#include "pgwitness/inval.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* LSNs                                                                 */

/** Room for an LSN as text, "XXXXXXXX/XXXXXXXX" and a NUL. */
#define PGW_LSN_TEXT_SIZE 18

/**
 * Formats a log sequence number as PostgreSQL prints a pg_lsn: two
 * hexadecimal halves in upper case without leading zeros, separated by a
 * slash ("0/16B3748"). PostgreSQL documentation, "pg_lsn Type".
 *
 * @param out  receives the NUL-terminated text.
 * @param lsn  the position, in bytes of WAL.
 * @return PGW_OK; PGW_EINVAL when out is NULL.
 */
PGW_API int pgw_lsn_format(char out[PGW_LSN_TEXT_SIZE], uint64_t lsn);

/**
 * Reads an LSN in pg_lsn's text form: 1 to 8 hexadecimal digits, a slash,
 * 1 to 8 hexadecimal digits (either case), nothing else.
 *
 * @param out   receives the position; untouched on failure.
 * @param text  NUL-terminated text.
 * @param err   optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when out or text is NULL; PGW_EPARSE when the
 *         text is not an LSN (err->message quotes it).
 */
PGW_API int pgw_lsn_parse(uint64_t *out, const char *text, pgw_error *err);

/* ------------------------------------------------------------------ */
/* the streaming replication protocol's CopyData frames                 */

/** Microseconds between the Unix epoch and PostgreSQL's (2000-01-01 UTC),
 *  the origin of the protocol's timestamps. */
#define PGW_PG_EPOCH_OFFSET_USEC INT64_C(946684800000000)

/** The kind of a frame the server sends. */
typedef enum pgw_replication_kind {
    PGW_REPLICATION_XLOGDATA = 'w',  /**< XLogData: WAL data (a pgoutput message) */
    PGW_REPLICATION_KEEPALIVE = 'k'  /**< Primary keepalive message */
} pgw_replication_kind;

/** A frame the server sent, as pgw_replication_parse() read it. */
typedef struct pgw_replication_frame {
    pgw_replication_kind kind; /**< which frame */
    /** XLogData: the WAL position its data starts at; keepalive: 0. */
    uint64_t wal_start;
    /** The server's end of WAL as the frame states it (for a logical
     *  stream: how far it has decoded and sent). */
    uint64_t wal_end;
    /** The server's clock at transmission, in microseconds since
     *  2000-01-01 UTC. */
    int64_t send_time;
    /** Keepalive: the server asks for a status update at once. */
    bool reply_requested;
    /** XLogData: the data (borrowed from the parsed buffer); else NULL. */
    const unsigned char *data;
    /** Its length in bytes; 0 for a keepalive. */
    size_t len;
} pgw_replication_frame;

/**
 * Reads one CopyData message of a replication stream: XLogData ('w': Int64
 * start, Int64 end, Int64 send time, then the data) or a primary keepalive
 * ('k': Int64 end, Int64 send time, Byte1 reply requested). PostgreSQL
 * documentation, "Streaming Replication Protocol", START_REPLICATION.
 *
 * @param out  receives the frame; its data points into buf. Untouched on
 *             failure.
 * @param buf  the CopyData message's contents (as PQgetCopyData gives it).
 * @param len  their length in bytes.
 * @param err  optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when out is NULL or buf is NULL with len > 0;
 *         PGW_EPARSE for an empty, short or unknown frame (the message names
 *         the frame and the byte offset).
 */
PGW_API int pgw_replication_parse(pgw_replication_frame *out, const void *buf, size_t len,
                                  pgw_error *err);

/** Size in bytes of a standby status update. */
#define PGW_REPLICATION_STATUS_SIZE 34

/**
 * Writes a standby status update ('r'): the positions written, flushed and
 * applied (each the first byte not yet handled: "the location of the last
 * WAL byte + 1"), the client's clock, and whether the server should reply
 * at once. For a logical slot the flushed position is what the slot
 * confirms (confirmed_flush_lsn): transactions that committed before it are
 * not sent again.
 *
 * @param out              receives the 34 bytes to send with PQputCopyData.
 * @param written          position received.
 * @param flushed          position confirmed as handled.
 * @param applied          position applied (pgwitness passes `flushed`).
 * @param now              the client's clock, microseconds since 2000-01-01
 *                         UTC (PGW_PG_EPOCH_OFFSET_USEC from Unix time).
 * @param reply_requested  ask the server for a keepalive at once.
 * @return PGW_OK; PGW_EINVAL when out is NULL.
 */
PGW_API int pgw_replication_status(unsigned char out[PGW_REPLICATION_STATUS_SIZE],
                                   uint64_t written, uint64_t flushed, uint64_t applied,
                                   int64_t now, bool reply_requested);

/* ------------------------------------------------------------------ */
/* the pgoutput decoder                                                 */

/** A pgoutput decoder (opaque): relation cache, targets, the transaction
 *  in progress, and the write sets ready to be taken. */
typedef struct pgw_pgoutput pgw_pgoutput;

/** The prefix of the logical messages whose content is a notification
 *  payload, unless the options name another. */
#define PGW_PGOUTPUT_MESSAGE_PREFIX "pgwitness"

/** Version of pgw_pgoutput_options understood by this release. */
#define PGW_PGOUTPUT_OPTIONS_VERSION 1

/** Options of pgw_pgoutput_new(). */
typedef struct pgw_pgoutput_options {
    /** Must be PGW_PGOUTPUT_OPTIONS_VERSION. */
    unsigned int version;
    /** Most IDs in one write set, >= 1 (default 1000): a transaction's rows
     *  of one table and operation are cut into write sets of this many. */
    size_t max_ids_per_write;
    /** Bytes of buffered rows one transaction may hold, >= 1024 (default
     *  64 MiB); past it its write sets degrade to unknown IDs. */
    size_t max_txn_bytes;
    /** The prefix of logical messages read as notification payloads, 1..63
     *  bytes of UTF-8; NULL for PGW_PGOUTPUT_MESSAGE_PREFIX. Copied. */
    const char *message_prefix;
} pgw_pgoutput_options;

/** Initialiser for pgw_pgoutput_options: the documented defaults. */
#define PGW_PGOUTPUT_OPTIONS_INIT \
    { PGW_PGOUTPUT_OPTIONS_VERSION, 1000, (size_t)64 << 20, NULL }

/**
 * Creates a decoder without targets, outside any transaction.
 *
 * @param out    receives the decoder; caller frees with pgw_pgoutput_free().
 *               Untouched on failure.
 * @param scope  the scope of every write set it gives (copied): the tenant
 *               database the stream reads.
 * @param opts   options; NULL for PGW_PGOUTPUT_OPTIONS_INIT.
 * @param err    optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a NULL out or scope, a scope string that is
 *         not UTF-8, or an option out of range or of another version;
 *         PGW_ENOMEM.
 */
PGW_API int pgw_pgoutput_new(pgw_pgoutput **out, const pgw_scope *scope,
                             const pgw_pgoutput_options *opts, pgw_error *err);

/**
 * Releases a decoder, the transaction it was buffering, and the write sets
 * nobody took.
 * @param dec  the decoder, or NULL (ignored).
 */
PGW_API void pgw_pgoutput_free(pgw_pgoutput *dec);

/** Most targets one relation may have. */
#define PGW_PGOUTPUT_MAX_TARGETS 8

/**
 * Reports the rows of a relation as writes to a table: the relation itself,
 * or its watched partitioned table or inheritance parent, whose queries see
 * its rows. A relation may have several targets (an inheritance child that
 * is watched itself and through its parent), each given one write set per
 * change group. Takes effect for the next transaction.
 *
 * @param dec            the decoder, outside a transaction.
 * @param relid          the relation's OID (pg_class.oid), as Relation and
 *                       change messages name it.
 * @param schema         the target's schema (copied).
 * @param table          the target's name (copied).
 * @param key_columns    the target's primary key, n_key column names in
 *                       key order (copied); the relation must have columns
 *                       of these names. NULL with 0 for a table without a
 *                       primary key: its IDs are unknown.
 * @param n_key          1..PGW_ROWID_MAX_PARTS, or 0.
 * @param value_columns  columns whose old and new values the write sets
 *                       carry (inval.h, pgw_write_set_value()), typically
 *                       the columns subscriptions filter on with eq/in
 *                       (copied); names the relation lacks are skipped.
 *                       NULL with 0 for none.
 * @param n_values       their number, 0..64.
 * @param err            optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a NULL decoder, relid 0, an empty, NULL or
 *         non-UTF-8 name, a duplicate column name, or a count out of range;
 *         PGW_ESTATE inside a transaction; PGW_EEXISTS when the relation
 *         already has this target; PGW_ELIMIT when it has
 *         PGW_PGOUTPUT_MAX_TARGETS; PGW_ENOMEM (nothing changed).
 */
PGW_API int pgw_pgoutput_add_target(pgw_pgoutput *dec, uint32_t relid, const char *schema,
                                    const char *table, const char *const *key_columns,
                                    size_t n_key, const char *const *value_columns,
                                    size_t n_values, pgw_error *err);

/**
 * Declares whether the old tuples the server sends for a relation are full
 * rows: true when the relation has REPLICA IDENTITY FULL and, for a
 * partitioned table published via its root, so has every partition under
 * it (PostgreSQL documentation, ALTER TABLE, REPLICA IDENTITY; "Logical
 * Replication Message Formats", Update and Delete). Only then does an 'O'
 * old tuple give changed columns and old values; otherwise it is read as a
 * key-only tuple, its 'n' columns unknown (see above). Relations not
 * declared are not full. Takes effect for the next transaction.
 *
 * @param dec    the decoder, outside a transaction.
 * @param relid  the relation's OID, as change messages name it.
 * @param full   whether its old tuples are full rows.
 * @param err    optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a NULL decoder or relid 0; PGW_ESTATE inside
 *         a transaction; PGW_ENOMEM (nothing changed).
 */
PGW_API int pgw_pgoutput_set_full_rows(pgw_pgoutput *dec, uint32_t relid, bool full,
                                       pgw_error *err);

/**
 * Declares a relation's definition as the host read it from the catalog
 * (pg_attribute: the columns with attnum > 0, not dropped and not
 * generated, in attnum order, with atttypid and atttypmod), for a relation
 * the decoder has seen no Relation message of. PostgreSQL sends a
 * relation's Relation message only before its first change on a
 * connection (documentation, "Logical Streaming Replication Protocol",
 * Relation), so a definition change made after the host read its
 * configuration and before that first change would otherwise pass
 * unseen: the first Relation message is compared with this declaration
 * like any later one, and a difference gives the ddl write set (see "A
 * definition change" above). A declared column list the publication
 * narrows gives a difference too (a refresh too many, never one too few).
 * A relation the decoder knows already is left as it is. Takes effect at
 * once; outside a transaction.
 *
 * @param dec      the decoder.
 * @param relid    the relation's OID.
 * @param schema   its schema (copied; "pg_catalog" is compared as the
 *                 protocol's "").
 * @param table    its name (copied).
 * @param ncols    the number of columns, 0..65535.
 * @param names    ncols column names (copied).
 * @param typoids  ncols type OIDs.
 * @param typmods  ncols type modifiers (-1: none).
 * @param err      optional detail on failure.
 * @return PGW_OK; PGW_EEXISTS when the decoder knows the relation already
 *         (nothing changed); PGW_EINVAL on a NULL decoder, name or list,
 *         relid 0, or too many columns; PGW_ESTATE inside a transaction;
 *         PGW_ENOMEM (nothing changed).
 */
PGW_API int pgw_pgoutput_expect_relation(pgw_pgoutput *dec, uint32_t relid, const char *schema,
                                         const char *table, size_t ncols,
                                         const char *const *names, const uint32_t *typoids,
                                         const int32_t *typmods, pgw_error *err);

/**
 * The name of a relation as its last Relation message (or
 * pgw_pgoutput_expect_relation()) gave it (PostgreSQL
 * documentation, "Logical Replication Message Formats", Relation: its
 * namespace, "" for pg_catalog, and its name). A host compares it with the
 * name it configured targets under to tell that a relation was renamed or
 * moved since (its targets are then stale: give new ones).
 *
 * @param schema  receives the schema (borrowed from the decoder: valid
 *                until the next Relation message of this relation, or
 *                pgw_pgoutput_free()); untouched on failure.
 * @param table   receives the name, borrowed likewise.
 * @param dec     the decoder.
 * @param relid   the relation's OID.
 * @return PGW_OK; PGW_EINVAL when an argument is NULL or relid is 0;
 *         PGW_ENOTFOUND when no Relation message named relid yet.
 */
PGW_API int pgw_pgoutput_relation_name(const char **schema, const char **table,
                                       const pgw_pgoutput *dec, uint32_t relid);

/**
 * Forgets every target and every relation declared full
 * (pgw_pgoutput_set_full_rows(); the relation cache stays), so that a new
 * configuration can be given after the publication changed.
 *
 * @param dec  the decoder, outside a transaction.
 * @param err  optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when dec is NULL; PGW_ESTATE inside a
 *         transaction.
 */
PGW_API int pgw_pgoutput_clear_targets(pgw_pgoutput *dec, pgw_error *err);

/**
 * Starts over for a new connection: drops the transaction in progress,
 * whose Commit the old connection never delivered (a resumed slot sends
 * that transaction again), and keeps the relations it knew only for
 * comparison: a change needs the new connection's Relation message of its
 * relation first (a new walsender sends every Relation message again),
 * and that message is a definition change (a ddl write set, above) when
 * it differs from what the old connection last sent, or when the dropped
 * transaction had changed the relation's definition (its ddl write set
 * was dropped with it). Targets, and write sets not yet taken, stay.
 *
 * @param dec  the decoder, or NULL (ignored).
 */
PGW_API void pgw_pgoutput_restart(pgw_pgoutput *dec);

/** What one decoded message was, as pgw_pgoutput_decode() reports it. */
typedef struct pgw_pgoutput_message {
    /** The message's type byte: 'B', 'C', 'O', 'R', 'Y', 'I', 'U', 'D',
     *  'T' or 'M'. */
    char type;
    /** Begin: the transaction's final (commit) LSN; Commit: its commit LSN;
     *  Message: the message's LSN; else 0. */
    uint64_t lsn;
    /** Commit: the end of the transaction's commit record, the position to
     *  confirm once its write sets are handled; else 0. */
    uint64_t end_lsn;
    /** Begin, Commit: the commit time, microseconds since 2000-01-01 UTC;
     *  else 0. */
    int64_t commit_time;
    /** Begin: the transaction's ID; else 0. */
    uint32_t xid;
    /** Relation, Insert, Update, Delete: the relation's OID; else 0. */
    uint32_t relid;
    /** Relation: true when the relation was already known with another
     *  definition (an ALTER TABLE since its last Relation message; see
     *  "A definition change" above), which gives a ddl write set. */
    bool relation_changed;
    /** Message: its prefix (NUL-terminated) and content, borrowed from the
     *  decoded bytes (valid while they are), and whether it is
     *  transactional; else NULL, NULL, 0, false. Every prefix is
     *  reported, whether or not it is message_prefix. */
    const char *prefix;
    const void *content;
    size_t content_len;
    bool transactional;
    /** Write sets ready to take after this message (pgw_pgoutput_next()). */
    size_t ready;
} pgw_pgoutput_message;

/**
 * Decodes one pgoutput message: the data of one XLogData frame.
 *
 * @param out  receives what the message was; may be NULL; untouched on
 *             failure (a failure can still make a reset ready: take what
 *             pgw_pgoutput_next() gives after every call).
 * @param dec  the decoder.
 * @param msg  the message bytes (borrowed for the call).
 * @param len  their length.
 * @param err  optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when dec is NULL or msg is NULL with len > 0;
 *         PGW_EPARSE for a malformed or unexpected message (a change outside
 *         a transaction, a Begin inside one, an unknown relation, a message
 *         of another protocol version): err->message names the message
 *         type and the byte offset, and the transaction is spoiled (see
 *         above); PGW_ENOMEM (the transaction is spoiled likewise).
 */
PGW_API int pgw_pgoutput_decode(pgw_pgoutput_message *out, pgw_pgoutput *dec, const void *msg,
                                size_t len, pgw_error *err);

/** A change taken from the decoder. */
typedef struct pgw_pgoutput_change {
    /** A write set (the caller owns it: pgw_write_free()), or NULL when
     *  reset is true. */
    pgw_write *write;
    /** True when the decoder could not give a transaction's write sets
     *  (a malformed message, or memory ran out): reset the scope, which
     *  pgw_index_reset_scope() does without allocating. */
    bool reset;
    /** The commit LSN of its transaction; for a message outside a
     *  transaction, the message's LSN (0 for a Relation message's ddl). */
    uint64_t lsn;
} pgw_pgoutput_change;

/**
 * Takes the oldest change ready: the write sets of committed transactions,
 * in commit order and, within one, in the order their groups first
 * appeared. The write sets of the last committed transaction are built as
 * they are taken, so that its buffered rows and all its write sets are not
 * in memory at once (take them before decoding the next Begin, or they are
 * built all at once then); a write set that cannot be built for lack of
 * memory is handed out as a reset instead, which stands for the rest of
 * its transaction.
 *
 * @param out  receives the change; untouched when none is ready.
 * @param dec  the decoder.
 * @return PGW_OK; PGW_ENOTFOUND when none is ready; PGW_EINVAL when an
 *         argument is NULL.
 */
PGW_API int pgw_pgoutput_next(pgw_pgoutput_change *out, pgw_pgoutput *dec);

/**
 * Whether the decoder is between a Begin and its Commit.
 * @param dec  the decoder; NULL gives false.
 */
PGW_API bool pgw_pgoutput_in_transaction(const pgw_pgoutput *dec);

/** Counters of a decoder since it was created. */
typedef struct pgw_pgoutput_stats {
    uint64_t messages;      /**< messages decoded (malformed ones included) */
    uint64_t transactions;  /**< Commits */
    uint64_t rows;          /**< rows of Insert, Update and Delete messages */
    uint64_t writes;        /**< write sets made ready */
    uint64_t degraded;      /**< transactions that passed max_txn_bytes */
    uint64_t resets;        /**< resets made ready (spoiled transactions) */
    uint64_t errors;        /**< messages that failed to decode */
    size_t txn_bytes;       /**< bytes the transaction in progress buffers */
    size_t peak_txn_bytes;  /**< the most any transaction buffered */
} pgw_pgoutput_stats;

/**
 * Reads a decoder's counters.
 * @param out  receives them.
 * @param dec  the decoder.
 * @return PGW_OK; PGW_EINVAL when an argument is NULL.
 */
PGW_API int pgw_pgoutput_stats_get(pgw_pgoutput_stats *out, const pgw_pgoutput *dec);

#ifdef __cplusplus
}
#endif

#endif /* PGWITNESS_PGOUTPUT_H */
