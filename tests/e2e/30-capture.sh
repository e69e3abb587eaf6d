# Packet capture a person can read, on an af_packet testbed of its own:
# ./srnic capture writes what node a's port 0 sends and receives during
# an ib_write_bw to b (Wireshark's dumpcap on the port's veth), and tshark
# reads it back with srnic's dissector (tools/wireshark/srnic.lua).
# Checked against what perftest says it set up: every WRITE goes to b's
# QP number, with b's key, at addresses of b's buffer, with message
# numbers from a's first PSN on, offsets that are whole packets and
# lengths that fit the message, one transaction id a message (a new one
# only for a resend); every ACK comes back to a's QP number; every frame
# is dissected, none malformed.
export SRNIC_NS=${SRNIC_NS:-srnic}-c SRNIC_RUN=${SRNIC_RUN:-/run/srnic}-c
. "$(dirname "$0")/../lib.sh"

command -v tshark > /dev/null && command -v dumpcap > /dev/null ||
	{ echo "SKIP: tshark not installed (./srnic setup installs it)"; exit 77; }

trap '"$SRNIC" testbed down >/dev/null 2>&1' EXIT
"$SRNIC" testbed down >/dev/null 2>&1
"$SRNIC" testbed up --wire afpacket >/dev/null || fail "afpacket testbed"

LUA=$ROOT/tools/wireshark/srnic.lua
PCAP=$LOGDIR/capture.pcapng
SIZE=65536	# (64 packets of the af_packet wire's 1024 bytes)
rm -f "$PCAP"
# WRITEs (opcode 2) and ACKs (5): what the transfer is made of
"$SRNIC" capture a 0 -c 400 -f 'ether proto 0x88b5 and (ether[15] == 2 or ether[15] == 5)' \
	-w "$PCAP" > "$LOGDIR/capture.log" 2>&1 &
cap=$!
trap 'kill $cap 2>/dev/null; "$SRNIC" testbed down >/dev/null 2>&1' EXIT
# (dumpcap writes the file's header once it captures)
for ((i = 0; i < 200; i++)); do
	[ -s "$PCAP" ] && break
	sleep 0.05
done
[ -s "$PCAP" ] || { cat "$LOGDIR/capture.log" >&2; fail "dumpcap did not start"; }
pair cap-write 90 ib_write_bw -n 2000 -s $SIZE || fail "ib_write_bw"
wait $cap || { cat "$LOGDIR/capture.log" >&2; fail "./srnic capture"; }

# what perftest set up: a's QP and first PSN, b's QP, key and buffer
read -r aqpn apsn < <(awk '/local address:/ {print $6, $8; exit}' "$LOGDIR/cap-write.a")
read -r bqpn bkey bva < <(awk '/remote address:/ {print $6, $10, $12; exit}' "$LOGDIR/cap-write.a")
[ -n "$aqpn" ] && [ -n "$bkey" ] || fail "perftest printed no addresses"

tshark -X lua_script:"$LUA" -r "$PCAP" -T fields -E separator=' ' \
	-e srnic.opcode -e srnic.dst_qpn -e srnic.src_qpn -e srnic.rkey \
	-e srnic.va -e srnic.msg_off -e srnic.pkt_len -e srnic.msg_len \
	-e srnic.msn -e srnic.txid -e _ws.malformed \
	> "$LOGDIR/capture.fields" 2> "$LOGDIR/capture.tshark" ||
	{ cat "$LOGDIR/capture.tshark" >&2; fail "tshark could not read the capture"; }
python3 - "$LOGDIR/capture.fields" "$aqpn" "$apsn" "$bqpn" "$bkey" "$bva" "$SIZE" <<'PY' || fail "the capture does not match the transfer"
import sys
path, aqpn, apsn, bqpn, bkey, bva, size = sys.argv[1:]
aqpn, apsn, bqpn, bkey, bva, size = (int(x, 0) for x in
	(aqpn, apsn, bqpn, bkey, bva, size))
writes = acks = bad = 0
msns, txids = set(), {}
for n, line in enumerate(open(path), 1):
	f = line.split()
	if not f or len(f) < 2:
		print(f"frame {n}: not dissected: {line!r}"); bad += 1; continue
	op = int(f[0])
	if op == 2:
		dqp, sqp, key, va, off, plen, mlen, msn, txid = (int(x, 0) for x in f[1:10])
		ok = (dqp == bqpn and sqp == aqpn and key == bkey and
		      bva <= va < bva + (64 << 20) and mlen == size and
		      off + plen <= mlen and plen > 0 and off % plen == 0 and
		      0 <= (msn - apsn) % (1 << 32) < 100000)
		writes += 1
		msns.add(msn)
		txids.setdefault(msn, set()).add(txid)
	elif op == 5:
		dqp = int(f[1], 0)
		ok = dqp == aqpn
		acks += 1
	else:
		ok = False
	if not ok or len(f) > 10:
		bad += 1
		if bad < 5:
			print(f"frame {n}: {line.strip()}")
# a message's packets carry its transaction id (a new one only if resent)
retried = sum(1 for t in txids.values() if len(t) > 1)
print(f"{writes} WRITE packets of {len(msns)} messages ({retried} resent), "
      f"{acks} ACKs, {bad} wrong")
sys.exit(1 if bad or not writes or not acks else 0)
PY
exit 0
