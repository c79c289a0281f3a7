/*
 * tests/bench/bench_renames.c — precision, recall and F1 of rename detection
 * on the corpus of real published format changes (issue 17,
 * tests/data/renames/README.md).
 *
 *   bench-renames [CORPUS_DIR]
 *
 * Pure core, no server: each pair's committed snapshot fixtures
 * (old.snapshot.json, new.snapshot.json, made by make-fixtures) are diffed
 * and the predicted renames scored against its truth.json:
 *   - a predicted rename listed in `renamed` is a true positive (TP);
 *   - one listed in `ambiguous` counts neither way;
 *   - any other predicted rename is a false positive (FP);
 *   - a pair of `renamed` that is not predicted is a false negative (FN).
 * truth.json keeps the names as published; they are compared cut to 63
 * bytes, as PostgreSQL (and the ingest example) cut them.
 *
 * Every strategy is printed side by side in one run: per pair TP/FP/FN,
 * then over the corpus precision = TP/(TP+FP), recall = TP/(TP+FN) and F1,
 * in-sample and held out (leave one pair out), then every FP and FN by
 * name, so that a tuner sees them.
 *
 * A strategy is an entry of `strategies` below: a function from two
 * snapshots (older, newer) and its parameters to a list of predicted
 * renames, with optionally a `tune` step that chooses the parameters from a
 * set of training pairs. A strategy with a tune step is measured twice:
 * in-sample (tuned on every pair, scored on every pair) and leave-one-pair-
 * out (for each pair, tuned on all the others and scored on it alone; the
 * counts summed). A strategy without one has nothing chosen from the
 * corpus: its held-out figure is its in-sample one. A new score is one more
 * entry (a predict function, and a tune function when it has parameters).
 *
 * The corpus directory defaults to the source tree's tests/data/renames
 * (PGW_RENAMES_DIR, set at build time). Exit status: 0, or 1 when the
 * corpus cannot be read (a missing file, a fixture that does not decode, a
 * truth.json name that no snapshot column has).
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgwitness/pgwitness.h"

#ifndef PGW_RENAMES_DIR
#define PGW_RENAMES_DIR "tests/data/renames"
#endif

#define MAX_NAME_BYTES 63 /* PostgreSQL's NAMEDATALEN - 1 */

/* ------------------------------------------------------------------ */
/* Renames and lists of them                                           */

/** One rename, predicted or true: a removed column and an added one. */
typedef struct br_rename {
    char *from, *to;
    double score; /* the strategy's score of the pair, or NAN */
    const char *why; /* a static note on its evidence ("name", "values", ...), or NULL */
} br_rename;

/** A list of renames (owns its strings). */
typedef struct br_renames {
    br_rename *v;
    size_t n, cap;
} br_renames;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("bench-renames: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (!p)
        die("out of memory");
    return p;
}

static void renames_add(br_renames *l, const char *from, const char *to, double score,
                        const char *why)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        if (!l->v)
            die("out of memory");
    }
    l->v[l->n++] = (br_rename){xstrdup(from), xstrdup(to), score, why};
}

static void renames_free(br_renames *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].from);
        free(l->v[i].to);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}

static bool renames_has(const br_renames *l, const char *from, const char *to)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].from, from) == 0 && strcmp(l->v[i].to, to) == 0)
            return true;
    return false;
}

/* ------------------------------------------------------------------ */
/* The corpus                                                          */

/** One pair of the corpus: its two snapshots and its truth. */
typedef struct br_pair {
    char *name;
    pgw_snapshot *old, *new;
    br_renames renamed;   /* the true renames (names cut to 63 bytes) */
    br_renames ambiguous; /* pairs that count neither way */
} br_pair;

/** The corpus: its pairs, in name order. */
typedef struct br_corpus {
    br_pair *pairs;
    size_t n;
} br_corpus;

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot open %s", path);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf)
            die("out of memory");
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        cap *= 2;
        buf = realloc(buf, cap);
    }
    if (ferror(f))
        die("cannot read %s", path);
    fclose(f);
    *len = n;
    return buf;
}

static pgw_snapshot *load_snapshot(const char *dir, const char *pair, const char *side)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s.snapshot.json", dir, pair, side);
    size_t len;
    char *text = read_file(path, &len);
    pgw_snapshot *s = NULL;
    pgw_error err;
    if (pgw_snapshot_from_json(&s, text, len, NULL, &err) < 0)
        die("%s: %s%s%s (regenerate it with tests/data/renames/make-fixtures)", path,
            err.message, err.path[0] ? " at " : "", err.path);
    free(text);
    return s;
}

/* A published name as PostgreSQL keeps it: cut to 63 bytes on a UTF-8
 * character boundary, into buf. */
static const char *pg_name(const char *name, char *buf, size_t size)
{
    size_t n = strlen(name);
    if (n > MAX_NAME_BYTES) {
        n = MAX_NAME_BYTES;
        while (n > 0 && ((unsigned char)name[n] & 0xC0) == 0x80)
            n--;
    }
    snprintf(buf, size, "%.*s", (int)n, name);
    return buf;
}

