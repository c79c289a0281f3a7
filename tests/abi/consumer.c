/*
 * tests/abi/consumer.c — an out-of-tree program built only from an installed
 * copy of pgwitness, with `cc $(pkg-config --cflags --libs pgwitness-pq)`.
 * It uses only pgwitness symbols (libpq types come through the header).
 */
#include <pgwitness/pgwitness-pq.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    const char *names[] = {"id", "title", "status", "updated_at"};
    char suffix[PGW_SCHEMA_SUFFIX_SIZE];
    pgw_error err;
    if (strcmp(pgw_version(), PGW_VERSION_STRING) != 0) {
        fprintf(stderr, "header %s vs library %s\n", PGW_VERSION_STRING, pgw_version());
        return 1;
    }
    if (pgw_schema_suffix(suffix, names, 4, NULL, &err) != PGW_OK) {
        fprintf(stderr, "schema_suffix: %s\n", err.message);
        return 1;
    }
    PGconn *none = NULL;
    if (pgw_pq_check(NULL, none, &err) != PGW_EINVAL)
        return 1;
    printf("consumer ok: pgwitness %s, tasks%s\n", pgw_version(), suffix);
    return strcmp(suffix, "_sfd7a2b1b35193078") == 0 ? 0 : 1;
}
