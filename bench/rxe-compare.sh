#!/bin/bash
# rxe-compare.sh — ibtest and mpi-lite against perftest on one verbs device,
# all in one boot of the Soft-RoCE VM (or natively with IBX_VERBS_NATIVE=1).
#
#   bench/rxe-compare.sh [--reps N] [--lat-iters N] [--bw-iters N]
#                        [--pp-block N] [--pp-warmup N]
#                        [--no-pin] [--settle S]
#                        [--timeout S] [--out FILE]
#
# Under emulation absolute times mean little, and on a shared 2-core host
# they drift with whatever else runs; so everything is measured back to
# back in one boot, perftest and its ibtest twin alternating within every
# repetition (which one goes first alternates too), and each figure is the
# median of the repetitions. Server and client of every pair run on the one
# device (rxed in the VM), the client connecting to the server's address.
# Both sides busy-poll, so the server is pinned to the first CPU and the
# client to the second (perftest and ibtest alike; the two MPI ranks through
# bench/pin.sh): two pollers that the scheduler happens to put on one vCPU
# turn a 15 us round trip into a time slice. --no-pin leaves placement to
# the scheduler. Before each pair the script waits --settle seconds (1), so
# that the kernel's deferred clean-up of the previous pair's QPs and memory
# does not run on a vCPU the next pair polls on.
#
# Measurements (perftest tool / ibtest command, same options for both):
#   write_bw    ib_write_bw -s 65536   BW average [MB/sec]
#   write_lat   ib_write_lat -s 8      t_typical [usec] (median; half RTT)
#   read_lat    ib_read_lat -s 8       t_typical (full round trip)
#   atomic_lat  ib_atomic_lat          t_typical (8-byte fetch-and-add)
#   send_lat    ib_send_lat -s 8       t_typical (half RTT)
#   mpi_sendrecv  IBX_PATHS=verbs mpilite-run -n 2 bench/pingpong -s 8 -U
#               (MPI_Send/MPI_Recv half round trip over core/qp) against
#               ib_send_lat -U, both with per-iteration samples.
#   engine_tag  IBX_PATHS=verbs mpilite-run -n 2 ibtest shm_lat -s 8: the
#               engine's tagged send/recv under MPI, over the same verbs
#               path, with per-iteration samples (t_typical); no target, it
#               shows how much of the mpi-lite figure is the engine's.
#   rma_put, rma_get, rma_fop (and rma_get_sleep, rma_fop_sleep: the same
#               with --target-sleeps, the idle target sleeping as perftest's
#               server does instead of polling in MPI_Barrier)
#               IBX_PATHS=verbs mpilite-run -n 2 ibtest rma_lat -w allocate
#               -y flush -s 8 -o put|get|fop --typical: MPI_Put / MPI_Get /
#               MPI_Fetch_and_op of 8 bytes on an MPI_Win_allocate window,
#               each completed by MPI_Win_flush (a full round trip), the
#               median of -n LAT_ITERS iterations, against the t_typical
#               of ib_write_lat (half a round trip), ib_read_lat and
#               ib_atomic_lat of the same repetition.
#   lock, lock_handoff
#               IBX_PATHS=verbs mpilite-run -n 2 ibtest lock -a mcs -p 2 -w 0:
#               the distributed mutex's (MCS) uncontended lock+unlock with
#               the home on the other rank (two atomics: swap, then
#               compare-and-swap), and the cycle of two ranks taking turns
#               (a hand-off: the unlocker writes the waiter's flag), both
#               against ib_atomic_lat's t_typical of the same repetition.
# The ranks are pinned one per CPU like perftest's processes; each then sees
# one allowed CPU for two node-local ranks, and the engine (core/context.c,
# choose_spin_count) makes its waiters yield after a few idle polls. That
# is measured as it is (IBX_SPIN_COUNT in the environment overrides it).
# On an emulated device shared with other work a mean is ruled by a few
# descheduled iterations, so the mpi-lite row compares like with like:
# ib_send_lat -U and pingpong -U both print every iteration's half round
# trip, in order, from one long run (-n LAT_ITERS; pingpong after
# --pp-warmup (200) untimed iterations, as osu_latency warms up); each run
# is cut into blocks of --pp-block (10) consecutive iterations, the first
# block left out (perftest has no warm-up), and the figure of a run is the
# median of its block means. The mean of the same samples is shown beside
# it (no target). Separate short pingpong runs would not do: under the
# VM's emulator (TCG) code met for the first time costs tens of
# microseconds, and a short run's few timed iterations pay for the exit
# from the warm-up loop and the first clock reads (measured: 20 us blocks
# against 14.5 us in steady state).
#
# Ratios and targets (checked against the median of the per-repetition
# ratios: the two runs of one repetition see the same load):
#   ibtest bw / perftest bw                     >= 0.95 (write_bw)
#   ibtest lat / perftest lat                   <= 1.05 (write, read, atomic)
#   ibtest send_lat / perftest send_lat         (shown, no target)
#   mpi-lite Send/Recv / ib_send_lat (blocks)   <= 1.15
#   MPI_Put+flush / ib_write_lat                <= 2.1
#   MPI_Get+flush / ib_read_lat                 <= 1.05
#   MPI_Fetch_and_op+flush / ib_atomic_lat      <= 1.05
# The table goes to stdout, every sample and the ratios to
# $BUILD/bench/rxe-compare.json (or --out), the runs' output to
# $BUILD/bench/rxe-compare-logs/. Exit status: 0 when every run worked
# (targets missed are reported, not an error), 1 when runs failed.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
ARGS=("$@")
REPS=9
LAT_ITERS=2000
BW_ITERS=2000
PP_BLOCK=10
PP_WARMUP=200
TIMEOUT=180
OUT=
PIN=1
SETTLE=1

