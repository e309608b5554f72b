// The broad phase's store of objects (object_table.hpp).
#include "core/broad_phase/object_table.hpp"

#include "detail/reserve.hpp"

namespace sapling::detail {

void ObjectTable::reserve_slots(std::size_t n) {
  reserve_geometric(states, n);
  reserve_geometric(stamps, n);
  reserve_geometric(boxes, n);
  reserve_geometric(ids, n);
  if (uses_filters) reserve_geometric(filters, n);
  if (uses_statics) reserve_geometric(motions, n);
  contact.reserve_slots(n);
  exact.reserve_slots(n);
}

Slot ObjectTable::allocate() {
  if (!free_slots.empty()) {
    const Slot s = free_slots.back();
    free_slots.pop_back();
    return s;
  }
  const auto s = static_cast<Slot>(ids.size());
  ids.push_back(0);
  states.push_back(SlotState::kFree);
  stamps.push_back(0);
  boxes.push_back(Box3{});
  if (uses_filters) filters.push_back(Filter{});
  if (uses_statics) motions.push_back(Motion::kDynamic);
  contact.push_slot();
  exact.push_slot();
  return s;
}

void ObjectTable::pop_last_slot() noexcept {
  ids.pop_back();
  states.pop_back();
  stamps.pop_back();
  boxes.pop_back();
  if (uses_filters) filters.pop_back();
  if (uses_statics) motions.pop_back();
  contact.pop_slot();
  exact.pop_slot();
}

ObjectTable ObjectTable::compacted() const {
  ObjectTable out;
  out.uses_filters = uses_filters;
  out.uses_statics = uses_statics;
  out.contact.in_use = contact.in_use;
  out.contact.dims = contact.dims;
  out.exact.in_use = exact.in_use;
  out.live = live;
  out.ids.reserve(live);
  out.boxes.reserve(live);
  if (uses_filters) out.filters.reserve(live);
  if (uses_statics) out.motions.reserve(live);
  out.contact.reserve_slots(live);
  out.exact.reserve_slots(live);
  for (Slot s = 0; s < states.size(); ++s) {
    if (states[s] != SlotState::kLive) continue;
    out.slot_of_id.insert(ids[s], static_cast<Slot>(out.ids.size()));
    out.ids.push_back(ids[s]);
    out.boxes.push_back(boxes[s]);
    if (uses_filters) out.filters.push_back(filters[s]);
    if (uses_statics) out.motions.push_back(motions[s]);
    if (contact.in_use)
      out.contact.distances.push_back(contact.distances[s]), out.contact.own_boxes.push_back(contact.own_boxes[s]);
    if (exact.in_use) out.exact.boxes.push_back(exact.boxes[s]), out.exact.given.push_back(exact.given[s]);
  }
  out.states.assign(live, SlotState::kLive);
  out.stamps.assign(live, 0);
  return out;
}

std::size_t ObjectTable::memory_bytes() const noexcept {
  return slot_of_id.memory_bytes() + ids.capacity() * sizeof(Id) + states.capacity() * sizeof(SlotState) +
         stamps.capacity() * sizeof(Stamp) + free_slots.capacity() * sizeof(Slot) + boxes.capacity() * sizeof(Box3) +
         filters.capacity() * sizeof(Filter) + motions.capacity() * sizeof(Motion) + contact.memory_bytes() +
         exact.memory_bytes();
}

bool ObjectTable::validate() const {
  const std::size_t n = slots();
  if (states.size() != n || stamps.size() != n || boxes.size() != n) return false;
  if ((uses_filters && filters.size() != n) || (uses_statics && motions.size() != n)) return false;
  if (!contact.validate(boxes, [&](Slot s) { return states[s] == SlotState::kLive; })) return false;
  if (!exact.validate(n)) return false;
  std::size_t live_seen = 0, free_seen = 0;
  for (Slot s = 0; s < n; ++s) {
    switch (states[s]) {
      case SlotState::kLive:
        ++live_seen;
        [[fallthrough]];
      case SlotState::kPendingAdd:
        if (slot_of_id.find(ids[s]) != s) return false;
        break;
      case SlotState::kFree:
        ++free_seen;
        break;
      case SlotState::kPendingRemove:  // only while update() runs
        return false;
    }
  }
  if (live_seen != live || free_seen != free_slots.size() || slot_of_id.size() != n - free_seen) return false;
  return std::all_of(free_slots.begin(), free_slots.end(),
                     [&](Slot s) { return s < n && states[s] == SlotState::kFree; });
}

}  // namespace sapling::detail
