// unisize against brute, frame by frame through BroadPhase, on traces where
// every box has one size (the differential suite's traces mostly have mixed
// sizes, which unisize refuses): touching lattices, identical boxes, points,
// fine random positions, translates whose max is rounded (the case the
// paper's plain tie rule gets wrong), large coordinates, signed zeros, more
// boxes than one strip holds, 2D and 3D, flat and not, with moves and
// churn. Then the size rule itself: what is refused, with which status, and
// that a refusal leaves no trace.
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

Box3 make_box(Kind kind, const Shape& shape, Rng& rng) {
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
                                                          Kind::kFlat3d),
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
                    [members](const Options& o) { return builtin::make_unisize_with_strips(o, members); }, false}));
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

TEST(UnisizeRule, RefusesInfiniteAndInexactFirstBoxes) {
  const auto bp = BroadPhase::create("unisize");
  EXPECT_EQ(bp->add(1, Box3{{-kInf, 0, 0}, {kInf, 1, 1}}).code(), StatusCode::kUnsupported);
  EXPECT_EQ(bp->add(1, Box3{{0, 0, 0}, {kInf, 1, 1}}).code(), StatusCode::kUnsupported);
  // -0.1 .. 1: the extent 1.1 is not a float, so this box cannot fix the size.
  const Status s = bp->add(1, Box3{{-0.1f, 0, 0}, {1, 1, 1}});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("float"), std::string::npos) << s.message();
  // Nothing was fixed by the refusals.
  ASSERT_TRUE(bp->add(1, cube_at(0, 0, 0, 3)).ok());
  ASSERT_TRUE(bp->add(2, cube_at(3, 3, 3, 3)).ok());  // touching at a corner
  EXPECT_EQ(bp->update().created.size(), 1u);
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
  for (const Kind kind :
       {Kind::kLattice, Kind::kIdentical, Kind::kPoints, Kind::kFine, Kind::kLarge, Kind::kSignedZero, Kind::kFlat3d}) {
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
