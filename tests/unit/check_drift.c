/*
 * tests/unit/check_drift.c — the drift report: grouping by resource,
 * ordering by time, classes, totals, per-resource timelines and JSON.
 * SPDX-License-Identifier: MIT
 */
#include <jansson.h>
#include <string.h>

#include "pgw_test.h"
#include "pgwt_snap.h"

#define DAY 86400000000LL
#define T0 1764493844123456LL

static const char *const ab[] = {"A", "B", NULL};
static const double half[] = {0.5, 0.5};

START_TEST(report_groups_orders_classifies)
{
    pgwt_col r1[] = {{"a", "int", false}, {"b", "int", false}};
    pgwt_col r2[] = {{"a", "int", false}, {"b", "int", false}, {"c", "int", false}};
    pgwt_col r4[] = {{"b", "int", false}, {"a", "int", false}, {"c", "int", false}};
    pgwt_col s1[] = {{"x", "text", true, 0, 2, ab, half, NULL}};
    pgwt_col s2[] = {{"y", "text", true, 0, 2, ab, half, NULL}};
    /* Resource "R" spans three tables; "public.s" has none (schema.table). */
    pgw_snapshot *snaps[6] = {
        pgwt_snapshot_opts("r_v4", "R", T0 + 3 * DAY, 1, r4, 3, NULL),
        pgwt_snapshot("s", T0 + DAY, 1, s2, 1),
        pgwt_snapshot_opts("r_v1", "R", T0, 1, r1, 2, NULL),
        pgwt_snapshot_opts("r_v3", "R", T0 + 2 * DAY, 1, r2, 3, NULL),
        pgwt_snapshot("s", T0, 1, s1, 1),
        pgwt_snapshot_opts("r_v2", "R", T0 + DAY, 1, r2, 3, NULL),
    };
    pgw_drift *d = NULL;
    pgw_error err;
    ck_assert_int_eq(pgw_drift_report(&d, (const pgw_snapshot *const *)snaps, 6, NULL, &err),
                     PGW_OK);
    ck_assert_uint_eq(pgw_drift_snapshots(d), 6);
    ck_assert_uint_eq(pgw_drift_pairs(d), 4);
    ck_assert_uint_eq(pgw_drift_changed_pairs(d), 3);
    ck_assert(pgw_drift_rate(d) == 0.75);
    ck_assert_uint_eq(pgw_drift_class_count(d, PGW_CHANGE_ADDITIVE), 1);
    ck_assert_uint_eq(pgw_drift_class_count(d, PGW_CHANGE_UNCHANGED), 1);
    ck_assert_uint_eq(pgw_drift_class_count(d, PGW_CHANGE_REORDERED), 1);
    ck_assert_uint_eq(pgw_drift_class_count(d, PGW_CHANGE_RENAMED), 1);
    ck_assert_uint_eq(pgw_drift_class_count(d, PGW_CHANGE_MIXED), 0);
    ck_assert_uint_eq(pgw_drift_class_count(d, (pgw_change_class)99), 0);
    ck_assert_uint_eq(pgw_drift_resource_count(d), 2);
    const pgw_drift_resource *r = pgw_drift_resource_at(d, 0);
    ck_assert_str_eq(r->resource, "R");
    ck_assert_uint_eq(r->snapshots, 4);
    ck_assert_int_eq(r->first, T0);
    ck_assert_int_eq(r->last, T0 + 3 * DAY);
    ck_assert_uint_eq(r->pairs, 3);
    ck_assert_uint_eq(r->changed_pairs, 2);
    ck_assert_int_eq(r->steps[0].change, PGW_CHANGE_ADDITIVE);
    ck_assert_str_eq(pgw_diff_from(r->steps[0].diff)->table, "r_v1");
    ck_assert_str_eq(pgw_diff_to(r->steps[0].diff)->table, "r_v2");
    ck_assert_int_eq(r->steps[1].change, PGW_CHANGE_UNCHANGED);
    ck_assert_int_eq(r->steps[2].change, PGW_CHANGE_REORDERED);
    const pgw_drift_resource *s = pgw_drift_resource_at(d, 1);
    ck_assert_str_eq(s->resource, "public.s");
    ck_assert_uint_eq(s->pairs, 1);
    ck_assert_int_eq(s->steps[0].change, PGW_CHANGE_RENAMED);
    ck_assert_ptr_null(pgw_drift_resource_at(d, 2));

    /* The report stays valid after the snapshots are gone. */
    for (int i = 0; i < 6; i++)
        pgw_snapshot_free(snaps[i]);

    char *text;
    ck_assert_int_eq(pgw_drift_to_json(&text, NULL, d, 0, NULL), PGW_OK);
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "pairs")), 4);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "changed_pairs")), 3);
    ck_assert(json_real_value(json_object_get(j, "rate")) == 0.75);
    json_t *classes = json_object_get(j, "classes");
    ck_assert_int_eq(json_integer_value(json_object_get(classes, "renamed")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(classes, "mixed")), 0);
    json_t *per = json_object_get(j, "per_resource");
    ck_assert_uint_eq(json_array_size(per), 2);
    json_t *tl = json_object_get(json_array_get(per, 1), "timeline");
    json_t *step = json_array_get(tl, 0);
    ck_assert_str_eq(json_string_value(json_object_get(step, "class")), "renamed");
    ck_assert_str_eq(json_string_value(json_object_get(step, "from")),
                     "2025-11-30T09:10:44.123456Z");
    json_t *ren = json_array_get(json_object_get(step, "renamed"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(ren, "from")), "x");
    ck_assert_str_eq(json_string_value(json_object_get(ren, "to")), "y");
    /* The diff's rename score: x and y share no name token, their values
     * agree (values 1), and no column is kept to contrast them with:
     * 0.55 * 1 (same type, one column each). */
    ck_assert(json_real_value(json_object_get(ren, "score")) == 0.55);
    ck_assert_str_eq(json_string_value(json_object_get(ren, "evidence")), "values");
    json_t *added = json_object_get(json_array_get(json_object_get(json_array_get(per, 0),
                                                                   "timeline"),
                                                   0),
                                    "added");
    ck_assert_str_eq(json_string_value(json_array_get(added, 0)), "c");
    json_decref(j);
    pgw_free(text);
    pgw_drift_free(d);
}
END_TEST

