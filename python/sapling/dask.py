"""sapling.dask: the one-shot queries on boxes spread over a Dask cluster.

    import dask.array as da, sapling.dask
    boxes = da.from_zarr("boxes.zarr")          # (n, 6) float32, chunked by rows
    pairs = sapling.dask.complete_pairs(boxes)  # (k, 2) uint32, i < j, sorted
    # equals sapling.dask.sort_pairs(sapling.complete_pairs(boxes.compute()))

For boxes too many for one process: each input chunk stays where it is
computed, and only one spatial cell's boxes ever meet in one task.

1. Survey. A strided sample of each chunk's box centres (every s-th row of
   the whole array, so the same rows for any chunking) comes back to the
   caller.
2. Cells. The sample is bisected recursively, each time across its widest
   axis at the quantile that splits the cell count, into `cells` boxes that
   partition space exactly: every interval half-open [lo, hi), the outer
   ones reaching -inf and +inf (+inf itself belongs to the top cell), so
   infinite boxes and boxes at infinity have a place.
3. Split. Each chunk is checked (as the module checks boxes: NaN, min > max,
   a value that is not exactly a float32) and hands each cell the boxes that
   meet it (closed box against half-open cell: min < hi and max >= lo on
   every axis), with their global row indices, in one pass of the module's
   C++ (_split_boxes). A box crossing a border goes to every cell it meets.
4. Pair. Each cell pairs its boxes with the module's one-shot sweep and
   keeps a pair only when the cell holds the pair's reference point, the
   least corner of the two boxes' intersection, max(min_i, min_j) per axis.
   That point lies in both boxes and in exactly one cell, so every
   overlapping pair is reported once, by one cell. In a cell it is a bit
   test: the point lies below the cell's lower border on axis k exactly when
   both boxes start below it there (its upper borders it never crosses,
   since every box of the cell starts below them). The sweep, the test,
   the global indices and the cell's sort by (i, j) (a radix sort on i) are
   one call of the module's C++ (_cell_pairs).
5. Merge. With output="numpy" the caller merges the cells' sorted runs as
   they arrive (_merge_pairs); with output="dask" each cell's sorted pairs
   are cut into row ranges of i and each range is merged from every cell by
   a task, so the result is sorted (by i, then j) without one process
   sorting all of it. With sort=False the cells do not sort and nothing is
   merged: each cell's pairs come as found.

The pairs are exactly those of sapling.complete_pairs on the whole array
(and bipartite_pairs likewise), whose own order is its sweep's; compare
after sort_pairs(). Overlap is closed (touching boxes overlap), 2D boxes are
(n, 4), and indices are uint32, so n < 2**32.

Steps 1 and 2 run when the function is called (they read a sample of the
rows; an input not persisted is computed for them, and again for the
split); with output="dask" the rest runs when the returned array is
computed, and the pairs stay in the cluster until then (a refused box
raises then). Pass cells= a Cells from partition() to skip the survey. A
Dask Client, when one is active, runs everything; otherwise Dask's default
scheduler does (threads: the sweep releases the GIL), or the one named by
scheduler=.
"""

import math
import os
import sys
from collections import namedtuple

import numpy as np

from . import _sapling
from ._sapling import Error

try:
    import dask
    import dask.array as da
except ImportError as missing:  # pragma: no cover - depends on the system
    raise ImportError(
        "sapling.dask needs Dask: Debian's python3-dask (and python3-distributed for a cluster)"
    ) from missing

__all__ = ["Cells", "bipartite_pairs", "complete_pairs", "partition", "sort_pairs"]

# A cell's sample target and its default size, in boxes: the survey brings
# back about SAMPLE_ROWS centres in all, and `cells` defaults to enough cells
# for BOXES_PER_CELL boxes each, and at least two per worker thread.
SAMPLE_ROWS = 1 << 16
BOXES_PER_CELL = 1 << 22
DEFAULT_CHUNK_ROWS = 1 << 20

_INDEX_LIMIT = 1 << 32
_LOW_32_BITS = np.uint64(0xFFFFFFFF)


class Cells(namedtuple("Cells", ["lo", "hi"])):
    """Boxes partitioning space: lo, hi are (cells, dims) float32, with -inf
    and +inf on the outside; a point x is in cell c when lo <= x < hi on
    every axis, or x = hi = +inf."""

    __slots__ = ()

    @property
    def dims(self):
        return self.lo.shape[1]

    def __len__(self):
        return self.lo.shape[0]

    def cell_of(self, points):
        """The cell holding each point of a (m, dims) array: (m,) int."""
        points = np.asarray(points, np.float64).reshape(-1, self.dims)
        holds = np.ones((len(points), len(self)), bool)
        for axis in range(self.dims):
            x = points[:, axis, None]
            lo, hi = self.lo[None, :, axis], self.hi[None, :, axis]
            holds &= (lo <= x) & ((x < hi) | (hi == np.inf))
        return np.argmax(holds, axis=1)


