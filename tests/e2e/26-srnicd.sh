# srnicd: one node daemon per node, several processes on each at once.
# A testbed of its own, with srnicd in both nodes, on the memif wire or
# the one SRNIC_TEST_WIRE names (26b-srnicd-tap.sh: tap).
#  1. srnicd serves its counters as JSON; garbage on its socket gets an
#     error and a hang-up, and srnicd goes on serving; an attached
#     process hung up on keeps its slot until it exits; a process
#     configured without the node's cluster key does not attach.
#  1a. One program that opens and closes the device 96 times (three
#     times the node's slots), each time a loopback WRITE of 64 KiB with
#     its bytes checked (tests/e2e/reopen.c): every round works (the
#     slot of a closed device goes back as the process attaches again),
#     and the program never held two slots at once.
#  1b. An attached process that writes nonsense into the node's memory
#     (tests/e2e/hostile.c: npeers, its name, its rings) and dies: srnicd
#     lives on, answers in JSON, lets go of its slot, and a pingpong runs.
#  1c. An attached process stopped while it holds the node's shared locks
#     (hostile lock): the node goes on stepping over them (locks_stepped),
#     b stays integrated, and a pingpong, whose connection resolves its
#     peer under the peer table's lock, runs.
#  2. ibv_devinfo in a node with srnicd: PORT_ACTIVE, in under 50 ms of
#     CPU (a process that started a datapath of its own would take
#     hundreds), and again beside the traffic of 3.
#  3. Three processes a node at once, bytes checked: a stress pair across
#     the nodes (RC WRITE, READ, SEND of many sizes over 4 QPs), an
#     ibv_rc_pingpong -c pair across the nodes, and an ibv_rc_pingpong -c
#     pair inside node a (two processes through the node's loopback).
#  3b. Six processes, three a node (mesh): RC WRITE, READ and SEND between
#     every two of them, across the nodes and inside each through its
#     loopback, a datagram from each to each, and one multicast group that
#     all six join and send to; bytes checked.  A WRITE with one process's
#     key on a QP of another process of the same node (of the node of the
#     sender, and of the other node) fails with REM_ACCESS_ERR, and leaves
#     the key's own region alone.
#  3c. Three ib_write_bw pairs a -> b and an ibv_rc_pingpong -c beside them:
#     every program ends well, the pingpong's bytes checked.
#  3d. None of the files DPDK keeps for each process in a node's runtime
#     directory is left once the process has gone.
#  4. SIGKILL of an ib_write_bw client mid-transfer: srnicd lets go of it
#     within 1 s (no process, no QP of its left), its server fails within
#     its retry time, and a pingpong running beside it ends intact.
#  4b. SIGSTOP of a busy process until a stop finds it holding the port
#     token: srnicd kills it within 0.4 s, says why in its log, and a
#     pingpong beside it ends intact.
#  4c. The same with a frozen cgroup (the v1 freezer, or cgroup v2's
#     cgroup.freeze) instead of SIGSTOP: the frozen process does not run,
#     and srnicd kills it the same way (SKIP 4c where neither is there).
#  5. SIGKILL of srnicd: an attached ib_write_bw sees errors (the device is
#     lost) and exits within 2 s; srnicd starts again and serves.
#  5b. SIGKILL of srnicd again, under a mesh of four processes: the new
#     srnicd's BOOTING fails the QPs of both processes of b that talked to
#     a's earlier processes within 3 s, and not their QP to each other.
#  6. srnicd stopped cleanly under an attached ib_write_bw: srnicd exits,
#     the program ends with the device lost.
export SRNIC_NS=${SRNIC_NS:-srnic}-d SRNIC_RUN=${SRNIC_RUN:-/run/srnic}-d
. "$(dirname "$0")/../lib.sh"

CLIENT="python3 $ROOT/tools/srnicd_client.py"
trap '"$SRNIC" testbed down >/dev/null 2>&1' EXIT
"$SRNIC" testbed down >/dev/null 2>&1
# (queues = 1: every process through the port token, which parts 4b and 4c
# stop a holder of; a steered process holds none and is not killed:
# e2e/49)
"$SRNIC" testbed up --srnicd yes --queues 1 --wire "${SRNIC_TEST_WIRE:-memif}" > /dev/null || fail "testbed with srnicd"

# stats NODE: srnicd's JSON; jq-less checks with python.
stats() { $CLIENT "$TB/$1.sock" stats --json; }
jcheck() {	# NODE PYTHON-EXPR (st is the JSON): true or fail
	stats "$1" | python3 -c "import json,sys; st=json.load(sys.stdin); sys.exit(0 if ($2) else 1)"
}

