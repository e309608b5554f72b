// The id containers the pair manager and the broad phase stand on
// (include/sapling/detail/): HashIndex, open addressing with backward-shift
// deletion, IdIndex, a direct table for small ids beside a HashIndex, and
// IdSet (src/detail/), a table of 32-bit ids behind a bitmap prefilter.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "detail/id_set.hpp"
#include "sapling/detail/hash_index.hpp"
#include "sapling/detail/id_index.hpp"
#include "sapling/pair.hpp"

namespace sapling {
namespace {

// An IdSet answers exactly as a std::set over ids of every range, sizes
// from empty to many, and after reset() holds nothing of before.
TEST(IdSet, MatchesASet) {
  std::mt19937_64 rng(3);
  detail::IdSet set;
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1000}, std::size_t{50000}}) {
    for (const Id top : {Id{100}, Id{2000000}, ~Id{0}}) {
      SCOPED_TRACE(testing::Message() << n << " ids up to " << top);
      std::uniform_int_distribution<Id> id(0, top);
      std::set<Id> model;
      set.reset(n);
      for (std::size_t k = 0; k < n; ++k) {
        const Id x = id(rng);
        model.insert(x);
        set.insert(x);
      }
      for (int k = 0; k < 20000; ++k) {
        const Id x = k % 4 == 0 && !model.empty() ? *model.lower_bound(id(rng) % (*model.rbegin() + 1)) : id(rng);
        ASSERT_EQ(set.contains(x), model.count(x) == 1) << x;
      }
      for (const Id x : model) ASSERT_TRUE(set.contains(x));
    }
  }
}

// The ends of the id range are ids like any other (~0 marks the table's
// empty slots, and is held apart), and a set given more ids than reset()
// was told grows and keeps them all.
TEST(IdSet, HoldsTheEndsOfTheRangeAndGrowsPastItsSize) {
  detail::IdSet set;
  set.reset(2);
  EXPECT_FALSE(set.contains(0));
  EXPECT_FALSE(set.contains(~Id{0}));
  set.insert(~Id{0});
  EXPECT_TRUE(set.contains(~Id{0}));
  EXPECT_FALSE(set.contains(0));
  set.insert(0);
  std::vector<Id> more;
  for (Id k = 1; k <= 5000; ++k) more.push_back(~Id{0} - k * 7919);
  for (const Id x : more) set.insert(x);
  set.insert(more[3]);  // twice: still one member
  EXPECT_TRUE(set.contains(0));
  EXPECT_TRUE(set.contains(~Id{0}));
  for (const Id x : more) ASSERT_TRUE(set.contains(x)) << x;
  for (Id k = 1; k <= 5000; ++k) ASSERT_FALSE(set.contains(~Id{0} - k * 7919 + 1));
  set.reset(1);
  EXPECT_FALSE(set.contains(~Id{0}));
  EXPECT_FALSE(set.contains(0));
  EXPECT_FALSE(set.contains(more[0]));
}

TEST(HashIndex, BackwardShiftKeepsEveryKeyReachable) {
  detail::HashIndex index;
  std::mt19937_64 rng(7);
  std::vector<std::uint64_t> keys;
  for (std::uint32_t i = 0; i < 20000; ++i) {
    keys.push_back(rng() >> 1);
    index.insert(keys.back(), i);
  }
  for (std::size_t i = 0; i < keys.size(); i += 2) ASSERT_TRUE(index.erase(keys[i]));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(index.find(keys[i]), i % 2 ? static_cast<std::uint32_t>(i) : detail::HashIndex::kNotFound);
  }
  EXPECT_EQ(index.size(), keys.size() / 2);
  EXPECT_FALSE(index.erase(keys[0]));
}

TEST(HashIndex, ResetEmptiesAndShrinks) {
  // sap's set of a frame's removed ids: reset to the frame's size, whatever
  // a larger frame left behind.
  detail::HashIndex index;
  for (std::uint32_t i = 0; i < 100000; ++i) index.insert(i, i);
  index.reset(10);
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.find(5), detail::HashIndex::kNotFound);
  for (std::uint32_t id : {7u, 70000u, 3u, 7u}) index.insert(id, 0);
  EXPECT_EQ(index.size(), 3u);
  EXPECT_NE(index.find(70000), detail::HashIndex::kNotFound);
  EXPECT_EQ(index.find(8), detail::HashIndex::kNotFound);
  for (std::uint32_t i = 0; i < 1000; ++i) index.insert(i + 1000000, i);  // grows past the reset size
  EXPECT_EQ(index.find(1000999), 999u);
  EXPECT_EQ(index.size(), 1003u);
}

TEST(HashIndex, InsertKeepsTheFirstValueAndReplaceChangesIt) {
  detail::HashIndex index;
  EXPECT_FALSE(index.replace(5, 1));  // empty: nothing to replace
  auto [value, inserted] = index.insert(5, 10);
  EXPECT_TRUE(inserted);
  EXPECT_EQ(*value, 10u);
  std::tie(value, inserted) = index.insert(5, 20);
  EXPECT_FALSE(inserted);
  EXPECT_EQ(*value, 10u);
  EXPECT_TRUE(index.replace(5, 30));
  EXPECT_EQ(index.find(5), 30u);
  EXPECT_FALSE(index.replace(6, 30));
  EXPECT_EQ(index.find(6), detail::HashIndex::kNotFound);
  EXPECT_EQ(index.size(), 1u);
}

// Ids land in the direct table or the hash index depending on when they
// arrive; an id inserted sparse must stay findable after the table grows
// past it.
TEST(IdIndex, DirectAndSparseIdsStayFindable) {
  detail::IdIndex index;
  std::vector<Id> ids = {4294967295u, 0u, 100000u, 5000u, 4097u, 1u << 31, 77u};
  for (Id i = 0; i < 3000; ++i) ids.push_back(6000 + i * 3);  // grows the direct table over 5000 and 4097
  for (std::uint32_t k = 0; k < ids.size(); ++k) index.insert(ids[k], k);
  for (std::uint32_t k = 0; k < ids.size(); ++k) ASSERT_EQ(index.find(ids[k]), k) << ids[k];
  EXPECT_EQ(index.find(5001u), detail::IdIndex::kNotFound);
  for (std::uint32_t k = 0; k < ids.size(); k += 2) index.erase(ids[k]);
  for (std::uint32_t k = 0; k < ids.size(); ++k) {
    ASSERT_EQ(index.find(ids[k]), k % 2 ? k : detail::IdIndex::kNotFound) << ids[k];
  }
  EXPECT_EQ(index.size(), ids.size() / 2);
}

}  // namespace
}  // namespace sapling
