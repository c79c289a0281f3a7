/*
 * tests/bench/bench_pgoutput.c — the pgoutput decoder's throughput on one
 * core (issue 15), pure: no server. The replication stream is built byte by
 * byte (tests/support/pgo_build.h) as a walsender would send it: XLogData
 * frames, each holding one pgoutput message (protocol version 1), over
 * realistic transactions on two tables,
 *   orders       (id, tenant_id, status, total, note, updated_at)
 *   order_lines  (id, order_id, sku, qty, price)
 * whose Relation messages are decoded once before the timed part (as a
 * walsender sends them once per connection).
 *
 * Kinds of transaction:
 *   insert       INSERTs into orders
 *   update DEF   UPDATEs of orders (status, updated_at) under REPLICA
 *                IDENTITY DEFAULT: no old tuple
 *   update FULL  the same under FULL: each with its old tuple ('O'), whose
 *                text the decoder compares to find the changed columns
 *   delete DEF   DELETEs from orders under DEFAULT: a key-only old tuple
 *                ('K', the other columns as placeholders)
 *   delete FULL  DELETEs under FULL: the whole old row
 *   mix DEF      of every 10 rows: 4 UPDATEs of orders, 4 INSERTs and 2
 *                DELETEs of order_lines, under DEFAULT (by row number, so
 *                one-row transactions mix too)
 *   mix FULL     the same under FULL
 * each with 1, 10 and 1000 rows per transaction, without value columns and
 * with two (orders: tenant_id, status; order_lines: order_id, sku), whose
 * old and new values the write sets then carry.
 *
 * Timed, per frame, what the stream's core work is for what it receives:
 * pgw_replication_parse(), pgw_pgoutput_decode(), then taking every write
 * set ready (pgw_pgoutput_next()) and freeing it (no index: matching is
 * bench-index's). A pass decodes about 50,000 rows (PGW_BENCH_ROWS); each
 * case runs 11 passes (PGW_BENCH_PASSES) over the same bytes, without and
 * with value columns interleaved (a decoder each). A pass is timed by the
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID), not the wall clock: the
 * code is CPU-bound, and on a shared machine the wall clock also counts
 * the time slices other processes had. The fastest pass is printed, as
 * messages/s (pgoutput messages: Begin, Commit and the changes),
 * rows/s, MB/s of the frames (what PQgetCopyData hands over, 25 bytes of
 * XLogData header each, in 10^6 bytes), ns per row and write sets/s. The
 * first pass is checked: every row and transaction counted, no error,
 * reset or degraded transaction.
 * SPDX-License-Identifier: MIT
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "pgo_build.h"
#include "pgwitness/pgwitness.h"

#define ORDERS 16384u
#define LINES 16385u

static const pgw_scope SCOPE = {"p", "acme", "app"};

static const char *const ORDER_COLS[] = {"*id", "tenant_id", "status", "total", "note",
                                         "updated_at"};
static const char *const ORDER_COLS_FULL[] = {"*id", "*tenant_id", "*status", "*total",
                                              "*note", "*updated_at"};
static const char *const LINE_COLS[] = {"*id", "*order_id", "sku", "qty", "price"};
static const char *const LINE_COLS_FULL[] = {"*id", "*order_id", "*sku", "*qty", "*price"};

typedef enum kind {
    K_INSERT,
    K_UPDATE_DEFAULT,
    K_UPDATE_FULL,
    K_DELETE_DEFAULT,
    K_DELETE_FULL,
    K_MIX_DEFAULT,
    K_MIX_FULL,
    N_KINDS
} kind;

static const char *const KIND_NAME[N_KINDS] = {"insert",      "update DEF",  "update FULL",
                                               "delete DEF",  "delete FULL", "mix DEF",
                                               "mix FULL"};

static bool kind_full(kind k)
{
    return k == K_UPDATE_FULL || k == K_DELETE_FULL || k == K_MIX_FULL;
}

/* The frames of a case, end to end, with their boundaries. */
typedef struct stream {
    unsigned char *b;
    size_t n, cap;
    size_t *end; /* end offset of each frame */
    size_t n_frames, cap_frames;
    size_t messages, rows;
} stream;

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return p;
    size_t c = *cap ? *cap : 1024;
    while (c < need)
        c *= 2;
    p = realloc(p, c * size);
    if (!p) {
        fprintf(stderr, "bench-pgoutput: out of memory\n");
        exit(1);
    }
    *cap = c;
    return p;
}

