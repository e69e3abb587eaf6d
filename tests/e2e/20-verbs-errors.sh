#!/usr/bin/env bash
# Bad input gets the error a verbs user expects, with no crash and no hang:
# build/tests/e2e/verbs_errors as server on b and client on a (every check
# prints "ok - ..." or "not ok - ..."), then alone on a for a GID that no
# node answers, with the node's resolve time cut to 500 ms.
set -u
. "$(dirname "$0")/../lib.sh"

PROG=$BUILD/tests/e2e/verbs_errors
[ -x "$PROG" ] || fail "$PROG not built (ninja -C build)"
WORK=$LOGDIR/20-verbs-errors.d
rm -rf "$WORK"; mkdir -p "$WORK"
rc=0

# 1. Client and server.
pair_checked verbs_errors 90 "$PROG" -p 18592 || rc=1

# 2. Unreachable GID, with a copy of a's configuration that resolves for
#    500 ms only (the last value of a key wins).
{ cat "$(node_conf a)"; echo "resolve_ms = 500"; } > "$WORK/a.conf"
SRNIC_CONF_OVERRIDE=$WORK/a.conf on a 30 -- "$PROG" --unreachable 10.55.0.99 \
	--resolve-ms 500 > "$LOGDIR/verbs_errors.unreachable" 2>&1 || {
	echo "--- unreachable run: exit $?" >&2; rc=1; }
cat "$LOGDIR/verbs_errors.unreachable"
checked "$LOGDIR/verbs_errors.unreachable" || rc=1

[ $rc = 0 ] || fail "verbs error checks failed (logs in $LOGDIR/verbs_errors.*)"
echo "all verbs error checks passed"
