# Helpers for end-to-end tests (sourced by tests/e2e/*.sh).
# Each test runs programs on the testbed nodes through ./srnic exec, asserts
# on what they print and how they exit, and leaves no process behind.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SRNIC=$ROOT/srnic
BUILD=${SRNIC_BUILD:-$ROOT/build}
LOGDIR=${SRNIC_TEST_LOGS:-/tmp/${SRNIC_NS:-srnic}-test-logs}
mkdir -p "$LOGDIR"
# The testbed ./srnic uses: it honours SRNIC_NS and SRNIC_RUN, and so does
# everything here (the helpers only ever go through ./srnic).
TB=${SRNIC_RUN:-/run/srnic}/testbed

# node_conf NODE: the node's configuration file.
node_conf() { echo "$TB/$1.conf"; }

# conf_value FILE KEY: KEY's value in a node configuration FILE as the
# engine reads it (srnic-conf: defaults filled in, a line a port for a
# port's keys), as ./srnic reads configurations.
conf_value() { "$BUILD/src/conftool/srnic-conf" "$1" "$2"; }

# srnicd_stop: each node's srnicd, where the testbed runs one, stops (the
# node's programs then run the node themselves).  srnicd_restart [NAME]:
# it starts again, with $LOGDIR/NAME-NODE.conf if NAME is given, else
# with the node's own configuration.
srnicd_stop() {
	local n
	for n in a b; do
		[ -e "$TB/$n.srnicd.pid" ] && "$SRNIC" srnicd $n stop
	done
	return 0
}
srnicd_restart() {
	local n
	for n in a b; do
		[ -e "$TB/$n.srnicd.pid" ] || continue
		"$SRNIC" srnicd $n stop
		SRNIC_CONF_OVERRIDE=${1:+$LOGDIR/$1-$n.conf} "$SRNIC" srnicd $n start ||
			fail "srnicd of $n did not start again"
	done
}

fail() { echo "FAIL: $*" >&2; exit 1; }

# on NODE [timeout] -- CMD...: run CMD on NODE in the foreground.
on() {
	local node=$1 t=60
	shift
	if [ "$1" != "--" ]; then t=$1; shift; fi
	shift
	timeout -k 5 "$t" "$SRNIC" exec "$node" -- "$@"
}

# wait_listen NODE [PORT] (one copy for the tests and the demos)
. "$ROOT/examples/wait-listen.sh"
# oncpu PID... (one copy for the tests and the benchmarks)
. "$ROOT/tests/oncpu.sh"

# pair NAME TIMEOUT CMD...: run CMD as server on b and as client on a (the
# client gets "b" appended) once the server listens, wait for both; logs
# in $LOGDIR/NAME.{a,b}.  Returns non-zero if either side failed.
# PAIR_PORT, if set, is the TCP port the server is ready at.
pair() {
	local name=$1 t=$2 rcb=0 rca=0 pid
	shift 2
	timeout -k 5 "$t" "$SRNIC" exec b -- "$@" > "$LOGDIR/$name.b" 2>&1 &
	pid=$!
	# (PAIR_PORT: the server's port, where another program of the node
	# may listen too; a server that died: its client says so)
	wait_listen b ${PAIR_PORT:-} || true
	timeout -k 5 "$t" "$SRNIC" exec a -- "$@" b > "$LOGDIR/$name.a" 2>&1 || rca=$?
	wait $pid || rcb=$?
	if [ $rca != 0 ] || [ $rcb != 0 ]; then
		echo "--- $name: client (a) exit $rca, server (b) exit $rcb" >&2
		programs_failed "$LOGDIR/$name.a" "$LOGDIR/$name.b"
		if [ -z "${PAIR_AGAIN:-}" ] &&
			clock_unsure "$LOGDIR/$name.a" "$LOGDIR/$name.b"; then
			echo "--- $name: perftest could not time itself: once more" >&2
			PAIR_AGAIN=1 pair "$name" "$t" "$@"
			return
		fi
		return 1
	fi
}

