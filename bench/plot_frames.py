#!/usr/bin/env python3
"""Plot per-frame times and pair counts from `sapling bench --frames-csv` as SVG.

The shape of Figure 4 of Capannini and Larsson's unisize paper (SIGRAD 2016):
milliseconds per frame of each chosen contender on the left axis, the number
of overlapping pairs (grey) on the right axis, frames along the bottom.
Standard library only: the SVG is written by hand.

    python3 bench/plot_frames.py FRAMES.csv OUT.svg [--scene NAME]
        [--contenders unisize,dual-axis] [--title TEXT] [--skip-frame0]

The CSV has the columns scene,contender,frame,ms,pairs. Without --scene the
first scene in the file is drawn; without --contenders every contender of it.
The pair counts drawn are those of the first contender listed (all exact
contenders agree; the harness verifies that separately).
"""

import argparse
import csv
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svg_chart import COLOURS, GREY, nice_step, number_text, polyline, text  # noqa: E402

PAIR_COLOUR = GREY


def read_frames(path):
    """{scene: {contender: [(frame, ms, pairs), ...]}} in file order."""
    scenes = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            series = scenes.setdefault(row["scene"], {}).setdefault(row["contender"], [])
            series.append((int(row["frame"]), float(row["ms"]), int(row["pairs"])))
    for contenders in scenes.values():
        for series in contenders.values():
            series.sort()
    return scenes


def plot(series_by_contender, title, out):
    width, height = 900, 480
    left, right, top, bottom = 70, 90, 50, 60
    pw, ph = width - left - right, height - top - bottom

    names = list(series_by_contender)
    all_frames = [f for s in series_by_contender.values() for f, _, _ in s]
    f_lo, f_hi = min(all_frames), max(all_frames)
    ms_hi = max(ms for s in series_by_contender.values() for _, ms, _ in s)
    pair_series = series_by_contender[names[0]]
    pairs_hi = max(p for _, _, p in pair_series) or 1

    ms_step = nice_step(ms_hi)
    ms_top = ms_step * math.ceil(ms_hi / ms_step)
    pair_step = nice_step(pairs_hi)
    pair_top = pair_step * math.ceil(pairs_hi / pair_step)
    f_step = nice_step(f_hi - f_lo, 10)

    def px(frame):
        return left + (frame - f_lo) / max(1, f_hi - f_lo) * pw

    def py_ms(ms):
        return top + ph - ms / ms_top * ph

    def py_pairs(p):
        return top + ph - p / pair_top * ph

    svg = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        text(width / 2, 24, title, size=15),
    ]
    # Grid and left axis (ms).
    v = 0.0
    while v <= ms_top + 1e-9:
        y = py_ms(v)
        svg.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#e4e4e4"/>')
        svg.append(text(left - 8, y + 4, f"{v:g}", anchor="end"))
        v += ms_step
    # Right axis (pairs).
    v = 0.0
    while v <= pair_top + 1e-9:
        svg.append(text(left + pw + 8, py_pairs(v) + 4, number_text(v), anchor="start", colour=PAIR_COLOUR))
        v += pair_step
    # Bottom axis (frames).
    f = math.ceil(f_lo / f_step) * f_step
    while f <= f_hi:
        x = px(f)
        svg.append(f'<line x1="{x:.1f}" y1="{top + ph}" x2="{x:.1f}" y2="{top + ph + 5}" stroke="#444"/>')
        svg.append(text(x, top + ph + 20, f"{f:g}"))
        f += f_step
    svg.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>')
    svg.append(text(left + pw / 2, height - 18, "frame"))
    svg.append(text(20, top + ph / 2, "collision detection time per frame (ms)", rotate=-90))
    svg.append(text(width - 18, top + ph / 2, "overlapping pairs", colour=PAIR_COLOUR, rotate=90))

    # Pairs first (underneath), then the times.
    svg.append(polyline([(px(f), py_pairs(p)) for f, _, p in pair_series], PAIR_COLOUR, 1.5))
    for k, name in enumerate(names):
        colour = COLOURS[k % len(COLOURS)]
        svg.append(polyline([(px(f), py_ms(ms)) for f, ms, _ in series_by_contender[name]], colour, 1.2))

    # Legend with worst / mean / median of each contender.
    y = top + 16
    for k, name in enumerate(names):
        times = [ms for _, ms, _ in series_by_contender[name]]
        colour = COLOURS[k % len(COLOURS)]
        label = (
            f"{name}: worst {max(times):.1f}, mean {statistics.fmean(times):.1f}, "
            f"median {statistics.median(times):.1f} ms"
        )
        svg.append(f'<line x1="{left + 12}" y1="{y - 4}" x2="{left + 36}" y2="{y - 4}" stroke="{colour}" '
                   f'stroke-width="2"/>')
        svg.append(text(left + 42, y, label, anchor="start"))
        y += 18
    svg.append(f'<line x1="{left + 12}" y1="{y - 4}" x2="{left + 36}" y2="{y - 4}" stroke="{PAIR_COLOUR}" '
               f'stroke-width="2"/>')
    svg.append(text(left + 42, y, f"pairs (max {max(p for _, _, p in pair_series)})", anchor="start"))
    svg.append("</svg>")
    out.write("\n".join(svg) + "\n")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv")
    parser.add_argument("svg")
    parser.add_argument("--scene")
    parser.add_argument("--contenders", help="comma-separated; default: every contender of the scene")
    parser.add_argument("--title")
    parser.add_argument("--skip-frame0", action="store_true", help="leave out frame 0 (mass insertion)")
    args = parser.parse_args(argv)

    scenes = read_frames(args.csv)
    if not scenes:
        sys.exit(f"{args.csv}: no frames")
    scene = args.scene or next(iter(scenes))
    if scene not in scenes:
        sys.exit(f"{args.csv}: no scene {scene} (have: {', '.join(scenes)})")
    contenders = scenes[scene]
    names = args.contenders.split(",") if args.contenders else list(contenders)
    missing = [n for n in names if n not in contenders]
    if missing:
        sys.exit(f"{args.csv}: scene {scene} has no contender {', '.join(missing)} (have: {', '.join(contenders)})")
    chosen = {}
    for n in names:
        series = [row for row in contenders[n] if not (args.skip_frame0 and row[0] == 0)]
        if not series:
            sys.exit(f"{args.csv}: {n} has no frames to draw")
        chosen[n] = series
    with open(args.svg, "w") as out:
        plot(chosen, args.title or f"{scene}: time and pairs per frame", out)


if __name__ == "__main__":
    main(sys.argv[1:])
