// sap's resting set: a broad phase of its own for frames where many boxes
// move. The boxes that have not moved since it was laid out rest in box
// pruning's prepared grid (as PhysX's automatic box pruning keeps its
// sleeping boxes); the others are active. A frame pairs the boxes moved or
// added this frame (the changed ones) against the resting grid, among
// themselves and against the other active boxes; pairs among unchanged boxes
// stand. Cost per frame: O(changed + active + resting entries in the
// changed boxes' cells + pairs). The grid is edited in place between
// layouts: a resting box that moves frees its entries where they lie (its
// search meets them), and an active box at rest again takes a free entry
// near where it sorts (settle()), so that bodies woken a few at a time
// leave the active list as they fall asleep. Laid out again when the
// active list and the dead entries would soon cost more
// (wants_preparation() in sap_policy.hpp): the idle active boxes merged
// into the grid and the dead entries dropped in one pass, O(n)
// (BoxPruner::update_prepared()), or, where the grid no longer suits the
// boxes, all sorted into a new one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "algorithms/sap/sap_endpoints.hpp"
#include "sapling/algorithm.hpp"
#include "sapling/box_pruning.hpp"
#include "sapling/pair_manager.hpp"

namespace sapling::detail {

/// Which of sap's live boxes rest in a prepared box-pruning grid and which
/// are active, and the pairing of the changed boxes against them.
class RestingSet {
 public:
  /// An empty set laid out in `pruner`'s prepared grid; the pruner's other
  /// searches stay free for its owner (one set of scratch buffers).
  explicit RestingSet(BoxPruner& pruner) : pruner_(pruner) {}

  /// Keeps the bookkeeping for a frame's operations, whatever path the frame
  /// takes: removed boxes leave the set, moved ones leave it for the active
  /// list, added ones join the active list.
  void track(const FrameOps& ops);

  /// Active boxes: moved or added since the set was laid out.
  std::size_t active() const noexcept { return active_.size(); }
  /// Laid-out entries of boxes since moved or removed, those freed in place
  /// included (about: one an index).
  std::size_t dead() const noexcept { return dead_ + freed_; }
  /// Boxes laid out in the grid, dead ones included.
  std::size_t size() const noexcept { return pruner_.prepared_size(); }
  /// The grid's cells.
  std::size_t cells() const noexcept { return pruner_.prepared_cells(); }

  /// Removes from `pairs` every pair a box removed or moved this frame had
  /// before it (and maybe a few it did not: every other pair of a moved box
  /// is added again by pair_changed()), found by searching the set with
  /// their boxes before the frame (LiveBoxes::box_before()) rather than by
  /// a scan of every pair: the resting grid, among themselves and against
  /// the other active boxes, whose boxes in `live` must still be those
  /// before the frame. After track(), before pair_changed() and before `live`
  /// takes the moved boxes' new bounds. Returns false, having removed
  /// nothing, when the grid declines the boxes (far larger than its cells).
  bool drop_pairs(std::span<const Slot> removed, std::span<const Slot> moved, const LiveBoxes& live,
                  std::span<const Id> ids, PairManager& pairs, std::vector<IndexPair>& found);

  /// The frame's pairs in one search, where the set is not laid out anew:
  /// each removed, moved or added box searches the set (the resting grid,
  /// the other changed boxes, the other active boxes) once, with the union
  /// of its boxes before (LiveBoxes::box_before()) and after the frame (in
  /// `live`), or with both apart when it moved further than its own size;
  /// every pair it meets is set by the boxes after the frame: added if they
  /// overlap and the filter accepts, else removed (Terdiman 2007, II.3c, as
  /// multi-sap updates its cells). After track(), with `live` holding the
  /// frame's boxes. First the idle active boxes at rest again settle into
  /// the grid in place where they can (settle()). Returns false, having
  /// changed no pair, when the grid declines the boxes (far larger than
  /// its cells).
  bool update_changed(std::span<const Slot> removed, std::span<const Slot> moved, std::span<const Slot> added,
                      const LiveBoxes& live, std::span<const Id> ids, PairManager& pairs,
                      std::vector<IndexPair>& found);

