// Contact distances: an object may ask to be paired while it is within a
// distance of another, rather than only while they overlap (PhysX's
// contact distance, Box2D's and Jolt's speculative margin). A pair is
// reported while the two boxes, each grown by its own distance (grown(),
// box.hpp), overlap.
//
// The algorithms never hear of it: the object table's `boxes[s]`, which
// every algorithm, the static tree and the query tree see, is the *broad
// box*, broad_box(own, distance); this table keeps the *own box* (the one
// the user gave, which box(id), region queries and rays answer on) and the
// distance, by slot. Like the filters, the table comes into being with the
// first distance other than 0, so a world without distances pays nothing:
// until then every broad box is its own box.
//
// Invariants (validate()): while in_use, both arrays have one entry per
// slot, every distance is finite and >= 0, and every live object's broad
// box is broad_box(own box, distance).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include "sapling/algorithm.hpp"
#include "sapling/box.hpp"

namespace sapling::detail {

/// The box the algorithms see for an object whose own box is `own`: the
/// one statement of the rule, used wherever a broad box is made. A 2D
/// broad phase grows x and y only: its boxes stay in the plane z = 0.
inline Box3 broad_box(const Box3& own, float distance, int dims) noexcept {
  Box3 broad = grown(own, distance);
  if (dims == 2) broad.min[2] = broad.max[2] = 0.0f;
  return broad;
}

/// Whether `distance` can be a contact distance: finite and >= 0.
inline bool valid_contact_distance(float distance) noexcept { return std::isfinite(distance) && distance >= 0.0f; }

struct ContactDistances {
  std::vector<float> distances;  // slot -> contact distance, while in_use
  std::vector<Box3> own_boxes;   // slot -> the user's box as of the last update(), while in_use
  bool in_use = false;
  int dims = 3;  // the broad phase's (Options::dims)

  float distance_of(Slot s) const noexcept { return in_use ? distances[s] : 0.0f; }
  /// The table comes into being with the first distance other than 0 in a
  /// batch; every object until then has distance 0 and its broad box is
  /// its own. Returns whether the table started now.
  bool start_for(std::span<const float> batch, std::span<const Box3> broad_boxes, int broad_phase_dims);

  void reserve_slots(std::size_t slots);
  void push_slot() {
    if (in_use) distances.push_back(0.0f), own_boxes.push_back(Box3{});
  }
  void pop_slot() noexcept {
    if (in_use) distances.pop_back(), own_boxes.pop_back();
  }
  std::size_t memory_bytes() const noexcept {
    return distances.capacity() * sizeof(float) + own_boxes.capacity() * sizeof(Box3);
  }
  /// `live(s)` tells which slots hold a live object.
  template <class IsLive>
  bool validate(std::span<const Box3> broad_boxes, IsLive&& live) const {
    if (!in_use) return distances.empty() && own_boxes.empty();
    if (distances.size() != broad_boxes.size() || own_boxes.size() != broad_boxes.size()) return false;
    for (Slot s = 0; s < broad_boxes.size(); ++s) {
      if (!live(s)) continue;
      if (!valid_contact_distance(distances[s]) || !(broad_box(own_boxes[s], distances[s], dims) == broad_boxes[s])) {
        return false;
      }
    }
    return true;
  }
};

/// The own boxes and distances of a frame's staged additions and moves,
/// parallel to StagedFrame's added and moved lists, kept only while the
/// object table's ContactDistances is in use (the staged boxes are then
/// the broad boxes). apply() trades the moved ones with the table's, as
/// the boxes are traded, so that undo() is the same trade again.
struct StagedContact {
  std::vector<Box3> added_own, moved_own;
  std::vector<float> added_distances, moved_distances;

  /// The table has just come into use: the operations staged before it
  /// had distance 0 and their broad boxes are their own.
  void start(std::span<const Box3> added_boxes, std::span<const Box3> moved_boxes);
  void truncate(std::size_t added, std::size_t moved) {
    added_own.resize(std::min(added_own.size(), added));
    added_distances.resize(std::min(added_distances.size(), added));
    moved_own.resize(std::min(moved_own.size(), moved));
    moved_distances.resize(std::min(moved_distances.size(), moved));
  }
  void apply(ContactDistances& table, std::span<const Slot> added, std::span<const Slot> moved) noexcept;
  void undo(ContactDistances& table, std::span<const Slot> moved) noexcept;
  void clear() noexcept;
  void free_storage() noexcept;
  std::size_t memory_bytes() const noexcept {
    return (added_own.capacity() + moved_own.capacity()) * sizeof(Box3) +
           (added_distances.capacity() + moved_distances.capacity()) * sizeof(float);
  }
};

}  // namespace sapling::detail
