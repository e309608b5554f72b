// Staging a frame's operations (staged_frame.hpp).
#include "core/broad_phase/staged_frame.hpp"

#include <algorithm>

#include "detail/reserve.hpp"

namespace sapling::detail {

BoxCheck check_box_in(const Box3& box, int dims) noexcept {
  if (const BoxCheck check = check_box(box); !check) return check;
  return check_plane(box, dims);
}

FrameOps DynamicShare::split(const FrameOps& ops, const ObjectTable& objects) {
  if (!objects.uses_statics) return ops;
  removed.clear();
  moved.clear();
  moved_boxes.clear();
  added.clear();
  added_boxes.clear();
  for (const Slot s : ops.removed) {
    if (!objects.is_static(s)) removed.push_back(s);
  }
  for (std::size_t k = 0; k < ops.moved.size(); ++k) {
    if (!objects.is_static(ops.moved[k])) moved.push_back(ops.moved[k]), moved_boxes.push_back(ops.moved_boxes[k]);
  }
  for (std::size_t k = 0; k < ops.added.size(); ++k) {
    if (!objects.is_static(ops.added[k])) added.push_back(ops.added[k]), added_boxes.push_back(ops.added_boxes[k]);
  }
  return FrameOps{removed, moved, moved_boxes, added, added_boxes, ops.boxes, ops.filter, ops.store};
}

void DynamicShare::split_batch(std::span<const Id> ids, std::span<const Slot> slots, std::span<const Box3> boxes,
                               const ObjectTable& objects) {
  batch_ids.clear();
  batch_boxes.clear();
  batch_index.clear();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (objects.is_static(slots[i])) continue;
    batch_ids.push_back(ids[i]);
    batch_boxes.push_back(boxes[i]);
    batch_index.push_back(i);
  }
}

void DynamicShare::give_back_unused() noexcept {
  detail::give_back_unused(batch_ids, batch_ids.size());
  detail::give_back_unused(batch_boxes, batch_boxes.size());
  detail::give_back_unused(batch_index, batch_index.size());
  detail::give_back_unused(removed, removed.size());
  detail::give_back_unused(moved, moved.size());
  detail::give_back_unused(added, added.size());
  detail::give_back_unused(moved_boxes, moved_boxes.size());
  detail::give_back_unused(added_boxes, added_boxes.size());
}

void DynamicShare::free_storage() noexcept {
  detail::free_storage(batch_ids);
  detail::free_storage(batch_boxes);
  detail::free_storage(batch_index);
  detail::free_storage(removed);
  detail::free_storage(moved);
  detail::free_storage(added);
  detail::free_storage(moved_boxes);
  detail::free_storage(added_boxes);
}

bool StagedFrame::changes_statics(const ObjectTable& objects) const noexcept {
  if (!objects.uses_statics) return false;
  const auto any_static = [&](const std::vector<Slot>& list) {
    return std::any_of(list.begin(), list.end(), [&](Slot s) { return objects.is_static(s); });
  };
  return any_static(removed) || any_static(moved) || any_static(added);
}

namespace {
constexpr const char* kBadDistance = "contact distance is negative, NaN or infinite";
// How far ahead a batch's loop asks for its ids' entries in the id index:
// ids that are not dense (hashed) miss the cache on every look-up, and one
// iteration's work is too long for the core to overlap the next ones'.
constexpr std::size_t kIdsAhead = 16;
constexpr const char* kDistanceCount = "contact distances must be empty or hold one distance per id";
}  // namespace

