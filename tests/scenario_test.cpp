// The benchmark scenarios against docs/scenarios.md: its quoted pair
// counts, its id-reuse and step-order rules, and the bounds every scenario
// promises.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sapling/box.hpp"
#include "scenarios/scenario.hpp"

namespace sapling {
namespace {

std::unique_ptr<Scenario> make(const ScenarioParams& p) {
  std::string error;
  auto s = make_scenario(p, &error);
  EXPECT_TRUE(s) << error;
  return s;
}

ScenarioParams named(std::string name, std::uint64_t n = 0) {
  ScenarioParams p;
  p.name = std::move(name);
  p.n = n;
  return p;
}

// Exact closed-overlap pair count of the live boxes: sort by min x, then scan
// each box's x-overlapping successors and test them with overlaps().
std::uint64_t count_pairs(const Scenario& s) {
  const auto boxes = s.boxes();
  std::vector<Id> ids(s.alive_ids().begin(), s.alive_ids().end());
  std::sort(ids.begin(), ids.end(), [&](Id a, Id b) { return boxes[a].min[0] < boxes[b].min[0]; });
  std::uint64_t pairs = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const Box3& a = boxes[ids[i]];
    for (std::size_t j = i + 1; j < ids.size() && boxes[ids[j]].min[0] <= a.max[0]; ++j) {
      pairs += overlaps(a, boxes[ids[j]]) ? 1 : 0;
    }
  }
  return pairs;
}

// The same count by brute force, to check count_pairs itself.
std::uint64_t count_pairs_brute(const Scenario& s) {
  const auto boxes = s.boxes();
  const auto ids = s.alive_ids();
  std::uint64_t pairs = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    for (std::size_t j = i + 1; j < ids.size(); ++j) pairs += overlaps(boxes[ids[i]], boxes[ids[j]]) ? 1 : 0;
  }
  return pairs;
}

TEST(ScenarioMath, SplitMix64ReferenceOutputs) {
  // Published splitmix64 outputs for the state 1234567.
  std::uint64_t state = 1234567;
  EXPECT_EQ(scenario_math::splitmix64(state), 6457827717110365317ull);
  EXPECT_EQ(scenario_math::splitmix64(state), 3203168211198807973ull);
  EXPECT_EQ(scenario_math::splitmix64(state), 9817491932198370423ull);
  EXPECT_EQ(scenario_math::splitmix64(state), 4593380528125082431ull);
  EXPECT_EQ(scenario_math::splitmix64(state), 16408922859458223821ull);
}

TEST(ScenarioMath, StreamDrawsStayInRange) {
  scenario_math::Stream s(7, 3);
  for (int i = 0; i < 10000; ++i) {
    EXPECT_LT(s.below(65537), 65537u);
    const double u = s.u01();
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
  EXPECT_EQ(s.below(1), 0u);
}

TEST(ScenarioMath, FloorRootsAreExact) {
  using scenario_math::icbrt;
  using scenario_math::isqrt;
  for (std::uint64_t x = 0; x < 200000; ++x) {
    const std::uint64_t r = isqrt(x);
    ASSERT_TRUE(r * r <= x && (r + 1) * (r + 1) > x) << x;
    const std::uint64_t c = icbrt(x);
    ASSERT_TRUE(c * c * c <= x && (c + 1) * (c + 1) * (c + 1) > x) << x;
  }
  // Around perfect powers, where a floating estimate is most likely off by one.
  scenario_math::Stream s(11, 0);
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t k = (s.next() >> 32) | 1;  // < 2^32
    const std::uint64_t sq = k * k;
    EXPECT_EQ(isqrt(sq), k);
    EXPECT_EQ(isqrt(sq - 1), k - 1);
    if (k < 0xFFFFFFFFull) {
      EXPECT_EQ(isqrt(sq + 2 * k), k);  // (k+1)^2 - 1
    }
    const std::uint64_t m = s.below(2642245) + 1;  // m^3 < 2^64
    const std::uint64_t cube = m * m * m;
    EXPECT_EQ(icbrt(cube), m);
    EXPECT_EQ(icbrt(cube - 1), m - 1);
    EXPECT_EQ(icbrt(cube + 1), m);
  }
  constexpr std::uint64_t kMax = ~std::uint64_t{0};
  EXPECT_EQ(isqrt(kMax), 0xFFFFFFFFull);
  EXPECT_EQ(icbrt(kMax), 2642245u);
  EXPECT_EQ(icbrt(std::uint64_t{2642245} * 2642245 * 2642245), 2642245u);
  EXPECT_EQ(icbrt(std::uint64_t{2642245} * 2642245 * 2642245 - 1), 2642244u);
}

