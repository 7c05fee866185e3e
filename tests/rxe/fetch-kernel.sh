#!/bin/bash
# fetch-kernel.sh — makes sure the Soft-RoCE VM has a kernel and an initramfs.
#
#   tests/rxe/fetch-kernel.sh            prepare the cache, print what it holds
#
# The host kernel has no RDMA subsystem, so the verbs lane boots a Debian
# kernel that has one (rdma_rxe) under qemu; see docs/soft-roce.md.
# This script keeps that kernel in a cache directory:
#
#   $IBX_RXE_CACHE (default tests/rxe/cache/, git-ignored)
#     <kver>/root/            the unpacked linux-image-<kver>-unsigned package
#                             (boot/vmlinuz-<kver>, lib/modules/<kver>, depmod'ed)
#     <kver>/complete         written last: the unpack finished
#     <kver>/initramfs.cpio.gz, <kver>/initramfs.stamp
#
# On stdout it prints shell assignments for run-in-vm.sh (everything else goes
# to stderr):
#   IBX_RXE_KVER=...  IBX_RXE_VMLINUZ=...  IBX_RXE_INITRD=...  IBX_RXE_MODDIR=...
#
# The kernel is the newest generic `linux-image-*-amd64-unsigned` that
# apt-cache lists in the distribution's default kernel line (see
# newest_kernel below), found anew each time because Debian's security
# updates bump the ABI number and retire old packages. Environment:
#   IBX_RXE_CACHE        cache directory
#   IBX_RXE_KERNEL_SERIES  kernel line to take the newest of (default: the one
#                        linux-image-amd64 depends on, e.g. 6.1.0)
#   IBX_RXE_KERNEL_PKG   pin a package name instead (e.g. linux-image-6.1.0-56-amd64-unsigned)
#   IBX_RXE_OFFLINE=1    never touch apt: use the newest kernel already cached
# When cached it costs a stat of the apt lists and a checksum (~0.1 s).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${IBX_RXE_CACHE:-$HERE/cache}
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)

say() { echo "fetch-kernel: $*" >&2; }
die() { say "error: $*"; exit 1; }

# Modules packed into the initramfs and loaded by its init, in this order
# (their modules.dep closure is added automatically):
# * what reaches the host's root over virtio-9p (the note's list; 6.1 needs
#   netfs and fscache, 6.12 has virtio built in and fscache inside netfs);
# * the RDMA stack. crc32_generic is no modinfo dependency of rdma_rxe, but
#   rxe asks the crypto API for "crc32" when a link is added and fails with
#   "failed to init crc32 algorithm" without it. Loading these from the
#   initramfs rather than with modprobe through 9p saves a second of boot.
# Names the kernel has built in or does not have are skipped, except the ones
# without which nothing can work.
INITRAMFS_MODULES="virtio virtio_ring virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci
virtio_console 9pnet 9pnet_virtio netfs fscache 9p overlay
crc32_generic rdma_rxe ib_uverbs rdma_ucm dummy"
REQUIRED_MODULES="virtio_pci virtio_console 9pnet_virtio 9p overlay rdma_rxe ib_uverbs rdma_ucm dummy"

# One fetch at a time per cache: two lanes started together must not unpack
# into the same directory.
exec 9>"$CACHE/.lock"
flock 9

# --- which kernel --------------------------------------------------------
# The newest generic flavour (-cloud lacks rdma_rxe; -rt is not wanted) of
# the kernel line the distribution ships by default, i.e. the one its
# linux-image-amd64 metapackage points at (6.1 on Debian 12). Not simply the
# newest name: Debian 12 also lists opt-in 6.12 kernels, and their rxe under
# TCG was measured 200x slower (ib_write_lat ~2000 us instead of ~11 us with
# 6.1, at any -smp), which would swamp every latency comparison and time
# limit. IBX_RXE_KERNEL_SERIES=6.12 selects that line anyway.
list_kernels() {
	apt-cache search --names-only '^linux-image-.*-amd64-unsigned$' 2>/dev/null |
		awk '{print $1}' | grep -Ev -- '-(cloud|rt)-amd64-unsigned$' | sort -V
}

default_series() {
	# "Depends: linux-image-6.1.0-56-amd64" -> 6.1.0
	apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: linux-image-\([0-9]*\.[0-9]*\(\.[0-9]*\)\?\)-.*-amd64$/\1/p' | head -n 1
}

