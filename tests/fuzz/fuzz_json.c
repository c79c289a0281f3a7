/*
 * tests/fuzz/fuzz_json.c — the strict JSON layer: parse, walk every member
 * with the typed readers, dump, and re-parse the dump (which must succeed
 * and dump identically: canonical output is a fixed point).
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(const json_t *v, const char *path, int depth)
{
    char p[PGWI_JPATH_SIZE];
    const char *s;
    size_t len;
    bool b;
    int64_t n;
    double d;
    pgw_error err;
    pgwi_json_string(&s, &len, v, 16, path, &err);
    pgwi_json_bool(&b, v, path, &err);
    pgwi_json_int(&n, v, -5, 5, path, &err);
    pgwi_json_number(&d, v, -1.0, 1.0, path, &err);
    if (depth > 32)
        return;
    if (json_is_object(v)) {
        static const char *const allowed[] = {"a", "b", NULL};
        pgwi_json_only_keys(v, path, allowed, &err);
        const char *key;
        json_t *m;
        json_object_foreach((json_t *)v, key, m) {
            pgwi_jpath_key(p, path, key);
            walk(m, p, depth + 1);
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            pgwi_jpath_index(p, path, i);
            walk(json_array_get(v, i), p, depth + 1);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *v = NULL;
    pgw_error err;
    if (pgwi_json_parse(&v, (const char *)data, size, 1 << 20, &err) != PGW_OK)
        return 0;
    walk(v, "$", 0);
    char *out = NULL, *out2 = NULL;
    size_t len = 0, len2 = 0;
    if (pgwi_json_dump(&out, &len, v, false, &err) == PGW_OK) {
        json_t *w = NULL;
        if (pgwi_json_parse(&w, out, len, 0, &err) != PGW_OK)
            abort(); /* our own output must parse */
        if (pgwi_json_dump(&out2, &len2, w, false, &err) == PGW_OK &&
            (len != len2 || memcmp(out, out2, len) != 0))
            abort(); /* canonical output is a fixed point */
        json_decref(w);
    }
    pgwi_free(out);
    pgwi_free(out2);
    json_decref(v);
    return 0;
}
