/*
 * tests/unit/check_diff.c — profile_similarity and diff_snapshots: the nine
 * cases of issue 3 with their exact results, type synonyms, the similarity
 * formula on hand-computed profiles, the combined rename score and the
 * optimal assignment of issue 17 (exact parts, a case a greedy choice gets
 * wrong, start/end columns, hashed profiles), the diff JSON (format 2 and
 * format 1), bad input and allocation failure.
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

/* The parts of a rename, exactly (each value as the formula on
 * pgw_rename_weights gives it: see the comments at each call). */
static void expect_parts(const pgw_rename_parts *p, double score, double name, double values,
                         double profile, double shape, double type, double position,
                         double contrast)
{
    ck_assert_msg(p->score == score && p->name == name && p->values == values &&
                      p->profile == profile && p->shape == shape && p->type == type &&
                      p->position == position && p->contrast == contrast,
                  "parts {score %.17g, name %.17g, values %.17g, profile %.17g, shape %.17g, "
                  "type %.17g, position %.17g, contrast %.17g}",
                  p->score, p->name, p->values, p->profile, p->shape, p->type, p->position,
                  p->contrast);
}

/* pgw_rename_score of a's column i and b's column j with the default
 * options; its parts in *parts. */
static double rscore(pgw_rename_parts *parts, const pgw_snapshot *a, size_t i,
                     const pgw_snapshot *b, size_t j)
{
    double s = -1;
    pgw_error err;
    ck_assert_msg(pgw_rename_score(&s, parts, a, i, b, j, NULL, &err) == PGW_OK, "%s",
                  err.message);
    ck_assert(s == parts->score);
    return s;
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
    /* name: col|1 against new|col|1, "new" a marker: 0.9333. profile 1
     * (same values); shape 1 (the same frequency profile); values 0.4 * 1
     * + 0.6 * 1 = 1. One column each: position 1 - |0.5 - 0.5| = 1; type 1;
     * no column kept: contrast 0. score (0.45 * 0.9333 + 0.55 * 1) * (0.9 +
     * 0.05 + 0.05) = 0.969985, 0.97 to 4 decimals. Both kinds of evidence
     * reach 0.5. */
    ck_assert(r->score == 0.97);
    ck_assert_int_eq(r->evidence, PGW_EVIDENCE_BOTH);
    expect_parts(&r->parts, 0.97, 0.9333, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0);
    ck_assert_int_eq(pgw_diff_rename_method(d), PGW_RENAME_COMBINED);
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
             "{\"format\":2,\"from\":{\"schema\":\"public\",\"table\":\"t\","
             "\"resource_identity\":null,\"captured_at\":\"2025-11-30T09:10:44.123456Z\","
             "\"schema_hash\":\"%s\"},\"to\":{\"schema\":\"public\",\"table\":\"t\","
             "\"resource_identity\":null,\"captured_at\":\"2025-12-01T09:10:44.123456Z\","
             "\"schema_hash\":\"%s\"},\"schema_changed\":true,\"class\":\"renamed\","
             "\"added\":[],\"removed\":[],\"type_changed\":[],\"reordered\":false,"
             "\"rename_method\":\"combined\","
             "\"renamed_candidates\":[{\"from\":\"col1\",\"to\":\"new_col1\","
             "\"from_type\":\"text\",\"to_type\":\"text\",\"score\":0.97,"
             "\"evidence\":\"both\",\"parts\":{\"score\":0.97,\"name\":0.9333,"
             "\"values\":1.0,\"profile\":1.0,\"shape\":1.0,\"type\":1.0,"
             "\"position\":1.0,\"contrast\":0.0}}],\"profile_changed\":[],"
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

/* Case 5: disjoint analysed columns, and unanalysed columns. Issue 17: the
 * values of y are disjoint from x's and their frequencies differ too (0.9 /
 * 0.1 against 0.5 / 0.5), so nothing says they are one column. With the
 * same shares they would be (below: a recoding). */
START_TEST(case5_no_evidence_no_rename)
{
    static const double skewed[] = {0.9, 0.1};
    pgwt_col a[] = {{"x", "text", true, 0, 2, ab_vals, half, NULL}, {"u", "text", false}};
    pgwt_col b[] = {{"y", "text", true, 0, 2, cd_vals, skewed, NULL}, {"w", "text", false}};
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
    /* The combined score: names share nothing; frequency profiles 1 -
     * (0.4 + 0.4) / 2 = 0.6, but read as a relabelling of the same 10 rows
     * (read whole: no sampling error, no row change) the shares may differ
     * by 0.005 only: excess 2 * (0.4 - 0.005) = 0.79 >= 0.10, so S = 0;
     * values 0.4 * 0.3 = 0.12; no column is kept, so the contrast is 0 and
     * V' = V; score 0.55 * 0.12 = 0.066 (same type, same position). */
    pgw_rename_parts p;
    ck_assert_msg(rscore(&p, sa, 0, sb, 0) == 0.066, "%.17g", p.score);
    expect_parts(&p, 0.066, 0.0, 0.12, 0.3, 0.0, 1.0, 1.0, 0.0);
    /* Unanalysed, names that share nothing: type and position alone, 0. */
    ck_assert(rscore(&p, sa, 1, sb, 1) == 0.0);
    expect_parts(&p, 0.0, 0.0, -1.0, -1.0, -1.0, 1.0, 1.0, -1.0);
    pgw_diff *d = diff(sa, sb);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 0);
    ck_assert_uint_eq(pgw_diff_removed_count(d), 2);
    ck_assert_str_eq(pgw_diff_removed(d, 0)->column, "x");
    ck_assert_str_eq(pgw_diff_removed(d, 1)->column, "u");
    ck_assert_uint_eq(pgw_diff_added_count(d), 2);
    ck_assert_int_eq(pgw_diff_class(d), PGW_CHANGE_MIXED);
    pgw_diff_free(d);
    pgw_snapshot_free(sb);

    /* The same labels changed with the same shares (A/B -> C/D, as M/F ->
     * male/female): the frequency profile is 1, values 0.4 * 0.3 + 0.6 = 0.72,
     * score 0.55 * 0.72 = 0.396: a rename from values alone (contrast 0:
     * nothing is kept). */
    pgwt_col c[] = {{"y", "text", true, 0, 2, cd_vals, half, NULL}, {"w", "text", false}};
    sb = pgwt_snapshot("t", T1, 10, c, 2);
    d = diff(sa, sb);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 1);
    const pgw_rename *r = pgw_diff_renamed(d, 0);
    ck_assert_str_eq(r->from, "x");
    ck_assert_str_eq(r->to, "y");
    ck_assert(r->score == 0.396);
    ck_assert_int_eq(r->evidence, PGW_EVIDENCE_VALUES);
    expect_parts(&r->parts, 0.396, 0.0, 0.72, 0.3, 1.0, 1.0, 1.0, 0.0);
    ck_assert_uint_eq(pgw_diff_removed_count(d), 1);
    ck_assert_str_eq(pgw_diff_removed(d, 0)->column, "u");
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
    /* Equal once folded: name 1. No sampled values: values count 0. Same
     * type, same place: score 0.45 * 1 = 0.45, at or above the threshold
     * 0.35, so a name alone still pairs (it must score 0.35 / 0.45 = 0.778
     * or more). No values: no contrast. */
    ck_assert(r->score == 0.45);
    expect_parts(&r->parts, 0.45, 1.0, -1.0, -1.0, -1.0, 1.0, 1.0, -1.0);
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
    ck_assert(strstr(json, "\"score\":0.45,\"evidence\":\"name\",\"parts\":{\"score\":0.45,"
                           "\"name\":1.0,\"values\":null,\"profile\":null,\"shape\":null,"
                           "\"type\":1.0,\"position\":1.0,\"contrast\":null}") != NULL);
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
    /* No profiles; the names fold apart, but c007_new is c007 with the
     * marker "new" added (issue 17's qty_v2): name 0.9333, and with the same
     * type and place, score 0.45 * 0.9333 = 0.42 (0.419985). */
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 1);
    const pgw_rename *r = pgw_diff_renamed(d, 0);
    ck_assert_str_eq(r->from, "c007");
    ck_assert_str_eq(r->to, "c007_new");
    ck_assert_int_eq(r->evidence, PGW_EVIDENCE_NAME);
    expect_parts(&r->parts, 0.42, 0.9333, -1.0, -1.0, -1.0, 1.0, 1.0, -1.0);
    ck_assert_uint_eq(pgw_diff_removed_count(d), 0);
    ck_assert_uint_eq(pgw_diff_added_count(d), 0);
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
    /* sex / gender are synonyms (0.8); the hashes agree (profile 1) and so
     * do the frequencies (shape 1): 0.45 * 0.8 + 0.55 * 1 = 0.91. */
    const pgw_rename *r = pgw_diff_renamed(d, 0);
    ck_assert_int_eq(r->evidence, PGW_EVIDENCE_BOTH);
    expect_parts(&r->parts, 0.91, 0.8, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0);
    pgw_diff_free(d);
    pgw_snapshot_free(sa);
    pgw_snapshot_free(sb);
}
END_TEST

