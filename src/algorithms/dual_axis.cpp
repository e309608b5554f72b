// dual-axis: a sweep and prune on two axes at once for boxes of any size,
// the general method that Capannini and Larsson's unisize algorithm
// specialises ("Efficient collision culling by a succinct bi-dimensional
// sweep and prune algorithm", SCCG 2016). That paper was not available to
// us; this is our design in its spirit (shared/NOTES-algorithms.md, "general
// boxes"), exact for every valid box, infinite ones included.
//
// One frame, from scratch (a one-shot method made persistent by
// make_recompute):
//   1. axes: x is swept, y is ranked, t is tested per candidate; t is the
//      axis along which the boxes spread least in units of their mean
//      extent, x the one they spread most (sampled statistics);
//   2. regular boxes and outliers: a box is regular when its y extent is at
//      most a cap (twice the 90th percentile of a sample of extents), so W,
//      the largest y extent among regular boxes, stays near the typical
//      one. Boxes with larger, infinite or NaN-producing (inf - inf) y
//      extents are outliers, typically none or a few planes and giants;
//   3. ranks: the regular boxes sorted by y.min (an LSD radix sort of
//      sortable keys); rank r holds the candidate data of its box. For each
//      rank, lo is the first rank whose y.min is at least y.min - W, rounded
//      down, found for all ranks by two pointers, since y.min - W grows with
//      the rank;
//   4. the sweep: every box in order of x.min (radix sort; ties by index).
//      S, a linked succinct bit tree over the ranks (bit_tree.hpp), holds
//      the regular boxes met so far that may still reach the sweep line; a
//      plain list holds such outliers. A box a queries S by walking the
//      stored ranks from lo(a) while their y.min <= a.y.max: any regular b
//      overlapping a on y has y.min >= b.y.max - W >= a.y.min - W, so it is
//      in the walk; each visited b is tested exactly (b.y.max >= a.y.min,
//      and t unless every box overlaps every other on t). A visited b with
//      x.max < a.x.min can reach no later box either and leaves S on the
//      spot (lazy removal: no sort of the x highs is needed). Then a scans
//      the outlier list, dropping the ones behind the sweep line, and joins
//      S or the list.
// Each overlapping pair is found once, by the later of its two boxes in the
// x order, with the earlier one still stored.
//
// Cost: O(n) for the radix sorts and two-pointer pass, O(n log64 n) for the
// updates of S, plus one visit per candidate: the pairs overlapping on x
// and whose y intervals meet once widened by W - the box's own extent (none
// more when all y extents are equal), plus O(number of outliers stored) per
// box. In 2D and flat 3D worlds candidates are about the pairs; in fully 3D
// worlds the t test rejects most candidates, which the 2D sweep cannot
// avoid: there box pruning's grid on two axes is the better choice. Choose
// dual-axis for flat worlds of boxes of similar sizes with large overlaps
// on x; unisize when all boxes have one size.
//
// Measured (one thread, 2-core AMD EPYC, 2026-11-21; bench/results/
// unisize-table1-2026-11-21.md, cluster-2026-11-21.md and
// dual-axis-3d-2026-11-21.md), persistent dual-axis against persistent
// box-pruning. Flat worlds: 12.4 vs 8.5 ms (2^17 squares, d = 0.2), 19.5 vs
// 18.1 (2^17, d = 0.8), 218 vs 89 (2^20, d = 0.2), 332 vs 214 (2^20,
// d = 0.8), median 11.2 vs 8.5 on the clustering run. 3D worlds: 1.7..7.4x
// slower over seven scenes (allmoving3d 100k: 21.4 vs 6.4 ms, 1M: 515 vs
// 69; tracy 100k: 15.6 vs 5.9). It is exact everywhere and 9..14x faster
// than CGAL on the flat scenes, but box pruning is the better general
// choice on every scene measured: its grid cuts the candidates on two axes
// where this sweep cuts them on one and tests t per candidate, and at a
// million boxes the ranks, S and its links (tens of MB, visited in y-rank
// order) miss the cache on most steps (unisize avoids this by sweeping
// strips of 2048..8192 boxes; general boxes would need each strip's straddling
// boxes found by an interval search, not done here).
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "algorithms/bit_tree.hpp"
#include "algorithms/builtin.hpp"
#include "sapling/float_key.hpp"

namespace sapling::builtin {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Stable LSD radix sort of (key << 32 | index) items by key, 11 bits a pass;
// passes whose digit is the same in every item are skipped.
class RadixSorter {
 public:
  void sort(std::vector<std::uint64_t>& items) {
    constexpr int kPasses = 3;
    for (auto& c : counts_) c.fill(0);
    for (const std::uint64_t x : items) {
      for (int d = 0; d < kPasses; ++d) ++counts_[d][(x >> (32 + kDigitBits * d)) & kMask];
    }
    if (items.size() < 2) return;
    scratch_.resize(items.size());
    for (int d = 0; d < kPasses; ++d) {
      std::array<std::uint32_t, kBuckets>& c = counts_[d];
      const int shift = 32 + kDigitBits * d;
      if (c[(items[0] >> shift) & kMask] == items.size()) continue;  // one digit everywhere
      std::uint32_t sum = 0;
      for (std::uint32_t& v : c) sum += std::exchange(v, sum);
      for (const std::uint64_t x : items) scratch_[c[(x >> shift) & kMask]++] = x;
      items.swap(scratch_);
    }
  }

