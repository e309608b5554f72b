// unisize against brute, frame by frame through BroadPhase, on traces where
// every box has one size (the differential suite's traces mostly have mixed
// sizes, which unisize refuses): touching lattices, identical boxes, points,
// fine random positions, translates whose max is rounded (the case the
// paper's plain tie rule gets wrong), large coordinates, signed zeros, boxes
// built as centre +- half the size (max - min rounds), more boxes than one
// strip holds, 2D and 3D, flat and not, with moves and churn. Then the size
// rule itself: boxes of one size up to rounding (centred at any magnitude,
// drifting over 1000 frames, at denormal positions) are taken, boxes just
// outside the tolerance refused, with which status, and a refusal leaves no
// trace.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "algorithms/builtin.hpp"
#include "same_as_brute.hpp"
#include "sapling/box_pruning.hpp"
#include "sapling/broad_phase.hpp"
#include "sapling/registry.hpp"
#include "sapling/task_system.hpp"
#include "sapling/unisize.hpp"
#include "scenarios/scenario.hpp"
#include "trace_generators.hpp"

namespace sapling {
namespace {

using testgen::expect_same_as_brute;
using testgen::Rng;
using testgen::TraceBuilder;

constexpr float kInf = std::numeric_limits<float>::infinity();

// ---------------------------------------------------------------------------
// Unisize traces. Each frame moves some boxes, removes some and adds some.

enum class Kind {
  kLattice,     // side 1 on an integer grid: faces, edges and corners touch
  kIdentical,   // many boxes at a handful of positions
  kPoints,      // size 0 on a coarse grid
  kFine,        // positions in 1/4096 units, size 1.5
  kRounded,     // max = min + size rounded: neighbouring lows, equal highs
  kLarge,       // coordinates near 1e6, size 0.7 (rounded to 0.6875)
  kSignedZero,  // boxes ending or starting at -0 and +0
  kFlat3d,      // 3D, every box on one plane (t is not tested)
  kCentred,     // centre +- 0.5 near 0, 1000, 2^16 and 1e6: max - min rounds (the sweep tests candidates)
};

std::string kind_name(Kind k) {
  switch (k) {
    case Kind::kLattice:
      return "lattice";
    case Kind::kIdentical:
      return "identical";
    case Kind::kPoints:
      return "points";
    case Kind::kFine:
      return "fine";
    case Kind::kRounded:
      return "rounded";
    case Kind::kLarge:
      return "large";
    case Kind::kSignedZero:
      return "signed_zero";
    case Kind::kFlat3d:
      return "flat3d";
    case Kind::kCentred:
      return "centred";
  }
  return "?";
}

struct Shape {
  std::array<float, 3> size;
  int grid;  // lows are drawn on a grid of this many cells per axis
};

Shape shape_of(Kind kind, std::size_t n) {
  const int side = std::max(4, static_cast<int>(std::cbrt(double(n)) * 2));
  switch (kind) {
    case Kind::kLattice:
      return {{1, 1, 1}, side};
    case Kind::kIdentical:
      return {{2, 2, 2}, 3};
    case Kind::kPoints:
      return {{0, 0, 0}, side / 2};
    case Kind::kFine:
      return {{1.5f, 1.5f, 1.5f}, side * 4096};
    case Kind::kRounded:
      return {{16777216.0f, 3.0f, 16777216.0f}, 0};
    case Kind::kLarge:
      return {{0.7f, 0.7f, 0.7f}, 0};
    case Kind::kSignedZero:
      return {{1, 1, 1}, 4};
    case Kind::kFlat3d:
      return {{1, 1, 2}, side * 2};
    case Kind::kCentred:
      return {{1, 1, 1}, side};
  }
  return {{1, 1, 1}, side};
}

float low_on_axis(Kind kind, const Shape& shape, Rng& rng, int axis) {
  switch (kind) {
    case Kind::kFine:
      return float(rng.below(std::uint64_t(shape.grid))) / 4096.0f;
    case Kind::kRounded:
      // Lows a few ulps apart just above 1: with size 2^24 their highs
      // round to the same float, or to neighbours two apart.
      if (axis == 1) return float(rng.below(40)) * 0.5f;
      return 1.0f + float(rng.below(64)) * 0x1p-23f;
    case Kind::kLarge:
      return 1.0e6f + float(rng.below(4000)) * 0.0625f + (rng.chance(0.5) ? 0.03125f : 0.0f);
    case Kind::kSignedZero: {
      const float v = float(rng.range(-2, 1));
      return v == 0.0f && rng.chance(0.5) ? -0.0f : v;
    }
    case Kind::kFlat3d:
      if (axis == 2) return 5.0f;
      return float(rng.below(std::uint64_t(shape.grid))) * 0.5f;
    default:
      return float(rng.below(std::uint64_t(shape.grid)));
  }
}

// centre +- size / 2, the centre at one of a few magnitudes (the same for
// every axis of a box), within `grid` of it.
Box3 centred_box(const Shape& shape, Rng& rng) {
  static constexpr std::array<float, 5> kBases = {0.0f, -0.3f, 1000.5f, 65530.0f, 1.0e6f};
  const float base = kBases[rng.below(kBases.size())];
  Box3 b;
  for (int k = 0; k < 3; ++k) {
    const float centre = base + rng.uniform(0, shape.grid), half = shape.size[k] * 0.5f;
    b.min[k] = centre - half;
    b.max[k] = centre + half;
  }
  return b;
}

Box3 make_box(Kind kind, const Shape& shape, Rng& rng) {
  if (kind == Kind::kCentred) return centred_box(shape, rng);
  Box3 b;
  for (int k = 0; k < 3; ++k) {
    b.min[k] = low_on_axis(kind, shape, rng, k);
    b.max[k] = b.min[k] + shape.size[k];
  }
  if (kind == Kind::kSignedZero) {  // max may be written as -0 where it is 0
    for (int k = 0; k < 3; ++k) {
      if (b.max[k] == 0.0f && rng.chance(0.5)) b.max[k] = -0.0f;
    }
  }
  return b;
}

Trace unisize_trace(Kind kind, int dims, std::uint64_t seed, std::size_t n, int frames) {
  TraceBuilder t(dims, seed);
  Shape shape = shape_of(kind, n);
  if (dims == 2) shape.size[2] = 0;  // lifted boxes are flat at z = 0
  auto box = [&](Rng& rng) {
    Box3 b = make_box(kind, shape, rng);
    if (dims == 2) b.min[2] = b.max[2] = 0;
    return b;
  };
  t.begin_frame();
  if (kind == Kind::kRounded) {  // a first box whose extent is exact fixes the size
    t.add(t.id_for_add(testgen::IdStyle::kSequential, 0), Box3{{0, 0, 0}, shape.size});
  }
  for (std::size_t i = 0; i < n; ++i) t.add(t.id_for_add(testgen::IdStyle::kSequential, 0), box(t.rng()));
  for (int f = 1; f < frames; ++f) {
    const std::size_t live = t.live_count();
    testgen::random_frame(
        t, live / 10, live / 3, live / 10, box, [&](Rng& rng, const Box3&) { return box(rng); },
        f % 3 == 0   ? testgen::IdStyle::kRandom32
        : f % 3 == 1 ? testgen::IdStyle::kSequential
                     : testgen::IdStyle::kExtreme,
        0.5);  // ids of all 32 bits: pairs are reported as ids
  }
  return t.take();
}

using TraceParam = std::tuple<Kind, int>;

class UnisizeTraces : public testing::TestWithParam<TraceParam> {};

TEST_P(UnisizeTraces, MatchesBrute) {
  const auto [kind, dims] = GetParam();
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("kind " + kind_name(kind) + " dims " + std::to_string(dims) + " seed " + std::to_string(seed));
    const std::size_t n = seed == 3 ? 1500 : 300;
    expect_same_as_brute("unisize", unisize_trace(kind, dims, seed, n, 8));
    if (HasFatalFailure()) return;
  }
}

std::string trace_param_name(const testing::TestParamInfo<TraceParam>& info) {
  return kind_name(std::get<0>(info.param)) + "_" + std::to_string(std::get<1>(info.param)) + "d";
}

INSTANTIATE_TEST_SUITE_P(Kinds, UnisizeTraces,
                         testing::Combine(testing::Values(Kind::kLattice, Kind::kIdentical, Kind::kPoints, Kind::kFine,
                                                          Kind::kRounded, Kind::kLarge, Kind::kSignedZero,
                                                          Kind::kFlat3d, Kind::kCentred),
                                          testing::Values(2, 3)),
                         trace_param_name);

// The rounded case in isolation: box 0 = [0, 2^24] fixes the size 2^24;
// lows 1 + k ulps then have highs 2^24 (k = 0) or 2^24 + 2, so many boxes
// nest while sharing their high. Every pair overlaps on x; y decides.
TEST(Unisize, RoundedTranslatesThatNest) {
  for (const int dims : {2, 3}) {
    Trace trace;
    trace.dims = dims;
    trace.frames.emplace_back();
    for (Id id = 0; id < 64; ++id) {
      Box3 b;
      b.min = {id == 0 ? 0.0f : 1.0f + float((id * 37) % 64) * 0x1p-23f, float(id % 7) * 0.5f, 0.0f};
      for (int k = 0; k < 3; ++k) b.max[k] = b.min[k] + std::array<float, 3>{16777216.0f, 1.0f, 0.0f}[k];
      trace.frames.back().added.push_back(id);
      trace.frames.back().added_boxes.push_back(b);
    }
    expect_same_as_brute("unisize", trace);
  }
}

// unisize with strips of `members` own boxes, registered once, so that
// inputs small enough for brute force have many strips and straddlers.
std::string unisize_with_strips(std::uint32_t members) {
  const std::string name = "unisize-strips-" + std::to_string(members);
  // Registered once per size: a second registration of the name is refused.
  static_cast<void>(register_algorithm(
      AlgorithmInfo{name, "unisize, small strips",
                    [members](const Options& o) { return detail::make_unisize_with_strips(o, members); }, false}));
  return name;
}

// Many strips, crowded along x so that boxes reach across several strips:
// the default strips (16k) and strips of 1000 and 97 boxes.
TEST(Unisize, ManyStripsAndStraddlers) {
  for (const int dims : {2, 3}) {
    SCOPED_TRACE(dims);
    TraceBuilder t(dims, 11);
    auto box = [&](Rng& rng) {
      Box3 b;
      b.min = {float(rng.below(64)) * 0.125f, float(rng.below(4000)) * 0.5f, dims == 3 ? float(rng.below(8)) : 0.0f};
      b.max = {b.min[0] + 2.0f, b.min[1] + 1.0f, b.min[2] + (dims == 3 ? 1.0f : 0.0f)};
      return b;
    };
    t.begin_frame();
    for (int i = 0; i < 20000; ++i) t.add(t.id_for_add(testgen::IdStyle::kSequential, 0), box(t.rng()));
    testgen::random_frame(
        t, 2000, 6000, 2500, box, [&](Rng& rng, const Box3&) { return box(rng); }, testgen::IdStyle::kSequential, 0.5);
    const Trace trace = t.take();
    for (const std::string& algo : {std::string("unisize"), unisize_with_strips(1000), unisize_with_strips(97)}) {
      SCOPED_TRACE(algo);
      expect_same_as_brute(algo, trace);
    }
  }
}

// A dense band (hundreds of straddlers per strip) then a sparse one (a
// few), with ties and touching boxes on the 0.5 grid at every strip
// boundary, in strips of 2048 boxes.
TEST(Unisize, DenseAndSparseStrips) {
  for (const int dims : {2, 3}) {
    SCOPED_TRACE(dims);
    TraceBuilder t(dims, 12);
    auto box = [&](Rng& rng) {
      const bool dense = rng.chance(0.5);
      Box3 b;
      b.min = {dense ? float(rng.below(32)) * 0.25f : 8.0f + float(rng.below(8000)) * 0.5f, float(rng.below(80)) * 0.5f,
               dims == 3 ? float(rng.below(4)) : 0.0f};
      b.max = {b.min[0] + 1.0f, b.min[1] + 1.0f, b.min[2] + (dims == 3 ? 1.0f : 0.0f)};
      return b;
    };
    t.begin_frame();
    for (int i = 0; i < 16000; ++i) t.add(t.id_for_add(testgen::IdStyle::kSequential, 0), box(t.rng()));
    testgen::random_frame(
        t, 1000, 5000, 1500, box, [&](Rng& rng, const Box3&) { return box(rng); }, testgen::IdStyle::kSequential, 0.5);
    expect_same_as_brute(unisize_with_strips(2048), t.take());
  }
}

// The W1 scene (unisize2d) and the clustering scene (W4, flat 3D), small.
TEST(Unisize, PaperScenes) {
  for (const char* name : {"unisize2d", "cluster"}) {
    SCOPED_TRACE(name);
    ScenarioParams params;
    params.name = name;
    params.n = 2000;
    params.cycle = 12;
    params.density_pm = 600;
    expect_same_as_brute("unisize", testgen::scenario_trace(params, 10));
  }
}

// ---------------------------------------------------------------------------
// The size rule.

Box3 cube_at(float x, float y, float z, float side) { return Box3{{x, y, z}, {x + side, y + side, z + side}}; }

TEST(UnisizeRule, RefusesAnotherSize) {
  const auto bp = BroadPhase::create("unisize");
  ASSERT_TRUE(bp->add(1, cube_at(0, 0, 0, 1)).ok());
  const Status s = bp->add(2, cube_at(0.5f, 0, 0, 2));  // same frame: checked against the first
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.id(), 2u);
  EXPECT_NE(s.message().find("size"), std::string::npos) << s.message();
  ASSERT_TRUE(bp->add(2, cube_at(0.5f, 0, 0, 1)).ok());
  EXPECT_EQ(bp->update().created.size(), 1u);
  EXPECT_EQ(bp->move(1, cube_at(0, 0, 0, 1.5f)).code(), StatusCode::kUnsupported);
  EXPECT_EQ(bp->add(3, Box3{{0, 0, 0}, {1, 1, 2}}).code(), StatusCode::kUnsupported);  // one axis differs
  EXPECT_TRUE(bp->move(1, cube_at(7, 7, 7, 1)).ok());
  EXPECT_EQ(bp->update().deleted.size(), 1u);
  EXPECT_TRUE(bp->validate());
}

