# srnic across routers in IPv6: 48-routed.sh's first parts on a testbed
# of its own, ./srnic testbed up --routed --ipv6, whose two nodes are
# fd00:56:0::2/64 and fd00:56:1::2/64 (configuration lines "ipv6", "route
# = default via fd00:56:I::1", "peer = fd00:56:K::2") behind two routers
# joined by two equal-cost IPv6 paths, srnicd in each node:
#  - the nodes find each other through the routers (HELLOs to each
#    configured peer), and a learns its router's Ethernet address by
#    neighbour discovery (nd_learned, or arp_learned where the node counts
#    both in one), while answering the router's solicitations for its own
#    address (the router's neighbour entry is a's port's MAC);
#  - each node hears all 8 of the other's paths (paths_ok 255);
#  - a capture of a's rail around a transfer (ib_write_bw -x 1: GID 1, the
#    node's IPv6 address): every frame to b goes to the router's Ethernet
#    address, every frame from b comes from it, the IPv6 addresses the
#    nodes'; every frame checked against the transfer (capture_check.py,
#    IPv6: srnic's headers behind the 4-byte shim); one QP's WRITEs on all
#    8 paths (UDP source ports);
#  - ibv_rc_pingpong -g 1 -c, srnic_integrity -g 1 (WRITE, READ and SEND of
#    1 B to 8 MiB, every byte checked), ib_write_bw, ib_read_bw and
#    ib_send_bw -x 1, rping -V to b's IPv6 address (rdma_cm, every READ
#    compared) across the routers;
#  - neither node counted a damaged frame (bad_ip, malformed, bad_crc,
#    bad_auth).
# perftest's and rdma_cm's own TCP goes over ctl0 as on 48's testbed:
# perftest's to the node's name (its IPv4 address there), rping's to the
# IPv6 address, which ctl0 has too.
export SRNIC_NS=${SRNIC_NS:-srnic}-r6 SRNIC_RUN=${SRNIC_RUN:-/run/srnic}-r6
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/routed.bash"

for t in tshark dumpcap ib_write_bw ibv_rc_pingpong rping; do
	command -v $t > /dev/null || { echo "SKIP: $t not installed (./srnic setup installs it)"; exit 77; }
done
[ -e /proc/sys/net/ipv6 ] || { echo "SKIP: this kernel has no IPv6"; exit 77; }

trap '"$SRNIC" testbed down >/dev/null 2>&1' EXIT
"$SRNIC" testbed down >/dev/null 2>&1
"$SRNIC" testbed up --routed --ipv6 > "$LOGDIR/48b-testbed.log" 2>&1 ||
	{ cat "$LOGDIR/48b-testbed.log"; fail "testbed up --routed --ipv6"; }
cat "$LOGDIR/48b-testbed.log"
grep -q "routed in IPv6" "$LOGDIR/48b-testbed.log" || fail "testbed up did not say IPv6"
R0=$SRNIC_NS-r0
# (./srnic's ROUTED_PREFIX6 and a's router, written as tshark writes
# them, as routed.bash needs: fd00:56:0::2 is fd00:56::2)
A=fd00:56::2 B=fd00:56:1::2 RA=fd00:56::1
wait_peer a b 0 && wait_peer b a 0 || fail "the nodes did not find each other across the routers"
echo "a and b found each other across the routers"

# Neighbour discovery both ways: a learned its router, the router a's
# port.  (nd_learned: the count of next hops learned in IPv6; a node that
# counts ARP's and ND's in one says arp_learned.)
learned=nd_learned
counter a nd_learned > /dev/null || learned=arp_learned
[ "$(counter a $learned)" -ge 1 ] || fail "a learned no next hop ($learned): $(counter a $learned)"
rmac=$(ip -n "$R0" -br link show n-a | awk '{print $3}')
amac=$(conf_value "$(node_conf a)" port | sed -n 's/.*mac=\([0-9a-f:]*\).*/\1/p')
ip -n "$R0" -6 neigh show "$A" | grep -q "lladdr $amac" ||
	fail "the router's neighbour entry for a is not a's port ($amac): $(ip -n "$R0" -6 neigh show "$A")"
echo "a's router is $rmac ($learned $(counter a $learned)); the router has a at $amac"

# Each node hears all 8 of the other's paths (before the capture below,
# whose WRITEs must use them all).
all_paths_heard
echo "each node hears the other's 8 paths"

# A capture of a's rail around a transfer ($pcap).
rail_capture routed6 -x 1 -n 2000 -s 65536
rail_frames "$pcap" "$amac" "$rmac" "$A" "$B"
# (every frame: IPv6 and UDP between the nodes or to ff02::1, srnic's
# headers those of the transfer)
python3 "$ROOT/tests/e2e/capture_check.py" "$ROOT/tools/wireshark/srnic.lua" \
	"$pcap" "$LOGDIR/routed6-cap-bw.a" 65536 udp "$A" "$B" "$RA" ||
	fail "the capture of a's rail does not match the transfer"
# ... and every one of the 8 source ports among one QP's WRITEs
eight_paths "$pcap" "$B"

# GID 1, the node's IPv6 address, for every program that names a GID.
pingpong routed6-pp 60 ibv_rc_pingpong -g 1 -s 4096 -n 2000 || fail "ibv_rc_pingpong -g 1 -c across the routers"
pair routed6-integrity 120 "$BUILD/examples/srnic_integrity" -g 1 || fail "srnic_integrity across the routers"
grep -q ", 0 bad" "$LOGDIR/routed6-integrity.a" || fail "srnic_integrity across the routers reported bad data"
grep -h "bad" "$LOGDIR/routed6-integrity.a" | tail -1
bw routed6-write-bw ib_write_bw -x 1 -n 2000 -s 65536
bw routed6-read-bw ib_read_bw -x 1 -n 1000
bw routed6-send-bw ib_send_bw -x 1 -n 2000 -r 2048

# rping -V to b's IPv6 address, the server bound to it (rdma_cm's TCP
# on ctl0, which has the address too).
rping_checked routed6-rping "$B" "$B"

no_damage
exit 0
