/*
 * examples/tasks/main.c — the `pgwitness-tasks` example host.
 *
 *   pgwitness-tasks --tenant NAME=CONNINFO [--tenant NAME=CONNINFO ...]
 *                   (--script | --watch SECONDS)
 *
 * Each tenant has its own database. The program (re)creates a `tasks`
 * table in each, watches it, registers the tasks.list subscriptions of
 * every tenant in one index and listens. --script performs a fixed
 * sequence of writes from other connections (a forced reconnect included)
 * and prints each decision with its reason, then exits; --watch prints the
 * decisions for writes others make, for SECONDS (0: until interrupted).
 * SPDX-License-Identifier: MIT
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "excommon.h"
#include "tasks.h"

static void usage(FILE *f)
{
    fputs("usage: pgwitness-tasks --tenant NAME=CONNINFO [--tenant NAME=CONNINFO ...]\n"
          "                       (--script | --watch SECONDS)\n"
          "Each tenant's database gets a fresh `tasks` table, watched by pgwitness; the\n"
          "tasks.list subscriptions of every tenant are kept fresh by one listener.\n"
          "--script runs a fixed sequence of writes (and a forced reconnect) and prints\n"
          "each decision with its reason; --watch prints the decisions for writes made\n"
          "by others, for SECONDS (0 to 2147483647; 0: until interrupted). One to four\n"
          "tenants, each named once (letters, digits, _ and -). Options take their\n"
          "value as `--watch 10` or `--watch=10`. Exit status: 0 success, 1 failure,\n"
          "2 usage error.\n",
          f);
}

static int usage_error(const char *fmt, const char *arg)
{
    fputs("pgwitness-tasks: ", stderr);
    if (arg)
        fprintf(stderr, "%s%s", fmt, arg);
    else
        fputs(fmt, stderr);
    fputs(" (see pgwitness-tasks --help)\n", stderr);
    return 2;
}

#define MAX_TENANTS 4

static int run(int argc, char **argv)
{
    const char *tenant_args[MAX_TENANTS];
    size_t n = 0;
    bool script = false;
    const char *watch_s = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int m;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if ((m = ex_opt_value(argc, argv, &i, "--tenant", NULL, &v)) != 0) {
            if (m < 0)
                return usage_error("--tenant needs NAME=CONNINFO", NULL);
            const char *eq = strchr(v, '=');
            if (!eq || eq == v)
                return usage_error("--tenant takes NAME=CONNINFO, not ", v);
            /* The name is the scope's tenant, printed and put in JSON. */
            if (eq - v > 63 || strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789_-") != (size_t)(eq - v))
                return usage_error("a tenant NAME is 1 to 63 letters, digits, _ or -, not ", v);
            if (n == MAX_TENANTS)
                return usage_error("at most 4 tenants", NULL);
            for (size_t k = 0; k < n; k++)
                if (strncmp(tenant_args[k], v, (size_t)(eq - v) + 1) == 0)
                    return usage_error("a tenant is named twice: ", v);
            tenant_args[n++] = v;
        } else if (strcmp(a, "--script") == 0) {
            script = true;
        } else if ((m = ex_opt_value(argc, argv, &i, "--watch", NULL, &v)) != 0) {
            if (m < 0)
                return usage_error("--watch needs a number of seconds", NULL);
            watch_s = v;
        } else {
            return usage_error("unknown option ", a);
        }
    }
    unsigned long long seconds = 0;
    if (watch_s && !ex_parse_ull(watch_s, 0, 2147483647, &seconds))
        return usage_error("--watch takes a number of seconds from 0 (until interrupted) to "
                           "2147483647, not ",
                           watch_s);
    if (script && watch_s)
        return usage_error("--script and --watch cannot be combined: choose one", NULL);
    if (n == 0)
        return usage_error("give at least one --tenant NAME=CONNINFO", NULL);
    if (!script && !watch_s)
        return usage_error("give --script or --watch SECONDS", NULL);
    tasks_tenant tenants[MAX_TENANTS];
    char *owned[MAX_TENANTS] = {NULL};
    for (size_t k = 0; k < n; k++) {
        owned[k] = strdup(tenant_args[k]);
        if (!owned[k]) {
            for (size_t j = 0; j < k; j++)
                free(owned[j]);
            fputs("pgwitness-tasks: out of memory\n", stderr);
            return 1;
        }
        char *e = strchr(owned[k], '=');
        *e = '\0';
        tenants[k].name = owned[k];
        tenants[k].conninfo = e + 1;
    }
    /* Not line-buffered: the steps flush their output (ex_flush), which
     * keeps the reason of a failed write for ex_finish_stdout. */
    int rc = script ? tasks_script(stdout, tenants, n)
                    : tasks_watch(stdout, tenants, n, (int)seconds);
    for (size_t i = 0; i < n; i++)
        free(owned[i]);
    return rc;
}

int main(int argc, char **argv)
{
    /* A failed write on stdout (a full disk, a closed pipe) is a failure,
     * whatever ran: exit 1 with one line, not death by SIGPIPE. */
    ex_ignore_sigpipe();
    return ex_finish_stdout("pgwitness-tasks", run(argc, argv));
}
