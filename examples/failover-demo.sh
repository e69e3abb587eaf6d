#!/usr/bin/env bash
# ./srnic demo failover: a client's RC QP to a service lives through the
# holder's death and return (docs/failover.md).  Three afpacket nodes: a
# is the client, b (priority 10) and c (priority 5) are members of service
# "web" at 10.55.0.100, each with a QP of its slot 0 parked
# (tests/e2e/svc_check.c) and slot 0's region (the same key on both).  a
# sends requests, each answered by whoever holds web, and WRITEs to the
# region now and then; at 30% b is killed (SIGKILL) and c takes over; at 60% b comes
# back and takes web again (failback=auto), leaves it with c (expire), or
# waits for c's program to hand it over (manual).
# One line says how it went:
#
#   failover: N requests, 0 lost, D duplicates, takeover T ms, failback F ms
#
# (T and F: from the last answer of the old holder to the first of the
# new one, at the client.)
#
#   --requests N       how many (50000)
#   --svc-dead-ms MS   how long a silent holder is waited for (300)
#   --failback auto|expire|manual
#                      manual: b back waits; at 75% c's program is asked
#                      (SIGUSR1) to hand web over: it freezes its QP
#                      (srnic_svc_freeze), answers what it took and calls
#                      srnic_svc_handover, and b takes web at once
#   --cut              instead of the kill, cut b's links for 1 s (both
#                      rails), then heal them: a partition
#   --replay           once b is killed, a station on a's rail 0 replays
#                      an SVC_ANNOUNCE b sent as holder, every 2 ms for 1 s
#                      (tests/e2e/inject, built with the tests): taken, it
#                      would keep dead b the holder and hold the takeover
#   --mode group|switch  how the service's frames reach the holder: its
#                        group address, every member hearing them (default),
#                        or its own address, which ./srnic fabric points at
#                        the holder's port alone
#
# It brings up a testbed of its own (SRNIC_NS and SRNIC_RUN with -fo
# appended) and takes it down after.  Exit 0 when every request got its
# answer and the client's QP never failed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SRNIC=$ROOT/srnic
PROG=${SRNIC_BUILD:-$ROOT/build}/tests/e2e/svc_check
export SRNIC_NS=${SRNIC_FO_NS:-${SRNIC_NS:-srnic}-fo}
export SRNIC_RUN=${SRNIC_FO_RUN:-${SRNIC_RUN:-/run/srnic}-fo}
TB=$SRNIC_RUN/testbed
SVC=10.55.0.100

n=50000 dead=300 failback=auto mode=group cut=0 replay=0
while [ $# -gt 0 ]; do
	case $1 in
	--requests) n=$2; shift 2 ;;
	--svc-dead-ms) dead=$2; shift 2 ;;
	--failback) failback=$2; shift 2 ;;
	--mode) mode=$2; shift 2 ;;
	--cut) cut=1; shift ;;
	--replay) replay=1; shift ;;
	*) echo "failover: unknown option '$1'" >&2; exit 1 ;;
	esac
done

work=$(mktemp -d)
kill_node() { kill -9 $(ip netns pids "$SRNIC_NS-$1" 2>/dev/null) 2>/dev/null || true; }
cleanup() {
	local m
	for m in a b c; do kill_node $m; done
	"$SRNIC" testbed down >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
"$SRNIC" testbed down >/dev/null 2>&1 || true
"$SRNIC" testbed up --nodes 3 --wire afpacket >/dev/null

for m in b c; do
	cp "$TB/$m.conf" "$work/$m.conf"
	{
		echo "service = web $SVC prio=$([ $m = b ] && echo 10 || echo 5) failback=$failback mode=$mode"
		echo "svc_dead_ms = $dead"
	} >> "$work/$m.conf"
done
[ "$mode" = group ] || "$SRNIC" fabric start
# serve NODE: its member program (not this shell's job: one is killed on
# purpose)
serve() {
	(SRNIC_LOG=1 SRNIC_CONF_OVERRIDE=$work/$1.conf timeout -k 5 300 \
		"$SRNIC" exec "$1" -- "$PROG" serve $SVC >> "$work/$1.log" 2>&1 &)
}
role() {	# NODE: its part in the service (docs/counters.md: by its name)
	awk -v s=$SVC '$1 == "service" && $3 == s {
		for (i = 4; i < NF; i++) if ($i == "role") print $(i + 1) }' "$TB/$1.stats" 2>/dev/null
}
# signal_prog NODE SIG: the member program of NODE (not its wrappers)
signal_prog() {
	local p
	for p in $(ip netns pids "$SRNIC_NS-$1" 2>/dev/null); do
		[ "$(cat /proc/$p/comm 2>/dev/null)" = svc_check ] && kill -"$2" "$p"
	done
}
serve b
serve c
for ((i = 0; i < 100; i++)); do
	[ "$(role b)" = holder ] && [ "$(role c)" = standby ] && break
	sleep 0.1
