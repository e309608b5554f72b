// The live dynamic objects in an AABB tree, for rays and for region queries
// the algorithm cannot answer itself (Algorithm::query(), ray_cast()).
//
// Reads never change it, so any number of threads may query at once
// (broad_phase.hpp, "Threads"). The first read that needs the tree while
// there is none builds it under a lock and publishes it; from then on each
// update() keeps it current as part of the frame: a few changes are applied
// one by one, many by building the tree anew. A frame that fails drops the
// tree (the next read that needs it builds it from the objects as they are
// again), and so does the frame after kIdleFrames frames that changed it
// with no read using it, so that a world queried once pays nothing per
// frame afterwards.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>

#include "core/broad_phase/object_table.hpp"
#include "core/broad_phase/staged_frame.hpp"
#include "detail/aabb_tree.hpp"

namespace sapling::detail {

class QueryTree {
 public:
  static constexpr unsigned kIdleFrames = 32;

  // The frame's side: update() alone, while no read runs.
  /// Brings the tree to `frame`'s end (apply_geometry() has placed its
  /// boxes), or drops it when idle. May throw std::bad_alloc, having
  /// dropped the tree.
  void follow(const StagedFrame& frame, const ObjectTable& objects);
  /// Forgets the tree (a failed frame, slots renumbered, the algorithm
  /// rebuilt).
  void reset() noexcept;
  std::size_t memory_bytes() const noexcept;

  // The reads' side: any number of threads at once.
  /// The tree of the live dynamic objects of `objects`, current. May throw
  /// std::bad_alloc when it has to be built (then nothing is published).
  const AabbTree& get(const ObjectTable& objects) const;

 private:
  // Of the live dynamic objects, or with `frame_end` of those at the end of
  // the frame update() applies.
  static std::unique_ptr<AabbTree> build(const ObjectTable& objects, bool frame_end);

  // Written under build_mutex_ by a read, or by the frame's side alone;
  // published to reads through current_.
  mutable std::unique_ptr<AabbTree> tree_;
  mutable std::atomic<const AabbTree*> current_{nullptr};
  mutable std::mutex build_mutex_;
  mutable std::atomic<bool> used_{false};  // a read asked for the tree since the last follow()
  unsigned idle_frames_ = 0;
};

}  // namespace sapling::detail
