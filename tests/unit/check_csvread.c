/*
 * tests/unit/check_csvread.c — the ingest example's CSV reader
 * (examples/ingest/csvread.h): records, blank lines, BOM, line ends and
 * quoting as pandas.read_csv() reads them by default, pandas' missing-value
 * markers, and its names for empty and repeated header fields.
 *
 * Each text is read whole and rendered as one line per record,
 * "LINE:[field][field]...", or "LINE!why" for a malformed one, so that
 * every test compares exact records, fields and line numbers.
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csvread.h"
#include "pgw_test.h"

/* The records of data[0..len) as "LINE:[f1][f2]\n..." (a NUL in a field
 * shown as \0). Returns a static buffer. */
static const char *render_n(const char *data, size_t len)
{
    static char out[4096];
    size_t o = 0;
    csvread r;
    csvread_init(&r, data, len);
    char why[256];
    int k;
    while ((k = csvread_next(&r, why, sizeof why)) == 1) {
        o += (size_t)snprintf(out + o, sizeof out - o, "%zu:", r.start_line);
        for (size_t i = 0; i < r.fields; i++) {
            out[o++] = '[';
            const char *f = csvread_field(&r, i);
            for (size_t j = 0; j < csvread_field_len(&r, i); j++) {
                if (f[j] == '\0') {
                    out[o++] = '\\';
                    out[o++] = '0';
                } else {
                    out[o++] = f[j];
                }
            }
            out[o++] = ']';
        }
        out[o++] = '\n';
        ck_assert_uint_lt(o, sizeof out - 512);
    }
    if (k < 0)
        o += (size_t)snprintf(out + o, sizeof out - o, "%zu!%s\n", r.start_line, why);
    out[o] = '\0';
    csvread_free(&r);
    return out;
}

static const char *render(const char *data)
{
    return render_n(data, strlen(data));
}

START_TEST(plain_records)
{
    ck_assert_str_eq(render("a,b\n1,2\n3,4\n"), "1:[a][b]\n2:[1][2]\n3:[3][4]\n");
    ck_assert_str_eq(render(""), "");
    /* Nothing is trimmed. */
    ck_assert_str_eq(render(" a , b\n"), "1:[ a ][ b]\n");
}
END_TEST

/* skip_blank_lines=True: empty lines and lines of only spaces and tabs, before
 * the header, after it and between rows, at the end; their lines still count. */
START_TEST(blank_lines_are_skipped)
{
    ck_assert_str_eq(render("a,b\n\n1,2\n"), "1:[a][b]\n3:[1][2]\n");
    ck_assert_str_eq(render("\n\na,b\n1,2\n"), "3:[a][b]\n4:[1][2]\n");
    ck_assert_str_eq(render("a,b\n1,2\n \t \n\n3,4\n\n\n"), "1:[a][b]\n2:[1][2]\n5:[3][4]\n");
    ck_assert_str_eq(render("\n \n\t\n"), "");
    ck_assert_str_eq(render("a\n   "), "1:[a]\n"); /* spaces at the very end */
    /* A line of delimiters is a row of empty fields, not a blank line. */
    ck_assert_str_eq(render("a,b\n,\n"), "1:[a][b]\n2:[][]\n");
    /* Spaces before text are part of the field. */
    ck_assert_str_eq(render("a\n  x\n"), "1:[a]\n2:[  x]\n");
}
END_TEST

START_TEST(bom_at_the_start_is_dropped)
{
    ck_assert_str_eq(render("\xEF\xBB\xBF" "a,b\n1,2\n"), "1:[a][b]\n2:[1][2]\n");
    ck_assert_str_eq(render("\xEF\xBB\xBF\"a\",b\n"), "1:[a][b]\n");
    ck_assert_str_eq(render("\xEF\xBB\xBF"), "");
    /* Only at the start of the file: elsewhere it is data. */
    ck_assert_str_eq(render("a\n\xEF\xBB\xBFx\n"), "1:[a]\n2:[\xEF\xBB\xBFx]\n");
}
END_TEST

START_TEST(line_ends_crlf_cr_and_none)
{
    ck_assert_str_eq(render("a,b\r\n1,2\r\n\r\n3,4\r\n"), "1:[a][b]\n2:[1][2]\n4:[3][4]\n");
    ck_assert_str_eq(render("a,b\r1,2\r\r3,4\r"), "1:[a][b]\n2:[1][2]\n4:[3][4]\n");
    /* The last line needs no line end, and an empty last field is a field. */
    ck_assert_str_eq(render("a,b\n1,2"), "1:[a][b]\n2:[1][2]\n");
    ck_assert_str_eq(render("a,b\r\n1,"), "1:[a][b]\n2:[1][]\n");
    ck_assert_str_eq(render("a,b\n1,\n"), "1:[a][b]\n2:[1][]\n");
}
END_TEST

