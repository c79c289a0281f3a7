/*
 * lib/core/inval/pgoutput.c — the pgoutput decoder and the replication
 * protocol's frames (pgoutput.h). Pure: bytes in, write sets out.
 *
 * Message formats: PostgreSQL documentation, "Logical Replication Message
 * Formats" (protocol version 1) and "Streaming Replication Protocol"
 * (XLogData, Primary keepalive message, Standby status update). All
 * integers are big-endian; a String is NUL-terminated.
 *
 * A transaction is buffered as a list of *items* in the order they first
 * appeared: change groups (one per target, operation and, for updates,
 * whether keys changed) and the write sets of transactional messages. A
 * group's rows live in rows_arena (keys and values, NUL-terminated copies
 * of the message's text) and in its rows array; its names (changed columns,
 * a relation's own name) in meta_arena, which is small and survives the
 * degradation past max_txn_bytes, when rows_arena and the rows arrays are
 * released. At Commit the buffer becomes the `done` one, whose items
 * pgw_pgoutput_next() turns into write sets one at a time (so the rows and
 * all their write sets are never in memory together); anything else ready
 * (a message outside a transaction, a reset) waits on an intrusive list
 * (pgw_write.qnext), and is queued only after what is left of `done` has
 * been built into it, which keeps commit order. A spoiled transaction (a
 * malformed message, or memory ran
 * out) becomes a reset instead: a node kept inside the decoder, so that
 * queuing it cannot fail. A second reset while the first is still queued
 * moves it to the tail and drops the write sets it passes (they are
 * committed already, so the reset, taken after them, covers them).
 * SPDX-License-Identifier: MIT
 */
#include "inval_internal.h"
#include "pgwitness/payload.h"
#include "pgwitness/pgoutput.h"

#include <stdio.h>

/* ------------------------------------------------------------------ */
/* LSNs                                                                */

int pgw_lsn_format(char out[PGW_LSN_TEXT_SIZE], uint64_t lsn)
{
    if (!out)
        return PGW_EINVAL;
    snprintf(out, PGW_LSN_TEXT_SIZE, "%X/%X", (unsigned)(lsn >> 32), (unsigned)lsn);
    return PGW_OK;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int pgw_lsn_parse(uint64_t *out, const char *text, pgw_error *err)
{
    if (!out || !text)
        return pgwi_error(err, PGW_EINVAL, "lsn_parse: %s is NULL", out ? "text" : "out");
    uint64_t half[2] = {0, 0};
    const char *p = text;
    for (int h = 0; h < 2; h++) {
        int digits = 0, v;
        while ((v = hexval(*p)) >= 0 && digits < 9) {
            half[h] = half[h] * 16 + (uint64_t)v;
            digits++;
            p++;
        }
        if (digits == 0 || digits > 8 || (h == 0 && *p++ != '/'))
            goto bad;
    }
    if (*p)
        goto bad;
    *out = half[0] << 32 | half[1];
    return PGW_OK;
bad:
    return pgwi_error(err, PGW_EPARSE, "\"%.40s\" is not an LSN (like 0/16B3748)", text);
}

/* ------------------------------------------------------------------ */
/* a bounded reader naming the byte offset of what it could not read    */

typedef struct rd {
    const unsigned char *p;
    size_t len, off;
    const char *what; /* the message's name, for errors */
} rd;

static int rd_fail(rd *r, pgw_error *err, const char *what)
{
    return pgwi_error(err, PGW_EPARSE, "%s: %s at byte %zu of %zu", r->what, what, r->off,
                      r->len);
}

static int rd_need(rd *r, size_t n, const char *item, pgw_error *err)
{
    if (r->len - r->off >= n)
        return PGW_OK;
    char what[160];
    snprintf(what, sizeof what, "the message ends inside %s", item);
    return rd_fail(r, err, what);
}

static uint64_t be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

static int rd_uint(rd *r, int n, uint64_t *v, const char *item, pgw_error *err)
{
    int rc;
    if ((rc = rd_need(r, (size_t)n, item, err)) < 0)
        return rc;
    *v = be(r->p + r->off, n);
    r->off += (size_t)n;
    return PGW_OK;
}

static int rd_u8(rd *r, uint8_t *v, const char *item, pgw_error *err)
{
    uint64_t x;
    int rc;
    if ((rc = rd_uint(r, 1, &x, item, err)) < 0)
        return rc;
    *v = (uint8_t)x;
    return PGW_OK;
}

static int rd_u16(rd *r, uint16_t *v, const char *item, pgw_error *err)
{
    uint64_t x;
    int rc;
    if ((rc = rd_uint(r, 2, &x, item, err)) < 0)
        return rc;
    *v = (uint16_t)x;
    return PGW_OK;
}

static int rd_u32(rd *r, uint32_t *v, const char *item, pgw_error *err)
{
    uint64_t x;
    int rc;
    if ((rc = rd_uint(r, 4, &x, item, err)) < 0)
        return rc;
    *v = (uint32_t)x;
    return PGW_OK;
}

static int rd_u64(rd *r, uint64_t *v, const char *item, pgw_error *err)
{
    return rd_uint(r, 8, v, item, err);
}

/* A String: its bytes up to the NUL, which must come before the end. */
static int rd_str(rd *r, const char **s, size_t *len, const char *item, pgw_error *err)
{
    const unsigned char *start = r->p + r->off;
    const unsigned char *nul = memchr(start, 0, r->len - r->off);
    if (!nul) {
        char what[160];
        snprintf(what, sizeof what, "%s is not NUL-terminated", item);
        return rd_fail(r, err, what);
    }
    *s = (const char *)start;
    *len = (size_t)(nul - start);
    r->off += *len + 1;
    return PGW_OK;
}

static int rd_end(rd *r, pgw_error *err)
{
    if (r->off != r->len)
        return rd_fail(r, err, "unexpected bytes after the message");
    return PGW_OK;
}

/* ------------------------------------------------------------------ */
/* replication frames                                                  */

int pgw_replication_parse(pgw_replication_frame *out, const void *buf, size_t len,
                          pgw_error *err)
{
    if (!out || (!buf && len))
        return pgwi_error(err, PGW_EINVAL, "replication_parse: %s is NULL",
                          out ? "buf" : "out");
    rd r = {buf, len, 0, "replication frame"};
    uint8_t kind;
    int rc;
    if ((rc = rd_u8(&r, &kind, "the frame's type", err)) < 0)
        return rc;
    pgw_replication_frame f;
    memset(&f, 0, sizeof f);
    uint64_t t;
    if (kind == 'w') {
        r.what = "XLogData frame";
        if ((rc = rd_u64(&r, &f.wal_start, "its start position", err)) < 0 ||
            (rc = rd_u64(&r, &f.wal_end, "the server's end of WAL", err)) < 0 ||
            (rc = rd_u64(&r, &t, "the send time", err)) < 0)
            return rc;
        f.kind = PGW_REPLICATION_XLOGDATA;
        f.data = r.p + r.off;
        f.len = r.len - r.off;
    } else if (kind == 'k') {
        r.what = "keepalive frame";
        uint8_t reply;
        if ((rc = rd_u64(&r, &f.wal_end, "the server's end of WAL", err)) < 0 ||
            (rc = rd_u64(&r, &t, "the send time", err)) < 0 ||
            (rc = rd_u8(&r, &reply, "the reply flag", err)) < 0 || (rc = rd_end(&r, err)) < 0)
            return rc;
        f.kind = PGW_REPLICATION_KEEPALIVE;
        f.reply_requested = reply != 0;
    } else {
        return pgwi_error(err, PGW_EPARSE,
                          "replication frame: unknown type 0x%02x at byte 0 of %zu (expected "
                          "'w' XLogData or 'k' keepalive)",
                          kind, len);
    }
    f.send_time = (int64_t)t;
    *out = f;
    return PGW_OK;
}

static void put_be64(unsigned char *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (unsigned char)v;
        v >>= 8;
    }
}

int pgw_replication_status(unsigned char out[PGW_REPLICATION_STATUS_SIZE], uint64_t written,
                           uint64_t flushed, uint64_t applied, int64_t now,
                           bool reply_requested)
{
    if (!out)
        return PGW_EINVAL;
    out[0] = 'r';
    put_be64(out + 1, written);
    put_be64(out + 9, flushed);
    put_be64(out + 17, applied);
    put_be64(out + 25, (uint64_t)now);
    out[33] = reply_requested ? 1 : 0;
    return PGW_OK;
}

/* ------------------------------------------------------------------ */
/* the decoder's state                                                 */

#define MAX_VALUES 64

/* A target: where a relation's rows are reported. */
typedef struct target {
    uint32_t relid;
    char *schema, *table;
    char **key;
    uint32_t n_key;
    char **vals;
    uint32_t n_vals;
} target;

typedef struct rcol {
    char *name;
    uint8_t flags;   /* 1: part of the replica identity key */
    uint32_t typoid; /* the column's type */
    uint32_t typmod; /* its modifier (atttypmod; 0xffffffff: none) */
} rcol;

/* A target resolved against a relation's columns. */
typedef struct rtarget {
    const target *t;
    int32_t key_pos[PGW_ROWID_MAX_PARTS]; /* column positions of the key */
    bool key_ok;                          /* every key column found */
    int32_t val_pos[MAX_VALUES];          /* -1: the relation lacks it */
} rtarget;

