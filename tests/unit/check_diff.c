/*
 * tests/unit/check_diff.c — profile_similarity and diff_snapshots: the nine
 * cases of issue 3 with their exact results, type synonyms, the similarity
 * formula on hand-computed profiles, the diff JSON, bad input and
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
#define T0 1764493844123456LL
#define T1 (T0 + 86400000000LL)

static pgw_diff *diff(const pgw_snapshot *a, const pgw_snapshot *b)
{
    pgw_diff *d = NULL;
    pgw_error err;
    ck_assert_msg(pgw_diff_snapshots(&d, a, b, NULL, &err) == PGW_OK, "%s", err.message);
    return d;
}

static double sim(const pgw_snapshot *a, size_t i, const pgw_snapshot *b, size_t j)
{
    double s1 = -1, s2 = -1;
    ck_assert_int_eq(pgw_profile_similarity(&s1, NULL, a, i, b, j, NULL), PGW_OK);
    ck_assert_int_eq(pgw_profile_similarity(&s2, NULL, b, j, a, i, NULL), PGW_OK);
    ck_assert_msg(s1 == s2, "not symmetric: %.17g vs %.17g", s1, s2);
    ck_assert(s1 >= 0.0 && s1 <= 1.0);
    return s1;
}

static const char *const ab_vals[] = {"A", "B", NULL};
static const char *const cd_vals[] = {"C", "D", NULL};
static const double half[] = {0.5, 0.5};

/* Case 1: t(col1 text) -> t(new_col1 text), same values. */
START_TEST(case1_rename_from_values)
{
    pgwt_col a[] = {{"col1", "text", true, 0, 2, ab_vals, half, NULL}};
    pgwt_col b[] = {{"new_col1", "text", true, 0, 2, ab_vals, half, NULL}};
    pgw_snapshot *sa = pgwt_snapshot("t", T0, 100, a, 1), *sb = pgwt_snapshot("t", T1, 100, b, 1);
    pgw_diff *d = diff(sa, sb);
    ck_assert(pgw_diff_schema_changed(d));
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 1);
    const pgw_rename *r = pgw_diff_renamed(d, 0);
    ck_assert_str_eq(r->from, "col1");
    ck_assert_str_eq(r->to, "new_col1");
    ck_assert(r->score == 1.0);
    ck_assert_int_eq(r->evidence, PGW_EVIDENCE_VALUES);
    ck_assert_uint_eq(pgw_diff_added_count(d), 0);
    ck_assert_uint_eq(pgw_diff_removed_count(d), 0);
    ck_assert_uint_eq(pgw_diff_type_changed_count(d), 0);
    ck_assert_uint_eq(pgw_diff_profile_changed_count(d), 0);
    ck_assert(!pgw_diff_reordered(d));
    ck_assert_int_eq(pgw_diff_class(d), PGW_CHANGE_RENAMED);

    /* The diff document, byte for byte. */
    char *json;
    ck_assert_int_eq(pgw_diff_to_json(&json, NULL, d, 0, NULL), PGW_OK);
    char want[2048];
    snprintf(want, sizeof want,
             "{\"format\":1,\"from\":{\"schema\":\"public\",\"table\":\"t\","
             "\"resource_identity\":null,\"captured_at\":\"2025-11-30T09:10:44.123456Z\","
             "\"schema_hash\":\"%s\"},\"to\":{\"schema\":\"public\",\"table\":\"t\","
             "\"resource_identity\":null,\"captured_at\":\"2025-12-01T09:10:44.123456Z\","
             "\"schema_hash\":\"%s\"},\"schema_changed\":true,\"class\":\"renamed\","
             "\"added\":[],\"removed\":[],\"type_changed\":[],\"reordered\":false,"
             "\"renamed_candidates\":[{\"from\":\"col1\",\"to\":\"new_col1\","
             "\"from_type\":\"text\",\"to_type\":\"text\",\"score\":1.0,"
             "\"evidence\":\"values\"}],\"profile_changed\":[],"
             "\"row_estimate\":{\"from\":100,\"to\":100},\"name_anomalies\":[]}",
             pgw_snapshot_schema_hash(sa), pgw_snapshot_schema_hash(sb));
    ck_assert_str_eq(json, want);
    pgw_diff *back = NULL;
    pgw_error err;
    ck_assert_msg(pgw_diff_from_json(&back, json, strlen(json), &err) == PGW_OK, "%s at %s",
                  err.message, err.path);
    char *again;
    ck_assert_int_eq(pgw_diff_to_json(&again, NULL, back, 0, NULL), PGW_OK);
    ck_assert_str_eq(again, json);
    pgw_free(json);
    pgw_free(again);
    pgw_diff_free(back);
    pgw_diff_free(d);
    pgw_snapshot_free(sa);
    pgw_snapshot_free(sb);
}
END_TEST