/* With hashed profiles the pattern, length, range and distribution of the
 * values cannot be read: the shape falls back to what hashes keep (the
 * frequency profile) or is not computed, and the score degrades to the
 * profile similarity and the name. */
START_TEST(hashed_profiles_degrade)
{
    /* Longitudes over two regions: no common value, no common range. */
    static const char *const east[] = {"-74.01", "-73.95", "-73.90", "-73.82", NULL};
    static const char *const west[] = {"-122.51", "-122.45", "-122.40", "-122.32", NULL};
    static const char *const mf[] = {"M", "F", NULL}, *const mw[] = {"male", "female", NULL};
    static const double f[] = {0.5, 0.48};
    pgwt_col a[] = {{"pickup_lng", "numeric", true, 0, -1, NULL, NULL, east},
                    {"Sex", "text", true, 0.02, 2, mf, f, NULL}};
    pgwt_col b[] = {{"pickup_lon", "numeric", true, 0, -1, NULL, NULL, west},
                    {"gender", "text", true, 0.02, 2, mw, f, NULL}};
    pgw_snapshot_options h = PGW_SNAPSHOT_OPTIONS_INIT;
    h.profile_mode = PGW_PROFILE_HASHED;
    pgw_snapshot *ra = pgwt_snapshot("t", T0, 500, a, 2), *rb = pgwt_snapshot("t", T1, 500, b, 2);
    pgw_snapshot *ha = pgwt_snapshot_opts("t", NULL, T0, 500, a, 2, &h),
                 *hb = pgwt_snapshot_opts("t", NULL, T1, 500, b, 2, &h);
    pgw_rename_parts p;
    /* Raw: the shape of the values is the value-shape score (no MCVs):
     * the normalised distributions agree, the patterns half (-dd.dd against
     * -ddd.dd), the ranges not at all: 0.6324. The profiles share nothing
     * but null_frac and n_distinct: 0.3. values 0.4 * 0.3 + 0.6 * 0.6324 =
     * 0.4994 (0.49944); name (pickup kept, lng and lon synonyms: one end of
     * the lat/lon axis) 0.6 + 0.4 * 0.9 ... = 0.9; nothing kept: contrast
     * 0; score
     * 0.45 * 0.9 + 0.55 * 0.4994 = 0.6797 (0.67967). */
    double raw = rscore(&p, ra, 0, rb, 0);
    expect_parts(&p, 0.6797, 0.9, 0.4994, 0.3, 0.6324, 1.0, 1.0, 0.0);
    /* Hashed (either side, or both): no shape; values = the profile, 0.3;
     * score 0.405 + 0.165 = 0.57, a rename by its name and profile. */
    double hashed = rscore(&p, ha, 0, hb, 0);
    expect_parts(&p, 0.57, 0.9, 0.3, 0.3, -1.0, 1.0, 1.0, 0.0);
    ck_assert(rscore(&p, ra, 0, hb, 0) == hashed);
    ck_assert(rscore(&p, ha, 0, rb, 0) == hashed);
    ck_assert(hashed < raw);
    /* Recoded labels: the frequencies are kept in hashed mode, so the
     * shape (the frequency profile, 1) survives hashing: the same parts.
     * values 0.4 * 0.3 + 0.6 * 1 = 0.72; sex / gender synonyms 0.8; score
     * 0.36 + 0.396 = 0.756. */
    double sex_raw = rscore(&p, ra, 1, rb, 1);
    expect_parts(&p, 0.756, 0.8, 0.72, 0.3, 1.0, 1.0, 1.0, 0.0);
    pgw_rename_parts q;
    ck_assert(rscore(&q, ha, 1, hb, 1) == sex_raw);
    ck_assert(memcmp(&p, &q, sizeof p) == 0);
    pgw_snapshot_free(ra);
    pgw_snapshot_free(rb);
    pgw_snapshot_free(ha);
    pgw_snapshot_free(hb);
}
END_TEST

START_TEST(renames_one_to_one_deterministic)
{
    /* Two removed columns with identical profiles, one added: the earlier
     * removed column wins the tie (both score 0.55 * (0.95 + 0.05 * 0.75) =
     * 0.5431: positions 0.25 and 0.75 against 0.5; nothing is kept, so the
     * contrast is 0); the other stays removed. */
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
     * with body_mass_g although "other" has the identical values. Body Mass
     * (g): name 1 (equal once folded), values 0.4 * 0.3 + 0.6 * 1 = 0.72 (its
     * labels differ but not their shares), position 1 - |0.25 - 0.5| =
     * 0.75: (0.45 + 0.55 * 0.72) * (0.95 + 0.05 * 0.75) = 0.835425. other:
     * name 0, values 1: 0.55 * 0.9875 = 0.5431. */
    static const char *const xy[] = {"x", "y", NULL};
    pgwt_col c[] = {{"Body Mass (g)", "integer", true, 0, 2, ab_vals, half, NULL},
                    {"other", "integer", true, 0, 2, xy, half, NULL}};
    pgwt_col e[] = {{"body_mass_g", "integer", true, 0, 2, xy, half, NULL}};
    sa = pgwt_snapshot("t", T0, 9, c, 2);
    sb = pgwt_snapshot("t", T1, 9, e, 1);
    d = diff(sa, sb);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 1);
    ck_assert_str_eq(pgw_diff_renamed(d, 0)->from, "Body Mass (g)");
    ck_assert_int_eq(pgw_diff_renamed(d, 0)->evidence, PGW_EVIDENCE_BOTH);
    expect_parts(&pgw_diff_renamed(d, 0)->parts, 0.8354, 1.0, 0.72, 0.3, 1.0, 1.0, 0.75, 0.0);
    pgw_rename_parts rp;
    ck_assert(rscore(&rp, sa, 1, sb, 0) == 0.5431);
    ck_assert(rp.contrast == 0.0);
    ck_assert_str_eq(pgw_diff_removed(d, 0)->column, "other");
    pgw_diff_free(d);
    /* Today's rules (PGW_RENAME_PROFILE) pair it by its folded name too. */
    pgw_diff_options o = PGW_DIFF_OPTIONS_INIT;
    o.rename_method = PGW_RENAME_PROFILE;
    o.rename_threshold = 0.6;
    ck_assert_int_eq(pgw_diff_snapshots(&d, sa, sb, &o, NULL), PGW_OK);
    ck_assert_int_eq(pgw_diff_rename_method(d), PGW_RENAME_PROFILE);
    ck_assert_str_eq(pgw_diff_renamed(d, 0)->from, "Body Mass (g)");
    ck_assert_int_eq(pgw_diff_renamed(d, 0)->evidence, PGW_EVIDENCE_NAME);
    ck_assert(pgw_diff_renamed(d, 0)->score == 0.3); /* the profile similarity */
    expect_parts(&pgw_diff_renamed(d, 0)->parts, 0.8354, 1.0, 0.72, 0.3, 1.0, 1.0, 0.75, 0.0);
    pgw_diff_free(d);

    /* PGW_RENAME_PROFILE: a threshold of 1.0 still pairs identical
     * profiles. PGW_RENAME_COMBINED: a threshold equal to the score (p and
     * r: values 1, names nothing: 0.55) pairs; one above it does not. */
    pgw_snapshot_free(sa);
    pgw_snapshot_free(sb);
    sa = pgwt_snapshot("t", T0, 9, a, 1);
    sb = pgwt_snapshot("t", T1, 9, b, 1);
    o.rename_threshold = 1.0;
    ck_assert_int_eq(pgw_diff_snapshots(&d, sa, sb, &o, NULL), PGW_OK);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 1);
    pgw_diff_free(d);
    o = (pgw_diff_options)PGW_DIFF_OPTIONS_INIT;
    o.rename_threshold = 0.55;
    ck_assert_int_eq(pgw_diff_snapshots(&d, sa, sb, &o, NULL), PGW_OK);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 1);
    ck_assert(pgw_diff_renamed(d, 0)->score == 0.55);
    pgw_diff_free(d);
    o.rename_threshold = 0.5501;
    ck_assert_int_eq(pgw_diff_snapshots(&d, sa, sb, &o, NULL), PGW_OK);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 0);
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

