#!/bin/bash
# suite.sh — the verbs suite: ibx on a real verbs device.
#
#   bash tests/rxe/suite.sh       inside the Soft-RoCE VM, e.g.
#       tests/rxe/run-in-vm.sh --timeout 1800 -- bash tests/rxe/suite.sh
#   IBX_VERBS_NATIVE=1 bash tests/rxe/suite.sh      on a host with RDMA hardware
# Started on a host that is neither, it boots the VM itself.
#
# Prints one line per test, which tests/run-tests.sh (run_verbs) counts:
#   PASS name [(details)]    FAIL name [(details)] + indented log tail
#   SKIP name (reason)
# and exits non-zero when anything failed.
#
# Parts, in order (one function each; to add one, write part_<name> and add
# <name> to PARTS):
#   device    ibv_devinfo shows the device with an active port
#   perftest  a real ib_write_lat pair between two processes on the device
#   rdmacm    an rping pair (librdmacm connection set-up, verified payloads)
#   unit      every $BUILD/tests/unit/test_verbs_* and test_reg_cache* (cmocka)
#   mpi       tests/run-tests.sh mpi with IBX_PATHS=verbs, mpilite, np 4 (a
#             program without 4: its largest count below; IBX_TEST_NPS=2,4
#             adds the 2-rank runs), all verbs on one node: in the VM, with
#             the twonode part to follow, only the programs that part does
#             not run (nodes=1, no 4-rank count, not under IBX_PATHS=auto);
#             IBX_VERBS_ONENODE=all runs every program here too (4 minutes
#             more)
#   ibtest    every perftest-class ibtest command as a server/client pair,
#             and eng_rma_lat (the engine's one-sided API) under mpilite-run
#   twonode   two emulated nodes joined by a veth link, each with its own rxe
#             device (link.sh): perftest across the link, then the MPI
#             suite at 2 nodes x 2 ranks (mpilite-run --emulate-nodes), but
#             the programs whose header says nodes=1
#   ompi2n    ibx programs on the two nodes under Open MPI's mpirun (a
#             hostfile of the two nodes, node-agent.sh for ssh): another
#             launcher's per-node PMIx servers, traffic across the link
#   faults    on the two nodes: a rank killed (-9) while the others are
#             blocked on it in a receive, a rendezvous, a collective and an
#             RMA lock epoch; the link taken down under traffic and under
#             blocked receives; a stopped rank. Each job must end (in time)
#             with an error naming the peer, device and QP, leaving nothing
#             in /dev/shm and no verbs resources
# Environment: BUILD (default build), IBX_VERBS_PARTS (subset of PARTS,
# space or comma separated; names written -name instead leave those parts
# out of the whole list, e.g. "-faults"), IBX_VERBS_ONENODE (all: see the mpi
# part), IBX_TEST_FILTER (substring of test names),
# IBX_TEST_NPS (rank counts for the mpi part, default 4), and the device
# overrides of lib.sh (IBX_DEVICE=name:port, IBX_GID_INDEX, IBX_VERBS_SERVER_ADDR).
# The whole script is one { } group, which bash parses completely before
# running any of it: a run takes minutes, and editing this file meanwhile
# must not make the running instance read a shifted text.
{
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
if [ "${IBX_VERBS_NATIVE:-0}" != 1 ] && [ "${IBX_RXE_GUEST:-0}" != 1 ]; then
	exec bash tests/rxe/run-in-vm.sh --timeout "${IBX_RXE_TIMEOUT:-1800}" -- bash tests/rxe/suite.sh
fi

# shellcheck source=lib.sh
. tests/rxe/lib.sh
# shellcheck source=link.sh
. tests/rxe/link.sh

PARTS=(device perftest rdmacm unit mpi ibtest twonode ompi2n faults)

BUILD=${BUILD:-build}
export BUILD
LOGDIR=$BUILD/test-logs/verbs
mkdir -p "$LOGDIR" || exit 2
NFAIL=0

pass() { echo "PASS $1${2:+ ($2)}"; }
skip() { echo "SKIP $1 (${2:-no reason given})"; }
# fail NAME [DETAILS] [LOG...]: the log tails say why without a second run.
fail() {
	local name=$1 details=${2:-} f
	NFAIL=$((NFAIL + 1))
	echo "FAIL $name${details:+ ($details)}"
	shift 2 2>/dev/null || shift $#
	for f in "$@"; do
		[ -s "$f" ] || continue
		echo "    | ==> $f <=="
		tail -n 30 "$f" | sed 's/^/    | /'
	done
}
filtered() { [ -n "${IBX_TEST_FILTER:-}" ] && [[ "$1" != *"$IBX_TEST_FILTER"* ]]; }

# Registrations pin memory; the VM already runs unlimited, a host may not.
ulimit -l unlimited 2>/dev/null || true

# --- device -------------------------------------------------------------
part_device() {
	local name=verbs/device log=$LOGDIR/ibv_devinfo.log
	filtered "$name" && return 0
	if [ -z "$VERBS_DEV" ]; then
		ibv_devices >"$log" 2>&1
		fail "$name" "no verbs device with an active port" "$log"
		return 0
	fi
	ibv_devinfo -d "$VERBS_DEV" -i "$VERBS_PORT" >"$log" 2>&1
	local rc=$?
	if [ $rc -eq 0 ] && grep -q 'state:[[:space:]]*PORT_ACTIVE' "$log"; then
		local mtu
		mtu=$(sed -n 's/.*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p' "$log" | head -n 1)
		pass "$name" "$VERBS_DEV port $VERBS_PORT active, $VERBS_LINK_LAYER, mtu ${mtu:-?}${VERBS_GID_INDEX:+, gid index $VERBS_GID_INDEX}"
	else
		fail "$name" "$VERBS_DEV port $VERBS_PORT not active (ibv_devinfo exit $rc)" "$log"
	fi
}

# --- perftest smoke -------------------------------------------------------
# Two processes, one device: connection set-up over TCP, then RC RDMA writes
# ping-ponged through the provider and the kernel (rxe loops them back).
part_perftest() {
	local name=verbs/perftest-smoke log=$LOGDIR/perftest-smoke res
	filtered "$name" && return 0
	if ! command -v ib_write_lat >/dev/null; then
		fail "$name" "ib_write_lat missing (perftest; scripts/deps.sh installs it)"
		return 0
	fi
	if [ -z "$VERBS_DEV" ]; then
		fail "$name" "no verbs device"
		return 0
	fi
	if perftest_pair "$log" ib_write_lat -n 100 && res=$(perftest_result "$log.client") && [ -n "$res" ]; then
		# bytes iters t_min t_max t_typical ...
		set -- $res
		if [ "$2" = 100 ]; then
			pass "$name" "ib_write_lat $1 B x $2: typical $5 us, avg $6 us"
			return 0
		fi
	fi
	fail "$name" "ib_write_lat pair on $VERBS_DEV" "$log.server" "$log.client"
}

# --- librdmacm ------------------------------------------------------------
# rping: address and route resolution, connection set-up through rdma_cm,
# then sends and RDMA reads/writes with the payload verified (-V) each way.
part_rdmacm() {
	local name=verbs/rdmacm-rping log=$LOGDIR/rping spid crc=1 try
	filtered "$name" && return 0
	if ! command -v rping >/dev/null; then
		fail "$name" "rping missing (rdmacm-utils; scripts/deps.sh installs it)"
		return 0
	fi
	if [ -z "$VERBS_DEV" ]; then
		fail "$name" "no verbs device"
		return 0
	fi
	# rdma_cm needs an address on the RDMA netdev, not loopback.
	if [ "${IBX_RXE_GUEST:-0}" != 1 ] && [ -z "${IBX_VERBS_SERVER_ADDR:-}" ]; then
		skip "$name" "natively it needs IBX_VERBS_SERVER_ADDR, an address of $VERBS_DEV's netdev"
		return 0
	fi
	timeout -k 5 60 rping -s -a "$VERBS_SERVER_ADDR" -C 20 -V >"$log.server" 2>&1 &
	spid=$!
	# The listener is not a TCP socket, so there is nothing to wait for:
	# retry while the server is alive (a client too early is rejected).
	for try in 1 2 3 4 5 6 7 8 9 10; do
		sleep 0.5
		timeout -k 5 60 rping -c -a "$VERBS_SERVER_ADDR" -C 20 -V >"$log.client" 2>&1
		crc=$?
		[ $crc -eq 0 ] && break
		kill -0 "$spid" 2>/dev/null || break
	done
	[ $crc -ne 0 ] && kill "$spid" 2>/dev/null
	wait "$spid"
	local src=$?
	if [ $crc -eq 0 ] && [ $src -eq 0 ]; then
		pass "$name" "20 verified ping-pongs"
	else
		fail "$name" "client exit $crc, server exit $src" "$log.server" "$log.client"
	fi
}

# --- cmocka unit tests that need a device -------------------------------------
part_unit() {
	local t name log rc np nf ns t0 secs found=0
	for t in "$BUILD"/tests/unit/test_verbs_* "$BUILD"/tests/unit/test_reg_cache*; do
		[ -f "$t" ] && [ -x "$t" ] || continue
		found=1
		name=verbs/unit/$(basename "$t")
		filtered "$name" && continue
		log=$LOGDIR/$(basename "$t").log
		t0=$SECONDS
		timeout -k 10 600 "$t" >"$log" 2>&1
		rc=$?
		secs=$((SECONDS - t0))
		np=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s += $1} END {print s + 0}')
		nf=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s += $1} END {print s + 0}')
		ns=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s += $1} END {print s + 0}')
		# Cases may skip themselves without a device; here there is one, so
		# a binary that ran nothing has failed.
		if [ $rc -eq 0 ] && [ "$nf" -eq 0 ] && [ "$np" -gt 0 ]; then
			if [ "$ns" -gt 0 ]; then
				pass "$name" "$np cases, $ns skipped, ${secs} s"
			else
				pass "$name" "$np cases, ${secs} s"
			fi
		elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
			fail "$name" "timed out after 600 s, $np passed" "$log"
		else
			fail "$name" "$np passed, $nf failed, $ns skipped, exit $rc, ${secs} s" "$log"
		fi
	done
	[ $found = 1 ] || skip verbs/unit "no test_verbs_* or test_reg_cache* in $BUILD/tests/unit"
}

