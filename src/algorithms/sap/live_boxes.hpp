// sap's live boxes: the live slots in a dense order (for the passes over
// all of them, and so that a frame's new boxes sit at the end) and each
// slot's box as of this point of the frame. Every part of sap reads and
// writes boxes through this one class.
//
// sap keeps no copy of the boxes. An unchanged box is read from the
// BroadPhase's own store (FrameOps::store, by slot); a box the frame has
// moved or added so far is read from the frame's lists (FrameBoxes, marked
// by move() and add_all() and cleared by end_frame(), after which the
// BroadPhase commits the same boxes to its store). So sap holds 12 bytes
// an object for its boxes (the dense order, its inverse, the frame's
// marks), where a copy and its slot map held 34. Driven without a store
// (FrameOps::store null), it keeps one of its own, written at each frame's
// end. A pass that needs the boxes side by side (box pruning of all of
// them) gathers them (dense()); the room goes back in the frame for a
// one-off pass (release_dense()), else at the end of the first frame that
// does not gather.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "detail/frame_boxes.hpp"
#include "detail/reserve.hpp"
#include "detail/slot_map.hpp"
#include "sapling/algorithm.hpp"
#include "sapling/box.hpp"

namespace sapling::detail {

class LiveBoxes {
 public:
  /// The frame's operations: where unchanged boxes are read, and the lists
  /// move() and add() take boxes from. Before any other call of the frame.
  void begin_frame(const FrameOps& ops) noexcept {
    store_ = ops.store != nullptr ? ops.store : &own_;
    moved_ = ops.moved;
    added_ = ops.added;
    added_boxes_ = ops.added_boxes;
    frame_.begin(ops.moved_boxes, ops.added_boxes);
  }
  /// The frame's boxes are the store's from now on (the BroadPhase commits
  /// them; without a store, written to sap's own). Every move applied.
  void end_frame() {
    if (store_ == &own_) {
      if (own_.size() < map_.slots_reserved()) own_.resize(map_.slots_reserved());
      for (const std::span<const Slot> list : {moved_, added_})
        for (const Slot s : list) own_[s] = *frame_.changed_box(s);
    }
    frame_.unmark(moved_, added_);
    if (!std::exchange(gathered_used_, false)) free_storage(gathered_);
    moved_ = added_ = {};
    added_boxes_ = {};
  }

  std::size_t size() const noexcept { return map_.size(); }
  bool contains(Slot s) const noexcept { return map_.contains(s); }
  /// The dense index of a live slot.
  std::uint32_t index(Slot s) const noexcept { return map_.index(s); }
  /// The slot at dense index d.
  Slot slot(std::size_t d) const noexcept { return map_.slot(d); }
  /// The live slots, in dense order.
  std::span<const Slot> slots() const noexcept { return map_.slots(); }
  /// Asks for index(s)'s line ahead of reading it.
  void prefetch_index(Slot s) const noexcept { map_.prefetch_index(s); }
  /// Asks for a live slot's box ahead of reading it.
  void prefetch_box(Slot s) const noexcept {
    frame_.prefetch(s);
    __builtin_prefetch(store_->data() + s);
  }

  /// A live slot's box now (a slot removed this frame: its last box).
  const Box3& box(Slot s) const noexcept {
    const Box3* now = frame_.changed_box(s);
    return now != nullptr ? *now : (*store_)[s];
  }
  /// The box of a slot live before the frame (moved, removed or neither)
  /// as the frame found it.
  const Box3& box_before(Slot s) const noexcept { return (*store_)[s]; }
  /// The box at dense index d.
  const Box3& box_at(std::size_t d) const noexcept { return box(map_.slot(d)); }
  /// Every live box, in dense order, gathered; valid until the next call.
  std::span<const Box3> dense() const {
    reserve_geometric(gathered_, size());  // on huge pages where large: given back in a few of them
    gathered_.resize(size());
    for (std::size_t d = 0; d < gathered_.size(); ++d) gathered_[d] = box_at(d);
    gathered_used_ = true;
    return gathered_;
  }
  /// Gives dense()'s room back now (a one-off gather, in a frame that is
  /// O(n) anyway); else it goes at the end of the first frame without one.
  void release_dense() noexcept {
    free_storage(gathered_);
    gathered_used_ = false;
  }
  /// The boxes add_all() has put at the end of the dense order this frame,
  /// in that order.
  std::span<const Box3> added_boxes() const noexcept { return added_boxes_; }

  /// The frame's move j is applied: moved[j] has moved_boxes[j].
  void move(std::size_t j) noexcept { frame_.mark_moved(moved_[j], j); }
  /// The frame's additions join, in order, at the end of the dense order.
  void add_all() {
    std::size_t slots = 0;
    for (const Slot s : added_) slots = std::max(slots, std::size_t{s} + 1);
    reserve_slots(slots);
    map_.reserve(map_.size() + added_.size());
    for (std::size_t k = 0; k < added_.size(); ++k) {
      map_.insert(added_[k]);
      frame_.mark_added(added_[k], k);
    }
  }
  /// Removes live slot s: the last one takes its dense index.
  void erase(Slot s) noexcept { map_.erase(s); }
  /// Makes room for slots below `slots`.
  void reserve_slots(std::size_t slots) {
    map_.reserve_slots(slots);
    frame_.reserve_slots(slots);
  }

  std::size_t memory_bytes() const noexcept {
    return map_.memory_bytes() + frame_.memory_bytes() + (own_.capacity() + gathered_.capacity()) * sizeof(Box3);
  }
  /// Between frames: the dense order lists each live slot once, index()
  /// inverts it, and no box is read from a frame's lists.
  bool valid() const { return map_.valid() && moved_.empty() && added_.empty() && frame_.unmarked(); }

 private:
  SlotMap<> map_;     // the live slots, dense, and their dense indices
  FrameBoxes frame_;  // where the frame's moved and added boxes are
  const std::vector<Box3>* store_ = &own_;
  std::vector<Box3> own_;  // by slot, where no store is given
  std::span<const Slot> moved_, added_;
  std::span<const Box3> added_boxes_;
  mutable std::vector<Box3> gathered_;  // dense()'s
  mutable bool gathered_used_ = false;
};

}  // namespace sapling::detail