# shellcheck source=rxe_opts.inc
. bench/rxe_opts.inc
rxe_parse_args rxe-compare "$@"

rxe_boot bench/rxe-compare.sh 1 "${ARGS[@]}"
rxe_device rxe-compare

BUILD=${BUILD:-build}
IBTEST=$BUILD/bin/ibtest
MPIRUN=$BUILD/bin/mpilite-run
PINGPONG=$BUILD/bench/pingpong
rxe_outputs
rxe_require "$IBTEST" "$MPIRUN" "$PINGPONG" -- ib_write_bw ib_write_lat ib_read_lat ib_atomic_lat ib_send_lat
export IBX_DEVICE=${IBX_DEVICE:-$VERBS_DEV:$VERBS_PORT}

# shellcheck source=rxe_lib.inc
. bench/rxe_lib.inc

# The measurements of one repetition; $1 = 0 or 1 says who goes first.
one_rep() {
	local swap=$1 m cmd lane field order
	local -A PT=([write_bw]=ib_write_bw [write_lat]=ib_write_lat [read_lat]=ib_read_lat
		[atomic_lat]=ib_atomic_lat [send_lat]=ib_send_lat)
	local -A OPTS=([write_bw]="-s 65536 -n $BW_ITERS" [write_lat]="-s 8 -n $LAT_ITERS"
		[read_lat]="-s 8 -n $LAT_ITERS" [atomic_lat]="-n $LAT_ITERS"
		[send_lat]="-s 8 -n $LAT_ITERS")
	for m in write_bw write_lat read_lat atomic_lat send_lat; do
		[ "$m" = write_bw ] && field=4 || field=5
		order="perftest ibtest"
		[ "$swap" = 1 ] && order="ibtest perftest"
		for lane in $order; do
			# shellcheck disable=SC2206
			local opts=(${OPTS[$m]})
			if [ "$lane" = perftest ]; then
				cmd=("${PT[$m]}" "${opts[@]}")
				[ "$m" = send_lat ] && cmd+=(-U)
			else
				cmd=("$IBTEST" "$m" "${opts[@]}")
			fi
			measure "$m" "$lane" "$field" "${cmd[@]}" || continue
			if [ "$m" = send_lat ] && [ "$lane" = perftest ]; then
				add_sample_stats "$LOGDIR/send_lat.perftest.$REP.client" perftest
			fi
		done
	done
}

