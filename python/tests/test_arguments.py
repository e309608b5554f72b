"""Arguments: one rule for what is refused and how (sapling/__init__.py).

- sapling.Error (a ValueError) for every value sapling refuses: a number
  out of range or not an integer where one is due, a wrong shape, a float
  that is not exactly a float32, and every Status of the library;
- TypeError only for an argument that is not a number where numbers are due
  (a string, a bool, None, a complex or object dtype).
Both name the argument; neither is pybind11's dump of the signature."""

import numpy as np
import pytest

import sapling

BOX3 = np.array([[0, 0, 0, 1, 1, 1]], np.float32)


def started():
    bp = sapling.BroadPhase("sap")
    bp.add([1, 2], np.array([[0, 0, 0, 1, 1, 1], [0.5, 0.5, 0.5, 2, 2, 2]], np.float32))
    bp.update()
    return bp


def trace():
    t = sapling.Trace(3)
    t.append(added=[1], added_boxes=BOX3)
    return t


# Every argument that is an unsigned integer in C++: (name, call with the
# value, whether it also takes one value per id, where None is the default).
UNSIGNED = [
    ("threads", lambda v: sapling.BroadPhase(threads=v), False),
    ("max_pairs", lambda v: sapling.BroadPhase(max_pairs=v), False),
    ("dims", lambda v: sapling.BroadPhase(dims=v), False),
    ("threads", lambda v: sapling.BoxPruner(threads=v), False),
    ("threads", lambda v: sapling.UnisizePruner(threads=v), False),
    ("threads", lambda v: sapling.complete_pairs(BOX3, threads=v), False),
    ("threads", lambda v: sapling.bipartite_pairs(BOX3, BOX3, threads=v), False),
    ("threads", lambda v: sapling.unisize_pairs(BOX3, threads=v), False),
    ("threads", lambda v: sapling.replay(trace(), threads=v), False),
    ("dims", lambda v: sapling.Trace(dims=v), False),
    ("id", lambda v: started().filter(v), False),
    ("id", lambda v: started().is_static(v), False),
    ("id", lambda v: started().contains(v), False),
    ("id", lambda v: v in started(), False),
    ("mask", lambda v: started().query([0, 0, 0, 1, 1, 1], mask=v), False),
    ("mask", lambda v: started().query_many(BOX3, mask=v), False),
    ("mask", lambda v: started().ray_cast([0, 0, 0], [1, 0, 0], mask=v), False),
    ("mask", lambda v: started().ray_cast_closest([0, 0, 0], [1, 0, 0], mask=v), False),
    ("category", lambda v: started().add([3], BOX3, category=v), True),
    ("mask", lambda v: started().add([3], BOX3, mask=v), True),
    ("category", lambda v: started().set_filter([1], category=v), True),
    ("mask", lambda v: started().set_filter([1], mask=v), True),
]


@pytest.mark.parametrize("value", [-1, 2**64, 1.5, np.int64(-3), np.float32(2.5)])
@pytest.mark.parametrize("name, call, per_id", UNSIGNED)
def test_unsigned_arguments_refuse_bad_values(name, call, per_id, value):
    with pytest.raises(sapling.Error, match=rf"^{name} must be") as e:
        call(value)
    assert e.value.code == "invalid_argument"
    assert "incompatible" not in str(e.value)
    if per_id:  # the same values one per id
        with pytest.raises(sapling.Error, match=rf"^{name}"):
            call([value])


@pytest.mark.parametrize("value", ["1", None, True, [1]])
@pytest.mark.parametrize("name, call, per_id", UNSIGNED)
def test_unsigned_arguments_refuse_non_numbers(name, call, per_id, value):
    if per_id and (value is None or isinstance(value, list)):
        pytest.skip("None is the default, and a list holds one value per id")
    with pytest.raises(TypeError, match=rf"^{name} must be") as e:
        call(value)
    assert "incompatible" not in str(e.value)


