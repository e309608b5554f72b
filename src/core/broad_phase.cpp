// The persistent broad phase: validation, id-to-slot mapping, staging of a
// frame's operations, and the frame's sorted delta (broad_phase.hpp).
//
// Invariants between calls (checked by the tests through the public API):
// - slot_of_id_ holds exactly the live and pending-add ids; state_ of their
//   slots is kLive or kPendingAdd, and id_of_slot_ maps back;
// - a slot is in free_slots_ iff its state is kFree;
// - stamp_[s] == frame_ + 1 iff slot s has an operation staged this frame.
#include "sapling/broad_phase.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace sapling {

BroadPhase::BroadPhase(std::string name, std::unique_ptr<Algorithm> algorithm, const Options& options)
    : name_(std::move(name)), algorithm_(std::move(algorithm)), options_(options) {}

std::unique_ptr<BroadPhase> BroadPhase::create(std::string_view name, const Options& options) {
  for (const AlgorithmInfo& info : algorithms()) {
    if (info.name == name) return std::make_unique<BroadPhase>(info.name, info.make(options), options);
  }
  return nullptr;
}

Slot BroadPhase::allocate_slot() {
  if (!free_slots_.empty()) {
    const Slot s = free_slots_.back();
    free_slots_.pop_back();
    return s;
  }
  const auto s = static_cast<Slot>(id_of_slot_.size());
  id_of_slot_.push_back(0);
  state_.push_back(SlotState::kFree);
  stamp_.push_back(0);
  return s;
}

Status BroadPhase::add(std::span<const Id> ids, std::span<const Box3> boxes) { return stage_add(ids, boxes); }

Status BroadPhase::add(std::span<const Id> ids, std::span<const Box2> boxes) {
  lifted_.resize(boxes.size());
  std::transform(boxes.begin(), boxes.end(), lifted_.begin(), [](const Box2& b) { return lift(b); });
  return stage_add(ids, lifted_);
}

Status BroadPhase::move(std::span<const Id> ids, std::span<const Box3> boxes) {
  return stage_change(Operation::kMove, ids, boxes);
}

Status BroadPhase::move(std::span<const Id> ids, std::span<const Box2> boxes) {
  lifted_.resize(boxes.size());
  std::transform(boxes.begin(), boxes.end(), lifted_.begin(), [](const Box2& b) { return lift(b); });
  return stage_change(Operation::kMove, ids, lifted_);
}

Status BroadPhase::remove(std::span<const Id> ids) { return stage_change(Operation::kRemove, ids, {}); }

Status BroadPhase::stage_add(std::span<const Id> ids, std::span<const Box3> boxes) {
  if (ids.size() != boxes.size()) return Status::size_mismatch(Operation::kAdd, ids.size(), boxes.size());
  const std::uint64_t stamp = frame_ + 1;
  const std::size_t staged_before = added_.size();
  Status refusal;
  std::size_t i = 0;
  for (; i < ids.size(); ++i) {
    const Id id = ids[i];
    if (const BoxCheck check = check_box(boxes[i]); !check) {
      refusal = Status::invalid_box(Operation::kAdd, id, i, check);
      break;
    }
    const std::uint32_t existing = slot_of_id_.find(id);
    if (existing != IdIndex::kNotFound) {
      const bool touched = stamp_[existing] == stamp;  // removed, moved or added this frame
      refusal = Status::id_error(touched ? StatusCode::kRepeatedId : StatusCode::kDuplicateId, Operation::kAdd, id, i);
      break;
    }
    const Slot s = allocate_slot();
    slot_of_id_.insert(id, s);
    id_of_slot_[s] = id;
    state_[s] = SlotState::kPendingAdd;
    stamp_[s] = stamp;
    added_.push_back(s);
    added_boxes_.push_back(boxes[i]);
  }
  if (refusal) {  // the algorithm's say comes last, on the whole batch
    const FrameOps staged{removed_, moved_, moved_boxes_, std::span(added_).first(staged_before),
                          std::span(added_boxes_).first(staged_before)};
    if (refusal = algorithm_->accepts(Operation::kAdd, ids, boxes, staged); refusal) return refusal;
  }
  // Undo the accepted part of the batch, newest first, so the free list is
  // restored to the exact order it had.
  while (added_.size() > staged_before) {
    const Slot s = added_.back();
    added_.pop_back();
    added_boxes_.pop_back();
    slot_of_id_.erase(id_of_slot_[s]);
    state_[s] = SlotState::kFree;
    stamp_[s] = 0;
    free_slots_.push_back(s);
  }
  return refusal;
}

