#!/bin/bash
# run-in-vm.sh — runs a command on a real verbs device: Soft-RoCE in a qemu VM.
#
#   tests/rxe/run-in-vm.sh [--timeout S] [--mem M] -- command args...
#
# The host kernel has no RDMA stack, so this boots Debian's generic kernel
# (fetch-kernel.sh caches it) under qemu TCG and runs the command there with:
#   * the host's / as root file system (9p, read-only, under a tmpfs overlay):
#     every host binary and library runs unchanged;
#   * the current directory shared read-write at the same path (build
#     outputs and logs written by the command appear on the host);
#   * the rxe device "rxed" (port 1 ACTIVE, active_mtu 4096) on the dummy
#     netdev d0 = 10.56.0.1/24, and no other network than lo;
#   * cwd and environment as here: PATH, BUILD, HOME, LANG, LC_ALL, the
#     sanitizers' options (ASAN_/LSAN_/TSAN_/UBSAN_OPTIONS, so that a
#     sanitizer build's suppressions hold in the guest too), every IBX_*
#     variable and the names listed in IBX_RXE_PASSENV (space or comma
#     separated); memlock unlimited; running as root.
# The command's stdout and stderr arrive here on stdout and stderr (streamed
# through virtio-serial ports) and its exit status is this script's.
#
# Exit status: the command's; 124 when the guest did not finish within the
# timeout (it is killed); 125 when the VM could not be set up (the console log
# is shown) or its kernel panicked (a CPU stuck in the kernel for a minute
# panics it; the backtrace is shown). The command's stdin is /dev/null. Files
# it writes outside the working directory stay in the guest (RAM) and are gone
# after the run.
# Environment: IBX_RXE_CACHE (kernel cache), IBX_RXE_VERBOSE=1 (boot timing
# and the guest console on stderr; 2: with every kernel message), IBX_RXE_SMP (vCPUs, default 2: more
# vCPUs than host cores make busy-polling ranks lose their CPU), and those of
# fetch-kernel.sh.
# See docs/soft-roce.md for why each piece is the way it is.
# The whole script is one { } group, which bash parses completely before
# running any of it: a run takes minutes, and editing this file meanwhile
# must not make the running instance read a shifted text.
{
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TIMEOUT=1800
MEM=2G

usage() {
	echo "usage: $0 [--timeout SECONDS] [--mem SIZE] -- command args..." >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case $1 in
	--timeout) [ $# -ge 2 ] || usage; TIMEOUT=$2; shift 2 ;;
	--timeout=*) TIMEOUT=${1#*=}; shift ;;
	--mem) [ $# -ge 2 ] || usage; MEM=$2; shift 2 ;;
	--mem=*) MEM=${1#*=}; shift ;;
	--) shift; break ;;
	-h | --help) usage ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || usage
[[ $TIMEOUT =~ ^[0-9]+$ ]] && [ "$TIMEOUT" -gt 0 ] || { echo "run-in-vm: bad --timeout '$TIMEOUT'" >&2; exit 2; }
[[ $MEM =~ ^[0-9]+[MGmg]?$ ]] || { echo "run-in-vm: bad --mem '$MEM'" >&2; exit 2; }

say() { echo "run-in-vm: $*" >&2; }
verbose() { [ "${IBX_RXE_VERBOSE:-0}" != 0 ] && say "$@"; return 0; }

WORKDIR=$PWD
# Sharing / read-write would let the guest write anywhere on the host.
[ "$WORKDIR" != / ] || { say "refusing to share / read-write: run from a project directory"; exit 2; }

command -v qemu-system-x86_64 >/dev/null || { say "qemu-system-x86_64 missing (scripts/deps.sh installs it)"; exit 125; }

t0=$(date +%s.%N)
kinfo=$(bash "$HERE/fetch-kernel.sh") || { say "could not prepare the kernel (fetch-kernel.sh failed)"; exit 125; }
eval "$kinfo" # IBX_RXE_KVER, IBX_RXE_VMLINUZ, IBX_RXE_INITRD, IBX_RXE_MODDIR

