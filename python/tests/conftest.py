"""Shared helpers: random worlds and a numpy brute force, the reference."""

import os
import shutil
import zlib

import numpy as np
import pytest

import sapling


def random_boxes(rng, n, dims=3, extent=100.0, size=6.0, dtype=np.float32):
    """n boxes of random sizes in [0, extent]^dims, some points and touching."""
    lo = rng.uniform(0, extent, size=(n, dims)).astype(dtype)
    hi = lo + rng.uniform(0, size, size=(n, dims)).astype(dtype)
    hi[::17] = lo[::17]  # point boxes
    boxes = np.concatenate([lo, hi], axis=1)
    if n > 3:
        boxes[1, :dims] = boxes[0, dims:]  # box 1 touches box 0 in a corner
        boxes[1, dims:] = boxes[0, dims:] + 1
    return np.ascontiguousarray(boxes, dtype=dtype)


def overlap_matrix(a, b):
    """Boolean (len(a), len(b)): closed boxes a[i] and b[j] overlap."""
    d = a.shape[1] // 2
    ok = np.ones((len(a), len(b)), bool)
    for k in range(d):
        ok &= (a[:, None, k] <= b[None, :, d + k]) & (b[None, :, k] <= a[:, None, d + k])
    return ok


def brute_complete(boxes):
    """(k, 2) index pairs i < j of overlapping boxes, sorted."""
    m = np.triu(overlap_matrix(boxes, boxes), 1)
    return np.argwhere(m).astype(np.uint32)


def brute_bipartite(a, b):
    return np.argwhere(overlap_matrix(a, b)).astype(np.uint32)


def brute_id_pairs(ids, boxes):
    """Sorted (k, 2) id pairs, a < b, of overlapping boxes named by ids."""
    ij = brute_complete(boxes)
    p = np.stack([ids[ij[:, 0]], ids[ij[:, 1]]], axis=1) if len(ij) else np.empty((0, 2), np.uint32)
    p.sort(axis=1)
    return sort_pairs(p)


def sort_pairs(p):
    p = np.asarray(p, dtype=np.uint32).reshape(-1, 2)
    order = np.lexsort((p[:, 1], p[:, 0]))
    return p[order]


def as_set(p):
    return {(int(a), int(b)) for a, b in np.asarray(p).reshape(-1, 2)}


@pytest.fixture
def rng(request):
    seed = zlib.crc32(request.node.name.encode())
    print(f"seed {seed}")
    return np.random.default_rng(seed)


@pytest.fixture(scope="session")
def cli():
    """The sapling command of the build tree (CTest sets SAPLING_CLI), or skip."""
    path = os.environ.get("SAPLING_CLI") or shutil.which("sapling")
    if not path or not os.path.exists(path):
        pytest.skip("the sapling command is not built")
    return path


ALGORITHMS = [a.name for a in sapling.algorithms()]
GENERAL = [a.name for a in sapling.algorithms() if a.accepts_any_box]
