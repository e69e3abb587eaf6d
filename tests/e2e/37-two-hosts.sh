# docs/install.md's "Two hosts over ordinary Ethernet", followed with the
# installed files.  Two network namespaces of its own stand for hosts
# hostA and hostB (not ./srnic testbed's nodes): each has a NIC "eth1", a
# veth into a switch namespace's bridge, with the host's address on it,
# and a mount namespace of its own (overlays on /etc, /usr/local and
# /var/lib, its own /run and /dev, with a hugetlbfs at
# /dev/hugepages) and hostname, so that what the recipe writes stays in
# it.  In each host, as the document says:
#  - what "meson install" put in a staging root (DESTDIR, as 29-install.sh)
#    copied to /, and ldconfig;
#  - the document's own bridge block (br0 takes eth1 and its address), its
#    key block on hostA and the key copied to hostB with mode 0600, its
#    configuration file of each host (with mem_mb = 128: this machine's
#    hugepages are shared), the two names in /etc/hosts;
#  - srnicd refuses to start before the bridge is there, and says so;
#  - srnicd started by the installed unit's commands (ExecStartPre "srnic
#    host up", ExecStart srnicd; no systemd here): its tap is in br0,
#    with the kernel side on the port's MAC with 0x04 flipped, br0 keeps
#    eth1's MAC, ibv_devinfo says PORT_ACTIVE, and each host's counters
#    show the other as a peer;
#  - ibv_rc_pingpong -g 1 -c between the hosts, the data checked;
#  - two processes a host at once: two ibv_rc_pingpong -c pairs, which
#    hostA's srnicd serves at once;
#  - the document's hostfile and mpirun blocks, 2 ranks a host running
#    tests/e2e/mpi_check (every word checked on every rank), mpirun's
#    remote shell a script that enters the other host's namespaces
#    instead of ssh (and --bind-to none: the two hosts share this
#    machine's CPUs); hostA's tap carried the cross-host part of it.
# Blocks are taken from docs/install.md by their "<!-- two-hosts: NAME"
# markers, so the document is what runs.
. "$(dirname "$0")/../lib.sh"

PROG=$BUILD/tests/e2e/mpi_check
for t in ibv_rc_pingpong mpirun nsenter unshare; do
	command -v $t > /dev/null || { echo "SKIP: $t not installed (./srnic setup installs it)"; exit 77; }
done
[ -x "$PROG" ] || { echo "SKIP: $PROG not built (Open MPI's headers were missing at build time)"; exit 77; }
# (each srnicd takes mem_mb of 2 MiB pages: here 128 MiB, half the
# default the document leaves, since other testbeds share them)
MEM_MB=128
free=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
[ "${free:-0}" -ge $MEM_MB ] ||
	{ echo "SKIP: $free free hugepages, the two hosts' srnicd need $MEM_MB"; exit 77; }

DOC=$ROOT/docs/install.md
P=${SRNIC_NS:-srnic}-2h	# namespaces $P-sw, $P-hostA, $P-hostB
HOSTS="hostA hostB"
T=""
PATH_=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

cleanup() {
	local h pids i
	for h in $HOSTS; do
		pids=$(ip netns pids "$P-$h" 2>/dev/null)
		[ -z "$pids" ] || kill $pids 2>/dev/null
	done
	# (srnicd says goodbye on its link; the host's mounts go with the
	# last of its processes)
	for ((i = 0; i < 30; i++)); do
		pids=$(for h in $HOSTS; do ip netns pids "$P-$h" 2>/dev/null; done)
		[ -n "$pids" ] || break
		sleep 0.1
	done
	[ -z "$pids" ] || kill -9 $pids 2>/dev/null
	for h in $HOSTS sw; do
		ip netns del "$P-$h" 2>/dev/null
	done
	[ -z "$T" ] || rm -rf "$T"
	return 0
}
cleanup	# (what a killed run left)
T=$(mktemp -d "/tmp/$P.XXXXXX")
trap cleanup EXIT

