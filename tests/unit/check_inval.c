/*
 * tests/unit/check_inval.c — pgw_decide: one test per scenario of issue 5
 * (exact verdict and reason), the subtle cases of the rule table, argument
 * checking of the builders, and proof that the decision allocates nothing.
 * SPDX-License-Identifier: MIT
 */
#include "inval_helpers.h"

/* The source design's tasks.list: reads id, title, status, updated_at;
 * status = 'open'; ORDER BY updated_at LIMIT 20. */
static pgw_deps *tasks_list(const pgw_scope *sc, const char *result)
{
    pgw_deps *d = ih_deps(sc, "tasks.list");
    size_t t = ih_table(d, "tasks");
    ih_cols(d, t, "id,title,status,updated_at");
    ih_filter(d, t, "status", PGW_FILTER_EQ, "open");
    ih_sort(d, t, "updated_at");
    ck_assert_int_eq(pgw_deps_set_window(d, t, 20, 0, NULL), PGW_OK);
    if (result)
        ih_result(d, result);
    return d;
}

/* sub status='open' holding {1}; UPDATE SET status='closed' WHERE id=1. */
START_TEST(row_leaves)
{
    pgw_deps *d = ih_deps(&IH_ACME, "open");
    size_t t = ih_table(d, "tasks");
    ih_cols(d, t, "id,title");
    ih_filter(d, t, "status", PGW_FILTER_EQ, "open");
    ih_result(d, "1");
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "1", false);
    ih_wcols(w, "status", false);
    IH_EXPECT(d, w, true, PGW_REASON_ROW_IN_RESULT);
    /* The same with the values known: the row is in the result. */
    ih_wval(w, 0, PGW_SIDE_OLD, "status", "open");
    ih_wval(w, 0, PGW_SIDE_NEW, "status", "closed");
    IH_EXPECT(d, w, true, PGW_REASON_ROW_IN_RESULT);
    pgw_write_free(w);
    pgw_deps_free(d);
}
END_TEST

/* sub name='Bob' holding {}; row 7 moves from 'Alice' to 'Bob'. */
START_TEST(row_enters)
{
    pgw_deps *d = ih_deps(&IH_ACME, "bobs");
    size_t t = ih_table(d, "people");
    ih_cols(d, t, "id,name");
    ih_filter(d, t, "name", PGW_FILTER_EQ, "Bob");
    ih_result(d, "");
    pgw_write *w = ih_write(&IH_ACME, "people", PGW_OP_UPDATE);
    ih_wids(w, "7", false);
    ih_wcols(w, "name", false);
    IH_EXPECT(d, w, true, PGW_REASON_FILTER_COLUMN_CHANGED);
    ih_wval(w, 0, PGW_SIDE_OLD, "name", "Alice");
    ih_wval(w, 0, PGW_SIDE_NEW, "name", "Bob");
    IH_EXPECT(d, w, true, PGW_REASON_FILTER_COLUMN_CHANGED);
    pgw_write_free(w);

    /* Alice → Carol matches the filter neither before nor after. */
    w = ih_write(&IH_ACME, "people", PGW_OP_UPDATE);
    ih_wids(w, "7", false);
    ih_wcols(w, "name", false);
    ih_wval(w, 0, PGW_SIDE_OLD, "name", "Alice");
    ih_wval(w, 0, PGW_SIDE_NEW, "name", "Carol");
    IH_EXPECT(d, w, false, PGW_REASON_VALUES_DISJOINT);
    /* Only the new value known: the old one may have been Bob; without a
     * window leaving is visible only for rows in the result, and 7 ∉ {}. */
    pgw_write_free(w);
    w = ih_write(&IH_ACME, "people", PGW_OP_UPDATE);
    ih_wids(w, "7", false);
    ih_wcols(w, "name", false);
    ih_wval(w, 0, PGW_SIDE_NEW, "name", "Carol");
    IH_EXPECT(d, w, false, PGW_REASON_VALUES_DISJOINT);
    /* Untracked result: the row may have been in it and left. */
    pgw_deps_clear_result_ids(d);
    IH_EXPECT(d, w, true, PGW_REASON_FILTER_COLUMN_CHANGED);
    pgw_write_free(w);
    pgw_deps_free(d);
}
END_TEST

/* Primary key updated 1 → 2. */
START_TEST(key_change)
{
    pgw_deps *d = ih_deps(&IH_ACME, "open");
    size_t t = ih_table(d, "tasks");
    ih_cols(d, t, "id,title");
    ih_filter(d, t, "status", PGW_FILTER_EQ, "open");
    ih_result(d, "1,5");
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "1,2", false);
    ih_wcols(w, "id", false);
    ck_assert_int_eq(pgw_write_set_pk_changed(w, true, NULL), PGW_OK);
    IH_EXPECT(d, w, true, PGW_REASON_ROW_IN_RESULT); /* 1 is in the result */
    pgw_write_free(w);

    /* Neither 1 nor 2 in the result; the values prove the row (status
     * 'closed') is outside the filter before and after. */
    ih_result(d, "5");
    w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "1,2", false);
    ih_wcols(w, "id", false);
    ck_assert_int_eq(pgw_write_set_pk_changed(w, true, NULL), PGW_OK);
    IH_EXPECT(d, w, true, PGW_REASON_INSERT_MAY_ENTER); /* values unknown */
    ih_wval(w, 0, PGW_SIDE_OLD, "status", "closed");
    ck_assert_int_eq(pgw_write_set_row_absent(w, 0, PGW_SIDE_NEW, NULL), PGW_OK);
    ck_assert_int_eq(pgw_write_set_row_absent(w, 1, PGW_SIDE_OLD, NULL), PGW_OK);
    IH_EXPECT(d, w, true, PGW_REASON_INSERT_MAY_ENTER); /* new version of 2 unknown */
    ih_wval(w, 1, PGW_SIDE_NEW, "status", "closed");
    IH_EXPECT(d, w, false, PGW_REASON_VALUES_DISJOINT);
    /* The new key enters when its new status is 'open'. */
    ih_wval(w, 1, PGW_SIDE_NEW, "status", "open");
    IH_EXPECT(d, w, true, PGW_REASON_INSERT_MAY_ENTER);
    pgw_write_free(w);
    pgw_deps_free(d);
}
END_TEST

/* Two updates of the same row in one transaction arrive as two write sets;
 * each is decided on its own (the first alone would skip). */
START_TEST(two_updates_same_row)
{
    pgw_deps *d = ih_deps(&IH_ACME, "open");
    size_t t = ih_table(d, "tasks");
    ih_cols(d, t, "id,status");
    ih_filter(d, t, "status", PGW_FILTER_EQ, "open");
    ih_result(d, "3");
    pgw_write *w1 = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w1, "9", false);
    ih_wcols(w1, "title", false);
    pgw_write *w2 = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w2, "9", false);
    ih_wcols(w2, "status", false);
    IH_EXPECT(d, w1, false, PGW_REASON_COLUMNS_DISJOINT);
    IH_EXPECT(d, w2, true, PGW_REASON_FILTER_COLUMN_CHANGED);
    pgw_write_free(w1);
    pgw_write_free(w2);
    pgw_deps_free(d);
}
END_TEST

/* Delete inside, outside and before a window. */
START_TEST(deletes)
{
    pgw_deps *d = ih_deps(&IH_ACME, "all");
    size_t t = ih_table(d, "tasks");
    ih_cols(d, t, "id,title");
    ih_result(d, "1,2,3");
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_DELETE);
    ih_wids(w, "2", false);
    IH_EXPECT(d, w, true, PGW_REASON_ROW_IN_RESULT);
    pgw_write_free(w);
    w = ih_write(&IH_ACME, "tasks", PGW_OP_DELETE);
    ih_wids(w, "7", false);
    IH_EXPECT(d, w, false, PGW_REASON_ROWS_DISJOINT); /* no window */
    ck_assert_int_eq(pgw_deps_set_window(d, t, 3, 0, NULL), PGW_OK);
    IH_EXPECT(d, w, false, PGW_REASON_ROWS_DISJOINT); /* after the window */
    ck_assert_int_eq(pgw_deps_set_window(d, t, 3, 3, NULL), PGW_OK);
    IH_EXPECT(d, w, true, PGW_REASON_DELETE_IN_WINDOW); /* may be before: shifts */
    ck_assert_int_eq(pgw_deps_set_window(d, t, -1, 1, NULL), PGW_OK);
    IH_EXPECT(d, w, true, PGW_REASON_DELETE_IN_WINDOW);
    /* Old values that fail a filter prove the row was never counted. */
    ih_filter(d, t, "status", PGW_FILTER_IN, "open,waiting");
    ih_wval(w, 0, PGW_SIDE_OLD, "status", "done");
    IH_EXPECT(d, w, false, PGW_REASON_VALUES_DISJOINT);
    ih_wval(w, 0, PGW_SIDE_OLD, "status", "waiting");
    IH_EXPECT(d, w, true, PGW_REASON_DELETE_IN_WINDOW);
    /* Result unknown: any relevant delete may remove a result row. */
    pgw_deps_clear_result_ids(d);
    ck_assert_int_eq(pgw_deps_set_window(d, t, -1, 0, NULL), PGW_OK);
    IH_EXPECT(d, w, true, PGW_REASON_DELETE_IN_WINDOW);
    ih_wval(w, 0, PGW_SIDE_OLD, "status", NULL); /* SQL NULL never matches */
    IH_EXPECT(d, w, false, PGW_REASON_VALUES_DISJOINT);
    pgw_write_free(w);
    pgw_deps_free(d);
}
END_TEST

/* count(*) WHERE status = 'open' declared with result IDs — the "no IDs"
 * a host passes for a result that lists no rows: a first table that reads
 * no column is an aggregate, and its result IDs are never used. The same
 * declaration reading a column is a list, and {} is then its result. */
START_TEST(aggregate_result_ids)
{
    pgw_deps *d = ih_deps(&IH_ACME, "tasks.count");
    size_t t = ih_table(d, "tasks");
    ih_cols(d, t, "");
    ih_filter(d, t, "status", PGW_FILTER_EQ, "open");
    ih_result(d, "");
    pgw_write *del = ih_write(&IH_ACME, "tasks", PGW_OP_DELETE);
    ih_wids(del, "7", false);
    IH_EXPECT(d, del, true, PGW_REASON_DELETE_IN_WINDOW); /* the count may drop */
    pgw_write *leave = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(leave, "7", false);
    ih_wcols(leave, "status", false);
    ih_wval(leave, 0, PGW_SIDE_OLD, "status", "open");
    ih_wval(leave, 0, PGW_SIDE_NEW, "status", "done");
    IH_EXPECT(d, leave, true, PGW_REASON_FILTER_COLUMN_CHANGED); /* a row leaves the count */
    ih_wval(leave, 0, PGW_SIDE_OLD, "status", "waiting");
    IH_EXPECT(d, leave, false, PGW_REASON_VALUES_DISJOINT); /* never counted */
    pgw_write *title = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(title, "7", false);
    ih_wcols(title, "title", false);
    IH_EXPECT(d, title, false, PGW_REASON_COLUMNS_DISJOINT);
    /* Reading a column, the result is a list: {} proves row 7 is not in it. */
    ih_cols(d, t, "id");
    IH_EXPECT(d, del, false, PGW_REASON_ROWS_DISJOINT);
    ih_wval(leave, 0, PGW_SIDE_OLD, "status", "open");
    IH_EXPECT(d, leave, false, PGW_REASON_VALUES_DISJOINT); /* rule 13 */
    pgw_write_free(del);
    pgw_write_free(leave);
    pgw_write_free(title);
    pgw_deps_free(d);
}
END_TEST

/* Membership in the result, for every result size up to 40 and every
 * position in it: a delete of a row in the result refreshes, of any other
 * row (absent keys fall between, before and after the held ones) skips. */
