// Reads from many threads at once (broad_phase.hpp, "Threads"): between
// updates, six reader threads hammer region queries, rays, closest hits,
// their batched forms, contains() and pairs() on one broad phase, and every
// answer is compared with the oracle's (oracle.hpp). Every registered
// algorithm runs, so both paths are crossed: algorithms that answer on their
// own structure (multi-sap, the octree) and those whose rays and queries go
// through the broad phase's query tree, which the first reader builds while
// the others wait for it; some objects are static, filtered or have a
// contact distance. CI runs this file under ThreadSanitizer, which
// fails on any read that writes shared state. Also: the batched reads give
// the single reads' answers, in the same order, for 1, 2 and 4 threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <latch>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "oracle.hpp"
#include "sapling/broad_phase.hpp"
#include "sapling/registry.hpp"
#include "trace_generators.hpp"

namespace sapling {
namespace {

using testgen::Rng;

constexpr int kReaders = 6;
constexpr float kWorld = 30.0f;

// Same-size cubes, which every algorithm takes (unisize included).
Box3 cube(Rng& r) {
  const float x = r.uniform(0, kWorld), y = r.uniform(0, kWorld), z = r.uniform(0, kWorld);
  return Box3{{x, y, z}, {x + 1, y + 1, z + 1}};
}

Ray3 ray(Rng& r) {
  Ray3 q;
  for (int k = 0; k < 3; ++k) q.origin[k] = r.uniform(-2, kWorld + 2), q.direction[k] = r.uniform(-1, 1);
  q.direction[0] += 0.01f;  // never zero
  q.max_t = r.below(3) == 0 ? r.uniform(1, 20) : std::numeric_limits<float>::infinity();
  return q;
}

// One frame's questions and the oracle's answers.
struct Questions {
  std::vector<Box3> boxes;
  std::vector<std::uint32_t> box_masks;
  std::vector<std::vector<Id>> box_answers;
  std::vector<Ray3> rays;
  std::vector<std::vector<RayHit>> ray_answers;
  std::vector<Pair> pairs;  // sorted
  std::vector<Id> probes;   // ids to ask contains() about
  std::vector<bool> probe_answers;
};

Questions ask(Rng& r, const oracle::World& world, Id id_limit) {
  Questions q;
  for (int i = 0; i < 40; ++i) {
    Box3 b = cube(r);
    for (int k = 0; k < 3; ++k) b.max[k] += r.uniform(0, 6);
    q.boxes.push_back(b);
    q.box_masks.push_back(r.below(3) == 0 ? 2u : kAllCategories);
    q.box_answers.push_back(world.query(b, q.box_masks.back()));
  }
  for (int i = 0; i < 40; ++i) {
    q.rays.push_back(ray(r));
    q.ray_answers.push_back(world.ray_cast(q.rays.back()));
  }
  q.pairs = world.pairs();
  for (int i = 0; i < 40; ++i) {
    q.probes.push_back(static_cast<Id>(r.below(id_limit)));
    q.probe_answers.push_back(world.contains(q.probes.back()));
  }
  return q;
}

// One reader's pass over the frame's questions, in its own order; the
// number of wrong answers.
int read_and_check(const BroadPhase& bp, const Questions& q, unsigned seed) {
  Rng r(seed);
  int wrong = 0;
  std::vector<Id> ids;
  std::vector<RayHit> hits;
  std::vector<std::size_t> offsets;
  std::optional<RayHit> closest;
  for (int round = 0; round < 3; ++round) {
    for (std::size_t n = 0; n < q.boxes.size(); ++n) {
      const std::size_t i = r.below(q.boxes.size());
      wrong += !bp.query(q.boxes[i], ids, q.box_masks[i]).ok() || ids != q.box_answers[i];
      const std::size_t j = r.below(q.rays.size());
      wrong += !bp.ray_cast(q.rays[j], hits).ok() || hits != q.ray_answers[j];
      wrong += !bp.ray_cast_closest(q.rays[j], closest).ok() ||
               closest != (q.ray_answers[j].empty() ? std::nullopt : std::optional(q.ray_answers[j].front()));
      const std::size_t k = r.below(q.probes.size());
      wrong += bp.contains(q.probes[k]) != q.probe_answers[k];
    }
    // The batches, all at once: the one that finds the task system busy
    // answers on this thread.
    wrong += !bp.ray_cast_many(q.rays, hits, offsets).ok();
    for (std::size_t j = 0; j < q.rays.size(); ++j) {
      wrong += !std::equal(hits.begin() + std::ptrdiff_t(offsets[j]), hits.begin() + std::ptrdiff_t(offsets[j + 1]),
                           q.ray_answers[j].begin(), q.ray_answers[j].end());
    }
    wrong += !bp.query_many(q.boxes, ids, offsets).ok();
    std::vector<Pair> pairs(bp.pairs().begin(), bp.pairs().end());
    std::sort(pairs.begin(), pairs.end());
    wrong += pairs != q.pairs;
  }
  return wrong;
}

class ConcurrentReads : public ::testing::TestWithParam<std::string> {};

TEST_P(ConcurrentReads, EveryAnswerIsTheOraclesWhileSixThreadsRead) {
  Options options;
  options.threads = 2;  // the batches run on the pool while single reads run beside them
  auto bp = BroadPhase::create(GetParam(), options);
  ASSERT_NE(bp, nullptr);
  oracle::World world;
  Rng r(0x5eed0000u + static_cast<unsigned>(GetParam().size()));
  constexpr Id kIds = 900;
  std::vector<bool> live(kIds, false);
  for (int frame = 0; frame < 8; ++frame) {
    // A frame of adds (a few static, a few filtered), moves and removals.
    for (Id id = 0; id < kIds; ++id) {
      const std::uint64_t roll = r.below(10);
      if (!live[id] && roll < 4) {
        const Box3 b = cube(r);
        const Filter f = r.below(4) == 0 ? Filter{2, kAllCategories} : Filter{};
        const Motion m = r.below(8) == 0 ? Motion::kStatic : Motion::kDynamic;
        // Some with a contact distance: pairs of the grown boxes, reads on the boxes as given
        // (not for unisize, which takes boxes of one size only).
        const float d = r.below(5) == 0 && GetParam() != "unisize" ? r.uniform(0, 1.5) : 0.0f;
        ASSERT_TRUE(bp->add(id, b, f, m, d).ok());
        world.add(id, b, f, m, d);
        live[id] = true;
      } else if (live[id] && roll < 5) {
        ASSERT_TRUE(bp->remove(id).ok());
        world.remove(id);
        live[id] = false;
      } else if (live[id] && roll < 8) {
        const Box3 b = cube(r);
        ASSERT_TRUE(bp->move(id, b).ok());
        world.move(id, b);
      }
    }
    ASSERT_TRUE(bp->update().status.ok());
    const Questions q = ask(r, world, kIds + 10);
    std::latch start(kReaders);
    std::atomic<int> wrong{0};
    std::vector<std::thread> readers;
    for (int t = 0; t < kReaders; ++t) {
      readers.emplace_back([&, t] {
        start.arrive_and_wait();
        wrong += read_and_check(*bp, q, static_cast<unsigned>(frame * kReaders + t));
      });
    }
    for (std::thread& t : readers) t.join();
    ASSERT_EQ(wrong.load(), 0) << GetParam() << ", frame " << frame;
  }
}

std::vector<std::string> algorithm_names() {
  std::vector<std::string> names;
  for (const AlgorithmInfo& info : algorithms()) names.push_back(info.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(EveryAlgorithm, ConcurrentReads, ::testing::ValuesIn(algorithm_names()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// The batched reads against the single ones, for 1, 2 and 4 threads: the
// same answers in the same order (the tasks depend on the batch alone).
TEST(BatchedReads, AnswerAsTheSingleReadsForAnyThreadCount) {
  Rng r(77);
  std::vector<Id> ids;
  std::vector<Box3> boxes;
  for (Id id = 0; id < 3000; ++id) ids.push_back(id), boxes.push_back(cube(r));
  std::vector<Box3> queries;
  std::vector<Ray3> rays;
  for (int i = 0; i < 700; ++i) {  // more than one task's worth, not a multiple of it
    Box3 b = cube(r);
    b.max[0] += 3;
    queries.push_back(b);
    rays.push_back(ray(r));
  }
  for (const std::string name : {"sap", "multi-sap", "auto"}) {
    std::vector<Id> want_ids;
    std::vector<std::size_t> want_offsets{0};
    std::vector<RayHit> want_hits, want_closest;
    std::vector<std::size_t> want_hit_offsets{0}, want_closest_offsets{0};
    for (const unsigned threads : {1u, 2u, 4u}) {
      Options options;
      options.threads = threads;
      auto bp = BroadPhase::create(name, options);
      ASSERT_TRUE(bp->add(ids, boxes).ok());
      bp->update();
      if (threads == 1) {  // the single reads, one after another
        std::vector<Id> one;
        std::vector<RayHit> hits;
        std::optional<RayHit> hit;
        for (const Box3& q : queries) {
          ASSERT_TRUE(bp->query(q, one).ok());
          want_ids.insert(want_ids.end(), one.begin(), one.end());
          want_offsets.push_back(want_ids.size());
        }
        for (const Ray3& q : rays) {
          ASSERT_TRUE(bp->ray_cast(q, hits).ok());
          want_hits.insert(want_hits.end(), hits.begin(), hits.end());
          want_hit_offsets.push_back(want_hits.size());
          ASSERT_TRUE(bp->ray_cast_closest(q, hit).ok());
          if (hit) want_closest.push_back(*hit);
          want_closest_offsets.push_back(want_closest.size());
        }
        ASSERT_GT(want_ids.size(), queries.size());  // the batch is not trivially empty
        ASSERT_GT(want_hits.size(), rays.size());
      }
      std::vector<Id> got_ids{42};  // replaced, not appended to
      std::vector<RayHit> got_hits;
      std::vector<std::size_t> got_offsets{7};
      ASSERT_TRUE(bp->query_many(queries, got_ids, got_offsets).ok());
      EXPECT_EQ(got_ids, want_ids) << name << ", " << threads << " threads";
      EXPECT_EQ(got_offsets, want_offsets) << name << ", " << threads << " threads";
      ASSERT_TRUE(bp->ray_cast_many(rays, got_hits, got_offsets).ok());
      EXPECT_EQ(got_hits, want_hits) << name << ", " << threads << " threads";
      EXPECT_EQ(got_offsets, want_hit_offsets) << name << ", " << threads << " threads";
      ASSERT_TRUE(bp->ray_cast_closest_many(rays, got_hits, got_offsets).ok());
      EXPECT_EQ(got_hits, want_closest) << name << ", " << threads << " threads";
      EXPECT_EQ(got_offsets, want_closest_offsets) << name << ", " << threads << " threads";
    }
  }
}

// The query tree (src/core/broad_phase/query_tree.hpp): built by the first
// read, kept current by update() while reads use it (a few moves refit
// along their paths, frames where everything moves refit whole and then
// rebuild when the quality has gone), dropped after 32 frames that change
// it with no read, built again by the next read.
TEST(QueryTree, FollowsTheFramesWhileReadAndGoesWhenIdle) {
  auto bp = BroadPhase::create("sap");
  oracle::World world;
  Rng r(5);
  for (Id id = 0; id < 2000; ++id) {
    const Box3 b = cube(r);
    ASSERT_TRUE(bp->add(id, b).ok());
    world.add(id, b);
  }
  bp->update();
  std::vector<RayHit> hits;
  for (int frame = 0; frame < 40; ++frame) {  // a ray every frame: the tree follows each one
    for (int k = 0; k < 20; ++k) {
      const Id id = static_cast<Id>(r.below(2000));
      const Box3 b = cube(r);
      if (bp->move(id, b).ok()) world.move(id, b);
    }
    bp->update();
    const Ray3 q = ray(r);
    ASSERT_TRUE(bp->ray_cast(q, hits).ok());
    ASSERT_EQ(hits, world.ray_cast(q)) << "frame " << frame;
  }
  for (int frame = 0; frame < 4; ++frame) {  // everything moves: refit whole, then the quality check
    std::vector<Id> ids;
    std::vector<Box3> boxes;
    for (Id id = 0; id < 2000; ++id) ids.push_back(id), boxes.push_back(cube(r));
    ASSERT_TRUE(bp->move(ids, boxes).ok());
    for (Id id = 0; id < 2000; ++id) world.move(id, boxes[id]);
    bp->update();
    const Ray3 q = ray(r);
    ASSERT_TRUE(bp->ray_cast(q, hits).ok());
    ASSERT_EQ(hits, world.ray_cast(q)) << "mass frame " << frame;
    std::vector<Id> found;
    const Box3 region{{0, 0, 0}, {10, 10, 10}};
    ASSERT_TRUE(bp->query(region, found).ok());
    ASSERT_EQ(found, world.query(region)) << "mass frame " << frame;
  }
  std::size_t before_last = 0;
  // The first frame follows the reads before it; 32 more with no read
  // between them drop the tree.
  for (int frame = 0; frame < 33; ++frame) {
    before_last = bp->memory_bytes();
    const Id id = static_cast<Id>(r.below(2000));
    const Box3 b = cube(r);
    ASSERT_TRUE(bp->move(id, b).ok());
    world.move(id, b);
    bp->update();
  }
  const std::size_t dropped = bp->memory_bytes();
  EXPECT_LT(dropped + 2000 * 40, before_last);  // the tree: over 40 bytes a box
  const Ray3 q = ray(r);
  ASSERT_TRUE(bp->ray_cast(q, hits).ok());
  EXPECT_EQ(hits, world.ray_cast(q));
  EXPECT_GT(bp->memory_bytes(), dropped + 2000 * 40);
}

TEST(BatchedReads, RefuseWholeNamingTheFirstBadElement) {
  auto bp = BroadPhase::create("sap");
  ASSERT_TRUE(bp->add(1, Box3{{0, 0, 0}, {1, 1, 1}}).ok());
  bp->update();
  std::vector<RayHit> hits{{9, 0.0f}};
  std::vector<std::size_t> offsets{0, 1};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<Ray3> rays{Ray3{{-1, 0.5f, 0.5f}, {1, 0, 0}}, Ray3{{-1, 0, 0}, {1, 0, 0}},
                               Ray3{{-1, 0, 0}, {0, 0, 0}}, Ray3{{nan, 0, 0}, {1, 0, 0}}};
  Status s = bp->ray_cast_many(rays, hits, offsets);
  EXPECT_EQ(s.code(), StatusCode::kInvalidRay);
  EXPECT_EQ(s.operation(), Operation::kRayCastMany);
  EXPECT_EQ(s.index(), 2u);
  EXPECT_EQ(s.message(), "ray_cast_many: ray 2: invalid ray: the direction is zero");
  EXPECT_TRUE(hits.empty());
  EXPECT_TRUE(offsets.empty());
  s = bp->ray_cast_closest_many(std::span(rays).subspan(3), hits, offsets);
  EXPECT_EQ(s.index(), 0u);
  EXPECT_EQ(s.message(), "ray_cast_many: ray 0: invalid ray: origin.x is NaN or infinite");
  // A 2D broad phase refuses a ray that leaves its plane, by index.
  Options flat;
  flat.dims = 2;
  auto bp2 = BroadPhase::create("sap", flat);
  s = bp2->ray_cast_many(std::span(rays).first(2), hits, offsets);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "ray_cast_many: ray 0: the ray leaves the plane z = 0 of a 2D broad phase");
  // Empty batches answer empty, with one offset.
  ASSERT_TRUE(bp->ray_cast_many({}, hits, offsets).ok());
  EXPECT_TRUE(hits.empty());
  EXPECT_EQ(offsets, std::vector<std::size_t>{0});
}

}  // namespace
}  // namespace sapling
