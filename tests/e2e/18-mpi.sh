# Open MPI (Debian's, unmodified) over UCX over srnic0, through srnicd:
# ./srnic mpirun starts 2 ranks in each node (orted on b through
# "./srnic rsh"), with UCX on srnic0:1 (rc_verbs) the only transport
# between nodes: pml ucx and no TCP BTL, UCX_TLS without tcp, so a run
# that cannot use srnic fails rather than falling back.
#  - tests/e2e/mpi_check.c: MPI_Allreduce and MPI_Alltoall from 1 word to
#    1 MiB blocks, every word checked on every rank (it says where it
#    came from and where it should land);
#  - the node's ports carried the cross-node part of it (srnicd's
#    counters);
#  - NetPIPE (netpipe-openmpi) one rank a node, up to 64 KiB: it measures
#    and checks nothing of the data, it must only finish.
. "$(dirname "$0")/../lib.sh"

PROG=$BUILD/tests/e2e/mpi_check
command -v mpirun > /dev/null || { echo "SKIP: Open MPI not installed (./srnic setup installs it)"; exit 77; }
[ -x "$PROG" ] || { echo "SKIP: $PROG not built (Open MPI's headers were missing at build time)"; exit 77; }

tx_bytes() {	# NODE: bytes its ports sent so far
	"$SRNIC" stats "$1" | awk '$1 == "port" {for (i = 1; i < NF; i++)
		if ($i == "tx_bytes") s += $(i + 1)} END {printf "%.0f\n", s}'
}

before=$(tx_bytes a)
timeout -k 5 120 "$SRNIC" mpirun -np 4 "$PROG" > "$LOGDIR/mpi_check.log" 2>&1 ||
	{ tail -20 "$LOGDIR/mpi_check.log" >&2; fail "mpi_check over 4 ranks"; }
grep "^mpi_check:" "$LOGDIR/mpi_check.log"
grep -q "^mpi_check: 4 ranks, [0-9]* words checked, 0 bad: OK" "$LOGDIR/mpi_check.log" ||
	fail "mpi_check did not report 4 ranks and no bad word"
sent=$(($(tx_bytes a) - before))
echo "node a's ports sent $sent bytes during it"
# (each of a's 2 ranks sends b's 2 ranks 3 rounds of 1 MiB blocks alone)
[ "$sent" -ge $((12 * 1048576)) ] ||
	fail "node a's ports sent $sent bytes: the ranks did not talk through srnic"

(cd "$LOGDIR" && timeout -k 5 120 "$SRNIC" mpirun -np 2 --map-by node \
	NPopenmpi -u 65536 -p 0 -n 50 -o "$LOGDIR/netpipe.out") \
	> "$LOGDIR/netpipe.log" 2>&1 || { tail -20 "$LOGDIR/netpipe.log" >&2; fail "NetPIPE"; }
tail -1 "$LOGDIR/netpipe.out"
awk '$1 == 65536 {found = 1} END {exit !found}' "$LOGDIR/netpipe.out" ||
	fail "NetPIPE did not reach 64 KiB"
exit 0
