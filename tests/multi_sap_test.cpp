// Tests of multi-sap (src/algorithms/multi_sap/multi_sap.cpp), beyond the differential
// tests every registered algorithm gets: traces aimed at the grid, each
// replayed frame by frame against brute (whole deltas and sorted pair sets)
// with validate() after every frame, under several grids (tiny cells, huge
// cells, a low outsized threshold, frames applied in slices of 5 changes):
// - boxes straddling cell borders and sitting exactly on them, at many
//   scales, moving by whole cells;
// - infinite, +-FLT_MAX and far (1e30) boxes among small ones;
// - a crowd in one cell that spreads out and gathers again;
// - boxes growing into the outsized set and shrinking out of it;
// - teleports; a mass insertion, then a mass removal (memory given back);
// - every trace kind of the differential suite under each grid.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/builtin.hpp"
#include "algorithms/multi_sap/multi_sap.hpp"
#include "detail/cell_size_policy.hpp"
#include "same_as_brute.hpp"
#include "sapling/broad_phase.hpp"
#include "trace_generators.hpp"

namespace sapling {
namespace {

using detail::MultiSap;
using detail::MultiSapConfig;
using testgen::Rng;
using testgen::TraceBuilder;

constexpr float kInf = std::numeric_limits<float>::infinity();

// Replays `trace` through multi-sap with `config` and through brute; every
// frame must agree and validate. Returns the multi-sap's memory at the end.
std::size_t expect_exact(const Trace& trace, const MultiSapConfig& config, const std::string& what,
                         const std::function<void(MultiSap&, std::size_t)>& before_frame = {}) {
  MultiSap* algo = nullptr;
  const Options options{.dims = trace.dims};
  const auto bp = BroadPhase::create(
      "multi-sap",
      [&](const Options& o) {
        auto m = std::make_unique<MultiSap>(o, config);
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
    SCOPED_TRACE(what + ", frame " + std::to_string(f) + ", mode " +
                 (config.mode == detail::Consolidation::kWitness ? "witness" : "home") + ", cell size " +
                 std::to_string(config.cell_size) + ", max cells " + std::to_string(config.max_cells) + ", slice " +
                 std::to_string(config.slice) + ", chunk " + std::to_string(config.chunk));
    const TraceFrame& frame = trace.frames[f];
    if (before_frame && algo != nullptr) before_frame(*algo, f);
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
    // Region queries on the grid (both generations while regridding), as
    // brute's test of every box answers them: around this frame's boxes,
    // and the whole of space.
    std::vector<Box3> queries = {Box3{{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}}};
    for (std::size_t i = 0; i < frame.added_boxes.size() && i < 3; ++i) queries.push_back(frame.added_boxes[i]);
    for (std::size_t i = 0; i < frame.moved_boxes.size() && i < 3; ++i) {
      Box3 q = frame.moved_boxes[i];
      for (int k = 0; k < 3; ++k) {
        const float w = q.max[k] - q.min[k];
        if (w < 1e30f) q.min[k] -= w, q.max[k] += w;
      }
      queries.push_back(q);
    }
    std::vector<Id> found, truth;
    for (Box3 q : queries) {
      if (trace.dims == 2) q.min[2] = q.max[2] = 0.0f;
      EXPECT_TRUE(bp->query(q, found).ok());
      EXPECT_TRUE(ref->query(q, truth).ok());
      EXPECT_EQ(found, truth) << "query " << q.min[0] << " " << q.min[1] << " .. " << q.max[0] << " " << q.max[1];
    }
    if (::testing::Test::HasFailure()) return 0;
  }
  return algo->memory_bytes();
}

// The grids every trace runs under: chosen from the data, tiny cells, big
// cells, and a threshold that makes most boxes outsized now and then.
// Witness counts (validate() checks each pair's count) on the data's grid,
// on tiny cells where a pair has many witnesses, and in slices. Segmented
// cells (cells=segmented) in both modes, with chunks of 2 to 5 entries
// (every change splits, merges or crosses chunks) and the default's.
std::vector<MultiSapConfig> grids(float unit) {
  using enum detail::Consolidation;
  return {MultiSapConfig{},
          MultiSapConfig{.cell_size = unit},
          MultiSapConfig{.cell_size = 16.0 * unit},
          MultiSapConfig{.cell_size = 2.0 * unit, .max_cells = 2},
          MultiSapConfig{.cell_size = 4.0 * unit, .slice = 5},
          MultiSapConfig{.mode = kWitness},
          MultiSapConfig{.mode = kWitness, .cell_size = unit, .max_cells = 64},
          MultiSapConfig{.mode = kWitness, .cell_size = 2.0 * unit, .max_cells = 2, .slice = 5},
          MultiSapConfig{.chunk = 2},
          MultiSapConfig{.cell_size = 16.0 * unit, .chunk = 3},
          MultiSapConfig{.cell_size = 4.0 * unit, .slice = 5, .chunk = 32},
          MultiSapConfig{.mode = kWitness, .chunk = 4},
          MultiSapConfig{.mode = kWitness, .cell_size = 2.0 * unit, .max_cells = 2, .slice = 5, .chunk = 5}};
}

void expect_exact_on_grids(const Trace& trace, float unit, const std::string& what) {
  for (const MultiSapConfig& config : grids(unit)) expect_exact(trace, config, what);
}

// A coordinate on or next to a multiple of `scale`.
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
    float lo = on_border(rng, 4, scale), hi = on_border(rng, 4, scale);
    if (rng.chance(0.5)) hi = lo;  // flat or a point
    if (lo > hi) std::swap(lo, hi);
    b.min[k] = lo, b.max[k] = hi;
  }
  return b;
}

Trace border_trace(int dims, std::uint64_t seed, float scale) {
  TraceBuilder t(dims, seed);
  const auto make = [&](Rng& r) { return border_box(r, scale); };
  const auto step = [&](Rng& r, const Box3& b) {
    Box3 m = b;  // a whole number of cells, or a fresh border box
    if (r.chance(0.3)) return border_box(r, scale);
    for (int k = 0; k < 3; ++k) {
      const float d = static_cast<float>(r.range(-1, 1)) * scale;
      m.min[k] += d, m.max[k] += d;
    }
    return m;
  };
  testgen::steady_frames(t, 60, 12, testgen::Rates{.move = 0.4, .churn = 0.05}, make, step,
                         testgen::IdStyle::kSequential);
  return t.take();
}

TEST(MultiSapTest, BoxesOnCellBordersAtManyScales) {
  for (const float scale : {0x1p-20f, 0.1f, 1.0f, 3.0f, 1000.0f, 0x1p40f, 1e30f}) {
    for (int dims : {2, 3}) {
      for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        const Trace trace = border_trace(dims, seed, scale);
        expect_exact_on_grids(trace, scale, "border scale " + std::to_string(scale) + " seed " + std::to_string(seed));
        // The grid's own cells at the scale of the boxes' borders.
        expect_exact(trace, MultiSapConfig{.cell_size = scale}, "border on cells");
        expect_exact(trace, MultiSapConfig{.cell_size = scale, .chunk = 3}, "border on segmented cells");
      }
    }
  }
}

