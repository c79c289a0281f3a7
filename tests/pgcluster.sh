# tests/pgcluster.sh — sourced by tests/run and examples/quickstart.
# A throwaway PostgreSQL cluster: initdb into a fresh temporary directory,
# Unix socket only (listen_addresses=''), a free port, fsync=off,
# wal_level=logical with slots and senders for the stream; run as the
# `postgres` system user when invoked as root. pgw_cluster_start exports
# PGHOST, PGPORT, PGUSER, PGDATABASE; pgw_cluster_stop stops the server and
# removes the directory (call it from an EXIT trap).
# shellcheck shell=bash

pgw_pg_bindir() {
  if [ -n "${PGW_PG_BINDIR:-}" ]; then echo "$PGW_PG_BINDIR"; return; fi
  local d
  # shellcheck disable=SC2012
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [ -n "$d" ] && [ -x "$d/initdb" ]; then echo "$d"; return; fi
  d=$(command -v initdb 2>/dev/null) && { dirname "$d"; return; }
  echo "no PostgreSQL server binaries found (initdb); install the postgresql package or set PGW_PG_BINDIR" >&2
  return 1
}

# Runs a command as the cluster's owner.
pgw_as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

pgw_free_port() {
  local port
  for _ in $(seq 1 50); do
    port=$(( 20000 + (RANDOM * 32768 + RANDOM) % 40000 ))
    # Free for TCP too, so a later switch to TCP would not collide.
    if ! grep -qi ":$(printf '%04X' "$port") " /proc/net/tcp /proc/net/tcp6 2>/dev/null; then
      echo "$port"; return 0
    fi
  done
  echo 54329
}

pgw_cluster_start() {
  PGW_PG_BINDIR=$(pgw_pg_bindir)
  PGW_PG_VERSION=$("$PGW_PG_BINDIR/postgres" --version | awk '{print $3}')
  PGW_CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/pgwitness-pg.XXXXXX")
  export PGW_PG_BINDIR PGW_PG_VERSION PGW_CLUSTER_DIR
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || { echo "no 'postgres' system user to run the server as" >&2; return 1; }
    chown postgres "$PGW_CLUSTER_DIR"
  fi
  chmod 700 "$PGW_CLUSTER_DIR"
  local port
  port=$(pgw_free_port)
  pgw_as_owner mkdir -p "$PGW_CLUSTER_DIR/sock"
  if ! pgw_as_owner "$PGW_PG_BINDIR/initdb" -D "$PGW_CLUSTER_DIR/data" -U postgres \
        -A trust --encoding=UTF8 --no-locale --no-sync >"$PGW_CLUSTER_DIR/initdb.log" 2>&1; then
    cat "$PGW_CLUSTER_DIR/initdb.log" >&2
    echo "initdb failed" >&2
    return 1
  fi
  pgw_as_owner sh -c "cat >> '$PGW_CLUSTER_DIR/data/postgresql.conf'" <<CONF
# pgwitness throwaway test cluster
listen_addresses = ''
unix_socket_directories = '$PGW_CLUSTER_DIR/sock'
port = $port
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
log_min_messages = warning
# The stream (logical decoding, pgoutput): slots and walsenders for the
# tests' tenants, two-phase commit for the boundary tests. A walsender
# decodes only flushed WAL: under synchronous_commit = off a commit reaches
# it when the WAL writer flushes, so flush often.
wal_level = logical
max_wal_senders = 40
max_replication_slots = 40
max_prepared_transactions = 10
wal_writer_delay = 10ms
CONF
  if ! pgw_as_owner "$PGW_PG_BINDIR/pg_ctl" -D "$PGW_CLUSTER_DIR/data" \
        -l "$PGW_CLUSTER_DIR/server.log" -w -t 60 start >/dev/null; then
    cat "$PGW_CLUSTER_DIR/server.log" >&2
    echo "the PostgreSQL server did not start" >&2
    return 1
  fi
  # The socket directory must be reachable by the user running the tests.
  chmod 755 "$PGW_CLUSTER_DIR" 2>/dev/null || pgw_as_owner chmod 755 "$PGW_CLUSTER_DIR"
  export PGHOST="$PGW_CLUSTER_DIR/sock" PGPORT="$port" PGUSER=postgres PGDATABASE=postgres
}

pgw_cluster_stop() {
  [ -n "${PGW_CLUSTER_DIR:-}" ] && [ -d "$PGW_CLUSTER_DIR" ] || return 0
  if [ -f "$PGW_CLUSTER_DIR/data/postmaster.pid" ]; then
    pgw_as_owner "$PGW_PG_BINDIR/pg_ctl" -D "$PGW_CLUSTER_DIR/data" -m immediate -w \
      -t 30 stop >/dev/null 2>&1 || true
  fi
  rm -rf "$PGW_CLUSTER_DIR"
  PGW_CLUSTER_DIR=
}
