// The persistent sweep-and-prune, "sap" (sap.cpp has the design notes).
// Internal: the registry creates it through builtin::make_sap; tests include
// this header to drive it directly and to read its counters.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "algorithms/builtin.hpp"
#include "detail/slot_map.hpp"
#include "sapling/algorithm.hpp"
#include "sapling/box_pruning.hpp"
#include "sapling/detail/hash_index.hpp"
#include "sapling/task_system.hpp"

namespace sapling::builtin {

/// What the sweep-and-prune did since it was created: which path each frame
/// took, and how much work the incremental path did.
struct SapCounters {
  std::uint64_t incremental_frames = 0;  ///< frames finished by swaps, merges and compaction
  std::uint64_t recomputed_frames = 0;   ///< frames finished by a full recomputation
  std::uint64_t resting_frames = 0;      ///< frames finished by pruning the changed boxes against the resting set
  std::uint64_t preparations = 0;        ///< resting sets laid out (sorted into box pruning's grid)
  std::uint64_t aborted_walks = 0;       ///< incremental attempts that switched to another path midway
  std::uint64_t restores = 0;            ///< endpoint arrays rebuilt by radix sort after recomputed frames
  std::uint64_t swaps = 0;               ///< endpoint swaps done by moving objects
  std::uint64_t merged_boxes = 0;        ///< boxes batch-inserted into the endpoint arrays
  std::uint64_t compacted_boxes = 0;     ///< boxes batch-removed from the endpoint arrays
  std::uint64_t scanned_batches = 0;     ///< insertion batches paired with the old boxes by scanning the arrays
  std::uint64_t pruned_batches = 0;      ///< insertion batches paired with the old boxes by bipartite box pruning
};

class SweepAndPrune final : public Algorithm {
 public:
  explicit SweepAndPrune(const Options& options);
  ~SweepAndPrune() override;

  void update(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) override;
  std::size_t memory_bytes() const override;
  bool validate() const override;

  const SapCounters& counters() const noexcept { return counters_; }

  /// For measurements of the plain SAP of part I: with `on`, every frame
  /// walks its moves and merges its additions, whatever it costs.
  void set_walk_only(bool on) noexcept { walk_only_ = on; }

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

 private:
  void drop_removed(std::span<const Slot> removed, bool tag);
  void remove_pairs_of(std::span<const Slot> removed);
  std::size_t walk_moves(const FrameOps& ops, double budget);
  template <int K, int C>
  std::uint64_t move_on_axis(Slot a, const Box3& box);
  template <int K, int C, bool kMax>
  std::uint32_t walk(Slot a, Entry moving);
  void add_objects(std::span<const Slot> added, std::span<const Box3> boxes, std::span<const Id> ids);
  void rebuild_axis(int k, std::size_t first_new, bool tagged);
  Entry make_entry(int k, std::size_t dense, bool is_max) const;
  void pair_added(std::size_t first_new);
  bool scan_added(std::size_t first_new);
  std::uint32_t scan_start(int k, std::size_t dense) const;
  void scan_pairs(int k, std::size_t dense, std::size_t first_new, std::uint32_t from);
  void add_found_pairs(std::size_t offset_i, std::size_t offset_j);
  void recompute(const FrameOps& ops, std::size_t moves_applied, std::span<const Id> ids);
  void track_changes(const FrameOps& ops);
  bool walk_could_pay(const FrameOps& ops, double budget_ns) const;
  double resting_cost(std::size_t changed, std::size_t live) const;
  bool wants_preparation(std::size_t changed, std::size_t live) const;
  void prune_changed(const FrameOps& ops, std::size_t moves_applied, std::span<const Id> ids);
  void prepare_resting();
  void restore_arrays();
  void widen_extent(const Box3& box);

  int axes_ = 3;                       // endpoint arrays kept: 2 for 2D input (z is always [0, 0])
  std::array<int, 3> cross_{1, 2, 0};  // each array's cross axis (2D: x and y each other's)
  std::array<std::vector<Entry>, 3> axis_;
  // Where each live object's endpoints are: pos_[axis][2 * slot + 0] the
  // index of its min in that axis' array, + 1 of its max. One array per axis
  // keeps the stores of a walk in one small array.
  std::array<std::vector<std::uint32_t>, 3> pos_;
  std::vector<Id> id_;  // by slot
  static constexpr std::size_t kBox = 0;
  detail::SlotMap<Box3> live_;  // the live boxes, dense
  const std::vector<Box3>& bounds() const noexcept { return live_.values<kBox>(); }
  std::array<double, 3> extent_{};      // per axis, at least the largest extent of a live box
  bool walk_only_ = false;              // set_walk_only()
  bool arrays_valid_ = true;            // false after a recomputed frame, until restore_arrays()
  double mobility_ = 0;                 // swaps per moved object, last measured
  double walk_displacement_ = 0;        // how far those objects moved, on average (moved_by())
  double scan_length_ = 0;              // entries scanned per new object, last planned
  std::uint32_t recompute_streak_ = 0;  // recomputed frames in a row with stale arrays
  std::uint32_t probe_interval_ = 0;    // streak length after which the incremental path is retried

  // The resting set (see "Many moving" in sap.cpp): boxes laid out once in
  // pruner_'s prepared grid. rest_state_ by slot: kResting while the slot's box
  // is there with its current bounds, kActive once it moved or was added
  // since (listed in active_), kGone for free slots.
  std::vector<std::uint8_t> rest_state_;
  std::vector<Slot> active_;
  std::vector<Slot> resting_slot_;               // prepared box index -> slot
  std::size_t dead_resting_ = 0;                 // prepared boxes whose slot is no longer kResting
  std::vector<Box3> query_boxes_, other_boxes_;  // scratch: this frame's changed boxes, the other active ones
  std::vector<Slot> query_slots_, other_slots_;

  PairManager* pairs_ = nullptr;        // the frame's pair manager (also read by validate())
  std::vector<Entry> pending_, spare_;  // scratch: entries to merge, radix sort buffer
  std::vector<Entry> rebuilt_;          // scratch: the axis array being rebuilt, swapped in
  detail::HashIndex removed_ids_;       // scratch: the ids whose pairs are dropped this frame
  std::vector<IndexPair> found_;        // scratch: pairs from box pruning, as dense indices
  std::vector<Pair> frame_pairs_;       // scratch: a recomputed frame's pairs, for PairManager::assign
  struct ScanPlan {
    int axis;
    std::uint32_t from;
  };
  std::vector<ScanPlan> scan_plan_;  // scratch: per new object, where scan_added() scans
  OptionTasks tasks_;
  BoxPruner pruner_;
  SapCounters counters_;
};

}  // namespace sapling::builtin
