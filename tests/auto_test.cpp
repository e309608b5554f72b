// `auto` (src/algorithms/auto/auto_select.cpp): workloads that force it to switch
// (all moving, few moving, one size, a box of another size, growth to a
// large world), checked every frame against a reference (delta and whole
// pair set), with the algorithm it runs, its switches and the objects it
// hands over per frame read through its debug draw. The rule alone
// (auto_policy.hpp) is tested as a function.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "algorithms/auto/auto_policy.hpp"
#include "sapling/broad_phase.hpp"

namespace sapling {
namespace {

// What auto says of itself through the debug draw.
struct AutoState : DebugDraw {
  std::string algorithm, runs, handovers;
  std::uint64_t switches = 0, handed_over = 0;
  void text(std::string_view name, std::string_view value) override {
    if (name == "algorithm") algorithm = value;
    if (name == "runs") runs = value;
    if (name == "handovers") handovers = value;
  }
  void count(std::string_view name, std::uint64_t value) override {
    if (name == "switches") switches = value;
    if (name == "handed over") handed_over = value;
  }
};

AutoState state_of(const BroadPhase& bp) {
  AutoState state;
  bp.debug_draw(state);
  return state;
}

// A world of boxes driven frame by frame; every frame goes to `auto` and to
// the reference, which must agree.
class World {
 public:
  World(std::string reference, unsigned threads, std::uint32_t seed)
      : rng_(seed),
        auto_(BroadPhase::create("auto", Options{.threads = threads})),
        reference_(BroadPhase::create(reference)) {}

  // A box of side `size` at a random place; flat: z = [0, 0]. Places and
  // steps are multiples of 1/64 (exact in float arithmetic: every box an
  // exact translate of the first, as unisize's fast path wants), unless
  // set_rounding() asks for any float.
  Box3 random_box(float size, bool flat) {
    std::uniform_real_distribution<float> at(0.0f, extent_);
    const float x = snap(at(rng_)), y = snap(at(rng_)), z = flat ? 0.0f : snap(at(rng_));
    return Box3{{x, y, z}, {x + size, y + size, flat ? 0.0f : z + size}};
  }

  void add(std::size_t count, float size, bool flat) {
    for (std::size_t i = 0; i < count; ++i) {
      added_.push_back(next_id_++);
      added_boxes_.push_back(random_box(size, flat));
    }
  }

  // Moves `share` of the live objects by a small step, keeping their size
  // (or setting it to `size` when given).
  void move(double share, float size = 0) {
    std::uniform_real_distribution<float> step(-0.5f, 0.5f);
    std::bernoulli_distribution moves(share);
    for (std::size_t i = 0; i < live_.size(); ++i) {
      if (!moves(rng_)) continue;
      Box3 b = boxes_[i];
      const float dx = snap(step(rng_)), dy = snap(step(rng_));
      b.min[0] += dx, b.max[0] += dx, b.min[1] += dy, b.max[1] += dy;
      if (size > 0) b.max[0] = b.min[0] + size;
      boxes_[i] = b;
      moved_.push_back(live_[i]);
      moved_boxes_.push_back(b);
    }
  }

  // Stages one box to a new size (a move; the only one of the frame).
  void resize(std::size_t index, float side) {
    Box3 b = boxes_[index];
    b.max[0] = b.min[0] + side;
    b.max[1] = b.min[1] + side;
    boxes_[index] = b;
    moved_.push_back(live_[index]);
    moved_boxes_.push_back(b);
  }

  // Stages one box put down into the plane z = 0 (a move).
  void flatten(std::size_t index) {
    Box3 b = boxes_[index];
    b.min[2] = b.max[2] = 0.0f;
    boxes_[index] = b;
    moved_.push_back(live_[index]);
    moved_boxes_.push_back(b);
  }