done
echo "b holds web, c stands by"
if [ $replay = 1 ]; then
	# (b's own frame, as it entered the switch: the replay carries b's
	# cluster key MAC, and only its number is old)
	ip netns exec "$SRNIC_NS-sw" "${SRNIC_BUILD:-$ROOT/build}/tests/e2e/inject" \
		capture r0-b SVC_ANNOUNCE "$work/announce" 10 > /dev/null ||
		{ echo "failover: no SVC_ANNOUNCE of b captured" >&2; exit 1; }
fi
# slot 0's region: the same key on both members (the client WRITEs to it)
for ((i = 0; i < 100; i++)); do
	grep -q '^region key' "$work/b.log" && grep -q '^region key' "$work/c.log" && break
	sleep 0.05
done
kb=$(sed -n 's/^region key \(0x[0-9a-f]*\) .*/\1/p' "$work/b.log" | head -1)
kc=$(sed -n 's/^region key \(0x[0-9a-f]*\) .*/\1/p' "$work/c.log" | head -1)
echo "service region key: b $kb, c $kc"
[ -n "$kb" ] && [ "$kb" = "$kc" ] || { echo "failover: the members' keys differ" >&2; exit 1; }

timeout -k 5 300 "$SRNIC" exec a -- "$PROG" client $SVC "$n" "$kb" > "$work/a.log" 2>&1 &
client=$!
at() {	# at PCT: until the client has done PCT% (or is gone)
	while kill -0 $client 2>/dev/null; do
		[ "$(grep '^progress' "$work/a.log" | tail -1 | tr -dc 0-9)" -ge "$1" ] 2>/dev/null && return 0
		sleep 0.005
	done
	return 1
}
if [ $cut = 1 ]; then
	if at 30; then
		"$SRNIC" testbed fault b 0 down; "$SRNIC" testbed fault b 1 down
		echo "b's links cut at 30%"
		sleep 1
		"$SRNIC" testbed fault b 0 up; "$SRNIC" testbed fault b 1 up
		echo "b's links back after 1 s"
	fi
else
	if at 30; then
		kill_node b
		echo "b killed at 30%"
		if [ $replay = 1 ]; then
			ip netns exec "$SRNIC_NS-a" "${SRNIC_BUILD:-$ROOT/build}/tests/e2e/inject" \
				replay rail0 "$work/announce" 500 > /dev/null &
			replayer=$!
		fi
	fi
	if at 60; then
		serve b
		echo "b back at 60%"
	fi
	if [ "$failback" = manual ] && at 75; then
		for ((i = 0; i < 100; i++)); do
			[ "$(role b)" = standby ] && break
			sleep 0.05
		done
		echo "b $(role b), c $(role c) at 75%: c's program asked to hand web over"
		signal_prog c USR1
		for ((i = 0; i < 100; i++)); do
			grep -q '^handed over' "$work/c.log" && break
			sleep 0.05
		done
	fi
fi
rc=0
wait $client || rc=1
if [ $replay = 1 ]; then
	wait "${replayer:-}" 2>/dev/null && echo "replayed b's SVC_ANNOUNCE 500 times" ||
		{ echo "failover: the replay failed" >&2; rc=1; }
fi
grep -v '^progress' "$work/a.log"
for m in b c; do
	echo "--- $m"
	grep -E 'service web|bound|dropped|frozen|handed over' "$work/$m.log" || true
done
# the client said goodbye: its connection closed (failback=expire hands
# the service back then)
# (the counters are written twice a second: wait for both nodes' word)
for ((i = 0; i < 40; i++)); do
	[ "$(role b)" = holder ] && [ "$(role c)" = standby ] && break
	sleep 0.1
done
echo "after the client's goodbye: b $(role b), c $(role c)"
# (group mode: the clients send to web's group address, so every member
# hears what goes to the holder, and a standby drops it)
sleep 0.6	# (the counters are written twice a second)
echo "frames for web's holder that c heard and dropped: $(awk '$1 == "drop" && $2 == "stale_incarnation" { print $3 }' "$TB/c.stats" 2>/dev/null)"
# (what each node did about the service: SVC_RESYNCs sent, rebinds,
# binds, announcements refused; and what it dropped; docs/counters.md)
for m in a b c; do
	echo "$m:$(awk '$1 == "svc" { $1 = ""; printf "%s", $0 }
		$1 == "drop" && $3 > 0 { printf " drop %s %s", $2, $3 }' "$TB/$m.stats" 2>/dev/null)"
done
if [ "$mode" = switch ]; then
	echo "--- the fabric"
	cat "$TB/fabric.log"
	echo "web's address on rail 0: $(ip netns exec "$SRNIC_NS-sw" bridge fdb show br br-rail0 | awk '$1 == "02:5e:0a:37:00:64" { print $3 }')"
fi
line=$(grep '^failover: ' "$work/a.log" || true)
[ -n "$line" ] || { echo "failover: the client said nothing" >&2; exit 1; }
# "holders b c b, moves T F ms": the takeover, and the failback if any
read -r takeover back < <(echo "$line" | sed -n 's/.* moves \([0-9 a-z]*\) ms.*/\1/p')
if [ -n "${back:-}" ]; then back="$back ms"; else back=none; fi
echo "$(echo "$line" | cut -d, -f1-3), takeover ${takeover:-?} ms, failback $back"
exit $rc
