#!/usr/bin/env bash
# The benchmark suite (issue 5): srnic against what a user could run
# instead on this machine, in one run, rounds alternating between them.
#
#   ./srnic bench [--rounds N] [--secs S] [--quick] [--out DIR]
#
# For each wire (memif, afpacket) and port count (1, 2), on a two-node
# testbed of its own:
#   srnic     unmodified perftest: ib_write_bw, ib_read_bw, ib_send_bw
#             (Gb/s) and ib_write_lat, ib_read_lat (typical µs), at each
#             message size; on memif with 2 ports also ib_write_bw over
#             1000 QPs (-q 1000, 64 KiB);
#   ceiling   dpdk-testpmd txonly -> rxonly over the same kind of link and
#             the same frame size as srnic's packets of that message size
#             (memif: two testpmds on memif links of their own; afpacket:
#             testpmd on the nodes' rail interfaces);
# and once a round, over the nodes' kernel network (the best path those
# have here, MTU raised to 65000 for them):
#   tcp       iperf3, one stream (Gb/s);
#   ucx       ucx_perftest over tcp: put bandwidth 64 KiB, put latency 2 B;
#   libfabric tests/bench/fi_rma_bw, RMA writes of 64 KiB over its tcp
#             provider.
# Raw numbers go to DIR/raw.tsv (wire ports bench size round value unit),
# and tests/bench/report.py writes DIR/results.md (medians, ratios) and
# DIR/results.png.  DIR defaults to results/<date-time>.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRNIC=$ROOT/srnic
BUILD=${SRNIC_BUILD:-$ROOT/build}
ROUNDS=3 SECS=3 QUICK=0
OUT=$ROOT/results/$(date +%Y%m%d-%H%M%S)
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift ;;
	--secs) SECS=$2; shift ;;
	--quick) QUICK=1 ;;
	--out) OUT=$2; shift ;;
	*) echo "usage: ./srnic bench [--rounds N] [--secs S] [--quick] [--out DIR]" >&2
	   exit 2 ;;
	esac
	shift
done
if [ $QUICK = 1 ]; then
	BW_SIZES="8 4096 65536 4194304" LAT_SIZES="2 4096"
	WIRES="memif" PORTS="2"
else
	BW_SIZES="8 64 512 4096 65536 1048576 4194304" LAT_SIZES="2 8 512 4096 65536"
	WIRES="memif afpacket" PORTS="1 2"
fi
export SRNIC_NS=srbench SRNIC_RUN=/run/srnic-bench
. "$ROOT/tests/bench/lib.sh"
W=$SRNIC_RUN-work
RAW=$OUT/raw.tsv

# ---- what the peers need -------------------------------------------------

