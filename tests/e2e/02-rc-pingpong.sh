# ibverbs-utils' ibv_rc_pingpong between nodes a and b, received data
# validated (-c), from 1 byte to several MiB, with the legacy post calls and
# with the ibv_wr_* API (-N).
. "$(dirname "$0")/../lib.sh"

# The check itself first: a log with a wrong page must fail it.
bad=$LOGDIR/pp-selfcheck
printf '%s\n' "invalid data in page 3" "8192 bytes in 0.01 seconds" \
	"200 iters in 0.01 seconds = 50.00 usec/iter" > "$bad"
! pingpong_ok "$bad" 2>/dev/null || fail "pingpong_ok passed a log with bad data"

run() {	# name args...
	local name=$1
	shift
	pingpong "$name" 60 ibv_rc_pingpong -g 1 "$@" || fail "$name"
}

run pp-1B -s 1 -n 200
run pp-4K -s 4096 -n 500
run pp-4K-mtu1024 -s 4096 -n 200 -m 1024
run pp-64K -s 65536 -n 200 -m 4096
run pp-3M -s 3145728 -n 20 -m 4096
run pp-new-1B -N -s 1 -n 200
run pp-new-64K -N -s 65536 -n 200 -m 2048
run pp-new-3M -N -s 3145733 -n 20 -m 4096
exit 0
