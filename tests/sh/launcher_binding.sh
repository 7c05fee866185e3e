#!/bin/bash
# launcher_binding.sh — where mpilite-run's ranks run (mpi-lite/run/bind.c).
# Each rank reports the CPUs it may use (Cpus_allowed_list in
# /proc/self/status, read by the rank's own grep) and the launcher's
# --report-bindings must say the same:
#
#   1. default, ranks <= cores: one core each, all different
#   2. --bind-to none, and more ranks than cores: no binding (the launcher's
#      CPUs); the report says why
#   3. --map-by core|slot|socket|package|numa and --bind-to core|package|numa
#      on this machine; the options win over MPILITE_RUN_BIND_TO / _MAP_BY /
#      _REPORT_BINDINGS, which stand for them otherwise
#   4. a made-up topology (MPILITE_RUN_SYSFS): hardware threads of one core
#      bind together; no topology at all: each CPU is a core
#   5. the mapping itself on made-up 8-CPU machines (tests/sh/bind_plan.c:
#      bind.c on a given CPU set, nothing started): hwloc's core order across
#      alternately numbered packages, round robin over packages and NUMA
#      nodes, unequal packages, a narrowed CPU set, oversubscription
#   6. bad values: a usage error (status 125, a message, nothing started)
#   7. ranks bound one per core still spin in the engine (IBX_LOG=debug):
#      binding does not make it think the node is oversubscribed
. "$(dirname "$0")/launcher_common.inc"

PLAN=$BUILD/tests/sh/bind_plan
[ -x "$PLAN" ] || fail "$PLAN is not built (run make)"
IBTEST=$BUILD/bin/ibtest

# expand "0-2,5" -> "0 1 2 5"
expand() {
	echo "$1" | tr ',' '\n' | awk -F- 'NF == 2 { for (c = $1; c <= $2; c++) printf "%d ", c; next }
		NF == 1 && $1 != "" { printf "%d ", $1 }'
}
ALLOWED=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
NCPU=$(expand "$ALLOWED" | wc -w)
# cores as bind.c counts them: distinct (package, die, core) of our CPUs
NCORES=$(for c in $(expand "$ALLOWED"); do
	t=/sys/devices/system/cpu/cpu$c/topology
	if [ -r "$t/physical_package_id" ] && [ -r "$t/core_id" ]; then
		echo "$(cat "$t/physical_package_id") $(cat "$t/die_id" 2>/dev/null || echo 0) $(cat "$t/core_id")"
	else
		echo "cpu $c"
	fi
done | sort -u | wc -l)
[ "$NCORES" -ge 1 ] || fail "no cores found in $ALLOWED"
NP=$((NCORES < 3 ? NCORES : 3))
echo "launcher CPUs $ALLOWED: $NCPU CPUs, $NCORES cores"

CPUS_CMD=(grep Cpus_allowed_list /proc/self/status)
# rank_cpus R: the CPUs rank R said it may use (needs --tag-output)
rank_cpus() { sed -n "s/^\[$1\] Cpus_allowed_list:[[:space:]]*//p" "$OUT"; }
# reported R: the CPUs --report-bindings gave rank R
reported() { sed -n "s/^mpilite-run: rank $1 .*: CPUs //p" "$ERR"; }

# bound N: ranks 0..N-1 each on its own core, as reported
expect_bound() {
	local r seen=" " cpus
	for ((r = 0; r < $1; r++)); do
		cpus=$(rank_cpus $r)
		[ -n "$cpus" ] || { show; fail "rank $r printed no Cpus_allowed_list ($2)"; }
		[ "$cpus" = "$(reported $r)" ] || { show; fail "rank $r runs on $cpus, reported $(reported $r) ($2)"; }
		expect_err "^mpilite-run: rank $r bound to core [0-9]+ \(package [0-9]+, NUMA node [0-9]+\): CPUs $cpus$"
		for c in $(expand "$cpus"); do
			[[ "$seen" != *" $c "* ]] || { show; fail "CPU $c given to two ranks ($2)"; }
			seen="$seen$c "
		done
	done
}
# unbound N: ranks 0..N-1 all on the launcher's CPUs
expect_unbound() {
	local r
	for ((r = 0; r < $1; r++)); do
		[ "$(rank_cpus $r)" = "$ALLOWED" ] || { show; fail "rank $r runs on $(rank_cpus $r), not $ALLOWED ($2)"; }
		[ "$(reported $r)" = "$ALLOWED" ] || { show; fail "rank $r reported on $(reported $r) ($2)"; }
	done
}