TEST(UnisizeRule, RefusesInfiniteAndOverflowingFirstBoxes) {
  const auto bp = BroadPhase::create("unisize");
  EXPECT_EQ(bp->add(1, Box3{{-kInf, 0, 0}, {kInf, 1, 1}}).code(), StatusCode::kUnsupported);
  EXPECT_EQ(bp->add(1, Box3{{0, 0, 0}, {kInf, 1, 1}}).code(), StatusCode::kUnsupported);
  // -FLT_MAX .. FLT_MAX: max - min overflows a float.
  const float big = std::numeric_limits<float>::max();
  const Status s = bp->add(1, Box3{{-big, 0, 0}, {big, 1, 1}});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("overflow"), std::string::npos) << s.message();
  // Nothing was fixed by the refusals.
  ASSERT_TRUE(bp->add(1, cube_at(0, 0, 0, 3)).ok());
  ASSERT_TRUE(bp->add(2, cube_at(3, 3, 3, 3)).ok());  // touching at a corner
  EXPECT_EQ(bp->update().created.size(), 1u);
}

// A first box whose extent is not a float (-0.1 .. 1: 1.1 rounds) fixes the
// size all the same, and its exact translates fit it up to rounding.
TEST(UnisizeRule, InexactFirstBoxFixesTheSize) {
  const auto bp = BroadPhase::create("unisize");
  ASSERT_TRUE(bp->add(1, Box3{{-0.1f, 0, 0}, {1, 1, 1}}).ok());
  ASSERT_TRUE(bp->add(2, Box3{{0.9f, 0, 0}, {2.0f, 1, 1}}).ok());  // touches box 1 at x = 1
  ASSERT_TRUE(bp->add(3, Box3{{2.0f + 0x1p-20f, 0, 0}, {3.1f, 1, 1}}).ok());
  EXPECT_EQ(bp->add(4, Box3{{5, 0, 0}, {6.2f, 1, 1}}).code(), StatusCode::kUnsupported);
  const FrameDelta& d = bp->update();
  ASSERT_EQ(d.created.size(), 1u);
  EXPECT_TRUE(d.created[0] == (Pair{1, 2}));
  EXPECT_TRUE(bp->validate());
}

