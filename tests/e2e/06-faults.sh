# Faults on the wire (an afpacket testbed of its own, shaped with ./srnic
# testbed fault): data must arrive whole and exactly once.
#  1. 1% loss and 1% duplication on every rail, both directions, and on
#     every port of both nodes 25% of the received frames held back for
#     1 ms (reordering with delay, injected by the engine): the
#     data-integrity example checks every byte of WRITE, READ and SEND from
#     1 B to 8 MiB, ibv_rc_pingpong -c checks what it receives, the
#     atomics test checks that every atomic ran exactly once, and
#     uc_check that UC messages arrive intact, in order, and keep coming.
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
"$SRNIC" testbed up --wire afpacket >/dev/null || fail "afpacket testbed"
prog=$BUILD/examples/srnic_integrity

for n in a b; do
	for p in 0 1; do
		"$SRNIC" testbed fault $n $p loss=1% duplicate=1% reorder=25% delay=1ms ||
			fail "fault $n $p"
	done
done
pair faults-integrity 180 "$prog" || fail "integrity under loss, duplication and reordering"
grep -q ", 0 bad" "$LOGDIR/faults-integrity.a" || fail "bad data under loss, duplication and reordering"
# Every port of both nodes held frames back (else this proved nothing).
for n in a b; do
	delayed=$("$SRNIC" stats $n | awk '/^port / {
		for (i = 3; i < NF; i++) if ($i == "delayed") printf "%s ", $(i + 1) }')
	echo "frames delayed by node $n, per port: ${delayed:-?}"
	[ "$(echo $delayed | wc -w)" = 2 ] && ! echo " $delayed" | grep -q ' 0 ' ||
		fail "node $n: a port delayed no frame"
done
pingpong faults-pingpong 180 ibv_rc_pingpong -g 1 -s 65536 -n 100 -m 1024 ||
	fail "ibv_rc_pingpong under loss, duplication and reordering"
# Atomics must run exactly once although requests and answers get lost,
# duplicated and reordered: the responder answers copies from what it kept.
pair faults-atomics 180 "$BUILD/tests/e2e/atomics" -n 2000 ||
	fail "atomics under loss, duplication and reordering"
grep -q "^atomics server: .*, 0 bad$" "$LOGDIR/faults-atomics.b" ||
	fail "atomics under loss, duplication and reordering: bad counters"
# UC resends nothing: what arrives must be intact and in order, and a lost
# message must not hold up the ones behind it.
pair faults-uc 120 "$BUILD/tests/e2e/uc_check" -l ||
	fail "UC under loss, duplication and reordering"
grep "^uc server:" "$LOGDIR/faults-uc.b"
# The filters did their work (else this proved nothing).
dropped=$(ip netns exec "$SRNIC_NS-sw" tc -s qdisc show dev r0-b |
	awk '/clsact/ {f = 1} f && /dropped/ {gsub(",", ""); print $7; exit}')
echo "frames dropped on one rail toward b: ${dropped:-?}"
[ "${dropped:-0}" -gt 0 ] || fail "no frame was dropped"
"$SRNIC" stats b | grep -E '^drop duplicate [1-9]' || fail "no duplicate was seen"

for n in a b; do
	for p in 0 1; do
		"$SRNIC" testbed fault $n $p clear
	done
done
# (the link goes down once both processes hear each other on both ports)
rm -f "$TB/a.stats" "$TB/b.stats"
( wait_peer a b && wait_peer b a && sleep 0.5
  "$SRNIC" testbed fault a 0 down; sleep 2; "$SRNIC" testbed fault a 0 up ) &
flap=$!
pair flap-integrity 180 "$prog" -r 4 || fail "integrity while a link goes down and up"
wait $flap
grep -q ", 0 bad" "$LOGDIR/flap-integrity.a" || fail "bad data across a link flap"
sleep 1
"$SRNIC" stats a | grep -E '^peer b .* ports up 0 1$' || fail "port 0 did not come back"
# b found a's port 0 silent (port 1 still heard a) before it found it dead.
"$SRNIC" stats b | grep -E '^striping a .* silenced [1-9]' ||
	fail "b did not find a's port 0 silent"

rm -f "$TB/a.stats" "$TB/b.stats"
( wait_peer a b && wait_peer b a && sleep 0.3
  "$SRNIC" testbed fault b 1 down; sleep 2; "$SRNIC" testbed fault b 1 up ) &
flap=$!
pingpong flap-pingpong 180 ibv_rc_pingpong -g 1 -s 65536 -n 6000 -m 1024 ||
	fail "ibv_rc_pingpong while a link goes down and up"
wait $flap
grep iters "$LOGDIR/flap-pingpong.a"
stats=$("$SRNIC" stats a)
grep -E '^(port|peer|striping) ' <<< "$stats"
grep -qE '^striping b .* silenced [1-9]' <<< "$stats" ||
	fail "a did not find b's port 1 silent"
exit 0
