// Tests of the persistent sweep-and-prune (src/algorithms/sap/sap.cpp), beyond
// the differential tests every registered algorithm gets:
// - randomized operation sequences (adds, moves, removes and updates
//   interleaved, coordinates snapped to a grid so that ties, touching faces
//   and zero-width boxes are common), each frame checked against brute
//   force and against the algorithm's own validate(); seeds are printed on
//   failure;
// - the closed-interval edge cases one by one: ties, touching boxes,
//   identical boxes, point boxes, -0/+0, infinities, FLT_MAX;
// - the paths of the algorithm, which its counters expose: swaps, batch
//   insertion into a populated world, batch removal, removal of everything,
//   the switch to recomputation when most boxes move far and back when they
//   calm down, and an incremental attempt abandoned midway.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/sap/sap.hpp"
#include "sapling/broad_phase.hpp"
#include "scenarios/scenario.hpp"
#include "store_driver.hpp"
#include "trace_generators.hpp"

namespace sapling {
namespace {

using detail::SapCounters;
using detail::SweepAndPrune;

constexpr float kInf = std::numeric_limits<float>::infinity();

Box3 cube(float x, float y, float z, float size) { return Box3{{x, y, z}, {x + size, y + size, z + size}}; }

std::string show(const std::vector<Pair>& pairs) {
  std::ostringstream os;
  for (std::size_t i = 0; i < pairs.size() && i < 8; ++i) os << " {" << pairs[i].a << "," << pairs[i].b << "}";
  if (pairs.size() > 8) os << " ... (" << pairs.size() << ")";
  return os.str();
}

// A sap broad phase and a brute one fed the same calls; every update()
// compares the deltas and pair sets, and validates the sap.
class Twin {
 public:
  // `reference`: brute force, or where the world is too large for it an
  // algorithm held to brute force by its own tests.
  explicit Twin(int dims = 3, bool walk_only = false, bool batch_only = false, const char* reference = "brute")
      : options_{.dims = dims} {
    bp_ = BroadPhase::create(
        "sap",
        [this, walk_only, batch_only](const Options& o) {
          auto sap = std::make_unique<SweepAndPrune>(o);
          sap->set_walk_only(walk_only);
          sap->set_batch_only(batch_only);
          sap_ = sap.get();
          return std::unique_ptr<Algorithm>(std::move(sap));
        },
        options_);
    ref_ = BroadPhase::create(reference, options_);
  }

  void add(Id id, const Box3& b) { add(std::vector<Id>{id}, std::vector<Box3>{b}); }
  void move(Id id, const Box3& b) { move(std::vector<Id>{id}, std::vector<Box3>{b}); }
  void remove(Id id) { remove(std::vector<Id>{id}); }

  void add(const std::vector<Id>& ids, const std::vector<Box3>& boxes) {
    ASSERT_TRUE(stage(Operation::kAdd, ids, boxes));
    for (std::size_t i = 0; i < ids.size(); ++i) live_[ids[i]] = boxes[i];
  }
  void move(const std::vector<Id>& ids, const std::vector<Box3>& boxes) {
    ASSERT_TRUE(stage(Operation::kMove, ids, boxes));
    for (std::size_t i = 0; i < ids.size(); ++i) live_[ids[i]] = boxes[i];
  }
  void remove(const std::vector<Id>& ids) {
    ASSERT_TRUE(stage(Operation::kRemove, ids, {}));
    for (const Id id : ids) live_.erase(id);
  }

  // Runs one frame on both; "" if they agree and the sap validates.
  std::string update() {
    const FrameDelta& d = bp_->update();
    const std::vector<Pair> created(d.created.begin(), d.created.end()), deleted(d.deleted.begin(), d.deleted.end());
    const FrameDelta& r = ref_->update();
    std::string e;
    if (created != std::vector<Pair>(r.created.begin(), r.created.end()))
      e += "created:" + show(created) + " expected" + show({r.created.begin(), r.created.end()}) + "\n";
    if (deleted != std::vector<Pair>(r.deleted.begin(), r.deleted.end()))
      e += "deleted:" + show(deleted) + " expected" + show({r.deleted.begin(), r.deleted.end()}) + "\n";
    std::vector<Pair> mine, theirs;
    bp_->sorted_pairs(mine);
    ref_->sorted_pairs(theirs);
    if (mine != theirs) e += "pairs:" + show(mine) + " expected" + show(theirs) + "\n";
    if (!bp_->validate()) e += "validate() failed\n";
    return e;
  }

  std::vector<Pair> pairs() const {
    std::vector<Pair> out;
    bp_->sorted_pairs(out);
    return out;
  }
  const SapCounters& counters() const { return sap_->counters(); }
  SweepAndPrune& sap() { return *sap_; }
  const std::map<Id, Box3>& live() const { return live_; }
  const BroadPhase& broad_phase() const { return *bp_; }

 private:
  bool stage(Operation op, const std::vector<Id>& ids, const std::vector<Box3>& boxes) {
    for (BroadPhase* bp : {bp_.get(), ref_.get()}) {
      Status s;
      if (op == Operation::kRemove) {
        s = bp->remove(ids);
      } else if (options_.dims == 3) {
        s = op == Operation::kAdd ? bp->add(ids, boxes) : bp->move(ids, boxes);
      } else {
        std::vector<Box2> flat;
        for (const Box3& b : boxes) flat.push_back(Box2{{b.min[0], b.min[1]}, {b.max[0], b.max[1]}});
        s = op == Operation::kAdd ? bp->add(ids, flat) : bp->move(ids, flat);
      }
      if (!s) {
        ADD_FAILURE() << s.message();
        return false;
      }
    }
    return true;
  }