  std::size_t memory_bytes() const { return scratch_.capacity() * sizeof(std::uint64_t); }

 private:
  static constexpr int kDigitBits = 11;
  static constexpr std::size_t kBuckets = std::size_t{1} << kDigitBits;
  static constexpr std::uint64_t kMask = kBuckets - 1;
  std::array<std::array<std::uint32_t, kBuckets>, 3> counts_{};
  std::vector<std::uint64_t> scratch_;
};

struct Axes {
  int x = 0, y = 1, t = 2;
};

// Sampled statistics: the axes and the cap on regular y extents.
struct Plan {
  Axes axes;
  double cap = 0;
};

// `extents`: scratch for the sampled extents (kept to avoid allocating).
Plan make_plan(std::span<const Box3> boxes, std::array<std::vector<double>, 3>& extents) {
  constexpr std::size_t kSample = 4096;
  const std::size_t stride = std::max<std::size_t>(1, boxes.size() / kSample);
  std::array<double, 3> lo{}, hi{}, extent_sum{};
  for (std::vector<double>& e : extents) e.clear();
  std::size_t finite = 0;
  for (std::size_t i = 0; i < boxes.size(); i += stride) {
    const Box3& b = boxes[i];
    bool ok = true;
    for (int k = 0; k < 3; ++k) ok = ok && std::isfinite(b.min[k]) && std::isfinite(b.max[k]);
    if (!ok) continue;
    for (int k = 0; k < 3; ++k) {
      const double c = 0.5 * double(b.min[k]) + 0.5 * double(b.max[k]);
      const double e = double(b.max[k]) - double(b.min[k]);
      lo[k] = finite == 0 ? c : std::min(lo[k], c);
      hi[k] = finite == 0 ? c : std::max(hi[k], c);
      extent_sum[k] += e;
      extents[k].push_back(e);
    }
    ++finite;
  }
  Plan plan;
  if (finite == 0) {
    plan.cap = std::numeric_limits<double>::max();
    return plan;
  }
  // Spread in units of the mean extent: along t most pairs overlap.
  std::array<double, 3> spread{};
  for (int k = 0; k < 3; ++k) {
    const double mean = extent_sum[k] / double(finite);
    const double range = hi[k] - lo[k];
    spread[k] = mean > 0 ? range / mean : (range > 0 ? std::numeric_limits<double>::infinity() : 0.0);
  }
  Axes& a = plan.axes;
  a.t = 2;
  for (int k = 1; k >= 0; --k) {
    if (spread[k] < spread[a.t]) a.t = k;
  }
  const int u = a.t == 0 ? 1 : 0, v = a.t == 2 ? 1 : 2;
  a.x = spread[v] > spread[u] ? v : u;
  a.y = a.x == u ? v : u;
  std::vector<double>& e = extents[a.y];
  const std::size_t q = e.size() * 9 / 10;
  std::nth_element(e.begin(), e.begin() + q, e.end());
  plan.cap = 2 * e[q];
  return plan;
}

// The largest float <= t (t a double, possibly infinite).
float float_at_or_below(double t) {
  float f = static_cast<float>(t);
  if (double(f) > t) f = std::nextafter(f, -kInf);
  return f;
}

class DualAxisSweep final : public OneShotComplete {
 public:
  void find_pairs(std::span<const Box3> boxes, std::vector<IndexPair>& out) override {
    const auto n = static_cast<std::uint32_t>(boxes.size());
    if (n < 2) return;
    const Plan plan = make_plan(boxes, sample_);
    const Axes ax = plan.axes;

    // Classify; W bounds every regular y extent from above.
    y_items_.clear();
    rank_of_.resize(n);
    double widest = 0;
    float t_lo_max = -kInf, t_hi_min = kInf;
    for (std::uint32_t i = 0; i < n; ++i) {
      const Box3& b = boxes[i];
      const double e = double(b.max[ax.y]) - double(b.min[ax.y]);
      if (e <= plan.cap) {  // false for inf and NaN extents
        widest = std::max(widest, e);
        y_items_.push_back((std::uint64_t{float_key(b.min[ax.y])} << 32) | i);
      } else {
        rank_of_[i] = kOutlier;
      }
      t_lo_max = std::max(t_lo_max, b.min[ax.t]);
      t_hi_min = std::min(t_hi_min, b.max[ax.t]);
    }
    // The rounded differences are within half an ulp of the true extents.
    const double w = std::nextafter(widest, std::numeric_limits<double>::infinity());
    const bool flat = t_lo_max <= t_hi_min;

    // Ranks on y: candidate data in rank order, and lo per rank.
    sorter_.sort(y_items_);
    const auto m = static_cast<std::uint32_t>(y_items_.size());
    ranked_.resize(m);
    y_keys_.resize(m);
    for (std::uint32_t r = 0; r < m; ++r) {
      const std::uint32_t i = static_cast<std::uint32_t>(y_items_[r]);
      const Box3& b = boxes[i];
      ranked_[r] = Ranked{b.min[ax.y], b.max[ax.y], b.max[ax.x], b.min[ax.t], b.max[ax.t], i};
      y_keys_[r] = static_cast<std::uint32_t>(y_items_[r] >> 32);
      rank_of_[i] = r;
    }
    lo_.resize(m);
    for (std::uint32_t r = 0, p = 0; r < m; ++r) {
      const std::uint32_t key = float_key(float_at_or_below(double(ranked_[r].y_min) - w));
      while (y_keys_[p] < key) ++p;  // stops at r at the latest
      lo_[r] = p;
    }

    // The boxes in x order, with what each query needs.
    x_items_.resize(n);
    for (std::uint32_t i = 0; i < n; ++i) x_items_[i] = (std::uint64_t{float_key(boxes[i].min[ax.x])} << 32) | i;
    sorter_.sort(x_items_);
    queries_.resize(n);
    for (std::uint32_t k = 0; k < n; ++k) {
      const std::uint32_t i = static_cast<std::uint32_t>(x_items_[k]);
      const Box3& b = boxes[i];
      const std::uint32_t r = rank_of_[i];
      std::uint32_t from = 0;
      if (r != kOutlier) {
        from = lo_[r];
      } else if (m > 0) {
        const std::uint32_t key = float_key(float_at_or_below(double(b.min[ax.y]) - w));
        from = static_cast<std::uint32_t>(std::lower_bound(y_keys_.begin(), y_keys_.end(), key) - y_keys_.begin());
      }
      queries_[k] = Query{b.min[ax.x], b.max[ax.x], b.min[ax.y], b.max[ax.y], b.min[ax.t], b.max[ax.t], i, r, from};
    }

    if (tree_.universe() != m) tree_.reset(m);
    outliers_.clear();
    if (flat) {
      sweep<false>(out);
    } else {
      sweep<true>(out);
    }
    tree_.clear();
  }

