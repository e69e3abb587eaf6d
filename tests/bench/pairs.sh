#!/usr/bin/env bash
# Several busy processes a node through srnicd: TRIALS runs each of 2 and 3
# ib_write_bw pairs a -> b at once (64 KiB, SECONDS), on a two-port memif
# testbed with srnicd.  Each run prints the pairs' sum and how many pairs
# failed (perftest's "Failed status", e.g. 12: retry exceeded); a run whose
# sum is below 0.1 Gb/s is a stall (pairs that crawl at one message a verbs
# timeout).  The summary counts runs with a failure or a stall.
#   tests/bench/pairs.sh [TRIALS] [SECONDS]
# SRNIC=path/to/another/tree/srnic measures that tree's build instead (the
# same run, against an older commit).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TRIALS=${1:-5}
SECS=${2:-4}
export SRNIC_NS=srbench SRNIC_RUN=/run/srnic-bench
SRNIC=${SRNIC:-$ROOT/srnic}
. "$ROOT/tests/bench/lib.sh"

run() {	# N: N pairs at once; prints "sum failed"
	write_bw_pairs "$1" "$SECS" "$W"
	printf '%s %s\n' "$(gbps_sum "$W"/client.*)" \
		"$(cat "$W"/client.* | grep -c 'Failed status' || true)"
	rm -f "$W"/client.*
}

trap '"$SRNIC" testbed down >/dev/null 2>&1; rm -rf "$W"' EXIT
"$SRNIC" testbed down > /dev/null 2>&1 || true
"$SRNIC" setup > /dev/null
W=$(mktemp -d)
"$SRNIC" testbed up --ports 2 --srnicd yes > /dev/null
for n in 2 3; do
	bad=0 sums=""
	for ((t = 1; t <= TRIALS; t++)); do
		read -r sum failed <<< "$(run "$n")"
		echo "$n pairs, run $t: $sum Gb/s, $failed failed"
		sums+="$sum "
		if [ "$failed" -gt 0 ] || awk -v s="$sum" 'BEGIN {exit !(s < 0.1)}'; then
			bad=$((bad + 1))
		fi
	done
	echo "$n pairs: $bad of $TRIALS runs failed or stalled; sums $sums"
done
