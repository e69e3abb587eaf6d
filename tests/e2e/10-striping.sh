# Striping weights and lossy ports, on a tap testbed of its own whose
# ports have weights 3 and 1 (./srnic testbed up --weights 3,1):
#  1. a bulk transfer puts about three quarters of a's bytes on port 0;
#  2. a port that keeps losing (50% of its frames, both ways, on b's rail 0)
#     leaves the rotation within a few seconds: the stats name it lossy, the
#     data-integrity example passes, and the port carries almost nothing
#     new; once the loss stops it comes back by itself.
. "$(dirname "$0")/../lib.sh"

export SRNIC_NS=${SRNIC_NS:-srnic}-w SRNIC_RUN=${SRNIC_RUN:-/run/srnic}-w
TB=$SRNIC_RUN/testbed
trap '"$SRNIC" testbed down >/dev/null 2>&1' EXIT
"$SRNIC" testbed down >/dev/null 2>&1
"$SRNIC" testbed up --wire tap --weights 3,1 >/dev/null || fail "testbed"

# tx_bytes of a's ports 0 and 1, one reading
tx() { counter a tx_bytes ports; }

# wait_lossy SECS PORTS: until a's counters name PORTS (a list, maybe
# empty) the lossy ones of peer b
wait_lossy() {
	local i lossy
	for ((i = 0; i < $1 * 4; i++)); do
		lossy=$(counter a lossy b) && [ "$lossy" = "$2" ] && return 0
		sleep 0.25
	done
	"$SRNIC" stats a
	return 1
}

pair weights 60 ib_write_bw -s 65536 -n 3000 || fail "ib_write_bw"
read -r t0 t1 <<< "$(tx)"
echo "weights 3,1: port 0 sent $t0 bytes, port 1 $t1"
awk -v a="$t0" -v b="$t1" 'BEGIN { s = a / (a + b); exit !(s > 0.68 && s < 0.82) }' ||
	fail "port 0 carried not about 3/4 of the bytes"
[ "$(counter a weight 0)" = 3 ] || fail "stats: no weight 3 on port 0"

"$SRNIC" testbed fault b 0 loss=50% || fail "fault"
# Data keeps moving, and checked, all through what follows.
pair lossy-integrity 300 "$BUILD/examples/srnic_integrity" -r 12 &
run=$!
wait_lossy 20 0 || fail "port 0 not found lossy"
read -r t0 t1 <<< "$(tx)"
sleep 3
read -r d0 d1 <<< "$(tx)"
d0=$((d0 - t0)) d1=$((d1 - t1))
echo "port 0 lossy: in 3 s port 0 sent $d0 bytes, port 1 $d1"
awk -v a="$d0" -v b="$d1" 'BEGIN { exit !(b > 0 && a < 0.1 * (a + b)) }' ||
	fail "the lossy port still carried a share"
"$SRNIC" testbed fault b 0 clear
wait_lossy 20 "" || fail "port 0 did not come back"
read -r t0 _ <<< "$(tx)"
sleep 2
read -r d0 _ <<< "$(tx)"
[ "$d0" -gt "$t0" ] || fail "port 0 carries nothing since it came back"
wait $run || fail "integrity with a lossy port"
grep -q ", 0 bad" "$LOGDIR/lossy-integrity.a" || fail "bad data with a lossy port"
exit 0
