#!/bin/bash
# launcher_notify.sh — before mpilite-run ends a job because a rank died
# (killed by a signal, or exited non-zero before PMIx_Finalize), it tells
# the other ranks through the PMIx event PMIX_ERR_PROC_TERM_WO_SYNC (the dead
# rank as PMIX_EVENT_AFFECTED_PROC, its status as PMIX_EXIT_CODE) and gives
# them MPILITE_RUN_NOTIFY_GRACE seconds (default 1) to end by themselves;
# then SIGTERM as before. The job's status stays the first failure's. No
# event after PMIx_Finalize or for an abort; 0 is the old immediate end.
. "$(dirname "$0")/launcher_common.inc"

PROBE=$BUILD/tests/sh/emulate_nodes_probe
[ -x "$PROBE" ] || skip "$PROBE is not built (run make)"
EVENT="event PROC TERMINATED WITHOUT SYNC"

baseline 2

# rank 1 SIGKILLs itself: rank 0 hears of it, says so and exits 3 by itself;
# the job's status is the first failure's, 128+9
launch -n 2 "$PROBE" notify kill9
expect_rc 137 "rank 1 killed"
expect_out "^rank 0: $EVENT affected rank 1 exit code 137$"
expect_err "^mpilite-run: rank 1 \(pid [0-9]+\) killed by signal 9 \(Killed\); terminating the job$"
expect_no_err "exited with status 3"
expect_faster "$(plus "$BASE" 4)"
expect_tmp_clean

# a rank that sleeps on is ended after the grace (1 s), not before
launch -n 3 "$PROBE" notify kill9
expect_rc 137 "killed, a third rank sleeping"
expect_out "^rank 0: $EVENT affected rank 1 exit code 137$"
lt 0.9 "$ELAPSED" || { show; fail "ended after $ELAPSED s, before the grace"; }
expect_faster "$(plus "$BASE" 4)"

# a longer grace is waited for by a rank that does not end by itself
MPILITE_RUN_NOTIFY_GRACE=2.5 launch -n 2 "$PROBE" notify kill9 stay
expect_rc 137 "grace 2.5"
expect_out "^rank 0: $EVENT affected rank 1 exit code 137$"
lt 2.4 "$ELAPSED" || { show; fail "ended after $ELAPSED s, before the 2.5 s grace"; }
expect_faster "$(plus "$BASE" 5.5)"

# an exit before PMIx_Finalize is announced with its status
launch -n 2 "$PROBE" notify exit5
expect_rc 5 "exit 5 before finalize"
expect_out "^rank 0: $EVENT affected rank 1 exit code 5$"
expect_err "^mpilite-run: rank 1 \(pid [0-9]+\) exited with status 5; terminating the job$"

# after PMIx_Finalize it is not: the job ends at once, as before
MPILITE_RUN_NOTIFY_GRACE=5 launch -n 2 "$PROBE" notify fini5
expect_rc 5 "exit 5 after finalize"
expect_no_err "no event"
[ "$(grep -c "$EVENT" "$OUT")" = 0 ] || { show; fail "event after PMIx_Finalize"; }
expect_faster "$(plus "$BASE" 3)"

# a survivor that aborts on the news ends the grace at once; the status
# stays that of the first failure
MPILITE_RUN_NOTIFY_GRACE=10 launch -n 3 "$PROBE" notify kill9 abort
expect_rc 137 "abort within the grace"
expect_out "^rank 0: $EVENT affected rank 1 exit code 137$"
expect_faster "$(plus "$BASE" 4)"

# 0: no event, SIGTERM at once
MPILITE_RUN_NOTIFY_GRACE=0 launch -n 3 "$PROBE" notify kill9
expect_rc 137 "grace 0"
[ "$(grep -c "$EVENT" "$OUT")" = 0 ] || { show; fail "event with MPILITE_RUN_NOTIFY_GRACE=0"; }
expect_no_err "no event"
expect_faster "$(plus "$BASE" 3)"
expect_tmp_clean

# a bad value is a usage error
MPILITE_RUN_NOTIFY_GRACE=-1 launch -n 1 true
expect_rc 125 "negative grace"
expect_err "^mpilite-run: MPILITE_RUN_NOTIFY_GRACE: '-1' is not a non-negative number of seconds$"
MPILITE_RUN_NOTIFY_GRACE=soon launch -n 1 true
expect_rc 125 "grace not a number"

# the bootstrap clients of the other scenarios: a rank killed while the
# others sleep still ends the job promptly, every rank gone
launch -n 4 "$BOOTCLIENT" kill9 1 sleep all
expect_rc 137 "bootclient kill9"
expect_faster "$(plus "$BASE" 5)"
expect_ranks_gone
expect_tmp_clean
echo "ok"
