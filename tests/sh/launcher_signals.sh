#!/bin/bash
# launcher_signals.sh — SIGTERM, SIGINT and SIGHUP sent to mpilite-run are
# passed to the ranks, the job is cleaned up (no rank left, no temporary
# directory) and the launcher exits with 128+signal; a second signal kills
# at once; SIGUSR1 is only passed on.
. "$(dirname "$0")/launcher_common.inc"

# start_sleepers N: a job whose ranks all sleep; returns when they all do
start_sleepers() {
	local n=$1 i
	shift
	START=$(now)
	# empty them first: the job's own redirection happens later, in the child
	: >"$OUT"
	: >"$ERR"
	"$RUN" -n "$n" "$@" >"$OUT" 2>"$ERR" &
	LPID=$!
	for i in $(seq 600); do
		[ "$(grep -c 'sleeping pid' "$OUT")" = "$n" ] && return
		sleep 0.1
	done
	kill -KILL $LPID
	show
	fail "ranks did not start sleeping"
}
wait_launcher() {
	local i
	for i in $(seq 150); do
		kill -0 $LPID 2>/dev/null || break
		sleep 0.1
	done
	kill -0 $LPID 2>/dev/null && { kill -KILL $LPID; fail "mpilite-run did not end"; }
	wait $LPID
	RC=$?
	ELAPSED=$(elapsed_since "$START")
}

for sig in TERM HUP; do
	start_sleepers 3 "$BOOTCLIENT" sleep all
	kill -$sig $LPID
	wait_launcher
	num=$(kill -l $sig)
	expect_rc $((128 + num)) "SIG$sig"
	expect_err "^mpilite-run: received signal $num \(.*\); terminating the job$"
	expect_ranks_gone
	expect_tmp_clean
done

# SIGINT: a background job of a script starts with SIGINT ignored, unless
# job control is on
set -m
start_sleepers 2 "$BOOTCLIENT" sleep all
kill -INT $LPID
wait_launcher
set +m
expect_rc 130 "SIGINT"
expect_err "received signal 2"
expect_ranks_gone
expect_tmp_clean

# ranks ignore SIGTERM: a second SIGTERM kills them at once, long before
# the (here 30 s) grace period is over
export MPILITE_RUN_KILL_GRACE=30
start_sleepers 2 "$BOOTCLIENT" ignoreterm all sleep all
kill -TERM $LPID
sleep 0.5
kill -TERM $LPID
START=$(now)
wait_launcher
unset MPILITE_RUN_KILL_GRACE
expect_rc 143 "second SIGTERM"
expect_err "again; killing the job"
expect_faster 10
expect_ranks_gone
expect_tmp_clean

# SIGUSR1 is passed on without ending the job: the ranks die of it (default
# action), which is then the job's failure
start_sleepers 2 "$BOOTCLIENT" sleep all
kill -USR1 $LPID
wait_launcher
expect_rc $((128 + $(kill -l USR1))) "SIGUSR1 forwarded"
expect_err "killed by signal $(kill -l USR1)"
expect_no_err "received signal"
expect_ranks_gone

# the launcher itself killed with SIGKILL: its ranks die with it (PDEATHSIG)
start_sleepers 2 "$BOOTCLIENT" sleep all
kill -KILL $LPID
wait $LPID 2>/dev/null
sleep 0.5
expect_ranks_gone
rm -rf "$TMPDIR"/mpilite-run.* # nobody is left to remove it: expected
echo "ok"