# mpi-lite's MPI_Send/MPI_Recv over verbs, per-iteration samples.
pingpong_run() {
	local log=$LOGDIR/pingpong.$REP.log
	sleep "$SETTLE"
	if IBX_PATHS=verbs timeout -k 5 "$TIMEOUT" "$MPIRUN" -n 2 "${PIN_RANKS[@]}" "$PINGPONG" \
		-s 8 -n "$LAT_ITERS" -w "$PP_WARMUP" -U >"$log" 2>&1; then
		add_sample_stats "$log" mpilite
		return
	fi
	run_failed "rxe-compare: mpi-lite pingpong (repetition $REP) failed; see $log" "$log"
}

# The engine's tagged ping-pong over verbs, per-iteration samples (t_typical).
engine_tag_run() {
	local log=$LOGDIR/engine_tag.$1.log res
	sleep "$SETTLE"
	if IBX_PATHS=verbs timeout -k 5 "$TIMEOUT" "$MPIRUN" -n 2 "${PIN_RANKS[@]}" "$IBTEST" \
		shm_lat -s 8 -n "$LAT_ITERS" >"$log" 2>&1 &&
		res=$(perftest_result "$log") && [ -n "$res" ]; then
		add send_lat engine "$(echo "$res" | awk '{ print $5 }')"
		return 0
	fi
	run_failed "rxe-compare: ibtest shm_lat over verbs (run $1) failed; see $log" "$log"
}

# MPI one-sided operations over verbs: ibtest rma_lat's 8-byte median.
# The _sleep variants: the idle target sleeps (--target-sleeps) as
# perftest's server does, instead of polling in MPI_Barrier.
rma_run() {
	local op log lat name extra
	for name in put get fop get_sleep fop_sleep; do
		op=${name%_sleep}
		extra=()
		[ "$op" != "$name" ] && extra=(--target-sleeps)
		log=$LOGDIR/rma_$name.$REP.log
		sleep "$SETTLE"
		if IBX_PATHS=verbs timeout -k 5 "$TIMEOUT" "$MPIRUN" -n 2 "${PIN_RANKS[@]}" "$IBTEST" \
			rma_lat -o "$op" -w allocate -y flush -s 8 -n "$LAT_ITERS" --typical \
			"${extra[@]}" >"$log" 2>&1 &&
			lat=$(awk '$1 == "8" && $2 ~ /^[0-9.]+$/ { print $2; exit }' "$log") &&
			[ -n "$lat" ]; then
			add "rma_$name" mpilite "$lat"
			continue
		fi
		run_failed "rxe-compare: ibtest rma_lat -o $op over verbs (repetition $REP) failed; see $log" "$log"
	done
}

# The distributed mutex over verbs: ibtest lock's MCS figures.
lock_run() {
	local log un cyc
	log=$LOGDIR/lock.$REP.log
	sleep "$SETTLE"
	if IBX_PATHS=verbs timeout -k 5 "$TIMEOUT" "$MPIRUN" -n 2 "${PIN_RANKS[@]}" "$IBTEST" \
		lock -a mcs -p 2 -w 0 -u "$LAT_ITERS" -i "$LAT_ITERS" >"$log" 2>&1 &&
		un=$(awk '/^# uncontended/ { u = 1 } u && $1 == "mcs" { print $3; exit }' "$log") &&
		cyc=$(awk '/^# contended/ { c = 1 } c && $1 == "mcs" && $2 == "2" { print $5; exit }' "$log") &&
		[ -n "$un" ] && [ -n "$cyc" ]; then
		add lock mpilite "$un"
		add lock_handoff mpilite "$cyc"
		return 0
	fi
	run_failed "rxe-compare: ibtest lock over verbs (repetition $REP) failed; see $log" "$log"
}

