#!/usr/bin/env bash
# Two equal-cost paths (issue 35: one QP over one port reaches 1.8 R or
# more where each path is limited to R, and 1.0 R or less on one path): on
# a routed testbed (./srnic testbed up --routed: two routers joined by two
# links, srnicd in each node), each link limited to RATE both ways (tc tbf,
# ./srnic testbed fault path Q rate=RATE), ib_write_bw 64 KiB, one QP, for
# SECONDS with both paths, then with path 1 dropping everything (the
# sender leaves it: docs/wire-protocol.md "Paths"), in each round; their
# ratio and each against RATE.  Also how the routers split the frames of
# the two-path run (each of srnic's 8 source ports hashed to one link),
# and the most data a path can carry at RATE, the headers counted (the
# frames' mean size on the links against their payload, the MTU).
# PATHS_FAMILY=ipv6: the routed testbed in IPv6 (--routed --ipv6).
# PATHS_WIRE=afpacket PATHS_MTU=4096: the nodes on af_packet (one process
# a node, no srnicd) with 4 KiB of payload a frame, the jumbo frames a
# RoCE fabric runs (the routers' links take 9000 bytes); the default is
# the tap wire, whose frames carry 1024 bytes (DPDK's tap sends 1500 at
# most).
#   tests/bench/paths.sh [ROUNDS] [SECONDS] [RATE in Mbit/s]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${1:-3}
SECS=${2:-4}
RATE=${3:-300}
SRNIC=$ROOT/srnic
. "$ROOT/tests/bench/lib.sh"
export SRNIC_NS=srbench SRNIC_RUN=/run/srnic-bench

"$SRNIC" setup
trap '"$SRNIC" testbed down >/dev/null 2>&1' EXIT
"$SRNIC" testbed down >/dev/null 2>&1 || true
WIRE=${PATHS_WIRE:-tap}
MTU=${PATHS_MTU:-1024}
"$SRNIC" testbed up --routed --wire "$WIRE" --mtu "$MTU" \
	$( [ "${PATHS_FAMILY:-ipv4}" = ipv6 ] && echo --ipv6) >/dev/null
for q in 0 1; do "$SRNIC" testbed fault path $q rate=${RATE}mbit; done
sleep 2	# (HELLOs on every path, both ways)
tx() { ip -n "$SRNIC_NS-r0" -s -j link show "$1" |
	python3 -c "import json,sys; print(json.load(sys.stdin)[0]['stats64']['tx']['${2:-packets}'])"; }

twos=() ones=() fits=()
for ((r = 1; r <= ROUNDS; r++)); do
	t0=$(tx p0) t1=$(tx p1) b0=$(tx p0 bytes) b1=$(tx p1 bytes)
	two=$(or_dash "$(write_bw "$SECS")")
	d0=$(( $(tx p0) - t0 )) d1=$(( $(tx p1) - t1 ))
	# (what a link's R can carry of a 64 KiB WRITE's data: its frames'
	# payload, MTU bytes, of their mean size on the link, which the
	# limiter counts)
	frame=$(( ($(tx p0 bytes) - b0 + $(tx p1 bytes) - b1) / (d0 + d1 + 1) ))
	fit=$(ratio "$MTU" "$frame" 3)
	fits+=("$fit")
	"$SRNIC" testbed fault path 1 rate=${RATE}mbit loss=100%
	sleep 1
	one=$(or_dash "$(write_bw "$SECS")")
	"$SRNIC" testbed fault path 1 rate=${RATE}mbit
	sleep 1
	twos+=("$two") ones+=("$one")
	printf 'round %d: two paths %s Gb/s (%s R; the routers sent %d%% of its frames on path 0; frames of %d bytes: a path carries %s R of data at most), one path %s Gb/s (%s R), two/one %s\n' \
		"$r" "$two" "$( [ "$two" = - ] && echo - || ratio "$two" "$(ratio "$RATE" 1000 3)")" \
		$((100 * d0 / (d0 + d1 + 1))) "$frame" "$fit" \
		"$one" "$( [ "$one" = - ] && echo - || ratio "$one" "$(ratio "$RATE" 1000 3)")" \
		"$( [ "$two" = - ] || [ "$one" = - ] && echo - || ratio "$two" "$one")"
done
two=$(printf '%s\n' "${twos[@]}" | grep -v '^-$' | median)
one=$(printf '%s\n' "${ones[@]}" | grep -v '^-$' | median)
fit=$(printf '%s\n' "${fits[@]}" | median)
printf 'medians (R = %s Mbit/s a path): two paths %s Gb/s = %s R, one path %s Gb/s = %s R; a path carries %s R of data at most (headers), two %s R\n' \
	"$RATE" "$two" "$(ratio "$two" "$(ratio "$RATE" 1000 3)")" \
	"$one" "$(ratio "$one" "$(ratio "$RATE" 1000 3)")" "$fit" "$(ratio "$fit" 0.5)"