# --- MPI programs over verbs ------------------------------------------------
# The multi-process suite with every peer forced onto core/qp, re-labelled.
part_mpi() {
	local log=$LOGDIR/run-tests-mpi.log
	if [ ! -x "$BUILD/bin/mpilite-run" ]; then
		skip verbs/mpi "$BUILD/bin/mpilite-run not built"
		return 0
	fi
	# What the two nodes run goes over verbs there too (between the nodes;
	# shm inside each): here, once, the rest.
	local beside=
	if [ "${IBX_VERBS_ONENODE:-}" != all ] && [ "${IBX_RXE_GUEST:-0}" = 1 ] && part_selected twonode; then
		beside=${IBX_TWONODE_NPS:-4}
	fi
	IBX_PATHS=verbs IBX_TEST_LAUNCHERS=mpilite IBX_TEST_NPS=${IBX_TEST_NPS:-4} NPS_AT_LEAST_ONCE=1 \
		IBX_TEST_TIMEOUT_SCALE=${IBX_TEST_TIMEOUT_SCALE:-3} IBX_TEST_BESIDE_MULTINODE=$beside \
		run_mpi_suite mpi "$log" verbs/ \
		"no MPI test matches np ${IBX_TEST_NPS:-4} and launcher mpilite"
}

# --- ibtest's perftest-class commands ------------------------------------------
# Each command once as a server/client pair on the device (small -n), plus a
# few option variants: both sides must exit 0 and the client print a
# perftest-style row with the size and iteration count asked for and a
# positive figure; mismatched options must fail on both sides, not hang.
ibtest_pair() { # LOG CMD ARGS...: like perftest_pair, for "ibtest CMD"
	local log=$1 cmd=$2 port spid crc src
	shift 2
	port=$PERFTEST_PORT
	PERFTEST_PORT=$((PERFTEST_PORT + 1))
	local common=(-d "$VERBS_DEV" -i "$VERBS_PORT" -p "$port")
	[ -n "$VERBS_GID_INDEX" ] && common+=(-x "$VERBS_GID_INDEX")
	timeout -k 5 "$PERFTEST_TIMEOUT" "$BUILD/bin/ibtest" "$cmd" "${common[@]}" "$@" >"$log.server" 2>&1 &
	spid=$!
	if ! rxe_wait_tcp_listen "$port" "$spid"; then
		kill "$spid" 2>/dev/null
		wait "$spid"
		echo "(server never listened on port $port)" >>"$log.server"
		: >"$log.client"
		return 1
	fi
	timeout -k 5 "$PERFTEST_TIMEOUT" "$BUILD/bin/ibtest" "$cmd" "${common[@]}" "$@" \
		"${IBTEST_CLIENT_EXTRA[@]}" "$VERBS_SERVER_ADDR" >"$log.client" 2>&1
	crc=$?
	[ $crc -ne 0 ] && kill "$spid" 2>/dev/null
	wait "$spid"
	src=$?
	IBTEST_RC="$src $crc"
	[ $crc -eq 0 ] && [ $src -eq 0 ]
}

