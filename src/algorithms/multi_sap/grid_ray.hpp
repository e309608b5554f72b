// A ray through multi-sap's grid (cell_grid.hpp): every box of one
// generation's cells the ray meets, each once, exactly as ray_entry() says.
//
// The walk steps along the ray cell boundary by boundary (3D DDA), from where
// it enters to where it leaves a box holding every cell of the generation's
// extent: every box of the grid lies in it, so by ray.hpp's monotony each
// hit's entry lies between the two, and the walk ends even for an infinite
// max_t. A step is a parameter interval [ta, tb] of the ray; it visits the
// cells of its segment's bounding box grown by a margin M per axis, R_s.
//
// Exactness. ray_entry() rounds: it may report a box the exact ray misses by
// a relative 2^-52 of the coordinates. At a hit's entry t (in the step that
// holds it) the exact point lies within 2^-51 (|b| + |o|) of the box on each
// axis; M = 2^-40 (|o| + the grid's coordinate limit in cells times the
// size) covers that and the rounding of the step's points (beyond the limit
// every coordinate is the clamped cell's), so R_s meets the box's cell range.
// A ray whose M reaches a cell (an origin some 2^40 cells away) is not
// walked: walkable() says so (nor one crossing far more cells than are live), and the caller answers otherwise.
//
// Each once. R_s moves monotonically along each axis (M is constant, the
// points and the cell coordinate monotone in t), so a range met by R_s and
// by an earlier step is met by R_{s-1}. A box is reported in the first step
// whose R_s meets its range, from the cell at the least corner of the two
// ranges' intersection, a cell no earlier step visited: each step visits
// only the cells of R_s outside R_{s-1}.
//
// Closest hits: a box first met in a later step enters at or after that
// step's start, so the walk stops once the start, rounded to float, passes
// the bound.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "algorithms/multi_sap/cell_grid.hpp"
#include "sapling/ray.hpp"

namespace sapling::detail {

class GridRay {
 public:
  GridRay(const CellGrid& grid, const Ray3& ray, int gen, bool flat) noexcept
      : grid_(grid), ray_(ray), gen_(gen), flat_(flat), size_(grid.cell_size(gen)), inverse_(1.0 / size_) {
    for (int k = 0; k < 3; ++k) margin_[k] = 0x1p-40 * (std::abs(double(ray.origin[k])) + kLimit * size_);
  }

  /// Whether the margin stays below a cell on every axis and the walk
  /// crosses at most `most` cells (else walk() would visit far too many, as
  /// across a grid whose extent reaches the clamped cells: the caller
  /// answers some other way).
  bool walkable(std::size_t most) const noexcept {
    for (int k = 0; k < 3; ++k) {
      if (!(margin_[k] < size_)) return false;
    }
    double t0 = 0.0, t1 = 0.0;
    if (!span(t0, t1)) return true;
    double crossed = 0;
    for (int k = 0; k < (flat_ ? 2 : 3); ++k) {
      if (ray_.direction[k] == 0) continue;
      const CellRange& e = grid_.extent(gen_);
      const auto a = std::clamp(coord(at(k, t0)), e.lo[k], e.hi[k]), b = std::clamp(coord(at(k, t1)), e.lo[k], e.hi[k]);
      crossed += std::abs(double(b) - double(a));
    }
    return crossed <= double(most);
  }

  /// Calls hit(entry, t) for every entry of the generation's cells that the
  /// ray meets within `bound`, each box once; hit returns the new bound.
  template <class Hit>
  void walk(float bound, Hit&& hit) const;

 private:
  static constexpr double kInf = std::numeric_limits<double>::infinity();
  static constexpr double kLimit = CellGrid::kCoordLimit + 2;

  // grid.coord() on a double: floor(x / size), clamped; non-decreasing in x.
  std::int32_t coord(double x) const noexcept {
    const double t = std::floor(x * inverse_);
    if (!(t > -double(CellGrid::kCoordLimit))) return -CellGrid::kCoordLimit;
    if (t > double(CellGrid::kCoordLimit)) return CellGrid::kCoordLimit;
    return static_cast<std::int32_t>(t);
  }
  // The ray's point on axis k at t (t may be infinite).
  double at(int k, double t) const noexcept {
    const double d = ray_.direction[k];
    return d == 0 ? double(ray_.origin[k]) : double(ray_.origin[k]) + t * d;
  }
  // The boundary-crossing parameter of axis k toward boundary j (the lower
  // edge of cell j), or +inf once it leads out of the extent.
  double crossing(int k, std::int32_t j, const CellRange& e) const noexcept {
    const double d = ray_.direction[k];
    if (d > 0 ? j > e.hi[k] : j <= e.lo[k]) return kInf;
    return (double(j) * size_ - double(ray_.origin[k])) / d;
  }
  // R_s for the parameters [ta, tb], within the extent e.
  CellRange cells_of(double ta, double tb, const CellRange& e) const noexcept {
    CellRange r;
    for (int k = 0; k < 3; ++k) {
      const double a = at(k, ta), b = at(k, tb);
      r.lo[k] = std::max(e.lo[k], coord(std::min(a, b) - margin_[k]));
      r.hi[k] = std::min(e.hi[k], coord(std::max(a, b) + margin_[k]));
    }
    if (flat_) r.lo[2] = r.hi[2] = 0;
    return r;
  }
  static bool meet(const CellRange& a, const CellRange& b) noexcept {
    for (int k = 0; k < 3; ++k) {
      if (a.lo[k] > b.hi[k] || b.lo[k] > a.hi[k]) return false;
    }
    return true;
  }
  // A float box holding every box whose cell range lies in e (margins over
  // the rounding of coord(); the clamped cells reach infinity).
  Box3 region(const CellRange& e) const noexcept;
  // Where the ray enters and leaves the region of the extent
  // (ray_interval()); false if it misses it or there is no cell.
  bool span(double& t0, double& t1) const noexcept {
    const CellRange& e = grid_.extent(gen_);
    if (e.lo[0] > e.hi[0]) return false;
    return ray_interval(ray_, region(e), t0, t1);
  }

