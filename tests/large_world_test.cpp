// Large worlds (broad_phase.hpp, add() and move() of Box3d, shift_origin(),
// Options::exact_pairs): worlds centred at 1e7 to 1e12 with movers a few
// units apart, where float resolves 1 to 131,072 units, run frame after
// frame through every algorithm that takes any box, with origin shifts
// among the frames, against a double-precision brute force. Without the
// exact filter, the pairs are those of the boxes rounded outward relative
// to the origin (box.hpp's outward(), on differences that are exact in
// double here: the origins are integers near the boxes) and no pair of the
// double boxes is ever missing; with it, exactly the pairs of the double
// boxes. Objects given as float ride along (relative to the origin of the
// time, re-expressed at each shift).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cfenv>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "core/broad_phase/large_world.hpp"
#include "oracle.hpp"
#include "sapling/broad_phase.hpp"
#include "sapling/registry.hpp"
#include "trace_generators.hpp"

namespace sapling {
namespace {

using testgen::Rng;
using Origin = std::array<double, 3>;

// One object as the brute force keeps it: its double box in world
// coordinates, or its float box relative to the origin.
struct Thing {
  bool given_double = true;
  Box3d exact;
  Box3 relative;
  Motion motion = Motion::kDynamic;
};

Box3 rounded(const Thing& t, const Origin& origin) {
  if (!t.given_double) return t.relative;
  Box3d d = t.exact;
  for (int k = 0; k < 3; ++k) d.min[k] -= origin[k], d.max[k] -= origin[k];  // exact here (see the opening)
  return outward(d);
}

Box3d world(const Thing& t, const Origin& origin) {
  if (t.given_double) return t.exact;
  Box3d d{{t.relative.min[0], t.relative.min[1], t.relative.min[2]},
          {t.relative.max[0], t.relative.max[1], t.relative.max[2]}};
  for (int k = 0; k < 3; ++k) d.min[k] += origin[k], d.max[k] += origin[k];
  return d;
}

bool overlap_d(const Box3d& a, const Box3d& b) {
  for (int k = 0; k < 3; ++k) {
    if (a.min[k] > b.max[k] || b.min[k] > a.max[k]) return false;
  }
  return true;
}

std::vector<Pair> brute_pairs(const std::map<Id, Thing>& things, const Origin& origin, bool exact) {
  std::vector<std::pair<Id, Thing>> v(things.begin(), things.end());
  std::vector<Pair> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    for (std::size_t j = i + 1; j < v.size(); ++j) {
      const Thing &a = v[i].second, &b = v[j].second;
      if (a.motion == Motion::kStatic && b.motion == Motion::kStatic) continue;
      const bool meet =
          exact ? overlap_d(world(a, origin), world(b, origin)) : overlaps(rounded(a, origin), rounded(b, origin));
      if (meet) out.push_back(Pair{v[i].first, v[j].first});
    }
  }
  return out;
}

// Region queries and rays among the movers, relative to the origin, against
// the brute force: on the rounded boxes, or with the exact filter on the
// double boxes in world coordinates (the query box and the ray's origin
// taken at the origin; ray.hpp's computation in double).
void check_queries_and_rays(const BroadPhase& bp, const std::map<Id, Thing>& things, const Origin& origin, bool exact,
                            Rng& r) {
  if (things.empty()) return;
  std::vector<const Thing*> all;
  for (const auto& [id, t] : things) all.push_back(&t);
  for (int q = 0; q < 6; ++q) {
    const Box3 near = rounded(*all[r.below(all.size())], origin);
    Box3 box = near;
    for (int k = 0; k < 3; ++k) {
      box.min[k] = near.min[k] - static_cast<float>(r.uniform(0, 3));
      box.max[k] = std::max(box.min[k], near.min[k] + static_cast<float>(r.uniform(-1, 2)));
    }
    Box3d world_box{{box.min[0], box.min[1], box.min[2]}, {box.max[0], box.max[1], box.max[2]}};
    for (int k = 0; k < 3; ++k) world_box.min[k] += origin[k], world_box.max[k] += origin[k];
    std::vector<Id> expected;
    for (const auto& [id, t] : things) {
      if (exact ? overlap_d(world(t, origin), world_box) : overlaps(rounded(t, origin), box)) expected.push_back(id);
    }
    std::vector<Id> got;
    ASSERT_TRUE(bp.query(box, got));
    ASSERT_EQ(got, expected) << "query " << q;

    Ray3 ray;
    for (int k = 0; k < 3; ++k) {
      ray.origin[k] = near.min[k] - static_cast<float>(r.uniform(0, 8));
      ray.direction[k] = static_cast<float>(r.uniform(0.1, 1));
    }
    ray.max_t = r.chance(0.5) ? std::numeric_limits<float>::infinity() : static_cast<float>(r.uniform(0, 20));
    std::array<double, 3> world_origin{};
    for (int k = 0; k < 3; ++k) world_origin[k] = double{ray.origin[k]} + origin[k];
    std::vector<RayHit> hits_expected;
    for (const auto& [id, t] : things) {
      double enter = 0, leave = 0;
      float at = 0;
      if (exact) {
        if (!detail::slab_interval(world_origin, ray.direction, ray.max_t, world(t, origin), 3, enter, leave)) continue;
        at = static_cast<float>(enter);
      } else if (!ray_entry(ray, rounded(t, origin), at)) {
        continue;
      }
      hits_expected.push_back({id, at});
    }
    std::sort(hits_expected.begin(), hits_expected.end());
    std::vector<RayHit> hits;
    ASSERT_TRUE(bp.ray_cast(ray, hits));
    ASSERT_EQ(hits, hits_expected) << "ray " << q;
    std::optional<RayHit> closest;
    ASSERT_TRUE(bp.ray_cast_closest(ray, closest));
    ASSERT_EQ(closest, hits_expected.empty() ? std::nullopt : std::optional<RayHit>(hits_expected.front()))
        << "closest " << q;
  }
}

std::vector<std::string> any_box_algorithms() {
  std::vector<std::string> names;
  for (const AlgorithmInfo& info : algorithms()) {
    if (info.accepts_any_box) names.push_back(info.name);
  }
  return names;
}

struct Param {
  std::string algorithm;
  bool exact;
};

void PrintTo(const Param& param, std::ostream* os) { *os << param.algorithm << (param.exact ? " exact" : " rounded"); }

class LargeWorldTest : public ::testing::TestWithParam<Param> {};

TEST_P(LargeWorldTest, PairsMatchTheDoubleBruteForceAcrossOriginShifts) {
  const auto [algorithm, exact] = GetParam();
  for (const double scale : {1e7, 1e9, 1e12}) {
    SCOPED_TRACE(algorithm + " at " + std::to_string(scale) + (exact ? " exact" : ""));
    auto bp = BroadPhase::create(algorithm, Options{.exact_pairs = exact});
    ASSERT_NE(bp, nullptr);
    const Origin centre{std::round(scale), std::round(0.75 * scale), std::round(-0.5 * scale)};
    Rng r(static_cast<std::uint64_t>(std::log10(scale)) * 31 + (exact ? 1 : 0));
    std::map<Id, Thing> things;
    Origin origin{};
    const auto random_exact = [&]() {
      Box3d b;
      for (int k = 0; k < 3; ++k) {
        b.min[k] = centre[k] + 40.0 * r.unit();
        b.max[k] = b.min[k] + (r.chance(0.1) ? 0.0 : 3.0 * r.unit());
      }
      return b;
    };
    Id next_id = 1;
    for (int frame = 0; frame < 24; ++frame) {
      std::vector<Pair> before;
      bp->sorted_pairs(before);
      if (frame % 6 == 5) {  // a shift to an integer origin near the movers
        Origin offset;
        for (int k = 0; k < 3; ++k) offset[k] = centre[k] + std::round(r.uniform(-60, 60)) - origin[k];
        ASSERT_TRUE(bp->shift_origin(offset));
        for (int k = 0; k < 3; ++k) origin[k] += offset[k];
        for (auto& [id, t] : things) {
          if (t.given_double) continue;
          Box3d d{{t.relative.min[0], t.relative.min[1], t.relative.min[2]},
                  {t.relative.max[0], t.relative.max[1], t.relative.max[2]}};
          for (int k = 0; k < 3; ++k) d.min[k] -= offset[k], d.max[k] -= offset[k];  // exact here
          t.relative = outward(d);
        }
        EXPECT_EQ(bp->origin(), origin);
      }
      std::vector<Id> live;
      for (const auto& [id, t] : things) live.push_back(id);
      r.shuffle(live);
      std::size_t next = 0;
      const int adds = frame == 0 ? 150 : r.range(0, 5);
      for (int i = 0; i < adds; ++i) {
        const Id id = next_id++;
        Thing t;
        t.exact = random_exact();
        t.motion = r.chance(0.1) ? Motion::kStatic : Motion::kDynamic;
        if (r.chance(0.2)) {  // given as float, relative to the origin
          t.given_double = false;
          Box3d d = t.exact;
          for (int k = 0; k < 3; ++k) d.min[k] -= origin[k], d.max[k] -= origin[k];
          t.relative = outward(d);
          ASSERT_TRUE(bp->add(std::span<const Id>(&id, 1), std::span<const Box3>(&t.relative, 1), {}, t.motion));
        } else {
          ASSERT_TRUE(bp->add(std::span<const Id>(&id, 1), std::span<const Box3d>(&t.exact, 1), {}, t.motion));
        }
        things[id] = t;
      }
      for (int i = r.range(5, 40); i > 0 && next < live.size(); --i) {  // small moves in double
        const Id id = live[next++];
        Thing& t = things[id];
        Box3d b = world(t, origin);
        for (int k = 0; k < 3; ++k) {
          const double step = std::ldexp(r.uniform(-1, 1), -r.range(0, 30));
          b.min[k] = std::round(b.min[k] + step), b.max[k] = std::max(b.min[k], std::round(b.max[k] + step));
          b.min[k] += 0.5 * r.unit(), b.max[k] += 0.5 * r.unit() + 0.5;  // sub-unit detail that float cannot hold
        }
        t.given_double = true;
        t.exact = b;
        ASSERT_TRUE(bp->move(id, b));
      }
      for (int i = r.range(0, 3); i > 0 && next < live.size(); --i) {
        const Id id = live[next++];
        ASSERT_TRUE(bp->remove(id));
        things.erase(id);
      }
      const FrameDelta& delta = bp->update();
      ASSERT_TRUE(delta.status);
      const std::vector<Pair> after = brute_pairs(things, origin, exact);
      std::vector<Pair> got;
      bp->sorted_pairs(got);
      ASSERT_EQ(got, after) << "frame " << frame;
      ASSERT_EQ(std::vector<Pair>(delta.created.begin(), delta.created.end()), oracle::minus(after, before))
          << "frame " << frame;
      ASSERT_EQ(std::vector<Pair>(delta.deleted.begin(), delta.deleted.end()), oracle::minus(before, after))
          << "frame " << frame;
      // Never a pair of the double boxes lost.
      ASSERT_TRUE(oracle::minus(brute_pairs(things, origin, true), got).empty()) << "frame " << frame;
      for (const auto& [id, t] : things) ASSERT_EQ(bp->exact_box(id), world(t, origin));
      ASSERT_TRUE(bp->validate());
      check_queries_and_rays(*bp, things, origin, exact, r);
    }
  }
}

std::vector<Param> params() {
  std::vector<Param> out;
  for (const std::string& name : any_box_algorithms()) out.push_back({name, false}), out.push_back({name, true});
  return out;
}

std::string param_name(const ::testing::TestParamInfo<Param>& param) {
  std::string name = param.param.algorithm + (param.param.exact ? "_exact" : "_rounded");
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, LargeWorldTest, ::testing::ValuesIn(params()), param_name);

// Every adversarial trace kind (touching faces, points, identical boxes,
// infinite and FLT_MAX bounds, signed zeros, denormals, churn, extreme ids,
// filters and statics, ...) given in doubles far from the origin: each
// float box of the trace plus an offset of 2^33 to 2^35 per axis, in double
// (the sum rounded as double rounds it; those doubles are the boxes). With
// the origin left at 0 a float resolves 1024 units there, so the rounded
// boxes of a trace (tens of units across) nearly all meet; shifted to the
// offset, they are held closely. Against a double-precision brute force of
// the same boxes and filters: with Options::exact_pairs every frame's pairs
// and delta exactly, without it a superset of them.
class LargeWorldKinds : public ::testing::TestWithParam<std::tuple<std::string, testgen::TraceKind>> {};

TEST_P(LargeWorldKinds, AdversarialTracesInDoublesMatchTheDoubleBruteForce) {
  const auto& [algorithm, kind] = GetParam();
  const Origin offset{std::ldexp(1.0, 33), -std::ldexp(3.0, 33), std::ldexp(1.0, 35)};
  for (const int dims : {2, 3}) {
    for (const bool shifted : {false, true}) {
      for (const bool exact : {false, true}) {
        SCOPED_TRACE(std::to_string(dims) + "d" + (shifted ? " shifted" : "") + (exact ? " exact" : ""));
        const Trace trace = testgen::make_trace(kind, testgen::GenParams{dims, 29, 0, 0});
        auto bp = BroadPhase::create(algorithm, Options{.dims = dims, .exact_pairs = exact});
        ASSERT_NE(bp, nullptr);
        if (shifted) {
          ASSERT_TRUE(bp->shift_origin({offset[0], offset[1], dims == 2 ? 0.0 : offset[2]}));
        }
        struct Object {
          Box3d box;
          Filter filter;
          Motion motion;
        };
        std::map<Id, Object> objects;
        const auto far = [&](const Box3& b) {
          Box3d d = detail::widened(b);
          for (int k = 0; k < dims; ++k) d.min[k] += offset[k], d.max[k] += offset[k];
          return d;
        };
        const auto stage = [&](bool add, Id id, const Box3d& d, Filter filter, Motion motion) {
          if (dims == 2) {
            const Box2d flat{{d.min[0], d.min[1]}, {d.max[0], d.max[1]}};
            return add ? bp->add(std::span<const Id>(&id, 1), std::span<const Box2d>(&flat, 1),
                                 std::span<const Filter>(&filter, 1), motion)
                       : bp->move(std::span<const Id>(&id, 1), std::span<const Box2d>(&flat, 1));
          }
          return add ? bp->add(std::span<const Id>(&id, 1), std::span<const Box3d>(&d, 1),
                               std::span<const Filter>(&filter, 1), motion)
                     : bp->move(std::span<const Id>(&id, 1), std::span<const Box3d>(&d, 1));
        };
        for (std::size_t f = 0; f < trace.frames.size(); ++f) {
          const TraceFrame& frame = trace.frames[f];
          std::vector<Pair> before;
          bp->sorted_pairs(before);
          ASSERT_TRUE(bp->remove(frame.removed));
          for (const Id id : frame.removed) objects.erase(id);
          for (std::size_t k = 0; k < frame.moved.size(); ++k) {
            const Box3d d = far(frame.moved_boxes[k]);
            ASSERT_TRUE(stage(false, frame.moved[k], d, {}, {}));
            objects.at(frame.moved[k]).box = d;
          }
          for (std::size_t k = 0; k < frame.added.size(); ++k) {
            const Box3d d = far(frame.added_boxes[k]);
            const Motion motion = frame.added_is_static(k) ? Motion::kStatic : Motion::kDynamic;
            ASSERT_TRUE(stage(true, frame.added[k], d, frame.added_filter(k), motion));
            objects[frame.added[k]] = Object{d, frame.added_filter(k), motion};
          }
          ASSERT_TRUE(bp->set_filter(frame.filtered, frame.filters));
          for (std::size_t k = 0; k < frame.filtered.size(); ++k)
            objects.at(frame.filtered[k]).filter = frame.filters[k];
          const FrameDelta& delta = bp->update();
          ASSERT_TRUE(delta.status);
          std::vector<Pair> expected;
          for (auto a = objects.begin(); a != objects.end(); ++a) {
            for (auto b = std::next(a); b != objects.end(); ++b) {
              bool meet = true;
              for (int k = 0; k < dims; ++k) {
                meet = meet &&
                       !(a->second.box.min[k] > b->second.box.max[k] || b->second.box.min[k] > a->second.box.max[k]);
              }
              if (meet && may_pair(a->second.filter, a->second.motion, b->second.filter, b->second.motion)) {
                expected.push_back(Pair{a->first, b->first});
              }
            }
          }
          std::vector<Pair> got;
          bp->sorted_pairs(got);
          if (exact) {
            ASSERT_EQ(got, expected) << "frame " << f;
          } else {
            ASSERT_TRUE(oracle::minus(expected, got).empty()) << "frame " << f << ": a pair of the doubles lost";
          }
          ASSERT_EQ(std::vector<Pair>(delta.created.begin(), delta.created.end()), oracle::minus(got, before))
              << "frame " << f;
          ASSERT_EQ(std::vector<Pair>(delta.deleted.begin(), delta.deleted.end()), oracle::minus(before, got))
              << "frame " << f;
        }
        ASSERT_TRUE(bp->validate());
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, LargeWorldKinds,
                         ::testing::Combine(::testing::ValuesIn(any_box_algorithms()),
                                            ::testing::ValuesIn(testgen::kAllTraceKinds)),
                         [](const auto& param_info) {
                           return testgen::algorithm_and_kind_name(std::get<0>(param_info.param),
                                                                   std::get<1>(param_info.param));
                         });

TEST(LargeWorld, RoundsOutwardRelativeToTheOrigin) {
  auto bp = BroadPhase::create("sap");
  const double x = 1e12 + 0.25;  // float resolves 131072 here
  ASSERT_TRUE(bp->add(1, Box3d{{x, 0, 0}, {x + 1, 1, 1}}));
  bp->update();
  const Box3 kept = *bp->box(1);
  EXPECT_LE(double(kept.min[0]), x);
  EXPECT_GE(double(kept.max[0]), x + 1);
  EXPECT_EQ(kept.min[0], round_down(x));
  // Relative to an origin at 1e12 the box is held to the float's precision.
  ASSERT_TRUE(bp->shift_origin({1e12, 0, 0}));
  EXPECT_EQ(bp->box(1), kept);  // until the next update()
  bp->update();
  EXPECT_EQ(bp->box(1), (Box3{{0.25f, 0, 0}, {1.25f, 1, 1}}));
  EXPECT_EQ(bp->exact_box(1), (Box3d{{x, 0, 0}, {x + 1, 1, 1}}));
}

// An origin set before any object lives (a new world, or one emptied)
// re-expresses nothing: the frame's boxes are staged relative to it. It
// still goes with the frame: a frame refused over its pair budget leaves
// the origin as it was.
TEST(LargeWorld, AnOriginSetInAnEmptyWorld) {
  auto bp = BroadPhase::create("sap", Options{.max_pairs = 1});
  const double x = 1e12;
  ASSERT_TRUE(bp->shift_origin({x, 0, 0}));
  const Id ids[] = {1, 2, 3};
  const Box3d boxes[] = {{{x, 0, 0}, {x + 1, 1, 1}}, {{x + 1, 0, 0}, {x + 2, 1, 1}}, {{x + 2, 0, 0}, {x + 3, 1, 1}}};
  ASSERT_TRUE(bp->add(ids, boxes));
  EXPECT_EQ(bp->update().status.code(), StatusCode::kPairBudget);  // 2 pairs over a budget of 1
  EXPECT_EQ(bp->origin(), (std::array<double, 3>{0, 0, 0}));
  EXPECT_EQ(bp->size(), 0u);
  ASSERT_TRUE(bp->shift_origin({x, 0, 0}));
  ASSERT_TRUE(bp->add(std::span(ids).first(2), std::span(boxes).first(2)));
  ASSERT_TRUE(bp->add(3, Box3{{2.5f, 0, 0}, {3, 1, 1}}));  // a float box, relative to the new origin
  const FrameDelta& first = bp->update();
  ASSERT_TRUE(first.status);
  EXPECT_EQ(std::vector<Pair>(first.created.begin(), first.created.end()), (std::vector<Pair>{{1, 2}}));
  EXPECT_EQ(bp->origin(), (std::array<double, 3>{x, 0, 0}));
  EXPECT_EQ(bp->box(2), (Box3{{1, 0, 0}, {2, 1, 1}}));
  EXPECT_EQ(bp->exact_box(3), (Box3d{{x + 2.5, 0, 0}, {x + 3, 1, 1}}));
  // Emptied, the world takes a new origin the same way.
  const Id all[] = {1, 2, 3};
  ASSERT_TRUE(bp->remove(all));
  EXPECT_EQ(bp->update().deleted.size(), 1u);
  ASSERT_TRUE(bp->shift_origin({-x, 0, 0}));
  ASSERT_TRUE(bp->add(4, Box3d{{0.5, 0, 0}, {1, 1, 1}}));
  ASSERT_TRUE(bp->add(5, Box3d{{1, 0, 0}, {2, 1, 1}}));
  EXPECT_EQ(bp->update().created.size(), 1u);
  EXPECT_EQ(bp->origin(), (std::array<double, 3>{0, 0, 0}));
  EXPECT_EQ(bp->box(4), (Box3{{0.5f, 0, 0}, {1, 1, 1}}));
}

// drop_staged() forgets the frame's operations but not a pending shift:
// the next update() applies it, and boxes staged after the drop are
// relative to the new origin.
TEST(LargeWorld, DropStagedKeepsAPendingShift) {
  auto bp = BroadPhase::create("sap");
  ASSERT_TRUE(bp->add(1, Box3d{{1000, 0, 0}, {1001, 1, 1}}));
  bp->update();
  ASSERT_TRUE(bp->shift_origin({1000, 0, 0}));
  ASSERT_TRUE(bp->add(2, Box3{{0.5f, 0, 0}, {1.5f, 1, 1}}));  // relative to the new origin
  bp->drop_staged();
  EXPECT_EQ(bp->origin(), (std::array<double, 3>{1000, 0, 0}));
  ASSERT_TRUE(bp->add(3, Box3{{0.5f, 0, 0}, {1.5f, 1, 1}}));
  const FrameDelta& d = bp->update();
  EXPECT_EQ(std::vector<Pair>(d.created.begin(), d.created.end()), (std::vector<Pair>{{1, 3}}));
  EXPECT_FALSE(bp->contains(2));
  EXPECT_EQ(bp->box(1), (Box3{{0, 0, 0}, {1, 1, 1}}));
  EXPECT_EQ(bp->exact_box(3), (Box3d{{1000.5, 0, 0}, {1001.5, 1, 1}}));
}

TEST(LargeWorld, ExactPairsPartBoxesTheRoundingJoins) {
  for (const bool exact : {false, true}) {
    auto bp = BroadPhase::create("sap", Options{.exact_pairs = exact});
    const double x = 1e12;
    ASSERT_TRUE(bp->add(1, Box3d{{x, 0, 0}, {x + 1, 1, 1}}));
    ASSERT_TRUE(bp->add(2, Box3d{{x + 2, 0, 0}, {x + 3, 1, 1}}));  // 1 apart: the same float cell
    EXPECT_EQ(bp->update().created.size(), exact ? 0u : 1u);
    std::vector<Id> hits;
    ASSERT_TRUE(bp->query(Box3{{round_down(x + 1.5), 0, 0}, {round_down(x + 1.5), 1, 1}}, hits));
    EXPECT_EQ(hits.size(), exact ? 0u : 2u);  // the query point x + 1.5 rounds down to x: exactly, box 1's min
  }
}

TEST(LargeWorld, RefusesWhatItCannotTake) {
  auto bp = BroadPhase::create("sap", Options{.dims = 2});
  EXPECT_EQ(bp->add(1, Box2d{{0, 0}, {std::nan(""), 1}}).code(), StatusCode::kInvalidBox);
  EXPECT_EQ(bp->add(1, Box2d{{2, 0}, {1, 1}}).message(), "add of id 1: invalid box: min.x > max.x");
  EXPECT_EQ(bp->shift_origin({0, 0, 1}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bp->shift_origin({INFINITY, 0, 0}).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(bp->add(1, Box2d{{1e9, 0}, {1e9 + 1, 1}}));
  EXPECT_EQ(bp->shift_origin({1e9, 0, 0}).message(),
            "shift_origin: operations or another shift are staged: shift the origin first in a frame");
  bp->update();
  ASSERT_TRUE(bp->shift_origin({1e9, 0, 0}));
  EXPECT_EQ(bp->shift_origin({1, 0, 0}).code(), StatusCode::kInvalidArgument);
  bp->update();
  EXPECT_EQ(bp->box(1), (Box3{{0, 0, 0}, {1, 1, 0}}));
}

// outward_relative() rounds two differences at once where SSE2 is at hand:
// bit for bit round_sum() of each (box.hpp, itself checked against the
// exact sum in box_test), on bounds of every scale, ones that are floats
// (their differences often floats too: the rounding's other path), signed
// zeros, infinities and differences beyond float's range.
TEST(LargeWorld, OutwardRelativeIsRoundSumBitForBit) {
  using detail::outward_relative;
  const auto bits = [](float f) { return std::bit_cast<std::uint32_t>(f); };
  Rng r(29);
  const auto bound = [&](int e) {
    switch (r.range(0, 9)) {
      case 0:
        return 0.0;
      case 1:
        return -0.0;
      case 2:
        return r.range(0, 1) != 0 ? double(INFINITY) : -double(INFINITY);
      case 3:
        return double(static_cast<float>(std::ldexp(2 * r.unit() - 1, e)));  // a float
      case 4:
        return std::ldexp(2 * r.unit() - 1, 130);  // beyond float's range
      default:
        return std::ldexp(2 * r.unit() - 1, e);
    }
  };
  int on_floats = 0;     // boxes with a difference that is a float itself: TwoSum's error term says the side
  int off_by_error = 0;  // differences whose double is a float, the real one not
  for (int i = 0; i < 200000; ++i) {
    const int e = r.range(-140, 60);
    Box3d b;
    for (int k = 0; k < 3; ++k) {
      b.min[k] = bound(e + r.range(-4, 4)), b.max[k] = bound(e + r.range(-4, 4));
      if (b.min[k] > b.max[k]) std::swap(b.min[k], b.max[k]);
    }
    std::array<double, 3> origin{};
    for (int k = 0; k < 3; ++k) {  // none, near the bounds' scale, or far below it (1 - 1e-30 is 1 in double)
      const int o = r.range(0, 3);
      origin[k] = o == 0 ? 0.0 : std::ldexp(2 * r.unit() - 1, o == 1 ? e - r.range(30, 80) : e + r.range(-8, 8));
    }
    const Box3 f = outward_relative(b, origin);
    bool on_a_float = false;
    for (int k = 0; k < 3; ++k) {
      const float lo = round_sum(b.min[k], -origin[k], false), hi = round_sum(b.max[k], -origin[k], true);
      ASSERT_EQ(bits(f.min[k]), bits(lo)) << "min " << k << ": " << b.min[k] << " - " << origin[k];
      ASSERT_EQ(bits(f.max[k]), bits(hi)) << "max " << k << ": " << b.max[k] << " - " << origin[k];
      for (const double x : {b.min[k], b.max[k]}) {
        const double d = x - origin[k];
        on_a_float |= double(float(d)) == d;
        off_by_error += double(float(d)) == d && std::isfinite(d) && d - x != -origin[k] ? 1 : 0;
      }
    }
    on_floats += on_a_float ? 1 : 0;
  }
  EXPECT_GT(on_floats, 10000);  // both sides of the rounding met often
  EXPECT_LT(on_floats, 200000 - 10000);
  EXPECT_GT(off_by_error, 10000);  // and differences only the error term places
}

TEST(LargeWorld, OutwardRelativeIsExactAtTheEdges) {
  using detail::outward_relative;
  const float big = std::numeric_limits<float>::max();
  // Differences beyond float's range: the largest float on the near side.
  const Box3 far = outward_relative(Box3d{{1e39, -1e39, 0}, {2e39, -1e38, 0}}, {0, 0, 0});
  EXPECT_EQ(far.min[0], big);
  EXPECT_EQ(far.max[0], INFINITY);
  EXPECT_EQ(far.min[1], -INFINITY);
  EXPECT_EQ(far.max[1], -1e38f);  // -1e38 rounded up: the float at or above it
  EXPECT_GE(double(far.max[1]), -1e38);
  // Infinite bounds stay infinite whatever the origin.
  const Box3 inf = outward_relative(Box3d{{-INFINITY, 0, 0}, {INFINITY, 0, 0}}, {5, 0, 0});
  EXPECT_EQ(inf.min[0], -INFINITY);
  EXPECT_EQ(inf.max[0], INFINITY);
  // 1 - 1e-30 is 1 in double: the error term says the real difference is
  // just below 1, so the max rounds up to 1 and the min down below 1.
  const Box3 tie = outward_relative(Box3d{{1, 0, 0}, {1, 0, 0}}, {1e-30, 0, 0});
  EXPECT_EQ(tie.max[0], 1.0f);
  EXPECT_EQ(tie.min[0], std::nextafter(1.0f, 0.0f));
  // Every bound holds the real difference, checked in long double (x86's
  // 64-bit mantissa), where it is exact.
  Rng r(11);
  for (int i = 0; i < 10000; ++i) {
    const int e = r.range(-20, 40);  // o within 2^8 of x's scale: x - o needs at most 62 bits
    const double x = std::ldexp(2 * r.unit() - 1, e), o = std::ldexp(2 * r.unit() - 1, e - r.range(0, 8));
    const Box3 b = outward_relative(Box3d{{x, x, x}, {x, x, x}}, {o, o, o});
    const long double real = static_cast<long double>(x) - static_cast<long double>(o);
    ASSERT_LE(static_cast<long double>(b.min[0]), real) << x << " - " << o;
    ASSERT_GE(static_cast<long double>(b.max[0]), real) << x << " - " << o;
    // and is the nearest float that does (the smallest box).
    ASSERT_GT(static_cast<long double>(std::nextafter(b.min[0], INFINITY)), real) << x << " - " << o;
    ASSERT_LT(static_cast<long double>(std::nextafter(b.max[0], -INFINITY)), real) << x << " - " << o;
  }
}

// A span of boxes is rounded with the SSE rounding mode set once: a bound
// equal to its origin (an exact zero, whose sign rounding down would turn
// to -0) and every signed zero come out as round_sum() has them, whatever
// rounding mode the caller runs in, and the caller's mode is left as it was.
TEST(LargeWorld, OutwardRelativeSpansKeepTheCallersRoundingMode) {
  using detail::outward_relative;
  const auto bits = [](float f) { return std::bit_cast<std::uint32_t>(f); };
  Rng r(31);
  const std::array<double, 3> origin{1e9 + 0.25, -3.5, 0.0};
  std::vector<Box3d> boxes;
  for (int i = 0; i < 1000; ++i) {
    Box3d b;
    for (int k = 0; k < 3; ++k) {
      const int kind = r.range(0, 3);  // the origin itself, a signed zero, or a bound near the origin
      const double x = kind == 0   ? origin[k]
                       : kind == 1 ? (r.range(0, 1) != 0 ? 0.0 : -0.0)
                                   : origin[k] + std::ldexp(2 * r.unit() - 1, r.range(-30, 10));
      const double y = r.range(0, 1) != 0 ? origin[k] : origin[k] + std::ldexp(r.unit(), r.range(-30, 10));
      b.min[k] = std::min(x, y), b.max[k] = std::max(x, y);
    }
    boxes.push_back(b);
  }
  for (const int mode : {FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO}) {
    ASSERT_EQ(std::fesetround(mode), 0);
    // Thirds of +-1 as this mode rounds them in double (fegetround() may
    // read the x87 unit's mode only, not the SSE unit's that doubles use).
    volatile double one = 1.0, three = 3.0;
    const double third = one / three, minus_third = -one / three;
    std::vector<Box3> out(boxes.size());
    outward_relative(boxes, origin, out.data());
    const double third_after = one / three, minus_third_after = -one / three;
    std::fesetround(FE_TONEAREST);
    ASSERT_EQ(third_after, third) << "mode " << mode;
    ASSERT_EQ(minus_third_after, minus_third) << "mode " << mode;
    int zeros = 0;
    for (std::size_t i = 0; i < boxes.size(); ++i) {
      for (int k = 0; k < 3; ++k) {
        const float lo = round_sum(boxes[i].min[k], -origin[k], false);
        const float hi = round_sum(boxes[i].max[k], -origin[k], true);
        ASSERT_EQ(bits(out[i].min[k]), bits(lo)) << "mode " << mode << " box " << i << " min " << k;
        ASSERT_EQ(bits(out[i].max[k]), bits(hi)) << "mode " << mode << " box " << i << " max " << k;
        zeros += (lo == 0.0f) + (hi == 0.0f);
      }
    }
    EXPECT_GT(zeros, 500);  // exact zeros met often
  }
  EXPECT_EQ(bits(outward_relative(Box3d{{5, 0, 0}, {5, 0, 0}}, {5, 0, 0}).min[0]), bits(0.0f));  // not -0
}

TEST(LargeWorld, ContactDistancesGrowTheDoubleBoxesToo) {
  for (const bool exact : {false, true}) {
    auto bp = BroadPhase::create("sap", Options{.exact_pairs = exact});
    const double x = 1e12 + 0.5;
    const Id ids[] = {1, 2};
    const Box3d boxes[] = {{{x, 0, 0}, {x + 1, 1, 1}}, {{x + 3, 0, 0}, {x + 4, 1, 1}}};
    const float distances[] = {1.0f, 1.0f};  // 2 apart: the grown boxes touch
    ASSERT_TRUE(bp->add(ids, boxes, {}, Motion::kDynamic, distances));
    EXPECT_EQ(bp->update().created.size(), 1u);
    ASSERT_TRUE(bp->shift_origin({1e12, 0, 0}));
    const FrameDelta& shifted = bp->update();
    EXPECT_TRUE(shifted.created.empty() && shifted.deleted.empty());
    EXPECT_EQ(bp->box(2), (Box3{{3.5f, 0, 0}, {4.5f, 1, 1}}));
    const float apart[] = {0.5f, 0.25f};  // 0.75 < 2: parted exactly, while float at 1e12 joins them
    ASSERT_TRUE(bp->move(ids, boxes, apart));
    EXPECT_EQ(bp->update().deleted.size(), 1u);  // relative to the origin, float holds the boxes exactly
    EXPECT_EQ(bp->contact_distance(1), 0.5f);
  }
}

}  // namespace
}  // namespace sapling