TEST(UnisizeRule, RoundedTranslatesFit) {
  // {p, p + size} in float fits however p + size rounds.
  const auto bp = BroadPhase::create("unisize");
  ASSERT_TRUE(bp->add(1, cube_at(0, 0, 0, 1.5f)).ok());
  Rng rng(5);
  for (Id id = 2; id < 200; ++id) {
    const float x = rng.uniform(-60, 60), y = rng.uniform(0, 0.01), z = rng.uniform(1e5, 1e6);
    ASSERT_TRUE(bp->add(id, cube_at(x, y, z, 1.5f)).ok()) << x << " " << y << " " << z;
  }
  bp->update();
  EXPECT_TRUE(bp->validate());
}

TEST(UnisizeRule, SizeIsFixedAnewOnceEmpty) {
  const auto bp = BroadPhase::create("unisize", Options{.dims = 2});
  const std::vector<Id> ids = {1, 2};
  const std::vector<Box2> small = {Box2{{0, 0}, {1, 1}}, Box2{{1, 1}, {2, 2}}};
  const std::vector<Box2> big = {Box2{{0, 0}, {4, 4}}, Box2{{4, 0}, {8, 4}}};
  ASSERT_TRUE(bp->add(ids, small).ok());
  EXPECT_EQ(bp->update().created.size(), 1u);
  // Removing every box does not free the size within the same frame.
  ASSERT_TRUE(bp->remove(ids).ok());
  EXPECT_EQ(bp->add(3, big[0]).code(), StatusCode::kUnsupported);
  EXPECT_EQ(bp->update().deleted.size(), 1u);
  // Once a frame ends with none live, the next box fixes the size.
  ASSERT_TRUE(bp->add(ids, big).ok());
  EXPECT_EQ(bp->update().created.size(), 1u);
  EXPECT_EQ(bp->add(4, Box2{{0, 0}, {1, 1}}).code(), StatusCode::kUnsupported);
  EXPECT_TRUE(bp->validate());
}