/* Issue 17: a greedy choice pairs a start column with an end one; the
 * optimal assignment does not. A bike-share export renames
 * start_station_id to station_id and end_station_id to destination, and
 * now covers a later month, whose departures and arrivals happen to share
 * the stations as last month's arrivals did. */
START_TEST(assignment_beats_greedy)
{
    static const char *const stations[] = {"101", "102", "103", "104", NULL};
    static const double last_starts[] = {0.4, 0.3, 0.2, 0.1},
                        later[] = {0.3, 0.35, 0.2, 0.15};
    pgwt_col a[] = {{"start_station_id", "integer", true, 0, 4, stations, last_starts, NULL},
                    {"end_station_id", "integer", true, 0, 4, stations, later, NULL}};
    pgwt_col b[] = {{"station_id", "integer", true, 0, 4, stations, later, NULL},
                    {"destination", "integer", true, 0, 4, stations, later, NULL}};
    pgw_snapshot *sa = pgwt_snapshot("trips", T0, 1000, a, 2),
                 *sb = pgwt_snapshot("trips", T1, 1400, b, 2);
    pgw_rename_parts p;
    /* start -> station_id: name 0.84 (station_id is start_station_id
     * without its role). profile 0.35 * 0.8182 (weighted Jaccard 0.9 / 1.1)
     * + 0.35 * 0.9 (1 - KS 0.1) + 0.15 + 0.15 = 0.9014; shape 1 - 0.1 / 2 =
     * 0.95 (shares sorted; read as a relabelling, undamped: the later
     * period has 1400 trips, so a share may move by 400 / 1400); values 0.4 * 0.9014 + 0.6 * 0.95 = 0.9306 (0.93056); score
     * 0.45 * 0.84 + 0.55 * 0.9306 = 0.8898 (0.88983). */
    double ss = rscore(&p, sa, 0, sb, 0);
    expect_parts(&p, 0.8898, 0.84, 0.9306, 0.9014, 0.95, 1.0, 1.0, 0.0);
    /* end -> station_id: the same name score, the same shares: (0.378 +
     * 0.55) * (0.95 + 0.05 * 0.5) = 0.9048, the best single pair: a greedy
     * choice takes it first. */
    double es = rscore(&p, sa, 1, sb, 0);
    expect_parts(&p, 0.9048, 0.84, 1.0, 1.0, 1.0, 1.0, 0.5, 0.0);
    /* end -> destination: names share nothing, values 1 (no column is
     * kept: contrast 0): 0.55. */
    double ed = rscore(&p, sa, 1, sb, 1);
    expect_parts(&p, 0.55, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0);
    /* start -> destination: 0.55 * 0.9306 * 0.975 = 0.499, above the
     * threshold: after its first choice, greedy pairs start with the end
     * column's new name. */
    double sd = rscore(&p, sa, 0, sb, 1);
    expect_parts(&p, 0.499, 0.0, 0.9306, 0.9014, 0.95, 1.0, 0.5, 0.0);
    ck_assert(es > ss && es > ed && es > sd && sd >= PGW_RENAME_THRESHOLD);
    /* Greedy's total 0.9048 + 0.499 = 1.4038; the assignment's 0.8898 +
     * 0.55 = 1.4398. */
    ck_assert(ss + ed > es + sd);
    pgw_diff *d = diff(sa, sb);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 2);
    ck_assert_str_eq(pgw_diff_renamed(d, 0)->from, "start_station_id");
    ck_assert_str_eq(pgw_diff_renamed(d, 0)->to, "station_id");
    ck_assert(pgw_diff_renamed(d, 0)->score == 0.8898);
    ck_assert_int_eq(pgw_diff_renamed(d, 0)->evidence, PGW_EVIDENCE_BOTH);
    ck_assert_str_eq(pgw_diff_renamed(d, 1)->from, "end_station_id");
    ck_assert_str_eq(pgw_diff_renamed(d, 1)->to, "destination");
    ck_assert(pgw_diff_renamed(d, 1)->score == 0.55);
    ck_assert_int_eq(pgw_diff_renamed(d, 1)->evidence, PGW_EVIDENCE_VALUES);
    ck_assert_uint_eq(pgw_diff_removed_count(d) + pgw_diff_added_count(d), 0);
    pgw_diff_free(d);
    pgw_snapshot_free(sa);
    pgw_snapshot_free(sb);
}
END_TEST

/* The contrast: a pair made on its values must be more alike than the
 * removed or the added column is to a column both snapshots keep. */
