"""Large worlds from Python (docs/large-worlds.md): float64 boxes in world
coordinates, rounded outward relative to the origin, origin shifts and
the exact pairs."""

import numpy as np

import sapling


def test_rounded_pairs_shift_and_exact_pairs():
    x = 1e12
    boxes = np.array([[x, 0, 0, x + 1, 1, 1], [x + 2, 0, 0, x + 3, 1, 1]], np.float64)  # 1 apart
    rounded = sapling.BroadPhase("sap")
    exact = sapling.BroadPhase("sap", exact_pairs=True)
    for bp in (rounded, exact):
        bp.add_double([1, 2], boxes)
    assert rounded.update()[0].tolist() == [[1, 2]]  # float at 1e12 joins them
    assert exact.update()[0].tolist() == []
    assert exact.exact_box(2).tolist() == [x + 2, 0, 0, x + 3, 1, 1]
    rounded.shift_origin([x, 0, 0])
    assert rounded.origin() == (x, 0.0, 0.0)
    _, deleted = rounded.update()
    assert deleted.tolist() == [[1, 2]]  # relative to the new origin, float holds them apart
    assert rounded.validate()


def test_moves_in_double_and_refusals():
    bp = sapling.BroadPhase("sap", dims=2)
    bp.add_double([1], np.array([[1e9, 0, 1e9 + 1, 1]]))
    bp.update()
    bp.move_double([1], np.array([[1e9 + 5, 0, 1e9 + 6, 1]]))
    bp.update()
    assert bp.exact_box(1).tolist() == [1e9 + 5, 0, 1e9 + 6, 1]
    try:
        bp.move_double([1], np.array([[2.0, 0, 1.0, 1]]))
    except sapling.Error as e:
        assert "min.x > max.x" in str(e)
    else:
        raise AssertionError("an inverted box was taken")
