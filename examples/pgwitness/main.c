/*
 * examples/pgwitness/main.c — `pgwitness`, the operator CLI: what did this
 * table look like before it was replaced, how often do our inputs change
 * shape and how, why did this subscription refresh.
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "excommon.h"

static const char *const overview =
    "usage: pgwitness [-d CONNINFO] [--pgw-schema NAME] COMMAND [ARGS] [--json]\n"
    "\n"
    "pgwitness records what PostgreSQL tables looked like before they are\n"
    "dropped, diffs those snapshots (added, removed, retyped, reordered and\n"
    "renamed columns, recognised from their values in pg_stats), reports how\n"
    "often inputs change shape, and explains which writes a live query must\n"
    "refresh for.\n"
    "\n"
    "Snapshots:\n"
    "  install                 create or upgrade pgwitness's schema\n"
    "  snapshot TABLE          capture a table's snapshot from the catalog\n"
    "  baseline                snapshot live tables that have none yet\n"
    "  drop TABLE --reason R   drop a table through the audited drop funnel\n"
    "  history TABLE           the stored snapshots of a table (or --resource)\n"
    "  diff A [B]              compare two snapshots (files, ids, or a table's two\n"
    "                          newest)\n"
    "  report                  the drift report over every stored snapshot\n"
    "  prune --keep N          retention: keep N per resource and every change\n"
    "Invalidation:\n"
    "  decide                  decide whether a write must refresh a subscription\n"
    "  watch TABLE...          install triggers, print each write set as it arrives\n"
    "  unwatch TABLE...        remove the triggers watch installed\n"
    "                          (both with --source=wal: the stream, logical decoding\n"
    "                          of a publication, instead of the triggers)\n"
    "  slots                   the stream's replication slots and the WAL they keep\n"
    "  slots drop NAME         drop a replication slot, releasing its WAL\n"
    "  announce TABLE...       announce a definition change (DDL) to both sources\n"
    "  ddl-trigger install|remove\n"
    "                          the event triggers that announce every DDL\n"
    "\n"
    "Options for every command (before or after it; `--name VALUE` or\n"
    "`--name=VALUE`):\n"
    "  -d, --dbname CONNINFO   libpq connection string or URI (default: the PG*\n"
    "                          environment variables: PGHOST, PGPORT, PGUSER, ...)\n"
    "  --pgw-schema NAME       pgwitness's own schema (default pgwitness, or\n"
    "                          $PGWITNESS_SCHEMA)\n"
    "  --schema NAME           the same, except after `baseline`, where --schema\n"
    "                          is the LIKE pattern of schemas to cover\n"
    "  --json                  JSON on stdout instead of text: one document, or for\n"
    "                          `watch` and `decide --batch` one JSON object per line\n"
    "  -h, --help              help for pgwitness or for a command\n"
    "  --version               print the version\n"
    "\n"
    "TABLE is `table` (schema public) or `schema.table`. Names are taken as\n"
    "written, nothing is lowercased: T1 and t1 are two tables, and 'My Table'\n"
    "needs no quotes. Double-quote a part only when it contains a dot:\n"
    "'\"my.schema\".orders' or 'public.\"orders.2025\"'.\n"
    "Exit status: 0 success, 1 failure (a failed write to stdout included), 2\n"
    "usage error. Errors are one line on stderr; text output escapes control\n"
    "characters in names and values (ESC as \\x1b). `pgwitness help COMMAND` or\n"
    "`pgwitness COMMAND --help` for more.\n";

typedef struct command {
    const char *name;
    int (*run)(cli *, int, char **);
} command;

static const command commands[] = {
    {"install", cmd_install}, {"snapshot", cmd_snapshot}, {"baseline", cmd_baseline},
    {"drop", cmd_drop},       {"history", cmd_history},   {"diff", cmd_diff},
    {"report", cmd_report},   {"prune", cmd_prune},       {"decide", cmd_decide},
    {"watch", cmd_watch},     {"unwatch", cmd_unwatch},   {"slots", cmd_slots},
    {"announce", cmd_announce}, {"ddl-trigger", cmd_ddl_trigger},
};

static const command *find(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* The program and command a failed write on stdout is reported under
 * (ex_finish_stdout): "pgwitness decide: writing standard output: ...". */
static char prog_name[64] = "pgwitness";

static int run(int argc, char **argv)
{
    cli c;
    memset(&c, 0, sizeof c);
    c.prog = "pgwitness";
    c.conninfo = "";
    const char *env_schema = getenv("PGWITNESS_SCHEMA");
    if (env_schema && env_schema[0])
        c.pgw_schema = env_schema;
    int i = 1;
    /* Global options before the command. */
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(overview, stdout);
            return 0;
        }
        if (strcmp(a, "--version") == 0) {
            if (i + 1 < argc)
                return cli_usage(&c, "unexpected argument '%s' after --version", argv[i + 1]);
            printf("pgwitness %s\n", pgw_version());
            return 0;
        }
        if (strcmp(a, "--json") == 0) {
            c.json = true;
            continue;
        }
        /* "--name VALUE" or "--name=VALUE", as after the command. */
        static const struct {
            const char *name, *short_name;
        } globals[] = {{"--dbname", "-d"}, {"--schema", NULL}, {"--pgw-schema", NULL}};
        const char **slots[] = {&c.conninfo, &c.pgw_schema, &c.pgw_schema};
        int m = 0;
        for (size_t k = 0; k < 3 && m == 0; k++) {
            m = ex_opt_value(argc, argv, &i, globals[k].name, globals[k].short_name, slots[k]);
            if (m < 0)
                return cli_usage(&c, "option %s needs a value", globals[k].name);
        }
        if (m == 0)
            return cli_usage(&c, "unknown option '%s' (see pgwitness --help)", a);
    }
    if (i >= argc)
        return cli_usage(&c, "no command given; see pgwitness --help");
    const char *name = argv[i];
    if (strcmp(name, "help") == 0) {
        if (i + 1 < argc && !find(argv[i + 1]))
            return cli_usage(&c, "unknown command '%s' (see pgwitness --help)", argv[i + 1]);
        fputs(i + 1 < argc ? cli_help(argv[i + 1]) : overview, stdout);
        return 0;
    }
    const command *cmd = find(name);
    if (!cmd)
        return cli_usage(&c, "unknown command '%s' (see pgwitness --help)", name);
    c.command = cmd->name;
    snprintf(prog_name, sizeof prog_name, "pgwitness %s", cmd->name);
    for (int k = i + 1; k < argc; k++) {
        if (strcmp(argv[k], "--") == 0)
            break;
        if (strcmp(argv[k], "-h") == 0 || strcmp(argv[k], "--help") == 0) {
            fputs(cli_help(cmd->name), stdout);
            return 0;
        }
    }
    cli_signals_default();
    int rc = cmd->run(&c, argc - i, argv + i);
    cli_disconnect(&c);
    return rc;
}

int main(int argc, char **argv)
{
    /* A failed write on stdout (a full disk, a closed pipe) is a failure,
     * whatever ran: exit 1 with one line, not death by SIGPIPE. */
    ex_ignore_sigpipe();
    int rc = run(argc, argv);
    return ex_finish_stdout(prog_name, rc);
}
