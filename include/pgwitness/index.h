/*
 * pgwitness/index.h — the tenant-scoped reverse index of subscriptions.
 *
 * Maps (scope, table) to the runners that read it, so that a write visits
 * only candidates that can match; decides each candidate with the rules of
 * pgw_decide() (inval.h) and marks the affected runners dirty.
 *
 * Runners and subscriptions. Identical subscriptions — same scope, same
 * query key, same declaration (result IDs aside) — share one runner:
 * pgw_index_register() returns the existing runner and counts a reference;
 * pgw_index_unregister() drops one. The runner is what the host reruns.
 *
 * Where a write goes. A (scope, table) bucket holds, for each table a
 * runner reads, one posting in a group keyed by the runner's most selective
 * `eq`/`in` filter with declared values (if any; else its first `range`
 * filter, by column and comparison type) and by whether the runner tracks
 * its result IDs. A write with known rows visits:
 *  - in a range group, only the runners whose range may hold one of the
 *    write's old/new values (each posting keeps 16-bit keys of its bounds
 *    that never contradict the type's order, so a value whose key lies
 *    outside them lies outside the range), when those values are known for
 *    every row on every side it exists and parse under the type;
 *  - in a group with a value filter, only the runners whose filter values
 *    the write's old/new values can match (when those values are known for
 *    every row on every side that matters) — an equality index; in a group
 *    of runners that track their result IDs with no offset, an update that
 *    keeps row identity and changes the filtered column (changed columns
 *    known) matches the new values only: a runner that only an old value
 *    matches refreshes only if its result holds the row (rule 13), and
 *    those runners are found through the result-ID index;
 *  - nothing of a group of runners that track result IDs when no row can
 *    change their membership (an update of columns none of them filters or
 *    sorts on, a delete with no offset) — except the runners whose result
 *    holds a written ID, found through the result-ID index;
 *  - every runner of the other groups.
 * A write with unknown rows, a truncate, a ddl or an unknown write visits
 * the bucket's runners (a ddl marks every declared one, reason DDL); a scope reset marks every runner of the scope. A write
 * never touches buckets of other scopes or tables: its cost grows with the
 * IDs it carries and the candidates it hits, not with the index's size.
 * The candidate set is exact: every runner pgw_decide() would refresh is
 * visited (tests/unit/check_index.c compares the two on random workloads).
 *
 * The rerun protocol (coalescing). A runner is CLEAN, DIRTY (queued,
 * reported once by pgw_index_pop_dirty()), RUNNING (taken by the host) or
 * RUNNING_DIRTY (hit again while running). Writes that hit a DIRTY runner are
 * coalesced. A runner is decided with unknown result IDs while it runs, and
 * a hit while running queues it again when the host acknowledges the rerun —
 * a write that committed after the rerun's snapshot is never lost:
 *
 *   pgw_index_match(&n, idx, write, &err);          // marks runners dirty
 *   while (pgw_index_pop_dirty(&d, idx) == PGW_OK) { // DIRTY → RUNNING
 *       rerun d.runner's query (take the snapshot after the pop);
 *       if (its result is a list of rows of the first declared table)
 *           pgw_index_ack(idx, d.runner, ids, n_ids, &err); // → CLEAN or DIRTY
 *       else // an aggregate such as count(*), or rows of another table
 *           pgw_index_ack_unknown(idx, d.runner, &err);
 *       // or, for a windowed query, with the window's bounds:
 *       //   pgw_index_ack_window(idx, d.runner, ids or NULL, n_ids, &bounds, &err);
 *   }
 *
 * Result IDs are a promise: the rows of the first table in the result are
 * exactly these (inval.h, "result_ids"), and the rules skip writes to other
 * rows on that promise. An aggregate's result is not a list of rows:
 * declare it so (pgw_deps_set_result_kind(), PGW_RESULT_AGGREGATE) and the
 * index ignores its IDs at registration and at every acknowledgement. With
 * the kind unspecified, a first table that reads no column, as count(*)
 * does, is an aggregate, and one that reads a column a list: acked with IDs
 * (or none, n_ids 0, "the result is empty"), a sum(x) subscription of
 * unspecified kind would skip a delete that changes its sum. Window bounds
 * are a promise too (pgw_index_ack_window()): the window's first and last
 * rows have these sort-key values.
 *
 * Time-dependent runners. A query that reads the clock (now(),
 * current_date, ...: pgw_deps_set_time_dependent(), inval.h) changes with
 * no write. The core reads no clock: the host drives time with
 * pgw_index_clock(idx, now_ms), in milliseconds of a monotonic clock that
 * never goes back (CLOCK_MONOTONIC; POSIX clock_gettime()), and the index
 * marks each time-dependent runner whose result is older than the clock
 * interval (pgw_index_options.clock_interval_ms, default
 * PGW_INDEX_CLOCK_INTERVAL_MS) dirty with reason CLOCK. Precisely:
 *  - the index's time is the latest now_ms passed to pgw_index_clock()
 *    (none before the first call);
 *  - a runner's base time is the index's time when it was registered (as
 *    a new runner: joining a shared one keeps its base) and whenever a
 *    rerun of it starts (pgw_index_pop_dirty(), pgw_index_begin()); an
 *    acknowledgement keeps the base of the rerun's start;
 *  - pgw_index_clock(now_ms) marks every time-dependent runner that is
 *    CLEAN (→ DIRTY) or RUNNING (→ RUNNING_DIRTY, as a write would) and
 *    whose base is unknown (taken before the first call) or at most
 *    now_ms - clock_interval_ms: with interval 1000 and base 5000, the call
 *    at 5999 marks nothing, the call at 6000 marks it;
 *  - a runner already DIRTY or RUNNING_DIRTY is not marked (it reruns
 *    anyway, and its rerun's start sets a new base); a runner that is not
 *    time-dependent is never marked by the clock; writes are matched and
 *    decided as without the flag (a write's reason wins when it marks
 *    first).
 * Since a base is the index's time, not the true time the host took its
 * snapshot, it is never later than that: a runner is marked at most
 * clock_interval_ms after its result was taken, possibly earlier (by the
 * time since the previous pgw_index_clock() call, at most). Call
 * pgw_index_clock() once before registering and before taking dirty runners
 * to keep marks on time; pgw_index_clock_next() says when to call it next,
 * so a host can sleep until then or until a notification. Cost: a call
 * visits only the runners it marks, plus one (the waiting runners are kept
 * in the order of their base times), so O(marked + 1) and never O(runners);
 * pgw_index_clock_next() is O(1). Neither allocates.
 *
 * Memory: one allocation per runner (its state, its compiled declaration
 * with names interned and shared by all runners, its result IDs at 4 bytes
 * each), one per (scope, table) bucket (its postings, 16 bytes each, and an
 * open-addressing table of 8-byte slots, load 78–87.5%, for its result IDs
 * and the values of large groups), and maps by name, scope, identity and
 * bucket. tests/bench/bench_index reports bytes per subscription.
 *
 * Latency and huge pages. A match on a large index is bound by memory
 * latency: finding the write's bucket, reading the bucket and reading its
 * candidates' runners are three dependent trips to memory (the loads of
 * each trip overlap), and with 4 KiB pages most of them also miss the TLB.
 * All of the index's memory comes through the allocator (pgw_set_allocator,
 * common.h), so a host with a large index backs it with transparent huge
 * pages by its allocator's means: with glibc 2.35 or later, start the
 * process with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (Linux, with
 * /sys/kernel/mm/transparent_hugepage/enabled at madvise or always), or
 * install an allocator with huge-page arenas. tests/bench/bench_index
 * measures a round trip to memory and matches with and without them, side
 * by side. A host that receives writes in bursts (several notifications
 * read at once) matches them with pgw_index_match_batch(), which overlaps
 * the trips to memory of the writes in the batch.
 *
 * Threading: one thread at a time per index. pgw_index_match(),
 * pgw_index_match_batch(), pgw_index_reset_scope(), pgw_index_pop_dirty(),
 * pgw_index_begin(), pgw_index_ack_unknown(), pgw_index_clock(),
 * pgw_index_clock_next() and pgw_index_unregister() never allocate, so they cannot fail for lack of memory: a notification
 * that reached the index is never dropped.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_INDEX_H
#define PGWITNESS_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgwitness/common.h"
#include "pgwitness/inval.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A reverse index of subscriptions (opaque). */
typedef struct pgw_index pgw_index;

