// A set of integers in [0, universe) as a bitmap with a summary level, for
// sweeps whose range queries are short: walking the stored values of
// [lo, hi) costs one word per 64 values of the range at most, and empty
// runs of 64 words are skipped with the summary (which may also point at
// words emptied since, a step each). Insert and erase are O(1);
// reset is O(universe / 64). Choose it over the bit tree (bit_tree.hpp) when
// the universe is small (thousands) and queries are ranges, not successors
// from arbitrary points far away.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace sapling::detail {

class RangeBitmap {
 public:
  /// Empties the set and sets its universe to [0, universe).
  void reset(std::uint32_t universe) {
    const std::size_t words = (std::size_t{universe} + 63) / 64;
    words_.assign(words + 1, 0);  // a zero word past the end for window()
    summary_.assign((words + 63) / 64, 0);
  }

  /// Adds v < universe.
  void insert(std::uint32_t v) noexcept {
    words_[v >> 6] |= std::uint64_t{1} << (v & 63);
    summary_[v >> 12] |= std::uint64_t{1} << ((v >> 6) & 63);
  }

  /// Removes v < universe.
  void erase(std::uint32_t v) noexcept { words_[v >> 6] &= ~(std::uint64_t{1} << (v & 63)); }

  bool contains(std::uint32_t v) const noexcept { return (words_[v >> 6] >> (v & 63)) & 1; }

  /// Bit i: whether lo + i is stored, for i < 64 (lo <= universe; values
  /// past the universe read as absent). Short ranges are walked this way,
  /// one word and no loop over words.
  std::uint64_t window(std::uint32_t lo) const noexcept {
    const std::uint32_t w = lo >> 6, s = lo & 63;
    // The second shift pair is zero for s == 0 without a branch.
    return (words_[w] >> s) | ((words_[w + 1] << 1) << (63 - s));
  }

  /// Removes lo + i for every set bit i of `drop`, which must be a subset
  /// of window(lo).
  void erase_window(std::uint32_t lo, std::uint64_t drop) noexcept {
    const std::uint32_t w = lo >> 6, s = lo & 63;
    words_[w] &= ~(drop << s);
    words_[w + 1] &= ~((drop >> 1) >> (63 - s));
  }

  /// Calls keep(v) for every stored v in [lo, hi), hi <= universe, in
  /// increasing order, and removes the values for which it returns false
  /// (without a branch: in sweeps the outcome is a coin toss).
  template <class Keep>
  void filter(std::uint32_t lo, std::uint32_t hi, Keep&& keep) {
    if (lo >= hi) return;
    std::uint32_t w = lo >> 6;
    const std::uint32_t last = (hi - 1) >> 6;
    std::uint64_t bits = words_[w] & (~std::uint64_t{0} << (lo & 63));
    for (;;) {
      if (w == last) bits &= ~std::uint64_t{0} >> (63 - ((hi - 1) & 63));
      std::uint64_t drop = 0;
      while (bits != 0) {
        const std::uint64_t low = bits & (~bits + 1);
        const std::uint32_t v = (w << 6) | static_cast<std::uint32_t>(std::countr_zero(bits));
        bits ^= low;
        drop |= keep(v) ? 0 : low;
      }
      words_[w] &= ~drop;
      if (w == last) return;
      w = next_word(w + 1, last);
      if (w > last) return;
      bits = words_[w];
    }
  }

  std::size_t memory_bytes() const noexcept {
    return (words_.capacity() + summary_.capacity()) * sizeof(std::uint64_t);
  }

  // Invariant: bit i of the summary is set if word i is not zero (it may
  // stay set when the word empties: erasing stays O(1) and branch-free).
  bool validate() const {
    if (!words_.empty() && words_.back() != 0) return false;
    for (std::size_t i = 0; i + 1 < words_.size(); ++i) {
      if (words_[i] != 0 && !((summary_[i >> 6] >> (i & 63)) & 1)) return false;
    }
    return true;
  }

 private:
  // The first non-zero word in [from, last], or a value above last.
  std::uint32_t next_word(std::uint32_t from, std::uint32_t last) const noexcept {
    if (from > last) return from;
    if (words_[from] != 0) return from;  // the common case: the next word
    ++from;
    if (from > last) return from;
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

}  // namespace sapling::detail
