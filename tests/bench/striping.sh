#!/usr/bin/env bash
# Striping benchmark (issue 3): ib_write_bw 64 KiB from a to b on an
# afpacket testbed whose every rail is rate-limited to RATE, with one port
# per node and with two, alternated ROUNDS times; prints each round, the
# medians and the 2-port/1-port ratio.
#   tests/bench/striping.sh [ROUNDS] [RATE] [SECONDS]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${1:-3}
RATE=${2:-500mbit}
SECS=${3:-5}
SRNIC=$ROOT/srnic
. "$ROOT/tests/bench/lib.sh"
export SRNIC_NS=srbench SRNIC_RUN=/run/srnic-bench

"$SRNIC" setup
trap '"$SRNIC" testbed down >/dev/null 2>&1' EXIT

bw() {	# ports
	local p
	"$SRNIC" testbed down >/dev/null 2>&1 || true
	"$SRNIC" testbed up --wire afpacket --ports "$1" >/dev/null
	for n in a b; do
		for ((p = 0; p < $1; p++)); do
			"$SRNIC" testbed fault $n $p rate="$RATE"
		done
	done
	write_bw "$SECS"
}

one=() two=()
for ((r = 1; r <= ROUNDS; r++)); do
	a=$(bw 1); b=$(bw 2)
	one+=("$a"); two+=("$b")
	printf 'round %d: 1 port %s Gb/s   2 ports %s Gb/s\n' "$r" "$a" "$b"
done
m1=$(printf '%s\n' "${one[@]}" | median)
m2=$(printf '%s\n' "${two[@]}" | median)
printf 'median: 1 port %s Gb/s   2 ports %s Gb/s   ratio %.2f (every rail limited to %s)\n' \
	"$m1" "$m2" "$(awk -v a="$m2" -v b="$m1" 'BEGIN {print a / b}')" "$RATE"
