#!/usr/bin/env bash
# GID 1 of the sysfs tree ./srnic writes for a node (cmd_sysfs): an IPv6
# node's address ("ipv6 = ADDR/LEN", ./srnic testbed up --routed --ipv6),
# else its IPv4 address IPv4-mapped.
#  - ip6_bytes and gid_hex, the script's own, called directly: addresses
#    with and without "::", in capitals, and what is not an address;
#  - ./srnic sysfs on configurations of each kind, with a stand-in for
#    srnic-conf that answers from the file's lines (the parser is
#    test_config's): the GIDs it writes, the IPv4 one also from a
#    srnic-conf that does not know the key ipv6 (exit 2, as one from
#    before it does), "::" taken for no ipv6, and a bad address refused.
# Needs no root and no build.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
checks=0 failed=0
ok() {	# NAME WANT GOT
	checks=$((checks + 1))
	if [ "$2" = "$3" ]; then
		echo "ok - $1"
	else
		failed=$((failed + 1))
		echo "not ok - $1: want '$2', got '$3'"
	fi
}

# The helpers, as the script defines them.
eval "$(sed -n '/^gid_hex() {/,/^}/p; /^ip6_bytes() {/,/^}/p' "$ROOT/srnic")"
declare -F ip6_bytes gid_hex > /dev/null || { echo "not ok - the helpers are not in $ROOT/srnic"; exit 1; }
gid() { local b; b=$(ip6_bytes "$1") || { echo refused; return; }; gid_hex $b; }
ok "fd00:56:1::2" fd00:0056:0001:0000:0000:0000:0000:0002 "$(gid fd00:56:1::2)"
ok "fd00:56:0::2" fd00:0056:0000:0000:0000:0000:0000:0002 "$(gid fd00:56:0::2)"
ok "::1" 0000:0000:0000:0000:0000:0000:0000:0001 "$(gid ::1)"
ok "::" 0000:0000:0000:0000:0000:0000:0000:0000 "$(gid ::)"
ok "2001:db8::" 2001:0db8:0000:0000:0000:0000:0000:0000 "$(gid 2001:db8::)"
ok "fe80::53:4eff:fe00:2" fe80:0000:0000:0000:0053:4eff:fe00:0002 "$(gid fe80::53:4eff:fe00:2)"
ok "1:2:3:4:5:6:7:8" 0001:0002:0003:0004:0005:0006:0007:0008 "$(gid 1:2:3:4:5:6:7:8)"
ok "1::8 (six groups)" 0001:0000:0000:0000:0000:0000:0000:0008 "$(gid 1::8)"
ok "1:2:3::5:6:7:8 (one group)" 0001:0002:0003:0000:0005:0006:0007:0008 "$(gid 1:2:3::5:6:7:8)"
ok "FD00:ABCD::FFFF (capitals)" fd00:abcd:0000:0000:0000:0000:0000:ffff "$(gid FD00:ABCD::FFFF)"
for bad in "" 1::2::3 1:2:3:4:5:6:7:8:9 1:2:3:4:5:6:7 1:2:3:4::5:6:7:8 \
	1::2: :1::2 1:2:3:4:5:6:7:8: 12345::1 ::ffff:10.56.0.2 fd00::1%ctl0 \
	::: g::1 fd00:56:1::2/64; do
	ok "'$bad' refused" refused "$(gid "$bad")"
done

# ./srnic sysfs, with the stand-in for srnic-conf.
cat > "$work/srnic-conf" <<'EOF'
#!/usr/bin/env bash
# (stand-in: FILE KEY, the value of KEY's line; ndev 1; with STUB_OLD set,
# ipv6 is a key it does not know)
case $2 in
ndev) echo 1; exit 0 ;;
ipv6) [ -z "${STUB_OLD:-}" ] || { echo "srnic-conf: unknown key 'ipv6'" >&2; exit 2; } ;;
esac
sed -n "s/^$2 *= *//p" "$1"
EOF
chmod +x "$work/srnic-conf"
# sysfs NAME LINES...: ./srnic sysfs of a configuration of LINES (and a
# mac and netdev); GID 1 and 0 of srnic0, or "refused"
sysfs() {
	local name=$1 t
	shift
	printf '%s\n' "mac = 02:53:4e:00:00:02" "netdev = ctl0" "$@" > "$work/$name.conf"
	SRNIC_CONF_BIN=$work/srnic-conf "$ROOT/srnic" sysfs "$work/$name.conf" "$work/$name" \
		2> "$work/$name.err" || { echo refused; return; }
	t=$work/$name/class/infiniband/srnic0/ports/1
	echo "$(cat "$t/gids/1") $(cat "$t/gids/0") $(cat "$t/gid_attrs/types/1")"
}
G0="fe80:0000:0000:0000:0053:4eff:fe00:0002 RoCE v2"
ok "sysfs: ipv6 = fd00:56:1::2/64" "fd00:0056:0001:0000:0000:0000:0000:0002 $G0" \
	"$(sysfs v6 "ipv6 = fd00:56:1::2/64" "encap = udp")"
ok "sysfs: ipv4 = 10.56.0.2/24" "0000:0000:0000:0000:0000:ffff:0a38:0002 $G0" \
	"$(sysfs v4 "ipv4 = 10.56.0.2/24")"
ok "sysfs: ipv4, srnic-conf without ipv6" "0000:0000:0000:0000:0000:ffff:0a38:0002 $G0" \
	"$(STUB_OLD=1 sysfs v4old "ipv4 = 10.56.0.2/24")"
ok "sysfs: ipv6 = :: is none" "0000:0000:0000:0000:0000:ffff:0a37:0001 $G0" \
	"$(sysfs none "ipv6 = ::" "ipv4 = 10.55.0.1")"
ok "sysfs: ipv6 = 1::2::3 refused" refused "$(sysfs bad "ipv6 = 1::2::3/64")"
grep -q "is not an IPv6 address" "$work/bad.err" ||
	{ failed=$((failed + 1)); echo "not ok - sysfs of a bad ipv6 said: $(cat "$work/bad.err")"; }

echo "# $checks checks, $failed failed"
[ "$failed" = 0 ]
