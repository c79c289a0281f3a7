/*
 * examples/pgwitness/cmd_watch.c — `pgwitness watch` (issue 6 adds the
 * triggers and the listener it needs).
 * SPDX-License-Identifier: MIT
 */
#include "cli.h"

int cmd_watch(cli *c, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail(c, "watch needs the trigger installer and listener of issue 6, which this "
                       "build does not have yet");
}
