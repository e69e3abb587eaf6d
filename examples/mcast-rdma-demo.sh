#!/usr/bin/env bash
# ./srnic demo mcast-rdma: multicast RDMA WRITE on four nodes.  Node a
# writes SIZE bytes (default 256 MiB) to group 1, whose members are b and
# c; d holds a region for group 2 only, and must come out untouched.  One
# line says how it went:
#
#   mcast-rdma: B bytes to M members, W wrong, non-member untouched|changed, sent X.XXx
#
# W counts the bytes of the members still up that differ from a's; "sent"
# is the payload a put on its ports (new packets and repairs) over SIZE.
# Each member also says what its completions add up to (one for each
# WRITE that landed whole, srnic_group_notify): "b completions C bytes B
# repeated R".
#
#   --size S        bytes to write (256M)
#   --loss N:P:PCT  node N's rail P loses PCT% of its frames both ways
#   --qps Q         a sends from Q QPs (srnic_mcast -q): Q senders of the
#                   group at each member, which keeps each one's messages
#                   apart (more than 16 took turns in a table of 16 once)
#   --kill N:PCT    node N is killed (SIGKILL) when a has done PCT% of it;
#                   a then goes on to the members left (srnic_mcast -r)
#   --forge N       once a is done, a station on a's rail 0 sends N
#                   multicast WRITEs to group 1 from made-up senders,
#                   without the tag only holders of the cluster key make
#                   (tests/e2e/inject, built with the tests): the members
#                   must drop them (bad_key), or their bytes come out wrong
#
# It brings up a four-node afpacket testbed of its own (SRNIC_NS and
# SRNIC_RUN with -mc appended), or uses one of four nodes that is up there
# already (and leaves it up).  Exit 0 when no byte is wrong, d is
# untouched, and a's WRITEs completed (with --kill: those it tried again).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SRNIC=$ROOT/srnic
PROG=${SRNIC_BUILD:-$ROOT/build}/examples/srnic_mcast
export SRNIC_NS=${SRNIC_MC_NS:-${SRNIC_NS:-srnic}-mc}
export SRNIC_RUN=${SRNIC_MC_RUN:-${SRNIC_RUN:-/run/srnic}-mc}

size=256M loss="" kill="" forge=0 qps=1
while [ $# -gt 0 ]; do
	case $1 in
	--size) size=$2; shift 2 ;;
	--loss) loss=$2; shift 2 ;;
	--kill) kill=$2; shift 2 ;;
	--forge) forge=$2; shift 2 ;;
	--qps) qps=$2; shift 2 ;;
	*) echo "mcast-rdma: unknown option '$1'" >&2; exit 1 ;;
	esac
done
bytes=$(numfmt --from=iec "$size")

. "$ROOT/examples/demo-testbed.sh"
cleanup() {
	for fd in 7 8 9; do eval "exec $fd>&-" 2>/dev/null || true; done
	demo_testbed_done
}
trap cleanup EXIT

# counter NODE NAME: a counter of the node's "mc_..." line
counter() {
	"$SRNIC" stats "$1" | awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' | head -1
}

# Members: b and c for group 1, d for group 2.  Each reads its commands
# from a FIFO (fd 7, 8, 9).
fd=7
for n in b c d; do
	mkfifo "$work/$n.in"
	group=$([ $n = d ] && echo 2 || echo 1)
	# (not this shell's job: one killed on purpose is no news; each
	# ends at the end of its input, or with the testbed)
	(timeout -k 5 300 "$SRNIC" exec $n -- "$PROG" member -g $group -s "$bytes" \
		< "$work/$n.in" > "$work/$n.log" 2>&1 &)
	eval "exec $fd>\"$work/$n.in\""
	fd=$((fd + 1))
done
for ((i = 0; i < 400; i++)); do
	[ "$(cat "$work"/[bcd].log | grep -c '^member ready')" = 3 ] && break
	sleep 0.05
done
[ "$(cat "$work"/[bcd].log | grep -c '^member ready')" = 3 ] ||
	{ cat "$work"/[bcd].log >&2; echo "mcast-rdma: members did not start" >&2; exit 1; }

