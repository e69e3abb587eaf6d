# Unmodified perftest between a and b over RC: bandwidth and latency tests
# with default flags and with the common options (all sizes, several QPs,
# -I, which perftest turns off here; a server with few receives posted),
# each checked for a
# plausible result line.  perftest posts with
# the ibv_wr_* API only on devices it knows by vendor ID, so on srnic it
# uses ibv_post_send (--use_old_post_send changes nothing); ibv_rc_pingpong
# -N (e2e/02) and srnic_integrity (e2e/04) use ibv_wr_*.  UD and UC: e2e/14.
. "$(dirname "$0")/../lib.sh"

bw write-bw-default ib_write_bw
bw write-bw-s-n ib_write_bw -s 1048576 -n 200
bw write-bw-D ib_write_bw -s 65536 -D 2
bw write-bw-q ib_write_bw -s 4096 -n 2000 -q 4
bw write-bw-t256 ib_write_bw -s 8192 -n 3000 -t 256
bw read-bw-default ib_read_bw
bw read-bw-s-n ib_read_bw -s 1048576 -n 100
bw send-bw-default ib_send_bw
bw send-bw-s-n ib_send_bw -s 300000 -n 200
bw write-bw-all ib_write_bw -a -n 100
all_sizes write-bw-all 23	# 2 B to 8 MiB
bw read-bw-all ib_read_bw -a -n 100
all_sizes read-bw-all 23
bw send-bw-all ib_send_bw -a -n 100
all_sizes send-bw-all 23
bw write-bw-old ib_write_bw --use_old_post_send -s 65536 -n 1000
bw read-bw-q ib_read_bw -q 4 -s 16384 -n 500
bw send-bw-q ib_send_bw -q 4 -s 8192 -n 1000
# A server that keeps 16 receives posted, its client 128 SENDs in flight:
# the client waits for the receives its ACKs say are posted (receive
# credit, docs/reliability.md), and few SENDs meet an empty queue, each
# answered by an RNR NAK.  Before: 8,857 RNR NAKs in 3 s (about 109,000
# SENDs), 1.19 Gb/s; after: 538 in 3 s of 1.4 million SENDs.
before=$(counter b rnr_naks_sent) || before=0
bw send-bw-r16 ib_send_bw -s 4096 -n 20000 -r 16
naks=$(( $(counter b rnr_naks_sent) - before ))
echo "send-bw-r16: $naks RNR NAKs for 20000 SENDs"
[ "$naks" -lt 400 ] || fail "send-bw-r16: $naks RNR NAKs for 20000 SENDs (SENDs that met no receive posted)"
# 1000 connected QPs each way (issue 5): all connect, all complete
bw write-bw-q1000 ib_write_bw -q 1000 -s 4096 -n 50
bw send-bw-q1000 ib_send_bw -q 1000 -s 4096 -n 50
lat write-lat ib_write_lat
lat write-lat-s ib_write_lat -s 65536 -n 200
lat read-lat ib_read_lat
lat send-lat ib_send_lat
lat send-lat-s ib_send_lat -s 8192 -n 300
# (perftest turns -I off on a device it does not know, as on rxe: the
# option is parsed and the test runs, without inline; srnic's inline
# sends are conformance_limits.c's and stress.c's)
lat write-lat-inline ib_write_lat -s 64 -I 128
lat send-lat-inline ib_send_lat -s 64 -I 128
lat read-lat-old ib_read_lat --use_old_post_send -s 4096
# 8 bytes an operation: a bandwidth in Mb/s, not Gb/s
MIN_GBPS=0.0005 bw atomic-bw-faa ib_atomic_bw -A FETCH_AND_ADD -n 5000
MIN_GBPS=0.0005 bw atomic-bw-cas ib_atomic_bw -A CMP_AND_SWAP -n 5000 --use_old_post_send
lat atomic-lat-faa ib_atomic_lat -A FETCH_AND_ADD -n 1000 --use_old_post_send
lat atomic-lat-cas ib_atomic_lat -A CMP_AND_SWAP -n 1000
exit 0
