/*
 * tests/unit/check_typed.c — values compared as their SQL type from their
 * text form (issue 18, lib/core/inval/typed.h): every comparison type at
 * its edges, known dates and instants, and a differential test of the
 * exact decimal comparison against 64-bit integers.
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inval/typed.h"
#include "pgw_test.h"

static pgwi_typed parsed(pgw_cmp_type t, const char *s)
{
    pgwi_typed v;
    ck_assert_msg(pgwi_typed_parse(&v, t, s, strlen(s)), "%s: \"%s\" does not parse",
                  pgwi_cmp_type_name(t), s);
    return v;
}

/* The comparison of a and b under t, checked antisymmetric. */
static int cmp(pgw_cmp_type t, const char *a, const char *b)
{
    pgwi_typed x = parsed(t, a), y = parsed(t, b);
    int c = pgwi_typed_cmp(&x, &y), r = pgwi_typed_cmp(&y, &x);
    ck_assert_msg(c == -r && c >= -1 && c <= 1, "%s: \"%s\" vs \"%s\": %d, back %d",
                  pgwi_cmp_type_name(t), a, b, c, r);
    ck_assert_int_eq(pgwi_typed_cmp(&x, &x), 0);
    return c;
}

#define LT(t, a, b) ck_assert_msg(cmp(t, a, b) < 0, "%s < %s", a, b)
#define EQ(t, a, b) ck_assert_msg(cmp(t, a, b) == 0, "%s = %s", a, b)

static void bad(pgw_cmp_type t, const char *s)
{
    pgwi_typed v;
    ck_assert_msg(!pgwi_typed_parse(&v, t, s, strlen(s)), "%s: \"%s\" parsed",
                  pgwi_cmp_type_name(t), s);
}

START_TEST(integers)
{
    const pgw_cmp_type I = PGW_CMP_INT;
    LT(I, "-2", "-1");
    LT(I, "-1", "0");
    LT(I, "9", "10");
    EQ(I, "007", "7");
    EQ(I, "-0", "0");
    EQ(I, "+5", "5");
    EQ(I, "  42\n", "42");
    LT(I, "-9223372036854775808", "9223372036854775807");
    LT(I, "-9223372036854775808", "-9223372036854775807");
    ck_assert(parsed(I, "-9223372036854775808").i == INT64_MIN);
    ck_assert(parsed(I, "9223372036854775807").i == INT64_MAX);
    bad(I, "9223372036854775808");
    bad(I, "-9223372036854775809");
    bad(I, "99999999999999999999");
    bad(I, "");
    bad(I, "   ");
    bad(I, "-");
    bad(I, "1.0");
    bad(I, "1e3");
    bad(I, "0x1A");
    bad(I, "1_000");
    bad(I, "12 3");
    bad(I, "NaN");
}
END_TEST