# The job directory is read by the guest through the host-root share, so its
# path goes on the kernel command line: keep it free of spaces.
tmpbase=${TMPDIR:-/tmp}
[[ $tmpbase =~ ^[A-Za-z0-9/._+-]+$ ]] || tmpbase=/tmp
JOB=$(mktemp -d "$tmpbase/ibx-rxe.XXXXXX")
QEMU_PID=
# On any exit: stop a still running guest (TERM to timeout, which passes it
# on to qemu) and remove the job directory. No set -e in here: a failing
# kill must not skip the rest.
cleanup() {
	set +e
	if [ -n "$QEMU_PID" ]; then
		kill "$QEMU_PID" 2>/dev/null
		wait "$QEMU_PID" 2>/dev/null
	fi
	rm -rf "$JOB"
}
# The guest's console so far: on a failure, and when an outer time limit
# stops this script (the guest may have hung before the command started).
show_console() {
	local n=40
	[ "${IBX_RXE_VERBOSE:-0}" != 0 ] && n=100000
	say "---- guest console (last $n lines) ----"
	tr -d '\r' <"$JOB/console.log" 2>/dev/null | tail -n $n | sed 's/^/  | /' >&2
	if [ -s "$JOB/qemu.log" ]; then
		say "---- qemu ----"
		sed 's/^/  | /' "$JOB/qemu.log" >&2
	fi
}

trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT
trap 'say "terminated"; show_console; exit 143' TERM

# guest.conf is sourced by busybox sh in the initramfs: single-quote values.
sq() { printf "'%s'" "${1//\'/\'\\\'\'}"; }
{
	echo "WORKDIR=$(sq "$WORKDIR")"
	echo "KVER=$(sq "$IBX_RXE_KVER")"
	echo "MODDIR=$(sq "$IBX_RXE_MODDIR")"
} >"$JOB/guest.conf"

# job.sh runs under the host's bash inside the chroot, with an empty
# environment: export exactly what the caller passes through.
passenv=(PATH BUILD HOME LANG LC_ALL TZ ASAN_OPTIONS LSAN_OPTIONS TSAN_OPTIONS UBSAN_OPTIONS)
for name in $(compgen -e); do
	[[ $name == IBX_* ]] && passenv+=("$name")