TEST(MultiSapTest, InfiniteHugeAndFarBoxes) {
  for (int dims : {2, 3}) {
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      TraceBuilder t(dims, seed);
      testgen::steady_frames(
          t, 80, 12, testgen::Rates{.move = 0.3, .churn = 0.05}, testgen::far_and_infinite_box,
          [](Rng& r, const Box3&) { return testgen::far_and_infinite_box(r); }, testgen::IdStyle::kSequential);
      expect_exact_on_grids(t.take(), 4.0f, "wild seed " + std::to_string(seed));
    }
  }
}

// Everything in one cell, then spread over many, then gathered again.
TEST(MultiSapTest, CrowdThenSpread) {
  for (int dims : {2, 3}) {
    TraceBuilder t(dims, 7);
    const int n = 150;
    t.begin_frame();
    Rng& r = t.rng();
    for (int i = 0; i < n; ++i) t.add(Id(i), testgen::cube(r.uniform(0, 3), r.uniform(0, 3), r.uniform(0, 3), 1));
    for (int f = 1; f <= 16; ++f) {
      t.begin_frame();
      const float spread = f <= 8 ? float(1 << f) : float(1 << (16 - f));
      for (int i = 0; i < n; ++i) {
        if (i % 7 == f % 7) continue;  // some rest each frame
        t.move(Id(i), testgen::cube(r.uniform(0, spread), r.uniform(0, spread), r.uniform(0, spread), 1));
      }
    }
    expect_exact_on_grids(t.take(), 4.0f, "crowd");
  }
}

