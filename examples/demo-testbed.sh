# Sourced by the demos that bring up a testbed of their own (mcast-rdma,
# conditional, half-rdma, third-party: four afpacket nodes; sockets: two
# on the default wire; ip: three on tap), with SRNIC, SRNIC_NS and
# SRNIC_RUN set, and DEMO_NODES and DEMO_WIRE for other than four on
# afpacket: the testbed there if it has that many nodes (it stays up),
# else one brought up here; a work folder, $work; and pids, the demo's
# programs to stop at its end; and wait_listen (examples/wait-listen.sh).
# demo_testbed_done, on EXIT unless the demo traps EXIT itself and calls
# it, undoes all of it.
. "$ROOT/examples/wait-listen.sh"
TB=$SRNIC_RUN/testbed
own=0
work=$(mktemp -d)
pids=()

# The demo's programs stopped, every rail's faults cleared, what this
# brought up gone, and the work folder.
demo_testbed_done() {
	local p nd
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	for nd in $(cat "$TB/nodes" 2>/dev/null); do
		"$SRNIC" testbed fault "$nd" 0 clear >/dev/null 2>&1 || true
		"$SRNIC" testbed fault "$nd" 1 clear >/dev/null 2>&1 || true
	done
	[ $own = 0 ] || "$SRNIC" testbed down >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap demo_testbed_done EXIT

if [ "$(cat "$TB/nodes" 2>/dev/null | wc -l)" != "${DEMO_NODES:-4}" ]; then
	demo_wire=${DEMO_WIRE-afpacket}	# (set and empty: the default wire)
	"$SRNIC" testbed down >/dev/null 2>&1 || true
	own=1	# (first: a bring-up that fails halfway is taken down too)
	"$SRNIC" testbed up --nodes "${DEMO_NODES:-4}" ${demo_wire:+--wire "$demo_wire"} >/dev/null
fi