START_TEST(numerics)
{
    const pgw_cmp_type N = PGW_CMP_NUMERIC;
    /* Leading and trailing zeros, signs, -0. */
    EQ(N, "1.50", "1.5");
    EQ(N, "001.5", "1.5");
    EQ(N, "1.", "1");
    EQ(N, ".5", "0.5");
    EQ(N, "-0", "0");
    EQ(N, "-0.000", "+0e7");
    EQ(N, "0", "0.0");
    EQ(N, " 3.14 ", "3.14");
    /* Exponents. */
    EQ(N, "15e-1", "1.5");
    EQ(N, "1.5E+2", "150");
    EQ(N, "0.00123", "1.23e-3");
    EQ(N, "12300", "1.23e4");
    /* Order: negatives, magnitudes, digits beyond a common prefix. */
    LT(N, "-10", "-9.99");
    LT(N, "-1", "-0.5");
    LT(N, "-0.5", "0");
    LT(N, "0", "0.0000001");
    LT(N, "9.99", "10");
    LT(N, "1.2", "1.21");
    LT(N, "1.2", "1.2000001");
    LT(N, "0.1", "0.10001");
    LT(N, "99", "100");
    LT(N, "123456789012345678901234567890", "123456789012345678901234567891");
    LT(N, "1e-1000000", "1e1000000");
    /* Beyond any int64 or double: exact. */
    LT(N, "18446744073709551616.000000000000000001", "18446744073709551616.00000000000000001");
    /* Special values: -Infinity < finite < Infinity < NaN; NaN = NaN. */
    LT(N, "-Infinity", "-1e1000000");
    LT(N, "1e1000000", "Infinity");
    LT(N, "Infinity", "NaN");
    LT(N, "-inf", "0");
    EQ(N, "NaN", "nan");
    EQ(N, "infinity", "+Infinity");
    EQ(N, "inf", "INFINITY");
    EQ(N, "-Infinity", "-INF");
    bad(N, "");
    bad(N, ".");
    bad(N, "-");
    bad(N, "1e");
    bad(N, "1e+");
    bad(N, "e5");
    bad(N, "1.2.3");
    bad(N, "1e1000001");
    bad(N, "1,5");
    bad(N, "1_000");
    bad(N, "-NaN");
    bad(N, "infinite");
    bad(N, "1 2");
}
END_TEST

/* Exact decimal comparison against 64-bit integers: n x 10^-scale in
 * several spellings (leading zeros, trailing zeros, exponent forms). */
static void spell(char *buf, size_t size, int64_t n, int scale, int form)
{
    char digits[32];
    int64_t m = n < 0 ? -n : n;
    snprintf(digits, sizeof digits, "%lld", (long long)m);
    const char *sign = n < 0 ? "-" : (form & 4 ? "+" : "");
    int len = (int)strlen(digits);
    switch (form & 3) {
    case 0: /* plain decimal, with the point placed */
        if (scale == 0) {
            snprintf(buf, size, "%s%s", sign, digits);
        } else if (len > scale) {
            snprintf(buf, size, "%s%.*s.%s", sign, len - scale, digits, digits + len - scale);
        } else { /* 0.<scale - len zeros><digits>; scale is at most 8 */
            snprintf(buf, size, "%s0.%.*s%s", sign, scale - len, "00000000", digits);
        }
        break;
    case 1: /* digits with an exponent */
        snprintf(buf, size, "%s%se-%d", sign, digits, scale);
        break;
    case 2: /* trailing zeros added, exponent adjusted */
        snprintf(buf, size, "%s%s000E%d", sign, digits, -(scale + 3));
        break;
    default: /* leading zeros, then a point at the end */
        snprintf(buf, size, "%s000%s.e-%d", sign, digits, scale);
        break;
    }
}

START_TEST(numeric_differential)
{
    srand(17);
    for (int k = 0; k < 200000; k++) {
        int64_t a = (int64_t)(rand() % 2000001) - 1000000, b = (int64_t)(rand() % 2000001) - 1000000;
        if (k % 7 == 0)
            b = a * 10; /* the same digits at another scale */
        int sa = rand() % 9, sb = rand() % 9;
        /* a x 10^-sa vs b x 10^-sb: scale both to 10^-8. */
        int64_t x = a, y = b; /* at most 1e7 x 1e8: within int64 */
        for (int z = sa; z < 8; z++)
            x *= 10;
        for (int z = sb; z < 8; z++)
            y *= 10;
        int want = x < y ? -1 : x > y;
        char ta[64], tb[64];
        spell(ta, sizeof ta, a, sa, rand() % 8);
        spell(tb, sizeof tb, b, sb, rand() % 8);
        int got = cmp(PGW_CMP_NUMERIC, ta, tb);
        ck_assert_msg(got == want, "\"%s\" vs \"%s\": %d, want %d", ta, tb, got, want);
    }
}
END_TEST