  // Runs the staged frame on both and compares; returns auto's state.
  AutoState step() {
    for (BroadPhase* bp : {auto_.get(), reference_.get()}) {
      EXPECT_TRUE(bp->move(moved_, moved_boxes_).ok());
      EXPECT_TRUE(bp->add(added_, added_boxes_).ok());
    }
    const FrameDelta& r = reference_->update();
    const std::vector<Pair> r_created(r.created.begin(), r.created.end()),
        r_deleted(r.deleted.begin(), r.deleted.end());
    const FrameDelta& d = auto_->update();
    EXPECT_EQ(std::vector<Pair>(d.created.begin(), d.created.end()), r_created) << "frame " << frame_;
    EXPECT_EQ(std::vector<Pair>(d.deleted.begin(), d.deleted.end()), r_deleted) << "frame " << frame_;
    std::vector<Pair> got, expected;
    auto_->sorted_pairs(got);
    reference_->sorted_pairs(expected);
    EXPECT_EQ(got, expected) << "frame " << frame_;
    EXPECT_TRUE(auto_->validate()) << "frame " << frame_;
    live_.insert(live_.end(), added_.begin(), added_.end());
    boxes_.insert(boxes_.end(), added_boxes_.begin(), added_boxes_.end());
    moved_.clear(), moved_boxes_.clear(), added_.clear(), added_boxes_.clear();
    ++frame_;
    return state_of(*auto_);
  }

  std::size_t size() const { return live_.size(); }
  void set_extent(float extent) { extent_ = extent; }
  void set_rounding(bool on) { rounding_ = on; }

 private:
  std::mt19937 rng_;
  std::unique_ptr<BroadPhase> auto_, reference_;
  std::vector<Id> live_;
  std::vector<Box3> boxes_;
  std::vector<Id> moved_, added_;
  std::vector<Box3> moved_boxes_, added_boxes_;
  Id next_id_ = 1;
  float extent_ = 100.0f;
  bool rounding_ = false;
  int frame_ = 0;

