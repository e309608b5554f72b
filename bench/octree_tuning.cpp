// The octree's parameters measured side by side (docs/algorithms/octree.md,
// "Tuning"): one scenario's frames replayed through octrees of several
// configurations, interleaved frame by frame in one process, so that the
// machine's load falls on all of them alike. Every configuration's pair
// count is checked against the first one's each frame.
//
//   octree_tuning SCENARIO N FRAMES CONFIG...
//
// CONFIG is PER_LEAF/LOOSENESS: boxes per leaf for the leaf size from the
// data (or =EDGE for a fixed leaf edge) and the looseness (0: from the
// data, 1: tight, 2: Ulrich's loose octree). Example:
//   octree_tuning tracy 100000 20 32/0 32/1 32/2 =8/0 8/0 128/0
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "reference/octree/octree.hpp"
#include "sapling/broad_phase.hpp"
#include "scenarios/scenario.hpp"

namespace {

using sapling::Algorithm;
using sapling::BroadPhase;
using sapling::Options;
using sapling::detail::Octree;
using sapling::detail::OctreeConfig;

struct Contender {
  std::string label;
  OctreeConfig config;
  Octree* octree = nullptr;
  std::unique_ptr<BroadPhase> broad_phase;
  std::vector<double> ms;
};

bool parse(const std::string& text, OctreeConfig& config) {
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos) return false;
  const std::string leaf = text.substr(0, slash);
  if (!leaf.empty() && leaf[0] == '=') {
    config.leaf_size = std::atof(leaf.c_str() + 1);
  } else {
    config.boxes_per_leaf = std::atof(leaf.c_str());
  }
  config.looseness = std::atof(text.c_str() + slash + 1);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: octree_tuning SCENARIO N FRAMES PER_LEAF/LOOSENESS...\n");
    return 2;
  }
  sapling::ScenarioParams params;
  params.name = argv[1];
  params.n = std::strtoull(argv[2], nullptr, 10);
  const int frames = std::atoi(argv[3]);
  std::string error;
  const auto scenario = sapling::make_scenario(params, &error);
  if (!scenario) {
    std::fprintf(stderr, "octree_tuning: %s\n", error.c_str());
    return 2;
  }
  std::vector<Contender> contenders;
  for (int a = 4; a < argc; ++a) {
    Contender c;
    c.label = argv[a];
    if (!parse(c.label, c.config)) {
      std::fprintf(stderr, "octree_tuning: '%s' is not PER_LEAF/LOOSENESS\n", argv[a]);
      return 2;
    }
    contenders.push_back(std::move(c));
  }
  const Options options{.dims = scenario->dims()};
  for (Contender& c : contenders) {
    c.broad_phase = BroadPhase::create(
        "octree",
        [&c](const Options& o) {
          auto octree = std::make_unique<Octree>(o, c.config);
          c.octree = octree.get();
          return std::unique_ptr<Algorithm>(std::move(octree));
        },
        options);
  }
  for (int f = 0; f < frames; ++f) {
    if (f > 0) scenario->step();
    const sapling::TraceFrame frame = sapling::scenario_frame(*scenario);
    std::size_t pairs = 0;
    for (Contender& c : contenders) {
      BroadPhase& bp = *c.broad_phase;
      if (!bp.remove(frame.removed).ok() || !bp.move(frame.moved, frame.moved_boxes).ok() ||
          !bp.add(frame.added, frame.added_boxes).ok()) {
        std::fprintf(stderr, "octree_tuning: frame %d refused\n", f);
        return 1;
      }
      const auto start = std::chrono::steady_clock::now();
      bp.update();
      const auto stop = std::chrono::steady_clock::now();
      if (f > 0) c.ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
      if (&c == &contenders.front()) pairs = bp.pairs().size();
      if (bp.pairs().size() != pairs) {
        std::fprintf(stderr, "octree_tuning: %s has %zu pairs at frame %d, not %zu\n", c.label.c_str(),
                     bp.pairs().size(), f, pairs);
        return 1;
      }
    }
  }
  std::printf("%s n=%s, %d frames (frame 0 apart), interleaved\n", argv[1], argv[2], frames);
  std::printf("%-10s %8s %10s %7s %6s %10s %8s %11s\n", "config", "leaf", "looseness", "nodes", "depth", "median ms",
              "p95 ms", "B/object");
  for (Contender& c : contenders) {
    std::sort(c.ms.begin(), c.ms.end());
    const double median = c.ms.empty() ? 0 : c.ms[c.ms.size() / 2];
    const double p95 = c.ms.empty() ? 0 : c.ms[std::min(c.ms.size() - 1, c.ms.size() * 95 / 100)];
    std::printf("%-10s %8g %10.4g %7zu %6d %10.3f %8.3f %11.1f\n", c.label.c_str(), c.octree->leaf_size(),
                c.octree->looseness(), c.octree->nodes(), c.octree->depth(), median, p95,
                double(c.octree->memory_bytes()) / double(std::max<std::size_t>(1, c.broad_phase->size())));
  }
  return 0;
}
