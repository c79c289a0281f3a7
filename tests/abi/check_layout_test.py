#!/usr/bin/env python3
"""Self-test of check_layout.py: each rule fires on a small tree (or library)
that breaks it once, with exactly the expected message, and stays quiet on a
clean one (own-half and shared includes, banned text in comments and string
literals, named status comparisons).

usage: check_layout_test.py CHECK_LAYOUT --nm NM --cc "CC..."
Prints TAP.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

import tap

# A clean tree: both halves, the shared root, the adapter, a public header.
CLEAN = {
    "include/pgwitness/inval.h": "int pgw_x(void);\n",
    "lib/core/internal.h": "#include \"pgwitness/inval.h\"\n",
    "lib/core/snapshot/snapshot_internal.h": "#include \"internal.h\"\n",
    "lib/core/snapshot/snapshot.c": (
        "#include \"snapshot_internal.h\"\n"
        "#include \"pgwitness/inval.h\"\n"
        "/* not an include: #include \"inval_internal.h\" */\n"
        "// nor: #include <libpq-fe.h>\n"
        "int f(void);\n"
        "int g(int rcount)\n"
        "{\n"
        "    int rc;\n"
        "    const char *s = \"if (rc) and rc != PGW_OK\"; (void)s;\n"
        "    if ((rc = f()) < 0 && rc != PGW_ENOTFOUND) /* rc == PGW_OK */\n"
        "        return rc;\n"
        "    if (rc == PGW_ENOTFOUND || rcount)\n"
        "        return PGW_OK;\n"
        "    return rc;\n"
        "}\n"),
    "lib/core/inval/inval_internal.h": "#include \"internal.h\"\n",
    "lib/core/inval/inval.c": "#include \"inval_internal.h\"\n#include <string.h>\n",
    "lib/pq/pq_internal.h": "#include <libpq-fe.h>\n#include \"internal.h\"\n",
    "lib/pq/pq.c": "#include \"pq_internal.h\"\n",
    "lib/pq/inval/stream.h": "#include \"pq_internal.h\"\n",
    "lib/pq/inval/stream.c": "#include \"stream.h\"\n#include \"pgwitness/inval.h\"\n",
}

# name: (file to add or replace, its text, the exact diagnostics)
CASES = {
    "a snapshot file includes an inval header (found beside nothing: by its name)": (
        "lib/core/snapshot/diff.c", "#include <stddef.h>\n#include \"inval_internal.h\"\n",
        ["lib/core/snapshot/diff.c:2: includes lib/core/inval/inval_internal.h, "
         "a header of lib/core/inval/: #include \"inval_internal.h\""]),
    "an inval file includes a snapshot header (through a relative path)": (
        "lib/core/inval/decide.c", "\n  #  include \"../snapshot/snapshot_internal.h\" /* x */\n",
        ["lib/core/inval/decide.c:2: includes lib/core/snapshot/snapshot_internal.h, "
         "a header of lib/core/snapshot/: #  include \"../snapshot/snapshot_internal.h\" /* x */"]),
    "a snapshot header includes an inval header (through lib/core/)": (
        "lib/core/snapshot/diff_internal.h", "#include \"inval/inval_internal.h\"\n",
        ["lib/core/snapshot/diff_internal.h:1: includes lib/core/inval/inval_internal.h, "
         "a header of lib/core/inval/: #include \"inval/inval_internal.h\""]),
    "a file at lib/core/'s root includes a half's header": (
        "lib/core/json.c", "#include \"snapshot/snapshot_internal.h\"\n",
        ["lib/core/json.c:1: includes lib/core/snapshot/snapshot_internal.h, "
         "a header of lib/core/snapshot/: #include \"snapshot/snapshot_internal.h\""]),
    "the adapter includes a core half's header": (
        "lib/pq/inval/listener.c", "#include \"pq_internal.h\"\n#include \"inval_internal.h\"\n",
        ["lib/pq/inval/listener.c:2: includes lib/core/inval/inval_internal.h, "
         "a header of lib/core/inval/: #include \"inval_internal.h\""]),
    "an adapter half includes the other's header": (
        "lib/pq/snapshot/store.c", "#include \"../inval/stream.h\"\n",
        ["lib/pq/snapshot/store.c:1: includes lib/pq/inval/stream.h, "
         "a header of lib/pq/inval/: #include \"../inval/stream.h\""]),
    "a core file includes libpq-fe.h": (
        "lib/core/json.c", "#include \"internal.h\"\n#include <libpq-fe.h>\n",
        ["lib/core/json.c:2: the core includes libpq (libpq-fe.h): #include <libpq-fe.h>"]),
    "a core half includes libpq/...": (
        "lib/core/inval/payload.c", "#include <libpq/libpq-fs.h>\n",
        ["lib/core/inval/payload.c:1: the core includes libpq (libpq/libpq-fs.h): "
         "#include <libpq/libpq-fs.h>"]),
    "a core file includes pgwitness-pq.h": (
        "lib/core/util.c", "#include \"pgwitness/pgwitness-pq.h\"\n",
        ["lib/core/util.c:1: the core includes libpq (pgwitness/pgwitness-pq.h): "
         "#include \"pgwitness/pgwitness-pq.h\""]),
    "a core file includes a header under lib/pq/": (
        "lib/core/snapshot/names.c", "#include \"pq_internal.h\"\n",
        ["lib/core/snapshot/names.c:1: the core includes libpq (lib/pq/pq_internal.h): "
         "#include \"pq_internal.h\""]),
    "a status compared with != PGW_OK": (
        "lib/core/arena.c", "int f(void) { int rc = g();\n  if (rc != PGW_OK)\n return rc; }\n",
        ["lib/core/arena.c:2: banned status idiom '!= PGW_OK' "
         "(use if ((rc = f()) < 0) goto done;): if (rc != PGW_OK)"]),
    "a status compared with == PGW_OK (in the adapter)": (
        "lib/pq/install.c", "\n\nif (rc==PGW_OK) rc = g();\n",
        ["lib/pq/install.c:3: banned status idiom '== PGW_OK' "
         "(use if ((rc = f()) < 0) goto done;): if (rc==PGW_OK) rc = g();"]),
    "a status tested with if (rc)": (
        "lib/core/inval/index.c", "x;\nif ( rc )\n  goto done;\n",
        ["lib/core/inval/index.c:2: banned status idiom 'if (rc)' "
         "(use if ((rc = f()) < 0) goto done;): if ( rc )"]),
    "a status tested with if (!rc)": (
        "lib/core/snapshot/types.c", "    if (!rc) /* ok */\n",
        ["lib/core/snapshot/types.c:1: banned status idiom 'if (!rc)' "
         "(use if ((rc = f()) < 0) goto done;): if (!rc) /* ok */"]),
}


def write_tree(root, files):
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)


def run(checker, args, env=None):
    r = subprocess.run([sys.executable, checker] + args, capture_output=True,
                       text=True, env=env)
    diags = [line[4:] for line in r.stdout.splitlines() if line.startswith("#   ")]
    return r.returncode, r.stdout + r.stderr, diags


def tree_case(checker, files, want):
    with tempfile.TemporaryDirectory() as d:
        write_tree(d, files)
        rc, out, diags = run(checker, ["--rules", "halves,libpq,idiom", d])
    ok = diags == want and rc == (1 if want else 0)
    return ok, out + "".join(f"expected: {w}\n" for w in want)


def library_case(checker, nm, cc, body, want):
    """Builds a shared library from body (its object kept where meson keeps
    one, LIB.p/) and checks it with the io rule; want holds regular
    expressions (the nm line carries the platform's symbol version)."""
    with tempfile.TemporaryDirectory() as d:
        lib = os.path.join(d, "libfake.so")
        os.makedirs(lib + ".p")
        src = os.path.join(d, "fake.c")
        obj = os.path.join(lib + ".p", "fake.c.o")
        with open(src, "w") as f:
            f.write(body)
        for args in (["-c", "-fPIC", "-O0", src, "-o", obj], ["-shared", obj, "-o", lib]):
            r = subprocess.run(cc + args, capture_output=True, text=True)
            if r.returncode:
                return False, " ".join(cc + args) + "\n" + r.stderr
        rc, out, diags = run(checker, ["--rules", "io", "--nm", nm, "--core-lib", lib, d])
        want = [w.replace("LIB", re.escape(lib)) for w in want]
        ok = (len(diags) == len(want) and all(re.fullmatch(w, g) for w, g in zip(want, diags))
              and rc == (1 if want else 0))
    return ok, out + "".join(f"expected: {w}\n" for w in want)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("checker")
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--cc", default="cc")
    a = ap.parse_args()
    cc = shlex.split(a.cc)
    tests = [("a clean tree passes every rule", lambda: tree_case(a.checker, CLEAN, []))]
    for name, (path, text, want) in CASES.items():
        tests.append((name, lambda p=path, t=text, w=want:
                      tree_case(a.checker, {**CLEAN, p: t}, w)))
    tests.append(("a library without I/O imports passes", lambda: library_case(
        a.checker, a.nm, cc,
        "#include <string.h>\nvoid f(char *d, const char *s, size_t n) { memcpy(d, s, n); }\n",
        [])))
    tests.append(("a library importing fopen and __assert_fail fails, naming the object",
                  lambda: library_case(
        a.checker, a.nm, cc,
        "#include <assert.h>\n#include <stdio.h>\n"
        "void *f(const char *p) { assert(p); return fopen(p, \"r\"); }\n",
        [r"LIB: imports __assert_fail \(U __assert_fail(@\S+)?\), imported by fake\.c\.o: "
         r"the core does no I/O",
         r"LIB: imports fopen \(U fopen(@\S+)?\), imported by fake\.c\.o: "
         r"the core does no I/O"])))

    def skipped():
        with tempfile.TemporaryDirectory() as d:
            write_tree(d, {**CLEAN, "lib/core/arena.c": "if (rc) x;\n"})
            env = {k: v for k, v in os.environ.items() if k != "PGW_TEST_SWITCH"}
            args = ["--rules", "idiom", "--skip-unless-env", "PGW_TEST_SWITCH", d]
            rc0, out0, _ = run(a.checker, args, env)
            rc1, out1, diags = run(a.checker, args, {**env, "PGW_TEST_SWITCH": "1"})
        ok = (rc0 == 0 and out0.startswith("1..0 # SKIP") and rc1 == 1 and len(diags) == 1)
        return ok, out0 + out1
    tests.append(("--skip-unless-env skips unless its variable is 1, then checks", skipped))

    return tap.run(tests)


if __name__ == "__main__":
    sys.exit(main())