// A batch refused by unisize while nothing is live fixes nothing: afterwards
// the broad phase behaves like a twin that never saw it.
TEST(UnisizeRule, RefusedBatchLeavesNoSize) {
  const auto bad = BroadPhase::create("unisize");
  const auto twin = BroadPhase::create("unisize");
  const std::vector<Id> ids = {1, 2};
  const std::vector<Box3> mixed = {cube_at(0, 0, 0, 1), cube_at(0, 0, 0, 2)};
  const Status s = bad->add(ids, mixed);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.index(), 1u);
  EXPECT_EQ(bad->size(), 0u);
  const std::vector<Box3> twos = {cube_at(0, 0, 0, 2), cube_at(2, 0, 0, 2)};
  for (BroadPhase* bp : {bad.get(), twin.get()}) {
    ASSERT_TRUE(bp->add(ids, twos).ok());
    EXPECT_EQ(bp->update().created.size(), 1u);
  }
}

// Boxes of one size up to rounding, as engines make them.

// Every pair of overlapping boxes, i < j, by brute force.
std::vector<std::pair<std::uint32_t, std::uint32_t>> brute_pairs(const std::vector<Box3>& boxes) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
  for (std::uint32_t i = 0; i < boxes.size(); ++i) {
    for (std::uint32_t j = i + 1; j < boxes.size(); ++j) {
      if (overlaps(boxes[i], boxes[j])) pairs.emplace_back(i, j);
    }
  }
  return pairs;
}

