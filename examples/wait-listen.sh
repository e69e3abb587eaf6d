# Sourced by tests/lib.sh and by the demos that wait for a server.
#
# wait_listen NODE [PORT]: until a program in NODE (of the testbed
# SRNIC_NS names) listens on a TCP port (PORT, or any: the server of a
# pair is ready for its client), 20 s at most; 1 if none did.  A fixed
# wait is not enough: under load a server's start took longer than 0.5 s,
# and the pingpongs' clients try to connect once (an ibv_uc_pingpong
# client failed so, 1 run in 30 beside two busy loops, and its server
# waited for good).  An rdma_cm port P is TCP port P ^ 0x4000
# (docs/wire-protocol.md): a program served over srnic's rdma_cm on P
# listens there.
wait_listen() {
	local i
	for ((i = 0; i < 400; i++)); do
		ip netns exec "${SRNIC_NS:-srnic}-$1" ss -Hltn 2>/dev/null |
			grep -q "${2:+:$2 }" && return 0
		sleep 0.05
	done
	return 1
}
