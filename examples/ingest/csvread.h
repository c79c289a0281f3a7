/*
 * examples/ingest/csvread.h — reads a CSV file as a data team's loader
 * does: as pandas.read_csv() reads it with its defaults (sep=",",
 * quotechar='"', doublequote=True, skip_blank_lines=True, header=0,
 * keep_default_na=True). No I/O and no libpq, so the unit suite tests it
 * alone (tests/unit/check_csvread.c).
 *
 * The rules, each pandas' (its C tokenizer, pandas/_libs/src/parser/
 * tokenizer.c, and its header naming, pandas/_libs/parsers.pyx):
 *   - a UTF-8 byte order mark at the very start of the file is dropped;
 *   - a line ends at "\n", "\r\n" or a lone "\r"; the last line needs no
 *     line end;
 *   - blank lines (empty, or only spaces and tabs) are skipped wherever
 *     they are, before the header too; a line of delimiters (",,") is not
 *     blank: it is a row of missing values;
 *   - fields are separated by ","; a field that starts with '"' is quoted:
 *     up to the closing quote it may hold delimiters, line ends (which are
 *     kept in the value) and quotes written twice (""); text after the
 *     closing quote is kept as part of the field ("ab"cd is abcd), and a
 *     quote inside an unquoted field is an ordinary character;
 *   - a quoted field still open at the end of the file is an error;
 *   - nothing is trimmed: spaces around a field are part of it.
 * The header naming (csvread_column_names) and the missing-value markers
 * (csvread_is_na) are pandas' too; the row-length rules (short rows padded
 * with missing values, long rows refused) are the caller's (ingest.c).
 * SPDX-License-Identifier: MIT
 */
#ifndef PGW_EXAMPLE_CSVREAD_H
#define PGW_EXAMPLE_CSVREAD_H

#include <stdbool.h>
#include <stddef.h>

/** A reader over a CSV text in memory, one record at a time. */
typedef struct csvread {
    const char *data;  /* the text (not owned) */
    size_t len;        /* its length */
    size_t pos;        /* where the next record is looked for */
    size_t line;       /* the line (1-based) `pos` is on */
    size_t start_line; /* the line the last record returned starts on */
    size_t fields;     /* the fields of the last record returned */
    char *buf;         /* their bytes, each field followed by a NUL */
    size_t buf_len, buf_cap;
    size_t *off;       /* [fields]: where each field starts in buf */
    size_t *flen;      /* [fields]: each field's length (it may hold NULs) */
    size_t fields_cap;
} csvread;

/** Starts reading `data[0..len)` (not copied: it must outlive the reader);
 *  drops a leading UTF-8 byte order mark. */
void csvread_init(csvread *r, const char *data, size_t len);

/**
 * Reads the next record, skipping blank lines before it.
 * @return 1 with r->fields, csvread_field() and r->start_line describing
 *         it; 0 at the end of the text; -1 for a malformed record, with
 *         `why` saying what is wrong as a predicate ("has an
 *         unterminated quote in column 2 (...)"), for a message such as
 *         "FILE: line 7 <why>", r->start_line being that line. Aborts when
 *         memory runs out (an example program).
 */
int csvread_next(csvread *r, char *why, size_t why_size);

/** Field `i` (< r->fields) of the last record: NUL-terminated, valid until
 *  the next csvread_next(). */
const char *csvread_field(const csvread *r, size_t i);

/** The length of field `i` of the last record (it may hold NUL bytes). */
size_t csvread_field_len(const csvread *r, size_t i);

/** Frees what the reader holds (not the text). */
void csvread_free(csvread *r);

/**
 * True when a field's text is one of the values pandas reads as missing
 * (NaN) by default: "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN",
 * "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN",
 * "None", "n/a", "nan", "null" (pandas' STR_NA_VALUES). The comparison is
 * exact (case and spaces count), and quoting does not matter: "NA" in
 * quotes is missing too, as in pandas.
 */
bool csvread_is_na(const char *s, size_t len);

/**
 * The column names pandas gives a header's fields (n of them): an empty
 * field is "Unnamed: I" (I its 0-based position); a name seen before is
 * mangled to "name.1", "name.2", ... skipping any that the header already
 * holds, the named columns first and then the unnamed ones (so "a,a,a.1"
 * gives a, a.2, a.1). Returns n malloc()ed strings in a malloc()ed array
 * (csvread_names_free()); aborts when memory runs out.
 */
char **csvread_column_names(const char *const *fields, size_t n);

/** Frees what csvread_column_names() returned (NULL is allowed). */
void csvread_names_free(char **names, size_t n);

#endif