wait_attached() {	# PROG: until a's srnicd has PROG attached (10 s); its pid
	local pid="" i
	for i in $(seq 100); do
		pid=$(stats a | python3 -c "import json,sys; print(*[p['pid'] for p in json.load(sys.stdin)['processes'] if p['prog'] == '$1'])")
		[ -n "$pid" ] && break
		sleep 0.1
	done
	[ -n "$pid" ] || fail "no $1 attached to a's srnicd: $(stats a)"
	echo "$pid"
}

# 1. counters and bad requests
for _ in $(seq 50); do
	jcheck a "any(p['name'] == 'b' and p['rdma_in'] and p['rdma_out'] for p in st['peers'])" && break
	sleep 0.1
done
jcheck a "any(p['name'] == 'b' and p['rdma_in'] and p['rdma_out'] for p in st['peers'])" ||
	fail "srnicd of a does not report b integrated: $(stats a)"
echo "srnicd a: $(stats a | head -c 300)"
"$SRNIC" stats a | grep -q '^integration b rdma_in yes rdma_out yes' &&
	"$SRNIC" stats a | grep -q '^process [0-9]* pid [0-9]* srnicd' || fail "./srnic stats a (readable)"
# garbage, a bad magic, an unknown operation: an error status each
for raw in 00 "$(printf '%032x' 0)" 444e5253010009001000000000000000; do
	st=$($CLIENT "$TB/a.sock" raw "$raw" 2>&1) || true
	case $st in -*) ;; *) fail "srnicd answered '$raw' with '$st', not an error" ;; esac
done
jcheck a "st['node'] == 'a'" || fail "srnicd stopped serving after bad requests"
# An attached process srnicd hangs up on (it sent nonsense) while it still
# runs keeps its slot, which it may be using mid-burst, until it exits.
$CLIENT "$TB/a.sock" hangup 60000 > "$LOGDIR/d-hangup.out" 2>&1 &
hp=$!
for _ in $(seq 100); do grep -q "hung up" "$LOGDIR/d-hangup.out" && break; sleep 0.1; done
grep -q "hung up" "$LOGDIR/d-hangup.out" || fail "the hang-up client: $(cat "$LOGDIR/d-hangup.out")"
sleep 0.2
jcheck a "any(p['pid'] == $hp for p in st['processes'])" ||
	fail "srnicd released the slot of pid $hp, hung up on but still running"
kill $hp; wait $hp 2>/dev/null
gone=$($CLIENT "$TB/a.sock" gone "$hp" 1000) ||
	fail "srnicd kept the slot of pid $hp after it exited: $gone"
echo "srnicd kept the slot of a process it hung up on until it exited, released it $gone ms after"
# A process configured without the node's cluster key does not attach:
# it would check the control frames it polls for the whole node with
# none (docs/security.md).
grep -v '^cluster_key' "$TB/a.conf" > "$LOGDIR/d-nokey.conf"
if SRNIC_CONF_OVERRIDE="$LOGDIR/d-nokey.conf" timeout -k 5 20 "$SRNIC" exec a -- \
	ibv_rc_pingpong -g 1 -p 18599 > "$LOGDIR/d-nokey.out" 2>&1; then
	fail "a process without the node's cluster key attached: $(cat "$LOGDIR/d-nokey.out")"
fi
grep -q "has a cluster key, this process none" "$LOGDIR/d-nokey.out" ||
	fail "no word of the missing cluster key: $(cat "$LOGDIR/d-nokey.out")"
echo "a process without the node's cluster key: not attached ($(grep -o 'has a cluster key, this process none' "$LOGDIR/d-nokey.out"))"

# 1a. One program opening and closing the device over and over, as
# rdma-core's tests do (one process for all of them: its 32nd opening was
# refused with EUSERS, "Too many users", when a closed device's slot went
# back only at the process's exit).
most0=$(stats a | python3 -c "import json,sys; print(json.load(sys.stdin)['processes_most'])")
timeout -k 5 120 "$SRNIC" exec a -- "$BUILD/tests/e2e/reopen" 96 > "$LOGDIR/d-reopen.out" 2>&1 ||
	{ cat "$LOGDIR/d-reopen.out"; fail "reopen: 96 rounds of open, WRITE, close in one program"; }
