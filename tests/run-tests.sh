#!/bin/bash
# run-tests.sh — runs ibx's test suites and ends with "N passed, N failed".
#
#   tests/run-tests.sh [unit|mpi|sh|verbs|all]...     (default: all)
#
# Suites:
#   unit   every $BUILD/tests/unit/test_* (cmocka; each test case counts)
#   mpi    every tests/mpi/*.c program, for each rank count and launcher named
#          in its header line, e.g.
#            /* ibx-test: np=1,2,3,4 timeout=60 launchers=mpilite,ompi */
#          keys: np=LIST  timeout=SECONDS  launchers=mpilite,ompi
#                expect=0|nonzero  args="..."  env="VAR=v VAR2=w"
#                paths=auto,shm,verbs  (the IBX_PATHS it runs under; others
#                are reported as SKIP with the reason)
#   sh     every tests/sh/*.sh scenario script (exit 0 pass, 77 skip)
#   verbs  the verbs suites on a real verbs device: in the Soft-RoCE VM
#          (tests/rxe/run-in-vm.sh), or on this host's hardware when
#          IBX_VERBS_NATIVE=1
# Environment: BUILD (default build), IBX_TEST_FILTER (substring of names),
# IBX_TEST_LAUNCHERS (restrict launchers, e.g. "mpilite"), IBX_TEST_NPS
# (restrict rank counts), IBX_TEST_TIMEOUT_SCALE (multiply every MPI test's
# time limit; the Soft-RoCE lane sets it, since emulated verbs are slower).
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
export BUILD ROOT
PASS=0
FAIL=0
SKIP=0
FAILED_NAMES=()
# Sanitizer builds: libpmix's own leaks are not ours.
export LSAN_OPTIONS="suppressions=$ROOT/tests/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
LOGDIR=$BUILD/test-logs
mkdir -p "$LOGDIR"

pass() { PASS=$((PASS + 1)); echo "PASS $1"; }
fail() { FAIL=$((FAIL + 1)); FAILED_NAMES+=("$1"); echo "FAIL $1"; [ -n "${2:-}" ] && sed 's/^/    | /' "$2" | tail -n 40; }
skip() { SKIP=$((SKIP + 1)); echo "SKIP $1${2:+ ($2)}"; }
filtered() { [ -n "${IBX_TEST_FILTER:-}" ] && [[ "$1" != *"$IBX_TEST_FILTER"* ]]; }

run_unit() {
	local t name log np nf
	for t in "$BUILD"/tests/unit/test_*; do
		[ -x "$t" ] || continue
		name=unit/$(basename "$t")
		filtered "$name" && continue
		log=$LOGDIR/$(basename "$t").log
		timeout -k 10 600 "$t" >"$log" 2>&1
		local rc=$?
		np=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
		nf=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | awk '{s+=$1} END {print s+0}')
		PASS=$((PASS + np))
		if [ "$nf" -gt 0 ] || [ $rc -ne 0 ]; then
			[ "$nf" -eq 0 ] && nf=1
			FAIL=$((FAIL + nf))
			FAILED_NAMES+=("$name")
			echo "FAIL $name ($np passed, $nf failed, exit $rc)"
			tail -n 40 "$log" | sed 's/^/    | /'
		else
			echo "PASS $name ($np cases)"
		fi
	done
}

# header KEY FILE -> value of KEY in the ibx-test line
header() {
	sed -n 's/.*ibx-test:\(.*\)\*\/.*/\1/p;s/.*ibx-test:\(.*\)$/\1/p' "$2" | head -n 1 |
		grep -o "$1=\(\"[^\"]*\"\|[^ ]*\)" | head -n 1 | sed "s/^$1=//;s/^\"//;s/\"$//"
}

ompi_run() {
	local np=$1
	shift
	mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none \
		--mca btl self,vader -x IBX_PATHS -x IBX_LOG -np "$np" "$@"
}

