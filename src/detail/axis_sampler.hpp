// Statistics of a strided sample of boxes, per axis (range, mean, variance
// of a point of each box, mean extent), from which box pruning, dual-axis
// and unisize choose their axes and grids; and the roles of the axes chosen
// by spread.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

#include "sapling/box.hpp"

namespace sapling::detail {

/// What is sampled of a box on each axis.
enum class SamplePoint {
  kCentre,       ///< 0.5 * min + 0.5 * max, in double
  kFloatCentre,  ///< 0.5f * min + 0.5f * max, in float
  kMin,          ///< min
};

/// What add_sample() sums besides the range, a flag each (a caller pays only
/// for what it reads), and kFiniteInput: every box is finite, none tested.
enum SampleFlags : unsigned { kRangeOnly = 0, kPointSums = 1, kExtentSums = 2, kAllSums = 3, kFiniteInput = 4 };

/// Sums over the sampled boxes, per axis. Boxes with a non-finite bound
/// are left out.
struct AxisSample {
  std::size_t count = 0;                ///< boxes sampled
  std::array<double, 3> lo{}, hi{};     ///< the least and greatest point
  std::array<double, 3> sum{}, sum2{};  ///< of the points, and of their squares (kPointSums)
  std::array<double, 3> extent{};       ///< of the extents max - min, in double (kExtentSums)

  double mean(int k) const noexcept { return count > 0 ? sum[k] / double(count) : 0.0; }
  /// The variance of the points (0 when none).
  double variance(int k) const noexcept {
    return count > 0 ? std::max(0.0, sum2[k] / double(count) - mean(k) * mean(k)) : 0.0;
  }
  double mean_extent(int k) const noexcept { return count > 0 ? extent[k] / double(count) : 0.0; }
};

/// The stride that samples at most about `most` of n items.
inline std::size_t sample_stride(std::size_t n, std::size_t most) { return std::max<std::size_t>(1, n / most); }

/// Adds box_at(i) for i = 0, stride, 2 * stride, ... below n to `sample`;
/// with `extents`, also appends each sampled box's extent on axis k to
/// (*extents)[k]. kFlags: SampleFlags.
template <SamplePoint kPoint, unsigned kFlags, class BoxAt>
void add_sample(AxisSample& sample, std::size_t n, std::size_t stride, BoxAt&& box_at,
                std::array<std::vector<double>, 3>* extents = nullptr) {
  AxisSample s = sample;  // kept in registers by the loop
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (s.count == 0) s.lo.fill(kInf), s.hi.fill(-kInf);
  for (std::size_t i = 0; i < n; i += stride) {
    const Box3& b = box_at(i);
    if constexpr ((kFlags & kFiniteInput) == 0) {
      int finite = 1;  // no branch per axis
      for (int k = 0; k < 3; ++k) finite &= int(std::isfinite(b.min[k])) & int(std::isfinite(b.max[k]));
      if (finite == 0) continue;
    }
    for (int k = 0; k < 3; ++k) {
      double p;
      if constexpr (kPoint == SamplePoint::kCentre) {
        p = 0.5 * double(b.min[k]) + 0.5 * double(b.max[k]);
      } else if constexpr (kPoint == SamplePoint::kFloatCentre) {
        p = 0.5f * b.min[k] + 0.5f * b.max[k];
      } else {
        p = b.min[k];
      }
      const double e = double(b.max[k]) - double(b.min[k]);
      s.lo[k] = std::min(s.lo[k], p);
      s.hi[k] = std::max(s.hi[k], p);
      if constexpr ((kFlags & kPointSums) != 0) s.sum[k] += p, s.sum2[k] += p * p;
      if constexpr ((kFlags & kExtentSums) != 0) s.extent[k] += e;
      if (extents != nullptr) (*extents)[k].push_back(e);
    }
    ++s.count;
  }
  if (s.count == 0) s.lo = s.hi = {};
  sample = s;
}

/// The same for boxes[0], boxes[stride], ...
template <SamplePoint kPoint, unsigned kFlags>
void add_sample(AxisSample& sample, std::span<const Box3> boxes, std::size_t stride,
                std::array<std::vector<double>, 3>* extents = nullptr) {
  add_sample<kPoint, kFlags>(
      sample, boxes.size(), stride, [&](std::size_t i) -> const Box3& { return boxes[i]; }, extents);
}

/// The roles of the axes in a sweep on two axes: x and y swept, t tested
/// per candidate.
struct AxisRoles {
  int x = 0, y = 1, t = 2;
};

/// t the axis along which the sampled points spread least in units of
/// unit[k] (most pairs overlap on it), x the one of the other two along
/// which they spread most, y the last. A zero unit counts as no spread if
/// the points do not spread either, else as infinite spread.
inline AxisRoles axis_roles(const AxisSample& sample, const std::array<double, 3>& unit) {
  std::array<double, 3> spread{};
  for (int k = 0; k < 3; ++k) {
    const double range = sample.hi[k] - sample.lo[k];
    spread[k] = unit[k] > 0 ? range / unit[k] : (range > 0 ? std::numeric_limits<double>::infinity() : 0.0);
  }
  AxisRoles a;
  for (int k = 1; k >= 0; --k) {
    if (spread[k] < spread[a.t]) a.t = k;
  }
  const int u = a.t == 0 ? 1 : 0, v = a.t == 2 ? 1 : 2;
  a.x = spread[v] > spread[u] ? v : u;
  a.y = a.x == u ? v : u;
  return a;
}

}  // namespace sapling::detail
