// multi-sap: a hashed grid of small sorted cells, consolidated by home cells
// or by witness counts (multi_sap.cpp teaches the method). Declared here for
// its tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "algorithms/builtin.hpp"
#include "algorithms/multi_sap/cell_grid.hpp"
#include "detail/frame_marks.hpp"
#include "detail/scratch_pool.hpp"
#include "detail/slot_map.hpp"
#include "detail/task_plan.hpp"
#include "sapling/algorithm.hpp"
#include "sapling/detail/hash_index.hpp"

namespace sapling::detail {

/// How the cells' findings become the frame's pairs (multi_sap.cpp).
enum class Consolidation : std::uint8_t {
  /// Each pair is handled by one cell only, its home cell (the default).
  kHomeCell,
  /// Every cell handles every pair it holds; a count per pair of the cells
  /// that see it overlap decides (Tracy et al. 2009, 3.3).
  kWitness,
};

/// What multi-sap is built with beyond Options (Options::settings: mode =
/// home|witness, cell_size, boxes_per_cell, regrid = auto|off, cells =
/// sorted|segmented, chunk).
struct MultiSapConfig {
  Consolidation mode = Consolidation::kHomeCell;
  /// The cell edge; 0 chooses it from the first boxes added (and again
  /// whenever the world has emptied).
  double cell_size = 0;
  /// Boxes per cell aimed at when the size is chosen from the data.
  /// Measured: docs/algorithms/multi-sap.md, "Cell size".
  double boxes_per_cell = 50;
  /// A box touching more cells than this is outsized: kept apart, never
  /// entered in the grid.
  std::uint64_t max_cells = 16;
  /// The most changes applied at once: a larger frame is applied in slices
  /// (multi_sap.cpp, update()).
  std::size_t slice = 65536;
  /// Whether the grid is resized when its cells hold far more or far fewer
  /// boxes than aimed at (a cell size set above is kept regardless).
  bool adapt = true;
  /// Boxes moved to a new grid per frame while the grid is resized; 0 for
  /// max(1024, a 32nd of the boxes) (multi_sap.cpp, "Regrid").
  std::size_t relocations = 0;
  /// 0: each cell one array sorted by min x (the default); else each cell a
  /// segmented list of chunks of this many entries (segmented_cell.hpp,
  /// Tracy et al. 2009, 3.2.2; cells=segmented, chunk=N). Measured:
  /// docs/algorithms/multi-sap.md, "Segmented cells".
  std::uint32_t chunk = 0;
};

/// The grid of SAP cells of Terdiman 2007, part II.
class MultiSap final : public Algorithm {
 public:
  explicit MultiSap(const Options& options, MultiSapConfig config = {});

  Reported update(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) override;
  bool query(const Box3& box, std::vector<Slot>& out) const override;
  /// The outsized boxes one by one, then the cells the ray crosses
  /// (grid_ray.hpp); false where the walk would cross far more cells than
  /// are live, or the origin lies some 2^40 cells out.
  bool ray_cast(const Ray3& ray, RayVisitor visit) const override;
  std::size_t memory_bytes() const override;
  bool validate() const override;
  /// Draws every live cell (DebugCategory::kCell) and counts them ("cells").
  void debug_draw(DebugDraw& draw, std::span<const Id> ids) const override;

  /// The cell edge in use (0 before the first box).
  double cell_size() const noexcept { return sized_ ? grid_.cell_size(grid_gen_) : 0.0; }
  /// Live cells of the grid.
  std::size_t cells() const noexcept { return grid_.live_cells(); }
  /// Live boxes kept apart as outsized.
  std::size_t outsized() const noexcept { return outsized_.size(); }
  /// Pairs with a witness count (Consolidation::kWitness; 0 otherwise).
  std::size_t witnessed_pairs() const noexcept { return witnesses_.size(); }
  /// Whether boxes are being moved to a grid of another cell size.
  bool regridding() const noexcept { return in_old_grid_ > 0; }
  /// Starts moving the boxes to a grid of cells of edge `size` (> 0, finite)
  /// over the next frames, as the data would when the grid is badly sized;
  /// false (nothing done) while a regrid is under way or in witness mode.
  bool regrid(double size);

 private:
  // One object changed this frame: its box before and after, where it was
  // and where it goes (kOutsized in range.lo[0]: the outsized set).
  struct Change {
    Slot slot;
    bool had_old, has_new;
    bool old_outsized, new_outsized;
    Box3 old_box, new_box;
    CellRange old_range, new_range;
    std::uint8_t old_grid, new_grid;  // the generations of the grid the ranges are in
  };
  // One cell touched by one change: its entry leaves (kLeave), arrives
  // (kArrive) or both (replaced in place).
  struct Event {
    std::uint32_t cell;
    std::uint32_t change;
    std::uint32_t what;
  };
  // kProbe: a query only, where the change has no entry (while regridding:
  // its boxes in the cells of the other generation).
  static constexpr std::uint32_t kLeave = 1, kArrive = 2, kProbe = 4;
  // An event with its change's boxes, gathered in cell order: a cell reads
  // its changes sequentially, not from all over changes_.
  struct CellChange {
    Slot slot;
    std::uint32_t what;
    bool had_old, has_new;
    Box3 old_box, new_box;
  };

