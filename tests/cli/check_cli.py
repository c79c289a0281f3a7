#!/usr/bin/env python3
"""The `pgwitness` CLI against the real server tests/run starts (issue 7).

Every bad input gives one clear line on stderr naming what is wrong, a
non-zero exit (2 usage, 1 failure), and changes nothing in the database;
the commands print what they say on real data. Prints TAP.

usage: check_cli.py PGWITNESS INGEST DATA_DIR FIXTURE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

CLI, INGEST, DATA, FIXTURES = sys.argv[1:5]
DB = "pgwt_cli_%d" % os.getpid()
results = []


def run(args, stdin=None, env=None, db=True):
    e = dict(os.environ)
    if db:
        e["PGDATABASE"] = DB
    if env:
        e.update(env)
    p = subprocess.run(args, input=stdin, capture_output=True, text=True, env=e, timeout=120)
    return p.returncode, p.stdout, p.stderr


def cli(*args, **kw):
    return run([CLI] + list(args), **kw)


def check(name, cond, detail=""):
    results.append((name, bool(cond), detail))


def one_error_line(name, rc, out, err, code, needle):
    lines = [l for l in err.splitlines() if l.strip()]
    ok = rc == code and len(lines) == 1 and needle in err and out == ""
    check(name, ok, f"rc={rc} stdout={out!r} stderr={err!r} (want rc {code}, one line with {needle!r})")


def psql(sql):
    e = dict(os.environ, PGDATABASE=DB)
    p = subprocess.run(["psql", "-Atqc", sql], capture_output=True, text=True, env=e)
    return p.stdout.strip()


def counts():
    return psql("SELECT (SELECT count(*) FROM pgwitness.snapshots) || '/' || "
                "(SELECT count(*) FROM pgwitness.drop_audit) || '/' || "
                "(SELECT count(*) FROM pg_tables WHERE schemaname = 'public')")


def main():
    if not os.environ.get("PGHOST"):
        print("1..0 # SKIP no PostgreSQL server (run tests/run)")
        return 0
    subprocess.run(["psql", "-qc", f'CREATE DATABASE "{DB}"', "postgres"], check=True,
                   capture_output=True)
    try:
        body()
    finally:
        subprocess.run(["psql", "-qc", f'DROP DATABASE IF EXISTS "{DB}" WITH (FORCE)',
                        "postgres"], capture_output=True)
    print(f"1..{len(results)}")
    failed = 0
    for i, (name, ok, detail) in enumerate(results, 1):
        print(f"{'ok' if ok else 'not ok'} {i} - {name}")
        if not ok:
            failed += 1
            for line in detail.splitlines():
                print(f"#   {line}")
    return 1 if failed else 0


def body():
    tmp = tempfile.mkdtemp()
    # Usage errors: exit 2, one line.
    rc, out, err = cli()
    check("no command: usage on stderr, exit 2", rc == 2 and "usage: pgwitness" in err and out == "")
    one_error_line("unknown command", *cli("bogus"), 2, "unknown command 'bogus'")
    one_error_line("unknown option", *cli("history", "t", "--frobnicate"), 2,
                   "unknown option '--frobnicate'")
    one_error_line("snapshot without a table", *cli("snapshot"), 2, "which table?")
    one_error_line("drop without --reason", *cli("drop", "t"), 2, "--reason is required")
    one_error_line("prune with a bad number", *cli("prune", "--keep", "zero"), 2,
                   "--keep takes a positive number, not 'zero'")
    one_error_line("report with a bad timestamp", *cli("report", "--since", "yesterday"), 2,
                   "is not an RFC 3339 timestamp")
    one_error_line("decide without files", *cli("decide"), 2, "give --deps FILE and --write FILE")
    one_error_line("bad table name", *cli("snapshot", '"unterminated'), 2, "is not a table name")

    # Every command documents itself.
    for c in ["install", "snapshot", "baseline", "drop", "history", "diff", "report", "prune",
              "decide", "watch"]:
        rc, out, err = cli(c, "--help")
        check(f"{c} --help", rc == 0 and out.startswith("usage: pgwitness " + c) and err == "",
              out[:200])

    # Unreachable server; schema not installed.
    one_error_line("unreachable server", *cli("-d", "host=/nonexistent-pgw port=1", "history",
                                              "t"), 1, "cannot connect to the database")
    one_error_line("schema not installed", *cli("history", "penguins"), 1,
                   "pgwitness is not installed in schema \"pgwitness\"")
    one_error_line("schema not installed (another name)",
                   *cli("--schema", "nope", "report"), 1, "`pgwitness install`")

    rc, out, err = cli("install")
    check("install", rc == 0 and out == 'installed pgwitness schema "pgwitness" (version 2)\n',
          out + err)
    rc, out, err = cli("install")
    check("install again is a no-op", rc == 0 and "is up to date (version 2)" in out, out + err)

    # Real data: the three published formats through the example collector.
    penguins = [os.path.join(DATA, "palmerpenguins", f) for f in
                ("v1_penguins_raw.csv", "v2_penguins_size.csv", "v3_penguins.csv")]
    rc, out, err = run([INGEST, "--table", "penguins", penguins[0]])
    check("ingest v1", rc == 0 and "loaded 344 rows, 17 columns" in out, out + err)
    rc, out, err = cli("baseline")
    check("baseline captures the live table", rc == 0 and
          "captured 1 of 1 tables without a snapshot; none remain" in out, out + err)
    rc, out, err = cli("baseline", "--json")
    check("baseline again does nothing", rc == 0 and json.loads(out)["backlog"] == 0, out + err)
    for f in penguins[1:]:
        rc, out, err = run([INGEST, "--table", "penguins", f])
        check(f"ingest {os.path.basename(f)} recreates through the funnel",
              rc == 0 and "dropped through the funnel, snapshot" in out, out + err)
    rc, out, err = cli("snapshot", "penguins", "-o", os.path.join(tmp, "v3.json"), "--store")
    check("snapshot -o --store", rc == 0 and "stored as snapshot 4" in out and
          "bill_length_mm" in out, out + err)

    rc, out, err = cli("history", "penguins", "--json")
    hist = json.loads(out) if rc == 0 else []
    check("history newest first", [h["id"] for h in hist] == [4, 3, 2, 1] and
          [h["reason"] for h in hist] == ["manual", "schema_mismatch_recreate",
                                          "schema_mismatch_recreate", "baseline"], out + err)

    rc, out, err = cli("diff", "2", "3", "--json")
    d = json.loads(out) if rc == 0 else {}
    pairs = {(r["from"], r["to"], r["evidence"]) for r in d.get("renamed_candidates", [])}
    want = {("Culmen Length (mm)", "culmen_length_mm", "both"),
            ("Culmen Depth (mm)", "culmen_depth_mm", "both"),
            ("Flipper Length (mm)", "flipper_length_mm", "both"),
            ("Body Mass (g)", "body_mass_g", "both"), ("Island", "island", "both"),
            ("Sex", "sex", "both"), ("Species", "species", "name")}
    check("diff v1 -> v2 (stored ids): the renames", pairs == want, str(pairs ^ want))
    check("diff JSON has the documented keys",
          all(k in d for k in ["schema_changed", "added", "removed", "type_changed", "reordered",
                               "renamed_candidates", "profile_changed", "name_anomalies"]),
          str(list(d)))
    rc, out, err = cli("diff", "penguins")
    check("diff TABLE: its two newest (v3 live vs v2)", rc == 0 and
          "culmen_length_mm  ->  bill_length_mm" in out and "added (1)" in out and
          "year  integer" in out, out + err)

    # A file diff needs no database at all.
    with open(os.path.join(tmp, "bad.json"), "w") as f:
        f.write('{"format": 1, "schema": ')
    rc, out, err = cli("-d", "host=/nonexistent-pgw port=1", "diff",
                       os.path.join(tmp, "v3.json"), os.path.join(tmp, "v3.json"), "--json")
    check("file diff works without a server", rc == 0 and
          json.loads(out)["class"] == "unchanged", out + err)
    one_error_line("malformed snapshot file", *cli("diff", os.path.join(tmp, "bad.json"),
                                                   os.path.join(tmp, "v3.json")), 1,
                   "bad.json is not a pgwitness snapshot: invalid JSON")
    one_error_line("missing snapshot id", *cli("diff", "1", "999"), 1,
                   "no stored snapshot with id 999")
    one_error_line("neither file nor id", *cli("diff", "nofile.json", "1"), 2,
                   "'nofile.json' is neither a snapshot file nor a stored snapshot id")

    rc, out, err = cli("report")
    check("report: both format changes, renames from values",
          rc == 0 and "4 snapshots of 1 resource, 3 consecutive pairs, 2 changed shape (67%)" in out
          and "classes: unchanged 1, mixed 2" in out
          and "culmen_length_mm -> bill_length_mm  (1.00, values)" in out
          and "values of sex changed form under the same name" in out, out + err)
    rc, out, err = cli("report", "--json")
    check("report --json", rc == 0 and json.loads(out)["changed_pairs"] == 2, err)

    # Failures change nothing.
    before = counts()
    one_error_line("snapshot of a missing table", *cli("snapshot", "no_such_table", "--store"), 1,
                   "no table public.no_such_table")
    one_error_line("history under a schema that is not installed",
                   *cli("--schema", "nope", "history", "penguins"), 1, "not installed")
    check("failed commands changed nothing", counts() == before, f"{before} -> {counts()}")

    # The funnel from the CLI, then prune.
    psql("CREATE TABLE scratch (a int)")
    rc, out, err = cli("drop", "scratch", "--reason", "raw_orphan_cleanup")
    check("drop through the funnel", rc == 0 and "dropped public.scratch; snapshot 5 taken first"
          in out, out + err)
    rc, out, err = cli("drop", "scratch", "--reason", "raw_orphan_cleanup")
    check("drop of a missing table: nothing dropped, audited", rc == 0 and
          "public.scratch did not exist (nothing dropped); no snapshot: snapshot failed: no table "
          "public.scratch (already dropped?)" in out, out + err)
    rc, out, err = cli("prune", "--keep", "1", "--json")
    check("prune keeps both sides of every change", rc == 0 and json.loads(out) ==
          {"removed": 1, "resources": 1, "kept": 4}, out + err)

    # watch: triggers and a listener; its JSON lines feed decide --batch.
    psql("CREATE TABLE tasks (id int PRIMARY KEY, title text, status text, updated_at int)")
    e = dict(os.environ, PGDATABASE=DB)
    w = subprocess.Popen([CLI, "watch", "tasks", "--json", "--values", "status", "--project", "p1",
                          "--tenant", "acme", "--database", "app", "--seconds", "4"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
    import time
    deadline = time.time() + 3
    while time.time() < deadline and psql("SELECT count(*) FROM pg_stat_activity WHERE "
                                           "query = 'LISTEN \"pgwitness\"'") != "1":
        time.sleep(0.05)
    psql("INSERT INTO tasks VALUES (17, 'a', 'open', 1), (42, 'b', 'open', 2)")
    psql("UPDATE tasks SET status = 'closed', updated_at = 3 WHERE id = 17")
    psql("UPDATE tasks SET notes_free = 1 WHERE false")  # fails: no such column, sends nothing
    psql("UPDATE tasks SET title = 'c' WHERE id = 42")
    wout, werr = w.communicate(timeout=30)
    lines = [json.loads(l) for l in wout.splitlines()]
    check("watch: a scope reset first, then one write set per statement",
          [l["op"] for l in lines] == ["reset", "insert", "update", "update"] and
          lines[1]["ids"] == ["17", "42"] and lines[2]["columns"] == ["status", "updated_at"] and
          lines[2]["old"] == [{"status": "open"}] and lines[2]["new"] == [{"status": "closed"}] and
          lines[3]["columns"] == ["title"] and
          all(l["scope"] == {"project": "p1", "tenant": "acme", "database": "app"} for l in lines),
          wout + werr)
    check("watch: status lines on stderr", "listening" in werr and "4 write sets seen" in werr,
          werr)
    with open(os.path.join(FIXTURES, "tasks_open.deps.json")) as f:
        d_obj = json.load(f)
    batch = "".join(json.dumps({"deps": d_obj, "write": l}) + "\n" for l in lines)
    rc, out, err = cli("decide", "--batch", stdin=batch)
    check("watch | decide --batch: the verdicts",
          rc == 0 and [json.loads(l) for l in out.splitlines()] == [
              {"verdict": "refresh", "reason": "SCOPE_RESET"},
              {"verdict": "refresh", "reason": "INSERT_MAY_ENTER"},
              {"verdict": "refresh", "reason": "ROW_IN_RESULT"},
              {"verdict": "refresh", "reason": "ROW_IN_RESULT"}], out + err)
    one_error_line("watch a missing table", *cli("watch", "no_such_table", "--seconds", "1"), 1,
                   "cannot watch public.no_such_table")

    # decide, without a database.
    deps = os.path.join(FIXTURES, "tasks_open.deps.json")
    rc, out, err = cli("-d", "host=/nonexistent-pgw", "decide", "--deps", deps, "--write",
                       os.path.join(FIXTURES, "close_17.write.json"))
    check("decide: a row in the result", rc == 0 and out ==
          "refresh (ROW_IN_RESULT): a changed row is in the subscription's result\n", out + err)
    rc, out, err = cli("decide", "--deps", deps, "--write",
                       os.path.join(FIXTURES, "touch_99_notes.write.json"), "--json")
    check("decide --json: unread columns", rc == 0 and
          json.loads(out) == {"verdict": "skip", "reason": "COLUMNS_DISJOINT"}, out + err)
    rc, out, err = cli("decide", "--deps", deps, "--write",
                       os.path.join(FIXTURES, "globex.write.json"))
    check("decide: another tenant", rc == 0 and out.startswith("skip (SCOPE_DISJOINT)"), out)
    one_error_line("decide: malformed write", *cli("decide", "--deps", deps, "--write", deps), 1,
                   "unknown key")
    with open(deps) as f:
        d_obj = json.load(f)
    with open(os.path.join(FIXTURES, "close_17.write.json")) as f:
        w_obj = json.load(f)
    lines = json.dumps({"deps": d_obj, "write": w_obj}) + "\nnot json\n"
    rc, out, err = cli("decide", "--batch", stdin=lines)
    outs = out.splitlines()
    check("decide --batch: one line out per line in", rc == 1 and len(outs) == 2 and
          json.loads(outs[0]) == {"verdict": "refresh", "reason": "ROW_IN_RESULT"} and
          json.loads(outs[1])["line"] == 2 and "1 of 2 lines could not be decided" in err,
          out + err)


if __name__ == "__main__":
    sys.exit(main())
