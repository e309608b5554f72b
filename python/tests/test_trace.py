"""Traces: read, write, round trip, errors, replay against the command."""

import os
import subprocess

import numpy as np
import pytest

import sapling

TEXT = """sapling-trace 1
dims 2
frame
add 1 0 0 1 1
add 2 1 0 2 1
add 3 5 5 6 6
frame
move 2 5 5 5.5 5.5
remove 1
frame
"""


def test_parse_and_frames():
    t = sapling.parse_trace(TEXT)
    assert t.dims == 2 and len(t) == 3
    f0 = t[0]
    assert np.array_equal(f0["added"], [1, 2, 3]) and f0["added_boxes"].shape == (3, 4)
    assert np.array_equal(t[-2]["moved_boxes"], [[5, 5, 5.5, 5.5]]) and np.array_equal(t[1]["removed"], [1])
    with pytest.raises(IndexError):
        t[3]
    deltas = sapling.replay(t, "brute")
    assert [d[0].tolist() for d in deltas] == [[[1, 2]], [[2, 3]], []]
    assert [d[1].tolist() for d in deltas] == [[], [[1, 2]], []]


def test_round_trip(tmp_path):
    t = sapling.parse_trace(TEXT)
    path = str(tmp_path / "t.trace")
    sapling.write_trace(path, t)
    assert open(path).read() == t.to_text()
    t2 = sapling.read_trace(tmp_path / "t.trace")  # path-like too
    assert t2.to_text() == t.to_text()
    for i in range(len(t)):
        for key in ["removed", "moved", "moved_boxes", "added", "added_boxes"]:
            assert np.array_equal(t[i][key], t2[i][key])


def test_built_trace_replays_bit_for_bit(tmp_path):
    rng = np.random.default_rng(3)
    t = sapling.Trace(3)
    lo = rng.uniform(0, 10, size=(300, 3)).astype(np.float32)
    boxes = np.concatenate([lo, lo + rng.uniform(0, 1, size=(300, 3)).astype(np.float32)], axis=1)
    t.append(added=np.arange(300, dtype=np.uint32), added_boxes=boxes)
    t.append(moved=np.arange(0, 300, 3, dtype=np.uint32), moved_boxes=boxes[::3] + np.float32(0.1))
    t.append(removed=np.arange(1, 300, 7, dtype=np.uint32))
    back = sapling.parse_trace(t.to_text())
    assert np.array_equal(back[1]["moved_boxes"], t[1]["moved_boxes"])
    for a in ["brute", "sap", "box-pruning"]:
        assert np.array_equal(sapling.replay(back, a, report="hash"), sapling.replay(t, "brute", report="hash"))
    assert sapling.replay(t, report="none") is None
    seconds = sapling.replay(t, "sap", report="time")
    assert seconds.dtype == np.float64 and len(seconds) == 3 and np.all(seconds >= 0)


def test_trace_errors(tmp_path):
    with pytest.raises(sapling.TraceError, match=r"^<text>:4: ") as e:
        sapling.parse_trace("sapling-trace 1\ndims 3\nframe\nadd 1 0 0 0 1 1\n")
    assert e.value.line == 4 and e.value.reason
    with pytest.raises(sapling.TraceError, match=r":4: .*live"):
        sapling.parse_trace("sapling-trace 1\ndims 2\nframe\nmove 7 0 0 1 1\n")
    with pytest.raises(ValueError, match="cannot open"):
        sapling.read_trace(str(tmp_path / "missing"))
    t = sapling.Trace(2)
    with pytest.raises(sapling.Error, match=r"^add of id 5: invalid box: min.x > max.x$"):
        t.append(added=[5], added_boxes=[[1, 0, 0, 1]])
    with pytest.raises(sapling.Error, match="2 ids but 1 boxes"):
        t.append(added=[5, 6], added_boxes=[[0, 0, 1, 1]])
    assert len(t) == 0
    t.append(moved=[5], moved_boxes=[[0, 0, 1, 1]])
    with pytest.raises(sapling.Error, match=r"^frame 0: move of id 5: id is not live$") as e:
        sapling.replay(t)
    assert e.value.code == "unknown_id" and e.value.id == 5
    with pytest.raises(ValueError, match="report"):
        sapling.replay(t, report="bytes")
    with pytest.raises(ValueError, match="dims"):
        sapling.Trace(4)


EXAMPLE2 = """sapling-trace 2
dims 3
frame
add 1 -inf -inf -1 inf inf 0 static
add 2 5 5 -1 6 6 0 static
add 7 0 0 0 1 1 1 filter 2 0xfffffffd
add 8 0.5 0 0 1.5 1 1 filter 2 0xffffffff
add 9 0.5 0.5 0.5 2 2 2
frame
filter 9 4 0x1
query 100 -1 -1 -1 0.75 0.75 0.75
query 101 0 0 0 3 3 3 mask 0x4
"""