grep "^ok" "$LOGDIR/d-reopen.out"
# (its last slot goes as srnicd sees its exit: within a poll of 250 ms)
for _ in $(seq 20); do jcheck a "len(st['processes']) == 1" && break; sleep 0.1; done
jcheck a "st['processes_most'] <= max($most0, 1) and len(st['processes']) == 1" ||
	fail "reopen held more than one slot at once, or left one: $(stats a | head -c 600)"
echo "one program opened and closed the device 96 times: one slot at a time, none left"

# 1b. An attached process that turns on the node (docs/security.md, hole 3)
timeout -k 5 20 "$SRNIC" exec a -- "$BUILD/tests/e2e/hostile" > "$LOGDIR/d-hostile.out" 2>&1 || true
grep -q "^ok - rings of slot" "$LOGDIR/d-hostile.out" ||
	fail "the hostile process did not get to its writes: $(cat "$LOGDIR/d-hostile.out")"
for _ in $(seq 50); do
	jcheck a "not any(p['prog'].startswith('\"') for p in st['processes'])" 2>/dev/null && break
	sleep 0.1
done
jcheck a "not any(p['prog'].startswith('\"') for p in st['processes'])" ||
	fail "srnicd of a, after the hostile process: $(stats a 2>&1 | head -c 600)"
jcheck a "len(st['peers']) <= 64 and any(p['name'] == 'b' for p in st['peers']) and '0.0.0.0' not in [p['ipv4'] for p in st['peers']]" ||
	fail "srnicd's peers after npeers was written: $(stats a | head -c 600)"
pingpong d-hostile-pp 30 ibv_rc_pingpong -g 1 -n 200 -s 4096 ||
	fail "a pingpong after the hostile process"
echo "after a process wrote its rings, name and npeers and died: srnicd serves, its slot is free, a pingpong ran"

# 1c. An attached process stopped holding the node's shared locks
timeout -k 5 60 "$SRNIC" exec a -- "$BUILD/tests/e2e/hostile" lock > "$LOGDIR/d-locked.out" 2>&1 &
lp=$!
for _ in $(seq 100); do grep -q "^ok - holding" "$LOGDIR/d-locked.out" && break; sleep 0.1; done
grep -q "^ok - holding" "$LOGDIR/d-locked.out" ||
	fail "the process that takes the locks: $(cat "$LOGDIR/d-locked.out")"
sleep 1	# (three of a peer's 300 ms silence windows: its HELLOs learned meanwhile)
pingpong d-locked-pp 30 ibv_rc_pingpong -g 1 -n 200 -s 4096 ||
	fail "a pingpong beside a process stopped holding the node's locks"
jcheck a "any(p['name'] == 'b' and p['rdma_in'] and p['rdma_out'] for p in st['peers'])" ||
	fail "a, beside a process stopped holding its locks: $(stats a | head -c 600)"
# (one stopped while its datapath held the port token is killed by
# srnicd, as in 4b, and its locks go to the next taker: nothing stepped)
if pkill -9 -f "tests/e2e/hostile lock"; then
	jcheck a "st['locks_stepped'] > 0" || fail "no lock stepped over: $(stats a | head -c 600)"
	echo "beside a process stopped holding the node's locks: $(stats a | python3 -c "import json,sys; print(json.load(sys.stdin)['locks_stepped'])") steps over them, b integrated, a pingpong ran"
else
	echo "the process stopped holding the locks held the port token too: srnicd killed it (SKIP of the steps over)"
fi
wait $lp 2>/dev/null || true

# 2. ibv_devinfo (again under traffic, in 3.): the time of the program
# itself, not of ./srnic exec's namespace set-up.  Beside six busy pollers
# on two CPUs, the wall time is mostly waiting for a CPU, and even the CPU
# time grows (18 ms alone, 44 ms there in one run): there it must stay
# under 100 ms of CPU and 1 s of wall time.
devinfo() {	# prints "WALL_MS CPU_MS"; fails on a bad answer
	local out
	out=$(on a 10 -- bash -c "TIMEFORMAT='%3R %3U %3S'; time ibv_devinfo" 2>&1) ||
		fail "ibv_devinfo with srnicd: $out"
	echo "$out" | grep -q 'PORT_ACTIVE' || fail "ibv_devinfo: port not active"
	echo "$out" | tail -1 | awk '{printf "%d %d", $1 * 1000, ($2 + $3) * 1000}'
}
# (a provider built with AddressSanitizer starts five times slower)
slow=1
ldd "$BUILD/provider/libsrnic-rdmav34.so" | grep -q libasan && slow=5
# (CPU time, not wall time, which waits for a CPU when the machine is
# busy: 51 ms of wall for 30 of CPU once beside other work)
read -r wall cpu <<< "$(devinfo)"
echo "ibv_devinfo with srnicd: $wall ms ($cpu ms of CPU)"
[ "$cpu" -lt $((50 * slow)) ] && [ "$wall" -lt $((500 * slow)) ] ||
	fail "ibv_devinfo took $wall ms, $cpu ms of CPU (limits $((500 * slow)), $((50 * slow)))"

