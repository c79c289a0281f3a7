/*
 * lib/core/snapshot/assign.c — pgwi_assign: an exact optimal one-to-one
 * assignment of rows to columns with a threshold (assign.h), for pairing a
 * table's removed columns with its added ones. A greedy choice (best pair
 * first) can pair a start column with an end column; this one maximises the
 * total.
 *
 * The problem is solved as a rectangular linear assignment problem of
 * minimum cost. Row i may take real column j (cost -score) when score >=
 * threshold, and its own "unassigned" column nc + i (cost 0); a pair below
 * the threshold is no edge at all, so no assignment can contain it. Every
 * row can always be assigned (to its own unassigned column), so an optimum
 * exists; taking a below-threshold pair is never possible, and leaving a row
 * unassigned is.
 *
 * 1. The Hungarian method: H. W. Kuhn, "The Hungarian method for the
 *    assignment problem", Naval Research Logistics Quarterly 2 (1955);
 *    J. Munkres, "Algorithms for the assignment and transportation
 *    problems", J. SIAM 5 (1957); here in the shortest-augmenting-path form
 *    of R. Jonker and A. Volgenant, "A shortest augmenting path algorithm
 *    for dense and sparse linear assignment problems", Computing 38 (1987),
 *    without their initialisation heuristics: rows are added one by one,
 *    each by a Dijkstra search over the reduced costs c_ij - u_i - v_j,
 *    which the potentials u, v keep non-negative (add_row). O(nr * nc *
 *    min(nr, nc)) at worst (a search adds a real column to its tree at
 *    each step but the last); the unassigned columns cost O(1) a step,
 *    since row i's is reached from row i alone. A 300 x 300 matrix of
 *    random scores takes a few milliseconds (tests/bench/bench_assign.c).
 *
 * 2. The tie rule. The potentials are an optimal dual solution (u_i + v_j
 *    <= c_ij on every edge, v_j <= 0, v_j = 0 on an uncovered column), so by
 *    complementary slackness an assignment of every row is optimal exactly
 *    when it uses only tight edges (c_ij - u_i - v_j = 0) and covers every
 *    column with v_j < 0. Add one "slack" row per uncovered column, joined to
 *    every column with v_j = 0: the optimal assignments are then the perfect
 *    matchings of a square graph, and two of them differ by alternating
 *    cycles. Row by row, the row is moved to the lowest column it can reach
 *    by such a cycle through rows not yet fixed (a backward breadth-first
 *    search from the row's current column over the tight edges), and fixed
 *    there. That gives the lexicographically smallest optimal row_to_col
 *    (assign.h), in O(nr * (tight edges + nc + nr)) after the search, which
 *    is short in practice because a row without a tight edge to a lower free
 *    or unfixed column is fixed at once.
 *
 * Floating point: the search compares exactly, so the same input always
 * gives the same result; the tie rule counts reduced costs within
 * PGWI_ASSIGN_TIE_TOL of zero as tight and potentials within it of zero as
 * zero. The threshold is compared exactly (score >= threshold).
 * SPDX-License-Identifier: MIT
 */
#include "assign.h"

#include <math.h>
#include <string.h>

#include "internal.h"

#define TOL PGWI_ASSIGN_TIE_TOL

/* The solver's state. Columns 0..nc-1 are real; column nc + i is row i's
 * unassigned column, of cost 0, whose potential stays 0 (it is never in a
 * search tree except as its end), so it has no slot in v. */
typedef struct lap {
    size_t nr, nc, m;  /* m = nc + nr columns in all */
    double *cost;      /* [nr * nc] -score, or +inf for no edge */
    double *u;         /* [nr] row potentials */
    double *v;         /* [nc] real columns' potentials */
    double *dist;      /* [nc] the search's shortest-path costs */
    int32_t *owner;    /* [m] the row holding each column, or -1 */
    int32_t *col;      /* [nr] the column each row holds, or -1 */
    int32_t *path;     /* [m] the row each column was reached from */
    int32_t *unreached;     /* [nc] real columns not yet in the search tree */
    int32_t *rows;     /* [nr] the rows in the search tree */
    int32_t *cols;     /* [nc] the real columns in the search tree */
} lap;

