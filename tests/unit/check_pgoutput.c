/*
 * tests/unit/check_pgoutput.c — the pgoutput decoder and the replication
 * frames (pgoutput.h), on messages built byte by byte: exact write sets (in
 * their canonical JSON form), what each replica identity lets the decoder
 * know, the placeholders of key-only old tuples (never NULL), unchanged
 * TOASTed values, key changes, targets, grouping and commit order,
 * chunking, the memory bound, logical messages, every malformed-message
 * error with its byte offset, and allocation failure.
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgo_build.h"
#include "pgw_test.h"
#include "pgwitness/pgwitness.h"

static const pgw_scope ACME = {"p1", "acme", "app"};

#define T_OID 16384u  /* public.tasks (id, title, status, notes) */
#define P_OID 16400u  /* a partition, tasks_p1, same columns */

static const char *const TASK_COLS[] = {"*id", "title", "status", "notes"};

static pgw_pgoutput *new_dec(const pgw_pgoutput_options *o)
{
    pgw_pgoutput *d = NULL;
    pgw_error e;
    ck_assert_msg(pgw_pgoutput_new(&d, &ACME, o, &e) == PGW_OK, "%s", e.message);
    return d;
}

static void feed(pgw_pgoutput *d, const pgo_msg *m)
{
    pgw_error e;
    pgw_error_clear(&e);
    int rc = pgw_pgoutput_decode(NULL, d, m->b, m->n, &e);
    ck_assert_msg(rc == PGW_OK, "decode '%c': %s", m->b[0], e.message);
}

/* Feeds a message that must fail; returns the error text. */
static const char *feed_bad(pgw_pgoutput *d, const pgo_msg *m, int code)
{
    static pgw_error e;
    pgw_error_clear(&e);
    int rc = pgw_pgoutput_decode(NULL, d, m->b, m->n, &e);
    ck_assert_int_eq(rc, code);
    return e.message;
}

/* The standard watched table: tasks with key id and value column status. */
static pgw_pgoutput *tasks_dec(void)
{
    pgw_pgoutput *d = new_dec(NULL);
    const char *key[] = {"id"}, *vals[] = {"status"};
    ck_assert_int_eq(pgw_pgoutput_add_target(d, T_OID, "public", "tasks", key, 1, vals, 1, NULL),
                     PGW_OK);
    pgo_msg m;
    pgo_relation(&m, T_OID, "public", "tasks", 'd', 4, TASK_COLS);
    feed(d, &m);
    return d;
}

/* The watched table with its key only (no value column), under options o. */
static pgw_pgoutput *keys_dec(const pgw_pgoutput_options *o)
{
    pgw_pgoutput *d = new_dec(o);
    const char *key[] = {"id"};
    ck_assert_int_eq(pgw_pgoutput_add_target(d, T_OID, "public", "tasks", key, 1, NULL, 0, NULL),
                     PGW_OK);
    pgo_msg m;
    pgo_relation(&m, T_OID, "public", "tasks", 'd', 4, TASK_COLS);
    feed(d, &m);
    return d;
}

/* The same, its old tuples declared full rows (REPLICA IDENTITY FULL). */
static pgw_pgoutput *full_dec(void)
{
    pgw_pgoutput *d = tasks_dec();
    ck_assert_int_eq(pgw_pgoutput_set_full_rows(d, T_OID, true, NULL), PGW_OK);
    return d;
}

/* A second watched table: notes (k, body), relation 20, key k. */
static void add_notes(pgw_pgoutput *d)
{
    const char *key[] = {"k"};
    ck_assert_int_eq(pgw_pgoutput_add_target(d, 20, "public", "notes", key, 1, NULL, 0, NULL),
                     PGW_OK);
    const char *ncols[] = {"*k", "body"};
    pgo_msg m;
    pgo_relation(&m, 20, "public", "notes", 'd', 2, ncols);
    feed(d, &m);
}

static void begin(pgw_pgoutput *d, uint64_t lsn)
{
    pgo_msg m;
    pgo_begin(&m, lsn, 700);
    feed(d, &m);
}

static void commit(pgw_pgoutput *d, uint64_t lsn)
{
    pgo_msg m;
    pgo_commit(&m, lsn, lsn + 0x30);
    feed(d, &m);
}

/* The JSON of the next ready write set (its scope left out), checking its
 * commit LSN; "reset" for a reset, "none" when nothing is ready. */
static char json_buf[8192];
static const char *next_json(pgw_pgoutput *d, uint64_t lsn)
{
    pgw_pgoutput_change c;
    int rc = pgw_pgoutput_next(&c, d);
    if (rc == PGW_ENOTFOUND)
        return "none";
    ck_assert_int_eq(rc, PGW_OK);
    ck_assert_msg(c.lsn == lsn, "lsn %llx, expected %llx", (unsigned long long)c.lsn,
                  (unsigned long long)lsn);
    if (c.reset) {
        ck_assert_ptr_null(c.write);
        return "reset";
    }
    ck_assert_uint_eq(pgw_write_lsn(c.write), lsn);
    char *j = NULL;
    ck_assert_int_eq(pgw_write_to_json(&j, NULL, c.write, NULL), PGW_OK);
    const char *body = strstr(j, "\"schema\"");
    ck_assert_ptr_nonnull(body);
    snprintf(json_buf, sizeof json_buf, "{%s", body);
    pgw_free(j);
    pgw_write_free(c.write);
    return json_buf;
}

#define EXPECT_NEXT(d, lsn, want) ck_assert_str_eq(next_json((d), (lsn)), (want))

/* The ddl write set of a table (its JSON form, scope left out). */
#define DDL_OF(schema, table) \
    "{\"schema\":\"" schema "\",\"table\":\"" table "\",\"op\":\"ddl\"}"
#define DDL_TASKS DDL_OF("public", "tasks")

/* ------------------------------------------------------------------ */

START_TEST(lsn_text)
{
    char buf[PGW_LSN_TEXT_SIZE];
    ck_assert_int_eq(pgw_lsn_format(buf, 0x16B3748), PGW_OK);
    ck_assert_str_eq(buf, "0/16B3748");
    ck_assert_int_eq(pgw_lsn_format(buf, UINT64_MAX), PGW_OK);
    ck_assert_str_eq(buf, "FFFFFFFF/FFFFFFFF");
    ck_assert_int_eq(pgw_lsn_format(buf, (uint64_t)1 << 32), PGW_OK);
    ck_assert_str_eq(buf, "1/0");
    uint64_t v = 7;
    ck_assert_int_eq(pgw_lsn_parse(&v, "0/16b3748", NULL), PGW_OK);
    ck_assert_uint_eq(v, 0x16B3748);
    ck_assert_int_eq(pgw_lsn_parse(&v, "FFFFFFFF/FFFFFFFF", NULL), PGW_OK);
    ck_assert_uint_eq(v, UINT64_MAX);
    pgw_error e;
    const char *bad[] = {"", "0", "/1", "1/", "0/123456789", "123456789/0", "0/1 ", "g/1",
                         "0//1", "-1/0"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        v = 7;
        ck_assert_int_eq(pgw_lsn_parse(&v, bad[i], &e), PGW_EPARSE);
        ck_assert_uint_eq(v, 7);
    }
    ck_assert_str_eq(e.message, "\"-1/0\" is not an LSN (like 0/16B3748)");
    ck_assert_int_eq(pgw_lsn_parse(NULL, "0/1", NULL), PGW_EINVAL);
    ck_assert_int_eq(pgw_lsn_format(NULL, 1), PGW_EINVAL);
}
END_TEST

START_TEST(replication_frames)
{
    pgo_msg m;
    const unsigned char data[] = {'B', 1, 2};
    pgo_xlogdata(&m, 0x100, 0x200, data, sizeof data);
    pgw_replication_frame f;
    ck_assert_int_eq(pgw_replication_parse(&f, m.b, m.n, NULL), PGW_OK);
    ck_assert_int_eq(f.kind, PGW_REPLICATION_XLOGDATA);
    ck_assert_uint_eq(f.wal_start, 0x100);
    ck_assert_uint_eq(f.wal_end, 0x200);
    ck_assert_int_eq(f.send_time, 42);
    ck_assert_uint_eq(f.len, 3);
    ck_assert(f.data == m.b + 25);
    pgo_keepalive(&m, 0x300, 1);
    ck_assert_int_eq(pgw_replication_parse(&f, m.b, m.n, NULL), PGW_OK);
    ck_assert_int_eq(f.kind, PGW_REPLICATION_KEEPALIVE);
    ck_assert_uint_eq(f.wal_end, 0x300);
    ck_assert(f.reply_requested);
    ck_assert_ptr_null(f.data);

    pgw_error e;
    ck_assert_int_eq(pgw_replication_parse(&f, m.b, m.n - 1, &e), PGW_EPARSE);
    ck_assert_str_eq(e.message,
                     "keepalive frame: the message ends inside the reply flag at byte 17 of 17");
    m.b[m.n++] = 0;
    ck_assert_int_eq(pgw_replication_parse(&f, m.b, m.n, &e), PGW_EPARSE);
    ck_assert_str_eq(e.message,
                     "keepalive frame: unexpected bytes after the message at byte 18 of 19");
    pgo_xlogdata(&m, 1, 2, data, 0);
    ck_assert_int_eq(pgw_replication_parse(&f, m.b, 20, &e), PGW_EPARSE);
    ck_assert_str_eq(e.message,
                     "XLogData frame: the message ends inside the send time at byte 17 of 20");
    ck_assert_int_eq(pgw_replication_parse(&f, m.b, 0, &e), PGW_EPARSE);
    ck_assert_str_eq(e.message,
                     "replication frame: the message ends inside the frame's type at byte 0 of 0");
    m.b[0] = 'x';
    ck_assert_int_eq(pgw_replication_parse(&f, m.b, 5, &e), PGW_EPARSE);
    ck_assert_str_eq(e.message, "replication frame: unknown type 0x78 at byte 0 of 5 (expected "
                                "'w' XLogData or 'k' keepalive)");
    ck_assert_int_eq(pgw_replication_parse(NULL, m.b, 5, NULL), PGW_EINVAL);
    ck_assert_int_eq(pgw_replication_parse(&f, NULL, 5, NULL), PGW_EINVAL);
}
END_TEST

START_TEST(status_update_bytes)
{
    unsigned char b[PGW_REPLICATION_STATUS_SIZE];
    ck_assert_int_eq(pgw_replication_status(b, 0x0102030405060708u, 0x10, 0x20, -1, true),
                     PGW_OK);
    const unsigned char want[PGW_REPLICATION_STATUS_SIZE] = {
        'r', 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x20,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1};
    ck_assert_mem_eq(b, want, sizeof want);
    ck_assert_int_eq(pgw_replication_status(NULL, 0, 0, 0, 0, false), PGW_EINVAL);
}
END_TEST