def test_unsigned_arguments_accept_numpy_integers_and_the_full_range():
    bp = sapling.BroadPhase(threads=np.uint8(2), max_pairs=np.uint64(2**64 - 1), dims=np.int32(3))
    assert bp.threads >= 1 and bp.max_pairs == 2**64 - 1 and bp.dims == 3
    bp.add(np.array([0, 2**32 - 1], np.uint64), np.concatenate([BOX3, BOX3]), category=2**32 - 1,
           mask=np.uint32(2**32 - 1))
    bp.update()
    assert bp.filter(2**32 - 1) == (2**32 - 1, 2**32 - 1) and np.uint32(0) in bp
    assert bp.query([0, 0, 0, 1, 1, 1], mask=np.int64(2**32 - 1)).tolist() == [0, 2**32 - 1]
    assert sapling.BroadPhase(threads=0).threads >= 1


def test_refused_values_leave_the_broad_phase_unchanged():
    bp = started()
    before = (len(bp), bp.frame, bp.sorted_pairs().tobytes())
    for call in [lambda: bp.add([3], BOX3, category=-1), lambda: bp.set_filter([1], mask=2**32),
                 lambda: bp.add([3], BOX3, category=[1.5])]:
        with pytest.raises(sapling.Error):
            call()
    assert bp.update()[0].size == 0 and (len(bp), bp.frame - 1, bp.sorted_pairs().tobytes()) == before
    assert bp.filter(1) == (1, sapling.ALL_CATEGORIES)


# ---- floats: every float input follows the boxes' rule ---------------------


def test_rays_follow_the_boxes_rule():
    bp = started()
    with pytest.raises(sapling.Error, match=r"^boxes\[0, 0\] = 0.1 \(float64\) is not exactly a float32"):
        bp.add([3], np.array([[0.1, 0, 0, 1, 1, 1]]))
    with pytest.raises(sapling.Error, match=r"^origin\[0\] = 0.1 \(float64\) is not exactly a float32"):
        bp.ray_cast([0.1, 0, 0], [1, 0, 0])
    with pytest.raises(sapling.Error, match=r"^direction\[2\] = 0.3 \(float64\) is not exactly a float32"):
        bp.ray_cast_closest(np.zeros(3, np.float32), [1, 0, 0.3])
    with pytest.raises(sapling.Error, match=r"^origin\[1\] = 16777217 \(int64\) is not exactly a float32"):
        bp.ray_cast([0, 2**24 + 1, 0], [1, 0, 0])
    with pytest.raises(sapling.Error, match=r"^max_t = 0.1 is not exactly a float32"):
        bp.ray_cast([0, 0, 0], [1, 0, 0], max_t=0.1)
    with pytest.raises(sapling.Error, match=r"^max_t = 16777217 is not exactly a float32"):
        bp.ray_cast([0, 0, 0], [1, 0, 0], max_t=2**24 + 1)
    with pytest.raises(sapling.Error, match=r"^box\[3\] = 0.1 \(float64\) is not exactly a float32"):
        bp.query([0, 0, 0, 0.1, 1, 1])
    # exact values of any real dtype are taken, as for boxes
    ids, t = bp.ray_cast(np.array([-1, 0.25, 0.25]), np.array([1, 0, 0], np.int8), max_t=np.float64(1.5))
    assert ids.tolist() == [1] and t.tolist() == [1.0]
    assert bp.ray_cast_closest([-1.0, 0.25, 0.25], [1.0, 0.0, 0.0], max_t=np.float32(0.1)) is None
    assert bp.ray_cast_closest([-1, 0.25, 0.25], [1, 0, 0], max_t=2) == (1, 1.0)
    assert bp.query(np.array([0.75, 0.75, 0.75, 3, 3, 3])).tolist() == [1, 2]
    assert bp.query(np.array([[0.75] * 3 + [3] * 3])).tolist() == [1, 2]  # (1, 6), as before
    assert bp.query(np.array([[0.75] * 3, [3] * 3])).tolist() == [1, 2]  # (2, 3): min, max


def test_float_arguments_refuse_non_numbers():
    bp = started()
    with pytest.raises(TypeError, match="^max_t must be a real number, not str"):
        bp.ray_cast([0, 0, 0], [1, 0, 0], max_t="1")
    with pytest.raises(TypeError, match="^origin must hold real numbers, not complex128"):
        bp.ray_cast([0j, 0, 0], [1, 0, 0])
    with pytest.raises(sapling.Error, match=r"^origin must hold 3 numbers, not shape \(2,\)"):
        bp.ray_cast([0, 0], [1, 0, 0])
    with pytest.raises(sapling.Error, match=r"^box must hold 6 numbers \(min then max\), not shape \(5,\)"):
        bp.query([0, 0, 0, 1, 1])


