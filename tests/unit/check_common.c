/*
 * tests/unit/check_common.c — versions, status texts, error records and the
 * allocator hook.
 * SPDX-License-Identifier: MIT
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "pgw_test.h"
#include "pgwitness/pgwitness.h"

START_TEST(version_matches_headers)
{
    ck_assert_str_eq(pgw_version(), PGW_VERSION_STRING);
    ck_assert_int_eq(pgw_version_number(), PGW_VERSION_NUMBER);
    ck_assert_str_eq(pgw_version(), PGW_EXPECTED_VERSION); /* from meson.build */
    ck_assert_int_eq(PGW_VERSION_NUMBER,
                     PGW_VERSION_MAJOR * 10000 + PGW_VERSION_MINOR * 100 + PGW_VERSION_PATCH);
}
END_TEST

START_TEST(strerror_distinct_and_nonempty)
{
    const char *seen[32];
    size_t n = 0;
    for (int code = 0; code >= PGW_STATUS_MIN; code--) {
        const char *s = pgw_strerror(code);
        ck_assert_ptr_nonnull(s);
        ck_assert_msg(strlen(s) > 0, "empty text for %d", code);
        ck_assert_msg(strcmp(s, pgw_strerror(1)) != 0, "code %d has the unknown text", code);
        for (size_t i = 0; i < n; i++)
            ck_assert_msg(strcmp(seen[i], s) != 0, "code %d repeats text \"%s\"", code, s);
        seen[n++] = s;
    }
    ck_assert_uint_eq(n, 11);
    ck_assert_str_eq(pgw_strerror(PGW_OK), "success");
    ck_assert_str_eq(pgw_strerror(PGW_ENOMEM), "out of memory");
    ck_assert_str_eq(pgw_strerror(PGW_STATUS_MIN - 1), "unknown pgwitness status code");
    ck_assert_str_eq(pgw_strerror(12345), "unknown pgwitness status code");
}
END_TEST

