/*
 * tests/fuzz/fuzz_snapshot.c — the snapshot and diff JSON decoders.
 *
 * Any input: decoding must return a status, never crash or leak. When a
 * snapshot decodes, its canonical encoding must decode again to the same
 * bytes (a fixed point), and it must diff against itself as unchanged.
 * When a diff decodes, its encoding must decode to the same bytes.
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "pgwitness/pgwitness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_snapshot(const char *text, size_t len)
{
    pgw_snapshot *s = NULL;
    if (pgw_snapshot_from_json(&s, text, len, NULL, NULL) != PGW_OK)
        return;
    char *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    if (pgw_snapshot_to_json(&a, &la, s, 0, NULL) != PGW_OK)
        abort();
    pgw_snapshot *t = NULL;
    if (pgw_snapshot_from_json(&t, a, la, NULL, NULL) != PGW_OK)
        abort(); /* our own output must decode */
    if (pgw_snapshot_to_json(&b, &lb, t, 0, NULL) != PGW_OK || la != lb || memcmp(a, b, la))
        abort(); /* canonical form is a fixed point */
    pgw_diff *d = NULL;
    if (pgw_diff_snapshots(&d, s, t, NULL, NULL) != PGW_OK)
        abort();
    if (pgw_diff_class(d) != PGW_CHANGE_UNCHANGED || pgw_diff_schema_changed(d))
        abort();
    for (size_t i = 0; i < pgw_snapshot_column_count(s); i++) {
        double sim;
        if (pgw_profile_similarity(&sim, NULL, s, i, t, i, NULL) != PGW_OK || !(sim >= 0) ||
            !(sim <= 1))
            abort();
    }
    pgw_diff_free(d);
    pgw_free(a);
    pgw_free(b);
    pgw_snapshot_free(s);
    pgw_snapshot_free(t);
}

static void check_diff(const char *text, size_t len)
{
    pgw_diff *d = NULL;
    if (pgw_diff_from_json(&d, text, len, NULL) != PGW_OK)
        return;
    char *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    if (pgw_diff_to_json(&a, &la, d, 0, NULL) != PGW_OK)
        abort();
    pgw_diff *e = NULL;
    if (pgw_diff_from_json(&e, a, la, NULL) != PGW_OK)
        abort();
    if (pgw_diff_to_json(&b, &lb, e, 0, NULL) != PGW_OK || la != lb || memcmp(a, b, la))
        abort();
    pgw_free(a);
    pgw_free(b);
    pgw_diff_free(d);
    pgw_diff_free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_snapshot((const char *)data, size);
    check_diff((const char *)data, size);
    return 0;
}
