// Tests of octree (src/reference/octree/octree.cpp), beyond the differential
// tests every registered algorithm gets: traces aimed at the tree, each
// replayed frame by frame against brute (whole deltas and sorted pair sets)
// with validate() after every frame, under several trees (leaf size from
// the data, tight, tiny leaves, huge leaves, a low root limit that makes
// boxes outsized):
// - the root growing outward, level by level, in every direction, and
//   shrinking back when the far boxes leave;
// - boxes exactly on node borders (multiples of powers of two) at many scales;
// - infinite, +-FLT_MAX and far (1e30) boxes among small ones;
// - a crowd at one point that spreads out and gathers again;
// - a mass insertion, then a mass removal (memory given back), and a
//   removal of most of the world (nodes renumbered);
// - every trace kind of the differential suite under each tree.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/builtin.hpp"
#include "reference/octree/octree.hpp"
#include "same_as_brute.hpp"
#include "sapling/broad_phase.hpp"
#include "trace_generators.hpp"

namespace sapling {
namespace {

using detail::Octree;
using detail::OctreeConfig;
using testgen::Rng;
using testgen::TraceBuilder;

constexpr float kInf = std::numeric_limits<float>::infinity();

std::string describe(const OctreeConfig& c) {
  return "leaf " + std::to_string(c.leaf_size) + ", looseness " + std::to_string(c.looseness) + ", max levels " +
         std::to_string(c.max_levels);
}

// Replays `trace` through an octree with `config` and through brute; every
// frame must agree and validate. Calls after(octree, frame) after each
// frame. Returns the octree's memory at the end.
template <class After>
std::size_t expect_exact(const Trace& trace, const OctreeConfig& config, const std::string& what, After&& after) {
  Octree* algo = nullptr;
  const Options options{.dims = trace.dims};
  const auto bp = BroadPhase::create(
      "octree",
      [&](const Options& o) {
        auto m = std::make_unique<Octree>(o, config);
        algo = m.get();
        return std::unique_ptr<Algorithm>(std::move(m));
      },
      options);
  const auto ref = BroadPhase::create("brute", options);
  EXPECT_NE(bp, nullptr);
  EXPECT_NE(ref, nullptr);
  if (!bp || !ref) return 0;
  std::vector<Pair> expected, got;
  for (std::size_t f = 0; f < trace.frames.size(); ++f) {
    SCOPED_TRACE(what + ", frame " + std::to_string(f) + ", dims " + std::to_string(trace.dims) + ", " +
                 describe(config));
    const TraceFrame& frame = trace.frames[f];
    for (BroadPhase* b : {ref.get(), bp.get()}) {
      EXPECT_TRUE(b->remove(frame.removed).ok());
      EXPECT_TRUE(testgen::stage_boxes(*b, false, trace.dims, frame.moved, frame.moved_boxes).ok());
      EXPECT_TRUE(testgen::stage_boxes(*b, true, trace.dims, frame.added, frame.added_boxes).ok());
    }
    const FrameDelta& r = ref->update();
    const std::vector<Pair> r_created(r.created.begin(), r.created.end()),
        r_deleted(r.deleted.begin(), r.deleted.end());
    const FrameDelta& d = bp->update();
    const std::vector<Pair> created(d.created.begin(), d.created.end()), deleted(d.deleted.begin(), d.deleted.end());
    EXPECT_EQ(created, r_created) << "created:" << testgen::describe(created)
                                  << " expected:" << testgen::describe(r_created);
    EXPECT_EQ(deleted, r_deleted) << "deleted:" << testgen::describe(deleted)
                                  << " expected:" << testgen::describe(r_deleted);
    ref->sorted_pairs(expected);
    bp->sorted_pairs(got);
    EXPECT_EQ(got, expected) << "pairs:" << testgen::describe(got) << " expected:" << testgen::describe(expected);
    EXPECT_TRUE(algo->validate());
    if (::testing::Test::HasFailure()) return 0;
    after(*algo, f);
  }
  return algo->memory_bytes();
}

std::size_t expect_exact(const Trace& trace, const OctreeConfig& config, const std::string& what) {
  return expect_exact(trace, config, what, [](const Octree&, std::size_t) {});
}

// The trees every trace runs under: from the data, tight, tiny leaves, huge
// leaves, and a root limit low enough that many boxes go outsized.
std::vector<OctreeConfig> trees(float unit) {
  return {OctreeConfig{}, OctreeConfig{.looseness = 1}, OctreeConfig{.leaf_size = unit / 4},
          OctreeConfig{.leaf_size = 64.0 * unit}, OctreeConfig{.leaf_size = unit, .looseness = 1.5, .max_levels = 3}};
}

void expect_exact_in_trees(const Trace& trace, float unit, const std::string& what) {
  for (const OctreeConfig& config : trees(unit)) expect_exact(trace, config, what);
}

// The root doubles outward as boxes arrive ever farther, in every
// direction; it shrinks back when they leave.
TEST(OctreeTest, RootGrowsOutwardAndShrinksBack) {
  for (int dims : {2, 3}) {
    TraceBuilder t(dims, 1);
    Rng& r = t.rng();
    t.begin_frame();
    for (int i = 0; i < 20; ++i) t.add(Id(i), testgen::cube(r.uniform(0, 4), r.uniform(0, 4), r.uniform(0, 4), 1));
    Id next = 20;
    for (int f = 1; f <= 24; ++f) {  // far boxes at 2^f, on alternating sides
      t.begin_frame();
      const float far = std::ldexp(1.0f, f);
      for (int k = 0; k < 4; ++k) {
        const float sx = (f + k) % 2 ? 1.0f : -1.0f, sy = k % 2 ? 1.0f : -1.0f;
        t.add(next++, testgen::cube(sx * far, sy * far, dims == 3 ? -sx * far : 0.0f, 1 + float(k)));
      }
      if (f % 3 == 0) t.move(Id(f % 20), testgen::cube(-far / 2, far / 2, 0, far / 4));  // large boxes too
    }
    for (Id id = next; id > 20; --id) {  // the far boxes leave, the farthest first, four a frame
      if ((next - id) % 4 == 0) t.begin_frame();
      t.remove(id - 1);
    }
    t.begin_frame();  // the large boxes come home
    for (int f = 3; f <= 24; f += 3) t.move(Id(f % 20), testgen::cube(r.uniform(0, 4), r.uniform(0, 4), 0, 1));
    int deepest = 0;
    const Trace trace = t.take();
    expect_exact(trace, OctreeConfig{.leaf_size = 1}, "growth", [&](const Octree& o, std::size_t f) {
      deepest = std::max(deepest, o.depth());
      if (f == trace.frames.size() - 1) {
        EXPECT_LE(o.depth(), 8) << "the root shrank back";
      }
    });
    EXPECT_GE(deepest, 24) << "the root grew";
    expect_exact_in_trees(trace, 1.0f, "growth");
  }
}

// A coordinate on a multiple of `scale` (a power of two: a node border),
// or a float next to one.
float on_border(Rng& rng, int cells, float scale) {
  const float x = static_cast<float>(rng.range(-cells, cells)) * scale;
  switch (rng.below(4)) {
    case 0:
      return std::nextafter(x, -kInf);
    case 1:
      return std::nextafter(x, kInf);
    default:
      return x;
  }
}

Box3 border_box(Rng& rng, float scale) {
  Box3 b;
  for (int k = 0; k < 3; ++k) {
    float lo = on_border(rng, 6, scale), hi = on_border(rng, 6, scale);
    if (rng.chance(0.4)) hi = lo;  // flat or a point
    if (lo > hi) std::swap(lo, hi);
    b.min[k] = lo, b.max[k] = hi;
  }
  return b;
}

TEST(OctreeTest, BoxesOnNodeBordersAtManyScales) {
  for (const float scale : {0x1p-30f, 0x1p-3f, 1.0f, 0x1p5f, 0x1p20f, 0x1p60f, 0x1p100f}) {
    for (int dims : {2, 3}) {
      for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        TraceBuilder t(dims, seed);
        const auto make = [&](Rng& r) { return border_box(r, scale); };
        const auto step = [&](Rng& r, const Box3& b) {
          if (r.chance(0.3)) return border_box(r, scale);
          Box3 m = b;  // by a whole number of cells
          for (int k = 0; k < 3; ++k) {
            const float d = static_cast<float>(r.range(-1, 1)) * scale;
            m.min[k] += d, m.max[k] += d;
          }
          return m;
        };
        testgen::steady_frames(t, 60, 12, testgen::Rates{.move = 0.4, .churn = 0.05}, make, step,
                               testgen::IdStyle::kSequential);
        const Trace trace = t.take();
        const std::string what = "border scale " + std::to_string(scale) + " seed " + std::to_string(seed);
        expect_exact_in_trees(trace, scale, what);
        // Leaves of the borders' own size: every border is a node's.
        expect_exact(trace, OctreeConfig{.leaf_size = scale}, what + " on leaves");
        expect_exact(trace, OctreeConfig{.leaf_size = scale, .looseness = 1}, what + " on tight leaves");
      }
    }
  }
}

TEST(OctreeTest, InfiniteHugeAndFarBoxes) {
  for (int dims : {2, 3}) {
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      TraceBuilder t(dims, seed);
      testgen::steady_frames(
          t, 80, 12, testgen::Rates{.move = 0.3, .churn = 0.05}, testgen::far_and_infinite_box,
          [](Rng& r, const Box3&) { return testgen::far_and_infinite_box(r); }, testgen::IdStyle::kSequential);
      const Trace trace = t.take();
      expect_exact_in_trees(trace, 4.0f, "wild seed " + std::to_string(seed));
      // The far and infinite boxes stay out of the tree: it stays shallow.
      expect_exact(trace, OctreeConfig{}, "wild depth", [](const Octree& o, std::size_t) {
        EXPECT_LE(o.depth(), 30);
        EXPECT_GT(o.outsized(), 0u);
      });
    }
  }
}

