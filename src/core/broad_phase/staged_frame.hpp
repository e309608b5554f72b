// One frame's operations as the user stages them, checked whole before any
// is taken (docs/trace-format.md, "Semantics"): a batch of add(), move(),
// remove() or set_filter() is taken entirely or refused with the first
// fault, and leaves the object table as it was.
//
// Between calls, each staged slot carries this frame's stamp
// (object_table.hpp); added slots are kPendingAdd. While update() applies
// the frame, apply_geometry() puts the frame's boxes into the table (the
// moved objects' old boxes into moved_boxes) and marks the removed objects
// kPendingRemove, so that every later step sees the frame's end state;
// undo_geometry() takes that back if the frame fails.
//
// The algorithm sees dynamic objects only: split_dynamic() gives it its
// share of the staged lists (the lists themselves while no object is
// static), both to ask accepts() and to run update().
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/broad_phase/contact_distance.hpp"
#include "core/broad_phase/large_world.hpp"
#include "core/broad_phase/object_table.hpp"
#include "sapling/algorithm.hpp"
#include "sapling/status.hpp"

namespace sapling::detail {

/// The dynamic objects' share of a frame's operations, kept in lists of
/// its own when some objects are static.
struct DynamicShare {
  std::vector<Slot> removed, moved, added;
  std::vector<Box3> moved_boxes, added_boxes;
  // A batch's dynamic objects (split_batch()): their ids, boxes and
  // indices in the batch.
  std::vector<Id> batch_ids;
  std::vector<Box3> batch_boxes;
  std::vector<std::size_t> batch_index;

  /// `ops` without its static objects: `ops` itself when none is static.
  FrameOps split(const FrameOps& ops, const ObjectTable& objects);
  /// The dynamic objects of a batch of `ids` staged at `slots` (parallel),
  /// into batch_ids, batch_boxes and batch_index.
  void split_batch(std::span<const Id> ids, std::span<const Slot> slots, std::span<const Box3> boxes,
                   const ObjectTable& objects);
  void free_storage() noexcept;
  /// Large room the last frame used less than half of goes (reserve.hpp).
  void give_back_unused() noexcept;
  std::size_t memory_bytes() const noexcept;
};

/// The check of a box a broad phase takes: check_box(), and in a 2D broad
/// phase a box in the plane z = 0.
BoxCheck check_box_in(const Box3& box, int dims) noexcept;
/// The second half of check_box_in(): a box of a planar broad phase lies in z = 0.
inline BoxCheck check_plane(const Box3& box, int dims) noexcept {
  if (dims == 2 && !(box.min[2] == 0.0f && box.max[2] == 0.0f)) return {BoxFault::kOffPlane, 2};
  return {};
}

/// A batch's boxes as the user gave them: float boxes, or double boxes
/// (large_world.hpp), each checked and rounded outward relative to `origin`
/// as it is staged, so that a batch of a million needs no scratch copy.
struct BoxBatch {
  std::span<const Box3> floats;
  std::span<const Box3d> doubles;
  std::array<double, 3> origin{};

  BoxBatch() = default;
  BoxBatch(std::span<const Box3> boxes) : floats(boxes) {}  // NOLINT: a float batch is the common case
  BoxBatch(std::span<const Box3d> boxes, const std::array<double, 3>& relative_to)
      : doubles(boxes), origin(relative_to) {}

  bool in_doubles() const noexcept { return !doubles.empty(); }
  std::size_t size() const noexcept { return in_doubles() ? doubles.size() : floats.size(); }
  /// Box i as the broad phase keeps it, into `box`, and what is wrong with
  /// it, if anything (a double box is checked before it is rounded).
  BoxCheck take(std::size_t i, int dims, Box3& box) const noexcept {
    if (!in_doubles()) {
      box = floats[i];
      return check_box_in(box, dims);
    }
    if (const BoxCheck check = check_box(doubles[i]); !check) return check;
    box = rounded(i);  // a good box rounds outward to a good box: its plane is left
    return check_plane(box, dims);
  }

