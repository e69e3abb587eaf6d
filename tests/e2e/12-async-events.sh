# Async events through the context's async fd (tests/e2e/async_events.c),
# on an afpacket testbed of its own:
#  - the peer process on b is killed and started again: the watcher's QP,
#    bound to the dead process, fails with IBV_EVENT_QP_FATAL;
#  - both of a's links go down: IBV_EVENT_PORT_ERR; one comes back:
#    IBV_EVENT_PORT_ACTIVE.
. "$(dirname "$0")/../lib.sh"

export SRNIC_NS=${SRNIC_NS:-srnic}-e SRNIC_RUN=${SRNIC_RUN:-/run/srnic}-e
trap '"$SRNIC" testbed down >/dev/null 2>&1' EXIT
"$SRNIC" testbed down >/dev/null 2>&1
# (the embedded engine, which this test needs: the peer process is its
# node, whose restart fails the watcher's QP with QP_FATAL)
"$SRNIC" testbed up --wire afpacket >/dev/null || fail "testbed"
prog=$BUILD/tests/e2e/async_events
log=$LOGDIR/async-events.a

# wait_line SECS FILE REGEX
wait_line() {
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		grep -Eq "$3" "$2" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# the pid of our program in node b's namespace
peer_pid() {
	local p
	for p in $(ip netns pids "$SRNIC_NS-b" 2>/dev/null); do
		tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null |
			grep -q "^$prog" && echo "$p"
	done
}

on b 120 -- "$prog" > "$LOGDIR/async-events.b1" 2>&1 &
sleep 0.5
on a 120 -- "$prog" b > "$log" 2>&1 &
watcher=$!
wait_line 30 "$log" '^connected$' || { cat "$log"; fail "the watcher did not connect"; }

pid=$(peer_pid)
[ -n "$pid" ] || fail "no peer process on b"
kill -9 $pid
on b 120 -- "$prog" > "$LOGDIR/async-events.b2" 2>&1 &
wait_line 30 "$log" 'QP_FATAL .*\(ours\)' || { cat "$log"; fail "no QP_FATAL for the QP of the dead peer"; }

"$SRNIC" testbed fault a 0 down && "$SRNIC" testbed fault a 1 down || fail "links down"
wait_line 20 "$log" '^event PORT_ERR port 1$' || { cat "$log"; fail "no PORT_ERR"; }
"$SRNIC" testbed fault a 1 up || fail "link up"
wait $watcher || { cat "$log"; fail "the watcher saw not every event"; }
cat "$log"
"$SRNIC" testbed fault a 0 up
kill -9 $(peer_pid) 2>/dev/null
exit 0
