// The succinct k-ary bit tree of Capannini and Larsson ("SuccTree": SCCG
// 2016, used as the set S of "Output Sensitive Collision Detection for
// Unisize Boxes", SIGRAD 2016, section 4), with k = 64.
//
// BitTree stores a set of integers in [0, universe). It is a perfect 64-ary
// tree kept as one bit per node: level 0 has one bit per value, packed in
// 64-bit words, and bit i of level l + 1 is set iff word i of level l is not
// zero. There are ceil(log64(universe)) levels at least one, so 5 for 2^30
// values; the whole tree takes universe / 63 words, about 1/8 byte per
// value. Operations work on a word at a time ("bit-level parallelism"):
//   insert, erase     O(log64 u): set or clear a bit, and carry up to every
//                     level whether the word became (non-)empty, without a
//                     branch;
//   next, prev        O(log64 u): look in the value's own word under a mask;
//                     if nothing is there climb until a masked ancestor word
//                     has a bit, then descend along count-trailing-zeros (or
//                     leading zeros); prev reads the masked words of every
//                     level at once and selects without branches;
//   for_each(lo, hi)  O(log64 u (1 + reported)), in the fixed-depth view:
//                     the range's words that hold values, found through the
//                     levels above, each bit reported by
//                     count-trailing-zeros (the paper's range query of
//                     Algorithm 1, line 9, without its linked list: see
//                     unisize.cpp);
//   clear             O(u / 64).
//
// Choose it for an ordered set of small integers with fast successor and
// range queries and tiny memory. It does not allocate after reset() unless
// the universe grows.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sapling::detail {

class BitTree {
 public:
  /// What next() and prev() return when no value qualifies.
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  /// The number of levels of a tree over [0, universe).
  static int levels_for(std::uint32_t universe) noexcept {
    int levels = 0;
    std::uint64_t bits = universe;
    do {
      bits = std::max<std::uint64_t>(1, (bits + 63) / 64);
      ++levels;
    } while (bits > 1);
    return levels;
  }

  /// Empties the set and sets its universe to [0, universe); universe < 2^32.
  void reset(std::uint32_t universe) {
    universe_ = universe;
    levels_ = 0;
    std::size_t total = 0;
    std::uint64_t bits = universe;
    do {  // at least one level, however small the universe
      const std::uint64_t words = (bits + 63) / 64;
      offset_[levels_] = static_cast<std::uint32_t>(total);
      count_[levels_] = static_cast<std::uint32_t>(words == 0 ? 1 : words);
      total += count_[levels_];
      bits = count_[levels_];
      ++levels_;
    } while (bits > 1);
    words_.assign(total, 0);
  }

  /// Removes every value, keeping the universe.
  void clear() noexcept {
    for (std::uint64_t& w : words_) w = 0;
  }

  std::uint32_t universe() const noexcept { return universe_; }
  bool empty() const noexcept { return words_.empty() || words_.back() == 0; }

  bool contains(std::uint32_t v) const noexcept { return (word(0, v >> 6) >> (v & 63)) & 1; }

  // Updates and prev() run through every level with no early exit: whether
  // a word was or became empty is a coin toss in sparse sets, and the
  // mispredicted branches cost more than the few extra word operations
  // (measured in the unisize sweep, 2 or 3 levels).

  /// Adds v < universe(); nothing if present. Sets the bit on every level
  /// (a parent bit already set stays set).
  void insert(std::uint32_t v) noexcept {
    for (int l = 0; l < levels_; ++l, v >>= 6) word(l, v >> 6) |= std::uint64_t{1} << (v & 63);
  }

  /// Removes v < universe(); nothing if absent. A parent bit is cleared iff
  /// its word became empty, which is carried up without a branch.
  void erase(std::uint32_t v) noexcept { erase_if(v, true); }

  /// Removes v < universe() if `condition`, without a branch on it.
  void erase_if(std::uint32_t v, bool condition) noexcept {
    std::uint64_t clear = condition ? 1 : 0;  // 1 while the word below became empty
    for (int l = 0; l < levels_; ++l, v >>= 6) {
      std::uint64_t& w = word(l, v >> 6);
      w &= ~(clear << (v & 63));
      clear &= static_cast<std::uint64_t>(w == 0);
    }
  }

  /// The smallest stored value >= v, or kNone.
  std::uint32_t next(std::uint32_t v) const noexcept {
    if (v >= universe_) return kNone;
    int l = 0;
    std::uint64_t i = v;  // a bit index at level l
    for (;;) {
      const std::uint64_t w = word(l, i >> 6) & (~std::uint64_t{0} << (i & 63));
      if (w != 0) {
        i = (i & ~std::uint64_t{63}) | static_cast<unsigned>(std::countr_zero(w));
        break;
      }
      // Nothing at or after i in this word: continue with the next word,
      // which is the next bit one level up.
      i = (i >> 6) + 1;
      if (++l == levels_ || i >= std::uint64_t{count_[l - 1]}) return kNone;
    }
    for (; l > 0; --l) i = i * 64 + static_cast<unsigned>(std::countr_zero(word(l - 1, i)));
    return static_cast<std::uint32_t>(i);
  }

