"""Bad input: a clear exception naming the id, index and reason, and the
broad phase exactly as before the refused call."""

import numpy as np
import pytest

import sapling
from conftest import ALGORITHMS


def snapshot(bp):
    return (len(bp), bp.frame, bp.sorted_pairs().tobytes(), bp.pair_count)


def started(algorithm="sap", dims=3):
    bp = sapling.BroadPhase(algorithm, dims=dims)
    lo = np.arange(10, dtype=np.float32)[:, None].repeat(dims, axis=1)
    bp.add(np.arange(10, dtype=np.uint32), np.concatenate([lo, lo + 1.5], axis=1))
    bp.update()
    return bp


def box(dims=3, lo=0.0, hi=1.0):
    return np.array([[lo] * dims + [hi] * dims], np.float32)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_status_errors_leave_state_unchanged(algorithm):
    bp = started(algorithm)
    before = snapshot(bp)
    cases = [
        (lambda: bp.add([20, 21], np.array([[0, 0, 0, 1, 1, 1], [0, np.nan, 0, 1, 1, 1]], np.float32)),
         "invalid_box", r"^add of id 21: invalid box: min.y is NaN$", 21, 1),
        (lambda: bp.add([20], np.array([[0, 0, 2, 1, 1, 1]], np.float32)),
         "invalid_box", r"^add of id 20: invalid box: min.z > max.z$", 20, 0),
        (lambda: bp.add([30, 3], np.concatenate([box(), box()])), "duplicate_id",
         r"^add of id 3: id is already live$", 3, 1),
        (lambda: bp.add([30, 30], np.concatenate([box(), box()])), "repeated_id",
         r"^add of id 30: id already has an operation in this frame$", 30, 1),
        (lambda: bp.move([1, 99], np.concatenate([box(), box()])), "unknown_id",
         r"^move of id 99: id is not live$", 99, 1),
        (lambda: bp.move([2], np.array([[0, 0, 0, 1, np.nan, 1]], np.float32)), "invalid_box",
         r"^move of id 2: invalid box: max.y is NaN$", 2, 0),
        (lambda: bp.remove([4, 5, 12345]), "unknown_id", r"^remove of id 12345: id is not live$", 12345, 2),
        (lambda: bp.add([40, 41], box()), "size_mismatch", r"^add: 2 ids but 1 boxes$", None, None),
    ]
    for call, code, message, id_, index in cases:
        with pytest.raises(sapling.Error, match=message) as e:
            call()
        assert isinstance(e.value, ValueError)
        assert e.value.code == code and e.value.id == id_ and e.value.index == index
        assert snapshot(bp) == before
    # nothing was staged by the refused calls: the next frame is empty
    created, deleted = bp.update()
    assert len(created) == 0 and len(deleted) == 0
    assert bp.sorted_pairs().tobytes() == before[2] and len(bp) == before[0]


def test_repeated_operation_across_calls_in_a_frame():
    bp = started()
    bp.move([1], box())
    with pytest.raises(sapling.Error, match="already has an operation") as e:
        bp.remove([1])
    assert e.value.operation == "remove"


def test_off_plane_box_in_2d_broad_phase_via_3d_shape():
    bp = sapling.BroadPhase(dims=2)
    with pytest.raises(sapling.Error, match=r"shape \(n, 4\)"):
        bp.add([1], box(3))


@pytest.mark.parametrize(
    "boxes, error, message",
    [
        (np.zeros((2, 5), np.float32), sapling.Error, r"boxes must have shape \(n, 6\).*not \(2, 5\)"),
        (np.zeros((2,), np.float32), sapling.Error, r"not \(2,\)"),
        (np.zeros((2, 2, 2), np.float32), sapling.Error, r"not \(2, 2, 2\)"),
        (np.zeros((2, 6), np.complex64), TypeError, "not complex64"),
        (np.zeros((2, 6), bool), TypeError, "not bool"),
        (np.array([["a"] * 6] * 2), TypeError, "<U1"),
        (np.array([[0, 0, 0, 1, 1, 0.1]] * 2), sapling.Error,
         r"boxes\[0, 5\] = 0.1 \(float64\) is not exactly a float32"),
        (np.array([[0, 0, 0, 1, 1, 1e300]] * 2), sapling.Error, r"boxes\[0, 5\] = 1e\+300"),
        (np.array([[0, 0, 0, 1, 1, 2**24 + 1]] * 2, np.int64), sapling.Error, r"= 16777217 \(int64\)"),
        ("boxes", TypeError, "not <U5"),
    ],
)
def test_bad_boxes(boxes, error, message):
    bp = started()
    before = snapshot(bp)
    with pytest.raises(error, match=message):
        bp.add([20, 21], boxes)
    assert snapshot(bp) == before
    bp.update()
    assert len(bp) == before[0]


