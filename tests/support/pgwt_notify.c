/*
 * tests/support/pgwt_notify.c — see pgwt_notify.h.
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "pgwt_notify.h"

#include <check.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pgw_test.h"
#include "pgwitness/payload.h"
#include "pgwitness/inval_json.h"

PGconn *pgwt_listen(const char *channel)
{
    PGconn *lc = pgwt_connect();
    char *q = PQescapeIdentifier(lc, channel, strlen(channel));
    char sql[256];
    snprintf(sql, sizeof sql, "LISTEN %s", q);
    PQfreemem(q);
    pgwt_exec(lc, sql);
    return lc;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

char *pgwt_next_payload(PGconn *lc, int timeout_ms, char **channel)
{
    long long deadline = now_ms() + timeout_ms;
    for (;;) {
        ck_assert_msg(PQconsumeInput(lc), "LISTEN connection: %s", PQerrorMessage(lc));
        PGnotify *n = PQnotifies(lc);
        if (n) {
            char *p = strdup(n->extra);
            if (channel)
                *channel = strdup(n->relname);
            PQfreemem(n);
            return p;
        }
        long long left = deadline - now_ms();
        if (left <= 0)
            return NULL;
        struct pollfd pfd = {PQsocket(lc), POLLIN, 0};
        poll(&pfd, 1, (int)left);
    }
}

bool pgwt_no_payload(PGconn *lc, int timeout_ms)
{
    char *p = pgwt_next_payload(lc, timeout_ms, NULL);
    if (!p)
        return true;
    fprintf(stderr, "# unexpected notification: %s\n", p);
    free(p);
    return false;
}

char *pgwt_write_json(const char *payload, int *fallback)
{
    pgw_scope scope = {"p", "acme", "db"};
    pgw_write *w = NULL;
    pgw_error err;
    ck_assert_int_eq(pgw_payload_decode(&w, &scope, payload, strlen(payload), &err), PGW_OK);
    if (fallback)
        *fallback = pgw_write_fallback_status(w);
    char *json = NULL;
    ck_assert_int_eq(pgw_write_to_json(&json, NULL, w, &err), PGW_OK);
    pgw_write_free(w);
    const char *prefix = "{\"scope\":" PGWT_SCOPE_JSON ",";
    ck_assert_msg(strncmp(json, prefix, strlen(prefix)) == 0, "write JSON: %s", json);
    char *rest = strdup(json + strlen(prefix));
    pgw_free(json);
    return rest;
}

size_t pgwt_expect_write(PGconn *lc, const char *expected)
{
    char *p = pgwt_next_payload(lc, 5000, NULL);
    ck_assert_msg(p != NULL, "no notification within 5 s (expected %.900s)", expected);
    int fb = -1;
    char *got = pgwt_write_json(p, &fb);
    ck_assert_msg(fb == PGW_OK, "payload is a fallback: %s", p);
    ck_assert_msg(strcmp(got, expected) == 0,
                  "write set\n  got:      %.900s\n  expected: %.900s\n  payload:  %.900s", got,
                  expected, p);
    /* The trigger writes what the core's encoder writes. */
    pgw_scope scope = {"p", "acme", "db"};
    pgw_write *w = NULL;
    pgw_error err;
    ck_assert_int_eq(pgw_payload_decode(&w, &scope, p, strlen(p), &err), PGW_OK);
    char *enc = NULL;
    size_t enc_len = 0;
    ck_assert_int_eq(pgw_payload_encode(&enc, &enc_len, w, NULL, &err), PGW_OK);
    ck_assert_msg(strcmp(enc, p) == 0, "payload is not canonical\n  trigger: %.1500s\n  encoder: %.1500s",
                  p, enc);
    pgw_free(enc);
    pgw_write_free(w);
    size_t len = strlen(p);
    free(got);
    free(p);
    return len;
}

void pgwt_expect_marker(PGconn *conn, PGconn *lc, const char *channel, const char *tag)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT pg_notify('%s', 'marker:%s')", channel, tag);
    pgwt_exec(conn, sql);
    if (PQtransactionStatus(conn) != PQTRANS_IDLE)
        return; /* the caller commits; the marker comes with it */
    char *p = pgwt_next_payload(lc, 5000, NULL);
    ck_assert_msg(p != NULL, "marker %s did not arrive", tag);
    char want[128];
    snprintf(want, sizeof want, "marker:%s", tag);
    ck_assert_msg(strcmp(p, want) == 0, "expected %s, got %s", want, p);
    free(p);
}
