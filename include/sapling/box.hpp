// Axis-aligned boxes in 2 and 3 dimensions, the overlap test that defines the
// library's semantics, and the validation every input box goes through.
//
// Semantics (docs/trace-format.md): intervals are closed, so boxes that
// only touch overlap; point boxes are valid; -inf and +inf are valid
// coordinates; NaN never is; min > max on any axis is invalid; -0.0 == +0.0
// (which float comparison already guarantees).
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>

namespace sapling {

/// An axis-aligned box with float bounds; `min[k] <= max[k]` on every axis.
template <int D>
struct Box {
  static_assert(D == 2 || D == 3, "sapling boxes have 2 or 3 dimensions");
  static constexpr int kDims = D;
  std::array<float, D> min{};
  std::array<float, D> max{};

  friend constexpr bool operator==(const Box&, const Box&) = default;
};

using Box2 = Box<2>;
using Box3 = Box<3>;

/// A box with double bounds, for worlds larger than float resolves (a planet,
/// a streamed open world): the broad phase keeps it rounded outward to a
/// float box (outward()), so that no overlap is lost.
template <int D>
struct BoxD {
  static_assert(D == 2 || D == 3, "sapling boxes have 2 or 3 dimensions");
  static constexpr int kDims = D;
  std::array<double, D> min{};
  std::array<double, D> max{};

  friend constexpr bool operator==(const BoxD&, const BoxD&) = default;
};

using Box2d = BoxD<2>;
using Box3d = BoxD<3>;

/// True when the closed boxes `a` and `b` share at least one point.
template <int D>
constexpr bool overlaps(const Box<D>& a, const Box<D>& b) noexcept {
  // Branch-free: every axis is compared, the results are combined as bits.
  unsigned result = 1;
  for (int k = 0; k < D; ++k) {
    result &= static_cast<unsigned>(a.min[k] <= b.max[k]) & static_cast<unsigned>(b.min[k] <= a.max[k]);
  }
  return result != 0;
}

/// The smallest box that contains both `a` and `b`.
template <int D>
constexpr Box<D> enclosing(const Box<D>& a, const Box<D>& b) noexcept {
  Box<D> u;
  for (int k = 0; k < D; ++k) {
    u.min[k] = b.min[k] < a.min[k] ? b.min[k] : a.min[k];  // std::min and std::max, without <algorithm>
    u.max[k] = a.max[k] < b.max[k] ? b.max[k] : a.max[k];
  }
  return u;
}

/// A 2D box seen as a 3D box of zero thickness at z = 0. Lifting keeps every
/// overlap relation exactly, so algorithms work on 3D boxes only.
constexpr Box3 lift(const Box2& b) noexcept { return Box3{{b.min[0], b.min[1], 0.0f}, {b.max[0], b.max[1], 0.0f}}; }

/// The float next to `f` toward +inf (`up`) or -inf where `step`, else
/// `f`: std::nextafter's answer, inline and without branches (the library
/// call, and a branch on data that goes either way, cost more than the
/// rounding around them). `f` is not NaN, and not an infinity stepped
/// further out.
inline float step_float(float f, bool up, bool step = true) noexcept {
  const auto bits = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t away_from_zero = ((bits >> 31) == 0) == up;  // 1 or 0
  const std::uint32_t stepped = bits + 2 * away_from_zero - 1;
  const std::uint32_t least = 0x80000001u ^ (std::uint32_t{up} << 31);       // from +-0: the least subnormal
  const std::uint32_t zero = 0u - std::uint32_t{(bits & 0x7fffffffu) == 0};  // all ones or none
  const std::uint32_t moved = (least & zero) | (stepped & ~zero);
  const std::uint32_t keep = 0u - std::uint32_t{!step};
  return std::bit_cast<float>((bits & keep) | (moved & ~keep));
}

/// The largest float at most `x` (-inf below the float range).
inline float round_down(double x) noexcept {
  float f = static_cast<float>(x);
  if (double(f) > x) f = step_float(f, false);
  return f;
}

/// The smallest float at least `x` (+inf above the float range).
inline float round_up(double x) noexcept {
  float f = static_cast<float>(x);
  if (double(f) < x) f = step_float(f, true);
  return f;
}

/// The smallest float box that holds `b`: min rounded down, max rounded up.
/// Two double boxes that overlap have outward boxes that overlap.
template <int D>
inline Box<D> outward(const BoxD<D>& b) noexcept {
  Box<D> f;
  for (int k = 0; k < D; ++k) f.min[k] = round_down(b.min[k]), f.max[k] = round_up(b.max[k]);
  return f;
}

/// a + b rounded to a float toward -inf (`up` false) or +inf (`up` true),
/// exactly, where the double sum itself rounds: s = a + b in double and the
/// error term e with s + e == a + b (Knuth's TwoSum) decide the side, as
/// for 1 - 1e-30, whose double is 1. An infinite sum stays infinite.
inline float round_sum(double a, double b, bool up) noexcept {
  const double s = a + b;
  const float f = static_cast<float>(s);
  const double rounded = f;
  // The side is data, a branch on it a coin toss: a comparison instead.
  bool wrong_side = up ? rounded < s : rounded > s;
  // Only where the float is the double sum itself does the error term
  // decide; a world's coordinates are either mostly floats (a branch taken
  // throughout) or mostly not (never taken), so TwoSum is paid only there.
  if (rounded == s) {
    const double back = s - a;
    const double error = (a - (s - back)) + (b - back);  // NaN where s is infinite: no step then
    wrong_side = up ? error > 0 : error < 0;
  }
  return step_float(f, up, wrong_side);
}

/// `b` grown by `distance` (>= 0, finite) on every side: the smallest float
/// box that holds the real box [min - distance, max + distance].
template <int D>
inline Box<D> grown(const Box<D>& b, float distance) noexcept {
  if (distance == 0.0f) return b;
  Box<D> g;
  for (int k = 0; k < D; ++k) {
    g.min[k] = round_sum(b.min[k], -double(distance), false);
    g.max[k] = round_sum(b.max[k], double(distance), true);
  }
  return g;
}

/// What is wrong with a box, if anything.
enum class BoxFault : std::uint8_t {
  kNone,
  kNanMin,         ///< min[axis] is NaN
  kNanMax,         ///< max[axis] is NaN
  kMinGreaterMax,  ///< min[axis] > max[axis]
  kOffPlane,       ///< z is not [0, 0] in a broad phase created with Options::dims = 2
};

struct BoxCheck {
  BoxFault fault = BoxFault::kNone;
  std::uint8_t axis = 0;
  constexpr explicit operator bool() const noexcept { return fault == BoxFault::kNone; }
};

/// Checks a box against the semantics: the first fault found, axis by axis.
template <class B>
constexpr BoxCheck check_box(const B& b) noexcept {
  constexpr int D = B::kDims;
  // One test for a good box (min <= max is false where either is NaN); the
  // fault is looked for only in a bad one.
  bool good = true;
  for (int k = 0; k < D; ++k) good &= b.min[k] <= b.max[k];
  if (good) return {};
  for (int k = 0; k < D; ++k) {
    const auto axis = static_cast<std::uint8_t>(k);
    if (b.min[k] != b.min[k]) return {BoxFault::kNanMin, axis};
    if (b.max[k] != b.max[k]) return {BoxFault::kNanMax, axis};
    if (b.min[k] > b.max[k]) return {BoxFault::kMinGreaterMax, axis};
  }
  return {};
}

}  // namespace sapling
