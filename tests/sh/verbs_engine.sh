#!/bin/bash
# verbs_engine.sh — 100k small messages from each of 3 ranks to rank 0 over
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
		${CC:-cc} -std=gnu11 -O2 -g -Wall -Wextra -Iinclude -o "$BIN" tests/sh/verbs_engine.c \
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
echo "verbs_engine: $NP ranks, $COUNT messages per sender, IBX_PATHS=verbs"
start=$(date +%s)
IBX_PATHS=verbs timeout -k 5 600 "$RUN" -n "$NP" --timeout 580 "$BIN" "$COUNT"
rc=$?
echo "verbs_engine: exit $rc after $(($(date +%s) - start)) s"
exit $rc
