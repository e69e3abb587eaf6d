#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The fabric manager of srnic's switch-mode services (docs/failover.md):
a subnet manager's stand-in, run in the testbed's switch namespace by
"./srnic fabric start".

  srnic_fabric.py KEY_FILE BRIDGE...

It listens on each rail's bridge for the members' SVC_ANNOUNCE frames,
believes only those whose MAC checks under the cluster key (HMAC-SHA-512
cut to 32 bytes, libsodium's crypto_auth, over the frame's bytes before
it), and for each switch-mode service keeps the holder of the highest
term.  When that changes, it points the service's own Ethernet address
(02:5e and its IPv4 address) at the holder's port on every rail, with
"bridge fdb replace ... master static": the old holder's port no longer
gets the service's frames, and nobody else ever did.  It prints one line
a change ("HH:MM:SS.mmm web 10.55.0.100 term 0x203 -> r0-c r1-c").
"""
import hmac
import hashlib
import os
import select
import socket
import struct
import subprocess
import sys
import time

ETHERTYPE = 0x88B5
OP_SVC_ANNOUNCE = 14
F_AUTH = 0x0200
F_CRC = 0x0100
HLEN = 14 + 24 + 56     # Ethernet, base header, control extension
MAC_LEN = 32
MODE_SWITCH = 1


def service_mac(ip):
    return "02:5e:" + ":".join(f"{b:02x}" for b in ip.to_bytes(4, "big"))


def port_of(bridge, mac):
    """The bridge port the bridge learned mac on, or None."""
    out = subprocess.run(["bridge", "fdb", "show", "br", bridge],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0] == mac and f[1] == "dev" and \
                "permanent" not in f and "static" not in f:
            return f[2]
    return None


def announce(frame, br, key, best, holder_mac):
    """A frame off bridge br: if it is a member's SVC_ANNOUNCE holding a
    switch-mode service, note the holder's port address there and the
    highest term."""
    if len(frame) < HLEN or frame[15] != OP_SVC_ANNOUNCE:
        return
    flags = struct.unpack(">H", frame[16:18])[0]
    if flags & F_CRC:
        frame = frame[:-4]
    if not flags & F_AUTH or len(frame) < HLEN + MAC_LEN:
        return
    tag = hmac.new(key, frame[:HLEN], hashlib.sha512).digest()[:32]
    if not hmac.compare_digest(tag, frame[HLEN:HLEN + MAC_LEN]):
        return      # not a member's: no key, or a forged one
    term = struct.unpack(">I", frame[34:38])[0]
    x = frame[38:HLEN]
    node = struct.unpack(">I", x[0:4])[0]
    svc = struct.unpack(">I", x[32:36])[0]
    holder, mode = x[37], x[38]
    if mode != MODE_SWITCH or not holder:
        return
    holder_mac[(br, node)] = frame[6:12].hex(":")
    if term > best.get(svc, (0, 0))[0]:
        best[svc] = (term, node)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        key = bytes.fromhex(f.read().strip())
    bridges = sys.argv[2:]
    socks = {}
    for br in bridges:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                          socket.htons(ETHERTYPE))
        s.bind((br, ETHERTYPE))
        s.setblocking(False)
        socks[s.fileno()] = (s, br)
    best = {}       # service ip -> (term, holder node ip)
    applied = {}    # service ip -> (term, holder) its address leads to
    holder_mac = {}  # (bridge, holder ip) -> its port's MAC there
    print("fabric: watching " + " ".join(bridges), flush=True)
    while True:
        ready, _, _ = select.select(list(socks), [], [], 0.05)
        for fd in ready:
            s, br = socks[fd]
            # (every frame the socket holds: a backlog would delay a
            # takeover by as much)
            while True:
                try:
                    frame = s.recv(2048)
                except BlockingIOError:
                    break
                announce(frame, br, key, best, holder_mac)
        for svc, (term, node) in best.items():
            if applied.get(svc) == (term, node):
                continue    # (mapped already: no bridge command a pass)
            ports = []
            for br in bridges:
                mac = holder_mac.get((br, node))
                port = port_of(br, mac) if mac else None
                if port:
                    ports.append((br, port))
            if len(ports) < len(bridges):
                continue    # (a rail not heard from it yet: next pass)
            for br, port in ports:
                subprocess.run(["bridge", "fdb", "replace", service_mac(svc),
                                "dev", port, "master", "static"],
                               check=False)
            applied[svc] = (term, node)
            t = time.time()
            print(time.strftime("%H:%M:%S", time.localtime(t)) +
                  f".{int(t * 1000) % 1000:03d} "
                  f"{socket.inet_ntoa(svc.to_bytes(4, 'big'))}"
                  f" term {term:#x} -> " + " ".join(p for _, p in ports),
                  flush=True)

if __name__ == "__main__":
    main()
