#!/bin/bash
# rxe-split.sh — where a verbs RDMA READ or atomic round trip spends its
# time in the Soft-RoCE VM: inside the doorbell system call (the emulated
# NIC, all kernel) or in user space between two doorbells (the program:
# post, poll, and for MPI the library's layers), for perftest, ibtest's own
# perftest twins, the engine's one-sided API and MPI one-sided operations,
# in one boot.
#
#   bench/rxe-split.sh [--reps N] [--lat-iters N] [--no-pin] [--settle S]
#                      [--timeout S] [--out FILE]
#
# Soft-RoCE rings its doorbell with write(2) on the uverbs file and runs the
# whole round trip inside it, so the LD_PRELOAD library
# $BUILD/bench/doorbell_split.so (bench/preload/doorbell_split.c) times
# every such write and the gap to the next one, and each program reports
# the medians at exit. The programs themselves are unchanged; the wrapper
# adds the same few instructions to every doorbell of each of them.
#
# Per repetition (the order alternates between repetitions):
#   read    ib_read_lat -s 8   ibtest read_lat -s 8   ibx_get + ibx_flush    MPI_Get + flush
#   atomic  ib_atomic_lat      ibtest atomic_lat      ibx_atomic + flush     MPI_Fetch_and_op + flush
# (the atomics without -s, as in bench/rxe-compare.sh: an 8-byte fetch-and-add)
# the engine rows being `IBX_PATHS=verbs mpilite-run -n 2 ibtest eng_rma_lat
# -o get|fadd` (rank 1 asleep), the MPI rows `IBX_PATHS=verbs mpilite-run -n
# 2 ibtest rma_lat -o get|fop -w allocate -y flush -s 8 --typical` (rank 0
# rings the doorbells; rank 1 waits in MPI_Barrier): the engine's rows less
# perftest's are what the engine adds, the MPI rows less the engine's what
# the MPI layer adds. Each figure is the median over the
# repetitions of a run's median; "total" is the tool's own t_typical.
# The table goes to stdout, every sample to $BUILD/bench/rxe-split.json
# (or --out), the runs' output to $BUILD/bench/rxe-split-logs/. Exit status
# 0 when every run worked, 1 otherwise. There are no targets: this says
# where a gap in bench/rxe-compare.sh's MPI rows comes from.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
ARGS=("$@")
REPS=5
LAT_ITERS=5000
TIMEOUT=180
OUT=
PIN=1
SETTLE=1
# shellcheck disable=SC2034 # checked by rxe_parse_args, unused here
BW_ITERS=10 PP_BLOCK=10 PP_WARMUP=0

# shellcheck source=rxe_opts.inc
. bench/rxe_opts.inc
rxe_parse_args rxe-split "$@"

rxe_boot bench/rxe-split.sh 1 "${ARGS[@]}"
rxe_device rxe-split

BUILD=${BUILD:-build}
IBTEST=$BUILD/bin/ibtest
MPIRUN=$BUILD/bin/mpilite-run
SPLIT_SO=$(realpath -m "$BUILD/bench/doorbell_split.so")
rxe_outputs
rxe_require "$IBTEST" "$MPIRUN" "$SPLIT_SO" -- ib_read_lat ib_atomic_lat
export IBX_DEVICE=${IBX_DEVICE:-$VERBS_DEV:$VERBS_PORT}

# shellcheck source=rxe_lib.inc
. bench/rxe_lib.inc

# split_env TAG: SPLIT_ENV, the environment (env's arguments) that preloads
# the wrapper for one run.
split_env() {
	SPLIT_ENV=(LD_PRELOAD="$SPLIT_SO" DOORBELL_SPLIT_OUT="$LOGDIR/$1.split" DOORBELL_SPLIT_TAG="$1")
}

# field_median LINE KEY: the median (first number) of KEY=median,p25,p75.
field_median() {
	local v=${1##* "$2"=}
	echo "${v%%,*}"
}

# add_split METRIC LANE: the in/gap medians of the run's doorbell ringer
# (the process with the most doorbells).
add_split() {
	local f=$LOGDIR/$1.$2.$REP.split line
	line=$(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^n=/) n = substr($i, 3) + 0
		if (n > best) { best = n; l = $0 } } END { print l }' "$f" 2>/dev/null)
	if [ -z "$line" ]; then
		run_failed "rxe-split: no doorbell report from $1 ($2, repetition $REP) in $f" "$f"
		return 1
	fi
	add "${1}_in" "$2" "$(field_median "$line" in_us)"
	add "${1}_gap" "$2" "$(field_median "$line" gap_us)"
}

