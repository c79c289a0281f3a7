/*
 * lib/core/snapshot/rename_score.h — the combined rename score of one
 * (removed, added) pair: name, values, type and position evidence (issue
 * 17). The formula and its sources are on pgw_rename_weights and
 * pgw_rename_parts (include/pgwitness/diff.h) and in docs/formats.md.
 * Not installed.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_RENAME_SCORE_H
#define PGWITNESS_RENAME_SCORE_H

#include "name_score.h"
#include "pgwitness/diff.h"
#include "snapshot_internal.h"

/* The name score N and the values channel V at which each counts as
 * evidence of its kind (pgw_rename_evidence). */
#define PGWI_EVIDENCE_BAR 0.5

/* Reads caller options into *out, a full version-2 struct: NULL gives the
 * defaults; a version-1 struct is read only as far as version 1 went (its
 * other members may not exist) and gets PGW_RENAME_PROFILE and the default
 * weights. Then checks every member. PGW_OK, or PGW_EINVAL with a message
 * naming the member. */
int pgwi_diff_options_read(pgw_diff_options *out, const pgw_diff_options *opts,
                           pgw_error *err);

/* The combined score and parts of column i of a (removed) and column j of b
 * (added), with the weights w (checked). na and nb are the two names
 * prepared with pgwi_name_prepare; NULL prepares them here (about 3 KB of
 * stack). */
void pgwi_rename_parts_of(pgw_rename_parts *out, const pgw_snapshot *a, size_t i,
                          const pgwi_name_prep *na, const pgw_snapshot *b, size_t j,
                          const pgwi_name_prep *nb, const pgw_rename_weights *w);

/* What a pair's parts say about its evidence (PGW_RENAME_COMBINED). */
pgw_rename_evidence pgwi_rename_evidence_of(const pgw_rename_parts *p);

/* Whether the contrast C applies to a pair with these parts: V above 0
 * (pgw_rename_parts) and a contrast weight above 0 (w NULL: whatever the
 * weights, as a document read back records none). */
bool pgwi_rename_contrast_applies(const pgw_rename_parts *p, const pgw_rename_weights *w);

/* One side of the contrast: with removed, the best values channel V of a's
 * column i against the columns q of b kept in both (m[q] >= 0, m being
 * the b-to-a name match), q neither skip nor skip2, of the same type
 * family; else of b's column j against the columns q of a with m[q] >= 0
 * (the a-to-b match), q neither skip nor skip2, of its family. 0 when none has sampled values. The contrast
 * of a pair is the larger side. */
double pgwi_rename_side_contrast(const pgw_snapshot *a, size_t i, const pgw_snapshot *b,
                                 size_t j, bool removed, const int32_t *m, size_t skip,
                                 size_t skip2, const pgw_rename_weights *w);

/* The contrast C of a's column i and b's column j: the larger side, each
 * side leaving out the pair's own columns (j and the column of b named as
 * i; i and the column of a named as j). ma and mb are the name matches of
 * pgwi_match_names (negative: no column of that name). */
double pgwi_rename_pair_contrast(const pgw_snapshot *a, size_t i, const pgw_snapshot *b,
                                 size_t j, const int32_t *ma, const int32_t *mb,
                                 const pgw_rename_weights *w);

/* Sets p->contrast to `contrast` when it applies (else -1) and recomputes
 * p->score from the parts. */
void pgwi_rename_contrast_apply(pgw_rename_parts *p, double contrast,
                                const pgw_rename_weights *w);

/* Every part -1: not computed, or not recorded (format 1). */
void pgwi_rename_parts_unknown(pgw_rename_parts *p);

#endif
