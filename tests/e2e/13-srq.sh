# Shared receive queues: ibv_srq_pingpong (16 QPs on one SRQ, received
# bytes checked), perftest's SEND bandwidth on an SRQ, and what
# tests/e2e/srq_check.c checks (bytes and QP numbers of SENDs from two QPs
# through one SRQ, the SRQ-limit event, the errors verbs promises).
. "$(dirname "$0")/../lib.sh"

pingpong srq-pingpong 60 ibv_srq_pingpong -g 1 -n 200 || fail "ibv_srq_pingpong"
pingpong srq-pingpong-big 60 ibv_srq_pingpong -g 1 -s 65536 -q 4 -n 300 ||
	fail "ibv_srq_pingpong, 64 KiB on 4 QPs"
pair srq-send-bw 60 ib_send_bw --use-srq -s 65536 -n 2000 --report_gbits ||
	fail "ib_send_bw --use-srq"
gbps=$(awk '$1 ~ /^[0-9]+$/ && NF >= 5 {print $4}' "$LOGDIR/srq-send-bw.a" | tail -1)
awk -v g="${gbps:-0}" 'BEGIN {exit !(g > 0.01)}' || fail "ib_send_bw --use-srq: implausible $gbps Gb/s"
pair srq-check 60 "$BUILD/tests/e2e/srq_check" || fail "srq_check"
grep -q ", 0 bad$" "$LOGDIR/srq-check.b" || fail "srq_check: bad results"
cat "$LOGDIR/srq-check.b"
exit 0
