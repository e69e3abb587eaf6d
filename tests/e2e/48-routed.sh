# srnic across routers (encap = udp, docs/wire-protocol.md "Across
# routers"): a testbed of its own, ./srnic testbed up --routed, whose two
# nodes are in subnets of their own (10.56.0.0/24, 10.56.1.0/24) behind
# two routers joined by two equal-cost paths, srnicd in each node:
#  - the nodes find each other through the routers (HELLOs sent to each
#    configured peer, integration), and each learns its router's Ethernet
#    address by ARP (arp_learned), while answering the router's ARP for
#    its own address (the router's neighbour entry is the port's MAC);
#  - a capture of a's rail around a transfer: every frame to b goes to
#    the router's Ethernet address, every frame from b comes from it, the
#    IPv4 addresses the nodes' (capture on the rail, tshark);
#  - ibv_rc_pingpong -c, srnic_integrity (WRITE, READ and SEND of 1 B to
#    8 MiB, every byte checked), ib_write_bw, ib_read_bw, ib_send_bw,
#    rping -V (rdma_cm, every READ compared), udaddy (UD over rdma_cm,
#    each datagram answered by its GRH's address), UCX's io_demo over its
#    rdmacm manager (-q: data checked), ucx_perftest (UCT put_lat, UCP
#    tag_bw; UCX on GID 1, the routed address) and Open MPI over UCX
#    (mpi_check, every word checked) across the routers;
#  - one QP's WRITEs go on all 8 paths (UDP source ports, in the
#    capture) and over both links (which the routers' hash, seeded at
#    boot, picks for each: the link cases say SKIP on a boot that puts
#    all 8 on one); each node hears all 8 of the other's;
#  - path 0 drops everything mid-pingpong (-c): b's HELLOs say which of
#    a's paths it still hears, and a capture shows a's frames (HELLOs
#    aside) only on those; the pingpong ends with good data and no QP
#    fails; the path back, a uses it again;
#  - 10% loss on link 0 during ib_write_bw: b's HELLOs report each path's
#    loss (numbered frames), and a weighs every path the routers hash onto
#    link 0 below every path on link 1; the loss gone, every weight comes
#    back;
#  - 1% loss on one path: ib_write_bw keeps at least half the goodput of
#    a clean run (measured: 82%);
#  - the router's port toward a moves to another Ethernet address while a
#    pingpong runs (it says so by ARP, as a router does): a learns it and
#    the pingpong ends with good data;
#  - neither node counted a damaged frame (bad_ip, malformed, bad_crc,
#    bad_auth);
#  - four nodes, two behind each router: a finds the three others, and a
#    pingpong (-c) goes from a to c (one router) and to d (both).
# With ROUTED_FAMILY=ipv6 (e2e/48b) the same in IPv6: ./srnic testbed up
# --routed --ipv6 (fd00:56:I::2/64), next hops by neighbour discovery
# (which a node counts as ARP), GID 1 the node's IPv6 address for every
# program that names a GID (perftest's -x 1), rping to b's IPv6 address
# (not io_demo, which takes IPv4 alone: UCX by ucx_perftest and MPI),
# the router's move said by an unsolicited advertisement
# (ndisc_notify), MLD reports of a's solicited-node group that a snooping
# bridge with a querier keeps; and every frame of the rail's capture checked against
# the transfer (capture_check.py, srnic's headers behind the shim).
ROUTED_FAMILY=${ROUTED_FAMILY:-ipv4}
if [ "$ROUTED_FAMILY" = ipv6 ]; then
	export SRNIC_NS=${SRNIC_NS:-srnic}-r6 SRNIC_RUN=${SRNIC_RUN:-/run/srnic}-r6
	V6=yes
	# (as tshark writes them: fd00:56:0::2 is fd00:56::2)
	A=fd00:56::2 B=fd00:56:1::2 RA=fd00:56::1
	UP_ARGS=(--routed --ipv6) GIDX=(-x 1) RPING_BIND=$B
