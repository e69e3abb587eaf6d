# Packet capture on the memif wire (the testbed's): ./srnic capture asks
# node a's tap (src/port/tap.c; its file thread writes the file:
# control/capture.c) for what port 0 sends and receives during an
# ib_write_bw to b, and tshark reads it back with srnic's dissector
# (tools/wireshark/srnic.lua); tests/e2e/capture_check.py checks every
# frame against what perftest set up: WRITEs to b's QP, key and buffer
# with a's message numbers, ACKs back to a's QP, HELLOs, nothing
# malformed.  (The af_packet wire: 31-capture-afpacket.sh.)
. "$(dirname "$0")/../lib.sh"

command -v tshark > /dev/null || { echo "SKIP: tshark not installed (./srnic setup installs it)"; exit 77; }

# (without srnicd the node runs in the program that uses it: the tap
# serves the capture once a program of node a starts, after the wait for
# it that this test makes)
[ -e "$TB/a.srnicd.pid" ] || { echo "SKIP: node a runs no srnicd (SRNIC_SRNICD=no)"; exit 77; }
capture_write capture-tap 6000
exit 0
