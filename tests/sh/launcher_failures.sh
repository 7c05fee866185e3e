#!/bin/bash
# launcher_failures.sh — a rank that fails ends the job, promptly, with the
# right exit status and a message naming the rank: a non-zero exit, a death
# by signal, and PMIx_Abort (MPI_Abort) with its code and message. The other
# ranks, which would sleep for ever, must be killed, not waited for.
. "$(dirname "$0")/launcher_common.inc"

baseline 4
QUICK=$(plus "$BASE" 6) # the failing rank is there at once: no grace period to wait

# rank 2 exits with 5; the others sleep until the launcher ends them
launch -n 4 "$BOOTCLIENT" exit 2 5 sleep all
expect_rc 5 "exit status of rank 2"
expect_err "^mpilite-run: rank 2 \(pid [0-9]+\) exited with status 5; terminating the job$"
expect_out "^rank 2: exiting with 5$"
expect_faster "$QUICK"
expect_ranks_gone
expect_tmp_clean

# one rank only: nothing else to terminate
launch -n 1 "$BOOTCLIENT" exit 0 3
expect_rc 3 "single rank exit"
expect_err "^mpilite-run: rank 0 \(pid [0-9]+\) exited with status 3$"

# a plain program failing on every rank: the first failure is reported once
launch -n 3 sh -c 'exit 7'
expect_rc 7 "sh exit 7"
[ "$(grep -c 'exited with status' "$ERR")" = 1 ] || { show; fail "failure reported more than once"; }

# rank 1 kills itself with SIGKILL: 128+9, and its last line still arrives
launch -n 4 "$BOOTCLIENT" kill9 1 sleep all
expect_rc 137 "rank killed by SIGKILL"
expect_err "^mpilite-run: rank 1 \(pid [0-9]+\) killed by signal 9 \(Killed\); terminating the job$"
expect_out "^rank 1: killing myself$"
expect_faster "$QUICK"
expect_ranks_gone
expect_tmp_clean

launch -n 2 sh -c 'kill -SEGV $$'
expect_rc 139 "SIGSEGV"
expect_err "killed by signal 11"

# PMIx_Abort: the code is the job's exit status, the message is shown, and
# the abort (not the aborting rank's own exit) is what gets reported; the
# other ranks sleep until the launcher ends them
launch -n 4 "$BOOTCLIENT" abort 1 3 sleep all
expect_rc 3 "abort code"
expect_err "^mpilite-run: rank 1 called abort with code 3: bootclient abort on rank 1$"
expect_no_err "exited with status"
expect_no_err "abort failed"
expect_faster "$QUICK"
expect_ranks_gone
expect_tmp_clean

# abort with code 0 must still fail the job
launch -n 2 "$BOOTCLIENT" abort 0 0
expect_rc 1 "abort code 0"
expect_err "^mpilite-run: rank 0 called abort with code 0: bootclient abort on rank 0$"

# repeated, since teardown after a failure is where libpmix went wrong
for i in 1 2 3 4 5; do
	launch -n 3 "$BOOTCLIENT" abort 2 9
	expect_rc 9 "abort round $i"
	launch -n 3 "$BOOTCLIENT" exit 0 4 sleep all
	expect_rc 4 "exit round $i"
	expect_faster "$QUICK"
done
expect_tmp_clean
echo "ok"
