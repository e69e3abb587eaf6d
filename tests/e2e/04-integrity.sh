# The data-integrity example: WRITE, READ and SEND of patterned data from
# 1 B to 8 MiB, every byte checked at the far end, with both post APIs.
. "$(dirname "$0")/../lib.sh"

prog=$BUILD/examples/srnic_integrity
pair integrity 120 "$prog" || fail "integrity (legacy post calls)"
grep -q ", 0 bad" "$LOGDIR/integrity.a" || fail "integrity reported bad data"
pair integrity-new 120 "$prog" -N || fail "integrity (ibv_wr_* API)"
grep -q ", 0 bad" "$LOGDIR/integrity-new.a" || fail "integrity (new API) reported bad data"

# A device must work again after its last close: both nodes open, use and
# close it once first (each engine stops its ports and starts them again;
# the memif links must come back on both sides, and neither side may be
# hurt by the other leaving mid-handshake).
timeout -k 5 120 "$SRNIC" exec b -- "$prog" -R > "$LOGDIR/reopen.b" 2>&1 &
pid=$!
sleep 0.5
timeout -k 5 120 "$SRNIC" exec a -- "$prog" -R b > "$LOGDIR/reopen.a" 2>&1 ||
	{ cat "$LOGDIR/reopen.a" "$LOGDIR/reopen.b"; fail "integrity after a reopen"; }
wait $pid || fail "integrity server (reopen run)"
grep -q ", 0 bad" "$LOGDIR/reopen.a" || fail "integrity after a reopen reported bad data"
exit 0
