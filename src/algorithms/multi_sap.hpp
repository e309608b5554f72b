// multi-sap: a hashed grid of small sorted cells with one shared pair
// manager (multi_sap.cpp teaches the method). Declared here for its tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "algorithms/cell_grid.hpp"
#include "detail/slot_map.hpp"
#include "sapling/algorithm.hpp"

namespace sapling::detail {

/// What multi-sap is built with beyond Options.
struct MultiSapConfig {
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
};

/// The grid of SAP cells of Terdiman 2007, part II, in the shared-pair-
/// manager mode (II.3b).
class MultiSap final : public Algorithm {
 public:
  explicit MultiSap(const Options& options, MultiSapConfig config = {});

  void update(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) override;
  std::size_t memory_bytes() const override;
  bool validate() const override;
  /// Draws every live cell (DebugCategory::kCell) and counts them ("cells").
  void debug_draw(DebugDraw& draw) const override;

  /// The cell edge in use (0 before the first box).
  double cell_size() const noexcept { return sized_ ? grid_.cell_size() : 0.0; }
  /// Live cells of the grid.
  std::size_t cells() const noexcept { return grid_.live_cells(); }
  /// Live boxes kept apart as outsized.
  std::size_t outsized() const noexcept { return outsized_.size(); }

 private:
  // One object changed this frame: its box before and after, where it was
  // and where it goes (kOutsized in range.lo[0]: the outsized set).
  struct Change {
    Slot slot;
    bool had_old, has_new;
    bool old_outsized, new_outsized;
    Box3 old_box, new_box;
    CellRange old_range, new_range;
  };
  // One cell touched by one change: its entry leaves (kLeave), arrives
  // (kArrive) or both (replaced in place).
  struct Event {
    std::uint32_t cell;
    std::uint32_t change;
    std::uint32_t what;
  };
  static constexpr std::uint32_t kLeave = 1, kArrive = 2;
  // An event with its change's boxes, gathered in cell order: a cell reads
  // its changes sequentially, not from all over changes_.
  struct CellChange {
    Slot slot;
    std::uint32_t what;
    bool had_old, has_new;
    Box3 old_box, new_box;
  };

  const Change* changed(Slot s) const noexcept {
    return s < marks_.size() && (marks_[s] >> 32) == frame_ ? &changes_[std::uint32_t(marks_[s])] : nullptr;
  }
  bool is_outsized(const CellRange& r) const noexcept { return CellGrid::cells_in(r) > config_.max_cells; }

  void update_slice(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs);
  void collect_changes(const FrameOps& ops);
  template <bool kEnd>
  void outsized_pairs(std::span<const Id> ids, PairManager& pairs) const;
  void apply_changes();
  void collect_events();
  void update_cell(std::size_t first, std::size_t last, std::span<const Id> ids, PairManager& pairs);
  void release_scratch();
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
  bool sized_ = false;  // the grid has its cell size
  CellGrid grid_;
  // The live objects, dense: box and cell range (outsized ones included).
  detail::SlotMap<Box3, CellRange> objects_;
  detail::SlotMap<> outsized_;  // the live outsized objects
  // By slot: (frame << 32) | index in changes_, for the slots changed in
  // frame `frame`.
  std::vector<std::uint64_t> marks_;
  std::uint64_t frame_ = 0;
  std::vector<Change> changes_;  // scratch: this frame's changes
  std::vector<Event> events_, event_scratch_;
  std::vector<CellChange> cell_changes_;  // parallel to events_ once sorted
  std::vector<std::uint32_t> radix_counts_;
  // Scratch: where a cell's changed entries are, found by their queries.
  struct OwnEntry {
    std::uint32_t at;     // position in the cell
    std::uint32_t event;  // index in events_
  };
  std::vector<OwnEntry> own_;
};

}  // namespace sapling::detail
