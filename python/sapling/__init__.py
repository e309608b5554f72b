"""sapling: exact broad-phase collision detection, numpy in, numpy out.

    import numpy as np, sapling
    bp = sapling.BroadPhase(dims=3)   # algorithm "auto" unless named
    bp.add(np.array([7, 9], np.uint32),
           np.array([[0, 0, 0, 1, 1, 1], [0.5, 0.5, 0.5, 2, 2, 2]], np.float32))
    created, deleted = bp.update()      # (k, 2) uint32 id pairs, a < b, sorted

Boxes are (n, 2*dims) arrays, min then max (x, y[, z]), or (n, 2, dims).
Intervals are closed: touching boxes overlap. A float32 C-contiguous array is
read in place (no copy); float32 in another layout is copied unchanged;
float64 and integer arrays are converted only when every value is exactly a
float32, and refused otherwise (sapling never changes a box silently; use
round_outward() to round explicitly); so are a ray's origin, direction and
max_t and a query box. Ids are uint32 (other integer arrays are converted
when in range); threads, max_pairs, dims, an id, a category or a mask is a
Python or numpy integer in range.

A refused call changes nothing and raises sapling.Error, a ValueError: with
the library's message ("add of id 9: invalid box: min.y > max.y") and its
fields code, operation, id, index; or, for an argument refused before the
library sees it (a value out of range or not an integer, a shape, a float
that is not exactly a float32), code 'invalid_argument' and a message naming
the argument. TypeError is raised only for an argument that is not a real
number where numbers are due (a string, None, a bool, a complex or object
dtype); TraceError (a sapling.Error) for a trace the reader refuses; OSError
for a file. The work runs with the GIL released.
"""

import os
from collections import namedtuple

import numpy as np

from ._sapling import (
    ALL_CATEGORIES,
    BoxPruner,
    BroadPhase,
    Error,
    Trace,
    TraceError,
    UnisizePruner,
    _algorithms,
    bipartite_pairs,
    complete_pairs,
    id_list_hash,
    pair_set_hash,
    parse_trace,
    replay,
    unisize_pairs,
)
from . import _sapling

__version__ = "0.1.0"

__all__ = [
    "ALL_CATEGORIES",
    "AlgorithmInfo",
    "BoxPruner",
    "BroadPhase",
    "Error",
    "Trace",
    "TraceError",
    "UnisizePruner",
    "algorithms",
    "bipartite_pairs",
    "complete_pairs",
    "id_list_hash",
    "pair_set_hash",
    "parse_trace",
    "read_trace",
    "replay",
    "round_outward",
    "unisize_pairs",
    "write_trace",
]

AlgorithmInfo = namedtuple("AlgorithmInfo", ["name", "description", "accepts_any_box"])
AlgorithmInfo.__doc__ = "A registered algorithm: what BroadPhase(algorithm=name) builds."


def algorithms():
    """Every registered algorithm, built-in ones first, as AlgorithmInfo."""
    return [AlgorithmInfo(*info) for info in _algorithms()]


def read_trace(path):
    """Reads and checks a trace file (str or path-like); raises TraceError naming the line."""
    return _sapling.read_trace(os.fspath(path))


def write_trace(path, trace):
    """Writes `trace` to a file (str or path-like) in the text format; floats read back exactly."""
    _sapling.write_trace(os.fspath(path), trace)


def _argument_error(message):
    """sapling.Error for an argument refused here, as the module raises it."""
    error = Error(message)
    error.code, error.operation, error.id, error.index = "invalid_argument", None, None, None
    return error


def round_outward(boxes):
    """Boxes as float32, each min rounded down and each max rounded up.

    The float32 box contains the given one, so no overlap is lost; boxes that
    were apart by less than a float32 step may then touch. `boxes` is (n, 2*d)
    or (n, 2, d) of any real dtype (integers beyond 2**53 go through float64).
    Values already exactly float32 are unchanged.
    """
    a = np.asarray(boxes)
    if a.dtype.kind not in "fiu":
        raise TypeError(f"boxes must hold real numbers, not {a.dtype}")
    if a.dtype.kind in "iu" or a.dtype.itemsize < 8:
        a = a.astype(np.float64)
    if a.ndim == 2 and a.shape[1] in (4, 6):
        d = a.shape[1] // 2
        lo, hi = a[:, :d], a[:, d:]
    elif a.ndim == 3 and a.shape[1] == 2 and a.shape[2] in (2, 3):
        lo, hi = a[:, 0, :], a[:, 1, :]
    else:
        raise _argument_error(f"boxes must have shape (n, 4), (n, 6) or (n, 2, dims), not {a.shape}")
    out = np.empty(a.shape, np.float32)
    if a.ndim == 2:
        out_lo, out_hi = out[:, :d], out[:, d:]
    else:
        out_lo, out_hi = out[:, 0, :], out[:, 1, :]
    with np.errstate(over="ignore", invalid="ignore"):
        f_lo = lo.astype(np.float32)
        f_hi = hi.astype(np.float32)
        f_lo = np.where(f_lo > lo, np.nextafter(f_lo, np.float32(-np.inf)), f_lo)
        f_hi = np.where(f_hi < hi, np.nextafter(f_hi, np.float32(np.inf)), f_hi)
    out_lo[...] = f_lo
    out_hi[...] = f_hi
    return out
