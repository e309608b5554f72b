// The stable LSD radix sort of every algorithm: items of any type by an
// unsigned key, `passes` digits of `bits` bits, the least significant first,
// skipping a pass on whose digit all keys agree. O(passes * (n + 2^bits)).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace sapling::detail {

/// How keys are cut into digits.
struct RadixDigits {
  int bits = 8;    ///< width of a digit (2^bits buckets)
  int passes = 4;  ///< digits sorted, the least significant first
  /// At most this many items are sorted by insertion instead (no counts).
  std::size_t insertion_up_to = 0;

  /// Entries of the counts a sort needs.
  constexpr std::size_t counts() const noexcept { return std::size_t(passes) << bits; }
};

/// Sorts items[0, n) stably by key(item) with scratch[0, n) as the other
/// buffer and counts[0, digits.counts()) as the histograms; returns where the
/// sorted items are (items or scratch). key(item) returns an unsigned integer
/// whose bits above bits * passes are zero.
template <class T, class Key>
[[gnu::always_inline]] inline T* radix_sort(T* items, T* scratch, std::size_t n, Key key, RadixDigits digits,
                                            std::uint32_t* counts) {
  if (n <= digits.insertion_up_to) {
    for (std::size_t i = 1; i < n; ++i) {
      const T x = items[i];
      std::size_t j = i;
      for (; j > 0 && key(x) < key(items[j - 1]); --j) items[j] = items[j - 1];
      items[j] = x;
    }
    return items;
  }
  if (n < 2) return items;
  const int bits = digits.bits, passes = digits.passes;
  const std::size_t buckets = std::size_t{1} << bits;
  const auto mask = static_cast<std::uint32_t>(buckets - 1);
  const auto digit = [&](const T& x, int d) { return static_cast<std::uint32_t>(key(x) >> (d * bits)) & mask; };
  for (std::size_t i = 0; i < digits.counts(); ++i) counts[i] = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for (int d = 0; d < passes; ++d) ++counts[d * buckets + digit(items[i], d)];
  }
  for (int d = 0; d < passes; ++d) {
    std::uint32_t* const c = counts + d * buckets;
    if (c[digit(items[0], d)] == n) continue;  // one digit everywhere
    std::uint32_t sum = 0;
    for (std::size_t b = 0; b < buckets; ++b) sum += std::exchange(c[b], sum);
    for (std::size_t i = 0; i < n; ++i) scratch[c[digit(items[i], d)]++] = items[i];
    std::swap(items, scratch);
  }
  return items;
}

/// The same on vectors: `items` ends sorted, `scratch` is resized to match
/// and holds what the last pass left behind.
template <class T, class Key>
[[gnu::always_inline]] inline void radix_sort(std::vector<T>& items, std::vector<T>& scratch, Key key,
                                              RadixDigits digits, std::uint32_t* counts) {
  scratch.resize(items.size());
  if (radix_sort(items.data(), scratch.data(), items.size(), key, digits, counts) != items.data()) items.swap(scratch);
}

}  // namespace sapling::detail