else
	export SRNIC_NS=${SRNIC_NS:-srnic}-r SRNIC_RUN=${SRNIC_RUN:-/run/srnic}-r
	V6=""
	A=10.56.0.2 B=10.56.1.2 RA=10.56.0.1
	UP_ARGS=(--routed) GIDX=() RPING_BIND=0.0.0.0
fi
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/routed.bash"
[ -z "$V6" ] || [ -e /proc/sys/net/ipv6 ] || { echo "SKIP: this kernel has no IPv6"; exit 77; }

command -v tshark > /dev/null || { echo "SKIP: tshark not installed (./srnic setup installs it)"; exit 77; }

trap '"$SRNIC" testbed down >/dev/null 2>&1' EXIT
"$SRNIC" testbed down >/dev/null 2>&1
"$SRNIC" testbed up "${UP_ARGS[@]}" > "$LOGDIR/48-testbed.log" 2>&1 ||
	{ cat "$LOGDIR/48-testbed.log"; fail "testbed up ${UP_ARGS[*]}"; }
cat "$LOGDIR/48-testbed.log"
[ -z "$V6" ] || grep -q "routed in IPv6" "$LOGDIR/48-testbed.log" || fail "testbed up did not say IPv6"
R0=$SRNIC_NS-r0
wait_peer a b 0 && wait_peer b a 0 || fail "the nodes did not find each other across the routers"
echo "a and b found each other across the routers"

# ARP both ways: a learned its router, the router a's port.
[ "$(counter a arp_learned)" -ge 1 ] || fail "a learned no next hop: $(counter_text a | grep arp)"
rmac=$(ip -n "$R0" -br link show n-a | awk '{print $3}')
amac=$(conf_value "$(node_conf a)" port | sed -n 's/.*mac=\([0-9a-f:]*\).*/\1/p')
ip -n "$R0" neigh show "$A" | grep -q "lladdr $amac" ||
	fail "the router's neighbour entry for a is not a's port ($amac): $(ip -n "$R0" neigh show "$A")"
echo "a's router is $rmac; the router has a at $amac"

# MLD (IPv6): a switch that snoops it passes a group's frames only to the
# ports that reported the group, so a reports its solicited-node group
# (where the router's solicitations for a go) as it starts and answers a
# querier (control/mld.c).  The bridge between a's port and its router
# snoops (Linux's default): it holds a's report on a's port; made a
# querier that asks every second and wants answers within half of one
# (which also makes a membership lapse in 2.5 s unanswered), it still
# holds it 5 s on, a having answered; and the router, its entry for a
# deleted, solicits a at that group, which the bridge passes to a (a
# answers it: arp_answered) while a pingpong from b runs; and an MLDv1
# querier is answered in MLDv1 (a capture of a's rail).
if [ -n "$V6" ]; then
	grp=ff02::1:ff00:2	# (of fd00:56::2: its last 24 bits)
	mdb() { bridge -n "$SRNIC_NS-a" mdb show dev br0; }
	mdb | grep -q "port tap0 grp $grp " ||
		fail "a's bridge holds no report of $grp on a's port: $(mdb)"
	q0=$(counter a mld_queries) r0=$(counter a mld_reports)
	[ "$r0" -ge 1 ] || fail "a sent no MLD report"
	ip -n "$SRNIC_NS-a" link set br0 type bridge mcast_querier 1 \
		mcast_mld_version 2 mcast_query_interval 100 \
		mcast_startup_query_interval 100 \
		mcast_query_response_interval 50 || fail "a's bridge: no querier"
	sleep 5
	q1=$(counter a mld_queries) r1=$(counter a mld_reports)
	echo "MLD: a reported $grp as it started ($r0 reports); a querier asked $((q1 - q0)) times in 5 s, a answered $((r1 - r0))"
	[ $((q1 - q0)) -ge 3 ] && [ $((r1 - r0)) -ge 3 ] ||
		fail "a did not answer the querier: queries $q0 to $q1, reports $r0 to $r1"
	mdb | grep -q "port tap0 grp $grp " ||
		fail "a's membership of $grp lapsed under a querier: $(mdb)"
	ans0=$(counter a arp_answered)
	ip -n "$R0" -6 neigh del "$A" dev n-a || fail "the router's entry for a: not deleted"
	pingpong routed-mld-pp 60 ibv_rc_pingpong -g 1 -n 200 ||
		fail "pingpong with the router's entry for a gone, behind a snooping bridge"
	[ "$(counter a arp_answered)" -gt "$ans0" ] ||
		fail "the router's solicitation for a did not reach a through the snooping bridge"
	ip -n "$R0" neigh show "$A" | grep -q "lladdr $amac" ||
		fail "the router did not learn a again: $(ip -n "$R0" neigh show "$A")"
	echo "MLD: the router's solicitation for a passed the snooping bridge; a pingpong from b after its entry went: good data"
	# (an MLDv1 querier is answered in MLDv1, all it reads: RFC 3810 8.2)
	ip -n "$SRNIC_NS-a" link set br0 type bridge mcast_mld_version 1 ||
		fail "a's bridge: no MLDv1 querier"
	v1cap=$LOGDIR/routed-mld1.pcap
	rm -f "$v1cap"
	ip netns exec "$SRNIC_NS-a" timeout 10 dumpcap -q -i rail0 -a duration:4 \
		-f "ip6 proto 0" -w "$v1cap" > /dev/null 2>&1 || true
	v1=$(tshark -r "$v1cap" -Y "icmpv6.type == 131 && eth.src == $amac" 2>/dev/null | wc -l)
	v2=$(tshark -r "$v1cap" -Y "icmpv6.type == 143 && eth.src == $amac" 2>/dev/null | wc -l)
	echo "MLD: under an MLDv1 querier, a sent $v1 MLDv1 reports and $v2 MLDv2 ones in 4 s"
	[ "$v1" -ge 2 ] && [ "$v2" = 0 ] ||
		fail "a did not answer an MLDv1 querier in MLDv1 ($v1 MLDv1, $v2 MLDv2 reports)"
	ip -n "$SRNIC_NS-a" link set br0 type bridge mcast_querier 0
