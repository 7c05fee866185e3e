#!/bin/bash
# dtype.sh — derived-datatype communication: mpi-lite side by side with Open
# MPI and MPICH on the vector benchmark of Wu, Wyckoff and Panda 2003, and
# mpi-lite's transfer schemes one by one (ibtest dtype).
#
#   bench/dtype.sh [--quick] [--reps N] [--timeout SECONDS] [--columns LIST]
#                  [--schemes LIST] [--lanes LIST] [--bind none|core]
#                  [--no-ibtest] [--out FILE] [--svg FILE]
#
# 1. bench/dtype_vec.c (plain MPI) built with mpilite-cc, mpicc.openmpi and
#    mpicc.mpich, 2 ranks: ping-pong latency of MPI_Type_vector(128, x, 4096,
#    MPI_INT) (x columns of a 128 x 4096 int array; one way, usec) and
#    MPI_Put of 128·x contiguous ints into that type (lock/put/unlock, usec
#    per epoch), each against the contiguous message of the same bytes.
#    Lanes:
#      mpilite   $BUILD/bin/mpilite-run -n 2 --bind-to none -x IBX_PATHS=shm
#      openmpi   mpirun.openmpi --allow-run-as-root --oversubscribe
#                --bind-to none --mca btl self,vader -np 2
#      mpich     mpirun.mpich -np 2
#    (--bind core: every lane through bench/pin.sh, one rank per core.)
# 2. ibtest dtype (mpi-lite over shm): the same latencies per transfer scheme
#    (--schemes, default all: auto, generic, bc-spup, rwg-up, p-rrs,
#    multi-w) and the contiguous reference, set per row with
#    ibx_dt_scheme_set; the "used" scheme of each row goes to the JSON.
#
# Every lane runs once per repetition, the lanes one after the other, so that
# drift of the machine hits all alike; each figure is the median of the
# repetitions (each run's own figure is the median over its iterations).
# Tables on stdout: per columns the vector latency of every lane, mpi-lite /
# the best other lane, and every lane's vector / contiguous ratio; then the
# schemes. The results with every sample go to $BUILD/bench/dtype.json (or
# --out), the runs' output to $BUILD/bench/dtype.log; --svg FILE keeps the
# last ibtest run's plot. Every run is under `timeout` (--timeout, default
# 300 s): a failed or hung run is left out of the median, a lane that cannot
# be built shows n/a. Run it on an idle machine: other work skews the numbers.
# The helpers (results store, medians, building and running a lane) are
# bench/compare_lib.inc's, shared with bench/compare.sh.
# shellcheck disable=SC2317,SC2034,SC2154,SC2004 # callbacks called through variables; globals of compare.sh's helpers
set -u
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac

REPS=5
TIMEOUT=300
QUICK=0
LANES="mpilite openmpi mpich"
COLUMNS=1,2,4,8,16,32,64,128,256,512,1024,2048
SCHEMES=all
BIND=none
IBTEST_PART=1
OUT=
SVG=
REF=
PROGS=dtype_vec

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
	--columns) COLUMNS=${2:?}; shift ;;
	--columns=*) COLUMNS=${1#*=} ;;
	--schemes) SCHEMES=${2:?}; shift ;;
	--schemes=*) SCHEMES=${1#*=} ;;
	--lanes) LANES=$(echo "${2:?}" | tr ',' ' '); shift ;;
	--lanes=*) LANES=$(echo "${1#*=}" | tr ',' ' ') ;;
	--bind) BIND=${2:?}; shift ;;
	--bind=*) BIND=${1#*=} ;;
	--no-ibtest) IBTEST_PART=0 ;;
	--out) OUT=${2:?}; shift ;;
	--out=*) OUT=${1#*=} ;;
	--svg) SVG=${2:?}; shift ;;
	--svg=*) SVG=${1#*=} ;;
	-h|--help) usage; exit 0 ;;
	*) echo "dtype.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
	esac
	shift
