# srnic installed: "meson install" into a staging root, then a program of
# node a that uses only what was installed, as on a host with srnicd:
#  - the files: libibverbs' driver file (naming the installed provider),
#    the provider (libsrnic, and the name libibverbs loads it by), the
#    preload library, srnicd, its systemd unit (whose commands are the
#    installed ones), the srnic command, include/srnic.h and srnic.pc;
#  - a program built with pkg-config's flags for srnic, against the
#    installed header and library, runs and calls srnic's own verbs;
#  - inside node a (its own mount namespace: the staged prefix and driver
#    file bound where they would be installed, ./srnic exec's pieces
#    taken away), the installed "srnic host up" makes srnic0 visible,
#    plain ibv_devices lists it (no SYSFS_PATH, no RDMAV_DRIVERS), and
#    rping -V through the installed provider and preload library reaches
#    a server on b, every ping's data checked.
. "$(dirname "$0")/../lib.sh"

command -v rping > /dev/null || { echo "SKIP: rdmacm-utils not installed (./srnic setup installs it)"; exit 77; }

STAGE=$(mktemp -d /tmp/srnic-stage.XXXXXX)
trap 'rm -rf "$STAGE"' EXIT
DESTDIR=$STAGE meson install -C "$BUILD" --no-rebuild --quiet \
	> "$LOGDIR/install.log" 2>&1 || { cat "$LOGDIR/install.log" >&2; fail "meson install"; }
prefix=$STAGE/usr/local
libdir=$(dirname "$(ls "$prefix"/lib/*/libsrnic-preload.so 2>/dev/null | head -1)")
[ -n "$libdir" ] && [ "$libdir" != . ] || fail "no preload library installed"
for f in "$STAGE/etc/libibverbs.d/srnic.driver" "$libdir/libibverbs/libsrnic-rdmav34.so" \
	"$libdir/libsrnic.so.1" "$prefix/include/srnic.h" "$libdir/pkgconfig/srnic.pc" \
	"$libdir/libsrnic-preload.so" "$prefix/sbin/srnicd" "$prefix/bin/srnic" \
	"$prefix/share/srnic/srnic" "$prefix/lib/systemd/system/srnicd.service"; do
	[ -e "$f" ] || fail "not installed: ${f#$STAGE}"
done
want="driver ${libdir#$STAGE}/libibverbs/libsrnic"
grep -qx "$want" "$STAGE/etc/libibverbs.d/srnic.driver" ||
	fail "driver file: $(cat "$STAGE/etc/libibverbs.d/srnic.driver"), want '$want'"
for cmd in ExecStartPre ExecStart ExecStopPost; do
	exe=$(sed -n "s/^$cmd=\([^ ]*\).*/\1/p" "$prefix/lib/systemd/system/srnicd.service")
	[ -x "$STAGE$exe" ] || fail "srnicd.service: $cmd runs $exe, which is not installed"
done
[ "$(readlink -f "$libdir/libibverbs/libsrnic-rdmav34.so")" = "$(readlink -f "$libdir/libsrnic.so.1")" ] ||
	fail "libibverbs' name for the provider is not libsrnic.so.1"
echo "installed: driver file, provider, preload library, srnicd and its unit, srnic, srnic.h"

# srnic's own verbs from what was installed: pkg-config's flags (the
# .pc file names the prefix the stage stands for, so it is rewritten)
sed "s|^prefix=.*|prefix=$prefix|" "$libdir/pkgconfig/srnic.pc" > "$STAGE/srnic.pc"
cat > "$STAGE/api.c" <<'CEOF'
#include <errno.h>
#include <srnic.h>
int main(void)
{
	struct srnic_device_attr a = {0};
	struct ibv_context none = {0};

	/* (no device here: a context that is not srnic's says so) */
	return srnic_is_srnic_device(NULL) ||
	       srnic_query_device(&none, &a) != EOPNOTSUPP;
}
CEOF
flags=$(PKG_CONFIG_PATH=$STAGE pkg-config --cflags --libs srnic) || fail "pkg-config srnic"
cc -o "$STAGE/api" "$STAGE/api.c" $flags > "$LOGDIR/install-api.log" 2>&1 ||
	{ cat "$LOGDIR/install-api.log" >&2; fail "a program against the installed srnic.h and libsrnic"; }
LD_LIBRARY_PATH=$libdir "$STAGE/api" || fail "the program built against libsrnic"
echo "a program built with pkg-config srnic runs its calls"

# rping's server on b, as any program of the testbed
timeout -k 5 60 "$SRNIC" exec b -- rping -s -V -C 50 -a 0.0.0.0 -p 7190 \
	> "$LOGDIR/install-rping.b" 2>&1 &
pid=$!
wait_listen b $((7190 ^ 0x4000)) || echo "--- rping's server never listened" >&2
on a 90 -- sh -c '
	set -e
	mount --bind "$1/usr/local" /usr/local
	mount --bind "$1/etc/libibverbs.d" /etc/libibverbs.d
	umount /sys/class	# (./srnic exec laid the build'\''s tree there)
	unset RDMAV_DRIVERS LD_PRELOAD SYSFS_PATH
	SRNIC_HOST_SYS=$1/sys /usr/local/bin/srnic host up "$SRNIC_CONF"
	ibv_devices
	LD_PRELOAD=$2 rping -c -V -C 50 -a 10.55.0.2 -p 7190
	echo "rping: exit $?"
' sh "$STAGE" "${libdir#$STAGE}/libsrnic-preload.so" > "$LOGDIR/install-rping.a" 2>&1 || {
	cat "$LOGDIR/install-rping.a" >&2; kill $pid 2>/dev/null; fail "the installed stack in node a"; }
wait $pid || { tail -5 "$LOGDIR/install-rping.b" >&2; fail "rping's server"; }
grep -Eq "^ +srnic0 " "$LOGDIR/install-rping.a" || fail "plain ibv_devices did not list srnic0"
grep -q "rping: exit 0" "$LOGDIR/install-rping.a" || fail "rping through the installed stack"
grep -q "data mismatch" "$LOGDIR/install-rping.a" "$LOGDIR/install-rping.b" && fail "rping: data mismatch"
cat "$LOGDIR/install-rping.a"
exit 0