/** Identifies a runner within its index; never 0. Stale identifiers (of
 *  unregistered runners) are detected and refused with PGW_ENOTFOUND. */
typedef uint64_t pgw_runner_id;

/** Version of pgw_index_options understood by this release: 2 added
 *  clock_interval_ms. pgw_index_new() accepts versions 1 and 2 (version 1
 *  reads only the members it had, and uses the default interval). */
#define PGW_INDEX_OPTIONS_VERSION 2

/** The default clock interval, in milliseconds: a time-dependent runner's
 *  result is at most this old when it is marked (pgw_index_clock()). */
#define PGW_INDEX_CLOCK_INTERVAL_MS 1000

/** Options of pgw_index_new(). NULL means PGW_INDEX_OPTIONS_INIT. */
typedef struct pgw_index_options {
    /** PGW_INDEX_OPTIONS_VERSION (or 1). */
    unsigned int version;
    /** Runners to size the tables for up front (0: grow as needed). */
    size_t expected_runners;
    /** (Version 2.) The age, in milliseconds (>= 1), at which the result of
     *  a time-dependent runner is refreshed (reason CLOCK): the staleness
     *  the host accepts for queries that read the clock. */
    int64_t clock_interval_ms;
} pgw_index_options;

/** Initialiser for pgw_index_options. */
#define PGW_INDEX_OPTIONS_INIT { PGW_INDEX_OPTIONS_VERSION, 0, PGW_INDEX_CLOCK_INTERVAL_MS }

