#!/bin/bash
# rxe-link.sh — across a link: mpi-lite against perftest between two
# emulated nodes joined by a veth pair, each with its own Soft-RoCE device
# (tests/rxe/link.sh), all in one boot of the VM.
#
#   bench/rxe-link.sh [--reps N] [--lat-iters N] [--bw-iters N]
#                     [--pp-block N] [--pp-warmup N] [--no-pin] [--settle S]
#                     [--timeout S] [--out FILE]
#
# perftest's server runs on rxn1 and its client on rxn0, so every packet
# crosses the link. mpi-lite runs as one job on two emulated nodes
# (mpilite-run --emulate-nodes 2:rxn0,rxn1): its ranks on different nodes
# talk over verbs, node-local ones over shared memory, as on a cluster.
# As in rxe-compare.sh, perftest and mpi-lite alternate within every
# repetition (who goes first alternates too), and each figure is the median
# over the repetitions.
#
# Measurements:
#   send_lat   ib_send_lat -s 8 -U against pingpong -s 8 -U at 1 rank per
#              node: per-iteration half round trips cut into blocks of
#              --pp-block, the first block left out, a run's figure the
#              median block mean (rxe-compare.sh explains why)
#   bw_1m      ib_write_bw -s 1 MiB (BW average) against stream -s 1m -W 64
#              at 1 rank per node (osu_bw's pattern: one buffer, a window of
#              64 non-blocking sends, a reply per window); stream's MB/s
#              (10^6 B/s) converted to perftest's (2^20 B/s)
#   allreduce  coll -c allreduce -s 8,1m at 2 nodes x 2 ranks: the
#              node-aware algorithms over the real node map (no target;
#              the median of coll's per-iteration medians)
# Targets, checked against the median of the per-repetition ratios:
#   mpi-lite Send/Recv 8 B / ib_send_lat       <= 1.15
#   mpi-lite 1 MiB bandwidth / ib_write_bw     >= 0.95
# The table goes to stdout, every sample and the ratios to
# $BUILD/bench/rxe-link.json (or --out), the runs' output to
# $BUILD/bench/rxe-link-logs/. Exit status: 0 when every run worked
# (targets missed are reported, not an error), 1 when runs failed.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
ARGS=("$@")
REPS=5
LAT_ITERS=2000
BW_ITERS=300
PP_BLOCK=10
PP_WARMUP=200
TIMEOUT=300
OUT=
PIN=1
SETTLE=1

# shellcheck source=rxe_opts.inc
. bench/rxe_opts.inc
rxe_parse_args rxe-link "$@"

rxe_boot bench/rxe-link.sh 0 "${ARGS[@]}"
rxe_device rxe-link
# shellcheck source=../tests/rxe/link.sh
. tests/rxe/link.sh
link_up || { echo "rxe-link: cannot set up the two-node link (tests/rxe/link.sh)" >&2; exit 1; }
VERBS_DEV=rxn1 VERBS_PORT=1 CLIENT_DEV=rxn0

BUILD=${BUILD:-build}
MPIRUN=$BUILD/bin/mpilite-run
PINGPONG=$BUILD/bench/pingpong
STREAM=$BUILD/bench/stream
COLL=$BUILD/bench/coll
rxe_outputs
rxe_require "$MPIRUN" "$PINGPONG" "$STREAM" "$COLL" -- ib_write_bw ib_send_lat
NODES=(--emulate-nodes "2:$LINK_DEVS")

# shellcheck source=rxe_lib.inc
. bench/rxe_lib.inc

# mpi_run LOG NP PROG ARGS...: one mpi-lite job on the two nodes.
mpi_run() {
	local log=$1 np=$2
	shift 2
	sleep "$SETTLE"
	timeout -k 5 "$TIMEOUT" "$MPIRUN" "${NODES[@]}" -n "$np" "${PIN_RANKS[@]}" "$@" >"$log" 2>&1 && return 0
	run_failed "rxe-link: $* on $np ranks (repetition $REP) failed; see $log" "$log"
	return 1
}

