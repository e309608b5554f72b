// Bounds on float differences that hold despite rounding, for searches that
// start a sorted scan at "every min that can still reach x": a box's extent
// hi - lo computed in double is exact only while the two floats' exponents
// lie close; a tiny lo under a large hi (-1e-30 under 4.5) rounds it, maybe
// down, and a scan from x less that rounded extent would miss the box.
#pragma once

#include <cmath>
#include <limits>

namespace sapling::detail {

/// At least hi - lo, for lo <= hi: the largest extent a box can have.
inline double extent_of(float lo, float hi) noexcept {
  if (lo == hi) return 0;  // also two equal infinities
  return std::nextafter(double(hi) - double(lo), std::numeric_limits<double>::infinity());
}

/// extent_of() of many boxes at once, from `widest`, the largest of their
/// differences double(hi) - double(lo) (a NaN one, of two equal infinities,
/// left out, as std::max(widest, d) does): stepped up once, it bounds every
/// box's extent_of() (which is monotone), with one nextafter() call in all
/// rather than one a box (a million of them in a frame 0 took 4 ms).
inline double extent_of_widest(double widest) noexcept {
  return widest > 0 ? std::nextafter(widest, std::numeric_limits<double>::infinity()) : 0;
}

/// At most x - e: no interval of extent at most e that reaches x starts
/// below it. -inf when that is all there is to say.
inline float reach_below(float x, double e) noexcept {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr double kFloatMax = std::numeric_limits<float>::max();
  const double lo = double(x) - e;
  if (!(lo > -kFloatMax)) return -kInf;  // also NaN: inf - inf
  if (lo > kFloatMax) return kInf;       // x = +inf and e finite: only +inf reaches it
  // Step below the subtraction's rounding, then round down to a float.
  const double below = std::nextafter(lo, -std::numeric_limits<double>::infinity());
  float f = static_cast<float>(below);
  if (double(f) > below) f = std::nextafter(f, -kInf);
  return f;
}

}  // namespace sapling::detail