/* An insert is handed out at its commit, never before. */
START_TEST(insert_at_commit)
{
    pgw_pgoutput *d = tasks_dec();
    begin(d, 0x1000);
    ck_assert(pgw_pgoutput_in_transaction(d));
    pgo_msg m;
    const char *row[] = {"1", "write", "open", PGO_NULL};
    pgo_insert(&m, T_OID, 4, row);
    pgw_pgoutput_message info;
    ck_assert_int_eq(pgw_pgoutput_decode(&info, d, m.b, m.n, NULL), PGW_OK);
    ck_assert_int_eq(info.type, 'I');
    ck_assert_uint_eq(info.relid, T_OID);
    ck_assert_uint_eq(info.ready, 0);
    EXPECT_NEXT(d, 0, "none");
    pgo_commit(&m, 0x1000, 0x1030);
    ck_assert_int_eq(pgw_pgoutput_decode(&info, d, m.b, m.n, NULL), PGW_OK);
    ck_assert_int_eq(info.type, 'C');
    ck_assert_uint_eq(info.lsn, 0x1000);
    ck_assert_uint_eq(info.end_lsn, 0x1030);
    ck_assert_uint_eq(info.ready, 1);
    ck_assert(!pgw_pgoutput_in_transaction(d));
    EXPECT_NEXT(d, 0x1000,
                "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\",\"ids\":[\"1\"],"
                "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                "\"new\":[{\"status\":\"open\"}],\"pk_changed\":false}");
    EXPECT_NEXT(d, 0, "none");
    pgw_pgoutput_free(d);
}
END_TEST

/* REPLICA IDENTITY DEFAULT, key unchanged: no old tuple, so the changed
 * columns and the old values are unknown. */
START_TEST(update_default)
{
    pgw_pgoutput *d = tasks_dec();
    begin(d, 0x2000);
    pgo_msg m;
    const char *row[] = {"1", "write", "done", PGO_UNCHANGED};
    pgo_update(&m, T_OID, 4, 0, NULL, row);
    feed(d, &m);
    commit(d, 0x2000);
    EXPECT_NEXT(d, 0x2000,
                "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\",\"ids\":[\"1\"],"
                "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                "\"new\":[{\"status\":\"done\"}],\"pk_changed\":false}");
    pgw_pgoutput_free(d);
}
END_TEST

/* REPLICA IDENTITY FULL: the changed columns are exact; an unchanged
 * TOASTed value is not a change (and its value is taken from the old
 * row); a row that prints the same is not listed. */
START_TEST(update_full)
{
    pgw_pgoutput *d = full_dec();
    begin(d, 0x3000);
    pgo_msg m;
    const char *o1[] = {"1", "write", "open", "long notes"};
    const char *n1[] = {"1", "write", "done", PGO_UNCHANGED};
    pgo_update(&m, T_OID, 4, 'O', o1, n1);
    feed(d, &m);
    const char *o2[] = {"2", "read", PGO_NULL, "x"};
    const char *n2[] = {"2", "read2", PGO_NULL, PGO_UNCHANGED};
    pgo_update(&m, T_OID, 4, 'O', o2, n2);
    feed(d, &m);
    const char *same[] = {"3", "t", "open", PGO_NULL};
    pgo_update(&m, T_OID, 4, 'O', same, same);
    feed(d, &m);
    commit(d, 0x3000);
    EXPECT_NEXT(d, 0x3000,
                "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\",\"ids\":[\"1\",\"2\"],"
                "\"ids_truncated\":false,\"columns\":[\"status\",\"title\"],"
                "\"columns_truncated\":false,\"old\":[{\"status\":\"open\"},{\"status\":null}],"
                "\"new\":[{\"status\":\"done\"},{\"status\":null}],\"pk_changed\":false}");
    /* UPDATE t SET x = x alone: no row listed, no column changed. */
    begin(d, 0x3100);
    pgo_update(&m, T_OID, 4, 'O', same, same);
    feed(d, &m);
    commit(d, 0x3100);
    EXPECT_NEXT(d, 0x3100,
                "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\",\"ids\":[],"
                "\"ids_truncated\":false,\"columns\":[],\"columns_truncated\":false,"
                "\"pk_changed\":false}");
    pgw_pgoutput_free(d);
}
END_TEST

/* Under DEFAULT a key change sends a key-only old tuple: its other columns
 * are 'n' placeholders, which are unknown, never NULL. */
START_TEST(key_change_default)
{
    pgw_pgoutput *d = tasks_dec();
    begin(d, 0x4000);
    pgo_msg m;
    const char *oldk[] = {"1", PGO_NULL, PGO_NULL, PGO_NULL};
    const char *newr[] = {"9", "write", "open", PGO_NULL};
    pgo_update(&m, T_OID, 4, 'K', oldk, newr);
    feed(d, &m);
    commit(d, 0x4000);
    EXPECT_NEXT(d, 0x4000,
                "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\","
                "\"ids\":[\"1\",\"9\"],\"ids_truncated\":false,\"columns\":null,"
                "\"columns_truncated\":false,\"new\":[null,{\"status\":\"open\"}],"
                "\"pk_changed\":true}");
    pgw_pgoutput_free(d);
}
END_TEST

/* The pin: a placeholder taken for NULL would skip this delete
 * (VALUES_DISJOINT) although the open count changed. */
START_TEST(placeholders_never_null)
{
    pgw_pgoutput *d = tasks_dec();
    begin(d, 0x5000);
    pgo_msg m;
    const char *oldk[] = {"2", PGO_NULL, PGO_NULL, PGO_NULL};
    pgo_delete(&m, T_OID, 4, 'K', oldk);
    feed(d, &m);
    commit(d, 0x5000);
    pgw_pgoutput_change c;
    ck_assert_int_eq(pgw_pgoutput_next(&c, d), PGW_OK);
    pgw_write *w = c.write;
    /* count(*) WHERE status = 'open' */
    pgw_deps *deps = NULL;
    size_t t;
    const char *open[] = {"open"};
    ck_assert_int_eq(pgw_deps_new(&deps, &ACME, "tasks.count", NULL), PGW_OK);
    ck_assert_int_eq(pgw_deps_add_table(&t, deps, "public", "tasks", NULL), PGW_OK);
    ck_assert_int_eq(pgw_deps_set_columns(deps, t, NULL, 0, NULL), PGW_OK);
    ck_assert_int_eq(pgw_deps_add_filter(deps, t, "status", PGW_FILTER_EQ, open, 1, NULL),
                     PGW_OK);
    pgw_verdict v;
    ck_assert_int_eq(pgw_decide(&v, deps, w, NULL), PGW_OK);
    ck_assert(v.refresh);
    /* The same write with the placeholder wrongly recorded as NULL skips:
     * which is what the test guards against. */
    pgw_write *bad = NULL;
    const char *two[] = {"2"};
    pgw_rowid id = {two, 1};
    ck_assert_int_eq(pgw_write_new(&bad, &ACME, "public", "tasks", PGW_OP_DELETE, NULL), PGW_OK);
    ck_assert_int_eq(pgw_write_set_ids(bad, &id, 1, false, NULL), PGW_OK);
    ck_assert_int_eq(pgw_write_set_value(bad, 0, PGW_SIDE_OLD, "status", NULL, NULL), PGW_OK);
    ck_assert_int_eq(pgw_decide(&v, deps, bad, NULL), PGW_OK);
    ck_assert(!v.refresh);
    ck_assert_int_eq(v.reason, PGW_REASON_VALUES_DISJOINT);
    pgw_write_free(bad);
    char *j = NULL;
    ck_assert_int_eq(pgw_write_to_json(&j, NULL, w, NULL), PGW_OK);
    ck_assert_ptr_null(strstr(j, "\"old\"")); /* no old value is known */
    pgw_free(j);
    pgw_write_free(w);
    pgw_deps_free(deps);
    pgw_pgoutput_free(d);
}
END_TEST

/* A FULL partitioned table over a partition that is not FULL: pgoutput
 * marks the partition's key-and-placeholders old tuple 'O' (the root is
 * FULL). Unless the relation is declared full, an 'O' tuple is read as a
 * key tuple: its 'n' columns are unknown, and a delete of an open row
 * refreshes the open count. Declared full, the same bytes are a full row. */
START_TEST(partition_key_only_under_full_root)
{
    pgw_pgoutput *d = tasks_dec();
    pgo_msg m;
    pgo_relation(&m, T_OID, "public", "tasks", 'f', 4, TASK_COLS);
    feed(d, &m);
    begin(d, 0x5100);
    const char *oldk[] = {"4", PGO_NULL, PGO_NULL, PGO_NULL};
    const char *newr[] = {"4", "t", "done", PGO_NULL};
    pgo_update(&m, T_OID, 4, 'O', oldk, newr);
    feed(d, &m);
    pgo_delete(&m, T_OID, 4, 'O', oldk);
    feed(d, &m);
    commit(d, 0x5100);
    EXPECT_NEXT(d, 0x5100,
                "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\",\"ids\":[\"4\"],"
                "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                "\"new\":[{\"status\":\"done\"}],\"pk_changed\":false}");
    EXPECT_NEXT(d, 0x5100,
                "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"delete\",\"ids\":[\"4\"],"
                "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                "\"pk_changed\":false}");
    /* Declared full (every partition FULL), the 'O' tuple is a full row. */
    ck_assert_int_eq(pgw_pgoutput_set_full_rows(d, T_OID, true, NULL), PGW_OK);
    begin(d, 0x5200);
    pgo_delete(&m, T_OID, 4, 'O', oldk);
    feed(d, &m);
    commit(d, 0x5200);
    EXPECT_NEXT(d, 0x5200,
                "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"delete\",\"ids\":[\"4\"],"
                "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                "\"old\":[{\"status\":null}],\"pk_changed\":false}");
    /* And undeclared again. */
    ck_assert_int_eq(pgw_pgoutput_set_full_rows(d, T_OID, false, NULL), PGW_OK);
    begin(d, 0x5300);
    pgo_delete(&m, T_OID, 4, 'O', oldk);
    feed(d, &m);
    commit(d, 0x5300);
    EXPECT_NEXT(d, 0x5300,
                "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"delete\",\"ids\":[\"4\"],"
                "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                "\"pk_changed\":false}");
    begin(d, 0x5400);
    pgw_error e;
    ck_assert_int_eq(pgw_pgoutput_set_full_rows(d, T_OID, true, &e), PGW_ESTATE);
    commit(d, 0x5400);
    ck_assert_int_eq(pgw_pgoutput_set_full_rows(d, 0, true, &e), PGW_EINVAL);
    ck_assert_int_eq(pgw_pgoutput_set_full_rows(NULL, 1, true, &e), PGW_EINVAL);
    pgw_pgoutput_free(d);
}
END_TEST

/* Deletes: a full old row gives the old values, NULL included. */
START_TEST(delete_full)
{
    pgw_pgoutput *d = full_dec();
    begin(d, 0x5200);
    pgo_msg m;
    const char *o[] = {"5", "t", PGO_NULL, "n"};
    pgo_delete(&m, T_OID, 4, 'O', o);
    feed(d, &m);
    commit(d, 0x5200);
    EXPECT_NEXT(d, 0x5200,
                "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"delete\",\"ids\":[\"5\"],"
                "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                "\"old\":[{\"status\":null}],\"pk_changed\":false}");
    pgw_pgoutput_free(d);
}
END_TEST

/* Row IDs come from the target's primary key, not from the Relation
 * message's key flags (under FULL every column is flagged). */
