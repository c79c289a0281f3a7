#!/usr/bin/env python3
"""Export discipline test (DESIGN.md convention 8).

The dynamic symbols each library exports must be exactly the pgw_* functions
its public headers declare with PGW_API: nothing missing, nothing extra (no
internal pgwi_* helper, no xxHash XXH*, no jansson json_*), and none of the
other library's names. Each library's linker version script must list
exactly those names, explicitly (no wildcard), so the maps cannot drift from
the headers.

usage: check_exports.py NM INCLUDE_DIR CORE_MAP CORE_LIB PQ_MAP [PQ_LIB]
The headers are found by listing INCLUDE_DIR (so a new header is covered
without editing the test): pgwitness-pq.h declares the adapter's exports,
every other header the core's. Without PQ_LIB (the adapter is not built)
only the adapter's map is checked. Prints TAP.
"""
import os
import re
import subprocess
import sys

import tap


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


def map_names(path):
    """The names a version script exports: the entries of its global:
    sections, in every version node."""
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"#[^\n]*", " ", text)
    names = []
    for node in re.finditer(r"[A-Za-z_][\w.]*\s*\{(.*?)\}", text, flags=re.S):
        scope = "global"
        for tok in re.split(r"(\bglobal\s*:|\blocal\s*:|;)", node.group(1)):
            tok = tok.strip()
            if re.fullmatch(r"global\s*:", tok):
                scope = "global"
            elif re.fullmatch(r"local\s*:", tok):
                scope = "local"
            elif tok and tok != ";" and scope == "global":
                names.append(tok)
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


def problems(*groups):
    """(ok, detail) from (label, names) groups: ok when every group is empty."""
    lines = [f"{label}: {name}" for label, names in groups for name in names]
    return not lines, "\n".join(lines)


def main():
    nm, inc = sys.argv[1], sys.argv[2]
    headers = sorted(os.path.join(inc, h) for h in os.listdir(inc) if h.endswith(".h"))
    pq = [h for h in headers if os.path.basename(h) == "pgwitness-pq.h"]
    core = [h for h in headers if h not in pq]
    core_names, pq_names = declared(core), declared(pq)
    # (map, library or None, its headers' names, the other library's names)
    checks = [(sys.argv[3], sys.argv[4], core_names, pq_names),
              (sys.argv[5], sys.argv[6] if len(sys.argv) > 6 else None, pq_names, core_names)]
    tests = []
    for mapfile, lib, want, other in checks:
        listed = map_names(mapfile)
        wild = [s for s in listed if re.search(r"[*?\[]", s)]
        tests.append((f"{mapfile}: lists exactly its headers' {len(want)} PGW_API functions",
                      lambda listed=listed, wild=wild, want=want: problems(
                          ("listed twice", sorted({s for s in listed if listed.count(s) > 1})),
                          ("wildcard (list names explicitly)", wild),
                          ("declared but not listed", sorted(want - set(listed))),
                          ("listed but not declared", sorted(set(listed) - want - set(wild))))))
        if not lib:
            continue
        have = exported(nm, lib)
        tests += [
            (f"{lib}: {len(have)} exports equal declared PGW_API functions",
             lambda have=have, want=want: problems(
                 ("declared but not exported", sorted(want - have)),
                 ("exported but not declared", sorted(have - want)))),
            (f"{lib}: only pgw_* symbols exported",
             lambda have=have: problems(
                 ("foreign symbol exported", sorted(s for s in have if not s.startswith("pgw_")
                                                    or s.startswith("pgwi_"))))),
            (f"{lib}: exports none of the other library's functions",
             lambda have=have, other=other: problems(
                 ("the other library's function exported", sorted(have & other)))),
        ]
    return tap.run(tests)


if __name__ == "__main__":
    sys.exit(main())
