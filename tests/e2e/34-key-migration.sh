# Key (STag) migration between the adapters of one node
# (docs/key-migration.md), on a testbed of its own whose nodes have two
# adapters (./srnic testbed up --devices 2: srnic0 on port 0, srnic1 on
# port 1, keys looked up by the adapter a request comes in on).
#  1. Both adapters are verbs devices, each with its own GUID and one
#     system image GUID.
#  2. ./srnic demo stag-migration, 256 MiB: a WRITEs to a key of b's
#     srnic0, b's srnic0 port goes down at 30%, the rest arrives at
#     srnic1, which imports the key: no WRITE fails, every byte in place,
#     keys imported, each import within 20 ms of its first request.  On
#     the moved path (tests/e2e/stag_check.c): an unknown key and a
#     deregistered one get REM_ACCESS_ERR with the memory unchanged, and
#     after a SEND with invalidate of an imported key nothing lands.
. "$(dirname "$0")/../lib.sh"

export SRNIC_KM_NS=${SRNIC_NS:-srnic}-km SRNIC_KM_RUN=${SRNIC_RUN:-/run/srnic}-km
km() { SRNIC_NS=$SRNIC_KM_NS SRNIC_RUN=$SRNIC_KM_RUN "$SRNIC" "$@"; }
trap 'km testbed down >/dev/null 2>&1 || true' EXIT
km testbed down >/dev/null 2>&1 || true
km testbed up --wire afpacket --devices 2 > "$LOGDIR/km-testbed.log" 2>&1 ||
	{ cat "$LOGDIR/km-testbed.log"; fail "two-adapter testbed"; }

devs=$(km exec b -- ibv_devinfo) || fail "ibv_devinfo on b"
echo "$devs" | grep -E 'hca_id|node_guid|sys_image'
[ "$(echo "$devs" | grep -c '^hca_id:')" = 2 ] || fail "b does not show two devices"
[ "$(echo "$devs" | awk '/node_guid/ { print $2 }' | sort -u | wc -l)" = 2 ] ||
	fail "b's two adapters share a GUID"
[ "$(echo "$devs" | awk '/sys_image_guid/ { print $2 }' | sort -u | wc -l)" = 1 ] ||
	fail "b's adapters say two system images"

timeout -k 5 300 "$ROOT/examples/stag-migration-demo.sh" --size 256 \
	> "$LOGDIR/km-demo.log" 2>&1 || { cat "$LOGDIR/km-demo.log"; fail "the demo"; }
cat "$LOGDIR/km-demo.log"
line=$(grep '^stag-migration: ' "$LOGDIR/km-demo.log")
echo "$line" | grep -Eq '^stag-migration: 268435456 bytes, 0 wrong, keys imported [1-9]' ||
	fail "the demo's line: $line"
ns=$(SRNIC_NS=$SRNIC_KM_NS SRNIC_RUN=$SRNIC_KM_RUN counter b key_import_ns)
[ -n "$ns" ] && [ "$ns" -le 20000000 ] || fail "an import took $ns ns, over 20 ms"
echo "longest import: $ns ns"
exit 0