# clock_unsure LOG...: a perftest run in LOG failed to time itself, not
# for anything of the NIC's.  perftest measures the TSC against
# gettimeofday before it runs (-D) or reports, and gives up when the
# samples do not line up ("Correlation coefficient r^2: ... < 0.9",
# then no report): on two busy CPUs a sample the scheduler cut into is
# enough (e2e/26b's three ib_write_bw pairs, one run in four here; its
# victim of a stop, dead before the first stop, in CI).
clock_unsure() {
	grep -qs "^Correlation coefficient r^2: .* < 0.9" "$@"
}

# programs_failed LOG...: what programs that failed said, for the test's
# own log: each LOG's error lines (a program's stderr comes out before its
# buffered stdout, so its last lines may not be them) and its last lines,
# then each node's counters as its engine last wrote them, the lines with
# a value other than 0.
programs_failed() {
	local log n
	for log in "$@"; do
		echo "--- ${log##*/}: errors, then its last lines" >&2
		grep -i -m 8 "fail\|couldn't\|error\|unable\|correlation" "$log" >&2
		tail -n 8 "$log" >&2
	done
	for n in $(cat "$TB/nodes" 2>/dev/null || echo a b); do
		[ -f "$TB/$n.stats" ] || continue
		echo "--- node $n's last counters" >&2
		awk '{for (i = 3; i <= NF; i += 2) if ($i != "0") {print; next}}' \
			"$TB/$n.stats" >&2
	done
}

# checked LOG: a program that prints "ok - ..."/"not ok - ..." lines
# passed every check, and got to its summary line ("# N checks, 0 failed"):
# one that died early prints no "not ok" either.
checked() {
	local log=$1
	if grep -q "^not ok" "$log"; then
		echo "--- failed checks in ${log##*/}:" >&2
		grep "^not ok" "$log" >&2
		return 1
	fi
	grep -q "^# .*checks, 0 failed" "$log" ||
		{ echo "--- ${log##*/} has no summary line" >&2; tail -5 "$log" >&2; return 1; }
}

# pair_checked NAME TIMEOUT PROG ARGS...: PROG (one that prints check
# lines) as server on b and client on a; both sides passed every check.
# Prints each side's counts.
pair_checked() {
	local name=$1 rc=0 side
	pair "$@" || rc=1
	for side in a b; do
		checked "$LOGDIR/$name.$side" || rc=1
	done
	echo "client (a): $(grep -c '^ok' "$LOGDIR/$name.a") ok, $(grep -c '^not ok' "$LOGDIR/$name.a") not ok"
	echo "server (b): $(grep -c '^ok' "$LOGDIR/$name.b") ok, $(grep -c '^not ok' "$LOGDIR/$name.b") not ok"
	return $rc
}

# pingpong_ok LOG: an ibverbs-utils pingpong's log shows its result line
# and no "invalid data in page N" line.  The pingpongs' data check (-c)
# prints that line for a page whose bytes are wrong and still exits 0, so
# the exit status alone says nothing about the data.  (A weak check even
# so: only the server side looks, once at the end, at the first byte of
# each page.  Every byte is srnic_integrity's and the check programs'.)
pingpong_ok() {
	local log=$1
	if grep -q "invalid data" "$log"; then
		echo "--- ${log##*/}: wrong bytes received:" >&2
		grep -m 5 "invalid data" "$log" >&2
		return 1
	fi
	grep -q "iters in" "$log" ||
		{ echo "--- ${log##*/}: no result line" >&2; return 1; }
}

# pingpong NAME TIMEOUT TOOL ARGS...: an ibverbs-utils pingpong (rc, uc, ud,
# srq) between a and b with its data check on (-c is added); fails on
# either side's exit status, missing result line or wrong bytes.
pingpong() {
	local name=$1 t=$2 rc=0 side
	shift 2
	pair "$name" "$t" "$@" -c || rc=1
	for side in a b; do
		pingpong_ok "$LOGDIR/$name.$side" || rc=1
	done
	return $rc
}