TEST(ScenarioCounter, SortAndScanMatchesBruteForce) {
  for (const char* name : {"unisize2d", "tracy", "allmoving3d", "cluster", "small"}) {
    auto s = make(named(name, 1500));
    ASSERT_TRUE(s);
    for (int f = 0; f < 3; ++f) {
      EXPECT_EQ(count_pairs(*s), count_pairs_brute(*s)) << name << " frame " << f;
      s->step();
    }
  }
}

// The checks quoted by docs/scenarios.md.
TEST(ScenarioSpec, Unisize2dPairCounts) {
  ScenarioParams p = named("unisize2d", 131072);
  p.density_pm = 200;
  auto s = make(p);
  ASSERT_TRUE(s);
  EXPECT_EQ(count_pairs(*s), 52306u);
  for (int i = 0; i < 10; ++i) s->step();
  EXPECT_EQ(count_pairs(*s), 52526u);
}

TEST(ScenarioSpec, TracyPairCounts) {
  ScenarioParams p = named("tracy", 10000);
  p.moving = 1000;
  p.inserts = 50;
  p.removes = 50;
  auto s = make(p);
  ASSERT_TRUE(s);
  EXPECT_EQ(count_pairs(*s), 2024u);
  for (int i = 0; i < 20; ++i) s->step();
  EXPECT_EQ(count_pairs(*s), 2063u);
}

TEST(Scenario, DefaultsAreResolved) {
  auto s = make(named("tracy"));
  ASSERT_TRUE(s);
  const ScenarioParams& p = s->params();
  EXPECT_EQ(p.n, 10000u);
  EXPECT_EQ(p.seed, 2u);
  EXPECT_EQ(p.density_pm, 50u);
  EXPECT_EQ(p.speed_pm, 100u);
  EXPECT_EQ(p.moving, 1000u);
  EXPECT_EQ(p.inserts, 50u);
  EXPECT_EQ(p.removes, 50u);
  EXPECT_EQ(s->capacity(), 10000u);
  EXPECT_EQ(s->dims(), 3);
  auto c = make(named("cluster", 1000));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->params().cycle, 500u);
  EXPECT_EQ(c->params().seed, 4u);
  EXPECT_FALSE(c->world());
  auto u = make(named("unisize2d", 1000));
  ASSERT_TRUE(u);
  EXPECT_EQ(u->dims(), 2);
  EXPECT_EQ(u->params().density_pm, 200u);
}

TEST(Scenario, ListNamesEveryScenario) {
  const auto list = scenario_list();
  ASSERT_EQ(list.size(), 5u);
  for (const auto& info : list) {
    EXPECT_FALSE(info.description.empty());
    EXPECT_TRUE(make(named(std::string(info.name), 100))) << info.name;
  }
}

TEST(Scenario, SameParamsSameFrames) {
  for (const auto& info : scenario_list()) {
    ScenarioParams p = named(std::string(info.name), 2000);
    p.inserts = 30;
    p.removes = 20;  // tracy: ids grow as well as get reused
    auto a = make(p);
    auto b = make(p);
    ASSERT_TRUE(a && b);
    for (int f = 0; f < 15; ++f) {
      a->step();
      b->step();
    }
    ASSERT_EQ(a->capacity(), b->capacity());
    EXPECT_TRUE(std::equal(a->boxes().begin(), a->boxes().end(), b->boxes().begin())) << info.name;
    EXPECT_TRUE(std::equal(a->alive().begin(), a->alive().end(), b->alive().begin())) << info.name;
    EXPECT_TRUE(std::ranges::equal(a->alive_ids(), b->alive_ids())) << info.name;
    EXPECT_TRUE(std::ranges::equal(a->added(), b->added())) << info.name;
    EXPECT_TRUE(std::ranges::equal(a->removed(), b->removed())) << info.name;
  }
}

