// The pair budget (Options::max_pairs) is on the pairs after a frame, the
// same for every algorithm: the example of a frame whose pairs trade places
// (accepted at the budget), and a frame whose algorithm adds pairs that its
// own removals cancel before the frame ends, more than the pair manager's
// room (twice the budget): the broad phase computes it again from the live
// boxes and accepts it. The differential suite checks the refused frames of
// every algorithm against an oracle (PairBudgetTest there).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sapling/algorithm.hpp"
#include "sapling/broad_phase.hpp"
#include "sapling/pair_manager.hpp"
#include "sapling/registry.hpp"

namespace sapling {
namespace {

std::vector<Pair> sorted(const BroadPhase& bp) {
  std::vector<Pair> out;
  bp.sorted_pairs(out);
  return out;
}

std::vector<Pair> listed(std::span<const Pair> pairs) { return {pairs.begin(), pairs.end()}; }

Box3 unit_at(float x) { return Box3{{x, 0, 0}, {x + 1, 1, 1}}; }

// Budget 2, frame 0 holds A-B and E-F, frame 1 moves B from A to C: two
// pairs before and after, three while the frame runs. Every algorithm
// accepts it; a frame that would leave three is refused.
TEST(PairBudget, CountsThePairsAfterTheFrame) {
  constexpr Id a = 1, b = 2, c = 3, e = 5, f = 6;
  for (const AlgorithmInfo& info : algorithms()) {
    for (const unsigned threads : {1u, 2u}) {
      SCOPED_TRACE(info.name + " threads=" + std::to_string(threads));
      auto bp = BroadPhase::create(info.name, {.threads = threads, .max_pairs = 2});
      ASSERT_NE(bp, nullptr);
      ASSERT_TRUE(bp->add(std::vector<Id>{a, b, c, e, f},
                          std::vector<Box3>{unit_at(0), unit_at(0.5f), unit_at(10), unit_at(20), unit_at(20.5f)}));
      ASSERT_TRUE(bp->update().status);
      ASSERT_EQ(sorted(*bp), (std::vector<Pair>{{a, b}, {e, f}}));
      ASSERT_TRUE(bp->move(b, unit_at(10.5f)));
      const FrameDelta& moved = bp->update();
      ASSERT_TRUE(moved.status) << moved.status.message();
      EXPECT_EQ(listed(moved.created), (std::vector<Pair>{{b, c}}));
      EXPECT_EQ(listed(moved.deleted), (std::vector<Pair>{{a, b}}));
      // Three pairs after the frame: refused, nothing changed.
      ASSERT_TRUE(bp->move(a, unit_at(10.25f)));
      const FrameDelta& refused = bp->update();
      EXPECT_EQ(refused.status.code(), StatusCode::kPairBudget);
      EXPECT_EQ(sorted(*bp), (std::vector<Pair>{{b, c}, {e, f}}));
      EXPECT_TRUE(bp->validate());
    }
  }
}

// brute, which first adds and removes a pair for every two objects that
// move (pairs it cancels before the frame ends): a frame of k movers holds
// k(k-1)/2 pairs for a while.
class TransientPairs final : public Algorithm {
 public:
  explicit TransientPairs(const Options& options) : inner_(algorithms().front().make(options)) {}
  Reported update(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) override {
    for (std::size_t i = 0; i < ops.moved.size(); ++i) {
      for (std::size_t j = i + 1; j < ops.moved.size(); ++j) pairs.add(ids[ops.moved[i]], ids[ops.moved[j]]);
    }
    for (std::size_t i = 0; i < ops.moved.size(); ++i) {
      for (std::size_t j = i + 1; j < ops.moved.size(); ++j) pairs.remove(ids[ops.moved[i]], ids[ops.moved[j]]);
    }
    return inner_->update(ops, ids, pairs);
  }

 private:
  std::unique_ptr<Algorithm> inner_;
};

TEST(PairBudget, AFrameThatOutgrowsTheRoomIsComputedAgain) {
  ASSERT_EQ(algorithms().front().name, "brute");
  ASSERT_TRUE(register_algorithm(
      {"transient-pairs", "brute after pairs it cancels",
       [](const Options& o) -> std::unique_ptr<Algorithm> { return std::make_unique<TransientPairs>(o); }}));
  // Ten boxes in a row, 9 pairs, budget 9 (room for 18): moving all ten
  // holds 45 pairs during the frame, and leaves 9.
  auto bp = BroadPhase::create("transient-pairs", {.max_pairs = 9});
  ASSERT_NE(bp, nullptr);
  std::vector<Id> ids;
  std::vector<Box3> boxes;
  for (Id i = 0; i < 10; ++i) ids.push_back(i), boxes.push_back(unit_at(float(i)));
  ASSERT_TRUE(bp->add(ids, boxes));
  ASSERT_TRUE(bp->update().status);
  const std::vector<Pair> row = sorted(*bp);
  ASSERT_EQ(row.size(), 9u);
  for (Box3& box : boxes) box.min[1] = box.max[1] = 0.5f;  // flattened, still in a row
  ASSERT_TRUE(bp->move(ids, boxes));
  const FrameDelta& moved = bp->update();
  ASSERT_TRUE(moved.status) << moved.status.message();
  EXPECT_TRUE(moved.created.empty() && moved.deleted.empty());
  EXPECT_EQ(sorted(*bp), row);
  // Spread so that only 0-1 overlaps among them, then brought together: the
  // second frame ends over budget (45 pairs) and is refused.
  for (Id i = 2; i < 10; ++i) boxes[i] = unit_at(float(10 * i));
  ASSERT_TRUE(bp->move(ids, boxes));
  ASSERT_TRUE(bp->update().status);
  EXPECT_EQ(sorted(*bp), (std::vector<Pair>{{0, 1}}));
  for (Box3& box : boxes) box = unit_at(0);
  ASSERT_TRUE(bp->move(ids, boxes));
  EXPECT_EQ(bp->update().status.code(), StatusCode::kPairBudget);
  EXPECT_EQ(sorted(*bp), (std::vector<Pair>{{0, 1}}));
  EXPECT_TRUE(bp->validate());
}

// The pair manager's own share: add() runs out of room at twice the budget,
// size_at_end() counts the pairs end_frame() would leave.
TEST(PairBudget, PairManagerRoomIsTwiceTheBudget) {
  PairManager pm;
  pm.set_budget(2);
  std::vector<Pair> created, deleted;
  pm.add(1, 2);
  pm.add(3, 4);
  pm.end_frame(created, deleted);
  pm.remove(1, 2);
  pm.remove(3, 4);
  pm.add(5, 6);
  pm.add(7, 8);
  EXPECT_EQ(pm.size_at_end(), 2u);
  EXPECT_THROW(pm.add(9, 10), PairBudgetExceeded);
  EXPECT_EQ(pm.size_at_end(), 2u);  // the refused add() changed nothing
  pm.add(1, 2);                     // present: takes no room
  EXPECT_EQ(pm.size_at_end(), 3u);
  pm.abandon_frame();
  EXPECT_EQ(pm.size_at_end(), 2u);
  EXPECT_TRUE(pm.validate());
}

}  // namespace
}  // namespace sapling
