/*
 * examples/common/excommon.c — see excommon.h.
 * SPDX-License-Identifier: MIT
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "excommon.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool ex_parse_ull(const char *s, unsigned long long min, unsigned long long max,
                  unsigned long long *out)
{
    if (!s || *s < '0' || *s > '9')
        return false;
    unsigned long long v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        unsigned d = (unsigned)(*p - '0');
        if (v > (~0ULL - d) / 10)
            return false; /* overflow */
        v = v * 10 + d;
    }
    if (v < min || v > max)
        return false;
    *out = v;
    return true;
}

bool ex_parse_double(const char *s, double min, double max, double *out)
{
    if (!s)
        return false;
    /* The shape first: [digits][.digits][e[+-]digits], with a digit. */
    const char *p = s;
    bool digit = false;
    while (*p >= '0' && *p <= '9')
        p++, digit = true;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9')
            p++, digit = true;
    }
    if (!digit)
        return false;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (*p < '0' || *p > '9')
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p != '\0')
        return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end != '\0' || !isfinite(v) || v < min || v > max)
        return false;
    *out = v;
    return true;
}

int ex_opt_value(int argc, char **argv, int *i, const char *name, const char *short_name,
                 const char **value)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) == 0 && a[n] == '=') {
        *value = a + n + 1;
        return 1;
    }
    if (strcmp(a, name) != 0 && !(short_name && strcmp(a, short_name) == 0))
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *value = argv[++*i];
    return 1;
}

