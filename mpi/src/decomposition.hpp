// Space divided among ranks: recursive coordinate bisection of the objects'
// centres (Berger and Bokhari's RCB, as Zoltan and LAMMPS use it). The root
// cuts space at a plane across the axis where the centres spread widest, so
// that the low side holds the share of the weight its ranks are due; each
// side is cut again among its ranks, down to one rank per domain.
//
// The domains partition space exactly: a domain is half-open, [lo, hi) on
// each axis, the outermost reach to -inf and +inf (and hold +inf itself),
// every cut is finite. A point lies in one domain (rank_of()); a closed box
// meets the domains that hold one of its points (meets(), for_each_rank()).
// That is what makes the distributed broad phase exact: the least corner
// of two boxes' intersection lies in both boxes, so the one domain holding
// it holds both, and that domain's rank alone reports the pair.
//
// Every rank computes the same decomposition from the same gathered
// samples: the construction sorts them whole and breaks every tie, so it
// depends on their values only.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "sapling/box.hpp"

namespace sapling::mpi::detail {

/// An object's centre (finite even for an infinite box) with the number
/// of objects it stands for.
struct Sample {
  std::array<float, 3> centre;
  float weight;
};

/// Up to `limit` of `count` objects' centres, evenly spaced in their
/// order, each standing for count / taken objects. `for_each(visit)`
/// calls visit(box) for each object in order.
template <class ForEach>
std::vector<Sample> sample_centres(std::size_t count, std::size_t limit, ForEach&& for_each);

/// The point a box is decomposed by: its centre, with infinite bounds
/// clamped to the largest finite float, so that every cut is finite.
std::array<float, 3> reference_point(const Box3& box) noexcept;

class Decomposition {
 public:
  /// One domain holding all of space.
  explicit Decomposition(int ranks = 1);

  /// The bisection of `samples` among `ranks` ranks, cutting the first
  /// `dims` axes only.
  static Decomposition bisect(std::span<const Sample> samples, int ranks, int dims);

  /// `from` moved toward the bisection of `samples`, without a spike: the
  /// same cuts on the same axes, each moved past at most `step` of the
  /// weight on its two sides (redrawing over frames as the world drifts).
  static Decomposition shifted(const Decomposition& from, std::span<const Sample> samples, int dims, double step);

  int ranks() const noexcept { return ranks_; }
  /// The rank whose domain holds point `p`.
  int rank_of(const std::array<float, 3>& p) const noexcept;
  /// Whether `box` (closed) meets rank `r`'s domain.
  bool meets(const Box3& box, int r) const noexcept {
    const Box3& d = domains_[static_cast<std::size_t>(r)];
    for (int k = 0; k < 3; ++k) {
      if (!(box.max[k] >= d.min[k])) return false;
      if (!(box.min[k] < d.max[k] || d.max[k] == kInfinity)) return false;
    }
    return true;
  }
  /// Whether `box` lies strictly inside rank `r`'s domain, below its max
  /// on every axis (a box reaching +inf never does): then it meets no other
  /// domain, and for_each_rank() would visit `r` alone.
  bool holds(const Box3& box, int r) const noexcept {
    const Box3& d = domains_[static_cast<std::size_t>(r)];
    for (int k = 0; k < 3; ++k) {
      if (!(box.min[k] >= d.min[k] && box.max[k] < d.max[k])) return false;
    }
    return true;
  }
  /// visit(r) for every rank whose domain `box` meets, ascending.
  template <class Visit>
  void for_each_rank(const Box3& box, Visit&& visit) const {
    if (ranks_ == 1) return visit(0);
    walk(0, box, visit);
  }
  /// Rank r's domain: [min, max) per axis, max included where it is +inf.
  const Box3& domain(int r) const noexcept { return domains_[static_cast<std::size_t>(r)]; }

  friend bool operator==(const Decomposition&, const Decomposition&) = default;

 private:
  static constexpr float kInfinity = __builtin_huge_valf();
  // An inner node cuts `axis` at `cut`: points below go to `low`, the rest
  // to `high`. A child below 0 is the leaf of rank -child - 1.
  struct Node {
    std::int32_t axis;
    float cut;
    std::int32_t low, high;
    friend bool operator==(const Node&, const Node&) = default;
  };

  template <class Visit>
  void walk(std::int32_t child, const Box3& box, Visit& visit) const {
    if (child < 0) return visit(-child - 1);
    const Node& n = nodes_[static_cast<std::size_t>(child)];
    if (box.min[n.axis] < n.cut) walk(n.low, box, visit);
    if (box.max[n.axis] >= n.cut) walk(n.high, box, visit);
  }
  struct Following {  // an old decomposition's node that a new one follows
    const Decomposition* from = nullptr;
    std::int32_t node = 0;
    double step = 0;
  };
  std::int32_t build(std::vector<Sample>& samples, std::size_t first, std::size_t last, int rank_first, int rank_last,
                     Box3 region, int dims, Following follow);

  int ranks_;
  std::vector<Node> nodes_;    // nodes_[0] is the root when ranks_ > 1
  std::vector<Box3> domains_;  // by rank
};

template <class ForEach>
std::vector<Sample> sample_centres(std::size_t count, std::size_t limit, ForEach&& for_each) {
  const std::size_t take = count < limit ? count : limit;
  std::vector<Sample> samples;
  samples.reserve(take);
  const float weight = take == 0 ? 0.0f : static_cast<float>(count) / static_cast<float>(take);
  std::size_t seen = 0, next = 0;
  for_each([&](const Box3& box) {
    if (samples.size() == take || seen++ != next) return;
    samples.push_back(Sample{reference_point(box), weight});
    next = (samples.size() * count) / take;
  });
  return samples;
}

}  // namespace sapling::mpi::detail
