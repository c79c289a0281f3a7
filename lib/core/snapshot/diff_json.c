/*
 * lib/core/snapshot/diff_json.c — the diff JSON format, written (format 2) and
 * read (formats 1 and 2) strictly. Field-by-field documentation:
 * docs/formats.md.
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>

#include "diff_internal.h"
#include "json.h"
#include "rename_score.h"
#include "snapshot_internal.h"

/* The format written, and the oldest one read. Format 2 added
 * rename_method and each rename's parts. */
#define PGW_DIFF_FORMAT 2
#define PGW_DIFF_FORMAT_OLDEST 1

static const char *const method_names[] = {"combined", "profile", NULL};
static const pgw_rename_method methods[] = {PGW_RENAME_COMBINED, PGW_RENAME_PROFILE};

static const struct {
    unsigned flag;
    const char *name;
} anomaly_names[] = {
    {PGW_ANOMALY_BOM, "bom"},
    {PGW_ANOMALY_LEADING_SPACE, "leading_space"},
    {PGW_ANOMALY_TRAILING_SPACE, "trailing_space"},
    {PGW_ANOMALY_CONTROL, "control"},
};
#define N_ANOMALY (sizeof anomaly_names / sizeof anomaly_names[0])

/* ------------------------------------------------------------------ */
/* encode                                                              */

