// The stable LSD radix sort of every algorithm: items of any type by an
// unsigned key, `passes` digits of `bits` bits, the least significant first,
// skipping a pass on whose digit all keys agree. O(passes * (n + 2^bits)).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "sapling/task_system.hpp"

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

/// Entries of the counts parallel_radix_sort() needs: one histogram of one
/// digit per chunk.
constexpr std::size_t parallel_radix_counts(std::size_t n, std::size_t chunk, RadixDigits digits) noexcept {
  return (n + chunk - 1) / chunk << digits.bits;
}

/// radix_sort() on a task system, for large n: the items cut into chunks of
/// `chunk` items (a fixed size, so the tasks depend on n only). Each pass
/// counts its digit in every chunk (a task each), sums the counts bucket by
/// bucket and, within a bucket, chunk by chunk (so each chunk's items of a
/// bucket go after the earlier chunks': the sort stays stable), then each
/// chunk scatters its items to its own offsets (a task each). The result is
/// radix_sort()'s, item for item, for any thread count. counts holds
/// parallel_radix_counts() entries; the tasks allocate nothing.
template <class T, class Key>
T* parallel_radix_sort(T* items, T* scratch, std::size_t n, Key key, RadixDigits digits, std::size_t chunk,
                       TaskSystem& tasks, std::uint32_t* counts) {
  if (n < 2) return items;
  const int bits = digits.bits;
  const std::size_t buckets = std::size_t{1} << bits, chunks = (n + chunk - 1) / chunk;
  const auto mask = static_cast<std::uint32_t>(buckets - 1);
  for (int d = 0; d < digits.passes; ++d) {
    const auto digit = [&](const T& x) { return static_cast<std::uint32_t>(key(x) >> (d * bits)) & mask; };
    auto count = [&](std::size_t c) {
      std::uint32_t* const h = counts + c * buckets;
      for (std::size_t b = 0; b < buckets; ++b) h[b] = 0;
      const std::size_t end = std::min(n, (c + 1) * chunk);
      for (std::size_t i = c * chunk; i < end; ++i) ++h[digit(items[i])];
    };
    tasks.run(chunks, count);
    // The offsets, bucket major; a pass on whose digit all keys agree is skipped.
    const std::uint32_t first = digit(items[0]);
    std::size_t same = 0;
    for (std::size_t c = 0; c < chunks; ++c) same += counts[c * buckets + first];
    if (same == n) continue;
    std::uint32_t sum = 0;
    for (std::size_t b = 0; b < buckets; ++b) {
      for (std::size_t c = 0; c < chunks; ++c) sum += std::exchange(counts[c * buckets + b], sum);
    }
    auto scatter = [&](std::size_t c) {
      std::uint32_t* const h = counts + c * buckets;
      const std::size_t end = std::min(n, (c + 1) * chunk);
      for (std::size_t i = c * chunk; i < end; ++i) scratch[h[digit(items[i])]++] = items[i];
    };
    tasks.run(chunks, scatter);
    std::swap(items, scratch);
  }
  return items;
}

}  // namespace sapling::detail
