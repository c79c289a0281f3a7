/*
 * lib/core/snapshot/name_score.c — a graded similarity of two column names,
 * the name evidence for renames (issue 17).
 * SPDX-License-Identifier: MIT
 *
 * THE FORMULA
 *
 * 1. Reading and folding. At most the first 255 bytes of a name are read,
 *    cut before a UTF-8 sequence that does not fit whole. Folding is
 *    pgwi_fold_hash's (names.c): U+FEFF is dropped; ASCII letters are
 *    lowered; every other ASCII character and U+00A0 separates; any other
 *    byte is a letter (non-ASCII letters are not case-folded), and a UTF-8
 *    sequence is always handled as one character. Two names equal after
 *    folding score 1. A NULL name, or one that folds to nothing ("", "__",
 *    a lone BOM), scores 0 against anything.
 *
 * 2. Tokens, at most 16 per name (the rest is not compared). A new token
 *    starts after a separator, between a digit and a non-digit, at an
 *    ASCII lower-to-upper case change (pickup|Date), and before the last
 *    capital of a run of capitals followed by lower case (PU|Location|ID,
 *    but VendorIDs is vendor|ids); a lone v stays with the digits after it
 *    (qty|v2). "Culmen Length (mm)" is culmen|length|mm, and
 *    "2 - Order Details Order Date" is 2|order|details|order|date.
 *
 * 3. Weights. A token's base weight is
 *      1     for a content word: anything not listed below;
 *      0.5   for a class word, the representation terms of ISO/IEC 11179-5
 *            and their usual short forms (id, key, no, num, number, code,
 *            name, date, time, datetime, timestamp, type, value, amount,
 *            count, flag, status, rate, text, desc, indicator, ...): they
 *            say what kind of value a column holds, not which value;
 *      0.25  for a stop word: a unit (mm, cm, km, g, kg, mg, lb, oz, ml,
 *            pct, percent, usd, mph, sec, ...), a marker (v1, v2, new, old,
 *            tmp, raw, copy, unnamed), a digit run (a section number), or
 *            an English function word (of, in, the, per, and, ...).
 *    Its weight w is its base over the largest base in its name, so a
 *    name of class or stop words only ("id", "mm") is not worth less than
 *    any other. W(a) is the sum of a's weights.
 *    Chosen so that a unit added keeps a name close (body_mass_g against
 *    body_mass: 0.956) and two names that share only their class word
 *    stay low (fare_amount against tip_amount: 1/3, and 1/6 once halved
 *    for their different heads, step 6).
 *
 * 4. Token matches, each with a similarity s:
 *      EXACT     equal tokens, in any order                           1
 *      JOINED    a token equal to 2 or 3 adjacent letter tokens of
 *                the other run together (starttime, start|time)       0.95
 *      TYPO      letter tokens of 5 or more characters, the same
 *                first letter, at OSA distance d = 1, or 2 when both
 *                have 9 or more; L the longer length                  1 - d/L
 *                and when each name is a single token, at any
 *                distance, each edit counted twice (id / uid: 1/3)    1 - 2d/L, if > 0
 *      SYNONYM   two tokens of one group of the table below, or two
 *                words of one end of a role axis below (pu / pickup,
 *                do / dropoff, lng / lon, src / origin), unless one is
 *                a stop word (in / inbound), where no abbreviation
 *                above scores as much                                 0.8
 *      PREFIX    the shorter token begins the longer
 *                (temp / temperature, glu / glucose)                  0.8, 0.5 if 2 letters
 *      SKELETON  the shorter token is the longer's first letters,
 *                then only consonants found in order in the rest of
 *                the longer (qty / quantity, amt / amount)            0.7, 0.4 if 2 letters
 *      ACRONYM   a 2- or 3-letter token, the initials of as many
 *                adjacent tokens (bp / blood|pressure,
 *                dob / date|of|birth)                                 0.8, 0.6 if 2 letters
 *    A name of 63 bytes (NAMEDATALEN - 1) that ends in a letter or digit
 *    is taken as cut there by PostgreSQL, which truncates longer
 *    identifiers to 63 bytes: its last token, when a letter token of 3 or
 *    more characters that begins the other token, is that word cut short
 *    and matches it as EXACT (1), not as PREFIX ("... Who Were Spe" /
 *    speeding). A cut before a multi-byte character leaves 61 or 62 bytes
 *    and is not seen.
 *    The kinds are those of COMA's name matchers (Do & Rahm, "COMA - A
 *    system for flexible combination of schema matching approaches",
 *    VLDB 2002: tokenization, abbreviation and acronym expansion,
 *    synonyms, edit distance), and abbreviations by truncation, vowel
 *    dropping and initials are the forms schema labels take (Sorrentino,
 *    Bergamaschi, Gawinecki, Po, "Schema label normalization for improving
 *    schema matching", Data & Knowledge Engineering, 2010). OSA is the
 *    optimal string alignment distance: Damerau-Levenshtein with adjacent
 *    transpositions. One edit because 80% of misspellings are one
 *    insertion, deletion, substitution or transposition (Damerau, "A
 *    technique for computer detection and correction of spelling errors",
 *    CACM 1964); the same first letter because misspellings rarely touch
 *    it (Pollock & Zamora, "Automatic spelling correction in scientific and
 *    scholarly text", CACM 1984). Edit distance is applied to tokens, and
 *    to whole names only when each is one token: over whole names it
 *    rewards a long shared stem, which is what counterpart columns have
 *    (pickup_latitude / pickup_longitude: 3 edits in 16, OSA similarity
 *    0.81). Jaro-Winkler (Winkler, "String comparator metrics and enhanced
 *    decision rules in the Fellegi-Sunter model of record linkage", 1990)
 *    is not used, for the same reason more strongly: its bonus is for a
 *    shared prefix (pickup_latitude / pickup_longitude 0.92,
 *    start_station_id / end_station_id 0.75, id / uid 0).
 *    A prefix is worth more than a skeleton because truncation is the
 *    commoner abbreviation and a skeleton, whose letters may be spread,
 *    fits more unrelated words; two letters fit so many words that they
 *    count for little. The synonyms and typos stay below equal tokens,
 *    a joined word just below.
 *
 *    Matching is one-to-one: the candidate with the highest s (then the
 *    order of the kinds above, then more tokens, then earlier tokens) is
 *    taken, and its tokens leave the game, until no candidate is left.
 *
 * 5. Coverage. M(a) is the sum over the matches of s times the weight of
 *    the match's tokens in a, and cov(a) = M(a) / W(a); likewise for b.
 *    With hi the larger of cov(a) and cov(b) and lo the smaller:
 *      T = 0.6 hi + 0.4 lo
 *    Dice (which COMA's combination of token sets resembles) weighs the
 *    two names equally. Leaning 0.6 toward the better-covered name means
 *    that a name whose tokens are all found in the other scores at least
 *    0.6 however much the other adds (a prefix, a section number:
 *    src_amount / amount 0.733, "2 - Order Details Order Date" /
 *    order_date 0.76), more than two names that each share half of the
 *    other (0.5). Two single tokens score their similarity s.
 *
 * 6. Roles. When an unmatched token of a and an unmatched token of b are
 *    counterparts - the two ends of one role axis (the table below), two
 *    different digit runs, or two different versions - the names are two
 *    columns playing opposite roles, not one renamed:
 *      score = 0.5 T    (otherwise score = T)
 *    0.5 puts start_station_id / end_station_id at 0.3, far below
 *    start_station_id / start_station (0.92); pickup_datetime /
 *    dropoff_datetime 0.167; address_line_1 / address_line_2 0.444.
 *    Likewise when the head of each name - its last content word, a
 *    letter token that is not a class or stop word - is unmatched: English
 *    compounds are head-final (the head names the kind of thing, the words
 *    before it qualify it: Quirk, Greenbaum, Leech & Svartvik, "A
 *    Comprehensive Grammar of the English Language", 1985, 17.108), so
 *    two names with different heads name two measures of one thing
 *    (bill_depth_mm / bill_length_mm: 0.278, not 0.556), while a changed
 *    qualifier keeps the measure ("Culmen Length (mm)" / bill_length_mm
 *    stays 0.556).
 *
 * The evidence parts (pgwi_name_evidence) are the shares of W(a) + W(b)
 * that each kind explains, each match counted at s times the weight of its
 * tokens on both sides: tokens (EXACT, JOINED), abbrev (PREFIX, SKELETON,
 * ACRONYM), edit (TYPO), synonym (SYNONYM).
 *
 * Synonym groups (the table, word by word, is below): from start begin;
 * end stop to until; id identifier key no nr num number; count cnt num
 * number; datetime timestamp dttm ts; sex gender; mean average avg; sum
 * total. num and number are in two groups (an identifier, a count), so
 * id ~ num and num ~ count but not id ~ count. quantity is not a synonym
 * of count (a quantity may be a measure, kg of rice); qty is its skeleton.
 *
 * Role axes (the words of one end name one role, so they are synonyms
 * too: they are how one role is spelt in different formats): start/end
 * (begin from start | end stop to until), first/last,
 * pickup/dropoff (pickup pu | dropoff do, as trip records name them),
 * origin/destination (origin orig source src | destination dest dst
 * target), min/max (min minimum low lo lowest | max maximum high hi
 * highest), open/close, in/out (in inbound | out outbound), lat/lon (lat
 * latitude | lon lng longitude), x/y/z, home/away, before/after (prev
 * previous before | next after).
 *
 * The constants were chosen from the cases named above and in issue 17,
 * not fitted to the corpus in tests/data/renames, which is for measuring
 * them. The cost: a 300 x 300 comparison is 90,000 scores; prepare the 600
 * names once (pgwi_name_prepare) and score the prepared names.
 */
