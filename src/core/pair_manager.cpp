// Pair manager (Terdiman 2007, I.6) and its hash index.
#include "sapling/pair_manager.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <iterator>
#include <utility>

#include "detail/radix_sort.hpp"

namespace sapling {

namespace {

// Sorts pairs by (a, b) with an LSD radix sort of packed keys: with w the
// bit width of the largest id, (a << w) | b orders pairs like pair_key()
// does in 2w bits, sorted in ceil(2w / 12) passes of equal digits (a
// million ids: 4 passes of 10 bits, where the 64-bit pair_key with 11-bit
// digits took 5). A digit on which every key agrees is skipped.
void sort_by_key(std::vector<Pair>& pairs, std::vector<std::uint64_t>& keys, std::vector<std::uint64_t>& scratch,
                 std::vector<std::uint32_t>& counts) {
  if (pairs.size() < 2) return;
  Id largest = 0;
  for (const Pair& p : pairs) largest = std::max(largest, p.a | p.b);
  const int w = std::max(1, static_cast<int>(std::bit_width(largest)));
  const int passes = (2 * w + 11) / 12;
  const detail::RadixDigits digits{(2 * w + passes - 1) / passes, passes};
  keys.resize(pairs.size());
  for (std::size_t k = 0; k < pairs.size(); ++k) keys[k] = (std::uint64_t{pairs[k].a} << w) | pairs[k].b;
  counts.resize(digits.counts());
  detail::radix_sort(
      keys, scratch, [](std::uint64_t k) { return k; }, digits, counts.data());
  const std::uint64_t b_mask = (std::uint64_t{1} << w) - 1;
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    pairs[k] = Pair{static_cast<Id>(keys[k] >> w), static_cast<Id>(keys[k] & b_mask)};
  }
}

}  // namespace

void PairManager::assign(std::vector<Pair>& pairs) {
  if (!touched_.empty()) {
    remove_all();  // not the frame's only change: the general way
    for (const Pair& p : pairs) add(p.a, p.b);
    return;
  }
  if (!assigned_created_.empty() || !assigned_deleted_.empty()) {
    // A second assign() this frame: back to the set the frame started with,
    // (pairs \ created) + deleted, all three sorted by key.
    const auto by_key = [](const Pair& x, const Pair& y) { return pair_key(x) < pair_key(y); };
    std::vector<Pair> kept;
    std::set_difference(pairs_.begin(), pairs_.end(), assigned_created_.begin(), assigned_created_.end(),
                        std::back_inserter(kept), by_key);
    pairs_.clear();
    std::merge(kept.begin(), kept.end(), assigned_deleted_.begin(), assigned_deleted_.end(), std::back_inserter(pairs_),
               by_key);
    assigned_created_.clear();
    assigned_deleted_.clear();
  }
  // The new set, sorted by key.
  sort_by_key(pairs, sort_keys_, sort_scratch_, sort_counts_);
  // The old set sorted too (it is, unless pairs came by add() before).
  const auto key_less = [](const Pair& x, const Pair& y) { return pair_key(x) < pair_key(y); };
  if (!std::is_sorted(pairs_.begin(), pairs_.end(), key_less)) {
    sort_by_key(pairs_, sort_keys_, sort_scratch_, sort_counts_);
  }
  // Merge: the frame's delta.
  std::size_t i = 0, j = 0;
  while (i < pairs_.size() && j < pairs.size()) {
    const std::uint64_t old_key = pair_key(pairs_[i]), new_key = pair_key(pairs[j]);
    if (old_key < new_key) {
      assigned_deleted_.push_back(pairs_[i++]);
    } else if (new_key < old_key) {
      assigned_created_.push_back(pairs[j++]);
    } else {
      ++i, ++j;
    }
  }
  assigned_deleted_.insert(assigned_deleted_.end(), pairs_.begin() + static_cast<std::ptrdiff_t>(i), pairs_.end());
  assigned_created_.insert(assigned_created_.end(), pairs.begin() + static_cast<std::ptrdiff_t>(j), pairs.end());
  pairs_.swap(pairs);
  flags_.assign(pairs_.size(), 0);
  index_stale_ = true;
}

void PairManager::rebuild_index() {
  index_.clear();
  index_.reserve(pairs_.size());
  for (std::uint32_t i = 0; i < pairs_.size(); ++i) index_.insert(pair_key(pairs_[i]), i);
  index_stale_ = false;
}

bool PairManager::sorted_contains(Pair p) const {
  const auto it = std::lower_bound(pairs_.begin(), pairs_.end(), p,
                                   [](const Pair& x, const Pair& y) { return pair_key(x) < pair_key(y); });
  return it != pairs_.end() && *it == p;
}

void PairManager::end_frame(std::vector<Pair>& created, std::vector<Pair>& deleted) {
  created.insert(created.end(), assigned_created_.begin(), assigned_created_.end());
  deleted.insert(deleted.end(), assigned_deleted_.begin(), assigned_deleted_.end());
  assigned_created_.clear();
  assigned_deleted_.clear();
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
  assigned_created_.clear();
  assigned_deleted_.clear();
  index_stale_ = false;
}

std::size_t PairManager::memory_bytes() const noexcept {
  return pairs_.capacity() * sizeof(Pair) + flags_.capacity() + index_.memory_bytes() +
         touched_.capacity() * sizeof(std::uint32_t) + doomed_.capacity() * sizeof(std::uint64_t) +
         (assigned_created_.capacity() + assigned_deleted_.capacity()) * sizeof(Pair) +
         (sort_keys_.capacity() + sort_scratch_.capacity()) * sizeof(std::uint64_t) +
         sort_counts_.capacity() * sizeof(std::uint32_t);
}

bool PairManager::validate() const {
  if (flags_.size() != pairs_.size() || !touched_.empty()) return false;
  if (!assigned_created_.empty() || !assigned_deleted_.empty()) return false;
  if (index_stale_) {  // after assign(): sorted, each pair once, a < b
    for (std::uint32_t i = 0; i < pairs_.size(); ++i) {
      if (pairs_[i].a >= pairs_[i].b || flags_[i] != 0) return false;
      if (i > 0 && !(pair_key(pairs_[i - 1]) < pair_key(pairs_[i]))) return false;
    }
    return true;
  }
  if (index_.size() != pairs_.size()) return false;
  for (std::uint32_t i = 0; i < pairs_.size(); ++i) {
    if (pairs_[i].a >= pairs_[i].b || flags_[i] != 0 || index_.find(pair_key(pairs_[i])) != i) return false;
  }
  return true;
}

}  // namespace sapling
