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
#    read the Ethernet addresses as zero in a UDP node);
#  - on an afpacket testbed with --encap udp, while an ibv_rc_pingpong -c
#    runs between a and b, a station on a's rail (tests/e2e/inject.c
#    udp-damage) sends b a HELLO in IPv4 and UDP with one header fault at
#    a time: b drops and counts each (bad_ip: checksum, lengths, a wrong
#    UDP checksum; fragments never reach an af_packet port) or passes it
#    over (not_ours: another port, host or protocol, and a raw frame),
#    and the pingpong ends with good data.
# (rdma_cm over it: 19c-rdma-cm-udp.sh.  Every fault, truncation and
# round trip at the codec: the unit tests wire_udp and wire_corpus.)
# With UDP_FAMILY=ipv6 (e2e/47b) the same in IPv6 on one segment,
# ./srnic testbed up --ipv6 (memif, two ports a node: fd00:55::1 and ::2,
# HELLOs to ff02::1, next hops by neighbour discovery), every program
# given GID 1, the node's IPv6 address; the damaged headers are IPv4's
# alone (IPv6's: the unit test wire_udp6).
if [ "${UDP_FAMILY:-ipv4}" = ipv6 ]; then
	export SRNIC_NS=${SRNIC_NS:-srnic}-u6 SRNIC_RUN=${SRNIC_RUN:-/run/srnic}-u6
	UP_ARGS=(--ipv6) GIDX=(-x 1) GID=(-g 1)
	CAPTURE_UDP_NODES="fd00:55::1 fd00:55::2"
else
	export SRNIC_NS=${SRNIC_NS:-srnic}-u SRNIC_RUN=${SRNIC_RUN:-/run/srnic}-u
	UP_ARGS=(--encap udp) GIDX=() GID=()
fi
. "$(dirname "$0")/../lib.sh"
[ -z "${GIDX[*]}" ] || [ -e /proc/sys/net/ipv6 ] || { echo "SKIP: this kernel has no IPv6"; exit 77; }

command -v tshark > /dev/null || { echo "SKIP: tshark not installed (./srnic setup installs it)"; exit 77; }

trap '"$SRNIC" testbed down >/dev/null 2>&1' EXIT
"$SRNIC" testbed down >/dev/null 2>&1
"$SRNIC" testbed up "${UP_ARGS[@]}" --crc yes > "$LOGDIR/47-testbed.log" 2>&1 ||
	{ cat "$LOGDIR/47-testbed.log"; fail "testbed up ${UP_ARGS[*]}"; }
grep -qx "encap = udp" "$(node_conf a)" || fail "the testbed's nodes are not UDP nodes"
[ -z "${GIDX[*]}" ] || grep -qx "ipv6 = fd00:55::1/64" "$(node_conf a)" ||
	fail "the testbed's node a is not fd00:55::1: $(grep ipv "$(node_conf a)")"
wait_peer a b && wait_peer b a || fail "the UDP nodes did not find each other"

CAPTURE_UDP=1 CAPTURE_BW_ARGS="${GIDX[*]}" capture_write udp-capture 6000

pingpong udp-pp 60 ibv_rc_pingpong -g 1 -s 4096 -n 2000 || fail "ibv_rc_pingpong over UDP"
pair udp-integrity 120 "$BUILD/examples/srnic_integrity" "${GID[@]}" || fail "srnic_integrity over UDP"
grep -q ", 0 bad" "$LOGDIR/udp-integrity.a" || fail "srnic_integrity over UDP reported bad data"
grep -h "bad" "$LOGDIR/udp-integrity.a" | tail -1
bw udp-read-bw ib_read_bw "${GIDX[@]}" -n 1000
bw udp-send-bw ib_send_bw "${GIDX[@]}" -n 2000 -r 2048
lat udp-write-lat ib_write_lat "${GIDX[@]}" -n 1000

for n in a b; do
	d=$(counter "$n" "drops.bad_ip drops.not_ours drops.malformed drops.bad_crc drops.bad_auth") ||
		fail "no counters of $n"
	echo "node $n: bad_ip, not_ours, malformed, bad_crc, bad_auth drops: $d"
	[ "$d" = "0 0 0 0 0" ] || fail "node $n could not read frames of the other"
done

# Damaged headers from a station on the rail (an afpacket testbed: the
# station's frames reach b's port as any other).
[ -z "${GIDX[*]}" ] || exit 0
"$SRNIC" testbed down >/dev/null 2>&1
"$SRNIC" testbed up --wire afpacket --encap udp > "$LOGDIR/47-testbed.log" 2>&1 ||
	{ cat "$LOGDIR/47-testbed.log"; fail "testbed up --wire afpacket --encap udp"; }
drops() { counter b "drops.bad_ip drops.not_ours" 2>/dev/null; }
( pingpong udp-inject 120 ibv_rc_pingpong -g 1 -s 4096 -n 100000 ) > "$LOGDIR/udp-inject.out" 2>&1 &
pp=$!
# (the embedded engine: b's counters are the pingpong's process's, there
# once it has found a)
wait_peer b a && before=$(drops) ||
	{ cat "$LOGDIR/udp-inject.out"; fail "the pingpong over UDP on afpacket did not start"; }
ip netns exec "$SRNIC_NS-a" "$BUILD/tests/e2e/inject" udp-damage rail0 \
	02:53:4e:01:00:02 02:66:00:00:00:01 10.55.0.1 10.55.0.2 ||
	fail "inject udp-damage"
kill -0 $pp 2>/dev/null || fail "the pingpong ended before the damaged frames were sent: a longer one is what the case needs"
# (6 damaged, 2 of them IPv4 fragments, which never reach an af_packet
# port: DPDK's af_packet joins a fanout group that has the kernel
# reassemble fragments first, and a lone one waits there until it is
# dropped; dumpcap on b's rail shows both arrive.  Refusing them is the
# unit tests' wire_udp.)
want_bad=$(( ${before% *} + 4 )) want_not=$(( ${before#* } + 4 ))
for _ in $(seq 50); do
	sleep 0.2
	now=$(drops) || continue
	[ "${now% *}" -ge $want_bad ] && [ "${now#* }" -ge $want_not ] && break
done
wait $pp || { cat "$LOGDIR/udp-inject.out"; fail "the pingpong beside the damaged frames"; }
echo "b's bad_ip and not_ours drops: $before before, $now after 6 damaged frames (2 fragments) and 4 not ours"
[ "${now% *}" = $want_bad ] || fail "b counted $(( ${now% *} - ${before% *} )) bad_ip drops of the 4 damaged frames that are not fragments"
[ "${now#* }" -ge $want_not ] || fail "b counted $(( ${now#* } - ${before#* } )) not_ours drops of the 4 frames not ours"
exit 0
