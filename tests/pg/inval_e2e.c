/*
 * tests/pg/inval_e2e.c — see inval_e2e.h.
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE
#include "inval_e2e.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pgw_test.h"

const char *const e2e_tables[E2E_N_TABLES] = {"projects", "tasks", "tags", "notes"};
static const char *const STATUS[] = {"open", "done", "blocked"};

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next(rng *r)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return r->s;
}

static int pick(rng *r, int n)
{
    return (int)(next(r) % (uint64_t)n);
}

uint64_t e2e_seed(void)
{
    const char *s = getenv("PGW_E2E_SEED");
    return s ? strtoull(s, NULL, 0) : 20240611u;
}

long e2e_target(void)
{
    const char *s = getenv("PGW_TEST_SCALE");
    double f = s ? atof(s) : 1.0;
    long target = (long)(5000 * (f > 0 && f <= 1.0 ? f : 1.0));
    return target < 300 ? 300 : target;
}

long long e2e_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void e2e_create_tables(PGconn *c, bool notes_key)
{
    char sql[2048];
    snprintf(sql, sizeof sql,
             "SET client_min_messages = warning; DROP SCHEMA IF EXISTS pgwitness CASCADE; "
             "DROP TABLE IF EXISTS projects, tasks, tags, notes; RESET client_min_messages; "
             "CREATE TABLE projects (id int PRIMARY KEY, name text NOT NULL, "
             "  archived bool NOT NULL DEFAULT false); "
             "CREATE TABLE tasks (id int PRIMARY KEY, project_id int, status text, "
             "  title text, prio int, updated_at int); "
             "CREATE TABLE tags (task_id int, tag text, PRIMARY KEY (task_id, tag)); "
             "CREATE TABLE notes (task_id int, body text%s); "
             "INSERT INTO projects SELECT g, 'n' || (g %% 3), g = 5 "
             "  FROM generate_series(1, 5) g; "
             "INSERT INTO tasks SELECT g, 1 + g %% 5, "
             "  (ARRAY['open','done','blocked'])[1 + g %% 3], 't' || g, g %% 12, g %% 17 FROM generate_series(1, 40) g; "
             "INSERT INTO tags SELECT 1 + g %% 40, (ARRAY['a','b','c','d'])[1 + g %% 4] "
             "  FROM generate_series(1, 60) g ON CONFLICT DO NOTHING; "
             "INSERT INTO notes SELECT 1 + g %% 40, 'n' FROM generate_series(1, 30) g",
             notes_key ? ", id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY" : "");
    pgwt_exec(c, sql);
}

void e2e_log(e2e_source *src, const char *json)
{
    size_t room = sizeof src->log - src->log_len;
    int n = snprintf(src->log + src->log_len, room, "#     %s\n", json);
    if (n > 0)
        src->log_len += (size_t)n < room ? (size_t)n : room - 1;
}

/* ------------------------------------------------------------------ */
/* subscriptions                                                       */

typedef struct sub {
    char sql[512];
    char deps[2048];     /* JSON, without scope and query */
    int kind;
    int ids;             /* result IDs: 0 none, 1 first column, 2 (col 0, col 1) */
    int blimit;          /* > 0: acknowledged with window bounds, (col 3, col 0) of its
                          * first and last rows, full at blimit rows */
    unsigned reads;      /* bit per table read (all for undeclared) */
    pgw_runner_id runner[E2E_MAX_SOURCES]; /* in each source's index */
    char *result;        /* the previous result, as text */
} sub;

#define K_UNDECLARED 9
static const char *const KIND[] = {"list", "set", "count", "sum", "range", "join",
                                   "tags", "notes", "projects", "undeclared"};

/* A random subscription: its SQL and the dependencies it declares (the
 * host's side of the contract in inval.h). */