START_TEST(dates)
{
    const pgw_cmp_type D = PGW_CMP_DATE;
    /* Known days from 1970-01-01. */
    ck_assert(parsed(D, "1970-01-01").i == 0);
    ck_assert(parsed(D, "2000-01-01").i == 10957);
    ck_assert(parsed(D, "1969-12-31").i == -1);
    ck_assert(parsed(D, "0001-01-01").i == -719162);
    ck_assert(parsed(D, "0001-12-31 BC").i == -719163); /* 1 BC is year 0 */
    /* Julian day 0, PostgreSQL's earliest date; its Julian day of
     * 1970-01-01 is 2440588. */
    ck_assert(parsed(D, "4714-11-24 BC").i == -2440588);
    ck_assert(parsed(D, "5874897-12-31").cls == PGWI_TYPED_FINITE);
    LT(D, "2024-02-28", "2024-02-29");
    LT(D, "2024-02-29", "2024-03-01");
    LT(D, "0044-03-15 BC", "0001-01-01");
    LT(D, "0002-01-01 BC", "0001-01-01 BC");
    LT(D, "9999-12-31", "10000-01-01");
    EQ(D, " 2024-01-05 ", "2024-01-05");
    EQ(D, "0044-03-15 bc", "0044-03-15 BC");
    /* ±infinity. */
    LT(D, "-infinity", "4714-11-24 BC");
    LT(D, "5874897-12-31", "infinity");
    EQ(D, "Infinity", "+infinity");
    EQ(D, "-INFINITY", "-infinity");
    /* Leap years: 2000 and 1 BC (year 0) are, 1900 and 2 BC are not. */
    parsed(D, "2000-02-29");
    parsed(D, "0001-02-29 BC");
    bad(D, "1900-02-29");
    bad(D, "0002-02-29 BC");
    bad(D, "2023-02-29");
    bad(D, "2024-04-31");
    bad(D, "2024-13-01");
    bad(D, "2024-00-10");
    bad(D, "2024-01-00");
    bad(D, "0000-01-01"); /* there is no year 0 */
    bad(D, "24-01-01");
    bad(D, "12345678-01-01");
    bad(D, "2024-1-01");
    bad(D, "2024/01/01");
    bad(D, "2024-01-01 00:00:00");
    bad(D, "01/02/2024");
    bad(D, "today");
    bad(D, "");
    bad(D, "-2024-01-01");
}
END_TEST

START_TEST(timestamps)
{
    const pgw_cmp_type T = PGW_CMP_TIMESTAMP;
    pgwi_typed v = parsed(T, "2000-01-01 00:00:01.5");
    ck_assert(v.i == 10957 && v.usec == 1500000);
    v = parsed(T, "1970-01-01 23:59:59.999999");
    ck_assert(v.i == 0 && v.usec == INT64_C(86399999999));
    /* Fractional seconds: .5 = .500000; one microsecond counts. */
    EQ(T, "2024-01-01 12:00:00.5", "2024-01-01 12:00:00.500000");
    EQ(T, "2024-01-01 12:00:00", "2024-01-01T12:00:00.0");
    LT(T, "2024-01-01 12:00:00", "2024-01-01 12:00:00.000001");
    LT(T, "2024-01-01 12:00:00.999999", "2024-01-01 12:00:01");
    LT(T, "2023-12-31 23:59:59.999999", "2024-01-01 00:00:00");
    LT(T, "0001-01-01 00:00:00 BC", "0001-01-01 00:00:00");
    LT(T, "-infinity", "0001-01-01 00:00:00 BC");
    LT(T, "294276-12-31 23:59:59.999999", "infinity");
    /* PostgreSQL keeps microseconds: a seventh digit would be rounded. */
    bad(T, "2024-01-01 12:00:00.1234567");
    bad(T, "2024-01-01 12:00:00.");
    /* No zone on a timestamp: PostgreSQL would ignore it. */
    bad(T, "2024-01-01 12:00:00+00");
    bad(T, "2024-01-01 12:00:00Z");
    bad(T, "2024-01-01 24:00:00");
    bad(T, "2024-01-01 23:60:00");
    bad(T, "2024-01-01 23:59:60");
    bad(T, "2024-01-01 12:00");
    bad(T, "2024-01-01");
    bad(T, "2024-01-01  12:00:00");
    bad(T, "2024-02-30 12:00:00");
    bad(T, "now");
}
END_TEST

