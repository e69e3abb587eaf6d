#!/usr/bin/env bash
# Where the cycles go (issue 35): a perf profile of both nodes' srnicd
# and a perftest pair while it runs over the default testbed (memif, 2
# ports, srnicd in each node), summed into the parts of the datapath with
# their cycles a packet (tests/bench/profile_groups.py).
#
#   tests/bench/profile.sh [SECONDS [TOOL:SIZE ...]]   (as root; default
#       4 s, ib_write_bw at 8 B and 64 KiB)
#
# For each run, in its steady state: perf record of those processes for
# SECONDS (cpu-clock, kernel time in them included), and the packets both
# nodes' ports moved meanwhile (rx + tx, their stats files).  Cycles are
# CPU time at the TSC's rate.  Prints the message rate or bandwidth and a Markdown
# table a run.  The host's noise moves the totals from run to run; the
# shares move less.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRNIC=$ROOT/srnic
WIN=${1:-4}
RUNS=("${@:2}")
[ ${#RUNS[@]} -gt 0 ] || RUNS=(ib_write_bw:8 ib_write_bw:65536)
export SRNIC_NS=${SRNIC_NS:-srprof} SRNIC_RUN=${SRNIC_RUN:-/run/srnic-prof}
TB=$SRNIC_RUN/testbed
. "$ROOT/tests/bench/lib.sh"
need_perf
"$SRNIC" setup
"$SRNIC" testbed up >/dev/null
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"; "$SRNIC" testbed down >/dev/null 2>&1' EXIT
MHZ=$(awk -F: '/^cpu MHz/ {printf "%d", $2; exit}' /proc/cpuinfo)
PERIOD_NS=100000

# look: each node's packets so far and when (port_packets), a line each.
look() {
	port_packets "$TB/a.stats"
	port_packets "$TB/b.stats"
}

for run in "${RUNS[@]}"; do
	tool=${run%%:*} size=${run#*:}
	pair_start "$OUT/client" "$tool" -s "$size" -D $((WIN + 5)) --report_gbits
	# (the nodes' processes, srnicd and the pair: their threads, kernel
	# time included; every sample is PERIOD_NS of a CPU)
	pids=$( (ip netns pids "$SRNIC_NS-a"; ip netns pids "$SRNIC_NS-b") |
		paste -sd,)
	look > "$OUT/n0"
	perf record -e cpu-clock -c $PERIOD_NS -p "$pids" -o "$OUT/perf.data" \
		-- sleep "$WIN" > /dev/null 2>&1
	look > "$OUT/n1"
	wait "${PAIR_PIDS[@]}" || true
	# (each node's rate over its own two looks, summed)
	pps=$(paste "$OUT/n0" "$OUT/n1" |
		awk '$4 > $2 {r += ($3 - $1) / ($4 - $2)} END {printf "%d", r}')
	rate=$(awk -v s="$size" '$1 == s && NF >= 5 {print $4 " Gb/s, " $5 " Mpps"}' "$OUT/client")
	echo
	echo "$tool $size B: ${rate:-no result}; $pps packets/s through both nodes' ports"
	echo
	perf report -i "$OUT/perf.data" --no-children -n --sort comm,dso,srcfile \
		--full-source-path --stdio 2>/dev/null |
		python3 "$ROOT/tests/bench/profile_groups.py" "$ROOT" \
			$((PERIOD_NS * MHZ / 1000)) $((pps * WIN)) || true
done
echo
echo "(TSC ${MHZ} MHz; ${WIN} s windows; a sample every $((PERIOD_NS / 1000)) us of a thread's CPU time)"