START_TEST(contrast_against_kept_columns)
{
    /* x removed, y added, k kept: all three hold A/B half and half. x and y
     * are as alike (values 1) as x is to the kept k: contrast 1, V' 0,
     * names nothing: score 0, no rename. */
    pgwt_col a[] = {{"k", "text", true, 0, 2, ab_vals, half, NULL},
                    {"x", "text", true, 0, 2, ab_vals, half, NULL}};
    pgwt_col b[] = {{"k", "text", true, 0, 2, ab_vals, half, NULL},
                    {"y", "text", true, 0, 2, ab_vals, half, NULL}};
    pgw_snapshot *sa = pgwt_snapshot("t", T0, 9, a, 2), *sb = pgwt_snapshot("t", T1, 9, b, 2);
    pgw_rename_parts p;
    ck_assert(rscore(&p, sa, 1, sb, 1) == 0.0);
    expect_parts(&p, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0);
    /* Two columns of one snapshot scored as a rename (x taken as removed,
     * k as added): the pair's own columns are no rivals, and nothing else
     * is kept: contrast 0; positions 0.75 and 0.25: 0.55 * 0.975 =
     * 0.5363. */
    ck_assert(rscore(&p, sa, 1, sa, 0) == 0.5363);
    expect_parts(&p, 0.5363, 0.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.0);
    pgw_diff *d = diff(sa, sb);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 0);
    ck_assert_uint_eq(pgw_diff_removed_count(d), 1);
    ck_assert_uint_eq(pgw_diff_added_count(d), 1);
    pgw_diff_free(d);
    /* Today's rules pair them (profile 1 >= 0.6); their parts carry the
     * contrast all the same. */
    pgw_diff_options o = PGW_DIFF_OPTIONS_INIT;
    o.rename_method = PGW_RENAME_PROFILE;
    o.rename_threshold = 0.6;
    ck_assert_int_eq(pgw_diff_snapshots(&d, sa, sb, &o, NULL), PGW_OK);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 1);
    expect_parts(&pgw_diff_renamed(d, 0)->parts, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0);
    pgw_diff_free(d);
    /* The contrast weighed 0: not read (-1), and the values count whole:
     * 0.55, a rename from values alone. */
    o = (pgw_diff_options)PGW_DIFF_OPTIONS_INIT;
    o.rename_weights.contrast = 0;
    ck_assert_int_eq(pgw_diff_snapshots(&d, sa, sb, &o, NULL), PGW_OK);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 1);
    expect_parts(&pgw_diff_renamed(d, 0)->parts, 0.55, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, -1.0);
    pgw_diff_free(d);
    double sc;
    ck_assert_int_eq(pgw_rename_score(&sc, &p, sa, 1, sb, 1, &o, NULL), PGW_OK);
    ck_assert(sc == 0.55 && p.contrast == -1.0);
    pgw_snapshot_free(sa);
    pgw_snapshot_free(sb);

    /* The kept column unanalysed: nothing to contrast with (0), V' = V:
     * 0.55, a rename from values alone. */
    a[0] = (pgwt_col){"k", "text", false};
    b[0] = (pgwt_col){"k", "text", false};
    sa = pgwt_snapshot("t", T0, 9, a, 2);
    sb = pgwt_snapshot("t", T1, 9, b, 2);
    d = diff(sa, sb);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 1);
    ck_assert_str_eq(pgw_diff_renamed(d, 0)->from, "x");
    expect_parts(&pgw_diff_renamed(d, 0)->parts, 0.55, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0);
    pgw_diff_free(d);
    pgw_snapshot_free(sa);
    pgw_snapshot_free(sb);

    /* Names that are evidence (col1 / new_col1: 0.9333) are contrasted
     * too, but they still pair on the name alone: the kept twin takes the
     * values (C 1), 0.45 * 0.9333 = 0.42 (0.419985). */
    pgwt_col c[] = {{"k", "text", true, 0, 2, ab_vals, half, NULL},
                    {"col1", "text", true, 0, 2, ab_vals, half, NULL}};
    pgwt_col e[] = {{"k", "text", true, 0, 2, ab_vals, half, NULL},
                    {"new_col1", "text", true, 0, 2, ab_vals, half, NULL}};
    sa = pgwt_snapshot("t", T0, 9, c, 2);
    sb = pgwt_snapshot("t", T1, 9, e, 2);
    d = diff(sa, sb);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 1);
    expect_parts(&pgw_diff_renamed(d, 0)->parts, 0.42, 0.9333, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0);
    pgw_diff_free(d);
    pgw_snapshot_free(sa);
    pgw_snapshot_free(sb);
}
END_TEST

/* Start and end columns with the same value set (every station, the same
 * shares) renamed together: today's rules pair them by values alone, all
 * four pairs scoring 1, and their tie-break pairs start with the end
 * column; the name evidence (start and end are counterparts: halved) and
 * the assignment keep them apart. */
START_TEST(start_end_not_crosswise)
{
    static const char *const stations[] = {"101", "102", "103", "104", NULL};
    static const double shares[] = {0.25, 0.25, 0.25, 0.25};
    pgwt_col a[] = {{"start station id", "integer", true, 0, 4, stations, shares, NULL},
                    {"end station id", "integer", true, 0, 4, stations, shares, NULL}};
    pgwt_col b[] = {{"end_station", "integer", true, 0, 4, stations, shares, NULL},
                    {"start_station", "integer", true, 0, 4, stations, shares, NULL}};
    pgw_snapshot *sa = pgwt_snapshot("trips", T0, 1000, a, 2),
                 *sb = pgwt_snapshot("trips", T1, 1000, b, 2);
    pgw_diff_options o = PGW_DIFF_OPTIONS_INIT;
    o.rename_method = PGW_RENAME_PROFILE;
    o.rename_threshold = 0.6;
    pgw_diff *d = NULL;
    ck_assert_int_eq(pgw_diff_snapshots(&d, sa, sb, &o, NULL), PGW_OK);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 2);
    ck_assert_str_eq(pgw_diff_renamed(d, 0)->from, "start station id");
    ck_assert_str_eq(pgw_diff_renamed(d, 0)->to, "end_station"); /* crosswise */
    pgw_diff_free(d);
    d = diff(sa, sb);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 2);
    /* name 0.92, values 1, positions 1 - |0.25 - 0.75| = 0.5:
     * (0.414 + 0.55) * 0.975 = 0.9399 each; crosswise, name 0.23 (start /
     * end halved), position 1, contrast 0 (nothing kept): 0.1035 + 0.55 =
     * 0.6535. */
    const pgw_rename *r0 = pgw_diff_renamed(d, 0), *r1 = pgw_diff_renamed(d, 1);
    ck_assert_str_eq(r0->from, "start station id");
    ck_assert_str_eq(r0->to, "start_station");
    expect_parts(&r0->parts, 0.9399, 0.92, 1.0, 1.0, 1.0, 1.0, 0.5, 0.0);
    ck_assert_str_eq(r1->from, "end station id");
    ck_assert_str_eq(r1->to, "end_station");
    expect_parts(&r1->parts, 0.9399, 0.92, 1.0, 1.0, 1.0, 1.0, 0.5, 0.0);
    pgw_rename_parts p;
    ck_assert(rscore(&p, sa, 0, sb, 0) == 0.6535);
    ck_assert(p.contrast == 0.0);
    pgw_diff_free(d);
    pgw_snapshot_free(sa);
    pgw_snapshot_free(sb);
}
END_TEST

/* A diff document as format 1 (the release before issue 17) wrote it: it
 * still loads, with its renames' parts unknown and the method of format
 * 1, and is written again as format 2. */
START_TEST(diff_json_format1_reads)
{
    static const char doc1[] =
        "{\"format\":1,\"from\":{\"schema\":\"public\",\"table\":\"t\","
        "\"resource_identity\":null,\"captured_at\":\"2025-11-30T09:10:44.123456Z\","
        "\"schema_hash\":\"8235bd3111628395\"},\"to\":{\"schema\":\"public\",\"table\":\"t\","
        "\"resource_identity\":\"r\",\"captured_at\":\"2025-12-01T09:10:44.123456Z\","
        "\"schema_hash\":\"5e8ae2a2a66b83f6\"},\"schema_changed\":true,\"class\":\"mixed\","
        "\"added\":[{\"column\":\"z\",\"type\":\"int\",\"position\":2}],\"removed\":[],"
        "\"type_changed\":[],\"reordered\":false,"
        "\"renamed_candidates\":[{\"from\":\"col1\",\"to\":\"new_col1\","
        "\"from_type\":\"text\",\"to_type\":\"text\",\"score\":1.0,"
        "\"evidence\":\"values\"}],\"profile_changed\":[],"
        "\"row_estimate\":{\"from\":100,\"to\":null},\"name_anomalies\":[]}";
    pgw_diff *d = NULL;
    pgw_error err;
    ck_assert_msg(pgw_diff_from_json(&d, doc1, strlen(doc1), &err) == PGW_OK, "%s at %s",
                  err.message, err.path);
    ck_assert_int_eq(pgw_diff_rename_method(d), PGW_RENAME_PROFILE);
    ck_assert_int_eq(pgw_diff_class(d), PGW_CHANGE_MIXED);
    ck_assert_str_eq(pgw_diff_to(d)->resource, "r");
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 1);
    const pgw_rename *r = pgw_diff_renamed(d, 0);
    ck_assert_str_eq(r->from, "col1");
    ck_assert(r->score == 1.0);
    ck_assert_int_eq(r->evidence, PGW_EVIDENCE_VALUES);
    expect_parts(&r->parts, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0);
    ck_assert_uint_eq(pgw_diff_added_count(d), 1);
    char *json;
    ck_assert_int_eq(pgw_diff_to_json(&json, NULL, d, 0, NULL), PGW_OK);
    char want[sizeof doc1 + 128];
    const char *ren = strstr(doc1, "\"renamed_candidates\"");
    const char *tail = strstr(doc1, "}],\"profile_changed\"");
    snprintf(want, sizeof want, "{\"format\":2%.*s\"rename_method\":\"profile\",%.*s,"
                                "\"parts\":null%s",
             (int)(ren - doc1 - strlen("{\"format\":1")), doc1 + strlen("{\"format\":1"),
             (int)(tail - ren), ren, tail);
    ck_assert_str_eq(json, want);
    pgw_diff *back = NULL;
    ck_assert_int_eq(pgw_diff_from_json(&back, json, strlen(json), NULL), PGW_OK);
    char *again;
    ck_assert_int_eq(pgw_diff_to_json(&again, NULL, back, 0, NULL), PGW_OK);
    ck_assert_str_eq(again, json);
    ck_assert(pgw_diff_renamed(back, 0)->parts.score == -1.0);
    pgw_free(json);
    pgw_free(again);
    pgw_diff_free(back);
    pgw_diff_free(d);
}
END_TEST