START_TEST(timestamptzs)
{
    const pgw_cmp_type Z = PGW_CMP_TIMESTAMPTZ;
    /* The same instant written in several zones. */
    EQ(Z, "2024-01-01 00:00:00+05:30", "2023-12-31 18:30:00+00");
    EQ(Z, "2024-01-01 00:00:00-08", "2024-01-01 08:00:00+00");
    EQ(Z, "2024-01-01 08:00:00Z", "2024-01-01 08:00:00+00:00");
    EQ(Z, "2024-01-01 08:00:00+0000", "2024-01-01 08:00:00-00");
    EQ(Z, "2024-01-01 05:30:00+0530", "2024-01-01 00:00:00+00");
    /* Local mean time offsets carry seconds (ISO output: +00:53:28). */
    EQ(Z, "1890-01-01 00:53:28+00:53:28", "1890-01-01 00:00:00+00");
    /* An offset moves the instant across a day and a year boundary. */
    pgwi_typed v = parsed(Z, "1970-01-01 01:00:00+02");
    ck_assert(v.i == -1 && v.usec == INT64_C(82800000000));
    v = parsed(Z, "1969-12-31 23:00:00-01");
    ck_assert(v.i == 0 && v.usec == 0);
    LT(Z, "2024-01-01 12:00:00+01", "2024-01-01 12:00:00+00");
    LT(Z, "2024-01-01 12:00:00.999999+00", "2024-01-01 12:00:01+00");
    LT(Z, "0044-03-15 12:00:00+00 BC", "0001-01-01 00:00:00+00");
    LT(Z, "-infinity", "0044-03-15 12:00:00+00 BC");
    EQ(Z, "infinity", "Infinity");
    /* Without an offset the instant depends on the session's TimeZone. */
    bad(Z, "2024-01-01 12:00:00");
    bad(Z, "2024-01-01 12:00:00 UTC");
    bad(Z, "2024-01-01 12:00:00 America/New_York");
    bad(Z, "2024-01-01 12:00:00+16");
    bad(Z, "2024-01-01 12:00:00+05:60");
    bad(Z, "2024-01-01 12:00:00+5");
    bad(Z, "2024-01-01 12:00:00+05:3");
    bad(Z, "2024-01-01 12:00:00+05:30:1");
    bad(Z, "2024-01-01 12:00:00+");
    bad(Z, "2024-01-01 12:00:00.1234567+00");
}
END_TEST

START_TEST(text_c_collation)
{
    const pgw_cmp_type X = PGW_CMP_TEXT;
    LT(X, "", "a");
    LT(X, "B", "a"); /* bytes: upper case first */
    LT(X, "a", "ab");
    LT(X, "ab", "b");
    LT(X, "z", "\xc3\xa9"); /* é (U+00E9) after every ASCII byte */
    LT(X, "\xc3\xa9", "\xe2\x82\xac"); /* code point order: é < € */
    EQ(X, " a ", " a "); /* white space is data */
    LT(X, " a ", "a"); /* a space (0x20) sorts before letters */
    /* Embedded NUL bytes count. */
    pgwi_typed x, y;
    ck_assert(pgwi_typed_parse(&x, X, "a\0b", 3));
    ck_assert(pgwi_typed_parse(&y, X, "a", 1));
    ck_assert_int_eq(pgwi_typed_cmp(&y, &x), -1);
    ck_assert(pgwi_typed_parse(&y, X, "a\0c", 3));
    ck_assert_int_eq(pgwi_typed_cmp(&x, &y), -1);
    ck_assert(pgwi_typed_parse(&x, X, NULL, 0));
    ck_assert_int_eq(pgwi_typed_cmp(&x, &x), 0);
}
END_TEST

