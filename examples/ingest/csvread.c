/*
 * examples/ingest/csvread.c — see csvread.h for the rules it follows.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include "csvread.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    size_t cap2 = *cap ? *cap : 64;
    while (cap2 < need)
        cap2 *= 2;
    void *np = realloc(p, cap2 * elem);
    if (!np)
        abort(); /* an example program: out of memory ends it */
    *cap = cap2;
    return np;
}

void csvread_init(csvread *r, const char *data, size_t len)
{
    memset(r, 0, sizeof *r);
    r->data = data;
    r->len = len;
    r->line = 1;
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
        r->pos = 3;
}

static void push(csvread *r, char c)
{
    r->buf = grow(r->buf, &r->buf_cap, r->buf_len + 1, 1);
    r->buf[r->buf_len++] = c;
}

static void end_field(csvread *r, size_t start)
{
    if (r->fields == r->fields_cap) {
        size_t cap = r->fields_cap ? r->fields_cap * 2 : 64;
        size_t *off = realloc(r->off, cap * sizeof *off);
        if (!off)
            abort();
        r->off = off;
        size_t *flen = realloc(r->flen, cap * sizeof *flen);
        if (!flen)
            abort();
        r->flen = flen;
        r->fields_cap = cap;
    }
    r->off[r->fields] = start;
    r->flen[r->fields] = r->buf_len - start;
    r->fields++;
    push(r, '\0');
}

/* Consumes the line end at pos ("\n", "\r\n" or "\r"). */
static void eat_line_end(csvread *r)
{
    if (r->data[r->pos++] == '\r' && r->pos < r->len && r->data[r->pos] == '\n')
        r->pos++;
    r->line++;
}

int csvread_next(csvread *r, char *why, size_t why_size)
{
    const char *d = r->data;
    r->fields = 0;
    r->buf_len = 0;
    /* Blank lines: only spaces and tabs up to a line end (or the end). */
    for (;;) {
        size_t p = r->pos;
        while (p < r->len && (d[p] == ' ' || d[p] == '\t'))
            p++;
        if (p == r->len) {
            r->pos = p;
            return 0;
        }
        if (d[p] != '\n' && d[p] != '\r')
            break;
        r->pos = p;
        eat_line_end(r);
    }
    r->start_line = r->line;
    enum { START_FIELD, IN_FIELD, IN_QUOTED, QUOTE_IN_QUOTED } state = START_FIELD;
    size_t start = 0, quote_line = 0;
    while (r->pos < r->len) {
        char c = d[r->pos];
        switch (state) {
        case START_FIELD:
            start = r->buf_len;
            if (c == '"') {
                state = IN_QUOTED;
                quote_line = r->line;
                r->pos++;
                continue;
            }
            /* The first character of an unquoted field. */
            state = IN_FIELD;
            /* fall through */
        case IN_FIELD:
            if (c == ',') {
                end_field(r, start);
                state = START_FIELD;
                r->pos++;
            } else if (c == '\n' || c == '\r') {
                end_field(r, start);
                eat_line_end(r);
                return 1;
            } else {
                push(r, c);
                r->pos++;
            }
            continue;
        case IN_QUOTED:
            if (c == '"') {
                state = QUOTE_IN_QUOTED;
            } else {
                /* Line ends are kept in the value, and counted. */
                push(r, c);
                if (c == '\n' || (c == '\r' && !(r->pos + 1 < r->len && d[r->pos + 1] == '\n')))
                    r->line++;
            }
            r->pos++;
            continue;
        case QUOTE_IN_QUOTED:
            if (c == '"') { /* "" is one quote */
                push(r, '"');
                state = IN_QUOTED;
                r->pos++;
            } else if (c == ',' || c == '\n' || c == '\r') {
                state = IN_FIELD; /* ends the field as an unquoted one would */
            } else {              /* text after the closing quote is kept */
                push(r, c);
                state = IN_FIELD;
                r->pos++;
            }
            continue;
        }
    }
    /* The end of the text ends the last record. */
    if (state == IN_QUOTED) {
        snprintf(why, why_size,
                 "has an unterminated quote in column %zu (opened on line %zu, it runs to the "
                 "end of the file)",
                 r->fields + 1, quote_line);
        return -1;
    }
    if (state == START_FIELD)
        start = r->buf_len; /* the empty field after a last delimiter */
    end_field(r, start);
    return 1;
}

const char *csvread_field(const csvread *r, size_t i)
{
    return r->buf + r->off[i];
}

