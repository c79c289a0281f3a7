#!/bin/sh
# pgwitness as a meson subproject: a tiny project with subprojects/pgwitness
# pointing at this source tree finds both libraries through
# dependency('pgwitness') / dependency('pgwitness-pq') (the library's
# meson.override_dependency calls), builds, links and runs.
# usage: check_subproject.sh SOURCE_DIR
set -eu
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
echo "1..1"
mkdir -p "$tmp/subprojects"
ln -s "$src" "$tmp/subprojects/pgwitness"
cat > "$tmp/meson.build" <<'MESON'
project('host', 'c', default_options: ['c_std=c11'])
subproject('pgwitness', default_options: ['tests=false', 'examples=false', 'bench=false'])
core = dependency('pgwitness')
pq = dependency('pgwitness-pq')
executable('host', 'host.c', dependencies: [core, pq])
MESON
cat > "$tmp/host.c" <<'C'
#include <pgwitness/pgwitness-pq.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
    char h[PGW_SCHEMA_HASH_SIZE];
    const char *names[] = {"a", "b"};
    if (pgw_schema_hash(h, names, 2, NULL, NULL) != PGW_OK || strcmp(h, "50e9fe6f7fb8a296"))
        return 1;
    printf("subproject host ok: pgwitness %s\n", pgw_version());
    return pgw_pq_check(NULL, NULL, NULL) == PGW_EINVAL ? 0 : 1;
}
C
if (cd "$tmp" && meson setup build >"$tmp/log" 2>&1 && ninja -C build >>"$tmp/log" 2>&1) \
   && out=$("$tmp/build/host"); then
  echo "ok 1 - built and ran as a meson subproject: $out"
else
  echo "not ok 1 - built and ran as a meson subproject"
  sed 's/^/#   /' "$tmp/log" | tail -30
  exit 1
fi
