// What a broad phase is told when it is created: the dimensions of its
// boxes, the threads or task system it runs on, a pair budget, and the
// algorithm's own settings.
#pragma once

#include <cstddef>
#include <string>

namespace sapling {

class TaskSystem;

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
  /// The most pairs that may overlap after a frame, 0 for no limit: a frame
  /// after which more would overlap is refused with StatusCode::kPairBudget
  /// in FrameDelta::status, whatever the algorithm, and its operations are
  /// dropped. Memory stays bounded while the frame runs: the pair manager
  /// holds at most twice max_pairs pairs (the previous frame's and the new
  /// ones); a frame that fills that room is computed again from the live
  /// boxes to decide exactly. Recomputing algorithms hold the frame's pairs
  /// once more (8 bytes each) before the check.
  std::size_t max_pairs = 0;
  /// The algorithm's own settings, "name=value" pairs separated by commas
  /// (e.g. "mode=witness,cell_size=2.5" for multi-sap; each algorithm's page
  /// in docs/algorithms/ lists its own); empty for its defaults. create()
  /// refuses a name the algorithm does not know and a value out of range.
  std::string settings{};
  /// Large worlds (BroadPhase::add() of Box3d): report only the pairs whose
  /// boxes as given in doubles overlap (each grown by its contact distance,
  /// in double arithmetic), rather than every pair of the boxes rounded
  /// outward to float; region queries re-check their hits likewise, and
  /// rays compute each hit again on the double box (ray.hpp's computation
  /// in double, the ray's origin at origin() + ray.origin). Costs
  /// a pass over every pair each frame with operations (O(pairs log pairs)).
  /// An object given as float counts with its float box (plus the origin).
  bool exact_pairs = false;
};

}  // namespace sapling
