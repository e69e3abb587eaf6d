# The system-wide protection table (docs/published-keys.md), with
# tests/e2e/tpt_check.c:
#  1. b publishes a region by name; a finds it by b's GID and the name,
#     with no message to b, WRITEs under the key it found and READs the
#     bytes back; b finds them in the region.  The calls' errors.  A
#     WRITE past the region's end is refused at a by b's table (the
#     seed's initiator-side check: REM_ACCESS_ERR, counted tpt_denied).
#  2. b's program ends: its region leaves a's copy of b's table.
#  3. b's srnicd is killed under a program that holds a publication, and
#     started again, and a new program publishes the name: a's lookups,
#     all along, never give the old key once another answer took its
#     place (the restart empties a's copy before the new table comes), and
#     a counts the purge.
. "$(dirname "$0")/../lib.sh"

NAME=4242
CHECK=$BUILD/tests/e2e/tpt_check

pair tpt 120 "$CHECK" $NAME || fail "tpt_check"
checked "$LOGDIR/tpt.b" || fail "tpt_check (b): a check failed"
checked "$LOGDIR/tpt.a" || fail "tpt_check (a): a check failed"
cat "$LOGDIR/tpt.b" "$LOGDIR/tpt.a"
# (the WRITE past the end was refused at a, by b's table, not by b: a
# counts it; the counters are written twice a second)
for _ in $(seq 20); do
	denied=$(counter a tpt_denied)
	[ "${denied:-0}" -ge 1 ] && break
	sleep 0.25
done
[ "${denied:-0}" -ge 1 ] || fail "a counted no request refused by b's table (tpt_denied ${denied:-?})"

on a 30 -- "$CHECK" -G $NAME b > "$LOGDIR/tpt-gone.a" 2>&1
checked "$LOGDIR/tpt-gone.a" || fail "b's program gone: its region stayed in a's table"
grep "^ok" "$LOGDIR/tpt-gone.a"

# hold N: a program of b's that publishes NAME and holds it (pid in
# holdN); key N: the key it published
hold() {
	timeout -k 5 90 "$SRNIC" exec b -- "$CHECK" -H $NAME > "$LOGDIR/tpt-hold$1.b" 2>&1 &
	eval "hold$1=\$!"
	for _ in $(seq 200); do
		grep -q "^# published" "$LOGDIR/tpt-hold$1.b" && break
		sleep 0.1
	done
}
key() { awk '/^# published/ {print $5}' "$LOGDIR/tpt-hold$1.b"; }
# seen KEY: a's watch has seen KEY (10 s at most)
seen() {
	for _ in $(seq 100); do
		grep -q "rkey $1\$" "$LOGDIR/tpt-watch.a" && return 0
		sleep 0.1
	done
	return 1
}

purged0=$(counter a tpt_purged)
stop=$TB/tpt-stop
rm -f "$stop"
timeout -k 5 150 "$SRNIC" exec a -- "$CHECK" -W "$stop" $NAME b > "$LOGDIR/tpt-watch.a" 2>&1 &
watch=$!
hold 1
k1=$(key 1)
[ -n "$k1" ] || { cat "$LOGDIR/tpt-hold1.b"; fail "b's first holder published nothing"; }
seen "$k1" || fail "a's lookups never found b's key $k1"
"$SRNIC" srnicd b kill
kill "$hold1" 2>/dev/null	# (asleep, it would not see the device lost)
wait "$hold1" 2>/dev/null
"$SRNIC" srnicd b start || fail "srnicd of b did not start again"
hold 2
k2=$(key 2)
[ -n "$k2" ] && [ "$k2" != "$k1" ] || fail "b's second holder: key '$k2' (the first's $k1)"
seen "$k2" || { cat "$LOGDIR/tpt-watch.a"; fail "a's lookups never found b's new key $k2"; }
touch "$stop"
wait $watch
rc=$?
kill "$hold2" 2>/dev/null; wait "$hold2" 2>/dev/null
cat "$LOGDIR/tpt-watch.a"
[ $rc = 0 ] && checked "$LOGDIR/tpt-watch.a" || fail "a's watch of b's table failed"
grep -q "^# keys seen:.* $k1 none $k2\$" "$LOGDIR/tpt-watch.a" ||
	fail "a's lookups did not go from $k1 to none to $k2"
purged=$(( $(counter a tpt_purged) - ${purged0:-0} ))
echo "a emptied its copy of a restarted peer's table $purged times"
[ "$purged" -ge 1 ] || fail "a counted no tpt_purged"
exit 0