fi

# Each node hears all 8 of the other's paths (before the capture below,
# whose WRITEs must use them all).
tx() { ip -n "$R0" -s -j link show "$1" | python3 -c "import json,sys; print(json.load(sys.stdin)[0]['stats64']['tx']['packets'])"; }
all_paths_heard

# A capture of a's rail around a transfer ($pcap).
rail_capture routed "${GIDX[@]}" -n 2000 -s 65536
rail_frames "$pcap" "$amac" "$rmac" "$A" "$B"
# (IPv6: every frame between the nodes or to ff02::1, srnic's headers
# those of the transfer)
if [ -n "$V6" ]; then
	python3 "$ROOT/tests/e2e/capture_check.py" "$ROOT/tools/wireshark/srnic.lua" \
		"$pcap" "$LOGDIR/routed-cap-bw.a" 65536 udp "$A" "$B" "$RA" ||
		fail "the capture of a's rail does not match the transfer"
fi

pingpong routed-pp 60 ibv_rc_pingpong -g 1 -s 4096 -n 2000 || fail "ibv_rc_pingpong -c across the routers"
pair routed-integrity 120 "$BUILD/examples/srnic_integrity" ${V6:+-g 1} || fail "srnic_integrity across the routers"
grep -q ", 0 bad" "$LOGDIR/routed-integrity.a" || fail "srnic_integrity across the routers reported bad data"
grep -h "bad" "$LOGDIR/routed-integrity.a" | tail -1
bw routed-write-bw ib_write_bw "${GIDX[@]}" -n 2000 -s 65536
bw routed-read-bw ib_read_bw "${GIDX[@]}" -n 1000
bw routed-send-bw ib_send_bw "${GIDX[@]}" -n 2000 -r 2048

# rping -V: every RDMA READ's data compared with what was sent.
rping_checked routed-rping "$RPING_BIND" "$B"

