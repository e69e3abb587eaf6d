# Atomics between two nodes (tests/e2e/atomics.c): fetch-and-add from two
# QPs at once returns every value exactly once, compare-and-swap chains and
# contended CAS loops add up, and the error cases fail as verbs says.
. "$(dirname "$0")/../lib.sh"

n=20000
case $BUILD in *san*) n=4000 ;; esac
pair atomics 120 "$BUILD/tests/e2e/atomics" -n $n || fail "atomics"
grep -q ", 0 bad$" "$LOGDIR/atomics.a" || fail "atomics: bad results"
grep -q "^atomics server: .*, 0 bad$" "$LOGDIR/atomics.b" || fail "atomics: bad counters at the server"
cat "$LOGDIR/atomics.a"
exit 0
