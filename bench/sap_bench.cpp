// Google Benchmark of the persistent sweep-and-prune's quiet frames (issue 4,
// point 2): at n resting W2 tracy cubes (5% density),
// - BM_NothingMoves: update() with nothing staged, then reading the frame's
//   created and deleted lists (empty): the "zero work when nothing moves";
// - BM_OneSmallMove: one cube steps 1% of its width, alternately up and back
//   down on every axis, and update(): the cost of a frame with few swaps.
// - BM_SwapsPerMover: frames of the tracy scene at n with 1% of the cubes
//   moving and no churn (so every frame takes the incremental path);
//   counter swaps_per_mover, exact whatever the machine's load: Tracy, Buss
//   and Woods (2.1) predict growth as n^(2/3).
// The busy frames (10% moving, churn, mass insertion) are in the harness's
// persistent suite: `sapling bench --suite persistent`.
//
//   sap_bench [Google Benchmark flags]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/sap/sap.hpp"
#include "sapling/broad_phase.hpp"
#include "scenarios/scenario.hpp"

namespace sapling {
namespace {

// A sap broad phase holding the frame-0 boxes of a tracy scene of n cubes, nothing moving.
std::unique_ptr<BroadPhase> resting_world(std::size_t n, std::vector<Box3>& boxes) {
  ScenarioParams params;
  params.name = "tracy";
  params.n = n;
  params.moving = 0;
  std::unique_ptr<Scenario> scenario = make_scenario(params);
  if (!scenario) std::abort();
  std::unique_ptr<BroadPhase> bp = BroadPhase::create("sap");
  if (!bp) std::abort();
  const std::span<const Id> ids = scenario->alive_ids();
  boxes.clear();
  for (const Id id : ids) boxes.push_back(scenario->boxes()[id]);
  if (!bp->add(ids, boxes)) std::abort();
  bp->update();
  return bp;
}

void BM_NothingMoves(benchmark::State& state) {
  std::vector<Box3> boxes;
  const std::unique_ptr<BroadPhase> bp = resting_world(static_cast<std::size_t>(state.range(0)), boxes);
  std::size_t changes = 0;
  for (auto _ : state) {
    const FrameDelta& delta = bp->update();
    changes += delta.created.size() + delta.deleted.size();
    benchmark::DoNotOptimize(changes);
  }
  if (changes != 0) state.SkipWithError("pairs changed in a frame where nothing moved");
  state.counters["pairs"] = static_cast<double>(bp->pairs().size());
}
BENCHMARK(BM_NothingMoves)->Arg(10'000)->Arg(100'000);

void BM_OneSmallMove(benchmark::State& state) {
  std::vector<Box3> boxes;
  const std::unique_ptr<BroadPhase> bp = resting_world(static_cast<std::size_t>(state.range(0)), boxes);
  const Id id = 0;
  Box3 box = boxes[0];
  const float step = 0.01f * (box.max[0] - box.min[0]);
  float sign = 1;
  std::size_t changes = 0;
  for (auto _ : state) {
    for (int k = 0; k < 3; ++k) {
      box.min[k] += sign * step;
      box.max[k] += sign * step;
    }
    sign = -sign;
    if (!bp->move(id, box)) std::abort();
    const FrameDelta& delta = bp->update();
    changes += delta.created.size() + delta.deleted.size();
    benchmark::DoNotOptimize(changes);
  }
  state.counters["pairs"] = static_cast<double>(bp->pairs().size());
}
BENCHMARK(BM_OneSmallMove)->Arg(10'000)->Arg(100'000);

void BM_SwapsPerMover(benchmark::State& state) {
  ScenarioParams params;
  params.name = "tracy";
  params.n = static_cast<std::uint64_t>(state.range(0));
  params.moving = params.n / 100;
  params.inserts = 0;
  params.removes = 0;
  std::unique_ptr<Scenario> scenario = make_scenario(params);
  if (!scenario) std::abort();
  const detail::SweepAndPrune* made = nullptr;
  auto broad_phase = BroadPhase::create(
      "sap",
      [&made](const Options& o) {
        auto sap = std::make_unique<detail::SweepAndPrune>(o);
        sap->set_walk_only(true);  // the swaps of the plain SAP, which the resting set would spare
        made = sap.get();
        return std::unique_ptr<Algorithm>(std::move(sap));
      },
      Options{});
  BroadPhase& bp = *broad_phase;
  const detail::SweepAndPrune& sap = *made;
  std::vector<Box3> boxes;
  auto gather = [&](std::span<const Id> ids) {
    boxes.clear();
    for (const Id id : ids) boxes.push_back(scenario->boxes()[id]);
  };
  gather(scenario->added());
  if (!bp.add(scenario->added(), boxes)) std::abort();
  bp.update();
  std::uint64_t movers = 0;
  const std::uint64_t swaps_before = sap.counters().swaps, recomputed_before = sap.counters().recomputed_frames;
  for (auto _ : state) {
    state.PauseTiming();
    scenario->step();
    gather(scenario->moved());
    movers += scenario->moved().size();
    state.ResumeTiming();
    if (!bp.move(scenario->moved(), boxes)) std::abort();
    bp.update();
  }
  state.counters["swaps_per_mover"] = static_cast<double>(sap.counters().swaps - swaps_before) /
                                      static_cast<double>(std::max<std::uint64_t>(movers, 1));
  state.counters["recomputed_frames"] = static_cast<double>(sap.counters().recomputed_frames - recomputed_before);
}
BENCHMARK(BM_SwapsPerMover)->Arg(10'000)->Arg(50'000)->Arg(100'000)->Arg(200'000)->Iterations(20);

}  // namespace
}  // namespace sapling

BENCHMARK_MAIN();
