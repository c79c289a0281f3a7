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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tasks.h"

static void usage(FILE *f)
{
    fputs("usage: pgwitness-tasks --tenant NAME=CONNINFO [--tenant NAME=CONNINFO ...]\n"
          "                       (--script | --watch SECONDS)\n"
          "Each tenant's database gets a fresh `tasks` table, watched by pgwitness; the\n"
          "tasks.list subscriptions of every tenant are kept fresh by one listener.\n"
          "--script runs a fixed sequence of writes (and a forced reconnect) and prints\n"
          "each decision with its reason; --watch prints the decisions for writes made\n"
          "by others, for SECONDS (0: until interrupted).\n",
          f);
}

int main(int argc, char **argv)
{
    tasks_tenant tenants[4];
    char *owned[4] = {NULL};
    size_t n = 0;
    int mode = 0, seconds = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--tenant") == 0 && i + 1 < argc) {
            char *eq = strchr(argv[i + 1], '=');
            if (!eq || eq == argv[i + 1] || n == 4) {
                fprintf(stderr, "pgwitness-tasks: --tenant NAME=CONNINFO (at most 4)\n");
                return 2;
            }
            owned[n] = strdup(argv[++i]);
            char *e = strchr(owned[n], '=');
            *e = '\0';
            tenants[n].name = owned[n];
            tenants[n].conninfo = e + 1;
            n++;
        } else if (strcmp(a, "--script") == 0) {
            mode = 1;
        } else if (strcmp(a, "--watch") == 0 && i + 1 < argc) {
            mode = 2;
            seconds = atoi(argv[++i]);
        } else {
            fprintf(stderr, "pgwitness-tasks: unknown option %s (see --help)\n", a);
            return 2;
        }
    }
    if (n == 0 || mode == 0) {
        usage(stderr);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    int rc = mode == 1 ? tasks_script(stdout, tenants, n)
                       : tasks_watch(stdout, tenants, n, seconds);
    for (size_t i = 0; i < n; i++)
        free(owned[i]);
    return rc;
}