static void make_sub(rng *r, sub *s)
{
    const char *st = STATUS[pick(r, 3)];
    int p1 = 1 + pick(r, 5), p2 = 1 + pick(r, 5), task = 1 + pick(r, 40);
    s->kind = pick(r, 10);
    s->ids = 0;
    s->blimit = 0;
    switch (s->kind) {
    case 0: { /* the tasks.list of the source design, with a window */
        int limit = 2 + pick(r, 6), offset = pick(r, 3) == 0 ? pick(r, 3) : 0;
        bool by_project = pick(r, 2);
        char pf[64] = "", pd[160] = "";
        if (by_project) {
            snprintf(pf, sizeof pf, " AND project_id IN (%d, %d)", p1, p2);
            snprintf(pd, sizeof pd, ",{\"column\":\"project_id\",\"op\":\"in\","
                                    "\"values\":[\"%d\",\"%d\"]}", p1, p2);
        }
        snprintf(s->sql, sizeof s->sql,
                 "SELECT id, title, status, updated_at FROM tasks WHERE status = '%s'%s "
                 "ORDER BY updated_at, id LIMIT %d OFFSET %d",
                 st, pf, limit, offset);
        snprintf(s->deps, sizeof s->deps,
                 "\"tables\":[{\"schema\":\"public\",\"table\":\"tasks\","
                 "\"columns\":[\"id\",\"title\",\"status\",\"updated_at\"],"
                 "\"filters\":[{\"column\":\"status\",\"op\":\"eq\",\"values\":[\"%s\"]}%s],"
                 "\"order_by\":[{\"column\":\"updated_at\",\"type\":\"int\"},"
                 "{\"column\":\"id\",\"type\":\"int\"}],\"limit\":%d,\"offset\":%d}],"
                 "\"result\":\"list\"",
                 st, pd, limit, offset);
        s->ids = pick(r, 3) ? 1 : 0;
        s->blimit = limit;
        s->reads = 1u << E2E_TASKS;
        break;
    }
    case 1: /* every task of a project, no window */
        snprintf(s->sql, sizeof s->sql,
                 "SELECT id, title, prio FROM tasks WHERE project_id = %d ORDER BY id", p1);
        snprintf(s->deps, sizeof s->deps,
                 "\"tables\":[{\"schema\":\"public\",\"table\":\"tasks\","
                 "\"columns\":[\"id\",\"title\",\"prio\"],"
                 "\"filters\":[{\"column\":\"project_id\",\"op\":\"eq\",\"values\":[\"%d\"]}]}]",
                 p1);
        s->ids = pick(r, 2);
        s->reads = 1u << E2E_TASKS;
        break;
    case 2:
        snprintf(s->sql, sizeof s->sql, "SELECT count(*) FROM tasks WHERE status = '%s'", st);
        snprintf(s->deps, sizeof s->deps,
                 "\"tables\":[{\"schema\":\"public\",\"table\":\"tasks\",\"columns\":[],"
                 "\"filters\":[{\"column\":\"status\",\"op\":\"eq\",\"values\":[\"%s\"]}]}]",
                 st);
        s->reads = 1u << E2E_TASKS;
        break;
    case 3:
        snprintf(s->sql, sizeof s->sql,
                 "SELECT project_id, sum(prio) FROM tasks GROUP BY project_id ORDER BY 1");
        snprintf(s->deps, sizeof s->deps,
                 "\"tables\":[{\"schema\":\"public\",\"table\":\"tasks\","
                 "\"columns\":[\"project_id\",\"prio\"]}],\"result\":\"aggregate\"");
        s->reads = 1u << E2E_TASKS;
        break;
    case 4: {
        int x = pick(r, 10);
        snprintf(s->sql, sizeof s->sql, "SELECT id, prio FROM tasks WHERE prio > %d ORDER BY id",
                 x);
        snprintf(s->deps, sizeof s->deps,
                 "\"tables\":[{\"schema\":\"public\",\"table\":\"tasks\","
                 "\"columns\":[\"id\",\"prio\"],"
                 "\"filters\":[{\"column\":\"prio\",\"op\":\"range\",\"type\":\"int\","
                 "\"lower\":\"%d\",\"lower_inclusive\":false}]}]",
                 x);
        s->ids = pick(r, 2);
        s->reads = 1u << E2E_TASKS;
        break;
    }
    case 5:
        snprintf(s->sql, sizeof s->sql,
                 "SELECT t.id, t.title, p.name FROM tasks t JOIN projects p ON p.id = "
                 "t.project_id WHERE NOT p.archived AND t.status = '%s' ORDER BY t.id",
                 st);
        snprintf(s->deps, sizeof s->deps,
                 "\"tables\":[{\"schema\":\"public\",\"table\":\"tasks\","
                 "\"columns\":[\"id\",\"title\",\"project_id\",\"status\"],"
                 "\"filters\":[{\"column\":\"status\",\"op\":\"eq\",\"values\":[\"%s\"]},"
                 "{\"column\":\"project_id\",\"op\":\"opaque\"}]},"
                 "{\"schema\":\"public\",\"table\":\"projects\","
                 "\"columns\":[\"id\",\"name\",\"archived\"],"
                 "\"filters\":[{\"column\":\"archived\",\"op\":\"eq\",\"values\":[\"f\"]},"
                 "{\"column\":\"id\",\"op\":\"opaque\"}]}]",
                 st);
        s->ids = pick(r, 2);
        s->reads = (1u << E2E_TASKS) | (1u << E2E_PROJECTS);
        break;
    case 6:
        snprintf(s->sql, sizeof s->sql,
                 "SELECT task_id, tag FROM tags WHERE task_id = %d ORDER BY tag", task);
        snprintf(s->deps, sizeof s->deps,
                 "\"tables\":[{\"schema\":\"public\",\"table\":\"tags\","
                 "\"columns\":[\"task_id\",\"tag\"],"
                 "\"filters\":[{\"column\":\"task_id\",\"op\":\"eq\",\"values\":[\"%d\"]}],"
                 "\"order_by\":[\"tag\"]}]",
                 task);
        s->ids = pick(r, 2) ? 2 : 0;
        s->reads = 1u << E2E_TAGS;
        break;
    case 7:
        snprintf(s->sql, sizeof s->sql, "SELECT count(*) FROM notes WHERE task_id = %d", task);
        snprintf(s->deps, sizeof s->deps,
                 "\"tables\":[{\"schema\":\"public\",\"table\":\"notes\",\"columns\":[],"
                 "\"filters\":[{\"column\":\"task_id\",\"op\":\"eq\",\"values\":[\"%d\"]}]}]",
                 task);
        s->reads = 1u << E2E_NOTES;
        break;
    case 8: {
        bool arch = pick(r, 2);
        snprintf(s->sql, sizeof s->sql,
                 "SELECT id, name FROM projects WHERE archived = %s ORDER BY name, id",
                 arch ? "true" : "false");
        snprintf(s->deps, sizeof s->deps,
                 "\"tables\":[{\"schema\":\"public\",\"table\":\"projects\","
                 "\"columns\":[\"id\",\"name\"],"
                 "\"filters\":[{\"column\":\"archived\",\"op\":\"eq\",\"values\":[\"%s\"]}],"
                 "\"order_by\":[\"name\"]}]",
                 arch ? "t" : "f");
        s->ids = pick(r, 2);
        s->reads = 1u << E2E_PROJECTS;
        break;
    }
    default:
        snprintf(s->sql, sizeof s->sql,
                 "SELECT count(*), max(updated_at) FROM tasks WHERE status <> 'done'");
        snprintf(s->deps, sizeof s->deps, "\"undeclared\":true");
        s->reads = 0xf;
        break;
    }
}

