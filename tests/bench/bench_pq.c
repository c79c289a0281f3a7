/*
 * tests/bench/bench_pq.c — see bench_pq.h.
 * SPDX-License-Identifier: MIT
 */
#define _DEFAULT_SOURCE
#include "bench_pq.h"

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pgwitness/pgwitness-pq.h"

extern char **environ;

void bench_exec(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK) {
        fprintf(stderr, "bench: %s\n%s", sql, PQresultErrorMessage(r));
        exit(1);
    }
    PQclear(r);
}

const char *bench_value(PGconn *c, const char *sql, char *buf, size_t cap)
{
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) < 1 || PQnfields(r) < 1) {
        fprintf(stderr, "bench: %s\n%s", sql,
                PQresultStatus(r) == PGRES_TUPLES_OK ? "no row\n" : PQresultErrorMessage(r));
        exit(1);
    }
    snprintf(buf, cap, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    return buf;
}

uint64_t bench_wal_insert_lsn(PGconn *c)
{
    char text[64];
    uint64_t lsn = 0;
    bench_value(c, "SELECT pg_current_wal_insert_lsn()", text, sizeof text);
    if (pgw_lsn_parse(&lsn, text, NULL) != PGW_OK) {
        fprintf(stderr, "bench: not an LSN: %s\n", text);
        exit(1);
    }
    return lsn;
}

void bench_stream_unwatch(PGconn *c, const char *schema, const char *table)
{
    pgw_error err;
    if (pgw_pq_stream_unwatch_table(NULL, c, schema, table, NULL, &err) < 0) {
        fprintf(stderr, "bench: stream unwatch %s.%s: %s\n", schema, table, err.message);
        exit(1);
    }
}

const char *bench_pgbench_path(void)
{
    static char path[512];
    const char *dir = getenv("PGW_PG_BINDIR");
    snprintf(path, sizeof path, "%s%spgbench", dir ? dir : "", dir ? "/" : "");
    return path;
}

pid_t bench_spawn(char *const *args, const char *log)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    if (posix_spawnp(&pid, args[0], &fa, NULL, args, environ) != 0) {
        fprintf(stderr, "bench: cannot run %s\n", args[0]);
        exit(1);
    }
    posix_spawn_file_actions_destroy(&fa);
    return pid;
}

bool bench_wait(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0) {
    }
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

double bench_pgbench_tps(const char *log, long *tx)
{
    FILE *f = fopen(log, "r");
    char line[512];
    double tps = -1;
    *tx = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "tps = ", 6) == 0)
            tps = atof(line + 6);
        else if (strncmp(line, "number of transactions actually processed: ", 43) == 0)
            *tx = atol(line + 43);
    }
    if (f)
        fclose(f);
    return tps;
}

/* The fields of /proc/<pid>/stat after the command name, into buf; NULL
 * when unreadable. */
static const char *stat_fields(long pid, char *buf, size_t cap)
{
#ifdef __linux__
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = pid > 0 ? fopen(path, "r") : NULL;
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the command name may hold anything */
    return p && p[1] == ' ' ? p + 2 : NULL;
#else
    (void)pid;
    (void)buf;
    (void)cap;
    return NULL;
#endif
}

double bench_proc_cpu(long pid, bool children)
{
    char buf[1024];
    const char *p = stat_fields(pid, buf, sizeof buf);
    double t[4];
    /* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
     * utime stime cutime cstime */
    if (!p || sscanf(p, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lf %lf %lf %lf", &t[0],
                     &t[1], &t[2], &t[3]) != 4)
        return 0;
    return (children ? t[2] + t[3] : t[0] + t[1]) / (double)sysconf(_SC_CLK_TCK);
}

double bench_rusage_cpu(int who)
{
    struct rusage ru;
    getrusage(who, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

double bench_schedstat_ns(long pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/schedstat", pid);
    FILE *f = pid > 0 ? fopen(path, "r") : NULL;
    if (!f)
        return -1;
    double ns = -1;
    if (fscanf(f, "%lf", &ns) != 1)
        ns = -1;
    fclose(f);
    return ns;
}

long bench_parent_pid(long pid)
{
    char buf[1024];
    const char *p = stat_fields(pid, buf, sizeof buf);
    long ppid = 0;
    if (!p || sscanf(p, "%*c %ld", &ppid) != 1)
        return 0;
    return ppid;
}

bool bench_proc_alive(long pid)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%ld", pid);
    return pid > 0 && stat(path, &st) == 0;
}

void bench_wait_backends_gone(PGconn *c, const char *application_name)
{
    const char *params[1] = {application_name};
    for (int i = 0; i < 1000; i++) {
        PGresult *r = PQexecParams(c,
                                   "SELECT pid FROM pg_catalog.pg_stat_activity "
                                   "WHERE application_name = $1",
                                   1, NULL, params, NULL, NULL, 0);
        bool alive = false;
        for (int k = 0; PQresultStatus(r) == PGRES_TUPLES_OK && k < PQntuples(r); k++)
            alive |= bench_proc_alive(atol(PQgetvalue(r, k, 0)));
        PQclear(r);
        if (!alive)
            break;
        bench_sleep_ms(10);
    }
    /* A backend leaves pg_stat_activity just before it exits: give the
     * postmaster the moment it needs to reap the last ones. */
    bench_sleep_ms(20);
}

void bench_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}
