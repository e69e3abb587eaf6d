# Sourced by tests/lib.sh and tests/bench/lib.sh.
#
# oncpu PID...: nanoseconds the processes' threads have run so far (each
# thread's /proc schedstat: exact, where utime and stime count in ticks of
# 10 ms, too coarse for an idle node's few milliseconds a second).
oncpu() {
	local p t s total=0
	for p in "$@"; do
		for t in /proc/"$p"/task/*/schedstat; do
			read -r s _ < "$t" 2> /dev/null && total=$((total + s))
		done
	done
	echo $total
}
