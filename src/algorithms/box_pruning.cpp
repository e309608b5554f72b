// Box pruning, complete and bipartite (box_pruning.hpp; Terdiman 2007, I.4c
// and appendix A). The steps of one call:
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
#include "sapling/box_pruning.hpp"

#include <emmintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "algorithms/builtin.hpp"
#include "algorithms/prune_loop.hpp"
#include "sapling/float_key.hpp"

namespace sapling {
namespace {

using prune::CrossAxes;

// Sentinel key: above the key of every non-NaN float, +inf included, so the
// prune loop needs no bounds check (Terdiman 2007, appendix B).
constexpr std::uint32_t kSentinelKey = 0xffffffffu;
static_assert(float_key(std::numeric_limits<float>::infinity()) < kSentinelKey);

// Marks an entry whose box lies in more than one cell: only its pairs need
// the owner test.
constexpr std::uint32_t kSpansCells = 0x80000000u;

// Below this many boxes the grid does not pay for its analysis.
constexpr std::size_t kGridMinBoxes = 2048;
// Mean number of sweep candidates per box the grid aims for.
constexpr double kTargetCandidates = 6.0;
// Smallest cell, in mean box extents: keeps boxes in one cell mostly.
constexpr double kMinCellExtents = 6.0;
// Coarsen the grid when boxes are copied into more cells than this, on average.
constexpr double kMaxCopiesPerBox = 1.6;
constexpr std::uint32_t kMaxCellsPerAxis = 1024;

// A monotone map from a coordinate to a cell index along one axis: any
// rounding keeps it non-decreasing, which is all exactness needs.
struct AxisCells {
  float origin = 0.0f;
  float inv_size = 0.0f;
  float last = 0.0f;  // count - 1
  std::uint32_t count = 1;

