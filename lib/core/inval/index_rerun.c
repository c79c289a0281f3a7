/*
 * lib/core/inval/index_rerun.c — the reverse index's runner states and the
 * rerun protocol (index.h): the dirty queue and the volatile lists, pop,
 * begin, ack, and introspection (decide, runner info, stats). The
 * structures are index_internal.h's.
 * SPDX-License-Identifier: MIT
 */
#include "index_internal.h"

#include <stdio.h>

/* ------------------------------------------------------------------ */
/* runner lists                                                        */

/* The head of the volatile list a runner belongs on: its first table's
 * bucket (the one whose groups assume its result IDs). */
static uint32_t *vol_head(pgw_index *x, const irunner *r)
{
    return &BUCKET(x, RN_POST(r)[0].bucket)->vol_head;
}

static void q_unlink(pgw_index *x, irunner *r, uint32_t *head, bool dirty_queue)
{
    if (r->q_prev != NONE)
        RUNNER(x, r->q_prev)->q_next = r->q_next;
    else
        *head = r->q_next;
    if (r->q_next != NONE) {
        RUNNER(x, r->q_next)->q_prev = r->q_prev;
    } else if (dirty_queue) {
        x->q_tail = r->q_prev;
        x->q_tail_r = r->q_prev != NONE ? RUNNER(x, r->q_prev) : NULL;
    }
    r->q_prev = r->q_next = NONE;
}

static void q_push_dirty(pgw_index *x, irunner *r)
{
    r->q_next = NONE;
    r->q_prev = x->q_tail;
    if (x->q_tail != NONE)
        x->q_tail_r->q_next = r->self;
    else
        x->q_head = r->self;
    x->q_tail = r->self;
    x->q_tail_r = r;
}

static void vol_push(pgw_index *x, irunner *r)
{
    uint32_t *head = vol_head(x, r);
    r->q_prev = NONE;
    r->q_next = *head;
    if (*head != NONE)
        RUNNER(x, *head)->q_prev = r->self;
    *head = r->self;
}

/* Whether a runner belongs on its volatile list: decided with unknown
 * result IDs although its groups assume known ones. */
static bool vol_member(const irunner *r)
{
    return r->state == ST_RUN || (r->state == ST_CLEAN && r->tracked && !r->rids_known);
}

/* Leaves whatever list the runner is on (by state). */
void pgwi_index_lists_leave(pgw_index *x, irunner *r)
{
    if (r->state == ST_DIRTY)
        q_unlink(x, r, &x->q_head, true);
    else if (vol_member(r))
        q_unlink(x, r, vol_head(x, r), false);
}

/* Enters the list its (new) state asks for. */
static void lists_enter(pgw_index *x, irunner *r)
{
    if (r->state == ST_DIRTY)
        q_push_dirty(x, r);
    else if (vol_member(r))
        vol_push(x, r);
}

/* Counts a state change in the dirty and running totals. */
static void count_state(pgw_index *x, uint8_t from, uint8_t to)
{
    if ((from == ST_DIRTY) != (to == ST_DIRTY))
        x->n_dirty += to == ST_DIRTY ? 1 : (uint64_t)-1;
    bool was_run = from == ST_RUN || from == ST_RUN_DIRTY;
    bool is_run = to == ST_RUN || to == ST_RUN_DIRTY;
    if (was_run != is_run)
        x->n_running += is_run ? 1 : (uint64_t)-1;
}

void pgwi_index_set_state(pgw_index *x, irunner *r, uint8_t st)
{
    uint8_t from = r->state;
    count_state(x, from, st);
    pgwi_index_lists_leave(x, r);
    r->state = st;
    lists_enter(x, r);
    if (r->timed)
        pgwi_index_clock_follow(x, r, from, st);
}

/* ------------------------------------------------------------------ */
/* the rerun protocol                                                  */

int pgw_index_pop_dirty(pgw_dirty *out, pgw_index *x)
{
    if (!out || !x)
        return PGW_EINVAL;
    uint32_t k = x->q_head;
    if (k == NONE)
        return PGW_ENOTFOUND;
    irunner *r = RUNNER(x, k);
    pgwi_index_set_state(x, r, ST_RUN);
    out->runner = runner_id(r);
    out->reason = (pgw_reason)r->reason;
    return PGW_OK;
}

