// The hash index's out-of-line operations (hash_index.hpp).
#include "sapling/detail/hash_index.hpp"

#include <algorithm>
#include <bit>

#include "detail/huge_pages.hpp"

namespace sapling::detail {

bool HashIndex::erase(std::uint64_t key) noexcept {
  if (slots_.empty()) return false;
  std::size_t hole = home(key);
  while (slots_[hole].key != key) {
    if (slots_[hole].key == kEmptyKey) return false;
    hole = (hole + 1) & mask_;
  }
  // Backward shift: pull later entries of the probe run into the hole unless
  // their home lies cyclically after the hole (they would become unreachable).
  for (std::size_t j = (hole + 1) & mask_; slots_[j].key != kEmptyKey; j = (j + 1) & mask_) {
    const std::size_t from_home = (j - home(slots_[j].key)) & mask_;
    const std::size_t from_hole = (j - hole) & mask_;
    if (from_home >= from_hole) {
      slots_[hole] = slots_[j];
      hole = j;
    }
  }
  slots_[hole].key = kEmptyKey;
  --size_;
  return true;
}

void HashIndex::clear() noexcept {
  for (Slot& s : slots_) s.key = kEmptyKey;
  size_ = 0;
}

void HashIndex::reset(std::size_t n) {
  const std::size_t capacity = std::bit_ceil(std::max<std::size_t>(16, n * 2));
  slots_.assign(capacity, Slot{});
  mask_ = capacity - 1;
  shift_ = 64 - static_cast<unsigned>(std::countr_zero(capacity));
  size_ = 0;
}

void HashIndex::reserve(std::size_t n) {
  if (n * 2 > slots_.size()) rehash(std::bit_ceil(std::max<std::size_t>(16, n * 2)));
}

void HashIndex::grow() { rehash(std::max<std::size_t>(16, slots_.size() * 2)); }

void HashIndex::rehash(std::size_t capacity) {
  std::vector<Slot> old;
  reserve_large(old, capacity);  // before the slots are written (huge_pages.hpp)
  old.resize(capacity);
  old.swap(slots_);
  mask_ = capacity - 1;
  shift_ = 64 - static_cast<unsigned>(std::countr_zero(capacity));
  for (const Slot& s : old) {
    if (s.key == kEmptyKey) continue;
    std::size_t i = home(s.key);
    while (slots_[i].key != kEmptyKey) i = (i + 1) & mask_;
    slots_[i] = s;
  }
}

}  // namespace sapling::detail
