# rdma_cm without a kernel: librdmacm (unmodified, from Debian) over the
# rdma_cm interface srnic's preload library serves (provider/ucma/), the
# connection exchange over TCP between the nodes' IP addresses.  On the
# suite's testbed, or, with SRNIC_TEST_WIRE set (19b-rdma-cm-tap.sh: tap),
# on a testbed of its own of 2 nodes on that wire.
#  - rdmacm-utils: rping with its data check (-V: every ping's RDMA READ
#    and WRITE compared), between the nodes over IPv4 and IPv6 (link-local:
#    GID 0), a server bound to 127.0.0.1 (which rdma_cm takes for "any
#    address"), ucmatose (RC, 4 connections), udaddy (UD over SIDR), mckey
#    (a multicast group joined by address), rdma_server and rdma_client
#    (rdma_create_ep), rstream (rsockets, data verified), riostream
#    (rsockets' RDMA WRITE into a mapped buffer, verified), rdma_xserver
#    and rdma_xclient (an inline SEND on a QP that asked for no inline
#    data), cmtime (20 connections, each step timed);
#  - within one node, where srnicd runs (the passive and the active side
#    two processes of the node, through its loopback, as rdma-core's own
#    tests run rdma_cm): rping -V in a and in b to the node's own address
#    (b's through its loopback: its counters), ucmatose and udaddy in b;
#  - perftest over rdma_cm (-R): write and send bandwidth, read latency;
#  - errors as rdma_cm events: no listener (REJECTED, IB CM's reason 8),
#    a host that is not there (UNREACHABLE), no route (the resolve fails);
#  - cm_check (tests/e2e/cm_check.c): private data at each message's
#    limit, reject, INIT_QP_ATTR for every state, the event fd with poll,
#    epoll and O_NONBLOCK, RDMA WRITE bytes checked, disconnect; again
#    with AF_IB addresses (-g);
#  - AF_IB: rstream -f gid, to a GID of each kind and against -f ip.
. "$(dirname "$0")/own-testbed.bash" cm
. "$(dirname "$0")/../lib.sh"

command -v rping > /dev/null || { echo "SKIP: rdmacm-utils not installed (./srnic setup installs it)"; exit 77; }
own_testbed

# tcp_twin PORT: the TCP port an rdma_cm port's connections come to (a
# listening id listens there; docs/wire-protocol.md).
tcp_twin() { echo $(($1 ^ 0x4000)); }

# cm NAME PORT SERVER-ARGS... -- CLIENT-ARGS...: the server on b, the
# client on a (CM_SERVER and CM_CLIENT name other nodes) once the server
# listens on rdma_cm port PORT; both must exit 0.  Logs in
# $LOGDIR/NAME.{a,b}: the client's, the server's.
cm() {
	local name=$1 port=$2 srv=() rca=0 rcb=0 pid s=${CM_SERVER:-b} c=${CM_CLIENT:-a}
	shift 2
	while [ "$1" != "--" ]; do srv+=("$1"); shift; done
	shift
	timeout -k 5 60 "$SRNIC" exec $s -- "${srv[@]}" > "$LOGDIR/$name.b" 2>&1 &
	pid=$!
	if [ "$port" != - ]; then
		# (UD ids listen too: their SIDR exchange is over TCP)
		wait_listen $s "$(tcp_twin "$port")" || echo "--- $name: $s never listened on $port" >&2
	else
		sleep 3	# (mckey's receiver: nothing to see its join by)
	fi
	timeout -k 5 60 "$SRNIC" exec $c -- "$@" > "$LOGDIR/$name.a" 2>&1 || rca=$?
	wait $pid || rcb=$?
	if [ $rca != 0 ] || [ $rcb != 0 ]; then
		echo "--- $name: client ($c) exit $rca" >&2; tail -15 "$LOGDIR/$name.a" >&2
		echo "--- $name: server ($s) exit $rcb" >&2; tail -15 "$LOGDIR/$name.b" >&2
		fail "$name"
	fi
	echo "$name: ok"
}

