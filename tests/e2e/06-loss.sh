# Loss on the wire: 1% of the frames on every rail, both directions, are
# dropped (tests/e2e/lossy.bpf.c on the bridge ports of an afpacket testbed
# of its own).  Data must still arrive whole and exactly once: the
# data-integrity example checks every byte of WRITE, READ and SEND from 1 B
# to 8 MiB, and ibv_rc_pingpong checks what it receives.
. "$(dirname "$0")/../lib.sh"

# A testbed of our own, beside the harness's (other names, other run dir).
export SRNIC_NS=srloss SRNIC_RUN=/run/srnic-loss
trap '"$SRNIC" testbed down >/dev/null 2>&1' EXIT
"$SRNIC" testbed down >/dev/null 2>&1
"$SRNIC" testbed up --wire afpacket >/dev/null || fail "afpacket testbed"

obj=$LOGDIR/lossy.bpf.o
clang -O2 -target bpf -DPERMILLE=10 -I/usr/include/x86_64-linux-gnu \
	-c "$ROOT/tests/e2e/lossy.bpf.c" -o "$obj" || fail "building the loss filter"
for n in a b; do
	for p in 0 1; do
		ip netns exec srloss-sw tc qdisc add dev "r$p-$n" clsact &&
		ip netns exec srloss-sw tc filter add dev "r$p-$n" egress bpf da \
			obj "$obj" sec tc || fail "attaching the loss filter"
	done
done

pair loss-integrity 180 "$BUILD/examples/srnic_integrity" || fail "integrity under loss"
grep -q ", 0 bad" "$LOGDIR/loss-integrity.a" || fail "integrity under loss: bad data"
pair loss-pingpong 180 ibv_rc_pingpong -g 1 -c -s 65536 -n 100 -m 1024 ||
	fail "ibv_rc_pingpong under loss"

# The filters did drop frames (else this test proved nothing).
dropped=$(ip netns exec srloss-sw tc -s qdisc show dev r0-b |
	awk '/clsact/ {f = 1} f && /dropped/ {gsub(",", ""); print $7; exit}')
echo "frames dropped on one rail toward b: ${dropped:-?}"
[ "${dropped:-0}" -gt 0 ] || fail "no frame was dropped"
exit 0
