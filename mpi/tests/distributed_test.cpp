// The distributed broad phase against the single-process one, run under
// mpirun on 1, 2, 3 and 4 ranks (CMakeLists.txt): every frame's delta,
// gathered on rank 0, must be byte for byte BroadPhase's, on scenarios
// (tracy with static objects and filter groups, allmoving3d, cluster, which
// collapses into one domain and spreads again) and on every adversarial
// trace kind (touching faces, points, identical boxes, infinite boxes, ids
// 0 and 2^32-1, ...), whoever owns the objects. The shares must be
// disjoint. Bad input on one rank is refused as BroadPhase refuses it, and
// an id added on two ranks refuses the frame on all, changing nothing.
//
// Every rank runs every test in the same order (each test is collective);
// only rank 0 judges what it gathered, and tells the others, so that a
// failure never leaves a rank out of a collective.
#include <gtest/gtest.h>
#include <mpi.h>

#include <functional>
#include <unordered_map>

#include "decomposition.hpp"
#include "sapling/mpi/distributed_broad_phase.hpp"
#include "scenarios/scenario.hpp"
#include "trace_generators.hpp"

namespace sapling::mpi {
namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// Who owns an id: by a hash of the id (owners scattered over space); the
// rank whose domain holds the box, at its add and, handed over, after each
// move that carries it into another domain (owners follow the
// decomposition, as a domain-decomposed code would); or hashed and handed
// about at random, a quarter of the frame's moved and added objects each
// frame.
enum class Owners { kHashed, kSpatial, kHandedAbout };

class Replay {
 public:
  Replay(int dims, Owners owners, std::string_view reference = "brute") : owners_(owners) {
    Options options;
    options.dims = dims;
    Status why;
    dist_ = DistributedBroadPhase::create(MPI_COMM_WORLD, "auto", options, &why);
    EXPECT_NE(dist_, nullptr) << why.message();
    ref_ = BroadPhase::create(reference, options);
  }

