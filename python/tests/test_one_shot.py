"""complete_pairs, bipartite_pairs, unisize_pairs and the pruner classes
against the numpy brute force."""

import numpy as np
import pytest

import sapling
from conftest import brute_bipartite, brute_complete, random_boxes, sort_pairs


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("threads", [1, 2, 4])
def test_complete_pairs(dims, threads, rng):
    boxes = random_boxes(rng, 1500, dims, extent=60)
    got = sapling.complete_pairs(boxes, threads=threads)
    assert got.dtype == np.uint32 and got.shape[1:] == (2,)
    assert np.all(got[:, 0] < got[:, 1])
    assert np.array_equal(sort_pairs(got), brute_complete(boxes))
    assert np.array_equal(got, sapling.complete_pairs(boxes))  # same order on any thread count


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("sizes", [(700, 900), (40, 1200), (1200, 40)])
def test_bipartite_pairs(dims, sizes, rng):
    a = random_boxes(rng, sizes[0], dims, extent=60)
    b = random_boxes(rng, sizes[1], dims, extent=60)
    got = sapling.bipartite_pairs(a, b, threads=2)
    assert np.array_equal(sort_pairs(got), brute_bipartite(a, b))
    assert np.array_equal(got, sapling.bipartite_pairs(a, b))


def test_bipartite_dims_must_match(rng):
    with pytest.raises(sapling.Error, match="shape"):
        sapling.bipartite_pairs(random_boxes(rng, 5, 2), random_boxes(rng, 5, 3))


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("threads", [1, 3])
def test_unisize_pairs(dims, threads, rng):
    lo = rng.uniform(0, 50, size=(3000, dims)).astype(np.float32)
    boxes = np.concatenate([lo, lo + np.float32(1.5)], axis=1)
    got = sapling.unisize_pairs(boxes, threads=threads)
    assert np.array_equal(sort_pairs(got), brute_complete(boxes))
    pruner = sapling.UnisizePruner(threads)
    assert np.array_equal(pruner.complete(boxes), got)
    assert np.array_equal(pruner.complete(boxes), got)  # warm buffers, same answer


def test_unisize_refuses_other_sizes(rng):
    lo = rng.uniform(0, 50, size=(100, 3)).astype(np.float32)
    boxes = np.concatenate([lo, lo + np.float32(1)], axis=1)
    boxes[42, 3] += 1
    with pytest.raises(sapling.Error, match="^box 42: unisize") as e:
        sapling.unisize_pairs(boxes)
    assert e.value.code == "unsupported" and e.value.index == 42 and e.value.operation is None


def test_box_pruner_reuse_and_prepared(rng):
    pruner = sapling.BoxPruner(threads=2)
    resting = random_boxes(rng, 4000, 3, extent=100, size=3)
    pruner.prepare(resting)
    assert pruner.prepared_size == 4000
    for _ in range(3):
        query = random_boxes(rng, 300, 3, extent=100, size=3)
        got = pruner.bipartite_prepared(query)
        assert got is not None
        assert np.array_equal(sort_pairs(got), brute_bipartite(query, resting))
        assert np.array_equal(pruner.bipartite(query, resting), sapling.bipartite_pairs(query, resting))
        assert np.array_equal(pruner.complete(query), sapling.complete_pairs(query))
    assert pruner.memory_bytes > 0
    # laid out and paired in one pass: complete()'s pairs, in its order
    assert pruner.prepare(resting) is None
    assert np.array_equal(pruner.prepare(resting, pairs=True), pruner.complete(resting))
    assert pruner.prepared_size == 4000
    # boxes far larger than the grid's cells: declined, None
    huge = np.array([[-1e6, -1e6, -1e6, 1e6, 1e6, 1e6]] * 64, np.float32)
    got = pruner.bipartite_prepared(huge)
    assert got is None or len(got) == 64 * 4000


def test_bipartite_prepared_needs_prepare():
    with pytest.raises(sapling.Error, match="prepare"):
        sapling.BoxPruner().bipartite_prepared(np.zeros((1, 6), np.float32))


def test_empty_inputs():
    assert sapling.complete_pairs(np.empty((0, 6), np.float32)).shape == (0, 2)
    assert sapling.bipartite_pairs(np.empty((0, 4), np.float32), np.zeros((3, 4), np.float32)).shape == (0, 2)
    assert sapling.unisize_pairs(np.empty((0, 4), np.float32)).shape == (0, 2)


def test_invalid_boxes_are_named_by_index(rng):
    boxes = random_boxes(rng, 50, 3)
    boxes[7, 1] = np.nan
    with pytest.raises(sapling.Error, match=r"^box 7: invalid box: min.y is NaN$") as e:
        sapling.complete_pairs(boxes)
    assert e.value.index == 7 and e.value.id is None and e.value.code == "invalid_box"
    boxes = random_boxes(rng, 50, 2)
    boxes[3, 0] = boxes[3, 2] + 1
    with pytest.raises(sapling.Error, match=r"^box 3: invalid box: min.x > max.x$"):
        sapling.bipartite_pairs(random_boxes(rng, 5, 2), boxes)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_first_invalid_box_of_a_large_set_is_named(threads, rng):
    boxes = random_boxes(rng, 300_000, 3, extent=1000)
    boxes[250_001, 5] = boxes[250_001, 2] - 1  # min.z > max.z
    boxes[150_001, 0] = np.nan  # the first fault: named, whichever chunk checks it
    with pytest.raises(sapling.Error, match=r"^box 150001: invalid box: min.x is NaN$"):
        sapling.BoxPruner(threads).complete(boxes)
    with pytest.raises(sapling.Error, match=r"^box 150001: "):
        sapling.complete_pairs(boxes, threads=threads)
    with pytest.raises(sapling.Error, match=r"^box 150001: "):
        sapling.UnisizePruner(threads).complete(boxes)
