/*
 * tests/unit/check_inval_json.c — the JSON forms of dependencies, write sets
 * and verdicts, and the notification payload: exact canonical output, round
 * trips of every field, the 500-ID and 100-column caps and the byte budget,
 * multibyte identifiers, malformed inputs (exact message and path), the
 * payload fallbacks, and allocation failure at every step.
 * SPDX-License-Identifier: MIT
 */
#include "inval_helpers.h"

#define DEPS_EXAMPLE                                                                         \
    "{\"scope\":{\"project\":\"p1\",\"tenant\":\"acme\",\"database\":\"app\"},"              \
    "\"query\":\"tasks.list\",\"tables\":[{\"schema\":\"public\",\"table\":\"tasks\","       \
    "\"columns\":[\"id\",\"title\",\"status\",\"updated_at\"],\"filters\":[{\"column\":"     \
    "\"status\",\"op\":\"eq\",\"values\":[\"open\"]},{\"column\":\"due_at\",\"op\":"         \
    "\"opaque\"}],\"order_by\":[\"updated_at\"],\"limit\":20,\"offset\":0}],"                \
    "\"result_ids\":[\"17\",\"42\"]}"

#define WRITE_EXAMPLE                                                                        \
    "{\"scope\":{\"project\":\"p1\",\"tenant\":\"acme\",\"database\":\"app\"},"              \
    "\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\",\"ids\":[\"17\"],"          \
    "\"ids_truncated\":false,\"columns\":[\"status\",\"updated_at\"],"                       \
    "\"columns_truncated\":false,\"old\":[{\"status\":\"open\"}],\"new\":[{\"status\":"      \
    "\"closed\"}],\"pk_changed\":false}"

static pgw_deps *deps_json(const char *s)
{
    pgw_deps *d = NULL;
    pgw_error err;
    pgw_error_clear(&err);
    int rc = pgw_deps_from_json(&d, s, strlen(s), &err);
    ck_assert_msg(rc == PGW_OK, "deps_from_json: %s at %s", err.message, err.path);
    return d;
}

static pgw_write *write_json(const char *s)
{
    pgw_write *w = NULL;
    pgw_error err;
    pgw_error_clear(&err);
    int rc = pgw_write_from_json(&w, s, strlen(s), &err);
    ck_assert_msg(rc == PGW_OK, "write_from_json: %s at %s", err.message, err.path);
    return w;
}

/* Asserts the verdict of declaration d on the write set of JSON text w. */
static void decides_json(const pgw_deps *d, const char *w, bool refresh, pgw_reason reason)
{
    pgw_write *wr = write_json(w);
    IH_EXPECT(d, wr, refresh, reason);
    pgw_write_free(wr);
}

static void deps_round_trip(const char *in, const char *want)
{
    pgw_deps *d = deps_json(in);
    char *out;
    size_t len;
    ck_assert_int_eq(pgw_deps_to_json(&out, &len, d, NULL), PGW_OK);
    ck_assert_str_eq(out, want);
    ck_assert_uint_eq(len, strlen(want));
    pgw_deps *d2 = deps_json(out);
    char *out2;
    ck_assert_int_eq(pgw_deps_to_json(&out2, NULL, d2, NULL), PGW_OK);
    ck_assert_str_eq(out2, want);
    pgw_free(out);
    pgw_free(out2);
    pgw_deps_free(d);
    pgw_deps_free(d2);
}

static void write_round_trip(const char *in, const char *want)
{
    pgw_write *w = write_json(in);
    char *out;
    ck_assert_int_eq(pgw_write_to_json(&out, NULL, w, NULL), PGW_OK);
    ck_assert_str_eq(out, want);
    pgw_write *w2 = write_json(out);
    char *out2;
    ck_assert_int_eq(pgw_write_to_json(&out2, NULL, w2, NULL), PGW_OK);
    ck_assert_str_eq(out2, want);
    pgw_free(out);
    pgw_free(out2);
    pgw_write_free(w);
    pgw_write_free(w2);
}

START_TEST(deps_design_example)
{
    /* The DESIGN.md example, pretty-printed, gives the canonical form. */
    const char *pretty =
        "{\"scope\": {\"project\": \"p1\", \"tenant\": \"acme\", \"database\": \"app\"},\n"
        " \"query\": \"tasks.list\",\n"
        " \"tables\": [{\"schema\": \"public\", \"table\": \"tasks\",\n"
        "             \"columns\": [\"id\", \"title\", \"status\", \"updated_at\"],\n"
        "             \"filters\": [{\"column\": \"status\", \"op\": \"eq\", \"values\": "
        "[\"open\"]},\n"
        "                         {\"column\": \"due_at\", \"op\": \"opaque\"}],\n"
        "             \"order_by\": [\"updated_at\"], \"limit\": 20, \"offset\": 0}],\n"
        " \"result_ids\": [\"17\", \"42\"]}";
    deps_round_trip(pretty, DEPS_EXAMPLE);
    /* It decides like the builder-made declaration. */
    pgw_deps *d = deps_json(pretty);
    decides_json(d, WRITE_EXAMPLE, true, PGW_REASON_ROW_IN_RESULT);
    pgw_deps_free(d);
}
END_TEST

START_TEST(deps_every_field)
{
    /* defaults: columns "*", no filters, no order, limit null, offset 0,
     * result_ids null */
    deps_round_trip(
        "{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\"}]}",
        "{\"scope\":{\"project\":null,\"tenant\":null,\"database\":null},\"query\":\"q\","
        "\"tables\":[{\"schema\":\"s\",\"table\":\"t\",\"columns\":\"*\",\"filters\":[],"
        "\"order_by\":[],\"limit\":null,\"offset\":0}],\"result_ids\":null}");
    /* in, eq without values, an empty column list, an offset without limit,
     * composite and empty result IDs, a second table */
    const char *all =
        "{\"scope\":{\"project\":\"p\",\"tenant\":null,\"database\":\"d\"},\"query\":\"q\","
        "\"tables\":[{\"schema\":\"s\",\"table\":\"t\",\"columns\":[],\"filters\":["
        "{\"column\":\"a\",\"op\":\"in\",\"values\":[\"1\",\"2\"]},{\"column\":\"b\","
        "\"op\":\"eq\",\"values\":null},{\"column\":\"c\",\"op\":\"in\",\"values\":null}],"
        "\"order_by\":[\"a\",\"b\"],\"limit\":null,\"offset\":7},{\"schema\":\"s\","
        "\"table\":\"u\",\"columns\":\"*\",\"filters\":[],\"order_by\":[],\"limit\":0,"
        "\"offset\":0}],\"result_ids\":[[\"1\",\"x\"],\"\",[\"2\",\"y\",\"z\"]]}";
    deps_round_trip(all, all);
    /* a one-part array ID is the same as a string */
    deps_round_trip("{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":"
                    "\"t\"}],\"result_ids\":[[\"5\"]]}",
                    "{\"scope\":{\"project\":null,\"tenant\":null,\"database\":null},"
                    "\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\",\"columns\":"
                    "\"*\",\"filters\":[],\"order_by\":[],\"limit\":null,\"offset\":0}],"
                    "\"result_ids\":[\"5\"]}");
    const char *und = "{\"scope\":{\"project\":\"p\",\"tenant\":\"t\",\"database\":\"d\"},"
                      "\"query\":\"legacy\",\"undeclared\":true}";
    deps_round_trip(und, und);
    pgw_deps *d = deps_json(und);
    ck_assert_uint_eq(pgw_deps_n_tables(d), 0);
    ck_assert(!pgw_deps_time_dependent(d));
    pgw_deps_free(d);
}
END_TEST

START_TEST(deps_ranges)
{
    /* every comparison type, each bound kind; written in canonical order
     * (type, lower, lower_inclusive, upper, upper_inclusive), absent bounds
     * left out, null bounds read as absent */
    const char *in =
        "{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\","
        "\"filters\":[{\"upper_inclusive\":false,\"column\":\"a\",\"upper\":\"20\",\"op\":"
        "\"range\",\"type\":\"numeric\",\"lower\":\"1.50\",\"lower_inclusive\":true},"
        "{\"column\":\"b\",\"op\":\"range\",\"type\":\"int\",\"lower\":null,\"upper\":\"-3\","
        "\"upper_inclusive\":true},"
        "{\"column\":\"c\",\"op\":\"range\",\"type\":\"date\",\"lower\":\"-infinity\","
        "\"lower_inclusive\":false},"
        "{\"column\":\"d\",\"op\":\"range\",\"type\":\"timestamp\",\"lower\":"
        "\"2024-01-01T00:00:00.5\",\"lower_inclusive\":true},"
        "{\"column\":\"e\",\"op\":\"range\",\"type\":\"timestamptz\",\"upper\":"
        "\"2024-01-01 00:00:00+05:30\",\"upper_inclusive\":false},"
        "{\"column\":\"f\",\"op\":\"range\",\"type\":\"text\",\"lower\":\"\","
        "\"lower_inclusive\":false,\"upper\":\"\\u00e9\",\"upper_inclusive\":true}]}]}";
    const char *want =
        "{\"scope\":{\"project\":null,\"tenant\":null,\"database\":null},\"query\":\"q\","
        "\"tables\":[{\"schema\":\"s\",\"table\":\"t\",\"columns\":\"*\",\"filters\":["
        "{\"column\":\"a\",\"op\":\"range\",\"type\":\"numeric\",\"lower\":\"1.50\","
        "\"lower_inclusive\":true,\"upper\":\"20\",\"upper_inclusive\":false},"
        "{\"column\":\"b\",\"op\":\"range\",\"type\":\"int\",\"upper\":\"-3\","
        "\"upper_inclusive\":true},"
        "{\"column\":\"c\",\"op\":\"range\",\"type\":\"date\",\"lower\":\"-infinity\","
        "\"lower_inclusive\":false},"
        "{\"column\":\"d\",\"op\":\"range\",\"type\":\"timestamp\",\"lower\":"
        "\"2024-01-01T00:00:00.5\",\"lower_inclusive\":true},"
        "{\"column\":\"e\",\"op\":\"range\",\"type\":\"timestamptz\",\"upper\":"
        "\"2024-01-01 00:00:00+05:30\",\"upper_inclusive\":false},"
        "{\"column\":\"f\",\"op\":\"range\",\"type\":\"text\",\"lower\":\"\","
        "\"lower_inclusive\":false,\"upper\":\"\xc3\xa9\",\"upper_inclusive\":true}],"
        "\"order_by\":[],\"limit\":null,\"offset\":0}],\"result_ids\":null}";
    deps_round_trip(in, want);
    /* the decoded declaration decides with its ranges: 1.5 <= a < 20 */
    pgw_deps *d = deps_json(want);
    decides_json(d,
                 "{\"scope\":{},\"schema\":\"s\",\"table\":\"t\",\"op\":\"insert\","
                 "\"ids\":[\"1\"],\"ids_truncated\":false,\"columns\":null,"
                 "\"columns_truncated\":false,\"new\":[{\"a\":\"1.49\"}],\"pk_changed\":false}",
                 false, PGW_REASON_VALUES_DISJOINT);
    pgw_deps_free(d);
}
END_TEST

START_TEST(deps_sort_keys_and_bounds)
{
    /* typed sort keys as objects (nulls_first defaults to PostgreSQL's:
     * FIRST for DESC, LAST for ASC), untyped ASC NULLS LAST ones as names;
     * window bounds after result_ids, before time_dependent */
    const char *in =
        "{\"scope\":{},\"query\":\"q\",\"time_dependent\":true,\"window_bounds\":{\"full\":true,"
        "\"first\":[null,\"1\"],\"last\":[\"2024-01-01\",\"2\"]},\"tables\":[{\"schema\":\"s\","
        "\"table\":\"t\",\"order_by\":[{\"column\":\"due\",\"type\":\"date\",\"descending\":"
        "true},{\"column\":\"id\",\"type\":\"int\",\"nulls_first\":true}],\"limit\":3}],"
        "\"result_ids\":[\"1\"]}";
    const char *want =
        "{\"scope\":{\"project\":null,\"tenant\":null,\"database\":null},\"query\":\"q\","
        "\"tables\":[{\"schema\":\"s\",\"table\":\"t\",\"columns\":\"*\",\"filters\":[],"
        "\"order_by\":[{\"column\":\"due\",\"type\":\"date\",\"descending\":true,"
        "\"nulls_first\":true},{\"column\":\"id\",\"type\":\"int\",\"descending\":false,"
        "\"nulls_first\":true}],\"limit\":3,\"offset\":0}],\"result_ids\":[\"1\"],"
        "\"window_bounds\":{\"first\":[null,\"1\"],\"last\":[\"2024-01-01\",\"2\"],"
        "\"full\":true},\"time_dependent\":true}";
    deps_round_trip(in, want);
    /* a key without type, ASC NULLS LAST, is written as its name; null bounds
     * read as none */
    deps_round_trip(
        "{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\","
        "\"order_by\":[{\"column\":\"a\",\"type\":null,\"descending\":false},"
        "{\"column\":\"b\",\"descending\":true,\"nulls_first\":false}]}],"
        "\"window_bounds\":null}",
        "{\"scope\":{\"project\":null,\"tenant\":null,\"database\":null},\"query\":\"q\","
        "\"tables\":[{\"schema\":\"s\",\"table\":\"t\",\"columns\":\"*\",\"filters\":[],"
        "\"order_by\":[\"a\",{\"column\":\"b\",\"type\":null,\"descending\":true,"
        "\"nulls_first\":false}],\"limit\":null,\"offset\":0}],\"result_ids\":null}");
    /* a window with no row: first and last null */
    const char *empty =
        "{\"scope\":{\"project\":null,\"tenant\":null,\"database\":null},\"query\":\"q\","
        "\"tables\":[{\"schema\":\"s\",\"table\":\"t\",\"columns\":\"*\",\"filters\":[],"
        "\"order_by\":[],\"limit\":3,\"offset\":6}],\"result_ids\":null,"
        "\"window_bounds\":{\"first\":null,\"last\":null,\"full\":false}}";
    deps_round_trip(empty, empty);
    pgw_deps *de = deps_json(empty);
    decides_json(de, "{\"scope\":{},\"schema\":\"s\",\"table\":\"t\",\"op\":\"delete\"}", false,
                 PGW_REASON_WINDOW_EMPTY);
    pgw_deps_free(de);
    /* the decoded bounds decide: a deleted row beyond (2024-01-01, 2) in
     * DESC due order is an earlier date */
    pgw_deps *d = deps_json(want);
    pgw_write *w = write_json(
        "{\"scope\":{},\"schema\":\"s\",\"table\":\"t\",\"op\":\"delete\",\"ids\":[\"7\"],"
        "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
        "\"old\":[{\"due\":\"2023-12-31\",\"id\":\"7\"}],\"pk_changed\":false}");
    IH_EXPECT(d, w, false, PGW_REASON_ROWS_DISJOINT); /* 7 is not in the result */
    pgw_deps_clear_result_ids(d);
    IH_EXPECT(d, w, false, PGW_REASON_BEYOND_WINDOW);
    pgw_write_free(w);
    pgw_deps_free(d);
}
END_TEST

/* The second example of docs/wire.md ("Dependencies"), pretty-printed as
 * there, decides as its text says. */
START_TEST(deps_wire_range_example)
{
    const char *doc =
        "{\"scope\": {\"project\": \"p1\", \"tenant\": \"acme\", \"database\": \"app\"},\n"
        " \"query\": \"tasks.due\",\n"
        " \"tables\": [{\"schema\": \"public\", \"table\": \"tasks\",\n"
        "             \"columns\": [\"id\", \"title\", \"due_at\"],\n"
        "             \"filters\": [{\"column\": \"status\", \"op\": \"eq\", \"values\": "
        "[\"open\"]},\n"
        "                         {\"column\": \"due_at\", \"op\": \"range\", \"type\": \"date\",\n"
        "                          \"lower\": \"2026-01-01\", \"lower_inclusive\": true,\n"
        "                          \"upper\": \"2027-01-01\", \"upper_inclusive\": false}],\n"
        "             \"order_by\": [{\"column\": \"due_at\", \"type\": \"date\", "
        "\"descending\": true,\n"
        "                           \"nulls_first\": true},\n"
        "                          {\"column\": \"id\", \"type\": \"int\", \"descending\": false,\n"
        "                           \"nulls_first\": false}],\n"
        "             \"limit\": 20, \"offset\": 0}],\n"
        " \"result\": \"list\",\n"
        " \"result_ids\": null,\n"
        " \"window_bounds\": {\"first\": [\"2026-11-30\", \"88\"], \"last\": [\"2026-10-02\", "
        "\"17\"],\n"
        "                   \"full\": true}}";
    pgw_deps *d = deps_json(doc);
    static const struct {
        const char *due;
        bool refresh;
        pgw_reason reason;
    } cases[] = {
        {"2026-03-01", false, PGW_REASON_BEYOND_WINDOW},
        {"2025-06-30", false, PGW_REASON_VALUES_DISJOINT},
        {"2026-10-15", true, PGW_REASON_INSERT_MAY_ENTER},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char w[512];
        snprintf(w, sizeof w,
                 "{\"scope\":{\"project\":\"p1\",\"tenant\":\"acme\",\"database\":\"app\"},"
                 "\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\",\"ids\":[\"99\"],"
                 "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                 "\"new\":[{\"id\":\"99\",\"due_at\":\"%s\"}],\"pk_changed\":false}",
                 cases[i].due);
        decides_json(d, w, cases[i].refresh, cases[i].reason);
    }
    pgw_deps_free(d);
}
END_TEST

