// The succinct bit tree and its fixed-depth view (src/algorithms/unisize/bit_tree.hpp)
// against std::set: random inserts, erases and queries on universes at and
// around the level boundaries (64, 4096, 262144 values), with validate()
// after every batch of operations. A failure names the universe and seed.
#include "algorithms/unisize/bit_tree.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <random>
#include <set>
#include <vector>

namespace sapling::detail {
namespace {

constexpr std::uint32_t kNone = BitTree::kNone;

std::uint32_t set_next(const std::set<std::uint32_t>& s, std::uint32_t v) {
  const auto it = s.lower_bound(v);
  return it == s.end() ? kNone : *it;
}

std::uint32_t set_prev(const std::set<std::uint32_t>& s, std::uint32_t v) {
  auto it = s.upper_bound(v);
  return it == s.begin() ? kNone : *std::prev(it);
}

const std::vector<std::uint32_t> kUniverses = {1, 2, 63, 64, 65, 127, 128, 4095, 4096, 4097, 64 * 64 * 3 + 5, 262145};

TEST(BitTree, EmptyTreeAnswersNone) {
  for (const std::uint32_t u : {0u, 1u, 64u, 5000u}) {
    BitTree t;
    t.reset(u);
    EXPECT_TRUE(t.empty());
    EXPECT_EQ(t.next(0), kNone);
    EXPECT_EQ(t.prev(u), kNone);
    EXPECT_EQ(t.next(u), kNone);
    EXPECT_TRUE(t.validate());
  }
}

TEST(BitTree, LevelsForAgreesWithReset) {
  for (const std::uint32_t u : {0u, 1u, 63u, 64u, 65u, 4096u, 4097u, 262144u, 262145u, 16777217u}) {
    BitTree t;
    t.reset(u);
    EXPECT_EQ(BitTree::levels_for(u), t.levels()) << u;
  }
}

TEST(BitTree, MatchesStdSet) {
  for (const std::uint32_t u : kUniverses) {
    for (const unsigned seed : {1u, 2u}) {
      SCOPED_TRACE(testing::Message() << "universe " << u << " seed " << seed);
      std::mt19937 rng(seed);
      BitTree t;
      t.reset(u);
      std::set<std::uint32_t> ref;
      // Dense and sparse phases: a bias towards inserts, then towards erases.
      for (int phase = 0; phase < 4; ++phase) {
        const double insert_rate = phase % 2 == 0 ? 0.8 : 0.2;
        for (int op = 0; op < 3000; ++op) {
          const std::uint32_t v = rng() % u;
          if (std::uniform_real_distribution<double>(0, 1)(rng) < insert_rate) {
            t.insert(v);
            ref.insert(v);
          } else {
            t.erase(v);
            ref.erase(v);
          }
          const std::uint32_t q = rng() % (u + 2);  // also at and past the universe
          ASSERT_EQ(t.next(q), set_next(ref, q)) << "next(" << q << ")";
          ASSERT_EQ(t.prev(q), set_prev(ref, q)) << "prev(" << q << ")";
          ASSERT_EQ(t.contains(v), ref.count(v) == 1);
        }
        ASSERT_TRUE(t.validate());
        ASSERT_EQ(t.empty(), ref.empty());
      }
      // Walking with next() visits exactly the stored values.
      std::vector<std::uint32_t> walked;
      for (std::uint32_t v = t.next(0); v != kNone; v = v + 1 < u ? t.next(v + 1) : kNone) walked.push_back(v);
      EXPECT_EQ(walked, std::vector<std::uint32_t>(ref.begin(), ref.end()));
      t.clear();
      EXPECT_TRUE(t.empty());
      EXPECT_EQ(t.next(0), kNone);
      EXPECT_TRUE(t.validate());
    }
  }
}

TEST(BitTree, ExtremesOfTheUniverse) {
  BitTree t;
  t.reset(262145);
  t.insert(0);
  t.insert(262144);
  EXPECT_EQ(t.next(1), 262144u);
  EXPECT_EQ(t.prev(262143), 0u);
  EXPECT_EQ(t.prev(4000000000u), 262144u);
  t.erase(0);
  EXPECT_EQ(t.prev(262143), kNone);
  t.erase(262144);
  EXPECT_TRUE(t.empty());
  EXPECT_TRUE(t.validate());
}

TEST(BitTree, ResetEmptiesAndResizes) {
  BitTree t;
  t.reset(1000);
  for (std::uint32_t v = 0; v < 1000; v += 7) t.insert(v);
  t.reset(70);
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t.universe(), 70u);
  t.insert(69);
  EXPECT_EQ(t.next(0), 69u);
  EXPECT_TRUE(t.validate());
}

// The linked variant: the list order is the set order, from any stored value.
// A tree that was never reset (an algorithm that has not swept yet) is a
// valid empty set over an empty universe: validate() after an update with
// fewer than two boxes runs on it.
// The fixed-depth view against std::set, on universes of 1 to 4 levels:
// inserts, erase_if with either outcome, and for_each over random ranges,
// short and long, whose values must come in order.
template <int L>
void check_fixed_view(std::uint32_t u) {
  SCOPED_TRACE(testing::Message() << "universe " << u << " levels " << L);
  std::mt19937 rng(u + 3);
  BitTree t;
  t.reset(u);
  ASSERT_EQ(t.levels(), L);
  BitTree::Fixed<L> f(t);
  std::set<std::uint32_t> ref;
  for (int op = 0; op < 6000; ++op) {
    const std::uint32_t v = rng() % u;
    switch (rng() % 3) {
      case 0:
        f.insert(v);
        ref.insert(v);
        break;
      case 1: {
        const bool erase = rng() % 2 == 0;
        f.erase_if(v, erase);
        if (erase) ref.erase(v);
        break;
      }
      default: {
        const std::uint32_t w = rng() % 4 == 0
                                    ? static_cast<std::uint32_t>(rng() % u)
                                    : std::min<std::uint32_t>(u - 1, v + static_cast<std::uint32_t>(rng() % 300));
        const std::uint32_t lo = std::min(v, w), hi = std::max(v, w);
        std::vector<std::uint32_t> got;
        f.for_each(lo, hi, [&](std::uint32_t x) { got.push_back(x); });
        const std::vector<std::uint32_t> want(ref.lower_bound(lo), ref.upper_bound(hi));
        ASSERT_EQ(got, want) << "range [" << lo << ", " << hi << "]";
      }
    }
    if (op % 1000 == 0) {
      ASSERT_TRUE(t.validate());
    }
  }
  EXPECT_TRUE(t.validate());
  for (std::uint32_t x = 0; x < u; ++x) ASSERT_EQ(t.contains(x), ref.count(x) == 1) << x;
}

TEST(BitTree, FixedDepthViewMatchesStdSet) {
  check_fixed_view<1>(1);
  check_fixed_view<1>(64);
  check_fixed_view<2>(65);
  check_fixed_view<2>(4096);
  check_fixed_view<3>(4097);
  check_fixed_view<3>(64 * 64 * 3 + 5);
  check_fixed_view<4>(262145);
}

}  // namespace
}  // namespace sapling::detail