  Options options_;
  SweepAndPrune* sap_ = nullptr;
  std::unique_ptr<BroadPhase> bp_, ref_;
  std::map<Id, Box3> live_;
};

#define EXPECT_FRAME(twin)                  \
  do {                                      \
    const std::string e_ = (twin).update(); \
    EXPECT_TRUE(e_.empty()) << e_;          \
  } while (0)

// ---------------------------------------------------------------------------
// Randomized operation sequences.

struct RandomWorld {
  int dims = 3;
  int grid = 40;             // coordinates are integers in [0, grid)
  int max_size = 4;          // box extents are integers in [0, max_size]
  std::size_t target = 200;  // live boxes the world drifts towards
  double move_fraction = 0.1;
  int step = 1;            // largest displacement of a move, per axis
  double teleport = 0.02;  // chance a move jumps anywhere
  double churn = 0.02;     // fraction added and removed per frame
  int frames = 40;
  bool walk_only = false;     // every frame on the walk, however far the boxes move
  bool batch_only = false;    // every frame by the single-pass batch update
  bool batch_mixed = false;   // frames by the batch update or the policy's path, at random
  bool search_mixed = false;  // frames by the resting set's searches or the policy's path, at random
};

Box3 random_box(testgen::Rng& rng, const RandomWorld& w) {
  Box3 b;
  for (int k = 0; k < 3; ++k) {
    b.min[k] = static_cast<float>(rng.range(0, w.grid - 1));
    b.max[k] = b.min[k] + static_cast<float>(rng.range(0, w.max_size));
  }
  return b;
}

Box3 nudge(testgen::Rng& rng, const RandomWorld& w, const Box3& b) {
  if (rng.chance(w.teleport)) return random_box(rng, w);
  Box3 out = b;
  for (int k = 0; k < 3; ++k) {
    const float d = static_cast<float>(rng.range(-w.step, w.step));
    out.min[k] += d;
    out.max[k] += d;
    if (rng.chance(0.1)) out.max[k] = out.min[k] + static_cast<float>(rng.range(0, w.max_size));  // resize
  }
  return out;
}

// Runs one random world; "" on success, else the first failing frame.
std::string run_world(const RandomWorld& w, std::uint64_t seed, SapCounters* counters) {
  testgen::Rng rng(seed);
  Twin twin(w.dims, w.walk_only, w.batch_only);
  Id next_id = static_cast<Id>(rng.below(1000));
  for (int f = 0; f < w.frames; ++f) {
    if (w.batch_mixed) twin.sap().set_batch_only(rng.chance(0.5));
    if (w.search_mixed) twin.sap().set_search_only(rng.chance(0.5));
    std::vector<Id> live_ids;
    for (const auto& [id, box] : twin.live()) live_ids.push_back(id);
    rng.shuffle(live_ids);
    // Removals, moves and additions on disjoint ids, staged in a random order.
    const std::size_t live = live_ids.size();
    std::size_t removes = static_cast<std::size_t>(double(live) * w.churn * 2 * rng.unit());
    if (live > w.target) removes += (live - w.target) / 4;
    if (rng.chance(0.02)) removes = live;  // everything goes
    removes = std::min(removes, live);
    const std::size_t moves =
        std::min(live - removes, static_cast<std::size_t>(double(live) * w.move_fraction * 2 * rng.unit()));
    std::size_t adds = static_cast<std::size_t>(double(w.target) * w.churn * 2 * rng.unit());
    if (live < w.target) adds += (w.target - live) / (rng.chance(0.2) ? 1 : 4);
    std::vector<Id> removed(live_ids.begin(), live_ids.begin() + static_cast<std::ptrdiff_t>(removes));
    std::vector<Id> moved(live_ids.begin() + static_cast<std::ptrdiff_t>(removes),
                          live_ids.begin() + static_cast<std::ptrdiff_t>(removes + moves));
    std::vector<Box3> moved_boxes;
    for (const Id id : moved) moved_boxes.push_back(nudge(rng, w, twin.live().at(id)));
    std::vector<Id> added;
    std::vector<Box3> added_boxes;
    for (std::size_t i = 0; i < adds; ++i) {
      added.push_back(next_id);
      next_id += 1 + static_cast<Id>(rng.below(3));
      added_boxes.push_back(random_box(rng, w));
    }
    const int order = rng.range(0, 2);
    for (int step = 0; step < 3; ++step) {
      switch ((order + step) % 3) {
        case 0:
          twin.remove(removed);
          break;
        case 1:
          twin.move(moved, moved_boxes);
          break;
        default:
          twin.add(added, added_boxes);
          break;
      }
    }
    const std::string e = twin.update();
    if (!e.empty() || ::testing::Test::HasFailure()) {
      return "frame " + std::to_string(f) + " (" + std::to_string(removes) + " removes, " + std::to_string(moves) +
             " moves, " + std::to_string(adds) + " adds): " + e;
    }
  }
  if (counters) {
    const SapCounters& c = twin.counters();
    counters->incremental_frames += c.incremental_frames;
    counters->batch_frames += c.batch_frames;
    counters->recomputed_frames += c.recomputed_frames;
    counters->aborted_walks += c.aborted_walks;
    counters->restores += c.restores;
    counters->resting_frames += c.resting_frames;
    counters->searched_drops += c.searched_drops;
    counters->one_search_frames += c.one_search_frames;
    counters->preparations += c.preparations;
    counters->swaps += c.swaps;
  }
  return "";
}

TEST(SapRandom, OperationSequencesMatchBruteForce) {
  SapCounters total;
  for (std::uint64_t seed = 1; seed <= 120; ++seed) {
    testgen::Rng pick(seed * 7919);
    RandomWorld w;
    w.dims = pick.chance(0.25) ? 2 : 3;
    w.grid = pick.range(4, 60);
    w.max_size = pick.range(0, 6);
    w.target = static_cast<std::size_t>(pick.range(2, 300));
    w.move_fraction = pick.chance(0.3) ? 1.0 : pick.unit() * 0.3;
    w.step = pick.range(0, pick.chance(0.2) ? 20 : 2);
    w.teleport = pick.chance(0.3) ? pick.unit() : 0.01;
    w.churn = pick.chance(0.5) ? 0.0 : pick.unit() * 0.2;
    w.frames = pick.range(10, 40);
    w.walk_only = seed % 5 == 0;
    w.batch_only = seed % 5 == 1;
    w.batch_mixed = seed % 5 == 2;
    w.search_mixed = seed % 5 == 3;
    const std::string e = run_world(w, seed, &total);
    ASSERT_TRUE(e.empty()) << "seed " << seed << " dims " << w.dims << " grid " << w.grid << " max_size " << w.max_size
                           << " target " << w.target << " move_fraction " << w.move_fraction << " step " << w.step
                           << " teleport " << w.teleport << " churn " << w.churn << " walk_only " << w.walk_only
                           << " batch_only " << w.batch_only << " batch_mixed " << w.batch_mixed << " search_mixed "
                           << w.search_mixed << "\n"
                           << e;
  }
  // The three paths and the switches between them were exercised.
  std::printf(
      "frames: %llu incremental, %llu resting (%llu one search, %llu pairs dropped by search, %llu preparations), "
      "%llu recomputed\n",
      static_cast<unsigned long long>(total.incremental_frames), static_cast<unsigned long long>(total.resting_frames),
      static_cast<unsigned long long>(total.one_search_frames), static_cast<unsigned long long>(total.searched_drops),
      static_cast<unsigned long long>(total.preparations), static_cast<unsigned long long>(total.recomputed_frames));
  EXPECT_GT(total.incremental_frames, 0u);
  EXPECT_GT(total.batch_frames, 0u);
  EXPECT_GT(total.resting_frames, 0u);
  EXPECT_GT(total.searched_drops, 0u);
  EXPECT_GT(total.one_search_frames, 0u);
  EXPECT_LT(total.searched_drops + total.one_search_frames, total.resting_frames);  // the scan of every pair too
  EXPECT_GT(total.preparations, 0u);
  EXPECT_GT(total.recomputed_frames, 0u);
  EXPECT_GT(total.restores, 0u);
  EXPECT_GT(total.swaps, 0u);
}

// ---------------------------------------------------------------------------
// Closed intervals, one edge case at a time.

TEST(SapEdges, TouchingFacesEdgesAndCornersOverlap) {
  Twin t;
  t.add(1, cube(0, 0, 0, 1));
  t.add(2, cube(1, 0, 0, 1));  // shares the face x = 1
  t.add(3, cube(1, 1, 1, 1));  // shares the corner (1, 1, 1)
  t.add(4, cube(2, 2, 2, 1));  // touches 3 at (2, 2, 2)
  EXPECT_FRAME(t);
  EXPECT_EQ(t.pairs(), (std::vector<Pair>{{1, 2}, {1, 3}, {2, 3}, {3, 4}}));
  // Slide 2 off by the smallest step and back, on each axis in turn.
  for (int k = 0; k < 3; ++k) {
    Box3 away = cube(1, 0, 0, 1), back = away;
    if (k == 0) away.min[0] = away.max[0] = 0, away = Box3{{std::nextafter(1.0f, 2.0f), 0, 0}, {2, 1, 1}};
    if (k == 1) away = Box3{{1, std::nextafter(1.0f, 2.0f), 0}, {2, 2, 1}};
    if (k == 2) away = Box3{{1, 0, -2}, {2, 1, std::nextafter(0.0f, -1.0f)}};
    t.move(2, away);
    EXPECT_FRAME(t);
    t.move(2, back);
    EXPECT_FRAME(t);
  }
}

TEST(SapEdges, EqualMinsAndMaxesAmongThemselves) {
  Twin t;
  // Intervals that share both ends, one end, or touch end to start.
  std::vector<Id> ids;
  std::vector<Box3> boxes;
  for (Id i = 0; i < 30; ++i) {
    ids.push_back(i);
    const float lo = static_cast<float>(i % 3), hi = lo + static_cast<float>(i % 4);
    boxes.push_back(Box3{{lo, 0, lo}, {hi, 1, hi}});
  }
  t.add(ids, boxes);
  EXPECT_FRAME(t);
  // Every box in turn moves so that its min lands on others' maxes, then its max on others' mins.
  for (Id i = 0; i < 30; ++i) {
    t.move(i, Box3{{3, 0, 3}, {5, 1, 5}});
    EXPECT_FRAME(t);
    t.move(i, Box3{{-2, 0, -2}, {0, 1, 0}});
    EXPECT_FRAME(t);
  }
}

TEST(SapEdges, IdenticalBoxes) {
  Twin t;
  std::vector<Id> ids;
  std::vector<Box3> boxes;
  for (Id i = 0; i < 60; ++i) {
    ids.push_back(i * 3);
    boxes.push_back(cube(5, 5, 5, 2));
  }
  t.add(ids, boxes);
  EXPECT_FRAME(t);
  EXPECT_EQ(t.pairs().size(), 60u * 59u / 2u);
  for (Id i = 0; i < 60; i += 7) {  // leave, come back, leave for good
    t.move(i * 3, cube(50, 5, 5, 2));
    EXPECT_FRAME(t);
    t.move(i * 3, cube(5, 5, 5, 2));
    EXPECT_FRAME(t);
    t.move(i * 3, cube(7, 7, 7, 2));  // touches the others at a corner
    EXPECT_FRAME(t);
  }
  t.move(ids, std::vector<Box3>(ids.size(), cube(7, 7, 7, 2)));  // all together elsewhere
  EXPECT_FRAME(t);
}

TEST(SapEdges, PointBoxes) {
  Twin t;
  t.add(1, Box3{{1, 1, 1}, {1, 1, 1}});
  t.add(2, Box3{{1, 1, 1}, {1, 1, 1}});  // the same point
  t.add(3, cube(0, 0, 0, 1));            // the point is its corner
  t.add(4, Box3{{1, 0, 0}, {1, 2, 2}});  // a flat box through the point
  t.add(5, Box3{{2, 2, 2}, {2, 2, 2}});
  EXPECT_FRAME(t);
  t.move(1, Box3{{2, 2, 2}, {2, 2, 2}});
  t.move(5, Box3{{1, 1, 1}, {1, 1, 1}});  // the two points swap places
  EXPECT_FRAME(t);
  t.move(4, Box3{{1, 0, 0}, {1, 0, 0}});  // shrinks to a point
  EXPECT_FRAME(t);
}

TEST(SapEdges, SignedZeros) {
  Twin t;
  t.add(1, Box3{{-1, -1, -1}, {-0.0f, -0.0f, -0.0f}});
  t.add(2, Box3{{0.0f, 0.0f, 0.0f}, {1, 1, 1}});
  t.add(3, Box3{{0.0f, -0.0f, 0.0f}, {-0.0f, 0.0f, -0.0f}});  // [+0, -0]: a point at zero
  EXPECT_FRAME(t);
  EXPECT_EQ(t.pairs(), (std::vector<Pair>{{1, 2}, {1, 3}, {2, 3}}));
  t.move(2, Box3{{-0.0f, 0.0f, -0.0f}, {1, 1, 1}});
  EXPECT_FRAME(t);
  t.move(1, Box3{{-1, -1, -1}, {-std::numeric_limits<float>::denorm_min(), 0, 0}});
  EXPECT_FRAME(t);
}

TEST(SapEdges, InfinitiesAndFltMax) {
  Twin t;
  t.add(1, Box3{{-kInf, -kInf, 0}, {kInf, kInf, 0}});  // a ground plane
  t.add(2, Box3{{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}});
  t.add(3, Box3{{kInf, kInf, kInf}, {kInf, kInf, kInf}});  // a point at +inf
  t.add(4, Box3{{-kInf, -kInf, -kInf}, {-kInf, -kInf, -kInf}});
  t.add(5, Box3{{FLT_MAX, FLT_MAX, FLT_MAX}, {kInf, kInf, kInf}});
  t.add(6, Box3{{-FLT_MAX, -FLT_MAX, -FLT_MAX}, {-FLT_MAX, -FLT_MAX, -FLT_MAX}});
  t.add(7, cube(0, 0, 0, 1));
  EXPECT_FRAME(t);
  // Boxes travel to the infinities and back.
  t.move(7, Box3{{FLT_MAX, FLT_MAX, FLT_MAX}, {FLT_MAX, FLT_MAX, FLT_MAX}});
  EXPECT_FRAME(t);
  t.move(7, Box3{{-kInf, -kInf, -kInf}, {-FLT_MAX, -FLT_MAX, -FLT_MAX}});
  t.move(3, Box3{{-kInf, -kInf, -kInf}, {-kInf, -kInf, -kInf}});
  EXPECT_FRAME(t);
  t.move(1, Box3{{-kInf, 1, -kInf}, {kInf, 1, kInf}});
  t.move(4, cube(0, 0, 0, 0));
  EXPECT_FRAME(t);
  t.remove(2);
  t.move(5, Box3{{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}});
  EXPECT_FRAME(t);
}

TEST(SapEdges, TwoDimensions) {
  Twin t(2);
  t.add(1, Box3{{0, 0, 0}, {1, 1, 0}});
  t.add(2, Box3{{1, 1, 0}, {2, 2, 0}});
  t.add(3, Box3{{3, 0, 0}, {4, 1, 0}});
  EXPECT_FRAME(t);
  t.move(3, Box3{{2, 2, 0}, {3, 3, 0}});
  EXPECT_FRAME(t);
  t.move(1, Box3{{5, 5, 0}, {6, 6, 0}});
  EXPECT_FRAME(t);
  EXPECT_EQ(t.pairs(), (std::vector<Pair>{{2, 3}}));
}

// ---------------------------------------------------------------------------
// The paths.

std::vector<Box3> scattered(std::size_t n, float world, float size, std::uint64_t seed) {
  testgen::Rng rng(seed);
  std::vector<Box3> boxes(n);
  for (Box3& b : boxes) {
    b = cube(rng.uniform(0, world), rng.uniform(0, world), rng.uniform(0, world), size);
  }
  return boxes;
}

std::vector<Id> id_range(Id first, std::size_t n) {
  std::vector<Id> ids(n);
  for (std::size_t i = 0; i < n; ++i) ids[i] = first + static_cast<Id>(i);
  return ids;
}

TEST(SapPaths, FewSmallMovesSwap) {
  Twin t;
  const std::vector<Id> ids = id_range(0, 2000);
  std::vector<Box3> boxes = scattered(2000, 40, 1.5f, 1);
  t.add(ids, boxes);
  EXPECT_FRAME(t);
  const SapCounters before = t.counters();  // the first frame may take any path
  for (int f = 0; f < 10; ++f) {
    std::vector<Id> moved;
    std::vector<Box3> moved_boxes;
    for (std::size_t i = static_cast<std::size_t>(f); i < ids.size(); i += 50) {  // 2% move a little
      boxes[i].min[f % 3] += 0.3f;
      boxes[i].max[f % 3] += 0.3f;
      moved.push_back(ids[i]);
      moved_boxes.push_back(boxes[i]);
    }
    t.move(moved, moved_boxes);
    EXPECT_FRAME(t);
  }
  EXPECT_EQ(t.counters().recomputed_frames, before.recomputed_frames);
  EXPECT_EQ(t.counters().resting_frames, before.resting_frames);
  EXPECT_EQ(t.counters().incremental_frames, before.incremental_frames + 10);
  EXPECT_GT(t.counters().swaps, 0u);
}

// Half the boxes of a world jiggle a little every frame: walking them is
// cheap and pairing them again is not, so the frames stay on the walk.
class Jiggling {
 public:
  Jiggling(Twin& t, std::size_t n, std::uint64_t seed, float world = 40, float size = 1.5f)
      : t_(t), ids_(id_range(0, n)), boxes_(scattered(n, world, size, seed)) {
    t_.add(ids_, boxes_);
    EXPECT_FRAME(t_);
    step();  // the endpoint arrays are built for the walks
    EXPECT_FRAME(t_);
  }
  // Stages this frame's jiggle: the even ids move by 0.01 along one axis.
  void step() {
    std::vector<Id> moved;
    std::vector<Box3> moved_boxes;
    const float d = frame_ % 2 ? 0.01f : -0.01f;
    const int k = frame_++ % 3;
    for (std::size_t i = 0; i < ids_.size(); i += 2) {
      boxes_[i].min[k] += d;
      boxes_[i].max[k] += d;
      moved.push_back(ids_[i]);
      moved_boxes.push_back(boxes_[i]);
    }
    t_.move(moved, moved_boxes);
  }
  const std::vector<Id>& ids() const { return ids_; }

