#!/usr/bin/env python3
"""The Python binding's overhead, and the scipy alternative, on the same scenes.

1. tracy-100k (W2 tracy: 100k unit cubes, 10k moving, 500 in and 500 out per
   frame), written by `sapling gen` and read back: each step as a Python
   program runs it (remove, move, add with numpy arrays, update() returning
   the created and deleted pairs as arrays), against the same steps in a C++
   loop inside the module (replay(report="time"): staging and update() timed
   in C++), rounds interleaved in one process.
2. complete_pairs on 1M boxes (W3 allmoving3d, mixed sizes): the Python call
   (argument checks, the box validity pass, the array wrapping included),
   from float32 and from float64 (the exactness check and conversion
   included), against sapling::complete_pairs timed in C++ on the same
   array (_time_complete_pairs), rounds interleaved.
3. What a Python user would write otherwise: scipy.spatial.cKDTree over the
   box centres, query_pairs with the Chebyshev radius of the largest boxes,
   then the exact box test in numpy; per tracy frame (the live boxes kept in
   numpy arrays by id) and on the 1M boxes. Its pairs are checked equal to
   sapling's.

    PYTHONPATH=build/python python3 bench/python_bench.py [--rounds 7] [--md out.md]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import sapling
from sapling import _sapling

try:
    from scipy.spatial import cKDTree
except ImportError:  # Debian: python3-scipy
    cKDTree = None


def python_steps(frames, algorithm):
    """Each frame's seconds, as a Python program drives the broad phase."""
    bp = sapling.BroadPhase(algorithm)
    out = []
    for removed, moved, moved_boxes, added, added_boxes in frames:
        t0 = time.perf_counter()
        bp.remove(removed)
        bp.move(moved, moved_boxes)
        bp.add(added, added_boxes)
        created, deleted = bp.update()
        out.append(time.perf_counter() - t0)
    return np.array(out), bp


def kdtree_pairs(boxes):
    """Overlapping pairs (i < j) of float32 boxes via cKDTree on centres + exact filter."""
    lo, hi = boxes[:, :3].astype(np.float64), boxes[:, 3:].astype(np.float64)
    centres, half = (lo + hi) / 2, (hi - lo) / 2
    radius = 2 * float(half.max()) * (1 + 1e-9)  # |ci - cj|_inf <= hi + hj <= 2 max h
    candidates = cKDTree(centres).query_pairs(radius, p=np.inf, output_type="ndarray")
    i, j = candidates[:, 0], candidates[:, 1]
    keep = np.all((boxes[i, :3] <= boxes[j, 3:]) & (boxes[j, :3] <= boxes[i, 3:]), axis=1)
    return candidates[keep]


def kdtree_steps(frames, capacity):
    """Each frame's seconds for the scipy program: update arrays by id, gather the live boxes, find the pairs."""
    state = np.zeros((capacity, 6), np.float32)
    live = np.zeros(capacity, bool)
    out, pairs = [], None
    for removed, moved, moved_boxes, added, added_boxes in frames:
        t0 = time.perf_counter()
        live[removed] = False
        state[moved] = moved_boxes
        state[added] = added_boxes
        live[added] = True
        ids = np.flatnonzero(live)
        ij = kdtree_pairs(state[ids])
        pairs = np.sort(ids[ij], axis=1)
        out.append(time.perf_counter() - t0)
    return np.array(out), pairs