/* Case 2: (a int, b int) -> (b int, a int). */
START_TEST(case2_reorder_keeps_hash)
{
    pgwt_col a[] = {{"a", "int", false}, {"b", "int", false}};
    pgwt_col b[] = {{"b", "int", false}, {"a", "int", false}};
    pgw_snapshot *sa = pgwt_snapshot("t", T0, 1, a, 2), *sb = pgwt_snapshot("t", T1, 1, b, 2);
    ck_assert_str_eq(pgw_snapshot_schema_hash(sa), pgw_snapshot_schema_hash(sb));
    pgw_diff *d = diff(sa, sb);
    ck_assert(!pgw_diff_schema_changed(d));
    ck_assert(pgw_diff_reordered(d));
    ck_assert_int_eq(pgw_diff_class(d), PGW_CHANGE_REORDERED);
    ck_assert_uint_eq(pgw_diff_added_count(d) + pgw_diff_removed_count(d) +
                          pgw_diff_renamed_count(d) + pgw_diff_type_changed_count(d),
                      0);
    pgw_diff_free(d);
    pgw_snapshot_free(sa);
    pgw_snapshot_free(sb);
}
END_TEST

/* Case 3: (a numeric, b numeric) -> (a, b, c, d numeric). */
START_TEST(case3_additions_invent_no_rename)
{
    static const char *const h1[] = {"1", "5", "9", NULL};
    pgwt_col a[] = {{"a", "numeric", true, 0, -1, NULL, NULL, h1},
                    {"b", "numeric", true, 0, -1, NULL, NULL, h1}};
    pgwt_col b[] = {{"a", "numeric", true, 0, -1, NULL, NULL, h1},
                    {"b", "numeric", true, 0, -1, NULL, NULL, h1},
                    {"c", "numeric", true, 0, -1, NULL, NULL, h1},
                    {"d", "numeric", true, 0, -1, NULL, NULL, h1}};
    pgw_snapshot *sa = pgwt_snapshot("t", T0, 3, a, 2), *sb = pgwt_snapshot("t", T1, 3, b, 4);
    pgw_diff *d = diff(sa, sb);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 0);
    ck_assert_uint_eq(pgw_diff_removed_count(d), 0);
    ck_assert_uint_eq(pgw_diff_added_count(d), 2);
    ck_assert_str_eq(pgw_diff_added(d, 0)->column, "c");
    ck_assert_uint_eq(pgw_diff_added(d, 0)->position, 3);
    ck_assert_str_eq(pgw_diff_added(d, 1)->column, "d");
    ck_assert_str_eq(pgw_diff_added(d, 1)->type, "numeric");
    ck_assert_uint_eq(pgw_diff_added(d, 1)->position, 4);
    ck_assert_int_eq(pgw_diff_class(d), PGW_CHANGE_ADDITIVE);
    pgw_diff_free(d);
    pgw_snapshot_free(sa);
    pgw_snapshot_free(sb);
}
END_TEST

/* Case 4: type synonyms are not changes; real changes are. */
START_TEST(case4_type_synonyms)
{
    static const char *const pairs[][2] = {
        {"integer", "int4"},
        {"integer", "INT"},
        {"timestamptz", "timestamp with time zone"},
        {"timestamp(3) with time zone", "timestamptz(3)"},
        {"timestamp", "timestamp without time zone"},
        {"int8", "bigint"},
        {"int2", "smallint"},
        {"varchar(20)", "character varying(20)"},
        {"bpchar(3)", "character(3)"},
        {"float8", "double precision"},
        {"float4", "real"},
        {"float(10)", "real"},
        {"float(53)", "double precision"},
        {"bool", "boolean"},
        {"decimal(10, 2)", "numeric(10,2)"},
        {"_int4", "integer[]"},
        {"int4[]", "integer[]"},
        {"timetz", "time with time zone"},
        {"varbit(4)", "bit varying(4)"},
    };
    for (size_t i = 0; i < N(pairs); i++) {
        pgwt_col a[] = {{"x", pairs[i][0], false}};
        pgwt_col b[] = {{"x", pairs[i][1], false}};
        pgw_snapshot *sa = pgwt_snapshot("t", T0, 1, a, 1),
                     *sb = pgwt_snapshot("t", T1, 1, b, 1);
        pgw_diff *d = diff(sa, sb);
        ck_assert_msg(pgw_diff_type_changed_count(d) == 0, "%s vs %s reported as a change",
                      pairs[i][0], pairs[i][1]);
        ck_assert_int_eq(pgw_diff_class(d), PGW_CHANGE_UNCHANGED);
        pgw_diff_free(d);
        pgw_snapshot_free(sa);
        pgw_snapshot_free(sb);
    }
    static const char *const changes[][2] = {
        {"integer", "bigint"},
        {"varchar(20)", "varchar(30)"},
        {"numeric(10,2)", "numeric"},
        {"integer", "integer[]"},
        {"timestamp", "timestamptz"},
        {"text", "\"Text\""},
    };
    for (size_t i = 0; i < N(changes); i++) {
        pgwt_col a[] = {{"x", changes[i][0], false}};
        pgwt_col b[] = {{"x", changes[i][1], false}};
        pgw_snapshot *sa = pgwt_snapshot("t", T0, 1, a, 1),
                     *sb = pgwt_snapshot("t", T1, 1, b, 1);
        pgw_diff *d = diff(sa, sb);
        ck_assert_msg(pgw_diff_type_changed_count(d) == 1, "%s vs %s not a change",
                      changes[i][0], changes[i][1]);
        const pgw_type_change *t = pgw_diff_type_changed(d, 0);
        ck_assert_str_eq(t->column, "x");
        ck_assert_str_eq(t->from, changes[i][0]);
        ck_assert_str_eq(t->to, changes[i][1]);
        ck_assert_int_eq(pgw_diff_class(d), PGW_CHANGE_RETYPED);
        pgw_diff_free(d);
        pgw_snapshot_free(sa);
        pgw_snapshot_free(sb);
    }
}
END_TEST