# udaddy: UD over rdma_cm (SIDR), whose server answers each datagram by
# the address its GRH gives (ibv_create_ah_from_wc): an IPv6 node's GRH
# is an IPv6 header from the sender's address.
timeout -k 5 60 "$SRNIC" exec b -- udaddy -c 2 -C 20 -b "$RPING_BIND" > "$LOGDIR/routed-udaddy.b" 2>&1 &
srv=$!
wait_listen b $((7174 ^ 0x4000)) || echo "--- udaddy's server never listened" >&2
on a 60 -- udaddy -c 2 -C 20 -s "$B" > "$LOGDIR/routed-udaddy.a" 2>&1 ||
	{ tail -5 "$LOGDIR/routed-udaddy.a"; fail "udaddy across the routers (client)"; }
wait $srv || { tail -5 "$LOGDIR/routed-udaddy.b"; fail "udaddy across the routers (server)"; }
for side in a b; do
	grep -q "return status 0" "$LOGDIR/routed-udaddy.$side" || fail "udaddy ($side): no success line"
done
echo "udaddy (UD, answered by the GRH's address) to $B: 2 connections of 20 datagrams"

# UCX: io_demo, its data check on (-q), connected by UCX's rdmacm manager.
E=(env UCX_TLS=rc_v,self UCX_NET_DEVICES=srnic0:1 UCX_ADDRESS_VERSION=v2
	UCX_SOCKADDR_TLS_PRIORITY=rdmacm)
# (io_demo reads its server's address with inet_pton for IPv4 alone:
# "invalid address 'fd00'", and it takes no name)
if [ -n "$V6" ]; then
	echo "io_demo takes no IPv6 address: UCX across the routers not run in IPv6"
elif command -v io_demo > /dev/null; then
	timeout -k 5 60 "$SRNIC" exec b -- "${E[@]}" io_demo -p 13600 -q \
		-d 1024:65536 > "$LOGDIR/routed-io_demo.b" 2>&1 &
	srv=$!
	wait_listen b $((13600 ^ 0x4000)) || echo "--- io_demo's server never listened" >&2
	on a 60 -- "${E[@]}" io_demo -p 13600 -q -d 1024:65536 -i 2000 \
		-o read,write -c 3 $B > "$LOGDIR/routed-io_demo.a" 2>&1 || true
	kill $srv 2>/dev/null; wait $srv 2>/dev/null
	grep -q "Client exit with status 'OK'" "$LOGDIR/routed-io_demo.a" &&
		! grep -qi "error\|mismatch\|timeout" "$LOGDIR/routed-io_demo.a" ||
		{ tail -15 "$LOGDIR/routed-io_demo.a" >&2; fail "io_demo across the routers"; }
	echo "io_demo (UCX, rdmacm): $(grep -o 'read [0-9.]* MBs.*write [0-9.]* MBs' "$LOGDIR/routed-io_demo.a" | tail -1)"
else
	echo "io_demo not installed: UCX across the routers not run"
fi

# UCX across the routers in either family, by ucx_perftest (its put_lat
# waits for the iteration number the other side wrote: a lost or wrong
# byte hangs it) and by Open MPI over UCX (mpi_check: every word checked
# on every rank; ./srnic mpirun starts its orted over ctl0's IPv4).  UCX
# must name the node by GID 1, the address the routers route: in IPv6
# that is the node's IPv6 address (GID 0 is a link-local RoCE v1 GID).
if command -v ucx_perftest > /dev/null; then
	pair routed-ucx-put_lat 60 env UCX_LOG_LEVEL=debug ucx_perftest -p 13610 \
		-d srnic0:1 -x rc_verbs -t put_lat -s 8 -n 2000 -w 200 ||
		fail "ucx_perftest put_lat across the routers"
	grep -q "^Final:" "$LOGDIR/routed-ucx-put_lat.a" ||
		fail "ucx_perftest put_lat across the routers: no results"
	grep -q "srnic0:1 using gid_index 1\$" "$LOGDIR/routed-ucx-put_lat.a" ||
		fail "UCX did not take GID 1 (the node's routed address) on srnic0:1"
	pair routed-ucx-tag_bw 60 env UCX_TLS=rc_v,self UCX_NET_DEVICES=srnic0:1 \
		ucx_perftest -p 13611 -t tag_bw -s 65536 -n 2000 -w 200 ||
		fail "ucx_perftest tag_bw (UCP, rc_verbs) across the routers"
	grep -q "^Final:" "$LOGDIR/routed-ucx-tag_bw.a" ||
		fail "ucx_perftest tag_bw across the routers: no results"
	echo "ucx_perftest put_lat (GID 1): $(grep "^Final:" "$LOGDIR/routed-ucx-put_lat.a")"
