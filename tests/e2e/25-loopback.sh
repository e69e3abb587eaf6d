# Loopback: QPs of one program on node a connected through a's own GID
# (tests/e2e/loopback.c: RC WRITE, READ, SEND with immediate, atomics, a
# foreign key refused, UD datagrams with their GRH, CQ events and their
# moderation, the extended CQ's readers, ibv_rereg_mr, RESET clearing a
# CQ; every byte checked), memory windows of type 1 and 2 through it
# (tests/e2e/windows.c), and on-demand paging: fresh and implicit regions,
# and a hole in a region failing its messages, never the process
# (tests/e2e/odp.c), and completion at both ends (tests/e2e/remote_notify.c,
# e2e/46's, run here under the sanitizers too).
# The frames take the loopback port, none the wire: a's counters show the
# loopback carrying the megabytes and the wire ports next to nothing.
. "$(dirname "$0")/../lib.sh"

# loopback and wire bytes sent: where srnicd runs node a, its counters
# count from its start (the suite's earlier tests), so what the run added;
# else the program's own
sent() {
	echo "$(counter a tx_bytes loopback)" "$(port_sum a tx_bytes)"
}
lo0=0 wire0=0
if kill -0 "$(cat "$TB/a.srnicd.pid" 2>/dev/null)" 2>/dev/null; then
	read -r lo0 wire0 <<< "$(sent)" || fail "./srnic stats a"
fi
on a 120 -- "$BUILD/tests/e2e/loopback" -s $((4 << 20)) > "$LOGDIR/loopback.a" 2>&1
rc=$?
cat "$LOGDIR/loopback.a"
[ $rc = 0 ] || fail "loopback (exit $rc)"
grep -q "^# [1-9][0-9]* checks, 0 failed$" "$LOGDIR/loopback.a" || fail "loopback: no summary"
"$SRNIC" stats a | grep -E '^(port|loopback) ' || fail "./srnic stats a"
read -r lo1 wire1 <<< "$(sent)"
lo=$((lo1 - lo0)) wire=$((wire1 - wire0))
echo "during the run: $lo bytes on the loopback, $wire on the wire"
# 4 MiB written each way and read back: 12 MiB at least
[ "$lo" -ge $((12 * 1048576)) ] && [ "$wire" -le 1048576 ] ||
	fail "loopback frames went on the wire, or not through the loopback"
on a 120 -- "$BUILD/tests/e2e/windows" > "$LOGDIR/windows.a" 2>&1
rc=$?
cat "$LOGDIR/windows.a"
[ $rc = 0 ] || fail "windows (exit $rc)"
grep -q "^# [1-9][0-9]* checks, 0 failed$" "$LOGDIR/windows.a" || fail "windows: no summary"
on a 120 -- "$BUILD/tests/e2e/odp" > "$LOGDIR/odp.a" 2>&1
rc=$?
cat "$LOGDIR/odp.a"
[ $rc = 0 ] || fail "odp (exit $rc)"
grep -q "^# [1-9][0-9]* checks, 0 failed$" "$LOGDIR/odp.a" || fail "odp: no summary"
# (completion at both ends through the loopback, e2e/46's test, here too
# because this test runs again against the sanitizer build)
on a 60 -- "$BUILD/tests/e2e/remote_notify" > "$LOGDIR/notify.a" 2>&1
rc=$?
[ $rc = 0 ] || { cat "$LOGDIR/notify.a"; fail "remote_notify (exit $rc)"; }
grep "^#" "$LOGDIR/notify.a"
grep -q "^# [1-9][0-9]* checks, 0 failed$" "$LOGDIR/notify.a" || fail "remote_notify: no summary"
exit 0
