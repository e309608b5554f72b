// The pairs of overlapping boxes by the plainest method that is fast enough
// to check a million boxes: sort by min x, then test each box against the
// boxes that follow it while their min x is not past its max x (closed
// intervals). No algorithm of the library is used, so it can check any of
// them: BroadPhase::validate() and the tests' oracles rely on it.
// O(n log n + pairs on x) time, O(n) memory.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

#include "sapling/box.hpp"

namespace sapling::detail {

/// visit(i, j) once for every pair of overlapping boxes, i != j, in an
/// unspecified order (i and j in either order).
template <class Visit>
void for_each_overlapping_pair(std::span<const Box3> boxes, Visit&& visit) {
  std::vector<std::uint32_t> order(boxes.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return boxes[a].min[0] < boxes[b].min[0] || (boxes[a].min[0] == boxes[b].min[0] && a < b);
  });
  for (std::size_t k = 0; k < order.size(); ++k) {
    const Box3& a = boxes[order[k]];
    for (std::size_t l = k + 1; l < order.size() && boxes[order[l]].min[0] <= a.max[0]; ++l) {
      if (overlaps(a, boxes[order[l]])) visit(order[k], order[l]);
    }
  }
}

}  // namespace sapling::detail