else
	echo "ucx_perftest not installed: UCX across the routers not run"
fi
if command -v mpirun > /dev/null && [ -x "$BUILD/tests/e2e/mpi_check" ]; then
	sent0=$(ports_tx_bytes a)
	timeout -k 5 120 env SRNIC_MPI_SLOTS=2 "$SRNIC" mpirun -np 4 \
		"$BUILD/tests/e2e/mpi_check" > "$LOGDIR/routed-mpi_check.log" 2>&1 ||
		{ programs_failed "$LOGDIR/routed-mpi_check.log"; fail "mpi_check across the routers"; }
	grep -q "^mpi_check: 4 ranks, [0-9]* words checked, 0 bad: OK" \
		"$LOGDIR/routed-mpi_check.log" ||
		fail "mpi_check across the routers did not report 4 ranks and no bad word"
	grep "^mpi_check:" "$LOGDIR/routed-mpi_check.log"
	# (a's two ranks send b's two 3 rounds of 1 MiB Alltoall blocks:
	# through srnic, as UCX is allowed nothing else between nodes)
	sent=$(($(ports_tx_bytes a) - sent0))
	[ "$sent" -ge $((2 * 2 * 3 * 1048576)) ] ||
		fail "a's ports sent $sent bytes during mpi_check: its ranks did not talk through srnic"
else
	echo "Open MPI or mpi_check not there: MPI across the routers not run"
fi

# Paths: one QP's packets over both links between the routers (each UDP
# source port hashed to one of them, by a hash the kernel seeds at boot).
t0=$(tx p0) t1=$(tx p1)
pair routed-paths-bw 90 ib_write_bw "${GIDX[@]}" -n 3000 -s 65536 -q 1 || fail "ib_write_bw, one QP, across the routers"
d0=$(( $(tx p0) - t0 )) d1=$(( $(tx p1) - t1 ))
echo "one QP's frames from a's router: $d0 on path 0, $d1 on path 1"
# (a source port is an eighth of the frames: a link with none of them
# carries almost nothing, which this boot's hash may well do, 1 boot in
# 128; the cases below need both links)
if [ $((d0 * 16)) -lt $((d0 + d1)) ] || [ $((d1 * 16)) -lt $((d0 + d1)) ]; then
	echo "SKIP of the path cases: this boot's hash puts all 8 source ports on one link"
	both=""
else
	both=yes
fi
# ... and every one of the 8 source ports in the capture of one QP's
# WRITEs above
eight_paths "$pcap" "$B"

