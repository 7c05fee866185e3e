#!/bin/busybox sh
# guest-init.sh — PID 1 of the Soft-RoCE VM (becomes /init in the initramfs).
#
# Boot sequence (run-in-vm.sh is the host side):
#   1. load the modules packed into the initramfs (virtio, 9p, overlay, and
#      the RDMA stack: crc32_generic, rdma_rxe, ib_uverbs, rdma_ucm, dummy)
#   2. mount the host's / (9p, read-only) under a tmpfs overlay at /newroot,
#      the caller's working directory (9p, read-write) at the same path
#   3. with the host's ip and rdma tools (chrooted): create dummy netdev d0
#      and the rxe device "rxed" on it, wait for its port to become ACTIVE
#   4. run the job script (chrooted, as root, memlock unlimited) with stdout
#      and stderr on virtio-serial ports that the host reads
#   5. report "exit N" on the status port, sync, unmount, power off
# Any failure before the job reports status 125 and powers off: the host must
# never wait for its timeout because of a setup error.
# This stays PID 1 in the initramfs (no switch_root) so that the kernel's
# module auto-loading can reach /sbin/ibx-modprobe, which forwards into the chroot.

/bin/busybox --install -s /bin
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev

STATUS=/dev/null
ERR=/dev/console
say() { echo "ibx-rxe: [$(cut -d' ' -f1 /proc/uptime)] $*" >/dev/console; }
fail() {
	say "setup failed: $*"
	echo "run-in-vm (guest): setup failed: $*" >"$ERR"
	echo "exit 125" >"$STATUS"
	echo "IBX-RXE-EXIT 125" >/dev/console
	halt_vm
}
halt_vm() {
	sync
	# poweroff needs ACPI; with qemu -no-reboot a reboot ends qemu as well.
	poweroff -f
	sleep 2
	reboot -f
}
uptime_s() { cut -d' ' -f1 /proc/uptime; }

# virtio/9p/overlay and the RDMA stack, dependencies first (fetch-kernel.sh
# resolved the order and decompressed them).
while read -r m opts; do
	insmod "/lib/modules/$m" $opts || fail "insmod $m"
done </etc/modules

# virtio-serial ports appear asynchronously once virtio_console has probed;
# find them by name, not by number. (Waits here are generous: a loaded CI host
# can slow TCG down several times, and a setup failure must be real.)
port() {
	local p
	for p in /sys/class/virtio-ports/vport*; do
		[ "$(cat "$p/name" 2>/dev/null)" = "$1" ] && { echo "/dev/${p##*/}"; return 0; }
	done
	return 1
}
i=0
while ! port ibx.status >/dev/null || ! port ibx.stdout >/dev/null || ! port ibx.stderr >/dev/null; do
	i=$((i + 1))
	[ $i -gt 600 ] && fail "virtio-serial ports did not appear in 30 s"
	sleep 0.05
done
STATUS=$(port ibx.status)
OUT=$(port ibx.stdout)
ERR=$(port ibx.stderr)
i=0
while [ ! -c "$STATUS" ] || [ ! -c "$OUT" ] || [ ! -c "$ERR" ]; do
	i=$((i + 1))
	[ $i -gt 600 ] && fail "virtio-serial device nodes did not appear in 30 s"
	sleep 0.05
done

say "modules loaded, serial ports found"
JOB=$(sed -n 's/.*ibx\.job=\([^ ]*\).*/\1/p' /proc/cmdline)
[ -n "$JOB" ] || fail "no ibx.job= on the kernel command line"

# msize: 9p's default of 8 KiB makes every read a round trip per 8 KiB.
NINEP="trans=virtio,version=9p2000.L,msize=262144"
mount -t 9p -o "$NINEP,ro,cache=loose" hostroot /host || fail "mount host root (9p)"
[ -f "/host$JOB/guest.conf" ] || fail "job directory $JOB not visible through 9p"
. "/host$JOB/guest.conf"   # WORKDIR, KVER, MODDIR

# The overlay makes the read-only host tree writable (/etc/hosts, /tmp, ...)
# with the writes staying in guest RAM; host files stay visible, so a script
# in the host's /tmp can be run in the guest.
mount -t tmpfs -o mode=755 tmpfs /rw || fail "tmpfs"
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/host,upperdir=/rw/upper,workdir=/rw/work /newroot ||
	fail "overlay over the host root"
R=/newroot
mount -t proc proc $R/proc || fail "proc in the new root"
mount -t sysfs sys $R/sys || fail "sysfs in the new root"
mount -t devtmpfs dev $R/dev || fail "devtmpfs in the new root"
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts -o newinstance,ptmxmode=0666 devpts $R/dev/pts
# devtmpfs has only device nodes; udev would add these links. bash's process
# substitution needs /dev/fd, pty allocation the devpts instance's ptmx.
ln -sf /proc/self/fd $R/dev/fd
ln -sf /proc/self/fd/0 $R/dev/stdin
ln -sf /proc/self/fd/1 $R/dev/stdout
ln -sf /proc/self/fd/2 $R/dev/stderr
ln -sf pts/ptmx $R/dev/ptmx
mount -t tmpfs -o mode=1777 tmpfs $R/dev/shm
mount -t tmpfs -o mode=755 tmpfs $R/run
# cache=mmap: writes go straight to the host (results must survive poweroff)
# and mmap works (some tools map their output files).
mount -t 9p -o "$NINEP,cache=mmap" work "$R$WORKDIR" || fail "mount working directory $WORKDIR (9p)"
# The host has no modules for this kernel; give modprobe the cached tree.
mkdir -p "$R/lib/modules/$KVER"
mount --bind "/host$MODDIR" "$R/lib/modules/$KVER" || fail "bind module tree"
echo /sbin/ibx-modprobe >/proc/sys/kernel/modprobe
cp "/host$JOB/job.sh" $R/run/ibx-job.sh || fail "copy job script"

say "file systems mounted"
hostname ibx-rxe
echo "127.0.1.1 ibx-rxe" >>$R/etc/hosts

in_root() { chroot $R /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"; }

# One rxe device on a dummy netdev: rxe loops traffic between processes on
# the same device internally. MTU 4200 so that active_mtu is 4096 (with 1500
# it would be 1024), like InfiniBand hardware.
# (One ip process: each host binary started through 9p costs time.)
in_root ip -batch - <<EOF || fail "setting up dummy netdev d0"
link set lo up
link add d0 type dummy
link set d0 mtu 4200
addr add 10.56.0.1/24 dev d0
link set d0 up
EOF
in_root rdma link add rxed type rxe netdev d0 || fail "rdma link add rxed type rxe netdev d0"
i=0
until grep -q ACTIVE /sys/class/infiniband/rxed/ports/1/state 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt 1200 ] && fail "rxed port 1 not ACTIVE after 60 s: $(cat /sys/class/infiniband/rxed/ports/1/state 2>&1)"
	sleep 0.05
done

say "rxed active"
# Pinned memory: every verbs registration counts against RLIMIT_MEMLOCK.
ulimit -l unlimited
echo "ready $(uptime_s)" >"$STATUS"
say "ready"

chroot $R /usr/bin/env -i /bin/bash /run/ibx-job.sh <$R/dev/null >"$OUT" 2>"$ERR"
rc=$?

echo "exit $rc" >"$STATUS"
echo "IBX-RXE-EXIT $rc" >/dev/console
sync
umount "$R$WORKDIR" 2>/dev/null
halt_vm
