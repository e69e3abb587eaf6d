#!/usr/bin/env bash
# ./srnic demo third-party: third-party RDMA on four nodes (d idles).  b,
# the controller, has c, the data source, WRITE a region of its memory
# into a's, the target, with WRITEs of CHUNK bytes posted on b's QP to a
# that name b's QP to c; c's ports carry the data, b's only the requests
# and a's ACKs.  One line says how it went:
#
#   third-party: B bytes from c to a ordered by b, W wrong, b's ports carried K KiB
#
# W is a's bytes that differ from c's pattern; K is what b's ports sent
# and received meanwhile (its counters, before and after).
#
#   --size S        bytes (64M)
#   --chunk S       bytes a WRITE (1M)
#   --loss PCT      every node's rail 0 loses PCT% of its frames both ways
#   --target N      the target's node (a); c: a second process of c's,
#                   the bytes through c's loopback (a testbed with srnicd)
#   --no-right      c does not consent (no srnic_mr_allow_third_party):
#                   every WRITE must fail,
#                   "third-party: refused, remote access error, N WRITEs"
#
# It brings up a four-node afpacket testbed of its own (SRNIC_NS and
# SRNIC_RUN with -3p appended), or uses one of four nodes that is up there
# already (and leaves it up).  Exit 0 when the line says what must happen
# (examples/srnic_3p.c).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SRNIC=$ROOT/srnic
PROG=${SRNIC_BUILD:-$ROOT/build}/examples/srnic_3p
export SRNIC_NS=${SRNIC_3P_NS:-${SRNIC_NS:-srnic}-3p}
export SRNIC_RUN=${SRNIC_3P_RUN:-${SRNIC_RUN:-/run/srnic}-3p}

size=64M chunk=1M loss="" no="" target=a
while [ $# -gt 0 ]; do
	case $1 in
	--size) size=$2; shift 2 ;;
	--chunk) chunk=$2; shift 2 ;;
	--loss) loss=$2; shift 2 ;;
	--no-right) no=-n; shift ;;
	--target) target=$2; shift 2 ;;
	*) echo "third-party: unknown option '$1'" >&2; exit 1 ;;
	esac
done
bytes=$(numfmt --from=iec "$size")
chunk_bytes=$(numfmt --from=iec "$chunk")

. "$ROOT/examples/demo-testbed.sh"

# Bytes node b's ports sent and received so far (0 before its first
# program: an afpacket node's counters are its process's).
b_port_bytes() {
	{ "$SRNIC" stats b 2>/dev/null || true; } |
		awk '$1 == "port" {for (i = 3; i < NF; i++)
			if ($i == "rx_bytes" || $i == "tx_bytes") s += $(i + 1)}
			END {printf "%.0f\n", s}'
}

if [ -n "$loss" ]; then
	for nd in a b c d; do "$SRNIC" testbed fault $nd 0 loss="$loss%"; done
fi
before=$(b_port_bytes)
timeout -k 5 300 "$SRNIC" exec "$target" -- "$PROG" target "$work" -s "$bytes" \
	> "$work/target.log" 2>&1 &
pids+=($!)
timeout -k 5 300 "$SRNIC" exec c -- "$PROG" source "$work" -s "$bytes" $no \
	> "$work/c.log" 2>&1 &
pids+=($!)
rc=0
timeout -k 5 300 "$SRNIC" exec b -- "$PROG" controller "$work" -s "$bytes" \
	-k "$chunk_bytes" -t "$target" $no > "$work/b.log" 2>&1 || rc=$?
wait "${pids[@]}" 2>/dev/null || true
for nd in target c; do
	[ ! -s "$work/$nd.log" ] || sed "s/^/$nd: /" "$work/$nd.log"
done
# (an afpacket node's counters are written twice a second, and outlive
# its process)
sleep 0.6
carried=$(( ($(b_port_bytes) - before) / 1024 ))
if [ -z "$no" ] && grep -q "^third-party: .* wrong$" "$work/b.log"; then
	sed "s/\$/, b's ports carried $carried KiB/" "$work/b.log"
else
	cat "$work/b.log"
fi
echo "resent: $(for nd in b c; do echo -n "$nd $("$SRNIC" stats $nd | grep -oE '(retransmits|sack_resent_packets|probes|tp_requests) [0-9]+' | tr '\n' ' ')"; done)"
exit $rc
