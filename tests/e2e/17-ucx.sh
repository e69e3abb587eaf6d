# UCX (ucx-utils, unmodified from Debian) over srnic0, through srnicd, on
# the suite's testbed, or, with SRNIC_TEST_WIRE set (17b-ucx-tap.sh: tap),
# on a testbed of its own of 2 nodes on that wire:
#  - ucx_info -d lists rc_verbs and ud_verbs on srnic0:1 and opens both,
#    and its rdmacm connection manager;
#  - ucx_perftest between the nodes at UCT level (rc_verbs: put, get,
#    active messages, fetch-and-add, compare-and-swap and add, which are
#    what verbs has: UCX's rc_verbs offers no plain swap on any device;
#    ud_verbs: active messages) and at
#    UCP level (tag matching, put, get, fetch-and-add, active messages,
#    stream) over rc_verbs (UCX_TLS=rc_v: ud_verbs only to wire the
#    endpoints up) and over ud_verbs alone;
#  - io_demo, a client and a server connected by UCX's rdma_cm manager
#    (srnic's rdma_cm, provider/ucma/), reads and writes data-checked.
# What is checked: every run ends with its "Final:" line and exit 0, on
# both sides.  ucx_perftest does not check the payload of its bandwidth
# runs; its latency runs do depend on the bytes: put_lat's side waits for
# the iteration number the other wrote into its buffer, the atomics'
# results come back as values, and a tag or AM that lands wrong is not
# matched.  A lost or corrupted one of those hangs the run (the timeout
# fails it).  Data moved by UCX is byte-checked by MPI's test (issue 15)
# and by io_demo (below).
. "$(dirname "$0")/own-testbed.bash" u
. "$(dirname "$0")/../lib.sh"

command -v ucx_perftest > /dev/null || { echo "SKIP: ucx-utils not installed (./srnic setup installs it)"; exit 77; }
own_testbed

# ucx_info -d: both verbs transports on srnic0:1, and neither fails to open
on a 30 -- ucx_info -d > "$LOGDIR/ucx_info.a" 2>&1 || fail "ucx_info -d"
for tl in rc_verbs ud_verbs; do
	awk -v tl="$tl" '$2 == "Transport:" && $3 == tl {t = 1; next}
		t && $2 == "Device:" {if ($3 == "srnic0:1") found = 1; t = 0}
		END {exit !found}' "$LOGDIR/ucx_info.a" ||
		fail "ucx_info -d lists no $tl on srnic0:1"
done
# (an interface that fails to open is listed with this line after it)
if grep -B3 "failed to open interface" "$LOGDIR/ucx_info.a" | grep -q "srnic0"; then
	fail "ucx_info -d: an interface on srnic0 failed to open"
fi

port=13400
# ucx NAME ENV... -- ARGS...: ucx_perftest as server on b and client on
# a (lib.sh's pair), with ENV in both; the client must end with the
# results.
ucx() {
	local name=$1 env=()
	shift
	while [ "$1" != "--" ]; do env+=("$1"); shift; done
	shift
	port=$((port + 1))
	pair "ucx-$name" 60 env "${env[@]}" ucx_perftest -p $port "$@" ||
		fail "ucx_perftest $name"
	grep -q "^Final:" "$LOGDIR/ucx-$name.a" ||
		fail "ucx_perftest $name: no results"
	echo "$name: $(grep "^Final:" "$LOGDIR/ucx-$name.a")"
}

# (on the tap wire, slower than memif, half the iterations)
iters=2000
[ -z "${SRNIC_TEST_WIRE:-}" ] || iters=1000
UCT=(-d srnic0:1 -n $iters -w 200)
ucx uct-rc-put_lat -- "${UCT[@]}" -x rc_verbs -t put_lat -s 8
ucx uct-rc-put_bw -- "${UCT[@]}" -x rc_verbs -t put_bw -D zcopy -s 65536
ucx uct-rc-get -- "${UCT[@]}" -x rc_verbs -t get -D zcopy -s 65536
ucx uct-rc-am_lat -- "${UCT[@]}" -x rc_verbs -t am_lat -s 8
ucx uct-rc-am_bw -- "${UCT[@]}" -x rc_verbs -t am_bw -D bcopy -s 4096
ucx uct-rc-fadd -- "${UCT[@]}" -x rc_verbs -t fadd
ucx uct-rc-cswap -- "${UCT[@]}" -x rc_verbs -t cswap
ucx uct-rc-add_lat -- "${UCT[@]}" -x rc_verbs -t add_lat
ucx uct-ud-am_lat -- "${UCT[@]}" -x ud_verbs -t am_lat -s 8
# (a datagram with UCX's 8-byte header within the port's MTU: 1024 on the
# tap wire, 4096 on memif)
ucx uct-ud-am_bw -- "${UCT[@]}" -x ud_verbs -t am_bw -D bcopy -s 1000