TEST(Scenario, SeedChangesFrames) {
  ScenarioParams p = named("allmoving3d", 100);
  auto a = make(p);
  p.seed = 0;  // 0 is a seed like any other
  auto b = make(p);
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(std::equal(a->boxes().begin(), a->boxes().end(), b->boxes().begin()));
}

TEST(Scenario, SmallIsAllMoving3dWithSeed5) {
  ScenarioParams w3 = named("allmoving3d", 25);
  w3.seed = 5;
  auto a = make(w3);
  auto b = make(named("small", 25));
  ASSERT_TRUE(a && b);
  for (int f = 0; f < 50; ++f) {
    ASSERT_TRUE(std::ranges::equal(a->boxes(), b->boxes())) << "frame " << f;
    a->step();
    b->step();
  }
}

// Replays the spec's id rules: inserts pop a LIFO free list (else take
// capacity()), and this step's victims join it only after the inserts.
TEST(Scenario, TracyIdReuse) {
  for (const auto& [inserts, removes] : {std::pair{25, 40}, std::pair{40, 25}}) {
    ScenarioParams p = named("tracy", 1000);
    p.inserts = inserts;  // fewer: the free list grows; more: reuse, then fresh ids
    p.removes = removes;
    auto s = make(p);
    ASSERT_TRUE(s);
    std::vector<Id> free_list;
    std::size_t capacity = s->capacity();
    std::uint64_t reused = 0, fresh = 0;
    for (int f = 0; f < 40; ++f) {
      s->step();
      ASSERT_EQ(s->removed().size(), static_cast<std::size_t>(removes));
      ASSERT_EQ(s->added().size(), static_cast<std::size_t>(inserts));
      const std::set<Id> victims(s->removed().begin(), s->removed().end());
      EXPECT_EQ(victims.size(), s->removed().size());
      for (Id id : s->added()) {
        EXPECT_FALSE(victims.count(id)) << "id freed and reused in one step";
        if (!free_list.empty()) {
          EXPECT_EQ(id, free_list.back());
          free_list.pop_back();
          ++reused;
        } else {
          EXPECT_EQ(id, capacity);
          ++capacity;
          ++fresh;
        }
      }
      free_list.insert(free_list.end(), s->removed().begin(), s->removed().end());
      EXPECT_EQ(s->capacity(), capacity);
      EXPECT_EQ(s->alive_ids().size(), 1000u + static_cast<std::size_t>(f + 1) * (inserts - removes));
    }
    EXPECT_GT(reused, 0u);
    if (inserts > removes) {
      EXPECT_GT(fresh, 0u);
    }
  }
}

// removed / moved / added agree with alive() and alive_ids() after each step.
void check_lists(const Scenario& s, const std::vector<std::uint8_t>& alive_before, bool all_move) {
  const auto alive = s.alive();
  ASSERT_EQ(alive.size(), s.capacity());
  ASSERT_EQ(s.boxes().size(), s.capacity());
  std::vector<Id> live;
  for (std::size_t id = 0; id < alive.size(); ++id) {
    if (alive[id]) live.push_back(static_cast<Id>(id));
  }
  std::vector<Id> listed(s.alive_ids().begin(), s.alive_ids().end());
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(listed, live);
  for (Id id : s.removed()) {
    ASSERT_LT(id, alive_before.size());
    EXPECT_TRUE(alive_before[id]);
    // Dead now: a victim's id is never reused in the step that freed it.
    EXPECT_FALSE(alive[id]);
  }
  for (Id id : s.added()) {
    EXPECT_TRUE(alive[id]);
    EXPECT_TRUE(id >= alive_before.size() || !alive_before[id]);
  }
  EXPECT_TRUE(std::is_sorted(s.moved().begin(), s.moved().end()));
  EXPECT_TRUE(std::adjacent_find(s.moved().begin(), s.moved().end()) == s.moved().end());
  for (Id id : s.moved()) {
    EXPECT_TRUE(alive[id]);
    ASSERT_LT(id, alive_before.size());
    EXPECT_TRUE(alive_before[id]);
  }
  if (all_move) {
    EXPECT_EQ(s.moved().size(), live.size());
  }
}

