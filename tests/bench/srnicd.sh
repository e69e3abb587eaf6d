#!/usr/bin/env bash
# srnicd against the embedded engine, in one run: each round brings up a
# two-port testbed of WIRE (memif, the default, or tap) without srnicd
# and one with it (testbed up --srnicd no|yes), in turn, and measures on
# each
#   - ib_write_bw 64 KiB for SECONDS and ib_write_lat 2 B (5000
#     iterations), one pair a to b;
# and then, through srnicd only,
#   - 2 and 4 ib_write_bw pairs at once (64 KiB, SECONDS): their sum, and
#     the slowest pair's share of an even split of it;
#   - the loopback between two processes of node a: ib_write_bw 64 KiB
#     and ib_write_lat 2 B, server and client both on a;
#   - kernel TCP between the same two nodes (iperf3, one stream, SECONDS);
#   - the wire's ceiling (dpdk-testpmd over two links of WIRE's kind with
#     srnic's full data frames: lib.sh's ceiling).
# Medians over the rounds, and of the within-round ratios (this host is
# noisy: only same-run ratios mean much).
#   tests/bench/srnicd.sh [ROUNDS] [SECONDS] [WIRE]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${1:-3}
SECS=${2:-3}
WIRE=${3:-memif}
. "$ROOT/tests/bench/lib.sh"
export SRNIC_NS=srbench SRNIC_RUN=/run/srnic-bench
SRNIC=$ROOT/srnic

write_lat() {	# [HOST]: typical latency of a 2-byte WRITE a -> HOST (b)
	local host=${1:-b}
	"$SRNIC" exec "$host" -- ib_write_lat -s 2 -n 5000 > /dev/null 2>&1 &
	local pid=$!
	sleep 0.5
	"$SRNIC" exec a -- ib_write_lat -s 2 -n 5000 "$host" |
		awk '$1 == 2 && NF >= 7 {print $5}'
	wait $pid
}

# pairs N: N ib_write_bw pairs a -> b at once: "SUM SHARE", SHARE the
# slowest pair's part of an even split (1: none was slower)
pairs() {
	local sum
	write_bw_pairs "$1" "$SECS" "$W"
	sum=$(gbps_sum "$W"/client.*)
	echo "$sum $(ratio "$(gbps_min "$W"/client.*)" "$(ratio "$sum" "$1" 4)")"
	rm -f "$W"/client.*
}

loop_bw() {	# ib_write_bw between two processes of node a
	"$SRNIC" exec a -- ib_write_bw -s 65536 -D "$SECS" > /dev/null 2>&1 &
	local pid=$!
	sleep 0.5
	"$SRNIC" exec a -- ib_write_bw -s 65536 -D "$SECS" --report_gbits a |
		awk '$1 == 65536 && NF >= 5 {print $4}'
	wait $pid
}

measure() {	# yes|no (srnicd): prints "bw lat"
	"$SRNIC" testbed up --ports 2 --wire "$WIRE" --srnicd "$1" > /dev/null
	printf '%s %s\n' "$(or_dash "$(write_bw "$SECS")")" "$(or_dash "$(write_lat)")"
	if [ "$1" = yes ]; then
		printf '%s %s %s %s %s %s\n' "$(pairs 2)" "$(pairs 4)" \
			"$(or_dash "$(loop_bw)")" "$(or_dash "$(write_lat a)")" "$(or_dash "$(iperf3_gbps "$SECS")")" \
			"$(ceiling "$WIRE" 2)" > "$W/extra"
	fi
	"$SRNIC" testbed down > /dev/null
}

trap '"$SRNIC" testbed down >/dev/null 2>&1; rm -rf "$W"' EXIT
"$SRNIC" testbed down > /dev/null 2>&1 || true
"$SRNIC" setup > /dev/null
command -v iperf3 > /dev/null || apt-get install -y -qq iperf3 > /dev/null
W=$(mktemp -d)
for ((r = 1; r <= ROUNDS; r++)); do
	read -r ebw elat <<< "$(measure no)"
	read -r dbw dlat <<< "$(measure yes)"
	read -r p2 s2 p4 s4 lbw llat tcp ceil < "$W/extra"
	printf 'round %d (%s): one pair, srnicd / embedded: ib_write_bw 64 KiB %s / %s Gb/s, ib_write_lat 2 B %s / %s us; through srnicd: 2 pairs %s Gb/s (slowest %s of an even share), 4 pairs %s Gb/s (slowest %s); loopback between processes %s Gb/s, %s us; kernel TCP %s Gb/s; one pair through srnicd against the %s\n' \
		"$r" "$WIRE" "$dbw" "$ebw" "$dlat" "$elat" "$p2" "$s2" "$p4" "$s4" "$lbw" "$llat" "$tcp" \
		"$(ceiling_round "$ceil" "$dbw" "$W/ceil")"
	awk -v a="$dbw" -v b="$ebw" 'BEGIN {print 100 * a / b}' >> "$W/bw"
	awk -v a="$dlat" -v b="$elat" 'BEGIN {print a - b}' >> "$W/lat"
	awk -v a="$p2" -v b="$dbw" 'BEGIN {print 100 * a / b}' >> "$W/p2"
	awk -v a="$p4" -v b="$dbw" 'BEGIN {print 100 * a / b}' >> "$W/p4"
	echo "$s2" >> "$W/s2"
	echo "$s4" >> "$W/s4"
	awk -v a="$dbw" -v b="$tcp" 'BEGIN {print (b > 0 ? a / b : 0)}' >> "$W/tcp"
	echo "$lbw" >> "$W/lbw"
	echo "$llat" >> "$W/llat"
done
printf 'median (%s): srnicd / embedded bandwidth %.1f%%, latency srnicd - embedded %+.2f us; 2 pairs %.0f%% and 4 pairs %.0f%% of one pair through srnicd, the slowest pair %s and %s of an even share; one pair through srnicd / kernel TCP %.2fx; loopback between processes %s Gb/s, %s us; one pair through srnicd against the %s\n' \
	"$WIRE" "$(median < "$W/bw")" "$(median < "$W/lat")" "$(median < "$W/p2")" \
	"$(median < "$W/p4")" "$(median < "$W/s2")" "$(median < "$W/s4")" \
	"$(median < "$W/tcp")" "$(median < "$W/lbw")" "$(median < "$W/llat")" \
	"$(ceiling_median "$W/ceil")"
