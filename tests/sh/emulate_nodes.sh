#!/bin/bash
# emulate_nodes.sh — mpilite-run --emulate-nodes N[:DEV0,...] (a test
# feature): the ranks of one job spread over N emulated nodes of this
# machine in blocks (np=5, N=2: {0,1,2} {3,4}); PMIx describes N nodes (the
# local peers, node id, host name and local rank each rank reads), each rank
# gets its node's host name (UTS namespace, when the launcher may),
# MPILITE_RUN_NODE and IBX_DEVICE. N=1 is the launcher without the option.
# Checked with a plain PMIx client (emulate_nodes_probe.c), with the
# engine's bootstrap (bootclient) and with an MPI program.
. "$(dirname "$0")/launcher_common.inc"

PROBE=$BUILD/tests/sh/emulate_nodes_probe
[ -x "$PROBE" ] || skip "$PROBE is not built (run make)"
MPIPROG=$BUILD/tests/mpi/environment
HOST=$(hostname)
SHORT=${HOST%%.*}

# expect_line LINE: stdout has exactly this line
expect_line() {
	grep -qxF -- "$1" "$OUT" || { show; fail "stdout lacks the line '$1'"; }
}

# The ranks get their node's host name unless the launcher cannot give
# them a UTS namespace (it then says so, once).
uname_of() {
	if grep -q "cannot have their nodes' host names" "$ERR"; then echo "$HOST"; else echo "$1"; fi
}

# ---- 5 ranks on 2 nodes, with devices; the inherited IBX_DEVICE is replaced
export IBX_DEVICE=inherited
launch --emulate-nodes 2:devA,devB:1 -n 5 "$PROBE" info
expect_rc 0 "5 ranks on 2 emulated nodes"
expect_out_count "modex ok$" 5
for r in 0 1 2; do
	expect_line "rank $r peers 0,1,2 lsize 3 nodeid 0 host $SHORT-n0 lrank $r nrank $r nnodes 2 uname $(uname_of "$SHORT-n0") device devA node 0 modex ok"
done
for r in 3 4; do
	l=$((r - 3))
	expect_line "rank $r peers 3,4 lsize 2 nodeid 1 host $SHORT-n1 lrank $l nrank $l nnodes 2 uname $(uname_of "$SHORT-n1") device devB:1 node 1 modex ok"
