// Where a plane's recomputing algorithms overtake sap (auto_policy.hpp's
// kMostMove): a plane of n unit squares (the changing suite's planar world,
// bench/harness/changing_scenes.hpp) with a share of them moving, run by
// sap, unisize and dual-axis one after the other, each in a broad phase of
// its own; prints the median frame of frames 5-24 and sap's ratio to the
// faster of the other two.
//
//   build/bench/plane_crossover [n]   (default 131072)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "harness/changing_scenes.hpp"
#include "sapling/broad_phase.hpp"

namespace {

double median_frame(const char* algorithm, std::size_t n, std::size_t movers) {
  using namespace sapling;
  const auto scene = bench::make_planar_resting(n, movers);
  const auto broad_phase = BroadPhase::create(algorithm, Options{.dims = 2});
  std::vector<Id> ids;
  std::vector<Box2> boxes;
  std::vector<double> ms;
  for (int f = 0; f < 25; ++f) {
    if (f > 0) scene->step();
    ids.clear();
    boxes.clear();
    for (const Id id : f == 0 ? scene->added() : scene->moved()) {
      const Box3& b = scene->boxes()[id];
      ids.push_back(id);
      boxes.push_back(Box2{{b.min[0], b.min[1]}, {b.max[0], b.max[1]}});
    }
    const auto start = std::chrono::steady_clock::now();
    const Status staged = f == 0 ? broad_phase->add(ids, boxes) : broad_phase->move(ids, boxes);
    if (!staged) std::abort();
    broad_phase->update();
    if (f >= 5)
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 131072;
  for (const double share : {0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7}) {
    const auto movers = static_cast<std::size_t>(share * double(n));
    const double sap = median_frame("sap", n, movers), unisize = median_frame("unisize", n, movers),
                 dual_axis = median_frame("dual-axis", n, movers);
    std::printf("moving %.2f: sap %.2f ms, unisize %.2f, dual-axis %.2f; sap / faster other %.2f\n", share, sap,
                unisize, dual_axis, sap / std::min(unisize, dual_axis));
  }
}
