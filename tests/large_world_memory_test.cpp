// Contact distances and origin shifts when memory runs out: fault
// injection through the global operator new (counting_allocator.hpp). For
// every N through a frame that shifts the origin and moves, adds and
// removes objects with double boxes and contact distances, update() throws
// std::bad_alloc and leaves the broad phase as before the call (pairs, own
// boxes, exact boxes, distances, every invariant), and the next update()
// reports exactly what a twin that never failed reports.
#include <gtest/gtest.h>

#include <new>
#include <string>
#include <vector>

#include "counting_allocator.hpp"
#include "sapling/broad_phase.hpp"
#include "sapling/registry.hpp"

namespace sapling {
namespace {

constexpr double kFar = 1e9;

// A world of 40 objects at 1e9, a third given as float, half with a
// contact distance, a few static; after its first frame.
std::unique_ptr<BroadPhase> make_world(const std::string& algorithm) {
  auto bp = BroadPhase::create(algorithm);
  for (Id id = 0; id < 40; ++id) {
    const double x = kFar + 3.0 * (id % 10) + 0.25, y = 3.0 * (id / 10);
    const Box3d box{{x, y, 0}, {x + 2.5, y + 2.5, 1}};
    const float distance = id % 2 == 0 ? 0.75f : 0.0f;
    const Motion motion = id % 7 == 0 ? Motion::kStatic : Motion::kDynamic;
    Status s;
    if (id % 3 == 0) {
      const Box3 relative{{float(x - kFar), float(y), 0}, {float(x - kFar + 2.5), float(y + 2.5), 1}};
      s = bp->add(id, relative, Filter{}, motion, distance);
    } else {
      s = bp->add({&id, 1}, {&box, 1}, {}, motion, {&distance, 1});
    }
    EXPECT_TRUE(s);
  }
  bp->update();
  return bp;
}

// The frame under test: an origin shift, double moves with new distances,
// a float move, an add, a removal.
void stage_frame(BroadPhase& bp) {
  ASSERT_TRUE(bp.shift_origin({kFar, 0, 0}));
  const Id moved[] = {1, 2, 4};
  const Box3d boxes[] = {{{kFar + 1.5, 0, 0}, {kFar + 3, 2, 1}},
                         {{kFar + 7.125, 3, 0}, {kFar + 9, 5, 1}},
                         {{kFar + 20, 20, 0}, {kFar + 21, 21, 1}}};
  const float distances[] = {0.5f, 0.0f, 2.0f};
  ASSERT_TRUE(bp.move(moved, boxes, distances));
  ASSERT_TRUE(bp.move(3, Box3{{4, 4, 0}, {5, 5, 1}}));  // relative to the new origin
  ASSERT_TRUE(bp.add(100, Box3d{{kFar + 10, 1, 0}, {kFar + 11, 2, 1}}));
  ASSERT_TRUE(bp.remove(5));
}

struct Seen {
  std::vector<Pair> pairs;
  std::vector<std::optional<Box3>> boxes;
  std::vector<std::optional<Box3d>> exact;
  std::vector<std::optional<float>> distances;
  bool operator==(const Seen&) const = default;
};

Seen seen(const BroadPhase& bp) {
  Seen s;
  bp.sorted_pairs(s.pairs);
  for (Id id = 0; id <= 100; ++id) {
    s.boxes.push_back(bp.box(id));
    s.exact.push_back(bp.exact_box(id));
    s.distances.push_back(bp.contact_distance(id));
  }
  return s;
}

class LargeWorldMemory : public ::testing::TestWithParam<std::string> {};

TEST_P(LargeWorldMemory, AFailedShiftFrameLeavesNothingChanged) {
  auto twin = make_world(GetParam());
  stage_frame(*twin);
  const FrameDelta& expected = twin->update();
  const std::vector<Pair> created(expected.created.begin(), expected.created.end());
  const std::vector<Pair> deleted(expected.deleted.begin(), expected.deleted.end());
  ASSERT_FALSE(created.empty() && deleted.empty());
  const Seen after = seen(*twin);
  long failures = 0;
  for (long n = 0;; ++n) {
    auto bp = make_world(GetParam());
    stage_frame(*bp);
    const Seen before = seen(*bp);
    testing_allocator::fail_allocation_after(n);
    try {
      bp->update();
      testing_allocator::never_fail();
      break;  // the frame needed fewer than n allocations
    } catch (const std::bad_alloc&) {
      testing_allocator::never_fail();
    }
    ++failures;
    ASSERT_EQ(seen(*bp), before) << "allocation " << n;
    ASSERT_TRUE(bp->validate()) << "allocation " << n;
    const FrameDelta& d = bp->update();
    ASSERT_EQ(std::vector<Pair>(d.created.begin(), d.created.end()), created) << "allocation " << n;
    ASSERT_EQ(std::vector<Pair>(d.deleted.begin(), d.deleted.end()), deleted) << "allocation " << n;
    ASSERT_EQ(seen(*bp), after) << "allocation " << n;
  }
  EXPECT_GT(failures, 3);
}

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const AlgorithmInfo& info : algorithms()) {
    if (info.accepts_any_box) out.push_back(info.name);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, LargeWorldMemory, ::testing::ValuesIn(names()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param;
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

}  // namespace
}  // namespace sapling
