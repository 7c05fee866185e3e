#!/bin/bash
# verbs_engine.sh — the verbs path's ops table with checked data, rendezvous
# truncation and a completion error (verbs_engine ops), then 100k small
# messages from each of 3 ranks to rank 0 over the verbs path
# (IBX_PATHS=verbs), checking order and content (tests/sh/verbs_engine.c);
# then flow control at the minimum of 4 credits per peer (IBX_IB_RX_BUFS=32):
# the burst again (a fifth of it), and an 8-byte ping-pong in which every
# message is answered, so credits must ride on the answers: the counters
# each rank prints at finalize (IBX_LOG=info) must show (almost) no explicit
# credit returns — one RDMA write per message was the bug this catches. Needs a verbs device: runs directly when this
# machine has one (inside the Soft-RoCE VM, or IBX_VERBS_NATIVE=1 hardware),
# else boots the VM (tests/rxe/run-in-vm.sh) and runs itself in there.
# Exit 77 (skip) when neither is possible.
#   VERBS_ENGINE_COUNT  messages per sender (default 100000)
#   VERBS_ENGINE_NP     ranks (default 4)
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
COUNT=${VERBS_ENGINE_COUNT:-100000}
NP=${VERBS_ENGINE_NP:-4}
BIN=$BUILD/tests/sh/verbs_engine
RUN=$BUILD/bin/mpilite-run

have_device() {
	[ -d /sys/class/infiniband ] && [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ]
}

if [ "${IBX_IN_RXE_VM:-0}" != 1 ]; then
	# build on the host side (the VM sees the tree, not the compilers' cache)
	[ -f "$BUILD/lib/libibx.a" ] || { echo "no $BUILD/lib/libibx.a: run make first"; exit 1; }
	[ -x "$RUN" ] || { echo "no $RUN: run make first"; exit 1; }
	[ -x "$BIN" ] || { echo "no $BIN: run make first"; exit 1; }
	if ! have_device; then
		if [ "${IBX_VERBS_NATIVE:-0}" = 1 ]; then
			echo "IBX_VERBS_NATIVE=1 but no verbs device"
			exit 1
		fi
		if ! command -v qemu-system-x86_64 >/dev/null || [ ! -f tests/rxe/run-in-vm.sh ]; then
			echo "no verbs device and no Soft-RoCE VM"
			exit 77
		fi
		IBX_IN_RXE_VM=1 IBX_RXE_PASSENV="IBX_IN_RXE_VM VERBS_ENGINE_COUNT VERBS_ENGINE_NP" \
			exec bash tests/rxe/run-in-vm.sh --timeout 480 -- bash tests/sh/verbs_engine.sh
	fi
fi
have_device || { echo "no verbs device"; exit 1; }
# RNR NAKs would mean a receive queue ran dry: the credits must prevent it
rnr_count() {
	local f n=0
	for f in /sys/class/infiniband/*/ports/*/hw_counters/rcvd_rnr_err; do
		[ -r "$f" ] && n=$((n + $(cat "$f")))
	done
	echo $n
}
echo "verbs_engine: ops table, truncation, completion error ($NP ranks)"
IBX_PATHS=verbs timeout -k 5 300 "$RUN" -n "$NP" --timeout 280 "$BIN" ops
rc=$?
if [ $rc -ne 0 ]; then
	echo "verbs_engine: ops mode failed (exit $rc)"
	exit $rc
fi
echo "verbs_engine: $NP ranks, $COUNT messages per sender, IBX_PATHS=verbs"
start=$(date +%s)
rnr0=$(rnr_count)
IBX_PATHS=verbs timeout -k 5 600 "$RUN" -n "$NP" --timeout 580 "$BIN" "$COUNT"
rc=$?
rnr1=$(rnr_count)
echo "verbs_engine: exit $rc after $(($(date +%s) - start)) s, RNR NAKs received: $((rnr1 - rnr0))"
if [ $rc -eq 0 ] && [ "$rnr1" -ne "$rnr0" ]; then
	echo "verbs_engine: receivers were overrun ($((rnr1 - rnr0)) RNR NAKs): credit accounting is broken"
	rc=1
