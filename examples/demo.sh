#!/usr/bin/env bash
# examples/demo.sh — the pgwitness demo on real data, against the server in
# the PG* environment. examples/quickstart runs it on a throwaway cluster;
# the test suite runs it too and checks its key lines.
#   examples/demo.sh BIN_DIR [DATA_DIR]
# BIN_DIR holds the built examples (pgwitness/pgwitness, ingest/...).
# PGW_TEST_WRAPPER, when set, is put before every run of the programs.
# Creates (and leaves, for you to explore) the databases
# ${PGWITNESS_DEMO_DB:-pgwitness_quickstart} (snapshots) and its _acme and
# _globex siblings (the two tenants).
set -euo pipefail
bin=$(cd "$1" && pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
data=${2:-$root/examples/data}
db=${PGWITNESS_DEMO_DB:-pgwitness_quickstart}
# The demo's databases: one for the snapshot half, one per tenant.
for d in "$db" "${db}_acme" "${db}_globex"; do
  PGDATABASE=postgres PGOPTIONS='-c client_min_messages=warning' psql -qX \
    -c "DROP DATABASE IF EXISTS \"$d\" WITH (FORCE)" -c "CREATE DATABASE \"$d\"" >/dev/null
done
export PGDATABASE=$db

step() { printf '\n$ %s\n' "$*"; "$@" 2>&1; }
# PGW_TEST_WRAPPER (the test suite's, e.g. valgrind ...): its words go
# before every run of the programs.
read -ra wrap <<<"${PGW_TEST_WRAPPER:-}"
pgwitness() { ${wrap[@]+"${wrap[@]}"} "$bin/pgwitness/pgwitness" "$@"; }
pgwitness-ingest() { ${wrap[@]+"${wrap[@]}"} "$bin/ingest/pgwitness-ingest" "$@"; }
pgwitness-tasks() { ${wrap[@]+"${wrap[@]}"} "$bin/tasks/pgwitness-tasks" "$@"; }
cd "$data"

echo "== 1. Format changes of a real dataset"
echo "palmerpenguins was published in three formats (examples/data/palmerpenguins)."
echo "A collector re-ingests it into one table; when the CSV header changes it"
echo "drops the old table through pgwitness's funnel, which snapshots it first."
step pgwitness install
step pgwitness-ingest --table penguins palmerpenguins/v1_penguins_raw.csv
step pgwitness baseline
step pgwitness-ingest --table penguins palmerpenguins/v2_penguins_size.csv
step pgwitness-ingest --table penguins palmerpenguins/v3_penguins.csv
step pgwitness baseline
step pgwitness history penguins
step pgwitness report

echo
echo "== 2. Live invalidation"
echo "The tasks example keeps tasks.list subscriptions of two tenants (each in its"
echo "own database) fresh: statement triggers notify, one listener feeds the"
echo "tenant-scoped reverse index, and every write is shown with the subscriptions"
echo "it refreshes or skips, and why. Then the listener's connection is killed:"
echo "writes made while nobody listens are covered by refreshing the tenant."
step pgwitness-tasks --tenant "acme=dbname=${db}_acme" --tenant "globex=dbname=${db}_globex" \
  --script
