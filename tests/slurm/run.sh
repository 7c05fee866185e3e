#!/bin/bash
# tests/slurm/run.sh — ibx under a real Slurm: a one-node cluster of its own
# (munged, slurmctld, slurmd, each started here and stopped by PID, also on
# failure or interruption) in a temporary directory, and through it, in
# this order:
#
#   slurm/daemons            the cluster comes up and its node goes idle
#   slurm/pmix-probe         `srun --mpi=pmix` gives each task a PMIx server
#   slurm/no-pmix/*          srun without PMIx (--mpi=none, MpiDefault=none,
#                            --mpi=pmi2): ibx refuses with its own message
#                            and a non-zero status; one task alone runs as
#                            a singleton (no-pmix/singleton)
#   slurm/abort/np4          MPI_Abort(.., 7): srun exits 7, within 10 s
#   slurm/rank-death/np4     a rank dies of SIGSEGV: non-zero, within 15 s
#   slurm/kill-9/np4         kill -9 of one task (tests/slurm/hold.c) while
#                            the others wait on it: non-zero, within 15 s
#   slurm/<prog>/np<N>       tests/mpi/<prog> under `srun --mpi=pmix -n N`
#                            for N = 1..4 in its ibx-test header's np=,
#                            with its expect=, env=, args= and timeout= as
#                            tests/run-tests.sh uses them (launchers= is
#                            not read: srun is neither); a paths= without
#                            the current IBX_PATHS (auto) is a SKIP
#
# Every run is also checked for names of its job left in /dev/shm. Prints
# one PASS/FAIL/SKIP line per test and exits 0 only when nothing failed.
# Without Slurm (Debian: slurmctld, slurmd, slurm-client), or when its PMIx
# plugin cannot serve here, it says why in a SKIP line and exits 0.
# Runs as root or as a normal user.
#
# Environment: BUILD (default build), IBX_TEST_FILTER (substring of test
# names), IBX_TEST_NPS (e.g. "2,4"), IBX_TEST_TIMEOUT_SCALE;
# IBX_SLURM_AUTH=auto|munge|none (auto: auth/munge with a munged of our own
# when munge is installed and serves, else auth/none);
# IBX_SLURM_BUDGET (seconds for the tests/mpi programs, 300 by default, 0
# for no limit: past it the rest are SKIPs that say so);
# IBX_SLURM_SUBSET=1 (a representative subset of the programs:
# point-to-point, collectives, RMA, mutex, I/O, abort, rank death);
# IBX_SLURM_KEEP=1 (keep the temporary directory: configuration, daemon
# logs, one log per run).
# shellcheck disable=SC2317 # cleanup and what it calls run from a trap
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
PASS=0
FAIL=0
SKIP=0
T0=$SECONDS

pass() { PASS=$((PASS + 1)); echo "PASS $1"; }
fail() {
	FAIL=$((FAIL + 1))
	echo "FAIL $1"
	if [ -n "${2:-}" ] && [ -f "$2" ]; then sed 's/^/    | /' "$2" | tail -n 30; fi
}
skip() { SKIP=$((SKIP + 1)); echo "SKIP $1${2:+ ($2)}"; }
filtered() { [ -n "${IBX_TEST_FILTER:-}" ] && [[ "$1" != *"$IBX_TEST_FILTER"* ]]; }
finish() {
	echo "slurm lane: $PASS PASS, $FAIL FAIL, $SKIP SKIP, $((SECONDS - T0)) s"
	[ "$FAIL" -eq 0 ] && exit 0
	exit 1
}

# ---- what must be installed ---------------------------------------------------

missing=()
for c in slurmctld slurmd srun sinfo scontrol squeue scancel; do
	command -v "$c" >/dev/null || missing+=("$c")