TEST(Scenario, ListsAgreeWithAlive) {
  for (const auto& info : scenario_list()) {
    auto s = make(named(std::string(info.name), 3000));
    ASSERT_TRUE(s);
    EXPECT_TRUE(s->removed().empty());
    EXPECT_TRUE(s->moved().empty());
    ASSERT_EQ(s->added().size(), 3000u);
    for (std::size_t i = 0; i < 3000; ++i) EXPECT_EQ(s->added()[i], i);
    EXPECT_TRUE(std::ranges::equal(s->alive_ids(), s->added()));
    const bool all_move = info.name != "tracy";
    for (int f = 0; f < 25; ++f) {
      std::vector<std::uint8_t> before(s->alive().begin(), s->alive().end());
      s->step();
      EXPECT_EQ(s->frame(), static_cast<std::uint64_t>(f + 1));
      check_lists(*s, before, all_move);
    }
  }
}

TEST(Scenario, TracyMovesOnlyMovingAndKeepsStaticBoxes) {
  ScenarioParams p = named("tracy", 2000);
  p.inserts = 0;
  p.removes = 0;
  auto s = make(p);
  ASSERT_TRUE(s);
  const std::vector<Box3> start(s->boxes().begin(), s->boxes().end());
  for (int f = 0; f < 10; ++f) s->step();
  // Creation index < moving (= 200) moves; the rest never changes.
  EXPECT_EQ(s->moved().size(), 200u);
  for (std::size_t i = 0; i < 200; ++i) EXPECT_EQ(s->moved()[i], i);
  for (std::size_t id = 200; id < 2000; ++id) EXPECT_EQ(s->boxes()[id], start[id]);
}

bool inside(const Box3& b, const Box3& world) {
  for (int k = 0; k < 3; ++k) {
    if (b.min[k] < world.min[k] || b.max[k] > world.max[k]) return false;
  }
  return true;
}

TEST(Scenario, BouncingBoxesStayInTheWorld) {
  for (const char* name : {"unisize2d", "tracy", "allmoving3d", "small"}) {
    ScenarioParams p = named(name, 500);
    p.speed_pm = 2000;  // fast, so boxes reach the walls often
    if (std::string(name) == "unisize2d") p.density_pm = 20;
    auto s = make(p);
    ASSERT_TRUE(s) << name;
    ASSERT_TRUE(s->world());
    const Box3 world = *s->world();
    for (int f = 0; f < 300; ++f) {
      for (Id id : s->alive_ids()) ASSERT_TRUE(inside(s->boxes()[id], world)) << name << " frame " << f;
      s->step();
    }
  }
}

TEST(Scenario, AllMoving3dExtents) {
  auto s = make(named("allmoving3d", 20000));
  ASSERT_TRUE(s);
  std::vector<Box3> start(s->boxes().begin(), s->boxes().end());
  for (const Box3& b : start) {
    for (int k = 0; k < 3; ++k) {
      const float e = b.max[k] - b.min[k];
      EXPECT_GE(e, 0.5f);
      EXPECT_LE(e, 4.0f);
    }
  }
  for (int f = 0; f < 5; ++f) s->step();
  for (std::size_t id = 0; id < start.size(); ++id) {
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(s->boxes()[id].max[k] - s->boxes()[id].min[k], start[id].max[k] - start[id].min[k]);
    }
  }
}

// Cluster has no bounds, so after f frames each cube is exactly at p + f * v
// with the spec's v (toward the centre at speed isqrt(2 L^2) / cycle); in
// `cycle` frames it travels about the plane's diagonal.
TEST(Scenario, ClusterCrossesTheCentre) {
  ScenarioParams p = named("cluster", 4000);
  p.cycle = 100;
  auto s = make(p);
  ASSERT_TRUE(s);
  const std::vector<Box3> start(s->boxes().begin(), s->boxes().end());
  const auto side = static_cast<std::int64_t>(scenario_math::isqrt(std::uint64_t{4000} * 4096 * 4096 * 1000 / 250));
  const auto speed = static_cast<std::int64_t>(scenario_math::isqrt(static_cast<std::uint64_t>(2 * side * side))) / 100;
  for (int f = 0; f < 100; ++f) s->step();
  std::size_t far = 0;
  for (Id id : s->alive_ids()) {
    std::int64_t p0[2], d[2];
    for (int k = 0; k < 2; ++k) {
      p0[k] = static_cast<std::int64_t>(start[id].min[k] * 4096.0f);
      d[k] = side / 2 - (p0[k] + 2048);
    }
    const auto len =
        static_cast<std::int64_t>(scenario_math::isqrt(static_cast<std::uint64_t>(d[0] * d[0] + d[1] * d[1])));
    for (int k = 0; k < 2; ++k) {
      const std::int64_t v = len == 0 ? 0 : d[k] * speed / len;
      const std::int64_t want = p0[k] + 100 * v;
      ASSERT_EQ(s->boxes()[id].min[k], static_cast<float>(want) / 4096.0f);
      ASSERT_EQ(s->boxes()[id].max[k], static_cast<float>(want + 4096) / 4096.0f);
    }
    EXPECT_EQ(s->boxes()[id].min[2], 0.0f);
    EXPECT_EQ(s->boxes()[id].max[2], 1.0f);
    // Objects from the outer ring end up beyond the opposite side of the centre.
    if (len > side / 3) {
      ++far;
      for (int k = 0; k < 2; ++k) {
        const std::int64_t now = static_cast<std::int64_t>(s->boxes()[id].min[k] * 4096.0f) + 2048 - side / 2;
        EXPECT_TRUE(d[k] == 0 || (now > 0) == (d[k] > 0)) << "crossed the centre on axis " << k;
      }
    }
  }
  EXPECT_GT(far, 0u);
}

