// Room for `n` elements in a vector, grown geometrically: std::vector's
// reserve(n) allocates exactly n, so calling it with a slowly growing n
// (one more slot, a few more pairs each frame) would copy the vector every
// time. Used wherever room is made ahead of a step that must not fail.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace sapling::detail {

template <class T>
void reserve_geometric(std::vector<T>& v, std::size_t n) {
  if (n > v.capacity()) v.reserve(std::max(n, 2 * v.capacity()));
}

}  // namespace sapling::detail
