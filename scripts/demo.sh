#!/bin/sh
# demo.sh — the main job of the README (`make demo`): compile an unmodified
# MPI program with mpilite-cc, run it on 4 ranks with mpilite-run, then
# print the engine's latency and bandwidth tables between two ranks.
#
#   BUILD=build scripts/demo.sh        (after `make all`)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
BIN=$BUILD/bin
for t in mpilite-cc mpilite-run; do
	if [ ! -x "$BIN/$t" ]; then
		echo "demo: $BIN/$t is missing: run 'make' first" >&2
		exit 1
	fi
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ibx-demo.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

echo "== mpilite-cc -O2 -o ring examples/ring.c"
"$BIN/mpilite-cc" -O2 -o "$tmp/ring" examples/ring.c
echo
echo "== mpilite-run -n 4 ring"
"$BIN/mpilite-run" -n 4 --timeout 60 "$tmp/ring" 2000

if [ -x "$BIN/ibtest" ]; then
	echo
	echo "== mpilite-run -n 2 ibtest shm_lat -a   (half round trip, microseconds)"
	"$BIN/mpilite-run" -n 2 --timeout 120 "$BIN/ibtest" shm_lat -a
	echo
	echo "== mpilite-run -n 2 ibtest shm_bw -a"
	"$BIN/mpilite-run" -n 2 --timeout 120 "$BIN/ibtest" shm_bw -a
else
	echo "demo: $BIN/ibtest not built; skipping the latency/bandwidth tables"
fi
