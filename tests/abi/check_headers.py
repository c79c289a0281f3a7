#!/usr/bin/env python3
"""Public header checks (DESIGN.md conventions 10 and 11).

For every header in include/pgwitness/ (found by listing the directory, so a
new header is covered without editing this test):
  - it compiles alone as C11 with -pedantic -Werror;
  - it compiles alone as C++ (when a C++ compiler is given);
  - every PGW_API declaration is preceded by a Doxygen comment (/** ... */);
  - only pgwitness-pq.h includes libpq-fe.h.

usage: check_headers.py --cc "CC..." [--cxx "CXX..."] -I DIR ... HEADER_DIR
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


def compile_alone(cmd, flags, incs, header, suffix):
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "t" + suffix)
        with open(src, "w") as f:
            f.write(f"#include <pgwitness/{header}>\n#include <pgwitness/{header}>\n"
                    "int pgwt_header_test_anchor;\n")
        args = cmd + flags + [f"-I{i}" for i in incs] + ["-fsyntax-only", src]
        r = subprocess.run(args, capture_output=True, text=True)
        return r.returncode == 0, " ".join(args) + "\n" + r.stderr


def undocumented(path):
    text = open(path, encoding="utf-8").read()
    bad = []
    for m in re.finditer(r"\bPGW_API\b", text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if text[line_start:m.start()].strip():  # PGW_API inside a macro definition
            continue
        if text[line_start:].startswith("#"):
            continue
        before = text[:line_start].rstrip()
        if not before.endswith("*/"):
            bad.append(text[line_start:text.find("\n", m.start())])
            continue
        start = before.rfind("/*")
        if not before[start:].startswith("/**"):
            bad.append(text[line_start:text.find("\n", m.start())])
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cc", required=True)
    ap.add_argument("--cxx", default="")
    ap.add_argument("-I", dest="incs", action="append", default=[])
    ap.add_argument("dir")
    a = ap.parse_args()
    headers = sorted(h for h in os.listdir(a.dir) if h.endswith(".h"))
    cc = shlex.split(a.cc)
    cxx = shlex.split(a.cxx) if a.cxx else []
    cflags = ["-std=c11", "-pedantic", "-Werror", "-Wall", "-Wextra", "-Wstrict-prototypes"]
    cxxflags = ["-x", "c++", "-std=c++11", "-pedantic", "-Werror", "-Wall", "-Wextra"]
    tests = []
    for h in headers:
        tests.append((f"{h} compiles alone as C11 -pedantic -Werror",
                      lambda h=h: compile_alone(cc, cflags, a.incs, h, ".c")))
        if cxx:
            tests.append((f"{h} compiles alone as C++11 -pedantic -Werror",
                          lambda h=h: compile_alone(cxx, cxxflags, a.incs, h, ".cpp")))
        tests.append((f"{h}: every PGW_API declaration has a doc comment",
                      lambda h=h: (lambda b: (not b, "\n".join(b)))(
                          undocumented(os.path.join(a.dir, h)))))
        tests.append((f"{h}: includes libpq-fe.h only if it is pgwitness-pq.h",
                      lambda h=h: (h == "pgwitness-pq.h" or "libpq-fe.h" not in
                                   open(os.path.join(a.dir, h)).read(), h)))
    status = tap.run(tests)
    if not cxx:
        print("# no C++ compiler configured: C++ checks not run")
    return status


if __name__ == "__main__":
    sys.exit(main())
