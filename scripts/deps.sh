#!/bin/sh
# Installs the Debian packages ibx needs to build, test and benchmark, if any
# is missing (apt-get as root, through sudo otherwise). Does nothing when
# everything is there.
set -e
PKGS="build-essential clang clang-format pkg-config libibverbs-dev librdmacm-dev
ibverbs-providers ibverbs-utils rdma-core rdmacm-utils libpmix-dev libnuma-dev
libcmocka-dev openmpi-bin libopenmpi-dev mpich libmpich-dev perftest
qemu-system-x86 busybox-static kmod iproute2 cpio procps xz-utils
slurmctld slurmd slurm-client munge"
missing=
for p in $PKGS; do
  st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  case "$st" in
    *"install ok installed"*) ;;
    *) missing="$missing $p" ;;
  esac
done
[ -z "$missing" ] && exit 0
echo "ibx: installing missing packages:$missing"
if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing
