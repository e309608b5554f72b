// dual-axis: a sweep and prune on two axes at once for boxes of any size,
// the general method that Capannini and Larsson's unisize algorithm
// specialises ("Efficient collision culling by a succinct bi-dimensional
// sweep and prune algorithm", SCCG 2016). That paper was not available to
// us; this is our design in its spirit (shared/NOTES-algorithms.md, "general
// boxes"), exact for every valid box, infinite ones included.
//
// One sweep per cell of a grid: boxes in order of x.min, the set S of boxes
// met so far kept by rank on y in a range bitmap (range_bitmap.hpp), a range
// query on y ranks per box, and the third axis t tested per candidate. Per
// frame, from scratch (made persistent by make_recompute):
//   1. plan from a sample: t the axis of least spread, x of most; a box is
//      regular when its y extent is at most a cap, else an outlier;
//   2. grid: slabs on t (one in flat worlds), strips on x; every box copied
//      into each cell it touches; own entries start in the cell's strip;
//   3. per cell, counting sorts by monotone bins: own entries by x.min,
//      regular entries by y.min (their ranks);
//   4. sweep: each own entry a walks S's ranks from the bin of a.y.min - W
//      (W the cell's widest regular y extent) to that of a.y.max, tests each
//      visited box exactly on all three axes, then scans the outliers met
//      so far. Cells run in parallel, pairs appended in cell order.
// Invariants:
// - any regular b meeting a on y has b.y.min >= b.y.max - W >= a.y.min - W,
//   so the widened walk misses no pair; the exact test adds none;
// - a box whose x.max is below the sweep line (the least x.min of the
//   current bin) can meet no later entry and leaves S when visited;
// - a pair is reported only by the cell of (strip of the larger x.min, slab
//   of the larger t.min), which holds both boxes: once, on any thread count;
// - every bin map is non-decreasing under rounding, infinities clamped to
//   the end bins; fewer than 2^31 boxes.
//
// Cost: O(n + copies) to bucket and sort, O(bins) per cell, and per own
// entry O(1 + range walked / 64 + visits): in 2D and flat 3D about the pairs
// plus the outliers met. 32 bytes per copy plus one cell's arrays.
//
// Choose it for flat worlds (2D, or 3D boxes spread over two axes) with
// boxes of any sizes, where it beats box pruning; unisize when all boxes
// have one size; box-pruning on sparse, fully 3D scenes.
// The steps in full, tuning and measurements: docs/algorithms/dual-axis.md.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#if !defined(SAPLING_SCALAR) && defined(__SSE2__)
#define SAPLING_DUAL_SSE2 1
#include <emmintrin.h>
#endif

#include "algorithms/builtin.hpp"
#include "algorithms/dual_axis/range_bitmap.hpp"
#include "detail/axis_sampler.hpp"
#include "detail/monotone_bins.hpp"
#include "detail/scratch_pool.hpp"
#include "detail/settings.hpp"
#include "detail/task_plan.hpp"

namespace sapling::detail {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Below this many boxes one cell serves: the grid would not pay.
constexpr std::size_t kGridMinBoxes = 4096;
// Entries per cell the grid aims for: a cell's arrays stay in L2.
constexpr double kCellEntries = 8192;
// Most strips in a flat world (no slabs): beyond 2^18 boxes, cells grow
// rather than multiply; fewer cells scatter faster and have fewer
// straddlers. Measured: docs/algorithms/dual-axis.md, "Tuning".
constexpr double kMaxFlatStrips = 32;
// The same with slabs on t, measured best smaller: more of a 3D cell's
// ranks lie in any y range, so its queries walk longer ranges of S.
constexpr double kSlabCellEntries = 4096;
// Slab thickness on t, in mean t extents: thin enough that most pairs
// meeting on x and y also meet on t, thick enough that few boxes are copied.
constexpr double kSlabExtents = 4;
// Fewest boxes per slab: below, the cells cost more than the t tests they save.
constexpr double kMinSlabBoxes = 1024;
// Coarsen the grid when boxes are copied into more cells than this, on average.
constexpr double kMaxCopiesPerBox = 1.6;
constexpr std::uint32_t kMaxCellsPerAxis = 1024;
// Most fine bins per axis in a cell: keeps the float bin map's error far
// below a bin (see sweep_cell).
constexpr std::uint32_t kMaxFineBins = std::uint32_t{1} << 20;
// Mean entries per fine bin of a cell: coarser bins make the counting sorts'
// arrays smaller at the price of a later sweep line and longer ranges of S
// (measured best around these values on the benchmark scenes).
constexpr std::uint32_t kOwnPerXBin = 4;
constexpr std::uint32_t kRanksPerYBin = 2;

// Entry flags.
constexpr std::uint32_t kStraddler = 1;  // starts in an earlier strip on x
constexpr std::uint32_t kSpansT = 2;     // lies in more than one slab on t
constexpr std::uint32_t kOutlier = 4;    // y extent above the cap
// A stored box's index carries kSpansT in its top bit.
constexpr std::uint32_t kSpanBit = 0x80000000u;

using Axes = detail::AxisRoles;

// Sampled statistics: the axes, the cap on regular y extents, and per axis
// the range of the centres and the mean extent.
struct Plan {
  Axes axes;
  double cap = 0;
  std::array<double, 3> lo{}, hi{}, mean{};
  std::size_t finite = 0;
};

// `extents`: scratch for the sampled extents (kept to avoid allocating).
Plan make_plan(std::span<const Box3> boxes, std::array<std::vector<double>, 3>& extents) {
  Plan plan;
  for (std::vector<double>& e : extents) e.clear();
  detail::AxisSample sample;
  detail::add_sample<detail::SamplePoint::kCentre, detail::kExtentSums>(
      sample, boxes, detail::sample_stride(boxes.size(), 4096), &extents);
  plan.lo = sample.lo;
  plan.hi = sample.hi;
  plan.finite = sample.count;
  if (plan.finite == 0) {
    plan.cap = std::numeric_limits<double>::max();
    return plan;
  }
  // Spread in units of the mean extent: along t most pairs overlap.
  for (int k = 0; k < 3; ++k) plan.mean[k] = sample.mean_extent(k);
  plan.axes = detail::axis_roles(sample, plan.mean);
  std::vector<double>& e = extents[plan.axes.y];
  const std::size_t q = e.size() * 9 / 10;
  std::nth_element(e.begin(), e.begin() + q, e.end());
  plan.cap = 2 * e[q];
  return plan;
}

// Bins of equal width along one axis (monotone_bins.hpp).
using Bins = detail::MonotoneBins;

// Strips on x holding about equal numbers of boxes, however the boxes
// cluster. Strips of equal width serve while the sample fills them evenly
// enough; otherwise a uniform fine map's bins are grouped into strips by the
// cumulative counts of a sample of x.min. The grouping is non-decreasing, so
// the strip of a coordinate stays a monotone function of it either way.
class StripMap {
 public:
  std::uint32_t count = 1;

  std::uint32_t operator()(float v) const { return grouped_ ? table_[fine_(v)] : even_(v); }
  std::size_t memory_bytes() const noexcept { return table_.capacity() * sizeof(std::uint32_t); }

  // `strips` strips over centres in [lo, hi] on `axis`.
  void build(std::span<const Box3> boxes, int axis, double lo, double hi, std::uint32_t strips) {
    even_ = Bins::over(lo, hi, strips);
    count = even_.count;
    grouped_ = false;
    fine_ = Bins::over(lo, hi, strips * kFinePerStrip);
    if (count == 1 || fine_.count != strips * kFinePerStrip) return;
    table_.assign(fine_.count, 0);  // first a histogram of the sample
    const std::size_t stride = detail::sample_stride(boxes.size(), kSample);
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < boxes.size(); i += stride) {
      const float v = boxes[i].min[axis];
      if (!std::isfinite(v)) continue;
      ++table_[fine_(v)];
      ++total;
    }
    // The fullest strip of equal width against the mean.
    std::uint64_t fullest = 0;
    for (std::uint32_t k = 0; k < strips; ++k) {
      std::uint64_t c = 0;
      for (std::uint32_t f = k * kFinePerStrip; f < (k + 1) * kFinePerStrip; ++f) c += table_[f];
      fullest = std::max(fullest, c);
    }
    if (total == 0 || double(fullest) <= kMaxFill * double(total) / strips) return;
    std::uint64_t before = 0;
    for (std::uint32_t& t : table_) {
      const std::uint32_t c = t;
      t = static_cast<std::uint32_t>(std::min<std::uint64_t>(strips - 1, before * strips / total));
      before += c;
    }
    grouped_ = true;
  }