START_TEST(quoted_fields)
{
    /* Delimiters, doubled quotes and line ends inside quotes; the lines a
     * field spans count. */
    ck_assert_str_eq(render("a,b\n\"x,y\",\"he said \"\"hi\"\"\"\n\"multi\nline\",2\n3,4\n"),
                     "1:[a][b]\n2:[x,y][he said \"hi\"]\n3:[multi\nline][2]\n5:[3][4]\n");
    ck_assert_str_eq(render("\"a\r\nb\",c\r\nd,e"), "1:[a\r\nb][c]\n3:[d][e]\n");
    /* A blank line inside quotes is part of the value, not skipped. */
    ck_assert_str_eq(render("\"x\n\n  \ny\",1\n2,3\n"), "1:[x\n\n  \ny][1]\n5:[2][3]\n");
    ck_assert_str_eq(render("\"\",\"\"\"\"\n"), "1:[][\"]\n");
    ck_assert_str_eq(render("\"last\""), "1:[last]\n");
    ck_assert_str_eq(render("x,\"\"\r\n"), "1:[x][]\n");
    /* pandas' leniency: text after a closing quote is kept, a quote inside
     * an unquoted field is an ordinary character, and so is a quote after a
     * space. */
    ck_assert_str_eq(render("\"ab\"cd,e\n"), "1:[abcd][e]\n");
    ck_assert_str_eq(render("ab\"c,d\"\n"), "1:[ab\"c][d\"]\n");
    ck_assert_str_eq(render(" \"a\",b\n"), "1:[ \"a\"][b]\n");
}
END_TEST

START_TEST(unterminated_quote)
{
    ck_assert_str_eq(render("a,b\n1,\"open\n2,3\n"),
                     "1:[a][b]\n2!has an unterminated quote in column 2 (opened on line 2, it "
                     "runs to the end of the file)\n");
    ck_assert_str_eq(render("\"a,b\n1,2\n"),
                     "1!has an unterminated quote in column 1 (opened on line 1, it runs to "
                     "the end of the file)\n");
    /* A quote opened after a multi-line field names its own line. */
    ck_assert_str_eq(render("\"x\ny\",\"z"),
                     "1!has an unterminated quote in column 2 (opened on line 2, it runs to "
                     "the end of the file)\n");
}
END_TEST

START_TEST(nul_bytes_are_kept_with_lengths)
{
    ck_assert_str_eq(render_n("a\0b,c\n", 6), "1:[a\\0b][c]\n");
}
END_TEST

START_TEST(wide_record)
{
    /* More fields than the reader starts with room for. */
    char text[2000], want[4000];
    size_t t = 0, w = 0;
    w += (size_t)snprintf(want, sizeof want, "1:");
    for (int i = 0; i < 300; i++) {
        t += (size_t)snprintf(text + t, sizeof text - t, i ? ",%d" : "%d", i);
        w += (size_t)snprintf(want + w, sizeof want - w, "[%d]", i);
    }
    snprintf(want + w, sizeof want - w, "\n");
    ck_assert_str_eq(render(text), want);
}
END_TEST

START_TEST(missing_value_markers)
{
    static const char *const na[] = {"",     "#N/A",    "#N/A N/A", "#NA",  "-1.#IND",
                                     "-1.#QNAN", "-NaN", "-nan",   "1.#IND", "1.#QNAN",
                                     "<NA>", "N/A",     "NA",       "NULL", "NaN",
                                     "None", "n/a",     "nan",      "null"};
    for (size_t i = 0; i < sizeof na / sizeof na[0]; i++)
        ck_assert_msg(csvread_is_na(na[i], strlen(na[i])), "\"%s\" is missing", na[i]);
    /* Exact: other cases, spaces, prefixes and look-alikes are values. */
    static const char *const values[] = {"na",   "Na",   " NA",  "NA ", "nan ", "NAN",  "none",
                                         "NONE", "Null", "-",    ".",   "0",    "#N/A ", "N/A/",
                                         "inf",  "-inf", "NaT",  "NA\n", "\"NA\""};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        ck_assert_msg(!csvread_is_na(values[i], strlen(values[i])), "\"%s\" is a value",
                      values[i]);
    ck_assert(!csvread_is_na("NA\0x", 4));
}
END_TEST

