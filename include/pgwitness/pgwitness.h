/*
 * pgwitness/pgwitness.h — umbrella header for libpgwitness, the pure core.
 *
 * Include this one header to use every core module. The core does no I/O:
 * no files, sockets or printing; it validates its arguments and returns
 * status codes. The libpq adapter is declared separately in
 * <pgwitness/pgwitness-pq.h> (link pgwitness-pq).
 *
 * Link with: cc $(pkg-config --cflags --libs pgwitness)
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_PGWITNESS_H
#define PGWITNESS_PGWITNESS_H

#include "pgwitness/common.h"
#include "pgwitness/schema_hash.h"
#include "pgwitness/snapshot.h"
#include "pgwitness/diff.h"
#include "pgwitness/drift.h"
#include "pgwitness/inval.h"
#include "pgwitness/inval_json.h"
#include "pgwitness/payload.h"
#include "pgwitness/pgoutput.h"
#include "pgwitness/index.h"

#endif /* PGWITNESS_PGWITNESS_H */
