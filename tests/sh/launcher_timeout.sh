#!/bin/bash
# launcher_timeout.sh — --timeout (and MPIEXEC_TIMEOUT) end a hung job with
# status 124 and a message; ranks that ignore SIGTERM get SIGKILL after the
# grace period; nothing is left running or on disk.
. "$(dirname "$0")/launcher_common.inc"

# rank 1 never reaches the final fence, so the job hangs
launch -n 3 --timeout 2 "$BOOTCLIENT" sleep 1
expect_rc 124 "timeout"
expect_err "^mpilite-run: job timed out after 2 s; terminating the job$"
expect_out "^rank 1: sleeping pid"
lt 1.9 "$ELAPSED" || fail "ended after $ELAPSED s, before the timeout"
expect_faster 8
expect_ranks_gone
expect_tmp_clean

# the same from the environment, with a fractional value
MPIEXEC_TIMEOUT=1.5 launch -n 2 "$BOOTCLIENT" sleep 0
expect_rc 124 "MPIEXEC_TIMEOUT"
expect_err "job timed out after 1.5 s"
expect_faster 7

# every rank ignores SIGTERM: SIGKILL after the grace period (3 s)
launch -n 2 --timeout 1 "$BOOTCLIENT" ignoreterm all sleep all
expect_rc 124 "timeout with SIGTERM ignored"
lt 3.9 "$ELAPSED" || fail "SIGKILL came after $ELAPSED s, before the grace period"
expect_faster 10
expect_ranks_gone
expect_tmp_clean

# a job that ends in time is not affected by its timeout
launch -n 4 --timeout 30 "$BOOTCLIENT"
expect_rc 0 "finishes before the timeout"
expect_out_count "^rank [0-9]: done$" 4
echo "ok"
