#!/usr/bin/env python3
"""Checks a capture of an ib_write_bw from node a to node b against what
perftest printed it set up (tests/e2e/30-capture.sh, 31-capture-afpacket.sh).

    capture_check.py [--stride BYTES] LUA PCAP CLIENT_LOG SIZE
                     [udp [ADDRESS ADDRESS [HOP...]]]

tshark reads PCAP with srnic's dissector (LUA).  Every WRITE must go to b's
QP number from a's, with b's key, at an address of b's buffer, with a
message number from a's first PSN on, an offset that is a whole number of
packets and a length that fits the message; the packets of a message carry
one transaction id (a new one only for a resend); with --stride, every
packet but a message's last carries exactly BYTES (the testbed's MTU).  Every ACK must come
back to a's QP number.  Control frames (HELLO, the integration's, the
published table's) are counted; no frame may be left undissected or malformed.  Exit 1 on any
of it, or with no WRITE or no ACK.  With "udp" (encap = udp), every frame
is IPv4 (its header checksum right) and UDP to srnic's port 4793 between
the testbed's two addresses (a group's frames to the limited broadcast),
none of srnic's EtherType, but for ARP between those addresses; the
addresses are the tap testbed's unless given (a routed testbed's, whose
node a also asks its router, HOP, by ARP now and then).  Given IPv6
addresses (./srnic testbed up --routed --ipv6), srnic's frames are IPv6
and UDP to port 4793 between them instead (a group's frames to ff02::1,
the link's all-nodes group; the UDP checksum right where it is not 0),
with srnic's 4-byte shim before the base header (the dissector skips
it), and the nodes and their routers find each other by neighbour
discovery (solicitations and advertisements whose target is one of the
addresses, between those addresses, link-local ones and the
solicited-node groups) instead of ARP.  Other IPv6 frames are the hosts'
kernels' own (a tap testbed's node is built as a host is, and its
interfaces solicit routers now and then: e2e/49b caught one), which
srnic never sends: counted, not checked.
"""
import ipaddress
import re
import subprocess
import sys

FIELDS = ["srnic.opcode", "srnic.dst_qpn", "srnic.src_qpn", "srnic.rkey",
          "srnic.va", "srnic.msg_off", "srnic.pkt_len", "srnic.msg_len",
          "srnic.msn", "srnic.txid", "_ws.malformed", "eth.type",
          "ip.src", "ip.dst", "udp.dstport", "ip.checksum.status",
          "arp.src.proto_ipv4", "arp.dst.proto_ipv4",
          "ipv6.src", "ipv6.dst", "ipv6.nxt", "udp.checksum",
          "udp.checksum.status", "icmpv6.type",
          "icmpv6.nd.ns.target_address", "icmpv6.nd.na.target_address",
          "frame.len", "frame.cap_len"]
# (addresses as ipaddress's objects: tshark writes IPv6 shortened, the
# caller may not)
NODES = {ipaddress.ip_address("10.55.0.1"), ipaddress.ip_address("10.55.0.2")}
HOPS = set()
ALL_NODES6 = ipaddress.ip_address("ff02::1")


def addr(text):
    """An address field's value, None where the frame has none (or
    several: an ICMP error quoting a packet)."""
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def udp_ok(f):
    """A UDP node's frame: IPv4, its checksum good, to port 4793; or
    IPv6, its UDP checksum good or 0, to port 4793 (unverified if the
    capture kept only part of the frame: ./srnic capture's 2048 bytes of
    a memif frame of 4 KiB)."""
    if f[11] == "0x86dd":
        src, dst = addr(f[18]), addr(f[19])
        cut = f[26] and f[27] and int(f[27]) < int(f[26])
        return (f[20] == "17" and src in NODES and
                (dst in NODES - {src} or dst == ALL_NODES6) and
                f[14] == "4793" and
                (int(f[21] or "1", 0) == 0 or f[22] == "1" or
                 (cut and f[22] == "2")))
    etype, src, dst, port, csum = f[11:16]
    src, dst = addr(src), addr(dst)
    return (etype == "0x0800" and src in NODES and
            (dst in NODES - {src} or dst == ipaddress.ip_address("255.255.255.255")) and
            port == "4793" and csum == "1")


