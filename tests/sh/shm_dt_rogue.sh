#!/bin/bash
# shm_dt_rogue.sh — a receiver that lies in the shared-memory multi-w of typed
# messages (tests/sh/shm_dt_rogue.c, 2 ranks): a layout of noise, a layout
# never sent, a true layout too small for the message, a layout at an
# unmapped address, then an honest multi-w message, then a CTSM for a
# rendezvous that does not exist. The program checks each outcome (the
# send's status at the honest rank, the answer at the rogue, nothing written
# by a lie, the pair usable after rounds 1-4 and dropped after 6); this
# script checks the job's status and that the honest rank said why, each time,
# in its log. Skip (77) when the kernel refuses CMA between the ranks.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
BIN=$BUILD/tests/sh/shm_dt_rogue
RUN=$BUILD/bin/mpilite-run
[ -x "$BIN" ] && [ -x "$RUN" ] || { echo "no $BIN or $RUN: run make first"; exit 1; }
OUT=$(mktemp /tmp/shm_dt_rogue.XXXXXX) || exit 1
trap 'rm -f "$OUT"' EXIT
FAILS=0

timeout -k 5 120 "$RUN" -n 2 --timeout 110 "$BIN" >"$OUT" 2>&1
rc=$?
if grep -q "shm_dt_rogue: skip" "$OUT"; then
	cat "$OUT"
	exit 77
fi
expect() { # COUNT PATTERN WHAT
	local n
	n=$(grep -c -- "$2" "$OUT")
	if [ "$n" = "$1" ]; then echo "ok   $3"; else echo "FAIL $3 ($n lines, not $1)"; FAILS=$((FAILS + 1)); fi
}
if [ $rc = 0 ]; then echo "ok   the job ends with 0"; else echo "FAIL the job ends with $rc"; FAILS=$((FAILS + 1)); fi
expect 2 "shm_dt_rogue: rank [01] ok" "both ranks checked every round"
expect 3 "named a receive layout that is corrupt, was never sent, or is short" "rounds 1-3 logged as a bad layout"
expect 1 "multi-w to rank 1 .* failed: remote access error" "round 4 logged as a fault reading the layout"
expect 1 "malformed packet (type 8" "round 6 logged as a malformed packet"
expect 1 "lost rank 1 .*corrupt data from peer" "round 6 drops the rogue"
[ $FAILS = 0 ] || sed 's/^/    | /' "$OUT"
exit $((FAILS != 0))