START_TEST(result_membership)
{
    for (int n = 0; n <= 40; n++) {
        char csv[512] = "";
        size_t used = 0;
        for (int i = 0; i < n; i++)
            used += (size_t)snprintf(csv + used, sizeof csv - used, "%sk%d", i ? "," : "",
                                     2 * i);
        pgw_deps *d = ih_deps(&IH_ACME, "members");
        size_t t = ih_table(d, "tasks");
        ih_cols(d, t, "id,title");
        ih_result(d, csv);
        for (int x = -1; x <= 2 * n; x++) {
            char id[16];
            snprintf(id, sizeof id, "k%d", x);
            pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_DELETE);
            ih_wids(w, id, false);
            bool held = x >= 0 && x % 2 == 0 && x < 2 * n;
            IH_EXPECT(d, w, held, held ? PGW_REASON_ROW_IN_RESULT : PGW_REASON_ROWS_DISJOINT);
            pgw_write_free(w);
        }
        pgw_deps_free(d);
    }
}
END_TEST

/* ORDER BY id LIMIT 1 and an insert of id 0: refresh although disjoint. */
START_TEST(insert_sorts_first)
{
    pgw_deps *d = ih_deps(&IH_ACME, "first");
    size_t t = ih_table(d, "tasks");
    ih_cols(d, t, "id,title");
    ih_sort(d, t, "id");
    ck_assert_int_eq(pgw_deps_set_window(d, t, 1, 0, NULL), PGW_OK);
    ih_result(d, "1");
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_INSERT);
    ih_wids(w, "0", false);
    IH_EXPECT(d, w, true, PGW_REASON_INSERT_MAY_ENTER);
    pgw_write_free(w);
    pgw_deps_free(d);
}
END_TEST

/* Only updated_at changes; the sub reads (id, title). */
START_TEST(unread_columns)
{
    pgw_deps *d = ih_deps(&IH_ACME, "titles");
    size_t t = ih_table(d, "tasks");
    ih_cols(d, t, "id,title");
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "1", false);
    ih_wcols(w, "updated_at", false);
    IH_EXPECT(d, w, false, PGW_REASON_COLUMNS_DISJOINT);
    /* Filtered or sorted on it: read. */
    ih_sort(d, t, "updated_at");
    IH_EXPECT(d, w, true, PGW_REASON_SORT_COLUMN_CHANGED);
    ih_sort(d, t, "");
    ih_filter(d, t, "updated_at", PGW_FILTER_OPAQUE, NULL);
    IH_EXPECT(d, w, true, PGW_REASON_FILTER_COLUMN_CHANGED);
    pgw_write_free(w);
    /* UPDATE t SET x = x: nothing changed, even for SELECT *. */
    pgw_deps *all = ih_deps(&IH_ACME, "star");
    ih_table(all, "tasks");
    w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "1", false);
    ih_wcols(w, "", false);
    IH_EXPECT(all, w, false, PGW_REASON_COLUMNS_DISJOINT);
    ih_wcols(w, "anything", false);
    IH_EXPECT(all, w, true, PGW_REASON_RESULT_UNKNOWN);
    pgw_write_free(w);
    pgw_deps_free(all);
    pgw_deps_free(d);
}
END_TEST

/* More than 500 IDs: the list is truncated and the rows unknown. */
START_TEST(ids_truncated)
{
    pgw_deps *d = tasks_list(&IH_ACME, "1,2");
    char csv[4096];
    size_t len = 0;
    for (int i = 1; i <= 500; i++)
        len += (size_t)snprintf(csv + len, sizeof csv - len, "%s%d", i > 1 ? "," : "", i + 100);
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, csv, true); /* the 501st changed row is not listed */
    ih_wcols(w, "status", false);
    IH_EXPECT(d, w, true, PGW_REASON_IDS_UNKNOWN);
    ih_wcols(w, "body", false); /* the columns alone prove disjointness */
    IH_EXPECT(d, w, false, PGW_REASON_COLUMNS_DISJOINT);
    ih_wcols(w, "body", true); /* ... unless they are truncated too */
    IH_EXPECT(d, w, true, PGW_REASON_IDS_UNKNOWN);
    pgw_write_free(w);
    /* Unknown IDs (null) behave the same; an insert may enter. */
    w = ih_write(&IH_ACME, "tasks", PGW_OP_DELETE);
    IH_EXPECT(d, w, true, PGW_REASON_IDS_UNKNOWN);
    pgw_write_free(w);
    w = ih_write(&IH_ACME, "tasks", PGW_OP_INSERT);
    IH_EXPECT(d, w, true, PGW_REASON_INSERT_MAY_ENTER);
    pgw_write_free(w);
    pgw_deps_free(d);
}
END_TEST

START_TEST(truncate_and_unknown)
{
    pgw_deps *d = tasks_list(&IH_ACME, "1");
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_TRUNCATE);
    IH_EXPECT(d, w, true, PGW_REASON_TRUNCATE);
    pgw_write_free(w);
    w = ih_write(&IH_GLOBEX, "tasks", PGW_OP_TRUNCATE);
    IH_EXPECT(d, w, false, PGW_REASON_SCOPE_DISJOINT);
    pgw_write_free(w);
    w = ih_write(&IH_ACME, "projects", PGW_OP_TRUNCATE);
    IH_EXPECT(d, w, false, PGW_REASON_TABLE_NOT_READ);
    pgw_write_free(w);
    w = ih_write(&IH_ACME, "tasks", PGW_OP_UNKNOWN);
    IH_EXPECT(d, w, true, PGW_REASON_WRITE_UNKNOWN);
    pgw_write_free(w);
    ck_assert_int_eq(pgw_write_new_reset(&w, &IH_ACME, NULL), PGW_OK);
    IH_EXPECT(d, w, true, PGW_REASON_SCOPE_RESET);
    pgw_write_free(w);
    ck_assert_int_eq(pgw_write_new_reset(&w, &IH_GLOBEX, NULL), PGW_OK);
    IH_EXPECT(d, w, false, PGW_REASON_SCOPE_DISJOINT);
    pgw_write_free(w);
    pgw_deps_free(d);
}
END_TEST

/* Tenants and the project-level (landlord) scope are separate. */
START_TEST(scopes_are_separate)
{
    pgw_deps *acme = tasks_list(&IH_ACME, NULL);
    pgw_deps *land = tasks_list(&IH_LANDLORD, NULL);
    pgw_scope empty_tenant = {"p1", "", "landlord"};
    pgw_scope other_project = {"p2", "acme", "app"};
    pgw_scope other_db = {"p1", "acme", "reporting"};
    pgw_write *w = ih_write(&IH_GLOBEX, "tasks", PGW_OP_INSERT);
    IH_EXPECT(acme, w, false, PGW_REASON_SCOPE_DISJOINT);
    IH_EXPECT(land, w, false, PGW_REASON_SCOPE_DISJOINT);
    pgw_write_free(w);
    w = ih_write(&IH_LANDLORD, "tasks", PGW_OP_INSERT);
    IH_EXPECT(acme, w, false, PGW_REASON_SCOPE_DISJOINT);
    IH_EXPECT(land, w, true, PGW_REASON_INSERT_MAY_ENTER);
    pgw_write_free(w);
    w = ih_write(&empty_tenant, "tasks", PGW_OP_INSERT); /* "" is not NULL */
    IH_EXPECT(land, w, false, PGW_REASON_SCOPE_DISJOINT);
    pgw_write_free(w);
    w = ih_write(&other_project, "tasks", PGW_OP_INSERT);
    IH_EXPECT(acme, w, false, PGW_REASON_SCOPE_DISJOINT);
    pgw_write_free(w);
    w = ih_write(&other_db, "tasks", PGW_OP_INSERT);
    IH_EXPECT(acme, w, false, PGW_REASON_SCOPE_DISJOINT);
    pgw_write_free(w);
    pgw_deps_free(acme);
    pgw_deps_free(land);
}
END_TEST

/* No declared dependencies: any write in the scope, none elsewhere. */
START_TEST(undeclared)
{
    pgw_deps *d = ih_deps(&IH_ACME, "legacy");
    ck_assert_uint_eq(pgw_deps_n_tables(d), 0);
    pgw_write *w = ih_write(&IH_ACME, "anything", PGW_OP_UPDATE);
    ih_wids(w, "1", false);
    ih_wcols(w, "x", false);
    IH_EXPECT(d, w, true, PGW_REASON_UNDECLARED);
    pgw_write_free(w);
    w = ih_write(&IH_GLOBEX, "anything", PGW_OP_UPDATE);
    IH_EXPECT(d, w, false, PGW_REASON_SCOPE_DISJOINT);
    pgw_write_free(w);
    pgw_deps_free(d);
}
END_TEST

/* Inserts into filtered, sorted and windowed results. */
START_TEST(inserts)
{
    pgw_deps *d = tasks_list(&IH_ACME, "1,2");
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_INSERT);
    ih_wids(w, "9,10", false);
    IH_EXPECT(d, w, true, PGW_REASON_INSERT_MAY_ENTER);
    ih_wval(w, 0, PGW_SIDE_NEW, "status", "closed");
    IH_EXPECT(d, w, true, PGW_REASON_INSERT_MAY_ENTER); /* row 10 unknown */
    ih_wval(w, 1, PGW_SIDE_NEW, "status", NULL);
    IH_EXPECT(d, w, false, PGW_REASON_VALUES_DISJOINT);
    ih_wval(w, 1, PGW_SIDE_NEW, "status", "open");
    IH_EXPECT(d, w, true, PGW_REASON_INSERT_MAY_ENTER);
    /* Text comparison is exact: "Open" is not "open". */
    ih_wval(w, 1, PGW_SIDE_NEW, "status", "Open");
    IH_EXPECT(d, w, false, PGW_REASON_VALUES_DISJOINT);
    pgw_write_free(w);
    /* No rows inserted. */
    w = ih_write(&IH_ACME, "tasks", PGW_OP_INSERT);
    ih_wids(w, "", false);
    IH_EXPECT(d, w, false, PGW_REASON_ROWS_DISJOINT);
    pgw_write_free(w);
    pgw_deps_free(d);
}
END_TEST

/* Updates of sort columns: a row can move into the window. */
START_TEST(sort_updates)
{
    pgw_deps *d = tasks_list(&IH_ACME, "1,2");
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "9", false);
    ih_wcols(w, "updated_at", false);
    IH_EXPECT(d, w, true, PGW_REASON_SORT_COLUMN_CHANGED);
    ih_wval(w, 0, PGW_SIDE_OLD, "status", "closed"); /* unchanged → both sides */
    IH_EXPECT(d, w, false, PGW_REASON_VALUES_DISJOINT);
    pgw_write_free(w);
    /* Without a window, a row outside a known result is irrelevant. */
    pgw_deps *nw = ih_deps(&IH_ACME, "sorted");
    size_t t = ih_table(nw, "tasks");
    ih_cols(nw, t, "id,title");
    ih_sort(nw, t, "updated_at");
    ih_result(nw, "1");
    w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "9", false);
    ih_wcols(w, "updated_at", false);
    IH_EXPECT(nw, w, false, PGW_REASON_ROWS_DISJOINT);
    pgw_deps_clear_result_ids(nw); /* ... but it may be in an unknown one */
    IH_EXPECT(nw, w, true, PGW_REASON_SORT_COLUMN_CHANGED);
    pgw_write_free(w);
    pgw_deps_free(nw);
    pgw_deps_free(d);
}
END_TEST

