// The interface every broad-phase algorithm implements, and the adapter that
// makes a one-shot algorithm persistent.
//
// Users do not call algorithms directly: a BroadPhase validates each call,
// turns user ids into dense slots, and hands the algorithm one frame's
// operations at a time. An algorithm therefore never sees an invalid box, an
// unknown id, or two operations on one object in a frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "sapling/box.hpp"
#include "sapling/pair.hpp"
#include "sapling/pair_manager.hpp"
#include "sapling/status.hpp"

namespace sapling {

/// Dense internal index of a live object, chosen by the BroadPhase. A slot
/// freed by a removal is reused no earlier than the next frame.
using Slot = std::uint32_t;

/// One frame's validated operations. Apply removals, then moves, then adds.
struct FrameOps {
  std::span<const Slot> removed;
  std::span<const Slot> moved;
  std::span<const Box3> moved_boxes;  // parallel to `moved`
  std::span<const Slot> added;
  std::span<const Box3> added_boxes;  // parallel to `added`

  bool empty() const noexcept { return removed.empty() && moved.empty() && added.empty(); }
};

class TaskSystem;

/// What a BroadPhase is told about its input and resources when created.
/// BroadPhase::create() refuses options out of range, saying which.
struct Options {
  /// 3, or 2: every box lies in the plane z = 0 (Box2, or a Box3 with z =
  /// [0, 0]: any other is refused with BoxFault::kOffPlane).
  int dims = 3;
  /// Threads for the parallel algorithms, 1..ThreadPool::kMaxThreads; 0 =
  /// all hardware threads. Where the system starts fewer, the broad phase
  /// runs on those: BroadPhase::concurrency() tells how many.
  unsigned threads = 1;
  /// The engine's task system; overrides `threads` when set. Must outlive
  /// the broad phase.
  TaskSystem* tasks = nullptr;
  /// The most pairs a frame may hold (the previous frame's plus those it
  /// creates), 0 for no limit: a frame that would exceed it is refused with
  /// StatusCode::kPairBudget in FrameDelta::status instead of exhausting
  /// memory, and its operations are dropped. Recomputing algorithms hold
  /// the frame's pairs once (8 bytes each) before the check.
  std::size_t max_pairs = 0;
};

/// A persistent broad-phase algorithm.
class Algorithm {
 public:
  virtual ~Algorithm() = default;

  /// Applies one frame and records in `pairs` every pair that starts or
  /// stops overlapping (PairManager::add/remove), in terms of user ids:
  /// slot s belongs to user id `ids[s]`. Removed slots keep their id during
  /// the call. The BroadPhase calls this only for frames with operations.
  /// It may throw std::bad_alloc or PairBudgetExceeded part-way: the
  /// BroadPhase then discards the algorithm and makes a new one.
  virtual void update(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) = 0;

  /// Refuses boxes this algorithm cannot take (for example a box of another
  /// size for a unisize method). The BroadPhase asks once per add or move
  /// batch, after it has accepted every id and box of it, with `staged` the
  /// frame's operations accepted before this batch. Must not change the
  /// algorithm: a refused batch leaves nothing behind, and an accepted one
  /// reaches the algorithm only through update(). Answers from the state of
  /// the last update() that returned: one that threw part-way (out of
  /// memory) must not change the answer. A refusal names the offending
  /// element: its id and its index in `boxes`.
  virtual Status accepts(Operation /*op*/, std::span<const Id> /*ids*/, std::span<const Box3> /*boxes*/,
                         const FrameOps& /*staged*/) const {
    return {};
  }

  /// Bytes held by the algorithm's own structures.
  virtual std::size_t memory_bytes() const { return 0; }

  /// Checks the algorithm's invariants (written out where it is defined);
  /// false on the first violation. Costs O(n) or more: for tests, and after
  /// every update() in builds with SAPLING_VALIDATE.
  virtual bool validate() const { return true; }
};

/// An index pair (i, j), i != j, into the box span given to a one-shot query.
struct IndexPair {
  std::uint32_t i = 0;
  std::uint32_t j = 0;
};

/// A one-shot complete algorithm: boxes in, every overlapping pair out.
class OneShotComplete {
 public:
  virtual ~OneShotComplete() = default;
  /// Appends every overlapping pair of `boxes`, each once, to `out`.
  virtual void find_pairs(std::span<const Box3> boxes, std::vector<IndexPair>& out) = 0;
};

/// Makes a one-shot algorithm persistent: each frame with changes it
/// recomputes all pairs of the live boxes and the pair manager diffs them
/// against the previous frame.
std::unique_ptr<Algorithm> make_recompute(std::unique_ptr<OneShotComplete> one_shot);

}  // namespace sapling
