/*
 * examples/pgwitness/cli.h — shared pieces of the `pgwitness` operator CLI.
 * SPDX-License-Identifier: MIT
 */
#ifndef PGW_CLI_H
#define PGW_CLI_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "excommon.h"
#include "pgwitness/pgwitness-pq.h"

/* Exit codes: 0 success, 1 failure, 2 usage. */
enum { EXIT_USAGE = 2 };

/* Global settings, from options before or after the command. */
typedef struct cli {
    const char *prog;        /* "pgwitness" */
    const char *command;     /* the command being run */
    const char *conninfo;    /* -d; "" means libpq's defaults (PG* variables) */
    const char *pgw_schema;  /* --schema / --pgw-schema; NULL means default */
    bool json;               /* --json */
    PGconn *conn;            /* opened on demand by cli_connect */
} cli;

/* One option of a command: --name or -c, with a value or a flag. */
typedef struct cli_opt {
    const char *name;   /* long name without "--" */
    char short_name;    /* 0 for none */
    bool takes_value;
    const char **value; /* set when takes_value */
    bool *flag;         /* set when !takes_value */
} cli_opt;

/* The options every database command takes: -d/--dbname, --pgw-schema (and
 * its older spelling --schema, where the command has no --schema of its
 * own), --json. */
#define COMMON_OPTS(c)                                                  \
    {"dbname", 'd', true, &(c)->conninfo, NULL},                        \
    {"pgw-schema", 0, true, &(c)->pgw_schema, NULL},                    \
    {"json", 0, false, NULL, &(c)->json}
#define SCHEMA_OPT(c) {"schema", 0, true, &(c)->pgw_schema, NULL}
/* Number of elements of an array. */
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Parses argv[1..argc) against opts ("--name VALUE", "--name=VALUE", "-c
 * VALUE"); positional arguments go to pos (at most max_pos). Then checks
 * the settings every command shares (pgwitness's schema name). Prints a
 * usage error and returns false on bad input. */
bool cli_parse(cli *c, int argc, char **argv, const cli_opt *opts, size_t n_opts,
               const char **pos, size_t max_pos, size_t *n_pos);

/* Prints "pgwitness COMMAND: message" to stderr; returns 2 or 1. */
int cli_usage(const cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_fail(const cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Reports a pgwitness failure (err's message), with a hint for codes that
 * have a usual fix; returns 1. */
int cli_fail_err(const cli *c, int rc, const pgw_error *err);
/* err's message (or rc's) for the operator: where the library says to run
 * pgw_pq_install(), the `pgwitness install` command for the schema asked
 * for. Returns the message, or buf holding the rewritten one. */
#define CLI_ERR_MESSAGE_SIZE (PGW_ERROR_MESSAGE_SIZE + 600)
const char *cli_err_message(const cli *c, int rc, const pgw_error *err, char *buf,
                            size_t size);

/* Connects (once); on failure reports it and returns NULL. Once
 * connected, SIGINT, SIGTERM and SIGHUP (handled from the start by
 * cli_signals_default) cancel the query in flight (PQcancel), remove the
 * temporary file of an unfinished ex_file, and end the process by the
 * signal (exit status 128 + N). */
PGconn *cli_connect(cli *c);
void cli_disconnect(cli *c);
/* Installs that handling (main, before running a command; `watch`
 * replaces it with its own once it listens). */
void cli_signals_default(void);

/* Splits a TABLE argument (excommon.h: `table`, `schema.table`, quoted
 * parts); on a bad one reports a usage error and returns false. */
bool cli_table_arg(const cli *c, const char *arg, char *schema, size_t ss, char *table,
                   size_t ts);

/* A name as PostgreSQL quotes an identifier, for messages: in double
 * quotes, a quote inside doubled ("bad""name"). Returns out. */
const char *cli_ident(char *out, size_t size, const char *name);

/* Checks a text option (--reason, --resource): non-empty UTF-8 of at most
 * `max` bytes; reports a usage error and returns false otherwise. */
bool cli_check_text(const cli *c, const char *option, const char *value, size_t max);

/* Checks a replication slot's name as PostgreSQL allows it (1..63 bytes
 * of a-z, 0-9 and _: ReplicationSlotValidateName), before connecting;
 * reports a usage error naming `option` (NULL for none) and returns false
 * otherwise. */
bool cli_check_slot(const cli *c, const char *option, const char *name);

/* A failed query's message for "doing X: message": the server's primary
 * message (no "ERROR:" prefix), or the first line of libpq's own when the
 * server sent none (r NULL: out of memory). Returns out. */
const char *cli_result_message(char *out, size_t size, const PGresult *r);


/* How messages name a file argument: "standard input" for "-", else the
 * path as given. */
const char *cli_file_name(const char *path);

/* Reads a whole file ("-": stdin) of at most `max` bytes (free()); on
 * failure, a larger file included, reports "cannot read FILE: reason" and
 * returns NULL. Input past `max` is not read (ex_read_file). */
char *cli_read_file(const cli *c, const char *path, size_t max, size_t *len);

/* Prints a JSON value (steals the reference) as one document on stdout;
 * returns 0, or 1 after reporting when it could not be built. */
struct json_t;
int cli_print_json(const cli *c, struct json_t *value);

/* Formats microseconds since the epoch as "2026-11-30 09:10:44" (UTC). */
void cli_time(char out[32], int64_t usec);

/* Commands. Each receives argv after the command name (argv[0] is the
 * command) and returns the exit code. */
int cmd_install(cli *c, int argc, char **argv);
int cmd_snapshot(cli *c, int argc, char **argv);
int cmd_baseline(cli *c, int argc, char **argv);
int cmd_drop(cli *c, int argc, char **argv);
int cmd_history(cli *c, int argc, char **argv);
int cmd_diff(cli *c, int argc, char **argv);
int cmd_report(cli *c, int argc, char **argv);
int cmd_prune(cli *c, int argc, char **argv);
int cmd_decide(cli *c, int argc, char **argv);
int cmd_watch(cli *c, int argc, char **argv);
int cmd_unwatch(cli *c, int argc, char **argv);
int cmd_slots(cli *c, int argc, char **argv);
int cmd_announce(cli *c, int argc, char **argv);
int cmd_ddl_trigger(cli *c, int argc, char **argv);

/* Help texts, printed by --help and `pgwitness help COMMAND`. */
const char *cli_help(const char *command);

#endif
