// Pair manager (Terdiman 2007, I.6) and its hash index.
#include "sapling/pair_manager.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <iterator>
#include <utility>

#include "detail/radix_sort.hpp"
#include "detail/reserve.hpp"

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

namespace {
bool key_less(const Pair& x, const Pair& y) { return pair_key(x) < pair_key(y); }
}  // namespace

// Every allocation comes before the first change, so that a failure leaves
// the manager as it was (the contract of abandon_frame()).
void PairManager::assign(std::vector<Pair>& pairs) {
  replaced_all_ = true;
  if (!touched_.empty()) {
    remove_all();  // not the frame's only change: the general way
    for (const Pair& p : pairs) add(p.a, p.b);
    return;
  }
  if (!assigned_created_.empty() || !assigned_deleted_.empty()) abandon_frame();  // a second assign() this frame
  if (budget_ != 0 && pairs.size() > budget_) throw PairBudgetExceeded();
  // The held pairs stay: gathered (before the old set is sorted apart from
  // its flags) and merged into the new set, both sorted by key.
  held_.clear();
  for (std::uint32_t i = 0; i < pairs_.size(); ++i) {
    if (flags_[i] & kHeld) held_.push_back(pairs_[i]);
  }
  sort_by_key(pairs, sort_keys_, sort_scratch_, sort_counts_);
  if (!held_.empty()) {
    sort_by_key(held_, sort_keys_, sort_scratch_, sort_counts_);
    merge_held(pairs);
  }
  // The old set sorted too (it is, unless pairs came by add() before).
  if (!std::is_sorted(pairs_.begin(), pairs_.end(), key_less)) {
    sort_by_key(pairs_, sort_keys_, sort_scratch_, sort_counts_);
    index_stale_ = true;  // positions moved; no flag but kHeld is set outside a frame
    std::fill(flags_.begin(), flags_.end(), std::uint8_t{0});
    mark_held();
  }
  // Merge, counting first: the frame's delta.
  const auto merge = [&](auto&& deleted, auto&& created) {
    std::size_t i = 0, j = 0;
    while (i < pairs_.size() && j < pairs.size()) {
      const std::uint64_t old_key = pair_key(pairs_[i]), new_key = pair_key(pairs[j]);
      if (old_key < new_key) {
        deleted(pairs_[i++]);
      } else if (new_key < old_key) {
        created(pairs[j++]);
      } else {
        ++i, ++j;
      }
    }
    for (; i < pairs_.size(); ++i) deleted(pairs_[i]);
    for (; j < pairs.size(); ++j) created(pairs[j]);
  };
  std::size_t deleted_count = 0, created_count = 0;
  merge([&](const Pair&) { ++deleted_count; }, [&](const Pair&) { ++created_count; });
  const std::size_t room = std::max(pairs.size(), pairs_.size());  // abandon_frame() restores the old set in place
  detail::reserve_geometric(assigned_deleted_, deleted_count);
  detail::reserve_geometric(assigned_created_, created_count);
  // A sixteenth more: the frames after a recomputation add a few pairs
  // before their end removes as many, and would otherwise copy the set.
  detail::reserve_geometric(pairs, room + room / 16);
  detail::reserve_geometric(flags_, room);
  merge([&](const Pair& p) { assigned_deleted_.push_back(p); }, [&](const Pair& p) { assigned_created_.push_back(p); });
  pairs_.swap(pairs);
  flags_.assign(pairs_.size(), 0);
  mark_held();
  index_stale_ = true;
}

// Merges held_ into `pairs`, both sorted by key, from the back (a pair in
// both, which the contract rules out, is kept once).
void PairManager::merge_held(std::vector<Pair>& pairs) {
  std::size_t i = pairs.size(), j = held_.size(), out = i + j;
  pairs.resize(out);
  while (j > 0) {
    if (i > 0 && key_less(held_[j - 1], pairs[i - 1])) {
      pairs[--out] = pairs[--i];
    } else {
      if (i > 0 && pairs[i - 1] == held_[j - 1]) --i;
      pairs[--out] = held_[--j];
    }
  }
  if (out > i)
    pairs.erase(pairs.begin() + static_cast<std::ptrdiff_t>(i), pairs.begin() + static_cast<std::ptrdiff_t>(out));
}

// Flags the held pairs (held_, sorted) in pairs_, sorted by key.
void PairManager::mark_held() noexcept {
  std::size_t j = 0;
  for (std::size_t i = 0; i < pairs_.size() && j < held_.size(); ++i) {
    if (pairs_[i] == held_[j]) flags_[i] = kHeld, ++j;
  }
}

