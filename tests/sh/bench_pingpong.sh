#!/bin/bash
# bench_pingpong.sh — bench/pingpong's output, which bench/compare.sh and
# bench/rxe-compare.sh parse: one "<bytes> <usec>" line per size and, with
# -U, every timed iteration's half round trip as "<i>, <usec>" (the layout of
# ib_send_lat -U), numbered 1..n in order after its size's line.
#
#   1. -s 8 -n 500 -U: one data line, samples 1..500, all positive, their
#      mean not above the data line (the samples tile [t0, last stamp], a
#      part of the interval the data line averages; only rounding may add)
#   2. a sweep -m 8 -M 64 -n 20 -U: 4 sizes, 20 samples after each
#   3. without -U: data lines only
#   4. bad options: exit status 2 and the usage text, no data
# No figure is judged: only the shape and arithmetic of the output.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
RUN=$BUILD/bin/mpilite-run
PP=$BUILD/bench/pingpong
FAILS=0

[ -x "$RUN" ] && [ -x "$PP" ] || { echo "no $RUN or $PP: run make first"; exit 1; }

ok() { echo "ok   $1"; }
fail() { echo "FAIL $1"; FAILS=$((FAILS + 1)); }

# check_samples OUT SIZES N: for every size in SIZES (in order) one data line
# followed by exactly N samples numbered 1..N, each > 0, mean <= data line.
# Prints nothing when the output is right, else what is wrong.
check_samples() {
	awk -v sizes="$2" -v n="$3" '
	BEGIN { ns = split(sizes, want, " ") }
	/^#/ { next }
	NF == 2 && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9.]+$/ {
		close_size()
		if (++si > ns || $1 != want[si]) { print "unexpected data line: " $0; bad = 1 }
		line = $2; k = 0; sum = 0; next
	}
	/^[0-9]+, / {
		split($0, f, ", ")
		if (!si) { print "sample before any data line: " $0; bad = 1; next }
		if (f[1] != k + 1) { print "sample " f[1] " after " k; bad = 1 }
		if (!(f[2] + 0 > 0)) { print "sample not positive: " $0; bad = 1 }
		k = f[1]; sum += f[2]; next
	}
	{ print "stray line: " $0; bad = 1 }
	function close_size() {
		if (!si) return
		if (k != n) { print "size " want[si] ": " k " samples, not " n; bad = 1 }
		else if (n && sum / n > line + 0.002) {
			printf "size %s: sample mean %.4f above the data line %s\n", want[si], sum / n, line; bad = 1 }
	}
	END { close_size(); if (si != ns) print "sizes: " si " data lines, not " ns; if (bad || si != ns) exit 1 }' "$1"
}

# case NAME SIZES N ARGS...: a 2-rank run with ARGS; its output checked.
case_run() {
	local name=$1 sizes=$2 n=$3 out msg
	shift 3
	out=$(IBX_PATHS=shm timeout 120 "$RUN" -n 2 "$PP" "$@" 2>&1) || { fail "$name: run failed"; printf '%s\n' "$out" | tail -n 5; return; }
	if msg=$(check_samples <(printf '%s\n' "$out") "$sizes" "$n"); then
		ok "$name"
	else
		fail "$name"; printf '%s\n' "$msg" | head -n 5
	fi
}

case_run "-s 8 -n 500 -U: 500 samples" "8" 500 -s 8 -n 500 -w 50 -U
case_run "sweep 8..64 -n 20 -U: 20 samples per size" "8 16 32 64" 20 -m 8 -M 64 -n 20 -w 5 -U
case_run "without -U: data lines only" "8 16" 0 -m 8 -M 16 -n 50 -w 5

for bad in "-n 0" "-s 1x" "-U extra" "-m 64 -M 8"; do
	# shellcheck disable=SC2086
	out=$(IBX_PATHS=shm timeout 60 "$RUN" -n 2 "$PP" $bad 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && printf '%s\n' "$out" | grep -q "usage: pingpong" &&
		! printf '%s\n' "$out" | grep -Eq '^ +[0-9]+ +[0-9.]+$'; then
		ok "pingpong $bad: refused (exit $rc)"
	else
		fail "pingpong $bad: exit $rc"; printf '%s\n' "$out" | tail -n 3
	fi
done

[ $FAILS -eq 0 ] || { echo "$FAILS failed"; exit 1; }
echo "all passed"