/* Appends message m as an XLogData frame at WAL position lsn. */
static void put(stream *s, const pgo_msg *m, uint64_t lsn)
{
    static pgo_msg f;
    pgo_xlogdata(&f, lsn, lsn + m->n, m->b, m->n);
    s->b = grow(s->b, &s->cap, s->n + f.n, 1);
    memcpy(s->b + s->n, f.b, f.n);
    s->n += f.n;
    s->end = grow(s->end, &s->cap_frames, s->n_frames + 1, sizeof *s->end);
    s->end[s->n_frames++] = s->n;
    s->messages++;
}

typedef struct cells {
    char id[24], ref[24], a[48], b[48], c[48], d[64];
    const char *v[6];
} cells;

static const char *const STATUS[] = {"pending", "paid", "shipped", "delivered"};

/* An order's row, state 0..2 (its status and updated_at move on). */
static const char *const *order_row(cells *c, long id, int state)
{
    snprintf(c->id, sizeof c->id, "%ld", id);
    snprintf(c->ref, sizeof c->ref, "%ld", 1000 + id % 250); /* tenant_id */
    snprintf(c->a, sizeof c->a, "%ld.%02ld", 10 + id % 490, id % 100);
    snprintf(c->d, sizeof c->d, "2024-05-%02ld %02ld:%02d:17.%06ld+00", 1 + id % 28, id % 24,
             10 + state * 7, (id * 7919) % 1000000);
    c->v[0] = c->id;
    c->v[1] = c->ref;
    c->v[2] = STATUS[state % 4];
    c->v[3] = c->a;
    c->v[4] = "Leave at the front desk; call on arrival, please.";
    c->v[5] = c->d;
    return c->v;
}

static const char *const *line_row(cells *c, long id)
{
    snprintf(c->id, sizeof c->id, "%ld", id);
    snprintf(c->ref, sizeof c->ref, "%ld", id / 4);
    snprintf(c->a, sizeof c->a, "SKU-%06ld-%c", (id * 31) % 1000000, 'A' + (int)(id % 26));
    snprintf(c->b, sizeof c->b, "%ld", 1 + id % 5);
    snprintf(c->c, sizeof c->c, "%ld.%02ld", 2 + id % 97, (id * 13) % 100);
    c->v[0] = c->id;
    c->v[1] = c->ref;
    c->v[2] = c->a;
    c->v[3] = c->b;
    c->v[4] = c->c;
    return c->v;
}

/* One row's change message; a mix takes its operation from the row's
 * number, so that it mixes across transactions of one row too. */
