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
# them: fd00:56:0::2 is fd00:56::2)
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
paths_ok() { counter "$1" paths_ok "$([ "$1" = a ] && echo b || echo a)"; }
for _ in $(seq 100); do [ "$(paths_ok a)" = 255 ] && [ "$(paths_ok b)" = 255 ] && break; sleep 0.1; done
[ "$(paths_ok a)" = 255 ] && [ "$(paths_ok b)" = 255 ] ||
	fail "the nodes do not hear each other on every path: a $(paths_ok a), b $(paths_ok b)"
echo "each node hears the other's 8 paths"

# A capture of a's rail around a transfer.
pcap=$LOGDIR/routed6.pcap
rm -f "$pcap"
ip netns exec "$SRNIC_NS-a" timeout 60 dumpcap -q -i rail0 -c 3000 -f "udp port 4793" -w "$pcap" > "$LOGDIR/routed6-cap.log" 2>&1 &
cap=$!
for _ in $(seq 100); do [ -s "$pcap" ] && break; sleep 0.05; done
pair routed6-cap-bw 90 ib_write_bw -x 1 -n 2000 -s 65536 || fail "ib_write_bw -x 1 across the routers"
wait $cap || { cat "$LOGDIR/routed6-cap.log"; fail "dumpcap on a's rail"; }
tshark -r "$pcap" -T fields -E occurrence=f -e eth.src -e eth.dst -e ipv6.src -e ipv6.dst 2>/dev/null |
	awk -v a="$amac" -v r="$rmac" -v A="$A" -v B="$B" '
		$3 == A && $4 == B { out++; if ($1 != a || $2 != r) bad++; next }
		$3 == B && $4 == A { in_++; if ($1 != r || $2 != a) bad++; next }
		{ other++ }
		END { printf "%d frames to b, %d from b, %d others, %d with other Ethernet addresses\n", out, in_, other, bad
		      exit !(out > 1000 && in_ > 10 && !bad) }' ||
	fail "the capture of a's rail: not every frame went to the router, or came from it"
# (every frame: IPv6 and UDP between the nodes or to ff02::1, srnic's
# headers those of the transfer)
python3 "$ROOT/tests/e2e/capture_check.py" "$ROOT/tools/wireshark/srnic.lua" \
	"$pcap" "$LOGDIR/routed6-cap-bw.a" 65536 udp "$A" "$B" "$RA" ||
	fail "the capture of a's rail does not match the transfer"
# ... and every one of the 8 source ports among one QP's WRITEs (HELLOs,
# which probe every path, left out)
ports=$(tshark -X lua_script:"$ROOT/tools/wireshark/srnic.lua" -r "$pcap" -T fields \
	-E occurrence=f -e ipv6.dst -e udp.srcport -e srnic.opcode 2>/dev/null |
	awk -v B="$B" '$1 == B && $3 == 2 {print $2}' | sort -u | tr '\n' ' ')
echo "source ports of a's frames to b: $ports"
[ "$(echo $ports | wc -w)" = 8 ] || fail "a's frames to b did not use the 8 paths: $ports"

# GID 1, the node's IPv6 address, for every program that names a GID.
pingpong routed6-pp 60 ibv_rc_pingpong -g 1 -s 4096 -n 2000 || fail "ibv_rc_pingpong -g 1 -c across the routers"
pair routed6-integrity 120 "$BUILD/examples/srnic_integrity" -g 1 || fail "srnic_integrity across the routers"
grep -q ", 0 bad" "$LOGDIR/routed6-integrity.a" || fail "srnic_integrity across the routers reported bad data"
grep -h "bad" "$LOGDIR/routed6-integrity.a" | tail -1
bw routed6-write-bw ib_write_bw -x 1 -n 2000 -s 65536
bw routed6-read-bw ib_read_bw -x 1 -n 1000
bw routed6-send-bw ib_send_bw -x 1 -n 2000 -r 2048

# rping -V to b's IPv6 address: every RDMA READ's data compared with what
# was sent (rdma_cm's TCP on ctl0, which has the address too).
timeout -k 5 60 "$SRNIC" exec b -- rping -s -V -C 200 -S 4096 -a "$B" -p 7174 > "$LOGDIR/routed6-rping.b" 2>&1 &
srv=$!
wait_listen b $((7174 ^ 0x4000)) || echo "--- rping's server never listened" >&2
on a 60 -- rping -c -V -C 200 -S 4096 -a "$B" -p 7174 > "$LOGDIR/routed6-rping.a" 2>&1 ||
	{ tail -5 "$LOGDIR/routed6-rping.a"; fail "rping -V across the routers (client)"; }
wait $srv || { tail -5 "$LOGDIR/routed6-rping.b"; fail "rping -V across the routers (server)"; }
grep -q "data mismatch" "$LOGDIR"/routed6-rping.* && fail "rping: data mismatch"
echo "rping -V to $B: 200 pings"

for n in a b; do
	d=$(counter "$n" "drops.bad_ip drops.malformed drops.bad_crc drops.bad_auth") ||
		fail "no counters of $n"
	echo "node $n: bad_ip, malformed, bad_crc, bad_auth drops: $d; unresolved $(counter "$n" drops.unresolved)"
	[ "$d" = "0 0 0 0" ] || fail "node $n could not read frames of the other"
done
exit 0
