#!/usr/bin/env python3
"""Before/after comparison of two builds of the `sapling` command.

Runs `sapling run` with the same arguments through both binaries, back to
back and alternating (before, after, before, ...), so that a busy spell of a
shared machine hits both; each run's median, mean and worst step time and
frame 0 are read from its summary, and each row reports the medians over the
runs and the median of the paired ratios after/before (the worst step, the
steadiness a frame budget sees, alongside the median and the mean). The pair-set hashes must be equal, else the row
says so (a change that keeps behaviour keeps every hash).

  bench/compare_builds.py BEFORE AFTER --reps 5 --scene "--algo sap --n 100000" \
      --scene "--algo box-pruning --scenario allmoving3d --frames 20" [--md FILE]
"""
import argparse
import re
import shlex
import statistics
import subprocess
import sys


def run(binary, args):
    out = subprocess.run([binary, "run", *args], check=True, capture_output=True, text=True).stdout
    m = re.search(r"step time\s+median ([0-9.]+) ms, p95 [0-9.]+ ms, max ([0-9.]+) ms, mean ([0-9.]+) ms", out)
    frame0 = float(re.search(r"frame 0\s+([0-9.]+) ms", out).group(1))
    digest = re.search(r"hash ([0-9a-f]+)", out).group(1)
    return float(m.group(1)), frame0, digest, float(m.group(3)), float(m.group(2))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--scene", action="append", required=True, help="arguments of `sapling run`, quoted")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--md", help="append the table to this Markdown file")
    a = p.parse_args()
    rows = ["| scene | before ms/step | after ms/step | after/before: median step | mean step | worst step | frame 0 "
            "| hash equal |", "|---|---|---|---|---|---|---|---|"]
    for scene in a.scene:
        args = shlex.split(scene)
        runs = {"before": [], "after": []}
        for _ in range(a.reps):
            for which in ("before", "after"):
                runs[which].append(run(getattr(a, which), args))
        b, f = runs["before"], runs["after"]
        step_ratio, frame0_ratio, mean_ratio, max_ratio = (
            statistics.median(y[k] / x[k] for x, y in zip(b, f)) for k in (0, 1, 3, 4))
        same = {r[2] for r in b} == {r[2] for r in f} and len({r[2] for r in b}) == 1
        row = (f"| `{scene}` | {statistics.median(r[0] for r in b):.3f} | {statistics.median(r[0] for r in f):.3f} "
               f"| {step_ratio:.3f} | {mean_ratio:.3f} | {max_ratio:.3f} | {frame0_ratio:.3f} | {same} |")
        rows.append(row)
        print(row, flush=True)
    if a.md:
        with open(a.md, "a") as md:
            md.write("\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
