#!/usr/bin/env python3
"""The figures of Tracy, Buss and Woods 2009 from a `sapling bench --suite tracy --json` file.

    python3 bench/plot_tracy.py RESULTS.json [--out DIR] [--md PAGE.md]

Scenes are grouped by figure from their names (tracy-fig2-10k, tracy-fig8-m150,
tracy-fig9-e80, tracy-fig10-e200, tracy-fig11-50k): the varied parameter is
n for Figures 2 and 11, the moving cubes (m) for Figure 8, insertions plus
removals per frame (e) for Figures 9 and 10. Writes, into --out (default:
the JSON's folder), STEM-figK.svg: ms per frame (median; mean if bursty)
against the parameter, one line per contender; for Figure 2 also
STEM-fig2-swaps.svg, the swaps per frame of `sap-walk` against n with the
fitted exponent (least squares on the logs) and the paper's n^1.76 beside it.
With --md, replaces the page's "## Figures" section (or puts one before the
page's first "## " heading) with a table and the chart of each figure. Standard library only (svg_chart.py).
"""

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from svg_chart import LineChart, Palette, log_log_slope  # noqa: E402

# Per figure: title, x label, log x, log y.
FIGURES = {
    2: ("Figure 2: plain SAP, 10% moving, no churn: ms per frame against n", "objects (n)", True, True),
    8: ("Figure 8: 3,000 cubes, 1 insertion + 1 removal per frame", "moving cubes", False, True),
    9: ("Figure 9: 3,000 cubes, 150 moving", "insertions + removals per frame", False, False),
    10: ("Figure 10: 100,000 cubes, 10,000 moving", "insertions + removals per frame", True, True),
    11: ("Figure 11: 10% moving, 0.5% inserted + 0.5% removed per frame", "objects (n)", True, True),
}
# tracy-fig<K>-[<n>-](m|e)<x> or tracy-fig<K>-<n> (quick scenes may name their n: tracy-fig10-10k-e2).
NAME = re.compile(r"^tracy-fig(\d+)-(?:\d+[km]?-)?(?:(m|e)(\d+)|(\d+)(k|m)?)$")


def timed(c):
    return not c.get("skipped") and not c.get("error") and c.get("headline_ms", 0) > 0


def parameter(scene):
    """(figure, x) from the scene's name, or None."""
    m = NAME.match(scene["name"])
    if not m:
        return None
    figure = int(m.group(1))
    if m.group(2):
        return figure, int(m.group(3))
    return figure, scene["n"]


def figures(data):
    """{figure: [(x, scene)]} sorted by x."""
    out = {}
    for s in data["scenes"]:
        p = parameter(s)
        if p:
            out.setdefault(p[0], []).append((p[1], s))
    for members in out.values():
        members.sort(key=lambda m: m[0])
    return out


def contenders_of(members):
    names = []
    for _, s in members:
        for c in s["contenders"]:
            if timed(c) and c["name"] not in names:
                names.append(c["name"])
    return names


def ms_of(scene, name):
    for c in scene["contenders"]:
        if c["name"] == name and timed(c):
            return c["headline_ms"]
    return None


def swaps_of(scene, name="sap-walk"):
    for c in scene["contenders"]:
        if c["name"] == name and timed(c) and c.get("counter"):
            return c["counter"]["per_frame"]
    return None


def number(v):
    return f"{v:.3g}" if v < 1000 else f"{v:,.0f}"