  // Halves the number of strips (a coarser grid copies long boxes less).
  void halve() {
    if (count <= 1) return;
    if (!grouped_) {
      even_.halve();
      count = even_.count;
      return;
    }
    count = (count + 1) / 2;
    for (std::uint32_t& t : table_) t /= 2;
    if (count == 1) grouped_ = false, even_ = Bins{};
  }

 private:
  static constexpr std::uint32_t kFinePerStrip = 64;
  static constexpr std::size_t kSample = 8192;
  // Strips of equal width serve while none holds more than this times the mean.
  static constexpr double kMaxFill = 1.5;
  Bins even_, fine_;
  bool grouped_ = false;
  std::vector<std::uint32_t> table_;  // fine bin -> strip
};

// A box as copied into a cell, in the roles of the axes.
struct Entry {
  float x_min, y_min, t_min, x_max, y_max, t_max;
  std::uint32_t index;
  std::uint32_t flags;
};

// A stored box in the form the SIMD test wants, (x_max, y_max, t_max, 0,
// -x_min, -y_min, -t_min, +inf); a query box is (x_min, y_min, t_min, 0,
// -x_max, -y_max, -t_max, line), and the two overlap iff query <= stored in
// every lane. Negation is exact, infinities included; the last lane carries
// the query's sweep line along, and always passes.
struct alignas(16) Cand {
  float v[8];
};

inline Cand query_form(const Entry& e, float line) {
  return {{e.x_min, e.y_min, e.t_min, 0, -e.x_max, -e.y_max, -e.t_max, line}};
}
inline Cand stored_form(const Entry& e) { return {{e.x_max, e.y_max, e.t_max, 0, -e.x_min, -e.y_min, -e.t_min, kInf}}; }
// The stored form after a cell's last rank: below every query in no lane, so it overlaps nothing.
inline Cand sentinel_form() { return {{-kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf}}; }

// The lanes the sweep reads, by name (as prune_loop.hpp names its own).
inline float query_t_min(const Cand& q) { return q.v[2]; }
inline float query_line(const Cand& q) { return q.v[7]; }
inline float stored_x_max(const Cand& c) { return c.v[0]; }
inline float stored_t_min(const Cand& c) { return -c.v[6]; }

// The stored form of a query form.
inline Cand stored_of(const Cand& q) {
  Cand c;
#if defined(SAPLING_DUAL_SSE2)
  const __m128 sign = _mm_set1_ps(-0.0f);
  // Lane 3 cleared; lane 7 cleared, then +inf (whole-vector stores only:
  // a later 16-byte load of the entry is forwarded from them).
  const __m128 keep3 = _mm_castsi128_ps(_mm_set_epi32(0, -1, -1, -1));
  const __m128 inf7 = _mm_set_ps(kInf, 0, 0, 0);
  _mm_store_ps(c.v, _mm_and_ps(_mm_xor_ps(_mm_load_ps(q.v + 4), sign), keep3));
  _mm_store_ps(c.v + 4, _mm_or_ps(_mm_and_ps(_mm_xor_ps(_mm_load_ps(q.v), sign), keep3), inf7));
#else
  for (int k = 0; k < 4; ++k) c.v[k] = -q.v[k + 4], c.v[k + 4] = -q.v[k];
  c.v[3] = 0;
  c.v[7] = kInf;
#endif
  return c;
}

