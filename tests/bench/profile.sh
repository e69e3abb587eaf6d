#!/usr/bin/env bash
# Where the cycles go (issue 35): a perf profile of every CPU while a
# perftest pair runs over the default testbed (memif, 2 ports, srnicd in
# each node), summed into the parts of the datapath with their cycles a
# packet (tests/bench/profile_groups.py).
#
#   tests/bench/profile.sh [SECONDS [TOOL:SIZE ...]]   (as root; default
#       4 s, ib_write_bw at 8 B and 64 KiB)
#
# For each run, in its steady state: perf record -a for SECONDS, and the
# packets both nodes' ports moved meanwhile (rx + tx, their stats files).
# The cycles are every CPU's over the window at the TSC's rate; the idle
# ones are left out.  Prints the message rate or bandwidth and a Markdown
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
CPUS=$(nproc)

# look: each node's packets so far and when (port_packets), a line each.
look() {
	port_packets "$TB/a.stats"
	port_packets "$TB/b.stats"
}

for run in "${RUNS[@]}"; do
	tool=${run%%:*} size=${run#*:}
	pair_start "$OUT/client" "$tool" -s "$size" -D $((WIN + 5)) --report_gbits
	look > "$OUT/n0"
	perf record -a -o "$OUT/perf.data" -- sleep "$WIN" > /dev/null 2>&1
	look > "$OUT/n1"
	wait "${PAIR_PIDS[@]}" || true
	# (each node's rate over its own two looks, summed)
	pps=$(paste "$OUT/n0" "$OUT/n1" |
		awk '$4 > $2 {r += ($3 - $1) / ($4 - $2)} END {printf "%d", r}')
	rate=$(awk -v s="$size" '$1 == s && NF >= 5 {print $4 " Gb/s, " $5 " Mpps"}' "$OUT/client")
	echo
	echo "$tool $size B: ${rate:-no result}; $pps packets/s through both nodes' ports"
	echo
	perf report -i "$OUT/perf.data" --no-children --sort comm,dso,srcfile \
		--stdio 2>/dev/null |
		python3 "$ROOT/tests/bench/profile_groups.py" "$ROOT" \
			$((CPUS * WIN * MHZ * 1000000)) $((pps * WIN))
done
echo
echo "(TSC ${MHZ} MHz, ${CPUS} CPUs, ${WIN} s windows)"