Status BroadPhase::stage_change(Operation op, std::span<const Id> ids, std::span<const Box3> boxes) {
  const bool is_move = op == Operation::kMove;
  if (is_move && ids.size() != boxes.size()) return Status::size_mismatch(op, ids.size(), boxes.size());
  std::vector<Slot>& staged = is_move ? moved_ : removed_;
  const std::uint64_t stamp = frame_ + 1;
  const std::size_t staged_before = staged.size();
  old_stamps_.clear();
  Status refusal;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const Id id = ids[i];
    if (is_move) {
      if (const BoxCheck check = check_box(boxes[i]); !check) {
        refusal = Status::invalid_box(op, id, i, check);
        break;
      }
    }
    const std::uint32_t s = slot_of_id_.find(id);
    if (s == IdIndex::kNotFound) {
      refusal = Status::id_error(StatusCode::kUnknownId, op, id, i);
      break;
    }
    if (stamp_[s] == stamp) {  // added, moved or removed earlier this frame
      refusal = Status::id_error(StatusCode::kRepeatedId, op, id, i);
      break;
    }
    if (is_move) moved_boxes_.push_back(boxes[i]);
    old_stamps_.push_back(stamp_[s]);
    stamp_[s] = stamp;
    staged.push_back(s);
  }
  if (refusal && is_move) {  // the algorithm's say comes last, on the whole batch
    const FrameOps before{removed_, std::span(moved_).first(staged_before),
                          std::span(moved_boxes_).first(staged_before), added_, added_boxes_};
    refusal = algorithm_->accepts(op, ids, boxes, before);
  }
  if (refusal) return refusal;
  for (std::size_t k = staged.size(); k-- > staged_before;) stamp_[staged[k]] = old_stamps_[k - staged_before];
  staged.resize(staged_before);
  if (is_move) moved_boxes_.resize(staged_before);
  return refusal;
}

const FrameDelta& BroadPhase::update() {
  created_.clear();
  deleted_.clear();
  const FrameOps ops{removed_, moved_, moved_boxes_, added_, added_boxes_};
  if (!ops.empty()) {
    algorithm_->update(ops, id_of_slot_, pairs_);
    pairs_.end_frame(created_, deleted_);
    // A recomputed frame's lists come sorted out of PairManager::assign().
    if (!std::is_sorted(created_.begin(), created_.end())) std::sort(created_.begin(), created_.end());
    if (!std::is_sorted(deleted_.begin(), deleted_.end())) std::sort(deleted_.begin(), deleted_.end());
  }
  // Removed slots are freed only now, so no slot is reused within the frame
  // that freed it.
  for (const Slot s : removed_) {
    slot_of_id_.erase(id_of_slot_[s]);
    state_[s] = SlotState::kFree;
    free_slots_.push_back(s);
  }
  for (const Slot s : added_) state_[s] = SlotState::kLive;
  live_ = live_ + added_.size() - removed_.size();
  removed_.clear();
  moved_.clear();
  moved_boxes_.clear();
  added_.clear();
  added_boxes_.clear();
  ++frame_;
  delta_ = FrameDelta{created_, deleted_};
#if defined(SAPLING_VALIDATE)
  if (!validate()) {
    std::fprintf(stderr, "sapling: invariant violated after update() of frame %llu (algorithm %s)\n",
                 static_cast<unsigned long long>(frame_ - 1), name_.c_str());
    std::abort();
  }
#endif
  return delta_;
}

bool BroadPhase::validate() const {
  const std::size_t slots = id_of_slot_.size();
  if (state_.size() != slots || stamp_.size() != slots) return false;
  std::size_t live = 0, free = 0;
  for (Slot s = 0; s < slots; ++s) {
    switch (state_[s]) {
      case SlotState::kLive:
        ++live;
        [[fallthrough]];
      case SlotState::kPendingAdd:
        if (slot_of_id_.find(id_of_slot_[s]) != s) return false;
        break;
      case SlotState::kFree:
        ++free;
        break;
    }
  }
  if (live != live_ || free != free_slots_.size() || slot_of_id_.size() != slots - free) return false;
  for (const Slot s : free_slots_) {
    if (s >= slots || state_[s] != SlotState::kFree) return false;
  }
  for (const Pair& p : pairs()) {  // every pair joins two live objects
    if (!contains(p.a) || !contains(p.b)) return false;
  }
  return pairs_.validate() && algorithm_->validate();
}

void BroadPhase::sorted_pairs(std::vector<Pair>& out) const {
  out.assign(pairs().begin(), pairs().end());
  std::sort(out.begin(), out.end());
}

bool BroadPhase::contains(Id id) const noexcept {
  const std::uint32_t s = slot_of_id_.find(id);
  return s != IdIndex::kNotFound && state_[s] == SlotState::kLive;
}

std::size_t BroadPhase::memory_bytes() const noexcept {
  return sizeof(*this) + algorithm_->memory_bytes() + pairs_.memory_bytes() + slot_of_id_.memory_bytes() +
         id_of_slot_.capacity() * sizeof(Id) + state_.capacity() * sizeof(SlotState) +
         stamp_.capacity() * sizeof(std::uint64_t) + free_slots_.capacity() * sizeof(Slot);
}

}  // namespace sapling
