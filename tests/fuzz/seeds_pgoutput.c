/*
 * tests/fuzz/seeds_pgoutput.c — writes the seed corpus of fuzz_pgoutput
 * (tests/fuzz/corpus/pgoutput/) from messages built with pgo_build.h:
 *   build/tests/fuzz/seeds-pgoutput tests/fuzz/corpus/pgoutput
 * Each seed is the fuzz target's input: a byte of flags (1: small limits,
 * 2: tasks' old tuples are full rows), then chunks of a 2-byte big-endian
 * length and the bytes.
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>

#include "pgo_build.h"

static unsigned char seed[1 << 16];
static size_t seed_n;

static void start(unsigned limits)
{
    seed[0] = (unsigned char)limits;
    seed_n = 1;
}

static void chunk(const void *p, size_t n)
{
    seed[seed_n++] = (unsigned char)(n >> 8);
    seed[seed_n++] = (unsigned char)n;
    memcpy(seed + seed_n, p, n);
    seed_n += n;
}

static pgo_msg m, f;

/* A pgoutput message, raw or inside an XLogData frame. */
static void msg(int framed)
{
    if (framed) {
        pgo_xlogdata(&f, 0x1000, 0x2000, m.b, m.n);
        chunk(f.b, f.n);
    } else {
        chunk(m.b, m.n);
    }
}

static void save(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "wb");
    if (!fp || fwrite(seed, 1, seed_n, fp) != seed_n || fclose(fp) != 0) {
        perror(path);
        exit(1);
    }
}

static const char *const tcols[] = {"*id", "title", "status", "notes"};
static const char *const pcols[] = {"*org", "*id", "status"};

