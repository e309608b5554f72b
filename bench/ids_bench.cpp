// What ids cost: the broad phase finds a dense id (numbered from 0, as most
// engines number their objects) by one indexed load and any other through
// a hash index (id_index.hpp), whose look-ups a batch asks for ahead. The
// same world staged with dense ids (i) and with sparse ones (7i + 3: every
// one hashed, as an ECS's entity ids with a version in their high bits
// would be), interleaved in one process: a million adds in one batch, then
// frames of 100k moves.
//
//   ids_bench [N] [MOVES] [FRAMES] [REPS] [ALGO]   (defaults 1000000 100000 30 3 sap)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "sapling/broad_phase.hpp"

namespace {

using sapling::Box3;
using sapling::Id;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

struct Run {
  std::vector<double> add_staged, frame0, move_staged, frame;
  std::size_t pairs = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  const std::size_t moves = std::min<std::size_t>(n, argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 100000);
  const int frames = argc > 3 ? std::atoi(argv[3]) : 30;
  const int reps = argc > 4 ? std::atoi(argv[4]) : 3;
  const std::string algo = argc > 5 ? argv[5] : "sap";
  // Unit cubes at tracy's density (0.05 of the volume filled).
  const float side = static_cast<float>(std::cbrt(static_cast<double>(n) / 0.05));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> at(0.0f, side);
  std::vector<Box3> start(n);
  for (Box3& b : start) {
    const float x = at(rng), y = at(rng), z = at(rng);
    b = Box3{{x, y, z}, {x + 1, y + 1, z + 1}};
  }
  Run runs[2];
  for (int rep = 0; rep < reps; ++rep) {
    for (int sparse = 0; sparse < 2; ++sparse) {
      std::vector<Id> ids(n);
      for (std::size_t i = 0; i < n; ++i) ids[i] = static_cast<Id>(sparse ? 7 * i + 3 : i);
      std::vector<Box3> boxes = start;
      auto bp = sapling::BroadPhase::create(algo);
      Run& r = runs[sparse];
      auto t = Clock::now();
      if (!bp->add(ids, std::span<const Box3>(boxes))) return 1;
      r.add_staged.push_back(ms_since(t));
      bp->update();
      r.frame0.push_back(ms_since(t));
      std::vector<Id> moved(moves);
      std::vector<Box3> moved_boxes(moves);
      for (int f = 1; f <= frames; ++f) {
        for (std::size_t k = 0; k < moves; ++k) {  // a tenth of the world, a different slice each frame
          const std::size_t i = (k * (n / moves) + static_cast<std::size_t>(f)) % n;
          boxes[i].min[0] += 0.01f, boxes[i].max[0] += 0.01f;
          moved[k] = ids[i], moved_boxes[k] = boxes[i];
        }
        t = Clock::now();
        if (!bp->move(moved, std::span<const Box3>(moved_boxes))) return 1;
        r.move_staged.push_back(ms_since(t));
        bp->update();
        r.frame.push_back(ms_since(t));
      }
      r.pairs = bp->pairs().size();
    }
  }
  if (runs[0].pairs != runs[1].pairs) {
    std::fprintf(stderr, "pair counts differ: %zu and %zu\n", runs[0].pairs, runs[1].pairs);
    return 1;
  }
  std::printf("n=%zu, %zu moves x %d frames x %d reps, %s, %zu pairs at the end (medians, ms)\n", n, moves, frames,
              reps, algo.c_str(), runs[0].pairs);
  for (int sparse = 0; sparse < 2; ++sparse) {
    const Run& r = runs[sparse];
    std::printf("%-6s ids: adds staged %7.2f  frame 0 %7.2f  moves staged %6.2f  frame %6.2f\n",
                sparse ? "sparse" : "dense", median(r.add_staged), median(r.frame0), median(r.move_staged),
                median(r.frame));
  }
  return 0;
}