part_ibtest() {
	local spec name cmd args bytes iters log res op mem
	if [ ! -x "$BUILD/bin/ibtest" ]; then
		skip verbs/ibtest "$BUILD/bin/ibtest not built"
		return 0
	fi
	IBTEST_CLIENT_EXTRA=()
	# name | command and options | bytes and iterations the row must show
	for spec in \
		"write_lat|write_lat -s 8 -n 200|8 200" \
		"write_bw|write_bw -s 65536 -n 300|65536 300" \
		"read_lat|read_lat -s 8 -n 200|8 200" \
		"read_bw|read_bw -s 65536 -n 300|65536 300" \
		"send_lat|send_lat -s 8 -n 200|8 200" \
		"send_bw|send_bw -s 65536 -n 300|65536 300" \
		"atomic_lat|atomic_lat -n 200|8 200" \
		"atomic_bw|atomic_bw -n 300|8 300" \
		"write_bw-q2-l4|write_bw -s 4096 -n 400 -q 2 -l 4|4096 800" \
		"read_bw-rdma_cm|read_bw -s 16384 -n 200 -R|16384 200" \
		"atomic_lat-cas|atomic_lat -A CMP_AND_SWAP -n 100|8 100" \
		"send_lat-sizes|send_lat -s 4096 -n 100 -I 64|4096 100"; do
		name=verbs/ibtest/${spec%%|*}
		filtered "$name" && continue
		args=${spec#*|}
		read -r bytes iters <<<"${args#*|}"
		read -r cmd args <<<"${args%|*}"
		log=$LOGDIR/ibtest-${spec%%|*}
		# shellcheck disable=SC2086 # the options are words
		if ! ibtest_pair "$log" "$cmd" $args; then
			fail "$name" "exit status server/client: $IBTEST_RC" "$log.server" "$log.client"
			continue
		fi
		res=$(perftest_result "$log.client")
		# shellcheck disable=SC2086
		set -- $res
		if [ "${1:-}" = "$bytes" ] && [ "${2:-}" = "$iters" ] &&
			awk -v v="${4:-0}" -v w="${5:-0}" 'BEGIN { exit !(v > 0 && w > 0) }'; then
			case $cmd in
			*_bw) pass "$name" "$1 B x $2: BW average $4 MB/s" ;;
			*) pass "$name" "$1 B x $2: typical $5 us" ;;
			esac
		else
			fail "$name" "no row '$bytes $iters ...' with positive figures (got '${res:-nothing}')" \
				"$log.server" "$log.client"
		fi
	done
	# JSON: one document on stdout with the row
	name=verbs/ibtest/json
	if ! filtered "$name"; then
		IBTEST_CLIENT_EXTRA=(--json)
		log=$LOGDIR/ibtest-json
		if ibtest_pair "$log" send_bw -s 1024 -n 100 &&
			python3 -c 'import json, sys
