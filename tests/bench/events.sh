#!/usr/bin/env bash
# Programs that wait for completions against the same programs polling,
# on the default testbed (memif, two ports, srnicd in each node), each
# round alternating which goes first (docs/interrupts.md):
#   - ib_send_lat -e against ib_send_lat, 2 B, typical (10000 iterations);
#   - qperf rc_lat on completion channels against rc_lat -cp1;
#   - iperf (2) over rsockets (./srnic exec --sockets) against kernel TCP
#     between the same nodes (their ctl0), 3 s;
#   - an idle node: srnicd b and an ibv_rc_pingpong -e server waiting for
#     its client, ms of CPU in 10 s (their threads' /proc schedstat);
#   - early events (cq_early_us = 1000 in both nodes' configurations)
#     against plain ones and polling, ib_send_lat 256 KiB (2000
#     iterations): the share of the gap between events and polling that
#     early events close.
# Then the medians and the within-round ratios.
#   tests/bench/events.sh [ROUNDS]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${1:-3}
SRNIC=$ROOT/srnic
. "$ROOT/tests/bench/lib.sh"
export SRNIC_NS=srbench SRNIC_RUN=/run/srnic-bench
B=10.55.0.2

send_lat() {	# [-e]: typical us
	srnic_pair ib_send_lat -s 2 -n 10000 "$@" | awk '$1 == 2 && NF >= 7 {print $5}'
}

big_lat() {	# poll|events|early: ib_send_lat 256 KiB, typical us
	local conf us
	if [ "$1" = early ]; then
		for conf in "$SRNIC_RUN"/testbed/[ab].conf; do
			echo "cq_early_us = 1000" >> "$conf"
		done
	fi
	local ev=() try
	[ "$1" = poll ] || ev=(-e)
	# (a run that fails is run again, once; twice, the benchmark stops
	# rather than print a number it did not measure)
	for try in 1 2; do
		us=$(srnic_pair ib_send_lat -s 262144 -n 2000 "${ev[@]}" |
			awk '$1 == 262144 && NF >= 7 {print $5}')
		[ -z "$us" ] || break
	done
	for conf in "$SRNIC_RUN"/testbed/[ab].conf; do
		sed -i '/^cq_early_us = /d' "$conf"
	done
	[ -n "$us" ] || { echo "ib_send_lat 256 KiB ($1) failed twice" >&2; exit 1; }
	echo "$us"
}

qperf_lat() {	# FIRST: rc_lat on channels and with -cp1 (polling), in
		# us, FIRST (events or poll) first; prints "events polling"
	local pid e p
	"$SRNIC" exec b -- qperf > /dev/null 2>&1 &
	pid=$!
	sleep 1
	one() {
		timeout 60 "$SRNIC" exec a -- qperf -cm1 -t 3 "$@" $B rc_lat |
			awk '/latency/ {v = $3; if ($4 == "ms") v *= 1000; print v + 0}'
	}
	if [ "$1" = events ]; then
		e=$(one); p=$(one -cp1)
	else
		p=$(one -cp1); e=$(one)
	fi
	pkill -x qperf 2>/dev/null || true
	wait $pid 2>/dev/null || true
	echo "${e:-0} ${p:-0}"
}

iperf_gbps() {	# [--sockets]: iperf (2) a -> b, Gb/s (b's report)
	local pid port=$((7800 + RANDOM % 100)) out
	out=$(mktemp)
	timeout -k 5 60 "$SRNIC" exec "$@" b -- iperf -s -p $port -f g > "$out" 2>&1 &
	pid=$!
	sleep 1
	timeout -k 5 60 "$SRNIC" exec "$@" a -- iperf -c $B -p $port -t 3 -f g > /dev/null 2>&1 || true
	sleep 1
	kill $pid 2>/dev/null || true
	wait $pid 2>/dev/null || true
	awk '/Gbits\/sec/ {r = $(NF-1)} END {print r + 0}' "$out"
	rm -f "$out"
}

idle_ms() {	# srnicd b and a waiting ibv_rc_pingpong -e server, 10 s
	local pid server srnicd c0 ms
	"$SRNIC" exec b -- ibv_rc_pingpong -g 1 -e -p 18650 > /dev/null 2>&1 &
	pid=$!
	sleep 3
	server=$(pgrep -n -x ibv_rc_pingpong)
	srnicd=$(cat "$SRNIC_RUN/testbed/b.srnicd.pid")
	c0=$(oncpu "$srnicd" "$server")
	sleep 10
	ms=$(( ($(oncpu "$srnicd" "$server") - c0) / 1000000 ))
	kill $pid 2>/dev/null || true
	wait $pid 2>/dev/null || true
	echo $ms
}

trap 'sed -i "/^cq_early_us = /d" "$SRNIC_RUN"/testbed/[ab].conf 2>/dev/null; "$SRNIC" testbed down >/dev/null 2>&1' EXIT
"$SRNIC" setup >/dev/null
"$SRNIC" testbed down >/dev/null 2>&1 || true
"$SRNIC" testbed up >/dev/null
rows=()
for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then
		le=$(send_lat -e); lp=$(send_lat)
		read -r qe qp < <(qperf_lat events)
		is=$(iperf_gbps --sockets); ik=$(iperf_gbps)
	else
		lp=$(send_lat); le=$(send_lat -e)
		read -r qe qp < <(qperf_lat poll)
		ik=$(iperf_gbps); is=$(iperf_gbps --sockets)
	fi
	id=$(idle_ms)
	if ((r % 2)); then
		bp=$(big_lat poll); be=$(big_lat events); by=$(big_lat early)
	else
		by=$(big_lat early); be=$(big_lat events); bp=$(big_lat poll)
	fi
	closed=$(awk -v e="$be" -v y="$by" -v p="$bp" \
		'BEGIN {printf "%.0f\n", (e + 0 > p + 0 ? 100 * (e - y) / (e - p) : 0)}')
	echo "round $r: ib_send_lat -e $le / polling $lp us ($(ratio "$le" "$lp")x);" \
		"qperf rc_lat $qe / -cp1 $qp us ($(ratio "$qe" "$qp")x);" \
		"iperf over rsockets $is / kernel TCP $ik Gb/s ($(ratio "$is" "$ik")x);" \
		"idle: $id ms in 10 s;" \
		"256 KiB: early $by / events $be / polling $bp us (early closes $closed% of the gap)"
	rows+=("$le $lp $(ratio "$le" "$lp") $qe $qp $(ratio "$qe" "$qp") $is $ik $(ratio "$is" "$ik") $id $by $be $bp $closed")
done
col() { printf '%s\n' "${rows[@]}" | awk -v c="$1" '{print $c}' | median; }
echo "median: ib_send_lat -e $(col 1) us, polling $(col 2) us, ratio $(col 3)x;" \
	"qperf rc_lat $(col 4) / $(col 5) us, ratio $(col 6)x;" \
	"iperf rsockets $(col 7) / kernel $(col 8) Gb/s, ratio $(col 9)x;" \
	"idle $(col 10) ms in 10 s;" \
	"256 KiB early $(col 11) / events $(col 12) / polling $(col 13) us, gap closed $(col 14)%"