/* ------------------------------------------------------------------ */
/* writes                                                              */

/* 3,200 bytes of hexadecimal digits that pglz cannot shrink by a
 * quarter: stored out of line, uncompressed (pg_column_size 3200). */
#define BIG "(SELECT string_agg(md5(g::text || '%d'), '') FROM generate_series(1, 100) g)"

/* The writes only opts->extras makes (see e2e_options). */
static void make_extra(rng *r, char *sql, size_t size, unsigned *tables, long *big)
{
    int id = 1 + pick(r, 60), p = 1 + pick(r, 6), p2 = 1 + pick(r, 6), k = pick(r, 24);
    const char *st = STATUS[pick(r, 3)];
    if (k < 3) {
        *tables = 1u << E2E_TASKS; /* REPLICA IDENTITY FULL */
        snprintf(sql, size, "UPDATE tasks SET title = " BIG " WHERE id = %d", pick(r, 1000), id);
    } else if (k < 5) {
        *tables = 1u << E2E_TASKS;
        snprintf(sql, size,
                 "INSERT INTO tasks VALUES (%d, %d, '%s', " BIG ", %d, %d) ON CONFLICT DO NOTHING",
                 id, p, st, pick(r, 1000), pick(r, 12), pick(r, 30));
    } else if (k < 9) {
        *tables = 1u << E2E_PROJECTS; /* DEFAULT */
        snprintf(sql, size, "UPDATE projects SET name = " BIG " WHERE id = %d", pick(r, 1000), p);
    } else if (k < 14) {
        *tables = 1u << E2E_NOTES; /* FULL */
        snprintf(sql, size, "INSERT INTO notes VALUES (%d, " BIG ")", 1 + pick(r, 40),
                 pick(r, 1000));
    } else if (k < 20) {
        /* A key change under DEFAULT: a key-only old tuple whose other
         * columns are placeholders. */
        *tables = 1u << E2E_PROJECTS;
        snprintf(sql, size,
                 "UPDATE projects SET id = %d WHERE id = %d AND NOT EXISTS "
                 "(SELECT 1 FROM projects WHERE id = %d)",
                 p2, p, p2);
        return;
    } else {
        *tables = (1u << E2E_TAGS) | (1u << E2E_NOTES);
        snprintf(sql, size, "TRUNCATE tags, notes");
        return;
    }
    ++*big;
}

/* A random statement for the writer; *tables receives the bit of each
 * table it writes. */