  std::uint32_t operator()(float x) const {
    if (count == 1) return 0;  // also keeps inf * 0 out
    // inv_size > 0 is finite and origin finite, so t is never NaN; the
    // clamp also maps -inf and +inf to the end cells.
    const float t = std::min(std::max((x - origin) * inv_size, 0.0f), last);
    return static_cast<std::uint32_t>(t);
  }
};

struct Layout {
  int sweep = 0;                  // sweep axis
  std::array<int, 2> grid{1, 2};  // the other two axes: a, b
  AxisCells cells_a, cells_b;
  std::uint32_t cell_count() const { return cells_a.count * cells_b.count; }
};

struct Stats {
  double mean_centre[3]{}, var_centre[3]{}, mean_extent[3]{};
  float lo[3]{}, hi[3]{};
  std::size_t finite = 0;
};

void accumulate(Stats& st, std::span<const Box3> boxes, std::size_t stride, double (&sum)[3], double (&sum2)[3],
                double (&ext)[3]) {
  for (std::size_t i = 0; i < boxes.size(); i += stride) {
    const Box3& b = boxes[i];
    bool finite = true;
    for (int k = 0; k < 3; ++k) finite = finite && std::isfinite(b.min[k]) && std::isfinite(b.max[k]);
    if (!finite) continue;
    for (int k = 0; k < 3; ++k) {
      const float c = 0.5f * b.min[k] + 0.5f * b.max[k];
      if (st.finite == 0) st.lo[k] = st.hi[k] = c;
      st.lo[k] = std::min(st.lo[k], c);
      st.hi[k] = std::max(st.hi[k], c);
      sum[k] += c;
      sum2[k] += double(c) * c;
      ext[k] += double(b.max[k]) - b.min[k];
    }
    ++st.finite;
  }
}

Stats sample_stats(std::span<const Box3> a, std::span<const Box3> b) {
  Stats st;
  double sum[3]{}, sum2[3]{}, ext[3]{};
  const std::size_t n = a.size() + b.size();
  const std::size_t stride = std::max<std::size_t>(1, n / 8192);
  accumulate(st, a, stride, sum, sum2, ext);
  accumulate(st, b, stride, sum, sum2, ext);
  if (st.finite == 0) return st;
  for (int k = 0; k < 3; ++k) {
    st.mean_centre[k] = sum[k] / double(st.finite);
    st.var_centre[k] = std::max(0.0, sum2[k] / double(st.finite) - st.mean_centre[k] * st.mean_centre[k]);
    st.mean_extent[k] = ext[k] / double(st.finite);
  }
  return st;
}

AxisCells axis_cells(const Stats& st, int axis, std::uint32_t count) {
  AxisCells c;
  const double span = double(st.hi[axis]) - st.lo[axis];
  if (count <= 1 || !(span > 0)) return c;
  c.count = count;
  c.last = static_cast<float>(count - 1);
  c.origin = st.lo[axis];
  c.inv_size = static_cast<float>(count / span);
  return c;
}

// Chooses the sweep axis and the grid from the statistics of a sample.
Layout choose_layout(const Stats& st, std::size_t n) {
  Layout layout;
  if (st.finite == 0) return layout;
  int s = 0;
  for (int k = 1; k < 3; ++k) {
    if (st.var_centre[k] > st.var_centre[s]) s = k;
  }
  layout.sweep = s;
  layout.grid = {s == 0 ? 1 : 0, s == 2 ? 1 : 2};
  if (n < kGridMinBoxes) return layout;

  // Candidates per box of a single sweep: n times the chance that two
  // intervals on the sweep axis meet, (extent_i + extent_j) / spread.
  const double spread_s = double(st.hi[s]) - st.lo[s] + st.mean_extent[s];
  const double candidates = double(n) * std::min(1.0, 2.0 * st.mean_extent[s] / std::max(spread_s, 1e-30));
  const double cells_wanted = std::clamp(candidates / kTargetCandidates, 1.0, double(n) / 8.0);
  std::array<double, 2> most{};  // most cells along each grid axis
  std::array<double, 2> ratio{};
  for (int g = 0; g < 2; ++g) {
    const int k = layout.grid[g];
    const double spread = double(st.hi[k]) - st.lo[k];
    const double extent = std::max(st.mean_extent[k], spread * 1e-6);
    most[g] = spread > 0 ? std::clamp(spread / (kMinCellExtents * extent), 1.0, double(kMaxCellsPerAxis)) : 1.0;
    ratio[g] = most[g];
  }
  // Split the cells between the two axes in proportion to their room.
  double ga = std::sqrt(cells_wanted * ratio[0] / ratio[1]);
  ga = std::clamp(ga, 1.0, most[0]);
  double gb = std::clamp(cells_wanted / ga, 1.0, most[1]);
  ga = std::clamp(cells_wanted / gb, 1.0, most[0]);
  layout.cells_a = axis_cells(st, layout.grid[0], static_cast<std::uint32_t>(ga));
  layout.cells_b = axis_cells(st, layout.grid[1], static_cast<std::uint32_t>(gb));
  return layout;
}

// LSD radix sort of (key << 32 | position) by key, 8-bit digits: O(n),
// stable, so equal keys keep position order (the order is deterministic).
// Digits in which all items agree are skipped.
void radix_sort(std::vector<std::uint64_t>& items, std::vector<std::uint64_t>& scratch) {
  constexpr int kBuckets = 256;
  std::array<std::array<std::uint32_t, kBuckets>, 4> counts{};
  for (const std::uint64_t x : items) {
    for (int d = 0; d < 4; ++d) ++counts[d][(x >> (32 + 8 * d)) & 0xff];
  }
  scratch.resize(items.size());
  for (int d = 0; d < 4; ++d) {
    std::array<std::uint32_t, kBuckets>& c = counts[d];
    if (std::count(c.begin(), c.end(), 0u) == kBuckets - 1) continue;
    std::uint32_t sum = 0;
    for (std::uint32_t& v : c) sum += std::exchange(v, sum);
    const int shift = 32 + 8 * d;
    for (const std::uint64_t x : items) scratch[c[(x >> shift) & 0xff]++] = x;
    items.swap(scratch);
  }
}

// A box as bucketed into a cell, before the cell is sorted.
struct Staged {
  std::uint32_t min_key, max_key;
  std::uint32_t index;  // box index | kSpansCells
  std::uint32_t unused;
  CrossAxes cross;
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

struct TaskScratch {
  std::vector<std::uint64_t> keys, spare;
  std::vector<IndexPair> out;
};

struct BoxPruner::Impl {
  TaskSystem* tasks = nullptr;
  std::array<CellArrays, 2> sets;
  std::vector<std::uint32_t> chunk_counts;  // [chunk][cell] entries, then offsets
  std::vector<std::uint32_t> task_begin;    // first cell of each task
  std::vector<TaskScratch> scratch;

