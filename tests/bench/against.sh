#!/usr/bin/env bash
# This tree against an older commit, built beside it, in one run: each
# round brings up a two-port testbed of each tree in turn, the trees going
# first by turns (same wire, same namespaces) and takes ib_write_bw 64 KiB for SECONDS, ib_write_lat
# 2 B (5000 iterations) and ib_write_bw 8 B's message rate for SECONDS
# (issue 35's "8-byte WRITE message rate") on it; then the median of each
# and of the ratios
# within a round (this host is noisy: only same-run ratios mean much),
# and this tree's bandwidth against the wire's ceiling (lib.sh's ceiling,
# taken on this tree's testbed).
#   tests/bench/against.sh COMMIT [ROUNDS] [SECONDS] [WIRE]
# The older tree is a git worktree under /tmp (built once, kept for the
# next run); WIRE is memif (default) or afpacket.  AGAINST_QUEUES=N brings
# this tree's testbed up with --queues N (since session 50 its nodes steer
# by default, queues = 4: each program of a pair its node's first, on
# queues of its own; AGAINST_QUEUES=1 for the port token's path), the
# older one's as it was.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
COMMIT=${1:?usage: tests/bench/against.sh COMMIT [ROUNDS] [SECONDS] [WIRE]}
ROUNDS=${2:-3}
SECS=${3:-3}
WIRE=${4:-memif}
. "$ROOT/tests/bench/lib.sh"
export SRNIC_NS=srbench SRNIC_RUN=/run/srnic-bench

OLD=/tmp/srnic-against-$(git -C "$ROOT" rev-parse --short "$COMMIT")
if [ ! -x "$OLD/build/provider/libsrnic-rdmav34.so" ]; then
	git -C "$ROOT" worktree remove --force "$OLD" 2>/dev/null || true
	git -C "$ROOT" worktree add --detach "$OLD" "$COMMIT" >/dev/null
	meson setup "$OLD/build" "$OLD" >/dev/null
	ninja -C "$OLD/build" >/dev/null
fi
"$ROOT/srnic" setup >/dev/null

write_lat() {
	srnic_pair ib_write_lat -s 2 -n 5000 | awk '$1 == 2 && NF >= 7 {print $5}'
}

msg_rate() {	# ib_write_bw 8 B for SECS: its message rate, Mpps
	or_dash "$(srnic_pair ib_write_bw -s 8 -D "$SECS" |
		   awk '$1 == 8 && NF >= 5 {print $5}')"
}

measure() {	# tree [ceiling]: prints "bw lat rate" (and the wire's ceiling)
	SRNIC=$1/srnic
	"$SRNIC" testbed up --wire "$WIRE" --ports 2 \
		$([ "$1" != "$ROOT" ] || echo "${AGAINST_QUEUES:+--queues $AGAINST_QUEUES}") >/dev/null
	printf '%s %s %s %s\n' "$(or_dash "$(write_bw "$SECS")")" \
		"$(or_dash "$(write_lat)")" "$(msg_rate)" \
		"$([ -z "${2:-}" ] || ceiling "$WIRE" 2)"
	"$SRNIC" testbed down >/dev/null
}

trap '"$ROOT/srnic" testbed down >/dev/null 2>&1' EXIT
"$ROOT/srnic" testbed down >/dev/null 2>&1 || true
W=$(mktemp -d)
for ((r = 1; r <= ROUNDS; r++)); do
	# (each measure ends with its testbed down before the next starts;
	# the trees take turns going first: the first of a round measured
	# slower, this tree against itself gave +0.63 us and 94.9% in four
	# rounds)
	if ((r % 2)); then
		read -r nbw nlat nrate ceil <<< "$(measure "$ROOT" ceiling)"
		read -r obw olat orate <<< "$(measure "$OLD")"
	else
		read -r obw olat orate <<< "$(measure "$OLD")"
		read -r nbw nlat nrate ceil <<< "$(measure "$ROOT" ceiling)"
	fi
	printf 'round %d (%s%s): ib_write_bw 64 KiB %s / %s Gb/s (this / %s), ib_write_lat 2 B %s / %s us, ib_write_bw 8 B %s / %s Mpps; this against the %s\n' \
		"$r" "$WIRE" "${AGAINST_QUEUES:+, this with --queues $AGAINST_QUEUES}" "$nbw" "$obw" "$COMMIT" "$nlat" "$olat" "$nrate" "$orate" \
		"$(ceiling_round "$ceil" "$nbw" "$W/ceil")"
	awk -v a="$nbw" -v b="$obw" 'BEGIN {print 100 * a / b}' >> "$W/bw"
	awk -v a="$nlat" -v b="$olat" 'BEGIN {print a - b}' >> "$W/lat"
	ratio "$nrate" "$orate" >> "$W/rate"
done
printf 'median: bandwidth this / %s %.1f%%, latency this - %s %+.2f us, 8 B message rate this / %s %sx; this against the %s\n' \
	"$COMMIT" "$(median < "$W/bw")" "$COMMIT" "$(median < "$W/lat")" \
	"$COMMIT" "$(median < "$W/rate")" "$(ceiling_median "$W/ceil")"
rm -rf "$W"