/* The index of the column named `name`, or -1. */
static long column_index(const pgw_snapshot *s, const char *name)
{
    for (size_t i = 0; i < pgw_snapshot_column_count(s); i++)
        if (strcmp(pgw_snapshot_column(s, i)->name, name) == 0)
            return (long)i;
    return -1;
}

static bool has_column(const pgw_snapshot *s, const char *name)
{
    return column_index(s, name) >= 0;
}

/* Reads truth.json's list `key` ([[old, new], ...]) into *out, each name
 * checked against the pair's snapshots. */
static void truth_list(br_renames *out, json_t *truth, const char *key, const br_pair *p,
                       const char *path)
{
    json_t *list = json_object_get(truth, key);
    if (!json_is_array(list))
        die("%s: \"%s\" is not an array", path, key);
    size_t i;
    json_t *item;
    json_array_foreach(list, i, item) {
        const char *from = json_string_value(json_array_get(item, 0));
        const char *to = json_string_value(json_array_get(item, 1));
        if (!json_is_array(item) || json_array_size(item) != 2 || !from || !to)
            die("%s: %s[%zu] is not [old column, new column]", path, key, i);
        char f[MAX_NAME_BYTES + 1], t[MAX_NAME_BYTES + 1];
        pg_name(from, f, sizeof f);
        pg_name(to, t, sizeof t);
        if (!has_column(p->old, f))
            die("%s: %s[%zu]: old.snapshot.json has no column \"%s\"", path, key, i, f);
        if (!has_column(p->new, t))
            die("%s: %s[%zu]: new.snapshot.json has no column \"%s\"", path, key, i, t);
        renames_add(out, f, t, NAN, NULL);
    }
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Every folder of `dir` with a truth.json, in name order. */
static br_corpus load_corpus(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        die("cannot open the corpus %s (give its path as the argument)", dir);
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s/truth.json", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        fclose(f);
        names = realloc(names, (n + 1) * sizeof *names);
        if (!names)
            die("out of memory");
        names[n++] = xstrdup(e->d_name);
    }
    closedir(d);
    if (n == 0)
        die("%s has no pair (no folder with a truth.json)", dir);
    qsort(names, n, sizeof *names, cmp_str);
    br_corpus c = {calloc(n, sizeof(br_pair)), n};
    if (!c.pairs)
        die("out of memory");
    for (size_t i = 0; i < n; i++) {
        br_pair *p = &c.pairs[i];
        p->name = names[i];
        p->old = load_snapshot(dir, p->name, "old");
        p->new = load_snapshot(dir, p->name, "new");
        char path[4096];
        snprintf(path, sizeof path, "%s/%s/truth.json", dir, p->name);
        json_error_t jerr;
        json_t *truth = json_load_file(path, 0, &jerr);
        if (!json_is_object(truth))
            die("%s: line %d: %s", path, jerr.line, jerr.text);
        truth_list(&p->renamed, truth, "renamed", p, path);
        truth_list(&p->ambiguous, truth, "ambiguous", p, path);
        json_decref(truth);
    }
    free(names);
    return c;
}

static void corpus_free(br_corpus *c)
{
    for (size_t i = 0; i < c->n; i++) {
        br_pair *p = &c->pairs[i];
        free(p->name);
        pgw_snapshot_free(p->old);
        pgw_snapshot_free(p->new);
        renames_free(&p->renamed);
        renames_free(&p->ambiguous);
    }
    free(c->pairs);
}

/* ------------------------------------------------------------------ */
/* Scoring                                                             */

/** Counts over one pair or many. */
typedef struct br_counts {
    size_t tp, fp, fn, ambiguous;
} br_counts;

static br_counts score_pair(const br_pair *p, const br_renames *pred)
{
    br_counts k = {0};
    for (size_t i = 0; i < pred->n; i++) {
        if (renames_has(&p->renamed, pred->v[i].from, pred->v[i].to))
            k.tp++;
        else if (renames_has(&p->ambiguous, pred->v[i].from, pred->v[i].to))
            k.ambiguous++;
        else
            k.fp++;
    }
    for (size_t i = 0; i < p->renamed.n; i++)
        if (!renames_has(pred, p->renamed.v[i].from, p->renamed.v[i].to))
            k.fn++;
    return k;
}

static void counts_add(br_counts *sum, br_counts k)
{
    sum->tp += k.tp;
    sum->fp += k.fp;
    sum->fn += k.fn;
    sum->ambiguous += k.ambiguous;
}

/* Precision, recall, F1; a ratio with nothing to count (no prediction, no
 * true rename) is 1 for precision and recall. */
static void prf(br_counts k, double *p, double *r, double *f1)
{
    *p = k.tp + k.fp ? (double)k.tp / (double)(k.tp + k.fp) : 1.0;
    *r = k.tp + k.fn ? (double)k.tp / (double)(k.tp + k.fn) : 1.0;
    *f1 = *p + *r > 0 ? 2 * *p * *r / (*p + *r) : 0.0;
}

static double f1_of(br_counts k)
{
    double p, r, f;
    prf(k, &p, &r, &f);
    return f;
}

