/*
 * lib/core/snapshot/types.c — type-name synonyms and families.
 *
 * format_type() prints canonical SQL names ("integer", "character
 * varying(20)", "timestamp(3) with time zone"); hosts describing another
 * database may use the aliases of PostgreSQL documentation, Table 8.1 "Data
 * Types" ("int4", "varchar(20)", "timestamptz") or the internal array form
 * "_int4". Normalising both sides makes synonyms compare equal while a real
 * change — another base type, another modifier, another array depth — stays
 * a change.
 * SPDX-License-Identifier: MIT
 */
#include "snapshot_internal.h"

#include <string.h>

typedef struct alias {
    const char *from;
    const char *to;
} alias;

/* PostgreSQL documentation, Table 8.1 "Data Types" (the Aliases column),
 * plus the internal names format_type() never prints but catalogs hold. */
static const alias aliases[] = {
    {"int", "integer"},
    {"int4", "integer"},
    {"serial", "integer"},
    {"serial4", "integer"},
    {"int8", "bigint"},
    {"bigserial", "bigint"},
    {"serial8", "bigint"},
    {"int2", "smallint"},
    {"smallserial", "smallint"},
    {"serial2", "smallint"},
    {"float8", "double precision"},
    {"float", "double precision"},
    {"float4", "real"},
    {"bool", "boolean"},
    {"varchar", "character varying"},
    {"char", "character"},
    {"bpchar", "character"},
    {"decimal", "numeric"},
    {"timestamptz", "timestamp with time zone"},
    {"timestamp", "timestamp without time zone"},
    {"timetz", "time with time zone"},
    {"time", "time without time zone"},
    {"varbit", "bit varying"},
};

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

char *pgwi_type_normalize(pgwi_arena *a, const char *type)
{
    size_t len = strlen(type);
    /* Work buffer: lower-cased outside double quotes, whitespace collapsed,
     * the modifier "(...)" and trailing "[]"s taken out. */
    char *buf = pgwi_arena_alloc(a, len + 1);
    char *mod = pgwi_arena_alloc(a, len + 1);
    if (!buf || !mod)
        return NULL;
    size_t n = 0, nm = 0;
    int dims = 0;
    bool quoted = false;
    int depth = 0;
    for (size_t i = 0; i < len; i++) {
        char c = type[i];
        if (c == '"')
            quoted = !quoted;
        if (!quoted && depth == 0 && c == '(') {
            depth = 1;
            mod[nm++] = c;
            continue;
        }
        if (depth > 0) {
            if (c == '(')
                depth++;
            else if (c == ')')
                depth--;
            if (!is_space(c))
                mod[nm++] = c;
            continue;
        }
        if (!quoted && c == '[') {
            /* "[]" or "[3]": an array dimension (sizes are not enforced by
             * PostgreSQL and format_type prints none). */
            while (i < len && type[i] != ']')
                i++;
            dims++;
            continue;
        }
        if (!quoted && is_space(c)) {
            if (n > 0 && buf[n - 1] != ' ')
                buf[n++] = ' ';
            continue;
        }
        if (!quoted && c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        buf[n++] = c;
    }
    while (n > 0 && buf[n - 1] == ' ')
        n--;
    buf[n] = '\0';
    mod[nm] = '\0';

    const char *base = buf;
    /* "_int4" is the internal name of int4's array type. */
    if (base[0] == '_' && base[1] != '\0' && base[1] != '"') {
        base++;
        dims++;
    }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(base, aliases[i].from) == 0) {
            base = aliases[i].to;
            break;
        }
    /* "float(p)": p < 25 is real, otherwise double precision (Table 8.2
     * notes: float(1)..float(24) select real). */
    if (strcmp(buf, "float") == 0 && nm > 2) {
        int p = 0;
        for (const char *q = mod + 1; *q >= '0' && *q <= '9'; q++)
            p = p * 10 + (*q - '0');
        base = p >= 1 && p <= 24 ? "real" : "double precision";
        nm = 0;
        mod[0] = '\0';
    }
    size_t out_len = strlen(base) + nm + (size_t)dims * 2;
    char *out = pgwi_arena_alloc(a, out_len + 1);
    if (!out)
        return NULL;
    strcpy(out, base);
    strcat(out, mod);
    for (int i = 0; i < dims; i++)
        strcat(out, "[]");
    return out;
}

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

int pgwi_type_family(const char *t)
{
    if (strstr(t, "[]"))
        return PGWI_FAMILY_OTHER;
    if (starts(t, "integer") || starts(t, "bigint") || starts(t, "smallint") ||
        starts(t, "numeric") || starts(t, "real") || starts(t, "double precision") ||
        starts(t, "money") || starts(t, "oid"))
        return PGWI_FAMILY_NUMERIC;
    if (starts(t, "text") || starts(t, "character") || starts(t, "name") ||
        starts(t, "citext") || starts(t, "\"char\""))
        return PGWI_FAMILY_TEXT;
    if (starts(t, "timestamp") || starts(t, "date") || starts(t, "time") ||
        starts(t, "interval"))
        return PGWI_FAMILY_TEMPORAL;
    if (starts(t, "boolean"))
        return PGWI_FAMILY_BOOLEAN;
    if (starts(t, "json"))
        return PGWI_FAMILY_JSON;
    return PGWI_FAMILY_OTHER;
}
