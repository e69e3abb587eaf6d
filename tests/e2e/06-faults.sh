# Faults on the wire (a tap testbed of its own, with srnicd in each node,
# shaped with ./srnic testbed fault): data must arrive whole and exactly
# once, with two processes of each node at work at once.
#  1. 1% loss and 1% duplication on every rail, both directions, and on
#     every port of both nodes 25% of the received frames held back for
#     1 ms (reordering with delay, injected by the engine): the
#     data-integrity example checks every byte of WRITE, READ and SEND from
#     1 B to 8 MiB while ibv_rc_pingpong -c checks what it receives (two
#     pairs at once), then the atomics test checks that every atomic ran
#     exactly once while uc_check checks that UC messages arrive intact,
#     in order, and keep coming; then completion at both ends
#     (notify_faults): 1200 WRITEs and READs, each completing once at its
#     target too, in order, every byte checked.
#  2. A link that goes down for two seconds in the middle of a transfer and
#     comes back: no error, no bad byte, the peer found the port silent
#     (before it found it dead) and the port is in use again; then the same
#     for ibv_rc_pingpong -c.
# The testbed is the caller's SRNIC_NS and SRNIC_RUN with "-f" appended, so
# that it never meets the caller's own testbed or another run's.
export SRNIC_NS=${SRNIC_NS:-srnic}-f SRNIC_RUN=${SRNIC_RUN:-/run/srnic}-f
. "$(dirname "$0")/../lib.sh"

trap '"$SRNIC" testbed down >/dev/null 2>&1' EXIT
"$SRNIC" testbed down >/dev/null 2>&1
"$SRNIC" testbed up --wire tap >/dev/null || fail "tap testbed"
prog=$BUILD/examples/srnic_integrity

for n in a b; do
	for p in 0 1; do
		"$SRNIC" testbed fault $n $p loss=1% duplicate=1% reorder=25% delay=1ms ||
			fail "fault $n $p"
	done
done
# two_at_once: two pairs at once, each its own TCP port; true if both
# passed.  The nodes' srnicd had both processes of each node attached.
two_at_once() {	# "PORT FUNCTION ARGS..." "PORT FUNCTION ARGS..."
	local one two rc=0
	(read -ra c <<< "$1"; PAIR_PORT=${c[0]} "${c[@]:1}") & one=$!
	(read -ra c <<< "$2"; PAIR_PORT=${c[0]} "${c[@]:1}") & two=$!
	wait $one || rc=1
	wait $two || rc=1
	return $rc
}
most() {	# NODE: the most processes attached to its srnicd at once
	python3 "$ROOT/tools/srnicd_client.py" "$TB/$1.sock" stats --json |
		python3 -c "import json, sys; print(json.load(sys.stdin)['processes_most'])"
}
two_at_once "18600 pair faults-integrity 180 $prog" \
	"18515 pingpong faults-pingpong 180 ibv_rc_pingpong -g 1 -s 65536 -n 100 -m 1024" ||
	fail "integrity and ibv_rc_pingpong under loss, duplication and reordering"
grep -q ", 0 bad" "$LOGDIR/faults-integrity.a" || fail "bad data under loss, duplication and reordering"
for n in a b; do
	echo "processes attached to $n's srnicd at once, at most: $(most $n)"
	[ "$(most $n)" -ge 2 ] || fail "node $n never had two processes attached"
done
# Every port of both nodes held frames back (else this proved nothing).
for n in a b; do
	delayed=$(counter $n delayed ports)
	echo "frames delayed by node $n, per port: ${delayed:-?}"
	[ "$(echo $delayed | wc -w)" = 2 ] && ! echo " $delayed " | grep -q ' 0 ' ||
		fail "node $n: a port delayed no frame"
done
# Atomics must run exactly once although requests and answers get lost,
# duplicated and reordered: the responder answers copies from what it kept.
# UC resends nothing: what arrives must be intact and in order, and a lost
# message must not hold up the ones behind it.
two_at_once "18516 pair faults-atomics 180 $BUILD/tests/e2e/atomics -n 2000" \
	"18520 pair faults-uc 120 $BUILD/tests/e2e/uc_check -l" ||
	fail "atomics and UC under loss, duplication and reordering"
