#!/usr/bin/env bash
# Stress: 10^6 messages of mixed opcodes (WRITE, WRITE with immediate, SEND,
# SEND with immediate, READ) and sizes (0 B to 64 KiB), over 4 RC QPs with
# up to 64 work requests in flight each, selective signaling, both post
# APIs; every byte, every completion and its order checked
# (build/tests/e2e/stress, server on b, client on a).  The client's last
# line is the summary, with the seed: "stress -s SEED" on both sides replays
# the same messages.
#   STRESS_COUNT   messages (default 1000000; 200000 in a sanitizer build)
set -u
. "$(dirname "$0")/../lib.sh"

PROG=$BUILD/tests/e2e/stress
[ -x "$PROG" ] || fail "$PROG not built (ninja -C $BUILD)"
count=1000000
# Under AddressSanitizer a shorter run (tests/run's sanitizer pass).
grep -q '"name": "b_sanitize", "value": "none"' \
	"$BUILD/meson-info/intro-buildoptions.json" 2>/dev/null || count=200000
count=${STRESS_COUNT:-$count}

pair stress 300 "$PROG" -n "$count" || fail "stress run (logs: $LOGDIR/stress.a, stress.b)"
summary=$(grep '^stress: .* messages (' "$LOGDIR/stress.a") ||
	fail "no summary line from the client"
echo "$summary"
grep -q '^stress: server checked .*, 0 bad' "$LOGDIR/stress.b" ||
	fail "the server did not check every message"
case $summary in
*" $count messages ("*", 0 bad, "*) ;;
*) fail "stress reported bad data" ;;
esac
exit 0
