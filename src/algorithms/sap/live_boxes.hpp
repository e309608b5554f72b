// sap's live boxes: the live slots in a dense order (for the passes over
// all of them, and so that a frame's new boxes sit at the end) and each
// slot's box as of this point of the frame. Every part of sap reads and
// writes boxes through this one class.
//
// sap keeps no copy of the boxes. An unchanged box is read from the
// BroadPhase's own store (FrameOps::store, by slot); a box the frame has
// moved or added so far is read from the frame's lists, through a by-slot
// index of where it is (`now_of_`), set by move() and add() and cleared by
// end_frame(), after which the BroadPhase commits the same boxes to its
// store. So sap holds 12 bytes an object for its boxes (dense order, its
// inverse, the frame's index), where a copy held 32. Driven without a
// store (FrameOps::store null), it keeps one of its own, written at each
// frame's end. A pass that needs the boxes side by side (box pruning of
// all of them) gathers them (dense()), into room given back after the
// first frame that does not gather.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

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
    moved_boxes_ = ops.moved_boxes;
    added_ = ops.added;
    added_boxes_ = ops.added_boxes;
  }
  /// The frame's boxes are the store's from now on (the BroadPhase commits
  /// them; without a store, written to sap's own). Every move applied.
  void end_frame() {
    if (store_ == &own_) {
      if (own_.size() < now_of_.size()) own_.resize(now_of_.size());
      for (std::size_t j = 0; j < moved_.size(); ++j) own_[moved_[j]] = moved_boxes_[j];
      for (std::size_t k = 0; k < added_.size(); ++k) own_[added_[k]] = added_boxes_[k];
    }
    for (const Slot s : moved_) now_of_[s] = kNone;
    for (const Slot s : added_) now_of_[s] = kNone;
    if (!std::exchange(gathered_used_, false)) free_storage(gathered_);
    moved_ = added_ = {};
    moved_boxes_ = added_boxes_ = {};
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
    __builtin_prefetch(now_of_.data() + s);
    __builtin_prefetch(store_->data() + s);
  }

  /// A live slot's box now (a slot removed this frame: its last box).
  const Box3& box(Slot s) const noexcept {
    const std::uint32_t k = now_of_[s];
    if (k == kNone) return (*store_)[s];
    return (k & kAdded) != 0 ? added_boxes_[k & ~kAdded] : moved_boxes_[k];
  }
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
  /// The boxes add() has put at the end of the dense order this frame, in
  /// that order (all of the frame's additions once add_all() has run).
  std::span<const Box3> added_boxes() const noexcept { return added_boxes_; }

  /// The frame's move j is applied: moved[j] has moved_boxes[j].
  void move(std::size_t j) noexcept { now_of_[moved_[j]] = static_cast<std::uint32_t>(j); }
  /// The frame's additions join, in order, at the end of the dense order.
  void add_all() {
    std::size_t slots = 0;
    for (const Slot s : added_) slots = std::max(slots, std::size_t{s} + 1);
    reserve_slots(slots);
    map_.reserve(map_.size() + added_.size());
    for (std::size_t k = 0; k < added_.size(); ++k) {
      map_.insert(added_[k]);
      now_of_[added_[k]] = static_cast<std::uint32_t>(k) | kAdded;
    }
  }
  /// Removes live slot s: the last one takes its dense index.
  void erase(Slot s) noexcept { map_.erase(s); }
  /// Makes room for slots below `slots`.
  void reserve_slots(std::size_t slots) {
    map_.reserve_slots(slots);
    if (slots > now_of_.size()) {
      reserve_geometric(now_of_, slots);
      now_of_.resize(slots, kNone);
    }
  }

  std::size_t memory_bytes() const noexcept {
    return map_.memory_bytes() + now_of_.capacity() * sizeof(std::uint32_t) +
           (own_.capacity() + gathered_.capacity()) * sizeof(Box3);
  }
  /// Between frames: the dense order lists each live slot once, index()
  /// inverts it, and no box is read from a frame's lists.
  bool valid() const {
    if (!map_.valid() || !moved_.empty() || !added_.empty()) return false;
    for (const std::uint32_t k : now_of_)
      if (k != kNone) return false;
    return true;
  }

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  static constexpr std::uint32_t kAdded = std::uint32_t{1} << 31;

  SlotMap<> map_;                      // the live slots, dense, and their dense indices
  std::vector<std::uint32_t> now_of_;  // by slot: kNone, a move's index, or an addition's | kAdded
  const std::vector<Box3>* store_ = &own_;
  std::vector<Box3> own_;  // by slot, where no store is given
  std::span<const Slot> moved_, added_;
  std::span<const Box3> moved_boxes_, added_boxes_;
  mutable std::vector<Box3> gathered_;  // dense()'s
  mutable bool gathered_used_ = false;
};

}  // namespace sapling::detail