def ms(x):
    return f"{1e3 * x:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", default=os.path.join("build", "tools", "sapling"))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--frames", type=int, default=31, help="tracy frames (frame 0 adds every box)")
    ap.add_argument("--algo", default="sap")
    ap.add_argument("--md", help="also write the tables here")
    args = ap.parse_args()
    lines = []

    def say(text=""):
        print(text, flush=True)
        lines.append(text)

    work = tempfile.mkdtemp(prefix="sapling-python-bench-")
    tracy_path = os.path.join(work, "tracy.trace")
    big_path = os.path.join(work, "allmoving3d.trace")
    subprocess.run([args.cli, "gen", "tracy", "--n", "100000", "--frames", str(args.frames), "--out", tracy_path],
                   check=True)
    subprocess.run([args.cli, "gen", "allmoving3d", "--n", "1000000", "--frames", "1", "--out", big_path], check=True)

    # 1. tracy-100k, persistent
    trace = sapling.read_trace(tracy_path)
    frames = []
    for k in range(len(trace)):
        f = trace[k]
        frames.append((f["removed"], f["moved"], f["moved_boxes"], f["added"], f["added_boxes"]))
    py_med, cpp_med, py_mean, cpp_mean, ratios, py_all, cpp_all = [], [], [], [], [], [], []
    for _ in range(args.rounds):
        py, bp = python_steps(frames, args.algo)
        cpp = sapling.replay(trace, args.algo, report="time")
        py_med.append(np.median(py[1:]))
        cpp_med.append(np.median(cpp[1:]))
        py_mean.append(py[1:].mean())
        cpp_mean.append(cpp[1:].mean())
        ratios.append(py[1:].sum() / cpp[1:].sum())
        py_all.append(py[1:])
        cpp_all.append(cpp[1:])
    # Each step's best time over the rounds: what the step costs without
    # interference from the machine's other work.
    py_best, cpp_best = np.min(py_all, axis=0), np.min(cpp_all, axis=0)
    hashes = sapling.replay(trace, args.algo, report="hash")
    assert sapling.pair_set_hash(bp.sorted_pairs()) == hashes[-1], "Python and C++ disagree"
    say(f"## tracy-100k, `{args.algo}`, steps 1..{len(trace) - 1} (ms per step; median of {args.rounds} rounds)")
    say()
    say("| driver | median step | mean step | sum of each step's best, per step |")
    say("|---|---:|---:|---:|")
    say(f"| C++ loop (replay, report='time') | {ms(statistics.median(cpp_med))} | "
        f"{ms(statistics.median(cpp_mean))} | {ms(cpp_best.mean())} |")
    say(f"| Python: remove, move, add, update() -> arrays | {ms(statistics.median(py_med))} | "
        f"{ms(statistics.median(py_mean))} | {ms(py_best.mean())} |")
    say()
    say(f"Python / C++: {py_best.sum() / cpp_best.sum():.3f} on each step's best time over the rounds; "
        f"per round (sum of the steps) median {statistics.median(ratios):.3f}, "
        f"rounds {', '.join(f'{r:.3f}' for r in ratios)}. Pairs at the last frame: {len(bp.pairs())}, "
        f"identical to C++ (pair-set hash).")
    say()

    if cKDTree is not None:
        capacity = int(max(int(f[3].max()) if len(f[3]) else 0 for f in frames)) + 1
        kd_rounds = max(1, min(3, args.rounds))
        kd_med = []
        for _ in range(kd_rounds):
            kd, kd_pairs = kdtree_steps(frames, capacity)
            kd_med.append(np.median(kd[1:]))
        mine = bp.sorted_pairs()
        order = np.lexsort((kd_pairs[:, 1], kd_pairs[:, 0]))
        assert np.array_equal(kd_pairs[order].astype(np.uint32), mine), "cKDTree pairs differ"
        say(f"scipy cKDTree per step (rebuild over the live boxes, query_pairs, exact filter; median of "
            f"{kd_rounds} rounds): {ms(statistics.median(kd_med))} ms, "
            f"{statistics.median(kd_med) / statistics.median(py_med):.1f}x sapling from Python; same pairs.")
        say()

    # 2. complete_pairs, 1M boxes
    big = sapling.read_trace(big_path)[0]["added_boxes"]
    big64 = big.astype(np.float64)
    one, two = "C++ sapling::complete_pairs", "C++ BoxPruner, 2 threads"
    rows = {one: [], "Python complete_pairs(float32)": [], "Python complete_pairs(float64), converted exactly": [],
            two: [], "Python BoxPruner(threads=2).complete(float32)": []}
    reference = {one: one, "Python complete_pairs(float32)": one,
                 "Python complete_pairs(float64), converted exactly": one, two: two,
                 "Python BoxPruner(threads=2).complete(float32)": two}
    count = None
    pruner2 = sapling.BoxPruner(threads=2)
    pruner2.complete(big)  # warm, as the C++ pruner is after its first repeat
    for _ in range(args.rounds):
        seconds, count = _sapling._time_complete_pairs(big, 1, 1)
        rows["C++ sapling::complete_pairs"].append(seconds[0])
        t0 = time.perf_counter()
        pairs = sapling.complete_pairs(big)
        rows["Python complete_pairs(float32)"].append(time.perf_counter() - t0)
        assert len(pairs) == count
        del pairs
        t0 = time.perf_counter()
        pairs = sapling.complete_pairs(big64)
        rows["Python complete_pairs(float64), converted exactly"].append(time.perf_counter() - t0)
        del pairs
        seconds, _ = _sapling._time_complete_pairs(big, 2, 2)
        rows[two].append(seconds[1])
        t0 = time.perf_counter()
        pairs = pruner2.complete(big)
        rows["Python BoxPruner(threads=2).complete(float32)"].append(time.perf_counter() - t0)
        del pairs
    base = statistics.median(rows[one])
    say(f"## complete_pairs, allmoving3d 1M boxes ({count} pairs; ms, median of {args.rounds} rounds)")
    say()
    say("| call | median | min | median / C++'s | min / C++'s |")
    say("|---|---:|---:|---:|---:|")
    for name, values in rows.items():
        ref = rows[reference[name]]
        say(f"| {name} | {ms(statistics.median(values))} | {ms(min(values))} | "
            f"{statistics.median(values) / statistics.median(ref):.3f} | {min(values) / min(ref):.3f} |")
    say()
    if cKDTree is not None:
        t0 = time.perf_counter()
        kd = kdtree_pairs(big)
        kd_time = time.perf_counter() - t0
        assert len(kd) == count, "cKDTree pairs differ"
        say(f"scipy cKDTree on the 1M centres + query_pairs + exact filter: {ms(kd_time)} ms (one run), "
            f"{kd_time / base:.1f}x sapling; same {len(kd)} pairs.")
        say()
    say(f"Python {sys.version.split()[0]}, numpy {np.__version__}"
        + (f", scipy {__import__('scipy').__version__}" if cKDTree is not None else "")
        + f", {os.cpu_count()} CPUs.")
    if args.md:
        with open(args.md, "w") as out:
            out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