typedef struct rel {
    uint32_t oid;
    char *nsp, *name;
    uint16_t ncols;
    rcol *cols;
    uint64_t gen; /* the target generation rt was resolved for */
    bool full_rows; /* its 'O' old tuples are full rows (declared) */
    /* Kept from an earlier connection (pgw_pgoutput_restart()): compared
     * with the next Relation message, never used to read a change. */
    bool stale;
    /* Its definition changed in a transaction a restart dropped: the next
     * Relation message yields a ddl write set whatever it says. */
    bool ddl_pending;
    uint64_t changed_txn; /* the transaction (txn_seq) it last changed in */
    uint32_t n_rt;
    rtarget rt[PGW_PGOUTPUT_MAX_TARGETS];
} rel;

/* The text of one column of a TupleData. */
enum { TV_NULL = 'n', TV_UNCHANGED = 'u', TV_TEXT = 't', TV_BINARY = 'b' };
typedef struct tval {
    uint8_t kind;
    const char *p; /* TV_TEXT / TV_BINARY: into the message */
    uint32_t len;
} tval;

typedef struct tuple {
    uint8_t kind; /* 'N', 'K', 'O', or 0: none */
    tval *v;      /* ncols entries (scratch owned by the decoder) */
} tuple;

/* A value cell of a buffered row: NULL unknown, SQLNULL the SQL NULL. */
static const char sqlnull_cell = 0;
#define SQLNULL (&sqlnull_cell)

typedef struct row {
    const char **key; /* n_key parts */
    const char **v;   /* 2 * n_vals cells: old values, then new ones */
    uint8_t absent;   /* ABSENT_OLD / ABSENT_NEW */
} row;
enum { ABSENT_OLD = 1, ABSENT_NEW = 2 };

enum { ITEM_GROUP, ITEM_WRITE };

typedef struct item {
    uint8_t kind;
    /* ITEM_GROUP */
    const target *t;        /* NULL: the relation's own name, unknown IDs */
    const char *schema, *table; /* the reported name (meta_arena or t's) */
    uint32_t relid;         /* for an own-name group */
    uint8_t op;             /* pgw_op */
    bool pk_changed;
    bool ids_known;         /* every row's key read, and not degraded */
    bool cols_known;        /* update: every row had a full old tuple */
    row *rows;
    uint32_t n_rows, cap_rows;
    const char **changed;   /* changed column names (meta_arena) */
    uint32_t n_changed, cap_changed;
    /* ITEM_WRITE: a transactional message's write set */
    pgw_write *w;
} item;

/* A transaction's buffer: its items, in order of first appearance; their
 * rows' keys and values in rows_arena (and the rows arrays, counted in
 * rows_bytes); names in meta_arena. */
typedef struct txbuf {
    item *items;
    uint32_t n_items, cap_items;
    uint32_t last_item; /* a hint: the item the last row went to */
    pgwi_arena rows_arena, meta_arena;
    size_t rows_bytes;
} txbuf;

struct pgw_pgoutput {
    pgw_pgoutput_options o;
    char *prefix;
    pgw_scope scope;   /* a view of scope_s */
    char *scope_s[3];

    target *targets;
    uint32_t n_targets, cap_targets;
    uint32_t *full;      /* relations whose old tuples are full rows */
    uint32_t n_full, cap_full;
    uint64_t gen; /* bumped whenever the targets change */

    rel **rels; /* open addressing by oid, cap_rels a power of two */
    uint32_t n_rels, cap_rels;

    tval *scratch[2]; /* old and new tuples */
    uint32_t cap_scratch;

    /* the transaction in progress */
    bool in_txn, spoiled, degraded;
    bool recovered; /* the failing message already set the state right */
    uint64_t final_lsn;
    uint64_t txn_seq; /* Begins seen: names the transaction in progress */
    txbuf cur;

    /* the last committed transaction, whose write sets are built one at a
     * time as they are taken (so that its rows and its write sets are not
     * all in memory at once) */
    txbuf done;
    bool done_active;
    uint64_t done_lsn;
    uint32_t done_item, done_row; /* where the next write set starts */

    /* ready write sets, among them at most once the reset node */
    pgw_write *q_head, *q_tail;
    size_t q_len;
    pgw_write reset_node;
    bool reset_queued;

    pgw_pgoutput_stats st;
};

static size_t txn_bytes(const pgw_pgoutput *d)
{
    return d->cur.rows_arena.total + d->cur.meta_arena.total + d->cur.rows_bytes;
}

/* ------------------------------------------------------------------ */
/* targets and the relation cache                                      */

static void target_free(target *t)
{
    pgwi_free(t->schema);
    pgwi_free(t->table);
    for (uint32_t i = 0; i < t->n_key; i++)
        pgwi_free(t->key[i]);
    for (uint32_t i = 0; i < t->n_vals; i++)
        pgwi_free(t->vals[i]);
    pgwi_free(t->key);
    pgwi_free(t->vals);
}

static void rel_free(rel *r)
{
    if (!r)
        return;
    pgwi_free(r->nsp);
    pgwi_free(r->name);
    for (uint32_t i = 0; i < r->ncols; i++)
        pgwi_free(r->cols[i].name);
    pgwi_free(r->cols);
    pgwi_free(r);
}

static uint32_t rel_slot(const pgw_pgoutput *d, uint32_t oid)
{
    uint32_t mask = d->cap_rels - 1;
    uint32_t i = (oid * 2654435761u) & mask;
    while (d->rels[i] && d->rels[i]->oid != oid)
        i = (i + 1) & mask;
    return i;
}

static rel *rel_find(const pgw_pgoutput *d, uint32_t oid)
{
    return d->cap_rels ? d->rels[rel_slot(d, oid)] : NULL;
}

/* Room for one more relation (load <= 1/2). */
static int rels_reserve(pgw_pgoutput *d)
{
    if ((d->n_rels + 1) * 2 <= d->cap_rels)
        return PGW_OK;
    uint32_t cap = d->cap_rels ? d->cap_rels * 2 : 16;
    rel **old = d->rels;
    uint32_t old_cap = d->cap_rels;
    rel **fresh = pgwi_calloc(cap, sizeof *fresh);
    if (!fresh)
        return PGW_ENOMEM;
    d->rels = fresh;
    d->cap_rels = cap;
    for (uint32_t i = 0; i < old_cap; i++)
        if (old[i])
            d->rels[rel_slot(d, old[i]->oid)] = old[i];
    pgwi_free(old);
    return PGW_OK;
}

static int32_t col_pos(const rel *r, const char *name)
{
    for (uint32_t i = 0; i < r->ncols; i++)
        if (strcmp(r->cols[i].name, name) == 0)
            return (int32_t)i;
    return -1;
}

/* Resolves the relation's targets against its columns, once per target
 * generation. */
static void rel_resolve(const pgw_pgoutput *d, rel *r)
{
    if (r->gen == d->gen)
        return;
    r->full_rows = false;
    for (uint32_t k = 0; k < d->n_full; k++)
        if (d->full[k] == r->oid)
            r->full_rows = true;
    r->n_rt = 0;
    for (uint32_t k = 0; k < d->n_targets && r->n_rt < PGW_PGOUTPUT_MAX_TARGETS; k++) {
        const target *t = &d->targets[k];
        if (t->relid != r->oid)
            continue;
        rtarget *rt = &r->rt[r->n_rt++];
        rt->t = t;
        rt->key_ok = t->n_key > 0;
        for (uint32_t i = 0; i < t->n_key; i++)
            if ((rt->key_pos[i] = col_pos(r, t->key[i])) < 0)
                rt->key_ok = false;
        for (uint32_t i = 0; i < t->n_vals; i++)
            rt->val_pos[i] = col_pos(r, t->vals[i]);
    }
    r->gen = d->gen;
}

static int scratch_reserve(pgw_pgoutput *d, uint32_t n)
{
    if (n <= d->cap_scratch)
        return PGW_OK;
    for (int s = 0; s < 2; s++) {
        tval *v = pgwi_reallocarray(d->scratch[s], n, sizeof *v);
        if (!v)
            return PGW_ENOMEM;
        d->scratch[s] = v;
    }
    d->cap_scratch = n;
    return PGW_OK;
}

/* ------------------------------------------------------------------ */
/* the queue of ready write sets                                       */

static void q_add(pgw_pgoutput *d, pgw_write *w)
{
    w->qnext = NULL;
    if (d->q_tail)
        d->q_tail->qnext = w;
    else
        d->q_head = w;
    d->q_tail = w;
    d->q_len++;
}

/* Queues the reset: the one node kept for it inside the decoder, so that
 * queuing it never allocates. Queued already, it moves to the tail and
 * the write sets it passes are dropped: they are committed, so the reset
 * that now follows them covers them. */
static void q_add_reset(pgw_pgoutput *d, uint64_t lsn)
{
    pgw_write *r = &d->reset_node;
    if (d->reset_queued) {
        for (pgw_write *w = r->qnext; w;) {
            pgw_write *next = w->qnext;
            pgw_write_free(w);
            d->q_len--;
            w = next;
        }
        r->qnext = NULL;
        d->q_tail = r;
    } else {
        d->reset_queued = true;
        q_add(d, r);
    }
    d->st.resets++;
    r->lsn = lsn;
}

static void txbuf_clear(txbuf *b)
{
    for (uint32_t i = 0; i < b->n_items; i++) {
        pgwi_free(b->items[i].rows);
        pgwi_free(b->items[i].changed);
        pgw_write_free(b->items[i].w);
    }
    b->n_items = 0;
    b->last_item = 0;
    pgwi_arena_free(&b->rows_arena);
    pgwi_arena_free(&b->meta_arena);
    b->rows_bytes = 0;
}

static void txn_clear(pgw_pgoutput *d)
{
    txbuf_clear(&d->cur);
    d->in_txn = d->spoiled = d->degraded = false;
    d->st.txn_bytes = 0;
}