// UnisizePruner's pairs, sorted, each checked to be i < j.
std::vector<std::pair<std::uint32_t, std::uint32_t>> pruner_pairs(const std::vector<Box3>& boxes) {
  std::vector<IndexPair> found;
  const Status s = UnisizePruner{}.complete(boxes, found);
  EXPECT_TRUE(s.ok()) << s.message();
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
  for (const IndexPair& p : found) {
    EXPECT_LT(p.i, p.j);
    pairs.emplace_back(p.i, p.j);
  }
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

// How many boxes are not exactly [min, min + 1] (in float) on some axis:
// with one of them, the sweep runs on enlarged boxes and tests candidates.
std::size_t count_inexact(std::span<const Box3> boxes, int dims) {
  std::size_t rounded = 0;
  for (const Box3& b : boxes) {
    bool exact = true;
    for (int k = 0; k < dims; ++k) exact = exact && b.max[k] == b.min[k] + 1.0f;
    rounded += static_cast<std::size_t>(!exact);
  }
  return rounded;
}

// 10,000 unit boxes built as centre +- 0.5: most in dense clusters at
// magnitudes 0, 100, 1000, 2^16 (straddling it) and +-1e6, the rest at
// random magnitudes 1e-3..1e6 of either sign. Many extents round (at 1e6
// to 1 +- 0.0625); all are taken, and the pairs are exact, frame after
// frame as a third of the boxes get new centres, and one-shot.
TEST(UnisizeRule, CentredBoxesAtAnyMagnitude) {
  for (const int dims : {2, 3}) {
    SCOPED_TRACE(dims);
    const auto centred = [dims](Rng& rng) {
      static constexpr std::array<double, 6> kBases = {0.0, 100.0, 1000.0, 65516.0, 1.0e6, -1.0e6};
      const bool cluster = rng.chance(0.9);
      const double base = cluster ? kBases[rng.below(kBases.size())]
                                  : (rng.chance(0.5) ? -1.0 : 1.0) * std::pow(10.0, rng.uniform(-3, 6));
      Box3 b;
      for (int k = 0; k < 3; ++k) {
        const float centre = static_cast<float>(base + rng.uniform(0, k < 2 ? 40 : 4));
        b.min[k] = centre - 0.5f;
        b.max[k] = centre + 0.5f;
      }
      if (dims == 2) b.min[2] = b.max[2] = 0;
      return b;
    };
    TraceBuilder t(dims, 21);
    t.begin_frame();
    std::vector<Box3> boxes;
    for (int i = 0; i < 10000; ++i) {
      boxes.push_back(centred(t.rng()));
      t.add(t.id_for_add(testgen::IdStyle::kSequential, 0), boxes.back());
    }
    EXPECT_GT(count_inexact(boxes, dims), 0u);
    for (int f = 0; f < 2; ++f) {
      testgen::random_frame(
          t, 100, 3300, 100, centred, [&](Rng& rng, const Box3&) { return centred(rng); },
          testgen::IdStyle::kSequential, 0.5);
    }
    expect_same_as_brute("unisize", t.take());
    const auto want = brute_pairs(boxes);
    EXPECT_GT(want.size(), 5000u);
    EXPECT_EQ(pruner_pairs(boxes), want);
  }
}

// Boxes moved 1000 frames by adding a random step to min and max (the
// extents drift: min and max round apart, more so where they straddle a
// power of two) near 1000, bouncing in a square of 40 (2D) or a slab of
// 40 x 40 x 4 (3D): taken every frame, pairs exact against brute force
// (persistent) and, every 100 frames, one-shot.
TEST(UnisizeRule, DriftingBoxesStayTaken) {
  for (const int dims : {2, 3}) {
    SCOPED_TRACE(dims);
    constexpr int kBoxes = 1000, kFrames = 1000;
    constexpr float kLow = 1000.0f;
    const std::array<float, 3> room = {40, 40, dims == 3 ? 4.0f : 0.0f};
    Rng rng(31);
    std::vector<Box3> boxes(kBoxes);
    std::vector<std::array<float, 3>> velocity(kBoxes);
    for (int i = 0; i < kBoxes; ++i) {
      for (int k = 0; k < 3; ++k) {
        boxes[i].min[k] = kLow + rng.uniform(0, room[k]);
        boxes[i].max[k] = boxes[i].min[k] + (k < dims ? 1.0f : 0.0f);
        velocity[i][k] = k < dims ? rng.uniform(-0.05, 0.05) : 0.0f;
      }
    }
    Trace trace;
    trace.dims = dims;
    trace.frames.emplace_back();
    for (Id id = 0; id < kBoxes; ++id) {
      trace.frames.back().added.push_back(id);
      trace.frames.back().added_boxes.push_back(boxes[id]);
    }
    for (int f = 1; f < kFrames; ++f) {
      trace.frames.emplace_back();
      for (Id id = 0; id < kBoxes; ++id) {
        Box3& b = boxes[id];
        for (int k = 0; k < dims; ++k) {
          // A new random step now and then; reflected at the walls.
          if (rng.chance(0.1)) velocity[id][k] = rng.uniform(-0.05, 0.05);
          if ((b.min[k] < kLow && velocity[id][k] < 0) || (b.max[k] > kLow + room[k] + 1 && velocity[id][k] > 0)) {
            velocity[id][k] = -velocity[id][k];
          }
          b.min[k] += velocity[id][k];
          b.max[k] += velocity[id][k];
        }
        trace.frames.back().moved.push_back(id);
        trace.frames.back().moved_boxes.push_back(b);
      }
      if (f % 100 == 0) {
        SCOPED_TRACE(f);
        EXPECT_EQ(pruner_pairs(boxes), brute_pairs(boxes));
      }
    }
    EXPECT_GT(count_inexact(boxes, dims), std::size_t{kBoxes / 5});  // they did drift
    expect_same_as_brute("unisize", trace);
  }
}

// A first box at a denormal position: max = min + 1 rounds to 1, so its
// extent 1 - min is not a float. It fixes the size 1, and boxes near it
// (exact, centred and at denormal positions too) are taken, pairs exact.
TEST(UnisizeRule, DenormalFirstBox) {
  const float tiny = 3 * std::numeric_limits<float>::denorm_min(), small = 1.0e-39f;
  ASSERT_LT(small, std::numeric_limits<float>::min());
  std::vector<Box3> boxes = {Box3{{tiny, small, -small}, {tiny + 1, small + 1, -small + 1}}};
  ASSERT_EQ(boxes[0].max[0], 1.0f);  // the extent 1 - tiny is not a float
  Rng rng(41);
  for (int i = 0; i < 600; ++i) {
    Box3 b;
    for (int k = 0; k < 3; ++k) {
      const int way = static_cast<int>(rng.below(3));
      if (way == 0) {
        b.min[k] = float(rng.range(-12, 12)) * 0.25f;  // exact
        b.max[k] = b.min[k] + 1;
      } else if (way == 1) {
        const float centre = rng.uniform(-3, 3);  // centred
        b.min[k] = centre - 0.5f;
        b.max[k] = centre + 0.5f;
      } else {
        b.min[k] = float(rng.range(-1000, 1000)) * 1.0e-41f;  // denormal, -1 .. 0 or 0 .. 1 rounded
        b.max[k] = b.min[k] + 1;
      }
    }
    boxes.push_back(b);
  }
  Trace trace;
  trace.dims = 3;
  trace.frames.emplace_back();
  for (Id id = 0; id < boxes.size(); ++id) {
    trace.frames.back().added.push_back(id);
    trace.frames.back().added_boxes.push_back(boxes[id]);
  }
  expect_same_as_brute("unisize", trace);
  EXPECT_EQ(pruner_pairs(boxes), brute_pairs(boxes));
}

// The tolerance as documented (sapling/unisize.hpp): a box of min `lo`
// fits a reference [0, 1] on an axis iff
//   |(max - lo) - 1| <= 2^-10 + 2^-16 (1 + max(|lo|, |max|)),
// evaluated in double. The largest max that fits, and the least one.
float largest_max_within(float lo) {
  const auto fits = [lo](float hi) {
    const double m = std::max(std::fabs(double(lo)), std::fabs(double(hi)));
    return std::fabs((double(hi) - double(lo)) - 1.0) <= 0x1p-10 + 0x1p-16 * (1.0 + m);
  };
  float hi = lo + 1;
  while (fits(std::nextafter(hi, kInf))) hi = std::nextafter(hi, kInf);
  EXPECT_TRUE(fits(hi));
  return hi;
}
float least_max_within(float lo) {
  const auto fits = [lo](float hi) {
    const double m = std::max(std::fabs(double(lo)), std::fabs(double(hi)));
    return std::fabs((double(hi) - double(lo)) - 1.0) <= 0x1p-10 + 0x1p-16 * (1.0 + m);
  };
  float hi = lo + 1;
  while (fits(std::nextafter(hi, -kInf))) hi = std::nextafter(hi, -kInf);
  return hi;
}

// Boxes just outside the tolerance are refused (too large and too small,
// on one axis, near 0 and near 1e4), naming the id and the batch index;
// those just inside are taken. The same for the one-shot pruner, which
// names the index ("box 2: ...", id 0).
TEST(UnisizeRule, RefusesBoxesJustOutsideTheTolerance) {
  for (const float lo : {10.0f, -0.25f, 10000.0f}) {
    for (const int axis : {0, 1, 2}) {
      for (const bool larger : {true, false}) {
        SCOPED_TRACE(std::to_string(lo) + " axis " + std::to_string(axis) + (larger ? " larger" : " smaller"));
        const float inside = larger ? largest_max_within(lo) : least_max_within(lo);
        const float outside = std::nextafter(inside, larger ? kInf : -kInf);
        ASSERT_GT(std::fabs(inside - (lo + 1)), 0.0f);  // inside is not exact
        Box3 in = cube_at(lo, lo, lo, 1), out = in;
        in.max[axis] = inside;
        out.max[axis] = outside;
        const auto bp = BroadPhase::create("unisize");
        ASSERT_TRUE(bp->add(1, cube_at(0, 0, 0, 1)).ok());
        bp->update();
        const std::vector<Id> ids = {7, 8, 9};
        const std::vector<Box3> batch = {in, cube_at(lo + 0.5f, lo, lo, 1), out};
        const Status s = bp->add(ids, batch);
        EXPECT_EQ(s.code(), StatusCode::kUnsupported);
        EXPECT_EQ(s.id(), 9u);
        EXPECT_EQ(s.index(), 2u);
        EXPECT_NE(s.message().find("add of id 9: unisize: every box must have the size"), std::string::npos)
            << s.message();
        ASSERT_TRUE(bp->add(std::span(ids).first(2), std::span(batch).first(2)).ok());
        const std::vector<Box3> taken = {cube_at(0, 0, 0, 1), batch[0], batch[1]};
        EXPECT_EQ(bp->update().created.size(), brute_pairs(taken).size());
        EXPECT_EQ(bp->move(8, out).code(), StatusCode::kUnsupported);
        EXPECT_TRUE(bp->validate());

        const std::vector<Box3> one_shot = {cube_at(0, 0, 0, 1), in, out, cube_at(0, 0, 0, 7)};
        std::vector<IndexPair> pairs;
        const Status p = UnisizePruner{}.complete(one_shot, pairs);
        EXPECT_EQ(p.code(), StatusCode::kUnsupported);
        EXPECT_EQ(p.operation(), Operation::kNone);
        EXPECT_EQ(p.index(), 2u);
        EXPECT_EQ(p.id(), 0u);
        EXPECT_EQ(p.message().rfind("box 2: unisize: every box must have the size of the first", 0), 0u) << p.message();
        EXPECT_TRUE(pairs.empty());
        EXPECT_EQ(pruner_pairs(taken), brute_pairs(taken));
      }
    }
  }
}

// Frames of exact boxes (swept as they are) and of boxes that are not
// (enlarged, candidates tested) in turn: a box a hair short of its size
// (within the tolerance) no longer touches its neighbour, before and after
// other boxes move, and a lone inexact box then joined by an exact one.
TEST(UnisizeRule, ExactAndRoundedFramesInTurn) {
  for (const int dims : {2, 3}) {
    SCOPED_TRACE(dims);
    const auto unit = [](float x, float side = 1) { return Box3{{x, 0, 0}, {x + side, 1, 1}}; };
    const float shorter = 1 - 0x1p-20f;
    TraceBuilder t(dims, 51);
    t.begin_frame();
    for (Id id = 0; id < 100; ++id) t.add(id, unit(float(id)));  // a row, each touching the next
    t.begin_frame();
    t.move(10, unit(10, shorter));  // (10, 11) ends
    t.begin_frame();
    t.move(20, unit(20.5f));  // exact; 10 is still short
    t.begin_frame();
    t.move(30, unit(30, shorter));
    t.move(10, unit(10));  // (10, 11) again
    t.begin_frame();
    for (Id id = 0; id < 100; ++id) {
      if (id != 5 && id != 30) t.remove(id);
    }
    t.move(5, unit(5, shorter));
    t.begin_frame();
    t.remove(30);  // 5 alone, short
    t.begin_frame();
    t.add(6, unit(6));  // exact, not touching 5
    t.begin_frame();
    t.move(5, unit(5));  // (5, 6)
    t.begin_frame();
    t.move(6, unit(6 - 0x1p-20f, shorter));  // (5, 6) stays: 6 starts a hair before 5 ends
    expect_same_as_brute("unisize", t.take());
  }
}

// A refused batch leaves the size as it was: with boxes live (the size is
// theirs), and with none (nothing is fixed by the refused batch's first box,
// itself rounded).
TEST(UnisizeRule, RefusedBatchLeavesTheSize) {
  const auto bp = BroadPhase::create("unisize");
  ASSERT_TRUE(bp->add(1, cube_at(0, 0, 0, 1)).ok());
  bp->update();
  const std::vector<Id> ids = {2, 3};
  const std::vector<Box3> batch = {Box3{{99.5f, 0, 0}, {100.5f, 1, 1}}, cube_at(0.5f, 0, 0, 1.01f)};
  EXPECT_EQ(bp->add(ids, batch).index(), 1u);
  EXPECT_EQ(bp->size(), 1u);
  EXPECT_TRUE(bp->add(2, cube_at(0.5f, 0, 0, 1)).ok());
  EXPECT_EQ(bp->add(3, cube_at(0.5f, 0, 0, 1.01f)).code(), StatusCode::kUnsupported);
  EXPECT_EQ(bp->update().created.size(), 1u);
  EXPECT_TRUE(bp->validate());

  const auto empty = BroadPhase::create("unisize");
  const float c = 1.0e6f + 0.25f;  // c +- 1.5 rounds: the extent is 3 +- 0.0625
  const std::vector<Box3> rounded = {Box3{{c - 1.5f, 0, 0}, {c + 1.5f, 3, 3}}, cube_at(0, 0, 0, 2)};
  EXPECT_EQ(empty->add(ids, rounded).index(), 1u);
  EXPECT_EQ(empty->size(), 0u);
  const std::vector<Box3> twos = {cube_at(0, 0, 0, 2), Box3{{2 - 0x1p-22f, 0, 0}, {4, 2, 2}}};
  ASSERT_TRUE(empty->add(ids, twos).ok());
  EXPECT_EQ(empty->update().created.size(), 1u);
  EXPECT_TRUE(empty->validate());
}

// Every live box keeps fitting through moves, churn and id reuse.
TEST(UnisizeRule, ChurnKeepsTheSize) {
  const Trace trace = unisize_trace(Kind::kLattice, 3, 9, 500, 12);
  const auto bp = BroadPhase::create("unisize");
  for (const TraceFrame& f : trace.frames) {
    ASSERT_TRUE(bp->remove(f.removed).ok());
    ASSERT_TRUE(bp->move(f.moved, f.moved_boxes).ok());
    ASSERT_TRUE(bp->add(f.added, f.added_boxes).ok());
    bp->update();
    ASSERT_TRUE(bp->validate());
  }
}

// The one-shot sweep: the same pairs as brute force on each kind of scene,
// once each and i < j; refusals name the first box of another size.
TEST(UnisizePruner, MatchesBruteOnEveryKind) {
  for (const Kind kind : {Kind::kLattice, Kind::kIdentical, Kind::kPoints, Kind::kFine, Kind::kLarge, Kind::kSignedZero,
                          Kind::kFlat3d, Kind::kCentred}) {
    for (const std::uint64_t seed : {1u, 2u}) {
      SCOPED_TRACE("kind " + kind_name(kind) + " seed " + std::to_string(seed));
      Rng rng(seed);
      const Shape shape = shape_of(kind, 700);
      std::vector<Box3> boxes;
      for (int i = 0; i < 700; ++i) boxes.push_back(make_box(kind, shape, rng));
      std::vector<IndexPair> found;
      UnisizePruner pruner;
      ASSERT_TRUE(pruner.complete(boxes, found).ok());
      std::vector<std::pair<std::uint32_t, std::uint32_t>> got, want;
      for (const IndexPair& p : found) {
        ASSERT_LT(p.i, p.j);
        got.emplace_back(p.i, p.j);
      }
      for (std::uint32_t i = 0; i < boxes.size(); ++i) {
        for (std::uint32_t j = i + 1; j < boxes.size(); ++j) {
          if (overlaps(boxes[i], boxes[j])) want.emplace_back(i, j);
        }
      }
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, want);
      // Warm buffers give the same answer in the same order.
      std::vector<IndexPair> again;
      ASSERT_TRUE(pruner.complete(boxes, again).ok());
      ASSERT_EQ(again.size(), found.size());
      for (std::size_t k = 0; k < found.size(); ++k) EXPECT_TRUE(again[k].i == found[k].i && again[k].j == found[k].j);
    }
  }
}

