// The radix sort (src/detail/radix_sort.hpp) against std::stable_sort: items
// carrying their input position, so that stability is checked too, under
// every digit layout the algorithms use, on random and adversarial keys
// (all equal, sorted, reversed, few distinct, the full 64-bit range). A
// failure names the layout, the size and the seed.
#include "detail/radix_sort.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace sapling::detail {
namespace {

struct Item {
  std::uint64_t key;
  std::uint32_t position;
  bool operator==(const Item&) const = default;
};

// Keys of `bits` bits (1..64) of the given kind.
std::vector<Item> make_items(const std::string& kind, std::size_t n, int bits, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  std::vector<Item> items(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t k = rng() & mask;
    if (kind == "equal") k = mask / 3;
    if (kind == "sorted") k = (mask / (n + 1)) * i;
    if (kind == "reversed") k = (mask / (n + 1)) * (n - i);
    if (kind == "few") k = (rng() % 4) * (mask / 3);   // 4 keys spread over every digit
    if (kind == "top") k = (rng() % 3) << (bits - 2);  // only the highest digit varies
    if (kind == "extremes") k = rng() % 2 ? mask : 0;
    items[i] = Item{k, static_cast<std::uint32_t>(i)};
  }
  return items;
}

std::vector<Item> reference(std::vector<Item> items) {
  std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.key < b.key; });
  return items;
}

const char* const kKinds[] = {"random", "equal", "sorted", "reversed", "few", "top", "extremes"};

void check_layout(RadixDigits digits, int key_bits) {
  std::vector<std::uint32_t> counts(digits.counts());
  std::uint64_t seed = 1;
  for (const std::size_t n : {0u, 1u, 2u, 3u, 17u, 64u, 65u, 1000u, 20000u}) {
    for (const char* kind : kKinds) {
      SCOPED_TRACE(std::string(kind) + " bits=" + std::to_string(digits.bits) + " passes=" +
                   std::to_string(digits.passes) + " n=" + std::to_string(n) + " seed=" + std::to_string(seed));
      const std::vector<Item> input = make_items(kind, n, key_bits, seed++);
      const std::vector<Item> expected = reference(input);
      const auto key = [](const Item& x) { return x.key; };
      // The vector form.
      std::vector<Item> items = input, scratch;
      radix_sort(items, scratch, key, digits, counts.data());
      EXPECT_EQ(items, expected);
      // The pointer form: the result where it says.
      std::vector<Item> a = input, b(n);
      const Item* sorted = radix_sort(a.data(), b.data(), n, key, digits, counts.data());
      EXPECT_TRUE(sorted == a.data() || sorted == b.data());
      EXPECT_TRUE(std::equal(expected.begin(), expected.end(), sorted));
    }
  }
}

TEST(RadixSort, PairManagerLayouts) {
  // ceil(2w / 12) passes of equal digits for ids of w bits.
  for (const int w : {1, 5, 6, 7, 12, 20, 31, 32}) {
    const int passes = (2 * w + 11) / 12;
    check_layout(RadixDigits{(2 * w + passes - 1) / passes, passes}, 2 * w);
  }
}

TEST(RadixSort, EightBitDigits) { check_layout(RadixDigits{8, 4}, 32); }

TEST(RadixSort, ElevenBitDigits) {
  check_layout(RadixDigits{11, 3}, 32);
  check_layout(RadixDigits{11, 3, 64}, 32);  // insertion sort up to 64 items
}

TEST(RadixSort, FullSixtyFourBitKeys) { check_layout(RadixDigits{8, 8}, 64); }

TEST(RadixSort, SkippedPassesLeaveNoWork) {
  // Keys equal in every digit: nothing moves, the items stay where they were.
  std::vector<Item> items(100, Item{0x12345, 0}), scratch(100);
  for (std::uint32_t i = 0; i < items.size(); ++i) items[i].position = i;
  std::vector<std::uint32_t> counts(RadixDigits{8, 4}.counts());
  const auto key = [](const Item& x) { return x.key; };
  EXPECT_EQ(radix_sort(items.data(), scratch.data(), items.size(), key, RadixDigits{8, 4}, counts.data()),
            items.data());
  for (std::uint32_t i = 0; i < items.size(); ++i) EXPECT_EQ(items[i].position, i);
}

}  // namespace
}  // namespace sapling::detail