text = open(sys.argv[1]).read()  # the table (stderr) precedes the document
d = json.loads(text[text.index("{\"test\""):])
r = d["results"][0]
sys.exit(not (d["test"] == "send_bw" and r["bytes"] == 1024 and r["iterations"] == 100 and r["bw_average"] > 0))' "$log.client" 2>"$log.json-check"; then
			pass "$name" "send_bw --json parses"
		else
			fail "$name" "no valid JSON document from the client" "$log.client" "$log.json-check"
		fi
		IBTEST_CLIENT_EXTRA=()
	fi
	# the two sides disagree: both must refuse, neither may hang
	name=verbs/ibtest/mismatch
	if ! filtered "$name"; then
		IBTEST_CLIENT_EXTRA=(-n 300)
		log=$LOGDIR/ibtest-mismatch
		if ibtest_pair "$log" write_lat -n 200; then
			fail "$name" "server -n 200 and client -n 300 both succeeded" "$log.server" "$log.client"
		elif [ "$IBTEST_RC" = "1 1" ] && grep -q 'different iteration counts' "$log.client"; then
			pass "$name" "both sides refused: $(grep -o 'different iteration counts[^;]*' "$log.client" | head -n 1)"
		else
			fail "$name" "expected exit 1 on both sides with a message (got $IBTEST_RC)" \
				"$log.server" "$log.client"
		fi
		IBTEST_CLIENT_EXTRA=()
	fi
	# the engine's one-sided API over verbs (ibtest eng_rma_lat checks the
	# data it moved: exit 3 on a mismatch)
	for spec in "get|alloc|8" "put|map|65536" "fadd|alloc|8" "cswap|map|8"; do
		IFS='|' read -r op mem bytes <<<"$spec"
		name=verbs/ibtest/eng_rma_lat-$op-$mem
		filtered "$name" && continue
		log=$LOGDIR/ibtest-eng_rma_lat-$op-$mem
		args=(-o "$op" -m "$mem" -n 100)
		[ "$op" = put ] && args+=(-s "$bytes")
		IBX_PATHS=verbs timeout -k 5 120 "$BUILD/bin/mpilite-run" -n 2 --timeout 110 \
			"$BUILD/bin/ibtest" eng_rma_lat "${args[@]}" >"$log" 2>&1
		IBTEST_RC=$?
		res=$(awk -v b="$bytes" '$1 == b && $2 == 100 && NF == 9 { print $5; exit }' "$log")
		if [ "$IBTEST_RC" = 0 ] && [ -n "$res" ] && grep -q 'Path            : verbs' "$log"; then
			pass "$name" "$bytes B x 100 over verbs: typical $res us"
		else
			fail "$name" "exit $IBTEST_RC, row of $bytes B x 100: '${res:-none}'" "$log"
		fi
	done
}

