// The scaling experiment (scaling.hpp).
#include "scaling.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>

#include "world.hpp"

namespace sapling::demo {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
}

}  // namespace

int run_scaling(const ScalingSettings& s, cli::Output& out) {
  const auto failed = [](const std::string& why, int status = 1) {
    std::fprintf(stderr, "sapling-demo: %s\n", why.c_str());
    return status;
  };
  cli::Output json(s.json, "--scaling");
  if (!json.open()) return failed(json.error());
  // Every algorithm is known before the work.
  for (const std::string& a : s.algorithms) {
    try {
      World check(a, 100, 56.25f);
    } catch (const std::exception& e) {
      return failed(e.what());
    }
  }
  const std::size_t k = s.algorithms.size();
  std::vector<std::vector<double>> medians(k), means(k);
  std::vector<double> mean_pairs;
  char cell[64];
  std::snprintf(cell, sizeof cell, "%8s %10s", "objects", "pairs");
  out.buffer() += cell;
  for (const std::string& a : s.algorithms) {
    std::snprintf(cell, sizeof cell, " %14s", (a + " ms").c_str());
    out.buffer() += cell;
  }
  out.buffer() += '\n';
  if (!out.flush()) return failed(out.error());
  for (std::size_t n : s.sizes) {
    const SceneSettings scene{s.scene, n, s.moving, 1};
    std::vector<std::unique_ptr<World>> worlds;
    std::vector<Rng> rngs;
    for (const std::string& a : s.algorithms) {
      worlds.push_back(std::make_unique<World>(a, 100, 56.25f));
      std::string why;
      if (!build_scene(*worlds.back(), scene, &why)) return failed(why);
      if (const Status refusal = worlds.back()->accepts_pending(); !refusal) {
        return failed(
            a + " does not support the scene " + s.scene + " (" + std::to_string(n) + " objects): " + refusal.message(),
            refusal.code() == StatusCode::kUnsupported ? 3 : 1);
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
        if (const World& w = *worlds[i]; !w.last_error().empty()) {
          return failed(w.last_error(), w.last_refusal().code() == StatusCode::kUnsupported ? 3 : 1);
        }
        if (f >= s.warmup) times[i].push_back(worlds[i]->stats().broad_phase_ms);
      }
      for (std::size_t i = 1; i < k; ++i) {
        if (worlds[i]->pairs() != worlds[0]->pairs()) {
          return failed(std::to_string(n) + " objects, frame " + std::to_string(f) + ": " + s.algorithms[i] +
                        " reports other pairs than " + s.algorithms[0]);
        }
      }
      if (f >= s.warmup) pairs += static_cast<double>(worlds[0]->pairs().size());
    }
    mean_pairs.push_back(pairs / s.frames);
    std::snprintf(cell, sizeof cell, "%8zu %10.1f", n, mean_pairs.back());
    out.buffer() += cell;
    for (std::size_t i = 0; i < k; ++i) {
      medians[i].push_back(median(times[i]));
      double sum = 0;
      for (double t : times[i]) sum += t;
      means[i].push_back(sum / static_cast<double>(times[i].size()));
      std::snprintf(cell, sizeof cell, " %14.5f", medians[i].back());
      out.buffer() += cell;
    }
    out.buffer() += '\n';
    if (!out.flush()) return failed(out.error());
  }
  auto list = [&](const std::vector<double>& v) {
    std::string r = "[";
    char buf[32];
    for (std::size_t i = 0; i < v.size(); ++i) {
      std::snprintf(buf, sizeof buf, "%s%.6g", i ? ", " : "", v[i]);
      r += buf;
    }
    return r + "]";
  };
  std::ostringstream text;
  text << "{\n  \"scene\": \"" << s.scene << "\",\n  \"moving\": " << s.moving << ",\n  \"warmup\": " << s.warmup
       << ",\n  \"frames\": " << s.frames << ",\n  \"sub_steps\": 4,\n  \"sizes\": [";
  for (std::size_t i = 0; i < s.sizes.size(); ++i) text << (i ? ", " : "") << s.sizes[i];
  text << "],\n  \"mean_pairs\": " << list(mean_pairs) << ",\n  \"contenders\": [\n";
  for (std::size_t i = 0; i < k; ++i) {
    text << "    {\"name\": \"" << s.algorithms[i] << "\", \"median_ms\": " << list(medians[i])
         << ", \"mean_ms\": " << list(means[i]) << "}" << (i + 1 < k ? "," : "") << "\n";
  }
  text << "  ]\n}\n";
  json.buffer() = std::move(text).str();
  if (!json.close()) return failed(json.error());
  out.buffer() += "wrote " + s.json + "\n";
  return out.flush() ? 0 : failed(out.error());
}

}  // namespace sapling::demo