# ---- the public functions -----------------------------------------------------


def complete_pairs(
    boxes, *, cells=None, chunk_rows=None, columns=None, threads=1, output="numpy", sort=True, scheduler=None
):
    """Every overlapping pair (i, j), i < j, of boxes, sorted by i then j.

    boxes: a dask array (n, 2*dims) or (n, 2, dims) chunked by rows (other
    chunkings are rechunked to whole rows), a numpy array (chunked into
    chunk_rows rows, 2**20 unless given), or a dask dataframe with columns
    min_x, min_y[, min_z], max_x, max_y[, max_z] (or the six or four named
    by columns=), rows numbered in order.
    cells: how many spatial cells (default: enough for 2**22 boxes each, and
    at least two per worker thread), or a Cells from partition().
    threads: threads of each cell's sweep (Dask's own workers run cells in
    parallel already).
    output: "numpy" returns a (k, 2) uint32 array; "dask" a (k, 2) uint32
    dask array of unknown chunk sizes, one chunk per row range of i, still
    sorted, computed when asked.
    sort: False skips step 5: the same pairs, i < j still, in an order set
    by the cells (each cell's pairs in its sweep's order, the cells in
    turn), one chunk per cell with output="dask"; for a caller who needs
    the set, not the order.
    """
    _check_output(output)
    rows = _row_chunked(boxes, "boxes", chunk_rows, columns)
    dims = rows.shape[1] // 2
    layout = _Layout.of(rows)
    if layout.total == 0:
        return _empty_result(output)
    cells = _resolve_cells(cells, [(rows, layout, "boxes")], dims, scheduler)

    chunks = rows.to_delayed().ravel()
    split = dask.delayed(_split_chunk, nout=len(cells), pure=True)
    pieces = [split(chunk, first, cells, "boxes") for chunk, first in zip(chunks, layout.starts)]
    ranges = _output_ranges(layout.total, len(cells), output) if sort else None
    pair = dask.delayed(_pair_cell_complete, nout=_range_count(ranges), pure=True)
    by_cell = [pair(cells.lo[c], ranges, threads, *[p[c] for p in pieces]) for c in range(len(cells))]
    return _merge(by_cell, ranges, output, scheduler)


def bipartite_pairs(
    a, b, *, cells=None, chunk_rows=None, columns=None, threads=1, output="numpy", sort=True, scheduler=None
):
    """Every (i, j) with a[i] overlapping b[j], sorted by i then j: what
    sapling.bipartite_pairs(a, b) finds. a and b are each given as
    complete_pairs() takes boxes, with the same dims; the cells are cut
    from a sample of both, and the other arguments are complete_pairs()'s."""
    _check_output(output)
    rows_a = _row_chunked(a, "a", chunk_rows, columns)
    rows_b = _row_chunked(b, "b", chunk_rows, columns)
    dims = rows_a.shape[1] // 2
    if rows_b.shape[1] != rows_a.shape[1]:
        raise _argument_error(f"b must have the dims of a ({dims}), not {rows_b.shape[1] // 2}")
    layout_a, layout_b = _Layout.of(rows_a), _Layout.of(rows_b)
    if layout_a.total == 0 or layout_b.total == 0:
        return _empty_result(output)
    cells = _resolve_cells(cells, [(rows_a, layout_a, "a"), (rows_b, layout_b, "b")], dims, scheduler)

    split = dask.delayed(_split_chunk, nout=len(cells), pure=True)
    pieces_a = [split(chunk, first, cells, "a") for chunk, first in zip(rows_a.to_delayed().ravel(), layout_a.starts)]
    pieces_b = [split(chunk, first, cells, "b") for chunk, first in zip(rows_b.to_delayed().ravel(), layout_b.starts)]
    ranges = _output_ranges(layout_a.total, len(cells), output) if sort else None
    pair = dask.delayed(_pair_cell_bipartite, nout=_range_count(ranges), pure=True)
    by_cell = [
        pair(cells.lo[c], ranges, threads, len(pieces_a), *[p[c] for p in pieces_a], *[p[c] for p in pieces_b])
        for c in range(len(cells))
    ]
    return _merge(by_cell, ranges, output, scheduler)


