# Loopback: QPs of one program on node a connected through a's own GID
# (tests/e2e/loopback.c: RC WRITE, READ, SEND with immediate, atomics, a
# foreign key refused, UD datagrams with their GRH; every byte checked).
# The frames take the loopback port, none the wire: a's counters show the
# loopback carrying the megabytes and the wire ports next to nothing.
. "$(dirname "$0")/../lib.sh"

on a 120 -- "$BUILD/tests/e2e/loopback" -s $((4 << 20)) > "$LOGDIR/loopback.a" 2>&1
rc=$?
cat "$LOGDIR/loopback.a"
[ $rc = 0 ] || fail "loopback (exit $rc)"
grep -q "^# [1-9][0-9]* checks, 0 failed$" "$LOGDIR/loopback.a" || fail "loopback: no summary"
out=$("$SRNIC" stats a) || fail "./srnic stats a"
echo "$out" | grep -E '^(port|loopback) '
echo "$out" | awk '
	/^loopback / { lo = $9 }
	/^port / { wire += $12 }
	END {
		# 4 MiB written each way and read back: 12 MiB at least
		if (lo < 12 * 1048576) { print "loopback carried " lo " bytes"; exit 1 }
		if (wire > 1048576) { print "the wire carried " wire " bytes"; exit 1 }
	}' || fail "loopback frames went on the wire, or not through the loopback"
exit 0
