// Filters, static objects, region queries with masks and ray casts
// (filter.hpp, ray.hpp, docs/trace-format.md "Version 2"), for every
// registered algorithm, against an oracle that applies the pair rule to
// every pair of live objects: random worlds of dynamic and static objects
// whose filters change, frame after frame; the contract's example; frames
// refused by the pair budget (the broad phase then rebuilds its algorithm
// and its static tree); the renumbering after a mass removal; and every
// refusal of a bad call, which must leave the broad phase as it was.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "oracle.hpp"
#include "sapling/broad_phase.hpp"
#include "sapling/registry.hpp"
#include "sapling/trace.hpp"
#include "trace_generators.hpp"

namespace sapling {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<std::string> algorithm_names() {
  std::vector<std::string> names;
  for (const AlgorithmInfo& info : algorithms()) {
    names.push_back(info.name);
    if (info.name == "multi-sap") names.push_back("multi-sap:mode=witness");
    if (info.name == "sap") {
      names.push_back("sap:path=batch");
      names.push_back("sap:path=search");
    }
  }
  return names;
}

std::string identifier(std::string s) {
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

using oracle::World;

// A few categories, so that filters reject some pairs and accept others.
Filter random_filter(testgen::Rng& rng) {
  if (rng.chance(0.4)) return Filter{};
  const std::uint32_t category = 1u << rng.range(0, 3);
  std::uint32_t mask = kAllCategories;
  if (rng.chance(0.5)) mask &= ~(1u << rng.range(0, 3));
  if (rng.chance(0.2)) mask = 0;
  return Filter{category, mask};
}

// Coordinates on a coarse grid, so that boxes often touch exactly.
float coordinate(testgen::Rng& rng) { return static_cast<float>(rng.range(0, 40)) * 0.5f; }

// Dynamic boxes are unit cubes (every algorithm, unisize too, takes them);
// static ones any size, now and then an infinite ground or a point.
Box3 dynamic_box(testgen::Rng& rng) {
  const float x = coordinate(rng), y = coordinate(rng), z = coordinate(rng) * 0.25f;
  return Box3{{x, y, z}, {x + 1, y + 1, z + 1}};
}

Box3 static_box(testgen::Rng& rng) {
  if (rng.chance(0.05)) return Box3{{-kInf, -kInf, -1}, {kInf, kInf, 0}};
  const float x = coordinate(rng), y = coordinate(rng), z = coordinate(rng) * 0.25f;
  if (rng.chance(0.1)) return Box3{{x, y, z}, {x, y, z}};
  return Box3{{x, y, z}, {x + coordinate(rng) * 0.4f, y + coordinate(rng) * 0.4f, z + 1}};
}

Ray3 random_ray(testgen::Rng& rng) {
  Ray3 r;
  for (int k = 0; k < 3; ++k) {
    r.origin[k] = coordinate(rng) - 2;
    // Often zero or axis-parallel: rays along faces and edges.
    r.direction[k] = rng.chance(0.4) ? 0.0f : static_cast<float>(rng.range(-4, 4)) * 0.5f;
  }
  if (r.direction == std::array<float, 3>{0, 0, 0}) r.direction[0] = 1;
  r.max_t = rng.chance(0.3) ? kInf : static_cast<float>(rng.range(0, 40));
  return r;
}

// The frame's delta is the difference of the oracle's pair sets.
void expect_delta(const FrameDelta& d, const std::vector<Pair>& before, const std::vector<Pair>& now) {
  ASSERT_EQ(std::vector<Pair>(d.created.begin(), d.created.end()), oracle::minus(now, before));
  ASSERT_EQ(std::vector<Pair>(d.deleted.begin(), d.deleted.end()), oracle::minus(before, now));
}

std::vector<Pair> sorted(std::span<const Pair> pairs) {
  std::vector<Pair> out(pairs.begin(), pairs.end());
  std::sort(out.begin(), out.end());
  return out;
}

class FilterWorld : public ::testing::TestWithParam<std::string> {};

// One random world: adds (dynamic and static, with filters), moves,
// removals and filter changes; each frame's delta, pairs(), queries and rays
// against the oracle. With a pair budget, some frames are refused: their
// operations are dropped and the next frame rebuilds.
// Counts the frames refused in `refused`.
void run_world(const std::string& algo, std::uint64_t seed, std::size_t max_pairs, int& refused) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  testgen::Rng rng(seed);
  Options options;
  options.max_pairs = max_pairs;
  Status why;
  auto bp = BroadPhase::create(algo, options, &why);
  ASSERT_NE(bp, nullptr) << why.message();
  World oracle;
  std::vector<Pair> before;
  constexpr Id kIds = 90;
  for (int frame = 0; frame < 70; ++frame) {
    SCOPED_TRACE("frame " + std::to_string(frame));
    World next = oracle;
    std::set<Id> touched;
    std::vector<Id> add_ids[2], move_ids, remove_ids, filter_ids;
    std::vector<Box3> add_boxes[2], move_boxes;
    std::vector<Filter> add_filters[2], filters;
    const int ops = frame == 0 ? 50 : rng.range(0, 12);
    for (int k = 0; k < ops; ++k) {
      const Id id = static_cast<Id>(rng.below(kIds));
      if (touched.count(id)) continue;
      touched.insert(id);
      const auto it = oracle.objects().find(id);
      if (it == oracle.objects().end()) {
        const int motion = rng.chance(0.35) ? 1 : 0;
        const Box3 box = motion == 1 ? static_box(rng) : dynamic_box(rng);
        const Filter f = random_filter(rng);
        add_ids[motion].push_back(id);
        add_boxes[motion].push_back(box);
        add_filters[motion].push_back(f);
        next.add(id, box, f, motion == 1 ? Motion::kStatic : Motion::kDynamic);
        continue;
      }
      const double roll = rng.unit();
      if (roll < 0.2) {
        remove_ids.push_back(id);
        next.remove(id);
      } else if (roll < 0.45) {
        const Filter f = random_filter(rng);
        filter_ids.push_back(id);
        filters.push_back(f);
        next.set_filter(id, f);
      } else if (it->second.motion == Motion::kDynamic || rng.chance(0.3)) {
        const Box3 box = it->second.motion == Motion::kStatic ? static_box(rng) : dynamic_box(rng);
        move_ids.push_back(id);
        move_boxes.push_back(box);
        next.move(id, box);
      }
    }
    ASSERT_TRUE(bp->remove(remove_ids));
    ASSERT_TRUE(bp->move(move_ids, move_boxes));
    ASSERT_TRUE(bp->add(add_ids[0], add_boxes[0], add_filters[0], Motion::kDynamic));
    ASSERT_TRUE(bp->add(add_ids[1], add_boxes[1], add_filters[1], Motion::kStatic));
    ASSERT_TRUE(bp->set_filter(filter_ids, filters));
    const FrameDelta& d = bp->update();
    if (d.status.code() == StatusCode::kPairBudget) {
      ASSERT_TRUE(d.created.empty() && d.deleted.empty());
      EXPECT_EQ(sorted(bp->pairs()), before);
      ++refused;
      continue;  // the frame's operations were dropped
    }
    ASSERT_TRUE(d.status) << d.status.message();
    oracle = next;
    const std::vector<Pair> now = oracle.pairs();
    expect_delta(d, before, now);
    if (::testing::Test::HasFatalFailure()) return;
    ASSERT_EQ(sorted(bp->pairs()), now);
    ASSERT_TRUE(bp->validate());
    before = now;
    for (const auto& [id, o] : oracle.objects()) {
      ASSERT_EQ(bp->filter(id), o.filter);
      ASSERT_EQ(bp->motion(id), o.motion);
    }
    // Queries and rays on the frame's state.
    std::vector<Id> got;
    std::vector<RayHit> hits;
    std::optional<RayHit> closest;
    for (int q = 0; q < 4; ++q) {
      const Box3 box = static_box(rng);
      const std::uint32_t mask = rng.chance(0.5) ? kAllCategories : random_filter(rng).category;
      ASSERT_TRUE(bp->query(box, got, mask));
      ASSERT_EQ(got, oracle.query(box, mask));
      const Ray3 ray = random_ray(rng);
      ASSERT_TRUE(bp->ray_cast(ray, hits, mask));
      ASSERT_EQ(hits, oracle.ray_cast(ray, mask));
      ASSERT_TRUE(bp->ray_cast_closest(ray, closest, mask));
      ASSERT_EQ(closest, oracle.ray_cast_closest(ray, mask));
    }
    std::vector<Box3> boxes;
    for (int q = 0; q < 20; ++q) boxes.push_back(static_box(rng));
    std::vector<std::size_t> offsets;
    ASSERT_TRUE(bp->query_many(boxes, got, offsets, 2u));
    ASSERT_EQ(offsets.size(), boxes.size() + 1);
    for (std::size_t q = 0; q < boxes.size(); ++q) {
      ASSERT_EQ(std::vector<Id>(got.begin() + static_cast<std::ptrdiff_t>(offsets[q]),
                                got.begin() + static_cast<std::ptrdiff_t>(offsets[q + 1])),
                oracle.query(boxes[q], 2u));
    }
  }
}

TEST_P(FilterWorld, MatchesOracle) {
  int refused = 0;
  for (std::uint64_t seed = 1; seed <= 4 && !HasFailure(); ++seed) run_world(GetParam(), seed, 0, refused);
  EXPECT_EQ(refused, 0);
}

TEST_P(FilterWorld, RefusedFramesRebuild) {
  int refused = 0;
  for (std::uint64_t seed = 11; seed <= 12 && !HasFailure(); ++seed) run_world(GetParam(), seed, 12, refused);
  EXPECT_GT(refused, 0);  // the budget did refuse frames
}

// The contract's version-2 example (docs/trace-format.md), through the API.
TEST_P(FilterWorld, ContractExample) {
  auto bp = BroadPhase::create(GetParam());
  ASSERT_NE(bp, nullptr);
  const Id statics[] = {1, 2};
  const Box3 static_boxes[] = {{{-kInf, -kInf, -1}, {kInf, kInf, 0}}, {{5, 5, -1}, {6, 6, 0}}};
  ASSERT_TRUE(bp->add(statics, static_boxes, {}, Motion::kStatic));
  ASSERT_TRUE(bp->add(7, Box3{{0, 0, 0}, {1, 1, 1}}, Filter{2, 0xfffffffd}));
  ASSERT_TRUE(bp->add(8, Box3{{0.5f, 0, 0}, {1.5f, 1, 1}}, Filter{2, 0xffffffff}));
  if (GetParam() != "unisize") {
    ASSERT_TRUE(bp->add(9, Box3{{0.5f, 0.5f, 0.5f}, {2, 2, 2}}));
  } else {  // one size only: 9 is a unit cube there, with the same pairs
    ASSERT_TRUE(bp->add(9, Box3{{0.5f, 0.5f, 0.5f}, {1.5f, 1.5f, 1.5f}}));
  }
  const FrameDelta& d0 = bp->update();
  EXPECT_EQ(std::vector<Pair>(d0.created.begin(), d0.created.end()),
            (std::vector<Pair>{{1, 7}, {1, 8}, {7, 9}, {8, 9}}));
  ASSERT_TRUE(bp->set_filter(9, Filter{4, 0x1}));
  const FrameDelta& d1 = bp->update();
  EXPECT_TRUE(d1.created.empty());
  EXPECT_EQ(std::vector<Pair>(d1.deleted.begin(), d1.deleted.end()), (std::vector<Pair>{{7, 9}, {8, 9}}));
  EXPECT_EQ(sorted(bp->pairs()), (std::vector<Pair>{{1, 7}, {1, 8}}));
  std::vector<Id> got;
  ASSERT_TRUE(bp->query(Box3{{-1, -1, -1}, {0.75f, 0.75f, 0.75f}}, got));
  EXPECT_EQ(got, (std::vector<Id>{1, 7, 8, 9}));
  ASSERT_TRUE(bp->query(Box3{{0, 0, 0}, {3, 3, 3}}, got, 0x4));
  EXPECT_EQ(got, (std::vector<Id>{9}));
}

INSTANTIATE_TEST_SUITE_P(Algorithms, FilterWorld, ::testing::ValuesIn(algorithm_names()),
                         [](const auto& param_info) { return identifier(param_info.param); });

// Every adversarial trace kind of the differential suite (ties, points,
// identical boxes, infinities, signed zeros, denormals, teleports, churn,
// extreme ids, ...) with version 2 laid over it: about a third of the
// objects static, filters by id, and filter changes on live untouched ids;
// each frame staged as `sapling replay` stages it (stage_frame()) and
// checked against the oracle.
class FilterTraceKinds : public ::testing::TestWithParam<std::tuple<std::string, testgen::TraceKind>> {};

Trace with_version_2(Trace trace, std::uint64_t seed) {
  testgen::Rng rng(seed);
  std::set<Id> live;
  const auto filter_of = [](Id id, std::uint64_t salt) {
    const std::uint64_t h = (std::uint64_t{id} * 0x9e3779b97f4a7c15ull + salt) >> 40;
    if (h % 3 == 0) return Filter{};
    return Filter{1u << (h % 4), (h & 16) != 0 ? kAllCategories : ~(1u << ((h >> 5) % 4))};
  };
  trace.version = 2;
  for (std::size_t f = 0; f < trace.frames.size(); ++f) {
    TraceFrame& frame = trace.frames[f];
    std::set<Id> touched(frame.removed.begin(), frame.removed.end());
    touched.insert(frame.moved.begin(), frame.moved.end());
    touched.insert(frame.added.begin(), frame.added.end());
    frame.added_filters.clear();
    frame.added_static.clear();
    for (const Id id : frame.added) {
      frame.added_filters.push_back(filter_of(id, f));
      frame.added_static.push_back(rng.chance(0.3) ? 1 : 0);
    }
    for (const Id id : live) {
      if (!touched.count(id) && rng.chance(0.05)) {
        frame.filtered.push_back(id);
        frame.filters.push_back(filter_of(id, f + 7));
      }
    }
    for (const Id id : frame.removed) live.erase(id);
    live.insert(frame.added.begin(), frame.added.end());
  }
  return trace;
}

TEST_P(FilterTraceKinds, MatchesOracle) {
  const auto& [algo, kind] = GetParam();
  const Trace trace = with_version_2(testgen::make_trace(kind, {.dims = 3, .seed = 3}), 17);
  auto bp = BroadPhase::create(algo);
  ASSERT_NE(bp, nullptr);
  World oracle;
  std::vector<Pair> before;
  for (std::size_t f = 0; f < trace.frames.size(); ++f) {
    SCOPED_TRACE("frame " + std::to_string(f));
    const TraceFrame& frame = trace.frames[f];
    const Status staged = stage_frame(*bp, frame);
    if (staged.code() == StatusCode::kUnsupported) GTEST_SKIP() << algo << ": " << staged.message();
    ASSERT_TRUE(staged) << staged.message();
    oracle.apply(frame);
    const FrameDelta& d = bp->update();
    ASSERT_TRUE(d.status) << d.status.message();
    const std::vector<Pair> now = oracle.pairs();
    expect_delta(d, before, now);
    if (::testing::Test::HasFatalFailure()) return;
    before = now;
  }
  ASSERT_EQ(sorted(bp->pairs()), before);
  ASSERT_TRUE(bp->validate());
}

INSTANTIATE_TEST_SUITE_P(AlgorithmsAndKinds, FilterTraceKinds,
                         ::testing::Combine(::testing::ValuesIn(algorithm_names()),
                                            ::testing::ValuesIn(testgen::kAllTraceKinds)),
                         [](const auto& param_info) {
                           return testgen::algorithm_and_kind_name(std::get<0>(param_info.param),
                                                                   std::get<1>(param_info.param));
                         });

// A refused call changes nothing: the next frame is as if it never came.
TEST(Filters, RefusalsLeaveNoTrace) {
  auto bp = BroadPhase::create("sap");
  ASSERT_NE(bp, nullptr);
  ASSERT_TRUE(bp->add(1, Box3{{0, 0, 0}, {1, 1, 1}}, Filter{1, 1}));
  ASSERT_TRUE(bp->add(2, Box3{{0, 0, 0}, {1, 1, 1}}, Filter{}, Motion::kStatic));
  bp->update();
  const Id ids[] = {1, 5};
  const Filter two[] = {Filter{2, 2}, Filter{2, 2}};
  Status s = bp->set_filter(ids, two);
  EXPECT_EQ(s.code(), StatusCode::kUnknownId);
  EXPECT_EQ(s.operation(), Operation::kSetFilter);
  EXPECT_EQ(s.id(), 5u);
  EXPECT_EQ(s.index(), 1u);
  EXPECT_EQ(s.message(), "set_filter of id 5: id is not live");
  s = bp->set_filter(std::span<const Id>(ids, 1), std::span<const Filter>(two, 2));
  EXPECT_EQ(s.code(), StatusCode::kSizeMismatch);
  const Id again[] = {1, 1};
  EXPECT_EQ(bp->set_filter(again, two).code(), StatusCode::kRepeatedId);
  const Id three[] = {3, 4};
  const Box3 boxes[] = {Box3{{0, 0, 0}, {1, 1, 1}}, Box3{{0, 0, 0}, {1, 1, 1}}};
  EXPECT_EQ(bp->add(three, boxes, std::span<const Filter>(two, 1)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bp->add(three, boxes, two, static_cast<Motion>(7)).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(bp->move(1, Box3{{0, 0, 0}, {2, 2, 2}}));
  EXPECT_EQ(bp->set_filter(1, Filter{}).code(), StatusCode::kRepeatedId);  // one operation per id per frame
  const FrameDelta& d = bp->update();
  EXPECT_TRUE(d.created.empty() && d.deleted.empty());
  EXPECT_EQ(bp->filter(1), (Filter{1, 1}));
  EXPECT_EQ(bp->motion(2), Motion::kStatic);
  EXPECT_EQ(bp->filter(5), std::nullopt);
  EXPECT_EQ(sorted(bp->pairs()), (std::vector<Pair>{{1, 2}}));
}

TEST(Rays, RefusedRays) {
  auto bp = BroadPhase::create("sap");
  ASSERT_NE(bp, nullptr);
  std::vector<RayHit> hits{{1, 0}};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Status s = bp->ray_cast(Ray3{{0, nan, 0}, {1, 0, 0}, 1}, hits);
  EXPECT_EQ(s.code(), StatusCode::kInvalidRay);
  EXPECT_TRUE(hits.empty());
  EXPECT_EQ(s.message(), "ray_cast: invalid ray: origin.y is NaN or infinite");
  EXPECT_EQ(bp->ray_cast(Ray3{{0, 0, 0}, {0, 0, 0}, 1}, hits).message(),
            "ray_cast: invalid ray: the direction is zero");
  EXPECT_EQ(bp->ray_cast(Ray3{{0, 0, 0}, {0, kInf, 0}, 1}, hits).message(),
            "ray_cast: invalid ray: direction.y is NaN or infinite");
  EXPECT_EQ(bp->ray_cast(Ray3{{0, 0, 0}, {1, 0, 0}, -1}, hits).message(),
            "ray_cast: invalid ray: max_t is NaN or negative");
  std::optional<RayHit> hit = RayHit{};
  EXPECT_EQ(bp->ray_cast_closest(Ray2{{0, 0}, {0, 0}, 1}, hit).code(), StatusCode::kInvalidRay);
  EXPECT_FALSE(hit.has_value());
  auto flat = BroadPhase::create("sap", Options{.dims = 2});
  ASSERT_NE(flat, nullptr);
  EXPECT_EQ(flat->ray_cast(Ray3{{0, 0, 1}, {1, 0, 0}, 1}, hits).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(flat->add(1, Box2{{1, -1}, {2, 1}}));
  flat->update();
  ASSERT_TRUE(flat->ray_cast(Ray2{{0, 0}, {2, 0}, kInf}, hits));
  EXPECT_EQ(hits, (std::vector<RayHit>{{1, 0.5f}}));
}

// The query tree of dynamic objects (made by the first ray) follows the
// frames: a few changes one by one, many by building it anew; removals and
// slots reused by new ids included.
TEST(Rays, QueryTreeFollowsTheFrames) {
  for (const char* algo : {"sap", "multi-sap", "box-pruning"}) {
    SCOPED_TRACE(algo);
    auto bp = BroadPhase::create(algo);
    ASSERT_NE(bp, nullptr);
    testgen::Rng rng(5);
    World oracle;
    Id next_id = 0;
    for (int frame = 0; frame < 30; ++frame) {
      const int changes = frame % 3 == 0 ? 250 : rng.range(0, 5);
      std::vector<Id> moved, removed, added;
      std::vector<Box3> moved_boxes, added_boxes;
      std::set<Id> touched;
      for (int k = 0; k < changes && oracle.size() != 0; ++k) {
        auto it = oracle.objects().begin();
        std::advance(it, static_cast<std::ptrdiff_t>(rng.below(oracle.size())));
        if (!touched.insert(it->first).second) continue;
        if (rng.chance(0.2)) {
          removed.push_back(it->first);
        } else {
          moved.push_back(it->first);
          moved_boxes.push_back(dynamic_box(rng));
        }
      }
      for (int k = 0; k < (frame == 0 ? 300 : rng.range(0, 20)); ++k) {
        added.push_back(next_id++);
        added_boxes.push_back(dynamic_box(rng));
      }
      ASSERT_TRUE(bp->remove(removed));
      ASSERT_TRUE(bp->move(moved, moved_boxes));
      ASSERT_TRUE(bp->add(added, added_boxes));
      ASSERT_TRUE(bp->update().status);
      for (const Id id : removed) oracle.remove(id);
      for (std::size_t k = 0; k < moved.size(); ++k) oracle.move(moved[k], moved_boxes[k]);
      for (std::size_t k = 0; k < added.size(); ++k) oracle.add(added[k], added_boxes[k]);
      std::vector<RayHit> hits;
      std::vector<Id> got;
      for (int q = 0; q < 5; ++q) {
        const Ray3 ray = random_ray(rng);
        ASSERT_TRUE(bp->ray_cast(ray, hits));
        ASSERT_EQ(hits, oracle.ray_cast(ray, kAllCategories));
        const Box3 box = static_box(rng);
        ASSERT_TRUE(bp->query(box, got));
        ASSERT_EQ(got, oracle.query(box, kAllCategories));
      }
    }
  }
}

// A mass removal renumbers the slots and rebuilds the algorithm and the
// static tree (BroadPhase::reserve()): pairs, filters and queries survive.
TEST(Filters, RenumberingKeepsStaticsAndFilters) {
  auto bp = BroadPhase::create("sap");
  ASSERT_NE(bp, nullptr);
  constexpr Id kMany = 70000;
  std::vector<Id> ids;
  std::vector<Box3> boxes;
  std::vector<Filter> filters;
  for (Id i = 0; i < kMany; ++i) {
    const float x = static_cast<float>(i % 300) * 2, y = static_cast<float>(i / 300) * 2;
    ids.push_back(i);
    boxes.push_back(Box3{{x, y, 0}, {x + 1, y + 1, 1}});
    filters.push_back(Filter{1u << (i % 3), kAllCategories});
  }
  ASSERT_TRUE(bp->add(ids, boxes, filters, Motion::kStatic));
  ASSERT_TRUE(bp->add(Id{kMany}, Box3{{0, 0, 0}, {3, 3, 1}}, Filter{1, 0x5}));
  bp->update();
  EXPECT_EQ(sorted(bp->pairs()), (std::vector<Pair>{{0, kMany}, {300, kMany}}));  // 1 and 301 are category 2
  std::vector<Id> gone(ids.begin() + 10, ids.end());
  ASSERT_TRUE(bp->remove(gone));
  ASSERT_TRUE(bp->move(Id{kMany}, Box3{{0, 0, 0}, {5, 1, 1}}));
  const FrameDelta& d = bp->update();
  EXPECT_EQ(std::vector<Pair>(d.deleted.begin(), d.deleted.end()), (std::vector<Pair>{{300, kMany}}));
  EXPECT_EQ(std::vector<Pair>(d.created.begin(), d.created.end()), (std::vector<Pair>{{2, kMany}}));
  EXPECT_LT(bp->memory_bytes(), std::size_t{4} << 20);  // the room of 70,000 objects is given back
  EXPECT_TRUE(bp->validate());
  std::vector<Id> got;
  ASSERT_TRUE(bp->query(Box3{{0, 0, 0}, {100, 100, 100}}, got, 0x4));
  EXPECT_EQ(got, (std::vector<Id>{2, 5, 8}));
  ASSERT_TRUE(bp->set_filter(Id{kMany}, Filter{}));
  const FrameDelta& d2 = bp->update();
  EXPECT_EQ(std::vector<Pair>(d2.created.begin(), d2.created.end()), (std::vector<Pair>{{1, kMany}}));
}

}  // namespace
}  // namespace sapling