/* Builds the write set of a group that starts at row *at (advanced past
 * it); *last tells whether it was the group's last. */
static int build_chunk(pgw_write **out, pgw_pgoutput *d, item *it, uint64_t lsn,
                       uint32_t *at, bool *last);

/* The next change of the committed transaction, built now; false when it
 * has none left (its buffer is then released). A write set that cannot be
 * built for lack of memory gives a reset instead, for it and the rest of
 * the transaction. */
static bool done_next(pgw_pgoutput *d, pgw_pgoutput_change *out)
{
    while (d->done_active && d->done_item < d->done.n_items) {
        item *it = &d->done.items[d->done_item];
        pgw_write *w = NULL;
        if (it->kind == ITEM_WRITE) {
            w = it->w;
            it->w = NULL;
            w->lsn = d->done_lsn;
            d->done_item++;
        } else {
            bool last = false;
            if (build_chunk(&w, d, it, d->done_lsn, &d->done_row, &last) < 0) {
                txbuf_clear(&d->done);
                d->done_active = false;
                d->st.resets++;
                out->write = NULL;
                out->reset = true;
                out->lsn = d->done_lsn;
                return true;
            }
            if (last) {
                d->done_item++;
                d->done_row = 0;
            }
        }
        d->st.writes++;
        out->write = w;
        out->reset = false;
        out->lsn = d->done_lsn;
        return true;
    }
    txbuf_clear(&d->done);
    d->done_active = false;
    return false;
}

/* Builds what is left of the committed transaction into the queue: done
 * before anything else is queued, so that the order stays commit order. */
static void flush_done(pgw_pgoutput *d)
{
    pgw_pgoutput_change c;
    while (d->done_active && done_next(d, &c)) {
        if (c.reset)
            q_add_reset(d, c.lsn);
        else
            q_add(d, c.write);
    }
}

static void q_push(pgw_pgoutput *d, pgw_write *w)
{
    flush_done(d);
    q_add(d, w);
    d->st.writes++;
}

static void q_reset(pgw_pgoutput *d, uint64_t lsn)
{
    flush_done(d);
    q_add_reset(d, lsn);
}

/* The write sets a group gives from row `from` on. */
static size_t chunks_left(const pgw_pgoutput *d, const item *it, uint32_t from)
{
    if (it->kind == ITEM_WRITE || !(it->ids_known && it->t))
        return 1;
    uint32_t left = it->n_rows > from ? it->n_rows - from : 0;
    return left == 0 ? (from == 0 ? 1 : 0) : (left + d->o.max_ids_per_write - 1) /
                                                 d->o.max_ids_per_write;
}

static size_t ready(const pgw_pgoutput *d)
{
    size_t n = d->q_len;
    for (uint32_t i = d->done_item; d->done_active && i < d->done.n_items; i++)
        n += chunks_left(d, &d->done.items[i], i == d->done_item ? d->done_row : 0);
    return n;
}

/* ------------------------------------------------------------------ */
/* the transaction's buffer                                            */

/* A failure inside a transaction: its write sets are lost, so at its
 * Commit a reset takes their place; nothing more of it is kept. */
static void spoil(pgw_pgoutput *d)
{
    if (!d->in_txn) {
        q_reset(d, 0);
        return;
    }
    bool in = d->in_txn;
    uint64_t lsn = d->final_lsn;
    txn_clear(d);
    d->in_txn = in;
    d->final_lsn = lsn;
    d->spoiled = true;
}

/* Past max_txn_bytes: every group forgets its rows (IDs unknown from now
 * on); changed columns and everything else stay. */
static void degrade(pgw_pgoutput *d)
{
    for (uint32_t i = 0; i < d->cur.n_items; i++) {
        item *it = &d->cur.items[i];
        pgwi_free(it->rows);
        it->rows = NULL;
        it->n_rows = it->cap_rows = 0;
        it->ids_known = false;
    }
    pgwi_arena_free(&d->cur.rows_arena);
    d->cur.rows_bytes = 0;
    d->degraded = true;
    d->st.degraded++;
}

static void note_bytes(pgw_pgoutput *d)
{
    size_t b = txn_bytes(d);
    if (b > d->o.max_txn_bytes && !d->degraded) {
        degrade(d);
        b = txn_bytes(d);
    }
    d->st.txn_bytes = b;
    if (b > d->st.peak_txn_bytes)
        d->st.peak_txn_bytes = b;
}

static int items_reserve(pgw_pgoutput *d)
{
    if (d->cur.n_items < d->cur.cap_items)
        return PGW_OK;
    uint32_t cap = d->cur.cap_items ? d->cur.cap_items * 2 : 8;
    item *a = pgwi_reallocarray(d->cur.items, cap, sizeof *a);
    if (!a)
        return PGW_ENOMEM;
    d->cur.items = a;
    d->cur.cap_items = cap;
    return PGW_OK;
}

/* The existing group of (target, op, pk_changed), or NULL. For an
 * own-name group (t NULL) the relation r names it. */
static item *group_find(pgw_pgoutput *d, const target *t, const rel *r, uint8_t op,
                        bool pk_changed)
{
    uint32_t h = d->cur.last_item;
    for (uint32_t k = 0; k < d->cur.n_items; k++) {
        uint32_t i = (h + k) % d->cur.n_items;
        item *it = &d->cur.items[i];
        if (it->kind == ITEM_GROUP && it->t == t && it->op == op &&
            it->pk_changed == pk_changed && (t || it->relid == r->oid)) {
            d->cur.last_item = i;
            return it;
        }
    }
    return NULL;
}

/* The schema a relation without a target is reported in (pgoutput sends
 * an empty namespace for pg_catalog). */
static const char *own_schema(const rel *r)
{
    return r->nsp[0] ? r->nsp : "pg_catalog";
}

/* The name a group of target t (NULL: the relation r's own name) reports;
 * an own name is copied into the transaction's meta_arena. */
static int group_name(const char **schema, const char **table, pgw_pgoutput *d,
                      const target *t, const rel *r)
{
    if (t) {
        *schema = t->schema;
        *table = t->table;
        return PGW_OK;
    }
    *schema = pgwi_arena_strdup(&d->cur.meta_arena, own_schema(r));
    *table = pgwi_arena_strdup(&d->cur.meta_arena, r->name);
    return *schema && *table ? PGW_OK : PGW_ENOMEM;
}

/* A new group of (target, op, pk_changed), inserted at item position at
 * (n_items: appended); nothing changes on failure. */
static int group_make(item **out, pgw_pgoutput *d, uint32_t at, const target *t, const rel *r,
                      uint8_t op, bool pk_changed)
{
    const char *schema, *table;
    if (group_name(&schema, &table, d, t, r) < 0 || items_reserve(d) < 0)
        return PGW_ENOMEM;
    item *it = &d->cur.items[at];
    memmove(it + 1, it, (size_t)(d->cur.n_items - at) * sizeof *it);
    memset(it, 0, sizeof *it);
    it->kind = ITEM_GROUP;
    it->t = t;
    it->op = op;
    it->pk_changed = pk_changed;
    it->ids_known = (op == PGW_OP_INSERT || op == PGW_OP_UPDATE || op == PGW_OP_DELETE) &&
                    !d->degraded && t && t->n_key > 0;
    it->cols_known = op == PGW_OP_UPDATE && !pk_changed;
    it->relid = t ? 0 : r->oid;
    it->schema = schema;
    it->table = table;
    d->cur.n_items++;
    d->cur.last_item = at;
    *out = it;
    note_bytes(d);
    return PGW_OK;
}

/* The group of (target, op, pk_changed), made when new (appended). */
static int group_get(item **out, pgw_pgoutput *d, const target *t, const rel *r, uint8_t op,
                     bool pk_changed)
{
    if ((*out = group_find(d, t, r, op, pk_changed)))
        return PGW_OK;
    return group_make(out, d, d->cur.n_items, t, r, op, pk_changed);
}

/* Whether item it reports the table schema.table. */
static bool item_reports(const item *it, const char *schema, const char *table)
{
    const char *s = it->kind == ITEM_GROUP ? it->schema : pgw_write_schema(it->w);
    const char *t = it->kind == ITEM_GROUP ? it->table : pgw_write_table(it->w);
    return s && t && strcmp(s, schema) == 0 && strcmp(t, table) == 0;
}

/* The ddl group of a target of relation r (t NULL: r's own name): one per
 * reported table and transaction (a partition and an inheritance child of
 * one watched table share it), placed before the transaction's first item
 * that reports the same table, so that its write set comes before theirs. */
static int ddl_group(pgw_pgoutput *d, const target *t, const rel *r)
{
    const char *schema = t ? t->schema : own_schema(r);
    const char *table = t ? t->table : r->name;
    uint32_t at = d->cur.n_items;
    for (uint32_t i = d->cur.n_items; i-- > 0;) {
        const item *it = &d->cur.items[i];
        if (!item_reports(it, schema, table))
            continue;
        if (it->kind == ITEM_GROUP && it->op == PGW_OP_DDL)
            return PGW_OK;
        at = i;
    }
    item *it;
    return group_make(&it, d, at, t, r, PGW_OP_DDL, false);
}

/* Adds a changed column name to a group (once). */
static int group_changed(pgw_pgoutput *d, item *it, const char *name)
{
    for (uint32_t i = 0; i < it->n_changed; i++)
        if (strcmp(it->changed[i], name) == 0)
            return PGW_OK;
    if (it->n_changed == it->cap_changed) {
        uint32_t cap = it->cap_changed ? it->cap_changed * 2 : 8;
        const char **a = pgwi_reallocarray(it->changed, cap, sizeof *a);
        if (!a)
            return PGW_ENOMEM;
        it->changed = a;
        it->cap_changed = cap;
    }
    const char *s = pgwi_arena_strdup(&d->cur.meta_arena, name);
    if (!s)
        return PGW_ENOMEM;
    it->changed[it->n_changed++] = s;
    return PGW_OK;
}

