// What sap's walk costs per moved box (sap_policy.hpp's kWalkNsPerMove):
// a scenario fed to several broad phases frame by frame, interleaved (each
// frame's order rotates), each timed over its whole frame (staging and
// update()); prints each one's median frame and, for sap's, the swaps per
// moved box and the paths it took. "walk" is sap walking every frame
// (SweepAndPrune::set_walk_only()), "batch" taking the single-pass batch
// update every frame (set_batch_only()), "sap" sap as its policy chooses.
//
//   build/bench/walk_cost N FRAMES SCENARIO SPEED_PM ALGO...
//   build/bench/walk_cost 100000 25 allmoving3d 1 walk box-pruning sap
//
// With speed 1 per mille every box moves a little (a swap per box or
// less): the walk's frame less box pruning's, per moved box, is the walk's
// cost per move beyond a recomputation's.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/sap/sap.hpp"
#include "sapling/broad_phase.hpp"
#include "scenarios/scenario.hpp"

namespace {

using namespace sapling;

struct Contender {
  std::string name;
  std::unique_ptr<BroadPhase> broad_phase;
  detail::SweepAndPrune* sap = nullptr;  // "sap", "walk" and "batch": its counters
  std::vector<double> us;
};

// Contenders stay where they are made: a broad phase that makes its
// algorithm again (after a failed frame) updates `sap` through the pointer.
std::unique_ptr<Contender> make(const std::string& name) {
  auto c = std::make_unique<Contender>();
  c->name = name;
  if (name == "sap" || name == "walk" || name == "batch") {
    c->broad_phase = BroadPhase::create(
        "sap",
        [to = c.get(), name](const Options& options) {
          auto sap = std::make_unique<detail::SweepAndPrune>(options);
          sap->set_walk_only(name == "walk");
          sap->set_batch_only(name == "batch");
          to->sap = sap.get();
          return std::unique_ptr<Algorithm>(std::move(sap));
        },
        Options{});
  } else {
    c->broad_phase = BroadPhase::create(name, Options{});
  }
  if (c->broad_phase == nullptr) {
    std::fprintf(stderr, "walk_cost: unknown algorithm %s\n", name.c_str());
    std::exit(1);
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: walk_cost N FRAMES SCENARIO SPEED_PM ALGO...\n");
    return 1;
  }
  ScenarioParams params;
  params.n = std::strtoull(argv[1], nullptr, 10);
  const int frames = std::atoi(argv[2]);
  params.name = argv[3];
  params.speed_pm = static_cast<std::uint32_t>(std::atoi(argv[4]));
  std::string error;
  const std::unique_ptr<Scenario> scenario = make_scenario(params, &error);
  if (scenario == nullptr) {
    std::fprintf(stderr, "walk_cost: %s\n", error.c_str());
    return 1;
  }
  std::vector<std::unique_ptr<Contender>> contenders;
  for (int k = 5; k < argc; ++k) contenders.push_back(make(argv[k]));

  std::vector<Box3> boxes;
  const auto gather = [&](std::span<const Id> ids) {
    boxes.clear();
    for (const Id id : ids) boxes.push_back(scenario->boxes()[id]);
    return std::span<const Box3>(boxes);
  };
  for (const auto& c : contenders) {
    if (!c->broad_phase->add(scenario->alive_ids(), gather(scenario->alive_ids()))) return 1;
    c->broad_phase->update();
  }
  std::size_t moved = 0;
  for (int f = 1; f < frames; ++f) {
    scenario->step();
    moved += scenario->moved().size();
    for (std::size_t k = 0; k < contenders.size(); ++k) {
      Contender& c = *contenders[(k + std::size_t(f)) % contenders.size()];
      const auto start = std::chrono::steady_clock::now();
      bool ok = scenario->removed().empty() || c.broad_phase->remove(scenario->removed());
      ok = ok && c.broad_phase->move(scenario->moved(), gather(scenario->moved()));
      ok = ok && (scenario->added().empty() || c.broad_phase->add(scenario->added(), gather(scenario->added())));
      if (!ok) return 1;
      c.broad_phase->update();
      c.us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    }
  }
  std::printf("%s n=%llu speed=%u per mille, %d frames:\n", params.name.c_str(),
              static_cast<unsigned long long>(params.n), *params.speed_pm, frames);
  for (const auto& pointer : contenders) {
    Contender& c = *pointer;
    std::sort(c.us.begin(), c.us.end());
    std::printf("  %-12s %10.2f us", c.name.c_str(), c.us[c.us.size() / 2]);
    if (c.sap != nullptr) {
      const detail::SapCounters& n = c.sap->counters();
      std::printf("  swaps per move %.2f; frames walked %llu, batch %llu, resting %llu, recomputed %llu",
                  double(n.swaps) / double(std::max<std::size_t>(1, moved)),
                  static_cast<unsigned long long>(n.incremental_frames),
                  static_cast<unsigned long long>(n.batch_frames), static_cast<unsigned long long>(n.resting_frames),
                  static_cast<unsigned long long>(n.recomputed_frames));
    }
    std::printf("\n");
  }
  return 0;
}