void PairManager::abandon_frame() noexcept {
  replaced_all_ = false;
  abandon_changes();
  if (!assigned_created_.empty() || !assigned_deleted_.empty()) {
    // After assign(): pairs_ is the frame's set sorted by key, with room for
    // the old one, (pairs_ \ created) + deleted, all three sorted by key.
    // The held pairs, in neither list, keep their flag.
    std::size_t kept = 0, c = 0;
    for (std::size_t k = 0; k < pairs_.size(); ++k) {
      const Pair p = pairs_[k];
      while (c < assigned_created_.size() && key_less(assigned_created_[c], p)) ++c;
      if (c < assigned_created_.size() && assigned_created_[c] == p) continue;
      flags_[kept] = flags_[k] & kHeld;
      pairs_[kept++] = p;
    }
    std::size_t i = kept, j = assigned_deleted_.size(), out = kept + j;
    pairs_.resize(out);  // within the capacity assign() reserved
    flags_.resize(out);
    while (j > 0) {  // merge from the back
      --out;
      if (i > 0 && key_less(assigned_deleted_[j - 1], pairs_[i - 1])) {
        pairs_[out] = pairs_[--i];
        flags_[out] = flags_[i];
      } else {
        pairs_[out] = assigned_deleted_[--j];
        flags_[out] = 0;
      }
    }
    assigned_created_.clear();
    assigned_deleted_.clear();
    index_stale_ = true;
  }
}

// Pairs new this frame were appended (removals wait for end_frame()): drop
// them from the end, and clear the flags of the others. After an assign()
// these are the calls that followed it.
void PairManager::abandon_changes() noexcept {
  std::size_t added = 0;
  for (const std::uint32_t index : touched_) {
    if (flags_[index] & kNew) {
      ++added;
    } else {
      flags_[index] &= kHeld;
    }
  }
  const std::size_t kept = pairs_.size() - added;
  for (std::size_t i = kept; i < pairs_.size(); ++i) index_.erase(pair_key(pairs_[i]));
  pairs_.resize(kept);
  flags_.resize(kept);
  touched_.clear();
}

bool PairManager::make_room(Pair p, std::uint8_t held) {
  const std::uint32_t index = index_.find(pair_key(p));
  if (index != detail::HashIndex::kNotFound) {
    flags_[index] = static_cast<std::uint8_t>((flags_[index] & ~kRemoved) | held);
    return false;
  }
  if (budget_ != 0 && pairs_.size() >= room_) throw PairBudgetExceeded();
  if (pairs_.size() < pairs_.capacity()) return true;
  std::size_t capacity = std::max<std::size_t>(16, pairs_.capacity() * 2);
  if (budget_ != 0) capacity = std::min(capacity, room_);
  // pairs_ last: its capacity never exceeds theirs, so add() never grows them.
  touched_.reserve(capacity);
  flags_.reserve(capacity);
  pairs_.reserve(capacity);
  return true;
}

void PairManager::rebuild_index() {
  index_.clear();
  // Room for the pairs a frame creates before its end removes the ones it
  // ends (both are in the index meanwhile): without it, a world whose pairs
  // sit just under a power of two rehashes in the frame after.
  index_.reserve(pairs_.size() + pairs_.size() / 8);
  detail::reserve_geometric(touched_, pairs_.capacity());
  detail::reserve_geometric(flags_, pairs_.capacity());
  for (std::uint32_t i = 0; i < pairs_.size(); ++i) index_.insert(pair_key(pairs_[i]), i);
  index_stale_ = false;
}

bool PairManager::sorted_contains(Pair p) const {
  const auto it = std::lower_bound(pairs_.begin(), pairs_.end(), p,
                                   [](const Pair& x, const Pair& y) { return pair_key(x) < pair_key(y); });
  return it != pairs_.end() && *it == p;
}

