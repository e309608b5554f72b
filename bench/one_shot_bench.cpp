// Google Benchmark suite of the one-shot scenes (bench/harness/scenes.cpp):
// every scene x every contender that supports it, from the same harness as
// `sapling bench`. Each iteration is one frame (static scenes: one rebuild
// from scratch), timed manually around Contender::frame() only, so stepping
// the scenario is not counted. Counters: pairs after the last frame, and the
// frame-0 (mass insertion) time in ms. Contenders a scene skips by default
// (too slow at its size) are not registered. Each complete scene also has a
// `memory-pass` entry: reading the boxes once and writing the pairs once.
//
//   one_shot_bench [--quick] [--threads=T] [Google Benchmark flags]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "harness/contender.hpp"
#include "harness/scenes.hpp"
#include "sapling/box_pruning.hpp"

namespace sapling::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void run_frames(benchmark::State& state, const SceneSpec& spec, const ContenderInfo& info, unsigned threads) {
  std::unique_ptr<Scenario> scenario = spec.make();
  const SceneShape shape = shape_of(spec, *scenario);
  std::unique_ptr<Contender> contender = info.make(ContenderOptions{threads});
  contender->reset(shape);
  Clock::time_point start = Clock::now();
  contender->frame(*scenario);
  const double frame0_s = seconds_since(start);
  for (auto _ : state) {
    if (spec.is_static) {
      contender->reset(shape);
    } else {
      scenario->step();
    }
    start = Clock::now();
    contender->frame(*scenario);
    state.SetIterationTime(seconds_since(start));
  }
  state.counters["pairs"] = static_cast<double>(contender->pair_count());
  state.counters["frame0_ms"] = frame0_s * 1000;
}

// The floor no one-shot method can go under: read every live box once and
// write as many pairs as the scene has (counted beforehand, untimed). The
// "within 3x of one pass over memory" yardstick of the box-pruning issue.
void memory_pass(benchmark::State& state, const SceneSpec& spec) {
  std::unique_ptr<Scenario> scenario = spec.make();
  std::vector<Box3> boxes;
  detail::gather(*scenario, scenario->alive_ids(), boxes);
  std::vector<IndexPair> pairs;
  complete_pairs(boxes, pairs);
  const std::size_t count = pairs.size();
  for (auto _ : state) {
    const Clock::time_point start = Clock::now();
    float sum = 0;
    for (const Box3& b : boxes) sum += (b.max[0] - b.min[0]) + (b.max[1] - b.min[1]) + (b.max[2] - b.min[2]);
    pairs.clear();
    for (std::size_t k = 0; k < count; ++k)
      pairs.push_back({static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(k + 1)});
    benchmark::DoNotOptimize(sum);
    benchmark::DoNotOptimize(pairs.data());
    state.SetIterationTime(seconds_since(start));
  }
  state.counters["pairs"] = static_cast<double>(count);
}

// Removes "--name" or "--name=value" from argv; returns the value ("" for a bare flag), or null.
const char* take_flag(int& argc, char** argv, const char* name) {
  const std::size_t len = std::strlen(name);
  for (int k = 1; k < argc; ++k) {
    if (std::strncmp(argv[k], name, len) == 0 && (argv[k][len] == '\0' || argv[k][len] == '=')) {
      const char* value = argv[k][len] == '=' ? argv[k] + len + 1 : "";
      for (int j = k; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      return value;
    }
  }
  return nullptr;
}

}  // namespace
}  // namespace sapling::bench

int main(int argc, char** argv) {
  using namespace sapling::bench;
  const bool quick = take_flag(argc, argv, "--quick") != nullptr;
  const char* threads_flag = take_flag(argc, argv, "--threads");
  const unsigned threads = threads_flag && *threads_flag ? static_cast<unsigned>(std::stoul(threads_flag)) : 1;

  for (const SceneSpec& scene : suite_scenes("one-shot", quick)) {
    auto spec = std::make_shared<const SceneSpec>(scene);
    const SceneShape shape = shape_of(*spec, *spec->make());
    const Query query = shape.bipartite() ? Query::kBipartite : Query::kComplete;
    if (query == Query::kComplete) {
      benchmark::RegisterBenchmark((spec->name + "/memory-pass").c_str(),
                                   [spec](benchmark::State& state) { memory_pass(state, *spec); })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->Iterations(std::max(5, spec->frames));
    }
    for (const ContenderInfo& info : contender_catalogue()) {
      if (info.query != query || !info.make(ContenderOptions{threads})->supports(shape, nullptr)) continue;
      const auto& slow = spec->skip_by_default;
      if (std::find(slow.begin(), slow.end(), info.name) != slow.end()) continue;
      const int iterations =
          std::max(1, spec->is_static ? spec->reps : (quick ? std::min(spec->frames, 5) : spec->frames));
      benchmark::RegisterBenchmark(
          (spec->name + "/" + info.name).c_str(),
          [spec, &info, threads](benchmark::State& state) { run_frames(state, *spec, info, threads); })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->Iterations(iterations);
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