# --- two nodes --------------------------------------------------------------
# run_mpi_suite LABEL LOG PREFIX [SKIP_REASON]: tests/run-tests.sh mpi with
# the caller's environment, its result lines relabelled PREFIX... (verbs/ or
# verbs/LABEL/) with their indented log tails, counted; the totals line is
# dropped (the caller counts our lines). run-tests.sh keeps its logs in
# $BUILD/test-logs under the same names as the host's own mpi run; as root
# (always, in the VM) a private mount namespace puts this run's logs in
# $LOGDIR/LABEL instead of over them. No test run at all: a skip with
# SKIP_REASON when the runner printed nothing but its totals, else a failure.
run_mpi_suite() {
	local label=$1 log=$2 prefix=$3 why=${4:-} rc
	mkdir -p "$LOGDIR/$label" "$BUILD/test-logs"
	local runner=(bash tests/run-tests.sh mpi)
	if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
		runner=(unshare -m bash -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"'
			_ "$LOGDIR/$label" "$BUILD/test-logs" "${runner[@]}")
	fi
	"${runner[@]}" >"$log" 2>&1
	rc=$?
	sed -n -e "s#^\(PASS\|FAIL\|SKIP\) #\1 $prefix#p" -e '/^    /p' "$log"
	NFAIL=$((NFAIL + $(grep -c '^FAIL ' "$log")))
	if [ $rc -ne 0 ] && ! grep -q '^FAIL ' "$log"; then
		fail "verbs/$label" "tests/run-tests.sh mpi exit $rc" "$log"
	elif ! grep -qE '^(PASS|FAIL|SKIP) ' "$log"; then
		if [ -n "$why" ] && ! grep -vqE '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log"; then
			skip "verbs/$label" "$why"
		else
			fail "verbs/$label" "tests/run-tests.sh mpi ran no test${why:+ and printed errors}" "$log"
		fi
	fi
}

