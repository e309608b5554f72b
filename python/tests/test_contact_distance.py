"""Contact distances from Python (docs/filters-and-queries.md, "Contact
distance"): pairs of the boxes grown by their distances, queries on the
boxes as given, refusals of bad distances."""

import math

import numpy as np
import pytest

import sapling


def boxes(*rows):
    return np.array(rows, np.float32)


def test_pairs_within_the_distances():
    bp = sapling.BroadPhase("sap")
    bp.add([1, 2], boxes([0, 0, 0, 1, 1, 1], [2, 0, 0, 3, 1, 1]), contact_distance=0.5)
    created, _ = bp.update()
    assert created.tolist() == [[1, 2]]
    assert bp.query([1.25, 0, 0, 1.75, 1, 1]).tolist() == []  # the boxes as given
    assert bp.contact_distance(2) == 0.5 and bp.contact_distance(3) is None
    bp.move([2], boxes([2, 0.5, 0, 3, 1.5, 1]))  # keeps its distance
    _, deleted = bp.update()
    assert deleted.tolist() == []
    bp.move([2], boxes([2, 0.5, 0, 3, 1.5, 1]), contact_distance=np.array([0.25], np.float32))
    _, deleted = bp.update()
    assert deleted.tolist() == [[1, 2]]
    assert bp.validate()


def test_one_per_id_and_refusals():
    bp = sapling.BroadPhase("sap")
    bp.add([1, 2], boxes([0, 0, 0, 1, 1, 1], [3, 0, 0, 4, 1, 1]), contact_distance=[0.0, 2.0])
    created, _ = bp.update()
    assert created.tolist() == [[1, 2]]
    with pytest.raises(sapling.Error, match="add of id 4: contact distance is negative, NaN or infinite"):
        bp.add([3, 4], boxes([0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 1]), contact_distance=[1.0, -1.0])
    with pytest.raises(sapling.Error):
        bp.move([1], boxes([0, 0, 0, 1, 1, 1]), contact_distance=math.nan)
    with pytest.raises(sapling.Error):
        bp.add([3], boxes([0, 0, 0, 1, 1, 1]), contact_distance=[1.0, 2.0])  # one per id
    with pytest.raises(sapling.Error):
        bp.add([3], boxes([0, 0, 0, 1, 1, 1]), contact_distance=0.1)  # not exactly a float32
    assert len(bp) == 2  # nothing staged by the refused calls
    created, deleted = bp.update()
    assert created.tolist() == [] and deleted.tolist() == []
