"""sapling.dask on a two-process LocalCluster against sapling.complete_pairs
and sapling.bipartite_pairs on the whole array: the same pairs, sorted, for
scenes that probe the cells (borders met exactly, boxes in every cell, boxes
at infinity) and the chunks (one, many, uneven), and the module's errors
with global box indices."""

import numpy as np
import pytest

import sapling
from conftest import random_boxes

dask = pytest.importorskip("dask", reason="sapling.dask needs Dask (Debian: python3-dask)")
distributed = pytest.importorskip("distributed", reason="the cluster tests need python3-distributed")
import dask.array as da  # noqa: E402
import sapling.dask as sd  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster, distributed.Client(cluster) as c:
        yield c


def expected_complete(boxes):
    return sd.sort_pairs(sapling.complete_pairs(np.asarray(boxes)))


def expected_bipartite(a, b):
    return sd.sort_pairs(sapling.bipartite_pairs(np.asarray(a), np.asarray(b)))


def assert_same(got, want):
    assert got.dtype == np.uint32 and got.shape == want.shape
    assert np.array_equal(got, want)


def clustered_boxes(rng, n, dims=3):
    centres = rng.uniform(0, 200, size=(6, dims))
    lo = centres[rng.integers(0, 6, n)] + rng.normal(0, 3, size=(n, dims))
    lo = lo.astype(np.float32)
    return np.concatenate([lo, lo + rng.uniform(0, 2, size=(n, dims)).astype(np.float32)], axis=1)


def lattice_cells(splits):
    """Cells cut at the given integer planes on each axis: a grid."""
    edges = [np.concatenate([[-np.inf], s, [np.inf]]).astype(np.float32) for s in splits]
    grids = np.meshgrid(*[np.arange(len(e) - 1) for e in edges], indexing="ij")
    index = [g.ravel() for g in grids]
    lo = np.stack([edges[k][index[k]] for k in range(len(edges))], axis=1)
    hi = np.stack([edges[k][index[k] + 1] for k in range(len(edges))], axis=1)
    return sd.Cells(lo, hi)


class finished_tasks:
    """The keys and workers of the tasks the scheduler finished inside the
    block, counted by the task-stream plugin's running index. (Dask's own
    get_task_stream selects by the workers' clock and can miss a short
    computation on a loaded machine.)"""

    def __init__(self, client):
        self.client = client
        client.get_task_stream(start=0, stop=0)  # registers the plugin
        self.data = []

    @staticmethod
    def _since(dask_scheduler, index):
        plugin = dask_scheduler.plugins["task-stream"]
        count = plugin.index - index
        tail = list(plugin.buffer)[-count:] if count > 0 else []
        return plugin.index, [(str(t["key"]), t.get("worker")) for t in tail]

    def __enter__(self):
        self.start, _ = self.client.run_on_scheduler(self._since, index=0)
        return self

    def __exit__(self, *exc):
        _, self.data = self.client.run_on_scheduler(self._since, index=self.start)


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("chunk_rows,cells", [(5000, None), (700, 7), (333, 1)])
def test_random_boxes(client, rng, dims, chunk_rows, cells):
    boxes = random_boxes(rng, 5000, dims, extent=60)
    with finished_tasks(client) as stream:
        got = sd.complete_pairs(da.from_array(boxes, chunks=chunk_rows), cells=cells)
    assert_same(got, expected_complete(boxes))
    # the cluster's two worker processes paired the cells (a lone cell's
    # chain of tasks is fused into one under another name)
    paired = [key for key, _ in stream.data if "_pair_cell_complete" in key]
    assert len(client.scheduler_info()["workers"]) == 2 and stream.data
    assert paired or cells == 1


def test_clustered_boxes_many_chunks(client, rng):
    boxes = clustered_boxes(rng, 6000)
    # uneven chunks, and the (n, 2, dims) layout
    array = da.from_array(boxes.reshape(-1, 2, 3), chunks=((1, 999, 2500, 500, 2000), 2, 3))
    assert_same(sd.complete_pairs(array, cells=9), expected_complete(boxes))


def test_identical_boxes(client):
    boxes = np.tile(np.array([[1, 2, 3, 4, 5, 6]], np.float32), (300, 1))
    boxes = np.concatenate([boxes, random_boxes(np.random.default_rng(5), 200, 3, extent=10)])
    got = sd.complete_pairs(da.from_array(boxes, chunks=64), cells=6)
    assert_same(got, expected_complete(boxes))
    assert len(got) >= 300 * 299 // 2


