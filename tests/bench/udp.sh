#!/usr/bin/env bash
# UDP/IP encapsulation against raw Ethernet (issue 35: ib_write_bw 64 KiB
# at 95% or more, latency at most 0.2 us more): on one two-port memif
# testbed whose nodes run the engine in the program (--srnicd no, so that
# each run's programs read the encapsulation afresh), ib_write_bw 64 KiB
# for SECONDS and ib_write_lat 2 B with encap = udp and encap = eth in
# alternating runs of each round, and the ratios within each round.
#   tests/bench/udp.sh [ROUNDS] [SECONDS]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${1:-4}
SECS=${2:-3}
SRNIC=$ROOT/srnic
. "$ROOT/tests/bench/lib.sh"
export SRNIC_NS=srbench SRNIC_RUN=/run/srnic-bench
TB=$SRNIC_RUN/testbed

"$SRNIC" setup
W=$(mktemp -d)
trap '"$SRNIC" testbed down >/dev/null 2>&1; rm -rf "$W"' EXIT
"$SRNIC" testbed down >/dev/null 2>&1 || true
"$SRNIC" testbed up --wire memif --ports 2 --srnicd no >/dev/null

encap() {	# eth|udp: both nodes
	local n
	for n in a b; do
		sed -i '/^encap = /d' "$TB/$n.conf"
		echo "encap = $1" >> "$TB/$n.conf"
	done
}
write_lat() {
	srnic_pair ib_write_lat -s 2 -n 5000 | awk '$1 == 2 && NF >= 7 {print $5}'
}

bw_ratios=() lat_diffs=()
for ((r = 1; r <= ROUNDS; r++)); do
	encap udp; ubw=$(or_dash "$(write_bw "$SECS")"); ulat=$(or_dash "$(write_lat)")
	encap eth; ebw=$(or_dash "$(write_bw "$SECS")"); elat=$(or_dash "$(write_lat)")
	bw_ratios+=("$( [ "$ubw" = - ] || [ "$ebw" = - ] && echo - || ratio "$ubw" "$ebw")")
	lat_diffs+=("$(awk -v a="$ulat" -v b="$elat" 'BEGIN {if (a == "-" || b == "-") print "-"; else printf "%+.2f", a - b}')")
	printf 'round %d: ib_write_bw 64 KiB udp %s / eth %s Gb/s (%s), ib_write_lat 2 B udp %s / eth %s us (%s us); udp against the %s\n' \
		"$r" "$ubw" "$ebw" "${bw_ratios[-1]}" "$ulat" "$elat" "${lat_diffs[-1]}" \
		"$(ceiling_round "$(ceiling memif 2)" "$ubw" "$W/ceil")"
done
printf 'medians: bandwidth udp/eth %s, latency udp-eth %s us; udp against the %s\n' \
	"$(printf '%s\n' "${bw_ratios[@]}" | grep -v '^-$' | median)" \
	"$(printf '%s\n' "${lat_diffs[@]}" | grep -v '^-$' | median)" \
	"$(ceiling_median "$W/ceil")"
