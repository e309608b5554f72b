// A monotone map from a coordinate to one of `count` bins of equal width:
// box pruning's grid cells and the dual-axis sweep's strips, slabs and fine
// bins. Any rounding keeps it non-decreasing (x < y implies bin(x) <=
// bin(y)), which is all exactness needs: a coarse or skewed map costs
// candidates, never pairs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace sapling::detail {

struct MonotoneBins {
  float origin = 0.0f;
  float scale = 0.0f;  // bins per unit
  float last = 0.0f;   // count - 1
  std::uint32_t count = 1;

  std::uint32_t operator()(float v) const {
    if (count == 1) return 0;  // also keeps inf * 0 out
    // scale > 0 and origin are finite, so the product is never NaN; the
    // clamp maps -inf and +inf to the end bins.
    return static_cast<std::uint32_t>(std::min(std::max((v - origin) * scale, 0.0f), last));
  }

  /// `count` bins of equal width over [lo, hi]; one bin when that range is
  /// empty, infinite or too thin for a finite float scale.
  static MonotoneBins over(double lo, double hi, std::uint32_t count) {
    MonotoneBins b;
    const double span = hi - lo;
    if (count <= 1 || !(span > 0) || !std::isfinite(span)) return b;
    const double scale = double(count) / span;
    if (!(scale < 1e30)) return b;
    b.origin = static_cast<float>(lo);
    b.scale = static_cast<float>(scale);
    b.count = count;
    b.last = static_cast<float>(count - 1);
    return b;
  }

  /// Halves the number of bins (a coarser grid copies large boxes less).
  void halve() {
    if (count <= 1) return;
    scale *= float(count / 2) / float(count);
    count /= 2;
    last = float(count - 1);
    if (count == 1) *this = MonotoneBins{};
  }
};

}  // namespace sapling::detail