/** The state of a runner (see the rerun protocol above). */
typedef enum pgw_runner_state {
    PGW_RUNNER_CLEAN = 0,        /**< up to date */
    PGW_RUNNER_DIRTY = 1,        /**< queued for a rerun, not yet taken */
    PGW_RUNNER_RUNNING = 2,      /**< taken by the host, not yet acknowledged */
    PGW_RUNNER_RUNNING_DIRTY = 3 /**< hit again while running: queued again on ack */
} pgw_runner_state;

/** A runner reported dirty by pgw_index_pop_dirty(). */
typedef struct pgw_dirty {
    pgw_runner_id runner; /**< the runner to rerun */
    pgw_reason reason;    /**< why it was first marked (a refresh reason) */
} pgw_dirty;

/** A snapshot of one runner, for hosts and tests. */
typedef struct pgw_runner_info {
    size_t refs;              /**< subscriptions sharing the runner */
    pgw_runner_state state;   /**< its state */
    pgw_reason reason;        /**< reason of the pending refresh (DIRTY,
                                   RUNNING_DIRTY); unspecified otherwise */
    bool result_known;        /**< whether it holds result IDs */
    size_t n_result_ids;      /**< distinct result IDs held */
    const char *query;        /**< its query key; borrowed, valid until the
                                   runner is unregistered */
} pgw_runner_info;

/** Version of pgw_index_stats understood by this release: 2 added
 *  time_dependent and clocked. pgw_index_stats_get() accepts 1 and 2 and
 *  fills only the members of the version asked for. */
#define PGW_INDEX_STATS_VERSION 2