// Boxes that grow into the outsized set and shrink back, some infinite.
TEST(MultiSapTest, BoxesEnterAndLeaveTheOutsizedSet) {
  for (int dims : {2, 3}) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      TraceBuilder t(dims, seed);
      const int n = 100;
      t.begin_frame();
      Rng& r = t.rng();
      for (int i = 0; i < n; ++i) t.add(Id(i), testgen::cube(r.uniform(0, 40), r.uniform(0, 40), r.uniform(0, 40), 1));
      for (int f = 1; f <= 14; ++f) {
        t.begin_frame();
        for (int i = 0; i < n; ++i) {
          if (!r.chance(0.3)) continue;
          const Box3& b = t.box_of(Id(i));
          Box3 m = testgen::cube(b.min[0], b.min[1], b.min[2], 1);
          switch (r.below(4)) {
            case 0:  // grows to many cells
              for (int k = 0; k < 3; ++k) m.max[k] = m.min[k] + r.uniform(5, 60);
              break;
            case 1:  // a ground plane
              m.min[1] = -kInf, m.max[1] = kInf, m.min[0] = -FLT_MAX, m.max[0] = FLT_MAX;
              break;
            default:  // back to a cube, moved a little
              m = testgen::cube(b.min[0] + r.uniform(-1, 1), b.min[1] + r.uniform(-1, 1), b.min[2], 1);
          }
          t.move(Id(i), m);
        }
      }
      expect_exact_on_grids(t.take(), 4.0f, "outsized seed " + std::to_string(seed));
    }
  }
}

TEST(MultiSapTest, Teleports) {
  for (int dims : {2, 3}) {
    TraceBuilder t(dims, 11);
    const auto make = [](Rng& r) {
      return testgen::cube(r.uniform(-100, 100), r.uniform(-100, 100), r.uniform(-100, 100), 8);
    };
    testgen::steady_frames(
        t, 200, 10, testgen::Rates{.move = 0.5, .churn = 0.02}, make, [&](Rng& r, const Box3&) { return make(r); },
        testgen::IdStyle::kSequential);
    expect_exact_on_grids(t.take(), 8.0f, "teleports");
  }
}

// A mass insertion, moves, then everything removed: the memory goes back.
TEST(MultiSapTest, MassInsertThenMassRemove) {
  const Trace trace = testgen::mass_insert_then_remove_trace();
  for (const MultiSapConfig& config : grids(1.0f)) {
    const std::size_t bytes = expect_exact(trace, config, "mass");
    EXPECT_LT(bytes, 64u * 1024u) << "memory kept after the mass removal";
  }
}

// A frame that removes most of the world starts over (start_over()): the
// rest moves, new boxes come and outsized ones stay in the same frame, in a
// dense world (many pairs survive it), then play goes on; twice.
Trace most_leave_trace() {
  TraceBuilder t(3, 31);
  Rng& r = t.rng();
  const auto box = [&](float size) {
    return testgen::cube(r.uniform(0, 20), r.uniform(0, 20), r.uniform(0, 20), size);
  };
  Id next = 0;
  t.begin_frame();
  for (int i = 0; i < 1500; ++i) t.add(next++, box(r.chance(0.02) ? 30.0f : 1.5f));
  for (int round = 0; round < 2; ++round) {
    t.begin_frame();
    const std::vector<Id> live(t.live_ids().begin(), t.live_ids().end());
    for (const Id id : live) {
      if (r.chance(0.7)) {
        t.remove(id);
      } else if (r.chance(0.5)) {
        const Box3& b = t.box_of(id);
        t.move(id, testgen::cube(b.min[0] + 0.25f, b.min[1], b.min[2], b.max[0] - b.min[0]));
      }
    }
    for (int i = 0; i < 100; ++i) t.add(next++, box(1.5f));
    for (int f = 0; f < 3; ++f) {
      t.begin_frame();
      for (const Id id : t.live_ids()) {
        if (r.chance(0.3)) t.move(id, box(1.5f));
      }
    }
  }
  return t.take();
}

TEST(MultiSapTest, MostOfTheWorldLeavesWhileTheRestMoves) {
  const Trace trace = most_leave_trace();
  for (const MultiSapConfig& config : grids(1.0f)) expect_exact(trace, config, "most leave");
}