static void make_write(rng *r, char *sql, size_t size, unsigned *tables, const e2e_options *o,
                       long *big)
{
    if (o->extras && pick(r, 10) == 0) {
        make_extra(r, sql, size, tables, big);
        return;
    }
    int id = 1 + pick(r, 60), id2 = 1 + pick(r, 60), p = 1 + pick(r, 6);
    const char *st = STATUS[pick(r, 3)];
    int k = pick(r, 100);
    if (k < 12) {
        *tables = 1u << E2E_TASKS;
        snprintf(sql, size,
                 "INSERT INTO tasks VALUES (%d, %d, '%s', 't%d', %d, %d) ON CONFLICT DO NOTHING",
                 id2, p, st, pick(r, 9), pick(r, 12), pick(r, 30));
    } else if (k < 16) {
        *tables = 1u << E2E_TASKS;
        snprintf(sql, size,
                 "INSERT INTO tasks SELECT g, %d, '%s', 'm', %d, %d FROM generate_series(%d, "
                 "%d) g ON CONFLICT DO NOTHING",
                 p, st, pick(r, 12), pick(r, 30), id, id + pick(r, 4));
    } else if (k < 40) {
        *tables = 1u << E2E_TASKS;
        char a[64], w[64];
        switch (pick(r, 7)) {
        case 0: snprintf(a, sizeof a, "status = '%s'", st); break;
        case 1: snprintf(a, sizeof a, "prio = prio + 1"); break;
        case 2: snprintf(a, sizeof a, "title = 't%d'", pick(r, 30)); break;
        case 3: snprintf(a, sizeof a, "updated_at = %d", pick(r, 30)); break;
        case 4: snprintf(a, sizeof a, "project_id = %d", p); break;
        case 5: snprintf(a, sizeof a, "title = title"); break;
        default: snprintf(a, sizeof a, "status = status"); break;
        }
        switch (pick(r, 4)) {
        case 0: snprintf(w, sizeof w, "id = %d", id); break;
        case 1: snprintf(w, sizeof w, "status = '%s'", STATUS[pick(r, 3)]); break;
        case 2: snprintf(w, sizeof w, "project_id = %d", p); break;
        default: snprintf(w, sizeof w, "id BETWEEN %d AND %d + 3", id, id); break;
        }
        snprintf(sql, size, "UPDATE tasks SET %s WHERE %s", a, w);
    } else if (k < 46) {
        *tables = 1u << E2E_TASKS; /* a key change, when the new key is free */
        snprintf(sql, size,
                 "UPDATE tasks SET id = %d WHERE id = %d AND NOT EXISTS "
                 "(SELECT 1 FROM tasks WHERE id = %d)",
                 id2, id, id2);
    } else if (k < 54) {
        *tables = 1u << E2E_TASKS;
        if (pick(r, 3))
            snprintf(sql, size, "DELETE FROM tasks WHERE id = %d", id);
        else
            snprintf(sql, size, "DELETE FROM tasks WHERE prio > %d", 8 + pick(r, 6));
    } else if (k < 62) {
        *tables = 1u << E2E_PROJECTS;
        switch (pick(r, 4)) {
        case 0:
            snprintf(sql, size, "UPDATE projects SET archived = NOT archived WHERE id = %d", p);
            break;
        case 1:
            snprintf(sql, size, "UPDATE projects SET name = 'n' || (%d * 7 %% 5) WHERE id = %d",
                     id, p);
            break;
        case 2:
            snprintf(sql, size,
                     "INSERT INTO projects VALUES (%d, 'new', false) ON CONFLICT DO NOTHING", p);
            break;
        default:
            snprintf(sql, size, "DELETE FROM projects WHERE id = %d", p);
            break;
        }
    } else if (k < 80) {
        *tables = 1u << E2E_TAGS;
        static const char *const tg[] = {"a", "b", "c", "d"};
        int c = pick(r, 4);
        if (c == 0)
            snprintf(sql, size, "INSERT INTO tags VALUES (%d, '%s') ON CONFLICT DO NOTHING",
                     1 + pick(r, 40), tg[pick(r, 4)]);
        else if (c == 1)
            snprintf(sql, size, "DELETE FROM tags WHERE task_id = %d", 1 + pick(r, 40));
        else if (c == 2) {
            const char *nt = tg[pick(r, 4)];
            snprintf(sql, size,
                     "UPDATE tags SET tag = '%s' WHERE task_id = %d AND tag = 'a' AND NOT "
                     "EXISTS (SELECT 1 FROM tags WHERE task_id = %d AND tag = '%s' AND "
                     "tag <> 'a')",
                     nt, id, id, nt);
        }
        else
            snprintf(sql, size,
                     "UPDATE tags SET task_id = task_id + 1 WHERE tag = '%s' AND task_id = %d "
                     "AND NOT EXISTS (SELECT 1 FROM tags t2 WHERE t2.task_id = %d + 1 AND "
                     "t2.tag = '%s')",
                     tg[1], id, id, tg[1]);
    } else if (k < 94) {
        *tables = 1u << E2E_NOTES;
        int c = pick(r, 3);
        if (c == 0)
            snprintf(sql, size, "INSERT INTO notes VALUES (%d, 'n')", 1 + pick(r, 40));
        else if (c == 1)
            snprintf(sql, size, "UPDATE notes SET task_id = %d WHERE task_id = %d",
                     1 + pick(r, 40), 1 + pick(r, 40));
        else
            snprintf(sql, size, "DELETE FROM notes WHERE task_id = %d", 1 + pick(r, 40));
    } else if (k < 96) {
        int t = pick(r, 2) ? E2E_TAGS : E2E_NOTES;
        *tables = 1u << t;
        snprintf(sql, size, "TRUNCATE %s", e2e_tables[t]);
    } else {
        *tables = 1u << E2E_TASKS; /* swap two statuses in one statement */
        snprintf(sql, size,
                 "UPDATE tasks SET status = CASE status WHEN 'open' THEN 'done' WHEN 'done' "
                 "THEN 'open' ELSE status END WHERE project_id = %d",
                 p);
    }
}

/* ------------------------------------------------------------------ */
/* running                                                             */