/* The value cells of one side of a row: for each value column, the
 * column's value in a tuple, or NULL when unknown. */
typedef struct cells {
    const tval *v[MAX_VALUES];
} cells;

/* ------------------------------------------------------------------ */
/* what a row tells                                                    */

static bool tval_eq(const tval *a, const tval *b)
{
    if (a->kind != b->kind)
        return false;
    if (a->kind == TV_TEXT || a->kind == TV_BINARY)
        return a->len == b->len && memcmp(a->p, b->p, a->len) == 0;
    return a->kind == TV_NULL; /* two unchanged TOAST markers tell nothing */
}

/* The value of column i after an update: the new tuple's, or for an
 * unchanged TOASTed value the old tuple's when it is full. */
static const tval *after(const tuple *oldt, const tuple *newt, uint32_t i)
{
    const tval *v = &newt->v[i];
    if (v->kind == TV_UNCHANGED && oldt->kind == 'O')
        return &oldt->v[i];
    return v;
}

/* Whether column i of a key-only or full old tuple is known: a key-only
 * tuple ('K') sends every other column as an 'n' placeholder, which means
 * unknown, never NULL (pgoutput.h). */
static bool old_known(const tuple *oldt, uint32_t i)
{
    return oldt->kind == 'O' || (oldt->kind == 'K' && oldt->v[i].kind == TV_TEXT);
}

/* A cell worth keeping: SQL NULL, or text that is valid UTF-8; else NULL
 * (unknown: unchanged TOAST, binary, bytes that are not UTF-8). */
static const tval *cell_of(const tval *v)
{
    if (v->kind == TV_NULL)
        return v;
    if (v->kind == TV_TEXT && pgwi_utf8_valid(v->p, v->len))
        return v;
    return NULL;
}

/* The cells of one side from a tuple (the old side of a key-only tuple:
 * its key columns only); the new side of an update takes unchanged
 * TOASTed values from a full old tuple. */
static void side_cells(cells *out, const rtarget *rt, const tuple *oldt, const tuple *newt,
                       int side)
{
    const target *t = rt->t;
    for (uint32_t j = 0; j < t->n_vals; j++) {
        int32_t i = rt->val_pos[j];
        const tval *v = NULL;
        if (i >= 0) {
            if (side == PGW_SIDE_OLD)
                v = old_known(oldt, (uint32_t)i) ? cell_of(&oldt->v[i]) : NULL;
            else
                v = cell_of(after(oldt, newt, (uint32_t)i));
        }
        out->v[j] = v;
    }
}

/* The key of a row on one side into parts[]; true when every part is
 * known text in UTF-8. */
static bool key_of(const tval **parts, const rtarget *rt, const tuple *oldt, const tuple *newt,
                   bool new_side)
{
    bool ok = rt->key_ok;
    for (uint32_t k = 0; ok && k < rt->t->n_key; k++) {
        uint32_t i = (uint32_t)rt->key_pos[k];
        const tval *v = new_side ? after(oldt, newt, i) : &oldt->v[i];
        if (new_side && v->kind == TV_UNCHANGED && oldt->kind == 'K' &&
            oldt->v[i].kind == TV_TEXT)
            v = &oldt->v[i]; /* a TOASTed key logged in the key tuple */
        parts[k] = v;
        ok = v->kind == TV_TEXT && pgwi_utf8_valid(v->p, v->len);
    }
    return ok;
}

static bool keys_equal(const tval **a, const tval **b, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++)
        if (a[k]->len != b[k]->len || memcmp(a[k]->p, b[k]->p, a[k]->len) != 0)
            return false;
    return true;
}

/* Copies text into a row's block: NUL-terminated, advancing *at. */
static const char *pack(char **at, const tval *v)
{
    char *s = *at;
    memcpy(s, v->p, v->len);
    s[v->len] = '\0';
    *at += v->len + 1;
    return s;
}

/* Appends a row to a group: its key, its cells on each side (NULL: none
 * known on that side), whether it is absent on a side. One arena block
 * holds its pointers and its text, so a row costs one allocation. */
static int row_add(pgw_pgoutput *d, item *it, const tval **key, const cells *oldc,
                   const cells *newc, uint8_t absent)
{
    if (it->n_rows == it->cap_rows) {
        uint32_t cap = it->cap_rows ? it->cap_rows * 2 : 16;
        row *a = pgwi_reallocarray(it->rows, cap, sizeof *a);
        if (!a)
            return PGW_ENOMEM;
        d->cur.rows_bytes += (size_t)(cap - it->cap_rows) * sizeof *a;
        it->rows = a;
        it->cap_rows = cap;
    }
    const target *t = it->t;
    size_t n_cells = (size_t)t->n_vals * 2, text = 0;
    for (uint32_t k = 0; k < t->n_key; k++)
        text += key[k]->len + 1;
    const cells *side[2] = {oldc, newc};
    for (int sd = 0; sd < 2; sd++)
        for (uint32_t j = 0; side[sd] && j < t->n_vals; j++)
            if (side[sd]->v[j] && side[sd]->v[j]->kind == TV_TEXT)
                text += side[sd]->v[j]->len + 1;
    size_t ptrs = (t->n_key + n_cells) * sizeof(const char *);
    char *block = pgwi_arena_alloc(&d->cur.rows_arena, ptrs + text);
    if (!block)
        return PGW_ENOMEM;
    row *rw = &it->rows[it->n_rows];
    rw->key = (const char **)(void *)block;
    rw->v = n_cells ? rw->key + t->n_key : NULL;
    rw->absent = absent;
    char *at = block + ptrs;
    for (uint32_t k = 0; k < t->n_key; k++)
        rw->key[k] = pack(&at, key[k]);
    for (int sd = 0; sd < 2; sd++)
        for (uint32_t j = 0; j < t->n_vals; j++) {
            const tval *v = side[sd] ? side[sd]->v[j] : NULL;
            rw->v[(size_t)sd * t->n_vals + j] =
                !v ? NULL : v->kind == TV_NULL ? SQLNULL : pack(&at, v);
        }
    it->n_rows++;
    note_bytes(d);
    return PGW_OK;
}

/* An insert (oldt none) or a delete (newt none) for one target. */
static int add_plain(pgw_pgoutput *d, const rel *r, const rtarget *rt, uint8_t op,
                     const tuple *oldt, const tuple *newt)
{
    item *it;
    int rc;
    if ((rc = group_get(&it, d, rt->t, r, op, false)) < 0)
        return rc;
    if (!it->ids_known)
        return PGW_OK;
    const tval *parts[PGW_ROWID_MAX_PARTS];
    bool ins = op == PGW_OP_INSERT;
    if (!key_of(parts, rt, oldt, newt, ins)) {
        it->ids_known = false;
        return PGW_OK;
    }
    cells c;
    side_cells(&c, rt, oldt, newt, ins ? PGW_SIDE_NEW : PGW_SIDE_OLD);
    return row_add(d, it, parts, ins ? NULL : &c, ins ? &c : NULL, 0);
}

/* An update for one target (rt NULL: an own-name group). */
static int add_update(pgw_pgoutput *d, const rel *r, const rtarget *rt, const tuple *oldt,
                      const tuple *newt)
{
    const target *t = rt ? rt->t : NULL;
    const tval *okey[PGW_ROWID_MAX_PARTS], *nkey[PGW_ROWID_MAX_PARTS];
    bool nk = rt && key_of(nkey, rt, oldt, newt, true);
    bool has_old = oldt->kind == 'K' || oldt->kind == 'O';
    bool ok_old = has_old && rt && key_of(okey, rt, oldt, newt, false);
    cells oc, nc;
    item *it;
    int rc;
    if (rt) {
        side_cells(&nc, rt, oldt, newt, PGW_SIDE_NEW);
        if (has_old)
            side_cells(&oc, rt, oldt, newt, PGW_SIDE_OLD);
    }
    if (nk && ok_old && !keys_equal(okey, nkey, t->n_key)) {
        /* The key changed: the old row goes, the new one comes. */
        if ((rc = group_get(&it, d, t, r, PGW_OP_UPDATE, true)) < 0)
            return rc;
        if (!it->ids_known)
            return PGW_OK;
        if ((rc = row_add(d, it, okey, &oc, NULL, ABSENT_NEW)) < 0 || !it->ids_known)
            return rc;
        return row_add(d, it, nkey, NULL, &nc, ABSENT_OLD);
    }
    if ((rc = group_get(&it, d, t, r, PGW_OP_UPDATE, false)) < 0)
        return rc;
    bool listed = true;
    if (oldt->kind == 'O') {
        /* A full old row: compare every column. */
        bool any = false;
        for (uint32_t i = 0; i < r->ncols; i++) {
            const tval *o = &oldt->v[i], *n = &newt->v[i];
            if (n->kind == TV_UNCHANGED || tval_eq(o, n))
                continue;
            any = true;
            if (it->cols_known && (rc = group_changed(d, it, r->cols[i].name)) < 0)
                return rc;
        }
        listed = any;
    } else {
        it->cols_known = false;
    }
    if (!listed || !it->ids_known)
        return PGW_OK;
    if (!nk || (has_old && !ok_old)) {
        /* A key we cannot read (or an old key tuple without the primary
         * key, under REPLICA IDENTITY USING INDEX): IDs unknown. */
        it->ids_known = false;
        return PGW_OK;
    }
    return row_add(d, it, nkey, has_old ? &oc : NULL, &nc, 0);
}

