#!/bin/bash
# compare.sh — mpi-lite side by side with Open MPI and MPICH on this machine
# (the `make bench` target).
#
#   bench/compare.sh [--quick] [--reps N] [--timeout SECONDS] [--lanes LIST]
#                    [--only LIST] [--ref BUILD_DIR] [--out FILE]
#
# Builds bench/{pingpong,stream,barrier,memcpy_bw,coll,pack,rma,mutex,io_atomic}.c with mpilite-cc,
# mpicc.openmpi and mpicc.mpich into a temporary directory and runs them
# back to back, one repetition of every lane after the other, so that drift
# of the VM hits all implementations alike. Each figure is the median of the
# repetitions. Lanes:
#
#   mpilite        $BUILD/bin/mpilite-run -n N bench/pin.sh PROG
#   openmpi        mpirun.openmpi --allow-run-as-root --bind-to core -np 2 PROG
#   openmpi-nocma  the same with --mca btl_vader_single_copy_mechanism none
#   mpich          mpirun.mpich -np N bench/pin.sh PROG
#   mpilite-ref    with --ref DIR: mpi-lite of another build (DIR/bin/mpilite-cc
#                  and mpilite-run), e.g. the last commit's, interleaved with
#                  the others for a before/after comparison in one run; it
#                  is shown, never counted among the "best of the others"
#
# 2-rank runs are pinned one rank per core (Open MPI binds by itself; the
# others go through bench/pin.sh, which reads the launcher's rank variable).
# The 4-rank barrier runs on the 2 cores, ranks round-robin over them
# (Open MPI: --oversubscribe --bind-to none plus pin.sh).
#
# Measurements (one function each, measure_*; add new ones the same way and
# list them in MEASUREMENTS; --only runs a subset, e.g. --only coll,pack):
#   latency   pingpong -s 8: half round trip of 8 bytes (usec);
#             ratio = mpi-lite / best of Open MPI and MPICH
#   stream    stream -s 4m: streaming bandwidth of 4 MiB messages (GB/s);
#             ratio = mpi-lite / memcpy bandwidth at 4 MiB
#   p2p       every size from 1 B to 4 MiB: latency (pingpong), osu_bw and
#             osu_bibw (stream, window of 64, one buffer per side: in
#             cache), and bandwidth from 64 KiB with 64 MiB of distinct
#             buffers per side (out of cache); bench/compare_p2p.inc.
#             ratio = mpi-lite / best of Open MPI and MPICH
#   barrier   barrier with 4 ranks on the 2 cores (usec);
#             ratio = mpi-lite / best of Open MPI and MPICH
#   coll      coll: osu-style latency of MPI_Allreduce (doubles, MPI_SUM),
#             MPI_Bcast and MPI_Alltoall (bytes per pair), with 2 ranks
#             (pinned) at every size from 8 B to 1 MiB and 4 ranks (on the
#             2 cores) at 8 B and 1 MiB, every iteration timed alone,
#             median over iterations (usec);
#             ratio = mpi-lite / best of Open MPI and MPICH
#   pack      pack: MPI_Pack of vector(N, B, 2B, MPI_BYTE), B = 64 B, 256 B,
#             4 KiB, 1 MiB packed, one process (GB/s); ratio = mpi-lite's
#             MPI_Pack / memcpy of the same blocks (a hand-written pack
#             loop) in the same run; the JSON also has every lane's ratio
#             and the ratio to one contiguous memcpy
#   rma       rma: MPI-3 one-sided, osu-style, rank 0 origin, rank 1 idle
#             target: MPI_Put / MPI_Get 8 B + MPI_Win_flush (MPI_Win_allocate,
#             lock_all), MPI_Put 8 B in MPI_Win_lock/unlock (MPI_Win_create)
#             and + flush (MPI_Win_create_dynamic), MPI_Accumulate,
#             MPI_Fetch_and_op, MPI_Compare_and_swap (8 B, + flush) (usec);
#             random 8-byte MPI_BXOR updates from both ranks over both
#             (million updates/s); osu_put_bw window of 64 puts + flush at
#             64 KiB and 4 MiB (GB/s); MPI_Win_fence with 4 ranks on the 2
#             cores (usec). One run per measurement, so that a lane lacking
#             one (Open MPI without CMA: no MPI_Win_create nor dynamic
#             windows) or crashing in one (Open MPI 4.1 with CMA:
#             MPI_Compare_and_swap) loses only that row; every run checks
#             its results (a wrong one fails the run).
#             ratio = mpi-lite / best of Open MPI and MPICH (the best is
#             the lowest latency, the highest rate or bandwidth)
#   lock      mutex: distributed mutex, lock+unlock uncontended (remote
#             home, 2 ranks) and overhead per hand-off with n = 2, 4, 8
#             ranks and 0 / 1 ms of work (Ross et al. 2005's algorithms on
#             Open MPI and MPICH, the better of two; MPIX_Mutex on
#             mpi-lite); bench/compare_lock.inc. A hung run is killed
#             (LOCK_TIMEOUT, default 30 s) and shows "timeout".
#             ratio = mpi-lite / best of Open MPI and MPICH
#   io        io_atomic: MPI_File_write_at of 128 KiB in 16 pieces, atomic
#             mode, 2 ranks on one region (filetype, memtype, 16 calls);
#             interleaved writes show "wrong" and never count as the best.
#             ratio = mpi-lite / best of Open MPI and MPICH
#   memcpy    memcpy_bw 64k 1m 4m, single thread (GB/s), the copy ceiling
#
# Every run has a time limit (--timeout, default 120 s): a hung run counts as
# failed, never blocks the script. A lane whose build fails (e.g. mpi-lite not
# built yet) is reported as n/a. The table goes to stdout; the results, with
# every sample, to $BUILD/bench/compare.json (or --out); the runs' output to
# $BUILD/bench/compare.log.
# shellcheck disable=SC2317 # measure_* and callbacks are called through variables
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