/* ------------------------------------------------------------------ */
/* the rename corpus (tests/data/renames): real published format changes */

static pgw_snapshot *corpus_snapshot(const char *pair, const char *side)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s.snapshot.json", PGW_RENAMES_DIR, pair, side);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    ck_assert(feof(f));
    fclose(f);
    pgw_snapshot *snap = NULL;
    pgw_error err;
    ck_assert_msg(pgw_snapshot_from_json(&snap, buf, n, NULL, &err) == PGW_OK, "%s: %s", path,
                  err.message);
    return snap;
}

/* The combined score of listed pairs of the corpus, part by part. */
START_TEST(corpus_pair_scores)
{
    static const struct {
        const char *pair, *from, *to;
        double score, name, values, profile, shape, type, position, contrast;
    } cases[] = {
        /* A prefix and a class word dropped; the timestamps the same, and
         * a kept column alike by 0.1362: (0.7589 - 0.1362) / 0.8638 =
         * 0.7209 of the values counts. */
        {"nyctaxi-tlc-seaborn", "tpep_pickup_datetime", "pickup", 0.7372, 0.76, 0.7589, 0.4,
         0.9981, 1.0, 0.9643, 0.1362},
        /* The counterpart: pickup against dropoff halves the name (0); the
         * values, no more alike than the pickup times are to a kept
         * column by 0.1362, count (0.7187 - 0.1362) / 0.8638. */
        {"nyctaxi-tlc-seaborn", "tpep_pickup_datetime", "dropoff", 0.3702, 0.0, 0.7187, 0.2998,
         0.9979, 1.0, 0.9643, 0.1362},
        /* A location ID became a zone name: the frequency profile, and pu
         * / pickup (one end of the pickup/dropoff axis: synonyms 0.8):
         * name 0.6 * 0.8 / 2 + 0.4 * 0.8 / 2.5 = 0.368, halved for the
         * different heads (location, zone): 0.184. */
        {"nyctaxi-tlc-seaborn", "PULocationID", "pickup_zone", 0.4175, 0.184, 0.6856, 0.2364,
         0.985, 0.0, 0.6071, 0.0605},
        {"nyctaxi-tlc-seaborn", "PULocationID", "dropoff_zone", 0.3301, 0.0, 0.6689, 0.237,
         0.9569, 0.0, 0.5357, 0.0604},
        /* Codes 1/2 became Card/Cash: the name and the frequencies. */
        {"nyctaxi-tlc-seaborn", "payment_type", "payment", 0.6876, 0.8667, 0.6678, 0.1793, 0.9935,
         0.0, 0.7738, 0.1196},
        /* setosa -> Iris-setosa: values alone, by their frequencies, and
         * no kept column (contrast 0): 0.55 * 0.72 * (0.95 + 0.05 *
         * 0.9833) = 0.3957. */
        {"iris-rdatasets-plotly", "Species", "Name", 0.3957, 0.0, 0.72, 0.3, 1.0, 1.0, 0.9833, 0.0},
        /* 1/0 -> Yes/No. */
        {"pima-plotly-mass", "Outcome", "type", 0.3572, 0.0, 0.6836, 0.24, 0.9794, 0.0, 1.0, 0.0},
        /* An abbreviation, the values of 16 rows all distinct and about
         * as alike to a kept column (0.38): the name carries it. */
        {"longley-rdatasets-statsmodels", "Unemployed", "UNEMP", 0.363, 0.8, 0.3966, 0.3,
         0.461, 0.5, 0.875, 0.38},
        /* Long labels cut short: the name and the frequencies. */
        {"penguins-v1-v2", "Species", "species", 0.8428, 1.0, 0.72, 0.3, 1.0, 1.0, 0.9244, 0.0},
        /* Names that share nothing: values alone, 0.55. */
        {"airpassengers-rdatasets-seaborn", "value", "passengers", 0.55, 0.0, 1.0, 1.0, 1.0, 1.0,
         1.0, 0.0},
        /* Values 1: however alike a kept column (0.3182), V' = 1. */
        {"penguins-v2-v3", "culmen_length_mm", "bill_length_mm", 0.7982, 0.5556, 1.0, 1.0, 1.0,
         1.0, 0.9554, 0.3182},
        /* The false-positive probe: a row number and a country code, both
         * integers; a kept number column is nearly as alike (0.4651):
         * (0.5781 - 0.4651) / 0.5349 = 0.2113 of the values counts. */
        {"gapminder-rdatasets-plotly", "rownames", "iso_num", 0.1112, 0.0, 0.5781, 0.3509, 0.7296,
         1.0, 0.1339, 0.4651},
        /* The constructed probes (make-probes): one column removed and
         * another of the same rows added. */
        /* vs and am: two 0/1 columns of 32 cars, 14 and 13 ones. The profile
         * similarity is 0.9679 (today's rules pair them), but 14/32 against
         * 13/32 is more than ANALYZE's reading of all 32 rows allows: the
         * relabelling reading is damped to 0.4602; and the kept 0/1
         * columns are alike too (0.4697). */
        {"mtcars-swap-am-vs", "vs", "am", 0.2008, 0.0, 0.6633, 0.9679, 0.4602, 1.0, 1.0, 0.4697},
        /* Three islands and three species: different shares. */
        {"penguins-swap-island-species", "species", "island", 0.0726, 0.0, 0.2171, 0.3, 0.1619,
         1.0, 1.0, 0.0981},
        /* Two measurements of the same penguins, millimetres and grams. */
        {"penguins-swap-mass-depth", "bill_depth_mm", "body_mass_g", 0.0, 0.0, 0.4099, 0.2777,
         0.4981, 0.5, 0.8571, 0.4537},
        /* Bill depth against bill length: values 0.4537, but bill depth is
         * as alike to the kept body mass (0.4099): (0.4537 - 0.4099) /
         * 0.5901 = 0.0742 of them counts; 0.45 * 0.2778 + 0.55 * 0.0742 =
         * 0.1658 (it scored 0.3916 without the contrast, a false rename). */
        {"penguins-swap-length-depth", "bill_depth_mm", "bill_length_mm", 0.1658, 0.2778, 0.4537,
         0.2232, 0.6074, 1.0, 1.0, 0.4099},
    };
    for (size_t k = 0; k < N(cases); k++) {
        pgw_snapshot *a = corpus_snapshot(cases[k].pair, "old"),
                     *b = corpus_snapshot(cases[k].pair, "new");
        long i = pgw_snapshot_find_column(a, cases[k].from),
             j = pgw_snapshot_find_column(b, cases[k].to);
        ck_assert(i >= 0 && j >= 0);
        pgw_rename_parts p;
        (void)rscore(&p, a, (size_t)i, b, (size_t)j);
        ck_assert_msg(p.score == cases[k].score && p.name == cases[k].name &&
                          p.values == cases[k].values && p.profile == cases[k].profile &&
                          p.shape == cases[k].shape && p.type == cases[k].type &&
                          p.position == cases[k].position && p.contrast == cases[k].contrast,
                      "%s %s -> %s: {%.4f, %.4f, %.4f, %.4f, %.4f, %.2f, %.4f, %.4f}",
                      cases[k].pair, cases[k].from, cases[k].to, p.score, p.name, p.values,
                      p.profile, p.shape, p.type, p.position, p.contrast);
        ck_assert_msg(p.values <= 0 || p.contrast >= 0, "%s: values %.4f without a contrast",
                      cases[k].pair, p.values);
        /* The contrast, from its definition: the best values channel of the
         * removed column against the newer snapshot's kept columns, and of
         * the added column against the older snapshot's, of its type
         * family (type evidence above 0). */
        if (p.contrast >= 0) {
            double best = 0;
            pgw_rename_parts q;
            for (size_t c = 0; c < pgw_snapshot_column_count(b); c++)
                if (pgw_snapshot_find_column(a, pgw_snapshot_column(b, c)->name) >= 0 &&
                    (rscore(&q, a, (size_t)i, b, c), q.type > 0 && q.values > best))
                    best = q.values;
            for (size_t c = 0; c < pgw_snapshot_column_count(a); c++)
                if (pgw_snapshot_find_column(b, pgw_snapshot_column(a, c)->name) >= 0 &&
                    (rscore(&q, a, c, b, (size_t)j), q.type > 0 && q.values > best))
                    best = q.values;
            ck_assert_msg(p.contrast == best, "%s: contrast %.4f, kept columns' best %.4f",
                          cases[k].pair, p.contrast, best);
        }
        pgw_snapshot_free(a);
        pgw_snapshot_free(b);
    }
    /* A newcomer's trial: iris cut so that Sepal.Length is removed and
     * Petal.Length added. The names share half (0.5) and the values are
     * alike (0.6013), but Sepal.Length is nearly as alike to the kept
     * Petal.Width (0.5562): (0.6013 - 0.5562) / 0.4438 = 0.1016 counts,
     * (0.225 + 0.0559) * (0.95 + 0.05 * 0.6667) = 0.2762, below the
     * threshold (0.5465 without the contrast, a wrong rename). Scored
     * within one snapshot: the pair's own columns are no rivals. */
    pgw_snapshot *iris = corpus_snapshot("iris-rdatasets-plotly", "old");
    long sl = pgw_snapshot_find_column(iris, "Sepal.Length"),
         pl = pgw_snapshot_find_column(iris, "Petal.Length");
    ck_assert(sl >= 0 && pl >= 0);
    pgw_rename_parts ip;
    ck_assert(rscore(&ip, iris, (size_t)sl, iris, (size_t)pl) == 0.2762);
    expect_parts(&ip, 0.2762, 0.5, 0.6013, 0.4661, 0.6914, 1.0, 0.6667, 0.5562);
    pgw_snapshot_free(iris);
}
END_TEST