# 1. the default: bound, one core each
launch -n "$NP" --tag-output --report-bindings "${CPUS_CMD[@]}"
expect_rc 0 "default binding"
expect_bound "$NP" "default"
# without --report-bindings nothing is said
launch -n "$NP" --tag-output "${CPUS_CMD[@]}"
expect_rc 0 "default binding, no report"
expect_no_err "bound"

# 2. no binding: asked for, or more ranks than cores
launch -n "$NP" --bind-to none --tag-output --report-bindings "${CPUS_CMD[@]}"
expect_rc 0 "--bind-to none"
expect_unbound "$NP" "--bind-to none"
expect_err "^mpilite-run: rank 0 not bound: CPUs $ALLOWED$"
OVER=$((NCORES + 1))
launch -n "$OVER" --tag-output --report-bindings "${CPUS_CMD[@]}"
expect_rc 0 "oversubscribed"
expect_unbound "$OVER" "oversubscribed"
expect_err "^mpilite-run: rank 0 not bound \($OVER ranks on $NCORES cores\): CPUs $ALLOWED$"
# asked for anyway: cores are shared, and the launcher says so
launch -n "$OVER" --bind-to core --tag-output --report-bindings "${CPUS_CMD[@]}"
expect_rc 0 "oversubscribed, --bind-to core"
expect_err "^mpilite-run: $OVER ranks on $NCORES cores: --bind-to core puts more than one rank on a core$"
[ "$(rank_cpus "$NCORES")" = "$(rank_cpus 0)" ] || { show; fail "rank $NCORES is not on rank 0's core"; }

# 3. mapping and binding options, and their variables
for m in core slot socket package numa SOCKET; do
	launch -n "$NP" --map-by "$m" --tag-output --report-bindings "${CPUS_CMD[@]}"
	expect_rc 0 "--map-by $m"
	expect_bound "$NP" "--map-by $m"
done
launch -n "$NP" --map-by=numa --bind-to=core --tag-output --report-bindings "${CPUS_CMD[@]}"
expect_rc 0 "--map-by=numa --bind-to=core"
expect_bound "$NP" "--map-by=numa --bind-to=core"
for b in package socket numa; do
	launch -n "$NP" --bind-to "$b" --tag-output --report-bindings "${CPUS_CMD[@]}"
	expect_rc 0 "--bind-to $b"
	case $b in numa) what="NUMA node" ;; *) what=package ;; esac
	expect_err "^mpilite-run: rank 0 bound to $what 0: CPUs $(rank_cpus 0)$"
	[ "$(rank_cpus 0)" = "$(reported 0)" ] || { show; fail "--bind-to $b: rank 0 not where reported"; }
done
MPILITE_RUN_BIND_TO=none launch -n "$NP" --tag-output --report-bindings "${CPUS_CMD[@]}"
expect_rc 0 "MPILITE_RUN_BIND_TO=none"
expect_unbound "$NP" "MPILITE_RUN_BIND_TO=none"
MPILITE_RUN_BIND_TO=none launch -n "$NP" --bind-to core --tag-output --report-bindings "${CPUS_CMD[@]}"
expect_rc 0 "--bind-to core over MPILITE_RUN_BIND_TO=none"
expect_bound "$NP" "--bind-to core over MPILITE_RUN_BIND_TO=none"
MPILITE_RUN_REPORT_BINDINGS=y MPILITE_RUN_MAP_BY=socket launch -n "$NP" --tag-output "${CPUS_CMD[@]}"
expect_rc 0 "MPILITE_RUN_REPORT_BINDINGS=y"
expect_bound "$NP" "MPILITE_RUN_REPORT_BINDINGS=y MPILITE_RUN_MAP_BY=socket"

