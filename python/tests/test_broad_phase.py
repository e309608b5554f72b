"""BroadPhase against a numpy brute force and against the C++ loop (replay)."""

import numpy as np
import pytest

import sapling
from conftest import ALGORITHMS, as_set, brute_id_pairs, random_boxes, sort_pairs


def world_frames(rng, dims, frames, n, unisize=False):
    """Random frames of (removed, moved, moved_boxes, added, added_boxes)."""
    live = {}
    next_id = 0
    out = []

    def boxes(count):
        if unisize:
            lo = rng.uniform(0, 60, size=(count, dims)).astype(np.float32)
            return np.concatenate([lo, lo + np.float32(4)], axis=1)
        return random_boxes(rng, count, dims, extent=60)

    for f in range(frames):
        ids = np.array(sorted(live), dtype=np.uint32)
        rng.shuffle(ids)
        k = len(ids)
        removed = ids[: k // 10] if f else ids[:0]
        moved = ids[k // 10 : k // 10 + k // 3] if f else ids[:0]
        count = n if f == 0 else int(rng.integers(0, n // 8 + 1))
        # ids spread over the whole uint32 range, 0 and 2^32-1 included
        added = np.arange(next_id, next_id + count, dtype=np.uint64) * 2654435761 % (2**32)
        if f == 0:
            added[:2] = [0, 2**32 - 1]
        added = added.astype(np.uint32)
        next_id += count
        added = np.array([a for a in added if a not in live], dtype=np.uint32)
        moved_boxes, added_boxes = boxes(len(moved)), boxes(len(added))
        for i in removed:
            del live[int(i)]
        for i, b in zip(moved, moved_boxes):
            live[int(i)] = b
        for i, b in zip(added, added_boxes):
            live[int(i)] = b
        out.append((removed, moved, moved_boxes, added, added_boxes, dict(live)))
    return out


def expected_pairs(live, dims):
    if not live:
        return np.empty((0, 2), np.uint32)
    ids = np.array(list(live), dtype=np.uint32)
    boxes = np.array([live[int(i)] for i in ids], dtype=np.float32).reshape(-1, 2 * dims)
    return brute_id_pairs(ids, boxes)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("threads", [1, 3])
def test_random_world_matches_brute_force(algorithm, dims, threads, rng):
    bp = sapling.BroadPhase(algorithm, dims=dims, threads=threads)
    assert bp.algorithm == algorithm and bp.dims == dims and 1 <= bp.threads <= threads
    previous = set()
    for f, (removed, moved, moved_boxes, added, added_boxes, live) in enumerate(
        world_frames(rng, dims, frames=10, n=400, unisize=algorithm == "unisize")
    ):
        bp.remove(removed)
        bp.move(moved, moved_boxes)
        bp.add(added, added_boxes)
        created, deleted = bp.update()
        assert created.dtype == np.uint32 and created.shape[1:] == (2,)
        assert deleted.dtype == np.uint32 and deleted.shape[1:] == (2,)
        expected = expected_pairs(live, dims)
        now = as_set(expected)
        # deltas sorted by (a, b), a < b, and exactly the set differences
        assert np.array_equal(created, sort_pairs(created)) and np.all(created[:, 0] < created[:, 1])
        assert np.array_equal(deleted, sort_pairs(deleted))
        assert as_set(created) == now - previous, f"frame {f}"
        assert as_set(deleted) == previous - now, f"frame {f}"
        assert np.array_equal(bp.sorted_pairs(), expected)
        assert as_set(bp.pairs()) == now and len(bp.pairs()) == bp.pair_count == len(now)
        assert len(bp) == len(live) and bp.frame == f + 1
        previous = now
    assert bp.validate()
    assert bp.memory_bytes >= bp.pair_memory_bytes > 0


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_python_loop_equals_cpp_replay(algorithm, rng):
    """The Python calls give byte for byte what the C++ loop gives."""
    dims = 3
    trace = sapling.Trace(dims)
    bp = sapling.BroadPhase(algorithm, dims=dims)
    deltas = []
    for removed, moved, moved_boxes, added, added_boxes, _ in world_frames(
        rng, dims, frames=8, n=500, unisize=algorithm == "unisize"
    ):
        trace.append(removed=removed, moved=moved, moved_boxes=moved_boxes, added=added, added_boxes=added_boxes)
        bp.remove(removed)
        bp.move(moved, moved_boxes)
        bp.add(added, added_boxes)
        deltas.append(bp.update())
    replayed = sapling.replay(trace, algorithm)
    assert len(replayed) == len(deltas)
    for (c1, d1), (c2, d2) in zip(deltas, replayed):
        assert np.array_equal(c1, c2) and np.array_equal(d1, d2)
    hashes = sapling.replay(trace, algorithm, report="hash")
    assert hashes[-1] == sapling.pair_set_hash(bp.sorted_pairs())
    pairs = sapling.replay(trace, "brute", report="pairs")
    assert np.array_equal(pairs[-1], bp.sorted_pairs())


def test_same_output_on_any_thread_count(rng):
    boxes = random_boxes(rng, 3000, 3, extent=80)
    ids = np.arange(3000, dtype=np.uint32)
    results = []
    for threads in [1, 2, 4, 0]:
        bp = sapling.BroadPhase("box-pruning", threads=threads)
        bp.add(ids, boxes)
        created, _ = bp.update()
        results.append((created, bp.pairs()))
    for created, pairs in results[1:]:
        assert np.array_equal(created, results[0][0])
        assert np.array_equal(pairs, results[0][1])


def test_touching_and_infinite_boxes_overlap():
    bp = sapling.BroadPhase("sap", dims=2)
    inf = np.inf
    boxes = np.array([[0, 0, 1, 1], [1, 1, 2, 2], [-inf, 5, inf, 5], [3, 5, 3, 5], [-0.0, -0.0, 0, 0]], np.float32)
    bp.add(np.arange(5, dtype=np.uint32), boxes)
    created, _ = bp.update()
    assert as_set(created) == {(0, 1), (2, 3), (0, 4)}


def test_empty_frame_and_empty_batches():
    bp = sapling.BroadPhase()
    bp.add([], np.empty((0, 6), np.float32))
    bp.remove([])
    created, deleted = bp.update()
    assert created.shape == (0, 2) and deleted.shape == (0, 2)
    assert bp.pairs().shape == (0, 2) and bp.sorted_pairs().shape == (0, 2)


def test_boxes_as_n_2_dims_and_lists():
    bp = sapling.BroadPhase(dims=3)
    bp.add([1, 2], [[[0, 0, 0], [1, 1, 1]], [[1, 1, 1], [2, 2, 2]]])
    created, _ = bp.update()
    assert as_set(created) == {(1, 2)}


def test_results_are_owned_copies():
    bp = sapling.BroadPhase()
    bp.add([1, 2], np.array([[0, 0, 0, 1, 1, 1]] * 2, np.float32))
    created, _ = bp.update()
    pairs = bp.pairs()
    bp.remove([1])
    bp.update()
    assert as_set(created) == {(1, 2)} and as_set(pairs) == {(1, 2)}
    assert created.flags.writeable and created.flags.c_contiguous


def test_max_pairs_refuses_a_frame():
    bp = sapling.BroadPhase("sap", max_pairs=2)
    bp.add(np.arange(3, dtype=np.uint32), np.zeros((3, 6), np.float32))
    with pytest.raises(sapling.Error, match="max_pairs") as e:
        bp.update()
    assert e.value.code == "pair_budget"
    assert len(bp) == 0 and bp.pair_count == 0  # the frame's operations were dropped


def test_repr():
    bp = sapling.BroadPhase("sort-sweep", dims=2)
    bp.add([1, 2], np.zeros((2, 4), np.float32))
    bp.update()
    assert repr(bp) == "<sapling.BroadPhase 'sort-sweep' dims=2 threads=1: 2 objects, 1 pairs, frame 1>"
    assert repr(sapling.Trace(2)) == "<sapling.Trace dims=2: 0 frames>"


def test_algorithms_listed():
    infos = sapling.algorithms()
    names = [a.name for a in infos]
    for name in ["brute", "sort-sweep", "sap", "box-pruning", "unisize", "dual-axis"]:
        assert name in names
    assert all(isinstance(a.description, str) and a.description for a in infos)
    assert {a.name for a in infos if not a.accepts_any_box} == {"unisize"}


@pytest.mark.parametrize("algorithm", ["multi-sap", "octree", "sap"])
@pytest.mark.parametrize("dims", [2, 3])
def test_region_queries_match_brute_force(algorithm, dims, rng):
    bp = sapling.BroadPhase(algorithm, dims=dims)
    boxes = random_boxes(rng, 2000, dims, extent=60)
    ids = np.arange(2000, dtype=np.uint32) * 7
    bp.add(ids, boxes)
    bp.update()
    queries = random_boxes(rng, 50, dims, extent=60)
    queries[:, dims:] += np.float32(5)
    got, offsets = bp.query_many(queries)
    assert len(offsets) == len(queries) + 1
    for i, q in enumerate(queries):
        hit = np.all(boxes[:, :dims] <= q[dims:], axis=1) & np.all(q[:dims] <= boxes[:, dims:], axis=1)
        expected = np.sort(ids[hit])
        assert np.array_equal(got[offsets[i] : offsets[i + 1]], expected)
        assert np.array_equal(bp.query(q), expected)
    with pytest.raises(sapling.Error, match="query box 0"):
        bp.query(np.array([1, 1, 1, 0, 0, 0][: 2 * dims], dtype=np.float32))
