#!/bin/bash
# launcher_singleton.sh — started alone the client is rank 0 of 1 and its
# exchange works locally; started by srun without --mpi=pmix, or by MPICH's
# hydra mpiexec (PMI-1/2 only), it refuses with a message that says what to
# use instead, rather than running as N unrelated singletons.
. "$(dirname "$0")/launcher_common.inc"

clean_env() {
	env -u SLURM_STEP_NUM_TASKS -u PMI_FD -u PMI_RANK -u PMI_SIZE -u PMIX_NAMESPACE \
		-u PMIX_RANK -u PMIX_SERVER_URI2 -u PMIX_SERVER_URI21 -u PMIX_SERVER_URI3 \
		-u PMIX_SERVER_URI4 -u PMIX_SERVER_URI41 "$@"
}

START=$(now)
clean_env timeout -k 5 30 "$BOOTCLIENT" >"$OUT" 2>"$ERR"
RC=$?
expect_rc 0 "singleton"
expect_out "^rank 0 of 1: local 1 \[0\] job single-[0-9]+ launcher \(none\) pid [0-9]+$"
expect_out "^rank 0: modex ok with 1 ranks$"
expect_out "^rank 0: done$"
[ -s "$ERR" ] && { show; fail "singleton wrote to stderr"; }

# srun without PMIx
clean_env SLURM_STEP_NUM_TASKS=2 timeout -k 5 30 "$BOOTCLIENT" >"$OUT" 2>"$ERR"
RC=$?
expect_rc 2 "srun without --mpi=pmix"
expect_err "started by srun as one of 2 tasks, but without PMIx"
expect_err "srun --mpi=pmix"
[ -s "$OUT" ] && { show; fail "refused client printed as if it ran"; }

# hydra's variables
clean_env PMI_FD=3 PMI_RANK=0 timeout -k 5 30 "$BOOTCLIENT" >"$OUT" 2>"$ERR"
RC=$?
expect_rc 2 "PMI_FD/PMI_RANK"
expect_err "hydra's mpiexec speaks PMI-1/2, not PMIx; use mpilite-run or Open MPI's mpirun"

# the real hydra
if command -v mpiexec.hydra >/dev/null; then
	clean_env timeout -k 5 30 mpiexec.hydra -n 2 "$BOOTCLIENT" >"$OUT" 2>"$ERR"
	RC=$?
	[ "$RC" != 0 ] || { show; fail "hydra run did not fail"; }
	n=$(grep -c "hydra's mpiexec speaks PMI-1/2, not PMIx" "$ERR")
	[ "$n" = 2 ] || { show; fail "$n of 2 hydra ranks explained the refusal"; }
	grep -q "rank 0 of 1" "$OUT" && { show; fail "hydra ranks ran as singletons"; }
fi

# a PMIx environment whose server is gone is an error, not a singleton
clean_env PMIX_NAMESPACE=gone.1 PMIX_RANK=0 timeout -k 5 30 "$BOOTCLIENT" >"$OUT" 2>"$ERR"
RC=$?
expect_rc 2 "stale PMIx environment"
expect_err "PMIx_Init failed"
echo "ok"
