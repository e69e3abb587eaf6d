# What the benchmarks share (sourced by tests/bench/*.sh, which set SRNIC).

# oncpu PID... (one copy for the tests and the benchmarks)
. "$(dirname "${BASH_SOURCE[0]}")/../oncpu.sh"

# srnic_pair TOOL ARGS...: TOOL as server on node b, as client on node a
# (aimed at b); prints the client's output.
srnic_pair() {
	local pid i
	"$SRNIC" exec b -- "$@" > /dev/null 2>&1 &
	pid=$!
	# (until the server listens: its client tries to connect once)
	for ((i = 0; i < 400; i++)); do
		ip netns exec "$SRNIC_NS-b" ss -Hltn 2>/dev/null | grep -q . && break
		sleep 0.05
	done
	"$SRNIC" exec a -- "$@" b
	wait $pid
}

# write_bw SECONDS: ib_write_bw 64 KiB from a to b, in Gb/s.
write_bw() {
	srnic_pair ib_write_bw -s 65536 -D "$1" --report_gbits |
		awk '$1 == 65536 && NF >= 5 {print $4}'
}

# write_bw_pairs N SECONDS DIR: N ib_write_bw pairs a -> b at once (64 KiB,
# ports 18515 + i); each client's output in DIR/client.I.
write_bw_pairs() {
	local n=$1 secs=$2 dir=$3 i pids=()
	for ((i = 0; i < n; i++)); do
		"$SRNIC" exec b -- ib_write_bw -s 65536 -D "$secs" -p $((18515 + i)) \
			> /dev/null 2>&1 &
		pids+=($!)
	done
	sleep 1
	for ((i = 0; i < n; i++)); do
		"$SRNIC" exec a -- ib_write_bw -s 65536 -D "$secs" -p $((18515 + i)) \
			--report_gbits b > "$dir/client.$i" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}" || true
}

# pairs_sum_min N SECONDS DIR: N ib_write_bw pairs a -> b at once: "SUM
# SLOWEST"
pairs_sum_min() {
	write_bw_pairs "$1" "$2" "$3"
	printf '%s %s\n' "$(gbps_sum "$3"/client.*)" "$(gbps_min "$3"/client.*)"
	rm -f "$3"/client.*
}

# pingpong_beside N SECONDS DIR: an ibv_rc_pingpong (64 B, bytes checked)
# while N ib_write_bw pairs run: its usec/iter ("-" when it failed)
pingpong_beside() {
	local i pids=() t SECS=$2 W=$3
	for ((i = 0; i < $1; i++)); do
		"$SRNIC" exec b -- ib_write_bw -s 65536 -D "$SECS" -p $((18515 + i)) \
			> /dev/null 2>&1 &
		pids+=($!)
	done
	"$SRNIC" exec b -- ibv_rc_pingpong -g 1 -c -n 20000 -s 64 -p 18600 \
		> "$W/pp.b" 2>&1 &
	pids+=($!)
	sleep 1
	for ((i = 0; i < $1; i++)); do
		"$SRNIC" exec a -- ib_write_bw -s 65536 -D "$SECS" -p $((18515 + i)) \
			b > /dev/null 2>&1 &
		pids+=($!)
	done
	sleep 1
	timeout 60 "$SRNIC" exec a -- ibv_rc_pingpong -g 1 -c -n 20000 -s 64 \
		-p 18600 b > "$W/pp.a" 2>&1 || true
	wait "${pids[@]}" || true
	t=$(sed -n 's/.* = \([0-9.]*\) usec\/iter/\1/p' "$W/pp.a")
	grep -q "invalid data" "$W/pp.b" && t=""
	or_dash "$t"
}

# iperf3_gbps SECONDS: kernel TCP from node a to node b (one stream,
# over the nodes' ctl0), in Gb/s.
iperf3_gbps() {
	local pid
	"$SRNIC" exec b -- iperf3 -s -1 -p 18540 >/dev/null 2>&1 &
	pid=$!; sleep 0.5
	timeout 60 "$SRNIC" exec a -- iperf3 -c b -p 18540 -t "$1" -f g 2>/dev/null |
		awk '/receiver/ {print $(NF - 2)}' || true
	wait $pid 2>/dev/null || true
}

