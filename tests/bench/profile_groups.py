#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where the cycles go: a system-wide perf profile of a srnic run, summed
into the parts of the datapath (tests/bench/profile.sh runs it).

  profile_groups.py ROOT CYCLES PACKETS < perf-report-output

The input is `perf report --no-children --sort comm,dso,srcfile --stdio`
of a `perf record -a`: one line per (thread name, shared object, source
file) with its share of the samples; the idle threads' (swapper) are the
CPUs' idle time.  Source files of srnic are sorted into parts by the
folder they live in under ROOT (src/<library>/, provider/); inline
helpers of DPDK's headers by name.  CYCLES are the cycles of every CPU
over the recording (CPUs x seconds x TSC rate), PACKETS the frames both
nodes' ports moved meanwhile (rx + tx): each part's cycles a packet are
its share of the busy ones.  Prints a
Markdown table, largest part first.
"""
import os
import re
import sys

IDLE = "swapper"

# DPDK's and libc's inline helpers, as the debug info names their files.
HEADER_PARTS = [
    (re.compile(r"^rte_cycles\.h$|^rte_.*cycles.*\.h$"), "clock reads (rdtsc)"),
    (re.compile(r"^rte_(mbuf|mempool)"), "DPDK mbufs and pools"),
    (re.compile(r"^rte_ring"), "DPDK rings (doorbells, forwarding)"),
    (re.compile(r"^rte_ethdev"), "port I/O and the port token"),
    (re.compile(r"^rte_memcpy"), "placement copies and key checks"),
    (re.compile(r"^rte_pause"), "spinning (rte_pause)"),
    (re.compile(r"^rte_"), "other DPDK inline code"),
]

# srnic's folders, by the part of the datapath they are.
DIR_PARTS = {
    "src/port": "port I/O and the port token",
    "src/wire": "wire codec (decode, encode)",
    "src/engine": "datapath loop and dispatch",
    "src/sched": "datapath loop and dispatch",
    "src/responder": "responder (placement, ACKs, READ answers)",
    "src/requester": "requester (packets out)",
    "src/completer": "completer (ACKs in, completions)",
    "src/mem": "placement copies and key checks",
    "src/queue": "work and completion queues",
    "provider": "provider (posting, polling)",
    "src/attach": "srnicd attachment (forwarding rings)",
    "src/srnicd": "srnicd attachment (forwarding rings)",
    "src/control": "control core",
    "src/group": "multicast groups",
}


def source_dirs(root):
    """basename -> the folder (as DIR_PARTS names it) of srnic's sources."""
    where = {}
    for top in ("src", "provider"):
        for d, _, files in os.walk(os.path.join(root, top)):
            rel = os.path.relpath(d, root)
            key = rel if rel == "provider" else "/".join(rel.split("/")[:2])
            for f in files:
                if f.endswith((".c", ".h")):
                    where.setdefault(f, key)
    return where


def part_of(dso, src, where):
    if dso.startswith("[kernel"):
        return "kernel (scheduling, interrupts, system calls)"
    if "memif" in dso:
        return "memif PMD (copies into and out of the shared rings)"
    if dso.startswith(("libsrnic", "srnicd")):
        for pat, name in HEADER_PARTS:
            if src and pat.search(src):
                return name
        if src in where:
            return DIR_PARTS.get(where[src], "srnic, other")
        return "srnic, no source line"
    if dso.startswith(("librte_", "librte")):
        return "DPDK libraries"
    if dso.startswith(("libc", "ld-linux")):
        return "libc (TLS, pthread, system call stubs)"
    if dso.startswith(("ib_", "libibverbs", "libmlx")):
        return "the application and libibverbs"
    return "other"


def main():
    root, cycles, packets = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    where = source_dirs(root)
    parts, idle, total = {}, 0.0, 0.0
    line_re = re.compile(r"^\s*([0-9.]+)%\s+(\S+)\s+(\S+)\s*(\S*)\s*$")
    for line in sys.stdin:
        if line.startswith("#"):
            continue
        m = line_re.match(line)
        if not m:
            continue
        share, comm, dso, src = (float(m.group(1)), m.group(2), m.group(3),
                                 m.group(4))
        total += share
        if comm == IDLE:
            idle += share
            continue
        p = part_of(dso, src, where)
        parts[p] = parts.get(p, 0.0) + share
    work = total - idle
    if work <= 0 or packets <= 0 or total <= 0:
        sys.exit("profile_groups: no samples or no packets")
    busy = cycles * work / total
    print("| part | share of the busy CPU | cycles a packet |")
    print("|---|---|---|")
    for name, share in sorted(parts.items(), key=lambda kv: -kv[1]):
        frac = share / work
        print(f"| {name} | {100 * frac:.1f}% | {frac * busy / packets:.0f} |")
    print(f"| **all** ({100 * work / total:.0f}% of the CPUs busy) | 100% | "
          f"**{busy / packets:.0f}** |")


if __name__ == "__main__":
    main()