done
for name in ${IBX_RXE_PASSENV:+${IBX_RXE_PASSENV//,/ }}; do passenv+=("$name"); done
{
	echo "# generated by run-in-vm.sh"
	for name in "${passenv[@]}"; do
		[[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || continue
		[ -n "${!name+set}" ] || continue
		printf 'export %s=%q\n' "$name" "${!name}"
	done
	echo "export IBX_RXE_GUEST=1"
	printf 'cd -- %q || exit 125\n' "$WORKDIR"
	echo "ulimit -l unlimited"
	printf 'exec'
	printf ' %q' "$@"
	echo
} >"$JOB/job.sh"

# stdout/stderr are streamed: qemu's pipe chardev writes to PATH.out (and reads
# PATH.in, which nobody writes); a cat here forwards each as it arrives.
mkfifo "$JOB/out.in" "$JOB/out.out" "$JOB/err.in" "$JOB/err.out"
cat "$JOB/out.out" &
CAT_OUT=$!
cat "$JOB/err.out" >&2 &
CAT_ERR=$!

SMP=${IBX_RXE_SMP:-2}
# The kernel's boot messages cost time on the emulated UART: only at level 2;
# otherwise errors and warnings (level 4 and below: a backtrace is level 4).
quiet="quiet loglevel=5"
[ "${IBX_RXE_VERBOSE:-0}" = 2 ] && quiet=
# A CPU stuck in the kernel for 2 x 30 s (the soft-lockup watchdog) panics the
# guest, and panic=-1 with -no-reboot ends qemu: the run ends with the
# kernel's backtrace on the console instead of waiting for the time limit.
watchdog="watchdog_thresh=30 softlockup_panic=1"
# qemu splits option values at commas; a literal comma is written twice.
qpath() { printf '%s' "${1//,/,,}"; }
qemu=(qemu-system-x86_64
	-accel tcg -cpu max -smp "$SMP" -m "$MEM"
	-nodefaults -no-user-config -no-reboot -display none
	-kernel "$IBX_RXE_VMLINUZ" -initrd "$IBX_RXE_INITRD"
	-append "console=ttyS0 panic=-1 $watchdog $quiet mitigations=off tsc=reliable ibx.job=$JOB"
	-serial "file:$JOB/console.log"
	-fsdev "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap"
	-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot
	-fsdev "local,id=work,path=$(qpath "$WORKDIR"),security_model=none,multidevs=remap"
	-device virtio-9p-pci,fsdev=work,mount_tag=work
	-device virtio-serial-pci
	-chardev "pipe,id=out,path=$JOB/out" -device virtserialport,chardev=out,name=ibx.stdout
	-chardev "pipe,id=err,path=$JOB/err" -device virtserialport,chardev=err,name=ibx.stderr
	-chardev "file,id=status,path=$JOB/status" -device virtserialport,chardev=status,name=ibx.status
)
verbose "kernel $IBX_RXE_KVER, ${SMP} vCPUs, $MEM, timeout ${TIMEOUT}s"
# qemu runs in the background so that an interrupt here can stop it; timeout
# kills a hung guest (TERM, then KILL 10 s later).
set +e
timeout -k 10 "$TIMEOUT" "${qemu[@]}" </dev/null >"$JOB/qemu.log" 2>&1 &
QEMU_PID=$!
wait "$QEMU_PID"
qrc=$?
QEMU_PID=
# If qemu never opened the fifos (it failed early), the cats still wait for
# a writer: open each once read-write (which never blocks) so they see end of
# file.
exec 7<>"$JOB/out.out" 8<>"$JOB/err.out"
exec 7>&- 8>&-
wait "$CAT_OUT" "$CAT_ERR"
set -e
t1=$(date +%s.%N)

ready=$(sed -n 's/^ready \([0-9.]*\).*/\1/p' "$JOB/status" 2>/dev/null | head -n 1)
status=$(sed -n 's/^exit \([0-9]*\).*/\1/p' "$JOB/status" 2>/dev/null | tail -n 1)
# Fallback when the status port lost it: the sentinel on the serial console.
[ -n "$status" ] || status=$(tr -d '\r' <"$JOB/console.log" 2>/dev/null | sed -n 's/.*IBX-RXE-EXIT \([0-9]*\).*/\1/p' | tail -n 1)

verbose "guest ready after ${ready:-?} s of guest uptime; whole run $(awk "BEGIN {printf \"%.1f\", $t1 - $t0}") s"
[ "${IBX_RXE_VERBOSE:-0}" != 0 ] && show_console

if [ -n "$status" ]; then
	exit "$status"
fi
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	say "TIMEOUT: the guest did not finish within ${TIMEOUT}s and was killed${ready:+ (it had booted in ${ready}s)}"
	[ "${IBX_RXE_VERBOSE:-0}" != 0 ] || show_console
	exit 124
fi
if tr -d '\r' <"$JOB/console.log" 2>/dev/null | grep -q 'Kernel panic'; then
	# The first report and its backtrace, short enough for a log's tail.
	say "the guest kernel panicked (qemu exit $qrc); its first report:"
	tr -d '\r' <"$JOB/console.log" | sed -n '/BUG:\|Oops\|Kernel panic/,$p' | head -n 36 | sed 's/^/  | /' >&2
	exit 125
fi
say "the VM ended without reporting an exit status (qemu exit $qrc); IBX_RXE_VERBOSE=2 shows the whole kernel log"
[ "${IBX_RXE_VERBOSE:-0}" != 0 ] || show_console
exit 125
}
