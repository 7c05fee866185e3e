#!/bin/bash
# node-agent.sh — Open MPI's plm_rsh_agent for the VM's emulated nodes
# (link.sh): mpirun calls it as an ssh stand-in, "node-agent.sh [ssh
# options] HOST command words...", to start its daemon (orted) on HOST. The
# command runs here, in a UTS namespace of its own named HOST (so that the
# daemon and its ranks see the node's host name), with the node's devices
# in the environment the ranks inherit: IBX_DEVICE for ibx, UCX_NET_DEVICES
# for UCX. Hosts: n0 -> rxn0 (ibxn0), n1 -> rxn1 (ibxn1).
while [[ ${1:-} == -* ]]; do shift; done
host=${1:?node-agent.sh: no host}
shift
case $host in
n0 | n1) k=${host#n} ;;
*) echo "node-agent.sh: unknown emulated node '$host' (n0, n1)" >&2; exit 255 ;;
esac
export IBX_DEVICE=rxn$k:1 UCX_NET_DEVICES=rxn$k:1
exec unshare --uts sh -c 'hostname "$0" && exec sh -c "$*"' "$host" "$@"