/* "time_dependent": written last, only when true; false reads as absent. */
START_TEST(deps_time_dependent)
{
    const char *timed =
        "{\"scope\":{\"project\":null,\"tenant\":null,\"database\":null},\"query\":\"q\","
        "\"tables\":[{\"schema\":\"s\",\"table\":\"t\",\"columns\":\"*\",\"filters\":[],"
        "\"order_by\":[],\"limit\":null,\"offset\":0}],\"result_ids\":[\"1\"],"
        "\"time_dependent\":true}";
    deps_round_trip(timed, timed);
    /* any position in, the canonical position out */
    deps_round_trip("{\"time_dependent\":true,\"scope\":{},\"query\":\"q\",\"tables\":"
                    "[{\"schema\":\"s\",\"table\":\"t\"}],\"result_ids\":[\"1\"]}",
                    timed);
    deps_round_trip("{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":"
                    "\"t\"}],\"time_dependent\":false}",
                    "{\"scope\":{\"project\":null,\"tenant\":null,\"database\":null},"
                    "\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\",\"columns\":"
                    "\"*\",\"filters\":[],\"order_by\":[],\"limit\":null,\"offset\":0}],"
                    "\"result_ids\":null}");
    const char *und = "{\"scope\":{\"project\":\"p\",\"tenant\":\"t\",\"database\":\"d\"},"
                      "\"query\":\"legacy\",\"undeclared\":true,\"time_dependent\":true}";
    deps_round_trip(und, und);
    pgw_deps *d = deps_json(timed);
    ck_assert(pgw_deps_time_dependent(d));
    /* the builder's flag is the same */
    pgw_error err;
    ck_assert_int_eq(pgw_deps_set_time_dependent(d, false, &err), PGW_OK);
    ck_assert(!pgw_deps_time_dependent(d));
    char *out;
    ck_assert_int_eq(pgw_deps_to_json(&out, NULL, d, NULL), PGW_OK);
    ck_assert_ptr_null(strstr(out, "time_dependent"));
    pgw_free(out);
    ck_assert_int_eq(pgw_deps_set_time_dependent(d, true, NULL), PGW_OK);
    ck_assert_int_eq(pgw_deps_to_json(&out, NULL, d, NULL), PGW_OK);
    ck_assert_str_eq(out, timed);
    pgw_free(out);
    ck_assert_int_eq(pgw_deps_set_time_dependent(NULL, true, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_set_time_dependent: deps is NULL");
    ck_assert(!pgw_deps_time_dependent(NULL));
    /* pgw_decide() ignores it: a write is decided as without it */
    pgw_deps *plain = deps_json(DEPS_EXAMPLE);
    pgw_deps *clock = deps_json(DEPS_EXAMPLE);
    ck_assert_int_eq(pgw_deps_set_time_dependent(clock, true, NULL), PGW_OK);
    pgw_write *w = write_json(WRITE_EXAMPLE);
    IH_EXPECT(plain, w, true, PGW_REASON_ROW_IN_RESULT);
    IH_EXPECT(clock, w, true, PGW_REASON_ROW_IN_RESULT);
    pgw_write *other = ih_write(&IH_GLOBEX, "tasks", PGW_OP_INSERT);
    IH_EXPECT(clock, other, false, PGW_REASON_SCOPE_DISJOINT);
    pgw_write_free(other);
    pgw_write_free(w);
    pgw_deps_free(plain);
    pgw_deps_free(clock);
    pgw_deps_free(d);
}
END_TEST

START_TEST(write_every_field)
{
    write_round_trip(WRITE_EXAMPLE, WRITE_EXAMPLE);
    /* defaults */
    write_round_trip(
        "{\"scope\":{},\"schema\":\"s\",\"table\":\"t\",\"op\":\"delete\"}",
        "{\"scope\":{\"project\":null,\"tenant\":null,\"database\":null},\"schema\":\"s\","
        "\"table\":\"t\",\"op\":\"delete\",\"ids\":null,\"ids_truncated\":false,\"columns\":"
        "null,\"columns_truncated\":false,\"pk_changed\":false}");
    /* key change with absent rows, SQL NULL, composite keys, truncated lists */
    const char *pk =
        "{\"scope\":{\"project\":\"p\",\"tenant\":\"t\",\"database\":\"d\"},\"schema\":\"s\","
        "\"table\":\"t\",\"op\":\"update\",\"ids\":[[\"1\",\"a\"],[\"2\",\"a\"]],"
        "\"ids_truncated\":true,\"columns\":[\"id\",\"x\"],\"columns_truncated\":true,"
        "\"old\":[{\"x\":null,\"y\":\"\"},null],\"new\":[null,{\"x\":\"5\"}],"
        "\"pk_changed\":true}";
    write_round_trip(pk, pk);
    const char *ins =
        "{\"scope\":{\"project\":\"p\",\"tenant\":\"t\",\"database\":\"d\"},\"schema\":\"s\","
        "\"table\":\"t\",\"op\":\"insert\",\"ids\":[],\"ids_truncated\":false,\"columns\":[],"
        "\"columns_truncated\":false,\"new\":[],\"pk_changed\":false}";
    write_round_trip(ins, ins);
    const char *tr = "{\"scope\":{\"project\":\"p\",\"tenant\":\"t\",\"database\":\"d\"},"
                     "\"schema\":\"s\",\"table\":\"t\",\"op\":\"truncate\",\"ids\":null,"
                     "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                     "\"pk_changed\":false}";
    write_round_trip(tr, tr);
    const char *unk = "{\"scope\":{\"project\":\"p\",\"tenant\":\"t\",\"database\":\"d\"},"
                      "\"schema\":\"s\",\"table\":\"t\",\"op\":\"unknown\",\"ids\":null,"
                      "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                      "\"pk_changed\":false}";
    write_round_trip(unk, unk);
    /* A ddl: schema, table and op, nothing else (explicit nulls and false
     * flags are accepted and left out). */
    const char *ddl = "{\"scope\":{\"project\":\"p\",\"tenant\":\"t\",\"database\":\"d\"},"
                      "\"schema\":\"s\",\"table\":\"t\",\"op\":\"ddl\"}";
    write_round_trip(ddl, ddl);
    write_round_trip("{\"scope\":{\"project\":\"p\",\"tenant\":\"t\",\"database\":\"d\"},"
                     "\"schema\":\"s\",\"table\":\"t\",\"op\":\"ddl\",\"ids\":null,"
                     "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                     "\"pk_changed\":false}",
                     ddl);
    pgw_write *wd = write_json(ddl);
    ck_assert_int_eq(pgw_write_op(wd), PGW_OP_DDL);
    ck_assert_str_eq(pgw_write_table(wd), "t");
    ck_assert(!pgw_write_ids_known(wd));
    pgw_write_free(wd);
    const char *reset = "{\"scope\":{\"project\":\"p\",\"tenant\":\"t\",\"database\":null},"
                        "\"op\":\"reset\"}";
    write_round_trip(reset, reset);
    pgw_write *w = write_json(reset);
    ck_assert_int_eq(pgw_write_op(w), PGW_OP_RESET);
    ck_assert_ptr_null(pgw_write_table(w));
    pgw_write_free(w);
}
END_TEST

START_TEST(verdicts)
{
    for (int r = 0; r < PGW_REASON_COUNT; r++) {
        pgw_verdict v = {pgw_reason_refreshes((pgw_reason)r), (pgw_reason)r}, back;
        char *out;
        ck_assert_int_eq(pgw_verdict_to_json(&out, NULL, &v, NULL), PGW_OK);
        char want[128];
        snprintf(want, sizeof want, "{\"verdict\":\"%s\",\"reason\":\"%s\"}",
                 v.refresh ? "refresh" : "skip", pgw_reason_name(v.reason));
        ck_assert_str_eq(out, want);
        ck_assert_int_eq(pgw_verdict_from_json(&back, out, strlen(out), NULL), PGW_OK);
        ck_assert(back.refresh == v.refresh && back.reason == v.reason);
        pgw_free(out);
    }
    pgw_error err;
    pgw_verdict v = {true, PGW_REASON_TRUNCATE};
    /* The encoder refuses what the decoder would: a reason with the other
     * verdict. */
    char *enc = NULL;
    pgw_verdict odd = {false, PGW_REASON_TRUNCATE};
    ck_assert_int_eq(pgw_verdict_to_json(&enc, NULL, &odd, &err), PGW_EINVAL);
    ck_assert_ptr_null(enc);
    ck_assert_str_eq(err.message, "verdict_to_json: TRUNCATE implies refresh, not skip");
    const char *bad = "{\"verdict\":\"skip\",\"reason\":\"FILTER_COLUMN_CHANGED\"}";
    ck_assert_int_eq(pgw_verdict_from_json(&v, bad, strlen(bad), &err), PGW_EPARSE);
    ck_assert_str_eq(err.message, "$.reason: FILTER_COLUMN_CHANGED implies refresh, not skip");
    ck_assert_str_eq(err.path, "$.reason");
    bad = "{\"verdict\":\"refresh\",\"reason\":\"NOPE\"}";
    ck_assert_int_eq(pgw_verdict_from_json(&v, bad, strlen(bad), &err), PGW_EPARSE);
    ck_assert_str_eq(err.message, "$.reason: unknown reason \"NOPE\"");
    bad = "{\"verdict\":\"maybe\",\"reason\":\"TRUNCATE\"}";
    ck_assert_int_eq(pgw_verdict_from_json(&v, bad, strlen(bad), &err), PGW_EPARSE);
    bad = "{\"verdict\":\"refresh\",\"reason\":\"TRUNCATE\",\"why\":1}";
    ck_assert_int_eq(pgw_verdict_from_json(&v, bad, strlen(bad), &err), PGW_EPARSE);
    ck_assert_str_eq(err.message, "$: unknown key \"why\"");
    ck_assert(v.refresh && v.reason == PGW_REASON_TRUNCATE); /* untouched */
    pgw_verdict out_of_range = {true, (pgw_reason)77};
    char *out = NULL;
    ck_assert_int_eq(pgw_verdict_to_json(&out, NULL, &out_of_range, &err), PGW_EINVAL);
    ck_assert_ptr_null(out);
}
END_TEST

typedef struct bad_case {
    const char *json, *path, *message;
} bad_case;

static const bad_case bad_deps[] = {
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\","
     "\"filters\":[{\"column\":\"a\",\"op\":\"range\",\"type\":\"int\",\"values\":null,"
     "\"lower\":\"1\",\"lower_inclusive\":true}]}]}",
     "$.tables[0].filters[0].values",
     "$.tables[0].filters[0].values: a range has \"lower\" and \"upper\", not values"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\",\"limit\":3}],"
     "\"window_bounds\":{\"first\":null,\"last\":null,\"full\":true}}",
     "$.window_bounds.full", "$.window_bounds: a window with no row is not full"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\",\"order_by\":[{\"column\":\"due\",\"type\":\"date\"},{\"column\":\"id\",\"type\":\"int\"}],\"limit\":3}],"
     "\"window_bounds\":{\"first\":[null,\"1\"],\"last\":[\"2024-01-01\",\"2\"]}}",
     "$.window_bounds.full", "$.window_bounds: missing key \"full\""},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\",\"order_by\":[{\"column\":\"due\",\"type\":\"date\"},{\"column\":\"id\",\"type\":\"int\"}],\"limit\":3}],"
     "\"window_bounds\":{\"first\":[null,5],\"last\":[\"2024-01-01\",\"2\"],\"full\":false}}",
     "$.window_bounds.first[1]", "$.window_bounds.first[1]: expected a string, found an integer"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\",\"order_by\":[{\"column\":\"due\",\"type\":\"date\"},{\"column\":\"id\",\"type\":\"int\"}],\"limit\":3}],"
     "\"window_bounds\":{\"first\":[null],\"last\":[\"2024-01-01\",\"2\"],\"full\":false}}",
     "$.window_bounds.last", "$.window_bounds.last: 2 values, \"first\" has 1"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\",\"order_by\":[{\"column\":\"due\",\"type\":\"date\"},{\"column\":\"id\",\"type\":\"int\"}],\"limit\":3}],"
     "\"window_bounds\":{\"first\":[null,\"x\"],\"last\":[\"2024-01-01\",\"2\"],\"full\":false}}",
     "$.window_bounds", "$.window_bounds: first[1] \"x\" (sort key id) does not parse as int"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\",\"order_by\":[{\"column\":\"due\",\"type\":\"date\"},{\"column\":\"id\",\"type\":\"int\"}],\"limit\":3}],"
     "\"window_bounds\":{\"first\":[\"1\"],\"last\":[\"2\"],\"full\":false}}",
     "$.window_bounds", "$.window_bounds: 1 values per row for 2 sort keys"},
    {"{\"scope\":{},\"query\":\"q\",\"undeclared\":true,\"window_bounds\":{\"first\":[],"
     "\"last\":[],\"full\":true}}",
     "$.window_bounds", "$: an undeclared subscription has no \"window_bounds\""},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\","
     "\"order_by\":[{\"column\":\"a\",\"type\":\"real\"}]}]}",
     "$.tables[0].order_by[0].type",
     "$.tables[0].order_by[0].type: \"real\" is not int, numeric, date, timestamp, timestamptz "
     "or text"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\","
     "\"order_by\":[{\"col\":\"a\"}]}]}",
     "$.tables[0].order_by[0].col", "$.tables[0].order_by[0]: unknown key \"col\""},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\","
     "\"filters\":[{\"column\":\"a\",\"op\":\"range\",\"lower\":\"1\",\"lower_inclusive\":true}]}]}",
     "$.tables[0].filters[0].type", "$.tables[0].filters[0]: missing key \"type\""},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\","
     "\"filters\":[{\"column\":\"a\",\"op\":\"range\",\"type\":\"int\",\"values\":[\"1\"]}]}]}",
     "$.tables[0].filters[0].values", "$.tables[0].filters[0].values: a range has \"lower\" and \"upper\", not values"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\","
     "\"filters\":[{\"column\":\"a\",\"op\":\"range\",\"type\":\"int\",\"lower\":\"1\"}]}]}",
     "$.tables[0].filters[0].lower_inclusive", "$.tables[0].filters[0]: missing key \"lower_inclusive\" (a bound says whether it is included)"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\","
     "\"filters\":[{\"column\":\"a\",\"op\":\"range\",\"type\":\"int\",\"upper_inclusive\":false}]}]}",
     "$.tables[0].filters[0].upper_inclusive", "$.tables[0].filters[0]: \"upper_inclusive\" without \"upper\""},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\","
     "\"filters\":[{\"column\":\"a\",\"op\":\"range\",\"type\":\"int\",\"lower\":\"x\",\"lower_inclusive\":true}]}]}",
     "$.tables[0].filters[0]", "$.tables[0].filters[0]: lower bound \"x\" does not parse as int"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\","
     "\"filters\":[{\"column\":\"a\",\"op\":\"eq\",\"type\":\"int\"}]}]}",
     "$.tables[0].filters[0].type", "$.tables[0].filters[0].type: only a range has \"type\""},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\","
     "\"filters\":[{\"column\":\"a\",\"op\":\"in\",\"values\":[\"1\"],\"upper\":\"2\"}]}]}",
     "$.tables[0].filters[0].upper", "$.tables[0].filters[0].upper: only a range has \"upper\""},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\","
     "\"filters\":[{\"column\":\"a\",\"op\":\"range\",\"type\":\"float8\",\"lower\":\"1\",\"lower_inclusive\":true}]}]}",
     "$.tables[0].filters[0].type", "$.tables[0].filters[0].type: \"float8\" is not int, numeric, date, timestamp, timestamptz or text"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\","
     "\"filters\":[{\"column\":\"a\",\"op\":\"range\",\"type\":\"int\",\"lower\":null,\"upper\":null}]}]}",
     "$.tables[0].filters[0]", "$.tables[0].filters[0]: no bound on a (declare the predicate opaque)"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\","
     "\"filters\":[{\"column\":\"a\",\"op\":\"range\",\"type\":\"date\",\"lower\":5,\"lower_inclusive\":true}]}]}",
     "$.tables[0].filters[0].lower", "$.tables[0].filters[0].lower: expected a string, found an integer"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[],\"x\":1}", "$.x", "$: unknown key \"x\""},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[]}", "$.tables",
     "$.tables: empty (a subscription without tables is \"undeclared\": true)"},
    {"{\"scope\":{},\"query\":\"q\"}", "$.tables",
     "$: missing key \"tables\" (or \"undeclared\": true)"},
    {"{\"scope\":{},\"query\":\"q\",\"undeclared\":true,\"result_ids\":[]}", "$.result_ids",
     "$: an undeclared subscription has no \"result_ids\""},
    {"{\"scope\":{\"tenant\":5},\"query\":\"q\",\"undeclared\":true}", "$.scope.tenant",
     "$.scope.tenant: expected a string, found an integer"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\","
     "\"filters\":[{\"column\":\"a\",\"op\":\"eq\",\"values\":[\"1\",\"2\"]}]}]}",
     "$.tables[0].filters[0]", "$.tables[0].filters[0]: eq takes exactly 1 value, not 2 (use in)"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\","
     "\"filters\":[{\"column\":\"a\",\"op\":\"in\",\"values\":[\"1\",null]}]}]}",
     "$.tables[0].filters[0].values[1]",
     "$.tables[0].filters[0].values[1]: null is not a value (SQL = never matches NULL; "
     "declare IS NULL as opaque)"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\","
     "\"filters\":[{\"column\":\"a\",\"op\":\"like\"}]}]}",
     "$.tables[0].filters[0].op", "$.tables[0].filters[0].op: \"like\" is not eq, in, opaque or range"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\","
     "\"filters\":[{\"column\":\"a\",\"op\":\"opaque\",\"values\":[\"1\"]}]}]}",
     "$.tables[0].filters[0]", "$.tables[0].filters[0]: an opaque filter has no values"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\","
     "\"columns\":[\"a\",\"a\"]}]}",
     "$.tables[0].columns", "$.tables[0].columns: columns[1] \"a\" appears twice"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\","
     "\"columns\":\"all\"}]}",
     "$.tables[0].columns", "$.tables[0].columns: expected \"*\" or an array of column names"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\","
     "\"limit\":-1}]}",
     "$.tables[0].limit", "$.tables[0].limit: -1 is outside [0, 9223372036854775807]"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\"},"
     "{\"schema\":\"s\",\"table\":\"t\"}]}",
     "$.tables[1]", "$.tables[1]: table \"s\".\"t\" is already declared"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"\",\"table\":\"t\"}]}",
     "$.tables[0]", "$.tables[0]: schema is empty"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\"}],"
     "\"result_ids\":[[]]}",
     "$.result_ids[0]", "$.result_ids[0]: a row ID has 1..32 parts, not 0"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\"}],"
     "\"result_ids\":[7]}",
     "$.result_ids[0]", "$.result_ids[0]: a row ID is a string or an array of strings"},
    {"[1]", "$", "$: expected an object, found an array"},
    {"{\"scope\":{},\"query\":\"q\",\"tables\":[{\"schema\":\"s\",\"table\":\"t\"}],"
     "\"time_dependent\":1}",
     "$.time_dependent", "$.time_dependent: expected a boolean, found an integer"},
    {"{\"scope\":{},\"query\":\"q\",\"undeclared\":true,\"time_dependent\":null}",
     "$.time_dependent", "$.time_dependent: expected a boolean, found null"},
    {"{\"scope\":{},\"query\":\"q\",\"undeclared\":true,\"undeclared\":true}", "$",
     NULL /* jansson's duplicate-key message */},
};

