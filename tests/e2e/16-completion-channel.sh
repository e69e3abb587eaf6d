# Completion channels (srnic's preload library makes the channel that
# libibverbs would ask the kernel for; provider/preload.c, cq.c): programs
# that wait for completions instead of polling for them.
#  - ibv_rc_pingpong -e and ibv_ud_pingpong -e, received bytes checked (-c),
#    legacy and ibv_wr_* posting;
#  - perftest's ib_send_bw -e, and its latency tests with events
#    (ib_send_lat -e, ib_read_lat -e: ib_write_lat takes no -e), which
#    count on a send completing before the answer to it arrives and on
#    arming a CQ raising no event for what it already holds;
#  - every process waits in ibv_get_cq_event: no thread of the program
#    polls, so the datapath is the engine's own thread.
# The refusals (a channel srnic did not make, arming a CQ without one,
# destroying a channel in use) are checked by tests/e2e/verbs_errors.c.
. "$(dirname "$0")/../lib.sh"

pingpong ev-rc-4K 60 ibv_rc_pingpong -g 1 -e -s 4096 -n 2000 || fail "ibv_rc_pingpong -e"
pingpong ev-rc-new-64K 60 ibv_rc_pingpong -g 1 -e -N -s 65536 -n 300 || fail "ibv_rc_pingpong -e -N"
pingpong ev-ud 60 ibv_ud_pingpong -g 1 -e -s 1024 -n 1000 || fail "ibv_ud_pingpong -e"
for side in a b; do
	grep -h "iters in" "$LOGDIR/ev-rc-4K.$side"
done
bw ev-send-bw ib_send_bw -e -n 3000
lat ev-send-lat ib_send_lat -e -n 2000
lat ev-read-lat ib_read_lat -e -n 2000
exit 0