START_TEST(keys_from_the_catalog)
{
    pgw_pgoutput *d = new_dec(NULL);
    const char *key[] = {"org", "id"};
    ck_assert_int_eq(pgw_pgoutput_add_target(d, 7, "s", "items", key, 2, NULL, 0, NULL), PGW_OK);
    const char *cols[] = {"*id", "*name", "*org"};
    pgo_msg m;
    pgo_relation(&m, 7, "s", "items", 'f', 3, cols);
    feed(d, &m);
    begin(d, 0x100);
    const char *r[] = {"10", "ten", "acme"};
    pgo_insert(&m, 7, 3, r);
    feed(d, &m);
    commit(d, 0x100);
    EXPECT_NEXT(d, 0x100,
                "{\"schema\":\"s\",\"table\":\"items\",\"op\":\"insert\","
                "\"ids\":[[\"acme\",\"10\"]],\"ids_truncated\":false,\"columns\":null,"
                "\"columns_truncated\":false,\"pk_changed\":false}");
    pgw_pgoutput_free(d);
}
END_TEST

/* A partition reported as its partitioned table; an inheritance child
 * watched itself and through its parent gets both write sets; a relation
 * without a target is reported under its own name with unknown IDs. */
START_TEST(targets)
{
    pgw_pgoutput *d = new_dec(NULL);
    const char *key[] = {"id"};
    ck_assert_int_eq(pgw_pgoutput_add_target(d, P_OID, "public", "tasks", key, 1, NULL, 0, NULL),
                     PGW_OK);
    ck_assert_int_eq(pgw_pgoutput_add_target(d, P_OID, "public", "tasks_p1", key, 1, NULL, 0,
                                             NULL),
                     PGW_OK);
    pgw_error e;
    ck_assert_int_eq(pgw_pgoutput_add_target(d, P_OID, "public", "tasks", key, 1, NULL, 0, &e),
                     PGW_EEXISTS);
    ck_assert_str_eq(e.message,
                     "pgoutput_add_target: relation 16400 already has the target public.tasks");
    pgo_msg m;
    pgo_relation(&m, P_OID, "public", "tasks_p1", 'd', 4, TASK_COLS);
    feed(d, &m);
    pgo_relation(&m, 99, "", "loose", 'd', 4, TASK_COLS);
    feed(d, &m);
    begin(d, 0x200);
    const char *r[] = {"1", "a", "open", PGO_NULL};
    pgo_insert(&m, P_OID, 4, r);
    feed(d, &m);
    pgo_insert(&m, 99, 4, r);
    feed(d, &m);
    commit(d, 0x200);
    EXPECT_NEXT(d, 0x200,
                "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\",\"ids\":[\"1\"],"
                "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                "\"pk_changed\":false}");
    EXPECT_NEXT(d, 0x200,
                "{\"schema\":\"public\",\"table\":\"tasks_p1\",\"op\":\"insert\",\"ids\":[\"1\"],"
                "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                "\"pk_changed\":false}");
    EXPECT_NEXT(d, 0x200,
                "{\"schema\":\"pg_catalog\",\"table\":\"loose\",\"op\":\"insert\",\"ids\":null,"
                "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                "\"pk_changed\":false}");
    EXPECT_NEXT(d, 0, "none");
    /* Targets change only between transactions. */
    begin(d, 0x300);
    ck_assert_int_eq(pgw_pgoutput_add_target(d, 5, "a", "b", NULL, 0, NULL, 0, &e), PGW_ESTATE);
    ck_assert_int_eq(pgw_pgoutput_clear_targets(d, &e), PGW_ESTATE);
    commit(d, 0x300);
    ck_assert_int_eq(pgw_pgoutput_clear_targets(d, &e), PGW_OK);
    begin(d, 0x400);
    pgo_insert(&m, P_OID, 4, r);
    feed(d, &m);
    commit(d, 0x400);
    EXPECT_NEXT(d, 0x400,
                "{\"schema\":\"public\",\"table\":\"tasks_p1\",\"op\":\"insert\",\"ids\":null,"
                "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                "\"pk_changed\":false}");
    pgw_pgoutput_free(d);
}
END_TEST

/* Groups per (table, operation), in the order they first appeared;
 * transactions in commit order; truncates per target. */
START_TEST(grouping_and_order)
{
    pgw_pgoutput *d = tasks_dec();
    add_notes(d);
    pgo_msg m;
    begin(d, 0x10);
    const char *a[] = {"1", "a", "open", PGO_NULL}, *b[] = {"2", "b", "open", PGO_NULL};
    const char *n1[] = {"x", "body"};
    pgo_insert(&m, T_OID, 4, a);
    feed(d, &m);
    pgo_update(&m, 20, 2, 0, NULL, n1);
    feed(d, &m);
    pgo_insert(&m, T_OID, 4, b);
    feed(d, &m);
    commit(d, 0x10);
    begin(d, 0x20);
    uint32_t oids[] = {T_OID, 20};
    pgo_truncate(&m, 2, oids);
    feed(d, &m);
    commit(d, 0x20);
    EXPECT_NEXT(d, 0x10,
                "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\","
                "\"ids\":[\"1\",\"2\"],\"ids_truncated\":false,\"columns\":null,"
                "\"columns_truncated\":false,\"new\":[{\"status\":\"open\"},{\"status\":\"open\"}],"
                "\"pk_changed\":false}");
    EXPECT_NEXT(d, 0x10,
                "{\"schema\":\"public\",\"table\":\"notes\",\"op\":\"update\",\"ids\":[\"x\"],"
                "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                "\"pk_changed\":false}");
    EXPECT_NEXT(d, 0x20,
                "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"truncate\",\"ids\":null,"
                "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                "\"pk_changed\":false}");
    EXPECT_NEXT(d, 0x20,
                "{\"schema\":\"public\",\"table\":\"notes\",\"op\":\"truncate\",\"ids\":null,"
                "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                "\"pk_changed\":false}");
    EXPECT_NEXT(d, 0, "none");
    pgw_pgoutput_free(d);
}
END_TEST

/* A large transaction is cut into write sets of max_ids_per_write IDs. */
START_TEST(chunking)
{
    pgw_pgoutput_options o = PGW_PGOUTPUT_OPTIONS_INIT;
    o.max_ids_per_write = 1000;
    pgw_pgoutput *d = keys_dec(&o);
    pgo_msg m;
    begin(d, 0x9000);
    char id[16];
    for (int i = 0; i < 2500; i++) {
        snprintf(id, sizeof id, "%d", i);
        const char *r[] = {id, "t", "open", PGO_NULL};
        pgo_insert(&m, T_OID, 4, r);
        feed(d, &m);
    }
    commit(d, 0x9000);
    size_t sizes[3] = {1000, 1000, 500}, seen = 0;
    for (int k = 0; k < 3; k++) {
        pgw_pgoutput_change c;
        ck_assert_int_eq(pgw_pgoutput_next(&c, d), PGW_OK);
        ck_assert_uint_eq(pgw_write_n_ids(c.write), sizes[k]);
        ck_assert(pgw_write_ids_known(c.write));
        seen += pgw_write_n_ids(c.write);
        pgw_write_free(c.write);
    }
    ck_assert_uint_eq(seen, 2500);
    EXPECT_NEXT(d, 0, "none");
    pgw_pgoutput_free(d);
}
END_TEST

/* Past max_txn_bytes the write sets degrade to unknown IDs: memory stays
 * bounded whatever the transaction's size, and the changed columns stay
 * known. */
START_TEST(memory_bound)
{
    pgw_pgoutput_options o = PGW_PGOUTPUT_OPTIONS_INIT;
    o.max_txn_bytes = 64 * 1024;
    pgwt_alloc_install();
    pgw_pgoutput *d = new_dec(&o);
    const char *key[] = {"id"}, *vals[] = {"status"};
    ck_assert_int_eq(pgw_pgoutput_add_target(d, T_OID, "public", "tasks", key, 1, vals, 1, NULL),
                     PGW_OK);
    ck_assert_int_eq(pgw_pgoutput_set_full_rows(d, T_OID, true, NULL), PGW_OK);
    pgo_msg m;
    pgo_relation(&m, T_OID, "public", "tasks", 'f', 4, TASK_COLS);
    feed(d, &m);
    size_t base = pgwt_alloc_get().live_bytes;
    pgwt_alloc_reset();
    begin(d, 0xA000);
    char id[16];
    for (int i = 0; i < 200000; i++) {
        snprintf(id, sizeof id, "%d", i);
        const char *o1[] = {id, "t", "open", PGO_NULL}, *n1[] = {id, "t", "done", PGO_NULL};
        pgo_update(&m, T_OID, 4, 'O', o1, n1);
        feed(d, &m);
    }
    pgw_pgoutput_stats st;
    ck_assert_int_eq(pgw_pgoutput_stats_get(&st, d), PGW_OK);
    ck_assert_uint_eq(st.degraded, 1);
    ck_assert_uint_le(st.peak_txn_bytes, o.max_txn_bytes + 4096);
    ck_assert_uint_le(pgwt_alloc_get().peak_bytes, base + 2 * o.max_txn_bytes);
    commit(d, 0xA000);
    EXPECT_NEXT(d, 0xA000,
                "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\",\"ids\":null,"
                "\"ids_truncated\":false,\"columns\":[\"status\"],\"columns_truncated\":false,"
                "\"pk_changed\":false}");
    EXPECT_NEXT(d, 0, "none");
    ck_assert_int_eq(pgw_pgoutput_stats_get(&st, d), PGW_OK);
    ck_assert_uint_eq(st.rows, 200000);
    ck_assert_uint_eq(st.txn_bytes, 0);
    pgw_pgoutput_free(d);
    ck_assert_uint_eq(pgwt_alloc_get().live, 0);
    pgwt_alloc_uninstall();
}
END_TEST

/* pg_logical_emit_message('pgwitness', payload): transactional ones at
 * their commit, others at once; other prefixes are ignored; a payload that
 * is not faithful is the fallback pgw_payload_decode() gives. */
START_TEST(logical_messages)
{
    pgw_pgoutput *d = tasks_dec();
    pgo_msg m;
    const char *payload = "{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\","
                          "\"op\":\"update\"}";
    pgo_message(&m, 0, 0x50, "pgwitness", payload);
    feed(d, &m);
    EXPECT_NEXT(d, 0x50,
                "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\",\"ids\":null,"
                "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                "\"pk_changed\":false}");
    begin(d, 0x60);
    pgo_message(&m, 1, 0x58, "pgwitness", payload);
    feed(d, &m);
    pgo_message(&m, 1, 0x59, "someone-else", payload);
    feed(d, &m);
    pgo_message(&m, 1, 0x5a, "pgwitness", "not json");
    feed(d, &m);
    EXPECT_NEXT(d, 0, "none");
    commit(d, 0x60);
    EXPECT_NEXT(d, 0x60,
                "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\",\"ids\":null,"
                "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                "\"pk_changed\":false}");
    pgw_pgoutput_change c;
    ck_assert_int_eq(pgw_pgoutput_next(&c, d), PGW_OK);
    ck_assert_int_eq(pgw_write_op(c.write), PGW_OP_RESET);
    ck_assert_int_eq(pgw_write_fallback_status(c.write), PGW_EPARSE);
    pgw_write_free(c.write);
    EXPECT_NEXT(d, 0, "none");
    pgw_pgoutput_free(d);
}
END_TEST

