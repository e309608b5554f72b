// Per object, the neighbours found near it last time: a box around the
// object with room to move (its "fat" box) and every static object that
// overlaps that box. While the object stays inside its fat box, its pairs
// with static objects can only be among those neighbours, so a move tests a
// short list instead of querying the static tree. This is the fat AABB of
// Box2D's b2DynamicTree and Bullet's btDbvt turned around: the boxes in the
// tree stay exact, the margin lives with the mover, and the test on the
// list is exact, so nothing about the pairs changes, only the cost.
//
// Lists live in one pool (no allocation per object once warm), found by
// slot through a slot map (4 bytes per slot of the world, the rest per
// listed object); a list that is replaced leaves a hole, and the pool is
// compacted when holes outweigh the lists. A change of static objects makes the lists around it stale
// (invalidate_around()), or all of them at once (invalidate_all(), a
// generation count).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "detail/slot_map.hpp"
#include "sapling/box.hpp"
#include "sapling/pair.hpp"

namespace sapling::detail {

class NeighbourCache {
 public:
  using Slot = std::uint32_t;

  /// The fat box for `box`: its extent around it on each axis (an axis of
  /// no extent borrows the largest margin of the others). Half the extent
  /// sent a level's movers back to the tree about twice as often, at some
  /// 1 us a walk of a 1M-box tree (bench/results/levels.md).
  static Box3 fat_box(const Box3& box) noexcept {
    float margin[3], largest = 0.0f;
    for (int k = 0; k < 3; ++k) {
      margin[k] = box.max[k] - box.min[k];
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

  /// A neighbour: its box, slot and id, copied so that a move reads one
  /// contiguous list rather than the boxes and ids of the world at random
  /// (a level's movers start and end some 1,500 pairs a frame, each named
  /// by the static object's id).
  struct Neighbour {
    Box3 box;
    Slot slot;
    Id id;
  };

  /// The neighbours of `slot` if its list is current and `box` lies inside
  /// its fat box; else nothing (`found` false).
  std::span<const Neighbour> lookup(Slot slot, const Box3& box, bool& found) const noexcept {
    found = false;
    if (!lists_.contains(slot)) return {};
    const List& list = lists_.values<0>()[lists_.index(slot)];
    if (list.generation != generation_) return {};
    for (int k = 0; k < 3; ++k) {
      if (!(list.fat.min[k] <= box.min[k] && box.max[k] <= list.fat.max[k])) return {};
    }
    found = true;
    return std::span<const Neighbour>(pool_).subspan(list.first, list.count);
  }

  /// Ask for the lines a lookup(slot) will read, some objects ahead of it, in
  /// three steps each a few objects after the last: the slot's entry in the
  /// map, then its list's header, then the list. A level's lists are cold by
  /// the time their movers come round again (a frame walks a tree of
  /// millions of nodes in between), so without this every move waited on
  /// memory twice (bench/results/levels.md).
  void prefetch_index(Slot slot) const noexcept {
    if (slot < lists_.slots_reserved()) lists_.prefetch_index(slot);
  }
  void prefetch_list(Slot slot) const noexcept {
    if (!lists_.contains(slot)) return;
    const char* at = reinterpret_cast<const char*>(&lists_.values<0>()[lists_.index(slot)]);
    __builtin_prefetch(at);
    __builtin_prefetch(at + sizeof(List) - 1);
  }
  void prefetch_neighbours(Slot slot) const noexcept {
    if (!lists_.contains(slot)) return;
    const List& list = lists_.values<0>()[lists_.index(slot)];
    if (list.generation != generation_ || list.count == 0) return;
    constexpr std::size_t kLine = 64, kMostLines = 4;
    const char* at = reinterpret_cast<const char*>(pool_.data() + list.first);
    const std::size_t bytes = std::min<std::size_t>(list.count * sizeof(Neighbour), kMostLines * kLine);
    for (std::size_t b = 0; b < bytes; b += kLine) __builtin_prefetch(at + b);
    __builtin_prefetch(at + bytes - 1);
  }

  /// Room for the caller to gather a list before store().
  std::vector<Neighbour>& scratch() noexcept { return scratch_; }

  /// Makes `neighbours` the list of `slot` around `fat`.
  void store(Slot slot, const Box3& fat, std::span<const Neighbour> neighbours) {
    forget(slot);
    if (pool_.size() + neighbours.size() > 2 * listed_ + 4096) compact();
    const List list{fat, static_cast<std::uint32_t>(pool_.size()), static_cast<std::uint32_t>(neighbours.size()),
                    generation_};
    pool_.insert(pool_.end(), neighbours.begin(), neighbours.end());
    lists_.insert(slot, list);
    listed_ += neighbours.size();
  }

  /// Drops the list of `slot`, if any.
  void forget(Slot slot) noexcept {
    if (!lists_.contains(slot)) return;
    const List& list = lists_.values<0>()[lists_.index(slot)];
    if (list.generation == generation_) listed_ -= list.count;
    lists_.erase(slot);
  }

  /// The lists whose fat box overlaps one of `regions` become stale (the
  /// static objects there changed); all of them for many regions.
  void invalidate_around(std::span<const Box3> regions) noexcept {
    constexpr std::size_t kFewRegions = 16;
    if (regions.size() > kFewRegions) return invalidate_all();
    for (List& list : lists_.values<0>()) {
      if (list.generation != generation_) continue;
      for (const Box3& region : regions) {
        if (overlaps(list.fat, region)) {
          list.generation = 0;
          listed_ -= list.count;
          break;
        }
      }
    }
  }

  /// Every list becomes stale (the static objects changed).
  void invalidate_all() noexcept {
    ++generation_;
    listed_ = 0;
  }

  void clear() noexcept {
    lists_ = {};
    pool_.clear();
    listed_ = 0;
    ++generation_;
  }

  /// clear(), and the storage given back.
  void release() noexcept {
    clear();
    std::vector<Neighbour>().swap(pool_);
    std::vector<Neighbour>().swap(scratch_);
  }

  std::size_t memory_bytes() const noexcept {
    return lists_.memory_bytes() + (pool_.capacity() + scratch_.capacity()) * sizeof(Neighbour);
  }

 private:
  static constexpr float kHuge = 3.0e38f;

  struct List {
    Box3 fat;
    std::uint32_t first = 0, count = 0;
    std::uint32_t generation = 0;  // current iff equal to generation_ (which is never 0)
  };

  // Copies the current lists to the front of a new pool.
  void compact() {
    std::vector<Neighbour> pool;
    pool.reserve(2 * listed_ + 4096);
    for (List& list : lists_.values<0>()) {
      if (list.generation != generation_) continue;
      const auto first = static_cast<std::uint32_t>(pool.size());
      pool.insert(pool.end(), pool_.begin() + list.first, pool_.begin() + list.first + list.count);
      list.first = first;
    }
    pool_.swap(pool);
  }

  SlotMap<List> lists_;  // by slot, the objects that have a list
  std::vector<Neighbour> pool_;
  std::vector<Neighbour> scratch_;
  std::size_t listed_ = 0;  // neighbours in current lists
  std::uint32_t generation_ = 1;
};

}  // namespace sapling::detail