"$SRNIC" setup
missing=()
command -v iperf3 >/dev/null || missing+=(iperf3)
command -v ucx_perftest >/dev/null || missing+=(ucx-utils)
pkg-config --exists libfabric || missing+=(libfabric-dev)
# (Debian's python, whatever python3 the PATH finds first)
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || missing+=(python3-matplotlib)
if [ ${#missing[@]} -gt 0 ]; then
	echo "bench: installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
fi
[ -x "$BUILD/tests/bench/fi_rma_bw" ] ||
	{ meson setup --reconfigure "$BUILD" "$ROOT" >/dev/null && ninja -C "$BUILD" >/dev/null; }
[ -x "$BUILD/tests/bench/fi_rma_bw" ] || { echo "bench: fi_rma_bw did not build" >&2; exit 1; }

mkdir -p "$OUT" "$W"
printf 'wire\tports\tbench\tsize\tround\tvalue\tunit\n' > "$RAW"
trap '"$SRNIC" testbed down >/dev/null 2>&1; rm -rf "$W"' EXIT

record() {	# wire ports bench size round value unit
	[ -n "$6" ] || return 0	# a run that printed nothing is left out
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> "$RAW"
	printf '  %-9s %-2s %-14s %8s B  %s %s\n' "$1" "$2" "$3" "$4" "$6" "$7"
}

# ---- srnic ----------------------------------------------------------------

pair_out() {	# TOOL ARGS...: server on b, client on a; the client's output
	local pid
	timeout 120 "$SRNIC" exec b -- "$@" >/dev/null 2>&1 &
	pid=$!
	sleep 0.5
	timeout 120 "$SRNIC" exec a -- "$@" b 2>/dev/null || true
	wait $pid 2>/dev/null || true
}

perf_bw() {	# tool size [args...]: Gb/s
	local tool=$1 size=$2
	shift 2
	pair_out "$tool" -s "$size" -D "$SECS" --report_gbits "$@" |
		awk -v s="$size" '$1 == s && NF >= 5 {print $4}'
}

perf_lat() {	# tool size: typical µs
	# (10000 iterations, nearer the peers' 20000 for ucx_perftest; the
	# first of a READ run are still slower, docs/performance.md)
	pair_out "$1" -s "$2" -n 10000 |
		awk -v s="$2" '$1 == s && NF >= 7 {print $5}'
}

# ---- the wire's ceiling ---------------------------------------------------

# ---- the peers, over the kernel's network ---------------------------------

ucx_test() {	# port test size: ucx_perftest over tcp, the client's output
	local pid
	"$SRNIC" exec b -- env UCX_TLS=tcp ucx_perftest -p "$1" >/dev/null 2>&1 &
	pid=$!; sleep 0.5
	timeout 60 "$SRNIC" exec a -- env UCX_TLS=tcp ucx_perftest -p "$1" \
		-t "$2" -s "$3" -n 20000 b 2>/dev/null || true
	wait $pid 2>/dev/null || true
}

peers() {	# round
	local r=$1 v
	v=$(iperf3_gbps "$SECS")
	record kernel - tcp-iperf3 stream "$r" "$v" Gb/s

	v=$(ucx_test 18541 ucp_put_bw 65536 |
		awk '/^Final:/ {printf "%.3f\n", $7 * 8 * 1048576 / 1e9}')
	record kernel - ucx-put-bw 65536 "$r" "$v" Gb/s
	v=$(ucx_test 18542 ucp_put_lat 2 | awk '/^Final:/ {print $3}')
	record kernel - ucx-put-lat 2 "$r" "$v" us

	"$SRNIC" exec b -- "$BUILD/tests/bench/fi_rma_bw" -p 18543 >/dev/null 2>&1 &
	pid=$!
	v=$(timeout 60 "$SRNIC" exec a -- "$BUILD/tests/bench/fi_rma_bw" -p 18543 \
		-s 65536 -D "$SECS" b 2>/dev/null |
		awk '/^fi_rma_bw:/ {print $(NF - 1)}' || true)
	wait $pid 2>/dev/null || true
	record kernel - libfabric-write 65536 "$r" "$v" Gb/s
}

# The kernel's best path between the nodes: the largest MTU its veths take.
kernel_mtu() {
	local n
	for n in a b; do
		ip -n "$SRNIC_NS-sw" link set "ctl-$n" mtu 65000 2>/dev/null || true
		ip -n "$SRNIC_NS-$n" link set ctl0 mtu 65000 2>/dev/null || true
	done
}

# ---- the run ----------------------------------------------------------------

echo "bench: results in $OUT"
for wire in $WIRES; do
	for ports in $PORTS; do
		"$SRNIC" testbed down >/dev/null 2>&1 || true
		"$SRNIC" testbed up --wire "$wire" --ports "$ports" >/dev/null
		kernel_mtu
		echo "bench: $wire wire, $ports port(s)"
		for ((r = 1; r <= ROUNDS; r++)); do
			for s in $BW_SIZES; do
				record "$wire" "$ports" testpmd "$s" "$r" \
					"$(testpmd_gbps "$wire" "$ports" "$(frame_of "$s")")" Gb/s
				for t in ib_write_bw ib_read_bw ib_send_bw; do
					record "$wire" "$ports" "$t" "$s" "$r" "$(perf_bw $t "$s")" Gb/s
				done
			done
			for s in $LAT_SIZES; do
				for t in ib_write_lat ib_read_lat; do
					record "$wire" "$ports" "$t" "$s" "$r" "$(perf_lat $t "$s")" us
				done
			done
			# 1000 connected QPs against one (issue 5's target)
			[ "$wire $ports" = "memif 2" ] &&
				record "$wire" "$ports" ib_write_bw_q1000 65536 "$r" \
					"$(perf_bw ib_write_bw 65536 -q 1000)" Gb/s
			# the peers once a round, on the first testbed only
			[ "$wire $ports" = "${WIRES%% *} ${PORTS%% *}" ] && peers "$r"
		done
	done
done
"$SRNIC" testbed down >/dev/null 2>&1 || true
/usr/bin/python3 "$ROOT/tests/bench/report.py" "$OUT" \
	"./srnic bench --rounds $ROUNDS --secs $SECS$([ $QUICK = 1 ] && echo ' --quick')"
echo "bench: $OUT/results.md, $OUT/results.png"
