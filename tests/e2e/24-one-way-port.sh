# A one-way port: on an afpacket testbed, nothing node b sends on port 1
# arrives (./srnic testbed fault b 1 send_loss=100%), while b still hears a
# there.  When b's process starts, b's BOOTINGs on port 1 never reach a;
# a answers the one on port 0 on both of its ports, so b's port 1 is
# accounted for by an answer that came over it, in the first round or two,
# not after a timeout (src/control/integrate.c).  Both nodes run an
# ibv_rc_pingpong server, which opens the device and waits: only the
# integration runs.
export SRNIC_NS=${SRNIC_NS:-srnic}-w SRNIC_RUN=${SRNIC_RUN:-/run/srnic}-w
. "$(dirname "$0")/../lib.sh"

trap '"$SRNIC" testbed down >/dev/null 2>&1' EXIT
"$SRNIC" testbed down >/dev/null 2>&1
# (the embedded engine, which this test needs: the integration it
# watches runs when b's process, its node, starts)
"$SRNIC" testbed up --wire afpacket >/dev/null || fail "afpacket testbed"
"$SRNIC" testbed fault b 1 send_loss=100% || fail "fault b 1 send_loss=100%"

on a 8 -- ibv_rc_pingpong -g 1 > "$LOGDIR/oneway.a" 2>&1 &
pa=$!
sleep 1
on b 6 -- ibv_rc_pingpong -g 1 > "$LOGDIR/oneway.b" 2>&1 &
pb=$!
ok=""
for _ in $(seq 40); do
	sleep 0.1
	if [ "$(counter b "rdma_in rdma_out" a)" = "yes yes" ]; then
		ok=1; break
	fi
done
kill $pa $pb 2>/dev/null; wait $pa $pb 2>/dev/null
"$SRNIC" stats b | grep -E '^(peer|integration) '
[ -n "$ok" ] || fail "b's integration with a did not complete within 4 s"
# b hears a on both ports, a hears b on port 0 only: the one-way port.
[ "$(counter b ports_up a)" = "0 1" ] || fail "b does not hear a on both ports"
[ "$(counter a ports_up b)" = 0 ] ||
	fail "a hears b on port 1: the link is not one-way"
sent=$(counter b booting_sent)
echo "b sent $sent BOOTINGs (2 a round, one port of which never arrives)"
# The old rule waited ten rounds (20 BOOTINGs) for a one-way port.
[ "${sent:-99}" -le 6 ] || fail "b needed $sent BOOTINGs: the one-way port waited for a timeout"
exit 0
