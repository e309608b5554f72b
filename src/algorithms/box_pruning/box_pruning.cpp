// Box pruning, complete and bipartite: the method and the contract are in
// include/sapling/box_pruning.hpp (Terdiman 2007, I.4c and appendices A and
// B). The steps of one call:
//   1. analyse: pick the sweep axis (largest spread of centres) and a grid on
//      the other two axes, from a sample of the boxes;
//   2. bucket: copy every box, in index order, into each grid cell it
//      touches (a counting sort: one sequential read of the boxes, in
//      parallel over chunks of them);
//   3. per cell, in parallel: radix-sort the cell's entries by the sortable
//      key of their min on the sweep axis into a structure of arrays closed
//      by a sentinel, and sweep it ("prune"): for each entry scan the
//      following ones while their min is not past its max, and test the
//      other two axes.
// Sorting per cell rather than once globally keeps every random access of
// the sort and the sweep inside one cell's data, which fits in cache.
//
// Invariants: every cell receives its boxes in index order whatever the
// number of threads, and sorts them stably, so equal keys keep index order;
// a pair is reported by one cell only, the owner of its overlap's low
// corner, and only entries flagged kSpansCells pay for that test. Bipartite
// calls with one set much smaller take the probe path: only the small set
// is sorted into cells, and the large set's boxes scan the cells they touch.
//
// Cost: O(n) for the sorts plus O(n + candidates + pairs) for the sweeps.
// Choose it (registered "box-pruning", recomputed every frame) when nearly
// everything moves, and for one-shot queries. The constants' tuning and the
// measurements: docs/algorithms/box-pruning.md.
#include "sapling/box_pruning.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "algorithms/box_pruning/prune_loop.hpp"
#include "algorithms/builtin.hpp"
#include "detail/axis_sampler.hpp"
#include "detail/float_bounds.hpp"
#include "detail/gallop.hpp"
#include "detail/monotone_bins.hpp"
#include "detail/radix_sort.hpp"
#include "detail/reserve.hpp"
#include "detail/settings.hpp"
#include "detail/task_plan.hpp"
#include "sapling/float_key.hpp"

namespace sapling {
namespace {

using detail::prune::CrossAxes;

// Sentinel key: above the key of every non-NaN float, +inf included, so the
// prune loop needs no bounds check (Terdiman 2007, appendix B).
constexpr std::uint32_t kSentinelKey = 0xffffffffu;
static_assert(float_key(std::numeric_limits<float>::infinity()) < kSentinelKey);

// Marks an entry whose box lies in more than one cell: only its pairs need
// the owner test.
constexpr std::uint32_t kSpansCells = 0x80000000u;

// A free entry of the prepared set (BoxPruner::free_prepared()) keeps its
// min key, so that its cell stays sorted, and takes this max key, below
// every box's min (the key of no float a box may hold): the sparse sweep's
// max test passes over it, a merge's sweep never starts from it, and the
// bipartite sweep's emit drops it, the one place a candidate found by the
// cross axes alone is reported.
constexpr std::uint32_t kFreeMaxKey = 0;
static_assert(float_key(-std::numeric_limits<float>::infinity()) > kFreeMaxKey);

// A box copied into more cells than this is not edited in place.
constexpr std::uint32_t kMaxEditCells = 16;
// insert_prepared(): how far in the arrays from where a box sorts the free
// entry it takes may lie (the entries between shift by one). A body falling
// asleep finds the entry it left a few away; a box added where other boxes
// went finds one only hundreds away, and the search and the shift cost more
// than pairing it as an active box until the next layout (4,096 made sap's
// frame of tracy-100k-static, 500 boxes replaced a frame, 1.33x multi-sap's
// against 0.93x at 64, and wakeups-1m's 1.17x against 0.95x).
constexpr std::uint32_t kInsertReach = 64;

// Below this many boxes the grid does not pay for its analysis.
constexpr std::size_t kGridMinBoxes = 2048;
// Mean number of sweep candidates per box the grid aims for.
constexpr double kTargetCandidates = 6.0;
// Smallest cell, in mean box extents: keeps boxes in one cell mostly.
constexpr double kMinCellExtents = 6.0;
// Coarsen the grid when boxes are copied into more cells than this, on average.
constexpr double kMaxCopiesPerBox = 1.6;
constexpr std::uint32_t kMaxCellsPerAxis = 1024;
// Bipartite calls with one set at least this many times larger than the
// other take the probe path (BoxPruner::Impl::probe).
constexpr std::size_t kProbeRatio = 8;
// Probe path: small boxes per cell the grid aims for, and the thinnest
// cell, in mean box extents.
constexpr double kProbeEntries = 4.0;
constexpr double kProbeMinCellExtents = 2.0;
// Probe path's occupancy filter: at most this many cells in all (512 KiB
// of bits), and no box covering more than this many.
constexpr std::uint64_t kMaxOccupancyCells = std::uint64_t{1} << 22;
constexpr std::uint64_t kMaxOccupancyCellsPerBox = 64;

// Grid cells along one axis (monotone_bins.hpp).
using AxisCells = detail::MonotoneBins;

struct Layout {
  int sweep = 0;                  // sweep axis
  std::array<int, 2> grid{1, 2};  // the other two axes: a, b
  AxisCells cells_a, cells_b;
  std::uint32_t cell_count() const { return cells_a.count * cells_b.count; }
};

// Statistics of a sample of the boxes, their centres in float.
using Stats = detail::AxisSample;

Stats sample_stats(std::span<const Box3> a, std::span<const Box3> b) {
  Stats st;
  const std::size_t stride = detail::sample_stride(a.size() + b.size(), 8192);
  detail::add_sample<detail::SamplePoint::kFloatCentre, detail::kAllSums>(st, a, stride);
  detail::add_sample<detail::SamplePoint::kFloatCentre, detail::kAllSums>(st, b, stride);
  return st;
}

AxisCells axis_cells(const Stats& st, int axis, std::uint32_t count) {
  return AxisCells::over(st.lo[axis], st.hi[axis], count);
}

// The axis along which the sample's centres spread most, swept; the grid
// on the other two.
Layout sweep_layout(const Stats& st) {
  Layout layout;
  int s = 0;
  for (int k = 1; k < 3; ++k) {
    if (st.variance(k) > st.variance(s)) s = k;
  }
  layout.sweep = s;
  layout.grid = {s == 0 ? 1 : 0, s == 2 ? 1 : 2};
  return layout;
}

// About `cells_wanted` cells on the grid axes, split between them in
// proportion to their room: the spread of the centres over the thinnest
// cell allowed, min_cell[k] on axis k.
void split_cells(const Stats& st, Layout& layout, double cells_wanted, const std::array<double, 3>& min_cell) {
  std::array<double, 2> most{};  // most cells along each grid axis
  for (int g = 0; g < 2; ++g) {
    const int k = layout.grid[g];
    const double spread = double(st.hi[k]) - st.lo[k];
    const double cell = std::max(min_cell[k], spread * 1e-6);
    most[g] = spread > 0 ? std::clamp(spread / cell, 1.0, double(kMaxCellsPerAxis)) : 1.0;
  }
  double ga = std::clamp(std::sqrt(cells_wanted * most[0] / most[1]), 1.0, most[0]);
  const double gb = std::clamp(cells_wanted / ga, 1.0, most[1]);
  ga = std::clamp(cells_wanted / gb, 1.0, most[0]);
  layout.cells_a = axis_cells(st, layout.grid[0], static_cast<std::uint32_t>(ga));
  layout.cells_b = axis_cells(st, layout.grid[1], static_cast<std::uint32_t>(gb));
}

// Chooses the sweep axis and the grid from the statistics of a sample.
Layout choose_layout(const Stats& st, std::size_t n) {
  Layout layout = sweep_layout(st);
  if (st.count == 0 || n < kGridMinBoxes) return layout;
  // Candidates per box of a single sweep: n times the chance that two
  // intervals on the sweep axis meet, (extent_i + extent_j) / spread.
  const int s = layout.sweep;
  const double spread_s = double(st.hi[s]) - st.lo[s] + st.mean_extent(s);
  const double candidates = double(n) * std::min(1.0, 2.0 * st.mean_extent(s) / std::max(spread_s, 1e-30));
  std::array<double, 3> min_cell{};
  for (int k = 0; k < 3; ++k) min_cell[k] = kMinCellExtents * st.mean_extent(k);
  split_cells(st, layout, std::clamp(candidates / kTargetCandidates, 1.0, double(n) / 8.0), min_cell);
  return layout;
}

// The probe path's grid: over the small set's centres, about kProbeEntries
// small boxes per cell, no cell thinner than kProbeMinCellExtents mean
// extents of either set's boxes (so a probing box touches a few cells).
Layout probe_layout(const Stats& small, const Stats& large, std::size_t m) {
  Layout layout = sweep_layout(small);
  if (small.count == 0) return layout;
  std::array<double, 3> min_cell{};
  for (int k = 0; k < 3; ++k) {
    min_cell[k] = kProbeMinCellExtents * std::max(small.mean_extent(k), large.mean_extent(k));
  }
  split_cells(small, layout, std::max(1.0, double(m) / kProbeEntries), min_cell);
  return layout;
}

// Entries of prepare()'s borrowed staging buffer from which it is freed
// afterwards rather than kept (a layout of this many boxes costs far more
// than the buffer's page faults).
constexpr std::size_t kKeptStagingEntries = std::size_t{1} << 16;

// A box as bucketed into a cell, before the cell is sorted.
struct Staged {
  std::uint32_t min_key, max_key;
  std::uint32_t index;  // box index | kSpansCells
  std::uint32_t unused;
  CrossAxes cross;
};

// One swept entry, moved whole (BoxPruner::Impl::merge_prepared()).
struct SweptEntry {
  std::uint32_t min_key, max_key;
  CrossAxes cross;
  std::uint32_t index;
};

// The cells a box touches on the two grid axes.
struct CellRange {
  std::uint32_t a0, a1, b0, b1;
};

}  // namespace

// One set of boxes laid out in cells. Bucketed entries of cell c are
// staged[start[c], start[c+1]); once the cell is sorted they are at
// [start[c] + c, start[c+1] + c) of the swept arrays, followed by a sentinel.
struct CellArrays {
  std::vector<std::uint32_t> start;
  std::vector<Staged> staged;
  std::vector<std::uint32_t> min_key, max_key;
  std::vector<CrossAxes> cross;
  std::vector<std::uint32_t> index;  // box index | kSpansCells

