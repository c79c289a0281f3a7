/*
 * tests/fuzz/fuzz_payload.c — the notification payload decoder. Any input
 * must decode (PGW_OK, or PGW_ENOMEM) to a write set: faithful, or a
 * fallback (unknown write to a named table, or a scope reset). A faithful
 * write set must re-encode within the byte budget, and a payload the
 * encoder wrote must decode back to the same payload. The decision and the
 * index must accept every write set.
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "pgwitness/pgwitness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const pgw_scope scope = {"p", "t", "db"};

static pgw_deps *deps_fixture(void)
{
    static const char *const cols[] = {"id", "title", "status"};
    static const char *const vals[] = {"open"};
    static const char *const one = "1";
    static const pgw_rowid rid = {&one, 1};
    pgw_deps *d = NULL;
    size_t t;
    if (pgw_deps_new(&d, &scope, "q", NULL) != PGW_OK)
        return NULL;
    if (pgw_deps_add_table(&t, d, "public", "tasks", NULL) != PGW_OK ||
        pgw_deps_set_columns(d, t, cols, 3, NULL) != PGW_OK ||
        pgw_deps_add_filter(d, t, "status", PGW_FILTER_EQ, vals, 1, NULL) != PGW_OK ||
        pgw_deps_set_order_by(d, t, cols, 1, NULL) != PGW_OK ||
        pgw_deps_set_window(d, t, 10, 0, NULL) != PGW_OK ||
        pgw_deps_set_result_ids(d, &rid, 1, NULL) != PGW_OK) {
        pgw_deps_free(d);
        return NULL;
    }
    return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pgw_write *w = NULL;
    int rc = pgw_payload_decode(&w, &scope, (const char *)data, size, NULL);
    if (rc != PGW_OK) {
        if (rc != PGW_ENOMEM)
            abort(); /* decoding is total */
        return 0;
    }
    pgw_op op = pgw_write_op(w);
    if (pgw_write_fallback_status(w) == PGW_OK) {
        if ((op < PGW_OP_INSERT || op > PGW_OP_TRUNCATE) && op != PGW_OP_DDL)
            abort();
        char *p = NULL;
        size_t len = 0;
        if (pgw_payload_encode(&p, &len, w, NULL, NULL) == PGW_OK) {
            if (len > PGW_PAYLOAD_MAX_BYTES)
                abort();
            pgw_write *w2 = NULL;
            if (pgw_payload_decode(&w2, &scope, p, len, NULL) == PGW_OK) {
                if (pgw_write_fallback_status(w2) != PGW_OK)
                    abort(); /* our own payloads are faithful */
                char *p2 = NULL;
                size_t len2 = 0;
                if (pgw_payload_encode(&p2, &len2, w2, NULL, NULL) == PGW_OK &&
                    (len2 != len || memcmp(p, p2, len) != 0))
                    abort(); /* encode(decode(encode(x))) == encode(x) */
                pgw_free(p2);
            }
            pgw_write_free(w2);
        }
        pgw_free(p);
    } else if (op != PGW_OP_UNKNOWN && op != PGW_OP_RESET) {
        abort();
    }
    pgw_deps *d = deps_fixture();
    pgw_index *x = NULL;
    if (d && pgw_index_new(&x, NULL, NULL) == PGW_OK) {
        pgw_verdict v;
        if (pgw_decide(&v, d, w, NULL) != PGW_OK)
            abort();
        if (op == PGW_OP_RESET && !(v.refresh && v.reason == PGW_REASON_SCOPE_RESET))
            abort();
        /* A ddl refreshes every reader of its table. */
        if (op == PGW_OP_DDL &&
            (v.refresh != (v.reason == PGW_REASON_DDL) ||
             (strcmp(pgw_write_schema(w), "public") == 0 &&
              strcmp(pgw_write_table(w), "tasks") == 0 && !v.refresh)))
            abort();
        pgw_runner_id id;
        if (pgw_index_register(&id, x, d, NULL) == PGW_OK) {
            size_t n = 0;
            pgw_index_match(&n, x, w, NULL);
            if (n != (v.refresh ? 1u : 0u))
                abort(); /* the index agrees with the decision */
        }
    }
    pgw_index_free(x);
    pgw_deps_free(d);
    pgw_write_free(w);
    return 0;
}