LINK_OK=
link_ready() { # the link, made once; a failure is reported once
	[ -n "$LINK_OK" ] && { [ "$LINK_OK" = 1 ]; return; }
	local log=$LOGDIR/link-up.log
	if link_up >"$log" 2>&1; then
		LINK_OK=1
	else
		LINK_OK=0
		fail verbs/twonode/link "cannot set up the two-node link" "$log"
	fi
	[ "$LINK_OK" = 1 ]
}

part_twonode() {
	local name=verbs/twonode/link log=$LOGDIR/twonode-link p0 res
	if [ "${IBX_RXE_GUEST:-0}" != 1 ]; then
		skip verbs/twonode "needs the Soft-RoCE VM (it creates netdevs and rxe devices)"
		return 0
	fi
	link_ready || return 0
	if ! filtered "$name"; then
		p0=$(link_packets)
		if VERBS_DEV=rxn1 VERBS_PORT=1 PERFTEST_CLIENT_DEV=rxn0 perftest_pair "$log" ib_send_lat -n 200 &&
			res=$(perftest_result "$log.client") && [ -n "$res" ]; then
			set -- $res
			pass "$name" "ib_send_lat rxn0 -> rxn1 across the veth: typical $5 us, $(($(link_packets) - p0)) packets on ibxn0"
		else
			fail "$name" "ib_send_lat across the link" "$log.server" "$log.client"
		fi
	fi
	IBX_TEST_LAUNCH_ARGS="--emulate-nodes 2:$LINK_DEVS" IBX_TEST_LAUNCHERS=mpilite IBX_TEST_MULTINODE=1 \
		IBX_TEST_NPS=${IBX_TWONODE_NPS:-4} IBX_TEST_TIMEOUT_SCALE=${IBX_TEST_TIMEOUT_SCALE:-3} \
		run_mpi_suite twonode "$LOGDIR/run-tests-twonode.log" verbs/twonode/ \
		"${IBX_TEST_FILTER:+no test matches IBX_TEST_FILTER=$IBX_TEST_FILTER}"
}

