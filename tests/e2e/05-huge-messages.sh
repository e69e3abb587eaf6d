# Verbs' largest message, 2 GiB, each way: an RDMA WRITE, an RDMA READ and a
# SEND of 2^31 bytes between a and b, every byte checked at the far end
# (524288 packets a message, out of order over two ports).
. "$(dirname "$0")/../lib.sh"

pair huge 300 "$BUILD/examples/srnic_integrity" -L || fail "2 GiB messages"
grep -q "3 checks, 0 bad" "$LOGDIR/huge.a" || fail "2 GiB messages: bad data"
exit 0
