#!/bin/bash
# peer_lost_report.sh — the engine's side of mpilite-run's "a rank died"
# event (core/bootstrap_events.c): the survivors of tests/mpi/rank_death
# (rank 2 of 3 raises SIGSEGV while rank 0 waits in a receive from it and
# rank 1 in a barrier) report the loss by name, with the status the launcher
# gave, and the job ends with the dead rank's status (128+11). Over verbs
# the same report names the device and both QPs (the verbs lane's faults).
. "$(dirname "$0")/launcher_common.inc"

PROG=$BUILD/tests/mpi/rank_death
[ -x "$PROG" ] || skip "$PROG is not built (run make)"

baseline 3

IBX_PATHS=shm launch -n 3 "$PROG"
expect_rc 139 "rank 2 crashed"
expect_err "shm: rank 2 \(pid [0-9]+\): the launcher reports it killed by signal 11 \(status 139\)"
expect_faster "$(plus "$BASE" 4)"
expect_tmp_clean

# without the event (grace 0) the job still ends with the same status
MPILITE_RUN_NOTIFY_GRACE=0 IBX_PATHS=shm launch -n 3 "$PROG"
expect_rc 139 "rank 2 crashed, no event"
expect_no_err "the launcher reports"
expect_faster "$(plus "$BASE" 4)"
expect_tmp_clean
