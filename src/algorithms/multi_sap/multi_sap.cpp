// multi-sap: the grid of sweep-and-prune cells of Terdiman 2007, part II
// (II.1-II.3), with Tracy, Buss and Woods 2009's cell size from the data
// (section 3.1; they found about 300 boxes per cell best for their SAP
// cells, about 50 is best for ours). One SAP over the whole world pays for every box
// a mover passes on the sweep axis, about n^(2/3) per mover in 3D, and
// nearly n in a flat world (II.1); small cells bound that by the cell.
//
// Space is cut into cubic cells by a hashed grid with no world bounds
// (cell_grid.hpp): a box is entered in every cell its bounds touch, its
// record keeps its cell range, and a move leaves the cells it left, enters
// the ones it entered and updates it in the kept ones (II.3c). A box that
// would touch more than `max_cells` cells (ground planes, infinite boxes) is
// kept apart in the outsized set and paired by brute force: the changed
// boxes against the outsized ones, a changed outsized box against all.
//
// Each cell is an array of its entries sorted by min x, not an endpoint SAP
// of part I: a changed entry takes a box covering its old and new boxes and
// queries the cell with it once (binary search, short scan: O(log m + k) for
// m entries) for the pairs that may end or start; then it takes its new
// box, slid into place. A swap-based SAP would walk about m^(2/3) endpoints
// per mover and hold three times the memory; 300 entries are 8 KB, in L1
// while the cell is worked on. Or, setting cells=segmented, each cell is a
// segmented list of sorted chunks (segmented_cell.hpp; Tracy et al. 3.2.2),
// worked on the same way.
//
// Consolidation, one shared pair manager (II.3b): a pair is handled only by
// its home cell, the cell of the least corner of the two boxes'
// intersection (both boxes are in it: cell_grid.hpp), so no duplicate is
// reported; a pair that was, and whose boxes are apart now, is removed; one
// that is, and was not, is added. Whether it was is the overlap of the
// boxes before the frame: the manager held exactly those pairs.
// Or, setting mode=witness, independent cells (Tracy et al. 3.3, Terdiman
// II.3d): each cell reports every pair it holds that starts or ends there,
// and a count per pair of the cells that see it overlap creates the pair at
// its first witness and deletes it with its last. It needs no knowledge of
// other cells, at the price of a count per pair (docs/algorithms/multi-
// sap.md measures both; the home cell is the default).
//
// Threads: the touched cells are cut into tasks of consecutive cells; each
// task's findings are kept in order and replayed into the pair manager (or
// the counts) in task order, so the output is the same on any thread count.
//
// Invariants (validate()): each live box is in the outsized set iff its
// range has more than max_cells cells, else in exactly the cells of its
// range, with its current box; cells are sorted (cell_grid.hpp); the pair
// manager holds exactly the overlapping pairs after each frame.
//
// Cost per frame: O(changes x cells per box x (log m + k)) plus O(changes x
// outsized) plus O(n) per changed outsized box; only touched cells are
// read, so nothing follows the world's size. A frame that removes most of
// the world starts over instead (start_over()): O(pairs + what stays). ~115-145 bytes per box at 1M,
// the BroadPhase's own arrays included.
//
// Choose it for large persistent worlds where a minority moves each frame.
// Method, tuning and measurements: docs/algorithms/multi-sap.md.
#include "algorithms/multi_sap/multi_sap.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <utility>

#include "algorithms/builtin.hpp"
#include "algorithms/multi_sap/grid_ray.hpp"
#include "detail/cell_size_policy.hpp"
#include "detail/radix_sort.hpp"
#include "detail/reserve.hpp"
#include "detail/settings.hpp"

