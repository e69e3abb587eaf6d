# UDP/IP encapsulation (encap = udp, docs/wire-protocol.md): a testbed of
# its own (memif, srnicd in each node) whose nodes send every frame in
# IPv4 and UDP.
#  - a capture of a's port 0 around an ib_write_bw: every frame IPv4,
#    its header checksum right, UDP to port 4793 between the two nodes'
#    addresses (HELLOs to the limited broadcast), srnic's headers inside
#    as on raw Ethernet (tests/e2e/capture_check.py udp);
#  - ibv_rc_pingpong -c and srnic_integrity (WRITE, READ and SEND of 1 B
#    to 8 MiB, every byte checked), perftest's READ and SEND bandwidth
#    and WRITE latency: the same results as on raw Ethernet;
#  - neither node counted a frame it could not read (bad_ip, not_ours,
#    malformed, bad_crc, bad_auth: the cluster key's MACs and the CRC
#    read the Ethernet addresses as zero in a UDP node).
# (rdma_cm over it: 19c-rdma-cm-udp.sh.  Damaged IPv4 and UDP headers:
# the unit tests wire_udp and wire_corpus.)
export SRNIC_NS=${SRNIC_NS:-srnic}-u SRNIC_RUN=${SRNIC_RUN:-/run/srnic}-u
. "$(dirname "$0")/../lib.sh"

command -v tshark > /dev/null || { echo "SKIP: tshark not installed (./srnic setup installs it)"; exit 77; }

trap '"$SRNIC" testbed down >/dev/null 2>&1' EXIT
"$SRNIC" testbed down >/dev/null 2>&1
"$SRNIC" testbed up --encap udp --crc yes > "$LOGDIR/47-testbed.log" 2>&1 ||
	{ cat "$LOGDIR/47-testbed.log"; fail "testbed up --encap udp"; }
grep -qx "encap = udp" "$(node_conf a)" || fail "the testbed's nodes are not UDP nodes"
wait_peer a b && wait_peer b a || fail "the UDP nodes did not find each other"

CAPTURE_UDP=1 capture_write udp-capture 6000

pingpong udp-pp 60 ibv_rc_pingpong -g 1 -s 4096 -n 2000 || fail "ibv_rc_pingpong over UDP"
pair udp-integrity 120 "$BUILD/examples/srnic_integrity" || fail "srnic_integrity over UDP"
grep -q ", 0 bad" "$LOGDIR/udp-integrity.a" || fail "srnic_integrity over UDP reported bad data"
grep -h "bad" "$LOGDIR/udp-integrity.a" | tail -1
bw udp-read-bw ib_read_bw -n 1000
bw udp-send-bw ib_send_bw -n 2000 -r 2048
lat udp-write-lat ib_write_lat -n 1000

for n in a b; do
	d=$(counter "$n" "drops.bad_ip drops.not_ours drops.malformed drops.bad_crc drops.bad_auth") ||
		fail "no counters of $n"
	echo "node $n: bad_ip, not_ours, malformed, bad_crc, bad_auth drops: $d"
	[ "$d" = "0 0 0 0 0" ] || fail "node $n could not read frames of the other"
done
exit 0