done
case "$REPS" in ''|*[!0-9]*|0) echo "dtype.sh: --reps needs a positive number" >&2; exit 2 ;; esac
case "$TIMEOUT" in ''|*[!0-9]*|0) echo "dtype.sh: --timeout needs seconds" >&2; exit 2 ;; esac
case "$COLUMNS" in ''|*[!0-9,]*) echo "dtype.sh: --columns needs numbers, e.g. 1,64,2048" >&2; exit 2 ;; esac
case "$BIND" in none|core) ;; *) echo "dtype.sh: --bind is none or core" >&2; exit 2 ;; esac
for lane in $LANES; do
	case "$lane" in mpilite|openmpi|mpich) ;; *) echo "dtype.sh: unknown lane '$lane'" >&2; exit 2 ;; esac
done
[ "$QUICK" = 1 ] && [ "$COLUMNS" = 1,2,4,8,16,32,64,128,256,512,1024,2048 ] && COLUMNS=1,16,256,2048
COLS=${COLUMNS//,/ }

OUTDIR=$BUILD/bench
mkdir -p "$OUTDIR"
OUT=${OUT:-$OUTDIR/dtype.json}
LOG=$OUTDIR/dtype.log
: >"$LOG"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ibx-dtype.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
PIN=$ROOT/bench/pin.sh
NCPU=$(nproc 2>/dev/null || echo 1)

# compare.sh's helpers (results store, building and running a lane, numbers)
# shellcheck source=bench/compare_lib.inc
. "$ROOT/bench/compare_lib.inc"
LANE_NAME[ibtest]="ibtest dtype"

# The launchers of this comparison (compare.sh pins Open MPI with
# --bind-to core; here every lane is unbound, or pinned alike by pin.sh).
launch() {
	local pin=
	[ "$BIND" = core ] && pin=" $PIN"
	case "$1" in
	mpilite) echo "$BUILD/bin/mpilite-run -n $2 --bind-to none -x IBX_PATHS=shm$pin" ;;
	openmpi) echo "mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader -np $2$pin" ;;
	mpich) echo "mpirun.mpich -np $2$pin" ;;
	esac
}

# ---- measurements ----------------------------------------------------------
MODES="lat put"
ITERS=
[ "$QUICK" = 1 ] && ITERS="-n 100"

# dtype_vec: one run per lane and repetition measures every row
vec_once() {
	local out mode layout x v
	# shellcheck disable=SC2086
	if ! out=$(run "$2" 2 dtype_vec -m lat,put -c "$COLUMNS" $ITERS) || [ -z "$out" ]; then
		say "    dtype_vec: $2 run $1 failed (see $LOG)"
		return
	fi
	for mode in $MODES; do
		for layout in vector contig; do
			for x in $COLS; do
				v=$(printf '%s\n' "$out" | awk -v m="$mode" -v l="$layout" -v x="$x" \
					'!/^#/ && $1 == m && $2 == l && $3 == x { print $5; exit }')
				[ -n "$v" ] && add_sample "${mode}_${layout}_$x" "$2" "$v"
			done
		done
	done
}

# ibtest dtype: one run per repetition, every scheme and the reference
declare -A USED
ib_once() {
	local out cmd pin=
	[ "$BIND" = core ] && pin=$PIN
	cmd="$BUILD/bin/mpilite-run -n 2 --bind-to none -x IBX_PATHS=shm $pin $BUILD/bin/ibtest dtype -b lat,put -c $COLUMNS -S $SCHEMES $ITERS${SVG:+ --svg $SVG}"
	log "run[ibtest]: $cmd"
	# shellcheck disable=SC2086
	out=$(timeout -k 10 "$TIMEOUT" $cmd 2>>"$LOG" </dev/null)
	local rc=$?
	printf '%s\n' "$out" >>"$LOG"
	if [ $rc -ne 0 ]; then
		say "    ibtest dtype: run $1 failed (exit $rc, see $LOG)"
		return
	fi
	while read -r bench scheme used x _ value _; do
		add_sample "ib_${bench}_${scheme}_$x" ibtest "$value"
		USED[ib_${bench}_${scheme}_$x]=$used
	done < <(printf '%s\n' "$out" | awk '$1 ~ /^vector_(lat|put_lat)$/ && NF >= 7')
}