  const CellGrid& grid_;
  const Ray3& ray_;
  int gen_;
  bool flat_;
  double size_, inverse_;
  double margin_[3];
};

inline Box3 GridRay::region(const CellRange& e) const noexcept {
  constexpr float kFloatInf = std::numeric_limits<float>::infinity();
  constexpr double kMax = std::numeric_limits<float>::max();
  Box3 b{{-kFloatInf, -kFloatInf, -kFloatInf}, {kFloatInf, kFloatInf, kFloatInf}};
  for (int k = 0; k < (flat_ ? 2 : 3); ++k) {
    if (e.lo[k] > -CellGrid::kCoordLimit) {
      const double lo = double(e.lo[k]) * size_ - (std::abs(double(e.lo[k])) + 1) * size_ * 0x1p-40;
      if (lo > kMax) {
        b.min[k] = float(kMax);
      } else if (lo >= -kMax) {
        b.min[k] = static_cast<float>(lo);
        if (double(b.min[k]) > lo) b.min[k] = std::nextafter(b.min[k], -kFloatInf);
      }
    }
    if (e.hi[k] < CellGrid::kCoordLimit) {
      const double hi = double(e.hi[k] + 1) * size_ + (std::abs(double(e.hi[k])) + 2) * size_ * 0x1p-40;
      if (hi < -kMax) {
        b.max[k] = -float(kMax);
      } else if (hi <= kMax) {
        b.max[k] = static_cast<float>(hi);
        if (double(b.max[k]) < hi) b.max[k] = std::nextafter(b.max[k], kFloatInf);
      }
    }
  }
  return b;
}

template <class Hit>
void GridRay::walk(float bound, Hit&& hit) const {
  const CellRange& e = grid_.extent(gen_);
  double t0 = 0.0, t1 = 0.0;
  if (!span(t0, t1)) return;
  // Per moving axis, the next boundary j and the parameter where it is crossed.
  std::int32_t next[3] = {0, 0, 0};
  double cross[3] = {kInf, kInf, kInf};
  for (int k = 0; k < 3; ++k) {
    const double d = ray_.direction[k];
    if (d == 0 || (flat_ && k == 2)) continue;
    const std::int32_t c = coord(at(k, t0));
    next[k] = d > 0 ? c + 1 : c;
    cross[k] = crossing(k, next[k], e);
  }
  CellRange prev{};
  bool first = true;
  for (double ta = t0;;) {
    if (static_cast<float>(ta) > bound) return;
    const double tb = std::max(ta, std::min({t1, cross[0], cross[1], cross[2]}));
    const CellRange r = cells_of(ta, tb, e);
    const bool was = !first && meet(prev, prev);
    for (std::int32_t z = r.lo[2]; z <= r.hi[2]; ++z) {
      for (std::int32_t y = r.lo[1]; y <= r.hi[1]; ++y) {
        // This row's cells outside R_{s-1}: all, or up to two runs.
        const bool row_seen = was && prev.lo[2] <= z && z <= prev.hi[2] && prev.lo[1] <= y && y <= prev.hi[1];
        const std::int32_t runs[2][2] = {{r.lo[0], row_seen ? std::min(r.hi[0], prev.lo[0] - 1) : r.hi[0]},
                                         {row_seen ? std::max(r.lo[0], prev.hi[0] + 1) : 1, row_seen ? r.hi[0] : 0}};
        for (const auto& run : runs) {
          for (std::int32_t x = run[0]; x <= run[1]; ++x) {
            const CellGrid::Coord cell_at{x, y, z};
            const std::uint32_t cell = grid_.find(cell_at, gen_);
            if (cell == CellGrid::kNoCell) continue;
            grid_.for_each_entry(cell, [&](const CellGrid::Entry& en) {
              float t = 0;
              const Box3 b{en.min, en.max};
              if (!ray_entry(ray_, b, t) || t > bound) return;
              // Reported from the first step that meets its range, at the
              // least cell of the two ranges' intersection.
              const CellRange range = grid_.range(b, gen_);
              if (was && meet(range, prev)) return;
              for (int k = 0; k < 3; ++k) {
                if (std::max(range.lo[k], r.lo[k]) != cell_at[k]) return;
              }
              bound = hit(en, t);
            });
          }
        }
      }
    }
    if (!(tb < t1)) return;
    prev = r;
    first = false;
    for (int k = 0; k < 3; ++k) {
      // Past every boundary at or before tb (rounding may leave several).
      while (cross[k] <= tb) {
        next[k] += ray_.direction[k] > 0 ? 1 : -1;
        cross[k] = crossing(k, next[k], e);
      }
    }
    ta = tb;
  }
}

}  // namespace sapling::detail
