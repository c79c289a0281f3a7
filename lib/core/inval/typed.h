/*
 * lib/core/inval/typed.h — values compared as their SQL type, from their
 * text form: the comparison types of typed range filters (issue 18).
 *
 * A value is parsed once into a pgwi_typed, then compared with another of
 * the same type by PostgreSQL's btree order for that type (the order `<`,
 * `<=`, `>=`, `>` and ORDER BY use). Parsing never allocates: a parsed
 * numeric or text points into the text it was parsed from, which must
 * outlive it.
 *
 * What each type accepts (anything else is *unparsable*: a caller treats a
 * row whose value is unparsable as maybe relevant, and refuses a bound
 * that is):
 *
 *  INT         [+-]?digits, within int64 (int2, int4 and int8 all fit),
 *              with leading and trailing ASCII white space, as int8in
 *              accepts them. Leading zeros are allowed ("007" is 7).
 *  NUMERIC     [+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?,
 *              white space around it, or NaN, Infinity, inf with an
 *              optional sign (case-insensitive), as numeric_in accepts
 *              them (PostgreSQL 14 and later). Compared exactly as
 *              decimals: "1.50" = "1.5" = "15e-1", "-0" = "0". Order:
 *              -Infinity < every finite value < Infinity < NaN, and NaN =
 *              NaN (PostgreSQL documentation, "Numeric Types", "Arbitrary
 *              Precision Numbers": NaN values are treated as equal, and
 *              greater than all non-NaN values). Exponents beyond ±1000000
 *              are unparsable (numeric's own range is far smaller).
 *  DATE        YYYY-MM-DD with 4 to 7 year digits, optionally followed by
 *              " BC"; or infinity, -infinity (case-insensitive). The
 *              DateStyle ISO output form (docs/wire.md "Text forms").
 *              Proleptic Gregorian, as PostgreSQL counts; year 1 BC is
 *              year 0. The day must exist (no February 30).
 *  TIMESTAMP   a DATE, then ' ' or 'T', then HH:MM:SS with 0 to 6
 *              fractional digits (microseconds, PostgreSQL's resolution;
 *              more digits would be rounded by PostgreSQL, so they are
 *              refused rather than guessed), then optionally " BC"; or
 *              infinity, -infinity. No time zone: a zone written on a
 *              timestamp is ignored by PostgreSQL's input, so it is refused
 *              here. Hours 00-23, minutes and seconds 00-59.
 *  TIMESTAMPTZ as TIMESTAMP, then a UTC offset: Z, or [+-]HH, [+-]HH:MM,
 *              [+-]HH:MM:SS, [+-]HHMM (hours up to 15, as PostgreSQL's
 *              offsets), before the " BC" when there is one, as the ISO
 *              output form writes it ("+00", "+05:30"). Compared as the
 *              instant in UTC: "2024-01-01 00:00:00+05:30" equals
 *              "2023-12-31 18:30:00+00". Without an offset a timestamptz
 *              depends on the session's TimeZone and is unparsable.
 *  TEXT        any bytes, compared as the C collation does: bytewise
 *              (memcmp), a prefix first. For UTF-8 this is code point order.
 *
 * Sources: PostgreSQL documentation, "Numeric Types" (8.1), "Date/Time
 * Types" (8.5: input, output in the ISO style, special values infinity
 * and -infinity, the BC suffix, microsecond resolution), "Collation
 * Support" (24.2: the C collation sorts by byte values).
 * Not installed. SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_INVAL_TYPED_H
#define PGWITNESS_INVAL_TYPED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgwitness/inval.h"

/* The comparison types are the public pgw_cmp_type (inval.h). */

/** The class of a parsed value, in order: every -infinity before every
 *  finite value, then +infinity, then NaN (numeric only). */
enum { PGWI_TYPED_NEG_INF = 0, PGWI_TYPED_FINITE = 1, PGWI_TYPED_POS_INF = 2, PGWI_TYPED_NAN = 3 };

/** A value parsed under its comparison type. */
typedef struct pgwi_typed {
    pgw_cmp_type type;
    int cls; /* PGWI_TYPED_* */
    /* INT: the value. DATE: days from 1970-01-01. TIMESTAMP(TZ): days from
     * 1970-01-01 of the instant (in UTC for TIMESTAMPTZ). */
    int64_t i;
    /* TIMESTAMP(TZ): microseconds into the day, 0..86399999999. */
    int64_t usec;
    /* NUMERIC, finite: sign (-1, 0 for zero, +1); the significant digits,
     * first and last non-zero (n_digits of them from index `first`,
     * counted with the '.' skipped); the value is 0.d1d2...dn x 10^point. */
    int sign;
    const char *digits; /* the mantissa as written, without its sign */
    size_t first;       /* index of the first significant digit, '.' skipped */
    size_t n_digits;    /* significant digits, from the first to the last non-zero */
    long dot;           /* offset of the '.' in digits, or -1 */
    long point;
    /* TEXT: the bytes. */
    const char *text;
    size_t len;
} pgwi_typed;

/* Parses s[0..len) as type. Returns true, or false when it is unparsable
 * (see above; *out is then unspecified). s need not be NUL-terminated. */
bool pgwi_typed_parse(pgwi_typed *out, pgw_cmp_type type, const char *s, size_t len);

/* Compares two values parsed under the same type: -1, 0 or 1. */
int pgwi_typed_cmp(const pgwi_typed *a, const pgwi_typed *b);

/* A 16-bit key of a parsed value, non-decreasing in its type's order (a <
 * b implies key(a) <= key(b)), so that key(a) < key(b) proves a < b: a
 * reverse index compares the keys of a write's values with those of its
 * runners' range bounds without their runner blocks. -infinity is 0,
 * +infinity 0xFFFE, NaN 0xFFFF. Resolution: integers and numerics by
 * their two leading significant digits and exponent (about 1%), dates and
 * timestamps by the day from 1912 to 2087 (clamped beyond), text by its
 * first two bytes. */
uint16_t pgwi_typed_key16(const pgwi_typed *x);

/* The lower-case name of a comparison type ("int", "numeric", "date",
 * "timestamp", "timestamptz", "text"); NULL outside the enum. */
const char *pgwi_cmp_type_name(pgw_cmp_type type);

/* The names of the comparison types in enum order from PGW_CMP_INT,
 * NULL-terminated (the JSON readers' enum table). */
extern const char *const pgwi_cmp_type_names[];

/* Looks a comparison type up by name (exact, case-sensitive); false when
 * no type has that name. */
bool pgwi_cmp_type_from_name(pgw_cmp_type *out, const char *name);

#endif