/* Case 5: disjoint analysed columns, and unanalysed columns. */
START_TEST(case5_no_evidence_no_rename)
{
    pgwt_col a[] = {{"x", "text", true, 0, 2, ab_vals, half, NULL}, {"u", "text", false}};
    pgwt_col b[] = {{"y", "text", true, 0, 2, cd_vals, half, NULL}, {"w", "text", false}};
    pgw_snapshot *sa = pgwt_snapshot("t", T0, 10, a, 2), *sb = pgwt_snapshot("t", T1, 10, b, 2);
    pgw_similarity detail;
    double s = -1;
    ck_assert_int_eq(pgw_profile_similarity(&s, &detail, sa, 1, sb, 1, NULL), PGW_OK);
    ck_assert(s == 0.0);
    ck_assert(detail.score == 0.0);
    ck_assert(detail.values == -1.0);
    /* analysed vs unanalysed: still no evidence */
    ck_assert(sim(sa, 0, sb, 1) == 0.0);
    /* disjoint values: only null_frac and n_distinct agree: 0.15 + 0.15 */
    ck_assert_msg(sim(sa, 0, sb, 0) == 0.3, "%.17g", sim(sa, 0, sb, 0));
    pgw_diff *d = diff(sa, sb);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 0);
    ck_assert_uint_eq(pgw_diff_removed_count(d), 2);
    ck_assert_str_eq(pgw_diff_removed(d, 0)->column, "x");
    ck_assert_str_eq(pgw_diff_removed(d, 1)->column, "u");
    ck_assert_uint_eq(pgw_diff_added_count(d), 2);
    ck_assert_int_eq(pgw_diff_class(d), PGW_CHANGE_MIXED);
    pgw_diff_free(d);
    pgw_snapshot_free(sa);
    pgw_snapshot_free(sb);
}
END_TEST

/* Case 6: "\uFEFFtitle" vs "title". */
START_TEST(case6_bom_name_anomaly_and_name_evidence)
{
    pgwt_col a[] = {{"id", "integer", false}, {"\xEF\xBB\xBFtitle", "text", false}};
    pgwt_col b[] = {{"id", "integer", false}, {"title", "text", false}};
    pgw_snapshot *sa = pgwt_snapshot("t", T0, 1, a, 2), *sb = pgwt_snapshot("t", T1, 1, b, 2);
    pgw_diff *d = diff(sa, sb);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 1);
    const pgw_rename *r = pgw_diff_renamed(d, 0);
    ck_assert_str_eq(r->from, "\xEF\xBB\xBFtitle");
    ck_assert_str_eq(r->to, "title");
    ck_assert_int_eq(r->evidence, PGW_EVIDENCE_NAME);
    ck_assert(r->score == 0.0);
    ck_assert_uint_eq(pgw_diff_added_count(d) + pgw_diff_removed_count(d), 0);
    ck_assert_uint_eq(pgw_diff_name_anomaly_count(d), 1);
    const pgw_name_anomaly_report *an = pgw_diff_name_anomaly(d, 0);
    ck_assert_str_eq(an->column, "\xEF\xBB\xBFtitle");
    ck_assert(!an->in_to);
    ck_assert_uint_eq(an->anomalies, PGW_ANOMALY_BOM);
    char *json;
    ck_assert_int_eq(pgw_diff_to_json(&json, NULL, d, 0, NULL), PGW_OK);
    ck_assert(strstr(json, "\"name_anomalies\":[{\"column\":\"\xEF\xBB\xBFtitle\","
                           "\"side\":\"from\",\"anomalies\":[\"bom\"]}]") != NULL);
    ck_assert(strstr(json, "\"score\":0.0,\"evidence\":\"name\"") != NULL);
    pgw_free(json);
    pgw_diff_free(d);
    pgw_snapshot_free(sa);
    pgw_snapshot_free(sb);
}
END_TEST