Status StagedFrame::add(ObjectTable& objects, Stamp stamp, std::span<const Id> ids, const BoxBatch& boxes,
                        std::span<const Filter> filters, std::span<const float> distances, Motion motion,
                        const Algorithm& algorithm, int dims) {
  if (ids.size() != boxes.size()) return Status::size_mismatch(Operation::kAdd, ids.size(), boxes.size());
  if (!filters.empty() && filters.size() != ids.size()) {
    return Status::invalid_argument(Operation::kAdd, "filters must be empty or hold one filter per id");
  }
  if (!distances.empty() && distances.size() != ids.size())
    return Status::invalid_argument(Operation::kAdd, kDistanceCount);
  if (motion != Motion::kDynamic && motion != Motion::kStatic) {
    return Status::invalid_argument(Operation::kAdd, "motion must be Motion::kDynamic or Motion::kStatic");
  }
  objects.keep_filters_for(filters);
  if (!ids.empty()) objects.keep_motions_for(motion);
  if (objects.contact.start_for(distances, objects.boxes, dims)) contact_.start(added_boxes, moved_boxes);
  const std::size_t staged_before = added.size();
  if (staged_before == 0) first_fresh_slot_ = objects.slots();
  // Room for the whole batch at once: a series of doublings would copy,
  // and so touch, each array about twice (at a million boxes, 40 MB more
  // page faults in the first frame).
  objects.reserve_slots(objects.slots() + ids.size() - std::min(ids.size(), objects.free_slots.size()));
  reserve_geometric(added, staged_before + ids.size());
  reserve_geometric(added_boxes, staged_before + ids.size());
  const bool with_contact = objects.contact.in_use;
  if (with_contact) {
    reserve_geometric(contact_.added_own, staged_before + ids.size());
    reserve_geometric(contact_.added_distances, staged_before + ids.size());
  }
  Status status;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const Id id = ids[i];
    if (i + kIdsAhead < ids.size()) objects.slot_of_id.prefetch(ids[i + kIdsAhead]);
    Box3 box;
    if (const BoxCheck check = boxes.take(i, dims, box); !check) {
      status = Status::invalid_box(Operation::kAdd, id, i, check);
      break;
    }
    const float distance = distances.empty() ? 0.0f : distances[i];
    if (!valid_contact_distance(distance)) {
      status = Status::invalid_argument(Operation::kAdd, id, i, kBadDistance);
      break;
    }
    if (const std::uint32_t existing = objects.slot_of_id.find(id); existing != IdIndex::kNotFound) {
      const bool touched = objects.stamps[existing] == stamp;  // removed, moved or added this frame
      status = Status::id_error(touched ? StatusCode::kRepeatedId : StatusCode::kDuplicateId, Operation::kAdd, id, i);
      break;
    }
    const Slot s = objects.allocate();
    objects.slot_of_id.insert(id, s);
    objects.ids[s] = id;
    objects.states[s] = SlotState::kPendingAdd;
    objects.stamps[s] = stamp;
    if (objects.uses_filters) objects.filters[s] = filters.empty() ? Filter{} : filters[i];
    if (objects.uses_statics) objects.motions[s] = motion;
    if (boxes.in_doubles()) {  // a slot staged for addition is no live object: nothing reads it before the commit
      objects.exact.boxes[s] = boxes.doubles[i];
      objects.exact.given[s] = 1;
    } else if (objects.exact.in_use) {
      objects.exact.given[s] = 0;
    }
    added.push_back(s);
    if (with_contact) {
      contact_.added_own.push_back(box);
      contact_.added_distances.push_back(distance);
      added_boxes.push_back(broad_box(box, distance, dims));
    } else {
      added_boxes.push_back(box);
    }
  }
  if (status && motion == Motion::kDynamic) {  // the algorithm's say comes last; static objects never reach it
    const FrameOps before{removed, moved, moved_boxes, std::span(added).first(staged_before),
                          std::span(added_boxes).first(staged_before)};
    // It judges the boxes it would see: the broad boxes.
    status = algorithm_accepts(objects, Operation::kAdd, ids, std::span(added).subspan(staged_before),
                               std::span(added_boxes).subspan(staged_before), before, algorithm);
  }
  if (status) return status;
  // Undo the accepted part of the batch, newest first, so the free list is
  // restored to the exact order it had.
  while (added.size() > staged_before) {
    objects.release(added.back(), added.back() >= first_fresh_slot_);
    added.pop_back();
    added_boxes.pop_back();
  }
  contact_.truncate(added.size(), moved.size());
  return status;
}

