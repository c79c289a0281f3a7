/*
 * lib/core/inval/typed.c — values compared as their SQL type, from their
 * text form (typed.h says what each type accepts, and why).
 * SPDX-License-Identifier: MIT
 */
#include "typed.h"

#include <string.h>

#define USEC_PER_DAY INT64_C(86400000000)
#define EXPONENT_MAX 1000000L

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* s[0..len) equals the lower-case word w, ignoring ASCII case. */
static bool word_is(const char *s, size_t len, const char *w)
{
    size_t n = strlen(w);
    if (len != n)
        return false;
    for (size_t k = 0; k < n; k++)
        if (lower(s[k]) != w[k])
            return false;
    return true;
}

static void trim(const char **s, size_t *len)
{
    while (*len && is_space(**s)) {
        (*s)++;
        (*len)--;
    }
    while (*len && is_space((*s)[*len - 1]))
        (*len)--;
}

/* n digits at s as a number; false when one is not a digit. */
static bool digits_of(int64_t *out, const char *s, size_t n)
{
    int64_t v = 0;
    for (size_t k = 0; k < n; k++) {
        if (!is_digit(s[k]))
            return false;
        v = v * 10 + (s[k] - '0');
    }
    *out = v;
    return true;
}

/* ---- INT ---- */

static bool parse_int(pgwi_typed *out, const char *s, size_t len)
{
    size_t k = 0;
    bool neg = false;
    if (k < len && (s[k] == '+' || s[k] == '-'))
        neg = s[k++] == '-';
    if (k == len)
        return false;
    /* The magnitude of INT64_MIN is INT64_MAX + 1. */
    const uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t v = 0;
    for (; k < len; k++) {
        if (!is_digit(s[k]))
            return false;
        uint64_t d = (uint64_t)(s[k] - '0');
        if (v > (limit - d) / 10)
            return false;
        v = v * 10 + d;
    }
    out->cls = PGWI_TYPED_FINITE;
    out->i = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
    return true;
}

/* ---- NUMERIC ---- */

static bool parse_numeric(pgwi_typed *out, const char *s, size_t len)
{
    if (word_is(s, len, "nan")) {
        out->cls = PGWI_TYPED_NAN;
        return true;
    }
    size_t k = 0;
    int sign = 1;
    if (k < len && (s[k] == '+' || s[k] == '-'))
        sign = s[k++] == '-' ? -1 : 1;
    if (word_is(s + k, len - k, "infinity") || word_is(s + k, len - k, "inf")) {
        out->cls = sign < 0 ? PGWI_TYPED_NEG_INF : PGWI_TYPED_POS_INF;
        return true;
    }
    const char *m = s + k;
    size_t m_len = 0, n_digits = 0;
    long dot = -1;
    for (; k + m_len < len; m_len++) {
        char c = m[m_len];
        if (is_digit(c)) {
            n_digits++;
        } else if (c == '.' && dot < 0) {
            dot = (long)m_len;
        } else {
            break;
        }
    }
    if (n_digits == 0)
        return false;
    k += m_len;
    long exponent = 0;
    if (k < len && (s[k] == 'e' || s[k] == 'E')) {
        k++;
        bool eneg = false;
        if (k < len && (s[k] == '+' || s[k] == '-'))
            eneg = s[k++] == '-';
        if (k == len)
            return false;
        for (; k < len; k++) {
            if (!is_digit(s[k]))
                return false;
            exponent = exponent * 10 + (s[k] - '0');
            if (exponent > EXPONENT_MAX)
                return false;
        }
        if (eneg)
            exponent = -exponent;
    }
    if (k != len)
        return false;
    /* The digits with the '.' skipped: index v is m[v + (v >= dot)]. */
    size_t int_digits = dot >= 0 ? (size_t)dot : n_digits;
    size_t first = n_digits, last = 0;
    for (size_t v = 0; v < n_digits; v++) {
        char c = m[v + (dot >= 0 && v >= (size_t)dot ? 1 : 0)];
        if (c != '0') {
            if (first == n_digits)
                first = v;
            last = v;
        }
    }
    out->cls = PGWI_TYPED_FINITE;
    out->digits = m;
    out->dot = dot;
    if (first == n_digits) { /* zero, whatever its sign */
        out->sign = 0;
        out->first = out->n_digits = 0;
        out->point = 0;
        return true;
    }
    out->sign = sign;
    out->first = first;
    out->n_digits = last - first + 1;
    out->point = (long)int_digits - (long)first + exponent;
    return true;
}

