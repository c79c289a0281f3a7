/*
 * tests/pg/check_penguins.c — the real-data end-to-end case of issue 4:
 * the three published formats of palmerpenguins (examples/data) arrive as
 * successive re-ingests of one table through the example collector
 * (examples/ingest), each ANALYZEd; the collector drops through the funnel
 * when the header changes; the snapshots are loaded back and diffed.
 *
 * The expected result was written down before the first run:
 *   v1 -> v2: renamed  Culmen Length (mm) -> culmen_length_mm   (values + name)
 *                      Culmen Depth (mm)  -> culmen_depth_mm    (values + name)
 *                      Flipper Length (mm)-> flipper_length_mm  (values + name)
 *                      Body Mass (g)      -> body_mass_g        (values + name)
 *                      Island             -> island             (values + name)
 *                      Sex                -> sex                (values + name)
 *                      Species            -> species            (name only: the
 *                        values changed form, "Adelie Penguin (Pygoscelis
 *                        adeliae)" -> "Adelie"; with the combined score of
 *                        issue 17, values + name: the labels changed but
 *                        not their shares, so the frequency profiles agree)
 *             removed  studyName, Sample Number, Region, Stage, Individual ID,
 *                      Clutch Completion, Date Egg, Delta 15 N (o/oo),
 *                      Delta 13 C (o/oo), Comments;  nothing added; mixed
 *   v2 -> v3: renamed  culmen_length_mm -> bill_length_mm, culmen_depth_mm ->
 *                      bill_depth_mm (values; with issue 17's graded name
 *                      score, values + name: length|mm and depth|mm are
 *                      kept);  added year;  profile_changed
 *                      sex ("MALE" -> "male");  mixed
 * The scores are printed as TAP diagnostics.
 *
 * Also: the snapshot fixtures of the rename corpus (tests/data/renames,
 * made by its make-fixtures) are what the ingest and the capture give
 * today, for two of its pairs: penguins-v1-v2, and baddrivers-538-seaborn,
 * whose long header names are cut to 63 bytes.
 * SPDX-License-Identifier: MIT
 */
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest.h"
#include "pgw_test.h"
#include "pgwitness/pgwitness-pq.h"

#define DATA PGW_DATA_DIR "/palmerpenguins/"

static void ingest(PGconn *c, const char *file, ingest_result *r)
{
    pgw_error err;
    pgw_error_clear(&err);
    int rc = ingest_csv(r, c, file, "public", "penguins", "palmerpenguins", NULL, &err);
    ck_assert_msg(rc == PGW_OK, "ingest %s: %s", file, err.message);
    ck_assert_uint_eq(r->rows, 344);
}

static const pgw_rename *find_rename(const pgw_diff *d, const char *from)
{
    for (size_t i = 0; i < pgw_diff_renamed_count(d); i++)
        if (strcmp(pgw_diff_renamed(d, i)->from, from) == 0)
            return pgw_diff_renamed(d, i);
    return NULL;
}

static void expect_rename(const pgw_diff *d, const char *label, const char *from, const char *to,
                          pgw_rename_evidence evidence)
{
    const pgw_rename *r = find_rename(d, from);
    ck_assert_msg(r != NULL, "%s: no rename from \"%s\"", label, from);
    ck_assert_str_eq(r->to, to);
    ck_assert_msg(r->evidence == evidence, "%s: %s -> %s evidence %d, want %d", label, from, to,
                  r->evidence, evidence);
    ck_assert_msg(r->score >= PGW_RENAME_THRESHOLD && r->score == r->parts.score,
                  "%s: %s -> %s score %g", label, from, to, r->score);
    printf("# %s: %-22s -> %-18s score %.4f evidence %s (name %.4f, values %.4f, type %.1f, "
           "position %.4f)\n",
           label, from, to, r->score,
           evidence == PGW_EVIDENCE_BOTH ? "values+name"
           : evidence == PGW_EVIDENCE_NAME ? "name" : "values",
           r->parts.name, r->parts.values, r->parts.type, r->parts.position);
    fflush(stdout);
}