static json_t *side_json(const pgw_diff_side *s)
{
    char ts[PGW_TIMESTAMP_SIZE];
    if (pgw_timestamp_format(ts, s->captured_at) < 0)
        return NULL;
    json_t *o = json_object();
    if (!o || pgwi_json_set(o, "schema", json_string(s->schema), NULL) < 0 ||
        pgwi_json_set(o, "table", json_string(s->table), NULL) < 0 ||
        pgwi_json_set(o, "resource_identity",
                      s->resource ? json_string(s->resource) : json_null(), NULL) < 0 ||
        pgwi_json_set(o, "captured_at", json_string(ts), NULL) < 0 ||
        pgwi_json_set(o, "schema_hash", json_string(s->schema_hash), NULL) < 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *columns_json(const pgw_diff_column *c, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        json_t *o = json_object();
        if (pgwi_json_append(a, o, NULL) < 0 ||
            pgwi_json_set(o, "column", json_string(c[i].column), NULL) < 0 ||
            pgwi_json_set(o, "type", json_string(c[i].type), NULL) < 0 ||
            pgwi_json_set(o, "position", json_integer(c[i].position), NULL) < 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

/* A part: its value, or null when it was not computed (-1). */
static json_t *part_json(double v)
{
    return v < 0 ? json_null() : pgwi_json_real(v);
}

/* A rename's parts; null when they were not recorded (a diff read from a
 * format-1 document: every part is -1 then). */
static json_t *parts_json(const pgw_rename_parts *p)
{
    if (p->score < 0)
        return json_null();
    json_t *o = json_object();
    if (!o || pgwi_json_set(o, "score", part_json(p->score), NULL) < 0 ||
        pgwi_json_set(o, "name", part_json(p->name), NULL) < 0 ||
        pgwi_json_set(o, "values", part_json(p->values), NULL) < 0 ||
        pgwi_json_set(o, "profile", part_json(p->profile), NULL) < 0 ||
        pgwi_json_set(o, "shape", part_json(p->shape), NULL) < 0 ||
        pgwi_json_set(o, "type", part_json(p->type), NULL) < 0 ||
        pgwi_json_set(o, "position", part_json(p->position), NULL) < 0 ||
        pgwi_json_set(o, "contrast", part_json(p->contrast), NULL) < 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static const char *method_name(pgw_rename_method m)
{
    return m == PGW_RENAME_PROFILE ? "profile" : "combined";
}

static json_t *diff_json(const pgw_diff *d)
{
    json_t *o = json_object();
    json_t *a = NULL;
    if (!o)
        return NULL;
    if (pgwi_json_set(o, "format", json_integer(PGW_DIFF_FORMAT), NULL) < 0 ||
        pgwi_json_set(o, "from", side_json(&d->from), NULL) < 0 ||
        pgwi_json_set(o, "to", side_json(&d->to), NULL) < 0 ||
        pgwi_json_set(o, "schema_changed", json_boolean(d->schema_changed), NULL) < 0 ||
        pgwi_json_set(o, "class", json_string(pgw_change_class_name(d->cls)), NULL) < 0 ||
        pgwi_json_set(o, "added", columns_json(d->added, d->n_added), NULL) < 0 ||
        pgwi_json_set(o, "removed", columns_json(d->removed, d->n_removed), NULL) < 0)
        goto fail;
    if (!(a = json_array()))
        goto fail;
    for (size_t i = 0; i < d->n_type; i++) {
        json_t *t = json_object();
        if (pgwi_json_append(a, t, NULL) < 0 ||
            pgwi_json_set(t, "column", json_string(d->type_changed[i].column), NULL) < 0 ||
            pgwi_json_set(t, "from", json_string(d->type_changed[i].from), NULL) < 0 ||
            pgwi_json_set(t, "to", json_string(d->type_changed[i].to), NULL) < 0)
            goto fail;
    }
    int rc = pgwi_json_set(o, "type_changed", a, NULL);
    a = NULL;
    if (rc < 0 || pgwi_json_set(o, "reordered", json_boolean(d->reordered), NULL) < 0 ||
        pgwi_json_set(o, "rename_method", json_string(method_name(d->method)), NULL) < 0 ||
        !(a = json_array()))
        goto fail;
    for (size_t i = 0; i < d->n_renamed; i++) {
        const pgw_rename *r = &d->renamed[i];
        json_t *t = json_object();
        if (pgwi_json_append(a, t, NULL) < 0 ||
            pgwi_json_set(t, "from", json_string(r->from), NULL) < 0 ||
            pgwi_json_set(t, "to", json_string(r->to), NULL) < 0 ||
            pgwi_json_set(t, "from_type", json_string(r->from_type), NULL) < 0 ||
            pgwi_json_set(t, "to_type", json_string(r->to_type), NULL) < 0 ||
            pgwi_json_set(t, "score", pgwi_json_real(r->score), NULL) < 0 ||
            pgwi_json_set(t, "evidence", json_string(pgwi_evidence_name(r->evidence)), NULL) < 0 ||
            pgwi_json_set(t, "parts", parts_json(&r->parts), NULL) < 0)
            goto fail;
    }
    rc = pgwi_json_set(o, "renamed_candidates", a, NULL);
    a = NULL;
    if (rc < 0 || !(a = json_array()))
        goto fail;
    for (size_t i = 0; i < d->n_profile; i++) {
        json_t *t = json_object();
        if (pgwi_json_append(a, t, NULL) < 0 ||
            pgwi_json_set(t, "column", json_string(d->profile_changed[i].column), NULL) < 0 ||
            pgwi_json_set(t, "score", pgwi_json_real(d->profile_changed[i].score), NULL) < 0)
            goto fail;
    }
    rc = pgwi_json_set(o, "profile_changed", a, NULL);
    a = NULL;
    json_t *rows = json_object();
    if (rc < 0 || pgwi_json_set(o, "row_estimate", rows, NULL) < 0 ||
        pgwi_json_set(rows, "from",
                      d->from.has_row_estimate ? json_integer(d->from.row_estimate) : json_null(),
                      NULL) < 0 ||
        pgwi_json_set(rows, "to",
                      d->to.has_row_estimate ? json_integer(d->to.row_estimate) : json_null(),
                      NULL) < 0 ||
        !(a = json_array()))
        goto fail;
    for (size_t i = 0; i < d->n_anom; i++) {
        const pgw_name_anomaly_report *r = &d->anomalies[i];
        json_t *t = json_object(), *flags = json_array();
        if (pgwi_json_append(a, t, NULL) < 0) {
            json_decref(flags);
            goto fail;
        }
        if (pgwi_json_set(t, "column", json_string(r->column), NULL) < 0 ||
            pgwi_json_set(t, "side", json_string(r->in_to ? "to" : "from"), NULL) < 0 ||
            pgwi_json_set(t, "anomalies", flags, NULL) < 0)
            goto fail;
        for (size_t k = 0; k < N_ANOMALY; k++)
            if ((r->anomalies & anomaly_names[k].flag) &&
                pgwi_json_append(flags, json_string(anomaly_names[k].name), NULL) < 0)
                goto fail;
    }
    rc = pgwi_json_set(o, "name_anomalies", a, NULL);
    a = NULL;
    if (rc < 0)
        goto fail;
    return o;
fail:
    json_decref(a);
    json_decref(o);
    return NULL;
}

int pgw_diff_to_json(char **out, size_t *out_len, const pgw_diff *d, unsigned flags,
                     pgw_error *err)
{
    int rc;
    if ((rc = PGWI_CHECK_NONNULL(err, "diff_to_json", out, d)) < 0)
        return rc;
    if (flags & ~PGW_JSON_PRETTY)
        return pgwi_error(err, PGW_EINVAL, "diff_to_json: unknown flags 0x%x", flags);
    json_t *o = diff_json(d);
    if (!o)
        return pgwi_enomem(err);
    rc = pgwi_json_dump(out, out_len, o, flags & PGW_JSON_PRETTY, err);
    json_decref(o);
    return rc;
}

/* ------------------------------------------------------------------ */
/* decode                                                              */

typedef struct rd {
    pgw_diff *d;
    pgw_error *err;
    int64_t format; /* of the document */
} rd;

/* Every string of a diff is non-empty. */
#define TEXT(key, p) PGWI_JF_STRING((key), (p), PGWI_JF_NONEMPTY)

/* pgwi_json_read_fields, then every string read (destinations start NULL)
 * is copied into the diff's arena: the diff outlives the document. */
static int read_fields(rd *r, const json_t *v, const char *path, const pgwi_jfield *f, size_t n)
{
    int rc;
    if ((rc = pgwi_json_read_fields(v, path, f, n, 0, r->err)) < 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        const char **s = f[i].dst;
        if (f[i].kind == PGWI_JSON_STRING && *s && !(*s = pgwi_arena_strdup(&r->d->arena, *s)))
            return pgwi_enomem(r->err);
    }
    return PGW_OK;
}

static int read_side(pgw_diff_side *s, rd *r, const json_t *v, const char *path)
{
    const char *ts = NULL;
    const pgwi_jfield f[] = {
        TEXT("schema", &s->schema),
        TEXT("table", &s->table),
        PGWI_JF_STRING("resource_identity", &s->resource, PGWI_JF_NONEMPTY | PGWI_JF_NULLABLE),
        TEXT("captured_at", &ts),
        TEXT("schema_hash", &s->schema_hash),
    };
    int rc;
    if ((rc = read_fields(r, v, path, f, PGWI_NFIELDS(f))) < 0)
        return rc;
    char p[PGWI_JPATH_SIZE];
    if (!pgwi_is_hex16(s->schema_hash)) {
        pgwi_jpath_key(p, path, "schema_hash");
        return pgwi_error_at(r->err, PGW_EPARSE, p, "%s: expected 16 lowercase hex digits", p);
    }
    if (pgw_timestamp_parse(&s->captured_at, ts, NULL) < 0) {
        pgwi_jpath_key(p, path, "captured_at");
        return pgwi_error_at(r->err, PGW_EPARSE, p, "%s: not an RFC 3339 timestamp", p);
    }
    return PGW_OK;
}

static int read_column(rd *r, void *elem, const json_t *v, const char *path)
{
    pgw_diff_column *c = elem;
    int64_t pos;
    const pgwi_jfield f[] = {
        TEXT("column", &c->column),
        TEXT("type", &c->type),
        PGWI_JF_INT("position", &pos, 1, 1600, 0),
    };
    int rc;
    if ((rc = read_fields(r, v, path, f, PGWI_NFIELDS(f))) < 0)
        return rc;
    c->position = (uint32_t)pos;
    return PGW_OK;
}

static int read_type_change(rd *r, void *elem, const json_t *v, const char *path)
{
    pgw_type_change *t = elem;
    const pgwi_jfield f[] = {
        TEXT("column", &t->column),
        TEXT("from", &t->from),
        TEXT("to", &t->to),
    };
    return read_fields(r, v, path, f, PGWI_NFIELDS(f));
}

/* Format 2: a rename's parts, each in [0, 1]; values, profile, shape and
 * contrast may be null (not computed), and contrast may be absent (as
 * documents written before it was recorded are: it was not applied). */
static int read_parts(pgw_rename_parts *p, rd *r, const json_t *v, const char *path)
{
    pgwi_rename_parts_unknown(p);
    bool has;
    const pgwi_jfield f[] = {
        PGWI_JF_NUMBER("score", &p->score, 0.0, 1.0, 0),
        PGWI_JF_NUMBER("name", &p->name, 0.0, 1.0, 0),
        PGWI_JF_NUMBER_OR_NULL("values", &p->values, &has, 0.0, 1.0),
        PGWI_JF_NUMBER_OR_NULL("profile", &p->profile, &has, 0.0, 1.0),
        PGWI_JF_NUMBER_OR_NULL("shape", &p->shape, &has, 0.0, 1.0),
        PGWI_JF_NUMBER("type", &p->type, 0.0, 1.0, 0),
        PGWI_JF_NUMBER("position", &p->position, 0.0, 1.0, 0),
        PGWI_JF_NUMBER("contrast", &p->contrast, 0.0, 1.0,
                       PGWI_JF_OPTIONAL | PGWI_JF_NULLABLE),
    };
    int rc;
    if ((rc = pgwi_json_read_fields(v, path, f, PGWI_NFIELDS(f), 0, r->err)) < 0)
        return rc;
    /* How pgwi_rename_parts_of (rename_score.c) makes values, profile and
     * shape: all three only for a pair with sampled values, and values is
     * the profile itself when the shape is not computed. (With the shape,
     * values mixes the two by the shape weight, which is not recorded.) */
    char q[PGWI_JPATH_SIZE];
    if (p->contrast >= 0 && !pgwi_rename_contrast_applies(p, NULL)) {
        pgwi_jpath_key(q, path, "contrast");
        char values[32] = "null";
        if (p->values >= 0)
            snprintf(values, sizeof values, "%g", p->values);
        return pgwi_error_at(r->err, PGW_EPARSE, q,
                             "%s: %g, but the contrast applies only to a pair whose values "
                             "are above 0 (values %s)",
                             q, p->contrast, values);
    }
    if (p->profile < 0 && p->shape >= 0) {
        pgwi_jpath_key(q, path, "shape");
        return pgwi_error_at(r->err, PGW_EPARSE, q,
                             "%s: %g, but profile is null (the shape is computed only for "
                             "columns with sampled values)",
                             q, p->shape);
    }
    if (p->shape < 0 && p->values != p->profile) {
        pgwi_jpath_key(q, path, "values");
        if (p->values < 0 || p->profile < 0) {
            const char *is = p->values < 0 ? "null" : "a number";
            return pgwi_error_at(r->err, PGW_EPARSE, q,
                                 "%s: %s, but profile is %s (with shape null, values is the "
                                 "profile)",
                                 q, is, p->profile < 0 ? "null" : "a number");
        }
        return pgwi_error_at(r->err, PGW_EPARSE, q,
                             "%s: %g is not profile %g (with shape null, values is the "
                             "profile)",
                             q, p->values, p->profile);
    }
    return PGW_OK;
}

static int read_rename(rd *r, void *elem, const json_t *v, const char *path)
{
    static const char *const names[] = {"values", "name", "both", NULL};
    static const pgw_rename_evidence evidence[] = {PGW_EVIDENCE_VALUES, PGW_EVIDENCE_NAME,
                                                   PGW_EVIDENCE_BOTH};
    pgw_rename *t = elem;
    int ev;
    const json_t *parts = NULL;
    const pgwi_jfield f[] = {
        TEXT("from", &t->from),
        TEXT("to", &t->to),
        TEXT("from_type", &t->from_type),
        TEXT("to_type", &t->to_type),
        PGWI_JF_NUMBER("score", &t->score, 0.0, 1.0, 0),
        PGWI_JF_ENUM("evidence", &ev, names, PGWI_JF_NONEMPTY),
        PGWI_JF_VALUE("parts", &parts, 0), /* format 2 only: the row is left out for 1 */
    };
    int rc;
    size_t nf = PGWI_NFIELDS(f) - (r->format == 1);
    if ((rc = read_fields(r, v, path, f, nf)) < 0)
        return rc;
    t->evidence = evidence[ev];
    if (r->format == 1) {
        pgwi_rename_parts_unknown(&t->parts);
        return PGW_OK;
    }
    char pp[PGWI_JPATH_SIZE];
    pgwi_jpath_key(pp, path, "parts");
    if (json_is_null(parts)) {
        /* Not recorded: a rename of format 1 written again. */
        if (r->d->method == PGW_RENAME_COMBINED)
            return pgwi_error_at(r->err, PGW_EPARSE, pp,
                                 "%s: null, but rename_method \"combined\" records the parts",
                                 pp);
        pgwi_rename_parts_unknown(&t->parts);
        return PGW_OK;
    }
    if ((rc = read_parts(&t->parts, r, parts, pp)) < 0)
        return rc;
    /* The combined method's score and evidence follow from the parts. */
    if (r->d->method == PGW_RENAME_COMBINED) {
        char sp[PGWI_JPATH_SIZE];
        if (t->score != t->parts.score) {
            pgwi_jpath_key(sp, path, "score");
            return pgwi_error_at(r->err, PGW_EPARSE, sp,
                                 "%s: %g is not parts.score %g (rename_method \"combined\")", sp,
                                 t->score, t->parts.score);
        }
        if (t->evidence != pgwi_rename_evidence_of(&t->parts)) {
            pgwi_jpath_key(sp, path, "evidence");
            return pgwi_error_at(r->err, PGW_EPARSE, sp,
                                 "%s: \"%s\" contradicts the parts, which make it \"%s\"", sp,
                                 pgwi_evidence_name(t->evidence),
                                 pgwi_evidence_name(pgwi_rename_evidence_of(&t->parts)));
        }
    }
    return PGW_OK;
}

static int read_profile_change(rd *r, void *elem, const json_t *v, const char *path)
{
    pgw_profile_change *t = elem;
    const pgwi_jfield f[] = {
        TEXT("column", &t->column),
        PGWI_JF_NUMBER("score", &t->score, 0.0, 1.0, 0),
    };
    return read_fields(r, v, path, f, PGWI_NFIELDS(f));
}

static int read_anomaly(rd *r, void *elem, const json_t *v, const char *path)
{
    pgw_name_anomaly_report *t = elem;
    const char *side = NULL;
    const json_t *flags;
    const pgwi_jfield f[] = {
        TEXT("column", &t->column),
        TEXT("side", &side),
        PGWI_JF_VALUE("anomalies", &flags, 0),
    };
    int rc;
    if ((rc = read_fields(r, v, path, f, PGWI_NFIELDS(f))) < 0)
        return rc;
    char fp[PGWI_JPATH_SIZE];
    pgwi_jpath_key(fp, path, "anomalies");
    if (strcmp(side, "from") != 0 && strcmp(side, "to") != 0)
        return pgwi_error_at(r->err, PGW_EPARSE, path, "%s.side: expected \"from\" or \"to\"",
                             path);
    t->in_to = strcmp(side, "to") == 0;
    if ((rc = pgwi_json_array(flags, fp, r->err)) < 0)
        return rc;
    for (size_t k = 0; k < json_array_size(flags); k++) {
        char kp[PGWI_JPATH_SIZE];
        pgwi_jpath_index(kp, fp, k);
        const char *s;
        if ((rc = pgwi_json_string(&s, NULL, json_array_get(flags, k), 0, kp, r->err)) < 0)
            return rc;
        unsigned bit = 0;
        for (size_t q = 0; q < N_ANOMALY; q++)
            if (strcmp(s, anomaly_names[q].name) == 0)
                bit = anomaly_names[q].flag;
        if (!bit || (t->anomalies & bit))
            return pgwi_error_at(r->err, PGW_EPARSE, kp,
                                 "%s: unknown or repeated anomaly \"%.40s\"", kp, s);
        t->anomalies |= bit;
    }
    if (!t->anomalies)
        return pgwi_error_at(r->err, PGW_EPARSE, fp, "%s: empty", fp);
    return PGW_OK;
}

/* One name of the diff's lists, for check_names: kind is where it is
 * (NAME_ADDED, NAME_REMOVED, the from or the to of a rename), index its
 * element, ord its place in the document. */
enum { NAME_ADDED, NAME_REMOVED, NAME_FROM, NAME_TO };
typedef struct name_use {
    const char *name;
    int kind;
    size_t index, ord;
} name_use;

static int cmp_name_use(const void *pa, const void *pb)
{
    const name_use *a = pa, *b = pb;
    int c = strcmp(a->name, b->name);
    return c ? c : a->ord < b->ord ? -1 : a->ord > b->ord;
}

static void name_use_path(char out[PGWI_JPATH_SIZE], const name_use *u)
{
    static const char *const list[] = {"$.added", "$.removed", "$.renamed_candidates",
                                       "$.renamed_candidates"};
    static const char *const key[] = {"column", "column", "from", "to"};
    char e[PGWI_JPATH_SIZE];
    pgwi_jpath_index(e, list[u->kind], u->index);
    pgwi_jpath_key(out, e, key[u->kind]);
}

/* Why two uses of one name cannot both be (a comes first in the
 * document). */
static const char *name_clash(const name_use *a, const name_use *b)
{
    bool older_a = a->kind == NAME_REMOVED || a->kind == NAME_FROM;
    if (a->kind == b->kind)
        return a->kind == NAME_FROM || a->kind == NAME_TO ? "renames are one to one"
                                                          : "a column is listed once";
    if (a->kind == NAME_FROM && b->kind == NAME_TO && a->index == b->index)
        return "a rename changes the name";
    if (a->kind == NAME_REMOVED && b->kind == NAME_FROM)
        return "a rename's source is not also removed";
    if (a->kind == NAME_ADDED && b->kind == NAME_TO)
        return "a rename's target is not also added";
    return older_a ? "a name only the older snapshot has is not also one only the newer has"
                   : "a name only the newer snapshot has is not also one only the older has";
}

/* Every name of added, removed and the renames' from and to is one column
 * that only one snapshot has (the older: removed, from; the newer: added,
 * to), so it appears once among them all: renames are one to one, change
 * the name, and their columns are not also added or removed (diff.c
 * leaves rename sources and targets out of those lists). The error is at
 * the first clash in document order, and names the use it clashes with. */
static int check_names(const pgw_diff *d, pgw_error *err)
{
    size_t n = d->n_added + d->n_removed + 2 * d->n_renamed;
    if (n < 2)
        return PGW_OK;
    name_use *u = pgwi_calloc(n, sizeof *u);
    if (!u)
        return pgwi_enomem(err);
    size_t k = 0;
    for (size_t i = 0; i < d->n_added; i++, k++)
        u[k] = (name_use){d->added[i].column, NAME_ADDED, i, k};
    for (size_t i = 0; i < d->n_removed; i++, k++)
        u[k] = (name_use){d->removed[i].column, NAME_REMOVED, i, k};
    for (size_t i = 0; i < d->n_renamed; i++, k += 2) {
        u[k] = (name_use){d->renamed[i].from, NAME_FROM, i, k};
        u[k + 1] = (name_use){d->renamed[i].to, NAME_TO, i, k + 1};
    }
    qsort(u, n, sizeof *u, cmp_name_use);
    /* Sorted by name, then document order: the clash first in the
     * document is the smallest second use of a run of one name. */
    const name_use *first = NULL, *second = NULL;
    for (size_t i = 1; i < n; i++) {
        bool is_second = strcmp(u[i - 1].name, u[i].name) == 0 &&
                         (i < 2 || strcmp(u[i - 2].name, u[i].name) != 0);
        if (is_second && (!second || u[i].ord < second->ord)) {
            first = &u[i - 1];
            second = &u[i];
        }
    }
    int rc = PGW_OK;
    if (second) {
        char a[PGWI_JPATH_SIZE], b[PGWI_JPATH_SIZE];
        name_use_path(a, first);
        name_use_path(b, second);
        rc = pgwi_error_at(err, PGW_EPARSE, b, "%s: \"%.100s\" is also %s (%s)", b,
                           second->name, a, name_clash(first, second));
    }
    pgwi_free(u);
    return rc;
}

typedef int (*read_elem)(rd *r, void *elem, const json_t *v, const char *path);

/* Reads the top-level array `key` into *out, a new array in the diff's
 * arena of elements of `size` bytes, one `one` call per element; *n counts
 * the elements read. */
static int read_array(void **out, size_t *n, size_t size, rd *r, const json_t *obj,
                      const char *key, read_elem one)
{
    const json_t *arr;
    char ap[PGWI_JPATH_SIZE], p[PGWI_JPATH_SIZE];
    int rc;
    if ((rc = pgwi_json_member(&arr, obj, key, true, "$", r->err)) < 0)
        return rc;
    pgwi_jpath_key(ap, "$", key);
    if ((rc = pgwi_json_array(arr, ap, r->err)) < 0)
        return rc;
    size_t len = json_array_size(arr);
    if (len > 1600 * 2)
        return pgwi_error_at(r->err, PGW_EPARSE, ap, "%s: %zu entries is more than two tables "
                             "of 1600 columns can produce", ap, len);
    *out = NULL;
    if (len && !(*out = pgwi_arena_calloc(&r->d->arena, len, size)))
        return pgwi_enomem(r->err);
    for (size_t i = 0; i < len; i++) {
        pgwi_jpath_index(p, ap, i);
        if ((rc = one(r, (char *)*out + i * size, json_array_get(arr, i), p)) < 0)
            return rc;
        (*n)++;
    }
    return PGW_OK;
}

/* Reads d->list (and counts d->count) from the member key of v (read_diff's). */
#define READ_ARRAY(list, count, key, one) \
    read_array((void **)&d->list, &d->count, sizeof *d->list, &r, v, (key), (one))

static int read_diff(pgw_diff *d, const json_t *v, pgw_error *err)
{
    /* The keys of each format: format 2 added rename_method. */
    static const char *const keys_1[] = {
        "format",   "from",    "to",           "schema_changed", "class",
        "added",    "removed", "type_changed", "reordered",      "renamed_candidates",
        "profile_changed", "row_estimate", "name_anomalies", NULL};
    static const char *const keys_2[] = {
        "format",   "from",    "to",           "schema_changed", "class",
        "added",    "removed", "type_changed", "reordered",      "rename_method",
        "renamed_candidates", "profile_changed", "row_estimate", "name_anomalies", NULL};
    rd r = {d, err, 0};
    const json_t *m;
    int64_t n;
    int rc;
    if ((rc = pgwi_json_object(v, "$", err)) < 0 ||
        (rc = pgwi_json_member(&m, v, "format", true, "$", err)) < 0 ||
        (rc = pgwi_json_int(&n, m, 0, INT32_MAX, "$.format", err)) < 0)
        return rc;
    if (n < PGW_DIFF_FORMAT_OLDEST || n > PGW_DIFF_FORMAT)
        return pgwi_error_at(err, PGW_EVERSION, "$.format",
                             "diff format %lld is not supported (this release reads formats "
                             "%d to %d)",
                             (long long)n, PGW_DIFF_FORMAT_OLDEST, PGW_DIFF_FORMAT);
    r.format = n;
    if ((rc = pgwi_json_only_keys(v, "$", n == 1 ? keys_1 : keys_2, err)) < 0)
        return rc;
    d->method = PGW_RENAME_PROFILE; /* what format 1 used */
    if (n >= 2) {
        int mi;
        const pgwi_jfield mf[] = {PGWI_JF_ENUM("rename_method", &mi, method_names,
                                               PGWI_JF_NONEMPTY)};
        if ((rc = pgwi_json_read_fields(v, "$", mf, 1, PGWI_JSON_SUBSET, err)) < 0)
            return rc;
        d->method = methods[mi];
    }
    const pgwi_jfield flags[] = {
        PGWI_JF_BOOL("schema_changed", &d->schema_changed, 0),
        PGWI_JF_BOOL("reordered", &d->reordered, 0),
    };
    if ((rc = pgwi_json_member(&m, v, "from", true, "$", err)) < 0 ||
        (rc = read_side(&d->from, &r, m, "$.from")) < 0 ||
        (rc = pgwi_json_member(&m, v, "to", true, "$", err)) < 0 ||
        (rc = read_side(&d->to, &r, m, "$.to")) < 0 ||
        (rc = pgwi_json_read_fields(v, "$", flags, PGWI_NFIELDS(flags), PGWI_JSON_SUBSET,
                                    err)) < 0 ||
        (rc = READ_ARRAY(added, n_added, "added", read_column)) < 0 ||
        (rc = READ_ARRAY(removed, n_removed, "removed", read_column)) < 0 ||
        (rc = READ_ARRAY(type_changed, n_type, "type_changed", read_type_change)) < 0 ||
        (rc = READ_ARRAY(renamed, n_renamed, "renamed_candidates", read_rename)) < 0 ||
        (rc = READ_ARRAY(profile_changed, n_profile, "profile_changed",
                         read_profile_change)) < 0)
        return rc;

    pgw_diff_side *f = &d->from, *t = &d->to;
    const pgwi_jfield rows[] = {
        PGWI_JF_INT_OR_NULL("from", &f->row_estimate, &f->has_row_estimate, 0, INT64_MAX),
        PGWI_JF_INT_OR_NULL("to", &t->row_estimate, &t->has_row_estimate, 0, INT64_MAX),
    };
    const char *cls;
    const pgwi_jfield class_field[] = {TEXT("class", &cls)};
    if ((rc = pgwi_json_member(&m, v, "row_estimate", true, "$", err)) < 0 ||
        (rc = pgwi_json_read_fields(m, "$.row_estimate", rows, PGWI_NFIELDS(rows), 0, err)) < 0 ||
        (rc = READ_ARRAY(anomalies, n_anom, "name_anomalies", read_anomaly)) < 0 ||
        (rc = pgwi_json_read_fields(v, "$", class_field, 1, PGWI_JSON_SUBSET, err)) < 0)
        return rc;
    if ((rc = check_names(d, err)) < 0)
        return rc;
    d->cls = pgwi_diff_classify(d);
    if (strcmp(cls, pgw_change_class_name(d->cls)) != 0)
        return pgwi_error_at(err, PGW_EPARSE, "$.class",
                             "$.class: \"%.40s\" contradicts the lists, which make it \"%s\"", cls,
                             pgw_change_class_name(d->cls));
    return PGW_OK;
}
#undef READ_ARRAY

int pgw_diff_from_json(pgw_diff **out, const char *json, size_t len, pgw_error *err)
{
    int rc;
    if ((rc = PGWI_CHECK_NONNULL(err, "diff_from_json", out, json)) < 0)
        return rc;
    json_t *v = NULL;
    if ((rc = pgwi_json_parse(&v, json, len, PGW_SNAPSHOT_JSON_MAX_BYTES, err)) < 0)
        return rc;
    pgw_diff *d = pgwi_calloc(1, sizeof *d);
    rc = d ? read_diff(d, v, err) : pgwi_enomem(err);
    json_decref(v);
    if (rc < 0) {
        pgw_diff_free(d);
        return rc;
    }
    *out = d;
    return PGW_OK;
}