/* ------------------------------------------------------------------ */
/* Strategies                                                          */

typedef struct br_strategy br_strategy;

/**
 * A way of predicting renames. `predict` gets the older and the newer
 * snapshot and the parameters (a `params_size`-byte object, first copied
 * from `defaults`) and appends its renames to *out. `tune`, when not NULL,
 * chooses the parameters from the pairs whose train[i] is true (writing
 * *params, which holds the defaults on entry); `describe` prints them.
 */
struct br_strategy {
    const char *key;   /* the column header, at most 12 bytes */
    const char *label; /* one line: what it is */
    size_t params_size;
    const void *defaults;
    void (*predict)(br_renames *out, const pgw_snapshot *a, const pgw_snapshot *b,
                    const void *params);
    void (*tune)(void *params, const br_strategy *self, const br_corpus *c, const bool *train);
    void (*describe)(char *buf, size_t size, const void *params);
    /* Parameters chosen on the whole corpus beforehand (the shipped
     * defaults): no held-out figure of its own is printed. */
    bool chosen_on_corpus;
};

/* Counts of `s` with `params` over the pairs whose use[i] is true (NULL:
 * all). */
static br_counts run_on(const br_strategy *s, const void *params, const br_corpus *c,
                        const bool *use)
{
    br_counts sum = {0};
    for (size_t i = 0; i < c->n; i++) {
        if (use && !use[i])
            continue;
        br_renames pred = {0};
        s->predict(&pred, c->pairs[i].old, c->pairs[i].new, params);
        counts_add(&sum, score_pair(&c->pairs[i], &pred));
        renames_free(&pred);
    }
    return sum;
}

static void check_diff(int rc, const pgw_error *err)
{
    if (rc < 0)
        die("pgw_diff_snapshots: %s", err->message);
}

/* Parameters of the strategies built on today's rules (PGW_RENAME_PROFILE). */
typedef struct diff_params {
    double rename_threshold; /* pgw_diff_options.rename_threshold */
} diff_params;

/* The renames of pgw_diff_snapshots with options o whose evidence has one
 * of the bits of `evidence`. */
static void diff_renames_with(br_renames *out, const pgw_snapshot *a, const pgw_snapshot *b,
                              const pgw_diff_options *o, unsigned evidence)
{
    pgw_diff *d = NULL;
    pgw_error err;
    check_diff(pgw_diff_snapshots(&d, a, b, o, &err), &err);
    for (size_t i = 0; i < pgw_diff_renamed_count(d); i++) {
        const pgw_rename *r = pgw_diff_renamed(d, i);
        if (r->evidence & evidence)
            renames_add(out, r->from, r->to, r->score,
                        r->evidence == PGW_EVIDENCE_BOTH   ? "name+values"
                        : r->evidence == PGW_EVIDENCE_NAME ? "name"
                                                           : "values");
    }
    pgw_diff_free(d);
}

/* Today's rules: PGW_RENAME_PROFILE with the threshold of p. */
static void diff_renames(br_renames *out, const pgw_snapshot *a, const pgw_snapshot *b,
                         const diff_params *p, unsigned evidence)
{
    pgw_diff_options o = PGW_DIFF_OPTIONS_INIT;
    o.rename_method = PGW_RENAME_PROFILE;
    o.rename_threshold = p->rename_threshold;
    diff_renames_with(out, a, b, &o, evidence);
}

/* (a) Today's rules: pgw_diff_snapshots with PGW_RENAME_PROFILE (the rules
 * of diff format 1). */
static void predict_today(br_renames *out, const pgw_snapshot *a, const pgw_snapshot *b,
                          const void *params)
{
    diff_renames(out, a, b, params, PGW_EVIDENCE_NAME | PGW_EVIDENCE_VALUES);
}

/* (b) Names alone: today's renames with name evidence (NAME or BOTH). The
 * diff pairs name evidence first, so a value pair never takes a column
 * from a name pair: these are exactly the pairs names alone would make. */
static void predict_names(br_renames *out, const pgw_snapshot *a, const pgw_snapshot *b,
                          const void *params)
{
    diff_renames(out, a, b, params, PGW_EVIDENCE_NAME);
}

/* (c) Values alone: today's value rule without the names — every removed
 * column (its name not in b) against every added one (not in a), a pair
 * when pgw_profile_similarity is at least the threshold (and above 0),
 * one-to-one, chosen greedily as the diff chooses: higher score first,
 * then earlier in a, then earlier in b. Computed here rather than by
 * filtering the diff's value pairs, which a name pair may have displaced. */
typedef struct cand {
    size_t i, j;
    double score;
} cand;

static int cmp_cand(const void *x, const void *y)
{
    const cand *p = x, *q = y;
    if (p->score != q->score)
        return p->score > q->score ? -1 : 1;
    if (p->i != q->i)
        return p->i < q->i ? -1 : 1;
    return p->j < q->j ? -1 : (p->j > q->j);
}