/* Every subscription's result, in one round trip. */
static void run_all(PGconn *c, sub *subs, int n, char **out, PGresult **keep)
{
    static char batch[E2E_N_SUBS * 520];
    char *b = batch;
    for (int i = 0; i < n; i++)
        b += sprintf(b, "%s;", subs[i].sql);
    ck_assert_int_eq(PQsendQuery(c, batch), 1);
    PGresult *res;
    int k = 0;
    while ((res = PQgetResult(c)) != NULL) {
        ck_assert_msg(PQresultStatus(res) == PGRES_TUPLES_OK, "%s: %s", subs[k].sql,
                      PQresultErrorMessage(res));
        size_t len = 1;
        for (int row = 0; row < PQntuples(res); row++)
            for (int col = 0; col < PQnfields(res); col++)
                len += (size_t)PQgetlength(res, row, col) + 3;
        char *s = malloc(len), *p = s;
        for (int row = 0; row < PQntuples(res); row++) {
            for (int col = 0; col < PQnfields(res); col++) {
                if (PQgetisnull(res, row, col)) {
                    *p++ = '~';
                } else {
                    memcpy(p, PQgetvalue(res, row, col), (size_t)PQgetlength(res, row, col));
                    p += PQgetlength(res, row, col);
                }
                *p++ = '|';
            }
            *p++ = '\n';
        }
        *p = '\0';
        out[k] = s;
        keep[k] = res;
        k++;
    }
    ck_assert_int_eq(k, n);
}

/* Acknowledges a rerun with the result IDs of its result (run after the
 * runner was taken). */
static void ack(pgw_index *idx, pgw_runner_id runner, const PGresult *res, const sub *s)
{
    if (s->blimit > 0) { /* with the window's bounds: ORDER BY updated_at, id */
        const int nt = PQntuples(res);
        const size_t n = nt > 0 ? (size_t)nt : 0;
        const char *first[2] = {NULL, NULL}, *last[2] = {NULL, NULL};
        for (int k = 0; k < 2 && n > 0; k++) {
            int col = k ? 0 : 3;
            first[k] = PQgetisnull(res, 0, col) ? NULL : PQgetvalue(res, 0, col);
            last[k] = PQgetisnull(res, nt - 1, col) ? NULL : PQgetvalue(res, nt - 1, col);
        }
        pgw_window_bounds b = {n ? first : NULL, n ? last : NULL, 2, nt == s->blimit};
        pgw_rowid *ids = calloc(n + 1, sizeof *ids);
        const char **parts = calloc(n + 1, sizeof *parts);
        for (int i = 0; i < nt; i++) {
            parts[i] = PQgetvalue(res, i, 0);
            ids[i].parts = &parts[i];
            ids[i].n_parts = 1;
        }
        pgw_error err;
        ck_assert_msg(pgw_index_ack_window(idx, runner, s->ids ? ids : NULL, s->ids ? n : 0, &b,
                                           &err) == PGW_OK,
                      "%s", err.message);
        free(ids);
        free(parts);
        return;
    }
    if (!s->ids) {
        ck_assert_int_eq(pgw_index_ack_unknown(idx, runner, NULL), PGW_OK);
        return;
    }
    int n = PQntuples(res);
    pgw_rowid *ids = calloc((size_t)n + 1, sizeof *ids);
    const char **parts = calloc((size_t)n * 2 + 1, sizeof *parts);
    for (int i = 0; i < n; i++) {
        parts[2 * i] = PQgetvalue(res, i, 0);
        parts[2 * i + 1] = PQgetvalue(res, i, 1);
        ids[i].parts = &parts[2 * i];
        ids[i].n_parts = (size_t)s->ids;
    }
    pgw_error err;
    ck_assert_msg(pgw_index_ack(idx, runner, ids, (size_t)n, &err) == PGW_OK, "%s",
                  err.message);
    free(ids);
    free(parts);
}

/* The marker the harness sends after each commit, for the triggers: a
 * truncate of pgwt.sync, a table no subscription reads. */
#define SYNC \
    "SELECT pg_notify('" PGW_PQ_DEFAULT_CHANNEL "', '{\"version\":1,\"schema\":\"pgwt\"," \
    "\"table\":\"sync\",\"op\":\"truncate\"}')"

/* Runs statements in one round trip; returns the rows the first one
 * changed (PQcmdTuples). */
static long exec_counting(PGconn *c, const char *sql)
{
    ck_assert_int_eq(PQsendQuery(c, sql), 1);
    PGresult *res;
    long first = -1;
    while ((res = PQgetResult(c)) != NULL) {
        ExecStatusType st = PQresultStatus(res);
        ck_assert_msg(st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK, "%s: %s", sql,
                      PQresultErrorMessage(res));
        if (first < 0)
            first = atol(PQcmdTuples(res));
        PQclear(res);
    }
    return first;
}

static long bits(unsigned x)
{
    long n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
}

