// A set of ids for one frame's membership tests, when most ids tested are
// not in it (every pair scanned for the few objects that changed): a hash
// index behind a bitmap with one bit per hashed id and about 8 bits per
// member. An id whose bit is clear is absent after one test of a bitmap that
// stays in cache (an eighth of the set's size in bytes, where the hash
// table, probed at random, is 16 times the set's size); the others, about an
// eighth of the absent ones and every member, are looked up in the index.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sapling/detail/hash_index.hpp"
#include "sapling/pair.hpp"

namespace sapling::detail {

class IdSet {
 public:
  /// Empties the set and sizes it for `n` ids.
  void reset(std::size_t n) {
    const std::size_t bits = std::bit_ceil(std::max<std::size_t>(64, 8 * n));
    shift_ = 64 - std::countr_zero(bits);
    bits_.assign(bits / 64, 0);
    index_.reset(n);
  }
  void insert(Id id) {
    const std::uint64_t h = bit(id);
    bits_[h >> 6] |= std::uint64_t{1} << (h & 63);
    index_.insert(id, 0);
  }
  bool contains(Id id) const noexcept {
    const std::uint64_t h = bit(id);
    return (bits_[h >> 6] >> (h & 63) & 1) != 0 && index_.find(id) != HashIndex::kNotFound;
  }
  std::size_t memory_bytes() const noexcept { return bits_.capacity() * sizeof(std::uint64_t) + index_.memory_bytes(); }

 private:
  // Fibonacci hashing: the top bits of the id times 2^64 / phi.
  std::uint64_t bit(Id id) const noexcept { return (std::uint64_t{id} * 0x9e3779b97f4a7c15u) >> shift_; }

  std::vector<std::uint64_t> bits_{0};
  int shift_ = 63;
  HashIndex index_;
};

}  // namespace sapling::detail