# 3. three processes a node, bytes checked
timeout -k 5 60 "$SRNIC" exec b -- "$BUILD/tests/e2e/stress" -q 4 -n 3000 > "$LOGDIR/d-stress.b" 2>&1 &
s1=$!
timeout -k 5 60 "$SRNIC" exec b -- ibv_rc_pingpong -g 1 -c -n 2000 -s 4096 -p 18600 > "$LOGDIR/d-pp.b" 2>&1 &
s2=$!
timeout -k 5 60 "$SRNIC" exec a -- ibv_rc_pingpong -g 1 -c -n 1000 -s 4096 -p 18700 > "$LOGDIR/d-lo.s" 2>&1 &
s3=$!
# (the pingpongs' clients try to connect once)
wait_listen b 18600 && wait_listen a 18700 || fail "the pingpong servers do not listen"
timeout -k 5 60 "$SRNIC" exec a -- "$BUILD/tests/e2e/stress" -q 4 -n 3000 b > "$LOGDIR/d-stress.a" 2>&1 &
c1=$!
timeout -k 5 60 "$SRNIC" exec a -- ibv_rc_pingpong -g 1 -c -n 2000 -s 4096 -p 18600 b > "$LOGDIR/d-pp.a" 2>&1 &
c2=$!
timeout -k 5 60 "$SRNIC" exec a -- ibv_rc_pingpong -g 1 -c -n 1000 -s 4096 -p 18700 a > "$LOGDIR/d-lo.c" 2>&1 &
c3=$!
sleep 1.5
read -r wall cpu <<< "$(devinfo)"
echo "ibv_devinfo beside three pairs at work: $wall ms, $cpu ms of CPU"
[ "$cpu" -lt $((100 * slow)) ] && [ "$wall" -lt $((1000 * slow)) ] ||
	fail "ibv_devinfo under traffic: $wall ms, $cpu ms of CPU (limits $((1000 * slow)), $((100 * slow)))"
rc=0 i=0
for p in $s1 $s2 $s3 $c1 $c2 $c3; do
	i=$((i + 1))
	wait $p && continue
	echo "process $i of the three pairs (1 stress server on b, 2 pingpong server on b, 3 pingpong server on a, 4 stress client on a, 5 pingpong a to b, 6 pingpong a to a): exit $?"
	rc=1
done
procs=$(stats a | python3 -c "import json,sys; print(json.load(sys.stdin)['processes_most'])")
echo "processes attached to a's srnicd at once, at most: $procs"
[ $rc = 0 ] || { tail -n 5 "$LOGDIR"/d-*; fail "a process of the three pairs failed"; }
[ "$procs" -ge 3 ] || fail "only $procs processes were attached to a's srnicd at once"
for f in d-pp.a d-pp.b d-lo.s d-lo.c; do pingpong_ok "$LOGDIR/$f" || fail "$f"; done
grep -q ' 0 bad' "$LOGDIR/d-stress.a" || { tail -3 "$LOGDIR/d-stress.a"; fail "stress across srnicd: bad data"; }
echo "three pairs at once: $(grep -h 'iters in' "$LOGDIR/d-lo.c")  (a to a, through the loopback)"

# 3b. a mesh of six processes, keys across processes
mesh=$TB/mesh
rm -rf "$mesh"; mkdir -p "$mesh"
pids=""
for i in 0 1 2 3 4 5; do
	n=a; [ $i -ge 3 ] && n=b
	k=""; [ $i = 0 ] && k=-k
	timeout -k 5 90 "$SRNIC" exec $n -- "$BUILD/tests/e2e/mesh" $k "$mesh" $i 6 > "$LOGDIR/d-mesh.$i" 2>&1 &
	pids="$pids $!"
done
rc=0
for p in $pids; do wait $p || rc=1; done
[ $rc = 0 ] || { grep -h "not ok\|mesh" "$LOGDIR"/d-mesh.*; fail "the mesh of six processes failed"; }
grep -q "^ok .*key of process .*our node.*remote access error" "$LOGDIR/d-mesh.0" &&
	grep -q "^ok .*key of process .*another node.*remote access error" "$LOGDIR/d-mesh.0" ||
	fail "the key checks did not run: $(grep -h key "$LOGDIR/d-mesh.0")"