ib_rounds() {
	local rep
	for ((rep = 1; rep <= REPS; rep++)); do ib_once "$rep"; done
}

# ---- output ----------------------------------------------------------------
vec_table() { # MODE TITLE
	local mode=$1 x lane best
	printf '\n%s, 2 ranks, median of %d runs (usec)\n' "$2" "$REPS"
	printf '%8s %9s' columns bytes
	for lane in $LANES; do printf '%12s' "${LANE_NAME[$lane]}"; done
	printf '%16s   vector/contiguous:' "mpi-lite/best"
	for lane in $LANES; do printf '%11s' "${LANE_NAME[$lane]}"; done
	printf '\n'
	for x in $COLS; do
		printf '%8s %9s' "$x" $((512 * x))
		for lane in $LANES; do printf '%12s' "$(fmt "${RES[${mode}_vector_$x|$lane]:-}")"; done
		ratio_vs_best "${mode}_vector_$x" min
		printf '%16s   %18s' "$(fmt "${RATIO[${mode}_vector_$x]:-}")" ""
		for lane in $LANES; do
			best=$(div "${RES[${mode}_vector_$x|$lane]:-}" "${RES[${mode}_contig_$x|$lane]:-}")
			printf '%11s' "$(fmt "$best")"
		done
		printf '\n'
	done
}

ib_names() {
	if [ "$SCHEMES" = all ]; then echo "auto generic bc-spup rwg-up p-rrs multi-w"; else echo "${SCHEMES//,/ }"; fi
}

ib_table() { # BENCH TITLE
	local b=$1 x s m
	printf '\n%s per scheme (ibtest dtype, mpi-lite over shm), median of %d runs (usec)\n' "$2" "$REPS"
	printf '%8s %12s' columns contiguous
	for s in $(ib_names); do printf '%10s' "$s"; done
	printf '\n'
	for x in $COLS; do
		m=ib_${b}_contiguous_$x
		# shellcheck disable=SC2086
		[ -n "${RAW[$m|ibtest]:-}" ] && RES[$m|ibtest]=$(median ${RAW[$m|ibtest]})
		printf '%8s %12s' "$x" "$(fmt "${RES[$m|ibtest]:-}")"
		for s in $(ib_names); do
			m=ib_${b}_${s}_$x
			# shellcheck disable=SC2086
			[ -n "${RAW[$m|ibtest]:-}" ] && RES[$m|ibtest]=$(median ${RAW[$m|ibtest]})
			printf '%10s' "$(fmt "${RES[$m|ibtest]:-}")"
		done
		printf '\n'
	done
}