/* ------------------------------------------------------------------ */
/* reading messages                                                    */

static int read_tuple(rd *r, const rel *rl, tval *v, pgw_error *err)
{
    uint16_t n;
    int rc;
    if ((rc = rd_u16(r, &n, "the tuple's column count", err)) < 0)
        return rc;
    if (n != rl->ncols) {
        char what[96];
        snprintf(what, sizeof what, "a tuple of %u columns for a relation of %u",
                 (unsigned)n, (unsigned)rl->ncols);
        return rd_fail(r, err, what);
    }
    for (uint32_t i = 0; i < n; i++) {
        uint8_t kind;
        if ((rc = rd_u8(r, &kind, "a column's kind", err)) < 0)
            return rc;
        v[i].kind = kind;
        v[i].p = NULL;
        v[i].len = 0;
        switch (kind) {
        case TV_NULL:
        case TV_UNCHANGED:
            break;
        case TV_TEXT:
        case TV_BINARY: {
            uint32_t len;
            if ((rc = rd_u32(r, &len, "a column's length", err)) < 0 ||
                (rc = rd_need(r, len, "a column's value", err)) < 0)
                return rc;
            v[i].p = (const char *)r->p + r->off;
            v[i].len = len;
            r->off += len;
            break;
        }
        default: {
            r->off--;
            char what[64];
            snprintf(what, sizeof what, "unknown column kind 0x%02x", kind);
            return rd_fail(r, err, what);
        }
        }
    }
    return PGW_OK;
}

static int read_relid(rd *r, const pgw_pgoutput *d, rel **out, pgw_error *err)
{
    uint32_t oid;
    int rc;
    if ((rc = rd_u32(r, &oid, "the relation's OID", err)) < 0)
        return rc;
    rel *rl = rel_find(d, oid);
    if (!rl || rl->stale) {
        r->off -= 4;
        char what[80];
        snprintf(what, sizeof what, "relation %u has had no Relation message", oid);
        return rd_fail(r, err, what);
    }
    *out = rl;
    return PGW_OK;
}

static int need_txn(rd *r, const pgw_pgoutput *d, pgw_error *err)
{
    if (!d->in_txn) {
        r->off = 0;
        return rd_fail(r, err, "a change outside a transaction (no Begin)");
    }
    return PGW_OK;
}

/* Whether two Relation messages of one relation describe the same
 * definition: its name and schema, and its columns in order with their
 * names, types and type modifiers. The replica identity (the relation's
 * setting and the columns' key flags) is left out: it changes what the
 * stream says about old rows, not any query's result (pgoutput.h). */
static bool rel_same_definition(const rel *a, const rel *b)
{
    if (a->ncols != b->ncols || strcmp(a->nsp, b->nsp) != 0 || strcmp(a->name, b->name) != 0)
        return false;
    for (uint32_t i = 0; i < a->ncols; i++) {
        const rcol *x = &a->cols[i], *y = &b->cols[i];
        if (x->typoid != y->typoid || x->typmod != y->typmod || strcmp(x->name, y->name) != 0)
            return false;
    }
    return true;
}

/* A relation's definition changed while streaming: a ddl write set for
 * each of its targets (its own name when it has none), at its
 * transaction's commit before the transaction's other write sets for the
 * same table, or at once outside a transaction. A spoiled transaction
 * gives a reset, which covers it. */
/* A definition change of r: the ddl write set of each table it reports
 * as (its targets, else its own name), and, when it was renamed (or moved
 * to another schema) and reports as targets, of its new own name too:
 * the host's subscriptions name the table as it is now, while its
 * targets keep the name they were given until the host gives new ones. */
static int on_definition_changed(pgw_pgoutput *d, rel *r, bool renamed)
{
    if (d->spoiled)
        return PGW_OK;
    rel_resolve(d, r);
    uint32_t n = r->n_rt ? r->n_rt : 1;
    if (renamed && r->n_rt)
        n++;
    int rc;
    for (uint32_t k = 0; k < n; k++) {
        const target *t = k < r->n_rt ? r->rt[k].t : NULL;
        if (d->in_txn) {
            if ((rc = ddl_group(d, t, r)) < 0)
                return rc;
            continue;
        }
        pgw_write *w = NULL;
        if ((rc = pgw_write_new(&w, &d->scope, t ? t->schema : own_schema(r),
                                t ? t->table : r->name, PGW_OP_DDL, NULL)) < 0)
            return rc;
        q_push(d, w); /* lsn 0: a Relation message carries no position */
    }
    return PGW_OK;
}

static int on_relation(pgw_pgoutput *d, rd *r, pgw_pgoutput_message *m, pgw_error *err)
{
    uint32_t oid;
    const char *nsp = NULL, *name = NULL;
    size_t nsp_len = 0, name_len = 0;
    uint8_t ident;
    uint16_t ncols;
    int rc;
    if ((rc = rd_u32(r, &oid, "the relation's OID", err)) < 0 ||
        (rc = rd_str(r, &nsp, &nsp_len, "the namespace", err)) < 0 ||
        (rc = rd_str(r, &name, &name_len, "the relation's name", err)) < 0 ||
        (rc = rd_u8(r, &ident, "the replica identity", err)) < 0 ||
        (rc = rd_u16(r, &ncols, "the column count", err)) < 0)
        return rc;
    if (oid == 0 || name_len == 0)
        return rd_fail(r, err, oid ? "an empty relation name" : "relation OID 0");
    rel *nr = pgwi_calloc(1, sizeof *nr);
    if (!nr)
        return PGW_ENOMEM;
    nr->oid = oid;
    nr->cols = ncols ? pgwi_calloc(ncols, sizeof *nr->cols) : NULL;
    nr->nsp = pgwi_strndup(nsp, nsp_len);
    nr->name = pgwi_strndup(name, name_len);
    if ((ncols && !nr->cols) || !nr->nsp || !nr->name) {
        rel_free(nr);
        return PGW_ENOMEM;
    }
    for (uint32_t i = 0; i < ncols; i++) {
        const char *cn = NULL;
        size_t cl = 0;
        uint8_t flags;
        uint32_t typoid, typmod;
        if ((rc = rd_u8(r, &flags, "a column's flags", err)) < 0 ||
            (rc = rd_str(r, &cn, &cl, "a column's name", err)) < 0 ||
            (rc = rd_u32(r, &typoid, "a column's type OID", err)) < 0 ||
            (rc = rd_u32(r, &typmod, "a column's type modifier", err)) < 0) {
            rel_free(nr);
            return rc;
        }
        nr->ncols = (uint16_t)(i + 1);
        nr->cols[i].flags = flags;
        nr->cols[i].typoid = typoid;
        nr->cols[i].typmod = typmod;
        if (!(nr->cols[i].name = pgwi_strndup(cn, cl))) {
            rel_free(nr);
            return PGW_ENOMEM;
        }
    }
    nr->ncols = ncols;
    if ((rc = rd_end(r, err)) < 0 || (rc = scratch_reserve(d, ncols)) < 0 ||
        (rc = rels_reserve(d)) < 0) {
        rel_free(nr);
        return rc;
    }
    uint32_t s = rel_slot(d, oid);
    rel *old = d->rels[s];
    bool changed = false, renamed = false;
    if (old) {
        changed = old->ddl_pending || !rel_same_definition(old, nr);
        renamed = strcmp(old->nsp, nr->nsp) != 0 || strcmp(old->name, nr->name) != 0;
        nr->changed_txn = old->changed_txn;
        rel_free(old);
    } else {
        d->n_rels++;
    }
    nr->gen = d->gen - 1; /* unresolved */
    d->rels[s] = nr;
    m->relid = oid;
    m->relation_changed = changed;
    if (!changed)
        return PGW_OK;
    nr->changed_txn = d->in_txn ? d->txn_seq : 0;
    return on_definition_changed(d, nr, renamed);
}

static int on_change(pgw_pgoutput *d, rd *r, char type, pgw_pgoutput_message *m,
                     pgw_error *err)
{
    int rc;
    rel *rl;
    if ((rc = need_txn(r, d, err)) < 0 || (rc = read_relid(r, d, &rl, err)) < 0)
        return rc;
    m->relid = rl->oid;
    tuple oldt = {0, d->scratch[0]}, newt = {0, d->scratch[1]};
    uint8_t k;
    if (type == 'U' || type == 'D') {
        if ((rc = rd_u8(r, &k, "the tuple's kind", err)) < 0)
            return rc;
        if (k == 'K' || k == 'O') {
            oldt.kind = k;
            if ((rc = read_tuple(r, rl, oldt.v, err)) < 0)
                return rc;
            if (type == 'U' && (rc = rd_u8(r, &k, "the new tuple's kind", err)) < 0)
                return rc;
        } else if (type == 'D') {
            r->off--;
            return rd_fail(r, err, "a Delete without a 'K' or 'O' old tuple");
        }
    } else if ((rc = rd_u8(r, &k, "the tuple's kind", err)) < 0) {
        return rc;
    }
    if (type != 'D') {
        if (k != 'N') {
            r->off--;
            return rd_fail(r, err, "expected the new tuple ('N')");
        }
        newt.kind = 'N';
        if ((rc = read_tuple(r, rl, newt.v, err)) < 0)
            return rc;
    }
    if ((rc = rd_end(r, err)) < 0)
        return rc;
    d->st.rows++;
    if (d->spoiled)
        return PGW_OK;
    /* Everything is read: now buffer it, for each target. An 'O' tuple of
     * a relation not declared full may be a partition's key and
     * placeholders (pgoutput.h): read it as the key tuple it may be. */
    rel_resolve(d, rl);
    if (oldt.kind == 'O' && !rl->full_rows)
        oldt.kind = 'K';
    uint8_t op = type == 'I' ? PGW_OP_INSERT : type == 'U' ? PGW_OP_UPDATE : PGW_OP_DELETE;
    if (rl->n_rt == 0) {
        /* No target: its own name, unknown IDs (an update still tells its
         * changed columns when the old row is full). */
        item *it;
        if (op == PGW_OP_UPDATE)
            return add_update(d, rl, NULL, &oldt, &newt);
        return group_get(&it, d, NULL, rl, op, false);
    }
    for (uint32_t i = 0; i < rl->n_rt; i++) {
        const rtarget *rt = &rl->rt[i];
        rc = op == PGW_OP_UPDATE ? add_update(d, rl, rt, &oldt, &newt)
                                 : add_plain(d, rl, rt, op, &oldt, &newt);
        if (rc < 0)
            return rc;
    }
    return PGW_OK;
}