def charts_and_tables(data, stem):
    """[(file, svg, caption, markdown table)]"""
    colour = Palette()
    out = []
    for figure, members in sorted(figures(data).items()):
        title, x_label, log_x, log_y = FIGURES.get(figure, (f"Figure {figure}", "parameter", False, True))
        if figure == 10:  # the quick suite's Figure 10 is smaller: say the n that ran
            n = members[0][1]["n"]
            title = f"Figure 10: {n:,} cubes, {n // 10:,} moving"
        names = contenders_of(members)
        chart = LineChart(title, x_label, "ms per frame (median; mean if bursty)", log_x=log_x, log_y=log_y)
        for name in names:
            pts = [(x, ms_of(s, name)) for x, s in members if ms_of(s, name) is not None]
            label = name
            if figure in (2, 11):
                e = log_log_slope(pts)
                label += f"  (n^{e:.2f})" if e is not None else ""
            chart.line(label, pts, colour[name], markers=True)
        rows = [f"| {x_label} | " + " | ".join(f"{n} ms" for n in names) + " |",
                "|---:|" + "---:|" * len(names)]
        for x, s in members:
            rows.append(f"| {x:,} | " + " | ".join(number(ms_of(s, n)) if ms_of(s, n) is not None else "-"
                                                  for n in names) + " |")
        out.append((f"{stem}-fig{figure}.svg", chart.svg(), title, "\n".join(rows)))
        if figure == 2:
            pts = [(x, swaps_of(s)) for x, s in members if swaps_of(s)]
            if len(pts) >= 2:
                e = log_log_slope(pts)
                swaps = LineChart("Figure 2: swaps per frame of the plain SAP against n (10% moving)", "objects (n)",
                                  "swaps per frame (mean)", log_x=True, log_y=True)
                swaps.line(f"sap-walk, measured  (n^{e:.2f})", pts, colour["sap-walk"], markers=True)
                x0, y0 = pts[0]
                swaps.line("the paper's fit, n^1.76 (through our first point)",
                           [(x, y0 * (x / x0) ** 1.76) for x, _ in pts], "#8c8c8c", dash="6,4")
                swaps.line("the analysis, n^(5/3) (through our first point)",
                           [(x, y0 * (x / x0) ** (5 / 3)) for x, _ in pts], "#b8860b", dash="2,3")
                table = ["| objects (n) | swaps per frame | swaps per moving cube |", "|---:|---:|---:|"]
                for x, s in members:
                    v = swaps_of(s)
                    if v:
                        table.append(f"| {x:,} | {v:,.0f} | {v / (x / 10):.1f} |")
                table.append(f"\nFitted exponent of swaps per frame against n: **{e:.2f}** (the paper: 1.76).")
                out.append((f"{stem}-fig2-swaps.svg", swaps.svg(), "Figure 2: swaps per frame against n",
                            "\n".join(table)))
    return out


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json")
    parser.add_argument("--out", help="folder for the SVG files (default: the JSON's)")
    parser.add_argument("--md", help="the Markdown page whose Figures section is (re)written")
    args = parser.parse_args(argv)
    with open(args.json) as f:
        data = json.load(f)
    folder = args.out or os.path.dirname(os.path.abspath(args.json))
    os.makedirs(folder, exist_ok=True)
    stem = os.path.splitext(os.path.basename(args.json))[0]
    made = charts_and_tables(data, stem)
    for name, svg, _, _ in made:
        with open(os.path.join(folder, name), "w") as f:
            f.write(svg)
    print(f"{len(made)} charts in {folder}")
    if args.md:
        page_dir = os.path.dirname(os.path.abspath(args.md))
        with open(args.md) as f:
            page = f.read()
        marker = "\n## Figures\n"
        head, found, rest = page.partition(marker)
        if found:  # replace the old section, keeping what followed it (the next "## " heading on)
            nxt = rest.find("\n## ")
            tail = rest[nxt:] if nxt >= 0 else ""
        else:  # a new section goes after the page's header, before its first "## " heading
            first = page.find("\n## ")
            head, tail = (page[:first], page[first:]) if first >= 0 else (page, "")
        section = [marker, "\nMade by `" + " ".join(["python3", "bench/plot_tracy.py", *argv]) + "`.\n"]
        for name, _, caption, table in made:
            rel = os.path.relpath(os.path.join(folder, name), page_dir)
            section.append(f"\n### {caption}\n\n{table}\n\n![{caption}]({rel})\n")
        with open(args.md, "w") as f:
            f.write(head.rstrip("\n") + "\n" + "".join(section) + tail)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
