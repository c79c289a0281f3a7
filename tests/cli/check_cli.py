#!/usr/bin/env python3
"""The `pgwitness` CLI and the example programs `pgwitness-ingest` and
`pgwitness-tasks` against the real server tests/run starts (issue 7).

Every bad input gives one clear line on stderr naming what is wrong, a
non-zero exit (2 usage, 1 failure), and changes nothing in the database;
the commands print what they say on real data. Prints TAP.

usage: check_cli.py [--part usage|snapshots|inval] PGWITNESS INGEST DATA_DIR FIXTURE_DIR [TASKS]

TASKS defaults to ../tasks/pgwitness-tasks beside INGEST's directory.
--part runs one part's checks: the usage errors (found before any
connection), or one half's (each part in its own database, so that meson
runs them at once; under valgrind, where every program runs ten times
slower, that divides the suite's time); without it, all three.
PGW_TEST_WRAPPER in the environment (e.g. "valgrind --error-exitcode=99
...") is split on whitespace and put before every run of the three
programs; waits for their output are then ten times longer.
"""
import contextlib
import json
import os
import re
import resource
import select
import signal
import stat
import subprocess
import sys
import tempfile
import time

ARGS = sys.argv[1:]
PART = "all"
if len(ARGS) >= 2 and ARGS[0] == "--part":
    PART, ARGS = ARGS[1], ARGS[2:]
CLI, INGEST, DATA, FIXTURES = ARGS[0:4]
TASKS = ARGS[4] if len(ARGS) > 4 else os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(INGEST))), "tasks", "pgwitness-tasks")
WRAP = os.environ.get("PGW_TEST_WRAPPER", "").split()
SLOW = 10 if WRAP else 1  # valgrind runs the programs some ten times slower


def _sanitized(path):
    """Whether the program is built with AddressSanitizer (it needs
    libasan), whose shadow memory does not fit under an RLIMIT_AS cap."""
    try:
        with open(path, "rb") as f:
            return b"libasan.so" in f.read()
    except OSError:
        return False


# No address-space cap (cli_fed) for these runs: their memory tests shrink.
UNCAPPED = bool(WRAP) or _sanitized(CLI)
DB = "pgwt_cli_%d" % os.getpid()
NOSERVER = "host=/nonexistent-pgw port=1"
results = []
# The usage part runs some two hundred programs that stop before they
# connect. Under PGW_TEST_WRAPPER only every third of them runs under the
# wrapper (valgrind costs some 0.6 s a run before main) and the others run
# bare, with every check the same; the ASan pass runs them all under the
# sanitizers.
_runs = 0


def wrap():
    global _runs
    _runs += 1
    return WRAP if PART != "usage" or _runs % 3 == 1 else []


def run(args, stdin=None, env=None, db=True, timeout=120, stdout=None):
    """Runs a program: (exit code, stdout, stderr). stdout="/dev/full" sends
    its standard output to that file instead (stdout is then "")."""
    e = dict(os.environ)
    if db:
        e["PGDATABASE"] = DB
    if env:
        e.update(env)
    out_file = open(stdout, "w") if stdout else None
    try:
        p = subprocess.run(wrap() + args, input=stdin, text=True, env=e, timeout=timeout * SLOW,
                           stdout=out_file or subprocess.PIPE, stderr=subprocess.PIPE)
    except subprocess.TimeoutExpired as t:
        out = t.stdout.decode(errors="replace") if isinstance(t.stdout, bytes) else t.stdout
        return "timeout", out or "", "timed out after %ss" % (timeout * SLOW)
    finally:
        if out_file:
            out_file.close()
    return p.returncode, p.stdout or "", p.stderr


def cli(*args, **kw):
    return run([CLI] + list(args), **kw)


def cli_fed(feed, *args, limit_mb=None, env=None, timeout=120):
    """pgwitness with standard input from a shell command `feed` (a pipe:
    `head -c N /dev/zero`, ...), or from a path opened for reading when
    `feed` is a list [path] (a directory gives a read error). limit_mb caps
    pgwitness's address space (RLIMIT_AS), so that unbounded reading fails
    fast instead of filling the machine's memory; not under PGW_TEST_WRAPPER
    (valgrind needs more) nor for a program built with AddressSanitizer
    (UNCAPPED). Returns (exit code, stdout, stderr)."""
    def cap():
        if limit_mb and not UNCAPPED:
            resource.setrlimit(resource.RLIMIT_AS, (limit_mb << 20, limit_mb << 20))
    if isinstance(feed, list):
        fd, feeder = os.open(feed[0], os.O_RDONLY), None
    else:
        feeder = subprocess.Popen(["sh", "-c", feed], stdout=subprocess.PIPE,
                                  env=dict(os.environ, **(env or {})))
        fd = feeder.stdout.fileno()
    try:
        p = subprocess.run(WRAP + [CLI] + list(args), stdin=fd, capture_output=True, text=True,
                           preexec_fn=cap, timeout=timeout * SLOW)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", "timed out after %ss" % (timeout * SLOW)
    finally:
        if feeder:
            feeder.stdout.close()
            feeder.kill()
            feeder.wait()
        else:
            os.close(fd)


def ingest(*args, **kw):
    return run([INGEST] + list(args), **kw)


def tasks(*args, **kw):
    return run([TASKS] + list(args), **kw)


def popen(args, **kw):
    """A program started in the background (stdout and stderr pipes, bytes)."""
    e = dict(os.environ, PGDATABASE=DB)
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    return subprocess.Popen(WRAP + args, env=e, **kw)


def read_lines(proc, n, timeout):
    """What proc printed on stdout once it has n lines, or at the deadline."""
    fd, buf = proc.stdout.fileno(), b""
    deadline = time.time() + timeout * SLOW
    while buf.count(b"\n") < n and time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            buf += chunk
    return buf


