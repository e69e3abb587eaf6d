# Sourced by the four-node demos (mcast-rdma, conditional, half-rdma), with
# SRNIC, SRNIC_NS and SRNIC_RUN set: the testbed there if it has four nodes
# (it stays up), else a four-node afpacket testbed brought up here; a work
# folder, $work; and pids, the demo's programs to stop at its end.
# four_nodes_done, on EXIT unless the demo traps EXIT itself and calls it,
# undoes all of it.
TB=$SRNIC_RUN/testbed
own=0
if [ "$(cat "$TB/nodes" 2>/dev/null | wc -l)" != 4 ]; then
	"$SRNIC" testbed down >/dev/null 2>&1 || true
	"$SRNIC" testbed up --nodes 4 --wire afpacket >/dev/null
	own=1
fi
work=$(mktemp -d)
pids=()

# The demo's programs stopped, every rail's faults cleared, what this
# brought up gone, and the work folder.
four_nodes_done() {
	local p nd
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	for nd in a b c d; do
		"$SRNIC" testbed fault $nd 0 clear >/dev/null 2>&1 || true
		"$SRNIC" testbed fault $nd 1 clear >/dev/null 2>&1 || true
	done
	[ $own = 0 ] || "$SRNIC" testbed down >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap four_nodes_done EXIT
