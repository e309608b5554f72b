// The persistent interface: validation that names what and why, batches
// taken whole or not at all, the frame rules (one operation per id per
// frame, removals free ids at update()), the registry and the factory.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "core/broad_phase/object_table.hpp"
#include "sapling/broad_phase.hpp"
#include "sapling/registry.hpp"

namespace sapling {
namespace {

const Box3 kUnit{{0, 0, 0}, {1, 1, 1}};
const Box3 kHalfUp{{0.5f, 0.5f, 0.5f}, {1.5f, 1.5f, 1.5f}};  // a translate of kUnit: every algorithm takes it
const Box3 kFar{{10, 10, 10}, {11, 11, 11}};

std::unique_ptr<BroadPhase> make(const char* name = "brute") {
  auto bp = BroadPhase::create(name);
  EXPECT_NE(bp, nullptr);
  return bp;
}

std::vector<Pair> all_pairs(const BroadPhase& bp) {
  std::vector<Pair> out;
  bp.sorted_pairs(out);
  return out;
}

TEST(BroadPhase, FactoryKnowsTheBuiltIns) {
  EXPECT_NE(BroadPhase::create("brute"), nullptr);
  EXPECT_NE(BroadPhase::create("sort-sweep"), nullptr);
  EXPECT_EQ(BroadPhase::create("no-such-algorithm"), nullptr);
  ASSERT_GE(algorithms().size(), 2u);
  EXPECT_EQ(algorithms()[0].name, "brute");
  for (const AlgorithmInfo& info : algorithms()) EXPECT_FALSE(info.description.empty());
}

TEST(BroadPhase, ContractExample) {
  auto bp = make("sort-sweep");
  ASSERT_TRUE(bp->add(7, kUnit));
  ASSERT_TRUE(bp->add(9, kHalfUp));
  EXPECT_FALSE(bp->contains(7));  // staged, not live before update()
  FrameDelta d = bp->update();
  EXPECT_EQ(std::vector<Pair>(d.created.begin(), d.created.end()), (std::vector<Pair>{{7, 9}}));
  EXPECT_TRUE(bp->contains(7));
  ASSERT_TRUE(bp->move(7, Box3{{1.5f, 0, 0}, {2.5f, 1, 1}}));
  d = bp->update();
  EXPECT_TRUE(d.created.empty() && d.deleted.empty());
  ASSERT_TRUE(bp->remove(9));
  d = bp->update();
  EXPECT_EQ(std::vector<Pair>(d.deleted.begin(), d.deleted.end()), (std::vector<Pair>{{7, 9}}));
  EXPECT_EQ(bp->size(), 1u);
  EXPECT_EQ(bp->frame(), 3u);
}

TEST(BroadPhase, RefusalsNameTheOperationIdIndexAndReason) {
  auto bp = make();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<Id> ids = {1, 2, 3};
  std::vector<Box3> boxes = {kUnit, kUnit, Box3{{0, 0, 0}, {1, nan, 1}}};
  Status s = bp->add(ids, boxes);
  EXPECT_EQ(s.code(), StatusCode::kInvalidBox);
  EXPECT_EQ(s.id(), 3u);
  EXPECT_EQ(s.index(), 2u);
  EXPECT_EQ(s.message(), "add of id 3: invalid box: max.y is NaN");

  s = bp->add(std::vector<Id>{1, 2}, std::vector<Box3>{kUnit});
  EXPECT_EQ(s.code(), StatusCode::kSizeMismatch);

  s = bp->add(std::vector<Id>{1, 2, 1}, std::vector<Box3>{kUnit, kUnit, kUnit});
  EXPECT_EQ(s.code(), StatusCode::kRepeatedId);
  EXPECT_EQ(s.index(), 2u);

  EXPECT_EQ(bp->move(5, kUnit).code(), StatusCode::kUnknownId);
  EXPECT_EQ(bp->remove(5).code(), StatusCode::kUnknownId);

  ASSERT_TRUE(bp->add(5, kUnit));
  EXPECT_EQ(bp->move(5, kUnit).code(), StatusCode::kRepeatedId);  // added this frame
  EXPECT_EQ(bp->remove(5).code(), StatusCode::kRepeatedId);
  bp->update();
  EXPECT_EQ(bp->add(5, kUnit).code(), StatusCode::kDuplicateId);
  ASSERT_TRUE(bp->remove(5));
  EXPECT_EQ(bp->add(5, kUnit).code(), StatusCode::kRepeatedId);  // re-add in the frame that removes it
  EXPECT_EQ(bp->move(5, kUnit).code(), StatusCode::kRepeatedId);
  bp->update();
  EXPECT_FALSE(bp->contains(5));
  EXPECT_TRUE(bp->add(5, kUnit));  // a later frame may reuse the id
}

// A refused batch changes nothing: the broad phase then behaves exactly like
// a twin that never saw the call.
TEST(BroadPhase, RefusedBatchLeavesNoTrace) {
  for (const AlgorithmInfo& info : algorithms()) {
    SCOPED_TRACE(info.name);
    auto bp = make(info.name.c_str());
    auto twin = make(info.name.c_str());
    for (BroadPhase* p : {bp.get(), twin.get()}) {
      ASSERT_TRUE(p->add(std::vector<Id>{1, 2, 3}, std::vector<Box3>{kUnit, kHalfUp, kFar}));
      p->update();
    }
    // Each refused call stages part of its batch before the bad element.
    EXPECT_FALSE(bp->add(std::vector<Id>{10, 11, 2}, std::vector<Box3>{kUnit, kUnit, kUnit}));
    EXPECT_FALSE(bp->move(std::vector<Id>{1, 3, 99}, std::vector<Box3>{kFar, kUnit, kUnit}));
    EXPECT_FALSE(bp->remove(std::vector<Id>{1, 2, 2}));
    EXPECT_FALSE(bp->move(std::vector<Id>{3, 3}, std::vector<Box3>{kUnit, kUnit}));
    for (BroadPhase* p : {bp.get(), twin.get()}) {
      ASSERT_TRUE(p->move(std::vector<Id>{3}, std::vector<Box3>{kUnit}));
      ASSERT_TRUE(p->add(std::vector<Id>{10}, std::vector<Box3>{kHalfUp}));
      ASSERT_TRUE(p->remove(std::vector<Id>{2}));
    }
    const FrameDelta d = bp->update();
    const FrameDelta t = twin->update();
    EXPECT_TRUE(std::equal(d.created.begin(), d.created.end(), t.created.begin(), t.created.end()));
    EXPECT_TRUE(std::equal(d.deleted.begin(), d.deleted.end(), t.deleted.begin(), t.deleted.end()));
    EXPECT_EQ(all_pairs(*bp), all_pairs(*twin));
    EXPECT_EQ(all_pairs(*bp), (std::vector<Pair>{{1, 3}, {1, 10}, {3, 10}}));
    EXPECT_EQ(bp->size(), twin->size());
  }
}

// The object table's 16-bit stamps repeat every kStampPeriod frames; the
// frame that reaches a multiple of it clears them, so a stamp from the
// period before never passes for the frame's own (a second operation on
// an id would be refused, or a staged one missed).
TEST(ObjectTable, StampsRepeatOnlyOnceEveryStampIsCleared) {
  using detail::frame_stamp;
  using detail::kStampPeriod;
  EXPECT_EQ(frame_stamp(0), 1u);
  EXPECT_EQ(frame_stamp(kStampPeriod - 1), 0xffffu);
  EXPECT_EQ(frame_stamp(kStampPeriod), frame_stamp(0));
  detail::ObjectTable table;
  table.reserve_slots(2);
  table.allocate();
  table.allocate();
  table.stamps = {frame_stamp(0), frame_stamp(kStampPeriod - 1)};
  std::uint64_t frame = kStampPeriod - 2;
  table.advance(frame);
  EXPECT_EQ(frame, kStampPeriod - 1);
  EXPECT_EQ(table.stamps, (std::vector<detail::Stamp>{frame_stamp(0), frame_stamp(kStampPeriod - 1)}));
  table.advance(frame);  // frame kStampPeriod: stamped like frame 0
  EXPECT_EQ(table.stamps, (std::vector<detail::Stamp>{0, 0}));
  EXPECT_NE(table.stamps[0], frame_stamp(frame));
}

// The same through a broad phase, across the frames where the stamps are
// cleared: an object moved in the frames around each multiple of the
// period takes one move a frame, and a second move in the same frame is
// refused, as in any other frame.
TEST(BroadPhase, OneMoveAFrameAcrossTheStampsPeriod) {
  auto bp = make("sap");
  const std::vector<Id> ids{4, 9};
  ASSERT_TRUE(bp->add(ids, std::vector<Box3>{Box3{{0, 0, 0}, {1, 1, 1}}, Box3{{5, 0, 0}, {6, 1, 1}}}));
  bp->update();
  std::uint64_t frame = 1;
  for (; frame < 2 * detail::kStampPeriod + 3; ++frame) {
    const bool near_the_period = (frame + 2) % detail::kStampPeriod < 5;
    if (near_the_period || frame % 4096 == 0) {
      const float x = static_cast<float>(frame % 7);
      const std::vector<Id> one{4};
      ASSERT_TRUE(bp->move(one, std::vector<Box3>{Box3{{x, 0, 0}, {x + 1, 1, 1}}})) << "frame " << frame;
      const Status again = bp->move(one, std::vector<Box3>{Box3{{x, 0, 0}, {x + 1, 1, 1}}});
      ASSERT_EQ(again.code(), StatusCode::kRepeatedId) << "frame " << frame;
    }
    // Id 9 was last stamped in frame 0, whose stamp each multiple of the period repeats.
    if (frame % detail::kStampPeriod == 0) {
      ASSERT_TRUE(bp->move(std::vector<Id>{9}, std::vector<Box3>{Box3{{5, 0, 0}, {6, 1, 1}}})) << "frame " << frame;
    }
    bp->update();
  }
  EXPECT_TRUE(bp->validate());
}

TEST(BroadPhase, FrameWithoutOperationsReportsNothing) {
  auto bp = make("sort-sweep");
  ASSERT_TRUE(bp->add(std::vector<Id>{1, 2}, std::vector<Box3>{kUnit, kHalfUp}));
  bp->update();
  for (int i = 0; i < 3; ++i) {
    const FrameDelta d = bp->update();
    EXPECT_TRUE(d.created.empty() && d.deleted.empty());
  }
  EXPECT_EQ(all_pairs(*bp), (std::vector<Pair>{{1, 2}}));
}

TEST(BroadPhase, TwoDimensionalBoxes) {
  auto bp = BroadPhase::create("sort-sweep", Options{.dims = 2});
  ASSERT_TRUE(bp->add(std::vector<Id>{0, 4294967295u}, std::vector<Box2>{{{0, 0}, {1, 1}}, {{1, 1}, {2, 2}}}));
  FrameDelta d = bp->update();
  ASSERT_EQ(d.created.size(), 1u);
  EXPECT_EQ(d.created[0], (Pair{0, 4294967295u}));
  ASSERT_TRUE(bp->move(0, Box2{{-1, -1}, {0.5f, 0.5f}}));
  d = bp->update();
  ASSERT_EQ(d.deleted.size(), 1u);
}

TEST(BroadPhase, RemovingAnObjectDeletesAllItsPairs) {
  auto bp = make("sort-sweep");
  ASSERT_TRUE(bp->add(std::vector<Id>{1, 2, 3, 4}, std::vector<Box3>{kUnit, kUnit, kUnit, kFar}));
  bp->update();
  ASSERT_TRUE(bp->remove(std::vector<Id>{2}));
  const FrameDelta d = bp->update();
  EXPECT_EQ(std::vector<Pair>(d.deleted.begin(), d.deleted.end()), (std::vector<Pair>{{1, 2}, {2, 3}}));
  EXPECT_EQ(all_pairs(*bp), (std::vector<Pair>{{1, 3}}));
}

TEST(BroadPhase, UserAlgorithmsJoinTheRegistry) {
  struct Nothing final : Algorithm {
    Reported update(const FrameOps&, std::span<const Id>, PairManager&) override { return Reported::kChanges; }
  };
  EXPECT_TRUE(register_algorithm({"test-nothing", "finds nothing", [](const Options&) {
                                    return std::unique_ptr<Algorithm>(std::make_unique<Nothing>());
                                  }}));
  EXPECT_FALSE(register_algorithm({"brute", "duplicate", nullptr}));
  auto bp = BroadPhase::create("test-nothing");
  ASSERT_NE(bp, nullptr);
  EXPECT_EQ(bp->algorithm_name(), "test-nothing");
}

}  // namespace
}  // namespace sapling

namespace sapling {
namespace {

TEST(Status, NamesOfCodesAndOperations) {
  EXPECT_STREQ(status_code_name(StatusCode::kOk), "ok");
  EXPECT_STREQ(status_code_name(StatusCode::kInvalidBox), "invalid_box");
  EXPECT_STREQ(status_code_name(StatusCode::kRepeatedId), "repeated_id");
  EXPECT_STREQ(status_code_name(StatusCode::kPairBudget), "pair_budget");
  EXPECT_STREQ(operation_name(Operation::kNone), "call");
  EXPECT_STREQ(operation_name(Operation::kRegister), "register_algorithm");
  EXPECT_STREQ(operation_name(Operation::kUpdate), "update");
  // message() uses the same names.
  EXPECT_EQ(Status::id_error(StatusCode::kUnknownId, Operation::kMove, 7, 0).message(), "move of id 7: id is not live");
}

}  // namespace
}  // namespace sapling
