#!/usr/bin/env bash
# Frame size benchmark (issue 5): is srnic's distance from testpmd on memif
# paid per packet or per byte?  On a two-port memif testbed, each round
# runs ib_write_bw 64 KiB from a to b and testpmd's ceiling at the same
# frame size, first with the testbed's payload of 4096 bytes a packet
# (memif buffers of 8 KiB), then with 8192 (buffers of 16 KiB, so that a
# frame still fits one).  If the cost were per packet, doubling the frame
# would close much of the gap; if per byte, the ratio stays.
#   tests/bench/frame.sh [ROUNDS] [SECONDS]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${1:-4}
SECS=${2:-3}
SRNIC=$ROOT/srnic
. "$ROOT/tests/bench/lib.sh"
export SRNIC_NS=srbench SRNIC_RUN=/run/srnic-bench
W=$SRNIC_RUN-work
TB=$SRNIC_RUN/testbed

"$SRNIC" setup
mkdir -p "$W"
trap '"$SRNIC" testbed down >/dev/null 2>&1; rm -rf "$W"' EXIT
"$SRNIC" testbed down >/dev/null 2>&1 || true
"$SRNIC" testbed up --wire memif --ports 2 >/dev/null

payload() {	# MTU BSIZE: both nodes' payload and memif buffer size
	local n
	for n in a b; do
		sed -i "s/^mtu = [0-9]*/mtu = $1/; s/bsize=[0-9]*/bsize=$2/g" "$TB/$n.conf"
	done
}

percent() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.1f%%", 100 * a / b; else print "-"}'; }

r4=() r8=()
for ((r = 1; r <= ROUNDS; r++)); do
	payload 4096 8192
	s4=$(write_bw "$SECS"); t4=$(TESTPMD_BSIZE=8192 testpmd_gbps memif 2 $((4096 + 78)))
	payload 8192 16384
	s8=$(write_bw "$SECS"); t8=$(TESTPMD_BSIZE=16384 testpmd_gbps memif 2 $((8192 + 78)))
	r4+=("$(percent "$s4" "$t4")"); r8+=("$(percent "$s8" "$t8")")
	printf 'round %d: mtu 4096: srnic %s testpmd %s Gb/s (%s)   mtu 8192: srnic %s testpmd %s Gb/s (%s)\n' \
		"$r" "$s4" "$t4" "${r4[-1]}" "$s8" "$t8" "${r8[-1]}"
done
printf 'median of the ratios: mtu 4096 %s   mtu 8192 %s\n' \
	"$(printf '%s\n' "${r4[@]%\%}" | median)%" "$(printf '%s\n' "${r8[@]%\%}" | median)%"