// Boxes all at one x, so that every box straddles every later strip: the
// strips grow to the whole input and S to 3 and then 4 levels (more than
// 2 * 64^3 ranks). Two boxes at each y on a 0.5 grid, size 1: the pairs are
// those at most 1 apart on y, found here by a sort on y and a forward scan.
TEST(UnisizePruner, DeepTreesOfWideStrips) {
  for (const std::uint32_t n : {20000u, 140000u}) {
    SCOPED_TRACE(n);
    std::vector<Box3> boxes(n);
    for (std::uint32_t i = 0; i < n; ++i) {
      const float y = float((i * 7919u) % (n / 2)) * 0.5f;
      boxes[i] = Box3{{0.0f, y, 0.0f}, {1.0f, y + 1.0f, 0.0f}};
    }
    std::vector<std::uint32_t> order(n);
    for (std::uint32_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return boxes[a].min[1] < boxes[b].min[1]; });
    std::vector<std::pair<std::uint32_t, std::uint32_t>> want, got;
    for (std::uint32_t k = 0; k < n; ++k) {
      for (std::uint32_t l = k + 1; l < n && boxes[order[l]].min[1] <= boxes[order[k]].max[1]; ++l) {
        want.emplace_back(std::min(order[k], order[l]), std::max(order[k], order[l]));
      }
    }
    std::vector<IndexPair> found;
    UnisizePruner pruner;
    ASSERT_TRUE(pruner.complete(boxes, found).ok());
    for (const IndexPair& p : found) got.emplace_back(p.i, p.j);
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    ASSERT_EQ(got.size(), want.size());
    EXPECT_TRUE(got == want);
  }
}

