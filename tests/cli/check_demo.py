#!/usr/bin/env python3
"""Runs examples/demo.sh — what examples/quickstart shows — against the
server tests/run starts, and checks its key lines: both format changes of
palmerpenguins with the renames found from values, the change classes, and
(when the invalidation demo is present) the refresh/skip verdicts; that the
README's excerpt of it is what it prints; that examples/quickstart --help
and --keep say what works; and that the programs the README shows install
with a RUNPATH to the installed library. Prints TAP.

usage: check_demo.py DEMO_SH BIN_DIR

BIN_DIR is the build directory's examples/ (its parent is the build
directory). PGW_TEST_WRAPPER in the environment (e.g. "valgrind ...") is
passed on: demo.sh puts it before every run of the programs.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

DEMO, BIN = sys.argv[1:3]
EXAMPLES = os.path.dirname(os.path.abspath(DEMO))
ROOT = os.path.dirname(EXAMPLES)
BUILD = os.path.dirname(os.path.abspath(BIN))
SLOW = 10 if os.environ.get("PGW_TEST_WRAPPER", "").split() else 1

EXPECTED = [
    "header changed (17 -> 7 columns): dropped through the funnel, snapshot 2 taken",
    "header changed (7 -> 8 columns): dropped through the funnel, snapshot 3 taken",
    "captured 1 of 1 table without a snapshot; none remain",
    "drift report: 4 snapshots of 1 resource, 3 consecutive pairs, 2 changed shape (67%)",
    "classes: unchanged 1, mixed 2",
    # The combined rename score (issue 17), best first.
    "renamed  Flipper Length (mm) -> flipper_length_mm  (1.00, values and name)",
    "Island -> island  (1.00, values and name)",
    "Body Mass (g) -> body_mass_g  (1.00, values and name)",
    "Culmen Depth (mm) -> culmen_depth_mm  (0.99, values and name)",
    "Culmen Length (mm) -> culmen_length_mm  (0.99, values and name)",
    "Sex -> sex  (0.98, values and name)",
    # The labels were cut short, but their shares are the same.
    "Species -> species  (0.84, values and name)",
    "removed  studyName, Sample Number, Region, Stage, Individual ID, Clutch Completion, "
    "Date Egg, Delta 15 N (o/oo), Delta 13 C (o/oo), Comments",
    "culmen_length_mm -> bill_length_mm  (0.80, values and name)",
    "culmen_depth_mm -> bill_depth_mm  (0.80, values and name)",
    "added    year",
    "values of sex changed form under the same name (similarity 0.25)",
    # part 2: live invalidation in two tenants
    "acme> UPDATE tasks SET title = 'write the annual report' WHERE id = 1",
    "  refresh acme   tasks.list?status=open   ROW_IN_RESULT",
    "  skip    acme   tasks.count?status=open  COLUMNS_DISJOINT",
    "  skip    globex tasks.list?status=open   SCOPE_DISJOINT",
    "  refresh globex tasks.list?status=open   INSERT_MAY_ENTER",
    "  refresh acme   tasks.list?status=done   ROW_IN_RESULT",
    # docs/wire.md: touching rows without changing a value sends a write set
    # listing no rows and no columns; touching no row sends nothing.
    "acme> UPDATE tasks SET status = status\n"
    "notification from acme: update public.tasks, rows touched, none changed\n"
    "  no value changed: the write set lists no rows and no columns (ids [], columns [])\n",
    # A rerun that finds nothing says so, without a dangling colon.
    "  rerun acme   tasks.list?status=open   no rows\n",
    "acme> UPDATE tasks SET status = 'open' WHERE id = 999\n"
    "  no row touched: a statement that touches no row sends no notification, so nothing "
    "reruns\n",
    "acme: listening again; NOTIFY is not durable, so every subscription of acme refreshes "
    "(SCOPE_RESET)",
    "done: 9 notifications, 22 refreshes, 41 skips, acme reconnected 1 time",
]

checks = []


def check(name, ok, detail=""):
    checks.append((name, bool(ok), detail))


def readme_excerpt():
    """The README's excerpt of the quickstart output: its lines that stand
    for themselves (not commands, not elisions with ...)."""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    m = re.search(r"An excerpt of its output:\n\n```\n(.*?)\n```", text, re.S)
    if not m:
        return None
    return [l for l in m.group(1).splitlines()
            if l.strip() and not l.startswith("$ ") and "..." not in l and "…" not in l]


def demo():
    db = "pgwt_demo_%d" % os.getpid()
    env = dict(os.environ, PGWITNESS_DEMO_DB=db)
    p = subprocess.run([DEMO, BIN], capture_output=True, text=True, env=env, timeout=600 * SLOW)
    for d in (db, db + "_acme", db + "_globex"):
        subprocess.run(["psql", "-qXc", f'DROP DATABASE IF EXISTS "{d}" WITH (FORCE)', "postgres"],
                       capture_output=True)
    out = p.stdout
    check("demo exits 0 with nothing on stderr", p.returncode == 0 and p.stderr == "",
          p.stderr or out[-3000:])
    for line in EXPECTED:
        check("shows: " + " / ".join(l.strip() for l in line.strip().splitlines()), line in out,
              out[-3000:])
    excerpt = readme_excerpt()
    check("the demo no longer says a statement that changes no row sends nothing",
          "changes no row" not in out, out[-3000:])
    check("the demo never says '0 rows' (no rows, or rows touched, none changed)",
          "0 rows" not in out, out[-3000:])
    lines = set(out.splitlines())
    missing = [l for l in excerpt or [] if l not in lines]
    check("the README's excerpt is what the demo prints", excerpt and not missing,
          "not in the output:\n" + "\n".join(missing))


def quickstart_help():
    p = subprocess.run([os.path.join(EXAMPLES, "quickstart"), "--help"], capture_output=True,
                       text=True, timeout=30)
    check("quickstart --help: its comment block, no code", p.returncode == 0 and
          p.stdout.startswith("examples/quickstart — THE main-job command") and
          "set -euo" not in p.stdout and
          p.stdout.rstrip().endswith("limits the\nbuild's parallel jobs (default: ninja's)."),
          p.stdout + p.stderr)


def quickstart_keep():
    """--keep: the printed stop and remove commands work as printed, for the
    user who ran it (root included: pg_ctl refuses to run as root)."""
    env = dict(os.environ, PGW_BUILD_DIR=BUILD)
    env.pop("PGW_TEST_WRAPPER", None)  # the demo under a wrapper is checked above
    for k in ("PGHOST", "PGPORT", "PGUSER", "PGDATABASE"):
        env.pop(k, None)
    p = subprocess.run([os.path.join(EXAMPLES, "quickstart"), "--keep"], capture_output=True,
                       text=True, env=env, timeout=600)
    out = p.stdout
    stop = re.search(r"^to stop it: +(.*)$", out, re.M)
    remove = re.search(r"^then remove it: +(.*)$", out, re.M)
    data = re.search(r"^server left running \(data in (.*)\); to use it:$", out, re.M)
    try:
        check("quickstart --keep: exit 0, the server left running", p.returncode == 0 and
              data and stop and remove and os.path.isdir(data.group(1)),
              out[-3000:] + p.stderr)
        if not (stop and remove and data):
            return
        check("quickstart --keep: the stop command names the right user",
              ("runuser -u postgres -- " in stop.group(1)) == (os.getuid() == 0), stop.group(1))
        s = subprocess.run(["bash", "-c", stop.group(1)], capture_output=True, text=True,
                           timeout=120)
        check("quickstart --keep: the printed stop command works", s.returncode == 0 and
              not os.path.exists(os.path.join(data.group(1), "data", "postmaster.pid")),
              f"{stop.group(1)}\nrc={s.returncode} {s.stdout}{s.stderr}")
        r = subprocess.run(["bash", "-c", remove.group(1)], capture_output=True, text=True,
                           timeout=120)
        check("quickstart --keep: the printed remove command works", r.returncode == 0 and
              not os.path.exists(data.group(1)), f"{remove.group(1)}\n{r.stdout}{r.stderr}")
    finally:
        # Whatever failed, leave no server behind: its directory from the
        # note, or from any "-D DIR/data" in the output.
        m = data or re.search(r"-D (\S+)/data", out)
        if m and os.path.isdir(m.group(1)):
            d = m.group(1)
            ctl = [os.environ.get("PGW_PG_BINDIR", "") + "/pg_ctl", "-D", d + "/data", "-m",
                   "immediate", "stop"]
            if os.getuid() == 0:
                ctl = ["runuser", "-u", "postgres", "--"] + ctl
            subprocess.run(ctl, capture_output=True)
            shutil.rmtree(d, ignore_errors=True)


def installed():
    """The README's commands are installed, and find the library they were
    installed with (RUNPATH to the installed libdir)."""
    tmp = tempfile.mkdtemp()
    try:
        p = subprocess.run(["meson", "install", "-C", BUILD, "--destdir", tmp, "--no-rebuild",
                            "--quiet"], capture_output=True, text=True, timeout=300)
        libs = [os.path.join(r, f) for r, _, fs in os.walk(tmp) for f in fs
                if f == "libpgwitness-pq.so.0"]
        check("meson install", p.returncode == 0 and len(libs) == 1, p.stdout + p.stderr)
        if not libs:
            return
        libdir = os.path.dirname(libs[0])[len(tmp):]
        for prog in ("pgwitness", "pgwitness-ingest", "pgwitness-tasks"):
            found = [os.path.join(r, prog) for r, _, fs in os.walk(tmp) for f in fs if f == prog]
            ok = len(found) == 1 and os.path.basename(os.path.dirname(found[0])) == "bin"
            rpath = ""
            if ok:
                e = subprocess.run(["readelf", "-d", found[0]], capture_output=True, text=True)
                m = re.search(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[(.*)\]", e.stdout)
                rpath = m.group(1) if m else ""
            check(f"installed: bin/{prog} with a RUNPATH to {libdir}",
                  ok and libdir in rpath.split(":"), f"{found} rpath={rpath!r}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def readme_c_snippets():
    """Each C block of the README that names an examples/readme/*.c file
    is that file's code, as written (the files are compiled with the
    project, so the README stays true)."""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    found = 0
    for m in re.finditer(r"`(examples/readme/[a-z_]+\.c)`[^\n]*\n(?:[^\n]*\n){0,3}?```c\n(.*?)```",
                         text, re.S):
        path, block = m.group(1), m.group(2)
        with open(os.path.join(ROOT, path)) as f:
            src = f.read()
        body = "\n".join(l[4:] if l.startswith("    ") else l for l in src.split("\n"))
        check(f"the README's code from {path} is the compiled file's", block in body, block)
        found += 1
    check("the README shows the two compiled examples", found == 2, str(found))


def main():
    quickstart_help()
    readme_c_snippets()
    if not os.environ.get("PGHOST"):
        print("1..0 # SKIP no PostgreSQL server (run tests/run)")
        return 0
    demo()
    installed()
    quickstart_keep()
    print(f"1..{len(checks)}")
    failed = 0
    for i, (name, ok, detail) in enumerate(checks, 1):
        print(f"{'ok' if ok else 'not ok'} {i} - {name}")
        if not ok:
            failed += 1
            for l in detail.splitlines():
                print(f"#   {l}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
