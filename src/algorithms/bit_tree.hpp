// The succinct k-ary bit tree of Capannini and Larsson ("SuccTree": SCCG
// 2016, used as the set S of "Output Sensitive Collision Detection for
// Unisize Boxes", SIGRAD 2016, section 4), with k = 64, and the linked
// variant of the unisize paper whose stored values are also chained in
// order, so that walking a range costs O(1) per value.
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
//   clear             O(u / 64).
//
// ForwardLinkedBitTree adds the paper's ordered list: every stored value v
// has next_[v], the next stored value, with the sentinel end() == universe
// closing the list at both ends, so that from a stored value the following
// ones are one array read each (4 bytes per value of the universe).
// Insertion finds the predecessor with the tree (O(log64 u)), or takes it
// from the caller; erasure takes the erased value's predecessor from the
// caller, which has it when values are erased during a walk (unisize's lazy
// deletion), so no backward links are kept.
//
// Choose BitTree for an ordered set of small integers with fast successor
// queries and tiny memory; ForwardLinkedBitTree when queries walk ranges of
// stored values and values are only erased while walking past them.
// Neither allocates after reset() unless the universe grows.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sapling {

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

class ForwardLinkedBitTree {
 public:
  /// An empty set over an empty universe (so every member is usable at once).
  ForwardLinkedBitTree() { reset(0); }

  /// Empties the set and sets its universe to [0, universe); universe < 2^32 - 1.
  void reset(std::uint32_t universe) {
    tree_.reset(universe);
    next_.resize(std::size_t{universe} + 1);
    next_[universe] = universe;
  }

  /// Removes every value: O(universe / 64).
  void clear() noexcept {
    tree_.clear();
    next_[end()] = end();
  }

  /// The sentinel after the last value and before the first.
  std::uint32_t end() const noexcept { return tree_.universe(); }
  std::uint32_t universe() const noexcept { return tree_.universe(); }
  bool empty() const noexcept { return next_[end()] == end(); }
  bool contains(std::uint32_t v) const noexcept { return tree_.contains(v); }

  /// Adds v, which must be absent, after its predecessor from the tree;
  /// returns the value after v (or end()), where a walk from v starts.
  std::uint32_t insert(std::uint32_t v) noexcept {
    const std::uint32_t p = tree_.prev(v);
    const std::uint32_t after = p == BitTree::kNone ? end() : p, n = next_[after];
    next_[v] = n;
    next_[after] = v;
    tree_.insert(v);
    return n;
  }

  /// Adds v, which must be absent, knowing that `after` is stored (or end())
  /// and that no stored value lies between `after` and v: no tree search.
  void insert_after(std::uint32_t after, std::uint32_t v) noexcept {
    next_[v] = next_[after];
    next_[after] = v;
    tree_.insert(v);
  }

  /// Removes v, which must be stored right after `before` (a stored value or end()).
  void erase_after(std::uint32_t before, std::uint32_t v) noexcept { erase_after_if(before, v, true); }

  /// Removes v, stored right after `before`, if `condition`, without a
  /// branch on it (a walk that erases some of the values it passes).
  void erase_after_if(std::uint32_t before, std::uint32_t v, bool condition) noexcept {
    const std::uint32_t keep = static_cast<std::uint32_t>(condition) - 1;  // all ones iff v stays
    next_[before] = (v & keep) | (next_[v] & ~keep);
    tree_.erase_if(v, condition);
  }

  /// The stored value after stored value v (or after end(): the first), or end().
  std::uint32_t next(std::uint32_t v) const noexcept { return next_[v]; }

  int levels() const noexcept { return tree_.levels(); }

  /// The same set with its depth L == levels() fixed at compile time and
  /// its arrays held as raw pointers, for a caller's hot loop: the loops
  /// over levels unroll and nothing is reloaded through the vectors. The
  /// operations are those of the tree, with the same contracts; valid until
  /// the next reset().
  template <int L>
  class Fixed {
   public:
    explicit Fixed(ForwardLinkedBitTree& t) noexcept : next_(t.next_.data()), end_(t.end()) {
      for (int l = 0; l < L; ++l) level_[l] = t.tree_.level_words(l);
    }