static void change(pgo_msg *m, kind k, long id)
{
    cells o, n;
    const char *key_only[6] = {NULL, PGO_NULL, PGO_NULL, PGO_NULL, PGO_NULL, PGO_NULL};
    bool full = kind_full(k);
    switch (k) {
    case K_INSERT:
        pgo_insert(m, ORDERS, 6, order_row(&n, id, 0));
        return;
    case K_UPDATE_DEFAULT:
    case K_UPDATE_FULL:
        pgo_update(m, ORDERS, 6, full ? 'O' : 0, full ? order_row(&o, id, 1) : NULL,
                   order_row(&n, id, 2));
        return;
    case K_DELETE_DEFAULT:
    case K_DELETE_FULL:
        if (full) {
            pgo_delete(m, ORDERS, 6, 'O', order_row(&o, id, 3));
        } else {
            snprintf(o.id, sizeof o.id, "%ld", id);
            key_only[0] = o.id;
            pgo_delete(m, ORDERS, 6, 'K', key_only);
        }
        return;
    case K_MIX_DEFAULT:
    case K_MIX_FULL:
        switch (id % 10) {
        case 0:
        case 3:
        case 5:
        case 8:
            pgo_update(m, ORDERS, 6, full ? 'O' : 0, full ? order_row(&o, id, 1) : NULL,
                       order_row(&n, id, 2));
            return;
        case 2:
        case 7:
            if (full) {
                pgo_delete(m, LINES, 5, 'O', line_row(&o, id));
            } else {
                snprintf(o.id, sizeof o.id, "%ld", id);
                key_only[0] = o.id;
                pgo_delete(m, LINES, 5, 'K', key_only);
            }
            return;
        default:
            pgo_insert(m, LINES, 5, line_row(&n, id));
            return;
        }
    case N_KINDS:
        break;
    }
}

/* The frames of n_tx transactions of `rows` rows each. */
static void build(stream *s, kind k, size_t rows, size_t n_tx)
{
    static pgo_msg m;
    uint64_t lsn = 0x1000000;
    long id = 1;
    for (size_t t = 0; t < n_tx; t++) {
        uint64_t final = lsn + 64 * (rows + 2);
        pgo_begin(&m, final, (uint32_t)(1000 + t));
        put(s, &m, lsn);
        for (size_t i = 0; i < rows; i++, id++) {
            change(&m, k, id);
            put(s, &m, lsn + 64 * (i + 1));
            s->rows++;
        }
        pgo_commit(&m, final, final + 48);
        put(s, &m, final);
        lsn = final + 48;
    }
}

/* A decoder with both tables as targets, their Relation messages read. */
static pgw_pgoutput *decoder(bool full, bool values)
{
    pgw_pgoutput *d = NULL;
    pgw_error e;
    const char *key[] = {"id"};
    const char *ov[] = {"tenant_id", "status"}, *lv[] = {"order_id", "sku"};
    if (pgw_pgoutput_new(&d, &SCOPE, NULL, &e) != PGW_OK ||
        pgw_pgoutput_add_target(d, ORDERS, "public", "orders", key, 1, values ? ov : NULL,
                                values ? 2 : 0, &e) != PGW_OK ||
        pgw_pgoutput_add_target(d, LINES, "public", "order_lines", key, 1, values ? lv : NULL,
                                values ? 2 : 0, &e) != PGW_OK ||
        /* Under FULL the stream declares the tables' old tuples full rows,
         * so that 'O' tuples give changed columns and old values. */
        (full && (pgw_pgoutput_set_full_rows(d, ORDERS, true, &e) != PGW_OK ||
                  pgw_pgoutput_set_full_rows(d, LINES, true, &e) != PGW_OK))) {
        fprintf(stderr, "bench-pgoutput: %s\n", e.message);
        exit(1);
    }
    static pgo_msg m;
    pgo_relation(&m, ORDERS, "public", "orders", full ? 'f' : 'd', 6,
                 full ? ORDER_COLS_FULL : ORDER_COLS);
    if (pgw_pgoutput_decode(NULL, d, m.b, m.n, &e) != PGW_OK)
        goto fail;
    pgo_relation(&m, LINES, "public", "order_lines", full ? 'f' : 'd', 5,
                 full ? LINE_COLS_FULL : LINE_COLS);
    if (pgw_pgoutput_decode(NULL, d, m.b, m.n, &e) != PGW_OK)
        goto fail;
    return d;
fail:
    fprintf(stderr, "bench-pgoutput: Relation: %s\n", e.message);
    exit(1);
}

/* One pass over every frame; returns its nanoseconds, *writes the write
 * sets taken. */