def partition(boxes, cells=None, *, chunk_rows=None, columns=None, scheduler=None):
    """Cuts space into `cells` cells from a sample of the boxes' centres
    (steps 1 and 2 above; the boxes themselves are checked by the join's
    split): the Cells complete_pairs() would use, to reuse over several
    queries on similar boxes. boxes: as complete_pairs() takes them, or a
    list of such sets (bipartite)."""
    sets = boxes if isinstance(boxes, (list, tuple)) else [boxes]
    rows = [_row_chunked(s, "boxes", chunk_rows, columns) for s in sets]
    dims = rows[0].shape[1] // 2
    for r in rows[1:]:
        if r.shape[1] != rows[0].shape[1]:
            raise _argument_error("every set of boxes must have the same dims")
    return _survey_and_cut(
        [(r, _Layout.of(r), "boxes") for r in rows], dims, cells, scheduler
    )


def sort_pairs(pairs):
    """(k, 2) uint32 pairs sorted by first index, then second: the order of
    this module's results, to compare them with the module's own."""
    keys = _pair_keys(np.asarray(pairs, np.uint32).reshape(-1, 2))
    keys.sort()
    return _keys_to_pairs(keys)


# ---- input ------------------------------------------------------------------


def _argument_error(message):
    """sapling.Error for an argument refused here, as the module raises it."""
    error = Error(message)
    error.code, error.operation, error.id, error.index = "invalid_argument", None, None, None
    return error


def _check_output(output):
    if output not in ("numpy", "dask"):
        raise _argument_error(f"output must be 'numpy' or 'dask', not {output!r}")


def _dataframe_columns(frame, columns):
    if columns is not None:
        columns = list(columns)
        if len(columns) not in (4, 6):
            raise _argument_error(f"columns must name 4 or 6 columns (min then max), not {len(columns)}")
        return columns
    for axes in ("xyz", "xy"):
        names = [f"min_{a}" for a in axes] + [f"max_{a}" for a in axes]
        if all(name in frame.columns for name in names):
            return names
    raise _argument_error(
        "a dataframe of boxes needs columns min_x, min_y[, min_z], max_x, max_y[, max_z], or columns= naming them"
    )


def _row_chunked(boxes, what, chunk_rows, columns):
    """The boxes as a dask array (n, 2*dims) chunked by rows only, with
    known chunk sizes; shape and dtype refused as the module refuses them."""
    if hasattr(boxes, "to_dask_array") and hasattr(boxes, "columns"):  # a dask dataframe
        boxes = boxes[_dataframe_columns(boxes, columns)].to_dask_array(lengths=True)
    elif not isinstance(boxes, da.Array):
        array = np.asarray(boxes)
        rows = chunk_rows or DEFAULT_CHUNK_ROWS
        boxes = da.from_array(array, chunks=(rows,) + array.shape[1:]) if array.ndim >= 1 else array
    shape = tuple(boxes.shape)
    if len(shape) == 2 and shape[1] in (4, 6):
        pass
    elif len(shape) == 3 and shape[1] == 2 and shape[2] in (2, 3):
        boxes = boxes.rechunk({1: -1, 2: -1}).reshape((shape[0], 2 * shape[2]))
    else:
        raise _argument_error(f"{what} must have shape (n, 4), (n, 6) or (n, 2, dims), not {shape}")
    if boxes.dtype.kind not in "fiu":
        raise TypeError(f"{what} must hold real numbers, not {boxes.dtype}")
    if any(math.isnan(c) for c in boxes.chunks[0]):
        boxes = boxes.compute_chunk_sizes()
    if len(boxes.chunks[1]) != 1:
        boxes = boxes.rechunk({1: -1})
    if boxes.shape[0] >= _INDEX_LIMIT:
        raise _argument_error(f"{what}: {boxes.shape[0]} boxes; indices are uint32, so at most {_INDEX_LIMIT - 1}")
    return boxes


class _Layout(namedtuple("_Layout", ["starts", "total"])):
    """The first global row of each chunk, and the row count."""

    @classmethod
    def of(cls, rows):
        sizes = [int(c) for c in rows.chunks[0]]
        return cls(list(np.cumsum([0] + sizes[:-1]).tolist()), sum(sizes))


# ---- steps 1 and 2: survey and cut ------------------------------------------


def _resolve_cells(cells, sets, dims, scheduler):
    if isinstance(cells, Cells):
        if cells.dims != dims:
            raise _argument_error(f"cells are {cells.dims}-D, the boxes {dims}-D")
        return cells
    return _survey_and_cut(sets, dims, cells, scheduler)


