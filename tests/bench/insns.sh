#!/usr/bin/env bash
# The engine's own instructions a message and a packet (issue 35's "half
# the cycles a packet", in callgrind's counts, which come out the same run
# after run where this host's cycles swing 2x): build/tests/bench/insns
# (two QPs of one engine across net_ring, whole iterations on one thread:
# tests/bench/insns.c) under callgrind for each SIZE, and the functions
# that take the most.  With -c COMMIT, the same program built in a
# worktree of COMMIT (insns.c copied in: it uses only the engine's API)
# counted beside it, and this tree's count against it.
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
TREES=("$ROOT")
if [ -n "$COMMIT" ]; then
	OLD=/tmp/srnic-insns-$(git -C "$ROOT" rev-parse --short "$COMMIT")
	if [ ! -d "$OLD" ]; then
		git -C "$ROOT" worktree add --detach "$OLD" "$COMMIT" >/dev/null
		meson setup "$OLD/build" "$OLD" >/dev/null
	fi
	cp "$ROOT/tests/bench/insns.c" "$OLD/tests/bench/insns.c"
	grep -q "'insns'" "$OLD/tests/bench/meson.build" ||
		sed -n "/^# insns:/,\$p" "$ROOT/tests/bench/meson.build" \
			>> "$OLD/tests/bench/meson.build"
	ninja -C "$OLD/build" tests/bench/insns >/dev/null
	TREES+=("$OLD")
fi
ninja -C "$ROOT/build" tests/bench/insns >/dev/null
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# count TREE SIZE: runs it; prints "instructions messages packets"
count() {
	local msgs=$((20480 * 4096 / ($2 > 4096 ? $2 : 4096)))
	local line
	line=$(valgrind --tool=callgrind --instr-atstart=no \
		--callgrind-out-file="$OUT/cg" "$1/build/tests/bench/insns" \
		"$msgs" "$2" 2>/dev/null) || { echo "insns failed: $1" >&2; exit 1; }
	printf '%s %s %s\n' "$(awk '/^totals:/ {print $2}' "$OUT/cg")" \
		"$(awk '{print $2}' <<< "$line")" "$(awk '{print $6}' <<< "$line")"
}

for size in "${SIZES[@]}"; do
	echo
	read -r ins msgs pkts <<< "$(count "$ROOT" "$size")"
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
		read -r oins omsgs opkts <<< "$(count "$OLD" "$size")"
		awk -v i="$ins" -v m="$msgs" -v oi="$oins" -v om="$omsgs" -v c="$COMMIT" 'BEGIN {
			printf "\n%s: %.0f instructions a message; this tree %.3fx of it\n",
			       c, oi / om, (i / m) / (oi / om) }'
	fi
done
