#!/bin/bash
# launcher_files.sh — mpilite-run leaves nothing behind: its private
# temporary directory (created under $TMPDIR) is removed however the job
# ends, and the job's shared-memory files <IBX_SHM_DIR>/ibx-<jobid>-* that a
# killed rank could not unlink are removed after the job — and only the
# job's own.
. "$(dirname "$0")/launcher_common.inc"

# while a job runs, its directory exists under TMPDIR
: >"$OUT"
"$RUN" -n 2 "$BOOTCLIENT" sleep all >"$OUT" 2>"$ERR" &
p=$!
for i in $(seq 600); do
	[ "$(grep -c 'sleeping pid' "$OUT")" = 2 ] && break
	sleep 0.1
done
ls -d "$TMPDIR"/mpilite-run.* >/dev/null 2>&1 || { kill -KILL $p; fail "no mpilite-run.* directory under TMPDIR while running"; }
kill -TERM $p
wait $p
expect_tmp_clean

# every way a job can end
launch -n 2 "$BOOTCLIENT"
expect_rc 0 "success"
expect_tmp_clean
launch -n 2 "$BOOTCLIENT" exit 1 2
expect_rc 2 "exit"
expect_tmp_clean
launch -n 2 "$BOOTCLIENT" kill9 0
expect_rc 137 "kill9"
expect_tmp_clean
launch -n 2 "$BOOTCLIENT" abort 1 4
expect_rc 4 "abort"
expect_tmp_clean
launch -n 2 --timeout 1 "$BOOTCLIENT" sleep all
expect_rc 124 "timeout"
expect_tmp_clean
launch -n 2 /nonexistent/program
expect_rc 127 "missing program"
expect_tmp_clean

# leftover segments of this job go, another job's stay
touch "$IBX_SHM_DIR/ibx-otherjob-seg0" "$IBX_SHM_DIR/ibx-mpilite.1.1x-seg0"
launch -n 3 "$BOOTCLIENT" shmfile all barrier kill9 2
expect_rc 137 "shmfile kill9"
for r in 0 1 2; do expect_out "^rank $r: created $IBX_SHM_DIR/ibx-mpilite\.[0-9a-f.]+-bootclient$r$"; done
left=$(ls "$IBX_SHM_DIR" | grep -v -e '^ibx-otherjob-seg0$' -e '^ibx-mpilite.1.1x-seg0$')
[ -z "$left" ] || { show; fail "left in IBX_SHM_DIR: $left"; }
[ -e "$IBX_SHM_DIR/ibx-otherjob-seg0" ] || fail "another job's file was removed"
[ -e "$IBX_SHM_DIR/ibx-mpilite.1.1x-seg0" ] || fail "another job's file was removed"

# the same after a job that ended well, and in the default /dev/shm
unset IBX_SHM_DIR
launch -n 2 "$BOOTCLIENT" shmfile all
expect_rc 0 "shmfile in /dev/shm"
expect_out "^rank 0: created /dev/shm/ibx-mpilite"
job=$(sed -n 's/^rank 0: created \/dev\/shm\/ibx-\(.*\)-bootclient0$/\1/p' "$OUT")
[ -n "$job" ] || fail "no job id"
left=$(ls /dev/shm | grep -F "ibx-$job-" || true)
if [ -n "$left" ]; then
	(cd /dev/shm && rm -f $left)
	fail "left in /dev/shm: $left"
fi
expect_tmp_clean
echo "ok"