int pgw_index_begin(pgw_index *x, pgw_runner_id id, pgw_error *err)
{
    if (!x)
        return pgwi_error(err, PGW_EINVAL, "index_begin: index is NULL");
    uint32_t k = 0;
    int rc;
    if ((rc = pgwi_index_runner_at(&k, x, id, "index_begin", err)) < 0)
        return rc;
    irunner *r = RUNNER(x, k);
    if (r->state == ST_RUN || r->state == ST_RUN_DIRTY)
        return pgwi_error(err, PGW_ESTATE, "index_begin: runner %llu is already running",
                          (unsigned long long)id);
    pgwi_index_set_state(x, r, ST_RUN);
    return PGW_OK;
}

static int ack_check(uint32_t *k, pgw_index *x, pgw_runner_id id, const char *fn,
                     pgw_error *err)
{
    if (!x)
        return pgwi_error(err, PGW_EINVAL, "%s: index is NULL", fn);
    int rc;
    if ((rc = pgwi_index_runner_at(k, x, id, fn, err)) < 0)
        return rc;
    const irunner *r = RUNNER(x, *k);
    if (r->state != ST_RUN && r->state != ST_RUN_DIRTY)
        return pgwi_error(err, PGW_ESTATE, "%s: runner %llu is not running (pop or begin it)",
                          fn, (unsigned long long)id);
    return PGW_OK;
}

/* Ends a rerun with n result IDs (known) or none (unknown). nr, regroup:
 * what pgwi_index_rids_reserve() gave (else NULL, NONE); the room in the
 * bucket is reserved. Cannot fail. */
static void ack_finish(pgw_index *x, irunner *r, const uint32_t *fps, uint32_t n, bool known,
                       irunner *nr, uint32_t regroup)
{
    uint8_t st = r->state == ST_RUN_DIRTY ? ST_DIRTY : ST_CLEAN;
    pgwi_index_lists_leave(x, r); /* on no list while it moves */
    r = pgwi_index_rids_set(x, r, fps, n, known, nr, regroup);
    count_state(x, r->state, st);
    r->state = st;
    lists_enter(x, r);
}

/* Replaces runner r's window bounds with blk, pgwi_bounds_make()'s for
 * bounds b (NULL for a window that holds no row); b NULL: none. */
static void set_bounds(irunner *r, const pgwi_str **blk, const pgw_window_bounds *b)
{
    pgwi_free((void *)*RN_BOUNDS(r));
    *RN_BOUNDS(r) = blk;
    r->bounds_full = b && b->full; /* pgwi_bounds_make() refuses it without rows or a limit */
    r->window_empty = b && !blk;
}

/* Acknowledges a rerun of runner id with its result IDs (known or not)
 * and window bounds (b, or NULL for none). Everything that can fail comes
 * before the runner changes. */
static int ack_result(pgw_index *x, pgw_runner_id id, const pgw_rowid *ids, size_t n_ids,
                      bool known, const pgw_window_bounds *b, const char *fn, pgw_error *err)
{
    uint32_t k = 0;
    int rc;
    if ((rc = ack_check(&k, x, id, fn, err)) < 0)
        return rc;
    if (!ids && n_ids)
        return pgwi_error(err, PGW_EINVAL, "%s: ids is NULL with %zu entries", fn, n_ids);
    if (n_ids > UINT32_MAX / 2)
        return pgwi_error(err, PGW_ELIMIT, "%s: too many IDs", fn);
    char what[48];
    snprintf(what, sizeof what, "%s: ids", fn);
    for (size_t i = 0; i < n_ids; i++)
        if ((rc = pgwi_rowid_check(&ids[i], what, i, err)) < 0)
            return rc;
    irunner *r = RUNNER(x, k), *nr = NULL;
    const pgwi_str **blk = NULL;
    if (b) {
        if (r->n_tables == 0)
            return pgwi_error(err, PGW_EINVAL, "%s: an undeclared runner has no window", fn);
        if ((rc = pgwi_bounds_make(&blk, &RN_TABLES(r)[0], b, fn, err)) < 0)
            return rc;
    }
    if (!known || (r->n_tables && !pgwi_lists_rows(r->result_kind, &RN_TABLES(r)[0]))) {
        /* Unknown IDs, or an aggregate's, whose result lists no rows. */
        set_bounds(r, blk, b);
        ack_finish(x, r, NULL, 0, false, NULL, NONE);
        return PGW_OK;
    }
    uint32_t *fps = NULL;
    uint32_t n = 0;
    if (n_ids) {
        fps = pgwi_calloc(n_ids, sizeof *fps);
        if (!fps) {
            pgwi_free((void *)blk);
            return pgwi_enomem(err);
        }
        for (size_t i = 0; i < n_ids; i++)
            fps[i] = pgwi_rid_fp(ids[i].parts, ids[i].n_parts);
        n = pgwi_fps_sort_unique(fps, n_ids);
    }
    uint32_t regroup = NONE;
    if ((rc = pgwi_index_rids_reserve(&nr, &regroup, x, r, n)) < 0) {
        pgwi_free(fps);
        pgwi_free((void *)blk);
        return rc == PGW_ENOMEM ? pgwi_enomem(err)
                                : pgwi_error(err, rc, "%s: index limit reached", fn);
    }
    set_bounds(r, blk, b);
    ack_finish(x, r, fps, n, true, nr, regroup);
    pgwi_free(fps);
    return PGW_OK;
}