def arp_ok(f):
    """A UDP node's ARP: between the testbed's two addresses (or one
    saying its own address, as a node does as it starts), or between a
    node and its router."""
    ends = {addr(f[16]), addr(f[17])}
    return bool(f[11] == "0x0806" and ends & NODES and
                ends <= NODES | HOPS)


def nd_target(f):
    """An IPv6 neighbour solicitation's or advertisement's target, if
    it is one of the testbed's addresses (a node's or a hop's), else
    None: then the frame is a host kernel's own."""
    if f[11] != "0x86dd" or f[20] != "58" or f[23] not in ("135", "136"):
        return None
    target = addr(f[24] or f[25])
    return target if target in NODES | HOPS else None


def nd_ok(f):
    """A UDP node's neighbour discovery in IPv6, as arp_ok's ARP: about
    an address of the testbed, between its addresses (a link-local
    source, the solicited-node group or the all-nodes one aside), a
    node's among them."""
    target = nd_target(f)
    ends = {a for a in (addr(f[18]), addr(f[19]))
            if a is not None and not (a.is_link_local or a.is_multicast or
                                      a.is_unspecified)}
    return bool(target and ends <= NODES | HOPS and
                ({target} | ends) & NODES)


def srnic6(f):
    """An IPv6 frame to srnic's UDP port: srnic's, to be checked."""
    return f[11] == "0x86dd" and f[20] == "17" and f[14] == "4793"


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
    stride = None
    if sys.argv[1:2] == ["--stride"]:
        stride = int(sys.argv[2])
        del sys.argv[1:3]
    lua, pcap, log, size = sys.argv[1:5]
    udp = sys.argv[5:6] == ["udp"]
    if udp and len(sys.argv) >= 8:
        NODES.clear()
        NODES.update(map(ipaddress.ip_address, sys.argv[6:8]))
        HOPS.update(map(ipaddress.ip_address, sys.argv[8:]))
    size = int(size)
    aqpn, apsn, bqpn, bkey, bva = perftest_addresses(log)
    cmd = ["tshark", "-X", f"lua_script:{lua}", "-r", pcap, "-T", "fields",
           "-E", "separator=|", "-o", "ip.check_checksum:TRUE",
           "-o", "udp.check_checksum:TRUE"]
    for f in FIELDS:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"tshark failed: {out.stderr.strip()}")
    writes = acks = control = arps = nds = kernel = bad = 0
    txids = {}
    for n, line in enumerate(out.stdout.splitlines(), 1):
        f = line.split("|")
        f += [""] * (len(FIELDS) - len(f))
        if f[11] == "0x86dd" and not srnic6(f) and not nd_target(f):
            kernel += 1
            continue
        if udp and f[11] == "0x0806":
            ok = arp_ok(f)
            arps += 1
        elif udp and nd_target(f):
            ok = nd_ok(f)
            nds += 1
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
                      (msn - apsn) % (1 << 32) < 1000000 and
                      (stride is None or plen == min(stride, mlen - off)))
                txids.setdefault(msn, set()).add(txid)
                writes += 1
            elif op == 5:
                ok = int(f[1], 0) == aqpn
                acks += 1
            else:
                ok = op in CONTROL
                control += 1
        if udp and not udp_ok(f) and not arp_ok(f) and not nd_ok(f):
            ok = False
        if not ok:
            bad += 1
            if bad <= 5:
                print(f"frame {n}: {line}")
    resent = sum(1 for t in txids.values() if len(t) > 1)
    print(f"{writes} WRITE packets of {len(txids)} messages ({resent} resent),"
          f" {acks} ACKs, {control} control frames,"
          f"{f' {arps} ARP,' if udp else ''}{f' {nds} ND,' if nds else ''}"
          f" {kernel} the kernels' IPv6,"
          f" {bad} wrong")
    sys.exit(1 if bad or not writes or not acks else 0)


if __name__ == "__main__":
    main()
