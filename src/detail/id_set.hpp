// A set of ids for one frame's membership tests, when most ids tested are
// not in it (every pair scanned for the few objects that changed): a table
// of the ids themselves, open addressing with linear probing at most half
// full, behind a bitmap with one bit per hashed id and about 8 bits per
// member. An id whose bit is clear is absent after one test of a bitmap that
// stays in cache (an eighth of the set's size in bytes); the others, about
// an eighth of the absent ones and every member, are looked up in the table.
// The table holds 32-bit ids, 4 bytes a slot: 9 bytes a member in all with
// the bitmap, where a general index (HashIndex: 64-bit keys and a value)
// took 33. Every 32-bit id may be a member, so no id can mark a slot empty:
// the empty marker is ~0, and id ~0 itself is held by a flag.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sapling/pair.hpp"

namespace sapling::detail {

class IdSet {
 public:
  /// Empties the set and sizes it for `n` ids (more may be inserted: the
  /// table grows).
  void reset(std::size_t n) {
    const std::size_t bits = std::bit_ceil(std::max<std::size_t>(64, 8 * n));
    bit_shift_ = 64 - std::countr_zero(bits);
    bits_.assign(bits / 64, 0);
    size_table(std::bit_ceil(std::max<std::size_t>(16, 2 * n)));
    has_last_id_ = false;
  }
  void insert(Id id) {
    const std::uint64_t h = hash(id) >> bit_shift_;
    bits_[h >> 6] |= std::uint64_t{1} << (h & 63);
    if (id == kEmpty) {
      has_last_id_ = true;
      return;
    }
    if (2 * (size_ + 1) > table_.size()) grow();
    if (place(id)) ++size_;
  }
  bool contains(Id id) const noexcept {
    const std::uint64_t h = hash(id) >> bit_shift_;
    if ((bits_[h >> 6] >> (h & 63) & 1) == 0) return false;
    if (id == kEmpty) return has_last_id_;
    for (std::size_t i = hash(id) >> table_shift_;; i = (i + 1) & (table_.size() - 1)) {
      if (table_[i] == id) return true;
      if (table_[i] == kEmpty) return false;
    }
  }
  std::size_t memory_bytes() const noexcept {
    return bits_.capacity() * sizeof(std::uint64_t) + table_.capacity() * sizeof(Id);
  }

 private:
  static constexpr Id kEmpty = ~Id{0};

  // Fibonacci hashing: the top bits of the id times 2^64 / phi, for the
  // bitmap and for the table's home slot.
  static std::uint64_t hash(Id id) noexcept { return std::uint64_t{id} * 0x9e3779b97f4a7c15u; }

  void size_table(std::size_t slots) {
    table_.assign(slots, kEmpty);
    table_shift_ = 64 - std::countr_zero(slots);
    size_ = 0;
  }
  // Enters `id` (not kEmpty); false if it was there.
  bool place(Id id) noexcept {
    for (std::size_t i = hash(id) >> table_shift_;; i = (i + 1) & (table_.size() - 1)) {
      if (table_[i] == id) return false;
      if (table_[i] == kEmpty) {
        table_[i] = id;
        return true;
      }
    }
  }
  void grow() {
    std::vector<Id> old;
    old.swap(table_);
    size_table(2 * old.size());
    for (const Id id : old) {
      if (id != kEmpty) size_ += place(id);
    }
  }

  std::vector<std::uint64_t> bits_{0};
  int bit_shift_ = 63;
  std::vector<Id> table_ = std::vector<Id>(16, kEmpty);
  int table_shift_ = 60;
  std::size_t size_ = 0;
  bool has_last_id_ = false;
};

}  // namespace sapling::detail