// Only far boxes: the tree is built at 1e30, its leaves the data's size.
TEST(OctreeTest, AWorldFarAway) {
  for (int dims : {2, 3}) {
    TraceBuilder t(dims, 9);
    const auto make = [](Rng& r) {
      return testgen::cube(1e30f + r.uniform(0, 1e26), -3e29f + r.uniform(0, 1e26), r.uniform(0, 1e26), 1e24f);
    };
    testgen::steady_frames(
        t, 100, 10, testgen::Rates{.move = 0.3, .churn = 0.05}, make,
        [](Rng& r, const Box3& b) { return testgen::jitter(r, b, 1e24); }, testgen::IdStyle::kSequential);
    expect_exact(t.take(), OctreeConfig{}, "far world", [](const Octree& o, std::size_t) {
      EXPECT_EQ(o.outsized(), 0u);
      EXPECT_GT(o.nodes(), 1u);
    });
  }
}

// Everything at one point, then spread over ever more space, then gathered.
TEST(OctreeTest, CrowdAtOnePointThenSpread) {
  for (int dims : {2, 3}) {
    TraceBuilder t(dims, 7);
    const int n = 150;
    t.begin_frame();
    Rng& r = t.rng();
    for (int i = 0; i < n; ++i) t.add(Id(i), testgen::cube(5, 5, 5, i % 3 == 0 ? 0.0f : 1.0f));
    for (int f = 1; f <= 20; ++f) {
      t.begin_frame();
      const float spread = f <= 10 ? float(1 << f) : float(1 << (20 - f));
      for (int i = 0; i < n; ++i) {
        if (i % 7 == f % 7) continue;  // some rest each frame
        t.move(Id(i), testgen::cube(r.uniform(0, spread), r.uniform(0, spread), r.uniform(0, spread), 1));
      }
    }
    const Trace trace = t.take();
    expect_exact_in_trees(trace, 1.0f, "crowd");
  }
}