static void predict_values(br_renames *out, const pgw_snapshot *a, const pgw_snapshot *b,
                           const void *params)
{
    const diff_params *p = params;
    size_t na = pgw_snapshot_column_count(a), nb = pgw_snapshot_column_count(b), nc = 0;
    cand *cands = malloc((na * nb + 1) * sizeof *cands);
    bool *used_a = calloc(na + 1, 1), *used_b = calloc(nb + 1, 1);
    if (!cands || !used_a || !used_b)
        die("out of memory");
    for (size_t i = 0; i < na; i++) {
        if (has_column(b, pgw_snapshot_column(a, i)->name))
            continue;
        for (size_t j = 0; j < nb; j++) {
            if (has_column(a, pgw_snapshot_column(b, j)->name))
                continue;
            double s;
            pgw_error err;
            if (pgw_profile_similarity(&s, NULL, a, i, b, j, &err) < 0)
                die("pgw_profile_similarity: %s", err.message);
            if (s >= p->rename_threshold && s > 0)
                cands[nc++] = (cand){i, j, s};
        }
    }
    qsort(cands, nc, sizeof *cands, cmp_cand);
    for (size_t k = 0; k < nc; k++) {
        if (used_a[cands[k].i] || used_b[cands[k].j])
            continue;
        used_a[cands[k].i] = used_b[cands[k].j] = true;
        renames_add(out, pgw_snapshot_column(a, cands[k].i)->name,
                    pgw_snapshot_column(b, cands[k].j)->name, cands[k].score, "values");
    }
    free(cands);
    free(used_a);
    free(used_b);
}

/* Tuning a diff_params threshold: the value of 0.30, 0.35, ..., 1.00 with
 * the best F1 on the training pairs; among equals, the one nearest the
 * default (then the lower). */
static void tune_threshold(void *params, const br_strategy *self, const br_corpus *c,
                           const bool *train)
{
    diff_params *p = params;
    const double def = ((const diff_params *)self->defaults)->rename_threshold;
    double best = def, best_f1 = -1;
    for (int k = 30; k <= 100; k += 5) {
        diff_params t = {k / 100.0};
        double f1 = f1_of(run_on(self, &t, c, train));
        if (f1 > best_f1 + 1e-12 ||
            (fabs(f1 - best_f1) <= 1e-12 && fabs(t.rename_threshold - def) < fabs(best - def))) {
            best_f1 = f1;
            best = t.rename_threshold;
        }
    }
    p->rename_threshold = best;
}

static void describe_threshold(char *buf, size_t size, const void *params)
{
    snprintf(buf, size, "rename_threshold %.2f", ((const diff_params *)params)->rename_threshold);
}

static const diff_params today_defaults = {0.6}; /* format 1's default */

/* ---- the combined score (PGW_RENAME_COMBINED) ---- */

/* Its tuned parameters; type and position stay at their defaults (0.05
 * each: weak evidence, fixed before any measurement). */
typedef struct combined_params {
    double threshold; /* rename_threshold */
    double name;      /* rename_weights.name; rename_weights.values = 1 - name */
    double shape;     /* rename_weights.shape */
    double contrast;  /* rename_weights.contrast: not tuned (1, or 0 for (f)) */
} combined_params;

static pgw_diff_options combined_options(const combined_params *p)
{
    pgw_diff_options o = PGW_DIFF_OPTIONS_INIT;
    o.rename_threshold = p->threshold;
    o.rename_weights.name = p->name;
    o.rename_weights.values = 1.0 - p->name;
    o.rename_weights.shape = p->shape;
    o.rename_weights.contrast = p->contrast;
    return o;
}

/* (d), (e) The combined score and the optimal assignment. */
static void predict_combined(br_renames *out, const pgw_snapshot *a, const pgw_snapshot *b,
                             const void *params)
{
    pgw_diff_options o = combined_options(params);
    diff_renames_with(out, a, b, &o, PGW_EVIDENCE_NAME | PGW_EVIDENCE_VALUES);
}

/* The shipped defaults, as combined_params (the weights normalised to name
 * + values = 1). */
static combined_params shipped_defaults(void)
{
    pgw_diff_options o = PGW_DIFF_OPTIONS_INIT;
    const pgw_rename_weights *w = &o.rename_weights;
    return (combined_params){o.rename_threshold, w->name / (w->name + w->values), w->shape,
                             w->contrast};
}

/* The grid the tune step searches: coarse, 8 x 5 x 7 = 280 points. */
static const double grid_name[] = {0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60, 0.65};
static const double grid_shape[] = {0.2, 0.4, 0.5, 0.6, 0.8};
static const double grid_threshold[] = {0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60};
#define N_GRID_NAME (sizeof grid_name / sizeof grid_name[0])
#define N_GRID_SHAPE (sizeof grid_shape / sizeof grid_shape[0])
#define N_GRID_THRESHOLD (sizeof grid_threshold / sizeof grid_threshold[0])
#define N_GRID (N_GRID_NAME * N_GRID_SHAPE * N_GRID_THRESHOLD)

/* Grid point g as its three indexes, and back: threshold fastest, then
 * shape, then name weight. */