newest_kernel() {
	local series=${IBX_RXE_KERNEL_SERIES:-$(default_series)} all pick=
	all=$(list_kernels)
	if [ -n "$series" ]; then
		# 6.1.0 matches linux-image-6.1.0-56-amd64-unsigned, 6.12 matches
		# linux-image-6.12.117+deb12-amd64-unsigned.
		pick=$(grep -E "^linux-image-${series//./\\.}[-.+]" <<<"$all" | tail -n 1)
	fi
	[ -n "$pick" ] || pick=$(tail -n 1 <<<"$all")
	echo "$pick"
}

# Prints nothing (and still succeeds) when the cache is empty.
newest_cached() {
	local d
	for d in "$CACHE"/*/complete; do
		if [ -f "$d" ]; then basename "$(dirname "$d")"; fi
	done | sort -V | tail -n 1
}

apt_update() {
	if [ "$(id -u)" = 0 ]; then
		say "refreshing the apt lists"
		apt-get update -qq >&2 || say "apt-get update failed"
	elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		sudo -n apt-get update -qq >&2 || say "apt-get update failed"
	else
		say "cannot run apt-get update (not root)"
	fi
}

pkg=
if [ -n "${IBX_RXE_KERNEL_PKG:-}" ]; then
	pkg=$IBX_RXE_KERNEL_PKG
elif [ "${IBX_RXE_OFFLINE:-0}" != 1 ]; then
	# apt-cache takes a second or two of CPU; its answer only changes when the
	# apt lists do (apt-get update renames files into that directory).
	key="$(stat -c %Y /var/lib/apt/lists 2>/dev/null)-${IBX_RXE_KERNEL_SERIES:-default}"
	if [ -f "$CACHE/resolved" ] && [ "$(head -n 1 "$CACHE/resolved")" = "$key" ]; then
		pkg=$(sed -n 2p "$CACHE/resolved")
	else
		pkg=$(newest_kernel)
		if [ -z "$pkg" ] && [ -z "$(newest_cached)" ]; then
			# Fresh containers often ship without apt lists.
			apt_update
			key="$(stat -c %Y /var/lib/apt/lists 2>/dev/null)-${IBX_RXE_KERNEL_SERIES:-default}"
			pkg=$(newest_kernel)
		fi
		[ -z "$pkg" ] || printf '%s\n%s\n' "$key" "$pkg" >"$CACHE/resolved"
	fi
fi

if [ -n "$pkg" ]; then
	kver=${pkg#linux-image-}
	kver=${kver%-unsigned}
else
	kver=$(newest_cached)
	[ -n "$kver" ] || die "no linux-image-*-amd64-unsigned package listed by apt-cache and none cached in $CACHE"
	say "using cached kernel $kver (offline, or apt-cache lists none)"
fi
dir=$CACHE/$kver

# --- download and unpack ---------------------------------------------------
fetch() {
	local tmp deb
	tmp=$(mktemp -d "$CACHE/.dl.XXXXXX")
	# apt drops privileges to _apt for downloads; let it write here.
	chmod 755 "$CACHE"
	chmod 777 "$tmp"
	say "downloading $pkg (about 70-100 MB, once)"
	if ! (cd "$tmp" && apt-get download -q "$pkg" >&2); then
		# A stale list points at a .deb the mirror has already dropped.
		apt_update
		(cd "$tmp" && apt-get download -q "$pkg" >&2) || { rm -rf "$tmp"; return 1; }
	fi
	deb=$(ls "$tmp"/*.deb)
	rm -rf "$dir"
	mkdir -p "$dir/root"
	say "unpacking $(basename "$deb")"
	dpkg-deb -x "$deb" "$dir/root"
	rm -rf "$tmp"
	# Newer packages put modules under usr/lib only; depmod -b and the guest
	# both look in lib/modules.
	if [ ! -d "$dir/root/lib/modules/$kver" ] && [ -d "$dir/root/usr/lib/modules/$kver" ]; then
		ln -s usr/lib "$dir/root/lib"
	fi
	[ -f "$dir/root/boot/vmlinuz-$kver" ] || die "$pkg has no boot/vmlinuz-$kver"
	[ -d "$dir/root/lib/modules/$kver" ] || die "$pkg has no lib/modules/$kver"
	# So that modprobe works inside the guest (and for --show-depends below).
	depmod -b "$dir/root" "$kver"
	touch "$dir/complete"
}

if [ ! -f "$dir/complete" ]; then
	if ! fetch; then
		old=$(newest_cached)
		[ -n "$old" ] || die "could not download $pkg"
		say "could not download $pkg; falling back to cached kernel $old"
		kver=$old
		dir=$CACHE/$kver
	else
		# Each Debian ABI bump would otherwise leave ~400 MB behind.
		for old in "$CACHE"/*/complete; do
			old=$(dirname "$old")
			[ "$old" = "$dir" ] || { say "removing old kernel $(basename "$old")"; rm -rf "$old"; }
		done
	fi
fi

root=$dir/root
moddir=$root/lib/modules/$kver
[ -f "$moddir/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko" ] ||
	ls "$moddir"/kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko* >/dev/null 2>&1 ||
	die "kernel $kver has no rdma_rxe module (wrong flavour?)"

# --- initramfs -----------------------------------------------------------
# Rebuilt whenever its ingredients change: the guest init, this script, the
# busybox binary or the kernel.
BUSYBOX=/bin/busybox
file_is_static() { ! LC_ALL=C ldd "$1" >/dev/null 2>&1; }
[ -x "$BUSYBOX" ] && file_is_static "$BUSYBOX" ||
	die "$BUSYBOX is missing or not static (install busybox-static: scripts/deps.sh)"

stamp=$(cat "$HERE/guest-init.sh" "${BASH_SOURCE[0]}" "$BUSYBOX" | sha256sum | cut -d' ' -f1)-$kver
initrd=$dir/initramfs.cpio.gz
if [ ! -f "$initrd" ] || [ "$(cat "$dir/initramfs.stamp" 2>/dev/null)" != "$stamp" ]; then
	say "building initramfs for $kver"
	stage=$(mktemp -d "$CACHE/.initramfs.XXXXXX")
	trap 'rm -rf "$stage"' EXIT
	mkdir -p "$stage"/{bin,sbin,etc,proc,sys,dev,lib/modules,host,rw,newroot}
	cp "$BUSYBOX" "$stage/bin/busybox"
	cp "$HERE/guest-init.sh" "$stage/init"
	chmod 755 "$stage/init"

	# Resolve each module and its dependencies to files, in order, with the
	# options modprobe would pass (the package's modprobe.d sets some).
	order=()
	declare -A seen=() opts=()
	for m in $INITRAMFS_MODULES; do
		if ! deps=$(modprobe -d "$root" -S "$kver" --show-depends --ignore-install "$m" 2>/dev/null); then
			case " $REQUIRED_MODULES " in
			*" $m "*) die "kernel $kver lacks module $m" ;;
			esac
			continue
		fi
		while read -r kind path opt; do
			# "builtin NAME" lines need nothing loaded.
			[ "$kind" = insmod ] || continue
			[ -z "${seen[$path]:-}" ] || continue
			seen[$path]=1
			opts[$path]=$opt
			order+=("$path")
		done <<<"$deps"
	done
	: >"$stage/etc/modules"
	for path in "${order[@]}"; do
		name=$(basename "$path")
		# busybox insmod wants a plain ELF object.
		case $name in
		*.ko.xz) xz -dc "$path" >"$stage/lib/modules/${name%.xz}"; name=${name%.xz} ;;
		*.ko.zst) zstd -qdc "$path" >"$stage/lib/modules/${name%.zst}"; name=${name%.zst} ;;
		*.ko.gz) gzip -dc "$path" >"$stage/lib/modules/${name%.gz}"; name=${name%.gz} ;;
		*) cp "$path" "$stage/lib/modules/$name" ;;
		esac
		echo "$name ${opts[$path]}" >>"$stage/etc/modules"
	done

	# The kernel's module auto-loading calls this from the initramfs' root;
	# the real modprobe and the module tree live in the chroot.
	cat >"$stage/sbin/ibx-modprobe" <<'EOF'
#!/bin/busybox sh
exec /bin/busybox chroot /newroot /sbin/modprobe "$@"
EOF
	chmod 755 "$stage/sbin/ibx-modprobe"

	(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -1 >"$initrd.tmp"
	mv "$initrd.tmp" "$initrd"
	echo "$stamp" >"$dir/initramfs.stamp"
fi

echo "IBX_RXE_KVER=$kver"
echo "IBX_RXE_VMLINUZ=$root/boot/vmlinuz-$kver"
echo "IBX_RXE_INITRD=$initrd"
echo "IBX_RXE_MODDIR=$moddir"