static const bad_case bad_writes[] = {
    /* What the JSON layer says of a byte order mark and of \u0000 (not
     * jansson's own words, which name a flag the caller cannot set). */
    {"\xEF\xBB\xBF{\"scope\":{},\"op\":\"reset\"}", "$",
     "invalid JSON: the text starts with a UTF-8 byte order mark (RFC 8259, section 8.1: "
     "JSON text has none; remove it)"},
    {"{\"scope\":{},\"schema\":\"s\\u0000\",\"table\":\"t\",\"op\":\"insert\"}", "$",
     "invalid JSON at line 1 column 30: \\u0000 (NUL) is not allowed in strings"},
    {"{\"scope\":{},\"schema\":\"s\",\"table\":\"t\",\"op\":\"merge\"}", "$.op",
     "$.op: \"merge\" is not insert, update, delete, truncate, ddl, unknown or reset"},
    {"{\"scope\":{},\"schema\":\"s\",\"table\":\"t\",\"op\":\"truncate\",\"ids\":[\"1\"]}",
     "$.ids", "$: a truncate has no \"ids\""},
    {"{\"scope\":{},\"schema\":\"s\",\"table\":\"t\",\"op\":\"ddl\",\"ids\":[]}", "$.ids",
     "$: a ddl has no \"ids\""},
    {"{\"scope\":{},\"schema\":\"s\",\"table\":\"t\",\"op\":\"ddl\",\"columns\":[\"a\"]}",
     "$.columns", "$: a ddl has no \"columns\""},
    {"{\"scope\":{},\"schema\":\"s\",\"table\":\"t\",\"op\":\"ddl\",\"old\":[]}", "$.old",
     "$: a ddl has no \"old\""},
    {"{\"scope\":{},\"schema\":\"s\",\"table\":\"t\",\"op\":\"ddl\",\"new\":null}", "$.new",
     "$: a ddl has no \"new\""},
    {"{\"scope\":{},\"schema\":\"s\",\"table\":\"t\",\"op\":\"ddl\",\"ids_truncated\":true}",
     "$.ids_truncated", "$: a ddl has no \"ids_truncated\""},
    {"{\"scope\":{},\"schema\":\"s\",\"table\":\"t\",\"op\":\"ddl\",\"pk_changed\":true}",
     "$.pk_changed", "$: a ddl has no \"pk_changed\""},
    {"{\"scope\":{},\"op\":\"ddl\"}", "$.schema", "$: missing key \"schema\""},
    {"{\"scope\":{},\"op\":\"reset\",\"table\":\"t\"}", "$.table",
     "$: a reset has no \"table\""},
    {"{\"scope\":{},\"schema\":\"s\",\"table\":\"t\",\"op\":\"insert\",\"ids\":[\"1\"],"
     "\"old\":[{}]}",
     "$.old", "$.old: an insert has no old rows"},
    {"{\"scope\":{},\"schema\":\"s\",\"table\":\"t\",\"op\":\"delete\",\"ids\":[\"1\"],"
     "\"new\":[{}]}",
     "$.new", "$.new: a delete has no new rows"},
    {"{\"scope\":{},\"schema\":\"s\",\"table\":\"t\",\"op\":\"update\",\"ids\":[\"1\"],"
     "\"old\":[{},{}]}",
     "$.old", "$.old: has 2 entries but ids has 1 (one entry per ID)"},
    {"{\"scope\":{},\"schema\":\"s\",\"table\":\"t\",\"op\":\"update\",\"old\":[]}", "$.old",
     "$.old: rows need \"ids\""},
    {"{\"scope\":{},\"schema\":\"s\",\"table\":\"t\",\"op\":\"update\",\"ids\":[\"1\"],"
     "\"old\":[null]}",
     "$.old[0]",
     "$.old[0]: only an update with pk_changed has rows that exist on one side"},
    {"{\"scope\":{},\"schema\":\"s\",\"table\":\"t\",\"op\":\"update\",\"ids\":[\"1\"],"
     "\"old\":[{\"a\":1}]}",
     "$.old[0].a", "$.old[0].a: expected a string, found an integer"},
    {"{\"scope\":{},\"schema\":\"s\",\"table\":\"t\",\"op\":\"insert\",\"pk_changed\":true}",
     "$.pk_changed", "$.pk_changed: only an update changes keys"},
    {"{\"scope\":{},\"schema\":\"s\",\"table\":\"t\",\"op\":\"update\",\"columns\":"
     "[\"a\",\"\"]}",
     "$.columns", "$.columns: columns[1] is empty"},
    {"{\"schema\":\"s\",\"table\":\"t\",\"op\":\"update\"}", "$.scope",
     "$: missing key \"scope\""},
    {"{\"scope\":{},\"schema\":\"s\",\"table\":\"t\",\"op\":\"update\",\"version\":1}",
     "$.version", "$: unknown key \"version\""},
};

