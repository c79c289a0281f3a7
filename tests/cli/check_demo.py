#!/usr/bin/env python3
"""Runs examples/demo.sh — what examples/quickstart shows — against the
server tests/run starts, and checks its key lines: both format changes of
palmerpenguins with the renames found from values, the change classes, and
(when the invalidation demo is present) the refresh/skip verdicts. Prints TAP.

usage: check_demo.py DEMO_SH BIN_DIR
"""
import os
import subprocess
import sys

DEMO, BIN = sys.argv[1:3]

EXPECTED = [
    "header changed (17 -> 7 columns): dropped through the funnel, snapshot 2 taken",
    "header changed (7 -> 8 columns): dropped through the funnel, snapshot 3 taken",
    "captured 1 of 1 tables without a snapshot; none remain",
    "drift report: 4 snapshots of 1 resource, 3 consecutive pairs, 2 changed shape (67%)",
    "classes: unchanged 1, mixed 2",
    "Island -> island  (1.00, values and name)",
    "Culmen Length (mm) -> culmen_length_mm  (1.00, values and name)",
    "Culmen Depth (mm) -> culmen_depth_mm  (1.00, values and name)",
    "Flipper Length (mm) -> flipper_length_mm  (1.00, values and name)",
    "Body Mass (g) -> body_mass_g  (1.00, values and name)",
    "Sex -> sex  (0.95, values and name)",
    "Species -> species  (0.30, name; values differ)",
    "removed  studyName, Sample Number, Region, Stage, Individual ID, Clutch Completion, "
    "Date Egg, Delta 15 N (o/oo), Delta 13 C (o/oo), Comments",
    "culmen_length_mm -> bill_length_mm  (1.00, values)",
    "culmen_depth_mm -> bill_depth_mm  (1.00, values)",
    "added    year",
    "values of sex changed form under the same name (similarity 0.25)",
    # part 2: live invalidation in two tenants
    "acme> UPDATE tasks SET title = 'write the annual report' WHERE id = 1",
    "  refresh acme   tasks.list?status=open   ROW_IN_RESULT",
    "  skip    acme   tasks.count?status=open  COLUMNS_DISJOINT",
    "  skip    globex tasks.list?status=open   SCOPE_DISJOINT",
    "  refresh globex tasks.list?status=open   INSERT_MAY_ENTER",
    "  refresh acme   tasks.list?status=done   ROW_IN_RESULT",
    "acme: listening again; NOTIFY is not durable, so every subscription of acme refreshes "
    "(SCOPE_RESET)",
    "done: 9 notifications, 22 refreshes, 41 skips, acme reconnected 1 time",
]


def main():
    if not os.environ.get("PGHOST"):
        print("1..0 # SKIP no PostgreSQL server (run tests/run)")
        return 0
    db = "pgwt_demo_%d" % os.getpid()
    env = dict(os.environ, PGWITNESS_DEMO_DB=db)
    p = subprocess.run([DEMO, BIN], capture_output=True, text=True, env=env, timeout=600)
    for d in (db, db + "_acme", db + "_globex"):
        subprocess.run(["psql", "-qXc", f'DROP DATABASE IF EXISTS "{d}" WITH (FORCE)', "postgres"],
                       capture_output=True)
    out = p.stdout
    checks = [("demo exits 0 with nothing on stderr", p.returncode == 0 and p.stderr == "",
               p.stderr)]
    for line in EXPECTED:
        checks.append((f"shows: {line}", line in out, ""))
    print(f"1..{len(checks)}")
    failed = 0
    for i, (name, ok, detail) in enumerate(checks, 1):
        print(f"{'ok' if ok else 'not ok'} {i} - {name}")
        if not ok:
            failed += 1
            for l in (detail or out[-3000:]).splitlines():
                print(f"#   {l}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
