#!/bin/bash
# doorbell_split.sh — the LD_PRELOAD library of bench/rxe-split.sh
# ($BUILD/bench/doorbell_split.so), on this host: with DOORBELL_SPLIT_PREFIX
# pointing at /dev/null, dd's writes to /dev/null play the doorbells.
#
#   1. 5000 writes to /dev/null: one report line with the tag, n = 4500
#      (the first 10 % left out), in_us and gap_us as three numbers each,
#      median between the quartiles, all of them positive
#   2. 5000 writes to a regular file (not under the prefix): no report
#   3. 50 writes to /dev/null: too few to report, no line
#   4. no DOORBELL_SPLIT_OUT: the line goes to stderr (a program that keeps
#      its stderr open and calls write(2) itself: python's os.write; stdio
#      inside libc does not go through the interposed symbol)
# Timings are only checked for being positive and ordered, never for size.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
SO=$(realpath -m "$BUILD/bench/doorbell_split.so")
FAILS=0

[ -e "$SO" ] || { echo "no $SO: run make first (it is not built under SAN)"; exit 1; }

ok() { echo "ok   $1"; }
fail() { echo "FAIL $1"; FAILS=$((FAILS + 1)); }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# run_dd OUT OF COUNT: dd COUNT 64-byte writes to OF, preloaded, reports to OUT.
run_dd() {
	DOORBELL_SPLIT_OUT=$1 DOORBELL_SPLIT_PREFIX=/dev/null DOORBELL_SPLIT_TAG=t1 LD_PRELOAD=$SO \
		dd if=/dev/zero of="$2" bs=64 count="$3" status=none
}

# check_line LINE N: prints what is wrong with a report line, nothing if right.
check_line() {
	echo "$1" | awk -v want="$2" '
	{
		if ($1 != "doorbell-split") print "no doorbell-split prefix"
		for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		if (f["tag"] != "t1") print "tag " f["tag"]
		if (f["pid"] !~ /^[0-9]+$/) print "pid " f["pid"]
		if (f["n"] != want) print "n " f["n"] " (want " want ")"
		for (k in f) if (k == "in_us" || k == "gap_us") {
			if (split(f[k], q, ",") != 3) { print k " has not 3 numbers"; continue }
			if (!(q[1] > 0 && q[2] > 0 && q[3] > 0)) print k " not positive: " f[k]
			if (!(q[2] <= q[1] && q[1] <= q[3])) print k " median outside its quartiles: " f[k]
		}
		if (!("in_us" in f) || !("gap_us" in f)) print "in_us or gap_us missing"
	}'
}

# 1
OUT=$TMP/1.out
if run_dd "$OUT" /dev/null 5000 && [ "$(wc -l <"$OUT")" = 1 ]; then
	bad=$(check_line "$(cat "$OUT")" 4500)
	[ -z "$bad" ] && ok "5000 doorbells: one report, n=4500, sane quartiles" ||
		fail "5000 doorbells: $bad ($(cat "$OUT"))"
else
	fail "5000 doorbells: expected one report line, got: $(cat "$OUT" 2>/dev/null)"
fi

# 2
OUT=$TMP/2.out
run_dd "$OUT" "$TMP/regular" 5000
[ ! -s "$OUT" ] && [ "$(stat -c %s "$TMP/regular")" = 320000 ] &&
	ok "writes to a file outside the prefix: not counted, data intact" ||
	fail "writes to a file outside the prefix: report '$(cat "$OUT" 2>/dev/null)', size $(stat -c %s "$TMP/regular")"

# 3
OUT=$TMP/3.out
run_dd "$OUT" /dev/null 50
[ ! -s "$OUT" ] && ok "50 doorbells: no report" || fail "50 doorbells: reported '$(cat "$OUT")'"

# 4
line=$(DOORBELL_SPLIT_PREFIX=/dev/null DOORBELL_SPLIT_TAG=t1 LD_PRELOAD=$SO \
	python3 -c 'import os
for _ in range(300): os.write(1, b"x")' 2>&1 >/dev/null)
bad=$(check_line "$line" 270)
[ -z "$bad" ] && ok "no DOORBELL_SPLIT_OUT: the report on stderr" ||
	fail "no DOORBELL_SPLIT_OUT: $bad ('$line')"

echo "doorbell_split: $FAILS failed"
[ "$FAILS" = 0 ]
