#!/usr/bin/env python3
"""Plot and fit the blog's experiment from `sapling-demo --scaling JSON` as SVG.

Broad-phase time per frame (median over the timed frames) against the number
of objects, log-log, one line per algorithm; the exponent of a least-squares
fit of log(time) on log(n) over the blog's range (50 to 250 objects) and over
every count; the crossover: the smallest count from which an algorithm beats
brute force at every larger count. Standard library only: the SVG is drawn
by bench/svg_chart.py.

    python3 bench/plot_demo_scaling.py RESULTS.json OUT.svg [--md TABLE.md]

The Markdown (stdout, or --md) holds the table of times, the exponents and
the crossovers.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svg_chart import LineChart, log_log_slope  # noqa: E402


def fit_exponent(sizes, times, lo, hi):
    """The log-log slope of time against n over lo <= n <= hi; None with fewer than 2 points."""
    return log_log_slope([(n, t) for n, t in zip(sizes, times) if lo <= n <= hi])


def crossover(sizes, reference, times):
    """The smallest count from which `times` stays below `reference`; None if it never does at the end."""
    start = None
    for n, r, t in zip(sizes, reference, times):
        if t < r:
            if start is None:
                start = n
        else:
            start = None
    return start


def svg(data, fits):
    chart = LineChart(f"Broad phase per frame against objects: {data['scene']} scene, {data['sub_steps']} sub-steps, "
                      f"median of {data['frames']} frames", "objects", "ms per frame", log_x=True, log_y=True,
                      width=800)
    chart.band(50, 250, "blog's fit range")
    for c in data["contenders"]:
        e_blog, e_all = fits[c["name"]]
        label = c["name"]
        if e_blog is not None:
            label += f": n^{e_blog:.2f} (50-250)"
        if e_all is not None:
            label += f", n^{e_all:.2f} over all counts"
        chart.line(label, list(zip(data["sizes"], c["median_ms"])), markers=True)
    return chart.svg()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("svg")
    ap.add_argument("--md")
    args = ap.parse_args()
    with open(args.json) as f:
        data = json.load(f)
    sizes = data["sizes"]
    fits = {c["name"]: (fit_exponent(sizes, c["median_ms"], 50, 250),
                        fit_exponent(sizes, c["median_ms"], min(sizes), max(sizes))) for c in data["contenders"]}
    with open(args.svg, "w") as f:
        f.write(svg(data, fits))
    names = [c["name"] for c in data["contenders"]]
    lines = ["| objects | pairs | " + " | ".join(f"{n} ms" for n in names) + " |",
             "|---:|---:|" + "---:|" * len(names)]
    for j, n in enumerate(sizes):
        row = [f'{c["median_ms"][j]:.4f}' for c in data["contenders"]]
        lines.append(f"| {n} | {data['mean_pairs'][j]:.1f} | " + " | ".join(row) + " |")
    lines += ["", "| algorithm | exponent, 50-250 objects | exponent, all counts | faster than brute from |",
              "|---|---:|---:|---:|"]
    brute = next((c for c in data["contenders"] if c["name"] == "brute"), None)
    for c in data["contenders"]:
        e_blog, e_all = fits[c["name"]]
        cross = "-" if brute is None or c is brute else crossover(sizes, brute["median_ms"], c["median_ms"])
        exps = [f"{e:.2f}" if e is not None else "-" for e in (e_blog, e_all)]
        lines.append(f'| {c["name"]} | {exps[0]} | {exps[1]} | {cross if cross is not None else "never"} |')
    text = "\n".join(lines) + "\n"
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