static char numeric_digit(const pgwi_typed *t, size_t k)
{
    size_t v = t->first + k;
    return t->digits[v + (t->dot >= 0 && v >= (size_t)t->dot ? 1 : 0)];
}

static int cmp_numeric(const pgwi_typed *a, const pgwi_typed *b)
{
    if (a->sign != b->sign)
        return a->sign < b->sign ? -1 : 1;
    if (a->sign == 0)
        return 0;
    int mag = 0;
    if (a->point != b->point) {
        mag = a->point < b->point ? -1 : 1;
    } else {
        size_t n = a->n_digits < b->n_digits ? a->n_digits : b->n_digits;
        for (size_t k = 0; k < n && !mag; k++) {
            char x = numeric_digit(a, k), y = numeric_digit(b, k);
            if (x != y)
                mag = x < y ? -1 : 1;
        }
        /* Equal so far: the longer has a non-zero digit more. */
        if (!mag && a->n_digits != b->n_digits)
            mag = a->n_digits < b->n_digits ? -1 : 1;
    }
    return a->sign * mag;
}

/* ---- DATE, TIMESTAMP, TIMESTAMPTZ ---- */

static bool is_leap(int64_t y)
{
    return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

/* Days from 1970-01-01 of a proleptic Gregorian date (astronomical year):
 * the civil-from-days inverse of H. Hinnant, "chrono-Compatible Low-Level
 * Date Algorithms" (days_from_civil). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* " BC" (any case) at the end of s[0..*len): removed, and true. */
static bool strip_bc(const char *s, size_t *len)
{
    if (*len >= 3 && s[*len - 3] == ' ' && lower(s[*len - 2]) == 'b' && lower(s[*len - 1]) == 'c') {
        *len -= 3;
        return true;
    }
    return false;
}

/* YYYY-MM-DD (4 to 7 year digits) at s; *used gets its length. */
static bool parse_ymd(int64_t *y, int64_t *mo, int64_t *d, size_t *used, const char *s,
                      size_t len)
{
    size_t yd = 0;
    while (yd < len && is_digit(s[yd]))
        yd++;
    if (yd < 4 || yd > 7 || len < yd + 6 || s[yd] != '-' || s[yd + 3] != '-')
        return false;
    if (!digits_of(y, s, yd) || !digits_of(mo, s + yd + 1, 2) || !digits_of(d, s + yd + 4, 2))
        return false;
    *used = yd + 6;
    return true;
}

/* A UTC offset at s[0..len): Z, [+-]HH, [+-]HH:MM, [+-]HH:MM:SS, [+-]HHMM,
 * as seconds east of UTC. */
static bool parse_offset(int64_t *secs, const char *s, size_t len)
{
    if (len == 1 && (s[0] == 'Z' || s[0] == 'z')) {
        *secs = 0;
        return true;
    }
    if (len < 3 || (s[0] != '+' && s[0] != '-'))
        return false;
    int64_t h, m = 0, sec = 0;
    if (!digits_of(&h, s + 1, 2))
        return false;
    size_t k = 3;
    if (len == 5) { /* [+-]HHMM */
        if (!digits_of(&m, s + 3, 2))
            return false;
        k = 5;
    } else if (len >= 6) {
        if (s[3] != ':' || !digits_of(&m, s + 4, 2))
            return false;
        k = 6;
        if (len >= 7) {
            if (len != 9 || s[6] != ':' || !digits_of(&sec, s + 7, 2))
                return false;
            k = 9;
        }
    }
    if (k != len || h > 15 || m > 59 || sec > 59)
        return false;
    *secs = (s[0] == '-' ? -1 : 1) * (h * 3600 + m * 60 + sec);
    return true;
}

static bool parse_datetime(pgwi_typed *out, pgw_cmp_type type, const char *s, size_t len)
{
    size_t k = 0;
    if (k < len && s[k] == '+')
        k++;
    if (word_is(s + k, len - k, "infinity")) {
        out->cls = PGWI_TYPED_POS_INF;
        return true;
    }
    if (word_is(s, len, "-infinity")) {
        out->cls = PGWI_TYPED_NEG_INF;
        return true;
    }
    bool bc = strip_bc(s, &len);
    int64_t y, mo, d;
    size_t used;
    if (!parse_ymd(&y, &mo, &d, &used, s, len))
        return false;
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (y == 0 || mo < 1 || mo > 12 || d < 1)
        return false;
    if (bc)
        y = 1 - y; /* 1 BC is year 0 */
    if (d > mdays[mo - 1] + (mo == 2 && is_leap(y)))
        return false;
    int64_t days = days_from_civil(y, mo, d), usec = 0;
    k = used;
    if (type == PGW_CMP_DATE) {
        if (k != len)
            return false;
    } else {
        /* ' ' or 'T', HH:MM:SS, up to 6 fractional digits. */
        int64_t h, mi, se;
        if (len < k + 9 || (s[k] != ' ' && s[k] != 'T') || s[k + 3] != ':' ||
            s[k + 6] != ':' || !digits_of(&h, s + k + 1, 2) || !digits_of(&mi, s + k + 4, 2) ||
            !digits_of(&se, s + k + 7, 2) || h > 23 || mi > 59 || se > 59)
            return false;
        k += 9;
        int64_t frac = 0;
        if (k < len && s[k] == '.') {
            size_t f = 0;
            k++;
            while (k + f < len && is_digit(s[k + f]))
                f++;
            if (f == 0 || f > 6)
                return false;
            (void)digits_of(&frac, s + k, f);
            for (size_t z = f; z < 6; z++)
                frac *= 10;
            k += f;
        }
        usec = ((h * 60 + mi) * 60 + se) * INT64_C(1000000) + frac;
        if (type == PGW_CMP_TIMESTAMPTZ) {
            int64_t off;
            if (!parse_offset(&off, s + k, len - k))
                return false;
            usec -= off * INT64_C(1000000);
            while (usec < 0) {
                usec += USEC_PER_DAY;
                days--;
            }
            while (usec >= USEC_PER_DAY) {
                usec -= USEC_PER_DAY;
                days++;
            }
        } else if (k != len) {
            return false;
        }
    }
    out->cls = PGWI_TYPED_FINITE;
    out->i = days;
    out->usec = usec;
    return true;
}

/* ---- the interface ---- */

bool pgwi_typed_parse(pgwi_typed *out, pgw_cmp_type type, const char *s, size_t len)
{
    if (!out || (!s && len))
        return false;
    memset(out, 0, sizeof *out);
    out->type = type;
    if (type == PGW_CMP_TEXT) {
        out->cls = PGWI_TYPED_FINITE;
        out->text = s;
        out->len = len;
        return true;
    }
    trim(&s, &len);
    switch (type) {
    case PGW_CMP_INT:
        return parse_int(out, s, len);
    case PGW_CMP_NUMERIC:
        return parse_numeric(out, s, len);
    case PGW_CMP_DATE:
    case PGW_CMP_TIMESTAMP:
    case PGW_CMP_TIMESTAMPTZ:
        return parse_datetime(out, type, s, len);
    default:
        return false;
    }
}

static int cmp_i64(int64_t a, int64_t b)
{
    return a < b ? -1 : a > b;
}

int pgwi_typed_cmp(const pgwi_typed *a, const pgwi_typed *b)
{
    if (a->cls != b->cls)
        return a->cls < b->cls ? -1 : 1;
    if (a->cls != PGWI_TYPED_FINITE)
        return 0; /* the same infinity, or NaN = NaN */
    switch (a->type) {
    case PGW_CMP_INT:
        return cmp_i64(a->i, b->i);
    case PGW_CMP_NUMERIC:
        return cmp_numeric(a, b);
    case PGW_CMP_TEXT: {
        size_t n = a->len < b->len ? a->len : b->len;
        int c = n ? memcmp(a->text, b->text, n) : 0;
        if (c)
            return c < 0 ? -1 : 1;
        return a->len < b->len ? -1 : a->len > b->len;
    }
    default: {
        int c = cmp_i64(a->i, b->i);
        return c ? c : cmp_i64(a->usec, b->usec);
    }
    }
}

const char *const pgwi_cmp_type_names[] = {"int",         "numeric", "date", "timestamp",
                                           "timestamptz", "text",    NULL};

const char *pgwi_cmp_type_name(pgw_cmp_type type)
{
    if ((int)type < PGW_CMP_INT || (int)type > PGW_CMP_TEXT)
        return NULL;
    return pgwi_cmp_type_names[type - PGW_CMP_INT];
}

bool pgwi_cmp_type_from_name(pgw_cmp_type *out, const char *name)
{
    if (!out || !name)
        return false;
    for (int t = PGW_CMP_INT; t <= PGW_CMP_TEXT; t++)
        if (strcmp(pgwi_cmp_type_names[t - PGW_CMP_INT], name) == 0) {
            *out = (pgw_cmp_type)t;
            return true;
        }
    return false;
}

const char *pgw_cmp_type_name(pgw_cmp_type type)
{
    const char *s = pgwi_cmp_type_name(type);
    return s ? s : "invalid";
}

int pgw_cmp_type_from_name(pgw_cmp_type *out, const char *name)
{
    if (!out || !name)
        return PGW_EINVAL;
    return pgwi_cmp_type_from_name(out, name) ? PGW_OK : PGW_ENOTFOUND;
}

/* ---- coarse keys ---- */

/* Clamps a finite value's key into [1, 0xFFFD] (0 and 0xFFFE, 0xFFFF are
 * the infinities' and NaN's). */
static uint16_t finite_key(int64_t k)
{
    return (uint16_t)(k < 1 ? 1 : k > 0xFFFD ? 0xFFFD : k);
}

/* An order-preserving key of a decimal magnitude: its exponent (clamped to
 * -60..60) and its first two significant digits d (10..99), mirrored below
 * 0x8000 for negative values; zero is 0x8000. */
static uint16_t decimal_key(int sign, long point, int d)
{
    if (sign == 0)
        return 0x8000;
    if (point > 60) { /* beyond: the largest magnitude */
        point = 60;
        d = 99;
    } else if (point < -60) {
        point = -60;
        d = 10;
    }
    int64_t mag = 1 + (int64_t)(point + 60) * 90 + (d - 10); /* 1 .. 10890 */
    return finite_key(sign > 0 ? 0x8000 + mag : 0x8000 - mag);
}

uint16_t pgwi_typed_key16(const pgwi_typed *x)
{
    if (x->cls == PGWI_TYPED_NEG_INF)
        return 0;
    if (x->cls == PGWI_TYPED_POS_INF)
        return 0xFFFE;
    if (x->cls == PGWI_TYPED_NAN)
        return 0xFFFF;
    switch (x->type) {
    case PGW_CMP_INT: {
        if (x->i == 0)
            return 0x8000;
        /* |i| as digits: its exponent and first two digits */
        uint64_t m = x->i < 0 ? (uint64_t)0 - (uint64_t)x->i : (uint64_t)x->i;
        long point = 0;
        uint64_t top = m;
        while (top >= 100) {
            top /= 10;
            point++;
        }
        point += top >= 10 ? 2 : 1;
        int d = (int)(top >= 10 ? top : top * 10);
        return decimal_key(x->i < 0 ? -1 : 1, point, d);
    }
    case PGW_CMP_NUMERIC: {
        if (x->sign == 0)
            return 0x8000;
        int d = (numeric_digit(x, 0) - '0') * 10 + (x->n_digits > 1 ? numeric_digit(x, 1) - '0' : 0);
        return decimal_key(x->sign, x->point, d);
    }
    case PGW_CMP_TEXT: {
        const unsigned char *s = (const unsigned char *)x->text;
        return (uint16_t)((x->len > 0 ? s[0] << 8 : 0) | (x->len > 1 ? s[1] : 0));
    }
    default: /* DATE, TIMESTAMP, TIMESTAMPTZ: the day, 1912 to 2087 one by one */
        return finite_key(0x8000 + (x->i - 10957));
    }
}