def stop(proc, timeout=30):
    """SIGTERM, then what is left of stdout and stderr (text), and the exit code."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        out, err = proc.communicate(timeout=timeout * SLOW)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    return proc.returncode, (out or b"").decode(errors="replace"), (err or b"").decode(
        errors="replace")


def check(name, cond, detail=""):
    results.append((name, bool(cond), detail))


def exact_error(name, rc, out, err, code, line):
    """Exit code `code`, nothing on stdout, and exactly this one line on stderr."""
    check(name, rc == code and out == "" and err == line + "\n",
          f"rc={rc} stdout={out!r} stderr={err!r} (want rc {code} and {line!r})")


FULL = "writing standard output: No space left on device"
COMMANDS = ["install", "snapshot", "baseline", "drop", "history", "diff", "report", "prune",
            "decide", "watch", "unwatch", "slots", "announce", "ddl-trigger"]


def one_error_line(name, rc, out, err, code, needle):
    lines = [l for l in err.splitlines() if l.strip()]
    needles = needle if isinstance(needle, (list, tuple)) else [needle]
    ok = rc == code and len(lines) == 1 and all(n in err for n in needles) and out == ""
    check(name, ok, f"rc={rc} stdout={out!r} stderr={err!r} (want rc {code}, one line with "
          f"{needles!r})")


def psql(sql):
    e = dict(os.environ, PGDATABASE=DB)
    p = subprocess.run(["psql", "-XAtqc", sql], capture_output=True, text=True, env=e)
    return p.stdout.strip()


def counts():
    return psql("SELECT (SELECT count(*) FROM pgwitness.snapshots) || '/' || "
                "(SELECT count(*) FROM pgwitness.drop_audit) || '/' || "
                "(SELECT count(*) FROM pg_tables WHERE schemaname = 'public')")


def json_or_none(text):
    try:
        return json.loads(text)
    except ValueError:
        return None


def watched_args(table):
    """The arguments of a table's pgwitness_update trigger without the three
    that describe its key (lib/pq/sql/migration_002.sql): [channel, value
    columns...]; None when it has none."""
    e = dict(os.environ, PGDATABASE=DB)
    p = subprocess.run(["psql", "-XAtqc", "SELECT encode(tgargs, 'hex') FROM pg_trigger WHERE "
                        f"tgrelid = '{table}'::regclass AND tgname = 'pgwitness_update'"],
                       capture_output=True, text=True, env=e)
    if not p.stdout.strip():
        return None
    args = bytes.fromhex(p.stdout.strip()).split(b"\0")[:-1]
    return [a.decode() for a in args[:1] + args[4:]]


def pgw_triggers(table):
    return psql("SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'pgwitness%' AND tgrelid = "
                f"'{table}'::regclass")


def wait_listening(n=1, channel="pgwitness"):
    """Waits until n sessions of this database LISTEN on the channel."""
    deadline = time.time() + 10 * SLOW
    while time.time() < deadline:
        if psql(f"SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                f"AND query = 'LISTEN \"{channel}\"'") == str(n):
            return True
        time.sleep(0.05)
    return False


def main():
    if not os.environ.get("PGHOST"):
        print("1..0 # SKIP no PostgreSQL server (run tests/run)")
        return 0
    subprocess.run(["psql", "-qc", f'CREATE DATABASE "{DB}"', "postgres"], check=True,
                   capture_output=True)
    try:
        body()
    finally:
        # A permanent slot a failed check left would keep the database.
        subprocess.run(["psql", "-qc", "SELECT pg_drop_replication_slot(slot_name) FROM "
                        f"pg_replication_slots WHERE database = '{DB}' AND NOT active",
                        "postgres"], capture_output=True)
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
    if PART in ("all", "usage"):
        body_usage()
    if PART in ("all", "snapshots"):
        body_snapshots(tmp)
    if PART in ("all", "inval"):
        body_inval(tmp)


def body_inval(tmp):
    """The invalidation half: watch and decide, the triggers, the stream."""
    if PART == "inval":
        rc, out, err = cli("install")
        check("install (the invalidation half's database)", rc == 0, out + err)
        # A table without the value column watch_and_decide names (the
        # snapshot half makes its own t1 from data).
        psql("CREATE TABLE t1 (a int, b text)")
    watch_and_decide(tmp)
    decide_files(tmp)
    tasks_example()
    watch_keeps_others_triggers()
    unwatch()
    stream_refusals()
    stream_watch()
    stream_gap_said_once()
    stream_slot()
    announce_ddl()


def body_usage():
    """What every program says before it connects: usage errors, strict
    numbers, help."""
    usage_errors()
    numbers()

    # Every command documents itself.
    for c in COMMANDS:
        rc, out, err = cli(c, "--help")
        check(f"{c} --help", rc == 0 and out.startswith("usage: pgwitness " + c) and err == "",
              out[:200])
    help_widths()
    rc, out, err = cli("--help")
    check("pgwitness --help: the real rule for names, --pgw-schema, JSON lines",
          rc == 0 and "nothing is lowercased" in out and "capitals" not in out and
          "--pgw-schema NAME" in out and "one JSON object per line" in out, out)
    one_error_line("unreachable server", *cli("-d", NOSERVER, "history", "t"), 1,
                   "cannot connect to the database")


def body_snapshots(tmp):
    # Schema not installed.
    exact_error("schema not installed: the command to run", *cli("history", "penguins"), 1,
                "pgwitness history: pgwitness is not installed in schema \"pgwitness\": run "
                "`pgwitness install` first")
    exact_error("schema not installed (another name): the command names it",
                *cli("--schema", "nope", "report"), 1,
                "pgwitness report: pgwitness is not installed in schema \"nope\": run "
                "`pgwitness --pgw-schema nope install` first")

    rc, out, err = cli("install")
    check("install", rc == 0 and out == 'installed pgwitness schema "pgwitness" (version 8)\n',
          out + err)
    rc, out, err = cli("install")
    check("install again is a no-op", rc == 0 and "is up to date (version 8)" in out, out + err)

    real_data(tmp)
    diffs(tmp)
    failures_change_nothing()
    names_and_drop()
    ingest_reloads(tmp)
    ingest_bad_input(tmp)
    ingest_as_pandas_reads(tmp)
    # Last: these store snapshots, which would shift the ids checked above.
    stdout_and_partial_writes(tmp)
    control_characters()
    output_option(tmp)
    stored_then_stdout_fails()
    interrupted_store(tmp)
    interrupted_ingest(tmp)
    ingest_pgwitness_schema(tmp)
    quoted_names()


def usage_errors():
    """Usage errors: exit 2, one line, before any connection."""
    exact_error("no command: one line, exit 2", *cli(), 2,
                "pgwitness: no command given; see pgwitness --help")
    exact_error("no command after global options: one line, exit 2",
                *cli("-d", NOSERVER, "--json"), 2,
                "pgwitness: no command given; see pgwitness --help")
    exact_error("help for an unknown command: one line, exit 2", *cli("help", "bogus"), 2,
                "pgwitness: unknown command 'bogus' (see pgwitness --help)")
    rc, out, err = cli("--help")
    check("--help: the whole help on stdout, exit 0",
          rc == 0 and out.startswith("usage: pgwitness") and "Exit status" in out and err == "",
          err)
    # A write error on stdout is a failure, said once, in every program.
    for name, prog, args in [("pgwitness --help", cli, ["--help"]),
                             ("pgwitness --version", cli, ["--version"]),
                             ("pgwitness help diff", cli, ["help", "diff"]),
                             ("pgwitness-ingest --help", ingest, ["--help"]),
                             ("pgwitness-tasks --help", tasks, ["--help"])]:
        prog_name = name.split()[0]
        exact_error(f"{name} > /dev/full: exit 1, one line", *prog(*args, stdout="/dev/full"), 1,
                    f"{prog_name}: {FULL}")
    # A closed pipe is a failed write too: exit 1 and one line, not death
    # by SIGPIPE (status -13 here, 141 in a shell). The read end is closed
    # before the program starts, so its first write fails.
    for name, argv in [("pgwitness --help", [CLI, "--help"]),
                       ("pgwitness-ingest --help", [INGEST, "--help"]),
                       ("pgwitness-tasks --help", [TASKS, "--help"])]:
        rfd, wfd = os.pipe()
        os.close(rfd)
        p = subprocess.run(wrap() + argv, stdout=wfd, stderr=subprocess.PIPE, text=True,
                           timeout=60 * SLOW)
        os.close(wfd)
        prog_name = name.split()[0]
        check(f"{name} into a closed pipe: exit 1, one line", p.returncode == 1 and
              p.stderr == f"{prog_name}: writing standard output: Broken pipe\n",
              f"rc={p.returncode} stderr={p.stderr!r}")
    exact_error("--version with an extra argument: a usage error",
                *cli("--version", "extra"), 2,
                "pgwitness: unexpected argument 'extra' after --version")
    rc, out, err = cli("--help")
    check("pgwitness --help lists unwatch", rc == 0 and
          "\n  unwatch TABLE...        remove the triggers watch installed\n" in out, out)
    exact_error("tasks without arguments: one line, exit 2", *tasks(), 2,
                "pgwitness-tasks: give at least one --tenant NAME=CONNINFO (see pgwitness-tasks "
                "--help)")
    exact_error("tasks without --script or --watch: one line, exit 2",
                *tasks("--tenant", "a=dbname=x"), 2,
                "pgwitness-tasks: give --script or --watch SECONDS (see pgwitness-tasks --help)")
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
    one_error_line("bad table name", *cli("snapshot", '"unterminated'), 2,
                   ["is not a table name", "unterminated quote"])
    # An empty schema name is a usage error, not SQL's "zero-length delimited identifier".
    for args in (["--schema", "", "history", "t1"], ["history", "t1", "--pgw-schema="],
                 ["--pgw-schema=", "report"]):
        one_error_line(f"empty pgwitness schema: {args}", *cli("-d", NOSERVER, *args), 2,
                       "pgwitness's schema name (--pgw-schema, --schema or PGWITNESS_SCHEMA) "
                       "is empty")
    # Bad text options are usage errors found before connecting (exit 2, not 1).
    long = "x" * 300
    one_error_line("snapshot --reason ''", *cli("-d", NOSERVER, "snapshot", "t1", "--reason", ""),
                   2, "--reason is empty")
    one_error_line("snapshot --reason of 300 bytes",
                   *cli("-d", NOSERVER, "snapshot", "t1", "--reason", long), 2,
                   "--reason is 300 bytes, more than 200")
    one_error_line("drop --reason of 300 bytes", *cli("-d", NOSERVER, "drop", "t1", "--reason",
                                                      long), 2, "--reason is 300 bytes")
    one_error_line("drop --reason=''", *cli("-d", NOSERVER, "drop", "t1", "--reason="), 2,
                   "--reason is empty")
    one_error_line("history --resource ''", *cli("-d", NOSERVER, "history", "--resource", ""), 2,
                   "--resource is empty")
    one_error_line("snapshot -o ''", *cli("-d", NOSERVER, "snapshot", "t1", "-o", ""), 2,
                   "--output: the file name is empty")
    one_error_line("baseline --schema '' (a pattern there)",
                   *cli("-d", NOSERVER, "baseline", "--schema", ""), 2,
                   "--schema PATTERN is empty")
    # The baseline's patterns are checked before connecting, like every option.
    for opt in ("--schema", "--table"):
        exact_error(f"baseline {opt} with invalid UTF-8",
                    *cli("-d", NOSERVER, "baseline", opt, "\udcff"), 2,
                    f"pgwitness baseline: {opt} PATTERN is not valid UTF-8")
        exact_error(f"baseline {opt} of 1025 bytes", *cli("-d", NOSERVER, "baseline",
                                                         f"{opt}=" + "%" * 1025), 2,
                    f"pgwitness baseline: {opt} PATTERN is 1025 bytes, more than 1024")
        exact_error(f"baseline {opt} ending in LIKE's escape character",
                    *cli("-d", NOSERVER, "baseline", opt, "pg\\"), 2,
                    f"pgwitness baseline: {opt} PATTERN ends with LIKE's escape character \\ "
                    f"(write \\\\ for a backslash)")
    one_error_line("baseline --table 'a\\\\' (an escaped backslash) is a good pattern",
                   *cli("-d", NOSERVER, "baseline", "--table", "a\\\\"), 1,
                   "cannot connect to the database")
    # --opt=value works for global options too, as for command options.
    one_error_line("--dbname=X before the command", *cli(f"--dbname={NOSERVER}", "history", "t"),
                   1, "cannot connect to the database")
    one_error_line("-d X after the command", *cli("history", "t", "-d", NOSERVER), 1,
                   "cannot connect to the database")
    one_error_line("--dbname=X after the command", *cli("history", "t", f"--dbname={NOSERVER}"),
                   1, "cannot connect to the database")
    one_error_line("global option without its value", *cli("--dbname"), 2,
                   "option --dbname needs a value")
    # Table names: as written, at most two parts, each a valid name.
    exact_error("a.b.c is not a table name: the hint once", *cli("-d", NOSERVER, "snapshot",
                                                                  "a.b.c"), 2,
                "pgwitness snapshot: 'a.b.c' is not a table name: 'a.b.c' has more than two "
                "parts (use table or schema.table; quote a name that contains a dot: "
                "'\"my.table\"')")
    exact_error("an unterminated quote: the hint once", *cli("-d", NOSERVER, "snapshot", '"t'),
                2, "pgwitness snapshot: '\"t' is not a table name: '\"t' has an unterminated "
                "quote (use table or schema.table)")
    one_error_line("a name over 63 bytes", *cli("-d", NOSERVER, "snapshot", "t" * 64), 2,
                   "is longer than 63 bytes")
    one_error_line("an empty table name", *cli("-d", NOSERVER, "snapshot", "public."), 2,
                   "the table name in 'public.' is empty")
    # diff: a missing file is named as such; one file alone is half a diff.
    one_error_line("diff A missing.json", *cli("-d", NOSERVER, "diff", "/nonexistent/a.json",
                                               "missing.json"), 1,
                   "cannot read /nonexistent/a.json: No such file or directory")
    one_error_line("diff a directory", *cli("-d", NOSERVER, "diff", "/", "/"), 1,
                   "cannot read /: it is a directory")
    one_error_line("diff with one file name", *cli("-d", NOSERVER, "diff", "a.json"), 2,
                   ["diff needs two snapshots", "'a.json' is a file name"])
    one_error_line("diff with one id", *cli("-d", NOSERVER, "diff", "3"), 2,
                   ["diff needs two snapshots", "'3' is a snapshot id"])
    one_error_line("diff with a word that is no file and no id",
                   *cli("-d", NOSERVER, "diff", "penguins", "3"), 2,
                   "'penguins' is neither a snapshot file (there is no such file) nor a stored "
                   "snapshot id")
    # A number that is no id (not a whole number, or 0) is a mistyped id, not a file name.
    for bad in ("1.5", "0", ".5", "2e3"):
        exact_error(f"diff {bad} 2: neither a file nor an id",
                    *cli("-d", NOSERVER, "diff", bad, "2"), 2,
                    f"pgwitness diff: '{bad}' is neither a snapshot file (there is no such "
                    "file) nor a stored snapshot id")
    # decide: files that cannot be read say why.
    one_error_line("decide --deps DIRECTORY", *cli("decide", "--deps", "/", "--write", "w.json"),
                   1, "cannot read /: it is a directory")
    one_error_line("decide --deps MISSING", *cli("decide", "--deps", "/nonexistent/d.json",
                                                 "--write", "w.json"), 1,
                   "cannot read /nonexistent/d.json: No such file or directory")
    # An empty file name is a missing one (not "cannot read : No such file").
    for args in (["--deps=", "--write=w.json"], ["--deps", "", "--write", "w.json"],
                 ["--deps=d.json", "--write="], ["--batch", "--deps="]):
        name = "--deps" if "--deps=" in args or "" in args else "--write"
        exact_error(f"decide {' '.join(args)}: a usage error", *cli("decide", *args), 2,
                    f"pgwitness decide: option {name} needs a value")
    # watch: value columns and channel are names.
    one_error_line("watch --values a,,b", *cli("-d", NOSERVER, "watch", "t", "--values", "a,,b"),
                   2, "--values: column name 2 is empty")
    one_error_line("watch --channel ''", *cli("-d", NOSERVER, "watch", "t", "--channel", ""), 2,
                   "--channel: the channel name is empty")
    # Duplicates are usage errors naming the duplicate.
    exact_error("watch --values v,v", *cli("-d", NOSERVER, "watch", "t1", "--values", "v,w,v"),
                2, 'pgwitness watch: --values: column "v" is named twice')
    exact_error("watch t1 t1", *cli("-d", NOSERVER, "watch", "t1", "t1"), 2,
                "pgwitness watch: table 't1' is named twice")
    exact_error("watch t1 public.t1", *cli("-d", NOSERVER, "watch", "t1", "w2", "public.t1"), 2,
                "pgwitness watch: table public.t1 is named twice (as 't1' and 'public.t1')")
    # announce and ddl-trigger, before connecting.
    exact_error("announce without a table", *cli("-d", NOSERVER, "announce"), 2,
                "pgwitness announce: which tables? (pgwitness announce TABLE...)")
    exact_error("announce t1 t1", *cli("-d", NOSERVER, "announce", "t1", "t1"), 2,
                "pgwitness announce: table 't1' is named twice")
    exact_error("ddl-trigger without install or remove", *cli("-d", NOSERVER, "ddl-trigger"), 2,
                "pgwitness ddl-trigger: install or remove? (pgwitness ddl-trigger "
                "install|remove)")
    exact_error("ddl-trigger drop", *cli("-d", NOSERVER, "ddl-trigger", "drop"), 2,
                "pgwitness ddl-trigger: 'drop' is neither install nor remove (pgwitness "
                "ddl-trigger install|remove)")
    exact_error("ddl-trigger install extra", *cli("-d", NOSERVER, "ddl-trigger", "install",
                                                  "extra"), 2,
                "pgwitness ddl-trigger: unexpected argument 'extra' (pgwitness ddl-trigger "
                "install|remove)")
    # unwatch: the same checks, before connecting.
    exact_error("unwatch without a table", *cli("-d", NOSERVER, "unwatch"), 2,
                "pgwitness unwatch: which tables? (pgwitness unwatch TABLE...)")
    exact_error("unwatch t1 t1", *cli("-d", NOSERVER, "unwatch", "t1", "t1"), 2,
                "pgwitness unwatch: table 't1' is named twice")
    exact_error("unwatch t1 public.t1", *cli("-d", NOSERVER, "unwatch", "t1", "public.t1"), 2,
                "pgwitness unwatch: table public.t1 is named twice (as 't1' and 'public.t1')")
    exact_error("unwatch a.b.c", *cli("-d", NOSERVER, "unwatch", "a.b.c"), 2,
                "pgwitness unwatch: 'a.b.c' is not a table name: 'a.b.c' has more than two "
                "parts (use table or schema.table; quote a name that contains a dot: "
                "'\"my.table\"')")
    exact_error("unwatch --replace (a watch option)", *cli("-d", NOSERVER, "unwatch", "t1",
                                                           "--replace"), 2,
                "pgwitness unwatch: unknown option '--replace' (see pgwitness unwatch --help)")
    exact_error('watch --values with a quote in a name: quoted as PostgreSQL does',
                *cli("-d", NOSERVER, "watch", "t1", "--values", 'a"b,a"b'), 2,
                'pgwitness watch: --values: column "a""b" is named twice')
    stream_usage_errors()
    # -o: a directory is refused before connecting.
    exact_error("snapshot -o DIRECTORY: a usage error before connecting",
                *cli("-d", NOSERVER, "snapshot", "t1", "--store", "-o", "/tmp"), 2,
                "pgwitness snapshot: --output: /tmp is a directory (give the name of a file)")
    one_error_line("watch T1 t1 are two tables: no duplicate (then no server)",
                   *cli("-d", NOSERVER, "watch", "T1", "t1"), 1, "cannot connect to the database")
    # The example programs: the same rules.
    one_error_line("ingest: --table a.b.c is rejected as by pgwitness",
                   *ingest("-d", NOSERVER, "--table", "a.b.c", "x.csv"), 2,
                   "'a.b.c' has more than two parts")
    one_error_line("ingest: --table ''", *ingest("-d", NOSERVER, "--table", "", "x.csv"), 2,
                   "the table name in '' is empty")
    one_error_line("ingest: --table=s.t with --schema", *ingest("-d", NOSERVER, "--table=s.t",
                                                              "--schema", "u", "x.csv"), 2,
                   "give the schema once")
    one_error_line("ingest: --schema ''", *ingest("-d", NOSERVER, "--table", "t", "--schema=",
                                                 "x.csv"), 2, "--schema: the name is empty")
    one_error_line("ingest: --dbname=X", *ingest(f"--dbname={NOSERVER}", "--table=t", "x.csv"), 1,
                   "cannot connect to the database")
    one_error_line("ingest: an option without its value", *ingest("x.csv", "--table"), 2,
                   "option --table needs a value")
    one_error_line("ingest: two files", *ingest("--table", "t", "a.csv", "b.csv"), 2,
                   "one CSV file at a time")
    one_error_line("tasks: --script and --watch together", *tasks("--tenant", "a=dbname=x",
                                                                 "--script", "--watch", "1"), 2,
                   "--script and --watch cannot be combined")
    one_error_line("tasks: a tenant named twice", *tasks("--tenant", "a=dbname=x", "--tenant",
                                                        "a=dbname=y", "--script"), 2,
                   "a tenant is named twice")
    one_error_line("tasks: a tenant name that is no word", *tasks("--tenant", 'a"b=dbname=x',
                                                                 "--script"), 2,
                   "a tenant NAME is 1 to 63 letters, digits, _ or -")
    one_error_line("tasks: --watch without a value", *tasks("--tenant", "a=dbname=x", "--watch"),
                   2, "--watch needs a number of seconds")


def numbers():
    """Strict numbers everywhere: junk, signs, spaces and overflow are usage
    errors (exit 2) found before connecting; nothing runs forever."""
    big = "99999999999999999999999"
    for bad in ["abc", "-1", "+5", " 5", "5x", big, ""]:
        one_error_line(f"tasks --watch {bad!r}", *tasks("--tenant", "acme=dbname=postgres",
                                                        "--watch", bad, timeout=20), 2,
                       f"--watch takes a number of seconds from 0 (until interrupted) to "
                       f"2147483647, not {bad}")
    one_error_line("tasks --watch=abc", *tasks("--tenant=acme=dbname=postgres", "--watch=abc",
                                               timeout=20), 2, "--watch takes a number")
    cases = [
        (["history", "t", "--limit"], "--limit takes a number from 1 to 2147483647"),
        (["baseline", "--limit"], "--limit takes a number of tables from 1 to 10000000"),
        (["baseline", "--batch"], "--batch takes a number from 1 to 10000"),
        (["prune", "--keep"], "--keep takes a positive number"),
        (["watch", "t", "--seconds"], "--seconds takes a number of seconds from 0"),
        (["diff", "1", "2", "--threshold"], "--threshold takes a number from 0 to 1"),
    ]
    for args, needle in cases:
        for bad in ["abc", "-1", "+5", " 5", "5x", big, "0x10", "1e400", "nan"]:
            one_error_line(f"{' '.join(args)} {bad!r}", *cli("-d", NOSERVER, *args, bad), 2,
                           [needle, f"not '{bad}'"])
    one_error_line("--limit=0", *cli("-d", NOSERVER, "history", "t", "--limit=0"), 2,
                   "--limit takes a number from 1 to 2147483647, not '0'")
    one_error_line("--threshold=1.5", *cli("-d", NOSERVER, "diff", "1", "2", "--threshold=1.5"),
                   2, "--threshold takes a number from 0 to 1, not '1.5'")
    # Good numbers still pass parsing (and then fail to connect: exit 1).
    for args in (["history", "t", "--limit=3"], ["diff", "1", "2", "--threshold", "0.75"],
                 ["diff", "1", "2", "--threshold=1e-1"], ["prune", "--keep", "007"]):
        one_error_line(f"good number: {' '.join(args)}", *cli("-d", NOSERVER, *args), 1,
                       "cannot connect")


def real_data(tmp):
    # Real data: the three published formats through the example collector.
    penguins = [os.path.join(DATA, "palmerpenguins", f) for f in
                ("v1_penguins_raw.csv", "v2_penguins_size.csv", "v3_penguins.csv")]
    rc, out, err = ingest("--table", "penguins", penguins[0])
    check("ingest v1", rc == 0 and "loaded 344 rows, 17 columns" in out, out + err)
    rc, out, err = cli("baseline")
    check("baseline captures the live table", rc == 0 and
          "captured 1 of 1 table without a snapshot; none remain" in out, out + err)
    rc, out, err = cli("baseline", "--json")
    check("baseline again does nothing", rc == 0 and json.loads(out)["backlog"] == 0, out + err)
    for f in penguins[1:]:
        rc, out, err = ingest("--table", "penguins", f)
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
    rc, out, err = cli("history", "penguins", "--limit=2", "--json")
    check("history --limit=2", rc == 0 and len(json.loads(out)) == 2, out + err)

    rc, out, err = cli("diff", "2", "3", "--json")
    d = json.loads(out) if rc == 0 else {}
    pairs = {(r["from"], r["to"], r["evidence"]) for r in d.get("renamed_candidates", [])}
    want = {("Culmen Length (mm)", "culmen_length_mm", "both"),
            ("Culmen Depth (mm)", "culmen_depth_mm", "both"),
            ("Flipper Length (mm)", "flipper_length_mm", "both"),
            ("Body Mass (g)", "body_mass_g", "both"), ("Island", "island", "both"),
            ("Sex", "sex", "both"), ("Species", "species", "both")}
    check("diff v1 -> v2 (stored ids): the renames", pairs == want, str(pairs ^ want))
    check("diff older first: no warning", rc == 0 and err == "", err)
    rc, out, err = cli("diff", "3", "2")
    check("diff newer first: made as asked, with a warning that says the order",
          rc == 0 and "renamed" in out and err.strip() ==
          "pgwitness diff: warning: snapshot 3 was captured after snapshot 2; the diff reads "
          "from the first to the second (older first: pgwitness diff 2 3)", out + err)
    check("diff JSON has the documented keys",
          all(k in d for k in ["schema_changed", "added", "removed", "type_changed", "reordered",
                               "rename_method", "renamed_candidates", "profile_changed",
                               "name_anomalies"]) and d.get("format") == 2 and
          d.get("rename_method") == "combined", str(list(d)))
    sp = {r["from"]: r.get("parts") for r in d.get("renamed_candidates", [])}.get("Species")
    check("diff JSON: each rename with its parts (Species: name 1, values 0.72)",
          sp is not None and sp["name"] == 1.0 and sp["values"] == 0.72 and
          sp["profile"] == 0.3 and sp["shape"] == 1.0 and sp["type"] == 1.0, str(sp))
    rc, out, err = cli("diff", "penguins")
    check("diff TABLE: its two newest (v3 live vs v2)", rc == 0 and
          "culmen_length_mm  ->  bill_length_mm" in out and "added (1)" in out and
          "year  integer" in out and "schema_hash changed" in out, out + err)

    rc, out, err = cli("report")
    check("report: both format changes, renames from values",
          rc == 0 and "4 snapshots of 1 resource, 3 consecutive pairs, 2 changed shape (67%)" in out
          and "classes: unchanged 1, mixed 2" in out
          and "culmen_length_mm -> bill_length_mm  (0.80, values and name)" in out
          and "values of sex changed form under the same name" in out, out + err)
    rc, out, err = cli("report", "--json")
    check("report --json", rc == 0 and json.loads(out)["changed_pairs"] == 2, err)

    # A stored document that does not decode (a newer format) is left out of
    # history and report with a warning naming it; the rest still shows.
    oldest = psql("SELECT min(id) FROM pgwitness.snapshots")
    psql("UPDATE pgwitness.snapshots SET snapshot = jsonb_set(snapshot, '{format}', '7') "
         f"WHERE id = {oldest}")
    # "stored snapshot N left out: REASON", the reason the library's text
    # (its end, where the JSON path is, is the library's to word).
    warn = f"warning: stored snapshot {oldest} left out: snapshot format 7"
    rc, out, err = cli("report")
    check("report leaves out an undecodable stored snapshot, with a warning",
          rc == 0 and "3 snapshots of 1 resource, 2 consecutive pairs" in out and
          err.startswith("pgwitness report: " + warn) and err.rstrip().endswith("(at $.format)")
          and "does not decode" not in err and err.count("\n") == 1, out + err)
    rc, out, err = cli("history", "penguins", "--json")
    check("history leaves it out too, with the warning",
          rc == 0 and len(json.loads(out)) == 3 and
          err.startswith("pgwitness history: " + warn), out + err)
    psql("UPDATE pgwitness.snapshots SET snapshot = jsonb_set(snapshot, '{format}', '1') "
         f"WHERE id = {oldest}")
    # A reason whose message names its JSON path already: the path once.
    psql("UPDATE pgwitness.snapshots SET snapshot = jsonb_set(snapshot, "
         f"'{{columns,0,position}}', '99') WHERE id = {oldest}")
    rc, out, err = cli("report")
    check("report's warning names the JSON path once",
          rc == 0 and f"warning: stored snapshot {oldest} left out: " in err and
          err.count("$.columns[0].position") == 1, out + err)
    psql("UPDATE pgwitness.snapshots SET snapshot = jsonb_set(snapshot, "
         f"'{{columns,0,position}}', '1') WHERE id = {oldest}")
    rc, out, err = cli("report")
    check("report: restored", rc == 0 and err == "" and "4 snapshots of 1 resource" in out, out + err)
    # diff TABLE compares the two newest: when one does not decode, the
    # error says how to compare two others.
    newest = psql("SELECT max(id) FROM pgwitness.snapshots")
    psql("UPDATE pgwitness.snapshots SET snapshot = jsonb_set(snapshot, '{format}', '7') "
         f"WHERE id = {newest}")
    rc, out, err = cli("diff", "penguins")
    check("diff TABLE with an undecodable newest snapshot: one line with the way out",
          rc == 1 and out == "" and err.count("\n") == 1 and
          err.startswith("pgwitness diff: ") and "snapshot format 7" in err and
          "(at $.format)" in err and err.rstrip().endswith(
              "; to compare two others: pgwitness diff ID ID (pgwitness history penguins "
              "lists them)"), out + err)
    psql("UPDATE pgwitness.snapshots SET snapshot = jsonb_set(snapshot, '{format}', '1') "
         f"WHERE id = {newest}")
    rc, out, err = cli("diff", "penguins")
    check("diff TABLE: restored", rc == 0 and err == "", out + err)


def diffs(tmp):
    v3 = os.path.join(tmp, "v3.json")
    # A file diff needs no database at all.
    with open(os.path.join(tmp, "bad.json"), "w") as f:
        f.write('{"format": 1, "schema": ')
    rc, out, err = cli("-d", NOSERVER, "diff", v3, v3, "--json")
    check("file diff works without a server", rc == 0 and
          json.loads(out)["class"] == "unchanged", out + err)
    one_error_line("malformed snapshot file", *cli("diff", os.path.join(tmp, "bad.json"), v3), 1,
                   "bad.json is not a pgwitness snapshot: invalid JSON")
    one_error_line("missing snapshot id", *cli("diff", "1", "999"), 1,
                   "no stored snapshot with id 999")
    one_error_line("diff FILE MISSING-FILE", *cli("diff", v3, os.path.join(tmp, "nofile.json")),
                   1, f"cannot read {tmp}/nofile.json: No such file or directory")
    one_error_line("diff with one existing file", *cli("-d", NOSERVER, "diff", v3), 2,
                   ["diff needs two snapshots", "is a file"])
    # schema_changed compares the stored schema hashes, kept as written: with
    # the same hash and other columns the CLI must not claim the same names.
    with open(v3) as f:
        doc = json.load(f)
    doc["columns"][0]["name"] = "renamed_" + doc["columns"][0]["name"]
    other = os.path.join(tmp, "same_hash_other_columns.json")
    with open(other, "w") as f:
        json.dump(doc, f)
    rc, out, err = cli("-d", NOSERVER, "diff", v3, other)
    check("diff with equal stored hashes: 'schema_hash unchanged', no claim of same names",
          rc == 0 and "schema_hash unchanged" in out and "same column names" not in out and
          "renamed (1)" in out, out + err)
    # diff --help names every key of the document --json prints, and each
    # rename's.
    rc, out, err = cli("-d", NOSERVER, "diff", v3, other, "--json")
    d = json.loads(out) if rc == 0 else {}
    keys = list(d) + [k for r in d.get("renamed_candidates", []) for k in r]
    rc, helptext, err = cli("diff", "--help")
    flat = " ".join(helptext.split())
    missing = [k for k in keys if not re.search(r"\b" + re.escape(k) + r"\b", flat)]
    check("diff --help lists the --json keys (format, rename_method, parts, ...)",
          rc == 0 and "parts" in keys and "format" in keys and not missing,
          f"missing {missing} of {keys}")
    # A diff document given as a snapshot is named for what it is.
    diff_doc = os.path.join(tmp, "diff2.json")
    with open(diff_doc, "w") as f:
        f.write(out)
    exact_error("diff DIFF-DOCUMENT FILE: a diff document, not a snapshot",
                *cli("-d", NOSERVER, "diff", diff_doc, v3), 1,
                f"pgwitness diff: {diff_doc} is a diff document, not a snapshot (diff takes "
                "two snapshot files or ids)")
    exact_error("diff FILE DIFF-DOCUMENT (standard input)",
                *cli("-d", NOSERVER, "diff", v3, "-", stdin=out), 1,
                "pgwitness diff: standard input is a diff document, not a snapshot (diff takes "
                "two snapshot files or ids)")


def failures_change_nothing():
    before = counts()
    one_error_line("snapshot of a missing table", *cli("snapshot", "no_such_table", "--store"), 1,
                   ["no table public.no_such_table", "names are taken as written"])
    one_error_line("history under a schema that is not installed",
                   *cli("--schema", "nope", "history", "penguins"), 1, "not installed")
    one_error_line("drop with a reason the snapshot would refuse",
                   *cli("drop", "penguins", "--reason", "x" * 201), 2, "--reason is 201 bytes")
    check("failed commands changed nothing", counts() == before, f"{before} -> {counts()}")


def names_and_drop():
    # Names are taken as written: no lowercasing, no quoting needed for
    # capitals or spaces; the hint says so and names a near miss.
    psql('CREATE TABLE t1 (a int); CREATE TABLE "Mixed Case" (a int); '
         'CREATE TABLE "dot.ted" (a int)')
    rc, out, err = cli("snapshot", "Mixed Case")
    check("snapshot 'Mixed Case' needs no quotes", rc == 0 and
          out.startswith("public.Mixed Case (oid"), out + err)
    rc, out, err = cli("snapshot", 'public."dot.ted"')
    check("snapshot a quoted name with a dot", rc == 0 and out.startswith("public.dot.ted (oid"),
          out + err)
    rc, out, err = cli("snapshot", "T1")
    one_error_line("snapshot T1 when t1 exists: the real rule and the near miss", rc, out, err, 1,
                   ["no table public.T1 in this database (names are taken as written, nothing "
                    "is lowercased: did you mean public.t1?)"])
    check("the old misleading hint is gone", "quote capitals" not in err, err)
    rc, out, err = cli("snapshot", "t1")
    check("1 column, singular", rc == 0 and "  1 column, never analysed" in out, out + err)

    # The funnel from the CLI, then prune.
    psql("CREATE TABLE scratch (a int)")
    rc, out, err = cli("drop", "scratch", "--reason", "raw_orphan_cleanup")
    check("drop through the funnel", rc == 0 and "dropped public.scratch; snapshot 5 taken first"
          in out and err == "", out + err)
    audits = psql("SELECT count(*) FROM pgwitness.drop_audit")
    # A pgwitness schema that is not installed (a typo): the drop would
    # keep no evidence, so it is refused and the table stays.
    psql("CREATE TABLE victim (a int)")
    exact_error("drop with --pgw-schema not installed: refused, the table stays",
                *cli("--pgw-schema", "typo", "drop", "victim", "--reason", "manual"), 1,
                "pgwitness drop: pgwitness is not installed in schema \"typo\": run `pgwitness "
                "--pgw-schema typo install` first, or give --no-snapshot to drop the table "
                "without a snapshot; nothing was dropped")
    check("... the table is still there", psql("SELECT count(*) FROM pg_class WHERE relname = "
                                               "'victim'") == "1")
    rc, out, err = cli("--pgw-schema", "typo", "drop", "victim", "--reason", "manual",
                       "--no-snapshot")
    check("... with --no-snapshot it is dropped (no audit row either: said)",
          rc == 0 and out.startswith("dropped public.victim; no snapshot: ") and
          psql("SELECT count(*) FROM pg_class WHERE relname = 'victim'") == "0", out + err)
    rc, out, err = cli("drop", "scratch", "--reason", "raw_orphan_cleanup")
    check("drop of a missing table: said on stdout and stderr, audited, exit 0",
          rc == 0 and out.startswith("no table public.scratch existed: nothing was dropped, no "
                                     "snapshot taken\n") and
          "records the attempt" in out and
          err == "pgwitness drop: warning: there is no table public.scratch: nothing was "
          "dropped\n" and
          psql("SELECT count(*) FROM pgwitness.drop_audit") == str(int(audits) + 1), out + err)
    rc, out, err = cli("drop", "scratch", "--reason", "manual", "--json")
    check("drop --json of a missing table: dropped false, the warning on stderr",
          rc == 0 and json.loads(out)["dropped"] is False and "warning" in err, out + err)
    rc, out, err = cli("prune", "--keep", "1", "--json")
    check("prune keeps both sides of every change", rc == 0 and json.loads(out) ==
          {"removed": 1, "resources": 1, "kept": 4}, out + err)


def ingest_reloads(tmp):
    """The collector's usual case: the same header again."""
    v2 = os.path.join(DATA, "palmerpenguins", "v2_penguins_size.csv")
    rc, out, err = ingest("--table", "same2", v2)
    check("ingest a new table", rc == 0 and "  new table" in out, out + err)
    rc, out, err = ingest("--table=same2", v2)
    check("ingest the same header again: emptied and refilled, the existing types",
          rc == 0 and out == "public.same2: loaded 344 rows, 7 columns "
          "(text,text,numeric,numeric,integer,integer,text)\n"
          "  same header: table emptied and refilled\n" and err == "", out + err)
    # A value that no longer fits its column's type: named, nothing changed.
    lines = open(v2).read().split("\n")
    lines[1] = lines[1].replace("39.1", "abc", 1)
    bad = os.path.join(tmp, "v2_bad_value.csv")
    with open(bad, "w") as f:
        f.write("\n".join(lines))
    before = psql("SELECT count(*), sum(culmen_length_mm) FROM same2")
    one_error_line("ingest a value that no longer fits: the column named", *ingest(
        "--table", "same2", bad), 1,
        ['column "culmen_length_mm" of public.same2 is numeric',
         'invalid input syntax for type numeric: "abc"', "nothing was changed"])
    check("... and the table is as it was", psql(
        "SELECT count(*), sum(culmen_length_mm) FROM same2") == before, before)
    one_tiny = os.path.join(tmp, "one.csv")
    with open(one_tiny, "w") as f:
        f.write("n\n7\n")
    exact_error("ingest > /dev/full: exit 1, one line", *ingest("--table", "tiny0", one_tiny,
                                                               stdout="/dev/full"), 1,
                "pgwitness-ingest: " + FULL)
    rc, out, err = ingest("--table", "tiny", one_tiny)
    check("1 row, 1 column, singular", rc == 0 and
          out.startswith("public.tiny: loaded 1 row, 1 column (integer)\n"), out + err)
    # Names that need the most quoting: 63 double quotes (126 bytes quoted),
    # capitals and spaces; loaded twice (created, then refilled with casts).
    odd = os.path.join(tmp, "odd_names.csv")
    with open(odd, "w") as f:
        f.write('"' + '""' * 63 + '",Mixed Case,"a,b"\n1,2.5,x\n3,,y\n')
    outs = [ingest("--table", "odd", odd) for _ in range(2)]
    check("ingest names needing the most quoting, twice", [o[0] for o in outs] == [0, 0] and
          "loaded 2 rows, 3 columns (integer,numeric,text)" in outs[0][1] and
          "same header" in outs[1][1] and
          psql('SELECT count(*) FROM odd WHERE "Mixed Case" = 2.5 AND "a,b" = \'x\' AND "'
               + '""' * 63 + '" = 1') == "1", str(outs))
    rc, out, err = ingest("--table", '"dot.ted.csv"', one_tiny)
    check("ingest --table with a quoted dotted name", rc == 0 and
          out.startswith("public.dot.ted.csv: loaded 1 row") and
          psql("SELECT count(*) FROM \"dot.ted.csv\"") == "1", out + err)