START_TEST(error_clear_and_fill)
{
    pgw_error err;
    memset(&err, 'x', sizeof err);
    pgw_error_clear(&err);
    ck_assert_int_eq(err.code, PGW_OK);
    ck_assert_str_eq(err.message, "");
    ck_assert_str_eq(err.path, "");
    ck_assert_str_eq(err.sqlstate, "");
    pgw_error_clear(NULL); /* allowed */

    char out[PGW_SCHEMA_HASH_SIZE] = "untouched";
    const char *names[] = {"a", NULL};
    ck_assert_int_eq(pgw_schema_hash(out, names, 2, NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(err.code, PGW_EINVAL);
    ck_assert_str_eq(err.message, "schema_hash: names[1] is NULL");
    ck_assert_str_eq(out, "untouched"); /* out-params untouched on failure */

    /* A successful call leaves the record as it was. */
    const char *ok[] = {"a"};
    ck_assert_int_eq(pgw_schema_hash(out, ok, 1, NULL, &err), PGW_OK);
    ck_assert_int_eq(err.code, PGW_EINVAL);
    /* NULL err is allowed on failure. */
    ck_assert_int_eq(pgw_schema_hash(out, names, 2, NULL, NULL), PGW_EINVAL);
}
END_TEST

START_TEST(error_message_cut_on_utf8_boundary)
{
    /* A duplicated 300-byte name of 2-byte characters: the message quotes
     * at most 200 bytes, and the record must stay valid UTF-8. */
    char name[301];
    for (int i = 0; i < 150; i++) {
        name[2 * i] = (char)0xC3;
        name[2 * i + 1] = (char)0xA9; /* é */
    }
    name[300] = '\0';
    const char *names[] = {name, name};
    pgw_error err;
    char out[PGW_SCHEMA_HASH_SIZE];
    ck_assert_int_eq(pgw_schema_hash(out, names, 2, NULL, &err), PGW_EINVAL);
    const char *q = strchr(err.message, '"');
    ck_assert_ptr_nonnull(q);
    const char *end = strrchr(err.message, '"');
    ck_assert_ptr_ne(q, end);
    /* 200 bytes requested by %.200s: 100 whole characters. */
    ck_assert_int_eq((int)(end - q - 1), 200);
    ck_assert_int_eq((unsigned char)end[-2], 0xC3);
}
END_TEST

/* Well-formed UTF-8 (structure only: lead bytes and their continuations). */
static bool utf8_ok(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = *p < 0x80 ? 1 : (*p & 0xE0) == 0xC0 ? 2 : (*p & 0xF0) == 0xE0 ? 3
                : (*p & 0xF8) == 0xF0 ? 4 : 0;
        if (n == 0)
            return false;
        for (int i = 1; i < n; i++)
            if ((p[i] & 0xC0) != 0x80)
                return false;
        p += n;
    }
    return true;
}

/* Names quoted with a byte precision end inside a 3-byte character unless
 * the record is repaired: the message and the JSON path stay UTF-8. */
START_TEST(error_records_stay_utf8)
{
    char name[301];
    for (int i = 0; i < 100; i++)
        memcpy(name + 3 * i, "\xE2\x82\xAC", 3); /* € */
    name[300] = '\0';
    pgw_scope sc = {"p", "t", "d"};
    pgw_deps *d = NULL;
    pgw_error err;
    size_t t;
    ck_assert_int_eq(pgw_deps_new(&d, &sc, "q", NULL), PGW_OK);
    ck_assert_int_eq(pgw_deps_add_table(&t, d, "public", "tasks", NULL), PGW_OK);
    const char *cols[] = {name, name};
    ck_assert_int_eq(pgw_deps_set_columns(d, t, cols, 2, &err), PGW_EINVAL);
    ck_assert_msg(utf8_ok(err.message), "message: %s", err.message);
    ck_assert_ptr_nonnull(strstr(err.message, "appears twice"));
    pgw_deps_free(d);

    char json[1024];
    snprintf(json, sizeof json,
             "{\"format\": 1, \"scope\": {\"project\": \"p\", \"tenant\": \"t\", "
             "\"database\": \"d\"}, \"query\": \"q\", \"%s\": 1}",
             name);
    ck_assert_int_eq(pgw_deps_from_json(&d, json, strlen(json), &err), PGW_EPARSE);
    ck_assert_msg(utf8_ok(err.message), "message: %s", err.message);
    ck_assert_msg(utf8_ok(err.path), "path: %s", err.path);
    ck_assert_ptr_nonnull(strstr(err.message, "unknown key"));
}
END_TEST

START_TEST(set_allocator_rejects_partial)
{
    pgw_allocator a = {NULL, NULL, NULL, NULL};
    ck_assert_int_eq(pgw_set_allocator(&a), PGW_EINVAL);
    ck_assert_int_eq(pgw_set_allocator(NULL), PGW_OK);
}
END_TEST

START_TEST(allocator_sees_library_allocations)
{
    pgwt_alloc_install();
    const char *names[] = {"species", "island", "sex"};
    char out[PGW_SCHEMA_HASH_SIZE];
    ck_assert_int_eq(pgw_schema_hash(out, names, 3, NULL, NULL), PGW_OK);
    pgwt_alloc_stats st = pgwt_alloc_get();
    ck_assert_uint_ge(st.allocs, 1);
    ck_assert_uint_eq(st.allocs, st.frees);
    ck_assert_uint_eq(st.live, 0);

    /* jansson is routed through the same hook. */
    pgwt_alloc_reset();
    json_t *j = json_string("routed");
    ck_assert_ptr_nonnull(j);
    ck_assert_uint_ge(pgwt_alloc_get().allocs, 1);
    json_decref(j);
    ck_assert_uint_eq(pgwt_alloc_get().live, 0);

    /* pgw_free releases through the hook. */
    pgwt_alloc_uninstall();
}
END_TEST

START_TEST(allocation_failure_is_enomem)
{
    pgwt_alloc_install();
    const char *names[] = {"b", "a"};
    char out[PGW_SCHEMA_HASH_SIZE] = "untouched";
    pgw_error err;
    pgwt_alloc_fail_at(1);
    ck_assert_int_eq(pgw_schema_hash(out, names, 2, NULL, &err), PGW_ENOMEM);
    ck_assert(pgwt_alloc_failed());
    ck_assert_int_eq(err.code, PGW_ENOMEM);
    ck_assert_str_eq(out, "untouched");
    ck_assert_uint_eq(pgwt_alloc_get().live, 0);
    pgwt_alloc_uninstall();
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("common");
    TCase *tc = tcase_create("common");
    tcase_add_test(tc, version_matches_headers);
    tcase_add_test(tc, strerror_distinct_and_nonempty);
    tcase_add_test(tc, error_clear_and_fill);
    tcase_add_test(tc, error_message_cut_on_utf8_boundary);
    tcase_add_test(tc, error_records_stay_utf8);
    tcase_add_test(tc, set_allocator_rejects_partial);
    tcase_add_test(tc, allocator_sees_library_allocations);
    tcase_add_test(tc, allocation_failure_is_enomem);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return pgwt_main(suite());
}
