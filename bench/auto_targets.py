#!/usr/bin/env python3
"""Issue 27's targets for `auto`, read from `sapling bench --json` files.

For every scene of the given runs where `auto` ran beside other sapling
algorithms, over the measured frames (the frames after frame 0 and any
warm-up: `--frames 100` gives frames 1-100, `--warmup 199 --frames 100`
frames 200-300):

- auto's median, mean and max against the best named sapling algorithm's
  for each figure (the best may differ per figure): target 1.15x;
- auto's max frame against its own median: target 4x;
- auto's frame 0 against the fastest sapling algorithm's frame 0: target
  1.25x;
- where PhysX ran (physx-abp, physx-mbp): auto's median and max below each.

    python3 bench/auto_targets.py RUN.json [RUN.json ...] [--md FILE]

Standard library only. A figure over its target is marked "missed".
"""

import argparse
import json
import statistics

TARGET_FIGURE = 1.15
TARGET_SPIKE = 4.0
TARGET_FRAME0 = 1.25


def figures(contender):
    frames = contender.get("frame_ms") or []
    if not frames:
        return None
    return {
        "median": statistics.median(frames),
        "mean": statistics.fmean(frames),
        "max": max(frames),
        "frame0": statistics.median(contender["frame0_ms"]) if contender.get("frame0_ms") else None,
    }


def mark(value, target):
    return f"{value:.2f}" + ("" if value <= target else " **missed**")


def scene_rows(scene):
    runs = {c["name"]: c for c in scene["contenders"] if not c.get("error") and c.get("frame_ms")}
    if "auto" not in runs:
        return None
    auto = figures(runs["auto"])
    named = {n: figures(c) for n, c in runs.items() if c.get("origin") == "sapling" and n != "auto"}
    named = {n: f for n, f in named.items() if f is not None}
    if not named:
        return None
    row = {"scene": scene["name"], "frames": len(runs["auto"]["frame_ms"])}
    for key in ("median", "mean", "max"):
        best = min(named, key=lambda n: named[n][key])
        row[key] = (auto[key] / named[best][key], best, auto[key], named[best][key])
    row["spike"] = auto["max"] / auto["median"]
    frame0s = [f["frame0"] for f in list(named.values()) + [auto] if f["frame0"] is not None]
    row["frame0"] = auto["frame0"] / min(frame0s) if auto["frame0"] is not None and frame0s else None
    peers = []
    for peer in ("physx-abp", "physx-mbp"):
        if peer in runs:
            p = figures(runs[peer])
            peers.append(f"{peer} {p['median'] / auto['median']:.2f}x / {p['max'] / auto['max']:.2f}x")
    row["peers"] = "; ".join(peers)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--md", help="write the table to this Markdown file as well")
    args = parser.parse_args()
    lines = [
        "| scene | frames | median: auto / best | mean | max | max / own median | frame 0 / fastest | "
        "PhysX median / max per auto's |",
        "|:--|--:|:--|:--|:--|--:|--:|:--|",
    ]
    met = total = 0
    for path in args.runs:
        with open(path) as f:
            run = json.load(f)
        for scene in run["scenes"]:
            row = scene_rows(scene)
            if row is None:
                continue
            cells = []
            ok = True
            for key in ("median", "mean", "max"):
                ratio, best, _, _ = row[key]
                ok &= ratio <= TARGET_FIGURE
                cells.append(f"{mark(ratio, TARGET_FIGURE)} ({best})")
            ok &= row["spike"] <= TARGET_SPIKE
            spike = mark(row["spike"], TARGET_SPIKE)
            frame0 = "-"
            if row["frame0"] is not None:
                ok &= row["frame0"] <= TARGET_FRAME0
                frame0 = mark(row["frame0"], TARGET_FRAME0)
            met += ok
            total += 1
            lines.append(f"| {row['scene']} | {row['frames']} | " + " | ".join(cells) +
                         f" | {spike} | {frame0} | {row['peers'] or '-'} |")
    lines.append("")
    lines.append(f"{met} of {total} scenes meet every target.")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
