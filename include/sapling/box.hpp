// Axis-aligned boxes in 2 and 3 dimensions, the overlap test that defines the
// library's semantics, and the validation every input box goes through.
//
// Semantics (docs/trace-format.md): intervals are closed, so boxes that
// only touch overlap; point boxes are valid; -inf and +inf are valid
// coordinates; NaN never is; min > max on any axis is invalid; -0.0 == +0.0
// (which float comparison already guarantees).
#pragma once

#include <array>
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
template <int D>
constexpr BoxCheck check_box(const Box<D>& b) noexcept {
  for (int k = 0; k < D; ++k) {
    const auto axis = static_cast<std::uint8_t>(k);
    if (b.min[k] != b.min[k]) return {BoxFault::kNanMin, axis};
    if (b.max[k] != b.max[k]) return {BoxFault::kNanMax, axis};
    if (b.min[k] > b.max[k]) return {BoxFault::kMinGreaterMax, axis};
  }
  return {};
}

}  // namespace sapling