static void register_subs(sub *subs, const char *db, e2e_source *const *src, int n_src)
{
    pgw_error err;
    for (int i = 0; i < E2E_N_SUBS; i++) {
        sub *s = &subs[i];
        char json[2600];
        snprintf(json, sizeof json,
                 "{\"scope\":{\"project\":\"p\",\"tenant\":\"acme\",\"database\":\"%s\"},"
                 "\"query\":\"s%d\",%s}",
                 db, i, s->deps);
        for (int j = 0; j < n_src; j++) {
            pgw_deps *dp = NULL;
            ck_assert_msg(pgw_deps_from_json(&dp, json, strlen(json), &err) == PGW_OK,
                          "%s: %s", json, err.message);
            ck_assert_int_eq(pgw_index_register(&s->runner[j], src[j]->index, dp, &err),
                             PGW_OK);
            pgw_deps_free(dp);
            ck_assert_int_eq(pgw_index_begin(src[j]->index, s->runner[j], NULL), PGW_OK);
        }
    }
}

static void print_missed(const e2e_source *src, const sub *s, int i, const e2e_commit *cm,
                         uint64_t seed, const char *after)
{
    printf("# MISSED by the %s: %s subscription %d (%s) after commit %ld (seed %llu):\n",
           src->name, KIND[s->kind], i, s->sql, cm->number, (unsigned long long)seed);
    for (int k = 0; k < cm->n_statements; k++)
        printf("#   %s\n", cm->sql[k]);
    printf("#   before: %.200s\n#   after:  %.200s\n#   its write sets:\n%s", s->result, after,
           src->log_len ? src->log : "#     none\n");
}

