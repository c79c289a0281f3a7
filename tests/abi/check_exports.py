#!/usr/bin/env python3
"""Export discipline test (DESIGN.md convention 8).

The dynamic symbols each library exports must be exactly the pgw_* functions
its public headers declare with PGW_API: nothing missing, nothing extra (no
internal pgwi_* helper, no xxHash XXH*, no jansson json_*).

usage: check_exports.py NM INCLUDE_DIR CORE_LIB [PQ_LIB]
The headers are found by listing INCLUDE_DIR (so a new header is covered
without editing the test): pgwitness-pq.h declares the adapter's exports,
every other header the core's. Prints TAP.
"""
import os
import re
import subprocess
import sys


def declared(headers):
    names = set()
    for h in headers:
        text = open(h, encoding="utf-8").read()
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        text = re.sub(r"//[^\n]*", " ", text)
        text = re.sub(r"^\s*#.*$", " ", text, flags=re.M)  # macro definitions
        # A PGW_API declaration runs to the first '(' : the name precedes it.
        for m in re.finditer(r"\bPGW_API\b([^;(]*)\(", text):
            ident = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", m.group(1))
            if ident:
                names.add(ident[-1])
    return names


def exported(nm, lib):
    out = subprocess.run([nm, "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        kind, name = parts[1], parts[2].split("@")[0]
        if kind == "A":  # version node (PGWITNESS_0)
            continue
        names.add(name)
    return names


def main():
    nm, inc = sys.argv[1], sys.argv[2]
    headers = sorted(os.path.join(inc, h) for h in os.listdir(inc) if h.endswith(".h"))
    pq = [h for h in headers if os.path.basename(h) == "pgwitness-pq.h"]
    core = [h for h in headers if h not in pq]
    checks = [(sys.argv[3], core)]
    if len(sys.argv) > 4:
        checks.append((sys.argv[4], pq))
    print(f"1..{2 * len(checks)}")
    n = 0
    ok = True
    for lib, hdrs in checks:
        want = declared(hdrs)
        have = exported(nm, lib)
        n += 1
        missing = sorted(want - have)
        extra = sorted(have - want)
        if missing or extra:
            ok = False
            print(f"not ok {n} - {lib}: exports equal declared PGW_API functions")
            for s in missing:
                print(f"#   declared but not exported: {s}")
            for s in extra:
                print(f"#   exported but not declared: {s}")
        else:
            print(f"ok {n} - {lib}: {len(have)} exports equal declared PGW_API functions")
        n += 1
        bad = sorted(s for s in have if not s.startswith("pgw_") or s.startswith("pgwi_"))
        if bad:
            ok = False
            print(f"not ok {n} - {lib}: only pgw_* symbols exported")
            for s in bad:
                print(f"#   foreign symbol exported: {s}")
        else:
            print(f"ok {n} - {lib}: only pgw_* symbols exported")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
