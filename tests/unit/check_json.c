/*
 * tests/unit/check_json.c — the strict JSON layer every codec uses.
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "json.h"
#include "pgw_test.h"

static json_t *parse_ok(const char *text)
{
    json_t *v = NULL;
    pgw_error err;
    ck_assert_int_eq(pgwi_json_parse(&v, text, strlen(text), 0, &err), PGW_OK);
    return v;
}

static void parse_fails(const char *text, size_t len, size_t max, const char *needle)
{
    json_t *v = (json_t *)0x1;
    pgw_error err;
    pgw_error_clear(&err);
    ck_assert_int_eq(pgwi_json_parse(&v, text, len, max, &err), PGW_EPARSE);
    ck_assert_ptr_eq(v, (json_t *)0x1);
    ck_assert_str_eq(err.path, "$");
    ck_assert_msg(strstr(err.message, needle) != NULL, "'%s' not in '%s'", needle,
                  err.message);
}

START_TEST(parse_rejects_bad_documents)
{
    parse_fails("{\"a\":1", 6, 0, "line 1");
    parse_fails("{\"a\":1,\"a\":2}", 13, 0, "duplicate");
    parse_fails("\"\xff\"", 3, 0, "unable to decode byte 0xff");
    parse_fails("\"a\\u0000b\"", 10, 0, "\\u0000");
    parse_fails("{} []", 5, 0, "end of file expected");
    parse_fails("{\"a\":\"0123456789\"}", 18, 10, "exceeds the limit of 10 bytes");
    /* Nothing, or a NUL byte: said so, not "near end of file". */
    parse_fails("", 0, 0, "invalid JSON: the text is empty");
    parse_fails(" \n\t\r ", 5, 0, "invalid JSON: the text is only white space");
    parse_fails("{\"a\":1}\0junk", 12, 0,
                "invalid JSON: the text contains a NUL byte (byte 8 of 12)");
    parse_fails("\0", 1, 0, "invalid JSON: the text contains a NUL byte (byte 1 of 1)");
    /* A NUL inside a string is found before jansson would name \u0000. */
    parse_fails("\"a\0b\"", 5, 0, "NUL byte (byte 3 of 5)");
}
END_TEST

START_TEST(paths_and_type_errors)
{
    char p[PGWI_JPATH_SIZE], q[PGWI_JPATH_SIZE];
    pgwi_jpath_key(p, "$", "columns");
    pgwi_jpath_index(q, p, 3);
    pgwi_jpath_key(p, q, "name");
    ck_assert_str_eq(p, "$.columns[3].name");
    pgwi_jpath_key(p, "$.old[0]", "Body Mass (g)");
    ck_assert_str_eq(p, "$.old[0][\"Body Mass (g)\"]");

    json_t *v = parse_ok("{\"name\": 7, \"list\": [true], \"extra\": 1}");
    pgw_error err;
    const json_t *m;
    const char *s;
    ck_assert_int_eq(pgwi_json_member(&m, v, "name", true, "$", &err), PGW_OK);
    ck_assert_int_eq(pgwi_json_string(&s, NULL, m, 0, "$.name", &err), PGW_EPARSE);
    ck_assert_str_eq(err.path, "$.name");
    ck_assert_str_eq(err.message, "$.name: expected a string, found an integer");
    ck_assert_int_eq(pgwi_json_member(&m, v, "missing", true, "$", &err), PGW_EPARSE);
    ck_assert_str_eq(err.message, "$: missing key \"missing\"");
    ck_assert_str_eq(err.path, "$.missing");
    ck_assert_int_eq(pgwi_json_member(&m, v, "missing", false, "$", &err), PGW_OK);
    ck_assert_ptr_null(m);
    static const char *const allowed[] = {"name", "list", NULL};
    ck_assert_int_eq(pgwi_json_only_keys(v, "$", allowed, &err), PGW_EPARSE);
    ck_assert_str_eq(err.message, "$: unknown key \"extra\"");
    ck_assert_str_eq(err.path, "$.extra");
    int64_t n;
    ck_assert_int_eq(pgwi_json_member(&m, v, "name", true, "$", &err), PGW_OK);
    ck_assert_int_eq(pgwi_json_int(&n, m, 0, 5, "$.name", &err), PGW_EPARSE);
    ck_assert_str_eq(err.message, "$.name: 7 is outside [0, 5]");
    ck_assert_int_eq(pgwi_json_int(&n, m, 0, 10, "$.name", &err), PGW_OK);
    ck_assert_int_eq(n, 7);
    double d;
    ck_assert_int_eq(pgwi_json_number(&d, m, 0, 10, "$.name", &err), PGW_OK);
    ck_assert(d == 7.0);
    json_decref(v);
}
END_TEST