def test_version_2_frames():
    t = sapling.parse_trace(EXAMPLE2)
    assert t.version == 2 and len(t) == 2
    f0, f1 = t[0], t[1]
    assert f0["added_static"].tolist() == [True, True, False, False, False]
    assert f0["added_filters"].tolist() == [[1, 0xffffffff], [1, 0xffffffff], [2, 0xfffffffd], [2, 0xffffffff],
                                            [1, 0xffffffff]]
    assert f1["filtered"].tolist() == [9] and f1["filters"].tolist() == [[4, 1]]
    assert f1["query_labels"].tolist() == [100, 101] and f1["query_masks"].tolist() == [0xffffffff, 4]
    assert np.array_equal(f1["query_boxes"], [[-1, -1, -1, 0.75, 0.75, 0.75], [0, 0, 0, 3, 3, 3]])
    assert f0["query_boxes"].shape == (0, 6) and f0["filters"].shape == (0, 2)
    back = sapling.parse_trace(t.to_text())
    assert back.to_text() == t.to_text() and back.version == 2
    # The contract's hashes: filters and static objects are staged by replay.
    assert list(sapling.replay(t, "brute", report="hash")) == [0x80bcb38805b607f5, 0x24b91f8a99daadda]
    assert sapling.id_list_hash(np.array([1, 7, 8, 9], dtype=np.uint32)) == 0x9be4b24e42b2c362
    assert sapling.id_list_hash([9]) == 0xad002ab9f9463bec and sapling.id_list_hash([]) == 0xcbf29ce484222325


def test_version_2_append():
    t = sapling.Trace(2)
    t.append(added=[1, 2], added_boxes=[[0, 0, 1, 1], [0.5, 0.5, 2, 2]], added_static=[True, False],
             added_filters=[[1, 3], [2, 0xffffffff]], query_labels=[5], query_boxes=[[0, 0, 0.25, 0.25]])
    t.append(filtered=[2], filters=[[4, 4]], query_labels=[6, 7], query_boxes=[[0, 0, 3, 3], [0, 0, 3, 3]],
             query_masks=[4, 1])
    assert t.version == 1  # the header it was made with; to_text() writes what the frames need
    text = t.to_text()
    assert text.startswith("sapling-trace 2\n")
    assert "add 1 0 0 1 1 static filter 0x1 0x3\n" in text and "query 7 0 0 3 3 mask 0x1\n" in text
    back = sapling.parse_trace(text)
    for i in range(len(t)):
        for key in ["added_static", "added_filters", "filtered", "filters", "query_labels", "query_boxes",
                    "query_masks"]:
            assert np.array_equal(t[i][key], back[i][key]), key
    with pytest.raises(sapling.Error, match=r"^query box 0: invalid box: min.y > max.y$"):
        t.append(query_labels=[1], query_boxes=[[0, 1, 1, 0]])
    with pytest.raises(ValueError, match="added_static"):
        t.append(added=[3], added_boxes=[[0, 0, 1, 1]], added_static=[True, False])
    with pytest.raises(ValueError, match="filters"):
        t.append(filtered=[1, 2], filters=[[1, 1]])
    assert len(t) == 2


@pytest.mark.parametrize("algorithm", ["sap", "box-pruning", "dual-axis"])
def test_replay_matches_the_command(cli, tmp_path, algorithm):
    """Hashes from Python's replay and from a Python loop equal `sapling replay --report hash`."""
    path = str(tmp_path / "tracy.trace")
    subprocess.run([cli, "gen", "tracy", "--n", "3000", "--frames", "12", "--seed", "5", "--out", path], check=True)
    out = subprocess.run([cli, "replay", path, "--algo", algorithm, "--report", "hash"], check=True,
                         capture_output=True, text=True).stdout
    expected = [int(line.split()[3], 16) for line in out.splitlines() if line.startswith("frame")]
    trace = sapling.read_trace(path)
    assert list(sapling.replay(trace, algorithm, report="hash")) == expected
    bp = sapling.BroadPhase(algorithm, dims=trace.dims)
    got = []
    for i in range(len(trace)):
        f = trace[i]
        bp.remove(f["removed"])
        bp.move(f["moved"], f["moved_boxes"])
        bp.add(f["added"], f["added_boxes"])
        bp.update()
        got.append(sapling.pair_set_hash(bp.sorted_pairs()))
    assert got == expected