/** Counters of an index. Set `version` before calling pgw_index_stats_get(). */
typedef struct pgw_index_stats {
    unsigned int version;  /**< set by the caller: PGW_INDEX_STATS_VERSION */
    uint64_t subscriptions;/**< registrations (sum of runner references) */
    uint64_t runners;      /**< distinct runners */
    uint64_t scopes;       /**< scopes with at least one runner */
    uint64_t buckets;      /**< (scope, table) buckets */
    uint64_t dirty;        /**< runners queued (DIRTY) */
    uint64_t running;      /**< runners RUNNING or RUNNING_DIRTY */
    uint64_t writes;       /**< write sets matched (resets included) */
    uint64_t visited;      /**< candidates decided by matches */
    uint64_t marked;       /**< runners newly marked dirty */
    uint64_t coalesced;    /**< hits on runners already dirty */
    uint64_t time_dependent; /**< (version 2) runners whose query reads the clock */
    uint64_t clocked;      /**< (version 2) runners newly marked by pgw_index_clock()
                                (counted in marked too) */
} pgw_index_stats;

/** Initialiser for pgw_index_stats. */
#define PGW_INDEX_STATS_INIT { PGW_INDEX_STATS_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }

/**
 * Creates an empty index.
 *
 * @param out   receives the index; caller frees with pgw_index_free().
 * @param opts  options, or NULL for the defaults (borrowed for the call).
 * @param err   optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when out is NULL, opts has a version other
 *         than 1 and 2, or its clock_interval_ms is below 1; PGW_ENOMEM.
 */
PGW_API int pgw_index_new(pgw_index **out, const pgw_index_options *opts, pgw_error *err);

/**
 * Releases an index and every runner in it (runner IDs become invalid).
 * @param idx  the index, or NULL (ignored).
 */
PGW_API void pgw_index_free(pgw_index *idx);

/**
 * Registers a subscription. When a runner with the same scope, query key
 * and declaration exists, its reference count grows and its ID is returned
 * (its state and result IDs are kept; the result IDs in deps are then
 * ignored: a subscriber of a shared runner sees the runner's result).
 * Otherwise a new CLEAN runner is created with deps' result IDs; when deps
 * is time-dependent, its base time is the index's time (see "Time-dependent
 * runners" above; unknown before the first pgw_index_clock()).
 *
 * @param out   receives the runner's ID (untouched on failure).
 * @param idx   the index.
 * @param deps  the declaration (borrowed; copied into the index).
 * @param err   optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when an argument is NULL; PGW_ELIMIT beyond
 *         2^32 - 2 runners or 65535 groups in a bucket; PGW_ENOMEM (the
 *         index is unchanged).
 */
PGW_API int pgw_index_register(pgw_runner_id *out, pgw_index *idx, const pgw_deps *deps,
                               pgw_error *err);

/**
 * Drops one reference to a runner; the last one removes it. Never
 * allocates.
 *
 * @param idx     the index.
 * @param runner  a runner ID from pgw_index_register().
 * @param err     optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when idx is NULL; PGW_ENOTFOUND for an unknown
 *         or stale ID.
 */
PGW_API int pgw_index_unregister(pgw_index *idx, pgw_runner_id runner, pgw_error *err);

/**
 * Matches one write set: decides every candidate runner of the write's
 * (scope, table) and marks those that must refresh (CLEAN → DIRTY,
 * RUNNING → RUNNING_DIRTY). A scope reset marks every runner of its scope.
 * Never allocates. Cost: see the top of this header.
 *
 * @param out    receives the number of runners newly marked; may be NULL.
 * @param idx    the index.
 * @param write  the write set (borrowed).
 * @param err    optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when idx or write is NULL.
 */
PGW_API int pgw_index_match(size_t *out, pgw_index *idx, const pgw_write *write,
                            pgw_error *err);

