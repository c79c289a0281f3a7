# tests/deps.sh — sourced by tests/run and examples/quickstart.
# Ensures the Debian packages the project needs are installed: as root it
# installs the missing ones with apt-get; otherwise it prints the exact
# command to run and exits 1.
# shellcheck shell=bash

# What building and testing need: the toolchain, the three libraries, Check,
# a PostgreSQL server (initdb, pg_ctl, pgbench), valgrind for the memcheck
# pass, g++ for the header C++ check, python3 for the ABI checks. clang is
# not listed: tests/run replays the fuzz corpora with the normal compiler;
# running the libFuzzer targets themselves (tests/fuzz/meson.build) needs clang.
PGW_BUILD_PACKAGES="meson ninja-build pkg-config gcc libc6-dev binutils python3 libpq-dev libxxhash-dev libjansson-dev"
PGW_RUN_PACKAGES="postgresql"
PGW_TEST_PACKAGES="$PGW_BUILD_PACKAGES $PGW_RUN_PACKAGES check g++ valgrind"
export PGW_BUILD_PACKAGES PGW_RUN_PACKAGES PGW_TEST_PACKAGES

pgw_missing_packages() {
  local p missing=()
  for p in "$@"; do
    if ! dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii'; then
      missing+=("$p")
    fi
  done
  echo "${missing[*]:-}"
}

# pgw_ensure_packages WHO PACKAGE...
pgw_ensure_packages() {
  local who=$1; shift
  if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "==> $who: not a Debian system; make sure these are installed: $*" >&2
    return 0
  fi
  local missing
  missing=$(pgw_missing_packages "$@")
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" != 0 ]; then
    echo "$who: missing Debian packages: $missing" >&2
    echo "install them with:" >&2
    echo "  sudo apt-get install -y --no-install-recommends $missing" >&2
    exit 1
  fi
  echo "==> installing Debian packages: $missing"
  export DEBIAN_FRONTEND=noninteractive
  # A source outside the Debian mirror may be unreachable (CI has no other
  # network); apt-get update then fails for that source only, which is fine
  # as long as the install below succeeds.
  apt-get update -qq >/dev/null 2>&1 || echo "==> apt-get update reported errors (continuing)"
  # shellcheck disable=SC2086
  if ! apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>"${TMPDIR:-/tmp}/pgw-apt.err"; then
    cat "${TMPDIR:-/tmp}/pgw-apt.err" >&2
    echo "$who: apt-get install failed for: $missing" >&2
    exit 1
  fi
  missing=$(pgw_missing_packages "$@")
  if [ -n "$missing" ]; then
    echo "$who: still missing after apt-get install: $missing" >&2
    exit 1
  fi
}
