// A set of integers in [0, universe) as a bitmap with a summary level, for
// sweeps whose range queries are short: walking the stored values of
// [lo, hi) costs one word per 64 values of the range at most, and empty
// runs of 64 words are skipped with the summary. Insert and erase are O(1);
// reset is O(universe / 64). Choose it over the bit tree (bit_tree.hpp) when
// the universe is small (thousands) and queries are ranges, not successors
// from arbitrary points far away.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace sapling {

class RangeBitmap {
 public:
  /// Empties the set and sets its universe to [0, universe).
  void reset(std::uint32_t universe) {
    const std::size_t words = (std::size_t{universe} + 63) / 64;
    words_.assign(words, 0);
    summary_.assign((words + 63) / 64, 0);
  }

  /// Adds v < universe.
  void insert(std::uint32_t v) noexcept {
    words_[v >> 6] |= std::uint64_t{1} << (v & 63);
    summary_[v >> 12] |= std::uint64_t{1} << ((v >> 6) & 63);
  }

  /// Removes v < universe.
  void erase(std::uint32_t v) noexcept {
    std::uint64_t& w = words_[v >> 6];
    w &= ~(std::uint64_t{1} << (v & 63));
    if (w == 0) summary_[v >> 12] &= ~(std::uint64_t{1} << ((v >> 6) & 63));
  }

  bool contains(std::uint32_t v) const noexcept { return (words_[v >> 6] >> (v & 63)) & 1; }

  /// Calls f(v) for every stored v in [lo, hi), hi <= universe, in
  /// increasing order; f may erase v (and nothing else).
  template <class F>
  void for_each(std::uint32_t lo, std::uint32_t hi, F&& f) {
    if (lo >= hi) return;
    std::uint32_t w = lo >> 6;
    const std::uint32_t last = (hi - 1) >> 6;
    std::uint64_t bits = words_[w] & (~std::uint64_t{0} << (lo & 63));
    for (;;) {
      if (w == last) bits &= ~std::uint64_t{0} >> (63 - ((hi - 1) & 63));
      while (bits != 0) {
        const std::uint32_t v = (w << 6) | static_cast<std::uint32_t>(std::countr_zero(bits));
        bits &= bits - 1;
        f(v);
      }
      if (w == last) return;
      w = next_word(w + 1, last);
      if (w > last) return;
      bits = words_[w];
    }
  }

  std::size_t memory_bytes() const noexcept {
    return (words_.capacity() + summary_.capacity()) * sizeof(std::uint64_t);
  }

  // Invariant: bit i of the summary is set iff word i is not zero.
  bool validate() const {
    for (std::size_t i = 0; i < words_.size(); ++i) {
      if (((summary_[i >> 6] >> (i & 63)) & 1) != (words_[i] != 0)) return false;
    }
    return true;
  }

 private:
  // The first non-zero word in [from, last], or a value above last.
  std::uint32_t next_word(std::uint32_t from, std::uint32_t last) const noexcept {
    if (from > last) return from;
    if (words_[from] != 0) return from;  // the common case: the next word
    std::uint32_t s = from >> 6;
    std::uint64_t mask = summary_[s] & (~std::uint64_t{0} << (from & 63));
    while (mask == 0) {
      if (++s > (last >> 6)) return last + 1;
      mask = summary_[s];
    }
    return (s << 6) | static_cast<std::uint32_t>(std::countr_zero(mask));
  }

  std::vector<std::uint64_t> words_;    // bit v of word v / 64: v is stored
  std::vector<std::uint64_t> summary_;  // bit i of word i / 64: word i is not zero
};

}  // namespace sapling