  std::uint32_t begin(std::uint32_t c) const { return start[c] + c; }
  std::uint32_t end(std::uint32_t c) const { return start[c + 1] + c; }  // the sentinel
  std::uint32_t entries() const { return start.back(); }
};

namespace {

// The swept arrays, sized together; grown with room to spare
// (reserve_geometric()), so that a prepared set that later gains a few
// boxes (update_prepared()) does not copy them all.
void resize_swept(CellArrays& c, std::size_t swept) {
  detail::reserve_geometric(c.min_key, swept);
  detail::reserve_geometric(c.max_key, swept);
  detail::reserve_geometric(c.cross, swept);
  detail::reserve_geometric(c.index, swept);
  c.min_key.resize(swept);
  c.max_key.resize(swept);
  c.cross.resize(swept);
  c.index.resize(swept);
}

}  // namespace

struct TaskScratch {
  std::vector<std::uint64_t> keys, spare;
};

// The probe path's filter: which cells of a coarse 3D grid the small set's
// boxes touch (BoxPruner::Impl::probe).
struct Occupancy {
  std::array<AxisCells, 3> axis;
  std::vector<std::uint64_t> bits;
  bool build(std::span<const Box3> small, const Box3& bounds);
  bool may_overlap(const Box3& q) const;
  enum class Visit { kAll, kStopped, kTooMany };
  template <class Stop>
  Visit visit_cells(const Box3& b, Stop&& stop) const;
};

struct BoxPruner::Impl {
  TaskSystem* tasks = nullptr;
  std::array<CellArrays, 2> sets;
  CellArrays prepared;  // prepare()'s boxes, sorted in prepared_layout's cells
  // By prepared cell: how far its entries reach back along the sweep axis
  // (the longest extent), and the lowest of their mins and their spread,
  // for the sparse sweep.
  struct Reach {
    float back = 0;  // rounded up
    double first = 0, spread = 0;
  };
  std::vector<Reach> prepared_reach;
  Layout prepared_layout;
  Layout complete_layout;  // the last complete()'s grid, for debug_draw()
  bool has_complete = false;
  std::size_t prepared_boxes = 0;
  std::size_t free_entries = 0;  // entries freed in place, not taken again since
  // What the grid was chosen for at the last prepare(): update_prepared()
  // keeps it while the set stays near that size and no cell crowds far
  // beyond the largest then.
  std::size_t laid_out_boxes = 0;
  std::uint32_t laid_out_largest_cell = 0;
  std::vector<SweptEntry> ring;                 // update_prepared(): old entries saved from being overwritten
  std::vector<std::uint32_t> new_start;         // update_prepared(): the cells' new starts
  std::vector<std::uint32_t> chunk_counts;      // [chunk][cell] entries, then offsets
  detail::TaskPlan plan;                        // tasks of consecutive cells
  std::vector<TaskScratch> scratch;             // by task
  std::vector<std::vector<IndexPair>> outputs;  // by task, when tasks run in parallel
  std::vector<Staged> spare_staging;            // a large prepare()'s staging, kept a frame (set_framed())
  bool framed = false;                          // set_framed()
  std::uint32_t grain = kDefaultTaskGrain;      // set_task_grain()
  bool spare_aged = false;                      // end_frame() has seen it once
  // By task, when tasks run in parallel: bipartite_prepared()'s two outputs.
  struct TwoOutputs {
    std::vector<IndexPair> prepared, among;
    void clear() noexcept { prepared.clear(), among.clear(); }
  };
  std::vector<TwoOutputs> two_outputs;
  Occupancy occupancy;