// Cells updated in parallel (tasks of consecutive cells, their findings
// replayed in order) give the same deltas and the same pairs() in the same
// order as one thread, in both modes; also run under TSan in CI.
TEST(MultiSapThreads, SameOutputInTheSameOrderOnAnyThreadCount) {
  ScenarioParams params;
  params.name = "tracy";
  params.n = 30000;
  // A tracy world, and one that mostly leaves (start_over()) while the rest moves.
  for (const Trace& trace : {testgen::scenario_trace(params, 5), most_leave_trace()}) {
    for (const char* algo : {"multi-sap", "multi-sap:mode=witness", "multi-sap:cells=segmented,chunk=4"}) {
      SCOPED_TRACE(algo);
      auto one = BroadPhase::create(algo, Options{.dims = trace.dims});
      ASSERT_NE(one, nullptr);
      for (const unsigned threads : {2u, 3u}) {
        auto many = BroadPhase::create(algo, Options{.dims = trace.dims, .threads = threads});
        ASSERT_NE(many, nullptr);
        auto single = BroadPhase::create(algo, Options{.dims = trace.dims});
        for (std::size_t f = 0; f < trace.frames.size(); ++f) {
          SCOPED_TRACE("threads " + std::to_string(threads) + ", frame " + std::to_string(f));
          const TraceFrame& frame = trace.frames[f];
          for (BroadPhase* bp : {single.get(), many.get()}) {
            ASSERT_TRUE(bp->remove(frame.removed).ok());
            ASSERT_TRUE(testgen::stage_boxes(*bp, false, trace.dims, frame.moved, frame.moved_boxes).ok());
            ASSERT_TRUE(testgen::stage_boxes(*bp, true, trace.dims, frame.added, frame.added_boxes).ok());
          }
          const FrameDelta& a = single->update();
          const std::vector<Pair> created(a.created.begin(), a.created.end()),
              deleted(a.deleted.begin(), a.deleted.end());
          const FrameDelta& b = many->update();
          EXPECT_TRUE(std::equal(created.begin(), created.end(), b.created.begin(), b.created.end()));
          EXPECT_TRUE(std::equal(deleted.begin(), deleted.end(), b.deleted.begin(), b.deleted.end()));
          ASSERT_TRUE(
              std::equal(single->pairs().begin(), single->pairs().end(), many->pairs().begin(), many->pairs().end()));
        }
        EXPECT_FALSE(single->pairs().empty());
      }
    }
  }
}