START_TEST(empty_and_bad_input)
{
    pgw_drift *d = NULL;
    pgw_error err;
    ck_assert_int_eq(pgw_drift_report(&d, NULL, 0, NULL, &err), PGW_OK);
    ck_assert_uint_eq(pgw_drift_pairs(d), 0);
    ck_assert(pgw_drift_rate(d) == 0.0);
    char *text;
    ck_assert_int_eq(pgw_drift_to_json(&text, NULL, d, 0, NULL), PGW_OK);
    ck_assert_str_eq(text, "{\"format\":1,\"snapshots\":0,\"resources\":0,\"pairs\":0,"
                           "\"changed_pairs\":0,\"rate\":null,\"classes\":{\"unchanged\":0,"
                           "\"additive\":0,\"subtractive\":0,\"renamed\":0,\"retyped\":0,"
                           "\"reordered\":0,\"mixed\":0},\"profile_changed_pairs\":0,"
                           "\"per_resource\":[]}");
    pgw_free(text);
    pgw_drift_free(d);
    const pgw_snapshot *none[1] = {NULL};
    ck_assert_int_eq(pgw_drift_report(&d, none, 1, NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "drift_report: snapshots[0] is NULL");
    ck_assert_int_eq(pgw_drift_report(NULL, none, 0, NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "drift_report: out is NULL");
    ck_assert_int_eq(pgw_drift_report(&d, NULL, 2, NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "drift_report: snapshots is NULL with n 2");
    pgw_drift_free(NULL);
}
END_TEST

START_TEST(allocation_failures)
{
    pgwt_col r1[] = {{"a", "int", false}, {"b", "int", false}};
    pgwt_col r2[] = {{"a", "int", false}, {"c", "int", false}};
    pgw_snapshot *snaps[3] = {
        pgwt_snapshot("t", T0, 1, r1, 2),
        pgwt_snapshot("t", T0 + DAY, 1, r2, 2),
        pgwt_snapshot_opts("u", "res", T0, 1, r2, 2, NULL),
    };
    pgwt_alloc_install();
    size_t n;
    for (n = 1; n < 10000; n++) {
        pgw_drift *d = NULL;
        char *text = NULL;
        pgwt_alloc_fail_at(n);
        int rc = pgw_drift_report(&d, (const pgw_snapshot *const *)snaps, 3, NULL, NULL);
        if (rc == PGW_OK)
            rc = pgw_drift_to_json(&text, NULL, d, 0, NULL);
        bool failed = pgwt_alloc_failed();
        pgwt_alloc_fail_at(0);
        pgw_free(text);
        pgw_drift_free(d);
        if (!failed) {
            ck_assert_int_eq(rc, PGW_OK);
            break;
        }
        ck_assert_int_eq(rc, PGW_ENOMEM);
        ck_assert_uint_eq(pgwt_alloc_get().live, 0);
    }
    ck_assert_uint_gt(n, 5);
    pgwt_alloc_uninstall();
    for (int i = 0; i < 3; i++)
        pgw_snapshot_free(snaps[i]);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("drift");
    TCase *tc = tcase_create("drift");
    tcase_add_test(tc, report_groups_orders_classifies);
    tcase_add_test(tc, empty_and_bad_input);
    tcase_add_test(tc, allocation_failures);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return pgwt_main(suite());
}
