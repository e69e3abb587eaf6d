# srnicd on the afpacket wire.  DPDK 22.11's af_packet does no I/O in a
# secondary process, so srnicd (the primary) alone polls the node's ports
# and its processes hand it the frames they send (proc.tx,
# docs/architecture.md).  A testbed of its own: afpacket, srnicd in both
# nodes, frames with the CRC.
#  1. Three processes a node at once, bytes checked: srnic_integrity (every
#     byte of WRITE, READ and SEND, 1 B to 8 MiB), a stress pair (RC WRITE,
#     READ, SEND of many sizes over 4 QPs) and ibv_rc_pingpong -c.
#  2. Mid-run, every attached program of a has handed frames to srnicd and
#     polled no port itself.
#  2b. ibv_rc_pingpong -c between two processes of a, through the node's
#     loopback.
#  3. SIGKILL of an ib_write_bw client mid-transfer: srnicd lets go of it
#     within 1 s, and a pingpong beside it ends intact.
export SRNIC_NS=${SRNIC_NS:-srnic}-p SRNIC_RUN=${SRNIC_RUN:-/run/srnic}-p
. "$(dirname "$0")/../lib.sh"

CLIENT="python3 $ROOT/tools/srnicd_client.py"
trap '"$SRNIC" testbed down >/dev/null 2>&1' EXIT
"$SRNIC" testbed down >/dev/null 2>&1
"$SRNIC" testbed up --wire afpacket --srnicd yes > /dev/null || fail "afpacket testbed with srnicd"
stats() { $CLIENT "$TB/$1.sock" stats --json; }
procs() {	# NODE: "prog pid port_polls tx_handed" for each attached process
	stats "$1" | python3 -c '
import json, sys
for p in json.load(sys.stdin)["processes"]:
    if p["slot"]:
        print(p["prog"], p["pid"], p["port_polls"], p["tx_handed"])'
}

# 1. and 2.
timeout -k 5 120 "$SRNIC" exec b -- "$BUILD/examples/srnic_integrity" > "$LOGDIR/p-int.b" 2>&1 &
s1=$!
timeout -k 5 60 "$SRNIC" exec b -- "$BUILD/tests/e2e/stress" -q 4 -n 20000 > "$LOGDIR/p-stress.b" 2>&1 &
s2=$!
timeout -k 5 60 "$SRNIC" exec b -- ibv_rc_pingpong -g 1 -c -n 5000 -s 1024 -p 18700 > "$LOGDIR/p-pp.b" 2>&1 &
s3=$!
wait_listen b 18600 && wait_listen b 18630 && wait_listen b 18700 || fail "the servers do not listen"
timeout -k 5 120 "$SRNIC" exec a -- "$BUILD/examples/srnic_integrity" b > "$LOGDIR/p-int.a" 2>&1 &
c1=$!
timeout -k 5 60 "$SRNIC" exec a -- "$BUILD/tests/e2e/stress" -q 4 -n 20000 b > "$LOGDIR/p-stress.a" 2>&1 &
c2=$!
timeout -k 5 60 "$SRNIC" exec a -- ibv_rc_pingpong -g 1 -c -n 5000 -s 1024 -p 18700 b > "$LOGDIR/p-pp.a" 2>&1 &
c3=$!
# (a's attached programs, sampled every 0.1 s while the pairs run)
rm -f "$LOGDIR/p-procs.a"
while kill -0 $c1 2>/dev/null || kill -0 $c2 2>/dev/null || kill -0 $c3 2>/dev/null; do
	procs a | sed 's/^/sample '"$SECONDS.$RANDOM"' /' >> "$LOGDIR/p-procs.a"
	sleep 0.1
done
rc=0
for p in $s1 $s2 $s3 $c1 $c2 $c3; do wait $p || rc=1; done
[ $rc = 0 ] || { tail -n 5 "$LOGDIR"/p-int.* "$LOGDIR"/p-stress.* "$LOGDIR"/p-pp.*; fail "a program of the three pairs failed"; }
grep -q ' 0 bad' "$LOGDIR/p-int.a" || fail "srnic_integrity: $(tail -n 2 "$LOGDIR/p-int.a")"
grep -q ' 0 bad' "$LOGDIR/p-stress.a" || fail "stress: $(tail -n 2 "$LOGDIR/p-stress.a")"
pingpong_ok "$LOGDIR/p-pp.a" && pingpong_ok "$LOGDIR/p-pp.b" || fail "the pingpong"
echo "three pairs through srnicd on afpacket: $(grep -h 'checks' "$LOGDIR/p-int.a"); $(grep -h 'iters in' "$LOGDIR/p-pp.a")"
# (per program: the most frames it had handed, the most port polls)
seen=$(awk '{h[$3 " " $4] = $6 > h[$3 " " $4] ? $6 : h[$3 " " $4]
	     p[$3 " " $4] += $5; n[$2]++}
	END {for (k in h) print k, p[k], h[k]}' "$LOGDIR/p-procs.a")