 private:
  static constexpr std::uint32_t kOutlier = ~std::uint32_t{0};

  struct Ranked {  // a regular box as a candidate, by y rank
    float y_min, y_max, x_max, t_min, t_max;
    std::uint32_t index;
  };
  struct Query {  // a box in x order
    float x_min, x_max, y_min, y_max, t_min, t_max;
    std::uint32_t index;
    std::uint32_t rank;  // kOutlier for an outlier
    std::uint32_t from;  // lo: the first rank whose y.min may reach y.min - W
  };

  template <bool kTestT>
  static bool meets_t(const Query& a, float t_min, float t_max) {
    if constexpr (kTestT) return t_min <= a.t_max && a.t_min <= t_max;
    return true;
  }

  template <bool kTestT>
  void sweep(std::vector<IndexPair>& out) {
    for (const Query& a : queries_) {
      // S: walk the stored ranks from lo(a) while y.min <= a.y.max.
      for (std::uint32_t q = tree_.lower_bound(a.from); q != tree_.end();) {
        const Ranked& b = ranked_[q];
        if (!(b.y_min <= a.y_max)) break;
        const std::uint32_t next = tree_.next(q);
        if (b.x_max < a.x_min) {
          tree_.erase(q);  // behind the sweep line for good
        } else if (a.y_min <= b.y_max && meets_t<kTestT>(a, b.t_min, b.t_max)) {
          out.push_back({b.index, a.index});
        }
        q = next;
      }
      // The outliers met so far.
      for (std::size_t k = 0; k < outliers_.size();) {
        const Query& o = outliers_[k];
        if (o.x_max < a.x_min) {
          outliers_[k] = outliers_.back();
          outliers_.pop_back();
          continue;
        }
        if (o.y_min <= a.y_max && a.y_min <= o.y_max && meets_t<kTestT>(a, o.t_min, o.t_max)) {
          out.push_back({o.index, a.index});
        }
        ++k;
      }
      if (a.rank != kOutlier) {
        tree_.insert(a.rank);
      } else {
        outliers_.push_back(a);
      }
    }
  }

  std::array<std::vector<double>, 3> sample_;  // make_plan()'s scratch
  RadixSorter sorter_;
  std::vector<std::uint64_t> y_items_, x_items_;  // (key << 32 | index), sorted
  std::vector<std::uint32_t> rank_of_;            // box index -> y rank, or kOutlier
  std::vector<std::uint32_t> y_keys_;             // by rank: key of y.min
  std::vector<Ranked> ranked_;                    // by rank
  std::vector<std::uint32_t> lo_;                 // by rank
  std::vector<Query> queries_;                    // in x order
  std::vector<Query> outliers_;                   // outliers met, not yet behind the sweep line
  LinkedBitTree tree_;                            // S: ranks of stored regular boxes
};

}  // namespace

std::unique_ptr<Algorithm> make_dual_axis(const Options&) { return make_recompute(std::make_unique<DualAxisSweep>()); }

}  // namespace sapling::builtin