def test_faces_and_points_on_cell_borders(client):
    # unit cubes on an integer lattice touch their neighbours exactly on the
    # cells' borders (the planes x = 2, 4; y = 3; z = 1), and points sit on
    # the lattice's corners, on those borders and off them
    axis = np.arange(-1, 6, dtype=np.float32)
    corners = np.stack(np.meshgrid(axis, axis, axis, indexing="ij"), axis=-1).reshape(-1, 3)
    cubes = np.concatenate([corners, corners + 1], axis=1)
    points = np.concatenate([corners, corners], axis=1)
    halves = np.concatenate([corners + 0.5, corners + 0.5], axis=1)
    boxes = np.concatenate([cubes, points, halves, points[:50]])
    cells = lattice_cells([[2, 4], [3], [1]])
    got = sd.complete_pairs(da.from_array(boxes, chunks=200), cells=cells)
    assert_same(got, expected_complete(boxes))
    assert_same(sd.complete_pairs(boxes, cells=5, chunk_rows=300), expected_complete(boxes))


def test_infinite_boxes_span_every_cell(client, rng):
    inf = np.float32(np.inf)
    boxes = random_boxes(rng, 2000, 3, extent=50)
    special = np.array(
        [
            [-inf, -inf, -inf, inf, inf, inf],  # all of space
            [-inf, -inf, -inf, inf, inf, inf],
            [10, -inf, 10, inf, 20, inf],  # half-spaces
            [-inf, 0, 0, 25, 25, inf],
            [inf, inf, inf, inf, inf, inf],  # points at infinity
            [inf, inf, inf, inf, inf, inf],
            [-inf, -inf, -inf, -inf, -inf, -inf],
            [30, 30, 30, 30, 30, 30],
        ],
        np.float32,
    )
    boxes = np.concatenate([boxes[:1000], special, boxes[1000:]])
    got = sd.complete_pairs(da.from_array(boxes, chunks=250), cells=8)
    assert_same(got, expected_complete(boxes))


def test_bipartite(client, rng):
    a = random_boxes(rng, 3000, 3, extent=60)
    b = clustered_boxes(rng, 2000)
    b[::97] = a[: len(b[::97])]  # shared boxes
    want = expected_bipartite(a, b)
    assert_same(sd.bipartite_pairs(da.from_array(a, chunks=900), da.from_array(b, chunks=400), cells=6), want)
    assert_same(sd.bipartite_pairs(a, b, cells=1), want)
    assert_same(sd.bipartite_pairs(b, a), expected_bipartite(b, a))
    a2, b2 = random_boxes(rng, 1500, 2, extent=40), random_boxes(rng, 700, 2, extent=40)
    assert_same(sd.bipartite_pairs(a2, b2, chunk_rows=128, cells=5), expected_bipartite(a2, b2))


def test_empty_and_tiny(client):
    empty = np.empty((0, 6), np.float32)
    one = np.array([[0, 0, 0, 1, 1, 1]], np.float32)
    assert_same(sd.complete_pairs(empty), expected_complete(empty))
    assert_same(sd.complete_pairs(da.from_array(empty)), expected_complete(empty))
    assert_same(sd.complete_pairs(one), expected_complete(one))
    assert_same(sd.bipartite_pairs(empty, one), expected_bipartite(empty, one))
    assert_same(sd.bipartite_pairs(one, one), expected_bipartite(one, one))
    assert sd.complete_pairs(empty, output="dask").compute().shape == (0, 2)


