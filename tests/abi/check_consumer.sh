#!/bin/sh
# Out-of-tree consumer test: install the build into a temporary directory,
# then build and run two small programs against that copy through pkg-config
# alone (the .pc files are relocatable: prefix=${pcfiledir}/...), and run
# the installed programs from the staged copy with their RUNPATH alone.
# usage: check_consumer.sh BUILD_DIR SOURCE_DIR CC
set -eu
build=$1 src=$2 cc=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
echo "1..5"
if meson install -C "$build" --destdir "$tmp/root" --no-rebuild --quiet >"$tmp/install.log" 2>&1; then
  echo "ok 1 - meson install into a temporary prefix"
else
  echo "not ok 1 - meson install into a temporary prefix"; sed 's/^/#   /' "$tmp/install.log"; exit 1
fi
pcdir=$(dirname "$(find "$tmp/root" -name pgwitness-pq.pc | head -n 1)")
PKG_CONFIG_PATH=$pcdir
export PKG_CONFIG_PATH
libdir=$(pkg-config --variable=libdir pgwitness)
n=2
for prog in consumer:pgwitness-pq consumer_libpq:"pgwitness-pq libpq"; do
  name=${prog%%:*} pkgs=${prog#*:}
  # shellcheck disable=SC2086,SC2046
  if $cc -std=c11 -Wall -Werror -o "$tmp/$name" "$src/$name.c" \
        $(pkg-config --cflags --libs $pkgs) "-Wl,-rpath,$libdir" >"$tmp/cc.log" 2>&1 \
     && out=$("$tmp/$name" 2>&1); then
    echo "ok $n - $name built with pkg-config $pkgs and ran: $out"
  else
    echo "not ok $n - $name built with pkg-config $pkgs and ran"
    sed 's/^/#   /' "$tmp/cc.log"; echo "#   ${out:-}"
    exit 1
  fi
  n=$((n + 1))
done
# xxHash is compiled in (header-only): an installed pgwitness must not ask
# pkg-config for it, or consumers on machines without libxxhash-dev fail.
reqs=$(pkg-config --print-requires --print-requires-private pgwitness pgwitness-pq)
case "$reqs" in
  *xxhash*) echo "not ok 4 - the .pc files name no xxHash"; echo "#   $reqs"; exit 1 ;;
  *) echo "ok 4 - the .pc files name no xxHash (requires: $(echo $reqs | tr '\n' ' '))" ;;
esac
# The installed programs find the installed libraries through their
# RUNPATH ($ORIGIN-relative, so the staged copy works), including a program
# that calls only adapter functions (libpgwitness-pq.so.0 must then find
# libpgwitness.so.0 through its own RUNPATH), with no LD_LIBRARY_PATH.
progs=$(find "$tmp/root" -path '*/bin/pgwitness*' -type f | sort)
if [ -z "$progs" ]; then
  echo "ok 5 # SKIP the programs are not built (-Dexamples=false)"
else
  bad=
  for p in $progs; do
    if ! env -u LD_LIBRARY_PATH "$p" --help >"$tmp/prog.log" 2>&1; then
      bad="$bad $(basename "$p")"
      sed 's/^/#   /' "$tmp/prog.log"
    fi
  done
  if [ -n "$bad" ]; then
    echo "not ok 5 - installed programs run with their RUNPATH alone: failed:$bad"; exit 1
  fi
  echo "ok 5 - installed programs run with their RUNPATH alone:" $(for p in $progs; do basename "$p"; done)
fi