void e2e_run(e2e_figures *f, PGconn *c, PGconn *w, const char *db, e2e_source *const *src,
             int n_src, const e2e_options *o)
{
    ck_assert_int_le(n_src, E2E_MAX_SOURCES);
    rng r = {o->seed};
    memset(f, 0, sizeof *f);
    static sub subs[E2E_N_SUBS];
    for (int i = 0; i < E2E_N_SUBS; i++)
        make_sub(&r, &subs[i]);
    register_subs(subs, db, src, n_src);
    char *now_res[E2E_N_SUBS];
    PGresult *pgres[E2E_N_SUBS];
    run_all(c, subs, E2E_N_SUBS, now_res, pgres);
    for (int i = 0; i < E2E_N_SUBS; i++) {
        subs[i].result = now_res[i];
        for (int j = 0; j < n_src; j++)
            ack(src[j]->index, subs[i].runner[j], pgres[i], &subs[i]);
        PQclear(pgres[i]);
    }

    while (f->writes < o->target) {
        e2e_commit cm;
        memset(&cm, 0, sizeof cm);
        cm.n_statements = pick(&r, 10) == 0 ? 2 + pick(&r, 2) : 1;
        int n_st = cm.n_statements;
        bool rollback = n_st > 1 && pick(&r, 4) == 0;
        /* The marker goes out in the last round trip: inside the
         * transaction when it commits, after it when it rolls back. */
        long long t_a = e2e_now_ms();
        if (n_st > 1)
            pgwt_exec(w, "BEGIN");
        for (int k = 0; k < n_st; k++) {
            /* A statement rolled back to a savepoint is invisible, like
             * a rolled-back transaction. */
            bool savepoint = o->extras && n_st > 1 && pick(&r, 5) == 0;
            unsigned tables = 0;
            char stmt[512];
            make_write(&r, stmt, sizeof stmt, &tables, o, &f->big_values);
            char batch[768];
            const char *tail = k < n_st - 1 ? "" : n_st == 1 ? "; " SYNC
                               : rollback ? "; ROLLBACK; " SYNC : "; " SYNC "; COMMIT";
            if (savepoint)
                pgwt_exec(w, "SAVEPOINT e2e");
            snprintf(batch, sizeof batch, "%s%s%s", stmt,
                     savepoint ? "; ROLLBACK TO SAVEPOINT e2e" : "", tail);
            snprintf(cm.sql[k], sizeof cm.sql[k], "%s%s%s", savepoint ? "SAVEPOINT e2e; " : "",
                     stmt, savepoint ? "; ROLLBACK TO SAVEPOINT e2e" : "");
            long tuples = exec_counting(w, batch);
            /* A TRUNCATE is a write of each table it names, rows or not. */
            bool truncate = strncmp(stmt, "TRUNCATE", 8) == 0;
            if (!savepoint && (truncate || tuples > 0)) {
                cm.sent += truncate ? bits(tables) : 1;
                cm.written |= tables;
            }
            f->savepoints += savepoint;
            f->statements++;
        }
        if (rollback) {
            f->rollbacks++;
            cm.sent = 0;
            cm.written = 0;
        }
        f->commits++;
        cm.number = f->commits;
        f->writes += cm.sent;
        long long t_b = e2e_now_ms();
        f->ms_write += t_b - t_a;
        for (int j = 0; j < n_src; j++) {
            long long t0 = e2e_now_ms();
            src[j]->log_len = 0;
            src[j]->log[0] = '\0';
            src[j]->wait(src[j], w, &cm);
            src[j]->ms_wait += e2e_now_ms() - t0;
        }
        long long t_c = e2e_now_ms();
        /* The dirty runners of each source, then every subscription's new
         * result. */
        bool dirty[E2E_MAX_SOURCES][E2E_N_SUBS] = {{false}};
        pgw_reason why[E2E_MAX_SOURCES][E2E_N_SUBS];
        for (int j = 0; j < n_src; j++) {
            pgw_dirty d;
            while (pgw_index_pop_dirty(&d, src[j]->index) == PGW_OK)
                for (int i = 0; i < E2E_N_SUBS; i++)
                    if (subs[i].runner[j] == d.runner) {
                        dirty[j][i] = true;
                        why[j][i] = d.reason;
                    }
        }
        if (cm.sent == 0) {
            /* No row changed (zero-row statements, a rollback): the
             * database is as it was, every result too. Only a source's own
             * marker arrived (the triggers': it refreshes the undeclared
             * subscriptions, as any write does); nothing else may be
             * marked. */
            for (int j = 0; j < n_src; j++)
                for (int i = 0; i < E2E_N_SUBS; i++) {
                    if (!dirty[j][i])
                        continue;
                    ck_assert_msg(src[j]->quiet_marks_undeclared && subs[i].kind == K_UNDECLARED,
                                  "%s: %s subscription %d marked (%s) although no row changed "
                                  "(commit %ld: %s)",
                                  src[j]->name, KIND[subs[i].kind], i, pgw_reason_name(why[j][i]),
                                  cm.number, cm.sql[0]);
                    ck_assert_int_eq(pgw_index_ack_unknown(src[j]->index, subs[i].runner[j],
                                                           NULL),
                                     PGW_OK);
                }
            f->quiet++;
            f->ms_rerun += e2e_now_ms() - t_c;
            continue;
        }
        run_all(c, subs, E2E_N_SUBS, now_res, pgres);
        for (int i = 0; i < E2E_N_SUBS; i++) {
            bool changed = strcmp(now_res[i], subs[i].result) != 0;
            f->pairs++;
            f->needed += changed;
            f->table_level += (subs[i].reads & cm.written) != 0;
            for (int j = 0; j < n_src; j++) {
                src[j]->issued += dirty[j][i];
                if (dirty[j][i])
                    src[j]->by_reason[why[j][i]]++;
                if (changed && !dirty[j][i]) {
                    if (src[j]->missed < 5)
                        print_missed(src[j], &subs[i], i, &cm, o->seed, now_res[i]);
                    src[j]->missed++;
                }
                if (dirty[j][i])
                    ack(src[j]->index, subs[i].runner[j], pgres[i], &subs[i]);
            }
            free(subs[i].result);
            subs[i].result = now_res[i];
            PQclear(pgres[i]);
        }
        f->ms_rerun += e2e_now_ms() - t_c;
    }
    for (int i = 0; i < E2E_N_SUBS; i++) {
        free(subs[i].result);
        subs[i].result = NULL;
    }

    printf("# time: writes %.1f s,", f->ms_write / 1e3);
    for (int j = 0; j < n_src; j++)
        printf(" waiting for the %s %.1f s,", src[j]->name, src[j]->ms_wait / 1e3);
    printf(" re-running subscriptions %.1f s\n", f->ms_rerun / 1e3);
    printf("# end-to-end differential: seed %llu, %ld committed writes (statements that "
           "changed rows) of %ld statements in %ld commits (%ld rolled back, %ld statements "
           "rolled back to a savepoint, %ld TOASTed values written), %d subscriptions, %ld "
           "(subscription, commit) pairs, %ld results changed; %ld commits changed no row "
           "(not re-run: nothing can differ)\n",
           (unsigned long long)o->seed, f->writes, f->statements, f->commits, f->rollbacks,
           f->savepoints, f->big_values, E2E_N_SUBS, f->pairs, f->needed, f->quiet);
    printf("# missed refreshes:");
    for (int j = 0; j < n_src; j++)
        printf("%s %s %ld", j ? "," : "", src[j]->name, src[j]->missed);
    printf("\n# over-refresh ratio (issued/needed):");
    for (int j = 0; j < n_src; j++)
        printf("%s %s %.3f (%ld/%ld)", j ? "," : "", src[j]->name,
               (double)src[j]->issued / (double)f->needed, src[j]->issued, f->needed);
    printf("; table-level invalidation: %.3f (%ld/%ld)\n",
           (double)f->table_level / (double)f->needed, f->table_level, f->needed);
    for (int j = 0; j < n_src; j++) {
        printf("# refreshes by reason, %s:", src[j]->name);
        for (int i = 0; i < PGW_REASON_COUNT; i++)
            if (src[j]->by_reason[i])
                printf(" %s=%ld", pgw_reason_name((pgw_reason)i), src[j]->by_reason[i]);
        printf("\n");
    }
    fflush(stdout);
    ck_assert_int_ge(f->writes, o->target);
    ck_assert_int_gt(f->needed, f->commits / 2); /* results really change */
    for (int j = 0; j < n_src; j++) {
        ck_assert_msg(src[j]->issued < f->table_level, /* and the rules skip some */
                      "%s: %ld refreshes, table-level %ld", src[j]->name, src[j]->issued,
                      f->table_level);
        ck_assert_msg(src[j]->missed == 0, "%s: %ld missed refreshes (seed %llu)",
                      src[j]->name, src[j]->missed, (unsigned long long)o->seed);
    }
}

