#!/usr/bin/env python3
"""Charts of a `sapling bench --json` file, as SVG, and their links in its page.

    python3 bench/plot_bench.py RESULTS.json [--out DIR] [--md PAGE.md]

Writes, next to the JSON (or into --out), named after it:
  STEM-scaling-K.svg   each series of scenes that differ only in n: ms per
                       frame against n, log-log, per contender, with the
                       fitted exponent (least squares on the logs);
  STEM-frames-SCENE.svg  each persistent scene: every measured frame's time
                       per contender (log axis: spikes and medians both show);
  STEM-ratios.svg      each scene: every verified contender's ms per frame
                       over the fastest sapling contender's (log axis; 1 is
                       the line);
  STEM-memory.svg      each scene where contenders report it: bytes per
                       object (pairs apart).
With --md, appends a "Charts" section linking them to the page (once: an
earlier section written by this script is replaced).
"""

import argparse
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svg_chart import BarChart, LineChart, Palette, log_log_slope  # noqa: E402


def timed(contender):
    return not contender.get("skipped") and not contender.get("error") and contender.get("headline_ms", 0) > 0


def verified(contender):
    v = contender.get("verification", {})
    status = v.get("status", "") if isinstance(v, dict) else str(v)
    return status in ("reference", "exact", "superset", "") or status.startswith(("exact", "superset"))


def slug(name):
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-")


def charts(data, stem):
    """[(file name, svg text, caption)]"""
    scenes = data["scenes"]
    colour = Palette()  # one colour per contender across the charts
    out = []
    # Scaling per series.
    series = {}
    for s in scenes:
        if s.get("series"):
            series.setdefault(s["series"], []).append(s)
    for k, (name, members) in enumerate(series.items()):
        if len(members) < 2:
            continue
        chart = LineChart(f"{name}: time per frame against n", "objects (n)", "ms per frame (median; mean if bursty)",
                          log_x=True, log_y=True)
        by_contender = {}
        for s in members:
            for c in s["contenders"]:
                if timed(c):
                    by_contender.setdefault(c["name"], []).append((s["n"], c["headline_ms"]))
        for cname, pts in by_contender.items():
            if len(pts) < 2:
                continue
            pts.sort()
            e = log_log_slope(pts)
            chart.line(f"{cname}" + (f"  (n^{e:.2f})" if e is not None else ""), pts, colour[cname], markers=True)
        out.append((f"{stem}-scaling-{k + 1}.svg", chart.svg(), f"{name}: ms per frame against n (log-log)"))
    # Frame times per persistent scene.
    for s in scenes:
        if s.get("static"):
            continue
        chart = LineChart(f"{s['name']}: time of each measured frame", "frame (after frame 0 and warm-up)",
                          "ms", log_y=True)
        for c in s["contenders"]:
            frames = c.get("frame_ms") or []
            if timed(c) and frames:
                chart.line(f"{c['name']}: median {c['median_ms']:.3g}, max {max(frames):.3g} ms",
                           list(enumerate(frames, start=1)), colour[c["name"]])
        if chart.series:
            out.append((f"{stem}-frames-{slug(s['name'])}.svg", chart.svg(), f"{s['name']}: every frame's time"))
    # Ratios to the fastest sapling contender.
    ratios = BarChart("ms per frame over the fastest sapling contender's (lower is faster)", "ratio (log scale)",
                      log=True, reference=1.0, colours=colour)
    for s in scenes:
        ours = [c["headline_ms"] for c in s["contenders"] if timed(c) and c.get("origin") == "sapling"]
        if not ours:
            continue
        best = min(ours)
        for c in s["contenders"]:
            if timed(c) and verified(c):
                ratios.add(s["name"], c["name"], c["headline_ms"] / best)
    if ratios.groups:
        out.append((f"{stem}-ratios.svg", ratios.svg(), "every contender against the fastest of sapling's, per scene"))
    # Memory.
    memory = BarChart("bytes per object held by each contender (pairs apart)", "bytes per object", colours=colour)
    for s in scenes:
        for c in s["contenders"]:
            m = c.get("memory")
            if timed(c) and m and m.get("bytes_per_object"):
                memory.add(s["name"], c["name"], m["bytes_per_object"])
    if memory.groups:
        out.append((f"{stem}-memory.svg", memory.svg(), "bytes per object"))
    return out


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json")
    parser.add_argument("--out", help="folder for the SVG files (default: the JSON's)")
    parser.add_argument("--md", help="the Markdown page to link them from")
    args = parser.parse_args(argv)
    with open(args.json) as f:
        data = json.load(f)
    folder = args.out or os.path.dirname(os.path.abspath(args.json))
    os.makedirs(folder, exist_ok=True)
    stem = os.path.splitext(os.path.basename(args.json))[0]
    made = charts(data, stem)
    for name, svg, _ in made:
        with open(os.path.join(folder, name), "w") as f:
            f.write(svg)
    print(f"{len(made)} charts in {folder}")
    if args.md:
        page_dir = os.path.dirname(os.path.abspath(args.md))
        with open(args.md) as f:
            page = f.read()
        marker = "\n## Charts\n"
        page = page.split(marker)[0].rstrip("\n") + "\n"
        section = [marker, "Made by `" + " ".join(["python3", "bench/plot_bench.py", *argv]) + "`.\n"]
        for name, _, caption in made:
            rel = os.path.relpath(os.path.join(folder, name), page_dir)
            section.append(f"\n{caption}:\n\n![{caption}]({rel})\n")
        with open(args.md, "w") as f:
            f.write(page + "".join(section))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
