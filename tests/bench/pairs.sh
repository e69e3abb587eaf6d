#!/usr/bin/env bash
# Several busy processes a node through srnicd: TRIALS runs each of 2 and 3
# ib_write_bw pairs a -> b at once (64 KiB, SECONDS), on a two-port memif
# testbed with srnicd.  Each run prints the pairs' sum and how many pairs
# failed (perftest's "Failed status", e.g. 12: retry exceeded); a run with
# a pair below 0.1 Gb/s is a stall (a pair that crawls at one message a
# verbs timeout).  The summary counts runs with a failure or a stall.
# With "pingpong", TRIALS more runs have the 3 pairs and an
# ibv_rc_pingpong -c between the same nodes at once (the issue's several
# unmodified programs a node), and such a run is bad when the pingpong
# fails as well.  Each run's sum is also given as a share of the wire's
# ceiling (lib.sh's ceiling: testpmd over two memif links), taken once
# before the runs.
#   tests/bench/pairs.sh [TRIALS] [SECONDS] [pingpong]
# SRNIC=path/to/another/tree/srnic measures that tree's build instead (the
# same run, against an older commit).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TRIALS=${1:-5}
SECS=${2:-4}
export SRNIC_NS=srbench SRNIC_RUN=/run/srnic-bench
SRNIC=${SRNIC:-$ROOT/srnic}
. "$ROOT/tests/bench/lib.sh"

run() {	# N [pingpong]: N pairs at once (and a pingpong); prints the sum,
	# the failures and the slowest pair's Gb/s
	local pp=()
	if [ -n "${2:-}" ]; then
		"$SRNIC" exec b -- ibv_rc_pingpong -g 1 -c -n 3000 -s 4096 \
			-p 18600 > "$W/pingpong.b" 2>&1 &
		pp+=($!)
		{ sleep 2.5; "$SRNIC" exec a -- ibv_rc_pingpong -g 1 -c -n 3000 \
			-s 4096 -p 18600 b > "$W/pingpong.a" 2>&1; } &
		pp+=($!)
	fi
	write_bw_pairs "$1" "$SECS" "$W"
	local ppfail=0 p
	for p in "${pp[@]}"; do
		wait "$p" || ppfail=1
	done
	printf '%s %s %s\n' "$(gbps_sum "$W"/client.*)" \
		"$(($(cat "$W"/client.* | grep -c 'Failed status' || true) + ppfail))" \
		"$(for f in "$W"/client.*; do gbps_sum "$f"; done | sort -g | head -1)"
	rm -f "$W"/client.* "$W"/pingpong.*
}

W=$(mktemp -d)
trap '"$SRNIC" testbed down >/dev/null 2>&1; rm -rf "$W"' EXIT
"$SRNIC" testbed down > /dev/null 2>&1 || true
"$SRNIC" setup > /dev/null
"$SRNIC" testbed up --ports 2 --srnicd yes > /dev/null
ceil=$(ceiling memif 2)
echo "the wire's ceiling (testpmd, two memif links): $ceil Gb/s"
for n in 2 3 ${3:+3+pingpong}; do
	bad=0 sums=""
	for ((t = 1; t <= TRIALS; t++)); do
		read -r sum failed slowest <<< "$(run "${n%%+*}" \
			"$([[ $n == *+* ]] && echo pingpong)")"
		echo "$n pairs, run $t: $sum Gb/s ($(of_ceiling "$sum" "$ceil") of the ceiling), slowest pair $slowest, $failed failed"
		sums+="$sum "
		if [ "$failed" -gt 0 ] ||
		   awk -v s="$slowest" 'BEGIN {exit !(s < 0.1)}'; then
			bad=$((bad + 1))
		fi
	done
	echo "$n pairs: $bad of $TRIALS runs failed or stalled; sums $sums"
done
