// Recursive coordinate bisection (decomposition.hpp).
#include "decomposition.hpp"

#include <algorithm>
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
  d.build(sorted, 0, sorted.size(), 0, ranks, everywhere, dims);
  return d;
}

// The node cutting rank_first..rank_last-1's region (child index; a leaf
// is -rank - 1). The low ranks get the share of the weight their count is
// due; the cut is the centre of the first sample past that share, so that
// the samples strictly below it go low.
std::int32_t Decomposition::build(std::vector<Sample>& samples, std::size_t first, std::size_t last, int rank_first,
                                  int rank_last, Box3 region, int dims) {
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
  if (first < last) {
    float widest = -1.0f;
    for (int k = 0; k < dims; ++k) {
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
    double below = 0;
    auto it = begin;
    while (it != end && below + it->weight * 0.5 < due) below += it->weight, ++it;
    cut = it == end ? std::numeric_limits<float>::max() : it->centre[axis];
  }
  // Samples strictly below the cut go low (ties at the cut go high).
  std::size_t split = first;
  while (split < last && samples[split].centre[axis] < cut) ++split;
  const std::int32_t index = static_cast<std::int32_t>(nodes_.size());
  nodes_.push_back(Node{axis, cut, 0, 0});
  const int rank_mid = rank_first + (rank_last - rank_first) / 2;
  Box3 low_region = region, high_region = region;
  low_region.max[axis] = cut;
  high_region.min[axis] = cut;
  const std::int32_t low = build(samples, first, split, rank_first, rank_mid, low_region, dims);
  const std::int32_t high = build(samples, split, last, rank_mid, rank_last, high_region, dims);
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
