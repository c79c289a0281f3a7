/*
 * tests/abi/consumer_libpq.c — an out-of-tree host that also calls libpq
 * itself, built with `cc $(pkg-config --cflags --libs pgwitness-pq libpq)`
 * (libpq is a private requirement of pgwitness-pq: a program that calls
 * libpq directly names it too). Connects through the PG* environment.
 */
#include <pgwitness/pgwitness-pq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    PGconn *c = PQconnectdb("connect_timeout=5");
    pgw_error err;
    int version = 0;
    int rc = pgw_pq_check(&version, c, &err);
    const char *need = getenv("PGW_TEST_REQUIRE_PG");
    if (rc != PGW_OK && !(need && strcmp(need, "1") == 0) && rc == PGW_ECONN) {
        printf("consumer_libpq ok: no server (%s)\n", err.message);
        PQfinish(c);
        return 0;
    }
    if (rc != PGW_OK) {
        fprintf(stderr, "pgw_pq_check: %s: %s\n", pgw_strerror(rc), err.message);
        PQfinish(c);
        return 1;
    }
    printf("consumer_libpq ok: server %d\n", version);
    PQfinish(c);
    return 0;
}