/* The Relation message after an ALTER TABLE: the cache takes the new
 * columns, and the change is reported. */
START_TEST(relation_changes)
{
    pgw_pgoutput *d = tasks_dec();
    pgo_msg m;
    pgw_pgoutput_message info;
    pgo_relation(&m, T_OID, "public", "tasks", 'd', 4, TASK_COLS);
    ck_assert_int_eq(pgw_pgoutput_decode(&info, d, m.b, m.n, NULL), PGW_OK);
    ck_assert_int_eq(info.type, 'R');
    ck_assert(!info.relation_changed);
    const char *cols[] = {"*id", "status", "title"};
    pgo_relation(&m, T_OID, "public", "tasks", 'd', 3, cols);
    ck_assert_int_eq(pgw_pgoutput_decode(&info, d, m.b, m.n, NULL), PGW_OK);
    ck_assert(info.relation_changed);
    /* Outside a transaction, its ddl write set is ready at once. */
    ck_assert_uint_eq(info.ready, 1);
    EXPECT_NEXT(d, 0, DDL_TASKS);
    begin(d, 0x70);
    const char *r[] = {"1", "open", "t"};
    pgo_insert(&m, T_OID, 3, r);
    feed(d, &m);
    commit(d, 0x70);
    EXPECT_NEXT(d, 0x70,
                "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\",\"ids\":[\"1\"],"
                "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                "\"new\":[{\"status\":\"open\"}],\"pk_changed\":false}");
    /* A new connection forgets the relations: a walsender sends them
     * again before using them. */
    pgw_pgoutput_restart(d);
    begin(d, 0x80);
    pgo_insert(&m, T_OID, 3, r);
    ck_assert_str_eq(feed_bad(d, &m, PGW_EPARSE),
                     "Insert message: relation 16384 has had no Relation message at byte 1 of 29");
    pgw_pgoutput_free(d);
}
END_TEST

/* ------------------------------------------------------------------ */
/* the table's definition changed while streaming                      */

#define INSERT_1                                                                          \
    "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\",\"ids\":[\"1\"],"       \
    "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"              \
    "\"new\":[{\"status\":\"open\"}],\"pk_changed\":false}"

/* Feeds a Relation message; returns whether the decoder took it for a
 * change of the relation's definition. */
static bool relation(pgw_pgoutput *d, const pgo_msg *m)
{
    pgw_pgoutput_message info;
    pgw_error e;
    pgw_error_clear(&e);
    ck_assert_msg(pgw_pgoutput_decode(&info, d, m->b, m->n, &e) == PGW_OK, "%s", e.message);
    ck_assert_int_eq(info.type, 'R');
    return info.relation_changed;
}

/* pgw_pgoutput_expect_relation: a relation known only from the catalog
 * is compared with its first Relation message; the same definition gives
 * nothing, another (a column added) the ddl write set; a relation known
 * already is kept (EEXISTS); errors. */
START_TEST(expected_relations)
{
    pgw_pgoutput *d = new_dec(NULL);
    const char *key[] = {"id"};
    ck_assert_int_eq(pgw_pgoutput_add_target(d, T_OID, "public", "tasks", key, 1, NULL, 0, NULL),
                     PGW_OK);
    const char *names[] = {"id", "title", "status", "notes"};
    const uint32_t types[4] = {25, 25, 25, 25}; /* text, as pgo_relation() sends */
    const int32_t mods[4] = {-1, -1, -1, -1};
    pgw_error e;
    ck_assert_int_eq(pgw_pgoutput_expect_relation(d, T_OID, "public", "tasks", 4, names, types,
                                                  mods, &e),
                     PGW_OK);
    ck_assert_int_eq(pgw_pgoutput_expect_relation(d, T_OID, "public", "tasks", 4, names, types,
                                                  mods, &e),
                     PGW_EEXISTS);
    pgo_msg m;
    pgo_relation(&m, T_OID, "public", "tasks", 'd', 4, TASK_COLS);
    ck_assert(!relation(d, &m)); /* as declared */
    pgw_pgoutput_free(d);
    /* declared with three columns; the first Relation message has four */
    d = new_dec(NULL);
    ck_assert_int_eq(pgw_pgoutput_add_target(d, T_OID, "public", "tasks", key, 1, NULL, 0, NULL),
                     PGW_OK);
    ck_assert_int_eq(pgw_pgoutput_expect_relation(d, T_OID, "public", "tasks", 3, names, types,
                                                  mods, NULL),
                     PGW_OK);
    ck_assert(relation(d, &m));
    EXPECT_NEXT(d, 0, DDL_TASKS);
    EXPECT_NEXT(d, 0, "none");
    ck_assert_int_eq(pgw_pgoutput_expect_relation(NULL, T_OID, "public", "t", 0, NULL, NULL,
                                                  NULL, &e),
                     PGW_EINVAL);
    ck_assert_str_eq(e.message, "pgoutput_expect_relation: decoder is NULL");
    ck_assert_int_eq(pgw_pgoutput_expect_relation(d, 0, "public", "t", 0, NULL, NULL, NULL, &e),
                     PGW_EINVAL);
    ck_assert_int_eq(pgw_pgoutput_expect_relation(d, 7, "public", "t", 2, NULL, types, mods, &e),
                     PGW_EINVAL);
    ck_assert_str_eq(e.message, "pgoutput_expect_relation: a NULL name or column list");
    begin(d, 0x2000);
    ck_assert_int_eq(pgw_pgoutput_expect_relation(d, 7, "public", "t", 0, NULL, NULL, NULL, &e),
                     PGW_ESTATE);
    pgw_pgoutput_free(d);
}
END_TEST

/* pgw_pgoutput_relation_name: the name of the last Relation message,
 * which a host compares with the names it gave targets; "" for
 * pg_catalog as the protocol sends it. */
START_TEST(relation_names)
{
    pgw_pgoutput *d = new_dec(NULL);
    const char *schema = "x", *table = "y";
    ck_assert_int_eq(pgw_pgoutput_relation_name(&schema, &table, d, T_OID), PGW_ENOTFOUND);
    ck_assert_str_eq(schema, "x");
    pgo_msg m;
    pgo_relation(&m, T_OID, "public", "tasks", 'd', 4, TASK_COLS);
    relation(d, &m);
    ck_assert_int_eq(pgw_pgoutput_relation_name(&schema, &table, d, T_OID), PGW_OK);
    ck_assert_str_eq(schema, "public");
    ck_assert_str_eq(table, "tasks");
    pgo_relation(&m, T_OID, "", "tasks2", 'd', 4, TASK_COLS);
    relation(d, &m);
    ck_assert_int_eq(pgw_pgoutput_relation_name(&schema, &table, d, T_OID), PGW_OK);
    ck_assert_str_eq(schema, "");
    ck_assert_str_eq(table, "tasks2");
    ck_assert_int_eq(pgw_pgoutput_relation_name(NULL, &table, d, T_OID), PGW_EINVAL);
    ck_assert_int_eq(pgw_pgoutput_relation_name(&schema, NULL, d, T_OID), PGW_EINVAL);
    ck_assert_int_eq(pgw_pgoutput_relation_name(&schema, &table, NULL, T_OID), PGW_EINVAL);
    ck_assert_int_eq(pgw_pgoutput_relation_name(&schema, &table, d, 0), PGW_EINVAL);
    pgw_pgoutput_free(d);
}
END_TEST

/* In transaction lsn: the Relation message rel (a change of definition
 * when `changed`), then an insert of row 1 of n columns (status "open" at
 * position status_at); at the commit, the ddl write set (when changed)
 * then the insert. */
static void relation_then_insert(pgw_pgoutput *d, uint64_t lsn, const pgo_msg *rel,
                                 bool changed, size_t n, size_t status_at)
{
    const char *row[] = {"1", "a", "a", PGO_NULL, PGO_NULL};
    row[status_at] = "open";
    pgo_msg m;
    begin(d, lsn);
    ck_assert(relation(d, rel) == changed);
    pgo_insert(&m, T_OID, n, row);
    feed(d, &m);
    EXPECT_NEXT(d, 0, "none");
    commit(d, lsn);
    if (changed)
        EXPECT_NEXT(d, lsn, DDL_TASKS);
    EXPECT_NEXT(d, lsn, INSERT_1);
    EXPECT_NEXT(d, 0, "none");
}

/* Each change of the column list a Relation message can show (a renamed
 * column, a dropped one, an added one, a changed type, a changed type
 * modifier, a moved column) and a renamed relation give a ddl write set at
 * its transaction's commit, with the commit LSN, before the transaction's
 * write sets for the table; one per transaction and target however many
 * changes it saw. The same definition sent again (pgoutput resends it
 * after any invalidation of the relation), or another replica identity
 * alone, is no change. */
START_TEST(ddl_column_changes)
{
    pgw_pgoutput *d = tasks_dec();
    pgo_msg m;
    /* ALTER TABLE tasks RENAME COLUMN notes TO remarks */
    const char *renamed[] = {"*id", "title", "status", "remarks"};
    pgo_relation(&m, T_OID, "public", "tasks", 'd', 4, renamed);
    relation_then_insert(d, 0x1000, &m, true, 4, 2);
    /* ALTER TABLE tasks DROP COLUMN remarks */
    const char *dropped[] = {"*id", "title", "status"};
    pgo_relation(&m, T_OID, "public", "tasks", 'd', 3, dropped);
    relation_then_insert(d, 0x1100, &m, true, 3, 2);
    /* ALTER TABLE tasks ALTER id TYPE int4, then title TYPE varchar(100),
     * in one transaction: one ddl write set. */
    const uint32_t text3[] = {23, 25, 25}, varchar3[] = {23, 1043, 25};
    const int32_t none3[] = {-1, -1, -1}, v100[] = {-1, 104, -1}, v200[] = {-1, 204, -1};
    begin(d, 0x1200);
    pgo_relation_typed(&m, T_OID, "public", "tasks", 'd', 3, dropped, text3, none3);
    ck_assert(relation(d, &m));
    pgo_relation_typed(&m, T_OID, "public", "tasks", 'd', 3, dropped, varchar3, v100);
    ck_assert(relation(d, &m));
    commit(d, 0x1200);
    EXPECT_NEXT(d, 0x1200, DDL_TASKS);
    EXPECT_NEXT(d, 0, "none");
    /* ... TYPE varchar(200): the modifier alone */
    pgo_relation_typed(&m, T_OID, "public", "tasks", 'd', 3, dropped, varchar3, v200);
    relation_then_insert(d, 0x1300, &m, true, 3, 2);
    /* ALTER TABLE tasks ADD COLUMN due date */
    const char *added[] = {"*id", "title", "status", "due"};
    const uint32_t t4[] = {23, 1043, 25, 1082};
    const int32_t m4[] = {-1, 204, -1, -1};
    pgo_relation_typed(&m, T_OID, "public", "tasks", 'd', 4, added, t4, m4);
    relation_then_insert(d, 0x1400, &m, true, 4, 2);
    /* Not changes: the same definition again, REPLICA IDENTITY FULL (every
     * column flagged as key). */
    relation_then_insert(d, 0x1500, &m, false, 4, 2);
    const char *all_keys[] = {"*id", "*title", "*status", "*due"};
    pgo_relation_typed(&m, T_OID, "public", "tasks", 'f', 4, all_keys, t4, m4);
    relation_then_insert(d, 0x1510, &m, false, 4, 2);
    /* A column moved (dropped and added again at the end): the same
     * names at other positions. */
    const char *moved[] = {"*id", "status", "title", "due"};
    const uint32_t tm[] = {23, 25, 1043, 1082};
    const int32_t mm[] = {-1, -1, 204, -1};
    pgo_relation_typed(&m, T_OID, "public", "tasks", 'd', 4, moved, tm, mm);
    relation_then_insert(d, 0x1600, &m, true, 4, 1);
    /* ALTER TABLE tasks RENAME TO jobs (and SET SCHEMA): the readers of
     * the target the host configured refresh, and so do those of the
     * table's new name (subscriptions written against the table as it is
     * now). */
    pgo_relation_typed(&m, T_OID, "app", "jobs", 'd', 4, moved, tm, mm);
    const char *row[] = {"1", "open", "a", PGO_NULL};
    begin(d, 0x1700);
    ck_assert(relation(d, &m));
    pgo_insert(&m, T_OID, 4, row);
    feed(d, &m);
    commit(d, 0x1700);
    EXPECT_NEXT(d, 0x1700, DDL_TASKS);
    EXPECT_NEXT(d, 0x1700, DDL_OF("app", "jobs"));
    EXPECT_NEXT(d, 0x1700, INSERT_1);
    EXPECT_NEXT(d, 0, "none");
    pgw_pgoutput_stats st;
    ck_assert_int_eq(pgw_pgoutput_stats_get(&st, d), PGW_OK);
    ck_assert_uint_eq(st.writes, 16);
    pgw_pgoutput_free(d);
}
END_TEST

