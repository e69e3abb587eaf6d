#!/usr/bin/env bash
# What packet capture costs (issue 15): ib_write_bw 64 KiB from a to b,
# with ./srnic capture running on a's port 0 and without, the two in turn
# and in alternate order each round, and the ratio within each round.
#   tests/bench/capture.sh [ROUNDS] [SECONDS] [memif|afpacket]
#   BASELINE=DIR tests/bench/capture.sh ...   also, each round, a build
#                 without the tap (DIR: its build directory, e.g. of the
#                 commit before it): what "off" costs (memif)
# memif (default, with srnicd): the node's tap (src/port/tap.c) copies
# every frame of the port into its slots and srnicd's file thread writes
# them; off, the tap is one branch a burst.  afpacket: Wireshark's dumpcap
# on the port's veth; off, nothing of srnic runs differently.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${1:-4}
SECS=${2:-3}
WIRE=${3:-memif}
SRNIC=$ROOT/srnic
. "$ROOT/tests/bench/lib.sh"
export SRNIC_NS=srbench SRNIC_RUN=/run/srnic-bench
OUT=$(mktemp -d /tmp/srnic-capture-bench.XXXXXX)
W=$OUT	# (lib.sh's ceiling: the wire's, beside "capture off")

"$SRNIC" setup > /dev/null
trap '"$SRNIC" testbed down >/dev/null 2>&1; rm -rf "$OUT"' EXIT
"$SRNIC" testbed down >/dev/null 2>&1 || true
if [ "$WIRE" = memif ]; then
	"$SRNIC" testbed up --wire memif --ports 2 --srnicd yes >/dev/null
else
	"$SRNIC" testbed up --wire afpacket --ports 2 >/dev/null
fi

measure() {	# on|off: Gb/s (and, on: the frames captured)
	local pid gbps i
	if [ "$1" = on ]; then
		rm -f "$OUT/cap.pcapng"
		"$SRNIC" capture a 0 -w "$OUT/cap.pcapng" > "$OUT/cap.log" 2>&1 &
		pid=$!
		for ((i = 0; i < 100; i++)); do
			[ -e "$OUT/cap.pcapng" ] && break
			sleep 0.05
		done
	fi
	gbps=$(write_bw "$SECS")
	if [ "$1" = on ]; then
		# (stopped as a person stops it: Ctrl-C; dumpcap then finishes
		# its file, the tap's request is taken back)
		if [ "$WIRE" = memif ]; then
			rm -f "$SRNIC_RUN/testbed/a.capture"
		else
			pkill -INT -f "dumpcap -q -i r0-a" || true
		fi
		wait $pid 2>/dev/null || true
		echo "${gbps:-0} $(stat -c %s "$OUT/cap.pcapng" 2>/dev/null || echo 0)"
		rm -f "$OUT/cap.pcapng"	# (GBs a round)
	else
		echo "${gbps:-0} 0"
	fi
}

# without_tap: ib_write_bw with the baseline build's provider and srnicd
# (its configuration without the key it does not know)
without_tap() {
	local n gbps tb=$SRNIC_RUN/testbed
	for n in a b; do
		"$SRNIC" srnicd $n stop > /dev/null
		sed -i 's/^capture_file = /#capture_file = /' "$tb/$n.conf"
	done
	for n in a b; do SRNIC_BUILD=$BASELINE "$SRNIC" srnicd $n start > /dev/null; done
	gbps=$(SRNIC_BUILD=$BASELINE write_bw "$SECS")
	for n in a b; do
		"$SRNIC" srnicd $n stop > /dev/null
		sed -i 's/^#capture_file = /capture_file = /' "$tb/$n.conf"
	done
	for n in a b; do "$SRNIC" srnicd $n start > /dev/null; done
	echo "${gbps:-0}"
}

ratios=() base_ratios=()
for ((r = 1; r <= ROUNDS; r++)); do
	if [ -n "${BASELINE:-}" ] && [ "$WIRE" = memif ]; then
		base=$(without_tap)
		read -r off _ <<< "$(measure off)"
		br=$(ratio "$off" "$base")
		base_ratios+=("$br")
		echo "round $r: ib_write_bw 64 KiB, no tap (baseline build) $base Gb/s, tap off $off Gb/s (${br}x)"
	fi
	if ((r % 2)); then
		read -r off _ <<< "$(measure off)"
		read -r on bytes <<< "$(measure on)"
	else
		read -r on bytes <<< "$(measure on)"
		read -r off _ <<< "$(measure off)"
	fi
	rr=$(ratio "$on" "$off")
	ratios+=("$rr")
	echo "round $r ($WIRE): ib_write_bw 64 KiB, capture off $off Gb/s, on $on Gb/s (${rr}x; $((bytes / 1048576)) MiB captured, $(sed -n 's/.*dropped \([0-9]*\).*/\1/p' "$OUT/cap.log") dropped); off against the $(ceiling_round "$(ceiling "$WIRE" 2)" "$off" "$OUT/ceil")"
done
echo "median: capture on / off ${ratios[*]} -> $(printf '%s\n' "${ratios[@]}" | median)x; off against the $(ceiling_median "$OUT/ceil")"
[ ${#base_ratios[@]} = 0 ] ||
	echo "median: tap off / no tap ${base_ratios[*]} -> $(printf '%s\n' "${base_ratios[@]}" | median)x"