# gbps_min FILES...: the smallest of the ib_write_bw 64 KiB results in
# FILES (0 for one that printed none).
gbps_min() {
	local f
	for f in "$@"; do
		awk '$1 == 65536 && NF >= 5 {v = $4} END {print v + 0}' "$f"
	done | sort -g | head -1
}

# gbps_sum FILES...: the sum of the ib_write_bw 64 KiB results in FILES.
gbps_sum() {
	cat "$@" | awk '$1 == 65536 && NF >= 5 {s += $4} END {printf "%.2f\n", s}'
}

# or_dash TEXT: TEXT, or "-" when it is empty (a field of a line that
# `read` splits: an empty one would move the others)
or_dash() { echo "${1:--}"; }

# ratio A B [DIGITS]: A / B to DIGITS decimals, default 2 (0 when B is 0
# or missing).
ratio() {
	awk -v a="$1" -v b="$2" -v d="${3:-2}" \
		'BEGIN {printf "%.*f\n", d, (b > 0 ? a / b : 0)}'
}

# median: the median of the numbers on stdin, one a line.
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

# frame_of SIZE: the bytes of srnic's largest frame for a message of SIZE,
# with the payload size of the testbed's nodes (its default, 4096, when
# no testbed is up)
frame_of() {
	local mtu
	mtu=$(sed -n 's/^mtu *= *\([0-9]*\).*/\1/p' "$SRNIC_RUN/testbed/a.conf" 2>/dev/null)
	mtu=${mtu:-4096}
	echo $(($1 < mtu ? $1 + 78 : mtu + 78))
}

# ceiling WIRE PORTS: the wire's ceiling beside a bandwidth figure of 64 KiB
# messages (testpmd_gbps with srnic's full data frame), in Gb/s; "-" where
# there is none to take (no dpdk-testpmd: ./srnic setup installs it; a tap
# wire, which testpmd does not drive here).  Each run CEILING_SECS long,
# 8 s by default whatever the benchmark's SECS: testpmd's statistics come
# a second apart, and runs of 3 s gave 22 to 225 Gb/s in a row (their
# seconds all partial).  The better of two runs: a memif run now and then
# stays at a tenth of the others for all its seconds (here 14 Gb/s a link
# where the runs before and after had 110), and a ceiling is what the
# wire can do.
ceiling() {
	local v="" w SECS=${CEILING_SECS:-8}
	if command -v dpdk-testpmd > /dev/null &&
	   { [ "$1" = memif ] || [ "$1" = afpacket ]; }; then
		v=$(testpmd_gbps "$1" "$2" "$(frame_of 65536)")
		w=$(testpmd_gbps "$1" "$2" "$(frame_of 65536)")
		v=$(printf '%s\n' "$v" "$w" | sort -g | tail -1)
	fi
	echo "${v:--}"
}

# of_ceiling GBPS CEILING: GBPS as a share of CEILING ("-" without one)
of_ceiling() {
	awk -v a="$1" -v c="$2" \
		'BEGIN {if (c + 0 > 0 && a ~ /^[0-9.]+$/) printf "%.0f%%\n", 100 * a / c; else print "-"}'
}

# ceiling_round CEILING GBPS FILE: "ceiling (testpmd) CEILING Gb/s, S of
# it" for a round's figure GBPS, and the pair kept in FILE for
# ceiling_median
ceiling_round() {
	# (kept only as two numbers, the ceiling above 0: a run that printed
	# nothing must not shift the medians)
	awk -v c="$1" -v g="$2" 'BEGIN {exit !(c + 0 > 0 && g ~ /^[0-9.]+$/)}' &&
		echo "$1 $2" >> "$3"
	echo "ceiling (testpmd) ${1:--} Gb/s, $(of_ceiling "$2" "$1") of it"
}

# ceiling_median FILE: the medians of ceiling_round's ceilings and of the
# rounds' shares of them
ceiling_median() {
	if [ -s "$1" ]; then
		printf 'ceiling (testpmd) %s Gb/s, %.0f%% of it\n' \
			"$(cut -d' ' -f1 "$1" | median)" \
			"$(awk '{print 100 * $2 / $1}' "$1" | median)"
	else
		echo "no ceiling (no dpdk-testpmd, or a tap wire)"
	fi
}