  /// Adds the pairs of the boxes moved or added this frame (their pairs
  /// dropped already, their new boxes in `live`) with every live box; with
  /// `prepare`, lays out every other live box as the new resting set first,
  /// else settles the idle active boxes it can first. `found` is scratch.
  void pair_changed(std::span<const Slot> moved, std::span<const Slot> added, bool prepare, const LiveBoxes& live,
                    std::span<const Id> ids, PairManager& pairs, std::vector<IndexPair>& found);

  /// Lays out every live box as the resting set; none stays active (after a
  /// frame, its pairs already found).
  void lay_out_all(const LiveBoxes& live);
  /// The same, and appends every pair of overlapping live boxes {i, j}, by
  /// dense index in `live`, found in the same pass (BoxPruner::prepare).
  void lay_out_all(const LiveBoxes& live, std::vector<IndexPair>& pairs);

  /// Where no box rests in the grid any more (every one moved or went since
  /// it was laid out: a world where nearly all move), forgets the grid, its
  /// arrays left to the pruner's recomputations (BoxPruner::forget_prepared());
  /// the next layout lays every box out anew, as it would have. Returns
  /// whether it did.
  bool forget_dead_grid();

  /// New resting sets laid out by merging into the last.
  std::uint64_t merges() const noexcept { return merges_; }
  /// Active boxes that joined the resting set in place (settle()).
  std::uint64_t settled() const noexcept { return settled_; }

  /// Whether the bookkeeping matches `live`.
  bool validate(const LiveBoxes& live) const;
  /// Bytes held, the pruner's not included.
  std::size_t memory_bytes() const;

  /// The frame's filters (FrameOps::filter), checked before a pair is added.
  void set_filter(PairFilter filter) noexcept { filter_ = filter; }

 private:
  PairFilter filter_;
  void prepare(const LiveBoxes& live, std::vector<IndexPair>* pairs = nullptr);
  bool merge_active(const LiveBoxes& live);
  void gather_idle_active(const LiveBoxes& live);
  void reset_active();
  void mark_changed(std::span<const Slot> slots);
  void unmark_changed(std::span<const Slot> slots);
  void retire(std::uint32_t index, Slot s, const Box3& laid_out);
  void settle(const LiveBoxes& live);
  void unname_the_rest();

  BoxPruner& pruner_;
  // By slot: kResting while the slot's box is in the grid with its current
  // bounds, kActive once it moved or was added since (listed in active_),
  // kGone for free slots.
  std::vector<std::uint8_t> state_;
  std::vector<Slot> active_;
  std::vector<Slot> resting_slot_;  // prepared box index -> slot, kNoSlot for a free index
  static constexpr Slot kNoSlot = ~Slot{0};
  std::size_t dead_ = 0;   // prepared boxes whose slot is no longer kResting
  std::size_t freed_ = 0;  // prepared boxes freed in place since the last layout, less those settled since
  std::uint64_t merges_ = 0, settled_ = 0;
  std::vector<Box3> query_boxes_, other_boxes_;  // scratch: this frame's changed boxes, the other active ones
  std::vector<Slot> query_slots_, other_slots_;
  std::vector<IndexPair> among_;  // scratch: the changed boxes' pairs among themselves
  // Scratch of update_changed(): per search box, its slot and the slot's box after the frame (if live).
  std::vector<Box3> search_boxes_, search_now_;
  std::vector<Slot> search_slots_;
  std::vector<std::uint8_t> search_live_;
  std::vector<std::uint8_t> keep_;        // scratch: by prepared index, whether it stays in a merge
  std::vector<std::uint32_t> merged_at_;  // scratch: the prepared indices of the boxes a merge adds
  std::vector<Slot> settling_;            // scratch: the boxes settle() tries
};

}  // namespace sapling::detail
