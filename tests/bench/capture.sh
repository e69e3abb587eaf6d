#!/usr/bin/env bash
# What packet capture costs (issue 15): ib_write_bw 64 KiB from a to b on
# a two-port af_packet testbed, with ./srnic capture running on a's port 0
# (every frame written to a pcapng file) and without, the two in turn and
# in alternate order each round, and the ratio within each round.  The
# capture is Wireshark's dumpcap on the port's veth: srnic's datapath runs
# the same code either way, so "off" costs nothing by construction, and
# "on" is what the kernel's copy to dumpcap and the file take from two
# shared CPUs.
#   tests/bench/capture.sh [ROUNDS] [SECONDS]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${1:-4}
SECS=${2:-3}
SRNIC=$ROOT/srnic
. "$ROOT/tests/bench/lib.sh"
export SRNIC_NS=srbench SRNIC_RUN=/run/srnic-bench
OUT=$(mktemp -d /tmp/srnic-capture-bench.XXXXXX)

"$SRNIC" setup > /dev/null
trap '"$SRNIC" testbed down >/dev/null 2>&1; rm -rf "$OUT"' EXIT
"$SRNIC" testbed down >/dev/null 2>&1 || true
"$SRNIC" testbed up --wire afpacket --ports 2 >/dev/null

measure() {	# on|off: Gb/s (and, on: the frames captured)
	local pid gbps
	if [ "$1" = on ]; then
		rm -f "$OUT/cap.pcapng"
		"$SRNIC" capture a 0 -w "$OUT/cap.pcapng" > "$OUT/cap.log" 2>&1 &
		pid=$!
		for ((i = 0; i < 100 && ! -s $OUT/cap.pcapng; i++)); do sleep 0.05; done
	fi
	gbps=$(write_bw "$SECS")
	if [ "$1" = on ]; then
		# (dumpcap is the capture's child: SIGINT lets it finish the file)
		pkill -INT -f "dumpcap -q -i r0-a" || true
		wait $pid 2>/dev/null || true
		echo "${gbps:-0} $(stat -c %s "$OUT/cap.pcapng" 2>/dev/null || echo 0)"
	else
		echo "${gbps:-0} 0"
	fi
}

ratios=()
for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then
		read -r off _ <<< "$(measure off)"
		read -r on bytes <<< "$(measure on)"
	else
		read -r on bytes <<< "$(measure on)"
		read -r off _ <<< "$(measure off)"
	fi
	rr=$(ratio "$on" "$off")
	ratios+=("$rr")
	echo "round $r: ib_write_bw 64 KiB, capture off $off Gb/s, on $on Gb/s (${rr}x; $((bytes / 1048576)) MiB captured)"
done
echo "median: capture on / off ${ratios[*]} -> $(printf '%s\n' "${ratios[@]}" | median)x"
