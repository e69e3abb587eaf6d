#!/usr/bin/env bash
# The kernel's autogroup scheduling on and off (docs/architecture.md,
# "Scheduling"; ./srnic setup turns it off), in one run: each round brings
# up the default testbed (memif, two ports, srnicd in each node) once with
# kernel.sched_autogroup_enabled = 1 and once with 0, the two going first
# by turns, and on each runs 4 ib_write_bw pairs a -> b at once (64 KiB,
# SECONDS: every frame through the port token, srnicd forwarding what its
# poller is not for), an ibv_rc_pingpong (64 B, bytes checked) beside 3
# pairs, and RUNS ibv_rc_pingpong -c pairs over ends with different
# queues (a restarted with queues = 2, b with 4: each end's program a
# steering class whose frames only its srnicd polls), counting those that
# failed.  The setting is put back as it was at the end.
#   tests/bench/autogroup.sh [ROUNDS] [SECONDS] [RUNS]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${1:-3}
SECS=${2:-4}
RUNS=${3:-8}
AG=/proc/sys/kernel/sched_autogroup_enabled
export SRNIC_NS=srbench SRNIC_RUN=/run/srnic-bench SRNIC_AUTOGROUP=keep
SRNIC=$ROOT/srnic
TB=$SRNIC_RUN/testbed
. "$ROOT/tests/bench/lib.sh"
[ -w $AG ] || { echo "SKIP: no $AG to set"; exit 77; }

# mismatched: RUNS pingpongs over ends with queues 2 (a) and 4 (b): how
# many failed
mismatched() {
	local i bad=0
	"$SRNIC" testbed up --ports 2 --srnicd yes --queues 4 > /dev/null
	"$SRNIC" srnicd a stop
	sed -i 's/^queues = 4$/queues = 2/' "$TB/a.conf"
	"$SRNIC" srnicd a start
	sleep 3
	for ((i = 0; i < RUNS; i++)); do
		"$SRNIC" exec b -- ibv_rc_pingpong -g 1 -c -n 3000 -s 64 -p 18610 \
			> "$W/mm.b" 2>&1 &
		sleep 0.7
		timeout 60 "$SRNIC" exec a -- ibv_rc_pingpong -g 1 -c -n 3000 -s 64 \
			-p 18610 b > "$W/mm.a" 2>&1 || bad=$((bad + 1))
		wait || true
	done
	"$SRNIC" testbed down > /dev/null
	echo "$bad"
}

measure() {	# 1|0 (autogroups): "sum4 slow4 pp failed"
	echo "$1" > $AG
	"$SRNIC" testbed up --ports 2 --srnicd yes > /dev/null
	printf '%s %s' "$(pairs_sum_min 4 "$SECS" "$W")" "$(pingpong_beside 3 "$SECS" "$W")"
	"$SRNIC" testbed down > /dev/null
	printf ' %s\n' "$(mismatched)"
}

W=$(mktemp -d)
was=$(cat $AG)
trap 'echo "$was" > $AG; "$SRNIC" testbed down >/dev/null 2>&1; rm -rf "$W"' EXIT
"$SRNIC" testbed down > /dev/null 2>&1 || true
"$SRNIC" setup > /dev/null
for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then
		read -r s4 w4 sp sf <<< "$(measure 1)"
		read -r q4 v4 qp qf <<< "$(measure 0)"
	else
		read -r q4 v4 qp qf <<< "$(measure 0)"
		read -r s4 w4 sp sf <<< "$(measure 1)"
	fi
	printf 'round %d: autogroups on / off: 4 pairs %s / %s Gb/s (slowest %s / %s), pingpong beside 3 pairs %s / %s usec/iter, pingpongs over mismatched ends failed %s / %s of %d\n' \
		"$r" "$s4" "$q4" "$w4" "$v4" "$sp" "$qp" "$sf" "$qf" "$RUNS"
	echo "$s4 $q4 $w4 $v4 $sp $qp $sf $qf" >> "$W/rounds"
done
col() { awk -v c="$1" '$c ~ /^[0-9.]+$/ {print $c}' "$W/rounds" | median; }
rat() { awk -v a="$1" -v b="$2" '$a + 0 > 0 && $b ~ /^[0-9.]+$/ {print $b / $a}' "$W/rounds" | median; }
tot() { awk -v c="$1" '{t += $c} END {print t + 0}' "$W/rounds"; }
printf 'median of %d rounds: 4 pairs %s / %s Gb/s (off/on %.2fx; slowest %s / %s, %.2fx), pingpong beside 3 pairs %s / %s usec/iter (%.2fx); mismatched pingpongs failed %s / %s of %d in all\n' \
	"$ROUNDS" "$(col 1)" "$(col 2)" "$(rat 1 2)" "$(col 3)" "$(col 4)" "$(rat 3 4)" \
	"$(col 5)" "$(col 6)" "$(rat 5 6)" "$(tot 7)" "$(tot 8)" $((ROUNDS * RUNS))