  void bucket(const Layout& layout, std::span<const Box3> boxes, CellArrays& cells,
              std::span<const std::uint32_t> indices = {});
  void sort_cell(const Layout& layout, CellArrays& cells, std::uint32_t cell, TaskScratch& tmp);
  void plan_tasks(const Layout& layout, const CellArrays& first, const CellArrays* second);
  void sort_cells(const Layout& layout, CellArrays& cells);
  void probe(std::span<const Box3> small, std::span<const Box3> large, bool small_is_a, std::vector<IndexPair>& out);
  template <bool kBipartite>
  void sweep_cell(const Layout& layout, std::uint32_t cell, const CellArrays& a, const CellArrays& b,
                  std::vector<IndexPair>& out) const;
  bool sparse_pays(std::uint32_t cell, std::uint32_t queries) const;
  std::uint32_t even_guess(std::uint32_t cell, float min, std::uint32_t lowest) const;
  std::uint32_t first_at_least(std::uint32_t cell, float min, std::uint32_t key) const;
  class SparseSweep;
  void measure_reach(const CellArrays& added);
  void prepare(std::span<const Box3> boxes, std::vector<IndexPair>* out);
  bool update_prepared(std::span<const std::uint8_t> keep, std::span<const Box3> added,
                       std::vector<std::uint32_t>& indices);
  void merge_prepared(std::span<const std::uint8_t> keep, const CellArrays& added);
  std::uint32_t find_entry(std::uint32_t cell, std::uint32_t key, std::uint32_t index) const;
  bool free_prepared(std::uint32_t index, const Box3& box);
  bool insert_prepared(const Box3& box, std::uint32_t& index);
  void put_entry(std::uint32_t at, const SweptEntry& e);
  template <bool kBipartite>
  void run(const Layout& layout, std::vector<IndexPair>& out);
};

namespace {

inline CellRange cell_range(const Layout& layout, const Box3& b) {
  const int ka = layout.grid[0], kb = layout.grid[1];
  return {layout.cells_a(b.min[ka]), layout.cells_a(b.max[ka]), layout.cells_b(b.min[kb]), layout.cells_b(b.max[kb])};
}

// Whether cell (ca, cb) reports the pair of overlapping boxes p and q: the
// cell of the low corner of their overlap, (max of mins) on the grid axes,
// which both boxes touch.
inline bool owns(const Layout& layout, std::uint32_t ca, std::uint32_t cb, const CrossAxes& p, const CrossAxes& q) {
  return layout.cells_a(std::max(detail::prune::min_a(p), detail::prune::min_a(q))) == ca &&
         layout.cells_b(std::max(detail::prune::min_b(p), detail::prune::min_b(q))) == cb;
}

}  // namespace

// Counting sort of the boxes into cells, in parallel over fixed chunks of
// boxes: each chunk counts its entries per cell, offsets are laid out cell
// by cell and chunk by chunk, so every cell receives its boxes in index
// order whatever the number of threads.
// With `indices`, box i is entered as indices[i] (update_prepared()).
void BoxPruner::Impl::bucket(const Layout& layout, std::span<const Box3> boxes, CellArrays& c,
                             std::span<const std::uint32_t> indices) {
  const std::uint32_t cells = layout.cell_count();
  const std::size_t n = boxes.size();
  const std::size_t chunks = std::clamp<std::size_t>(n / (4 * std::size_t{grain}), 1, 16);
  auto chunk_of = [&](std::size_t k) { return std::pair{n * k / chunks, n * (k + 1) / chunks}; };
  chunk_counts.assign(chunks * cells, 0);
  detail::run_tasks(tasks, chunks, [&](std::size_t k) {
    std::uint32_t* count = &chunk_counts[k * cells];
    const auto [first, last] = chunk_of(k);
    for (std::size_t i = first; i < last; ++i) {
      const CellRange r = cell_range(layout, boxes[i]);
      for (std::uint32_t cb = r.b0; cb <= r.b1; ++cb)
        for (std::uint32_t ca = r.a0; ca <= r.a1; ++ca) ++count[cb * layout.cells_a.count + ca];
    }
  });
  c.start.resize(cells + 1);
  std::uint32_t total = 0;
  for (std::uint32_t cell = 0; cell < cells; ++cell) {
    c.start[cell] = total;
    for (std::size_t k = 0; k < chunks; ++k) total += std::exchange(chunk_counts[k * cells + cell], total);
  }
  c.start[cells] = total;
  detail::reserve_geometric(c.staged, total);
  c.staged.resize(total);
  const int s = layout.sweep, ka = layout.grid[0], kb = layout.grid[1];
  detail::run_tasks(tasks, chunks, [&](std::size_t k) {
    std::uint32_t* cursor = &chunk_counts[k * cells];
    const auto [first, last] = chunk_of(k);
    for (std::size_t i = first; i < last; ++i) {
      const Box3& b = boxes[i];
      const CellRange r = cell_range(layout, b);
      const std::uint32_t tag = (r.a0 != r.a1 || r.b0 != r.b1) ? kSpansCells : 0;
      const Staged e{float_key(b.min[s]), float_key(b.max[s]),
                     (indices.empty() ? static_cast<std::uint32_t>(i) : indices[i]) | tag, 0,
                     detail::prune::cross_axes(b.min[ka], b.min[kb], b.max[ka], b.max[kb])};
      for (std::uint32_t cb = r.b0; cb <= r.b1; ++cb)
        for (std::uint32_t ca = r.a0; ca <= r.a1; ++ca) c.staged[cursor[cb * layout.cells_a.count + ca]++] = e;
    }
  });
  resize_swept(c, std::size_t{total} + cells);
}

// Sorts one cell's entries by min key (ties: box index, from the bucketing
// order) into the swept arrays, and closes the cell with its sentinel.
void BoxPruner::Impl::sort_cell(const Layout&, CellArrays& c, std::uint32_t cell, TaskScratch& tmp) {
  const std::uint32_t first = c.start[cell], count = c.start[cell + 1] - first;
  tmp.keys.resize(count);
  for (std::uint32_t k = 0; k < count; ++k) tmp.keys[k] = (std::uint64_t{c.staged[first + k].min_key} << 32) | k;
  // By key, 8-bit digits; stable, so equal keys keep position order. A few
  // entries (a cell's share of a frame's query boxes) by insertion: the
  // radix sort's counts alone would cost more.
  constexpr detail::RadixDigits kDigits{8, 4, 32};
  std::array<std::uint32_t, kDigits.counts()> counts;
  detail::radix_sort(
      tmp.keys, tmp.spare, [](std::uint64_t item) { return item >> 32; }, kDigits, counts.data());
  std::uint32_t at = c.begin(cell);
  for (const std::uint64_t item : tmp.keys) {
    const Staged& e = c.staged[first + static_cast<std::uint32_t>(item)];
    c.min_key[at] = e.min_key;
    c.max_key[at] = e.max_key;
    c.cross[at] = e.cross;
    c.index[at] = e.index;
    ++at;
  }
  c.min_key[at] = kSentinelKey;
  c.cross[at] = CrossAxes{};  // read, never used, by the two-wide loop
}

// Tasks of consecutive cells of similar entry counts (task_plan.hpp).
void BoxPruner::Impl::plan_tasks(const Layout& layout, const CellArrays& first, const CellArrays* second) {
  const std::uint32_t cells = layout.cell_count();
  auto entries_before = [&](std::uint32_t cell) {
    return std::uint64_t{first.start[cell]} + (second != nullptr ? second->start[cell] : 0);
  };
  plan.split(cells, entries_before(cells), entries_before, grain, 256);
  if (scratch.size() < plan.size()) scratch.resize(plan.size());
}

// Sorts every cell of one set, in parallel.
void BoxPruner::Impl::sort_cells(const Layout& layout, CellArrays& cells) {
  plan_tasks(layout, cells, nullptr);
  detail::run_tasks(tasks, plan.size(), [&](std::size_t t) {
    for (std::uint32_t c = plan.first(t); c < plan.end(t); ++c) sort_cell(layout, cells, c, scratch[t]);
  });
}

template <bool kBipartite>
void BoxPruner::Impl::run(const Layout& layout, std::vector<IndexPair>& out) {
  plan_tasks(layout, sets[0], kBipartite ? &sets[1] : nullptr);
  detail::run_ordered(tasks, plan.size(), outputs, out, [&](std::size_t t, std::vector<IndexPair>& found) {
    TaskScratch& tmp = scratch[t];
    for (std::uint32_t c = plan.first(t); c < plan.end(t); ++c) {
      sort_cell(layout, sets[0], c, tmp);
      if constexpr (kBipartite) sort_cell(layout, sets[1], c, tmp);
      sweep_cell<kBipartite>(layout, c, sets[0], sets[1], found);
    }
  });
}

// The prune loop of one cell. A pair of entries that passes the sweep and
// cross-axis tests overlaps; it is reported here unless one of its boxes
// spans several cells and another cell owns the pair: the owner is the cell
// of the low corner of the overlap, (max of mins) on the grid axes, which
// both boxes touch.
template <bool kBipartite>
void BoxPruner::Impl::sweep_cell(const Layout& layout, std::uint32_t cell, const CellArrays& a,
                                 [[maybe_unused]] const CellArrays& b, std::vector<IndexPair>& out) const {
  const std::uint32_t ca = cell % layout.cells_a.count, cb = cell / layout.cells_a.count;
  auto emit = [&](const CellArrays& x, std::uint32_t i, const CellArrays& y, std::uint32_t j) {
    if constexpr (kBipartite) {
      if (y.max_key[j] == kFreeMaxKey) return;  // a free prepared entry, met on its cross axes (kFreeMaxKey)
    }
    const std::uint32_t ix = x.index[i], iy = y.index[j];
    if (((ix | iy) & kSpansCells) && !owns(layout, ca, cb, x.cross[i], y.cross[j])) return;
    const std::uint32_t p = ix & ~kSpansCells, q = iy & ~kSpansCells;
    if constexpr (kBipartite) {
      out.push_back(&x == &a ? IndexPair{p, q} : IndexPair{q, p});
    } else {
      out.push_back(p < q ? IndexPair{p, q} : IndexPair{q, p});
    }
  };
  // Scans y from `from` while y's min is not past x's max.
  auto prune = [&](const CellArrays& x, std::uint32_t i, const CellArrays& y, std::uint32_t from) {
    detail::prune::scan(x.cross[i], x.max_key[i], y.min_key.data(), y.cross.data(), from,
                        [&](std::uint32_t j) { emit(x, i, y, j); });
  };

  if constexpr (!kBipartite) {
    for (std::uint32_t i = a.begin(cell), end = a.end(cell); i < end; ++i) prune(a, i, a, i + 1);
  } else {
    // Terdiman's bipartite pruning: each box of one set scans the boxes of
    // the other set that start at or after it; ties on the min go to the
    // first loop only (< versus <=), so no pair is found twice.
    const std::uint32_t a_end = a.end(cell), b_end = b.end(cell);
    std::uint32_t j = b.begin(cell);
    for (std::uint32_t i = a.begin(cell); i < a_end; ++i) {
      while (j < b_end && b.min_key[j] < a.min_key[i]) ++j;
      if (b.min_key[j] <= a.max_key[i]) prune(a, i, b, j);  // one set may be far sparser than the other
    }
    std::uint32_t k = a.begin(cell);
    for (std::uint32_t i = b.begin(cell); i < b_end; ++i) {
      while (k < a_end && a.min_key[k] <= b.min_key[i]) ++k;
      if (a.min_key[k] <= b.max_key[i]) prune(b, i, a, k);
    }
  }
}

// Whether a cell of the prepared set is better swept from its query boxes
// alone (SparseSweep) than merged with them: the merge visits every
// prepared entry of the cell, the sparse sweep a search and the entries
// within reach of each query box. Costs in units of a merged entry,
// measured on the tracy scene (docs/algorithms/box-pruning.md).
bool BoxPruner::Impl::sparse_pays(std::uint32_t cell, std::uint32_t queries) const {
  constexpr double kSearch = 3, kCandidate = 0.25;
  const Reach& r = prepared_reach[cell];
  const double entries = prepared.start[cell + 1] - prepared.start[cell];
  if (!(r.spread > 0) || !std::isfinite(r.back) || !std::isfinite(r.spread)) return false;  // inf: beyond any float
  const double candidates = entries * std::min(1.0, 2 * r.back / r.spread);
  return double(queries) * (kSearch + kCandidate * candidates) < entries;
}

// Where in prepared cell `cell` an entry of min `min` would lie were the
// cell's mins spread evenly over their range: a guess for a galloping
// search, no lower than `lowest` (then also where it is NaN), nor beyond
// the cell.
std::uint32_t BoxPruner::Impl::even_guess(std::uint32_t cell, float min, std::uint32_t lowest) const {
  const Reach& r = prepared_reach[cell];
  const std::uint32_t begin = prepared.begin(cell), end = prepared.end(cell);
  const double at = double(begin) + (double(min) - r.first) * (double(end - begin) / r.spread);
  if (!(at > double(lowest))) return lowest;
  return at < double(end) ? static_cast<std::uint32_t>(at) : end;
}

// The first entry of prepared cell `cell` whose min key is at least `key`
// (the key of `min` or near it), or the cell's end: a galloping search from
// the even guess, a few lines read in a long cell.
std::uint32_t BoxPruner::Impl::first_at_least(std::uint32_t cell, float min, std::uint32_t key) const {
  const std::uint32_t begin = prepared.begin(cell), end = prepared.end(cell);
  const std::uint32_t* min_key = prepared.min_key.data();
  return detail::first_at_least(
      begin, end, even_guess(cell, min, begin), [&](std::uint32_t k) { return min_key[k]; }, key);
}

// The bipartite sweep of cells with few query boxes among many prepared
// ones: each query box q, in sweep order, finds the first prepared entry of
// its cell whose min is within the cell's reach of q's min, and scans from
// there while mins are not past q's max, testing the entries' max and the
// two other axes. Every candidate pair is visited once, from its query box.
// A search starts where the cell's last one ended (the bounds only grow):
// a few steps when the next is near; otherwise a gallop from where the
// entry would lie were the cell's mins spread evenly over their range, so
// that a query among thousands of entries (a flat world's long cells)
// reads a few lines near its answer rather than a dozen across the cell.
// In a prepared set larger than a core's caches the searches run a batch
// ahead of the scans, across cells: each start found is fetched (the cross
// axes it scans, the hits' max keys and indices, arrays of their own) while
// the next searches run, so that the waits on memory overlap where a cell
// holds one query box or many.
class BoxPruner::Impl::SparseSweep {
 public:
  SparseSweep(const Impl& m, const Layout& layout, const CellArrays& q, std::vector<IndexPair>& out)
      : m_(m), layout_(layout), q_(q), out_(out), batch_(m.prepared.min_key.size() < kBatchedEntries ? 1 : kBatch) {}
  SparseSweep(const SparseSweep&) = delete;
  SparseSweep& operator=(const SparseSweep&) = delete;

