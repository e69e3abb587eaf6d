#!/usr/bin/env python3
"""The benchmark suite's report: DIR/raw.tsv (tests/bench/suite.sh) in,
DIR/results.md (medians, ratios, issue 5's targets) and DIR/results.png
(bandwidth and latency against message size) out.

    report.py DIR "COMMAND THAT MADE IT"
"""
import csv
import statistics
import sys
from collections import defaultdict

BW_TOOLS = ["ib_write_bw", "ib_read_bw", "ib_send_bw"]
LAT_TOOLS = ["ib_write_lat", "ib_read_lat"]


def per_round(path):
    """(wire, ports, bench, size) -> {round: value}."""
    runs = defaultdict(dict)
    with open(path) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            try:
                runs[(row["wire"], row["ports"], row["bench"],
                      row["size"])][int(row["round"])] = float(row["value"])
            except ValueError:
                pass
    return runs


def load(path):
    """(wire, ports, bench, size) -> the median of its rounds; and the
    rounds' values in order."""
    runs = {k: [v[r] for r in sorted(v)]
            for k, v in per_round(path).items()}
    return {k: statistics.median(v) for k, v in runs.items()}, runs


def size_name(s):
    s = int(s)
    for unit, n in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if s >= n and s % n == 0:
            return f"{s // n} {unit}"
    return f"{s} B"