  float snap(float v) const { return rounding_ ? v : std::floor(v * 64.0f) / 64.0f; }
};

TEST(AutoPolicy, ChoosesByTheWorkload) {
  using detail::Workload;
  // The product line as the registry hands it to auto.
  const detail::Candidates candidates = detail::product_line();
  const auto choose = [&](const Workload& w, std::string_view current) {
    return detail::choose(w, current, candidates);
  };
  // A new world starts on sap, whatever it holds.
  EXPECT_EQ(
      choose(Workload{.live = 5000, .one_size = true, .exact_size = true, .flat = true, .first_frame = true}, "").name,
      "sap");
  EXPECT_EQ(choose(Workload{.live = 5000, .one_size = true, .first_frame = true}, "").name, "sap");
  // In 3D sap stays, most boxes moving or few, in a large world or not.
  const detail::Choice seen = choose(Workload{.live = 5000, .moved_share = 0.9, .new_world = true}, "sap");
  EXPECT_EQ(seen.name, "sap");
  EXPECT_FALSE(seen.urgent);
  EXPECT_EQ(choose(Workload{.live = 1'000'000, .moved_share = 0.001}, "sap").name, "sap");
  EXPECT_EQ(choose(Workload{.live = 200'000, .moved_share = 0.01}, "sap").name, "sap");
  EXPECT_EQ(choose(Workload{.live = 5000, .moved_share = 0.1}, "sap").name, "sap");
  // In a plane, most moving: a recomputing algorithm, at once after a new world's first frame.
  const Workload overlapping{.live = 5000,
                             .moved_share = 0.9,
                             .one_size = true,
                             .exact_size = true,
                             .flat = true,
                             .pairs_per_box = 0.7,
                             .new_world = true};
  const detail::Choice particles = choose(overlapping, "sap");
  EXPECT_EQ(particles.name, "unisize");
  EXPECT_TRUE(particles.urgent);
  // ... sparse ones (fewer than kUnisizeOverlaps pairs a box) box-pruning, unisize keeping them down to
  // kStillUnisizeOverlaps.
  Workload sparse = overlapping;
  sparse.pairs_per_box = 0.55;
  EXPECT_EQ(choose(sparse, "sap").name, "box-pruning");
  EXPECT_EQ(choose(sparse, "unisize").name, "unisize");
  sparse.pairs_per_box = 0.45;
  EXPECT_EQ(choose(sparse, "unisize").name, "box-pruning");
  // ... and in a plane of a million, from kLargeUnisizeOverlaps (kept down to kStillLargeUnisizeOverlaps).
  Workload large = overlapping;
  large.live = 1'000'000;
  large.pairs_per_box = 0.95;
  EXPECT_EQ(choose(large, "sap").name, "box-pruning");
  EXPECT_EQ(choose(large, "unisize").name, "unisize");
  large.pairs_per_box = 1.1;
  EXPECT_EQ(choose(large, "sap").name, "unisize");
  // ... but boxes of one size only up to rounding go to box-pruning (unisize's slower path would be 1.5x).
  const detail::Choice rounded =
      choose(Workload{.live = 5000, .moved_share = 0.9, .one_size = true, .flat = true, .new_world = true}, "sap");
  EXPECT_EQ(rounded.name, "box-pruning");
  EXPECT_TRUE(rounded.urgent);
  EXPECT_EQ(choose(Workload{.live = 5000, .moved_share = 0.9, .one_size = true, .flat = true}, "unisize").name,
            "box-pruning");
  EXPECT_TRUE(choose(Workload{.live = 5000, .moved_share = 0.9, .flat = true, .new_world = true}, "sap").urgent);
  EXPECT_EQ(choose(Workload{.live = 5000, .moved_share = 0.9, .flat = true}, "sap").name, "dual-axis");
  EXPECT_FALSE(choose(Workload{.live = 5000, .moved_share = 0.9, .flat = true}, "sap").urgent);
  // ... few moving in a plane: sap.
  EXPECT_EQ(
      choose(Workload{.live = 90'000, .moved_share = 0.01, .one_size = true, .exact_size = true, .flat = true}, "sap")
          .name,
      "sap");
  EXPECT_EQ(detail::hold_frames("dual-axis", candidates), detail::kHoldFrames);
  EXPECT_EQ(detail::hold_frames("sap", candidates), detail::kTrackingHoldFrames);
  // Hysteresis: a recomputing algorithm stays down to kStillMostMove.
  EXPECT_EQ(choose(Workload{.live = 5000, .moved_share = 0.3, .flat = true}, "dual-axis").name, "dual-axis");
  EXPECT_EQ(choose(Workload{.live = 5000, .moved_share = 0.3, .flat = true}, "sap").name, "sap");
  EXPECT_EQ(choose(Workload{.live = 5000, .moved_share = 0.2, .flat = true}, "dual-axis").name, "sap");
  EXPECT_EQ(choose(Workload{.live = 5000, .moved_share = 0.4}, "box-pruning").name, "box-pruning");
  EXPECT_EQ(choose(Workload{.live = 5000, .moved_share = 0.2}, "box-pruning").name, "sap");
  const detail::Choice mass = choose(Workload{.live = 20'000, .mass_insertion = true}, "dual-axis");
  EXPECT_EQ(mass.name, "box-pruning");
  EXPECT_TRUE(mass.urgent);
  // sap lays a mass insertion out itself: no switch, no handover back.
  EXPECT_EQ(choose(Workload{.live = 20'000, .mass_insertion = true}, "sap").name, "sap");
}

// One size in a plane, all moving, then a box of another size, then one
// size again, then few moving: sap (a new world), unisize, sap (forced),
// dual-axis, unisize, sap.
void run_switches(unsigned threads) {
  World w("brute", threads, 7);
  w.set_extent(60.0f);  // about 1.7 pairs a box: overlapping enough for unisize
  w.add(3000, 1.0f, true);
  EXPECT_EQ(w.step().algorithm, "sap");  // a new world
  for (int f = 0; f < 3; ++f) {
    w.move(1.0);
    EXPECT_EQ(w.step().algorithm, "unisize");
  }
  w.resize(17, 3.0f);  // unisize would refuse it: sap at once
  EXPECT_EQ(w.step().algorithm, "sap");
  std::string seen;
  for (int f = 0; f < 4; ++f) {
    w.move(1.0);
    seen = w.step().algorithm;
  }
  EXPECT_EQ(seen, "dual-axis");  // all moving, flat, two sizes
  w.resize(17, 1.0f);
  w.step();
  for (int f = 0; f < 4; ++f) {
    w.move(1.0);
    seen = w.step().algorithm;
  }
  EXPECT_EQ(seen, "unisize");  // one size again
  AutoState state;
  for (int f = 0; f < detail::kTrackingHoldFrames + 2; ++f) {
    w.move(0.02);
    state = w.step();
  }
  EXPECT_EQ(state.algorithm, "sap");  // few moving: handed over to sap
  EXPECT_GE(state.switches, 4u);
}

TEST(Auto, SwitchesAndAgreesWithBrute) { run_switches(1); }

// Squares of one size in a plane, all moving by float steps, so that their
// bounds round (one size only up to rounding, as a program moving its
// boxes has them): unisize would take its slower path, and auto runs
// box-pruning from the frame the motion is seen; every frame as brute
// force says.
TEST(Auto, ParticlesOfOneSizeUpToRoundingGoToBoxPruning) {
  World w("brute", 1, 17);
  w.set_rounding(true);
  w.add(3000, 1.0f, true);
  EXPECT_EQ(w.step().algorithm, "sap");
  for (int f = 0; f < 6; ++f) {
    w.move(1.0);
    EXPECT_EQ(w.step().algorithm, "box-pruning") << "frame " << f;
  }
}

// Exact squares, all moving, but sparse (0.24 pairs a box): box pruning's
// sweep, not unisize's; then a mass insertion crowds them (1.2 pairs a
// box): unisize at once, and it keeps them.
TEST(Auto, SparseParticlesGoToBoxPruning) {
  World w("brute", 1, 23);
  w.add(1200, 1.0f, true);
  w.step();
  std::string seen;
  for (int f = 0; f < 3; ++f) {
    w.move(1.0);
    seen = w.step().algorithm;
    EXPECT_EQ(seen, "box-pruning") << "frame " << f;
  }
  w.add(4800, 1.0f, true);  // five times the squares on the same ground
  EXPECT_EQ(w.step().algorithm, "unisize");
  for (int f = 0; f < 3; ++f) {
    w.move(1.0);
    seen = w.step().algorithm;
  }
  EXPECT_EQ(seen, "unisize");
}

// Exact squares, all moving (unisize), start to round (box-pruning), then
// are put back on exact sizes (unisize again): the counts of boxes off the
// reference follow every change both ways, checked by validate() each frame.
TEST(Auto, ParticlesThatRoundLeaveUnisizeAndComeBack) {
  World w("brute", 1, 19);
  w.set_extent(60.0f);
  w.add(3000, 1.0f, true);
  w.step();
  const auto run = [&w](int frames, const auto& stage) {
    std::string seen;
    for (int f = 0; f < frames; ++f) {
      stage();
      seen = w.step().algorithm;
    }
    return seen;
  };
  EXPECT_EQ(run(3, [&w] { w.move(1.0); }), "unisize");
  w.set_rounding(true);
  EXPECT_EQ(run(3, [&w] { w.move(1.0); }), "box-pruning");
  w.set_rounding(false);
  EXPECT_EQ(run(3,
                [&w] {
                  for (std::size_t i = 0; i < w.size(); ++i) w.resize(i, 1.0f);
                }),
            "unisize");
}

// Sizes are followed only in a plane: a world with boxes raised off it, all
// moving, stays on sap; once the last raised box is put down, every size is
// measured again, and one size in a plane is unisize's (another size among
// them, dual-axis's).
void run_back_to_the_plane(float last_size, const std::string& expected) {
  World w("brute", 1, 13);
  w.set_extent(50.0f);
  w.add(2000, 1.0f, true);
  w.add(3, 1.0f, false);
  EXPECT_EQ(w.step().algorithm, "sap");
  for (int f = 0; f < 4; ++f) {
    w.move(1.0);
    EXPECT_EQ(w.step().algorithm, "sap");  // not flat: sap recomputes itself
  }
  w.flatten(2000);
  w.flatten(2001);
  w.resize(2002, last_size);  // still raised
  w.step();
  w.flatten(2002);
  std::string seen = w.step().algorithm;
  for (int f = 0; f < 4; ++f) {
    w.move(1.0);
    seen = w.step().algorithm;
  }
  EXPECT_EQ(seen, expected);
}

TEST(Auto, BackToThePlaneMeasuresSizesAgain) { run_back_to_the_plane(1.0f, "unisize"); }
TEST(Auto, BackToThePlaneWithAnotherSize) { run_back_to_the_plane(2.0f, "dual-axis"); }
TEST(Auto, SwitchesAndAgreesWithBruteOnTwoThreads) { run_switches(2); }

// A large plane of particles, all moving (unisize), then calming down to a
// few movers: sap, handed the world a slice per frame: no frame hands over
// more than max(kMinSlice, n / kHandoverFrames), and the handover takes
// several frames. box-pruning is the reference (brute is too slow at this
// size; box-pruning is checked against it elsewhere).
TEST(Auto, CalmingPlaneHandsTheWorldOverInSlices) {
  World w("box-pruning", 1, 11);
  w.set_extent(400.0f);
  w.add(60'000, 1.0f, true);
  EXPECT_EQ(w.step().algorithm, "sap");
  for (int f = 0; f < 3; ++f) {
    w.move(1.0);
    EXPECT_EQ(w.step().algorithm, "unisize");
  }
  std::uint64_t handed = 0;
  int handover_frames = 0;
  AutoState state;
  for (int f = 0; f < detail::kTrackingHoldFrames + 20; ++f) {
    w.move(0.01);
    state = w.step();
    const std::uint64_t now = state.handed_over - handed;
    handed = state.handed_over;
    const std::size_t bound =
        std::max(detail::kMinSlice, (w.size() + detail::kHandoverFrames - 1) / detail::kHandoverFrames);
    EXPECT_LE(now, bound) << "frame " << f;
    handover_frames += now > 0;
  }
  EXPECT_EQ(state.algorithm, "sap");
  EXPECT_GE(handover_frames, 4);
  EXPECT_EQ(state.handed_over, 60'000u);
  // What it ran, and what each switch cost, for `sapling run`.
  EXPECT_EQ(state.runs.rfind("sap 1 frame, then unisize ", 0), 0u) << state.runs;
  EXPECT_NE(state.runs.find(", then sap "), std::string::npos) << state.runs;
  EXPECT_NE(state.handovers.find("sap -> unisize at frame 1 at once, "), std::string::npos) << state.handovers;
  EXPECT_NE(state.handovers.find("unisize -> sap at frame "), std::string::npos) << state.handovers;
  EXPECT_NE(state.handovers.find(" frames, "), std::string::npos) << state.handovers;
}

// A large new world starts on sap and stays there, few of its boxes moving
// or many: sap's resting set serves the few, its own box pruning the many,
// with no handover.
void run_large_world(double moving) {
  World w("box-pruning", 1, 5);
  w.set_extent(400.0f);
  w.add(60'000, 1.0f, false);
  EXPECT_EQ(w.step().algorithm, "sap");
  AutoState state;
  for (int f = 0; f < detail::kTrackingHoldFrames + 10; ++f) {
    w.move(moving);
    state = w.step();
  }
  EXPECT_EQ(state.algorithm, "sap");
  EXPECT_EQ(state.switches, 0u);
  EXPECT_EQ(state.handed_over, 0u);
  EXPECT_EQ(state.runs, "sap " + std::to_string(detail::kTrackingHoldFrames + 11) + " frames");
}

TEST(Auto, LargeWorldAtRestStaysOnSap) { run_large_world(0.01); }
TEST(Auto, LargeWorldMovingKeepsSap) { run_large_world(0.1); }
TEST(Auto, LargeWorldAllMovingKeepsSap) { run_large_world(1.0); }

}  // namespace
}  // namespace sapling
