/*
 * tests/pg/check_tasks_example.c — the tasks example (examples/tasks)
 * against the real server: its scripted run, in two tenant databases,
 * prints exactly examples/tasks/script.expected — every decision and its
 * reason, the reruns, the forced reconnect whose scope reset covers the
 * write made while nobody listened.
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgw_test.h"
#include "tasks.h"

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

START_TEST(scripted_run_prints_the_expected_decisions)
{
    char db2[96], ci1[128], ci2[128], sql[256];
    snprintf(db2, sizeof db2, "%s_globex", pgwt_dbname());
    PGconn *a = pgwt_connect_opts("dbname=postgres options=-cclient_min_messages=warning");
    ck_assert_ptr_nonnull(a);
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS \"%s\"", db2);
    pgwt_exec(a, sql);
    snprintf(sql, sizeof sql, "CREATE DATABASE \"%s\"", db2);
    pgwt_exec(a, sql);
    snprintf(ci1, sizeof ci1, "dbname=%s", pgwt_dbname());
    snprintf(ci2, sizeof ci2, "dbname=%s", db2);
    tasks_tenant t[2] = {{"acme", ci1}, {"globex", ci2}};
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    int rc = tasks_script(out, t, 2);
    fclose(out);
    char *want = read_file(PGW_EXAMPLES_DIR "/tasks/script.expected");
    if (rc != 0 || strcmp(buf, want) != 0) {
        /* The whole output, for the log: Check's messages are short. */
        printf("# output:\n");
        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
            printf("#   %s\n", line);
        fflush(stdout);
    }
    ck_assert_msg(rc == 0, "the script failed (its output is above)");
    ck_assert_msg(strcmp(buf, want) == 0, "output differs from script.expected (above)");
    /* The lines that show what the example is for. */
    ck_assert_ptr_nonnull(strstr(buf, "  skip    acme   tasks.count?status=open  COLUMNS_DISJOINT"));
    ck_assert_ptr_nonnull(strstr(buf, "  skip    acme   tasks.list?status=done   VALUES_DISJOINT"));
    ck_assert_ptr_nonnull(strstr(buf, "  skip    globex tasks.list?status=open   SCOPE_DISJOINT"));
    ck_assert_ptr_nonnull(strstr(buf, "acme: listening again; NOTIFY is not durable, so every "
                                      "subscription of acme refreshes (SCOPE_RESET)\n"
                                      "  rerun acme   tasks.list?status=open   no rows\n"
                                      "  rerun acme   tasks.list?status=done   2 rows: write the "
                                      "annual report review the budget\n"
                                      "  rerun acme   tasks.count?status=open  = 0\n"));
    free(want);
    free(buf);
    snprintf(sql, sizeof sql, "DROP DATABASE \"%s\" WITH (FORCE)", db2);
    pgwt_exec(a, sql);
    PQfinish(a);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("tasks_example");
    TCase *tc = tcase_create("tasks_example");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, scripted_run_prints_the_expected_decisions);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    pgwt_pg_setup("tasks_example");
    return pgwt_main(suite());
}
