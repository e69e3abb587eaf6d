#!/usr/bin/env bash
# Steering against the port token's shared path, in one run (issue 35's
# "2 and 4 pairs with per-process queues against today's shared path"):
# each round brings up a two-port memif testbed with srnicd twice, with
# queues = 1 (every frame through the port token) and queues = 4 (the
# first three processes of a node on queues of their own; a fourth is
# class 0), the two going first by turns, and on each runs 2 and then 4
# ib_write_bw pairs a -> b at once (64 KiB, SECONDS), and an
# ibv_rc_pingpong (64 B) beside 3 pairs.  Each line: the pairs' sum, the
# slowest pair, the pingpong's usec/iter; then the medians, and the ratios
# of steered to shared within each round (this host is noisy: only
# same-run ratios mean much).
#   tests/bench/steering.sh [ROUNDS] [SECONDS]
# STEER_WIRE=tap: the same on the tap wire (the kernel steers each frame
# to its class's queue: src/port/tun_steer.c; testpmd takes no ceiling
# there).  STEER_WIRE=routed: on a routed testbed (encap = udp, one tap
# port a node, two routers between), the kernel steering by the QP number
# behind IPv4 and UDP.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${1:-3}
SECS=${2:-4}
WIRE=${STEER_WIRE:-memif}
case $WIRE in
routed) UP=(--routed) ;;
*) UP=(--wire "$WIRE" --ports 2) ;;
esac
export SRNIC_NS=srbench SRNIC_RUN=/run/srnic-bench
SRNIC=$ROOT/srnic
. "$ROOT/tests/bench/lib.sh"

measure() {	# QUEUES: "sum2 slow2 sum4 slow4 pp"
	"$SRNIC" testbed up "${UP[@]}" --srnicd yes --queues "$1" > /dev/null
	printf '%s %s %s\n' "$(pairs_sum_min 2 "$SECS" "$W")" "$(pairs_sum_min 4 "$SECS" "$W")" \
		"$(pingpong_beside 3 "$SECS" "$W")"
	"$SRNIC" testbed down > /dev/null
}

W=$(mktemp -d)
trap '"$SRNIC" testbed down >/dev/null 2>&1; rm -rf "$W"' EXIT
"$SRNIC" testbed down > /dev/null 2>&1 || true
"$SRNIC" setup > /dev/null
# (the wire's ceiling, lib.sh's: testpmd over the two links, taken once,
# on the first testbed)
CEIL=$("$SRNIC" testbed up "${UP[@]}" --srnicd yes > /dev/null &&
	ceiling "$WIRE" 2; "$SRNIC" testbed down > /dev/null)
echo "the wire's ceiling (testpmd, two $WIRE links): $CEIL Gb/s"
for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then
		read -r s2 w2 s4 w4 sp <<< "$(measure 1)"
		read -r q2 v2 q4 v4 qp <<< "$(measure 4)"
	else
		read -r q2 v2 q4 v4 qp <<< "$(measure 4)"
		read -r s2 w2 s4 w4 sp <<< "$(measure 1)"
	fi
	printf 'round %d: shared (queues 1) / steered (queues 4): 2 pairs %s / %s Gb/s (slowest %s / %s), 4 pairs %s / %s Gb/s (slowest %s / %s), pingpong beside 3 pairs %s / %s usec/iter\n' \
		"$r" "$s2" "$q2" "$w2" "$v2" "$s4" "$q4" "$w4" "$v4" "$sp" "$qp"
	echo "$s2 $q2 $w2 $v2 $s4 $q4 $w4 $v4 $sp $qp" >> "$W/rounds"
done
col() { awk -v c="$1" '$c ~ /^[0-9.]+$/ {print $c}' "$W/rounds" | median; }
rat() { awk -v a="$1" -v b="$2" '$a + 0 > 0 && $b ~ /^[0-9.]+$/ {print $b / $a}' "$W/rounds" | median; }
printf 'median of %d rounds: 2 pairs %s / %s Gb/s (steered/shared %.2fx; slowest %s / %s), 4 pairs %s / %s Gb/s (%.2fx; slowest %s / %s), pingpong beside 3 pairs %s / %s usec/iter (%.2fx); the steered sums %s and %s of the ceiling\n' \
	"$ROUNDS" "$(col 1)" "$(col 2)" "$(rat 1 2)" "$(col 3)" "$(col 4)" \
	"$(col 5)" "$(col 6)" "$(rat 5 6)" "$(col 7)" "$(col 8)" \
	"$(col 9)" "$(col 10)" "$(rat 9 10)" \
	"$(of_ceiling "$(col 2)" "$CEIL")" "$(of_ceiling "$(col 6)" "$CEIL")"