/* The definition change and the transaction's other writes: the ddl write
 * set comes first even when the table was written before the ALTER in the
 * same transaction; a transaction that writes another table after the
 * ALTER gives the ddl write set and that table's; an update of an unread
 * column after ADD COLUMN skips a subscription the ddl refreshes. */
START_TEST(ddl_and_the_transactions_writes)
{
    pgw_pgoutput *d = full_dec();
    add_notes(d);
    pgo_msg m;
    /* INSERT INTO notes; INSERT INTO tasks; ALTER TABLE tasks ...; INSERT
     * INTO tasks: a Relation message between the two inserts. */
    begin(d, 0x2000);
    const char *n1[] = {"x", "hello"};
    pgo_insert(&m, 20, 2, n1);
    feed(d, &m);
    const char *r1[] = {"1", "a", "open", PGO_NULL}, *r2[] = {"2", "b", "done", PGO_NULL, "t"};
    pgo_insert(&m, T_OID, 4, r1);
    feed(d, &m);
    const char *five[] = {"*id", "title", "status", "notes", "urgent"};
    pgo_relation(&m, T_OID, "public", "tasks", 'f', 5, five);
    ck_assert(relation(d, &m));
    pgo_insert(&m, T_OID, 5, r2);
    feed(d, &m);
    commit(d, 0x2000);
    EXPECT_NEXT(d, 0x2000,
                "{\"schema\":\"public\",\"table\":\"notes\",\"op\":\"insert\",\"ids\":[\"x\"],"
                "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                "\"pk_changed\":false}");
    EXPECT_NEXT(d, 0x2000, DDL_TASKS);
    EXPECT_NEXT(d, 0x2000,
                "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\","
                "\"ids\":[\"1\",\"2\"],\"ids_truncated\":false,\"columns\":null,"
                "\"columns_truncated\":false,\"new\":[{\"status\":\"open\"},"
                "{\"status\":\"done\"}],\"pk_changed\":false}");
    EXPECT_NEXT(d, 0, "none");
    /* ALTER TABLE tasks DROP COLUMN urgent; INSERT INTO notes: the
     * Relation message of tasks with no row of tasks after it (pgoutput
     * sends it before a change; here the change is to notes). */
    begin(d, 0x2100);
    pgo_relation(&m, T_OID, "public", "tasks", 'f', 4, TASK_COLS);
    ck_assert(relation(d, &m));
    pgo_insert(&m, 20, 2, n1);
    feed(d, &m);
    commit(d, 0x2100);
    EXPECT_NEXT(d, 0x2100, DDL_TASKS);
    EXPECT_NEXT(d, 0x2100,
                "{\"schema\":\"public\",\"table\":\"notes\",\"op\":\"insert\",\"ids\":[\"x\"],"
                "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                "\"pk_changed\":false}");
    /* ALTER TABLE tasks RENAME COLUMN status TO state; UPDATE tasks SET
     * title = ...: the update alone changed a column the subscription does
     * not read (skipped), the ddl refreshes it: its column is gone. */
    const char *state[] = {"*id", "title", "state", "notes"};
    begin(d, 0x2200);
    pgo_relation(&m, T_OID, "public", "tasks", 'f', 4, state);
    ck_assert(relation(d, &m));
    const char *o[] = {"1", "a", "open", PGO_NULL}, *n[] = {"1", "b", "open", PGO_NULL};
    pgo_update(&m, T_OID, 4, 'O', o, n);
    feed(d, &m);
    commit(d, 0x2200);
    pgw_deps *deps = NULL;
    size_t t;
    const char *read[] = {"status"};
    ck_assert_int_eq(pgw_deps_new(&deps, &ACME, "tasks.status", NULL), PGW_OK);
    ck_assert_int_eq(pgw_deps_add_table(&t, deps, "public", "tasks", NULL), PGW_OK);
    ck_assert_int_eq(pgw_deps_set_columns(deps, t, read, 1, NULL), PGW_OK);
    pgw_reason want[2] = {PGW_REASON_DDL, PGW_REASON_COLUMNS_DISJOINT};
    for (int k = 0; k < 2; k++) {
        pgw_pgoutput_change c;
        ck_assert_int_eq(pgw_pgoutput_next(&c, d), PGW_OK);
        ck_assert_int_eq(pgw_write_op(c.write), k ? PGW_OP_UPDATE : PGW_OP_DDL);
        pgw_verdict v;
        ck_assert_int_eq(pgw_decide(&v, deps, c.write, NULL), PGW_OK);
        ck_assert_int_eq(v.reason, want[k]);
        ck_assert(v.refresh == (k == 0));
        pgw_write_free(c.write);
    }
    EXPECT_NEXT(d, 0, "none");
    pgw_deps_free(deps);
    pgw_pgoutput_free(d);
}
END_TEST

#define C_OID 16500u /* an inheritance child, tasks_archive */

/* The ddl write set goes to the targets the decoder reports the
 * relation's rows under: a partition's watched root, an inheritance
 * child's parent and the child itself, in target order; a relation
 * without a target under its own name, as its rows are. */
START_TEST(ddl_targets)
{
    pgw_pgoutput *d = new_dec(NULL);
    const char *key[] = {"id"};
    ck_assert_int_eq(pgw_pgoutput_add_target(d, P_OID, "public", "tasks", key, 1, NULL, 0, NULL),
                     PGW_OK);
    ck_assert_int_eq(pgw_pgoutput_add_target(d, C_OID, "public", "tasks_archive", key, 1, NULL,
                                             0, NULL),
                     PGW_OK);
    ck_assert_int_eq(pgw_pgoutput_add_target(d, C_OID, "public", "tasks", key, 1, NULL, 0, NULL),
                     PGW_OK);
    pgo_msg m;
    pgo_relation(&m, P_OID, "public", "tasks_p1", 'd', 4, TASK_COLS);
    ck_assert(!relation(d, &m));
    pgo_relation(&m, C_OID, "public", "tasks_archive", 'd', 4, TASK_COLS);
    ck_assert(!relation(d, &m));
    pgo_relation(&m, 99, "", "loose", 'd', 4, TASK_COLS);
    ck_assert(!relation(d, &m));
    EXPECT_NEXT(d, 0, "none");
    const char *renamed[] = {"*id", "name", "status", "notes"};
    begin(d, 0x3000);
    pgo_relation(&m, P_OID, "public", "tasks_p1", 'd', 4, renamed);
    ck_assert(relation(d, &m));
    pgo_relation(&m, C_OID, "public", "tasks_archive", 'd', 4, renamed);
    ck_assert(relation(d, &m));
    pgo_relation(&m, 99, "", "loose", 'd', 4, renamed);
    ck_assert(relation(d, &m));
    commit(d, 0x3000);
    /* The partition's and the child's ddl for tasks are one write set:
     * they are one target table. */
    EXPECT_NEXT(d, 0x3000, DDL_TASKS);
    EXPECT_NEXT(d, 0x3000, DDL_OF("public", "tasks_archive"));
    EXPECT_NEXT(d, 0x3000, DDL_OF("pg_catalog", "loose"));
    EXPECT_NEXT(d, 0, "none");
    pgw_pgoutput_free(d);
}
END_TEST

/* Past max_txn_bytes the rows are forgotten, not the ddl: its write set
 * comes first, then the degraded ones (unknown IDs), whether the ALTER
 * came before or after the budget ran out. A spoiled transaction gives a
 * reset, which covers the ddl too; the relation cache still takes the new
 * columns, so the next transaction decodes. */
START_TEST(ddl_degraded_and_spoiled)
{
    pgw_pgoutput_options o = PGW_PGOUTPUT_OPTIONS_INIT;
    o.max_txn_bytes = 1024;
    pgw_pgoutput *d = keys_dec(&o);
    pgo_msg m;
    const char *renamed[] = {"*id", "name", "status", "notes"};
    const char *unknown_ids =
        "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\",\"ids\":null,"
        "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
        "\"pk_changed\":false}";
    char id[16];
    for (int late = 0; late < 2; late++) {
        uint64_t lsn = 0x4000 + (uint64_t)late * 0x100;
        begin(d, lsn);
        if (!late) {
            pgo_relation(&m, T_OID, "public", "tasks", 'd', 4, renamed);
            ck_assert(relation(d, &m));
        }
        for (int i = 0; i < 200; i++) {
            snprintf(id, sizeof id, "%d", i);
            const char *r[] = {id, "t", "open", PGO_NULL};
            pgo_insert(&m, T_OID, 4, r);
            feed(d, &m);
        }
        if (late) {
            pgo_relation(&m, T_OID, "public", "tasks", 'd', 4, TASK_COLS);
            ck_assert(relation(d, &m));
            const char *r[] = {"x", "t", "open", PGO_NULL};
            pgo_insert(&m, T_OID, 4, r);
            feed(d, &m);
        }
        commit(d, lsn);
        EXPECT_NEXT(d, lsn, DDL_TASKS);
        EXPECT_NEXT(d, lsn, unknown_ids);
        EXPECT_NEXT(d, 0, "none");
    }
    pgw_pgoutput_stats st;
    ck_assert_int_eq(pgw_pgoutput_stats_get(&st, d), PGW_OK);
    ck_assert_uint_eq(st.degraded, 2);
    /* Spoiled after the ALTER, or before it. */
    for (int before = 0; before < 2; before++) {
        uint64_t lsn = 0x4200 + (uint64_t)before * 0x100;
        const char *const *cols = before ? TASK_COLS : renamed;
        begin(d, lsn);
        pgo_msg bad;
        pgo_begin(&bad, 1, 1);
        bad.b[0] = 'Z';
        if (before)
            feed_bad(d, &bad, PGW_EPARSE);
        pgo_relation(&m, T_OID, "public", "tasks", 'd', 4, cols);
        ck_assert(relation(d, &m));
        if (!before)
            feed_bad(d, &bad, PGW_EPARSE);
        const char *r[] = {"1", "a", "open", PGO_NULL};
        pgo_insert(&m, T_OID, 4, r);
        feed(d, &m);
        commit(d, lsn);
        EXPECT_NEXT(d, lsn, "reset");
        EXPECT_NEXT(d, 0, "none");
    }
    /* The cache holds the last columns: a 4-column insert decodes, a
     * 3-column one does not. */
    begin(d, 0x4400);
    const char *r4[] = {"7", "a", "open", PGO_NULL}, *r3[] = {"7", "a", "open"};
    pgo_insert(&m, T_OID, 4, r4);
    feed(d, &m);
    commit(d, 0x4400);
    EXPECT_NEXT(d, 0x4400,
                "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\",\"ids\":[\"7\"],"
                "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                "\"pk_changed\":false}");
    begin(d, 0x4500);
    pgo_insert(&m, T_OID, 3, r3);
    feed_bad(d, &m, PGW_EPARSE);
    commit(d, 0x4500);
    EXPECT_NEXT(d, 0x4500, "reset");
    pgw_pgoutput_free(d);
}
END_TEST

