#!/usr/bin/env python3
"""The 10M-box one-shot join: one process against sapling.dask on a
two-worker LocalCluster, on the same boxes, pairs checked identical.

The scene is W3 allmoving3d's first frame made in numpy (docs/scenarios.md):
each box's three extents log-uniform in [0.5, 4] (x, y, z apart), placed
uniformly in a cube whose side gives the boxes `--density` of its volume
(0.2 by default: about 1.1 pairs a box). Chunk k of `--chunk-rows` rows is
drawn from seed (seed, k), so the workers make their own chunks (the boxes
never pass through this process on the Dask side) and this process makes
the same array for the one-process side.

  one process  sapling.complete_pairs(boxes) on the whole float32 array,
               one thread: the join alone; then the same pairs sorted
               (sapling.dask.sort_pairs), the order sapling.dask returns.
  dask         sapling.dask.complete_pairs(boxes) with the boxes persisted
               in the two workers (1 thread each): survey, cells, split,
               pair, and the cells' sorted pairs merged into one numpy
               array in this process; then with the cells given (no
               survey); with sort=False too (the pairs in the cells' order,
               as the one process's are in its sweep's, checked equal as
               sets); and with output="dask" persisted in the workers (one
               merge task per range of i, no gathering).

Each figure is the median of --repeats rounds, the two sides interleaved,
with wall seconds and CPU seconds (time.process_time of this process,
which hosts the scheduler, plus that of each worker process, all threads:
tasks, transfers, event loops). --keep-heap starts the workers with glibc
malloc keeping freed memory (distributed's default, MALLOC_TRIM_THRESHOLD_
=65536, hands it back at once, so each task's large arrays are fresh pages
that fault in again). Each round ends with one more default run, untimed,
whose task stream gives the compute seconds per kind of task and the
transfer seconds (summed over both workers).

    PYTHONPATH=build/python /usr/bin/python3 bench/dask_join.py [--n 10000000] [--repeats 3] [--keep-heap]
"""

import argparse
import collections
import os
import statistics
import sys
import time

# bench/distributed.py (sapling-mpi's bench) would shadow Dask's distributed.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]

import numpy as np

import sapling
import sapling.dask as sd


def scene_chunk(rows, chunk_index, seed, side):
    """Chunk chunk_index of the scene: `rows` boxes, float32 (rows, 6)."""
    rng = np.random.default_rng((seed, chunk_index))
    extents = 0.5 * np.exp2(3 * rng.random((rows, 3)))
    lo = rng.random((rows, 3)) * (side - extents)
    return np.concatenate([lo, lo + extents], axis=1).astype(np.float32)


def scene_side(n, density):
    """The cube's side for n boxes filling `density` of its volume: the mean
    box volume is (E[extent])^3, E[extent] = 0.5 * 7 / (3 ln 2)."""
    mean_extent = 0.5 * 7 / (3 * np.log(2))
    return float((n * mean_extent**3 / density) ** (1 / 3))


def chunk_sizes(n, chunk_rows):
    return [min(chunk_rows, n - start) for start in range(0, n, chunk_rows)]


