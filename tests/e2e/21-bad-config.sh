#!/usr/bin/env bash
# A bad node configuration gives a clear srnic error, and the program fails
# cleanly: non-zero exit, no crash (exit < 128), no hang (timeout).  Each
# case runs on node a with SRNIC_CONF_OVERRIDE pointing at a broken copy of
# a's configuration (see ./srnic), so the testbed itself stays as it is.
set -u
. "$(dirname "$0")/../lib.sh"
# (a program's own configuration is what is tested: where the testbed runs
# srnicd, the program would attach to it and use srnicd's instead)
srnicd_stop
trap srnicd_restart EXIT

WORK=$LOGDIR/21-bad-config.d
rm -rf "$WORK"; mkdir -p "$WORK"
CONF=$(node_conf a)
[ -r "$CONF" ] || fail "no configuration for node a ($CONF): is the testbed up?"
errors=0

bad() { echo "not ok - $*"; errors=$((errors + 1)); }

# expect NAME CONF REGEX... -- CMD...: CMD on a with CONF fails cleanly and
# prints a line matching every REGEX.
expect() {
	local name=$1 conf=$2 rc=0 out re res=()
	shift 2
	while [ "$1" != "--" ]; do res+=("$1"); shift; done
	shift
	out=$(SRNIC_CONF_OVERRIDE=$conf on a 20 -- "$@" 2>&1) || rc=$?
	printf '%s\n' "$out" > "$WORK/$name.out"
	echo "--- $name: $* (exit $rc)"
	printf '%s\n' "$out" | sed 's/^/    /'
	if [ $rc = 0 ]; then
		bad "$name: exited 0"
	elif [ $rc = 124 ] || [ $rc -ge 128 ]; then
		bad "$name: hung or crashed (exit $rc)"
	fi
	for re in "${res[@]}"; do
		grep -Eq -- "$re" <<<"$out" || bad "$name: no line matching /$re/"
	done
	[ $rc != 0 ] && [ $rc != 124 ] && [ $rc -lt 128 ] && echo "ok - $name fails cleanly"
}

# The unbroken configuration works (so what fails below is the breakage).
rc=0
out=$(SRNIC_CONF_OVERRIDE=$CONF on a 20 -- ibv_devinfo 2>&1) || rc=$?
if [ $rc = 0 ] && grep -q "srnic0" <<<"$out"; then
	echo "ok - ibv_devinfo with a's own configuration works"
else
	printf '%s\n' "$out"; bad "ibv_devinfo with a's own configuration: exit $rc"
fi

# 1. No configuration file at all.
missing=$WORK/no-such-dir/srnic.conf
expect missing-ibv_devinfo "$missing" \
	"^srnic: .*$missing" -- ibv_devinfo
expect missing-rc_pingpong "$missing" \
	"^srnic: .*$missing" "Couldn't get context" -- ibv_rc_pingpong -g 1

# 2. A key srnic does not know: the file and line are named.
{ cat "$CONF"; echo "frobnicate = 3"; } > "$WORK/unknown-key.conf"
line=$(wc -l < "$WORK/unknown-key.conf")
expect unknown-key "$WORK/unknown-key.conf" \
	"^srnic: $WORK/unknown-key.conf:$line: unknown key" \
	"Couldn't (get context|allocate PD)" -- ibv_rc_pingpong -g 1

# 3. Port lines DPDK cannot make a port of: a driver that does not exist,
#    and a real driver with an argument it refuses.  The configuration
#    parses, so the error comes when the engine starts: at the first CQ.
sed 's/^port = .*/port = net_nosuchpmd0,foo=bar/' "$CONF" > "$WORK/bad-driver.conf"
expect bad-port-driver "$WORK/bad-driver.conf" \
	"^srnic: .*$WORK/bad-driver.conf" "Couldn't create CQ" \
	-- ibv_rc_pingpong -g 1
sed 's/^port = \(net_memif0\),.*/port = \1,role=sideways/' "$CONF" > "$WORK/bad-args.conf"
grep -q "role=sideways" "$WORK/bad-args.conf" || fail "could not write bad-args.conf"
expect bad-port-args "$WORK/bad-args.conf" \
	"^srnic: .*$WORK/bad-args.conf" "Couldn't create CQ" \
	-- ibv_rc_pingpong -g 1

# 4. Striping weights: out of range, and before any port line.
{ cat "$CONF"; echo "weight = 17"; } > "$WORK/weight-big.conf"
line=$(wc -l < "$WORK/weight-big.conf")
expect weight-out-of-range "$WORK/weight-big.conf" \
	"^srnic: $WORK/weight-big.conf:$line: weight: 1 to 16" -- ibv_devinfo
{ echo "weight = 2"; cat "$CONF"; } > "$WORK/weight-first.conf"
expect weight-before-port "$WORK/weight-first.conf" \
	"^srnic: $WORK/weight-first.conf:1: weight: goes after the port" \
	-- ibv_devinfo

