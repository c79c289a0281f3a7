/*
 * lib/core/inval/index_clock.c — the reverse index's clock (index.h, "Time-
 * dependent runners"): the list of time-dependent runners waiting for their
 * interval, pgw_index_clock() and pgw_index_clock_next(). The core reads no
 * clock: every time is one the host passed in. The structures are
 * index_internal.h's.
 * SPDX-License-Identifier: MIT
 */
#include "index_internal.h"

/* Waits from the index's time: appended at the tail, which keeps the list
 * in the order of base times (the index's time never goes back). */
static void t_append(pgw_index *x, irunner *r)
{
    itime *t = RN_TIME(r);
    t->base = x->clock_now;
    t->next = NONE;
    t->prev = x->t_tail;
    if (x->t_tail != NONE)
        RN_TIME(RUNNER(x, x->t_tail))->next = r->self;
    else
        x->t_head = r->self;
    x->t_tail = r->self;
    t->linked = true;
}

static void t_unlink(pgw_index *x, irunner *r)
{
    itime *t = RN_TIME(r);
    if (!t->linked)
        return;
    if (t->prev != NONE)
        RN_TIME(RUNNER(x, t->prev))->next = t->next;
    else
        x->t_head = t->next;
    if (t->next != NONE)
        RN_TIME(RUNNER(x, t->next))->prev = t->prev;
    else
        x->t_tail = t->prev;
    t->prev = t->next = NONE;
    t->linked = false;
}

void pgwi_index_clock_register(pgw_index *x, irunner *r)
{
    x->n_timed++;
    t_append(x, r);
}

void pgwi_index_clock_unregister(pgw_index *x, irunner *r)
{
    t_unlink(x, r);
    x->n_timed--;
}

void pgwi_index_clock_follow(pgw_index *x, irunner *r, uint8_t from, uint8_t to)
{
    if (to == ST_DIRTY || to == ST_RUN_DIRTY) {
        t_unlink(x, r); /* marked: it reruns anyway */
    } else if (to == ST_RUN && from != ST_RUN) {
        t_unlink(x, r); /* a rerun starts: its result is taken now */
        t_append(x, r);
    }
    /* RUNNING → CLEAN (an ack) keeps the rerun's base; DIRTY → CLEAN only
     * happens on the way out (unregistration). */
}

/* When a waiting runner is due: its base + the interval (INT64_MAX at
 * most, so that the last time a host can pass reaches it); 0 for an unknown
 * base (taken before the index had a time: due at once). */
static int64_t t_due(const pgw_index *x, const itime *t)
{
    if (t->base < 0)
        return 0;
    return t->base > INT64_MAX - x->clock_interval ? INT64_MAX : t->base + x->clock_interval;
}

int pgw_index_clock(size_t *out, pgw_index *x, int64_t now_ms, pgw_error *err)
{
    if (!x)
        return pgwi_error(err, PGW_EINVAL, "index_clock: index is NULL");
    if (now_ms < 0)
        return pgwi_error(err, PGW_EINVAL,
                          "index_clock: now_ms %lld is negative (milliseconds of a "
                          "monotonic clock, such as CLOCK_MONOTONIC)",
                          (long long)now_ms);
    if (now_ms < x->clock_now)
        return pgwi_error(err, PGW_EINVAL,
                          "index_clock: now_ms %lld is before %lld, the time of an earlier "
                          "call (the clock must not go back: use a monotonic clock)",
                          (long long)now_ms, (long long)x->clock_now);
    x->clock_now = now_ms;
    size_t n = 0;
    while (x->t_head != NONE) {
        irunner *r = RUNNER(x, x->t_head);
        if (now_ms < t_due(x, RN_TIME(r)))
            break; /* and so are the runners after it */
        /* Waiting runners are CLEAN or RUNNING: newly marked, as by a
         * write (index_match.c, mark()); the move takes it off the list. */
        x->by_reason[PGW_REASON_CLOCK]++;
        r->reason = PGW_REASON_CLOCK;
        pgwi_index_set_state(x, r, r->state == ST_RUN ? ST_RUN_DIRTY : ST_DIRTY);
        x->marked++;
        x->clocked++;
        n++;
    }
    if (out)
        *out = n;
    return PGW_OK;
}

int pgw_index_clock_next(int64_t *out, const pgw_index *x)
{
    if (!out || !x)
        return PGW_EINVAL;
    if (x->t_head == NONE)
        return PGW_ENOTFOUND;
    *out = t_due(x, RN_TIME(RUNNER(x, x->t_head)));
    return PGW_OK;
}