grep -q "^atomics server: .*, 0 bad$" "$LOGDIR/faults-atomics.b" ||
	fail "atomics under loss, duplication and reordering: bad counters"
grep "^uc server:" "$LOGDIR/faults-uc.b"
# (a UC requester out of credit waits for its responder's ACK alone: the
# last one goes again, else one lost stalled the stream for a second,
# past uc_check's patience)
again=$(counter b uc_acks_again)
echo "UC ACKs b said again: ${again:-?}"
[ "${again:-0}" -gt 0 ] || fail "b never said a UC ACK again"
# Completion at both ends: every WRITE and READ that asked completes once
# at its target too, in order, a READ's only once its reader has the
# data (READ_DONE, said again until answered).
PAIR_PORT=18530 pair faults-notify 150 "$BUILD/tests/e2e/notify_faults" -p 18530 -n 1200 ||
	fail "completion at both ends under loss, duplication and reordering"
grep -h "completions at the target\|operations completed" "$LOGDIR"/faults-notify.[ab]
# (its READ_DONEs were lost too, and said again: else the recovery of the
# new words went untested)
again=$(counter a read_dones_again)
echo "READ_DONEs a said again: ${again:-?}"
[ "${again:-0}" -gt 0 ] || fail "no READ_DONE was said again (none lost?)"
# The filters did their work (else this proved nothing).
dropped=$(ip netns exec "$SRNIC_NS-sw" tc -s qdisc show dev r0-b |
	awk '/clsact/ {f = 1} f && /dropped/ {gsub(",", ""); print $7; exit}')
echo "frames dropped on one rail toward b: ${dropped:-?}"
[ "${dropped:-0}" -gt 0 ] || fail "no frame was dropped"
dups=$(counter b drops.duplicate)
echo "duplicates b dropped: ${dups:-?}"
[ "${dups:-0}" -gt 0 ] || fail "no duplicate was seen"

for n in a b; do
	for p in 0 1; do
		"$SRNIC" testbed fault $n $p clear
	done
done
# silenced NODE PEER: how often NODE found one of PEER's ports silent (the
# node's count, over every process srnicd served)
silenced() { counter "$1" silenced "$2"; }
# (the link goes down once both nodes hear each other on both ports)
rm -f "$TB"/[ab].stats*
before=$(silenced b a)
( wait_peer a b && wait_peer b a && sleep 0.5
  "$SRNIC" testbed fault a 0 down; sleep 2; "$SRNIC" testbed fault a 0 up ) &
flap=$!
pair flap-integrity 180 "$prog" -r 4 || fail "integrity while a link goes down and up"
wait $flap
grep -q ", 0 bad" "$LOGDIR/flap-integrity.a" || fail "bad data across a link flap"
sleep 1
[ "$(counter a ports_up b)" = "0 1" ] || fail "port 0 did not come back"
# b found a's port 0 silent (port 1 still heard a) before it found it dead.
[ "$(silenced b a)" -gt "${before:-0}" ] ||
	fail "b did not find a's port 0 silent (silenced ${before:-?} before, $(silenced b a) after)"

rm -f "$TB"/[ab].stats*
before=$(silenced a b)
( wait_peer a b && wait_peer b a && sleep 0.3
  "$SRNIC" testbed fault b 1 down; sleep 2; "$SRNIC" testbed fault b 1 up ) &
flap=$!
pingpong flap-pingpong 180 ibv_rc_pingpong -g 1 -s 65536 -n 6000 -m 1024 ||
	fail "ibv_rc_pingpong while a link goes down and up"
wait $flap
grep iters "$LOGDIR/flap-pingpong.a"
stats=$("$SRNIC" stats a)
grep -E '^(port|peer|striping) ' <<< "$stats"
[ "$(silenced a b)" -gt "${before:-0}" ] ||
	fail "a did not find b's port 1 silent (silenced ${before:-?} before, $(silenced a b) after)"
exit 0