#include "name_score.h"

#include <stddef.h>
#include <string.h>

#define NS_MAX_BYTES PGWI_NAME_MAX_BYTES
#define NS_MAX_TOKENS PGWI_NAME_MAX_TOKENS
#define NS_MAX_EDIT 32 /* the longest token compared by edit distance */

/* ---- the constants of the formula (see above) ---- */

#define SIM_EXACT 1.0
#define SIM_JOINED 0.95
#define SIM_SYNONYM 0.8
#define SIM_PREFIX 0.8
#define SIM_PREFIX2 0.5
#define SIM_SKELETON 0.7
#define SIM_SKELETON2 0.4
#define SIM_ACRONYM 0.8
#define SIM_ACRONYM2 0.6
#define W_CONTENT 1.0
#define W_CLASS 0.5
#define W_STOP 0.25
#define ALPHA 0.6
#define RHO 0.5

/* ---- the word table ---- */

/* Weight classes. */
enum { WC_CONTENT = 0, WC_CLASS = 1, WC_STOP = 2 };

/* Synonym groups (bits): two tokens in one group are synonyms. */
enum {
    SY_START = 1u << 0, /* begin, from, start */
    SY_END = 1u << 1,   /* end, stop, to, until */
    SY_ID = 1u << 2,    /* id, identifier, key, no, nr, num, number */
    SY_COUNT = 1u << 3, /* cnt, count, num, number */
    SY_TS = 1u << 4,    /* datetime, dttm, timestamp, ts */
    SY_SEX = 1u << 5,   /* gender, sex */
    SY_MEAN = 1u << 6,  /* average, avg, mean */
    SY_TOTAL = 1u << 7, /* sum, total */
};

