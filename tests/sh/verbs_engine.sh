#!/bin/bash
# verbs_engine.sh — the verbs path's ops table with checked data, rendezvous
# truncation and a completion error (verbs_engine ops), then 100k small messages from each of 3 ranks to rank 0 over
# the verbs path (IBX_PATHS=verbs), checking order and content
# (tests/sh/verbs_engine.c). Needs a verbs device: runs directly when this
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
	mkdir -p "$(dirname "$BIN")"
	if [ ! -x "$BIN" ] || [ tests/sh/verbs_engine.c -nt "$BIN" ] || [ "$BUILD/lib/libibx.a" -nt "$BIN" ]; then
		${CC:-cc} -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter ${VERBS_ENGINE_CFLAGS:-} -Iinclude -Icore -o "$BIN" tests/sh/verbs_engine.c \
			"$BUILD/lib/libibx.a" $(pkg-config --libs pmix libibverbs librdmacm numa 2>/dev/null) \
			-lpthread -lm -ldl -lrt || { echo "cannot build $BIN"; exit 1; }
	fi
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
			exec bash tests/rxe/run-in-vm.sh --timeout 900 -- bash tests/sh/verbs_engine.sh
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
exit $rc
