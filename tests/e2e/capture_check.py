#!/usr/bin/env python3
"""Checks a capture of an ib_write_bw from node a to node b against what
perftest printed it set up (tests/e2e/30-capture.sh, 31-capture-afpacket.sh).

    capture_check.py LUA PCAP CLIENT_LOG SIZE [udp [ADDRESS ADDRESS [HOP...]]]

tshark reads PCAP with srnic's dissector (LUA).  Every WRITE must go to b's
QP number from a's, with b's key, at an address of b's buffer, with a
message number from a's first PSN on, an offset that is a whole number of
packets and a length that fits the message; the packets of a message carry
one transaction id (a new one only for a resend).  Every ACK must come
back to a's QP number.  Control frames (HELLO, the integration's, the
published table's) are counted; no frame may be left undissected or malformed.  Exit 1 on any
of it, or with no WRITE or no ACK.  With "udp" (encap = udp), every frame
is IPv4 (its header checksum right) and UDP to srnic's port 4793 between
the testbed's two addresses (a group's frames to the limited broadcast),
none of srnic's EtherType, but for ARP between those addresses; the
addresses are the tap testbed's unless given (a routed testbed's, whose
node a also asks its router, HOP, by ARP now and then).  IPv6
frames are the hosts' kernels' own (a tap testbed's node is built as a
host is, and its interfaces solicit routers now and then: e2e/49b caught
one), which srnic never sends: counted, not checked.
"""
import re
import subprocess
import sys

FIELDS = ["srnic.opcode", "srnic.dst_qpn", "srnic.src_qpn", "srnic.rkey",
          "srnic.va", "srnic.msg_off", "srnic.pkt_len", "srnic.msg_len",
          "srnic.msn", "srnic.txid", "_ws.malformed", "eth.type",
          "ip.src", "ip.dst", "udp.dstport", "ip.checksum.status",
          "arp.src.proto_ipv4", "arp.dst.proto_ipv4"]
NODES = {"10.55.0.1", "10.55.0.2"}
HOPS = set()


def udp_ok(f):
    """A UDP node's frame: IPv4, its checksum good, to port 4793."""
    etype, src, dst, port, csum = f[11:16]
    return (etype == "0x0800" and src in NODES and
            (dst in NODES - {src} or dst == "255.255.255.255") and
            port == "4793" and csum == "1")


def arp_ok(f):
    """A UDP node's ARP: between the testbed's two addresses (or one
    saying its own address, as a node does as it starts), or between a
    node and its router."""
    ends = {f[16], f[17]}
    return bool(f[11] == "0x0806" and ends & NODES and
                ends <= NODES | HOPS)


# HELLO, BYE, BYE_ACK, BOOTING, BOOT_ACK, RDMA_READY; TPT_UPDATE and
# TPT_ACK (a registration changes the node's published table: one may
# fall into the capture as ib_write_bw starts)
CONTROL = set(range(6, 12)) | {18, 19}


def perftest_addresses(log):
    """a's QP and first PSN; b's QP, key and buffer, from the client's log."""
    local = remote = None
    for line in open(log):
        m = re.search(r"(local|remote) address: LID \S+ QPN (\S+) PSN (\S+)"
                      r" RKey (\S+) VAddr (\S+)", line)
        if m and m.group(1) == "local" and not local:
            local = [int(x, 16) for x in m.groups()[1:]]
        elif m and m.group(1) == "remote" and not remote:
            remote = [int(x, 16) for x in m.groups()[1:]]
    if not local or not remote:
        sys.exit(f"{log}: perftest printed no addresses")
    return local[0], local[1], remote[0], remote[2], remote[3]


def main():
    lua, pcap, log, size = sys.argv[1:5]
    udp = sys.argv[5:6] == ["udp"]
    if udp and len(sys.argv) >= 8:
        NODES.clear()
        NODES.update(sys.argv[6:8])
        HOPS.update(sys.argv[8:])
    size = int(size)
    aqpn, apsn, bqpn, bkey, bva = perftest_addresses(log)
    cmd = ["tshark", "-X", f"lua_script:{lua}", "-r", pcap, "-T", "fields",
           "-E", "separator=|", "-o", "ip.check_checksum:TRUE"]
    for f in FIELDS:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"tshark failed: {out.stderr.strip()}")
    writes = acks = control = arps = kernel = bad = 0
    txids = {}
    for n, line in enumerate(out.stdout.splitlines(), 1):
        f = line.split("|")
        f += [""] * (len(FIELDS) - len(f))
        if f[11] == "0x86dd":
            kernel += 1
            continue
        if udp and f[11] == "0x0806":
            ok = arp_ok(f)
            arps += 1
        elif f[10] or not f[0]:
            ok = False	# malformed, or srnic's EtherType not dissected
        else:
            op = int(f[0])
            if op == 2:
                dqp, sqp, key, va, off, plen, mlen, msn, txid = (
                    int(x, 0) for x in f[1:10])
                ok = (dqp == bqpn and sqp == aqpn and key == bkey and
                      bva <= va < bva + (64 << 20) and mlen == size and
                      0 < plen and off % plen == 0 and off + plen <= mlen and
                      (msn - apsn) % (1 << 32) < 1000000)
                txids.setdefault(msn, set()).add(txid)
                writes += 1
            elif op == 5:
                ok = int(f[1], 0) == aqpn
                acks += 1
            else:
                ok = op in CONTROL
                control += 1
        if udp and not udp_ok(f) and not arp_ok(f):
            ok = False
        if not ok:
            bad += 1
            if bad <= 5:
                print(f"frame {n}: {line}")
    resent = sum(1 for t in txids.values() if len(t) > 1)
    print(f"{writes} WRITE packets of {len(txids)} messages ({resent} resent),"
          f" {acks} ACKs, {control} control frames,"
          f"{f' {arps} ARP,' if udp else ''} {kernel} the kernels' IPv6,"
          f" {bad} wrong")
    sys.exit(1 if bad or not writes or not acks else 0)


if __name__ == "__main__":
    main()