write_json() {
	local mode layout x lane first=1 s b m f2 used
	{
		printf '{\n  "host": "%s",\n  "date": "%s",\n  "cpus": %s,\n  "reps": %d,\n  "bind": "%s",\n' \
			"$(hostname)" "$(date -u '+%Y-%m-%dT%H:%M:%SZ')" "$NCPU" "$REPS" "$BIND"
		printf '  "loadavg": {"start": %s, "end": %s},\n  "lanes": {' "$LOAD_START" "$LOAD_END"
		for lane in $LANES; do
			[ $first = 1 ] || printf ','
			printf '\n    "%s": {"ok": %s, "launcher": "%s"}' "$lane" \
				"$([ "${LANE_OK[$lane]:-0}" = 1 ] && echo true || echo false)" "$(launch "$lane" 2)"
			first=0
		done
		printf '\n  },\n  "dtype_vec": ['
		first=1
		for mode in $MODES; do
			for x in $COLS; do
				for layout in vector contig; do
					m=${mode}_${layout}_$x
					[ $first = 1 ] || printf ','
					first=0
					printf '\n    {"bench": "%s", "layout": "%s", "columns": %s, "bytes": %d, "unit": "us", "median": {' \
						"$mode" "$layout" "$x" $((512 * x))
					f2=1
					for lane in $LANES; do
						[ $f2 = 1 ] || printf ', '
						printf '"%s": %s' "$lane" "$(jnum "${RES[$m|$lane]:-}")"
						f2=0
					done
					printf '}, "samples": {'
					f2=1
					for lane in $LANES; do
						[ $f2 = 1 ] || printf ', '
						printf '"%s": %s' "$lane" "$(jlist "${RAW[$m|$lane]:-}")"
						f2=0
					done
					printf '}}'
				done
			done
		done
		printf '\n  ],\n  "ibtest_dtype": ['
		first=1
		for b in vector_lat vector_put_lat; do
			for x in $COLS; do
				for s in contiguous $(ib_names); do
					m=ib_${b}_${s}_$x
					[ -n "${RAW[$m|ibtest]:-}" ] || continue
					[ $first = 1 ] || printf ','
					first=0
					used=${USED[$m]:-}
					case "$used" in ''|-) used=null ;; *) used="\"$used\"" ;; esac
					printf '\n    {"bench": "%s", "scheme": "%s", "used": %s, "columns": %s, "bytes": %d, "unit": "us", "median": %s, "samples": %s}' \
						"$b" "$s" "$used" "$x" $((512 * x)) "$(jnum "${RES[$m|ibtest]:-}")" \
						"$(jlist "${RAW[$m|ibtest]}")"
				done
			done
		done
		printf '\n  ]\n}\n'
	} >"$OUT"
}

# ---- main ------------------------------------------------------------------
loadavg() { cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0; }
LOAD_START=$(loadavg)
if awk -v l="$LOAD_START" -v n="$NCPU" 'BEGIN { exit !(l > n / 2) }'; then
	say "dtype.sh: warning: load average $LOAD_START on $NCPU CPUs: other work will skew the numbers"
fi
say "dtype.sh: building ($LANES)"
for lane in $LANES; do build_lane "$lane" && LANE_OK[$lane]=1; done
say "dtype.sh: dtype_vec ($REPS runs per lane, ${TIMEOUT}s limit per run)"
rounds vec_once
for mode in $MODES; do
	for layout in vector contig; do
		for x in $COLS; do finish_metric "${mode}_${layout}_$x"; done
	done
done
if [ "$IBTEST_PART" = 1 ]; then
	if [ -x "$BUILD/bin/ibtest" ]; then
		say "dtype.sh: ibtest dtype ($REPS runs)"
		ib_rounds
	else
		say "dtype.sh: $BUILD/bin/ibtest not built: schemes skipped"
	fi
fi
LOAD_END=$(loadavg)
printf '\nibx bench/dtype.sh: MPI_Type_vector(128, x, 4096, MPI_INT) of a 128 x 4096 int array, bind %s (%s)\n' \
	"$BIND" "$(date '+%Y-%m-%d %H:%M')"
vec_table lat "Vector ping-pong latency, one way"
vec_table put "Vector MPI_Put latency, lock/put/unlock"
if [ "$IBTEST_PART" = 1 ]; then
	ib_table vector_lat "Vector ping-pong latency"
	ib_table vector_put_lat "Vector MPI_Put latency"
fi
printf '\nload average: %s at start, %s at end\njson: %s   log: %s\n' "$LOAD_START" "$LOAD_END" "$OUT" "$LOG"
write_json
for lane in $LANES; do [ "${LANE_OK[$lane]:-0}" = 1 ] && exit 0; done
exit 1