# status_ok NAME: both sides of a cm run of ucmatose, udaddy or mckey
# printed their success line.
status_ok() {
	local side
	for side in a b; do
		grep -q "return status 0" "$LOGDIR/$1.$side" || fail "$1 ($side): no success line"
	done
}

B=10.55.0.2
# rping -V compares what each RDMA READ brought back with what was sent
# ("data mismatch" and a failed exit if not).
cm rping 7174 rping -s -V -C 200 -S 4096 -a 0.0.0.0 -p 7174 -- \
	rping -c -V -C 200 -S 4096 -a $B -p 7174
grep -q "data mismatch" "$LOGDIR/rping.a" "$LOGDIR/rping.b" && fail "rping: data mismatch"
cm rping-verbose 7175 rping -s -v -C 3 -a $B -p 7175 -- rping -c -v -C 3 -a $B -p 7175
grep -q "ping data: rdma-ping-2: CDEFGHIJKLMNOPQRSTUVWXYZ" "$LOGDIR/rping-verbose.b" ||
	fail "rping -v: the server printed no third ping"

# IPv6: b's link-local address on ctl0, which is its GID 0
B6=$(ip -n "${SRNIC_NS:-srnic}-b" -6 -o addr show dev ctl0 scope link |
	awk '{sub("/.*", "", $4); print $4}')
[ -n "$B6" ] || fail "b's ctl0 has no IPv6 link-local address"
cm rping-ipv6 7177 rping -s -V -C 50 -a :: -p 7177 -- \
	rping -c -V -C 50 -a "$B6%ctl0" -p 7177

# a listener bound to 127.0.0.1: the kernel's rdma_cm takes a loopback
# address for "any" (no device; it listens on every address), and so does
# srnic's (libfabric's verbs provider counts on it: fi_getinfo binds
# "localhost" to probe, e2e/28)
cm rping-lo-bound 7178 rping -s -V -C 10 -a 127.0.0.1 -p 7178 -- \
	rping -c -V -C 10 -a $B -p 7178

cm ucmatose 7471 ucmatose -c 4 -C 50 -- ucmatose -c 4 -C 50 -s $B
status_ok ucmatose
cm udaddy 7174 udaddy -c 4 -C 50 -- udaddy -c 4 -C 50 -s $B
status_ok udaddy
# mckey: b joins the group and receives, a joins as the sender; b waits
# for all of a's messages (a lost one hangs it into its timeout).
cm mckey - mckey -m 239.1.2.3 -b $B -C 50 -- mckey -m 239.1.2.3 -b 10.55.0.1 -s -C 50
status_ok mckey
cm rdma_server 7471 rdma_server -p 7471 -- rdma_client -s $B -p 7471
grep -q "rdma_client: end 0" "$LOGDIR/rdma_server.a" || fail "rdma_client did not end 0"
grep -q "rdma_server: end 0" "$LOGDIR/rdma_server.b" || fail "rdma_server did not end 0"
# rstream -T v: rsockets (over rdma_cm), every transfer verified.
cm rstream 7471 rstream -T v -S 65536 -C 200 -- rstream -T v -S 65536 -C 200 -s $B
grep -qi "fail\|error" "$LOGDIR/rstream.a" "$LOGDIR/rstream.b" && fail "rstream reported an error"
# riostream -T v: rsockets' RDMA WRITEs into the peer's mapped buffer
# (riomap, riowrite), each round's 64 KiB verified once its last byte
# (riostream's flag) changed.  One transfer a round (-C 1): with more,
# riostream formats its buffer for the round's last transfer while the
# earlier ones from it may still be going out (riowrite returns once
# posted), and srnic, reading a buffer as it sends, lets those carry the
# new flag ("data verification failed" in 4 runs of 5 at -C 200).  Each
# side waits by spinning on the buffer, which leaves both nodes'
# datapath threads only what the scheduler gives them on two CPUs: about
# a millisecond a round trip here (its default run's 100,000-round
# latency tests take minutes).
cm riostream 7476 riostream -T v -S 65536 -C 1 -I 50 -p 7476 -- \
	riostream -T v -S 65536 -C 1 -I 50 -p 7476 -s $B