REPS=5
TIMEOUT=120
QUICK=0
LANES="mpilite openmpi openmpi-nocma mpich"
OUT=
REF=
MEASUREMENTS="memcpy latency stream p2p barrier coll pack rma lock io"
PROGS="pingpong stream barrier memcpy_bw coll pack rma mutex io_atomic"
ONLY=

usage() {
	sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e '/shellcheck/d' -e 's/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
	case "$1" in
	--quick) QUICK=1; REPS=2 ;;
	--reps) REPS=${2:?}; shift ;;
	--reps=*) REPS=${1#*=} ;;
	--timeout) TIMEOUT=${2:?}; shift ;;
	--timeout=*) TIMEOUT=${1#*=} ;;
	--lanes) LANES=$(echo "${2:?}" | tr ',' ' '); shift ;;
	--lanes=*) LANES=$(echo "${1#*=}" | tr ',' ' ') ;;
	--only) ONLY=$(echo "${2:?}" | tr ',' ' '); shift ;;
	--only=*) ONLY=$(echo "${1#*=}" | tr ',' ' ') ;;
	--out) OUT=${2:?}; shift ;;
	--ref) REF=${2:?}; shift ;;
	--ref=*) REF=${1#*=} ;;
	--out=*) OUT=${1#*=} ;;
	-h|--help) usage; exit 0 ;;
	*) echo "compare.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
	esac
	shift
