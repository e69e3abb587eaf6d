# qperf (Debian's 0.4.11, unmodified) over srnic0: its RC tests connect
# with rdma_cm (-cm1: qperf addresses an RC peer by LID otherwise, which
# an Ethernet port does not have) and poll (-cp1) or wait on completion
# channels (the default).  The atomics' verify tests (ver_rc_*) check
# every value the atomics return (a mismatch ends qperf with an error).
# qperf's UC and UD tests take the peer by LID alone, with no rdma_cm
# (it refuses -cm1 for them): they cannot run on RoCE, srnic's or any
# other (the README lists what does not run, and why).
# The server's child for each RC test ends in a segfault, after the
# results are exchanged: qperf 0.4.11's cm_close destroys the QP of its
# listening rdma_cm id, which has none (gdb: rdma_destroy_qp ->
# ibv_destroy_qp(NULL); the kernel logs "qperf[...]: segfault ... in
# libibverbs"), on any device.  The client never sees it.
. "$(dirname "$0")/../lib.sh"

command -v qperf > /dev/null || { echo "SKIP: qperf not installed (./srnic setup installs it)"; exit 77; }

# The server on b serves one test after another until stopped.
timeout -k 5 240 "$SRNIC" exec b -- qperf > "$LOGDIR/qperf.b" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
wait_listen b 19765 || fail "qperf's server never listened"

# said LOG: what a qperf that failed said of it, on the one line that
# ends the test's output (the line CI's summary keeps)
said() {
	grep -m 1 -iE "error|fail|exceeded|terminated|killed" "$1" ||
		tail -n 1 "$1"
}

run() {	# TEST [OPTIONS]: one qperf test, its result line required
	local t=$1
	shift
	on a 60 -- qperf -cm1 -t 2 "$@" 10.55.0.2 "$t" > "$LOGDIR/qperf-$t.a" 2>&1 ||
		{ programs_failed "$LOGDIR/qperf-$t.a" "$LOGDIR/qperf.b"
		  fail "qperf $t $*: $(said "$LOGDIR/qperf-$t.a")"; }
	grep -Eq "(bw|latency|msg_rate) += +[0-9.]+ " "$LOGDIR/qperf-$t.a" ||
		{ cat "$LOGDIR/qperf-$t.a" >&2; fail "qperf $t: no result"; }
	echo "$t $*: $(grep -E ' = ' "$LOGDIR/qperf-$t.a" | tr -s ' ' | tr '\n' ' ')"
}

run rc_bw
run rc_lat
run rc_lat -cp1
run rc_bi_bw
run rc_rdma_write_bw
run rc_rdma_write_lat -cp1
run rc_rdma_read_bw
run rc_rdma_read_lat -cp1
run rc_compare_swap_mr
run rc_fetch_add_mr
run ver_rc_compare_swap
run ver_rc_fetch_add

# UC and UD: qperf asks for a LID-addressed path, which srnic (an
# Ethernet port) refuses as RoCE devices do.  Checked, so that the day
# qperf or srnic changes, this test says so.
on a 60 -- qperf -t 1 10.55.0.2 uc_bw > "$LOGDIR/qperf-uc_bw.a" 2>&1 &&
	fail "qperf uc_bw ran: update this test and the README"
grep -q "failed to modify QP to RTR" "$LOGDIR/qperf-uc_bw.a" ||
	{ cat "$LOGDIR/qperf-uc_bw.a" >&2; fail "qperf uc_bw failed otherwise"; }
echo "uc_bw, ud_bw: not on RoCE (qperf addresses UC and UD peers by LID)"
exit 0
