// Vector capacity, managed: room for `n` elements grown geometrically
// (std::vector's reserve(n) allocates exactly n, so calling it with a slowly
// growing n, one more slot or a few more pairs each frame, would copy the
// vector every time; used wherever room is made ahead of a step that must not
// fail), and storage given back after a mass removal or when large room
// goes mostly unused.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "detail/huge_pages.hpp"

namespace sapling::detail {

// Grown by a quarter, not doubled: the copies stay amortised O(1) per
// element (4 per element at most, against 1), and the slack after a small
// overshoot is a quarter, not the whole: a world of 1M objects that takes a
// few thousand more (a frame's insertions get new slots before its
// removals free theirs) held room for 2M in every per-slot array, 37 bytes
// per object of the BroadPhase's alone. A jump (a mass insertion) gets a
// sixteenth more than it asks: the frames after it, which add a few
// objects before their removals free slots, then find the room there
// instead of copying every per-slot array in the first of them (at 10k
// objects that frame took 2-3 times a steady one). Large room goes on
// huge pages (huge_pages.hpp).
template <class T>
void reserve_geometric(std::vector<T>& v, std::size_t n) {
  if (n <= v.capacity()) return;
  v.reserve(std::max(n + n / 16, v.capacity() + v.capacity() / 4 + 4));
  advise_huge_pages(v);
}

/// Empties `v` and gives its storage back (`v = {}` and clear() keep it).
template <class T>
void free_storage(std::vector<T>& v) noexcept {
  std::vector<T>().swap(v);
}

/// Scratch room of this many elements or more is given back once the
/// frames use less than half of it (a mass insertion's, a layout's): its
/// page faults, when wanted again, cost a fraction of the O(n) step that
/// needs it. Smaller room is kept, so that warm frames allocate nothing.
inline constexpr std::size_t kKeptRoom = std::size_t{1} << 16;

/// Gives `v`'s storage back where it is large room mostly unused: at least
/// kKeptRoom elements and more than twice `used`. Empties `v` if so.
template <class T>
void give_back_unused(std::vector<T>& v, std::size_t used) noexcept {
  if (v.capacity() >= kKeptRoom && v.capacity() > 2 * used) free_storage(v);
}

}  // namespace sapling::detail
