#!/usr/bin/env bash
# The engine's own instructions a message and a packet (issue 35's "half
# the cycles a packet", in callgrind's counts, which come out the same run
# after run where this host's cycles swing 2x): build/tests/bench/insns
# (two QPs of one engine across net_ring, whole iterations on one thread:
# tests/bench/insns.c) under callgrind for each SIZE, and the functions
# that take the most.  With -c COMMIT, the same program built in a
# worktree of COMMIT (insns.c copied in; it reaches into the engine's
# structures, so a tree whose fields differ may not build it) counted
# beside it, and this tree's count against it.  The ACK delay and the
# timers run on the clock, which callgrind slows 50-fold: the counts are
# the same run after run, but of a run whose ACKs are fewer and timers
# more frequent a message than natively.
#   tests/bench/insns.sh [-c COMMIT] [SIZE ...]   (default 8 and 65536)
# A packet is a frame leaving and one arriving, each counted (as
# profile.sh counts both nodes' ports).  What it leaves out: memif's copies, the provider, a second thread, the
# cost of a clock read (rdtsc counts one instruction here, 25 cycles on
# this host): tests/bench/profile.sh sees those.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
COMMIT=
if [ "${1:-}" = -c ]; then
	COMMIT=${2:?usage: tests/bench/insns.sh [-c COMMIT] [SIZE ...]}
	shift 2
fi
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(8 65536)
command -v valgrind >/dev/null || {
	apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q valgrind >/dev/null
}
"$ROOT/srnic" setup >/dev/null
if [ -n "$COMMIT" ]; then
	OLD=/tmp/srnic-insns-$(git -C "$ROOT" rev-parse --short "$COMMIT")
	if [ ! -f "$OLD/build/build.ninja" ]; then
		git -C "$ROOT" worktree prune
		rm -rf "$OLD"
		git -C "$ROOT" worktree add --detach "$OLD" "$COMMIT" >/dev/null
		meson setup "$OLD/build" "$OLD" >/dev/null
	fi
	cp "$ROOT/tests/bench/insns.c" "$OLD/tests/bench/insns.c"
	cp "$ROOT/tests/unit/ring_engine.h" "$OLD/tests/unit/ring_engine.h"
	# (the target's lines, from its comment to its last line)
	grep -q "'insns'" "$OLD/tests/bench/meson.build" ||
		sed -n "/^# insns:/,/include_directories('..\/unit'))/p" \
			"$ROOT/tests/bench/meson.build" \
			>> "$OLD/tests/bench/meson.build"
	ninja -C "$OLD/build" tests/bench/insns >/dev/null
fi
ninja -C "$ROOT/build" tests/bench/insns >/dev/null
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# count TREE SIZE: runs it; prints "instructions messages packets", or
# fails saying why
count() {
	local msgs=$((20000 * 4096 / ($2 > 4096 ? $2 : 4096)))
	local line total
	line=$(valgrind -q --tool=callgrind --instr-atstart=no \
		--callgrind-out-file="$OUT/cg" "$1/build/tests/bench/insns" \
		"$msgs" "$2") || { echo "insns failed in $1" >&2; return 1; }
	total=$(awk '/^totals:/ {print $2}' "$OUT/cg")
	if [ "$(awk '{print $12}' <<< "$line")" != 1 ] || [ "${total:-0}" = 0 ]; then
		echo "$1: insns counts nothing (built without valgrind's headers? rebuild it)" >&2
		return 1
	fi
	printf '%s %s %s\n' "$total" \
		"$(awk '{print $2}' <<< "$line")" "$(awk '{print $6}' <<< "$line")"
}

for size in "${SIZES[@]}"; do
	echo
	out=$(count "$ROOT" "$size") || exit 1
	read -r ins msgs pkts <<< "$out"
	awk -v i="$ins" -v m="$msgs" -v p="$pkts" -v s="$size" 'BEGIN {
		printf "%s B WRITEs: %d instructions, %d messages, %d packets: %.0f a message, %.0f a packet\n",
		       s, i, m, p, i / m, i / p }'
	echo
	echo "| function (self) | share | a packet |"
	echo "|---|---|---|"
	callgrind_annotate "$OUT/cg" 2>/dev/null |
		awk -v p="$pkts" -v t="$ins" '
		/^ *[0-9,]+ +\([ 0-9.]+%\) +[^ ]/ && !/PROGRAM TOTALS/ {
			n = $1; gsub(",", "", n)
			f = $0; sub(/^ *[0-9,]+ +\([ 0-9.]+%\) +/, "", f)
			sub(/ \[.*$/, "", f); sub(/^.*\.\.\//, "", f)
			if (++k <= 12)
				printf "| %s | %.1f%% | %.0f |\n", f, 100 * n / t, n / p
		}'
	if [ -n "$COMMIT" ]; then
		out=$(count "$OLD" "$size") || exit 1
		read -r oins omsgs opkts <<< "$out"
		awk -v i="$ins" -v m="$msgs" -v oi="$oins" -v om="$omsgs" -v c="$COMMIT" 'BEGIN {
			printf "\n%s: %.0f instructions a message; this tree %.3fx of it\n",
			       c, oi / om, (i / m) / (oi / om) }'
	fi
done