T0=$SECONDS
say "rxe-compare: $VERBS_DEV port $VERBS_PORT, $REPS repetitions, lat -n $LAT_ITERS, bw -n $BW_ITERS, pingpong -w $PP_WARMUP, blocks of $PP_BLOCK, pinned: $([ $PIN = 1 ] && echo "server ${PIN_S[2]}, client ${PIN_C[2]}" || echo no)"
for ((REP = 1; REP <= REPS; REP++)); do
	# pingpong before the perftest/ibtest pairs in odd repetitions, after
	# them in even ones, so that drift within a repetition hits both sides
	[ $((REP % 2)) = 1 ] && pingpong_run
	one_rep $((REP % 2 == 0))
	[ $((REP % 2)) = 0 ] && pingpong_run
	engine_tag_run "$REP"
	rma_run
	lock_run
	say "rxe-compare: repetition $REP/$REPS done ($((SECONDS - T0)) s)"
done

# ---- table and JSON --------------------------------------------------------------
ROWS_JSON=()
echo
echo "rxe-compare: $VERBS_DEV port $VERBS_PORT, kernel $(uname -r), $REPS repetitions (medians), $((SECONDS - T0)) s"
printf '%-34s %12s %12s %7s %7s  %-8s %s\n' "measurement" "perftest" "ibx" "ratio" "paired" "target" ""
row "write_bw 64 KiB (BW average)" MB/s write_bw perftest ibtest 1 ">=" 0.95
row "write_lat 8 B (t_typical)" us write_lat perftest ibtest 1 "<=" 1.05
row "read_lat 8 B (t_typical)" us read_lat perftest ibtest 1 "<=" 1.05
row "atomic_lat 8 B (t_typical)" us atomic_lat perftest ibtest 1 "<=" 1.05
row "send_lat 8 B (t_typical)" us send_lat perftest ibtest 1 - -
row "engine tag send/recv 8 B (t_typ.)" us send_lat perftest engine 1 - -
row "mpi-lite Send/Recv 8 B (blocks)" us send_blocks perftest mpilite 1 "<=" 1.15
row "mpi-lite Send/Recv 8 B (mean)" us send_mean perftest mpilite 1 - -
rma_row() { cp "$LOGDIR/$2.perftest.samples" "$LOGDIR/$1.perftest.samples" 2>/dev/null; row "$3" us "$1" perftest mpilite 1 "<=" "$4"; }
rma_row rma_put write_lat "MPI_Put+flush 8 B / write_lat" 2.1
rma_row rma_get read_lat "MPI_Get+flush 8 B / read_lat" 1.05
rma_row rma_fop atomic_lat "MPI_Fetch_and_op 8 B / atomic_lat" 1.05
rma_row rma_get_sleep read_lat "MPI_Get, target asleep / read_lat" 1.05
rma_row rma_fop_sleep atomic_lat "Fetch_and_op, target asleep / atomic" 1.05
lock_row() { cp "$LOGDIR/atomic_lat.perftest.samples" "$LOGDIR/$1.perftest.samples" 2>/dev/null; row "$2" us "$1" perftest mpilite 1 - -; }
lock_row lock "MCS lock+unlock / atomic_lat"
lock_row lock_handoff "MCS hand-off, 2 ranks / atomic_lat"
echo "(ratio: of the medians; paired: median of the per-repetition ratios, checked against the target where given."
echo " mpi-lite rows: ib_send_lat -U against pingpong -U (-w $PP_WARMUP), -n $LAT_ITERS each, cut into blocks of"
echo " $PP_BLOCK iterations, the first left out; blocks: a run's median block mean; mean: of the same samples."
echo " MPI one-sided rows: ibtest rma_lat --typical (allocate window, MPI_Win_flush each) against perftest's t_typical;"
echo " MCS rows: ibtest lock -a mcs -p 2 -w 0, uncontended lock+unlock and the 2-rank cycle, against ib_atomic_lat.)"

write_json "$(printf '"reps": %s, "lat_iters": %s, "bw_iters": %s, "pp_block": %s, "pp_warmup": %s' \
	"$REPS" "$LAT_ITERS" "$BW_ITERS" "$PP_BLOCK" "$PP_WARMUP")"
echo "(JSON: $OUT; logs: $LOGDIR)"
[ $NFAIL -eq 0 ] || { say "rxe-compare: $NFAIL run(s) failed"; exit 1; }
exit 0