static void grid_coords(size_t g, size_t *nm, size_t *sh, size_t *t)
{
    *t = g % N_GRID_THRESHOLD;
    *sh = g / N_GRID_THRESHOLD % N_GRID_SHAPE;
    *nm = g / N_GRID_THRESHOLD / N_GRID_SHAPE;
}

static size_t grid_index(size_t nm, size_t sh, size_t t)
{
    return (nm * N_GRID_SHAPE + sh) * N_GRID_THRESHOLD + t;
}

/* Grid point g of strategy self (its contrast weight is not tuned). */
static combined_params grid_point(size_t g, const br_strategy *self)
{
    size_t nm, sh, t;
    grid_coords(g, &nm, &sh, &t);
    return (combined_params){grid_threshold[t], grid_name[nm], grid_shape[sh],
                             ((const combined_params *)self->defaults)->contrast};
}

/* Per grid point and pair, the counts (computed once per strategy: every
 * fold sums its training pairs from it). */
static br_counts *grid_counts(const br_strategy *self, const br_corpus *c)
{
    static br_counts *table;
    static const br_corpus *of;
    static const br_strategy *by;
    if (table && of == c && by == self)
        return table;
    by = self;
    free(table);
    table = calloc(N_GRID * c->n, sizeof *table);
    if (!table)
        die("out of memory");
    of = c;
    bool *one = calloc(c->n, 1);
    if (!one)
        die("out of memory");
    for (size_t g = 0; g < N_GRID; g++) {
        combined_params p = grid_point(g, self);
        for (size_t i = 0; i < c->n; i++) {
            one[i] = true;
            table[g * c->n + i] = run_on(self, &p, c, one);
            one[i] = false;
        }
    }
    free(one);
    return table;
}

/* The training F1 and precision of every grid point. */
static void grid_scores(double *f1, double *pr, const br_strategy *self, const br_corpus *c,
                        const bool *train)
{
    const br_counts *table = grid_counts(self, c);
    for (size_t g = 0; g < N_GRID; g++) {
        br_counts k = {0};
        for (size_t i = 0; i < c->n; i++)
            if (!train || train[i])
                counts_add(&k, table[g * c->n + i]);
        double r;
        prf(k, &pr[g], &r, &f1[g]);
    }
}

/* The mean training F1 of a grid point and its neighbours, one step along
 * each axis (up to 27 points). */
static double neighbourhood_f1(const double *f1, size_t g)
{
    size_t nm, sh, t;
    grid_coords(g, &nm, &sh, &t);
    double sum = 0;
    int n = 0;
    for (size_t a = nm ? nm - 1 : 0; a <= nm + 1 && a < N_GRID_NAME; a++)
        for (size_t b = sh ? sh - 1 : 0; b <= sh + 1 && b < N_GRID_SHAPE; b++)
            for (size_t d = t ? t - 1 : 0; d <= t + 1 && d < N_GRID_THRESHOLD; d++) {
                sum += f1[grid_index(a, b, d)];
                n++;
            }
    return sum / n;
}

/* Tuning the combined score: the grid point with the best F1 on the
 * training pairs; among equals, the one whose neighbourhood (one grid step
 * along each axis) has the best mean F1, so that the choice sits inside a
 * plateau of good points rather than on its edge, where one more pair
 * tips it over; then the better precision, then the higher threshold (the
 * more cautious), then the first in grid order (name weight, then shape,
 * ascending). */
static void tune_combined(void *params, const br_strategy *self, const br_corpus *c,
                          const bool *train)
{
    static double f1[N_GRID], pr[N_GRID];
    grid_scores(f1, pr, self, c, train);
    double best_f1 = -1, best_nb = -1, best_p = -1, best_t = -1;
    size_t best = 0;
    for (size_t g = 0; g < N_GRID; g++) {
        double nb = neighbourhood_f1(f1, g), t = grid_point(g, self).threshold;
        bool better;
        if (fabs(f1[g] - best_f1) > 1e-12)
            better = f1[g] > best_f1;
        else if (fabs(nb - best_nb) > 1e-12)
            better = nb > best_nb;
        else if (fabs(pr[g] - best_p) > 1e-12)
            better = pr[g] > best_p;
        else
            better = t > best_t;
        if (better) {
            best_f1 = f1[g];
            best_nb = nb;
            best_p = pr[g];
            best_t = t;
            best = g;
        }
    }
    *(combined_params *)params = grid_point(best, self);
}

static void describe_combined(char *buf, size_t size, const void *params)
{
    const combined_params *p = params;
    snprintf(buf, size, "threshold %.2f, name %.2f, values %.2f, shape %.1f%s", p->threshold,
             p->name, 1.0 - p->name, p->shape, p->contrast == 0 ? ", contrast 0" : "");
}

static combined_params combined_defaults; /* shipped_defaults(), set in main */
static combined_params uncontrasted;      /* the same with contrast 0 */

