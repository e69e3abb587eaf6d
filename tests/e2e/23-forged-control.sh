# Forged and replayed control frames (tests/e2e/inject.c, a station on the
# rails of an afpacket testbed, sending from inside node a):
#  1. With the testbed's cluster key, while ibv_rc_pingpong -c runs between
#     a and b: BOOTINGs that claim a restarted a (no MAC, and a garbage
#     one), a forged BYE, and replays of a HELLO and a BOOTING recorded
#     from an earlier process of a.  The pingpong finishes with good data,
#     node b failed no QP, and counted the forgeries (drop bad_auth) and
#     the replays (older_refused, stale_incarnation).
#  2. Without a key, the same forged BOOTING fails b's QPs: what makes 1
#     able to fail.
#  3. Without a key, 100 HELLOs from made-up nodes fill b's peer table (64
#     slots) and the rest are refused (peers_full); once they have been
#     silent for SRNIC_PEER_FORGET_MS (10 s), a newcomer's HELLO takes the
#     slot of one of them.
# The testbeds are the caller's SRNIC_NS and SRNIC_RUN with "-x" appended.
export SRNIC_NS=${SRNIC_NS:-srnic}-x SRNIC_RUN=${SRNIC_RUN:-/run/srnic}-x
. "$(dirname "$0")/../lib.sh"

INJ=$BUILD/tests/e2e/inject
W=$LOGDIR/23-forged-control.d
rm -rf "$W"; mkdir -p "$W"
trap '"$SRNIC" testbed down >/dev/null 2>&1' EXIT
A_IP=10.55.0.1
A_MAC0=02:53:4e:01:00:01 B_MAC0=02:53:4e:01:00:02

in_a() { ip netns exec "$SRNIC_NS-a" "$@"; }
in_switch() { ip netns exec "$SRNIC_NS-sw" "$@"; }
incarnation() { local i; i=$(counter "$1" incarnation) && printf '%08x\n' "$i"; }
# (a node's counters are its last process's: ./srnic stats fails until one ran)
drops() { counter "$1" "drops.$2"; }

# A long pingpong in the background (100,000 round trips, 7 s here: the
# forgeries must find its nodes there; 30,000 ended before some were sent
# in a CI run); waits until both nodes' counters are the new processes'
# (incarnations other than the last ones seen, in ia and ib) and name
# each other as peers on both ports.
pingpong_start() {	# name timeout
	local old_a old_b
	old_a=$(incarnation a 2>/dev/null); old_b=$(incarnation b 2>/dev/null)
	( pingpong "$1" "$2" ibv_rc_pingpong -g 1 -s 4096 -n 100000 ) > "$W/$1.out" 2>&1 &
	pp=$!
	for _ in $(seq 100); do
		sleep 0.1
		ia=$(incarnation a 2>/dev/null); ib=$(incarnation b 2>/dev/null)
		[ -n "$ia" ] && [ "$ia" != "$old_a" ] &&
			[ -n "$ib" ] && [ "$ib" != "$old_b" ] &&
			[ "$(counter a ports_up b)" = "0 1" ] &&
			[ "$(counter b ports_up a)" = "0 1" ] &&
			return 0
	done
	cat "$W/$1.out"; fail "$1: the pingpong did not start"
}

# A BOOTING from "a restarted": a's incarnation (ia, as pingpong_start
# read it: the forgeries go out back to back, not a counter reading
# apart, while the pingpong's nodes are there to count them) with its
# boot count raised.
forge_booting() {	# mode count
	in_a "$INJ" forge rail0 BOOTING "$B_MAC0" "$A_MAC0" "$A_IP" \
		"$(printf %08x $(((0x$ia + 0x10000) & 0xffffffff)))" "$ib" "$1" "$2" ||
		fail "inject forge BOOTING"
}

# The pingpong still runs (its nodes, in this embedded testbed, are its
# processes: frames after it ended are counted by nobody).
pingpong_running() {	# what was sent
	kill -0 "$pp" 2>/dev/null ||
		fail "the pingpong ended before b could count $1: the case proves nothing (a longer pingpong is what it needs)"
}

"$SRNIC" testbed down >/dev/null 2>&1
# (the embedded engine, which this test needs: the replays come from an
# earlier process of a, each process being a's node)
"$SRNIC" testbed up --wire afpacket >/dev/null || fail "afpacket testbed"

# An earlier process of a: record its HELLO and its BOOTING to b, where
# they enter the switch.
in_switch "$INJ" capture r0-a HELLO "$W/old-hello" 20 > "$W/cap-hello.log" 2>&1 &
cap1=$!
in_switch "$INJ" capture r0-a BOOTING "$W/old-booting" 20 > "$W/cap-booting.log" 2>&1 &
cap2=$!
sleep 0.3
pingpong old-process 60 ibv_rc_pingpong -g 1 -s 64 -n 100 || fail "the first pingpong"
wait $cap1 || { cat "$W/cap-hello.log"; fail "no HELLO captured"; }
wait $cap2 || { cat "$W/cap-booting.log"; fail "no BOOTING captured"; }
[ "$(counter b cluster_key)" = yes ] || fail "the testbed's nodes have no cluster key"

