// The scaling experiment (scaling.hpp).
#include "scaling.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>

#include "world.hpp"

namespace sapling::demo {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
}

}  // namespace

int run_scaling(const ScalingSettings& s) {
  const std::size_t k = s.algorithms.size();
  std::vector<std::vector<double>> medians(k), means(k);
  std::vector<double> mean_pairs;
  std::printf("%8s %10s", "objects", "pairs");
  for (const std::string& a : s.algorithms) std::printf(" %14s", (a + " ms").c_str());
  std::printf("\n");
  for (std::size_t n : s.sizes) {
    const SceneSettings scene{s.scene, n, s.moving, 1};
    std::vector<std::unique_ptr<World>> worlds;
    std::vector<Rng> rngs;
    for (const std::string& a : s.algorithms) {
      try {
        worlds.push_back(std::make_unique<World>(a, 100, 56.25f));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "sapling-demo: %s\n", e.what());
        return 1;
      }
      std::string why;
      if (!build_scene(*worlds.back(), scene, &why)) {
        std::fprintf(stderr, "sapling-demo: %s\n", why.c_str());
        return 1;
      }
      rngs.emplace_back(scene.seed ^ 0x5eedull);
    }
    std::vector<std::vector<double>> times(k);
    double pairs = 0;
    for (int f = 0; f < s.warmup + s.frames; ++f) {
      // Interleaved: every contender steps the same frame before the next
      // frame, in an order that rotates from frame to frame.
      for (std::size_t j = 0; j < k; ++j) {
        const std::size_t i = (static_cast<std::size_t>(f) + j) % k;
        tick_scene(*worlds[i], scene, rngs[i]);
        worlds[i]->step();
        if (!worlds[i]->last_error().empty()) {
          std::fprintf(stderr, "sapling-demo: %s\n", worlds[i]->last_error().c_str());
          return 1;
        }
        if (f >= s.warmup) times[i].push_back(worlds[i]->stats().broad_phase_ms);
      }
      for (std::size_t i = 1; i < k; ++i) {
        if (worlds[i]->pairs() != worlds[0]->pairs()) {
          std::fprintf(stderr, "sapling-demo: %zu objects, frame %d: %s reports other pairs than %s\n", n, f,
                       s.algorithms[i].c_str(), s.algorithms[0].c_str());
          return 1;
        }
      }
      if (f >= s.warmup) pairs += static_cast<double>(worlds[0]->pairs().size());
    }
    mean_pairs.push_back(pairs / s.frames);
    std::printf("%8zu %10.1f", n, mean_pairs.back());
    for (std::size_t i = 0; i < k; ++i) {
      medians[i].push_back(median(times[i]));
      double sum = 0;
      for (double t : times[i]) sum += t;
      means[i].push_back(sum / static_cast<double>(times[i].size()));
      std::printf(" %14.5f", medians[i].back());
    }
    std::printf("\n");
  }
  if (s.json.empty()) return 0;
  std::ofstream out(s.json);
  auto list = [&](const std::vector<double>& v) {
    std::string r = "[";
    char buf[32];
    for (std::size_t i = 0; i < v.size(); ++i) {
      std::snprintf(buf, sizeof buf, "%s%.6g", i ? ", " : "", v[i]);
      r += buf;
    }
    return r + "]";
  };
  out << "{\n  \"scene\": \"" << s.scene << "\",\n  \"moving\": " << s.moving << ",\n  \"warmup\": " << s.warmup
      << ",\n  \"frames\": " << s.frames << ",\n  \"sub_steps\": 4,\n  \"sizes\": [";
  for (std::size_t i = 0; i < s.sizes.size(); ++i) out << (i ? ", " : "") << s.sizes[i];
  out << "],\n  \"mean_pairs\": " << list(mean_pairs) << ",\n  \"contenders\": [\n";
  for (std::size_t i = 0; i < k; ++i) {
    out << "    {\"name\": \"" << s.algorithms[i] << "\", \"median_ms\": " << list(medians[i])
        << ", \"mean_ms\": " << list(means[i]) << "}" << (i + 1 < k ? "," : "") << "\n";
  }
  out << "  ]\n}\n";
  if (!out) {
    std::fprintf(stderr, "sapling-demo: cannot write %s\n", s.json.c_str());
    return 1;
  }
  std::printf("wrote %s\n", s.json.c_str());
  return 0;
}

}  // namespace sapling::demo
