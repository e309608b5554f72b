#!/usr/bin/env python3
"""The distributed broad phase's figures (issue 32), medians of repeated
sapling-mpi runs, printed as Markdown (bench/results/distributed.md).

    bench/distributed.py BUILD [--reps 3]

1. One rank against BroadPhase, same frames, same process (--compare on):
   tracy 100k (100 frames) and 1M (40 frames), 10% moving.
2. Two ranks against one on tracy 1M, 10% moving, 40 frames, the two
   runs alternated rep by rep (owners follow the domains, movers handed
   over as they cross).
3. Bytes per frame, ghosts and imbalance at 1-4 ranks on tracy 1M
   (beyond two ranks the 2-core machine is oversubscribed: bytes and
   ghosts only, no times) and on cluster 100k, which gathers into one
   domain and spreads again.
"""
import argparse
import os
import re
import statistics
import subprocess

FLOAT = r"([0-9.]+)"


def mpirun(build, ranks, args):
    cmd = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(ranks)]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    cmd += [os.path.join(build, "mpi", "sapling-mpi"), "run"] + args
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    figures = {}
    m = re.search(r"frame \(slowest rank.*median " + FLOAT + r" ms, p95 " + FLOAT + r" ms, max " + FLOAT +
                  r" ms, mean " + FLOAT, out)
    figures["median"], figures["p95"], figures["max"], figures["mean"] = map(float, m.groups())
    m = re.search(r"BroadPhase \(same frames.*median " + FLOAT + r" ms, p95 " + FLOAT + r" ms, max " + FLOAT +
                  r" ms, mean " + FLOAT, out)
    if m:
        figures["single"] = float(m.group(1))
        figures["single_max"] = float(m.group(3))
    m = re.search(r"bytes sent per frame.*median " + FLOAT + r", max " + FLOAT, out)
    figures["bytes"], figures["bytes_max"] = float(m.group(1)), float(m.group(2))
    m = re.search(r"load imbalance.*median " + FLOAT + r", max " + FLOAT, out)
    figures["imbalance"], figures["imbalance_max"] = float(m.group(1)), float(m.group(2))
    rows = re.findall(r"^  (\d+)\s+" + FLOAT + r"\s+" + FLOAT + r"\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+" + FLOAT,
                      out, re.M)
    figures["ghosts"] = [int(r[6]) for r in rows]
    figures["held"] = [int(r[3]) for r in rows]
    figures["held_max"] = [int(r[4]) for r in rows]
    figures["local"] = [float(r[2]) for r in rows]
    figures["own"] = [float(r[1]) for r in rows]
    return figures


def med(runs, key):
    return statistics.median(r[key] for r in runs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("build")
    parser.add_argument("--reps", type=int, default=3)
    a = parser.parse_args()

    print("## One rank against BroadPhase (same frames, same process)\n")
    print("| scene | frames | one rank ms (median) | BroadPhase ms | ratio (median of reps) |")
    print("|---|--:|--:|--:|--:|")
    for n, frames in ((100000, 100), (1000000, 40)):
        runs = [mpirun(a.build, 1, ["--n", str(n), "--frames", str(frames), "--compare", "on"])
                for _ in range(a.reps)]
        ratio = statistics.median(r["median"] / r["single"] for r in runs)
        print(f"| tracy {n:,} | {frames} | {med(runs, 'median'):.3f} | {med(runs, 'single'):.3f} | {ratio:.3f} |")

    print("\n## Two ranks against one, tracy 1M, 10% moving, 40 frames\n")
    one, two = [], []
    for _ in range(a.reps):
        one.append(mpirun(a.build, 1, ["--n", "1000000", "--frames", "40"]))
        two.append(mpirun(a.build, 2, ["--n", "1000000", "--frames", "40"]))
    print("| ranks | median ms | p95 | max | mean | per rank: local BroadPhase ms | layer ms (frame - local) |")
    print("|--:|--:|--:|--:|--:|--|--|")
    for ranks, runs in ((1, one), (2, two)):
        local = [statistics.median(r["local"][k] for r in runs) for k in range(ranks)]
        own = [statistics.median(r["own"][k] for r in runs) for k in range(ranks)]
        print(f"| {ranks} | {med(runs, 'median'):.2f} | {med(runs, 'p95'):.2f} | {med(runs, 'max'):.2f} | "
              f"{med(runs, 'mean'):.2f} | {', '.join(f'{x:.2f}' for x in local)} | "
              f"{', '.join(f'{o - l:.2f}' for o, l in zip(own, local))} |")
    speedups = [o["median"] / t["median"] for o, t in zip(one, two)]
    print(f"\nSpeed-up, one rank's median frame over two ranks', rep by rep: "
          f"{', '.join(f'{s:.2f}' for s in speedups)} (median {statistics.median(speedups):.2f}).")

    print("\n## Bytes, ghosts and balance per rank count (bytes and ghosts only beyond two ranks)\n")
    print("| scene | ranks | bytes/frame median | max | ghosts per rank (last frame) | held per rank, median | "
          "held per rank, max | imbalance median / max |")
    print("|---|--:|--:|--:|---|---|---|--:|")
    for label, args in (("tracy 1M", ["--n", "1000000", "--frames", "20"]),
                        ("cluster 100k", ["--scenario", "cluster", "--n", "100000", "--frames", "120",
                                          "--cycle", "100"])):
        for ranks in (1, 2, 3, 4):
            r = mpirun(a.build, ranks, args)
            print(f"| {label} | {ranks} | {r['bytes']:.0f} | {r['bytes_max']:.0f} | "
                  f"{', '.join(map(str, r['ghosts']))} | {', '.join(map(str, r['held']))} | "
                  f"{', '.join(map(str, r['held_max']))} | "
                  f"{r['imbalance']:.3f} / {r['imbalance_max']:.3f} |")

    print("\n## Redraw frames (cluster 100k, 3 ranks, 200 frames; oversubscribed: ratios only)\n")
    count, worst = redraw_frames(a.build, 3, ["--scenario", "cluster", "--n", "100000", "--frames", "200",
                                              "--cycle", "100"], a.reps)
    print(f"{count} redraws a run; the worst of a redraw frame and the frame after it, over the median of the three "
          f"frames before: {', '.join(f'{w:.2f}x' for w in worst)} (one per run).")


def redraw_frames(build, ranks, args, reps):
    """The frames of a redraw and the one after it, each over the median of
    the three frames before the redraw; the worst over the run, per rep."""
    import csv
    import tempfile
    worst = []
    count = 0
    for _ in range(reps):
        with tempfile.NamedTemporaryFile(suffix=".csv") as f:
            mpirun(build, ranks, args + ["--per-frame", f.name])
            rows = list(csv.DictReader(open(f.name)))
        ms = [float(r["ms"]) for r in rows]
        ratios = []
        for i, r in enumerate(rows):
            if r["redrawn"] == "1" and i >= 4 and i + 1 < len(rows):
                base = statistics.median(ms[i - 3:i])
                ratios.append(max(ms[i], ms[i + 1]) / base)
        count = len(ratios)
        worst.append(max(ratios) if ratios else float("nan"))
    return count, worst


if __name__ == "__main__":
    main()
