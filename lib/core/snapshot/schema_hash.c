/*
 * lib/core/snapshot/schema_hash.c — schema_hash and the _s<hash> suffix.
 * The construction is documented in include/pgwitness/schema_hash.h.
 * SPDX-License-Identifier: MIT
 */
#include "internal.h"
#include "pgwitness/schema_hash.h"
#include "xxhash_inline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const default_exclude[] = {
    "_source_dataset_id",
    "_ingested_at",
    "_source_url",
};

static int cmp_names(const void *a, const void *b)
{
    /* strcmp compares as unsigned char (C11 7.24.4): bytewise order. */
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool excluded(const char *name, const char *const *ex, size_t n_ex)
{
    for (size_t i = 0; i < n_ex; i++)
        if (strcmp(name, ex[i]) == 0)
            return true;
    return false;
}

int pgw_schema_hash64(uint64_t *out, const char *const *names, size_t n_names,
                      const pgw_hash_options *opts, pgw_error *err)
{
    if (!out)
        return pgwi_error(err, PGW_EINVAL, "schema_hash: out is NULL");
    if (n_names > 0 && !names)
        return pgwi_error(err, PGW_EINVAL, "schema_hash: names is NULL but n_names is %zu",
                          n_names);
    const char *const *ex = default_exclude;
    size_t n_ex = sizeof default_exclude / sizeof default_exclude[0];
    if (opts) {
        if (opts->version != PGW_HASH_OPTIONS_VERSION)
            return pgwi_error(err, PGW_EINVAL,
                              "schema_hash: options version %u is not %u (use "
                              "PGW_HASH_OPTIONS_INIT)",
                              opts->version, (unsigned)PGW_HASH_OPTIONS_VERSION);
        if (opts->exclude) {
            ex = opts->exclude;
            n_ex = opts->n_exclude;
            for (size_t i = 0; i < n_ex; i++)
                if (!ex[i])
                    return pgwi_error(err, PGW_EINVAL,
                                      "schema_hash: exclude[%zu] is NULL", i);
        }
    }
    for (size_t i = 0; i < n_names; i++)
        if (!names[i])
            return pgwi_error(err, PGW_EINVAL, "schema_hash: names[%zu] is NULL", i);

    const char **sorted = NULL;
    size_t n = 0;
    if (n_names > 0) {
        sorted = pgwi_calloc(n_names, sizeof *sorted);
        if (!sorted)
            return pgwi_enomem(err);
        for (size_t i = 0; i < n_names; i++)
            if (!excluded(names[i], ex, n_ex))
                sorted[n++] = names[i];
        qsort(sorted, n, sizeof *sorted, cmp_names);
        for (size_t i = 1; i < n; i++) {
            if (strcmp(sorted[i - 1], sorted[i]) == 0) {
                int rc = pgwi_error(err, PGW_EINVAL,
                                    "schema_hash: column name \"%.200s\" appears twice",
                                    sorted[i]);
                pgwi_free(sorted);
                return rc;
            }
        }
    }

    XXH3_state_t state;
    XXH3_INITSTATE(&state);
    XXH3_64bits_reset(&state);
    for (size_t i = 0; i < n; i++)
        XXH3_64bits_update(&state, sorted[i], strlen(sorted[i]) + 1); /* with its NUL */
    *out = XXH3_64bits_digest(&state);
    pgwi_free(sorted);
    return PGW_OK;
}

int pgw_schema_hash(char out[PGW_SCHEMA_HASH_SIZE], const char *const *names, size_t n_names,
                    const pgw_hash_options *opts, pgw_error *err)
{
    if (!out)
        return pgwi_error(err, PGW_EINVAL, "schema_hash: out is NULL");
    uint64_t h;
    int rc;
    if ((rc = pgw_schema_hash64(&h, names, n_names, opts, err)) < 0)
        return rc;
    snprintf(out, PGW_SCHEMA_HASH_SIZE, "%016llx", (unsigned long long)h);
    return PGW_OK;
}

int pgw_schema_suffix(char out[PGW_SCHEMA_SUFFIX_SIZE], const char *const *names,
                      size_t n_names, const pgw_hash_options *opts, pgw_error *err)
{
    if (!out)
        return pgwi_error(err, PGW_EINVAL, "schema_suffix: out is NULL");
    char hex[PGW_SCHEMA_HASH_SIZE];
    int rc;
    if ((rc = pgw_schema_hash(hex, names, n_names, opts, err)) < 0)
        return rc;
    out[0] = '_';
    out[1] = 's';
    memcpy(out + 2, hex, PGW_SCHEMA_HASH_SIZE);
    return PGW_OK;
}