inline bool overlap(const Cand& q, const Cand& c) {
#if defined(SAPLING_DUAL_SSE2)
  const __m128 lo = _mm_cmple_ps(_mm_load_ps(q.v), _mm_load_ps(c.v));
  const __m128 hi = _mm_cmple_ps(_mm_load_ps(q.v + 4), _mm_load_ps(c.v + 4));
  return _mm_movemask_ps(_mm_and_ps(lo, hi)) == 0xf;
#else
  bool ok = true;
  for (int k = 0; k < 8; ++k) ok &= q.v[k] <= c.v[k];
  return ok;
#endif
}

// What the sweep of a cell needs of its entries, gathered while bucketing.
struct CellStats {
  float x_lo, x_hi;  // finite x.min of the cell's own entries
  float y_lo, y_hi;  // y.min of its regular entries
  double widest;     // the largest y extent of its regular entries
  std::uint32_t own, regular;
};

class DualAxisSweep final : public OneShotComplete {
 public:
  explicit DualAxisSweep(const Options& options) : tasks_(options) {}
  void complete(std::span<const Box3> boxes, std::vector<IndexPair>& out) override;
  std::size_t memory_bytes() const override;

 private:
  struct Outlier {
    Cand c;
    std::uint32_t index;  // with kSpanBit
  };
  // An entry of a cell in sweep order, with what its query needs.
  struct Query {
    Cand q;                // query_form(), with the sweep line: a lower bound of x.min of this and every later entry
    std::uint32_t lo, hi;  // own: the y ranks to walk
    std::uint32_t rank;    // y rank, or kNoRank for an outlier
    std::uint32_t index;   // with kSpanBit
  };
  static constexpr std::uint32_t kNoRank = ~std::uint32_t{0};
  // A candidate that passed: the stored rank and the query's index and t.min.
  struct Hit {
    std::uint32_t rank, index;
    float t_min;
  };
  // Flushed when two slots or fewer are left: a step pair adds at most two.
  static constexpr std::uint32_t kHitBuffer = 256;
  // Ranges of S up to this long are walked by windows of 64 ranks; longer
  // ones with the bitmap's summary, which skips empty stretches.
  static constexpr std::uint32_t kWindowedRange = 256;

  // Parallel sweeps: a task takes consecutive cells of about kTaskEntries
  // entries, and there are at most kMaxTasks.
  static constexpr std::uint32_t kTaskEntries = 16384, kMaxTasks = 256;

  // One cell's sweep: one set per task running (ScratchPool).
  struct CellArrays {
    std::vector<std::uint32_t> x_start, y_start, y_next;  // per fine bin
    std::vector<float> x_line;                            // per fine x bin: its least x.min
    std::vector<Query> queries;                           // the cell's entries in sweep order
    std::vector<Cand> stored;                             // by y rank
    std::vector<std::uint32_t> stored_index;              // by y rank, with kSpanBit
    std::array<Hit, kHitBuffer> hits;
    std::vector<Outlier> outliers;  // outliers met, not yet behind the line
    RangeBitmap tree;               // S: y ranks of stored regular boxes
  };

  void count(std::span<const Box3> boxes);
  void bucket(std::span<const Box3> boxes);
  void sweep_cells(std::vector<IndexPair>& out);
  // A cell's fine bins: x over its own entries' x.min, y over its regular entries' y.min.
  struct CellBins {
    Bins x, y;
  };
  static void activate(CellArrays& w, std::uint32_t rank, const Cand& c, std::uint32_t index);
  std::uint32_t count_bins(CellArrays& w, std::span<const Entry> in, const CellBins& bins) const;
  void place_entries(CellArrays& w, std::span<const Entry> in, const CellBins& bins, const CellStats& st,
                     std::uint32_t straddlers) const;
  void sweep_cell(CellArrays& w, std::uint32_t cell, std::vector<IndexPair>& out) const;

