// Rays (include/sapling/ray.hpp): check_ray on every fault, ray_entry on
// hand-computed cases for each rule of the header's definition, and a
// cross-check against an independent reference (per-axis parameter
// intervals in long double): exact on grid-snapped rays whose arithmetic is
// exact, within a float ulp where the reference is far from a tie.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "sapling/ray.hpp"

namespace sapling {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNan = std::numeric_limits<float>::quiet_NaN();
const Box3 kUnit{{0, 0, 0}, {1, 1, 1}};

// The entry of `r` into `b`, or -1 for a miss.
float entry(const Ray3& r, const Box3& b) {
  float t = 0.0f;
  return ray_entry(r, b, t) ? t : -1.0f;
}

TEST(Ray, CheckNamesFaultAndAxis) {
  EXPECT_TRUE(check_ray(Ray3{{0, 0, 0}, {1, 0, 0}, kInf}));
  EXPECT_TRUE(check_ray(Ray3{{0, 0, 0}, {0, 0, -1e-30f}, 0.0f}));
  EXPECT_TRUE(check_ray(Ray3{{FLT_MAX, -FLT_MAX, 0}, {FLT_MAX, 0, 0}, -0.0f}));
  auto fault = [](const Ray3& r) { return std::pair{check_ray(r).fault, int{check_ray(r).axis}}; };
  EXPECT_EQ(fault({{0, kNan, 0}, {1, 0, 0}, 1}), std::pair(RayFault::kOrigin, 1));
  EXPECT_EQ(fault({{0, 0, -kInf}, {1, 0, 0}, 1}), std::pair(RayFault::kOrigin, 2));
  EXPECT_EQ(fault({{0, 0, 0}, {kNan, 0, 0}, 1}), std::pair(RayFault::kDirection, 0));
  EXPECT_EQ(fault({{0, 0, 0}, {1, 0, kInf}, 1}), std::pair(RayFault::kDirection, 2));
  EXPECT_EQ(fault({{0, 0, 0}, {0, -0.0f, 0}, 1}), std::pair(RayFault::kZeroDirection, 0));
  EXPECT_EQ(fault({{0, 0, 0}, {1, 0, 0}, -1e-30f}), std::pair(RayFault::kMaxT, 0));
  EXPECT_EQ(fault({{0, 0, 0}, {1, 0, 0}, kNan}), std::pair(RayFault::kMaxT, 0));
  EXPECT_EQ(fault({{0, 0, 0}, {1, 0, 0}, -kInf}), std::pair(RayFault::kMaxT, 0));
  EXPECT_FALSE(check_ray(Ray2{{kNan, 0}, {1, 0}, 1}));
  EXPECT_TRUE(check_ray(Ray2{{0, 0}, {0, 1}, 1}));
}

TEST(Ray, ZeroComponents) {
  // d.y = d.z = 0: the origin's y and z must lie in the closed slabs.
  EXPECT_EQ(entry({{-3, 0.5f, 0.5f}, {1, 0, 0}, kInf}, kUnit), 3.0f);
  EXPECT_EQ(entry({{-3, 1, 0}, {1, 0, 0}, kInf}, kUnit), 3.0f);         // along an edge
  EXPECT_EQ(entry({{-3, 1, 0.5f}, {1, 0, -0.0f}, kInf}, kUnit), 3.0f);  // along a face; -0 is zero
  EXPECT_EQ(entry({{-3, std::nextafter(1.0f, 2.0f), 0.5f}, {1, 0, 0}, kInf}, kUnit), -1.0f);
  EXPECT_EQ(entry({{-3, 0.5f, -1e-30f}, {1, 0, 0}, kInf}, kUnit), -1.0f);
  EXPECT_EQ(entry({{0.5f, 5, 0.5f}, {0, -1, 0}, kInf}, kUnit), 4.0f);
}

TEST(Ray, OriginInsideOrOnTheBoundary) {
  EXPECT_EQ(entry({{0.5f, 0.5f, 0.5f}, {1, 2, 3}, kInf}, kUnit), 0.0f);
  EXPECT_EQ(entry({{0, 0, 0}, {-1, -1, -1}, kInf}, kUnit), 0.0f);          // leaving at a corner
  EXPECT_EQ(entry({{1, 0.5f, 0.5f}, {1, 0, 0}, kInf}, kUnit), 0.0f);       // on a face, going out
  EXPECT_EQ(entry({{0.5f, 0.5f, 0.5f}, {1, 0, 0}, 0.0f}, kUnit), 0.0f);    // max_t = 0 inside
  EXPECT_EQ(entry({{-0.5f, 0.5f, 0.5f}, {1, 0, 0}, 0.0f}, kUnit), -1.0f);  // and outside
}

TEST(Ray, BehindAndDirections) {
  EXPECT_EQ(entry({{2, 0.5f, 0.5f}, {1, 0, 0}, kInf}, kUnit), -1.0f);  // the box is behind
  EXPECT_EQ(entry({{5, 0.5f, 0.5f}, {-1, 0, 0}, kInf}, kUnit), 4.0f);
  EXPECT_EQ(entry({{5, 0.5f, 0.5f}, {-2, 0, 0}, kInf}, kUnit), 2.0f);  // t in units of the direction
  EXPECT_EQ(entry({{-1, 0.5f, 0.5f}, {1e30f, 0, 0}, kInf}, kUnit), static_cast<float>(1.0 / 1e30f));
  EXPECT_EQ(entry({{-1, 0.5f, 0.5f}, {1e-30f, 0, 0}, kInf}, kUnit), static_cast<float>(1.0 / 1e-30f));
  EXPECT_EQ(entry({{-1, 0.5f, 0.5f}, {1e-30f, 0, 0}, 1e29f}, kUnit), -1.0f);
  EXPECT_EQ(entry({{-1, -1, -1}, {1, 1, 1}, kInf}, kUnit), 1.0f);  // in through a corner
}

TEST(Ray, TouchingOnlyAnEdgeOrACorner) {
  // x = 2 - t, y = t meet [0, 1]^2 only at t = 1, the edge x = y = 1.
  EXPECT_EQ(entry({{2, 0, 0.5f}, {-1, 1, 0}, kInf}, kUnit), 1.0f);
  // And with z = 2 - t, only the corner (1, 1, 1).
  EXPECT_EQ(entry({{2, 0, 2}, {-1, 1, -1}, kInf}, kUnit), 1.0f);
  EXPECT_EQ(entry({{2.5f, 0, 2}, {-1, 1, -1}, kInf}, kUnit), -1.0f);
  EXPECT_EQ(entry({{2, 0, 2}, {-1, 1, -1}, 0.99f}, kUnit), -1.0f);  // cut just before
}

TEST(Ray, PointBoxes) {
  const Box3 point{{1, 1, 1}, {1, 1, 1}};
  EXPECT_EQ(entry({{0, 0, 0}, {1, 1, 1}, kInf}, point), 1.0f);
  EXPECT_EQ(entry({{0, 0, 0}, {2, 2, 2}, kInf}, point), 0.5f);
  EXPECT_EQ(entry({{0, 0, 0}, {1, 1, 1.0001f}, kInf}, point), -1.0f);
  EXPECT_EQ(entry({{1, 1, 1}, {0, 0, 1}, 0.0f}, point), 0.0f);
  EXPECT_EQ(entry({{1, 0, 1}, {0, 1, 0}, kInf}, point), 1.0f);
}

TEST(Ray, InfiniteBoxes) {
  const Box3 plane{{-kInf, -kInf, 0}, {kInf, kInf, 0}};
  EXPECT_EQ(entry({{3, 4, 5}, {1, 0, -1}, kInf}, plane), 5.0f);
  EXPECT_EQ(entry({{3, 4, 5}, {1e30f, -1e30f, -1}, kInf}, plane), 5.0f);
  EXPECT_EQ(entry({{3, 4, 5}, {1, 0, 0}, kInf}, plane), -1.0f);  // parallel above
  EXPECT_EQ(entry({{3, 4, 0}, {1, 0, 0}, kInf}, plane), 0.0f);   // parallel within
  EXPECT_EQ(entry({{3, 4, 5}, {0, 0, 1}, kInf}, plane), -1.0f);  // away
  const Box3 half{{-kInf, -kInf, -kInf}, {kInf, kInf, 0}};
  EXPECT_EQ(entry({{3, 4, 5}, {0, 0, -0.5f}, kInf}, half), 10.0f);
  const Box3 everything{{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}};
  EXPECT_EQ(entry({{3, 4, 5}, {1, 2, 3}, 0.0f}, everything), 0.0f);
  // Out at +inf: never met, even by a ray heading there without end.
  const Box3 far{{kInf, 0, 0}, {kInf, 1, 1}};
  EXPECT_EQ(entry({{0, 0.5f, 0.5f}, {1, 0, 0}, kInf}, far), -1.0f);
  EXPECT_EQ(entry({{0, 0.5f, 0.5f}, {FLT_MAX, 0, 0}, kInf}, far), -1.0f);
  // +-FLT_MAX bounds are finite: met where the arithmetic says.
  const Box3 huge{{FLT_MAX, 0, 0}, {FLT_MAX, 1, 1}};
  EXPECT_EQ(entry({{0, 0.5f, 0.5f}, {1, 0, 0}, kInf}, huge), FLT_MAX);
  // Entry 2*FLT_MAX: finite in double, so a hit, reported as float: +inf.
  EXPECT_EQ(entry({{0, 0.5f, 0.5f}, {0.5f, 0, 0}, kInf}, huge), kInf);
  EXPECT_EQ(entry({{0, 0.5f, 0.5f}, {0.5f, 0, 0}, FLT_MAX}, huge), -1.0f);
}

TEST(Ray, MaxTCutsAtAFace) {
  const Box3 b{{2, 0, 0}, {3, 1, 1}};
  EXPECT_EQ(entry({{0, 0.5f, 0.5f}, {1, 0, 0}, 2.0f}, b), 2.0f);  // closed: the face counts
  EXPECT_EQ(entry({{0, 0.5f, 0.5f}, {1, 0, 0}, std::nextafter(2.0f, 0.0f)}, b), -1.0f);
  EXPECT_EQ(entry({{0, 0.5f, 0.5f}, {0.5f, 0, 0}, 4.0f}, b), 4.0f);
  EXPECT_EQ(entry({{4, 0.5f, 0.5f}, {-1, 0, 0}, 1.0f}, b), 1.0f);
}

// An independent reference: the parameter interval of each slab in long
// double, intersected with [0, max_t]; a hit needs a finite entry.
bool reference_entry(const Ray3& r, const Box3& b, long double& t) {
  long double lo = 0.0L, hi = r.max_t;
  for (int k = 0; k < 3; ++k) {
    const long double o = r.origin[k], d = r.direction[k], mn = b.min[k], mx = b.max[k];
    long double a = -INFINITY, c = INFINITY;
    if (d > 0) {
      a = (mn - o) / d, c = (mx - o) / d;
    } else if (d < 0) {
      a = (mx - o) / d, c = (mn - o) / d;
    } else if (o < mn || o > mx) {
      return false;
    }
    if (a > lo) lo = a;
    if (c < hi) hi = c;
  }
  t = lo;
  return lo <= hi && std::isfinite(lo);
}

// Grid values in quarters and power-of-two directions: every step is exact,
// so the two must agree bit for bit, ties and touching faces included.
TEST(Ray, SameAsReferenceOnExactGrid) {
  std::mt19937 rng(7);
  auto grid = [&] { return std::uniform_int_distribution<int>(-12, 12)(rng) * 0.25f; };
  auto dir = [&] {
    static constexpr std::array<float, 7> kDirs = {0.0f, 1.0f, -1.0f, 0.5f, -0.25f, 2.0f, -4.0f};
    return kDirs[std::uniform_int_distribution<std::size_t>(0, kDirs.size() - 1)(rng)];
  };
  int hits = 0;
  for (int i = 0; i < 200000; ++i) {
    Ray3 r{{grid(), grid(), grid()}, {dir(), dir(), dir()}, 0.0f};
    if (r.direction == std::array<float, 3>{0, 0, 0}) continue;
    const int m = std::uniform_int_distribution<int>(0, 3)(rng);
    r.max_t = m == 0 ? kInf : m == 1 ? 0.0f : std::abs(grid());
    Box3 b;
    for (int k = 0; k < 3; ++k) {
      b.min[k] = grid(), b.max[k] = grid();
      if (b.min[k] > b.max[k]) std::swap(b.min[k], b.max[k]);
      if (std::uniform_int_distribution<int>(0, 19)(rng) == 0) b.min[k] = -kInf;
      if (std::uniform_int_distribution<int>(0, 19)(rng) == 0) b.max[k] = kInf;
    }
    long double expected = 0;
    const bool hit = reference_entry(r, b, expected);
    float t = -1;
    ASSERT_EQ(ray_entry(r, b, t), hit) << "case " << i;
    if (hit) {
      ASSERT_EQ(t, static_cast<float>(expected)) << "case " << i;
    }
    hits += hit;
  }
  EXPECT_GT(hits, 10000);
}

// Arbitrary floats: where the reference's entry and exit are well apart, the
// hit must agree and the entry be within an ulp or two of the reference's.
TEST(Ray, SameAsReferenceOnRandomFloats) {
  std::mt19937 rng(8);
  std::uniform_real_distribution<float> u(-10.0f, 10.0f);
  int compared = 0;
  for (int i = 0; i < 200000; ++i) {
    const Ray3 r{{u(rng), u(rng), u(rng)}, {u(rng), u(rng), u(rng)}, i % 3 == 0 ? kInf : std::abs(u(rng))};
    Box3 b;
    for (int k = 0; k < 3; ++k) {
      b.min[k] = u(rng), b.max[k] = u(rng);
      if (b.min[k] > b.max[k]) std::swap(b.min[k], b.max[k]);
    }
    // The margin of the reference's decision: the gap between entry and exit.
    long double lo = 0.0L, hi = r.max_t;
    for (int k = 0; k < 3; ++k) {
      const long double o = r.origin[k], d = r.direction[k];
      long double a = (b.min[k] - o) / d, c = (b.max[k] - o) / d;
      if (d < 0) std::swap(a, c);
      lo = std::max(lo, a), hi = std::min(hi, c);
    }
    if (std::abs(hi - lo) < 1e-4L) continue;  // too near a tie for long double to settle
    long double expected = 0;
    const bool hit = reference_entry(r, b, expected);
    float t = -1;
    ASSERT_EQ(ray_entry(r, b, t), hit) << "case " << i;
    if (hit) {
      ASSERT_NEAR(t, static_cast<double>(expected), 4 * std::abs(static_cast<double>(expected)) * FLT_EPSILON + 1e-37);
    }
    ++compared;
  }
  EXPECT_GT(compared, 150000);
}

TEST(Ray, TwoDimensionsLiftExactly) {
  const Box2 b{{1, 1}, {2, 3}};
  const Ray2 r{{0, 0}, {1, 1}, kInf};
  float t2 = -1, t3 = -1;
  ASSERT_TRUE(ray_entry(r, b, t2));
  ASSERT_TRUE(ray_entry(lift(r), lift(b), t3));
  EXPECT_EQ(t2, 1.0f);
  EXPECT_EQ(t2, t3);
}

}  // namespace
}  // namespace sapling
