#!/bin/bash
# spin_choice.sh — how long waiters spin before they yield (core/context.c,
# choose_spin_count): they yield at once only when the node-local ranks
# outnumber the CPUs that all of them together may run on (the union of
# their affinity masks, exchanged at init), not the CPUs of one rank.
#
#   1. 2 ranks, each pinned to its own CPU (bench/pin.sh): spin
#   2. 2 ranks, the whole job confined to one CPU (taskset): yield
#   3. more ranks than the machine's CPUs: yield
#   4. IBX_SPIN_COUNT given: it wins, no automatic choice is logged
# The decision is read from the engine's debug log (IBX_LOG=debug).
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
RUN=$BUILD/bin/mpilite-run
IBTEST=$BUILD/bin/ibtest
FAILS=0

[ -x "$RUN" ] && [ -x "$IBTEST" ] && [ -x "$BUILD/bench/barrier" ] || { echo "no $RUN or $IBTEST: run make first"; exit 1; }
NCPU=$(nproc)

# run NAME EXPECT(spin|yield|none) CMD... : one short job, decision checked
run() {
	local name=$1 want=$2 out got
	shift 2
	out=$(IBX_LOG=debug IBX_PATHS=shm timeout 60 "$@" 2>&1)
	if [ $? -ne 0 ]; then
		echo "FAIL $name: job failed"; printf '%s\n' "$out" | tail -n 5; FAILS=$((FAILS + 1)); return
	fi
	case $out in
	*"waiters yield at once"*) got=yield ;;
	*"waiters spin"*) got=spin ;;
	*) got=none ;;
	esac
	if [ "$got" = "$want" ]; then
		echo "ok   $name: $got"
	else
		echo "FAIL $name: expected $want, got $got"
		printf '%s\n' "$out" | grep -i "cpus\|spin" | head -n 4
		FAILS=$((FAILS + 1))
	fi
}

LAT="$IBTEST shm_lat -s 8 -n 100"
BAR="$BUILD/bench/barrier -n 100 -r 1"
if [ "$NCPU" -ge 2 ]; then
	run "2 ranks pinned one per CPU" spin "$RUN" -n 2 bench/pin.sh $LAT
else
	echo "skip 2 ranks pinned one per CPU: one CPU"
fi
run "2 ranks confined to one CPU" yield taskset -c 0 "$RUN" -n 2 $LAT
run "$((NCPU + 1)) ranks on $NCPU CPUs" yield "$RUN" -n $((NCPU + 1)) $BAR
IBX_SPIN_COUNT=1000 run "IBX_SPIN_COUNT set" none "$RUN" -n 2 -x IBX_SPIN_COUNT $LAT

[ $FAILS -eq 0 ] || { echo "$FAILS failed"; exit 1; }
echo "all passed"