    std::uint32_t end() const noexcept { return end_; }
    std::uint32_t next(std::uint32_t v) const noexcept { return next_[v]; }

    /// Adds v < end(), which must be absent; returns the value after it.
    std::uint32_t insert(std::uint32_t v) noexcept {
      const std::uint32_t after = prev_or_end(v), n = next_[after];
      next_[v] = n;
      next_[after] = v;
      set_bits(v);
      return n;
    }

    void insert_after(std::uint32_t after, std::uint32_t v) noexcept {
      next_[v] = next_[after];
      next_[after] = v;
      set_bits(v);
    }

    void erase_after_if(std::uint32_t before, std::uint32_t v, bool condition) noexcept {
      const std::uint32_t keep = static_cast<std::uint32_t>(condition) - 1;  // all ones iff v stays
      next_[before] = (v & keep) | (next_[v] & ~keep);
      std::uint64_t clear = condition ? 1 : 0;
      for (int l = 0; l < L; ++l, v >>= 6) {
        std::uint64_t& w = level_[l][v >> 6];
        w &= ~(clear << (v & 63));
        clear &= static_cast<std::uint64_t>(w == 0);
      }
    }

    /// The largest stored value <= v < end(), or end(): BitTree::prev.
    std::uint32_t prev_or_end(std::uint32_t v) const noexcept {
      std::array<std::uint64_t, L> masked;
      std::uint64_t i = v;
      masked[0] = level_[0][i >> 6] & (~std::uint64_t{0} >> (63 - (i & 63)));
      for (int l = 1; l < L; ++l) {
        i >>= 6;
        masked[l] = level_[l][i >> 6] & ((std::uint64_t{1} << (i & 63)) - 1);
      }
      // The top level is one word: its candidate is its own masked word's.
      std::uint64_t found = std::uint64_t{0} - static_cast<std::uint64_t>(masked[L - 1] != 0);
      std::uint64_t j = static_cast<unsigned>(63 - std::countl_zero(masked[L - 1] | 1));
      for (int l = L - 2; l >= 0; --l) {
        const std::uint64_t below = level_[l][j & found];
        const std::uint64_t descended = j * 64 + static_cast<unsigned>(63 - std::countl_zero(below | 1));
        const std::uint64_t own = ((std::uint64_t{v} >> (6 * l)) & ~std::uint64_t{63}) |
                                  static_cast<unsigned>(63 - std::countl_zero(masked[l] | 1));
        const std::uint64_t restart = std::uint64_t{0} - static_cast<std::uint64_t>(masked[l] != 0);
        j = (own & restart) | (descended & ~restart);
        found |= restart;
      }
      return static_cast<std::uint32_t>((j & found) | (end_ & ~found));
    }

   private:
    void set_bits(std::uint32_t v) noexcept {
      for (int l = 0; l < L; ++l, v >>= 6) level_[l][v >> 6] |= std::uint64_t{1} << (v & 63);
    }

    std::array<std::uint64_t*, L> level_;
    std::uint32_t* next_;
    std::uint32_t end_;
  };

  std::size_t memory_bytes() const noexcept { return tree_.memory_bytes() + next_.capacity() * sizeof(std::uint32_t); }

  // Invariants: the tree is valid, and walking next_ from end() visits
  // exactly the stored values in increasing order and returns to end().
  bool validate() const {
    if (!tree_.validate()) return false;
    std::uint32_t at = end();
    std::uint32_t expected = tree_.next(0);
    for (std::uint64_t steps = 0; steps <= std::uint64_t{universe()}; ++steps) {
      const std::uint32_t n = next_[at];
      if (n == end()) return expected == BitTree::kNone;
      if (n != expected) return false;
      at = n;
      expected = n + 1 < universe() ? tree_.next(n + 1) : BitTree::kNone;
    }
    return false;
  }

 private:
  BitTree tree_;
  std::vector<std::uint32_t> next_;  // by value; index universe is the sentinel and list head
};

}  // namespace sapling
