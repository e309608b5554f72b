// The pair manager against a std::set model: contents, contiguity, and the
// created/deleted bookkeeping of Terdiman 2007, I.6, including the cases that
// must report nothing (added then removed in one frame, and the reverse).
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "sapling/pair_manager.hpp"

namespace sapling {
namespace {

struct Delta {
  std::vector<Pair> created, deleted;
};

Delta end_frame(PairManager& pm) {
  Delta d;
  pm.end_frame(d.created, d.deleted);
  std::sort(d.created.begin(), d.created.end());
  std::sort(d.deleted.begin(), d.deleted.end());
  EXPECT_TRUE(pm.validate());
  return d;
}

std::vector<Pair> sorted(std::span<const Pair> pairs) {
  std::vector<Pair> v(pairs.begin(), pairs.end());
  std::sort(v.begin(), v.end());
  return v;
}

// Ends the frame: its delta must lead from the model's set `before` to
// `after`, and the manager must hold `after`.
void end_frame_as_model(PairManager& pm, const std::set<Pair>& before, const std::set<Pair>& after) {
  const Delta d = end_frame(pm);
  std::vector<Pair> created, deleted;
  std::set_difference(after.begin(), after.end(), before.begin(), before.end(), std::back_inserter(created));
  std::set_difference(before.begin(), before.end(), after.begin(), after.end(), std::back_inserter(deleted));
  ASSERT_EQ(d.created, created);
  ASSERT_EQ(d.deleted, deleted);
  ASSERT_EQ(sorted(pm.pairs()), std::vector<Pair>(after.begin(), after.end()));
}

TEST(PairManager, AddFindRemove) {
  PairManager pm;
  pm.add(9, 7);
  pm.add(7, 9);  // same pair, either order
  pm.add(0, 4294967295u);
  EXPECT_TRUE(pm.contains(7, 9));
  EXPECT_TRUE(pm.contains(9, 7));
  EXPECT_FALSE(pm.contains(7, 8));
  Delta d = end_frame(pm);
  EXPECT_EQ(d.created, (std::vector<Pair>{{0, 4294967295u}, {7, 9}}));
  EXPECT_TRUE(d.deleted.empty());
  EXPECT_EQ(pm.size(), 2u);

  pm.remove(9, 7);
  pm.remove(9, 7);  // idempotent
  pm.remove(1, 2);  // absent: nothing
  EXPECT_FALSE(pm.contains(7, 9));
  d = end_frame(pm);
  EXPECT_TRUE(d.created.empty());
  EXPECT_EQ(d.deleted, (std::vector<Pair>{{7, 9}}));
  EXPECT_EQ(sorted(pm.pairs()), (std::vector<Pair>{{0, 4294967295u}}));
}

// A frame that creates 70,000 pairs (a level loaded at once) leaves its
// lists that room; an empty list given to a later frame that reports a few
// gets it back, where a list with pairs in it keeps what it holds, and room
// the frame may fill stays (no allocation in steady frames).
TEST(PairManager, RoomOfAMassInsertionsDeltaGoesWhenFramesReportLittle) {
  PairManager pm;
  constexpr Id kPairs = 70'000;
  for (Id i = 0; i < kPairs; ++i) pm.add(2 * i, 2 * i + 1);
  std::vector<Pair> created, deleted, kept_created;
  pm.end_frame(created, deleted);
  ASSERT_EQ(created.size(), kPairs);
  kept_created = created;
  const std::size_t room = created.capacity();
  created.clear();
  pm.remove(0, 1);
  pm.end_frame(kept_created, deleted);  // not empty: appended to
  EXPECT_EQ(kept_created.size(), kPairs);
  EXPECT_GE(kept_created.capacity(), kPairs);
  pm.add(0, 1);
  pm.end_frame(created, deleted);
  EXPECT_EQ(created, (std::vector<Pair>{{0, 1}}));
  EXPECT_LT(created.capacity(), room / 16);
  EXPECT_EQ(deleted, (std::vector<Pair>{{0, 1}}));
  // A frame that touches every pair may report every pair: the room stays.
  created.clear(), deleted.clear();
  created.reserve(kPairs);
  const Pair* const room_start = created.data();
  for (Id i = 0; i < kPairs; ++i) pm.remove(2 * i, 2 * i + 1);
  pm.end_frame(created, deleted);
  EXPECT_TRUE(created.empty());
  EXPECT_EQ(deleted.size(), kPairs);
  EXPECT_EQ(created.data(), room_start);
  EXPECT_TRUE(pm.validate());
}

TEST(PairManager, AddedThenRemovedInOneFrameReportsNothing) {
  PairManager pm;
  pm.add(1, 2);
  pm.remove(1, 2);
  Delta d = end_frame(pm);
  EXPECT_TRUE(d.created.empty() && d.deleted.empty());
  EXPECT_EQ(pm.size(), 0u);
}

TEST(PairManager, RemovedThenAddedInOneFrameReportsNothing) {
  PairManager pm;
  pm.add(1, 2);
  end_frame(pm);
  pm.remove(1, 2);
  pm.add(2, 1);
  Delta d = end_frame(pm);
  EXPECT_TRUE(d.created.empty() && d.deleted.empty());
  EXPECT_TRUE(pm.contains(1, 2));
}

TEST(PairManager, RemoveAllThenReassertIsADiff) {
  PairManager pm;
  for (Id i = 0; i < 10; ++i) pm.add(i, i + 100);
  end_frame(pm);
  pm.remove_all();
  for (Id i = 0; i < 10; i += 2) pm.add(i, i + 100);
  pm.add(50, 51);
  Delta d = end_frame(pm);
  EXPECT_EQ(d.created, (std::vector<Pair>{{50, 51}}));
  EXPECT_EQ(d.deleted, (std::vector<Pair>{{1, 101}, {3, 103}, {5, 105}, {7, 107}, {9, 109}}));
  EXPECT_EQ(pm.size(), 6u);
}

TEST(PairManager, RemoveIfInvolves) {
  PairManager pm;
  pm.add(1, 2);
  pm.add(2, 3);
  pm.add(3, 4);
  end_frame(pm);
  pm.remove_if_involves([](Id id) { return id == 2; });
  Delta d = end_frame(pm);
  EXPECT_EQ(d.deleted, (std::vector<Pair>{{1, 2}, {2, 3}}));
  EXPECT_EQ(sorted(pm.pairs()), (std::vector<Pair>{{3, 4}}));
}

// `count` random add() or remove() calls on pm, mirrored in the model.
void random_changes(PairManager& pm, std::set<Pair>& model, std::mt19937& rng, std::uniform_int_distribution<Id>& id,
                    int count) {
  for (int k = 0; k < count; ++k) {
    const Id x = id(rng), y = id(rng);
    if (x == y) continue;
    if (rng() % 2) {
      pm.add(x, y);
      model.insert(make_pair(x, y));
    } else {
      pm.remove(x, y);
      model.erase(make_pair(x, y));
    }
  }
}

// Random frames of adds and removes against a model; thousands of pairs so
// the hash table grows, and heavy removal so backward-shift deletion runs.
TEST(PairManager, MatchesModelOnRandomFrames) {
  for (const unsigned seed : {1u, 2u, 3u}) {
    SCOPED_TRACE(testing::Message() << "seed " << seed);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<Id> id(0, 300);
    PairManager pm;
    std::set<Pair> model;
    for (int frame = 0; frame < 60; ++frame) {
      SCOPED_TRACE(testing::Message() << "frame " << frame);
      std::set<Pair> next = model;
      random_changes(pm, next, rng, id, 1 + static_cast<int>(rng() % 3000));
      end_frame_as_model(pm, model, next);
      if (testing::Test::HasFatalFailure()) return;
      model = next;
    }
  }
}

// assign() against the model, in frames that mix it with add()/remove()
// frames, two assign() calls in one frame, an assign() after add() in the
// same frame, add() and remove() after assign() (kept or abandoned), and contains() while the index waits to be
// rebuilt. Ids up to 200, 100,000 and 2^32 - 1: assign() sorts keys packed to the ids' width.
TEST(PairManager, AssignMatchesModel) {
  for (const auto& [seed, top] :
       {std::pair{4u, Id{200}}, std::pair{5u, Id{200}}, std::pair{6u, Id{100000}}, std::pair{7u, ~Id{0}}}) {
    SCOPED_TRACE(testing::Message() << "seed " << seed << " ids up to " << top);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<Id> id(top > 1000 ? top - 1000 : 0, top);
    PairManager pm;
    std::set<Pair> model;
    auto random_set = [&] {
      std::set<Pair> set;
      const int count = static_cast<int>(rng() % 2000);
      for (int k = 0; k < count; ++k) {
        const Id x = id(rng), y = id(rng);
        if (x != y) set.insert(make_pair(x, y));
      }
      // Keep about half of the current pairs, as a moving scene does.
      for (const Pair& p : model) {
        if (rng() % 2) set.insert(p);
      }
      return set;
    };
    auto assign = [&](const std::set<Pair>& set) {
      std::vector<Pair> v(set.begin(), set.end());
      std::shuffle(v.begin(), v.end(), rng);
      pm.assign(v);
      if (rng() % 2) pm.build_index();  // now or at the next call that needs it: the same frame
    };
    for (int frame = 0; frame < 80; ++frame) {
      SCOPED_TRACE(testing::Message() << "frame " << frame);
      std::set<Pair> next = model;
      // After an assign(), add() and remove(): some restore pairs it
      // deleted, some delete pairs it created (each cancels out).
      auto changes_after_assign = [&] {
        random_changes(pm, next, rng, id, 100);
        for (const Pair& p : model) {
          if (!next.count(p) && rng() % 2) pm.add(p.a, p.b), next.insert(p);
        }
        std::vector<Pair> fresh;
        for (const Pair& p : next) {
          if (!model.count(p) && rng() % 2) fresh.push_back(p);
        }
        for (const Pair& p : fresh) pm.remove(p.a, p.b), next.erase(p);
      };
      switch (rng() % 6) {
        case 0:  // incremental changes
          random_changes(pm, next, rng, id, 300);
          break;
        case 1:  // one assign
          next = random_set();
          assign(next);
          break;
        case 2:  // two in one frame: the delta is from the frame's start
          assign(random_set());
          next = random_set();
          assign(next);
          break;
        case 3: {  // add() first, then assign(): the general way
          const Id x = id(rng), y = x == top ? x - 1 : x + 1;
          pm.add(x, y);
          next = random_set();
          assign(next);
          break;
        }
        case 4:  // assign(), then add() and remove()
          next = random_set();
          assign(next);
          changes_after_assign();
          break;
        case 5:  // the same, abandoned: the previous frame's set again
          next = random_set();
          assign(next);
          changes_after_assign();
          pm.abandon_frame();
          next = model;
          break;
      }
      end_frame_as_model(pm, model, next);
      if (testing::Test::HasFatalFailure()) return;
      for (int k = 0; k < 50; ++k) {
        const Id x = id(rng), y = id(rng);
        if (x == y) continue;
        ASSERT_EQ(pm.contains(x, y), next.count(make_pair(x, y)) == 1);
      }
      model = next;
    }
  }
}

// Held pairs (add_held()) against a model: the pairs with an id from 1,000
// up are held, as the BroadPhase holds its pairs with static objects. Each
// frame changes some of them with add_held() and remove(), then recomputes
// the others (assign(), or remove_all() and add(), or remove_if_involves()
// and add()), sometimes abandoned; now and then every pair goes
// (remove_all(Held::kRemoved)) and all come back. Incremental frames leave
// the set unsorted, so that assign() sorts it, its flags with it.
TEST(PairManager, HeldPairsSurviveRecomputations) {
  constexpr Id kFirstHeld = 1000;
  std::mt19937 rng(11);
  std::uniform_int_distribution<Id> dynamic(0, 150), held_id(kFirstHeld, kFirstHeld + 150);
  PairManager pm;
  std::set<Pair> model;
  const auto is_held = [&](const Pair& p) { return p.b >= kFirstHeld; };
  for (int frame = 0; frame < 200; ++frame) {
    SCOPED_TRACE(testing::Message() << "frame " << frame);
    std::set<Pair> next = model;
    // The held pairs' own changes.
    for (int k = 0; k < 40; ++k) {
      const Pair p = make_pair(dynamic(rng), held_id(rng));
      if (rng() % 2) {
        pm.add_held(p.a, p.b), next.insert(p);
      } else {
        pm.remove(p.a, p.b), next.erase(p);
      }
    }
    // The others, recomputed or changed.
    std::set<Pair> others;
    for (const Pair& p : next) {
      if (!is_held(p) && rng() % 4 != 0) others.insert(p);
    }
    for (int k = 0; k < 60; ++k) {
      const Id x = dynamic(rng), y = dynamic(rng);
      if (x != y) others.insert(make_pair(x, y));
    }
    const auto take_others = [&] {
      std::erase_if(next, [&](const Pair& p) { return !is_held(p); });
      next.insert(others.begin(), others.end());
    };
    switch (rng() % 5) {
      case 0: {
        std::vector<Pair> v(others.begin(), others.end());
        std::shuffle(v.begin(), v.end(), rng);
        pm.assign(v);
        take_others();
        break;
      }
      case 1:
        pm.remove_all();
        for (const Pair& p : others) pm.add(p.a, p.b);
        take_others();
        break;
      case 2: {  // the objects of some ids moved: their pairs dropped, the current ones added
        const Id moved = dynamic(rng);
        pm.remove_if_involves([&](Id id) { return id % 7 == moved % 7; });
        std::erase_if(next,
                      [&](const Pair& p) { return !is_held(p) && (p.a % 7 == moved % 7 || p.b % 7 == moved % 7); });
        for (const Pair& p : others) {
          if (p.a % 7 == moved % 7 || p.b % 7 == moved % 7) pm.add(p.a, p.b), next.insert(p);
        }
        break;
      }
      case 3: {  // abandoned after an assign() and more changes
        std::vector<Pair> v(others.begin(), others.end());
        pm.assign(v);
        pm.add_held(1, kFirstHeld + 200);
        pm.remove(1, 2);
        pm.abandon_frame();
        next = model;
        break;
      }
      case 4:  // every pair goes; the held ones come back by add_held()
        pm.remove_all(PairManager::Held::kRemoved);
        for (const Pair& p : next) {
          if (is_held(p)) pm.add_held(p.a, p.b);
        }
        for (const Pair& p : others) pm.add(p.a, p.b);
        take_others();
        break;
    }
    end_frame_as_model(pm, model, next);
    if (testing::Test::HasFatalFailure()) return;
    model = next;
  }
}

}  // namespace
}  // namespace sapling
