// Makes a one-shot algorithm persistent: an algorithm that finds every pair
// of a set of boxes at once (brute, box pruning, dual-axis) is given the live
// boxes each frame with changes, and the pair manager diffs its pairs
// against the previous frame's (PairManager::assign).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "sapling/algorithm.hpp"
#include "sapling/box.hpp"
#include "sapling/pair.hpp"

namespace sapling {

/// A one-shot complete algorithm: boxes in, every overlapping pair out.
class OneShotComplete {
 public:
  virtual ~OneShotComplete() = default;
  /// Appends every overlapping pair of `boxes`, each once, to `out`.
  virtual void complete(std::span<const Box3> boxes, std::vector<IndexPair>& out) = 0;
  /// Draws its structure as of the last complete() (debug_draw.hpp);
  /// nothing by default.
  virtual void debug_draw(DebugDraw& /*draw*/) const {}
  /// Bytes it holds between calls (its buffers), counted in the persistent
  /// algorithm's memory_bytes(); 0 by default.
  virtual std::size_t memory_bytes() const { return 0; }
};

/// Makes a one-shot algorithm persistent: each frame with changes it
/// recomputes all pairs of the live boxes and the pair manager diffs them
/// against the previous frame.
std::unique_ptr<Algorithm> make_recompute(std::unique_ptr<OneShotComplete> one_shot);

}  // namespace sapling
