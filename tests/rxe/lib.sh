# lib.sh — helpers shared by the verbs suite and the rxe benchmarks (sourced).
#
#   rxe_select_device      sets VERBS_DEV, VERBS_PORT, VERBS_GID_INDEX,
#                          VERBS_LINK_LAYER, VERBS_SERVER_ADDR
#   perftest_pair LOG TOOL ARGS...
#                          runs a perftest server and client on the device,
#                          output in LOG.server / LOG.client
#                          (PERFTEST_CLIENT_DEV: the client on that device)
#   perftest_result FILE   prints the numbers line of a perftest report
#
# Inside the Soft-RoCE VM (run-in-vm.sh sets IBX_RXE_GUEST=1) the device is
# rxed, port 1, and the server listens on d0's 10.56.0.1. Natively
# (IBX_VERBS_NATIVE=1) the device is whatever has an active port: the name is
# not assumed. Overrides: IBX_DEVICE=name:port (ibx's own setting),
# IBX_GID_INDEX (>= 0), IBX_VERBS_SERVER_ADDR (address for perftest's TCP
# handshake; default 127.0.0.1 natively).

# The first active port of the devices ibv_devices lists.
rxe_first_active_port() {
	local d p
	for d in $(ibv_devices 2>/dev/null | awk 'NR > 2 && NF {print $1}'); do
		for p in /sys/class/infiniband/"$d"/ports/*; do
			[ -r "$p/state" ] || continue
			if grep -q ACTIVE "$p/state"; then
				echo "$d ${p##*/}"
				return 0
			fi
		done
	done
	return 1
}

# RoCE needs a GID index: take the RoCE v2 GID that maps an IPv4 address
# (what ibx picks by default too); InfiniBand needs none (empty).
rxe_roce_gid_index() {
	local dev=$1 port=$2 g i
	for g in /sys/class/infiniband/"$dev"/ports/"$port"/gids/*; do
		i=${g##*/}
		case $(cat "$g" 2>/dev/null) in
		0000:0000:0000:0000:0000:ffff:*) ;;
		*) continue ;;
		esac
		[ "$(cat "/sys/class/infiniband/$dev/ports/$port/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] || continue
		echo "$i"
		return 0
	done
	return 1
}

rxe_select_device() {
	VERBS_DEV= VERBS_PORT= VERBS_GID_INDEX= VERBS_LINK_LAYER=
	if [ -n "${IBX_DEVICE:-}" ]; then
		VERBS_DEV=${IBX_DEVICE%%:*}
		VERBS_PORT=1
		[[ $IBX_DEVICE == *:* ]] && VERBS_PORT=${IBX_DEVICE##*:}
	elif [ "${IBX_RXE_GUEST:-0}" = 1 ]; then
		VERBS_DEV=rxed
		VERBS_PORT=1
	else
		local found
		found=$(rxe_first_active_port) || return 1
		VERBS_DEV=${found% *}
		VERBS_PORT=${found#* }
	fi
	VERBS_LINK_LAYER=$(cat "/sys/class/infiniband/$VERBS_DEV/ports/$VERBS_PORT/link_layer" 2>/dev/null || echo unknown)
	if [ -n "${IBX_GID_INDEX:-}" ] && [ "${IBX_GID_INDEX}" -ge 0 ] 2>/dev/null; then
		VERBS_GID_INDEX=$IBX_GID_INDEX
	elif [ "$VERBS_LINK_LAYER" = Ethernet ]; then
		VERBS_GID_INDEX=$(rxe_roce_gid_index "$VERBS_DEV" "$VERBS_PORT") || VERBS_GID_INDEX=
	fi
	if [ -n "${IBX_VERBS_SERVER_ADDR:-}" ]; then
		VERBS_SERVER_ADDR=$IBX_VERBS_SERVER_ADDR
	elif [ "${IBX_RXE_GUEST:-0}" = 1 ]; then
		VERBS_SERVER_ADDR=10.56.0.1
	else
		VERBS_SERVER_ADDR=127.0.0.1
	fi
	return 0
}

# Wait until something listens on TCP port $1, giving up when process $2
# has died or after 30 s.
rxe_wait_tcp_listen() {
	local port=$1 pid=$2 i
	for ((i = 0; i < 600; i++)); do
		ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# Each pair gets its own TCP port for the handshake, so a server still in
# TIME_WAIT or a stray one from a failed pair cannot catch the next client.
PERFTEST_PORT=${PERFTEST_PORT:-18515}
PERFTEST_TIMEOUT=${PERFTEST_TIMEOUT:-120}

# perftest_pair LOG TOOL ARGS...: both sides get the same ARGS plus device,
# port and GID; the client also gets the server's address. Succeeds when
# both sides exit 0.
perftest_pair() {
	local log=$1 tool=$2 port spid src crc
	shift 2
	port=$PERFTEST_PORT
	PERFTEST_PORT=$((PERFTEST_PORT + 1))
	local common=(-d "$VERBS_DEV" -i "$VERBS_PORT" -p "$port")
	[ -n "$VERBS_GID_INDEX" ] && common+=(-x "$VERBS_GID_INDEX")
	timeout -k 5 "$PERFTEST_TIMEOUT" "$tool" "${common[@]}" "$@" >"$log.server" 2>&1 &
	spid=$!
	if ! rxe_wait_tcp_listen "$port" "$spid"; then
		kill "$spid" 2>/dev/null
		wait "$spid"
		echo "(server never listened on port $port)" >>"$log.server"
		: >"$log.client"
		return 1
	fi
	# PERFTEST_CLIENT_DEV: the client on another device (across a link)
	[ -n "${PERFTEST_CLIENT_DEV:-}" ] && common[1]=$PERFTEST_CLIENT_DEV
	timeout -k 5 "$PERFTEST_TIMEOUT" "$tool" "${common[@]}" "$@" "$VERBS_SERVER_ADDR" >"$log.client" 2>&1
	crc=$?
	# A client that failed early leaves the server waiting for its peer.
	[ $crc -ne 0 ] && kill "$spid" 2>/dev/null
	wait "$spid"
	src=$?
	[ $crc -eq 0 ] && [ $src -eq 0 ]
}

# The numbers line of a perftest report: the first line that starts with
# two integers (bytes, iterations) followed by a decimal number.
#   *_lat: bytes iters t_min t_max t_typical t_avg t_stdev p99 p99.9
#   *_bw:  bytes iters bw_peak bw_avg msg_rate        (MB/s, Mpps)
perftest_result() {
	awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+\.[0-9]+$/ {print; exit}' "$1"
}