# 4. made-up topologies for the launcher's own CPUs
fake=$WORK/sys-smt
for c in $(expand "$ALLOWED"); do
	mkdir -p "$fake/cpu/cpu$c/topology"
	echo 0 >"$fake/cpu/cpu$c/topology/physical_package_id"
	echo 0 >"$fake/cpu/cpu$c/topology/core_id"
done
MPILITE_RUN_SYSFS=$fake launch -n 1 --tag-output --report-bindings "${CPUS_CMD[@]}"
expect_rc 0 "one core of $NCPU threads, 1 rank"
expect_err "^mpilite-run: rank 0 bound to core 0 \(package 0, NUMA node 0\): CPUs $ALLOWED$"
[ "$(rank_cpus 0)" = "$ALLOWED" ] || { show; fail "rank 0 not on every thread of its core"; }
MPILITE_RUN_SYSFS=$fake launch -n 2 --tag-output --report-bindings "${CPUS_CMD[@]}"
expect_rc 0 "one core of $NCPU threads, 2 ranks"
expect_unbound 2 "2 ranks on one core"
expect_err "\(2 ranks on 1 cores\)"
MPILITE_RUN_SYSFS=$WORK/no-such-dir launch -n "$((NCPU < 3 ? NCPU : 3))" --tag-output --report-bindings "${CPUS_CMD[@]}"
expect_rc 0 "no topology"
expect_bound "$((NCPU < 3 ? NCPU : 3))" "no topology: each CPU a core"

# 5. the mapping on made-up machines. sys8: 2 packages x 2 cores x 2
# threads, numbered alternately (CPU c in package c%2, core (c/2)%2, its
# sibling c^4); NUMA node = package.
sys8=$WORK/sys8
for c in 0 1 2 3 4 5 6 7; do
	mkdir -p "$sys8/cpu/cpu$c/topology"
	echo $((c % 2)) >"$sys8/cpu/cpu$c/topology/physical_package_id"
	echo $(((c / 2) % 2)) >"$sys8/cpu/cpu$c/topology/core_id"
	echo 0 >"$sys8/cpu/cpu$c/topology/die_id"
done
mkdir -p "$sys8/node/node0" "$sys8/node/node1"
echo 0,2,4,6 >"$sys8/node/node0/cpulist"
echo 1,3,5,7 >"$sys8/node/node1/cpulist"
# sysnuma: one package of 4 cores in 2 NUMA nodes (cores 0,1 | 2,3)
sysnuma=$WORK/sysnuma
for c in 0 1 2 3; do
	mkdir -p "$sysnuma/cpu/cpu$c/topology"
	echo 0 >"$sysnuma/cpu/cpu$c/topology/physical_package_id"
	echo "$c" >"$sysnuma/cpu/cpu$c/topology/core_id"
done
mkdir -p "$sysnuma/node/node0" "$sysnuma/node/node1"
echo 0-1 >"$sysnuma/node/node0/cpulist"
echo 2-3 >"$sysnuma/node/node1/cpulist"