/* Whole diffs of the corpus: the trip records' eleven renames, start and
 * end kept apart; the seven false-positive probes rename nothing. */
START_TEST(corpus_diffs)
{
    static const char *const taxi[][2] = {
        {"tolls_amount", "tolls"},         {"trip_distance", "distance"},
        {"passenger_count", "passengers"}, {"fare_amount", "fare"},
        {"tpep_dropoff_datetime", "dropoff"}, {"total_amount", "total"},
        {"tip_amount", "tip"},             {"tpep_pickup_datetime", "pickup"},
        {"payment_type", "payment"},       {"PULocationID", "pickup_zone"},
        {"DOLocationID", "dropoff_zone"},
    };
    pgw_snapshot *a = corpus_snapshot("nyctaxi-tlc-seaborn", "old"),
                 *b = corpus_snapshot("nyctaxi-tlc-seaborn", "new");
    pgw_diff *d = diff(a, b);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), N(taxi));
    for (size_t k = 0; k < N(taxi); k++) {
        const pgw_rename *r = pgw_diff_renamed(d, k);
        ck_assert_msg(strcmp(r->from, taxi[k][0]) == 0 && strcmp(r->to, taxi[k][1]) == 0,
                      "rename %zu: %s -> %s (%.4f)", k, r->from, r->to, r->score);
        ck_assert(k == 0 || r->score <= pgw_diff_renamed(d, k - 1)->score); /* best first */
    }
    ck_assert_uint_eq(pgw_diff_removed_count(d), 9);
    ck_assert_uint_eq(pgw_diff_added_count(d), 2);
    pgw_diff_free(d);
    pgw_snapshot_free(a);
    pgw_snapshot_free(b);
    static const char *const probes[] = {
        "gapminder-rdatasets-plotly",   "tips-rdatasets-seaborn",
        "engel-rdatasets-statsmodels",  "mtcars-swap-am-vs",
        "penguins-swap-island-species", "penguins-swap-mass-depth",
        "penguins-swap-length-depth",
    };
    for (size_t k = 0; k < N(probes); k++) {
        a = corpus_snapshot(probes[k], "old");
        b = corpus_snapshot(probes[k], "new");
        d = diff(a, b);
        ck_assert_msg(pgw_diff_renamed_count(d) == 0, "%s: %zu renames", probes[k],
                      pgw_diff_renamed_count(d));
        pgw_diff_free(d);
        pgw_snapshot_free(a);
        pgw_snapshot_free(b);
    }
}
END_TEST

/* The layout of pgw_diff_options in version 1, as a caller built against
 * it passes it. */
typedef struct diff_options_v1 {
    unsigned int version;
    double rename_threshold;
    double profile_threshold;
} diff_options_v1;

START_TEST(options_versions_and_weights)
{
    pgwt_col a[] = {{"p", "text", true, 0, 2, ab_vals, half, NULL}};
    pgwt_col b[] = {{"r", "text", true, 0, 2, ab_vals, half, NULL}};
    pgw_snapshot *sa = pgwt_snapshot("t", T0, 9, a, 1), *sb = pgwt_snapshot("t", T1, 9, b, 1);
    /* Version 1: its threshold is a profile similarity, so its rules
     * apply; nothing past profile_threshold is read (the struct ends
     * there). */
    diff_options_v1 *v1 = malloc(sizeof *v1);
    *v1 = (diff_options_v1){1, 0.6, 0.6};
    pgw_diff *d = NULL;
    pgw_error err;
    ck_assert_int_eq(pgw_diff_snapshots(&d, sa, sb, (const pgw_diff_options *)v1, &err),
                     PGW_OK);
    ck_assert_int_eq(pgw_diff_rename_method(d), PGW_RENAME_PROFILE);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 1);
    ck_assert(pgw_diff_renamed(d, 0)->score == 1.0);
    ck_assert_int_eq(pgw_diff_renamed(d, 0)->evidence, PGW_EVIDENCE_VALUES);
    /* Its parts use the default weights: values alone, 0.55; nothing is
     * kept, so the contrast is 0. */
    expect_parts(&pgw_diff_renamed(d, 0)->parts, 0.55, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0);
    pgw_diff_free(d);
    double sc;
    ck_assert_int_eq(pgw_rename_score(&sc, NULL, sa, 0, sb, 0, (const pgw_diff_options *)v1,
                                      &err),
                     PGW_OK);
    ck_assert(sc == 0.55);
    free(v1);

    pgw_diff_options o;