echo "mesh of six processes: $(grep -h '^# ' "$LOGDIR"/d-mesh.* | awk '{c += $2; f += $4} END {print c " checks, " f " failed"}')"

# 3c. the issue's unmodified programs several a node: three ib_write_bw
#     pairs a -> b on distinct ports and an ibv_rc_pingpong -c beside them
#     (five busy processes a node on two CPUs: what once ran a pingpong
#     out of retries, docs/performance.md)
three_pairs() {	# status 0 when every program of them exited 0
	local pids="" i p rc=0
	for i in 0 1 2; do
		timeout -k 5 60 "$SRNIC" exec b -- ib_write_bw -s 65536 -D 4 -p $((18515 + i)) > "$LOGDIR/d-bw3.$i.b" 2>&1 &
		pids="$pids $!"
	done
	timeout -k 5 60 "$SRNIC" exec b -- ibv_rc_pingpong -g 1 -c -n 10000 -s 4096 -p 18600 > "$LOGDIR/d-pp3.b" 2>&1 &
	pids="$pids $!"
	for i in 0 1 2; do wait_listen b $((18515 + i)) || fail "ib_write_bw server $i does not listen"; done
	wait_listen b 18600 || fail "the pingpong server does not listen"
	for i in 0 1 2; do
		timeout -k 5 60 "$SRNIC" exec a -- ib_write_bw -s 65536 -D 4 -p $((18515 + i)) --report_gbits b > "$LOGDIR/d-bw3.$i.a" 2>&1 &
		pids="$pids $!"
	done
	sleep 1.5	# (the pairs at full speed: ib_write_bw -D measures after 2 s)
	timeout -k 5 60 "$SRNIC" exec a -- ibv_rc_pingpong -g 1 -c -n 10000 -s 4096 -p 18600 b > "$LOGDIR/d-pp3.a" 2>&1 &
	pids="$pids $!"
	for p in $pids; do wait $p || rc=1; done
	return $rc
}
rc=0
three_pairs || rc=1
# (once more if perftest could not time itself, lib.sh's clock_unsure,
# and the pingpong beside the pairs, which nothing of perftest's stops,
# did its part)
if [ $rc != 0 ] && clock_unsure "$LOGDIR"/d-bw3.* &&
	pingpong_ok "$LOGDIR/d-pp3.a" 2>/dev/null &&
	pingpong_ok "$LOGDIR/d-pp3.b" 2>/dev/null; then
	echo "three ib_write_bw pairs: perftest could not time itself, once more"
	rc=0
	three_pairs || rc=1
fi
[ $rc = 0 ] || { programs_failed "$LOGDIR"/d-bw3.* "$LOGDIR"/d-pp3.*; fail "three ib_write_bw pairs and a pingpong: a program failed"; }
pingpong_ok "$LOGDIR/d-pp3.a" && pingpong_ok "$LOGDIR/d-pp3.b" || fail "the pingpong beside three ib_write_bw pairs"
sums=$(for i in 0 1 2; do awk '$1 == 65536 && NF >= 5 {print $4}' "$LOGDIR/d-bw3.$i.a"; done | xargs)
[ "$(echo $sums | wc -w)" = 3 ] || fail "three ib_write_bw pairs: results '$sums'"
echo "three ib_write_bw pairs (Gb/s: $sums) and a pingpong beside them: $(grep -h 'iters in' "$LOGDIR/d-pp3.a")"

# 3d. What DPDK leaves of each process in the node's runtime directory
#     (a copy of each memory list, fbarray_<list>_<pid>) goes when the
#     process goes: none is left of the dozens that ran (a pid wrapped
#     around to one with files left made EAL fail, src/engine/eal_files.c).
for n in a b; do
	prefix=$(sed -n 's/.*(DPDK prefix \(srnicd-[^)/]*\)).*/\1/p' "$TB/$n.srnicd.log" | tail -1)
	[ -d "/run/dpdk/$prefix" ] || fail "no runtime directory /run/dpdk/$prefix for $n"
	left=""
	for f in "/run/dpdk/$prefix"/fbarray_*_*; do
		[ -e "$f" ] || continue
		kill -0 "${f##*_}" 2>/dev/null || left="$left ${f##*/}"
	done
	[ -z "$left" ] || fail "$n's runtime directory keeps exited processes' files:$left"