def fmt(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def ratio(a, b):
    return None if a is None or b in (None, 0) else a / b


def combos(med):
    seen = []
    for (wire, ports, bench, _size) in med:
        if wire != "kernel" and (wire, ports) not in seen:
            seen.append((wire, ports))
    return sorted(seen)


def sizes_of(med, wire, ports, tools):
    return sorted({int(k[3]) for k in med
                   if k[0] == wire and k[1] == ports and k[2] in tools})


def report(out, command):
    med, runs = load(f"{out}/raw.tsv")
    get = lambda *k: med.get(tuple(str(x) for x in k))
    rounds = max((len(v) for v in runs.values()), default=0)
    lines = [
        "# srnic benchmark",
        "",
        f"Command: `{command}` (as root, from the repository).  Medians of "
        f"{rounds} round(s); srnic and its peers alternate within each "
        "round.  Raw numbers: raw.tsv.",
        "",
        "## Peers (over the nodes' kernel network, MTU 65000)",
        "",
        "| peer | what | median |",
        "|---|---|---|",
        f"| kernel TCP (iperf3, one stream) | Gb/s | "
        f"{fmt(get('kernel', '-', 'tcp-iperf3', 'stream'))} |",
        f"| UCX over tcp, put bandwidth 64 KiB | Gb/s | "
        f"{fmt(get('kernel', '-', 'ucx-put-bw', 65536))} |",
        f"| UCX over tcp, put latency 2 B | µs (50th pct) | "
        f"{fmt(get('kernel', '-', 'ucx-put-lat', 2))} |",
        f"| libfabric tcp, RMA write 64 KiB (fi_rma_bw) | Gb/s | "
        f"{fmt(get('kernel', '-', 'libfabric-write', 65536))} |",
        "",
    ]
    for wire, ports in combos(med):
        lines += [f"## {wire} wire, {ports} port(s)", "",
                  "| size | testpmd (ceiling) | ib_write_bw | of ceiling | "
                  "ib_read_bw | ib_send_bw |",
                  "|---|---|---|---|---|---|"]
        for s in sizes_of(med, wire, ports, BW_TOOLS + ["testpmd"]):
            tp = get(wire, ports, "testpmd", s)
            w = get(wire, ports, "ib_write_bw", s)
            r = ratio(w, tp)
            lines.append(
                f"| {size_name(s)} | {fmt(tp)} | {fmt(w)} | "
                f"{'-' if r is None else f'{100 * r:.0f}%'} | "
                f"{fmt(get(wire, ports, 'ib_read_bw', s))} | "
                f"{fmt(get(wire, ports, 'ib_send_bw', s))} |")
        lines += ["", "Bandwidth in Gb/s.", "",
                  "| size | ib_write_lat | ib_read_lat |", "|---|---|---|"]
        for s in sizes_of(med, wire, ports, LAT_TOOLS):
            lines.append(
                f"| {size_name(s)} | {fmt(get(wire, ports, 'ib_write_lat', s))}"
                f" | {fmt(get(wire, ports, 'ib_read_lat', s))} |")
        lines += ["", "Typical latency in µs.", ""]

    w64 = get("memif", 2, "ib_write_bw", 65536)
    tp64 = get("memif", 2, "testpmd", 65536)
    lat2 = get("memif", 2, "ib_write_lat", 2)
    lines += [
        "## Issue 5's targets", "",
        "| target | measured | met |", "|---|---|---|"]

    def target(what, value, ok, shown):
        lines.append(f"| {what} | {shown} | "
                     f"{'-' if value is None else ('yes' if ok else 'no')} |")

    r = ratio(w64, tp64)
    target("ib_write_bw 64 KiB, memif, 2 ports: >= 70% of testpmd", r,
           r is not None and r >= 0.7,
           "-" if r is None else f"{100 * r:.0f}%")
    for peer, name in (("libfabric-write", "libfabric tcp RMA write"),
                       ("tcp-iperf3", "kernel TCP")):
        key = 65536 if peer != "tcp-iperf3" else "stream"
        r = ratio(w64, get("kernel", "-", peer, key))
        target(f"ib_write_bw 64 KiB: >= 3x {name}", r,
               r is not None and r >= 3, "-" if r is None else f"{r:.2f}x")
    r = ratio(lat2, get("kernel", "-", "ucx-put-lat", 2))
    target("ib_write_lat 2 B, memif: <= 1/5 of UCX-over-tcp put latency", r,
           r is not None and r <= 0.2,
           "-" if r is None else f"{r:.2f} of it")
    r = ratio(get("memif", 2, "ib_write_bw_q1000", 65536), w64)
    target("ib_write_bw 64 KiB over 1000 RC QPs (-q 1000), memif, 2 ports: "
           ">= 50% of one QP's", r, r is not None and r >= 0.5,
           "-" if r is None else f"{100 * r:.0f}%")
    lines += [""] + by_round(per_round(f"{out}/raw.tsv"), rounds) + [""]
    with open(f"{out}/results.md", "w") as f:
        f.write("\n".join(lines))
    plot(out, med, get)


def by_round(runs, rounds):
    """Issue 5's targets with each ratio taken within one round: the host
    has fast and slow phases of seconds, and a ratio of medians can pair
    one round's srnic with another round's peer."""
    at = lambda r, *k: runs.get(tuple(str(x) for x in k), {}).get(r)
    checks = [  # heading, srnic, reference, met, shown
        ("of testpmd", ("memif", 2, "ib_write_bw", 65536),
         ("memif", 2, "testpmd", 65536), lambda x: x >= 0.7,
         lambda x: f"{100 * x:.0f}%"),
        ("x libfabric", ("memif", 2, "ib_write_bw", 65536),
         ("kernel", "-", "libfabric-write", 65536), lambda x: x >= 3,
         lambda x: f"{x:.2f}x"),
        ("x kernel TCP", ("memif", 2, "ib_write_bw", 65536),
         ("kernel", "-", "tcp-iperf3", "stream"), lambda x: x >= 3,
         lambda x: f"{x:.2f}x"),
        ("2 B latency of UCX's", ("memif", 2, "ib_write_lat", 2),
         ("kernel", "-", "ucx-put-lat", 2), lambda x: x <= 0.2,
         lambda x: f"{x:.2f}"),
        ("1000 QPs of one", ("memif", 2, "ib_write_bw_q1000", 65536),
         ("memif", 2, "ib_write_bw", 65536), lambda x: x >= 0.5,
         lambda x: f"{100 * x:.0f}%"),
    ]
    lines = ["## Issue 5's targets, round by round", "",
             "Each ratio within one round: srnic and testpmd seconds "
             "apart; the peers once a round, beside the first testbed's "
             "runs (in a full run, the one-port memif rounds).", "",
             "| round | ib_write_bw 64 KiB (Gb/s) | " +
             " | ".join(c[0] for c in checks) + " |",
             "|---|---|" + "---|" * len(checks)]
    met = [0] * len(checks)
    seen = [0] * len(checks)
    for r in range(1, rounds + 1):
        cells = []
        for i, (_h, mine, ref, ok, shown) in enumerate(checks):
            x = ratio(at(r, *mine), at(r, *ref))
            if x is None:
                cells.append("-")
                continue
            seen[i] += 1
            met[i] += bool(ok(x))
            cells.append(shown(x))
        lines.append(f"| {r} | {fmt(at(r, 'memif', 2, 'ib_write_bw', 65536))}"
                     f" | " + " | ".join(cells) + " |")
    lines.append("| met in | | " + " | ".join(
        f"{m} of {n}" if n else "-" for m, n in zip(met, seen)) + " |")
    return lines


def plot(out, med, get):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report: no matplotlib, no plot", file=sys.stderr)
        return
    fig, (bw, lat) = plt.subplots(1, 2, figsize=(13, 5))
    for wire, ports in combos(med):
        tag = f"{wire}, {ports}p"
        for tool, style in zip(["testpmd"] + BW_TOOLS, ["k--", "-", ":", "-."]):
            xs = [s for s in sizes_of(med, wire, ports, [tool])
                  if (get(wire, ports, tool, s) or 0) > 0]
            ys = [get(wire, ports, tool, s) for s in xs]
            if xs:
                bw.plot(xs, ys, style, marker="o", markersize=3,
                        label=f"{tool} ({tag})")
        for tool in LAT_TOOLS:
            xs = sizes_of(med, wire, ports, [tool])
            if xs:
                lat.plot(xs, [get(wire, ports, tool, s) for s in xs],
                         marker="o", markersize=3, label=f"{tool} ({tag})")
    for peer, key, name in (("libfabric-write", 65536, "libfabric tcp write"),
                            ("ucx-put-bw", 65536, "UCX tcp put"),
                            ("tcp-iperf3", "stream", "kernel TCP")):
        v = get("kernel", "-", peer, key)
        if v is not None:
            bw.axhline(v, linewidth=0.8, color="grey")
            bw.annotate(name, (8, v), fontsize=7, color="grey")
    v = get("kernel", "-", "ucx-put-lat", 2)
    if v is not None:
        lat.axhline(v, linewidth=0.8, color="grey")
        lat.annotate("UCX tcp put, 2 B", (2, v), fontsize=7, color="grey")
    for ax, title, unit in ((bw, "Bandwidth", "Gb/s"),
                            (lat, "Latency (typical)", "µs")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel(unit)
        ax.set_title(title)
        ax.grid(True, which="both", linewidth=0.3)
        ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(f"{out}/results.png", dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: report.py DIR COMMAND")
    report(sys.argv[1], sys.argv[2])