/**
 * Matches n write sets in order, with exactly the effects of n calls of
 * pgw_index_match() (the same runners marked with the same reasons, the
 * dirty queue in the same order, the same counters), in less time per
 * write when the index is large: in groups of up to 8 writes, it takes
 * each level of the index for all of them before the next — their bucket
 * map slots, then their buckets, then their candidates (found from the
 * buckets alone, their runners requested) — and only then decides and
 * marks them one write after another, so that the trips to memory of the
 * writes overlap instead of following one another ("group prefetching":
 * S. Chen, A. Ailamaki, P. B. Gibbons and T. C. Mowry, "Improving Hash
 * Join Performance through Prefetching", ICDE 2004). Finding candidates
 * reads only what deciding and marking leave unchanged, so running it
 * ahead changes no outcome. Some writes are matched whole in their turn
 * instead, with the same effects: all of them while any scope of the
 * index has undeclared subscriptions, and a scope reset, a write with no
 * bucket or with only another scope's bucket of the same hash, and a
 * write with more than 64 candidate postings (a runner counts once for
 * each written row its result holds: a bulk update of rows in one
 * result is one such write).
 *
 * Cost: on a large index (not in cache), well under one pgw_index_match()
 * per write (tests/bench/bench_index, cases c-e); on a small one, about
 * the same. Never allocates; uses about 14 KiB of stack (the match state
 * of 8 writes).
 *
 * @param out     room for n counts, or NULL: on PGW_OK out[i] receives the
 *                number of runners writes[i] newly marked; with n == 0, or
 *                on failure, it is neither read nor written.
 * @param idx     the index.
 * @param writes  n write sets, in the order they happened: read during the
 *                call, never changed or kept (declared as execv() declares
 *                argv, so that an array of `pgw_write *` is passed without
 *                a cast). The same write may appear more than once; it is
 *                matched each time, as by as many calls.
 * @param n       number of writes; 0 matches nothing.
 * @param err     optional detail on failure.
 * @return PGW_OK (every write matched: nothing can fail once the arguments
 *         are checked); PGW_EINVAL when idx is NULL, writes is NULL with
 *         n > 0, or an element of writes is NULL (the message gives its
 *         index) — checked before anything is matched, so a refused batch
 *         matches nothing.
 */
PGW_API int pgw_index_match_batch(size_t *out, pgw_index *idx, pgw_write *const *writes,
                                  size_t n, pgw_error *err);

/**
 * Marks every runner of a scope dirty with reason SCOPE_RESET — after a
 * listener (re)connects, since NOTIFY is not durable. Never allocates.
 *
 * @param out    receives the number of runners newly marked; may be NULL.
 * @param idx    the index.
 * @param scope  the scope (borrowed); a scope without runners marks none.
 * @param err    optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when idx or scope is NULL.
 */
PGW_API int pgw_index_reset_scope(size_t *out, pgw_index *idx, const pgw_scope *scope,
                                  pgw_error *err);

/**
 * Tells the index the time and marks the time-dependent runners whose
 * result is older than the clock interval dirty with reason CLOCK (CLEAN →
 * DIRTY, RUNNING → RUNNING_DIRTY): those whose base time is unknown or at
 * most now_ms - clock_interval_ms ("Time-dependent runners" at the top of
 * this header gives the rule). Runners that are not time-dependent, and
 * those already DIRTY or RUNNING_DIRTY, are untouched. Marked runners join
 * the dirty queue in the order of their base times. Cost: O(marked + 1).
 * Never allocates.
 *
 * @param out     receives the number of runners newly marked; may be NULL.
 * @param idx     the index.
 * @param now_ms  the time, in milliseconds of a monotonic clock (>= 0; e.g.
 *                CLOCK_MONOTONIC's seconds × 1000 + nanoseconds / 10^6),
 *                not before the now_ms of any earlier call.
 * @param err     optional detail on failure.
 * @return PGW_OK; PGW_EINVAL when idx is NULL, now_ms is negative, or now_ms
 *         is before an earlier call's (nothing is marked, the index's time
 *         is unchanged).
 */
PGW_API int pgw_index_clock(size_t *out, pgw_index *idx, int64_t now_ms, pgw_error *err);

