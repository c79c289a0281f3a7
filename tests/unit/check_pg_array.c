/*
 * tests/unit/check_pg_array.c — the array-literal parser for pg_stats value
 * lists (lib/pq/pg_array.c), on the forms array_out prints.
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "pg_array.h"
#include "pgw_test.h"

static void parses(const char *lit, size_t n, const char *const *want)
{
    pgwi_pg_array a;
    ck_assert_msg(pgwi_pg_array_parse(&a, lit, strlen(lit)) == PGW_OK, "%s", lit);
    ck_assert_uint_eq(a.n, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_str_eq(a.items[i], want[i]);
    pgwi_pg_array_free(&a);
}

START_TEST(array_out_forms)
{
    static const char *const abc[] = {"a", "b", "c"};
    parses("{a,b,c}", 3, abc);
    parses("  { a , b ,c }  ", 3, abc);
    static const char *const quoted[] = {"a b", "c,d", "e\"f", "g\\h", "", "NULL", "{x}"};
    parses("{\"a b\",\"c,d\",\"e\\\"f\",\"g\\\\h\",\"\",\"NULL\",\"{x}\"}", 7, quoted);
    static const char *const nums[] = {"0.02", "0.0133", "1e-05"};
    parses("{0.02,0.0133,1e-05}", 3, nums);
    parses("{}", 0, NULL);
    static const char *const dims[] = {"1", "2"};
    parses("[0:1]={1,2}", 2, dims);
    static const char *const utf8[] = {"名前", "\xEF\xBB\xBFtitle"};
    parses("{名前,\xEF\xBB\xBFtitle}", 2, utf8);
    static const char *const tags[] = {"{a,b}", "{c}"};
    parses("{\"{a,b}\",\"{c}\"}", 2, tags);
}
END_TEST

START_TEST(rejects_other_forms)
{
    static const char *const bad[] = {
        "", "a,b", "{a,b", "{\"a}", "{{1,2},{3,4}}", "{a,NULL}", "{null}", "{a,,b}",
        "{a}x", "[0:1]{1,2}", "{\"a\"b}", "{,}", "{a,}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pgwi_pg_array a = {99, NULL, NULL};
        ck_assert_msg(pgwi_pg_array_parse(&a, bad[i], strlen(bad[i])) == PGW_EPARSE, "%s",
                      bad[i]);
        ck_assert_uint_eq(a.n, 99);
    }
}
END_TEST

START_TEST(allocation_failure)
{
    pgwt_alloc_install();
    for (size_t n = 1; n < 50; n++) {
        pgwi_pg_array a;
        pgwt_alloc_fail_at(n);
        int rc = pgwi_pg_array_parse(&a, "{a,b,c,d,e,f,g,h,i,j,k,l}", 25);
        bool failed = pgwt_alloc_failed();
        pgwt_alloc_fail_at(0);
        if (!failed) {
            ck_assert_int_eq(rc, PGW_OK);
            ck_assert_uint_eq(a.n, 12);
            pgwi_pg_array_free(&a);
            break;
        }
        ck_assert_int_eq(rc, PGW_ENOMEM);
        ck_assert_uint_eq(pgwt_alloc_get().live, 0);
    }
    pgwt_alloc_uninstall();
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pg_array");
    TCase *tc = tcase_create("pg_array");
    tcase_add_test(tc, array_out_forms);
    tcase_add_test(tc, rejects_other_forms);
    tcase_add_test(tc, allocation_failure);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return pgwt_main(suite());
}
