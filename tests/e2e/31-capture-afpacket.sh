# Packet capture on the af_packet wire, on a testbed of its own:
# ./srnic capture writes what node a's port 0 sends and receives during
# an ib_write_bw to b (Wireshark's dumpcap on the port's veth, filtered to
# WRITEs and ACKs), and tshark reads it back with srnic's dissector
# (tools/wireshark/srnic.lua); tests/e2e/capture_check.py checks every
# frame against what perftest set up; again with 4 KiB of payload a frame
# (--mtu 4096).  (The memif wire's tap: 30-capture.sh.)
export SRNIC_NS=${SRNIC_NS:-srnic}-c SRNIC_RUN=${SRNIC_RUN:-/run/srnic}-c
. "$(dirname "$0")/../lib.sh"

command -v tshark > /dev/null && command -v dumpcap > /dev/null ||
	{ echo "SKIP: tshark not installed (./srnic setup installs it)"; exit 77; }

trap '"$SRNIC" testbed down >/dev/null 2>&1' EXIT
"$SRNIC" testbed down >/dev/null 2>&1
"$SRNIC" testbed up --wire afpacket >/dev/null || fail "afpacket testbed"

# (WRITEs, opcode 2, and ACKs, 5: what the transfer is made of)
filter='ether proto 0x88b5 and (ether[15] == 2 or ether[15] == 5)'
CAPTURE_STRIDE=1024 capture_write capture-afpacket 6000 "$filter"

# Jumbo frames (--mtu 4096, the rails' 9000-byte MTU): 4 KiB of payload a
# frame, through af_packet's larger ring slots (framesz 8192), whose
# buffers srnic's pool must then hold (srnic_port_buf_need)
"$SRNIC" testbed down >/dev/null 2>&1
"$SRNIC" testbed up --wire afpacket --mtu 4096 >/dev/null || fail "afpacket testbed, --mtu 4096"
CAPTURE_STRIDE=4096 capture_write capture-afpacket-4k 2000 "$filter"
exit 0
