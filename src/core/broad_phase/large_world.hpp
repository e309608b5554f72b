// Large worlds: boxes given in doubles (a planet, a streamed open world)
// are kept as float boxes relative to the broad phase's origin, rounded
// outward (outward(), box.hpp), so that no overlap is lost; the pairs are
// those of the rounded boxes. shift_origin() moves the origin (PhysX's
// shiftOrigin) so that the floats keep their resolution where the action
// is: every stored box is re-expressed relative to the new origin at the
// next update(), which rebuilds once and reports exactly the pairs the new
// rounding changes.
//
// The object table keeps, by slot, the user's double box (ExactBoxes,
// once an object is given in doubles; an object given as float keeps its
// float box, which is exact relative to the origin). With
// Options::exact_pairs the broad phase re-checks every pair of the rounded
// boxes against the exact ones (double arithmetic) and reports only those.
//
// Invariants: while in_use, ExactBoxes' arrays have one entry per slot;
// given[s] says whether boxes[s] holds the user's box of a live object.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "sapling/algorithm.hpp"
#include "sapling/box.hpp"

namespace sapling::detail {

/// The smallest float box that holds the real box `box - origin`: each
/// difference rounded outward exactly (as round_sum(), box.hpp, rounds it),
/// so that the float box never loses a point.
Box3 outward_relative(const Box3d& box, const std::array<double, 3>& origin) noexcept;
/// The same for a span of boxes into out[0 .. boxes.size()), far cheaper
/// per box the longer the span (the SSE rounding mode is set once).
void outward_relative(std::span<const Box3d> boxes, const std::array<double, 3>& origin, Box3* out) noexcept;
/// A float box as a double box (exactly).
inline Box3d widened(const Box3& b) noexcept {
  return Box3d{{b.min[0], b.min[1], b.min[2]}, {b.max[0], b.max[1], b.max[2]}};
}
inline Box3d lift(const Box2d& b) noexcept { return Box3d{{b.min[0], b.min[1], 0.0}, {b.max[0], b.max[1], 0.0}}; }

/// The user's double boxes by slot, kept once an object is given in doubles.
struct ExactBoxes {
  std::vector<Box3d> boxes;         // slot -> the user's double box, where given[s]
  std::vector<std::uint8_t> given;  // slot -> 1 if the object was given in doubles
  bool in_use = false;

  void start(std::size_t slots) {
    if (in_use) return;
    boxes.assign(slots, Box3d{});
    given.assign(slots, 0);
    in_use = true;
  }
  void reserve_slots(std::size_t slots);
  void push_slot() {
    if (in_use) boxes.push_back(Box3d{}), given.push_back(0);
  }
  void pop_slot() noexcept {
    if (in_use) boxes.pop_back(), given.pop_back();
  }
  std::size_t memory_bytes() const noexcept { return boxes.capacity() * sizeof(Box3d) + given.capacity(); }
  bool validate(std::size_t slots) const {
    return in_use ? boxes.size() == slots && given.size() == slots : boxes.empty() && given.empty();
  }
};

/// The broad phase's origin, a pending shift, the double boxes of the
/// staged frame and, with Options::exact_pairs, the pairs of the exact
/// boxes.
struct LargeWorld {
  std::array<double, 3> origin{};  // the stored boxes' origin, as of the last update()
  std::array<double, 3> pending_offset{};
  bool shift_pending = false;

  /// The origin boxes given now are relative to: with a shift pending, the
  /// one the next update() moves to.
  std::array<double, 3> staging_origin() const noexcept {
    if (!shift_pending) return origin;
    return {origin[0] + pending_offset[0], origin[1] + pending_offset[1], origin[2] + pending_offset[2]};
  }
  // The frame's double moves: slots and boxes, written to the object
  // table's ExactBoxes when the frame commits (double adds go to the table
  // as they are staged).
  std::vector<Slot> staged_slots;
  std::vector<Box3d> staged_boxes;
  std::vector<Pair> exact_pairs;  // sorted, with Options::exact_pairs
  std::vector<Pair> scratch;

  std::size_t memory_bytes() const noexcept {
    return staged_slots.capacity() * sizeof(Slot) + staged_boxes.capacity() * sizeof(Box3d) +
           (exact_pairs.capacity() + scratch.capacity()) * sizeof(Pair);
  }

  void drop_staged() noexcept {
    staged_slots.clear();
    staged_boxes.clear();
  }
  /// The staging room and scratch given back (between frames: nothing staged).
  void free_staging() noexcept {
    std::vector<Slot>().swap(staged_slots);
    std::vector<Box3d>().swap(staged_boxes);
    std::vector<Pair>().swap(scratch);
  }
  /// The frame's moves become the table's: every slot the frame moved is
  /// float-given unless it is among the staged double ones. Never fails:
  /// the table holds every slot.
  void commit(ExactBoxes& table, std::span<const Slot> moved) noexcept;
};

}  // namespace sapling::detail
