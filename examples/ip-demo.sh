#!/usr/bin/env bash
# ./srnic demo ip: IP over srnic on three nodes (seed 002, "IP over the
# adapter").  Each runs examples/srnic_ipd.c: a TUN interface, srnic-ip0
# (10.56.0.N/24, MTU 65520), whose packets travel as UD datagrams on
# srnic0, a packet larger than a datagram cut into IP fragments that the
# receiving kernel puts together.  One line says how it went:
#
#   ip: ping ok, 60000-byte UDP broadcast to M of M nodes, iperf X Gb/s over srnic-ip0
#
#  - ping: a pings b with 20000-byte packets (fragments both ways), and
#    the subnet's broadcast address, which every other node answers;
#  - one 60000-byte UDP datagram from a to 10.56.0.255: M is the nodes
#    whose copy has the sender's SHA-256 (the other M of M);
#  - iperf (2), TCP from a to b over srnic-ip0 for 3 s.
#
# It brings up a three-node testbed of its own (SRNIC_NS and SRNIC_RUN
# with -ip appended; SRNIC_IP_NS and SRNIC_IP_RUN name another), or uses
# one of three nodes that is up there already (and leaves it up).  Exit 0
# when the line says ping ok, M of M and a rate.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SRNIC=$ROOT/srnic
IPD=${SRNIC_BUILD:-$ROOT/build}/examples/srnic_ipd
export SRNIC_NS=${SRNIC_IP_NS:-${SRNIC_NS:-srnic}-ip}
export SRNIC_RUN=${SRNIC_IP_RUN:-${SRNIC_RUN:-/run/srnic}-ip}
NODES=(a b c)

[ -x "$IPD" ] || { echo "ip: $IPD is not built (./srnic setup)" >&2; exit 1; }
command -v iperf > /dev/null || { echo "ip: iperf is not installed (./srnic setup)" >&2; exit 1; }

DEMO_NODES=3 DEMO_WIRE=tap
. "$ROOT/examples/demo-testbed.sh"

addr() { echo "10.56.0.$(($1 + 1))"; }	# node index's address on srnic-ip0

# every node's daemon; its peers known
for i in "${!NODES[@]}"; do
	n=${NODES[$i]}
	# (ping -b is answered only where broadcast echoes are not ignored)
	ip netns exec "$SRNIC_NS-$n" sysctl -qw net.ipv4.icmp_echo_ignore_broadcasts=0
	timeout -k 5 600 "$SRNIC" exec "$n" -- "$IPD" "$(addr "$i")/24" > "$work/ipd.$n" 2>&1 &
	pids+=($!)
done
for n in "${NODES[@]}"; do
	for _ in $(seq 200); do
		grep -q "(2 known)" "$work/ipd.$n" 2>/dev/null && break
		sleep 0.1
	done
	grep -q "(2 known)" "$work/ipd.$n" ||
		{ cat "$work/ipd.$n" >&2; echo "ip: $n's daemon did not find its peers" >&2; }
done

# ping: large packets to b, then the broadcast address
ping=failed
if "$SRNIC" exec a -- ping -c 3 -W 3 -s 20000 "$(addr 1)" > "$work/ping" 2>&1 &&
   grep -q " 3 received" "$work/ping" &&
   "$SRNIC" exec a -- ping -b -c 3 -W 3 10.56.0.255 > "$work/ping-b" 2>&1; then
	# (a answers its own broadcast too: the others are counted)
	answered=$(grep -o "from 10\.56\.0\.[0-9]*" "$work/ping-b" | sort -u |
		grep -vcx "from $(addr 0)" || true)
	[ "$answered" = 2 ] && ping=ok
fi
[ $ping = ok ] || sed 's/^/ping: /' "$work/ping" "$work/ping-b" >&2 || true

# one 60000-byte UDP broadcast; every other node's copy hashed
recv_py='import hashlib, socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", 7800))
s.settimeout(20)
print("ready", flush=True)
d = s.recv(65535)
print(len(d), hashlib.sha256(d).hexdigest())'
send_py='import hashlib, socket
d = bytes((i * 7 + i // 251) & 255 for i in range(60000))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
s.sendto(d, ("10.56.0.255", 7800))
print(len(d), hashlib.sha256(d).hexdigest())'
rpids=()
for n in b c; do
	timeout -k 5 30 "$SRNIC" exec "$n" -- python3 -c "$recv_py" > "$work/udp.$n" 2>&1 &
	rpids+=($!)
done
for n in b c; do
	for _ in $(seq 100); do grep -q ready "$work/udp.$n" && break; sleep 0.1; done
done
"$SRNIC" exec a -- python3 -c "$send_py" > "$work/udp.a" 2>&1 || true
wait "${rpids[@]}" 2>/dev/null || true
want=$(cat "$work/udp.a")
got=0
if echo "$want" | grep -Eqx "60000 [0-9a-f]{64}"; then
	for n in b c; do
		grep -Fqx "$want" "$work/udp.$n" && got=$((got + 1))
	done
else
	sed 's/^/udp: /' "$work/udp.a" >&2
fi

# iperf over srnic-ip0
timeout -k 5 60 "$SRNIC" exec b -- iperf -s -B "$(addr 1)" -p 7801 -f g > "$work/iperf.b" 2>&1 &
pids+=($!)
wait_listen b 7801 || echo "ip: iperf's server never listened" >&2
timeout -k 5 60 "$SRNIC" exec a -- iperf -c "$(addr 1)" -p 7801 -t 3 -f g > "$work/iperf.a" 2>&1 || true
rate=$(awk '/Gbits\/sec/ {r = $(NF-1)} END {print r}' "$work/iperf.a")

echo "ip: ping $ping, 60000-byte UDP broadcast to $got of 2 nodes, iperf ${rate:-?} Gb/s over srnic-ip0"
[ $ping = ok ] && [ $got = 2 ] && awk -v r="${rate:-0}" 'BEGIN {exit !(r > 0)}'
