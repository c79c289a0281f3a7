/*
 * tests/unit/check_snapshot.c — the snapshot model: builder, bounds,
 * profile modes, accessors, the JSON format, timestamps, bad input and
 * allocation failure.
 * SPDX-License-Identifier: MIT
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgw_test.h"
#include "pgwt_snap.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* 2025-11-30T09:10:44.123456Z (checked against Python's datetime). */
#define T0 1764493844123456LL

/* ------------------------------------------------------------------ */
/* timestamps                                                          */

START_TEST(timestamp_vectors)
{
    static const struct {
        long long usec;
        const char *text;
    } v[] = {
        {0, "1970-01-01T00:00:00.000000Z"},
        {T0, "2025-11-30T09:10:44.123456Z"},
        {-62135596800000000LL, "0001-01-01T00:00:00.000000Z"},
        {253402300799999999LL, "9999-12-31T23:59:59.999999Z"},
        {951782400000000LL, "2000-02-29T00:00:00.000000Z"},
        {1709164800000000LL, "2024-02-29T00:00:00.000000Z"},
        {-1, "1969-12-31T23:59:59.999999Z"},
    };
    for (size_t i = 0; i < N(v); i++) {
        char buf[PGW_TIMESTAMP_SIZE];
        ck_assert_int_eq(pgw_timestamp_format(buf, v[i].usec), PGW_OK);
        ck_assert_str_eq(buf, v[i].text);
        int64_t back = 0;
        ck_assert_int_eq(pgw_timestamp_parse(&back, v[i].text, NULL), PGW_OK);
        ck_assert_int_eq(back, v[i].usec);
    }
    char buf[PGW_TIMESTAMP_SIZE];
    ck_assert_int_eq(pgw_timestamp_format(buf, -62135596800000001LL), PGW_EINVAL);
    ck_assert_int_eq(pgw_timestamp_format(buf, 253402300800000000LL), PGW_EINVAL);
}
END_TEST

START_TEST(timestamp_parse_forms)
{
    static const struct {
        const char *text;
        long long usec;
    } ok[] = {
        {"2025-11-30T09:10:44Z", 1764493844000000LL},
        {"2025-11-30t09:10:44z", 1764493844000000LL},
        {"2025-11-30 09:10:44.5+00", 1764493844500000LL},
        {"2025-11-30T10:10:44.123456+01:00", T0},
        {"2025-11-30T04:10:44.123456-0500", T0},
        {"2025-11-30T09:10Z", 1764493800000000LL},
        {"2025-11-30", 1764460800000000LL},
    };
    for (size_t i = 0; i < N(ok); i++) {
        int64_t u = 0;
        pgw_error err;
        ck_assert_msg(pgw_timestamp_parse(&u, ok[i].text, &err) == PGW_OK, "%s: %s", ok[i].text,
                      err.message);
        ck_assert_int_eq(u, ok[i].usec);
    }
    static const struct {
        const char *text;
        const char *msg;
    } bad[] = {
        {"2023-02-29", "names an impossible date"},
        {"2025-13-01", "names an impossible date"},
        {"2025-11-30T24:00:00Z", "names an impossible time"},
        {"2025-11-30T09:10:60Z", "names an impossible time"},
        {"2025-11-30T09:10:44", "needs a time zone"},
        {"2025-11-30T09:10:44.1234567Z", "more than 6 fractional digits"},
        {"2025-11-30T09:10:44.Z", "is not an RFC 3339 timestamp"},
        {"yesterday", "is not an RFC 3339 timestamp"},
        {"", "is not an RFC 3339 timestamp"},
        {"2025-11-30T09:10:44Z trailing", "is not an RFC 3339 timestamp"},
        {"0000-01-01", "names an impossible date"},
    };
    for (size_t i = 0; i < N(bad); i++) {
        int64_t u = 42;
        pgw_error err;
        ck_assert_int_eq(pgw_timestamp_parse(&u, bad[i].text, &err), PGW_EPARSE);
        ck_assert_msg(strstr(err.message, bad[i].msg), "%s: %s", bad[i].text, err.message);
        ck_assert_int_eq(u, 42);
    }
    ck_assert_int_eq(pgw_timestamp_parse(NULL, "2025-01-01", NULL), PGW_EINVAL);
}
END_TEST

/* ------------------------------------------------------------------ */
/* builder and accessors                                               */

static const char *const sex_mcv[] = {"MALE", "FEMALE", NULL};
static const double sex_freq[] = {0.4912, 0.4797};
static const char *const bill_hist[] = {"32.1", "36.6", "39.5", "42.8", "46.1", "50.2", "59.6",
                                        NULL};