lat_perftest() {
	measure send_lat perftest 5 ib_send_lat -s 8 -n "$LAT_ITERS" -U &&
		add_sample_stats "$LOGDIR/send_lat.perftest.$REP.client" perftest
}
lat_mpilite() {
	local log=$LOGDIR/pingpong.$REP.log
	mpi_run "$log" 2 "$PINGPONG" -s 8 -n "$LAT_ITERS" -w "$PP_WARMUP" -U && add_sample_stats "$log" mpilite
}
bw_perftest() { measure bw_1m perftest 4 ib_write_bw -s 1048576 -n "$BW_ITERS"; }
bw_mpilite() {
	local log=$LOGDIR/stream.$REP.log v
	mpi_run "$log" 2 "$STREAM" -s 1048576 -W 64 -n $(((BW_ITERS + 63) / 64)) -w 1 || return
	v=$(awk '$1 == "1048576" && $2 ~ /^[0-9.]+$/ { printf "%.6g\n", $2 * 1e6 / 1048576; exit }' "$log")
	if [ -n "$v" ]; then add bw_1m mpilite "$v"; else NFAIL=$((NFAIL + 1)); say "rxe-link: no 1 MiB row in $log"; fi
}
coll_mpilite() {
	local log=$LOGDIR/coll.$REP.log s v
	mpi_run "$log" 4 "$COLL" -c allreduce -s 8,1m -t 2 || return
	for s in 8 1048576; do
		v=$(awk -v s="$s" '$1 == "allreduce" && $2 == s { print $3; exit }' "$log")
		[ -n "$v" ] && add "allreduce_$s" mpilite "$v"
	done
}

T0=$SECONDS
say "rxe-link: rxn0 -> rxn1 across ibxn0/ibxn1, $REPS repetitions, lat -n $LAT_ITERS, bw -n $BW_ITERS"
for ((REP = 1; REP <= REPS; REP++)); do
	if [ $((REP % 2)) = 1 ]; then
		lat_perftest; lat_mpilite; bw_perftest; bw_mpilite
	else
		lat_mpilite; lat_perftest; bw_mpilite; bw_perftest
	fi
	coll_mpilite
	say "rxe-link: repetition $REP/$REPS done ($((SECONDS - T0)) s)"
done

echo
echo "rxe-link: rxn0 <-> rxn1 over a veth link, kernel $(uname -r), $REPS repetitions (medians), $((SECONDS - T0)) s"
printf '%-34s %12s %12s %7s %7s  %-8s %s\n' "measurement" "perftest" "mpi-lite" "ratio" "paired" "target" ""
row "Send/Recv 8 B (blocks)" us send_blocks perftest mpilite 1 "<=" 1.15
row "Send/Recv 8 B (mean)" us send_mean perftest mpilite 1 - -
row "bandwidth 1 MiB (MB/s = 2^20 B/s)" MB/s bw_1m perftest mpilite 1 ">=" 0.95
for s in 8 1048576; do
	v=$(med "allreduce_$s" mpilite)
	printf '%-34s %12s %12s\n' "Allreduce $s B, 2 nodes x 2" - "${v:-n/a}${v:+ us}"
done
echo "(ratio: of the medians; paired: median of the per-repetition ratios, checked against the target."
echo " Send/Recv: ib_send_lat -U against pingpong -U, 1 rank per node; bandwidth: ib_write_bw against stream -W 64;"
echo " Allreduce: coll's median per-iteration time, MPI_DOUBLE MPI_SUM.)"
write_json "$(printf '"link": "rxn0-rxn1", "reps": %s, "lat_iters": %s, "bw_iters": %s, "pp_block": %s, "pp_warmup": %s' \
	"$REPS" "$LAT_ITERS" "$BW_ITERS" "$PP_BLOCK" "$PP_WARMUP")"
echo "(JSON: $OUT; logs: $LOGDIR)"
[ $NFAIL -eq 0 ] || { say "rxe-link: $NFAIL run(s) failed"; exit 1; }
exit 0
