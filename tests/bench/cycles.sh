#!/usr/bin/env bash
# What a packet and a byte cost: CPU cycles per packet and per payload byte
# on each node, for ib_write_bw at a few message sizes over the memif wire.
#
#   tests/bench/cycles.sh [SECONDS [TOOL:SIZE ...]]   (as root; default 4 s,
#       ib_write_bw at 64 KiB, 4 KiB and 8 B, ib_read_bw and ib_send_bw at
#       64 KiB)
#
# For each run, in its steady state, over the same SECONDS on both nodes:
# the CPU time of each node's process (perf stat task-clock: every thread,
# the application's and the engine's) and the packets each node's ports
# moved (the stats file, rx + tx, written by the control core every 500 ms
# with its time).  Cycles are CPU time at the TSC's rate (the nominal
# clock).  Prints a Markdown table.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRNIC=$ROOT/srnic
WIN=${1:-4}
shift $(($# > 0 ? 1 : 0))
RUNS=("$@")
[ ${#RUNS[@]} -gt 0 ] || RUNS=(ib_write_bw:65536 ib_write_bw:4096 ib_write_bw:8
	ib_read_bw:65536 ib_send_bw:65536)
export SRNIC_NS=${SRNIC_NS:-srcycles} SRNIC_RUN=${SRNIC_RUN:-/run/srnic-cycles}
TB=$SRNIC_RUN/testbed
. "$ROOT/tests/bench/lib.sh"
need_perf
"$SRNIC" setup
"$SRNIC" testbed up --ports 2 --wire memif >/dev/null
# (its own files first: the testbed's teardown removes an empty run dir)
trap 'rm -f "$SRNIC_RUN"/cycles.out "$SRNIC_RUN"/perf.a "$SRNIC_RUN"/perf.b
      "$SRNIC" testbed down >/dev/null 2>&1' EXIT
MHZ=$(awk -F: '/^cpu MHz/ {printf "%d", $2; exit}' /proc/cpuinfo)

pkts() { port_packets "$TB/$1.stats"; }	# NODE: packets so far, and when

# pid_of NODE-ROLE: the perftest process of the server (b) or client (a).
pid_of() {
	local p
	for p in $(pgrep -x "$1"); do
		if tr '\0' ' ' < "/proc/$p/cmdline" | grep -q " b *$"; then
			[ "$2" = a ] && { echo "$p"; return; }
		else
			[ "$2" = b ] && { echo "$p"; return; }
		fi
	done
}

echo "| test | size | Gb/s | node | CPUs busy | packets/s | cycles/packet | cycles/byte |"
echo "|---|---|---|---|---|---|---|---|"
for run in "${RUNS[@]}"; do
	tool=${run%%:*} size=${run#*:}
	pair_start "$SRNIC_RUN/cycles.out" "$tool" -s "$size" -D $((WIN + 4)) \
		--report_gbits
	pa=$(pid_of "$tool" a) pb=$(pid_of "$tool" b)
	read -r na0 ta0 < <(pkts a)
	read -r nb0 tb0 < <(pkts b)
	perf stat -x, -e task-clock -p "$pa" -o "$SRNIC_RUN/perf.a" -- sleep "$WIN" &
	pp=$!
	perf stat -x, -e task-clock -p "$pb" -o "$SRNIC_RUN/perf.b" -- sleep "$WIN"
	wait $pp 2>/dev/null || true
	read -r na1 ta1 < <(pkts a)
	read -r nb1 tb1 < <(pkts b)
	wait "${PAIR_PIDS[@]}" || true
	gbps=$(awk -v s="$size" '$1 == s && NF >= 5 {print $4}' "$SRNIC_RUN/cycles.out")
	for node in a b; do
		ms=$(awk -F, '/task-clock/ {print $1}' "$SRNIC_RUN/perf.$node")
		if [ $node = a ]; then n=$((na1 - na0)) t0=$ta0 t1=$ta1
		else n=$((nb1 - nb0)) t0=$tb0 t1=$tb1; fi
		awk -v tool="$tool" -v size="$size" -v g="${gbps:-0}" -v node="$node" \
		    -v ms="$ms" -v win="$WIN" -v n="$n" -v t0="$t0" -v t1="$t1" -v mhz="$MHZ" 'BEGIN {
			busy = ms / 1000 / win;			# CPUs
			pps = (t1 > t0) ? n / (t1 - t0) : 0;
			cyc = busy * mhz * 1e6;			# cycles per second
			bps = g * 1e9 / 8;			# payload bytes per second
			printf "| %s | %s | %.2f | %s | %.2f | %.0f | %s | %s |\n",
			       tool, size, g, node, busy, pps,
			       pps ? sprintf("%.0f", cyc / pps) : "-",
			       bps ? sprintf("%.2f", cyc / bps) : "-"
		}'
	done
done
echo
echo "(TSC ${MHZ} MHz; $WIN s windows; a sends, b receives WRITEs and SENDs and answers READs)"