/* An empty document, or one with a NUL byte (a C string cut short, a
 * binary file), is named as such by every decoder. */
START_TEST(empty_and_nul_documents)
{
    static const struct {
        const char *text;
        size_t len;
        const char *message;
    } cases[] = {
        {"", 0, "invalid JSON: the text is empty"},
        {"\n  \n", 4, "invalid JSON: the text is only white space"},
        {"{\"scope\":{},\"op\":\"reset\"}\0", 26,
         "invalid JSON: the text contains a NUL byte (byte 26 of 26)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pgw_error err;
        pgw_deps *d = (pgw_deps *)0x1;
        ck_assert_int_eq(pgw_deps_from_json(&d, cases[i].text, cases[i].len, &err), PGW_EPARSE);
        ck_assert_ptr_eq(d, (pgw_deps *)0x1);
        ck_assert_str_eq(err.message, cases[i].message);
        ck_assert_str_eq(err.path, "$");
        pgw_write *w = (pgw_write *)0x1;
        ck_assert_int_eq(pgw_write_from_json(&w, cases[i].text, cases[i].len, &err), PGW_EPARSE);
        ck_assert_ptr_eq(w, (pgw_write *)0x1);
        ck_assert_str_eq(err.message, cases[i].message);
    }
}
END_TEST

START_TEST(malformed_json)
{
    for (size_t i = 0; i < sizeof bad_deps / sizeof bad_deps[0]; i++) {
        const bad_case *c = &bad_deps[i];
        pgw_deps *d = (pgw_deps *)0x1;
        pgw_error err;
        pgw_error_clear(&err);
        ck_assert_int_eq(pgw_deps_from_json(&d, c->json, strlen(c->json), &err), PGW_EPARSE);
        ck_assert_ptr_eq(d, (pgw_deps *)0x1);
        ck_assert_str_eq(err.path, c->path);
        if (c->message)
            ck_assert_str_eq(err.message, c->message);
    }
    for (size_t i = 0; i < sizeof bad_writes / sizeof bad_writes[0]; i++) {
        const bad_case *c = &bad_writes[i];
        pgw_write *w = (pgw_write *)0x1;
        pgw_error err;
        pgw_error_clear(&err);
        ck_assert_int_eq(pgw_write_from_json(&w, c->json, strlen(c->json), &err), PGW_EPARSE);
        ck_assert_ptr_eq(w, (pgw_write *)0x1);
        ck_assert_str_eq(err.path, c->path);
        ck_assert_str_eq(err.message, c->message);
    }
    pgw_error err;
    pgw_deps *d = NULL;
    ck_assert_int_eq(pgw_deps_from_json(&d, NULL, 0, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "deps_from_json: json is NULL");
    ck_assert_int_eq(pgw_deps_to_json(NULL, NULL, NULL, &err), PGW_EINVAL);
    ck_assert_int_eq(pgw_write_from_json(NULL, "{}", 2, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "write_from_json: out is NULL");
    /* Invalid UTF-8 is refused by the parser. */
    ck_assert_int_eq(pgw_write_from_json(&(pgw_write *){NULL}, "{\"scope\":\"\xc3\"}", 13, &err),
                     PGW_EPARSE);
}
END_TEST

/* ---- the notification payload ---- */

static pgw_write *decode(const char *payload)
{
    pgw_write *w = NULL;
    ck_assert_int_eq(pgw_payload_decode(&w, &IH_ACME, payload, strlen(payload), NULL), PGW_OK);
    return w;
}

static char *encode(const pgw_write *w, const pgw_payload_options *o)
{
    char *p = NULL;
    size_t len;
    pgw_error err;
    pgw_error_clear(&err);
    int rc = pgw_payload_encode(&p, &len, w, o, &err);
    ck_assert_msg(rc == PGW_OK, "payload_encode: %s", err.message);
    ck_assert_uint_eq(len, strlen(p));
    ck_assert_uint_le(len, o ? o->max_bytes : PGW_PAYLOAD_MAX_BYTES);
    return p;
}

#define PAYLOAD_EXAMPLE                                                                      \
    "{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\",\"ids\":"    \
    "[\"17\",[\"1\",\"a\"]],\"ids_truncated\":false,\"columns\":[\"status\"],"               \
    "\"columns_truncated\":false,\"old\":[{\"status\":\"open\"},{\"status\":null}],"         \
    "\"new\":[{\"status\":\"closed\"},{\"status\":\"open\"}],\"pk_changed\":false}"

START_TEST(payload_round_trip)
{
    pgw_write *w = decode(PAYLOAD_EXAMPLE);
    ck_assert_int_eq(pgw_write_fallback_status(w), PGW_OK);
    char *p = encode(w, NULL);
    ck_assert_str_eq(p, PAYLOAD_EXAMPLE);
    pgw_free(p);
    /* The decoded write set carries the listener's scope. */
    char *j;
    ck_assert_int_eq(pgw_write_to_json(&j, NULL, w, NULL), PGW_OK);
    ck_assert_str_eq(j,
                     "{\"scope\":{\"project\":\"p1\",\"tenant\":\"acme\",\"database\":\"app\"},"
                     "\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\",\"ids\":"
                     "[\"17\",[\"1\",\"a\"]],\"ids_truncated\":false,\"columns\":[\"status\"],"
                     "\"columns_truncated\":false,\"old\":[{\"status\":\"open\"},{\"status\":"
                     "null}],\"new\":[{\"status\":\"closed\"},{\"status\":\"open\"}],"
                     "\"pk_changed\":false}");
    pgw_free(j);
    pgw_write_free(w);
    /* Every op, and key changes with absent rows. */
    const char *others[] = {
        "{\"version\":1,\"schema\":\"s\",\"table\":\"t\",\"op\":\"truncate\",\"ids\":null,"
        "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
        "\"pk_changed\":false}",
        "{\"version\":1,\"schema\":\"s\",\"table\":\"t\",\"op\":\"insert\",\"ids\":[\"9\"],"
        "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,\"new\":"
        "[{\"a\":\"1\"}],\"pk_changed\":false}",
        "{\"version\":1,\"schema\":\"s\",\"table\":\"t\",\"op\":\"delete\",\"ids\":null,"
        "\"ids_truncated\":true,\"columns\":null,\"columns_truncated\":false,"
        "\"pk_changed\":false}",
        "{\"version\":1,\"schema\":\"s\",\"table\":\"t\",\"op\":\"update\",\"ids\":[\"1\","
        "\"2\"],\"ids_truncated\":false,\"columns\":[\"id\"],\"columns_truncated\":false,"
        "\"old\":[{\"a\":\"x\"},null],\"new\":[null,{\"a\":\"x\"}],\"pk_changed\":true}",
    };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        w = decode(others[i]);
        ck_assert_int_eq(pgw_write_fallback_status(w), PGW_OK);
        p = encode(w, NULL);
        ck_assert_str_eq(p, others[i]);
        pgw_free(p);
        pgw_write_free(w);
    }
    /* The ddl announcement: exactly the shared form, and every
     * subscription reading the table refreshes with DDL. */
    const char *ddl = "{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"ddl\"}";
    w = decode(ddl);
    ck_assert_int_eq(pgw_write_fallback_status(w), PGW_OK);
    ck_assert_int_eq(pgw_write_op(w), PGW_OP_DDL);
    p = encode(w, NULL);
    ck_assert_str_eq(p, ddl);
    pgw_free(p);
    pgw_deps *sub = ih_deps(&IH_ACME, "q");
    size_t t = ih_table(sub, "tasks");
    ih_cols(sub, t, "title");
    ih_result(sub, "1");
    IH_EXPECT(sub, w, true, PGW_REASON_DDL);
    pgw_deps_free(sub);
    pgw_write_free(w);
    /* Null members and false flags are accepted (as for a truncate). */
    w = decode("{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"ddl\","
               "\"ids\":null,\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":"
               "false,\"pk_changed\":false}");
    ck_assert_int_eq(pgw_write_fallback_status(w), PGW_OK);
    ck_assert_int_eq(pgw_write_op(w), PGW_OP_DDL);
    p = encode(w, NULL);
    ck_assert_str_eq(p, ddl);
    pgw_free(p);
    pgw_write_free(w);
}
END_TEST

static pgw_write *many_ids(size_t n, pgw_op op)
{
    pgw_write *w = ih_write(&IH_ACME, "tasks", op);
    static char buf[600][12];
    static const char *parts[600];
    static pgw_rowid ids[600];
    for (size_t i = 0; i < n; i++) {
        snprintf(buf[i], sizeof buf[i], "%zu", 1000 + i);
        parts[i] = buf[i];
        ids[i].parts = &parts[i];
        ids[i].n_parts = 1;
    }
    ck_assert_int_eq(pgw_write_set_ids(w, ids, n, false, NULL), PGW_OK);
    return w;
}

START_TEST(payload_caps)
{
    /* 500 IDs are listed; the 501st turns the list into "too many". */
    pgw_write *w = many_ids(500, PGW_OP_DELETE);
    char *p = encode(w, NULL);
    pgw_write *d = decode(p);
    ck_assert_int_eq(pgw_write_fallback_status(d), PGW_OK);
    ck_assert(pgw_write_ids_known(d));
    ck_assert_uint_eq(pgw_write_n_ids(d), 500);
    pgw_free(p);
    pgw_write_free(d);
    pgw_write_free(w);
    w = many_ids(501, PGW_OP_DELETE);
    p = encode(w, NULL);
    ck_assert_str_eq(p, "{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":"
                        "\"delete\",\"ids\":null,\"ids_truncated\":true,\"columns\":null,"
                        "\"columns_truncated\":false,\"pk_changed\":false}");
    d = decode(p);
    ck_assert(!pgw_write_ids_known(d));
    pgw_deps *sub = ih_deps(&IH_ACME, "q");
    size_t t = ih_table(sub, "tasks");
    ih_result(sub, "1");
    (void)t;
    IH_EXPECT(sub, d, true, PGW_REASON_IDS_UNKNOWN);
    pgw_free(p);
    pgw_write_free(d);
    pgw_write_free(w);

    /* 100 columns with long multibyte names: listed, under the budget. */
    static char names[101][64];
    const char *cols[101];
    for (int i = 0; i < 101; i++) {
        size_t n = 0;
        for (int k = 0; k < 20; k++) { /* 20 × "列" (3 bytes) = 60 bytes */
            memcpy(names[i] + n, "\xe5\x88\x97", 3);
            n += 3;
        }
        snprintf(names[i] + n, sizeof names[i] - n, "%03d", i); /* 63 bytes */
        cols[i] = names[i];
    }
    w = many_ids(10, PGW_OP_UPDATE);
    ck_assert_int_eq(pgw_write_set_columns(w, cols, 100, false, NULL), PGW_OK);
    p = encode(w, NULL);
    ck_assert_uint_gt(strlen(p), 6500);
    d = decode(p);
    ck_assert(pgw_write_columns_known(d));
    ck_assert(pgw_write_ids_known(d));
    pgw_free(p);
    pgw_write_free(d);
    /* 101 columns: the list becomes unknown, the IDs stay. */
    ck_assert_int_eq(pgw_write_set_columns(w, cols, 101, false, NULL), PGW_OK);
    p = encode(w, NULL);
    ck_assert_ptr_nonnull(strstr(p, "\"columns\":null,\"columns_truncated\":true"));
    d = decode(p);
    ck_assert(!pgw_write_columns_known(d));
    ck_assert(pgw_write_ids_known(d));
    pgw_free(p);
    pgw_write_free(d);
    /* 500 IDs and 100 long columns do not fit together: the IDs go first
     * (values were already absent), the columns stay. */
    pgw_write_free(w);
    w = many_ids(500, PGW_OP_UPDATE);
    ck_assert_int_eq(pgw_write_set_columns(w, cols, 100, false, NULL), PGW_OK);
    p = encode(w, NULL);
    ck_assert_ptr_nonnull(strstr(p, "\"ids\":null,\"ids_truncated\":true"));
    ck_assert_ptr_null(strstr(p, "\"columns\":null"));
    pgw_free(p);
    pgw_write_free(w);
    /* A decoder refuses lists beyond the caps: 501 IDs → unknown write. */
    char big[8000];
    size_t len = (size_t)snprintf(big, sizeof big,
                                  "{\"version\":1,\"schema\":\"public\",\"table\":"
                                  "\"tasks\",\"op\":\"delete\",\"ids\":[");
    for (int i = 0; i < 501; i++)
        len += (size_t)snprintf(big + len, sizeof big - len, "%s\"%d\"", i ? "," : "", i % 10);
    snprintf(big + len, sizeof big - len, "]}");
    d = decode(big);
    ck_assert_int_eq(pgw_write_op(d), PGW_OP_UNKNOWN);
    ck_assert_int_eq(pgw_write_fallback_status(d), PGW_EPARSE);
    ck_assert_str_eq(pgw_write_fallback_message(d),
                     "$.ids: 501 row IDs exceed the limit of 500");
    IH_EXPECT(sub, d, true, PGW_REASON_WRITE_UNKNOWN);
    pgw_write_free(d);
    pgw_deps_free(sub);
}
END_TEST

/* The degradation ladder: values, then IDs, then columns; then ELIMIT. */
START_TEST(payload_budget)
{
    pgw_write *w = many_ids(3, PGW_OP_UPDATE);
    ih_wcols(w, "status", false);
    ih_wval(w, 0, PGW_SIDE_OLD, "status", "open");
    ih_wval(w, 0, PGW_SIDE_NEW, "status", "closed");
    pgw_payload_options o = PGW_PAYLOAD_OPTIONS_INIT;
    char *full = encode(w, &o);
    ck_assert_str_eq(full, "{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":"
                           "\"update\",\"ids\":[\"1000\",\"1001\",\"1002\"],\"ids_truncated\":"
                           "false,\"columns\":[\"status\"],\"columns_truncated\":false,\"old\":"
                           "[{\"status\":\"open\"},{},{}],\"new\":[{\"status\":\"closed\"},{},"
                           "{}],\"pk_changed\":false}");
    size_t full_len = strlen(full);
    o.max_bytes = full_len - 1;
    char *p = encode(w, &o);
    ck_assert_str_eq(p, "{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":"
                        "\"update\",\"ids\":[\"1000\",\"1001\",\"1002\"],\"ids_truncated\":"
                        "false,\"columns\":[\"status\"],\"columns_truncated\":false,"
                        "\"pk_changed\":false}");
    o.max_bytes = strlen(p) - 1;
    pgw_free(p);
    p = encode(w, &o);
    ck_assert_str_eq(p, "{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":"
                        "\"update\",\"ids\":null,\"ids_truncated\":true,\"columns\":"
                        "[\"status\"],\"columns_truncated\":false,\"pk_changed\":false}");
    o.max_bytes = strlen(p) - 1;
    pgw_free(p);
    p = encode(w, &o);
    ck_assert_str_eq(p, "{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":"
                        "\"update\",\"ids\":null,\"ids_truncated\":true,\"columns\":null,"
                        "\"columns_truncated\":true,\"pk_changed\":false}");
    o.max_bytes = strlen(p) - 1;
    pgw_free(p);
    pgw_error err;
    p = NULL;
    ck_assert_int_eq(pgw_payload_encode(&p, NULL, w, &o, &err), PGW_ELIMIT);
    ck_assert_ptr_null(p);
    pgw_free(full);
    /* A huge value: only the values go. */
    char huge[9000];
    memset(huge, 'x', sizeof huge - 1);
    huge[sizeof huge - 1] = '\0';
    ih_wval(w, 1, PGW_SIDE_NEW, "body", huge);
    p = encode(w, NULL);
    ck_assert_ptr_nonnull(strstr(p, "\"ids\":[\"1000\""));
    ck_assert_ptr_null(strstr(p, "\"new\""));
    pgw_free(p);
    /* Bad options and ops. */
    o = (pgw_payload_options)PGW_PAYLOAD_OPTIONS_INIT;
    o.max_bytes = 8000;
    ck_assert_int_eq(pgw_payload_encode(&p, NULL, w, &o, &err), PGW_EINVAL);
    o = (pgw_payload_options)PGW_PAYLOAD_OPTIONS_INIT;
    o.version = 2;
    ck_assert_int_eq(pgw_payload_encode(&p, NULL, w, &o, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "payload_encode: options version 2 is not 1 (use "
                                  "PGW_PAYLOAD_OPTIONS_INIT)");
    pgw_write_free(w);
    ck_assert_int_eq(pgw_write_new_reset(&w, &IH_ACME, NULL), PGW_OK);
    ck_assert_int_eq(pgw_payload_encode(&p, NULL, w, NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "payload_encode: a reset has no payload form");
    pgw_write_free(w);
}
END_TEST

/* Multibyte identifiers and values end to end: payload → write set → the
 * decision compares them byte for byte. */
START_TEST(multibyte)
{
    const char *payload =
        "{\"version\":1,\"schema\":\"データ\",\"table\":\"タスク\",\"op\":\"update\","
        "\"ids\":[\"行1\"],\"ids_truncated\":false,\"columns\":[\"状態\"],"
        "\"columns_truncated\":false,\"old\":[{\"状態\":\"閉じた\"}],\"new\":[{\"状態\":"
        "\"保留\"}],\"pk_changed\":false}";
    pgw_write *w = decode(payload);
    ck_assert_int_eq(pgw_write_fallback_status(w), PGW_OK);
    ck_assert_str_eq(pgw_write_table(w), "タスク");
    char *p = encode(w, NULL);
    ck_assert_str_eq(p, payload);
    pgw_free(p);
    pgw_deps *d = ih_deps(&IH_ACME, "開いた");
    size_t t;
    ck_assert_int_eq(pgw_deps_add_table(&t, d, "データ", "タスク", NULL), PGW_OK);
    ih_filter(d, t, "状態", PGW_FILTER_EQ, "開いた");
    IH_EXPECT(d, w, false, PGW_REASON_VALUES_DISJOINT);
    pgw_write_free(w);
    w = decode("{\"version\":1,\"schema\":\"データ\",\"table\":\"タスク\",\"op\":\"insert\","
               "\"ids\":[\"行2\"],\"new\":[{\"状態\":\"開いた\"}]}");
    IH_EXPECT(d, w, true, PGW_REASON_INSERT_MAY_ENTER);
    pgw_write_free(w);
    char *j;
    ck_assert_int_eq(pgw_deps_to_json(&j, NULL, d, NULL), PGW_OK);
    ck_assert_ptr_nonnull(strstr(j, "\"query\":\"開いた\""));
    pgw_free(j);
    pgw_deps_free(d);
}
END_TEST

START_TEST(payload_fallbacks)
{
    pgw_deps *sub = ih_deps(&IH_ACME, "q");
    ih_table(sub, "tasks");
    struct {
        const char *payload;
        pgw_op op;
        int status;
        const char *message;
    } cases[] = {
        {"not json", PGW_OP_RESET, PGW_EPARSE,
         "invalid JSON at line 1 column 3: invalid token near 'not'"},
        {"", PGW_OP_RESET, PGW_EPARSE, NULL},
        {"[]", PGW_OP_RESET, PGW_EPARSE, "$: expected an object, found an array"},
        {"{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\"}", PGW_OP_UNKNOWN,
         PGW_EPARSE, "$: missing key \"version\""},
        {"{\"version\":2,\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\"}",
         PGW_OP_UNKNOWN, PGW_EVERSION, "$.version: payload version 2 is not 1"},
        {"{\"version\":\"1\",\"schema\":\"public\",\"table\":\"tasks\"}", PGW_OP_UNKNOWN,
         PGW_EPARSE, "$.version: expected an integer"},
        {"{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"upsert\"}",
         PGW_OP_UNKNOWN, PGW_EPARSE, "$.op: \"upsert\" is not insert, update, delete, truncate or ddl"},
        {"{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"reset\"}",
         PGW_OP_UNKNOWN, PGW_EPARSE, "$.op: \"reset\" is not insert, update, delete, truncate or ddl"},
        {"{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\","
         "\"extra\":true}",
         PGW_OP_UNKNOWN, PGW_EPARSE, "$: unknown key \"extra\""},
        /* A ddl naming rows or columns is malformed: an unknown write to
         * the table, which refreshes its readers all the same. */
        {"{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"ddl\","
         "\"ids\":[\"1\"]}",
         PGW_OP_UNKNOWN, PGW_EPARSE, "$: a ddl has no \"ids\""},
        {"{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"ddl\","
         "\"columns\":[]}",
         PGW_OP_UNKNOWN, PGW_EPARSE, "$: a ddl has no \"columns\""},
        {"{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"ddl\","
         "\"old\":[{}]}",
         PGW_OP_UNKNOWN, PGW_EPARSE, "$: a ddl has no \"old\""},
        {"{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"ddl\","
         "\"new\":[{}]}",
         PGW_OP_UNKNOWN, PGW_EPARSE, "$: a ddl has no \"new\""},
        /* What a listener built before "ddl" existed made of the
         * announcement: the same fallback for an op it did not know. */
        {"{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"alter\"}",
         PGW_OP_UNKNOWN, PGW_EPARSE,
         "$.op: \"alter\" is not insert, update, delete, truncate or ddl"},
        {"{\"version\":1,\"schema\":\"public\",\"op\":\"update\"}", PGW_OP_RESET, PGW_EPARSE,
         "$: missing key \"table\""},
        {"{\"version\":1,\"schema\":\"public\",\"table\":\"\",\"op\":\"update\"}", PGW_OP_RESET,
         PGW_EPARSE, "$: table is empty"},
        {"{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\","
         "\"scope\":{}}",
         PGW_OP_UNKNOWN, PGW_EPARSE, "$: unknown key \"scope\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pgw_write *w = decode(cases[i].payload);
        ck_assert_int_eq(pgw_write_op(w), cases[i].op);
        ck_assert_int_eq(pgw_write_fallback_status(w), cases[i].status);
        if (cases[i].message)
            ck_assert_str_eq(pgw_write_fallback_message(w), cases[i].message);
        if (cases[i].op == PGW_OP_UNKNOWN) {
            ck_assert_str_eq(pgw_write_table(w), "tasks");
            IH_EXPECT(sub, w, true, PGW_REASON_WRITE_UNKNOWN);
        } else {
            IH_EXPECT(sub, w, true, PGW_REASON_SCOPE_RESET);
        }
        pgw_write_free(w);
    }
    /* Over 7999 bytes: not a notification PostgreSQL could have sent. */
    static char big[9000];
    int n = snprintf(big, sizeof big, "{\"version\":1,\"schema\":\"s\",\"table\":\"t\",\"op\":"
                                      "\"insert\",\"ids\":[\"");
    memset(big + n, 'x', 8000);
    strcpy(big + n + 8000, "\"]}");
    pgw_write *w = decode(big);
    ck_assert_int_eq(pgw_write_op(w), PGW_OP_UNKNOWN);
    ck_assert_str_eq(pgw_write_fallback_message(w), "$: payload of 8063 bytes exceeds 7999 bytes");
    pgw_write_free(w);
    /* Binary garbage and NUL bytes never crash. */
    const char garbage[] = {'{', '\0', '\xff', '"', '}'};
    ck_assert_int_eq(pgw_payload_decode(&w, &IH_ACME, garbage, sizeof garbage, NULL), PGW_OK);
    ck_assert_int_eq(pgw_write_op(w), PGW_OP_RESET);
    pgw_write_free(w);
    pgw_error err;
    ck_assert_int_eq(pgw_payload_decode(&w, NULL, "{}", 2, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "payload_decode: scope is NULL");
    ck_assert_int_eq(pgw_payload_decode(&w, &IH_ACME, NULL, 3, &err), PGW_EINVAL);
    pgw_scope bad = {"\xc0", NULL, NULL};
    ck_assert_int_eq(pgw_payload_decode(&w, &bad, "{}", 2, &err), PGW_EINVAL);
    pgw_deps_free(sub);
}
END_TEST

/* Each operation fails cleanly at every allocation: PGW_ENOMEM, no leak,
 * out-params untouched, and success once the allocator recovers. */
typedef int (*alloc_op)(void **made);

static int op_deps_from_json(void **made)
{
    return pgw_deps_from_json((pgw_deps **)made, DEPS_EXAMPLE, strlen(DEPS_EXAMPLE), NULL);
}

static int op_deps_timed_from_json(void **made)
{
    /* jansson 2.14 reads past the end of its token buffer when growing it
     * fails on a 14-byte string (16 bytes with its quotes, the buffer's
     * first size), such as the key "time_dependent": here an earlier,
     * longer string (the query) has grown the buffer. */
    const char *t = "{\"scope\":{},\"query\":\"tasks.due.today.list\",\"undeclared\":true,"
                    "\"time_dependent\":true}";
    return pgw_deps_from_json((pgw_deps **)made, t, strlen(t), NULL);
}

static int op_write_from_json(void **made)
{
    const char *pk =
        "{\"scope\":{\"project\":\"p\",\"tenant\":\"t\",\"database\":\"d\"},\"schema\":\"s\","
        "\"table\":\"t\",\"op\":\"update\",\"ids\":[[\"1\",\"a\"],[\"2\",\"a\"]],"
        "\"columns\":[\"id\",\"x\"],\"old\":[{\"x\":null,\"y\":\"\"},null],\"new\":[null,"
        "{\"x\":\"5\"}],\"pk_changed\":true}";
    return pgw_write_from_json((pgw_write **)made, pk, strlen(pk), NULL);
}

static int op_payload_decode(void **made)
{
    return pgw_payload_decode((pgw_write **)made, &IH_ACME, PAYLOAD_EXAMPLE,
                              strlen(PAYLOAD_EXAMPLE), NULL);
}

static int op_payload_ddl(void **made)
{
    const char *p = "{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"ddl\"}";
    return pgw_payload_decode((pgw_write **)made, &IH_ACME, p, strlen(p), NULL);
}

static int op_write_ddl_from_json(void **made)
{
    const char *j = "{\"scope\":{\"project\":\"p\",\"tenant\":\"t\",\"database\":\"d\"},"
                    "\"schema\":\"s\",\"table\":\"t\",\"op\":\"ddl\"}";
    return pgw_write_from_json((pgw_write **)made, j, strlen(j), NULL);
}

static int op_payload_fallback(void **made)
{
    const char *p = "{\"version\":9,\"schema\":\"public\",\"table\":\"tasks\"}";
    return pgw_payload_decode((pgw_write **)made, &IH_ACME, p, strlen(p), NULL);
}

static pgw_write *enc_source;
static pgw_deps *enc_deps, *enc_timed;

static int op_payload_encode(void **made)
{
    return pgw_payload_encode((char **)made, NULL, enc_source, NULL, NULL);
}

static int op_write_to_json(void **made)
{
    return pgw_write_to_json((char **)made, NULL, enc_source, NULL);
}

static int op_deps_to_json(void **made)
{
    return pgw_deps_to_json((char **)made, NULL, enc_deps, NULL);
}

static int op_deps_timed_to_json(void **made)
{
    return pgw_deps_to_json((char **)made, NULL, enc_timed, NULL);
}

static void free_made(alloc_op op, void *made)
{
    if (op == op_deps_from_json || op == op_deps_timed_from_json)
        pgw_deps_free(made);
    else if (op == op_write_from_json || op == op_payload_decode || op == op_payload_fallback ||
             op == op_payload_ddl || op == op_write_ddl_from_json)
        pgw_write_free(made);
    else
        pgw_free(made);
}

START_TEST(codecs_enomem)
{
    alloc_op ops[] = {op_deps_from_json,  op_write_from_json, op_payload_decode,
                      op_payload_fallback, op_payload_encode,  op_write_to_json,
                      op_deps_to_json,    op_payload_ddl,     op_write_ddl_from_json,
                      op_deps_timed_from_json, op_deps_timed_to_json};
    pgwt_alloc_install();
    enc_source = write_json(WRITE_EXAMPLE);
    enc_deps = deps_json(DEPS_EXAMPLE);
    enc_timed = deps_json(DEPS_EXAMPLE);
    ck_assert_int_eq(pgw_deps_set_time_dependent(enc_timed, true, NULL), PGW_OK);
    size_t base = pgwt_alloc_get().live;
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        size_t n;
        for (n = 1;; n++) {
            void *made = (void *)0x1;
            pgwt_alloc_fail_at(n);
            int rc = ops[k](&made);
            bool failed = pgwt_alloc_failed();
            pgwt_alloc_fail_at(0);
            if (!failed) {
                ck_assert_int_eq(rc, PGW_OK);
                free_made(ops[k], made);
                ck_assert_uint_eq(pgwt_alloc_get().live, base);
                break;
            }
            ck_assert_msg(rc == PGW_ENOMEM, "op %zu, allocation %zu: rc %d", k, n, rc);
            ck_assert_ptr_eq(made, (void *)0x1);
            ck_assert_msg(pgwt_alloc_get().live == base, "op %zu leaks at allocation %zu", k, n);
        }
        ck_assert_uint_gt(n, 2);
    }
    pgw_write_free(enc_source);
    pgw_deps_free(enc_deps);
    pgw_deps_free(enc_timed);
    ck_assert_uint_eq(pgwt_alloc_get().live, 0);
    pgwt_alloc_uninstall();
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("inval_json");
    TCase *tc = tcase_create("json");
    tcase_add_test(tc, deps_design_example);
    tcase_add_test(tc, deps_every_field);
    tcase_add_test(tc, deps_ranges);
    tcase_add_test(tc, deps_sort_keys_and_bounds);
    tcase_add_test(tc, deps_wire_range_example);
    tcase_add_test(tc, deps_time_dependent);
    tcase_add_test(tc, write_every_field);
    tcase_add_test(tc, verdicts);
    tcase_add_test(tc, empty_and_nul_documents);
    tcase_add_test(tc, malformed_json);
    suite_add_tcase(s, tc);
    tc = tcase_create("payload");
    tcase_add_test(tc, payload_round_trip);
    tcase_add_test(tc, payload_caps);
    tcase_add_test(tc, payload_budget);
    tcase_add_test(tc, multibyte);
    tcase_add_test(tc, payload_fallbacks);
    tcase_add_test(tc, codecs_enomem);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return pgwt_main(suite());
}
