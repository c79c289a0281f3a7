/*
 * tests/unit/check_index.c — the reverse index: tenant isolation, truncate,
 * undeclared subscriptions, shared runners, the rerun protocol and
 * coalescing, scope resets, per-reason counters, the value and result-ID
 * indexes (exact visit counts), exactness of the candidate set against
 * pgw_decide on random workloads, memory per subscription, and allocation
 * failure at every step.
 * SPDX-License-Identifier: MIT
 */
#include "inval_helpers.h"
#include "inval_oracle.h"

static pgw_index *new_index(void)
{
    pgw_index *x = NULL;
    ck_assert_int_eq(pgw_index_new(&x, NULL, NULL), PGW_OK);
    return x;
}

static pgw_runner_id reg(pgw_index *x, pgw_deps *d)
{
    pgw_runner_id id = 0;
    pgw_error err;
    pgw_error_clear(&err);
    ck_assert_msg(pgw_index_register(&id, x, d, &err) == PGW_OK, "register: %s", err.message);
    ck_assert_uint_ne(id, 0);
    return id;
}

static pgw_runner_state state_of(pgw_index *x, pgw_runner_id id)
{
    pgw_runner_info info;
    ck_assert_int_eq(pgw_index_runner(&info, x, id, NULL), PGW_OK);
    return info.state;
}

static size_t match(pgw_index *x, pgw_write *w)
{
    size_t n = 99;
    ck_assert_int_eq(pgw_index_match(&n, x, w, NULL), PGW_OK);
    return n;
}

static pgw_index_stats stats(pgw_index *x)
{
    pgw_index_stats s = PGW_INDEX_STATS_INIT;
    ck_assert_int_eq(pgw_index_stats_get(&s, x), PGW_OK);
    return s;
}

/* Pops every dirty runner and acknowledges its rerun: an empty result for
 * runners that track results, unknown for the others. */
static size_t drain(pgw_index *x)
{
    size_t n = 0;
    pgw_dirty d;
    while (pgw_index_pop_dirty(&d, x) == PGW_OK) {
        pgw_runner_info info;
        ck_assert_int_eq(pgw_index_runner(&info, x, d.runner, NULL), PGW_OK);
        if (info.result_known)
            ck_assert_int_eq(pgw_index_ack(x, d.runner, NULL, 0, NULL), PGW_OK);
        else
            ck_assert_int_eq(pgw_index_ack_unknown(x, d.runner, NULL), PGW_OK);
        n++;
    }
    return n;
}

static pgw_deps *open_tasks(const pgw_scope *sc, const char *query)
{
    pgw_deps *d = ih_deps(sc, query);
    size_t t = ih_table(d, "tasks");
    ih_cols(d, t, "id,title,status");
    ih_filter(d, t, "status", PGW_FILTER_EQ, "open");
    return d;
}

/* A write in tenant acme never visits or refreshes a sub of tenant globex;
 * the project-level (landlord) scope is separate. */
START_TEST(tenant_isolation)
{
    pgw_index *x = new_index();
    pgw_deps *a = open_tasks(&IH_ACME, "open");
    pgw_deps *g = open_tasks(&IH_GLOBEX, "open");
    pgw_deps *l = open_tasks(&IH_LANDLORD, "open");
    pgw_runner_id ra = reg(x, a), rg = reg(x, g), rl = reg(x, l);
    ck_assert_uint_ne(ra, rg);
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_INSERT);
    ih_wids(w, "1", false);
    pgw_index_stats before = stats(x);
    ck_assert_uint_eq(match(x, w), 1);
    pgw_index_stats after = stats(x);
    ck_assert_uint_eq(after.visited - before.visited, 1); /* only acme's runner */
    ck_assert_int_eq(state_of(x, ra), PGW_RUNNER_DIRTY);
    ck_assert_int_eq(state_of(x, rg), PGW_RUNNER_CLEAN);
    ck_assert_int_eq(state_of(x, rl), PGW_RUNNER_CLEAN);
    pgw_write_free(w);
    w = ih_write(&IH_LANDLORD, "tasks", PGW_OP_INSERT);
    ih_wids(w, "1", false);
    before = stats(x);
    ck_assert_uint_eq(match(x, w), 1);
    ck_assert_uint_eq(stats(x).visited - before.visited, 1);
    ck_assert_int_eq(state_of(x, rl), PGW_RUNNER_DIRTY);
    ck_assert_int_eq(state_of(x, rg), PGW_RUNNER_CLEAN);
    pgw_write_free(w);
    /* A scope the index does not know: nothing visited. */
    pgw_scope other = {"p1", "initech", "app"};
    w = ih_write(&other, "tasks", PGW_OP_TRUNCATE);
    before = stats(x);
    ck_assert_uint_eq(match(x, w), 0);
    ck_assert_uint_eq(stats(x).visited, before.visited);
    pgw_write_free(w);
    pgw_deps_free(a);
    pgw_deps_free(g);
    pgw_deps_free(l);
    pgw_index_free(x);
}
END_TEST

/* Truncate refreshes every sub reading the table in that scope, none in
 * other scopes and none reading other tables. */
START_TEST(truncate_refreshes_scope)
{
    pgw_index *x = new_index();
    pgw_runner_id ids[6];
    pgw_deps *d[6];
    d[0] = open_tasks(&IH_ACME, "open");
    d[1] = ih_deps(&IH_ACME, "all");
    ih_table(d[1], "tasks");
    ih_result(d[1], "1,2");
    d[2] = ih_deps(&IH_ACME, "projects");
    ih_table(d[2], "projects");
    d[3] = open_tasks(&IH_GLOBEX, "open");
    d[4] = ih_deps(&IH_ACME, "join");
    ih_table(d[4], "projects");
    ih_table(d[4], "tasks");
    d[5] = ih_deps(&IH_ACME, "window");
    size_t t = ih_table(d[5], "tasks");
    ck_assert_int_eq(pgw_deps_set_window(d[5], t, 10, 10, NULL), PGW_OK);
    ih_result(d[5], "");
    for (int i = 0; i < 6; i++)
        ids[i] = reg(x, d[i]);
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_TRUNCATE);
    ck_assert_uint_eq(match(x, w), 4);
    pgw_runner_state want[6] = {PGW_RUNNER_DIRTY, PGW_RUNNER_DIRTY, PGW_RUNNER_CLEAN,
                                PGW_RUNNER_CLEAN, PGW_RUNNER_DIRTY, PGW_RUNNER_DIRTY};
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(state_of(x, ids[i]), want[i]);
    ck_assert_uint_eq(pgw_index_reason_count(x, PGW_REASON_TRUNCATE), 4);
    pgw_dirty dd;
    ck_assert_int_eq(pgw_index_pop_dirty(&dd, x), PGW_OK);
    ck_assert_int_eq(dd.reason, PGW_REASON_TRUNCATE);
    pgw_write_free(w);
    for (int i = 0; i < 6; i++)
        pgw_deps_free(d[i]);
    pgw_index_free(x);
}
END_TEST

/* A DDL write set for the table and scope of w, which it replaces (w
 * freed): the differential tests draw their statements from the oracle's
 * stream as before, and a second stream turns some into DDL. */
static pgw_write *as_ddl(pgw_write *w)
{
    pgw_scope sc;
    ck_assert_int_eq(pgw_write_scope(&sc, w), PGW_OK);
    pgw_write *d = NULL;
    ck_assert_int_eq(pgw_write_new(&d, &sc, pgw_write_schema(w), pgw_write_table(w),
                                   PGW_OP_DDL, NULL),
                     PGW_OK);
    pgw_write_free(w);
    return d;
}

/* A ddl write set marks every runner of (scope, table) with reason DDL,
 * through every secondary index (value filters, result IDs, windows) and
 * whatever the runner's state, as pgw_decide would; an undeclared runner
 * of the scope is marked with UNDECLARED; other tables and scopes are left
 * alone. */
START_TEST(ddl_marks_every_reader)
{
    pgw_index *x = new_index();
    enum { N = 8 };
    pgw_deps *d[N];
    d[0] = open_tasks(&IH_ACME, "open"); /* in the value index */
    d[1] = open_tasks(&IH_ACME, "open.tracked");
    ih_result(d[1], "1,2"); /* in the result-ID index too */
    d[2] = ih_deps(&IH_ACME, "window");
    size_t t = ih_table(d[2], "tasks");
    ih_sort(d[2], t, "title");
    ck_assert_int_eq(pgw_deps_set_window(d[2], t, 10, 10, NULL), PGW_OK);
    ih_result(d[2], "");
    d[3] = ih_deps(&IH_ACME, "join");
    ih_table(d[3], "projects");
    t = ih_table(d[3], "tasks");
    ih_cols(d[3], t, "project_id");
    d[4] = ih_deps(&IH_ACME, "raw"); /* undeclared */
    d[5] = ih_deps(&IH_ACME, "projects");
    ih_table(d[5], "projects");
    d[6] = open_tasks(&IH_GLOBEX, "open");
    d[7] = open_tasks(&IH_ACME, "open.running");
    ih_result(d[7], "3");
    pgw_runner_id ids[N];
    for (int i = 0; i < N; i++)
        ids[i] = reg(x, d[i]);
    ck_assert_int_eq(pgw_index_begin(x, ids[7], NULL), PGW_OK);
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_DDL);
    pgw_verdict want[N];
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(pgw_index_decide(&want[i], x, ids[i], w, NULL), PGW_OK);
    ck_assert_uint_eq(match(x, w), 6);
    const pgw_runner_state st[N] = {PGW_RUNNER_DIRTY, PGW_RUNNER_DIRTY, PGW_RUNNER_DIRTY,
                                    PGW_RUNNER_DIRTY, PGW_RUNNER_DIRTY, PGW_RUNNER_CLEAN,
                                    PGW_RUNNER_CLEAN, PGW_RUNNER_RUNNING_DIRTY};
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(state_of(x, ids[i]), st[i]);
        ck_assert(want[i].refresh == (st[i] != PGW_RUNNER_CLEAN));
    }
    ck_assert_int_eq(want[4].reason, PGW_REASON_UNDECLARED);
    ck_assert_int_eq(want[5].reason, PGW_REASON_TABLE_NOT_READ);
    ck_assert_int_eq(want[6].reason, PGW_REASON_SCOPE_DISJOINT);
    ck_assert_uint_eq(pgw_index_reason_count(x, PGW_REASON_DDL), 5);
    ck_assert_uint_eq(pgw_index_reason_count(x, PGW_REASON_UNDECLARED), 1);
    pgw_dirty dd;
    size_t ddl = 0, und = 0;
    while (pgw_index_pop_dirty(&dd, x) == PGW_OK) {
        if (dd.runner == ids[4]) {
            ck_assert_int_eq(dd.reason, PGW_REASON_UNDECLARED);
            und++;
        } else {
            ck_assert_int_eq(dd.reason, PGW_REASON_DDL);
            ddl++;
        }
    }
    ck_assert_uint_eq(ddl, 4); /* the running one is reported when its run ends */
    ck_assert_uint_eq(und, 1);
    pgw_write_free(w);
    for (int i = 0; i < N; i++)
        pgw_deps_free(d[i]);
    pgw_index_free(x);
}
END_TEST

/* An undeclared sub refreshes on any write in its scope, none elsewhere. */
START_TEST(undeclared_in_index)
{
    pgw_index *x = new_index();
    pgw_deps *u = ih_deps(&IH_ACME, "legacy");
    pgw_deps *ug = ih_deps(&IH_GLOBEX, "legacy");
    pgw_runner_id ru = reg(x, u), rg = reg(x, ug);
    const char *tables[] = {"tasks", "projects", "audit_log"};
    for (int i = 0; i < 3; i++) {
        pgw_write *w = ih_write(&IH_ACME, tables[i], PGW_OP_UPDATE);
        ih_wids(w, "1", false);
        ih_wcols(w, "anything", false);
        ck_assert_uint_eq(match(x, w), 1);
        ck_assert_int_eq(state_of(x, ru), PGW_RUNNER_DIRTY);
        ck_assert_int_eq(state_of(x, rg), PGW_RUNNER_CLEAN);
        ck_assert_uint_eq(drain(x), 1);
        pgw_write_free(w);
    }
    ck_assert_uint_eq(pgw_index_reason_count(x, PGW_REASON_UNDECLARED), 3);
    pgw_deps_free(u);
    pgw_deps_free(ug);
    pgw_index_free(x);
}
END_TEST

/* Two updates of the same row in one transaction: two write sets, each
 * evaluated (never deduplicated on table and operation). */
START_TEST(two_updates_evaluated)
{
    pgw_index *x = new_index();
    pgw_deps *d = open_tasks(&IH_ACME, "open");
    ih_result(d, "3");
    pgw_runner_id r = reg(x, d);
    pgw_write *w1 = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w1, "9", false);
    ih_wcols(w1, "body", false);
    pgw_write *w2 = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w2, "9", false);
    ih_wcols(w2, "status", false);
    ck_assert_uint_eq(match(x, w1), 0);
    ck_assert_uint_eq(match(x, w2), 1); /* same table, op and row: still decided */
    ck_assert_int_eq(state_of(x, r), PGW_RUNNER_DIRTY);
    /* And the same write twice after a rerun marks twice. */
    pgw_dirty dd;
    ck_assert_int_eq(pgw_index_pop_dirty(&dd, x), PGW_OK);
    ck_assert_int_eq(dd.reason, PGW_REASON_FILTER_COLUMN_CHANGED);
    ck_assert_int_eq(pgw_index_ack_unknown(x, r, NULL), PGW_OK);
    ck_assert_uint_eq(match(x, w2), 1);
    pgw_write_free(w1);
    pgw_write_free(w2);
    pgw_deps_free(d);
    pgw_index_free(x);
}
END_TEST

