// The persistent sweep-and-prune, "sap" (sap.cpp has the design notes).
// Internal: the registry creates it through detail::make_sap; tests include
// this header to drive it directly and to read its counters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "algorithms/builtin.hpp"
#include "algorithms/sap/resting_set.hpp"
#include "algorithms/sap/sap_endpoints.hpp"
#include "algorithms/sap/sap_policy.hpp"
#include "detail/id_set.hpp"
#include "sapling/algorithm.hpp"
#include "sapling/box_pruning.hpp"
#include "sapling/task_system.hpp"

namespace sapling::detail {

/// What the sweep-and-prune did since it was created: which path each frame
/// took, and how much work the incremental path did.
struct SapCounters {
  std::uint64_t incremental_frames = 0;  ///< frames finished by swaps, merges and compaction
  std::uint64_t batch_frames = 0;        ///< frames finished by the single-pass batch update (3.2.1)
  std::uint64_t recomputed_frames = 0;   ///< frames finished by a full recomputation
  std::uint64_t resting_frames = 0;      ///< frames finished by pruning the changed boxes against the resting set
  std::uint64_t one_search_frames = 0;  ///< of those, frames done by one search of the changed boxes (update_changed())
  std::uint64_t searched_drops = 0;   ///< of those, frames whose changed boxes' pairs were found by search, not a scan
  std::uint64_t preparations = 0;     ///< resting sets laid out (sorted into box pruning's grid)
  std::uint64_t merged_layouts = 0;   ///< of those, laid out by merging into the last (BoxPruner::update_prepared())
  std::uint64_t forgotten_grids = 0;  ///< resting grids none of whose boxes rested, left to a recomputation's room
  std::uint64_t settled_boxes = 0;    ///< active boxes at rest again that joined the resting set in place
  std::uint64_t aborted_walks = 0;    ///< incremental attempts that switched to another path midway
  std::uint64_t restores = 0;         ///< endpoint arrays rebuilt by radix sort after recomputed frames, at once
  std::uint64_t staged_restores = 0;  ///< endpoint arrays rebuilt a step a frame, then put right
  std::uint64_t staged_steps = 0;     ///< steps of those staged rebuilds (gathering or a radix pass of one axis)
  std::uint64_t swaps = 0;            ///< endpoint swaps done by moving objects
  std::uint64_t merged_boxes = 0;     ///< boxes batch-inserted into the endpoint arrays
  std::uint64_t compacted_boxes = 0;  ///< boxes batch-removed from the endpoint arrays
  std::uint64_t scanned_batches = 0;  ///< insertion batches paired with the old boxes by scanning the arrays
  std::uint64_t pruned_batches = 0;   ///< insertion batches paired with the old boxes by bipartite box pruning
};

/// The persistent sweep-and-prune: the endpoint arrays (SapEndpoints) and
/// the resting set (RestingSet) kept side by side, each frame finished by
/// the path choose_sap_path() picks (sap_policy.hpp).
class SweepAndPrune final : public Algorithm, public PrunerHolder {
 public:
  explicit SweepAndPrune(const Options& options);
  ~SweepAndPrune() override;

  /// Its box pruner, laid out with the resting set: given to box-pruning
  /// when auto switches to it (its prepared set is then forgotten, and sap
  /// is destroyed).
  BoxPruner& pruner() noexcept override { return pruner_; }

  Reported update(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) override;
  std::size_t memory_bytes() const override;
  bool validate() const override;
  /// The x axis' sorted endpoints (while the arrays are current), the
  /// running total of swaps and, as the text "paths", the frames each path
  /// took and the arrays' rebuilds (paths_text()).
  void debug_draw(DebugDraw& draw, std::span<const Id> ids) const override;
  /// "W walked, B by the batch update, R on the resting set, C recomputed;
  /// arrays rebuilt A at once, S a step a frame (T steps); X walks abandoned".
  std::string paths_text() const;

