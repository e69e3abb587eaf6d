# A testbed of the test's own, on the wire SRNIC_TEST_WIRE names, for an
# e2e test that otherwise runs on the suite's (the one tests/run brings
# up): 17-ucx, 18-mpi and 19-rdma-cm, which 17b, 18b and 19b run on the
# tap wire.  Sourced before lib.sh:
#     . "$(dirname "$0")/own-testbed.bash" SUFFIX
# With SRNIC_TEST_WIRE set, the test's namespaces and run directory take
# the suffix -SUFFIX (SRNIC_NS, SRNIC_RUN: the suite's testbed is left
# alone), and own_testbed [OPTIONS...], called once the test knows it can
# run, brings its testbed up (./srnic testbed up --wire $SRNIC_TEST_WIRE
# OPTIONS...) and takes it down when the test exits.  Without
# SRNIC_TEST_WIRE, own_testbed does nothing.
if [ -n "${SRNIC_TEST_WIRE:-}" ]; then
	export SRNIC_NS=${SRNIC_NS:-srnic}-$1 SRNIC_RUN=${SRNIC_RUN:-/run/srnic}-$1
	# (its logs apart from the same test's on the suite's testbed)
	[ -z "${SRNIC_TEST_LOGS:-}" ] ||
		export SRNIC_TEST_LOGS=$SRNIC_TEST_LOGS/$SRNIC_TEST_WIRE-$1
fi

own_testbed() {
	local log
	[ -n "${SRNIC_TEST_WIRE:-}" ] || return 0
	log=$LOGDIR/testbed.log
	trap '"$SRNIC" testbed down >/dev/null 2>&1' EXIT
	"$SRNIC" testbed down >/dev/null 2>&1
	# (SRNIC_TEST_ENCAP: the frames in IPv4 and UDP, udp: 19c)
	set -- ${SRNIC_TEST_ENCAP:+--encap "$SRNIC_TEST_ENCAP"} "$@"
	"$SRNIC" testbed up --wire "$SRNIC_TEST_WIRE" "$@" > "$log" 2>&1 ||
		{ cat "$log" >&2; fail "testbed up --wire $SRNIC_TEST_WIRE $*"; }
	cat "$log"
}
