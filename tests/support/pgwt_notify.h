/*
 * tests/support/pgwt_notify.h — notifications in the pg suites: a LISTEN
 * connection, the next payload it receives, and the write set a payload
 * decodes to, in its canonical JSON form.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWT_NOTIFY_H
#define PGWT_NOTIFY_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>

/* The scope pgwt_write_json() decodes with. */
#define PGWT_SCOPE_JSON "{\"project\":\"p\",\"tenant\":\"acme\",\"database\":\"db\"}"

/* Connects to the test database and LISTENs on the channel (fails the
 * test on error). */
PGconn *pgwt_listen(const char *channel);
/* The next notification's payload on a LISTEN connection, waiting at most
 * timeout_ms (malloc'd; free()); NULL on timeout. *channel (when non-NULL)
 * receives the channel's name, malloc'd. */
char *pgwt_next_payload(PGconn *lc, int timeout_ms, char **channel);
/* True when no notification arrives within timeout_ms. */
bool pgwt_no_payload(PGconn *lc, int timeout_ms);
/* Decodes a payload with the scope above and returns the write set's
 * canonical JSON without its leading scope member: the text after
 * {"scope":...,  (malloc'd). *fallback receives pgw_write_fallback_status(). */
char *pgwt_write_json(const char *payload, int *fallback);
/* Fetches the next payload and checks: it arrives within 5 s, it decodes
 * faithfully, pgw_payload_encode() of the decoded write set gives the
 * same bytes, and its write set is {"scope":...,<expected>. Returns the
 * payload's length in bytes. */
size_t pgwt_expect_write(PGconn *lc, const char *expected);
/* Sends NOTIFY <channel>, 'marker:<tag>' from conn (its own transaction
 * when idle) and checks that it is the next notification on lc: proof
 * that nothing was sent between. */
void pgwt_expect_marker(PGconn *conn, PGconn *lc, const char *channel, const char *tag);

#endif
