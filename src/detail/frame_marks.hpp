// Which change of the current frame touched each slot: per slot, the frame's
// number and an index (into the caller's list of changes), so that a new
// frame clears nothing: a mark of an earlier frame reads as none. Used by the
// persistent algorithms that look up, for a box met in a query, whether it
// changed this frame and how (multi-sap, octree).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "detail/reserve.hpp"
#include "sapling/algorithm.hpp"

namespace sapling::detail {

class FrameMarks {
 public:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  /// Starts a frame: every mark so far reads as none.
  void next_frame() noexcept { ++frame_; }
  /// Marks slot `s` with `index` for this frame. May allocate (room by slot).
  void mark(Slot s, std::uint32_t index) {
    if (s >= marks_.size()) {
      reserve_geometric(marks_, std::size_t{s} + 1);
      marks_.resize(std::size_t{s} + 1, 0);
    }
    marks_[s] = (frame_ << 32) | index;
  }
  /// The index slot `s` was marked with this frame, or kNone.
  std::uint32_t find(Slot s) const noexcept {
    return s < marks_.size() && (marks_[s] >> 32) == frame_ ? static_cast<std::uint32_t>(marks_[s]) : kNone;
  }

  /// Forgets the slots at and above `slots` (after the slots were renumbered
  /// densely) and gives back the room they held.
  void shrink_to(std::size_t slots) {
    if (marks_.size() > slots) marks_.resize(slots);
    marks_.shrink_to_fit();
  }
  void release() noexcept { free_storage(marks_); }
  std::size_t memory_bytes() const noexcept { return marks_.capacity() * sizeof(std::uint64_t); }

 private:
  std::vector<std::uint64_t> marks_;
  std::uint64_t frame_ = 0;
};

}  // namespace sapling::detail
