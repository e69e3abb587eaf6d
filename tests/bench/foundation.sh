#!/usr/bin/env bash
# Foundation benchmark (issue 2): on the two-node memif testbed,
#   - dpdk-testpmd txonly -> rxonly over two memif links with frames the
#     size of a full srnic data packet (the wire's ceiling),
#   - ib_write_bw -s 65536 from a to b over srnic,
#   - ib_write_lat -s 2 from a to b over srnic,
# alternated ROUNDS times in one run; prints each round and the medians.
#   tests/bench/foundation.sh [ROUNDS] [SECONDS]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${1:-3}
SECS=${2:-5}
SRNIC=$ROOT/srnic
. "$ROOT/tests/bench/lib.sh"
export SRNIC_NS=${SRNIC_NS:-srnic}	# (the testbed's default, srnic_pair's)
RUN=${SRNIC_RUN:-/run/srnic}
W=$RUN/bench
FRAME=$((4096 + 78))	# payload + Ethernet + srnic data headers

"$SRNIC" setup
"$SRNIC" testbed down >/dev/null 2>&1 || true
"$SRNIC" testbed up >/dev/null
trap '"$SRNIC" testbed down >/dev/null 2>&1; rm -rf "$W"' EXIT
mkdir -p "$W"

memif() {	# role
	local p out=""
	for p in 0 1; do
		out+=" --vdev net_memif$p,role=$1,id=$p,socket=$W/t$p.sock,socket-abstract=no,bsize=8192"
	done
	echo "$out"
}

testpmd_gbps() {
	# Each side's forwarding lcore (1) on a CPU of its own: the best path
	# testpmd has on two CPUs.
	local eal="--no-pci --in-memory -m 512 --log-level=*:error"
	local rxcpu="--lcores=0@0,1@1" txcpu="--lcores=0@1,1@0"
	local app="--mbuf-size=8320 --total-num-mbufs=16384 --nb-cores=1 --stats-period 1"
	rm -f "$W"/t*.sock
	# shellcheck disable=SC2046
	timeout -s INT $((SECS + 3)) dpdk-testpmd $eal $rxcpu $(memif server) -- $app \
		--forward-mode=rxonly > "$W/rx.log" 2>&1 &
	local rx=$!
	sleep 1
	# shellcheck disable=SC2046
	timeout -s INT $((SECS + 1)) dpdk-testpmd $eal $txcpu $(memif client) -- $app \
		--forward-mode=txonly --txpkts=$FRAME > "$W/tx.log" 2>&1 || true
	wait $rx || true
	# Per-port "Rx-bps:" lines, one pair a second: the last full second
	# before the sender stopped is the second-to-last pair.
	grep -o 'Rx-bps: *[0-9]*' "$W/rx.log" | awk '{print $2}' |
		awk '{v[NR] = $1} END {n = NR - 2; if (n < 2) n = NR;
			printf "%.2f\n", (v[n - 1] + v[n]) / 1e9}'
}

write_lat() {
	srnic_pair ib_write_lat -s 2 -n 5000 | awk '$1 == 2 && NF >= 7 {print $5}'
}

: > "$W/tp"; : > "$W/bw"; : > "$W/lat"
for ((r = 1; r <= ROUNDS; r++)); do
	tp=$(testpmd_gbps); bw=$(write_bw "$SECS"); lat=$(write_lat)
	echo "$tp" >> "$W/tp"; echo "$bw" >> "$W/bw"; echo "$lat" >> "$W/lat"
	printf 'round %d: testpmd %s Gb/s   ib_write_bw 64KiB %s Gb/s   ib_write_lat 2B %s us\n' \
		"$r" "$tp" "$bw" "$lat"
done
tp=$(median < "$W/tp"); bw=$(median < "$W/bw"); lat=$(median < "$W/lat")
printf 'median:  testpmd %s Gb/s   ib_write_bw 64KiB %s Gb/s (%.0f%% of testpmd)   ib_write_lat 2B %s us\n' \
	"$tp" "$bw" "$(awk -v a="$bw" -v b="$tp" 'BEGIN {print 100 * a / b}')" "$lat"