done
case "$REPS" in ''|*[!0-9]*|0) echo "compare.sh: --reps needs a positive number" >&2; exit 2 ;; esac
case "$TIMEOUT" in ''|*[!0-9]*|0) echo "compare.sh: --timeout needs seconds" >&2; exit 2 ;; esac
if [ -n "$REF" ]; then
	case "$REF" in /*) ;; *) REF=$ROOT/$REF ;; esac
	case " $LANES " in *" mpilite-ref "*) ;; *) LANES="$LANES mpilite-ref" ;; esac
fi
if [ -n "$ONLY" ]; then
	for m in $ONLY; do
		case " $MEASUREMENTS " in *" $m "*) ;; *) echo "compare.sh: unknown measurement '$m'" >&2; exit 2 ;; esac
	done
	# memcpy stays: the stream ratio and the table footer use it
	MEASUREMENTS="memcpy ${ONLY//memcpy/}"
fi

OUTDIR=$BUILD/bench
mkdir -p "$OUTDIR"
OUT=${OUT:-$OUTDIR/compare.json}
LOG=$OUTDIR/compare.log
: >"$LOG"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ibx-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
PIN=$ROOT/bench/pin.sh
NCPU=$(nproc 2>/dev/null || echo 1)

# ---- results store, building, running: bench/compare_lib.inc ---------------
# shellcheck source=bench/compare_lib.inc
. "$ROOT/bench/compare_lib.inc"

# ---- measurements ----------------------------------------------------------
lat_once() {
	local v iters=
	[ "$QUICK" = 1 ] && iters="-n 3000"
	# shellcheck disable=SC2086
	v=$(run "$2" 2 pingpong -s 8 $iters | value_at 8 2)
	if [ -n "$v" ]; then add_sample latency "$2" "$v"; else say "    latency: $2 run $1 failed"; fi
}
measure_latency() {
	META_LABEL[latency]="8 B latency"; META_UNIT[latency]="usec"; META_JSON[latency]=latency_8B_us
	RATIO_LABEL[latency]="mpi-lite / best"
	ROWS+=(latency)
	rounds lat_once
	finish_metric latency
	ratio_vs_best latency min
}

stream_once() {
	local v
	v=$(run "$2" 2 stream -s 4m | value_at 4194304 2)
	if [ -n "$v" ]; then
		add_sample stream "$2" "$(awk -v x="$v" 'BEGIN { printf "%.4f", x / 1000 }')"
	else
		say "    stream: $2 run $1 failed"
	fi
}
measure_stream() {
	META_LABEL[stream]="4 MiB stream"; META_UNIT[stream]="GB/s"; META_JSON[stream]=stream_4MiB_GBps
	RATIO_LABEL[stream]="mpi-lite / memcpy"
	ROWS+=(stream)
	rounds stream_once
	finish_metric stream
	RATIO[stream]=$(div "${RES[stream|mpilite]:-}" "${RES[memcpy4m|memcpy]:-}")
}

# p2p: bench/compare_p2p.inc (the sweeps of every size)
# shellcheck source=bench/compare_p2p.inc
. "$ROOT/bench/compare_p2p.inc"
# lock, io: bench/compare_lock.inc (the mutex and MPI-IO atomic mode)
# shellcheck source=bench/compare_lock.inc
. "$ROOT/bench/compare_lock.inc"

barrier_once() {
	local v budget=4
	[ "$QUICK" = 1 ] && budget=2
	v=$(run "$2" 4 barrier -t "$budget" | awk '!/^#/ && NF >= 2 { print $2; exit }')
	if [ -n "$v" ]; then add_sample barrier "$2" "$v"; else say "    barrier: $2 run $1 failed"; fi
}
measure_barrier() {
	META_LABEL[barrier]="4-rank barrier, 2 cores"; META_UNIT[barrier]="usec"
	META_JSON[barrier]=barrier_4ranks_2cores_us
	RATIO_LABEL[barrier]="mpi-lite / best"
	ROWS+=(barrier)
	rounds barrier_once
	finish_metric barrier
	ratio_vs_best barrier min
}

# coll: one run per lane and rank count measures all the rows of that
# rank count (the program prints "op bytes median min iters").
COLL_OPS="allreduce bcast alltoall"
COLL_NPS="2 4"
coll_sizes() { # NP -> the sizes of its rows
	if [ "$1" = 2 ]; then
		awk 'BEGIN { for (s = 8; s <= 1048576; s *= 2) printf "%d ", s }'
	else
		echo "8 1048576"
	fi
}
coll_once() {
	local np out op sz v budget sizes
	for np in $COLL_NPS; do
		sizes=$(coll_sizes "$np")
		# 2 ranks: 18 sizes, a short budget each; 4 ranks on 2 cores: a
		# call may take a time slice there, 1 s each
		budget=1
		[ "$np" = 2 ] && budget=0.25
		out=$(run "$2" "$np" coll -c allreduce,bcast,alltoall -s "$(echo "$sizes" | xargs | tr ' ' ',')" -t "$budget")
		if [ -z "$out" ]; then
			say "    coll: $2 with $np ranks, run $1 failed"
			continue
		fi
		for op in $COLL_OPS; do
			for sz in $sizes; do
				v=$(printf '%s\n' "$out" | awk -v o="$op" -v s="$sz" '!/^#/ && $1 == o && $2 == s { print $3; exit }')
				[ -n "$v" ] && add_sample "coll_${op}_${sz}_np$np" "$2" "$v"
			done
		done
	done
}
measure_coll() {
	local np op sz m label l
	for np in $COLL_NPS; do
		for op in $COLL_OPS; do
			for sz in $(coll_sizes "$np"); do
				m=coll_${op}_${sz}_np$np
				l=$(p2p_size_label "$sz")
				label="$op $l, $np ranks"
				META_LABEL[$m]=${label^}; META_UNIT[$m]="usec"
				META_JSON[$m]="${op}_${l// /}_${np}ranks_us"
				RATIO_LABEL[$m]="mpi-lite / best"
				ROWS+=("$m")
			done
		done
	done
	rounds coll_once
	for m in "${ROWS[@]}"; do
		case "$m" in coll_*) finish_metric "$m"; ratio_vs_best "$m" min ;; esac
	done
}

# pack: one process; per block size the MPI_Pack figure is the row, the
# same run's memcpy of the same blocks the ratio's denominator.
PACK_BLOCKS="64 256 4096"
pack_once() {
	local out b v pk mc ct
	out=$(run "$2" 1 pack -r 7)
	if [ -z "$out" ]; then
		say "    pack: $2 run $1 failed"
		return
	fi
	for b in $PACK_BLOCKS; do
		v=$(printf '%s\n' "$out" | awk -v b="$b" '!/^#/ && $1 == b { print $2, $3, $4; exit }')
		[ -n "$v" ] || continue
		read -r pk mc ct <<<"$v"
		add_sample "pack_$b" "$2" "$pk"
		add_sample "packmc_$b" "$2" "$mc"
		add_sample "packcontig_$b" "$2" "$ct"
	done
}
measure_pack() {
	local b m lane
	for b in $PACK_BLOCKS; do
		m=pack_$b
		META_LABEL[$m]="MPI_Pack vector, $([ "$b" = 4096 ] && echo "4 KiB" || echo "$b B") blocks"
		META_UNIT[$m]="GB/s"; META_JSON[$m]="pack_vector_${b}B_GBps"
		RATIO_LABEL[$m]="mpi-lite / memcpy"
		ROWS+=("$m")
	done
	rounds pack_once
	for b in $PACK_BLOCKS; do
		for m in pack_$b packmc_$b packcontig_$b; do finish_metric "$m"; done
		RATIO[pack_$b]=$(div "${RES[pack_$b|mpilite]:-}" "${RES[packmc_$b|mpilite]:-}")
		for lane in $LANES; do
			PACK_RATIO[$b|$lane]=$(div "${RES[pack_$b|$lane]:-}" "${RES[packmc_$b|$lane]:-}")
			PACK_RATIO_C[$b|$lane]=$(div "${RES[pack_$b|$lane]:-}" "${RES[packcontig_$b|$lane]:-}")
		done
	done
}
declare -A PACK_RATIO PACK_RATIO_C

# rma: one run per measurement (see the header), 1 s budget each; the
# program prints "name bytes window sync median best unit ..." per line.
# RMA_ROWS: metric:measurement:bytes:ranks:min|max:label:json
RMA_ROWS=(
	"rma_put_lat:put_lat:8:2:min:RMA put 8 B, allocate+flush:rma_put_8B_allocate_flush_us"
	"rma_get_lat:get_lat:8:2:min:RMA get 8 B, allocate+flush:rma_get_8B_allocate_flush_us"
	"rma_put_lat_lock:put_lat_lock:8:2:min:RMA put 8 B, create+lock:rma_put_8B_create_lock_us"
	"rma_put_lat_dyn:put_lat_dyn:8:2:min:RMA put 8 B, dynamic+flush:rma_put_8B_dynamic_flush_us"
	"rma_acc_lat:acc_lat:8:2:min:RMA accumulate 8 B SUM:rma_acc_8B_sum_flush_us"
	"rma_fop_lat:fop_lat:8:2:min:RMA fetch_and_op 8 B SUM:rma_fop_8B_sum_flush_us"
	"rma_cas_lat:cas_lat:8:2:min:RMA compare_and_swap 8 B:rma_cas_8B_flush_us"
	"rma_xor_rate:xor_rate:8:2:max:RMA random XOR, 2 ranks:rma_xor_updates_Mps"
	"rma_put_bw_64k:put_bw:65536:2:max:RMA put_bw 64 KiB, window 64:rma_put_bw_64KiB_GBps"
	"rma_put_bw_4m:put_bw:4194304:2:max:RMA put_bw 4 MiB, window 64:rma_put_bw_4MiB_GBps"
	"rma_fence_lat:fence_lat:0:4:min:RMA fence, 4 ranks, 2 cores:rma_fence_4ranks_2cores_us"
)
rma_once() {
	local row m prog sz np how label json out v done_runs=" "
	for row in "${RMA_ROWS[@]}"; do
		IFS=: read -r m prog sz np how label json <<<"$row"
		# put_bw: both sizes come from one run
		case "$done_runs" in *" $prog "*) continue ;; esac
		done_runs="$done_runs$prog "
		if ! out=$(run "$2" "$np" rma -m "$prog" -b 64k,4m -t 1) || [ -z "$out" ]; then
			say "    rma $prog: $2 run $1 failed"
			continue
		fi
		local r2 m2 p2 s2 rest
		for r2 in "${RMA_ROWS[@]}"; do
			IFS=: read -r m2 p2 s2 rest <<<"$r2"
			[ "$p2" = "$prog" ] || continue
			v=$(printf '%s\n' "$out" | awk -v p="$p2" -v s="$s2" '!/^#/ && $1 == p && $2 == s { print $5; exit }')
			[ -n "$v" ] && add_sample "$m2" "$2" "$v"
		done
	done
}
measure_rma() {
	local row m prog sz np how label json unit
	for row in "${RMA_ROWS[@]}"; do
		IFS=: read -r m prog sz np how label json <<<"$row"
		case "$prog" in xor_rate) unit="Mupd/s" ;; put_bw) unit="GB/s" ;; *) unit="usec" ;; esac
		META_LABEL[$m]=$label; META_UNIT[$m]=$unit; META_JSON[$m]=$json
		RATIO_LABEL[$m]="mpi-lite / best"
		ROWS+=("$m")
	done
	rounds rma_once
	for row in "${RMA_ROWS[@]}"; do
		IFS=: read -r m prog sz np how label json <<<"$row"
		finish_metric "$m"
		ratio_vs_best "$m" "$how"
	done
}

# memcpy: one process, pinned to the first core; any lane's binary will do
# (it is plain C), the first one that built.
measure_memcpy() {
	local lane dir='' rep out s
	for lane in $LANES; do
		[ "${LANE_OK[$lane]:-0}" = 1 ] && { dir=$(lane_dir "$lane"); break; }
	done
	if [ -z "$dir" ]; then
		mkdir -p "$TMP/cc"
		dir=$TMP/cc
		cc -O2 -o "$dir/memcpy_bw" bench/memcpy_bw.c >>"$LOG" 2>&1 || { say "  memcpy_bw: build failed"; return; }
	fi
	for ((rep = 1; rep <= REPS; rep++)); do
		log "run[memcpy]: taskset -c 0 $dir/memcpy_bw 64k 1m 4m"
		if ! out=$(timeout -k 10 "$TIMEOUT" taskset -c 0 "$dir/memcpy_bw" 64k 1m 4m 2>>"$LOG"); then
			say "    memcpy: run $rep failed"
			continue
		fi
		log "$out"
		for s in 65536:memcpy64k 1048576:memcpy1m 4194304:memcpy4m; do
			local v
			v=$(printf '%s\n' "$out" | value_at "${s%%:*}" 2)
			[ -n "$v" ] && add_sample "${s#*:}" memcpy "$v"
		done
	done
	for s in memcpy64k memcpy1m memcpy4m; do
		# shellcheck disable=SC2086
		[ -n "${RAW[$s|memcpy]:-}" ] && RES[$s|memcpy]=$(median ${RAW[$s|memcpy]})
	done
}

# ---- output ----------------------------------------------------------------

print_table() {
	local m lane
	printf '\nibx bench: 2-rank runs pinned one rank per core, 4-rank runs on the %s cores; median of %d runs (%s)\n\n' \
		"$NCPU" "$REPS" "$(date '+%Y-%m-%d %H:%M')"
	printf '%-40s' ""
	for lane in $LANES; do printf '%13s' "${LANE_NAME[$lane]}"; done
	printf '   %s\n' "ratio"
	for m in "${ROWS[@]}"; do
		printf '%-40s' "${META_LABEL[$m]} (${META_UNIT[$m]})"
		for lane in $LANES; do
			if [ -n "${NOTE[$m|$lane]:-}" ]; then
				printf '%13s' "$(lock_cell "$m" "$lane")"
			else
				printf '%13s' "$(fmt "${RES[$m|$lane]:-}")"
			fi
		done
		printf '   %s = %s\n' "${RATIO_LABEL[$m]}" "$(fmt "${RATIO[$m]:-}")"
	done
	lock_footer
	printf '\nmemcpy, one thread (GB/s): 64 KiB %s, 1 MiB %s, 4 MiB %s\n' \
		"$(fmt "${RES[memcpy64k|memcpy]:-}")" "$(fmt "${RES[memcpy1m|memcpy]:-}")" \
		"$(fmt "${RES[memcpy4m|memcpy]:-}")"
	printf 'load average: %s at start, %s at end\n' "$LOAD_START" "$LOAD_END"
	printf 'json: %s   log: %s\n' "$OUT" "$LOG"
}


write_json() {
	local m lane first
	{
		printf '{\n  "host": "%s",\n  "date": "%s",\n  "cpus": %s,\n  "reps": %d,\n  "quick": %s,\n' \
			"$(hostname)" "$(date -u '+%Y-%m-%dT%H:%M:%SZ')" "$NCPU" "$REPS" \
			"$([ "$QUICK" = 1 ] && echo true || echo false)"
		printf '  "loadavg": {"start": %s, "end": %s},\n' "$LOAD_START" "$LOAD_END"
		printf '  "lanes": {'
		first=1
		for lane in $LANES; do
			[ $first = 1 ] || printf ','
			printf '\n    "%s": {"ok": %s, "launcher": "%s"}' "$lane" \
				"$([ "${LANE_OK[$lane]:-0}" = 1 ] && echo true || echo false)" \
				"$(launch "$lane" 2)"
			first=0
		done
		printf '\n  },\n  "results": {'
		first=1
		for m in "${ROWS[@]}"; do
			[ $first = 1 ] || printf ','
			first=0
			printf '\n    "%s": {' "${META_JSON[$m]}"
			for lane in $LANES; do
				printf '"%s": %s, ' "$lane" "$(jnum "${RES[$m|$lane]:-}")"
			done
			printf '"ratio": %s, "ratio_is": "%s",\n' "$(jnum "${RATIO[$m]:-}")" \
				"${RATIO_LABEL[$m]}"
			case "$m" in
			pack_*)
				local b=${m#pack_} f3=1
				printf '      "memcpy_blocks_GBps": {'
				for lane in $LANES; do
					[ $f3 = 1 ] || printf ', '
					printf '"%s": %s' "$lane" "$(jnum "${RES[packmc_$b|$lane]:-}")"
					f3=0
				done
				printf '},\n      "ratio_vs_memcpy_blocks": {'
				f3=1
				for lane in $LANES; do
					[ $f3 = 1 ] || printf ', '
					printf '"%s": %s' "$lane" "$(jnum "${PACK_RATIO[$b|$lane]:-}")"
					f3=0
				done
				printf '},\n      "ratio_vs_memcpy_contiguous": {'
				f3=1
				for lane in $LANES; do
					[ $f3 = 1 ] || printf ', '
					printf '"%s": %s' "$lane" "$(jnum "${PACK_RATIO_C[$b|$lane]:-}")"
					f3=0
				done
				printf '},\n' ;;
			lock_*|io_*) lock_json "$m" ;;
			esac
			printf '      "samples": {'
			local f2=1
			for lane in $LANES; do
				[ $f2 = 1 ] || printf ', '
				printf '"%s": %s' "$lane" "$(jlist "${RAW[$m|$lane]:-}")"
				f2=0
			done
			printf '}}'
		done
		printf ',\n    "memcpy_GBps": {"65536": %s, "1048576": %s, "4194304": %s,\n' \
			"$(jnum "${RES[memcpy64k|memcpy]:-}")" "$(jnum "${RES[memcpy1m|memcpy]:-}")" \
			"$(jnum "${RES[memcpy4m|memcpy]:-}")"
		printf '      "samples": {"65536": %s, "1048576": %s, "4194304": %s}}\n  }\n}\n' \
			"$(jlist "${RAW[memcpy64k|memcpy]:-}")" "$(jlist "${RAW[memcpy1m|memcpy]:-}")" \
			"$(jlist "${RAW[memcpy4m|memcpy]:-}")"
	} >"$OUT"
}

# ---- main ------------------------------------------------------------------
LOAD_START=$(loadavg)
if awk -v l="$LOAD_START" -v n="$NCPU" 'BEGIN { exit !(l > n / 2) }'; then
	say "compare.sh: warning: load average $LOAD_START on $NCPU CPUs: other work will skew the numbers"
fi
say "compare.sh: building ($LANES)"
for lane in $LANES; do
	case "$lane" in
	mpilite|openmpi|openmpi-nocma|mpich|mpilite-ref) ;;
	*) echo "compare.sh: unknown lane '$lane'" >&2; exit 2 ;;
	esac
	build_lane "$lane" && LANE_OK[$lane]=1
done
for m in $MEASUREMENTS; do
	say "compare.sh: $m ($REPS runs per lane, ${TIMEOUT}s limit per run)"
	"measure_$m"
done
LOAD_END=$(loadavg)
print_table
write_json
# a comparison with no implementation measured is a failure
for lane in $LANES; do [ "${LANE_OK[$lane]:-0}" = 1 ] && exit 0; done
exit 1
