# A client's RC QP to a service lives through the holder's death and
# return (docs/failover.md): ./srnic demo failover, three afpacket nodes of
# its own (a the client, b and c members with QPs of the service's slot 0
# parked, tests/e2e/svc_check.c).
#  1. b killed at 30%, back at 60% (failback=auto): every request answered,
#     duplicates only within the last window (64, and one for each
#     request the client sent again), the QP never failed
#     (its WRITEs to the service's region, whose key is the same on both
#     members, among its WQEs), the takeover within 1 s, the answers
#     coming from b, c, then b; datagrams to the service (a ping every ms)
#     lost only around the takeovers.
#  2. svc_dead_ms = 50: the takeover within 250 ms, while a station on a's
#     rail replays an SVC_ANNOUNCE b sent as holder every 2 ms for a second
#     after b's death (issue 32, 8: taken, it would keep b the holder at c
#     that second), and the replays are refused (a counts them svc_stale).
#  3. failback=expire: b back leaves the service with c while the client's
#     connection lasts, and takes it once the client has said goodbye.
#  3b. failback=manual: b back waits; c's program, asked to, freezes its
#     QP (srnic_svc_freeze), answers what it took and hands the service
#     over (srnic_svc_handover): b takes it at once, holders b c b,
#     nothing lost, and b's log says it took it at the handover.
# The clients send to web's group address: c, standing by, hears the
# holder's frames and drops them.
#  4. b's links cut for 1 s instead (a partition, both modes): the same
#     checks, the takeover within 1 s, and one holder (b) once it healed.
#  5. Switch mode: ./srnic fabric points web's own address at the
#     holder's port on every rail; the same checks as 1, c hears next to
#     none of the holder's frames, and at the end the address leads to
#     b's port.
. "$(dirname "$0")/../lib.sh"

export SRNIC_FO_NS=${SRNIC_NS:-srnic}-fo SRNIC_FO_RUN=${SRNIC_RUN:-/run/srnic}-fo

# demo NAME ARGS...: the demo's run, its log in $LOGDIR/fo-NAME.log
demo() { demo_log failover-demo.sh fo "$@"; }
line() { grep '^failover: .*takeover' "$LOGDIR/fo-$1.log"; }
# check NAME MAX_TAKEOVER_MS HOLDERS
check() {
	local l dups again t
	l=$(line "$1") || fail "$1: no summary line"
	echo "$l" | grep -q ', 0 lost,' || fail "$1: requests lost: $l"
	dups=$(echo "$l" | sed -n 's/.* \([0-9]*\) duplicates.*/\1/p')
	# (one window of the old holder's, and one for each request the
	# client's program sent again: its answer may come twice)
	again=$(sed -n 's/^failover: .*, \([0-9]*\) sent again$/\1/p' "$LOGDIR/fo-$1.log")
	[ "${dups:-99999}" -le $((64 + ${again:-0})) ] ||
		fail "$1: $dups duplicates, over one window and the ${again:-0} requests sent again"
	t=$(echo "$l" | sed -n 's/.*takeover \([0-9]*\) ms.*/\1/p')
	[ -n "$t" ] && [ "$t" -le "$2" ] || fail "$1: takeover ${t:-?} ms, over $2 ms"
	grep -Eq "holders $3[ ,]" "$LOGDIR/fo-$1.log" || fail "$1: the answers did not come from $3"
	grep -q '^qp: RTS, 0 completions in error, [1-9][0-9]* WRITEs' "$LOGDIR/fo-$1.log" ||
		fail "$1: the client's QP failed, or no WRITE to the service's key"
	grep -Eq '^ud: [1-9][0-9]* pings, [0-9]+ lost, 0 of them outside' "$LOGDIR/fo-$1.log" ||
		fail "$1: datagrams to the service lost outside the takeovers"
	grep -Eq '^ud: .*, 0 pongs not from' "$LOGDIR/fo-$1.log" ||
		fail "$1: a member answered a datagram from its own address, not the service's"
}

# (b's return, at 60%, takes it about 1.5 s to claim the service back: a
# quiet machine ran 60000 requests in 3 s and ended the run before it, 2
# runs in 3; 150000 leave it 3 s there, and more where the run is slower)
demo auto --requests 150000 || fail "the demo"
check auto 1000 "b c b"
heard=$(sed -n "s/^frames for web's holder that c heard and dropped: \([0-9]*\)$/\1/p" "$LOGDIR/fo-auto.log")
[ "${heard:-0}" -gt 0 ] || fail "auto: c heard none of the holder's frames (not sent to web's group address?)"
demo switch --requests 150000 --mode switch || fail "the demo, switch mode"
check switch 1000 "b c b"
heard=$(sed -n "s/^frames for web's holder that c heard and dropped: \([0-9]*\)$/\1/p" "$LOGDIR/fo-switch.log")
[ "${heard:-99999}" -lt 1000 ] || fail "switch: c heard $heard of the holder's frames (the fabric should send them to the holder's port alone)"
grep -q "^web's address on rail 0: r0-b$" "$LOGDIR/fo-switch.log" ||
	fail "switch: web's address does not lead to b's port at the end"
for m in group switch; do
	# (once reported, not failed: at 82de491 the client's requests went
	# unanswered after the heal, 3 runs in 3; none lost in any run since
	# the services' mends of issue 32, and checked in full again)
	demo cut-$m --requests 60000 --cut --mode $m || fail "the demo, b's links cut ($m mode)"
	check cut-$m 1000 "b c"
	[ "$(grep -c "^after the client's goodbye: b holder, c standby$" "$LOGDIR/fo-cut-$m.log")" = 1 ] ||
		fail "cut-$m: not one holder after the partition healed"
done
demo tuned --requests 40000 --svc-dead-ms 50 --replay || fail "the demo, svc_dead_ms 50, replayed announcements"
# (b's return may come after the last request: a quick takeover leaves
# less of the run; what this run is for is the takeover)
check tuned 250 "b c"
# (the replays refused: a, which hears every one, counts them stale.  c
# does too when the captured frame is b's; one CI run, c 0 and b's new
# process 112, looked as if the frame had been c's own, which c ignores:
# the takeover bound above is what says c was not fooled)
stale=$(sed -n 's/^a: .* svc_stale \([0-9]*\).*/\1/p' "$LOGDIR/fo-tuned.log")
[ "${stale:-0}" -gt 0 ] || fail "tuned: a counted no stale announcement (svc_stale) of the replayed ones"
demo expire --requests 40000 --failback expire || fail "the demo, failback=expire"
check expire 1000 "b c"
grep -q "holders b c," "$LOGDIR/fo-expire.log" || fail "expire: b took the service back"
grep -q "^after the client's goodbye: b holder, c standby$" "$LOGDIR/fo-expire.log" ||
	fail "expire: b did not take the service back once the connection closed"
demo manual --requests 150000 --failback manual || fail "the demo, failback=manual"
check manual 1000 "b c b"
grep -Eq "^frozen: [1-9][0-9]* QPs$" "$LOGDIR/fo-manual.log" || fail "manual: c's program froze no QP"
grep -Eq "^c:.* drop svc_frozen [1-9]" "$LOGDIR/fo-manual.log" ||
	fail "manual: c dropped no request to its frozen QP (the resend to b untested)"
grep -q "^handed over: ok" "$LOGDIR/fo-manual.log" || fail "manual: c's program did not hand web over"
grep -q "holding it, .*(the holder handed it over)" "$LOGDIR/fo-manual.log" ||
	fail "manual: b did not take web at the handover"
exit 0
