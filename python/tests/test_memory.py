"""Memory: inputs read in place where numpy allows it, conversions only when
needed (numpy's allocations are visible to tracemalloc), outputs owned."""

import sys
import tracemalloc

import numpy as np
import pytest

import sapling

N = 200_000


def peak_during(call):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        call()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="module")
def world():
    rng = np.random.default_rng(7)
    lo = rng.uniform(0, 1000, size=(N, 3)).astype(np.float32)
    boxes = np.concatenate([lo, lo + 0.5], axis=1)
    return np.arange(N, dtype=np.uint32), boxes


def test_float32_and_uint32_are_not_copied(world):
    ids, boxes = world
    assert peak_during(lambda: sapling.BroadPhase().add(ids, boxes)) < 64 * 1024
    assert peak_during(lambda: sapling.complete_pairs(boxes)) < 64 * 1024  # the pairs are held by C++, not numpy
    bp = sapling.BroadPhase()
    bp.add(ids, boxes)
    bp.update()
    half_ids, half_boxes = ids[::2].copy(), boxes[::2].copy()
    assert peak_during(lambda: bp.move(half_ids, half_boxes)) < 64 * 1024


def test_conversions_are_copies_of_the_expected_size(world):
    ids, boxes = world
    as64 = boxes.astype(np.float64)
    assert peak_during(lambda: sapling.BroadPhase().add(ids, as64)) >= boxes.nbytes
    strided = np.asfortranarray(boxes)
    assert peak_during(lambda: sapling.BroadPhase().add(ids, strided)) >= boxes.nbytes
    ids64 = ids.astype(np.int64)
    assert peak_during(lambda: sapling.BroadPhase().add(ids64, boxes)) >= ids.nbytes


def test_input_is_not_modified_and_not_kept(world):
    ids, boxes = world
    keep = boxes.copy()
    refs = sys.getrefcount(boxes)
    bp = sapling.BroadPhase("sap")
    bp.add(ids, boxes)
    assert sys.getrefcount(boxes) == refs
    boxes_view = boxes  # the broad phase copied what it needs: changing the array afterwards changes nothing
    created, _ = bp.update()
    assert np.array_equal(boxes_view, keep)


def test_outputs_are_owned_arrays():
    boxes = np.array([[0, 0, 1, 1], [0.5, 0.5, 2, 2]], np.float32)
    pairs = sapling.complete_pairs(boxes)
    assert pairs.flags.c_contiguous and pairs.flags.writeable and pairs.dtype == np.uint32
    assert not np.shares_memory(pairs, boxes)
    pairs[0, 0] = 9  # writable, and ours
    assert sapling.complete_pairs(boxes)[0, 0] == 0


def test_memory_bytes_grow_with_the_world(world):
    ids, boxes = world
    bp = sapling.BroadPhase("sap")
    empty = bp.memory_bytes
    bp.add(ids, boxes)
    bp.update()
    assert bp.memory_bytes > empty + N * 24