/**
 * When the next time-dependent runner is due: the earliest now_ms at which
 * pgw_index_clock() will mark one, so that a host can sleep until then (or
 * until a write arrives). The deadline of a runner whose base time is
 * unknown (registered or begun before the first pgw_index_clock()) is 0:
 * due at once. O(1); never allocates.
 *
 * @param out  receives the deadline, in the milliseconds of the host's
 *             clock (base time + clock_interval_ms, INT64_MAX at most);
 *             untouched unless PGW_OK.
 * @param idx  the index.
 * @return PGW_OK; PGW_ENOTFOUND when no time-dependent runner is waiting
 *         (none registered, or all are DIRTY or RUNNING_DIRTY: the next
 *         start of a rerun sets a deadline); PGW_EINVAL on a NULL argument.
 */
PGW_API int pgw_index_clock_next(int64_t *out, const pgw_index *idx);

/**
 * Takes the oldest dirty runner for a rerun (DIRTY → RUNNING): runners come
 * in the order they were marked, those one write marked in an unspecified
 * order among themselves. Take the rerun's snapshot after this call. A
 * time-dependent runner's base time becomes the index's time. Never
 * allocates.
 *
 * @param out  receives the runner and the reason it was marked.
 * @param idx  the index.
 * @return PGW_OK; PGW_ENOTFOUND when no runner is dirty (out untouched);
 *         PGW_EINVAL when an argument is NULL.
 */
PGW_API int pgw_index_pop_dirty(pgw_dirty *out, pgw_index *idx);

/**
 * Starts a rerun the index did not ask for (e.g. the first run after
 * registering): CLEAN or DIRTY → RUNNING. A time-dependent runner's base
 * time becomes the index's time. Never allocates.
 *
 * @param idx     the index.
 * @param runner  the runner.
 * @param err     optional detail on failure.
 * @return PGW_OK; PGW_EINVAL; PGW_ENOTFOUND for an unknown ID; PGW_ESTATE
 *         when it is already running.
 */
PGW_API int pgw_index_begin(pgw_index *idx, pgw_runner_id runner, pgw_error *err);

/**
 * Acknowledges a rerun and records its result IDs (the primary keys of the
 * first table's rows in the new result). RUNNING → CLEAN; RUNNING_DIRTY →
 * DIRTY (queued again: a write hit it while it ran).
 *
 * Only for a result that is a list of the first declared table's rows (one
 * entry per row, keyed by its primary key): the rules then skip writes to
 * rows outside the list (rules 12, 13, 19 of inval.h). A runner whose
 * result is an aggregate — declared PGW_RESULT_AGGREGATE, or of
 * unspecified kind with a first table that reads no column (count(*),
 * EXISTS) — is acknowledged as by pgw_index_ack_unknown() whatever the IDs
 * (they are still checked); for an aggregate of unspecified kind that
 * reads columns (sum(x), count(x)) use pgw_index_ack_unknown(), or declare
 * its kind: given IDs, it would miss refreshes. Forgets the runner's window
 * bounds (pgw_index_ack_window() keeps them).
 *
 * @param idx     the index.
 * @param runner  a RUNNING or RUNNING_DIRTY runner.
 * @param ids     n_ids row IDs (copied); may be NULL when n_ids is 0.
 * @param n_ids   number of IDs (0: the result is empty).
 * @param err     optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a NULL index or a malformed ID;
 *         PGW_ENOTFOUND for an unknown ID; PGW_ESTATE when the runner is not
 *         running; PGW_ENOMEM (the runner stays running; retry, or call
 *         pgw_index_ack_unknown(), which cannot fail for lack of memory).
 */
PGW_API int pgw_index_ack(pgw_index *idx, pgw_runner_id runner, const pgw_rowid *ids,
                          size_t n_ids, pgw_error *err);