namespace sapling::detail {
namespace {

// Beyond this many arrivals (departures) in one cell in a frame, they are
// appended (marked) and the cell sorted (compacted) once, rather than each
// inserted (erased) with a shift of the entries behind it.
constexpr std::size_t kBulk = 32;
// A segmented cell's chunk when cells=segmented names none. Measured:
// docs/algorithms/multi-sap.md, "Segmented cells".
constexpr std::uint32_t kDefaultChunk = 64;

Box3 box_of(const CellGrid::Entry& e) noexcept { return Box3{e.min, e.max}; }

}  // namespace

MultiSap::MultiSap(const Options& options, MultiSapConfig config)
    : config_(config), dims_(options.dims), tasks_(options) {
  grid_.set_flat(options.dims == 2);
  grid_.set_chunk(config_.chunk);
  if (config_.cell_size > 0) {
    grid_.set_cell_size(config_.cell_size, grid_gen_);
    sized_ = true;
  }
}

Reported MultiSap::update(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) {
  constexpr std::size_t kFewest = 64;  // smaller worlds leave one by one
  if (objects_.size() >= kFewest && 2 * ops.removed.size() > objects_.size()) return start_over(ops, ids, pairs);
  marks_.next_frame();
  frame_ops_ = ops;
  boxes_ = ops.boxes;
  consider_regrid();  // on the last frame's figures, every live box known
  if (objects_.empty() && config_.cell_size <= 0 && !ops.added.empty()) {
    grid_.set_cell_size(cell_size_for(ops.added_boxes, ops.added.size(), dims_, config_.boxes_per_cell), grid_gen_);
    sized_ = true;
  }
  // A large frame (a level loaded at once) is applied as slices of at most
  // config_.slice changes, removals then moves then additions, each a frame of its
  // own to the grid: the pair manager sums their calls, and the scratch
  // stays the size of a slice instead of growing with the batch.
  const std::size_t removed = ops.removed.size(), moved = ops.moved.size(), total = removed + moved + ops.added.size();
  const std::size_t step = std::max<std::size_t>(1, config_.slice);
  for (std::size_t from = 0; from < total || from == 0; from += step) {
    const std::size_t to = std::min(total, from + step);
    const auto part = [&](std::size_t lo, std::size_t n) {  // [from, to) within [lo, lo + n), as an offset and count
      const std::size_t a = std::clamp(from, lo, lo + n), b = std::clamp(to, lo, lo + n);
      return std::pair{a - lo, b - a};
    };
    const auto [r0, rn] = part(0, removed);
    const auto [m0, mn] = part(removed, moved);
    const auto [a0, an] = part(removed + moved, ops.added.size());
    const FrameOps slice{ops.removed.subspan(r0, rn), ops.moved.subspan(m0, mn), ops.moved_boxes.subspan(m0, mn),
                         ops.added.subspan(a0, an), ops.added_boxes.subspan(a0, an)};
    slice_from_ = from;
    update_slice(slice, ids, pairs, to == total);
  }
  grid_.trim();
  boxes_ = {};
  frame_ops_ = {};
  release_scratch(ops.added.size());
  return Reported::kChanges;
}

// A frame that removes most of the world (a level streamed out): rather
// than each removal querying its cells for the pairs it ends, every pair
// goes at once (PairManager::remove_all(), O(pairs)), the grid and the
// records are dropped whole, and what stays is added anew with the frame's
// additions, its pairs found again: Reported::kEveryPair (the BroadPhase
// then pairs the dynamic objects with the static ones anew too).
Reported MultiSap::start_over(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) {
  constexpr std::uint32_t kRemoved = FrameMarks::kNone - 1;
  marks_.next_frame();
  for (const Slot s : ops.removed) marks_.mark(s, kRemoved);
  for (std::size_t i = 0; i < ops.moved.size(); ++i) marks_.mark(ops.moved[i], static_cast<std::uint32_t>(i));
  std::vector<Slot> staying;
  std::vector<Box3> staying_boxes;
  staying.reserve(objects_.size() - ops.removed.size() + ops.added.size());
  staying_boxes.reserve(staying.capacity());
  for (const Slot s : objects_.slots()) {
    const std::uint32_t at = marks_.find(s);
    if (at == kRemoved) continue;
    staying.push_back(s);
    staying_boxes.push_back(at == FrameMarks::kNone ? ops.boxes[s] : ops.moved_boxes[at]);
  }
  staying.insert(staying.end(), ops.added.begin(), ops.added.end());
  staying_boxes.insert(staying_boxes.end(), ops.added_boxes.begin(), ops.added_boxes.end());
  pairs.remove_all();
  grid_ = CellGrid{};
  grid_.set_flat(dims_ == 2);
  grid_.set_chunk(config_.chunk);
  grid_gen_ = 0;
  sized_ = config_.cell_size > 0;
  if (sized_) grid_.set_cell_size(config_.cell_size, grid_gen_);
  in_old_grid_ = relocate_at_ = 0;
  frames_since_regrid_ = 0;
  touched_cells_ = touched_entries_ = 0;
  objects_ = {};
  outsized_ = {};
  witnesses_ = HashIndex{};
  update(FrameOps{{}, {}, {}, staying, staying_boxes, ops.boxes, ops.filter, ops.store}, ids, pairs);
  return Reported::kEveryPair;
}

const Box3& MultiSap::box_before_slice(Slot s) const noexcept {
  if (const std::uint32_t at = marks_.find(s); at != FrameMarks::kNone) {
    const std::size_t removed = frame_ops_.removed.size(), moved = frame_ops_.moved.size();
    if (at < slice_from_ && at >= removed) {  // moved or added by an earlier slice
      return at < removed + moved ? frame_ops_.moved_boxes[at - removed] : frame_ops_.added_boxes[at - removed - moved];
    }
  }
  return boxes_[s];
}

void MultiSap::update_slice(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs, bool last) {
  collect_changes(ops);
  if (last && regridding()) add_relocations();
  two_grids_ = regridding();         // for the whole slice: apply_changes() may end the regrid
  outsized_pairs<true>(ids, pairs);  // before the objects change: it reads their old boxes
  collect_events();
  apply_changes();
  update_cells(ids, pairs);
  outsized_pairs<false>(ids, pairs);
}

// The touched cells, in tasks of consecutive cells cut by their events; a
// task's findings are replayed in task order, so the pair manager sees the
// same calls in the same order on any thread count.
void MultiSap::update_cells(std::span<const Id> ids, PairManager& pairs) {
  cell_starts_.clear();
  for (std::uint32_t i = 0; i < events_.size(); ++i) {
    if (i == 0 || events_[i].cell != events_[i - 1].cell) cell_starts_.push_back(i);
  }
  const auto cells = static_cast<std::uint32_t>(cell_starts_.size());
  cell_starts_.push_back(static_cast<std::uint32_t>(events_.size()));
  constexpr std::uint64_t kEventsPerTask = 512;
  const unsigned threads = tasks_.get() != nullptr ? tasks_.get()->concurrency() : 1;
  plan_.split(
      cells, events_.size(), [&](std::uint32_t c) { return cell_starts_[c]; }, kEventsPerTask, threads * 8);
  PairSink sink{*this, ids, pairs};
  const auto task = [&](std::size_t t, auto& out) {
    OwnEntries& own = own_.take();
    // Cell by cell; the next cell's entries and a later cell's header are
    // fetched ahead, a cell being a cold array at a million boxes.
    constexpr std::uint32_t kHeaderAhead = 16;
    const std::uint32_t end = plan_.end(t);
    for (std::uint32_t c = plan_.first(t); c < end; ++c) {
      if (c + 1 < end) grid_.prefetch(events_[cell_starts_[c + 1]].cell);
      if (c + kHeaderAhead < end) grid_.prefetch_header(events_[cell_starts_[c + kHeaderAhead]].cell);
      if (grid_.segmented()) {
        update_cell<true>(cell_starts_[c], cell_starts_[c + 1], out, own);
      } else {
        update_cell<false>(cell_starts_[c], cell_starts_[c + 1], out, own);
      }
    }
    own_.give(own);
  };
  run_ordered(tasks_.get(), plan_.size(), task_events_, sink, task,
              [](std::span<const PairEvents> parts, PairSink& to) {
                for (const PairEvents& part : parts) {
                  for (const PairEvent& e : part.events) e.starts ? to.starts(e.a, e.b) : to.ends(e.a, e.b);
                }
              });
  // Emptied cells are freed last: the index of cells is not the tasks'.
  for (std::uint32_t c = 0; c < cells; ++c) {
    const std::uint32_t cell = events_[cell_starts_[c]].cell;
    touched_entries_ += grid_.entries(cell);
    grid_.release_if_empty(cell);
  }
  touched_cells_ += cells;
}

void MultiSap::PairSink::starts(Slot a, Slot b) {
  if (self.config_.mode == Consolidation::kWitness) {
    const auto [count, first] = self.witnesses_.insert(pair_key(a, b), 1);
    if (!first) {
      ++*count;
      return;
    }
  }
  if (self.frame_ops_.filter.accepts(a, b)) pairs.add(ids[a], ids[b]);
}

void MultiSap::PairSink::ends(Slot a, Slot b) {
  if (self.config_.mode == Consolidation::kWitness) {
    const std::uint64_t key = pair_key(a, b);
    const std::uint32_t count = self.witnesses_.find(key);
    if (count > 1) {
      (void)self.witnesses_.replace(key, count - 1);
      return;
    }
    self.witnesses_.erase(key);
  }
  pairs.remove(ids[a], ids[b]);
}

// The frame's changes, and each changed slot marked with its change.
void MultiSap::collect_changes(const FrameOps& ops) {
  changes_.clear();
  detail::reserve_geometric(changes_, ops.removed.size() + ops.moved.size() + ops.added.size());
  const auto mark = [&](Slot s) { marks_.mark(s, static_cast<std::uint32_t>(slice_from_ + changes_.size())); };
  for (const Slot s : ops.removed) {
    mark(s);
    const std::uint8_t gen = grid_of(s);
    changes_.push_back(
        Change{s, true, false, in_outsized(s), false, boxes_[s], {}, grid_.range(boxes_[s], gen), {}, gen, grid_gen_});
  }
  for (std::size_t i = 0; i < ops.moved.size(); ++i) {
    const Slot s = ops.moved[i];
    const CellRange r = grid_.range(ops.moved_boxes[i], grid_gen_);
    mark(s);
    const std::uint8_t gen = grid_of(s);
    changes_.push_back(Change{s, true, true, in_outsized(s), is_outsized(r), boxes_[s], ops.moved_boxes[i],
                              grid_.range(boxes_[s], gen), r, gen, grid_gen_});
  }
  for (std::size_t i = 0; i < ops.added.size(); ++i) {
    const Slot s = ops.added[i];
    const CellRange r = grid_.range(ops.added_boxes[i], grid_gen_);
    mark(s);
    changes_.push_back(
        Change{s, false, true, false, is_outsized(r), {}, ops.added_boxes[i], {}, r, grid_gen_, grid_gen_});
  }
}

// Regrid: up to config_.relocations objects still in the old grid, not
// changed this frame, move to the new one with their box unchanged (a move
// to the same box: no pair starts or ends).
void MultiSap::add_relocations() {
  const std::size_t most =
      config_.relocations > 0 ? config_.relocations : std::max<std::size_t>(1024, objects_.size() / 32);
  const std::span<const Slot> slots = objects_.slots();
  const std::size_t n = slots.size();
  std::size_t taken = 0;
  for (std::size_t seen = 0; seen < n && taken < most; ++seen, ++relocate_at_) {
    if (relocate_at_ >= n) relocate_at_ = 0;
    const Slot s = slots[relocate_at_];
    const std::uint8_t gen = objects_.values<0>()[relocate_at_];
    if (gen == grid_gen_ || changed(s) != nullptr) continue;
    const Box3& box = box_before_slice(s);
    const CellRange r = grid_.range(box, grid_gen_);
    marks_.mark(s, static_cast<std::uint32_t>(slice_from_ + changes_.size()));
    changes_.push_back(
        Change{s, true, true, in_outsized(s), is_outsized(r), box, box, grid_.range(box, gen), r, gen, grid_gen_});
    ++taken;
  }
}

// Regrid when the cells that frames touch hold far more or far fewer boxes
// than aimed at (a crowd gathered, a world spread out, boxes grown): the
// size the data asks for now, if it is at least twice or half the current
// one, becomes the new grid's, which the boxes then reach a few per frame.
void MultiSap::consider_regrid() {
  const std::size_t cells = std::exchange(touched_cells_, 0), entries = std::exchange(touched_entries_, 0);
  ++frames_since_regrid_;
  constexpr std::uint64_t kSettleFrames = 8;  // frames between regrids
  constexpr std::size_t kFewest = 1024;       // smaller worlds keep their grid
  constexpr double kOff = 4;                  // how far the occupancy may stray from the aim
  if (regridding() || !config_.adapt || config_.cell_size > 0 || config_.mode == Consolidation::kWitness ||
      frames_since_regrid_ < kSettleFrames || objects_.size() - outsized_.size() < kFewest || cells < 64) {
    return;
  }
  const double occupancy = double(entries) / double(cells);
  if (occupancy <= config_.boxes_per_cell * kOff && occupancy * kOff >= config_.boxes_per_cell) return;
  // A strided sample of the live boxes (the BroadPhase's, all current now).
  const std::span<const Slot> slots = objects_.slots();
  const std::size_t stride = std::max<std::size_t>(1, slots.size() / 4096);
  sample_.clear();
  for (std::size_t d = 0; d < slots.size(); d += stride) sample_.push_back(boxes_[slots[d]]);
  const double size = cell_size_for(sample_, objects_.size(), dims_, config_.boxes_per_cell);
  const double ratio = size / grid_.cell_size(grid_gen_);
  if (ratio < 2 && ratio > 0.5) return;
  regrid(size);
}

bool MultiSap::regrid(double size) {
  if (regridding() || config_.mode == Consolidation::kWitness || objects_.empty()) return false;
  // A factor 2 at most: a box then meets a bounded number of cells of the
  // other grid while both are live (its probes); further steps follow.
  const double now = grid_.cell_size(grid_gen_);
  size = std::clamp(size, now / 2, now * 2);
  grid_gen_ ^= 1;
  grid_.set_cell_size(size, grid_gen_);
  in_old_grid_ = objects_.size();
  frames_since_regrid_ = 0;
  return true;
}

// The pairs of the outsized set that may end (kEnd: at the old boxes,
// before objects_ changes) or start (at the new boxes): each changed
// outsized box against every box, each other changed box against the
// outsized ones.
template <bool kEnd>
void MultiSap::outsized_pairs(std::span<const Id> ids, PairManager& pairs) const {
  const std::span<const Slot> slots = objects_.slots();
  // b's box at the old boxes (before the slice) or the new ones.
  const auto box_of_slot = [&](Slot b) -> const Box3& {
    if constexpr (!kEnd) {
      if (const Change* c = changed(b)) return c->new_box;
    }
    return box_before_slice(b);
  };
  const bool witness = config_.mode == Consolidation::kWitness;
  for (const Change& a : changes_) {
    if (!(kEnd ? a.had_old : a.has_new)) continue;
    const Box3& a_box = kEnd ? a.old_box : a.new_box;
    const auto check = [&](Slot b, const Box3& b_box) {
      if (b == a.slot || !overlaps(a_box, b_box)) return;
      const Change* b_change = changed(b);
      if constexpr (kEnd) {
        if (!overlap_now(a, b_change, b_box)) pairs.remove(ids[a.slot], ids[b]);
      } else if (!frame_ops_.filter.accepts(a.slot, b)) {
        return;
      } else if (!overlapped(a, b_change, b_box)) {
        pairs.add(ids[a.slot], ids[b]);
      } else if (witness && a.had_old && !a.old_outsized &&
                 !(b_change ? b_change->old_outsized : outsized_.contains(b))) {
        // Both were in the grid, whose last witness deleted the pair when
        // one of them left it for the outsized set: the pair goes on here.
        pairs.add(ids[a.slot], ids[b]);
      }
    };
    if (kEnd ? a.old_outsized : a.new_outsized) {
      for (const Slot b : slots) check(b, box_of_slot(b));
    } else {
      for (const Slot o : outsized_.slots()) check(o, box_of_slot(o));
    }
  }
}

// One event per cell and change, sorted by cell (stably: by change within
// a cell). A cell entered for the first time is made here.
void MultiSap::collect_events() {
  events_.clear();
  const auto each_cell = [](const CellRange& r, auto&& f) {
    for (std::int32_t z = r.lo[2]; z <= r.hi[2]; ++z) {
      for (std::int32_t y = r.lo[1]; y <= r.hi[1]; ++y) {
        for (std::int32_t x = r.lo[0]; x <= r.hi[0]; ++x) f(CellGrid::Coord{x, y, z});
      }
    }
  };
  constexpr std::uint32_t kAhead = 8;  // changes whose first cells are looked up ahead
  for (std::uint32_t ci = 0; ci < changes_.size(); ++ci) {
    if (ci + kAhead < changes_.size()) {
      const Change& next = changes_[ci + kAhead];
      if (next.had_old) grid_.prefetch_lookup(next.old_range.lo, next.old_grid);
      if (next.has_new) grid_.prefetch_lookup(next.new_range.lo, next.new_grid);
    }
    const Change& c = changes_[ci];
    const bool leaves = c.had_old && !c.old_outsized, arrives = c.has_new && !c.new_outsized;
    const bool same_grid = c.old_grid == c.new_grid;
    if (leaves) {
      each_cell(c.old_range, [&](const CellGrid::Coord& at) {
        const bool stays = arrives && same_grid && c.new_range.contains(at);
        events_.push_back(Event{grid_.find(at, c.old_grid), ci, stays ? kLeave | kArrive : kLeave});
      });
    }
    if (arrives) {
      each_cell(c.new_range, [&](const CellGrid::Coord& at) {
        if (leaves && same_grid && c.old_range.contains(at)) return;  // one event with its leaving
        events_.push_back(Event{grid_.find_or_add(at, c.new_grid), ci, kArrive});
      });
    }
  }
  // While boxes are in two grids, each box of a change is also looked for in
  // the live cells of both where the change has no entry (after the
  // arrivals have made their cells).
  for (std::uint32_t ci = 0; two_grids_ && ci < changes_.size(); ++ci) {
    const Change& c = changes_[ci];
    const bool leaves = c.had_old && !c.old_outsized, arrives = c.has_new && !c.new_outsized;
    const auto has_entry = [&](int gen, const CellGrid::Coord& at) {
      return (leaves && gen == c.old_grid && c.old_range.contains(at)) ||
             (arrives && gen == c.new_grid && c.new_range.contains(at));
    };
    for (int gen = 0; gen < 2; ++gen) {
      const auto probe = [&](const CellGrid::Coord& at) {
        if (has_entry(gen, at)) return;
        const std::uint32_t cell = grid_.find(at, gen);
        if (cell != CellGrid::kNoCell) events_.push_back(Event{cell, ci, kProbe});
      };
      if (leaves) each_cell(grid_.range(c.old_box, gen), probe);
      if (arrives) {
        const CellRange old_r = leaves ? grid_.range(c.old_box, gen) : CellRange{{1, 1, 1}, {0, 0, 0}};
        each_cell(grid_.range(c.new_box, gen), [&](const CellGrid::Coord& at) {
          if (!old_r.contains(at)) probe(at);  // once per cell
        });
      }
    }
  }
  std::uint32_t most = 0;
  for (const Event& e : events_) most = std::max(most, e.cell);
  const int bits = std::max(1, static_cast<int>(std::bit_width(most)));
  const detail::RadixDigits digits{.bits = 8, .passes = (bits + 7) / 8, .insertion_up_to = 32};
  event_scratch_.resize(events_.size());
  radix_counts_.resize(digits.counts());
  const Event* sorted = detail::radix_sort(
      events_.data(), event_scratch_.data(), events_.size(), [](const Event& e) { return e.cell; }, digits,
      radix_counts_.data());
  if (sorted != events_.data()) events_.swap(event_scratch_);
  cell_changes_.resize(events_.size());
  for (std::size_t i = 0; i < events_.size(); ++i) {
    const Change& c = changes_[events_[i].change];  // independent loads: their misses overlap
    cell_changes_[i] = CellChange{c.slot, events_[i].what, c.had_old, c.has_new, c.old_box, c.new_box};
  }
}

// The objects' ranges, generations and outsized membership (with the
// outsized boxes) take the new state.
void MultiSap::apply_changes() {
  for (const Change& c : changes_) {
    if (c.had_old && c.old_outsized && !(c.has_new && c.new_outsized)) outsized_.erase(c.slot);
    if (c.had_old && c.old_grid != grid_gen_) --in_old_grid_;  // it leaves the old grid, or the world
    if (!c.has_new) {
      objects_.erase(c.slot);
      continue;
    }
    if (!c.had_old) {
      objects_.insert(c.slot, c.new_grid);
    } else if (c.new_grid != c.old_grid) {
      objects_.value<0>(c.slot) = c.new_grid;
    }
    if (c.new_outsized && !(c.had_old && c.old_outsized)) {
      outsized_.insert(c.slot, c.new_box);
    } else if (c.new_outsized) {
      outsized_.value<0>(c.slot) = c.new_box;
    }
  }
}

// One touched cell: events_[first, last), one query per change. Each
// changed entry first holds a box covering all it stands for here: old and
// new box (kept), old box (leaving), new box (arriving). Every pair that
// ends or starts here then meets as two overlapping entries, whatever moved;
// the query of the higher slot's changed entry, with its own box, finds it,
// and the exact old and new boxes decide; a pair is handled by its home cell
// only. Then the entries take their new boxes.
template <bool kSegmented, class Sink>
void MultiSap::update_cell(std::size_t first, std::size_t last, Sink& sink, OwnEntries& own) {
  const std::uint32_t cell = events_[first].cell;
  const CellGrid::Coord here = grid_.coord_of(cell);
  const int gen = grid_.gen_of(cell);
  // While regridding, a pair may meet in cells of two grids or in a probe:
  // every query covers both boxes of its change and reports what it finds
  // (the pair manager takes a repeated add or remove as one), not only in
  // the pair's home cell.
  const bool regrid = two_grids_;
  const auto cover = [regrid](const CellChange& a) {
    switch (regrid ? (a.had_old ? kLeave : 0u) | (a.has_new ? kArrive : 0u) : a.what) {
      case kLeave | kArrive: {
        Box3 h;
        for (int k = 0; k < 3; ++k) {
          h.min[k] = std::min(a.old_box.min[k], a.new_box.min[k]);
          h.max[k] = std::max(a.old_box.max[k], a.new_box.max[k]);
        }
        return h;
      }
      case kLeave:
        return a.old_box;
      default:
        return a.new_box;
    }
  };
  // Arrivals in bulk (a mass insertion) are appended and sorted once,
  // after the kept entries have slid (appending breaks the order they
  // are found by).
  std::size_t arrivals = 0, departures = 0;
  for (std::size_t i = first; i < last; ++i) {
    const CellChange& a = cell_changes_[i];
    arrivals += a.what == kArrive;
    departures += a.what == kLeave;
    // Tagged with its event: a query meeting a changed entry finds its
    // change here, not in a per-slot array across memory.
    const auto tag = static_cast<std::uint32_t>(i + 1);
    if (a.what == (kLeave | kArrive)) grid_.replace(cell, a.old_box, cover(a), a.slot, tag);
    if (a.what == kLeave) grid_.set_tag(cell, a.old_box, a.slot, tag);
  }
  const bool bulk_in = arrivals > kBulk;
  std::size_t to_append = arrivals;  // room for them all made by the first
  for (std::size_t i = first; i < last; ++i) {
    const CellChange& a = cell_changes_[i];
    if (a.what != kArrive) continue;
    const auto tag = static_cast<std::uint32_t>(i + 1);
    if (bulk_in) {
      grid_.append(cell, a.new_box, a.slot, tag, to_append--);
    } else {
      grid_.insert(cell, a.new_box, a.slot, tag);
    }
  }
  if (bulk_in) grid_.settle(cell, arrivals);
  // The queries; each meets its own entry too, and notes where it is.
  const bool witness = config_.mode == Consolidation::kWitness;
  own.assign(last - first, OwnEntry{CellGrid::kNoCell, 0});
  for (std::size_t i = first; i < last; ++i) {
    const CellChange& a = cell_changes_[i];
    grid_.query<kSegmented>(cell, cover(a), [&](const CellGrid::Entry& x) {
      if (x.slot == a.slot) {
        own[i - first] = OwnEntry{grid_.index_of(cell, x), static_cast<std::uint32_t>(i)};
        return;
      }
      const CellChange* b = x.tag != 0 ? &cell_changes_[x.tag - 1] : nullptr;
      if (b != nullptr && x.slot < a.slot && !regrid) return;  // b's query finds a: both query with their entry's box
      const Box3 x_box = box_of(x);                            // x's box if unchanged
      if (witness) {
        // This cell's own view: the pair was here if both entries were,
        // is here if both are (an unchanged entry is, and was).
        const std::uint32_t both = a.what & (b != nullptr ? b->what : kLeave | kArrive);
        const bool was = (both & kLeave) != 0 && overlapped(a, b, x_box);
        const bool now = (both & kArrive) != 0 && overlap_now(a, b, x_box);
        if (was != now) now ? sink.starts(a.slot, x.slot) : sink.ends(a.slot, x.slot);
        return;
      }
      const bool was = overlapped(a, b, x_box), now = overlap_now(a, b, x_box);
      if (was == now) return;
      if (now) {
        if (regrid || grid_.home(b != nullptr ? b->new_box : x_box, a.new_box, gen) == here)
          sink.starts(a.slot, x.slot);
      } else if (regrid || grid_.home(b != nullptr ? b->old_box : x_box, a.old_box, gen) == here) {
        sink.ends(a.slot, x.slot);
      }
    });
  }
  // The entries take their new state at the positions the queries noted,
  // the last first: a slide right or an erasure moves only later entries.
  // Departures in bulk (a mass removal) are marked and compacted once.
  const bool bulk_out = departures > kBulk;
  std::sort(own.begin(), own.end(), [](const OwnEntry& x, const OwnEntry& y) { return x.at > y.at; });
  for (const OwnEntry& o : own) {
    if (o.at == CellGrid::kNoCell) continue;  // a probe's
    const CellChange& a = cell_changes_[o.event];
    if (a.what == (kLeave | kArrive)) {
      grid_.slide_right(cell, o.at, a.new_box);
    } else if (a.what == kArrive) {
      grid_.clear_tag(cell, o.at);
    } else if (bulk_out) {
      grid_.mark_gone(cell, o.at);
    } else {
      grid_.erase_at(cell, o.at);
    }
  }
  if (bulk_out || (departures > 0 && grid_.segmented())) grid_.settle(cell, 0);  // segmented: merges
}

// A mass insertion or removal leaves scratch sized for it: given back once a
// frame needs far less, so that a steady world keeps its warm buffers; the
// same for the objects after a mass removal.
void MultiSap::release_scratch(std::size_t added) {
  // Scratch for a sixteenth of the world stays, and room for four times the
  // frame's changes: a world of a million keeps a slice's, a steady one
  // never reallocates. A frame that added more than half the world (a mass
  // insertion, a rebuild after a mass removal) gives its scratch back at
  // once: the next frame is unlikely to need it.
  const std::size_t kKeep = std::max<std::size_t>(1024, objects_.size() / 16);
  const bool mass = added * 2 > objects_.size();
  if (changes_.capacity() > kKeep && (mass || changes_.size() * 4 < changes_.capacity())) {
    detail::free_storage(changes_);
  }
  if (events_.capacity() > kKeep && (mass || events_.size() * 4 < events_.capacity())) {
    detail::free_storage(events_);
    detail::free_storage(event_scratch_);
    detail::free_storage(cell_changes_);
    detail::free_storage(cell_starts_);
  }
  for (PairEvents& t : task_events_) {
    if (t.events.capacity() > kKeep && t.events.size() * 4 < t.events.capacity()) detail::free_storage(t.events);
  }
  if (objects_.capacity() > kKeep && objects_.size() * 4 < objects_.capacity()) {
    objects_.shrink_to_fit();
    outsized_.shrink_to_fit();
  }
  if (objects_.empty()) marks_.release();
}

std::size_t MultiSap::memory_bytes() const {
  return grid_.memory_bytes() + objects_.memory_bytes() + outsized_.memory_bytes() + marks_.memory_bytes() +
         changes_.capacity() * sizeof(Change) + (events_.capacity() + event_scratch_.capacity()) * sizeof(Event) +
         cell_changes_.capacity() * sizeof(CellChange) +
         (radix_counts_.capacity() + cell_starts_.capacity()) * sizeof(std::uint32_t) + plan_.memory_bytes() +
         witnesses_.memory_bytes() + scratch_bytes();
}

std::size_t MultiSap::scratch_bytes() const {
  std::size_t bytes = task_events_.capacity() * sizeof(PairEvents);
  for (const PairEvents& t : task_events_) bytes += t.events.capacity() * sizeof(PairEvent);
  own_.for_each([&](const OwnEntries& own) { bytes += own.capacity() * sizeof(OwnEntry); });
  return bytes;
}

void MultiSap::debug_draw(DebugDraw& draw, std::span<const Id> /*ids*/) const {
  grid_.for_each_cell([&](const Box3& cell) { draw.box(cell, DebugCategory::kCell, kNoOwner); });
  draw.count("cells", grid_.live_cells());
}

// The outsized boxes tested one by one; in the grid, the cells of the
// query box's range (or every live cell, if the range has more), each box
// reported by its home cell with the query box only, so once.
bool MultiSap::query(const Box3& box, std::vector<Slot>& out) const {
  const std::span<const Slot> outsized = outsized_.slots();
  for (std::size_t d = 0; d < outsized.size(); ++d) {
    if (overlaps(outsized_.values<0>()[d], box)) out.push_back(outsized[d]);
  }
  const auto visit = [&](int gen, const CellGrid::Coord& at, std::span<const CellGrid::Entry> entries) {
    for (const CellGrid::Entry& e : entries) {
      if (overlaps(box_of(e), box) && grid_.home(box_of(e), box, gen) == at) out.push_back(e.slot);
    }
  };
  for (int gen = 0; gen < 2; ++gen) {
    if (gen != grid_gen_ && !regridding()) continue;
    const CellRange r = grid_.range(box, gen);
    if (CellGrid::cells_in(r) > grid_.live_cells()) {
      grid_.for_each_cell_entries([&](int g, const CellGrid::Coord& at, std::span<const CellGrid::Entry> entries) {
        if (g == gen) visit(gen, at, entries);
      });
      continue;
    }
    for (std::int32_t z = r.lo[2]; z <= r.hi[2]; ++z) {
      for (std::int32_t y = r.lo[1]; y <= r.hi[1]; ++y) {
        for (std::int32_t x = r.lo[0]; x <= r.hi[0]; ++x) {
          const CellGrid::Coord at{x, y, z};
          if (const std::uint32_t cell = grid_.find(at, gen); cell != CellGrid::kNoCell) {
            grid_.with_entries(cell, [&](std::span<const CellGrid::Entry> entries) { visit(gen, at, entries); });
          }
        }
      }
    }
  }
  return true;
}

bool MultiSap::ray_cast(const Ray3& ray, RayVisitor visit) const {
  const bool grids[2] = {grid_gen_ == 0 || regridding(), grid_gen_ == 1 || regridding()};
  for (int gen = 0; gen < 2; ++gen) {
    // A walk across far more cells than are live (an extent reaching the
    // clamped cells) is left to the BroadPhase's tree.
    if (grids[gen] && !GridRay(grid_, ray, gen, dims_ == 2).walkable(4 * grid_.live_cells() + 64)) return false;
  }
  float bound = ray.max_t, t = 0;
  const std::span<const Slot> outsized = outsized_.slots();
  for (std::size_t d = 0; d < outsized.size(); ++d) {
    if (ray_entry(ray, outsized_.values<0>()[d], t) && !(t > bound)) bound = visit(outsized[d], t);
  }
  // Each box is in the cells of one generation only.
  for (int gen = 0; gen < 2; ++gen) {
    if (!grids[gen]) continue;
    GridRay(grid_, ray, gen, dims_ == 2).walk(bound, [&](const CellGrid::Entry& e, float at) {
      bound = visit(e.slot, at);
      return bound;
    });
  }
  return true;
}

bool MultiSap::validate() const {
  if (!objects_.valid() || !outsized_.valid()) return false;
  const std::span<const Slot> slots = objects_.slots();
  std::size_t in_old = 0;
  for (std::size_t d = 0; d < slots.size(); ++d) in_old += objects_.values<0>()[d] != grid_gen_;
  if (in_old != in_old_grid_) return false;
  for (std::size_t d = 0; d < outsized_.size(); ++d) {
    const Slot s = outsized_.slots()[d];
    if (!objects_.contains(s) ||
        !is_outsized(grid_.range(outsized_.values<0>()[d], objects_.values<0>()[objects_.index(s)]))) {
      return false;
    }
  }
  // Every entry is a grid object's, in its generation and in the range of
  // its box, which all its entries hold; no cell holds one object twice
  // (same cell and slot: adjacent once sorted), so with the count of its
  // range's cells each object is in exactly the cells of its range. (The
  // boxes themselves are the BroadPhase's, which checks them.)
  std::vector<std::pair<std::uint64_t, Slot>> seen;
  std::vector<const CellGrid::Entry*> first(slots.size(), nullptr);
  std::uint64_t expected = 0;
  const bool entries_ok = grid_.validate([&](int gen, const CellGrid::Coord& at, const CellGrid::Entry& e) {
    if (!objects_.contains(e.slot) || outsized_.contains(e.slot)) return false;
    const std::uint32_t d = objects_.index(e.slot);
    const CellRange r = grid_.range(box_of(e), gen);
    if (objects_.values<0>()[d] != gen || !r.contains(at) || is_outsized(r)) return false;
    if (first[d] == nullptr) {
      first[d] = &e;
      expected += CellGrid::cells_in(r);
    } else if (!(box_of(*first[d]) == box_of(e))) {
      return false;
    }
    const auto u = [](std::int32_t v) { return std::uint64_t(v + CellGrid::kCoordLimit); };  // 21 bits
    const std::uint64_t cell_key = (u(at[0]) << 42) | (u(at[1]) << 21) | u(at[2]);  // one generation per object
    seen.emplace_back(cell_key, e.slot);
    return true;
  });
  if (!entries_ok || seen.size() != expected) return false;
  for (std::size_t d = 0; d < slots.size(); ++d) {
    if ((first[d] == nullptr) != outsized_.contains(slots[d])) return false;  // a grid object has entries
  }
  std::sort(seen.begin(), seen.end());
  if (std::adjacent_find(seen.begin(), seen.end()) != seen.end()) return false;
  return config_.mode != Consolidation::kWitness || witnesses_valid();
}

// Each overlapping pair of grid boxes has a witness count of the cells that
// hold both, and no other pair has one.
bool MultiSap::witnesses_valid() const {
  std::vector<std::uint64_t> keys;  // one per cell that holds an overlapping pair
  grid_.for_each_cell_entries([&](int, const CellGrid::Coord&, std::span<const CellGrid::Entry> entries) {
    for (std::size_t i = 0; i < entries.size(); ++i) {
      for (std::size_t j = i + 1; j < entries.size(); ++j) {
        if (overlaps(box_of(entries[i]), box_of(entries[j])))
          keys.push_back(pair_key(entries[i].slot, entries[j].slot));
      }
    }
  });
  std::sort(keys.begin(), keys.end());
  std::size_t distinct = 0;
  for (std::size_t i = 0; i < keys.size();) {
    std::size_t j = i;
    while (j < keys.size() && keys[j] == keys[i]) ++j;
    if (witnesses_.find(keys[i]) != j - i) return false;
    ++distinct;
    i = j;
  }
  return distinct == witnesses_.size();
}

std::unique_ptr<Algorithm> make_multi_sap(const Options& options) {
  SettingsReader settings(options.settings);
  MultiSapConfig config;
  config.mode = settings.choice("mode", 0, {"home", "witness"}, "multi-sap: mode is home or witness") == 0
                    ? Consolidation::kHomeCell
                    : Consolidation::kWitness;
  config.cell_size = settings.number("cell_size", 0.0, 0.0, 1e30,
                                     "multi-sap: cell_size is 0 (chosen from the data) or a finite size > 0");
  config.boxes_per_cell =
      settings.number("boxes_per_cell", config.boxes_per_cell, 1.0, 1e6, "multi-sap: boxes_per_cell is 1..1e6");
  config.adapt = settings.choice("regrid", 0, {"auto", "off"}, "multi-sap: regrid is auto or off") == 0;
  const bool segmented =
      settings.choice("cells", 0, {"sorted", "segmented"}, "multi-sap: cells is sorted or segmented") == 1;
  const double chunk = settings.number("chunk", 0.0, 2.0, 65536.0, "multi-sap: chunk is a whole number 2..65536");
  if (chunk != 0 && (!segmented || chunk != std::floor(chunk))) {
    throw SettingError{segmented ? "multi-sap: chunk is a whole number 2..65536"
                                 : "multi-sap: chunk is the size of a segmented cell's chunks (with cells=segmented)"};
  }
  config.chunk = segmented ? (chunk != 0 ? static_cast<std::uint32_t>(chunk) : kDefaultChunk) : 0;
  settings.finish("multi-sap's settings are mode, cell_size, boxes_per_cell, regrid, cells and chunk");
  return std::make_unique<MultiSap>(options, config);
}

std::unique_ptr<Algorithm> make_multi_sap_with(const Options& options, const MultiSapConfig& config) {
  return std::make_unique<MultiSap>(options, config);
}

}  // namespace sapling::detail