void PairManager::end_frame(std::vector<Pair>& created, std::vector<Pair>& deleted) {
  // Room first: nothing below allocates. Room far beyond what this frame can
  // report goes first (a mass insertion's created pairs, 1.7 MB at a million
  // boxes, where the frames after it report a few thousand).
  replaced_all_ = false;
  const std::size_t most_created = created.size() + assigned_created_.size() + touched_.size();
  const std::size_t most_deleted = deleted.size() + assigned_deleted_.size() + touched_.size();
  if (created.empty()) detail::give_back_unused(created, most_created);
  if (deleted.empty()) detail::give_back_unused(deleted, most_deleted);
  detail::reserve_geometric(created, most_created);
  detail::reserve_geometric(deleted, most_deleted);
  detail::reserve_geometric(doomed_, touched_.size());
  // Terdiman's DumpPairs: report, then remove in a second pass, because a
  // removal moves the last pair into the hole and would invalidate the
  // positions still to be read from touched_. After an assign(), a pair it
  // created and a later remove() deleted, or one it deleted and a later
  // add() restored, cancels out: it is struck from assign()'s list (both
  // sorted by key) rather than reported twice.
  struck_.assign(assigned_created_.size() + assigned_deleted_.size(), 0);
  const auto strike = [&](const std::vector<Pair>& sorted, std::size_t first_mark, const Pair& p) {
    const auto it = std::lower_bound(sorted.begin(), sorted.end(), p, key_less);
    if (it == sorted.end() || *it != p) return false;
    struck_[first_mark + static_cast<std::size_t>(it - sorted.begin())] = 1;
    return true;
  };
  const std::size_t created_marks = 0, deleted_marks = assigned_created_.size();
  doomed_.clear();
  for (const std::uint32_t index : touched_) {
    const std::uint8_t f = flags_[index];
    if (f & kRemoved) {
      if (!(f & kNew) && !strike(assigned_created_, created_marks, pairs_[index])) deleted.push_back(pairs_[index]);
      doomed_.push_back(pair_key(pairs_[index]));
    } else {
      if ((f & kNew) && !strike(assigned_deleted_, deleted_marks, pairs_[index])) created.push_back(pairs_[index]);
      flags_[index] = f & kHeld;
    }
  }
  touched_.clear();
  const auto report = [&](const std::vector<Pair>& from, std::size_t first_mark, std::vector<Pair>& to) {
    for (std::size_t k = 0; k < from.size(); ++k) {
      if (!struck_[first_mark + k]) to.push_back(from[k]);
    }
  };
  report(assigned_created_, created_marks, created);
  report(assigned_deleted_, deleted_marks, deleted);
  assigned_created_.clear();
  assigned_deleted_.clear();
  for (const std::uint64_t key : doomed_) {
    const std::uint32_t index = index_.find(key);
    index_.erase(key);
    const std::uint32_t last = static_cast<std::uint32_t>(pairs_.size() - 1);
    if (index != last) {
      pairs_[index] = pairs_[last];
      flags_[index] = flags_[last];
      index_.replace(pair_key(pairs_[index]), index);
    }
    pairs_.pop_back();
    flags_.pop_back();
  }
}

std::size_t PairManager::size_at_end() const noexcept {
  std::size_t removed = 0;
  for (const std::uint32_t index : touched_) removed += (flags_[index] & kRemoved) != 0;
  return pairs_.size() - removed;
}

void PairManager::reserve(std::size_t pairs) {
  touched_.reserve(pairs);
  flags_.reserve(pairs);
  pairs_.reserve(pairs);
  index_.reserve(pairs);
}

void PairManager::shrink_to_fit() {
  // Everything new is built first, then swapped in: a failure changes nothing.
  std::vector<Pair> pairs(pairs_.begin(), pairs_.end());
  std::vector<std::uint8_t> flags(flags_.begin(), flags_.end());  // only kHeld outside a frame
  detail::HashIndex index;
  if (!index_stale_) {
    index.reserve(pairs.size());
    for (std::uint32_t i = 0; i < pairs.size(); ++i) index.insert(pair_key(pairs[i]), i);
  }
  pairs_.swap(pairs);
  flags_.swap(flags);
  index_ = std::move(index);
  // Scratch sized by earlier frames; the next frames size it again.
  detail::free_storage(touched_);
  detail::free_storage(doomed_);
  detail::free_storage(assigned_created_);
  detail::free_storage(assigned_deleted_);
  detail::free_storage(struck_);
  detail::free_storage(held_);
  detail::free_storage(sort_keys_);
  detail::free_storage(sort_scratch_);
  detail::free_storage(sort_counts_);
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
         (assigned_created_.capacity() + assigned_deleted_.capacity() + held_.capacity()) * sizeof(Pair) +
         struck_.capacity() + (sort_keys_.capacity() + sort_scratch_.capacity()) * sizeof(std::uint64_t) +
         sort_counts_.capacity() * sizeof(std::uint32_t);
}

bool PairManager::validate() const {
  if (flags_.size() != pairs_.size() || !touched_.empty()) return false;
  if (!assigned_created_.empty() || !assigned_deleted_.empty()) return false;
  if (index_stale_) {  // after assign(): sorted, each pair once, a < b
    for (std::uint32_t i = 0; i < pairs_.size(); ++i) {
      if (pairs_[i].a >= pairs_[i].b || (flags_[i] & ~kHeld) != 0) return false;
      if (i > 0 && !(pair_key(pairs_[i - 1]) < pair_key(pairs_[i]))) return false;
    }
    return true;
  }
  if (index_.size() != pairs_.size()) return false;
  for (std::uint32_t i = 0; i < pairs_.size(); ++i) {
    if (pairs_[i].a >= pairs_[i].b || (flags_[i] & ~kHeld) != 0 || index_.find(pair_key(pairs_[i])) != i) return false;
  }
  return true;
}

}  // namespace sapling