/* Role axes: two unmatched tokens on one axis at different poles say the
 * names are counterparts (a start and an end), not one column renamed. */
enum {
    AX_NONE = 0,
    AX_START_END,   /* 1 begin from start        | 2 end stop to until */
    AX_FIRST_LAST,  /* 1 first                   | 2 last */
    AX_PICKUP_DROP, /* 1 pickup pu               | 2 dropoff do */
    AX_ORIGIN_DEST, /* 1 origin orig source src  | 2 destination dest dst target */
    AX_MIN_MAX,     /* 1 min minimum low lo lowest | 2 max maximum high hi highest */
    AX_OPEN_CLOSE,  /* 1 open                    | 2 close */
    AX_IN_OUT,      /* 1 in inbound              | 2 out outbound */
    AX_LAT_LON,     /* 1 lat latitude            | 2 lon lng longitude */
    AX_XYZ,         /* 1 x | 2 y | 3 z */
    AX_HOME_AWAY,   /* 1 home                    | 2 away */
    AX_PREV_NEXT,   /* 1 prev previous before    | 2 next after */
    AX_NUMBER,      /* digit runs: two different numbers */
    AX_VERSION,     /* v1, v2, ...: two different versions */
};

typedef struct ns_word {
    char w[12];
    unsigned char len;
    unsigned char wclass;
    unsigned char syn;
    unsigned char axis;
    unsigned char pole;
} ns_word;

#define WORD(w, wc, syn, axis, pole) {w, sizeof(w) - 1, wc, syn, axis, pole}
#define STOP(w) WORD(w, WC_STOP, 0, AX_NONE, 0)
#define CLASS(w, syn) WORD(w, WC_CLASS, syn, AX_NONE, 0)
#define SYN(w, syn) WORD(w, WC_CONTENT, syn, AX_NONE, 0)
#define ROLE(w, syn, axis, pole) WORD(w, WC_CONTENT, syn, axis, pole)

/* The words the formula knows, one array per first letter. */
static const ns_word w_a[] = {
    STOP("a"), STOP("an"), STOP("and"), STOP("at"), CLASS("amount", 0), CLASS("amt", 0),
    SYN("average", SY_MEAN), SYN("avg", SY_MEAN), ROLE("after", 0, AX_PREV_NEXT, 2),
    ROLE("away", 0, AX_HOME_AWAY, 2),
};
static const ns_word w_b[] = {
    STOP("by"), ROLE("before", 0, AX_PREV_NEXT, 1), ROLE("begin", SY_START, AX_START_END, 1),
};
static const ns_word w_c[] = {
    STOP("cm"), STOP("copy"), CLASS("cnt", SY_COUNT), CLASS("code", 0), CLASS("count", SY_COUNT),
    ROLE("close", 0, AX_OPEN_CLOSE, 2),
};
static const ns_word w_d[] = {
    CLASS("date", 0), CLASS("datetime", SY_TS), CLASS("desc", 0), CLASS("description", 0),
    CLASS("dt", 0), CLASS("dttm", SY_TS), ROLE("dest", 0, AX_ORIGIN_DEST, 2),
    ROLE("destination", 0, AX_ORIGIN_DEST, 2), ROLE("do", 0, AX_PICKUP_DROP, 2),
    ROLE("dropoff", 0, AX_PICKUP_DROP, 2), ROLE("dst", 0, AX_ORIGIN_DEST, 2),
};
static const ns_word w_e[] = {
    STOP("eur"), ROLE("end", SY_END, AX_START_END, 2),
};
static const ns_word w_f[] = {
    STOP("for"), STOP("ft"), CLASS("flag", 0), ROLE("first", 0, AX_FIRST_LAST, 1),
    ROLE("from", SY_START, AX_START_END, 1),
};
static const ns_word w_g[] = {
    STOP("g"), SYN("gender", SY_SEX),
};
static const ns_word w_h[] = {
    ROLE("hi", 0, AX_MIN_MAX, 2), ROLE("high", 0, AX_MIN_MAX, 2), ROLE("highest", 0, AX_MIN_MAX, 2),
    ROLE("home", 0, AX_HOME_AWAY, 1),
};
static const ns_word w_i[] = {
    STOP("is"), CLASS("id", SY_ID), CLASS("identifier", SY_ID), CLASS("indicator", 0),
    WORD("in", WC_STOP, 0, AX_IN_OUT, 1), ROLE("inbound", 0, AX_IN_OUT, 1),
};
static const ns_word w_k[] = {
    STOP("kg"), STOP("km"), STOP("kmh"), STOP("kph"), CLASS("key", SY_ID),
};
static const ns_word w_l[] = {
    STOP("l"), STOP("lb"), STOP("lbs"), ROLE("last", 0, AX_FIRST_LAST, 2),
    ROLE("lat", 0, AX_LAT_LON, 1), ROLE("latitude", 0, AX_LAT_LON, 1),
    ROLE("lng", 0, AX_LAT_LON, 2), ROLE("lo", 0, AX_MIN_MAX, 1), ROLE("lon", 0, AX_LAT_LON, 2),
    ROLE("longitude", 0, AX_LAT_LON, 2), ROLE("low", 0, AX_MIN_MAX, 1),
    ROLE("lowest", 0, AX_MIN_MAX, 1),
};
static const ns_word w_m[] = {
    STOP("m"), STOP("mg"), STOP("mi"), STOP("ml"), STOP("mm"), STOP("mph"), STOP("ms"),
    SYN("mean", SY_MEAN), ROLE("max", 0, AX_MIN_MAX, 2), ROLE("maximum", 0, AX_MIN_MAX, 2),
    ROLE("min", 0, AX_MIN_MAX, 1), ROLE("minimum", 0, AX_MIN_MAX, 1),
};
static const ns_word w_n[] = {
    STOP("new"), CLASS("name", 0), CLASS("no", SY_ID), CLASS("nr", SY_ID),
    CLASS("num", SY_ID | SY_COUNT), CLASS("number", SY_ID | SY_COUNT),
    ROLE("next", 0, AX_PREV_NEXT, 2),
};
static const ns_word w_o[] = {
    STOP("of"), STOP("old"), STOP("on"), STOP("or"), STOP("oz"), ROLE("open", 0, AX_OPEN_CLOSE, 1),
    ROLE("orig", 0, AX_ORIGIN_DEST, 1), ROLE("origin", 0, AX_ORIGIN_DEST, 1),
    ROLE("out", 0, AX_IN_OUT, 2), ROLE("outbound", 0, AX_IN_OUT, 2),
};
static const ns_word w_p[] = {
    STOP("pct"), STOP("per"), STOP("percent"), STOP("percentage"),
    ROLE("pickup", 0, AX_PICKUP_DROP, 1), ROLE("prev", 0, AX_PREV_NEXT, 1),
    ROLE("previous", 0, AX_PREV_NEXT, 1), ROLE("pu", 0, AX_PICKUP_DROP, 1),
};
static const ns_word w_r[] = {
    STOP("raw"), CLASS("rate", 0),
};
static const ns_word w_s[] = {
    STOP("s"), STOP("sec"), STOP("secs"), CLASS("status", 0), SYN("sex", SY_SEX),
    SYN("sum", SY_TOTAL), ROLE("source", 0, AX_ORIGIN_DEST, 1),
    ROLE("src", 0, AX_ORIGIN_DEST, 1), ROLE("start", SY_START, AX_START_END, 1),
    ROLE("stop", SY_END, AX_START_END, 2),
};
static const ns_word w_t[] = {
    STOP("the"), STOP("tmp"), CLASS("text", 0), CLASS("time", 0), CLASS("timestamp", SY_TS),
    CLASS("ts", SY_TS), CLASS("type", 0), SYN("total", SY_TOTAL),
    ROLE("target", 0, AX_ORIGIN_DEST, 2), ROLE("to", SY_END, AX_START_END, 2),
};
static const ns_word w_u[] = {
    STOP("unnamed"), STOP("usd"), ROLE("until", SY_END, AX_START_END, 2),
};
static const ns_word w_v[] = {
    CLASS("val", 0), CLASS("value", 0),
};
static const ns_word w_w[] = {
    STOP("was"), STOP("were"), STOP("who"), STOP("with"),
};
static const ns_word w_x[] = {ROLE("x", 0, AX_XYZ, 1)};
static const ns_word w_y[] = {ROLE("y", 0, AX_XYZ, 2)};
static const ns_word w_z[] = {ROLE("z", 0, AX_XYZ, 3)};