# 5. Values out of their range: named with what the key takes.
{ cat "$CONF"; echo "ack_delay_us = 5000"; } > "$WORK/ack-delay.conf"
line=$(wc -l < "$WORK/ack-delay.conf")
expect ack-delay-out-of-range "$WORK/ack-delay.conf" \
	"^srnic: $WORK/ack-delay.conf:$line: ack_delay_us: 0 to 200" -- ibv_devinfo
{ cat "$CONF"; echo "zero_copy = maybe"; } > "$WORK/zero-copy.conf"
line=$(wc -l < "$WORK/zero-copy.conf")
expect zero-copy-not-yes-no "$WORK/zero-copy.conf" \
	"^srnic: $WORK/zero-copy.conf:$line: zero_copy: yes or no" -- ibv_devinfo

# 6. memif's own zero-copy mode, which DPDK 22.11 gets wrong (config.c).
sed 's/^\(port = net_memif0,.*\)$/\1,zero-copy=yes/' "$CONF" > "$WORK/memif-zc.conf"
line=$(grep -n "^port = net_memif0,.*zero-copy=yes$" "$WORK/memif-zc.conf" | cut -d: -f1)
[ -n "$line" ] || fail "could not write memif-zc.conf"
expect memif-zero-copy-refused "$WORK/memif-zc.conf" \
	"^srnic: $WORK/memif-zc.conf:$line: port: memif's zero-copy=yes \\(either role\\) is refused" \
	-- ibv_devinfo
# (memif takes the last of a key given twice)
sed 's/^\(port = net_memif0,.*\)$/\1,zero-copy=no,zero-copy=yes/' "$CONF" > "$WORK/memif-zc2.conf"
expect memif-zero-copy-last-wins "$WORK/memif-zc2.conf" \
	"^srnic: $WORK/memif-zc2.conf:$line: port: memif's zero-copy=yes" \
	-- ibv_devinfo
# ...and "zero-copy=no" is no error: ibv_devinfo opens the device
sed 's/^\(port = net_memif0,.*\)$/\1,zero-copy=yes,zero-copy=no/' "$CONF" > "$WORK/memif-zc-no.conf"
out=$(SRNIC_CONF_OVERRIDE="$WORK/memif-zc-no.conf" on a 20 -- ibv_devinfo 2>&1) ||
	bad "memif-zero-copy-no: ibv_devinfo failed: $out"

# 7. The frame CRC: yes or no, after a port line.
{ cat "$CONF"; echo "crc = sometimes"; } > "$WORK/crc.conf"
line=$(wc -l < "$WORK/crc.conf")
expect crc-not-yes-no "$WORK/crc.conf" \
	"^srnic: $WORK/crc.conf:$line: crc: yes or no" -- ibv_devinfo
{ echo "crc = yes"; cat "$CONF"; } > "$WORK/crc-first.conf"
expect crc-before-port "$WORK/crc-first.conf" \
	"^srnic: $WORK/crc-first.conf:1: crc: goes after the port" -- ibv_devinfo

# 7b. Adapters: a device line naming a port that is not there, a device
# past srnic3, a port given twice, srnic0 left with none; a key scope
# that is neither node nor device.
dev_case() {	# name regex line...
	local name=$1 re=$2
	shift 2
	{ cat "$CONF"; printf '%s\n' "$@"; } > "$WORK/$name.conf"
	line=$(wc -l < "$WORK/$name.conf")
	expect "$name" "$WORK/$name.conf" "^srnic: $WORK/$name.conf(:$line)?: $re" -- ibv_devinfo
}
dev_case device-no-port "device: srnic1: no port '7'" "device = srnic1 7"
dev_case device-past-srnic3 "device: srnic1 to srnic3" "device = srnic9 1"
dev_case device-port-twice "device: port 1 is srnic1's already" \
	"device = srnic1 1" "device = srnic2 1"
dev_case device-srnic0-empty "device: srnic0 has no port" "device = srnic1 0,1"
dev_case key-scope-bad "key_scope: node or device" "key_scope = adapter"
# 7c. Services: no priority, one out of range, an unknown setting or
# mode, a service twice, the node's own address.
ownip=$(conf_value "$CONF" ipv4)
dev_case service-no-prio "service: prio=N is required" "service = web 10.9.9.9"
dev_case service-prio-range "service: prio=1 to 255" "service = web 10.9.9.9 prio=0"
dev_case service-unknown "service: unknown setting 'flavour=x'" \
	"service = web 10.9.9.9 prio=5 flavour=x"
