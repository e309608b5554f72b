"""sapling.mpi.DistributedBroadPhase against the single-process sapling.BroadPhase.

Runs under plain pytest (one rank) and under mpirun (CTest: 2 and 3 ranks):
every rank runs the same tests in the same order, on the same random world
(a fixed seed), staging only the objects it owns. Results gathered on a root
are judged there and the verdict shared (agree()), so that every rank fails
together; an exception that escapes a test on one rank only aborts the whole
job (collective()), so that no rank is left waiting in a collective.
"""

import functools
import sys
import traceback

import numpy as np
import pytest

import sapling
from conftest import as_set, random_boxes

try:
    from mpi4py import MPI

    import sapling.mpi
except ImportError as e:
    pytest.skip(f"sapling.mpi not built: {e}", allow_module_level=True)

WORLD = MPI.COMM_WORLD
RANK, SIZE = WORLD.Get_rank(), WORLD.Get_size()


class Disagreement(AssertionError):
    """A check that failed on some rank, raised on every rank."""


def agree(ok, what=""):
    """Every rank's verdict, shared: raises on every rank when one failed."""
    verdicts = WORLD.allgather((bool(ok), "" if ok else what))
    failed = [f"rank {r}: {w}" for r, (good, w) in enumerate(verdicts) if not good]
    if failed:
        raise Disagreement("; ".join(failed))


def collective(test):
    """Runs a test on every rank; an exception that escapes it on one rank
    (not an agreed failure) prints its traceback and aborts the job."""

    @functools.wraps(test)
    def run(*args, **kwargs):
        try:
            test(*args, **kwargs)
        except Disagreement:
            raise
        except BaseException:
            if SIZE > 1:
                traceback.print_exc()
                sys.stderr.flush()
                WORLD.Abort(1)
            raise
        WORLD.Barrier()

    return run


def pairs_equal(got, expected):
    return got.dtype == np.uint32 and got.shape == expected.shape and np.array_equal(got, expected)


