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
#  - socat's server, waiting in select() on its listener, has a client's
#    bytes at once (rsockets alone sees the connection at its 5 s
#    wake-up; srnic's shim, provider/sockets_shim.c, looks every 10 ms),
#    and, waiting with no client, stays idle;
#  - ./srnic demo sockets (examples/sockets-demo.sh) on this testbed, its
#    line checked: socat's stream's SHA-256, iperf (2) over srnic beside
#    kernel TCP, rstream -f gid.
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

# socat's server in select() on its listener: "hello" written out within
# 3.5 s of the client's start (rsockets' own wait wakes 5 s after the
# server began to wait, about when it listened; the client takes about
# 0.5 s to start)
command -v socat > /dev/null || fail "socat is not installed (./srnic setup)"
rm -f "$LOGDIR/hello.b"
sock_on b 60 -- socat -u TCP-LISTEN:7702,reuseaddr OPEN:"$LOGDIR/hello.b",creat \
	> "$LOGDIR/sock-hello.b" 2>&1 &
srv=$!
wait_listen b "$((7702 ^ 0x4000))" || fail "socat's server never listened"
t0=$(date +%s%N)
echo hello | sock_on a 30 -- socat -u STDIN TCP:$B:7702 || fail "socat's client failed"
until grep -qx hello "$LOGDIR/hello.b" 2>/dev/null; do
	[ $(($(date +%s%N) - t0)) -lt 10000000000 ] ||
		{ cat "$LOGDIR/sock-hello.b"; fail "socat's server never wrote the client's bytes"; }
	sleep 0.02
done
ms=$((($(date +%s%N) - t0) / 1000000))
echo "socat's server wrote the client's bytes $ms ms after the client started"
[ $ms -lt 3500 ] || fail "the listener in select() saw its connection late ($ms ms)"
wait $srv 2>/dev/null || true

# a listener that waits is idle: socat's server, in select() on its
# listener (the shim's wait wakes every 10 ms to look at the accept
# queue), takes well under half a core over 2 s, srnic's own threads in it
# included (an rpoll() of rdma-core 44 whose timeout ran out leaves every
# later one spinning: a core)
sock_on b 60 -- socat -u TCP-LISTEN:7703,reuseaddr OPEN:/dev/null > "$LOGDIR/sock-idle.b" 2>&1 &
srv=$!
wait_listen b "$((7703 ^ 0x4000))" || fail "socat's idle server never listened"
spid=$(pgrep -f "^socat -u TCP-LISTEN:7703" | head -1)
[ -n "$spid" ] || fail "no socat server to measure"
cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{print int(($14 + $15) * 1000 / hz)}' "/proc/$1/stat"; }
c0=$(cpu_ms "$spid")
sleep 2
idle=$(($(cpu_ms "$spid") - c0))
echo "socat's idle listener took $idle ms of CPU in 2 s"
[ "$idle" -lt 700 ] || fail "a listener waiting in select() spins ($idle ms of CPU in 2 s)"
kill $srv 2>/dev/null; wait $srv 2>/dev/null || true

# ./srnic demo sockets on this testbed: socat's stream of 64 MiB, iperf over
# srnic and over kernel TCP, AF_IB by GID; its line checked, and a's
# ports sent the stream and iperf's bytes
tx0=$(sent)
SRNIC_SOCK_NS=${SRNIC_NS:-srnic} SRNIC_SOCK_RUN=${SRNIC_RUN:-/run/srnic} \
	demo_log sockets-demo.sh sk demo --size 64 || fail "./srnic demo sockets"
moved=$(( $(sent) - tx0 ))
echo "a's ports sent $((moved >> 20)) MiB during the demo"
grep -Eq "^sockets: socat 64 MiB sha256 ok, iperf [0-9.]+ Gb/s \(kernel TCP [0-9.?]+\), native AF_IB ok$" \
	"$LOGDIR/sk-demo.log" || fail "the demo's line is not what it must be"
[ "$moved" -ge $((128 << 20)) ] || fail "the demo's streams did not go over srnic ($moved bytes)"
exit 0