/* A new connection (pgw_pgoutput_restart()) keeps the relations it knew,
 * for comparison only: the same definition sent again is no change, a
 * definition that changed while the stream was away is one, and so is a
 * change whose transaction the lost connection never committed (the
 * resumed stream sends it again, with the new definition the cache
 * already holds). A change still needs the new connection's Relation
 * message. A decoder made afresh (a restarted host) knows no relation: its
 * first Relation message of each is no change. */
START_TEST(ddl_across_restart)
{
    pgw_pgoutput *d = tasks_dec();
    pgo_msg m;
    const char *r4[] = {"1", "a", "open", PGO_NULL};
    pgw_pgoutput_restart(d);
    begin(d, 0x5000);
    pgo_insert(&m, T_OID, 4, r4);
    ck_assert_str_eq(feed_bad(d, &m, PGW_EPARSE),
                     "Insert message: relation 16384 has had no Relation message at byte 1 of 30");
    commit(d, 0x5000);
    EXPECT_NEXT(d, 0x5000, "reset");
    /* The same definition: no change. */
    begin(d, 0x5100);
    pgo_relation(&m, T_OID, "public", "tasks", 'd', 4, TASK_COLS);
    ck_assert(!relation(d, &m));
    pgo_insert(&m, T_OID, 4, r4);
    feed(d, &m);
    commit(d, 0x5100);
    EXPECT_NEXT(d, 0x5100, INSERT_1);
    EXPECT_NEXT(d, 0, "none");
    /* Changed while away. */
    pgw_pgoutput_restart(d);
    const char *renamed[] = {"*id", "name", "status", "notes"};
    begin(d, 0x5200);
    pgo_relation(&m, T_OID, "public", "tasks", 'd', 4, renamed);
    ck_assert(relation(d, &m));
    pgo_insert(&m, T_OID, 4, r4);
    feed(d, &m);
    commit(d, 0x5200);
    EXPECT_NEXT(d, 0x5200, DDL_TASKS);
    EXPECT_NEXT(d, 0x5200, INSERT_1);
    /* Changed in a transaction the connection lost before its Commit. */
    const char *dropped[] = {"*id", "name", "status"};
    const char *r3[] = {"1", "a", "open"};
    begin(d, 0x5300);
    pgo_relation(&m, T_OID, "public", "tasks", 'd', 3, dropped);
    ck_assert(relation(d, &m));
    pgo_insert(&m, T_OID, 3, r3);
    feed(d, &m);
    pgw_pgoutput_restart(d);
    ck_assert(!pgw_pgoutput_in_transaction(d));
    EXPECT_NEXT(d, 0, "none");
    begin(d, 0x5300); /* sent again */
    pgo_relation(&m, T_OID, "public", "tasks", 'd', 3, dropped);
    ck_assert(relation(d, &m));
    pgo_insert(&m, T_OID, 3, r3);
    feed(d, &m);
    commit(d, 0x5300);
    EXPECT_NEXT(d, 0x5300, DDL_TASKS);
    EXPECT_NEXT(d, 0x5300, INSERT_1);
    EXPECT_NEXT(d, 0, "none");
    /* ... once: the next Relation message of that definition is none. */
    begin(d, 0x5400);
    pgo_relation(&m, T_OID, "public", "tasks", 'd', 3, dropped);
    ck_assert(!relation(d, &m));
    commit(d, 0x5400);
    EXPECT_NEXT(d, 0, "none");
    /* A lost transaction that only resent the definition leaves nothing
     * pending. */
    begin(d, 0x5500);
    pgo_relation(&m, T_OID, "public", "tasks", 'd', 3, dropped);
    ck_assert(!relation(d, &m));
    pgw_pgoutput_restart(d);
    begin(d, 0x5500);
    pgo_relation(&m, T_OID, "public", "tasks", 'd', 3, dropped);
    ck_assert(!relation(d, &m));
    commit(d, 0x5500);
    EXPECT_NEXT(d, 0, "none");
    pgw_pgoutput_free(d);
    /* A fresh decoder: nothing to compare with. */
    d = new_dec(NULL);
    pgo_relation(&m, T_OID, "public", "tasks", 'd', 3, dropped);
    ck_assert(!relation(d, &m));
    EXPECT_NEXT(d, 0, "none");
    pgw_pgoutput_free(d);
}
END_TEST

/* The announcement of a ddl the stream cannot see (pgoutput.h): a logical
 * message with the prefix pgwitness and the ddl payload, transactional
 * (at its commit, in its place among the transaction's write sets) or not
 * (at once, with the message's LSN). One that names rows is malformed: an
 * unknown write to the table. */
START_TEST(ddl_messages)
{
    pgw_pgoutput *d = tasks_dec();
    pgo_msg m;
    const char *ddl = "{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"ddl\"}";
    pgo_message(&m, 0, 0x6010, "pgwitness", ddl);
    pgw_pgoutput_message info;
    ck_assert_int_eq(pgw_pgoutput_decode(&info, d, m.b, m.n, NULL), PGW_OK);
    ck_assert_uint_eq(info.ready, 1);
    EXPECT_NEXT(d, 0x6010, DDL_TASKS);
    begin(d, 0x6100);
    const char *r4[] = {"1", "a", "open", PGO_NULL};
    pgo_insert(&m, T_OID, 4, r4);
    feed(d, &m);
    pgo_message(&m, 1, 0x6050, "pgwitness", ddl);
    feed(d, &m);
    pgo_message(&m, 1, 0x6060, "pgwitness",
                "{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"ddl\","
                "\"columns\":[\"title\"]}");
    feed(d, &m);
    EXPECT_NEXT(d, 0, "none");
    commit(d, 0x6100);
    EXPECT_NEXT(d, 0x6100, INSERT_1);
    EXPECT_NEXT(d, 0x6100, DDL_TASKS);
    pgw_pgoutput_change c;
    ck_assert_int_eq(pgw_pgoutput_next(&c, d), PGW_OK);
    ck_assert_uint_eq(c.lsn, 0x6100);
    ck_assert_int_eq(pgw_write_op(c.write), PGW_OP_UNKNOWN);
    ck_assert_str_eq(pgw_write_table(c.write), "tasks");
    ck_assert_int_eq(pgw_write_fallback_status(c.write), PGW_EPARSE);
    ck_assert_str_eq(pgw_write_fallback_message(c.write), "$: a ddl has no \"columns\"");
    pgw_write_free(c.write);
    EXPECT_NEXT(d, 0, "none");
    pgw_pgoutput_free(d);
}
END_TEST

/* A transactional truncate or ddl message for a table the transaction
 * already truncates, or already announced, adds nothing (TRUNCATE root:
 * the root's Truncate, then each partition trigger's message naming the
 * root; ALTERs announced one by one); one for another table, or another
 * operation, is kept. */
START_TEST(table_level_messages_once)
{
    pgw_pgoutput *d = tasks_dec();
    pgo_msg m;
    const char *trunc = "{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\","
                        "\"op\":\"truncate\",\"ids\":null,\"ids_truncated\":false,"
                        "\"columns\":null,\"columns_truncated\":false,\"pk_changed\":false}";
    const char *ddl = "{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"ddl\"}";
    const char *other = "{\"version\":1,\"schema\":\"public\",\"table\":\"other\",\"op\":\"ddl\"}";
    begin(d, 0x7100);
    uint32_t oids[] = {T_OID};
    pgo_truncate(&m, 1, oids);
    feed(d, &m);
    pgo_message(&m, 1, 0x7010, "pgwitness", trunc);
    feed(d, &m);
    pgo_message(&m, 1, 0x7020, "pgwitness", trunc);
    feed(d, &m);
    pgo_message(&m, 1, 0x7030, "pgwitness", ddl);
    feed(d, &m);
    pgo_message(&m, 1, 0x7040, "pgwitness", ddl);
    feed(d, &m);
    pgo_message(&m, 1, 0x7050, "pgwitness", other);
    feed(d, &m);
    commit(d, 0x7100);
    ck_assert_str_eq(next_json(d, 0x7100),
                     "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"truncate\",\"ids\":null,"
                     "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                     "\"pk_changed\":false}");
    EXPECT_NEXT(d, 0x7100, DDL_TASKS);
    EXPECT_NEXT(d, 0x7100, DDL_OF("public", "other"));
    EXPECT_NEXT(d, 0, "none");
    pgw_pgoutput_free(d);
}
END_TEST

/* The ddl paths under allocation failure: the Relation message that
 * changed (in a transaction, placed before an earlier write of the table;
 * outside one; for a target and for an own name), at every allocation.
 * Every call returns PGW_OK, PGW_ENOMEM or (a change after a Relation
 * message that could not be kept) PGW_EPARSE; each transaction gives its
 * write sets whole or a reset; a change outside a transaction its ddl
 * write set or a reset; nothing leaks. */