static int on_truncate(pgw_pgoutput *d, rd *r, pgw_error *err)
{
    uint32_t n;
    uint8_t options;
    int rc;
    if ((rc = need_txn(r, d, err)) < 0 ||
        (rc = rd_u32(r, &n, "the number of relations", err)) < 0 ||
        (rc = rd_u8(r, &options, "the options", err)) < 0 ||
        (rc = rd_need(r, (size_t)n * 4, "the relation OIDs", err)) < 0)
        return rc;
    size_t start = r->off;
    for (uint32_t i = 0; i < n; i++) {
        rel *rl;
        if ((rc = read_relid(r, d, &rl, err)) < 0)
            return rc;
    }
    if ((rc = rd_end(r, err)) < 0)
        return rc;
    if (d->spoiled)
        return PGW_OK;
    r->off = start;
    for (uint32_t i = 0; i < n; i++) {
        rel *rl;
        item *it;
        read_relid(r, d, &rl, NULL);
        rel_resolve(d, rl);
        if (rl->n_rt == 0 && (rc = group_get(&it, d, NULL, rl, PGW_OP_TRUNCATE, false)) < 0)
            return rc;
        for (uint32_t k = 0; k < rl->n_rt; k++)
            if ((rc = group_get(&it, d, rl->rt[k].t, rl, PGW_OP_TRUNCATE, false)) < 0)
                return rc;
    }
    return PGW_OK;
}

/* Whether the transaction already holds the table-level write set that a
 * transactional message's `w` (a truncate or a ddl) would add, for the
 * same table: `TRUNCATE root` is a Truncate message for the root and, from
 * each partition's TRUNCATE trigger, a message naming the root
 * (migration_004.sql), and each ALTER of a watched table announces it
 * again. All of a transaction's write sets arrive together at its commit,
 * so one of them refreshes what all would. */
static bool table_level_again(const pgw_pgoutput *d, const pgw_write *w)
{
    pgw_op op = pgw_write_op(w);
    if ((op != PGW_OP_TRUNCATE && op != PGW_OP_DDL) || pgw_write_ids_known(w))
        return false;
    for (uint32_t i = 0; i < d->cur.n_items; i++) {
        const item *it = &d->cur.items[i];
        if (!item_reports(it, pgw_write_schema(w), pgw_write_table(w)))
            continue;
        if (it->kind == ITEM_GROUP ? it->op == (uint8_t)op : pgw_write_op(it->w) == op)
            return true;
    }
    return false;
}

static int on_message(pgw_pgoutput *d, rd *r, pgw_pgoutput_message *m, pgw_error *err)
{
    uint8_t flags;
    uint64_t lsn;
    const char *prefix = NULL;
    size_t plen = 0;
    uint32_t clen;
    int rc;
    if ((rc = rd_u8(r, &flags, "the flags", err)) < 0 ||
        (rc = rd_u64(r, &lsn, "the message's LSN", err)) < 0 ||
        (rc = rd_str(r, &prefix, &plen, "the prefix", err)) < 0 ||
        (rc = rd_u32(r, &clen, "the content's length", err)) < 0 ||
        (rc = rd_need(r, clen, "the content", err)) < 0)
        return rc;
    const char *content = (const char *)r->p + r->off;
    r->off += clen;
    if ((rc = rd_end(r, err)) < 0)
        return rc;
    m->lsn = lsn;
    bool transactional = flags & 1;
    m->prefix = prefix;
    m->content = content;
    m->content_len = clen;
    m->transactional = transactional;
    if (transactional && !d->in_txn) {
        r->off = 0;
        return rd_fail(r, err, "a transactional message outside a transaction");
    }
    if (plen != strlen(d->prefix) || memcmp(prefix, d->prefix, plen) != 0)
        return PGW_OK;
    if (transactional && d->spoiled)
        return PGW_OK;
    pgw_write *w = NULL;
    if ((rc = pgw_payload_decode(&w, &d->scope, content, clen, NULL)) < 0)
        return rc;
    if (!transactional) {
        w->lsn = lsn;
        q_push(d, w);
        return PGW_OK;
    }
    if (table_level_again(d, w)) {
        pgw_write_free(w);
        return PGW_OK;
    }
    if (items_reserve(d) < 0) {
        pgw_write_free(w);
        return PGW_ENOMEM;
    }
    item *it = &d->cur.items[d->cur.n_items++];
    memset(it, 0, sizeof *it);
    it->kind = ITEM_WRITE;
    it->w = w;
    return PGW_OK;
}

/* ------------------------------------------------------------------ */
/* commit: the transaction's write sets                                */

/* Builds the write set of a group that starts at row *row (advanced
 * past it); *last tells whether it was the group's last. */
static int build_chunk(pgw_write **out, pgw_pgoutput *d, item *it, uint64_t lsn,
                       uint32_t *at, bool *last)
{
    pgw_write *w = NULL;
    int rc;
    bool ids = it->ids_known && it->t;
    uint32_t done = *at;
    uint32_t n = ids ? it->n_rows - done : 0;
    if (n > d->o.max_ids_per_write)
        n = (uint32_t)d->o.max_ids_per_write;
    if ((rc = pgw_write_new(&w, &d->scope, it->schema, it->table, (pgw_op)it->op, NULL)) < 0)
        return rc;
    w->lsn = lsn;
    const target *t = it->t;
    if (ids) {
        pgw_rowid stack[64];
        pgw_rowid *rids = n <= 64 ? stack : pgwi_calloc(n, sizeof *rids);
        if (!rids)
            goto nomem;
        for (uint32_t i = 0; i < n; i++) {
            rids[i].parts = it->rows[done + i].key;
            rids[i].n_parts = t->n_key;
        }
        rc = pgw_write_set_ids(w, rids, n, false, NULL);
        if (rids != stack)
            pgwi_free(rids);
        if (rc < 0)
            goto fail;
    }
    if (it->op == PGW_OP_UPDATE && it->pk_changed)
        w->pk_changed = true;
    if (it->op == PGW_OP_UPDATE && it->cols_known && !it->pk_changed &&
        (rc = pgw_write_set_columns(w, it->changed, it->n_changed, false, NULL)) < 0)
        goto fail;
    if (ids && n && t->n_vals) {
        if (pgwi_write_vcols(w, (const char *const *)t->vals, t->n_vals) < 0)
            goto nomem;
        for (uint32_t i = 0; i < n; i++) {
            const row *rw = &it->rows[done + i];
            for (int side = 0; side < 2; side++) {
                if (rw->absent & (side == PGW_SIDE_OLD ? ABSENT_OLD : ABSENT_NEW)) {
                    if (pgwi_write_absent(w, i, side) < 0)
                        goto nomem;
                    continue;
                }
                for (uint32_t j = 0; j < t->n_vals; j++) {
                    const char *cell = rw->v[(size_t)side * t->n_vals + j];
                    if (cell && pgwi_write_put(w, i, side, j, cell == SQLNULL ? NULL : cell) < 0)
                        goto nomem;
                }
            }
        }
    } else if (ids && n && it->pk_changed) {
        for (uint32_t i = 0; i < n; i++) {
            const row *rw = &it->rows[done + i];
            if ((rw->absent & ABSENT_OLD && pgwi_write_absent(w, i, PGW_SIDE_OLD) < 0) ||
                (rw->absent & ABSENT_NEW && pgwi_write_absent(w, i, PGW_SIDE_NEW) < 0))
                goto nomem;
        }
    }
    *at = done + n;
    *last = !ids || *at >= it->n_rows;
    *out = w;
    return PGW_OK;
nomem:
    rc = PGW_ENOMEM;
fail:
    pgw_write_free(w);
    return rc;
}

static int on_commit(pgw_pgoutput *d, rd *r, pgw_pgoutput_message *m, pgw_error *err)
{
    uint8_t flags;
    uint64_t lsn, end, t;
    int rc;
    if ((rc = rd_u8(r, &flags, "the flags", err)) < 0 ||
        (rc = rd_u64(r, &lsn, "the commit LSN", err)) < 0 ||
        (rc = rd_u64(r, &end, "the end LSN", err)) < 0 ||
        (rc = rd_u64(r, &t, "the commit time", err)) < 0 || (rc = rd_end(r, err)) < 0)
        return rc;
    if (!d->in_txn) {
        r->off = 0;
        return rd_fail(r, err, "a Commit outside a transaction (no Begin)");
    }
    if (lsn != d->final_lsn) {
        /* Not the transaction that began: whatever it was is committed,
         * and a reset covers it. */
        q_reset(d, lsn);
        txn_clear(d);
        d->recovered = true;
        r->off = 2;
        return rd_fail(r, err, "a commit LSN other than its Begin's final LSN");
    }
    m->lsn = lsn;
    m->end_lsn = end;
    m->commit_time = (int64_t)t;
    d->st.transactions++;
    if (d->spoiled) {
        q_reset(d, lsn);
        txn_clear(d);
        return PGW_OK;
    }
    /* Its write sets are built as they are taken (pgw_pgoutput_next()):
     * what was left of the one before goes to the queue first. */
    flush_done(d);
    txbuf spare = d->done;
    d->done = d->cur;
    d->cur = spare;
    d->done_active = d->done.n_items > 0;
    d->done_lsn = lsn;
    d->done_item = d->done_row = 0;
    txn_clear(d);
    return PGW_OK;
}

