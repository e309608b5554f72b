"""sapling.mpi: the broad phase spread over the ranks of an mpi4py communicator.

    # mpirun -np 4 python3 script.py
    import numpy as np, sapling.mpi
    from mpi4py import MPI
    bp = sapling.mpi.DistributedBroadPhase(MPI.COMM_WORLD)  # collective
    bp.add(my_ids, my_boxes)              # each rank stages the objects it owns
    created, deleted = bp.update()        # collective: this rank's share, sorted
    created, deleted = bp.gather(root=0)  # collective: the whole frame's, on rank 0

sapling::mpi::DistributedBroadPhase (docs/distributed.md) with the calls and
argument rules of sapling.BroadPhase: ids (n,) uint32, boxes (n, 2*dims)
float32 (or (n, 2, dims), or values exactly float32), pairs (k, 2) uint32,
a < b, sorted by (a, b). The rank that adds an object owns it: it alone
stages its moves, removal, filter changes and hand_over() to another rank
(ids unique across ranks). update(), gather(), gather_pairs(), plan_domains()
and the constructor are collective: every rank calls them, in the same
order. A refused staging call raises sapling.Error on its rank with
BroadPhase's message and changes nothing; a frame refused across ranks (an
id added on two) raises sapling.Error from update() on every rank.

comm is an mpi4py MPI.Comm (None: MPI.COMM_WORLD); the broad phase works on
a duplicate, so its messages never meet the caller's. Importing this module
imports mpi4py.MPI, which initializes MPI.
"""

try:
    from ._sapling_mpi import DistributedBroadPhase
except ImportError as e:  # not built, or mpi4py missing where it runs
    raise ImportError(
        "sapling.mpi needs the extension sapling._sapling_mpi, built when MPI and mpi4py are found: install "
        "libopenmpi-dev, openmpi-bin and python3-mpi4py (scripts/install-deps.sh), then rebuild the module "
        f"({e})"
    ) from e

__all__ = ["DistributedBroadPhase"]
