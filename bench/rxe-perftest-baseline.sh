#!/bin/bash
# rxe-perftest-baseline.sh — perftest's 8-byte numbers on the Soft-RoCE device.
#
#   bench/rxe-perftest-baseline.sh [-n ITERS]
#
# Under emulation absolute times mean little (an 8-byte RDMA write takes
# ~10 us under TCG), so ibx's tools are judged by their ratio to perftest
# measured in the same boot. This runs, in one boot of the VM (or natively
# with IBX_VERBS_NATIVE=1), server and client of
#   ib_write_lat ib_send_lat ib_read_lat ib_atomic_lat ib_write_bw
# with 8-byte messages and prints a table. The same rows are written as TSV
# to $IBX_BENCH_OUT (default $BUILD/bench/rxe-perftest-baseline.tsv) so that
# a later comparison (ibtest against perftest) can read them.
#
# To compare another tool in the same boot, add a row function like
# row_perftest and a line to the ROWS table below.
# The whole script is one { } group, which bash parses completely before
# running any of it: a run takes minutes, and editing this file meanwhile
# must not make the running instance read a shifted text.
{
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
ITERS=5000
while [ $# -gt 0 ]; do
	case $1 in
	-n) ITERS=$2; shift 2 ;;
	*) echo "usage: $0 [-n ITERS]" >&2; exit 2 ;;
	esac
done
[[ $ITERS =~ ^[0-9]+$ ]] && [ "$ITERS" -ge 5 ] || { echo "$0: -n needs a number >= 5" >&2; exit 2; }

# shellcheck source=rxe_opts.inc
. bench/rxe_opts.inc
IBX_RXE_TIMEOUT=${IBX_RXE_TIMEOUT:-900} # this script's outer limit for the VM
rxe_boot bench/rxe-perftest-baseline.sh 1 -n "$ITERS"
rxe_device rxe-perftest-baseline

BUILD=${BUILD:-build}
OUT=${IBX_BENCH_OUT:-$BUILD/bench/rxe-perftest-baseline.tsv}
LOGDIR=$(dirname "$OUT")/rxe-perftest-logs
mkdir -p "$LOGDIR" || exit 1

# name | tool and its arguments (device, port, GID and server are added)
ROWS=(
	"write_lat|ib_write_lat -s 8 -n $ITERS"
	"send_lat|ib_send_lat -s 8 -n $ITERS"
	"read_lat|ib_read_lat -s 8 -n $ITERS"
	"atomic_lat|ib_atomic_lat -A FETCH_AND_ADD -n $ITERS"
	"write_bw|ib_write_bw -s 8 -n $ITERS -F"
)

# row_perftest NAME TOOL ARGS...: one server/client pair; prints a TSV row
#   name tool bytes iters typical_us avg_us p99_us  (latency tests)
#   name tool bytes iters bw_avg_MBps msg_rate_Mpps -  (bandwidth tests)
row_perftest() {
	local name=$1 tool=$2 log res
	shift 2
	log=$LOGDIR/$name
	if ! perftest_pair "$log" "$tool" "$@" || ! res=$(perftest_result "$log.client") || [ -z "$res" ]; then
		echo "$name: $tool failed; see $log.server / $log.client" >&2
		tail -n 5 "$log.server" "$log.client" | sed 's/^/    | /' >&2
		printf '%s\t%s\tFAILED\n' "$name" "$tool"
		return 1
	fi
	set -- $res
	case $tool in
	*_lat) printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$tool" "$1" "$2" "$5" "$6" "$8" ;;
	*_bw) printf '%s\t%s\t%s\t%s\t%s\t%s\t-\n' "$name" "$tool" "$1" "$2" "$4" "$5" ;;
	esac
}

status=0
{
	printf '# device=%s port=%s gid_index=%s kernel=%s date=%s\n' \
		"$VERBS_DEV" "$VERBS_PORT" "${VERBS_GID_INDEX:--}" "$(uname -r)" "$(date -u +%FT%TZ)"
	for row in "${ROWS[@]}"; do
		read -r -a cmd <<<"${row#*|}"
		row_perftest "${row%%|*}" "${cmd[@]}" || status=1
	done
} >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"

echo "perftest on $VERBS_DEV port $VERBS_PORT (kernel $(uname -r)), 8-byte messages, $ITERS iterations"
awk -F'\t' '
	/^#/ {next}
	BEGIN {printf "%-11s %-14s %6s %12s %12s %12s\n", "test", "tool", "bytes", "typical", "avg", "p99"}
	$3 == "FAILED" {printf "%-11s %-14s %s\n", $1, $2, "FAILED"; next}
	$2 ~ /_lat$/ {printf "%-11s %-14s %6s %9.2f us %9.2f us %9.2f us\n", $1, $2, $3, $5, $6, $7}
	$2 ~ /_bw$/  {printf "%-11s %-14s %6s %7.2f MB/s %7.3f Mpps\n", $1, $2, $3, $5, $6}
' "$OUT"
echo "(TSV: $OUT)"
exit $status
}
