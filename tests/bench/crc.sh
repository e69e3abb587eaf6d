#!/usr/bin/env bash
# What the frame CRC costs (issue 13): crc_cost's cycles per frame and per
# byte, then ib_write_bw 64 KiB on a two-port memif testbed (the fastest
# wire here, so the CRC's share shows most) with the CRC on and off in
# alternating runs of each round, and the ratio within each round.
#   tests/bench/crc.sh [ROUNDS] [SECONDS]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${1:-4}
SECS=${2:-3}
SRNIC=$ROOT/srnic
. "$ROOT/tests/bench/lib.sh"
export SRNIC_NS=srbench SRNIC_RUN=/run/srnic-bench
TB=$SRNIC_RUN/testbed

"$SRNIC" setup
"$ROOT/build/tests/bench/crc_cost"
echo
W=$(mktemp -d)
trap '"$SRNIC" testbed down >/dev/null 2>&1; rm -rf "$W"' EXIT
"$SRNIC" testbed down >/dev/null 2>&1 || true
"$SRNIC" testbed up --wire memif --ports 2 >/dev/null

crc() {	# yes|no: every port of both nodes
	local n
	for n in a b; do
		sed -i '/^crc = /d' "$TB/$n.conf"
		sed -i "/^port = /a crc = $1" "$TB/$n.conf"
	done
}

ratios=()
for ((r = 1; r <= ROUNDS; r++)); do
	crc yes; on=$(write_bw "$SECS")
	crc no; off=$(write_bw "$SECS")
	ratios+=("$(awk -v a="$on" -v b="$off" 'BEGIN {printf "%.1f", 100 * a / b}')")
	printf 'round %d: ib_write_bw 64 KiB, 2 memif ports: crc yes %s Gb/s, crc no %s Gb/s (%s%%); crc yes against the %s\n' \
		"$r" "$on" "$off" "${ratios[-1]}" \
		"$(ceiling_round "$(ceiling memif 2)" "$on" "$W/ceil")"
done
printf 'median of the ratios: %s%%; crc yes against the %s\n' \
	"$(printf '%s\n' "${ratios[@]}" | median)" "$(ceiling_median "$W/ceil")"
