# link.sh — two emulated nodes joined by a real link, inside the Soft-RoCE
# VM (sourced by suite.sh and bench scripts; run as root in the guest).
#
#     node 0                                        node 1
#   rxn0 (rxe) ── ibxn0 ════ veth link ════ ibxn1 ── rxn1 (rxe)
#   10.57.0.1       mtu 4200  (packets cross it)       10.57.0.2
#
#   link_up            creates the pair, the addresses, the routing, both
#                      rxe devices; waits for both ports to be ACTIVE.
#                      Sets LINK_DEVS=rxn0,rxn1 (mpilite-run's
#                      --emulate-nodes 2:$LINK_DEVS) and LINK_ADDRS.
#   link_set up|down   takes the link's node-1 end up or down (a pulled cable)
#   link_packets       packets sent over ibxn0 so far (proof of crossing)
#
# Why one network namespace and policy routing, not a namespace per node:
# the kernel's rxe driver (Linux 6.1) opens its UDP port 4791 in the initial
# namespace only, so a device whose netdev lives in another namespace never
# gets its packets (measured: every RoCE packet sent into a second
# namespace went unanswered). Both ends therefore stay in the initial
# namespace. Left alone, the kernel would then deliver 10.57.0.1 -> .2
# through loopback (both addresses are local), which no rxe device listens
# on: the two-devices-on-a-veth set-up simply hangs. The rules below route
# each end's address to the other over the veth instead, and make packets
# that arrive on a veth end local deliveries:
#
#   pref 5/6   iif ibxn0|ibxn1       -> table local   (arrivals from the wire)
#   pref 10    from .1 to .2         -> table 101: .2 dev ibxn0
#   pref 11    from .2 to .1         -> table 102: .1 dev ibxn1
#   pref 100   everything else       -> table local   (moved from pref 0)
#
# plus accept_local (a packet whose source is one of our addresses),
# rp_filter off and static neighbour entries (no ARP between the ends).

LINK_DEVS=rxn0,rxn1
LINK_ADDRS=10.57.0.1,10.57.0.2

link_wait_active() { # DEV: up to 60 s
	local i=0
	until grep -q ACTIVE "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 1200 ] && return 1
		sleep 0.05
	done
}

link_up() {
	local c d
	[ -d /sys/class/infiniband/rxn0 ] && return 0
	ip link add ibxn0 type veth peer name ibxn1 || return 1
	for c in all default ibxn0 ibxn1; do
		sysctl -qw "net.ipv4.conf.$c.rp_filter=0" "net.ipv4.conf.$c.accept_local=1" || return 1
	done
	ip -batch - <<EOF || return 1
link set ibxn0 mtu 4200
link set ibxn1 mtu 4200
addr add 10.57.0.1/24 dev ibxn0
addr add 10.57.0.2/24 dev ibxn1
link set ibxn0 up
link set ibxn1 up
neigh replace 10.57.0.2 lladdr $(cat /sys/class/net/ibxn1/address) dev ibxn0 nud permanent
neigh replace 10.57.0.1 lladdr $(cat /sys/class/net/ibxn0/address) dev ibxn1 nud permanent
rule add pref 5 iif ibxn0 lookup local
rule add pref 6 iif ibxn1 lookup local
rule add pref 10 from 10.57.0.1 to 10.57.0.2 lookup 101
rule add pref 11 from 10.57.0.2 to 10.57.0.1 lookup 102
route add 10.57.0.2 dev ibxn0 src 10.57.0.1 table 101
route add 10.57.0.1 dev ibxn1 src 10.57.0.2 table 102
rule add pref 100 lookup local
rule del pref 0
EOF
	rdma link add rxn0 type rxe netdev ibxn0 || return 1
	rdma link add rxn1 type rxe netdev ibxn1 || return 1
	for d in rxn0 rxn1; do
		link_wait_active "$d" || return 1
	done
}

link_set() { # up|down
	ip link set ibxn1 "$1"
}

link_packets() {
	cat /sys/class/net/ibxn0/statistics/tx_packets
}