/* The strategies, in the order they are printed. */
static const br_strategy strategies[] = {
    {"(a) today", "today's rules: pgw_diff_snapshots with PGW_RENAME_PROFILE, the rules of "
                  "diff format 1 (names equal once folded, or values >= 0.6; greedy, name "
                  "evidence first)",
     sizeof(diff_params), &today_defaults, predict_today, NULL, describe_threshold,
     false},
    {"(b) names", "names alone: today's renames with name evidence (name or both)",
     sizeof(diff_params), &today_defaults, predict_names, NULL, NULL, false},
    {"(c) values", "values alone: profile similarity >= 0.6, greedy one-to-one, no name "
                   "evidence",
     sizeof(diff_params), &today_defaults, predict_values, NULL, describe_threshold,
     false},
    {"(a') tuned", "today's rules with rename_threshold chosen from 0.30..1.00 by F1 (a "
                   "check of the leave-one-pair-out machinery)",
     sizeof(diff_params), &today_defaults, predict_today, tune_threshold,
     describe_threshold, false},
    {"(d) default", "the combined score with the shipped defaults (PGW_DIFF_OPTIONS_INIT; "
                    "chosen on every pair, so its figure is in-sample)",
     sizeof(combined_params), &combined_defaults, predict_combined, NULL, describe_combined,
     true},
    {"(e) combined", "the combined score, threshold, name weight and shape share tuned on "
                     "a 280-point grid (type and position 0.05 each)",
     sizeof(combined_params), &combined_defaults, predict_combined, tune_combined,
     describe_combined, false},
    {"(f) no contr", "(e) without the contrast (rename_weights.contrast 0: the kept columns "
                     "are not read), tuned on the same grid",
     sizeof(combined_params), &uncontrasted, predict_combined, tune_combined,
     describe_combined, false},
};
#define N_STRATEGIES (sizeof strategies / sizeof strategies[0])

/* ------------------------------------------------------------------ */
/* The report                                                          */

/* What one strategy gave: per pair, in-sample and held out. */
typedef struct br_result {
    unsigned char params[64]; /* in-sample parameters (tuned on every pair, or the defaults) */
    br_counts *pair;          /* [n] in-sample, per pair */
    br_counts in, out;        /* summed in-sample; summed held out */
    char held_out_params[512]; /* what each held-out tune chose, summarised */
    char held_out_moved[1024]; /* the folds whose held-out pair scored otherwise than in-sample */
} br_result;

static void evaluate(br_result *r, const br_strategy *s, const br_corpus *c)
{
    if (s->params_size > sizeof r->params)
        die("strategy %s: parameters of %zu bytes, more than %zu", s->key, s->params_size,
            sizeof r->params);
    memcpy(r->params, s->defaults, s->params_size);
    if (s->tune)
        s->tune(r->params, s, c, NULL);
    r->pair = calloc(c->n, sizeof *r->pair);
    if (!r->pair)
        die("out of memory");
    for (size_t i = 0; i < c->n; i++) {
        br_renames pred = {0};
        s->predict(&pred, c->pairs[i].old, c->pairs[i].new, r->params);
        r->pair[i] = score_pair(&c->pairs[i], &pred);
        counts_add(&r->in, r->pair[i]);
        renames_free(&pred);
    }
    if (!s->tune) {
        r->out = r->in;
        snprintf(r->held_out_params, sizeof r->held_out_params,
                 "nothing tuned: the same as in-sample");
        return;
    }
    /* Leave one pair out: tuned on the others, scored on the one. */
    bool *train = malloc(c->n), *one = malloc(c->n);
    if (!train || !one)
        die("out of memory");
    /* What the folds chose: each distinct description and how often. */
    char chosen[8][96];
    size_t times[8], distinct = 0;
    for (size_t i = 0; i < c->n; i++) {
        for (size_t k = 0; k < c->n; k++) {
            train[k] = k != i;
            one[k] = k == i;
        }
        unsigned char params[sizeof r->params];
        memcpy(params, s->defaults, s->params_size);
        s->tune(params, s, c, train);
        br_counts got = run_on(s, params, c, one);
        counts_add(&r->out, got);
        if (!s->describe)
            continue;
        char cur[96];
        s->describe(cur, sizeof cur, params);
        size_t moved = strlen(r->held_out_moved);
        if ((got.tp != r->pair[i].tp || got.fp != r->pair[i].fp) &&
            moved < sizeof r->held_out_moved)
            snprintf(r->held_out_moved + moved, sizeof r->held_out_moved - moved,
                     "    %s: TP/FP/FN %zu/%zu/%zu (in-sample %zu/%zu/%zu), with %s\n",
                     c->pairs[i].name, got.tp, got.fp, got.fn, r->pair[i].tp, r->pair[i].fp,
                     r->pair[i].fn, cur);
        size_t k = 0;
        while (k < distinct && strcmp(chosen[k], cur) != 0)
            k++;
        if (k == distinct && distinct < 8) {
            snprintf(chosen[distinct], sizeof chosen[distinct], "%s", cur);
            times[distinct++] = 0;
        }
        if (k < distinct)
            times[k]++;
    }
    free(train);
    free(one);
    size_t len = 0;
    for (size_t k = 0; k < distinct && len < sizeof r->held_out_params; k++)
        len += (size_t)snprintf(r->held_out_params + len, sizeof r->held_out_params - len,
                                "%s%s in %zu of %zu folds", k ? "; " : "", chosen[k], times[k],
                                c->n);
}

