// Vector capacity, managed: room for `n` elements grown geometrically
// (std::vector's reserve(n) allocates exactly n, so calling it with a slowly
// growing n, one more slot or a few more pairs each frame, would copy the
// vector every time; used wherever room is made ahead of a step that must not
// fail), and storage given back after a mass removal.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace sapling::detail {

template <class T>
void reserve_geometric(std::vector<T>& v, std::size_t n) {
  if (n > v.capacity()) v.reserve(std::max(n, 2 * v.capacity()));
}

/// Empties `v` and gives its storage back (`v = {}` and clear() keep it).
template <class T>
void free_storage(std::vector<T>& v) noexcept {
  std::vector<T>().swap(v);
}

}  // namespace sapling::detail
