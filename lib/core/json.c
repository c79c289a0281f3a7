/*
 * lib/core/json.c — see json.h.
 * SPDX-License-Identifier: MIT
 */
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static bool plain_key(const char *key)
{
    if (!key[0] || (key[0] >= '0' && key[0] <= '9'))
        return false;
    for (const char *p = key; *p; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_'))
            return false;
    }
    return true;
}

void pgwi_jpath_key(char out[PGWI_JPATH_SIZE], const char *parent, const char *key)
{
    char buf[PGWI_JPATH_SIZE * 2];
    if (plain_key(key))
        snprintf(buf, sizeof buf, "%s.%s", parent, key);
    else
        snprintf(buf, sizeof buf, "%s[\"%.100s\"]", parent, key);
    pgwi_copy_cut(out, PGWI_JPATH_SIZE, buf);
}

void pgwi_jpath_index(char out[PGWI_JPATH_SIZE], const char *parent, size_t i)
{
    char buf[PGWI_JPATH_SIZE * 2];
    snprintf(buf, sizeof buf, "%s[%zu]", parent, i);
    pgwi_copy_cut(out, PGWI_JPATH_SIZE, buf);
}

int pgwi_json_parse(json_t **out, const char *text, size_t len, size_t max_len,
                    pgw_error *err)
{
    if (!text)
        return pgwi_error(err, PGW_EINVAL, "JSON text is NULL");
    if (max_len && len > max_len)
        return pgwi_error_at(err, PGW_EPARSE, "$",
                             "document of %zu bytes exceeds the limit of %zu bytes", len,
                             max_len);
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        return pgwi_error_at(err, PGW_EPARSE, "$",
                             "invalid JSON: the text starts with a UTF-8 byte order mark "
                             "(RFC 8259, section 8.1: JSON text has none; remove it)");
    /* Two inputs jansson names only by where it stopped ("unexpected
     * token near end of file"): nothing at all, and a NUL byte (a C string
     * cut short, a binary file), which JSON text never holds. */
    size_t start = 0;
    while (start < len && (text[start] == ' ' || text[start] == '\t' || text[start] == '\n' ||
                           text[start] == '\r'))
        start++;
    if (start == len)
        return pgwi_error_at(err, PGW_EPARSE, "$",
                             len ? "invalid JSON: the text is only white space"
                                 : "invalid JSON: the text is empty");
    const char *nul = memchr(text, '\0', len);
    if (nul)
        return pgwi_error_at(err, PGW_EPARSE, "$",
                             "invalid JSON: the text contains a NUL byte (byte %zu of %zu)",
                             (size_t)(nul - text) + 1, len);
    json_error_t je;
    memset(&je, 0, sizeof je); /* jansson leaves it unset on some failures */
    unsigned long failures = pgwi_alloc_failures();
    /* jansson rejects invalid UTF-8 and \u0000 (without JSON_ALLOW_NUL);
     * JSON_REJECT_DUPLICATES makes duplicate keys an error rather than
     * last-one-wins. */
    json_t *v = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
    if (!v) {
        if (json_error_code(&je) == json_error_out_of_memory ||
            pgwi_alloc_failures() != failures)
            return pgwi_enomem(err);
        /* jansson names its flag, which is not the caller's to set. */
        const char *why = json_error_code(&je) == json_error_null_character
                              ? "\\u0000 (NUL) is not allowed in strings"
                              : je.text;
        return pgwi_error_at(err, PGW_EPARSE, "$", "invalid JSON at line %d column %d: %s",
                             je.line, je.column, why);
    }
    if (pgwi_alloc_failures() != failures) {
        /* jansson 2.14's lexer ignores a failed buffer growth and goes on
         * with a shortened string: a "successful" parse after a failed
         * allocation may hold corrupted text. */
        json_decref(v);
        return pgwi_enomem(err);
    }
    *out = v;
    return PGW_OK;
}

/* A growing output buffer for json_dump_callback (one pass over the tree;
 * json_dumpb would need two: one to size, one to write). */
typedef struct dumpbuf {
    char *p;
    size_t len, cap;
    bool failed;
} dumpbuf;

static int dump_cb(const char *chunk, size_t size, void *data)
{
    dumpbuf *d = data;
    if (d->len + size + 1 > d->cap) {
        size_t cap = d->cap ? d->cap : 1024;
        while (cap < d->len + size + 1)
            cap *= 2;
        char *np = pgwi_realloc(d->p, cap);
        if (!np) {
            d->failed = true;
            return -1;
        }
        d->p = np;
        d->cap = cap;
    }
    memcpy(d->p + d->len, chunk, size);
    d->len += size;
    return 0;
}