  template <class Task>
  void parallel(std::size_t count, Task&& task) {
    if (tasks && count > 1) {
      tasks->run(count, TaskRef(task));
    } else {
      for (std::size_t t = 0; t < count; ++t) task(t);
    }
  }
  void bucket(const Layout& layout, std::span<const Box3> boxes, CellArrays& cells);
  void sort_cell(const Layout& layout, CellArrays& cells, std::uint32_t cell, TaskScratch& tmp);
  void plan_tasks(const Layout& layout, std::size_t sets_used);
  void collect(std::vector<IndexPair>& out);
  template <bool kBipartite>
  void sweep_cell(const Layout& layout, std::uint32_t cell, std::vector<IndexPair>& out) const;
  template <bool kBipartite>
  void run(const Layout& layout, std::vector<IndexPair>& out);
};

namespace {

inline CellRange cell_range(const Layout& layout, const Box3& b) {
  const int ka = layout.grid[0], kb = layout.grid[1];
  return {layout.cells_a(b.min[ka]), layout.cells_a(b.max[ka]), layout.cells_b(b.min[kb]), layout.cells_b(b.max[kb])};
}

}  // namespace

// Counting sort of the boxes into cells, in parallel over fixed chunks of
// boxes: each chunk counts its entries per cell, offsets are laid out cell
// by cell and chunk by chunk, so every cell receives its boxes in index
// order whatever the number of threads.
void BoxPruner::Impl::bucket(const Layout& layout, std::span<const Box3> boxes, CellArrays& c) {
  const std::uint32_t cells = layout.cell_count();
  const std::size_t n = boxes.size();
  const std::size_t chunks = std::clamp<std::size_t>(n / 32768, 1, 16);
  auto chunk_of = [&](std::size_t k) { return std::pair{n * k / chunks, n * (k + 1) / chunks}; };
  chunk_counts.assign(chunks * cells, 0);
  parallel(chunks, [&](std::size_t k) {
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
  c.staged.resize(total);
  const int s = layout.sweep, ka = layout.grid[0], kb = layout.grid[1];
  parallel(chunks, [&](std::size_t k) {
    std::uint32_t* cursor = &chunk_counts[k * cells];
    const auto [first, last] = chunk_of(k);
    for (std::size_t i = first; i < last; ++i) {
      const Box3& b = boxes[i];
      const CellRange r = cell_range(layout, b);
      const std::uint32_t tag = (r.a0 != r.a1 || r.b0 != r.b1) ? kSpansCells : 0;
      const Staged e{float_key(b.min[s]), float_key(b.max[s]), static_cast<std::uint32_t>(i) | tag, 0,
                     prune::cross_axes(b.min[ka], b.min[kb], b.max[ka], b.max[kb])};
      for (std::uint32_t cb = r.b0; cb <= r.b1; ++cb)
        for (std::uint32_t ca = r.a0; ca <= r.a1; ++ca) c.staged[cursor[cb * layout.cells_a.count + ca]++] = e;
    }
  });
  const std::size_t swept = std::size_t{total} + cells;
  c.min_key.resize(swept);
  c.max_key.resize(swept);
  c.cross.resize(swept);
  c.index.resize(swept);
}

// Sorts one cell's entries by min key (ties: box index, from the bucketing
// order) into the swept arrays, and closes the cell with its sentinel.
void BoxPruner::Impl::sort_cell(const Layout&, CellArrays& c, std::uint32_t cell, TaskScratch& tmp) {
  const std::uint32_t first = c.start[cell], count = c.start[cell + 1] - first;
  tmp.keys.resize(count);
  for (std::uint32_t k = 0; k < count; ++k) tmp.keys[k] = (std::uint64_t{c.staged[first + k].min_key} << 32) | k;
  radix_sort(tmp.keys, tmp.spare);
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

// Splits the cells into tasks of similar entry counts. The split depends on
// the input only, never on the thread count, so results are combined in the
// same order whatever runs them.
void BoxPruner::Impl::plan_tasks(const Layout& layout, std::size_t sets_used) {
  const std::uint32_t cells = layout.cell_count();
  auto entries_before = [&](std::uint32_t cell) {
    std::uint64_t e = 0;
    for (std::size_t k = 0; k < sets_used; ++k) e += sets[k].start[cell];
    return e;
  };
  const std::uint64_t total = entries_before(cells);
  const std::size_t wanted = std::clamp<std::size_t>(total / 8192, 1, 256);
  task_begin.clear();
  task_begin.push_back(0);
  for (std::uint32_t k = 1; k < cells && task_begin.size() < wanted; ++k) {
    if (entries_before(k) * wanted >= total * task_begin.size()) task_begin.push_back(k);
  }
  task_begin.push_back(cells);
  const std::size_t count = task_begin.size() - 1;
  if (scratch.size() < count) scratch.resize(count);
  for (std::size_t t = 0; t < count; ++t) scratch[t].out.clear();
}

void BoxPruner::Impl::collect(std::vector<IndexPair>& out) {
  const std::size_t count = task_begin.size() - 1;
  std::size_t total = out.size();
  for (std::size_t t = 0; t < count; ++t) total += scratch[t].out.size();
  out.reserve(total);
  for (std::size_t t = 0; t < count; ++t) out.insert(out.end(), scratch[t].out.begin(), scratch[t].out.end());
}

template <bool kBipartite>
void BoxPruner::Impl::run(const Layout& layout, std::vector<IndexPair>& out) {
  plan_tasks(layout, kBipartite ? 2 : 1);
  parallel(task_begin.size() - 1, [&](std::size_t t) {
    TaskScratch& tmp = scratch[t];
    for (std::uint32_t c = task_begin[t]; c < task_begin[t + 1]; ++c) {
      sort_cell(layout, sets[0], c, tmp);
      if constexpr (kBipartite) sort_cell(layout, sets[1], c, tmp);
      sweep_cell<kBipartite>(layout, c, tmp.out);
    }
  });
  collect(out);
}

// The prune loop of one cell. A pair of entries that passes the sweep and
// cross-axis tests overlaps; it is reported here unless one of its boxes
// spans several cells and another cell owns the pair: the owner is the cell
// of the low corner of the overlap, (max of mins) on the grid axes, which
// both boxes touch.
template <bool kBipartite>
void BoxPruner::Impl::sweep_cell(const Layout& layout, std::uint32_t cell, std::vector<IndexPair>& out) const {
  const std::uint32_t ca = cell % layout.cells_a.count, cb = cell / layout.cells_a.count;
  auto owned = [&](const CrossAxes& p, const CrossAxes& q) {
    return layout.cells_a(std::max(prune::min_a(p), prune::min_a(q))) == ca &&
           layout.cells_b(std::max(prune::min_b(p), prune::min_b(q))) == cb;
  };
  auto emit = [&](const CellArrays& x, std::uint32_t i, const CellArrays& y, std::uint32_t j) {
    const std::uint32_t ix = x.index[i], iy = y.index[j];
    if (((ix | iy) & kSpansCells) && !owned(x.cross[i], y.cross[j])) return;
    const std::uint32_t p = ix & ~kSpansCells, q = iy & ~kSpansCells;
    if constexpr (kBipartite) {
      out.push_back(&x == &sets[0] ? IndexPair{p, q} : IndexPair{q, p});
    } else {
      out.push_back(p < q ? IndexPair{p, q} : IndexPair{q, p});
    }
  };
  // Scans y from `from` while y's min is not past x's max.
  auto prune = [&](const CellArrays& x, std::uint32_t i, const CellArrays& y, std::uint32_t from) {
    prune::scan(x.cross[i], x.max_key[i], y.min_key.data(), y.cross.data(), from,
                [&](std::uint32_t j) { emit(x, i, y, j); });
  };

  const CellArrays& a = sets[0];
  if constexpr (!kBipartite) {
    for (std::uint32_t i = a.begin(cell), end = a.end(cell); i < end; ++i) prune(a, i, a, i + 1);
  } else {
    // Terdiman's bipartite pruning: each box of one set scans the boxes of
    // the other set that start at or after it; ties on the min go to the
    // first loop only (< versus <=), so no pair is found twice.
    const CellArrays& b = sets[1];
    const std::uint32_t a_end = a.end(cell), b_end = b.end(cell);
    std::uint32_t j = b.begin(cell);
    for (std::uint32_t i = a.begin(cell); i < a_end; ++i) {
      while (j < b_end && b.min_key[j] < a.min_key[i]) ++j;
      prune(a, i, b, j);
    }
    std::uint32_t k = a.begin(cell);
    for (std::uint32_t i = b.begin(cell); i < b_end; ++i) {
      while (k < a_end && a.min_key[k] <= b.min_key[i]) ++k;
      prune(b, i, a, k);
    }
  }
}

BoxPruner::BoxPruner(TaskSystem* tasks) : impl_(new Impl) { impl_->tasks = tasks; }
BoxPruner::~BoxPruner() { delete impl_; }
BoxPruner::BoxPruner(BoxPruner&& o) noexcept : impl_(std::exchange(o.impl_, nullptr)) {}
BoxPruner& BoxPruner::operator=(BoxPruner&& o) noexcept {
  std::swap(impl_, o.impl_);
  return *this;
}
TaskSystem* BoxPruner::tasks() const noexcept { return impl_->tasks; }

namespace {

// Halves the grid on both axes (a coarser grid copies big boxes less).
void coarsen(Layout& layout) {
  for (AxisCells* cells : {&layout.cells_a, &layout.cells_b}) {
    if (cells->count <= 1) continue;
    cells->inv_size *= float(cells->count / 2) / float(cells->count);
    cells->count /= 2;
    cells->last = float(cells->count - 1);
    if (cells->count == 1) *cells = AxisCells{};
  }
}

}  // namespace

void BoxPruner::complete(std::span<const Box3> boxes, std::vector<IndexPair>& out) {
  if (boxes.size() < 2) return;
  Impl& m = *impl_;
  Layout layout = choose_layout(sample_stats(boxes, {}), boxes.size());
  m.bucket(layout, boxes, m.sets[0]);
  // Boxes large for their cells were copied too often: coarsen and retry.
  while (layout.cell_count() > 1 && double(m.sets[0].entries()) > kMaxCopiesPerBox * double(boxes.size())) {
    coarsen(layout);
    m.bucket(layout, boxes, m.sets[0]);
  }
  m.run<false>(layout, out);
}

void BoxPruner::bipartite(std::span<const Box3> boxes_a, std::span<const Box3> boxes_b, std::vector<IndexPair>& out) {
  if (boxes_a.empty() || boxes_b.empty()) return;
  Impl& m = *impl_;
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

void complete_pairs(std::span<const Box3> boxes, std::vector<IndexPair>& out) {
  thread_local BoxPruner pruner;
  pruner.complete(boxes, out);
}

void bipartite_pairs(std::span<const Box3> boxes_a, std::span<const Box3> boxes_b, std::vector<IndexPair>& out) {
  thread_local BoxPruner pruner;
  pruner.bipartite(boxes_a, boxes_b, out);
}

namespace builtin {
namespace {

class BoxPruningOneShot final : public OneShotComplete {
 public:
  explicit BoxPruningOneShot(const Options& options)
      : pool_(options.tasks == nullptr && options.threads != 1 ? std::make_unique<ThreadPool>(options.threads)
                                                               : nullptr),
        pruner_(options.tasks != nullptr ? options.tasks : pool_.get()) {}

  void find_pairs(std::span<const Box3> boxes, std::vector<IndexPair>& out) override { pruner_.complete(boxes, out); }

 private:
  std::unique_ptr<ThreadPool> pool_;
  BoxPruner pruner_;
};

}  // namespace

std::unique_ptr<Algorithm> make_box_pruning(const Options& options) {
  return make_recompute(std::make_unique<BoxPruningOneShot>(options));
}

}  // namespace builtin
}  // namespace sapling
