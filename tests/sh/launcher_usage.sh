#!/bin/bash
# launcher_usage.sh — mpilite-run's command line: --help and --version
# (build_info.sh looks at what --version says),
# usage errors (status 125, a message, no job started), and a program that
# cannot be found (127) or executed (126).
. "$(dirname "$0")/launcher_common.inc"

launch --help
expect_rc 0 "--help"
expect_out "^usage: mpilite-run -n N"
expect_out "--tag-output"
expect_out "--timeout S"
expect_out "-x VAR\[=value\]"
expect_out "--bind-to WHAT"
expect_out "--map-by WHAT"
expect_out "--report-bindings"
launch -h
expect_rc 0 "-h"
launch --version
expect_rc 0 "--version"
expect_out "^mpilite-run \(ibx [0-9]+\.[0-9]+\.[0-9]+\), PMIx"
expect_out "^  git commit   ([0-9a-f]{12}|unknown)$"
expect_out "^  compiler     "
expect_out "^  MPI          3\.1 \(mpi-lite\)$"

usage_error() {
	launch "$@"
	expect_rc 125 "$*"
	expect_err "^mpilite-run: "
	[ -s "$OUT" ] && { show; fail "output from a job that should not start: $*"; }
	expect_tmp_clean
}
usage_error "$BOOTCLIENT"
usage_error -n
usage_error -n 0 "$BOOTCLIENT"
usage_error -n two "$BOOTCLIENT"
usage_error -n 2
usage_error -n 2 --timeout 0 "$BOOTCLIENT"
usage_error -n 2 --timeout soon "$BOOTCLIENT"
usage_error -n 2 --frobnicate "$BOOTCLIENT"
expect_err "unknown option --frobnicate"

launch -n 2 ibx-no-such-program-anywhere
expect_rc 127 "not found"
expect_err "^mpilite-run: ibx-no-such-program-anywhere: command not found$"
expect_tmp_clean

printf 'not a program\n' >"$WORK/notexec"
chmod -x "$WORK/notexec"
launch -n 2 "$WORK/notexec"
expect_rc 126 "not executable"
expect_err "^mpilite-run: cannot execute $WORK/notexec on rank 0: Permission denied$"
expect_tmp_clean

# options end at the program: its own options are its own
launch -n 1 sh -c 'echo "$0 $1"' -n --tag-output
expect_rc 0 "program options"
expect_out "^-n --tag-output$"
launch -n 1 -- sh -c 'echo dashdash'
expect_rc 0 "--"
expect_out "^dashdash$"
echo "ok"