int pgw_index_ack(pgw_index *x, pgw_runner_id id, const pgw_rowid *ids, size_t n_ids,
                  pgw_error *err)
{
    return ack_result(x, id, ids, n_ids, true, NULL, "index_ack", err);
}

int pgw_index_ack_window(pgw_index *x, pgw_runner_id id, const pgw_rowid *ids, size_t n_ids,
                         const pgw_window_bounds *bounds, pgw_error *err)
{
    return ack_result(x, id, ids, n_ids, ids != NULL, bounds, "index_ack_window", err);
}

int pgw_index_ack_unknown(pgw_index *x, pgw_runner_id id, pgw_error *err)
{
    uint32_t k = 0;
    int rc;
    if ((rc = ack_check(&k, x, id, "index_ack_unknown", err)) < 0)
        return rc;
    set_bounds(RUNNER(x, k), NULL, NULL);
    ack_finish(x, RUNNER(x, k), NULL, 0, false, NULL, NONE);
    return PGW_OK;
}

/* ------------------------------------------------------------------ */
/* introspection                                                       */

int pgw_index_decide(pgw_verdict *out, const pgw_index *x, pgw_runner_id id,
                     const pgw_write *w, pgw_error *err)
{
    if (!out || !x || !w)
        return pgwi_error(err, PGW_EINVAL, "index_decide: %s is NULL",
                          !out ? "out" : !x ? "index" : "write");
    uint32_t k = 0;
    int rc;
    if ((rc = pgwi_index_runner_at(&k, x, id, "index_decide", err)) < 0)
        return rc;
    const irunner *r = RUNNER(x, k);
    if (!pgwi_scope_eq(x->sc[r->scope].sp, &w->scope)) {
        out->refresh = false;
        out->reason = PGW_REASON_SCOPE_DISJOINT;
        return PGW_OK;
    }
    pgwi_dview dv;
    pgwi_runner_view(&dv, r);
    pgwi_wmemo m;
    pgwi_wmemo_init(&m, w);
    *out = pgwi_decide_view(&dv, r->state == ST_RUN, w, &m);
    return PGW_OK;
}

int pgw_index_runner(pgw_runner_info *out, const pgw_index *x, pgw_runner_id id,
                     pgw_error *err)
{
    if (!out || !x)
        return pgwi_error(err, PGW_EINVAL, "index_runner: %s is NULL", out ? "index" : "out");
    uint32_t k = 0;
    int rc;
    if ((rc = pgwi_index_runner_at(&k, x, id, "index_runner", err)) < 0)
        return rc;
    const irunner *r = RUNNER(x, k);
    out->refs = r->refs;
    out->state = (pgw_runner_state)r->state;
    out->reason = (pgw_reason)r->reason;
    out->result_known = r->rids_known;
    out->n_result_ids = r->n_rids;
    out->query = r->query->s;
    return PGW_OK;
}

int pgw_index_stats_get(pgw_index_stats *out, const pgw_index *x)
{
    if (!out || !x || out->version < 1 || out->version > PGW_INDEX_STATS_VERSION)
        return PGW_EINVAL;
    out->subscriptions = x->subscriptions;
    out->runners = x->live_runners;
    out->scopes = x->live_scopes;
    out->buckets = x->live_buckets;
    out->dirty = x->n_dirty;
    out->running = x->n_running;
    out->writes = x->writes;
    out->visited = x->visited;
    out->marked = x->marked;
    out->coalesced = x->coalesced;
    if (out->version >= 2) {
        out->time_dependent = x->n_timed;
        out->clocked = x->clocked;
    }
    return PGW_OK;
}

uint64_t pgw_index_reason_count(const pgw_index *x, pgw_reason reason)
{
    if (!x || (int)reason < 0 || (int)reason >= PGW_REASON_COUNT)
        return 0;
    return x->by_reason[reason];
}