static void txn(int framed)
{
    const char *a[] = {"1", "a", "open", "x"}, *b[] = {"1", "b", "done", PGO_UNCHANGED};
    const char *k[] = {"1", PGO_NULL, PGO_NULL, PGO_NULL}, *c[] = {"2", "b", "done", "y"};
    const char *p1[] = {"acme", "7", "open"}, *p2[] = {"acme", "8", PGO_NULL};
    pgo_relation(&m, 16384, "public", "tasks", 'f', 4, tcols);
    msg(framed);
    pgo_relation(&m, 16400, "public", "tasks_p1", 'd', 3, pcols);
    msg(framed);
    pgo_begin(&m, 0x100, 700);
    msg(framed);
    pgo_insert(&m, 16384, 4, a);
    msg(framed);
    pgo_update(&m, 16384, 4, 'O', a, b);
    msg(framed);
    pgo_update(&m, 16384, 4, 'K', k, c);
    msg(framed);
    pgo_update(&m, 16400, 3, 'K', p1, p2);
    msg(framed);
    pgo_delete(&m, 16384, 4, 'K', k);
    msg(framed);
    pgo_delete(&m, 16400, 3, 'O', p2);
    msg(framed);
    pgo_message(&m, 1, 0xf0, "pgwitness",
                "{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"update\"}");
    msg(framed);
    pgo_truncate(&m, 2, (uint32_t[]){16384, 16400});
    msg(framed);
    pgo_commit(&m, 0x100, 0x130);
    msg(framed);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    start(0);
    txn(0);
    save(dir, "txn_raw");
    start(0);
    txn(1);
    pgo_keepalive(&m, 0x3000, 1);
    chunk(m.b, m.n);
    save(dir, "txn_framed");
    start(1);
    txn(0);
    txn(0);
    save(dir, "txn_small_limits");
    start(2); /* tasks declared full rows */
    txn(1);
    save(dir, "txn_full_rows");
    /* Many rows: chunking and the memory bound under small limits. */
    start(1);
    pgo_relation(&m, 16384, "public", "tasks", 'd', 4, tcols);
    chunk(m.b, m.n);
    pgo_begin(&m, 0x200, 1);
    chunk(m.b, m.n);
    for (int i = 0; i < 60; i++) {
        char id[8];
        snprintf(id, sizeof id, "%d", i);
        const char *r[] = {id, "t", "open", PGO_NULL};
        pgo_insert(&m, 16384, 4, r);
        chunk(m.b, m.n);
    }
    pgo_commit(&m, 0x200, 0x230);
    chunk(m.b, m.n);
    save(dir, "many_rows");
    /* A non-transactional message, an origin and a type, a restart. */
    start(0);
    pgo_message(&m, 0, 0x10, "pgwitness",
                "{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"truncate\"}");
    chunk(m.b, m.n);
    pgo_begin(&m, 0x300, 2);
    chunk(m.b, m.n);
    pgo_reset(&m);
    pgo_u8(&m, 'O');
    pgo_be(&m, 0x42, 8);
    pgo_str(&m, "origin_1");
    chunk(m.b, m.n);
    pgo_reset(&m);
    pgo_u8(&m, 'Y');
    pgo_be(&m, 90000, 4);
    pgo_str(&m, "public");
    pgo_str(&m, "mood");
    chunk(m.b, m.n);
    pgo_commit(&m, 0x300, 0x330);
    chunk(m.b, m.n);
    chunk("", 0);
    save(dir, "messages_restart");
    /* Malformed: a change before its Relation, a Begin inside a
     * transaction, a Commit of another one. */
    start(0);
    pgo_begin(&m, 0x400, 3);
    chunk(m.b, m.n);
    const char *r[] = {"1", "a", "open", PGO_NULL};
    pgo_insert(&m, 16384, 4, r);
    chunk(m.b, m.n);
    pgo_begin(&m, 0x500, 4);
    chunk(m.b, m.n);
    pgo_commit(&m, 0x501, 0x530);
    chunk(m.b, m.n);
    save(dir, "malformed");
    /* Definition changes: a renamed column after a write of the table, a
     * partition's changed type, one outside a transaction, one in a
     * transaction a restart drops (sent again after it), and the ddl
     * announcement as a logical message, in and outside a transaction. */
    start(0);
    const char *renamed[] = {"*id", "name", "status", "notes"};
    const uint32_t ptypes[] = {25, 23, 1043};
    const int32_t pmods[] = {-1, -1, 68};
    const char *ddl = "{\"version\":1,\"schema\":\"public\",\"table\":\"tasks\",\"op\":\"ddl\"}";
    pgo_relation(&m, 16384, "public", "tasks", 'd', 4, tcols);
    chunk(m.b, m.n);
    pgo_relation(&m, 16400, "public", "tasks_p1", 'd', 3, pcols);
    chunk(m.b, m.n);
    pgo_begin(&m, 0x600, 5);
    chunk(m.b, m.n);
    pgo_insert(&m, 16384, 4, r);
    chunk(m.b, m.n);
    pgo_relation(&m, 16384, "public", "tasks", 'd', 4, renamed);
    chunk(m.b, m.n);
    pgo_insert(&m, 16384, 4, r);
    chunk(m.b, m.n);
    pgo_relation_typed(&m, 16400, "public", "tasks_p1", 'd', 3, pcols, ptypes, pmods);
    chunk(m.b, m.n);
    pgo_message(&m, 1, 0x5f0, "pgwitness", ddl);
    chunk(m.b, m.n);
    pgo_commit(&m, 0x600, 0x630);
    chunk(m.b, m.n);
    pgo_relation(&m, 16384, "public", "tasks", 'd', 4, tcols);
    chunk(m.b, m.n);
    pgo_message(&m, 0, 0x640, "pgwitness", ddl);
    chunk(m.b, m.n);
    pgo_begin(&m, 0x700, 6);
    chunk(m.b, m.n);
    pgo_relation(&m, 16384, "public", "tasks", 'd', 4, renamed);
    chunk(m.b, m.n);
    chunk("", 0); /* restart */
    pgo_begin(&m, 0x700, 6);
    chunk(m.b, m.n);
    pgo_relation(&m, 16384, "public", "tasks", 'd', 4, renamed);
    chunk(m.b, m.n);
    pgo_insert(&m, 16384, 4, r);
    chunk(m.b, m.n);
    pgo_commit(&m, 0x700, 0x730);
    chunk(m.b, m.n);
    save(dir, "ddl");
    return 0;
}