START_TEST(builder_records_everything)
{
    pgwt_col cols[] = {
        {"sex", "text", true, 0.0291, 2, sex_mcv, sex_freq, NULL},
        {"bill_length_mm", "numeric", true, 0.0058, -0.47, NULL, NULL, bill_hist},
        {"comments", "text", false, 0, 0, NULL, NULL, NULL},
    };
    pgw_snapshot *s = pgwt_snapshot_opts("penguins", "palmerpenguins", T0, 344, cols, 3, NULL);
    ck_assert_str_eq(pgw_snapshot_schema(s), "public");
    ck_assert_str_eq(pgw_snapshot_table(s), "penguins");
    ck_assert_uint_eq(pgw_snapshot_table_oid(s), 16384);
    ck_assert_str_eq(pgw_snapshot_resource(s), "palmerpenguins");
    ck_assert_str_eq(pgw_snapshot_reason(s), "manual");
    ck_assert_int_eq(pgw_snapshot_captured_at(s), T0);
    int64_t rows = 0;
    ck_assert(pgw_snapshot_row_estimate(s, &rows));
    ck_assert_int_eq(rows, 344);
    ck_assert(pgw_snapshot_stats_available(s));
    ck_assert_int_eq(pgw_snapshot_profile_mode(s), PGW_PROFILE_RAW);
    ck_assert(!pgw_snapshot_profiles_omitted(s));
    ck_assert_str_eq(pgw_snapshot_extra(s), "{}");
    ck_assert_uint_eq(pgw_snapshot_column_count(s), 3);
    const char *names[] = {"sex", "bill_length_mm", "comments"};
    char h[PGW_SCHEMA_HASH_SIZE];
    ck_assert_int_eq(pgw_schema_hash(h, names, 3, NULL, NULL), PGW_OK);
    ck_assert_str_eq(pgw_snapshot_schema_hash(s), h);
    for (size_t i = 0; i < 3; i++) {
        const pgw_column *c = pgw_snapshot_column(s, i);
        ck_assert_str_eq(c->name, names[i]);
        ck_assert_uint_eq(c->position, i + 1);
    }
    const pgw_column *sex = pgw_snapshot_column(s, 0);
    ck_assert_str_eq(sex->type, "text");
    ck_assert_ptr_nonnull(sex->profile);
    ck_assert_uint_eq(sex->profile->n_most_common, 2);
    ck_assert_str_eq(sex->profile->most_common_vals[1], "FEMALE");
    ck_assert(sex->profile->most_common_freqs[0] == 0.4912);
    ck_assert(sex->profile->null_frac == 0.0291);
    ck_assert(sex->profile->n_distinct == 2);
    ck_assert_uint_eq(sex->profile->n_histogram_bounds, 0);
    ck_assert(!sex->profile->has_correlation);
    ck_assert_uint_eq(pgw_snapshot_column(s, 1)->profile->n_histogram_bounds, 7);
    ck_assert_ptr_null(pgw_snapshot_column(s, 2)->profile);
    ck_assert_ptr_null(pgw_snapshot_column(s, 3));
    ck_assert_int_eq(pgw_snapshot_find_column(s, "comments"), 2);
    ck_assert_int_eq(pgw_snapshot_find_column(s, "Comments"), -1);
    pgw_snapshot_free(s);
    pgw_snapshot_free(NULL);
}
END_TEST

START_TEST(never_analysed_is_null_not_zero)
{
    pgwt_col cols[] = {{"a", "integer", false, 0, 0, NULL, NULL, NULL}};
    pgw_snapshot *s = pgwt_snapshot("t", T0, -1, cols, 1);
    int64_t rows = 77;
    ck_assert(!pgw_snapshot_row_estimate(s, &rows));
    ck_assert_int_eq(rows, 77);
    ck_assert(!pgw_snapshot_stats_available(s));
    pgw_snapshot_free(s);

    /* An analysed empty table: 0 rows, known. */
    s = pgwt_snapshot("t", T0, 0, cols, 1);
    ck_assert(pgw_snapshot_row_estimate(s, &rows));
    ck_assert_int_eq(rows, 0);
    pgw_snapshot_free(s);
}
END_TEST

START_TEST(bounds_cut_and_thin)
{
    /* 25 most-common values given out of order: the 20 most frequent are
     * kept, most frequent first. */
    const char *mcv[25];
    double freq[25];
    char storage[25][8];
    for (int i = 0; i < 25; i++) {
        snprintf(storage[i], sizeof storage[i], "v%02d", i);
        mcv[i] = storage[i];
        freq[i] = (double)((i * 7) % 25 + 1) / 1000.0; /* a permutation of 1..25 */
    }
    /* 101 histogram bounds: 20 kept, evenly, first and last included. */
    const char *hist[101];
    char hstore[101][8];
    for (int i = 0; i < 101; i++) {
        snprintf(hstore[i], sizeof hstore[i], "%d", i * 10);
        hist[i] = hstore[i];
    }
    pgw_snapshot_builder *b;
    ck_assert_int_eq(pgw_snapshot_builder_new(&b, NULL, NULL), PGW_OK);
    ck_assert_int_eq(pgw_snapshot_builder_set_table(b, "public", "t", 1, NULL), PGW_OK);
    ck_assert_int_eq(pgw_snapshot_builder_set_captured_at(b, T0, NULL), PGW_OK);
    pgw_column_stats st = PGW_COLUMN_STATS_INIT;
    st.most_common_vals = mcv;
    st.most_common_freqs = freq;
    st.n_most_common = 25;
    st.histogram_bounds = hist;
    st.n_histogram_bounds = 101;
    ck_assert_int_eq(pgw_snapshot_builder_add_column(b, "c", "integer", &st, NULL), PGW_OK);
    pgw_snapshot *s;
    ck_assert_int_eq(pgw_snapshot_builder_finish(&s, b, NULL), PGW_OK);
    const pgw_profile *p = pgw_snapshot_column(s, 0)->profile;
    ck_assert_uint_eq(p->n_most_common, 20);
    for (size_t k = 0; k < 20; k++)
        ck_assert_msg(fabs(p->most_common_freqs[k] - (25 - (double)k) / 1000.0) < 1e-12,
                      "freq[%zu] = %g", k, p->most_common_freqs[k]);
    /* freq 0.025 belongs to i with (7i mod 25) = 24: i = 7. */
    ck_assert_str_eq(p->most_common_vals[0], "v07");
    ck_assert_uint_eq(p->n_histogram_bounds, 20);
    ck_assert_str_eq(p->histogram_bounds[0], "0");
    ck_assert_str_eq(p->histogram_bounds[19], "1000");
    /* index round(k * 100 / 19): k = 1 -> 5, k = 10 -> 53. */
    ck_assert_str_eq(p->histogram_bounds[1], "50");
    ck_assert_str_eq(p->histogram_bounds[10], "530");
    pgw_snapshot_free(s);
    pgw_snapshot_builder_free(b);
}
END_TEST

