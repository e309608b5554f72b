// Replays a trace through an algorithm and through `brute` (or another
// reference) side by side and compares every frame: created and deleted pairs, the whole pair set, and
// the algorithm's invariants. For the algorithm-specific suites (unisize,
// dual-axis) whose traces the general differential suite does not make.
#pragma once

#include <gtest/gtest.h>

#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "sapling/broad_phase.hpp"
#include "sapling/trace.hpp"
#include "scenarios/scenario.hpp"

namespace sapling::testgen {

inline Box2 drop_z(const Box3& b) { return Box2{{b.min[0], b.min[1]}, {b.max[0], b.max[1]}}; }

/// add() or move() of 3D boxes, as Box2 when dims == 2.
inline Status stage_boxes(BroadPhase& bp, bool add, int dims, std::span<const Id> ids, std::span<const Box3> boxes) {
  if (dims == 3) return add ? bp.add(ids, boxes) : bp.move(ids, boxes);
  std::vector<Box2> flat;
  for (const Box3& b : boxes) flat.push_back(drop_z(b));
  return add ? bp.add(ids, std::span<const Box2>(flat)) : bp.move(ids, std::span<const Box2>(flat));
}

/// The first pairs of a list, for failure messages.
inline std::string describe(const std::vector<Pair>& pairs) {
  std::ostringstream os;
  for (std::size_t i = 0; i < pairs.size() && i < 5; ++i) os << " {" << pairs[i].a << "," << pairs[i].b << "}";
  if (pairs.size() > 5) os << " ... (" << pairs.size() << ")";
  return os.str();
}

/// The first `frames` frames of a built-in scenario as a trace (empty, with
/// a test failure, if the parameters are refused).
inline Trace scenario_trace(const ScenarioParams& params, int frames) {
  Trace trace;
  const auto scenario = make_scenario(params);
  EXPECT_NE(scenario, nullptr) << params.name;
  if (!scenario) return trace;
  trace.dims = scenario->dims();
  for (int f = 0; f < frames; ++f) {
    if (f > 0) scenario->step();
    trace.frames.push_back(scenario_frame(*scenario));
  }
  return trace;
}

/// Runs `trace` on `algo` (with `threads` threads) and on `reference` (one
/// thread); every frame's delta and pair set must be the same, and the
/// algorithm's invariants must hold.
inline void expect_same_as(const std::string& algo, unsigned threads, const std::string& reference,
                           const Trace& trace) {
  const auto ref = BroadPhase::create(reference, Options{.dims = trace.dims});
  const auto alg = BroadPhase::create(algo, Options{.dims = trace.dims, .threads = threads});
  ASSERT_NE(ref, nullptr);
  ASSERT_NE(alg, nullptr);
  std::vector<Pair> expected, got;
  for (std::size_t f = 0; f < trace.frames.size(); ++f) {
    SCOPED_TRACE("frame " + std::to_string(f));
    const TraceFrame& frame = trace.frames[f];
    for (BroadPhase* bp : {ref.get(), alg.get()}) {
      ASSERT_TRUE(bp->remove(frame.removed).ok());
      const Status m = stage_boxes(*bp, false, trace.dims, frame.moved, frame.moved_boxes);
      ASSERT_TRUE(m.ok()) << m.message();
      const Status a = stage_boxes(*bp, true, trace.dims, frame.added, frame.added_boxes);
      ASSERT_TRUE(a.ok()) << a.message();
    }
    const FrameDelta& r = ref->update();
    const std::vector<Pair> r_created(r.created.begin(), r.created.end()),
        r_deleted(r.deleted.begin(), r.deleted.end());
    const FrameDelta& d = alg->update();
    const std::vector<Pair> created(d.created.begin(), d.created.end()), deleted(d.deleted.begin(), d.deleted.end());
    EXPECT_EQ(created, r_created) << "created:" << describe(created) << " expected:" << describe(r_created);
    EXPECT_EQ(deleted, r_deleted) << "deleted:" << describe(deleted) << " expected:" << describe(r_deleted);
    ref->sorted_pairs(expected);
    alg->sorted_pairs(got);
    ASSERT_EQ(got, expected) << "pairs:" << describe(got) << " expected:" << describe(expected);
    ASSERT_TRUE(alg->validate());
  }
}

/// Runs `trace` on `algo` and on brute, one thread each.
inline void expect_same_as_brute(const std::string& algo, const Trace& trace) {
  expect_same_as(algo, 1, "brute", trace);
}

}  // namespace sapling::testgen