# --- another launcher on two nodes ----------------------------------------------
# Open MPI's mpirun starts one daemon per emulated node through
# node-agent.sh (no ssh): each daemon is its node's PMIx server, so ibx sees
# a real multi-node launch, not mpilite-run's emulation. Each program must
# succeed and its traffic cross the link.
OMPI2N_PROGS=(environment p2p_sizes p2p_types coll_reduce coll_hier dtype_p2p rma_acc_cas rma_win_flavors)
part_ompi2n() {
	local t name log rc p0 np t0 hosts=$LOGDIR/ompi2n.hosts
	if [ "${IBX_RXE_GUEST:-0}" != 1 ]; then
		skip verbs/ompi2n "needs the Soft-RoCE VM (two emulated nodes)"
		return 0
	fi
	if ! command -v mpirun.openmpi >/dev/null; then
		skip verbs/ompi2n "no mpirun.openmpi (scripts/deps.sh installs Open MPI)"
		return 0
	fi
	link_ready || return 0
	printf 'n0 slots=2\nn1 slots=2\n' >"$hosts"
	for t in "${OMPI2N_PROGS[@]}"; do
		name=verbs/ompi2n/$t
		filtered "$name" && continue
		log=$LOGDIR/ompi2n-$t.log
		if [ ! -x "$BUILD/tests/mpi/$t" ]; then
			fail "$name" "$BUILD/tests/mpi/$t not built"
			continue
		fi
		p0=$(link_packets)
		t0=$SECONDS
		OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -k 5 300 \
			mpirun.openmpi --hostfile "$hosts" -np 4 --bind-to none \
			--mca plm_rsh_agent "$PWD/tests/rxe/node-agent.sh" \
			"$BUILD/tests/mpi/$t" >"$log" 2>&1
		rc=$?
		np=$(($(link_packets) - p0))
		if [ $rc -ne 0 ]; then
			fail "$name" "exit status $rc" "$log"
		elif [ "$np" -le 0 ]; then
			fail "$name" "nothing crossed the link" "$log"
		else
			pass "$name" "$((SECONDS - t0)) s, $np packets across the link"
		fi
	done
}

# --- faults on two nodes -------------------------------------------------------
# fault_case NAME SCENARIO STRIKE EXPECT: starts fault_peer SCENARIO on
# 2 x 2 ranks, waits for the 4 "ready" lines, strikes rank 2 (kill, stop)
# or the link (linkdown), and checks the ending: EXPECT "error" = non-zero
# status within FAULT_LIMIT s of the strike, with a message naming the lost
# peer (2; any rank across the link for linkdown), the device and the QP;
# "timeout" = the launcher's time limit (124). Then: nothing in /dev/shm,
# the devices' resource counts back where they were.
FAULT_LIMIT=5
fault_case() {
	local name=verbs/faults/$1 scen=$2 strike=$3 expect=$4
	local log=$LOGDIR/fault-$1.log prog=$BUILD/tests/rxe/fault_peer pid vpid i t0 t1 rc ms res0 res1 why=
	filtered "$name" && return 0
	local who='peer 2 \(rxn[01]:1 QP 0x[0-9a-f]+ -> 0x[0-9a-f]+\)'
	[ "$strike" = linkdown ] && who=${who/peer 2/peer [0-3]}
	res0=$(rdma resource show 2>/dev/null)
	timeout -k 5 120 "$BUILD/bin/mpilite-run" --emulate-nodes "2:$LINK_DEVS" -n 4 \
		--timeout "${FAULT_JOB_TIMEOUT:-40}" "$prog" "$scen" >"$log" 2>&1 &
	pid=$!
	for ((i = 0; i < 1200; i++)); do
		[ "$(grep -c '^fault_peer: rank .* ready$' "$log")" -ge 4 ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	vpid=$(sed -n 's/^fault_peer: rank 2 pid \([0-9]*\) ready$/\1/p' "$log")
	if [ -z "$vpid" ] || [ "$(grep -c '^fault_peer: rank .* ready$' "$log")" -lt 4 ]; then
		kill "$pid" 2>/dev/null
		wait "$pid"
		fail "$name" "the ranks never all got ready" "$log"
		return 0
	fi
	sleep 1 # let them block
	t0=$(date +%s%N)
	case $strike in
	kill) kill -9 "$vpid" ;;
	stop) kill -STOP "$vpid" ;;
	linkdown) link_set down ;;
	esac
	wait "$pid"
	rc=$?
	t1=$(date +%s%N)
	ms=$(((t1 - t0) / 1000000))
	[ "$strike" = stop ] && kill -CONT "$vpid" 2>/dev/null
	if [ "$strike" = linkdown ]; then
		link_set up
		link_wait_active rxn0 && link_wait_active rxn1 || why="the link did not come back up"
	fi
	case $expect in
	error)
		if [ $rc -eq 0 ] || [ $rc -eq 124 ] || [ $rc -ge 200 ]; then
			why="exit status $rc, expected an error"
		elif [ $ms -gt $((FAULT_LIMIT * 1000)) ]; then
			why="ended $ms ms after the strike, limit ${FAULT_LIMIT} s"
		elif ! grep -qE "$who" "$log"; then
			why="no error naming the peer, its device and QP"
		elif grep -q 'no error after the strike\|iteration .*: byte' "$log"; then
			why="a rank went on as if nothing happened"
		fi ;;
	timeout) [ $rc -eq 124 ] || why="exit status $rc, expected the launcher's timeout (124)" ;;
	esac
	if [ -z "$why" ] && ls /dev/shm/ibx-* >/dev/null 2>&1; then
		why="left in /dev/shm: $(ls /dev/shm | grep '^ibx-' | head -n 3 | tr '\n' ' ')"
	fi
	# the kernel frees a dead process's verbs objects as it reaps it
	for ((i = 0; i < 50; i++)); do
		res1=$(rdma resource show 2>/dev/null)
		[ "$res1" = "$res0" ] && break
		sleep 0.1
	done
	if [ -z "$why" ] && [ "$res1" != "$res0" ]; then
		why="verbs resources not released: before '$res0', after '$res1'"
	fi
	if [ -n "$why" ]; then
		fail "$name" "$why" "$log"
	else
		local said
		said=$(grep -oE "$who.{0,70}" "$log" | head -n 1)
		pass "$name" "exit $rc after $ms ms${said:+: $said}"
	fi
}

