// Per object, the neighbours found near it last time: a box around the
// object with room to move (its "fat" box) and every static object that
// overlaps that box. While the object stays inside its fat box, its pairs
// with static objects can only be among those neighbours, so a move tests a
// short list instead of querying the static tree. This is the fat AABB of
// Box2D's b2DynamicTree and Bullet's btDbvt turned around: the boxes in the
// tree stay exact, the margin lives with the mover, and the test on the
// list is exact, so nothing about the pairs changes, only the cost.
//
// Lists live in one pool (no allocation per object); a list that is
// replaced leaves a hole, and the pool is compacted when holes outweigh the
// lists. A change of the static objects makes every list stale at once
// (invalidate_all(), a generation count).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sapling/box.hpp"

namespace sapling::detail {

class NeighbourCache {
 public:
  using Slot = std::uint32_t;

  /// The fat box for `box`: half its extent around it on each axis (an axis
  /// of no extent borrows the largest margin of the others).
  static Box3 fat_box(const Box3& box) noexcept {
    float margin[3], largest = 0.0f;
    for (int k = 0; k < 3; ++k) {
      margin[k] = 0.5f * (box.max[k] - box.min[k]);
      if (!(margin[k] < kHuge)) margin[k] = 0.0f;  // infinite: nothing to add
      if (margin[k] > largest) largest = margin[k];
    }
    Box3 fat;
    for (int k = 0; k < 3; ++k) {
      const float m = margin[k] > 0.0f ? margin[k] : largest;
      fat.min[k] = box.min[k] - m;  // rounds to at most min: the fat box contains the box
      fat.max[k] = box.max[k] + m;
    }
    return fat;
  }

  /// The neighbours of `slot` if its list is current and `box` lies inside
  /// its fat box; else nothing (`found` false).
  std::span<const Slot> lookup(Slot slot, const Box3& box, bool& found) const noexcept {
    found = false;
    if (slot >= entries_.size()) return {};
    const Entry& e = entries_[slot];
    if (e.generation != generation_) return {};
    for (int k = 0; k < 3; ++k) {
      if (!(e.fat.min[k] <= box.min[k] && box.max[k] <= e.fat.max[k])) return {};
    }
    found = true;
    return std::span<const Slot>(pool_).subspan(e.first, e.count);
  }

  /// Makes `neighbours` the list of `slot` around `fat`.
  void store(Slot slot, const Box3& fat, std::span<const Slot> neighbours) {
    if (slot >= entries_.size()) entries_.resize(slot + 1);
    forget(slot);
    if (pool_.size() + neighbours.size() > 2 * listed_ + 4096) compact();
    Entry& e = entries_[slot];
    e.fat = fat;
    e.first = static_cast<std::uint32_t>(pool_.size());
    e.count = static_cast<std::uint32_t>(neighbours.size());
    e.generation = generation_;
    pool_.insert(pool_.end(), neighbours.begin(), neighbours.end());
    listed_ += neighbours.size();
  }

  /// Drops the list of `slot`, if any.
  void forget(Slot slot) noexcept {
    if (slot >= entries_.size()) return;
    Entry& e = entries_[slot];
    if (e.generation == generation_) listed_ -= e.count;
    e.generation = 0;
  }

  /// Every list becomes stale (the static objects changed).
  void invalidate_all() noexcept {
    ++generation_;
    listed_ = 0;
  }

  void clear() noexcept {
    entries_.clear();
    pool_.clear();
    listed_ = 0;
    ++generation_;
  }

  std::size_t memory_bytes() const noexcept {
    return entries_.capacity() * sizeof(Entry) + pool_.capacity() * sizeof(Slot);
  }

 private:
  static constexpr float kHuge = 3.0e38f;

  struct Entry {
    Box3 fat;
    std::uint32_t first = 0, count = 0;
    std::uint32_t generation = 0;  // current iff equal to generation_ (which is never 0)
  };

  // Copies the current lists to the front of a new pool.
  void compact() {
    std::vector<Slot> pool;
    pool.reserve(2 * listed_ + 4096);
    for (Entry& e : entries_) {
      if (e.generation != generation_) continue;
      const std::uint32_t first = static_cast<std::uint32_t>(pool.size());
      pool.insert(pool.end(), pool_.begin() + e.first, pool_.begin() + e.first + e.count);
      e.first = first;
    }
    pool_.swap(pool);
  }

  std::vector<Entry> entries_;  // by slot
  std::vector<Slot> pool_;
  std::size_t listed_ = 0;  // neighbours in current lists
  std::uint32_t generation_ = 1;
};

}  // namespace sapling::detail
