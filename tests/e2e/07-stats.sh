# ./srnic stats NODE: the counters a node's control core writes.  After an
# ib_write_bw from a to b they show every port carrying about its share of
# the data (striping), the peer seen on every port, and no malformed frame.
# (A QP connects once its peer was heard on every port with a link up, or
# a few HELLOs later: the transfer, 0.2 s or so, must not run on one port
# because the other's first HELLO was a few ms late.)
. "$(dirname "$0")/../lib.sh"

pair stats-bw 60 ib_write_bw -s 65536 -n 10000 || fail "ib_write_bw"
out=$("$SRNIC" stats a) || fail "./srnic stats a"
echo "$out"
echo "$out" | grep -Eq '^peer b 10\.55\.0\.2 incarnation [0-9a-f]{8} ports_up 0 1$' ||
	fail "peer b not up on both ports"
[ "$(counter a ports_up b)" = "0 1" ] || fail "--json: peer b not up on both ports"
[ "$(counter a drops.malformed)" = 0 ] || fail "malformed frames on a clean wire"
tx0=$(counter a tx_bytes 0) tx1=$(counter a tx_bytes 1)
awk -v a="$tx0" -v b="$tx1" 'BEGIN {
		total = a + b
		if (total < 10000 * 65536) { print "too few bytes sent: " total; exit 1 }
		if (a < 0.4 * total || b < 0.4 * total) { print "ports carried " a " and " b; exit 1 }
	}' || fail "striping: the ports do not share the load"
[ "$(counter b link 1)" = up ] || fail "./srnic stats b: port 1 not up"
exit 0