START_TEST(three_formats_of_palmerpenguins)
{
    PGconn *c = pgwt_connect();
    pgw_error err;
    ck_assert_int_eq(pgw_pq_install(NULL, c, NULL, &err), PGW_OK);
    pgw_pq_baseline_result br;
    ck_assert_int_eq(pgw_pq_baseline(&br, c, NULL, &err), PGW_OK); /* nothing yet */
    ck_assert_uint_eq(br.captured, 0);

    ingest_result r;
    ingest(c, DATA "v1_penguins_raw.csv", &r);
    ck_assert(!r.existed);
    ck_assert_uint_eq(r.columns, 17);
    ck_assert_str_eq(r.types, "text,integer,text,text,text,text,text,text,text,numeric,numeric,"
                              "integer,integer,text,numeric,numeric,text");
    ingest(c, DATA "v2_penguins_size.csv", &r);
    ck_assert(r.recreated);
    ck_assert_uint_eq(r.old_columns, 17);
    ck_assert_msg(r.drop.snapshot_taken, "%s", r.drop.snapshot_error);
    ingest(c, DATA "v3_penguins.csv", &r);
    ck_assert(r.recreated && r.drop.snapshot_taken);
    ck_assert_str_eq(r.types, "text,text,numeric,numeric,integer,integer,text,integer");
    /* The live v3 table, for the last pair. */
    pgw_pq_capture_options co = PGW_PQ_CAPTURE_OPTIONS_INIT;
    co.resource = "palmerpenguins";
    pgw_snapshot *live = NULL;
    ck_assert_int_eq(pgw_pq_capture(&live, c, "public", "penguins", &co, &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_store(NULL, c, NULL, live, &err), PGW_OK);
    pgw_snapshot_free(live);

    pgw_pq_filter f = PGW_PQ_FILTER_INIT;
    f.resource = "palmerpenguins";
    pgw_pq_snapshot_set *set = NULL;
    ck_assert_int_eq(pgw_pq_load(&set, c, NULL, &f, &err), PGW_OK);
    ck_assert_uint_eq(pgw_pq_snapshot_set_count(set), 3);
    const pgw_snapshot *v1 = pgw_pq_snapshot_set_get(set, 0), *v2 = pgw_pq_snapshot_set_get(set, 1),
                       *v3 = pgw_pq_snapshot_set_get(set, 2);
    ck_assert_str_eq(pgw_snapshot_reason(v1), "schema_mismatch_recreate");
    ck_assert_uint_eq(pgw_snapshot_column_count(v1), 17);
    ck_assert_uint_eq(pgw_snapshot_column_count(v2), 7);
    ck_assert_uint_eq(pgw_snapshot_column_count(v3), 8);
    int64_t rows;
    ck_assert(pgw_snapshot_row_estimate(v1, &rows) && rows == 344);
    ck_assert_str_eq(pgw_snapshot_schema_hash(v2), "81b2f8361022cf12"); /* docs/formats.md */
    ck_assert_str_eq(pgw_snapshot_schema_hash(v3), "3562be7126aad1e5");
    ck_assert_str_eq(pgw_snapshot_schema_hash(v1), "68892d617cfb0893");

    pgw_diff *d = NULL;
    ck_assert_int_eq(pgw_diff_snapshots(&d, v1, v2, NULL, &err), PGW_OK);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 7);
    expect_rename(d, "v1->v2", "Culmen Length (mm)", "culmen_length_mm", PGW_EVIDENCE_BOTH);
    expect_rename(d, "v1->v2", "Culmen Depth (mm)", "culmen_depth_mm", PGW_EVIDENCE_BOTH);
    expect_rename(d, "v1->v2", "Flipper Length (mm)", "flipper_length_mm", PGW_EVIDENCE_BOTH);
    expect_rename(d, "v1->v2", "Body Mass (g)", "body_mass_g", PGW_EVIDENCE_BOTH);
    expect_rename(d, "v1->v2", "Island", "island", PGW_EVIDENCE_BOTH);
    expect_rename(d, "v1->v2", "Sex", "sex", PGW_EVIDENCE_BOTH);
    expect_rename(d, "v1->v2", "Species", "species", PGW_EVIDENCE_BOTH);
    /* The values changed form (profile similarity 0.3) but kept their
     * shares (shape 1): values 0.4 * 0.3 + 0.6 * 1 = 0.72. */
    const pgw_rename_parts *sp = &find_rename(d, "Species")->parts;
    ck_assert_msg(sp->profile == 0.3 && sp->shape == 1.0 && sp->values == 0.72 && sp->name == 1.0,
                  "profile %g shape %g values %g name %g", sp->profile, sp->shape, sp->values,
                  sp->name);
    static const char *removed[] = {"studyName", "Sample Number", "Region", "Stage",
                                    "Individual ID", "Clutch Completion", "Date Egg",
                                    "Delta 15 N (o/oo)", "Delta 13 C (o/oo)", "Comments"};
    ck_assert_uint_eq(pgw_diff_removed_count(d), 10);
    for (size_t i = 0; i < 10; i++)
        ck_assert_str_eq(pgw_diff_removed(d, i)->column, removed[i]);
    ck_assert_uint_eq(pgw_diff_added_count(d), 0);
    ck_assert_uint_eq(pgw_diff_type_changed_count(d), 0);
    ck_assert_int_eq(pgw_diff_class(d), PGW_CHANGE_MIXED);
    pgw_diff_free(d);

    ck_assert_int_eq(pgw_diff_snapshots(&d, v2, v3, NULL, &err), PGW_OK);
    ck_assert_uint_eq(pgw_diff_renamed_count(d), 2);
    expect_rename(d, "v2->v3", "culmen_length_mm", "bill_length_mm", PGW_EVIDENCE_BOTH);
    expect_rename(d, "v2->v3", "culmen_depth_mm", "bill_depth_mm", PGW_EVIDENCE_BOTH);
    ck_assert_uint_eq(pgw_diff_added_count(d), 1);
    ck_assert_str_eq(pgw_diff_added(d, 0)->column, "year");
    ck_assert_uint_eq(pgw_diff_removed_count(d), 0);
    ck_assert_uint_eq(pgw_diff_profile_changed_count(d), 1);
    ck_assert_str_eq(pgw_diff_profile_changed(d, 0)->column, "sex");
    printf("# v2->v3: sex profile similarity %.4f (below 0.6: values changed form)\n",
           pgw_diff_profile_changed(d, 0)->score);
    ck_assert_int_eq(pgw_diff_class(d), PGW_CHANGE_MIXED);
    pgw_diff_free(d);

    pgw_drift *dr = NULL;
    ck_assert_int_eq(pgw_drift_report(&dr, pgw_pq_snapshot_set_all(set), 3, NULL, &err), PGW_OK);
    ck_assert_uint_eq(pgw_drift_pairs(dr), 2);
    ck_assert_uint_eq(pgw_drift_changed_pairs(dr), 2);
    ck_assert_uint_eq(pgw_drift_class_count(dr, PGW_CHANGE_MIXED), 2);
    ck_assert_uint_eq(pgw_drift_profile_changed_pairs(dr), 1);
    pgw_drift_free(dr);
    pgw_pq_snapshot_set_free(set);

    /* Storage: the median stored row stays under 4 KB. */
    long long median = pgwt_int(c, "SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY "
                                   "pg_column_size(s.*)) FROM pgwitness.snapshots s "
                                   "WHERE resource_identity = 'palmerpenguins'");
    long long biggest = pgwt_int(c, "SELECT max(pg_column_size(s.*)) FROM pgwitness.snapshots s "
                                    "WHERE resource_identity = 'palmerpenguins'");
    printf("# stored size per snapshot: median %lld bytes, largest %lld bytes\n", median, biggest);
    fflush(stdout);
    ck_assert_int_le(median, 4096);
    /* The audit trail: two drops, both with their snapshots. */
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgwitness.drop_audit WHERE dropped AND "
                                 "snapshot_id IS NOT NULL AND reason = 'schema_mismatch_recreate'"),
                     2);
    PQfinish(c);
}
END_TEST