/* Adds row `start` to the assignment: a Dijkstra search from it over
 * reduced costs c_ij - u_i - v_j until it reaches a free column (the form
 * of D. F. Crouse, "On implementing 2D rectangular assignment algorithms",
 * IEEE Transactions on Aerospace and Electronic Systems 52(4), 2016: a
 * column list that shrinks as the tree grows, the potentials updated once at
 * the end, a free column preferred among equally near ones), then the
 * augmentation along the path. Costs may be negative: only the first step,
 * from the new row, can see a negative reduced cost, and every later edge's
 * is non-negative. */
static void add_row(lap *L, size_t start)
{
    const size_t nc = L->nc;
    double *dist = L->dist, *u = L->u, *v = L->v;
    int32_t *owner = L->owner, *path = L->path, *unreached = L->unreached;
    size_t n_unreached = nc, n_rows = 0, n_cols = 0;
    for (size_t j = 0; j < nc; j++) {
        unreached[j] = (int32_t)j;
        dist[j] = HUGE_VAL;
    }
    double reach = 0;  /* the distance of the column last added to the tree */
    /* The nearest unassigned column reached so far (the first of equals):
     * each is reached once, from its own row, and never changes. */
    double near_unassigned = HUGE_VAL;
    size_t unassigned = 0;
    size_t i = start, sink;
    for (;;) {
        L->rows[n_rows++] = (int32_t)i;
        const double *crow = L->cost + i * nc;
        const double base = reach - u[i];
        /* Row i's unassigned column: reached from row i alone, and free
         * (row i holds a column of the tree, or is the new row). */
        path[nc + i] = (int32_t)i;
        if (base < near_unassigned) {
            near_unassigned = base;
            unassigned = nc + i;
        }
        double lowest = HUGE_VAL;
        size_t pick = SIZE_MAX; /* an index into unreached */
        bool pick_free = false;
        for (size_t t = 0; t < n_unreached; t++) {
            size_t j = (size_t)unreached[t];
            double r = base + crow[j] - v[j];
            if (r < dist[j]) {
                dist[j] = r;
                path[j] = (int32_t)i;
            }
            if (dist[j] < lowest || (dist[j] == lowest && !pick_free && owner[j] < 0)) {
                lowest = dist[j];
                pick = t;
                pick_free = owner[j] < 0;
            }
        }
        if (near_unassigned < lowest || (near_unassigned == lowest && !pick_free)) {
            reach = near_unassigned;
            sink = unassigned;
            break;
        }
        reach = lowest;
        size_t j = (size_t)unreached[pick];
        unreached[pick] = unreached[--n_unreached];
        L->cols[n_cols++] = (int32_t)j;
        if (owner[j] < 0) {
            sink = j;
            break;
        }
        i = (size_t)owner[j];
    }
    /* Potentials: each tree row and column moves by how much nearer it was
     * than the sink, which keeps every reduced cost non-negative and makes
     * the path's edges tight. */
    u[start] += reach;
    for (size_t t = 1; t < n_rows; t++) {
        size_t r = (size_t)L->rows[t];
        u[r] += reach - dist[L->col[r]];
    }
    for (size_t t = 0; t < n_cols; t++) {
        size_t j = (size_t)L->cols[t];
        v[j] -= reach - dist[j];
    }
    /* Augment: each row on the path takes the column after its own. */
    size_t j = sink;
    for (;;) {
        size_t r = (size_t)path[j];
        owner[j] = (int32_t)r;
        int32_t held = L->col[r];
        L->col[r] = (int32_t)j;
        if (r == start)
            break;
        j = (size_t)held;
    }
}

/* Whether row i's edge to column j (real, or its own unassigned one) is
 * tight under the final potentials. */
static bool tight(const lap *L, size_t i, size_t j)
{
    if (j < L->nc)
        return L->cost[i * L->nc + j] - L->u[i] - L->v[j] <= TOL;
    return j == L->nc + i && -L->u[i] <= TOL;
}

/* Whether column j may be left uncovered by an optimal assignment: its
 * potential is zero (every unassigned column's is). */
static bool vacatable(const lap *L, size_t j)
{
    return j >= L->nc || L->v[j] >= -TOL;
}

/* The tie rule's graph: for each column, the rows with a tight edge to it
 * (compressed rows: rev[rev_start[j] .. rev_start[j + 1])), and the search's
 * scratch arrays. */
