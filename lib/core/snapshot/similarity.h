/*
 * lib/core/snapshot/similarity.h — profile_similarity without argument checks, for
 * the diff's inner loop. Not installed.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_SIMILARITY_H
#define PGWITNESS_SIMILARITY_H

#include <string.h>

#include "pgwitness/diff.h"
#include "snapshot_internal.h"

/* Scores column ia of sa against column ib of sb (indexes valid). */
void pgwi_similarity(pgw_similarity *out, const pgw_snapshot *sa, size_t ia,
                     const pgw_snapshot *sb, size_t ib);

#endif