/* Case 7: metadata columns alone leave the hash alone. */
START_TEST(case7_metadata_columns_same_hash)
{
    pgwt_col a[] = {{"id", "integer", false}, {"title", "text", false}};
    pgwt_col b[] = {{"id", "integer", false},
                    {"title", "text", false},
                    {"_source_dataset_id", "text", false},
                    {"_ingested_at", "timestamptz", false},
                    {"_source_url", "text", false}};
    pgw_snapshot *sa = pgwt_snapshot("t", T0, 1, a, 2), *sb = pgwt_snapshot("t", T1, 1, b, 5);
    ck_assert_str_eq(pgw_snapshot_schema_hash(sa), pgw_snapshot_schema_hash(sb));
    pgw_diff *d = diff(sa, sb);
    ck_assert(!pgw_diff_schema_changed(d));
    pgw_diff_free(d);
    d = diff(sb, sa); /* removed alone */
    ck_assert(!pgw_diff_schema_changed(d));
    ck_assert_uint_eq(pgw_diff_removed_count(d), 3);
    pgw_diff_free(d);
    pgw_snapshot_free(sa);
    pgw_snapshot_free(sb);
}
END_TEST

/* Case 8: 300+ columns: shape kept, profiles omitted, still diffable. */
START_TEST(case8_wide_tables)
{
    pgwt_col a[320], b[320];
    char an[320][16], bn[320][16];
    for (int i = 0; i < 320; i++) {
        snprintf(an[i], sizeof an[i], "c%03d", i);
        snprintf(bn[i], sizeof bn[i], "c%03d", i);
        a[i] = (pgwt_col){an[i], "text", true, 0, 2, ab_vals, half, NULL};
        b[i] = a[i];
        b[i].name = bn[i];
    }
    snprintf(bn[7], sizeof bn[7], "c007_new"); /* removed c007, added c007_new */
    b[9].type = "integer";                      /* c009 retyped */
    pgw_snapshot *sa = pgwt_snapshot("wide", T0, 1, a, 320),
                 *sb = pgwt_snapshot("wide", T1, 1, b, 320);
    ck_assert(pgw_snapshot_profiles_omitted(sa));
    ck_assert_uint_eq(pgw_snapshot_column_count(sb), 320);
    pgw_diff *d = diff(sa, sb);
    ck_assert(pgw_diff_schema_changed(d));
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 0); /* no profiles, names fold apart */
    ck_assert_uint_eq(pgw_diff_removed_count(d), 1);
    ck_assert_str_eq(pgw_diff_removed(d, 0)->column, "c007");
    ck_assert_uint_eq(pgw_diff_added_count(d), 1);
    ck_assert_str_eq(pgw_diff_added(d, 0)->column, "c007_new");
    ck_assert_uint_eq(pgw_diff_added(d, 0)->position, 8);
    ck_assert_uint_eq(pgw_diff_type_changed_count(d), 1);
    ck_assert_str_eq(pgw_diff_type_changed(d, 0)->column, "c009");
    ck_assert_uint_eq(pgw_diff_profile_changed_count(d), 0);
    ck_assert_int_eq(pgw_diff_class(d), PGW_CHANGE_MIXED);
    pgw_diff_free(d);
    pgw_snapshot_free(sa);
    pgw_snapshot_free(sb);
}
END_TEST

/* Case 9: "MALE" vs "male" under the same name. */
START_TEST(case9_values_change_form_same_name)
{
    static const char *const upper[] = {"MALE", "FEMALE", NULL};
    static const char *const lower[] = {"male", "female", NULL};
    static const double f[] = {0.4912, 0.4797};
    pgwt_col a[] = {{"species", "text", true, 0, 3, ab_vals, half, NULL},
                    {"sex", "text", true, 0.0291, 2, upper, f, NULL}};
    pgwt_col b[] = {{"species", "text", true, 0, 3, ab_vals, half, NULL},
                    {"sex", "text", true, 0.0291, 2, lower, f, NULL}};
    pgw_snapshot *sa = pgwt_snapshot("t", T0, 344, a, 2), *sb = pgwt_snapshot("t", T1, 344, b, 2);
    pgw_diff *d = diff(sa, sb);
    ck_assert_uint_eq(pgw_diff_type_changed_count(d), 0);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 0);
    ck_assert_uint_eq(pgw_diff_profile_changed_count(d), 1);
    ck_assert_str_eq(pgw_diff_profile_changed(d, 0)->column, "sex");
    ck_assert_msg(pgw_diff_profile_changed(d, 0)->score == 0.3, "%.17g",
                  pgw_diff_profile_changed(d, 0)->score);
    ck_assert(!pgw_diff_schema_changed(d));
    ck_assert_int_eq(pgw_diff_class(d), PGW_CHANGE_UNCHANGED);
    pgw_diff_free(d);
    pgw_snapshot_free(sa);
    pgw_snapshot_free(sb);
}
END_TEST

