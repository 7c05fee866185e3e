#!/bin/bash
# shm_engine.sh — the node-local path (core/shm_lf) through the engine API
# under mpilite-run (tests/sh/shm_engine.c), and what it leaves in the
# shared-memory directory:
#
#   1. the functional suite with 2, 3 and 4 ranks (default thresholds);
#      with the pipelined copy only; with the single copy (CMA) for every
#      rendezvous; with both, CMA from 100000 bytes (sizes around it); with
#      a tiny geometry (8-slot rings, no eager, two 4 KiB pipe chunks) so
#      that every queue and wrap-around is hit; with two eager cells. The rendezvous copy: the
#      start-up calibration (IBX_SHM_CMA_THRESHOLD=auto) answers once, on
#      the lowest rank, within its time bound, and every rank logs the same
#      choice; each run's ranks report (IBX_LOG=info, at the end) how many
#      rendezvous each copy carried, which must match what was forced or
#      calibrated; with CMA refused by the kernel, none go by CMA
#   2. 100k tiny messages from each of 3 senders to one receiver that starts
#      late (full rings, queued sends, order and content checked)
#   3. a rank dies (SIGKILL): the survivor's pending receive and rendezvous
#      with it fail with IBX_ERR_UNREACHABLE instead of hanging
#   4. kill -9 of one rank in the middle of a run: nothing left behind
#   5. kill -9 of the ranks and the launcher while the ranks sit in
#      ibx_init with their segments created: the segments stay (nobody
#      could remove them), and the next job's init sweeps them (in a
#      private IBX_SHM_DIR, so that no other job on the machine sweeps them
#      first)
#
# After every run no ibx-<jobid>-* of that job may remain in IBX_SHM_DIR.
# BUILD=build-asan / build-tsan builds the program with the matching
# sanitizer against that build's libibx.a.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
SHM_DIR=${IBX_SHM_DIR:-/dev/shm}
BIN=$BUILD/tests/sh/shm_engine
RUN=$BUILD/bin/mpilite-run
LOG=$(mktemp -d /tmp/shm_engine.XXXXXX)
FAILS=0
trap '[ $FAILS -eq 0 ] && rm -rf "$LOG"' EXIT

[ -f "$BUILD/lib/libibx.a" ] || { echo "no $BUILD/lib/libibx.a: run make first"; exit 1; }
[ -x "$RUN" ] || { echo "no $RUN: run make first"; exit 1; }
case $BUILD in
*asan*) SAN="-fsanitize=address,undefined -fno-omit-frame-pointer" ;;
*tsan*) SAN="-fsanitize=thread -fno-omit-frame-pointer" ;;
*) SAN= ;;
esac
# libpmix keeps some of its allocations until exit: the suite's
# suppressions (tests/run-tests.sh sets them; here when run alone)
if [ -n "$SAN" ] && [ -z "${LSAN_OPTIONS:-}" ] && [ -f tests/lsan.supp ]; then
	export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0"
fi
[ -x "$BIN" ] || { echo "no $BIN: run make first"; exit 1; }

fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

# leftover JOBID: segments of that job still in the directory
leftover() { ls "$SHM_DIR" 2>/dev/null | grep -F "ibx-$1-" || true; }

# run NAME EXPECT_RC ENV... -- ARGS...: one mpilite-run job, output in $LOG/NAME
run() {
	local name=$1 expect=$2 rc job left
	shift 2
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	env "${envs[@]}" timeout -k 5 300 "$RUN" --timeout 280 "$@" >"$LOG/$name" 2>&1
	rc=$?
	job=$(sed -n 's/^shm_engine: job \([^ ,]*\),.*/\1/p' "$LOG/$name" | head -n 1)
	if [ "$rc" -ne "$expect" ]; then
		fail "$name: exit $rc, expected $expect"
		sed 's/^/    | /' "$LOG/$name" | tail -n 30
		return 1
	fi
	if [ -z "$job" ]; then
		fail "$name: no job id printed"
		return 1
	fi
	left=$(leftover "$job")
	if [ -n "$left" ]; then
		fail "$name: left in $SHM_DIR: $left"
		return 1
	fi
	echo "ok   $name"
}

# rndv NAME: "<pipe> <cma> <refused>", the rendezvous the ranks of run NAME
# received by each copy (summed over the ranks' end-of-run info lines)
rndv() {
	sed -n 's/.*shm: rendezvous received: \([0-9]*\) by the pipelined copy, \([0-9]*\) by CMA (\([0-9]*\) refused.*/\1 \2 \3/p' \
		"$LOG/$1" | awk '{ p += $1; c += $2; r += $3 } END { print p + 0, c + 0, r + 0 }'
}

# expect_rndv NAME WHAT: pipe-only | cma-only | both | refused
expect_rndv() {
	local p c r
	read -r p c r <<<"$(rndv "$1")"
	case $2 in
	pipe-only) [ "$p" -gt 0 ] && [ "$c" -eq 0 ] ;;
	cma-only) [ "$p" -eq 0 ] && [ "$c" -gt 0 ] ;;
	both) [ "$p" -gt 0 ] && [ "$c" -gt 0 ] ;;
	refused) [ "$p" -gt 0 ] && [ "$c" -eq 0 ] ;;
	esac || { fail "$1: rendezvous by pipe $p, CMA $c, refused $r: expected $2"; return 1; }
	echo "     $1: rendezvous by pipe $p, CMA $c, refused $r ($2)"
}