// Options::settings: the mode and the cell size taken, anything else refused
// with a reason, and the NAME:SETTINGS form of create().
TEST(MultiSapSettings, TakenOrRefusedWithAReason) {
  Status why;
  EXPECT_NE(BroadPhase::create("multi-sap", Options{.settings = "mode=witness,cell_size=2.5"}, &why), nullptr);
  EXPECT_NE(BroadPhase::create("multi-sap:mode=home,boxes_per_cell=300"), nullptr);
  EXPECT_NE(BroadPhase::create("multi-sap:cells=segmented,chunk=25,mode=witness"), nullptr);
  EXPECT_NE(BroadPhase::create("multi-sap:cells=sorted"), nullptr);
  for (const char* bad :
       {"mode=fast", "cell_size=-1", "cell_size=inf", "cell_size=nan", "cell=2", "mode", "mode=home,mode=home",
        "boxes_per_cell=0", "mode=witness,", "=3", "cells=tree", "chunk=32", "cells=sorted,chunk=32",
        "cells=segmented,chunk=1", "cells=segmented,chunk=2.5", "cells=segmented,chunk=1e9"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(BroadPhase::create("multi-sap", Options{.settings = bad}, &why), nullptr);
    EXPECT_EQ(why.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(why.operation(), Operation::kCreate);
    EXPECT_NE(std::string(why.detail()), "");
  }
  EXPECT_EQ(BroadPhase::create("multi-sap:mode=witness", Options{.settings = "mode=home"}, &why), nullptr);
  EXPECT_NE(why.message().find("settings"), std::string::npos) << why.message();
  EXPECT_EQ(BroadPhase::create("brute:mode=witness", {}, &why), nullptr);
  EXPECT_NE(why.message().find("no settings"), std::string::npos) << why.message();
  EXPECT_EQ(BroadPhase::create("sap:mode=witness", {}, &why), nullptr);  // sap's one setting is path
  EXPECT_NE(why.message().find("path"), std::string::npos) << why.message();
  EXPECT_EQ(BroadPhase::create("sap:path=fast", {}, &why), nullptr);
  EXPECT_NE(why.message().find("auto, walk, batch or search"), std::string::npos) << why.message();
  EXPECT_NE(BroadPhase::create("sap:path=walk", {}, &why), nullptr);
  EXPECT_EQ(BroadPhase::create("nothing:mode=witness", {}, &why), nullptr);
  for (const char* slip : {"sap:", "multi-sap:", "brute:"}) {  // a colon and nothing after it
    EXPECT_EQ(BroadPhase::create(slip, {}, &why), nullptr) << slip;
    EXPECT_NE(why.message().find("no settings after"), std::string::npos) << why.message();
  }
}

// A regrid in the middle of a trace changes no output: the boxes move to a
// grid of another size a few per frame (so that both grids live for many
// frames, boxes changing in both), and again once it is done, finer and
// coarser, on every kind of trace.
TEST(MultiSapRegrid, MidTraceRegridsChangeNoOutput) {
  std::vector<std::pair<std::string, Trace>> traces;
  for (const testgen::TraceKind kind : testgen::kAllTraceKinds) {
    for (int dims : {2, 3}) {
      traces.emplace_back(std::string(testgen::trace_kind_name(kind)) + " " + std::to_string(dims) + "d",
                          testgen::make_trace(kind, testgen::GenParams{.dims = dims, .seed = 5}));
    }
  }
  for (int dims : {2, 3}) {
    traces.emplace_back("border", border_trace(dims, 2, 1.0f));
    TraceBuilder t(dims, 3);
    testgen::steady_frames(
        t, 80, 16, testgen::Rates{.move = 0.3, .churn = 0.05}, testgen::far_and_infinite_box,
        [](Rng& r, const Box3&) { return testgen::far_and_infinite_box(r); }, testgen::IdStyle::kSequential);
    traces.emplace_back("wild", t.take());
  }
  for (const auto& [name, trace] : traces) {
    // Sorted cells, and segmented ones of 3 entries a chunk.
    for (const std::uint32_t chunk : {0u, 3u}) {
      for (const double factor : {0.5, 2.0, 0.7}) {
        for (const std::size_t per_frame : {std::size_t{3}, std::size_t{40}}) {
          if (chunk != 0 && factor == 0.7) continue;
          int regrids = 0;
          expect_exact(trace, MultiSapConfig{.cell_size = 2.0, .relocations = per_frame, .chunk = chunk},
                       name + " regrid x" + std::to_string(factor) + " by " + std::to_string(per_frame) + " chunk " +
                           std::to_string(chunk),
                       [&, factor = factor](MultiSap& m, std::size_t f) {
                         // Three regrids at most: by the factor, back, and by it again.
                         const double by = regrids % 2 == 0 ? factor : 1 / factor;
                         if (f >= 1 && regrids < 3 && !m.regridding() && m.regrid(m.cell_size() * by)) ++regrids;
                       });
          EXPECT_GE(regrids, 1) << name;
        }
      }
    }
  }
}

// The grid follows the world: a crowd gathered in a few cells spreads out
// sixteenfold, and the cells grow with it, a step at a time, every frame
// exact.
TEST(MultiSapRegrid, GridFollowsACrowdThatSpreads) {
  TraceBuilder t(3, 9);
  Rng& r = t.rng();
  const int n = 4000;
  t.begin_frame();
  for (int i = 0; i < n; ++i) t.add(Id(i), testgen::cube(r.uniform(0, 20), r.uniform(0, 20), r.uniform(0, 20), 1));
  for (int f = 1; f <= 90; ++f) {
    t.begin_frame();
    const float spread = 20.0f * std::min(16.0f, 1.0f + float(f) / 4.0f);
    for (int i = f % 2; i < n; i += 2) {
      t.move(Id(i), testgen::cube(r.uniform(0, spread), r.uniform(0, spread), r.uniform(0, spread), 1));
    }
  }
  double first = 0, last = 0;
  bool regridded = false;
  const Trace trace = t.take();
  expect_exact(trace, MultiSapConfig{}, "spreading crowd", [&](MultiSap& m, std::size_t f) {
    if (f == 1) first = m.cell_size();
    regridded = regridded || m.regridding();
    last = m.cell_size();
  });
  EXPECT_TRUE(regridded);
  EXPECT_GT(last, 2 * first) << "cells of " << first << " should have grown";
  // The same with segmented cells: regrids move their entries alike.
  regridded = false;
  expect_exact(trace, MultiSapConfig{.chunk = 16}, "spreading crowd, segmented", [&](MultiSap& m, std::size_t f) {
    if (f == 1) first = m.cell_size();
    regridded = regridded || m.regridding();
    last = m.cell_size();
  });
  EXPECT_TRUE(regridded);
  EXPECT_GT(last, 2 * first);
}

// A flat world (Terdiman II.1's bad case for one SAP): unit squares at one
// height, z = [0, 1], as in the bench's flat scenes. The size comes from
// the spread over x and y alone (z adds no factor: the same size as the 2D
// world's), puts about boxes_per_cell squares in a cell, and is above the
// squares' height, so each square is in one cell along z and in at most 2x2
// cells, none outsized; the grid keeps that size while the squares move, and
// every frame is exact.
TEST(MultiSapCellSize, FlatWorldSizedByItsTwoSpreadAxes) {
  TraceBuilder t(3, 11);
  Rng& r = t.rng();
  const int n = 4000;
  const double side = std::sqrt(n / 0.2);  // density 0.2, as flat-100k-d200
  std::vector<Box3> boxes;
  for (int i = 0; i < n; ++i) {
    const float x = r.uniform(0, side - 1), y = r.uniform(0, side - 1);
    boxes.push_back(Box3{{x, y, 0}, {x + 1, y + 1, 1}});
  }
  const double aim = MultiSapConfig{}.boxes_per_cell;
  const double size = detail::cell_size_for(boxes, boxes.size(), 3, aim);
  EXPECT_EQ(size, detail::cell_size_for(boxes, boxes.size(), 2, aim));
  EXPECT_GT(size, 1.0) << "a square would straddle cells along z";
  const double per_cell = n * (size + 1) * (size + 1) / (side * side);  // a square meets a cell: (size + 1)^2
  EXPECT_GT(per_cell, aim * 0.8);
  EXPECT_LT(per_cell, aim * 1.25);
  t.begin_frame();
  for (int i = 0; i < n; ++i) t.add(Id(i), boxes[i]);
  for (int f = 1; f <= 12; ++f) {
    t.begin_frame();
    for (int i = 0; i < n; ++i) {
      Box3& b = boxes[i];
      const float dx = r.uniform(-0.2, 0.2), dy = r.uniform(-0.2, 0.2);
      b = Box3{{b.min[0] + dx, b.min[1] + dy, 0}, {b.min[0] + dx + 1, b.min[1] + dy + 1, 1}};
      t.move(Id(i), b);
    }
  }
  bool regridded = false;
  double chosen = 0;
  expect_exact(t.take(), MultiSapConfig{}, "flat world", [&](MultiSap& m, std::size_t) {
    regridded = regridded || m.regridding();
    chosen = m.cell_size();
  });
  EXPECT_FALSE(regridded);
  EXPECT_NEAR(chosen, size, size * 0.05);  // from the sample of frame 0's boxes
}

// Every trace kind of the differential suite under each grid.
TEST(MultiSapTest, DifferentialTraceKindsOnEveryGrid) {
  for (const testgen::TraceKind kind : testgen::kAllTraceKinds) {
    for (int dims : {2, 3}) {
      const Trace trace = testgen::make_trace(kind, testgen::GenParams{.dims = dims, .seed = 3});
      expect_exact_on_grids(trace, 1.0f, std::string(testgen::trace_kind_name(kind)));
    }
  }
}

}  // namespace
}  // namespace sapling