done
echo "no file of an exited process is left in a's or b's DPDK runtime directory"

# victim_pair BW PP: an ib_write_bw pair a -> b for 8 s and a pingpong
# beside it (logs $LOGDIR/BW.{a,b}, PP.{a,b}; pids sb sp cb cp); once a's
# ib_write_bw is attached and a second into its transfer, its pid is in
# victim.
victim_pair() {	# NAME_BW NAME_PP [SECONDS of ib_write_bw, 8]
	local secs=${3:-8} try
	for try in 1 2 3; do
		timeout -k 5 $((secs + 22)) "$SRNIC" exec b -- ib_write_bw -D "$secs" -s 65536 > "$LOGDIR/$1.b" 2>&1 &
		sb=$!
		timeout -k 5 30 "$SRNIC" exec b -- ibv_rc_pingpong -g 1 -c -n 20000 -s 1024 -p 18800 > "$LOGDIR/$2.b" 2>&1 &
		sp=$!
		wait_listen b 18515 && wait_listen b 18800 || fail "the servers do not listen"
		timeout -k 5 $((secs + 22)) "$SRNIC" exec a -- ib_write_bw -D "$secs" -s 65536 b > "$LOGDIR/$1.a" 2>&1 &
		cb=$!
		timeout -k 5 30 "$SRNIC" exec a -- ibv_rc_pingpong -g 1 -c -n 20000 -s 1024 -p 18800 b > "$LOGDIR/$2.a" 2>&1 &
		cp=$!
		victim=$(wait_attached ib_write_bw) || exit 1
		sleep 1	# (mid-transfer)
		kill -0 "$victim" 2>/dev/null &&
			return 0
		# (gone already: perftest that could not time itself, lib.sh's
		# clock_unsure, is tried again; anything else fails here, not
		# as the case's own finding)
		clock_unsure "$LOGDIR/$1.a" "$LOGDIR/$1.b" || {
			programs_failed "$LOGDIR/$1.a" "$LOGDIR/$1.b"
			fail "$1: ib_write_bw (pid $victim) died a second into its transfer"
		}
		echo "$1: ib_write_bw could not time itself, once more"
		kill $sb $sp $cb $cp 2>/dev/null
		wait $sb $sp $cb $cp 2>/dev/null
	done
	fail "$1: ib_write_bw could not time itself in $try tries"
}

# 4. SIGKILL one process mid-transfer
victim_pair d-bw d-pp2
kill -9 $victim
gone=$($CLIENT "$TB/a.sock" gone "$victim" 1000) ||
	fail "srnicd still holds the killed process $victim after 1 s: $(stats a)"
echo "srnicd let go of the killed ib_write_bw (pid $victim) $gone ms after the kill"
jcheck a "sum(p['qps'] for p in st['processes']) <= 2" ||
	fail "QPs of the killed process are left: $(stats a)"
wait $cb 2>/dev/null
t0=$(date +%s)
wait $sb && fail "the killed client's server did not see an error"
echo "its server failed after $(( $(date +%s) - t0 )) s"
wait $cp || fail "the pingpong beside the killed process failed"
wait $sp || fail "the pingpong server beside the killed process failed"
pingpong_ok "$LOGDIR/d-pp2.a" && pingpong_ok "$LOGDIR/d-pp2.b" || fail "pingpong beside the kill"

# 4b. SIGSTOP a busy process until a stop finds it holding the port token:
#     srnicd kills it within 0.4 s (a stop that finds it without the token
#     is left alone), and a pingpong beside it ends intact (the node's port
#     I/O and HELLOs went on, or its QPs and the peer's would have failed).
victim_pair d-stop.bw d-stop.pp
# (a stop that finds it without the token: srnicd leaves it alone, and
# it goes on after 0.4 s)
caught="" ms=""
for try in $(seq 100); do
	kill -STOP "$victim"
	t0=$(date +%s%N)
	for _ in $(seq 40); do kill -0 "$victim" 2>/dev/null || break; sleep 0.01; done
	if ! kill -0 "$victim" 2>/dev/null; then
		caught=$try ms=$((($(date +%s%N) - t0) / 1000000))
		break
	fi
	kill -CONT "$victim"
	sleep 0.02
