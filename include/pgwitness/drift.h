/*
 * pgwitness/drift.h — the drift report: how often and how a set of
 * resources changed shape, from their snapshots.
 *
 * Given snapshots in any order, the report groups them by resource
 * (resource_identity, else "schema.table"), orders each group by
 * captured_at, diffs every consecutive pair (pgw_diff_snapshots), classifies
 * each pair (pgw_change_class) and aggregates: pairs, changed pairs, the
 * rate of change (changed pairs / pairs), counts per class, overall and per
 * resource, with each resource's timeline. It reports; it does not alert or
 * repair. Pure: the report holds its own diffs and copies, and stays valid
 * after the snapshots are freed.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_DRIFT_H
#define PGWITNESS_DRIFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgwitness/common.h"
#include "pgwitness/diff.h"
#include "pgwitness/snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A drift report (opaque, immutable). Free with pgw_drift_free(). */
typedef struct pgw_drift pgw_drift;

/** One step of a resource's timeline: a consecutive pair and its diff.
 *  A view owned by the report. */
typedef struct pgw_drift_step {
    const pgw_diff *diff;    /**< the pair's diff (owned by the report) */
    pgw_change_class change; /**< its class */
} pgw_drift_step;

/** One resource's part of the report. A view owned by the report. */
typedef struct pgw_drift_resource {
    const char *resource;   /**< resource_identity, or "schema.table" */
    size_t snapshots;       /**< snapshots of this resource */
    int64_t first;          /**< captured_at of its oldest snapshot (usec) */
    int64_t last;           /**< captured_at of its newest snapshot (usec) */
    size_t pairs;           /**< consecutive pairs = snapshots - 1 */
    size_t changed_pairs;   /**< pairs whose class is not unchanged */
    size_t classes[PGW_CHANGE_CLASS_COUNT]; /**< pairs per pgw_change_class */
    size_t profile_changed_pairs; /**< pairs where a kept column's values
                                       changed form */
    size_t n_steps;         /**< = pairs */
    const pgw_drift_step *steps; /**< oldest first */
} pgw_drift_resource;

/**
 * Builds the drift report of a set of snapshots.
 *
 * @param out        receives the report (free with pgw_drift_free()).
 * @param snapshots  `n` snapshots in any order (borrowed for the call; the
 *                   array may hold several resources).
 * @param n          number of snapshots; 0 gives an empty report.
 * @param opts       thresholds for the diffs; NULL for the defaults.
 * @param err        optional detail on failure.
 * @return PGW_OK; PGW_EINVAL (out NULL, snapshots NULL with n > 0, a NULL
 *         snapshot, bad options); PGW_ENOMEM.
 */
PGW_API int pgw_drift_report(pgw_drift **out, const pgw_snapshot *const *snapshots, size_t n,
                             const pgw_diff_options *opts, pgw_error *err);

/** Frees a report and its diffs. NULL is ignored. */
PGW_API void pgw_drift_free(pgw_drift *d);

/** Snapshots the report covers. */
PGW_API size_t pgw_drift_snapshots(const pgw_drift *d);
/** Consecutive pairs diffed, over all resources. */
PGW_API size_t pgw_drift_pairs(const pgw_drift *d);
/** Pairs whose class is not unchanged. */
PGW_API size_t pgw_drift_changed_pairs(const pgw_drift *d);
/** changed_pairs / pairs in [0, 1]; 0 when there are no pairs. */
PGW_API double pgw_drift_rate(const pgw_drift *d);
/** Pairs of class `c` (0 for an unknown class). */
PGW_API size_t pgw_drift_class_count(const pgw_drift *d, pgw_change_class c);
/** Pairs in which a kept column's profile changed (profile_changed). */
PGW_API size_t pgw_drift_profile_changed_pairs(const pgw_drift *d);
/** Number of resources, sorted by name. */
PGW_API size_t pgw_drift_resource_count(const pgw_drift *d);
/** The i-th resource, or NULL when out of range. */
PGW_API const pgw_drift_resource *pgw_drift_resource_at(const pgw_drift *d, size_t i);

/**
 * Encodes the report as JSON (docs/formats.md, "Drift report"): totals,
 * counts per class, and per resource its counts and timeline (each step
 * with its class, times, hashes, added/removed/retyped columns, renames
 * with score and evidence, and profile changes).
 *
 * @param out      receives NUL-terminated UTF-8 (free with pgw_free()).
 * @param out_len  receives its length without the NUL; may be NULL.
 * @param d        the report.
 * @param flags    0 or PGW_JSON_PRETTY.
 * @param err      optional detail on failure.
 * @return PGW_OK; PGW_EINVAL; PGW_ENOMEM.
 */
PGW_API int pgw_drift_to_json(char **out, size_t *out_len, const pgw_drift *d, unsigned flags,
                              pgw_error *err);

#ifdef __cplusplus
}
#endif

#endif /* PGWITNESS_DRIFT_H */
