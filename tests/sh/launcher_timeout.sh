#!/bin/bash
# launcher_timeout.sh — --timeout (and MPIEXEC_TIMEOUT) end a hung job with
# status 124 and a message; ranks that ignore SIGTERM get SIGKILL after the
# grace period; nothing is left running or on disk.
. "$(dirname "$0")/launcher_common.inc"

# Start-up time varies (sanitizer builds, a busy machine): the timeouts
# below leave the ranks twice a normal start-up and 3 s more to get going.
baseline 3
TMO=$(printf '%.0f' "$(echo "2 * $BASE + 3" | bc)")

# rank 1 never reaches the final fence, so the job hangs
launch -n 3 --timeout "$TMO" "$BOOTCLIENT" sleep 1
expect_rc 124 "timeout"
expect_err "^mpilite-run: job timed out after $TMO s; terminating the job$"
expect_out "^rank 1: sleeping pid"
lt "$(plus "$TMO" -0.1)" "$ELAPSED" || fail "ended after $ELAPSED s, before the $TMO s timeout"
expect_faster "$(plus "$TMO" 5)"
expect_ranks_gone
expect_tmp_clean

# the same from the environment, with a fractional value
MPIEXEC_TIMEOUT=$TMO.5 launch -n 2 "$BOOTCLIENT" sleep 0
expect_rc 124 "MPIEXEC_TIMEOUT"
expect_err "job timed out after $TMO.5 s"
expect_faster "$(plus "$TMO" 6)"

# every rank ignores SIGTERM: SIGKILL after the grace period (2 s here)
MPILITE_RUN_KILL_GRACE=2 launch -n 2 --timeout "$TMO" "$BOOTCLIENT" ignoreterm all sleep all
expect_rc 124 "timeout with SIGTERM ignored"
expect_out_count "sleeping pid" 2
lt "$(plus "$TMO" 1.9)" "$ELAPSED" || fail "SIGKILL came after $ELAPSED s, before the grace period"
expect_faster "$(plus "$TMO" 7)"
expect_ranks_gone
expect_tmp_clean

# a job that ends in time is not affected by its timeout
launch -n 4 --timeout 60 "$BOOTCLIENT"
expect_rc 0 "finishes before the timeout"
expect_out_count "^rank [0-9]: done$" 4

# a bad grace period is a usage error
MPILITE_RUN_KILL_GRACE=never launch -n 1 true
expect_rc 125 "bad MPILITE_RUN_KILL_GRACE"
echo "ok"