# 1. functional suite
for np in 2 3 4; do
	run "all-np$np" 0 IBX_LOG=warn -- -n $np "$BIN" all
done
run all-pipe 0 IBX_LOG=info IBX_SHM_CMA_THRESHOLD=0 -- -n 3 "$BIN" all &&
	expect_rndv all-pipe pipe-only
run all-cma 0 IBX_LOG=info IBX_SHM_CMA_THRESHOLD=1 -- -n 2 "$BIN" all &&
	expect_rndv all-cma cma-only
run all-both 0 IBX_LOG=info IBX_SHM_CMA_THRESHOLD=100000 -- -n 2 "$BIN" all &&
	expect_rndv all-both both
# the calibration: one measurement, bounded, the same answer everywhere,
# and the copies used are the ones it chose
if run calib 0 IBX_LOG=info IBX_SHM_CMA_THRESHOLD=auto -- -n 3 "$BIN" all; then
	ms=$(sed -n 's/.*shm: calibrated in \([0-9.]*\) ms.*/\1/p' "$LOG/calib")
	lines=$(grep -c 'shm: rendezvous copy: ' "$LOG/calib")
	choices=$(sed -n 's/.*\(shm: rendezvous copy: .*\)/\1/p' "$LOG/calib" | sort -u)
	if [ "$(echo "$ms" | grep -c .)" -ne 1 ] || ! grep -q '^ibx\[0:.*shm: calibrated in' "$LOG/calib"; then
		fail "calib: expected one calibration, by rank 0; got: $ms"
	elif ! awk -v t="$ms" 'BEGIN { exit !(t > 0 && t < 200) }'; then
		fail "calib: the calibration took $ms ms"
	elif [ "$lines" -ne 3 ] || [ "$(echo "$choices" | grep -c .)" -ne 1 ]; then
		fail "calib: $lines ranks logged their choice, expected 3, all alike: $choices"
	elif ! echo "$choices" | grep -Eq 'pipelined only \(calibrated by rank 0\)|CMA from (16384|65536|262144|1048576) \(calibrated by rank 0\)'; then
		fail "calib: not a threshold the calibration can give: $choices"
	else
		echo "     calib: $ms ms, $choices"
		case $choices in
		*"pipelined only"*) expect_rndv calib pipe-only ;;
		*"CMA from 16384 "*) expect_rndv calib cma-only ;;
		*) expect_rndv calib both ;;
		esac
	fi
fi
# CMA refused by the kernel (no CAP_SYS_PTRACE, non-dumpable ranks): at
# the connect probe, and after it (the first single copy is refused)
if command -v capsh >/dev/null && [ "$(id -u)" = 0 ]; then
	for when in before after; do
		run "nocma-$when" 0 IBX_LOG=info SHM_ENGINE_NODUMP=$when IBX_SHM_CMA_THRESHOLD=1 -- \
			-n 2 capsh --drop=cap_sys_ptrace -- -c "exec $BIN all" &&
			expect_rndv "nocma-$when" refused
	done
	# the refusal is logged: at the probe, or at the first copy
	grep -q 'CMA to rank 1 (pid [0-9]*) not usable' "$LOG/nocma-before" ||
		fail "nocma-before: no 'not usable' line from the connect probe"
	grep -q 'CMA from rank [01] refused' "$LOG/nocma-after" ||
		fail "nocma-after: no 'refused' line from the first single copy"
else
	echo "skip nocma-*: needs root and capsh"
fi
run all-tiny 0 IBX_SHM_RING_SLOTS=8 IBX_SHM_EAGER_LIMIT=0 IBX_SHM_PIPE_CHUNKS=2 \
	IBX_SHM_PIPE_CHUNK=4k -- -n 3 "$BIN" all
# the pipe's ring fixed at 2 chunks (the sender only 2 ahead), and the
# pipes cut to fit IBX_SHM_PIPE_MEM: 1 MiB for 2 peers of 64 KiB chunks
run all-ring2 0 IBX_SHM_PIPE_RING=2 -- -n 3 "$BIN" all
if run pipe-mem 0 IBX_LOG=debug IBX_SHM_PIPE_MEM=1m -- -n 3 "$BIN" all; then
	n=$(grep -c 'connected (pid [0-9]*, ring [0-9]* slots, pipe 8 x 65536' "$LOG/pipe-mem")
	[ "$n" -eq 6 ] || fail "pipe-mem: $n of 6 connections have 8 chunks of 64 KiB"
fi
# a ring of one chunk cannot pipeline: refused at init, with a reason
IBX_SHM_PIPE_RING=1 timeout -k 5 120 "$RUN" --timeout 100 -n 2 "$BIN" all >"$LOG/ring-one" 2>&1
rc=$?
if [ "$rc" -eq 0 ] || ! grep -q 'IBX_SHM_\* values out of range' "$LOG/ring-one"; then
	fail "ring-one: IBX_SHM_PIPE_RING=1 gave exit $rc without the range error"
	tail -n 5 "$LOG/ring-one" | sed 's/^/    | /'