typedef struct ties {
    int32_t *block;
    int32_t *rev_start; /* [m + 1] */
    int32_t *rev;       /* [number of tight edges] */
    int32_t *good;      /* [m] stamped with i + 1: can be freed for row i */
    int32_t *next;      /* [m] where the holder of a good column moves */
    int32_t *queue;     /* [m] */
} ties;

static int build_ties(ties *t, const lap *L)
{
    const size_t nr = L->nr, nc = L->nc, m = L->m;
    uint64_t n_tight = 0;
    for (size_t i = 0; i < nr; i++) {
        for (size_t j = 0; j < nc; j++)
            n_tight += tight(L, i, j);
        n_tight += tight(L, i, nc + i);
    }
    /* rev_start holds int32 offsets: more tight edges than that (over 8 GB
     * of them) are beyond any memory. */
    uint64_t count = (uint64_t)(m + 1) + 3 * (uint64_t)m + n_tight;
    if (n_tight > INT32_MAX || count > SIZE_MAX / sizeof(int32_t))
        return PGW_ENOMEM;
    if (!(t->block = pgwi_calloc((size_t)count, sizeof(int32_t))))
        return PGW_ENOMEM;
    t->rev_start = t->block;
    t->good = t->rev_start + m + 1;
    t->next = t->good + m;
    t->queue = t->next + m;
    t->rev = t->queue + m;
    /* Count per column into rev_start[j + 1], sum, then fill in row order
     * (each column's rows end up ascending). */
    for (size_t i = 0; i < nr; i++) {
        for (size_t j = 0; j < nc; j++)
            t->rev_start[j + 1] += tight(L, i, j);
        t->rev_start[nc + i + 1] += tight(L, i, nc + i);
    }
    for (size_t j = 0; j < m; j++)
        t->rev_start[j + 1] += t->rev_start[j];
    int32_t *fill = t->next; /* scratch: the next free slot of each column */
    memcpy(fill, t->rev_start, m * sizeof *fill);
    for (size_t i = 0; i < nr; i++) {
        for (size_t j = 0; j < nc; j++)
            if (tight(L, i, j))
                t->rev[fill[j]++] = (int32_t)i;
        if (tight(L, i, nc + i))
            t->rev[fill[nc + i]++] = (int32_t)i;
    }
    return PGW_OK;
}

/* The lowest real column below row i's current one that row i has a tight
 * edge to and that no fixed row (< i) holds; m when there is none. Row i's
 * own unassigned column ranks after every real column, so it is never a
 * better choice. */
static size_t first_candidate(const lap *L, size_t i)
{
    size_t limit = (size_t)L->col[i] < L->nc ? (size_t)L->col[i] : L->nc;
    for (size_t j = 0; j < limit; j++) {
        int32_t h = L->owner[j];
        if ((h < 0 || (size_t)h > i) && tight(L, i, j))
            return j;
    }
    return L->m;
}

/* Moves row i to the lowest candidate column it can have in an optimal
 * assignment that keeps rows 0..i-1 where they are, if that is lower than
 * its current column. `first` is first_candidate(L, i) (< m). */
static void improve_row(lap *L, ties *t, size_t i, size_t first)
{
    const size_t nc = L->nc, m = L->m;
    const int32_t gen = (int32_t)i + 1;
    int32_t *good = t->good, *next = t->next, *queue = t->queue;
    int32_t *owner = L->owner, *col = L->col;
    const size_t old = (size_t)col[i];

    /* Backward search: a column is good when its holder can give it up and
     * be moved, along tight edges through rows after i, until the chain
     * ends in row i's current column (which row i gives up). A free column
     * is held by a slack row, which can move to any good column with a zero
     * potential (leaving it uncovered). */
    size_t head = 0, tail = 0;
    bool slack_done = false;
    good[old] = gen;
    queue[tail++] = (int32_t)old;
    while (head < tail && good[first] != gen) {
        size_t b = (size_t)queue[head++];
        for (int32_t e = t->rev_start[b]; e < t->rev_start[b + 1]; e++) {
            size_t k = (size_t)t->rev[e];
            if (k <= i)
                continue;
            size_t a = (size_t)col[k];
            if (a != b && good[a] != gen) {
                good[a] = gen;
                next[a] = (int32_t)b;
                queue[tail++] = (int32_t)a;
            }
        }
        if (!slack_done && vacatable(L, b)) {
            slack_done = true;
            for (size_t f = 0; f < m; f++) {
                if (owner[f] < 0 && good[f] != gen) {
                    good[f] = gen;
                    next[f] = (int32_t)b;
                    queue[tail++] = (int32_t)f;
                }
            }
        }
    }
    size_t c = m;
    size_t limit = old < nc ? old : nc;
    for (size_t j = first; j < limit; j++) {
        int32_t h = owner[j];
        if (good[j] == gen && (h < 0 || (size_t)h > i) && tight(L, i, j)) {
            c = j;
            break;
        }
    }
    if (c == m)
        return;
    /* Rotate the cycle: row i takes c, c's holder moves to next[c], and so
     * on until row i's old column is taken (or left uncovered, when a slack
     * row is the one that moves there). mover -1 is a slack row. */
    int32_t mover = (int32_t)i;
    size_t cur = c;
    for (;;) {
        int32_t held_by = owner[cur];
        owner[cur] = mover;
        if (mover >= 0)
            col[mover] = (int32_t)cur;
        if (cur == old)
            break;
        mover = held_by;
        cur = (size_t)next[cur];
    }
}

