#!/usr/bin/env bash
# ./srnic demo sockets: unmodified TCP programs over srnic, through
# rsockets' preload library (rdma-core's librspreload, as
# "./srnic exec --sockets" runs them), and rdma_cm's native family.  One
# line says how it went:
#
#   sockets: S MiB stream sha256 ok, iperf X Gb/s (kernel TCP Y), native AF_IB ok
#
#  - the stream: sock_check (tests/e2e/sock_check.c), a plain TCP
#    program, sends S MiB from a to b; b compares every byte and both ends
#    hash it (SHA-256): "ok" when b saw every byte and the two hashes are
#    one ("wrong" otherwise);
#  - iperf (2), 3 s from a to b: X over srnic (b's report, from its
#    accept), Y over the kernel's TCP between the same nodes (their veth);
#  - rstream -f gid, both ends named by GID (AF_IB), 100 transfers of
#    64 KiB verified: "ok" or "failed".
#
#   --size MIB      the stream's size (1024)
#
# It brings up a two-node testbed of its own (SRNIC_NS and SRNIC_RUN with
# -sk appended; SRNIC_SOCK_NS and SRNIC_SOCK_RUN name another), or uses
# one of two nodes that is up there already (and leaves it up).  Exit 0
# when all three are ok.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SRNIC=$ROOT/srnic
SC=${SRNIC_BUILD:-$ROOT/build}/tests/e2e/sock_check_fortified
export SRNIC_NS=${SRNIC_SOCK_NS:-${SRNIC_NS:-srnic}-sk}
export SRNIC_RUN=${SRNIC_SOCK_RUN:-${SRNIC_RUN:-/run/srnic}-sk}
B=10.55.0.2

mib=1024
while [ $# -gt 0 ]; do
	case $1 in
	--size) mib=$2; shift 2 ;;
	*) echo "sockets: unknown option '$1'" >&2; exit 1 ;;
	esac
done
[ -x "$SC" ] || { echo "sockets: $SC is not built (./srnic setup)" >&2; exit 1; }
command -v iperf > /dev/null || { echo "sockets: iperf is not installed (./srnic setup)" >&2; exit 1; }

DEMO_NODES=2 DEMO_WIRE=
. "$ROOT/examples/demo-testbed.sh"

# listening NODE PORT: a TCP port of NODE taken (an rdma_cm port's twin,
# docs/wire-protocol.md), 20 s at most; said if not (the step then fails)
listening() {
	for _ in $(seq 200); do
		ip netns exec "$SRNIC_NS-$1" ss -Hltn | grep -q ":$2 " && return 0
		sleep 0.1
	done
	echo "sockets: nothing listens on $1's port $2" >&2
}
twin() { echo $(($1 ^ 0x4000)); }

# the stream
timeout -k 5 600 "$SRNIC" exec --sockets b -- "$SC" -s 7710 > "$work/stream.b" 2>&1 &
pids+=($!)
listening b "$(twin 7710)"
timeout -k 5 600 "$SRNIC" exec --sockets a -- "$SC" $B 7710 "$mib" > "$work/stream.a" 2>&1 || true
sent=$(awk '/^# sent sha256/ {print $4}' "$work/stream.a")
if [ -n "$sent" ] && grep -q "^# ok $((mib << 20)) $sent\$" "$work/stream.b"; then
	stream=ok
else
	stream=wrong
	sed 's/^/stream: /' "$work/stream.a" "$work/stream.b" >&2
fi

# iperf over srnic, then over the kernel's TCP
timeout -k 5 60 "$SRNIC" exec --sockets b -- iperf -s -p 7711 -f g > "$work/iperf.b" 2>&1 &
pids+=($!)
listening b "$(twin 7711)"
timeout -k 5 60 "$SRNIC" exec --sockets a -- iperf -c $B -p 7711 -t 3 -f g > "$work/iperf.a" 2>&1 || true
sleep 1
rate=$(awk '/Gbits\/sec/ {r = $(NF-1)} END {print r}' "$work/iperf.b")
timeout -k 5 60 "$SRNIC" exec b -- iperf -s -p 7712 -f g > "$work/kiperf.b" 2>&1 &
pids+=($!)
listening b 7712
timeout -k 5 60 "$SRNIC" exec a -- iperf -c $B -p 7712 -t 3 -f g > "$work/kiperf.a" 2>&1 || true
krate=$(awk '/Gbits\/sec/ {r = $(NF-1)} END {print r}' "$work/kiperf.a")

# AF_IB: both ends by GID (b's GID 1, its IPv4 address)
G=::ffff:$B
timeout -k 5 60 "$SRNIC" exec b -- rstream -f gid -b $G -p 7713 -T v -S 65536 -C 100 \
	> "$work/afib.b" 2>&1 &
afib_srv=$!
pids+=($afib_srv)
listening b "$(twin 7713)"
afib=failed
if timeout -k 5 60 "$SRNIC" exec a -- rstream -f gid -s $G -p 7713 -T v -S 65536 -C 100 \
	> "$work/afib.a" 2>&1 && wait $afib_srv; then
	afib=ok
else
	sed 's/^/af_ib: /' "$work/afib.a" "$work/afib.b" >&2
fi

echo "sockets: $mib MiB stream sha256 $stream, iperf ${rate:-?} Gb/s (kernel TCP ${krate:-?}), native AF_IB $afib"
[ "$stream" = ok ] && [ -n "$rate" ] && [ "$afib" = ok ]
