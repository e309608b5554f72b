#!/usr/bin/env python3
"""A 2D particle simulation whose collisions come from sapling's pairs.

Discs of one radius bounce in a box under gravity. Each step every disc's
bounding square is moved in one call, update() finds the overlapping
squares, an exact distance test keeps the touching discs, and their elastic
impulses are applied with numpy: no Python loop per particle or per pair.
Saves a figure (final positions coloured by collision count, and the pairs
per step) when matplotlib is installed (Debian: python3-matplotlib).

    PYTHONPATH=build/python python3 python/examples/particles.py --n 20000 --steps 200 --out particles.png
"""

import argparse
import time

import numpy as np

import sapling


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5000, help="particles")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--radius", type=float, default=0.0, help="disc radius in the box [0, 1]^2 (0: discs cover 20%%)")
    ap.add_argument("--algo", default="unisize", help="sapling algorithm (unisize: boxes of one size)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="particles.png", help="figure to write")
    args = ap.parse_args()

    rng = np.random.default_rng(args.seed)
    n = args.n
    r = np.float32(args.radius or np.sqrt(0.2 / (np.pi * n)))
    dt, gravity, restitution = np.float32(0.002), np.float32(-0.5), np.float32(0.9)
    pos = rng.uniform(r, 1 - r, size=(n, 2)).astype(np.float32)
    vel = rng.normal(0, 0.3, size=(n, 2)).astype(np.float32)
    ids = np.arange(n, dtype=np.uint32)
    hits = np.zeros(n, np.int64)

    bp = sapling.BroadPhase(args.algo, dims=2, threads=args.threads)
    bp.add(ids, np.concatenate([pos - r, pos + r], axis=1))
    bp.update()
    pairs_per_step, contacts_per_step = [], []
    broad_time = 0.0
    start = time.perf_counter()
    for _ in range(args.steps):
        vel[:, 1] += gravity * dt
        pos += vel * dt
        # walls: reflect and clamp
        for k in range(2):
            low, high = pos[:, k] < r, pos[:, k] > 1 - r
            vel[low | high, k] *= -1
            pos[:, k] = np.clip(pos[:, k], r, 1 - r)

        t0 = time.perf_counter()
        bp.move(ids, np.concatenate([pos - r, pos + r], axis=1))
        bp.update()
        pairs = bp.pairs()  # overlapping squares
        broad_time += time.perf_counter() - t0

        i, j = pairs[:, 0].astype(np.intp), pairs[:, 1].astype(np.intp)
        d = pos[j] - pos[i]
        dist2 = np.einsum("ij,ij->i", d, d)
        touching = (dist2 <= (2 * r) ** 2) & (dist2 > 0)
        i, j, d, dist2 = i[touching], j[touching], d[touching], dist2[touching]
        normal = d / np.sqrt(dist2)[:, None]
        approach = np.einsum("ij,ij->i", vel[j] - vel[i], normal)
        closing = approach < 0  # equal masses: exchange the normal velocity, less restitution
        impulse = ((1 + restitution) / 2 * approach[closing])[:, None] * normal[closing]
        np.add.at(vel, i[closing], impulse)
        np.add.at(vel, j[closing], -impulse)
        # push the discs apart, half the overlap each
        push = ((2 * r - np.sqrt(dist2)) / 2)[:, None] * normal
        np.add.at(pos, i, -push)
        np.add.at(pos, j, push)
        np.clip(pos, r, 1 - r, out=pos)
        np.add.at(hits, i, 1)
        np.add.at(hits, j, 1)
        pairs_per_step.append(len(pairs))
        contacts_per_step.append(int(touching.sum()))
    total = time.perf_counter() - start
    print(f"{n} particles, {args.steps} steps in {total:.2f} s; sapling move+update+pairs {broad_time:.2f} s "
          f"({1e3 * broad_time / args.steps:.2f} ms/step); {np.mean(pairs_per_step):.0f} box pairs, "
          f"{np.mean(contacts_per_step):.0f} contacts per step")

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (Debian: python3-matplotlib): no figure")
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5.5))
    points = left.scatter(pos[:, 0], pos[:, 1], c=hits, s=max(0.5, (72 * 5.5 * float(r)) ** 2), cmap="viridis")
    left.set(xlim=(0, 1), ylim=(0, 1), aspect="equal", title=f"{n} particles after {args.steps} steps")
    fig.colorbar(points, ax=left, label="collisions")
    right.plot(pairs_per_step, label="overlapping squares (sapling pairs)")
    right.plot(contacts_per_step, label="touching discs")
    right.set(xlabel="step", ylabel="pairs", title=f"pairs per step ({args.algo})")
    right.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
