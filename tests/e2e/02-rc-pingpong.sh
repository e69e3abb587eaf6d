# ibverbs-utils' ibv_rc_pingpong between nodes a and b, received data
# validated (-c), from 1 byte to several MiB, with the legacy post calls and
# with the ibv_wr_* API (-N).
. "$(dirname "$0")/../lib.sh"

run() {	# name args...
	local name=$1
	shift
	pair "$name" 60 ibv_rc_pingpong -g 1 -c "$@" || fail "$name"
	grep -q "iters in" "$LOGDIR/$name.a" || fail "$name: no result line"
	grep -q "iters in" "$LOGDIR/$name.b" || fail "$name: no result line on b"
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
