// dual-axis against brute, frame by frame through BroadPhase, on traces
// aimed at its design (the differential suite covers the general kinds):
// the widened range on y (extents equal to W, touching at the widened edge,
// coordinates where y.min - W rounds), outliers (a few giant, infinite or
// inf - inf boxes among small ones, and many outliers), lazy removal (long
// boxes on x among short ones), flat and non-flat third axes, 2D and 3D.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "same_as_brute.hpp"
#include "sapling/broad_phase.hpp"
#include "trace_generators.hpp"

namespace sapling {
namespace {

using testgen::expect_same_as_brute;
using testgen::Rng;
using testgen::TraceBuilder;

constexpr float kInf = std::numeric_limits<float>::infinity();

enum class Kind {
  kMixedSizes,      // log-uniform extents over two decades, on a coarse grid
  kEqualToW,        // one extent, lows on its multiples: touching at y.min - W
  kRoundingY,       // y near 3e7 (spacing 2), extents that round
  kGiants,          // 2% boxes a hundred times larger
  kInfinite,        // planes, half-spaces, points at infinity, among unit boxes
  kManyOutliers,    // 30% outliers
  kLongX,           // boxes very long on x among short ones (lazy removal)
  kFlatT,           // 3D, one plane on the third axis
  kHugeMagnitudes,  // coordinates near FLT_MAX and 1e-30
};

std::string kind_name(Kind k) {
  switch (k) {
    case Kind::kMixedSizes:
      return "mixed_sizes";
    case Kind::kEqualToW:
      return "equal_to_w";
    case Kind::kRoundingY:
      return "rounding_y";
    case Kind::kGiants:
      return "giants";
    case Kind::kInfinite:
      return "infinite";
    case Kind::kManyOutliers:
      return "many_outliers";
    case Kind::kLongX:
      return "long_x";
    case Kind::kFlatT:
      return "flat_t";
    case Kind::kHugeMagnitudes:
      return "huge_magnitudes";
  }
  return "?";
}

Box3 make_box(Kind kind, Rng& rng, double world) {
  Box3 b;
  for (int k = 0; k < 3; ++k) {
    float lo = std::floor(rng.uniform(0, world));
    float e = 1;
    switch (kind) {
      case Kind::kMixedSizes:
        e = std::exp2(std::floor(rng.uniform(-3, 4)));
        break;
      case Kind::kEqualToW:
        lo = 2.0f * float(rng.below(std::uint64_t(world / 2)));
        e = 2;
        break;
      case Kind::kRoundingY:
        if (k == 1) {
          lo = 3.0e7f + 2.0f * float(rng.below(64));
          e = (rng.chance(0.5) ? 6.0f : 4.0f);
        }
        break;
      case Kind::kGiants:
        e = rng.chance(0.02) ? 100.0f : 1.0f;
        break;
      case Kind::kManyOutliers:
        e = rng.chance(0.3) ? 40.0f : 1.0f;
        break;
      case Kind::kLongX:
        e = (k == 0 && rng.chance(0.1)) ? float(world) : 1.0f;
        break;
      case Kind::kFlatT:
        if (k == 2) lo = 3, e = 1;
        break;
      case Kind::kHugeMagnitudes:
        if (rng.chance(0.3)) {
          lo = rng.chance(0.5) ? FLT_MAX / 2 : -FLT_MAX;
          e = rng.chance(0.5) ? FLT_MAX / 2 : 0.0f;
        } else {
          lo = float(rng.below(8)) * 1e-30f;
          e = 1e-30f;
        }
        break;
      default:
        break;
    }
    b.min[k] = lo;
    b.max[k] = lo + e;
  }
  if (kind == Kind::kInfinite && rng.chance(0.05)) {
    switch (rng.below(4)) {
      case 0:  // a plane
        b.min[0] = b.min[1] = -kInf;
        b.max[0] = b.max[1] = kInf;
        break;
      case 1:  // a half-space on y
        b.min[1] = -kInf;
        break;
      case 2:  // a point at infinity: inf - inf on y
        b.min[1] = b.max[1] = kInf;
        break;
      default:  // infinite on x only: regular on y
        b.max[0] = kInf;
        break;
    }
  }
  return b;
}

Trace make_trace(Kind kind, int dims, std::uint64_t seed, std::size_t n) {
  TraceBuilder t(dims, seed);
  const double world = std::cbrt(double(n)) * (dims == 2 ? 3.0 : 2.0);
  auto box = [&](Rng& rng) { return make_box(kind, rng, world); };
  t.begin_frame();
  for (std::size_t i = 0; i < n; ++i) t.add(t.id_for_add(testgen::IdStyle::kSequential, 0), box(t.rng()));
  for (int f = 1; f < 8; ++f) {
    const std::size_t live = t.live_count();
    testgen::random_frame(
        t, live / 10, live / 3, live / 10, box, [&](Rng& rng, const Box3&) { return box(rng); },
        testgen::IdStyle::kRandom32, 0.5);
  }
  return t.take();
}

using Param = std::tuple<Kind, int>;

class DualAxisTraces : public testing::TestWithParam<Param> {};

TEST_P(DualAxisTraces, MatchesBrute) {
  const auto [kind, dims] = GetParam();
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("kind " + kind_name(kind) + " dims " + std::to_string(dims) + " seed " + std::to_string(seed));
    expect_same_as_brute("dual-axis", make_trace(kind, dims, seed, seed == 3 ? 1500 : 300));
    if (HasFatalFailure()) return;
  }
}

std::string param_name(const testing::TestParamInfo<Param>& info) {
  return kind_name(std::get<0>(info.param)) + "_" + std::to_string(std::get<1>(info.param)) + "d";
}

INSTANTIATE_TEST_SUITE_P(Kinds, DualAxisTraces,
                         testing::Combine(testing::Values(Kind::kMixedSizes, Kind::kEqualToW, Kind::kRoundingY,
                                                          Kind::kGiants, Kind::kInfinite, Kind::kManyOutliers,
                                                          Kind::kLongX, Kind::kFlatT, Kind::kHugeMagnitudes),
                                          testing::Values(2, 3)),
                         param_name);

// Beyond the 4096 boxes the statistics are sampled from, and crowded on x.
TEST(DualAxis, LargeCrowdedScene) {
  for (const int dims : {2, 3}) {
    SCOPED_TRACE(dims);
    TraceBuilder t(dims, 4);
    auto box = [&](Rng& rng) {
      Box3 b;
      const float e = rng.chance(0.01) ? 30.0f : std::exp2(std::floor(rng.uniform(-1, 2)));
      b.min = {float(rng.below(64)) * 0.25f, float(rng.below(3000)) * 0.5f, float(rng.below(6))};
      b.max = {b.min[0] + e, b.min[1] + e, b.min[2] + e};
      return b;
    };
    t.begin_frame();
    for (int i = 0; i < 12000; ++i) t.add(t.id_for_add(testgen::IdStyle::kSequential, 0), box(t.rng()));
    testgen::random_frame(
        t, 1000, 4000, 1200, box, [&](Rng& rng, const Box3&) { return box(rng); }, testgen::IdStyle::kSequential, 0.5);
    expect_same_as_brute("dual-axis", t.take());
  }
}

// Above the grid's threshold: many slabs on t (boxes spread far along it,
// most a few slabs thick, some crossing many or all of them), strips on x
// (boxes long on x straddle several), and outliers on y, so that pairs are
// found in cells that do not own them and must be dropped there.
Box3 grid_box(Rng& rng, int dims, float spread_t, float wide_t, bool clustered) {
  Box3 b;
  const float e = rng.chance(0.05) ? 12.0f : std::exp2(std::floor(rng.uniform(-1, 2)));
  b.min = {float(rng.below(400)) * 0.5f, float(rng.below(80)) * 0.5f,
           std::floor(float(rng.uniform(0, spread_t)) * 4) / 4};
  if (clustered && rng.chance(0.8)) b.min[0] = 90 + float(rng.below(80)) * 0.25f;  // strips of equal counts
  b.max = {b.min[0] + e, b.min[1] + e, b.min[2] + (dims == 3 ? e : 0.0f)};
  if (rng.chance(0.05)) b.max[2] = b.min[2] + wide_t;  // across many slabs
  if (rng.chance(0.03)) b.max[0] = b.min[0] + 150;     // across strips
  if (rng.chance(0.01)) {
    switch (rng.below(3)) {
      case 0:  // an outlier on y
        b.max[1] = b.min[1] + 60;
        break;
      case 1:  // infinite on t and x: in every cell
        b.min[2] = b.min[0] = -kInf;
        b.max[2] = b.max[0] = kInf;
        break;
      default:  // infinite on y
        b.min[1] = -kInf;
        break;
    }
  }
  if (dims == 2) b.min[2] = b.max[2] = 0;
  return b;
}

TEST(DualAxis, GridOfStripsAndSlabs) {
  struct Case {
    int dims;
    std::size_t n;
    float spread_t, wide_t;
    bool clustered;
  };
  // About 10 slabs and one strip; 2 x 5 cells; 3 strips in 2D, of equal
  // widths and of equal counts.
  for (const Case c : {Case{3, 12000, 1000, 200, false}, Case{3, 36000, 12, 6, false}, Case{2, 20000, 0, 0, false},
                       Case{2, 20000, 0, 0, true}}) {
    const int dims = c.dims;
    const std::size_t n = c.n;
    SCOPED_TRACE(dims);
    SCOPED_TRACE(n);
    SCOPED_TRACE(c.clustered);
    TraceBuilder t(dims, 5);
    auto box = [&](Rng& rng) { return grid_box(rng, dims, c.spread_t, c.wide_t, c.clustered); };
    t.begin_frame();
    for (std::size_t i = 0; i < n; ++i) t.add(t.id_for_add(testgen::IdStyle::kSequential, 0), box(t.rng()));
    testgen::random_frame(
        t, n / 20, n / 4, n / 20, box, [&](Rng& rng, const Box3&) { return box(rng); }, testgen::IdStyle::kSequential,
        0.5);
    expect_same_as_brute("dual-axis", t.take());
  }
}

// The scenes of the benchmarks, small.
TEST(DualAxis, Scenarios) {
  for (const char* name : {"unisize2d", "tracy", "allmoving3d", "cluster"}) {
    SCOPED_TRACE(name);
    ScenarioParams params;
    params.name = name;
    params.n = 1500;
    params.cycle = 12;
    expect_same_as_brute("dual-axis", testgen::scenario_trace(params, 6));
  }
}

// Cells swept in parallel (tasks of about 16k entries, on 2 and 3 threads)
// find what one thread finds: a flat scene of strips (also run under TSan in
// CI), and grids of slabs and strips with outliers, boxes across cells and
// strips of equal counts.
TEST(DualAxisThreads, FlatSceneMatchesOneThread) {
  ScenarioParams params;
  params.name = "unisize2d";
  params.n = 80000;
  testgen::expect_same_as("dual-axis", 2, "dual-axis", testgen::scenario_trace(params, 3));
}

TEST(DualAxisThreads, GridsMatchOneThread) {
  for (const int dims : {2, 3}) {
    SCOPED_TRACE(dims);
    TraceBuilder t(dims, 6);
    auto box = [&](Rng& rng) { return grid_box(rng, dims, dims == 3 ? 40.0f : 0.0f, 20, dims == 2); };
    t.begin_frame();
    for (int i = 0; i < 36000; ++i) t.add(t.id_for_add(testgen::IdStyle::kSequential, 0), box(t.rng()));
    testgen::random_frame(
        t, 1000, 9000, 1000, box, [&](Rng& rng, const Box3&) { return box(rng); }, testgen::IdStyle::kSequential, 0.5);
    testgen::expect_same_as("dual-axis", 3, "dual-axis", t.take());
  }
}

}  // namespace
}  // namespace sapling