done
[ -n "$caught" ] || fail "ib_write_bw (pid $victim), stopped 100 times, was never killed: no stop found it holding the port token, or srnicd let it keep it"
echo "ib_write_bw (pid $victim), stopped with the port token (stop $caught), was killed by srnicd within $ms ms"
grep -q "pid $victim) stopped for .* killed" "$TB/a.srnicd.log" || fail "srnicd's log does not say why it killed $victim"
wait $cb 2>/dev/null
kill $sb 2>/dev/null; wait $sb 2>/dev/null
wait $cp || fail "the pingpong beside the stopped process failed"
wait $sp || fail "the pingpong server beside the stopped process failed"
pingpong_ok "$LOGDIR/d-stop.pp.a" && pingpong_ok "$LOGDIR/d-stop.pp.b" || fail "pingpong beside the stop"
jcheck a "st['stopped_killed'] >= 1" || fail "srnicd does not count the kill: $(stats a)"

# 4c. The same, frozen: a cgroup of its own, frozen until a freeze finds
#     it holding the port token (each try thawed after 0.4 s otherwise).
CG=""
if [ -w /sys/fs/cgroup/freezer ]; then
	CG=/sys/fs/cgroup/freezer/srnic-test-$$
	mkdir -p "$CG" || CG=""
	freeze() { echo "$1" > "$CG/freezer.state"; }	# FROZEN or THAWED
	join_cg() { echo "$1" > "$CG/cgroup.procs"; }
else
	for u in /sys/fs/cgroup/unified /sys/fs/cgroup; do
		[ -e "$u/cgroup.controllers" ] || continue
		CG=$u/srnic-test-$$
		mkdir -p "$CG" || CG=""
		break
	done
	freeze() { [ "$1" = FROZEN ] && echo 1 > "$CG/cgroup.freeze" || echo 0 > "$CG/cgroup.freeze"; }
	join_cg() { echo "$1" > "$CG/cgroup.procs"; }
fi
if [ -z "$CG" ]; then
	echo "SKIP 4c: no cgroup freezer here"
else
	trap 'freeze THAWED 2>/dev/null; rmdir "$CG" 2>/dev/null; "$SRNIC" testbed down >/dev/null 2>&1' EXIT
	# (a frozen try that finds it without the token costs 0.3 s, and
	# slows its transfer: 20 s of it leave room for 60 tries)
	victim_pair d-frz.bw d-frz.pp 20
	join_cg "$victim" || fail "ib_write_bw (pid $victim) does not join $CG"
	# (srnicd's log says when it kills: a frozen process only dies once
	# thawed, as the v1 freezer holds even SIGKILL; the token is the
	# node's again at the kill)
	caught="" ms=""
	for try in $(seq 100); do
		kill -0 "$victim" 2>/dev/null || break
		freeze FROZEN
		t0=$(date +%s%N)
		for _ in $(seq 30); do
			grep -q "pid $victim) stopped for .* killed" "$TB/a.srnicd.log" && break
			sleep 0.01
		done
		if grep -q "pid $victim) stopped for .* killed" "$TB/a.srnicd.log"; then
			caught=$try ms=$((($(date +%s%N) - t0) / 1000000))
			break
		fi
		freeze THAWED
		sleep 0.02
	done
	freeze THAWED
	[ -n "$caught" ] || fail "ib_write_bw (pid $victim), frozen $try times, was never killed"
	for _ in $(seq 100); do kill -0 "$victim" 2>/dev/null || break; sleep 0.01; done
	kill -0 "$victim" 2>/dev/null && fail "ib_write_bw (pid $victim), killed frozen, still runs 1 s after its thaw"
	echo "ib_write_bw (pid $victim), frozen with the port token (freeze $caught), was killed by srnicd within $ms ms"
	wait $cb 2>/dev/null
	kill $sb 2>/dev/null; wait $sb 2>/dev/null
	wait $cp || fail "the pingpong beside the frozen process failed"
	wait $sp || fail "the pingpong server beside the frozen process failed"
	pingpong_ok "$LOGDIR/d-frz.pp.a" && pingpong_ok "$LOGDIR/d-frz.pp.b" || fail "pingpong beside the freeze"
	rmdir "$CG" 2>/dev/null
	trap '"$SRNIC" testbed down >/dev/null 2>&1' EXIT
fi

# bw_attached NAME: an ib_write_bw pair b <- a for 10 s, its client attached
# to a's srnicd and a second into its transfer (server pid sb, client cb)
bw_attached() {
	timeout -k 5 30 "$SRNIC" exec b -- ib_write_bw -D 10 -s 65536 > "$LOGDIR/$1.b" 2>&1 &
	sb=$!
	wait_listen b 18515 || fail "ib_write_bw's server does not listen"
	timeout -k 5 30 "$SRNIC" exec a -- ib_write_bw -D 10 -s 65536 b > "$LOGDIR/$1.a" 2>&1 &
	cb=$!
	# (attached, or it would find no srnicd and run the node itself)
	wait_attached ib_write_bw > /dev/null
	sleep 1
}