START_TEST(names_and_arguments)
{
    static const char *const names[] = {"int", "numeric", "date", "timestamp", "timestamptz",
                                        "text"};
    for (int t = PGW_CMP_INT; t <= PGW_CMP_TEXT; t++) {
        ck_assert_str_eq(pgwi_cmp_type_name((pgw_cmp_type)t), names[t - 1]);
        pgw_cmp_type back;
        ck_assert(pgwi_cmp_type_from_name(&back, names[t - 1]) && back == (pgw_cmp_type)t);
    }
    pgw_cmp_type out = PGW_CMP_INT;
    ck_assert(!pgwi_cmp_type_from_name(&out, "Int"));
    ck_assert(!pgwi_cmp_type_from_name(&out, "float8"));
    ck_assert(!pgwi_cmp_type_from_name(&out, NULL));
    ck_assert(!pgwi_cmp_type_from_name(NULL, "int"));
    ck_assert_ptr_null(pgwi_cmp_type_name((pgw_cmp_type)0));
    ck_assert_ptr_null(pgwi_cmp_type_name((pgw_cmp_type)7));
    pgwi_typed v;
    ck_assert(!pgwi_typed_parse(&v, (pgw_cmp_type)0, "1", 1));
    ck_assert(!pgwi_typed_parse(&v, (pgw_cmp_type)99, "1", 1));
    ck_assert(!pgwi_typed_parse(NULL, PGW_CMP_INT, "1", 1));
    ck_assert(!pgwi_typed_parse(&v, PGW_CMP_INT, NULL, 1));
    /* A length shorter than the string: only that prefix is read. */
    ck_assert(pgwi_typed_parse(&v, PGW_CMP_INT, "12x", 2) && v.i == 12);
    ck_assert(pgwi_typed_parse(&v, PGW_CMP_DATE, "2024-01-01junk", 10) && v.i == 19723);
}
END_TEST

/* The coarse keys: known answers, and never against the order on sorted
 * values of every type (adjacent and all pairs). */
static unsigned key_of(pgw_cmp_type t, const char *s)
{
    pgwi_typed v = parsed(t, s);
    return pgwi_typed_key16(&v);
}

static void keys_sorted(pgw_cmp_type t, const char *const *vals, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            ck_assert_msg(cmp(t, vals[i], vals[j]) <= 0, "%s: %s sorts after %s",
                          pgwi_cmp_type_name(t), vals[i], vals[j]);
            ck_assert_msg(key_of(t, vals[i]) <= key_of(t, vals[j]),
                          "%s: key(%s) %u > key(%s) %u", pgwi_cmp_type_name(t), vals[i],
                          key_of(t, vals[i]), vals[j], key_of(t, vals[j]));
        }
}

