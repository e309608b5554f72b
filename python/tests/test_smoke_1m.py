"""A million boxes through the one-shot queries and the broad phase; the
GIL released during the work; one broad phase shared by threads."""

import threading
import time

import numpy as np
import pytest

import sapling
from conftest import as_set, brute_complete, sort_pairs

N = 1_000_000


@pytest.fixture(scope="module")
def million():
    rng = np.random.default_rng(1)
    side = 1000.0
    lo = rng.uniform(0, side, size=(N, 3)).astype(np.float32)
    size = rng.uniform(0.5, 12.0, size=(N, 3)).astype(np.float32)
    return np.concatenate([lo, lo + size], axis=1)


def restricted(pairs, subset):
    """The pairs among `subset` (sorted indices), renumbered into it."""
    pos = np.full(N, -1, np.int64)
    pos[subset] = np.arange(len(subset))
    i, j = pos[pairs[:, 0]], pos[pairs[:, 1]]
    keep = (i >= 0) & (j >= 0)
    p = np.stack([np.minimum(i, j), np.maximum(i, j)], axis=1)[keep]
    return sort_pairs(p)


def test_complete_pairs_million(million):
    pairs = sapling.complete_pairs(million, threads=2)
    assert len(pairs) > N // 10
    assert np.all(pairs[:, 0] < pairs[:, 1])
    assert np.array_equal(pairs, sapling.complete_pairs(million))  # any thread count, same array
    subset = np.sort(np.random.default_rng(2).choice(N, 3000, replace=False))
    assert np.array_equal(restricted(pairs, subset), brute_complete(million[subset]))


def test_broad_phase_million(million):
    ids = np.arange(N, dtype=np.uint32)
    bp = sapling.BroadPhase("sap", threads=2)
    bp.add(ids, million)
    created, deleted = bp.update()
    assert len(bp) == N and len(deleted) == 0
    one_shot = sapling.complete_pairs(million)
    assert np.array_equal(created, sort_pairs(one_shot))  # ids are the indices
    moved = million.copy()
    moved[::10] += np.float32(3.0)
    bp.move(ids[::10], moved[::10])
    created, deleted = bp.update()
    now = sort_pairs(sapling.complete_pairs(moved))
    assert np.array_equal(bp.sorted_pairs(), now)
    before = set(map(tuple, sort_pairs(one_shot).tolist()))
    after = set(map(tuple, now.tolist()))
    assert as_set(created) == after - before and as_set(deleted) == before - after


def test_gil_is_released(million):
    """The main thread keeps running while another computes a million boxes' pairs."""
    done = threading.Event()
    span = {}

    def work():
        span["start"] = time.perf_counter()
        sapling.complete_pairs(million)
        span["end"] = time.perf_counter()
        done.set()

    stamps = []
    t = threading.Thread(target=work)
    t.start()
    while not done.is_set():
        stamps.append(time.perf_counter())
    t.join()
    inside = [s for s in stamps if span["start"] <= s <= span["end"]]
    duration = span["end"] - span["start"]
    # Held, the GIL would stop the main thread for the whole call; released,
    # it runs throughout, but for what a busy machine's scheduler takes.
    assert len(inside) > 10, f"main thread ran {len(inside)} times in {duration:.3f} s"
    gaps = np.diff([span["start"], *inside, span["end"]])
    assert gaps.max() < 0.9 * duration


def test_one_broad_phase_from_many_threads():
    rng = np.random.default_rng(4)
    bp = sapling.BroadPhase("box-pruning", threads=2)
    n_threads, per = 4, 20_000
    boxes = [np.concatenate([lo, lo + np.float32(2)], axis=1)
             for lo in (rng.uniform(0, 300, size=(per, 3)).astype(np.float32) for _ in range(n_threads))]
    errors = []

    def stage(k):
        try:
            bp.add(np.arange(k * per, (k + 1) * per, dtype=np.uint32), boxes[k])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=stage, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    bp.update()
    everything = np.concatenate(boxes)
    assert np.array_equal(bp.sorted_pairs(), sort_pairs(sapling.complete_pairs(everything)))