/* ------------------------------------------------------------------ */
/* the triggers as a source                                            */

/* Notifications of one session arrive in commit order, so when the
 * marker is in, so is everything before it. (Counting notifications would
 * not do: PostgreSQL delivers identical payloads of one transaction once
 * — NOTIFY, "Notes".) */
static void count_write(pgw_pq_tenant_id tenant, const pgw_write *wr, void *ud)
{
    (void)tenant;
    e2e_triggers *t = ud;
    const char *schema = pgw_write_schema(wr);
    if (schema && strcmp(schema, "pgwt") == 0) {
        t->syncs++;
        return;
    }
    t->notifications++;
    char *json = NULL;
    ck_assert_int_eq(pgw_write_to_json(&json, NULL, wr, NULL), PGW_OK);
    e2e_log(&t->src, json);
    pgw_free(json);
}

void e2e_wait_and_process(pgw_pq_listener *l, int ms)
{
    pgw_pq_listener_socket sk[4];
    size_t n;
    ck_assert_int_eq(pgw_pq_listener_sockets(&n, sk, 4, l, NULL), PGW_OK);
    ck_assert_uint_le(n, 4);
    struct pollfd p[4];
    for (size_t i = 0; i < n; i++) {
        p[i].fd = sk[i].fd;
        p[i].events = (short)(((sk[i].events & PGW_PQ_WAIT_READ) ? POLLIN : 0) |
                              ((sk[i].events & PGW_PQ_WAIT_WRITE) ? POLLOUT : 0));
        p[i].revents = 0;
    }
    if (poll(p, (nfds_t)n, ms) > 0)
        for (size_t i = 0; i < n; i++)
            if (p[i].revents)
                pgw_pq_listener_process(l, p[i].fd, PGW_PQ_WAIT_READ | PGW_PQ_WAIT_WRITE, NULL);
    ck_assert_int_eq(pgw_pq_listener_tick(NULL, l, NULL), PGW_OK);
}

static void triggers_wait(e2e_source *src, PGconn *writer, const e2e_commit *cm)
{
    (void)writer;
    e2e_triggers *t = src->userdata;
    long before = t->notifications;
    long long end = e2e_now_ms() + 10000;
    while (t->syncs < cm->number) {
        ck_assert_msg(e2e_now_ms() < end, "the marker did not arrive after: %s", cm->sql[0]);
        e2e_wait_and_process(t->l, 100);
    }
    /* Every statement that changed rows sent one notification (those of
     * one transaction with equal payloads arrive once). */
    ck_assert_int_le(t->notifications - before, cm->sent);
    ck_assert_int_eq(t->notifications - before > 0, cm->sent > 0);
}

void e2e_triggers_open(e2e_triggers *t, pgw_index *idx, const char *db)
{
    memset(t, 0, sizeof *t);
    t->src.name = "triggers";
    t->src.index = idx;
    t->src.wait = triggers_wait;
    t->src.quiet_marks_undeclared = true;
    t->src.userdata = t;
    pgw_pq_listener_options lo = PGW_PQ_LISTENER_OPTIONS_INIT;
    lo.index = idx;
    lo.on_write = count_write;
    lo.userdata = t;
    ck_assert_int_eq(pgw_pq_listener_new(&t->l, &lo, NULL), PGW_OK);
    pgw_scope scope = {"p", "acme", db};
    char ci[128];
    snprintf(ci, sizeof ci, "dbname=%s", db);
    ck_assert_int_eq(pgw_pq_listener_add_tenant(&t->tenant, t->l, &scope, ci, NULL), PGW_OK);
    ck_assert_int_eq(pgw_pq_listener_touch(t->l, t->tenant, NULL), PGW_OK);
    pgw_pq_tenant_info ti;
    long long end = e2e_now_ms() + 10000;
    do {
        ck_assert(e2e_now_ms() < end);
        ck_assert_int_eq(pgw_pq_listener_run(t->l, 10, NULL), PGW_OK);
        ck_assert_int_eq(pgw_pq_listener_tenant(&ti, t->l, t->tenant, NULL), PGW_OK);
    } while (ti.state != PGW_PQ_TENANT_LISTENING);
    pgw_dirty d;
    while (pgw_index_pop_dirty(&d, idx) == PGW_OK)
        pgw_index_ack_unknown(idx, d.runner, NULL);
}

void e2e_triggers_close(e2e_triggers *t)
{
    pgw_pq_tenant_info ti;
    ck_assert_int_eq(pgw_pq_listener_tenant(&ti, t->l, t->tenant, NULL), PGW_OK);
    ck_assert_uint_eq(ti.failures, 0);
    pgw_pq_listener_free(t->l);
    t->l = NULL;
}