# plan SYSFS CPUS NP BIND MAP -- EXPECTED CPUs of rank 0, 1, ... ("-": unbound)
plan() {
	local sys=$1 cpus=$2 np=$3 bind=$4 map=$5 got want r=0 c
	shift 6
	got=$(MPILITE_RUN_SYSFS=$sys "$PLAN" "$cpus" "$np" "$bind" "$map" 2>&1) ||
		fail "bind_plan $cpus $np $bind $map: $got"
	for want in "$@"; do
		c=$(printf '%s\n' "$got" | sed -n "s/^rank $r \(bound\|not bound\).*: CPUs //p")
		if [ "$want" = - ]; then
			printf '%s\n' "$got" | grep -q "^rank $r not bound" ||
				fail "plan $cpus np=$np $bind/$map: rank $r bound:"$'\n'"$got"
		elif [ "$c" != "$want" ]; then
			fail "plan $cpus np=$np $bind/$map: rank $r on '$c', expected $want:"$'\n'"$got"
		fi
		r=$((r + 1))
	done
	[ "$(printf '%s\n' "$got" | grep -c '^rank ')" = "$np" ] || fail "plan $cpus np=$np: not $np lines:"$'\n'"$got"
}
# by core: package 0's cores first (CPUs 0,4 and 2,6), as hwloc orders them
plan "$sys8" 0-7 4 auto core -- 0,4 2,6 1,5 3,7
plan "$sys8" 0-7 4 core slot -- 0,4 2,6 1,5 3,7
# by package: round robin
plan "$sys8" 0-7 4 core socket -- 0,4 1,5 2,6 3,7
plan "$sys8" 0-7 3 core package -- 0,4 1,5 2,6
# by NUMA node (here the packages)
plan "$sys8" 0-7 4 core numa -- 0,4 1,5 2,6 3,7
# wider binding around the mapped core
plan "$sys8" 0-7 4 package core -- 0,2,4,6 0,2,4,6 1,3,5,7 1,3,5,7
plan "$sys8" 0-7 2 numa socket -- 0,2,4,6 1,3,5,7
# a narrowed CPU set: only what the launcher may use
plan "$sys8" 0-3 4 auto core -- 0 2 1 3
# unequal packages (one core in package 0, two in package 1): a package
# whose cores are taken passes its turn
plan "$sys8" 0,1,3 3 core socket -- 0 1 3
# more ranks than cores: unbound by default, dealt again when asked
plan "$sys8" 0-7 5 auto core -- - - - - -
plan "$sys8" 0-7 6 core socket -- 0,4 1,5 2,6 3,7 0,4 1,5
plan "$sys8" 0-7 3 none core -- - - -
# NUMA nodes inside one package
plan "$sysnuma" 0-3 2 core numa -- 0 2
plan "$sysnuma" 0-3 2 core core -- 0 1
plan "$sysnuma" 0-3 3 numa core -- 0-1 0-1 2-3
plan "$sysnuma" 0-3 2 package numa -- 0-3 0-3

# 6. bad values
usage_error() {
	launch "$@" "${CPUS_CMD[@]}"
	expect_rc 125 "$*"
	[ -s "$OUT" ] && { show; fail "output from a job that should not start: $*"; }
	expect_tmp_clean
}
usage_error -n 1 --bind-to hwthread
expect_err "^mpilite-run: --bind-to: 'hwthread' is not one of core, package \(socket\), numa, none, auto$"
usage_error -n 1 --map-by node
expect_err "^mpilite-run: --map-by: 'node' is not one of core, slot, package \(socket\), numa$"
usage_error -n 1 --bind-to=
launch -n 1 --bind-to
expect_rc 125 "--bind-to without a value"
expect_err "^mpilite-run: --bind-to needs a value"
MPILITE_RUN_BIND_TO=cores usage_error -n 1
expect_err "^mpilite-run: MPILITE_RUN_BIND_TO: 'cores' is not one of"
MPILITE_RUN_MAP_BY=board usage_error -n 1
expect_err "^mpilite-run: MPILITE_RUN_MAP_BY: 'board' is not one of"

# 7. the engine's spin choice with ranks bound one per core
if [ "$NCORES" -ge 2 ] && [ -x "$IBTEST" ]; then
	IBX_LOG=debug IBX_PATHS=shm launch -n 2 "$IBTEST" shm_lat -s 8 -n 100
	expect_rc 0 "shm_lat bound"
	expect_err "2 node-local ranks on [0-9]+ CPUs: waiters spin"
	expect_no_err "waiters yield at once"
fi
echo "ok"