fi
[ $rc -eq 0 ] || exit $rc

# ---- the minimum credits ----------------------------------------------------------
# counters LOG FIELD: FIELD ("messages sent", "explicit credit returns", ...)
# of every rank's finalize line, one number per line.
counters() {
	sed -n 's/.*verbs path: \([0-9]*\) messages sent, \([0-9]*\) received, \([0-9]*\) explicit credit returns, .*/\1 \2 \3/p' "$1" |
		awk -v f="$2" '{ print $f }'
}
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
# at_min_credits WHAT NP LIMIT CMD...: an NP-rank job of CMD with 4 credits
# per peer and the finalize counters logged, its output in $LOG; ends the
# test when the job fails or the credits did not come down to 4.
at_min_credits() {
	local what=$1 np=$2 limit=$3 rc
	shift 3
	IBX_LOG=info IBX_IB_RX_BUFS=32 IBX_PATHS=verbs timeout -k 5 "$limit" "$RUN" -n "$np" \
		--timeout $((limit - 20)) "$@" >"$LOG" 2>&1
	rc=$?
	grep -v ' info ' "$LOG"
	if [ $rc -ne 0 ]; then
		echo "verbs_engine: $what at 4 credits failed (exit $rc)"; tail -n 5 "$LOG"; exit $rc
	fi
	if ! grep -q "$((np - 1)) peer(s), 4 credits each" "$LOG"; then
		echo "verbs_engine: $what: IBX_IB_RX_BUFS=32 did not bring the credits to 4:"
		grep "credits each" "$LOG"; exit 1
	fi
}
small=$((COUNT / 5 > 100 ? COUNT / 5 : 100))
echo "verbs_engine: $NP ranks, $small messages per sender, 4 credits per peer (IBX_IB_RX_BUFS=32)"
rnr0=$(rnr_count)
at_min_credits "the burst" "$NP" 600 "$BIN" "$small"
rnr1=$(rnr_count)
if [ "$rnr1" -ne "$rnr0" ]; then
	echo "verbs_engine: receivers were overrun at 4 credits ($((rnr1 - rnr0)) RNR NAKs)"; exit 1
fi
recvd=$(counters "$LOG" 2 | sort -n | tail -n 1)
returns=$(counters "$LOG" 3 | sort -n | tail -n 1)
echo "verbs_engine: the receiver got $recvd messages and returned credits $returns times without a message"
if [ "${recvd:-0}" -lt $((small * (NP - 1))) ] || [ "${returns:-0}" -lt $((small * (NP - 1) / 4)) ]; then
	# a silent receiver must hand back at least one credit per 4 messages
	echo "verbs_engine: counters do not add up (expected >= $((small * (NP - 1))) received, >= $((small * (NP - 1) / 4)) credit returns)"
	exit 1
fi

PP=$BUILD/bench/pingpong
ITERS=2000
[ -x "$PP" ] || { echo "no $PP: run make first"; exit 1; }
echo "verbs_engine: 2-rank ping-pong of $ITERS 8-byte messages at 4 credits"
at_min_credits "the ping-pong" 2 300 "$PP" -s 8 -n $ITERS -w 0
sent=$(counters "$LOG" 1 | paste -sd' ')
returns=$(counters "$LOG" 3 | paste -sd' ')
echo "verbs_engine: messages sent per rank: $sent; explicit credit returns per rank: $returns"
n=0
for v in $sent; do
	[ "$v" -ge $ITERS ] && n=$((n + 1))
done
[ $n -eq 2 ] || { echo "verbs_engine: expected 2 ranks with >= $ITERS messages sent each"; exit 1; }
for v in $returns; do
	if [ "$v" -gt $((ITERS / 100)) ]; then
		echo "verbs_engine: $v explicit credit returns for $ITERS answered messages: credits do not ride on the answers"
		exit 1
	fi
done
exit 0
