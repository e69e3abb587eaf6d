# XRC between two nodes, two processes on each (tests/e2e/xrc.c): each
# initiator process on a reaches both target processes on b, one XRC QP
# each, and sends through it to two SRQs of the target's domain; WRITE and
# READ through an SRQ of the region's PD; a WRITE naming an SRQ of another
# PD and a SEND naming no SRQ refused.  Every byte checked on both sides.
# Then ibverbs-utils' own XRC client, ibv_xsrq_pingpong: its SENDs through
# XRC SRQs must all complete on both sides ("success"; it checks counts,
# not bytes, which xrc.c does above).
. "$(dirname "$0")/../lib.sh"

port=18600
pids=()
for s in 0 1; do
	on b 120 -- "$BUILD/tests/e2e/xrc" -s $s -p $port > "$LOGDIR/xrc.b$s" 2>&1 &
	pids+=($!)
done
for s in 0 1; do wait_listen b $((port + 10 * s)) || fail "xrc target $s did not listen"; done
for c in 0 1; do
	on a 120 -- "$BUILD/tests/e2e/xrc" -c $c -p $port b > "$LOGDIR/xrc.a$c" 2>&1 &
	pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
for log in b0 b1 a0 a1; do
	echo "--- $log"
	cat "$LOGDIR/xrc.$log"
	checked "$LOGDIR/xrc.$log" || rc=1
done
[ $rc = 0 ] || fail "xrc"

pair xsrq-pingpong 60 ibv_xsrq_pingpong -g 1 -n 500 || fail "ibv_xsrq_pingpong"
for side in a b; do
	grep -q "^success" "$LOGDIR/xsrq-pingpong.$side" ||
		fail "ibv_xsrq_pingpong ($side) did not say success"
done
echo "ibv_xsrq_pingpong: 500 rounds through XRC SRQs, success on both sides"
exit 0
