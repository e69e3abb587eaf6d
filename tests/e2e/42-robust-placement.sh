# Robust placement (docs/reliability.md): b registers three pages as an
# ordinary region and unmaps the middle one without deregistering it
# (tests/e2e/fence_check.c).  a's WRITE into the hole completes with
# REM_ACCESS_ERR, and so does a later WRITE into a mapped page of the
# region, its key fenced; b lives on, its mapped pages as they should be,
# and deregisters the region.  b's counters: one more page_fault, one
# more fault_fenced.
. "$(dirname "$0")/../lib.sh"

# b's counters before: where srnicd runs node b they count from its start
faults0=$(counter b drops.page_fault) fenced0=$(counter b fault_fenced)
pair fence 120 "$BUILD/tests/e2e/fence_check" || fail "fence_check"
checked "$LOGDIR/fence.a" || fail "fence_check (a): a check failed"
checked "$LOGDIR/fence.b" || fail "fence_check (b): a check failed"
cat "$LOGDIR/fence.a" "$LOGDIR/fence.b"
faults=$(( $(counter b drops.page_fault) - ${faults0:-0} ))
fenced=$(( $(counter b fault_fenced) - ${fenced0:-0} ))
echo "b: $faults page faults, $fenced keys fenced during the run"
[ "$faults" = 1 ] && [ "$fenced" = 1 ] ||
	fail "b counted $faults page faults and $fenced fenced keys, not 1 and 1"
exit 0
