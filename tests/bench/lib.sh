# What the benchmarks share (sourced by tests/bench/*.sh, which set SRNIC).

# srnic_pair TOOL ARGS...: TOOL as server on node b, as client on node a
# (aimed at b); prints the client's output.
srnic_pair() {
	local pid
	"$SRNIC" exec b -- "$@" > /dev/null 2>&1 &
	pid=$!
	sleep 0.5
	"$SRNIC" exec a -- "$@" b
	wait $pid
}

# write_bw SECONDS: ib_write_bw 64 KiB from a to b, in Gb/s.
write_bw() {
	srnic_pair ib_write_bw -s 65536 -D "$1" --report_gbits |
		awk '$1 == 65536 && NF >= 5 {print $4}'
}

# median: the median of the numbers on stdin, one a line.
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
