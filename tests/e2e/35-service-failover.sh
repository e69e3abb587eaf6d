# Services: a failover address held by one member node at a time
# (docs/failover.md), on a three-node afpacket testbed of its own: a is a
# client, b a member with priority 10, c one with priority 5 of service
# "web" at 10.55.0.100.  A program on each node keeps its node up; its
# control core says what it does (SRNIC_LOG=1, wall-clock times) and its
# counters which node holds the service at which term.
#  1. b holds web, c stands by, and a (no configuration) learned both.
#  2. b killed (SIGKILL): c holds it within 1 s, at a higher term.
#  3. b back (failback=auto): b holds it again, c steps down; one holder.
#  4. b cut off for 1 s, both links: c takes it meanwhile; afterwards
#     exactly one holder, and a sees that one.
#  5. With svc_dead_ms = 50, a kill is taken over within 250 ms.
#  6. failback=expire: b back takes the service once c has no connection
#     bound (here at once: no client connects).
. "$(dirname "$0")/../lib.sh"

export SRNIC_NS=${SRNIC_NS:-srnic}-svc SRNIC_RUN=${SRNIC_RUN:-/run/srnic}-svc
TB=$SRNIC_RUN/testbed
WORK=$LOGDIR/35-service.d
rm -rf "$WORK"; mkdir -p "$WORK"
cleanup() {
	local n
	for n in a b c; do kill_node $n; done
	"$SRNIC" testbed down >/dev/null 2>&1 || true
}
trap cleanup EXIT
"$SRNIC" testbed down >/dev/null 2>&1 || true
# (the embedded engine, which this test needs: a member is killed with
# its program, which is its node)
"$SRNIC" testbed up --nodes 3 --wire afpacket > "$WORK/testbed.log" 2>&1 ||
	{ cat "$WORK/testbed.log"; fail "three-node testbed"; }

SVC=10.55.0.100
# conf NODE [SETTINGS...]: NODE's configuration with the service line for
# its priority (none for a), and any extra lines
conf() {
	local n=$1 prio
	shift
	cp "$TB/$n.conf" "$WORK/$n.conf"
	case $n in b) prio=10 ;; c) prio=5 ;; *) prio="" ;; esac
	[ -z "$prio" ] || echo "service = web $SVC prio=$prio ${FAILBACK:-}" >> "$WORK/$n.conf"
	printf '%s\n' "$@" >> "$WORK/$n.conf"
}
# up NODE: a program on NODE keeps its node up (a pingpong server that
# waits for a client that never comes), its log in $WORK/NODE.log
up() {
	rm -f "$TB/$1.stats" "$TB/$1.stats.json"
	(SRNIC_LOG=1 SRNIC_CONF_OVERRIDE=$WORK/$1.conf timeout -k 5 300 \
		"$SRNIC" exec "$1" -- ibv_rc_pingpong -g 1 -p 18900 >> "$WORK/$1.log" 2>&1 &)
}
kill_node() { kill -9 $(ip netns pids "$SRNIC_NS-$1" 2>/dev/null) 2>/dev/null || true; }
# role NODE: its role for the service and the holder it knows, from its
# counters ("holder 10.55.0.2" or "standby 10.55.0.2" or "client ...")
role() { counter "$1" "role holder" $SVC; }
# wait_role NODE REGEX SECS: until role NODE matches
wait_role() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		role "$1" | grep -Eq "$2" && return 0
		sleep 0.1
	done
	echo "--- $1: $(role "$1")"; tail -5 "$WORK/$1.log"
	return 1
}
# took NODE SINCE WHAT: ms from SINCE (date +%s%3N) to NODE's last log
# line matching WHAT
took() {
	local t
	t=$(grep -E "$3" "$WORK/$1.log" | tail -1 | cut -c1-12)
	[ -n "$t" ] || { echo 999999; return; }
	echo $(( $(date -d "$t" +%s%3N) - $2 ))
}
holders() { for n in b c; do role $n; done | grep -c '^holder'; }

# 1
for n in a b c; do conf $n; up $n; done
wait_role b "^holder 10.55.0.2$" 5 || fail "b does not hold web"
wait_role c "^standby 10.55.0.2$" 5 || fail "c does not stand by for b"
wait_role a "^client 10.55.0.2$" 5 || fail "a did not learn web's holder"
echo "1. b holds web, c stands by, a knows: ok"

# 2
t0=$(date +%s%3N); kill_node b
wait_role c "^holder 10.55.0.3$" 5 || fail "c did not take web over"
ms=$(took c "$t0" "service web: holding it")
echo "2. b killed: c holds web after $ms ms"
[ "$ms" -le 1000 ] || fail "takeover took $ms ms, over 1 s"
wait_role a "^client 10.55.0.3$" 3 || fail "a does not see c as web's holder"

# 3
up b
wait_role b "^holder 10.55.0.2$" 5 || fail "b did not take web back"
wait_role c "^standby 10.55.0.2$" 5 || fail "c did not step down"
[ "$(holders)" = 1 ] || fail "two holders after failback"
echo "3. b back: b holds web again, c steps down: ok"

# 4
t0=$(date +%s%3N)
"$SRNIC" testbed fault b 0 down; "$SRNIC" testbed fault b 1 down
wait_role c "^holder 10.55.0.3$" 5 || fail "c did not take web while b was cut off"
sleep "$(awk -v t="$t0" -v n="$(date +%s%3N)" 'BEGIN { d = 1 - (n - t) / 1000; print (d > 0 ? d : 0) }')"
"$SRNIC" testbed fault b 0 up; "$SRNIC" testbed fault b 1 up
sleep 1.5
h=$(holders)
echo "4. after a 1 s partition: b $(role b), c $(role c), a $(role a): $h holder(s)"
[ "$h" = 1 ] || fail "$h holders after the partition"
holder=$(for n in b c; do role $n; done | awk '$1 == "holder" { print $2 }')
[ "$(role a)" = "client $holder" ] || fail "a sees $(role a), the holder is $holder"

# 5
for n in b c; do kill_node $n; done
sleep 0.5
for n in b c; do conf $n "svc_dead_ms = 50"; : > "$WORK/$n.log"; up $n; done
wait_role b "^holder 10.55.0.2$" 5 || fail "b does not hold web (svc_dead_ms 50)"
wait_role c "^standby 10.55.0.2$" 5 || fail "c does not stand by (svc_dead_ms 50)"
sleep 0.5
t0=$(date +%s%3N); kill_node b
wait_role c "^holder 10.55.0.3$" 5 || fail "c did not take web over (svc_dead_ms 50)"
ms=$(took c "$t0" "service web: holding it")
echo "5. svc_dead_ms 50: takeover after $ms ms"
[ "$ms" -le 250 ] || fail "tuned takeover took $ms ms, over 250 ms"

# 6
kill_node c
sleep 0.5
FAILBACK=failback=expire
for n in c; do conf $n; : > "$WORK/$n.log"; up $n; done
wait_role c "^holder 10.55.0.3$" 5 || fail "c alone does not hold web"
conf b; up b
# (expire waits for the holder's connections to close: c has none bound,
# so b takes web back; e2e/36 has one last through b's return)
wait_role b "^holder 10.55.0.2$" 5 || fail "failback=expire: b did not take web back from c, which has no connection"
wait_role c "^standby 10.55.0.2$" 5 || fail "failback=expire: c did not step down"
echo "6. failback=expire: with no connection bound at c, b back takes web: ok"
exit 0