static uint64_t pass(pgw_pgoutput *d, const stream *s, size_t *writes)
{
    size_t w = 0, start = 0;
    uint64_t t0 = bench_thread_cpu_ns();
    for (size_t i = 0; i < s->n_frames; i++) {
        pgw_replication_frame f;
        if (pgw_replication_parse(&f, s->b + start, s->end[i] - start, NULL) != PGW_OK ||
            pgw_pgoutput_decode(NULL, d, f.data, f.len, NULL) != PGW_OK) {
            fprintf(stderr, "bench-pgoutput: frame %zu does not decode\n", i);
            exit(1);
        }
        pgw_pgoutput_change c;
        while (pgw_pgoutput_next(&c, d) == PGW_OK) {
            pgw_write_free(c.write);
            w++;
        }
        start = s->end[i];
    }
    uint64_t ns = bench_thread_cpu_ns() - t0;
    *writes = w;
    return ns;
}

/* After the first pass: every row and transaction counted, nothing
 * spoiled or degraded. */
static void check(const pgw_pgoutput *d, const stream *s, kind k, size_t n_tx)
{
    pgw_pgoutput_stats st;
    pgw_pgoutput_stats_get(&st, d);
    if (st.rows != s->rows || st.errors || st.resets || st.degraded || st.transactions != n_tx) {
        fprintf(stderr,
                "bench-pgoutput: %s: %llu rows of %zu, %llu transactions of %zu, %llu errors, "
                "%llu resets, %llu degraded\n",
                KIND_NAME[k], (unsigned long long)st.rows, s->rows,
                (unsigned long long)st.transactions, n_tx, (unsigned long long)st.errors,
                (unsigned long long)st.resets, (unsigned long long)st.degraded);
        exit(1);
    }
}

int main(void)
{
    const char *rows_env = getenv("PGW_BENCH_ROWS");
    const char *passes_env = getenv("PGW_BENCH_PASSES");
    long rows_per_pass = rows_env ? atol(rows_env) : 50000;
    int passes = passes_env ? atoi(passes_env) : 11;
    if (rows_per_pass < 1000 || passes < 1 || passes > 100)
        return 2;
    static const size_t SIZES[] = {1, 10, 1000};
    printf("pgoutput decoder, one thread: XLogData frames parsed, decoded, write sets taken "
           "and freed; the fastest of %d passes of about %ld rows, by the thread's CPU time\n",
           passes, rows_per_pass);
    printf("  %-12s %8s %6s  %12s %12s %9s %9s %13s\n", "transaction", "rows/tx", "values",
           "messages/s", "rows/s", "MB/s", "ns/row", "write sets/s");
    for (kind k = K_INSERT; k < N_KINDS; k++) {
        for (size_t z = 0; z < sizeof SIZES / sizeof SIZES[0]; z++) {
            size_t rows = SIZES[z];
            size_t n_tx = (size_t)rows_per_pass / rows;
            stream s;
            memset(&s, 0, sizeof s);
            build(&s, k, rows, n_tx);
            /* Without and with value columns, passes interleaved. */
            pgw_pgoutput *d[2] = {decoder(kind_full(k), false), decoder(kind_full(k), true)};
            double ns[2][100];
            size_t writes[2] = {0, 0};
            for (int p = 0; p < passes; p++) {
                for (int v = 0; v < 2; v++) {
                    ns[v][p] = (double)pass(d[v], &s, &writes[v]);
                    if (p == 0)
                        check(d[v], &s, k, n_tx);
                }
            }
            for (int v = 0; v < 2; v++) {
                double sec = bench_percentile(ns[v], (size_t)passes, 0) / 1e9;
                printf("  %-12s %8zu %6s  %12.0f %12.0f %9.1f %9.0f %13.0f\n", KIND_NAME[k],
                       rows, v ? "2" : "none", (double)s.messages / sec,
                       (double)s.rows / sec, (double)s.n / sec / 1e6,
                       sec * 1e9 / (double)s.rows, (double)writes[v] / sec);
                pgw_pgoutput_free(d[v]);
            }
            fflush(stdout);
            free(s.b);
            free(s.end);
        }
    }
    return 0;
}
