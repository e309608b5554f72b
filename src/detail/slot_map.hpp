// A dense slot map: an algorithm's live slots and their values packed into
// dense arrays (one span for a one-shot query or a sweep). Dense index d
// holds slot slot(d) and values<K>()[d]; index(s) inverts it. Insertion
// appends; erase() moves the last entry into the hole.
// Invariant (valid()): every dense array has size() entries, slots() lists
// each live slot once, index() inverts it, other slots map to kAbsent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <tuple>
#include <vector>

#include "detail/reserve.hpp"

namespace sapling::detail {

template <class... Values>
class SlotMap {
 public:
  using Slot = std::uint32_t;
  static constexpr std::uint32_t kAbsent = ~std::uint32_t{0};

  std::size_t size() const noexcept { return slots_.size(); }
  bool empty() const noexcept { return slots_.empty(); }
  bool contains(Slot s) const noexcept { return s < index_.size() && index_[s] != kAbsent; }
  /// The dense index of a live slot.
  std::uint32_t index(Slot s) const noexcept { return index_[s]; }
  /// Slots below this have an entry in the index (reserve_slots()).
  std::size_t slots_reserved() const noexcept { return index_.size(); }
  /// Asks for index(s)'s line ahead of reading it (s < slots_reserved()).
  void prefetch_index(Slot s) const noexcept { __builtin_prefetch(index_.data() + s); }
  /// The slot at dense index d.
  Slot slot(std::size_t d) const noexcept { return slots_[d]; }
  /// The live slots, in dense order.
  std::span<const Slot> slots() const noexcept { return slots_; }

  /// The K-th dense array, in dense order.
  template <std::size_t K>
  auto& values() noexcept {
    return std::get<K>(values_);
  }
  template <std::size_t K>
  const auto& values() const noexcept {
    return std::get<K>(values_);
  }
  /// The K-th value of a live slot.
  template <std::size_t K>
  auto& value(Slot s) noexcept {
    return std::get<K>(values_)[index_[s]];
  }

  /// Makes slots below `slots` known (inserting them then grows nothing by slot).
  void reserve_slots(std::size_t slots) {
    if (slots > index_.size()) {
      reserve_geometric(index_, slots);
      index_.resize(slots, kAbsent);
    }
  }
  /// Makes room for `n` live entries in the dense arrays.
  void reserve(std::size_t n) {
    reserve_geometric(slots_, n);
    std::apply([&](auto&... arrays) { (reserve_geometric(arrays, n), ...); }, values_);
  }

  /// Adds slot s, absent, at the end of the dense arrays.
  void insert(Slot s, const Values&... v) {
    if (s >= index_.size()) reserve_slots(std::size_t{s} + 1);
    index_[s] = static_cast<std::uint32_t>(slots_.size());
    slots_.push_back(s);
    std::apply([&](auto&... arrays) { (arrays.push_back(v), ...); }, values_);
  }

  /// Removes live slot s: the last entry takes its dense index.
  void erase(Slot s) noexcept {
    const std::uint32_t d = index_[s];
    const Slot last = slots_.back();
    slots_[d] = last;
    index_[last] = d;
    slots_.pop_back();
    std::apply([&](auto&... arrays) { ((arrays[d] = arrays.back(), arrays.pop_back()), ...); }, values_);
    index_[s] = kAbsent;
  }

  /// Entries the dense arrays hold room for.
  std::size_t capacity() const noexcept { return slots_.capacity(); }
  /// Gives back the room beyond the live entries, and the slots above the
  /// highest live one (after a mass removal).
  void shrink_to_fit() {
    while (!index_.empty() && index_.back() == kAbsent) index_.pop_back();
    index_.shrink_to_fit();
    slots_.shrink_to_fit();
    std::apply([](auto&... arrays) { (arrays.shrink_to_fit(), ...); }, values_);
  }

  std::size_t memory_bytes() const noexcept {
    std::size_t bytes = (slots_.capacity() + index_.capacity()) * sizeof(std::uint32_t);
    std::apply([&](const auto&... arrays) { ((bytes += arrays.capacity() * sizeof(arrays[0])), ...); }, values_);
    return bytes;
  }

  /// Checks the invariant above; false on the first violation.
  bool valid() const {
    bool sizes = true;
    std::apply([&](const auto&... arrays) { ((sizes = sizes && arrays.size() == slots_.size()), ...); }, values_);
    if (!sizes) return false;
    std::size_t live = 0;
    for (Slot s = 0; s < index_.size(); ++s) {
      if (index_[s] == kAbsent) continue;
      if (index_[s] >= slots_.size() || slots_[index_[s]] != s) return false;
      ++live;
    }
    return live == slots_.size();
  }

 private:
  std::vector<Slot> slots_;                    // dense index -> slot
  std::vector<std::uint32_t> index_;           // slot -> dense index, or kAbsent
  std::tuple<std::vector<Values>...> values_;  // dense arrays
};

}  // namespace sapling::detail