# 5. SIGKILL srnicd under an attached process
bw_attached d-bw2
"$SRNIC" srnicd a kill
t0=$(date +%s%N)
wait $cb && fail "ib_write_bw on a went on without srnicd"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
grep -q "srnicd .* is gone" "$LOGDIR/d-bw2.a" || { tail -5 "$LOGDIR/d-bw2.a"; fail "no word of the lost device (exit status $rc)"; }
echo "ib_write_bw on a ended $ms ms after srnicd was killed"
[ "$ms" -lt 2000 ] || fail "it took $ms ms (limit 2000)"
kill $sb 2>/dev/null; wait $sb 2>/dev/null
"$SRNIC" srnicd a start || fail "srnicd of a did not start again"
jcheck a "st['node'] == 'a'" || fail "the new srnicd does not serve"

# 5b. SIGKILL srnicd under a mesh of four processes, two a node, that hold
#     their QPs with receives posted: when a's new srnicd announces itself
#     (BOOTING), the QPs of both processes of b to a's dead ones fail at
#     once (at most one of them polls b's ports: the other learns of it
#     from the poller), and their QP to each other does not.  Those QPs
#     send nothing: nothing else would fail them.
hold=$TB/hold
rm -rf "$hold"; mkdir -p "$hold"
for i in 0 1 2 3; do
	n=a; [ $i -ge 2 ] && n=b
	timeout -k 5 90 "$SRNIC" exec $n -- "$BUILD/tests/e2e/mesh" -H 60000 "$hold" $i 4 > "$LOGDIR/d-hold.$i" 2>&1 &
	eval "hold_$i=\$!"
done
for _ in $(seq 300); do
	[ "$(cat "$LOGDIR"/d-hold.* | grep -c '^# .*holding')" = 4 ] && break
	sleep 0.1
done
[ "$(cat "$LOGDIR"/d-hold.* | grep -c '^# .*holding')" = 4 ] ||
	{ tail -n 3 "$LOGDIR"/d-hold.*; fail "the mesh of four did not get to hold its QPs"; }
"$SRNIC" srnicd a kill
wait $hold_0 $hold_1 2>/dev/null	# (a's: the device is lost)
sleep 0.5
kill -0 $hold_2 && kill -0 $hold_3 || fail "a process of b's mesh ended before a's srnicd came back"
"$SRNIC" srnicd a start || fail "srnicd of a did not start again"
t0=$(date +%s%N)
wait $hold_2 && wait $hold_3 || { grep -h "held" "$LOGDIR"/d-hold.*; fail "b's processes did not see their QPs to a fail, and only those"; }
ms=$((($(date +%s%N) - t0) / 1000000))
echo "both processes of b saw their QPs to a's old processes fail $ms ms after a's srnicd started again"
[ "$ms" -lt 3000 ] || fail "it took $ms ms (limit 3000)"
jcheck a "st['node'] == 'a'" || fail "the new srnicd does not serve"

# 6. srnicd stopped (SHUTDOWN) under an attached process: it keeps the
#    process off the ports, says goodbye on its links and exits; the
#    process sees the device lost.
for _ in $(seq 50); do
	jcheck a "any(p['rdma_in'] and p['rdma_out'] for p in st['peers'])" && break
	sleep 0.1
done
bw_attached d-bw3
pid=$(cat "$TB/a.srnicd.pid")
t0=$(date +%s%N)
"$SRNIC" srnicd a stop
kill -0 "$pid" 2>/dev/null && fail "srnicd of a still runs after stop"
ms=$((($(date +%s%N) - t0) / 1000000))
wait $cb && fail "ib_write_bw on a went on after srnicd stopped"
grep -q "srnicd .* is gone" "$LOGDIR/d-bw3.a" || { tail -5 "$LOGDIR/d-bw3.a"; fail "no word of the lost device after the stop"; }
grep -q "node a stopped" "$TB/a.srnicd.log" || fail "srnicd of a did not stop cleanly"
echo "srnicd of a stopped in $ms ms under an attached ib_write_bw, which ended with the device lost"
kill $sb 2>/dev/null; wait $sb 2>/dev/null
exit 0
