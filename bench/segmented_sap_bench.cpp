// segmented-sap's chunk size and its crossover with sap (issue 14, items 2
// and 4): the W2 tracy scene stepped once, each frame applied to sap and to
// segmented-sap at several chunk sizes in turn (interleaved frame by frame,
// so load on a shared machine hits every contender alike), every frame's
// pair count compared. Prints per contender the median, mean and p95 ms per
// frame after frame 0 and the memory held at the end. CHUNK 0 (the default)
// is the automatic chunk size. A contender that is not a number is an
// algorithm's name with settings, as BroadPhase::create() takes it: local
// against global sort (issue 14, item 3) is
//
//   segmented_sap_bench N MOVING INSERTS REMOVES FRAMES [CHUNK | NAME ...]
//
// e.g. `segmented_sap_bench 3000 150 1 1 2000 8 16 25 32 64 128 256`, or
// `segmented_sap_bench 100000 50000 0 0 40 segmented-sap:global=never
// segmented-sap:global=always segmented-sap`.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/builtin.hpp"
#include "reference/segmented_sap/segmented_sap.hpp"
#include "sapling/broad_phase.hpp"
#include "scenarios/scenario.hpp"

namespace {

using namespace sapling;

struct Contender {
  std::string name;
  std::unique_ptr<BroadPhase> bp;
  std::vector<double> ms;
  const detail::SegmentedSap* segmented = nullptr;  // for its counters
};

// segmented-sap with the settings after "segmented-sap:", its counters kept in reach.
Contender make_segmented(const std::string& name) {
  Contender c{name, nullptr, {}, nullptr};
  const std::size_t colon = name.find(':');
  Options options;
  options.settings = colon == std::string::npos ? std::string() : name.substr(colon + 1);
  const detail::SegmentedSap** seen = &c.segmented;
  c.bp = BroadPhase::create("segmented-sap",
                            [seen, options](const Options& o) {
                              Options with = o;
                              with.settings = options.settings;
                              std::unique_ptr<Algorithm> a = detail::make_segmented_sap(with);
                              *seen = dynamic_cast<const detail::SegmentedSap*>(a.get());
                              return a;
                            },
                            {});
  return c;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * double(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s N MOVING INSERTS REMOVES FRAMES [CHUNK ...]\n", argv[0]);
    return 1;
  }
  ScenarioParams params;
  params.name = "tracy";
  params.n = std::strtoull(argv[1], nullptr, 10);
  params.moving = std::strtoull(argv[2], nullptr, 10);
  params.inserts = std::strtoull(argv[3], nullptr, 10);
  params.removes = std::strtoull(argv[4], nullptr, 10);
  const int frames = std::atoi(argv[5]);
  std::vector<Contender> contenders;
  contenders.push_back({"sap", BroadPhase::create("sap"), {}});
  for (int i = 6; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("segmented-sap", 0) == 0) {
      contenders.push_back(make_segmented(arg));
      continue;
    }
    if (arg.find_first_not_of("0123456789") != std::string::npos) {
      contenders.push_back({arg, BroadPhase::create(arg), {}});
      if (!contenders.back().bp) {
        std::fprintf(stderr, "%s: no such algorithm or settings\n", arg.c_str());
        return 1;
      }
      continue;
    }
    const detail::SegmentedSapConfig config{static_cast<std::uint32_t>(std::atoi(argv[i]))};
    contenders.push_back(
        {config.chunk_capacity == 0 ? std::string("segmented-sap/auto")
                                    : "segmented-sap/" + std::to_string(config.chunk_capacity),
         BroadPhase::create("segmented-sap",
                            [config](const Options& o) { return detail::make_segmented_sap_with(o, config); }, {}),
         {}});
  }
  if (contenders.size() == 1) {
    contenders.push_back(make_segmented("segmented-sap"));
  }
  const std::unique_ptr<Scenario> scenario = make_scenario(params);
  if (!scenario) return 1;
  for (int f = 0; f < frames; ++f) {
    if (f > 0) scenario->step();
    const TraceFrame frame = scenario_frame(*scenario);
    std::size_t pairs = 0;
    for (std::size_t k = 0; k < contenders.size(); ++k) {
      BroadPhase& bp = *contenders[k].bp;
      const auto start = std::chrono::steady_clock::now();
      if (!bp.remove(frame.removed) || !bp.move(frame.moved, frame.moved_boxes) ||
          !bp.add(frame.added, frame.added_boxes)) {
        return 1;
      }
      bp.update();
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      if (f > 0) contenders[k].ms.push_back(ms);
      if (k == 0) pairs = bp.pairs().size();
      if (bp.pairs().size() != pairs) {
        std::fprintf(stderr, "frame %d: %s has %zu pairs, sap %zu\n", f, contenders[k].name.c_str(), bp.pairs().size(),
                     pairs);
        return 4;
      }
    }
  }
  std::printf(
      "| contender | median ms | mean ms | p95 ms | MiB | global frames | swaps/frame |\n"
      "|---|---:|---:|---:|---:|---:|---:|\n");
  for (const Contender& c : contenders) {
    double mean = 0;
    for (const double x : c.ms) mean += x;
    mean /= double(c.ms.size());
    std::printf("| %s | %.4f | %.4f | %.4f | %.1f |", c.name.c_str(), quantile(c.ms, 0.5), mean, quantile(c.ms, 0.95),
                double(c.bp->memory_bytes()) / 1048576.0);
    if (c.segmented != nullptr) {
      std::printf(" %llu | %.0f |\n", static_cast<unsigned long long>(c.segmented->global_frames()),
                  double(c.segmented->swaps()) / frames);
    } else {
      std::printf(" | |\n");
    }
  }
  return 0;
}