#define NWORDS(a) (sizeof(a) / sizeof((a)[0]))
#define BUCKET(a) {a, NWORDS(a)}
static const struct {
    const ns_word *w;
    size_t n;
} word_bucket[26] = {
    BUCKET(w_a), BUCKET(w_b), BUCKET(w_c), BUCKET(w_d), BUCKET(w_e), BUCKET(w_f), BUCKET(w_g),
    BUCKET(w_h), BUCKET(w_i), {NULL, 0},  BUCKET(w_k), BUCKET(w_l), BUCKET(w_m), BUCKET(w_n),
    BUCKET(w_o), BUCKET(w_p), {NULL, 0},  BUCKET(w_r), BUCKET(w_s), BUCKET(w_t), BUCKET(w_u),
    BUCKET(w_v), BUCKET(w_w), BUCKET(w_x), BUCKET(w_y), BUCKET(w_z),
};
#define NS_MAX_WORD 11 /* the longest word above */

/* ---- names: characters and tokens ---- */

/* Character classes. */
enum { CC_LOWER = 1, CC_UPPER = 2, CC_DIGIT = 3, CC_OTHER = 4, CC_MASK = 0x7F, CC_SEP = 0x80 };
/* Token kinds. */
enum { TK_LETTERS = 1, TK_DIGITS = 2, TK_VERSION = 3 };

typedef pgwi_name_prep ns_name;
typedef pgwi_name_token ns_token;

/* Length of the UTF-8 sequence at s, a non-ASCII byte (1 when invalid: its
 * bytes are then characters of their own). Reads no further than a NUL. */
static size_t seq_len(const unsigned char *s)
{
    unsigned char c = s[0];
    size_t n = (c >= 0xC2 && c <= 0xDF) ? 2 : (c >= 0xE0 && c <= 0xEF) ? 3
             : (c >= 0xF0 && c <= 0xF4) ? 4 : 1;
    for (size_t k = 1; k < n; k++)
        if ((s[k] & 0xC0) != 0x80)
            return 1;
    return n;
}

