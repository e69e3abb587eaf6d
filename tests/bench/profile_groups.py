#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where the cycles go: a perf profile of a srnic run's processes, summed
into the parts of the datapath (tests/bench/profile.sh runs it).

  profile_groups.py ROOT SAMPLE_CYCLES PACKETS < perf-report-output

The input is `perf report --no-children -n --sort comm,dso,srcfile
--full-source-path --stdio`: one line per (thread name, shared object,
source file) with its share and count of the samples, each SAMPLE_CYCLES
of a CPU's time.  Source files of srnic are sorted into parts by the
folder they live in under ROOT (src/<library>/, provider/); inline
helpers of DPDK's headers by name.  PACKETS are the frames both nodes'
ports moved meanwhile (rx + tx): each part's cycles a packet are its
samples' cycles over them.  Prints a Markdown table, largest part first.
"""
import os
import re
import sys

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
    "src/core": "datapath loop and dispatch",
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


def folder_of(src, root):
    """The folder of srnic's a source path is in (as DIR_PARTS names
    it): perf gives full paths (--full-source-path), through the build
    directory (ROOT/build/../src/...); None for another project's."""
    path = os.path.relpath(os.path.normpath(src), os.path.normpath(root))
    parts = path.split(os.sep)
    if parts[0] == "provider":
        return "provider"
    if parts[0] == "src" and len(parts) > 2:
        return "src/" + parts[1]
    return None


def part_of(dso, src, root):
    if dso.startswith("[kernel"):
        return "kernel (scheduling, interrupts, system calls)"
    if "memif" in dso:
        return "memif PMD (copies into and out of the shared rings)"
    if dso.startswith(("libsrnic", "srnicd")):
        base = os.path.basename(src)
        for pat, name in HEADER_PARTS:
            if base and pat.search(base):
                return name
        folder = folder_of(src, root) if src else None
        if folder:
            return DIR_PARTS.get(folder, "srnic, other")
        return "srnic, no source line"
    if dso.startswith(("librte_", "librte")):
        return "DPDK libraries"
    if dso.startswith(("libc", "ld-linux")):
        return "libc (TLS, pthread, system call stubs)"
    if dso.startswith(("ib_", "libibverbs", "libmlx")):
        return "the application and libibverbs"
    return "other"


def main():
    root, per, packets = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    parts, total = {}, 0
    line_re = re.compile(
        r"^\s*[0-9.]+%\s+([0-9]+)\s+(\S+)\s+(\S+)\s*(\S*)\s*$")
    for line in sys.stdin:
        if line.startswith("#"):
            continue
        m = line_re.match(line)
        if not m:
            continue
        n, dso, src = int(m.group(1)), m.group(3), m.group(4)
        total += n
        p = part_of(dso, src, root)
        parts[p] = parts.get(p, 0) + n
    if not total or packets <= 0:
        sys.exit("profile_groups: no samples or no packets")
    print("| part | share of the CPU time | cycles a packet |")
    print("|---|---|---|")
    for name, n in sorted(parts.items(), key=lambda kv: -kv[1]):
        print(f"| {name} | {100 * n / total:.1f}% | {n * per / packets:.0f} |")
    print(f"| **all** ({total} samples) | 100% | "
          f"**{total * per / packets:.0f}** |")


if __name__ == "__main__":
    main()
