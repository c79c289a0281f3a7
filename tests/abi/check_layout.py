#!/usr/bin/env python3
"""Layout check (DESIGN.md "Layout": the include rule; convention 6: the core
does no I/O; convention 3: one status idiom).

Rules, each one TAP test point (--rules chooses them, comma-separated):
  halves  no file under lib/core/snapshot/ includes a header that lives under
          lib/core/inval/, nor the reverse; the files at lib/core/'s root
          include neither half's; the same three rules hold for lib/pq/ and
          its halves, and nothing under lib/pq/ includes a header of a
          core half (APART; the header sets are read from the tree);
  libpq   no file under lib/core/ includes libpq: libpq-fe.h (any libpq-*.h),
          libpq/... (also as postgresql/libpq/...), pgwitness-pq.h, or a
          header that lives under lib/pq/;
  io      the core library (--core-lib, read with --nm) imports no I/O,
          process-ending or assertion function (IO_FUNCTIONS);
  idiom   no .c/.h file under lib/ checks a status with a banned idiom
          (BANNED_IDIOMS): inside lib/ a status is checked one way,
          `if ((rc = f()) < 0) goto done;`.
Comments (and, for the idiom rule, string literals) are ignored. Each
violation is printed as a TAP diagnostic naming the file and the offending
line ("lib/core/x.c:12: ...: <the line>").

usage: check_layout.py [--rules halves,libpq,io,idiom] [--nm NM --core-lib LIB]
                       [--skip-unless-env VAR] SOURCE_ROOT
--skip-unless-env VAR: report the whole test as skipped unless the
environment variable VAR is set to 1 (a rule not yet enforced on the tree).
"""
import argparse
import fnmatch
import glob
import os
import re
import subprocess
import sys

import tap

# Undefined dynamic symbols the core must not have: files, sockets, stdio,
# process exit, assertions (an assert on caller input), libpq. fnmatch
# patterns; the _chk and _2 names are what _FORTIFY_SOURCE turns calls into.
IO_FUNCTIONS = [
    "open", "open64", "openat", "openat64", "creat", "creat64", "close",
    "read", "write", "pread", "pread64", "pwrite", "pwrite64", "readv", "writev",
    "__open_2", "__open64_2", "__openat_2", "__openat64_2", "__read_chk",
    "__pread_chk", "__pread64_chk",
    "fopen", "fopen64", "fdopen", "freopen", "freopen64", "fclose", "fflush",
    "fread", "fwrite", "fgets", "fgetc", "getc", "getchar", "fputs", "fputc",
    "putc", "putchar", "puts", "perror", "fread_unlocked", "fwrite_unlocked",
    "fputs_unlocked", "__fread_chk", "__fgets_chk",
    "printf", "fprintf", "vprintf", "vfprintf", "dprintf", "vdprintf",
    "__printf_chk", "__fprintf_chk", "__vprintf_chk", "__vfprintf_chk",
    "__dprintf_chk", "__vdprintf_chk", "stdin", "stdout", "stderr",
    "syslog", "vsyslog", "__syslog_chk", "__vsyslog_chk",
    "socket", "connect", "bind", "listen", "accept", "accept4", "send",
    "sendto", "sendmsg", "recv", "recvfrom", "recvmsg", "__recv_chk",
    "__recvfrom_chk", "poll", "ppoll", "select", "pselect", "epoll_*",
    "exit", "_exit", "_Exit", "quick_exit", "abort", "system", "popen",
    "__assert_fail", "__assert_perror_fail", "__assert",
    "PQ*",
]

# (name, pattern) on a line whose comments and string literals are blanked.
BANNED_IDIOMS = [
    ("!= PGW_OK", re.compile(r"!=\s*PGW_OK\b")),
    ("== PGW_OK", re.compile(r"==\s*PGW_OK\b")),
    ("PGW_OK !=", re.compile(r"\bPGW_OK\s*!=")),
    ("PGW_OK ==", re.compile(r"\bPGW_OK\s*==")),
    ("if (rc)", re.compile(r"\bif\s*\(\s*rc\s*\)")),
    ("if (!rc)", re.compile(r"\bif\s*\(\s*!\s*rc\s*\)")),
]
IDIOM = "if ((rc = f()) < 0) goto done;"

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"]+)[>"]', re.M)


