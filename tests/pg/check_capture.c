/*
 * tests/pg/check_capture.c — pgw_pq_install and pgw_pq_capture against the
 * real server: migrations, catalog-only capture (seq_scan does not move),
 * never-analysed tables, dropped columns, privileges and row-level
 * security, partitioned parents, print settings, hostile identifiers.
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pgw_test.h"
#include "pgwitness/pgwitness-pq.h"

static pgw_snapshot *capture(PGconn *c, const char *schema, const char *table)
{
    pgw_snapshot *s = NULL;
    pgw_error err;
    pgw_error_clear(&err);
    int rc = pgw_pq_capture(&s, c, schema, table, NULL, &err);
    ck_assert_msg(rc == PGW_OK, "capture %s.%s: %s", schema, table, err.message);
    return s;
}

/* ------------------------------------------------------------------ */
/* install                                                             */

START_TEST(install_is_idempotent)
{
    PGconn *c = pgwt_connect();
    int v = -1;
    pgw_error err;
    ck_assert_int_eq(pgw_pq_schema_version(&v, c, "pgw_idem", &err), PGW_OK);
    ck_assert_int_eq(v, 0);
    ck_assert_int_eq(pgw_pq_install(&v, c, "pgw_idem", &err), PGW_OK);
    ck_assert_int_eq(v, PGW_PQ_SCHEMA_VERSION);
    ck_assert_int_eq(pgw_pq_install(&v, c, "pgw_idem", &err), PGW_OK);
    ck_assert_int_eq(pgw_pq_schema_version(&v, c, "pgw_idem", &err), PGW_OK);
    ck_assert_int_eq(v, PGW_PQ_SCHEMA_VERSION);
    /* One row per migration. */
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgw_idem.schema_version"),
                     PGW_PQ_SCHEMA_VERSION);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_tables WHERE schemaname = "
                                 "'pgw_idem' AND tablename IN ('snapshots', 'drop_audit')"),
                     2);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_indexes WHERE schemaname = "
                                 "'pgw_idem' AND indexname LIKE 'snapshots_by_%'"),
                     4);
    /* A schema name that needs quoting. */
    ck_assert_int_eq(pgw_pq_install(&v, c, "Pgw \"odd\"; --", &err), PGW_OK);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM \"Pgw \"\"odd\"\"; --\".snapshots"), 0);
    /* Inside a transaction: refused, nothing done. */
    pgwt_exec(c, "BEGIN");
    ck_assert_int_eq(pgw_pq_install(&v, c, "pgw_in_tx", &err), PGW_ESTATE);
    pgwt_exec(c, "ROLLBACK");
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pg_namespace WHERE nspname = 'pgw_in_tx'"),
                     0);
    ck_assert_int_eq(pgw_pq_install(&v, c, "", &err), PGW_EINVAL);
    /* A newer schema than this library: refused. */
    pgwt_exec(c, "INSERT INTO pgw_idem.schema_version VALUES (99, 'from the future')");
    ck_assert_int_eq(pgw_pq_install(&v, c, "pgw_idem", &err), PGW_EVERSION);
    ck_assert_msg(strstr(err.message, "is at version 99") != NULL, "%s", err.message);
    PQfinish(c);
}
END_TEST

static void *install_thread(void *arg)
{
    (void)arg;
    PGconn *c = pgwt_connect_opts(NULL);
    pgw_error err;
    int v = 0;
    intptr_t rc = c ? pgw_pq_install(&v, c, "pgw_race", &err) : -100;
    PQfinish(c);
    return (void *)rc;
}

START_TEST(install_from_many_sessions_at_once)
{
    pthread_t t[6];
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, install_thread, NULL), 0);
    for (int i = 0; i < 6; i++) {
        void *rc;
        pthread_join(t[i], &rc);
        ck_assert_int_eq((int)(intptr_t)rc, PGW_OK);
    }
    PGconn *c = pgwt_connect();
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM pgw_race.schema_version"),
                     PGW_PQ_SCHEMA_VERSION);
    PQfinish(c);
}
END_TEST