TEST(Scenario, Unisize2dSquares) {
  auto s = make(named("unisize2d", 1000));
  ASSERT_TRUE(s);
  for (int f = 0; f < 3; ++f) s->step();
  for (Id id : s->alive_ids()) {
    const Box3& b = s->boxes()[id];
    EXPECT_EQ(b.max[0] - b.min[0], 1.0f);
    EXPECT_EQ(b.max[1] - b.min[1], 1.0f);
    EXPECT_EQ(b.min[2], 0.0f);
    EXPECT_EQ(b.max[2], 1.0f);
  }
}

TEST(Scenario, BadParamsAreRefused) {
  auto refused = [](const ScenarioParams& p) {
    std::string error;
    const bool rejected = make_scenario(p, &error) == nullptr;
    EXPECT_TRUE(rejected) << p.name;
    EXPECT_FALSE(error.empty()) << p.name;
    return rejected && !error.empty();
  };
  EXPECT_TRUE(refused(named("no-such-scenario")));
  EXPECT_TRUE(refused(named("")));
  EXPECT_TRUE(refused(named("tracy", std::uint64_t{1} << 32)));
  ScenarioParams dense = named("unisize2d", 1);
  dense.density_pm = 2000;  // world smaller than one square
  EXPECT_TRUE(refused(dense));
  ScenarioParams huge = named("unisize2d", 100000);
  huge.density_pm = 1;  // world beyond exact floats
  EXPECT_TRUE(refused(huge));
  ScenarioParams fast = named("allmoving3d", 10);
  fast.speed_pm = 1000000;
  EXPECT_TRUE(refused(fast));
  ScenarioParams churn = named("tracy", 100);
  churn.removes = 101;
  EXPECT_TRUE(refused(churn));
  std::string one_error;  // a single box either fits its world or is refused with a message
  EXPECT_TRUE(make_scenario(named("small", 1), &one_error) != nullptr || !one_error.empty());
  // A null error pointer is allowed.
  EXPECT_EQ(make_scenario(named("nope"), nullptr), nullptr);
}

TEST(Scenario, FramesCarryValidBoxes) {
  for (const auto& info : scenario_list()) {
    auto s = make(named(std::string(info.name), 1000));
    ASSERT_TRUE(s);
    TraceFrame frame;
    for (int f = 0; f < 4; ++f) {
      fill_frame(*s, frame);
      EXPECT_TRUE(std::ranges::equal(frame.removed, s->removed()));
      EXPECT_TRUE(std::ranges::equal(frame.moved, s->moved()));
      EXPECT_TRUE(std::ranges::equal(frame.added, s->added()));
      ASSERT_EQ(frame.moved_boxes.size(), frame.moved.size());
      ASSERT_EQ(frame.added_boxes.size(), frame.added.size());
      auto check = [&](Id id, const Box3& b) {
        EXPECT_TRUE(check_box(b)) << info.name;
        Box3 want = s->boxes()[id];
        if (s->dims() == 2) want.min[2] = want.max[2] = 0.0f;
        EXPECT_EQ(b, want) << info.name;
      };
      for (std::size_t i = 0; i < frame.moved.size(); ++i) check(frame.moved[i], frame.moved_boxes[i]);
      for (std::size_t i = 0; i < frame.added.size(); ++i) check(frame.added[i], frame.added_boxes[i]);
      if (f == 0) {
        EXPECT_EQ(frame.added.size(), 1000u);
      }
      s->step();
    }
    const TraceFrame copy = scenario_frame(*s);
    EXPECT_EQ(copy.moved.size(), s->moved().size());
  }
}