def world_frames(seed, frames, n, dims=3):
    """The same frames on every rank: (removed, moved, moved_boxes, added, added_boxes)."""
    rng = np.random.default_rng(seed)
    live = []
    out = []
    for f in range(frames):
        ids = np.array(live, dtype=np.uint32)
        rng.shuffle(ids)
        k = len(ids)
        removed = ids[: k // 12] if f else ids[:0]
        moved = ids[k // 12 : k // 12 + k // 3] if f else ids[:0]
        count = n if f == 0 else int(rng.integers(0, n // 8 + 1))
        added = rng.choice(2**32, size=count + 16, replace=False).astype(np.uint32)
        if f == 0:
            added[:2] = [0, 2**32 - 1]
        added = np.array([a for a in np.unique(added) if a not in set(live)][:count], dtype=np.uint32)
        rng.shuffle(added)
        moved_boxes = random_boxes(rng, len(moved), dims, extent=60)
        added_boxes = random_boxes(rng, len(added), dims, extent=60)
        live = sorted((set(live) - set(removed.tolist())) | set(added.tolist()))
        out.append((removed, moved, moved_boxes, added, added_boxes))
    return out


def check_frame(bp, mine, reference, root=0, comm=WORLD, what=""):
    """The gathered delta on `root` is the reference's; the ranks' shares
    are disjoint and together the delta."""
    created, deleted = bp.gather(root)
    shares = comm.gather((mine[0], mine[1]), root=root)
    ok = True
    if comm.Get_rank() == root:
        ok = pairs_equal(created, reference[0]) and pairs_equal(deleted, reference[1])
        for k in (0, 1):
            union = np.concatenate([s[k] for s in shares]).reshape(-1, 2)
            ok = ok and len(union) == len(as_set(union)) and as_set(union) == as_set(reference[k])
    else:
        ok = len(created) == 0 and len(deleted) == 0 and created.shape == (0, 2)
    agree(ok, what)


@collective
@pytest.mark.parametrize("dims", [2, 3])
def test_frames_match_broad_phase(dims):
    bp = sapling.mpi.DistributedBroadPhase(dims=dims)
    assert bp.rank == RANK and bp.ranks == SIZE and bp.dims == dims and bp.frame == 0
    assert bp.algorithm == bp.algorithm_name and bp.algorithm
    reference = sapling.BroadPhase(dims=dims)
    for f, (removed, moved, moved_boxes, added, added_boxes) in enumerate(world_frames(7 + dims, 8, 500, dims)):
        for bph in (bp, reference):
            mine = (lambda ids: ids % SIZE == RANK) if bph is bp else (lambda ids: ids == ids)
            bph.remove(removed[mine(removed)])
            bph.move(moved[mine(moved)], moved_boxes[mine(moved)])
            bph.add(added[mine(added)], added_boxes[mine(added)])
        mine = bp.update()
        assert mine[0].dtype == np.uint32 and mine[0].shape[1:] == (2,) and mine[1].shape[1:] == (2,)
        check_frame(bp, mine, reference.update(), what=f"frame {f}")
        assert bp.frame == f + 1
        # This rank owns what it added, with its boxes; not the others'.
        agree(all(bp.contains(i) == (i % SIZE == RANK) for i in added.tolist())
              and all(np.array_equal(bp.box(i), b) for i, b in zip(added, added_boxes) if i % SIZE == RANK),
              f"frame {f}: owned objects")
    all_pairs = bp.gather_pairs(0)
    local = WORLD.gather(bp.pairs(), root=0)
    if RANK == 0:
        agree(pairs_equal(all_pairs, reference.sorted_pairs())
              and as_set(np.concatenate(local)) == as_set(reference.pairs()), "gather_pairs")
    else:
        agree(len(all_pairs) == 0, "gather_pairs off the root")
    assert WORLD.allreduce(len(bp)) == len(reference)
    stats = bp.stats()
    assert stats["ranks"] == SIZE and stats["owned"] == len(bp) and stats["imbalance"] >= 1.0 - 1e-9


@collective
def test_filters_and_static():
    bp = sapling.mpi.DistributedBroadPhase()
    reference = sapling.BroadPhase()
    rng = np.random.default_rng(3)
    ids = np.arange(1, 301, dtype=np.uint32)
    boxes = random_boxes(rng, len(ids), 3, extent=40)
    category = (1 << (ids % 3)).astype(np.uint32)
    mask = np.where(ids % 5 == 0, 0b011, 0xFFFFFFFF).astype(np.uint32)
    static = ids % 7 == 0
    mine = ids % SIZE == RANK
    for bph in (bp, reference):
        sel = mine if bph is bp else np.ones_like(mine)
        for s in (True, False):
            part = sel & (static == s)
            bph.add(ids[part], boxes[part], category=category[part], mask=mask[part], static=s)
    check_frame(bp, bp.update(), reference.update(), what="filters, frame 1")
    for i in ids[mine][:20]:
        assert bp.filter(i) == reference.filter(i) and bp.is_static(i) == reference.is_static(i)
    # New masks for some: the categories are kept.
    change = ids[ids % 4 == 1]
    for bph in (bp, reference):
        sel = change[change % SIZE == RANK] if bph is bp else change
        bph.set_filter(sel, mask=0b101)
    check_frame(bp, bp.update(), reference.update(), what="filters, frame 2")


@collective
def test_hand_over_moves_ownership():
    bp = sapling.mpi.DistributedBroadPhase()
    reference = sapling.BroadPhase()
    owner = {}  # every rank's view of who owns what: the same everywhere
    for f, (removed, moved, moved_boxes, added, added_boxes) in enumerate(world_frames(11, 6, 400)):
        ours = np.array([owner[int(i)] == RANK for i in removed], dtype=bool)
        bp.remove(removed[ours])
        ours = np.array([owner[int(i)] == RANK for i in moved], dtype=bool)
        bp.move(moved[ours], moved_boxes[ours])
        for i in removed.tolist():
            del owner[i]
        new_owner = (added.astype(np.int64) * 7 + f) % SIZE
        bp.add(added[new_owner == RANK], added_boxes[new_owner == RANK])
        owner.update(zip(added.tolist(), new_owner.tolist()))
        # A third of what this rank owns (added this frame included) goes to the next rank.
        handed = np.array([i for i, r in sorted(owner.items()) if r == RANK and i % 3 == f % 3], dtype=np.uint32)
        if SIZE > 1:
            bp.hand_over(handed, (RANK + 1) % SIZE)
            for ids in WORLD.allgather(handed.tolist()):
                for i in ids:
                    owner[i] = (owner[i] + 1) % SIZE
        reference.remove(removed)
        reference.move(moved, moved_boxes)
        reference.add(added, added_boxes)
        check_frame(bp, bp.update(), reference.update(), what=f"hand_over, frame {f}")
        agree(all(bp.contains(i) == (r == RANK) for i, r in owner.items()), f"frame {f}: owners after hand_over")
        if SIZE > 1:
            agree(WORLD.allreduce(bp.stats()["handed_over"]) == WORLD.allreduce(len(handed)), "handed_over")
    assert WORLD.allreduce(len(bp)) == len(reference) == len(owner)


@collective
def test_plan_domains_and_domain_rank():
    rng = np.random.default_rng(5)
    ids = np.arange(1000, 1600, dtype=np.uint32)
    boxes = random_boxes(rng, len(ids), 3, extent=80)
    bp = sapling.mpi.DistributedBroadPhase()
    bp.plan_domains(boxes[ids % SIZE == RANK])  # each rank's share of a sample: in effect at once
    ranks = bp.domain_rank(boxes)
    assert ranks.shape == (len(ids),) and ranks.min() >= 0 and ranks.max() < SIZE
    assert bp.domain_rank(boxes[17]) == ranks[17] and isinstance(bp.domain_rank(boxes[17]), int)
    agree(all(np.array_equal(r, ranks) for r in WORLD.allgather(ranks)), "domain_rank differs across ranks")
    counts = np.bincount(ranks, minlength=SIZE)
    assert counts.min() > len(ids) / SIZE / 2
    # Each centre lies in its rank's domain, [min, max).
    centre = (boxes[:, :3] + boxes[:, 3:]) / 2
    for r in range(SIZE):
        d = bp.domain(r)
        assert d.shape == (6,) and d.dtype == np.float32
        inside = np.all((centre[ranks == r] >= d[:3]) & (centre[ranks == r] < d[3:]), axis=1)
        assert inside.all()
    # Owners that follow the domains.
    reference = sapling.BroadPhase()
    bp.add(ids[ranks == RANK], boxes[ranks == RANK])
    reference.add(ids, boxes)
    check_frame(bp, bp.update(), reference.update(), what="domains")
    with pytest.raises(sapling.Error, match=r"rank must be an integer in \[0, "):
        bp.domain(SIZE)


@collective
@pytest.mark.parametrize("kind", ["dup", "split"])
def test_other_communicators(kind):
    comm = WORLD.Dup() if kind == "dup" else WORLD.Split(color=RANK % 2, key=RANK)
    try:
        bp = sapling.mpi.DistributedBroadPhase(comm, algorithm="sap")
        assert bp.ranks == comm.Get_size() and bp.rank == comm.Get_rank()
        assert bp.algorithm == "sap"
        reference = sapling.BroadPhase("sap")
        color = RANK % 2 if kind == "split" else 0
        for f, (removed, moved, moved_boxes, added, added_boxes) in enumerate(world_frames(20 + color, 4, 300)):
            mine = lambda a: a % comm.Get_size() == comm.Get_rank()  # noqa: E731
            bp.remove(removed[mine(removed)])
            bp.move(moved[mine(moved)], moved_boxes[mine(moved)])
            bp.add(added[mine(added)], added_boxes[mine(added)])
            reference.remove(removed)
            reference.move(moved, moved_boxes)
            reference.add(added, added_boxes)
            root = comm.Get_size() - 1  # not always rank 0
            check_frame(bp, bp.update(), reference.update(), root=root, comm=comm, what=f"{kind}, frame {f}")
        del bp
    finally:
        comm.Free()


@collective
def test_errors_match_broad_phase():
    bp = sapling.mpi.DistributedBroadPhase()
    reference = sapling.BroadPhase()
    mine = 100 + RANK
    nan_box = np.array([[0, 0, 0, 1, 1, np.nan]], np.float32)
    with pytest.raises(sapling.Error) as expected:
        reference.add(np.array([mine], np.uint32), nan_box)
    with pytest.raises(sapling.Error) as got:
        bp.add(np.array([mine], np.uint32), nan_box)
    assert str(got.value) == str(expected.value) and "NaN" in str(got.value)
    assert (got.value.code, got.value.operation, got.value.id, got.value.index) == (
        expected.value.code, expected.value.operation, expected.value.id, expected.value.index)
    assert isinstance(got.value, ValueError)
    for call in (lambda b: b.move(np.array([mine], np.uint32), np.zeros((1, 6), np.float32)),
                 lambda b: b.remove(np.array([mine], np.uint32)),
                 lambda b: b.add(np.array([mine], np.uint32), np.zeros((1, 5), np.float32))):
        with pytest.raises(sapling.Error) as expected:
            call(reference)
        with pytest.raises(sapling.Error) as got:
            call(bp)
        assert str(got.value) == str(expected.value)
    with pytest.raises(TypeError, match="ids must be uint32"):
        bp.add(np.array([True]), np.zeros((1, 6), np.float32))
    # Nothing was staged: the frame is empty everywhere.
    created, deleted = bp.update()
    assert len(created) == len(deleted) == 0 and len(bp) == 0
    # A frame refused across ranks raises on every rank and changes nothing.
    bp.add(np.array([mine], np.uint32), np.array([[0, 0, 0, 1, 1, 1]], np.float32))
    bp.update()
    if SIZE > 1:
        bp.add(np.array([500 + RANK], np.uint32), np.array([[0, 0, 0, 1, 1, 1]], np.float32))
        if RANK <= 1:
            bp.add(np.array([7], np.uint32), np.array([[0, 0, 0, 1, 1, 1]], np.float32))
        with pytest.raises(sapling.Error, match="7") as refused:
            bp.update()
        assert refused.value.code == "duplicate_id" and refused.value.id == 7
        assert not bp.contains(500 + RANK) and not bp.contains(7) and bp.contains(mine)
    # hand_over refusals, on this rank alone.
    with pytest.raises(sapling.Error) as e:
        bp.hand_over(np.array([mine], np.uint32), SIZE)
    assert e.value.code == "invalid_argument"
    with pytest.raises(sapling.Error) as e:
        bp.hand_over(np.array([999], np.uint32), 0)
    assert e.value.code == "unknown_id"
    with pytest.raises(sapling.Error, match="ranks must be an integer or hold one value per id"):
        bp.hand_over(np.array([mine], np.uint32), [0, 0])
    bp.drop_staged()
    # A root out of range is refused on every rank, before any message.
    with pytest.raises(sapling.Error, match=r"root must be an integer in \[0, "):
        bp.gather(SIZE)
    with pytest.raises(sapling.Error, match="root"):
        bp.gather_pairs(-1)


@collective
def test_bad_communicator_and_options():
    for comm in ("world", 5, MPI.COMM_WORLD.Get_group(), MPI.INFO_NULL):
        with pytest.raises(TypeError, match="comm must be an mpi4py MPI.Comm"):
            sapling.mpi.DistributedBroadPhase(comm)
    with pytest.raises(sapling.Error, match="comm is MPI.COMM_NULL"):
        sapling.mpi.DistributedBroadPhase(MPI.COMM_NULL)
    with pytest.raises(sapling.Error, match=r"^DistributedBroadPhase\('unisize', dims=3, threads=1\): .*unisize"):
        sapling.mpi.DistributedBroadPhase(algorithm="unisize")
    with pytest.raises(sapling.Error, match="no algorithm"):
        sapling.mpi.DistributedBroadPhase(algorithm="no-such")
    with pytest.raises(sapling.Error, match="dims"):
        sapling.mpi.DistributedBroadPhase(dims=4)
    with pytest.raises(TypeError, match="threads"):
        sapling.mpi.DistributedBroadPhase(threads="2")
    bp = sapling.mpi.DistributedBroadPhase(MPI.COMM_WORLD, "brute", 2, 2)
    assert bp.algorithm == "brute" and bp.dims == 2 and "DistributedBroadPhase" in repr(bp)