  const SapCounters& counters() const noexcept { return counters_; }

  /// For measurements of the plain SAP of part I: with `on`, every frame
  /// walks its moves and merges its additions, whatever it costs.
  void set_walk_only(bool on) noexcept { walk_only_ = on; }
  /// For measurements and tests of the single-pass batch update (3.2.1):
  /// with `on`, every frame takes it (the setting path=batch).
  void set_batch_only(bool on) noexcept { batch_only_ = on; }
  /// For tests of the resting set's searches: with `on`, every frame takes
  /// the resting path, and drops and finds its pairs by searching the set
  /// wherever the grid takes the boxes (RestingSet::update_changed() and
  /// drop_pairs()), whatever the scan would cost (the setting path=search).
  void set_search_only(bool on) noexcept { search_only_ = on; }
  /// Live boxes from which stale arrays are rebuilt a step a frame before a
  /// probe (kStageMinBoxes); for tests.
  void set_stage_min_boxes(std::size_t n) noexcept { stage_min_boxes_ = n; }
  /// The most a staged step may cost in frames of the path it rides on
  /// (kStageStepFrames); for tests of the staging itself in small worlds.
  void set_stage_step_frames(double frames) noexcept { stage_step_frames_ = frames; }

 private:
  SapFrameCounts frame_counts(const FrameOps& ops) const;
  void lay_out_all();
  bool stages_rebuild() const noexcept;
  void stage_for_probe();
  void bring_arrays_up_to_date();
  bool probe_could_pay(const FrameOps& ops, double budget_ns) const;
  void estimate_mobility(const FrameOps& ops);
  void walk_frame(const FrameOps& ops, const SapChoice& choice);
  void finish_walk(const FrameOps& ops, bool tagged);
  void batch_frame(const FrameOps& ops);
  void drop_removed(std::span<const Slot> removed, bool tag);
  void remove_pairs_of(std::span<const Slot> removed);
  void add_objects(std::span<const Slot> added, std::span<const Box3> boxes);
  void pair_added(std::size_t first_new);
  void add_found_pairs(std::size_t offset_i, std::size_t offset_j);
  void recompute(const FrameOps& ops, std::size_t moves_applied);
  void prune_changed(const FrameOps& ops, std::size_t moves_applied, bool prepare);
  void drop_changed_pairs(const FrameOps& ops, bool may_search);

  std::span<const Id> id_;  // by slot: update()'s ids, valid during update() only
  LiveBoxes live_;          // the live boxes
  SapEndpoints endpoints_;
  SapHistory history_;                            // what the policy measured in earlier frames
  bool walk_only_ = false;                        // set_walk_only()
  bool batch_only_ = false;                       // set_batch_only()
  bool search_only_ = false;                      // set_search_only()
  std::size_t stage_min_boxes_ = kStageMinBoxes;  // set_stage_min_boxes()
  double stage_step_frames_ = kStageStepFrames;   // set_stage_step_frames()

  PairFilter filter_;                       // the frame's (FrameOps::filter)
  PairManager* pairs_ = nullptr;            // the frame's pair manager (also read by validate())
  Reported reported_ = Reported::kChanges;  // what this frame reported (recompute(): every pair)
  detail::IdSet removed_ids_;               // scratch: the ids whose pairs are dropped this frame
  std::vector<IndexPair> found_;            // scratch: pairs from box pruning, as dense indices
  std::vector<float> estimate_ends_;        // scratch of estimate_mobility()
  bool laid_out_ = false;                   // this frame's recomputation laid out the resting set
  std::vector<Pair> frame_pairs_;           // scratch: a recomputed frame's pairs, for PairManager::assign
  OptionTasks tasks_;
  BoxPruner pruner_;    // box pruning, and the resting set's prepared grid
  RestingSet resting_;  // laid out in pruner_
  SapCounters counters_;
};

}  // namespace sapling::detail
