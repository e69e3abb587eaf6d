# UDP/IP encapsulation in IPv6 on one segment: e2e/47 whole on ./srnic
# testbed up --ipv6 (memif, two ports a node), whose nodes are
# fd00:55::1/64 and fd00:55::2/64, every program that names a GID given
# GID 1, the node's IPv6 address (47-udp.sh says what each part checks).
UDP_FAMILY=ipv6 . "$(dirname "$0")/47-udp.sh"
