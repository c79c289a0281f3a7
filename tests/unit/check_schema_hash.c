/*
 * tests/unit/check_schema_hash.c — schema_hash known-answer vectors (the
 * same table as docs/formats.md), order independence, metadata exclusion,
 * and the _s<hash> suffix.
 *
 * The expected values were produced independently of this library with the
 * xxhsum tool (xxHash 0.8.1, `xxhsum -H3`) over the sorted, NUL-terminated
 * names, so a bug shared by our code and its tests cannot hide here.
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "pgw_test.h"
#include "pgwitness/pgwitness.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

typedef struct vector {
    const char *label;
    const char *const *names;
    size_t n;
    const char *hash;
} vector;

static const char *const v_id[] = {"id"};
static const char *const v_ab[] = {"b", "a"};
static const char *const v_penguins_v3[] = {
    "species", "island", "bill_length_mm", "bill_depth_mm",
    "flipper_length_mm", "body_mass_g", "sex", "year"};
static const char *const v_penguins_v2[] = {
    "species", "island", "culmen_length_mm", "culmen_depth_mm",
    "flipper_length_mm", "body_mass_g", "sex"};
static const char *const v_penguins_v1[] = {
    "studyName", "Sample Number", "Species", "Region", "Island", "Stage",
    "Individual ID", "Clutch Completion", "Date Egg", "Culmen Length (mm)",
    "Culmen Depth (mm)", "Flipper Length (mm)", "Body Mass (g)", "Sex",
    "Delta 15 N (o/oo)", "Delta 13 C (o/oo)", "Comments"};
static const char *const v_unicode[] = {"名前", "Ünïcode", "\xEF\xBB\xBFtitle"};
static const char *const v_prefix[] = {"ab", "a", "a b"};
static const char *const v_tasks[] = {"id", "title", "status", "updated_at"};

static const vector vectors[] = {
    {"empty", NULL, 0, "2d06800538d394c2"},
    {"id", v_id, N(v_id), "9687464744a2b795"},
    {"b,a", v_ab, N(v_ab), "50e9fe6f7fb8a296"},
    {"penguins v3", v_penguins_v3, N(v_penguins_v3), "3562be7126aad1e5"},
    {"penguins v2", v_penguins_v2, N(v_penguins_v2), "81b2f8361022cf12"},
    {"penguins v1", v_penguins_v1, N(v_penguins_v1), "68892d617cfb0893"},
    {"unicode+BOM", v_unicode, N(v_unicode), "7f616898ee44e6af"},
    {"prefixes", v_prefix, N(v_prefix), "a8337f2d6d32e54b"},
    {"tasks", v_tasks, N(v_tasks), "fd7a2b1b35193078"},
};

START_TEST(known_answer_vectors)
{
    const vector *v = &vectors[_i];
    char hex[PGW_SCHEMA_HASH_SIZE];
    char suffix[PGW_SCHEMA_SUFFIX_SIZE];
    uint64_t h64 = 0;
    ck_assert_int_eq(pgw_schema_hash(hex, v->names, v->n, NULL, NULL), PGW_OK);
    ck_assert_msg(strcmp(hex, v->hash) == 0, "%s: got %s want %s", v->label, hex, v->hash);
    ck_assert_int_eq(pgw_schema_hash64(&h64, v->names, v->n, NULL, NULL), PGW_OK);
    ck_assert_uint_eq(h64, strtoull(v->hash, NULL, 16));
    ck_assert_int_eq(pgw_schema_suffix(suffix, v->names, v->n, NULL, NULL), PGW_OK);
    ck_assert_uint_eq(strlen(suffix), 18);
    ck_assert(strncmp(suffix, "_s", 2) == 0);
    ck_assert_str_eq(suffix + 2, v->hash);
}
END_TEST

START_TEST(order_independent)
{
    const char *a[] = {"species", "island", "sex", "year"};
    const char *b[] = {"year", "sex", "species", "island"};
    char ha[PGW_SCHEMA_HASH_SIZE], hb[PGW_SCHEMA_HASH_SIZE];
    ck_assert_int_eq(pgw_schema_hash(ha, a, 4, NULL, NULL), PGW_OK);
    ck_assert_int_eq(pgw_schema_hash(hb, b, 4, NULL, NULL), PGW_OK);
    ck_assert_str_eq(ha, hb);
}
END_TEST

START_TEST(metadata_columns_excluded_by_default)
{
    const char *with[] = {"_ingested_at", "species", "island", "bill_length_mm",
                          "_source_dataset_id", "bill_depth_mm", "flipper_length_mm",
                          "body_mass_g", "sex", "year", "_source_url"};
    char h[PGW_SCHEMA_HASH_SIZE];
    ck_assert_int_eq(pgw_schema_hash(h, with, N(with), NULL, NULL), PGW_OK);
    ck_assert_str_eq(h, "3562be7126aad1e5"); /* = penguins v3 without them */

    /* Excluding nothing: the metadata names count. */
    pgw_hash_options none = PGW_HASH_OPTIONS_INIT;
    static const char *const nothing[1] = {NULL};
    none.exclude = nothing;
    none.n_exclude = 0;
    ck_assert_int_eq(pgw_schema_hash(h, with, N(with), &none, NULL), PGW_OK);
    ck_assert_str_ne(h, "3562be7126aad1e5");

    /* A custom list replaces the defaults. */
    pgw_hash_options custom = PGW_HASH_OPTIONS_INIT;
    static const char *const ex[] = {"year"};
    custom.exclude = ex;
    custom.n_exclude = 1;
    ck_assert_int_eq(pgw_schema_hash(h, v_penguins_v3, N(v_penguins_v3), &custom, NULL),
                     PGW_OK);
    char h7[PGW_SCHEMA_HASH_SIZE];
    ck_assert_int_eq(pgw_schema_hash(h7, v_penguins_v3, 7, &none, NULL), PGW_OK);
    ck_assert_str_eq(h, h7);
}
END_TEST

START_TEST(bad_arguments)
{
    char h[PGW_SCHEMA_HASH_SIZE];
    pgw_error err;
    const char *dup[] = {"a", "b", "a"};
    ck_assert_int_eq(pgw_schema_hash(h, dup, 3, NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "schema_hash: column name \"a\" appears twice");
    ck_assert_int_eq(pgw_schema_hash(NULL, dup, 1, NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_schema_hash(h, NULL, 2, NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "schema_hash: names is NULL but n_names is 2");
    pgw_hash_options bad = PGW_HASH_OPTIONS_INIT;
    bad.version = 99;
    ck_assert_int_eq(pgw_schema_hash(h, dup, 1, &bad, &err), PGW_EINVAL);
    ck_assert(strstr(err.message, "options version 99") != NULL);
    pgw_hash_options nullex = PGW_HASH_OPTIONS_INIT;
    static const char *const ex[] = {NULL};
    nullex.exclude = ex;
    nullex.n_exclude = 1;
    ck_assert_int_eq(pgw_schema_hash(h, dup, 1, &nullex, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "schema_hash: exclude[0] is NULL");
    ck_assert_int_eq(pgw_schema_suffix(NULL, dup, 1, NULL, &err), PGW_EINVAL);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("schema_hash");
    TCase *tc = tcase_create("schema_hash");
    tcase_add_loop_test(tc, known_answer_vectors, 0, (int)N(vectors));
    tcase_add_test(tc, order_independent);
    tcase_add_test(tc, metadata_columns_excluded_by_default);
    tcase_add_test(tc, bad_arguments);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return pgwt_main(suite());
}
