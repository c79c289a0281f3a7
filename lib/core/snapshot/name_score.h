/*
 * lib/core/snapshot/name_score.h — a graded similarity of two column names,
 * the name evidence for renames (issue 17). Not installed. The formula, its
 * constants and their sources are written at the top of name_score.c.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGWITNESS_NAME_SCORE_H
#define PGWITNESS_NAME_SCORE_H

#include <stdbool.h>
#include <stdint.h>

/* Bytes of a name that are read: the rest is ignored, cut before the first
 * character that does not fit whole. PostgreSQL names have at most 63. */
#define PGWI_NAME_MAX_BYTES 255
/* Tokens of a name that are compared: the rest is ignored (and weighs
 * nothing). */
#define PGWI_NAME_MAX_TOKENS 16
/* The length of a name PostgreSQL cut: identifiers longer than
 * NAMEDATALEN - 1 bytes are truncated to it. */
#define PGWI_NAME_CUT_BYTES 63

/* How much of the two names each kind of token match explains.
 *
 * `score` is what pgwi_name_score returns. The other four are shares of the
 * two names' token weight (both names together) explained by one kind of
 * token match, each match counted at its similarity:
 *
 *   share(kind) = sum, over the matches of that kind, of
 *                   sim * (weight of its tokens in a + weight of its tokens in b)
 *                 / (weight of all tokens of a + weight of all tokens of b)
 *
 * Each is in [0, 1], and tokens + abbrev + edit + synonym is the
 * similarity-weighted Dice coverage of the two names. They explain the
 * score; they are not its terms: the score weighs the two names' coverages
 * unequally and halves for counterpart roles (see name_score.c).
 * All five are 0 when either name is NULL or folds to nothing; when the
 * names are equal after folding, score and tokens are 1 and the rest 0. */
typedef struct pgwi_name_evidence {
    double score;   /* the graded name similarity, in [0, 1] */
    double tokens;  /* the same word on both sides: equal tokens (in any
                       order), a word run together on one side and split
                       into 2 or 3 tokens on the other (starttime / start_time),
                       or a word and its start ending a 63-byte name that
                       PostgreSQL cut (name_score.c, 4.) */
    double abbrev;  /* abbreviations: a token that is a prefix of the other
                       (temp / temperature), its consonant skeleton
                       (qty / quantity), or the initials of 2 or 3 adjacent
                       tokens (bp / blood_pressure) */
    double edit;    /* misspellings: tokens one Damerau-Levenshtein edit apart
                       (two in long words; adress / address); and for two
                       one-token names, any spelling distance, scaled down
                       (id / uid) */
    double synonym; /* the built-in synonym table: from / start / begin,
                       to / end / stop / until, id / key / no / num / number,
                       count / cnt / num / number, sex / gender, ...; and two
                       words of one end of a role axis (pu / pickup,
                       lng / lon, src / origin) */
} pgwi_name_evidence;

/* The similarity of two column names as names, in [0, 1], from their text
 * alone: 1.0 when they are equal after folding (case, spaces and
 * punctuation ignored, as pgwi_fold_hash folds), 0.0 when either is NULL or
 * folds to nothing. Symmetric (the same double whichever comes first),
 * deterministic and pure: no I/O, no allocation, no global state (about
 * 16 KB of stack). Input is UTF-8; invalid bytes are taken one by one as
 * letters. Fills *ev when ev is not NULL. */
double pgwi_name_score(const char *a, const char *b, pgwi_name_evidence *ev);

/* ---- the same, for a caller that compares many names ---- */

/* A token of a prepared name. Private to name_score.c. */
typedef struct pgwi_name_token {
    uint32_t first;        /* its first character */
    unsigned char start;   /* in pgwi_name_prep.ch */
    unsigned char len;     /* in characters */
    unsigned char kind;    /* letters, digits, version (v2) */
    unsigned char ascii;   /* every character is ASCII */
    unsigned char wclass;  /* content, class word, stop word */
    unsigned char syn;     /* synonym groups, one bit each */
    unsigned char axis;    /* role axis, 0 for none */
    unsigned char pole;    /* which end of that axis */
    unsigned char cut;     /* the last word of a name PostgreSQL cut */
    double w;              /* weight, relative to the name's heaviest token */
} pgwi_name_token;

/* A name read once for many pgwi_name_score_prepared calls (a diff scores
 * every removed column against every added one). About 1.4 KB; its fields
 * are private to name_score.c. */
typedef struct pgwi_name_prep {
    /* The characters with separators removed and ASCII lowered; a UTF-8
     * sequence is one character, its bytes packed in one integer. */
    uint32_t ch[PGWI_NAME_MAX_BYTES];
    unsigned char sep[(PGWI_NAME_MAX_BYTES + 7) / 8]; /* bit i: a separator before ch[i] */
    unsigned short n;                                 /* characters */
    unsigned short ntok;                              /* tokens */
    pgwi_name_token tok[PGWI_NAME_MAX_TOKENS];
    double wsum; /* the tokens' total weight */
} pgwi_name_prep;

/* Reads `name` into *p. Returns false when name is NULL or folds to nothing;
 * *p is then still valid and scores 0.0 against anything. */
bool pgwi_name_prepare(pgwi_name_prep *p, const char *name);

/* pgwi_name_score of two prepared names: the same double as
 * pgwi_name_score on the names they were prepared from. */
double pgwi_name_score_prepared(const pgwi_name_prep *a, const pgwi_name_prep *b,
                                pgwi_name_evidence *ev);

#endif