def test_dask_output_and_inputs(client, rng):
    boxes = random_boxes(rng, 4000, 3, extent=60)
    want = expected_complete(boxes)
    lazy = sd.complete_pairs(da.from_array(boxes, chunks=1000), cells=4, output="dask")
    assert isinstance(lazy, da.Array) and lazy.dtype == np.uint32
    assert_same(lazy.compute(), want)
    # float64 and integers exactly float32 are taken, as by the module
    assert_same(sd.complete_pairs(da.from_array(boxes.astype(np.float64), chunks=999)), want)
    ints = rng.integers(0, 40, size=(1000, 6)).astype(np.int64)
    ints[:, 3:] = ints[:, :3] + rng.integers(0, 3, size=(1000, 3))
    assert_same(sd.complete_pairs(ints, chunk_rows=300), expected_complete(ints))
    # unsorted: the same pairs, in the cells' order
    assert_same(sd.sort_pairs(sd.complete_pairs(boxes, cells=5, sort=False)), want)
    unsorted = sd.complete_pairs(da.from_array(boxes, chunks=700), cells=3, sort=False, output="dask").compute()
    assert_same(sd.sort_pairs(unsorted), want)
    assert np.all(unsorted[:, 0] < unsorted[:, 1])
    a, b = boxes[:2500], boxes[2500:]
    assert_same(sd.sort_pairs(sd.bipartite_pairs(a, b, cells=4, sort=False)), expected_bipartite(a, b))
    # cells reused from partition()
    cells = sd.partition(boxes, 5)
    assert len(cells) == 5 and cells.dims == 3
    assert_same(sd.complete_pairs(boxes, cells=cells), want)


def test_dataframe(client, rng):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    boxes = random_boxes(rng, 3000, 3, extent=60)
    names = ["min_x", "min_y", "min_z", "max_x", "max_y", "max_z"]
    frame = dd.from_pandas(pd.DataFrame(boxes, columns=names).assign(mass=1.0), npartitions=4)
    assert_same(sd.complete_pairs(frame, cells=3), expected_complete(boxes))
    renamed = frame.rename(columns=dict(zip(names, "abcdef")))
    assert_same(sd.complete_pairs(renamed, columns="abcdef"), expected_complete(boxes))


@pytest.mark.filterwarnings("ignore:Running on a single-machine scheduler")
def test_other_schedulers(rng):
    boxes = random_boxes(rng, 2000, 3, extent=40)
    for scheduler in ("threads", "sync"):
        got = sd.complete_pairs(da.from_array(boxes, chunks=500), cells=4, scheduler=scheduler)
        assert_same(got, expected_complete(boxes))


def test_refused_boxes_named_globally(client, rng):
    boxes = random_boxes(rng, 3000, 3, extent=60)
    nan = boxes.copy()
    nan[2345, 1] = np.nan
    with pytest.raises(sapling.Error, match=r"^box 2345: invalid box: min\.y is NaN") as e:
        sd.complete_pairs(da.from_array(nan, chunks=1000))
    assert e.value.index == 2345 and e.value.code == "invalid_box"
    flipped = boxes.copy()
    flipped[1999, 5] = flipped[1999, 2] - 1
    with pytest.raises(sapling.Error, match=r"^box 1999: invalid box: min\.z > max\.z"):
        sd.bipartite_pairs(boxes[:10], da.from_array(flipped, chunks=700))
    inexact = boxes.astype(np.float64)
    inexact[2001, 4] += 1e-9
    with pytest.raises(sapling.Error, match=r"^boxes\[2001, 4\] = .* is not exactly a float32") as e:
        sd.complete_pairs(da.from_array(inexact, chunks=500))
    assert e.value.index == 2001 and e.value.code == "invalid_argument"


def test_refused_arguments():
    with pytest.raises(sapling.Error, match="shape"):
        sd.complete_pairs(np.zeros((5, 5), np.float32))
    with pytest.raises(sapling.Error, match="dims"):
        sd.bipartite_pairs(np.zeros((5, 6), np.float32), np.zeros((5, 4), np.float32))
    with pytest.raises(TypeError, match="real numbers"):
        sd.complete_pairs(np.array([["a"] * 6]))
    with pytest.raises(sapling.Error, match="cells"):
        sd.complete_pairs(np.zeros((5, 6), np.float32), cells=0)
    with pytest.raises(sapling.Error, match="output"):
        sd.complete_pairs(np.zeros((5, 6), np.float32), output="list")


def test_refused_boxes_named_globally_with_cells_given(client, rng):
    # The split checks every box, so a refused box is named by its global
    # row with cells= given (no survey) too, and with output="dask" when computed.
    boxes = random_boxes(rng, 3000, 3, extent=60)
    cells = sd.partition(boxes, 4)
    nan = boxes.copy()
    nan[2345, 4] = np.nan
    with pytest.raises(sapling.Error, match=r"^box 2345: invalid box: max\.y is NaN") as e:
        sd.complete_pairs(da.from_array(nan, chunks=1000), cells=cells)
    assert e.value.index == 2345
    with pytest.raises(sapling.Error, match=r"^box 17: invalid box"):
        sd.bipartite_pairs(boxes, nan[2328:], cells=cells, output="dask").compute()