int pgwi_json_dump(char **out, size_t *out_len, const json_t *v, bool pretty, pgw_error *err)
{
    size_t flags =
        JSON_REAL_PRECISION(PGWI_JSON_REAL_PRECISION) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY;
    flags |= pretty ? JSON_INDENT(2) : JSON_COMPACT;
    unsigned long failures = pgwi_alloc_failures();
    dumpbuf d = {NULL, 0, 0, false};
    if (json_dump_callback(v, dump_cb, &d, flags) < 0 || d.failed || !d.p ||
        pgwi_alloc_failures() != failures) {
        pgwi_free(d.p);
        return pgwi_enomem(err);
    }
    d.p[d.len] = '\0';
    *out = d.p;
    if (out_len)
        *out_len = d.len;
    return PGW_OK;
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a real number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        return "null";
    }
    return "an unknown value";
}

int pgwi_json_object(const json_t *v, const char *path, pgw_error *err)
{
    if (!json_is_object(v))
        return pgwi_error_at(err, PGW_EPARSE, path, "%s: expected an object, found %s", path,
                             type_name(v));
    return PGW_OK;
}

int pgwi_json_array(const json_t *v, const char *path, pgw_error *err)
{
    if (!json_is_array(v))
        return pgwi_error_at(err, PGW_EPARSE, path, "%s: expected an array, found %s", path,
                             type_name(v));
    return PGW_OK;
}

static int unknown_key(const char *path, const char *key, pgw_error *err)
{
    char p[PGWI_JPATH_SIZE];
    pgwi_jpath_key(p, path, key);
    return pgwi_error_at(err, PGW_EPARSE, p, "%s: unknown key \"%.80s\"", path, key);
}

static bool in_list(const char *const *list, const char *s)
{
    for (; *list; list++)
        if (strcmp(*list, s) == 0)
            return true;
    return false;
}

int pgwi_json_only_keys(const json_t *obj, const char *path, const char *const *allowed,
                        pgw_error *err)
{
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)obj, key, val) {
        if (!in_list(allowed, key))
            return unknown_key(path, key, err);
    }
    return PGW_OK;
}

int pgwi_json_member(const json_t **out, const json_t *obj, const char *key, bool required,
                     const char *path, pgw_error *err)
{
    const json_t *v = json_object_get(obj, key);
    if (!v && required) {
        char p[PGWI_JPATH_SIZE];
        pgwi_jpath_key(p, path, key);
        return pgwi_error_at(err, PGW_EPARSE, p, "%s: missing key \"%s\"", path, key);
    }
    *out = v;
    return PGW_OK;
}

int pgwi_json_string(const char **out, size_t *out_len, const json_t *v, size_t max_bytes,
                     const char *path, pgw_error *err)
{
    if (!json_is_string(v))
        return pgwi_error_at(err, PGW_EPARSE, path, "%s: expected a string, found %s", path,
                             type_name(v));
    size_t len = json_string_length(v);
    if (max_bytes && len > max_bytes)
        return pgwi_error_at(err, PGW_EPARSE, path,
                             "%s: string of %zu bytes exceeds the limit of %zu bytes", path,
                             len, max_bytes);
    *out = json_string_value(v);
    if (out_len)
        *out_len = len;
    return PGW_OK;
}

int pgwi_json_bool(bool *out, const json_t *v, const char *path, pgw_error *err)
{
    if (!json_is_boolean(v))
        return pgwi_error_at(err, PGW_EPARSE, path, "%s: expected a boolean, found %s", path,
                             type_name(v));
    *out = json_is_true(v);
    return PGW_OK;
}

int pgwi_json_int(int64_t *out, const json_t *v, int64_t min, int64_t max, const char *path,
                  pgw_error *err)
{
    if (!json_is_integer(v))
        return pgwi_error_at(err, PGW_EPARSE, path, "%s: expected an integer, found %s", path,
                             type_name(v));
    json_int_t n = json_integer_value(v);
    if (n < min || n > max)
        return pgwi_error_at(err, PGW_EPARSE, path,
                             "%s: %lld is outside [%lld, %lld]", path, (long long)n,
                             (long long)min, (long long)max);
    *out = (int64_t)n;
    return PGW_OK;
}

int pgwi_json_number(double *out, const json_t *v, double min, double max, const char *path,
                     pgw_error *err)
{
    if (!json_is_number(v))
        return pgwi_error_at(err, PGW_EPARSE, path, "%s: expected a number, found %s", path,
                             type_name(v));
    double d = json_number_value(v);
    if (!(d >= min && d <= max))
        return pgwi_error_at(err, PGW_EPARSE, path, "%s: %g is outside [%g, %g]", path, d, min,
                             max);
    *out = d;
    return PGW_OK;
}

