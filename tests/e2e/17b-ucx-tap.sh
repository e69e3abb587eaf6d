# UCX on the kernel wire: 17-ucx.sh on a testbed of its own on the tap
# wire (./srnic testbed up --wire tap), every program attached to its
# node's srnicd, which shares the node's tap ports with them.
export SRNIC_TEST_WIRE=tap
exec bash "$(dirname "$0")/17-ucx.sh"
