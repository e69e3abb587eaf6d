# The data-integrity example: WRITE, READ and SEND of patterned data from
# 1 B to 8 MiB, every byte checked at the far end, with both post APIs.
. "$(dirname "$0")/../lib.sh"

prog=$BUILD/examples/srnic_integrity
pair integrity 120 "$prog" || fail "integrity (legacy post calls)"
grep -q ", 0 bad" "$LOGDIR/integrity.a" || fail "integrity reported bad data"
pair integrity-new 120 "$prog" -N || fail "integrity (ibv_wr_* API)"
grep -q ", 0 bad" "$LOGDIR/integrity-new.a" || fail "integrity (new API) reported bad data"

# Zero-copy transmit (zero_copy = yes): the same bytes arrive when memif
# copies the payload straight out of registered memory.  It is the node's
# setting: where srnicd runs the node, srnicd gets it (started again with
# it, and once more without it after).
for n in a b; do
	{ cat "$(node_conf $n)"; echo "zero_copy = yes"; } > "$LOGDIR/zc-$n.conf"
done
srnicd_restart zc
trap srnicd_restart EXIT
SRNIC_CONF_OVERRIDE=$LOGDIR/zc-b.conf timeout -k 5 120 "$SRNIC" exec b -- "$prog" > "$LOGDIR/zc.b" 2>&1 &
pid=$!
wait_listen b || true
SRNIC_CONF_OVERRIDE=$LOGDIR/zc-a.conf timeout -k 5 120 "$SRNIC" exec a -- "$prog" b > "$LOGDIR/zc.a" 2>&1 ||
	{ tail -n 5 "$LOGDIR/zc.a" "$LOGDIR/zc.b"; fail "integrity with zero-copy transmit"; }
wait $pid || fail "integrity server (zero-copy run)"
grep -q ", 0 bad" "$LOGDIR/zc.a" || fail "integrity with zero-copy transmit reported bad data"
# (asked afresh, and again for a while: srnicd adds a process's counters
# to the node's once it has seen it go)
zc=0
for i in $(seq 20); do
	zc=$(counter a zero_copy_frames)
	[ "${zc:-0}" -gt 0 ] && break
	sleep 0.1
done
[ "${zc:-0}" -gt 0 ] || fail "zero_copy = yes sent no frame from registered memory"
echo "zero-copy frames sent by a: $zc"
srnicd_restart
trap - EXIT

# A device must work again after its last close: both nodes open, use and
# close it once first (each engine stops its ports and starts them again;
# the memif links must come back on both sides, and neither side may be
# hurt by the other leaving mid-handshake).
timeout -k 5 120 "$SRNIC" exec b -- "$prog" -R > "$LOGDIR/reopen.b" 2>&1 &
pid=$!
wait_listen b || true
timeout -k 5 120 "$SRNIC" exec a -- "$prog" -R b > "$LOGDIR/reopen.a" 2>&1 ||
	{ cat "$LOGDIR/reopen.a" "$LOGDIR/reopen.b"; fail "integrity after a reopen"; }
wait $pid || fail "integrity server (reopen run)"
grep -q ", 0 bad" "$LOGDIR/reopen.a" || fail "integrity after a reopen reported bad data"
exit 0
