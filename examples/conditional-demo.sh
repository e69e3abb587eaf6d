#!/usr/bin/env bash
# ./srnic demo conditional: conditional RDMA on four nodes.  Node a posts,
# all at once, a WRITE with immediate to d conditional on a queue, then N
# WRITEs (default 64) each to b and c counted into that queue; the datapath
# sends the one to d when the last of the others completes.  One line says
# how it went:
#
#   conditional: fired after C of T components, once, L us after the last ACK
#
# L is d's completion of the signal less a's completion of the last
# component (their CQEs' times).  b's and c's bytes are checked.
#
#   --n N           WRITEs to each of b and c (64)
#   --size S        bytes to each of b and c (4M)
#   --loss PCT      every node's rail 0 loses PCT% of its frames both ways
#   --program       a's program polls for the last completion and posts
#                   the WRITE to d itself (what the queue saves it), for
#                   comparison: "program: posted after ..."
#   --fail          the last WRITE to c carries a key that is none: the
#                   condition never holds; a then destroys the queue, and
#                   the signal must complete flushed, never sent:
#                   "conditional: not fired, C of T components, F failed, flushed"
#
# It brings up a four-node afpacket testbed of its own (SRNIC_NS and
# SRNIC_RUN with -cond appended), or uses one of four nodes that is up
# there already (and leaves it up).  Exit 0 when the line says what must
# happen and no byte is wrong (examples/srnic_cond.c).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SRNIC=$ROOT/srnic
PROG=${SRNIC_BUILD:-$ROOT/build}/examples/srnic_cond
export SRNIC_NS=${SRNIC_COND_NS:-${SRNIC_NS:-srnic}-cond}
export SRNIC_RUN=${SRNIC_COND_RUN:-${SRNIC_RUN:-/run/srnic}-cond}

n=64 size=4M loss="" fail=""
while [ $# -gt 0 ]; do
	case $1 in
	--n) n=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	--loss) loss=$2; shift 2 ;;
	--fail) fail=-f; shift ;;
	--program) fail=-p; shift ;;
	*) echo "conditional: unknown option '$1'" >&2; exit 1 ;;
	esac
done
bytes=$(numfmt --from=iec "$size")

. "$ROOT/examples/demo-testbed.sh"

if [ -n "$loss" ]; then
	for nd in a b c d; do "$SRNIC" testbed fault $nd 0 loss="$loss%"; done
fi
for nd in b c d; do
	args=(target "$work" $nd -s "$bytes")
	[ $nd != d ] || args+=(-r)
	timeout -k 5 300 "$SRNIC" exec $nd -- "$PROG" "${args[@]}" > "$work/$nd.log" 2>&1 &
	pids+=($!)
done
rc=0
timeout -k 5 300 "$SRNIC" exec a -- "$PROG" source "$work" -n "$n" -s "$bytes" $fail b c d \
	> "$work/a.log" 2>&1 || rc=$?
for nd in b c d; do
	[ ! -s "$work/$nd.log" ] || sed "s/^/$nd: /" "$work/$nd.log"
done
cat "$work/a.log"
# (a's counters are written twice a second, and outlive its process)
sleep 0.6
echo "a resent: $("$SRNIC" stats a | grep -oE '(retransmits|sack_resent_packets) [0-9]+' | tr '\n' ' ')"
exit $rc