/* CC_* of each ASCII byte; 0 for a separator. */
#define L_ CC_LOWER
#define U_ CC_UPPER
#define D_ CC_DIGIT
static const unsigned char ascii_class[128] = {
    0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  /* controls */
    0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  /* controls */
    0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  /*  !"#$%&'()*+,-./ */
    D_, D_, D_, D_, D_, D_, D_, D_, D_, D_, 0,  0,  0,  0,  0,  0,  /* 0-9 :;<=>? */
    0,  U_, U_, U_, U_, U_, U_, U_, U_, U_, U_, U_, U_, U_, U_, U_, /* @ A-O */
    U_, U_, U_, U_, U_, U_, U_, U_, U_, U_, U_, 0,  0,  0,  0,  0,  /* P-Z [\]^_ */
    0,  L_, L_, L_, L_, L_, L_, L_, L_, L_, L_, L_, L_, L_, L_, L_, /* ` a-o */
    L_, L_, L_, L_, L_, L_, L_, L_, L_, L_, L_, 0,  0,  0,  0,  0,  /* p-z {|}~ DEL */
};
#undef L_
#undef U_
#undef D_

static bool is_vowel(uint32_t c)
{
    return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u';
}

/* The token's weight class, synonyms and role, from the word table. */
static void lookup(ns_token *t, const uint32_t *ch)
{
    t->wclass = WC_CONTENT;
    t->syn = 0;
    t->axis = AX_NONE;
    t->pole = 0;
    if (t->kind != TK_LETTERS) {
        t->wclass = WC_STOP;
        t->axis = t->kind == TK_DIGITS ? AX_NUMBER : AX_VERSION;
        return;
    }
    if (!t->ascii || t->len > NS_MAX_WORD)
        return;
    const uint32_t *c = ch + t->start;
    size_t b = (size_t)(c[0] - 'a'); /* ASCII letters, lowered: a..z */
    const ns_word *w = word_bucket[b].w;
    for (size_t i = 0; i < word_bucket[b].n; i++) {
        if (w[i].len != t->len)
            continue;
        size_t k = 1;
        while (k < t->len && (unsigned char)w[i].w[k] == c[k])
            k++;
        if (k == t->len) {
            t->wclass = w[i].wclass;
            t->syn = w[i].syn;
            t->axis = w[i].axis;
            t->pole = w[i].pole;
            return;
        }
    }
}

bool pgwi_name_prepare(pgwi_name_prep *nm, const char *s)
{
    nm->n = 0;
    nm->ntok = 0;
    nm->wsum = 0;
    memset(nm->sep, 0, sizeof nm->sep);
    if (!s)
        return false;
    const unsigned char *p = (const unsigned char *)s;
    unsigned char cc[NS_MAX_BYTES];
    size_t n = 0;
    bool sep = false, any_other = false;
    for (size_t i = 0; p[i] && i < NS_MAX_BYTES;) {
        unsigned c0 = p[i];
        uint32_t c = c0;
        unsigned char k;
        if (c0 < 0x80) {
            i++;
            k = ascii_class[c0];
            if (!k) {
                sep = true; /* ASCII space, punctuation, control */
                continue;
            }
            if (k == CC_UPPER)
                c |= 0x20; /* lowered */
        } else {
            any_other = true;
            size_t l = seq_len(p + i);
            if (i + l > NS_MAX_BYTES)
                break; /* the cut: never half a character */
            const unsigned char *q = p + i;
            i += l;
            if (l == 3 && q[0] == 0xEF && q[1] == 0xBB && q[2] == 0xBF)
                continue; /* U+FEFF: dropped, as pgwi_fold_hash drops it */
            if (l == 2 && q[0] == 0xC2 && q[1] == 0xA0) {
                sep = true; /* U+00A0 no-break space */
                continue;
            }
            for (size_t j = 1; j < l; j++)
                c |= (uint32_t)q[j] << (8 * j);
            k = CC_OTHER;
        }
        if (sep && n > 0) {
            k |= CC_SEP;
            nm->sep[n >> 3] |= (unsigned char)(1u << (n & 7));
        }
        sep = false;
        nm->ch[n] = c;
        cc[n] = k;
        n++;
    }
    nm->n = (unsigned short)n;
    if (n == 0)
        return false;
    /* A name of NAMEDATALEN - 1 bytes that ends in a letter or digit was
     * probably cut there by PostgreSQL: its last word may be cut too. */
    size_t bytes = strlen(s);
    unsigned char last = bytes ? p[bytes - 1] : 0;
    bool cut_name = bytes == PGWI_NAME_CUT_BYTES && (last >= 0x80 || ascii_class[last] != 0);

    /* Tokens: a new one after a separator, between a digit and a
     * non-digit, between an ASCII lower-case and an upper-case letter
     * (pickup|Date), and before the last capital of a run of capitals
     * followed by lower case (PU|Location) unless that lower case is a
     * plural s ending the token (IDs). A lone v before digits makes one
     * version token with them (v2). */
    size_t start = 0;
    bool version = false;
    for (size_t k = 1; k <= n && nm->ntok < NS_MAX_TOKENS; k++) {
        bool cut = k == n;
        if (!cut) {
            unsigned a = cc[k - 1] & CC_MASK, b = cc[k];
            if (a == b && a != CC_UPPER)
                continue; /* the common case: more of the same, no separator */
            if (b & CC_SEP)
                cut = true;
            else if ((a == CC_DIGIT) != (b == CC_DIGIT)) {
                if (b == CC_DIGIT && k - start == 1 && nm->ch[start] == 'v')
                    version = true;
                else
                    cut = true;
            } else if (a == CC_LOWER && b == CC_UPPER)
                cut = true;
            else if (a == CC_UPPER && b == CC_UPPER && k + 1 < n && cc[k + 1] == CC_LOWER)
                cut = !(nm->ch[k + 1] == 's' && (k + 2 == n || cc[k + 2] != CC_LOWER));
        }
        if (!cut)
            continue;
        ns_token *t = &nm->tok[nm->ntok++];
        t->first = nm->ch[start];
        t->start = (unsigned char)start;
        t->len = (unsigned char)(k - start);
        t->kind = version ? TK_VERSION : (cc[start] & CC_MASK) == CC_DIGIT ? TK_DIGITS : TK_LETTERS;
        t->ascii = 1;
        t->cut = cut_name && k == n && t->kind == TK_LETTERS;
        for (size_t i = start; any_other && i < k; i++)
            if ((cc[i] & CC_MASK) == CC_OTHER)
                t->ascii = 0;
        lookup(t, nm->ch);
        start = k;
        version = false;
    }

    /* rel[heaviest class in the name][class] = base / heaviest base. */
    static const double rel[3][3] = {
        {W_CONTENT / W_CONTENT, W_CLASS / W_CONTENT, W_STOP / W_CONTENT},
        {W_CONTENT / W_CLASS, W_CLASS / W_CLASS, W_STOP / W_CLASS},
        {W_CONTENT / W_STOP, W_CLASS / W_STOP, W_STOP / W_STOP},
    };
    unsigned top = WC_STOP;
    for (size_t i = 0; i < nm->ntok; i++)
        if (nm->tok[i].wclass < top)
            top = nm->tok[i].wclass;
    for (size_t i = 0; i < nm->ntok; i++) {
        nm->tok[i].w = rel[top][nm->tok[i].wclass];
        nm->wsum += nm->tok[i].w;
    }
    return true;
}

