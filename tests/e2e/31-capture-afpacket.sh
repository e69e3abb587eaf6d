# Packet capture on the af_packet wire, on a testbed of its own:
# ./srnic capture writes what node a's port 0 sends and receives during
# an ib_write_bw to b (Wireshark's dumpcap on the port's veth, filtered to
# WRITEs and ACKs), and tshark reads it back with srnic's dissector
# (tools/wireshark/srnic.lua); tests/e2e/capture_check.py checks every
# frame against what perftest set up.  (The memif wire's tap:
# 30-capture.sh.)
export SRNIC_NS=${SRNIC_NS:-srnic}-c SRNIC_RUN=${SRNIC_RUN:-/run/srnic}-c
. "$(dirname "$0")/../lib.sh"

command -v tshark > /dev/null && command -v dumpcap > /dev/null ||
	{ echo "SKIP: tshark not installed (./srnic setup installs it)"; exit 77; }

trap '"$SRNIC" testbed down >/dev/null 2>&1' EXIT
"$SRNIC" testbed down >/dev/null 2>&1
"$SRNIC" testbed up --wire afpacket >/dev/null || fail "afpacket testbed"

# (WRITEs, opcode 2, and ACKs, 5: what the transfer is made of)
capture_write capture-afpacket 6000 'ether proto 0x88b5 and (ether[15] == 2 or ether[15] == 5)'
exit 0
