/* examples/readme/snapshots.c — the snapshot half in a host (README). */
#include <pgwitness/pgwitness-pq.h>
#include <stdio.h>

int main(void)
{
    PGconn *conn = PQconnectdb(""); /* PGHOST, PGDATABASE, ... */
    pgw_error err;
    if (pgw_pq_install(NULL, conn, NULL, &err) != PGW_OK) /* once per database */
        return fprintf(stderr, "%s\n", err.message), 1;
    /* Where the pipeline used to say DROP TABLE: snapshot, drop, audit. */
    pgw_pq_drop_result r;
    if (pgw_pq_drop_table(&r, conn, "public", "penguins", PGW_REASON_SCHEMA_MISMATCH_RECREATE,
                          NULL, &err) != PGW_OK)
        return fprintf(stderr, "drop failed: %s\n", err.message), 1;
    printf("dropped; %s\n", r.snapshot_taken ? "snapshot taken" : r.snapshot_error);
    /* Later, long after the tables are gone: what changed? */
    pgw_pq_filter f = PGW_PQ_FILTER_INIT;
    f.schema = "public", f.table = "penguins", f.newest_first = true, f.limit = 2;
    pgw_pq_snapshot_set *set = NULL;
    pgw_diff *d = NULL;
    if (pgw_pq_load(&set, conn, NULL, &f, &err) == PGW_OK && pgw_pq_snapshot_set_count(set) == 2 &&
        pgw_diff_snapshots(&d, pgw_pq_snapshot_set_get(set, 1), pgw_pq_snapshot_set_get(set, 0),
                           NULL, &err) == PGW_OK)
        for (size_t i = 0; i < pgw_diff_renamed_count(d); i++)
            printf("renamed %s -> %s (score %.2f)\n", pgw_diff_renamed(d, i)->from,
                   pgw_diff_renamed(d, i)->to, pgw_diff_renamed(d, i)->score);
    pgw_diff_free(d);
    pgw_pq_snapshot_set_free(set);
    PQfinish(conn);
    return 0;
}