# A path that drops everything, mid-transfer: the peer's HELLOs on it stop
# and it says so; the QP leaves the path (a capture on a's rail: a's
# frames to b other than HELLOs, which probe every path, only on the
# paths b hears) and no QP fails.
if [ -n "$both" ]; then
	( pingpong routed-blackhole 120 ibv_rc_pingpong -g 1 -s 4096 -n 50000 ) > "$LOGDIR/routed-blackhole.out" 2>&1 &
	pp=$!
	sleep 1
	"$SRNIC" testbed fault path 0 loss=100% || fail "testbed fault path 0"
	for _ in $(seq 30); do ok=$(paths_ok a); [ "$ok" != 255 ] && break; sleep 0.1; done
	# (the dead paths drop out one by one as their probes come due)
	sleep 0.5; ok=$(paths_ok a)
	bpcap=$LOGDIR/routed-blackhole.pcap
	rm -f "$bpcap"
	ip netns exec "$SRNIC_NS-a" timeout 20 dumpcap -q -i rail0 -c 400 -f "udp port 4793" -w "$bpcap" > /dev/null 2>&1 || true
	kill -0 $pp 2>/dev/null || echo "(the pingpong ended before the capture did)"
	wait $pp || { cat "$LOGDIR/routed-blackhole.out"; fail "the pingpong across a path that died"; }
	"$SRNIC" testbed fault path 0 clear
	echo "path 0 dropped everything mid-pingpong: b said it hears a's paths $ok (bits), the pingpong ended with good data"
	[ "$ok" -gt 0 ] && [ "$ok" -lt 255 ] || fail "a was not told of the dead path: paths_ok $ok"
	off=$(tshark -X lua_script:"$ROOT/tools/wireshark/srnic.lua" -r "$bpcap" -T fields -E occurrence=f \
		-e "$(ip_fields "$B").dst" -e udp.srcport -e srnic.opcode 2>/dev/null |
		awk -v B="$B" -v ok="$ok" '$1 == B && $3 != 6 && $3 != "" {
			k = $2 - 49152; n++
			if (int(ok / 2 ^ k) % 2 == 0) off++ }
			END {printf "%d %d", n, off}')
	echo "a's frames to b (not HELLOs) in a capture after: ${off% *}, on a path b does not hear: ${off#* }"
	[ "${off% *}" -gt 50 ] && [ "${off#* }" = 0 ] || fail "a still sent on the paths b does not hear"
	[ "$(counter a retry_exceeded)" = 0 ] || fail "a QP ran out of retries"
	for _ in $(seq 50); do [ "$(paths_ok a)" = 255 ] && break; sleep 0.1; done
	[ "$(paths_ok a)" = 255 ] || fail "path 0 back, a does not use it: paths_ok $(paths_ok a)"
fi

# A lossy link: the paths the routers hash onto it lose more than the
# others, b's HELLOs say so, and a gives them less of its frames
# (control/paths.c): every path on link 0 ends weighed below every path
# on link 1.  (Which are on link 0: a capture of what router 0 sends
# there, the frames its loss let through.)
if [ -n "$both" ]; then
	lpcap=$LOGDIR/routed-weights.pcap
	rm -f "$lpcap"
	"$SRNIC" testbed fault path 0 loss=10% || fail "testbed fault path 0 loss=10%"
	( bw routed-weights-bw ib_write_bw "${GIDX[@]}" -D 6 -s 65536 ) > "$LOGDIR/routed-weights.out" 2>&1 &
	job=$!
	sleep 1
	ip netns exec "$R0" timeout 10 dumpcap -q -i p0 -c 300 \
		-f "udp and src host $A and dst host $B" -w "$lpcap" > /dev/null 2>&1 || true
	sleep 2
	w=$(counter a path_weights b)
	wait $job || { cat "$LOGDIR/routed-weights.out"; fail "ib_write_bw across a lossy link"; }
	"$SRNIC" testbed fault path 0 clear
	on0=$(tshark -r "$lpcap" -T fields -e udp.srcport 2>/dev/null | sort -un |
		awk '$1 >= 49152 && $1 < 49160 {printf "%d ", $1 - 49152}')
	echo "10% loss on link 0, which carries a's paths ${on0:-(none seen)}: a weighs b's paths $w; $(tail -1 "$LOGDIR/routed-weights.out")"
	awk -v w="$w" -v on0="$on0" 'BEGIN {
		n = split(w, x, " "); m = split(on0, y, " ")
		for (i = 1; i <= m; i++) l0[y[i]] = 1
		lo = 1000; hi = 0
		for (k = 0; k < 8; k++)
			if (k in l0) { if (x[k + 1] > hi) hi = x[k + 1] }
			else if (x[k + 1] < lo) lo = x[k + 1]
		exit !(n == 8 && m > 0 && m < 8 && hi < lo) }' ||
		fail "a did not weigh the lossy link's paths below the others: $w (link 0: $on0)"
	# (the loss gone, the cut paths come back, step by step, carrying
	# little or nothing)
	for _ in $(seq 300); do [ "$(counter a path_weights b)" = "64 64 64 64 64 64 64 64" ] && break; sleep 0.1; done
	w=$(counter a path_weights b)
	[ "$w" = "64 64 64 64 64 64 64 64" ] || fail "the loss gone, a's weights did not come back: $w"
	echo "the loss gone, a's weights came back: $w"
