// Large worlds (large_world.hpp).
#include "core/broad_phase/large_world.hpp"

#include <cmath>

#include "detail/reserve.hpp"

namespace sapling::detail {

Box3 outward_relative(const Box3d& box, const std::array<double, 3>& origin) noexcept {
  Box3 f;
  for (int k = 0; k < 3; ++k) {
    f.min[k] = round_sum(box.min[k], -origin[k], false);  // box.hpp: exact, TwoSum
    f.max[k] = round_sum(box.max[k], -origin[k], true);
  }
  return f;
}

void ExactBoxes::reserve_slots(std::size_t slots) {
  if (!in_use) return;
  reserve_geometric(boxes, slots);
  reserve_geometric(given, slots);
}

void LargeWorld::commit(ExactBoxes& table, std::span<const Slot> moved) noexcept {
  if (!table.in_use) return;
  if (staged_slots.size() != moved.size()) {  // some were given as float
    for (const Slot s : moved) table.given[s] = 0;
  }
  for (std::size_t k = 0; k < staged_slots.size(); ++k) {
    table.boxes[staged_slots[k]] = staged_boxes[k];
    table.given[staged_slots[k]] = 1;
  }
  drop_staged();
}

}  // namespace sapling::detail