done
[ "$(grep -c "cannot have their nodes' host names" "$ERR")" -le 1 ] || { show; fail "the UTS warning is repeated"; }
expect_tmp_clean

# blocks: the first np % N nodes get one rank more (7 on 3: 3, 2, 2)
launch --emulate-nodes=3 -n 7 "$PROBE" info
expect_rc 0 "7 ranks on 3 nodes"
for r in 0 1 2; do expect_out "^rank $r peers 0,1,2 lsize 3 nodeid 0 "; done
for r in 3 4; do expect_out "^rank $r peers 3,4 lsize 2 nodeid 1 "; done
for r in 5 6; do expect_out "^rank $r peers 5,6 lsize 2 nodeid 2 "; done
# without devices: IBX_DEVICE is left as inherited
expect_out_count " device inherited node [0-2] modex ok$" 7

# one rank per node, through the variable
MPILITE_RUN_EMULATE_NODES=3 launch -n 3 "$PROBE" info
expect_rc 0 "MPILITE_RUN_EMULATE_NODES=3"
for r in 0 1 2; do expect_out "^rank $r peers $r lsize 1 nodeid $r host $SHORT-n$r lrank 0 nrank 0 nnodes 3 "; done
# the option wins over the variable
MPILITE_RUN_EMULATE_NODES=3 launch --emulate-nodes 1 -n 3 "$PROBE" info
expect_rc 0 "option over variable"
expect_out_count "peers 0,1,2 lsize 3 nodeid 0 host $HOST " 3
unset IBX_DEVICE

# ---- N=1 is the launcher without the option: same PMIx answers, no new variable
launch -n 3 "$PROBE" info
expect_rc 0 "no option"
sort "$OUT" >"$WORK/plain"
for r in 0 1 2; do
	expect_line "rank $r peers 0,1,2 lsize 3 nodeid 0 host $HOST lrank $r nrank $r nnodes 1 uname $HOST device - node - modex ok"
done
launch --emulate-nodes 1 -n 3 "$PROBE" info
expect_rc 0 "--emulate-nodes 1"
sort "$OUT" | cmp -s - "$WORK/plain" || { show; fail "--emulate-nodes 1 differs from no option"; }
# one node with a device: only IBX_DEVICE and MPILITE_RUN_NODE are added
launch --emulate-nodes 1:mlx5_0:1 -n 2 "$PROBE" info
expect_rc 0 "--emulate-nodes 1:dev"
expect_out_count "nodeid 0 host $HOST .* uname $HOST device mlx5_0:1 node 0 modex ok$" 2

# ---- usage errors: 125 and a message naming the option
bad() {
	local want=$1
	shift
	launch "$@" true
	expect_rc 125 "$*"
	expect_err "^mpilite-run: .*$want"
}
bad "--emulate-nodes: 0 nodes: give 1 to the number of ranks" --emulate-nodes 0 -n 4
bad "--emulate-nodes: 5 nodes for 4 ranks: every node needs a rank \(give 1 to 4 nodes\)" --emulate-nodes 5 -n 4
bad "names 1 device for 2 nodes: give one per node" --emulate-nodes 2:devA -n 4
bad "names 3 devices for 2 nodes: give one per node" --emulate-nodes 2:a,b,c -n 4
bad "has an empty device name" --emulate-nodes 2:a, -n 4
bad "is not N or N:DEV0" --emulate-nodes two -n 4
MPILITE_RUN_EMULATE_NODES=3 bad "MPILITE_RUN_EMULATE_NODES: 3 nodes for 2 ranks" -n 2
launch -n 4 --emulate-nodes
expect_rc 125 "no value"
expect_err "^mpilite-run: --emulate-nodes needs a value"
expect_tmp_clean

# ---- --report-bindings: a line per node before the ranks' CPUs
launch --report-bindings --emulate-nodes 2:devA,devB -n 3 true
expect_rc 0 "report"
expect_err "^mpilite-run: node 0 \($SHORT-n0\): ranks 0-1, IBX_DEVICE=devA$"
expect_err "^mpilite-run: node 1 \($SHORT-n1\): rank 2, IBX_DEVICE=devB$"
expect_err "^mpilite-run: rank 2 (bound|not bound)"

# ---- the engine's bootstrap (core/bootstrap.c) sees the nodes' peers
launch --emulate-nodes 2 -n 4 "$BOOTCLIENT"
expect_rc 0 "bootclient on 2 nodes"
for r in 0 1; do expect_out "^rank $r of 4: local 2 \[0,1\] "; done
for r in 2 3; do expect_out "^rank $r of 4: local 2 \[2,3\] "; done

# ---- as root: without CAP_SYS_ADMIN one warning and the machine's name;
# a long host name is cut to fit HOST_NAME_MAX with its suffix
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && command -v unshare >/dev/null; then
	START=$(now)
	timeout -k 5 60 setpriv --bounding-set -sys_admin --inh-caps -sys_admin \
		"$RUN" --emulate-nodes 2 -n 4 "$PROBE" info >"$OUT" 2>"$ERR"
	RC=$?
	expect_rc 0 "without CAP_SYS_ADMIN"
	[ "$(grep -c "cannot have their nodes' host names" "$ERR")" = 1 ] || { show; fail "not one UTS warning"; }
	expect_out_count "nodeid 0 host $SHORT-n0 .* uname $HOST device - node 0 modex ok$" 2
	expect_out_count "nodeid 1 host $SHORT-n1 .* uname $HOST device - node 1 modex ok$" 2

	# 62 letters: more than libpmix's node regex takes without harm, and
	# more than HOST_NAME_MAX leaves beside "-n0"
	long=$(printf 'a%.0s' $(seq 1 62))
	if unshare --uts true 2>/dev/null; then
		timeout -k 5 60 unshare --uts sh -c 'hostname "$1" && exec "$2" --emulate-nodes 2 -n 2 "$3" info' \
			sh "$long" "$RUN" "$PROBE" >"$OUT" 2>"$ERR"
		RC=$?
		expect_rc 0 "long host name"
		cut=${long:0:61}
		expect_out "^rank 0 peers 0 lsize 1 nodeid 0 host $cut-n0 .* uname $cut-n0 "
		expect_out "^rank 1 peers 1 lsize 1 nodeid 1 host $cut-n1 .* uname $cut-n1 "
		timeout -k 5 60 unshare --uts sh -c 'hostname "$1" && exec "$2" -n 2 "$3" info' \
			sh "$long" "$RUN" "$PROBE" >"$OUT" 2>"$ERR"
		RC=$?
		expect_rc 0 "long host name, one node"
		expect_out_count "host $long lrank" 2
		# the short name: up to the first dot
		timeout -k 5 60 unshare --uts sh -c 'hostname "$1" && exec "$2" --emulate-nodes 2 -n 2 "$3" info' \
			sh "node7.cluster.example" "$RUN" "$PROBE" >"$OUT" 2>"$ERR"
		RC=$?
		expect_rc 0 "host name with a domain"
		expect_out "^rank 1 peers 1 lsize 1 nodeid 1 host node7-n1 .* uname node7-n1 "
	fi
fi

# ---- MPI: N=1 runs as ever; ranks on two nodes need a verbs device each
if [ -x "$MPIPROG" ]; then
	launch --emulate-nodes 1 -n 4 "$MPIPROG"
	expect_rc 0 "MPI program, one node"
	if ! ls /sys/class/infiniband/* >/dev/null 2>&1; then
		T=60 launch --emulate-nodes 2 -n 4 "$MPIPROG"
		[ "$RC" != 0 ] && [ "$RC" -lt 124 ] || { show; fail "MPI across emulated nodes without verbs: exit status $RC"; }
		expect_err "MPI_Init.*(verbs|another node)"
		expect_no_err "killed by signal"
		expect_ranks_gone
	fi
fi
expect_tmp_clean
echo "ok"