part_faults() {
	if [ "${IBX_RXE_GUEST:-0}" != 1 ]; then
		skip verbs/faults "needs the Soft-RoCE VM (it takes a link down)"
		return 0
	fi
	if [ ! -x "$BUILD/tests/rxe/fault_peer" ]; then
		fail verbs/faults "$BUILD/tests/rxe/fault_peer not built"
		return 0
	fi
	link_ready || return 0
	fault_case kill-recv recv kill error
	fault_case kill-rndv rndv kill error
	fault_case kill-coll coll kill error
	fault_case kill-rma rma kill error
	fault_case linkdown-traffic link linkdown error
	fault_case linkdown-blocked recv linkdown error
	FAULT_JOB_TIMEOUT=20 fault_case stop link stop timeout
}

# --- main ---------------------------------------------------------------
if ! rxe_select_device; then
	VERBS_DEV= VERBS_PORT= VERBS_GID_INDEX= VERBS_LINK_LAYER= VERBS_SERVER_ADDR=
fi
# ibx picks the first active port by itself; saying which keeps the unit and
# MPI tests on the device the suite checked.
if [ -n "$VERBS_DEV" ] && [ -z "${IBX_DEVICE:-}" ]; then
	export IBX_DEVICE=$VERBS_DEV:$VERBS_PORT
fi

parts=("${PARTS[@]}")
part_selected() { [[ " ${parts[*]} " == *" $1 "* ]]; }
if [ -n "${IBX_VERBS_PARTS:-}" ]; then
	read -r -a parts <<<"${IBX_VERBS_PARTS//,/ }"
	if [[ ${parts[0]} == -* ]]; then # "-a -b": every part but a and b
		omit=" ${parts[*]} "
		parts=()
		for p in "${PARTS[@]}"; do
			[[ $omit == *" -$p "* ]] || parts+=("$p")
		done
	fi
fi
for p in "${parts[@]}"; do
	if ! declare -F "part_$p" >/dev/null; then
		fail "verbs/$p" "no such part (have: ${PARTS[*]})"
		continue
	fi
	"part_$p"
done
[ $NFAIL -eq 0 ]
exit
}