grep -qi "fail\|error" "$LOGDIR/riostream.a" "$LOGDIR/riostream.b" && fail "riostream reported an error"
grep -q "^custom *64k *1 *50 " "$LOGDIR/riostream.a" || fail "riostream: no transfer line"
# rdma_xserver and rdma_xclient (RC): a 16-byte inline SEND on a QP that
# asked for no inline data (a QP carries at least 16 bytes an SGE inline,
# as rxe's do)
cm rdma_xserver 7477 rdma_xserver -p 7477 -- rdma_xclient -s $B -p 7477
grep -q "rdma_xclient: end 0" "$LOGDIR/rdma_xserver.a" || fail "rdma_xclient did not end 0"
grep -q "rdma_xserver: end 0" "$LOGDIR/rdma_xserver.b" || fail "rdma_xserver did not end 0"
# cmtime: 20 connections made and taken down, each step timed (its
# server serves until it is stopped)
timeout -k 5 60 "$SRNIC" exec b -- cmtime -b $B -p 7478 > "$LOGDIR/cmtime.b" 2>&1 &
cmtime_pid=$!
wait_listen b "$(tcp_twin 7478)" || echo "--- cmtime: b never listened" >&2
on a -- cmtime -s $B -p 7478 -c 20 > "$LOGDIR/cmtime.a" 2>&1 ||
	{ tail -15 "$LOGDIR/cmtime.a" >&2; fail "cmtime"; }
kill "$cmtime_pid" 2>/dev/null; wait "$cmtime_pid" 2>/dev/null || true
grep -q "^connect *:" "$LOGDIR/cmtime.a" || fail "cmtime printed no connect line"
echo "cmtime: ok"

# AF_IB, rdma_cm's native family (an address is a GID and a service id),
# which srnic's rdma_cm offers on Ethernet: rstream -f gid to b's GID 1
# (its IPv4 address) and GID 0 (link-local, the scope the device's
# netdev), and each end against an IP one (a request's rdma_cm header is
# the AF_IB program's own, the IP side's rdma_cm's).  Transfers verified.
G1=::ffff:$B
rs() { echo rstream -T v -S 65536 -C 100 -p "$@"; }
cm rstream-gid 7472 $(rs 7472 -f gid -b $G1) -- $(rs 7472 -f gid -s $G1)
cm rstream-gid-ll 7473 $(rs 7473 -f gid -b "$B6") -- $(rs 7473 -f gid -s "$B6")
cm rstream-gid-to-ip 7474 $(rs 7474 -f ip) -- $(rs 7474 -f gid -s $G1)
cm rstream-ip-to-gid 7475 $(rs 7475 -f gid -b $G1) -- $(rs 7475 -f ip -s $B)
for t in rstream-gid rstream-gid-ll rstream-gid-to-ip rstream-ip-to-gid; do
	grep -qi "fail\|error" "$LOGDIR/$t.a" "$LOGDIR/$t.b" && fail "$t reported an error"
	grep -q "100 " "$LOGDIR/$t.a" || fail "$t: no transfer line"
done