def ingest_bad_input(tmp):
    """Bad files and headers: one clear line, exit 1, no table created."""
    def write(name, data):
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    tables = psql("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
    cases = [
        ("invalid UTF-8 in the header", write("bad.csv", b"\xff\xfe,b\n1,2\n"),
         "bad.csv: the header (first line) is not valid UTF-8"),
        ("a NUL byte in the header", write("nul.csv", b"a\x00,b\n1,2\n"),
         "nul.csv: the header (first line) contains a NUL byte"),
        # PostgreSQL would refuse the table: column specified more than once.
        ("two names the same once cut to 63 bytes",
         write("long.csv", b"n," + b"x" * 63 + b"a," + b"x" * 63 + b"b\n1,2,3\n"),
         "long.csv: columns 2 and 3 of the header have the same name once cut to PostgreSQL's "
         'limit of 63 bytes ("' + "x" * 63 + '"), as PostgreSQL would truncate them'),
        ("an unterminated quote", write("q.csv", b'"a,b\n1,2\n'),
         "q.csv: the header (first line) has an unterminated quote in column 1 (opened on "
         "line 1, it runs to the end of the file)"),
        ("a header after blank lines, with an unterminated quote",
         write("q3.csv", b'\n \r\n"a,b\n1,2\n'),
         "q3.csv: the header (line 3) has an unterminated quote in column 1"),
        ("an unterminated quote in a row", write("qr.csv", b'a,b\n1,2\n3,"x\n4,5\n'),
         "qr.csv: line 3 has an unterminated quote in column 2 (opened on line 3, it runs to "
         "the end of the file); nothing was loaded"),
        # pandas: "Expected 2 fields in line 4, saw 3"; nothing is dropped.
        ("a row longer than the header", write("wide.csv", b"a,b\n1,2\n\n3,4,5\n6,7\n"),
         "wide.csv: line 4 has 3 fields, more than the 2 columns of the header; nothing was "
         "loaded"),
        ("a row that is not UTF-8", write("u8.csv", b"a,b\n1,x\n2,\xff\n"),
         "u8.csv: line 3 is not valid UTF-8 (column 2); nothing was loaded"),
        ("a NUL byte in a row", write("nulrow.csv", b"a,b\n1,x\x00y\n"),
         "nulrow.csv: line 2 contains a NUL byte (column 2); nothing was loaded"),
        ("an empty file", write("empty.csv", b""),
         "empty.csv is empty: its first line must be the CSV header"),
        ("only blank lines", write("blank.csv", b"\n  \r\n\t\n"),
         "blank.csv has only blank lines: its first line that is not blank must be the CSV "
         "header"),
        ("a directory", tmp, f"cannot read {tmp}: it is a directory"),
        ("a missing file", os.path.join(tmp, "missing.csv"),
         f"cannot read {tmp}/missing.csv: No such file or directory"),
    ]
    for name, path, needle in cases:
        one_error_line(f"ingest: {name}", *ingest("--table", "p", path), 1, needle)
    check("ingest: no table was created by the bad files", psql(
        "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == tables, tables)


def ingest_as_pandas_reads(tmp):
    """Real published files, read as pandas.read_csv() reads them by
    default: blank lines, a BOM, CRLF, quoting, empty and repeated header
    names, trailing empty columns, short rows and pandas' missing values."""
    def load(name, data, table):
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        rc, out, err = ingest("--table", table, path)
        rows = json.loads(psql(f"SELECT coalesce(json_agg(t), '[]') FROM {table} t") or "null")
        types = psql("SELECT string_agg(format('%s %s', attname, format_type(atttypid, "
                     f"atttypmod)), ',' ORDER BY attnum) FROM pg_attribute WHERE attrelid = "
                     f"'{table}'::regclass AND attnum > 0")
        return rc, out, err, rows, types

    # The issue's case: a blank line after the header (COPY said "missing
    # data for column").
    rc, out, err, rows, types = load("blank_after_header.csv", b"a,b\n\n1,x\n2,y\n", "blank1")
    check("ingest: a blank line after the header is skipped",
          rc == 0 and out.startswith("public.blank1: loaded 2 rows, 2 columns (integer,text)\n")
          and rows == [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}], (rc, out, err, rows))

    data = (b'\xef\xbb\xbf"id",name,,score,name,\r\n'
            b"\r\n"
            b'1,"Smith, J.",x,1.5,"a ""b""",\r\n'
            b"   \r\n"
            b'2,"two\r\n\r\nlines",NA,N/A,NULL\r\n'
            b"3,,nan,-NaN\r\n"
            b"\r\n"
            b'4,null,#N/A,"NA",None,<NA>')
    rc, out, err, rows, types = load("published.csv", data, "published")
    check("ingest a file as pandas reads it: BOM, CRLF, blank lines, quotes, Unnamed and "
          "mangled names, short rows, missing values",
          rc == 0 and out == "public.published: loaded 4 rows, 6 columns "
          "(integer,text,text,numeric,text,text)\n  new table\n" and err == "" and
          types == "id integer,name text,Unnamed: 2 text,score numeric,name.1 text,"
          "Unnamed: 5 text" and
          rows == [{"id": 1, "name": "Smith, J.", "Unnamed: 2": "x", "score": 1.5,
                    "name.1": 'a "b"', "Unnamed: 5": None},
                   {"id": 2, "name": "two\r\n\r\nlines", "Unnamed: 2": None, "score": None,
                    "name.1": None, "Unnamed: 5": None},
                   {"id": 3, "name": None, "Unnamed: 2": None, "score": None,
                    "name.1": None, "Unnamed: 5": None},
                   {"id": 4, "name": None, "Unnamed: 2": None, "score": None,
                    "name.1": None, "Unnamed: 5": None}], (rc, out, err, types, rows))
    # The same file again: the same header, so the table is refilled.
    rc, out, err = ingest("--table", "published", os.path.join(tmp, "published.csv"))
    check("... and again: the same header (the names pandas gives), emptied and refilled",
          rc == 0 and "  same header: table emptied and refilled\n" in out and
          psql("SELECT count(*) FROM published") == "4", out + err)

    # Names over 63 bytes are cut as PostgreSQL cuts an identifier: to 63
    # bytes on a character boundary (80 bytes of e-acute: 31 characters, 62
    # bytes); a repeat's pandas name ("x"*62 + ".1") is cut after its dot.
    # FiveThirtyEight's bad-drivers file has six such names.
    data = ("short," + "L" * 70 + "," + "\u00e9" * 40 + "," + "x" * 62 + "," + "x" * 62
            + "\n1,2,3,4,5\n").encode()
    rc, out, err, rows, types = load("long_names.csv", data, "longnames")
    check("ingest: names over 63 bytes are cut to 63 as PostgreSQL cuts them, and said",
          rc == 0 and out == "public.longnames: loaded 1 row, 5 columns "
          "(integer,integer,integer,integer,integer)\n  3 column names longer than 63 bytes "
          "cut to 63, as PostgreSQL truncates them\n  new table\n" and err == "" and
          types == "short integer," + "L" * 63 + " integer," + "\u00e9" * 31 + " integer,"
          + "x" * 62 + " integer," + "x" * 62 + ". integer", (rc, out, err, types))
    rc, out, err = ingest("--table", "longnames", os.path.join(tmp, "long_names.csv"))
    check("... and again: the same (cut) header, emptied and refilled",
          rc == 0 and "  same header: table emptied and refilled\n" in out, out + err)


def watch_and_decide(tmp):
    """watch: triggers and a listener; its JSON lines feed decide --batch."""
    psql("CREATE TABLE tasks (id int PRIMARY KEY, title text, status text, updated_at int)")
    deps = os.path.join(FIXTURES, "tasks_open.deps.json")
    # Unknown value columns are refused before any trigger is installed:
    # a usage error (exit 2, help: --values) naming the column and the table.
    exact_error("watch --values nosuchcol", *cli("watch", "tasks", "--values",
                                                 "status,nosuchcol", "--seconds", "1"), 2,
                'pgwitness watch: --values: "nosuchcol" is not a column of public.tasks '
                '(names are taken as written)')
    check("... and no trigger was installed",
          psql("SELECT count(*) FROM pg_trigger WHERE tgrelid = 'tasks'::regclass") == "0")
    # A table that does not exist is named as such, not its columns.
    exact_error("watch nope --values status: no table (exit 1), not a missing column",
                *cli("watch", "nope", "--values", "status", "--seconds", "1"), 1,
                "pgwitness watch: cannot watch public.nope: no table public.nope")
    exact_error("watch tasks nope --values nosuchcol: no table public.nope",
                *cli("watch", "tasks", "nope", "--values", "nosuchcol", "--seconds", "1"), 1,
                "pgwitness watch: cannot watch public.nope: no table public.nope (no trigger "
                "was changed)")
    # A comma in TABLE (a guess at a list, or at a table and its columns):
    # the real syntax.
    exact_error("watch tasks,status: the syntax of tables and value columns",
                *cli("watch", "tasks,status", "--seconds", "1"), 1,
                "pgwitness watch: cannot watch public.tasks,status: no table "
                "public.tasks,status (a comma is part of a table name: give each table as an "
                "argument of its own, and value columns with --values COL,...; rows are "
                "identified by the primary key)")
    exact_error("watch tasks,status --source=wal: the same",
                *cli("watch", "tasks,status", "--source=wal", "--seconds", "1"), 1,
                "pgwitness watch: cannot watch public.tasks,status: no table "
                "public.tasks,status (a comma is part of a table name: give each table as an "
                "argument of its own, and value columns with --values COL,...; rows are "
                "identified by the primary key)")
    exact_error("unwatch tasks,t1: the same, without --values",
                *cli("unwatch", "tasks,t1"), 1,
                "pgwitness unwatch: cannot unwatch public.tasks,t1: no table public.tasks,t1 "
                "(a comma is part of a table name: give each table as an argument of its own)")
    check("... no trigger was installed",
          psql("SELECT count(*) FROM pg_trigger WHERE tgrelid = 'tasks'::regclass") == "0")
    rc, out, err = cli("watch", "--help")
    check("watch --help names the working pipeline",
          "pgwitness decide --batch --deps FILE" in out and
          "one JSON object per line" in out, out)

    scope = ["--project", "p1", "--tenant", "acme", "--database", "app"]
    w = popen([CLI, "watch", "tasks", "--json", "--values", "status"] + scope)
    listening = wait_listening()
    psql("INSERT INTO tasks VALUES (17, 'a', 'open', 1), (42, 'b', 'open', 2)")
    psql("UPDATE tasks SET status = 'closed', updated_at = 3 WHERE id = 17")
    psql("UPDATE tasks SET notes_free = 1 WHERE false")  # fails: no such column, sends nothing
    psql("UPDATE tasks SET title = 'c' WHERE id = 42")
    got = read_lines(w, 4, 10).decode()
    rc, rest, werr = stop(w)
    wout = got + rest
    try:
        lines = [json.loads(l) for l in wout.splitlines()]
    except ValueError:
        lines = []
    check("watch: a scope reset first, then one write set per statement",
          listening and rc == 0 and
          [l["op"] for l in lines] == ["reset", "insert", "update", "update"] and
          lines[1]["ids"] == ["17", "42"] and lines[2]["columns"] == ["status", "updated_at"] and
          lines[2]["old"] == [{"status": "open"}] and lines[2]["new"] == [{"status": "closed"}] and
          lines[3]["columns"] == ["title"] and
          all(l["scope"] == {"project": "p1", "tenant": "acme", "database": "app"} for l in lines),
          f"rc={rc}\n{wout}{werr}")
    check("watch: status lines on stderr; the reset is not counted as a write set",
          "listening" in werr and "3 write sets seen, 1 scope reset\n" in werr, werr)
    # A listener's backend terminated: watch reconnects and says what the
    # reset that follows means.
    w = popen([CLI, "watch", "tasks", "--values", "status"])
    first = read_lines(w, 1, 20).decode() == RESET_LINE
    psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = "
         "current_database() AND query = 'LISTEN \"pgwitness\"'")
    again = read_lines(w, 1, 20).decode() == RESET_LINE
    rc, rest, werr = stop(w)
    check("watch: listening again after its backend is terminated, a scope reset, said so",
          first and again and rc == 0 and
          "pgwitness watch: listening again (reconnected; scope reset: the writes in between "
          "were not seen, so every subscription refreshes)\n" in werr and
          "0 write sets seen, 2 scope resets\n" in werr, werr)
    # A bare write-set line without --deps: the error says what to add.
    rc, out, err = cli("decide", "--batch", stdin=json.dumps(lines[1] if lines else {"op": 1}))
    check("decide --batch with watch's line alone: the error says --deps FILE",
          rc == 1 and "give the subscription with --deps FILE" in out, out + err)

    # The documented pipeline, as a real pipe: watch --json | decide --batch --deps FILE.
    psql("DELETE FROM tasks")
    w = popen([CLI, "watch", "tasks", "--json", "--values", "status"] + scope)
    d = popen([CLI, "decide", "--batch", "--deps", deps], stdin=w.stdout)
    w.stdout.close()  # decide holds the pipe now: it sees EOF when watch ends
    listening = wait_listening()
    psql("INSERT INTO tasks VALUES (17, 'a', 'open', 1), (42, 'b', 'open', 2)")
    psql("UPDATE tasks SET status = 'closed', updated_at = 3 WHERE id = 17")
    psql("UPDATE tasks SET notes = NULL WHERE false")  # fails: sends nothing
    psql("UPDATE tasks SET title = 'c' WHERE id = 42")
    got = read_lines(d, 4, 10).decode()
    wrc, _, werr = stop(w)
    try:
        drest, derr = d.communicate(timeout=30 * SLOW)
    except subprocess.TimeoutExpired:
        d.kill()
        drest, derr = d.communicate()
    out = got + drest.decode()
    try:
        verdicts = [json.loads(l) for l in out.splitlines()]
    except ValueError:
        verdicts = []
    check("pgwitness watch --json | pgwitness decide --batch --deps FILE: the verdicts",
          listening and wrc == 0 and d.returncode == 0 and verdicts == [
              {"verdict": "refresh", "reason": "SCOPE_RESET"},
              {"verdict": "refresh", "reason": "INSERT_MAY_ENTER"},
              {"verdict": "refresh", "reason": "ROW_IN_RESULT"},
              {"verdict": "refresh", "reason": "ROW_IN_RESULT"}],
          f"watch rc={wrc} {werr}\ndecide rc={d.returncode} {out}{derr.decode()}")
    one_error_line("watch a missing table", *cli("watch", "no_such_table", "--seconds", "1"), 1,
                   "cannot watch public.no_such_table")
    rc, out, err = cli("watch", "tasks", "t1", "--values", "status", "--seconds", "1")
    check("watch two tables, a value column of one: a note for the other, not an error",
          rc == 0 and 'note: public.t1 has no column "status"' in err, out + err)
    rc, out, err = cli("watch", "tasks", "--seconds=1", "--json", "--values", "status")
    check("watch --seconds=1 stops by itself", rc == 0 and '"op":"reset"' in out.replace(" ", ""),
          out + err)
    # The test cluster allows prepared transactions: one warning line, exit 0.
    warning = ("pgwitness watch: warning: max_prepared_transactions is 10: writers of watched "
               "tables cannot use PREPARE TRANSACTION (a NOTIFY cannot be prepared); use "
               "--source=wal for two-phase commit\n")
    check("watch warns once that writers cannot prepare transactions", rc == 0 and
          err.count(warning) == 1 and err.startswith(warning), err)
    always = ("SELECT count(*) FROM pg_trigger WHERE tgrelid = 'tasks'::regclass AND tgname "
              "LIKE 'pgwitness%' AND tgenabled = 'A'")
    # Another firing mode than the installed one counts like another
    # channel: refused, nothing changed, unless --replace.
    mode_refused = ('pgwitness watch: public.tasks is already watched on channel "pgwitness" '
                    'with value column "status", %s (asked: channel "pgwitness" with value '
                    'column "status", %s): no trigger was changed; watch it with the same '
                    "--channel and --values and %s --enable-always, or give --replace to "
                    "replace its triggers (whoever relies on them then misses writes or "
                    "values)")
    exact_error("watch --enable-always over plain triggers: refused",
                *cli("watch", "tasks", "--seconds=1", "--values", "status", "--enable-always"),
                1, mode_refused % ("plain ENABLE", "ENABLE ALWAYS", "without"))
    check("... and the triggers are still plain ENABLE", psql(always) == "0", psql(always))
    rc, out, err = cli("watch", "tasks", "--seconds=1", "--values", "status", "--enable-always",
                       "--replace")
    check("watch --enable-always --replace: the triggers fire ALWAYS", rc == 0 and
          psql(always) == "4" and err.count(warning) == 1, out + err)
    w = popen([CLI, "watch", "tasks", "--json", "--values", "status", "--enable-always"])
    listening = wait_listening()
    psql("SET session_replication_role = replica; INSERT INTO tasks VALUES (99, 'r', 'open', 9)")
    got = read_lines(w, 2, 10).decode()
    rc, rest, werr = stop(w)
    try:
        lines = [json.loads(l) for l in (got + rest).splitlines()]
    except ValueError:
        lines = []
    check("watch --enable-always: a write under session_replication_role = replica arrives",
          listening and rc == 0 and [l["op"] for l in lines] == ["reset", "insert"] and
          lines[1]["ids"] == ["99"] and lines[1]["new"] == [{"status": "open"}],
          f"rc={rc}\n{got}{rest}{werr}")
    # Without --enable-always, another host's ALWAYS triggers are kept:
    # turning them plain would silence them under session_replication_role
    # = replica.
    exact_error("watch without --enable-always over ALWAYS triggers: refused, naming both modes",
                *cli("watch", "tasks", "--seconds=1", "--values", "status"), 1,
                mode_refused % ("ENABLE ALWAYS", "plain ENABLE", "with"))
    check("... and the triggers still fire ALWAYS", psql(always) == "4", psql(always))
    rc, out, err = cli("watch", "tasks", "--seconds=1", "--values", "status", "--replace")
    check("watch without --enable-always --replace: plain ENABLE again",
          rc == 0 and psql(always) == "0", out + err)
    # A disabled trigger is no host's choice: watching enables it, unasked.
    psql("ALTER TABLE tasks DISABLE TRIGGER USER")
    rc, out, err = cli("watch", "tasks", "--seconds=1", "--values", "status")
    check("watch over disabled triggers: enabled again, without --replace",
          rc == 0 and psql("SELECT count(*) FROM pg_trigger WHERE tgrelid = 'tasks'::regclass "
                           "AND tgname LIKE 'pgwitness%' AND tgenabled = 'O'") == "4",
          out + err)


def decide_files(tmp):
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
    rc, out, err = cli("decide", "--batch", "--deps", deps, stdin=json.dumps(w_obj) + "\n")
    check("decide --batch --deps FILE: write-set lines", rc == 0 and
          json.loads(out) == {"verdict": "refresh", "reason": "ROW_IN_RESULT"}, out + err)
    one_error_line("decide --batch --deps with a malformed subscription",
                   *cli("decide", "--batch", "--deps",
                        os.path.join(FIXTURES, "close_17.write.json"), stdin=""), 1,
                   "close_17.write.json: ")
    one_error_line("decide --batch --write", *cli("decide", "--batch", "--write", deps), 2,
                   "--batch reads the writes from stdin: no --write")
    # A NUL byte is named as such, not as an early end of the JSON text.
    rc, out, err = cli("decide", "--batch", stdin='{"deps": {}, \0"write": {}}\n')
    check("decide --batch: a line with a NUL byte says so", rc == 1 and
          out == '{"error":"not JSON: the line contains a NUL byte (byte 14)","line":1}\n' and
          err == "pgwitness decide: 1 of 1 line could not be decided\n", out + err)
    # --payload: a notification payload as the triggers send it, decided in
    # the subscription's scope; one that is not faithful is decided as the
    # listener would, with a note on stderr.
    pay = os.path.join(tmp, "payload.json")
    in_result = json.dumps({"version": 1, "schema": "public", "table": "tasks", "op": "update",
                            "ids": ["17"], "columns": ["status"]})
    unread = json.dumps({"version": 1, "schema": "public", "table": "tasks", "op": "update",
                         "ids": ["99"], "columns": ["notes"]})
    version2 = json.dumps({"version": 2, "schema": "public", "table": "tasks", "op": "update"})
    # The byte budget is 7999: a file's trailing newline is not part of the
    # payload; a longer payload is a fallback, as in the listener.
    pad = lambda size: in_result + " " * (size - len(in_result))
    for name, payload, out_want, note in [
            ("a row in the result", in_result, "refresh (ROW_IN_RESULT)", None),
            ("unread columns", unread, "skip (COLUMNS_DISJOINT)", None),
            ("another version", version2, "refresh (WRITE_UNKNOWN)",
             "($.version: payload version 2 is not 1): decided as the listener would, as an "
             "unknown write to its table"),
            ("7999 bytes and a newline", pad(7999) + "\n", "refresh (ROW_IN_RESULT)", None),
            ("8000 bytes", pad(8000), "refresh (WRITE_UNKNOWN)",
             "($: payload of 8000 bytes exceeds 7999 bytes): decided as the listener would, as "
             "an unknown write to its table"),
            ("not JSON", "garbage", "refresh (SCOPE_RESET)",
             "(invalid JSON at line 1 column 7: invalid token near 'garbage'): decided as the "
             "listener would, as a scope reset")]:
        with open(pay, "w") as f:
            f.write(payload)
        rc, out, err = cli("decide", "--deps", deps, "--payload", pay)
        want_err = "" if note is None else \
            f"pgwitness decide: note: {pay} is not a faithful payload {note}\n"
        check(f"decide --payload: {name}", rc == 0 and out.startswith(out_want + ": ") and
              err == want_err, f"rc={rc} stdout={out!r} stderr={err!r}")
    rc, out, err = cli("decide", "--deps", deps, "--payload", pay, "--json")
    check("decide --payload --json", rc == 0 and
          json.loads(out) == {"verdict": "refresh", "reason": "SCOPE_RESET"}, out + err)
    exact_error("decide --payload and --write", *cli("decide", "--deps", deps, "--payload", pay,
                                                      "--write", pay), 2,
                "pgwitness decide: give --write FILE or --payload FILE, not both")
    exact_error("decide --batch --payload", *cli("decide", "--batch", "--payload", pay), 2,
                "pgwitness decide: --batch reads the writes from stdin: no --payload")
    exact_error("decide --deps - (empty): standard input is named",
                *cli("decide", "--deps", "-", "--payload", pay, stdin=""), 1,
                "pgwitness decide: standard input: invalid JSON: the text is empty")
    os.unlink(pay)
    # An empty file and a file with a NUL byte are named as such (not as
    # "unexpected token near end of file").
    empty, nul = os.path.join(tmp, "empty.json"), os.path.join(tmp, "nul.json")
    with open(empty, "w"):
        pass
    with open(deps, "rb") as f, open(nul, "wb") as g:
        g.write(f.read().rstrip() + b"\0trailing")
    size = os.path.getsize(nul)
    exact_error("decide --deps EMPTY", *cli("decide", "--deps", empty, "--write", deps), 1,
                f"pgwitness decide: {empty}: invalid JSON: the text is empty")
    exact_error("decide --deps FILE-WITH-NUL",
                *cli("decide", "--deps", nul, "--write", deps), 1,
                f"pgwitness decide: {nul}: invalid JSON: the text contains a NUL byte "
                f"(byte {size - 8} of {size})")
    os.unlink(empty)
    os.unlink(nul)
    decide_limits(tmp, deps)
    decide_batch_lines(deps, d_obj, w_obj)
    exact_error("decide --batch > /dev/full: stops, one line",
                *cli("decide", "--batch", "--deps", deps, stdin=json.dumps(w_obj) + "\n",
                     stdout="/dev/full"), 1, "pgwitness decide: " + FULL)
    exact_error("decide > /dev/full", *cli("decide", "--deps", deps, "--write", os.path.join(
        FIXTURES, "close_17.write.json"), stdout="/dev/full"), 1, "pgwitness decide: " + FULL)


def decide_limits(tmp, deps):
    """Documents past the library's limits are refused as soon as the limit
    is passed, without reading (or keeping) the rest: /dev/zero ends."""
    inval_max, snapshot_max = 64 << 20, 8 << 20  # PGW_INVAL_JSON_MAX_BYTES, PGW_SNAPSHOT_...
    exact_error("decide --deps /dev/zero: stops at the limit",
                *cli_fed("true", "decide", "--deps", "/dev/zero", "--write", "w.json",
                         limit_mb=512), 1,
                f"pgwitness decide: cannot read /dev/zero: it is larger than the limit of "
                f"{inval_max} bytes")
    exact_error("decide --write /dev/zero: stops at the limit",
                *cli_fed("true", "decide", "--deps", deps, "--write", "/dev/zero",
                         limit_mb=512), 1,
                f"pgwitness decide: cannot read /dev/zero: it is larger than the limit of "
                f"{inval_max} bytes")
    exact_error("decide --deps - fed more than the limit",
                *cli_fed(f"head -c {inval_max + 4096} /dev/zero", "decide", "--deps", "-",
                         "--write", deps), 1,
                f"pgwitness decide: cannot read standard input: it is larger than the limit of "
                f"{inval_max} bytes")
    # Regular files over the limit are refused by their size (sparse: no disk used).
    big, big_snapshot = os.path.join(tmp, "big.json"), os.path.join(tmp, "big.snapshot.json")
    with open(big, "wb") as f:
        f.truncate(inval_max + 1)
    with open(big_snapshot, "wb") as f:
        f.truncate(snapshot_max + 1)
    exact_error("decide --write FILE over the limit",
                *cli("decide", "--deps", deps, "--write", big), 1,
                f"pgwitness decide: cannot read {big}: it is larger than the limit of "
                f"{inval_max} bytes")
    exact_error("diff FILE FILE over the snapshot limit",
                *cli("-d", NOSERVER, "diff", big_snapshot, big_snapshot), 1,
                f"pgwitness diff: cannot read {big_snapshot}: it is larger than the limit of "
                f"{snapshot_max} bytes")
    exact_error("diff /dev/zero FILE: stops at the snapshot limit",
                *cli_fed("true", "-d", NOSERVER, "diff", "/dev/zero", big_snapshot,
                         limit_mb=512), 1,
                f"pgwitness diff: cannot read /dev/zero: it is larger than the limit of "
                f"{snapshot_max} bytes")
    os.unlink(big)
    os.unlink(big_snapshot)


def decide_batch_lines(deps, d_obj, w_obj):
    """decide --batch: each line's error says what is wrong with it; what
    cannot be read is said too, and never ends the run with exit 0."""
    inval_max = 64 << 20  # PGW_INVAL_JSON_MAX_BYTES
    # A line may hold a write set (with --deps FILE) or both documents and
    # 64 bytes; a longer one is an error line, and the rest of it is skipped
    # unkept: 160 MiB pass through 128 MiB of memory.
    w_line = json.dumps(w_obj)
    feed = "{ head -c %d /dev/zero; printf '\\n%%s\\n' \"$W\"; }"
    n = inval_max + 1 if UNCAPPED else 160 << 20
    rc, out, err = cli_fed(feed % n, "decide", "--batch", "--deps", deps, env={"W": w_line},
                           limit_mb=128)
    check("decide --batch --deps FILE: a line over the limit is an error line, the next is "
          "decided", rc == 1 and out == f'{{"error":"the line is longer than {inval_max} bytes",'
          '"line":1}\n{"verdict":"refresh","reason":"ROW_IN_RESULT"}\n' and
          err == "pgwitness decide: 1 of 2 lines could not be decided\n",
          f"rc={rc} stdout={out[:300]!r} stderr={err!r}")
    # Input that cannot be read ends the run: an error line, exit 1, one line on stderr.
    rc, out, err = cli_fed(["/"], "decide", "--batch")
    check("decide --batch < DIRECTORY: the read error is said, exit 1", rc == 1 and
          out == '{"error":"cannot read standard input: Is a directory","line":1}\n' and
          err == "pgwitness decide: line 1: cannot read standard input: Is a directory; the "
          "lines after it were not decided\n", f"rc={rc} stdout={out!r} stderr={err!r}")
    if not UNCAPPED:
        # A line within the limit that does not fit in memory (128 MiB
        # here): an error line, and the run ends (exit 1), not silently.
        rc, out, err = cli_fed(feed % (120 << 20), "decide", "--batch", env={"W": w_line},
                               limit_mb=128)
        check("decide --batch: a line that does not fit in memory ends the run, exit 1",
              rc == 1 and out == '{"error":"out of memory","line":1}\n' and
              err == "pgwitness decide: line 1: out of memory; the lines after it were not "
              "decided\n", f"rc={rc} stdout={out[:300]!r} stderr={err!r}")

    dump = json.dumps
    expected = 'expected {"deps": ..., "write": ...}'
    cases = [({"deps": 1, "write": w_obj}, "deps: $: expected an object, found an integer"),
             ({"deps": "s", "write": w_obj}, "deps: $: expected an object, found a string"),
             ({"deps": None, "write": w_obj}, "deps: $: expected an object, found null"),
             ({"deps": d_obj, "write": True}, "write: $: expected an object, found a boolean"),
             ({"deps": d_obj, "write": 1.5}, "write: $: expected an object, found a real number"),
             ({"deps": d_obj}, expected + ': missing "write"'),
             ({"write": w_obj}, expected + ': missing "deps"'),
             ({}, expected + ': missing "deps" and "write"'),
             ({"deps": d_obj, "write": w_obj, "extra": 1}, expected + ': unknown key "extra"'),
             ([d_obj, w_obj], expected + ", found an array"),
             (7, expected + ", found an integer"),
             (w_obj, expected + ": this line is a write set alone (pgwitness watch --json): "
              "give the subscription with --deps FILE")]
    for value, message in cases:
        rc, out, err = cli("decide", "--batch", stdin=dump(value) + "\n")
        check(f"decide --batch: {dump(value)[:60]} says {message!r}", rc == 1 and
              json_or_none(out) == {"error": message, "line": 1} and
              err == "pgwitness decide: 1 of 1 line could not be decided\n",
              f"rc={rc} stdout={out!r} stderr={err!r}")
    rc, out, err = cli("decide", "--batch", "--deps", deps, stdin="1\n")
    check("decide --batch --deps FILE: a scalar line says what the library expected", rc == 1 and
          json_or_none(out) == {"error": "write: $: expected an object, found an integer",
                                "line": 1}, f"rc={rc} stdout={out!r} stderr={err!r}")
    # jansson's own words name a flag (JSON_ALLOW_NUL) no user can set.
    rc, out, err = cli("decide", "--batch", stdin='{"deps": "a\\u0000b", "write": {}}\n')
    e = (json_or_none(out) or {}).get("error", "")
    check("decide --batch: \\u0000 in a string is named without jansson's flag", rc == 1 and
          e.startswith("not JSON: \\u0000 (NUL) is not allowed in strings") and
          "JSON_ALLOW_NUL" not in out, f"rc={rc} stdout={out!r} stderr={err!r}")
    # Whitespace-only lines are blank: no output, not counted.
    good = dump({"deps": d_obj, "write": w_obj})
    rc, out, err = cli("decide", "--batch", stdin=f"  \t\n{good}\n\n \r\nnot json\n\t\n")
    check("decide --batch: whitespace-only lines are skipped and not counted", rc == 1 and
          out == '{"verdict":"refresh","reason":"ROW_IN_RESULT"}\n{"error":"not JSON: invalid '
          'token near \'not\'","line":5}\n' and
          err == "pgwitness decide: 1 of 2 lines could not be decided\n",
          f"rc={rc} stdout={out!r} stderr={err!r}")


def tasks_example():
    """pgwitness-tasks with one tenant: singular counts, and the statement
    that touches no row says why nothing reruns."""
    rc, out, err = tasks("--tenant", f"solo=dbname={DB}", "--script", timeout=120)
    check("tasks --script with one tenant", rc == 0 and
          out.startswith("pgwitness tasks example: 1 tenant, subscriptions") and
          "solo> UPDATE tasks SET status = 'open' WHERE id = 999\n  no row touched: a statement "
          "that touches no row sends no notification, so nothing reruns\n" in out and
          "solo> UPDATE tasks SET status = status\nnotification from solo: update public.tasks, "
          "rows touched, none changed\n  no value changed: the write set lists no rows and no "
          "columns (ids [], columns [])\n" in out and "changes no row" not in out and
          "0 rows" not in out and "  rerun solo   tasks.list?status=open   no rows\n" in out and
          "rows:\n" not in out, out + err)
    exact_error("tasks --script > /dev/full: exit 1, one line",
                *tasks("--tenant", f"solo=dbname={DB}", "--script", stdout="/dev/full",
                       timeout=120), 1, "pgwitness-tasks: " + FULL)


def stdout_and_partial_writes(tmp):
    """Output that cannot be written fails the command; a failed command
    leaves no partial write (no triggers, no file)."""
    psql("CREATE TABLE w2 (a int)")
    exact_error("history t1 > /dev/full", *cli("history", "t1", stdout="/dev/full"), 1,
                "pgwitness history: " + FULL)
    exact_error("snapshot t1 --json > /dev/full",
                *cli("snapshot", "t1", "--json", stdout="/dev/full"), 1, "pgwitness snapshot: " + FULL)
    s1 = os.path.join(tmp, "s1.json")
    rc, out, err = cli("snapshot", "t1", "-o", s1)
    check("snapshot -o s1.json", rc == 0 and out.endswith(f"written to {s1}\n"), out + err)
    exact_error("diff s1.json s1.json > /dev/full", *cli("diff", s1, s1, stdout="/dev/full"), 1,
                "pgwitness diff: " + FULL)
    exact_error("snapshot -o /dev/full (written directly: a device is not replaced)",
                *cli("snapshot", "t1", "-o", "/dev/full"), 1,
                "pgwitness snapshot: cannot write /dev/full: No space left on device")
    check("... and /dev/full is still the device", stat.S_ISCHR(os.stat("/dev/full").st_mode))

    # watch: all tables or none.
    exact_error("watch w2 nope: fails", *cli("watch", "w2", "nope", "--seconds", "1"), 1,
                "pgwitness watch: cannot watch public.nope: no table public.nope (no trigger was "
                "changed)")
    triggers = "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'w2'::regclass"
    check("... and leaves no trigger on w2", psql(triggers) == "0", psql(triggers))
    # t1 is watched with --values status (above): --replace to watch it without.
    rc, out, err = cli("watch", "w2", "t1", "--seconds=1", "--replace")
    check("watch w2 t1 --replace: the triggers are committed", rc == 0 and
          psql(triggers) == "4" and watched_args("t1") == ["pgwitness"], out + err)
    exact_error("watch under a schema that is not installed: the command to run",
                *cli("--pgw-schema", "notinstalled", "watch", "t1", "--seconds", "1"), 1,
                'pgwitness watch: cannot watch public.t1: schema "notinstalled" has no pgwitness '
                "trigger function (notify_statement): run `pgwitness --pgw-schema notinstalled "
                "install` to install or upgrade it")
    rc, out, err = cli("watch", "w2", "--json", "--seconds", "120", stdout="/dev/full",
                       timeout=60)
    check("watch --json > /dev/full stops at once, the reason last", rc == 1 and
          err.endswith("\npgwitness watch: " + FULL + "\n"), f"rc={rc} {err}")

    # snapshot -o FILE --store: the store first, the file through a temporary.
    part = os.path.join(tmp, "part.json")
    fail = ("pgwitness snapshot: pgwitness is not installed in schema \"notinstalled\": run "
            "`pgwitness --pgw-schema notinstalled install` first")
    exact_error("snapshot -o part.json --store, not installed: fails",
                *cli("--pgw-schema", "notinstalled", "snapshot", "t1", "-o", part, "--store"), 1,
                fail)
    check("... and writes no part.json, leaves no temporary file",
          not os.path.exists(part) and not [f for f in os.listdir(tmp) if f.startswith(".")],
          str(os.listdir(tmp)))
    keep = os.path.join(tmp, "keep.json")
    with open(keep, "w") as f:
        f.write("old\n")
    os.chmod(keep, 0o640)
    exact_error("snapshot -o EXISTING --store, not installed: fails",
                *cli("--pgw-schema", "notinstalled", "snapshot", "t1", "-o", keep, "--store"), 1,
                fail)
    check("... and the existing file is as it was", open(keep).read() == "old\n")
    link = os.path.join(tmp, "link.json")
    os.symlink("keep.json", link)
    rc, out, err = cli("snapshot", "t1", "-o", link)
    check("snapshot -o LINK: the file it names is replaced (its mode kept), the link stays",
          rc == 0 and os.path.islink(link) and json.load(open(keep))["table"] == "t1" and
          stat.S_IMODE(os.stat(keep).st_mode) == 0o640 and
          not [f for f in os.listdir(tmp) if f.startswith(".")], out + err)
    missing = os.path.join(tmp, "nodir", "x.json")
    exact_error("snapshot -o into a missing directory", *cli("snapshot", "t1", "-o", missing), 1,
                f"pgwitness snapshot: cannot write {missing}: No such file or directory")


def help_widths():
    """Every --help fits 79 columns."""
    helps = [("pgwitness --help", cli("--help"))]
    helps += [(f"pgwitness {c} --help", cli(c, "--help")) for c in COMMANDS]
    helps += [("pgwitness-ingest --help", ingest("--help")),
              ("pgwitness-tasks --help", tasks("--help"))]
    for name, (rc, out, err) in helps:
        wide = [l for l in out.splitlines() if len(l) > 79]
        check(f"{name}: lines of at most 79 columns", rc == 0 and out and not wide,
              "\n".join(wide))
    rc, out, err = cli("watch", "--help")
    flat = " ".join(out.split())
    check("watch --help: the triggers stay, another watch is refused without --replace, "
          "unwatch removes them",
          "The triggers stay after watch exits" in flat and "--replace" in flat and
          "A table already watched with another channel, other value columns or another "
          "firing mode (ENABLE ALWAYS or not) is refused" in
          flat and "`pgwitness unwatch TABLE...` removes them" in flat, out)
    rc, out, err = cli("snapshot", "--help")
    check("snapshot --help: -o - is standard output", "-o - prints the document on standard "
          "output" in " ".join(out.split()), out)
    rc, out, err = ingest("--help")
    check("pgwitness-ingest --help: PGWITNESS_SCHEMA", "$PGWITNESS_SCHEMA" in out, out)


def watch_keeps_others_triggers():
    """A host's triggers (its channel, its value columns) are not replaced
    by another watch unless --replace says so."""
    psql("CREATE TABLE w3 (id int PRIMARY KEY, status text, note text); "
         "CREATE TABLE w4 (id int PRIMARY KEY, status text)")
    # The host: watching w3 on the default channel with the values of status.
    host = popen([CLI, "watch", "w3", "--values", "status", "--json"])
    listening = wait_listening()
    check("a host watches w3 with --values status",
          listening and watched_args("w3") == ["pgwitness", "status"], str(watched_args("w3")))
    exact_error("watch w3 --channel other: refused, nothing changed",
                *cli("watch", "w3", "--channel", "other", "--values", "status", "--seconds",
                     "1"), 1,
                'pgwitness watch: public.w3 is already watched on channel "pgwitness" with '
                'value column "status" (asked: channel "other" with value column "status"): no '
                "trigger was changed; watch it with the same --channel and --values, or give "
                "--replace to replace its triggers (whoever relies on them then misses writes "
                "or values)")
    check("... and w3's triggers still send on the host's channel, with its values",
          watched_args("w3") == ["pgwitness", "status"], str(watched_args("w3")))
    exact_error("watch w3 (no --values): refused, the host's value columns kept",
                *cli("watch", "w3", "--seconds", "1"), 1,
                'pgwitness watch: public.w3 is already watched on channel "pgwitness" with '
                'value column "status" (asked: channel "pgwitness" without value columns): no '
                "trigger was changed; watch it with the same --channel and --values, or give "
                "--replace to replace its triggers (whoever relies on them then misses writes "
                "or values)")
    exact_error("watch w4 w3 --values note: refused, w4 not watched either",
                *cli("watch", "w4", "w3", "--values", "status,note", "--seconds", "1"), 1,
                'pgwitness watch: public.w3 is already watched on channel "pgwitness" with '
                'value column "status" (asked: channel "pgwitness" with value columns "status", '
                '"note"): no trigger was changed; watch it with the same --channel and '
                "--values, or give --replace to replace its triggers (whoever relies on them "
                "then misses writes or values)")
    check("... w4 has no trigger, w3 is as it was", pgw_triggers("w4") == "0" and
          watched_args("w3") == ["pgwitness", "status"], pgw_triggers("w4"))
    # The same channel and values: re-watching is idempotent, and the host
    # still receives the writes.
    rc, out, err = cli("watch", "w3", "--values", "status", "--seconds", "1")
    check("watch w3 --values status (as installed): proceeds", rc == 0 and
          watched_args("w3") == ["pgwitness", "status"], out + err)
    psql("INSERT INTO w3 VALUES (1, 'open', 'n')")
    got = read_lines(host, 2, 10).decode()
    lines = [json_or_none(l) or {} for l in got.splitlines() if l.startswith("{")]
    check("... and the host still gets w3's writes with their values",
          [l.get("op") for l in lines] == ["reset", "insert"] and
          lines[1].get("new") == [{"status": "open"}], got)
    stop(host)
    rc, out, err = cli("watch", "w3", "--channel", "other", "--seconds", "1", "--replace")
    check("watch w3 --channel other --replace: replaced", rc == 0 and
          watched_args("w3") == ["other"], out + err + str(watched_args("w3")))

    # Text mode prints the values too (escaped, quotes doubled).
    psql("DELETE FROM w4")
    w = popen([CLI, "watch", "w4", "--values", "status"])
    listening = wait_listening()
    psql("INSERT INTO w4 VALUES (1, 'op\"en\x1b'), (2, NULL)")
    psql("UPDATE w4 SET status = 'closed' WHERE id = 1")
    psql("DELETE FROM w4 WHERE id = 2")
    got = read_lines(w, 7, 10).decode()
    rc, rest, werr = stop(w)
    check("watch --values in text: each row's values", listening and rc == 0 and
          (got + rest).endswith(
              "insert public.w4: rows 1, 2\n"
              '  1: status "op""en\\x1b"\n'
              "  2: status NULL\n"
              "update public.w4: rows 1; columns status\n"
              '  1: status "op""en\\x1b" -> "closed"\n'
              "delete public.w4: rows 2\n"
              "  2: status NULL\n"), got + rest + werr)


def unwatch():
    """unwatch: all tables in one transaction; says what it did per table."""
    psql("CREATE TABLE u1 (a int); CREATE TABLE u2 (a int)")
    rc, out, err = cli("watch", "u1", "--seconds", "1")
    check("watch u1", rc == 0 and pgw_triggers("u1") == "4", out + err)
    exact_error("unwatch u1 nope: fails, nothing changed",
                *cli("unwatch", "u1", "nope"), 1,
                "pgwitness unwatch: cannot unwatch public.nope: no table public.nope (no "
                "trigger was changed)")
    check("... u1 still watched", pgw_triggers("u1") == "4", pgw_triggers("u1"))
    rc, out, err = cli("unwatch", "u1", "u2")
    check("unwatch u1 u2: says which were watched", rc == 0 and err == "" and out ==
          "public.u1: triggers removed\npublic.u2: not watched (no pgwitness trigger)\n" and
          pgw_triggers("u1") == "0", out + err)
    rc, out, err = cli("unwatch", "u1", "--json")
    check("unwatch --json", rc == 0 and json_or_none(out) ==
          [{"schema": "public", "table": "u1", "removed": False}], out + err)
    rc, out, err = cli("unwatch", "u1", "--source=wal", "--publication", "nopub")
    check("unwatch --source=wal --publication nopub: says there is no such publication",
          rc == 0 and err == "" and out == 'public.u1: not watched for the stream (not in '
          'publication "nopub": there is no such publication)\n', out + err)


RESET_LINE = "scope reset: every subscription of this scope must refresh\n"
DDL_LINE = ("ddl public.a_tasks: the table's definition changed: every subscription reading it "
            "must refresh\n")


def announce_ddl():
    """announce: a definition change with no later write reaches a watch as
    the ddl line; ddl-trigger install and remove, each idempotent, and with
    them installed the DDL alone is announced."""
    psql("CREATE TABLE a_tasks (id int PRIMARY KEY, n int)")
    w = popen([CLI, "watch", "a_tasks"])
    ready = wait_listening()
    psql("ALTER TABLE a_tasks ALTER COLUMN n TYPE text USING n::text")
    rc, out, err = cli("announce", "a_tasks")
    check("announce a_tasks", rc == 0 and err == "" and out == "public.a_tasks: announced\n",
          out + err)
    got = read_lines(w, 2, 10).decode()
    for i, said in enumerate(["installed", "were installed already (nothing changed)"]):
        rc, out, err = cli("ddl-trigger", "install")
        check(f"ddl-trigger install ({i + 1})", rc == 0 and err == "" and out ==
              f"event triggers pgwitness_ddl_command_end and pgwitness_sql_drop {said}\n",
              out + err)
    # A role that is not a superuser: refused, also when they are installed
    # already (and when there is nothing to remove, below).
    role = "pgwt_ddl_norole_%d" % os.getpid()
    psql(f"DROP ROLE IF EXISTS {role}; CREATE ROLE {role} LOGIN")
    refused = ("pgwitness ddl-trigger: %s the pgwitness event triggers needs a superuser "
               "(PostgreSQL: CREATE EVENT TRIGGER, DROP EVENT TRIGGER), and the current user "
               "is not one: without them, call pgw_pq_announce_ddl() (pgwitness announce) "
               "after each migration (the database role lacks a privilege)")
    exact_error("ddl-trigger install by a non-superuser, installed already: refused",
                *cli("-d", f"dbname={DB} user={role}", "ddl-trigger", "install"), 1,
                refused % "installing")
    exact_error("ddl-trigger remove by a non-superuser: refused",
                *cli("-d", f"dbname={DB} user={role}", "ddl-trigger", "remove"), 1,
                refused % "removing")
    check("... both still there", psql("SELECT count(*) FROM pg_event_trigger") == "2")
    psql("ALTER TABLE a_tasks RENAME COLUMN n TO m")
    got += read_lines(w, 3 - got.count("\n"), 10).decode()
    rc, rest, err = stop(w)
    check("watch: the announced ddl, then the event trigger's", ready and got + rest ==
          "scope reset: every subscription of this scope must refresh\n" + DDL_LINE * 2,
          f"rc={rc}\n{got}{rest}{err}")
    for i, said in enumerate(["removed", "were not installed (nothing changed)"]):
        rc, out, err = cli("ddl-trigger", "remove")
        check(f"ddl-trigger remove ({i + 1})", rc == 0 and err == "" and out ==
              f"event triggers pgwitness_ddl_command_end and pgwitness_sql_drop {said}\n",
              out + err)
    check("... none left", psql("SELECT count(*) FROM pg_event_trigger") == "0")
    names = ["pgwitness_ddl_command_end", "pgwitness_sql_drop"]
    for action, changed in [("install", True), ("install", False), ("remove", True),
                            ("remove", False)]:
        rc, out, err = cli("ddl-trigger", action, "--json")
        check(f"ddl-trigger {action} --json (changed: {changed})", rc == 0 and err == "" and
              json_or_none(out) == {"action": action, "event_triggers": names,
                                    "changed": changed}, out + err)
    # A role without USAGE on the pgwitness schema: told the GRANT.
    exact_error("announce by a role without USAGE on the pgwitness schema: the GRANT",
                *cli("-d", f"dbname={DB} user={role}", "announce", "a_tasks"), 1,
                f"pgwitness announce: cannot announce public.a_tasks: role {role} has no USAGE "
                f'on schema "pgwitness": grant it (GRANT USAGE ON SCHEMA pgwitness TO {role})')
    exact_error("ddl-trigger remove by a non-superuser, nothing to remove: refused",
                *cli("-d", f"dbname={DB} user={role}", "ddl-trigger", "remove"), 1,
                refused % "removing")
    psql(f"DROP ROLE {role}")
    rc, out, err = cli("announce", "a_tasks", "gone", "--channel", "other", "--json")
    check("announce --json, a dropped table too (a note says it does not exist)", rc == 0 and
          err == "pgwitness announce: note: no table public.gone exists now; announced by name "
          "all the same (subscriptions reading that name refresh)\n" and json_or_none(out) ==
          [{"schema": "public", "table": "a_tasks"}, {"schema": "public", "table": "gone"}],
          out + err)
    rc, out, err = cli("announce", "a_tasks,n")
    check("announce a_tasks,n: the note says a comma is part of the name", rc == 0 and
          out == "public.a_tasks,n: announced\n" and
          err == "pgwitness announce: note: no table public.a_tasks,n exists now; announced by "
          "name all the same (subscriptions reading that name refresh) (a comma is part of a "
          "table name: give each table as an argument of its own)\n", out + err)
    exact_error("announce --pgw-schema nope", *cli("announce", "a_tasks", "--pgw-schema",
                                                   "nope"), 1,
                "pgwitness announce: cannot announce public.a_tasks: schema \"nope\" has no "
                "announce_ddl(text,text,text[],boolean) (pgwitness schema version 5): run "
                "`pgwitness --pgw-schema nope install` to install or upgrade it")
    psql("DROP TABLE a_tasks")


def stream_usage_errors():
    """watch/unwatch --source=wal and slots: usage errors, before connecting."""
    w = ["-d", NOSERVER, "watch", "t"]
    for args, line in [
            (["--slot", "s1"], "--slot is for the stream: give --source=wal"),
            (["--source=triggers", "--slot=s1"], "--slot is for the stream: give --source=wal"),
            (["--publication", "p"], "--publication is for the stream: give --source=wal"),
            (["--source=logical"], "--source takes triggers or wal, not 'logical'"),
            (["--source", "wal", "--channel", "c"],
             "--channel is for the triggers: the stream reads a publication (--publication)"),
            (["--source=wal", "--slot", "S1"],
             "--slot: 'S1' is not a replication slot name (1 to 63 bytes of a-z, 0-9 and _)"),
            (["--source=wal", "--slot", "s-1"],
             "--slot: 's-1' is not a replication slot name (1 to 63 bytes of a-z, 0-9 and _)"),
            (["--source=wal", "--slot="],
             "--slot: '' is not a replication slot name (1 to 63 bytes of a-z, 0-9 and _)"),
            (["--source=wal", "--slot", "s" * 64],
             f"--slot: '{'s' * 64}' is not a replication slot name (1 to 63 bytes of a-z, 0-9 "
             "and _)"),
            (["--source=wal", "--publication="], "--publication: the publication name is empty"),
            (["--source=wal", "--enable-always"],
             "--enable-always is for the triggers: the stream reads the WAL whatever the "
             "triggers and the replication role")]:
        exact_error(f"watch {' '.join(args)}: a usage error", *cli(*w, *args), 2,
                    "pgwitness watch: " + line)
    one_error_line("watch --source=wal --slot with 63 bytes: a name (then no server)",
                   *cli(*w, "--source=wal", "--slot", "s_0" * 21), 1,
                   "cannot connect to the database")
    exact_error("unwatch --publication without --source=wal",
                *cli("-d", NOSERVER, "unwatch", "t", "--publication=p"), 2,
                "pgwitness unwatch: --publication is for the stream: give --source=wal")
    exact_error("unwatch --slot (a watch option)",
                *cli("-d", NOSERVER, "unwatch", "t", "--source=wal", "--slot", "s1"), 2,
                "pgwitness unwatch: unknown option '--slot' (see pgwitness unwatch --help)")
    for args, line in [
            (["drop"], "which slot? (pgwitness slots drop NAME)"),
            (["drop", "Bad-Name"], "'Bad-Name' is not a replication slot name (1 to 63 bytes "
             "of a-z, 0-9 and _)"),
            (["list"], "unknown action 'list' (pgwitness slots, or pgwitness slots drop NAME)"),
            (["drop", "s1", "s2"], "unexpected argument 's2' (see pgwitness slots --help)"),
            (["--force"], "--force is for pgwitness slots drop NAME")]:
        exact_error(f"slots {' '.join(args)}: a usage error",
                    *cli("-d", NOSERVER, "slots", *args), 2, "pgwitness slots: " + line)


def wait_streaming(n=1):
    """Waits until n walsenders of this database stream from a slot."""
    return wait_until(lambda: psql(
        "SELECT count(*) FROM pg_stat_replication r JOIN pg_replication_slots s ON "
        "s.active_pid = r.pid WHERE s.database = current_database() AND r.state = "
        "'streaming'") == str(n))


def published(table):
    return psql(f"SELECT count(*) FROM pg_publication_tables WHERE tablename = '{table}'")


@contextlib.contextmanager
def stream_role(prefix, attributes):
    """A scratch role (PREFIX_PID, with ATTRIBUTES) that may use table s_ok
    and the pgwitness schema: yields its name, then revokes and drops it."""
    role = "%s_%d" % (prefix, os.getpid())
    psql(f"CREATE ROLE {role} {attributes}; GRANT ALL ON TABLE s_ok TO {role}; "
         f"GRANT USAGE ON SCHEMA pgwitness TO {role}")
    try:
        yield role
    finally:
        psql(f"REVOKE ALL ON TABLE s_ok FROM {role}; REVOKE USAGE ON SCHEMA pgwitness FROM "
             f"{role}; DROP ROLE {role}")


def stream_refusals():
    """watch --source=wal refuses what would fail writers, naming the table,
    and changes nothing: not even the publication is made."""
    psql("CREATE TABLE s_nopk (a int); CREATE TABLE s_ok (id int PRIMARY KEY); "
         "CREATE TABLE s_part (id int PRIMARY KEY) PARTITION BY RANGE (id); "
         "CREATE TABLE s_part1 PARTITION OF s_part FOR VALUES FROM (0) TO (100); "
         "CREATE TABLE s_ri (id int PRIMARY KEY); ALTER TABLE s_ri REPLICA IDENTITY NOTHING")
    exact_error("watch --source=wal: a table without a primary key is refused",
                *cli("watch", "s_nopk", "--source=wal", "--seconds", "1"), 1,
                "pgwitness watch: cannot watch public.s_nopk: public.s_nopk has no primary key: "
                "the stream needs one for row IDs, and PostgreSQL fails the UPDATE and DELETE "
                "of a published table without a replica identity (add a primary key)")
    exact_error("watch --source=wal: a partition is refused",
                *cli("watch", "s_part1", "--source=wal", "--seconds", "1"), 1,
                "pgwitness watch: cannot watch public.s_part1: public.s_part1 is a partition: "
                "watch its partitioned table public.s_part, whose writes include it (published "
                "via the partition root)")
    exact_error("watch --source=wal: REPLICA IDENTITY NOTHING is refused",
                *cli("watch", "s_ri", "--source=wal", "--seconds", "1"), 1,
                "pgwitness watch: cannot watch public.s_ri: cannot publish public.s_ri without "
                "failing writers: public.s_ri has no usable replica identity (REPLICA IDENTITY "
                "NOTHING): add a primary key, or run ALTER TABLE public.s_ri REPLICA IDENTITY "
                "FULL")
    exact_error("watch s_ok s_nopk --source=wal: all or nothing",
                *cli("watch", "s_ok", "s_nopk", "--source=wal", "--seconds", "1"), 1,
                "pgwitness watch: cannot watch public.s_nopk: public.s_nopk has no primary key: "
                "the stream needs one for row IDs, and PostgreSQL fails the UPDATE and DELETE "
                "of a published table without a replica identity (add a primary key) (nothing "
                "was changed)")
    # A role that may not replicate: refused before anything is made.
    with stream_role("pgwt_norepl", "LOGIN") as role:
        one_error_line("watch --source=wal by a role that may not replicate: exit 1",
                       *cli("-d", f"dbname={DB} user={role}", "watch", "s_ok", "--source=wal",
                            "--publication", "norepl", "--seconds", "1"), 1,
                       ["pgwitness watch: cannot open a replication connection (",
                        "must be superuser or replication role to start walsender",
                        "the stream needs a role that may replicate (the REPLICATION "
                        "attribute, or the managed service's replication role; "
                        "docs/stream.md); nothing was changed"])
    # A role that may replicate but not record the watch: told what the
    # watch needs on stream_tables; refused on the table itself, not.
    with stream_role("pgwt_nost", "LOGIN REPLICATION") as role:
        exact_error("watch --source=wal without privileges on stream_tables: what it needs",
                    *cli("-d", f"dbname={DB} user={role}", "watch", "s_ok", "--source=wal",
                         "--publication", "nost", "--seconds", "1"), 1,
                    "pgwitness watch: reading how public.s_ok is watched for the stream: "
                    "permission denied for table stream_tables (watching for the stream needs "
                    "SELECT, INSERT, UPDATE and DELETE on the table stream_tables of schema "
                    "pgwitness, and USAGE on that schema: a role that owns it grants them)")
        exact_error("watch --source=wal of a table the role may not lock: the server's words",
                    *cli("-d", f"dbname={DB} user={role}", "watch", "s_nopk", "--source=wal",
                         "--publication", "nost", "--seconds", "1"), 1,
                    "pgwitness watch: reading how public.s_nopk is watched for the stream: "
                    "permission denied for table s_nopk")
    check("... nothing was changed: no publication, no recorded value columns",
          psql("SELECT count(*) FROM pg_publication") == "0" and
          psql("SELECT count(*) FROM pgwitness.stream_tables") == "0",
          psql("SELECT pubname FROM pg_publication"))
    rc, out, err = cli("slots")
    check("slots: none yet", rc == 0 and err == "" and
          out == f'no replication slots use pgoutput in database "{DB}"\n', out + err)
    rc, out, err = cli("slots", "--json")
    check("slots --json: none yet", rc == 0 and json_or_none(out) == [], out + err)
    # An inheritance child made after its parent was watched is a gap in
    # what the stream sees: said on stderr, with the command that fixes it.
    rc, out, err = cli("watch", "s_ok", "--source=wal", "--seconds=1")
    psql("CREATE TABLE s_okchild (PRIMARY KEY (id)) INHERITS (s_ok)")
    rc, out, err = cli("watch", "s_ok", "--source=wal", "--seconds=1")
    check("watch again adds the child", rc == 0 and published("s_okchild") == "1", out + err)
    psql("ALTER PUBLICATION pgwitness DROP TABLE ONLY s_okchild")
    # (until it streams, which follows the gaps: making a slot can take
    # seconds while the server is busy)
    w = popen([CLI, "watch", "s_part", "--source=wal"])
    streamed = read_lines(w, 1, 20).decode() == RESET_LINE
    rc, out, err = stop(w)
    check("watch --source=wal: a gap is a warning on stderr, naming the fix",
          streamed and rc == 0 and "\npgwitness watch: warning: public.s_okchild inherits from public.s_ok "
          "but is not in publication pgwitness, so its writes are not sent: watch public.s_ok "
          "again (pgwitness watch --source=wal) to add it\n" in err, out + err)
    rc, out, err = cli("unwatch", "s_ok", "s_part", "--source=wal")
    check("unwatch --source=wal s_ok s_part", rc == 0 and out ==
          'public.s_ok: removed from publication "pgwitness"\n'
          'public.s_part: removed from publication "pgwitness"\n' and
          psql("SELECT count(*) FROM pg_publication_tables") == "0", out + err)


def stream_watch():
    """watch --source=wal prints the same JSON lines as the triggers for the
    same writes: insert, update (REPLICA IDENTITY FULL: the changed columns
    and the old and new values of --values columns) and delete."""
    psql("CREATE TABLE s_tasks (id int PRIMARY KEY, title text, status text); "
         "ALTER TABLE s_tasks REPLICA IDENTITY FULL")
    scope = ["--project", "p1", "--tenant", "acme", "--database", "app"]
    stream = popen([CLI, "watch", "s_tasks", "--source=wal", "--json", "--values", "status"] +
                   scope)
    trig = popen([CLI, "watch", "s_tasks", "--json", "--values", "status"] + scope)
    ready = wait_streaming() and wait_listening()
    psql("INSERT INTO s_tasks VALUES (1, 'a', 'open'), (2, 'b', 'open')")
    psql("UPDATE s_tasks SET status = 'closed', title = 'x' WHERE id = 1")
    psql("UPDATE s_tasks SET title = 'y' WHERE id = 2")
    psql("DELETE FROM s_tasks WHERE id = 2")
    got = read_lines(stream, 5, 10).decode()
    got_t = read_lines(trig, 5, 10).decode()
    rc, rest, err = stop(stream)
    rc_t, rest_t, err_t = stop(trig)
    sc = '{"scope":{"project":"p1","tenant":"acme","database":"app"},'
    w = sc + '"schema":"public","table":"s_tasks",'
    expected = [sc + '"op":"reset"}',
                w + '"op":"insert","ids":["1","2"],"ids_truncated":false,"columns":null,'
                '"columns_truncated":false,"new":[{"status":"open"},{"status":"open"}],'
                '"pk_changed":false}',
                w + '"op":"update","ids":["1"],"ids_truncated":false,"columns":["title",'
                '"status"],"columns_truncated":false,"old":[{"status":"open"}],"new":[{"status":'
                '"closed"}],"pk_changed":false}',
                w + '"op":"update","ids":["2"],"ids_truncated":false,"columns":["title"],'
                '"columns_truncated":false,"old":[{"status":"open"}],"new":[{"status":"open"}],'
                '"pk_changed":false}',
                w + '"op":"delete","ids":["2"],"ids_truncated":false,"columns":null,'
                '"columns_truncated":false,"old":[{"status":"open"}],"pk_changed":false}']
    check("watch --source=wal --json: a scope reset, then the exact write sets",
          ready and rc == 0 and (got + rest).splitlines() == expected,
          f"rc={rc}\n{got}{rest}{err}")
    check("... the same lines as watch with the triggers",
          rc_t == 0 and (got_t + rest_t).splitlines() == expected, got_t + rest_t + err_t)
    check("watch --source=wal: status lines on stderr",
          err == 'pgwitness watch: the stream of publication "pgwitness" for 1 table, a '
          "temporary slot; Ctrl-C to stop\n"
          "pgwitness watch: streaming from a new temporary slot (scope reset)\n"
          "pgwitness watch: 4 write sets seen, 1 scope reset\n", err)
    # Another run that would drop the value columns is refused, as for the
    # triggers.
    exact_error("watch s_tasks --source=wal (no --values): refused, the value columns kept",
                *cli("watch", "s_tasks", "--source=wal", "--seconds", "1"), 1,
                'pgwitness watch: public.s_tasks is already watched for the stream in '
                'publication "pgwitness" with value column "status" (asked: without value '
                'columns): nothing was changed; watch it with the same --values, or give '
                '--replace to change its value columns (whoever streams it then misses values)')
    check("... still recorded", psql("SELECT value_columns FROM pgwitness.stream_tables WHERE "
                                     "relid = 's_tasks'::regclass") == "{status}")
    rc, out, err = cli("unwatch", "s_tasks", "--source=wal")
    check("unwatch --source=wal: out of the publication", rc == 0 and err == "" and
          out == 'public.s_tasks: removed from publication "pgwitness"\n' and
          published("s_tasks") == "0" and
          psql("SELECT count(*) FROM pgwitness.stream_tables") == "0", out + err)
    rc, out, err = cli("unwatch", "s_tasks", "--source=wal", "--json")
    check("unwatch --source=wal again: not watched", rc == 0 and json_or_none(out) ==
          [{"schema": "public", "table": "s_tasks", "removed": False}], out + err)
    exact_error("unwatch --source=wal s_ok nope: fails, nothing changed",
                *cli("unwatch", "s_ok", "nope", "--source=wal"), 1,
                "pgwitness unwatch: cannot unwatch public.nope: no table public.nope (nothing "
                "was changed)")
    rc, out, err = cli("unwatch", "s_tasks")
    check("unwatch s_tasks: its triggers", rc == 0 and out == "public.s_tasks: triggers "
          "removed\n", out + err)


def stream_gap_said_once():
    """watch --source=wal says a gap once while it stays open, though every
    reconnect reports it again (here two: a configuration message each; the
    gap: an inheritance child taken out of the publication); a gap that
    closes (a connect without it) and reopens is said again."""
    psql("CREATE TABLE s_gp (id int PRIMARY KEY)")
    rc, out, err = cli("watch", "s_gp", "--source=wal", "--seconds=1")
    psql("CREATE TABLE s_gpkid (PRIMARY KEY (id)) INHERITS (s_gp)")
    w = popen([CLI, "watch", "s_gp", "--source=wal"])
    # Each connect prints a scope reset on stdout once it streams, after
    # its gaps: waiting for it, not for a new walsender, orders what
    # follows after that connect's reading of the gaps.
    def streamed():
        return read_lines(w, 1, 20).decode() == RESET_LINE

    def reconnect():
        psql("SELECT pg_logical_emit_message(true, 'pgwitness.config', '')")
        return streamed()
    ready = streamed()
    psql("ALTER PUBLICATION pgwitness DROP TABLE ONLY s_gpkid")  # (the watch added it)
    for _ in range(2):
        ready = reconnect() and ready
    gap = ("pgwitness watch: warning: public.s_gpkid inherits from public.s_gp but is not in "
           "publication pgwitness, so its writes are not sent: watch public.s_gp again "
           "(pgwitness watch --source=wal) to add it\n")
    # The gap closes (the child back in the publication: a connect without
    # it), then reopens: said again, once over two more reconnects.
    psql("ALTER PUBLICATION pgwitness ADD TABLE ONLY s_gpkid")
    ready = reconnect() and ready
    psql("ALTER PUBLICATION pgwitness DROP TABLE ONLY s_gpkid")
    for _ in range(2):
        ready = reconnect() and ready
    rc, out, err = stop(w)
    again = ("pgwitness watch: streaming again from a new temporary slot (scope reset: the "
             "writes in between were not streamed, so every subscription refreshes)\n")
    check("watch --source=wal: a gap said once over two reconnects, again when it reopens "
          "after a connect without it",
          ready and rc == 0 and err ==
          'pgwitness watch: the stream of publication "pgwitness" for 1 table, a temporary '
          "slot; Ctrl-C to stop\n"
          "pgwitness watch: streaming from a new temporary slot (scope reset)\n" +
          gap + again * 2 + again + gap + again * 2 +
          "pgwitness watch: 0 write sets seen, 6 scope resets\n",
          f"rc={rc} ready={ready}\n{err}")
    cli("unwatch", "s_gp", "--source=wal")
    psql("DROP TABLE s_gp CASCADE")


def stream_slot():
    """--slot: a permanent slot that a later run resumes, with what was
    committed meanwhile and no scope reset; slots lists it; slots drop."""
    psql("CREATE TABLE s_jobs (id int PRIMARY KEY, state text)")
    w = popen([CLI, "watch", "s_jobs", "--source=wal", "--slot", "s1", "--json"])
    ready = wait_streaming()
    psql("INSERT INTO s_jobs VALUES (1, 'new')")
    got = read_lines(w, 2, 10).decode()
    w.send_signal(signal.SIGINT)
    rc, rest, err = stop(w)
    lines = [json_or_none(l) or {} for l in (got + rest).splitlines()]
    check("watch --slot s1 (new): a scope reset, then the insert",
          ready and rc == 0 and [l.get("op") for l in lines] == ["reset", "insert"] and
          lines[1].get("ids") == ["1"], f"rc={rc}\n{got}{rest}{err}")
    check("... stderr: the slot is made now; what it confirmed",
          "pgwitness watch: streaming from slot s1, made now (scope reset)\n" in err and
          "pgwitness watch: 1 write set seen, 1 scope reset; slot s1 confirmed up to " in err,
          err)
    rc, out, err = cli("slots", "--json")
    slots = json_or_none(out) or []
    s1 = slots[0] if len(slots) == 1 else {}
    check("slots --json: s1, pgwitness's, permanent, inactive, with exact numbers",
          rc == 0 and s1.get("name") == "s1" and s1.get("pgwitness") is True and
          s1.get("temporary") is False and s1.get("active") is False and
          s1.get("active_pid") is None and s1.get("database") == DB and
          s1.get("plugin") == "pgoutput" and isinstance(s1.get("retained_bytes"), int) and
          isinstance(s1.get("lag_bytes"), int) and s1.get("wal_status") == "reserved" and
          s1.get("safe_wal_size") is None and
          s1.get("confirmed_lsn") == psql("SELECT confirmed_flush_lsn FROM "
                                          "pg_replication_slots WHERE slot_name = 's1'"),
          out + err)
    rc, out, err = cli("slots")
    rows = out.splitlines()
    check("slots: s1 in text, made by pgwitness", rc == 0 and len(rows) == 3 and
          rows[0] == f'1 replication slot uses pgoutput in database "{DB}", 1 made by pgwitness'
          and rows[1].split() == ["slot", "made", "by", "kind", "active", "confirmed",
                                  "retained", "lag", "wal_status", "safe_wal_size"] and
          rows[2].split()[:5] == ["s1", "pgwitness", "permanent", "no", s1.get("confirmed_lsn")]
          and rows[2].split()[-2:] == ["reserved", "unbounded"], out + err)
    # Written while nothing streams: the next run prints it, without a reset.
    psql("UPDATE s_jobs SET state = 'done' WHERE id = 1")
    w = popen([CLI, "watch", "s_jobs", "--source=wal", "--slot", "s1"])
    ready = wait_streaming()
    got = read_lines(w, 1, 10).decode()
    rc, out, err = cli("slots", "drop", "s1")
    one_error_line("slots drop s1 while it streams: in use, exit 1", rc, out, err, 1,
                   "pgwitness slots: dropping the replication slot: replication slot \"s1\" "
                   "is active for PID ")
    rc, out, _ = cli("slots", "--json")
    active = (json_or_none(out) or [{}])[0]
    check("slots --json while it streams: active, with its walsender",
          active.get("active") is True and isinstance(active.get("active_pid"), int), out)
    exact_error("watch --slot s1 while another watch streams from it: refused, exit 1",
                *cli("watch", "s_jobs", "--source=wal", "--slot", "s1", "--seconds", "1"), 1,
                f"pgwitness watch: replication slot s1 is in use by process "
                f"{active.get('active_pid')} (another stream reads it): give this watch its own "
                f"--slot; nothing was changed")
    # A column added while it streams: the next write's Relation message
    # differs from the one this stream saw, a ddl write set first.
    psql("ALTER TABLE s_jobs ADD COLUMN note text")
    psql("INSERT INTO s_jobs VALUES (2, 'new')")
    got += read_lines(w, 3 - got.count("\n"), 10).decode()
    w.send_signal(signal.SIGINT)
    rc, rest, err = stop(w)
    check("watch --slot s1 again: what was committed meanwhile, then live writes, no reset",
          ready and rc == 0 and got + rest == "update public.s_jobs: rows 1; columns unknown\n"
          "ddl public.s_jobs: the table's definition changed: every subscription reading it "
          "must refresh\n"
          "insert public.s_jobs: rows 2\n", f"rc={rc}\n{got}{rest}{err}")
    check("... stderr: resumed where it stopped, no scope reset",
          "pgwitness watch: streaming from slot s1, resuming at " in err and
          "(no scope reset: writes committed while it was not streaming follow)\n" in err and
          "(scope reset" not in err and "3 write sets seen, 0 scope resets; slot s1 confirmed "
          "up to " in err, err)
    rc, out, err = cli("slots", "drop", "s1")
    check("slots drop s1", rc == 0 and err == "" and out == "dropped replication slot s1\n",
          out + err)
    rc, out, err = cli("slots", "--json")
    check("... slots no longer lists it, nor pgwitness's record",
          rc == 0 and json_or_none(out) == [] and
          psql("SELECT count(*) FROM pgwitness.slots") == "0", out + err)
    exact_error("slots drop s1 again: no such slot, exit 1", *cli("slots", "drop", "s1"), 1,
                "pgwitness slots: dropping the replication slot: replication slot \"s1\" "
                "does not exist")
    # A slot pgwitness did not make is refused without --force.
    psql("SELECT pg_create_logical_replication_slot('other1', 'pgoutput')")
    rc, out, err = cli("slots")
    check("slots: another tool's slot is listed as other",
          rc == 0 and out.splitlines()[-1].split()[:3] == ["other1", "other", "permanent"],
          out + err)
    exact_error("slots drop other1: not pgwitness's, refused",
                *cli("slots", "drop", "other1"), 1,
                "pgwitness slots: replication slot other1 is a pgoutput slot that pgwitness did "
                "not make: whoever reads it would lose what it keeps; nothing was dropped (give "
                "--force to drop it anyway)")
    rc, out, err = cli("slots", "drop", "other1", "--force", "--json")
    check("slots drop other1 --force --json", rc == 0 and
          json_or_none(out) == {"slot": "other1", "dropped": True} and
          psql("SELECT count(*) FROM pg_replication_slots WHERE database = "
               "current_database()") == "0", out + err)
    psql("DROP TABLE s_jobs")


def output_option(tmp):
    """-o: a directory, a directory the user cannot write, and -."""
    before = psql("SELECT count(*) FROM pgwitness.snapshots")
    exact_error("snapshot --store -o DIRECTORY: refused before anything is stored",
                *cli("snapshot", "t1", "--store", "-o", tmp), 2,
                f"pgwitness snapshot: --output: {tmp} is a directory (give the name of a file)")
    check("... and nothing was stored", psql("SELECT count(*) FROM pgwitness.snapshots") ==
          before)
    # A writable file in a directory this user cannot write: the temporary
    # file beside it is what cannot be created. Root writes everywhere: the
    # command runs as nobody then.
    ro = os.path.join(tmp, "ro")
    os.mkdir(ro)
    target = os.path.join(ro, "exists.json")
    with open(target, "w") as f:
        f.write("old\n")
    as_other = []
    if os.getuid() == 0:
        as_other = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        os.chmod(tmp, 0o755)
        os.chown(target, 65534, 65534)
    else:
        os.chmod(target, 0o644)
    os.chmod(ro, 0o555)
    rc, out, err = run(as_other + [CLI, "snapshot", "t1", "-o", target])
    exact_error("snapshot -o FILE in a directory that cannot be written: names the directory",
                rc, out, err, 1,
                f"pgwitness snapshot: cannot write {target}: cannot create the temporary file "
                f"beside it in directory {ro}: Permission denied")
    check("... and the file is as it was", open(target).read() == "old\n")
    os.chmod(ro, 0o755)
    # -o -: standard output, not a file named '-'.
    cwd = os.getcwd()
    os.chdir(tmp)
    try:
        rc, out, err = cli("snapshot", "t1", "-o", "-")
        doc = json_or_none(out) or {}
        check("snapshot -o -: the document on standard output, no file named '-'",
              rc == 0 and doc.get("table") == "t1" and err == "" and
              not os.path.exists(os.path.join(tmp, "-")), out + err)
        rc, out, err = cli("snapshot", "t1", "-o", "-", "--store")
        check("snapshot -o - --store: the document on stdout, the id on stderr",
              rc == 0 and (json_or_none(out) or {}).get("table") == "t1" and
              err.startswith("stored as snapshot ") and not os.path.exists("-"), out + err)
    finally:
        os.chdir(cwd)


def stored_then_stdout_fails():
    """Output that fails after a successful store: the line says it was stored."""
    for args in ([], ["--json"]):
        before = int(psql("SELECT count(*) FROM pgwitness.snapshots"))
        newest = int(psql("SELECT coalesce(max(id), 0) FROM pgwitness.snapshots"))
        rc, out, err = cli("snapshot", "t1", "--store", *args, stdout="/dev/full")
        exact_error(f"snapshot t1 --store {' '.join(args)}> /dev/full: says it was stored",
                    rc, out, err, 1,
                    "pgwitness snapshot: writing standard output: No space left on device (the "
                    f"snapshot was stored as snapshot {newest + 1})")
        check("... and it was", int(psql("SELECT count(*) FROM pgwitness.snapshots")) ==
              before + 1)


def wait_until(cond, seconds=10):
    """Whether cond() became true within seconds (polled)."""
    deadline = time.time() + seconds * SLOW
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return False


def hold_lock(relname, table, mode):
    """A psql session holding LOCK table IN mode MODE in an open
    transaction, and whether the lock was granted in time."""
    e = dict(os.environ, PGDATABASE=DB)
    lock = subprocess.Popen(["psql", "-Xq"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=e)
    lock.stdin.write(f"BEGIN; LOCK {table} IN {mode} MODE;\n")
    lock.stdin.flush()
    lockmode = "".join(w.capitalize() for w in mode.split()) + "Lock"  # AccessShareLock
    granted = wait_until(lambda: psql(
        "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE "
        f"c.relname = '{relname}' AND l.mode = '{lockmode}' AND l.granted") == "1")
    return lock, granted


def release_lock(lock):
    lock.stdin.write("COMMIT;\n")
    lock.stdin.close()
    lock.wait(timeout=30)
    time.sleep(0.3)  # what the server would still do, it does now


def lock_waiters():
    """How many sessions of the test database wait for a lock."""
    return psql("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock'")


def interrupt(p, sig):
    """Sends sig to p and reaps it (killed after 30 s)."""
    p.send_signal(sig)
    try:
        p.communicate(timeout=30 * SLOW)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()


def interrupted_store(tmp):
    """SIGINT or SIGTERM while the store waits on a lock: the query is
    cancelled (no row appears once the lock is released), the temporary
    file is removed, and the exit is by the signal."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        d = tempfile.mkdtemp(dir=tmp)
        ok = os.path.join(d, "ok.json")
        before = psql("SELECT count(*) FROM pgwitness.snapshots")
        lock, locked = hold_lock("snapshots", "pgwitness.snapshots", "SHARE")
        p = popen([CLI, "snapshot", "t1", "--store", "-o", ok])
        waiting = wait_until(lambda: lock_waiters() == "1")
        temps = os.listdir(d)
        interrupt(p, sig)
        release_lock(lock)
        name = signal.Signals(sig).name
        check(f"snapshot --store -o, {name} while the store waits on a lock: killed by it",
              locked and waiting and temps and p.returncode == -sig,
              f"locked={locked} waiting={waiting} temporary={temps} rc={p.returncode}")
        check(f"... {name}: the store was cancelled, no temporary file, no file",
              psql("SELECT count(*) FROM pgwitness.snapshots") == before and
              os.listdir(d) == [], f"{before} -> "
              f"{psql('SELECT count(*) FROM pgwitness.snapshots')} {os.listdir(d)}")


def interrupted_ingest(tmp):
    """pgwitness-ingest interrupted while its drop waits for the table's
    lock: the waiting statement is cancelled at once (the server would
    otherwise keep it queued, holding up every later reader of the table,
    until the lock came free), the table and its rows are as they were, no
    snapshot is stored, and the exit is by the signal."""
    first = os.path.join(tmp, "intr1.csv")
    with open(first, "w") as f:
        f.write("a\n1\n")
    second = os.path.join(tmp, "intr2.csv")
    with open(second, "w") as f:
        f.write("a,b\n1,2\n")
    rc, out, err = ingest("--table", "intr", first)
    check("ingest intr (set-up)", rc == 0, out + err)
    for sig in (signal.SIGINT, signal.SIGTERM):
        before = psql("SELECT count(*) FROM pgwitness.snapshots")
        lock, locked = hold_lock("intr", "public.intr", "ACCESS SHARE")
        p = popen([INGEST, "--table", "intr", second])
        waiting = wait_until(lambda: lock_waiters() == "1")
        interrupt(p, sig)
        # While the reader still holds its lock, nothing may wait behind it.
        cleared = wait_until(lambda: lock_waiters() == "0", 5)
        left = lock_waiters()
        release_lock(lock)
        name = signal.Signals(sig).name
        check(f"pgwitness-ingest, {name} while its drop waits on a lock: killed by it",
              locked and waiting and p.returncode == -sig,
              f"locked={locked} waiting={waiting} rc={p.returncode}")
        check(f"... {name}: the waiting drop was cancelled at once, not left queued",
              cleared, f"{left} statement(s) still waiting")
        check(f"... {name}: the table and its rows are as they were, no snapshot stored",
              psql("SELECT string_agg(attname, ',' ORDER BY attnum) FROM pg_attribute WHERE "
                   "attrelid = 'public.intr'::regclass AND attnum > 0 AND NOT attisdropped")
              == "a" and psql("SELECT count(*) FROM public.intr") == "1" and
              psql("SELECT count(*) FROM pgwitness.snapshots") == before,
              psql("SELECT count(*) FROM pgwitness.snapshots") + " snapshots, was " + before)


def ingest_pgwitness_schema(tmp):
    """pgwitness-ingest takes PGWITNESS_SCHEMA as pgwitness does; its
    --pgw-schema wins."""
    rc, out, err = cli("--pgw-schema", "pgw_other", "install")
    check("install into pgw_other", rc == 0, out + err)
    one = os.path.join(tmp, "envschema.csv")
    with open(one, "w") as f:
        f.write("n\n7\n")
    two = os.path.join(tmp, "envschema2.csv")
    with open(two, "w") as f:
        f.write("n,m\n7,8\n")
    env = {"PGWITNESS_SCHEMA": "pgw_other"}
    rc, out, err = ingest("--table", "envs", one, env=env)
    rc2, out2, err2 = ingest("--table", "envs", two, env=env)
    check("ingest with PGWITNESS_SCHEMA: the funnel's snapshot goes to that schema",
          rc == 0 and rc2 == 0 and psql("SELECT count(*) FROM pgw_other.snapshots WHERE "
                                        "snapshot->>'table' = 'envs'") == "1" and
          psql("SELECT count(*) FROM pgwitness.snapshots WHERE snapshot->>'table' = 'envs'")
          == "0", out + err + out2 + err2)
    rc, out, err = cli("history", "envs", env=env)
    check("... where pgwitness history (same variable) finds it",
          rc == 0 and out.startswith("1 snapshot of table envs"), out + err)
    rc, out, err = ingest("--table", "envs", one, "--pgw-schema", "pgwitness", env=env)
    check("ingest --pgw-schema wins over PGWITNESS_SCHEMA",
          rc == 0 and psql("SELECT count(*) FROM pgwitness.snapshots WHERE snapshot->>'table' = "
                           "'envs'") == "1", out + err)
    exact_error("ingest: a bad PGWITNESS_SCHEMA is named as such",
                *ingest("-d", NOSERVER, "--table", "t", one, env={"PGWITNESS_SCHEMA": "x" * 64}),
                2, "pgwitness-ingest: PGWITNESS_SCHEMA: the name is longer than 63 bytes "
                "(PostgreSQL's limit for a name) (see pgwitness-ingest --help)")


def quoted_names():
    """Names in messages are quoted as PostgreSQL quotes identifiers."""
    exact_error('a schema name with a quote: doubled in the message',
                *cli("--pgw-schema", 'bad"name', "history", "t1"), 1,
                'pgwitness history: pgwitness is not installed in schema "bad""name": run '
                "`pgwitness --pgw-schema 'bad\"name' install` first")


def control_characters():
    """Names and reasons are printed with their control characters escaped
    (text output); JSON keeps them as they are (escaped by JSON)."""
    red = "\x1b[31mred"
    esc = "\\x1b[31mred"
    psql(f'CREATE TABLE "{red}" (a int)')
    rc, out, err = cli("snapshot", red, "--reason", "line\nbreak\u009b", "--store")
    check("snapshot: the table name and reason escaped",
          rc == 0 and out.startswith(f"public.{esc} (oid ") and
          "UTC, reason line\\x0abreak\\u009b\n" in out and "\x1b" not in out and
          "\u009b" not in out, repr(out + err))
    rc, out, err = cli("history", red)
    check("history: escaped", rc == 0 and out.startswith(f"1 snapshot of table {esc}, newest") and
          f"line\\x0abreak\\u009b" in out and out.rstrip("\n").endswith(f"public.{esc}") and
          "\x1b" not in out, repr(out + err))
    rc, out, err = cli("history", red, "--json")
    check("history --json: the name as it is", rc == 0 and json.loads(out)[0]["table"] == red,
          repr(out + err))
    rc, out, err = cli("drop", red, "--reason", "manual")
    check("drop: escaped", rc == 0 and out.startswith(f"dropped public.{esc}; snapshot ") and
          "\x1b" not in out, repr(out + err))
    rc, out, err = cli("report")
    check("report: escaped", rc == 0 and f"\npublic.{esc}: 2 snapshots" in out and
          f"public.{esc} -> public.{esc}\n" in out and "\x1b" not in out, repr(out + err))
    rc, out, err = cli("drop", red, "--reason", "manual")
    check("drop of a missing table: the warning on stderr escaped too",
          rc == 0 and err == f"pgwitness drop: warning: there is no table public.{esc}: nothing "
          "was dropped\n", repr(out + err))
    one_error_line("an error message quoting a name: escaped, one line",
                   *cli("snapshot", "bell\x07\nnext"), 1,
                   "no table public.bell\\x07\\x0anext in this database")


if __name__ == "__main__":
    sys.exit(main())
