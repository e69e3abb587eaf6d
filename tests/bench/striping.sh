#!/usr/bin/env bash
# Striping benchmark (issue 3): ib_write_bw 64 KiB from a to b on an
# afpacket testbed whose every rail is rate-limited to RATE, with one port
# per node and with two, alternated ROUNDS times; prints each round, the
# medians and the 2-port/1-port ratio; beside each, the ceiling of the
# same limited rails (lib.sh's ceiling: testpmd on them).
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
W=$(mktemp -d)
trap '"$SRNIC" testbed down >/dev/null 2>&1; rm -rf "$W"' EXIT

bw() {	# ports: prints "Gb/s ceiling"
	local p
	"$SRNIC" testbed down >/dev/null 2>&1 || true
	"$SRNIC" testbed up --wire afpacket --ports "$1" >/dev/null
	for n in a b; do
		for ((p = 0; p < $1; p++)); do
			"$SRNIC" testbed fault $n $p rate="$RATE"
		done
	done
	echo "$(or_dash "$(write_bw "$SECS")") $(ceiling afpacket "$1")"
}

one=() two=()
for ((r = 1; r <= ROUNDS; r++)); do
	read -r a ca <<< "$(bw 1)"; read -r b cb <<< "$(bw 2)"
	one+=("$a"); two+=("$b")
	printf 'round %d: 1 port %s Gb/s (against the %s)   2 ports %s Gb/s (against the %s)\n' \
		"$r" "$a" "$(ceiling_round "$ca" "$a" "$W/ceil1")" \
		"$b" "$(ceiling_round "$cb" "$b" "$W/ceil2")"
done
m1=$(printf '%s\n' "${one[@]}" | median)
m2=$(printf '%s\n' "${two[@]}" | median)
printf 'median: 1 port %s Gb/s   2 ports %s Gb/s   ratio %.2f (every rail limited to %s); 1 port against the %s; 2 ports against the %s\n' \
	"$m1" "$m2" "$(awk -v a="$m2" -v b="$m1" 'BEGIN {print a / b}')" "$RATE" \
	"$(ceiling_median "$W/ceil1")" "$(ceiling_median "$W/ceil2")"