done
if [ ${#missing[@]} -gt 0 ]; then
	skip slurm/lane "no ${missing[*]}: Debian packages slurmctld slurmd slurm-client"
	exit 0
fi
# Slurm's plugins live beside its libslurmfull.so.
PLUGDIR=$(ldd "$(command -v slurmd)" 2>/dev/null | sed -n 's/.*libslurmfull\.so => \(.*\)\/libslurmfull\.so.*/\1/p')
have_munge() { command -v munged && command -v munge && command -v unmunge; } >/dev/null
have_auth_none() { [ -n "$PLUGDIR" ] && [ -f "$PLUGDIR/auth_none.so" ]; }
AUTH=${IBX_SLURM_AUTH:-auto}
if [ "$AUTH" = auto ]; then
	if have_munge; then
		AUTH=munge
	elif have_auth_none; then
		AUTH=none
		echo "slurm: no munged (Debian package munge): using AuthType=auth/none"
	else
		skip slurm/lane "no munged (Debian package munge), and this Slurm has no auth/none"
		exit 0
	fi
fi
if [ "$AUTH" = munge ] && ! have_munge; then
	skip slurm/lane "no munged: Debian package munge"
	exit 0
fi
if [ ! -x "$BUILD/bin/mpilite-cc" ] || [ ! -d "$BUILD/tests/mpi" ]; then
	fail "slurm/lane (ibx not built in $BUILD: run make first)"
	finish
fi

# ---- the cluster ----------------------------------------------------------------

TMP=$(mktemp -d "${TMPDIR:-/tmp}/ibx-slurm.XXXXXX") || exit 1
# munged wants every directory above its socket searchable by all.
chmod 711 "$TMP"
CONF=$TMP/slurm.conf
LOG=$TMP/log
S=(env "SLURM_CONF=$CONF") # prefix of every Slurm command
DAEMONS=()                 # "name:pid", in start order
CHILD=                     # the srun under way (its timeout), if any
NODE=$(hostname -s)
ME=$(id -un)
# Job ids of this cluster start at a random base: the PMIx namespace, and so
# ibx's /dev/shm names (ibx-slurm.pmix.<job>.<step>-<rank>), are then ours.
FIRST_JOB=$((1000000 + RANDOM * 1000))
mkdir -p "$LOG" "$TMP/state" "$TMP/spool" "$TMP/tmpfs" "$TMP/munge" "$TMP/munge-key" "$TMP/bin"
chmod 711 "$TMP/munge"
chmod 700 "$TMP/munge-key"

alive() {
	local st
	st=$(ps -o stat= -p "$1" 2>/dev/null) && [[ $st != Z* ]]
}

# stop NAME PID: SIGTERM, up to 10 s, then SIGKILL; reaps it.
stop_pid() {
	local i
	alive "$2" || { wait "$2" 2>/dev/null; return 0; }
	kill -TERM "$2" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		alive "$2" || break
		sleep 0.1
	done
	if alive "$2"; then
		echo "slurm: $1 (pid $2) ignored SIGTERM; killing it" >&2
		kill -KILL "$2" 2>/dev/null
	fi
	wait "$2" 2>/dev/null
}

# Processes started by our daemons (slurmstepd, tasks) carry our SLURM_CONF.
strays() {
	local p env
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		[ "$p" = $$ ] && continue
		env=$({ tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null) || continue
		grep -qxF "SLURM_CONF=$CONF" <<<"$env" && echo "$p"
	done
}

cancel_jobs() {
	local i ids
	ids=$("${S[@]}" squeue -h -o %i 2>/dev/null)
	[ -z "$ids" ] && return 0
	# shellcheck disable=SC2086 # one id a word
	"${S[@]}" scancel $ids 2>/dev/null
	for ((i = 0; i < 150; i++)); do
		[ -z "$("${S[@]}" squeue -h -o %i 2>/dev/null)" ] && return 0
		sleep 0.1
	done
	return 1
}

cleanup() {
	local i d p left
	trap - EXIT INT TERM HUP PIPE
	[ -n "$CHILD" ] && stop_pid srun "$CHILD"
	if [ ${#DAEMONS[@]} -gt 0 ]; then
		cancel_jobs
		for ((i = ${#DAEMONS[@]} - 1; i >= 0; i--)); do
			d=${DAEMONS[i]}
			stop_pid "${d%%:*}" "${d##*:}"
		done
		left=$(strays)
		if [ -n "$left" ]; then
			echo "slurm: killing what the daemons left running:" "$left" >&2
			for p in $left; do kill -KILL "$p" 2>/dev/null; done
		fi
	fi
	if [ "${IBX_SLURM_KEEP:-0}" = 1 ]; then
		echo "slurm: kept $TMP"
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'echo "slurm: interrupted" >&2; exit 130' INT
trap 'echo "slurm: terminated" >&2; exit 143' TERM
trap 'exit 129' HUP
trap 'exit 141' PIPE # output closed (| head): still stop the daemons

port_busy() {
	if command -v ss >/dev/null; then
		ss -Htan "( sport = :$1 )" 2>/dev/null | grep -q .
	else
		(: <"/dev/tcp/127.0.0.1/$1") 2>/dev/null
	fi
}
# Two consecutive free ports (slurmctld, slurmd).
pick_ports() {
	local p i
	for ((i = 0; i < 50; i++)); do
		p=$((20000 + RANDOM % 30000))
		port_busy "$p" || port_busy $((p + 1)) || { echo "$p"; return 0; }
	done
	return 1
}

start_daemon() { # NAME LOGFILE COMMAND...
	local name=$1 out=$2
	shift 2
	"$@" >"$out" 2>&1 &
	DAEMONS+=("$name:$!")
}

show_logs() {
	local f
	for f in "$@"; do
		[ -s "$f" ] || continue
		echo "    == $f"
		tail -n 15 "$f" | sed 's/^/    | /'
	done
}

if [ "$AUTH" = munge ]; then
	head -c 1024 /dev/urandom >"$TMP/munge-key/key"
	chmod 400 "$TMP/munge-key/key"
	start_daemon munged "$LOG/munged.out" munged --foreground --socket="$TMP/munge/socket" \
		--key-file="$TMP/munge-key/key" --pid-file="$TMP/munge/pid" \
		--seed-file="$TMP/munge-key/seed" --log-file="$LOG/munged.log"
	for ((i = 0; i < 50; i++)); do
		[ -S "$TMP/munge/socket" ] && break
		alive "${DAEMONS[0]##*:}" || break
		sleep 0.1
	done
	if munge -n -S "$TMP/munge/socket" 2>"$LOG/munge-check" | unmunge -S "$TMP/munge/socket" >>"$LOG/munge-check" 2>&1; then
		AUTH_LINES="AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$TMP/munge/socket"
	elif [ "${IBX_SLURM_AUTH:-auto}" = auto ] && have_auth_none; then
		echo "slurm: munged does not serve here ($(tail -n 1 "$LOG/munged.out")): using AuthType=auth/none"
		stop_pid munged "${DAEMONS[0]##*:}"
		DAEMONS=()
		AUTH=none
	else
		fail "slurm/daemons (munged does not serve: $(tail -n 1 "$LOG/munged.out"))" "$LOG/munge-check"
		finish
	fi
fi
if [ "$AUTH" = none ]; then
	AUTH_LINES="AuthType=auth/none
CredType=cred/none"
fi

PORT=$(pick_ports) || { fail "slurm/daemons (no two free ports)"; finish; }
cat >"$CONF" <<EOF
# ibx tests/slurm/run.sh: a one-node cluster on this machine
ClusterName=ibxtest
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=$ME
SlurmdUser=$ME
$AUTH_LINES
StateSaveLocation=$TMP/state
SlurmdSpoolDir=$TMP/spool
SlurmctldPidFile=$TMP/slurmctld.pid
SlurmdPidFile=$TMP/slurmd.pid
SlurmctldLogFile=$LOG/slurmctld.log
SlurmdLogFile=$LOG/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
TmpFS=$TMP/tmpfs
MailProg=/bin/true
FirstJobId=$FIRST_JOB
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
KillWait=5
InactiveLimit=0
# 4 CPUs on a machine that may have fewer: the node takes the configured
# figures (config_overrides), so srun -n 4 fits without --overcommit.
SlurmdParameters=config_overrides
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=ibx Nodes=$NODE Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
EOF

start_daemon slurmctld "$LOG/slurmctld.out" "${S[@]}" slurmctld -D -f "$CONF"
start_daemon slurmd "$LOG/slurmd.out" "${S[@]}" slurmd -D -f "$CONF" -N "$NODE"
state=
for ((i = 0; i < 300; i++)); do
	state=$("${S[@]}" sinfo -h -n "$NODE" -o %T 2>/dev/null)
	[ "$state" = idle ] && break
	dead=
	for d in "${DAEMONS[@]}"; do alive "${d##*:}" || dead+=" ${d%%:*}"; done
	[ -n "$dead" ] && break
	sleep 0.1
done
if [ "$state" != idle ]; then
	fail "slurm/daemons (node ${state:-unknown}${dead:+; exited:$dead})"
	show_logs "$LOG"/*.out
	finish
fi
pass slurm/daemons

# ---- one run through srun ----------------------------------------------------------

# Leftover /dev/shm names of this cluster's jobs.
shm_left() {
	local f id
	for f in /dev/shm/ibx-slurm.pmix.*; do
		[ -e "$f" ] || continue
		id=${f#/dev/shm/ibx-slurm.pmix.}
		id=${id%%.*}
		[[ $id =~ ^[0-9]+$ ]] && [ "$id" -ge "$FIRST_JOB" ] && echo "${f#/dev/shm/}"
	done
}

# step LOG TIMEOUT [ENV=V...] -- SRUN-ARGS...: runs srun under a time limit;
# sets RC and ELAPSED (seconds, 0.1 s resolution).
step() {
	local log=$1 tmo=$2 t0 t1
	shift 2
	local envs=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	t0=$(date +%s%N)
	# In the background, so that a signal to this script is handled at once.
	env "${envs[@]}" timeout -k 5 "$tmo" "${S[@]}" srun "$@" >"$log" 2>&1 &
	CHILD=$!
	wait "$CHILD"
	RC=$?
	CHILD=
	t1=$(date +%s%N)
	ELAPSED=$(((t1 - t0) / 100000000))
	ELAPSED="$((ELAPSED / 10)).$((ELAPSED % 10))"
	echo "    srun exit status $RC after $ELAPSED s" >>"$log"
	# A step that outlived its time limit may keep its job: end it.
	if [ $RC -eq 124 ] || [ $RC -eq 137 ]; then
		echo "    timed out after $tmo s" >>"$log"
		cancel_jobs
	fi
}

# judge NAME LOG EXPECT [MAX_SECONDS]: RC against EXPECT (a status,
# "nonzero": not 0 nor a time-out's 124 or 137, or "killed": not 0 nor
# 124, for a job with a task killed by SIGKILL), the time, and /dev/shm.
judge() {
	local name=$1 log=$2 expect=$3 max=${4:-} ok=0 left f
	if [ "$expect" = nonzero ]; then
		[ $RC -ne 0 ] && [ $RC -ne 124 ] && [ $RC -ne 137 ] && ok=1
	elif [ "$expect" = killed ]; then
		[ $RC -ne 0 ] && [ $RC -ne 124 ] && ok=1
	else
		[ $RC -eq "$expect" ] && ok=1
	fi
	left=$(shm_left)
	if [ $ok = 1 ] && [ -n "$max" ] && [ "${ELAPSED%.*}" -ge "$max" ]; then
		fail "$name (took $ELAPSED s, limit $max s)" "$log"
	elif [ $ok = 1 ] && [ -n "$left" ]; then
		fail "$name (left in /dev/shm: $(echo "$left" | paste -sd' '))" "$log"
		for f in $left; do rm -f "/dev/shm/$f"; done
	elif [ $ok = 1 ]; then
		pass "$name"
	else
		echo "    expected exit status $expect" >>"$log"
		fail "$name" "$log"
	fi
}

# The ibx-test line of a tests/mpi program, and its keys (the syntax
# tests/run-tests.sh reads: KEY=value or KEY="several words").
header_line() { sed -n 's/.*ibx-test:\(.*\)\*\/.*/\1/p;s/.*ibx-test:\(.*\)$/\1/p' "$1" | head -n 1; }
key() { # KEY LINE
	local re="(^|[[:space:]])$1=(\"[^\"]*\"|[^[:space:]]*)"
	if [[ $2 =~ $re ]]; then
		local v=${BASH_REMATCH[2]}
		v=${v#\"}
		echo "${v%\"}"
	fi
}

# ---- PMIx through Slurm ---------------------------------------------------------

RESULTS=$TMP/results
mkdir -p "$RESULTS"
SCALE=${IBX_TEST_TIMEOUT_SCALE:-1}

# Why Slurm's PMIx plugin cannot serve here, or nothing.
pmix_unusable() {
	local log=$1 lib
	if ! "${S[@]}" srun --mpi=list 2>&1 | grep -q '^[[:space:]]*pmix'; then
		echo "Slurm has no PMIx plugin (srun --mpi=list lists no pmix: Debian ships mpi_pmix_v4.so in slurm-wlm-basic-plugins)"
		return
	fi
	lib=$(grep -ahoE '/[[:alnum:]_./-]*pmix[[:alnum:]_./-]*/lib' "$PLUGDIR"/mpi_pmix*.so 2>/dev/null | head -n 1)
	if grep -q 'can not load PMIx library' "$log"; then
		echo "Slurm's mpi_pmix plugin cannot load ${lib:-<its libpmix dir>}/libpmix.so: that unversioned library comes with libpmix-dev"
	elif grep -q 'incorrect PMIx library version' "$log"; then
		echo "PMIx version mismatch: $(grep -o 'incorrect PMIx library version.*' "$log" | head -n 1)"
	fi
}

PROBE=$RESULTS/pmix-probe.log
step "$PROBE" 60 -- --mpi=pmix -n 2 -J ibx-probe printenv PMIX_NAMESPACE PMIX_RANK
why=
if [ $RC -ne 0 ] || [ "$(grep -c '^slurm\.pmix\.' "$PROBE")" -ne 2 ]; then
	why=$(pmix_unusable "$PROBE")
	if [ -z "$why" ]; then
		fail "slurm/pmix-probe (srun --mpi=pmix -n 2 printenv PMIX_NAMESPACE: exit $RC)" "$PROBE"
	fi
	why=${why:-the probe failed}
else
	pass slurm/pmix-probe
fi

# ---- srun without PMIx ----------------------------------------------------------------

NOPMIX_MSG="started by srun as one of 2 tasks, but without PMIx"
PROG_ENV=$BUILD/tests/mpi/environment
if ! filtered slurm/no-pmix; then
	hows="mpi-none default"
	# Slurm's PMI-2 (PMI_FD set) is not PMIx either: the same refusal.
	"${S[@]}" srun --mpi=list 2>&1 | grep -q '^[[:space:]]*pmi2' && hows+=" pmi2"
	for how in $hows; do
		log=$RESULTS/no-pmix-$how.log
		case $how in
		mpi-none) step "$log" 60 -- --mpi=none -n 2 -J ibx-nopmix "$PROG_ENV" ;;
		default) step "$log" 60 -- -n 2 -J ibx-nopmix "$PROG_ENV" ;;
		pmi2) step "$log" 60 -- --mpi=pmi2 -n 2 -J ibx-nopmix "$PROG_ENV" ;;
		esac
		if [ $RC -ne 0 ] && [ $RC -ne 124 ] && [ $RC -ne 137 ] &&
			[ "$(grep -cF "$NOPMIX_MSG" "$log")" -eq 2 ]; then
			pass "slurm/no-pmix/$how"
		else
			echo "    exit status $RC; expected non-zero and, from each task, \"$NOPMIX_MSG\"" >>"$log"
			fail "slurm/no-pmix/$how" "$log"
		fi
	done
	log=$RESULTS/no-pmix-singleton.log
	step "$log" 60 -- --mpi=none -n 1 -J ibx-nopmix "$PROG_ENV"
	judge slurm/no-pmix/singleton "$log" 0
fi

if [ -n "$why" ]; then
	skip slurm/pmix "$why"
	finish
fi

# ---- failures end the job, promptly, and leave nothing ---------------------------------------

if ! filtered slurm/abort; then
	log=$RESULTS/abort-np4.log
	step "$log" 60 -- --mpi=pmix -n 4 -J ibx-abort "$BUILD/tests/mpi/abort"
	judge slurm/abort/np4 "$log" 7 10
fi
if ! filtered slurm/rank-death; then
	log=$RESULTS/rank-death-np4.log
	step "$log" 60 -- --mpi=pmix -n 4 -J ibx-death "$BUILD/tests/mpi/rank_death"
	judge slurm/rank-death/np4 "$log" nonzero 15
fi

# kill -9 of one task of a job whose ranks all wait for one another.
kill9() {
	local log=$RESULTS/kill9-np4.log hold=$TMP/bin/hold pid i t0 t1 srun_pid
	if ! "$BUILD/bin/mpilite-cc" -O1 -o "$hold" tests/slurm/hold.c >"$log" 2>&1; then
		fail "slurm/kill-9/np4 (hold.c does not build)" "$log"
		return
	fi
	"${S[@]}" timeout -k 5 60 srun --mpi=pmix -n 4 -J ibx-kill9 "$hold" >"$log" 2>&1 &
	srun_pid=$!
	CHILD=$srun_pid
	pid=
	for ((i = 0; i < 300; i++)); do
		pid=$(sed -n 's/^hold: rank 3 pid \([0-9]*\) of 4$/\1/p' "$log")
		[ -n "$pid" ] && [ "$(grep -c '^hold: rank' "$log")" -eq 4 ] && break
		alive "$srun_pid" || break
		sleep 0.1
	done
	if [ -z "$pid" ]; then
		wait "$srun_pid"
		RC=$?
		CHILD=
		echo "    exit status $RC before every rank was up" >>"$log"
		fail "slurm/kill-9/np4 (the job did not start)" "$log"
		return
	fi
	sleep 0.5 # let them reach their waits
	t0=$(date +%s%N)
	kill -KILL "$pid"
	wait "$srun_pid"
	RC=$?
	CHILD=
	t1=$(date +%s%N)
	ELAPSED=$(((t1 - t0) / 100000000))
	ELAPSED="$((ELAPSED / 10)).$((ELAPSED % 10))"
	echo "    rank 3 (pid $pid) killed; srun ended $ELAPSED s later with status $RC" >>"$log"
	[ $RC -eq 124 ] || [ $RC -eq 137 ] && cancel_jobs
	judge slurm/kill-9/np4 "$log" killed 15
}
filtered slurm/kill-9 || kill9

# ---- the MPI programs ------------------------------------------------------------------

# The representative subset (IBX_SLURM_SUBSET=1).
SUBSET=" p2p_match p2p_sizes p2p_requests collectives coll_reduce coll_alltoall nbc_coll
 rma_sync_fence rma_lock_excl rma_acc_cas rma_win_share mutex_excl abort rank_death errors_fatal
 environment thread_multiple io_basic "

# The programs share a time budget (IBX_SLURM_BUDGET seconds, 300 by default;
# 0: none): once it is spent, the rest are SKIPs that say so.
BUDGET=${IBX_SLURM_BUDGET:-300}
T_MPI=$SECONDS
for src in tests/mpi/*.c; do
	base=$(basename "$src" .c)
	[ "${IBX_SLURM_SUBSET:-0}" = 1 ] && [[ $SUBSET != *" $base "* ]] && continue
	if [ -n "${IBX_TEST_FILTER:-}" ]; then
		any=
		for np in 1 2 3 4; do filtered "slurm/$base/np$np" || any=1; done
		[ -z "$any" ] && continue
	fi
	prog=$BUILD/tests/mpi/$base
	hl=$(header_line "$src")
	nps=$(key np "$hl")
	nps=${nps:-1,2,3,4}
	tmo=$(key timeout "$hl")
	tmo=$(((${tmo:-60}) * SCALE))
	expect=$(key expect "$hl")
	expect=${expect:-0}
	args=$(key args "$hl")
	tenv=$(key env "$hl")
	paths=$(key paths "$hl")
	paths=${paths:-auto,shm,verbs}
	for np in 1 2 3 4; do
		[[ ",$nps," == *",$np,"* ]] || continue
		[ -n "${IBX_TEST_NPS:-}" ] && [[ ",$IBX_TEST_NPS," != *",$np,"* ]] && continue
		name=slurm/$base/np$np
		filtered "$name" && continue
		if [ "$BUDGET" -gt 0 ] && [ $((SECONDS - T_MPI)) -ge "$BUDGET" ]; then
			skip "$name" "the lane's time budget of $BUDGET s is spent: IBX_SLURM_BUDGET"
			continue
		fi
		if [ ! -x "$prog" ]; then fail "$name (not built)"; continue; fi
		if [[ ",$paths," != *",${IBX_PATHS:-auto},"* ]]; then
			skip "$name" "not for IBX_PATHS=${IBX_PATHS:-auto} (paths=$paths)"
			continue
		fi
		log=$RESULTS/$base-np$np.log
		# shellcheck disable=SC2086 # env= and args= are word lists
		step "$log" $((tmo + 15)) $tenv -- --mpi=pmix -n "$np" -J "ibx-$base" "$prog" $args
		judge "$name" "$log" "$expect"
	done
done

finish
