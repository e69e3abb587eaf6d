# Conditional RDMA (docs/conditional-rdma.md): ./srnic demo conditional
# on four nodes of its own.  a posts a WRITE with immediate to d,
# conditional on a queue counting 128 successes, then 64 WRITEs each to b
# and c as the queue's components (examples/srnic_cond.c):
#  1. plain: the signal lands at d once, after a's last component
#     completed (its CQE's time against d's), and within 50 ms of it (a
#     bound only on a missed wake, which would wait for a timer or a
#     retry; the latency itself is docs/performance.md's), with 128 of
#     128 counted and b's and c's bytes right;
#  2. 1% loss on every node's rail 0: the same, once, with resends seen;
#  3. the last WRITE to c with a key that is none: the condition never
#     holds, nothing reaches d, and destroying the queue completes the
#     signal flushed.
# (The calls' errors: tests/e2e/srnic_api.c, from 01-devinfo.sh.)
. "$(dirname "$0")/../lib.sh"

export SRNIC_COND_NS=${SRNIC_NS:-srnic}-cond SRNIC_COND_RUN=${SRNIC_RUN:-/run/srnic}-cond
four_nodes "$SRNIC_COND_NS" "$SRNIC_COND_RUN" cond

# demo NAME ARGS...: the demo's run, its log in $LOGDIR/cond-NAME.log
demo() { demo_log conditional-demo.sh cond "$@"; }
line() { grep '^conditional: ' "$LOGDIR/cond-$1.log"; }
# fired NAME: the line says once, 128 of 128, and a latency of 0-50 ms
fired() {
	line "$1" | grep -q '^conditional: fired after 128 of 128 components, once, ' &&
		line "$1" | awk '{ l = $(NF - 5) + 0; exit !(l >= 0 && l <= 50000) }' &&
		grep -q '^target bytes wrong: 0; signal after the components$' "$LOGDIR/cond-$1.log"
}

demo plain || fail "the demo"
fired plain || fail "the demo's line: $(line plain)"

demo loss --loss 1 || fail "the demo under 1% loss"
fired loss || fail "under loss: $(line loss)"
grep -Eq '^a resent: .*sack_resent_packets [1-9]' "$LOGDIR/cond-loss.log" ||
	grep -Eq '^a resent: retransmits [1-9]' "$LOGDIR/cond-loss.log" ||
	fail "1% loss, and a resent nothing: $(grep '^a resent' "$LOGDIR/cond-loss.log")"

demo fail --fail || fail "the demo with a failed component"
line fail | grep -q '^conditional: not fired, 127 of 128 components, 1 failed, flushed$' ||
	fail "a failed component: $(line fail)"
exit 0