if [ -n "$loss" ]; then
	IFS=: read -r ln lp lpct <<< "$loss"
	"$SRNIC" testbed fault "$ln" "$lp" loss="$lpct%"
fi
# (a's counters are its sender process's, which starts from zero: the
# file goes, so that what is read is that process's last word)
rm -f "$TB/a.stats"

args=(send -g 1 -s "$bytes" -m 2 -S 77 -q "$qps")
[ -z "$kill" ] || args+=(-r)
timeout -k 5 300 "$SRNIC" exec a -- "$PROG" "${args[@]}" > "$work/a.log" 2>&1 &
sender=$!
pids+=($sender)
killed=""
if [ -n "$kill" ]; then
	IFS=: read -r kn kpct <<< "$kill"
	while kill -0 $sender 2>/dev/null; do
		if grep -q "^progress \([0-9]*\)%" "$work/a.log" &&
		   [ "$(grep '^progress' "$work/a.log" | tail -1 | tr -dc 0-9)" -ge "$kpct" ]; then
			# (every process of the node: its member)
			kill -9 $(ip netns pids "$SRNIC_NS-$kn") 2>/dev/null || true
			killed=$kn
			break
		fi
		sleep 0.01
	done
fi
rc=0
wait $sender || rc=$?
cat "$work/a.log"
if [ "$forge" -gt 0 ]; then
	# (256 bytes of 0xee at offset 0: over a's bytes, if placed)
	ip netns exec "$SRNIC_NS-a" "${SRNIC_BUILD:-$ROOT/build}/tests/e2e/inject" \
		group-write rail0 02:53:4e:ee:00:01 1 "$forge" || rc=2
	sleep 0.2
fi

# Each member still up compares its region with a's bytes, d with its
# canary.
members=2 answers=3
for n in b c; do
	if [ "$n" = "$killed" ]; then answers=2; continue; fi
	echo "check 77 $bytes" >&$([ $n = b ] && echo 7 || echo 8)
done
echo "canary" >&9
for ((i = 0; i < 1200; i++)); do
	[ "$(cat "$work"/[bcd].log | grep -cE '^(check wrong|canary changed) ')" -ge $answers ] && break
	sleep 0.05
done
wrong=0
for n in b c; do
	[ "$n" = "$killed" ] && continue
	w=$(awk '/^check wrong/ { print $3 }' "$work/$n.log" | tail -1)
	[ -n "$w" ] || { echo "mcast-rdma: $n did not answer" >&2; cat "$work/$n.log" >&2; w=$bytes; }
	wrong=$((wrong + w))
done
changed=$(awk '/^canary changed/ { print $3 }' "$work/d.log" | tail -1)
untouched=$([ "${changed:-x}" = 0 ] && echo untouched || echo changed)
sleep 0.6	# (the members' counters are written twice a second)
sent=$(counter a mc_bytes)
ratio=$(awk -v s="${sent:-0}" -v b="$bytes" 'BEGIN { printf "%.2f", s / b }')
for n in b c; do
	[ "$n" = "$killed" ] && { echo "$n killed"; continue; }
	# (its counters are its member process's, from zero)
	echo "$n placed $(counter $n mc_unicast) packets from repairs (unicast)"
	# (one completion a WRITE that landed whole: srnic_group_notify)
	echo "$n $(grep '^completions' "$work/$n.log" | tail -1)"
done
echo "d dropped $(counter d mc_not_member) packets (not a member)"
[ "$qps" = 1 ] ||
	echo "senders a's $qps QPs; new senders refused (mc_sources_full): b $(counter b mc_sources_full), c $(counter c mc_sources_full)"
[ "$forge" = 0 ] ||
	echo "forged WRITEs dropped for their tag (bad_key): b $(counter b bad_key), c $(counter c bad_key)"
echo "mcast-rdma: $bytes bytes to $members members, $wrong wrong, non-member $untouched, sent ${ratio}x"
[ $rc = 0 ] && [ $wrong = 0 ] && [ $untouched = untouched ]
