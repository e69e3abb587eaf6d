# Open MPI on the kernel wire: 18-mpi.sh on a testbed of its own of four
# nodes on the tap wire (./srnic testbed up --wire tap --nodes 4), two
# ranks a node, both attached to the node's srnicd, which shares the
# node's tap ports with them.
export SRNIC_TEST_WIRE=tap
exec bash "$(dirname "$0")/18-mpi.sh"