START_TEST(values_cut_on_utf8_boundary)
{
    /* 150 'é' (2 bytes) = 300 bytes -> 60 characters = 120 bytes.
     * 100 '€' (3 bytes) = 300 bytes -> 40 characters = 120 bytes.
     * 'a' + 100 '€' = 301 bytes -> 'a' + 39 '€' = 118 bytes (never a
     * broken sequence). */
    char e2[301], e3[301], a3[302];
    for (int i = 0; i < 150; i++)
        memcpy(e2 + 2 * i, "\xC3\xA9", 2);
    e2[300] = '\0';
    for (int i = 0; i < 100; i++)
        memcpy(e3 + 3 * i, "\xE2\x82\xAC", 3);
    e3[300] = '\0';
    a3[0] = 'a';
    memcpy(a3 + 1, e3, 301);
    const char *vals[] = {e2, e3, a3, NULL};
    const double freqs[] = {0.3, 0.2, 0.1};
    pgwt_col cols[] = {{"c", "text", true, 0, 3, vals, freqs, NULL}};
    pgw_snapshot *s = pgwt_snapshot("t", T0, 10, cols, 1);
    const pgw_profile *p = pgw_snapshot_column(s, 0)->profile;
    ck_assert_uint_eq(strlen(p->most_common_vals[0]), 120);
    ck_assert_uint_eq(strlen(p->most_common_vals[1]), 120);
    ck_assert_uint_eq(strlen(p->most_common_vals[2]), 118);
    ck_assert(strncmp(p->most_common_vals[0], e2, 120) == 0);
    ck_assert(strncmp(p->most_common_vals[2], a3, 118) == 0);
    pgw_snapshot_free(s);

    /* Options change the bounds. */
    pgw_snapshot_options o = PGW_SNAPSHOT_OPTIONS_INIT;
    o.max_value_bytes = 5;
    o.max_values = 2;
    s = pgwt_snapshot_opts("t", NULL, T0, 10, cols, 1, &o);
    p = pgw_snapshot_column(s, 0)->profile;
    ck_assert_uint_eq(p->n_most_common, 2);
    ck_assert_str_eq(p->most_common_vals[0], "\xC3\xA9\xC3\xA9");
    ck_assert_str_eq(p->most_common_vals[1], "\xE2\x82\xAC");
    pgw_snapshot_free(s);
}
END_TEST

START_TEST(profiles_omitted_above_300_columns)
{
    static const char *const vals[] = {"x", "y", NULL};
    static const double freqs[] = {0.5, 0.5};
    pgwt_col cols[301];
    char names[301][16];
    for (int i = 0; i < 301; i++) {
        snprintf(names[i], sizeof names[i], "c%03d", i);
        cols[i] = (pgwt_col){names[i], "text", true, 0, 2, vals, freqs, NULL};
    }
    pgw_snapshot *s = pgwt_snapshot("wide", T0, 100, cols, 300);
    ck_assert(!pgw_snapshot_profiles_omitted(s));
    ck_assert_ptr_nonnull(pgw_snapshot_column(s, 299)->profile);
    pgw_snapshot_free(s);
    s = pgwt_snapshot("wide", T0, 100, cols, 301);
    ck_assert(pgw_snapshot_profiles_omitted(s));
    ck_assert(pgw_snapshot_stats_available(s));
    ck_assert_uint_eq(pgw_snapshot_column_count(s), 301);
    for (size_t i = 0; i < 301; i++) {
        ck_assert_ptr_null(pgw_snapshot_column(s, i)->profile);
        ck_assert_str_eq(pgw_snapshot_column(s, i)->name, names[i]);
    }
    pgw_snapshot_free(s);
}
END_TEST

START_TEST(profile_modes)
{
    pgwt_col cols[] = {{"sex", "text", true, 0.03, 2, sex_mcv, sex_freq, NULL}};
    pgw_snapshot_options o = PGW_SNAPSHOT_OPTIONS_INIT;
    o.profile_mode = PGW_PROFILE_HASHED;
    pgw_snapshot *s = pgwt_snapshot_opts("t", NULL, T0, 10, cols, 1, &o);
    const pgw_profile *p = pgw_snapshot_column(s, 0)->profile;
    ck_assert_int_eq(pgw_snapshot_profile_mode(s), PGW_PROFILE_HASHED);
    /* XXH3-64 of "MALE" and "FEMALE" (xxhsum -H3). */
    ck_assert_str_eq(p->most_common_vals[0], "fc82d36c8d378e1e");
    ck_assert_str_eq(p->most_common_vals[1], "89eec9a0219d975a");
    ck_assert(p->null_frac == 0.03);
    pgw_snapshot_free(s);

    o.profile_mode = PGW_PROFILE_NONE;
    s = pgwt_snapshot_opts("t", NULL, T0, 10, cols, 1, &o);
    ck_assert_ptr_null(pgw_snapshot_column(s, 0)->profile);
    ck_assert(pgw_snapshot_stats_available(s));
    pgw_snapshot_free(s);
}
END_TEST