// The version-2 options: static ids are added static and never moved,
// groups give every add its group's filter, regrouping gives untouched live
// ids new filters, queries come per frame with valid boxes; the motion is the
// version-1 scenario's, and without the options the frames are version 1.
TEST(Scenario, Version2Options) {
  for (const auto& info : scenario_list()) {
    SCOPED_TRACE(std::string(info.name));
    ScenarioParams p = named(std::string(info.name), 600);
    p.static_pm = 250;
    p.groups = 3;
    p.regroup_pm = 100;
    p.queries = 5;
    ASSERT_TRUE(p.uses_version_2());
    auto s = make(p);
    auto plain = make(named(std::string(info.name), 600));
    ASSERT_TRUE(s && plain);
    std::vector<std::uint8_t> is_static(s->capacity() + 4096, 0);
    TraceFrame frame, plain_frame;
    std::size_t statics = 0, adds = 0, regrouped = 0;
    for (int f = 0; f < 6; ++f) {
      fill_frame(*s, frame);
      fill_frame(*plain, plain_frame);
      EXPECT_FALSE(plain_frame.uses_version_2());
      EXPECT_TRUE(plain_frame.added_filters.empty() && plain_frame.added_static.empty());
      EXPECT_EQ(frame.added, plain_frame.added);
      EXPECT_EQ(frame.removed, plain_frame.removed);
      ASSERT_EQ(frame.added_static.size(), frame.added.size());
      ASSERT_EQ(frame.added_filters.size(), frame.added.size());
      if (is_static.size() < s->capacity()) is_static.resize(s->capacity(), 0);
      for (std::size_t i = 0; i < frame.added.size(); ++i) {
        is_static[frame.added[i]] = frame.added_static[i];
        statics += frame.added_static[i];
        ++adds;
        const Filter filter = frame.added_filters[i];
        ASSERT_EQ(std::popcount(filter.category), 1);
        EXPECT_LT(std::countr_zero(filter.category), 3);
        EXPECT_EQ(filter.mask, filter.category == 1 ? kAllCategories : kAllCategories & ~filter.category);
      }
      // The moves are the scenario's, less the static ids'.
      std::vector<Id> expected_moves;
      for (const Id id : plain_frame.moved) {
        if (!is_static[id]) expected_moves.push_back(id);
      }
      EXPECT_EQ(frame.moved, expected_moves);
      ASSERT_EQ(frame.filtered.size(), frame.filters.size());
      for (const Id id : frame.filtered) {
        EXPECT_EQ(std::ranges::count(frame.moved, id) + std::ranges::count(frame.added, id) +
                      std::ranges::count(frame.removed, id),
                  0);
      }
      regrouped += frame.filtered.size();
      ASSERT_EQ(frame.queries.size(), 5u);
      for (std::size_t q = 0; q < frame.queries.size(); ++q) {
        EXPECT_EQ(frame.queries[q].label, static_cast<std::uint32_t>(f * 5 + q));
        EXPECT_TRUE(check_box(frame.queries[q].box));
        if (s->dims() == 2) {
          EXPECT_TRUE(frame.queries[q].box.min[2] == 0.0f && frame.queries[q].box.max[2] == 0.0f);
        }
        EXPECT_EQ(frame.queries[q].mask == kAllCategories, q % 2 == 0);
      }
      s->step();
      plain->step();
    }
    EXPECT_GT(statics, adds / 8);
    EXPECT_LT(statics, adds / 2);
    EXPECT_GT(regrouped, 0u);
  }
  ScenarioParams regroup_alone = named("tracy", 100);
  regroup_alone.regroup_pm = 10;
  EXPECT_EQ(make_scenario(regroup_alone), nullptr);
  ScenarioParams too_many_groups = named("tracy", 100);
  too_many_groups.groups = 33;
  EXPECT_EQ(make_scenario(too_many_groups), nullptr);
}

}  // namespace
}  // namespace sapling