START_TEST(install_without_privilege_changes_nothing)
{
    PGconn *c = pgwt_connect();
    pgwt_exec(c, "DROP ROLE IF EXISTS pgw_weak; CREATE ROLE pgw_weak LOGIN");
    char db[160];
    snprintf(db, sizeof db, "REVOKE CREATE ON DATABASE \"%s\" FROM PUBLIC", pgwt_dbname());
    pgwt_exec(c, db);
    PGconn *w = pgwt_connect_opts("user=pgw_weak");
    ck_assert_ptr_nonnull(w);
    pgw_error err;
    int v = 0;
    ck_assert_int_eq(pgw_pq_install(&v, w, "pgw_weak_schema", &err), PGW_EPG);
    ck_assert_str_eq(err.sqlstate, "42501");
    ck_assert_int_eq(PQtransactionStatus(w), PQTRANS_IDLE);
    PQfinish(w);
    ck_assert_int_eq(
        pgwt_int(c, "SELECT count(*) FROM pg_namespace WHERE nspname = 'pgw_weak_schema'"), 0);
    PQfinish(c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* capture                                                             */

START_TEST(capture_records_catalog_and_stats)
{
    PGconn *c = pgwt_connect();
    pgwt_exec(c, "CREATE TABLE cap_basic (id integer PRIMARY KEY, title varchar(40), "
                 "status text, score numeric(5,2), seen timestamptz, tags text[])");
    /* Never analysed: columns and types, no stats, null row estimate. */
    pgw_snapshot *s = capture(c, "public", "cap_basic");
    ck_assert_uint_eq(pgw_snapshot_column_count(s), 6);
    ck_assert(!pgw_snapshot_stats_available(s));
    int64_t rows = 42;
    ck_assert(!pgw_snapshot_row_estimate(s, &rows));
    ck_assert_int_eq(rows, 42);
    static const char *types[] = {"integer", "character varying(40)", "text", "numeric(5,2)",
                                  "timestamp with time zone", "text[]"};
    for (size_t i = 0; i < 6; i++) {
        ck_assert_str_eq(pgw_snapshot_column(s, i)->type, types[i]);
        ck_assert_ptr_null(pgw_snapshot_column(s, i)->profile);
    }
    ck_assert_str_eq(pgw_snapshot_reason(s), "manual");
    ck_assert_uint_eq(pgw_snapshot_table_oid(s),
                      (uint32_t)pgwt_int(c, "SELECT 'cap_basic'::regclass::oid::int8"));
    pgw_snapshot_free(s);

    pgwt_exec(c, "INSERT INTO cap_basic SELECT g, 'title ' || g, "
                 "CASE WHEN g % 3 = 0 THEN 'closed' ELSE 'open' END, g / 7.0, "
                 "'2025-01-01'::timestamptz + g * interval '1 hour', ARRAY['a', 'b'] "
                 "FROM generate_series(1, 300) g");
    pgwt_exec(c, "ANALYZE cap_basic");
    pgw_pq_capture_options o = PGW_PQ_CAPTURE_OPTIONS_INIT;
    o.reason = PGW_REASON_SCHEMA_MISMATCH_RECREATE;
    o.resource = "upstream/cap";
    o.extra = "{\"batch\": 7}";
    pgw_error err;
    ck_assert_int_eq(pgw_pq_capture(&s, c, "public", "cap_basic", &o, &err), PGW_OK);
    ck_assert(pgw_snapshot_stats_available(s));
    ck_assert(pgw_snapshot_row_estimate(s, &rows));
    ck_assert_int_eq(rows, 300);
    ck_assert_str_eq(pgw_snapshot_reason(s), "schema_mismatch_recreate");
    ck_assert_str_eq(pgw_snapshot_resource(s), "upstream/cap");
    ck_assert_str_eq(pgw_snapshot_extra(s), "{\"batch\":7}");
    const pgw_profile *st = pgw_snapshot_column(s, 2)->profile;
    ck_assert_ptr_nonnull(st);
    ck_assert_uint_eq(st->n_most_common, 2);
    ck_assert_str_eq(st->most_common_vals[0], "open");
    ck_assert_str_eq(st->most_common_vals[1], "closed");
    ck_assert_msg(st->most_common_freqs[0] > 0.66 && st->most_common_freqs[0] < 0.67, "%g",
                  st->most_common_freqs[0]);
    ck_assert(st->null_frac == 0.0);
    ck_assert(st->n_distinct == 2.0);
    const pgw_profile *id = pgw_snapshot_column(s, 0)->profile;
    ck_assert(id->n_distinct == -1.0);
    ck_assert_uint_eq(id->n_most_common, 0);
    /* PostgreSQL keeps 101 bounds for 300 distinct ids; 20 are kept, evenly,
     * first and last included. */
    ck_assert_uint_eq(id->n_histogram_bounds, 20);
    ck_assert_str_eq(id->histogram_bounds[0], "1");
    ck_assert_str_eq(id->histogram_bounds[19], "300");
    ck_assert(id->has_correlation && id->correlation == 1.0);
    /* The tags column: an array column's values are array literals. */
    const pgw_profile *tags = pgw_snapshot_column(s, 5)->profile;
    ck_assert_str_eq(tags->most_common_vals[0], "{a,b}");
    /* The captured time is the server's clock, now. */
    ck_assert_int_le(llabs(pgw_snapshot_captured_at(s) -
                           pgwt_int(c, "SELECT (extract(epoch FROM clock_timestamp()) * "
                                       "1000000)::int8")),
                     60000000);
    pgw_snapshot_free(s);
    PQfinish(c);
}
END_TEST

START_TEST(capture_reads_no_table_data)
{
    PGconn *c = pgwt_connect();   /* the capturing session */
    PGconn *r = pgwt_connect();   /* the observer */
    pgwt_exec(c, "CREATE TABLE cap_big AS SELECT g AS id, md5(g::text) AS h, g % 97 AS m "
                 "FROM generate_series(1, 100000) g");
    pgwt_exec(c, "ANALYZE cap_big");
    pgwt_exec(c, "SELECT pg_stat_force_next_flush()");
    const char *q = "SELECT seq_scan FROM pg_stat_user_tables WHERE relname = 'cap_big'";
    /* Reads must not be served from a cached stats snapshot. */
    pgwt_exec(r, "SET stats_fetch_consistency = none");
    sleep(1);
    long long seq0 = pgwt_int(r, q);

    pgw_snapshot *s = capture(c, "public", "cap_big");
    ck_assert(pgw_snapshot_stats_available(s));
    ck_assert_uint_eq(pgw_snapshot_column(s, 2)->profile->n_most_common, 20);
    pgw_snapshot_free(s);
    pgwt_exec(c, "SELECT pg_stat_force_next_flush()");
    usleep(300000);
    long long seq1 = pgwt_int(r, q);
    ck_assert_int_eq(seq1, seq0);

    /* The harness sees scans: one count(*) moves the counter by one, and
     * an unflushed scan by the capture would show up here too. */
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM cap_big"), 100000);
    pgwt_exec(c, "SELECT pg_stat_force_next_flush()");
    long long seq2 = seq1;
    for (int i = 0; i < 50 && seq2 == seq1; i++) {
        usleep(100000);
        seq2 = pgwt_int(r, q);
    }
    ck_assert_int_eq(seq2, seq0 + 1);
    PQfinish(c);
    PQfinish(r);
}
END_TEST

START_TEST(capture_missing_table_is_not_found)
{
    PGconn *c = pgwt_connect();
    pgw_snapshot *s = (pgw_snapshot *)0x1;
    pgw_error err;
    ck_assert_int_eq(pgw_pq_capture(&s, c, "public", "no_such_table", NULL, &err), PGW_ENOTFOUND);
    ck_assert_str_eq(err.message, "no table public.no_such_table");
    ck_assert_ptr_eq(s, (pgw_snapshot *)0x1);
    ck_assert_int_eq(pgw_pq_capture(&s, c, "no_such_schema", "t", NULL, &err), PGW_ENOTFOUND);
    /* A view is not a table. */
    pgwt_exec(c, "CREATE VIEW cap_view AS SELECT 1 AS x");
    ck_assert_int_eq(pgw_pq_capture(&s, c, "public", "cap_view", NULL, &err), PGW_ENOTFOUND);
    ck_assert_int_eq(pgw_pq_capture(&s, c, "public", "", NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_pq_capture(NULL, c, "public", "t", NULL, &err), PGW_EINVAL);
    /* Inside a transaction, and after the capture the transaction is
     * usable; an aborted transaction is refused. */
    pgwt_exec(c, "BEGIN");
    ck_assert_int_eq(pgw_pq_capture(&s, c, "public", "no_such_table", NULL, &err), PGW_ENOTFOUND);
    ck_assert_int_eq(PQtransactionStatus(c), PQTRANS_INTRANS);
    PQclear(PQexec(c, "SELECT 1/0"));
    ck_assert_int_eq(pgw_pq_capture(&s, c, "public", "cap_view", NULL, &err), PGW_ESTATE);
    pgwt_exec(c, "ROLLBACK");
    PQfinish(c);
}
END_TEST

START_TEST(capture_dropped_columns_leave_no_gaps)
{
    PGconn *c = pgwt_connect();
    pgwt_exec(c, "CREATE TABLE cap_drop (a int, b text, c int, d text)");
    pgwt_exec(c, "ALTER TABLE cap_drop DROP COLUMN b");
    pgwt_exec(c, "ALTER TABLE cap_drop DROP COLUMN a");
    pgwt_exec(c, "ALTER TABLE cap_drop ADD COLUMN e date");
    pgw_snapshot *s = capture(c, "public", "cap_drop");
    ck_assert_uint_eq(pgw_snapshot_column_count(s), 3);
    static const char *names[] = {"c", "d", "e"};
    for (size_t i = 0; i < 3; i++) {
        const pgw_column *col = pgw_snapshot_column(s, i);
        ck_assert_str_eq(col->name, names[i]);
        ck_assert_uint_eq(col->position, i + 1);
        ck_assert(strstr(col->name, "pg.dropped") == NULL);
    }
    pgw_snapshot_free(s);
    /* A table with no columns at all. */
    pgwt_exec(c, "CREATE TABLE cap_empty ()");
    s = capture(c, "public", "cap_empty");
    ck_assert_uint_eq(pgw_snapshot_column_count(s), 0);
    ck_assert_str_eq(pgw_snapshot_schema_hash(s), "2d06800538d394c2");
    pgw_snapshot_free(s);
    PQfinish(c);
}
END_TEST

START_TEST(capture_respects_privileges_and_rls)
{
    PGconn *c = pgwt_connect();
    pgwt_exec(c, "DROP ROLE IF EXISTS pgw_reader; CREATE ROLE pgw_reader LOGIN");
    pgwt_exec(c, "CREATE TABLE cap_priv (open_col text, secret text)");
    pgwt_exec(c, "INSERT INTO cap_priv SELECT 'v' || (g % 5), 's' || (g % 3) "
                 "FROM generate_series(1, 100) g");
    pgwt_exec(c, "ANALYZE cap_priv");
    pgwt_exec(c, "GRANT SELECT (open_col) ON cap_priv TO pgw_reader");
    pgwt_exec(c, "CREATE TABLE cap_rls (v text)");
    pgwt_exec(c, "INSERT INTO cap_rls SELECT 'x' || (g % 4) FROM generate_series(1, 100) g");
    pgwt_exec(c, "ANALYZE cap_rls");
    pgwt_exec(c, "ALTER TABLE cap_rls ENABLE ROW LEVEL SECURITY");
    pgwt_exec(c, "GRANT SELECT ON cap_rls TO pgw_reader");
    PGconn *w = pgwt_connect_opts("user=pgw_reader");
    ck_assert_ptr_nonnull(w);
    pgw_snapshot *s = capture(w, "public", "cap_priv");
    ck_assert_uint_eq(pgw_snapshot_column_count(s), 2);
    ck_assert_ptr_nonnull(pgw_snapshot_column(s, 0)->profile);
    ck_assert_ptr_null(pgw_snapshot_column(s, 1)->profile); /* no SELECT on secret */
    ck_assert_str_eq(pgw_snapshot_column(s, 1)->name, "secret");
    pgw_snapshot_free(s);
    s = capture(w, "public", "cap_rls");
    ck_assert_ptr_null(pgw_snapshot_column(s, 0)->profile); /* RLS hides pg_stats */
    ck_assert(!pgw_snapshot_stats_available(s));
    int64_t rows;
    ck_assert(pgw_snapshot_row_estimate(s, &rows)); /* reltuples is catalog data */
    pgw_snapshot_free(s);
    PQfinish(w);
    /* The owner sees everything. */
    s = capture(c, "public", "cap_rls");
    ck_assert_ptr_nonnull(pgw_snapshot_column(s, 0)->profile);
    pgw_snapshot_free(s);
    PQfinish(c);
}
END_TEST

START_TEST(capture_partitioned_parent_uses_inherited_stats)
{
    PGconn *c = pgwt_connect();
    pgwt_exec(c, "CREATE TABLE cap_part (k int, v text) PARTITION BY RANGE (k)");
    pgwt_exec(c, "CREATE TABLE cap_part_1 PARTITION OF cap_part FOR VALUES FROM (0) TO (50)");
    pgwt_exec(c, "CREATE TABLE cap_part_2 PARTITION OF cap_part FOR VALUES FROM (50) TO (100)");
    pgwt_exec(c, "INSERT INTO cap_part SELECT g, CASE WHEN g < 50 THEN 'low' ELSE 'high' END "
                 "FROM generate_series(0, 99) g");
    pgwt_exec(c, "ANALYZE cap_part");
    pgw_snapshot *s = capture(c, "public", "cap_part");
    const pgw_profile *p = pgw_snapshot_column(s, 1)->profile;
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(p->n_most_common, 2); /* both partitions' values */
    ck_assert(pgw_snapshot_stats_available(s));
    pgw_snapshot_free(s);
    PQfinish(c);
}
END_TEST

START_TEST(capture_fixes_print_settings_and_restores_them)
{
    PGconn *c = pgwt_connect();
    pgwt_exec(c, "CREATE TABLE cap_fmt (d date, i interval, f float8, b bytea)");
    pgwt_exec(c, "INSERT INTO cap_fmt SELECT '2024-02-29'::date + (g % 2), "
                 "(g % 2 + 1) * interval '1 day 2 hours', (g % 2) + 0.1, '\\x01ff'::bytea "
                 "FROM generate_series(1, 50) g");
    pgwt_exec(c, "ANALYZE cap_fmt");
    pgw_snapshot *ref = capture(c, "public", "cap_fmt");
    pgwt_exec(c, "SET DateStyle = 'SQL, DMY'; SET IntervalStyle = 'iso_8601'; "
                 "SET extra_float_digits = -5; SET bytea_output = 'escape'");
    pgw_snapshot *s = capture(c, "public", "cap_fmt");
    for (size_t col = 0; col < 4; col++) {
        const pgw_profile *a = pgw_snapshot_column(ref, col)->profile;
        const pgw_profile *b = pgw_snapshot_column(s, col)->profile;
        ck_assert_uint_eq(a->n_most_common, b->n_most_common);
        for (size_t k = 0; k < a->n_most_common; k++)
            ck_assert_str_eq(a->most_common_vals[k], b->most_common_vals[k]);
    }
    const pgw_profile *d = pgw_snapshot_column(s, 0)->profile;
    ck_assert(strcmp(d->most_common_vals[0], "2024-02-29") == 0 ||
              strcmp(d->most_common_vals[0], "2024-03-01") == 0);
    ck_assert_str_eq(pgw_snapshot_column(s, 3)->profile->most_common_vals[0], "\\x01ff");
    char *ds = pgwt_value(c, "SELECT current_setting('DateStyle') || '/' || "
                             "current_setting('IntervalStyle') || '/' || "
                             "current_setting('extra_float_digits') || '/' || "
                             "current_setting('bytea_output')");
    ck_assert_str_eq(ds, "SQL, DMY/iso_8601/-5/escape");
    free(ds);
    pgw_snapshot_free(ref);
    pgw_snapshot_free(s);
    PQfinish(c);
}
END_TEST

START_TEST(capture_hostile_identifiers)
{
    PGconn *c = pgwt_connect();
    pgwt_exec(c, "CREATE TABLE x (keep int)");
    pgwt_exec(c, "CREATE SCHEMA \"Odd Schema\"");
    pgwt_exec(c, "CREATE TABLE \"Odd Schema\".\"a\"\"b; drop table x; --\" ("
                 "\"\xEF\xBB\xBFtitle\" text, \"two words\" int, \"名前\" text, \"CamelCase\" int)");
    pgw_snapshot *s = capture(c, "Odd Schema", "a\"b; drop table x; --");
    ck_assert_str_eq(pgw_snapshot_schema(s), "Odd Schema");
    ck_assert_str_eq(pgw_snapshot_table(s), "a\"b; drop table x; --");
    ck_assert_str_eq(pgw_snapshot_column(s, 0)->name, "\xEF\xBB\xBFtitle");
    ck_assert_str_eq(pgw_snapshot_column(s, 1)->name, "two words");
    ck_assert_str_eq(pgw_snapshot_column(s, 2)->name, "名前");
    ck_assert_str_eq(pgw_snapshot_column(s, 3)->name, "CamelCase");
    pgw_snapshot_free(s);
    pgw_snapshot *t = NULL;
    pgw_error err;
    /* Names are exact: "camelcase" is not "CamelCase". */
    pgwt_exec(c, "CREATE TABLE \"CamelCase\" (v int)");
    ck_assert_int_eq(pgw_pq_capture(&t, c, "public", "camelcase", NULL, &err), PGW_ENOTFOUND);
    t = capture(c, "public", "CamelCase");
    pgw_snapshot_free(t);
    ck_assert_int_eq(pgwt_int(c, "SELECT count(*) FROM x"), 0); /* x is still there */
    PQfinish(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("capture");
    TCase *tc = tcase_create("capture");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, install_is_idempotent);
    tcase_add_test(tc, install_from_many_sessions_at_once);
    tcase_add_test(tc, install_without_privilege_changes_nothing);
    tcase_add_test(tc, capture_records_catalog_and_stats);
    tcase_add_test(tc, capture_reads_no_table_data);
    tcase_add_test(tc, capture_missing_table_is_not_found);
    tcase_add_test(tc, capture_dropped_columns_leave_no_gaps);
    tcase_add_test(tc, capture_respects_privileges_and_rls);
    tcase_add_test(tc, capture_partitioned_parent_uses_inherited_stats);
    tcase_add_test(tc, capture_fixes_print_settings_and_restores_them);
    tcase_add_test(tc, capture_hostile_identifiers);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    pgwt_pg_setup("capture");
    return pgwt_main(suite());
}
