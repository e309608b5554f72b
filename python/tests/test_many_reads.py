"""Batched rays and queries, and reads from many Python threads at once."""

import threading

import numpy as np
import pytest

import sapling
from conftest import random_boxes


def started(algorithm, dims, rng, threads=2, n=1500):
    bp = sapling.BroadPhase(algorithm, dims=dims, threads=threads)
    boxes = random_boxes(rng, n, dims, extent=60)
    bp.add(np.arange(n, dtype=np.uint32), boxes)
    bp.update()
    return bp


def random_rays(rng, count, dims):
    origins = rng.uniform(-5, 65, size=(count, dims)).astype(np.float32)
    directions = rng.uniform(-1, 1, size=(count, dims)).astype(np.float32)
    directions[:, 0] += np.float32(0.01)
    return origins, directions


@pytest.mark.parametrize("algorithm", ["sap", "multi-sap", "auto"])
@pytest.mark.parametrize("dims", [2, 3])
def test_ray_cast_many_answers_as_single_rays(algorithm, dims, rng):
    bp = started(algorithm, dims, rng)
    origins, directions = random_rays(rng, 300, dims)
    max_t = rng.uniform(1, 80, size=300).astype(np.float32)
    ids, t, offsets = bp.ray_cast_many(origins, directions, max_t=max_t)
    first_ids, first_t, first_offsets = bp.ray_cast_closest_many(origins, directions, max_t=max_t)
    assert len(offsets) == len(first_offsets) == 301
    assert offsets[-1] > 300  # rays that hit several boxes
    for i in range(300):
        one_ids, one_t = bp.ray_cast(origins[i], directions[i], max_t=max_t[i])
        assert np.array_equal(ids[offsets[i] : offsets[i + 1]], one_ids)
        assert np.array_equal(t[offsets[i] : offsets[i + 1]], one_t)
        closest = bp.ray_cast_closest(origins[i], directions[i], max_t=max_t[i])
        got = first_ids[first_offsets[i] : first_offsets[i + 1]]
        assert (closest is None and len(got) == 0) or (len(got) == 1 and (got[0], first_t[first_offsets[i]]) == closest)
    # one max_t for every ray
    ids_inf, _, offsets_inf = bp.ray_cast_many(origins, directions)
    assert offsets_inf[-1] >= offsets[-1]


def test_ray_cast_many_refuses_by_index(rng):
    bp = started("sap", 3, rng)
    origins, directions = random_rays(rng, 5, 3)
    directions[3] = 0
    with pytest.raises(sapling.Error, match="ray_cast_many: ray 3: invalid ray: the direction is zero"):
        bp.ray_cast_many(origins, directions)
    with pytest.raises(sapling.Error, match="5 origins but 4 directions"):
        bp.ray_cast_many(origins, directions[:4])
    with pytest.raises(sapling.Error, match=r"shape \(n, 3\)"):
        bp.ray_cast_many(origins[:, :2], directions)
    with pytest.raises(sapling.Error, match="max_t must be one number or one per ray"):
        bp.ray_cast_many(origins, directions, max_t=np.ones(4, np.float32))
    ids, t, offsets = bp.ray_cast_many(np.zeros(0, np.float32), np.zeros(0, np.float32))
    assert len(ids) == len(t) == 0 and list(offsets) == [0]


def test_threads_read_at_once(rng):
    """Python threads query and cast together (the lock is shared by reads)."""
    bp = started("sap", 3, rng, threads=1)
    queries = random_boxes(rng, 64, 3, extent=60)
    origins, directions = random_rays(rng, 64, 3)
    want_q = bp.query_many(queries)
    want_r = bp.ray_cast_many(origins, directions)
    failures = []

    def reader():
        for _ in range(20):
            got_q = bp.query_many(queries)
            got_r = bp.ray_cast_many(origins, directions)
            if not all(np.array_equal(a, b) for a, b in zip(got_q + got_r, want_q + want_r)):
                failures.append(1)

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not failures
