#!/usr/bin/env bash
# ./srnic demo stag-migration: key (STag) migration between the adapters of
# one node (docs/key-migration.md).  Two afpacket nodes with two adapters
# each, srnic0 on port 0 and srnic1 on port 1, keys looked up by the
# adapter a request comes in on.  a WRITEs SIZE bytes (default 1 GiB) to a
# key of b's srnic0; at 30% b's srnic0 port goes down, so the rest
# arrives at srnic1, which did not issue the key and imports it.  Then
# the key checks of tests/e2e/stag_check.c run on the moved path (an
# unknown key, a deregistered one, a SEND with invalidate after an
# import).  One line says how it went:
#
#   stag-migration: B bytes, W wrong, keys imported K, first import T ms
#
#   --size MIB      MiB to write (1024)
#
# It brings up a testbed of its own (SRNIC_NS and SRNIC_RUN with -km
# appended), or uses a two-adapter one that is up there already (and
# leaves it up).  Exit 0 when every check passed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SRNIC=$ROOT/srnic
PROG=${SRNIC_BUILD:-$ROOT/build}/tests/e2e/stag_check
export SRNIC_NS=${SRNIC_KM_NS:-${SRNIC_NS:-srnic}-km}
export SRNIC_RUN=${SRNIC_KM_RUN:-${SRNIC_RUN:-/run/srnic}-km}
TB=$SRNIC_RUN/testbed
. "$ROOT/examples/wait-listen.sh"

mib=1024
while [ $# -gt 0 ]; do
	case $1 in
	--size) mib=$2; shift 2 ;;
	*) echo "stag-migration: unknown option '$1'" >&2; exit 1 ;;
	esac
done

own=0
if ! grep -q '^device = srnic1' "$TB/b.conf" 2>/dev/null; then
	"$SRNIC" testbed down >/dev/null 2>&1 || true
	"$SRNIC" testbed up --wire afpacket --devices 2 >/dev/null
	own=1
fi
work=$(mktemp -d)
cleanup() {
	"$SRNIC" testbed fault b 0 up >/dev/null 2>&1 || true
	[ $own = 0 ] || "$SRNIC" testbed down >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
"$SRNIC" testbed fault b 0 up >/dev/null

# counter NAME: b's counter NAME, as its process last wrote it
counter() {
	awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' "$TB/b.stats" | head -1
}

rm -f "$TB/b.stats"
timeout -k 5 600 "$SRNIC" exec b -- "$PROG" -s "$mib" > "$work/b.log" 2>&1 &
server=$!
wait_listen b || true	# (a server that died: its client says so)
timeout -k 5 600 "$SRNIC" exec a -- "$PROG" -s "$mib" b > "$work/a.log" 2>&1 &
client=$!
# 30% of the way: b's srnic0 loses its port
while kill -0 $client 2>/dev/null; do
	if [ "$(grep '^progress' "$work/a.log" | tail -1 | tr -dc 0-9)" -ge 30 ] 2>/dev/null; then
		"$SRNIC" testbed fault b 0 down
		echo "b's srnic0 port down at $(grep '^progress' "$work/a.log" | tail -1 | tr -dc 0-9)%"
		break
	fi
	sleep 0.01
done
rc=0
wait $client || rc=1
wait $server || rc=1
for n in a b; do
	echo "--- $n"
	grep -v '^progress' "$work/$n.log"
done
grep -q '^not ok' "$work/a.log" "$work/b.log" && rc=1
grep -q '^# .* 0 failed' "$work/a.log" && grep -q '^# .* 0 failed' "$work/b.log" || rc=1
bad=$(grep -c '^not ok - A:' "$work/b.log" || true)
wrong=$([ "$bad" = 0 ] && grep -q '^ok - A:' "$work/b.log" && echo 0 || echo "some")
imported=$(counter keys_imported)
ns=$(counter key_first_import_ns)
echo "b: keys imported ${imported:-?}, refused $(counter keys_refused), longest import $(counter key_import_ns) ns, requests dropped before their key's import $(counter key_foreign)"
echo "stag-migration: $((mib << 20)) bytes, $wrong wrong, keys imported ${imported:-0}, first import $(awk -v u="${ns:-0}" 'BEGIN { printf "%.4f", u / 1e6 }') ms"
[ $rc = 0 ] && [ "$wrong" = 0 ] && [ "${imported:-0}" -ge 1 ]
