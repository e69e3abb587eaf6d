# Half-RDMA (docs/half-rdma.md): ./srnic demo half-rdma on four nodes of
# its own.  a, b and c RDMA WRITE arrays of 64-bit numbers into d's FIFO,
# which sums the numbers of each record (examples/srnic_fifo.c):
#  1. 64 MiB each into a 4 MiB ring: the sum exact, every byte taken;
#  2. the same under 1% loss and 1% duplication on every node's rail 0:
#     exact (a copy appended twice, or a packet never appended, shows);
#  3. 8 MiB each into a 64 KiB ring: the ring full again and again
#     (fifo_full > 0), each such packet sent again, and the sum exact;
#  3b. a sink that takes nothing for 3 s once its first record is in, a
#     256 KiB ring: the senders' WRITEs meet it full and are told so (RNR
#     NAKs: they wait and send again, spending no transport retry), none
#     fails, and the sum is exact;
#  4. the sending half too, under 1% loss: the senders register nothing,
#     each WRITE gathered from 16 pieces of plain memory
#     (srnic_post_fifo_write, which copies them into a staging ring):
#     exact.
#  5. the READ variant under 1% loss and 1% duplication: d READs each
#     sender's 64 MiB into its FIFO (srnic_post_fifo_read), every record a
#     READ answer tagged with its sender and chunk: exact; a READ into a
#     FIFO of another PD refused (EINVAL);
#  6. READs of 8 MiB each into a 64 KiB ring: full again and again, each
#     such packet asked for again by its READ, and exact;
#  7. the half-receive READ under 1% loss: a, b and c READ 64 MiB each of
#     d, whose program answers each request from numbers it makes then
#     (srnic_fifo_read_reply): every word right at each reader, parts
#     asked again (the losses) answered again.
# (The ring's records, pad and full drops packet by packet: unit
# placement, test_fifo.)
. "$(dirname "$0")/../lib.sh"

export SRNIC_HALF_NS=${SRNIC_NS:-srnic}-half SRNIC_HALF_RUN=${SRNIC_RUN:-/run/srnic}-half
four_nodes "$SRNIC_HALF_NS" "$SRNIC_HALF_RUN" half

# (each part takes seconds, under the sanitizers too: one that hangs is
# stopped, and says what its programs said, well inside the test's time)
demo() { DEMO_SECS=120 demo_log half-rdma-demo.sh half "$@"; }
line() { grep '^half-rdma: ' "$LOGDIR/half-$1.log"; }
# exact NAME: the sum exact, and every sender's bytes taken
exact() {
	line "$1" | grep -q '^half-rdma: 3 senders, sum exact, fifo_full [0-9]*$' ||
		fail "$1: $(line "$1")"
}

demo plain || fail "the demo"
exact plain
demo faults --loss 1 --dup 1 || fail "the demo under loss and duplication"
exact faults
demo small --size 8M --fifo 64K || fail "the demo with a 64 KiB ring"
exact small
line small | grep -Eq 'fifo_full [1-9][0-9]*$' ||
	fail "a 64 KiB ring for 24 MiB was never full: $(line small)"
demo stall --size 8M --fifo 256K --pause 3000 || fail "the demo with a sink that stops taking records for 3 s"
exact stall
line stall | grep -Eq 'fifo_full [1-9][0-9]*$' || fail "stall: the ring was never full: $(line stall)"
# (d's sink is its node's engine: the stats file it left says what it did)
naks=$(SRNIC_RUN=$SRNIC_HALF_RUN counter d rnr_naks_sent) || fail "stall: d left no counters"
[ "${naks:-0}" -gt 0 ] || fail "stall: d sent no RNR NAK for its full ring"
echo "stall: d sent $naks RNR NAKs"
demo unreg --size 16M --loss 1 --unregistered || fail "the demo from unregistered memory"
exact unreg
grep -q "each gathered from unregistered pieces" "$LOGDIR/half-unreg.log" ||
	fail "the senders did not say they sent from unregistered memory"
demo read --read --loss 1 --dup 1 || fail "the demo, d READing into its FIFO"
exact read
grep -q "^sink: [1-9][0-9]* records of READ answers, .*, 0 records not ours$" "$LOGDIR/half-read.log" ||
	fail "read: records that were not READ answers of d's: $(grep '^sink: ' "$LOGDIR/half-read.log")"
grep -q "^sink: a READ into a FIFO of another PD: refused (EINVAL)$" "$LOGDIR/half-read.log" ||
	fail "read: a READ into a FIFO of another PD was not refused"
demo read-small --read --size 8M --fifo 64K || fail "the demo, READs into a 64 KiB ring"
exact read-small
line read-small | grep -Eq 'fifo_full [1-9][0-9]*$' ||
	fail "READs of 24 MiB into a 64 KiB ring never found it full: $(line read-small)"
demo answer --answer --loss 1 || fail "the demo, d's program answering READs"
exact answer
grep -Eq "^sink: [0-9]+ READ requests answered \([1-9][0-9]* for a part asked again, [0-9]+ stopped short\), 201326592 bytes of 201326592 read, 0 words wrong$" "$LOGDIR/half-answer.log" ||
	fail "answer: $(grep '^sink: ' "$LOGDIR/half-answer.log") (every word right, and parts asked again under loss, wanted)"
exit 0
