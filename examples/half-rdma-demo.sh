#!/usr/bin/env bash
# ./srnic demo half-rdma: half-RDMA on four nodes.  a, b and c each RDMA
# WRITE an array of 64-bit numbers (SIZE bytes, default 64 MiB) into d's
# FIFO (4 MiB): d never sees an address, it sums the numbers of every
# record as the packets come, in any order, while its ring fills and
# drains.  One line says how it went (examples/srnic_fifo.c):
#
#   half-rdma: 3 senders, sum exact|wrong, fifo_full F
#
# F counts the packets d's ring had no room for, each sent again.
#
#   --size S        bytes from each sender (64M)
#   --fifo S        d's ring (4M)
#   --loss PCT      every node's rail 0 loses PCT% of its frames both ways
#   --dup PCT       ... and duplicates PCT% of them
#   --unregistered  the senders register nothing: each WRITE is gathered
#                   from 16 pieces of plain memory (srnic_post_fifo_write,
#                   half-RDMA's sending half)
#   --read          d pulls instead: it READs each sender's array into its
#                   FIFO (srnic_post_fifo_read, the seed's half-send READ)
#   --answer        a, b and c READ from d instead: each READ comes to d's
#                   program as a request in its FIFO, answered with numbers
#                   it makes then (srnic_fifo_read_reply, the seed's
#                   half-receive READ); each reader checks every word
#   --pause MS      d's program takes nothing for MS ms once its first
#                   record is in: its ring fills, and the senders wait
#                   (an RNR NAK for each WRITE that meets it full)
#
# It brings up a four-node afpacket testbed of its own (SRNIC_NS and
# SRNIC_RUN with -half appended), or uses one of four nodes that is up
# there already (and leaves it up).  Exit 0 when d's sum is exact.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SRNIC=$ROOT/srnic
PROG=${SRNIC_BUILD:-$ROOT/build}/examples/srnic_fifo
export SRNIC_NS=${SRNIC_HALF_NS:-${SRNIC_NS:-srnic}-half}
export SRNIC_RUN=${SRNIC_HALF_RUN:-${SRNIC_RUN:-/run/srnic}-half}

size=64M fifo=4M fault=() unreg=() read=() pause=()
while [ $# -gt 0 ]; do
	case $1 in
	--size) size=$2; shift 2 ;;
	--fifo) fifo=$2; shift 2 ;;
	--loss) fault+=(loss="$2%"); shift 2 ;;
	--dup) fault+=(duplicate="$2%"); shift 2 ;;
	--unregistered) unreg=(-u); shift ;;
	--read) read=(-r); shift ;;
	--answer) read=(-a); shift ;;
	--pause) pause=(-p "$2"); shift 2 ;;
	*) echo "half-rdma: unknown option '$1'" >&2; exit 1 ;;
	esac
done
bytes=$(numfmt --from=iec "$size")
ring=$(numfmt --from=iec "$fifo")

. "$ROOT/examples/demo-testbed.sh"
# (stopped before the end, by a timeout say: what each program said so far)
shown=0
show_logs() {
	local nd
	for nd in a b c d; do
		[ -s "$work/$nd.log" ] && sed "s/^srnic_fifo:/$nd: srnic_fifo:/" "$work/$nd.log"
	done
	shown=1
}
trap '[ $shown = 1 ] || { echo "half-rdma: stopped; what the programs said:"; show_logs; }; demo_testbed_done' EXIT

if [ ${#fault[@]} -gt 0 ]; then
	for nd in a b c d; do "$SRNIC" testbed fault $nd 0 "${fault[@]}"; done
fi
for nd in a b c; do
	timeout -k 5 300 "$SRNIC" exec $nd -- "$PROG" send "$work" $nd -s "$bytes" "${unreg[@]}" "${read[@]}" \
		> "$work/$nd.log" 2>&1 &
	pids+=($!)
done
rc=0
# (in the background too, so that a demo stopped early stops it)
timeout -k 5 300 "$SRNIC" exec d -- "$PROG" sink "$work" -s "$bytes" -f "$ring" "${pause[@]}" "${read[@]}" a b c \
	> "$work/d.log" 2>&1 &
pids+=($!)
wait "${pids[3]}" || rc=$?
for nd in a b c; do
	wait "${pids[0]}" 2>/dev/null || rc=2
	pids=("${pids[@]:1}")
done
pids=()
show_logs
exit $rc
