/*
 * lib/core/snapshot/names.c — column-name folding (name evidence for renames) and
 * name anomalies (BOM, surrounding white space, control characters).
 * SPDX-License-Identifier: MIT
 */
#include "pgwitness/diff.h"
#include "snapshot_internal.h"

#include <string.h>

#include "xxhash_inline.h"

static bool ascii_alnum(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

uint64_t pgwi_fold_hash(const char *name)
{
    const unsigned char *s = (const unsigned char *)name;
    size_t len = strlen(name);
    char buf[1100];
    size_t n = 0;
    bool sep = false;
    for (size_t i = 0; i < len && n + 4 < sizeof buf;) {
        unsigned char c = s[i];
        if (c == 0xEF && i + 2 < len && s[i + 1] == 0xBB && s[i + 2] == 0xBF) {
            i += 3; /* U+FEFF */
            continue;
        }
        if (c == 0xC2 && i + 1 < len && s[i + 1] == 0xA0) {
            sep = true; /* U+00A0 no-break space */
            i += 2;
            continue;
        }
        if (c < 0x80 && !ascii_alnum(c)) {
            sep = true;
            i++;
            continue;
        }
        if (sep && n > 0)
            buf[n++] = '_';
        sep = false;
        buf[n++] = (char)((c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c);
        i++;
    }
    if (n == 0)
        return 0;
    uint64_t h = XXH3_64bits(buf, n);
    return h ? h : 1;
}

/* White space as Unicode's White_Space property lists it, for the code
 * points that occur in practice: ASCII space and tab/newline family, NBSP,
 * and U+3000. Returns the sequence length or 0. */
static size_t space_at(const unsigned char *s, size_t len)
{
    if (len >= 1 && (s[0] == ' ' || (s[0] >= 0x09 && s[0] <= 0x0D)))
        return 1;
    if (len >= 2 && s[0] == 0xC2 && s[1] == 0xA0)
        return 2;
    if (len >= 3 && s[0] == 0xE3 && s[1] == 0x80 && s[2] == 0x80)
        return 3;
    return 0;
}

unsigned pgwi_name_anomalies(const char *name)
{
    const unsigned char *s = (const unsigned char *)name;
    size_t len = strlen(name);
    unsigned flags = 0;
    if (space_at(s, len))
        flags |= PGW_ANOMALY_LEADING_SPACE;
    /* Trailing: the last character. Step back to its first byte. */
    if (len) {
        size_t i = len - 1;
        while (i > 0 && (s[i] & 0xC0) == 0x80)
            i--;
        if (space_at(s + i, len - i) == len - i)
            flags |= PGW_ANOMALY_TRAILING_SPACE;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = s[i];
        if (c == 0xEF && i + 2 < len && s[i + 1] == 0xBB && s[i + 2] == 0xBF)
            flags |= PGW_ANOMALY_BOM;
        else if (c < 0x20 || c == 0x7F)
            flags |= PGW_ANOMALY_CONTROL;
        else if (c == 0xC2 && i + 1 < len && s[i + 1] >= 0x80 && s[i + 1] <= 0x9F)
            flags |= PGW_ANOMALY_CONTROL; /* C1 controls U+0080..U+009F */
    }
    return flags;
}