run_mpi() {
	local src prog base nps tmo launchers expect args envs paths np l name log rc ok
	for src in tests/mpi/*.c; do
		[ -f "$src" ] || continue
		base=$(basename "$src" .c)
		prog=$BUILD/tests/mpi/$base
		nps=$(header np "$src"); nps=${nps:-1,2,3,4}
		# IBX_TEST_NPS (e.g. "2,4") keeps only those of the declared rank counts.
		[ -n "${IBX_TEST_NPS:-}" ] && nps=$(echo "$nps" | tr , '\n' | grep -x -F -f <(echo "$IBX_TEST_NPS" | tr , '\n') | paste -sd, -)
		tmo=$(header timeout "$src"); tmo=${tmo:-60}
		# emulated lanes (Soft-RoCE under TCG) run the same programs slower
		tmo=$((tmo * ${IBX_TEST_TIMEOUT_SCALE:-1}))
		launchers=$(header launchers "$src"); launchers=${launchers:-mpilite,ompi}
		[ -n "${IBX_TEST_LAUNCHERS:-}" ] && launchers=$(echo "$launchers" | tr , '\n' | grep -x -F -f <(echo "$IBX_TEST_LAUNCHERS" | tr , '\n') | paste -sd, -)
		expect=$(header expect "$src"); expect=${expect:-0}
		args=$(header args "$src")
		envs=$(header env "$src")
		paths=$(header paths "$src"); paths=${paths:-auto,shm,verbs}
		for l in ${launchers//,/ }; do
			for np in ${nps//,/ }; do
				name=mpi/$base/$l/np$np
				filtered "$name" && continue
				if [ ! -x "$prog" ]; then fail "$name (not built)"; continue; fi
				if [[ ",$paths," != *",${IBX_PATHS:-auto},"* ]]; then skip "$name" "not for IBX_PATHS=${IBX_PATHS:-auto} (paths=$paths)"; continue; fi
				if [ "$l" = ompi ] && ! command -v mpirun.openmpi >/dev/null; then skip "$name" "no mpirun.openmpi"; continue; fi
				log=$LOGDIR/$base-$l-$np.log
				case $l in
				mpilite) env $envs timeout -k 5 $((tmo + 15)) "$BUILD/bin/mpilite-run" -n "$np" --timeout "$tmo" "$prog" $args >"$log" 2>&1 ;;
				ompi) env $envs timeout -k 5 "$tmo" bash -c "$(declare -f ompi_run); ompi_run $np $prog $args" >"$log" 2>&1 ;;
				esac
				rc=$?
				ok=0
				if [ "$expect" = nonzero ]; then [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ] && ok=1
				else [ $rc -eq "$expect" ] && ok=1; fi
				if [ $ok = 1 ]; then pass "$name"; else echo "    exit status $rc" >>"$log"; fail "$name" "$log"; fi
			done
		done
	done
}

run_sh() {
	local t name log rc
	for t in tests/sh/*.sh; do
		[ -f "$t" ] || continue
		name=sh/$(basename "$t" .sh)
		filtered "$name" && continue
		log=$LOGDIR/sh-$(basename "$t" .sh).log
		timeout -k 10 600 bash "$t" >"$log" 2>&1
		rc=$?
		case $rc in
		0) pass "$name" ;;
		77) skip "$name" "$(tail -n 1 "$log")" ;;
		*) echo "    exit status $rc" >>"$log"; fail "$name" "$log" ;;
		esac
	done
}

# The verbs lane prints PASS/FAIL lines of its own; count them here.
run_verbs() {
	local log=$LOGDIR/verbs.log rc
	if [ "${IBX_VERBS_NATIVE:-0}" = 1 ]; then
		bash tests/rxe/suite.sh >"$log" 2>&1
	else
		bash tests/rxe/run-in-vm.sh --timeout 1800 -- bash tests/rxe/suite.sh >"$log" 2>&1
	fi
	rc=$?
	grep -E '^(PASS|FAIL|SKIP) ' "$log"
	PASS=$((PASS + $(grep -c '^PASS ' "$log")))
	local nf
	nf=$(grep -c '^FAIL ' "$log")
	SKIP=$((SKIP + $(grep -c '^SKIP ' "$log")))
	if [ "$nf" -gt 0 ]; then
		FAIL=$((FAIL + nf))
		FAILED_NAMES+=("verbs")
	elif [ $rc -ne 0 ]; then
		fail "verbs/lane (exit $rc)" "$log"
	fi
}

suites=("$@")
[ ${#suites[@]} -eq 0 ] && suites=(all)
for s in "${suites[@]}"; do
	case $s in
	unit) run_unit ;;
	mpi) run_mpi ;;
	sh) run_sh ;;
	verbs) run_verbs ;;
	all) run_unit; run_mpi; run_sh; run_verbs ;;
	*) echo "unknown suite $s" >&2; exit 2 ;;
	esac
done

# Nothing of ours may be left in /dev/shm after the suites.
leftover=$(ls /dev/shm 2>/dev/null | grep '^ibx-' || true)
if [ -n "$leftover" ]; then
	fail "shm/leftover-segments ($leftover)"
fi

if [ ${#FAILED_NAMES[@]} -gt 0 ]; then
	echo "failed: ${FAILED_NAMES[*]}"
fi
echo "$PASS passed, $FAIL failed, $SKIP skipped"
[ "$FAIL" -eq 0 ]
