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

With `--against VAR=VALUE` each algorithm also runs with that environment
setting, interleaved, in a column of its own (e.g. SAPLING_HUGE_PAGES=0:
the first frame without huge pages), and the ratio column compares the two.
"""

import argparse
import os
import re
import statistics
import subprocess


def frame0(binary, algo, scene, env=None):
    out = subprocess.run([binary, "run", "--algo", algo, "--frames", "1", *scene.split()], check=True,
                         capture_output=True, text=True, env=env).stdout
    return float(re.search(r"frame 0\s+([0-9.]+) ms", out).group(1))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("binary")
    p.add_argument("--algos", required=True, help="comma-separated; the first is the one judged")
    p.add_argument("--scene", action="append", required=True, help="arguments of `sapling run`, quoted")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--md", help="append the table to this Markdown file")
    p.add_argument("--against", metavar="VAR=VALUE", help="also run each algorithm with this environment setting")
    a = p.parse_args()
    algos = a.algos.split(",")
    if a.against:
        name, _, value = a.against.partition("=")
        other = dict(os.environ, **{name: value})
        runs = [(x, v) for x in algos for v in (None, other)]
        head = [h for x in algos for h in (f"{x} ms", f"{x} ms, {a.against}")]
        ratio_head = " | ".join(f"{x} / {x}, {a.against}" for x in algos)
    else:
        runs = [(x, None) for x in algos]
        head = [f"{x} ms" for x in algos]
        ratio_head = f"{algos[0]} / fastest"
    rows = ["| scene | " + " | ".join(head) + f" | {ratio_head} |",
            "|---|" + "---|" * (len(head) + (len(algos) if a.against else 1))]
    for scene in a.scene:
        times = [[] for _ in runs]
        for r in range(a.reps):
            for k in list(range(r % len(runs), len(runs))) + list(range(r % len(runs))):
                times[k].append(frame0(a.binary, runs[k][0], scene, runs[k][1]))
        med = [statistics.median(t) for t in times]
        if a.against:
            ratios = " | ".join(f"{med[2 * i] / med[2 * i + 1]:.2f}" for i in range(len(algos)))
        else:
            ratios = f"{med[0] / min(med):.2f}"
        rows.append(f"| `{scene}` | " + " | ".join(f"{m:.3f}" for m in med) + f" | {ratios} |")
    text = "\n".join(rows) + "\n"
    print(text, end="")
    if a.md:
        with open(a.md, "a") as f:
            f.write(text)


if __name__ == "__main__":
    main()
