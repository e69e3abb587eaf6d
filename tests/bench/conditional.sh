#!/usr/bin/env bash
# Conditional RDMA against the program doing the same, in one run, on a
# four-node afpacket testbed (docs/conditional-rdma.md).  Each round, both
# ways, taking turns at going first: a posts 64 WRITEs each to b and c and
# a WRITE with immediate to d that must follow them;
#  - conditional: the WRITE to d is posted first, conditional on a queue
#    that counts the 128 (./srnic demo conditional);
#  - program: a's program polls its CQ until the 128th completion and
#    then posts the WRITE to d (--program), as a program without the
#    queue would, at its best (busy polling).
# The time is d's completion of the WRITE less a's completion of the last
# component (their CQEs' times).  The table has every round and the
# medians of each and of the ratio within a round (this host is noisy:
# only same-run ratios mean much).
#   tests/bench/conditional.sh [ROUNDS]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${1:-5}
SRNIC=$ROOT/srnic
export SRNIC_NS=srbench-cond SRNIC_RUN=/run/srnic-bench-cond
export SRNIC_COND_NS=$SRNIC_NS SRNIC_COND_RUN=$SRNIC_RUN
"$SRNIC" setup >/dev/null
trap '"$SRNIC" testbed down >/dev/null 2>&1' EXIT
"$SRNIC" testbed down >/dev/null 2>&1 || true
"$SRNIC" testbed up --nodes 4 --wire afpacket >/dev/null

# way cond|program: the microseconds from a's last component to d's CQE
way() {
	local args=() out
	[ "$1" = cond ] || args=(--program)
	out=$("$ROOT/examples/conditional-demo.sh" "${args[@]}") || { echo "$out" >&2; return 1; }
	echo "$out" | awk '/^(conditional: fired|program: posted) after 128 of 128 components, once,/ { print $(NF - 5) }'
}

printf "%-6s %12s %12s %8s\n" round "cond us" "program us" ratio
rows=()
for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then c=$(way cond); p=$(way program)
	else p=$(way program); c=$(way cond); fi
	ratio=$(awk -v c="$c" -v p="$p" 'BEGIN { printf "%.2f", (p > 0 ? c / p : 0) }')
	printf "%-6s %12s %12s %8s\n" "$r" "$c" "$p" "$ratio"
	rows+=("$c $p $ratio")
done
printf '%s\n' "${rows[@]}" | python3 -c '
import statistics, sys
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
m = [statistics.median(c) for c in zip(*rows)]
print("%-6s %12.1f %12.1f %8.2f" % ("median", m[0], m[1], m[2]))'
