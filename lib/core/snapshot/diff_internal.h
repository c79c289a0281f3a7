/*
 * lib/core/snapshot/diff_internal.h — the diff's layout, shared by diff.c (compute),
 * diff_json.c (codec) and drift.c. Not installed.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_DIFF_INTERNAL_H
#define PGWITNESS_DIFF_INTERNAL_H

#include "arena.h"
#include "pgwitness/diff.h"

struct pgw_diff {
    pgwi_arena arena; /* owns every string and array */
    pgw_diff_side from, to;
    bool schema_changed;
    bool reordered;
    pgw_change_class cls;
    pgw_rename_method method; /* how the renames were found */
    size_t n_added, n_removed, n_type, n_renamed, n_profile, n_anom;
    pgw_diff_column *added;
    pgw_diff_column *removed;
    pgw_type_change *type_changed;
    pgw_rename *renamed;
    pgw_profile_change *profile_changed;
    pgw_name_anomaly_report *anomalies;
};

/* The class implied by the diff's lists and flags. */
pgw_change_class pgwi_diff_classify(const pgw_diff *d);
const char *pgwi_evidence_name(pgw_rename_evidence e);

/* ma[i] = the index in b of a's column i when b has a column of that exact
 * name, else -1; mb[j] likewise for b (a->n_columns and b->n_columns
 * entries). */
void pgwi_match_names(const pgw_snapshot *a, const pgw_snapshot *b, int32_t *ma, int32_t *mb);

#endif