 private:
  Twin& t_;
  std::vector<Id> ids_;
  std::vector<Box3> boxes_;
  int frame_ = 0;
};

TEST(SapPaths, EverythingMovingFarRecomputesThenCalmsDown) {
  Twin t;
  const std::vector<Id> ids = id_range(100, 3000);
  t.add(ids, scattered(3000, 40, 1.5f, 2));
  EXPECT_FRAME(t);
  for (int f = 0; f < 4; ++f) {  // every box jumps anywhere: recomputation
    t.move(ids, scattered(3000, 40, 1.5f, 10 + static_cast<std::uint64_t>(f)));
    EXPECT_FRAME(t);
  }
  // The same with a hundred removed, the others moved in reverse order: the
  // moved list (the world, pruned as it stands) is not in sap's own order.
  const std::vector<Id> gone(ids.begin(), ids.begin() + 100);
  std::vector<Id> rest(ids.begin() + 100, ids.end());
  std::reverse(rest.begin(), rest.end());
  t.remove(gone);
  t.move(rest, scattered(2900, 40, 1.5f, 20));
  EXPECT_FRAME(t);
  t.add(gone, scattered(100, 40, 1.5f, 21));
  EXPECT_FRAME(t);
  const SapCounters busy = t.counters();
  EXPECT_GE(busy.recomputed_frames, 6u);
  // Then a few boxes move a little for a while: the incremental path comes back.
  std::vector<Box3> now(t.live().size());
  std::vector<Id> live_ids;
  for (const auto& [id, box] : t.live()) {
    now[live_ids.size()] = box;
    live_ids.push_back(id);
  }
  for (int f = 0; f < 40; ++f) {
    std::vector<Id> moved;
    std::vector<Box3> moved_boxes;
    for (std::size_t i = static_cast<std::size_t>(f) % 97; i < live_ids.size(); i += 97) {
      now[i].min[1] += 0.01f;
      now[i].max[1] += 0.01f;
      moved.push_back(live_ids[i]);
      moved_boxes.push_back(now[i]);
    }
    t.move(moved, moved_boxes);
    if (f % 5 == 0) t.add(10000 + static_cast<Id>(f), cube(1, 1, 1, 1));
    EXPECT_FRAME(t);
  }
  EXPECT_GT(t.counters().restores, busy.restores);
  EXPECT_GT(t.counters().incremental_frames, busy.incremental_frames + 20);
}

// In large worlds stale arrays are rebuilt a step a frame before a probe
// (here in a small one, for the test), while boxes are removed, added (in
// freed slots), nudged and thrown far; the probe puts the changed boxes right
// and walks. Every frame matches brute force and validates.
TEST(SapPaths, StaleArraysRebuildAStepAFrame) {
  Twin t;
  t.sap().set_stage_min_boxes(0);
  t.sap().set_stage_step_frames(std::numeric_limits<double>::infinity());
  const std::size_t n = 3000;
  std::vector<Id> ids = id_range(100, n);
  t.add(ids, scattered(n, 40, 1.5f, 2));
  EXPECT_FRAME(t);
  for (int f = 0; f < 4; ++f) {  // every box jumps anywhere: recomputation, stale arrays
    t.move(ids, scattered(n, 40, 1.5f, 10 + static_cast<std::uint64_t>(f)));
    EXPECT_FRAME(t);
  }
  const SapCounters busy = t.counters();
  std::vector<Box3> now(n);
  for (std::size_t i = 0; i < n; ++i) now[i] = t.live().at(ids[i]);
  Id next = 100000;
  constexpr std::size_t kStride = 97;
  for (int f = 0; f < 80; ++f) {
    std::vector<Id> moved;
    std::vector<Box3> moved_boxes;
    for (std::size_t i = static_cast<std::size_t>(f) % kStride; i < n; i += kStride) {
      if (f < 30 && f % 7 == 3 && i < 200) {
        now[i] = scattered(1, 40, 1.5f, 900 + i + static_cast<std::uint64_t>(f))[0];  // thrown far
      } else {
        now[i].min[1] += 0.01f;
        now[i].max[1] += 0.01f;
      }
      moved.push_back(ids[i]);
      moved_boxes.push_back(now[i]);
    }
    t.move(moved, moved_boxes);
    if (f >= 30) {  // then calm: the walk comes back
      EXPECT_FRAME(t);
      continue;
    }
    std::size_t gone = (static_cast<std::size_t>(f) * 31 + 5) % n;  // churn: one out, one in its slot
    if (gone % kStride == static_cast<std::size_t>(f) % kStride) gone = (gone + 1) % n;  // not one just moved
    t.remove(ids[gone]);
    ids[gone] = next++;
    now[gone] = scattered(1, 40, 1.5f, 5000 + static_cast<std::uint64_t>(f))[0];
    t.add(ids[gone], now[gone]);
    EXPECT_FRAME(t);
  }
  const SapCounters& c = t.counters();
  std::printf("staged: %llu steps, %llu rebuilds; %llu restores; %llu incremental frames\n",
              static_cast<unsigned long long>(c.staged_steps), static_cast<unsigned long long>(c.staged_restores),
              static_cast<unsigned long long>(c.restores - busy.restores),
              static_cast<unsigned long long>(c.incremental_frames - busy.incremental_frames));
  EXPECT_GT(c.staged_restores, 0u);
  EXPECT_GE(c.staged_steps, 12u * c.staged_restores);
  EXPECT_GT(c.incremental_frames, busy.incremental_frames + 20);
}

TEST(SapPaths, RetriesOfTheIncrementalPathBackOff) {
  Twin t;
  const std::vector<Id> ids = id_range(0, 600);
  t.add(ids, scattered(600, 20, 1.0f, 15));
  EXPECT_FRAME(t);
  for (int f = 0; f < 150; ++f) {  // everything jumps anywhere, every frame
    t.move(ids, scattered(600, 20, 1.0f, 500 + static_cast<std::uint64_t>(f)));
    EXPECT_FRAME(t);
  }
  // Retries after 4, 8, 16, 32 and 64 recomputed frames, each one failing.
  EXPECT_GE(t.counters().recomputed_frames, 145u);
  EXPECT_LE(t.counters().restores, 6u);
}

TEST(SapPaths, TeleportsAcrossEverythingAbandonTheWalk) {
  Twin t;
  const std::vector<Id> ids = id_range(0, 2000);
  std::vector<Box3> boxes = scattered(2000, 30, 1.0f, 3);
  t.add(ids, boxes);
  EXPECT_FRAME(t);
  // A calm frame first, so the algorithm expects few swaps.
  boxes[0].max[0] += 0.01f;
  t.move(ids[0], boxes[0]);
  EXPECT_FRAME(t);
  // Then half the boxes jump from one corner of the world to the other.
  std::vector<Id> moved;
  std::vector<Box3> moved_boxes;
  for (std::size_t i = 0; i < ids.size(); i += 2) {
    moved.push_back(ids[i]);
    moved_boxes.push_back(cube(30 - boxes[i].min[0], 30 - boxes[i].min[1], 30 - boxes[i].min[2], 1.0f));
  }
  t.move(moved, moved_boxes);
  EXPECT_FRAME(t);
  EXPECT_EQ(t.counters().aborted_walks, 1u);
  // Single teleports stay incremental, however far.
  const std::uint64_t recomputed = t.counters().recomputed_frames;
  t.move(ids[1], cube(-1e30f, -1e30f, -1e30f, 1));
  EXPECT_FRAME(t);
  t.move(ids[1], cube(1e30f, 1e30f, 1e30f, 1));
  EXPECT_FRAME(t);
  t.move(ids[1], cube(15, 15, 15, 1));
  EXPECT_FRAME(t);
  EXPECT_EQ(t.counters().recomputed_frames, recomputed);
}

// A tenth of the boxes move far every frame, with churn: walking them would
// cost more than recomputing, so they are paired against the resting set.
// Halfway, another tenth takes over: the resting boxes that start moving
// leave stale entries behind, the ones that stop linger as active boxes,
// and a new resting set is laid out, merged into the last one.
TEST(SapPaths, ManyMovingFarPruneAgainstTheRestingSet) {
  Twin t;
  const std::size_t n = 5000;
  const std::vector<Id> ids = id_range(0, n);
  t.add(ids, scattered(n, 50, 1.0f, 21));
  EXPECT_FRAME(t);
  Id next = 100000;
  std::uint64_t preparations_before_switch = 0;
  for (int f = 0; f < 24; ++f) {
    if (f == 12) preparations_before_switch = t.counters().preparations;
    const std::size_t first = f < 12 ? 0 : 1000;  // ids 0..499 move, then 1000..1499
    std::vector<Id> moved;
    for (std::size_t i = first; i < first + 500; ++i) moved.push_back(ids[i]);
    t.move(moved, scattered(500, 50, 1.0f, 1000 + static_cast<std::uint64_t>(f)));
    std::vector<Id> gone;  // churn among the boxes that never move
    for (const auto& [id, box] : t.live()) {
      if (id >= 2000 && gone.size() < 40) gone.push_back(id);
    }
    t.remove(gone);
    t.add(id_range(next, 40), scattered(40, 50, 1.0f, 2000 + static_cast<std::uint64_t>(f)));
    next += 40;
    EXPECT_FRAME(t);
  }
  const SapCounters& c = t.counters();
  EXPECT_GE(c.resting_frames, 22u);
  EXPECT_GE(preparations_before_switch, 1u);
  EXPECT_GT(c.preparations, preparations_before_switch);  // laid out again after the switch
  EXPECT_LT(c.preparations, c.resting_frames / 2);        // and reused in between
  EXPECT_GE(c.merged_layouts, 1u);                        // by merging into the last one
}

// Where `moved` go: every second one nudged by `step` on each axis from
// where it is, the others thrown to cubes of side 2 scattered over a world
// of side `world`.
std::vector<Box3> nudged_or_thrown(const Twin& t, const std::vector<Id>& moved, float world, float step,
                                   std::uint64_t seed) {
  std::vector<Box3> to = scattered(moved.size(), world, 2.0f, seed);
  for (std::size_t i = 0; i < moved.size(); i += 2) {
    Box3 b = t.live().at(moved[i]);
    for (int k = 0; k < 3; ++k) b.min[k] += step, b.max[k] += step;
    to[i] = b;
  }
  return to;
}

// A crowded resting world (many pairs per box) where a few boxes are thrown
// across it each frame and as many nudged, some of them moved again while
// still active, a few removed and crowds added (more than the entries freed
// in place can seat, so that the set is laid out again): the frames between layouts are
// one search of the changed boxes (thrown ones with their boxes before and
// after apart, nudged ones with their union), the frames that lay the set
// out again drop the changed boxes' pairs by searching with their boxes
// before the frame (drops_by_search()), not by a scan of every pair;
// exactly as brute force says.
TEST(SapPaths, FewMovingInACrowdTakeOneSearch) {
  Twin t;
  const std::size_t n = 6000;
  const std::vector<Id> ids = id_range(0, n);
  t.add(ids, scattered(n, 24, 2.0f, 41));  // about 10 pairs per box
  EXPECT_FRAME(t);
  Id next = 100000;
  for (int f = 0; f < 20; ++f) {
    std::vector<Id> moved;
    for (std::size_t i = 0; i < 30; ++i) moved.push_back(ids[(static_cast<std::size_t>(f) * 17 + i * 13) % 600]);
    t.move(moved, nudged_or_thrown(t, moved, 24, 0.25f, 500 + static_cast<std::uint64_t>(f)));
    if (f % 4 == 3) {  // a few leave, a crowd comes: more than free entries can seat, laid out again
      std::vector<Id> gone;
      for (const auto& [id, box] : t.live()) {
        if (id >= 3000 && gone.size() < 5) gone.push_back(id);
      }
      t.remove(gone);
      t.add(id_range(next, 150), scattered(150, 24, 2.0f, 900 + static_cast<std::uint64_t>(f)));
      next += 150;
    }
    EXPECT_FRAME(t);
  }
  const SapCounters& c = t.counters();
  EXPECT_GE(c.resting_frames, 15u);
  EXPECT_GE(c.one_search_frames, 10u);
  EXPECT_GE(c.searched_drops, 1u);
}

// A crowd laid out after its insertion, then thrown about whole for a few
// frames (recomputed: the resting grid, none of whose boxes rests any more,
// is forgotten and its arrays serve the recomputation), then calm again
// with a few movers: the resting set is laid out anew and takes the frames.
// Every frame exactly as brute force says, the bookkeeping validated.
TEST(SapPaths, AWorldThrownAboutForgetsItsGridThenRestsAgain) {
  Twin t;
  const std::size_t n = 6000;
  const std::vector<Id> ids = id_range(0, n);
  t.add(ids, scattered(n, 24, 2.0f, 61));
  EXPECT_FRAME(t);
  for (int f = 0; f < 3; ++f) {
    t.move(ids, scattered(n, 24, 2.0f, 62 + static_cast<std::uint64_t>(f)));
    EXPECT_FRAME(t);
  }
  const SapCounters thrown = t.counters();
  EXPECT_EQ(thrown.forgotten_grids, 1u);  // at the first recomputation; the next ones have no grid
  EXPECT_GE(thrown.recomputed_frames, 3u);
  for (int f = 0; f < 20; ++f) {
    std::vector<Id> moved;
    for (std::size_t i = 0; i < 30; ++i) moved.push_back(ids[(static_cast<std::size_t>(f) * 31 + i * 97) % n]);
    std::sort(moved.begin(), moved.end());
    moved.erase(std::unique(moved.begin(), moved.end()), moved.end());
    t.move(moved, nudged_or_thrown(t, moved, 24, 0.25f, 800 + static_cast<std::uint64_t>(f)));
    EXPECT_FRAME(t);
  }
  EXPECT_GE(t.counters().resting_frames, thrown.resting_frames + 15);
  EXPECT_GT(t.counters().preparations, thrown.preparations);
}

// The same past 2^16 boxes, where the mass insertion's layout leaves its
// staging (32 bytes an entry) as a spare for the next frame: thrown about,
// that frame's recomputation stages in it; at rest, the spare goes at that
// frame's end. Against box-pruning (brute force is quadratic here).
TEST(SapPaths, ALargeLayoutLeavesItsStagingToTheNextFrameOnly) {
  const std::size_t n = 70000;
  const std::vector<Id> ids = id_range(0, n);
  const std::size_t spare = 32 * n;
  {
    Twin t(3, false, false, "box-pruning");
    t.add(ids, scattered(n, 120, 2.0f, 91));
    EXPECT_FRAME(t);
    for (int f = 0; f < 2; ++f) {  // everything thrown: recomputed, the first time in the spare
      t.move(ids, scattered(n, 120, 2.0f, 92 + static_cast<std::uint64_t>(f)));
      EXPECT_FRAME(t);
    }
    EXPECT_GE(t.counters().recomputed_frames, 3u);
    EXPECT_EQ(t.counters().forgotten_grids, 1u);
  }
  Twin t(3, false, false, "box-pruning");
  t.add(ids, scattered(n, 120, 2.0f, 95));
  EXPECT_FRAME(t);
  const std::size_t laid_out = t.sap().memory_bytes();
  std::vector<Id> moved(ids.begin(), ids.begin() + 50);
  t.move(moved, nudged_or_thrown(t, moved, 120, 0.3f, 96));
  EXPECT_FRAME(t);
  EXPECT_EQ(t.counters().recomputed_frames, 1u);  // the insertion only: the nudges rested
  EXPECT_LE(t.sap().memory_bytes() + spare, laid_out) << "the spare outlived the frame after the layout";
}

// A resting world past 2^16 boxes, where the resting set's searches run a
// batch ahead of their scans and the found pairs' reads run ahead in
// stages: a few hundred boxes a frame nudged or thrown far, some removed
// and added, against box-pruning (brute force is quadratic here).
TEST(SapPaths, LargeRestingWorldSearchesInBatches) {
  Twin t(3, false, false, "box-pruning");
  const std::size_t n = 70000;
  const std::vector<Id> ids = id_range(0, n);
  t.add(ids, scattered(n, 120, 2.0f, 71));  // about 2.6 pairs per box
  EXPECT_FRAME(t);
  Id next = 200000;
  std::vector<Id> gone;
  for (int f = 0; f < 10; ++f) {
    std::vector<Id> moved;
    for (std::size_t i = 0; i < 300; ++i) {
      const Id id = ids[(static_cast<std::size_t>(f) * 7919 + i * 211) % n];
      if (std::find(gone.begin(), gone.end(), id) == gone.end()) moved.push_back(id);
    }
    std::sort(moved.begin(), moved.end());
    moved.erase(std::unique(moved.begin(), moved.end()), moved.end());
    t.move(moved, nudged_or_thrown(t, moved, 120, 0.3f, 700 + static_cast<std::uint64_t>(f)));
    if (f % 3 == 2) {
      Id leaving = ids[static_cast<std::size_t>(f) * 101 + 1];
      while (std::binary_search(moved.begin(), moved.end(), leaving)) ++leaving;  // one operation an id a frame
      gone.push_back(leaving);
      t.remove({leaving});
      t.add(id_range(next, 3), scattered(3, 120, 2.0f, 950 + static_cast<std::uint64_t>(f)));
      next += 3;
    }
    EXPECT_FRAME(t);
  }
  EXPECT_GE(t.counters().resting_frames, 5u);
}

// Resting boxes woken a few at a time in a crowd (bumped for three frames,
// then at rest again), with churn: a box that wakes frees its entries in
// the resting grid where they lie (its one search meets them), and at rest
// again it takes a free entry near where it sorts, so that the active list
// stays the boxes moving now and the set is seldom laid out again; every
// frame exactly as box-pruning says (held to brute force by its own tests:
// brute force here took 26 s of CI's ASan run), the bookkeeping validated
// (no index names a box twice, nor one named by none).
TEST(SapPaths, WokenBoxesSettleInPlace) {
  Twin t(3, false, false, "box-pruning");
  const std::size_t n = 6000;
  const std::vector<Id> ids = id_range(0, n);
  t.add(ids, scattered(n, 24, 1.0f, 81));
  EXPECT_FRAME(t);
  constexpr std::size_t kPerFrame = 40, kAwake = 3;
  Id next = 100000;
  std::vector<Id> gone;
  const auto woken = [&](std::size_t k) { return ids[(k * 7919) % n]; };
  for (std::size_t f = 1; f <= 40; ++f) {
    std::vector<Id> moved;
    for (std::size_t age = 0; age < kAwake && age < f; ++age) {
      for (std::size_t k = 0; k < kPerFrame; ++k) {
        const Id id = woken((f - age) * kPerFrame + k);
        if (std::find(gone.begin(), gone.end(), id) == gone.end()) moved.push_back(id);
      }
    }
    std::sort(moved.begin(), moved.end());
    std::vector<Box3> to;
    testgen::Rng rng(300 + f);
    for (const Id id : moved) {
      Box3 b = t.live().at(id);
      for (int k = 0; k < 3; ++k) {
        const float step = rng.uniform(-0.2f, 0.2f);
        b.min[k] += step, b.max[k] += step;
      }
      to.push_back(b);
    }
    t.move(moved, to);
    if (f % 5 == 0) {  // churn: a resting box leaves, new ones come (one into its slot)
      Id leaving = ids[f * 37 + 5];
      while (std::binary_search(moved.begin(), moved.end(), leaving)) ++leaving;
      gone.push_back(leaving);
      t.remove({leaving});
      t.add(id_range(next, 4), scattered(4, 24, 1.0f, 600 + f));
      next += 4;
    }
    EXPECT_FRAME(t);
  }
  const SapCounters& c = t.counters();
  EXPECT_GE(c.resting_frames, 35u);
  EXPECT_GE(c.settled_boxes, 30 * kPerFrame);  // nearly every box woken settles again
  EXPECT_LE(c.preparations, 2u);               // the mass insertion's layout, and at most one more
}

// Inserts `ids` as boxes scattered over a world of side 60 in one batch and
// checks that frame; returns the boxes.
std::vector<Box3> insert_scattered(Twin& t, const std::vector<Id>& ids, std::uint64_t seed) {
  std::vector<Box3> boxes = scattered(ids.size(), 60, 1.0f, seed);
  t.add(ids, boxes);
  EXPECT_FRAME(t);
  return boxes;
}

// A mass insertion (a level loaded in one batch) into a small world lays out
// the endpoint arrays and the resting set itself: the next frames, a few
// boxes nudged, then a tenth of them moved far, rebuild neither (issue 13:
// steady frames).
TEST(SapPaths, MassInsertionLaysOutForTheNextFrames) {
  Twin t;
  const std::size_t n = 6000;
  const std::vector<Id> ids = id_range(0, n);
  std::vector<Box3> boxes = insert_scattered(t, ids, 31);
  const SapCounters after_insertion = t.counters();
  EXPECT_EQ(after_insertion.restores + after_insertion.incremental_frames, 1u);  // arrays current either way
  EXPECT_EQ(after_insertion.preparations, 1u);
  for (int f = 0; f < 4; ++f) {
    std::vector<Id> moved;
    std::vector<Box3> moved_boxes;
    const std::size_t step = f < 3 ? 500 : 10;  // a few nudged, then a tenth moved far
    for (std::size_t i = static_cast<std::size_t>(f); i < n; i += step) {
      moved.push_back(ids[i]);
      if (f < 3) {
        boxes[i].max[0] += 0.01f;
      } else {
        boxes[i] = scattered(1, 60, 1.0f, 500 + i)[0];
      }
      moved_boxes.push_back(boxes[i]);
    }
    t.move(moved, moved_boxes);
    EXPECT_FRAME(t);
  }
  EXPECT_EQ(t.counters().restores, after_insertion.restores);
  EXPECT_EQ(t.counters().preparations, after_insertion.preparations);
  EXPECT_EQ(t.counters().incremental_frames, after_insertion.incremental_frames + 3);
}

// In a world large enough to stage its rebuilds, a mass insertion finds its
// pairs in the pass that lays out the resting set and leaves the endpoint
// arrays stale: the next frames take the resting path without laying out
// again. With every mover thrown across the world, the mobility estimated
// from samples rules out a probe: no staging step is spent on arrays no
// walk would use. Nudged moves then bring the walk back. Exact throughout.
TEST(SapPaths, LargeMassInsertionLeavesTheArraysStale) {
  Twin t;
  t.sap().set_stage_min_boxes(1000);
  t.sap().set_stage_step_frames(std::numeric_limits<double>::infinity());
  const std::size_t n = 6000;
  const std::vector<Id> ids = id_range(0, n);
  std::vector<Box3> boxes = insert_scattered(t, ids, 33);
  const SapCounters inserted = t.counters();
  EXPECT_EQ(inserted.recomputed_frames, 1u);
  EXPECT_EQ(inserted.preparations, 1u);
  EXPECT_EQ(inserted.restores, 0u);
  for (int f = 0; f < 6; ++f) {  // the same tenth thrown anywhere each frame
    std::vector<Id> moved;
    std::vector<Box3> moved_boxes;
    for (std::size_t i = 0; i < n; i += 10) {
      boxes[i] = scattered(1, 60, 1.0f, 700 + i * 7 + static_cast<std::uint64_t>(f))[0];
      moved.push_back(ids[i]);
      moved_boxes.push_back(boxes[i]);
    }
    t.move(moved, moved_boxes);
    EXPECT_FRAME(t);
  }
  const SapCounters thrown = t.counters();
  EXPECT_EQ(thrown.resting_frames, 6u);
  EXPECT_EQ(thrown.preparations, inserted.preparations);
  EXPECT_EQ(thrown.staged_steps, 0u) << "arrays staged that no walk would use";
  EXPECT_EQ(thrown.restores + thrown.incremental_frames, 0u);
  for (int f = 0; f < 40; ++f) {  // a few nudged: a probe rebuilds the arrays and the walk takes over
    std::vector<Id> moved;
    std::vector<Box3> moved_boxes;
    for (std::size_t i = static_cast<std::size_t>(f); i < n; i += 600) {
      boxes[i].min[2] += 0.001f;
      boxes[i].max[2] += 0.001f;
      moved.push_back(ids[i]);
      moved_boxes.push_back(boxes[i]);
    }
    t.move(moved, moved_boxes);
    EXPECT_FRAME(t);
  }
  EXPECT_GT(t.counters().incremental_frames, 0u);
}

// Every box of a large world moving a little each frame (a swap or so
// each): walking them reads every box's endpoints where they lie, which
// costs more than box pruning them all (kWalkNsPerMove; 4-10x box
// pruning's frame from 100k boxes when sap walked them), so the frames
// recompute; a few of them moving the same little walk.
TEST(SapPaths, EveryBoxMovingALittleRecomputes) {
  Twin t(3, false, false, "box-pruning");  // box pruning: held to brute force by its own tests
  const std::vector<Id> ids = id_range(0, 20000);
  std::vector<Box3> boxes = scattered(ids.size(), 64, 1.5f, 31);
  t.add(ids, boxes);
  EXPECT_FRAME(t);
  const auto nudge = [&](std::size_t every, int frame) {
    std::vector<Id> moved;
    std::vector<Box3> moved_boxes;
    const float d = frame % 2 ? 0.002f : -0.002f;
    for (std::size_t i = 0; i < ids.size(); i += every) {
      boxes[i].min[frame % 3] += d, boxes[i].max[frame % 3] += d;
      moved.push_back(ids[i]);
      moved_boxes.push_back(boxes[i]);
    }
    t.move(moved, moved_boxes);
    EXPECT_FRAME(t);
  };
  for (int frame = 0; frame < 10; ++frame) nudge(1, frame);
  const SapCounters all = t.counters();
  EXPECT_GE(all.recomputed_frames, 10u);
  EXPECT_EQ(all.incremental_frames + all.batch_frames, 0u);
  for (int frame = 10; frame < 40; ++frame) nudge(20, frame);  // 1,000 movers
  EXPECT_GT(t.counters().incremental_frames, 15u);
}

// A new world of 100k resting cubes with 1,000 movers, at speed 10 per
// mille passing some 43 endpoints each, at 1 a few: the walk could not pay
// (the resting path is cheaper), and the policy says so from frame 1 on.
// At speed 10, with 32 sampled moves the estimate read 24 a move and the
// world spent its frames 1-12 rebuilding the arrays a step a frame (1-5 ms
// a step against 0.16 ms frames) for a probe that failed at frame 13. At
// speed 1, where a move costs the walk its dozen reads of endpoints spread
// over the whole world's arrays (230 ns, walk_ns_per_move()), priced as
// if the movers' entries were in cache (55 ns) it rebuilt the arrays at
// once in frame 1 (20-30 ms) to walk at 0.2 ms a frame where the resting
// path takes 0.08.
TEST(SapPaths, SlowMoversInALargeNewWorldProbeNothing) {
  for (const std::uint32_t speed : {10u, 1u}) {
    ScenarioParams params;
    params.name = "tracy";
    params.n = 100000;
    params.moving = 1000;
    params.speed_pm = speed;
    params.inserts = params.removes = 0;
    const std::unique_ptr<Scenario> scenario = make_scenario(params);
    ASSERT_NE(scenario, nullptr);
    const SweepAndPrune* made = nullptr;
    auto bp = BroadPhase::create(
        "sap",
        [&made](const Options& o) {
          auto sap = std::make_unique<SweepAndPrune>(o);
          made = sap.get();
          return std::unique_ptr<Algorithm>(std::move(sap));
        },
        Options{});
    std::vector<Box3> boxes;
    const auto gather = [&](std::span<const Id> ids) {
      boxes.clear();
      for (const Id id : ids) boxes.push_back(scenario->boxes()[id]);
      return std::span<const Box3>(boxes);
    };
    ASSERT_TRUE(bp->add(scenario->alive_ids(), gather(scenario->alive_ids())));
    bp->update();
    for (int frame = 1; frame <= 20; ++frame) {
      scenario->step();
      ASSERT_TRUE(bp->move(scenario->moved(), gather(scenario->moved())));
      bp->update();
    }
    EXPECT_TRUE(bp->validate());
    const SapCounters& c = made->counters();
    EXPECT_EQ(c.resting_frames, 20u) << "speed " << speed;
    EXPECT_EQ(c.restores + c.staged_steps, 0u) << "speed " << speed;
    EXPECT_EQ(c.aborted_walks, 0u) << "speed " << speed;
  }
}

// New boxes in a jiggling world are merged into the endpoint arrays (I.4b),
// one at a time or a few at once with a move; a batch as large as the world
// is paired by box pruning instead (recomputed or against a resting set),
// where merging would cost more.
TEST(SapPaths, BatchInsertionMergesIntoTheArrays) {
  Twin t;
  Jiggling world(t, 3000, 4);
  const SapCounters before = t.counters();
  for (Id i = 0; i < 30; ++i) {
    world.step();
    t.add(20000 + i, scattered(1, 40, 1.5f, 100 + i)[0]);
    EXPECT_FRAME(t);
  }
  world.step();
  t.add(id_range(30000, 7), scattered(7, 40, 1.5f, 6));
  t.move(world.ids()[1], cube(20, 20, 20, 3));
  EXPECT_FRAME(t);
  const SapCounters& c = t.counters();
  EXPECT_EQ(c.incremental_frames, before.incremental_frames + 31);
  EXPECT_EQ(c.merged_boxes, before.merged_boxes + 37);
  const std::uint64_t others = c.recomputed_frames + c.resting_frames;
  world.step();
  t.add(id_range(50000, 3000), scattered(3000, 40, 1.5f, 5));  // as many as the world
  EXPECT_FRAME(t);
  EXPECT_EQ(t.counters().merged_boxes, before.merged_boxes + 37);
  EXPECT_EQ(t.counters().recomputed_frames + t.counters().resting_frames, others + 1);
}

// Fifty boxes at once merge too, and find their pairs, on a walking sap
// (whether the policy merges them or recomputes is a close call in this
// world: 1,500 of 3,000 boxes jiggling, a rebuild of the arrays per frame
// with additions).
TEST(SapPaths, FiftyNewBoxesMergeIntoTheArrays) {
  Twin t(3, /*walk_only=*/true);
  Jiggling world(t, 3000, 4);
  const SapCounters before = t.counters();
  world.step();
  t.add(id_range(40000, 50), scattered(50, 40, 1.5f, 7));
  EXPECT_FRAME(t);
  EXPECT_EQ(t.counters().merged_boxes, before.merged_boxes + 50);
  EXPECT_EQ(t.counters().incremental_frames, before.incremental_frames + 1);
}

// The single-pass batch update (Tracy et al. 3.2.1) taking every frame:
// removals, moves and insertions in one frame, new boxes touching removed
// ones, an infinite box, a ground plane and a far teleport among them.
TEST(SapPaths, SinglePassBatchUpdateTakesEveryChange) {
  Twin t(3, false, true);
  Jiggling world(t, 2000, 21);
  for (Id i = 0; i < 20; ++i) {
    world.step();
    t.add(id_range(10000 + 100 * i, 5), scattered(5, 40, 1.5f, 400 + i));
    if (i > 0) t.remove(id_range(10000 + 100 * (i - 1), 3));
    EXPECT_FRAME(t);
  }
  world.step();
  t.add(9000, Box3{{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}});
  t.add(9001, Box3{{-kInf, -kInf, 10}, {kInf, kInf, 10}});
  t.move(world.ids()[1], cube(-30, 60, 5, 2));
  t.remove(world.ids()[3]);
  EXPECT_FRAME(t);
  world.step();
  t.remove(std::vector<Id>{9000, world.ids()[5]});
  t.move(9001, Box3{{-kInf, -kInf, 20}, {kInf, kInf, 20}});
  t.add(9002, cube(10, 10, 10, 0));
  EXPECT_FRAME(t);
  const SapCounters& c = t.counters();
  EXPECT_EQ(c.batch_frames, 24u);
  EXPECT_EQ(c.incremental_frames + c.recomputed_frames + c.resting_frames, 0u);
  EXPECT_GT(c.swaps, 0u);
}

// Stale arrays in a dense world of 100k boxes (10 pairs a box) with 1,000
// movers: a walk would cost a third of the resting path, whose every moved
// box drops and finds its pairs again, so rebuilding the arrays pays within
// a few dozen frames. But in one frame it would cost some 40 of them (6 ms
// at 100k boxes): where the world is large enough to stage the rebuild a
// step a frame (kStageMinBoxes), the arrays stay stale until a probe, and
// only a small world rebuilds them at once. Nor is a rebuild staged whose
// steps would each cost more than a few of the frames they ride on.
TEST(SapPolicy, ALargeWorldStagesTheRebuildThatAWalkPaysFor) {
  detail::SapFrameCounts f;
  f.kept = 100000;
  f.moved = f.active = 1000;
  f.pairs = 500000;
  f.resting = 100000;
  f.resting_cells = 400;
  f.arrays_valid = false;
  detail::SapHistory h;
  h.measured = true;
  h.mobility = 5;
  detail::SapChoice c = detail::choose_sap_path(f, h);
  EXPECT_EQ(c.path, detail::SapPath::kWalk);  // rebuilt at once
  EXPECT_FALSE(c.stale);
  f.stages_rebuild = true;
  c = detail::choose_sap_path(f, h);
  EXPECT_TRUE(c.stale);
  EXPECT_TRUE(c.probe_may_pay);
  EXPECT_EQ(c.path, detail::SapPath::kResting);  // no probe due yet
  // Ten movers: a staged step (a pass over an axis' 200k entries) would
  // cost dozens of their frames; the arrays stay stale, no probe comes.
  f.moved = f.active = 10;
  c = detail::choose_sap_path(f, h);
  EXPECT_TRUE(c.stale);
  EXPECT_FALSE(c.probe_may_pay);
}

// The policy takes the batch update when it is the cheapest path: half of
// a pile of 20k boxes (5 pairs a box) moving past a few endpoints each is
// too many moves to walk (each pays for reading its endpoints where they
// lie, walk_ns_per_move()) and too few to find the pile's pairs again; a few
// movers walk; boxes thrown far do neither. A large world all moving
// recomputes at any mobility: bench/walk_cost.cpp, 100k boxes of
// allmoving3d past 13 to 27 endpoints each, took 59-72 ms a frame walked,
// 20-23 by the batch update and 7.5 recomputed by box pruning.
TEST(SapPolicy, BatchUpdateWhenItIsCheapest) {
  detail::SapFrameCounts f;
  f.kept = 20000;
  f.moved = 10000;
  f.pairs = 100000;
  f.active = 10000;
  f.resting = 20000;
  f.resting_cells = 80;
  detail::SapHistory h;
  h.measured = true;
  const auto path_at = [&](double mobility) {
    h.mobility = mobility;
    return detail::choose_sap_path(f, h).path;
  };
  EXPECT_EQ(path_at(5), detail::SapPath::kBatch);
  EXPECT_EQ(path_at(40), detail::SapPath::kBatch);
  EXPECT_NE(path_at(1000), detail::SapPath::kBatch);
  EXPECT_NE(path_at(1000), detail::SapPath::kWalk);
  f.moved = f.active = 100;
  EXPECT_EQ(path_at(5), detail::SapPath::kWalk);
  f.moved = f.active = 10000;
  h.measured = false;  // the batch update cannot stop midway: not on a guess
  EXPECT_NE(path_at(5), detail::SapPath::kBatch);
  h.measured = true;
  f.arrays_valid = false;  // stale arrays, rebuilt first: that pays within the frame
  EXPECT_EQ(path_at(5), detail::SapPath::kBatch);
  f.arrays_valid = true;

  detail::SapFrameCounts all;
  all.kept = all.moved = all.active = all.resting = 100000;
  all.pairs = 20000;  // the tracy scene's 0.2 per box
  all.resting_cells = 400;
  f = all;
  for (const double mobility : {1.0, 14.0, 40.0}) EXPECT_EQ(path_at(mobility), detail::SapPath::kRecompute);
}

// Merged boxes find their pairs with the old boxes by scanning the arrays
// when the scans are short, by bipartite box pruning when they are not (a
// box infinite on every axis makes every scan run the whole array).
TEST(SapPaths, SmallBatchesScanLongScansPrune) {
  Twin t;
  Jiggling world(t, 3000, 11);
  for (Id i = 0; i < 20; ++i) {  // one or a few at a time: scanned from the arrays
    const std::size_t count = 1 + i % 4;
    world.step();
    t.add(id_range(10000 + 10 * i, count), scattered(count, 40, 1.5f, 300 + i));
    EXPECT_FRAME(t);
  }
  EXPECT_EQ(t.counters().scanned_batches, 20u);
  EXPECT_EQ(t.counters().pruned_batches, 0u);
  world.step();
  t.add(9999, Box3{{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}});
  EXPECT_FRAME(t);
  const SapCounters before = t.counters();
  world.step();
  t.add(id_range(20000, 30), scattered(30, 40, 1.5f, 12));
  EXPECT_FRAME(t);
  const SapCounters& c = t.counters();
  EXPECT_EQ(c.scanned_batches, before.scanned_batches);
  // (or the batch update, whose sweep finds their pairs in its pass)
  EXPECT_EQ(c.pruned_batches + c.recomputed_frames + c.resting_frames + c.batch_frames,
            before.pruned_batches + before.recomputed_frames + before.resting_frames + before.batch_frames + 1);
}

// Recomputing finds every pair again and diffs it, so its cost grows with
// the pairs: in a world of ten pairs per box (a stack) a walk of modest
// mobility is cheaper than recomputing, where in the tracy scene's 0.2 per
// box it is not; the resting path likewise pays for the pairs of the boxes
// it changes.
TEST(SapPolicy, RecomputingCostsMoreWhereBoxesHaveManyPairs) {
  detail::SapFrameCounts f;
  f.kept = 1000;
  f.moved = 600;
  f.active = 600;
  f.resting = 1000;
  f.resting_cells = 4;
  detail::SapHistory h;
  h.mobility = 30;
  h.measured = true;
  const auto incremental = [&] {
    const detail::SapPath path = detail::choose_sap_path(f, h).path;
    return path == detail::SapPath::kWalk || path == detail::SapPath::kBatch;
  };
  f.pairs = 200;
  EXPECT_FALSE(incremental());
  f.pairs = 10000;
  EXPECT_TRUE(incremental());
  f.pairs = 200;
  const double sparse = detail::resting_cost(f);
  f.pairs = 10000;
  EXPECT_GT(detail::resting_cost(f), 2 * sparse);
}

// A probe is overdue, whatever the last walk predicts, once the schedule
// says so and only where rebuilding the arrays is a small part of the
// frame's alternative.
TEST(SapPolicy, ProbeOverdueOnlyWhereTheRebuildIsCheap) {
  detail::SapHistory h;
  h.probe_interval = 8;
  h.recompute_streak = 7;
  const double restore = detail::kRestoreNsPerBox * 1000;
  EXPECT_FALSE(detail::probe_overdue(h, 1000, 10 * restore));  // not yet due
  h.recompute_streak = 8;
  EXPECT_TRUE(detail::probe_overdue(h, 1000, 4 * restore));
  EXPECT_FALSE(detail::probe_overdue(h, 1000, 3 * restore));  // the probe's rebuild would be a spike
}

// A stack of touching boxes, most of them jittering by a hair each frame
// (a physics engine's pile at rest): the first walk after the insertion
// crosses every tie of the grid's equal bounds and is abandoned, so sap
// recomputes (ten pairs a box, each found again every frame) until a probe
// measures the jitter's real mobility; from then on it walks or sweeps the
// arrays once (the batch update), matching brute every frame.
TEST(SapPaths, JitteringStackLeavesRecomputingForTheWalk) {
  Twin t;
  std::vector<Id> ids;
  std::vector<Box3> boxes;
  const float margin = 0.04f;
  for (int x = 0; x < 8; ++x) {
    for (int y = 0; y < 8; ++y) {
      for (int z = 0; z < 8; ++z) {
        ids.push_back(static_cast<Id>(ids.size()));
        boxes.push_back(Box3{{x - margin, y - margin, z - margin}, {x + 1 + margin, y + 1 + margin, z + 1 + margin}});
      }
    }
  }
  t.add(ids, boxes);
  EXPECT_FRAME(t);
  testgen::Rng rng(5);
  for (int frame = 0; frame < 60; ++frame) {
    std::vector<Id> moved;
    std::vector<Box3> moved_boxes;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if ((i * 7 + static_cast<std::size_t>(frame)) % 10 >= 6) continue;
      for (int k = 0; k < 3; ++k) {
        const float d = static_cast<float>(rng.uniform(-1e-4, 1e-4));
        boxes[i].min[k] += d, boxes[i].max[k] += d;
      }
      moved.push_back(ids[i]);
      moved_boxes.push_back(boxes[i]);
    }
    t.move(moved, moved_boxes);
    EXPECT_FRAME(t);
  }
  const SapCounters& c = t.counters();
  EXPECT_GE(c.recomputed_frames, 1u);
  EXPECT_LE(c.recomputed_frames, 20u);
  EXPECT_GE(c.incremental_frames + c.batch_frames, 40u);
}

TEST(SapPaths, InsertionsNextToHugeAndInfiniteBoxes) {
  Twin t;
  Jiggling world(t, 1000, 13, 30, 1.0f);  // keeps the frames on the walk: new boxes are merged and scanned
  world.step();
  t.add(5000, Box3{{-kInf, -kInf, 10}, {kInf, kInf, 10}});  // a ground plane: x and y extents infinite
  t.add(5001, Box3{{-1e30f, 5, 5}, {1e30f, 6, 6}});         // a long rod along x
  EXPECT_FRAME(t);
  const auto one_at = [&](Id id, const Box3& b) {
    world.step();
    t.add(id, b);
    EXPECT_FRAME(t);
  };
  one_at(6000, cube(5, 5, 9.5f, 1));                              // touches the plane from below
  one_at(6001, cube(-3, 5.5f, 5.5f, 0.25f));                      // inside the rod's cross-section
  one_at(6002, Box3{{kInf, kInf, kInf}, {kInf, kInf, kInf}});     // a point at +inf
  one_at(6003, Box3{{-kInf, -kInf, -kInf}, {-kInf, -kInf, 10}});  // reaches up to the plane
  one_at(6004, Box3{{-kInf, 0, 0}, {0, 0, 0}});                   // a ray
  one_at(6005, Box3{{FLT_MAX, 0, 0}, {kInf, 30, 30}});            // beyond everything in x
  EXPECT_GT(t.counters().scanned_batches, 0u);
  // A box infinite on every axis: every scan runs the whole array, so a
  // batch of some size goes to box pruning (bipartite against the old
  // boxes, against the resting set, or of everything) or to the batch
  // update, which sweeps the arrays once.
  one_at(6006, Box3{{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}});
  const auto pruned = [&] {
    return t.counters().pruned_batches + t.counters().resting_frames + t.counters().recomputed_frames +
           t.counters().batch_frames;
  };
  const std::uint64_t scanned = t.counters().scanned_batches, pruned_before = pruned();
  world.step();
  t.add(id_range(7000, 50), scattered(50, 30, 1.0f, 14));
  EXPECT_FRAME(t);
  EXPECT_EQ(t.counters().scanned_batches, scanned);
  EXPECT_EQ(pruned(), pruned_before + 1);
  one_at(6007, cube(1, 1, 1, 1));
  // Once it is gone, insertions are right again (its extent may linger).
  t.remove(6006);
  EXPECT_FRAME(t);
  one_at(6008, cube(2, 2, 2, 1));
  t.move(5000, Box3{{-kInf, -kInf, 2.5f}, {kInf, kInf, 2.5f}});
  EXPECT_FRAME(t);
  one_at(6009, cube(3, 3, 2, 0.5f));
}

// Removals in a jiggling world are compacted out of the endpoint arrays
// (I.5b); then single removals, and everything.
TEST(SapPaths, BatchRemovalAndRemovalOfEverything) {
  Twin t;
  Jiggling world(t, 2000, 7, 30, 1.5f);
  const std::vector<Id>& ids = world.ids();
  std::vector<Id> odd;  // the boxes that do not jiggle
  for (std::size_t i = 1; i < ids.size(); i += 2) odd.push_back(ids[i]);
  const SapCounters before = t.counters();
  world.step();
  t.remove(odd);
  EXPECT_FRAME(t);
  EXPECT_EQ(t.counters().incremental_frames, before.incremental_frames + 1);
  EXPECT_EQ(t.counters().compacted_boxes, before.compacted_boxes + 1000);
  t.remove(ids[0]);  // a single one
  t.move(ids[2], cube(5, 5, 5, 4));
  EXPECT_FRAME(t);
  std::vector<Id> rest;
  for (const auto& [id, box] : t.live()) rest.push_back(id);
  t.remove(rest);  // everything
  EXPECT_FRAME(t);
  EXPECT_TRUE(t.pairs().empty());
  EXPECT_EQ(t.broad_phase().size(), 0u);
  t.add(ids[0], cube(0, 0, 0, 1));  // and the world starts again
  t.add(ids[2], cube(1, 1, 1, 1));
  EXPECT_FRAME(t);
  EXPECT_EQ(t.pairs(), (std::vector<Pair>{{0, 2}}));
}

TEST(SapPaths, RemovalsMovesAndAddsInOneFrame) {
  Twin t;
  t.add(id_range(0, 500), scattered(500, 15, 1.5f, 8));
  EXPECT_FRAME(t);
  for (int f = 0; f < 20; ++f) {
    testgen::Rng rng(static_cast<std::uint64_t>(f) + 40);
    std::vector<Id> live_ids;
    for (const auto& [id, box] : t.live()) live_ids.push_back(id);
    rng.shuffle(live_ids);
    t.remove(std::vector<Id>(live_ids.begin(), live_ids.begin() + 20));
    std::vector<Box3> moved_boxes;
    for (std::size_t i = 20; i < 60; ++i) {
      Box3 b = t.live().at(live_ids[i]);
      for (int k = 0; k < 3; ++k) b.min[k] += 0.5f, b.max[k] += 0.5f;
      moved_boxes.push_back(b);
    }
    t.move(std::vector<Id>(live_ids.begin() + 20, live_ids.begin() + 60), moved_boxes);
    t.add(id_range(1000 + static_cast<Id>(f) * 20, 20), scattered(20, 15, 1.5f, 200 + static_cast<std::uint64_t>(f)));
    EXPECT_FRAME(t);
  }
}

TEST(SapMemory, ReportsItsArrays) {
  SweepAndPrune sap(Options{});
  const std::size_t empty = sap.memory_bytes();
  auto bp = BroadPhase::create(
      "sap", [](const Options& o) { return std::unique_ptr<Algorithm>(std::make_unique<SweepAndPrune>(o)); },
      Options{});
  const std::vector<Id> ids = id_range(0, 10000);
  ASSERT_TRUE(bp->add(ids, scattered(10000, 60, 1, 9)));
  bp->update();
  // Three axes of 8-byte endpoints, a 32-byte record and a 24-byte box per object at least.
  EXPECT_GE(bp->memory_bytes(), empty + 10000u * (3 * 2 * 8 + 32 + 24));
}

// A large resting world where few boxes move (unit cubes at density 0.05,
// 300 nudged a frame, 100 added, more than the entries freed in place can
// seat, so that the set is merged again now and then): the layouts give back the scratch sized for every
// box (the mass insertion's active list and pairs) or for the idle active
// boxes a merge took in (RestingSet::merge_active()), about 12 bytes a box
// at 100k (95 before, 83 after), and the frames after them stay exact.
TEST(SapMemory, LayoutsGiveBackTheirScratch) {
  constexpr std::size_t n = 100'000;
  SweepAndPrune* sap = nullptr;
  auto bp = BroadPhase::create(
      "sap",
      [&](const Options& o) {
        auto made = std::make_unique<SweepAndPrune>(o);
        sap = made.get();
        return std::unique_ptr<Algorithm>(std::move(made));
      },
      Options{});
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(0, std::cbrt(float(n) / 0.05f));
  std::vector<Id> ids = id_range(0, n);
  std::vector<Box3> boxes(n);
  for (Box3& b : boxes) {
    const float x = u(rng), y = u(rng), z = u(rng);
    b = Box3{{x, y, z}, {x + 1, y + 1, z + 1}};
  }
  ASSERT_TRUE(bp->add(ids, boxes).ok());
  bp->update();
  Id next = Id{n};
  for (std::size_t f = 0; f < 60; ++f) {
    std::vector<Id> moved;
    std::vector<Box3> moved_boxes;
    for (std::size_t k = 0; k < 300; ++k) {
      const std::size_t i = (k * 7919 + f) % n;
      boxes[i].min[0] += 0.1f, boxes[i].max[0] += 0.1f;
      moved.push_back(ids[i]);
      moved_boxes.push_back(boxes[i]);
    }
    ASSERT_TRUE(bp->move(moved, moved_boxes).ok());
    // Boxes that come, more than the entries freed in place can seat: the
    // set is laid out again, merged.
    std::vector<Box3> added(100);
    for (Box3& b : added) {
      const float x = u(rng), y = u(rng), z = u(rng);
      b = Box3{{x, y, z}, {x + 1, y + 1, z + 1}};
    }
    ASSERT_TRUE(bp->add(id_range(next, added.size()), added).ok());
    next += static_cast<Id>(added.size());
    bp->update();
  }
  EXPECT_GE(sap->counters().merged_layouts, 2u);
  EXPECT_EQ(sap->counters().resting_frames, 60u);
  EXPECT_TRUE(bp->validate());
  EXPECT_LT(sap->memory_bytes(), 89 * bp->size());
}

}  // namespace
}  // namespace sapling