/* The snapshot as canonical JSON, parsed, without the two fields that
 * change at every capture and that make-fixtures fixes (table_oid and
 * captured_at). */
static json_t *deterministic_part(const pgw_snapshot *s)
{
    char *text = NULL;
    size_t len = 0;
    pgw_error err;
    ck_assert_int_eq(pgw_snapshot_to_json(&text, &len, s, 0, &err), PGW_OK);
    json_error_t jerr;
    json_t *j = json_loadb(text, len, 0, &jerr);
    ck_assert_msg(j != NULL, "%s", jerr.text);
    pgw_free(text);
    ck_assert_int_eq(json_object_del(j, "table_oid"), 0);
    ck_assert_int_eq(json_object_del(j, "captured_at"), 0);
    return j;
}

/* The JSON path of the first place where two unequal documents differ
 * (appended to `where`), and the two values there, for the message. */
static void first_difference(const json_t *a, const json_t *b, char *where, size_t where_size,
                             char *values, size_t values_size)
{
    size_t len = strlen(where);
    if (json_is_object(a) && json_is_object(b)) {
        const char *key;
        const json_t *va;
        json_object_foreach((json_t *)a, key, va) {
            const json_t *vb = json_object_get(b, key);
            if (vb && json_equal(va, vb))
                continue;
            snprintf(where + len, where_size - len, ".%s", key);
            if (vb) {
                first_difference(va, vb, where, where_size, values, values_size);
                return;
            }
            snprintf(values, values_size, "no longer there");
            return;
        }
        snprintf(values, values_size, "a key was added");
        return;
    }
    if (json_is_array(a) && json_is_array(b)) {
        for (size_t i = 0; i < json_array_size(a) && i < json_array_size(b); i++) {
            if (json_equal(json_array_get(a, i), json_array_get(b, i)))
                continue;
            snprintf(where + len, where_size - len, "[%zu]", i);
            first_difference(json_array_get(a, i), json_array_get(b, i), where, where_size,
                             values, values_size);
            return;
        }
        snprintf(values, values_size, "committed %zu elements, now %zu", json_array_size(a),
                 json_array_size(b));
        return;
    }
    char *ta = json_dumps(a, JSON_ENCODE_ANY | JSON_COMPACT);
    char *tb = json_dumps(b, JSON_ENCODE_ANY | JSON_COMPACT);
    snprintf(values, values_size, "committed %.200s, now %.200s", ta ? ta : "?", tb ? tb : "?");
    free(ta);
    free(tb);
}