#define EXPECT_BAD(stmt, want)                                                           \
    do {                                                                                    \
        o = (pgw_diff_options)PGW_DIFF_OPTIONS_INIT;                                        \
        stmt;                                                                               \
        d = NULL;                                                                           \
        ck_assert_int_eq(pgw_diff_snapshots(&d, sa, sb, &o, &err), PGW_EINVAL);             \
        ck_assert_ptr_null(d);                                                              \
        ck_assert_str_eq(err.message, want);                                                \
        ck_assert_int_eq(pgw_rename_score(&sc, NULL, sa, 0, sb, 0, &o, &err), PGW_EINVAL);  \
        ck_assert_str_eq(err.message, want);                                                \
    } while (0)
    EXPECT_BAD(o.version = 3,
               "diff options version 3 is neither 1 nor 2 (use PGW_DIFF_OPTIONS_INIT)");
    EXPECT_BAD(o.rename_method = (pgw_rename_method)0,
               "diff options: rename_method 0 is neither PGW_RENAME_COMBINED nor "
               "PGW_RENAME_PROFILE");
    EXPECT_BAD(o.rename_weights.name = -0.1,
               "diff options: rename_weights.name -0.1 is outside [0, inf]");
    EXPECT_BAD(o.rename_weights.values = NAN,
               "diff options: rename_weights.values nan is outside [0, inf]");
    EXPECT_BAD(o.rename_weights.name = INFINITY,
               "diff options: rename_weights.name (inf) and .values (0.55) must be finite "
               "with a sum above 0");
    EXPECT_BAD((o.rename_weights.name = 0, o.rename_weights.values = 0),
               "diff options: rename_weights.name (0) and .values (0) must be finite with a "
               "sum above 0");
    EXPECT_BAD(o.rename_weights.type = 0.6,
               "diff options: rename_weights.type 0.6 is outside [0, 0.5]");
    EXPECT_BAD(o.rename_weights.position = -1,
               "diff options: rename_weights.position -1 is outside [0, 0.5]");
    EXPECT_BAD(o.rename_weights.shape = 1.5,
               "diff options: rename_weights.shape 1.5 is outside [0, 1]");
    EXPECT_BAD(o.rename_weights.contrast = -0.5,
               "diff options: rename_weights.contrast -0.5 is outside [0, 1]");
    EXPECT_BAD((o.rename_weights.type = 0.3, o.rename_weights.position = 0.3),
               "diff options: rename_weights.type + .position is 0.6, above 0.5 (type and "
               "position are weak evidence: they only scale the name and value evidence)");
    EXPECT_BAD(o.profile_threshold = -0.5,
               "diff options: profile_threshold -0.5 is outside [0, 1]");