# counter_text FILE NAMES OF: counter's reading of the text a stats file
# holds (docs/counters.md, "The text": a record's word, its labels, then
# name value pairs, a list's values after its name).
counter_text() {
	awk -v names="$2" -v of="$3" '
	# (the integration and striping lines of a peer follow its peer line;
	# the node has an integration line of its own)
	$1 == "peer" { peer[$2] = 1 }
	function scoped(   r) {
		r = $1
		if (of == "")
			return r !~ /^(port|queue|loopback|peer|service|process|drop)$/ &&
			       !(r ~ /^(integration|striping)$/ && $2 in peer)
		if (of == "loopback")
			return r == "loopback"
		return r ~ /^(port|peer|service|integration|striping)$/ &&
		       ($2 == of || $3 == of)
	}
	# (the text shows these in hex, the JSON and so counter in decimal)
	function dec(h,   i, d) {
		sub(/^0x/, "", h)
		for (i = 1; i <= length(h); i++)
			d = d * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
		return sprintf("%.0f", d)
	}
	BEGIN { n = split(names, want, " ") }
	scoped() {
		for (i = 2; i < NF; i++)
			for (k = 1; k <= n; k++)
				if ($i == want[k] && !(k in got)) {
					v = $(i + 1)
					if (v ~ /^[0-9]+$/)
						for (j = i + 2; j <= NF && $j ~ /^[0-9]+$/; j++)
							v = v " " $j
					got[k] = want[k] ~ /^(incarnation|groups|term)$/ ? dec(v) : v
				}
	}
	END {
		for (k = 1; k <= n; k++) {
			if (!(k in got))
				exit 1
			out = out (k > 1 ? " " : "") got[k]
		}
		print out
	}' "$1"
}

# ports_tx_bytes NODE: the bytes the node's ports sent so far, all ports
ports_tx_bytes() {
	counter "$1" tx_bytes ports | awk '{for (i = 1; i <= NF; i++) s += $i}
		END {printf "%.0f\n", s}'
}

# counter NODE NAME [OF]: NODE's counter (or state) NAME as
# docs/counters.md names it, from what ./srnic stats NODE --json shows:
# srnicd's answer, or the engine's stats_file.json where no srnicd
# answers; of OF if given: a port's number, "loopback", a peer's name, a
# service's address, a peer's "ipv6" (an IPv6 node's, where its JSON has
# one, written as there), or "ports": every port's, in a list.  A drop:
# drops.REASON.  NAME may be several names ("role holder"): their values
# on one line, of one reading.  A list prints its values on one line, a
# flag yes or no; nothing, and status 1, when the node has no counters yet
# or no such thing.  (No ./srnic: tests poll it.)
counter() {
	local tb=${SRNIC_RUN:-/run/srnic}/testbed/$1
	# Where no srnicd serves the node, its engine rewrites the text as
	# often as the JSON, and awk reads it: a python start costs about
	# 0.4 s of CPU on this kind of machine, which a test that polls a
	# counter would take from the nodes whose timing it measures.
	if [ ! -S "$tb.sock" ] && [ -e "$tb.stats" ] &&
	   [[ $2 != *.* ]] && [ "${3:-}" != ports ]; then
		counter_text "$tb.stats" "$2" "${3:-}"
		return
	fi
	python3 -c '
import json, sys
sys.path.insert(0, sys.argv[1] + "/tools")
import srnicd_client as srnicd
node, names, of = sys.argv[2], sys.argv[3].split(), sys.argv[4:] or [None]
of = of[0]

def read():
    try:
        rep = srnicd.request(node + ".sock", srnicd.header("stats"))
        return json.loads(srnicd.check(rep, "stats").rstrip(b"\0"))
    except (OSError, SystemExit):
        with open(node + ".stats.json") as f:
            return json.load(f)

def show(v):
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list):
        return " ".join(map(str, v))
    return str(v)