# doc_block NAME: the fenced block after docs/install.md's marker
# "<!-- two-hosts: NAME ...".
doc_block() {
	local b
	b=$(awk -v m="<!-- two-hosts: $1 " 'index($0, m) == 1 { f = 1; next }
		f == 1 && /^```/ { f = 2; next } f == 2 && /^```/ { exit }
		f == 2 { print }' "$DOC")
	[ -n "$b" ] || fail "docs/install.md has no block '$1'"
	printf '%s\n' "$b"
}
declare -A CONF
BRIDGE=$(doc_block bridge) && KEY=$(doc_block key) &&
	CONF[hostA]=$(doc_block hostA.conf) && CONF[hostB]=$(doc_block hostB.conf) &&
	HOSTFILE=$(doc_block hostfile) && MPIRUN=$(doc_block mpirun) || exit 1
conf() { printf '%s\n' "${CONF[$1]}"; }	# HOST: its configuration file

# $T/on HOST CMD...: CMD as root of HOST, in a fresh environment as a
# login would give it (nothing of the test's: no SRNIC_*, LD_PRELOAD).
# $T/rsh HOST COMMAND...: mpirun's remote shell, as ssh runs COMMAND.
cat > "$T/on" <<EOF
#!/bin/sh
case \$1 in hostA|hostB) ;; *) echo "no host '\$1'" >&2; exit 255 ;; esac
h=\$1; shift
exec nsenter -t "\$(cat "$T/\$h.pid")" -m -u -n --wd=/ -- \\
	env -i PATH=$PATH_ HOME=/root "\$@"
EOF
printf '#!/bin/sh\nh=$1; shift\nexec "%s" "$h" sh -c "$*"\n' "$T/on" > "$T/rsh"
chmod +x "$T/on" "$T/rsh"
on() { "$T/on" "$@"; }

DESTDIR=$T/stage meson install -C "$BUILD" --no-rebuild --quiet \
	> "$LOGDIR/2h-install.log" 2>&1 || { cat "$LOGDIR/2h-install.log" >&2; fail "meson install"; }