else
	echo "ok   ring-one (refused at init, exit $rc)"
fi
# two eager cells and a small ring: 0.5-8 KiB messages find the cells
# full and take slots, in order with the ones in cells
run all-cells2 0 IBX_SHM_EAGER_CELLS=2 IBX_SHM_RING_SLOTS=512 -- -n 3 "$BIN" all

# 2. many to one
run burst 0 -- -n 4 "$BIN" burst 100000 && grep 'queued$' "$LOG/burst" | sed 's/^/     /'

# 3. peer death is detected
if run die 137 -- -n 2 "$BIN" die; then
	grep -q '^DETECTED' "$LOG/die" || { fail "die: the survivor did not see the death"; cat "$LOG/die"; }
	grep 'peer death seen' "$LOG/die" | sed 's/^/     /'
fi

# 4. kill -9 of a rank mid-run
"$RUN" -n 3 --timeout 120 "$BIN" burst 100000000 >"$LOG/kill" 2>&1 &
launcher=$!
job=
for _ in $(seq 100); do
	job=$(sed -n 's/^shm_engine: job \([^ ,]*\),.*/\1/p' "$LOG/kill" | head -n 1)
	[ -n "$job" ] && break
	sleep 0.1
done
sleep 0.5
victim=$(pgrep -P "$launcher" | sed -n 2p)
if [ -z "$job" ] || [ -z "$victim" ]; then
	fail "kill: the job did not start"
	cat "$LOG/kill"
	kill -9 "$launcher" 2>/dev/null
else
	kill -9 "$victim"
	wait "$launcher"
	rc=$?
	left=$(leftover "$job")
	if [ $rc -eq 0 ]; then
		fail "kill: the job exited 0 after a rank was killed"
	elif [ -n "$left" ]; then
		fail "kill: left in $SHM_DIR: $left"
	else
		echo "ok   kill -9 of rank pid $victim mid-run (job exit $rc), nothing left"
	fi
fi

# 5. everything killed between create and unlink; the next job sweeps.
# In a directory of our own: any ibx job that starts on this machine
# meanwhile would (rightly) sweep the stranded files before we look.
PRIV=$(mktemp -d "$SHM_DIR/ibxtest.XXXXXX")
IBX_SHM_DIR=$PRIV IBX_TEST_NP=3 "$RUN" -n 3 --timeout 200 "$BIN" stall 180 >"$LOG/stall" 2>&1 &
launcher=$!
job=
new=
for _ in $(seq 1200); do # start-up may be slow on a loaded machine (sanitizers)
	[ -z "$job" ] && job=$(sed -n 's/^shm_engine: job \([^ ,]*\), stalling/\1/p' "$LOG/stall" | head -n 1)
	[ -n "$job" ] && new=$(SHM_DIR=$PRIV leftover "$job")
	[ "$(echo "$new" | grep -c .)" -ge 2 ] && break
	sleep 0.05
done
ranks=$(pgrep -P "$launcher")
# where everything was, should the segments not have appeared
diag=$(ps -o pid,stat,wchan:24,etime,args -p "$launcher" $(for p in $ranks; do printf -- '-p %s ' "$p"; done) 2>&1)
# The launcher stopped first: neither it (sweeping the job's files when
# ranks die) nor the ranks (failing init, and unlinking, when the
# launcher's socket closes) get to clean up — as when the node loses the
# whole job at once.
kill -STOP "$launcher"
for p in $ranks; do kill -9 "$p"; done
kill -9 "$launcher"
{ wait "$launcher"; } 2>/dev/null
# PDEATHSIG kills the ranks; wait until they are dead (or zombies)
for _ in $(seq 100); do
	alive=0
	for p in $ranks; do
		kill -0 "$p" 2>/dev/null && [ "$(ps -o stat= -p "$p" | cut -c1)" != Z ] && alive=1
	done
	[ $alive = 0 ] && break
	sleep 0.05
done
new=$([ -n "$job" ] && SHM_DIR=$PRIV leftover "$job")
if [ "$(echo "$new" | grep -c .)" -lt 2 ]; then
	fail "stall: expected 2 stranded segments of job '$job', found: $new"
	cat "$LOG/stall"
	echo "$diag"
else
	echo "ok   stranded by kill -9 of ranks and launcher: $(echo $new)"
	SHM_DIR=$PRIV run sweep 0 IBX_SHM_DIR="$PRIV" -- -n 2 "$BIN" burst 10
	left=$(SHM_DIR=$PRIV leftover "$job")
	if [ -n "$left" ]; then
		fail "sweep: the next job did not remove: $left"
	else
		echo "ok   the next job's init swept them"
	fi
fi
rm -f "$PRIV"/ibx-* && rmdir "$PRIV"

if [ $FAILS -ne 0 ]; then
	echo "shm_engine: $FAILS failure(s); logs in $LOG"
	exit 1
fi
echo "shm_engine: all passed"