static void ddl_scenario(pgw_pgoutput *d, size_t *resets, size_t *writes)
{
    pgo_msg m;
    const char *renamed[] = {"*id", "name", "status", "notes"};
    const char *other[] = {"*id", "title", "state", "notes"};
    const char *r[] = {"1", "a", "open", PGO_NULL};
    const char *const *cols = renamed;
    int rc;
    for (int round = 0; round < 2; round++) {
        /* The relations as a new connection sends them (round 1: a change
         * from what round 0 left, its ddl write sets drained here). */
        pgo_relation(&m, T_OID, "public", "tasks", 'd', 4, TASK_COLS);
        rc = pgw_pgoutput_decode(NULL, d, m.b, m.n, NULL);
        ck_assert(rc == PGW_OK || rc == PGW_ENOMEM);
        pgo_relation(&m, 99, "public", "loose", 'd', 4, TASK_COLS);
        rc = pgw_pgoutput_decode(NULL, d, m.b, m.n, NULL);
        ck_assert(rc == PGW_OK || rc == PGW_ENOMEM);
        /* Whatever those left queued (a reset, or ddl write sets). */
        pgw_pgoutput_change c;
        while (pgw_pgoutput_next(&c, d) == PGW_OK) {
            if (c.reset)
                (*resets)++;
            pgw_write_free(c.write);
        }
        uint64_t lsn = 0x100 * (uint64_t)(round + 1);
        pgo_begin(&m, lsn, 1);
        ck_assert_int_eq(pgw_pgoutput_decode(NULL, d, m.b, m.n, NULL), PGW_OK);
        for (int step = 0; step < 5; step++) {
            switch (step) {
            case 0: pgo_insert(&m, T_OID, 4, r); break;
            case 1: pgo_relation(&m, T_OID, "public", "tasks", 'd', 4, cols); break;
            case 2: pgo_insert(&m, T_OID, 4, r); break;
            case 3: pgo_relation(&m, 99, "public", "loose", 'd', 4, cols); break;
            default: pgo_insert(&m, 99, 4, r); break;
            }
            rc = pgw_pgoutput_decode(NULL, d, m.b, m.n, NULL);
            ck_assert(rc == PGW_OK || rc == PGW_ENOMEM || rc == PGW_EPARSE);
        }
        pgo_commit(&m, lsn, lsn + 0x30);
        ck_assert_int_eq(pgw_pgoutput_decode(NULL, d, m.b, m.n, NULL), PGW_OK);
        size_t got = 0;
        bool reset = false;
        while (pgw_pgoutput_next(&c, d) == PGW_OK) {
            if (c.reset) {
                reset = true;
                (*resets)++;
                continue;
            }
            /* After an earlier reset a Relation message may not have
             * been kept: the next one is then no change. */
            pgw_op want[4] = {PGW_OP_DDL, PGW_OP_INSERT, PGW_OP_DDL, PGW_OP_INSERT};
            ck_assert(got < 4);
            ck_assert_msg(*resets > 0 || pgw_write_op(c.write) == want[got],
                          "round %d write %zu: %s %s", round, got,
                          pgw_op_name(pgw_write_op(c.write)), pgw_write_table(c.write));
            got++;
            pgw_write_free(c.write);
        }
        /* ddl tasks, insert tasks, ddl loose, insert loose; or a reset */
        ck_assert_msg(reset || got == 4 || (*resets > 0 && got >= 2), "round %d gave %zu write sets",
                      round, got);
        *writes += got;
        /* Outside a transaction: the ddl at once, or a reset. */
        pgo_relation(&m, T_OID, "public", "tasks", 'd', 4, other);
        rc = pgw_pgoutput_decode(NULL, d, m.b, m.n, NULL);
        ck_assert(rc == PGW_OK || rc == PGW_ENOMEM);
        while (pgw_pgoutput_next(&c, d) == PGW_OK) {
            if (c.reset) {
                (*resets)++;
                continue;
            }
            ck_assert_int_eq(pgw_write_op(c.write), PGW_OP_DDL);
            (*writes)++;
            pgw_write_free(c.write);
        }
    }
}

START_TEST(ddl_allocation_failure)
{
    pgwt_alloc_install();
    const char *key[] = {"id"}, *vals[] = {"status"};
    pgw_pgoutput *d = new_dec(NULL);
    ck_assert_int_eq(pgw_pgoutput_add_target(d, T_OID, "public", "tasks", key, 1, vals, 1, NULL),
                     PGW_OK);
    size_t writes = 0, resets = 0;
    size_t before = pgwt_alloc_get().calls;
    ddl_scenario(d, &resets, &writes);
    size_t calls = pgwt_alloc_get().calls - before;
    pgw_pgoutput_free(d);
    /* Each round: 4 in the transaction, 1 outside it. */
    ck_assert_uint_eq(resets, 0);
    ck_assert_uint_eq(writes, 10);
    ck_assert_uint_eq(pgwt_alloc_get().live, 0);
    for (size_t n = 1; n <= calls; n++) {
        d = new_dec(NULL);
        ck_assert_int_eq(pgw_pgoutput_add_target(d, T_OID, "public", "tasks", key, 1, vals, 1,
                                                 NULL),
                         PGW_OK);
        writes = resets = 0;
        pgwt_alloc_fail_at(n);
        ddl_scenario(d, &resets, &writes);
        bool failed = pgwt_alloc_failed();
        pgwt_alloc_fail_at(0);
        ck_assert(failed);
        ck_assert_msg(resets > 0 || writes == 10, "allocation %zu lost a write set (%zu)", n,
                      writes);
        pgw_pgoutput_free(d);
        ck_assert_msg(pgwt_alloc_get().live == 0, "allocation %zu leaks", n);
    }
    pgwt_alloc_uninstall();
}
END_TEST

/* Every malformed message: its type, what is wrong and the byte offset. */
START_TEST(malformed_messages)
{
    pgw_pgoutput *d = tasks_dec();
    pgo_msg m;
    struct {
        const char *what;
        size_t cut; /* bytes kept of the well-formed message; 0: as built */
        const char *want;
    } cases[] = {
        {"empty", 0, "pgoutput: the message ends inside the message type at byte 0 of 0"},
    };
    m.n = 0;
    ck_assert_str_eq(feed_bad(d, &m, PGW_EPARSE), cases[0].want);

    pgo_begin(&m, 0x10, 1);
    m.n -= 2;
    ck_assert_str_eq(feed_bad(d, &m, PGW_EPARSE),
                     "Begin message: the message ends inside the transaction ID at byte 17 of 19");
    pgo_begin(&m, 0x10, 1);
    m.b[m.n++] = 9;
    ck_assert_str_eq(feed_bad(d, &m, PGW_EPARSE),
                     "Begin message: unexpected bytes after the message at byte 21 of 22");

    const char *r[] = {"1", "a", "open", PGO_NULL};
    pgo_insert(&m, T_OID, 4, r);
    ck_assert_str_eq(feed_bad(d, &m, PGW_EPARSE),
                     "Insert message: a change outside a transaction (no Begin) at byte 0 of 30");
    pgo_commit(&m, 0x10, 0x20);
    ck_assert_str_eq(feed_bad(d, &m, PGW_EPARSE),
                     "Commit message: a Commit outside a transaction (no Begin) at byte 0 of 26");
    /* Each of those outside a transaction queued a reset (one pending). */
    EXPECT_NEXT(d, 0, "reset");
    EXPECT_NEXT(d, 0, "none");

    begin(d, 0x100);
    pgo_insert(&m, T_OID, 4, r);
    m.b[8] = 'x'; /* the first column's kind */
    ck_assert_str_eq(feed_bad(d, &m, PGW_EPARSE),
                     "Insert message: unknown column kind 0x78 at byte 8 of 30");
    pgo_insert(&m, T_OID, 4, r);
    m.b[7] = 3; /* 3 columns instead of 4 */
    ck_assert_str_eq(feed_bad(d, &m, PGW_EPARSE),
                     "Insert message: a tuple of 3 columns for a relation of 4 at byte 8 of 30");
    pgo_insert(&m, T_OID, 4, r);
    m.b[5] = 'K';
    ck_assert_str_eq(feed_bad(d, &m, PGW_EPARSE),
                     "Insert message: expected the new tuple ('N') at byte 5 of 30");
    pgo_insert(&m, T_OID, 4, r);
    m.n -= 3;
    ck_assert_str_eq(feed_bad(d, &m, PGW_EPARSE),
                     "Insert message: the message ends inside a column's value at byte 25 of 27");
    const char *o[] = {"1", "a", "b", "c"};
    pgo_delete(&m, T_OID, 4, 'N', o);
    ck_assert_str_eq(feed_bad(d, &m, PGW_EPARSE),
                     "Delete message: a Delete without a 'K' or 'O' old tuple at byte 5 of 32");
    pgo_relation(&m, T_OID, "public", "tasks", 'd', 4, TASK_COLS);
    m.n = 12; /* inside the relation's name */
    ck_assert_str_eq(feed_bad(d, &m, PGW_EPARSE),
                     "Relation message: the relation's name is not NUL-terminated at byte 12 of 12");
    pgo_truncate(&m, 1, (uint32_t[]){4242});
    ck_assert_str_eq(feed_bad(d, &m, PGW_EPARSE),
                     "Truncate message: relation 4242 has had no Relation message at byte 6 of 10");
    pgo_message(&m, 1, 1, "pgwitness", "x");
    m.n--;
    ck_assert_str_eq(feed_bad(d, &m, PGW_EPARSE),
                     "Message message: the message ends inside the content at byte 24 of 24");
    m.n = 1;
    m.b[0] = 'S';
    ck_assert_str_eq(feed_bad(d, &m, PGW_EPARSE),
                     "pgoutput: unknown message type 0x53 (a message of a later protocol version "
                     "or of streamed transactions, which pgwitness does not request) at byte 0 "
                     "of 1");
    m.b[0] = 'Z';
    ck_assert_str_eq(feed_bad(d, &m, PGW_EPARSE),
                     "pgoutput: unknown message type 0x5a at byte 0 of 1");
    /* The spoiled transaction: its good changes are passed over, and its
     * Commit hands out a reset in their place. */
    pgo_insert(&m, T_OID, 4, r);
    feed(d, &m);
    commit(d, 0x100);
    EXPECT_NEXT(d, 0x100, "reset");
    EXPECT_NEXT(d, 0, "none");

    /* A Begin inside a transaction: a reset for the one that never
     * committed, and the new one starts clean. */
    begin(d, 0x200);
    pgo_insert(&m, T_OID, 4, r);
    feed(d, &m);
    pgo_begin(&m, 0x300, 2);
    ck_assert_str_eq(feed_bad(d, &m, PGW_EPARSE),
                     "Begin message: a Begin inside a transaction (no Commit) at byte 0 of 21");
    pgo_insert(&m, T_OID, 4, r);
    feed(d, &m);
    commit(d, 0x300);
    EXPECT_NEXT(d, 0x200, "reset");
    EXPECT_NEXT(d, 0x300,
                "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\",\"ids\":[\"1\"],"
                "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                "\"new\":[{\"status\":\"open\"}],\"pk_changed\":false}");
    /* A Commit of another transaction than the one that began. */
    begin(d, 0x400);
    pgo_commit(&m, 0x401, 0x430);
    ck_assert_str_eq(feed_bad(d, &m, PGW_EPARSE),
                     "Commit message: a commit LSN other than its Begin's final LSN at byte 2 of 26");
    ck_assert(!pgw_pgoutput_in_transaction(d));
    EXPECT_NEXT(d, 0x401, "reset");
    EXPECT_NEXT(d, 0, "none");

    pgw_pgoutput_stats st;
    ck_assert_int_eq(pgw_pgoutput_stats_get(&st, d), PGW_OK);
    ck_assert_uint_eq(st.errors, 17);
    pgw_pgoutput_free(d);
}
END_TEST

