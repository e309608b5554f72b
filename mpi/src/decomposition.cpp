// Recursive coordinate bisection (decomposition.hpp).
#include "decomposition.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sapling::mpi::detail {

std::array<float, 3> reference_point(const Box3& box) noexcept {
  constexpr float kMax = std::numeric_limits<float>::max();
  std::array<float, 3> p{};
  for (int k = 0; k < 3; ++k) {
    p[k] = std::clamp(box.min[k], -kMax, kMax) * 0.5f + std::clamp(box.max[k], -kMax, kMax) * 0.5f;
  }
  return p;
}

Decomposition::Decomposition(int ranks) : ranks_(ranks) {
  constexpr float inf = kInfinity;
  domains_.assign(static_cast<std::size_t>(ranks), Box3{{-inf, -inf, -inf}, {inf, inf, inf}});
  // Until samples say otherwise: rank 0 holds all of space, the others
  // empty slivers at +inf (a cut there sends every finite point low).
  if (ranks > 1) {
    std::vector<Sample> none;
    *this = bisect(none, ranks, 3);
  }
}

Decomposition Decomposition::bisect(std::span<const Sample> samples, int ranks, int dims) {
  Decomposition d(1);
  d.ranks_ = ranks;
  constexpr float inf = kInfinity;
  const Box3 everywhere{{-inf, -inf, -inf}, {inf, inf, inf}};
  d.domains_.assign(static_cast<std::size_t>(ranks), everywhere);
  if (ranks == 1) return d;
  std::vector<Sample> sorted(samples.begin(), samples.end());
  d.build(sorted, 0, sorted.size(), 0, ranks, everywhere, dims, Following{});
  return d;
}

Decomposition Decomposition::shifted(const Decomposition& from, std::span<const Sample> samples, int dims,
                                     double step) {
  if (from.ranks_ == 1) return from;
  Decomposition d(1);
  d.ranks_ = from.ranks_;
  constexpr float inf = kInfinity;
  const Box3 everywhere{{-inf, -inf, -inf}, {inf, inf, inf}};
  d.domains_.assign(static_cast<std::size_t>(d.ranks_), everywhere);
  std::vector<Sample> sorted(samples.begin(), samples.end());
  d.build(sorted, 0, sorted.size(), 0, d.ranks_, everywhere, dims, Following{&from, 0, step});
  return d;
}

// The node cutting rank_first..rank_last-1's region (child index; a leaf
// is -rank - 1). The low ranks get the share of the weight their count is
// due; the cut is the centre of the first sample past that share, so that
// the samples strictly below it go low. Following an old node, the axis is
// the old one and the cut moves past at most `step` of the node's weight
// (and stays put when it is within a hundredth of its due).
std::int32_t Decomposition::build(std::vector<Sample>& samples, std::size_t first, std::size_t last, int rank_first,
                                  int rank_last, Box3 region, int dims, Following follow) {
  if (rank_last - rank_first == 1) {
    domains_[static_cast<std::size_t>(rank_first)] = region;
    return -rank_first - 1;
  }
  const auto begin = samples.begin() + static_cast<std::ptrdiff_t>(first);
  const auto end = samples.begin() + static_cast<std::ptrdiff_t>(last);
  // The axis where the centres spread widest (the lowest on a tie); with no
  // sample, every point goes low (a cut at the largest float).
  int axis = 0;
  float cut = std::numeric_limits<float>::max();
  const Node* old = follow.from != nullptr ? &follow.from->nodes_[static_cast<std::size_t>(follow.node)] : nullptr;
  if (old != nullptr) axis = old->axis, cut = old->cut;
  if (first < last) {
    float widest = -1.0f;
    for (int k = 0; k < dims && old == nullptr; ++k) {
      const auto [lo, hi] =
          std::minmax_element(begin, end, [k](const Sample& a, const Sample& b) { return a.centre[k] < b.centre[k]; });
      const float spread = hi->centre[k] - lo->centre[k];
      if (spread > widest) widest = spread, axis = k;
    }
    std::sort(begin, end, [axis](const Sample& a, const Sample& b) {
      if (a.centre[axis] != b.centre[axis]) return a.centre[axis] < b.centre[axis];
      if (a.centre != b.centre) return a.centre < b.centre;
      return a.weight < b.weight;
    });
    double total = 0;
    for (auto it = begin; it != end; ++it) total += it->weight;
    const int low_ranks = (rank_last - rank_first) / 2;
    const double due = total * low_ranks / (rank_last - rank_first);
    double wanted = due;
    bool keep = false;
    if (old != nullptr) {
      double below_old = 0;
      for (auto it = begin; it != end && it->centre[axis] < old->cut; ++it) below_old += it->weight;
      wanted = std::clamp(due, below_old - follow.step * total, below_old + follow.step * total);
      keep = std::abs(due - below_old) <= 0.01 * total;
    }
    if (!keep) {
      double below = 0;
      auto it = begin;
      while (it != end && below + it->weight * 0.5 < wanted) below += it->weight, ++it;
      cut = it == end ? std::numeric_limits<float>::max() : it->centre[axis];
    }
  }
  // The cut is kept inside the node's region (a side with no sample, or a
  // cut followed from an old drawing, may lie outside it): every point
  // goes the same way, and each domain is then exactly the region its path
  // of cuts encloses, so that meets() and the walk agree.
  cut = std::clamp(cut, region.min[axis], region.max[axis]);
  // Samples strictly below the cut go low (ties at the cut go high).
  std::size_t split = first;
  while (split < last && samples[split].centre[axis] < cut) ++split;
  const std::int32_t index = static_cast<std::int32_t>(nodes_.size());
  nodes_.push_back(Node{axis, cut, 0, 0});
  const int rank_mid = rank_first + (rank_last - rank_first) / 2;
  Box3 low_region = region, high_region = region;
  low_region.max[axis] = cut;
  high_region.min[axis] = cut;
  Following low_follow = follow, high_follow = follow;
  if (old != nullptr) low_follow.node = old->low, high_follow.node = old->high;
  if (low_follow.node < 0) low_follow.from = nullptr;
  if (high_follow.node < 0) high_follow.from = nullptr;
  const std::int32_t low = build(samples, first, split, rank_first, rank_mid, low_region, dims, low_follow);
  const std::int32_t high = build(samples, split, last, rank_mid, rank_last, high_region, dims, high_follow);
  nodes_[static_cast<std::size_t>(index)].low = low;
  nodes_[static_cast<std::size_t>(index)].high = high;
  return index;
}

int Decomposition::rank_of(const std::array<float, 3>& p) const noexcept {
  if (ranks_ == 1) return 0;
  std::int32_t child = 0;
  while (child >= 0) {
    const Node& n = nodes_[static_cast<std::size_t>(child)];
    child = p[n.axis] < n.cut ? n.low : n.high;
  }
  return -child - 1;
}

}  // namespace sapling::mpi::detail
