/*
 * tests/fuzz/fuzz_typed.c — the typed value parser of range filters
 * (lib/core/inval/typed.h). The first byte picks the comparison type; the
 * rest is up to three values separated by '|'. Any input: a parse result,
 * never a crash; what parses compares reflexively, antisymmetrically and
 * transitively, a parsed numeric's digits lie inside its text, and two
 * texts compare equal exactly when their bytes are equal, and the coarse
 * keys never contradict the order (a < b: key(a) <= key(b)).
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "inval/typed.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    pgw_cmp_type type = (pgw_cmp_type)(1 + data[0] % 6);
    const char *s = (const char *)data + 1, *end = (const char *)data + size;
    pgwi_typed v[3];
    const char *text[3];
    size_t len[3], n = 0;
    while (n < 3) {
        const char *bar = memchr(s, '|', (size_t)(end - s));
        size_t l = bar ? (size_t)(bar - s) : (size_t)(end - s);
        text[n] = s;
        len[n] = l;
        if (pgwi_typed_parse(&v[n], type, s, l)) {
            const pgwi_typed *t = &v[n];
            if (t->type != type || t->cls < PGWI_TYPED_NEG_INF || t->cls > PGWI_TYPED_NAN)
                abort();
            if (type == PGW_CMP_NUMERIC && t->cls == PGWI_TYPED_FINITE && t->n_digits &&
                (t->digits < s || t->digits + t->first + t->n_digits + (t->dot >= 0) > s + l))
                abort();
            if ((type == PGW_CMP_TIMESTAMP || type == PGW_CMP_TIMESTAMPTZ) &&
                t->cls == PGWI_TYPED_FINITE && (t->usec < 0 || t->usec >= INT64_C(86400000000)))
                abort();
            if (pgwi_typed_cmp(t, t) != 0)
                abort();
            n++;
        } else if (type == PGW_CMP_TEXT) {
            abort(); /* every byte string is a text */
        }
        if (!bar)
            break;
        s = bar + 1;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            int c = pgwi_typed_cmp(&v[i], &v[j]);
            if (c < -1 || c > 1 || c != -pgwi_typed_cmp(&v[j], &v[i]))
                abort();
            if (c < 0 && pgwi_typed_key16(&v[i]) > pgwi_typed_key16(&v[j]))
                abort();
            if (type == PGW_CMP_TEXT &&
                (c == 0) != (len[i] == len[j] && memcmp(text[i], text[j], len[i]) == 0))
                abort();
            for (size_t k = 0; k < n; k++)
                if (c <= 0 && pgwi_typed_cmp(&v[j], &v[k]) <= 0 &&
                    pgwi_typed_cmp(&v[i], &v[k]) > 0)
                    abort();
        }
    return 0;
}
