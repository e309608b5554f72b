#!/usr/bin/env python3
"""Plot and fit the blog's experiment from `sapling-demo --scaling JSON` as SVG.

Broad-phase time per frame (median over the timed frames) against the number
of objects, log-log, one line per algorithm; the exponent of a least-squares
fit of log(time) on log(n) over the blog's range (50 to 250 objects) and over
every count; the crossover: the smallest count from which an algorithm beats
brute force at every larger count. Standard library only: the SVG is written
by hand, as bench/plot_frames.py does.

    python3 bench/plot_demo_scaling.py RESULTS.json OUT.svg [--md TABLE.md]

The Markdown (stdout, or --md) holds the table of times, the exponents and
the crossovers.
"""

import argparse
import json
import math
from xml.sax.saxutils import escape

COLOURS = ["#d9541e", "#7b3fa0", "#1f5fbf", "#1b9e3a", "#b8860b", "#008b8b"]


def fit_exponent(sizes, times, lo, hi):
    """Slope of log(time) against log(n) over lo <= n <= hi; None with fewer than 2 points."""
    pts = [(math.log(n), math.log(t)) for n, t in zip(sizes, times) if lo <= n <= hi and t > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    sxy = sum((p[0] - mx) * (p[1] - my) for p in pts)
    return sxy / sxx if sxx > 0 else None


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


def log_ticks(lo, hi):
    out = []
    e = math.floor(math.log10(lo))
    while 10 ** e <= hi * 1.0001:
        for m in (1, 2, 5):
            v = m * 10 ** e
            if lo * 0.9999 <= v <= hi * 1.0001:
                out.append(v)
        e += 1
    return out


def fmt(v):
    return f"{v:g}" if v >= 0.01 else f"{v:.0e}"


def svg(data, fits):
    width, height = 760, 480
    left, right, top, bottom = 70, 220, 40, 50
    sizes = data["sizes"]
    all_t = [t for c in data["contenders"] for t in c["median_ms"] if t > 0]
    xlo, xhi = min(sizes), max(sizes)
    ylo, yhi = min(all_t), max(all_t)
    ylo, yhi = 10 ** math.floor(math.log10(ylo)), 10 ** math.ceil(math.log10(yhi))

    def px(n):
        return left + (math.log(n) - math.log(xlo)) / (math.log(xhi) - math.log(xlo)) * (width - left - right)

    def py(t):
        return top + (math.log(yhi) - math.log(t)) / (math.log(yhi) - math.log(ylo)) * (height - top - bottom)

    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
         f'<rect width="{width}" height="{height}" fill="white"/>',
         f'<text x="{left}" y="22" font-size="14">Broad phase per frame against objects: {escape(data["scene"])} scene, '
         f'{data["sub_steps"]} sub-steps, median of {data["frames"]} frames</text>']
    for v in log_ticks(xlo, xhi):
        x = px(v)
        o.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{height - bottom}" stroke="#e4e4e4"/>')
        o.append(f'<text x="{x:.1f}" y="{height - bottom + 16}" text-anchor="middle">{v:g}</text>')
    for v in log_ticks(ylo, yhi):
        y = py(v)
        o.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" stroke="#e4e4e4"/>')
        o.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{fmt(v)}</text>')
    o.append(f'<rect x="{left}" y="{top}" width="{width - left - right}" height="{height - top - bottom}" '
             'fill="none" stroke="#444"/>')
    o.append(f'<text x="{(left + width - right) / 2}" y="{height - 12}" text-anchor="middle">objects (log)</text>')
    o.append(f'<text x="16" y="{(top + height - bottom) / 2}" text-anchor="middle" '
             f'transform="rotate(-90 16 {(top + height - bottom) / 2})">ms per frame (log)</text>')
    # The blog's range of fit, shaded.
    o.append(f'<rect x="{px(50):.1f}" y="{top}" width="{px(250) - px(50):.1f}" height="{height - top - bottom}" '
             'fill="#f3f3d8" opacity="0.6"/>')
    for i, c in enumerate(data["contenders"]):
        col = COLOURS[i % len(COLOURS)]
        pts = " ".join(f"{px(n):.1f},{py(t):.1f}" for n, t in zip(sizes, c["median_ms"]) if t > 0)
        o.append(f'<polyline points="{pts}" fill="none" stroke="{col}" stroke-width="2"/>')
        for n, t in zip(sizes, c["median_ms"]):
            if t > 0:
                o.append(f'<circle cx="{px(n):.1f}" cy="{py(t):.1f}" r="3" fill="{col}"/>')
        e_blog, e_all = fits[c["name"]]
        label = f'{c["name"]}: n^{e_blog:.2f} (50-250)' if e_blog is not None else c["name"]
        y = top + 10 + 36 * i
        o.append(f'<line x1="{width - right + 12}" y1="{y}" x2="{width - right + 32}" y2="{y}" stroke="{col}" stroke-width="2"/>')
        o.append(f'<text x="{width - right + 38}" y="{y + 4}">{escape(label)}</text>')
        if e_all is not None:
            o.append(f'<text x="{width - right + 38}" y="{y + 19}" fill="#666">n^{e_all:.2f} over all counts</text>')
    o.append(f'<text x="{px(50) + 4:.1f}" y="{top + 14}" fill="#888">blog\'s fit range</text>')
    o.append("</svg>")
    return "\n".join(o) + "\n"


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
