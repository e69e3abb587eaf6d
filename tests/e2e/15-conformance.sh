#!/usr/bin/env bash
# Does srnic answer as the verbs specification says?  build/tests/e2e/
# conformance as server on b and client on a: the QP state machine of RC,
# UC and UD (every pair of states, required, optional and forbidden
# attributes, what ibv_query_qp reads back), the device and port queries,
# the limits and what post time refuses, and the error completions between
# the two nodes.  Every check prints "ok - ..." or "not ok - ..."; each
# side ends with "# N checks, M failed".
set -u
. "$(dirname "$0")/../lib.sh"

PROG=$BUILD/tests/e2e/conformance
[ -x "$PROG" ] || fail "$PROG not built (ninja -C build)"
rc=0

pair_checked conformance 60 "$PROG" -p 18601 || rc=1
grep -h "^# [0-9]* checks" "$LOGDIR/conformance.a" "$LOGDIR/conformance.b"

[ $rc = 0 ] || fail "conformance checks failed (logs in $LOGDIR/conformance.{a,b})"
echo "all conformance checks passed"