namespace sapling {
namespace {

// The debug draw (debug_draw.hpp): one box per live cell, each cell a cube
// of the grid's edge, and every live box's min corner inside a drawn cell.
TEST(MultiSapDebugDraw, DrawsEveryLiveCell) {
  struct Cells : DebugDraw {
    std::vector<Box3> cells;
    std::uint64_t counted = 0;
    void box(const Box3& b, DebugCategory c, Id owner) override {
      EXPECT_EQ(c, DebugCategory::kCell);
      EXPECT_EQ(owner, kNoOwner);
      cells.push_back(b);
    }
    void count(std::string_view name, std::uint64_t value) override {
      EXPECT_EQ(name, "cells");
      counted = value;
    }
  } draw;
  auto bp = BroadPhase::create("multi-sap");
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
  ASSERT_FALSE(draw.cells.empty());
  EXPECT_EQ(draw.counted, draw.cells.size());
  for (const Box3& b : boxes) {
    bool inside = false;
    for (const Box3& c : draw.cells) {
      bool in = true;
      for (int k = 0; k < 3; ++k) in = in && c.min[k] <= b.min[k] && b.min[k] <= c.max[k];
      inside = inside || in;
    }
    EXPECT_TRUE(inside) << b.min[0] << " " << b.min[1] << " " << b.min[2];
  }
}

}  // namespace
}  // namespace sapling