/**
 * Acknowledges a rerun with the bounds of its window (inval.h,
 * pgw_deps_set_window_bounds()): the sort-key values of the first table's
 * first and last row in the new result, and whether the window is full,
 * so that writes to rows beyond the window or, for an update, staying in
 * front of it skip (BEYOND_WINDOW, BEFORE_WINDOW). RUNNING → CLEAN;
 * RUNNING_DIRTY → DIRTY. The runner keeps the bounds until its next
 * acknowledgement; pgw_index_ack() and pgw_index_ack_unknown() clear
 * them, and while it is rerun they are not used (its result is unknown).
 *
 * @param idx     the index.
 * @param runner  a RUNNING or RUNNING_DIRTY runner.
 * @param ids     the result IDs, as pgw_index_ack() takes them, or NULL
 *                (with n_ids 0) when they are not known: the bounds alone
 *                are acknowledged (rows of a join, say). An aggregate's
 *                bounds are kept but not used: its window counts groups,
 *                which one row can add in front of it.
 * @param n_ids   number of IDs.
 * @param bounds  the window's bounds (values copied), or NULL for none:
 *                then this is pgw_index_ack() (ids given) or
 *                pgw_index_ack_unknown() (ids NULL).
 * @param err     optional detail on failure.
 * @return PGW_OK; PGW_EINVAL as pgw_index_ack(), for an undeclared runner
 *         with bounds, and for bounds that pgw_deps_set_window_bounds()
 *         refuses for the runner's first table (no window, no sort keys,
 *         an untyped key, a value count that differs, a value that does
 *         not parse; the message names it); PGW_ENOTFOUND; PGW_ESTATE;
 *         PGW_ENOMEM (the runner stays running, its previous result
 *         forgotten as the pop or begin forgot it).
 */
PGW_API int pgw_index_ack_window(pgw_index *idx, pgw_runner_id runner, const pgw_rowid *ids,
                                 size_t n_ids, const pgw_window_bounds *bounds,
                                 pgw_error *err);

/**
 * Acknowledges a rerun without result IDs (the result is unknown from now
 * on: more refreshes, never fewer) and without window bounds. Never
 * allocates.
 *
 * @param idx     the index.
 * @param runner  a RUNNING or RUNNING_DIRTY runner.
 * @param err     optional detail on failure.
 * @return as pgw_index_ack() but never PGW_ENOMEM.
 */
PGW_API int pgw_index_ack_unknown(pgw_index *idx, pgw_runner_id runner, pgw_error *err);

/**
 * Decides one runner against a write without marking anything (explains a
 * verdict; what pgw_index_match() would decide for it now).
 *
 * @param out     receives the verdict (untouched on failure).
 * @param idx     the index.
 * @param runner  the runner.
 * @param write   the write set.
 * @param err     optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a NULL argument; PGW_ENOTFOUND for an
 *         unknown ID.
 */
PGW_API int pgw_index_decide(pgw_verdict *out, const pgw_index *idx, pgw_runner_id runner,
                             const pgw_write *write, pgw_error *err);

/**
 * Describes a runner.
 *
 * @param out     receives the description (untouched on failure).
 * @param idx     the index.
 * @param runner  the runner.
 * @param err     optional detail on failure.
 * @return PGW_OK; PGW_EINVAL on a NULL argument; PGW_ENOTFOUND.
 */
PGW_API int pgw_index_runner(pgw_runner_info *out, const pgw_index *idx, pgw_runner_id runner,
                             pgw_error *err);

/**
 * Reads the index's counters.
 *
 * @param out  set out->version to PGW_INDEX_STATS_VERSION (or 1) first;
 *             receives the counters of that version.
 * @param idx  the index.
 * @return PGW_OK; PGW_EINVAL on a NULL argument or a version other than 1
 *         and 2.
 */
PGW_API int pgw_index_stats_get(pgw_index_stats *out, const pgw_index *idx);

/**
 * How many verdicts with this reason the index has produced: one per
 * candidate decided by pgw_index_match() or pgw_index_match_batch() (skips
 * included), one per runner reached by a scope reset, and one per runner
 * pgw_index_clock() marked (reason CLOCK). Runners a write never visits (other
 * scopes and tables, pruned groups) are not counted.
 *
 * @param idx     the index; NULL gives 0.
 * @param reason  a pgw_reason; values outside the enum give 0.
 */
PGW_API uint64_t pgw_index_reason_count(const pgw_index *idx, pgw_reason reason);

#ifdef __cplusplus
}
#endif

#endif /* PGWITNESS_INDEX_H */
