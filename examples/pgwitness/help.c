/*
 * examples/pgwitness/help.c — `pgwitness COMMAND --help`: enough to use each
 * command without reading the code.
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
    const char *command;
    const char *text;
    const char *more; /* the rest of a long text, or NULL */
} helps[] = {
    {"install",
     "usage: pgwitness install [-d CONNINFO] [--schema NAME] [--json]\n"
     "\n"
     "Creates pgwitness's schema (default \"pgwitness\") or upgrades it to this\n"
     "release's version: the snapshots table, the drop audit table, the trigger\n"
     "function. Safe to run again, and from several sessions at once. Needs\n"
     "CREATE on the database. Runs in its own transaction.\n", NULL},
    {"snapshot",
     "usage: pgwitness snapshot TABLE [--reason R] [--resource ID] [--store]\n"
     "                          [-o FILE] [--json]\n"
     "\n"
     "Captures what TABLE looks like now — columns, types, order, row estimate\n"
     "and each column's value profile from pg_stats — reading only the catalog,\n"
     "never the table. Prints a summary; with --json prints the snapshot\n"
     "document (docs/formats.md).\n"
     "  --reason R       why (default manual)\n"
     "  --resource ID    the upstream resource the table holds\n"
     "  --store          also store it in pgwitness's schema (needs install)\n"
     "  -o, --output F   also write the snapshot document to file F (through a\n"
     "                   temporary file beside it, renamed over F once the snapshot\n"
     "                   is captured and stored: a failure leaves F as it was; F's\n"
     "                   directory must be writable); -o - prints the document on\n"
     "                   standard output instead of the summary, as --json does\n"
     "With --store, \"stored as snapshot N\" ends the summary (on stderr with\n"
     "--json); an error after the store says the snapshot was stored, and its id.\n"
     "Run ANALYZE on the table first for value profiles; a table never analysed\n"
     "has names and types but no row estimate and no profiles.\n", NULL},
    {"baseline",
     "usage: pgwitness baseline [--schema PATTERN] [--table PATTERN] [--limit N]\n"
     "                          [--batch N] [--pgw-schema NAME] [--json]\n"
     "\n"
     "Snapshots live tables that have no snapshot of their current OID yet,\n"
     "oldest first, reason \"baseline\", reading the catalog many tables per\n"
     "query. Run it again to walk through a large backlog; when every table is\n"
     "covered it does nothing. Shows progress on a terminal.\n"
     "  --schema PATTERN  SQL LIKE pattern of schemas (default: all but system)\n"
     "  --table PATTERN   SQL LIKE pattern of tables (default: all)\n"
     "  --limit N         tables per run (default 1000)\n"
     "  --batch N         tables per catalog query (default 250)\n"
     "  --pgw-schema NAME pgwitness's own schema (--schema means the pattern here)\n"
     "A PATTERN is UTF-8 of at most 1024 bytes: _ matches one character, % any\n"
     "run of them, \\ takes the next character literally (\\\\ is a backslash).\n", NULL},
    {"drop",
     "usage: pgwitness drop TABLE --reason R [--resource ID] [--no-snapshot] [--json]\n"
     "\n"
     "Drops TABLE through the audited drop funnel: the table's lock first,\n"
     "waited for as DROP TABLE would (a session reading the table delays the\n"
     "drop; the session's lock_timeout bounds the wait, e.g.\n"
     "PGOPTIONS='-c lock_timeout=5s', and then nothing is dropped), then the\n"
     "snapshot (under a savepoint with short timeouts), then DROP TABLE, then\n"
     "an audit row. A failed snapshot never stops the drop; the output says\n"
     "why there is none.\n"
     "Reasons pgwitness knows: schema_mismatch_recreate, retain_raw_versions,\n"
     "raw_orphan_cleanup, empty_raw_bloat, manual; any other word is kept as is.\n"
     "PGWITNESS_SNAPSHOTS=0|off|false in the environment (or --no-snapshot)\n"
     "switches the snapshot off; the drop and its audit row still happen.\n", NULL},
    {"history",
     "usage: pgwitness history TABLE | --resource ID [--limit N] [--json]\n"
     "\n"
     "Lists the stored snapshots of a table (by schema and name) or of a\n"
     "resource, newest first: id, when, reason, schema hash, columns, rows.\n"
     "The ids are what `pgwitness diff A B` takes. A stored snapshot that does\n"
     "not decode (a newer format, a row edited by hand) is left out with a\n"
     "warning on stderr naming its id and why.\n", NULL},
    {"diff",
     "usage: pgwitness diff A B [--threshold X] [--json]\n"
     "       pgwitness diff TABLE [--threshold X] [--json]\n"
     "\n"
     "Compares two snapshots, older first. A and B are snapshot files (from\n"
     "`pgwitness snapshot -o`; no database needed) or stored snapshot ids (see\n"
     "history); TABLE alone compares its two newest stored snapshots. Shows\n"
     "renamed columns (recognised from their names and values: the combined\n"
     "score, its evidence, and its parts: name, values, type, position),\n"
     "removed, added, retyped (synonyms such as int4/integer are not changes),\n"
     "reordered, values that changed form under the same name, and anomalous\n"
     "names (BOM, surrounding spaces, control characters). With --json prints\n"
     "the diff document, format 2 (keys format, from, to, schema_changed, class,\n"
     "added, removed, type_changed, reordered, rename_method, renamed_candidates\n"
     "(each rename's from, to, from_type, to_type, score, evidence and parts),\n"
     "profile_changed, row_estimate, name_anomalies; docs/formats.md).\n"
     "  --threshold X   combined rename score needed, 0..1 (default 0.40)\n", NULL},
    {"report",
     "usage: pgwitness report [--since TIMESTAMP] [--resource ID] [--json]\n"
     "\n"
     "The drift report over the stored snapshots: snapshots of each resource\n"
     "(resource identity, else schema.table) in time order, each consecutive\n"
     "pair diffed and classified (unchanged, additive, subtractive, renamed,\n"
     "retyped, reordered, mixed); totals, the rate of change, and a timeline\n"
     "per resource. TIMESTAMP is RFC 3339 (2026-11-30T09:00:00Z) or a date.\n"
     "Stored snapshots that do not decode are left out, each with a warning on\n"
     "stderr naming its id and why.\n", NULL},
    {"prune",
     "usage: pgwitness prune --keep N [--json]\n"
     "\n"
     "Deletes old snapshots: per resource keeps the newest N and every\n"
     "snapshot on either side of a schema change, so each change stays visible\n"
     "as a pair. Prints how many were removed.\n", NULL},
    {"decide",
     "usage: pgwitness decide --deps FILE --write FILE [--json]\n"
     "       pgwitness decide --deps FILE --payload FILE [--json]\n"
     "       pgwitness decide --batch [--deps FILE] < lines\n"
     "\n"
     "Decides, without a database, whether a write must refresh a subscription,\n"
     "and says why. FILE holds the JSON forms of docs/wire.md: the\n"
     "subscription's dependencies and the write set. Prints `refresh (REASON):\n"
     "explanation` or `skip (REASON): explanation`; --json prints the verdict\n"
     "{\"verdict\": \"refresh\", \"reason\": \"FILTER_COLUMN_CHANGED\"}.\n"
     "FILE may be - for standard input; it holds at most 64 MiB.\n"
     "--payload FILE takes a notification payload as the triggers send it\n"
     "(docs/wire.md) instead of a write set, in the subscription's scope; one\n"
     "that is not faithful (another version, not JSON, over 7999 bytes) is\n"
     "decided as the listener would, with a note on stderr. Newlines at the\n"
     "end of FILE are not part of the payload.\n"
     "--batch reads JSON lines on stdin and prints one verdict per line, one JSON\n"
     "object per line (an {\"error\": ..., \"line\": N} line for a line it cannot\n"
     "decide, and exit status 1 at the end). Each line is {\"deps\": ..., \"write\":\n"
     "...}; with --deps FILE, each line is a write set alone, decided against that\n"
     "subscription — what `pgwitness watch --json` prints:\n"
     "  pgwitness watch tasks --json | pgwitness decide --batch --deps open.deps.json\n"
     "Blank lines are skipped. A line holds at most 64 MiB with --deps FILE, else\n"
     "128 MiB + 64 bytes (both documents); a longer one is an error line. Input\n"
     "that cannot be read ends the run with an error line and exit status 1.\n", NULL},
    {"watch",
     "usage: pgwitness watch TABLE... [--channel C] [--values COL,...] [--replace]\n"
     "                       [--enable-always] [--project P] [--tenant T]\n"
     "                       [--database D] [--seconds N] [--json]\n"
     "       pgwitness watch TABLE... --source=wal [--slot NAME] [--publication NAME]\n"
     "                       [--values COL,...] [--replace] [--project P] ...\n"
     "\n"
     "Installs pgwitness's statement triggers on the tables (needs install), all\n"
     "in one transaction (when one table fails, none is changed), and prints each\n"
     "write set as it arrives, after its transaction commits. Each TABLE is one\n"
     "argument (a comma is part of a name): rows are keyed by the table's primary\n"
     "key, and --values names the columns whose values to send. The triggers stay\n"
     "after watch exits (they cost nothing without listeners): a host listening\n"
     "on their channel depends on them. `pgwitness unwatch TABLE...` removes them.\n"
     "A table already watched with another channel, other value columns or\n"
     "another firing mode (ENABLE ALWAYS or not) is refused (exit 1, nothing\n"
     "changed): its listener would miss writes or values. Watch it with the same\n"
     "--channel, --values and --enable-always (or none), or give --replace.\n"
     "With --json, one JSON object per line: each write set in the write-set\n"
     "JSON form of docs/wire.md, its scope from the options below, ready for\n"
     "`pgwitness decide --batch --deps FILE` (FILE: a subscription's\n"
     "dependencies):\n"
     "  pgwitness watch tasks --json --tenant acme | \\\n"
     "    pgwitness decide --batch --deps open.deps.json\n"
     "In text, one line per write set, then with --values a line per row with\n"
     "its values: `  17: status \"open\" -> \"closed\"` (NULL for SQL NULL).\n"
     "Ctrl-C, SIGTERM or SIGHUP stops it, and so does output that cannot be\n"
     "written. Status lines go to stderr, the last one counting the write sets\n"
     "and the scope resets seen. A warning line names each relation whose writes\n"
     "are not seen (a partition or child made since the watch: watch the table\n"
     "again), once while the gap lasts: every reconnect finds it again, and it is\n"
     "said again only when it returns after a connect that found it closed.\n"
     "  --source S        where write sets come from: triggers (the default) or\n"
     "                    wal, the stream (below)\n"
     "  --channel C       notification channel (default pgwitness; triggers only)\n"
     "  --values COL,...  also send old/new values of these columns (each must be\n"
     "                    a column of a watched table: the triggers skip others;\n"
     "                    a name that is a column of none is refused, exit 2)\n"
     "  --replace         replace triggers installed with another channel, other\n"
     "                    value columns or another firing mode (whoever listens to\n"
     "                    them then misses writes)\n"
     "  --enable-always   install the triggers ENABLE ALWAYS (needs the table's\n"
     "                    owner): they fire also under session_replication_role =\n"
     "                    replica; without it, plain ENABLE (a table already\n"
     "                    watched ALWAYS is then refused, unless --replace).\n"
     "                    No trigger fires after ALTER TABLE ... DISABLE TRIGGER\n"
     "                    nor for logical replication's apply worker: use\n"
     "                    --source=wal there\n"
     "  --project P, --tenant T, --database D\n"
     "                    the scope written into each write set (default: no\n"
     "                    project or tenant, the connection's database); match\n"
     "                    them to the scope of the dependencies you decide against\n"
     "  --seconds N       stop after N seconds (default 0: run until interrupted)\n"
     "Every (re)connection first prints a scope reset (op \"reset\"): NOTIFY is\n"
     "not durable, so writes made while not listening are covered by refreshing\n"
     "all. When the server allows prepared transactions (max_prepared_transactions\n"
     "> 0), a warning line says that writers of the tables cannot use PREPARE\n"
     "TRANSACTION (a NOTIFY cannot be prepared); --source=wal has no such limit.\n",
     /* continued (a C string literal stays under 4095 bytes) */
     "\n"
     "--source=wal reads the write-ahead log instead (logical decoding with\n"
     "pgoutput; needs wal_level = logical, a free replication slot and a role\n"
     "that may replicate): the tables join a publication (with their\n"
     "inheritance children; a partitioned table brings its partitions), writers\n"
     "pay no trigger, and the write sets and their JSON lines are the same. A\n"
     "table without a primary key, a partition (watch its partitioned table)\n"
     "and a table whose replica identity would fail writers' UPDATE and DELETE\n"
     "are refused (exit 1, nothing changed). REPLICA IDENTITY FULL gives the\n"
     "changed columns of an update and the old values; otherwise both are\n"
     "unknown. A table already watched for the stream with other value columns\n"
     "is refused without --replace, as above. The tables stay published after\n"
     "watch exits; `pgwitness unwatch --source=wal TABLE...` takes them out.\n"
     "  --slot NAME       a permanent replication slot (1 to 63 bytes of a-z, 0-9\n"
     "                    and _), made on the first run: a later run resumes where\n"
     "                    this one stopped and prints what was committed meanwhile,\n"
     "                    with no scope reset. Without it, a temporary slot, made\n"
     "                    anew on every connection, each time with a scope reset.\n"
     "                    A slot keeps WAL while nothing reads it: see `pgwitness\n"
     "                    slots`, and drop it with `pgwitness slots drop NAME`.\n"
     "  --publication P   the publication (default pgwitness; made when missing)\n"
     "Delivery on a permanent slot is at least once: watch confirms what it\n"
     "printed about every second and once more when it stops; a run that was\n"
     "killed prints its last writes again when resumed. Status lines say where\n"
     "streaming starts and whether the scope was reset, a slot that was lost\n"
     "(dropped, or invalidated by max_slot_wal_keep_size: made again, with a\n"
     "scope reset), and writes the stream cannot see.\n"},
    {"unwatch",
     "usage: pgwitness unwatch TABLE... [--json]\n"
     "       pgwitness unwatch TABLE... --source=wal [--publication NAME] [--json]\n"
     "\n"
     "Removes the statement triggers `pgwitness watch` (or a host) installed on\n"
     "the tables (pgwitness_insert, _update, _delete and _truncate), all in one\n"
     "transaction: when one table fails (it does not exist), none is changed.\n"
     "Says for each table whether its triggers were removed or it was not\n"
     "watched. Whoever listens for the tables' writes stops receiving them.\n"
     "With --json prints [{\"schema\": ..., \"table\": ..., \"removed\": true}, ...].\n"
     "With --source=wal, takes the tables (and their inheritance children) out\n"
     "of the stream's publication (default pgwitness) and forgets their value\n"
     "columns, all tables or none; running streams stop reporting them. Slots\n"
     "stay: `pgwitness slots drop NAME` drops one.\n", NULL},
    {"announce",
     "usage: pgwitness announce TABLE... [--channel C] [--json]\n"
     "\n"
     "Announces that the tables' definitions changed (after a migration: ALTER\n"
     "COLUMN ... TYPE, ADD COLUMN with a volatile default, DROP or RENAME\n"
     "COLUMN, DROP TABLE...), so that every subscription reading them refreshes\n"
     "(reason DDL) with no later write: the ddl write set goes out, at commit,\n"
     "on the channel of each watched table's triggers (a partition or child\n"
     "names the watched table above it) and, when wal_level is logical, to the\n"
     "stream as a logical message. A dropped or unwatched table is announced\n"
     "by name on --channel, else pgwitness. --channel adds a channel. All\n"
     "tables in one transaction, or none. Needs no superuser, unlike\n"
     "`pgwitness ddl-trigger install`, but USAGE on the pgwitness schema.\n"
     "With --json prints [{\"schema\": ..., \"table\": ...}, ...].\n", NULL},
    {"ddl-trigger",
     "usage: pgwitness ddl-trigger install|remove [--json]\n"
     "\n"
     "Installs (or removes) the event triggers pgwitness_ddl_command_end and\n"
     "pgwitness_sql_drop, which announce every definition change of a watched\n"
     "table as `pgwitness announce` does, and give partitions and inheritance\n"
     "children made after a watch their triggers. Needs a superuser (PostgreSQL\n"
     "15: CREATE EVENT TRIGGER), also when there is nothing to do (exit 1);\n"
     "without one, run `pgwitness announce` after each migration. Idempotent. A\n"
     "failure inside them never fails the DDL: it is a WARNING. A dropped table\n"
     "is announced on its own channel; a table made again under a dropped\n"
     "watched table's name is watched again as it was.\n"
     "With --json prints {\"action\": \"install\", \"event_triggers\": [...],\n"
     "\"changed\": true} (changed false when there was nothing to do).\n",
     NULL},
    {"slots",
     "usage: pgwitness slots [--json]\n"
     "       pgwitness slots drop NAME [--force] [--json]\n"
     "\n"
     "Lists the logical replication slots of the database that use pgoutput,\n"
     "the stream's (`pgwitness watch --source=wal`), each with who made it\n"
     "(pgwitness: a pgwitness stream's permanent slot; other: anything else,\n"
     "temporary slots of running streams included), whether a walsender reads\n"
     "it now, its confirmed position, the WAL it keeps (retained: from its\n"
     "restart position; lag: from its confirmed position), wal_status and\n"
     "safe_wal_size (what may still be written before the server invalidates\n"
     "it, or unbounded without max_slot_wal_keep_size). A slot nothing reads\n"
     "keeps WAL until it is read or dropped: watch these numbers. With --json,\n"
     "an array of objects with the exact numbers: name, pgwitness, temporary,\n"
     "active, active_pid, database, plugin, restart_lsn, confirmed_lsn,\n"
     "retained_bytes, lag_bytes, wal_status, safe_wal_size (null: unbounded).\n"
     "\n"
     "`slots drop NAME` drops a slot, releasing its WAL: a stream that used it\n"
     "starts on a new slot with a scope reset, and changes since its confirmed\n"
     "position are not streamed. A slot in use, or that does not exist, is an\n"
     "error (exit 1). A slot pgwitness did not make (a subscriber's, a\n"
     "standby's) is refused unless --force: whoever reads it would lose what it\n"
     "keeps.\n", NULL},
};

const char *cli_help(const char *command)
{
    static char joined[8192];
    for (size_t i = 0; i < sizeof helps / sizeof helps[0]; i++) {
        if (strcmp(helps[i].command, command) != 0)
            continue;
        if (!helps[i].more)
            return helps[i].text;
        snprintf(joined, sizeof joined, "%s%s", helps[i].text, helps[i].more);
        return joined;
    }
    return "no help for this command\n";
}