  // Searches for each query box of `cell`; scans as the batch fills. The
  // last scans wait for flush().
  void add(std::uint32_t cell) {
    const CellArrays& p = m_.prepared;
    const Reach& reach = m_.prepared_reach[cell];
    const std::uint32_t* min_key = p.min_key.data();
    const std::uint32_t begin = p.begin(cell), end = p.end(cell);  // end: the sentinel, above every key
    std::uint32_t j = begin;
    for (std::uint32_t i = q_.begin(cell), q_end = q_.end(cell); i < q_end; ++i) {
      // The lowest min that can reach q: q's min less the reach, one key
      // below the rounded difference, so at or below the exact one (a key
      // below +0's reads as -0, which sorts with +0: still a lower bound).
      const float from = key_float(q_.min_key[i]) - reach.back;
      std::uint32_t from_key = float_key(from);
      from_key -= from_key != 0;
      for (int step = 0; step < 8 && min_key[j] < from_key; ++step) ++j;
      if (min_key[j] < from_key) {
        j = detail::first_at_least(
            j + 1, end, m_.even_guess(cell, from, j + 1), [&](std::uint32_t k) { return min_key[k]; }, from_key);
      }
      if (batch_ == 1) {
        scan(cell, i, j);
        continue;
      }
      __builtin_prefetch(p.cross.data() + j);
      __builtin_prefetch(p.cross.data() + j + 4);
      __builtin_prefetch(p.max_key.data() + j);
      __builtin_prefetch(p.index.data() + j);
      pending_[count_++] = Pending{cell, i, j};
      if (count_ == batch_) flush();
    }
  }

  // Scans every search of the batch, in the order searched.
  void flush() {
    for (std::uint32_t n = 0; n < count_; ++n) scan(pending_[n].cell, pending_[n].query, pending_[n].start);
    count_ = 0;
  }

 private:
  // Query box i of `cell` against the prepared entries from `start` on.
  void scan(std::uint32_t cell, std::uint32_t i, std::uint32_t start) {
    const CellArrays& p = m_.prepared;
    const std::uint32_t q_index = q_.index[i], q_min = q_.min_key[i];
    detail::prune::scan(q_.cross[i], q_.max_key[i], p.min_key.data(), p.cross.data(), start, [&](std::uint32_t k) {
      if (p.max_key[k] < q_min) return;
      const std::uint32_t p_index = p.index[k];
      if (((q_index | p_index) & kSpansCells) &&
          !owns(layout_, cell % layout_.cells_a.count, cell / layout_.cells_a.count, q_.cross[i], p.cross[k])) {
        return;
      }
      out_.push_back(IndexPair{q_index & ~kSpansCells, p_index & ~kSpansCells});
    });
  }

