// Contact distances (contact_distance.hpp).
#include "core/broad_phase/contact_distance.hpp"

#include <algorithm>
#include <utility>

#include "detail/reserve.hpp"

namespace sapling::detail {

bool ContactDistances::start_for(std::span<const float> batch, std::span<const Box3> broad_boxes,
                                 int broad_phase_dims) {
  if (in_use || std::all_of(batch.begin(), batch.end(), [](float d) { return d == 0.0f; })) return false;
  distances.assign(broad_boxes.size(), 0.0f);
  own_boxes.assign(broad_boxes.begin(), broad_boxes.end());
  dims = broad_phase_dims;
  in_use = true;
  return true;
}

void ContactDistances::reserve_slots(std::size_t slots) {
  if (!in_use) return;
  reserve_geometric(distances, slots);
  reserve_geometric(own_boxes, slots);
}

void StagedContact::start(std::span<const Box3> added_boxes, std::span<const Box3> moved_boxes) {
  added_own.assign(added_boxes.begin(), added_boxes.end());
  added_distances.assign(added_boxes.size(), 0.0f);
  moved_own.assign(moved_boxes.begin(), moved_boxes.end());
  moved_distances.assign(moved_boxes.size(), 0.0f);
}

void StagedContact::apply(ContactDistances& table, std::span<const Slot> added, std::span<const Slot> moved) noexcept {
  if (!table.in_use) return;
  for (std::size_t k = 0; k < moved.size(); ++k) {
    std::swap(table.own_boxes[moved[k]], moved_own[k]);
    std::swap(table.distances[moved[k]], moved_distances[k]);
  }
  for (std::size_t k = 0; k < added.size(); ++k) {
    table.own_boxes[added[k]] = added_own[k];
    table.distances[added[k]] = added_distances[k];
  }
}

void StagedContact::undo(ContactDistances& table, std::span<const Slot> moved) noexcept {
  if (!table.in_use) return;
  for (std::size_t k = 0; k < moved.size(); ++k) {
    std::swap(table.own_boxes[moved[k]], moved_own[k]);
    std::swap(table.distances[moved[k]], moved_distances[k]);
  }
}

void StagedContact::clear() noexcept {
  added_own.clear();
  added_distances.clear();
  moved_own.clear();
  moved_distances.clear();
}

void StagedContact::free_storage() noexcept {
  detail::free_storage(added_own);
  detail::free_storage(added_distances);
  detail::free_storage(moved_own);
  detail::free_storage(moved_distances);
}

}  // namespace sapling::detail
