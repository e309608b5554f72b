#!/usr/bin/env python3
"""A new world's frame 0 per algorithm, each in a fresh process.

Inside one `sapling bench` process the first contender to build a scene pays
the page faults of memory that the later ones find already mapped (the
harness keeps freed memory), so its frame 0 is not comparable. Here every
frame 0 is `sapling run --frames 1` in a process of its own, the algorithms
alternating, and each row reports the median over the runs and the ratio to
the fastest (issue 27: `auto`'s frame 0 within 1.25x of the fastest).

    python3 bench/first_frames.py build/tools/sapling --algos auto,sap,box-pruning \\
        --scene "--scenario tracy --n 100000" --scene "..." --reps 5 [--md FILE]
"""

import argparse
import re
import statistics
import subprocess


def frame0(binary, algo, scene):
    out = subprocess.run([binary, "run", "--algo", algo, "--frames", "1", *scene.split()], check=True,
                         capture_output=True, text=True).stdout
    return float(re.search(r"frame 0\s+([0-9.]+) ms", out).group(1))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("binary")
    p.add_argument("--algos", required=True, help="comma-separated; the first is the one judged")
    p.add_argument("--scene", action="append", required=True, help="arguments of `sapling run`, quoted")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--md", help="append the table to this Markdown file")
    a = p.parse_args()
    algos = a.algos.split(",")
    rows = ["| scene | " + " | ".join(f"{x} ms" for x in algos) + f" | {algos[0]} / fastest |",
            "|---|" + "---|" * (len(algos) + 1)]
    for scene in a.scene:
        times = {x: [] for x in algos}
        for r in range(a.reps):
            for x in algos[r % len(algos):] + algos[:r % len(algos)]:
                times[x].append(frame0(a.binary, x, scene))
        med = {x: statistics.median(t) for x, t in times.items()}
        ratio = med[algos[0]] / min(med.values())
        rows.append(f"| `{scene}` | " + " | ".join(f"{med[x]:.3f}" for x in algos) + f" | {ratio:.2f} |")
    text = "\n".join(rows) + "\n"
    print(text, end="")
    if a.md:
        with open(a.md, "a") as f:
            f.write(text)


if __name__ == "__main__":
    main()