bool ex_utf8_valid(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    while (p < end) {
        unsigned c = *p;
        if (c < 0x80) {
            p++;
            continue;
        }
        size_t n;
        unsigned cp, min;
        if (c >= 0xC2 && c <= 0xDF)
            n = 1, cp = c & 0x1F, min = 0x80;
        else if (c >= 0xE0 && c <= 0xEF)
            n = 2, cp = c & 0x0F, min = 0x800;
        else if (c >= 0xF0 && c <= 0xF4)
            n = 3, cp = c & 0x07, min = 0x10000;
        else
            return false;
        if ((size_t)(end - p) <= n)
            return false;
        for (size_t k = 1; k <= n; k++) {
            if ((p[k] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (p[k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        p += n + 1;
    }
    return true;
}

const char *ex_name_problem(const char *name)
{
    if (!name || !name[0])
        return "is empty";
    size_t len = strlen(name);
    if (!ex_utf8_valid(name, len))
        return "is not valid UTF-8";
    if (len > EX_MAX_NAME_BYTES)
        return "is longer than 63 bytes (PostgreSQL's limit for a name)";
    return NULL;
}

/* Copies one name from *p: "..." with "" for a quote, or up to the next
 * '.'. Returns false with why filled. */
static bool one_name(const char **p, char *out, size_t size, const char *arg, char *why,
                     size_t why_size)
{
    const char *s = *p;
    size_t n = 0;
    if (*s == '"') {
        s++;
        for (;;) {
            if (*s == '\0') {
                snprintf(why, why_size, "'%s' has an unterminated quote", arg);
                return false;
            }
            if (*s == '"') {
                if (s[1] != '"') {
                    s++;
                    break;
                }
                s++;
            }
            if (n + 1 >= size) {
                snprintf(why, why_size, "a name in '%s' is too long", arg);
                return false;
            }
            out[n++] = *s++;
        }
    } else {
        while (*s && *s != '.') {
            if (n + 1 >= size) {
                snprintf(why, why_size, "a name in '%s' is too long", arg);
                return false;
            }
            out[n++] = *s++;
        }
    }
    out[n] = '\0';
    *p = s;
    return true;
}

/* The hint every message about a table argument ends with, once. */
#define TABLE_HINT "use table or schema.table"

static bool table_name_fail(char *why, size_t why_size)
{
    size_t n = strlen(why);
    if (n < why_size)
        snprintf(why + n, why_size - n, " (" TABLE_HINT ")");
    return false;
}

bool ex_table_name(const char *arg, char *schema, size_t schema_size, char *table,
                   size_t table_size, bool *qualified_out, char *why, size_t why_size)
{
    const char *p = arg;
    char first[256], second[256];
    const char *problem;
    if (!one_name(&p, first, sizeof first, arg, why, why_size))
        return table_name_fail(why, why_size);
    bool qualified = *p == '.';
    if (qualified) {
        p++;
        if (!one_name(&p, second, sizeof second, arg, why, why_size))
            return table_name_fail(why, why_size);
    }
    if (*p == '.') {
        snprintf(why, why_size,
                 "'%s' has more than two parts (" TABLE_HINT "; quote a name that contains a "
                 "dot: '\"my.table\"')",
                 arg);
        return false;
    }
    if (*p != '\0') {
        snprintf(why, why_size, "'%s' has text after a closing quote", arg);
        return table_name_fail(why, why_size);
    }
    if ((problem = ex_name_problem(first)) != NULL) {
        snprintf(why, why_size, "the %s name in '%s' %s", qualified ? "schema" : "table", arg,
                 problem);
        return table_name_fail(why, why_size);
    }
    if (qualified && (problem = ex_name_problem(second)) != NULL) {
        snprintf(why, why_size, "the table name in '%s' %s", arg, problem);
        return table_name_fail(why, why_size);
    }
    if (qualified_out)
        *qualified_out = qualified;
    snprintf(schema, schema_size, "%s", qualified ? first : "public");
    snprintf(table, table_size, "%s", qualified ? second : first);
    return true;
}

char *ex_read_file(const char *path, size_t max, size_t *len, char *why, size_t why_size)
{
    bool std_in = strcmp(path, "-") == 0;
    int fd = std_in ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, why_size, "%s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(why, why_size, "%s", strerror(errno));
        if (!std_in)
            close(fd);
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(why, why_size, "it is a directory");
        if (!std_in)
            close(fd);
        return NULL;
    }
    /* A regular file already over the bound is refused unread. */
    if (max && S_ISREG(st.st_mode) && (unsigned long long)st.st_size > max) {
        snprintf(why, why_size, "it is larger than the limit of %zu bytes", max);
        if (!std_in)
            close(fd);
        return NULL;
    }
    /* Anything else (a pipe, a device, a file that grows) is read up to
     * one byte past the bound, never further: /dev/zero ends there. */
    size_t cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 1 << 16;
    if (max && cap > max + 1)
        cap = max + 1;
    size_t n = 0;
    char *buf = malloc(cap + 1);
    const char *fail = buf ? NULL : "out of memory";
    while (!fail) {
        if (n == cap) {
            size_t grown = max && cap * 2 > max + 1 ? max + 1 : cap * 2;
            char *nb = realloc(buf, grown + 1);
            if (!nb) {
                fail = "out of memory";
                break;
            }
            buf = nb;
            cap = grown;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            fail = strerror(errno);
            break;
        }
        if (got == 0)
            break;
        n += (size_t)got;
        if (max && n > max) {
            snprintf(why, why_size, "it is larger than the limit of %zu bytes", max);
            fail = why;
        }
    }
    if (!std_in)
        close(fd);
    if (fail) {
        if (fail != why)
            snprintf(why, why_size, "%s", fail);
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

const char *ex_plural(unsigned long long n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* Length of the well-formed UTF-8 sequence at p (at most `left` bytes),
 * with its code point; 0 when the bytes there are not UTF-8. */
static size_t utf8_char(const unsigned char *p, size_t left, unsigned *cp)
{
    size_t n = p[0] < 0x80 ? 1 : p[0] < 0xE0 ? 2 : p[0] < 0xF0 ? 3 : 4;
    if (n > left || !ex_utf8_valid((const char *)p, n))
        return 0;
    unsigned v = n == 1 ? p[0] : p[0] & (0xFF >> (n + 1));
    for (size_t k = 1; k < n; k++)
        v = (v << 6) | (p[k] & 0x3F);
    *cp = v;
    return n;
}

const char *ex_text(const char *s)
{
    static char *bufs[16];
    static size_t caps[16];
    static unsigned next;
    if (!s)
        return "(null)";
    unsigned k = next++ % 16;
    size_t len = strlen(s), need = len * 6 + 1; /* the longest: \uNNNN for 2 bytes */
    if (caps[k] < need) {
        char *nb = realloc(bufs[k], need);
        if (!nb)
            return "?";
        bufs[k] = nb;
        caps[k] = need;
    }
    const unsigned char *p = (const unsigned char *)s, *end = p + len;
    char *q = bufs[k];
    while (p < end) {
        unsigned cp;
        size_t n = utf8_char(p, (size_t)(end - p), &cp);
        if (n == 0 || cp < 0x20 || cp == 0x7F) {
            q += sprintf(q, "\\x%02x", *p); /* a control, or a byte that is not UTF-8 */
            p++;
        } else if (cp >= 0x80 && cp <= 0x9F) {
            q += sprintf(q, "\\u%04x", cp);
            p += n;
        } else {
            memcpy(q, p, n);
            q += n;
            p += n;
        }
    }
    *q = '\0';
    return bufs[k];
}

/* Why a write to stdout first failed, when ex_flush saw it (a failed
 * fflush drops what it could not write: a later one may succeed). */
static int stdout_errno;

bool ex_flush(FILE *f)
{
    errno = 0;
    if (fflush(f) == 0 && !ferror(f))
        return true;
    if (f == stdout && !stdout_errno)
        stdout_errno = errno;
    return false;
}

/* The failure was said by the command (ex_flush_stdout). */
static bool stdout_said;

bool ex_flush_stdout(char *why, size_t why_size)
{
    if (ex_flush(stdout))
        return true;
    snprintf(why, why_size, "%s", stdout_errno ? strerror(stdout_errno) : "write failed");
    stdout_said = true;
    return false;
}

int ex_finish_stdout(const char *prog, int rc)
{
    bool failed = ferror(stdout) != 0;
    errno = 0;
    if (fflush(stdout) != 0)
        failed = true;
    int e = errno;
    errno = 0;
    if (fclose(stdout) != 0 && !failed) {
        failed = true;
        e = errno;
    }
    if (!failed)
        return rc;
    if (stdout_said)
        return rc ? rc : 1;
    if (stdout_errno)
        e = stdout_errno;
    if (e)
        fprintf(stderr, "%s: writing standard output: %s\n", prog, strerror(e));
    else
        fprintf(stderr, "%s: writing standard output failed\n", prog);
    return rc ? rc : 1;
}

/* Writes all of data to fd; false with errno set. */
static bool write_all(int fd, const char *data, size_t len)
{
    while (len) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return false;
        data += n;
        len -= (size_t)n;
    }
    return true;
}

/* The temporary file being written, for ex_file_signal_cleanup. */
static char *volatile tmp_registered;

void ex_file_signal_cleanup(void)
{
    char *tmp = tmp_registered;
    if (tmp)
        unlink(tmp); /* async-signal-safe */
}

/* The cancel object of the connection of ex_cancel_connection. */
static PGcancel *volatile g_cancel;

static void on_fatal_signal(int sig)
{
    int saved = errno;
    PGcancel *cancel = g_cancel;
    if (cancel) {
        char buf[256];
        (void)PQcancel(cancel, buf, sizeof buf);
    }
    ex_file_signal_cleanup();
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    errno = saved;
    raise(sig); /* delivered when this handler returns */
}

void ex_signals_cancel(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGHUP);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

bool ex_cancel_connection(PGconn *conn)
{
    /* The handler sees the old object or the new one, never a freed one:
     * it is unhooked before it is freed. */
    PGcancel *old = g_cancel;
    g_cancel = NULL;
    PQfreeCancel(old);
    if (!conn)
        return true;
    g_cancel = PQgetCancel(conn);
    return g_cancel != NULL;
}

static bool file_fail(ex_file *f, int e, char *why, size_t why_size)
{
    snprintf(why, why_size, "%s", strerror(e));
    ex_file_abort(f);
    return false;
}

bool ex_file_prepare(ex_file *f, const char *path, const char *data, size_t len, char *why,
                     size_t why_size)
{
    memset(f, 0, sizeof *f);
    f->data = data;
    f->len = len;
    struct stat lst, st;
    bool exists = lstat(path, &lst) == 0;
    if (!exists && errno != ENOENT)
        return file_fail(f, errno, why, why_size);
    bool regular = exists && stat(path, &st) == 0 && S_ISREG(st.st_mode);
    if (exists && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return file_fail(f, EISDIR, why, why_size);
    if (exists && !regular) { /* a device, a FIFO, a dangling link */
        if (!(f->target = strdup(path)))
            return file_fail(f, ENOMEM, why, why_size);
        return true;
    }
    /* The file a link names is the one replaced; the link stays. */
    errno = 0;
    f->target = regular && S_ISLNK(lst.st_mode) ? realpath(path, NULL) : strdup(path);
    if (!f->target)
        return file_fail(f, errno ? errno : ENOMEM, why, why_size);
    const char *slash = strrchr(f->target, '/');
    size_t dir_len = slash ? (size_t)(slash - f->target) + 1 : 0;
    size_t size = strlen(f->target) + 16;
    if (!(f->tmp = malloc(size)))
        return file_fail(f, ENOMEM, why, why_size);
    snprintf(f->tmp, size, "%.*s.%s.XXXXXX", (int)dir_len, f->target, f->target + dir_len);
    int fd = mkstemp(f->tmp);
    if (fd < 0) {
        int e = errno;
        free(f->tmp);
        f->tmp = NULL; /* nothing to remove */
        if (e == ENOENT || e == ENOTDIR) /* no such directory: said as such */
            return file_fail(f, e, why, why_size);
        /* The target may well be writable: what failed is the temporary
         * file beside it, in its directory. */
        snprintf(why, why_size, "cannot create the temporary file beside it in directory %.*s: "
                                "%s",
                 dir_len > 1 ? (int)dir_len - 1 : 1, dir_len ? f->target : ".", strerror(e));
        ex_file_abort(f);
        return false;
    }
    tmp_registered = f->tmp;
    mode_t mode;
    if (regular) {
        mode = st.st_mode & 07777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    if (fchmod(fd, mode) != 0 || !write_all(fd, data, len) || fsync(fd) != 0) {
        int e = errno;
        close(fd);
        return file_fail(f, e, why, why_size);
    }
    if (close(fd) != 0)
        return file_fail(f, errno, why, why_size);
    return true;
}

bool ex_file_commit(ex_file *f, char *why, size_t why_size)
{
    if (f->tmp) {
        if (rename(f->tmp, f->target) != 0)
            return file_fail(f, errno, why, why_size);
        if (tmp_registered == f->tmp)
            tmp_registered = NULL;
        free(f->tmp);
        f->tmp = NULL;
        ex_file_abort(f);
        return true;
    }
    int fd = open(f->target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return file_fail(f, errno, why, why_size);
    if (!write_all(fd, f->data, f->len)) {
        int e = errno;
        close(fd);
        return file_fail(f, e, why, why_size);
    }
    if (close(fd) != 0)
        return file_fail(f, errno, why, why_size);
    ex_file_abort(f);
    return true;
}

void ex_file_abort(ex_file *f)
{
    if (f->tmp && tmp_registered == f->tmp)
        tmp_registered = NULL;
    if (f->tmp)
        unlink(f->tmp);
    free(f->tmp);
    free(f->target);
    f->tmp = NULL;
    f->target = NULL;
}

void ex_ignore_sigpipe(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPIPE, &sa, NULL);
}
