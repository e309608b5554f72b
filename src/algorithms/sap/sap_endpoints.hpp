// sap's structure: the sorted endpoint arrays of Terdiman 2007, part I
// (sections I.3-I.5b, appendix B), one per axis, and what is done to them:
// walking moved boxes by adjacent swaps (pairs flip as endpoints pass),
// merging new boxes and compacting removed ones in one pass per axis,
// scanning for a new box's pairs, rebuilding from scratch, validating.
// The boxes, ids and pairs stay with the owner (sap.cpp) and are passed in;
// the owner's policy (sap_policy.hpp) says when to do what. Invariants and
// cost: sap.cpp's opening comment.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "algorithms/sap/live_boxes.hpp"
#include "detail/float_bounds.hpp"
#include "sapling/algorithm.hpp"
#include "sapling/box.hpp"
#include "sapling/pair_manager.hpp"

namespace sapling::detail {

/// The endpoint arrays of the persistent sweep-and-prune.
class SapEndpoints {
 public:
  /// The endpoint word: the sortable key of the coordinate in the upper 32
  /// bits, then the min/max flag (bit 31), then the owner's slot. Endpoints
  /// are ordered by (key, flag), the upper 33 bits, so at equal keys a min
  /// comes before a max; the owner bits play no part in the order.
  using Endpoint = std::uint64_t;

  /// An endpoint as the axis arrays hold it, with its owner's bounds on one
  /// other axis (the array's "cross axis") as sortable keys: a swap tests
  /// that axis from the array itself, and looks further only when the two
  /// boxes overlap there. 16 bytes.
  struct Entry {
    Endpoint word = 0;
    std::uint32_t cross_min = 0;
    std::uint32_t cross_max = 0;
  };

  /// What walk_moves() did.
  struct Walked {
    std::size_t done = 0;     ///< moved boxes walked, from the first
    std::uint64_t swaps = 0;  ///< swaps they took
    double displacement = 0;  ///< how far they moved, summed (moved_by())
  };

  /// Empty arrays (sentinels only) for 2D (`dims` 2) or 3D input.
  explicit SapEndpoints(int dims);

  /// Whether the arrays describe the live boxes (false after set_stale(),
  /// until restore()).
  bool current() const noexcept { return current_; }
  /// Marks the arrays out of date: the boxes changed without them.
  /// The positions go with the arrays' currency: restore() and
  /// finish_staged() write every one anew (24 bytes per object).
  void set_stale() noexcept {
    if (current_) {
      for (std::vector<std::uint32_t>& p : pos_) std::vector<std::uint32_t>().swap(p);
    }
    current_ = false;
  }

  /// Notes the added slots; while the arrays are current, makes room for
  /// them in the position arrays and widens the extents to their boxes.
  void add(std::span<const Slot> added, std::span<const Box3> boxes);
  /// Widens the extents to one box's.
  void widen_extent(const Box3& box);
  /// The same for many boxes, rounded up once.
  void widen_extents(std::span<const Box3> boxes);
  /// The same for every live box.
  void widen_extents(const LiveBoxes& live);
  /// The same for n boxes, box_of(i) the i-th.
  template <class BoxOf>
  void widen_extents_of(std::size_t n, BoxOf box_of) {
    for (int k = 0; k < axes_; ++k) {
      double widest = 0;
      for (std::size_t i = 0; i < n; ++i)
        widest = std::max(widest, double(box_of(i).max[k]) - double(box_of(i).min[k]));
      extent_[k] = std::max(extent_[k], extent_of_widest(widest));
    }
  }
  /// Tags the removed boxes' entries (before they leave `live`), which
  /// merge() then leaves out; until then no overlap starts or stops with them.
  void tag(std::span<const Slot> removed);

  /// Walks the moved boxes one by one, writing their new boxes into `live`
  /// and flipping pairs in `pairs` as endpoints pass; stops early when the
  /// swaps run over `budget` or are on course to (walk_over_budget()).
  Walked walk_moves(std::span<const Slot> moved, std::span<const Box3> boxes, double budget, LiveBoxes& live,
                    std::span<const Id> ids, PairManager& pairs);
  /// Brings every axis up to date after removals (with `tagged`) and
  /// additions (dense indices from `first_new` on).
  void merge(const LiveBoxes& live, std::size_t first_new, bool tagged);
  /// Adds the pairs of the new boxes (dense indices from `first_new` on)
  /// with the old ones by scanning the arrays around each, unless that
  /// would scan more than `budget` entries: then false, nothing added.
  /// `scan_length` gets the entries planned per new box.
  bool scan_added(const LiveBoxes& live, std::size_t first_new, double budget, std::span<const Id> ids,
                  PairManager& pairs, double& scan_length);
  /// Rebuilds every array from the live boxes.
  void restore(const LiveBoxes& live);

  /// A frame for batch_update(). The live boxes already hold the moved
  /// boxes' new bounds and the added boxes (dense indices from `first_new`
  /// on), and no longer hold the removed ones.
  struct Batch {
    std::span<const Slot> moved;
    std::span<const Box3> moved_to;  ///< their bounds now, as `moved` (before: LiveBoxes::box_before())
    std::span<const Slot> removed;
    std::size_t first_new = 0;
  };
  /// Tracy, Buss and Woods' single-pass batch update (3.2.1, sap_batch.cpp):
  /// per axis one pass that drops the removed boxes' entries, merges the
  /// added ones and insertion-sorts the moved ones, the removed boxes' pairs
  /// dropped on the first axis and the added boxes' pairs found on the last
  /// by sweep sets, the moves' pairs flipped by swaps. Needs current arrays;
  /// returns the swaps.
  std::uint64_t batch_update(const Batch& frame, const LiveBoxes& live, std::span<const Id> ids, PairManager& pairs);

