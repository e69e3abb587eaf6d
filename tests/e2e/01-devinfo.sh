# ibv_devices and ibv_devinfo -v inside a node describe the device as a
# RoCE NIC would: name, GUID, an active Ethernet port, GIDs, honest limits.
. "$(dirname "$0")/../lib.sh"

out=$(on a -- ibv_devices) || fail "ibv_devices failed"
echo "$out"
echo "$out" | grep -Eq '^[[:space:]]*srnic0[[:space:]]+[0-9a-f]{16}$' || fail "ibv_devices does not list srnic0 with a GUID"
echo "$out" | grep -q '0000000000000000' && fail "zero node GUID"

v=$(on a -- ibv_devinfo -v) || fail "ibv_devinfo -v failed"
echo "$v"
expect() { echo "$v" | grep -Eq "$1" || fail "ibv_devinfo -v: no line matching '$1'"; }
expect '^hca_id:[[:space:]]+srnic0$'
expect 'node_guid:[[:space:]]+[0-9a-f]{4}:[0-9a-f]{4}:[0-9a-f]{4}:[0-9a-f]{4}'
expect 'state:[[:space:]]+PORT_ACTIVE'
expect 'link_layer:[[:space:]]+Ethernet'
expect 'active_mtu:[[:space:]]+4096'
expect 'GID\[  0\]:[[:space:]]+fe80:0000:0000:0000:0053:4eff:fe00:0001, RoCE v1'
expect 'GID\[  1\]:[[:space:]]+::ffff:10.55.0.1, RoCE v2'
expect 'max_qp_rd_atom:[[:space:]]+[1-9]'
expect 'max_sge:[[:space:]]+[1-9]'
expect 'max_mr:[[:space:]]+[1-9]'
expect 'max_qp:[[:space:]]+[1-9]'
expect 'atomic_cap:[[:space:]]+ATOMIC_HCA'
# (issue 17: what the device now offers, said as verbs says it)
expect 'vendor_id:[[:space:]]+0xffffff'
expect '^[[:space:]]+MEM_WINDOW$'
expect '^[[:space:]]+MEM_WINDOW_TYPE_2B$'
expect '^[[:space:]]+XRC$'
expect '^[[:space:]]+ODP_SUPPORT_IMPLICIT$'
expect 'hca_core_clock:[[:space:]]+1000000kHZ'
expect 'max_mw:[[:space:]]+[1-9]'
expect 'phys_port_cnt:[[:space:]]+1'

# The provider loads into any program as it is: no static TLS (which
# glibc has little room for in a library dlopen()ed late), nothing in the
# environment for it.  "exec" preloads srnic's completion-channel library
# and nothing else (this test is not in the sanitizer pass, whose runtime
# "exec" preloads too), and the provider works without it.
lib=$BUILD/provider/libsrnic-rdmav34.so
readelf -d "$lib" | grep -q STATIC_TLS && fail "the provider needs static TLS"
readelf -d "$lib" | grep -q 'NEEDED.*jemalloc' && fail "the provider links jemalloc"
env=$(on a -- env) || fail "env in node a"
echo "$env" | grep -q '^GLIBC_TUNABLES=' && fail "exec sets GLIBC_TUNABLES"
pre=$(echo "$env" | sed -n 's/^LD_PRELOAD=//p')
[ "$pre" = "$BUILD/provider/libsrnic-preload.so" ] ||
	fail "exec preloads '$pre', not srnic's completion-channel library alone"
on a -- env -u LD_PRELOAD ibv_devinfo | grep -q PORT_ACTIVE ||
	fail "ibv_devinfo without the preload library"

# srnic's own verbs (include/srnic.h), from libsrnic: tests/e2e/srnic_api.c
nports=$(grep -c '^[[:space:]]*port[[:space:]]*=' "$TB/a.conf")
on a 60 -- "$BUILD/tests/e2e/srnic_api" a "$nports" > "$LOGDIR/srnic-api.a" 2>&1 ||
	{ cat "$LOGDIR/srnic-api.a"; fail "srnic_api"; }
cat "$LOGDIR/srnic-api.a"
checked "$LOGDIR/srnic-api.a" || fail "srnic_api"

# Node b is a different node: its own GUID and address.
vb=$(on b -- ibv_devinfo -v) || fail "ibv_devinfo -v on b failed"
echo "$vb" | grep -q '::ffff:10.55.0.2, RoCE v2' || fail "node b's GID"
[ "$(echo "$v" | grep node_guid)" != "$(echo "$vb" | grep node_guid)" ] || fail "a and b share a GUID"
exit 0
