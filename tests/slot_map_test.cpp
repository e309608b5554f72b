// The dense slot map (src/detail/slot_map.hpp) against a std::map model:
// random inserts, erases and value updates on slots reused as the broad
// phase reuses them, with valid() and the whole content compared after every
// step; and the dense order the algorithms rely on (insertion order, the last
// entry moved into an erased one's place). A failure names the seed.
#include "detail/slot_map.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

namespace sapling::detail {
namespace {

using Map = SlotMap<float, std::uint32_t>;
using Model = std::map<std::uint32_t, std::pair<float, std::uint32_t>>;

void expect_same(const Map& map, const Model& model) {
  ASSERT_TRUE(map.valid());
  ASSERT_EQ(map.size(), model.size());
  ASSERT_EQ(map.values<0>().size(), model.size());
  ASSERT_EQ(map.values<1>().size(), model.size());
  for (std::size_t d = 0; d < map.size(); ++d) {
    const std::uint32_t s = map.slot(d);
    const auto it = model.find(s);
    ASSERT_NE(it, model.end()) << "slot " << s;
    EXPECT_EQ(map.index(s), d);
    EXPECT_EQ(map.values<0>()[d], it->second.first);
    EXPECT_EQ(map.values<1>()[d], it->second.second);
    EXPECT_EQ(map.values<1>()[map.index(s)], it->second.second);
  }
  for (const auto& [s, v] : model) EXPECT_TRUE(map.contains(s));
}

TEST(SlotMap, AgainstStdMap) {
  for (const std::uint64_t seed : {1u, 2u, 3u, 4u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const std::uint32_t slots = seed == 1 ? 8 : 200;
    Map map;
    Model model;
    for (int step = 0; step < 3000; ++step) {
      const auto s = static_cast<std::uint32_t>(rng() % slots);
      const auto value = static_cast<float>(rng() % 1000);
      const auto r = rng() % 3;
      if (!model.count(s)) {
        EXPECT_FALSE(map.contains(s));
        map.insert(s, value, s * 7);
        model[s] = {value, s * 7};
      } else if (r == 0) {
        map.value<0>(s) = value;
        model[s].first = value;
      } else {
        map.erase(s);
        model.erase(s);
        EXPECT_FALSE(map.contains(s));
      }
      expect_same(map, model);
      if (::testing::Test::HasFatalFailure()) return;
    }
    EXPECT_GT(map.memory_bytes(), 0u);
  }
}

TEST(SlotMap, DenseOrderIsInsertionOrderWithLastMovedIntoHoles) {
  SlotMap<int> map;
  for (const std::uint32_t s : {5u, 1u, 9u, 3u}) map.insert(s, static_cast<int>(s) * 10);
  EXPECT_EQ(std::vector<std::uint32_t>(map.slots().begin(), map.slots().end()),
            (std::vector<std::uint32_t>{5, 1, 9, 3}));
  map.erase(1);  // 3 moves into 1's place
  EXPECT_EQ(std::vector<std::uint32_t>(map.slots().begin(), map.slots().end()), (std::vector<std::uint32_t>{5, 3, 9}));
  EXPECT_EQ(map.values<0>(), (std::vector<int>{50, 30, 90}));
  map.erase(9);  // the last: nothing moves
  EXPECT_EQ(map.values<0>(), (std::vector<int>{50, 30}));
  EXPECT_FALSE(map.contains(9));
  EXPECT_FALSE(map.contains(100));
  map.insert(100, 1000);
  EXPECT_EQ(map.index(100), 2u);
  EXPECT_TRUE(map.valid());
  map.reserve_slots(300);  // slots known, none live
  EXPECT_FALSE(map.contains(299));
  EXPECT_EQ(map.size(), 3u);
  EXPECT_TRUE(map.valid());
}

TEST(SlotMap, SlotsOnly) {
  SlotMap<> map;  // unisize's live list: slots, no values
  map.insert(4);
  map.insert(2);
  map.erase(4);
  EXPECT_EQ(map.size(), 1u);
  EXPECT_EQ(map.slot(0), 2u);
  EXPECT_EQ(map.index(2), 0u);
  EXPECT_TRUE(map.valid());
}

}  // namespace
}  // namespace sapling::detail
