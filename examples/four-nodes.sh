# Sourced by the four-node demos (mcast-rdma, conditional), with SRNIC,
# SRNIC_NS and SRNIC_RUN set: the testbed there if it has four nodes (it
# stays up), else a four-node afpacket testbed brought up here, which
# four_nodes_done takes down again; and a work folder, $work.
TB=$SRNIC_RUN/testbed
own=0
if [ "$(cat "$TB/nodes" 2>/dev/null | wc -l)" != 4 ]; then
	"$SRNIC" testbed down >/dev/null 2>&1 || true
	"$SRNIC" testbed up --nodes 4 --wire afpacket >/dev/null
	own=1
fi
work=$(mktemp -d)

# What this brought up goes, and the work folder.
four_nodes_done() {
	[ $own = 0 ] || "$SRNIC" testbed down >/dev/null 2>&1 || true
	rm -rf "$work"
}
