#!/usr/bin/env bash
# A node killed with SIGKILL in the middle of transfers aimed at it, and
# started again, 20 times in a row: no stale packet lands in the new
# process's memory (issue 3).  On an afpacket testbed of its own (a memif
# peer killed with SIGKILL can fault the survivor: docs/reliability.md).
#
# build/tests/e2e/canary (see canary.c): one blaster on node a for the whole
# run streams RDMA WRITEs and SENDs, 64 in flight, QP timeout 17 (0.54 s)
# and retry_cnt 7, into a target on node b that this script kills with
# SIGKILL in the middle of the traffic and starts again at once.  Each new
# target maps its buffers at the same address and registers them in the same
# order (same key indices; only the keys' random tags and the node's
# incarnation are new), fills them with a canary and watches every byte for
# a quiet period; then it checks every SEND and every WRITE of its own round.
# The blaster's old QPs must end in error completions, never hang.
#
# Stale traffic must really reach the new process, else this proves nothing.
# The integration exchange (BOOTING) fails the blaster's old QP as soon as
# the new process has heard node a; so while a target starts, node b's ports
# hold what they receive for HOLD (./srnic testbed fault b P delay=...): the
# new process hears a late, and meanwhile the old QP, which already sees the
# new process's HELLOs, keeps resending toward the dead one.  The run fails
# unless that happened: some old QP outlived a restart well into the next
# quiet period, and node b dropped stale packets in those rounds (drop
# stale_incarnation).
#
# The watch can fail: the last target (not killed) lets the blaster WRITE
# into its buffer while it watches, and must see exactly that.
#
# CANARY_KILLS (default 20) sets the number of kills; CANARY_HOLD (default
# 600ms) the hold; CANARY_BASE a fault every port of both nodes has besides
# (e.g. "reorder=25% delay=1ms"); CANARY_EQUAL_DRAW=1 forces every
# target's random incarnation bits to one value
# (SRNIC_DEBUG_INC_RANDOM), so that only the node's boot count tells its
# processes apart.
set -u
. "$(dirname "$0")/../lib.sh"

KILLS=${CANARY_KILLS:-20}
HOLD=${CANARY_HOLD:-600ms}
BASE=${CANARY_BASE:-}
target_env=()
[ "${CANARY_EQUAL_DRAW:-0}" = 1 ] && target_env=(env SRNIC_DEBUG_INC_RANDOM=0x5eed)
QUIET_MS=1500
PROG=$BUILD/tests/e2e/canary
[ -x "$PROG" ] || fail "$PROG not built (ninja -C build)"
WORK=$LOGDIR/09-restart-canary.d
rm -rf "$WORK"; mkdir -p "$WORK"

export SRNIC_NS=${SRNIC_NS:-srnic}-k SRNIC_RUN=${SRNIC_RUN:-/run/srnic}-k
cleanup() {
	local ns pids
	for ns in "$SRNIC_NS-a" "$SRNIC_NS-b"; do
		pids=$(ip netns pids "$ns" 2>/dev/null)
		[ -n "$pids" ] && kill -9 $pids 2>/dev/null
	done
	"$SRNIC" testbed down >/dev/null 2>&1
}
trap cleanup EXIT
"$SRNIC" testbed down >/dev/null 2>&1
# (the embedded engine, which this test needs: killing the target kills
# its node, whose restart is what is tested; afpacket runs no srnicd)
"$SRNIC" testbed up --wire afpacket > "$WORK/testbed.log" 2>&1 ||
	{ cat "$WORK/testbed.log"; fail "afpacket testbed"; }

# field KEY LINE: the value of KEY=value in LINE.
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< " $2"; }
# hold_b SETTING...: the same fault on both of node b's ports.
hold_b() {
	local p
	for p in 0 1; do
		"$SRNIC" testbed fault b $p "$@" || fail "fault b $p $*"
	done
}
# The faults every port has when b is not holding.
# shellcheck disable=SC2086
base() {
	if [ -n "$BASE" ]; then
		hold_b $BASE
	else
		hold_b clear
	fi
}
if [ -n "$BASE" ]; then
	for p in 0 1; do
		# shellcheck disable=SC2086
		"$SRNIC" testbed fault a $p $BASE || fail "fault a $p $BASE"
	done
	base
fi
# wait_line LOG PATTERN PID: until LOG has a line matching PATTERN.
wait_line() {
	until grep -q "$2" "$1"; do
		if ! kill -0 "$3" 2>/dev/null; then
			cat "$1"; tail -5 "$blog"
			fail "the target ended before '$2'"
		fi
		sleep 0.02
	done
}

blog=$WORK/blaster.log
timeout -k 5 $((KILLS * 15 + 120)) "$SRNIC" exec a -- "$PROG" blaster \
	-n "$KILLS" -t 17 -c 7 b > "$blog" 2>&1 &
bpid=$!