START_TEST(coarse_keys)
{
    /* exponent 2, digits 42: 0x8000 + 1 + (2 + 60) * 90 + 32 */
    ck_assert_uint_eq(key_of(PGW_CMP_INT, "42"), 0x8000 + 5613);
    ck_assert_uint_eq(key_of(PGW_CMP_NUMERIC, "42.7"), 0x8000 + 5613);
    ck_assert_uint_eq(key_of(PGW_CMP_NUMERIC, "4.2e1"), 0x8000 + 5613);
    ck_assert_uint_eq(key_of(PGW_CMP_NUMERIC, "-42"), 0x8000 - 5613);
    ck_assert_uint_eq(key_of(PGW_CMP_INT, "5"), 0x8000 + 1 + 61 * 90 + 40);
    ck_assert_uint_eq(key_of(PGW_CMP_INT, "0"), 0x8000);
    ck_assert_uint_eq(key_of(PGW_CMP_NUMERIC, "-0.000"), 0x8000);
    ck_assert_uint_eq(key_of(PGW_CMP_NUMERIC, "1e100"), 0x8000 + 1 + 120 * 90 + 89);
    ck_assert_uint_eq(key_of(PGW_CMP_NUMERIC, "-Infinity"), 0);
    ck_assert_uint_eq(key_of(PGW_CMP_NUMERIC, "Infinity"), 0xFFFE);
    ck_assert_uint_eq(key_of(PGW_CMP_NUMERIC, "NaN"), 0xFFFF);
    ck_assert_uint_eq(key_of(PGW_CMP_DATE, "2000-01-01"), 0x8000);
    ck_assert_uint_eq(key_of(PGW_CMP_DATE, "2024-02-29"), 0x8000 + 19782 - 10957);
    ck_assert_uint_eq(key_of(PGW_CMP_TIMESTAMPTZ, "2024-03-01 05:29:58+05:30"),
                      0x8000 + 19782 - 10957);
    ck_assert_uint_eq(key_of(PGW_CMP_DATE, "0001-01-01 BC"), 1);
    ck_assert_uint_eq(key_of(PGW_CMP_DATE, "infinity"), 0xFFFE);
    ck_assert_uint_eq(key_of(PGW_CMP_TEXT, "ab"), 0x6162);
    ck_assert_uint_eq(key_of(PGW_CMP_TEXT, "a"), 0x6100);
    ck_assert_uint_eq(key_of(PGW_CMP_TEXT, ""), 0);
    static const char *const ints[] = {"-9223372036854775808", "-1000", "-999", "-101", "-100",
                                       "-99", "-10", "-9", "-1", "0", "1", "9", "10", "11",
                                       "99", "100", "101", "999", "1000", "9223372036854775807"};
    keys_sorted(PGW_CMP_INT, ints, sizeof ints / sizeof ints[0]);
    static const char *const nums[] = {"-Infinity", "-1e70", "-1e60", "-123.4", "-99.99",
                                       "-10", "-9.99", "-0.0001", "-1e-70", "0", "1e-70",
                                       "1e-61", "0.001", "0.0099", "0.01", "1", "1.005", "9.99",
                                       "10", "42", "42.99", "43", "99.999", "1e60", "1e61",
                                       "Infinity", "NaN"};
    keys_sorted(PGW_CMP_NUMERIC, nums, sizeof nums / sizeof nums[0]);
    static const char *const dlist[] = {"-infinity", "4713-01-01 BC", "1900-01-01",
                                        "1912-06-01", "1999-12-31", "2000-01-01",
                                        "2024-02-29", "2087-12-31", "2200-01-01", "infinity"};
    keys_sorted(PGW_CMP_DATE, dlist, sizeof dlist / sizeof dlist[0]);
    static const char *const tss[] = {"-infinity", "2024-03-01 05:29:59+05:30",
                                      "2024-02-29 23:59:59.999999+00", "2024-03-01 00:00:00+00",
                                      "2024-03-01 23:00:00-08", "infinity"};
    keys_sorted(PGW_CMP_TIMESTAMPTZ, tss, sizeof tss / sizeof tss[0]);
    static const char *const texts[] = {"", "\x01", "A", "A ", "AB", "B", "a", "ab",
                                        "a\xff\xff", "b", "\xc3\xa9", "\xff\xff\xff"};
    keys_sorted(PGW_CMP_TEXT, texts, sizeof texts / sizeof texts[0]);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("typed");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, integers);
    tcase_add_test(tc, numerics);
    tcase_add_test(tc, numeric_differential);
    tcase_add_test(tc, dates);
    tcase_add_test(tc, timestamps);
    tcase_add_test(tc, timestamptzs);
    tcase_add_test(tc, text_c_collation);
    tcase_add_test(tc, names_and_arguments);
    tcase_add_test(tc, coarse_keys);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return pgwt_main(suite());
}
