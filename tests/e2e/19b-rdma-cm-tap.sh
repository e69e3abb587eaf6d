# rdma_cm on the kernel wire: 19-rdma-cm.sh on a testbed of its own on
# the tap wire (./srnic testbed up --wire tap), every program attached to
# its node's srnicd, which shares the node's tap ports with them; rdma_cm
# within node b too (a passive and an active process of b, to b's own
# address).
export SRNIC_TEST_WIRE=tap
exec bash "$(dirname "$0")/19-rdma-cm.sh"