  Plan plan_;
  std::array<std::vector<double>, 3> sample_;       // make_plan()'s scratch
  StripMap strips_;                                 // the grid: x strips
  Bins slabs_;                                      // and t slabs
  std::vector<std::uint32_t> start_;                // per cell: its first entry; then the total
  std::vector<CellStats> stats_;                    // per cell
  std::vector<Entry> entries_;                      // by cell
  std::vector<std::uint32_t> cursor_;               // bucket(): per cell, where its next entry goes
  detail::TaskPlan tasks_plan_;                     // the sweep's tasks of consecutive cells
  std::vector<std::vector<IndexPair>> task_pairs_;  // by task: its pairs (parallel sweeps)
  ScratchPool<CellArrays> arrays_;
  OptionTasks tasks_;
};

void DualAxisSweep::complete(std::span<const Box3> boxes, std::vector<IndexPair>& out) {
  const auto n = static_cast<std::uint32_t>(boxes.size());
  if (n < 2) return;
  plan_ = make_plan(boxes, sample_);
  const Axes ax = plan_.axes;
  strips_.count = 1;
  slabs_ = Bins{};
  if (n >= kGridMinBoxes && plan_.finite > 0) {
    // Slabs on t a few mean extents thick, then strips on x of about
    // kCellEntries boxes each (kSlabCellEntries with slabs; without, at most
    // kMaxFlatStrips strips).
    double slabs = 1;
    const double t_range = plan_.hi[ax.t] - plan_.lo[ax.t];
    if (plan_.mean[ax.t] > 0) slabs = std::floor(t_range / (kSlabExtents * plan_.mean[ax.t]));
    slabs = std::clamp(slabs, 1.0, std::min(double(kMaxCellsPerAxis), double(n) / kMinSlabBoxes));
    const double entries = slabs > 1 ? kSlabCellEntries : std::max(kCellEntries, double(n) / kMaxFlatStrips);
    const double strips = std::clamp(std::ceil(double(n) / slabs / entries), 1.0, double(kMaxCellsPerAxis));
    slabs_ = Bins::over(plan_.lo[ax.t], plan_.hi[ax.t], static_cast<std::uint32_t>(slabs));
    strips_.build(boxes, ax.x, plan_.lo[ax.x], plan_.hi[ax.x], static_cast<std::uint32_t>(strips));
  }
  count(boxes);
  while (strips_.count * slabs_.count > 1 && double(start_.back()) > kMaxCopiesPerBox * double(n)) {
    strips_.halve();
    slabs_.halve();
    count(boxes);
  }
  bucket(boxes);
  sweep_cells(out);
}

// Every cell's sweep, in tasks of consecutive cells; pairs in cell order (task_plan.hpp).
std::size_t DualAxisSweep::memory_bytes() const {
  const auto bytes = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  std::size_t total = strips_.memory_bytes() + bytes(start_) + bytes(stats_) + bytes(entries_) + bytes(cursor_) +
                      tasks_plan_.memory_bytes() + bytes(task_pairs_);
  for (const std::vector<double>& v : sample_) total += bytes(v);
  for (const std::vector<IndexPair>& v : task_pairs_) total += bytes(v);
  arrays_.for_each([&](const CellArrays& w) {
    total += sizeof(CellArrays) + bytes(w.x_start) + bytes(w.y_start) + bytes(w.y_next) + bytes(w.x_line) +
             bytes(w.queries) + bytes(w.stored) + bytes(w.stored_index) + bytes(w.outliers) + w.tree.memory_bytes();
  });
  return total;
}

void DualAxisSweep::sweep_cells(std::vector<IndexPair>& out) {
  const std::uint32_t cells = strips_.count * slabs_.count;
  tasks_plan_.split(
      cells, start_[cells], [&](std::uint32_t c) { return start_[c]; }, kTaskEntries, kMaxTasks);
  detail::run_ordered(tasks_.get(), tasks_plan_.size(), task_pairs_, out,
                      [&](std::size_t t, std::vector<IndexPair>& found) {
                        CellArrays& w = arrays_.take();
                        for (std::uint32_t c = tasks_plan_.first(t); c < tasks_plan_.end(t); ++c)
                          sweep_cell(w, c, found);
                        arrays_.give(w);
                      });
}

