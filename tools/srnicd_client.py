#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Talk to srnicd over its socket (src/attach/srnicd_proto.h).

  srnicd_client.py SOCKET stats [--json]   the node's counters: the JSON
                                           srnicd sends, or srnicd's and its
                                           processes' lines (the node's are
                                           its stats file's, docs/counters.md)
  srnicd_client.py SOCKET shutdown         leave the links and exit
  srnicd_client.py SOCKET raw HEX          send bytes as they are, print
                                           the answer's status (tests)
  srnicd_client.py SOCKET gone PID MS      wait up to MS ms until srnicd
                                           holds no process PID; print
                                           how many ms that took (tests)
  srnicd_client.py SOCKET hangup MS        attach (as a process that
                                           never joins the node), send
                                           nonsense, print "hung up" once
                                           srnicd has, and live MS ms more
                                           (tests: its slot must outlive
                                           the connection until it exits)

Exits 1 when srnicd cannot be reached or answers with an error.
"""
import json
import socket
import struct
import sys
import time

MAGIC = 0x53524E44
VERSION = 1
OPS = {"attach": 1, "stats": 2, "shutdown": 3}
HDR = struct.Struct("<IHHIi")  # magic, version, op, len, status


def request(path, msg, timeout=2.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(timeout)
    s.connect(path)
    s.send(msg)
    rep = s.recv(1 << 16)
    s.close()
    return rep


def header(op, length=HDR.size):
    return HDR.pack(MAGIC, VERSION, OPS[op], length, 0)


def check(rep, op):
    if len(rep) < HDR.size:
        sys.exit("srnicd: no answer")
    magic, version, rop, length, status = HDR.unpack_from(rep)
    if magic != MAGIC or version != VERSION or length != len(rep):
        sys.exit("srnicd: an answer that is not srnicd's")
    if status:
        sys.exit(f"srnicd: error {status} for {op}")
    return rep[HDR.size:]


def pairs(d, skip=()):
    """A JSON object's members as the stats file's "name value" pairs."""
    out = []
    for k, v in d.items():
        if k in skip or isinstance(v, (dict, list)):
            continue
        if isinstance(v, bool):
            v = "yes" if v else "no"
        out.append(f"{k} {v}")
    return " ".join(out)


def readable(st):
    """srnicd's own lines (the node's are its stats file's)."""
    out = [f"srnicd {st['node']} " + pairs(st, skip=st.keys() - {
        "pool_in_use", "processes_most", "token_holder", "stopped_killed",
        "foreign_frames",
        "qps"})]
    for p in st["processes"]:
        drops = " ".join(f"{k} {v}" for k, v in p["drops"].items())
        out.append(f"process {p['slot']} pid {p['pid']} {p['prog']} "
                   + pairs(p, skip=("slot", "pid", "prog"))
                   + (f" drops {drops}" if drops else ""))
    return "\n".join(out)


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    path, cmd = argv[1], argv[2]
    try:
        if cmd == "stats":
            body = check(request(path, header("stats")), cmd)
            text = body.rstrip(b"\0").decode()
            if "--json" in argv[3:]:
                print(text, end="")
            else:
                print(readable(json.loads(text)))
        elif cmd == "shutdown":
            check(request(path, header("shutdown")), cmd)
        elif cmd == "gone":
            pid, limit = int(argv[3]), int(argv[4])
            start = time.monotonic()
            while True:
                body = check(request(path, header("stats")), cmd)
                st = json.loads(body.rstrip(b"\0").decode())
                took = (time.monotonic() - start) * 1000
                if not any(p["pid"] == pid for p in st["processes"]):
                    print(f"{took:.0f}")
                    break
                if took > limit:
                    sys.exit(f"srnicd still holds process {pid} "
                             f"after {took:.0f} ms")
                time.sleep(0.005)
        elif cmd == "hangup":
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.settimeout(2.0)
            s.connect(path)
            s.send(header("attach", HDR.size + 32) + b"hangup".ljust(32, b"\0"))
            check(s.recv(1 << 16), "attach")
            s.send(b"\0")
            while s.recv(1 << 16):
                pass    # (its error answer, then the hang-up)
            print("hung up", flush=True)
            time.sleep(int(argv[3]) / 1000)
        elif cmd == "raw":
            rep = request(path, bytes.fromhex(argv[3]))
            print(HDR.unpack_from(rep)[4] if len(rep) >= HDR.size else "none")
        else:
            sys.exit(__doc__)
    except OSError as e:
        sys.exit(f"srnicd at {path}: {e}")


if __name__ == "__main__":
    main(sys.argv)
