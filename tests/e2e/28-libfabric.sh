# libfabric (Debian's 1.17, unmodified; libfabric-bin) over srnic0 with its
# verbs provider, which goes through rdma_cm for its addresses, its
# connections and its event queues:
#  - fi_info -p verbs lists srnic0 with connected (MSG), datagram (DGRAM)
#    and reliable datagram (RDM, libfabric's rxd over DGRAM) endpoints;
#  - fi_pingpong -c (every message's bytes checked; a wrong one fails it)
#    between the nodes over DGRAM, RDM and MSG, and over MSG between two
#    processes of one node (through srnicd).  fi_pingpong's MSG server
#    takes no address: libfabric binds an rdma_cm id to "localhost" to
#    probe, and counts on rdma_cm taking 127.0.0.1 for "any address", as
#    the kernel's does (no device: it then lists the devices' addresses).
. "$(dirname "$0")/../lib.sh"

command -v fi_pingpong > /dev/null || { echo "SKIP: libfabric-bin not installed (./srnic setup installs it)"; exit 77; }

on a 30 -- fi_info -p verbs > "$LOGDIR/fi_info.a" 2>&1 || { cat "$LOGDIR/fi_info.a" >&2; fail "fi_info -p verbs"; }
for want in "srnic0 FI_EP_MSG" "srnic0-dgram FI_EP_DGRAM" "srnic0-dgram FI_EP_RDM"; do
	awk -v d="${want% *}" -v t="${want#* }" '$1 == "domain:" {dom = $2}
		$1 == "type:" && dom == d && $2 == t {found = 1}
		END {exit !found}' "$LOGDIR/fi_info.a" || fail "fi_info lists no $want"
done
echo "fi_info: srnic0 MSG, srnic0-dgram DGRAM and RDM"

# pingpong NAME SERVER-NODE CLIENT-NODE DST ARGS...: fi_pingpong -c, the
# server once its control port listens; both must exit 0 with results,
# every message sent answered, and no data check failed.
RESULT='^[0-9]+[kmg]? +[0-9]+ +=[0-9]+ '
pingpong_fi() {
	local name=$1 sn=$2 cn=$3 dst=$4 pid rc=0
	shift 4
	timeout -k 5 60 "$SRNIC" exec "$sn" -- fi_pingpong -p verbs -c "$@" \
		> "$LOGDIR/fi-$name.server" 2>&1 &
	pid=$!
	wait_listen "$sn" 47592 || echo "--- $name: no server" >&2
	on "$cn" -- fi_pingpong -p verbs -c "$@" "$dst" > "$LOGDIR/fi-$name.client" 2>&1 || rc=1
	wait $pid || rc=1
	# (a result line: size, iterations, "=" and the messages that came;
	# -c prints "Error at iteration" for a message with a wrong byte)
	if [ $rc != 0 ] || ! grep -Eq "$RESULT" "$LOGDIR/fi-$name.client" ||
		grep -q "Error at iteration" "$LOGDIR/fi-$name".* ||
		! awk -v re="$RESULT" '$0 ~ re && "=" $2 != $3 {bad = 1}
			END {exit bad}' "$LOGDIR/fi-$name".*; then
		tail -n 5 "$LOGDIR/fi-$name.client" >&2
		tail -n 5 "$LOGDIR/fi-$name.server" >&2
		fail "fi_pingpong $name"
	fi
	echo "fi_pingpong $name: $(grep -E "$RESULT" "$LOGDIR/fi-$name.client" | tail -1 | tr -s ' ')"
}

pingpong_fi dgram b a 10.55.0.2 -e dgram -I 200 -S 1024
pingpong_fi rdm b a 10.55.0.2 -e rdm -I 100
pingpong_fi msg b a 10.55.0.2 -e msg -I 20
if [ -e "$TB/b.srnicd.pid" ]; then
	pingpong_fi msg-one-node b b 10.55.0.2 -e msg -I 20
else
	echo "fi_pingpong msg-one-node: not run (one process a node without srnicd)"
fi
exit 0
