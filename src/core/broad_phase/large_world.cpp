// Large worlds (large_world.hpp).
#include "core/broad_phase/large_world.hpp"

#include <cmath>

#include "detail/reserve.hpp"

namespace sapling::detail {

namespace {

// x - origin rounded to a float toward -inf (up = false) or +inf (up =
// true), exactly: s = x - origin rounded to double, and e the error term
// with s + e == x - origin (Knuth's TwoSum), so a tie at a float is broken
// by the sign of e.
float rounded_difference(double x, double origin, bool up) noexcept {
  if (std::isinf(x)) return static_cast<float>(x);
  const double by = -origin;
  const double s = x + by;
  const double back = s - x;
  const double error = (x - (s - back)) + (by - back);
  float f = static_cast<float>(s);
  if (std::isinf(f)) return up ? (f > 0 ? f : std::nextafter(f, 0.0f)) : (f < 0 ? f : std::nextafter(f, 0.0f));
  if (up ? (double(f) < s || (double(f) == s && error > 0)) : (double(f) > s || (double(f) == s && error < 0))) {
    f = std::nextafter(f, up ? HUGE_VALF : -HUGE_VALF);
  }
  return f;
}

}  // namespace

Box3 outward_relative(const Box3d& box, const std::array<double, 3>& origin) noexcept {
  Box3 f;
  for (int k = 0; k < 3; ++k) {
    f.min[k] = rounded_difference(box.min[k], origin[k], false);
    f.max[k] = rounded_difference(box.max[k], origin[k], true);
  }
  return f;
}

void ExactBoxes::reserve_slots(std::size_t slots) {
  if (!in_use) return;
  reserve_geometric(boxes, slots);
  reserve_geometric(given, slots);
}

void LargeWorld::commit(ExactBoxes& table, std::span<const Slot> added, std::span<const Slot> moved) noexcept {
  if (!table.in_use) return;
  for (const Slot s : added) table.given[s] = 0;
  for (const Slot s : moved) table.given[s] = 0;
  for (std::size_t k = 0; k < staged_slots.size(); ++k) {
    table.boxes[staged_slots[k]] = staged_boxes[k];
    table.given[staged_slots[k]] = 1;
  }
  drop_staged();
}

}  // namespace sapling::detail