most=$(awk '{n[$2]++} END {for (s in n) if (n[s] > m) m = n[s]; print m + 0}' "$LOGDIR/p-procs.a")
echo "a's attached programs (program, pid, port polls, frames handed to srnicd), $most at once at most:"
echo "$seen"
[ "$(echo "$seen" | grep -c .)" -ge 3 ] || fail "the three programs of a were not all seen attached"
[ "$most" -ge 2 ] || fail "never two programs attached to a's srnicd at once"
echo "$seen" | awk '$3 != 0 {exit 1}' || fail "an attached process polled a port itself"
echo "$seen" | awk '$4 == 0 {exit 1}' || fail "an attached process handed srnicd no frame"

# 2b. two processes of a through the node's loopback (srnicd puts the
#     frames one hands it on the loopback, and sorts them for the other)
pair_lo() {
	timeout -k 5 60 "$SRNIC" exec a -- ibv_rc_pingpong -g 1 -c -n 2000 -s 4096 -p 18800 > "$LOGDIR/p-lo.s" 2>&1 &
	local s=$!
	wait_listen a 18800 || fail "the loopback pingpong's server does not listen"
	timeout -k 5 60 "$SRNIC" exec a -- ibv_rc_pingpong -g 1 -c -n 2000 -s 4096 -p 18800 a > "$LOGDIR/p-lo.c" 2>&1 ||
		fail "the loopback pingpong's client: $(tail -n 3 "$LOGDIR/p-lo.c")"
	wait $s || fail "the loopback pingpong's server: $(tail -n 3 "$LOGDIR/p-lo.s")"
}
pair_lo
pingpong_ok "$LOGDIR/p-lo.s" && pingpong_ok "$LOGDIR/p-lo.c" || fail "the loopback pingpong"
echo "loopback between two processes of a: $(grep -h 'iters in' "$LOGDIR/p-lo.c")"

# 3. SIGKILL one process mid-transfer, a pingpong beside it
timeout -k 5 30 "$SRNIC" exec b -- ib_write_bw -D 6 -s 65536 > "$LOGDIR/p-bw.b" 2>&1 &
sb=$!
timeout -k 5 60 "$SRNIC" exec b -- ibv_rc_pingpong -g 1 -c -n 3000 -s 1024 -p 18700 > "$LOGDIR/p-pp2.b" 2>&1 &
sp=$!
wait_listen b 18515 && wait_listen b 18700 || fail "the servers do not listen"
timeout -k 5 30 "$SRNIC" exec a -- ib_write_bw -D 6 -s 65536 b > "$LOGDIR/p-bw.a" 2>&1 &
timeout -k 5 60 "$SRNIC" exec a -- ibv_rc_pingpong -g 1 -c -n 3000 -s 1024 -p 18700 b > "$LOGDIR/p-pp2.a" 2>&1 &
cp=$!
victim=""
for i in $(seq 100); do
	victim=$(procs a | awk '$1 == "ib_write_bw" {print $2}')
	[ -n "$victim" ] && break
	sleep 0.1
done
[ -n "$victim" ] || fail "ib_write_bw never attached to a's srnicd"
sleep 1
kill -9 "$victim"
gone=$($CLIENT "$TB/a.sock" gone "$victim" 1000) ||
	fail "srnicd still holds the killed process $victim after 1 s: $(stats a)"
echo "srnicd let go of the killed ib_write_bw (pid $victim) $gone ms after the kill"
wait $sb && fail "ib_write_bw's server did not fail when its client was killed"
wait $cp || fail "the pingpong beside the kill failed: $(tail -n 3 "$LOGDIR/p-pp2.a")"
wait $sp || fail "the pingpong server beside the kill failed"
pingpong_ok "$LOGDIR/p-pp2.a" && pingpong_ok "$LOGDIR/p-pp2.b" || fail "pingpong beside the kill"
exit 0