pingpong_start keyed 120
auth0=$(drops b bad_auth); stale0=$(drops b stale_incarnation)
forge_booting none 5
forge_booting garbage 5
in_a "$INJ" forge rail0 BYE ff:ff:ff:ff:ff:ff "$A_MAC0" "$A_IP" \
	"$ia" 0 garbage 3 || fail "inject forge BYE"
in_a "$INJ" replay rail0 "$W/old-hello" 5 || fail "inject replay HELLO"
in_a "$INJ" replay rail0 "$W/old-booting" 5 || fail "inject replay BOOTING"
pingpong_running "the forged and replayed frames"
# (the counters are written twice a second, later under load: read until
# they show all three kinds, 10 s at most)
for ((i = 0; i < 50; i++)); do
	sleep 0.2
	auth=$(( $(drops b bad_auth) - auth0 ))
	stale=$(( $(drops b stale_incarnation) - stale0 ))
	refused=$(counter b older_refused)
	[ "$auth" -ge 13 ] && [ "$stale" -ge 1 ] && [ "${refused:-0}" -ge 1 ] &&
		break
done
cleared=$(counter b qps_cleared)
wait $pp || { cat "$W/keyed.out"; fail "the pingpong under forged control frames"; }
echo "with the key: b dropped $auth forged frames (bad_auth), $stale stale ones, refused $refused old HELLOs; $cleared QPs failed"
[ "$auth" -ge 13 ] || fail "b counted $auth bad_auth drops of the 13 forged frames"
[ "${refused:-0}" -ge 1 ] || fail "b took a replayed HELLO of an old process"
[ "$stale" -ge 1 ] || fail "b counted no stale drop for the replayed BOOTING"
[ "${cleared:-x}" = 0 ] || fail "b failed $cleared QPs"

# The same BOOTING without a key takes b's QPs down.
"$SRNIC" testbed down >/dev/null 2>&1
"$SRNIC" testbed up --wire afpacket --key no >/dev/null || fail "afpacket testbed without a key"
# (its client then waits for a receive that never comes, as it would on
# any NIC: the timeout ends it, and qps_cleared below is what counts)
pingpong_start unkeyed 30
forge_booting none 5
sleep 1
cleared=$(counter b qps_cleared)
wait $pp && fail "without a key the forged BOOTING changed nothing: the test above proves nothing"
echo "without a key: the forged BOOTING failed $cleared QPs of b, and the pingpong"
[ "${cleared:-0}" -ge 1 ] || fail "without a key b failed no QP"

# (b's node runs while a server waits for a client that never comes)
old_b=$(incarnation b 2>/dev/null)
timeout -k 5 45 "$SRNIC" exec b -- ibv_rc_pingpong -g 1 -p 18651 > "$W/table.out" 2>&1 &
srv=$!
for _ in $(seq 100); do
	sleep 0.1
	[ "$(incarnation b 2>/dev/null)" != "$old_b" ] && break
done
for i in $(seq 100); do
	in_a "$INJ" forge rail0 HELLO ff:ff:ff:ff:ff:ff "$(printf '02:66:00:00:00:%02x' $i)" \
		10.66.0.$i "$(printf %08x $((0x66000 + i)))" 0 none 1 > /dev/null ||
		fail "inject forge HELLO $i"
done
for _ in $(seq 50); do
	sleep 0.2
	full=$(counter b peers_full)
	[ "${full:-0}" -ge 30 ] && break
done
[ "${full:-0}" -ge 30 ] || fail "b refused $full of 100 made-up peers (a full table of 64 refuses 36 or more)"
sleep 10.5	# (SRNIC_PEER_FORGET_MS, and the 300 ms until they count as down)
# The newcomer says HELLO every 100 ms, as a node does every 10: one HELLO
# alone leaves its port down again 300 ms later, often before b's
# counters are next written, and the case then read '' for a newcomer
# that had its slot.
for _ in $(seq 50); do
	in_a "$INJ" forge rail0 HELLO ff:ff:ff:ff:ff:ff 02:77:00:00:00:01 10.77.0.1 00077001 0 none 1 > /dev/null ||
		{ echo "inject forge the newcomer's HELLO failed"; break; }
	sleep 0.1
done &
hellos=$!
for _ in $(seq 25); do
	sleep 0.2
	up=$(counter b ports_up m10.77.0.1 2>/dev/null) && [ -n "$up" ] && break
done
kill $hellos 2>/dev/null; wait $hellos 2>/dev/null
kill $srv 2>/dev/null; wait $srv 2>/dev/null
echo "without a key: b refused $full of 100 made-up peers, then took a newcomer into a silent one's slot (ports up: '$up')"
[ "$up" = 0 ] || fail "a newcomer found no slot in b's peer table 10 s after the made-up peers went silent"
exit 0