// Entries per cell: start_[c] holds cell c's count, start_.back() the total.
void DualAxisSweep::count(std::span<const Box3> boxes) {
  const Axes ax = plan_.axes;
  const std::uint32_t cells = strips_.count * slabs_.count;
  start_.assign(cells + 1, 0);
  std::uint32_t total = 0;
  for (const Box3& b : boxes) {
    const std::uint32_t x0 = strips_(b.min[ax.x]), x1 = strips_(b.max[ax.x]);
    const std::uint32_t t0 = slabs_(b.min[ax.t]), t1 = slabs_(b.max[ax.t]);
    for (std::uint32_t t = t0; t <= t1; ++t)
      for (std::uint32_t x = x0; x <= x1; ++x) ++start_[t * strips_.count + x];
    total += (t1 - t0 + 1) * (x1 - x0 + 1);
  }
  start_[cells] = total;
}

// Copies every box into each cell it touches (a counting sort), and gathers
// each cell's statistics.
[[gnu::noinline]] void DualAxisSweep::bucket(std::span<const Box3> boxes) {
  const Axes ax = plan_.axes;
  const std::uint32_t cells = strips_.count * slabs_.count;
  std::uint32_t sum = 0;
  for (std::uint32_t c = 0; c < cells; ++c) sum += std::exchange(start_[c], sum);
  entries_.resize(start_[cells]);
  stats_.assign(cells, CellStats{kInf, -kInf, kInf, -kInf, 0.0, 0, 0});
  cursor_.assign(start_.begin(), start_.end() - 1);
  const double cap = plan_.cap;
  for (std::uint32_t i = 0; i < boxes.size(); ++i) {
    const Box3& b = boxes[i];
    const std::uint32_t x0 = strips_(b.min[ax.x]), x1 = strips_(b.max[ax.x]);
    const std::uint32_t t0 = slabs_(b.min[ax.t]), t1 = slabs_(b.max[ax.t]);
    const double extent = double(b.max[ax.y]) - double(b.min[ax.y]);
    const bool regular = extent <= cap;  // false for inf and NaN extents
    const Entry e{b.min[ax.x], b.min[ax.y], b.min[ax.t], b.max[ax.x],
                  b.max[ax.y], b.max[ax.t], i,           (t0 != t1 ? kSpansT : 0u) | (regular ? 0u : kOutlier)};
    const bool finite_x = std::isfinite(e.x_min);
    for (std::uint32_t t = t0; t <= t1; ++t) {
      for (std::uint32_t x = x0; x <= x1; ++x) {
        const std::uint32_t c = t * strips_.count + x;
        Entry& d = entries_[cursor_[c]++];
        d = e;
        CellStats& st = stats_[c];
        if (x != x0) {
          d.flags |= kStraddler;
        } else {
          ++st.own;
          if (finite_x) {
            st.x_lo = std::min(st.x_lo, e.x_min);
            st.x_hi = std::max(st.x_hi, e.x_min);
          }
        }
        if (regular) {
          ++st.regular;
          st.y_lo = std::min(st.y_lo, e.y_min);
          st.y_hi = std::max(st.y_hi, e.y_min);
          st.widest = std::max(st.widest, extent);
        }
      }
    }
  }
}

// The fine y bin from which a query of a box at y_min walks S: any regular b
// meeting it on y has b.y.min >= y_min - W (W the cell's widest regular y
// extent, rounded up); that bound's bin in double, less one to cover the
// float map's error (far below a bin while it has at most kMaxFineBins bins).
inline std::uint32_t widened_first_bin(const Bins& fine_y, float y_min, double widest) {
  if (fine_y.count == 1) return 0;
  const double d =
      std::min((double(y_min) - widest - double(fine_y.origin)) * double(fine_y.scale), double(fine_y.count));
  return d >= 1 ? static_cast<std::uint32_t>(d) - 1 : 0;
}

