// Rays answered by the algorithms' own structures (Algorithm::ray_cast():
// octree and multi-sap in every mode): on every trace kind of the
// differential suite in 2D and 3D, after each frame, adversarial rays give
// exactly the hits of ray_entry() on every live box (same t, each id once,
// sorted by (t, id)) and the closest hit is the least of them. The rays:
// from a live box's corner, centre or an outside point, toward another box,
// axis-aligned along shared faces and edges, with zero components, tiny or
// huge components, max_t infinite, zero or cut; origins at special values.
// And the query tree is never built for rays where the algorithm answers.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "same_as_brute.hpp"
#include "sapling/broad_phase.hpp"
#include "trace_generators.hpp"

namespace sapling {
namespace {

using testgen::Rng;

const std::vector<std::string> kAlgorithms = {"octree", "multi-sap", "multi-sap:mode=witness",
                                              "multi-sap:cells=segmented"};

float finite_or(float x, float otherwise) { return std::isfinite(x) ? x : otherwise; }

// A point of a live box: a corner, the centre, or a corner moved off it.
std::array<float, 3> point_of(Rng& r, const Box3& b) {
  std::array<float, 3> p{};
  const std::size_t how = r.below(4);
  for (int k = 0; k < 3; ++k) {
    const float lo = finite_or(b.min[k], -1e6f), hi = finite_or(b.max[k], 1e6f);
    p[k] = how == 0 ? lo : how == 1 ? hi : how == 2 ? 0.5f * lo + 0.5f * hi : lo - 1.0f;
  }
  return p;
}

Ray3 random_ray(Rng& r, const std::map<Id, Box3>& live, int dims) {
  static const std::vector<float> kSpecial = testgen::extreme_values();
  static const std::vector<float> kDirs = {0.0f, 1.0f, -1.0f, 0.5f, -2.0f, 1e-30f, -1e-7f, 3.0f, 1e30f};
  Ray3 ray;
  const auto some_box = [&] {
    auto it = live.begin();
    std::advance(it, static_cast<long>(r.below(live.size())));
    return it->second;
  };
  const std::size_t how = live.empty() ? 3 : r.below(5);
  if (how <= 1) {  // between points of two live boxes
    ray.origin = point_of(r, some_box());
    const std::array<float, 3> to = point_of(r, some_box());
    for (int k = 0; k < 3; ++k) ray.direction[k] = to[k] - ray.origin[k];
  } else if (how == 2) {  // axis-aligned from a live box's corner (along faces and edges)
    ray.origin = point_of(r, some_box());
    ray.direction = {0, 0, 0};
    ray.direction[r.below(static_cast<std::size_t>(dims))] = r.chance(0.5) ? 1.0f : -1.0f;
  } else {
    for (int k = 0; k < 3; ++k) {
      ray.origin[k] = how == 3 ? r.pick(std::span<const float>(kSpecial)) : static_cast<float>(r.range(-4, 40));
      ray.direction[k] = r.pick(std::span<const float>(kDirs)) * (r.chance(0.5) ? 1.0f : -1.0f);
    }
  }
  if (dims == 2) ray.origin[2] = ray.direction[2] = 0.0f;
  for (int k = 0; k < 3; ++k) {
    if (!std::isfinite(ray.direction[k])) ray.direction[k] = 0.0f;
  }
  if (ray.direction == std::array<float, 3>{0, 0, 0}) ray.direction[0] = 1.0f;
  const std::size_t m = r.below(4);
  ray.max_t = m <= 1 ? testgen::kInf : m == 2 ? 0.0f : static_cast<float>(r.range(0, 20)) * 0.25f;
  return ray;
}

std::vector<RayHit> brute(const std::map<Id, Box3>& live, const Ray3& ray) {
  std::vector<RayHit> hits;
  for (const auto& [id, box] : live) {
    if (float t = 0; ray_entry(ray, box, t)) hits.push_back(RayHit{id, t});
  }
  std::sort(hits.begin(), hits.end());
  return hits;
}

std::string ray_text(const Ray3& r) {
  std::ostringstream os;
  os << "ray " << r.origin[0] << " " << r.origin[1] << " " << r.origin[2] << " dir " << r.direction[0] << " "
     << r.direction[1] << " " << r.direction[2] << " max_t " << r.max_t;
  return os.str();
}

class AlgorithmRayTest : public ::testing::TestWithParam<std::string> {};

TEST_P(AlgorithmRayTest, SameAsEveryBox) {
  for (const testgen::TraceKind kind : testgen::kAllTraceKinds) {
    for (const int dims : {2, 3}) {
      SCOPED_TRACE(std::string(testgen::trace_kind_name(kind)) + " " + std::to_string(dims) + "d");
      const Trace trace = testgen::make_trace(kind, testgen::GenParams{.dims = dims, .seed = 5});
      auto bp = BroadPhase::create(GetParam(), Options{.dims = dims});
      ASSERT_NE(bp, nullptr);
      std::map<Id, Box3> live;
      Rng r(static_cast<std::uint64_t>(dims) * 131 + static_cast<std::uint64_t>(kind));
      std::vector<RayHit> hits;
      std::optional<RayHit> closest;
      for (std::size_t f = 0; f < trace.frames.size(); ++f) {
        const TraceFrame& frame = trace.frames[f];
        ASSERT_TRUE(bp->remove(frame.removed).ok());
        ASSERT_TRUE(testgen::stage_boxes(*bp, false, dims, frame.moved, frame.moved_boxes).ok());
        ASSERT_TRUE(testgen::stage_boxes(*bp, true, dims, frame.added, frame.added_boxes).ok());
        bp->update();
        for (const Id id : frame.removed) live.erase(id);
        for (std::size_t i = 0; i < frame.moved.size(); ++i) live[frame.moved[i]] = frame.moved_boxes[i];
        for (std::size_t i = 0; i < frame.added.size(); ++i) live[frame.added[i]] = frame.added_boxes[i];
        if (dims == 2) {
          for (auto& [id, b] : live) b.min[2] = b.max[2] = 0.0f;
        }
        for (int k = 0; k < 3; ++k) {
          const Ray3 ray = random_ray(r, live, dims);
          const std::vector<RayHit> expected = brute(live, ray);
          ASSERT_TRUE(bp->ray_cast(ray, hits).ok());
          ASSERT_EQ(hits, expected) << "frame " << f << " " << ray_text(ray);
          ASSERT_TRUE(bp->ray_cast_closest(ray, closest).ok());
          ASSERT_EQ(closest, expected.empty() ? std::nullopt : std::optional<RayHit>(expected.front()))
              << "frame " << f << " " << ray_text(ray);
        }
      }
    }
  }
}

// Closest hits among ties: boxes entered at the same t, the least id wins,
// whatever the order the structure meets them in.
TEST_P(AlgorithmRayTest, ClosestTiesTakeTheLeastId) {
  auto bp = BroadPhase::create(GetParam());
  ASSERT_NE(bp, nullptr);
  std::vector<Id> ids;
  std::vector<Box3> boxes;
  // A wall of unit boxes at x = 10, all entered at t = 10, ids from high to
  // low along y; and big boxes spanning many cells entered at the same t.
  for (int y = 0; y < 40; ++y) {
    ids.push_back(static_cast<Id>(1000 - y));
    boxes.push_back(Box3{{10, float(y) - 20, -1}, {11, float(y) - 19, 1}});
  }
  ids.push_back(5000);
  boxes.push_back(Box3{{10, -100, -100}, {500, 100, 100}});
  ids.push_back(7);
  boxes.push_back(Box3{{10, -0.5f, -0.5f}, {10, 0.5f, 0.5f}});  // flat, on the wall's face
  ASSERT_TRUE(bp->add(ids, boxes).ok());
  bp->update();
  std::optional<RayHit> hit;
  ASSERT_TRUE(bp->ray_cast_closest(Ray3{{0, 0, 0}, {1, 0, 0}}, hit).ok());
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(*hit, (RayHit{7, 10.0f}));
  // Along the shared face y = 0 between ids 980 and 981 (both met at t = 10).
  ASSERT_TRUE(bp->ray_cast_closest(Ray3{{0, 0, 0.25f}, {1, 0, 0}}, hit).ok());
  EXPECT_EQ(*hit, (RayHit{7, 10.0f}));
  ASSERT_TRUE(bp->ray_cast_closest(Ray3{{0, 10.5f, 0}, {1, 0, 0}}, hit).ok());
  EXPECT_EQ(*hit, (RayHit{970, 10.0f}));
  // From inside everything on that row: t = 0 for all three.
  ASSERT_TRUE(bp->ray_cast_closest(Ray3{{10.5f, 10.5f, 0}, {-1, 0, 0}}, hit).ok());
  EXPECT_EQ(*hit, (RayHit{970, 0.0f}));
  std::vector<RayHit> hits;
  ASSERT_TRUE(bp->ray_cast(Ray3{{0, 0, 0}, {-1, 0, 0}}, hits).ok());
  EXPECT_TRUE(hits.empty());  // pointing away
}

// Rays on an algorithm with a structure for them never build the query
// tree: memory does not grow; on brute, which has none, it does.
TEST_P(AlgorithmRayTest, NoQueryTreeForRays) {
  for (const std::string& name : {GetParam(), std::string("brute")}) {
    auto bp = BroadPhase::create(name);
    ASSERT_NE(bp, nullptr);
    std::vector<Id> ids;
    std::vector<Box3> boxes;
    Rng r(3);
    for (Id id = 0; id < 2000; ++id) {
      ids.push_back(id);
      boxes.push_back(testgen::uniform_box(r, 100));
    }
    ASSERT_TRUE(bp->add(ids, boxes).ok());
    bp->update();
    const std::size_t before = bp->memory_bytes();
    std::vector<RayHit> hits;
    std::optional<RayHit> hit;
    for (int k = 0; k < 50; ++k) {
      const Ray3 ray{{float(r.range(0, 100)), float(r.range(0, 100)), -1}, {0.25f, -0.5f, 1}};
      ASSERT_TRUE(bp->ray_cast(ray, hits).ok());
      ASSERT_TRUE(bp->ray_cast_closest(ray, hit).ok());
    }
    if (name == "brute") {
      EXPECT_GT(bp->memory_bytes(), before);
    } else {
      EXPECT_EQ(bp->memory_bytes(), before) << name;
    }
  }
}

std::string param_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

INSTANTIATE_TEST_SUITE_P(Structures, AlgorithmRayTest, ::testing::ValuesIn(kAlgorithms), param_name);

}  // namespace
}  // namespace sapling
