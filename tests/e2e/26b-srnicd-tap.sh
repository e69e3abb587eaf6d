# srnicd on the kernel wire: 26-srnicd.sh's processes, loopback, kills
# and restarts on a tap testbed (./srnic testbed up --wire tap), whose
# ports are kernel interfaces that every attached process does I/O on
# through the descriptors DPDK's tap passes it.
export SRNIC_TEST_WIRE=tap
exec bash "$(dirname "$0")/26-srnicd.sh"