def timed(function):
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def task_seconds(stream):
    """Compute seconds per kind of task and transfer seconds, from a task stream."""
    compute = collections.Counter()
    transfer = 0.0
    for task in stream:
        kind = str(task["key"]).strip("('\"").split("-")[0]
        for span in task["startstops"]:
            seconds = span["stop"] - span["start"]
            if span["action"] == "compute":
                compute[kind] += seconds
            elif span["action"] == "transfer":
                transfer += seconds
    return compute, transfer


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--density", type=float, default=0.2)
    parser.add_argument("--chunk-rows", type=int, default=1 << 20)
    parser.add_argument("--cells", type=int, default=None, help="sapling.dask's default unless given")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--keep-heap",
        action="store_true",
        help="workers' glibc malloc keeps freed memory (MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_ high) "
        "instead of distributed's default MALLOC_TRIM_THRESHOLD_=65536: fewer page faults (docs/dask.md)",
    )
    args = parser.parse_args()

    import dask
    import dask.array as da
    import distributed

    side = scene_side(args.n, args.density)
    sizes = chunk_sizes(args.n, args.chunk_rows)
    print(f"scene: {args.n} boxes, allmoving3d extents, density {args.density}, side {side:.1f}, "
          f"{len(sizes)} chunks of {args.chunk_rows} rows; load average {os.getloadavg()[0]:.2f}")

    boxes = np.concatenate([scene_chunk(rows, k, args.seed, side) for k, rows in enumerate(sizes)])

    if args.keep_heap:
        environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}))
        environ.update(MALLOC_MMAP_THRESHOLD_=1 << 30, MALLOC_TRIM_THRESHOLD_=1 << 32)
        dask.config.set({"distributed.nanny.pre-spawn-environ": environ})
    print(f"workers' malloc environment: {dask.config.get('distributed.nanny.pre-spawn-environ', {})}")

    with distributed.LocalCluster(
        n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster, distributed.Client(cluster) as client:
        made = [
            da.from_delayed(dask.delayed(scene_chunk)(rows, k, args.seed, side), (rows, 6), np.float32)
            for k, rows in enumerate(sizes)
        ]
        spread = da.concatenate(made).persist()
        distributed.wait(spread)
        cells = sd.partition(spread, args.cells)
        print(f"cells: {len(cells)}; workers: {args.workers} x 1 thread")

        rounds = collections.defaultdict(list)
        cpu = collections.defaultdict(list)

        def measured(name, function):
            """Runs function; records its wall seconds and the CPU seconds it
            took in this process (the caller and the scheduler) and in every
            worker process (all their threads: tasks, transfers, event loop)."""
            before = time.process_time(), client.run(time.process_time)
            seconds, result = timed(function)
            after = time.process_time(), client.run(time.process_time)
            rounds[name].append(seconds)
            cpu[name].append(after[0] - before[0] + sum(after[1][w] - before[1][w] for w in after[1]))
            return result

        reference = None
        for round_index in range(args.repeats):
            seconds, pairs = timed(lambda: sapling.complete_pairs(boxes))
            rounds["one process: complete_pairs"].append(seconds)
            cpu["one process: complete_pairs"].append(seconds)
            seconds, ordered = timed(lambda: sd.sort_pairs(pairs))
            rounds["one process: sort_pairs of it"].append(seconds)
            cpu["one process: sort_pairs of it"].append(seconds)
            del pairs
            if reference is None:
                reference = ordered
            del ordered

            got = measured("dask: complete_pairs -> numpy", lambda: sd.complete_pairs(spread, cells=args.cells))
            assert np.array_equal(got, reference), "sapling.dask's pairs differ from complete_pairs'"
            del got

            got = measured("dask: cells given -> numpy", lambda: sd.complete_pairs(spread, cells=cells))
            assert np.array_equal(got, reference), "sapling.dask's pairs differ from complete_pairs'"
            del got

            unsorted = measured(
                "dask: cells given, sort=False -> numpy", lambda: sd.complete_pairs(spread, cells=cells, sort=False)
            )
            assert len(unsorted) == len(reference)
            if round_index == 0:
                assert np.array_equal(sd.sort_pairs(unsorted), reference), "unsorted pairs differ"
            del unsorted

            def persisted():
                lazy = sd.complete_pairs(spread, cells=cells, output="dask").persist()
                distributed.wait(lazy)
                return lazy

            lazy = measured("dask: cells given -> dask, persisted", persisted)
            del lazy
            with distributed.get_task_stream(client) as stream:  # an extra run, untimed: recording costs
                sd.complete_pairs(spread, cells=args.cells)
            compute, transfer = task_seconds(stream.data)
            work = ", ".join(f"{kind} {s:.2f}" for kind, s in compute.most_common())
            print(f"round {round_index + 1}: " + ", ".join(f"{k} {v[-1]:.3f}" for k, v in rounds.items()))
            print("  CPU s: " + ", ".join(f"{k} {v[-1]:.2f}" for k, v in cpu.items() if k.startswith("dask")))
            print(f"  task stream (a default run more): compute s {work}; transfer s {transfer:.2f}; "
                  f"load {os.getloadavg()[0]:.2f}")

    print(f"\npairs: {len(reference)} ({len(reference) / args.n:.2f} a box), identical on every round")
    base = statistics.median(rounds["one process: complete_pairs"])
    sorted_base = base + statistics.median(rounds["one process: sort_pairs of it"])
    print(f"\n| median of {args.repeats} | seconds | CPU s | one process / this | one process + sort / this |")
    print("|---|---:|---:|---:|---:|")
    for name, values in rounds.items():
        m = statistics.median(values)
        print(f"| {name} | {m:.3f} | {statistics.median(cpu[name]):.2f} | {base / m:.2f} | {sorted_base / m:.2f} |")


if __name__ == "__main__":
    main()