/* Rows outside the result whose read columns change. */
START_TEST(rows_disjoint)
{
    pgw_deps *d = tasks_list(&IH_ACME, "1,2");
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "7,8", false);
    ih_wcols(w, "title", false);
    IH_EXPECT(d, w, false, PGW_REASON_ROWS_DISJOINT);
    ih_wids(w, "7,2", false);
    IH_EXPECT(d, w, true, PGW_REASON_ROW_IN_RESULT);
    ih_wids(w, "7,8", false);
    ih_wcols(w, "title", true); /* columns truncated */
    IH_EXPECT(d, w, true, PGW_REASON_COLUMNS_UNKNOWN);
    pgw_write_free(w);
    /* Result unknown: the row may be in it. */
    pgw_deps *u = tasks_list(&IH_ACME, NULL);
    w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "7", false);
    ih_wcols(w, "title", false);
    IH_EXPECT(u, w, true, PGW_REASON_RESULT_UNKNOWN);
    pgw_write_free(w);
    pgw_deps_free(u);
    pgw_deps_free(d);
}
END_TEST

/* A row outside the result under a LIMIT changes its filter column: it
 * can push rows out only if it enters the filter. */
START_TEST(filter_change_outside_window)
{
    pgw_deps *d = tasks_list(&IH_ACME, "1,2");
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "9", false);
    ih_wcols(w, "status", false);
    ih_wval(w, 0, PGW_SIDE_OLD, "status", "open");
    ih_wval(w, 0, PGW_SIDE_NEW, "status", "closed");
    IH_EXPECT(d, w, false, PGW_REASON_VALUES_DISJOINT); /* leaves from after the window */
    ih_wval(w, 0, PGW_SIDE_NEW, "status", "open");
    IH_EXPECT(d, w, true, PGW_REASON_FILTER_COLUMN_CHANGED);
    pgw_write_free(w);
    /* With an offset the row may have been before the window. */
    pgw_deps *o = tasks_list(&IH_ACME, "1,2");
    ck_assert_int_eq(pgw_deps_set_window(o, 0, 20, 40, NULL), PGW_OK);
    w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "9", false);
    ih_wcols(w, "status", false);
    ih_wval(w, 0, PGW_SIDE_OLD, "status", "open");
    ih_wval(w, 0, PGW_SIDE_NEW, "status", "closed");
    IH_EXPECT(o, w, true, PGW_REASON_FILTER_COLUMN_CHANGED);
    pgw_write_free(w);
    pgw_deps_free(o);
    pgw_deps_free(d);
}
END_TEST

/* Values known only for some columns, and inference across sides. */
START_TEST(partial_values)
{
    pgw_deps *d = ih_deps(&IH_ACME, "mine");
    size_t t = ih_table(d, "tasks");
    ih_cols(d, t, "id,title");
    ih_filter(d, t, "status", PGW_FILTER_EQ, "open");
    ih_filter(d, t, "owner", PGW_FILTER_EQ, "u1");
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "4", false);
    ih_wcols(w, "status,title", false);
    ih_wval(w, 0, PGW_SIDE_OLD, "owner", "u2"); /* owner unchanged: u2 after too */
    IH_EXPECT(d, w, false, PGW_REASON_VALUES_DISJOINT);
    pgw_write_free(w);
    /* The same value column changed: no inference. */
    w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "4", false);
    ih_wcols(w, "owner", false);
    ih_wval(w, 0, PGW_SIDE_OLD, "owner", "u2");
    IH_EXPECT(d, w, true, PGW_REASON_FILTER_COLUMN_CHANGED);
    ih_wval(w, 0, PGW_SIDE_NEW, "owner", "u3");
    IH_EXPECT(d, w, false, PGW_REASON_VALUES_DISJOINT);
    pgw_write_free(w);
    /* Columns unknown: both sides must be given. */
    w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "4", false);
    ih_wval(w, 0, PGW_SIDE_OLD, "status", "closed");
    IH_EXPECT(d, w, true, PGW_REASON_COLUMNS_UNKNOWN);
    ih_wval(w, 0, PGW_SIDE_NEW, "owner", "u9");
    IH_EXPECT(d, w, false, PGW_REASON_VALUES_DISJOINT);
    pgw_write_free(w);
    pgw_deps_free(d);
}
END_TEST

/* Composite keys are compared whole. */
START_TEST(composite_keys)
{
    pgw_deps *d = ih_deps(&IH_ACME, "lines");
    size_t t = ih_table(d, "order_lines");
    ih_cols(d, t, "order_id,line,qty");
    ih_result(d, "1|a,1|b");
    pgw_write *w = ih_write(&IH_ACME, "order_lines", PGW_OP_DELETE);
    ih_wids(w, "1|c,2|a,1a,a|1", false);
    IH_EXPECT(d, w, false, PGW_REASON_ROWS_DISJOINT);
    ih_wids(w, "1|b", false);
    IH_EXPECT(d, w, true, PGW_REASON_ROW_IN_RESULT);
    pgw_write_free(w);
    pgw_deps_free(d);
}
END_TEST

/* A subscription reading several tables: result IDs name the first. */
START_TEST(several_tables)
{
    pgw_deps *d = ih_deps(&IH_ACME, "tasks_with_project");
    size_t t = ih_table(d, "tasks");
    ih_cols(d, t, "id,title,project_id");
    ih_filter(d, t, "project_id", PGW_FILTER_OPAQUE, NULL); /* join condition */
    size_t p = ih_table(d, "projects");
    ih_cols(d, p, "id,name");
    ih_filter(d, p, "id", PGW_FILTER_OPAQUE, NULL);
    ih_result(d, "1,2");
    pgw_write *w = ih_write(&IH_ACME, "projects", PGW_OP_UPDATE);
    ih_wids(w, "7", false); /* 7 ∉ {1,2} says nothing about projects */
    ih_wcols(w, "name", false);
    IH_EXPECT(d, w, true, PGW_REASON_RESULT_UNKNOWN);
    ih_wcols(w, "budget", false);
    IH_EXPECT(d, w, false, PGW_REASON_COLUMNS_DISJOINT);
    pgw_write_free(w);
    w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "7", false);
    ih_wcols(w, "title", false);
    IH_EXPECT(d, w, false, PGW_REASON_ROWS_DISJOINT);
    ih_wcols(w, "project_id", false); /* may join a project now */
    IH_EXPECT(d, w, true, PGW_REASON_FILTER_COLUMN_CHANGED);
    pgw_write_free(w);
    w = ih_write(&IH_ACME, "projects", PGW_OP_DELETE);
    ih_wids(w, "1", false);
    IH_EXPECT(d, w, true, PGW_REASON_DELETE_IN_WINDOW);
    pgw_write_free(w);
    w = ih_write(&IH_ACME, "users", PGW_OP_DELETE);
    IH_EXPECT(d, w, false, PGW_REASON_TABLE_NOT_READ);
    pgw_write_free(w);
    /* Same table name in another schema is another table. */
    ck_assert_int_eq(pgw_write_new(&w, &IH_ACME, "archive", "tasks", PGW_OP_TRUNCATE, NULL),
                     PGW_OK);
    IH_EXPECT(d, w, false, PGW_REASON_TABLE_NOT_READ);
    pgw_write_free(w);
    pgw_deps_free(d);
}
END_TEST

/* A key change of a row in the result matters even when no read column
 * changed: the result IDs would go stale. */
START_TEST(key_change_unread)
{
    pgw_deps *d = ih_deps(&IH_ACME, "titles");
    size_t t = ih_table(d, "tasks");
    ih_cols(d, t, "title");
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "1,2", false);
    ih_wcols(w, "id", false);
    ck_assert_int_eq(pgw_write_set_pk_changed(w, true, NULL), PGW_OK);
    /* Unordered, untracked: the multiset of titles is unchanged. */
    IH_EXPECT(d, w, false, PGW_REASON_COLUMNS_DISJOINT);
    ih_result(d, "1");
    IH_EXPECT(d, w, true, PGW_REASON_ROW_IN_RESULT);
    ih_result(d, "5");
    IH_EXPECT(d, w, true, PGW_REASON_INSERT_MAY_ENTER);
    pgw_write_free(w);
    pgw_deps_free(d);
}
END_TEST

/* A ddl write set: every subscription of the scope that reads the table
 * refreshes with DDL, whatever it declared (its columns, filters, window
 * and result IDs name the old definition); other scopes and other tables
 * skip as for any write; an undeclared subscription keeps UNDECLARED
 * (rule 3 comes before the table is looked at). */