try:
    st = read()
    if of == "loopback":
        st = st["loopback"]
    elif of == "ports":
        st = {n: [p[n] for p in st["ports"]] for n in names}
    elif of is not None:
        st = next(o for k in ("ports", "peers", "services") for o in st[k]
                  if of in (str(o.get("port")), o.get("name"), o.get("ipv4"),
                            o.get("ipv6")))
    out = []
    for name in names:
        v = st
        for part in name.split("."):
            v = v[part]
        out.append(show(v))
except (OSError, ValueError, KeyError, StopIteration):
    sys.exit(1)
print(" ".join(out))' "$ROOT" "${SRNIC_RUN:-/run/srnic}/testbed/$1" "$2" ${3+"$3"}
}

# port_sum NODE NAME: counter NAME summed over NODE's ports, an integer
# (awk prints a sum past 2^31 as 1.98861e+10 unless told otherwise)
port_sum() {
	counter "$1" "$2" ports | awk '{for (i = 1; i <= NF; i++) s += $i} END {printf "%.0f\n", s}'
}

# wait_peer NODE PEER [PORTS]: until NODE's counters show PEER heard on
# each of PORTS (default "0 1") and no other, 20 s at most.  Remove the
# nodes' stats files before starting the programs, or an earlier
# process's counters answer.
wait_peer() {
	local i
	for ((i = 0; i < 200; i++)); do
		[ "$(counter "$1" ports_up "$2")" = "${3:-0 1}" ] && return 0
		sleep 0.1
	done
	echo "--- $1 did not hear $2 on ports ${3:-0 1}" >&2
	return 1
}

# Unmodified perftest between a and b (server b, client a):
bw() {	# name tool args...: bandwidth result must be > MIN_GBPS (0.01)
	local name=$1 gbps min=${MIN_GBPS:-0.01}
	shift
	pair "$name" 90 "$@" --report_gbits || fail "$name"
	# columns: bytes iterations peak average msgrate
	gbps=$(awk '$1 ~ /^[0-9]+$/ && NF >= 5 {print $4}' "$LOGDIR/$name.a" | tail -1)
	[ -n "$gbps" ] || fail "$name: no result line"
	echo "$name: $gbps Gb/s"
	awk -v g="$gbps" -v m="$min" 'BEGIN {exit !(g > m)}' || fail "$name: implausible bandwidth $gbps"
}

lat() {	# name tool args...: typical latency between 0.1 us and 100 ms
	local name=$1 us
	shift
	pair "$name" 90 "$@" || fail "$name"
	us=$(awk '$1 ~ /^[0-9]+$/ && NF >= 7 {print $5}' "$LOGDIR/$name.a" | tail -1)
	[ -n "$us" ] || fail "$name: no result line"
	echo "$name: typical $us us"
	awk -v u="$us" 'BEGIN {exit !(u > 0.1 && u < 100000)}' || fail "$name: implausible latency $us"
}

all_sizes() {	# name rows: a -a run printed a result line for every size
	local n
	n=$(awk '$1 ~ /^[0-9]+$/ && NF >= 5' "$LOGDIR/$1.a" | wc -l)
	[ "$n" = "$2" ] || fail "$1: $n result lines, want $2"
}

