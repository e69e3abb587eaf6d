#!/usr/bin/env bash
# UDP/IP encapsulation against raw Ethernet (issue 35: ib_write_bw 64 KiB
# at 95% or more, latency at most 0.2 us more): on one two-port memif
# testbed whose nodes run the engine in the program (--srnicd no, so that
# each run's programs read the encapsulation afresh), ib_write_bw 64 KiB
# for SECONDS and ib_write_lat 2 B with encap = udp and encap = eth in
# alternating runs of each round, and the ratios within each round; and
# the same with encap = udp in IPv6 (each node's ipv4 line turned into an
# ipv6 one: fd00:55:0::N for 10.55.0.N), against IPv4's.
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

encap() {	# eth|udp|udp6: both nodes
	local n
	for n in a b; do
		sed -i '/^encap = /d' "$TB/$n.conf"
		echo "encap = ${1%6}" >> "$TB/$n.conf"
		# (IPv4 or IPv6: the testbed's address, or one made of it)
		[ -s "$W/$n.ipv4" ] || grep '^ipv4 = ' "$TB/$n.conf" > "$W/$n.ipv4"
		sed -i '/^ipv[46] = /d' "$TB/$n.conf"
		if [ "$1" = udp6 ]; then
			sed 's/^ipv4 = \([0-9]*\)\.\([0-9]*\)\.\([0-9]*\)\.\([0-9]*\).*/ipv6 = fd00:\1:\2::\4/' \
				"$W/$n.ipv4" >> "$TB/$n.conf"
		else
			cat "$W/$n.ipv4" >> "$TB/$n.conf"
		fi
		# (GID 1, which perftest may pick, is the address)
		"$SRNIC" sysfs "$TB/$n.conf" "$TB/$n/sys" > /dev/null
	done
}
write_lat() {
	srnic_pair ib_write_lat -s 2 -n 5000 | awk '$1 == 2 && NF >= 7 {print $5}'
}

# (a over b, of two figures either of which may be "-"; a - b)
ratio_of() { [ "$1" = - ] || [ "$2" = - ] && echo - || ratio "$1" "$2"; }
diff_of() { awk -v a="$1" -v b="$2" 'BEGIN {if (a == "-" || b == "-") print "-"; else printf "%+.2f", a - b}'; }
medians() { printf '%s\n' "$@" | grep -v '^-$' | median; }

bw_ratios=() lat_diffs=() bw6_ratios=() lat6_diffs=()
for ((r = 1; r <= ROUNDS; r++)); do
	encap udp; ubw=$(or_dash "$(write_bw "$SECS")"); ulat=$(or_dash "$(write_lat)")
	encap eth; ebw=$(or_dash "$(write_bw "$SECS")"); elat=$(or_dash "$(write_lat)")
	encap udp6; u6bw=$(or_dash "$(write_bw "$SECS")"); u6lat=$(or_dash "$(write_lat)")
	bw_ratios+=("$(ratio_of "$ubw" "$ebw")") lat_diffs+=("$(diff_of "$ulat" "$elat")")
	bw6_ratios+=("$(ratio_of "$u6bw" "$ubw")") lat6_diffs+=("$(diff_of "$u6lat" "$ulat")")
	printf 'round %d: ib_write_bw 64 KiB udp %s / eth %s Gb/s (%s), ib_write_lat 2 B udp %s / eth %s us (%s us); udp against the %s\n' \
		"$r" "$ubw" "$ebw" "${bw_ratios[-1]}" "$ulat" "$elat" "${lat_diffs[-1]}" \
		"$(ceiling_round "$(ceiling memif 2)" "$ubw" "$W/ceil")"
	printf '         IPv6: ib_write_bw udp6 %s Gb/s (%s of udp), ib_write_lat udp6 %s us (%s us)\n' \
		"$u6bw" "${bw6_ratios[-1]}" "$u6lat" "${lat6_diffs[-1]}"
done
printf 'medians: bandwidth udp/eth %s, latency udp-eth %s us; udp against the %s\n' \
	"$(medians "${bw_ratios[@]}")" "$(medians "${lat_diffs[@]}")" \
	"$(ceiling_median "$W/ceil")"
printf '         bandwidth udp6/udp %s, latency udp6-udp %s us\n' \
	"$(medians "${bw6_ratios[@]}")" "$(medians "${lat6_diffs[@]}")"