START_TEST(ddl)
{
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_DDL);
    ck_assert_int_eq(pgw_write_op(w), PGW_OP_DDL);
    ck_assert(!pgw_write_ids_known(w));
    ck_assert(!pgw_write_columns_known(w));
    ck_assert_uint_eq(pgw_write_n_ids(w), 0);
    /* A list with an equality filter, a sort, a window and result IDs. */
    pgw_deps *d = tasks_list(&IH_ACME, "1,2");
    IH_EXPECT(d, w, true, PGW_REASON_DDL);
    pgw_deps_free(d);
    /* The same without result IDs, and with an empty result. */
    d = tasks_list(&IH_ACME, NULL);
    IH_EXPECT(d, w, true, PGW_REASON_DDL);
    pgw_deps_free(d);
    d = tasks_list(&IH_ACME, "");
    IH_EXPECT(d, w, true, PGW_REASON_DDL);
    pgw_deps_free(d);
    /* count(*): reads no column, yet a dropped or retyped filter column
     * changes it. */
    d = ih_deps(&IH_ACME, "tasks.count");
    size_t t = ih_table(d, "tasks");
    static const char *const none[1];
    ck_assert_int_eq(pgw_deps_set_columns(d, t, none, 0, NULL), PGW_OK);
    IH_EXPECT(d, w, true, PGW_REASON_DDL);
    pgw_deps_free(d);
    /* A join whose second table is the altered one. */
    d = ih_deps(&IH_ACME, "projects.with_tasks");
    ih_table(d, "projects");
    t = ih_table(d, "tasks");
    ih_cols(d, t, "project_id");
    IH_EXPECT(d, w, true, PGW_REASON_DDL);
    pgw_deps_free(d);
    /* Not read, another scope, another schema: skipped. */
    d = ih_deps(&IH_ACME, "projects.list");
    ih_table(d, "projects");
    IH_EXPECT(d, w, false, PGW_REASON_TABLE_NOT_READ);
    pgw_deps_free(d);
    d = tasks_list(&IH_GLOBEX, "1");
    IH_EXPECT(d, w, false, PGW_REASON_SCOPE_DISJOINT);
    pgw_deps_free(d);
    d = tasks_list(&IH_ACME, "1");
    pgw_write *other = NULL;
    ck_assert_int_eq(pgw_write_new(&other, &IH_ACME, "archive", "tasks", PGW_OP_DDL, NULL),
                     PGW_OK);
    IH_EXPECT(d, other, false, PGW_REASON_TABLE_NOT_READ);
    pgw_write_free(other);
    pgw_deps_free(d);
    /* Undeclared: its own reason, as for every other write. */
    d = ih_deps(&IH_ACME, "raw");
    IH_EXPECT(d, w, true, PGW_REASON_UNDECLARED);
    pgw_deps_free(d);
    d = ih_deps(&IH_GLOBEX, "raw");
    IH_EXPECT(d, w, false, PGW_REASON_SCOPE_DISJOINT);
    pgw_deps_free(d);

    /* Nothing about rows can be set on it, and each refusal says why. */
    pgw_error err;
    const char *cols[] = {"title"};
    const char *one[] = {"1"};
    pgw_rowid id = {one, 1};
    ck_assert_int_eq(pgw_write_set_ids(w, &id, 1, false, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "write_set_ids: a ddl has no row IDs (the table's definition "
                                  "changed: any row and column may differ)");
    ck_assert_int_eq(pgw_write_set_ids(w, NULL, 0, true, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_write_set_columns(w, cols, 1, false, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "write_set_columns: a ddl has no changed columns (the "
                                  "table's definition changed: any row and column may differ)");
    ck_assert_int_eq(pgw_write_set_pk_changed(w, true, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "write_set_pk_changed: only an update changes keys, not a "
                                  "ddl (the table's definition changed: any row and column "
                                  "may differ)");
    ck_assert_int_eq(pgw_write_set_pk_changed(w, false, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_write_set_value(w, 0, PGW_SIDE_NEW, "title", "x", &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "write_set_value: a ddl has no rows (the table's definition "
                                  "changed: any row and column may differ)");
    ck_assert_int_eq(pgw_write_set_row_absent(w, 0, PGW_SIDE_NEW, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "write_set_row_absent: a ddl has no rows (the table's "
                                  "definition changed: any row and column may differ)");
    /* And it is unchanged by the refusals. */
    ck_assert(!pgw_write_ids_known(w));
    ck_assert(!pgw_write_columns_known(w));
    d = tasks_list(&IH_ACME, "1");
    IH_EXPECT(d, w, true, PGW_REASON_DDL);
    pgw_deps_free(d);
    pgw_write_free(w);
    /* A truncate's refusals are as before. */
    w = ih_write(&IH_ACME, "tasks", PGW_OP_TRUNCATE);
    ck_assert_int_eq(pgw_write_set_value(w, 0, PGW_SIDE_NEW, "title", "x", &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "write_set_value: a truncate has no rows");
    pgw_write_free(w);
}
END_TEST

START_TEST(reason_names)
{
    for (int r = 0; r < PGW_REASON_COUNT; r++) {
        pgw_reason back;
        ck_assert_int_eq(pgw_reason_from_name(&back, pgw_reason_name((pgw_reason)r)), PGW_OK);
        ck_assert_int_eq(back, r);
        ck_assert(pgw_reason_refreshes((pgw_reason)r) ==
                  (r >= PGW_REASON_SCOPE_RESET && r != PGW_REASON_BEYOND_WINDOW &&
                   r != PGW_REASON_BEFORE_WINDOW && r != PGW_REASON_WINDOW_EMPTY));
    }
    ck_assert_str_eq(pgw_reason_name(PGW_REASON_FILTER_COLUMN_CHANGED), "FILTER_COLUMN_CHANGED");
    ck_assert_str_eq(pgw_reason_name((pgw_reason)99), "UNKNOWN_REASON");
    pgw_reason r = PGW_REASON_TRUNCATE;
    ck_assert_int_eq(pgw_reason_from_name(&r, "rows_disjoint"), PGW_ENOTFOUND);
    ck_assert_int_eq(r, PGW_REASON_TRUNCATE);
    ck_assert_str_eq(pgw_op_name(PGW_OP_TRUNCATE), "truncate");
    ck_assert_str_eq(pgw_op_name(PGW_OP_DDL), "ddl");
    ck_assert_str_eq(pgw_op_name((pgw_op)0), "invalid");
    ck_assert_str_eq(pgw_op_name((pgw_op)8), "invalid");
    /* The reasons of issue 16, at their shared values. */
    ck_assert_int_eq(PGW_REASON_DDL, 17);
    ck_assert_int_eq(PGW_REASON_CLOCK, 18);
    ck_assert_int_eq(PGW_REASON_BEYOND_WINDOW, 19);
    ck_assert_int_eq(PGW_REASON_BEFORE_WINDOW, 20);
    ck_assert_int_eq(PGW_REASON_WINDOW_EMPTY, 21);
    ck_assert_int_eq(PGW_REASON_COUNT, 22);
    ck_assert(!pgw_reason_refreshes(PGW_REASON_WINDOW_EMPTY));
    ck_assert(!pgw_reason_refreshes(PGW_REASON_BEYOND_WINDOW));
    ck_assert(!pgw_reason_refreshes(PGW_REASON_BEFORE_WINDOW));
    ck_assert_str_eq(pgw_reason_name(PGW_REASON_DDL), "DDL");
    ck_assert_str_eq(pgw_reason_name(PGW_REASON_CLOCK), "CLOCK");
    ck_assert(pgw_reason_refreshes(PGW_REASON_DDL));
    ck_assert(pgw_reason_refreshes(PGW_REASON_CLOCK));
    ck_assert_int_eq(pgw_reason_from_name(&r, "DDL"), PGW_OK);
    ck_assert_int_eq(r, PGW_REASON_DDL);
    ck_assert_str_eq(pgw_reason_name((pgw_reason)PGW_REASON_COUNT), "UNKNOWN_REASON");
}
END_TEST

START_TEST(bad_arguments)
{
    pgw_error err;
    pgw_deps *d = (pgw_deps *)0x1;
    ck_assert_int_eq(pgw_deps_new(&d, NULL, "q", &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_new: scope is NULL");
    ck_assert_ptr_eq(d, (pgw_deps *)0x1);
    pgw_scope bad = {"p", "\xff", NULL};
    ck_assert_int_eq(pgw_deps_new(&d, &bad, "q", &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_new: scope.tenant is not valid UTF-8");
    ck_assert_int_eq(pgw_deps_new(&d, &IH_ACME, NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_new: query is NULL");

    d = ih_deps(&IH_ACME, "q");
    ck_assert_int_eq(pgw_deps_add_table(NULL, d, "public", "", &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_add_table: table is empty");
    size_t t = ih_table(d, "tasks");
    ck_assert_int_eq(pgw_deps_add_table(NULL, d, "public", "tasks", &err), PGW_EEXISTS);
    ck_assert_str_eq(err.message,
                     "deps_add_table: table \"public\".\"tasks\" is already declared");
    const char *dup[] = {"a", "b", "a"};
    ck_assert_int_eq(pgw_deps_set_columns(d, t, dup, 3, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_set_columns: columns[2] \"a\" appears twice");
    ck_assert_int_eq(pgw_deps_set_columns(d, 5, dup, 1, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_set_columns: table index 5 is not declared (1 tables)");
    const char *two[] = {"a", "b"};
    ck_assert_int_eq(pgw_deps_add_filter(d, t, "s", PGW_FILTER_EQ, two, 2, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_add_filter: eq takes exactly 1 value, not 2 (use in)");
    ck_assert_int_eq(pgw_deps_add_filter(d, t, "s", PGW_FILTER_OPAQUE, two, 2, &err),
                     PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_add_filter: an opaque filter has no values");
    const char *withnull[] = {"a", NULL};
    ck_assert_int_eq(pgw_deps_add_filter(d, t, "s", PGW_FILTER_IN, withnull, 2, &err),
                     PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_add_filter: values[1] is NULL (SQL = never matches "
                                  "NULL; declare IS NULL as opaque)");
    ck_assert_int_eq(pgw_deps_add_filter(d, t, "s", (pgw_filter_op)9, NULL, 0, &err),
                     PGW_EINVAL);
    ck_assert_int_eq(pgw_deps_set_window(d, t, -2, 0, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_set_window: limit -2 is below -1");
    ck_assert_int_eq(pgw_deps_set_window(d, t, 5, -1, &err), PGW_EINVAL);
    pgw_rowid empty = {NULL, 0};
    ck_assert_int_eq(pgw_deps_set_result_ids(d, &empty, 1, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_set_result_ids: ids[0] has 0 parts (1..32 allowed)");
    pgw_deps *und = ih_deps(&IH_ACME, "u");
    const char *one = "1";
    pgw_rowid r1 = {&one, 1};
    ck_assert_int_eq(pgw_deps_set_result_ids(und, &r1, 1, &err), PGW_EINVAL);
    pgw_deps_free(und);

    pgw_write *w = (pgw_write *)0x1;
    ck_assert_int_eq(pgw_write_new(&w, &IH_ACME, "public", "t", PGW_OP_RESET, &err),
                     PGW_EINVAL);
    ck_assert_int_eq(pgw_write_new(&w, &IH_ACME, "public", "t", (pgw_op)42, &err),
                     PGW_EINVAL);
    ck_assert_str_eq(err.message, "write_new: op 42 is not a table operation");
    ck_assert_ptr_eq(w, (pgw_write *)0x1);
    w = ih_write(&IH_ACME, "t", PGW_OP_INSERT);
    ck_assert_int_eq(pgw_write_set_value(w, 0, PGW_SIDE_NEW, "c", "v", &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "write_set_value: set the row IDs first");
    ih_wids(w, "1", false);
    ck_assert_int_eq(pgw_write_set_value(w, 0, PGW_SIDE_OLD, "c", "v", &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "write_set_value: an insert has no old rows");
    ck_assert_int_eq(pgw_write_set_value(w, 1, PGW_SIDE_NEW, "c", "v", &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "write_set_value: row 1 is not listed (1 IDs)");
    ck_assert_int_eq(pgw_write_set_pk_changed(w, true, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_write_set_row_absent(w, 0, PGW_SIDE_NEW, &err), PGW_EINVAL);
    pgw_write_free(w);
    w = ih_write(&IH_ACME, "t", PGW_OP_TRUNCATE);
    ck_assert_int_eq(pgw_write_set_ids(w, NULL, 0, false, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "write_set_ids: a truncate has no row IDs");
    pgw_write_free(w);
    w = ih_write(&IH_ACME, "t", PGW_OP_UPDATE);
    ih_wids(w, "1,2", false);
    ck_assert_int_eq(pgw_write_set_pk_changed(w, true, NULL), PGW_OK);
    ck_assert_int_eq(pgw_write_set_row_absent(w, 0, PGW_SIDE_NEW, NULL), PGW_OK);
    ck_assert_int_eq(pgw_write_set_row_absent(w, 0, PGW_SIDE_OLD, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message,
                     "write_set_row_absent: row 0 is already absent on the other side");
    ck_assert_int_eq(pgw_write_set_value(w, 0, PGW_SIDE_NEW, "c", "v", &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_write_set_pk_changed(w, false, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "write_set_pk_changed: row 0 is marked absent");

    pgw_verdict v = {true, PGW_REASON_TRUNCATE};
    ck_assert_int_eq(pgw_decide(&v, NULL, w, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "decide: deps is NULL");
    ck_assert_int_eq(pgw_decide(&v, d, NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_decide(NULL, d, w, &err), PGW_EINVAL);
    ck_assert(v.refresh && v.reason == PGW_REASON_TRUNCATE); /* untouched */
    pgw_write_free(w);
    pgw_deps_free(d);
    pgw_deps_free(NULL);
    pgw_write_free(NULL);
}
END_TEST

START_TEST(accessors)
{
    pgw_deps *d = tasks_list(&IH_LANDLORD, NULL);
    pgw_scope s;
    ck_assert_int_eq(pgw_deps_scope(&s, d), PGW_OK);
    ck_assert_str_eq(s.project, "p1");
    ck_assert_ptr_null(s.tenant);
    ck_assert_str_eq(s.database, "landlord");
    ck_assert_str_eq(pgw_deps_query(d), "tasks.list");
    ck_assert_uint_eq(pgw_deps_n_tables(d), 1);
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ck_assert_int_eq(pgw_write_op(w), PGW_OP_UPDATE);
    ck_assert_str_eq(pgw_write_schema(w), "public");
    ck_assert_str_eq(pgw_write_table(w), "tasks");
    ck_assert(!pgw_write_ids_known(w));
    ck_assert(!pgw_write_columns_known(w));
    ih_wids(w, "1,2", false);
    ih_wcols(w, "a", false);
    ck_assert(pgw_write_ids_known(w));
    ck_assert(pgw_write_columns_known(w));
    ck_assert_uint_eq(pgw_write_n_ids(w), 2);
    ck_assert_int_eq(pgw_write_fallback_status(w), PGW_OK);
    ck_assert_str_eq(pgw_write_fallback_message(w), "");
    ck_assert_int_eq(pgw_write_scope(&s, w), PGW_OK);
    ck_assert_str_eq(s.tenant, "acme");
    pgw_write_free(w);
    pgw_deps_free(d);
}
END_TEST

/* pgw_decide allocates nothing: every scenario above, through the counting
 * allocator. */
START_TEST(decide_allocates_nothing)
{
    pgwt_alloc_install();
    pgw_deps *d = tasks_list(&IH_ACME, "1,2,3");
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "9,10,3", false);
    ih_wcols(w, "status,title", false);
    ih_wval(w, 0, PGW_SIDE_OLD, "status", "closed");
    ih_wval(w, 1, PGW_SIDE_NEW, "status", "open");
    pgw_write *r = NULL;
    ck_assert_int_eq(pgw_write_new_reset(&r, &IH_ACME, NULL), PGW_OK);
    pgwt_alloc_stats before = pgwt_alloc_get();
    pgw_verdict v;
    for (int i = 0; i < 1000; i++) {
        ck_assert_int_eq(pgw_decide(&v, d, w, NULL), PGW_OK);
        ck_assert_int_eq(pgw_decide(&v, d, r, NULL), PGW_OK);
    }
    pgwt_alloc_stats after = pgwt_alloc_get();
    ck_assert_uint_eq(after.calls, before.calls);
    ck_assert_uint_eq(after.frees, before.frees);
    pgw_write_free(w);
    pgw_write_free(r);
    pgw_deps_free(d);
    ck_assert_uint_eq(pgwt_alloc_get().live, 0);
    pgwt_alloc_uninstall();
}
END_TEST

/* Builders fail cleanly at every allocation. */
START_TEST(builders_enomem)
{
    pgwt_alloc_install();
    size_t n;
    for (n = 1;; n++) {
        pgwt_alloc_fail_at(n);
        pgw_deps *d = NULL;
        pgw_write *w = NULL;
        int rc = pgw_deps_new(&d, &IH_ACME, "tasks.list", NULL);
        size_t t = 0;
        const char *cols[] = {"id", "title", "status"};
        const char *vals[] = {"open", "waiting"};
        const char *p1 = "1", *p2 = "x";
        const char *parts[] = {p1, p2};
        pgw_rowid ids[] = {{&p1, 1}, {parts, 2}};
        if (rc == PGW_OK)
            rc = pgw_deps_add_table(&t, d, "public", "tasks", NULL);
        if (rc == PGW_OK)
            rc = pgw_deps_set_columns(d, t, cols, 3, NULL);
        if (rc == PGW_OK)
            rc = pgw_deps_add_filter(d, t, "status", PGW_FILTER_IN, vals, 2, NULL);
        if (rc == PGW_OK)
            rc = pgw_deps_set_order_by(d, t, cols, 1, NULL);
        if (rc == PGW_OK)
            rc = pgw_deps_set_result_ids(d, ids, 2, NULL);
        const pgw_bound lo = {PGW_BOUND_INCLUSIVE, "2024-01-01"};
        const pgw_sort_key keys[] = {{"due", PGW_CMP_DATE, true, true},
                                     {"id", PGW_CMP_INT, false, false}};
        const char *first[] = {NULL, "3"}, *last[] = {"2024-02-01", "9"};
        const pgw_window_bounds b = {first, last, 2, true};
        if (rc == PGW_OK)
            rc = pgw_deps_add_range(d, t, "due", PGW_CMP_DATE, &lo, NULL, NULL);
        if (rc == PGW_OK)
            rc = pgw_deps_set_sort_keys(d, t, keys, 2, NULL);
        if (rc == PGW_OK)
            rc = pgw_deps_set_window(d, t, 10, 0, NULL);
        if (rc == PGW_OK)
            rc = pgw_deps_set_window_bounds(d, &b, NULL);
        if (rc == PGW_OK)
            rc = pgw_deps_set_result_kind(d, PGW_RESULT_LIST, NULL);
        if (rc == PGW_OK)
            rc = pgw_write_new(&w, &IH_ACME, "public", "tasks", PGW_OP_UPDATE, NULL);
        if (rc == PGW_OK)
            rc = pgw_write_set_ids(w, ids, 2, false, NULL);
        if (rc == PGW_OK)
            rc = pgw_write_set_columns(w, cols, 3, false, NULL);
        if (rc == PGW_OK)
            rc = pgw_write_set_value(w, 1, PGW_SIDE_OLD, "status", "open", NULL);
        if (rc == PGW_OK)
            rc = pgw_write_set_value(w, 1, PGW_SIDE_NEW, "owner", NULL, NULL);
        bool failed = pgwt_alloc_failed();
        pgwt_alloc_fail_at(0);
        if (failed) {
            ck_assert_int_eq(rc, PGW_ENOMEM);
            /* The objects that exist are still usable. */
            if (w) {
                pgw_verdict v;
                ck_assert_int_eq(pgw_decide(&v, d, w, NULL), PGW_OK);
            }
        } else {
            ck_assert_int_eq(rc, PGW_OK);
        }
        pgw_write_free(w);
        pgw_deps_free(d);
        ck_assert_uint_eq(pgwt_alloc_get().live, 0);
        if (!failed)
            break;
    }
    ck_assert_uint_gt(n, 10);
    pgwt_alloc_uninstall();
}
END_TEST

/* ---- typed range filters (issue 18) ---- */

static void ih_range(pgw_deps *d, size_t t, const char *col, pgw_cmp_type type,
                     pgw_bound_kind lk, const char *lv, pgw_bound_kind uk, const char *uv)
{
    pgw_bound lo = {lk, lv}, hi = {uk, uv};
    pgw_error err;
    pgw_error_clear(&err);
    ck_assert_msg(pgw_deps_add_range(d, t, col, type, &lo, &hi, &err) == PGW_OK, "%s",
                  err.message);
}

/* An insert of one row whose `col` is v (NULL: SQL NULL), decided. */
static void expect_insert(pgw_deps *d, const char *col, const char *v, bool refresh,
                          pgw_reason reason)
{
    pgw_write *w = ih_write(&IH_ACME, "items", PGW_OP_INSERT);
    ih_wids(w, "9", false);
    ih_wval(w, 0, PGW_SIDE_NEW, col, v);
    IH_EXPECT(d, w, refresh, reason);
    pgw_write_free(w);
}

#define IN_RANGE(d, col, v) expect_insert(d, col, v, true, PGW_REASON_INSERT_MAY_ENTER)
#define OUT_OF_RANGE(d, col, v) expect_insert(d, col, v, false, PGW_REASON_VALUES_DISJOINT)

START_TEST(range_numeric)
{
    /* WHERE price >= 10 AND price < 20, numeric: compared as exact decimals */
    pgw_deps *d = ih_deps(&IH_ACME, "items.mid");
    size_t t = ih_table(d, "items");
    ih_cols(d, t, "id,title");
    ih_range(d, t, "price", PGW_CMP_NUMERIC, PGW_BOUND_INCLUSIVE, "10", PGW_BOUND_EXCLUSIVE,
             "2e1");
    IN_RANGE(d, "price", "10.00");
    IN_RANGE(d, "price", "1e1");
    IN_RANGE(d, "price", "19.999999999999999999");
    IN_RANGE(d, "price", "abc"); /* unparsable: maybe relevant */
    IN_RANGE(d, "price", "");
    OUT_OF_RANGE(d, "price", "20.00");
    OUT_OF_RANGE(d, "price", "020");
    OUT_OF_RANGE(d, "price", "9.9999");
    OUT_OF_RANGE(d, "price", "-15");
    OUT_OF_RANGE(d, "price", "NaN"); /* NaN sorts above every number */
    OUT_OF_RANGE(d, "price", "Infinity");
    OUT_OF_RANGE(d, "price", NULL); /* NULL >= 10 is not true */
    /* a row whose value is unknown stays maybe relevant */
    expect_insert(d, "title", "x", true, PGW_REASON_INSERT_MAY_ENTER);

    /* updates of the filtered column: irrelevant before and after skips */
    pgw_write *w = ih_write(&IH_ACME, "items", PGW_OP_UPDATE);
    ih_wids(w, "4", false);
    ih_wcols(w, "price", false);
    ih_wval(w, 0, PGW_SIDE_OLD, "price", "5");
    ih_wval(w, 0, PGW_SIDE_NEW, "price", "25.5");
    IH_EXPECT(d, w, false, PGW_REASON_VALUES_DISJOINT);
    ih_wval(w, 0, PGW_SIDE_NEW, "price", "15");
    IH_EXPECT(d, w, true, PGW_REASON_FILTER_COLUMN_CHANGED);
    pgw_write_free(w);
    /* a delete of a row outside the range */
    w = ih_write(&IH_ACME, "items", PGW_OP_DELETE);
    ih_wids(w, "4", false);
    ih_wval(w, 0, PGW_SIDE_OLD, "price", "-0");
    IH_EXPECT(d, w, false, PGW_REASON_VALUES_DISJOINT);
    ih_wval(w, 0, PGW_SIDE_OLD, "price", "12");
    IH_EXPECT(d, w, true, PGW_REASON_DELETE_IN_WINDOW);
    pgw_write_free(w);
    pgw_deps_free(d);

    /* NaN bounds: price >= 'NaN' admits only NaN */
    d = ih_deps(&IH_ACME, "items.nan");
    t = ih_table(d, "items");
    ih_range(d, t, "price", PGW_CMP_NUMERIC, PGW_BOUND_INCLUSIVE, "nan", PGW_BOUND_NONE, NULL);
    IN_RANGE(d, "price", "NaN");
    OUT_OF_RANGE(d, "price", "Infinity");
    pgw_deps_free(d);
}
END_TEST

START_TEST(range_every_type)
{
    /* int: -5 < x <= 7 */
    pgw_deps *d = ih_deps(&IH_ACME, "items.int");
    size_t t = ih_table(d, "items");
    ih_range(d, t, "n", PGW_CMP_INT, PGW_BOUND_EXCLUSIVE, "-5", PGW_BOUND_INCLUSIVE, "+7");
    IN_RANGE(d, "n", "-4");
    IN_RANGE(d, "n", "007");
    IN_RANGE(d, "n", "1.5"); /* not an integer: unparsable, maybe */
    IN_RANGE(d, "n", "99999999999999999999"); /* beyond int64: unparsable */
    OUT_OF_RANGE(d, "n", "-5");
    OUT_OF_RANGE(d, "n", "8");
    OUT_OF_RANGE(d, "n", "-9223372036854775808");
    pgw_deps_free(d);

    /* date: x < 'infinity' AND x >= '2024-02-29' */
    d = ih_deps(&IH_ACME, "items.date");
    t = ih_table(d, "items");
    ih_range(d, t, "due", PGW_CMP_DATE, PGW_BOUND_INCLUSIVE, "2024-02-29", PGW_BOUND_EXCLUSIVE,
             "infinity");
    IN_RANGE(d, "due", "2024-02-29");
    IN_RANGE(d, "due", "275760-09-13");
    IN_RANGE(d, "due", "2023-02-29"); /* no such day: unparsable */
    OUT_OF_RANGE(d, "due", "infinity");
    OUT_OF_RANGE(d, "due", "-infinity");
    OUT_OF_RANGE(d, "due", "2024-02-28");
    OUT_OF_RANGE(d, "due", "2025-01-01 BC");
    pgw_deps_free(d);

    /* timestamp: BETWEEN two instants with fractional seconds */
    d = ih_deps(&IH_ACME, "items.ts");
    t = ih_table(d, "items");
    ih_range(d, t, "at", PGW_CMP_TIMESTAMP, PGW_BOUND_INCLUSIVE, "2024-01-01 00:00:00.5",
             PGW_BOUND_INCLUSIVE, "2024-01-01T23:59:59.999999");
    IN_RANGE(d, "at", "2024-01-01 00:00:00.5");
    IN_RANGE(d, "at", "2024-01-01 23:59:59.999999");
    IN_RANGE(d, "at", "2024-01-01 12:00:00+02"); /* a zone on a timestamp: unparsable */
    OUT_OF_RANGE(d, "at", "2024-01-01 00:00:00.499999");
    OUT_OF_RANGE(d, "at", "2024-01-02 00:00:00");
    pgw_deps_free(d);

    /* timestamptz: compared as the instant, whatever offset is written */
    d = ih_deps(&IH_ACME, "items.tz");
    t = ih_table(d, "items");
    ih_range(d, t, "at", PGW_CMP_TIMESTAMPTZ, PGW_BOUND_EXCLUSIVE, "2024-01-01 00:00:00+05:30",
             PGW_BOUND_NONE, NULL);
    OUT_OF_RANGE(d, "at", "2023-12-31 18:30:00+00");
    OUT_OF_RANGE(d, "at", "2024-01-01 04:00:00+14"); /* 2023-12-31 14:00 UTC */
    IN_RANGE(d, "at", "2023-12-31 23:59:59-05");   /* 2024-01-01 04:59:59 UTC */
    IN_RANGE(d, "at", "2023-12-31 18:30:00.000001+00");
    IN_RANGE(d, "at", "2024-01-01 00:00:00+05:29");
    IN_RANGE(d, "at", "2023-12-31 18:30:00"); /* no offset: unparsable */
    pgw_deps_free(d);

    /* text under the C collation: bytewise */
    d = ih_deps(&IH_ACME, "items.text");
    t = ih_table(d, "items");
    ih_range(d, t, "name", PGW_CMP_TEXT, PGW_BOUND_INCLUSIVE, "B", PGW_BOUND_INCLUSIVE, "b");
    IN_RANGE(d, "name", "B");
    IN_RANGE(d, "name", "Zebra");
    IN_RANGE(d, "name", "a");
    IN_RANGE(d, "name", "b");
    OUT_OF_RANGE(d, "name", "ba");
    OUT_OF_RANGE(d, "name", "A");
    OUT_OF_RANGE(d, "name", "");
    OUT_OF_RANGE(d, "name", "\xc3\xa9"); /* é: above every ASCII byte */
    pgw_deps_free(d);

    /* an empty range admits no parsable value */
    d = ih_deps(&IH_ACME, "items.empty");
    t = ih_table(d, "items");
    ih_range(d, t, "n", PGW_CMP_INT, PGW_BOUND_INCLUSIVE, "5", PGW_BOUND_EXCLUSIVE, "5");
    OUT_OF_RANGE(d, "n", "5");
    IN_RANGE(d, "n", "five");
    pgw_deps_free(d);
}
END_TEST

START_TEST(range_bad_arguments)
{
    pgw_deps *d = ih_deps(&IH_ACME, "items.bad");
    size_t t = ih_table(d, "items");
    pgw_error err;
    pgw_bound ok = {PGW_BOUND_INCLUSIVE, "1"};
    pgw_bound none = {PGW_BOUND_NONE, "ignored"};
    ck_assert_int_eq(pgw_deps_add_range(d, t, "n", PGW_CMP_INT, NULL, NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_add_range: no bound on n (declare the predicate opaque)");
    ck_assert_int_eq(pgw_deps_add_range(d, t, "n", PGW_CMP_INT, &none, &none, &err),
                     PGW_EINVAL);
    ck_assert_int_eq(pgw_deps_add_range(d, t, "n", (pgw_cmp_type)0, &ok, NULL, &err),
                     PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_add_range: type 0 is not a pgw_cmp_type");
    ck_assert_int_eq(pgw_deps_add_range(d, t, "n", (pgw_cmp_type)7, &ok, NULL, &err),
                     PGW_EINVAL);
    pgw_bound bad = {PGW_BOUND_INCLUSIVE, "2024-02-30"};
    ck_assert_int_eq(pgw_deps_add_range(d, t, "due", PGW_CMP_DATE, NULL, &bad, &err),
                     PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_add_range: upper bound \"2024-02-30\" does not parse as date");
    pgw_bound tz = {PGW_BOUND_EXCLUSIVE, "2024-01-01 00:00:00"};
    ck_assert_int_eq(pgw_deps_add_range(d, t, "at", PGW_CMP_TIMESTAMPTZ, &tz, NULL, &err),
                     PGW_EINVAL);
    ck_assert_str_eq(err.message,
                     "deps_add_range: lower bound \"2024-01-01 00:00:00\" does not parse as "
                     "timestamptz");
    pgw_bound kind = {(pgw_bound_kind)3, "1"};
    ck_assert_int_eq(pgw_deps_add_range(d, t, "n", PGW_CMP_INT, &kind, NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_add_range: lower kind 3 is not a pgw_bound_kind");
    pgw_bound null = {PGW_BOUND_INCLUSIVE, NULL};
    ck_assert_int_eq(pgw_deps_add_range(d, t, "n", PGW_CMP_INT, NULL, &null, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_add_range: upper bound is NULL");
    pgw_bound utf = {PGW_BOUND_INCLUSIVE, "\xc3"};
    ck_assert_int_eq(pgw_deps_add_range(d, t, "s", PGW_CMP_TEXT, &utf, NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_deps_add_range(d, t, "", PGW_CMP_INT, &ok, NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_deps_add_range(d, 5, "n", PGW_CMP_INT, &ok, NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_deps_add_range(NULL, 0, "n", PGW_CMP_INT, &ok, NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_deps_add_filter(d, t, "n", PGW_FILTER_RANGE, NULL, 0, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_add_filter: a range is added with pgw_deps_add_range()");
    /* nothing was added: an insert with any n refreshes */
    pgw_write *w = ih_write(&IH_ACME, "items", PGW_OP_INSERT);
    ih_wids(w, "1", false);
    ih_wval(w, 0, PGW_SIDE_NEW, "n", "-100");
    IH_EXPECT(d, w, true, PGW_REASON_INSERT_MAY_ENTER);
    pgw_write_free(w);
    pgw_deps_free(d);
    /* names */
    ck_assert_str_eq(pgw_cmp_type_name(PGW_CMP_TIMESTAMPTZ), "timestamptz");
    ck_assert_str_eq(pgw_cmp_type_name((pgw_cmp_type)9), "invalid");
    pgw_cmp_type ct = PGW_CMP_INT;
    ck_assert_int_eq(pgw_cmp_type_from_name(&ct, "numeric"), PGW_OK);
    ck_assert_int_eq(ct, PGW_CMP_NUMERIC);
    ck_assert_int_eq(pgw_cmp_type_from_name(&ct, "float8"), PGW_ENOTFOUND);
    ck_assert_int_eq(ct, PGW_CMP_NUMERIC);
    ck_assert_int_eq(pgw_cmp_type_from_name(NULL, "int"), PGW_EINVAL);
}
END_TEST

/* ---- window bounds (issue 18) ---- */

/* ORDER BY due ASC NULLS LAST, id LIMIT 3 OFFSET off on tasks, with the
 * window's first row (2024-01-02, 5) and last row (2024-01-05, 9). */
static pgw_deps *bounded_tasks(int64_t offset, bool full)
{
    pgw_deps *d = ih_deps(&IH_ACME, "tasks.page");
    size_t t = ih_table(d, "tasks");
    ih_cols(d, t, "id,title,due");
    ih_filter(d, t, "status", PGW_FILTER_EQ, "open");
    const pgw_sort_key keys[] = {{"due", PGW_CMP_DATE, false, false},
                                 {"id", PGW_CMP_INT, false, false}};
    ck_assert_int_eq(pgw_deps_set_sort_keys(d, t, keys, 2, NULL), PGW_OK);
    ck_assert_int_eq(pgw_deps_set_window(d, t, 3, offset, NULL), PGW_OK);
    const char *first[] = {"2024-01-02", "5"}, *last[] = {"2024-01-05", "9"};
    pgw_window_bounds b = {first, last, 2, full};
    pgw_error err;
    ck_assert_msg(pgw_deps_set_window_bounds(d, &b, &err) == PGW_OK, "%s", err.message);
    return d;
}

/* A one-row write of tasks: op, and the row's due and id on each side it
 * has (NULL due: SQL NULL; "?" leaves due unknown). */
static pgw_write *task_row(pgw_op op, const char *id, const char *old_due, const char *new_due)
{
    pgw_write *w = ih_write(&IH_ACME, "tasks", op);
    ih_wids(w, id, false);
    if (op == PGW_OP_UPDATE)
        ih_wcols(w, "due", false);
    for (int s = 0; s < 2; s++) {
        const char *due = s ? new_due : old_due;
        if ((s == 0 && op == PGW_OP_INSERT) || (s == 1 && op == PGW_OP_DELETE))
            continue;
        ih_wval(w, 0, (pgw_side)s, "id", id);
        ih_wval(w, 0, (pgw_side)s, "status", "open");
        if (!due || strcmp(due, "?") != 0)
            ih_wval(w, 0, (pgw_side)s, "due", due);
    }
    return w;
}

#define EXPECT_ROW(d, op, id, od, nd, refresh, reason)                                     \
    do {                                                                                    \
        pgw_write *w_ = task_row((op), (id), (od), (nd));                                   \
        IH_EXPECT((d), w_, (refresh), (reason));                                            \
        pgw_write_free(w_);                                                                 \
    } while (0)

START_TEST(window_bounds_beyond)
{
    pgw_deps *d = bounded_tasks(0, true);
    /* strictly beyond the last row: later due, or a tie on due broken by id */
    EXPECT_ROW(d, PGW_OP_INSERT, "1", NULL, "2024-01-06", false, PGW_REASON_BEYOND_WINDOW);
    EXPECT_ROW(d, PGW_OP_INSERT, "10", NULL, "2024-01-05", false, PGW_REASON_BEYOND_WINDOW);
    EXPECT_ROW(d, PGW_OP_INSERT, "1", NULL, NULL, false, PGW_REASON_BEYOND_WINDOW); /* NULLS LAST */
    /* within, tied with the last row, unknown or unparsable: refresh */
    EXPECT_ROW(d, PGW_OP_INSERT, "8", NULL, "2024-01-05", true, PGW_REASON_INSERT_MAY_ENTER);
    EXPECT_ROW(d, PGW_OP_INSERT, "9", NULL, "2024-01-05", true, PGW_REASON_INSERT_MAY_ENTER);
    EXPECT_ROW(d, PGW_OP_INSERT, "1", NULL, "2024-01-03", true, PGW_REASON_INSERT_MAY_ENTER);
    EXPECT_ROW(d, PGW_OP_INSERT, "1", NULL, "?", true, PGW_REASON_INSERT_MAY_ENTER);
    EXPECT_ROW(d, PGW_OP_INSERT, "1", NULL, "soon", true, PGW_REASON_INSERT_MAY_ENTER);
    /* deletes and updates beyond, before and after */
    EXPECT_ROW(d, PGW_OP_DELETE, "11", "2024-02-01", NULL, false, PGW_REASON_BEYOND_WINDOW);
    EXPECT_ROW(d, PGW_OP_UPDATE, "11", "2024-02-01", "2024-01-07", false,
               PGW_REASON_BEYOND_WINDOW);
    EXPECT_ROW(d, PGW_OP_UPDATE, "11", "2024-02-01", "2024-01-04", true,
               PGW_REASON_SORT_COLUMN_CHANGED);
    EXPECT_ROW(d, PGW_OP_UPDATE, "11", "2024-01-04", "2024-02-01", true,
               PGW_REASON_SORT_COLUMN_CHANGED);
    /* a delete before the first row shifts the window */
    EXPECT_ROW(d, PGW_OP_DELETE, "2", "2024-01-01", NULL, true, PGW_REASON_DELETE_IN_WINDOW);
    /* an irrelevant row is decided by its values first */
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_INSERT);
    ih_wids(w, "3", false);
    ih_wval(w, 0, PGW_SIDE_NEW, "status", "done");
    IH_EXPECT(d, w, false, PGW_REASON_VALUES_DISJOINT);
    pgw_write_free(w);
    /* changing the window or the sort keys clears the bounds */
    ck_assert_int_eq(pgw_deps_set_window(d, 0, 3, 0, NULL), PGW_OK);
    EXPECT_ROW(d, PGW_OP_INSERT, "1", NULL, "2024-01-06", true, PGW_REASON_INSERT_MAY_ENTER);
    pgw_deps_free(d);
    d = bounded_tasks(0, true);
    pgw_deps_clear_window_bounds(d);
    EXPECT_ROW(d, PGW_OP_DELETE, "11", "2024-02-01", NULL, true, PGW_REASON_DELETE_IN_WINDOW);
    pgw_deps_free(d);

    /* a window that is not full: an entering row may join it, a deleted
     * one beyond it was not in it */
    d = bounded_tasks(0, false);
    EXPECT_ROW(d, PGW_OP_INSERT, "1", NULL, "2024-01-06", true, PGW_REASON_INSERT_MAY_ENTER);
    EXPECT_ROW(d, PGW_OP_DELETE, "11", "2024-02-01", NULL, false, PGW_REASON_BEYOND_WINDOW);
    EXPECT_ROW(d, PGW_OP_UPDATE, "11", "2024-02-01", "2024-03-01", true,
               PGW_REASON_SORT_COLUMN_CHANGED);
    pgw_deps_free(d);
}
END_TEST

START_TEST(window_bounds_before)
{
    /* OFFSET 2: an update that stays before the first row keeps the count
     * in front of the window */
    pgw_deps *d = bounded_tasks(2, true);
    EXPECT_ROW(d, PGW_OP_UPDATE, "2", "2024-01-01", "2023-12-31", false,
               PGW_REASON_BEFORE_WINDOW);
    EXPECT_ROW(d, PGW_OP_UPDATE, "2", "2024-01-02", "2023-12-31", false,
               PGW_REASON_BEFORE_WINDOW); /* id 2 < 5 breaks the tie on due */
    EXPECT_ROW(d, PGW_OP_UPDATE, "6", "2024-01-02", "2023-12-31", true,
               PGW_REASON_SORT_COLUMN_CHANGED); /* it was within */
    EXPECT_ROW(d, PGW_OP_UPDATE, "2", "2024-01-01", "2024-01-03", true,
               PGW_REASON_SORT_COLUMN_CHANGED);
    /* inserts and deletes before the first row shift the window */
    EXPECT_ROW(d, PGW_OP_INSERT, "1", NULL, "2023-01-01", true, PGW_REASON_INSERT_MAY_ENTER);
    EXPECT_ROW(d, PGW_OP_DELETE, "1", "2023-01-01", NULL, true, PGW_REASON_DELETE_IN_WINDOW);
    /* a filter column that changes may move the row out of the count */
    pgw_write *w = task_row(PGW_OP_UPDATE, "2", "2024-01-01", "2024-01-01");
    ih_wcols(w, "due,status", false);
    IH_EXPECT(d, w, true, PGW_REASON_FILTER_COLUMN_CHANGED);
    pgw_write_free(w);
    /* a title change of a row before the window: unread by the page */
    w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "2", false);
    ih_wcols(w, "title", false);
    ih_wval(w, 0, PGW_SIDE_OLD, "due", "2024-01-01");
    ih_wval(w, 0, PGW_SIDE_OLD, "id", "2");
    IH_EXPECT(d, w, false, PGW_REASON_BEFORE_WINDOW);
    /* the same update with the result's IDs known is decided by them first */
    ih_result(d, "5,6,9");
    IH_EXPECT(d, w, false, PGW_REASON_ROWS_DISJOINT);
    pgw_write_free(w);
    pgw_deps_free(d);
}
END_TEST

START_TEST(window_bounds_desc)
{
    /* ORDER BY score DESC NULLS FIRST LIMIT 2: first row 9.5, last 1.50 */
    pgw_deps *d = ih_deps(&IH_ACME, "tasks.top");
    size_t t = ih_table(d, "tasks");
    const pgw_sort_key key = {"score", PGW_CMP_NUMERIC, true, true};
    ck_assert_int_eq(pgw_deps_set_sort_keys(d, t, &key, 1, NULL), PGW_OK);
    ck_assert_int_eq(pgw_deps_set_window(d, t, 2, 0, NULL), PGW_OK);
    const char *first[] = {"9.5"}, *last[] = {"1.50"};
    pgw_window_bounds b = {first, last, 1, true};
    ck_assert_int_eq(pgw_deps_set_window_bounds(d, &b, NULL), PGW_OK);
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_INSERT);
    ih_wids(w, "1", false);
    ih_wval(w, 0, PGW_SIDE_NEW, "score", "1.4999");
    IH_EXPECT(d, w, false, PGW_REASON_BEYOND_WINDOW);
    ih_wval(w, 0, PGW_SIDE_NEW, "score", "-Infinity");
    IH_EXPECT(d, w, false, PGW_REASON_BEYOND_WINDOW);
    ih_wval(w, 0, PGW_SIDE_NEW, "score", "1.5"); /* ties the last row */
    IH_EXPECT(d, w, true, PGW_REASON_INSERT_MAY_ENTER);
    ih_wval(w, 0, PGW_SIDE_NEW, "score", NULL); /* NULLS FIRST: before the first row */
    IH_EXPECT(d, w, true, PGW_REASON_INSERT_MAY_ENTER);
    ih_wval(w, 0, PGW_SIDE_NEW, "score", "NaN"); /* NaN is the largest: first */
    IH_EXPECT(d, w, true, PGW_REASON_INSERT_MAY_ENTER);
    pgw_write_free(w);
    /* a NULL boundary: the last row's score is NULL under NULLS LAST */
    const pgw_sort_key asc = {"score", PGW_CMP_NUMERIC, false, false};
    ck_assert_int_eq(pgw_deps_set_sort_keys(d, t, &asc, 1, NULL), PGW_OK);
    const char *nlast[] = {NULL};
    pgw_window_bounds nb = {first, nlast, 1, true};
    ck_assert_int_eq(pgw_deps_set_window_bounds(d, &nb, NULL), PGW_OK);
    w = ih_write(&IH_ACME, "tasks", PGW_OP_INSERT);
    ih_wids(w, "1", false);
    ih_wval(w, 0, PGW_SIDE_NEW, "score", NULL); /* ties the NULL: not beyond */
    IH_EXPECT(d, w, true, PGW_REASON_INSERT_MAY_ENTER);
    ih_wval(w, 0, PGW_SIDE_NEW, "score", "1e9"); /* before NULL */
    IH_EXPECT(d, w, true, PGW_REASON_INSERT_MAY_ENTER);
    pgw_write_free(w);
    pgw_deps_free(d);
}
END_TEST

START_TEST(window_bounds_bad_arguments)
{
    pgw_error err;
    const char *one[] = {"1"}, *two[] = {"1", "2"}, *bad[] = {"x", "2"};
    pgw_window_bounds b1 = {one, one, 1, true}, b2 = {two, two, 2, false};
    pgw_deps *d = ih_deps(&IH_ACME, "tasks.bad");
    ck_assert_int_eq(pgw_deps_set_window_bounds(d, &b1, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_set_window_bounds: no table is declared");
    size_t t = ih_table(d, "tasks");
    ck_assert_int_eq(pgw_deps_set_window_bounds(d, &b1, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message,
                     "deps_set_window_bounds: the first table has no window (limit or offset)");
    ck_assert_int_eq(pgw_deps_set_window(d, t, 10, 0, NULL), PGW_OK);
    ck_assert_int_eq(pgw_deps_set_window_bounds(d, &b1, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_set_window_bounds: the first table has no sort keys");
    ih_sort(d, t, "rank");
    ck_assert_int_eq(pgw_deps_set_window_bounds(d, &b1, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_set_window_bounds: sort key rank has no comparison type");
    const pgw_sort_key keys[] = {{"rank", PGW_CMP_INT, false, false},
                                 {"id", PGW_CMP_INT, false, false}};
    ck_assert_int_eq(pgw_deps_set_sort_keys(d, t, keys, 2, NULL), PGW_OK);
    ck_assert_int_eq(pgw_deps_set_window_bounds(d, &b1, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_set_window_bounds: 1 values per row for 2 sort keys");
    pgw_window_bounds bb = {bad, two, 2, true};
    ck_assert_int_eq(pgw_deps_set_window_bounds(d, &bb, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message,
                     "deps_set_window_bounds: first[0] \"x\" (sort key rank) does not parse as int");
    pgw_window_bounds bn = {two, NULL, 2, true};
    ck_assert_int_eq(pgw_deps_set_window_bounds(d, &bn, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_set_window_bounds: last is NULL");
    ck_assert_int_eq(pgw_deps_set_window_bounds(d, NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_deps_set_window_bounds(NULL, &b2, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_deps_set_window_bounds(d, &b2, &err), PGW_OK);
    pgw_deps_clear_window_bounds(NULL);
    /* sort keys */
    const pgw_sort_key badty = {"rank", (pgw_cmp_type)9, false, false};
    ck_assert_int_eq(pgw_deps_set_sort_keys(d, t, &badty, 1, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message,
                     "deps_set_sort_keys: keys[0].type 9 is neither 0 nor a pgw_cmp_type");
    const pgw_sort_key dup[] = {{"rank", PGW_CMP_INT, false, false},
                                {"rank", PGW_CMP_TEXT, true, false}};
    ck_assert_int_eq(pgw_deps_set_sort_keys(d, t, dup, 2, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_deps_set_sort_keys(d, t, NULL, 1, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_deps_set_sort_keys(d, 3, keys, 2, &err), PGW_EINVAL);
    /* failed calls kept the keys and the bounds: a row beyond skips */
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_DELETE);
    ih_wids(w, "3", false);
    ih_wval(w, 0, PGW_SIDE_OLD, "rank", "1");
    ih_wval(w, 0, PGW_SIDE_OLD, "id", "3");
    IH_EXPECT(d, w, false, PGW_REASON_BEYOND_WINDOW);
    pgw_write_free(w);
    pgw_deps_free(d);
}
END_TEST

/* ---- result kinds (issue 18) ---- */

START_TEST(result_kinds)
{
    /* SELECT sum(estimate) FROM tasks, acknowledged with the IDs of the
     * rows it summed */
    pgw_deps *d = ih_deps(&IH_ACME, "tasks.sum");
    size_t t = ih_table(d, "tasks");
    ih_cols(d, t, "estimate");
    ih_result(d, "1,2");
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_DELETE);
    ih_wids(w, "3", false);
    /* unspecified: read as a list (the hazard the docs warned of) */
    ck_assert_int_eq(pgw_deps_result_kind(d), PGW_RESULT_UNSPECIFIED);
    IH_EXPECT(d, w, false, PGW_REASON_ROWS_DISJOINT);
    /* an aggregate ignores them: the delete changes the sum */
    ck_assert_int_eq(pgw_deps_set_result_kind(d, PGW_RESULT_AGGREGATE, NULL), PGW_OK);
    ck_assert_int_eq(pgw_deps_result_kind(d), PGW_RESULT_AGGREGATE);
    IH_EXPECT(d, w, true, PGW_REASON_DELETE_IN_WINDOW);
    pgw_write *u = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(u, "3", false);
    ih_wcols(u, "estimate", false);
    IH_EXPECT(d, u, true, PGW_REASON_RESULT_UNKNOWN);
    /* count(*) (no column) is an aggregate unless declared a list
     * (SELECT FROM tasks: one empty row per task) */
    ih_cols(d, t, "");
    ck_assert_int_eq(pgw_deps_set_result_kind(d, PGW_RESULT_UNSPECIFIED, NULL), PGW_OK);
    IH_EXPECT(d, w, true, PGW_REASON_DELETE_IN_WINDOW);
    ck_assert_int_eq(pgw_deps_set_result_kind(d, PGW_RESULT_LIST, NULL), PGW_OK);
    IH_EXPECT(d, w, false, PGW_REASON_ROWS_DISJOINT);
    pgw_error err;
    ck_assert_int_eq(pgw_deps_set_result_kind(d, (pgw_result_kind)3, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_set_result_kind: kind 3 is not a pgw_result_kind");
    ck_assert_int_eq(pgw_deps_result_kind(d), PGW_RESULT_LIST);
    ck_assert_int_eq(pgw_deps_set_result_kind(NULL, PGW_RESULT_LIST, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_deps_result_kind(NULL), PGW_RESULT_UNSPECIFIED);
    pgw_write_free(w);
    pgw_write_free(u);
    pgw_deps_free(d);
}
END_TEST

START_TEST(window_empty)
{
    /* SELECT id, title FROM tasks WHERE status = 'open' AND owner <> $1
     * ORDER BY title LIMIT 10 OFFSET 20 returned no row */
    pgw_deps *d = ih_deps(&IH_ACME, "tasks.page3");
    size_t t = ih_table(d, "tasks");
    ih_cols(d, t, "id,title");
    ih_filter(d, t, "status", PGW_FILTER_EQ, "open");
    ih_filter(d, t, "owner", PGW_FILTER_OPAQUE, NULL);
    ih_sort(d, t, "title"); /* untyped: an empty window needs no types */
    ck_assert_int_eq(pgw_deps_set_window(d, t, 10, 20, NULL), PGW_OK);
    const pgw_window_bounds none = {NULL, NULL, 0, false};
    ck_assert_int_eq(pgw_deps_set_window_bounds(d, &none, NULL), PGW_OK);
    /* E1: any delete, even of unknown rows */
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_DELETE);
    IH_EXPECT(d, w, false, PGW_REASON_WINDOW_EMPTY);
    pgw_write_free(w);
    /* E1: an update of read and sort columns only, rows unknown */
    w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wcols(w, "title", false);
    IH_EXPECT(d, w, false, PGW_REASON_WINDOW_EMPTY);
    pgw_write_free(w);
    /* a filter column changed: rows may join in front of it or in it */
    w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "4", false);
    ih_wcols(w, "owner", false);
    IH_EXPECT(d, w, true, PGW_REASON_FILTER_COLUMN_CHANGED);
    /* E2: unless the row is irrelevant after (it may have been in front) */
    ih_wcols(w, "owner,status", false);
    ih_wval(w, 0, PGW_SIDE_NEW, "status", "done");
    IH_EXPECT(d, w, false, PGW_REASON_WINDOW_EMPTY);
    pgw_write_free(w);
    /* inserts may fill it */
    w = ih_write(&IH_ACME, "tasks", PGW_OP_INSERT);
    ih_wids(w, "5", false);
    IH_EXPECT(d, w, true, PGW_REASON_INSERT_MAY_ENTER);
    pgw_write_free(w);
    /* E3: the old version of a re-keyed row leaves; its new one may enter */
    w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "6,7", false);
    ck_assert_int_eq(pgw_write_set_pk_changed(w, true, NULL), PGW_OK);
    ih_wcols(w, "id", false);
    ck_assert_int_eq(pgw_write_set_row_absent(w, 0, PGW_SIDE_NEW, NULL), PGW_OK);
    ck_assert_int_eq(pgw_write_set_row_absent(w, 1, PGW_SIDE_OLD, NULL), PGW_OK);
    IH_EXPECT(d, w, false, PGW_REASON_WINDOW_EMPTY); /* no filter column changed (E1) */
    ih_wcols(w, "id,status", false);
    IH_EXPECT(d, w, true, PGW_REASON_INSERT_MAY_ENTER);
    ih_wval(w, 1, PGW_SIDE_NEW, "status", "done");
    IH_EXPECT(d, w, false, PGW_REASON_WINDOW_EMPTY); /* E3, then 21 */
    pgw_write_free(w);
    /* only the first table's window: a write to another table is decided as before */
    pgw_error err;
    const char *one[] = {"x"};
    const pgw_window_bounds half = {one, NULL, 1, false};
    ck_assert_int_eq(pgw_deps_set_window_bounds(d, &half, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_set_window_bounds: last is NULL");
    /* the failed call kept the empty window; clearing forgets it */
    w = ih_write(&IH_ACME, "tasks", PGW_OP_DELETE);
    IH_EXPECT(d, w, false, PGW_REASON_WINDOW_EMPTY);
    pgw_deps_clear_window_bounds(d);
    IH_EXPECT(d, w, true, PGW_REASON_IDS_UNKNOWN);
    pgw_write_free(w);
    pgw_deps_free(d);
}
END_TEST

/* Found in a newcomer's trial: an aggregate's window counts groups, so the
 * window rules that count rows do not apply to it (its bounds are not
 * used). */
START_TEST(window_bounds_aggregates)
{
    /* SELECT project, count(*) FROM g GROUP BY project ORDER BY project
     * LIMIT 3 OFFSET 2 returned d, e, f */
    pgw_deps *d = ih_deps(&IH_ACME, "g.groups");
    size_t t = ih_table(d, "g");
    ih_cols(d, t, "project");
    const pgw_sort_key key = {"project", PGW_CMP_TEXT, false, false};
    ck_assert_int_eq(pgw_deps_set_sort_keys(d, t, &key, 1, NULL), PGW_OK);
    ck_assert_int_eq(pgw_deps_set_window(d, t, 3, 2, NULL), PGW_OK);
    ck_assert_int_eq(pgw_deps_set_result_kind(d, PGW_RESULT_AGGREGATE, NULL), PGW_OK);
    const char *first[] = {"d"}, *last[] = {"f"};
    const pgw_window_bounds b = {first, last, 1, true};
    ck_assert_int_eq(pgw_deps_set_window_bounds(d, &b, NULL), PGW_OK);
    /* a row moves from group b to a new group c: the window becomes e, f, g */
    pgw_write *w = ih_write(&IH_ACME, "g", PGW_OP_UPDATE);
    ih_wids(w, "1", false);
    ih_wcols(w, "project", false);
    ih_wval(w, 0, PGW_SIDE_OLD, "project", "b");
    ih_wval(w, 0, PGW_SIDE_NEW, "project", "c");
    IH_EXPECT(d, w, true, PGW_REASON_SORT_COLUMN_CHANGED);
    /* the same page as a list of rows skips (it holds rows d, e, f) */
    ck_assert_int_eq(pgw_deps_set_result_kind(d, PGW_RESULT_LIST, NULL), PGW_OK);
    IH_EXPECT(d, w, false, PGW_REASON_BEFORE_WINDOW);
    pgw_write_free(w);
    pgw_deps_free(d);

    /* ... GROUP BY project HAVING sum(x) > 100 returned nothing */
    d = ih_deps(&IH_ACME, "g.having");
    t = ih_table(d, "g");
    ih_cols(d, t, "project,x");
    ck_assert_int_eq(pgw_deps_set_result_kind(d, PGW_RESULT_AGGREGATE, NULL), PGW_OK);
    const pgw_window_bounds none = {NULL, NULL, 0, false};
    ck_assert_int_eq(pgw_deps_set_window_bounds(d, &none, NULL), PGW_OK);
    w = ih_write(&IH_ACME, "g", PGW_OP_UPDATE);
    ih_wids(w, "1", false);
    ih_wcols(w, "x", false);
    IH_EXPECT(d, w, true, PGW_REASON_RESULT_UNKNOWN);
    pgw_write_free(w);
    w = ih_write(&IH_ACME, "g", PGW_OP_DELETE); /* HAVING count(*) < 2 */
    ih_wids(w, "1", false);
    IH_EXPECT(d, w, true, PGW_REASON_DELETE_IN_WINDOW);
    pgw_write_free(w);
    pgw_deps_free(d);
}
END_TEST

START_TEST(window_bounds_refused)
{
    pgw_error err;
    pgw_deps *d = ih_deps(&IH_ACME, "tasks.checks");
    size_t t = ih_table(d, "tasks");
    const pgw_sort_key key = {"rank", PGW_CMP_INT, false, false};
    ck_assert_int_eq(pgw_deps_set_sort_keys(d, t, &key, 1, NULL), PGW_OK);
    ck_assert_int_eq(pgw_deps_set_window(d, t, 5, 0, NULL), PGW_OK);
    const char *nine[] = {"9"}, *one[] = {"1"}, *bad[] = {"1\xff"};
    const pgw_window_bounds reversed = {nine, one, 1, true};
    ck_assert_int_eq(pgw_deps_set_window_bounds(d, &reversed, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_set_window_bounds: the first row sorts after the last "
                                  "in the sort keys' order");
    const pgw_window_bounds utf = {bad, one, 1, false};
    ck_assert_int_eq(pgw_deps_set_window_bounds(d, &utf, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message,
                     "deps_set_window_bounds: first[0] (sort key rank) is not valid UTF-8");
    ck_assert_int_eq(pgw_deps_set_window(d, t, 0, 0, NULL), PGW_OK);
    const pgw_window_bounds ok = {one, nine, 1, false};
    ck_assert_int_eq(pgw_deps_set_window_bounds(d, &ok, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_set_window_bounds: a window of limit 0 holds no row");
    ck_assert_int_eq(pgw_deps_set_window(d, t, -1, 3, NULL), PGW_OK);
    const pgw_window_bounds full = {one, nine, 1, true};
    ck_assert_int_eq(pgw_deps_set_window_bounds(d, &full, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message,
                     "deps_set_window_bounds: a window without a limit is never full");
    ck_assert_int_eq(pgw_deps_set_window_bounds(d, &ok, &err), PGW_OK);
    pgw_deps_free(d);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("inval");
    TCase *tc = tcase_create("scenarios");
    tcase_add_test(tc, row_leaves);
    tcase_add_test(tc, row_enters);
    tcase_add_test(tc, key_change);
    tcase_add_test(tc, two_updates_same_row);
    tcase_add_test(tc, deletes);
    tcase_add_test(tc, aggregate_result_ids);
    tcase_add_test(tc, result_membership);
    tcase_add_test(tc, insert_sorts_first);
    tcase_add_test(tc, unread_columns);
    tcase_add_test(tc, ids_truncated);
    tcase_add_test(tc, truncate_and_unknown);
    tcase_add_test(tc, scopes_are_separate);
    tcase_add_test(tc, undeclared);
    suite_add_tcase(s, tc);
    tc = tcase_create("rules");
    tcase_add_test(tc, inserts);
    tcase_add_test(tc, sort_updates);
    tcase_add_test(tc, rows_disjoint);
    tcase_add_test(tc, filter_change_outside_window);
    tcase_add_test(tc, partial_values);
    tcase_add_test(tc, composite_keys);
    tcase_add_test(tc, several_tables);
    tcase_add_test(tc, key_change_unread);
    tcase_add_test(tc, range_numeric);
    tcase_add_test(tc, range_every_type);
    tcase_add_test(tc, window_bounds_beyond);
    tcase_add_test(tc, window_bounds_before);
    tcase_add_test(tc, window_bounds_desc);
    tcase_add_test(tc, result_kinds);
    tcase_add_test(tc, window_empty);
    tcase_add_test(tc, window_bounds_aggregates);
    suite_add_tcase(s, tc);
    tc = tcase_create("api");
    tcase_add_test(tc, ddl);
    tcase_add_test(tc, reason_names);
    tcase_add_test(tc, bad_arguments);
    tcase_add_test(tc, range_bad_arguments);
    tcase_add_test(tc, window_bounds_bad_arguments);
    tcase_add_test(tc, window_bounds_refused);
    tcase_add_test(tc, accessors);
    tcase_add_test(tc, decide_allocates_nothing);
    tcase_add_test(tc, builders_enomem);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return pgwt_main(suite());
}
