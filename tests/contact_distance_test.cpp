// Contact distances (broad_phase.hpp, add() and move() with distances): a
// pair is reported while the two boxes, each grown by its own distance
// (grown(), box.hpp), overlap. Every registered algorithm that takes any
// box, in 2D and 3D, runs random frames (adds, moves with and without a new
// distance, removals, static objects, filter changes) on a grid that
// forces touching faces, and after each frame its delta, its pairs, its
// region queries and its rays are compared with the oracle's, which grows
// the boxes the same way for pairs and answers queries and rays on the
// boxes the user gave. Also the refusals (a negative, NaN or infinite
// distance names the operation, the id and the index, and leaves the
// broad phase as it was) and what box() and contact_distance() return.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "oracle.hpp"
#include "sapling/broad_phase.hpp"
#include "sapling/registry.hpp"
#include "trace_generators.hpp"

namespace sapling {
namespace {

using testgen::Rng;

std::vector<std::string> any_box_algorithms() {
  std::vector<std::string> names;
  for (const AlgorithmInfo& info : algorithms()) {
    if (info.accepts_any_box) names.push_back(info.name);
  }
  names.push_back("multi-sap:mode=witness");
  return names;
}

// Grid-snapped boxes in a small world, so that grown boxes touch exactly.
Box3 random_box(Rng& r, int dims) {
  Box3 b;
  for (int k = 0; k < 3; ++k) {
    b.min[k] = 0.25f * static_cast<float>(r.range(0, 60));
    b.max[k] = b.min[k] + 0.25f * static_cast<float>(r.range(0, 8));
  }
  if (dims == 2) b.min[2] = b.max[2] = 0.0f;
  return b;
}

float random_distance(Rng& r) {
  static const float kDistances[] = {0.0f, 0.0f, 0.0f, 0.25f, 0.5f, 1.0f, 3.0f, 1e-7f, 0.1f};
  return kDistances[r.below(std::size(kDistances))];
}

Ray3 random_ray(Rng& r, int dims) {
  Ray3 ray;
  for (int k = 0; k < 3; ++k) {
    ray.origin[k] = r.uniform(-2, 17);
    ray.direction[k] = r.uniform(-1, 1);
  }
  ray.direction[0] += 0.5f;  // never zero
  if (dims == 2) ray.origin[2] = ray.direction[2] = 0.0f;
  ray.max_t = r.chance(0.5) ? 100.0f : r.uniform(0, 10);
  return ray;
}

void expect_same_answers(const BroadPhase& bp, const oracle::World& world, Rng& r, int dims) {
  std::vector<Pair> got;
  bp.sorted_pairs(got);
  ASSERT_EQ(got, world.pairs());
  std::vector<Id> hits;
  for (int q = 0; q < 8; ++q) {
    Box3 box = random_box(r, dims);
    box.max[0] += 2.0f;
    const std::uint32_t mask = r.chance(0.3) ? 1u : kAllCategories;
    ASSERT_TRUE(bp.query(box, hits, mask));
    ASSERT_EQ(hits, world.query(box, mask));
  }
  std::vector<RayHit> along;
  std::optional<RayHit> first;
  for (int q = 0; q < 8; ++q) {
    const Ray3 ray = random_ray(r, dims);
    ASSERT_TRUE(bp.ray_cast(ray, along));
    ASSERT_EQ(along, world.ray_cast(ray));
    ASSERT_TRUE(bp.ray_cast_closest(ray, first));
    ASSERT_EQ(first, world.ray_cast_closest(ray));
  }
  for (const auto& [id, object] : world.objects()) {
    ASSERT_EQ(bp.box(id), object.box);
    ASSERT_EQ(bp.contact_distance(id), object.distance);
  }
}

class ContactDistanceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ContactDistanceTest, PairsQueriesAndRaysMatchTheOracle) {
  for (const int dims : {2, 3}) {
    for (const std::uint64_t seed : {1u, 2u}) {
      SCOPED_TRACE(GetParam() + " " + std::to_string(dims) + "d seed " + std::to_string(seed));
      auto bp = BroadPhase::create(GetParam(), Options{.dims = dims});
      ASSERT_NE(bp, nullptr);
      oracle::World world(dims);
      Rng r(seed * 7919 + static_cast<std::uint64_t>(dims));
      Id next_id = 1;
      for (int frame = 0; frame < 30; ++frame) {
        std::vector<Pair> before;
        bp->sorted_pairs(before);
        // Live ids at the frame's start, each touched at most once.
        std::vector<Id> live;
        for (const auto& [id, object] : world.objects()) live.push_back(id);
        r.shuffle(live);
        std::size_t next_live = 0;
        const auto take_live = [&]() -> std::optional<Id> {
          if (next_live == live.size()) return std::nullopt;
          return live[next_live++];
        };
        // The first frames add in bulk, later ones churn.
        const int adds = frame < 2 ? 60 : r.range(0, 6);
        std::vector<Id> ids;
        std::vector<Box3> boxes;
        std::vector<float> distances;
        for (int i = 0; i < adds; ++i) {
          ids.push_back(next_id++), boxes.push_back(random_box(r, dims)), distances.push_back(random_distance(r));
        }
        const bool with_distances = frame > 0 || r.chance(0.5);  // also worlds whose first batch has none
        ASSERT_TRUE(bp->add(ids, boxes, {}, Motion::kDynamic,
                            with_distances ? std::span<const float>(distances) : std::span<const float>()));
        for (std::size_t i = 0; i < ids.size(); ++i)
          world.add(ids[i], boxes[i], {}, Motion::kDynamic, with_distances ? distances[i] : 0.0f);
        if (r.chance(0.4)) {  // a static object, with a distance
          const Id id = next_id++;
          const Box3 box = random_box(r, dims);
          const float distance = random_distance(r);
          ASSERT_TRUE(bp->add(id, box, Filter{}, Motion::kStatic, distance));
          world.add(id, box, {}, Motion::kStatic, distance);
        }
        for (int i = r.range(0, 12); i > 0; --i) {  // moves, half of them keeping their distance
          const std::optional<Id> id = take_live();
          if (!id) break;
          const Box3 box = random_box(r, dims);
          if (r.chance(0.5)) {
            ASSERT_TRUE(bp->move(*id, box));
            world.move(*id, box);
          } else {
            const float distance = random_distance(r);
            ASSERT_TRUE(bp->move(*id, box, distance));
            world.move(*id, box, distance);
          }
        }
        for (int i = r.range(0, 3); i > 0; --i) {
          const std::optional<Id> id = take_live();
          if (!id) break;
          ASSERT_TRUE(bp->remove(*id));
          world.remove(*id);
        }
        if (r.chance(0.3)) {
          if (const std::optional<Id> id = take_live()) {
            const Filter filter{.category = 1u << r.below(2), .mask = r.chance(0.5) ? kAllCategories : 1u};
            ASSERT_TRUE(bp->set_filter(*id, filter));
            world.set_filter(*id, filter);
          }
        }
        const FrameDelta& delta = bp->update();
        ASSERT_TRUE(delta.status);
        const std::vector<Pair> after = world.pairs();
        ASSERT_EQ(std::vector<Pair>(delta.created.begin(), delta.created.end()), oracle::minus(after, before))
            << "frame " << frame;
        ASSERT_EQ(std::vector<Pair>(delta.deleted.begin(), delta.deleted.end()), oracle::minus(before, after))
            << "frame " << frame;
        expect_same_answers(*bp, world, r, dims);
        ASSERT_TRUE(bp->validate());
      }
    }
  }
}

std::string param_name(const ::testing::TestParamInfo<std::string>& param) {
  std::string name = param.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, ContactDistanceTest, ::testing::ValuesIn(any_box_algorithms()), param_name);

// Every adversarial trace kind (touching faces, points, identical boxes,
// infinite and FLT_MAX bounds, signed zeros, denormals, churn, extreme ids,
// ...) replayed with a contact distance drawn per add and per second move,
// from 0 to 1e30 (which grows finite boxes to FLT_MAX and beyond), against
// the oracle, every frame's delta.
class ContactDistanceKinds : public ::testing::TestWithParam<std::tuple<std::string, testgen::TraceKind>> {};

TEST_P(ContactDistanceKinds, AdversarialTracesMatchTheOracle) {
  const auto& [algorithm, kind] = GetParam();
  static const float kDistances[] = {0.0f, 0.0f, std::numeric_limits<float>::denorm_min(), 1e-7f, 0.5f, 1.0f, 1e30f};
  for (const int dims : {2, 3}) {
    SCOPED_TRACE(std::to_string(dims) + "d");
    const Trace trace = testgen::make_trace(kind, testgen::GenParams{dims, 23, 0, 0});
    auto bp = BroadPhase::create(algorithm, Options{.dims = dims});
    ASSERT_NE(bp, nullptr);
    oracle::World world(dims);
    Rng r(static_cast<std::uint64_t>(kind) * 131 + static_cast<std::uint64_t>(dims));
    const auto pick = [&] { return kDistances[r.below(std::size(kDistances))]; };
    for (std::size_t f = 0; f < trace.frames.size(); ++f) {
      const TraceFrame& frame = trace.frames[f];
      std::vector<Pair> before;
      bp->sorted_pairs(before);
      ASSERT_TRUE(bp->remove(frame.removed));
      for (const Id id : frame.removed) world.remove(id);
      for (std::size_t k = 0; k < frame.moved.size(); ++k) {
        const Id id = frame.moved[k];
        if (r.chance(0.5)) {
          ASSERT_TRUE(bp->move(id, frame.moved_boxes[k]));
          world.move(id, frame.moved_boxes[k]);
        } else {
          const float distance = pick();
          ASSERT_TRUE(bp->move(id, frame.moved_boxes[k], distance));
          world.move(id, frame.moved_boxes[k], distance);
        }
      }
      for (std::size_t k = 0; k < frame.added.size(); ++k) {
        const float distance = pick();
        const Motion motion = frame.added_is_static(k) ? Motion::kStatic : Motion::kDynamic;
        ASSERT_TRUE(bp->add(frame.added[k], frame.added_boxes[k], frame.added_filter(k), motion, distance));
        world.add(frame.added[k], frame.added_boxes[k], frame.added_filter(k), motion, distance);
      }
      const FrameDelta& delta = bp->update();
      ASSERT_TRUE(delta.status);
      const std::vector<Pair> after = world.pairs();
      ASSERT_EQ(std::vector<Pair>(delta.created.begin(), delta.created.end()), oracle::minus(after, before))
          << "frame " << f;
      ASSERT_EQ(std::vector<Pair>(delta.deleted.begin(), delta.deleted.end()), oracle::minus(before, after))
          << "frame " << f;
    }
    ASSERT_TRUE(bp->validate());
  }
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, ContactDistanceKinds,
                         ::testing::Combine(::testing::ValuesIn(any_box_algorithms()),
                                            ::testing::ValuesIn(testgen::kAllTraceKinds)),
                         [](const auto& param_info) {
                           return testgen::algorithm_and_kind_name(std::get<0>(param_info.param),
                                                                   std::get<1>(param_info.param));
                         });

TEST(ContactDistance, BoxesWithinTheDistancesPairAndPartWhenFarther) {
  auto bp = BroadPhase::create("sap");
  ASSERT_TRUE(bp->add(1, Box3{{0, 0, 0}, {1, 1, 1}}, Filter{}, Motion::kDynamic, 0.5f));
  ASSERT_TRUE(bp->add(2, Box3{{2, 0, 0}, {3, 1, 1}}, Filter{}, Motion::kDynamic, 0.5f));  // gap 1 = 0.5 + 0.5
  const FrameDelta& first = bp->update();
  ASSERT_EQ(first.created.size(), 1u);
  EXPECT_EQ(first.created[0], (Pair{1, 2}));
  // The boxes themselves do not overlap: queries and rays see them as given.
  std::vector<Id> hits;
  ASSERT_TRUE(bp->query(Box3{{1.25f, 0, 0}, {1.75f, 1, 1}}, hits));
  EXPECT_TRUE(hits.empty());
  std::vector<RayHit> along;
  ASSERT_TRUE(bp->ray_cast(Ray3{{-1, 0.5f, 0.5f}, {1, 0, 0}}, along));
  EXPECT_EQ(along, (std::vector<RayHit>{{1, 1.0f}, {2, 3.0f}}));
  EXPECT_EQ(bp->box(1), (Box3{{0, 0, 0}, {1, 1, 1}}));
  EXPECT_EQ(bp->contact_distance(2), 0.5f);
  EXPECT_EQ(bp->contact_distance(3), std::nullopt);
  // A move without a distance keeps it: still in contact.
  ASSERT_TRUE(bp->move(2, Box3{{2, 0.5f, 0}, {3, 1.5f, 1}}));
  EXPECT_TRUE(bp->update().deleted.empty());
  EXPECT_EQ(bp->contact_distance(2), 0.5f);
  // A smaller distance parts them.
  ASSERT_TRUE(bp->move(2, Box3{{2, 0.5f, 0}, {3, 1.5f, 1}}, 0.25f));
  const FrameDelta& parted = bp->update();
  ASSERT_EQ(parted.deleted.size(), 1u);
  EXPECT_EQ(bp->contact_distance(2), 0.25f);
}

TEST(ContactDistance, GrowsOutwardExactly) {
  // 1 + 1e-30 rounds to 1 in double as in float: grown() still rounds the
  // grown max up, to the next float after 1.
  auto bp = BroadPhase::create("sap");
  const float tiny = 1e-30f;
  ASSERT_TRUE(bp->add(1, Box3{{0, 0, 0}, {1, 1, 1}}, Filter{}, Motion::kDynamic, tiny));
  ASSERT_TRUE(bp->add(2, Box3{{std::nextafter(1.0f, 2.0f), 0, 0}, {2, 1, 1}}));
  // 1 + 1e-30 < nextafter(1): the real grown boxes do not meet, yet the
  // float box grown outward reaches nextafter(1): a pair, as the contract
  // says (pairs of the float boxes grown outward).
  EXPECT_EQ(bp->update().created.size(), 1u);
  EXPECT_EQ(bp->box(1), (Box3{{0, 0, 0}, {1, 1, 1}}));
}

TEST(ContactDistance, RefusesBadDistancesNamingOpIdAndIndex) {
  auto bp = BroadPhase::create("sap");
  ASSERT_TRUE(bp->add(1, Box3{{0, 0, 0}, {1, 1, 1}}));
  bp->update();
  const Id ids[] = {5, 6, 7};
  const Box3 boxes[] = {{{0, 0, 0}, {1, 1, 1}}, {{0, 0, 0}, {1, 1, 1}}, {{0, 0, 0}, {1, 1, 1}}};
  for (const float bad : {-1.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()}) {
    const float distances[] = {0.5f, bad, 0.0f};
    const Status s = bp->add(ids, boxes, {}, Motion::kDynamic, distances);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(s.operation(), Operation::kAdd);
    EXPECT_EQ(s.id(), 6u);
    EXPECT_EQ(s.index(), 1u);
    EXPECT_EQ(s.message(), "add of id 6: contact distance is negative, NaN or infinite");
    const Status m = bp->move(1, Box3{{0, 0, 0}, {1, 1, 1}}, bad);
    ASSERT_FALSE(m);
    EXPECT_EQ(m.message(), "move of id 1: contact distance is negative, NaN or infinite");
  }
  const float two[] = {0.5f, 0.5f};
  EXPECT_EQ(bp->add(ids, boxes, {}, Motion::kDynamic, two).code(), StatusCode::kInvalidArgument);
  const Id one[] = {1};
  EXPECT_EQ(bp->move(one, std::span<const Box3>(boxes, 1), two).code(), StatusCode::kInvalidArgument);
  // Nothing was staged: the same ids are free to go, and the frame is empty.
  const FrameDelta& d = bp->update();
  EXPECT_TRUE(d.created.empty());
  EXPECT_EQ(bp->size(), 1u);
  EXPECT_EQ(bp->contact_distance(1), 0.0f);
  ASSERT_TRUE(bp->add(ids, boxes));
  ASSERT_TRUE(bp->move(1, Box3{{0, 0, 0}, {1, 1, 1}}, 2.0f));
}

TEST(ContactDistance, AWorldWithoutDistancesKeepsNoTable) {
  auto bp = BroadPhase::create("sap");
  ASSERT_TRUE(bp->add(1, Box3{{0, 0, 0}, {1, 1, 1}}));
  ASSERT_TRUE(bp->add(2, Box3{{0, 0, 0}, {1, 1, 1}}, Filter{}, Motion::kDynamic, 0.0f));
  bp->update();
  const std::size_t without = bp->memory_bytes();
  ASSERT_TRUE(bp->move(2, Box3{{0, 0, 0}, {1, 1, 1}}, 0.5f));
  bp->update();
  EXPECT_GT(bp->memory_bytes(), without);  // the table came with the first distance
}

TEST(ContactDistance, KeptWhenMemoryIsGivenBack) {
  // 70,000 objects, then all but 1,000 removed: the broad phase renumbers
  // its slots (memory.cpp), and the distances and own boxes go with them.
  auto bp = BroadPhase::create("sap");
  oracle::World world;
  std::vector<Id> ids;
  std::vector<Box3> boxes;
  std::vector<float> distances;
  for (Id id = 0; id < 70000; ++id) {
    const float x = 2.0f * static_cast<float>(id);
    ids.push_back(id), boxes.push_back(Box3{{x, 0, 0}, {x + 1, 1, 1}}), distances.push_back(id % 3 == 0 ? 1.0f : 0.0f);
    world.add(id, boxes.back(), {}, Motion::kDynamic, distances.back());
  }
  ASSERT_TRUE(bp->add(ids, boxes, {}, Motion::kDynamic, distances));
  bp->update();
  const std::vector<Id> going(ids.begin(), ids.end() - 1000);
  ASSERT_TRUE(bp->remove(going));
  for (const Id id : going) world.remove(id);
  const std::size_t before = bp->memory_bytes();
  bp->update();
  EXPECT_LT(bp->memory_bytes(), before / 2);  // compacted
  std::vector<Pair> got;
  bp->sorted_pairs(got);
  EXPECT_EQ(got, world.pairs());
  EXPECT_FALSE(got.empty());
  for (const auto& [id, object] : world.objects()) {
    ASSERT_EQ(bp->box(id), object.box);
    ASSERT_EQ(bp->contact_distance(id), object.distance);
  }
  EXPECT_TRUE(bp->validate());
}

}  // namespace
}  // namespace sapling
