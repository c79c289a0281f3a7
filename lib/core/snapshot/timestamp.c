/*
 * lib/core/snapshot/timestamp.c — RFC 3339 timestamps as microseconds since the Unix
 * epoch (proleptic Gregorian calendar, UTC).
 * SPDX-License-Identifier: MIT
 */
#include "snapshot_internal.h"

#include <stdio.h>
#include <string.h>

#define USEC_PER_DAY INT64_C(86400000000)

/* Days since 1970-01-01 of a proleptic Gregorian date (era arithmetic: a
 * 400-year era has 146097 days; March-based years put the leap day last). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t mp = (m + 9) % 12; /* March = 0 */
    int64_t doy = (153 * mp + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static int64_t min_usec(void)
{
    return days_from_civil(1, 1, 1) * USEC_PER_DAY;
}

static int64_t max_usec(void)
{
    return (days_from_civil(9999, 12, 31) + 1) * USEC_PER_DAY - 1;
}

bool pgwi_usec_in_range(int64_t usec)
{
    return usec >= min_usec() && usec <= max_usec();
}

int pgw_timestamp_format(char out[PGW_TIMESTAMP_SIZE], int64_t usec)
{
    if (!out || !pgwi_usec_in_range(usec))
        return PGW_EINVAL;
    int64_t days = usec / USEC_PER_DAY;
    int64_t rem = usec % USEC_PER_DAY;
    if (rem < 0) {
        rem += USEC_PER_DAY;
        days--;
    }
    int64_t y;
    int m, d;
    civil_from_days(days, &y, &m, &d);
    int64_t secs = rem / 1000000;
    char buf[64]; /* the fields are in range; the compiler cannot tell */
    snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", (int)y, m, d,
             (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60),
             (int)(rem % 1000000));
    memcpy(out, buf, PGW_TIMESTAMP_SIZE - 1);
    out[PGW_TIMESTAMP_SIZE - 1] = '\0';
    return PGW_OK;
}

static bool digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

static int days_in_month(int y, int m)
{
    static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
        return 29;
    return dm[m - 1];
}

int pgw_timestamp_parse(int64_t *out, const char *text, pgw_error *err)
{
    if (PGWI_CHECK_NONNULL(err, "timestamp_parse", out, text) < 0)
        return PGW_EINVAL;
    const char *p = text;
    int y, mo, d, h = 0, mi = 0, sec = 0;
    long frac = 0;
    if (!(digits(p, 4, &y) && p[4] == '-' && digits(p + 5, 2, &mo) && p[7] == '-' &&
          digits(p + 8, 2, &d)))
        goto bad;
    p += 10;
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo))
        return pgwi_error(err, PGW_EPARSE, "timestamp \"%.64s\" names an impossible date", text);
    int64_t offset_min = 0;
    if (*p == '\0')
        goto done; /* a plain date: midnight UTC */
    if (*p != 'T' && *p != 't' && *p != ' ')
        goto bad;
    p++;
    if (!(digits(p, 2, &h) && p[2] == ':' && digits(p + 3, 2, &mi)))
        goto bad;
    p += 5;
    if (*p == ':') {
        if (!digits(p + 1, 2, &sec))
            goto bad;
        p += 3;
        if (*p == '.') {
            p++;
            int n = 0;
            while (*p >= '0' && *p <= '9') {
                if (++n > 6)
                    return pgwi_error(err, PGW_EPARSE,
                                      "timestamp \"%.64s\" has more than 6 fractional digits "
                                      "(microseconds)",
                                      text);
                frac = frac * 10 + (*p++ - '0');
            }
            if (n == 0)
                goto bad;
            for (; n < 6; n++)
                frac *= 10;
        }
    }
    if (h > 23 || mi > 59 || sec > 59)
        return pgwi_error(err, PGW_EPARSE, "timestamp \"%.64s\" names an impossible time", text);
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p == '-' ? -1 : 1, oh, om = 0;
        p++;
        if (!digits(p, 2, &oh))
            goto bad;
        p += 2;
        if (*p == ':') {
            if (!digits(p + 1, 2, &om))
                goto bad;
            p += 3;
        } else if (p[0] >= '0' && p[0] <= '9') {
            if (!digits(p, 2, &om))
                goto bad;
            p += 2;
        }
        if (oh > 23 || om > 59)
            goto bad;
        offset_min = sign * (oh * 60 + om);
    } else {
        return pgwi_error(err, PGW_EPARSE,
                          "timestamp \"%.64s\" needs a time zone: end it with Z or +HH:MM",
                          text);
    }
    if (*p != '\0')
        goto bad;
done:;
    int64_t usec = days_from_civil(y, mo, d) * USEC_PER_DAY +
                   ((int64_t)h * 3600 + mi * 60 + sec) * 1000000 + frac -
                   offset_min * 60 * 1000000;
    if (!pgwi_usec_in_range(usec))
        return pgwi_error(err, PGW_EPARSE, "timestamp \"%.64s\" is outside the years 0001-9999",
                          text);
    *out = usec;
    return PGW_OK;
bad:
    return pgwi_error(err, PGW_EPARSE,
                      "\"%.64s\" is not an RFC 3339 timestamp such as 2026-11-30T09:10:44Z or a "
                      "date such as 2026-11-30",
                      text);
}
