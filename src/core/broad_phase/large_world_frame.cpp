// The broad phase's large-world calls (broad_phase.hpp; large_world.hpp):
// double boxes staged as float boxes rounded outward relative to the
// origin, origin shifts applied at the next update(), and the exact pairs
// of Options::exact_pairs.
#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <span>

#include "core/broad_phase/impl.hpp"
#include "detail/reserve.hpp"

namespace sapling {

Status BroadPhase::add(std::span<const Id> ids, std::span<const Box3d> boxes, std::span<const Filter> filters,
                       Motion motion, std::span<const float> contact_distances) {
  return impl_->stage_exact(Operation::kAdd, ids, boxes, filters, motion, contact_distances);
}

Status BroadPhase::add(std::span<const Id> ids, std::span<const Box2d> boxes, std::span<const Filter> filters,
                       Motion motion, std::span<const float> contact_distances) {
  impl_->lifted_exact.resize(boxes.size());
  std::transform(boxes.begin(), boxes.end(), impl_->lifted_exact.begin(),
                 [](const Box2d& b) { return detail::lift(b); });
  return add(ids, std::span<const Box3d>(impl_->lifted_exact), filters, motion, contact_distances);
}

Status BroadPhase::move(std::span<const Id> ids, std::span<const Box3d> boxes,
                        std::span<const float> contact_distances) {
  return impl_->stage_exact(Operation::kMove, ids, boxes, {}, Motion::kDynamic, contact_distances);
}

Status BroadPhase::move(std::span<const Id> ids, std::span<const Box2d> boxes,
                        std::span<const float> contact_distances) {
  impl_->lifted_exact.resize(boxes.size());
  std::transform(boxes.begin(), boxes.end(), impl_->lifted_exact.begin(),
                 [](const Box2d& b) { return detail::lift(b); });
  return move(ids, std::span<const Box3d>(impl_->lifted_exact), contact_distances);
}

// Stages the double boxes through the float path, which checks each and
// rounds it outward relative to the origin as it takes it (BoxBatch). An
// add writes the double boxes to the table as it stages them; a move's go
// to the staged list, which the commit writes, so that queries before the
// update see the old boxes. The room is made first, so that the batch is
// taken whole or not at all.
Status BroadPhase::Impl::stage_exact(Operation op, std::span<const Id> ids, std::span<const Box3d> boxes,
                                     std::span<const Filter> filters, Motion motion, std::span<const float> distances) {
  if (ids.size() != boxes.size()) return Status::size_mismatch(op, ids.size(), boxes.size());
  const detail::BoxBatch batch(boxes, large.staging_origin());
  objects.exact.start(objects.slots());
  if (op == Operation::kAdd) {
    return staged.add(objects, detail::frame_stamp(frame), ids, batch, filters, distances, motion, *algorithm,
                      options.dims);
  }
  detail::reserve_geometric(large.staged_slots, large.staged_slots.size() + ids.size());
  detail::reserve_geometric(large.staged_boxes, large.staged_boxes.size() + ids.size());
  const std::size_t before = staged.moved.size();
  const Status status =
      staged.change(objects, detail::frame_stamp(frame), op, ids, batch, {}, distances, *algorithm, options.dims);
  if (!status) return status;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    large.staged_slots.push_back(staged.moved[before + i]);
    large.staged_boxes.push_back(boxes[i]);
  }
  return status;
}

Status BroadPhase::shift_origin(std::array<double, 3> offset) {
  Impl& m = *impl_;
  if (!m.staged.empty() || m.large.shift_pending) {
    return Status::invalid_argument(Operation::kShiftOrigin,
                                    "operations or another shift are staged: shift the origin first in a frame");
  }
  if (!std::all_of(offset.begin(), offset.end(), [](double x) { return std::isfinite(x); })) {
    return Status::invalid_argument(Operation::kShiftOrigin, "the offset is NaN or infinite");
  }
  if (m.options.dims == 2 && offset[2] != 0.0) {
    return Status::invalid_argument(Operation::kShiftOrigin, "a 2D broad phase's origin stays in the plane z = 0");
  }
  m.large.pending_offset = offset;
  m.large.shift_pending = true;
  return {};
}

std::array<double, 3> BroadPhase::origin() const noexcept { return impl_->large.staging_origin(); }

