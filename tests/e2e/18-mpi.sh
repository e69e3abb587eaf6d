# Open MPI (Debian's, unmodified) over UCX over srnic0, through srnicd:
# ./srnic mpirun starts 2 ranks in each node (orted on the others through
# "./srnic rsh"), with UCX on srnic0:1 (rc_verbs) the only transport
# between nodes: pml ucx and no TCP BTL, UCX_TLS without tcp, so a run
# that cannot use srnic fails rather than falling back.  On the suite's
# testbed (2 nodes, memif: 4 ranks), or, with SRNIC_TEST_WIRE set
# (18b-mpi-tap.sh: tap), on a testbed of its own of 4 nodes on that wire
# (8 ranks, two processes of each node attached to its srnicd at once):
#  - tests/e2e/mpi_check.c: MPI_Allreduce and MPI_Alltoall from 1 word to
#    1 MiB blocks, every word checked on every rank (it says where it
#    came from and where it should land);
#  - every node's ports carried its part of the cross-node traffic
#    (srnicd's counters): at least its ranks' 1 MiB Alltoall blocks to
#    the other nodes' ranks;
#  - on a testbed of its own (its srnicds fresh): each node's srnicd had
#    both of its ranks attached at once (processes_most);
#  - NetPIPE (netpipe-openmpi) one rank a node, up to 64 KiB: it measures
#    and checks nothing of the data, it must only finish.
. "$(dirname "$0")/own-testbed.bash" m
. "$(dirname "$0")/../lib.sh"

PROG=$BUILD/tests/e2e/mpi_check
command -v mpirun > /dev/null || { echo "SKIP: Open MPI not installed (./srnic setup installs it)"; exit 77; }
[ -x "$PROG" ] || { echo "SKIP: $PROG not built (Open MPI's headers were missing at build time)"; exit 77; }
own_testbed --nodes 4
nodes=$(cat "$TB/nodes")
nnodes=$(echo $nodes | wc -w)
ranks=$((2 * nnodes))

declare -A before
for n in $nodes; do before[$n]=$(ports_tx_bytes $n); done
timeout -k 5 240 env SRNIC_MPI_SLOTS=2 "$SRNIC" mpirun -np $ranks "$PROG" > "$LOGDIR/mpi_check.log" 2>&1 ||
	{ programs_failed "$LOGDIR/mpi_check.log"; fail "mpi_check over $ranks ranks"; }
grep "^mpi_check:" "$LOGDIR/mpi_check.log"
grep -q "^mpi_check: $ranks ranks, [0-9]* words checked, 0 bad: OK" "$LOGDIR/mpi_check.log" ||
	fail "mpi_check did not report $ranks ranks and no bad word"
# (each of a node's 2 ranks sends each rank of the other nodes 3 rounds of
# 1 MiB blocks alone: READ answers of UCX's rendezvous, or WRITEs)
need=$((2 * 2 * (nnodes - 1) * 3 * 1048576))
for n in $nodes; do
	sent=$(($(ports_tx_bytes $n) - before[$n]))
	echo "node $n's ports sent $sent bytes during it (at least $need)"
	[ "$sent" -ge "$need" ] ||
		fail "node $n's ports sent $sent bytes: its ranks did not talk through srnic"
done
if [ -n "${SRNIC_TEST_WIRE:-}" ]; then
	for n in $nodes; do
		most=$("$SRNIC" stats $n --json | python3 -c "import json,sys; print(json.load(sys.stdin)['processes_most'])")
		echo "node $n: $most processes attached to its srnicd at once, at most"
		[ "$most" -ge 2 ] || fail "node $n's srnicd had $most of its 2 ranks attached at once"
	done
fi

(cd "$LOGDIR" && timeout -k 5 120 "$SRNIC" mpirun -np 2 --map-by node \
	NPopenmpi -u 65536 -p 0 -n 50 -o "$LOGDIR/netpipe.out") \
	> "$LOGDIR/netpipe.log" 2>&1 || { programs_failed "$LOGDIR/netpipe.log"; fail "NetPIPE"; }
tail -1 "$LOGDIR/netpipe.out"
awk '$1 == 65536 {found = 1} END {exit !found}' "$LOGDIR/netpipe.out" ||
	fail "NetPIPE did not reach 64 KiB"
exit 0