/* Runs csvread_column_names on n fields and joins the names with '|'. */
static const char *names_of(const char *const *fields, size_t n)
{
    static char out[1024];
    char **names = csvread_column_names(fields, n);
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        o += (size_t)snprintf(out + o, sizeof out - o, "%s%s", i ? "|" : "", names[i]);
    csvread_names_free(names, n);
    return out;
}

#define NAMES(...)                                                                           \
    names_of((const char *const[]){__VA_ARGS__},                                             \
             sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

START_TEST(header_names_as_pandas_gives_them)
{
    ck_assert_str_eq(NAMES("a", "b"), "a|b");
    /* An empty name is "Unnamed: I", I its 0-based position. */
    ck_assert_str_eq(NAMES("", "a", "", "b", ""), "Unnamed: 0|a|Unnamed: 2|b|Unnamed: 4");
    /* Repeats: a, a.1, a.2, past names the header holds itself. */
    ck_assert_str_eq(NAMES("a", "a", "a"), "a|a.1|a.2");
    ck_assert_str_eq(NAMES("a", "a", "a.1"), "a|a.2|a.1");
    ck_assert_str_eq(NAMES("x", "x", "x.1", "x"), "x|x.2|x.1|x.3");
    ck_assert_str_eq(NAMES("a.1", "a", "a", "a"), "a.1|a|a.2|a.3");
    ck_assert_str_eq(NAMES("b", "a", "b", "a", "b"), "b|a|b.1|a.1|b.2");
    /* Names are compared exactly. */
    ck_assert_str_eq(NAMES("a", "A", "a "), "a|A|a ");
    /* The named columns keep their names; an unnamed one gives way. */
    ck_assert_str_eq(NAMES("", "Unnamed: 0"), "Unnamed: 0.1|Unnamed: 0");
    ck_assert_str_eq(NAMES("Unnamed: 1", ""), "Unnamed: 1|Unnamed: 1.1");
    ck_assert_str_eq(NAMES("", ""), "Unnamed: 0|Unnamed: 1");
    ck_assert_str_eq(NAMES(""), "Unnamed: 0");
    /* No fields, no names. */
    char **none = csvread_column_names(NULL, 0);
    ck_assert_ptr_nonnull(none);
    csvread_names_free(none, 0);
    csvread_names_free(NULL, 3);
}
END_TEST

/* Whatever the header, the names are distinct, and a name the header
 * gives once keeps its form. */
START_TEST(header_names_are_distinct)
{
    static const char *const pool[] = {"a", "a.1", "a.2", "a.1.1", "", "b", "Unnamed: 0",
                                       "Unnamed: 1", "Unnamed: 0.1"};
    unsigned seed = 17;
    for (int round = 0; round < 3000; round++) {
        const char *fields[10];
        size_t n = 1 + (seed = seed * 1103515245u + 12345u) % 10;
        for (size_t i = 0; i < n; i++)
            fields[i] = pool[(seed = seed * 1103515245u + 12345u) / 65536 % 9];
        char **names = csvread_column_names(fields, n);
        for (size_t i = 0; i < n; i++) {
            for (size_t k = 0; k < i; k++)
                ck_assert_msg(strcmp(names[i], names[k]) != 0, "round %d: \"%s\" twice", round,
                              names[i]);
            size_t seen = 0;
            for (size_t k = 0; k < n; k++)
                seen += strcmp(fields[k], fields[i]) == 0;
            if (fields[i][0] && seen == 1)
                ck_assert_str_eq(names[i], fields[i]);
        }
        csvread_names_free(names, n);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("csvread");
    TCase *tc = tcase_create("csvread");
    tcase_add_test(tc, plain_records);
    tcase_add_test(tc, blank_lines_are_skipped);
    tcase_add_test(tc, bom_at_the_start_is_dropped);
    tcase_add_test(tc, line_ends_crlf_cr_and_none);
    tcase_add_test(tc, quoted_fields);
    tcase_add_test(tc, unterminated_quote);
    tcase_add_test(tc, nul_bytes_are_kept_with_lengths);
    tcase_add_test(tc, wide_record);
    tcase_add_test(tc, missing_value_markers);
    tcase_add_test(tc, header_names_as_pandas_gives_them);
    tcase_add_test(tc, header_names_are_distinct);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return pgwt_main(suite());
}