static int on_begin(pgw_pgoutput *d, rd *r, pgw_pgoutput_message *m, pgw_error *err)
{
    uint64_t lsn, t;
    uint32_t xid;
    int rc;
    if ((rc = rd_u64(r, &lsn, "the final LSN", err)) < 0 ||
        (rc = rd_u64(r, &t, "the commit time", err)) < 0 ||
        (rc = rd_u32(r, &xid, "the transaction ID", err)) < 0 || (rc = rd_end(r, err)) < 0)
        return rc;
    /* One transaction buffered at a time: what is left of the last
     * committed one is built into the queue before this one is kept. */
    flush_done(d);
    rc = PGW_OK;
    if (d->in_txn) {
        /* The last transaction never committed here: a reset stands for
         * it, and this one starts clean. */
        q_reset(d, d->final_lsn);
        txn_clear(d);
        d->recovered = true;
        r->off = 0;
        rc = rd_fail(r, err, "a Begin inside a transaction (no Commit)");
    }
    d->in_txn = true;
    d->final_lsn = lsn;
    d->txn_seq++;
    m->lsn = lsn;
    m->commit_time = (int64_t)t;
    m->xid = xid;
    return rc;
}

static const char *type_name(char type)
{
    switch (type) {
    case 'B': return "Begin message";
    case 'C': return "Commit message";
    case 'O': return "Origin message";
    case 'R': return "Relation message";
    case 'Y': return "Type message";
    case 'I': return "Insert message";
    case 'U': return "Update message";
    case 'D': return "Delete message";
    case 'T': return "Truncate message";
    case 'M': return "Message message";
    default: return "message";
    }
}

static int decode(pgw_pgoutput *d, rd *r, pgw_pgoutput_message *m, pgw_error *err)
{
    uint8_t type;
    int rc;
    if ((rc = rd_u8(r, &type, "the message type", err)) < 0)
        return rc;
    m->type = (char)type;
    r->what = type_name((char)type);
    switch (type) {
    case 'B':
        return on_begin(d, r, m, err);
    case 'C':
        return on_commit(d, r, m, err);
    case 'R':
        return on_relation(d, r, m, err);
    case 'I':
    case 'U':
    case 'D':
        return on_change(d, r, (char)type, m, err);
    case 'T':
        return on_truncate(d, r, err);
    case 'M':
        return on_message(d, r, m, err);
    case 'O': {
        uint64_t lsn;
        const char *name;
        size_t len;
        if ((rc = rd_u64(r, &lsn, "the origin's commit LSN", err)) < 0 ||
            (rc = rd_str(r, &name, &len, "the origin's name", err)) < 0)
            return rc;
        return rd_end(r, err);
    }
    case 'Y': {
        uint32_t oid;
        const char *s;
        size_t len;
        if ((rc = rd_u32(r, &oid, "the type's OID", err)) < 0 ||
            (rc = rd_str(r, &s, &len, "the namespace", err)) < 0 ||
            (rc = rd_str(r, &s, &len, "the type's name", err)) < 0)
            return rc;
        return rd_end(r, err);
    }
    default: {
        r->off = 0;
        bool later = type && strchr("SEcApPKrbt", type);
        char what[160];
        snprintf(what, sizeof what, "unknown message type 0x%02x%s", type,
                 later ? " (a message of a later protocol version or of streamed "
                         "transactions, which pgwitness does not request)"
                       : "");
        r->what = "pgoutput";
        return rd_fail(r, err, what);
    }
    }
}

/* ------------------------------------------------------------------ */
/* public API                                                          */

int pgw_pgoutput_new(pgw_pgoutput **out, const pgw_scope *scope,
                     const pgw_pgoutput_options *opts, pgw_error *err)
{
    if (!out || !scope)
        return pgwi_error(err, PGW_EINVAL, "pgoutput_new: %s is NULL", out ? "scope" : "out");
    pgw_pgoutput_options defaults = PGW_PGOUTPUT_OPTIONS_INIT;
    const pgw_pgoutput_options *o = opts ? opts : &defaults;
    if (o->version != PGW_PGOUTPUT_OPTIONS_VERSION)
        return pgwi_error(err, PGW_EINVAL,
                          "pgoutput options version %u is not %u (use PGW_PGOUTPUT_OPTIONS_INIT)",
                          o->version, (unsigned)PGW_PGOUTPUT_OPTIONS_VERSION);
    if (o->max_ids_per_write < 1 || o->max_ids_per_write > UINT32_MAX / 4 ||
        o->max_txn_bytes < 1024)
        return pgwi_error(err, PGW_EINVAL,
                          "pgoutput options: max_ids_per_write must be >= 1 and "
                          "max_txn_bytes >= 1024");
    const char *prefix = o->message_prefix ? o->message_prefix : PGW_PGOUTPUT_MESSAGE_PREFIX;
    size_t plen = strlen(prefix);
    if (plen == 0 || plen > 63 || !pgwi_utf8_valid(prefix, plen))
        return pgwi_error(err, PGW_EINVAL,
                          "pgoutput options: message_prefix must be 1..63 bytes of UTF-8");
    const char *sp[3] = {scope->project, scope->tenant, scope->database};
    for (int i = 0; i < 3; i++)
        if (sp[i] && !pgwi_utf8_valid(sp[i], strlen(sp[i])))
            return pgwi_error(err, PGW_EINVAL, "pgoutput_new: a scope string is not valid UTF-8");
    pgw_pgoutput *d = pgwi_calloc(1, sizeof *d);
    if (!d)
        return pgwi_enomem(err);
    d->o = *o;
    d->gen = 1;
    bool ok = (d->prefix = pgwi_strdup(prefix)) != NULL;
    for (int i = 0; i < 3; i++) {
        d->scope_s[i] = pgwi_strdup(sp[i]);
        ok = ok && (!sp[i] || d->scope_s[i]);
    }
    if (!ok) {
        pgw_pgoutput_free(d);
        return pgwi_enomem(err);
    }
    d->o.message_prefix = d->prefix;
    d->scope.project = d->scope_s[0];
    d->scope.tenant = d->scope_s[1];
    d->scope.database = d->scope_s[2];
    *out = d;
    return PGW_OK;
}

static void forget_rels(pgw_pgoutput *d)
{
    for (uint32_t i = 0; i < d->cap_rels; i++)
        rel_free(d->rels[i]);
    pgwi_free(d->rels);
    d->rels = NULL;
    d->n_rels = d->cap_rels = 0;
}

void pgw_pgoutput_free(pgw_pgoutput *d)
{
    if (!d)
        return;
    txn_clear(d);
    txbuf_clear(&d->done);
    pgwi_free(d->cur.items);
    pgwi_free(d->done.items);
    forget_rels(d);
    for (uint32_t i = 0; i < d->n_targets; i++)
        target_free(&d->targets[i]);
    pgwi_free(d->targets);
    pgwi_free(d->full);
    pgwi_free(d->scratch[0]);
    pgwi_free(d->scratch[1]);
    for (pgw_write *w = d->q_head; w;) {
        pgw_write *next = w->qnext;
        if (w != &d->reset_node)
            pgw_write_free(w);
        w = next;
    }
    for (int i = 0; i < 3; i++)
        pgwi_free(d->scope_s[i]);
    pgwi_free(d->prefix);
    pgwi_free(d);
}

static int copy_names(char ***out, const char *const *names, size_t n, size_t max,
                      const char *what, pgw_error *err)
{
    *out = NULL;
    if (n > max)
        return pgwi_error(err, PGW_EINVAL, "pgoutput_add_target: %zu %s (at most %zu)", n, what,
                          max);
    if (n && !names)
        return pgwi_error(err, PGW_EINVAL, "pgoutput_add_target: %s is NULL with %zu entries",
                          what, n);
    for (size_t i = 0; i < n; i++) {
        if (!names[i] || !names[i][0] || !pgwi_utf8_valid(names[i], strlen(names[i])))
            return pgwi_error(err, PGW_EINVAL,
                              "pgoutput_add_target: %s[%zu] is NULL, empty or not UTF-8", what,
                              i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0)
                return pgwi_error(err, PGW_EINVAL,
                                  "pgoutput_add_target: %s[%zu] repeats \"%.100s\"", what, i,
                                  names[i]);
    }
    if (n == 0)
        return PGW_OK;
    char **a = pgwi_calloc(n, sizeof *a);
    if (!a)
        return pgwi_enomem(err);
    for (size_t i = 0; i < n; i++)
        if (!(a[i] = pgwi_strdup(names[i]))) {
            for (size_t j = 0; j < i; j++)
                pgwi_free(a[j]);
            pgwi_free(a);
            return pgwi_enomem(err);
        }
    *out = a;
    return PGW_OK;
}