std::optional<Box3d> BroadPhase::exact_box(Id id) const noexcept {
  const std::uint32_t s = impl_->objects.live_slot(id);
  if (s == detail::IdIndex::kNotFound) return std::nullopt;
  return impl_->exact_box_of(s);
}

// Re-expresses every live object's box relative to the new origin (the
// frame's staged boxes already are), keeping the old ones for undo_shift().
// The slots go kChunk at a time, each chunk's boxes rounded in one call
// (outward_relative() of a span): the user's double boxes relative to the
// new origin, the float ones (exact relative to the old) by the offset.
void BroadPhase::Impl::apply_shift() {
  before_shift = objects.boxes;
  if (objects.contact.in_use) own_before_shift = objects.contact.own_boxes;
  const std::array<double, 3>& offset = large.pending_offset;
  const std::array<double, 3> new_origin = large.staging_origin();
  constexpr std::size_t kChunk = 64;
  std::array<Box3d, kChunk> widened_own;
  std::array<Box3, kChunk> from_exact, from_own;
  for (std::size_t base = 0; base < objects.slots(); base += kChunk) {
    const std::size_t n = std::min(kChunk, objects.slots() - base);
    const std::span<Box3> own =
        std::span(objects.contact.in_use ? objects.contact.own_boxes : objects.boxes).subspan(base, n);
    for (std::size_t i = 0; i < n; ++i) widened_own[i] = detail::widened(own[i]);
    detail::outward_relative(std::span(widened_own).first(n), offset, from_own.data());
    if (objects.exact.in_use) {
      detail::outward_relative(std::span(objects.exact.boxes).subspan(base, n), new_origin, from_exact.data());
    }
    for (std::size_t i = 0; i < n; ++i) {
      const auto s = static_cast<Slot>(base + i);
      if (objects.states[s] != detail::SlotState::kLive) continue;
      const Box3& now = objects.exact.in_use && objects.exact.given[s] ? from_exact[i] : from_own[i];
      if (objects.contact.in_use) {
        objects.contact.own_boxes[s] = now;
        objects.boxes[s] = detail::broad_box(now, objects.contact.distances[s], options.dims);
      } else {
        objects.boxes[s] = now;
      }
    }
  }
}

void BroadPhase::Impl::undo_shift() noexcept {
  std::swap(objects.boxes, before_shift);
  if (objects.contact.in_use) std::swap(objects.contact.own_boxes, own_before_shift);
  detail::free_storage(before_shift);
  detail::free_storage(own_before_shift);
}

Box3d BroadPhase::Impl::exact_box_of(Slot s) const noexcept {
  if (objects.exact.in_use && objects.exact.given[s]) return objects.exact.boxes[s];
  const Box3 own = objects.contact.in_use ? objects.contact.own_boxes[s] : objects.boxes[s];
  Box3d b = detail::widened(own);
  for (int k = 0; k < 3; ++k) b.min[k] += large.origin[k], b.max[k] += large.origin[k];
  return b;
}

// The pairs of the rounded boxes whose exact boxes (each grown by its
// contact distance, in double) overlap, and the frame's delta against the
// previous ones, into created and deleted.
void BroadPhase::Impl::keep_exact_pairs() {
  const int axes = options.dims == 2 ? 2 : 3;
  const auto exact_overlap = [&](Id a, Id b) {
    const Slot sa = objects.slot_of_id.find(a), sb = objects.slot_of_id.find(b);
    const Box3d x = exact_box_of(sa), y = exact_box_of(sb);
    const double dx = objects.contact.distance_of(sa), dy = objects.contact.distance_of(sb);
    for (int k = 0; k < axes; ++k) {
      if (x.min[k] - dx > y.max[k] + dy || y.min[k] - dy > x.max[k] + dx) return false;
    }
    return true;
  };
  large.scratch.clear();
  for (const Pair p : pairs.pairs()) {
    if (exact_overlap(p.a, p.b)) large.scratch.push_back(p);
  }
  std::sort(large.scratch.begin(), large.scratch.end());
  created.clear();
  deleted.clear();
  std::set_difference(large.scratch.begin(), large.scratch.end(), large.exact_pairs.begin(), large.exact_pairs.end(),
                      std::back_inserter(created));
  std::set_difference(large.exact_pairs.begin(), large.exact_pairs.end(), large.scratch.begin(), large.scratch.end(),
                      std::back_inserter(deleted));
  std::swap(large.exact_pairs, large.scratch);
}

}  // namespace sapling
