#!/bin/bash
# rma_engine.sh — the engine's one-sided API (tests/sh/rma_engine.c) with
# every kind of memory (ibx_mem_alloc: node-local peers load / store and use
# CPU atomics; ibx_mem_map: CMA and read-modify-write under the owner's
# lock; ibx_mem_share: user memory moved into a segment, as alloc) at 1, 2 and 3 ranks on this machine (self and the shm path), 4
# ranks on 2 cores, then over verbs (IBX_PATHS=verbs) at 2 and 3 ranks on a
# verbs device: directly when this machine has one, else in the Soft-RoCE
# VM (tests/rxe/run-in-vm.sh). Exit 77 (skip) only when no part could run.
#   RMA_ENGINE_ROUNDS  atomic rounds per rank (default 500)
#   RMA_ENGINE_PARTS   "shm verbs" (default both)
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
ROUNDS=${RMA_ENGINE_ROUNDS:-500}
PARTS=${RMA_ENGINE_PARTS:-shm verbs}
BIN=$BUILD/tests/sh/rma_engine
RUN=$BUILD/bin/mpilite-run
[ -x "$BIN" ] && [ -x "$RUN" ] || { echo "no $BIN or $RUN: run make first"; exit 1; }

have_device() {
	[ -d /sys/class/infiniband ] && [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ]
}

# job NAME NP KIND [VAR=value...]: one job; exits the script on failure.
job() {
	local name=$1 np=$2 kind=$3 rc
	shift 3
	echo "rma_engine: $name: $np rank(s), $kind"
	env "$@" timeout -k 5 300 "$RUN" -n "$np" --timeout 280 "$BIN" "$kind" "$ROUNDS"
	rc=$?
	[ $rc -eq 0 ] || { echo "rma_engine: $name ($np ranks, $kind) failed: exit $rc"; exit 1; }
}

verbs_part() {
	for np in 2 3; do
		for kind in alloc map share; do
			job verbs "$np" "$kind" IBX_PATHS=verbs
		done
	done
}

if [ "${IBX_IN_RXE_VM:-0}" = 1 ]; then
	have_device || { echo "no verbs device in the VM"; exit 1; }
	verbs_part
	exit 0
fi

ran=0
if [[ " $PARTS " == *" shm "* ]]; then
	for np in 1 2 3; do
		for kind in alloc map share; do
			job shm "$np" "$kind"
		done
	done
	job oversubscribed 4 alloc
	job oversubscribed 4 map
	job oversubscribed 4 share
	ran=1
fi
if [[ " $PARTS " == *" verbs "* ]]; then
	if have_device; then
		verbs_part
		ran=1
	elif [ "${IBX_VERBS_NATIVE:-0}" = 1 ]; then
		echo "IBX_VERBS_NATIVE=1 but no verbs device"
		exit 1
	elif command -v qemu-system-x86_64 >/dev/null && [ -f tests/rxe/run-in-vm.sh ]; then
		IBX_IN_RXE_VM=1 IBX_RXE_PASSENV="IBX_IN_RXE_VM RMA_ENGINE_ROUNDS" \
			bash tests/rxe/run-in-vm.sh --timeout 480 -- bash tests/sh/rma_engine.sh ||
			{ echo "rma_engine: verbs part failed"; exit 1; }
		ran=1
	else
		echo "rma_engine: no verbs device and no Soft-RoCE VM: verbs part not run"
	fi
fi
[ $ran = 1 ] || exit 77
echo "rma_engine: all passed"