  // The slice's change of slot s, or null.
  const Change* changed(Slot s) const noexcept {
    const std::uint32_t mark = marks_.find(s);
    if (mark == FrameMarks::kNone) return nullptr;
    const std::size_t at = mark - slice_from_;  // wraps for an earlier slice's
    return at < changes_.size() ? &changes_[at] : nullptr;
  }
  // The box of live slot s before the slice: set by an earlier slice of the
  // frame, or the BroadPhase's.
  const Box3& box_before_slice(Slot s) const noexcept;
  bool is_outsized(const CellRange& r) const noexcept { return CellGrid::cells_in(r) > config_.max_cells; }
  // The generation of the grid live slot s is in (no read unless regridding).
  std::uint8_t grid_of(Slot s) const noexcept {
    return regridding() ? objects_.values<0>()[objects_.index(s)] : grid_gen_;
  }
  // Whether live slot s is in the outsized set (no read while it is empty).
  bool in_outsized(Slot s) const noexcept { return !outsized_.empty() && outsized_.contains(s); }

  // A pair a cell found to start or end, by slots.
  struct PairEvent {
    Slot a, b;
    bool starts;
  };
  // A task's findings, replayed in task order (task_plan.hpp).
  struct PairEvents {
    std::vector<PairEvent> events;
    void clear() noexcept { events.clear(); }
    void starts(Slot a, Slot b) { events.push_back(PairEvent{a, b, true}); }
    void ends(Slot a, Slot b) { events.push_back(PairEvent{a, b, false}); }
  };
  // Where the findings go in the end: the pair manager, directly (home
  // cells) or through the witness counts.
  struct PairSink {
    MultiSap& self;
    std::span<const Id> ids;
    PairManager& pairs;
    void starts(Slot a, Slot b);
    void ends(Slot a, Slot b);
  };
  // Where a cell's changed entry is, found by its query.
  struct OwnEntry {
    std::uint32_t at;     // position in the cell
    std::uint32_t event;  // index in events_
  };
  using OwnEntries = std::vector<OwnEntry>;

  Reported start_over(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs);
  void update_slice(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs, bool last);
  void collect_changes(const FrameOps& ops);
  template <bool kEnd>
  void outsized_pairs(std::span<const Id> ids, PairManager& pairs) const;
  void apply_changes();
  void add_relocations();
  void collect_events();
  void consider_regrid();
  void update_cells(std::span<const Id> ids, PairManager& pairs);
  template <bool kSegmented, class Sink>
  void update_cell(std::size_t first, std::size_t last, Sink& sink, OwnEntries& own);
  static std::uint64_t pair_key(Slot a, Slot b) noexcept {
    return a < b ? (std::uint64_t{a} << 32) | b : (std::uint64_t{b} << 32) | a;
  }
  void release_scratch(std::size_t added);
  std::size_t scratch_bytes() const;
  bool witnesses_valid() const;
  // Whether a and b overlapped at the previous frame's end (a pair then),
  // and whether they overlap now; `b_box` is b's entry or live box, current
  // when b did not change.
  template <class A, class B>
  static bool overlapped(const A& a, const B* b, const Box3& b_box) noexcept {
    if (!a.had_old) return false;
    if (b == nullptr) return overlaps(a.old_box, b_box);
    return b->had_old && overlaps(a.old_box, b->old_box);
  }
  template <class A, class B>
  static bool overlap_now(const A& a, const B* b, const Box3& b_box) noexcept {
    if (!a.has_new) return false;
    if (b == nullptr) return overlaps(a.new_box, b_box);
    return b->has_new && overlaps(a.new_box, b->new_box);
  }

  MultiSapConfig config_;
  int dims_;
  OptionTasks tasks_;
  bool sized_ = false;  // the grid has its cell size
  CellGrid grid_;
  // The live objects, dense, with the generation of the grid each is in
  // (outsized ones included). Their boxes are the BroadPhase's
  // (FrameOps::boxes, as of the previous frame), read during update() only;
  // an object's cell range is its box's in its generation, computed when
  // needed rather than kept (24 bytes per object and a cache miss per change
  // saved). While no regrid is under way every object is in grid_gen_, and
  // the record is not read.
  detail::SlotMap<std::uint8_t> objects_;
  std::span<const Box3> boxes_;
  // Regrid: arrivals go to generation grid_gen_; objects still in the other
  // one are moved, config_.relocations per frame, from relocate_at_ on.
  std::uint8_t grid_gen_ = 0;
  std::size_t in_old_grid_ = 0;
  std::size_t relocate_at_ = 0;
  std::uint64_t frames_since_regrid_ = 0;
  bool two_grids_ = false;                               // this slice began with boxes in both grids
  std::size_t touched_cells_ = 0, touched_entries_ = 0;  // the last update's, for consider_regrid()
  std::vector<Box3> sample_;                             // scratch: consider_regrid()'s boxes
  detail::SlotMap<Box3> outsized_;                       // the live outsized objects, with their boxes
  // By slot: (frame << 32) | the index of its operation in the frame
  // (removals, moves, additions, then the relocations), for the slots changed
  // in update() number `frame`; the slice's changes_ start at slice_from_.
  FrameMarks marks_;
  std::size_t slice_from_ = 0;
  FrameOps frame_ops_;           // during update(): the whole frame's
  std::vector<Change> changes_;  // scratch: this frame's changes
  std::vector<Event> events_, event_scratch_;
  std::vector<CellChange> cell_changes_;  // parallel to events_ once sorted
  std::vector<std::uint32_t> radix_counts_;
  std::vector<std::uint32_t> cell_starts_;  // scratch: where each touched cell's events begin, and the end
  TaskPlan plan_;                           // the touched cells cut into tasks
  std::vector<PairEvents> task_events_;     // a task's findings, with threads
  ScratchPool<OwnEntries> own_;             // a task's where its cell's changed entries are
  // Consolidation::kWitness: pair_key(a, b) -> the number of cells in which
  // a and b overlap, for every overlapping pair of grid boxes.
  HashIndex witnesses_;
};

}  // namespace sapling::detail
