// Two boxes meet, touch, and part: the pairs that start and stop overlapping.
#include <sapling/sapling.hpp>

#include <cstdio>
#include <vector>

int main() {
  auto broad_phase = sapling::BroadPhase::create("sort-sweep");

  const std::vector<sapling::Id> ids = {7, 9};
  const std::vector<sapling::Box3> boxes = {{{0, 0, 0}, {1, 1, 1}}, {{0.5f, 0.5f, 0.5f}, {2, 2, 2}}};
  if (sapling::Status s = broad_phase->add(ids, boxes); !s) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 1;
  }
  for (int frame = 0; frame < 3; ++frame) {
    const sapling::FrameDelta& delta = broad_phase->update();
    for (const sapling::Pair& p : delta.created)
      std::printf("frame %d: %u and %u start overlapping\n", frame, p.a, p.b);
    for (const sapling::Pair& p : delta.deleted) std::printf("frame %d: %u and %u stop overlapping\n", frame, p.a, p.b);
    // Box 7 slides along x: it touches box 9 at x = 2 (closed intervals: still a pair), then leaves.
    const float x = frame == 0 ? 1.0f : 2.5f;
    (void)broad_phase->move(7, sapling::Box3{{x, 0, 0}, {x + 1, 1, 1}});
  }
  return 0;
}