  // Stages `f` on both (each rank its own ids), updates, and compares the
  // gathered delta with the reference's on rank 0. Returns whether equal.
  bool frame(const TraceFrame& f) {
    stage(f);
    const FrameDelta& mine = dist_->update();
    EXPECT_TRUE(mine.status) << mine.status.message();
    EXPECT_TRUE(std::is_sorted(mine.created.begin(), mine.created.end()));
    EXPECT_TRUE(std::is_sorted(mine.deleted.begin(), mine.deleted.end()));
    const FrameDelta& ref = ref_->update();
    std::vector<Pair> created, deleted;
    dist_->gather(0, created, deleted);
    // The shares are disjoint: the gathered sizes add up.
    std::size_t shares[2] = {mine.created.size(), mine.deleted.size()}, total[2] = {0, 0};
    MPI_Reduce(shares, total, 2, MPI_UNSIGNED_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    bool same = true;
    if (world_rank() == 0) {
      same = std::equal(created.begin(), created.end(), ref.created.begin(), ref.created.end()) &&
             std::equal(deleted.begin(), deleted.end(), ref.deleted.begin(), ref.deleted.end()) &&
             std::adjacent_find(created.begin(), created.end()) == created.end() &&
             std::adjacent_find(deleted.begin(), deleted.end()) == deleted.end() && total[0] == created.size() &&
             total[1] == deleted.size();
      EXPECT_TRUE(same) << "frame " << ref_->frame() << ": created " << created.size() << " (reference "
                        << ref.created.size() << "), deleted " << deleted.size() << " (reference " << ref.deleted.size()
                        << ")";
    }
    // Every rank learns rank 0's judgement, so that all stop together.
    int agreed = same ? 1 : 0;
    MPI_Bcast(&agreed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return agreed != 0;
  }

  // Every pair overlapping, gathered, against the reference's.
  void check_pairs() {
    std::vector<Pair> all, expected;
    dist_->gather_pairs(0, all);
    if (world_rank() != 0) return;
    ref_->sorted_pairs(expected);
    EXPECT_EQ(all, expected);
  }

  DistributedBroadPhase& dist() { return *dist_; }
  BroadPhase& ref() { return *ref_; }
  int owner(Id id) const { return owner_.at(id); }

 private:
  bool mine(Id id) const { return owner_.at(id) == world_rank(); }

  void stage(const TraceFrame& f) {
    for (std::size_t k = 0; k < f.added.size(); ++k) {
      const Id id = f.added[k];
      owner_[id] = owners_ == Owners::kSpatial ? dist_->domain_rank(f.added_boxes[k])
                                               : static_cast<int>((id * 2654435761u) % world_size());
    }
    EXPECT_TRUE(stage_share(*dist_, f, [&](Id id) { return mine(id); }));
    for (const Id id : f.removed) owner_.erase(id);
    // Hand-overs: every rank decides the same, the owner stages them.
    std::vector<Id> ids;
    std::vector<int> to;
    const auto hand = [&](Id id, int rank) {
      if (rank == owner_.at(id)) return;
      if (mine(id)) ids.push_back(id), to.push_back(rank);
      owner_[id] = rank;
    };
    if (owners_ == Owners::kSpatial) {
      for (std::size_t k = 0; k < f.moved.size(); ++k) hand(f.moved[k], dist_->domain_rank(f.moved_boxes[k]));
    } else if (owners_ == Owners::kHandedAbout) {
      const auto about = [&](Id id) {
        const std::uint64_t h = (id ^ (ref_->frame() * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
        if ((h >> 40) % 4 == 0) hand(id, static_cast<int>((h >> 20) % static_cast<std::uint64_t>(world_size())));
      };
      for (const Id id : f.moved) about(id);
      for (const Id id : f.added) about(id);
      for (const Id id : f.filtered) about(id);
    }
    EXPECT_TRUE(dist_->hand_over(ids, to));
    // The reference takes the whole frame.
    EXPECT_TRUE(ref_->remove(f.removed));
    EXPECT_TRUE(ref_->move(f.moved, f.moved_boxes));
    for (std::size_t k = 0; k < f.added.size(); ++k) {
      EXPECT_TRUE(ref_->add(f.added[k], f.added_boxes[k], f.added_filter(k),
                            f.added_is_static(k) ? Motion::kStatic : Motion::kDynamic));
    }
    EXPECT_TRUE(ref_->set_filter(f.filtered, f.filters));
  }

  Owners owners_;
  std::unique_ptr<DistributedBroadPhase> dist_;
  std::unique_ptr<BroadPhase> ref_;
  std::unordered_map<Id, int> owner_;
};

void replay_trace(const Trace& trace, Owners owners, std::span<const Box3> plan = {}) {
  Replay replay(trace.dims, owners);
  if (!plan.empty()) replay.dist().plan_domains(plan);
  for (const TraceFrame& f : trace.frames) {
    if (!replay.frame(f)) break;
  }
  replay.check_pairs();
}

// The adversarial kinds, 2D and 3D, owners hashed and spatial.
class TraceKinds : public ::testing::TestWithParam<std::tuple<testgen::TraceKind, int, Owners>> {};

TEST_P(TraceKinds, GatheredDeltaIsBroadPhases) {
  const auto [kind, dims, owners] = GetParam();
  replay_trace(testgen::make_trace(kind, testgen::GenParams{dims, 7, 0, 0}), owners);
}

INSTANTIATE_TEST_SUITE_P(Distributed, TraceKinds,
                         ::testing::Combine(::testing::ValuesIn(testgen::kAllTraceKinds), ::testing::Values(2, 3),
                                            ::testing::Values(Owners::kHashed, Owners::kSpatial, Owners::kHandedAbout)),
                         [](const auto& param_info) {
                           const auto& p = param_info.param;
                           return std::string(testgen::trace_kind_name(std::get<0>(p))) + "_" +
                                  std::to_string(std::get<1>(p)) + "d_" +
                                  (std::get<2>(p) == Owners::kHashed    ? "hashed"
                                   : std::get<2>(p) == Owners::kSpatial ? "spatial"
                                                                        : "handed_about");
                         });

// Domains cut exactly on the grid's faces: planned from points at integer
// coordinates, so that every cut is an integer, where the integer grid's
// boxes touch. A pair touching across a cut belongs to the high side.
TEST(Borders, FacesOnDomainBorders) {
  for (const int dims : {2, 3}) {
    std::vector<Box3> points;
    for (int i = 0; i < 600; ++i) {
      const float x = static_cast<float>(i % 11), y = static_cast<float>((i / 11) % 9),
                  z = dims == 2 ? 0.0f : static_cast<float>(i % 7);
      points.push_back(Box3{{x, y, z}, {x, y, z}});
    }
    std::vector<Box3> mine;  // each rank passes its share of the plan
    for (std::size_t k = static_cast<std::size_t>(world_rank()); k < points.size(); k += world_size())
      mine.push_back(points[k]);
    {  // the cuts are integers: the grid's faces
      Options options;
      options.dims = dims;
      auto planned = DistributedBroadPhase::create(MPI_COMM_WORLD, "auto", options);
      planned->plan_domains(mine);
      int finite = 0;
      for (int r = 0; r < world_size(); ++r) {
        const Box3 d = planned->domain(r);
        for (int k = 0; k < 3; ++k) {
          for (const float bound : {d.min[k], d.max[k]}) {
            if (!std::isfinite(bound)) continue;
            ++finite;
            EXPECT_EQ(bound, std::floor(bound));
          }
        }
      }
      EXPECT_EQ(finite > 0, world_size() > 1);
    }
    replay_trace(testgen::make_trace(testgen::TraceKind::kGrid, testgen::GenParams{dims, 11, 400, 40}),
                 Owners::kSpatial, mine);
  }
}

// A world smaller than the ranks: most ranks own nothing and most domains
// are empty; then the world empties and fills again.
TEST(Borders, EmptyRanksAndAnEmptyWorld) {
  Replay replay(3, Owners::kSpatial);
  TraceFrame one;
  one.added = {0};
  one.added_boxes = {testgen::cube(0, 0, 0, 1)};
  ASSERT_TRUE(replay.frame(one));
  TraceFrame two;
  two.added = {std::numeric_limits<Id>::max()};
  two.added_boxes = {testgen::cube(0.5f, 0.5f, 0.5f, 0)};
  two.moved = {0};
  two.moved_boxes = {testgen::cube(0.25f, 0, 0, 1)};
  ASSERT_TRUE(replay.frame(two));
  TraceFrame none;
  none.removed = {0, std::numeric_limits<Id>::max()};
  ASSERT_TRUE(replay.frame(none));
  ASSERT_TRUE(replay.frame(TraceFrame{}));
  TraceFrame again;
  for (Id id = 0; id < 5; ++id)
    again.added.push_back(id), again.added_boxes.push_back(testgen::cube(id * 0.5f, 0, 0, 1));
  ASSERT_TRUE(replay.frame(again));
  replay.check_pairs();
}

void replay_scenario(ScenarioParams params, int frames, Owners owners, std::size_t* redraws = nullptr,
                     double* worst_imbalance = nullptr) {
  std::unique_ptr<Scenario> scenario = make_scenario(params);
  ASSERT_NE(scenario, nullptr);
  Replay replay(scenario->dims(), owners, "sap");
  for (int t = 0; t < frames; ++t) {
    if (t > 0) scenario->step();
    if (!replay.frame(scenario_frame(*scenario))) break;
    if (redraws != nullptr) *redraws += replay.dist().stats().redrawn;
    if (worst_imbalance != nullptr && t > 0)
      *worst_imbalance = std::max(*worst_imbalance, replay.dist().stats().imbalance());
    if (t % 10 == 9) replay.check_pairs();
  }
}

TEST(Scenarios, TracyWithStaticsAndFilterGroups) {
  ScenarioParams params;
  params.name = "tracy";
  params.n = 3000;
  params.static_pm = 300;
  params.groups = 4;
  params.regroup_pm = 20;
  replay_scenario(params, 30, Owners::kHandedAbout);
}

TEST(Scenarios, TracyOwnersFollowingTheDomains) {
  ScenarioParams params;
  params.name = "tracy";
  params.n = 3000;
  replay_scenario(params, 30, Owners::kSpatial);
}

TEST(Scenarios, Allmoving3d) {
  ScenarioParams params;
  params.name = "allmoving3d";
  params.n = 2000;
  replay_scenario(params, 25, Owners::kHashed);
}

// The world gathers into one domain and spreads again: the domains are
// redrawn as the load drifts, and pairs cross domains all the while.
TEST(Scenarios, ClusterCollapsesAndSpreads) {
  ScenarioParams params;
  params.name = "cluster";
  params.n = 3000;
  params.cycle = 40;
  std::size_t redraws = 0;
  double worst = 1.0;
  replay_scenario(params, 60, Owners::kHashed, &redraws, &worst);
  if (world_size() > 1) {
    EXPECT_GE(redraws, 1u);
    // The load stays even as the world gathers: the most loaded rank holds
    // at most 1.5x the mean (a redraw follows a drift past 1.25x).
    EXPECT_LE(worst, 1.5) << "redraws " << redraws;
    if (world_rank() == 0) std::printf("cluster: %zu redraws, worst imbalance %.2f\n", redraws, worst);
  }
}

// A staging call refused on one rank: the same Status as BroadPhase's,
// nothing staged, and the frame goes on for every rank.
TEST(Refusals, BadInputOnOneRankAsBroadPhase) {
  Replay replay(3, Owners::kHashed);
  TraceFrame f;
  for (Id id = 0; id < 40; ++id) {
    f.added.push_back(id);
    f.added_boxes.push_back(testgen::cube(static_cast<float>(id % 7), static_cast<float>(id / 7), 0, 1.5f));
  }
  ASSERT_TRUE(replay.frame(f));
  const int last = world_size() - 1;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<Id> bad_ids = {1000, 1001};
  const std::vector<Box3> bad_boxes = {testgen::cube(0, 0, 0, 1), Box3{{0, nan, 0}, {1, 1, 1}}};
  const std::vector<Box3> inverted = {Box3{{2, 0, 0}, {1, 1, 1}}};
  if (world_rank() == last) {
    auto check = BroadPhase::create("brute");
    const Status expected = check->add(bad_ids, bad_boxes);
    const Status got = replay.dist().add(bad_ids, bad_boxes);
    EXPECT_EQ(got.code(), StatusCode::kInvalidBox);
    EXPECT_EQ(got.message(), expected.message());
    EXPECT_EQ(got.index(), 1u);
    EXPECT_FALSE(replay.dist().contains(1000));
    // A move of an id this rank does not own is an unknown id here.
    const Id stranger = 12345;
    const Box3 fine = testgen::cube(1, 1, 1, 1);
    EXPECT_EQ(replay.dist().move({&stranger, 1}, inverted).code(), StatusCode::kInvalidBox);
    EXPECT_EQ(replay.dist().move(stranger, fine).code(), StatusCode::kUnknownId);
    // Two operations on one id in a frame.
    Id own = 0;
    while (replay.owner(own) != last) ++own;
    EXPECT_TRUE(replay.dist().remove({&own, 1}));
    const Status repeated = replay.dist().move(own, fine);
    EXPECT_EQ(repeated.code(), StatusCode::kRepeatedId);
    replay.dist().drop_staged();
  }
  // The next frame (nothing staged) changes nothing, on any rank.
  ASSERT_TRUE(replay.frame(TraceFrame{}));
  replay.check_pairs();
}

// hand_over(): refusals change nothing; a hand-over moves the object to its
// new owner with no pair change.
TEST(HandOver, RefusalsAndTheNewOwner) {
  auto dist = DistributedBroadPhase::create(MPI_COMM_WORLD);
  const int me = world_rank(), next = (world_rank() + 1) % world_size();
  const Id a = static_cast<Id>(10 * me), b = a + 1, c = a + 2;
  EXPECT_TRUE(
      dist->add(std::vector<Id>{a, b, c},
                std::vector<Box3>{testgen::cube(0, 0, 0, 1), testgen::cube(0.5f, 0, 0, 1), testgen::cube(5, 5, 5, 1)}));
  EXPECT_TRUE(dist->update().status);
  const Id stranger = 9999;
  EXPECT_EQ(dist->hand_over(a, world_size()).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(dist->hand_over(a, -1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(dist->hand_over(stranger, next).code(), StatusCode::kUnknownId);
  EXPECT_EQ(dist->hand_over(std::vector<Id>{b, b}, std::vector<int>{next, next}).code(), StatusCode::kRepeatedId);
  EXPECT_EQ(dist->hand_over(std::vector<Id>{b}, std::vector<int>{next, next}).code(), StatusCode::kSizeMismatch);
  EXPECT_TRUE(dist->remove(c));
  EXPECT_EQ(dist->hand_over(c, next).code(), StatusCode::kRepeatedId);
  EXPECT_TRUE(dist->move(a, testgen::cube(0.25f, 0, 0, 1)));
  EXPECT_TRUE(dist->hand_over(a, next));  // after a move of the same frame
  EXPECT_EQ(dist->hand_over(a, next).code(), StatusCode::kRepeatedId);
  EXPECT_EQ(dist->remove(a).code(), StatusCode::kRepeatedId);
  const FrameDelta& d = dist->update();
  EXPECT_TRUE(d.status);
  std::vector<Pair> created, deleted;
  dist->gather(0, created, deleted);
  if (world_rank() == 0) {
    std::vector<Pair> expected;  // the c (all the same cube) part; every a still meets every b
    for (int r = 0; r < world_size(); ++r)
      for (int q = r + 1; q < world_size(); ++q) expected.push_back(Pair{Id(10 * r + 2), Id(10 * q + 2)});
    EXPECT_TRUE(created.empty());
    EXPECT_EQ(deleted, expected);
  }
  const int previous = (world_rank() + world_size() - 1) % world_size();
  const Id theirs = static_cast<Id>(10 * previous);
  EXPECT_EQ(dist->contains(a), world_size() == 1);
  EXPECT_TRUE(dist->contains(theirs));
  EXPECT_EQ(dist->box(theirs), testgen::cube(0.25f, 0, 0, 1));
  // The new owner moves it; the old one no longer may.
  EXPECT_TRUE(dist->move(theirs, testgen::cube(3, 3, 3, 1)));
  if (world_size() > 1) {
    EXPECT_EQ(dist->move(a, testgen::cube(0, 0, 0, 1)).code(), StatusCode::kUnknownId);
  }
  EXPECT_TRUE(dist->update().status);
  dist->gather(0, created, deleted);
  if (world_rank() == 0) {
    std::vector<Pair> expected;  // every a, moved to one cube away from the b, left every b
    for (int r = 0; r < world_size(); ++r)
      for (int q = 0; q < world_size(); ++q) expected.push_back(make_pair(Id(10 * r), Id(10 * q + 1)));
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(deleted, expected);
    EXPECT_TRUE(created.empty());  // the a still meet each other
  }
}

// One id added on two ranks: every rank's update() refuses the frame with
// the same Status, and nothing changes anywhere.
TEST(Refusals, IdAddedOnTwoRanksRefusesTheFrameEverywhere) {
  if (world_size() < 2) GTEST_SKIP() << "needs two ranks";
  auto dist = DistributedBroadPhase::create(MPI_COMM_WORLD);
  const Id own = static_cast<Id>(100 + world_rank());
  EXPECT_TRUE(dist->add(own, testgen::cube(0, 0, 0, 1)));
  EXPECT_TRUE(dist->update().status);
  // Ranks 0 and 1 both add id 7; every rank adds one more of its own.
  const Id extra = static_cast<Id>(200 + world_rank());
  EXPECT_TRUE(dist->add(extra, testgen::cube(0.5f, 0, 0, 1)));
  if (world_rank() <= 1) {
    EXPECT_TRUE(dist->add(Id{7}, testgen::cube(0, 0.5f, 0, 1)));
  }
  const FrameDelta& refused = dist->update();
  EXPECT_EQ(refused.status.code(), StatusCode::kDuplicateId);
  EXPECT_EQ(refused.status.id(), 7u);
  EXPECT_TRUE(refused.created.empty());
  EXPECT_FALSE(dist->contains(extra));
  EXPECT_FALSE(dist->contains(7));
  std::vector<Pair> all;
  dist->gather_pairs(0, all);
  if (world_rank() == 0) {
    std::vector<Pair> expected;  // the first frame's cubes, all overlapping at the origin
    for (int a = 0; a < world_size(); ++a)
      for (int b = a + 1; b < world_size(); ++b) expected.push_back(Pair{Id(100 + a), Id(100 + b)});
    EXPECT_EQ(all, expected);
  }
  // Removed by its owner while another rank adds it: a repeated id.
  if (world_rank() == 0) {
    EXPECT_TRUE(dist->remove(Id{100}));
  }
  if (world_rank() == 1) {
    EXPECT_TRUE(dist->add(Id{100}, testgen::cube(0, 0, 0, 1)));
  }
  EXPECT_EQ(dist->update().status.code(), StatusCode::kRepeatedId);
  // Added on one rank while live on another.
  if (world_rank() == 1) {
    EXPECT_TRUE(dist->add(Id{100}, testgen::cube(0, 0, 0, 1)));
  }
  EXPECT_EQ(dist->update().status.code(), StatusCode::kDuplicateId);
  EXPECT_EQ(dist->contains(100), world_rank() == 0);
  // And a good frame after them all.
  EXPECT_TRUE(dist->add(extra, testgen::cube(0.5f, 0, 0, 1)));
  const FrameDelta& good = dist->update();
  EXPECT_TRUE(good.status);
  std::vector<Pair> created, deleted;
  dist->gather(0, created, deleted);
  if (world_rank() == 0) {
    EXPECT_EQ(created.size(),
              static_cast<std::size_t>(world_size() * world_size() + world_size() * (world_size() - 1) / 2));
    EXPECT_TRUE(deleted.empty());
  }
}

// Moves staged in a frame that is refused, or dropped with drop_staged(),
// leave nothing behind: the next frame's moves are paired as themselves.
TEST(Refusals, RefusedAndDroppedMovesLeaveNothingBehind) {
  auto dist = DistributedBroadPhase::create(MPI_COMM_WORLD);
  const int r = world_rank();
  const float x = 10.0f * static_cast<float>(r);
  const Id a = static_cast<Id>(100 + r), b = static_cast<Id>(300 + r), c = static_cast<Id>(500 + r);
  EXPECT_TRUE(dist->add(a, testgen::cube(x, 0, 0, 1)));
  EXPECT_TRUE(dist->add(b, testgen::cube(x, 5, 0, 1)));
  EXPECT_TRUE(dist->add(c, testgen::cube(x, 10, 0, 1)));
  EXPECT_TRUE(dist->update().status);
  const auto expect_delta = [&](bool created_ab) {
    std::vector<Pair> created, deleted, ab;
    dist->gather(0, created, deleted);
    if (r != 0) return;
    for (int q = 0; q < world_size(); ++q) ab.push_back(Pair{Id(100 + q), Id(300 + q)});
    EXPECT_EQ(created, created_ab ? ab : std::vector<Pair>{});
    EXPECT_EQ(deleted, created_ab ? std::vector<Pair>{} : ab);
  };
  if (world_size() >= 2) {
    // A frame refused (id 7 added on two ranks) with a move of each b...
    EXPECT_TRUE(dist->move(b, testgen::cube(x, 7, 0, 1)));
    if (r <= 1) {
      EXPECT_TRUE(dist->add(Id{7}, testgen::cube(x, 20, 0, 1)));
    }
    EXPECT_EQ(dist->update().status.code(), StatusCode::kDuplicateId);
  }
  // ... then each a moves onto its b.
  EXPECT_TRUE(dist->move(a, testgen::cube(x, 5.5f, 0, 1)));
  EXPECT_TRUE(dist->update().status);
  expect_delta(true);
  // A move of each c dropped, then each a moves back.
  EXPECT_TRUE(dist->move(c, testgen::cube(x, 12, 0, 1)));
  dist->drop_staged();
  EXPECT_TRUE(dist->move(a, testgen::cube(x, 0, 0, 1)));
  EXPECT_TRUE(dist->update().status);
  expect_delta(false);
}

TEST(Creation, RefusesWhatIsSingleProcessOnly) {
  Status why;
  Options budget;
  budget.max_pairs = 10;
  EXPECT_EQ(DistributedBroadPhase::create(MPI_COMM_WORLD, "auto", budget, &why), nullptr);
  EXPECT_NE(why.message().find("max_pairs"), std::string::npos);
  EXPECT_EQ(DistributedBroadPhase::create(MPI_COMM_WORLD, "unisize", {}, &why), nullptr);
  EXPECT_EQ(DistributedBroadPhase::create(MPI_COMM_WORLD, "no-such", {}, &why), nullptr);
  EXPECT_NE(DistributedBroadPhase::create(MPI_COMM_WORLD, "multi-sap"), nullptr);
}

// The decomposition alone: a partition of space, even shares.
TEST(Decomposition, PartitionsSpaceAndSplitsTheWeight) {
  testgen::Rng rng(3);
  std::vector<detail::Sample> samples;
  for (int i = 0; i < 1000; ++i)
    samples.push_back({{rng.uniform(0, 100), rng.uniform(0, 10), rng.uniform(0, 1)}, 1.0f});
  for (const int ranks : {1, 2, 3, 4, 7}) {
    const detail::Decomposition d = detail::Decomposition::bisect(samples, ranks, 3);
    std::vector<int> count(static_cast<std::size_t>(ranks));
    for (const auto& s : samples) ++count[static_cast<std::size_t>(d.rank_of(s.centre))];
    for (int r = 0; r < ranks; ++r) {
      EXPECT_NEAR(count[static_cast<std::size_t>(r)], 1000.0 / ranks, 2.0 + 1000.0 / ranks * 0.02) << ranks;
    }
    // Every point in exactly one domain; a box meets exactly the domains
    // for_each_rank() lists, and the one holding each of its corners.
    for (int i = 0; i < 500; ++i) {
      const Box3 b = testgen::uniform_box(rng, 120);
      std::vector<int> listed, met;
      d.for_each_rank(b, [&](int r) { listed.push_back(r); });
      for (int r = 0; r < ranks; ++r)
        if (d.meets(b, r)) met.push_back(r);
      EXPECT_EQ(listed, met);
      const int home = d.rank_of({b.min[0], b.min[1], b.min[2]});
      EXPECT_TRUE(std::find(listed.begin(), listed.end(), home) != listed.end());
    }
  }
}

// Every point lies in exactly one domain, the one rank_of() names, for
// drawings from few samples (empty sides, ties on the cut) and for
// redrawings that follow them.
TEST(Decomposition, DomainsPartitionSpaceForFewSamples) {
  testgen::Rng rng(9);
  const auto check = [&](const detail::Decomposition& d, const char* what, int trial) {
    for (int p = 0; p < 200; ++p) {
      const std::array<float, 3> point{static_cast<float>(rng.range(-2, 12)), static_cast<float>(rng.range(-2, 12)),
                                       static_cast<float>(rng.range(-2, 12))};
      const Box3 box{point, point};
      int holders = 0;
      for (int r = 0; r < d.ranks(); ++r) holders += d.meets(box, r);
      EXPECT_EQ(holders, 1) << what << " trial " << trial;
      EXPECT_TRUE(d.meets(box, d.rank_of(point))) << what << " trial " << trial;
      // A box: the walk lists exactly the domains it meets.
      const Box3 wide = testgen::grid_box(rng, 12, 4);
      std::vector<int> listed, met;
      d.for_each_rank(wide, [&](int r) { listed.push_back(r); });
      for (int r = 0; r < d.ranks(); ++r)
        if (d.meets(wide, r)) met.push_back(r);
      EXPECT_EQ(listed, met) << what << " trial " << trial;
    }
  };
  for (int trial = 0; trial < 300; ++trial) {
    const int ranks = rng.range(2, 5);
    std::vector<detail::Sample> samples, later;
    for (int i = rng.range(0, 12); i > 0; --i)
      samples.push_back({{static_cast<float>(rng.range(0, 10)), static_cast<float>(rng.range(0, 10)),
                          static_cast<float>(rng.range(0, 10))},
                         1.0f});
    for (int i = rng.range(0, 12); i > 0; --i)
      later.push_back({{static_cast<float>(rng.range(0, 10)), static_cast<float>(rng.range(0, 10)),
                        static_cast<float>(rng.range(0, 10))},
                       1.0f});
    const detail::Decomposition d = detail::Decomposition::bisect(samples, ranks, 3);
    check(d, "bisect", trial);
    check(detail::Decomposition::shifted(d, later, 3, 0.05), "shifted", trial);
    check(detail::Decomposition::shifted(detail::Decomposition(ranks), later, 3, 0.5), "shifted from none", trial);
  }
}

// A redrawing moves few objects at a time, and arrives where a drawing
// from scratch would.
TEST(Decomposition, ShiftedMovesAStepAtATime) {
  testgen::Rng rng(5);
  std::vector<detail::Sample> spread, gathered;
  for (int i = 0; i < 2000; ++i) {
    spread.push_back({{rng.uniform(0, 100), rng.uniform(0, 100), rng.uniform(0, 100)}, 1.0f});
    gathered.push_back({{rng.uniform(60, 70), rng.uniform(0, 100), rng.uniform(0, 100)}, 1.0f});
  }
  for (const int ranks : {2, 3, 4}) {
    detail::Decomposition d = detail::Decomposition::bisect(spread, ranks, 3);
    const detail::Decomposition goal = detail::Decomposition::bisect(gathered, ranks, 3);
    for (int step = 0; step < 200; ++step) {
      const detail::Decomposition next = detail::Decomposition::shifted(d, gathered, 3, 0.05);
      std::size_t changed = 0;
      for (const auto& s : gathered) changed += next.rank_of(s.centre) != d.rank_of(s.centre);
      // Each of the ranks - 1 cuts moves past at most 5% of the samples beside it.
      EXPECT_LE(changed, static_cast<std::size_t>(0.05 * 2000 * (ranks - 1)) + ranks) << ranks << " step " << step;
      if (next == d) break;
      d = next;
    }
    std::vector<int> count(static_cast<std::size_t>(ranks)), goal_count(count.size());
    for (const auto& s : gathered) ++count[static_cast<std::size_t>(d.rank_of(s.centre))];
    for (const auto& s : gathered) ++goal_count[static_cast<std::size_t>(goal.rank_of(s.centre))];
    for (int r = 0; r < ranks; ++r) EXPECT_NEAR(count[r], goal_count[r], 0.02 * 2000 + 2) << ranks;
  }
}

}  // namespace
}  // namespace sapling::mpi

// MPI around GoogleTest; on ranks other than 0 only failures are printed.
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (sapling::mpi::world_rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    struct FailuresOnly : ::testing::EmptyTestEventListener {
      void OnTestPartResult(const ::testing::TestPartResult& r) override {
        if (r.failed())
          std::fprintf(stderr, "rank %d: %s:%d: %s\n", sapling::mpi::world_rank(), r.file_name() ? r.file_name() : "",
                       r.line_number(), r.summary());
      }
    };
    listeners.Append(new FailuresOnly);
  }
  const int failed = RUN_ALL_TESTS();
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