START_TEST(canonical_dump_round_trips)
{
    const char *docs[] = {
        "{\"a\":0.1,\"b\":[1,2.5,-0.33333334],\"c\":\"é\",\"d\":null,\"e\":1e-5}",
        "{\"freq\":0.00291545,\"nd\":-0.95,\"corr\":1.0,\"big\":123456789012}",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        json_t *v = parse_ok(docs[i]);
        char *out;
        size_t len;
        ck_assert_int_eq(pgwi_json_dump(&out, &len, v, false, NULL), PGW_OK);
        ck_assert_str_eq(out, docs[i]);
        ck_assert_uint_eq(len, strlen(docs[i]));
        pgwi_free(out);
        json_decref(v);
    }
}
END_TEST

START_TEST(builders_report_enomem)
{
    pgwt_alloc_install();
    json_t *o = json_object();
    ck_assert_ptr_nonnull(o);
    pgwt_alloc_fail_at(1);
    pgw_error err;
    ck_assert_int_eq(pgwi_json_set(o, "k", json_string("v"), &err), PGW_ENOMEM);
    ck_assert(pgwt_alloc_failed());
    ck_assert_int_eq(pgwi_json_set(o, "k", json_string("v"), &err), PGW_OK);
    ck_assert_ptr_null(pgwi_json_real(0.0 / 0.0));
    json_decref(o);
    ck_assert_uint_eq(pgwt_alloc_get().live, 0);
    pgwt_alloc_uninstall();
}
END_TEST

/* jansson 2.14 can drop bytes of a string when an allocation fails during
 * parsing and still return a value. The layer must report PGW_ENOMEM for
 * every failed allocation, and otherwise return exactly the document. */
START_TEST(parse_never_returns_damaged_values)
{
    const char *doc = "{\"columns_truncated\":false,\"old\":[{\"status\":\"open\"}],"
                      "\"k\":\"a long string value that needs a buffer\"}";
    pgwt_alloc_install();
    size_t n;
    for (n = 1;; n++) {
        json_t *v = NULL;
        pgwt_alloc_fail_at(n);
        int rc = pgwi_json_parse(&v, doc, strlen(doc), 0, NULL);
        bool failed = pgwt_alloc_failed();
        pgwt_alloc_fail_at(0);
        if (failed) {
            ck_assert_msg(rc == PGW_ENOMEM, "allocation %zu: rc %d", n, rc);
            ck_assert_ptr_null(v);
            ck_assert_uint_eq(pgwt_alloc_get().live, 0);
            continue;
        }
        ck_assert_int_eq(rc, PGW_OK);
        char *out;
        ck_assert_int_eq(pgwi_json_dump(&out, NULL, v, false, NULL), PGW_OK);
        ck_assert_str_eq(out, doc);
        pgwi_free(out);
        json_decref(v);
        break;
    }
    ck_assert_uint_gt(n, 5);
    ck_assert_uint_eq(pgwt_alloc_get().live, 0);
    pgwt_alloc_uninstall();
}
END_TEST

/* Reads doc through rows and expects a parse error at path with msg. */
static void fields_fail(const char *doc, const pgwi_jfield *f, size_t n, unsigned how,
                        const char *path, const char *msg)
{
    json_t *v = parse_ok(doc);
    pgw_error err;
    pgw_error_clear(&err);
    ck_assert_int_eq(pgwi_json_read_fields(v, "$.o", f, n, how, &err), PGW_EPARSE);
    ck_assert_str_eq(err.path, path);
    ck_assert_str_eq(err.message, msg);
    json_decref(v);
}