int pgwi_assign(int32_t *row_to_col, const double *score, size_t nr, size_t nc,
                double threshold)
{
    if (isnan(threshold) || threshold < 0 || threshold > 1)
        return PGW_EINVAL;
    if (nr == 0)
        return PGW_OK;
    if (!row_to_col)
        return PGW_EINVAL;
    if (nc > 0 && nr > SIZE_MAX / nc)
        return PGW_EINVAL;
    if (nr >= INT32_MAX || nc >= INT32_MAX || nr + nc >= INT32_MAX)
        return PGW_EINVAL;
    if (nc == 0) {
        for (size_t i = 0; i < nr; i++)
            row_to_col[i] = -1;
        return PGW_OK;
    }
    if (!score)
        return PGW_EINVAL;
    for (size_t k = 0; k < nr * nc; k++)
        if (isnan(score[k]) || score[k] > 1)
            return PGW_EINVAL;

    lap L = {.nr = nr, .nc = nc, .m = nc + nr};
    const size_t m = L.m;
    /* One block: the doubles first, then the int32 arrays. */
    uint64_t n_dbl = (uint64_t)nr * nc + nr + 2 * (uint64_t)nc;
    uint64_t n_int = 2 * (uint64_t)m + 2 * (uint64_t)nr + 2 * (uint64_t)nc;
    if (n_dbl > SIZE_MAX / sizeof(double) ||
        n_int > (SIZE_MAX - n_dbl * sizeof(double)) / sizeof(int32_t))
        return PGW_ENOMEM;
    char *block = pgwi_malloc((size_t)(n_dbl * sizeof(double) + n_int * sizeof(int32_t)));
    if (!block)
        return PGW_ENOMEM;
    L.cost = (double *)(void *)block;
    L.u = L.cost + nr * nc;
    L.v = L.u + nr;
    L.dist = L.v + nc;
    L.owner = (int32_t *)(void *)(L.dist + nc);
    L.col = L.owner + m;
    L.path = L.col + nr;
    L.unreached = L.path + m;
    L.rows = L.unreached + nc;
    L.cols = L.rows + nr;
    for (size_t k = 0; k < nr * nc; k++)
        L.cost[k] = score[k] >= threshold ? -score[k] : HUGE_VAL;
    for (size_t i = 0; i < nr; i++) {
        L.u[i] = 0;
        L.col[i] = -1;
    }
    for (size_t j = 0; j < nc; j++)
        L.v[j] = 0;
    for (size_t j = 0; j < m; j++)
        L.owner[j] = -1;

    for (size_t i = 0; i < nr; i++)
        add_row(&L, i);

    int rc = PGW_OK;
    ties t = {0};
    for (size_t i = 0; i < nr; i++) {
        size_t first = first_candidate(&L, i);
        if (first == m)
            continue;
        if (!t.block && (rc = build_ties(&t, &L)) < 0)
            goto done;
        improve_row(&L, &t, i, first);
    }
    for (size_t i = 0; i < nr; i++)
        row_to_col[i] = (size_t)L.col[i] < nc ? L.col[i] : -1;
done:
    pgwi_free(t.block);
    pgwi_free(block);
    return rc;
}