  /// Stale arrays rebuilt a step at a time over frames instead of in one
  /// restore(): per axis, gathering the entries and three radix passes
  /// (kStepsPerAxis), each about 2n entries' work, from the boxes of the frame
  /// that gathers them; the boxes changed since are noted (note_changed())
  /// and put right by finish_staged(), one merge pass per axis.
  static constexpr int kStepsPerAxis = 4;
  /// Whether a staged rebuild has begun (then every frame's changed slots
  /// must be noted).
  bool staging() const noexcept { return stage_ > 0; }
  /// Steps left before finish_staged() may run.
  int stage_steps_left() const noexcept { return kStepsPerAxis * axes_ - stage_; }
  /// Boxes changed since the staged rebuild began.
  std::size_t staged_changes() const noexcept { return changed_list_.size(); }
  /// Does up to `steps` steps of the staged rebuild.
  void stage(const LiveBoxes& live, int steps);
  /// Notes slots removed, moved or added after the staged rebuild began.
  void note_changed(std::span<const Slot> slots);
  /// Ends a complete staged rebuild: the changed boxes' entries dropped and
  /// those still live merged in again from `live`; the arrays are current.
  void finish_staged(const LiveBoxes& live);
  /// Drops a staged rebuild (restore() does too).
  void drop_staged() noexcept;

  /// Whether the arrays, if current, describe `live` exactly.
  bool validate(const LiveBoxes& live) const;
  /// Bytes held.
  std::size_t memory_bytes() const;
  /// Draws the x array's endpoints in sorted order, each a line at its
  /// coordinate across its box's extent on the cross axis, owned by the
  /// box's id (`ids` by slot); nothing while the arrays are stale.
  void debug_draw(DebugDraw& draw, std::span<const Id> ids) const;

  /// The frame's filters (FrameOps::filter), checked before a pair is added.
  void set_filter(PairFilter filter) noexcept { filter_ = filter; }

 private:
  PairFilter filter_;
  template <int K, int C>
  std::uint64_t move_on_axis(Slot a, const Box3& box, std::span<const Id> ids, PairManager& pairs);
  template <int K, int C, bool kMax>
  std::uint32_t walk(Slot a, Entry moving, std::span<const Id> ids, PairManager& pairs);
  void size_positions();
  void merge_axis(const LiveBoxes& live, int k, std::size_t first_new, bool tagged);
  void sort_new_entries(const LiveBoxes& live, int k, std::size_t first_new);
  struct Open {  // a box open in a batch pass' sweep: its slot, its cross bounds
    Slot slot;
    std::uint32_t cross_min, cross_max;
  };
  template <bool kRemovals, bool kInsertions>
  std::uint64_t batch_axis(int k, const Batch& frame, const LiveBoxes& live, std::span<const Id> ids,
                           PairManager& pairs);
  const Box3& box_before(const LiveBoxes& live, Slot s) const noexcept;
  Entry make_entry(const LiveBoxes& live, int k, std::size_t dense, bool is_max) const;
  std::uint32_t scan_start(const LiveBoxes& live, int k, std::size_t dense) const;
  void scan_pairs(const LiveBoxes& live, int k, std::size_t dense, std::size_t first_new, std::uint32_t from,
                  std::span<const Id> ids, PairManager& pairs) const;

  int axes_ = 3;                       // arrays kept: 2 for 2D input (z is always [0, 0])
  std::array<int, 3> cross_{1, 2, 0};  // each array's cross axis (2D: x and y each other's)
  std::array<std::vector<Entry>, 3> axis_;
  // Where each live object's endpoints are: pos_[axis][2 * slot + 0] the
  // index of its min in that axis' array, + 1 of its max. One array per axis
  // keeps the stores of a walk in one small array.
  std::array<std::vector<std::uint32_t>, 3> pos_;
  std::size_t slots_ = 0;               // slots seen: pos_ holds 2 * slots_ entries once size_positions() ran
  std::array<double, 3> extent_{};      // per axis, at least the largest extent of a live box
  bool current_ = true;                 // false after set_stale(), until restore()
  std::vector<Entry> pending_, spare_;  // scratch: entries to merge, radix sort buffer
  std::vector<Entry> rebuilt_;          // scratch: the axis array being rebuilt, swapped in
  int stage_ = 0;                       // staged rebuild steps done (0: none begun)
  std::vector<std::uint8_t> changed_;   // by slot: changed since the staged rebuild began
  std::vector<Slot> changed_list_;      // those slots, once each
  struct ScanPlan {
    int axis;
    std::uint32_t from;
  };
  std::vector<ScanPlan> scan_plan_;  // scratch: per new object, where scan_added() scans
  // batch_update()'s scratch: what the frame did to each slot, the sweep
  // sets SL, SR and SI of the pass (boxes kept, removed, inserted) and where
  // each open box sits in its set.
  std::vector<std::uint8_t> change_;       // by slot: unchanged, moved, removed or added (0 between frames)
  std::array<std::vector<Open>, 2> open_;  // SR, SI
  std::vector<std::uint64_t> open_bits_;   // by slot: a kept box open in the pass, lazily in SL
  std::vector<Open> kept_open_;            // SL, kept lazily (sap_batch.cpp)
  std::vector<std::uint32_t> open_at_;
};

}  // namespace sapling::detail