fi

# 1% loss on one path: goodput near a clean run's (the lost packets are
# sent again, on any path).
gb() { awk '$1 ~ /^[0-9]+$/ && NF >= 5 {print $4}' "$LOGDIR/$1.a" | tail -1; }
bw routed-clean-bw ib_write_bw "${GIDX[@]}" -D 4 -s 65536
"$SRNIC" testbed fault path 0 loss=1% || fail "testbed fault path 0 loss=1%"
bw routed-lossy-bw ib_write_bw "${GIDX[@]}" -D 4 -s 65536
"$SRNIC" testbed fault path 0 clear
echo "ib_write_bw with 1% loss on one path: $(gb routed-lossy-bw) Gb/s, without: $(gb routed-clean-bw)"
awk -v l="$(gb routed-lossy-bw)" -v c="$(gb routed-clean-bw)" 'BEGIN {exit !(l >= c / 2)}' ||
	fail "1% loss on one path cost more than half the goodput"

# The router's port toward a moves to another Ethernet address, mid-
# pingpong, and says so (arp_notify: a gratuitous ARP, as routers do on
# a failover; IPv6's ndisc_notify: an unsolicited advertisement).
learned=$(counter a arp_learned)
if [ -n "$V6" ]; then
	ip netns exec "$R0" sysctl -qw net.ipv6.conf.n-a.ndisc_notify=1
else
	ip netns exec "$R0" sysctl -qw net.ipv4.conf.n-a.arp_notify=1
fi
( pingpong routed-move 120 ibv_rc_pingpong -g 1 -s 4096 -n 20000 ) > "$LOGDIR/routed-move.out" 2>&1 &
pp=$!
sleep 1
ip -n "$R0" link set n-a address 02:72:00:00:00:0a
wait $pp || { cat "$LOGDIR/routed-move.out"; fail "the pingpong across the router that moved"; }
[ "$(counter a arp_learned)" -gt "$learned" ] || fail "a did not learn the router's new address"
kill -0 "$(cat "$TB/a.srnicd.pid")" 2>/dev/null || fail "a's srnicd is gone"
echo "the router moved to 02:72:00:00:00:0a mid-pingpong: a learned it, the pingpong ended with good data"

no_damage

# Four nodes, a and c behind router 0, b and d behind router 1: a finds
# every other through the routers, and a pingpong (-c) goes from a to c
# (one router, another subnet) and to d (both routers).
"$SRNIC" testbed down >/dev/null 2>&1
"$SRNIC" testbed up "${UP_ARGS[@]}" --nodes 4 > "$LOGDIR/48-testbed4.log" 2>&1 ||
	{ cat "$LOGDIR/48-testbed4.log"; fail "testbed up ${UP_ARGS[*]} --nodes 4"; }
for n in b c d; do
	wait_peer a $n 0 && wait_peer $n a 0 || fail "a and $n did not find each other across the routers"
done
node_pp() {	# NAME NODE: ibv_rc_pingpong -c from a to NODE
	local rc=0 pid
	timeout -k 5 60 "$SRNIC" exec "$2" -- ibv_rc_pingpong -g 1 -s 4096 -n 500 -c > "$LOGDIR/$1.$2" 2>&1 &
	pid=$!
	wait_listen "$2" || true
	timeout -k 5 60 "$SRNIC" exec a -- ibv_rc_pingpong -g 1 -s 4096 -n 500 -c "$2" > "$LOGDIR/$1.a" 2>&1 || rc=1
	wait $pid || rc=1
	pingpong_ok "$LOGDIR/$1.a" && pingpong_ok "$LOGDIR/$1.$2" || rc=1
	[ $rc = 0 ] || programs_failed "$LOGDIR/$1.a" "$LOGDIR/$1.$2"
	return $rc
}
node_pp routed4-ac c || fail "a pingpong from a to c (one router)"
node_pp routed4-ad d || fail "a pingpong from a to d (two routers)"
echo "four nodes: a found b, c and d; pingpongs a to c and a to d with good data"
exit 0