/* The FPs and FNs of one strategy, by pair. */
static void print_errors(const br_strategy *s, const br_result *r, const br_corpus *c)
{
    printf("\n%s — %s\n", s->key, s->label);
    if (s->describe) {
        char buf[128];
        s->describe(buf, sizeof buf, r->params);
        printf("  parameters: %s%s\n", buf, s->tune ? " (tuned on every pair)" : "");
    }
    size_t shown = 0;
    for (size_t i = 0; i < c->n; i++) {
        const br_pair *p = &c->pairs[i];
        br_renames pred = {0};
        s->predict(&pred, p->old, p->new, r->params);
        for (size_t k = 0; k < pred.n; k++) {
            const br_rename *x = &pred.v[k];
            if (renames_has(&p->renamed, x->from, x->to))
                continue;
            bool amb = renames_has(&p->ambiguous, x->from, x->to);
            printf("  %s %-34s \"%s\" -> \"%s\"", amb ? "amb" : "FP ", p->name, x->from, x->to);
            if (!isnan(x->score))
                printf("  (score %.4f%s%s)", x->score, x->why ? ", " : "", x->why ? x->why : "");
            printf("\n");
            shown++;
        }
        for (size_t k = 0; k < p->renamed.n; k++) {
            const br_rename *t = &p->renamed.v[k];
            if (renames_has(&pred, t->from, t->to))
                continue;
            /* The profile similarity and the combined score (with the
             * strategy's weights when it has them, else the defaults) of
             * the missed pair, for a tuner. */
            size_t ia = (size_t)column_index(p->old, t->from),
                   ib = (size_t)column_index(p->new, t->to);
            double sim = NAN, comb = NAN;
            if (pgw_profile_similarity(&sim, NULL, p->old, ia, p->new, ib, NULL) < 0)
                sim = NAN;
            pgw_diff_options o = PGW_DIFF_OPTIONS_INIT;
            if (s->predict == predict_combined)
                o = combined_options((const combined_params *)r->params);
            pgw_rename_parts rp;
            if (pgw_rename_score(&comb, &rp, p->old, ia, p->new, ib, &o, NULL) < 0)
                comb = NAN;
            printf("  FN  %-34s \"%s\" -> \"%s\"  (profile similarity %.4f; combined %.4f: "
                   "name %.4f, values %.4f, type %.1f, position %.4f)\n",
                   p->name, t->from, t->to, sim, comb, rp.name, rp.values, rp.type, rp.position);
            shown++;
        }
        renames_free(&pred);
    }
    if (!shown)
        printf("  no FP, no FN\n");
}

/* The unrelated-pair probe: every ordered pair of two distinct columns of
 * one snapshot of the corpus (old and new of each pair) is scored as a
 * rename the way strategy `s` with `params` scores one, and those at or over
 * its threshold are counted. Two columns of one table are never a rename,
 * so the count is how many unrelated pairs the rule would accept if one were
 * removed and the other added: the exposure a lower threshold buys. The
 * value rule of (a) and (c) is the profile similarity (names of one table
 * are distinct, so (a)'s equal-folded-names rule is not probed, and (b)
 * gets no figure). Returns false when the strategy has no such figure;
 * *pairs is the number of ordered pairs. */
static bool unrelated_over(size_t *over, size_t *pairs, const br_strategy *s, const void *params,
                           const br_corpus *c)
{
    bool combined = s->predict == predict_combined;
    if (!combined && s->predict != predict_today && s->predict != predict_values)
        return false;
    pgw_diff_options o = PGW_DIFF_OPTIONS_INIT;
    double threshold;
    if (combined) {
        o = combined_options(params);
        threshold = o.rename_threshold;
    } else {
        threshold = ((const diff_params *)params)->rename_threshold;
    }
    *over = *pairs = 0;
    for (size_t i = 0; i < c->n; i++)
        for (int side = 0; side < 2; side++) {
            const pgw_snapshot *t = side ? c->pairs[i].new : c->pairs[i].old;
            size_t n = pgw_snapshot_column_count(t);
            for (size_t x = 0; x < n; x++)
                for (size_t y = 0; y < n; y++) {
                    if (x == y)
                        continue;
                    pgw_error err;
                    double v;
                    if (combined) {
                        pgw_rename_parts rp;
                        if (pgw_rename_score(&v, &rp, t, x, t, y, &o, &err) < 0)
                            die("pgw_rename_score: %s", err.message);
                    } else if (pgw_profile_similarity(&v, NULL, t, x, t, y, &err) < 0) {
                        die("pgw_profile_similarity: %s", err.message);
                    }
                    (*pairs)++;
                    if (v > 0 && v >= threshold)
                        (*over)++;
                }
        }
    return true;
}