TEST(OctreeTest, Teleports) {
  for (int dims : {2, 3}) {
    TraceBuilder t(dims, 11);
    const auto make = [](Rng& r) {
      return testgen::cube(r.uniform(-100, 100), r.uniform(-100, 100), r.uniform(-100, 100), r.uniform(0, 16));
    };
    testgen::steady_frames(
        t, 200, 10, testgen::Rates{.move = 0.5, .churn = 0.02}, make, [&](Rng& r, const Box3&) { return make(r); },
        testgen::IdStyle::kSequential);
    expect_exact_in_trees(t.take(), 8.0f, "teleports");
  }
}

// A mass insertion, moves, then everything removed: the memory goes back;
// and a world of which most is removed keeps little more than its share.
TEST(OctreeTest, MassInsertThenMassRemove) {
  const Trace trace = testgen::mass_insert_then_remove_trace();
  for (const OctreeConfig& config : trees(1.0f)) {
    const std::size_t bytes = expect_exact(trace, config, "mass");
    // What stays is the by-slot locations up to the highest slot in use.
    EXPECT_LT(bytes, 64u * 1024u) << "memory kept after the mass removal, " << describe(config);
  }
}

TEST(OctreeTest, MostOfTheWorldRemoved) {
  TraceBuilder t(3, 6);
  Rng& r = t.rng();
  const int n = 20000;
  t.begin_frame();
  for (int i = 0; i < n; ++i) t.add(Id(i), testgen::cube(r.uniform(0, 200), r.uniform(0, 200), r.uniform(0, 200), 1));
  t.begin_frame();
  for (int i = 0; i < n; ++i) {
    if (i % 50 != 0) t.remove(Id(i));
  }
  t.begin_frame();
  for (int i = 0; i < n; i += 50) t.move(Id(i), testgen::cube(r.uniform(0, 200), r.uniform(0, 200), 0, 1));
  std::size_t full = 0;
  const std::size_t left = expect_exact(t.take(), OctreeConfig{}, "most removed", [&](const Octree& o, std::size_t f) {
    if (f == 0) full = o.memory_bytes();
  });
  // A fiftieth of the boxes stay; the locations by slot (16 bytes up to the
  // highest slot in use) stay too.
  EXPECT_LT(left * 4, full) << "the memory of the removed boxes and nodes went back";
}

