// Where a slot's box is while a frame is applied: a slot the frame has
// moved or added (so far) has its box in the frame's lists (FrameOps::
// moved_boxes, added_boxes), found through a by-slot index of its
// position there; any other slot's box is where it was before the frame
// (the BroadPhase's store). 4 bytes a slot; marks set as the frame's
// changes are applied and cleared after it, so the room is kept and
// touched only where the frame changes something. sap reads its boxes
// through it (live_boxes.hpp); auto, where it hands boxes to another
// algorithm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "detail/reserve.hpp"
#include "sapling/algorithm.hpp"
#include "sapling/box.hpp"

namespace sapling::detail {

class FrameBoxes {
 public:
  /// The frame's lists that marks point into.
  void begin(std::span<const Box3> moved_boxes, std::span<const Box3> added_boxes) noexcept {
    moved_boxes_ = moved_boxes;
    added_boxes_ = added_boxes;
  }
  /// Makes room for slots below `slots`, unmarked.
  void reserve_slots(std::size_t slots) {
    if (slots <= at_.size()) return;
    reserve_geometric(at_, slots);
    at_.resize(slots, kNone);
  }
  /// Slot s's box is moved_boxes[j] from now on in the frame.
  void mark_moved(Slot s, std::size_t j) noexcept { at_[s] = static_cast<std::uint32_t>(j); }
  /// Slot s's box is added_boxes[k] from now on in the frame.
  void mark_added(Slot s, std::size_t k) noexcept { at_[s] = static_cast<std::uint32_t>(k) | kAdded; }
  /// Every move and addition of the frame at once (`slots` above them all).
  void mark_all(std::span<const Slot> moved, std::span<const Slot> added, std::size_t slots) {
    reserve_slots(slots);
    for (std::size_t j = 0; j < moved.size(); ++j) mark_moved(moved[j], j);
    for (std::size_t k = 0; k < added.size(); ++k) mark_added(added[k], k);
  }
  /// Clears the marks of these slots (those of the frame).
  void unmark(std::span<const Slot> moved, std::span<const Slot> added) noexcept {
    for (const Slot s : moved) at_[s] = kNone;
    for (const Slot s : added) at_[s] = kNone;
    moved_boxes_ = added_boxes_ = {};
  }

  /// The frame's box of a marked slot; null for an unmarked one.
  const Box3* changed_box(Slot s) const noexcept {
    const std::uint32_t k = at_[s];
    if (k == kNone) return nullptr;
    return (k & kAdded) != 0 ? &added_boxes_[k & ~kAdded] : &moved_boxes_[k];
  }
  /// Asks for slot s's mark ahead of reading it.
  void prefetch(Slot s) const noexcept { __builtin_prefetch(at_.data() + s); }

  /// No slot marked (between frames).
  bool unmarked() const noexcept {
    for (const std::uint32_t k : at_)
      if (k != kNone) return false;
    return true;
  }
  std::size_t memory_bytes() const noexcept { return at_.capacity() * sizeof(std::uint32_t); }
  /// Gives the room back (no slot may be marked).
  void release() noexcept { free_storage(at_); }

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  static constexpr std::uint32_t kAdded = std::uint32_t{1} << 31;

  std::vector<std::uint32_t> at_;  // by slot: kNone, a move's index, or an addition's | kAdded
  std::span<const Box3> moved_boxes_, added_boxes_;
};

}  // namespace sapling::detail