START_TEST(extra_is_canonical_object)
{
    pgw_snapshot_builder *b;
    pgw_error err;
    ck_assert_int_eq(pgw_snapshot_builder_new(&b, NULL, NULL), PGW_OK);
    ck_assert_int_eq(pgw_snapshot_builder_set_extra(b, " { \"alive\" : true ,\"n\":[1, 2] } ",
                                                    &err),
                     PGW_OK);
    ck_assert_int_eq(pgw_snapshot_builder_set_extra(b, "[1]", &err), PGW_EPARSE);
    ck_assert_str_eq(err.message, "extra must be a JSON object");
    ck_assert_int_eq(pgw_snapshot_builder_set_extra(b, "{\"a\":", &err), PGW_EPARSE);
    ck_assert_int_eq(pgw_snapshot_builder_set_table(b, "s", "t", 0, NULL), PGW_OK);
    ck_assert_int_eq(pgw_snapshot_builder_set_captured_at(b, T0, NULL), PGW_OK);
    ck_assert_int_eq(pgw_snapshot_builder_set_reason(b, PGW_REASON_BASELINE, NULL), PGW_OK);
    pgw_snapshot *s;
    ck_assert_int_eq(pgw_snapshot_builder_finish(&s, b, NULL), PGW_OK);
    ck_assert_str_eq(pgw_snapshot_extra(s), "{\"alive\":true,\"n\":[1,2]}");
    ck_assert_str_eq(pgw_snapshot_reason(s), "baseline");
    ck_assert_uint_eq(pgw_snapshot_column_count(s), 0);
    ck_assert_str_eq(pgw_snapshot_schema_hash(s), "2d06800538d394c2");
    pgw_snapshot_free(s);
    /* The builder was emptied and builds again. */
    ck_assert_int_eq(pgw_snapshot_builder_finish(&s, b, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message,
                     "the snapshot's table was not set (pgw_snapshot_builder_set_table)");
    pgw_snapshot_builder_free(b);
}
END_TEST

START_TEST(bad_builder_input)
{
    pgw_snapshot_builder *b;
    pgw_error err;
    pgw_snapshot_options o = PGW_SNAPSHOT_OPTIONS_INIT;
    o.max_values = 1;
    ck_assert_int_eq(pgw_snapshot_builder_new(&b, &o, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "snapshot options: max_values 1 is outside [2, 10000]");
    o = (pgw_snapshot_options)PGW_SNAPSHOT_OPTIONS_INIT;
    o.profile_mode = (pgw_profile_mode)7;
    ck_assert_int_eq(pgw_snapshot_builder_new(&b, &o, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_snapshot_builder_new(NULL, NULL, &err), PGW_EINVAL);

    ck_assert_int_eq(pgw_snapshot_builder_new(&b, NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_snapshot_builder_set_table(b, "", "t", 0, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "schema name is empty");
    ck_assert_int_eq(pgw_snapshot_builder_set_table(b, "s", "\xff", 0, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "table name is not valid UTF-8");
    ck_assert_int_eq(pgw_snapshot_builder_set_table(b, "s", NULL, 0, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_snapshot_builder_set_reason(b, "", &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_snapshot_builder_set_resource(b, "", &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_snapshot_builder_set_captured_at(b, INT64_MAX, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_snapshot_builder_set_reltuples(b, NAN, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_snapshot_builder_set_reltuples(b, INFINITY, &err), PGW_EINVAL);

    ck_assert_int_eq(pgw_snapshot_builder_add_column(b, "a", "integer", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_snapshot_builder_add_column(b, "a", "text", NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "column name \"a\" appears twice");
    ck_assert_int_eq(pgw_snapshot_builder_add_column(b, "b", "", NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "column type is empty");
    ck_assert_int_eq(pgw_snapshot_builder_add_column(b, "bad\xc3", "text", NULL, &err),
                     PGW_EINVAL);
    ck_assert_str_eq(err.message, "column name is not valid UTF-8");

    pgw_column_stats st = PGW_COLUMN_STATS_INIT;
    st.null_frac = 1.5;
    ck_assert_int_eq(pgw_snapshot_builder_add_column(b, "c", "text", &st, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "column \"c\": null_frac 1.5 is outside [0, 1]");
    st.null_frac = NAN;
    ck_assert_int_eq(pgw_snapshot_builder_add_column(b, "c", "text", &st, &err), PGW_EINVAL);
    st = (pgw_column_stats)PGW_COLUMN_STATS_INIT;
    st.n_distinct = -2;
    ck_assert_int_eq(pgw_snapshot_builder_add_column(b, "c", "text", &st, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "column \"c\": n_distinct -2 is below -1");
    st = (pgw_column_stats)PGW_COLUMN_STATS_INIT;
    st.has_correlation = true;
    st.correlation = 1.01;
    ck_assert_int_eq(pgw_snapshot_builder_add_column(b, "c", "text", &st, &err), PGW_EINVAL);
    st = (pgw_column_stats)PGW_COLUMN_STATS_INIT;
    st.n_most_common = 2;
    ck_assert_int_eq(pgw_snapshot_builder_add_column(b, "c", "text", &st, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "column \"c\": n_most_common is 2 but the arrays are NULL");
    const char *vals[] = {"x", NULL};
    const double freqs[] = {0.5, -0.1};
    st.most_common_vals = vals;
    st.most_common_freqs = freqs;
    ck_assert_int_eq(pgw_snapshot_builder_add_column(b, "c", "text", &st, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "column \"c\": most_common_freqs[1] -0.1 is outside [0, 1]");
    const double freqs2[] = {0.5, 0.1};
    st.most_common_freqs = freqs2;
    ck_assert_int_eq(pgw_snapshot_builder_add_column(b, "c", "text", &st, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "column \"c\": most_common_vals[1] is NULL");
    const char *badvals[] = {"ok", "\xe2\x82"};
    st.most_common_vals = badvals;
    ck_assert_int_eq(pgw_snapshot_builder_add_column(b, "c", "text", &st, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "column \"c\": most_common_vals[1] is not valid UTF-8");

    /* None of the failures changed the builder: the next column is 2nd. */
    ck_assert_int_eq(pgw_snapshot_builder_add_column(b, "c", "text", NULL, &err), PGW_OK);
    pgw_snapshot *s;
    ck_assert_int_eq(pgw_snapshot_builder_finish(&s, b, &err), PGW_EINVAL); /* no table */
    ck_assert_int_eq(pgw_snapshot_builder_set_table(b, "s", "t", 0, &err), PGW_OK);
    ck_assert_int_eq(pgw_snapshot_builder_finish(&s, b, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message,
                     "the snapshot's captured_at was not set (pgw_snapshot_builder_set_captured_at)");
    ck_assert_int_eq(pgw_snapshot_builder_set_captured_at(b, T0, &err), PGW_OK);
    ck_assert_int_eq(pgw_snapshot_builder_finish(&s, b, &err), PGW_OK);
    ck_assert_uint_eq(pgw_snapshot_column_count(s), 2);
    ck_assert_str_eq(pgw_snapshot_column(s, 1)->name, "c");
    ck_assert_uint_eq(pgw_snapshot_column(s, 1)->position, 2);
    pgw_snapshot_free(s);
    pgw_snapshot_builder_free(b);
}
END_TEST

START_TEST(at_most_1600_columns)
{
    pgw_snapshot_builder *b;
    pgw_error err;
    ck_assert_int_eq(pgw_snapshot_builder_new(&b, NULL, NULL), PGW_OK);
    char name[16];
    for (int i = 0; i < 1600; i++) {
        snprintf(name, sizeof name, "c%d", i);
        ck_assert_int_eq(pgw_snapshot_builder_add_column(b, name, "int4", NULL, &err), PGW_OK);
    }
    ck_assert_int_eq(pgw_snapshot_builder_add_column(b, "one_more", "int4", NULL, &err),
                     PGW_EINVAL);
    ck_assert_str_eq(err.message,
                     "a table has at most 1600 columns (PostgreSQL's MaxHeapAttributeNumber)");
    pgw_snapshot_builder_free(b);
}
END_TEST

START_TEST(add_column_from_profile_json)
{
    pgw_snapshot_builder *b;
    pgw_error err;
    ck_assert_int_eq(pgw_snapshot_builder_new(&b, NULL, NULL), PGW_OK);
    ck_assert_int_eq(pgw_snapshot_builder_set_table(b, "s", "t", 0, NULL), PGW_OK);
    ck_assert_int_eq(pgw_snapshot_builder_set_captured_at(b, T0, NULL), PGW_OK);
    /* 30 most-common values and 101 bounds: thinned like add_column. */
    char json[8192];
    int n = snprintf(json, sizeof json, "{\"null_frac\": 0.1, \"n_distinct\": -0.5, "
                                        "\"avg_width\": 4, \"most_common_vals\": [");
    for (int i = 0; i < 30; i++)
        n += snprintf(json + n, sizeof json - (size_t)n, "%s\"v%d\"", i ? "," : "", i);
    n += snprintf(json + n, sizeof json - (size_t)n, "], \"most_common_freqs\": [");
    for (int i = 0; i < 30; i++)
        n += snprintf(json + n, sizeof json - (size_t)n, "%s%g", i ? "," : "", 0.03 - i * 0.0005);
    n += snprintf(json + n, sizeof json - (size_t)n, "], \"histogram_bounds\": [");
    for (int i = 0; i <= 100; i++)
        n += snprintf(json + n, sizeof json - (size_t)n, "%s\"%d\"", i ? "," : "", i);
    snprintf(json + n, sizeof json - (size_t)n, "], \"correlation\": null}");
    ck_assert_int_eq(pgw_snapshot_builder_add_column_json(b, "c", "integer", json, &err), PGW_OK);
    ck_assert_int_eq(pgw_snapshot_builder_add_column_json(b, "d", "text", NULL, &err), PGW_OK);
    ck_assert_int_eq(pgw_snapshot_builder_add_column_json(b, "e", "text", "{\"null_frac\": 0}",
                                                          &err),
                     PGW_EPARSE);
    ck_assert_str_eq(err.path, "$.n_distinct");
    ck_assert_int_eq(pgw_snapshot_builder_add_column_json(b, "e", "text", "[]", &err), PGW_EPARSE);
    ck_assert_str_eq(err.message, "$: expected an object, found an array");
    pgw_snapshot *s;
    ck_assert_int_eq(pgw_snapshot_builder_finish(&s, b, &err), PGW_OK);
    ck_assert_uint_eq(pgw_snapshot_column_count(s), 2);
    const pgw_profile *p = pgw_snapshot_column(s, 0)->profile;
    ck_assert_uint_eq(p->n_most_common, 20);
    ck_assert_str_eq(p->most_common_vals[19], "v19");
    ck_assert_uint_eq(p->n_histogram_bounds, 20);
    ck_assert_str_eq(p->histogram_bounds[19], "100");
    ck_assert(p->null_frac == 0.1 && p->n_distinct == -0.5 && !p->has_correlation);
    ck_assert_ptr_null(pgw_snapshot_column(s, 1)->profile);
    pgw_snapshot_free(s);
    pgw_snapshot_builder_free(b);
}
END_TEST

/* ------------------------------------------------------------------ */
/* JSON                                                                */

/* The format pinned byte for byte: a change here is a format change. */
static const char *const expected_json =
    "{\"format\":1,\"schema\":\"public\",\"table\":\"penguins\",\"table_oid\":16384,"
    "\"resource_identity\":\"palmerpenguins\",\"reason\":\"manual\","
    "\"captured_at\":\"2025-11-30T09:10:44.123456Z\",\"row_estimate\":344,"
    "\"stats_available\":true,\"profile_mode\":\"raw\",\"profiles_omitted\":false,"
    "\"schema_hash\":\"%s\",\"extra\":{},\"columns\":["
    "{\"name\":\"sex\",\"type\":\"text\",\"position\":1,\"profile\":{\"null_frac\":0.0291,"
    "\"n_distinct\":2.0,\"avg_width\":8,\"most_common_vals\":[\"MALE\",\"FEMALE\"],"
    "\"most_common_freqs\":[0.4912,0.4797],\"histogram_bounds\":[],\"correlation\":null}},"
    "{\"name\":\"bill_length_mm\",\"type\":\"numeric\",\"position\":2,\"profile\":{"
    "\"null_frac\":0.0058,\"n_distinct\":-0.47,\"avg_width\":8,\"most_common_vals\":[],"
    "\"most_common_freqs\":[],\"histogram_bounds\":[\"32.1\",\"36.6\",\"39.5\",\"42.8\","
    "\"46.1\",\"50.2\",\"59.6\"],\"correlation\":null}},"
    "{\"name\":\"comments\",\"type\":\"text\",\"position\":3,\"profile\":null}]}";

static pgw_snapshot *penguin_snapshot(void)
{
    pgwt_col cols[] = {
        {"sex", "text", true, 0.0291, 2, sex_mcv, sex_freq, NULL},
        {"bill_length_mm", "numeric", true, 0.0058, -0.47, NULL, NULL, bill_hist},
        {"comments", "text", false, 0, 0, NULL, NULL, NULL},
    };
    return pgwt_snapshot_opts("penguins", "palmerpenguins", T0, 344, cols, 3, NULL);
}

START_TEST(json_exact_form_and_round_trip)
{
    pgw_snapshot *s = penguin_snapshot();
    char *json = NULL;
    size_t len = 0;
    ck_assert_int_eq(pgw_snapshot_to_json(&json, &len, s, 0, NULL), PGW_OK);
    char want[4096];
    snprintf(want, sizeof want, expected_json, pgw_snapshot_schema_hash(s));
    ck_assert_str_eq(json, want);
    ck_assert_uint_eq(len, strlen(want));

    pgw_snapshot *back = NULL;
    pgw_error err;
    ck_assert_msg(pgw_snapshot_from_json(&back, json, len, NULL, &err) == PGW_OK, "%s at %s",
                  err.message, err.path);
    char *again = NULL;
    ck_assert_int_eq(pgw_snapshot_to_json(&again, NULL, back, 0, NULL), PGW_OK);
    ck_assert_str_eq(again, json);
    /* Pretty output decodes to the same snapshot. */
    char *pretty = NULL;
    ck_assert_int_eq(pgw_snapshot_to_json(&pretty, &len, s, PGW_JSON_PRETTY, NULL), PGW_OK);
    ck_assert(strchr(pretty, '\n') != NULL);
    pgw_snapshot *back2 = NULL;
    ck_assert_int_eq(pgw_snapshot_from_json(&back2, pretty, len, NULL, NULL), PGW_OK);
    char *again2 = NULL;
    ck_assert_int_eq(pgw_snapshot_to_json(&again2, NULL, back2, 0, NULL), PGW_OK);
    ck_assert_str_eq(again2, json);
    ck_assert_int_eq(pgw_snapshot_to_json(&again2, NULL, back2, 4, &err), PGW_EINVAL);
    pgw_free(json);
    pgw_free(again);
    pgw_free(pretty);
    pgw_free(again2);
    pgw_snapshot_free(s);
    pgw_snapshot_free(back);
    pgw_snapshot_free(back2);
}
END_TEST

static void round_trip(pgw_snapshot *s)
{
    char *json = NULL, *again = NULL;
    size_t len;
    pgw_error err;
    ck_assert_int_eq(pgw_snapshot_to_json(&json, &len, s, 0, NULL), PGW_OK);
    pgw_snapshot *back = NULL;
    ck_assert_msg(pgw_snapshot_from_json(&back, json, len, NULL, &err) == PGW_OK, "%s at %s",
                  err.message, err.path);
    ck_assert_int_eq(pgw_snapshot_to_json(&again, NULL, back, 0, NULL), PGW_OK);
    ck_assert_str_eq(again, json);
    ck_assert_str_eq(pgw_snapshot_schema_hash(back), pgw_snapshot_schema_hash(s));
    pgw_free(json);
    pgw_free(again);
    pgw_snapshot_free(back);
    pgw_snapshot_free(s);
}

START_TEST(json_round_trips_every_mode)
{
    pgwt_col cols[] = {
        {"\xEF\xBB\xBFtitle", "text", true, 0.0291, 2, sex_mcv, sex_freq, NULL},
        {"名前 (mm)", "numeric(10,2)", true, 0.0058, -0.47, NULL, NULL, bill_hist},
        {"a\"b; drop table x; --", "text", false, 0, 0, NULL, NULL, NULL},
    };
    round_trip(pgwt_snapshot_opts("CamelCase", "urn:x", T0, -1, cols, 3, NULL));
    pgw_snapshot_options o = PGW_SNAPSHOT_OPTIONS_INIT;
    o.profile_mode = PGW_PROFILE_HASHED;
    round_trip(pgwt_snapshot_opts("t", NULL, T0, 0, cols, 3, &o));
    o.profile_mode = PGW_PROFILE_NONE;
    round_trip(pgwt_snapshot_opts("t", NULL, T0, 5, cols, 3, &o));
    pgwt_col wide[301];
    char names[301][8];
    for (int i = 0; i < 301; i++) {
        snprintf(names[i], sizeof names[i], "c%d", i);
        wide[i] = (pgwt_col){names[i], "text", true, 0, 2, sex_mcv, sex_freq, NULL};
    }
    round_trip(pgwt_snapshot("wide", T0, 1, wide, 301));
}
END_TEST

typedef struct bad_doc {
    const char *from; /* text to replace in the canonical document */
    const char *to;
    int code;
    const char *path;
    const char *msg;
} bad_doc;

static char *replace(const char *doc, const char *from, const char *to)
{
    const char *p = strstr(doc, from);
    ck_assert_msg(p != NULL, "fixture: '%s' not in document", from);
    size_t n = strlen(doc) - strlen(from) + strlen(to);
    char *out = malloc(n + 1);
    size_t pre = (size_t)(p - doc);
    memcpy(out, doc, pre);
    strcpy(out + pre, to);
    strcat(out, p + strlen(from));
    return out;
}

START_TEST(json_strict_errors)
{
    pgw_snapshot *s = penguin_snapshot();
    char *json = NULL;
    size_t len = 0;
    ck_assert_int_eq(pgw_snapshot_to_json(&json, &len, s, 0, NULL), PGW_OK);
    static const bad_doc cases[] = {
        {"\"format\":1", "\"format\":2", PGW_EVERSION, "$.format", "snapshot format 2 is not supported"},
        {"\"format\":1", "\"format\":\"1\"", PGW_EPARSE, "$.format", "expected an integer, found a string"},
        {"\"format\":1,", "", PGW_EPARSE, "$.format", "missing key \"format\""},
        {"\"extra\":{}", "\"extra\":{},\"surprise\":1", PGW_EPARSE, "$.surprise", "unknown key \"surprise\""},
        {"\"extra\":{}", "\"extra\":[]", PGW_EPARSE, "$.extra", "expected an object, found an array"},
        {"\"table_oid\":16384", "\"table_oid\":-1", PGW_EPARSE, "$.table_oid", "is outside"},
        {"\"table\":\"penguins\"", "\"table\":\"\"", PGW_EPARSE, "$", "table name is empty"},
        {"\"position\":2", "\"position\":3", PGW_EPARSE, "$.columns[1].position", "position 3, expected 2"},
        {"\"name\":\"bill_length_mm\"", "\"name\":\"sex\"", PGW_EPARSE, "$.columns[1]", "column name \"sex\" appears twice"},
        {"\"most_common_freqs\":[0.4912,0.4797]", "\"most_common_freqs\":[0.4912]", PGW_EPARSE, "$.columns[0].profile.most_common_freqs", "1 frequencies for 2 most_common_vals"},
        {"\"most_common_freqs\":[0.4912,0.4797]", "\"most_common_freqs\":[0.4912,1.5]", PGW_EPARSE, "$.columns[0].profile.most_common_freqs[1]", "is outside [0, 1]"},
        {"\"null_frac\":0.0291", "\"null_frac\":null", PGW_EPARSE, "$.columns[0].profile.null_frac", "expected a number, found null"},
        {"\"correlation\":null}},{\"name\":\"bill", "\"correlation\":null,\"x\":1}},{\"name\":\"bill", PGW_EPARSE, "$.columns[0].profile.x", "unknown key"},
        {"\"MALE\"", "\"MALE\\u0000\"", PGW_EPARSE, "$", "\\u0000"},
        {"\"profile_mode\":\"raw\"", "\"profile_mode\":\"hashed\"", PGW_EPARSE, "$.columns[0]", "is not a 16-hex-digit hash"},
        {"\"profile_mode\":\"raw\"", "\"profile_mode\":\"none\"", PGW_EPARSE, "$.columns[0]", "has a profile, but profile_mode is none"},
        {"\"profile_mode\":\"raw\"", "\"profile_mode\":\"fancy\"", PGW_EPARSE, "$.profile_mode", "is not raw, hashed or none"},
        {"\"profiles_omitted\":false", "\"profiles_omitted\":true", PGW_EPARSE, "$", "profiles_omitted is true, but columns carry profiles"},
        {"\"captured_at\":\"2025-11-30T09:10:44.123456Z\"", "\"captured_at\":\"2025-02-30\"", PGW_EPARSE, "$.captured_at", "impossible date"},
        {"\"schema_hash\":\"", "\"schema_hash\":\"X", PGW_EPARSE, "$.schema_hash", "expected 16 lowercase hex digits"},
        {"\"row_estimate\":344", "\"row_estimate\":-5", PGW_EPARSE, "$.row_estimate", "is outside"},
        {"\"columns\":[", "\"columns\":{\"x\":", PGW_EPARSE, "$", "invalid JSON"},
        {"\"MALE\"", "\"\xff\"", PGW_EPARSE, "$", "unable to decode byte 0xff"},
        {"\"reason\":\"manual\"", "\"reason\":\"manual\",\"reason\":\"manual\"", PGW_EPARSE, "$", "duplicate object key"},
    };
    for (size_t i = 0; i < N(cases); i++) {
        char *doc = replace(json, cases[i].from, cases[i].to);
        pgw_snapshot *out = (pgw_snapshot *)0x1;
        pgw_error err;
        pgw_error_clear(&err);
        int rc = pgw_snapshot_from_json(&out, doc, strlen(doc), NULL, &err);
        ck_assert_msg(rc == cases[i].code, "case %zu: rc %d (%s)", i, rc, err.message);
        ck_assert_ptr_eq(out, (pgw_snapshot *)0x1);
        ck_assert_msg(strcmp(err.path, cases[i].path) == 0, "case %zu: path '%s' want '%s' (%s)",
                      i, err.path, cases[i].path, err.message);
        ck_assert_msg(strstr(err.message, cases[i].msg) != NULL, "case %zu: '%s' not in '%s'",
                      i, cases[i].msg, err.message);
        free(doc);
    }
    /* Every truncation of a valid document fails cleanly. */
    for (size_t cut = 0; cut < len; cut++) {
        pgw_snapshot *out = NULL;
        ck_assert_int_eq(pgw_snapshot_from_json(&out, json, cut, NULL, NULL), PGW_EPARSE);
        ck_assert_ptr_null(out);
    }
    /* Bounds: tighter options turn the stored document into an error. */
    pgw_snapshot_options o = PGW_SNAPSHOT_OPTIONS_INIT;
    o.max_values = 5;
    pgw_error err;
    pgw_snapshot *out = NULL;
    ck_assert_int_eq(pgw_snapshot_from_json(&out, json, len, &o, &err), PGW_EPARSE);
    ck_assert_str_eq(err.path, "$.columns[1].profile.histogram_bounds");
    ck_assert_str_eq(err.message,
                     "$.columns[1].profile.histogram_bounds: 7 values, more than the bound of 5");
    o = (pgw_snapshot_options)PGW_SNAPSHOT_OPTIONS_INIT;
    o.max_value_bytes = 5;
    ck_assert_int_eq(pgw_snapshot_from_json(&out, json, len, &o, &err), PGW_EPARSE);
    ck_assert_str_eq(err.path, "$.columns[0]");
    ck_assert_str_eq(err.message, "$.columns[0]: column \"sex\": most_common_vals[1] is 6 "
                                  "bytes, more than 5");
    /* Oversized. */
    size_t big = PGW_SNAPSHOT_JSON_MAX_BYTES + 1;
    char *huge = malloc(big);
    memset(huge, ' ', big);
    ck_assert_int_eq(pgw_snapshot_from_json(&out, huge, big, NULL, &err), PGW_EPARSE);
    ck_assert(strstr(err.message, "exceeds the limit of 8388608 bytes") != NULL);
    free(huge);
    ck_assert_int_eq(pgw_snapshot_from_json(&out, NULL, 0, NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "snapshot_from_json: json is NULL");
    pgw_free(json);
    pgw_snapshot_free(s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* allocation failure                                                  */

/* Runs fn with the Nth allocation failing, for every N until it
 * succeeds: each failure must be PGW_ENOMEM and leak nothing. */
static void every_failure(int (*fn)(void *), void *arg, void (*cleanup)(void *))
{
    pgwt_alloc_install();
    size_t n;
    for (n = 1; n < 100000; n++) {
        pgwt_alloc_fail_at(n);
        int rc = fn(arg);
        bool failed = pgwt_alloc_failed();
        pgwt_alloc_fail_at(0);
        if (!failed) {
            ck_assert_int_eq(rc, PGW_OK);
            cleanup(arg);
            break;
        }
        ck_assert_msg(rc == PGW_ENOMEM, "allocation %zu failed but rc = %d", n, rc);
        ck_assert_msg(pgwt_alloc_get().live == 0, "allocation %zu: %zu blocks leaked", n,
                      pgwt_alloc_get().live);
    }
    ck_assert_uint_eq(pgwt_alloc_get().live, 0);
    ck_assert_uint_gt(n, 3);
    pgwt_alloc_uninstall();
}

typedef struct ctx {
    pgw_snapshot *s;
    char *json;
    size_t len;
    pgw_snapshot *out;
    char *text;
} ctx;

/* A snapshot whose profiles take every preparation path: text values,
 * a number with MCVs and a histogram (a CDF and its normalised copy), a
 * temporal column, and the frequency profile; in `mode`. */
static int build_mode(ctx *c, pgw_profile_mode mode)
{
    pgw_snapshot_options o = PGW_SNAPSHOT_OPTIONS_INIT;
    o.profile_mode = mode;
    pgw_snapshot_builder *b = NULL;
    pgw_error err;
    int rc = pgw_snapshot_builder_new(&b, &o, &err);
    if (rc)
        return rc;
    static const char *const hv[] = {"1", "2", "3"};
    pgw_column_stats st = PGW_COLUMN_STATS_INIT;
    st.most_common_vals = sex_mcv;
    st.most_common_freqs = sex_freq;
    st.n_most_common = 2;
    st.histogram_bounds = hv;
    st.n_histogram_bounds = 3;
    static const char *const nm[] = {"0", "1"}, *const nh[] = {"2", "5", "9", "40"};
    static const double nf[] = {0.3, 0.2};
    pgw_column_stats sn = PGW_COLUMN_STATS_INIT;
    sn.n_distinct = -0.1;
    sn.most_common_vals = nm;
    sn.most_common_freqs = nf;
    sn.n_most_common = 2;
    sn.histogram_bounds = nh;
    sn.n_histogram_bounds = 4;
    static const char *const th[] = {"2019-01-01 00:04:05", "2019-01-09 10:00:00",
                                     "2019-01-31 23:59:58"};
    pgw_column_stats stt = PGW_COLUMN_STATS_INIT;
    stt.n_distinct = -1;
    stt.histogram_bounds = th;
    stt.n_histogram_bounds = 3;
    if (!(rc = pgw_snapshot_builder_set_table(b, "public", "t", 1, &err)) &&
        !(rc = pgw_snapshot_builder_set_resource(b, "r", &err)) &&
        !(rc = pgw_snapshot_builder_set_reason(b, "manual", &err)) &&
        !(rc = pgw_snapshot_builder_set_extra(b, "{\"alive\":true}", &err)) &&
        !(rc = pgw_snapshot_builder_set_captured_at(b, T0, &err)) &&
        !(rc = pgw_snapshot_builder_set_reltuples(b, 1000, &err)) &&
        !(rc = pgw_snapshot_builder_add_column(b, "a", "text", &st, &err)) &&
        !(rc = pgw_snapshot_builder_add_column(b, "b", "integer", NULL, &err)) &&
        !(rc = pgw_snapshot_builder_add_column(b, "n", "integer", &sn, &err)) &&
        !(rc = pgw_snapshot_builder_add_column(b, "ts", "timestamp", &stt, &err)))
        rc = pgw_snapshot_builder_finish(&c->out, b, &err);
    pgw_snapshot_builder_free(b);
    return rc;
}

static int build_once(void *arg)
{
    return build_mode(arg, PGW_PROFILE_RAW);
}

static int build_hashed_once(void *arg)
{
    return build_mode(arg, PGW_PROFILE_HASHED);
}

static void free_out(void *arg)
{
    ctx *c = arg;
    pgw_snapshot_free(c->out);
    c->out = NULL;
    pgw_free(c->text);
    c->text = NULL;
}

static int decode_once(void *arg)
{
    ctx *c = arg;
    return pgw_snapshot_from_json(&c->out, c->json, c->len, NULL, NULL);
}

static int encode_once(void *arg)
{
    ctx *c = arg;
    return pgw_snapshot_to_json(&c->text, NULL, c->s, 0, NULL);
}

START_TEST(allocation_failures)
{
    ctx c = {0};
    every_failure(build_once, &c, free_out);
    every_failure(build_hashed_once, &c, free_out);
    c.s = penguin_snapshot();
    ck_assert_int_eq(pgw_snapshot_to_json(&c.json, &c.len, c.s, 0, NULL), PGW_OK);
    every_failure(decode_once, &c, free_out);
    every_failure(encode_once, &c, free_out);
    pgw_free(c.json);
    pgw_snapshot_free(c.s);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("snapshot");
    TCase *tc = tcase_create("snapshot");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, timestamp_vectors);
    tcase_add_test(tc, timestamp_parse_forms);
    tcase_add_test(tc, builder_records_everything);
    tcase_add_test(tc, never_analysed_is_null_not_zero);
    tcase_add_test(tc, bounds_cut_and_thin);
    tcase_add_test(tc, values_cut_on_utf8_boundary);
    tcase_add_test(tc, profiles_omitted_above_300_columns);
    tcase_add_test(tc, profile_modes);
    tcase_add_test(tc, extra_is_canonical_object);
    tcase_add_test(tc, bad_builder_input);
    tcase_add_test(tc, at_most_1600_columns);
    tcase_add_test(tc, add_column_from_profile_json);
    tcase_add_test(tc, json_exact_form_and_round_trip);
    tcase_add_test(tc, json_round_trips_every_mode);
    tcase_add_test(tc, json_strict_errors);
    tcase_add_test(tc, allocation_failures);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return pgwt_main(suite());
}