  static constexpr std::uint32_t kBatch = 8;
  // Entries (28 bytes each, 1.8 MB) from which the searches run in batches.
  static constexpr std::size_t kBatchedEntries = std::size_t{1} << 16;
  struct Pending {
    std::uint32_t cell, query, start;
  };
  const Impl& m_;
  const Layout& layout_;
  const CellArrays& q_;
  std::vector<IndexPair>& out_;
  const std::uint32_t batch_;
  Pending pending_[kBatch];
  std::uint32_t count_ = 0;
};

namespace {

// A reach as a float, rounded up (extent_of() is an upper bound already: a
// tiny min under a large max rounds the difference); infinite for a box
// reaching one infinity.
float rounded_up(double back) {
  float rounded = back > double(std::numeric_limits<float>::max()) ? std::numeric_limits<float>::infinity()
                                                                   : static_cast<float>(back);
  if (double(rounded) < back) rounded = std::nextafter(rounded, std::numeric_limits<float>::infinity());
  return rounded;
}

}  // namespace

// Each prepared cell's reach and spread (see SparseSweep): the reach
// over the entries of `from`, either the prepared cells themselves
// (prepare()) or the entries update_prepared() added, which widen the reach
// of the kept ones (still at least theirs: a bound, never below the true
// one); the spread over the prepared cells.
void BoxPruner::Impl::measure_reach(const CellArrays& from) {
  const std::uint32_t cells = prepared_layout.cell_count();
  const bool anew = &from == &prepared;
  if (anew) prepared_reach.assign(cells, Reach{});
  for (std::uint32_t c = 0; c < cells; ++c) {
    Reach& r = prepared_reach[c];
    double widest = 0;
    for (std::uint32_t i = from.begin(c), end = from.end(c); i < end; ++i) {
      widest = std::max(widest, double(key_float(from.max_key[i])) - double(key_float(from.min_key[i])));
    }
    r.back = std::max(r.back, rounded_up(detail::extent_of_widest(widest)));
    const std::uint32_t first = prepared.begin(c), end = prepared.end(c);
    r.first = first == end ? 0.0 : double(key_float(prepared.min_key[first]));
    r.spread = first == end ? 0.0 : double(key_float(prepared.min_key[end - 1])) - r.first;
  }
}

// Occupancy::build: a grid of about box-sized cells over `bounds` (the
// small set's), one bit per cell set where a small box touches it. False
// (no filter) when a box covers too many cells for the filter to pay.
bool Occupancy::build(std::span<const Box3> small, const Box3& bounds) {
  double extent[3]{};
  for (const Box3& b : small) {
    for (int k = 0; k < 3; ++k) extent[k] += double(b.max[k]) - b.min[k];
  }
  std::uint64_t cells = 1;
  for (int k = 0; k < 3; ++k) {
    const double span = double(bounds.max[k]) - bounds.min[k];
    const double size = std::max(extent[k] / double(small.size()), span / double(kMaxCellsPerAxis));
    axis[k] = AxisCells{};
    if (!std::isfinite(span) || !(size > 0) || span / size < 2) continue;
    axis[k] = AxisCells::over(bounds.min[k], bounds.max[k], static_cast<std::uint32_t>(span / size));
    cells *= axis[k].count;
  }
  if (cells == 1 || cells > kMaxOccupancyCells) return false;
  bits.assign((cells + 63) / 64, 0);
  const auto mark = [&](std::uint64_t c) {
    bits[c >> 6] |= std::uint64_t{1} << (c & 63);
    return false;
  };
  for (const Box3& b : small) {
    if (visit_cells(b, mark) == Visit::kTooMany) return false;
  }
  return true;
}

// Whether box q touches a marked cell: if not, it overlaps no small box (a
// point common to both lies in a cell both touch, the maps being monotone).
// Boxes covering many cells are let through.
bool Occupancy::may_overlap(const Box3& q) const {
  return visit_cells(q, [&](std::uint64_t c) { return (bits[c >> 6] >> (c & 63) & 1) != 0; }) != Visit::kAll;
}

// Calls `stop(c)` for each cell c that box b touches until it returns true;
// nothing for a box that covers too many.
template <class Stop>
Occupancy::Visit Occupancy::visit_cells(const Box3& b, Stop&& stop) const {
  std::uint32_t lo[3], hi[3];
  std::uint64_t covered = 1;
  for (int k = 0; k < 3; ++k) {
    lo[k] = axis[k](b.min[k]);
    hi[k] = axis[k](b.max[k]);
    covered *= hi[k] - lo[k] + 1;
  }
  if (covered > kMaxOccupancyCellsPerBox) return Visit::kTooMany;
  for (std::uint32_t z = lo[2]; z <= hi[2]; ++z)
    for (std::uint32_t y = lo[1]; y <= hi[1]; ++y)
      for (std::uint32_t x = lo[0]; x <= hi[0]; ++x) {
        if (stop((std::uint64_t{z} * axis[1].count + y) * axis[0].count + x)) return Visit::kStopped;
      }
  return Visit::kAll;
}

// The probe path of bipartite calls where one set is much smaller: sorting
// the large set would cost more than all the rest, so only the small set is
// laid out in cells (over its own extent, sorted per cell as usual), and the
// boxes of the large set, read once in index order, each scan the cells
// they touch. A probing box outside the small set's bounds is dropped at
// once, and so is one that touches no cell of a coarse occupancy grid of the
// small boxes. O(large + small + candidates); output in order of the large set's
// boxes, in parallel over fixed chunks of them.
void BoxPruner::Impl::probe(std::span<const Box3> small, std::span<const Box3> large, bool small_is_a,
                            std::vector<IndexPair>& out) {
  const Layout layout = probe_layout(sample_stats(small, {}), sample_stats(large, {}), small.size());
  CellArrays& cells = sets[0];
  bucket(layout, small, cells);
  sort_cells(layout, cells);
  Box3 bounds = small.front();
  for (const Box3& b : small) {
    for (int k = 0; k < 3; ++k) {
      bounds.min[k] = std::min(bounds.min[k], b.min[k]);
      bounds.max[k] = std::max(bounds.max[k], b.max[k]);
    }
  }
  const bool filtering = occupancy.build(small, bounds);

  const std::size_t n = large.size();
  const std::size_t chunks = std::clamp<std::size_t>(n / (2 * std::size_t{grain}), 1, 64);
  const int s = layout.sweep, ka = layout.grid[0], kb = layout.grid[1];
  detail::run_ordered(tasks, chunks, outputs, out, [&](std::size_t k, std::vector<IndexPair>& found) {
    for (std::size_t i = n * k / chunks, last = n * (k + 1) / chunks; i < last; ++i) {
      const Box3& q = large[i];
      if (!overlaps(q, bounds) || (filtering && !occupancy.may_overlap(q))) continue;
      const CellRange r = cell_range(layout, q);
      const bool spans = r.a0 != r.a1 || r.b0 != r.b1;
      const CrossAxes cross = detail::prune::cross_axes(q.min[ka], q.min[kb], q.max[ka], q.max[kb]);
      const std::uint32_t min_key = float_key(q.min[s]), max_key = float_key(q.max[s]);
      const auto large_index = static_cast<std::uint32_t>(i);
      for (std::uint32_t cb = r.b0; cb <= r.b1; ++cb) {
        for (std::uint32_t ca = r.a0; ca <= r.a1; ++ca) {
          // The cell's boxes that start at or before q's max; those that also
          // end at or after q's min overlap it on the sweep axis.
          const std::uint32_t cell = cb * layout.cells_a.count + ca;
          detail::prune::scan(
              cross, max_key, cells.min_key.data(), cells.cross.data(), cells.begin(cell), [&](std::uint32_t j) {
                if (cells.max_key[j] < min_key) return;
                const std::uint32_t index = cells.index[j];
                if ((spans || (index & kSpansCells)) && !owns(layout, ca, cb, cross, cells.cross[j])) return;
                const std::uint32_t small_index = index & ~kSpansCells;
                found.push_back(small_is_a ? IndexPair{small_index, large_index} : IndexPair{large_index, small_index});
              });
        }
      }
    }
  });
}

BoxPruner::BoxPruner(TaskSystem* tasks) : impl_(new Impl) { impl_->tasks = tasks; }
BoxPruner::~BoxPruner() { delete impl_; }
BoxPruner::BoxPruner(BoxPruner&& o) noexcept : impl_(std::exchange(o.impl_, nullptr)) {}
BoxPruner& BoxPruner::operator=(BoxPruner&& o) noexcept {
  std::swap(impl_, o.impl_);
  return *this;
}

namespace {

// Halves the grid on both axes (a coarser grid copies big boxes less).
void coarsen(Layout& layout) {
  layout.cells_a.halve();
  layout.cells_b.halve();
}

}  // namespace

void BoxPruner::complete(std::span<const Box3> boxes, std::vector<IndexPair>& out) {
  if (boxes.size() < 2) return;
  Impl& m = *impl_;
  Layout layout = choose_layout(sample_stats(boxes, {}), boxes.size());
  if (m.sets[0].staged.capacity() < m.spare_staging.capacity()) m.sets[0].staged.swap(m.spare_staging);
  detail::free_storage(m.spare_staging);
  m.bucket(layout, boxes, m.sets[0]);
  // Boxes large for their cells were copied too often: coarsen and retry.
  while (layout.cell_count() > 1 && double(m.sets[0].entries()) > kMaxCopiesPerBox * double(boxes.size())) {
    coarsen(layout);
    m.bucket(layout, boxes, m.sets[0]);
  }
  m.complete_layout = layout;
  m.has_complete = true;
  m.run<false>(layout, out);
}

// Cell i of a grid axis covers [origin + i / scale, origin + (i + 1) / scale],
// its end cells open towards -inf and +inf (MonotoneBins clamps).
void BoxPruner::debug_draw(DebugDraw& draw) const {
  const Impl& m = *impl_;
  if (!m.has_complete) return;
  const Layout& l = m.complete_layout;
  constexpr float kInfinity = std::numeric_limits<float>::infinity();
  auto bound = [](const AxisCells& c, std::uint32_t i, bool upper) {
    if (c.count == 1 || (!upper && i == 0) || (upper && i + 1 == c.count)) return upper ? kInfinity : -kInfinity;
    return c.origin + static_cast<float>(upper ? i + 1 : i) / c.scale;
  };
  for (std::uint32_t a = 0; a < l.cells_a.count; ++a) {
    for (std::uint32_t b = 0; b < l.cells_b.count; ++b) {
      Box3 cell;
      cell.min[l.sweep] = -kInfinity;
      cell.max[l.sweep] = kInfinity;
      cell.min[l.grid[0]] = bound(l.cells_a, a, false);
      cell.max[l.grid[0]] = bound(l.cells_a, a, true);
      cell.min[l.grid[1]] = bound(l.cells_b, b, false);
      cell.max[l.grid[1]] = bound(l.cells_b, b, true);
      draw.box(cell, DebugCategory::kCell, kNoOwner);
    }
  }
}

void BoxPruner::bipartite(std::span<const Box3> boxes_a, std::span<const Box3> boxes_b, std::vector<IndexPair>& out) {
  if (boxes_a.empty() || boxes_b.empty()) return;
  Impl& m = *impl_;
  if (boxes_a.size() * kProbeRatio <= boxes_b.size()) return m.probe(boxes_a, boxes_b, true, out);
  if (boxes_b.size() * kProbeRatio <= boxes_a.size()) return m.probe(boxes_b, boxes_a, false, out);
  const double n = double(boxes_a.size() + boxes_b.size());
  Layout layout = choose_layout(sample_stats(boxes_a, boxes_b), boxes_a.size() + boxes_b.size());
  for (;;) {
    m.bucket(layout, boxes_a, m.sets[0]);
    m.bucket(layout, boxes_b, m.sets[1]);
    if (layout.cell_count() == 1 || double(m.sets[0].entries() + m.sets[1].entries()) <= kMaxCopiesPerBox * n) break;
    coarsen(layout);
  }
  m.run<true>(layout, out);
}

void BoxPruner::prepare(std::span<const Box3> boxes) { impl_->prepare(boxes, nullptr); }

void BoxPruner::prepare(std::span<const Box3> boxes, std::vector<IndexPair>& out) {
  if (boxes.size() < 2) return impl_->prepare(boxes, nullptr);
  impl_->prepare(boxes, &out);
}

// With `out`, each cell is swept as complete() sweeps it right after it is
// sorted, while its entries are in cache.
void BoxPruner::Impl::prepare(std::span<const Box3> boxes, std::vector<IndexPair>* out) {
  Layout layout = choose_layout(sample_stats(boxes, {}), boxes.size());
  // The staging buffer is needed only until the cells are sorted: borrow
  // bipartite()'s rather than keep one more.
  prepared.staged.swap(sets[1].staged);
  bucket(layout, boxes, prepared);
  while (layout.cell_count() > 1 && double(prepared.entries()) > kMaxCopiesPerBox * double(boxes.size())) {
    coarsen(layout);
    bucket(layout, boxes, prepared);
  }
  if (out == nullptr) {
    sort_cells(layout, prepared);
  } else {
    plan_tasks(layout, prepared, nullptr);
    detail::run_ordered(tasks, plan.size(), outputs, *out, [&](std::size_t t, std::vector<IndexPair>& found) {
      for (std::uint32_t c = plan.first(t); c < plan.end(t); ++c) {
        sort_cell(layout, prepared, c, scratch[t]);
        sweep_cell<false>(layout, c, prepared, prepared, found);
      }
    });
  }
  prepared.staged.swap(sets[1].staged);
  // A large set's staging (32 bytes an entry) is not kept for bipartite()'s
  // small second sets: at a million boxes it was a fifth of sap's memory.
  // For a framed caller it waits a frame as a spare for a complete() of as
  // many boxes (set_framed()).
  if (sets[1].staged.size() >= kKeptStagingEntries) {
    if (framed) {
      spare_staging.swap(sets[1].staged);
      spare_aged = false;
    }
    std::vector<Staged>().swap(sets[1].staged);
  }
  // Nor, for a large set, the per-task sort buffers, each sized for whole
  // cells (up to 256 tasks: 5 bytes a box at a million); the queries that
  // follow sort a few boxes a cell.
  if (boxes.size() >= kKeptStagingEntries) detail::free_storage(scratch);
  prepared_layout = layout;
  prepared_boxes = laid_out_boxes = boxes.size();
  free_entries = 0;
  laid_out_largest_cell = 0;
  for (std::uint32_t c = 0; c < layout.cell_count(); ++c) {
    laid_out_largest_cell = std::max(laid_out_largest_cell, prepared.start[c + 1] - prepared.start[c]);
  }
  measure_reach(prepared);
}

void BoxPruner::take_room(BoxPruner&& donor) noexcept {
  if (donor.impl_ == nullptr || impl_ == nullptr || donor.impl_ == impl_) return;
  donor.forget_prepared();
  Impl& mine = *impl_;
  Impl& theirs = *donor.impl_;
  std::swap(mine.tasks, theirs.tasks);
  std::swap(mine.framed, theirs.framed);
  std::swap(mine.grain, theirs.grain);
  std::swap(mine.has_complete, theirs.has_complete);  // the grid drawn is one's own complete()'s
  std::swap(mine.complete_layout, theirs.complete_layout);
  std::swap(impl_, donor.impl_);
}

void BoxPruner::set_task_grain(std::uint32_t entries) noexcept { impl_->grain = std::max<std::uint32_t>(1, entries); }

void BoxPruner::set_framed(bool framed) noexcept {
  Impl& m = *impl_;
  m.framed = framed;
  if (!framed) detail::free_storage(m.spare_staging);
}

void BoxPruner::end_frame() noexcept {
  Impl& m = *impl_;
  if (m.spare_staging.capacity() != 0 && std::exchange(m.spare_aged, true)) detail::free_storage(m.spare_staging);
}

void BoxPruner::forget_prepared() noexcept {
  Impl& m = *impl_;
  CellArrays& room = m.sets[0];
  if (room.min_key.capacity() < m.prepared.min_key.capacity()) {  // the four swept arrays are sized together
    room.min_key.swap(m.prepared.min_key);
    room.max_key.swap(m.prepared.max_key);
    room.cross.swap(m.prepared.cross);
    room.index.swap(m.prepared.index);
  }
  m.prepared = CellArrays{};
  detail::free_storage(m.prepared_reach);
  m.prepared_layout = Layout{};
  m.prepared_boxes = m.laid_out_boxes = m.free_entries = 0;
  m.laid_out_largest_cell = 0;
}

bool BoxPruner::update_prepared(std::span<const std::uint8_t> keep, std::span<const Box3> added,
                                std::vector<std::uint32_t>& indices) {
  return impl_->update_prepared(keep, added, indices);
}

// The grid stays. The added boxes, bucketed and sorted alone, are merged
// with the kept entries cell by cell in one pass over the arrays, which
// leaves the dropped entries out (below).
bool BoxPruner::Impl::update_prepared(std::span<const std::uint8_t> keep, std::span<const Box3> added,
                                      std::vector<std::uint32_t>& indices) {
  if (laid_out_boxes == 0 || keep.size() != prepared_boxes) return false;
  const Layout& layout = prepared_layout;
  const std::uint32_t cells = layout.cell_count();
  const std::size_t kept =
      static_cast<std::size_t>(std::count_if(keep.begin(), keep.end(), [](std::uint8_t k) { return k != 0; }));
  const std::size_t n = kept + added.size();
  if (2 * n < laid_out_boxes || n > 2 * laid_out_boxes) return false;  // a grid for another size
  if (std::max(keep.size(), n) >= kSpansCells) return false;
  double copies = 0;
  for (const Box3& b : added) {
    const CellRange r = cell_range(layout, b);
    copies += double(r.a1 - r.a0 + 1) * double(r.b1 - r.b0 + 1);
  }
  if (copies > kMaxCopiesPerBox * double(added.size()) + 64) return false;  // boxes large for the grid
  // The added boxes' indices: the free ones, lowest first, then new ones.
  indices.clear();
  for (std::size_t i = 0; i < keep.size() && indices.size() < added.size(); ++i) {
    if (keep[i] == 0) indices.push_back(static_cast<std::uint32_t>(i));
  }
  std::uint32_t next = static_cast<std::uint32_t>(keep.size());
  while (indices.size() < added.size()) indices.push_back(next++);
  CellArrays& fresh = sets[1];
  bucket(layout, added, fresh, indices);
  for (std::uint32_t c = 0; c < cells; ++c) {  // a crowded cell: the grid no longer fits the boxes
    const std::uint32_t most = prepared.start[c + 1] - prepared.start[c] + fresh.start[c + 1] - fresh.start[c];
    if (most > 2 * laid_out_largest_cell + 64) {
      indices.clear();
      return false;
    }
  }
  sort_cells(layout, fresh);
  merge_prepared(keep, fresh);
  prepared_boxes = next;
  free_entries = 0;  // dropped with their indices (kept 0)
  measure_reach(fresh);
  return true;
}

// Each cell becomes its kept entries and its added ones, merged by min key
// (a kept entry first at equal keys), in one forward pass over the arrays:
// an entry is read once and written once. Writing runs ahead of reading by
// the added entries merged so far less the dropped ones passed; the old
// entries a write would overwrite before they are read wait in a ring,
// grown as that lead grows (usually a few entries: drops and additions
// alternate), so that it stays in cache.
void BoxPruner::Impl::merge_prepared(std::span<const std::uint8_t> keep, const CellArrays& added) {
  CellArrays& p = prepared;
  const std::uint32_t cells = prepared_layout.cell_count();
  const std::uint32_t old_total = p.entries() + cells;  // swept positions, sentinels included
  const std::size_t most = std::size_t{old_total} + added.entries();
  if (p.min_key.size() < most) resize_swept(p, most);
  if (ring.size() < 64) ring.resize(64);
  std::size_t mask = ring.size() - 1;
  std::uint32_t* const min_key = p.min_key.data();
  std::uint32_t* const max_key = p.max_key.data();
  CrossAxes* const cross = p.cross.data();
  std::uint32_t* const index = p.index.data();
  std::uint32_t write = 0, read = 0, saved = 0;  // next position written, read, saved in the ring
  const auto old_entry = [&](std::uint32_t at) {
    return at < saved ? ring[at & mask] : SweptEntry{min_key[at], max_key[at], cross[at], index[at]};
  };
  const auto put = [&](const SweptEntry& e) {
    for (saved = std::max(saved, read); saved <= write && saved < old_total; ++saved) {
      if (saved - read == ring.size()) {  // the ring is full: twice the room, the waiting entries kept
        std::vector<SweptEntry> wider(2 * ring.size());
        for (std::uint32_t at = read; at < saved; ++at) wider[at & (wider.size() - 1)] = ring[at & mask];
        ring.swap(wider);
        mask = ring.size() - 1;
      }
      ring[saved & mask] = SweptEntry{min_key[saved], max_key[saved], cross[saved], index[saved]};
    }
    min_key[write] = e.min_key;
    max_key[write] = e.max_key;
    cross[write] = e.cross;
    index[write] = e.index;
    ++write;
  };
  new_start.resize(std::size_t{cells} + 1);
  for (std::uint32_t c = 0; c < cells; ++c) {
    const std::uint32_t end = p.end(c);
    read = p.begin(c);
    new_start[c] = write - c;
    std::uint32_t j = added.begin(c);
    const std::uint32_t j_end = added.end(c);
    for (;;) {
      SweptEntry e{};
      while (read < end && keep[(e = old_entry(read)).index & ~kSpansCells] == 0) ++read;
      if (read < end && (j == j_end || e.min_key <= added.min_key[j])) {
        ++read;
        put(e);
      } else if (j < j_end) {
        put(SweptEntry{added.min_key[j], added.max_key[j], added.cross[j], added.index[j]});
        ++j;
      } else {
        break;
      }
    }
    read = end + 1;
    put(SweptEntry{kSentinelKey, 0, CrossAxes{}, 0});
  }
  new_start[cells] = write - cells;
  p.start.swap(new_start);
  resize_swept(p, write);
}

// In-place edits of the prepared set, for a box or two at a time between
// merges (a persistent broad phase's boxes that come to rest): a box's
// entries are freed where they lie (free_prepared()), and a box joins by
// taking a free entry near where it sorts in each of its cells
// (insert_prepared()), the entries in between shifting by one. A cell stays
// sorted: a free entry keeps its min key, and a shift moves entries whose
// keys lie between the joining box's and the free entry's.

bool BoxPruner::free_prepared(std::uint32_t index, const Box3& box) { return impl_->free_prepared(index, box); }
bool BoxPruner::insert_prepared(const Box3& box, std::uint32_t& index) { return impl_->insert_prepared(box, index); }

// The position of prepared box `index`'s entry in `cell`, whose min key is
// `key`; end(cell) where there is none.
std::uint32_t BoxPruner::Impl::find_entry(std::uint32_t cell, std::uint32_t key, std::uint32_t index) const {
  const CellArrays& p = prepared;
  const std::uint32_t end = p.end(cell);
  const std::uint32_t* min_key = p.min_key.data();
  for (std::uint32_t k = first_at_least(cell, key_float(key), key); k < end && min_key[k] == key; ++k) {
    if ((p.index[k] & ~kSpansCells) == index && p.max_key[k] != kFreeMaxKey) return k;
  }
  return end;
}

void BoxPruner::Impl::put_entry(std::uint32_t at, const SweptEntry& e) {
  prepared.min_key[at] = e.min_key;
  prepared.max_key[at] = e.max_key;
  prepared.cross[at] = e.cross;
  prepared.index[at] = e.index;
}

namespace {

// The cells of `r`, cell numbers into `out`; false where there are more
// than kMaxEditCells.
bool edit_cells(const Layout& layout, const CellRange& r, std::array<std::uint32_t, kMaxEditCells>& out,
                std::uint32_t& count) {
  if (std::uint64_t{r.a1 - r.a0 + 1} * (r.b1 - r.b0 + 1) > kMaxEditCells) return false;
  count = 0;
  for (std::uint32_t cb = r.b0; cb <= r.b1; ++cb) {
    for (std::uint32_t ca = r.a0; ca <= r.a1; ++ca) out[count++] = cb * layout.cells_a.count + ca;
  }
  return true;
}

}  // namespace

// All or nothing: every cell the box touches must hold the entry.
bool BoxPruner::Impl::free_prepared(std::uint32_t index, const Box3& box) {
  if (index >= prepared_boxes) return false;
  const Layout& layout = prepared_layout;
  std::array<std::uint32_t, kMaxEditCells> cells, at;
  std::uint32_t count = 0;
  if (!edit_cells(layout, cell_range(layout, box), cells, count)) return false;
  const std::uint32_t key = float_key(box.min[layout.sweep]);
  for (std::uint32_t k = 0; k < count; ++k) {
    at[k] = find_entry(cells[k], key, index);
    if (at[k] == prepared.end(cells[k])) return false;
  }
  free_entries += count;
  for (std::uint32_t k = 0; k < count; ++k) {
    prepared.max_key[at[k]] = kFreeMaxKey;
    // Cross axes that only a box unbounded both ways on both grid axes
    // meets (then dropped by its max key).
    constexpr float kLow = -std::numeric_limits<float>::infinity();
    prepared.cross[at[k]] = CrossAxes{{kLow, kLow, kLow, kLow}};
  }
  return true;
}

// Every cell is checked first: the box joins all its cells or none. Its
// entry in a cell takes the free entry nearest to where it sorts in the
// arrays, which may be another cell's nearby (beyond the sentinel): the
// entries in between, sentinels included, then shift by one, and the
// starts of the cells in between with them. A box in several cells takes
// a different free entry for each; each edit moves the free entries the
// later ones take that lie in its shift.
bool BoxPruner::Impl::insert_prepared(const Box3& box, std::uint32_t& index) {
  if (free_entries == 0) return false;
  const Layout& layout = prepared_layout;
  std::array<std::uint32_t, kMaxEditCells> cells, free_at;
  std::uint32_t count = 0, first_sorts_at = 0;
  if (!edit_cells(layout, cell_range(layout, box), cells, count)) return false;
  const int s = layout.sweep, ka = layout.grid[0], kb = layout.grid[1];
  const std::uint32_t key = float_key(box.min[s]);
  CellArrays& c = prepared;
  const std::uint32_t positions = c.entries() + layout.cell_count();  // sentinels included
  // Where the box sorts in a cell: after the entries of equal min.
  const auto sorts_at = [&](std::uint32_t cell) { return first_at_least(cell, box.min[s], key + 1); };
  std::uint32_t reused = kSpansCells;  // no index yet
  for (std::uint32_t k = 0; k < count; ++k) {
    const std::uint32_t p = sorts_at(cells[k]);
    // A sentinel's max key reads as free: its min key tells it apart.
    const auto free = [&](std::uint32_t at) {
      return c.max_key[at] == kFreeMaxKey && c.min_key[at] != kSentinelKey &&
             std::find(free_at.begin(), free_at.begin() + k, at) == free_at.begin() + k;
    };
    std::uint32_t f = positions;
    for (std::uint32_t d = 0; d < kInsertReach && f == positions; ++d) {
      if (p + d < positions && free(p + d)) {
        f = p + d;
      } else if (p > d && free(p - 1 - d)) {
        f = p - 1 - d;
      }
    }
    if (f == positions) return false;
    if (k == 0) first_sorts_at = p;
    free_at[k] = f;
    if (reused == kSpansCells && (c.index[f] & kSpansCells) == 0) reused = c.index[f];
  }
  if (reused == kSpansCells && prepared_boxes + 1 >= kSpansCells) return false;
  index = reused != kSpansCells ? reused : static_cast<std::uint32_t>(prepared_boxes++);
  free_entries -= count;
  const SweptEntry entry{key, float_key(box.max[s]),
                         detail::prune::cross_axes(box.min[ka], box.min[kb], box.max[ka], box.max[kb]),
                         index | (count > 1 ? kSpansCells : 0)};
  const float back = rounded_up(detail::extent_of(box.min[s], box.max[s]));
  // The entries between shift by one towards the free one, overwriting it.
  const auto shift = [&](std::uint32_t from, std::uint32_t to, std::uint32_t n) {
    std::memmove(&c.min_key[to], &c.min_key[from], n * sizeof(c.min_key[0]));
    std::memmove(&c.max_key[to], &c.max_key[from], n * sizeof(c.max_key[0]));
    std::memmove(&c.cross[to], &c.cross[from], n * sizeof(c.cross[0]));
    std::memmove(&c.index[to], &c.index[from], n * sizeof(c.index[0]));
  };
  for (std::uint32_t k = 0; k < count; ++k) {
    const std::uint32_t cell = cells[k], p = k == 0 ? first_sorts_at : sorts_at(cell), f = free_at[k];
    if (f >= p) {
      std::uint32_t last = cell;  // the free entry's cell: the cells after ours up to it start one later
      while (f > c.end(last)) ++last;
      shift(p, p + 1, f - p);
      put_entry(p, entry);
      for (std::uint32_t moved = cell + 1; moved <= last; ++moved) ++c.start[moved];
      for (std::uint32_t j = k + 1; j < count; ++j) free_at[j] += free_at[j] >= p && free_at[j] < f;
    } else {
      std::uint32_t first = cell;  // the free entry's cell: the cells after it up to ours start one sooner
      while (f < c.begin(first)) --first;
      shift(f + 1, f, p - f - 1);
      put_entry(p - 1, entry);
      for (std::uint32_t moved = first + 1; moved <= cell; ++moved) --c.start[moved];
      for (std::uint32_t j = k + 1; j < count; ++j) free_at[j] -= free_at[j] > f && free_at[j] < p;
    }
    prepared_reach[cell].back = std::max(prepared_reach[cell].back, back);
  }
  return true;
}

// Where insert_prepared() first reads: the entries around the even guess
// in the box's first cell.
void BoxPruner::prefetch_insertion(const Box3& box) const noexcept {
  const Impl& m = *impl_;
  if (m.prepared_boxes == 0) return;
  const Layout& layout = m.prepared_layout;
  const CellRange r = cell_range(layout, box);
  const std::uint32_t cell = r.b0 * layout.cells_a.count + r.a0;
  const std::uint32_t at = m.even_guess(cell, box.min[layout.sweep], m.prepared.begin(cell));
  __builtin_prefetch(m.prepared.min_key.data() + at);
  __builtin_prefetch(m.prepared.max_key.data() + at);
  __builtin_prefetch(m.prepared.cross.data() + at);
  __builtin_prefetch(m.prepared.index.data() + at);
}

// The query boxes go into the prepared grid (its map clamps boxes outside
// the prepared bounds into the border cells), and each cell holding any is
// swept as in bipartite(); cells without query boxes are skipped unsorted.
bool BoxPruner::bipartite_prepared(std::span<const Box3> query, std::vector<IndexPair>& out) {
  std::vector<IndexPair> unused;
  return bipartite_prepared_impl(query, out, unused, false);
}

bool BoxPruner::bipartite_prepared(std::span<const Box3> query, std::vector<IndexPair>& out,
                                   std::vector<IndexPair>& among) {
  return bipartite_prepared_impl(query, out, among, true);
}

// Each cell holding query boxes is sorted once and swept against the
// prepared boxes, and, with `with_among`, against itself as complete()
// would (the owner rule holds in any grid).
bool BoxPruner::bipartite_prepared_impl(std::span<const Box3> query, std::vector<IndexPair>& out,
                                        std::vector<IndexPair>& among, bool with_among) {
  Impl& m = *impl_;
  if (query.empty() || (m.prepared_boxes == 0 && !with_among)) return true;
  if (m.prepared_boxes == 0) {
    complete(query, among);
    return true;
  }
  const Layout& layout = m.prepared_layout;
  double copies = 0;
  for (const Box3& q : query) {
    const CellRange r = cell_range(layout, q);
    copies += double(r.a1 - r.a0 + 1) * double(r.b1 - r.b0 + 1);
  }
  if (copies > kMaxCopiesPerBox * double(query.size()) + 64) return false;
  m.bucket(layout, query, m.sets[0]);
  const CellArrays& q = m.sets[0];
  m.plan_tasks(layout, q, &m.prepared);
  struct Outputs {
    std::vector<IndexPair>& prepared;
    std::vector<IndexPair>& among;
  } outputs{out, among};
  detail::run_ordered(
      m.tasks, m.plan.size(), m.two_outputs, outputs,
      [&](std::size_t t, auto& found) {
        TaskScratch& tmp = m.scratch[t];
        Impl::SparseSweep sparse(m, layout, q, found.prepared);
        for (std::uint32_t c = m.plan.first(t); c < m.plan.end(t); ++c) {
          if (q.start[c] == q.start[c + 1]) continue;
          m.sort_cell(layout, m.sets[0], c, tmp);
          if (m.sparse_pays(c, q.start[c + 1] - q.start[c])) {
            sparse.add(c);
          } else {
            sparse.flush();  // the pairs in cell order
            m.sweep_cell<true>(layout, c, m.sets[0], m.prepared, found.prepared);
          }
          if (with_among) m.sweep_cell<false>(layout, c, m.sets[0], m.sets[0], found.among);
        }
        sparse.flush();
      },
      [](std::span<const Impl::TwoOutputs> parts, Outputs& to) {
        for (const Impl::TwoOutputs& part : parts) {
          to.prepared.insert(to.prepared.end(), part.prepared.begin(), part.prepared.end());
          to.among.insert(to.among.end(), part.among.begin(), part.among.end());
        }
      });
  return true;
}

std::size_t BoxPruner::prepared_size() const noexcept { return impl_->prepared_boxes; }
std::size_t BoxPruner::prepared_cells() const noexcept { return impl_->prepared_layout.cell_count(); }
std::size_t BoxPruner::free_entries() const noexcept { return impl_->free_entries; }

std::size_t BoxPruner::memory_bytes() const noexcept {
  const Impl& m = *impl_;
  const auto bytes = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  std::size_t total = bytes(m.chunk_counts) + m.plan.memory_bytes() + bytes(m.occupancy.bits) + bytes(m.prepared_reach);
  for (const CellArrays* c : {&m.sets[0], &m.sets[1], &m.prepared}) {
    total +=
        bytes(c->start) + bytes(c->staged) + bytes(c->min_key) + bytes(c->max_key) + bytes(c->cross) + bytes(c->index);
  }
  total += bytes(m.spare_staging);
  for (const TaskScratch& t : m.scratch) total += bytes(t.keys) + bytes(t.spare);
  for (const Impl::TwoOutputs& o : m.two_outputs) total += bytes(o.prepared) + bytes(o.among);
  for (const std::vector<IndexPair>& o : m.outputs) total += bytes(o);
  return total;
}

void BoxPruner::release_buffers() noexcept {
  Impl& m = *impl_;
  for (CellArrays& c : m.sets) c = CellArrays{};
  detail::free_storage(m.chunk_counts);
  detail::free_storage(m.scratch);
  detail::free_storage(m.outputs);
  detail::free_storage(m.two_outputs);
  detail::free_storage(m.occupancy.bits);
  detail::free_storage(m.spare_staging);
}

void complete_pairs(std::span<const Box3> boxes, std::vector<IndexPair>& out) {
  thread_local BoxPruner pruner;
  pruner.complete(boxes, out);
}

void bipartite_pairs(std::span<const Box3> boxes_a, std::span<const Box3> boxes_b, std::vector<IndexPair>& out) {
  thread_local BoxPruner pruner;
  pruner.bipartite(boxes_a, boxes_b, out);
}

namespace detail {
namespace {

class BoxPruningOneShot final : public OneShotComplete, public PrunerHolder {
 public:
  explicit BoxPruningOneShot(const Options& options) : tasks_(options), pruner_(tasks_.get()) {}

  BoxPruner& pruner() noexcept override { return pruner_; }

  void complete(std::span<const Box3> boxes, std::vector<IndexPair>& out) override { pruner_.complete(boxes, out); }
  void debug_draw(DebugDraw& draw) const override { pruner_.debug_draw(draw); }
  std::size_t memory_bytes() const override { return pruner_.memory_bytes(); }

 private:
  OptionTasks tasks_;
  BoxPruner pruner_;
};

}  // namespace

std::unique_ptr<Algorithm> make_box_pruning(const Options& options) {
  no_settings(options);
  return make_recompute(std::make_unique<BoxPruningOneShot>(options));
}

}  // namespace detail
}  // namespace sapling