#undef EXPECT_BAD
    /* Weights are relative: doubling name and values changes nothing. */
    o = (pgw_diff_options)PGW_DIFF_OPTIONS_INIT;
    o.rename_weights.name *= 2;
    o.rename_weights.values *= 2;
    ck_assert_int_eq(pgw_rename_score(&sc, NULL, sa, 0, sb, 0, &o, NULL), PGW_OK);
    ck_assert(sc == 0.55);
    /* Names alone: the values channel weighs nothing, p and r share no
     * token: 0. */
    o.rename_weights.values = 0;
    ck_assert_int_eq(pgw_rename_score(&sc, NULL, sa, 0, sb, 0, &o, NULL), PGW_OK);
    ck_assert(sc == 0.0);
    ck_assert_int_eq(pgw_rename_score(&sc, NULL, sa, 1, sb, 0, NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "rename_score: column index out of range (1 of 1, 0 of 1)");
    ck_assert_int_eq(pgw_rename_score(NULL, NULL, sa, 0, sb, 0, NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "rename_score: out is NULL");
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
        {"\"format\":2", "\"format\":9", "$.format", "diff format 9 is not supported (this release reads formats 1 to 2)"},
        {"\"format\":2", "\"format\":0", "$.format", "diff format 0 is not supported"},
        {"\"evidence\":\"both\"", "\"evidence\":\"hunch\"", "$.renamed_candidates[0].evidence", "is not values, name or both"},
        {"\"evidence\":\"both\"", "\"evidence\":\"name\"", "$.renamed_candidates[0].evidence",
         "\"name\" contradicts the parts, which make it \"both\""},
        {"\"score\":0.9579,\"ev", "\"score\":2,\"ev", "$.renamed_candidates[0].score", "is outside [0, 1]"},
        {"\"score\":0.9579,\"ev", "\"score\":0.9,\"ev", "$.renamed_candidates[0].score",
         "0.9 is not parts.score 0.9579 (rename_method \"combined\")"},
        {"\"type\":1.0,", "\"type\":1.5,", "$.renamed_candidates[0].parts.type", "is outside [0, 1]"},
        {"\"values\":1.0,", "\"values\":\"1\",", "$.renamed_candidates[0].parts.values", "expected a number"},
        {"\"contrast\":0.0}", "\"contrast\":0.0,\"x\":0}", "$.renamed_candidates[0].parts.x", "unknown key"},
        {"\"contrast\":0.0}", "\"contrast\":1.5}", "$.renamed_candidates[0].parts.contrast", "is outside [0, 1]"},
        {"\"contrast\":0.0}", "\"contrast\":\"0\"}", "$.renamed_candidates[0].parts.contrast", "expected a number"},
        {"\"values\":1.0,\"profile\":1.0,\"shape\":1.0,\"type\":1.0,\"position\":0.75,\"contrast\":0.0}",
         "\"values\":null,\"profile\":null,\"shape\":null,\"type\":1.0,\"position\":0.75,\"contrast\":0.2}",
         "$.renamed_candidates[0].parts.contrast",
         "0.2, but the contrast applies only to a pair whose values are above 0 (values null)"},
        {",\"parts\":{\"score\":0.9579,\"name\":0.9333,\"values\":1.0,\"profile\":1.0,\"shape\":1.0,\"type\":1.0,\"position\":0.75,\"contrast\":0.0}", ",\"parts\":null",
         "$.renamed_candidates[0].parts", "null, but rename_method \"combined\" records the parts"},
        {",\"parts\":{\"score\":0.9579,\"name\":0.9333,\"values\":1.0,\"profile\":1.0,\"shape\":1.0,\"type\":1.0,\"position\":0.75,\"contrast\":0.0}", "",
         "$.renamed_candidates[0].parts", "missing key \"parts\""},
        {"\"rename_method\":\"combined\"", "\"rename_method\":\"greedy\"", "$.rename_method", "is not combined or profile"},
        {"\"rename_method\":\"combined\",", "", "$.rename_method", "missing key \"rename_method\""},
        /* Format 1 has neither rename_method nor parts. */
        {"\"format\":2", "\"format\":1", "$.rename_method", "unknown key"},
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

/* A diff document's lists and parts must be ones a diff can have: every
 * name of added, removed and the renames' from and to once (renames one
 * to one, changing the name, their columns not also added or removed),
 * and with shape null, values equal to profile (rename_score.c). */
START_TEST(diff_json_impossible)
{
#define RN(from, to, values, profile, shape)                                                 \
    "{\"from\":\"" from "\",\"to\":\"" to "\",\"from_type\":\"text\",\"to_type\":\"text\","  \
    "\"score\":0.5,\"evidence\":\"name\",\"parts\":{\"score\":0.5,\"name\":0.6,\"values\":" \
    values ",\"profile\":" profile ",\"shape\":" shape ",\"type\":1.0,\"position\":1.0}}"
    static const char head[] =
        "{\"format\":2,\"from\":{\"schema\":\"public\",\"table\":\"t\","
        "\"resource_identity\":null,\"captured_at\":\"2025-11-30T09:10:44.123456Z\","
        "\"schema_hash\":\"8235bd3111628395\"},\"to\":{\"schema\":\"public\",\"table\":\"t\","
        "\"resource_identity\":null,\"captured_at\":\"2025-12-01T09:10:44.123456Z\","
        "\"schema_hash\":\"5e8ae2a2a66b83f6\"},\"schema_changed\":true,\"class\":\"mixed\",";
    static const char tail[] =
        "\"profile_changed\":[],\"row_estimate\":{\"from\":100,\"to\":null},"
        "\"name_anomalies\":[]}";
    static const struct {
        const char *added, *removed, *renames, *path, *msg;
    } cases[] = {
        /* 0: the base document, and values that mix in the shape (0.2 x 0.4 + 0.8 x 0.45),
         * are fine */
        {"z", "y", RN("a", "a2", "0.4", "0.4", "null") "," RN("b", "b2", "0.44", "0.4", "0.45"),
         NULL, NULL},
        {"z", "y", RN("a", "a2", "0.4", "0.4", "null") "," RN("b", "a2", "0.4", "0.4", "null"),
         "$.renamed_candidates[1].to",
         "$.renamed_candidates[1].to: \"a2\" is also $.renamed_candidates[0].to (renames are "
         "one to one)"},
        {"z", "y", RN("a", "a2", "0.4", "0.4", "null") "," RN("a", "b2", "0.4", "0.4", "null"),
         "$.renamed_candidates[1].from",
         "$.renamed_candidates[1].from: \"a\" is also $.renamed_candidates[0].from (renames are "
         "one to one)"},
        {"z", "y", RN("a", "a2", "0.4", "0.4", "null") "," RN("b", "b", "0.4", "0.4", "null"),
         "$.renamed_candidates[1].to",
         "$.renamed_candidates[1].to: \"b\" is also $.renamed_candidates[1].from (a rename "
         "changes the name)"},
        {"z", "a", RN("a", "a2", "0.4", "0.4", "null"), "$.renamed_candidates[0].from",
         "$.renamed_candidates[0].from: \"a\" is also $.removed[0].column (a rename's source is "
         "not also removed)"},
        {"a2", "y", RN("a", "a2", "0.4", "0.4", "null"), "$.renamed_candidates[0].to",
         "$.renamed_candidates[0].to: \"a2\" is also $.added[0].column (a rename's target is "
         "not also added)"},
        {"a", "y", RN("a", "a2", "0.4", "0.4", "null"), "$.renamed_candidates[0].from",
         "$.renamed_candidates[0].from: \"a\" is also $.added[0].column (a name only the newer "
         "snapshot has is not also one only the older has)"},
        {"z", "a2", RN("a", "a2", "0.4", "0.4", "null"), "$.renamed_candidates[0].to",
         "$.renamed_candidates[0].to: \"a2\" is also $.removed[0].column (a name only the "
         "older snapshot has is not also one only the newer has)"},
        /* a chain: a2 cannot be both a's new name and a removed name */
        {"z", "y", RN("a", "a2", "0.4", "0.4", "null") "," RN("a2", "b2", "0.4", "0.4", "null"),
         "$.renamed_candidates[1].from",
         "$.renamed_candidates[1].from: \"a2\" is also $.renamed_candidates[0].to (a name only "
         "the newer snapshot has is not also one only the older has)"},
        {"z\",\"type\":\"int\",\"position\":3},{\"column\":\"z", "y", RN("a", "a2", "0.4", "0.4", "null"), "$.added[1].column",
         "$.added[1].column: \"z\" is also $.added[0].column (a column is listed once)"},
        {"z", "y", RN("a", "a2", "0.45", "0.4", "null"),
         "$.renamed_candidates[0].parts.values",
         "$.renamed_candidates[0].parts.values: 0.45 is not profile 0.4 (with shape null, "
         "values is the profile)"},
        {"z", "y", RN("a", "a2", "null", "0.4", "null"),
         "$.renamed_candidates[0].parts.values",
         "$.renamed_candidates[0].parts.values: null, but profile is a number (with shape "
         "null, values is the profile)"},
        {"z", "y", RN("a", "a2", "0.4", "null", "null"),
         "$.renamed_candidates[0].parts.values",
         "$.renamed_candidates[0].parts.values: a number, but profile is null (with shape "
         "null, values is the profile)"},
        {"z", "y", RN("a", "a2", "0.4", "null", "0.3"),
         "$.renamed_candidates[0].parts.shape",
         "$.renamed_candidates[0].parts.shape: 0.3, but profile is null (the shape is "
         "computed only for columns with sampled values)"},
    };
#undef RN
    for (size_t i = 0; i < N(cases); i++) {
        char doc[4096];
        snprintf(doc, sizeof doc,
                 "%s\"added\":[{\"column\":\"%s\",\"type\":\"int\",\"position\":3}],"
                 "\"removed\":[{\"column\":\"%s\",\"type\":\"int\",\"position\":3}],"
                 "\"type_changed\":[],\"reordered\":false,\"rename_method\":\"combined\","
                 "\"renamed_candidates\":[%s],%s",
                 head, cases[i].added, cases[i].removed, cases[i].renames, tail);
        pgw_diff *out = NULL;
        pgw_error err;
        int rc = pgw_diff_from_json(&out, doc, strlen(doc), &err);
        if (!cases[i].msg) {
            ck_assert_msg(rc == PGW_OK, "case %zu: %s at %s", i, err.message, err.path);
            ck_assert_uint_eq(pgw_diff_renamed_count(out), 2);
            ck_assert(pgw_diff_renamed(out, 1)->parts.values == 0.44);
            pgw_diff_free(out);
            continue;
        }
        ck_assert_msg(rc == PGW_EPARSE, "case %zu rc %d", i, rc);
        ck_assert_ptr_null(out);
        ck_assert_str_eq(err.path, cases[i].path);
        ck_assert_str_eq(err.message, cases[i].msg);
    }
    /* Format 1 has no parts, but its renames are one to one too. */
    static const char doc1[] =
        "{\"format\":1,\"from\":{\"schema\":\"public\",\"table\":\"t\","
        "\"resource_identity\":null,\"captured_at\":\"2025-11-30T09:10:44.123456Z\","
        "\"schema_hash\":\"8235bd3111628395\"},\"to\":{\"schema\":\"public\",\"table\":\"t\","
        "\"resource_identity\":null,\"captured_at\":\"2025-12-01T09:10:44.123456Z\","
        "\"schema_hash\":\"5e8ae2a2a66b83f6\"},\"schema_changed\":true,\"class\":\"renamed\","
        "\"added\":[],\"removed\":[],\"type_changed\":[],\"reordered\":false,"
        "\"renamed_candidates\":[{\"from\":\"a\",\"to\":\"b\",\"from_type\":\"text\","
        "\"to_type\":\"text\",\"score\":1.0,\"evidence\":\"values\"},{\"from\":\"c\","
        "\"to\":\"b\",\"from_type\":\"text\",\"to_type\":\"text\",\"score\":0.9,"
        "\"evidence\":\"values\"}],\"profile_changed\":[],"
        "\"row_estimate\":{\"from\":100,\"to\":null},\"name_anomalies\":[]}";
    pgw_diff *out = NULL;
    pgw_error err;
    ck_assert_int_eq(pgw_diff_from_json(&out, doc1, strlen(doc1), &err), PGW_EPARSE);
    ck_assert_str_eq(err.message, "$.renamed_candidates[1].to: \"b\" is also "
                                  "$.renamed_candidates[0].to (renames are one to one)");
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
    /* pgw_rename_score lists the kept columns for the contrast (n ->
     * new_col1: names under 0.5, values above 0): its one allocation
     * failing is PGW_ENOMEM, *out untouched, nothing leaked. */
    pgwt_alloc_install();
    pgwt_alloc_fail_at(1);
    double sc = -7;
    pgw_error err;
    ck_assert_int_eq(pgw_rename_score(&sc, NULL, c.a, 1, c.b, 0, NULL, &err), PGW_ENOMEM);
    ck_assert(pgwt_alloc_failed());
    pgwt_alloc_fail_at(0);
    ck_assert(sc == -7);
    ck_assert_str_eq(err.message, "rename_score: out of memory");
    ck_assert_uint_eq(pgwt_alloc_get().live, 0);
    pgw_rename_parts p;
    ck_assert_int_eq(pgw_rename_score(&sc, &p, c.a, 1, c.b, 0, NULL, &err), PGW_OK);
    ck_assert(p.contrast >= 0);
    pgwt_alloc_uninstall();
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
    tcase_add_test(tc, hashed_profiles_degrade);
    tcase_add_test(tc, renames_one_to_one_deterministic);
    tcase_add_test(tc, assignment_beats_greedy);
    tcase_add_test(tc, start_end_not_crosswise);
    tcase_add_test(tc, diff_json_format1_reads);
    tcase_add_test(tc, corpus_pair_scores);
    tcase_add_test(tc, corpus_diffs);
    tcase_add_test(tc, options_versions_and_weights);
    tcase_add_test(tc, name_anomalies);
    tcase_add_test(tc, contrast_against_kept_columns);
    tcase_add_test(tc, diff_json_strict);
    tcase_add_test(tc, diff_json_impossible);
    tcase_add_test(tc, allocation_failures);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return pgwt_main(suite());
}
