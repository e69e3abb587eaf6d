#!/usr/bin/env bash
# Loss benchmark (issue 3): ib_write_bw 64 KiB from a to b on an afpacket
# testbed (1024-byte packets, two ports), without loss and with LOSS on
# every rail both ways, alternated ROUNDS times; prints each round, the
# medians and the share of the loss-free goodput kept; beside them the
# wire's ceiling, taken without loss (lib.sh's ceiling: testpmd on the
# nodes' rails).
#   tests/bench/loss.sh [ROUNDS] [LOSS] [SECONDS]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${1:-3}
LOSS=${2:-1%}
SECS=${3:-5}
SRNIC=$ROOT/srnic
. "$ROOT/tests/bench/lib.sh"
export SRNIC_NS=srbench SRNIC_RUN=/run/srnic-bench

"$SRNIC" setup
W=$(mktemp -d)
trap '"$SRNIC" testbed down >/dev/null 2>&1; rm -rf "$W"' EXIT
"$SRNIC" testbed down >/dev/null 2>&1 || true
"$SRNIC" testbed up --wire afpacket >/dev/null

faults() {	# setting...
	local n p
	for n in a b; do
		for p in 0 1; do
			"$SRNIC" testbed fault $n $p "$@"
		done
	done
}


clean=() lossy=()
for ((r = 1; r <= ROUNDS; r++)); do
	faults clear; c=$(write_bw "$SECS"); ceil=$(ceiling afpacket 2)
	faults loss="$LOSS"; l=$(write_bw "$SECS")
	clean+=("$c"); lossy+=("$l")
	printf 'round %d: no loss %s Gb/s   %s loss %s Gb/s   no loss against the %s\n' \
		"$r" "$c" "$LOSS" "$l" "$(ceiling_round "$ceil" "$c" "$W/ceil")"
done
mc=$(printf '%s\n' "${clean[@]}" | median)
ml=$(printf '%s\n' "${lossy[@]}" | median)
printf 'median: no loss %s Gb/s   %s loss %s Gb/s   kept %.0f%%   no loss against the %s\n' \
	"$mc" "$LOSS" "$ml" "$(awk -v a="$ml" -v b="$mc" 'BEGIN {print 100 * a / b}')" \
	"$(ceiling_median "$W/ceil")"