dev_case service-bad-mode "service: unknown setting 'mode=bridge'" \
	"service = web 10.9.9.9 prio=5 mode=bridge"
dev_case service-twice "service: web or its address is there already" \
	"service = web 10.9.9.9 prio=5" "service = web 10.9.9.8 prio=5"
dev_case service-own-address "service web: its address is the node's own" \
	"service = web $ownip prio=5"

# 8. The cluster key: missing, not 64 hex digits, readable by others.
key_case() {	# name key-file regex
	{ grep -v '^cluster_key' "$CONF"; echo "cluster_key = $2"; } > "$WORK/$1.conf"
	line=$(wc -l < "$WORK/$1.conf")
	expect "$1" "$WORK/$1.conf" "^srnic: $WORK/$1.conf:$line: cluster_key: $3" \
		-- ibv_devinfo
}
key_case key-missing "$WORK/no-such.key" "cannot read $WORK/no-such.key"
(umask 077; echo "not a key" > "$WORK/short.key")
key_case key-not-hex "$WORK/short.key" ".*must hold 64 hex digits"
(umask 077; printf '%064d\n' 7 | tr 0 g > "$WORK/g.key")
key_case key-bad-digit "$WORK/g.key" ".*must hold 64 hex digits"
printf '%064d\n' 7 > "$WORK/open.key"; chmod 644 "$WORK/open.key"
key_case key-readable "$WORK/open.key" ".*may be read by others"

# 9. A state directory that cannot be made: the engine does not start.
: > "$WORK/a-file"
{ grep -v '^state_dir' "$CONF"; echo "state_dir = $WORK/a-file/state"; } > "$WORK/state.conf"
expect state-dir-impossible "$WORK/state.conf" \
	"^srnic: cannot make the state directory $WORK/a-file/state" \
	"Couldn't create CQ" -- ibv_rc_pingpong -g 1
{ grep -v '^state_dir' "$CONF"; echo "state_dir = relative/dir"; } > "$WORK/state-rel.conf"
line=$(wc -l < "$WORK/state-rel.conf")
expect state-dir-relative "$WORK/state-rel.conf" \
	"^srnic: $WORK/state-rel.conf:$line: state_dir: an absolute path" -- ibv_devinfo

# 10. A node name that would climb out of the state directory.
{ grep -v '^node' "$CONF"; echo "node = .."; } > "$WORK/node-dots.conf"
line=$(wc -l < "$WORK/node-dots.conf")
expect node-name-dots "$WORK/node-dots.conf" \
	"^srnic: $WORK/node-dots.conf:$line: node: 1 to 15 characters, no '/'" -- ibv_devinfo

# 11. No srnicd (stopped above): the node runs in the one program that uses
# the device, and a second program of the node is told so, instead of
# opening the node's ports again.
# (timeout itself in the background, not a subshell: killing it ends the
# program, which lets go of the node)
timeout -k 5 60 "$SRNIC" exec a -- ibv_rc_pingpong -g 1 -p 18650 > "$WORK/first.out" 2>&1 &
first=$!
lock=$(conf_value "$CONF" state_dir)/node.lock
for _ in $(seq 200); do
	[ -e "$lock" ] && ! flock -n "$lock" true && break	# (held: it runs)
	sleep 0.1
done
expect second-program "$CONF" \
	"^srnic: node a is run by another process \(pid [0-9]+\) and no srnicd serves it.*start srnicd" \
	-- ibv_rc_pingpong -g 1 -p 18651 b
kill $first 2>/dev/null; wait $first 2>/dev/null

# 12. A srnicd whose ports it cannot share (a port DPDK does no I/O on in
# another process: net_null here, as af_packet): a program that attaches
# is refused with what to do, and fails at once instead of hanging.
sed 's|^port = [^,]*\([0-9]\),.*|port = net_null\1|' "$CONF" > "$WORK/unshared.conf"
SRNIC_CONF_OVERRIDE=$WORK/unshared.conf "$SRNIC" srnicd a start ||
	fail "srnicd with net_null ports did not start"
out=$(on a 20 -- ibv_rc_pingpong -g 1 -n 2 b 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/    /'
if [ $rc = 0 ] || [ $rc = 124 ] || [ $rc -ge 128 ]; then
	bad "unshareable ports: exit $rc"
elif grep -q "srnicd refused to attach this process: port 0 is neither memif nor tap.*net_tap" <<<"$out"; then
	echo "ok - a program on a srnicd whose ports it cannot share is told what to do"
else
	bad "unshareable ports: no message saying what to do"
fi
"$SRNIC" srnicd a stop

[ $errors = 0 ] || fail "$errors bad-configuration checks failed"
echo "all bad-configuration checks passed"
