/*
 * tests/fuzz/fuzz_inval_json.c — the JSON forms of dependencies and write
 * sets. The input is read as a declaration, and as a write set; whatever
 * parses must encode canonically (a fixed point: decode(encode(x)) encodes
 * the same), and a parsed declaration and write set must be decidable,
 * registrable and matchable, with the index agreeing with pgw_decide.
 * An input holding a NUL byte is split there: declaration before, write set
 * after, so the fuzzer can pair them.
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "pgwitness/pgwitness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void deps_fixed_point(const pgw_deps *d)
{
    char *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    if (pgw_deps_to_json(&a, &la, d, NULL) != PGW_OK)
        return;
    pgw_deps *d2 = NULL;
    if (pgw_deps_from_json(&d2, a, la, NULL) == PGW_OK) {
        if (pgw_deps_to_json(&b, &lb, d2, NULL) == PGW_OK && (la != lb || memcmp(a, b, la)))
            abort();
    } else {
        abort(); /* our own output must parse (barring ENOMEM, not injected here) */
    }
    pgw_free(a);
    pgw_free(b);
    pgw_deps_free(d2);
}

static void write_fixed_point(const pgw_write *w)
{
    char *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    if (pgw_write_to_json(&a, &la, w, NULL) != PGW_OK)
        return;
    pgw_write *w2 = NULL;
    if (pgw_write_from_json(&w2, a, la, NULL) == PGW_OK) {
        if (pgw_write_to_json(&b, &lb, w2, NULL) == PGW_OK && (la != lb || memcmp(a, b, la)))
            abort();
    } else {
        abort();
    }
    pgw_free(a);
    pgw_free(b);
    pgw_write_free(w2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *nul = memchr(text, '\0', size);
    size_t dlen = nul ? (size_t)(nul - text) : size;
    const char *wtext = nul ? nul + 1 : text;
    size_t wlen = nul ? size - dlen - 1 : size;

    pgw_deps *d = NULL;
    pgw_write *w = NULL;
    if (pgw_deps_from_json(&d, text, dlen, NULL) == PGW_OK)
        deps_fixed_point(d);
    if (pgw_write_from_json(&w, wtext, wlen, NULL) == PGW_OK) {
        write_fixed_point(w);
        pgw_op op = pgw_write_op(w);
        if (op == PGW_OP_INSERT || op == PGW_OP_UPDATE || op == PGW_OP_DELETE ||
            op == PGW_OP_TRUNCATE || op == PGW_OP_DDL) {
            char *p = NULL;
            size_t len = 0;
            if (pgw_payload_encode(&p, &len, w, NULL, NULL) == PGW_OK &&
                len > PGW_PAYLOAD_MAX_BYTES)
                abort();
            pgw_free(p);
        }
    }
    if (d && w) {
        pgw_verdict v;
        if (pgw_decide(&v, d, w, NULL) != PGW_OK || v.refresh != pgw_reason_refreshes(v.reason))
            abort();
        pgw_index *x = NULL;
        pgw_runner_id id;
        if (pgw_index_new(&x, NULL, NULL) == PGW_OK &&
            pgw_index_register(&id, x, d, NULL) == PGW_OK) {
            size_t n = 0;
            pgw_index_match(&n, x, w, NULL);
            if (n != (v.refresh ? 1u : 0u))
                abort();
            pgw_index_unregister(x, id, NULL);
        }
        pgw_index_free(x);
    }
    pgw_deps_free(d);
    pgw_write_free(w);
    return 0;
}
