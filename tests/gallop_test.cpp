// detail::first_at_least() against std::lower_bound: every run of up to 40
// keys drawn from a few values (duplicates, runs of one value), every
// window [from, end), every guess in it and every key around the values;
// and it never reads outside [from, end).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "detail/gallop.hpp"

namespace {

TEST(Gallop, FirstAtLeastMatchesLowerBoundFromAnyGuess) {
  std::mt19937 rng(3);
  for (int round = 0; round < 300; ++round) {
    const std::uint32_t n = round % 41;
    std::vector<int> keys(n);
    for (int& k : keys) k = static_cast<int>(rng() % (1 + round % 7)) * 2;
    std::sort(keys.begin(), keys.end());
    for (std::uint32_t from = 0; from <= n; ++from) {
      for (std::uint32_t end = from; end <= n; ++end) {
        for (std::uint32_t guess = from; guess <= end; ++guess) {
          for (int key = -1; key <= 2 * (round % 7) + 1; ++key) {
            bool outside = false;
            const auto key_at = [&](std::uint32_t i) {
              outside |= i < from || i >= end;
              return keys[i];
            };
            const std::uint32_t got = sapling::detail::first_at_least(from, end, guess, key_at, key);
            const auto want = static_cast<std::uint32_t>(
                std::lower_bound(keys.begin() + from, keys.begin() + end, key) - keys.begin());
            ASSERT_EQ(got, want) << "n " << n << " from " << from << " end " << end << " guess " << guess << " key "
                                 << key;
            ASSERT_FALSE(outside) << "read outside [" << from << ", " << end << ")";
          }
        }
      }
    }
  }
}

// Far from the guess it reads a logarithmic number of keys, near it a few.
TEST(Gallop, ReadsFollowTheDistanceFromTheGuess) {
  std::vector<std::uint32_t> keys(1 << 20);
  for (std::uint32_t i = 0; i < keys.size(); ++i) keys[i] = i;
  int reads = 0;
  const auto key_at = [&](std::uint32_t i) {
    ++reads;
    return keys[i];
  };
  const auto n = static_cast<std::uint32_t>(keys.size());
  EXPECT_EQ(sapling::detail::first_at_least(0, n, 500000, key_at, 500001u), 500001u);
  EXPECT_LE(reads, 3);
  reads = 0;
  EXPECT_EQ(sapling::detail::first_at_least(0, n, 500000, key_at, 499990u), 499990u);
  EXPECT_LE(reads, 8);
  reads = 0;
  EXPECT_EQ(sapling::detail::first_at_least(0, n, 0, key_at, n - 1), n - 1);
  EXPECT_LE(reads, 42);
}

}  // namespace
