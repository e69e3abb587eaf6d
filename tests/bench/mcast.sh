#!/usr/bin/env bash
# Multicast RDMA WRITE against unicast fan-out, in one run, on a four-node
# afpacket testbed (docs/multicast-rdma.md).  Each round a delivers SIZE
# MiB to each of b and c twice, taking turns at going first:
#  - multicast: one stream of 1 MiB multicast WRITEs to group 1, whose
#    members are b and c (./srnic demo mcast-rdma; d holds another group);
#  - unicast: ib_write_bw, 1 MiB RC WRITEs, to b and then to c.
# The rate is the bytes delivered (2 x SIZE) over the time a spent
# sending; "wire" is the bytes a's ports sent (headers and all) per byte
# delivered.  The table has the median of each and of the ratio within a
# round (this host is noisy: only same-run ratios mean much).
#   tests/bench/mcast.sh [ROUNDS] [SIZE_MIB]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${1:-3}
MIB=${2:-256}
SRNIC=$ROOT/srnic
. "$ROOT/tests/bench/lib.sh"
export SRNIC_NS=srbench-mc SRNIC_RUN=/run/srnic-bench-mc
export SRNIC_MC_NS=$SRNIC_NS SRNIC_MC_RUN=$SRNIC_RUN
"$SRNIC" setup >/dev/null
trap '"$SRNIC" testbed down >/dev/null 2>&1' EXIT
"$SRNIC" testbed down >/dev/null 2>&1 || true
"$SRNIC" testbed up --nodes 4 --wire afpacket >/dev/null
log=$(mktemp)
TB=$SRNIC_RUN/testbed
wire=$(mktemp)

# a_sent: the bytes a's ports sent, as its last process left them (each
# run's process counts from zero; the file goes before it starts)
a_sent() {
	python3 -c 'import json, sys; print(sum(p["tx_bytes"] for p in json.load(open(sys.argv[1]))["ports"]))' \
		"$TB/a.stats.json" 2>/dev/null || echo 0
}

# multicast: Gb/s delivered (its sender says how long it took)
multicast() {
	rm -f "$TB/a.stats" "$TB/a.stats.json"
	"$ROOT/examples/mcast-rdma-demo.sh" --size "${MIB}M" > "$log" 2>&1 ||
		{ cat "$log" >&2; return 1; }
	echo "m $(a_sent)" >> "$wire"
	awk '/^sent [0-9]+ bytes to group/ { print 2 * $2 * 8 / $8 / 1e9 }' "$log"
}

# unicast_to NODE: ib_write_bw's average Gb/s from a to NODE
unicast_to() {
	local pid i
	"$SRNIC" exec "$1" -- ib_write_bw -s 1048576 -n "$MIB" > /dev/null 2>&1 &
	pid=$!
	for ((i = 0; i < 400; i++)); do
		ip netns exec "$SRNIC_NS-$1" ss -Hltn 2>/dev/null | grep -q . && break
		sleep 0.05
	done
	rm -f "$TB/a.stats" "$TB/a.stats.json"
	"$SRNIC" exec a -- ib_write_bw -s 1048576 -n "$MIB" --report_gbits "$1" |
		awk '$1 == 1048576 && NF >= 5 { print $4 }'
	wait $pid
	echo "u $(a_sent)" >> "$wire"
}

# unicast: Gb/s delivered to b then c (the time is the sum of the two)
unicast() {
	local gb gc
	gb=$(unicast_to b)
	gc=$(unicast_to c)
	awk -v b="$gb" -v c="$gc" 'BEGIN { print (b > 0 && c > 0) ? 2 / (1 / b + 1 / c) : 0 }'
}

printf "%-6s %12s %12s %8s\n" round multicast unicast ratio
m_all=() u_all=() r_all=()
for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then m=$(multicast); u=$(unicast)
	else u=$(unicast); m=$(multicast); fi
	q=$(ratio "$m" "$u")
	printf "%-6s %12.2f %12.2f %8s\n" "$r" "$m" "$u" "$q"
	m_all+=("$m") u_all+=("$u") r_all+=("$q")
done
printf "%-6s %12.2f %12.2f %8s\n" median \
	"$(printf '%s\n' "${m_all[@]}" | median)" \
	"$(printf '%s\n' "${u_all[@]}" | median)" \
	"$(printf '%s\n' "${r_all[@]}" | median)"
echo "(Gb/s delivered to b and c together; ratio: multicast over unicast)"
# a's bytes on the wire per byte delivered, each way (unicast: two runs)
awk -v d="$((2 * MIB * 1048576))" '$1 == "m" { m += $2; nm++ } $1 == "u" { u += $2; nu++ }
	END { printf "wire bytes from a per byte delivered: multicast %.2f, unicast %.2f\n",
		m / nm / d, u / (nu / 2) / d }' "$wire"
rm -f "$log" "$wire"
