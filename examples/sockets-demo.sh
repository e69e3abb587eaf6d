#!/usr/bin/env bash
# ./srnic demo sockets: unmodified TCP programs over srnic, through
# rsockets' preload library (rdma-core's librspreload, as
# "./srnic exec --sockets" runs them), and rdma_cm's native family.  One
# line says how it went:
#
#   sockets: socat S sha256 ok, iperf X Gb/s (kernel TCP Y), native AF_IB ok
#
#  - socat, unmodified, carries S (1 GiB) of random bytes from a to b:
#    "ok" when b's socat wrote out as many bytes, with the same SHA-256,
#    as a's read in, and a's ended well ("wrong" otherwise);
#  - iperf (2), 3 s from a to b: X over srnic (b's report, from its
#    accept), Y over the kernel's TCP between the same nodes (their veth);
#  - rstream -f gid, both ends named by GID (AF_IB), 100 transfers of
#    64 KiB verified: "ok" or "failed".
#
#   --size MIB      socat's stream, in MiB (1024)
#
# It brings up a two-node testbed of its own (SRNIC_NS and SRNIC_RUN with
# -sk appended; SRNIC_SOCK_NS and SRNIC_SOCK_RUN name another), or uses
# one of two nodes that is up there already (and leaves it up).  Exit 0
# when all three are ok.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SRNIC=$ROOT/srnic
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
for p in socat iperf; do
	command -v $p > /dev/null || { echo "sockets: $p is not installed (./srnic setup)" >&2; exit 1; }
done

DEMO_NODES=2 DEMO_WIRE=
. "$ROOT/examples/demo-testbed.sh"

# listening NODE PORT: NODE's rdma_cm port PORT taken (its TCP twin,
# docs/wire-protocol.md); said if not (the step then fails)
listening() {
	wait_listen "$1" $(($2 ^ 0x4000)) || echo "sockets: nothing listens on $1's port $2" >&2
}

# socat: b's writes what it receives into a hash, a's reads random bytes
# that a tee also hashes; each hash is "BYTES SHA256"
digest() {
	python3 -c 'import hashlib, sys
h, n = hashlib.sha256(), 0
for b in iter(lambda: sys.stdin.buffer.read(1 << 20), b""):
    h.update(b); n += len(b)
print(n, h.hexdigest())'
}
size="$mib MiB"
[ $((mib % 1024)) = 0 ] && size="$((mib / 1024)) GiB"
mkfifo "$work/sink" "$work/tap"
digest < "$work/sink" > "$work/stream.b" &
pids+=($!)
timeout -k 5 600 "$SRNIC" exec --sockets b -- socat -b 262144 -u TCP-LISTEN:7710,reuseaddr STDOUT \
	> "$work/sink" 2> "$work/stream.err.b" &
stream_srv=$!
pids+=($stream_srv)
listening b 7710
digest < "$work/tap" > "$work/stream.a" &
pids+=($!)
client=0
head -c $((mib << 20)) /dev/urandom | tee "$work/tap" |
	timeout -k 5 600 "$SRNIC" exec --sockets a -- socat -b 262144 -u STDIN TCP:$B:7710 \
	2> "$work/stream.err.a" || client=$?
# (b's socat ends at a's end of stream; 30 s for it, then it is stopped)
for _ in $(seq 300); do
	kill -0 $stream_srv 2>/dev/null || break
	sleep 0.1
done
kill $stream_srv 2>/dev/null || true
wait "${pids[@]: -3}" 2>/dev/null || true
stream=wrong
if [ $client = 0 ] && grep -qx "$((mib << 20)) [0-9a-f]\{64\}" "$work/stream.a" &&
   cmp -s "$work/stream.a" "$work/stream.b"; then
	stream=ok
else
	echo "socat: a's exit $client" >&2
	sed 's/^/socat: /' "$work/stream.a" "$work/stream.b" "$work/stream.err.a" \
		"$work/stream.err.b" >&2
fi

# iperf over srnic, then over the kernel's TCP
timeout -k 5 60 "$SRNIC" exec --sockets b -- iperf -s -p 7711 -f g > "$work/iperf.b" 2>&1 &
pids+=($!)
listening b 7711
timeout -k 5 60 "$SRNIC" exec --sockets a -- iperf -c $B -p 7711 -t 3 -f g > "$work/iperf.a" 2>&1 || true
sleep 1
rate=$(awk '/Gbits\/sec/ {r = $(NF-1)} END {print r}' "$work/iperf.b")
timeout -k 5 60 "$SRNIC" exec b -- iperf -s -p 7712 -f g > "$work/kiperf.b" 2>&1 &
pids+=($!)
wait_listen b 7712 || echo "sockets: kernel iperf's server never listened" >&2
timeout -k 5 60 "$SRNIC" exec a -- iperf -c $B -p 7712 -t 3 -f g > "$work/kiperf.a" 2>&1 || true
krate=$(awk '/Gbits\/sec/ {r = $(NF-1)} END {print r}' "$work/kiperf.a")

# AF_IB: both ends by GID (b's GID 1, its IPv4 address)
G=::ffff:$B
timeout -k 5 60 "$SRNIC" exec b -- rstream -f gid -b $G -p 7713 -T v -S 65536 -C 100 \
	> "$work/afib.b" 2>&1 &
afib_srv=$!
pids+=($afib_srv)
listening b 7713
afib=failed
if timeout -k 5 60 "$SRNIC" exec a -- rstream -f gid -s $G -p 7713 -T v -S 65536 -C 100 \
	> "$work/afib.a" 2>&1 && wait $afib_srv; then
	afib=ok
else
	sed 's/^/af_ib: /' "$work/afib.a" "$work/afib.b" >&2
fi

echo "sockets: socat $size sha256 $stream, iperf ${rate:-?} Gb/s (kernel TCP ${krate:-?}), native AF_IB $afib"
[ "$stream" = ok ] && [ -n "$rate" ] && [ "$afib" = ok ]
