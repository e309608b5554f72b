// A level's life, issue 31 item 5: load, play, unload. One world per process
// (so that the resident set it reports is its own): issue 15's level of
// side x side floor tiles (make_level_tiles(), dense: each tile overlaps the
// 8 around it) and `movers` cubes of edge 0.5 wandering over it (every cube
// moves every frame, bouncing off the walls and off z = 0.3 and z = 2).
//
//   levels_bench MODE ALGORITHM [SIDE] [MOVERS] [FRAMES] [dense|spread] [THREADS]
//
// MODE: `static` (the tiles added as Motion::kStatic, one batch, with the
// movers), `dynamic` (the same boxes, every one dynamic), `movers` (the
// movers alone). Frame 0 adds everything; FRAMES frames move the movers;
// then one frame removes every object, and one more empty frame follows.
// `spread` lays the tiles 0.02 apart (make_level_tiles(side, false, ..):
// no two overlap), so that a dynamic world of them has no pairs either.
// THREADS: Options::threads (1 by default: the broad phase on one thread).
// Prints one line of `key=value`: frame 0, the median and worst moving
// frame, the removal frame (ms), memory_bytes() and the resident set (MB)
// before loading, after playing and after the removal. bench/levels.py runs
// it repeatedly and takes medians.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "harness/scenes.hpp"
#include "sapling/broad_phase.hpp"

namespace {

using namespace sapling;
using bench::kLevelSeed, bench::make_level_tiles;
using Clock = std::chrono::steady_clock;

// A span of wall time and of the process's CPU time: on a shared machine
// the wall clock counts other processes' turns too, the CPU clock only ours
// (every thread of the process: the broad phase runs on one by default).
struct Span {
  Clock::time_point wall;
  double cpu;
};
double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}
Span start() { return {Clock::now(), cpu_ms()}; }
struct Ms {
  double wall, cpu;
};
Ms since(const Span& s) {
  return {std::chrono::duration<double, std::milli>(Clock::now() - s.wall).count(), cpu_ms() - s.cpu};
}

// The resident set, in MB, from /proc/self/status (0 where there is none).
double rss_mb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
  }
  return 0.0;
}

struct Mover {
  double p[3], v[3];
};

