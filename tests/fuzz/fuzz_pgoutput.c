/*
 * tests/fuzz/fuzz_pgoutput.c — the pgoutput decoder and the replication
 * frames. The input is a sequence of chunks, each a 2-byte big-endian
 * length and that many bytes: a chunk that parses as a replication frame
 * ('w' XLogData, 'k' keepalive) is taken as one, and an XLogData frame's
 * data is decoded; any other chunk is decoded as a pgoutput message as it
 * is. The first byte's bits pick small limits (1) and declare the tasks
 * relation's old tuples full rows (2).
 *
 * Every call must return PGW_OK, PGW_EPARSE or PGW_ENOMEM, never crash;
 * every change taken must be a reset or a valid write set within
 * max_ids_per_write IDs, which the decision and the index accept and agree
 * on; nothing leaks.
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "pgwitness/pgwitness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const pgw_scope scope = {"p", "t", "db"};

static pgw_deps *deps_fixture(void)
{
    static const char *const cols[] = {"id", "title", "status"};
    static const char *const vals[] = {"open"};
    static const char *const one = "1";
    static const pgw_rowid rid = {&one, 1};
    pgw_deps *d = NULL;
    size_t t;
    if (pgw_deps_new(&d, &scope, "q", NULL) < 0)
        return NULL;
    if (pgw_deps_add_table(&t, d, "public", "tasks", NULL) < 0 ||
        pgw_deps_set_columns(d, t, cols, 3, NULL) < 0 ||
        pgw_deps_add_filter(d, t, "status", PGW_FILTER_EQ, vals, 1, NULL) < 0 ||
        pgw_deps_set_order_by(d, t, cols, 1, NULL) < 0 ||
        pgw_deps_set_window(d, t, 10, 0, NULL) < 0 ||
        pgw_deps_set_result_ids(d, &rid, 1, NULL) < 0) {
        pgw_deps_free(d);
        return NULL;
    }
    return d;
}

static void check_change(const pgw_pgoutput_change *c, size_t max_ids, const pgw_deps *d)
{
    if (c->reset) {
        if (c->write)
            abort();
        return;
    }
    pgw_write *w = c->write;
    if (!w || pgw_write_lsn(w) != c->lsn)
        abort();
    pgw_op op = pgw_write_op(w);
    if (op < PGW_OP_INSERT || op > PGW_OP_DDL)
        abort();
    if (pgw_write_fallback_status(w) == PGW_OK && pgw_write_n_ids(w) > max_ids)
        abort(); /* cut at max_ids_per_write (a message's payload allows fewer) */
    if (!d)
        return;
    pgw_verdict v;
    if (pgw_decide(&v, d, w, NULL) < 0)
        abort();
    if (op == PGW_OP_DDL && strcmp(pgw_write_schema(w), "public") == 0 &&
        strcmp(pgw_write_table(w), "tasks") == 0 && !(v.refresh && v.reason == PGW_REASON_DDL))
        abort(); /* a ddl refreshes every reader of its table */
    pgw_index *x = NULL;
    pgw_runner_id id;
    if (pgw_index_new(&x, NULL, NULL) == PGW_OK && pgw_index_register(&id, x, d, NULL) == PGW_OK) {
        size_t n = 0;
        pgw_index_match(&n, x, w, NULL);
        if (n != (v.refresh ? 1u : 0u))
            abort(); /* the index agrees with the decision */
    }
    pgw_index_free(x);
}

static void drain(pgw_pgoutput *dec, size_t max_ids, const pgw_deps *d)
{
    pgw_pgoutput_change c;
    while (pgw_pgoutput_next(&c, dec) == PGW_OK) {
        check_change(&c, max_ids, d);
        pgw_write_free(c.write);
    }
}

static void decode(pgw_pgoutput *dec, const uint8_t *p, size_t n)
{
    int rc = pgw_pgoutput_decode(NULL, dec, p, n, NULL);
    if (rc < 0 && rc != PGW_EPARSE && rc != PGW_ENOMEM)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    pgw_pgoutput_options o = PGW_PGOUTPUT_OPTIONS_INIT;
    if (data[0] & 1) {
        o.max_ids_per_write = 2;
        o.max_txn_bytes = 1024;
    }
    pgw_pgoutput *dec = NULL;
    if (pgw_pgoutput_new(&dec, &scope, &o, NULL) < 0)
        return 0;
    static const char *const key[] = {"id"}, *const key2[] = {"org", "id"};
    static const char *const vals[] = {"status", "title"};
    if (pgw_pgoutput_add_target(dec, 16384, "public", "tasks", key, 1, vals, 2, NULL) < 0 ||
        pgw_pgoutput_add_target(dec, 16400, "public", "tasks", key2, 2, vals, 1, NULL) < 0 ||
        pgw_pgoutput_add_target(dec, 16400, "public", "items", key, 1, NULL, 0, NULL) < 0) {
        pgw_pgoutput_free(dec);
        return 0;
    }
    if ((data[0] & 2) && pgw_pgoutput_set_full_rows(dec, 16384, true, NULL) < 0) {
        pgw_pgoutput_free(dec);
        return 0;
    }
    pgw_deps *d = deps_fixture();
    size_t off = 1;
    while (off + 2 <= size) {
        size_t n = (size_t)data[off] << 8 | data[off + 1];
        off += 2;
        if (n > size - off)
            n = size - off;
        const uint8_t *p = data + off;
        off += n;
        pgw_replication_frame f;
        if (n && (p[0] == 'w' || p[0] == 'k')) {
            int rc = pgw_replication_parse(&f, p, n, NULL);
            if (rc < 0 && rc != PGW_EPARSE)
                abort();
            if (rc == PGW_OK && f.kind == PGW_REPLICATION_XLOGDATA)
                decode(dec, f.data, f.len);
        } else {
            decode(dec, p, n);
        }
        drain(dec, o.max_ids_per_write, d);
        if (n == 0)
            pgw_pgoutput_restart(dec);
    }
    drain(dec, o.max_ids_per_write, d);
    pgw_deps_free(d);
    pgw_pgoutput_free(dec);
    return 0;
}
