/* examples/readme/inval.c — the invalidation half, pure (README). */
#include <pgwitness/pgwitness.h>
#include <stdio.h>

int main(void)
{
    pgw_scope acme = {"p1", "acme", "app"};
    pgw_error err;
    /* tasks.list: SELECT id, title, status, updated_at FROM tasks
     *             WHERE status = 'open' ORDER BY updated_at LIMIT 20 */
    const char *cols[] = {"id", "title", "status", "updated_at"}, *open[] = {"open"};
    const char *order[] = {"updated_at"};
    pgw_deps *deps = NULL;
    size_t t;
    if (pgw_deps_new(&deps, &acme, "tasks.list", &err) ||
        pgw_deps_add_table(&t, deps, "public", "tasks", &err) ||
        pgw_deps_set_columns(deps, t, cols, 4, &err) ||
        pgw_deps_add_filter(deps, t, "status", PGW_FILTER_EQ, open, 1, &err) ||
        pgw_deps_set_order_by(deps, t, order, 1, &err) ||
        pgw_deps_set_window(deps, t, 20, 0, &err))
        return fprintf(stderr, "%s\n", err.message), 1;
    /* A committed write: UPDATE tasks SET notes = ... WHERE id = 99 */
    const char *id99[] = {"99"}, *notes[] = {"notes"};
    pgw_rowid row = {id99, 1};
    pgw_write *w = NULL;
    pgw_verdict v;
    if (pgw_write_new(&w, &acme, "public", "tasks", PGW_OP_UPDATE, &err) ||
        pgw_write_set_ids(w, &row, 1, false, &err) ||
        pgw_write_set_columns(w, notes, 1, false, &err) ||
        pgw_decide(&v, deps, w, &err))
        return fprintf(stderr, "%s\n", err.message), 1;
    printf("%s: %s\n", v.refresh ? "refresh" : "skip", pgw_reason_name(v.reason));
    /* skip: COLUMNS_DISJOINT */
    pgw_write_free(w);
    pgw_deps_free(deps);
    return 0;
}