# ---- the switch, and the hosts as they were before the recipe --------
conf_ipv4() { conf $1 | sed -n 's/^ipv4 *= *//p'; }
ip netns add "$P-sw"
ip -n "$P-sw" link set lo up
ip -n "$P-sw" link add sw type bridge
ip -n "$P-sw" link set sw up
for h in $HOSTS; do
	ip netns add "$P-$h"
	ip -n "$P-$h" link set lo up
	ip link add "$h" netns "$P-sw" type veth peer name eth1 netns "$P-$h"
	ip -n "$P-sw" link set "$h" master sw up
	addr=$(conf_ipv4 $h)
	[ -n "$addr" ] || fail "docs/install.md: $h.conf has no ipv4"
	ip -n "$P-$h" addr add "$addr/24" dev eth1
	ip -n "$P-$h" link set eth1 up
	d=$T/$h
	mkdir -p "$d/dev" "$d/etc.u" "$d/etc.w" "$d/usr.u" "$d/usr.w" "$d/var.u" "$d/var.w"
	# The host's holder: its mount and UTS namespaces live as long as it
	# (ip netns exec gave it a mount namespace with this network
	# namespace's /sys).
	ip netns exec "$P-$h" unshare -u sh -c '
		set -e
		d=$1
		hostname "$2"
		mount --make-rprivate /
		for m in etc:/etc usr:/usr/local var:/var/lib; do
			mount -t overlay "srnic-2h-${m%%:*}" -o "lowerdir=${m#*:},upperdir=$d/${m%%:*}.u,workdir=$d/${m%%:*}.w" "${m#*:}"
		done
		mount -t tmpfs -o mode=755 srnic-2h-run /run
		# (a /dev of its own, for /dev/infiniband: links to the
		# machine'\''s, as ./srnic exec makes)
		mount --rbind /dev "$d/dev"
		mount -t tmpfs -o mode=755 srnic-2h-dev /dev
		for e in "$d"/dev/* "$d"/dev/.[!.]*; do
			{ [ -e "$e" ] || [ -L "$e" ]; } && ln -s "$e" /dev/
		done
		rm -f /dev/hugepages
		mkdir /dev/hugepages
		mount -t hugetlbfs -o pagesize=2M srnic-2h-huge /dev/hugepages
		echo ready
		exec sleep infinity
	' sh "$d" "$h" > "$d/holder.log" 2>&1 < /dev/null &
	echo $! > "$T/$h.pid"
done
for h in $HOSTS; do
	for ((i = 0; i < 100; i++)); do
		grep -q ready "$T/$h/holder.log" && break
		kill -0 "$(cat "$T/$h.pid")" 2>/dev/null || break
		sleep 0.05
	done
	grep -q ready "$T/$h/holder.log" || { cat "$T/$h/holder.log" >&2; fail "host $h's namespaces"; }
done

# ---- the recipe ------------------------------------------------------
for h in $HOSTS; do
	on $h sh -ec 'cp -a "$1"/. / && ldconfig' sh "$T/stage" || fail "$h: installing"
done
on hostA sh -exc "$KEY" > "$LOGDIR/2h-key.log" 2>&1 ||
	{ cat "$LOGDIR/2h-key.log" >&2; fail "hostA: the key block"; }
# (scp -p: the same bytes and mode)
on hostB mkdir -p /etc/srnic
on hostA cat /etc/srnic/cluster.key |
	on hostB sh -c 'umask 077; cat > /etc/srnic/cluster.key' || fail "copying the key"
for h in $HOSTS; do
	[ "$(on $h stat -c %a /etc/srnic/cluster.key)" = 600 ] || fail "$h: the key's mode is not 0600"
	{ conf $h; echo "mem_mb = $MEM_MB"; } | on $h sh -c 'cat > /etc/srnic/srnic.conf'
	for a in $HOSTS; do echo "$(conf_ipv4 $a) $a"; done | on $h sh -c 'cat >> /etc/hosts'
done
# (before the bridge: srnicd does not start, and says why)
timeout -k 5 60 "$T/on" hostA /usr/local/sbin/srnicd --conf /etc/srnic/srnic.conf > "$LOGDIR/2h-nobridge.log" 2>&1 &&
	fail "srnicd started with eth1 in no bridge"
grep -q "its link eth1 is in no bridge" "$LOGDIR/2h-nobridge.log" ||
	{ cat "$LOGDIR/2h-nobridge.log" >&2; fail "srnicd without the bridge: no word of it"; }
for h in $HOSTS; do
	addr=$(conf_ipv4 $h)
	block=$(sed "s|^ADDR=[^ ]*|ADDR=$addr/24|" <<< "$BRIDGE")
	grep -q "^ADDR=$addr/24" <<< "$block" || fail "docs/install.md: the bridge block sets no ADDR"
	on $h sh -exc "$block" > "$LOGDIR/2h-bridge.$h" 2>&1 ||
		{ cat "$LOGDIR/2h-bridge.$h" >&2; fail "$h: the bridge block"; }
	on $h ip -4 -o addr show eth1 | grep -q . && fail "$h: eth1 kept its address"
done
echo "installed, configured, bridged as docs/install.md says: $(on hostA ip -br addr show br0)"

# srnicd as its installed unit starts it: ExecStartPre, then ExecStart.
unit_cmd() {	# HOST KEY: the unit's command line, ${SRNIC_CONF} put in
	local u=/usr/local/lib/systemd/system/srnicd.service conf
	conf=$(on $1 sed -n 's/^Environment=SRNIC_CONF=//p' $u)
	[ -n "$conf" ] || fail "$u: no SRNIC_CONF"
	on $1 sed -n "s/^$2=//p" $u | sed "s|\${SRNIC_CONF}|$conf|g"
}
for h in $HOSTS; do
	pre=$(unit_cmd $h ExecStartPre); start=$(unit_cmd $h ExecStart)
	[ -n "$pre" ] && [ -n "$start" ] || fail "srnicd.service has no ExecStartPre or ExecStart"
	on $h $pre > "$LOGDIR/2h-hostup.$h" 2>&1 ||
		{ cat "$LOGDIR/2h-hostup.$h" >&2; fail "$h: $pre"; }
	# (SRNIC_LOG: links, peers and the node's own stalls in its log)
	on $h env SRNIC_LOG=1 setsid $start > "$LOGDIR/2h-srnicd.$h" 2>&1 < /dev/null &
done
for h in $HOSTS; do
	for ((i = 0; i < 400; i++)); do
		grep -q "^srnicd: node $h serves" "$LOGDIR/2h-srnicd.$h" && break
		grep -q "^srnicd: node .* stopped\|^srnic: " "$LOGDIR/2h-srnicd.$h" && break
		sleep 0.05
	done
	grep -q "^srnicd: node $h serves" "$LOGDIR/2h-srnicd.$h" ||
		{ cat "$LOGDIR/2h-srnicd.$h" >&2; fail "srnicd of $h did not start"; }
done

# How srnicd's port joined the NIC: the tap in br0, its kernel side on
# the port's MAC with 0x04 flipped, br0 still on eth1's MAC.
for h in $HOSTS; do
	tap=$(conf $h | sed -n 's/^port *= *net_tap[0-9]*,.*iface=\([^,]*\).*/\1/p')
	mac=$(conf $h | sed -n 's/^port *= *net_tap.*,mac=\([^,]*\).*/\1/p')
	want=$(printf '%02x%s' $((0x${mac%%:*} ^ 4)) "${mac#??}")
	ip -n "$P-$h" -o link show "$tap" | grep -q " master br0 " || fail "$h: $tap is not in br0"
	[ "$(ip -n "$P-$h" -o link show "$tap" | sed -n 's/.*link\/ether \([^ ]*\).*/\1/p')" = "$want" ] ||
		fail "$h: $tap's kernel side is not on $want"
	[ "$(ip -n "$P-$h" -o link show br0 | sed -n 's/.*link\/ether \([^ ]*\).*/\1/p')" = \
	  "$(ip -n "$P-$h" -o link show eth1 | sed -n 's/.*link\/ether \([^ ]*\).*/\1/p')" ] ||
		fail "$h: br0 is not on eth1's MAC"
	on $h ibv_devinfo -d srnic0 > "$LOGDIR/2h-devinfo.$h" 2>&1 || fail "$h: ibv_devinfo"
	grep -q "state:.*PORT_ACTIVE" "$LOGDIR/2h-devinfo.$h" ||
		{ cat "$LOGDIR/2h-devinfo.$h" >&2; fail "$h: srnic0's port is not active"; }
