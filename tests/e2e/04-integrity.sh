# The data-integrity example: WRITE, READ and SEND of patterned data from
# 1 B to 8 MiB, every byte checked at the far end, with both post APIs.
. "$(dirname "$0")/../lib.sh"

prog=$BUILD/examples/srnic_integrity
pair integrity 120 "$prog" || fail "integrity (legacy post calls)"
grep -q ", 0 bad" "$LOGDIR/integrity.a" || fail "integrity reported bad data"
pair integrity-new 120 "$prog" -N || fail "integrity (ibv_wr_* API)"
grep -q ", 0 bad" "$LOGDIR/integrity-new.a" || fail "integrity (new API) reported bad data"
exit 0
