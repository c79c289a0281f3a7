/*
 * tests/fuzz/fuzz_pg_array.c — the array-literal parser the adapter uses
 * for pg_stats value lists. Any input: a status, never a crash; on success
 * every element is a NUL-terminated string inside the parser's buffer and
 * no longer than the input.
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "pg_array.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pgwi_pg_array a;
    if (pgwi_pg_array_parse(&a, (const char *)data, size) != PGW_OK)
        return 0;
    size_t total = 0;
    for (size_t i = 0; i < a.n; i++) {
        size_t len = strlen(a.items[i]);
        if (a.items[i] < a.buf || a.items[i] + len > a.buf + size)
            abort();
        total += len + 1;
    }
    if (total > size + 1)
        abort();
    pgwi_pg_array_free(&a);
    return 0;
}