int main(int argc, char **argv)
{
    if (argc > 2 || (argc == 2 && (strcmp(argv[1], "-h") == 0 ||
                                   strcmp(argv[1], "--help") == 0))) {
        fprintf(argc > 2 ? stderr : stdout,
                "usage: bench-renames [CORPUS_DIR]   (default %s)\n", PGW_RENAMES_DIR);
        return argc > 2 ? 2 : 0;
    }
    const char *dir = argc == 2 ? argv[1] : PGW_RENAMES_DIR;
    combined_defaults = shipped_defaults();
    uncontrasted = combined_defaults;
    uncontrasted.contrast = 0;
    br_corpus c = load_corpus(dir);
    size_t truths = 0, ambiguous = 0;
    for (size_t i = 0; i < c.n; i++) {
        truths += c.pairs[i].renamed.n;
        ambiguous += c.pairs[i].ambiguous.n;
    }
    printf("pgwitness %s — rename detection on %zu format changes of the corpus (%s)\n",
           pgw_version(), c.n, dir);
    printf("%zu true renames, %zu ambiguous pairs (predicted: counted neither way)\n\n", truths,
           ambiguous);

    br_result res[N_STRATEGIES];
    memset(res, 0, sizeof res);
    for (size_t s = 0; s < N_STRATEGIES; s++)
        evaluate(&res[s], &strategies[s], &c);

    printf("%-34s %5s", "pair", "true");
    for (size_t s = 0; s < N_STRATEGIES; s++)
        printf(" | %-12s", strategies[s].key);
    printf("\n%-34s %5s", "", "");
    for (size_t s = 0; s < N_STRATEGIES; s++)
        printf(" | %3s %3s %4s", "TP", "FP", "FN");
    printf("\n");
    for (size_t i = 0; i < c.n; i++) {
        printf("%-34s %5zu", c.pairs[i].name, c.pairs[i].renamed.n);
        for (size_t s = 0; s < N_STRATEGIES; s++)
            printf(" | %3zu %3zu %4zu", res[s].pair[i].tp, res[s].pair[i].fp, res[s].pair[i].fn);
        printf("\n");
    }
    printf("%-34s %5zu", "total", truths);
    for (size_t s = 0; s < N_STRATEGIES; s++)
        printf(" | %3zu %3zu %4zu", res[s].in.tp, res[s].in.fp, res[s].in.fn);
    printf("\n\n");

    static const char *const rows[] = {"precision", "recall", "F1"};
    for (int held = 0; held < 2; held++) {
        printf("%s\n", held ? "held out (leave one pair out: tuned on the other pairs)"
                            : "in-sample (every pair)");
        for (int k = 0; k < 3; k++) {
            printf("  %-38s", rows[k]);
            for (size_t s = 0; s < N_STRATEGIES; s++) {
                /* (e)'s held-out figure measures the procedure that
                 * chose the shipped defaults. */
                if (held && strategies[s].chosen_on_corpus) {
                    printf(" | %12s", "in-sample");
                    continue;
                }
                double v[3];
                prf(held ? res[s].out : res[s].in, &v[0], &v[1], &v[2]);
                printf(" | %12.3f", v[k]);
            }
            printf("\n");
        }
    }
    size_t probed = 0;
    printf("unrelated pairs (two distinct columns of one snapshot) at or over the threshold\n");
    printf("  %-38s", "in-sample parameters");
    for (size_t s = 0; s < N_STRATEGIES; s++) {
        size_t over;
        if (unrelated_over(&over, &probed, &strategies[s], res[s].params, &c))
            printf(" | %12zu", over);
        else
            printf(" | %12s", "-");
    }
    printf("\n  (of %zu ordered pairs; the value rule alone for (a) and (c))\n", probed);
    for (size_t k = 0; k < N_STRATEGIES; k++)
        if (strategies[k].tune == tune_combined && strategies[k].defaults == &combined_defaults) {
            const combined_params *t = (const combined_params *)res[k].params;
            bool same = t->threshold == combined_defaults.threshold &&
                        fabs(t->name - combined_defaults.name) < 1e-9 &&
                        t->shape == combined_defaults.shape;
            char buf[128];
            describe_combined(buf, sizeof buf, t);
            printf("\nthe shipped defaults (PGW_DIFF_OPTIONS_INIT) %s the in-sample choice of "
                   "%s: %s\n",
                   same ? "are" : "are NOT", strategies[k].key, buf);
        }
    printf("\nwhat each held-out tune chose:\n");
    for (size_t s = 0; s < N_STRATEGIES; s++)
        printf("  %-12s %s\n", strategies[s].key, res[s].held_out_params);
    printf("\nthe folds whose held-out pair scores otherwise than in-sample:\n");
    for (size_t s = 0; s < N_STRATEGIES; s++)
        if (strategies[s].tune)
            printf("  %s\n%s", strategies[s].key,
                   res[s].held_out_moved[0] ? res[s].held_out_moved : "    none\n");

    for (size_t s = 0; s < N_STRATEGIES; s++)
        print_errors(&strategies[s], &res[s], &c);
    for (size_t s = 0; s < N_STRATEGIES; s++)
        free(res[s].pair);
    corpus_free(&c);
    return 0;
}