/* A total order of prepared names; 0 only when they are equal after
 * folding. */
static int name_cmp(const ns_name *a, const ns_name *b)
{
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    for (size_t i = 0; i < a->n; i++)
        if (a->ch[i] != b->ch[i])
            return a->ch[i] < b->ch[i] ? -1 : 1;
    return memcmp(a->sep, b->sep, sizeof a->sep);
}

/* ---- token similarities ---- */

/* Kinds of match, in the order ties are broken. */
enum { K_EXACT, K_JOINED, K_TYPO, K_SYNONYM, K_PREFIX, K_SKELETON, K_ACRONYM, K_N };

static bool same_chars(const uint32_t *s, const uint32_t *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != t[i])
            return false;
    return true;
}

/* Optimal string alignment distance (Damerau-Levenshtein with adjacent
 * transpositions, no substring edited twice) of two strings of at most
 * NS_MAX_EDIT characters, or some value above max once it must exceed
 * max. */
static size_t osa(const uint32_t *s, size_t m, const uint32_t *t, size_t n, size_t max)
{
    size_t r0[NS_MAX_EDIT + 1], r1[NS_MAX_EDIT + 1], r2[NS_MAX_EDIT + 1];
    size_t *pp = r0, *pv = r1, *cur = r2;
    for (size_t j = 0; j <= n; j++)
        pv[j] = j;
    size_t low_prev = 0; /* the smallest value of the row before */
    for (size_t i = 1; i <= m; i++) {
        cur[0] = i;
        size_t low = i;
        for (size_t j = 1; j <= n; j++) {
            size_t v = pv[j - 1] + (s[i - 1] != t[j - 1]);
            if (pv[j] + 1 < v)
                v = pv[j] + 1;
            if (cur[j - 1] + 1 < v)
                v = cur[j - 1] + 1;
            if (i > 1 && j > 1 && s[i - 1] == t[j - 2] && s[i - 2] == t[j - 1] && pp[j - 2] + 1 < v)
                v = pp[j - 2] + 1;
            cur[j] = v;
            if (v < low)
                low = v;
        }
        /* A row and the one before it both above max: every later cell is
         * too (a transposition reaches back one row). */
        if (low > max && low_prev > max)
            return max + 1;
        low_prev = low;
        size_t *r = pp;
        pp = pv;
        pv = cur;
        cur = r;
    }
    return pv[n];
}

/* The best similarity of token ta of a with token tb of b, and its kind;
 * 0 when none. `one`: both names are one token each. */