// Activation: a box enters S at its y rank, or, an outlier, the list of outliers met.
[[gnu::always_inline]] inline void DualAxisSweep::activate(CellArrays& w, std::uint32_t rank, const Cand& c,
                                                           std::uint32_t index) {
  if (rank == kNoRank) {
    w.outliers.push_back({c, index});
  } else {
    w.stored[rank] = c;
    w.stored_index[rank] = index;
    w.tree.insert(rank);
  }
}

// Counting sorts' first pass: bin counts turned into bin starts, own entries
// by fine x bin after the straddlers, regular entries by fine y bin (their y
// ranks), and each x bin's least x.min; returns the number of straddlers.
std::uint32_t DualAxisSweep::count_bins(CellArrays& w, std::span<const Entry> in, const CellBins& bins) const {
  w.x_start.assign(bins.x.count + 1, 0);
  w.x_line.assign(bins.x.count, kInf);
  w.y_start.assign(bins.y.count + 1, 0);
  std::uint32_t straddlers = 0;
  for (const Entry& e : in) {
    if (e.flags & kStraddler) {
      ++straddlers;
    } else {
      const std::uint32_t bx = bins.x(e.x_min);
      ++w.x_start[bx];
      w.x_line[bx] = std::min(w.x_line[bx], e.x_min);
    }
    if (!(e.flags & kOutlier)) ++w.y_start[bins.y(e.y_min)];
  }
  std::uint32_t sum = straddlers;
  for (std::uint32_t& v : w.x_start) sum += std::exchange(v, sum);
  sum = 0;
  for (std::uint32_t& v : w.y_start) sum += std::exchange(v, sum);
  w.y_next.assign(w.y_start.begin(), w.y_start.end());
  return straddlers;
}

// Counting sorts' second pass: S emptied, straddlers activated at once (their
// pairs with each other belong to earlier strips, and every own entry comes
// after them), each own entry's query placed in sweep order with its sweep
// line and its y rank range widened by W.
void DualAxisSweep::place_entries(CellArrays& w, std::span<const Entry> in, const CellBins& bins, const CellStats& st,
                                  std::uint32_t straddlers) const {
  // W bounds every regular y extent of the cell from above (the rounded
  // differences are within half an ulp of the true extents).
  const double widest = std::nextafter(st.widest, std::numeric_limits<double>::infinity());
  w.tree.reset(st.regular);
  w.stored.resize(st.regular + 1);
  w.stored_index.resize(st.regular + 1);
  w.stored[st.regular] = sentinel_form();  // never stored in S
  w.outliers.clear();
  w.queries.resize(in.size() - straddlers);
  for (const Entry& e : in) {
    const std::uint32_t index = e.index | ((e.flags & kSpansT) ? kSpanBit : 0);
    const std::uint32_t rank = (e.flags & kOutlier) ? kNoRank : w.y_next[bins.y(e.y_min)]++;
    if (e.flags & kStraddler) {
      activate(w, rank, stored_form(e), index);
      continue;
    }
    const std::uint32_t bx = bins.x(e.x_min);
    Query& q = w.queries[w.x_start[bx]++ - straddlers];
    q.q = query_form(e, w.x_line[bx]);
    q.index = index;
    q.rank = rank;
    q.lo = w.y_start[widened_first_bin(bins.y, e.y_min, widest)];
    q.hi = w.y_start[bins.y(e.y_max) + 1];
  }
}