Status StagedFrame::change(ObjectTable& objects, Stamp stamp, Operation op, std::span<const Id> ids,
                           const BoxBatch& boxes, std::span<const Filter> filters, std::span<const float> distances,
                           const Algorithm& algorithm, int dims) {
  const bool is_move = op == Operation::kMove, is_filter = op == Operation::kSetFilter;
  if (is_move && ids.size() != boxes.size()) return Status::size_mismatch(op, ids.size(), boxes.size());
  if (is_filter && ids.size() != filters.size()) return Status::size_mismatch(op, ids.size(), filters.size());
  if (!distances.empty() && distances.size() != ids.size()) return Status::invalid_argument(op, kDistanceCount);
  if (is_filter) objects.keep_filters_for(filters);
  if (is_move && objects.contact.start_for(distances, objects.boxes, dims)) contact_.start(added_boxes, moved_boxes);
  const bool with_contact = objects.contact.in_use;
  std::vector<Slot>& staged = is_move ? moved : is_filter ? refiltered : removed;
  const std::size_t staged_before = staged.size();
  old_stamps_.clear();
  Status status;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const Id id = ids[i];
    if (i + kIdsAhead < ids.size()) objects.slot_of_id.prefetch(ids[i + kIdsAhead]);
    Box3 box;
    if (is_move) {
      if (const BoxCheck check = boxes.take(i, dims, box); !check) {
        status = Status::invalid_box(op, id, i, check);
        break;
      }
      if (!distances.empty() && !valid_contact_distance(distances[i])) {
        status = Status::invalid_argument(op, id, i, kBadDistance);
        break;
      }
    }
    const std::uint32_t s = objects.slot_of_id.find(id);
    if (s == IdIndex::kNotFound) {
      status = Status::id_error(StatusCode::kUnknownId, op, id, i);
      break;
    }
    if (objects.stamps[s] == stamp) {  // added, moved, removed or refiltered earlier this frame
      status = Status::id_error(StatusCode::kRepeatedId, op, id, i);
      break;
    }
    if (is_move && with_contact) {  // a move without a distance keeps the object's
      const float distance = distances.empty() ? objects.contact.distances[s] : distances[i];
      contact_.moved_own.push_back(box);
      contact_.moved_distances.push_back(distance);
      moved_boxes.push_back(broad_box(box, distance, dims));
    } else if (is_move) {
      moved_boxes.push_back(box);
    }
    if (is_filter) refilters.push_back(filters[i]);
    old_stamps_.push_back(objects.stamps[s]);
    objects.stamps[s] = stamp;
    staged.push_back(s);
  }
  if (status && is_move) {  // the algorithm's say comes last, on the whole batch
    const FrameOps before{removed, std::span(moved).first(staged_before), std::span(moved_boxes).first(staged_before),
                          added, added_boxes};
    status = algorithm_accepts(objects, op, ids, std::span(staged).subspan(staged_before),
                               std::span(moved_boxes).subspan(staged_before), before, algorithm);
  }
  if (status) return status;
  for (std::size_t k = staged.size(); k-- > staged_before;) objects.stamps[staged[k]] = old_stamps_[k - staged_before];
  staged.resize(staged_before);
  if (is_move) moved_boxes.resize(staged_before);
  contact_.truncate(added.size(), moved.size());
  if (is_filter) refilters.resize(staged_before);
  return status;
}

// The algorithm is asked about its own objects only: the dynamic ones of
// the batch (a refusal names the element by its index in the whole batch).
// The frame's share is split into dynamic_, which dynamic_ops() splits
// again at the update, and the batch's into its scratch: a warm frame of a
// world with static objects allocates nothing here.
Status StagedFrame::algorithm_accepts(const ObjectTable& objects, Operation op, std::span<const Id> ids,
                                      std::span<const Slot> slots, std::span<const Box3> boxes, const FrameOps& staged,
                                      const Algorithm& algorithm) {
  if (!objects.uses_statics) return algorithm.accepts(op, ids, boxes, staged);
  const FrameOps dynamic_staged = dynamic_.split(staged, objects);
  dynamic_.split_batch(ids, slots, boxes, objects);
  const std::vector<std::size_t>& index_of = dynamic_.batch_index;
  const Status status = algorithm.accepts(op, dynamic_.batch_ids, dynamic_.batch_boxes, dynamic_staged);
  if (status || status.code() != StatusCode::kUnsupported || status.index() >= index_of.size()) return status;
  return Status::unsupported(op, status.id(), index_of[status.index()], status.detail());
}

void StagedFrame::drop(ObjectTable& objects) noexcept {
  for (std::size_t k = added.size(); k-- > 0;) objects.release(added[k], added[k] >= first_fresh_slot_);
  for (const std::vector<Slot>* list : {&removed, &moved, &refiltered}) {
    for (const Slot s : *list) objects.stamps[s] = 0;
  }
  clear();
}

