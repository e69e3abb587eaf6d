# Sockets over srnic: unmodified TCP programs with rsockets' preload
# library (rdma-core's librspreload: every socket call of the program
# goes to rsockets, over srnic's rdma_cm and srnic0), as
# "./srnic exec --sockets" runs them.
#  - sock_check (tests/e2e/sock_check.c), a plain TCP program: 256 MiB,
#    every byte compared and the SHA-256 on both ends (the ends built
#    with _FORTIFY_SOURCE, as Debian's programs are); a non-blocking
#    connect; shutdown of the sending side, then end of file; ECONNREFUSED
#    where nobody listens over srnic (a kernel listener there, which a
#    fall back to kernel TCP would reach); ECONNRESET or EPIPE sending,
#    polled, to a peer killed mid-stream;
#  - a's ports carried the stream (srnic's counters), not the kernel;
#  - ./srnic demo sockets (examples/sockets-demo.sh) on this testbed, its
#    line checked: a stream's SHA-256, iperf (2) over srnic beside kernel
#    TCP, rstream -f gid.
# (AF_IB, the native family, is 19-rdma-cm.sh's: rstream -f gid.)
. "$(dirname "$0")/../lib.sh"

ls /usr/lib/*/rsocket/librspreload.so > /dev/null 2>&1 ||
	{ echo "SKIP: rsockets' librspreload is not installed (./srnic setup installs it)"; exit 77; }
SC=$BUILD/tests/e2e/sock_check
# (the stream's ends built as Debian builds programs: _FORTIFY_SOURCE)
SCF=$BUILD/tests/e2e/sock_check_fortified
B=10.55.0.2

# sock_on NODE T -- CMD: CMD on NODE with its sockets over srnic (exec:
# in the background, $! is the program's timeout, which a kill reaches)
sock_on() {
	local node=$1 t=$2
	shift 3
	exec timeout -k 5 "$t" "$SRNIC" exec --sockets "$node" -- "$@"
}

sent() { port_sum a tx_bytes; }	# bytes a's ports have sent so far

tx0=$(sent)
sock_on b 120 -- "$SCF" -s 7700 > "$LOGDIR/sock-server.b" 2>&1 &
srv=$!
wait_listen b "$((7700 ^ 0x4000))" || fail "sock_check's server never listened"
(sock_on a 120 -- "$SCF" $B 7700 256) > "$LOGDIR/sock-stream.a" 2>&1 ||
	{ cat "$LOGDIR/sock-stream.a"; fail "sock_check: the stream"; }
checked "$LOGDIR/sock-stream.a" || fail "sock_check: the stream"
grep -q "^# ok 268435456 " "$LOGDIR/sock-server.b" ||
	fail "sock_check's server did not see 256 MiB intact"
grep "rate\|sha256" "$LOGDIR/sock-stream.a"
moved=$(( $(sent) - tx0 ))
echo "a's ports sent $((moved >> 20)) MiB during the stream"
[ "$moved" -ge $((256 << 20)) ] || fail "the stream did not go over srnic ($moved bytes)"
kill $srv 2>/dev/null; wait $srv 2>/dev/null

# (a kernel TCP listener on the port: had rsockets' refusal gone to the
# kernel's TCP instead, the connect would succeed)
timeout -k 5 60 "$SRNIC" exec b -- "$SC" -s 7799 > "$LOGDIR/sock-kernel.b" 2>&1 &
ksrv=$!
wait_listen b 7799 || fail "the kernel listener never listened"
(sock_on a 60 -- "$SC" -r $B 7799) > "$LOGDIR/sock-refused.a" 2>&1
kill $ksrv 2>/dev/null; wait $ksrv 2>/dev/null
checked "$LOGDIR/sock-refused.a" || fail "sock_check: refusal"

# a peer killed mid-stream (SIGKILL: no close of its own)
sock_on b 120 -- "$SC" -s 7701 > "$LOGDIR/sock-kill.b" 2>&1 &
srv=$!
wait_listen b "$((7701 ^ 0x4000))" || fail "sock_check's second server never listened"
sock_on a 90 -- "$SC" -k $B 7701 > "$LOGDIR/sock-kill.a" 2>&1 &
cli=$!
for ((i = 0; i < 100; i++)); do
	grep -q "^# writing" "$LOGDIR/sock-kill.a" 2>/dev/null && break
	sleep 0.1
done
sleep 0.5
pkill -KILL -xf "$SC -s 7701" || fail "no server to kill"
wait $cli || true
wait $srv 2>/dev/null
cat "$LOGDIR/sock-kill.a"
checked "$LOGDIR/sock-kill.a" || fail "sock_check: writes to a killed peer"

# ./srnic demo sockets on this testbed: a stream of 64 MiB, iperf over
# srnic and over kernel TCP, AF_IB by GID; its line checked, and a's
# ports sent the stream and iperf's bytes
tx0=$(sent)
SRNIC_SOCK_NS=${SRNIC_NS:-srnic} SRNIC_SOCK_RUN=${SRNIC_RUN:-/run/srnic} \
	demo_log sockets-demo.sh sk demo --size 64 || fail "./srnic demo sockets"
moved=$(( $(sent) - tx0 ))
echo "a's ports sent $((moved >> 20)) MiB during the demo"
grep -Eq "^sockets: 64 MiB stream sha256 ok, iperf [0-9.]+ Gb/s \(kernel TCP [0-9.?]+\), native AF_IB ok$" \
	"$LOGDIR/sk-demo.log" || fail "the demo's line is not what it must be"
[ "$moved" -ge $((128 << 20)) ] || fail "the demo's streams did not go over srnic ($moved bytes)"
exit 0