// The dual-axis sweep of one cell (see the file comment): the own entries
// in order of x.min, each querying S over its widened y range, then the
// outliers met, then entering S itself.
[[gnu::noinline]] void DualAxisSweep::sweep_cell(CellArrays& w, std::uint32_t cell, std::vector<IndexPair>& out) const {
  const std::span<const Entry> in(entries_.data() + start_[cell], start_[cell + 1] - start_[cell]);
  const CellStats& st = stats_[cell];
  if (in.size() < 2 || st.own == 0) return;
  const CellBins bins{
      Bins::over(st.x_lo, st.x_hi, std::clamp<std::uint32_t>(st.own / kOwnPerXBin, 1, kMaxFineBins)),
      Bins::over(st.y_lo, st.y_hi, std::clamp<std::uint32_t>(st.regular / kRanksPerYBin, 1, kMaxFineBins))};
  place_entries(w, in, bins, st, count_bins(w, in, bins));
  const std::uint32_t slab = cell / strips_.count, sentinel = st.regular;

  // Reporting: a pair spanning slabs belongs to the slab of its overlap's low corner on t.
  auto report = [&](std::uint32_t b_index, const Cand& b, std::uint32_t a_index, float a_t_min) {
    if (((b_index | a_index) & kSpanBit) && slabs_(std::max(a_t_min, stored_t_min(b))) != slab) return;
    out.push_back({b_index & ~kSpanBit, a_index & ~kSpanBit});
  };
  // Hits are rare among candidates and unpredictable: gathered without a branch, reported by the batch.
  std::uint32_t hits = 0;
  auto report_hits = [&] {
    for (std::uint32_t h = 0; h < hits; ++h) {
      const Hit& x = w.hits[h];
      report(w.stored_index[x.rank], w.stored[x.rank], x.index, x.t_min);
    }
    hits = 0;
  };
  // The per-candidate test, exact on x, y and t at once; true when b is behind the sweep line for good (expiry).
  auto test = [&](const Query& a, float line, std::uint32_t r) {
    const Cand& b = w.stored[r];
    w.hits[hits] = {r, a.index, query_t_min(a.q)};
    hits += overlap(a.q, b);
    return stored_x_max(b) < line;
  };
  // A short range query: windows of 64 ranks, mostly empty, two candidates
  // a step (past the last one, the sentinel), so that the loops mostly run
  // once or not at all and their exits are predicted; expired ranks leave S.
  auto query_windows = [&](const Query& a, float line) {
    for (std::uint32_t lo = a.lo; lo < a.hi; lo += 64) {
      const std::uint32_t len = std::min<std::uint32_t>(a.hi - lo, 64);
      std::uint64_t bits = w.tree.window(lo) & (~std::uint64_t{0} >> (64 - len));
      std::uint64_t expired = 0;
      auto step = [&] {
        const std::uint64_t low = bits & (~bits + 1);
        const std::uint32_t r = bits != 0 ? lo + static_cast<std::uint32_t>(std::countr_zero(bits)) : sentinel;
        bits ^= low;
        expired |= test(a, line, r) ? low : 0;
      };
      while (bits != 0) {
        step();
        step();
        if (hits >= kHitBuffer - 2) [[unlikely]]
          report_hits();
      }
      w.tree.erase_window(lo, expired);
    }
  };
  // A long range query: the bitmap's summary skips empty stretches; expired ranks leave S.
  auto query_filter = [&](const Query& a, float line) {
    w.tree.filter(a.lo, a.hi, [&](std::uint32_t r) {
      const bool expired = test(a, line, r);
      if (hits >= kHitBuffer - 2) [[unlikely]]
        report_hits();
      return !expired;
    });
  };
  // The outliers met: expired ones dropped, the others tested and reported at once.
  auto query_outliers = [&](const Query& a, float line) {
    for (std::size_t j = 0; j < w.outliers.size();) {
      const Outlier& o = w.outliers[j];
      if (stored_x_max(o.c) < line) {
        w.outliers[j] = w.outliers.back();
        w.outliers.pop_back();
        continue;
      }
      if (overlap(a.q, o.c)) report(o.index, o.c, a.index, query_t_min(a.q));
      ++j;
    }
  };

  // The x sweep; `line` lies at or below x.min of a and of every later entry.
  for (const Query& a : w.queries) {
    const float line = query_line(a.q);
    if (a.hi - a.lo <= kWindowedRange) {
      query_windows(a, line);
    } else {
      query_filter(a, line);
    }
    query_outliers(a, line);
    activate(w, a.rank, stored_of(a.q), a.index);
  }
  report_hits();
}

}  // namespace

std::unique_ptr<Algorithm> make_dual_axis(const Options& options) {
  no_settings(options);
  return make_recompute(std::make_unique<DualAxisSweep>(options));
}

}  // namespace sapling::detail