UCP=(-n $iters -w 200)
for tls in rc_v ud_v; do
	E=(UCX_TLS=$tls,self UCX_NET_DEVICES=srnic0:1)
	ucx ucp-$tls-tag_lat "${E[@]}" -- "${UCP[@]}" -t tag_lat -s 8
	ucx ucp-$tls-tag_bw "${E[@]}" -- "${UCP[@]}" -t tag_bw -s 65536
	ucx ucp-$tls-am_bw "${E[@]}" -- "${UCP[@]}" -t ucp_am_bw -s 4096
	ucx ucp-$tls-fadd "${E[@]}" -- "${UCP[@]}" -t ucp_fadd
done
E=(UCX_TLS=rc_v,self UCX_NET_DEVICES=srnic0:1)
ucx ucp-rc_v-put_bw "${E[@]}" -- "${UCP[@]}" -t ucp_put_bw -s 65536
ucx ucp-rc_v-get "${E[@]}" -- "${UCP[@]}" -t ucp_get -s 65536
ucx ucp-rc_v-stream_bw "${E[@]}" -- "${UCP[@]}" -t stream_bw -s 65536
# (the lanes UCP chose: the data over rc_verbs, not over ud_verbs)
ucx ucp-rc_v-lanes "${E[@]}" UCX_LOG_LEVEL=info -- "${UCP[@]}" -t tag_bw -s 65536
grep -q "ep_cfg\[[0-9]*\]: tag(rc_verbs/srnic0:1" "$LOGDIR/ucx-ucp-rc_v-lanes.a" ||
	fail "UCP did not choose rc_verbs on srnic0:1 for tag matching"

# UCX's rdma_cm connection manager: listed, opened, and connecting a
# client to a server by address (io_demo, its data check on: -q) with no
# other manager allowed.  (UCP's endpoint address must fit rdma_cm's 54
# bytes of private data: its compact form, v2, does; v1 takes 58.)
grep -q "^# Connection manager: rdmacm" "$LOGDIR/ucx_info.a" ||
	fail "ucx_info -d lists no rdmacm connection manager"
grep -q "failed to open connection manager" "$LOGDIR/ucx_info.a" &&
	fail "ucx_info -d: a connection manager failed to open"
E=(env UCX_TLS=rc_v,self UCX_NET_DEVICES=srnic0:1 UCX_ADDRESS_VERSION=v2
	UCX_SOCKADDR_TLS_PRIORITY=rdmacm)
timeout -k 5 60 "$SRNIC" exec b -- "${E[@]}" io_demo -p 13600 -q \
	-d 1024:65536 > "$LOGDIR/ucx-io_demo.b" 2>&1 &
pid=$!
wait_listen b $((13600 ^ 0x4000)) || echo "--- io_demo's server never listened" >&2
on a -- "${E[@]}" io_demo -p 13600 -q -d 1024:65536 -i 2000 -o read,write \
	-c 3 10.55.0.2 > "$LOGDIR/ucx-io_demo.a" 2>&1 || true
kill $pid 2>/dev/null; wait $pid 2>/dev/null	# (a server runs till stopped)
# (-q: a wrong byte or transaction is an error line and a failed exit; an
# endpoint that times out is one too: io_demo reconnects it (-c 3) and
# goes on, but RC over a lossless wire has no reason to time out.  One
# did, in 1 run of 5 or more, while a SEND still carried the stale
# wr.rdma of UCX's work request, its address wrapped, and the peer
# dropped every try as malformed.)
grep -q "Client exit with status 'OK'" "$LOGDIR/ucx-io_demo.a" &&
	! grep -qi "error\|mismatch\|timeout" "$LOGDIR/ucx-io_demo.a" ||
	{ tail -15 "$LOGDIR/ucx-io_demo.a" >&2; fail "io_demo over UCX's rdmacm manager"; }
echo "io_demo (rdmacm): $(grep -o 'read [0-9.]* MBs.*write [0-9.]* MBs' "$LOGDIR/ucx-io_demo.a" | tail -1)"
exit 0
