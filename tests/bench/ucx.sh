#!/usr/bin/env bash
# UCX over srnic against UCX over the nodes' kernel TCP, in one run (issue
# 15's benchmark): each round runs ucx_perftest's UCP put bandwidth (64 KiB)
# and put latency (8 B) between nodes a and b of one two-port memif testbed
# with srnicd, once with UCX_TLS=rc_v on srnic0:1 (rc_verbs; ud_verbs only
# wires the endpoints up) and once with UCX_TLS=tcp (the veth between the
# nodes' kernels), the two in turn and in alternate order.  Prints each
# round and the medians of the within-round ratios (this host is noisy),
# and before each srnic run how long a cache line takes between the two
# CPUs then (xcpu.c: the host's placement of the vCPUs changes it 5-fold,
# and srnic's latency seemed to follow).
# The put bandwidth also against the wire's ceiling (lib.sh's ceiling:
# testpmd over two memif links), taken each round.
#   tests/bench/ucx.sh [ROUNDS] [ITERATIONS]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${1:-3}
ITERS=${2:-20000}
. "$ROOT/tests/bench/lib.sh"
export SRNIC_NS=srbench SRNIC_RUN=/run/srnic-bench
SRNIC=$ROOT/srnic
PORT=18560

run() {	# srnic|tcp test size: the client's "Final:" line
	local env
	if [ "$1" = srnic ]; then
		env=(UCX_TLS=rc_v,self UCX_NET_DEVICES=srnic0:1)
	else
		env=(UCX_TLS=tcp,self)
	fi
	PORT=$((PORT + 1))
	srnic_pair env "${env[@]}" ucx_perftest -p $PORT -t "$2" -s "$3" \
		-n "$ITERS" 2>/dev/null | grep '^Final:' || true
}

measure() {	# srnic|tcp: prints "Gb/s us"; srnic: also xcpu's ns
	local bw lat x=""
	[ "$1" = srnic ] && x=$("$ROOT/build/tests/bench/xcpu" 100)
	# (Final: iterations, latency 50%, avg, overall; MB/s avg, overall)
	bw=$(run "$1" ucp_put_bw 65536 | awk '{printf "%.2f", $7 * 8 * 1048576 / 1e9}')
	lat=$(run "$1" ucp_put_lat 8 | awk '{print $3}')
	echo "${bw:-0} ${lat:-0} $x"
}

trap '"$SRNIC" testbed down >/dev/null 2>&1' EXIT
"$SRNIC" testbed down > /dev/null 2>&1 || true
"$SRNIC" setup > /dev/null
command -v ucx_perftest > /dev/null || { echo "ucx-utils is not installed" >&2; exit 1; }
"$SRNIC" testbed up --ports 2 --srnicd yes > /dev/null
W=$(mktemp -d)
trap '"$SRNIC" testbed down >/dev/null 2>&1; rm -rf "$W"' EXIT
bw_ratios=() lat_ratios=()
for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then
		read -r sbw slat xcpu <<< "$(measure srnic)"
		read -r tbw tlat <<< "$(measure tcp)"
	else
		read -r tbw tlat <<< "$(measure tcp)"
		read -r sbw slat xcpu <<< "$(measure srnic)"
	fi
	bwr=$(ratio "$sbw" "$tbw")
	latr=$(ratio "$slat" "$tlat" 3)
	bw_ratios+=("$bwr") lat_ratios+=("$latr")
	echo "round $r: ucp_put_bw 64 KiB srnic $sbw / tcp $tbw Gb/s (${bwr}x); ucp_put_lat 8 B srnic $slat / tcp $tlat us (${latr} of tcp's); xcpu ${xcpu} ns; srnic's put against the $(ceiling_round "$(ceiling memif 2)" "$sbw" "$W/ceil")"
done
echo "median: put bandwidth ${bw_ratios[*]} -> $(printf '%s\n' "${bw_ratios[@]}" | median)x tcp's; put latency ${lat_ratios[*]} -> $(printf '%s\n' "${lat_ratios[@]}" | median) of tcp's; srnic's put against the $(ceiling_median "$W/ceil")"