/* Matches s against names; the error lists them as "a, b or c". */
static int match_name(int *out, const char *s, const char *const *names, const char *path,
                      pgw_error *err)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], s) == 0) {
            *out = i;
            return PGW_OK;
        }
    char list[128] = "";
    size_t len = 0;
    for (int i = 0; names[i] && len < sizeof list; i++) {
        const char *sep = i == 0 ? "" : names[i + 1] ? ", " : " or ";
        int n = snprintf(list + len, sizeof list - len, "%s%s", sep, names[i]);
        len += n > 0 ? (size_t)n : 0;
    }
    return pgwi_error_at(err, PGW_EPARSE, path, "%s: \"%.40s\" is not %s", path, s, list);
}

int pgwi_json_enum(int *out, const json_t *v, const char *const *names, const char *path,
                   pgw_error *err)
{
    const char *s;
    int rc;
    if ((rc = pgwi_json_string(&s, NULL, v, 0, path, err)) < 0)
        return rc;
    return match_name(out, s, names, path, err);
}

static bool is_field(const pgwi_jfield *fields, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(fields[i].key, key) == 0)
            return true;
    return false;
}

/* Reads the value m of row f, at path p. */
static int read_field(const pgwi_jfield *f, const json_t *m, const char *p, pgw_error *err)
{
    const char *s;
    size_t len;
    int rc;
    switch (f->kind) {
    case PGWI_JSON_STRING:
    case PGWI_JSON_ENUM:
        if ((rc = pgwi_json_string(&s, &len, m, 0, p, err)) < 0)
            return rc;
        if ((f->flags & PGWI_JF_NONEMPTY) && len == 0)
            return pgwi_error_at(err, PGW_EPARSE, p, "%s: empty string", p);
        if (f->kind == PGWI_JSON_ENUM)
            return match_name(f->dst, s, f->names, p, err);
        *(const char **)f->dst = s;
        return PGW_OK;
    case PGWI_JSON_BOOL:
        return pgwi_json_bool(f->dst, m, p, err);
    case PGWI_JSON_INT:
        return pgwi_json_int(f->dst, m, f->imin, f->imax, p, err);
    case PGWI_JSON_NUMBER:
        return pgwi_json_number(f->dst, m, f->dmin, f->dmax, p, err);
    case PGWI_JSON_VALUE:
        *(const json_t **)f->dst = m;
        return PGW_OK;
    }
    return pgwi_error(err, PGW_EINVAL, "json_read_fields: row \"%s\" has no kind", f->key);
}

int pgwi_json_read_fields(const json_t *obj, const char *path, const pgwi_jfield *fields,
                          size_t n_fields, unsigned how, pgw_error *err)
{
    const json_t *m;
    int rc;
    if (!(how & PGWI_JSON_SUBSET)) {
        if ((rc = pgwi_json_object(obj, path, err)) < 0)
            return rc;
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)obj, key, val) {
            if (!is_field(fields, n_fields, key))
                return unknown_key(path, key, err);
        }
    }
    if (how & PGWI_JSON_KEYS_FIRST)
        for (size_t i = 0; i < n_fields; i++)
            if (!(fields[i].flags & PGWI_JF_OPTIONAL) &&
                (rc = pgwi_json_member(&m, obj, fields[i].key, true, path, err)) < 0)
                return rc;
    for (size_t i = 0; i < n_fields; i++) {
        const pgwi_jfield *f = &fields[i];
        if ((rc = pgwi_json_member(&m, obj, f->key, !(f->flags & PGWI_JF_OPTIONAL), path,
                                   err)) < 0)
            return rc;
        bool value = m && !(json_is_null(m) && (f->flags & PGWI_JF_NULLABLE));
        if (value) {
            char p[PGWI_JPATH_SIZE];
            pgwi_jpath_key(p, path, f->key);
            if ((rc = read_field(f, m, p, err)) < 0)
                return rc;
        }
        if (f->present)
            *f->present = value;
    }
    return PGW_OK;
}

int pgwi_json_set(json_t *obj, const char *key, json_t *value, pgw_error *err)
{
    if (!value || json_object_set_new(obj, key, value) < 0)
        return pgwi_enomem(err);
    return PGW_OK;
}

int pgwi_json_append(json_t *arr, json_t *value, pgw_error *err)
{
    if (!value || json_array_append_new(arr, value) < 0)
        return pgwi_enomem(err);
    return PGW_OK;
}

json_t *pgwi_json_real(double v)
{
    if (!isfinite(v))
        return NULL;
    return json_real(v);
}
