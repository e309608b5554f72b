"""Filters, static objects, masked queries and ray casts from Python
(docs/trace-format.md, version 2; include/sapling/ray.hpp)."""

import math
import os

import numpy as np
import pytest

import sapling


def boxes(*rows):
    return np.array(rows, np.float32)


def test_contract_example():
    """The contract's version-2 example, through the bindings."""
    bp = sapling.BroadPhase("sap")
    inf = math.inf
    bp.add([1, 2], boxes([-inf, -inf, -1, inf, inf, 0], [5, 5, -1, 6, 6, 0]), static=True)
    bp.add([7, 8], boxes([0, 0, 0, 1, 1, 1], [0.5, 0, 0, 1.5, 1, 1]), category=2, mask=[0xFFFFFFFD, 0xFFFFFFFF])
    bp.add([9], boxes([0.5, 0.5, 0.5, 2, 2, 2]))
    created, deleted = bp.update()
    assert created.tolist() == [[1, 7], [1, 8], [7, 9], [8, 9]]
    assert deleted.tolist() == []
    bp.set_filter([9], category=4, mask=0x1)
    created, deleted = bp.update()
    assert created.tolist() == []
    assert deleted.tolist() == [[7, 9], [8, 9]]
    assert bp.query([-1, -1, -1, 0.75, 0.75, 0.75]).tolist() == [1, 7, 8, 9]
    assert bp.query([0, 0, 0, 3, 3, 3], mask=0x4).tolist() == [9]
    assert bp.filter(9) == (4, 1)
    assert bp.filter(1) == (1, sapling.ALL_CATEGORIES)
    assert bp.is_static(1) is True and bp.is_static(9) is False and bp.is_static(3) is None
    assert bp.validate()


def test_rays():
    bp = sapling.BroadPhase("sap")
    bp.add([1, 2, 3], boxes([2, -1, -1, 3, 1, 1], [5, -1, -1, 6, 1, 1], [2, 5, 5, 3, 6, 6]), category=[1, 2, 1])
    bp.update()
    ids, t = bp.ray_cast([0, 0, 0], [1, 0, 0])
    assert ids.tolist() == [1, 2] and t.tolist() == [2.0, 5.0]
    assert bp.ray_cast_closest([0, 0, 0], [1, 0, 0]) == (1, 2.0)
    assert bp.ray_cast_closest([0, 0, 0], [1, 0, 0], mask=2) == (2, 5.0)
    assert bp.ray_cast_closest([0, 0, 0], [1, 0, 0], max_t=1.5) is None
    assert bp.ray_cast([0, 0, 0], [1, 0, 0], max_t=2.0)[0].tolist() == [1]  # closed: the face at t = 2
    with pytest.raises(sapling.Error, match="the direction is zero"):
        bp.ray_cast([0, 0, 0], [0, 0, 0])
    with pytest.raises(sapling.Error, match="origin must hold 3 numbers"):
        bp.ray_cast([0, 0], [1, 0, 0])


def test_refusals_change_nothing():
    bp = sapling.BroadPhase("sap")
    bp.add([1], boxes([0, 0, 0, 1, 1, 1]), category=1, mask=1)
    bp.update()
    with pytest.raises(sapling.Error) as e:
        bp.set_filter([1, 5], category=2)
    assert e.value.code == "unknown_id" and e.value.operation == "set_filter" and e.value.id == 5
    with pytest.raises(sapling.Error, match="one value per id"):
        bp.set_filter([1], category=[1, 2])
    with pytest.raises(sapling.Error, match=r"\[0, 2\*\*32\)"):
        bp.add([2], boxes([0, 0, 0, 1, 1, 1]), mask=-1)
    created, deleted = bp.update()
    assert created.size == 0 and deleted.size == 0
    assert bp.filter(1) == (1, 1)
    assert 2 not in bp


def test_replay_answers_the_contract_queries():
    """The contract's version-2 example: replay(report='queries') gives each
    frame's region queries, (label, ids), as `sapling replay` writes them."""
    text = open(os.path.join(os.path.dirname(__file__), "..", "..", "tests", "cli", "data", "example2.trace")).read()
    trace = sapling.parse_trace(text)
    answers = sapling.replay(trace, "sap", report="queries")
    assert len(answers) == 2 and answers[0] == []
    assert [(label, ids.tolist()) for label, ids in answers[1]] == [(100, [1, 7, 8, 9]), (101, [9])]
    deltas = sapling.replay(trace, report="delta")
    assert deltas[1][1].tolist() == [[7, 9], [8, 9]]
    with pytest.raises(sapling.Error, match="'queries'"):
        sapling.replay(trace, report="nope")


def test_set_filter_keeps_what_is_not_given():
    """A category or mask not passed keeps the object's current one."""
    bp = sapling.BroadPhase("sap")
    bp.add([1, 2, 3], boxes([0, 0, 0, 1, 1, 1], [0.5, 0, 0, 1.5, 1, 1], [0.5, 0.5, 0, 2, 2, 1]),
           category=[2, 4, 8], mask=[6, 0xFFFFFFFF, 0xFFFFFFFF])
    assert bp.update()[0].tolist() == [[1, 2], [2, 3]]
    bp.set_filter([1], mask=1)  # category 2 stays
    created, deleted = bp.update()
    assert bp.filter(1) == (2, 1) and deleted.tolist() == [[1, 2]]
    bp.set_filter([1, 2], category=[1, 16])  # masks stay, one category each
    bp.update()
    assert bp.filter(1) == (1, 1) and bp.filter(2) == (16, 0xFFFFFFFF)
    bp.set_filter([3], mask=[0x10])
    bp.update()
    assert bp.filter(3) == (8, 0x10)
    bp.set_filter([2, 3])  # neither: both kept
    assert all(a.size == 0 for a in bp.update())
    assert bp.filter(2) == (16, 0xFFFFFFFF) and bp.filter(3) == (8, 0x10)
    assert bp.sorted_pairs().tolist() == [[2, 3]]
    # an id that is not live is refused as before, and nothing is staged
    with pytest.raises(sapling.Error, match="set_filter of id 9: id is not live"):
        bp.set_filter([3, 9], mask=1)
    assert all(a.size == 0 for a in bp.update()) and bp.filter(3) == (8, 0x10)
    assert bp.validate()
