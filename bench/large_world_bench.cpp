// Large worlds' price (broad_phase.hpp, add() and move() of Box3d): the
// same tracy scene staged from float boxes and from double boxes, frame by
// frame, interleaved, on one algorithm. The double path rounds each box
// outward relative to the origin and keeps the double box for the exact
// filter; the target is a frame within 1.1x of the float path's.
//
//   large_world_bench [N] [FRAMES] [REPS] [ALGO] [SHIFT]   (defaults 1000000 30 3 sap 1048576)
//
// The double boxes are the scene's float boxes moved by SHIFT (2^20: exact),
// with the origin shifted by as much before frame 0 (none for SHIFT 0), so
// both paths see the same float boxes and report the same pairs (checked).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sapling/broad_phase.hpp"
#include "scenarios/scenario.hpp"

namespace {

using sapling::Box3;
using sapling::Box3d;
using sapling::Id;

double kShift = 1048576.0;

Box3d in_world(const Box3& b) {
  return Box3d{{b.min[0] + kShift, b.min[1] + kShift, b.min[2] + kShift},
               {b.max[0] + kShift, b.max[1] + kShift, b.max[2] + kShift}};
}

struct Frame {
  std::vector<Id> removed, moved, added;
  std::vector<Box3> moved_boxes, added_boxes;
  std::vector<Box3d> moved_exact, added_exact;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  const int frames = argc > 2 ? std::atoi(argv[2]) : 30;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 3;
  const std::string algo = argc > 4 ? argv[4] : "sap";
  if (argc > 5) kShift = std::strtod(argv[5], nullptr);
  sapling::ScenarioParams params;
  params.name = "tracy";
  params.n = n;
  auto scenario = sapling::make_scenario(params);
  std::vector<Frame> scene;
  for (int f = 0; f < frames; ++f) {
    if (f > 0) scenario->step();
    sapling::TraceFrame t;
    sapling::fill_frame(*scenario, t);
    Frame fr{t.removed, t.moved, t.added, t.moved_boxes, t.added_boxes, {}, {}};
    for (const Box3& b : fr.moved_boxes) fr.moved_exact.push_back(in_world(b));
    for (const Box3& b : fr.added_boxes) fr.added_exact.push_back(in_world(b));
    scene.push_back(std::move(fr));
  }
  std::vector<double> step_ms[2], first_ms[2], first_stage_ms[2];
  std::size_t pairs[2] = {0, 0};
  for (int rep = 0; rep < reps; ++rep) {
    for (int exact = 0; exact < 2; ++exact) {
      auto bp = sapling::BroadPhase::create(algo);
      if (exact && kShift != 0) (void)bp->shift_origin({kShift, kShift, kShift});
      for (int f = 0; f < frames; ++f) {
        const Frame& fr = scene[f];
        const auto start = std::chrono::steady_clock::now();
        sapling::Status s = bp->remove(fr.removed);
        if (exact) {
          if (s) s = bp->move(fr.moved, std::span<const Box3d>(fr.moved_exact));
          if (s) s = bp->add(fr.added, std::span<const Box3d>(fr.added_exact));
        } else {
          if (s) s = bp->move(fr.moved, std::span<const Box3>(fr.moved_boxes));
          if (s) s = bp->add(fr.added, std::span<const Box3>(fr.added_boxes));
        }
        if (!s) {
          std::fprintf(stderr, "%s\n", s.message().c_str());
          return 1;
        }
        const auto staged = std::chrono::steady_clock::now();
        if (f == 0) first_stage_ms[exact].push_back(std::chrono::duration<double, std::milli>(staged - start).count());
        bp->update();
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        (f == 0 ? first_ms : step_ms)[exact].push_back(ms);
      }
      pairs[exact] = bp->pairs().size();
    }
  }
  if (pairs[0] != pairs[1]) {
    std::fprintf(stderr, "pair counts differ: %zu and %zu\n", pairs[0], pairs[1]);
    return 1;
  }
  const double f = median(step_ms[0]), d = median(step_ms[1]);
  std::printf("tracy n=%llu, %d frames x %d reps, %s, %zu pairs at the end\n", static_cast<unsigned long long>(n),
              frames, reps, algo.c_str(), pairs[0]);
  std::printf("frame 0 median   float %.2f ms   double %.2f ms   ratio %.3f\n", median(first_ms[0]),
              median(first_ms[1]), median(first_ms[1]) / median(first_ms[0]));
  std::printf("  of which staged float %.2f ms   double %.2f ms\n", median(first_stage_ms[0]),
              median(first_stage_ms[1]));
  std::printf("step median      float %.3f ms   double %.3f ms   ratio %.3f\n", f, d, d / f);
  return 0;
}
