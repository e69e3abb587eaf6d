# rdma_cm between nodes that send in IPv4 and UDP (encap = udp): the
# programs of 19-rdma-cm.sh, unchanged, on a memif testbed of the test's
# own brought up with --encap udp.
export SRNIC_TEST_WIRE=memif SRNIC_TEST_ENCAP=udp
exec bash "$(dirname "$0")/19-rdma-cm.sh"