size_t csvread_field_len(const csvread *r, size_t i)
{
    return r->flen[i];
}

void csvread_free(csvread *r)
{
    free(r->buf);
    free(r->off);
    free(r->flen);
    r->buf = NULL;
    r->off = r->flen = NULL;
    r->buf_cap = r->fields_cap = r->buf_len = r->fields = 0;
}

bool csvread_is_na(const char *s, size_t len)
{
    /* pandas' STR_NA_VALUES (pandas/_libs/parsers.pyx), the default of
     * read_csv's na_values. */
    static const char *const na[] = {"",     "#N/A",    "#N/A N/A", "#NA",  "-1.#IND",
                                     "-1.#QNAN", "-NaN", "-nan",   "1.#IND", "1.#QNAN",
                                     "<NA>", "N/A",     "NA",       "NULL", "NaN",
                                     "None", "n/a",     "nan",      "null"};
    for (size_t i = 0; i < sizeof na / sizeof na[0]; i++)
        if (strlen(na[i]) == len && memcmp(na[i], s, len) == 0)
            return true;
    return false;
}

/* How many times a name has been given, for the mangling: a small map,
 * linear (a header has at most a few thousand names). */
typedef struct counts {
    char **name;
    size_t *n;
    size_t len, cap, ncap;
} counts;

static size_t count_get(const counts *c, const char *name)
{
    for (size_t i = 0; i < c->len; i++)
        if (strcmp(c->name[i], name) == 0)
            return c->n[i];
    return 0;
}

static void count_set(counts *c, const char *name, size_t n)
{
    for (size_t i = 0; i < c->len; i++)
        if (strcmp(c->name[i], name) == 0) {
            c->n[i] = n;
            return;
        }
    c->name = grow(c->name, &c->cap, c->len + 1, sizeof *c->name);
    c->n = grow(c->n, &c->ncap, c->len + 1, sizeof *c->n);
    c->name[c->len] = strdup(name);
    if (!c->name[c->len])
        abort();
    c->n[c->len++] = n;
}

static bool in_header(char **names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

/* A malloc()ed "%s.%zu" (base.k), or "Unnamed: %zu" (k) when base is NULL. */
static char *make_name(const char *base, size_t k)
{
    size_t need = (base ? strlen(base) : 0) + 32;
    char *s = malloc(need);
    if (!s)
        abort();
    if (base)
        snprintf(s, need, "%s.%zu", base, k);
    else
        snprintf(s, need, "Unnamed: %zu", k);
    return s;
}

char **csvread_column_names(const char *const *fields, size_t n)
{
    char **names = calloc(n ? n : 1, sizeof *names);
    size_t *order = calloc(n ? n : 1, sizeof *order);
    if (!names || !order)
        abort();
    /* Empty names first become "Unnamed: I" (parsers.pyx, _get_header). */
    for (size_t i = 0; i < n; i++) {
        names[i] = fields[i][0] ? strdup(fields[i]) : make_name(NULL, i);
        if (!names[i])
            abort();
    }
    /* Then the repeated names are mangled, the named columns before the
     * unnamed ones, so that a name the header gives keeps its form. A name
     * given cur > 0 times before becomes name.cur; when the header holds
     * that name too, name.(cur + 1) is tried, and when it was itself given
     * before, its own count continues the search. The base name's count
     * remembers the last one tried, for its next repeat. */
    size_t at = 0;
    for (size_t i = 0; i < n; i++)
        if (fields[i][0])
            order[at++] = i;
    for (size_t i = 0; i < n; i++)
        if (!fields[i][0])
            order[at++] = i;
    counts c = {0};
    for (size_t k = 0; k < n; k++) {
        size_t i = order[k];
        const char *old_col = names[i];
        size_t cur = count_get(&c, old_col);
        char *made = NULL;
        while (cur > 0) {
            count_set(&c, old_col, cur + 1);
            free(made);
            made = make_name(old_col, cur);
            if (in_header(names, n, made))
                cur++;
            else
                cur = count_get(&c, made);
        }
        if (made) {
            free(names[i]);
            names[i] = made;
        }
        count_set(&c, names[i], cur + 1);
    }
    for (size_t i = 0; i < c.len; i++)
        free(c.name[i]);
    free(c.name);
    free(c.n);
    free(order);
    return names;
}

void csvread_names_free(char **names, size_t n)
{
    if (!names)
        return;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}