@pytest.mark.parametrize(
    "ids, error, message",
    [
        (np.array([[20, 21]], np.uint32), sapling.Error, r"ids must be 1-D, not of shape \(1, 2\)"),
        (np.array([20, -1]), sapling.Error, r"ids\[1\] = -1 is not an id"),
        (np.array([20, 2**32]), sapling.Error, r"ids\[1\] = 4294967296 is not an id"),
        ([20, 2**64], sapling.Error, r"ids\[1\] = 18446744073709551616 is not an id"),
        (np.array([20.0, 21.0]), sapling.Error, "ids must be uint32.*not float64"),
        (np.array([True, False]), TypeError, "ids must be uint32.*not bool"),
    ],
)
def test_bad_ids(ids, error, message):
    bp = started()
    before = snapshot(bp)
    with pytest.raises(error, match=message):
        bp.add(ids, np.concatenate([box(), box()]))
    assert snapshot(bp) == before


def test_exact_conversions_are_accepted():
    bp = sapling.BroadPhase()
    bp.add(np.array([1, 2], np.int64), np.array([[0, 0, 0, 0.5, 0.5, 2**24], [0.5] * 3 + [np.inf] * 3]))
    bp.add(np.array([3], np.uint16), np.array([[-(2**40)] * 3 + [2**40] * 3], np.int64))
    bp.add([4], np.array([[0, 0, 0, 1, 1, 1]], np.float16))
    bp.add([5], np.array([[0, 0, 0, 1, 1, 1]], ">f4"))  # big-endian float32: copied unchanged
    created, _ = bp.update()
    assert len(created) == 10


def test_unaligned_and_strided_inputs_are_read_right():
    raw = np.zeros(6 * 4 * 2 + 1, np.uint8)
    unaligned = raw[1:].view(np.float32).reshape(2, 6)  # floats at an odd byte offset
    unaligned[:] = [[0, 0, 0, 1, 1, 1], [1, 1, 1, 2, 2, 2]]
    assert not unaligned.flags.aligned
    strided = np.zeros((2, 12), np.float32)[:, ::2]
    strided[:] = unaligned
    ids = np.zeros(5, np.uint32)[::2]
    ids[:] = [4, 5, 6]
    for boxes in [unaligned, strided, np.asfortranarray(unaligned)]:
        bp = sapling.BroadPhase()
        bp.add(ids[:2], boxes)
        created, _ = bp.update()
        assert created.tolist() == [[4, 5]]
        assert sapling.complete_pairs(boxes).tolist() == [[0, 1]]


def test_nan_in_float64_is_refused_by_the_box_check():
    bp = sapling.BroadPhase()
    with pytest.raises(sapling.Error, match="add of id 1: invalid box: max.x is NaN"):
        bp.add([1], np.array([[0, 0, 0, np.nan, 1, 1]]))


def test_round_outward():
    boxes = np.array([[0.1, -0.1, 0.3, 0.2, 0.7, 1.0]])
    r = sapling.round_outward(boxes)
    assert r.dtype == np.float32
    assert np.all(r[:, :3].astype(np.float64) <= boxes[:, :3]) and np.all(r[:, 3:].astype(np.float64) >= boxes[:, 3:])
    assert r[0, 5] == 1.0  # exact values unchanged
    bp = sapling.BroadPhase()
    bp.add([1], r)
    r2 = sapling.round_outward(boxes.reshape(1, 2, 3))
    assert np.array_equal(r2.reshape(1, 6), r)


def test_create_errors():
    with pytest.raises(sapling.Error, match=r"^BroadPhase\('no-such', dims=3, threads=1\): create: no algorithm") as e:
        sapling.BroadPhase("no-such")
    assert e.value.operation == "create"
    with pytest.raises(sapling.Error, match="dims"):
        sapling.BroadPhase(dims=4)
    with pytest.raises(sapling.Error, match="threads"):
        sapling.BroadPhase(threads=1000)
    with pytest.raises(sapling.Error, match=r"^threads must be an integer in \[0, 256\].*, not -1$"):
        sapling.BroadPhase(threads=-1)
    with pytest.raises(sapling.Error, match=r"^max_pairs must be an integer in \[0, 2\*\*64\).*, not -1$"):
        sapling.BroadPhase(max_pairs=-1)
    with pytest.raises(sapling.Error, match="threads"):
        sapling.complete_pairs(np.zeros((1, 6), np.float32), threads=1000)


def test_unisize_broad_phase_refuses_another_size():
    bp = sapling.BroadPhase("unisize", dims=2)
    with pytest.raises(sapling.Error, match=r"^add of id 6: unisize: every box must have the size") as e:
        bp.add([5, 6], np.array([[0, 0, 1, 1], [0, 0, 3, 1]], np.float32))
    assert (e.value.code, e.value.operation, e.value.id, e.value.index) == ("unsupported", "add", 6, 1)
    assert len(bp) == 0
    bp.add([5, 6], np.array([[0, 0, 1, 1], [1, 1, 2, 2]], np.float32))
    assert bp.update()[0].tolist() == [[5, 6]]