static double pair_sim(const ns_name *a, const ns_token *ta, const ns_name *b,
                       const ns_token *tb, bool one, int *kind)
{
    bool letters = ta->kind == TK_LETTERS && tb->kind == TK_LETTERS;
    bool first = ta->first == tb->first;
    /* Two words of one end of a role axis name one role (pu / pickup,
     * lng / lon, src / origin): synonyms, unless a function word (in). */
    bool pole = letters && ta->axis != AX_NONE && ta->axis < AX_NUMBER &&
                ta->axis == tb->axis && ta->pole == tb->pole && ta->wclass != WC_STOP &&
                tb->wclass != WC_STOP;
    bool syn = letters && (ta->syn & tb->syn);
    if (!first && !one && !syn && !pole)
        return 0; /* the common case: nothing below can match */
    const uint32_t *s = a->ch + ta->start, *t = b->ch + tb->start;
    size_t m = ta->len, n = tb->len;
    if (first && m == n && ta->kind == tb->kind && same_chars(s, t, m)) {
        *kind = K_EXACT;
        return SIM_EXACT;
    }
    double best = 0;
    int bk = K_EXACT;
    size_t l = m > n ? m : n, diff = m > n ? m - n : n - m;
    if (l <= NS_MAX_EDIT) {
        size_t d = (size_t)-1;
        /* A misspelling: one edit (Damerau 1964), two in words of 9
         * letters or more, never of the first letter (Pollock & Zamora
         * 1984). */
        size_t dmax = one ? (l - 1) / 2 : 2; /* beyond it, no evidence */
        if (letters && first && m >= 5 && n >= 5 && diff <= 2) {
            d = osa(s, m, t, n, dmax > 2 ? dmax : 2);
            if (d == 1 || (d == 2 && m >= 9 && n >= 9)) {
                best = 1.0 - (double)d / (double)l;
                bk = K_TYPO;
            }
        }
        /* Two one-token names: any spelling distance, each edit counted
         * twice. */
        if (one && diff * 2 < l) {
            if (d == (size_t)-1)
                d = osa(s, m, t, n, dmax);
            double e = 1.0 - 2.0 * (double)d / (double)l;
            if (e > best) {
                best = e;
                bk = K_TYPO;
            }
        }
    }
    if (syn && SIM_SYNONYM > best) {
        best = SIM_SYNONYM;
        bk = K_SYNONYM;
    }
    /* Abbreviations: the shorter token x against the longer y. */
    if (letters && first && m != n && (m < n ? m : n) >= 2) {
        const uint32_t *x = m < n ? s : t, *y = m < n ? t : s;
        size_t xn = m < n ? m : n, yn = l, k = 1;
        while (k < xn && x[k] == y[k])
            k++;
        if (k == xn) {
            /* The start of the word whose end PostgreSQL cut: the word. */
            bool cut = (m < n ? ta : tb)->cut && xn >= 3;
            double v = cut ? SIM_EXACT : xn >= 3 ? SIM_PREFIX : SIM_PREFIX2;
            if (v > best) {
                best = v;
                bk = cut ? K_EXACT : K_PREFIX;
            }
        } else {
            /* x = a prefix of y, then only consonants, found in order in
             * the rest of y. */
            size_t j = k;
            bool ok = true;
            for (size_t i = k; i < xn && ok; i++) {
                if (is_vowel(x[i]))
                    ok = false;
                while (ok && j < yn && y[j] != x[i])
                    j++;
                if (j == yn)
                    ok = false;
                j++;
            }
            double v = xn >= 3 ? SIM_SKELETON : SIM_SKELETON2;
            if (ok && v > best) {
                best = v;
                bk = K_SKELETON;
            }
        }
    }
    /* After the abbreviations, which win a tie (lon is a prefix of
     * longitude). */
    if (pole && SIM_SYNONYM > best) {
        best = SIM_SYNONYM;
        bk = K_SYNONYM;
    }
    *kind = bk;
    return best;
}

/* A candidate match: tokens [a0, a1) of a with [b0, b1) of b. */
typedef struct ns_cand {
    double sim;
    unsigned char a0, a1, b0, b1, kind;
} ns_cand;

/* At most one candidate per token pair, and one per (token, span start)
 * each way. */
#define NS_MAX_CANDS (NS_MAX_TOKENS * NS_MAX_TOKENS * 3)

/* Token t of x against the spans of 2 and 3 letter tokens of y starting
 * at token j0, whose first character is t's: the span's words run together
 * (JOINED), or its initials (ACRONYM). Returns the best similarity, 0 when
 * none; *len is the span's length in tokens. */
static double span_sim(const ns_name *x, const ns_token *t, const ns_name *y, size_t j0,
                       size_t *len, int *kind)
{
    const uint32_t *s = x->ch + t->start, *u0 = y->ch + y->tok[j0].start;
    double best = 0;
    size_t total = 0;
    for (size_t m = 1; m <= 3 && j0 + m <= y->ntok; m++) {
        const ns_token *u = &y->tok[j0 + m - 1];
        if (u->kind != TK_LETTERS)
            break;
        total += u->len;
        if (m < 2)
            continue;
        if (total == t->len && same_chars(s, u0, total)) {
            *len = m;
            *kind = K_JOINED;
            return SIM_JOINED; /* nothing here scores higher */
        }
        if (t->len == m) {
            bool ok = true;
            for (size_t q = 1; q < m && ok; q++)
                ok = s[q] == y->tok[j0 + q].first;
            double v = m >= 3 ? SIM_ACRONYM : SIM_ACRONYM2;
            if (ok && v > best) {
                best = v;
                *len = m;
                *kind = K_ACRONYM;
            }
        }
    }
    return best;
}

/* The greedy order: higher similarity, then the kind's order, then more
 * tokens, then earlier tokens. A total order, so the result does not
 * depend on the order candidates were listed in. */
static bool cand_better(const ns_cand *c, const ns_cand *d)
{
    if (c->sim != d->sim)
        return c->sim > d->sim;
    if (c->kind != d->kind)
        return c->kind < d->kind;
    int sc = c->a1 - c->a0 + c->b1 - c->b0, sd = d->a1 - d->a0 + d->b1 - d->b0;
    if (sc != sd)
        return sc > sd;
    if (c->a0 != d->a0)
        return c->a0 < d->a0;
    if (c->b0 != d->b0)
        return c->b0 < d->b0;
    if (c->a1 != d->a1)
        return c->a1 < d->a1;
    return c->b1 < d->b1;
}

static uint32_t span_mask(unsigned lo, unsigned hi)
{
    return ((1u << (hi - lo)) - 1u) << lo;
}

/* Two tokens that name counterparts: the two ends of one role axis, or
 * two different numbers or versions. */
static bool opposed(const ns_name *a, const ns_token *t, const ns_name *b, const ns_token *u)
{
    if (t->axis == AX_NONE || t->axis != u->axis)
        return false;
    if (t->axis == AX_NUMBER || t->axis == AX_VERSION)
        return t->len != u->len || !same_chars(a->ch + t->start, b->ch + u->start, t->len);
    return t->pole != u->pole;
}

/* The head of a name: its last content word (a letter token that is not a
 * class or stop word), or -1 when it has none. */