// The debug draw (debug_draw.hpp): while the endpoint arrays are current
// (after a frame of walked moves), sap draws every live box's two x
// endpoints in sorted order, each a line at its coordinate across the box's
// y extent, owned by the box's id; it also reports its swap total.
TEST(SapDebugDraw, SortedEndpointsOfEveryBox) {
  struct Lines : sapling::DebugDraw {
    std::vector<std::array<float, 4>> mins, maxs;  // x, y0, y1, owner
    std::vector<float> order;
    bool swaps_reported = false;
    void line(const sapling::DebugPoint& a, const sapling::DebugPoint& b, sapling::DebugCategory c,
              sapling::Id owner) override {
      EXPECT_EQ(a[0], b[0]);
      order.push_back(a[0]);
      (c == sapling::DebugCategory::kMaxEndpoint ? maxs : mins).push_back({a[0], a[1], b[1], float(owner)});
    }
    void count(std::string_view name, std::uint64_t) override { swaps_reported |= name == "swaps"; }
  };
  sapling::Options options;
  options.dims = 2;
  auto bp = sapling::BroadPhase::create("sap", options);
  ASSERT_TRUE(bp);
  std::vector<sapling::Id> ids;
  std::vector<sapling::Box2> boxes;
  for (sapling::Id i = 0; i < 60; ++i) {
    const float x = static_cast<float>((i * 37) % 100), y = static_cast<float>((i * 53) % 100);
    ids.push_back(i);
    boxes.push_back({{x, y}, {x + 3 + static_cast<float>(i % 5), y + 2}});
  }
  ASSERT_TRUE(bp->add(ids, boxes));
  for (int frame = 0; frame < 3; ++frame) {
    if (frame > 0) {  // a few boxes move a little: the walk keeps the arrays current
      std::vector<sapling::Id> moved_ids;
      std::vector<sapling::Box2> moved;
      for (sapling::Id i = 0; i < 60; i += 10) {
        boxes[i].min[0] += 1.5f;
        boxes[i].max[0] += 1.5f;
        moved_ids.push_back(i);
        moved.push_back(boxes[i]);
      }
      ASSERT_TRUE(bp->move(moved_ids, moved));
    }
    bp->update();
    Lines lines;
    bp->debug_draw(lines);
    EXPECT_TRUE(lines.swaps_reported);
    // A frame finished by recomputing (the first, a batch of additions)
    // leaves the arrays stale until the next walk: then nothing is drawn.
    if (frame == 0 && lines.order.empty()) continue;
    ASSERT_EQ(lines.mins.size(), boxes.size()) << "frame " << frame;
    ASSERT_EQ(lines.maxs.size(), boxes.size()) << "frame " << frame;
    EXPECT_TRUE(std::is_sorted(lines.order.begin(), lines.order.end())) << "frame " << frame;
    std::vector<std::array<float, 4>> want_mins, want_maxs;
    for (std::size_t i = 0; i < boxes.size(); ++i) {
      const sapling::Box2& b = boxes[i];
      want_mins.push_back({b.min[0], b.min[1], b.max[1], float(ids[i])});
      want_maxs.push_back({b.max[0], b.min[1], b.max[1], float(ids[i])});
    }
    std::sort(want_mins.begin(), want_mins.end());
    std::sort(want_maxs.begin(), want_maxs.end());
    std::sort(lines.mins.begin(), lines.mins.end());
    std::sort(lines.maxs.begin(), lines.maxs.end());
    EXPECT_EQ(lines.mins, want_mins) << "frame " << frame;
    EXPECT_EQ(lines.maxs, want_maxs) << "frame " << frame;
  }
  // An algorithm without a structure to show draws nothing.
  auto brute = sapling::BroadPhase::create("brute", options);
  ASSERT_TRUE(brute->add(ids, boxes));
  brute->update();
  Lines none;
  brute->debug_draw(none);
  EXPECT_TRUE(none.order.empty());
  EXPECT_FALSE(none.swaps_reported);
}

namespace sapling {
namespace {

// sap keeps no copy of the boxes: it reads unchanged ones from the store
// the BroadPhase hands it (FrameOps::store), or from a copy of its own when
// driven without one (live_boxes.hpp). Driven directly both ways, forcing
// each path, its pairs are the brute-force ones every frame
// (store_driver.hpp).
TEST(SapBoxes, ReadFromTheStoreOrItsOwnCopy) {
  for (const bool with_store : {false, true}) {
    for (const std::string path : {"auto", "walk", "batch", "search"}) {
      SCOPED_TRACE(std::string(with_store ? "store, " : "own copy, ") + path);
      Options options;
      options.settings = "path=" + path;
      const std::unique_ptr<Algorithm> sap = detail::make_sap(options);
      drive_through_store(*sap, with_store);
    }
  }
}

}  // namespace
}  // namespace sapling
