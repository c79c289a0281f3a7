/*
 * examples/common/excommon.h — small pieces the example programs share
 * (`pgwitness`, `pgwitness-ingest`, `pgwitness-tasks`), so that they parse
 * numbers, options, names and files the same way and say the same things
 * about bad input.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGW_EXCOMMON_H
#define PGW_EXCOMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <libpq-fe.h>

/* PostgreSQL's limit for a name (NAMEDATALEN - 1): longer names are
 * truncated by the server, so they are refused before any SQL runs. */
#define EX_MAX_NAME_BYTES 63

/* Strict unsigned decimal: digits only (no sign, no spaces, no junk), no
 * overflow, within [min, max]. */
bool ex_parse_ull(const char *s, unsigned long long min, unsigned long long max,
                  unsigned long long *out);

/* Strict decimal number (digits, optional fraction and exponent; no hex,
 * inf or nan, no spaces), within [min, max]. */
bool ex_parse_double(const char *s, double min, double max, double *out);

/*
 * Matches argv[*i] against the long option `name` ("--table") taking a
 * value, as "--table VALUE" or "--table=VALUE" (and `short_name`, e.g.
 * "-d", as "-d VALUE"; NULL for none). Returns 1 with *value set (and *i
 * advanced past a separate value), 0 when argv[*i] is another option, -1
 * when it is this option but its value is missing.
 */
int ex_opt_value(int argc, char **argv, int *i, const char *name, const char *short_name,
                 const char **value);

/* True when s[0..len) is well-formed UTF-8 (no overlong forms, no
 * surrogates, nothing above U+10FFFF). */
bool ex_utf8_valid(const char *s, size_t len);

/* What is wrong with a name for PostgreSQL ("is empty", "is not valid
 * UTF-8", "is longer than 63 bytes (PostgreSQL's limit)"), or NULL. */
const char *ex_name_problem(const char *name);

/*
 * Splits a table argument: `table` (schema public), `schema.table`, or
 * either part in double quotes ("My Schema"."My.Table", "" for a quote
 * inside), the only way to name a part that contains a dot. Names are
 * taken as written: nothing is lowercased, T1 and t1 are two tables.
 * Returns true with both parts filled (and *qualified, when not NULL, true
 * when the argument named the schema); false with `why` saying what is
 * wrong, ending with its one hint (use table or schema.table).
 */
bool ex_table_name(const char *arg, char *schema, size_t schema_size, char *table,
                   size_t table_size, bool *qualified, char *why, size_t why_size);

/*
 * Reads a whole file ("-" is standard input) into a NUL-terminated buffer
 * (free()). On failure returns NULL and writes the reason into `why`
 * ("No such file or directory", "it is a directory", "it is larger than
 * the limit of N bytes", ...), for messages like "cannot read FILE: why".
 * `max` bounds the size (0: no bound): a regular file larger than that is
 * refused before it is read, and any other input (a pipe, /dev/zero) is
 * read up to max + 1 bytes at most, so memory stays bounded.
 */
char *ex_read_file(const char *path, size_t max, size_t *len, char *why, size_t why_size);

/* "1 row", "2 rows": the noun in the form the count needs. */
const char *ex_plural(unsigned long long n, const char *one, const char *many);

/*
 * Text for people: `s` with its control characters escaped, so that a
 * name, reason or value from the database or the command line cannot
 * move the cursor, recolour the terminal or break a line. C0 controls
 * (newline and tab included) and DEL become \xNN, C1 controls (U+0080 to
 * U+009F) \uNNNN, and bytes that are not UTF-8 \xNN; everything else,
 * backslashes included, is kept. Returns one of 16 buffers used in turn
 * (so up to 16 calls can be arguments of one printf); NULL gives "(null)"
 * and out of memory "?". Not for JSON output (jansson escapes it).
 */
const char *ex_text(const char *s);

/*
 * Standard output at the end of a program: flushes and closes it, and
 * when any write to it failed (a full disk, a closed descriptor) prints
 * "PROG: writing standard output: REASON" on stderr and returns 1 (or rc
 * when that already says failure); otherwise returns rc. Call it last:
 * `return ex_finish_stdout("pgwitness", rc);`.
 */
int ex_finish_stdout(const char *prog, int rc);

/*
 * Ignores SIGPIPE, so that writing to a closed pipe (`pgwitness history |
 * head -1`) fails with EPIPE like any other failed write (one line, exit 1)
 * instead of killing the program. Call first thing in main. (libpq guards
 * its own socket writes from SIGPIPE either way.)
 */
void ex_ignore_sigpipe(void);

/* fflush(f), false when it or an earlier write to f failed. For stdout
 * the reason is kept for ex_finish_stdout (the failed data is dropped, so
 * the final flush may not see it). Long-running output (watch) stops at
 * false. */
bool ex_flush(FILE *f);

/*
 * Writes a whole file so that a failure never leaves it partial or
 * clobbered (a directory is refused: "Is a directory"): ex_file_prepare writes the data into a temporary file in the
 * target's directory (mode: the existing file's, or 0666 less the umask),
 * ex_file_commit renames it over the target (a symbolic link is followed:
 * the file it names is replaced), ex_file_abort removes it. A target that
 * is neither a regular file nor absent (a device such as /dev/stdout, a
 * FIFO, a dangling link) cannot be replaced: it is written directly by
 * ex_file_commit. Each failing call returns false with the reason in
 * `why` ("Permission denied", ...) and removes the temporary file; the
 * caller says "cannot write PATH: why". When the temporary file cannot be
 * created (a directory the user cannot write), `why` says so and names the
 * directory: "cannot create the temporary file beside it in directory
 * DIR: Permission denied". `data` must outlive the commit.
 */
typedef struct ex_file {
    char *target; /* where the data goes (a link resolved) */
    char *tmp;    /* the temporary file, or NULL when written directly */
    const char *data;
    size_t len;
} ex_file;

bool ex_file_prepare(ex_file *f, const char *path, const char *data, size_t len, char *why,
                     size_t why_size);
bool ex_file_commit(ex_file *f, char *why, size_t why_size);
void ex_file_abort(ex_file *f);

/* For a handler of a fatal signal (async-signal-safe): removes the
 * temporary file ex_file_prepare wrote and no commit or abort has yet
 * renamed or removed. */
void ex_file_signal_cleanup(void);

/*
 * Interrupts while a query runs. After ex_signals_cancel(), SIGINT, SIGTERM
 * and SIGHUP first cancel the query in flight on the connection given to
 * ex_cancel_connection() (the server would otherwise finish it, or keep
 * waiting for its lock, after this process is gone: a statement queued
 * for a lock holds up every later one on that table until the server
 * notices), remove ex_file's temporary file, then end the process by the
 * signal (exit status 128 + N), as it would without a handler. PQcancel
 * is async-signal-safe (PostgreSQL documentation, libpq "Canceling Queries
 * in Progress").
 */
void ex_signals_cancel(void);
/* The connection whose query an interrupt cancels: conn, or none (NULL;
 * call it so before PQfinish). Returns false when its cancel object could
 * not be made (out of memory): an interrupt then cancels nothing. */
bool ex_cancel_connection(PGconn *conn);

/* Flushes standard output, as ex_flush; when that failed, writes the
 * reason ("No space left on device") into `why`, marks the failure as
 * said (ex_finish_stdout then adds no line of its own, but still returns
 * failure) and returns false. For a command whose error line must say
 * more than the reason (what was done before the output failed). */
bool ex_flush_stdout(char *why, size_t why_size);

#endif
