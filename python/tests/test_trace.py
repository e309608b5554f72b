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
    with pytest.raises(FileNotFoundError, match="missing"):
        sapling.read_trace(str(tmp_path / "missing"))
    t = sapling.Trace(2)
    with pytest.raises(sapling.Error, match=r"^add of id 5: invalid box: min.x > max.x$"):
        t.append(added=[5], added_boxes=[[1, 0, 0, 1]])
    with pytest.raises(sapling.Error, match="2 ids but 1 boxes"):
        t.append(added=[5, 6], added_boxes=[[0, 0, 1, 1]])
    assert len(t) == 0
    t.append(added=[5, 6], added_boxes=[[0, 0, 1, 1], [0, 0, 2, 1]])
    with pytest.raises(sapling.Error, match=r"^frame 0: add of id 6: unisize: ") as e:
        sapling.replay(t, "unisize")
    assert e.value.code == "unsupported" and e.value.id == 6
    with pytest.raises(sapling.Error, match="report"):
        sapling.replay(t, report="bytes")
    with pytest.raises(sapling.Error, match="dims"):
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
    with pytest.raises(sapling.Error, match="added_static"):
        t.append(added=[3], added_boxes=[[0, 0, 1, 1]], added_static=[True, False])
    with pytest.raises(sapling.Error, match="filters"):
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


def test_append_checks_what_read_trace_checks(tmp_path):
    """Trace.append refuses a frame read_trace would refuse, naming the frame
    and the id, and leaves the trace as it was: what write_trace writes,
    read_trace reads."""
    t = sapling.parse_trace(TEXT)  # ids 2 and 3 live after its three frames
    box = [[0, 0, 1, 1]]
    two = [[0, 0, 1, 1], [0, 0, 1, 1]]
    cases = [
        (dict(moved=[1], moved_boxes=box), "unknown_id", "move", 1, r"move of id 1: id is not live"),
        (dict(removed=[7]), "unknown_id", "remove", 7, r"remove of id 7: id is not live"),
        (dict(added=[3], added_boxes=box), "duplicate_id", "add", 3, r"add of id 3: id is already live"),
        (dict(added=[4, 4], added_boxes=two), "repeated_id", "add", 4,
         r"add of id 4: id already has an operation in this frame"),
        (dict(removed=[2], added=[2], added_boxes=box), "repeated_id", "add", 2,
         r"add of id 2: id already has an operation in this frame"),
        (dict(removed=[2], moved=[2], moved_boxes=box), "repeated_id", "move", 2,
         r"move of id 2: id already has an operation in this frame"),
        (dict(removed=[3, 3]), "repeated_id", "remove", 3, r"remove of id 3: id already has an operation"),
        (dict(filtered=[5], filters=[[1, 1]]), "unknown_id", "set_filter", 5, r"set_filter of id 5: id is not live"),
        (dict(added=[5], added_boxes=box, filtered=[5], filters=[[1, 1]]), "repeated_id", "set_filter", 5,
         r"set_filter of id 5: id already has an operation in this frame"),
        (dict(moved=[2], moved_boxes=box, filtered=[2], filters=[[1, 1]]), "repeated_id", "set_filter", 2,
         r"set_filter of id 2: id already has an operation"),
    ]
    before = t.to_text()
    for kwargs, code, operation, id_, message in cases:
        with pytest.raises(sapling.Error, match=rf"^frame 3: {message}") as e:
            t.append(**kwargs)
        assert (e.value.code, e.value.operation, e.value.id) == (code, operation, id_), kwargs
        assert len(t) == 3 and t.to_text() == before
    # frames that read_trace takes are taken, and an id's life goes on across them
    t.append(removed=[2], added=[1], added_boxes=box)
    t.append(removed=[1], moved=[3], moved_boxes=box)
    t.append(added=[1, 2], added_boxes=two, filtered=[3], filters=[[2, 2]])
    with pytest.raises(sapling.Error, match=r"^frame 6: move of id 4: id is not live$"):
        t.append(moved=[1, 4], moved_boxes=two)
    path = tmp_path / "t.trace"
    sapling.write_trace(path, t)
    back = sapling.read_trace(path)
    assert len(back) == 6 and back.to_text() == t.to_text()
    assert [d[0].tolist() for d in sapling.replay(back)] == [d[0].tolist() for d in sapling.replay(t)]
    # a trace read from text goes on from its last frame's live ids too
    back.append(removed=[1, 2, 3])
    with pytest.raises(sapling.Error, match=r"^frame 7: remove of id 3: id is not live$"):
        back.append(removed=[3])
    assert sapling.parse_trace(back.to_text()).to_text() == back.to_text()


def test_append_agrees_with_the_reader_on_random_frames(rng):
    """Random frames over a few ids, most ops right, some not: each frame is
    appended or refused; a refused frame, written out by hand, is refused by
    the reader with the same reason, and every trace built reads back."""
    t = sapling.Trace(2)
    live = set()
    refused = 0

    def pick(pool, k):
        # mostly from the pool the op needs, now and then any id
        out = []
        for _ in range(k):
            if pool and rng.random() < 0.9:
                out.append(int(rng.choice(sorted(pool))))
            else:
                out.append(int(rng.integers(0, 12)))
        return out

    for frame in range(300):
        dead = set(range(12)) - live
        ops = {"removed": pick(live, rng.integers(0, 3)), "moved": pick(live, rng.integers(0, 3)),
               "added": pick(dead, rng.integers(0, 3)), "filtered": pick(live, rng.integers(0, 2))}
        kwargs = dict(removed=ops["removed"], moved=ops["moved"], moved_boxes=[[0, 0, 1, 1]] * len(ops["moved"]),
                      added=ops["added"], added_boxes=[[0, 0, 1, 1]] * len(ops["added"]), filtered=ops["filtered"],
                      filters=[[1, 1]] * len(ops["filtered"]))
        lines = ([f"remove {i}" for i in ops["removed"]] + [f"move {i} 0 0 1 1" for i in ops["moved"]] +
                 [f"add {i} 0 0 1 1" for i in ops["added"]] + [f"filter {i} 1 1" for i in ops["filtered"]])
        text = t.to_text().replace("sapling-trace 1", "sapling-trace 2") + "frame\n" + "".join(l + "\n" for l in lines)
        try:
            t.append(**kwargs)
        except sapling.Error as e:
            refused += 1
            with pytest.raises(sapling.TraceError) as r:
                sapling.parse_trace(text)
            prefix = f"frame {frame}: "
            assert str(e).startswith(prefix)
            assert r.value.reason == str(e)[len(prefix):].replace("set_filter of", "filter of")
            assert len(t) == frame
            t.append()  # an empty frame keeps the numbering
            continue
        sapling.parse_trace(text)
        live = (live - set(ops["removed"])) | set(ops["added"])
    assert 30 < refused < 270, refused
    assert sapling.parse_trace(t.to_text()).to_text() == t.to_text()
    assert len(sapling.replay(t)) == 300