# Within one node: the server and the client two processes of its
# srnicd, through the node's loopback, to the node's own address
loop_bytes() {	# NODE: bytes its loopback carried so far
	counter "$1" tx_bytes loopback
}
if [ -e "$TB/a.srnicd.pid" ] && [ -e "$TB/b.srnicd.pid" ]; then
	CM_SERVER=a CM_CLIENT=a cm cm-loop 7176 rping -s -V -C 50 -a 10.55.0.1 -p 7176 -- \
		rping -c -V -C 50 -a 10.55.0.1 -p 7176
	lo=$(loop_bytes b)
	CM_SERVER=b CM_CLIENT=b cm cm-loop-b 7176 rping -s -V -C 50 -S 4096 -a $B -p 7176 -- \
		rping -c -V -C 50 -S 4096 -a $B -p 7176
	grep -q "data mismatch" "$LOGDIR"/cm-loop*.[ab] && fail "rping within a node: data mismatch"
	# (each ping an RDMA READ of 4096 bytes and a WRITE of as many)
	lo=$(($(loop_bytes b) - lo))
	echo "b's loopback carried $lo bytes of rping in b"
	[ "$lo" -ge $((50 * 2 * 4096)) ] || fail "rping in b: its data did not take b's loopback"
	CM_SERVER=b CM_CLIENT=b cm ucmatose-in-b 7471 ucmatose -c 4 -C 50 -- \
		ucmatose -c 4 -C 50 -s $B
	status_ok ucmatose-in-b
	CM_SERVER=b CM_CLIENT=b cm udaddy-in-b 7174 udaddy -c 4 -C 50 -- udaddy -c 4 -C 50 -s $B
	status_ok udaddy-in-b
else
	echo "within one node: not run (one process a node without srnicd)"
fi

# perftest with rdma_cm (-R): connection and data exchange both by rdma_cm
# (perftest's rdma_cm port is 18515)
PAIR_PORT=$(tcp_twin 18515) bw cm-write-bw ib_write_bw -R -d srnic0 -n 2000
PAIR_PORT=$(tcp_twin 18515) bw cm-send-bw ib_send_bw -R -d srnic0 -n 2000
PAIR_PORT=$(tcp_twin 18515) lat cm-read-lat ib_read_lat -R -d srnic0 -n 500

# Errors, as the kernel's rdma_cm gives them
on a 30 -- rping -c -a $B -p 7999 -C 1 > "$LOGDIR/cm-no-listener.a" 2>&1 &&
	fail "rping to a port nobody listens on succeeded"
grep -q "RDMA_CM_EVENT_REJECTED, error 8" "$LOGDIR/cm-no-listener.a" ||
	fail "no listener: no REJECTED event with reason 8"
on a 30 -- rping -c -a 10.55.0.99 -C 1 > "$LOGDIR/cm-no-host.a" 2>&1 &&
	fail "rping to a host that is not there succeeded"
grep -q "RDMA_CM_EVENT_UNREACHABLE" "$LOGDIR/cm-no-host.a" ||
	fail "no host: no UNREACHABLE event"
on a 30 -- rping -c -a 192.0.2.1 -C 1 > "$LOGDIR/cm-no-route.a" 2>&1 &&
	fail "rping with no route succeeded"
grep -q "rdma_resolve_addr: Network is unreachable" "$LOGDIR/cm-no-route.a" ||
	fail "no route: rdma_resolve_addr did not fail with ENETUNREACH"
echo "errors: REJECTED (8), UNREACHABLE, ENETUNREACH"

if [ -x "$BUILD/tests/e2e/cm_check" ]; then
	cm cm_check 7300 "$BUILD/tests/e2e/cm_check" -s -p 7300 -- \
		"$BUILD/tests/e2e/cm_check" -p 7300 $B
	cm cm_check-af-ib 7301 "$BUILD/tests/e2e/cm_check" -s -g -p 7301 -- \
		"$BUILD/tests/e2e/cm_check" -g -p 7301 $B
	# (AF_IB refused: librdmacm's IP commands, QUERY_ROUTE among them)
	cm cm_check-ip-cmds 7302 env SRNIC_CM_AF_IB=0 "$BUILD/tests/e2e/cm_check" -s -p 7302 -- \
		env SRNIC_CM_AF_IB=0 "$BUILD/tests/e2e/cm_check" -p 7302 $B
	for side in a b; do
		for t in cm_check cm_check-af-ib cm_check-ip-cmds; do
			checked "$LOGDIR/$t.$side" || fail "$t ($side)"
		done
	done
else
	fail "cm_check was not built (librdmacm-dev: ./srnic setup installs it)"
fi
exit 0