// A large input (300000 boxes: many strips of both sizes, S of 2 and 3
// levels) with ties and touching boxes on a 0.5 grid, far outliers on both
// sides, values near zero (keys of many exponents) and a crowded band. Too
// many boxes for brute force: box pruning (tested against brute elsewhere)
// is the reference, in 2D and in flat and non-flat 3D.
std::vector<Box3> large_input(int dims, std::uint32_t n) {
  Rng rng(static_cast<std::uint64_t>(40 + dims));
  std::vector<Box3> boxes(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    float x = float(rng.below(4000)) * 0.5f;
    if (i % 1000 == 7) x = i % 2 == 0 ? -1.0e6f - float(i) : 1.0e6f + float(i);  // far outliers
    if (i % 1000 == 11) x = float(rng.below(1000)) * 1.0e-30f;                   // tiny, many exponents
    if (i % 10 == 3) x = 500.0f + float(rng.below(64)) * 0.25f;                  // a crowded band
    const float y = float(rng.below(600)) * 0.5f, z = dims == 3 ? float(rng.below(6)) : 0.0f;
    boxes[i] = Box3{{x, y, z}, {x + 1.0f, y + 1.0f, z + 1.0f}};
  }
  return boxes;
}

TEST(UnisizePruner, LargeInputMatchesBoxPruning) {
  for (const int dims : {2, 3}) {
    SCOPED_TRACE(dims);
    const std::vector<Box3> boxes = large_input(dims, 300000);
    std::vector<IndexPair> found, reference;
    UnisizePruner pruner;
    ASSERT_TRUE(pruner.complete(boxes, found).ok());
    BoxPruner{}.complete(boxes, reference);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> got, want;
    for (const IndexPair& p : found) got.emplace_back(p.i, p.j);
    for (const IndexPair& p : reference) want.emplace_back(std::min(p.i, p.j), std::max(p.i, p.j));
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    ASSERT_EQ(got.size(), want.size());
    EXPECT_TRUE(got == want);
  }
}

