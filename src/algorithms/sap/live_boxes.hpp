// sap's live boxes: the live slots in a dense order (for the passes over
// all of them, and so that a frame's new boxes sit at the end) and each
// slot's box as of this point of the frame. Every part of sap reads and
// writes boxes through this one class, so that where the boxes are kept is
// decided here alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "detail/slot_map.hpp"
#include "sapling/algorithm.hpp"
#include "sapling/box.hpp"

namespace sapling::detail {

class LiveBoxes {
 public:
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
  /// Asks for a live slot's box ahead of reading it (its index read already).
  void prefetch_box(Slot s) const noexcept { __builtin_prefetch(&map_.values<0>()[map_.index(s)]); }

  /// A live slot's box now.
  const Box3& box(Slot s) const noexcept { return map_.values<0>()[map_.index(s)]; }
  /// The box at dense index d.
  const Box3& box_at(std::size_t d) const noexcept { return map_.values<0>()[d]; }
  /// Every live box, in dense order.
  std::span<const Box3> dense() const noexcept { return map_.values<0>(); }

  /// A live slot's box becomes `box` (a move applied).
  void set(Slot s, const Box3& box) noexcept { map_.value<0>(s) = box; }
  /// Adds slot s, absent, at the end of the dense order.
  void insert(Slot s, const Box3& box) { map_.insert(s, box); }
  /// Removes live slot s: the last one takes its dense index.
  void erase(Slot s) noexcept { map_.erase(s); }
  /// Makes room for `n` live slots, and for slots below `slots`.
  void reserve(std::size_t n) { map_.reserve(n); }
  void reserve_slots(std::size_t slots) { map_.reserve_slots(slots); }

  std::size_t memory_bytes() const noexcept { return map_.memory_bytes(); }
  /// The dense order lists each live slot once and index() inverts it.
  bool valid() const { return map_.valid(); }

 private:
  SlotMap<Box3> map_;
};

}  // namespace sapling::detail