def blank(text, strings):
    """text with comments (and string/char literals' contents, if strings)
    replaced by spaces; newlines are kept, so line numbers do not move."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            lit = text[i:j]
            out.append(c + " " * (len(lit) - 2) + lit[-1] if strings and len(lit) >= 2 else lit)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def sources(root, sub):
    base = os.path.join(root, sub)
    return sorted(p for p in glob.glob(os.path.join(base, "**", "*"), recursive=True)
                  if p.endswith((".c", ".h")) and os.path.isfile(p))


def rel(root, path):
    return os.path.relpath(path, root)


def includes(root, path):
    """(line number, include as written, the line, resolved paths) for each
    #include of path. An include resolves as the compiler would find it: a
    quoted one first beside the includer, then in include/ and lib/core/ (the
    core's include directories); one found nowhere there resolves to every
    header under lib/ whose path ends with it (another -I would find it)."""
    text = open(path, encoding="utf-8", errors="replace").read()
    code = blank(text, strings=False)
    raw = text.splitlines()
    lib_headers = glob.glob(os.path.join(root, "lib", "**", "*.h"), recursive=True)
    out = []
    for m in INCLUDE.finditer(code):
        kind, name = m.group(1), m.group(2).strip()
        line = code.count("\n", 0, m.start()) + 1
        dirs = ([os.path.dirname(path)] if kind == '"' else []) + \
            [os.path.join(root, "include"), os.path.join(root, "lib", "core")]
        found = [os.path.normpath(os.path.join(d, name)) for d in dirs
                 if os.path.isfile(os.path.join(d, name))][:1]
        if not found:
            parts = [p for p in os.path.normpath(name).split(os.sep) if p != ".."]
            tail = os.sep + os.path.join(*parts)
            found = sorted(os.path.normpath(h) for h in lib_headers if h.endswith(tail))
        out.append((line, name, raw[line - 1].strip(), found))
    return out


def under(path, root, sub):
    return os.path.normpath(path).startswith(os.path.join(root, sub) + os.sep)


# (the files of this folder, the headers they may not include): each half
# keeps apart from the other, the shared root of each library from both
# halves, and the adapter from the core's halves (it uses the core through
# its public headers and lib/core/'s shared internal ones).
APART = [
    ("lib/core/snapshot", ["lib/core/inval"]),
    ("lib/core/inval", ["lib/core/snapshot"]),
    ("lib/core/", ["lib/core/snapshot", "lib/core/inval"]),
    ("lib/pq/snapshot", ["lib/pq/inval", "lib/core/snapshot", "lib/core/inval"]),
    ("lib/pq/inval", ["lib/pq/snapshot", "lib/core/snapshot", "lib/core/inval"]),
    ("lib/pq/", ["lib/pq/snapshot", "lib/pq/inval", "lib/core/snapshot", "lib/core/inval"]),
]


def check_halves(root):
    """A folder written with a trailing slash means its own files only, not
    those of its subfolders."""
    bad = []
    for mine, others in APART:
        if mine.endswith("/"):
            base = os.path.join(root, mine)
            files = [f for f in sources(root, mine) if os.path.dirname(f) == base.rstrip(os.sep)]
        else:
            files = sources(root, mine)
        for other in others:
            theirs = {os.path.normpath(h) for h in sources(root, other) if h.endswith(".h")}
            for f in files:
                for line, _, text, found in includes(root, f):
                    for h in found:
                        if h in theirs:
                            bad.append(f"{rel(root, f)}:{line}: includes {rel(root, h)}, "
                                       f"a header of {other}/: {text}")
    return bad


def check_libpq(root):
    bad = []
    for f in sources(root, "lib/core"):
        for line, name, text, found in includes(root, f):
            dirs, base = name.split("/")[:-1], os.path.basename(name)
            pq = [rel(root, h) for h in found if under(h, root, "lib/pq")]
            what = (name if base.startswith("libpq-") or "libpq" in dirs
                    or base == "pgwitness-pq.h" else pq[0] if pq else None)
            if what:
                bad.append(f"{rel(root, f)}:{line}: the core includes libpq ({what}): {text}")
    return bad


def importers(nm, lib, name):
    """The core's object files (meson's LIB.p/ beside the library) that
    import name, to say where an import comes from."""
    objs = []
    for d in sorted({lib + ".p", os.path.realpath(lib) + ".p"}):
        for o in sorted(glob.glob(os.path.join(d, "*.o"))):
            r = subprocess.run([nm, "--undefined-only", o], capture_output=True, text=True)
            if any(line.split()[-1] == name for line in r.stdout.splitlines() if line.split()):
                objs.append(os.path.basename(o))
    return objs


def check_io(nm, lib):
    out = subprocess.run([nm, "-D", "--undefined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    bad = []
    for line in out.splitlines():
        parts = line.split()
        if not parts:
            continue
        name = parts[-1].split("@")[0]
        if any(fnmatch.fnmatchcase(name, p) for p in IO_FUNCTIONS):
            objs = importers(nm, lib, name)
            where = f", imported by {' '.join(objs)}" if objs else ""
            bad.append(f"{lib}: imports {name} ({line.strip()}){where}: the core does no I/O")
    return bad


def check_idiom(root):
    bad = []
    for f in sources(root, "lib"):
        text = open(f, encoding="utf-8", errors="replace").read()
        code = blank(text, strings=True).splitlines()
        raw = text.splitlines()
        for i, line in enumerate(code, 1):
            for name, pat in BANNED_IDIOMS:
                if pat.search(line):
                    bad.append(f"{rel(root, f)}:{i}: banned status idiom '{name}' "
                               f"(use {IDIOM}): {raw[i - 1].strip()}")
    return bad


def violations(bad):
    """A rule's result as a TAP point's (ok, detail)."""
    return not bad, "\n".join(bad)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rules", default="halves,libpq,io")
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--core-lib")
    ap.add_argument("--skip-unless-env")
    ap.add_argument("root")
    a = ap.parse_args()
    root = os.path.normpath(os.path.abspath(a.root))
    if a.skip_unless_env and os.environ.get(a.skip_unless_env) != "1":
        print(f"1..0 # SKIP {a.rules}: run with {a.skip_unless_env}=1")
        return 0
    rules = {
        "halves": ("each half, and each library's shared root, includes no header of a half it is not",
                   lambda: check_halves(root)),
        "libpq": ("lib/core/ includes no libpq header", lambda: check_libpq(root)),
        "io": (f"{a.core_lib} imports no I/O function", lambda: check_io(a.nm, a.core_lib)),
        "idiom": ("lib/ checks statuses one way: " + IDIOM, lambda: check_idiom(root)),
    }
    chosen = a.rules.split(",")
    unknown = [r for r in chosen if r not in rules]
    if unknown or ("io" in chosen and not a.core_lib):
        ap.error(f"unknown rule {unknown[0]}" if unknown else "rule io needs --core-lib")
    return tap.run([(title, lambda fn=fn: violations(fn()))
                    for title, fn in (rules[r] for r in chosen)])


if __name__ == "__main__":
    sys.exit(main())