TEST(UnisizePruner, RefusesOtherSizes) {
  std::vector<Box3> boxes = {Box3{{0, 0, 0}, {1, 1, 1}}, Box3{{0.5f, 0, 0}, {1.5f, 1, 1}},
                             Box3{{2, 0, 0}, {3, 1.5f, 1}}};
  std::vector<IndexPair> out;
  UnisizePruner pruner;
  const Status s = pruner.complete(boxes, out);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.index(), 2u);
  EXPECT_EQ(s.id(), 0u);  // no ids in a one-shot call: the message names the index
  EXPECT_EQ(s.message().rfind("box 2: ", 0), 0u) << s.message();
  EXPECT_TRUE(out.empty());
  boxes[2].max[0] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(pruner.complete(boxes, out).code(), StatusCode::kUnsupported);
  boxes.pop_back();
  ASSERT_TRUE(pruner.complete(boxes, out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].i == 0 && out[0].j == 1);
}

// The rule is checked a block of boxes at a time: offenders anywhere in a
// long input (in the first block, at a block boundary, in the last, partial
// block) are found, the first one named with its own reason.
TEST(UnisizePruner, RefusesTheFirstOffenderOfALongInput) {
  const std::size_t n = 1000;
  std::vector<Box3> good(n);
  for (std::size_t i = 0; i < n; ++i) good[i] = Box3{{float(i), 0, 0}, {float(i) + 1, 1, 1}};
  UnisizePruner pruner;
  std::vector<IndexPair> out;
  for (const std::size_t at : {std::size_t{1}, std::size_t{255}, std::size_t{256}, std::size_t{700}, n - 1}) {
    SCOPED_TRACE(at);
    std::vector<Box3> boxes = good;
    boxes[at].max[1] = 1.5f;                                                         // another size
    if (at + 3 < n) boxes[at + 3].min[2] = std::numeric_limits<float>::quiet_NaN();  // later: not reported
    Status s = pruner.complete(boxes, out);
    EXPECT_EQ(s.code(), StatusCode::kUnsupported);
    EXPECT_EQ(s.index(), at);
    EXPECT_NE(s.message().find("size of the first"), std::string::npos) << s.message();
    boxes[at] = good[at];
    boxes[at].min[0] = -std::numeric_limits<float>::infinity();  // infinite now
    s = pruner.complete(boxes, out);
    EXPECT_EQ(s.index(), at);
    EXPECT_NE(s.message().find("finite"), std::string::npos) << s.message();
    EXPECT_TRUE(out.empty());
  }
  ASSERT_TRUE(pruner.complete(good, out).ok());
  EXPECT_EQ(out.size(), n - 1);
}

}  // namespace
}  // namespace sapling

namespace sapling {
namespace {

// The strips swept in parallel (tasks of about 32k boxes) give the same
// pairs in the same order as one thread, for 2 and 3 threads and an
// engine's task system; the same pool serves several calls. (Also run under
// TSan in CI.)
TEST(UnisizeThreads, PrunerOutputIsTheSameOnAnyThreadCount) {
  for (const int dims : {2, 3}) {
    SCOPED_TRACE(dims);
    const std::vector<Box3> boxes = large_input(dims, 150000);
    std::vector<IndexPair> serial;
    ASSERT_TRUE(UnisizePruner{}.complete(boxes, serial).ok());
    ASSERT_GT(serial.size(), 100000u);
    for (const unsigned threads : {2u, 3u}) {
      ThreadPool pool(threads);
      UnisizePruner pruner(&pool);
      for (int call = 0; call < 2; ++call) {
        std::vector<IndexPair> parallel;
        ASSERT_TRUE(pruner.complete(boxes, parallel).ok());
        ASSERT_EQ(parallel.size(), serial.size());
        EXPECT_TRUE(std::equal(parallel.begin(), parallel.end(), serial.begin(),
                               [](IndexPair a, IndexPair b) { return a.i == b.i && a.j == b.j; }))
            << threads << " threads, call " << call;
      }
    }
  }
}

// The persistent algorithm with Options::threads = 2 against one thread on
// the paper's scene, 80k squares moving: the same deltas, frame by frame.
TEST(UnisizeThreads, PersistentMatchesOneThread) {
  ScenarioParams params;
  params.name = "unisize2d";
  params.n = 80000;
  testgen::expect_same_as("unisize", 2, "unisize", testgen::scenario_trace(params, 4));
}

}  // namespace
}  // namespace sapling
