# IP over srnic (docs/ip.md): ./srnic demo ip on a three-node testbed of
# its own, its line checked: 20000-byte pings to b and pings to the
# broadcast address answered by both other nodes, one 60000-byte UDP
# broadcast arriving intact (SHA-256) at both, TCP (iperf) over
# srnic-ip0; and a's ports carried it (srnic's counters: the packets went
# as UD datagrams on srnic0, not by the kernel's veth).
. "$(dirname "$0")/../lib.sh"

command -v iperf > /dev/null || { echo "SKIP: iperf is not installed (./srnic setup installs it)"; exit 77; }
# (a testbed of three nodes beside the suite's, taken down at the end)
NS=${SRNIC_NS:-srnic}-ip RUN=${SRNIC_RUN:-/run/srnic}-ip
trap 'SRNIC_NS=$NS SRNIC_RUN=$RUN "$SRNIC" testbed down > /dev/null 2>&1 || true' EXIT
SRNIC_NS=$NS SRNIC_RUN=$RUN "$SRNIC" testbed down > /dev/null 2>&1 || true
SRNIC_NS=$NS SRNIC_RUN=$RUN "$SRNIC" testbed up --nodes 3 --wire tap > "$LOGDIR/ip-testbed.log" 2>&1 ||
	{ cat "$LOGDIR/ip-testbed.log"; fail "the three-node testbed did not come up"; }
sent() { SRNIC_RUN=$RUN port_sum a tx_bytes; }
tx0=$(sent)
SRNIC_IP_NS=$NS SRNIC_IP_RUN=$RUN demo_log ip-demo.sh ip demo || fail "./srnic demo ip"
moved=$(( $(sent) - tx0 ))
echo "a's ports sent $((moved >> 20)) MiB during the demo"
grep -Eq "^ip: ping ok, 60000-byte UDP broadcast to 2 of 2 nodes, iperf [0-9.]+ Gb/s over srnic-ip0$" \
	"$LOGDIR/ip-demo.log" || fail "the demo's line is not what it must be"
[ "$moved" -ge $((16 << 20)) ] || fail "srnic-ip0's traffic did not go over srnic ($moved bytes)"
exit 0
