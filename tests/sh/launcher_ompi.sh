#!/bin/bash
# launcher_ompi.sh — the same PMIx client under Open MPI's mpirun (same
# system libpmix): ranks, sizes, node-local peers and the exchange must come
# out as under mpilite-run, and an abort must fail the job.
. "$(dirname "$0")/launcher_common.inc"

command -v mpirun.openmpi >/dev/null || skip "no mpirun.openmpi"
ompi() {
	START=$(now)
	timeout -k 5 "${T:-60}" mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none "$@" \
		>"$OUT" 2>"$ERR"
	RC=$?
	ELAPSED=$(elapsed_since "$START")
}

for n in 1 2 4; do
	ompi -np $n "$BOOTCLIENT"
	expect_rc 0 "mpirun -np $n"
	peers=$(seq -s, 0 $((n - 1)))
	for r in $(seq 0 $((n - 1))); do
		expect_out "^rank $r of $n: local $n \[$peers\] job [A-Za-z0-9_.]+ launcher \(none\) pid [0-9]+$"
		expect_out "^rank $r: modex ok with $n ranks$"
		expect_out "^rank $r: done$"
	done
done

# (30 s: mpirun, on the same libpmix, has been seen to hang after an abort)
T=30 ompi -np 4 "$BOOTCLIENT" abort 2 6
[ "$RC" != 0 ] || { show; fail "an abort under mpirun ended with status 0"; }
expect_out "^rank 2: aborting with 6$"
expect_no_err "abort failed"
expect_ranks_gone
echo "ok"