def _survey_and_cut(sets, dims, count, scheduler):
    if count is None:
        total = sum(layout.total for _, layout, _ in sets)
        count = max(2 * _worker_threads(scheduler), math.ceil(total / BOXES_PER_CELL))
    if not isinstance(count, (int, np.integer)) or isinstance(count, bool) or count < 1:
        raise _argument_error(f"cells must be a positive integer or a Cells, not {count!r}")
    total = sum(layout.total for _, layout, _ in sets)
    stride = max(1, total // SAMPLE_ROWS)
    survey = dask.delayed(_survey_chunk, pure=True)
    samples = [
        survey(chunk, first, stride, what)
        for rows, layout, what in sets
        for chunk, first in zip(rows.to_delayed().ravel(), layout.starts)
    ]
    samples = dask.compute(*samples, scheduler=scheduler)
    centres = np.concatenate(samples) if samples else np.empty((0, dims))
    lo = np.full(dims, -np.inf, np.float32)
    hi = np.full(dims, np.inf, np.float32)
    leaves = []
    _bisect(centres, int(count), lo, hi, leaves)
    return Cells(np.array([c[0] for c in leaves]), np.array([c[1] for c in leaves]))


def _worker_threads(scheduler):
    """Threads of the active Dask Client's workers, else this machine's cores."""
    if scheduler is None and "distributed" in sys.modules:
        try:
            client = sys.modules["distributed"].default_client()
            return max(1, sum(client.nthreads().values()))
        except (ValueError, AttributeError):
            pass
    return os.cpu_count() or 1


def _survey_chunk(chunk, first_row, stride, what):
    """The finite centres, as float64, of the chunk's rows whose global
    index is a multiple of stride (the boxes are checked later, in the
    split, which reads every one)."""
    rows = np.asarray(chunk)
    rows = rows.reshape(len(rows), -1)
    dims = rows.shape[1] // 2
    with np.errstate(invalid="ignore", over="ignore"):
        sample = rows[(-first_row) % stride :: stride].astype(np.float64)
        centres = (sample[:, :dims] + sample[:, dims:]) * 0.5
    return centres[np.isfinite(centres).all(axis=1)]


def _float32_rows(chunk, first_row, what):
    """The chunk as contiguous float32 rows, each value exactly the one
    given; a refused box raises the module's own error, its index global."""
    rows = np.asarray(chunk)
    rows = rows.reshape(len(rows), -1)
    dims = rows.shape[1] // 2
    converted = np.ascontiguousarray(rows, np.float32)
    good = (converted[:, :dims] <= converted[:, dims:]).all(axis=1)  # false for NaN
    if rows.dtype != np.float32:
        with np.errstate(invalid="ignore", over="ignore"):
            exact = (converted == rows) | (rows != rows)  # NaN is left to the box check
        good &= exact.all(axis=1)
    if not good.all():
        _raise_as_module(rows, int(np.argmin(good)), first_row, what)
    return converted


def _raise_as_module(rows, bad, first_row, what):
    """Has the module check row `bad` alone and raises its error, renamed to
    the row's global index first_row + bad."""
    row = first_row + bad
    try:
        _sapling.complete_pairs(rows[bad : bad + 1])
    except Error as refused:
        message = str(refused).replace("box 0:", f"box {row}:", 1).replace("boxes[0,", f"{what}[{row},", 1)
        error = Error(message)
        error.code, error.operation, error.id = refused.code, refused.operation, refused.id
        error.index = row
        raise error from None
    raise _argument_error(f"{what}[{row}] refused: {rows[bad]}")  # the module took it: not reached


def _bisect(centres, count, lo, hi, leaves):
    """Cuts the cell [lo, hi) into `count` cells holding about equal shares
    of `centres`, across the widest axis; fewer where the centres cannot be
    told apart."""
    if count > 1 and len(centres) > 1:
        spread = centres.max(axis=0) - centres.min(axis=0)
        axis = int(np.argmax(spread))
        if spread[axis] > 0:
            left_count = count // 2
            values = np.sort(centres[:, axis])
            split = np.float32(values[min(len(values) - 1, len(values) * left_count // count)])
            if split <= values[0]:  # ties at the bottom: cut just above them
                split = np.float32(values[np.searchsorted(values, values[0], side="right")])
            if values[0] < split <= values[-1]:
                below = centres[:, axis] < split
                left_hi, right_lo = hi.copy(), lo.copy()
                left_hi[axis] = right_lo[axis] = split
                _bisect(centres[below], left_count, lo, left_hi, leaves)
                _bisect(centres[~below], count - left_count, right_lo, hi, leaves)
                return
    leaves.append((lo, hi))


# ---- steps 3 to 5: split, pair, merge ---------------------------------------


def _split_chunk(chunk, first_row, cells, what):
    """Checks the chunk's boxes (as the module checks them) and gives each
    cell (global indices, boxes) of those that meet it: min < hi (or hi =
    +inf) and max >= lo on every axis. One pass in the module's C++."""
    rows = np.asarray(chunk)
    rows = rows.reshape(len(rows), -1)
    if rows.dtype != np.float32:
        rows = _float32_rows(rows, first_row, what)  # values exactly float32, else its error
    pieces = _sapling._split_boxes(rows, first_row, cells.lo, cells.hi)
    if pieces is None:  # an invalid box: the module's error, its index global
        _float32_rows(rows, first_row, what)
    return tuple(pieces)


def _gather(pieces):
    """A cell's pieces from every chunk as one (indices, boxes): rising
    indices, since the chunks come in order."""
    pieces = [p for p in pieces if len(p[0])]
    if not pieces:
        return np.empty(0, np.uint32), None
    if len(pieces) == 1:
        return pieces[0]
    return np.concatenate([p[0] for p in pieces]), np.concatenate([p[1] for p in pieces])


def _pair_cell_complete(cell_lo, ranges, threads, *pieces):
    indices, boxes = _gather(pieces)
    if len(indices) < 2:
        return _hand_over(np.empty((0, 2), np.uint32), ranges)
    # The sweep, the reference-point test, the indices made global (rising,
    # so i < j stays i < j) and the sort by i, j, in the module's C++.
    pairs = _sapling._cell_pairs(boxes, indices, None, None, cell_lo, threads, ranges is not None)
    return _hand_over(pairs, ranges)


def _pair_cell_bipartite(cell_lo, ranges, threads, count_a, *pieces):
    indices_a, boxes_a = _gather(pieces[:count_a])
    indices_b, boxes_b = _gather(pieces[count_a:])
    if len(indices_a) == 0 or len(indices_b) == 0:
        return _hand_over(np.empty((0, 2), np.uint32), ranges)
    pairs = _sapling._cell_pairs(boxes_a, indices_a, boxes_b, indices_b, cell_lo, threads, ranges is not None)
    return _hand_over(pairs, ranges)


def _pair_keys(pairs):
    return (pairs[:, 0].astype(np.uint64) << np.uint64(32)) | pairs[:, 1].astype(np.uint64)


def _keys_to_pairs(keys):
    pairs = np.empty((len(keys), 2), np.uint32)
    pairs[:, 0] = keys >> np.uint64(32)
    pairs[:, 1] = keys & _LOW_32_BITS
    return pairs


def _output_ranges(total, count, output):
    """Row ranges of i, one result chunk each: count + 1 borders; one range
    for numpy output, whose merge is the caller's."""
    return np.linspace(0, total, (count if output == "dask" else 1) + 1).astype(np.uint64).tolist()


def _range_count(ranges):
    return 1 if ranges is None else len(ranges) - 1


def _hand_over(pairs, ranges):
    """A cell's (k, 2) pairs of global indices: as they are when unsorted
    (ranges None), else (sorted by i, then j) cut at the row ranges' borders."""
    if ranges is None:
        return (pairs,)
    borders = np.searchsorted(pairs[:, 0], np.array(ranges[1:-1], np.uint64))
    return tuple(np.split(pairs, borders))


def _merge_range(*sorted_runs):
    """One row range's pairs from every cell: their sorted runs merged, as
    (k, 2) uint32."""
    return _sapling._merge_pairs(sorted_runs)


def _merge(by_cell, ranges, output, scheduler):
    if output == "numpy" and ranges is not None:  # the cells' sorted runs merged here, as they arrive
        return _sapling._merge_pairs(dask.compute(*[cell[0] for cell in by_cell], scheduler=scheduler))
    if ranges is None:  # unsorted: each cell's pairs as they are
        ranges = [cell[0] for cell in by_cell]
    else:
        merge = dask.delayed(_merge_range, pure=True)
        ranges = [merge(*[cell[r] for cell in by_cell]) for r in range(len(ranges) - 1)]
    if output == "dask":
        parts = [da.from_delayed(r, shape=(math.nan, 2), dtype=np.uint32) for r in ranges]
        return da.concatenate(parts)
    return np.concatenate(dask.compute(*ranges, scheduler=scheduler))


def _empty_result(output):
    empty = np.empty((0, 2), np.uint32)
    return da.from_array(empty) if output == "dask" else empty
