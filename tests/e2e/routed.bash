# The steps 48-routed.sh and 48b-routed-v6.sh both take on a routed
# testbed (./srnic testbed up --routed, in IPv4, or with --ipv6), nodes a
# and b.  Sourced after lib.sh:
#     . "$(dirname "$0")/routed.bash"
# An address with a colon is IPv6: tshark's fields then are ipv6.*, and
# the address must be written as tshark writes it (fd00:56::2, not
# fd00:56:0::2).

# paths_ok NODE: the bits of the other node's 8 paths that NODE hears
paths_ok() { counter "$1" paths_ok "$([ "$1" = a ] && echo b || echo a)"; }

# all_paths_heard: until each node hears all 8 of the other's paths, 10 s
# at most; the test fails if they do not.
all_paths_heard() {
	for _ in $(seq 100); do [ "$(paths_ok a)" = 255 ] && [ "$(paths_ok b)" = 255 ] && break; sleep 0.1; done
	[ "$(paths_ok a)" = 255 ] && [ "$(paths_ok b)" = 255 ] ||
		fail "the nodes do not hear each other on every path: a $(paths_ok a), b $(paths_ok b)"
}

# ip_fields ADDRESS: tshark's name of ADDRESS's family (ip, ipv6)
ip_fields() { if [[ $1 == *:* ]]; then echo ipv6; else echo ip; fi; }

# rail_capture NAME BW-ARGS...: a capture of a's rail, 3000 of srnic's
# frames, $LOGDIR/NAME.pcap (in pcap, for the steps after), around an
# ib_write_bw BW-ARGS from a to b (pair NAME-cap-bw)
rail_capture() {
	local name=$1 cap
	shift
	pcap=$LOGDIR/$name.pcap
	rm -f "$pcap"
	ip netns exec "$SRNIC_NS-a" timeout 60 dumpcap -q -i rail0 -c 3000 -f "udp port 4793" -w "$pcap" > "$LOGDIR/$name-cap.log" 2>&1 &
	cap=$!
	for _ in $(seq 100); do [ -s "$pcap" ] && break; sleep 0.05; done
	pair "$name-cap-bw" 90 ib_write_bw "$@" || fail "ib_write_bw $* across the routers"
	wait $cap || { cat "$LOGDIR/$name-cap.log"; fail "dumpcap on a's rail"; }
}

# rail_frames PCAP AMAC RMAC A B: in the capture, every frame from a's
# address A to b's B goes from a's port (AMAC) to its router (RMAC), and
# every frame back the other way
rail_frames() {
	local f
	f=$(ip_fields "$4")
	tshark -r "$1" -T fields -E occurrence=f -e eth.src -e eth.dst -e "$f.src" -e "$f.dst" 2>/dev/null |
		awk -v a="$2" -v r="$3" -v A="$4" -v B="$5" '
			$3 == A && $4 == B { out++; if ($1 != a || $2 != r) bad++; next }
			$3 == B && $4 == A { in_++; if ($1 != r || $2 != a) bad++; next }
			{ other++ }
			END { printf "%d frames to b, %d from b, %d others, %d with other Ethernet addresses\n", out, in_, other, bad
			      exit !(out > 1000 && in_ > 10 && !bad) }' ||
		fail "the capture of a's rail: not every frame went to the router, or came from it"
}

# eight_paths PCAP B: the capture's WRITEs to b's address B (one QP's)
# went on all 8 paths, UDP source ports (HELLOs, which probe every path,
# left out)
eight_paths() {
	local ports
	ports=$(tshark -X lua_script:"$ROOT/tools/wireshark/srnic.lua" -r "$1" -T fields \
		-E occurrence=f -e "$(ip_fields "$2").dst" -e udp.srcport -e srnic.opcode 2>/dev/null |
		awk -v B="$2" '$1 == B && $3 == 2 {print $2}' | sort -u | tr '\n' ' ')
	echo "source ports of a's frames to b: $ports"
	[ "$(echo $ports | wc -w)" = 8 ] || fail "a's frames to b did not use the 8 paths: $ports"
}

# rping_checked NAME LISTEN B: rping -V (every RDMA READ's data compared
# with what was sent) from a to b's address B, b's server listening on
# LISTEN; logs $LOGDIR/NAME.{a,b}
rping_checked() {
	local srv
	timeout -k 5 60 "$SRNIC" exec b -- rping -s -V -C 200 -S 4096 -a "$2" -p 7174 > "$LOGDIR/$1.b" 2>&1 &
	srv=$!
	wait_listen b $((7174 ^ 0x4000)) || echo "--- rping's server never listened" >&2
	on a 60 -- rping -c -V -C 200 -S 4096 -a "$3" -p 7174 > "$LOGDIR/$1.a" 2>&1 ||
		{ tail -5 "$LOGDIR/$1.a"; fail "rping -V across the routers (client)"; }
	wait $srv || { tail -5 "$LOGDIR/$1.b"; fail "rping -V across the routers (server)"; }
	grep -q "data mismatch" "$LOGDIR/$1".* && fail "rping: data mismatch"
	echo "rping -V to $3: 200 pings"
}

# no_damage: neither node counted a frame of the other's it could not
# read
no_damage() {
	local n d
	for n in a b; do
		d=$(counter "$n" "drops.bad_ip drops.malformed drops.bad_crc drops.bad_auth") ||
			fail "no counters of $n"
		echo "node $n: bad_ip, malformed, bad_crc, bad_auth drops: $d; unresolved $(counter "$n" drops.unresolved)"
		[ "$d" = "0 0 0 0" ] || fail "node $n could not read frames of the other"
	done
}
