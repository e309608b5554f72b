// Ray casts: which boxes a segment meets, and where it enters each.
//
// A ray has an origin o, a direction d and a largest parameter max_t; it is
// the segment of points o + t*d for t in [0, max_t]. It hits a closed box
// when some point of the segment lies in the box; the hit's parameter is
// the smallest such t (0 when the origin is inside the box), its *entry*.
// With a unit direction, t is the distance from the origin.
//
// The computation is defined exactly, so that every structure (and the
// brute-force reference of the tests) reports the same hits, bit for bit:
// in double precision, starting from [enter, leave] = [0, max_t], for each
// axis k:
//   - d[k] == 0: the ray misses unless box.min[k] <= o[k] <= box.max[k];
//   - else near = (box.min[k] - o[k]) / d[k], far = (box.max[k] - o[k]) / d[k]
//     (swapped when d[k] < 0), enter = max(enter, near), leave = min(leave, far);
// the ray hits when enter <= leave and enter is finite; the reported t is
// enter rounded to float. Infinite box bounds give infinite near/far values
// and behave as limits do (a ground plane from -inf to +inf is met wherever
// the ray crosses its finite axis); a box out at +inf is never met. Since
// each step is monotone in the box's bounds, a box that contains another is
// met wherever the inner one is, at an entry no later: trees may cull by
// their nodes' boxes without changing any answer.
//
// A valid ray has finite origin and direction, a direction other than zero,
// and max_t >= 0 (+inf allowed); check_ray() says what is wrong otherwise.
// It checks the ray alone: a 2D broad phase also refuses a Ray3 that leaves
// its plane (BroadPhase::ray_cast()).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "sapling/box.hpp"
#include "sapling/pair.hpp"

namespace sapling {

template <int D>
struct Ray {
  static_assert(D == 2 || D == 3, "sapling rays have 2 or 3 dimensions");
  std::array<float, D> origin{};
  std::array<float, D> direction{};
  float max_t = std::numeric_limits<float>::infinity();

  friend constexpr bool operator==(const Ray&, const Ray&) = default;
};

using Ray2 = Ray<2>;
using Ray3 = Ray<3>;

/// A 2D ray in the plane z = 0, as 3D: it meets a lifted box exactly where
/// the 2D ray meets the 2D box.
constexpr Ray3 lift(const Ray2& r) noexcept {
  return Ray3{{r.origin[0], r.origin[1], 0.0f}, {r.direction[0], r.direction[1], 0.0f}, r.max_t};
}

/// One object a ray meets and its entry parameter.
struct RayHit {
  Id id = 0;
  float t = 0.0f;

  friend constexpr bool operator==(const RayHit&, const RayHit&) = default;
  /// The order of a ray's hits: by entry, then by id.
  friend constexpr bool operator<(const RayHit& x, const RayHit& y) noexcept {
    return x.t < y.t || (x.t == y.t && x.id < y.id);
  }
};

enum class RayFault : std::uint8_t {
  kNone,
  kOrigin,         ///< origin[axis] is NaN or infinite
  kDirection,      ///< direction[axis] is NaN or infinite
  kZeroDirection,  ///< every direction component is zero
  kMaxT,           ///< max_t is NaN or negative
};

struct RayCheck {
  RayFault fault = RayFault::kNone;
  std::uint8_t axis = 0;
  constexpr explicit operator bool() const noexcept { return fault == RayFault::kNone; }
};

template <int D>
constexpr RayCheck check_ray(const Ray<D>& r) noexcept {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  bool moving = false;
  for (int k = 0; k < D; ++k) {
    const auto axis = static_cast<std::uint8_t>(k);
    if (!(r.origin[k] > -kInf && r.origin[k] < kInf)) return {RayFault::kOrigin, axis};
    if (!(r.direction[k] > -kInf && r.direction[k] < kInf)) return {RayFault::kDirection, axis};
    moving |= r.direction[k] != 0.0f;
  }
  if (!moving) return {RayFault::kZeroDirection, 0};
  if (!(r.max_t >= 0.0f)) return {RayFault::kMaxT, 0};
  return {};
}

namespace detail {
/// The computation above on the first `axes` axes, in double, for an origin
/// and a box of float or double bounds (a large world's exact boxes in
/// world coordinates: BroadPhase::ray_cast() with Options::exact_pairs).
template <class Origin, class Direction, class AnyBox>
inline bool slab_interval(const Origin& o, const Direction& dir, double max_t, const AnyBox& box, int axes,
                          double& enter, double& leave) noexcept {
  enter = 0.0, leave = max_t;
  for (int k = 0; k < axes; ++k) {
    const double ok = o[k], d = dir[k];
    if (d == 0.0) {
      if (ok < box.min[k] || ok > box.max[k]) return false;
      continue;
    }
    double near = (static_cast<double>(box.min[k]) - ok) / d;
    double far = (static_cast<double>(box.max[k]) - ok) / d;
    if (d < 0.0) std::swap(near, far);
    enter = std::max(enter, near);
    leave = std::min(leave, far);
  }
  return enter <= leave && enter != std::numeric_limits<double>::infinity();
}
}  // namespace detail

/// Where the valid ray `r` is inside `box`: [enter, leave] in double, the
/// computation above step by step (each slab's parameters, the largest
/// entry and the smallest exit, within [0, max_t]); false if it misses.
template <int D>
inline bool ray_interval(const Ray<D>& r, const Box<D>& box, double& enter, double& leave) noexcept {
  return detail::slab_interval(r.origin, r.direction, r.max_t, box, D, enter, leave);
}

/// Whether the valid ray `r` meets `box`; if so its entry parameter goes to
/// `t` (ray_interval()'s entry, rounded to float).
template <int D>
inline bool ray_entry(const Ray<D>& r, const Box<D>& box, float& t) noexcept {
  double enter = 0.0, leave = 0.0;
  if (!ray_interval(r, box, enter, leave)) return false;
  t = static_cast<float>(enter);
  return true;
}

}  // namespace sapling