int pgw_pgoutput_add_target(pgw_pgoutput *d, uint32_t relid, const char *schema,
                            const char *table, const char *const *key_columns, size_t n_key,
                            const char *const *value_columns, size_t n_values, pgw_error *err)
{
    static const char fn[] = "pgoutput_add_target";
    if (!d)
        return pgwi_error(err, PGW_EINVAL, "%s: decoder is NULL", fn);
    if (d->in_txn)
        return pgwi_error(err, PGW_ESTATE, "%s: inside a transaction (between Begin and Commit)",
                          fn);
    if (relid == 0)
        return pgwi_error(err, PGW_EINVAL, "%s: relid is 0", fn);
    const char *names[2] = {schema, table};
    for (int i = 0; i < 2; i++)
        if (!names[i] || !names[i][0] || !pgwi_utf8_valid(names[i], strlen(names[i])))
            return pgwi_error(err, PGW_EINVAL, "%s: %s is NULL, empty or not UTF-8", fn,
                              i ? "table" : "schema");
    uint32_t count = 0;
    for (uint32_t i = 0; i < d->n_targets; i++) {
        const target *t = &d->targets[i];
        if (t->relid != relid)
            continue;
        if (strcmp(t->schema, schema) == 0 && strcmp(t->table, table) == 0)
            return pgwi_error(err, PGW_EEXISTS,
                              "%s: relation %u already has the target %.100s.%.100s", fn, relid,
                              schema, table);
        count++;
    }
    if (count >= PGW_PGOUTPUT_MAX_TARGETS)
        return pgwi_error(err, PGW_ELIMIT, "%s: relation %u has %d targets already", fn, relid,
                          PGW_PGOUTPUT_MAX_TARGETS);
    target t;
    memset(&t, 0, sizeof t);
    t.relid = relid;
    int rc;
    if ((rc = copy_names(&t.key, key_columns, n_key, PGW_ROWID_MAX_PARTS, "key_columns", err)) <
        0)
        return rc;
    t.n_key = (uint32_t)n_key;
    if ((rc = copy_names(&t.vals, value_columns, n_values, MAX_VALUES, "value_columns", err)) <
        0) {
        target_free(&t);
        return rc;
    }
    t.n_vals = (uint32_t)n_values;
    t.schema = pgwi_strdup(schema);
    t.table = pgwi_strdup(table);
    if (!t.schema || !t.table) {
        target_free(&t);
        return pgwi_enomem(err);
    }
    if (d->n_targets == d->cap_targets) {
        uint32_t cap = d->cap_targets ? d->cap_targets * 2 : 8;
        target *a = pgwi_reallocarray(d->targets, cap, sizeof *a);
        if (!a) {
            target_free(&t);
            return pgwi_enomem(err);
        }
        d->targets = a;
        d->cap_targets = cap;
    }
    d->targets[d->n_targets++] = t;
    d->gen++; /* the array may have moved: every relation resolves again */
    return PGW_OK;
}

int pgw_pgoutput_expect_relation(pgw_pgoutput *d, uint32_t relid, const char *schema,
                                 const char *table, size_t ncols, const char *const *names,
                                 const uint32_t *typoids, const int32_t *typmods,
                                 pgw_error *err)
{
    static const char fn[] = "pgoutput_expect_relation";
    if (!d || relid == 0 || !schema || !table || (ncols && (!names || !typoids || !typmods)))
        return pgwi_error(err, PGW_EINVAL, "%s: %s", fn,
                          !d ? "decoder is NULL" : relid == 0 ? "relid is 0"
                                                              : "a NULL name or column list");
    if (ncols > UINT16_MAX)
        return pgwi_error(err, PGW_EINVAL, "%s: %zu columns (at most %u)", fn, ncols,
                          (unsigned)UINT16_MAX);
    for (size_t i = 0; i < ncols; i++)
        if (!names[i])
            return pgwi_error(err, PGW_EINVAL, "%s: column name %zu is NULL", fn, i);
    if (d->in_txn)
        return pgwi_error(err, PGW_ESTATE,
                          "%s: inside a transaction (between Begin and Commit)", fn);
    if (rel_find(d, relid))
        return PGW_EEXISTS; /* its last Relation message is the truer definition */
    rel *nr = pgwi_calloc(1, sizeof *nr);
    if (!nr)
        return pgwi_enomem(err);
    nr->oid = relid;
    nr->stale = true; /* compared with the next Relation message, never read */
    /* the protocol's namespace for pg_catalog is "" */
    nr->nsp = pgwi_strdup(strcmp(schema, "pg_catalog") == 0 ? "" : schema);
    nr->name = pgwi_strdup(table);
    nr->cols = ncols ? pgwi_calloc(ncols, sizeof *nr->cols) : NULL;
    if (!nr->nsp || !nr->name || (ncols && !nr->cols))
        goto nomem;
    for (size_t i = 0; i < ncols; i++) {
        nr->ncols = (uint16_t)(i + 1);
        nr->cols[i].typoid = typoids[i];
        nr->cols[i].typmod = (uint32_t)typmods[i];
        if (!(nr->cols[i].name = pgwi_strdup(names[i])))
            goto nomem;
    }
    if (rels_reserve(d) < 0)
        goto nomem;
    nr->gen = d->gen - 1;
    d->rels[rel_slot(d, relid)] = nr;
    d->n_rels++;
    return PGW_OK;
nomem:
    rel_free(nr);
    return pgwi_enomem(err);
}

int pgw_pgoutput_relation_name(const char **schema, const char **table, const pgw_pgoutput *d,
                               uint32_t relid)
{
    if (!schema || !table || !d || relid == 0)
        return PGW_EINVAL;
    const rel *r = rel_find(d, relid);
    if (!r)
        return PGW_ENOTFOUND;
    *schema = r->nsp;
    *table = r->name;
    return PGW_OK;
}

int pgw_pgoutput_set_full_rows(pgw_pgoutput *d, uint32_t relid, bool full, pgw_error *err)
{
    if (!d || relid == 0)
        return pgwi_error(err, PGW_EINVAL, "pgoutput_set_full_rows: %s",
                          d ? "relid is 0" : "decoder is NULL");
    if (d->in_txn)
        return pgwi_error(err, PGW_ESTATE,
                          "pgoutput_set_full_rows: inside a transaction (between Begin and "
                          "Commit)");
    for (uint32_t k = 0; k < d->n_full; k++)
        if (d->full[k] == relid) {
            if (!full) {
                d->full[k] = d->full[--d->n_full];
                d->gen++;
            }
            return PGW_OK;
        }
    if (!full)
        return PGW_OK;
    if (d->n_full == d->cap_full) {
        uint32_t cap = d->cap_full ? d->cap_full * 2 : 8;
        uint32_t *a = pgwi_reallocarray(d->full, cap, sizeof *a);
        if (!a)
            return pgwi_enomem(err);
        d->full = a;
        d->cap_full = cap;
    }
    d->full[d->n_full++] = relid;
    d->gen++;
    return PGW_OK;
}

int pgw_pgoutput_clear_targets(pgw_pgoutput *d, pgw_error *err)
{
    if (!d)
        return pgwi_error(err, PGW_EINVAL, "pgoutput_clear_targets: decoder is NULL");
    if (d->in_txn)
        return pgwi_error(err, PGW_ESTATE,
                          "pgoutput_clear_targets: inside a transaction (between Begin and "
                          "Commit)");
    for (uint32_t i = 0; i < d->n_targets; i++)
        target_free(&d->targets[i]);
    d->n_targets = 0;
    d->n_full = 0;
    d->gen++;
    return PGW_OK;
}

void pgw_pgoutput_restart(pgw_pgoutput *d)
{
    if (!d)
        return;
    /* The relations stay, for comparison with the new connection's
     * Relation messages; one whose change was in the dropped transaction
     * yields its ddl write set at the next one, whatever it says. */
    for (uint32_t i = 0; i < d->cap_rels; i++) {
        rel *r = d->rels[i];
        if (!r)
            continue;
        r->stale = true;
        if (d->in_txn && r->changed_txn == d->txn_seq)
            r->ddl_pending = true;
    }
    txn_clear(d);
}

int pgw_pgoutput_decode(pgw_pgoutput_message *out, pgw_pgoutput *d, const void *msg, size_t len,
                        pgw_error *err)
{
    if (!d || (!msg && len))
        return pgwi_error(err, PGW_EINVAL, "pgoutput_decode: %s is NULL", d ? "msg" : "decoder");
    pgw_pgoutput_message m;
    memset(&m, 0, sizeof m);
    rd r = {msg, len, 0, "pgoutput"};
    d->st.messages++;
    d->recovered = false;
    int rc = decode(d, &r, &m, err);
    if (rc < 0) {
        if (rc == PGW_ENOMEM)
            pgwi_enomem(err);
        d->st.errors++;
        if (!d->recovered)
            spoil(d);
        return rc;
    }
    m.ready = ready(d);
    if (out)
        *out = m;
    return PGW_OK;
}

int pgw_pgoutput_next(pgw_pgoutput_change *out, pgw_pgoutput *d)
{
    if (!out || !d)
        return PGW_EINVAL;
    pgw_write *w = d->q_head;
    if (w) {
        d->q_head = w->qnext;
        if (!d->q_head)
            d->q_tail = NULL;
        d->q_len--;
        w->qnext = NULL;
        out->reset = w == &d->reset_node;
        out->write = out->reset ? NULL : w;
        out->lsn = w->lsn;
        if (out->reset)
            d->reset_queued = false;
        return PGW_OK;
    }
    if (done_next(d, out))
        return PGW_OK;
    return PGW_ENOTFOUND;
}

bool pgw_pgoutput_in_transaction(const pgw_pgoutput *d)
{
    return d && d->in_txn;
}

int pgw_pgoutput_stats_get(pgw_pgoutput_stats *out, const pgw_pgoutput *d)
{
    if (!out || !d)
        return PGW_EINVAL;
    *out = d->st;
    return PGW_OK;
}
