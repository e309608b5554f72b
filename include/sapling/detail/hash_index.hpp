// An open-addressing hash map from 64-bit keys to 32-bit values: linear
// probing, at most half full, deletion by backward shift (no tombstones, so
// lookups never slow down after churn). It indexes the pair manager's pairs
// and the broad phase's ids. Key ~0 is reserved as the empty marker; neither
// user (pair keys have a < b, id keys are 32-bit) can produce it.
//
// An internal (namespace detail): public only because PairManager holds one
// by value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace sapling::detail {

class HashIndex {
 public:
  static constexpr std::uint64_t kEmptyKey = ~std::uint64_t{0};
  static constexpr std::uint32_t kNotFound = ~std::uint32_t{0};

  /// The value stored for `key`, or kNotFound.
  std::uint32_t find(std::uint64_t key) const noexcept {
    if (slots_.empty()) return kNotFound;
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == key) return s.value;
      if (s.key == kEmptyKey) return kNotFound;
    }
  }

  /// Inserts `key -> value` unless `key` is present. Returns the stored value
  /// slot and whether it was inserted. The pointer is valid until the next
  /// insert or erase.
  std::pair<std::uint32_t*, bool> insert(std::uint64_t key, std::uint32_t value) {
    if ((size_ + 1) * 2 > slots_.size()) grow();
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.key == key) return {&s.value, false};
      if (s.key == kEmptyKey) {
        s = Slot{key, value};
        ++size_;
        return {&s.value, true};
      }
    }
  }

  /// Replaces the value of a present key; returns false if absent.
  bool replace(std::uint64_t key, std::uint32_t value) noexcept {
    if (slots_.empty()) return false;
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.key == key) {
        s.value = value;
        return true;
      }
      if (s.key == kEmptyKey) return false;
    }
  }

  /// Hints that `key` will be looked up soon: loads its home slot into the
  /// cache. Lets a caller with many keys overlap their cache misses.
  /// Always inlined (see IdIndex::prefetch()).
  [[gnu::always_inline]] void prefetch(std::uint64_t key) const noexcept {
    if (!slots_.empty()) __builtin_prefetch(&slots_[home(key)]);
  }

  /// Removes `key`; returns false if it was absent.
  bool erase(std::uint64_t key) noexcept;

  std::size_t size() const noexcept { return size_; }
  void clear() noexcept;
  /// Empties the index and sizes it for `n` keys, whatever it held before:
  /// a later clear() or reset() costs O(n), not O(largest size so far).
  void reset(std::size_t n);
  /// Makes room for `n` keys without rehashing.
  void reserve(std::size_t n);
  std::size_t memory_bytes() const noexcept { return slots_.capacity() * sizeof(Slot); }

 private:
  struct Slot {
    std::uint64_t key = kEmptyKey;
    std::uint32_t value = 0;
  };

  // Fibonacci hashing of a folded key: the top bits of the product are
  // well mixed, so both halves of a pair key spread the table.
  std::size_t home(std::uint64_t key) const noexcept {
    return static_cast<std::size_t>(((key ^ (key >> 29)) * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void grow();
  void rehash(std::size_t capacity);

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
  std::size_t size_ = 0;
};

}  // namespace sapling::detail