START_TEST(shared_runners)
{
    pgw_index *x = new_index();
    pgw_deps *a = open_tasks(&IH_ACME, "open");
    pgw_deps *b = open_tasks(&IH_ACME, "open");
    ih_result(b, "5"); /* result IDs are not part of the identity */
    pgw_deps *c = open_tasks(&IH_ACME, "open2");
    pgw_deps *e = open_tasks(&IH_GLOBEX, "open");
    pgw_deps *f = open_tasks(&IH_ACME, "open");
    ih_filter(f, 0, "owner", PGW_FILTER_OPAQUE, NULL);
    pgw_runner_id ra = reg(x, a), rb = reg(x, b), rc = reg(x, c), re = reg(x, e),
                  rf = reg(x, f);
    ck_assert_uint_eq(ra, rb);
    ck_assert_uint_ne(ra, rc);
    ck_assert_uint_ne(ra, re);
    ck_assert_uint_ne(ra, rf);
    pgw_runner_info info;
    ck_assert_int_eq(pgw_index_runner(&info, x, ra, NULL), PGW_OK);
    ck_assert_uint_eq(info.refs, 2);
    ck_assert(!info.result_known); /* the runner's, not b's */
    ck_assert_str_eq(info.query, "open");
    pgw_index_stats s = stats(x);
    ck_assert_uint_eq(s.subscriptions, 5);
    ck_assert_uint_eq(s.runners, 4);
    ck_assert_uint_eq(s.scopes, 2);
    ck_assert_uint_eq(s.buckets, 2);
    ck_assert_int_eq(pgw_index_unregister(x, ra, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_runner(&info, x, ra, NULL), PGW_OK);
    ck_assert_uint_eq(info.refs, 1);
    ck_assert_int_eq(pgw_index_unregister(x, rb, NULL), PGW_OK);
    pgw_error err;
    ck_assert_int_eq(pgw_index_runner(&info, x, ra, &err), PGW_ENOTFOUND);
    ck_assert_int_eq(pgw_index_unregister(x, ra, &err), PGW_ENOTFOUND);
    /* The slot is reused under another generation; the old ID stays stale. */
    pgw_runner_id again = reg(x, a);
    ck_assert_uint_ne(again, ra);
    ck_assert_int_eq(pgw_index_runner(&info, x, ra, &err), PGW_ENOTFOUND);
    ck_assert_int_eq(pgw_index_unregister(x, rc, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_unregister(x, re, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_unregister(x, rf, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_unregister(x, again, NULL), PGW_OK);
    s = stats(x);
    ck_assert_uint_eq(s.subscriptions, 0);
    ck_assert_uint_eq(s.runners, 0);
    ck_assert_uint_eq(s.scopes, 0);
    ck_assert_uint_eq(s.buckets, 0);
    pgw_deps_free(a);
    pgw_deps_free(b);
    pgw_deps_free(c);
    pgw_deps_free(e);
    pgw_deps_free(f);
    pgw_index_free(x);
}
END_TEST

/* Coalescing and the rerun protocol, including the race: a write that hits
 * a runner while it reruns is decided with unknown result IDs and queues it
 * again on ack. */
START_TEST(rerun_protocol)
{
    pgw_index *x = new_index();
    pgw_deps *d = open_tasks(&IH_ACME, "open");
    ih_result(d, "1,2");
    pgw_runner_id r = reg(x, d);
    pgw_write *del1 = ih_write(&IH_ACME, "tasks", PGW_OP_DELETE);
    ih_wids(del1, "1", false);
    ck_assert_uint_eq(match(x, del1), 1);
    ck_assert_uint_eq(match(x, del1), 0); /* coalesced: reported once */
    ck_assert_uint_eq(stats(x).coalesced, 1);
    ck_assert_uint_eq(stats(x).dirty, 1);
    pgw_dirty dd;
    ck_assert_int_eq(pgw_index_pop_dirty(&dd, x), PGW_OK);
    ck_assert_uint_eq(dd.runner, r);
    ck_assert_int_eq(dd.reason, PGW_REASON_ROW_IN_RESULT);
    ck_assert_int_eq(pgw_index_pop_dirty(&dd, x), PGW_ENOTFOUND);
    ck_assert_int_eq(state_of(x, r), PGW_RUNNER_RUNNING);
    /* While it reruns (its new result is {3}), row 3's title changes. With
     * the old result {1,2} this would be ROWS_DISJOINT; running, the result
     * is unknown, so it must be marked. */
    pgw_write *t3 = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(t3, "3", false);
    ih_wcols(t3, "title", false);
    pgw_verdict v;
    ck_assert_int_eq(pgw_index_decide(&v, x, r, t3, NULL), PGW_OK);
    ck_assert(v.refresh && v.reason == PGW_REASON_RESULT_UNKNOWN);
    ck_assert_uint_eq(match(x, t3), 1);
    ck_assert_int_eq(state_of(x, r), PGW_RUNNER_RUNNING_DIRTY);
    ck_assert_uint_eq(match(x, t3), 0);
    ih_ids three;
    ih_ids_parse(&three, "3");
    ck_assert_int_eq(pgw_index_ack(x, r, three.ids, three.n, NULL), PGW_OK);
    ck_assert_int_eq(state_of(x, r), PGW_RUNNER_DIRTY); /* queued again */
    ck_assert_int_eq(pgw_index_pop_dirty(&dd, x), PGW_OK);
    ck_assert_int_eq(dd.reason, PGW_REASON_RESULT_UNKNOWN);
    ck_assert_int_eq(pgw_index_ack(x, r, three.ids, three.n, NULL), PGW_OK);
    ck_assert_int_eq(state_of(x, r), PGW_RUNNER_CLEAN);
    pgw_runner_info info;
    ck_assert_int_eq(pgw_index_runner(&info, x, r, NULL), PGW_OK);
    ck_assert(info.result_known);
    ck_assert_uint_eq(info.n_result_ids, 1);
    /* Clean with result {3}: deleting 1 no longer matters, 3 does. */
    ck_assert_uint_eq(match(x, del1), 0);
    ck_assert_uint_eq(match(x, t3), 1);
    /* begin: a rerun the index did not ask for. */
    ck_assert_int_eq(pgw_index_pop_dirty(&dd, x), PGW_OK);
    pgw_error err;
    ck_assert_int_eq(pgw_index_begin(x, r, &err), PGW_ESTATE);
    ck_assert_int_eq(pgw_index_ack_unknown(x, r, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_ack_unknown(x, r, &err), PGW_ESTATE);
    ck_assert_str_eq(err.message, "index_ack_unknown: runner " /* id varies */
                                  "4294967296 is not running (pop or begin it)");
    ck_assert_int_eq(pgw_index_begin(x, r, NULL), PGW_OK);
    ck_assert_int_eq(state_of(x, r), PGW_RUNNER_RUNNING);
    ck_assert_int_eq(pgw_index_ack(x, r, NULL, 0, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_runner(&info, x, r, NULL), PGW_OK);
    ck_assert(info.result_known && info.n_result_ids == 0);
    /* Unknown result after ack_unknown: a tracked runner is still found. */
    ck_assert_int_eq(pgw_index_begin(x, r, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_ack_unknown(x, r, NULL), PGW_OK);
    ck_assert_uint_eq(match(x, del1), 1);
    ck_assert_int_eq(pgw_index_unregister(x, r, NULL), PGW_OK);
    ck_assert_uint_eq(stats(x).dirty, 0);
    ck_assert_int_eq(pgw_index_pop_dirty(&dd, x), PGW_ENOTFOUND);
    pgw_write_free(del1);
    pgw_write_free(t3);
    pgw_deps_free(d);
    pgw_index_free(x);
}
END_TEST

START_TEST(reset_scope)
{
    pgw_index *x = new_index();
    pgw_deps *a = open_tasks(&IH_ACME, "a");
    pgw_deps *b = ih_deps(&IH_ACME, "b");
    pgw_deps *g = open_tasks(&IH_GLOBEX, "g");
    pgw_runner_id ra = reg(x, a), rb = reg(x, b), rg = reg(x, g);
    ck_assert_int_eq(pgw_index_begin(x, ra, NULL), PGW_OK); /* one is running */
    size_t n = 0;
    ck_assert_int_eq(pgw_index_reset_scope(&n, x, &IH_ACME, NULL), PGW_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(state_of(x, ra), PGW_RUNNER_RUNNING_DIRTY);
    ck_assert_int_eq(state_of(x, rb), PGW_RUNNER_DIRTY);
    ck_assert_int_eq(state_of(x, rg), PGW_RUNNER_CLEAN);
    ck_assert_int_eq(pgw_index_reset_scope(&n, x, &IH_ACME, NULL), PGW_OK);
    ck_assert_uint_eq(n, 0); /* coalesced */
    pgw_scope unknown = {"p9", "x", "y"};
    ck_assert_int_eq(pgw_index_reset_scope(&n, x, &unknown, NULL), PGW_OK);
    ck_assert_uint_eq(n, 0);
    ck_assert_uint_eq(pgw_index_reason_count(x, PGW_REASON_SCOPE_RESET), 4);
    /* A reset write (from an unreadable notification) does the same. */
    pgw_write *w;
    ck_assert_int_eq(pgw_write_new_reset(&w, &IH_GLOBEX, NULL), PGW_OK);
    ck_assert_uint_eq(match(x, w), 1);
    ck_assert_int_eq(state_of(x, rg), PGW_RUNNER_DIRTY);
    pgw_dirty dd;
    ck_assert_int_eq(pgw_index_pop_dirty(&dd, x), PGW_OK);
    ck_assert_int_eq(dd.reason, PGW_REASON_SCOPE_RESET);
    pgw_write_free(w);
    pgw_error err;
    ck_assert_int_eq(pgw_index_reset_scope(NULL, x, NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "index_reset_scope: scope is NULL");
    pgw_deps_free(a);
    pgw_deps_free(b);
    pgw_deps_free(g);
    pgw_index_free(x);
}
END_TEST

/* The equality index: 100 runners filtered on distinct owners; an insert
 * whose owner is known visits exactly the one runner it can match. */
START_TEST(value_index_visits)
{
    pgw_index *x = new_index();
    pgw_deps *d[100];
    pgw_runner_id r[100];
    for (int i = 0; i < 100; i++) {
        char owner[16];
        snprintf(owner, sizeof owner, "u%d", i);
        d[i] = ih_deps(&IH_ACME, "mine");
        size_t t = ih_table(d[i], "tasks");
        ih_cols(d[i], t, "id,title");
        ih_filter(d[i], t, "status", PGW_FILTER_IN, "open,waiting");
        ih_filter(d[i], t, "owner", PGW_FILTER_EQ, owner);
        ih_sort(d[i], t, "id");
        ck_assert_int_eq(pgw_deps_set_window(d[i], t, 10, 0, NULL), PGW_OK);
        if (i % 2)
            ih_result(d[i], "");
        r[i] = reg(x, d[i]);
    }
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_INSERT);
    ih_wids(w, "500", false);
    ih_wval(w, 0, PGW_SIDE_NEW, "owner", "u7");
    pgw_index_stats s0 = stats(x);
    ck_assert_uint_eq(match(x, w), 1);
    ck_assert_uint_eq(stats(x).visited - s0.visited, 1);
    ck_assert_int_eq(state_of(x, r[7]), PGW_RUNNER_DIRTY);
    drain(x);
    /* Without the owner's value every runner is a candidate. */
    pgw_write_free(w);
    w = ih_write(&IH_ACME, "tasks", PGW_OP_INSERT);
    ih_wids(w, "501", false);
    ih_wval(w, 0, PGW_SIDE_NEW, "status", "closed");
    s0 = stats(x);
    ck_assert_uint_eq(match(x, w), 0); /* all decided VALUES_DISJOINT */
    ck_assert_uint_eq(stats(x).visited - s0.visited, 100);
    pgw_write_free(w);
    /* An update moving a row from u2 to u4 visits both owners' runners
     * (both without result IDs: each may see the row leave or enter). */
    w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "9", false);
    ih_wcols(w, "owner", false);
    ih_wval(w, 0, PGW_SIDE_OLD, "owner", "u2");
    ih_wval(w, 0, PGW_SIDE_NEW, "owner", "u4");
    s0 = stats(x);
    ck_assert_uint_eq(match(x, w), 2);
    ck_assert_uint_eq(stats(x).visited - s0.visited, 2);
    ck_assert_int_eq(state_of(x, r[2]), PGW_RUNNER_DIRTY);
    ck_assert_int_eq(state_of(x, r[4]), PGW_RUNNER_DIRTY);
    drain(x);
    /* From u3 to u5 (both with an empty result, LIMIT 10, no offset): the
     * row cannot have been counted in u3's window nor left it (rule 13),
     * so only u5's runner refreshes; only it is visited (in a group that
     * tracks results without offset, the old values of an update that
     * changes the value column are not probed: rule 13 decides the
     * runners they alone would find, the result-ID index finds the rows in
     * their results). */
    ih_wval(w, 0, PGW_SIDE_OLD, "owner", "u3");
    ih_wval(w, 0, PGW_SIDE_NEW, "owner", "u5");
    s0 = stats(x);
    ck_assert_uint_eq(match(x, w), 1);
    ck_assert_uint_eq(stats(x).visited - s0.visited, 1);
    ck_assert_int_eq(state_of(x, r[3]), PGW_RUNNER_CLEAN);
    ck_assert_int_eq(state_of(x, r[5]), PGW_RUNNER_DIRTY);
    drain(x);
    pgw_write_free(w);
    /* SQL NULL matches no owner: nobody is visited. */
    w = ih_write(&IH_ACME, "tasks", PGW_OP_DELETE);
    ih_wids(w, "9", false);
    ih_wval(w, 0, PGW_SIDE_OLD, "owner", NULL);
    s0 = stats(x);
    ck_assert_uint_eq(match(x, w), 0);
    ck_assert_uint_eq(stats(x).visited - s0.visited, 0);
    pgw_write_free(w);
    for (int i = 0; i < 100; i++)
        pgw_deps_free(d[i]);
    pgw_index_free(x);
}
END_TEST

/* The result-ID index: 100 runners with opaque filters and known results;
 * an update of a projected column visits only the runner holding the row. */
START_TEST(id_index_visits)
{
    pgw_index *x = new_index();
    pgw_deps *d[100];
    pgw_runner_id r[100];
    for (int i = 0; i < 100; i++) {
        char res[32], q[16];
        snprintf(res, sizeof res, "%d,%d", i, 1000 + i);
        snprintf(q, sizeof q, "search%d", i);
        d[i] = ih_deps(&IH_ACME, q);
        size_t t = ih_table(d[i], "tasks");
        ih_cols(d[i], t, "id,title");
        ih_filter(d[i], t, "title", PGW_FILTER_OPAQUE, NULL);
        ih_sort(d[i], t, "created_at");
        ck_assert_int_eq(pgw_deps_set_window(d[i], t, 2, 0, NULL), PGW_OK);
        ih_result(d[i], res);
        r[i] = reg(x, d[i]);
    }
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "42,5000", false);
    ih_wcols(w, "body", false); /* not read by anyone */
    pgw_index_stats s0 = stats(x);
    ck_assert_uint_eq(match(x, w), 0);
    ih_wcols(w, "title", false); /* a filter column: every runner */
    ck_assert_uint_eq(match(x, w), 100);
    pgw_dirty dd;
    while (pgw_index_pop_dirty(&dd, x) == PGW_OK) { /* rerun: same results */
        int i = 0;
        while (r[i] != dd.runner)
            i++;
        char res[32];
        snprintf(res, sizeof res, "%d,%d", i, 1000 + i);
        ih_ids ids;
        ih_ids_parse(&ids, res);
        ck_assert_int_eq(pgw_index_ack(x, dd.runner, ids.ids, ids.n, NULL), PGW_OK);
    }
    ih_wcols(w, "done_at", false); /* read by nobody; no filter or sort */
    s0 = stats(x);
    ck_assert_uint_eq(match(x, w), 0);
    ck_assert_uint_eq(stats(x).visited - s0.visited, 1); /* the runner holding 42 */
    ck_assert_uint_eq(pgw_index_reason_count(x, PGW_REASON_COLUMNS_DISJOINT), 2); /* body, done_at */
    pgw_write_free(w);
    /* A projected column of a row in one result. */
    pgw_deps *p = ih_deps(&IH_ACME, "proj");
    size_t t = ih_table(p, "tasks");
    ih_cols(p, t, "id,done_at");
    ih_sort(p, t, "created_at");
    ih_result(p, "42");
    pgw_runner_id rp = reg(x, p);
    w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "42", false);
    ih_wcols(w, "done_at", false);
    s0 = stats(x);
    ck_assert_uint_eq(match(x, w), 1);
    ck_assert_uint_eq(stats(x).visited - s0.visited, 2);
    ck_assert_int_eq(state_of(x, rp), PGW_RUNNER_DIRTY);
    pgw_write_free(w);
    /* Deletes with no offset: only the runners holding the rows. */
    ck_assert_int_eq(pgw_index_pop_dirty(&dd, x), PGW_OK);
    ck_assert_int_eq(pgw_index_ack(x, dd.runner, NULL, 0, NULL), PGW_OK);
    w = ih_write(&IH_ACME, "tasks", PGW_OP_DELETE);
    ih_wids(w, "7,1007,777", false);
    s0 = stats(x);
    ck_assert_uint_eq(match(x, w), 1);
    ck_assert_uint_eq(stats(x).visited - s0.visited, 1);
    ck_assert_int_eq(state_of(x, r[7]), PGW_RUNNER_DIRTY);
    pgw_write_free(w);
    for (int i = 0; i < 100; i++)
        pgw_deps_free(d[i]);
    pgw_deps_free(p);
    pgw_index_free(x);
}
END_TEST

/* A runner registered without result IDs (its first run still to come)
 * gets them from its first ack: pgw_decide then refreshes it when a write
 * touches a row of its result, whatever the row's values, and so must the
 * index (it used to leave such a runner in the equality index alone). */
START_TEST(ack_starts_tracking)
{
    pgw_index *x = new_index();
    pgw_deps *d = ih_deps(&IH_ACME, "mine");
    size_t t = ih_table(d, "tasks");
    ih_cols(d, t, "id,title,owner");
    ih_filter(d, t, "owner", PGW_FILTER_EQ, "u1");
    pgw_runner_id r = reg(x, d);
    pgw_deps *o = ih_deps(&IH_ACME, "other"); /* an untracked neighbour */
    t = ih_table(o, "tasks");
    ih_filter(o, t, "owner", PGW_FILTER_EQ, "u9");
    pgw_runner_id ro = reg(x, o);
    ck_assert_int_eq(pgw_index_begin(x, r, NULL), PGW_OK);
    ih_ids ids;
    ih_ids_parse(&ids, "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25");
    ck_assert_int_eq(pgw_index_ack(x, r, ids.ids, ids.n, NULL), PGW_OK);
    /* Row 5 (in the result) moves between two other owners: stale values
     * or not, pgw_decide says ROW_IN_RESULT. */
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "5", false);
    ih_wcols(w, "owner", false);
    ih_wval(w, 0, PGW_SIDE_OLD, "owner", "u2");
    ih_wval(w, 0, PGW_SIDE_NEW, "owner", "u3");
    pgw_verdict v;
    ck_assert_int_eq(pgw_index_decide(&v, x, r, w, NULL), PGW_OK);
    ck_assert(v.refresh && v.reason == PGW_REASON_ROW_IN_RESULT);
    ck_assert_uint_eq(match(x, w), 1);
    ck_assert_int_eq(state_of(x, r), PGW_RUNNER_DIRTY);
    ck_assert_int_eq(state_of(x, ro), PGW_RUNNER_CLEAN);
    ck_assert_uint_eq(drain(x), 1);
    /* Its result is empty now: the same write visits nobody. */
    pgw_index_stats s0 = stats(x);
    ck_assert_uint_eq(match(x, w), 0);
    ck_assert_uint_eq(stats(x).visited - s0.visited, 0);
    /* Unknown again (decided on the values alone), then known again. */
    ck_assert_int_eq(pgw_index_begin(x, r, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_ack_unknown(x, r, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_decide(&v, x, r, w, NULL), PGW_OK);
    ck_assert(!v.refresh);
    ck_assert_uint_eq(match(x, w), 0);
    ck_assert_int_eq(pgw_index_begin(x, r, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_ack(x, r, ids.ids, ids.n, NULL), PGW_OK);
    ck_assert_uint_eq(match(x, w), 1);
    ck_assert_int_eq(pgw_index_unregister(x, ro, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_unregister(x, r, NULL), PGW_OK);
    ck_assert_uint_eq(stats(x).buckets, 0);
    pgw_write_free(w);
    pgw_deps_free(d);
    pgw_deps_free(o);
    pgw_index_free(x);
}
END_TEST

/* A count(*) runner (its first table reads no column) acknowledged with no
 * IDs, as a host does for a result that lists no rows, or registered with
 * them: its result stays unknown, and a delete or a row leaving its filter
 * marks it. A list runner acked with {} holds an empty result instead. */
START_TEST(aggregate_ack)
{
    pgw_index *x = new_index();
    pgw_deps *d = ih_deps(&IH_ACME, "tasks.count");
    size_t t = ih_table(d, "tasks");
    ih_cols(d, t, "");
    ih_filter(d, t, "status", PGW_FILTER_EQ, "open");
    ih_result(d, "1,2");
    pgw_runner_id r = reg(x, d);
    pgw_deps *l = ih_deps(&IH_ACME, "tasks.ids");
    t = ih_table(l, "tasks");
    ih_cols(l, t, "id");
    ih_filter(l, t, "status", PGW_FILTER_EQ, "open");
    pgw_runner_id rl = reg(x, l);
    pgw_runner_info info;
    ck_assert_int_eq(pgw_index_runner(&info, x, r, NULL), PGW_OK);
    ck_assert(!info.result_known);
    ck_assert_int_eq(pgw_index_begin(x, r, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_begin(x, rl, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_ack(x, r, NULL, 0, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_ack(x, rl, NULL, 0, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_runner(&info, x, r, NULL), PGW_OK);
    ck_assert(!info.result_known);
    ck_assert_int_eq(pgw_index_runner(&info, x, rl, NULL), PGW_OK);
    ck_assert(info.result_known);
    ck_assert_uint_eq(info.n_result_ids, 0);
    /* Malformed IDs are still refused (the runner stays running). */
    ck_assert_int_eq(pgw_index_begin(x, r, NULL), PGW_OK);
    pgw_rowid bad = {NULL, 0};
    ck_assert_int_eq(pgw_index_ack(x, r, &bad, 1, NULL), PGW_EINVAL);
    ck_assert_int_eq(state_of(x, r), PGW_RUNNER_RUNNING);
    ck_assert_int_eq(pgw_index_ack(x, r, NULL, 0, NULL), PGW_OK);

    pgw_write *del = ih_write(&IH_ACME, "tasks", PGW_OP_DELETE);
    ih_wids(del, "7", false);
    ck_assert_uint_eq(match(x, del), 1);
    pgw_runner_info ri;
    ck_assert_int_eq(pgw_index_runner(&ri, x, r, NULL), PGW_OK);
    ck_assert(ri.state == PGW_RUNNER_DIRTY && ri.reason == PGW_REASON_DELETE_IN_WINDOW);
    ck_assert_int_eq(state_of(x, rl), PGW_RUNNER_CLEAN);
    ck_assert_uint_eq(drain(x), 1);
    pgw_write *leave = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(leave, "7", false);
    ih_wcols(leave, "status", false);
    ih_wval(leave, 0, PGW_SIDE_OLD, "status", "open");
    ih_wval(leave, 0, PGW_SIDE_NEW, "status", "done");
    ck_assert_uint_eq(match(x, leave), 1);
    ck_assert_int_eq(pgw_index_runner(&ri, x, r, NULL), PGW_OK);
    ck_assert(ri.state == PGW_RUNNER_DIRTY && ri.reason == PGW_REASON_FILTER_COLUMN_CHANGED);
    ck_assert_int_eq(state_of(x, rl), PGW_RUNNER_CLEAN);
    pgw_write_free(del);
    pgw_write_free(leave);
    pgw_deps_free(d);
    pgw_deps_free(l);
    pgw_index_free(x);
}
END_TEST

/* The equality index of a small group is a scan of its postings; a group
 * that grows past 32 postings, or gets a runner with several values, keeps
 * its values in the bucket's table instead. Either way a write visits only
 * the runners its values can match, before and after the change, and
 * through postings freed and reused by other runners. */
START_TEST(value_index_layouts)
{
    pgw_index *x = new_index();
    enum { N = 40 };
    pgw_deps *d[N + 1];
    pgw_runner_id r[N + 1];
    for (int i = 0; i <= N; i++) {
        char owner[16], q[16];
        snprintf(owner, sizeof owner, "u%d", i);
        snprintf(q, sizeof q, "q%d", i);
        d[i] = ih_deps(&IH_ACME, q);
        size_t t = ih_table(d[i], "tasks");
        if (i < N)
            ih_filter(d[i], t, "owner", PGW_FILTER_EQ, owner);
        else
            ih_filter(d[i], t, "owner", PGW_FILTER_IN, "u7,u8,u39");
    }
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_INSERT);
    ih_wids(w, "1,2", false);
    ih_wval(w, 0, PGW_SIDE_NEW, "owner", "u7");
    ih_wval(w, 1, PGW_SIDE_NEW, "owner", "u39");
    for (int i = 0; i < N; i++) {
        r[i] = reg(x, d[i]);
        pgw_index_stats s0 = stats(x);
        size_t want = (i >= 7) + (i >= 39);
        ck_assert_uint_eq(match(x, w), want);
        ck_assert_uint_eq(stats(x).visited - s0.visited, want);
        ck_assert_uint_eq(drain(x), want);
    }
    /* Unregister every other runner (their postings are reused below). */
    for (int i = 0; i < N; i += 2)
        ck_assert_int_eq(pgw_index_unregister(x, r[i], NULL), PGW_OK);
    pgw_index_stats s0 = stats(x);
    ck_assert_uint_eq(match(x, w), 2); /* u7 and u39 are odd */
    ck_assert_uint_eq(stats(x).visited - s0.visited, 2);
    ck_assert_uint_eq(drain(x), 2);
    r[N] = reg(x, d[N]); /* several values */
    for (int i = 0; i < N; i += 2)
        r[i] = reg(x, d[i]);
    s0 = stats(x);
    ck_assert_uint_eq(match(x, w), 3);
    ck_assert_uint_eq(stats(x).visited - s0.visited, 3);
    ck_assert_uint_eq(drain(x), 3);
    for (int i = 0; i <= N; i++) {
        ck_assert_int_eq(pgw_index_unregister(x, r[i], NULL), PGW_OK);
        pgw_deps_free(d[i]);
    }
    ck_assert_uint_eq(stats(x).buckets, 0);
    /* A small group with a multi-valued runner from the start. */
    pgw_deps *m = ih_deps(&IH_ACME, "m");
    ih_filter(m, ih_table(m, "tasks"), "owner", PGW_FILTER_IN, "u1,u7");
    pgw_deps *e = ih_deps(&IH_ACME, "e");
    ih_filter(e, ih_table(e, "tasks"), "owner", PGW_FILTER_EQ, "u2");
    pgw_runner_id rm = reg(x, m), re = reg(x, e);
    s0 = stats(x);
    ck_assert_uint_eq(match(x, w), 1);
    ck_assert_uint_eq(stats(x).visited - s0.visited, 1);
    ck_assert_int_eq(state_of(x, rm), PGW_RUNNER_DIRTY);
    ck_assert_int_eq(state_of(x, re), PGW_RUNNER_CLEAN);
    pgw_write_free(w);
    pgw_deps_free(m);
    pgw_deps_free(e);
    pgw_index_free(x);
}
END_TEST

/* A bucket with more groups than a 64-bit mask: a write with unknown rows
 * visits all of them, a known one only what its values allow. */
START_TEST(many_groups)
{
    pgw_index *x = new_index();
    enum { N = 70 };
    pgw_deps *d[N];
    for (int i = 0; i < N; i++) {
        char col[16], q[16];
        snprintf(col, sizeof col, "c%d", i);
        snprintf(q, sizeof q, "q%d", i);
        d[i] = ih_deps(&IH_ACME, q);
        ih_filter(d[i], ih_table(d[i], "tasks"), col, PGW_FILTER_EQ, "v");
        reg(x, d[i]);
    }
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_TRUNCATE);
    ck_assert_uint_eq(match(x, w), N);
    ck_assert_uint_eq(drain(x), N);
    pgw_write_free(w);
    w = ih_write(&IH_ACME, "tasks", PGW_OP_INSERT);
    ih_wids(w, "1", false);
    for (int i = 0; i < N; i++) {
        char col[16];
        snprintf(col, sizeof col, "c%d", i);
        ih_wval(w, 0, PGW_SIDE_NEW, col, i == 3 || i == 68 ? "v" : "w");
    }
    pgw_index_stats s0 = stats(x);
    ck_assert_uint_eq(match(x, w), 2);
    ck_assert_uint_eq(stats(x).visited - s0.visited, 2);
    pgw_write_free(w);
    for (int i = 0; i < N; i++)
        pgw_deps_free(d[i]);
    pgw_index_free(x);
}
END_TEST

/* The candidate set is exact: on random oracle workloads (two scopes, two
 * tables, lists, joins, counts; some runners running, some with unknown
 * results, reruns with new results, subscriptions replaced between writes),
 * the runners a match marks are exactly those pgw_index_decide refreshes. */
START_TEST(index_equals_decide)
{
    const char *s = getenv("PGW_TEST_SCALE");
    double scale = s ? atof(s) : 1.0;
    int rounds = (int)(300 * (scale > 0 && scale <= 1 ? scale : 1));
    if (rounds < 10)
        rounds = 10;
    orng rng = {777}, ddl_rng = {1616};
    const pgw_scope scopes[2] = {{"p", "t1", "db"}, {"p", "t2", "db"}};
    long writes = 0, marks = 0, ddls = 0;
    for (int round = 0; round < rounds; round++) {
        /* every other round, write sets with every value: value and range
         * groups are probed rather than scanned */
        o_full_rows = round % 2;
        pgw_index *x = new_index();
        otable tabs[2];
        o_table_random(&rng, &tabs[0]);
        o_table_random(&rng, &tabs[1]);
        enum { N = 40 };
        pgw_runner_id ids[N];
        pgw_deps *deps[N];
        for (int i = 0; i < N; i++) {
            oquery q;
            ores before;
            o_query_random(&rng, &q);
            o_eval(&before, &q, tabs);
            deps[i] = o_declare(&q, &scopes[orng_int(&rng, 2)], &before, tabs, O_BOUNDS);
            if (orng_p(&rng, 5))
                pgw_deps_clear_result_ids(deps[i]);
            if (i % 5 == 0) /* reading the clock changes no verdict of a write */
                ck_assert_int_eq(pgw_deps_set_time_dependent(deps[i], true, NULL), PGW_OK);
            ids[i] = reg(x, deps[i]);
        }
        for (int i = 0; i < N; i++) { /* some running, some without results */
            pgw_runner_info info;
            ck_assert_int_eq(pgw_index_runner(&info, x, ids[i], NULL), PGW_OK);
            if (info.state != PGW_RUNNER_CLEAN)
                continue;
            int k = orng_int(&rng, 10);
            if (k == 0)
                ck_assert_int_eq(pgw_index_begin(x, ids[i], NULL), PGW_OK);
            else if (k == 1) {
                ck_assert_int_eq(pgw_index_begin(x, ids[i], NULL), PGW_OK);
                ck_assert_int_eq(pgw_index_ack_unknown(x, ids[i], NULL), PGW_OK);
            }
        }
        for (int k = 0; k < 10; k++) {
            ostmt st;
            pgw_write *w = o_statement(&rng, tabs, &st, &scopes[orng_int(&rng, 2)]);
            if (orng_p(&ddl_rng, 12)) {
                w = as_ddl(w);
                ddls++;
            }
            bool want[N];
            for (int i = 0; i < N; i++) {
                pgw_verdict v;
                pgw_runner_info info;
                ck_assert_int_eq(pgw_index_runner(&info, x, ids[i], NULL), PGW_OK);
                ck_assert_int_eq(pgw_index_decide(&v, x, ids[i], w, NULL), PGW_OK);
                want[i] = v.refresh && (info.state == PGW_RUNNER_CLEAN ||
                                        info.state == PGW_RUNNER_RUNNING);
            }
            pgw_runner_state prior[N];
            for (int i = 0; i < N; i++)
                prior[i] = state_of(x, ids[i]);
            match(x, w);
            writes++;
            for (int i = 0; i < N; i++) {
                pgw_runner_state now = state_of(x, ids[i]);
                bool got = now != prior[i];
                ck_assert_msg(got == want[i], "round %d write %d runner %d: marked %d, decide %d",
                              round, k, i, got, want[i]);
                marks += got;
                if (now == PGW_RUNNER_RUNNING_DIRTY) /* → DIRTY, popped below */
                    ck_assert_int_eq(pgw_index_ack_unknown(x, ids[i], NULL), PGW_OK);
            }
            /* Back to the prior states (result IDs of the marked ones become
             * unknown, which the next writes exercise too). */
            pgw_dirty dd;
            while (pgw_index_pop_dirty(&dd, x) == PGW_OK) {
                int i = 0;
                while (ids[i] != dd.runner)
                    i++;
                if (prior[i] == PGW_RUNNER_CLEAN)
                    ck_assert_int_eq(pgw_index_ack_unknown(x, ids[i], NULL), PGW_OK);
            }
            pgw_write_free(w);
            /* Churn: reruns that find other rows of ta (often more than the
             * runner held), and subscriptions replaced by others. */
            for (int i = 0; i < N; i++) {
                if (state_of(x, ids[i]) != PGW_RUNNER_CLEAN || !orng_p(&rng, 10))
                    continue;
                static char bufs[OMAXR][2][8];
                static const char *parts[OMAXR][2];
                pgw_rowid rids[OMAXR];
                size_t n = 0;
                for (int j = 0; j < tabs[0].n; j++)
                    if (orng_p(&rng, 50))
                        o_rowid(bufs[n], parts[n], &rids[n], &tabs[0].r[j], tabs[0].composite),
                            n++;
                ck_assert_int_eq(pgw_index_begin(x, ids[i], NULL), PGW_OK);
                ck_assert_int_eq(pgw_index_ack(x, ids[i], rids, n, NULL), PGW_OK);
            }
            if (orng_p(&rng, 30)) {
                int i = orng_int(&rng, N);
                ck_assert_int_eq(pgw_index_unregister(x, ids[i], NULL), PGW_OK);
                pgw_deps_free(deps[i]);
                oquery q;
                ores before;
                o_query_random(&rng, &q);
                o_eval(&before, &q, tabs);
                deps[i] = o_declare(&q, &scopes[orng_int(&rng, 2)], &before, tabs, O_BOUNDS);
                ids[i] = reg(x, deps[i]);
            }
        }
        for (int i = 0; i < N; i++) {
            pgw_index_unregister(x, ids[i], NULL);
            pgw_deps_free(deps[i]);
        }
        pgw_index_stats st = stats(x);
        ck_assert_uint_eq(st.runners, 0);
        ck_assert_uint_eq(st.buckets, 0);
        pgw_index_free(x);
    }
    o_full_rows = false;
    printf("# index = decide on %ld writes (%ld ddl), %ld runners marked\n", writes, ddls,
           marks);
    ck_assert_int_gt(marks, writes);
    ck_assert_int_gt(ddls, writes / 20);
}
END_TEST

/* pgw_index_match_batch() has exactly the effects of pgw_index_match() on
 * each write in turn: two indexes built alike (random oracle workloads in
 * three scopes; lists, joins, counts, undeclared subscriptions; some
 * runners running, some with unknown results), one fed write by write and
 * one in batches of 1 to 19 writes (across the 8-write groups), mark the
 * same runners (counts per write), report them in the same order with the
 * same reasons after every batch (then some are rerun, alike in both), end
 * in the same runner states and keep the same counters. Scope resets and
 * writes in a scope with no subscription are among the writes; a third of
 * the rounds has undeclared subscriptions (matched one by one inside a
 * batch), and batch_many_candidates covers writes with more candidates
 * than a batch collects ahead. */
static void batch_setup(pgw_index *x[2], pgw_deps **deps, pgw_runner_id ids[2][40], int n,
                        orng *rng, otable tabs[2], const pgw_scope *scopes, bool undeclared)
{
    for (int i = 0; i < n; i++) {
        if (undeclared && orng_p(rng, 8)) {
            deps[i] = ih_deps(&scopes[orng_int(rng, 2)], "undeclared");
        } else {
            oquery q;
            ores before;
            o_query_random(rng, &q);
            o_eval(&before, &q, tabs);
            deps[i] = o_declare(&q, &scopes[orng_int(rng, 2)], &before, tabs, O_BOUNDS);
            if (orng_p(rng, 5))
                pgw_deps_clear_result_ids(deps[i]);
        }
        for (int k = 0; k < 2; k++)
            ids[k][i] = reg(x[k], deps[i]);
    }
    for (int i = 0; i < n; i++) {
        int k = orng_int(rng, 10);
        for (int j = 0; j < 2 && k < 2; j++) {
            if (state_of(x[j], ids[j][i]) != PGW_RUNNER_CLEAN)
                continue;
            ck_assert_int_eq(pgw_index_begin(x[j], ids[j][i], NULL), PGW_OK);
            if (k == 1)
                ck_assert_int_eq(pgw_index_ack_unknown(x[j], ids[j][i], NULL), PGW_OK);
        }
    }
}

START_TEST(match_batch_equals_sequential)
{
    const char *sc_env = getenv("PGW_TEST_SCALE");
    double scale = sc_env ? atof(sc_env) : 1.0;
    int rounds = (int)(60 * (scale > 0 && scale <= 1 ? scale : 1));
    if (rounds < 6)
        rounds = 6;
    orng rng = {4242}, ddl_rng = {1617};
    const pgw_scope scopes[3] = {{"p", "t1", "db"}, {"p", "t2", "db"}, {"p", "t3", "db"}};
    long writes = 0, marked = 0, ddls = 0;
    for (int round = 0; round < rounds; round++) {
        enum { N = 40, W = 60 };
        pgw_index *x[2] = {new_index(), new_index()};
        otable tabs[2];
        o_table_random(&rng, &tabs[0]);
        o_table_random(&rng, &tabs[1]);
        pgw_deps *deps[N];
        pgw_runner_id ids[2][N];
        /* Undeclared subscriptions take another path: a third of the rounds. */
        batch_setup(x, deps, ids, N, &rng, tabs, scopes, round % 3 == 0);
        for (int i = 0; i < N; i++)
            ck_assert_uint_eq(ids[0][i], ids[1][i]);
        pgw_write *ws[W];
        for (int k = 0; k < W; k++) {
            const pgw_scope *sc = &scopes[orng_int(&rng, 3)]; /* t3: no subscription */
            if (orng_p(&rng, 4)) {
                ck_assert_int_eq(pgw_write_new_reset(&ws[k], sc, NULL), PGW_OK);
            } else {
                ostmt st;
                ws[k] = o_statement(&rng, tabs, &st, sc);
                if (orng_p(&ddl_rng, 12)) {
                    ws[k] = as_ddl(ws[k]);
                    ddls++;
                }
            }
        }
        for (int k = 0; k < W;) {
            int b = 1 + orng_int(&rng, 19);
            if (b > W - k)
                b = W - k;
            size_t seq[19], bat[19];
            for (int j = 0; j < b; j++) {
                seq[j] = match(x[0], ws[k + j]);
                bat[j] = 99;
            }
            ck_assert_int_eq(pgw_index_match_batch(bat, x[1], &ws[k], (size_t)b, NULL), PGW_OK);
            for (int j = 0; j < b; j++) {
                ck_assert_msg(seq[j] == bat[j],
                              "round %d write %d: %zu marked one by one, %zu in a batch", round,
                              k + j, seq[j], bat[j]);
                marked += (long)seq[j];
            }
            /* The same runners in the same order with the same reasons;
             * rerun some of them (alike in both) before the next batch. */
            pgw_dirty d0, d1;
            int r0, r1;
            do {
                r0 = pgw_index_pop_dirty(&d0, x[0]);
                r1 = pgw_index_pop_dirty(&d1, x[1]);
                ck_assert_int_eq(r0, r1);
                if (r0 != PGW_OK)
                    break;
                ck_assert_uint_eq(d0.runner, d1.runner);
                ck_assert_int_eq(d0.reason, d1.reason);
                if (orng_p(&rng, 2))
                    continue; /* left running */
                ck_assert_int_eq(pgw_index_ack_unknown(x[0], d0.runner, NULL), PGW_OK);
                ck_assert_int_eq(pgw_index_ack_unknown(x[1], d1.runner, NULL), PGW_OK);
            } while (true);
            k += b;
        }
        writes += W;
        for (int i = 0; i < N; i++)
            ck_assert_int_eq(state_of(x[0], ids[0][i]), state_of(x[1], ids[1][i]));
        pgw_index_stats s0 = stats(x[0]), s1 = stats(x[1]);
        ck_assert_uint_eq(s0.writes, s1.writes);
        ck_assert_uint_eq(s0.visited, s1.visited);
        ck_assert_uint_eq(s0.marked, s1.marked);
        ck_assert_uint_eq(s0.coalesced, s1.coalesced);
        for (int r = 0; r < PGW_REASON_COUNT; r++)
            ck_assert_uint_eq(pgw_index_reason_count(x[0], (pgw_reason)r),
                              pgw_index_reason_count(x[1], (pgw_reason)r));
        for (int k = 0; k < W; k++)
            pgw_write_free(ws[k]);
        for (int i = 0; i < N; i++)
            pgw_deps_free(deps[i]);
        pgw_index_free(x[0]);
        pgw_index_free(x[1]);
    }
    printf("# batch = one by one on %ld writes (%ld ddl), %ld runners marked\n", writes, ddls,
           marked);
    ck_assert_int_gt(marked, writes / 2);
    ck_assert_int_gt(ddls, writes / 20);
}
END_TEST

/* A write with more candidates than a batch collects ahead (150 readers of
 * one table, no filter) is matched whole in its turn; the batch still
 * equals one by one, and the writes around it still go through the
 * batch's own path. */
START_TEST(batch_many_candidates)
{
    pgw_index *x[2] = {new_index(), new_index()};
    enum { N = 150 };
    for (int i = 0; i < N + 2; i++) {
        char q[16];
        snprintf(q, sizeof q, "q%d", i);
        pgw_deps *d = ih_deps(&IH_ACME, q);
        size_t t = ih_table(d, i < N ? "tasks" : "notes");
        ih_cols(d, t, "id,title");
        ih_filter(d, t, "status", PGW_FILTER_EQ, i % 2 ? "open" : "done");
        ih_result(d, i % 3 ? "1,2" : "3");
        for (int k = 0; k < 2; k++)
            reg(x[k], d);
        pgw_deps_free(d);
    }
    pgw_write *ws[6];
    for (int k = 0; k < 6; k++) {
        ws[k] = ih_write(&IH_ACME, k % 2 ? "notes" : "tasks",
                         k < 4 ? PGW_OP_INSERT : PGW_OP_UPDATE);
        ih_wids(ws[k], k < 4 ? "9" : "1", false);
        if (k >= 4)
            ih_wcols(ws[k], "title", false);
    }
    size_t seq[6], bat[6];
    for (int k = 0; k < 6; k++)
        seq[k] = match(x[0], ws[k]);
    ck_assert_int_eq(pgw_index_match_batch(bat, x[1], ws, 6, NULL), PGW_OK);
    ck_assert_uint_eq(seq[0], N); /* an insert with unknown values: every reader */
    ck_assert_uint_eq(seq[1], 2);
    for (int k = 0; k < 6; k++)
        ck_assert_uint_eq(seq[k], bat[k]);
    pgw_dirty d0, d1;
    size_t popped = 0;
    while (pgw_index_pop_dirty(&d0, x[0]) == PGW_OK) {
        ck_assert_int_eq(pgw_index_pop_dirty(&d1, x[1]), PGW_OK);
        ck_assert_uint_eq(d0.runner, d1.runner);
        ck_assert_int_eq(d0.reason, d1.reason);
        popped++;
    }
    ck_assert_int_eq(pgw_index_pop_dirty(&d1, x[1]), PGW_ENOTFOUND);
    ck_assert_uint_eq(popped, N + 2);
    pgw_index_stats s0 = stats(x[0]), s1 = stats(x[1]);
    ck_assert_uint_eq(s0.visited, s1.visited);
    ck_assert_uint_eq(s0.coalesced, s1.coalesced);
    for (int k = 0; k < 6; k++)
        pgw_write_free(ws[k]);
    pgw_index_free(x[0]);
    pgw_index_free(x[1]);
}
END_TEST

/* ---- the clock (time-dependent runners) ---- */

static size_t clock_at(pgw_index *x, int64_t now)
{
    size_t n = 99;
    pgw_error err;
    pgw_error_clear(&err);
    ck_assert_msg(pgw_index_clock(&n, x, now, &err) == PGW_OK, "clock: %s", err.message);
    return n;
}

static int64_t next_due(pgw_index *x)
{
    int64_t d = -42;
    ck_assert_int_eq(pgw_index_clock_next(&d, x), PGW_OK);
    return d;
}

static pgw_reason reason_of(pgw_index *x, pgw_runner_id id)
{
    pgw_runner_info info;
    ck_assert_int_eq(pgw_index_runner(&info, x, id, NULL), PGW_OK);
    return info.reason;
}

static pgw_deps *timed(pgw_deps *d)
{
    ck_assert_int_eq(pgw_deps_set_time_dependent(d, true, NULL), PGW_OK);
    return d;
}

/* A time-dependent runner is marked exactly one interval after its base
 * (registration, then each start of a rerun), never between, never twice;
 * its twin that does not read the clock is a separate runner the clock
 * never marks. */
START_TEST(clock_interval)
{
    pgw_index *x = new_index(); /* the default interval, 1000 ms */
    ck_assert_uint_eq(clock_at(x, 0), 0); /* the index's time: 0 */
    pgw_deps *dt = timed(open_tasks(&IH_ACME, "due.today"));
    pgw_deps *dp = open_tasks(&IH_ACME, "due.today");
    pgw_runner_id t = reg(x, dt), p = reg(x, dp);
    ck_assert_uint_ne(t, p); /* the flag is part of the identity */
    ck_assert_uint_eq(reg(x, dt), t); /* the same declaration joins */
    ck_assert_uint_eq(stats(x).runners, 2);
    ck_assert_uint_eq(stats(x).time_dependent, 1);
    ck_assert_int_eq(next_due(x), 1000);
    ck_assert_uint_eq(clock_at(x, 999), 0);
    ck_assert_int_eq(state_of(x, t), PGW_RUNNER_CLEAN);
    ck_assert_uint_eq(clock_at(x, 1000), 1);
    ck_assert_int_eq(state_of(x, t), PGW_RUNNER_DIRTY);
    ck_assert_int_eq(reason_of(x, t), PGW_REASON_CLOCK);
    ck_assert_int_eq(state_of(x, p), PGW_RUNNER_CLEAN);
    pgw_index_stats s = stats(x);
    ck_assert_uint_eq(s.clocked, 1);
    ck_assert_uint_eq(s.marked, 1);
    ck_assert_uint_eq(s.dirty, 1);
    ck_assert_uint_eq(s.visited, 0); /* the clock decides nothing */
    ck_assert_uint_eq(pgw_index_reason_count(x, PGW_REASON_CLOCK), 1);
    /* Dirty: nothing is due until its rerun starts; not marked twice. */
    int64_t d = 7;
    ck_assert_int_eq(pgw_index_clock_next(&d, x), PGW_ENOTFOUND);
    ck_assert_int_eq(d, 7);
    ck_assert_uint_eq(clock_at(x, 5000), 0);
    ck_assert_uint_eq(stats(x).clocked, 1);
    ck_assert_uint_eq(stats(x).coalesced, 0);
    pgw_dirty dd;
    ck_assert_int_eq(pgw_index_pop_dirty(&dd, x), PGW_OK); /* base 5000 */
    ck_assert_uint_eq(dd.runner, t);
    ck_assert_int_eq(dd.reason, PGW_REASON_CLOCK);
    ck_assert_int_eq(pgw_index_pop_dirty(&dd, x), PGW_ENOTFOUND);
    ck_assert_int_eq(next_due(x), 6000);
    /* Running: RUNNING → RUNNING_DIRTY at the interval, queued on ack. */
    ck_assert_uint_eq(clock_at(x, 5999), 0);
    ck_assert_int_eq(state_of(x, t), PGW_RUNNER_RUNNING);
    ck_assert_uint_eq(clock_at(x, 6000), 1);
    ck_assert_int_eq(state_of(x, t), PGW_RUNNER_RUNNING_DIRTY);
    ck_assert_uint_eq(clock_at(x, 9000), 0); /* coalesced */
    ck_assert_int_eq(pgw_index_ack_unknown(x, t, NULL), PGW_OK);
    ck_assert_int_eq(state_of(x, t), PGW_RUNNER_DIRTY);
    ck_assert_int_eq(pgw_index_pop_dirty(&dd, x), PGW_OK); /* base 9000 */
    ck_assert_int_eq(dd.reason, PGW_REASON_CLOCK);
    ck_assert_int_eq(pgw_index_ack_unknown(x, t, NULL), PGW_OK);
    /* An ack keeps the base of the rerun's start. */
    ck_assert_int_eq(next_due(x), 10000);
    ck_assert_uint_eq(clock_at(x, 9500), 0);
    ck_assert_uint_eq(clock_at(x, 9999), 0);
    ck_assert_int_eq(state_of(x, t), PGW_RUNNER_CLEAN);
    /* A write marks it with its own reason; the clock leaves that alone. */
    pgw_write *ins = ih_write(&IH_ACME, "tasks", PGW_OP_INSERT);
    ih_wids(ins, "1", false);
    ck_assert_uint_eq(match(x, ins), 2);
    ck_assert_int_eq(reason_of(x, t), PGW_REASON_INSERT_MAY_ENTER);
    ck_assert_int_eq(pgw_index_clock_next(&d, x), PGW_ENOTFOUND);
    ck_assert_uint_eq(clock_at(x, 20000), 0);
    ck_assert_int_eq(reason_of(x, t), PGW_REASON_INSERT_MAY_ENTER);
    ck_assert_uint_eq(drain(x), 2); /* t's base: 20000 */
    ck_assert_int_eq(next_due(x), 21000);
    /* begin sets the base too. */
    ck_assert_uint_eq(clock_at(x, 20400), 0);
    ck_assert_int_eq(pgw_index_begin(x, t, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_ack_unknown(x, t, NULL), PGW_OK);
    ck_assert_int_eq(next_due(x), 21400);
    ck_assert_uint_eq(clock_at(x, 21399), 0);
    ck_assert_uint_eq(clock_at(x, 21400), 1);
    ck_assert_int_eq(state_of(x, p), PGW_RUNNER_CLEAN);
    ck_assert_uint_eq(stats(x).clocked, 3);
    ck_assert_uint_eq(pgw_index_reason_count(x, PGW_REASON_CLOCK), 3);
    /* Unregistered (both references), it is due no more. */
    ck_assert_int_eq(pgw_index_unregister(x, t, NULL), PGW_OK);
    ck_assert_uint_eq(stats(x).time_dependent, 1);
    ck_assert_int_eq(pgw_index_unregister(x, t, NULL), PGW_OK);
    ck_assert_uint_eq(stats(x).time_dependent, 0);
    ck_assert_uint_eq(stats(x).dirty, 0);
    ck_assert_int_eq(pgw_index_clock_next(&d, x), PGW_ENOTFOUND);
    ck_assert_uint_eq(clock_at(x, 99999), 0);
    pgw_write_free(ins);
    pgw_deps_free(dt);
    pgw_deps_free(dp);
    pgw_index_free(x);
}
END_TEST

/* Before the index has a time, a base is unknown: due at once. A shared
 * runner keeps its base when a subscriber joins. */
START_TEST(clock_unknown_base)
{
    pgw_index *x = new_index();
    pgw_deps *dt = timed(ih_deps(&IH_ACME, "count.today"));
    ih_table(dt, "tasks");
    pgw_runner_id t = reg(x, dt);
    ck_assert_int_eq(next_due(x), 0);
    ck_assert_int_eq(pgw_index_begin(x, t, NULL), PGW_OK);
    ck_assert_int_eq(next_due(x), 0); /* still no time */
    ck_assert_uint_eq(clock_at(x, 123), 1);
    ck_assert_int_eq(state_of(x, t), PGW_RUNNER_RUNNING_DIRTY);
    ck_assert_int_eq(pgw_index_ack_unknown(x, t, NULL), PGW_OK);
    pgw_dirty dd;
    ck_assert_int_eq(pgw_index_pop_dirty(&dd, x), PGW_OK);
    ck_assert_int_eq(dd.reason, PGW_REASON_CLOCK);
    ck_assert_int_eq(pgw_index_ack_unknown(x, t, NULL), PGW_OK);
    ck_assert_int_eq(next_due(x), 1123);
    ck_assert_uint_eq(clock_at(x, 600), 0);
    ck_assert_uint_eq(reg(x, dt), t);
    ck_assert_int_eq(next_due(x), 1123);
    ck_assert_uint_eq(clock_at(x, 1122), 0);
    ck_assert_uint_eq(clock_at(x, 1123), 1);
    pgw_deps_free(dt);
    pgw_index_free(x);
}
END_TEST

/* Waiting runners are due in the order of their bases, whatever marks some
 * of them in between; the dirty queue follows; a scope reset marks them as
 * it marks the others. The interval is the host's. */
START_TEST(clock_order)
{
    pgw_index_options o = PGW_INDEX_OPTIONS_INIT;
    o.clock_interval_ms = 50;
    pgw_index *x = NULL;
    ck_assert_int_eq(pgw_index_new(&x, &o, NULL), PGW_OK);
    pgw_runner_id r[4];
    pgw_deps *ds[4];
    for (int i = 0; i < 4; i++) {
        char q[16];
        snprintf(q, sizeof q, "q%d", i);
        ds[i] = timed(open_tasks(i == 3 ? &IH_GLOBEX : &IH_ACME, q));
        ih_result(ds[i], i == 1 ? "2" : "1");
        ck_assert_uint_eq(clock_at(x, 10 * i), 0);
        r[i] = reg(x, ds[i]); /* bases 0, 10, 20, 30 */
    }
    /* Plenty of runners that do not read the clock: never visited. */
    for (int i = 0; i < 200; i++) {
        char q[16];
        snprintf(q, sizeof q, "plain%d", i);
        pgw_deps *d = open_tasks(&IH_ACME, q);
        ih_result(d, "1");
        reg(x, d);
        pgw_deps_free(d);
    }
    ck_assert_int_eq(next_due(x), 50);
    /* A write to row 2 marks r[1] only (the others hold row 1): it stops
     * waiting, the others keep their order. */
    pgw_write *u2 = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(u2, "2", false);
    ih_wcols(u2, "title", false);
    ck_assert_uint_eq(match(x, u2), 1);
    ck_assert_int_eq(state_of(x, r[1]), PGW_RUNNER_DIRTY);
    ck_assert_uint_eq(clock_at(x, 69), 1); /* r[0] */
    ck_assert_int_eq(next_due(x), 70);
    ck_assert_uint_eq(clock_at(x, 80), 2); /* r[2], r[3] */
    pgw_dirty dd;
    const pgw_runner_id order[4] = {r[1], r[0], r[2], r[3]};
    const pgw_reason why[4] = {PGW_REASON_ROW_IN_RESULT, PGW_REASON_CLOCK, PGW_REASON_CLOCK,
                               PGW_REASON_CLOCK};
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(pgw_index_pop_dirty(&dd, x), PGW_OK);
        ck_assert_uint_eq(dd.runner, order[i]);
        ck_assert_int_eq(dd.reason, why[i]);
        ck_assert_int_eq(pgw_index_ack_unknown(x, dd.runner, NULL), PGW_OK);
    }
    ck_assert_int_eq(pgw_index_pop_dirty(&dd, x), PGW_ENOTFOUND);
    ck_assert_uint_eq(stats(x).clocked, 3);
    ck_assert_int_eq(next_due(x), 130);
    /* A reset of acme marks its three and every plain runner; globex's
     * waits on. */
    size_t n = 0;
    ck_assert_int_eq(pgw_index_reset_scope(&n, x, &IH_ACME, NULL), PGW_OK);
    ck_assert_uint_eq(n, 203);
    ck_assert_int_eq(next_due(x), 130);
    ck_assert_uint_eq(clock_at(x, 130), 1);
    ck_assert_int_eq(state_of(x, r[3]), PGW_RUNNER_DIRTY);
    ck_assert_uint_eq(stats(x).visited, 1); /* the write's one candidate; the clock decides none */
    pgw_write_free(u2);
    for (int i = 0; i < 4; i++)
        pgw_deps_free(ds[i]);
    pgw_index_free(x);
}
END_TEST

/* Version 1 options (no interval) and version 1 stats are still
 * accepted; the clock refuses a time that goes back. */
START_TEST(clock_versions_and_errors)
{
    pgw_index_options v1 = {1, 0, 0}; /* a version 1 struct ends before the interval */
    pgw_index *x = NULL;
    ck_assert_int_eq(pgw_index_new(&x, &v1, NULL), PGW_OK);
    pgw_deps *dt = timed(open_tasks(&IH_ACME, "a"));
    ck_assert_uint_eq(clock_at(x, 100), 0);
    pgw_runner_id t = reg(x, dt);
    ck_assert_int_eq(next_due(x), 100 + PGW_INDEX_CLOCK_INTERVAL_MS);
    pgw_error err;
    size_t n = 99;
    ck_assert_int_eq(pgw_index_clock(&n, x, 99, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "index_clock: now_ms 99 is before 100, the time of an earlier "
                                  "call (the clock must not go back: use a monotonic clock)");
    ck_assert_uint_eq(n, 99);
    ck_assert_int_eq(pgw_index_clock(NULL, x, -1, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "index_clock: now_ms -1 is negative (milliseconds of a "
                                  "monotonic clock, such as CLOCK_MONOTONIC)");
    ck_assert_int_eq(pgw_index_clock(NULL, NULL, 0, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "index_clock: index is NULL");
    ck_assert_uint_eq(clock_at(x, 100), 0); /* the same time again is fine */
    ck_assert_int_eq(pgw_index_clock(NULL, x, 1100, NULL), PGW_OK); /* out may be NULL */
    ck_assert_int_eq(state_of(x, t), PGW_RUNNER_DIRTY);
    int64_t d = 5;
    ck_assert_int_eq(pgw_index_clock_next(NULL, x), PGW_EINVAL);
    ck_assert_int_eq(pgw_index_clock_next(&d, NULL), PGW_EINVAL);
    ck_assert_int_eq(d, 5);
    /* stats version 1 fills the version 1 members only */
    pgw_index_stats s1 = PGW_INDEX_STATS_INIT;
    s1.version = 1;
    s1.time_dependent = s1.clocked = 77;
    ck_assert_int_eq(pgw_index_stats_get(&s1, x), PGW_OK);
    ck_assert_uint_eq(s1.marked, 1);
    ck_assert_uint_eq(s1.time_dependent, 77);
    ck_assert_uint_eq(s1.clocked, 77);
    s1.version = 0;
    ck_assert_int_eq(pgw_index_stats_get(&s1, x), PGW_EINVAL);
    /* An interval near the end of time saturates. */
    pgw_index_options big = PGW_INDEX_OPTIONS_INIT;
    big.clock_interval_ms = INT64_MAX;
    pgw_index *y = NULL;
    ck_assert_int_eq(pgw_index_new(&y, &big, NULL), PGW_OK);
    ck_assert_uint_eq(clock_at(y, 1), 0);
    reg(y, dt);
    ck_assert_int_eq(next_due(y), INT64_MAX);
    ck_assert_uint_eq(clock_at(y, INT64_MAX - 1), 0);
    ck_assert_uint_eq(clock_at(y, INT64_MAX), 1);
    /* an index decides a time-dependent runner as pgw_decide() does */
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "1", false);
    ih_wcols(w, "updated_at", false);
    pgw_verdict v, vd;
    ck_assert_int_eq(pgw_index_decide(&v, x, t, w, NULL), PGW_OK);
    ck_assert_int_eq(pgw_decide(&vd, dt, w, NULL), PGW_OK);
    ck_assert(!v.refresh && v.reason == PGW_REASON_COLUMNS_DISJOINT);
    ck_assert(vd.refresh == v.refresh && vd.reason == v.reason);
    pgw_write_free(w);
    pgw_deps_free(dt);
    pgw_index_free(x);
    pgw_index_free(y);
}
END_TEST

/* Memory per subscription through the allocator hook, in the shape of the
 * issue's benchmark: tenants × 10 tables × 10 distinct subscriptions, each
 * with a filter, a sort, a window and 20 result IDs. */
START_TEST(memory_per_subscription)
{
    pgwt_alloc_install();
    pgw_index *x = new_index();
    const char *s = getenv("PGW_TEST_SCALE");
    int tenants = s && atof(s) < 1 ? 20 : 200;
    size_t base = pgwt_alloc_get().live_bytes;
    size_t subs = 0, nids = 0;
    for (int t = 0; t < tenants; t++) {
        char tenant[16];
        snprintf(tenant, sizeof tenant, "tenant%d", t);
        pgw_scope sc = {"p1", tenant, "app"};
        for (int tab = 0; tab < 10; tab++) {
            for (int sub = 0; sub < 10; sub++) {
                char table[16], owner[16], ids[256];
                snprintf(table, sizeof table, "table%d", tab);
                snprintf(owner, sizeof owner, "user%d", t * 100 + tab * 10 + sub);
                size_t len = 0;
                for (int i = 0; i < 20; i++)
                    len += (size_t)snprintf(ids + len, sizeof ids - len, "%s%d", i ? "," : "",
                                            sub * 1000 + tab * 101 + i * 7);
                pgw_deps *d = ih_deps(&sc, "tasks.list");
                size_t e = ih_table(d, table);
                ih_cols(d, e, "id,title,status,updated_at");
                ih_filter(d, e, "owner", PGW_FILTER_EQ, owner);
                ih_sort(d, e, "updated_at");
                ck_assert_int_eq(pgw_deps_set_window(d, e, 50, 0, NULL), PGW_OK);
                ih_result(d, ids);
                reg(x, d);
                pgw_deps_free(d);
                subs++;
                nids += 20;
            }
        }
    }
    size_t used = pgwt_alloc_get().live_bytes - base;
    double per_sub = (double)(used - 16 * nids) / (double)subs;
    printf("# memory: %zu subscriptions, %zu result IDs, %zu bytes: %.1f bytes per "
           "subscription + 16 per result ID (%.1f bytes per subscription in all)\n",
           subs, nids, used, per_sub, (double)used / (double)subs);
    ck_assert_uint_le(used, 300 * subs + 16 * nids);
    pgw_index_free(x);
    ck_assert_uint_eq(pgwt_alloc_get().live, 0);
    pgwt_alloc_uninstall();
}
END_TEST

/* ---- window bounds and result kinds (issue 18) ---- */

/* Range groups: runners indexed by a range visit only those whose bounds'
 * coarse keys admit the write's values (exact visit counts). */
START_TEST(index_range_groups)
{
    pgw_index *x = new_index();
    pgw_deps *d[5];
    for (int k = 0; k < 5; k++) { /* qty >= 10k AND qty < 10k + 10 */
        char q[16], lo[8], hi[8];
        snprintf(q, sizeof q, "band%d", k);
        snprintf(lo, sizeof lo, "%d", 10 * k);
        snprintf(hi, sizeof hi, "%d", 10 * k + 10);
        d[k] = ih_deps(&IH_ACME, q);
        size_t t = ih_table(d[k], "items");
        pgw_bound l = {PGW_BOUND_INCLUSIVE, lo}, h = {PGW_BOUND_EXCLUSIVE, hi};
        ck_assert_int_eq(pgw_deps_add_range(d[k], t, "qty", PGW_CMP_INT, &l, &h, NULL), PGW_OK);
        reg(x, d[k]);
    }
    static const struct {
        const char *old, *new_; /* NULL: none; "?": unknown */
        uint64_t visited, marked;
    } cases[] = {
        {NULL, "15", 1, 1},  {NULL, "-3", 0, 0},  {NULL, "49", 1, 1},   {NULL, "50", 1, 0}, /* keys are inclusive */
        {NULL, "?", 5, 5},   {NULL, "x", 5, 5},   {"15", "25", 2, 2},   {"15", "?", 5, 5},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool upd = cases[i].old != NULL;
        pgw_write *w = ih_write(&IH_ACME, "items", upd ? PGW_OP_UPDATE : PGW_OP_INSERT);
        ih_wids(w, "1", false);
        if (upd) {
            ih_wcols(w, "qty", false);
            ih_wval(w, 0, PGW_SIDE_OLD, "qty", cases[i].old);
        }
        if (strcmp(cases[i].new_, "?") != 0)
            ih_wval(w, 0, PGW_SIDE_NEW, "qty", cases[i].new_);
        pgw_index_stats s0 = stats(x);
        ck_assert_uint_eq(match(x, w), cases[i].marked);
        pgw_index_stats s1 = stats(x);
        ck_assert_msg(s1.visited - s0.visited == cases[i].visited,
                      "case %zu: visited %llu, expected %llu", i,
                      (unsigned long long)(s1.visited - s0.visited),
                      (unsigned long long)cases[i].visited);
        drain(x);
        pgw_write_free(w);
    }
    /* NULL fails every range: nothing visited */
    pgw_write *w = ih_write(&IH_ACME, "items", PGW_OP_INSERT);
    ih_wids(w, "1", false);
    ih_wval(w, 0, PGW_SIDE_NEW, "qty", NULL);
    pgw_index_stats s0 = stats(x);
    ck_assert_uint_eq(match(x, w), 0);
    ck_assert_uint_eq(stats(x).visited, s0.visited);
    pgw_write_free(w);
    for (int k = 0; k < 5; k++)
        pgw_deps_free(d[k]);
    pgw_index_free(x);
}
END_TEST

/* ORDER BY due, id LIMIT 3 on tasks, typed. */
static pgw_deps *page_tasks(const char *query)
{
    pgw_deps *d = ih_deps(&IH_ACME, query);
    size_t t = ih_table(d, "tasks");
    ih_cols(d, t, "id,title,due");
    const pgw_sort_key keys[] = {{"due", PGW_CMP_DATE, false, false},
                                 {"id", PGW_CMP_INT, false, false}};
    ck_assert_int_eq(pgw_deps_set_sort_keys(d, t, keys, 2, NULL), PGW_OK);
    ck_assert_int_eq(pgw_deps_set_window(d, t, 3, 0, NULL), PGW_OK);
    return d;
}

static pgw_write *insert_due(const char *id, const char *due)
{
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_INSERT);
    ih_wids(w, id, false);
    ih_wval(w, 0, PGW_SIDE_NEW, "id", id);
    ih_wval(w, 0, PGW_SIDE_NEW, "due", due);
    return w;
}

static pgw_reason index_reason(pgw_index *x, pgw_runner_id r, const pgw_write *w)
{
    pgw_verdict v;
    ck_assert_int_eq(pgw_index_decide(&v, x, r, w, NULL), PGW_OK);
    return v.reason;
}

START_TEST(index_window_bounds)
{
    pgw_index *x = new_index();
    pgw_deps *d1 = page_tasks("tasks.page");
    pgw_runner_id r = reg(x, d1);
    pgw_write *beyond = insert_due("40", "2024-03-01"), *inside = insert_due("41", "2024-01-03");
    const char *first[] = {"2024-01-02", "5"}, *last[] = {"2024-01-05", "9"};
    const pgw_window_bounds b = {first, last, 2, true};
    /* without bounds, both inserts may enter */
    ck_assert_int_eq(index_reason(x, r, beyond), PGW_REASON_INSERT_MAY_ENTER);
    /* acknowledged with bounds (IDs unknown): the row beyond skips */
    ck_assert_int_eq(pgw_index_begin(x, r, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_ack_window(x, r, NULL, 0, &b, NULL), PGW_OK);
    ck_assert_int_eq(state_of(x, r), PGW_RUNNER_CLEAN);
    ck_assert_int_eq(index_reason(x, r, beyond), PGW_REASON_BEYOND_WINDOW);
    ck_assert_uint_eq(match(x, beyond), 0);
    ck_assert_uint_eq(pgw_index_reason_count(x, PGW_REASON_BEYOND_WINDOW), 1);
    ck_assert_uint_eq(match(x, inside), 1);
    /* while it reruns, its bounds are not used */
    pgw_dirty dd;
    ck_assert_int_eq(pgw_index_pop_dirty(&dd, x), PGW_OK);
    ck_assert_int_eq(index_reason(x, r, beyond), PGW_REASON_INSERT_MAY_ENTER);
    /* with IDs and bounds */
    ih_ids ids;
    ih_ids_parse(&ids, "5,7,9");
    ck_assert_int_eq(pgw_index_ack_window(x, r, ids.ids, ids.n, &b, NULL), PGW_OK);
    pgw_runner_info info;
    ck_assert_int_eq(pgw_index_runner(&info, x, r, NULL), PGW_OK);
    ck_assert(info.result_known);
    ck_assert_uint_eq(info.n_result_ids, 3);
    ck_assert_int_eq(index_reason(x, r, beyond), PGW_REASON_BEYOND_WINDOW);
    /* a plain acknowledgement forgets the bounds, as does ack_unknown */
    ck_assert_int_eq(pgw_index_begin(x, r, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_ack(x, r, ids.ids, ids.n, NULL), PGW_OK);
    ck_assert_int_eq(index_reason(x, r, beyond), PGW_REASON_INSERT_MAY_ENTER);
    ck_assert_int_eq(pgw_index_begin(x, r, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_ack_window(x, r, NULL, 0, &b, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_begin(x, r, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_ack_unknown(x, r, NULL), PGW_OK);
    ck_assert_int_eq(index_reason(x, r, beyond), PGW_REASON_INSERT_MAY_ENTER);
    /* refused bounds leave the runner running, its previous result gone */
    pgw_error err;
    ck_assert_int_eq(pgw_index_begin(x, r, NULL), PGW_OK);
    const pgw_window_bounds short_b = {first, last, 1, true};
    ck_assert_int_eq(pgw_index_ack_window(x, r, NULL, 0, &short_b, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "index_ack_window: 1 values per row for 2 sort keys");
    const char *bad[] = {"2024-13-01", "5"};
    const pgw_window_bounds bad_b = {bad, last, 2, true};
    ck_assert_int_eq(pgw_index_ack_window(x, r, NULL, 0, &bad_b, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "index_ack_window: first[0] \"2024-13-01\" (sort key due) "
                                  "does not parse as date");
    ck_assert_int_eq(pgw_index_ack_window(x, r, NULL, 2, &b, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "index_ack_window: ids is NULL with 2 entries");
    ck_assert_int_eq(state_of(x, r), PGW_RUNNER_RUNNING);
    ck_assert_int_eq(pgw_index_ack_window(x, r, NULL, 0, NULL, NULL), PGW_OK); /* = unknown */
    ck_assert_int_eq(index_reason(x, r, beyond), PGW_REASON_INSERT_MAY_ENTER);
    ck_assert_int_eq(pgw_index_ack_window(x, r, NULL, 0, &b, &err), PGW_ESTATE);
    /* a window with no row: deletes skip until the next acknowledgement */
    pgw_write *del = ih_write(&IH_ACME, "tasks", PGW_OP_DELETE);
    ck_assert_int_eq(pgw_index_begin(x, r, NULL), PGW_OK);
    const pgw_window_bounds none = {NULL, NULL, 0, true};
    ck_assert_int_eq(pgw_index_ack_window(x, r, NULL, 0, &none, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "index_ack_window: a window with no row is not full");
    const pgw_window_bounds none_ok = {NULL, NULL, 0, false};
    ck_assert_int_eq(pgw_index_ack_window(x, r, NULL, 0, &none_ok, NULL), PGW_OK);
    ck_assert_int_eq(index_reason(x, r, del), PGW_REASON_WINDOW_EMPTY);
    ck_assert_uint_eq(match(x, del), 0);
    ck_assert_uint_eq(match(x, inside), 1);
    ck_assert_int_eq(pgw_index_pop_dirty(&dd, x), PGW_OK);
    ck_assert_int_eq(index_reason(x, r, del), PGW_REASON_IDS_UNKNOWN); /* rerunning */
    ck_assert_int_eq(pgw_index_ack_unknown(x, r, NULL), PGW_OK);
    ck_assert_int_eq(index_reason(x, r, del), PGW_REASON_IDS_UNKNOWN);
    pgw_write_free(del);
    /* bounds declared at registration are the new runner's */
    pgw_deps *d2 = page_tasks("tasks.page2");
    ck_assert_int_eq(pgw_deps_set_window_bounds(d2, &b, NULL), PGW_OK);
    pgw_runner_id r2 = reg(x, d2);
    ck_assert_int_eq(index_reason(x, r2, beyond), PGW_REASON_BEYOND_WINDOW);
    /* an undeclared runner has no window */
    pgw_deps *du = ih_deps(&IH_ACME, "legacy");
    pgw_runner_id ru = reg(x, du);
    ck_assert_int_eq(pgw_index_begin(x, ru, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_ack_window(x, ru, NULL, 0, &b, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "index_ack_window: an undeclared runner has no window");
    pgw_write_free(beyond);
    pgw_write_free(inside);
    pgw_deps_free(d1);
    pgw_deps_free(d2);
    pgw_deps_free(du);
    pgw_index_free(x);
}
END_TEST

START_TEST(index_result_kinds)
{
    /* sum(x) over tasks: its IDs are ignored however it is acknowledged */
    pgw_index *x = new_index();
    pgw_deps *d = ih_deps(&IH_ACME, "tasks.sum");
    size_t t = ih_table(d, "tasks");
    ih_cols(d, t, "estimate");
    ck_assert_int_eq(pgw_deps_set_result_kind(d, PGW_RESULT_AGGREGATE, NULL), PGW_OK);
    ih_result(d, "1,2");
    pgw_runner_id r = reg(x, d);
    pgw_runner_info info;
    ck_assert_int_eq(pgw_index_runner(&info, x, r, NULL), PGW_OK);
    ck_assert(!info.result_known);
    pgw_write *del = ih_write(&IH_ACME, "tasks", PGW_OP_DELETE);
    ih_wids(del, "3", false);
    ck_assert_int_eq(index_reason(x, r, del), PGW_REASON_DELETE_IN_WINDOW);
    ih_ids ids;
    ih_ids_parse(&ids, "1,2");
    ck_assert_int_eq(pgw_index_begin(x, r, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_ack(x, r, ids.ids, ids.n, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_runner(&info, x, r, NULL), PGW_OK);
    ck_assert(!info.result_known);
    ck_assert_int_eq(index_reason(x, r, del), PGW_REASON_DELETE_IN_WINDOW);
    /* the same declaration as a list is another runner, and uses its IDs */
    pgw_deps *l = ih_deps(&IH_ACME, "tasks.sum");
    t = ih_table(l, "tasks");
    ih_cols(l, t, "estimate");
    ck_assert_int_eq(pgw_deps_set_result_kind(l, PGW_RESULT_LIST, NULL), PGW_OK);
    ih_result(l, "1,2");
    pgw_runner_id rl = reg(x, l);
    ck_assert_uint_ne(rl, r);
    ck_assert_int_eq(index_reason(x, rl, del), PGW_REASON_ROWS_DISJOINT);
    /* a list that reads no column (SELECT FROM tasks) uses them too */
    pgw_deps *e = ih_deps(&IH_ACME, "tasks.exists");
    t = ih_table(e, "tasks");
    ih_cols(e, t, "");
    ih_result(e, "1,2");
    pgw_runner_id re = reg(x, e);
    ck_assert_int_eq(index_reason(x, re, del), PGW_REASON_DELETE_IN_WINDOW); /* unspecified */
    ck_assert_int_eq(pgw_deps_set_result_kind(e, PGW_RESULT_LIST, NULL), PGW_OK);
    pgw_runner_id re2 = reg(x, e);
    ck_assert_uint_ne(re2, re);
    ck_assert_int_eq(index_reason(x, re2, del), PGW_REASON_ROWS_DISJOINT);
    pgw_write_free(del);
    pgw_deps_free(d);
    pgw_deps_free(l);
    pgw_deps_free(e);
    pgw_index_free(x);
}
END_TEST

/* Register, ack and the constructor fail cleanly at every allocation: the
 * index is unchanged (same counters, same verdicts afterwards), nothing
 * leaks. */
START_TEST(index_enomem)
{
    pgwt_alloc_install();
    pgw_index *x = new_index();
    pgw_deps *seed = open_tasks(&IH_ACME, "seed");
    ih_result(seed, "1,2,3");
    pgw_runner_id rs = reg(x, seed);
    pgw_deps *shapes[7];
    shapes[0] = open_tasks(&IH_ACME, "same scope, same bucket");
    ih_result(shapes[0], "4,5,6");
    shapes[1] = open_tasks(&IH_GLOBEX, "new scope");
    ih_result(shapes[1], "1");
    shapes[2] = ih_deps(&IH_ACME, "two tables");
    ih_table(shapes[2], "projects");
    ih_filter(shapes[2], 0, "kind", PGW_FILTER_IN, "a,b,c");
    ih_table(shapes[2], "members");
    ih_result(shapes[2], "7|x,8|y");
    shapes[3] = ih_deps(&IH_LANDLORD, "undeclared");
    shapes[4] = open_tasks(&IH_ACME, "seed"); /* joins the seed runner: no allocation */
    ih_result(shapes[4], "1,2,3");
    shapes[5] = open_tasks(&IH_ACME, "seed"); /* the seed, reading the clock: a new runner */
    ih_result(shapes[5], "1,2,3");
    ck_assert_int_eq(pgw_deps_set_time_dependent(shapes[5], true, NULL), PGW_OK);
    shapes[6] = ih_deps(&IH_ACME, "a range group"); /* its range keys, its bounds */
    ih_table(shapes[6], "tasks");
    const pgw_bound lo = {PGW_BOUND_INCLUSIVE, "2024-01-01"};
    const pgw_sort_key sk[] = {{"due", PGW_CMP_DATE, false, false}};
    const char *bv[] = {"2024-02-01"};
    const pgw_window_bounds wb = {bv, bv, 1, true};
    ck_assert_int_eq(pgw_deps_add_range(shapes[6], 0, "due", PGW_CMP_DATE, &lo, NULL, NULL),
                     PGW_OK);
    ck_assert_int_eq(pgw_deps_set_sort_keys(shapes[6], 0, sk, 1, NULL), PGW_OK);
    ck_assert_int_eq(pgw_deps_set_window(shapes[6], 0, 5, 0, NULL), PGW_OK);
    ck_assert_int_eq(pgw_deps_set_window_bounds(shapes[6], &wb, NULL), PGW_OK);
    pgw_write *probe = ih_write(&IH_ACME, "tasks", PGW_OP_DELETE);
    ih_wids(probe, "2", false);
    for (int k = 0; k < 7; k++) {
        size_t n;
        for (n = 1;; n++) {
            pgw_index_stats s0 = stats(x);
            size_t live0 = pgwt_alloc_get().live;
            pgw_runner_id id = 12345;
            pgwt_alloc_fail_at(n);
            int rc = pgw_index_register(&id, x, shapes[k], NULL);
            bool failed = pgwt_alloc_failed();
            pgwt_alloc_fail_at(0);
            if (!failed) {
                ck_assert_int_eq(rc, PGW_OK);
                ck_assert_int_eq(pgw_index_unregister(x, id, NULL), PGW_OK);
                break;
            }
            ck_assert_int_eq(rc, PGW_ENOMEM);
            ck_assert_uint_eq(id, 12345);
            pgw_index_stats s1 = stats(x);
            ck_assert_uint_eq(s1.runners, s0.runners);
            ck_assert_uint_eq(s1.subscriptions, s0.subscriptions);
            ck_assert_uint_eq(s1.scopes, s0.scopes);
            ck_assert_uint_eq(s1.buckets, s0.buckets);
            ck_assert_uint_eq(s1.time_dependent, s0.time_dependent);
            /* Only table capacity may have grown. */
            ck_assert_uint_le(pgwt_alloc_get().live, live0 + 8);
            /* The index still works. */
            ck_assert_uint_eq(match(x, probe), 1);
            pgw_dirty dd;
            ck_assert_int_eq(pgw_index_pop_dirty(&dd, x), PGW_OK);
            ck_assert_uint_eq(dd.runner, rs);
            ih_ids same;
            ih_ids_parse(&same, "1,2,3");
            ck_assert_int_eq(pgw_index_ack(x, rs, same.ids, same.n, NULL), PGW_OK);
        }
        if (k == 4)
            ck_assert_uint_eq(n, 1); /* joining a runner allocates nothing */
    }
    /* ack: fails with ENOMEM, stays running, then succeeds. */
    ck_assert_int_eq(pgw_index_begin(x, rs, NULL), PGW_OK);
    ih_ids four;
    ih_ids_parse(&four, "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20");
    size_t n;
    for (n = 1;; n++) {
        pgwt_alloc_fail_at(n);
        int rc = pgw_index_ack(x, rs, four.ids, four.n, NULL);
        bool failed = pgwt_alloc_failed();
        pgwt_alloc_fail_at(0);
        if (!failed) {
            ck_assert_int_eq(rc, PGW_OK);
            break;
        }
        ck_assert_int_eq(rc, PGW_ENOMEM);
        ck_assert_int_eq(state_of(x, rs), PGW_RUNNER_RUNNING);
    }
    ck_assert_int_eq(state_of(x, rs), PGW_RUNNER_CLEAN);
    ck_assert_uint_eq(match(x, probe), 1);
    /* ack_window: the same, with the bounds taken only on success */
    pgw_deps *dp = page_tasks("tasks.page");
    pgw_runner_id rp = reg(x, dp);
    const char *first[] = {"2024-01-02", "5"}, *last[] = {"2024-01-05", "9"};
    const pgw_window_bounds b = {first, last, 2, true};
    pgw_write *beyond = insert_due("40", "2024-03-01");
    ck_assert_int_eq(pgw_index_begin(x, rp, NULL), PGW_OK);
    for (n = 1;; n++) {
        pgwt_alloc_fail_at(n);
        int rc = pgw_index_ack_window(x, rp, four.ids, four.n, &b, NULL);
        bool failed = pgwt_alloc_failed();
        pgwt_alloc_fail_at(0);
        if (!failed) {
            ck_assert_int_eq(rc, PGW_OK);
            break;
        }
        ck_assert_int_eq(rc, PGW_ENOMEM);
        ck_assert_int_eq(state_of(x, rp), PGW_RUNNER_RUNNING);
        ck_assert_int_eq(index_reason(x, rp, beyond), PGW_REASON_INSERT_MAY_ENTER);
    }
    ck_assert_uint_gt(n, 1);
    ck_assert_int_eq(index_reason(x, rp, beyond), PGW_REASON_BEYOND_WINDOW);
    pgw_write_free(beyond);
    ck_assert_int_eq(pgw_index_unregister(x, rp, NULL), PGW_OK);
    pgw_deps_free(dp);
    /* the constructor */
    for (n = 1;; n++) {
        pgw_index *y = (pgw_index *)0x1;
        pgw_index_options o = PGW_INDEX_OPTIONS_INIT;
        o.expected_runners = 1000;
        pgwt_alloc_fail_at(n);
        int rc = pgw_index_new(&y, &o, NULL);
        bool failed = pgwt_alloc_failed();
        pgwt_alloc_fail_at(0);
        if (!failed) {
            ck_assert_int_eq(rc, PGW_OK);
            pgw_index_free(y);
            break;
        }
        ck_assert_int_eq(rc, PGW_ENOMEM);
        ck_assert_ptr_eq(y, (pgw_index *)0x1);
    }
    pgw_write_free(probe);
    for (int k = 0; k < 7; k++)
        pgw_deps_free(shapes[k]);
    pgw_deps_free(seed);
    pgw_index_free(x);
    ck_assert_uint_eq(pgwt_alloc_get().live, 0);
    pgwt_alloc_uninstall();
}
END_TEST

/* match, reset, pop, begin, ack_unknown, unregister and the clock never
 * allocate. */
START_TEST(match_allocates_nothing)
{
    pgwt_alloc_install();
    pgw_index *x = new_index();
    pgw_deps *d = open_tasks(&IH_ACME, "a");
    ih_result(d, "1");
    pgw_runner_id r = reg(x, d);
    ck_assert_int_eq(pgw_index_clock(NULL, x, 0, NULL), PGW_OK);
    pgw_deps *dt = open_tasks(&IH_GLOBEX, "timed");
    ck_assert_int_eq(pgw_deps_set_time_dependent(dt, true, NULL), PGW_OK);
    pgw_runner_id rt = reg(x, dt);
    pgw_write *w = ih_write(&IH_ACME, "tasks", PGW_OP_UPDATE);
    ih_wids(w, "1", false);
    ih_wcols(w, "status", false);
    pgwt_alloc_stats a0 = pgwt_alloc_get();
    pgwt_alloc_fail_at(1); /* any allocation would fail */
    ck_assert_uint_eq(match(x, w), 1);
    pgw_dirty dd;
    ck_assert_int_eq(pgw_index_pop_dirty(&dd, x), PGW_OK);
    ck_assert_int_eq(pgw_index_ack_unknown(x, r, NULL), PGW_OK);
    pgw_write *ww[2] = {w, w};
    size_t outs[2];
    ck_assert_int_eq(pgw_index_match_batch(outs, x, ww, 2, NULL), PGW_OK);
    ck_assert_uint_eq(outs[0], 1); /* the second is coalesced */
    ck_assert_uint_eq(outs[1], 0);
    ck_assert_int_eq(pgw_index_pop_dirty(&dd, x), PGW_OK);
    ck_assert_int_eq(pgw_index_reset_scope(NULL, x, &IH_ACME, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_ack_unknown(x, r, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_pop_dirty(&dd, x), PGW_OK);
    ck_assert_int_eq(pgw_index_ack_unknown(x, r, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_begin(x, r, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_unregister(x, r, NULL), PGW_OK);
    int64_t due = 0;
    ck_assert_int_eq(pgw_index_clock_next(&due, x), PGW_OK);
    ck_assert_int_eq(due, 1000);
    size_t n = 0;
    ck_assert_int_eq(pgw_index_clock(&n, x, 1000, NULL), PGW_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(pgw_index_pop_dirty(&dd, x), PGW_OK);
    ck_assert_int_eq(dd.reason, PGW_REASON_CLOCK);
    ck_assert_int_eq(pgw_index_clock(&n, x, 2000, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_ack_unknown(x, rt, NULL), PGW_OK);
    ck_assert_int_eq(pgw_index_unregister(x, rt, NULL), PGW_OK);
    ck_assert(!pgwt_alloc_failed());
    pgwt_alloc_fail_at(0);
    ck_assert_uint_eq(pgwt_alloc_get().calls, a0.calls);
    pgw_write_free(w);
    pgw_deps_free(d);
    pgw_deps_free(dt);
    pgw_index_free(x);
    pgwt_alloc_uninstall();
}
END_TEST

START_TEST(index_bad_arguments)
{
    pgw_error err;
    pgw_index *x = (pgw_index *)0x1;
    pgw_index_options o = {3, 0, 1000};
    ck_assert_int_eq(pgw_index_new(&x, &o, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message,
                     "index_new: options version 3 is not 1 to 2 (use PGW_INDEX_OPTIONS_INIT)");
    ck_assert_ptr_eq(x, (pgw_index *)0x1);
    o.version = 0;
    ck_assert_int_eq(pgw_index_new(&x, &o, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message,
                     "index_new: options version 0 is not 1 to 2 (use PGW_INDEX_OPTIONS_INIT)");
    o.version = 2;
    o.clock_interval_ms = 0;
    ck_assert_int_eq(pgw_index_new(&x, &o, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message,
                     "index_new: clock_interval_ms 0 is not positive (milliseconds, >= 1)");
    ck_assert_ptr_eq(x, (pgw_index *)0x1);
    x = new_index();
    pgw_runner_id id = 7;
    ck_assert_int_eq(pgw_index_register(&id, x, NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "index_register: deps is NULL");
    ck_assert_uint_eq(id, 7);
    ck_assert_int_eq(pgw_index_match(NULL, x, NULL, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "index_match: write is NULL");
    ck_assert_int_eq(pgw_index_match_batch(NULL, NULL, NULL, 0, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "index_match_batch: index is NULL");
    ck_assert_int_eq(pgw_index_match_batch(NULL, x, NULL, 2, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "index_match_batch: writes is NULL (n = 2)");
    ck_assert_int_eq(pgw_index_match_batch(NULL, x, NULL, 0, &err), PGW_OK);
    ck_assert_int_eq(pgw_index_unregister(x, 0, &err), PGW_ENOTFOUND);
    ck_assert_str_eq(err.message, "index_unregister: runner 0 is not registered");
    ck_assert_int_eq(pgw_index_ack(x, 42, NULL, 0, &err), PGW_ENOTFOUND);
    pgw_dirty dd;
    ck_assert_int_eq(pgw_index_pop_dirty(NULL, x), PGW_EINVAL);
    ck_assert_int_eq(pgw_index_pop_dirty(&dd, x), PGW_ENOTFOUND);
    pgw_index_stats s = PGW_INDEX_STATS_INIT;
    s.version = 9;
    ck_assert_int_eq(pgw_index_stats_get(&s, x), PGW_EINVAL);
    ck_assert_uint_eq(pgw_index_reason_count(x, (pgw_reason)99), 0);
    ck_assert_uint_eq(pgw_index_reason_count(NULL, PGW_REASON_TRUNCATE), 0);
    pgw_deps *d = open_tasks(&IH_ACME, "a");
    pgw_runner_id r = reg(x, d);
    ck_assert_int_eq(pgw_index_begin(x, r, NULL), PGW_OK);
    pgw_rowid bad = {NULL, 0};
    ck_assert_int_eq(pgw_index_ack(x, r, &bad, 1, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "index_ack: ids[0] has 0 parts (1..32 allowed)");
    ck_assert_int_eq(state_of(x, r), PGW_RUNNER_RUNNING);
    pgw_write *w = ih_write(&IH_GLOBEX, "tasks", PGW_OP_INSERT);
    pgw_write *aw = ih_write(&IH_ACME, "tasks", PGW_OP_INSERT);
    pgw_write *three[3] = {aw, aw, NULL};
    size_t outs[3] = {7, 7, 7};
    uint64_t writes_before = stats(x).writes;
    ck_assert_int_eq(pgw_index_match_batch(outs, x, three, 3, &err), PGW_EINVAL);
    ck_assert_str_eq(err.message, "index_match_batch: writes[2] is NULL");
    ck_assert_uint_eq(stats(x).writes, writes_before); /* nothing matched */
    ck_assert_uint_eq(outs[0], 7);
    ck_assert_uint_eq(outs[1], 7);
    pgw_write_free(aw);
    pgw_verdict v;
    ck_assert_int_eq(pgw_index_decide(&v, x, r, w, NULL), PGW_OK);
    ck_assert(!v.refresh && v.reason == PGW_REASON_SCOPE_DISJOINT);
    pgw_write_free(w);
    pgw_deps_free(d);
    pgw_index_free(x);
    pgw_index_free(NULL);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("index");
    TCase *tc = tcase_create("scenarios");
    tcase_add_test(tc, tenant_isolation);
    tcase_add_test(tc, truncate_refreshes_scope);
    tcase_add_test(tc, ddl_marks_every_reader);
    tcase_add_test(tc, undeclared_in_index);
    tcase_add_test(tc, two_updates_evaluated);
    suite_add_tcase(s, tc);
    tc = tcase_create("index");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, shared_runners);
    tcase_add_test(tc, rerun_protocol);
    tcase_add_test(tc, reset_scope);
    tcase_add_test(tc, value_index_visits);
    tcase_add_test(tc, id_index_visits);
    tcase_add_test(tc, ack_starts_tracking);
    tcase_add_test(tc, aggregate_ack);
    tcase_add_test(tc, value_index_layouts);
    tcase_add_test(tc, many_groups);
    tcase_add_test(tc, index_equals_decide);
    tcase_add_test(tc, match_batch_equals_sequential);
    tcase_add_test(tc, batch_many_candidates);
    tcase_add_test(tc, memory_per_subscription);
    tcase_add_test(tc, index_enomem);
    tcase_add_test(tc, index_window_bounds);
    tcase_add_test(tc, index_range_groups);
    tcase_add_test(tc, index_result_kinds);
    tcase_add_test(tc, match_allocates_nothing);
    tcase_add_test(tc, index_bad_arguments);
    suite_add_tcase(s, tc);
    tc = tcase_create("clock");
    tcase_add_test(tc, clock_interval);
    tcase_add_test(tc, clock_unknown_base);
    tcase_add_test(tc, clock_order);
    tcase_add_test(tc, clock_versions_and_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return pgwt_main(suite());
}