traffic=(0.55 0.7 0.85 1.0 1.15)	# seconds of traffic before the kill
declare -A stale qstart qend
incs=()
start=$SECONDS
for ((r = 0; r <= KILLS; r++)); do
	log=$WORK/target.$r.log
	rm -f "$WORK/target.pid"
	: > "$log"	# wait_line reads it before the target writes
	last=()
	[ "$r" = "$KILLS" ] && last=(-l)
	timeout -k 5 120 "$SRNIC" exec b -- "${target_env[@]}" "$PROG" target -r "$r" -q $QUIET_MS \
		"${last[@]}" -P "$WORK/target.pid" > "$log" 2>&1 &
	tpid=$!
	if [ "$r" -gt 0 ]; then
		# Frames held so far come out within the quiet period.
		wait_line "$log" "^target round=$r registered" $tpid
		sleep "$(awk -v h="$HOLD" 'BEGIN { print (h ~ /ms$/ ? h / 1000 : h + 0) + 0.1 }')"
		base
	fi
	if [ "$r" = "$KILLS" ]; then
		wait $tpid || { cat "$log"; fail "round $r: the last target failed"; }
	else
		wait_line "$log" "^target round=$r traffic" $tpid
		sleep "${traffic[r % 5]}"
		pid=$(cat "$WORK/target.pid")
		# Only the target program itself: nothing else of node b.
		tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q "canary target -r $r " ||
			fail "round $r: pid $pid is not the target"
		hold_b delay="$HOLD"
		kill -9 "$pid"
		wait $tpid 2>/dev/null
	fi
	if grep -Eq '^(CORRUPT|BAD|NEGATIVE)' "$log"; then
		cat "$log"
		fail "round $r: bad data in the target's memory"
	fi
	q=$(grep "^target round=$r quiet ok" "$log") || { cat "$log"; fail "round $r: no quiet period"; }
	reg=$(grep "^target round=$r registered" "$log")
	qstart[$r]=$(field quiet_start_ms "$reg")
	qend[$r]=$(field quiet_end_ms "$q")
	seen=$(grep "^target round=$r \(progress\|final\)" "$log" | tail -1)
	stale[$r]=$(counter b drops.stale_incarnation)
	inc=$(printf '%08x' "$(counter b incarnation)")
	incs+=("$inc")
	printf 'round %2d: incarnation %s wbuf %s rkey %s: canary intact for %s ms (%s scans); %s SENDs, %s WRITEs, %s bytes verified; %s; stale_incarnation %s\n' \
		"$r" "$inc" "$(field wbuf "$reg")" "$(field rkey "$reg")" \
		"$(field quiet_ms "$q")" "$(field scans "$q")" \
		"$(field sends "$seen")" "$(field writes "$seen")" "$(field bytes "$seen")" \
		"$([ "$r" = "$KILLS" ] && echo "not killed" || echo "killed after ${traffic[r % 5]} s")" \
		"${stale[$r]:-?}"
done
grep "negative check" "$WORK/target.$KILLS.log"
grep -q "negative check ok" "$WORK/target.$KILLS.log" || fail "the negative check did not pass"

wait $bpid
brc=$?
grep -E '^(BAD|canary:)' "$blog" && fail "the blaster saw something wrong"
[ $brc = 0 ] || { tail -20 "$blog"; fail "the blaster failed (exit $brc)"; }
grep -q "^blaster done failed=0" "$blog" || fail "the blaster did not finish"

# How each killed round's QP ended, and how long it was still there while
# the next process watched its canary.
owed=0 owed_stale=0 total=0
for ((r = 0; r < KILLS; r++)); do
	l=$(grep "^blaster round=$r old_qp" "$blog") || fail "round $r: no end of the old QP"
	e=$(field first_err_ms "$l")
	n=$((r + 1))
	ov=$(( (e < qend[$n] ? e : qend[$n]) - qstart[$n] ))
	[ $ov -lt 0 ] && ov=0
	echo "round $r's QP: $(field ok "$l") of $(field posted "$l") WRs done, then $(field first_err "$l") $(field err_after_gone_ms "$l") ms after the kill and $(($(field errors "$l") - 1)) flushed, state $(field state "$l"); alive for $ov ms of round $n's quiet period"
	total=$((total + ${stale[$n]:-0}))
	if [ $ov -ge 300 ]; then
		owed=$((owed + 1)); owed_stale=$((owed_stale + ${stale[$n]:-0}))
	fi
done
[ "$(printf '%s\n' "${incs[@]}" | sort -u | wc -l)" = $((KILLS + 1)) ] ||
	fail "an incarnation came back: ${incs[*]}"
if [ "${CANARY_EQUAL_DRAW:-0}" = 1 ]; then
	[ "$(printf '%s\n' "${incs[@]}" | cut -c5-8 | sort -u)" = 5eed ] ||
		fail "random bits not forced equal: ${incs[*]}"
	echo "every target's random bits were 5eed; the boot counts kept them apart"
fi
# Stale traffic must have been faced, or the run proved nothing.
[ $owed -gt 0 ] ||
	fail "no old QP outlived a restart into the quiet period: no stale traffic was faced"
[ $owed_stale -gt 0 ] ||
	fail "old QPs outlived $owed restarts into the quiet period, yet node b dropped no stale packet: nothing stale was faced"
echo "canary: $KILLS kills and restarts in $((SECONDS - start)) s, no stale byte landed; node b dropped $total stale packets ($owed_stale in the $owed rounds whose quiet period an old QP outlived by 300 ms or more)"
exit 0