# capture_write NAME COUNT [FILTER]: ./srnic capture of node a's port 0
# (COUNT frames; FILTER, libpcap's, where the wire takes one) around an
# ib_write_bw of 64 KiB messages from a to b, then every frame checked
# against what perftest set up (tests/e2e/capture_check.py).  The capture
# is $LOGDIR/NAME.pcap; the transfer's logs $LOGDIR/NAME-bw.{a,b}.
# COUNT must pass a whole window of WRITEs (SRNIC_WINDOW, 128 messages of
# 32 packets): a receiver kept off the CPU acks nothing before that (CI
# saw 400 WRITEs and no ACK).  CAPTURE_UDP set: the nodes send in IPv4
# and UDP (encap = udp), which every frame must be, between
# CAPTURE_UDP_NODES (two addresses, then any a's ARP may name besides;
# unset: the tap testbed's; IPv6 ones for a testbed up --ipv6, whose
# frames are then IPv6 and UDP, and next hops found by neighbour
# discovery).  CAPTURE_BW_ARGS: more of ib_write_bw's arguments (-x 1).
# CAPTURE_STRIDE: the payload every WRITE packet but a message's last must
# carry (the testbed's --mtu).
capture_write() {
	local name=$1 count=$2 filter=${3:-} pcap=$LOGDIR/$1.pcap log=$LOGDIR/$1.log
	local cap i
	rm -f "$pcap"
	"$SRNIC" capture a 0 -c "$count" ${filter:+-f "$filter"} -w "$pcap" > "$log" 2>&1 &
	cap=$!
	# (the file appears as the capture starts: dumpcap's, or the node's
	# as it turns its tap on)
	for ((i = 0; i < 200; i++)); do
		[ -e "$pcap" ] && break
		sleep 0.05
	done
	# shellcheck disable=SC2086 # (CAPTURE_BW_ARGS: words)
	if [ ! -e "$pcap" ] || ! pair "$name-bw" 90 ib_write_bw ${CAPTURE_BW_ARGS:-} -n 2000 -s 65536; then
		kill $cap 2>/dev/null; rm -f "$TB/a.capture"; cat "$log" >&2
		fail "$name: the capture did not start, or ib_write_bw failed"
	fi
	wait $cap || { cat "$log" >&2; fail "$name: ./srnic capture"; }
	cat "$log"
	python3 "$ROOT/tests/e2e/capture_check.py" \
		${CAPTURE_STRIDE:+--stride "$CAPTURE_STRIDE"} "$ROOT/tools/wireshark/srnic.lua" \
		"$pcap" "$LOGDIR/$name-bw.a" 65536 ${CAPTURE_UDP:+udp ${CAPTURE_UDP_NODES:-}} ||
		fail "$name: the capture does not match the transfer"
}

# demo_log SCRIPT TAG NAME ARGS...: examples/SCRIPT (a demo) run with ARGS,
# DEMO_SECS (300) at most, its output in $LOGDIR/TAG-NAME.log and echoed after a
# header (without its progress lines); its exit status.
demo_log() {
	local script=$1 tag=$2 name=$3 rc=0
	shift 3
	timeout -k 5 "${DEMO_SECS:-300}" "$ROOT/examples/$script" "$@" > "$LOGDIR/$tag-$name.log" 2>&1 || rc=$?
	echo "--- $name (exit $rc)"
	grep -v '^progress' "$LOGDIR/$tag-$name.log"
	return $rc
}

# four_nodes NS RUN TAG [WIRE]: a four-node testbed (afpacket, or WIRE)
# of the test's own in namespaces NS-* and run directory RUN (a demo's,
# beside the suite's), taken down when the test ends; its log in
# $LOGDIR/TAG-testbed.log.
four_nodes() {
	FOUR_NS=$1 FOUR_RUN=$2
	trap 'SRNIC_NS=$FOUR_NS SRNIC_RUN=$FOUR_RUN "$SRNIC" testbed down >/dev/null 2>&1 || true' EXIT
	SRNIC_NS=$1 SRNIC_RUN=$2 "$SRNIC" testbed down >/dev/null 2>&1 || true
	SRNIC_NS=$1 SRNIC_RUN=$2 "$SRNIC" testbed up --nodes 4 --wire "${4:-afpacket}" \
		> "$LOGDIR/$3-testbed.log" 2>&1 || { cat "$LOGDIR/$3-testbed.log"; fail "four-node testbed"; }
}