// Every trace kind of the differential suite under each tree.
TEST(OctreeTest, DifferentialTraceKindsInEveryTree) {
  for (const testgen::TraceKind kind : testgen::kAllTraceKinds) {
    for (int dims : {2, 3}) {
      const Trace trace = testgen::make_trace(kind, testgen::GenParams{.dims = dims, .seed = 3});
      expect_exact_in_trees(trace, 1.0f, std::string(testgen::trace_kind_name(kind)));
    }
  }
}

// The registered algorithm on random steady traces and a tracy scene.
TEST(OctreeTest, SameAsBruteOnRandomTraces) {
  for (int dims : {2, 3}) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE("seed " + std::to_string(seed));
      TraceBuilder t(dims, seed);
      const auto make = [](Rng& r) { return testgen::uniform_box(r, 30); };
      testgen::steady_frames(
          t, 400, 15, testgen::Rates{.move = 0.2, .churn = 0.02}, make,
          [](Rng& r, const Box3& b) { return testgen::jitter(r, b, 0.5); }, testgen::IdStyle::kRandom32);
      testgen::expect_same_as_brute("octree", t.take());
    }
  }
  ScenarioParams tracy;
  tracy.name = "tracy";
  tracy.n = 2000;
  testgen::expect_same_as_brute("octree", testgen::scenario_trace(tracy, 6));
}

// The debug draw: one box per live node, and every tree box's centre inside
// a drawn node.
TEST(OctreeDebugDraw, DrawsEveryLiveNode) {
  struct Nodes : DebugDraw {
    std::vector<Box3> nodes;
    std::uint64_t counted = 0;
    void box(const Box3& b, DebugCategory c, Id owner) override {
      EXPECT_EQ(c, DebugCategory::kNode);
      EXPECT_EQ(owner, kNoOwner);
      nodes.push_back(b);
    }
    void count(std::string_view name, std::uint64_t value) override {
      EXPECT_EQ(name, "nodes");
      counted = value;
    }
  } draw;
  auto bp = BroadPhase::create("octree");
  std::vector<Box3> boxes;
  std::vector<Id> ids;
  for (int i = 0; i < 400; ++i) {
    const float x = float(i % 20) * 3.0f, y = float(i / 20) * 3.0f, z = float(i % 7);
    boxes.push_back(Box3{{x, y, z}, {x + 1, y + 1, z + 1}});
    ids.push_back(static_cast<Id>(i));
  }
  ASSERT_TRUE(bp->add(ids, boxes).ok());
  bp->update();
  bp->debug_draw(draw);
  ASSERT_FALSE(draw.nodes.empty());
  EXPECT_EQ(draw.counted, draw.nodes.size());
  for (const Box3& b : boxes) {
    bool inside = false;
    for (const Box3& c : draw.nodes) {
      bool in = true;
      for (int k = 0; k < 3; ++k) in = in && c.min[k] <= b.min[k] + 0.5f && b.min[k] + 0.5f <= c.max[k];
      inside = inside || in;
    }
    EXPECT_TRUE(inside) << b.min[0] << " " << b.min[1] << " " << b.min[2];
  }
}

}  // namespace
}  // namespace sapling