done
echo "srnicd's tap $tap in br0 on each host, srnic0 PORT_ACTIVE"
for h in $HOSTS; do
	peer=$([ $h = hostA ] && echo hostB || echo hostA)
	for ((i = 0; i < 200; i++)); do
		on $h cat /run/srnic/srnic.stats 2>/dev/null | grep -q "^peer $peer .* ports_up 0$" && break
		sleep 0.1
	done
	on $h grep -E '^(port|peer) ' /run/srnic/srnic.stats | sed "s/^/$h: /"
	on $h grep -q "^peer $peer .* ports_up 0$" /run/srnic/srnic.stats ||
		fail "$h does not hear $peer on its port"
done

# ---- RC between the hosts --------------------------------------------
# hpair NAME TIMEOUT PORT CMD...: CMD as server on hostB, then as client on
# hostA with "hostB" appended, once the server listens on TCP PORT; logs
# $LOGDIR/NAME.{A,B}; fails if either side does.
hpair() {
	local name=$1 t=$2 port=$3 pid rca=0 rcb=0
	shift 3
	timeout -k 5 "$t" "$T/on" hostB "$@" > "$LOGDIR/$name.B" 2>&1 &
	pid=$!
	wait_listen 2h-hostB "$port" || true
	timeout -k 5 "$t" "$T/on" hostA "$@" hostB > "$LOGDIR/$name.A" 2>&1 || rca=$?
	wait $pid || rcb=$?
	if [ $rca != 0 ] || [ $rcb != 0 ]; then
		echo "--- $name: hostA exit $rca" >&2; tail -15 "$LOGDIR/$name.A" >&2
		echo "--- $name: hostB exit $rcb" >&2; tail -15 "$LOGDIR/$name.B" >&2
		echo "--- srnicd's logs (2h-srnicd.*):" >&2
		tail -n 8 "$LOGDIR/2h-srnicd.hostA" "$LOGDIR/2h-srnicd.hostB" >&2
		return 1
	fi
}
hpingpong() {	# NAME PORT ARGS...: ibv_rc_pingpong -g 1 -c as hpair runs it
	local name=$1 port=$2
	shift 2
	hpair "$name" 60 "$port" ibv_rc_pingpong -d srnic0 -g 1 -c "$@" &&
		pingpong_ok "$LOGDIR/$name.A" && pingpong_ok "$LOGDIR/$name.B"
}
hpingpong 2h-pingpong 18515 ||
	fail "ibv_rc_pingpong -g 1 -c between the hosts"
grep "iters in" "$LOGDIR/2h-pingpong.A"