Box3 box_of(const Mover& m) {
  constexpr double kEdge = 0.5;
  return Box3{
      {static_cast<float>(m.p[0]), static_cast<float>(m.p[1]), static_cast<float>(m.p[2])},
      {static_cast<float>(m.p[0] + kEdge), static_cast<float>(m.p[1] + kEdge), static_cast<float>(m.p[2] + kEdge)}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(
        stderr,
        "usage: levels_bench static|dynamic|movers ALGORITHM [SIDE] [MOVERS] [FRAMES] [dense|spread] [THREADS]\n");
    return 2;
  }
  const std::string mode = argv[1];
  const std::string algorithm = argv[2];
  const std::size_t side = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 1000;
  const std::size_t movers = argc > 4 ? std::strtoul(argv[4], nullptr, 10) : 10000;
  const int frames = argc > 5 ? std::atoi(argv[5]) : 50;
  const bool dense = argc <= 6 || std::string(argv[6]) != "spread";
  const auto threads = argc > 7 ? static_cast<unsigned>(std::strtoul(argv[7], nullptr, 10)) : 1u;
  if (mode != "static" && mode != "dynamic" && mode != "movers") return std::fprintf(stderr, "bad mode\n"), 2;

  const double rss_before = rss_mb();
  std::vector<Box3> tiles;
  if (mode != "movers") tiles = make_level_tiles(side, dense, kLevelSeed);
  const auto first_mover = static_cast<Id>(tiles.size());
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  const double extent = static_cast<double>(side);
  std::vector<Mover> bodies(movers);
  for (Mover& m : bodies) {
    m = {{u01(rng) * (extent - 0.5), u01(rng) * (extent - 0.5), 0.3 + u01(rng) * 1.7},
         {(2 * u01(rng) - 1) * 0.1, (2 * u01(rng) - 1) * 0.1, (2 * u01(rng) - 1) * 0.05}};
  }
  std::vector<Id> tile_ids(tiles.size()), mover_ids(movers);
  for (std::size_t i = 0; i < tiles.size(); ++i) tile_ids[i] = static_cast<Id>(i);
  for (std::size_t k = 0; k < movers; ++k) mover_ids[k] = first_mover + static_cast<Id>(k);
  std::vector<Box3> mover_boxes(movers);
  for (std::size_t k = 0; k < movers; ++k) mover_boxes[k] = box_of(bodies[k]);

  Options options;
  options.threads = threads;
  auto bp = BroadPhase::create(algorithm, options);
  if (bp == nullptr) return std::fprintf(stderr, "unknown algorithm %s\n", algorithm.c_str()), 2;
  const auto check = [](const Status& s) {
    if (!s) std::fprintf(stderr, "%s\n", s.message().c_str()), std::exit(1);
  };
  // Frame 0: the level and the movers, each in one batch.
  Span t0 = start();
  if (!tiles.empty()) check(bp->add(tile_ids, tiles, {}, mode == "static" ? Motion::kStatic : Motion::kDynamic));
  check(bp->add(mover_ids, mover_boxes));
  bp->update();
  const Ms frame0 = since(t0);
  const std::size_t pairs0 = bp->pairs().size();

  std::vector<double> frame_ms, frame_cpu_ms;
  for (int f = 0; f < frames; ++f) {
    for (std::size_t k = 0; k < movers; ++k) {
      Mover& m = bodies[k];
      const double high[3] = {extent - 0.5, extent - 0.5, 2.0}, low[3] = {0.0, 0.0, 0.3};
      for (int a = 0; a < 3; ++a) {
        m.p[a] += m.v[a];
        if (m.p[a] < low[a] || m.p[a] > high[a]) m.v[a] = -m.v[a], m.p[a] = std::clamp(m.p[a], low[a], high[a]);
      }
      mover_boxes[k] = box_of(m);
    }
    t0 = start();
    check(bp->move(mover_ids, mover_boxes));
    bp->update();
    const Ms frame = since(t0);
    frame_ms.push_back(frame.wall);
    frame_cpu_ms.push_back(frame.cpu);
  }
  const double rss_played = rss_mb();
  const std::size_t bytes_played = bp->memory_bytes();
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  const auto worst = [](const std::vector<double>& v) {
    return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
  };

  // Unload: every object in one frame, then an empty frame.
  t0 = start();
  if (!tiles.empty()) check(bp->remove(tile_ids));
  check(bp->remove(mover_ids));
  bp->update();
  const Ms removal = since(t0);
  bp->update();
  std::vector<Id>().swap(tile_ids);
  std::vector<Box3>().swap(tiles);
  std::printf(
      "mode=%s algorithm=%s tiles=%s threads=%u side=%zu movers=%zu pairs0=%zu frame0_ms=%.3f frame_ms=%.4f "
      "worst_ms=%.4f removal_ms=%.3f frame0_cpu_ms=%.3f frame_cpu_ms=%.4f worst_cpu_ms=%.4f removal_cpu_ms=%.3f "
      "bytes_played=%zu bytes_after=%zu rss_before_mb=%.1f rss_played_mb=%.1f rss_after_mb=%.1f\n",
      mode.c_str(), algorithm.c_str(), dense ? "dense" : "spread", threads, side, movers, pairs0, frame0.wall,
      median(frame_ms), worst(frame_ms), removal.wall, frame0.cpu, median(frame_cpu_ms), worst(frame_cpu_ms),
      removal.cpu, bytes_played, bp->memory_bytes(), rss_before, rss_played, rss_mb());
  return 0;
}