FrameOps StagedFrame::dynamic_ops(const ObjectTable& objects) {
  return dynamic_.split(FrameOps{removed, moved, moved_boxes, added, added_boxes, objects.boxes,
                                 PairFilter(objects.filters), &objects.boxes},
                        objects);
}

void StagedFrame::swap_filters(ObjectTable& objects) noexcept {
  if (!objects.uses_filters) return;  // every filter, staged ones too, is the default
  for (std::size_t k = 0; k < refiltered.size(); ++k) std::swap(objects.filters[refiltered[k]], refilters[k]);
}

void StagedFrame::apply_geometry(ObjectTable& objects, bool moves) noexcept {
  if (moves)
    for (std::size_t k = 0; k < moved.size(); ++k) apply_move(objects, k);
  for (std::size_t k = 0; k < added.size(); ++k) objects.boxes[added[k]] = added_boxes[k];
  for (const Slot s : removed) objects.states[s] = SlotState::kPendingRemove;
  contact_.apply(objects.contact, added, moved);
}

void StagedFrame::undo_geometry(ObjectTable& objects) noexcept {
  for (std::size_t k = 0; k < moved.size(); ++k) std::swap(objects.boxes[moved[k]], moved_boxes[k]);
  for (const Slot s : removed) objects.states[s] = SlotState::kLive;
  contact_.undo(objects.contact, moved);
}

void StagedFrame::commit(ObjectTable& objects) noexcept {
  // Removed slots are freed only now, so no slot is reused within the frame
  // that freed it.
  for (const Slot s : removed) {
    objects.slot_of_id.erase(objects.ids[s]);
    objects.states[s] = SlotState::kFree;
    objects.free_slots.push_back(s);
  }
  for (const Slot s : added) objects.states[s] = SlotState::kLive;
  objects.live = objects.live + added.size() - removed.size();
  // The room of a mass insertion or removal (28 bytes an object: a million
  // boxes staged at frame 0 kept 28 MB) goes with the frame that used it,
  // whose O(n) work dwarfs giving it back (freeing it a frame later made
  // that frame 3 ms against 0.2); the moves' room once the frames use
  // less than half of it.
  const std::size_t mass = kKeptRoom;
  if (added.size() >= mass || removed.size() >= mass) {
    detail::free_storage(added);
    detail::free_storage(added_boxes);
    detail::free_storage(removed);
    detail::free_storage(old_stamps_);
    dynamic_.free_storage();
  }
  give_back_unused(moved, moved.size());
  give_back_unused(moved_boxes, moved.size());
  give_back_unused(old_stamps_, added.size() + moved.size() + removed.size());
  dynamic_.give_back_unused();
  clear();
}

void StagedFrame::clear() noexcept {
  removed.clear();
  moved.clear();
  moved_boxes.clear();
  added.clear();
  added_boxes.clear();
  refiltered.clear();
  refilters.clear();
  contact_.clear();
}

void StagedFrame::free_storage() noexcept {
  detail::free_storage(removed);
  detail::free_storage(moved);
  detail::free_storage(added);
  detail::free_storage(refiltered);
  detail::free_storage(moved_boxes);
  detail::free_storage(added_boxes);
  detail::free_storage(refilters);
  detail::free_storage(old_stamps_);
  dynamic_.free_storage();
  contact_.free_storage();
}

std::size_t DynamicShare::memory_bytes() const noexcept {
  return (removed.capacity() + moved.capacity() + added.capacity()) * sizeof(Slot) +
         (moved_boxes.capacity() + added_boxes.capacity() + batch_boxes.capacity()) * sizeof(Box3) +
         batch_ids.capacity() * sizeof(Id) + batch_index.capacity() * sizeof(std::size_t);
}

std::size_t StagedFrame::memory_bytes() const noexcept {
  return (removed.capacity() + moved.capacity() + added.capacity() + refiltered.capacity()) * sizeof(Slot) +
         (moved_boxes.capacity() + added_boxes.capacity()) * sizeof(Box3) + refilters.capacity() * sizeof(Filter) +
         dynamic_.memory_bytes() + contact_.memory_bytes() + old_stamps_.capacity() * sizeof(Stamp);
}

}  // namespace sapling::detail