# ---- two processes a host at once ------------------------------------
# Two ibv_rc_pingpong -c pairs at once (their servers on hostB, their
# clients on hostA): hostA's srnicd lists both clients at once, each with
# its QP, and both pairs' data is right.
procs() {	# HOST: the processes its srnicd serves, one "PROG qps N" a line
	on $1 python3 "$ROOT/tools/srnicd_client.py" /run/srnic/$1.sock stats |
		awk '$1 == "process" {print $5, $6, $7}'
}
hpingpong 2h-pingpong2 18516 -p 18516 -n 2000 &
pp2=$!
hpingpong 2h-pingpong3 18517 -p 18517 -n 2000 &
pp3=$!
for ((i = 0; i < 300; i++)); do
	listed=$(procs hostA)
	[ "$(grep -c "^ibv_rc_pingpong qps [1-9]" <<< "$listed")" -ge 2 ] && break
	kill -0 $pp2 2>/dev/null && kill -0 $pp3 2>/dev/null || break
	sleep 0.1
done
rc=0
wait $pp2 || rc=1
wait $pp3 || rc=1
[ $rc = 0 ] || fail "two ibv_rc_pingpong -c pairs at once"
[ "$(grep -c "^ibv_rc_pingpong qps [1-9]" <<< "$listed")" -ge 2 ] ||
	{ echo "$listed" >&2; fail "hostA's srnicd never served both pingpongs at once"; }
echo "hostA's srnicd served, at once: $(tr '\n' ' ' <<< "$listed")"
grep -h "iters in" "$LOGDIR/2h-pingpong2.A" "$LOGDIR/2h-pingpong3.A"

# ---- MPI, 2 ranks a host ---------------------------------------------
tap_bytes() {	# hostA's tap: bytes its kernel side took from srnic (sent)
	ip netns exec "$P-hostA" awk -v t="$tap:" '$1 == t {print $2}' /proc/net/dev
}
mkdir -p "$T/src"
ln -s "$BUILD" "$T/src/build"	# (srnic's source directory, as the document runs it)
before=$(tap_bytes)
timeout -k 5 150 "$T/on" hostA sh -ec "
	cd $T/src
	mpirun() { command mpirun --mca plm_rsh_agent $T/rsh --bind-to none \"\$@\"; }
	$HOSTFILE
	$MPIRUN" > "$LOGDIR/2h-mpi.log" 2>&1 ||
	{ tail -30 "$LOGDIR/2h-mpi.log" >&2; fail "mpirun, 2 ranks a host"; }
grep "^mpi_check:" "$LOGDIR/2h-mpi.log"
grep -q "^mpi_check: 4 ranks, [0-9]* words checked, 0 bad: OK" "$LOGDIR/2h-mpi.log" ||
	fail "mpi_check did not report 4 ranks and no bad word"
sent=$(($(tap_bytes) - before))
echo "hostA's tap carried $sent bytes from srnic during it"
# (each of hostA's 2 ranks sends hostB's 2 ranks 3 rounds of 1 MiB blocks
# alone: e2e/18)
[ "$sent" -ge $((12 * 1048576)) ] ||
	fail "hostA's tap carried $sent bytes: the ranks did not talk through srnic"

# ---- srnicd stops as its unit stops it: SIGTERM, then ExecStopPost ---
for h in $HOSTS; do
	pid=$(for p in $(ip netns pids "$P-$h"); do
		[ "$(cat /proc/$p/comm 2>/dev/null)" = srnicd ] && echo $p; done)
	[ -n "$pid" ] || fail "$h: srnicd is not running"
	kill -TERM $pid
	for ((i = 0; i < 200; i++)); do
		kill -0 $pid 2>/dev/null || break
		sleep 0.05
	done
	grep -q "^srnicd: node $h stopped" "$LOGDIR/2h-srnicd.$h" ||
		{ tail -5 "$LOGDIR/2h-srnicd.$h" >&2; fail "srnicd of $h did not stop on SIGTERM"; }
	post=$(unit_cmd $h ExecStopPost)
	[ -n "$post" ] || fail "srnicd.service has no ExecStopPost"
	on $h $post || fail "$h: $post"
	on $h sh -c '[ ! -e /dev/infiniband/uverbs0 ] && [ ! -e /sys/class/infiniband/srnic0 ]' ||
		fail "$h: srnic0 still there after $post"
done
echo "srnicd stopped on SIGTERM, and srnic host down took srnic0 away, on each host"
exit 0