# perftest_pair METRIC LANE CMD...: a server/client pair, both preloaded.
perftest_pair() {
	local m=$1 lane=$2
	shift 2
	split_env "$m.$lane.$REP"
	measure "$m" "$lane" 5 env "${SPLIT_ENV[@]}" "$@" && add_split "$m" "$lane"
}

# launched LANE METRIC FIELD CMD...: one 2-rank job over verbs under
# mpilite-run (both ranks preloaded, rank 0 ringing the doorbells); FIELD of
# the row of 8 bytes is the lane's total.
launched() {
	local lane=$1 m=$2 field=$3 log lat
	shift 3
	log=$LOGDIR/$m.$lane.$REP.log
	sleep "$SETTLE"
	split_env "$m.$lane.$REP"
	if env "${SPLIT_ENV[@]}" IBX_PATHS=verbs timeout -k 5 "$TIMEOUT" "$MPIRUN" -n 2 \
		"${PIN_RANKS[@]}" "$IBTEST" "$@" -n "$LAT_ITERS" >"$log" 2>&1 &&
		lat=$(awk -v f="$field" '$1 == "8" && $f ~ /^[0-9.]+$/ { print $f; exit }' "$log") &&
		[ -n "$lat" ]; then
		add "$m" "$lane" "$lat"
		add_split "$m" "$lane"
		return
	fi
	run_failed "rxe-split: ibtest $* over verbs (repetition $REP) failed; see $log" "$log"
}

# one_kind METRIC PERFTEST_TOOL IBTEST_CMD MPI_OP SWAP SIZE_OPTS...
one_kind() {
	local m=$1 pt=$2 it=$3 eop=$4 op=$5 swap=$6 lane order="perftest ibtest engine mpilite"
	shift 6
	[ "$swap" = 1 ] && order="mpilite engine ibtest perftest"
	for lane in $order; do
		case $lane in
		perftest) perftest_pair "$m" perftest "$pt" "$@" -n "$LAT_ITERS" ;;
		ibtest) perftest_pair "$m" ibtest "$IBTEST" "$it" "$@" -n "$LAT_ITERS" ;;
		engine) launched engine "$m" 5 eng_rma_lat -o "$eop" ;;
		mpilite) launched mpilite "$m" 2 rma_lat -o "$op" -w allocate -y flush -s 8 --typical ;;
		esac
	done
}

T0=$SECONDS
say "rxe-split: $VERBS_DEV port $VERBS_PORT, $REPS repetitions, -n $LAT_ITERS, pinned: $([ $PIN = 1 ] && echo "server ${PIN_S[2]}, client ${PIN_C[2]}" || echo no)"
for ((REP = 1; REP <= REPS; REP++)); do
	one_kind read ib_read_lat read_lat get get $((REP % 2 == 0)) -s 8
	one_kind atomic ib_atomic_lat atomic_lat fadd fop $((REP % 2 == 0))
	say "rxe-split: repetition $REP/$REPS done ($((SECONDS - T0)) s)"
done

echo
echo "rxe-split: $VERBS_DEV port $VERBS_PORT, kernel $(uname -r), $REPS repetitions (medians), $((SECONDS - T0)) s"
printf '%-34s %12s %12s %7s %7s  %-8s %s\n' "measurement" "perftest" "other" "ratio" "paired" "target" ""
for k in read atomic; do
	for lane in ibtest engine mpilite; do
		case $lane.$k in
		ibtest.*) what="ibtest ${k}_lat" ;;
		engine.read) what="ibx_get" ;;
		engine.*) what="ibx_atomic (fadd)" ;;
		mpilite.read) what=MPI_Get ;;
		*) what=MPI_Fetch_and_op ;;
		esac
		row "$what: total" us "$k" perftest "$lane" 1 - -
		row "$what: in the doorbell" us "${k}_in" perftest "$lane" 1 - -
		row "$what: between doorbells" us "${k}_gap" perftest "$lane" 1 - -
	done
done
echo "(total: each tool's t_typical; in the doorbell: median time inside the write(2) that rings it, where"
echo " Soft-RoCE runs the whole round trip; between doorbells: median user-space time from one doorbell's"
echo " return to the next one's call. Medians over the repetitions of each run's median.)"

write_json "$(printf '"reps": %s, "lat_iters": %s' "$REPS" "$LAT_ITERS")"
echo "(JSON: $OUT; logs: $LOGDIR)"
[ $NFAIL -eq 0 ] || { say "rxe-split: $NFAIL run(s) failed"; exit 1; }
exit 0