# testpmd_gbps WIRE PORTS FRAME: the wire's ceiling, in Gb/s: dpdk-testpmd
# txonly -> rxonly, frames of FRAME bytes, over PORTS links of WIRE's kind
# (memif: two testpmds on memif links of their own, buffers of
# TESTPMD_BSIZE bytes, default 8192 as the testbed's; afpacket: testpmd on
# the nodes' rail interfaces) for SECS seconds; W is a scratch directory.
testpmd_gbps() {
	local bsize=${TESTPMD_BSIZE:-8192}
	local eal="--no-pci --in-memory -m $((bsize > 8192 ? 1024 : 512)) --log-level=*:error"
	local app="--mbuf-size=$((bsize + 128)) --total-num-mbufs=16384 --nb-cores=1 --stats-period 1"
	local rxv="" txv="" p rxns="" txns=""
	for ((p = 0; p < $2; p++)); do
		if [ "$1" = memif ]; then
			rxv+=" --vdev net_memif$p,role=server,id=$p,socket=$W/t$p.sock,socket-abstract=no,bsize=$bsize"
			txv+=" --vdev net_memif$p,role=client,id=$p,socket=$W/t$p.sock,socket-abstract=no,bsize=$bsize"
		else
			# (as the testbed's nodes open their rails)
			rxv+=" --vdev net_af_packet$p,iface=rail$p,qpairs=1,blocksz=16384,framesz=2048,framecnt=4096"
			txv+=" --vdev net_af_packet$p,iface=rail$p,qpairs=1,blocksz=16384,framesz=2048,framecnt=4096"
		fi
	done
	[ "$1" = afpacket ] && { rxns="ip netns exec $SRNIC_NS-b"; txns="ip netns exec $SRNIC_NS-a"; }
	rm -f "$W"/t*.sock
	# shellcheck disable=SC2086
	timeout -s INT $((SECS + 3)) $rxns dpdk-testpmd $eal --lcores=0@0,1@1 $rxv -- \
		$app --forward-mode=rxonly > "$W/rx.log" 2>&1 &
	local rx=$!
	sleep 1
	# shellcheck disable=SC2086
	timeout -s INT $((SECS + 1)) $txns dpdk-testpmd $eal --lcores=0@1,1@0 $txv -- \
		$app --forward-mode=txonly --txpkts="$3" > "$W/tx.log" 2>&1 || true
	wait $rx || true
	# An "Rx-bps:" line per port and second: the ports' sum, second by
	# second; the median of the full seconds (not the first or the last
	# with traffic, which are partial), or the best of a short run's.
	grep -o 'Rx-bps: *[0-9]*' "$W/rx.log" | awk -v np="$2" '
		{s[int((NR - 1) / np)] += $2; n = int((NR - 1) / np) + 1}
		END {k = 0; for (i = 0; i < n; i++) if (s[i] > 0) v[++k] = s[i];
		     if (k < 3) {m = 0; for (i = 1; i <= k; i++) if (v[i] > m) m = v[i];
				 if (k) printf "%.3f\n", m / 1e9; exit}
		     lo = 2; hi = k - 1
		     m = 0; for (i = lo; i <= hi; i++) w[++m] = v[i];
		     if (!m) exit;
		     for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
			if (w[j] < w[i]) {t = w[i]; w[i] = w[j]; w[j] = t}
		     printf "%.3f\n", w[int((m + 1) / 2)] / 1e9}'
}

# need_perf: linux-perf, installed if missing (cycles.sh, profile.sh).
need_perf() {
	command -v perf >/dev/null && return
	apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q linux-perf >/dev/null
}

# port_packets STATS: packets through a node's ports so far (rx + tx)
# and when its stats file was written (s), from that file.
port_packets() {
	awk -v t="$(stat -c %.6Y "$1")" \
		'$1 == "port" {for (i = 1; i < NF; i++)
			if ($i == "rx_packets" || $i == "tx_packets") n += $(i + 1)}
		 END {print n + 0, t}' "$1"
}

# pair_start OUT TOOL ARGS...: TOOL's server on b and its client on a
# (aimed at b) in the background, the client's output in OUT, their pids
# in PAIR_PIDS; returns once they are past the warm-up (3 s).
pair_start() {
	local out=$1
	shift
	"$SRNIC" exec b -- "$@" > /dev/null 2>&1 &
	PAIR_PIDS=($!)
	sleep 0.5
	"$SRNIC" exec a -- "$@" b > "$out" 2>&1 &
	PAIR_PIDS+=($!)
	sleep 3	# connected, and past the warm-up
}