static pgw_snapshot *read_fixture(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    static char buf[1 << 20];
    size_t len = fread(buf, 1, sizeof buf, f);
    ck_assert(feof(f) && !ferror(f));
    fclose(f);
    pgw_snapshot *s = NULL;
    pgw_error err;
    int rc = pgw_snapshot_from_json(&s, buf, len, NULL, &err);
    ck_assert_msg(rc == PGW_OK, "%s: %s at %s", path, err.message, err.path);
    return s;
}

/*
 * Loads a pair of the rename corpus as make-fixtures does (the ingest
 * example, in a schema named after the pair, tables old and new, ANALYZE
 * at default_statistics_target 100) and compares each snapshot with the
 * committed fixture: everything but table_oid and captured_at — the
 * columns, their types and positions, every profile statistic, the row
 * estimate and the schema hash. The files are under ANALYZE's 30,000-row
 * sample, so ANALYZE reads them whole and the statistics are exact.
 */
static void fixture_is_current(PGconn *c, const char *pair, size_t columns_old)
{
    char sql[256], path[1024];
    snprintf(sql, sizeof sql, "CREATE SCHEMA \"%s\"", pair);
    pgwt_exec(c, sql);
    static const char *const sides[] = {"old", "new"};
    for (size_t k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s/%s.csv", PGW_RENAMES_DIR, pair, sides[k]);
        ingest_result r;
        pgw_error err;
        int rc = ingest_csv(&r, c, path, pair, sides[k], NULL, NULL, &err);
        ck_assert_msg(rc == PGW_OK, "ingest %s: %s", path, err.message);
        if (k == 0)
            ck_assert_uint_eq(r.columns, columns_old);
        pgw_snapshot *live = NULL;
        ck_assert_int_eq(pgw_pq_capture(&live, c, pair, sides[k], NULL, &err), PGW_OK);
        snprintf(path, sizeof path, "%s/%s/%s.snapshot.json", PGW_RENAMES_DIR, pair, sides[k]);
        pgw_snapshot *fixture = read_fixture(path);
        json_t *want = deterministic_part(fixture), *got = deterministic_part(live);
        char where[512] = "$", values[512];
        if (!json_equal(want, got)) {
            first_difference(want, got, where, sizeof where, values, sizeof values);
            ck_abort_msg("%s is stale (regenerate it with tests/data/renames/make-fixtures): "
                         "%s: %s",
                         path, where, values);
        }
        printf("# %s/%s: %zu columns, same as its fixture\n", pair, sides[k],
               pgw_snapshot_column_count(live));
        fflush(stdout);
        json_decref(want);
        json_decref(got);
        pgw_snapshot_free(fixture);
        pgw_snapshot_free(live);
    }
}

START_TEST(rename_corpus_fixtures_are_current)
{
    PGconn *c = pgwt_connect();
    pgwt_exec(c, "SET default_statistics_target = 100");
    fixture_is_current(c, "penguins-v1-v2", 17);
    /* Six names over 63 bytes, cut as PostgreSQL cuts them. */
    fixture_is_current(c, "baddrivers-538-seaborn", 8);
    PQfinish(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("penguins");
    TCase *tc = tcase_create("penguins");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, three_formats_of_palmerpenguins);
    tcase_add_test(tc, rename_corpus_fixtures_are_current);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    pgwt_pg_setup("penguins");
    return pgwt_main(suite());
}