static long head_token(const ns_name *n)
{
    for (size_t i = n->ntok; i-- > 0;)
        if (n->tok[i].kind == TK_LETTERS && n->tok[i].wclass == WC_CONTENT)
            return (long)i;
    return -1;
}

static void add_cand(ns_cand *cand, size_t *nc, double sim, int kind, size_t a0, size_t a1,
                     size_t b0, size_t b1)
{
    cand[(*nc)++] = (ns_cand){sim, (unsigned char)a0, (unsigned char)a1, (unsigned char)b0,
                              (unsigned char)b1, (unsigned char)kind};
}

/* a before b in name_cmp's order, not equal after folding. */
static double score_names(const ns_name *a, const ns_name *b, pgwi_name_evidence *ev)
{
    ns_cand cand[NS_MAX_CANDS];
    size_t nc = 0;
    bool one = a->ntok == 1 && b->ntok == 1;
    for (size_t i = 0; i < a->ntok; i++)
        for (size_t j = 0; j < b->ntok; j++) {
            int kind;
            double s = pair_sim(a, &a->tok[i], b, &b->tok[j], one, &kind);
            if (s > 0)
                add_cand(cand, &nc, s, kind, i, i + 1, j, j + 1);
        }
    for (size_t i = 0; i < a->ntok; i++)
        for (size_t j = 0; j + 1 < b->ntok; j++) {
            int kind;
            size_t len;
            if (a->tok[i].kind != TK_LETTERS || a->tok[i].first != b->tok[j].first)
                continue;
            double s = span_sim(a, &a->tok[i], b, j, &len, &kind);
            if (s > 0)
                add_cand(cand, &nc, s, kind, i, i + 1, j, j + len);
        }
    for (size_t j = 0; j < b->ntok; j++)
        for (size_t i = 0; i + 1 < a->ntok; i++) {
            int kind;
            size_t len;
            if (b->tok[j].kind != TK_LETTERS || b->tok[j].first != a->tok[i].first)
                continue;
            double s = span_sim(b, &b->tok[j], a, i, &len, &kind);
            if (s > 0)
                add_cand(cand, &nc, s, kind, i, i + len, j, j + 1);
        }

    /* Greedy one-to-one: the best candidate whose tokens are all still
     * free, until none is left. */
    uint32_t used_a = 0, used_b = 0;
    double ma = 0, mb = 0, share[K_N] = {0};
    for (;;) {
        const ns_cand *best = NULL;
        for (size_t c = 0; c < nc; c++) {
            if ((span_mask(cand[c].a0, cand[c].a1) & used_a) ||
                (span_mask(cand[c].b0, cand[c].b1) & used_b))
                continue;
            if (!best || cand_better(&cand[c], best))
                best = &cand[c];
        }
        if (!best)
            break;
        used_a |= span_mask(best->a0, best->a1);
        used_b |= span_mask(best->b0, best->b1);
        double xa = 0, xb = 0;
        for (unsigned i = best->a0; i < best->a1; i++)
            xa += a->tok[i].w;
        for (unsigned j = best->b0; j < best->b1; j++)
            xb += b->tok[j].w;
        ma += best->sim * xa;
        mb += best->sim * xb;
        share[best->kind] += best->sim * (xa + xb);
    }

    double rho = 1.0;
    for (size_t i = 0; i < a->ntok && rho == 1.0; i++) {
        if (used_a & (1u << i))
            continue;
        for (size_t j = 0; j < b->ntok; j++)
            if (!(used_b & (1u << j)) && opposed(a, &a->tok[i], b, &b->tok[j])) {
                rho = RHO;
                break;
            }
    }

    /* Different heads: the last content word of each name unmatched. */
    if (rho == 1.0) {
        long ha = head_token(a), hb = head_token(b);
        if (ha >= 0 && hb >= 0 && !(used_a & (1u << ha)) && !(used_b & (1u << hb)))
            rho = RHO;
    }

    double ca = ma / a->wsum, cb = mb / b->wsum;
    double hi = ca > cb ? ca : cb, lo = ca > cb ? cb : ca;
    double score = rho * (ALPHA * hi + (1.0 - ALPHA) * lo);
    if (score > 1.0)
        score = 1.0;
    if (ev) {
        double w = a->wsum + b->wsum;
        ev->score = score;
        ev->tokens = (share[K_EXACT] + share[K_JOINED]) / w;
        ev->abbrev = (share[K_PREFIX] + share[K_SKELETON] + share[K_ACRONYM]) / w;
        ev->edit = share[K_TYPO] / w;
        ev->synonym = share[K_SYNONYM] / w;
    }
    return score;
}

double pgwi_name_score_prepared(const pgwi_name_prep *a, const pgwi_name_prep *b,
                                pgwi_name_evidence *ev)
{
    if (ev)
        *ev = (pgwi_name_evidence){0, 0, 0, 0, 0};
    if (a->ntok == 0 || b->ntok == 0)
        return 0.0;
    /* One order whichever comes first, so that ties break the same way. */
    int c = name_cmp(a, b);
    if (c == 0) {
        if (ev) {
            ev->score = 1.0;
            ev->tokens = 1.0;
        }
        return 1.0;
    }
    return c < 0 ? score_names(a, b, ev) : score_names(b, a, ev);
}

double pgwi_name_score(const char *a, const char *b, pgwi_name_evidence *ev)
{
    pgwi_name_prep na, nb;
    pgwi_name_prepare(&na, a);
    pgwi_name_prepare(&nb, b);
    return pgwi_name_score_prepared(&na, &nb, ev);
}
