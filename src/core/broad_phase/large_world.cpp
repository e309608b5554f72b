// Large worlds (large_world.hpp).
#include "core/broad_phase/large_world.hpp"

#include <cmath>

#include "detail/reserve.hpp"

namespace sapling::detail {

namespace {

// x - origin rounded to a float toward -inf (up = false) or +inf (up =
// true), exactly: s = x - origin rounded to double; where s is itself a
// float, the error term e with s + e == x - origin (Knuth's TwoSum)
// decides, and elsewhere s lies strictly between two floats and its side
// is the real difference's. The common case costs a subtraction, a
// conversion and a comparison.
float rounded_difference(double x, double origin, bool up) noexcept {
  const double s = x - origin;
  float f = static_cast<float>(s);
  const auto step = [&](float v) { return std::nextafter(v, up ? HUGE_VALF : -HUGE_VALF); };
  if (double(f) == s) {
    if (std::isinf(s)) return f;  // an infinite bound stays infinite
    const double back = s - x;
    const double error = (x - (s - back)) + (-origin - back);
    if (up ? error > 0 : error < 0) f = step(f);
  } else if (std::isinf(f)) {  // beyond the float range: the largest float on the near side
    if (up != (f > 0)) f = std::nextafter(f, 0.0f);
  } else if (up ? double(f) < s : double(f) > s) {
    f = step(f);
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