# ---- one rule: sapling.Error for values, TypeError for types -------------------


def test_value_refusals_are_sapling_errors():
    bp = started()
    pruner = sapling.BoxPruner()
    t = trace()
    calls = [
        (lambda: bp.add([3], np.zeros((1, 5), np.float32)), r"boxes must have shape \(n, 6\)"),
        (lambda: bp.add([3], np.array([[0, 0, 0, 1, 1, 0.1]])), r"boxes\[0, 5\] = 0.1"),
        (lambda: bp.add(np.array([[3]]), BOX3), r"ids must be 1-D"),
        (lambda: bp.add([-3], BOX3), r"ids\[0\] = -3 is not an id"),
        (lambda: bp.add(np.array([3.0]), BOX3), r"ids must be uint32.*not float64"),
        (lambda: bp.add([3], BOX3, category=[1, 2]), "one value per id"),
        (lambda: bp.remove([2**32]), r"ids\[0\] = 4294967296 is not an id"),
        (lambda: pruner.bipartite_prepared(BOX3), "prepare"),
        (lambda: sapling.complete_pairs(BOX3, threads=1000), "threads must be"),
        (lambda: sapling.pair_set_hash(np.zeros((2, 3), np.uint32)), r"pairs must have shape \(k, 2\)"),
        (lambda: sapling.replay(t, report="bytes"), "report must be"),
        (lambda: sapling.Trace(4), "dims must be 2 or 3"),
        (lambda: t.append(added=[3], added_boxes=BOX3, added_static=[True, False]), "added_static"),
        (lambda: t.append(added=[3], added_boxes=BOX3, added_static=[0.5]), "added_static"),
        (lambda: t.append(filtered=[1], filters=[[1, 1, 1]]), r"filters must have shape \(k, 2\)"),
        (lambda: t.append(filtered=[1], filters=[[1, 1], [2, 2]]), "filters"),
        (lambda: t.append(query_labels=[1], query_boxes=BOX3, query_masks=[1, 2]), "query_masks"),
        (lambda: sapling.round_outward(np.zeros((2, 5))), r"boxes must have shape"),
    ]
    for call, message in calls:
        with pytest.raises(sapling.Error, match=message) as e:
            call()
        assert e.value.code == "invalid_argument", message
    assert len(t) == 1 and len(bp) == 2


def test_type_refusals_are_type_errors():
    bp = started()
    calls = [
        (lambda: bp.add([3], np.zeros((1, 6), np.complex64)), "boxes must be"),
        (lambda: bp.add([3], np.zeros((1, 6), bool)), "boxes must be"),
        (lambda: bp.add(["a"], BOX3), "ids must be"),
        (lambda: bp.add(np.array([True]), BOX3), "ids must be"),
        (lambda: bp.filter("1"), "id must be"),
        (lambda: sapling.BroadPhase(threads="2"), "threads must be"),
        (lambda: trace().append(added=[3], added_boxes=BOX3, added_static=["yes"]), "added_static must hold bools"),
        (lambda: sapling.round_outward(np.zeros((2, 6), complex)), "boxes must hold real numbers"),
    ]
    for call, message in calls:
        with pytest.raises(TypeError, match=message):
            call()


def test_trace_errors_are_sapling_errors(tmp_path):
    assert issubclass(sapling.TraceError, sapling.Error) and issubclass(sapling.Error, ValueError)
    with pytest.raises(sapling.Error, match=r"^<text>:2: ") as e:
        sapling.parse_trace("sapling-trace 1\ndims 4\n")
    assert e.value.code == "invalid_trace" and e.value.line == 2
    with pytest.raises(FileNotFoundError):
        sapling.read_trace(tmp_path / "missing")
    with pytest.raises(OSError):
        sapling.write_trace(tmp_path / "no" / "such" / "dir", trace())
