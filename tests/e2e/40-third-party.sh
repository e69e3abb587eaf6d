# Third-party RDMA (docs/third-party.md): ./srnic demo third-party on four
# nodes of its own.  b, the controller, has c, the data source, WRITE
# 64 MiB of its region into a's (examples/srnic_3p.c: 64 WRITEs of 1 MiB
# on b's QP to a, naming b's QP to c; a and c post nothing):
#  1. plain: every WRITE a success at b, a's 64 MiB equal to c's pattern
#     byte for byte, and b's ports carried under 1 MiB (the requests and
#     a's ACKs: the data went from c to a);
#  2. 1% loss on every node's rail 0: the same, with repairs seen (b asked
#     c again for what a lacked);
#  3. c's region without the third-party right: every WRITE completes at
#     b with IBV_WC_REM_ACCESS_ERR;
#  4. on the tap wire with srnicd in each node (a testbed of its own
#     then), the target a second process of c's: 16 MiB through c's
#     loopback, no byte wrong.
# (The calls' errors: tests/e2e/srnic_api.c, from 01-devinfo.sh.)
. "$(dirname "$0")/../lib.sh"

export SRNIC_3P_NS=${SRNIC_NS:-srnic}-3p SRNIC_3P_RUN=${SRNIC_RUN:-/run/srnic}-3p
four_nodes "$SRNIC_3P_NS" "$SRNIC_3P_RUN" 3p

# demo NAME ARGS...: the demo's run, its log in $LOGDIR/3p-NAME.log
demo() { demo_log third-party-demo.sh 3p "$@"; }
line() { grep '^third-party: ' "$LOGDIR/3p-$1.log"; }
# whole NAME: 64 MiB, no byte wrong, b's ports under 1 MiB
whole() {
	line "$1" | grep -q "^third-party: 67108864 bytes from c to a ordered by b, 0 wrong, b's ports carried [0-9]* KiB$" &&
		line "$1" | awk '{ exit !($(NF - 1) < 1024) }'
}

demo plain || fail "the demo"
whole plain || fail "the demo's line: $(line plain)"

demo loss --loss 1 || fail "the demo under 1% loss"
whole loss || fail "under loss: $(line loss)"
grep -Eq '^resent: b .*(sack_resent_packets|probes) [1-9]' "$LOGDIR/3p-loss.log" ||
	fail "1% loss, and b asked again for nothing: $(grep '^resent' "$LOGDIR/3p-loss.log")"

demo refused --no-right --size 8M || fail "the demo without the third-party right"
line refused | grep -q '^third-party: refused, remote access error, 8 WRITEs$' ||
	fail "without the right: $(line refused)"

four_nodes "$SRNIC_3P_NS" "$SRNIC_3P_RUN" 3p-tap tap
demo self --target c --size 16M || fail "the demo with the target on c"
line self | grep -q "^third-party: 16777216 bytes from c to c ordered by b, 0 wrong, b's ports carried [0-9]* KiB$" ||
	fail "the target on the source's node: $(line self)"
exit 0
