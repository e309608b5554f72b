// multi-sap's choice of cell size from the data: the edge s at which a cell
// holds about `per_cell` boxes on average (Tracy, Buss and Woods 2009,
// section 3.1, found about 300 best for their SAP cells; multi-sap's sorted
// cells do best at about 50: docs/algorithms/multi-sap.md). From a strided
// sample of the boxes, per axis k, the spread r_k of the centres and the
// mean extent e_k: a box
// meets a cell along k with probability about min(1, (s + e_k) / (r_k +
// e_k)), so s solves n * prod_k of that = per_cell (bisection on a log
// scale; the product grows with s). Boxes with an infinite bound are left
// out of the sample: they go to the outsized set whatever the size.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>

#include "detail/axis_sampler.hpp"
#include "sapling/box.hpp"

namespace sapling::detail {

/// The cell edge for `n` boxes like `boxes` (a sample of them will do) at
/// about `per_cell` boxes per cell, over `dims` axes (2: z is ignored).
inline double cell_size_for(std::span<const Box3> boxes, std::size_t n, int dims, double per_cell) {
  constexpr double kSmallest = 1e-30, kLargest = 1e30;  // 1 / s stays finite, coordinates / s too
  detail::AxisSample sample;
  detail::add_sample<detail::SamplePoint::kCentre, detail::kExtentSums>(sample, boxes,
                                                                        detail::sample_stride(boxes.size(), 4096));
  if (sample.count == 0) return 1.0;
  const auto boxes_per_cell = [&](double s) {
    double fraction = 1;
    for (int k = 0; k < dims; ++k) {
      const double e = sample.mean_extent(k), r = sample.hi[k] - sample.lo[k] + e;
      if (r > 0) fraction *= std::min(1.0, (s + e) / r);
    }
    return double(n) * fraction;
  };
  double lo = kSmallest, hi = kLargest;
  if (boxes_per_cell(hi) <= per_cell) {
    double widest = 0;  // everything fits in a few cells: one cell as wide as the world
    for (int k = 0; k < dims; ++k) widest = std::max(widest, sample.hi[k] - sample.lo[k] + sample.mean_extent(k));
    return std::clamp(widest, 1.0, kLargest);
  }
  for (int i = 0; i < 200 && hi > lo * 1.01; ++i) {
    const double mid = std::sqrt(lo * hi);
    (boxes_per_cell(mid) < per_cell ? lo : hi) = mid;
  }
  return hi;
}

}  // namespace sapling::detail