  /// The largest stored value <= v (any v, even >= universe), or kNone.
  ///
  /// Without branches: the answer lies under the top bit of the lowest level
  /// whose word on v's path, masked to the bits left of the path (at or
  /// below v on level 0), is not empty. Those masked words do not depend on
  /// one another; from the top level down, each level either restarts from
  /// its own masked word (when not empty) or descends from the candidate of
  /// the level above.
  std::uint32_t prev(std::uint32_t v) const noexcept {
    if (universe_ == 0) return kNone;
    if (v >= universe_) v = universe_ - 1;
    std::array<std::uint64_t, kMaxLevels> masked;
    {
      std::uint64_t i = v;
      masked[0] = word(0, i >> 6) & (~std::uint64_t{0} >> (63 - (i & 63)));
      for (int l = 1; l < levels_; ++l) {
        i >>= 6;
        masked[l] = word(l, i >> 6) & ((std::uint64_t{1} << (i & 63)) - 1);
      }
    }
    std::uint64_t j = 0;  // the candidate's bit index on the current level
    bool found = false;
    for (int l = levels_ - 1; l >= 0; --l) {
      // Descend from the level above: its bit j is word j on this level.
      const std::uint64_t below = word(l, found ? j : 0);
      const std::uint64_t descended = j * 64 + static_cast<unsigned>(63 - std::countl_zero(below | 1));
      const std::uint64_t own = ((std::uint64_t{v} >> (6 * l)) & ~std::uint64_t{63}) |
                                static_cast<unsigned>(63 - std::countl_zero(masked[l] | 1));
      // A select by mask: the compiler would branch on a condition.
      const std::uint64_t restart = std::uint64_t{0} - static_cast<std::uint64_t>(masked[l] != 0);
      j = (own & restart) | (descended & ~restart);
      found = found || masked[l] != 0;
    }
    return found ? static_cast<std::uint32_t>(j) : kNone;
  }

  std::size_t memory_bytes() const noexcept { return words_.capacity() * sizeof(std::uint64_t); }

  /// The same set with its depth L == levels() fixed at compile time and its
  /// levels held as raw pointers, for a caller's hot loop: the loops over
  /// levels unroll. Valid until the next reset().
  template <int L>
  class Fixed {
   public:
    explicit Fixed(BitTree& t) noexcept {
      for (int l = 0; l < L; ++l) level_[l] = t.level_words(l);
    }
    void insert(std::uint32_t v) noexcept {
      for (int l = 0; l < L; ++l, v >>= 6) level_[l][v >> 6] |= std::uint64_t{1} << (v & 63);
    }
    /// Removes v if `condition`, without a branch on it.
    void erase_if(std::uint32_t v, bool condition) noexcept {
      std::uint64_t clear = condition ? 1 : 0;
      for (int l = 0; l < L; ++l, v >>= 6) {
        std::uint64_t& w = level_[l][v >> 6];
        w &= ~(clear << (v & 63));
        clear &= static_cast<std::uint64_t>(w == 0);
      }
    }
    /// Calls f(v) for every stored v in [lo, hi] (lo <= hi < universe),
    /// in increasing order. Only words that hold values are read, found
    /// through the levels above: O(L (1 + values reported)).
    template <class F>
    void for_each(std::uint32_t lo, std::uint32_t hi, F&& f) const {
      bits_in<0>(lo, hi, f);
    }

   private:
    // Calls f(i) for every set bit i in [lo, hi] of level l.
    template <int l, class F>
    void bits_in(std::uint32_t lo, std::uint32_t hi, F& f) const {
      const std::uint32_t word_lo = lo >> 6, word_hi = hi >> 6;
      const std::uint64_t from_lo = ~std::uint64_t{0} << (lo & 63), to_hi = ~std::uint64_t{0} >> (63 - (hi & 63));
      if (word_lo == word_hi) return each_bit(word_lo, level_[l][word_lo] & from_lo & to_hi, f);
      each_bit(word_lo, level_[l][word_lo] & from_lo, f);
      if constexpr (l + 1 < L) {
        // The words between: those the level above marks as not empty.
        if (word_lo + 1 < word_hi) {
          auto whole_word = [&](std::uint32_t w) { each_bit(w, level_[l][w], f); };
          bits_in<l + 1>(word_lo + 1, word_hi - 1, whole_word);
        }
      }
      each_bit(word_hi, level_[l][word_hi] & to_hi, f);
    }

    template <class F>
    static void each_bit(std::uint32_t word, std::uint64_t bits, F& f) {
      while (bits != 0) {
        f((word << 6) | static_cast<std::uint32_t>(std::countr_zero(bits)));
        bits &= bits - 1;
      }
    }

    std::array<std::uint64_t*, L> level_;
  };

  /// The number of levels, and level l's words (for fixed-depth views).
  int levels() const noexcept { return levels_; }
  std::uint64_t* level_words(int l) noexcept { return words_.data() + offset_[l]; }

  // Invariants: bit i of level l + 1 is set iff word i of level l is not
  // zero; no bit is set at or beyond the universe (or beyond the word count
  // of the level below).
  bool validate() const {
    for (int l = 0; l < levels_; ++l) {
      const std::uint64_t bits = l == 0 ? universe_ : count_[l - 1];
      for (std::uint64_t i = 0; i < std::uint64_t{count_[l]} * 64; ++i) {
        const bool set = (word(l, i >> 6) >> (i & 63)) & 1;
        if (i >= bits) {
          if (set) return false;
          continue;
        }
        if (l > 0 && set != (word(l - 1, i) != 0)) return false;
      }
    }
    return true;
  }

 private:
  static constexpr int kMaxLevels = 7;  // 64^6 > 2^32

  std::uint64_t& word(int level, std::uint64_t index) noexcept { return words_[offset_[level] + index]; }
  std::uint64_t word(int level, std::uint64_t index) const noexcept { return words_[offset_[level] + index]; }

  std::vector<std::uint64_t> words_;  // every level, leaves first
  std::array<std::uint32_t, kMaxLevels> offset_{};
  std::array<std::uint32_t, kMaxLevels> count_{};  // words per level
  int levels_ = 0;
  std::uint32_t universe_ = 0;
};

}  // namespace sapling::detail
