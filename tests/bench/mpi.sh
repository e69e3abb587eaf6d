#!/usr/bin/env bash
# NetPIPE (netpipe-openmpi) over srnic against Open MPI's TCP transport, in
# one run (issue 15's benchmark): one rank in each node of a two-port memif
# testbed with srnicd, ./srnic mpirun over UCX on srnic0 and then with
# SRNIC_MPI_TRANSPORT=tcp (the TCP BTL on the veth between the nodes'
# kernels), in turn and in alternate order.  Prints NetPIPE's bandwidth
# at 64 KiB and 1 MiB and its latency at 8 bytes, each round, and the
# medians of the within-round ratios.
#   tests/bench/mpi.sh [ROUNDS]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${1:-3}
. "$ROOT/tests/bench/lib.sh"
export SRNIC_NS=srbench SRNIC_RUN=/run/srnic-bench
SRNIC=$ROOT/srnic
W=$(mktemp -d)

netpipe() {	# srnic|tcp: prints "Mb/s@64KiB Mb/s@1MiB us@8B"
	SRNIC_MPI_TRANSPORT=$1 timeout 300 "$SRNIC" mpirun -np 2 --map-by node \
		NPopenmpi -u 1048576 -o "$W/np.$1" > /dev/null 2>&1 || true
	awk '$1 == 65536 {a = $2} $1 == 1048576 {b = $2} $1 == 8 {c = $3 * 1e6}
		END {printf "%.0f %.0f %.2f\n", a, b, c}' "$W/np.$1" 2>/dev/null ||
		echo "0 0 0"
}

trap '"$SRNIC" testbed down >/dev/null 2>&1; rm -rf "$W"' EXIT
"$SRNIC" testbed down > /dev/null 2>&1 || true
"$SRNIC" setup > /dev/null
"$SRNIC" testbed up --ports 2 --srnicd yes > /dev/null
r64=() r1m=() rlat=()
for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then
		read -r s64 s1m slat <<< "$(netpipe srnic)"
		read -r t64 t1m tlat <<< "$(netpipe tcp)"
	else
		read -r t64 t1m tlat <<< "$(netpipe tcp)"
		read -r s64 s1m slat <<< "$(netpipe srnic)"
	fi
	r64+=("$(ratio "$s64" "$t64")") r1m+=("$(ratio "$s1m" "$t1m")")
	rlat+=("$(ratio "$slat" "$tlat")")
	echo "round $r: NetPIPE 64 KiB srnic $s64 / tcp $t64 Mb/s (${r64[-1]}x), 1 MiB $s1m / $t1m Mb/s (${r1m[-1]}x), 8 B latency $slat / $tlat us (${rlat[-1]} of tcp's)"
done
med() { printf '%s\n' "$@" | median; }
echo "median: 64 KiB $(med "${r64[@]}")x tcp's, 1 MiB $(med "${r1m[@]}")x, 8 B latency $(med "${rlat[@]}") of tcp's"