/* ------------------------------------------------------------------ */
/* the similarity formula on hand-computed profiles                    */

START_TEST(similarity_formula)
{
    static const char *const xy[] = {"x", "y", NULL};
    static const char *const xz[] = {"x", "z", NULL};
    static const char *const h0[] = {"0", "10", "20", NULL};
    static const char *const h1[] = {"10", "20", "30", NULL};
    static const char *const h2[] = {"100", "200", NULL};
    pgwt_col a[] = {
        {"m", "text", true, 0, 2, xy, half, NULL},
        {"n", "numeric", true, 0, -1, NULL, NULL, h0},
        {"p", "integer", true, 0.5, -1, NULL, NULL, h0},
        {"q", "text", true, 0, 2, ab_vals, half, NULL},
    };
    pgwt_col b[] = {
        {"m", "text", true, 0, 2, xz, half, NULL},
        {"n", "numeric", true, 0, -1, NULL, NULL, h1},
        {"p", "integer", true, 0, -1, NULL, NULL, h2},
        {"q", "integer", true, 0, 2, ab_vals, half, NULL},
    };
    pgw_snapshot *sa = pgwt_snapshot("t", T0, 100, a, 4), *sb = pgwt_snapshot("t", T1, 100, b, 4);
    pgw_similarity dt;
    double s;
    /* Weighted Jaccard: min 0.5 / max 1.5 = 1/3; text: 0.7/3 + 0.15 + 0.15 */
    ck_assert_int_eq(pgw_profile_similarity(&s, &dt, sa, 0, sb, 0, NULL), PGW_OK);
    ck_assert(fabs(dt.values - 1.0 / 3.0) < 1e-12);
    ck_assert(dt.distribution == -1.0);
    ck_assert(s == 0.5333);
    /* Uniform [0,20] vs [10,30]: KS 0.5; bound sets {0,10,20} {10,20,30}: 2/4. */
    ck_assert_int_eq(pgw_profile_similarity(&s, &dt, sa, 1, sb, 1, NULL), PGW_OK);
    ck_assert(fabs(dt.distribution - 0.5) < 1e-12);
    ck_assert(fabs(dt.values - 0.5) < 1e-12);
    ck_assert(dt.null_frac == 1.0 && dt.n_distinct == 1.0 && dt.type_factor == 1.0);
    ck_assert(s == 0.65);
    /* Disjoint ranges: distribution 0; null_frac 0.5 apart. */
    ck_assert_int_eq(pgw_profile_similarity(&s, &dt, sa, 2, sb, 2, NULL), PGW_OK);
    ck_assert(dt.distribution == 0.0);
    ck_assert(dt.values == 0.0);
    ck_assert(dt.null_frac == 0.5);
    ck_assert(s == 0.225); /* (0.15*0.5 + 0.15*1) / 1.0 */
    /* Same values, text vs integer: type factor 0.8. */
    ck_assert_int_eq(pgw_profile_similarity(&s, &dt, sa, 3, sb, 3, NULL), PGW_OK);
    ck_assert(dt.type_factor == 0.8);
    ck_assert(s == 0.8);
    /* Symmetry over every pair. */
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 4; j++)
            (void)sim(sa, i, sb, j);
    pgw_error err;
    ck_assert_int_eq(pgw_profile_similarity(&s, NULL, sa, 4, sb, 0, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_profile_similarity(NULL, NULL, sa, 0, sb, 0, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "profile_similarity: out is NULL");
    ck_assert_int_eq(pgw_profile_similarity(&s, NULL, sa, 0, NULL, 0, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "profile_similarity: b is NULL");
    pgw_snapshot_free(sa);
    pgw_snapshot_free(sb);
}
END_TEST

START_TEST(similarity_mcv_and_histogram_distribution)
{
    /* a: MCV 1 (0.5), histogram over [2, 4] for the other half.
     * b: the same. Identical distributions: KS 0, score 1. Then b with the
     * MCV moved to 5: the CDFs differ by 0.5 on [1, 4]. */
    static const char *const m1[] = {"1", NULL}, *const m5[] = {"5", NULL};
    static const double f[] = {0.5};
    static const char *const h[] = {"2", "3", "4", NULL};
    pgwt_col a[] = {{"v", "numeric", true, 0, 4, m1, f, h}};
    pgwt_col b[] = {{"v", "numeric", true, 0, 4, m1, f, h}, {"w", "numeric", true, 0, 4, m5, f, h}};
    pgw_snapshot *sa = pgwt_snapshot("t", T0, 100, a, 1), *sb = pgwt_snapshot("t", T1, 100, b, 2);
    pgw_similarity dt;
    double s;
    ck_assert_int_eq(pgw_profile_similarity(&s, &dt, sa, 0, sb, 0, NULL), PGW_OK);
    ck_assert(s == 1.0 && dt.distribution == 1.0);
    ck_assert_int_eq(pgw_profile_similarity(&s, &dt, sa, 0, sb, 1, NULL), PGW_OK);
    ck_assert_msg(fabs(dt.distribution - 0.5) < 1e-12, "%.17g", dt.distribution);
    pgw_snapshot_free(sa);
    pgw_snapshot_free(sb);
}
END_TEST

START_TEST(hashed_compares_with_raw)
{
    pgwt_col a[] = {{"sex", "text", true, 0.03, 2, ab_vals, half, NULL}};
    pgwt_col b[] = {{"gender", "text", true, 0.03, 2, ab_vals, half, NULL}};
    pgw_snapshot_options o = PGW_SNAPSHOT_OPTIONS_INIT;
    o.profile_mode = PGW_PROFILE_HASHED;
    pgw_snapshot *sa = pgwt_snapshot("t", T0, 9, a, 1),
                 *sb = pgwt_snapshot_opts("t", NULL, T1, 9, b, 1, &o);
    ck_assert(sim(sa, 0, sb, 0) == 1.0);
    pgw_diff *d = diff(sa, sb);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 1);
    ck_assert_int_eq(pgw_diff_renamed(d, 0)->evidence, PGW_EVIDENCE_VALUES);
    pgw_diff_free(d);
    pgw_snapshot_free(sa);
    pgw_snapshot_free(sb);
}
END_TEST

START_TEST(renames_one_to_one_deterministic)
{
    /* Two removed columns with identical profiles, one added: the earlier
     * removed column wins the tie; the other stays removed. */
    pgwt_col a[] = {{"p", "text", true, 0, 2, ab_vals, half, NULL},
                    {"q", "text", true, 0, 2, ab_vals, half, NULL}};
    pgwt_col b[] = {{"r", "text", true, 0, 2, ab_vals, half, NULL}};
    pgw_snapshot *sa = pgwt_snapshot("t", T0, 9, a, 2), *sb = pgwt_snapshot("t", T1, 9, b, 1);
    pgw_diff *d = diff(sa, sb);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 1);
    ck_assert_str_eq(pgw_diff_renamed(d, 0)->from, "p");
    ck_assert_uint_eq(pgw_diff_removed_count(d), 1);
    ck_assert_str_eq(pgw_diff_removed(d, 0)->column, "q");
    pgw_diff_free(d);
    pgw_snapshot_free(sa);
    pgw_snapshot_free(sb);

    /* Name evidence outranks a better value match: "Body Mass (g)" pairs
     * with body_mass_g although "other" has the identical values. */
    static const char *const xy[] = {"x", "y", NULL};
    pgwt_col c[] = {{"Body Mass (g)", "integer", true, 0, 2, ab_vals, half, NULL},
                    {"other", "integer", true, 0, 2, xy, half, NULL}};
    pgwt_col e[] = {{"body_mass_g", "integer", true, 0, 2, xy, half, NULL}};
    sa = pgwt_snapshot("t", T0, 9, c, 2);
    sb = pgwt_snapshot("t", T1, 9, e, 1);
    d = diff(sa, sb);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 1);
    ck_assert_str_eq(pgw_diff_renamed(d, 0)->from, "Body Mass (g)");
    ck_assert_int_eq(pgw_diff_renamed(d, 0)->evidence, PGW_EVIDENCE_NAME);
    ck_assert_str_eq(pgw_diff_removed(d, 0)->column, "other");
    pgw_diff_free(d);

    /* A threshold of 1.0 still pairs identical profiles; above the score,
     * nothing pairs. */
    pgw_diff_options o = PGW_DIFF_OPTIONS_INIT;
    o.rename_threshold = 1.0;
    pgw_snapshot_free(sa);
    pgw_snapshot_free(sb);
    sa = pgwt_snapshot("t", T0, 9, a, 1);
    sb = pgwt_snapshot("t", T1, 9, b, 1);
    ck_assert_int_eq(pgw_diff_snapshots(&d, sa, sb, &o, NULL), PGW_OK);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 1);
    pgw_diff_free(d);
    o.rename_threshold = 1.5;
    pgw_error err;
    ck_assert_int_eq(pgw_diff_snapshots(&d, sa, sb, &o, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "diff options: rename_threshold 1.5 is outside [0, 1]");
    ck_assert_int_eq(pgw_diff_snapshots(&d, NULL, sb, NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "diff_snapshots: a is NULL");
    ck_assert_int_eq(pgw_diff_snapshots(NULL, sa, sb, NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "diff_snapshots: out is NULL");
    pgw_snapshot_free(sa);
    pgw_snapshot_free(sb);
}
END_TEST

START_TEST(name_anomalies)
{
    pgwt_col a[] = {{" lead", "text", false}, {"trail\xC2\xA0", "text", false},
                    {"ctl\x01x", "text", false}, {"c1\xC2\x85", "text", false},
                    {"fine name", "text", false}};
    pgw_snapshot *sa = pgwt_snapshot("t", T0, 1, a, 5);
    pgw_diff *d = diff(sa, sa);
    ck_assert_int_eq(pgw_diff_class(d), PGW_CHANGE_UNCHANGED);
    ck_assert_uint_eq(pgw_diff_name_anomaly_count(d), 8); /* 4 per side */
    ck_assert_uint_eq(pgw_diff_name_anomaly(d, 0)->anomalies, PGW_ANOMALY_LEADING_SPACE);
    ck_assert_uint_eq(pgw_diff_name_anomaly(d, 1)->anomalies, PGW_ANOMALY_TRAILING_SPACE);
    ck_assert_uint_eq(pgw_diff_name_anomaly(d, 2)->anomalies, PGW_ANOMALY_CONTROL);
    ck_assert_uint_eq(pgw_diff_name_anomaly(d, 3)->anomalies, PGW_ANOMALY_CONTROL);
    ck_assert(!pgw_diff_name_anomaly(d, 3)->in_to);
    ck_assert(pgw_diff_name_anomaly(d, 4)->in_to);
    char *json;
    size_t len;
    ck_assert_int_eq(pgw_diff_to_json(&json, &len, d, 0, NULL), PGW_OK);
    pgw_diff *back;
    ck_assert_int_eq(pgw_diff_from_json(&back, json, len, NULL), PGW_OK);
    ck_assert_uint_eq(pgw_diff_name_anomaly(back, 1)->anomalies, PGW_ANOMALY_TRAILING_SPACE);
    pgw_diff_free(back);
    pgw_free(json);
    pgw_diff_free(d);
    pgw_snapshot_free(sa);
}
END_TEST

START_TEST(diff_json_strict)
{
    pgwt_col a[] = {{"col1", "text", true, 0, 2, ab_vals, half, NULL}};
    pgwt_col b[] = {{"new_col1", "text", true, 0, 2, ab_vals, half, NULL}, {"z", "int", false}};
    pgw_snapshot *sa = pgwt_snapshot("t", T0, 100, a, 1), *sb = pgwt_snapshot("t", T1, -1, b, 2);
    pgw_diff *d = diff(sa, sb);
    char *json;
    size_t len;
    ck_assert_int_eq(pgw_diff_to_json(&json, &len, d, 0, NULL), PGW_OK);
    ck_assert(strstr(json, "\"row_estimate\":{\"from\":100,\"to\":null}") != NULL);
    ck_assert(strstr(json, "\"class\":\"mixed\"") != NULL);
    static const struct {
        const char *from, *to, *path, *msg;
    } bad[] = {
        {"\"class\":\"mixed\"", "\"class\":\"renamed\"", "$.class", "contradicts the lists"},
        {"\"format\":1", "\"format\":9", "$.format", "diff format 9 is not supported"},
        {"\"evidence\":\"values\"", "\"evidence\":\"hunch\"", "$.renamed_candidates[0].evidence", "is not values, name or both"},
        {"\"score\":1.0", "\"score\":2", "$.renamed_candidates[0].score", "is outside [0, 1]"},
        {"\"position\":2", "\"position\":0", "$.added[0].position", "is outside"},
        {"\"reordered\":false", "\"reordered\":0", "$.reordered", "expected a boolean"},
        {"\"to\":null}", "\"to\":null,\"x\":1}", "$.row_estimate.x", "unknown key"},
    };
    for (size_t i = 0; i < N(bad); i++) {
        const char *p = strstr(json, bad[i].from);
        ck_assert_msg(p != NULL, "fixture %zu", i);
        char doc[4096];
        snprintf(doc, sizeof doc, "%.*s%s%s", (int)(p - json), json, bad[i].to,
                 p + strlen(bad[i].from));
        pgw_diff *out = NULL;
        pgw_error err;
        int rc = pgw_diff_from_json(&out, doc, strlen(doc), &err);
        ck_assert_msg(rc == PGW_EPARSE || rc == PGW_EVERSION, "case %zu rc %d", i, rc);
        ck_assert_ptr_null(out);
        ck_assert_msg(strcmp(err.path, bad[i].path) == 0, "case %zu: path %s (%s)", i, err.path,
                      err.message);
        ck_assert_msg(strstr(err.message, bad[i].msg) != NULL, "case %zu: %s", i, err.message);
    }
    for (size_t cut = 0; cut < len; cut++) {
        pgw_diff *out = NULL;
        ck_assert_int_eq(pgw_diff_from_json(&out, json, cut, NULL), PGW_EPARSE);
    }
    pgw_free(json);
    pgw_diff_free(d);
    pgw_snapshot_free(sa);
    pgw_snapshot_free(sb);
}
END_TEST

typedef struct dctx {
    pgw_snapshot *a, *b;
    pgw_diff *d;
    char *json;
    size_t len;
} dctx;

static int diff_once(void *arg)
{
    dctx *c = arg;
    return pgw_diff_snapshots(&c->d, c->a, c->b, NULL, NULL);
}

static int diff_decode_once(void *arg)
{
    dctx *c = arg;
    return pgw_diff_from_json(&c->d, c->json, c->len, NULL);
}

START_TEST(allocation_failures)
{
    static const char *const h0[] = {"0", "10", "20", NULL};
    pgwt_col a[] = {{"col1", "text", true, 0, 2, ab_vals, half, NULL},
                    {"n", "numeric", true, 0, -1, NULL, NULL, h0},
                    {" x", "int", false}, {"keep", "int4", false}};
    pgwt_col b[] = {{"new_col1", "text", true, 0, 2, ab_vals, half, NULL},
                    {"keep", "bigint", false}, {"n2", "numeric", true, 0, -1, NULL, NULL, h0},
                    {"z", "int", false}};
    dctx c = {0};
    c.a = pgwt_snapshot("t", T0, 100, a, 4);
    c.b = pgwt_snapshot("t", T1, 100, b, 4);
    for (int pass = 0; pass < 2; pass++) {
        pgwt_alloc_install();
        if (pass == 1) {
            pgw_diff *d0 = NULL;
            ck_assert_int_eq(pgw_diff_snapshots(&d0, c.a, c.b, NULL, NULL), PGW_OK);
            ck_assert_int_eq(pgw_diff_to_json(&c.json, &c.len, d0, 0, NULL), PGW_OK);
            pgw_diff_free(d0);
        }
        size_t n;
        for (n = 1; n < 100000; n++) {
            pgwt_alloc_fail_at(n);
            int rc = pass ? diff_decode_once(&c) : diff_once(&c);
            bool failed = pgwt_alloc_failed();
            pgwt_alloc_fail_at(0);
            if (!failed) {
                ck_assert_int_eq(rc, PGW_OK);
                ck_assert_uint_eq(pgw_diff_renamed_count(c.d), 2);
                pgw_diff_free(c.d);
                break;
            }
            ck_assert_msg(rc == PGW_ENOMEM, "pass %d allocation %zu: rc %d", pass, n, rc);
            ck_assert_msg(pgwt_alloc_get().live == (pass ? 1u : 0u),
                          "pass %d allocation %zu: leak", pass, n);
        }
        ck_assert_uint_gt(n, 2);
        pgw_free(c.json);
        c.json = NULL;
        ck_assert_uint_eq(pgwt_alloc_get().live, 0);
        pgwt_alloc_uninstall();
    }
    pgw_snapshot_free(c.a);
    pgw_snapshot_free(c.b);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("diff");
    TCase *tc = tcase_create("diff");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, case1_rename_from_values);
    tcase_add_test(tc, case2_reorder_keeps_hash);
    tcase_add_test(tc, case3_additions_invent_no_rename);
    tcase_add_test(tc, case4_type_synonyms);
    tcase_add_test(tc, case5_no_evidence_no_rename);
    tcase_add_test(tc, case6_bom_name_anomaly_and_name_evidence);
    tcase_add_test(tc, case7_metadata_columns_same_hash);
    tcase_add_test(tc, case8_wide_tables);
    tcase_add_test(tc, case9_values_change_form_same_name);
    tcase_add_test(tc, similarity_formula);
    tcase_add_test(tc, similarity_mcv_and_histogram_distribution);
    tcase_add_test(tc, hashed_compares_with_raw);
    tcase_add_test(tc, renames_one_to_one_deterministic);
    tcase_add_test(tc, name_anomalies);
    tcase_add_test(tc, diff_json_strict);
    tcase_add_test(tc, allocation_failures);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return pgwt_main(suite());
}
