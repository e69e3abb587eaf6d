#!/usr/bin/env bash
# Runs one end-to-end test on the suite's testbed and exits as it did (77:
# skipped).  meson test runs every tests/e2e/*.sh through this (see
# meson.build here); the testbed is the one SRNIC_NS and SRNIC_RUN select,
# brought up by tests/run or by hand (./srnic testbed up).
#   tests/e2e/run-test.bash SCRIPT
# The tests share that testbed, one after another: what a test started in
# its nodes must not outlive it, but the nodes' srnicd (as the pid files
# say: a test may restart it), which the next test's programs attach to.
# A srnicd that died under the test fails it, and the testbed comes up
# again for the next one.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SCRIPT=$1
TB=${SRNIC_RUN:-/run/srnic}/testbed
LOGS=${SRNIC_TEST_LOGS:-/tmp/${SRNIC_NS:-srnic}-test-logs}

# Every process of the suite's nodes but their srnicd, killed.
clear_nodes() {
	local ns pids
	for ns in "${SRNIC_NS:-srnic}-a" "${SRNIC_NS:-srnic}-b"; do
		pids=$(ip netns pids "$ns" 2>/dev/null | grep -vxF "$srnicd")
		[ -n "$pids" ] && kill -9 $pids 2>/dev/null
	done
}

# running PID: true while the process runs (a killed srnicd is a zombie
# until its parent reaps it)
running() {
	grep -qs '^State:[[:space:]]*[^Z]' "/proc/$1/status"
}

srnicd=$(cat "$TB"/*.srnicd.pid 2>/dev/null)
# (meson test's timeout sends SIGTERM first: the nodes are cleared then
# too, or the next test would meet what this one left running)
trap 'clear_nodes; exit 143' TERM
# (its errors in its output, in order: a FAIL line lands where it was said)
bash "$SCRIPT" 2>&1 &
wait $!
rc=$?
trap - TERM
# (a test may have restarted srnicd: its pid is in the files now)
srnicd=$(cat "$TB"/*.srnicd.pid 2>/dev/null)
clear_nodes
for pid in $srnicd; do
	running "$pid" && continue
	echo "FAIL: a node's srnicd (pid $pid) died; the testbed starts again"
	mkdir -p "$LOGS"
	# (srnicd from the plain build, as tests/run brings it up)
	SRNIC_BUILD=${SRNIC_TESTBED_BUILD:-$ROOT/build} "$ROOT/srnic" testbed down > /dev/null 2>&1
	SRNIC_BUILD=${SRNIC_TESTBED_BUILD:-$ROOT/build} "$ROOT/srnic" testbed up > "$LOGS/testbed.log" 2>&1 ||
		{ cat "$LOGS/testbed.log"; echo "FAIL: testbed up"; }
	exit 1
done
exit $rc