/* Text that is not UTF-8 is not kept: an unknown value, or unknown IDs
 * for a key. */
START_TEST(invalid_utf8)
{
    pgw_pgoutput *d = tasks_dec();
    begin(d, 0x10);
    pgo_msg m;
    const char *r[] = {"1", "a", "op\xff", PGO_NULL}, *bad_key[] = {"\xc3", "a", "x", PGO_NULL};
    pgo_insert(&m, T_OID, 4, r);
    feed(d, &m);
    commit(d, 0x10);
    EXPECT_NEXT(d, 0x10,
                "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\",\"ids\":[\"1\"],"
                "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                "\"pk_changed\":false}");
    begin(d, 0x20);
    pgo_insert(&m, T_OID, 4, bad_key);
    feed(d, &m);
    commit(d, 0x20);
    EXPECT_NEXT(d, 0x20,
                "{\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"insert\",\"ids\":null,"
                "\"ids_truncated\":false,\"columns\":null,\"columns_truncated\":false,"
                "\"pk_changed\":false}");
    pgw_pgoutput_free(d);
}
END_TEST

START_TEST(bad_arguments)
{
    pgw_pgoutput *d = NULL;
    pgw_error e;
    ck_assert_int_eq(pgw_pgoutput_new(NULL, &ACME, NULL, NULL), PGW_EINVAL);
    ck_assert_int_eq(pgw_pgoutput_new(&d, NULL, NULL, NULL), PGW_EINVAL);
    pgw_pgoutput_options o = PGW_PGOUTPUT_OPTIONS_INIT;
    o.version = 9;
    ck_assert_int_eq(pgw_pgoutput_new(&d, &ACME, &o, &e), PGW_EINVAL);
    ck_assert_str_eq(e.message,
                     "pgoutput options version 9 is not 1 (use PGW_PGOUTPUT_OPTIONS_INIT)");
    o = (pgw_pgoutput_options)PGW_PGOUTPUT_OPTIONS_INIT;
    o.max_ids_per_write = 0;
    ck_assert_int_eq(pgw_pgoutput_new(&d, &ACME, &o, NULL), PGW_EINVAL);
    o = (pgw_pgoutput_options)PGW_PGOUTPUT_OPTIONS_INIT;
    o.max_txn_bytes = 10;
    ck_assert_int_eq(pgw_pgoutput_new(&d, &ACME, &o, NULL), PGW_EINVAL);
    o = (pgw_pgoutput_options)PGW_PGOUTPUT_OPTIONS_INIT;
    o.message_prefix = "";
    ck_assert_int_eq(pgw_pgoutput_new(&d, &ACME, &o, NULL), PGW_EINVAL);
    ck_assert_ptr_null(d);
    d = new_dec(NULL);
    const char *dup[] = {"id", "id"};
    ck_assert_int_eq(pgw_pgoutput_add_target(d, 1, "s", "t", dup, 2, NULL, 0, &e), PGW_EINVAL);
    ck_assert_str_eq(e.message, "pgoutput_add_target: key_columns[1] repeats \"id\"");
    ck_assert_int_eq(pgw_pgoutput_add_target(d, 0, "s", "t", NULL, 0, NULL, 0, NULL),
                     PGW_EINVAL);
    ck_assert_int_eq(pgw_pgoutput_add_target(d, 1, "", "t", NULL, 0, NULL, 0, NULL), PGW_EINVAL);
    ck_assert_int_eq(pgw_pgoutput_add_target(d, 1, "s", "t", NULL, 1, NULL, 0, NULL),
                     PGW_EINVAL);
    for (int i = 0; i < PGW_PGOUTPUT_MAX_TARGETS; i++) {
        char name[8];
        snprintf(name, sizeof name, "t%d", i);
        ck_assert_int_eq(pgw_pgoutput_add_target(d, 1, "s", name, NULL, 0, NULL, 0, NULL),
                         PGW_OK);
    }
    ck_assert_int_eq(pgw_pgoutput_add_target(d, 1, "s", "more", NULL, 0, NULL, 0, &e),
                     PGW_ELIMIT);
    ck_assert_int_eq(pgw_pgoutput_decode(NULL, NULL, "B", 1, NULL), PGW_EINVAL);
    ck_assert_int_eq(pgw_pgoutput_decode(NULL, d, NULL, 1, NULL), PGW_EINVAL);
    pgw_pgoutput_change c;
    ck_assert_int_eq(pgw_pgoutput_next(NULL, d), PGW_EINVAL);
    ck_assert_int_eq(pgw_pgoutput_next(&c, NULL), PGW_EINVAL);
    ck_assert(!pgw_pgoutput_in_transaction(NULL));
    pgw_pgoutput_free(d);
    pgw_pgoutput_free(NULL);
    pgw_pgoutput_restart(NULL);
}
END_TEST

/* A scenario of every message kind, run once per allocation with that
 * allocation failing: every call returns PGW_OK or PGW_ENOMEM; a
 * transaction whose buffering or building failed becomes a reset, never a
 * partial set of write sets; nothing leaks. */
static void scenario(pgw_pgoutput *d, size_t *resets, size_t *writes)
{
    pgo_msg m;
    const char *tcols[] = {"*id", "title", "status", "notes"};
    pgo_relation(&m, T_OID, "public", "tasks", 'f', 4, tcols);
    int rc = pgw_pgoutput_decode(NULL, d, m.b, m.n, NULL);
    ck_assert(rc == PGW_OK || rc == PGW_ENOMEM);
    const char *a[] = {"1", "a", "open", "x"}, *b[] = {"1", "b", "done", PGO_UNCHANGED};
    const char *k[] = {"1", PGO_NULL, PGO_NULL, PGO_NULL}, *c2[] = {"2", "b", "done", "y"};
    for (int t = 0; t < 3; t++) {
        pgo_begin(&m, 0x100 * (t + 1), 1);
        ck_assert_int_eq(pgw_pgoutput_decode(NULL, d, m.b, m.n, NULL), PGW_OK);
        for (int step = 0; step < 6; step++) {
            switch (step) {
            case 0: pgo_insert(&m, T_OID, 4, a); break;
            case 1: pgo_update(&m, T_OID, 4, 'O', a, b); break;
            case 2: pgo_update(&m, T_OID, 4, 'K', k, c2); break;
            case 3: pgo_delete(&m, T_OID, 4, 'K', k); break;
            case 4: pgo_message(&m, 1, 9, "pgwitness",
                                "{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\","
                                "\"op\":\"delete\",\"ids\":[\"3\"]}"); break;
            default: pgo_truncate(&m, 1, (uint32_t[]){T_OID}); break;
            }
            rc = pgw_pgoutput_decode(NULL, d, m.b, m.n, NULL);
            /* Before the Relation message was kept, changes name an
             * unknown relation. */
            ck_assert(rc == PGW_OK || rc == PGW_ENOMEM || rc == PGW_EPARSE);
        }
        pgo_commit(&m, 0x100 * (t + 1), 0x100 * (t + 1) + 0x30);
        rc = pgw_pgoutput_decode(NULL, d, m.b, m.n, NULL);
        ck_assert(rc == PGW_OK);
        pgw_pgoutput_change c;
        size_t got = 0;
        bool reset = false;
        while (pgw_pgoutput_next(&c, d) == PGW_OK) {
            if (c.reset) {
                reset = true;
                (*resets)++;
            } else {
                got++;
                pgw_write_free(c.write);
            }
        }
        /* Whole or reset: the six groups, or a reset (possibly after the
         * write sets of an earlier reset's folding — none here). */
        ck_assert_msg(reset || got == 6, "transaction %d gave %zu write sets", t, got);
        *writes += got;
    }
}

START_TEST(allocation_failure)
{
    pgwt_alloc_install();
    size_t full_writes = 0, full_resets = 0;
    pgw_pgoutput *d = new_dec(NULL);
    const char *key[] = {"id"}, *vals[] = {"status", "notes"};
    ck_assert_int_eq(pgw_pgoutput_add_target(d, T_OID, "public", "tasks", key, 1, vals, 2, NULL),
                     PGW_OK);
    ck_assert_int_eq(pgw_pgoutput_set_full_rows(d, T_OID, true, NULL), PGW_OK);
    size_t before = pgwt_alloc_get().calls;
    scenario(d, &full_resets, &full_writes);
    size_t calls = pgwt_alloc_get().calls - before;
    pgw_pgoutput_free(d);
    ck_assert_uint_eq(full_writes, 18);
    ck_assert_uint_eq(full_resets, 0);
    ck_assert_uint_eq(pgwt_alloc_get().live, 0);
    for (size_t n = 1; n <= calls; n++) {
        d = new_dec(NULL);
        ck_assert_int_eq(pgw_pgoutput_add_target(d, T_OID, "public", "tasks", key, 1, vals, 2,
                                                 NULL),
                         PGW_OK);
        ck_assert_int_eq(pgw_pgoutput_set_full_rows(d, T_OID, true, NULL), PGW_OK);
        size_t writes = 0, resets = 0;
        pgwt_alloc_fail_at(n);
        scenario(d, &resets, &writes);
        bool failed = pgwt_alloc_failed();
        pgwt_alloc_fail_at(0);
        ck_assert(failed);
        ck_assert_msg(resets + writes / 6 >= 3 || resets > 0, "allocation %zu lost a transaction", n);
        pgw_pgoutput_free(d);
        ck_assert_msg(pgwt_alloc_get().live == 0, "allocation %zu leaks", n);
    }
    pgwt_alloc_uninstall();
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pgoutput");
    TCase *tc = tcase_create("pgoutput");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, lsn_text);
    tcase_add_test(tc, relation_names);
    tcase_add_test(tc, expected_relations);
    tcase_add_test(tc, replication_frames);
    tcase_add_test(tc, status_update_bytes);
    tcase_add_test(tc, insert_at_commit);
    tcase_add_test(tc, update_default);
    tcase_add_test(tc, update_full);
    tcase_add_test(tc, key_change_default);
    tcase_add_test(tc, placeholders_never_null);
    tcase_add_test(tc, partition_key_only_under_full_root);
    tcase_add_test(tc, delete_full);
    tcase_add_test(tc, keys_from_the_catalog);
    tcase_add_test(tc, targets);
    tcase_add_test(tc, grouping_and_order);
    tcase_add_test(tc, chunking);
    tcase_add_test(tc, memory_bound);
    tcase_add_test(tc, logical_messages);
    tcase_add_test(tc, relation_changes);
    tcase_add_test(tc, ddl_column_changes);
    tcase_add_test(tc, ddl_and_the_transactions_writes);
    tcase_add_test(tc, ddl_targets);
    tcase_add_test(tc, ddl_degraded_and_spoiled);
    tcase_add_test(tc, ddl_across_restart);
    tcase_add_test(tc, ddl_messages);
    tcase_add_test(tc, table_level_messages_once);
    tcase_add_test(tc, ddl_allocation_failure);
    tcase_add_test(tc, malformed_messages);
    tcase_add_test(tc, invalid_utf8);
    tcase_add_test(tc, bad_arguments);
    tcase_add_test(tc, allocation_failure);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return pgwt_main(suite());
}
