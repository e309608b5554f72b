// Pair manager (Terdiman 2007, I.6) and its hash index.
#include "sapling/pair_manager.hpp"

#include <algorithm>
#include <bit>

namespace sapling {

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

void HashIndex::reserve(std::size_t n) {
  if (n * 2 > slots_.size()) rehash(std::bit_ceil(std::max<std::size_t>(16, n * 2)));
}

void HashIndex::grow() { rehash(std::max<std::size_t>(16, slots_.size() * 2)); }

void HashIndex::rehash(std::size_t capacity) {
  std::vector<Slot> old(capacity);
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

void PairManager::end_frame(std::vector<Pair>& created, std::vector<Pair>& deleted) {
  // Terdiman's DumpPairs: report, then remove in a second pass, because a
  // removal moves the last pair into the hole and would invalidate the
  // positions still to be read from touched_.
  doomed_.clear();
  for (const std::uint32_t index : touched_) {
    const std::uint8_t f = flags_[index];
    if (f & kRemoved) {
      if (!(f & kNew)) deleted.push_back(pairs_[index]);
      doomed_.push_back(pair_key(pairs_[index]));
    } else {
      if (f & kNew) created.push_back(pairs_[index]);
      flags_[index] = 0;
    }
  }
  touched_.clear();
  for (const std::uint64_t key : doomed_) {
    const std::uint32_t index = index_.find(key);
    index_.erase(key);
    const std::uint32_t last = static_cast<std::uint32_t>(pairs_.size() - 1);
    if (index != last) {
      pairs_[index] = pairs_[last];
      flags_[index] = flags_[last];
      index_.assign(pair_key(pairs_[index]), index);
    }
    pairs_.pop_back();
    flags_.pop_back();
  }
}

void PairManager::reserve(std::size_t pairs) {
  pairs_.reserve(pairs);
  flags_.reserve(pairs);
  index_.reserve(pairs);
}

void PairManager::clear() {
  pairs_.clear();
  flags_.clear();
  index_.clear();
  touched_.clear();
}

std::size_t PairManager::memory_bytes() const noexcept {
  return pairs_.capacity() * sizeof(Pair) + flags_.capacity() + index_.memory_bytes() +
         touched_.capacity() * sizeof(std::uint32_t) + doomed_.capacity() * sizeof(std::uint64_t);
}

bool PairManager::validate() const {
  if (flags_.size() != pairs_.size() || index_.size() != pairs_.size() || !touched_.empty()) return false;
  for (std::uint32_t i = 0; i < pairs_.size(); ++i) {
    if (pairs_[i].a >= pairs_[i].b || flags_[i] != 0 || index_.find(pair_key(pairs_[i])) != i) return false;
  }
  return true;
}

}  // namespace sapling