def reference_cell_pairs(a, index_a, b, index_b, cell_lo):
    """What _cell_pairs returns, in numpy: the sweep's pairs whose two boxes
    do not both start below cell_lo on one axis, as global indices, sorted."""
    local = sapling.complete_pairs(a) if b is None else sapling.bipartite_pairs(a, b)
    b, index_b = (a, index_a) if b is None else (b, index_b)
    dims = a.shape[1] // 2
    i, j = local[:, 0], local[:, 1]
    both_below = np.zeros(len(local), bool)
    for k in range(dims):
        both_below |= (a[i, k] < cell_lo[k]) & (b[j, k] < cell_lo[k])
    kept = np.stack([index_a[i[~both_below]], index_b[j[~both_below]]], axis=1).astype(np.uint32)
    return sd.sort_pairs(kept)


@pytest.mark.parametrize("dims", [2, 3])
def test_cell_pairs_binding(rng, dims):
    a = random_boxes(rng, 3000, dims, extent=30)
    b = random_boxes(rng, 2000, dims, extent=30)
    index_a = np.sort(rng.choice(1 << 31, len(a), replace=False)).astype(np.uint32)
    index_b = np.sort(rng.choice(1 << 31, len(b), replace=False)).astype(np.uint32)
    for cell_lo in ([-np.inf] * dims, [10.0] * dims, [-np.inf, 12.0, 5.0][:dims]):
        cell_lo = np.array(cell_lo, np.float32)
        want = reference_cell_pairs(a, index_a, None, None, cell_lo)
        got = sapling._sapling._cell_pairs(a, index_a, None, None, cell_lo, 1, True)
        assert_same(got, want)
        assert_same(sd.sort_pairs(sapling._sapling._cell_pairs(a, index_a, None, None, cell_lo, 2, False)), want)
        want = reference_cell_pairs(a, index_a, b, index_b, cell_lo)
        assert_same(sapling._sapling._cell_pairs(a, index_a, b, index_b, cell_lo, 1, True), want)
        assert_same(sapling._sapling._cell_pairs(a, index_a, b, index_b, cell_lo, 2, True), want)
    with pytest.raises(sapling.Error, match="rise"):
        sapling._sapling._cell_pairs(a, index_a[::-1].copy(), None, None, cell_lo, 1, True)
    with pytest.raises(sapling.Error, match="one index per box"):
        sapling._sapling._cell_pairs(a, index_a[1:], None, None, cell_lo, 1, True)


def test_split_and_merge_bindings(rng):
    boxes = random_boxes(rng, 5000, 3, extent=30)
    boxes[7, 3:] = np.inf  # reaching +inf: met by the top cells only on those axes
    boxes[8, :] = np.inf  # a point at +inf: the top cell's
    boxes[9, :3] = -np.inf  # from -inf
    cells = lattice_cells([[10.0, 20.0], [15.0], [np.float32(7.5)]])
    pieces = sapling._sapling._split_boxes(boxes, 1000, cells.lo, cells.hi)
    assert len(pieces) == len(cells)
    for (indices, got), lo, hi in zip(pieces, cells.lo, cells.hi):
        meets = np.all((boxes[:, :3] < hi) | (hi == np.inf), axis=1) & np.all(boxes[:, 3:] >= lo, axis=1)
        assert indices.dtype == np.uint32 and np.array_equal(indices, np.flatnonzero(meets) + 1000)
        assert got.dtype == np.float32 and np.array_equal(got, boxes[meets])
    assert [8 in p[0] - 1000 for p in pieces].count(True) == 1
    bad = boxes.copy()
    bad[3, 0] = np.nan
    assert sapling._sapling._split_boxes(bad, 0, cells.lo, cells.hi) is None

    runs = [sd.sort_pairs(rng.integers(0, 50, size=(k, 2)).astype(np.uint32)) for k in (0, 40, 7, 300, 1, 90)]
    for count in range(len(runs) + 1):
        want = sd.sort_pairs(np.concatenate(runs[:count]) if count else np.empty((0, 2), np.uint32))
        assert_same(sapling._sapling._merge_pairs(runs[:count]), want)