START_TEST(read_fields_by_table)
{
    static const char *const modes[] = {"raw", "hashed", "none", NULL};
    json_t *v = parse_ok("{\"s\": \"x\", \"b\": true, \"i\": 7, \"d\": 0.5, \"e\": \"none\", "
                         "\"v\": [1], \"n\": null, \"z\": null}");
    const char *s = NULL, *absent = "kept";
    bool b = false, has_n = true, has_d = false;
    int64_t i = 0, n = 42;
    double d = 0;
    int e = -1;
    const json_t *val = NULL, *z = (const json_t *)0x1;
    const pgwi_jfield f[] = {
        PGWI_JF_STRING("s", &s, PGWI_JF_NONEMPTY),
        PGWI_JF_BOOL("b", &b, 0),
        PGWI_JF_INT("i", &i, 0, 10, 0),
        PGWI_JF_NUMBER_OR_NULL("d", &d, &has_d, 0.0, 1.0),
        PGWI_JF_ENUM("e", &e, modes, 0),
        PGWI_JF_VALUE("v", &val, 0),
        PGWI_JF_INT_OR_NULL("n", &n, &has_n, 0, 10),
        PGWI_JF_VALUE("z", &z, 0),
        PGWI_JF_STRING("absent", &absent, PGWI_JF_OPTIONAL),
    };
    pgw_error err;
    ck_assert_int_eq(pgwi_json_read_fields(v, "$", f, PGWI_NFIELDS(f), 0, &err), PGW_OK);
    ck_assert_str_eq(s, "x");
    ck_assert(b);
    ck_assert_int_eq(i, 7);
    ck_assert(d == 0.5 && has_d);
    ck_assert_int_eq(e, 2);
    ck_assert_ptr_eq(val, json_object_get(v, "v"));
    ck_assert_int_eq(n, 42); /* null leaves it, and says so */
    ck_assert(!has_n);
    ck_assert(json_is_null(z)); /* a VALUE row hands null over unless NULLABLE */
    ck_assert_str_eq(absent, "kept");
    /* SUBSET: the other keys are the caller's business. */
    ck_assert_int_eq(pgwi_json_read_fields(v, "$", f, 2, PGWI_JSON_SUBSET, &err), PGW_OK);
    ck_assert_int_eq(pgwi_json_read_fields(v, "$", f, 2, 0, &err), PGW_EPARSE);
    ck_assert_str_eq(err.message, "$: unknown key \"i\"");
    ck_assert_str_eq(err.path, "$.i");
    json_decref(v);

    /* Each failure reads as the single-value readers' one, at the member. */
    const pgwi_jfield g[] = {
        PGWI_JF_STRING("a", &s, PGWI_JF_NONEMPTY),
        PGWI_JF_ENUM("m", &e, modes, 0),
        PGWI_JF_STRING("opt", &s, PGWI_JF_OPTIONAL | PGWI_JF_NULLABLE),
    };
    size_t ng = PGWI_NFIELDS(g);
    fields_fail("[]", g, ng, 0, "$.o", "$.o: expected an object, found an array");
    fields_fail("{\"a\": \"x\", \"m\": \"raw\", \"q\": 1}", g, ng, 0, "$.o.q",
                "$.o: unknown key \"q\"");
    fields_fail("{\"m\": \"raw\"}", g, ng, 0, "$.o.a", "$.o: missing key \"a\"");
    fields_fail("{\"a\": 1, \"m\": \"raw\"}", g, ng, 0, "$.o.a",
                "$.o.a: expected a string, found an integer");
    fields_fail("{\"a\": \"\", \"m\": \"raw\"}", g, ng, 0, "$.o.a", "$.o.a: empty string");
    fields_fail("{\"a\": \"x\", \"m\": \"fancy\"}", g, ng, 0, "$.o.m",
                "$.o.m: \"fancy\" is not raw, hashed or none");
    fields_fail("{\"a\": \"x\", \"m\": \"raw\", \"opt\": 2}", g, ng, 0, "$.o.opt",
                "$.o.opt: expected a string, found an integer");
    /* Row order decides which of two faults is reported; KEYS_FIRST puts
     * every missing key first. */
    fields_fail("{\"a\": 1}", g, ng, 0, "$.o.a", "$.o.a: expected a string, found an integer");
    fields_fail("{\"a\": 1}", g, ng, PGWI_JSON_KEYS_FIRST, "$.o.m", "$.o: missing key \"m\"");

    static const char *const two[] = {"refresh", "skip", NULL};
    v = parse_ok("[\"skip\", \"later\", 3]");
    ck_assert_int_eq(pgwi_json_enum(&e, json_array_get(v, 0), two, "$[0]", &err), PGW_OK);
    ck_assert_int_eq(e, 1);
    ck_assert_int_eq(pgwi_json_enum(&e, json_array_get(v, 1), two, "$[1]", &err), PGW_EPARSE);
    ck_assert_str_eq(err.message, "$[1]: \"later\" is not refresh or skip");
    ck_assert_int_eq(pgwi_json_enum(&e, json_array_get(v, 2), two, "$[2]", &err), PGW_EPARSE);
    ck_assert_str_eq(err.message, "$[2]: expected a string, found an integer");
    json_decref(v);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("json");
    TCase *tc = tcase_create("json");
    tcase_add_test(tc, parse_rejects_bad_documents);
    tcase_add_test(tc, paths_and_type_errors);
    tcase_add_test(tc, canonical_dump_round_trips);
    tcase_add_test(tc, builders_report_enomem);
    tcase_add_test(tc, parse_never_returns_damaged_values);
    tcase_add_test(tc, read_fields_by_table);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return pgwt_main(suite());
}
