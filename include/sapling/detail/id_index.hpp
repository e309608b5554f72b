// The map from user ids to the broad phase's slots. Most engines number
// their objects densely from 0, so ids below a bound that grows with the
// number of objects live in a direct table (one indexed load, and a
// streaming access when a batch lists ids in order); any other 32-bit id
// goes to a hash index. An id is in at most one of the two.
//
// An internal (namespace detail): public only because BroadPhase holds one
// by value.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sapling/detail/hash_index.hpp"

namespace sapling::detail {

class IdIndex {
 public:
  static constexpr std::uint32_t kNotFound = HashIndex::kNotFound;

  std::uint32_t find(std::uint32_t id) const noexcept {
    if (id < direct_.size() && direct_[id] != kNotFound) return direct_[id];
    return sparse_.find(id);
  }

  /// Hints that `id` will be looked up or inserted soon (its entry into the
  /// cache), so that a batch in no particular order overlaps its misses.
  /// Always inlined: GCC 12 finds a function that only prefetches free of
  /// effects and deletes the calls to it that it did not inline first.
  [[gnu::always_inline]] void prefetch(std::uint32_t id) const noexcept {
    if (id < direct_.size()) {
      __builtin_prefetch(&direct_[id]);
    } else {
      sparse_.prefetch(id);
    }
  }

  /// Inserts an id that is absent.
  void insert(std::uint32_t id, std::uint32_t slot) {
    if (id >= direct_.size() && id < direct_limit()) direct_.resize(std::bit_ceil(std::size_t{id} + 1), kNotFound);
    if (id < direct_.size()) {
      direct_[id] = slot;
    } else {
      sparse_.insert(id, slot);
    }
    ++size_;
  }

  /// Removes a present id.
  void erase(std::uint32_t id) noexcept {
    if (id < direct_.size() && direct_[id] != kNotFound) {
      direct_[id] = kNotFound;
    } else {
      sparse_.erase(id);
    }
    --size_;
  }

  std::size_t size() const noexcept { return size_; }
  std::size_t memory_bytes() const noexcept {
    return direct_.capacity() * sizeof(std::uint32_t) + sparse_.memory_bytes();
  }

 private:
  // The direct table stays within a few words per object.
  std::size_t direct_limit() const noexcept { return 4096 + 4 * size_; }

  std::vector<std::uint32_t> direct_;
  HashIndex sparse_;
  std::size_t size_ = 0;
};

}  // namespace sapling::detail