 private:
  // Double boxes are rounded kChunk at a time, ahead of take() (which
  // goes through the batch in order), the rounding mode set once a chunk.
  static constexpr std::size_t kChunk = 64;
  mutable std::array<Box3, kChunk> chunk_;
  mutable std::size_t chunk_begin_ = 0, chunk_size_ = 0;

  const Box3& rounded(std::size_t i) const noexcept {
    if (i < chunk_begin_ || i >= chunk_begin_ + chunk_size_) {
      chunk_begin_ = i;
      chunk_size_ = std::min(kChunk, doubles.size() - i);
      outward_relative(doubles.subspan(i, chunk_size_), origin, chunk_.data());
    }
    return chunk_[i - chunk_begin_];
  }
};

class StagedFrame {
 public:
  std::vector<Slot> removed, moved, added, refiltered;
  std::vector<Box3> moved_boxes, added_boxes;
  std::vector<Filter> refilters;  // parallel to refiltered; the old filters while update() runs

  bool empty() const noexcept { return removed.empty() && moved.empty() && added.empty() && refiltered.empty(); }
  /// Whether a static object is removed, moved or added this frame.
  bool changes_statics(const ObjectTable& objects) const noexcept;

  /// Stages a batch (`stamp` is the frame's: frame_stamp()). The algorithm has
  /// the last say on the dynamic objects of an add or move batch.
  /// `distances`: the contact distances (contact_distance.hpp), one per
  /// id or none (0 for an add, the object's own for a move); the staged
  /// boxes are then the broad boxes.
  /// An add in doubles writes the double boxes to the table's ExactBoxes
  /// (started by the caller); a move's are the caller's to keep.
  Status add(ObjectTable& objects, Stamp stamp, std::span<const Id> ids, const BoxBatch& boxes,
             std::span<const Filter> filters, std::span<const float> distances, Motion motion,
             const Algorithm& algorithm, int dims);
  Status change(ObjectTable& objects, Stamp stamp, Operation op, std::span<const Id> ids, const BoxBatch& boxes,
                std::span<const Filter> filters, std::span<const float> distances, const Algorithm& algorithm,
                int dims);
  /// Forgets every staged operation (additions undone newest first, so
  /// that the free list is as it was); never fails: add() reserved the room.
  void drop(ObjectTable& objects) noexcept;

  /// The algorithm's share of the frame (see the opening), valid until the
  /// next change to the staged lists.
  FrameOps dynamic_ops(const ObjectTable& objects);

  /// Staged filters and the table trade places: the table gets the frame's
  /// filters and refilters the old ones (and back again, on failure).
  void swap_filters(ObjectTable& objects) noexcept;
  /// `moves`: false leaves the moved boxes to the caller, who swaps each
  /// into the table (apply_move()) in one pass of its own over their rows.
  void apply_geometry(ObjectTable& objects, bool moves = true) noexcept;
  /// The k-th staged move's box into the table, its old box into moved_boxes[k].
  void apply_move(ObjectTable& objects, std::size_t k) noexcept { std::swap(objects.boxes[moved[k]], moved_boxes[k]); }
  void undo_geometry(ObjectTable& objects) noexcept;
  /// The frame becomes the table's state (apply_geometry() placed the
  /// boxes): removed slots freed, added ones live, the lists emptied.
  /// Never fails: update() reserved the free list's room.
  void commit(ObjectTable& objects) noexcept;

  void clear() noexcept;
  void free_storage() noexcept;
  /// Bytes of the staging lists and their scratch (room kept between frames).
  std::size_t memory_bytes() const noexcept;

 private:
  // `slots`: where the batch's ids are staged, parallel to them.
  Status algorithm_accepts(const ObjectTable& objects, Operation op, std::span<const Id> ids,
                           std::span<const Slot> slots, std::span<const Box3> boxes, const FrameOps& staged,
                           const Algorithm& algorithm);

  DynamicShare dynamic_;
  StagedContact contact_;             // own boxes and distances of the staged adds and moves, while contact.in_use
  std::vector<Stamp> old_stamps_;     // undo log of a refused batch
  std::size_t first_fresh_slot_ = 0;  // the table's slots before the frame's first addition: later ones are new
};

}  // namespace sapling::detail
