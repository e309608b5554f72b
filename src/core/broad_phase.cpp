// The persistent broad phase: validation, id-to-slot mapping, staging of a
// frame's operations, and the frame's sorted delta (broad_phase.hpp).
//
// Invariants between calls (checked by the tests through the public API):
// - slot_of_id_ holds exactly the live and pending-add ids; state_ of their
//   slots is kLive or kPendingAdd, and id_of_slot_ maps back;
// - a slot is in free_slots_ iff its state is kFree;
// - stamp_[s] == frame_ + 1 iff slot s has an operation staged this frame.
#include "sapling/broad_phase.hpp"

#include "detail/reserve.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <new>

namespace sapling {

namespace {

Status check_options(const Options& options) {
  if (options.dims != 2 && options.dims != 3)
    return Status::invalid_argument(Operation::kCreate, "dims must be 2 or 3");
  if (options.threads > ThreadPool::kMaxThreads) {
    return Status::invalid_argument(Operation::kCreate, "threads must be at most ThreadPool::kMaxThreads (256)");
  }
  return {};
}

std::unique_ptr<BroadPhase> refuse(Status* why, Status reason) {
  if (why != nullptr) *why = reason;
  return nullptr;
}

}  // namespace

BroadPhase::BroadPhase(std::string name, AlgorithmFactory make, const Options& options,
                       std::unique_ptr<ThreadPool> pool, std::unique_ptr<Algorithm> algorithm)
    : name_(std::move(name)),
      make_(std::move(make)),
      options_(options),
      pool_(std::move(pool)),
      algorithm_(std::move(algorithm)) {
  pairs_.set_budget(options.max_pairs);
}

BroadPhase::~BroadPhase() = default;

std::unique_ptr<BroadPhase> BroadPhase::create(std::string name, AlgorithmFactory make, const Options& options,
                                               Status* why) {
  if (Status s = check_options(options); !s) return refuse(why, s);
  if (!make) return refuse(why, Status::invalid_argument(Operation::kCreate, "no factory"));
  // The pool belongs to the broad phase, so that it can say how many threads
  // it got; the algorithm sees it as the task system.
  std::unique_ptr<ThreadPool> pool;
  Options algorithm_options = options;
  if (options.tasks == nullptr && options.threads != 1) {
    pool = std::make_unique<ThreadPool>(options.threads);
    algorithm_options.tasks = pool.get();
  }
  std::unique_ptr<Algorithm> algorithm;
  try {
    algorithm = make(algorithm_options);
  } catch (const SettingError& e) {
    return refuse(why, Status::invalid_argument(Operation::kCreate, e.detail));
  }
  if (algorithm == nullptr) {
    return refuse(why, Status::invalid_argument(Operation::kCreate, "the algorithm's factory made no algorithm"));
  }
  return std::unique_ptr<BroadPhase>(
      new BroadPhase(std::move(name), std::move(make), options, std::move(pool), std::move(algorithm)));
}

unsigned BroadPhase::concurrency() const noexcept {
  if (options_.tasks != nullptr) return options_.tasks->concurrency();
  return pool_ != nullptr ? pool_->concurrency() : 1;
}

Slot BroadPhase::allocate_slot() {
  if (!free_slots_.empty()) {
    const Slot s = free_slots_.back();
    free_slots_.pop_back();
    return s;
  }
  // stage_add() made room: the arrays grow together or not at all.
  const auto s = static_cast<Slot>(id_of_slot_.size());
  id_of_slot_.push_back(0);
  state_.push_back(SlotState::kFree);
  stamp_.push_back(0);
  box_of_slot_.push_back(Box3{});
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

inline BoxCheck BroadPhase::check_input_box(const Box3& box) const noexcept {
  if (const BoxCheck check = check_box(box); !check) return check;
  if (options_.dims == 2 && !(box.min[2] == 0.0f && box.max[2] == 0.0f)) return {BoxFault::kOffPlane, 2};
  return {};
}

Status BroadPhase::stage_add(std::span<const Id> ids, std::span<const Box3> boxes) {
  if (ids.size() != boxes.size()) return Status::size_mismatch(Operation::kAdd, ids.size(), boxes.size());
  const std::uint64_t stamp = frame_ + 1;
  const std::size_t staged_before = added_.size();
  // Room for the whole batch at once: a series of doublings would copy,
  // and so touch, each array about twice (at a million boxes, 40 MB more
  // page faults in the first frame).
  const std::size_t slots = id_of_slot_.size() + ids.size() - std::min(ids.size(), free_slots_.size());
  detail::reserve_geometric(state_, slots);
  detail::reserve_geometric(stamp_, slots);
  detail::reserve_geometric(box_of_slot_, slots);
  detail::reserve_geometric(id_of_slot_, slots);
  detail::reserve_geometric(added_, staged_before + ids.size());
  detail::reserve_geometric(added_boxes_, staged_before + ids.size());
  Status refusal;
  std::size_t i = 0;
  for (; i < ids.size(); ++i) {
    const Id id = ids[i];
    if (const BoxCheck check = check_input_box(boxes[i]); !check) {
      refusal = Status::invalid_box(Operation::kAdd, id, i, check);
      break;
    }
    const std::uint32_t existing = slot_of_id_.find(id);
    if (existing != detail::IdIndex::kNotFound) {
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
      if (const BoxCheck check = check_input_box(boxes[i]); !check) {
        refusal = Status::invalid_box(op, id, i, check);
        break;
      }
    }
    const std::uint32_t s = slot_of_id_.find(id);
    if (s == detail::IdIndex::kNotFound) {
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
  delta_ = FrameDelta{};
  const FrameOps ops{removed_, moved_, moved_boxes_, added_, added_boxes_, box_of_slot_};
  if (!ops.empty()) {
    // Whatever can fail comes before the first change to the broad phase's
    // own state; a failure leaves the frame staged and the pairs as they
    // were, and only the algorithm, whose state is then lost, is remade.
    detail::reserve_geometric(free_slots_, free_slots_.size() + removed_.size() + added_.size());
    try {
      if (remake_algorithm_) {
        apply_to_fresh_algorithm();
      } else {
        algorithm_->update(ops, id_of_slot_, pairs_);
      }
      pairs_.end_frame(created_, deleted_);
    } catch (const PairBudgetExceeded&) {
      pairs_.abandon_frame();
      remake_algorithm_ = true;
      drop_staged();
      ++frame_;
      delta_.status = Status::pair_budget(pairs_.budget());
      return delta_;
    } catch (...) {
      pairs_.abandon_frame();
      created_.clear();
      deleted_.clear();
      remake_algorithm_ = true;
      throw;
    }
    remake_algorithm_ = false;
    // A recomputed frame's lists come sorted out of PairManager::assign().
    if (!std::is_sorted(created_.begin(), created_.end())) std::sort(created_.begin(), created_.end());
    if (!std::is_sorted(deleted_.begin(), deleted_.end())) std::sort(deleted_.begin(), deleted_.end());
  }
  commit_frame();
  delta_ = FrameDelta{created_, deleted_, {}};
  give_back_memory();
#if defined(SAPLING_VALIDATE)
  // The check allocates; where memory is short it is skipped rather than
  // let an update() that has succeeded throw.
  bool valid = true;
  try {
    valid = validate();
  } catch (const std::bad_alloc&) {
  }
  if (!valid) {
    std::fprintf(stderr, "sapling: invariant violated after update() of frame %llu (algorithm %s)\n",
                 static_cast<unsigned long long>(frame_ - 1), name_.c_str());
    std::abort();
  }
#endif
  return delta_;
}

// The frame's operations become the broad phase's state; nothing here
// allocates (update() reserved the free list).
void BroadPhase::commit_frame() {
  // Removed slots are freed only now, so no slot is reused within the frame
  // that freed it.
  for (const Slot s : removed_) {
    slot_of_id_.erase(id_of_slot_[s]);
    state_[s] = SlotState::kFree;
    free_slots_.push_back(s);
  }
  for (std::size_t k = 0; k < moved_.size(); ++k) box_of_slot_[moved_[k]] = moved_boxes_[k];
  for (std::size_t k = 0; k < added_.size(); ++k) {
    state_[added_[k]] = SlotState::kLive;
    box_of_slot_[added_[k]] = added_boxes_[k];
  }
  live_ = live_ + added_.size() - removed_.size();
  removed_.clear();
  moved_.clear();
  moved_boxes_.clear();
  added_.clear();
  added_boxes_.clear();
  ++frame_;
}

// After a frame that left most of the room empty (a mass removal), the
// per-slot arrays and the algorithm shrink to the live objects, and the pair
// manager to its pairs. Optional work: skipped where memory is too short to
// do it (each step changes nothing unless it succeeds).
void BroadPhase::give_back_memory() {
  constexpr std::size_t kMinRoom = 65536;
  try {
    if (id_of_slot_.size() >= kMinRoom && 4 * live_ < id_of_slot_.size()) compact_slots();
    // A pair costs the manager 25 to 100 bytes while frames run (its slot,
    // its hash entry, the scratch of a frame): far beyond that, pairs went.
    constexpr std::size_t kMinPairBytes = std::size_t{1} << 20, kMaxBytesPerPair = 256;
    const std::size_t pair_bytes = pairs_.memory_bytes();
    if (pair_bytes >= kMinPairBytes && pair_bytes > kMaxBytesPerPair * pairs_.size()) pairs_.shrink_to_fit();
  } catch (const std::bad_alloc&) {
  }
}

// Renumbers the live objects 0..live-1 (in slot order) and gives a fresh
// algorithm every one of them as an addition. It reports the pairs there
// are, so the pair manager's frame changes nothing; the pairs() order may.
void BroadPhase::compact_slots() {
  const std::size_t n = live_;
  std::vector<Id> ids;
  std::vector<Box3> boxes;
  ids.reserve(n);
  boxes.reserve(n);
  for (Slot s = 0; s < state_.size(); ++s) {
    if (state_[s] != SlotState::kLive) continue;
    ids.push_back(id_of_slot_[s]);
    boxes.push_back(box_of_slot_[s]);
  }
  std::vector<Slot> slots(n);
  for (std::size_t k = 0; k < n; ++k) slots[k] = static_cast<Slot>(k);
  std::vector<SlotState> state;
  state.resize(n, SlotState::kLive);
  std::vector<std::uint64_t> stamp(n, 0);
  detail::IdIndex slot_of_id;
  for (std::size_t k = 0; k < n; ++k) slot_of_id.insert(ids[k], static_cast<Slot>(k));
  Options options = options_;
  if (pool_ != nullptr) options.tasks = pool_.get();
  std::unique_ptr<Algorithm> fresh = make_(options);
  if (fresh == nullptr) return;
  std::vector<Pair> created, deleted;
  pairs_.remove_all();
  try {
    fresh->update(FrameOps{{}, {}, {}, slots, boxes}, ids, pairs_);
    pairs_.end_frame(created, deleted);
  } catch (...) {
    pairs_.abandon_frame();
    throw;
  }
  id_of_slot_.swap(ids);
  box_of_slot_.swap(boxes);
  state_.swap(state);
  stamp_.swap(stamp);
  slot_of_id_ = std::move(slot_of_id);
  algorithm_ = std::move(fresh);
  // The staging room of the large frames goes too (delta_ still needs created_ and deleted_).
  detail::free_storage(free_slots_);
  detail::free_storage(removed_);
  detail::free_storage(moved_);
  detail::free_storage(added_);
  detail::free_storage(moved_boxes_);
  detail::free_storage(added_boxes_);
  detail::free_storage(lifted_);
  detail::free_storage(old_stamps_);
}

void BroadPhase::reserve(std::size_t objects, std::size_t pairs) {
  id_of_slot_.reserve(objects);
  state_.reserve(objects);
  stamp_.reserve(objects);
  box_of_slot_.reserve(objects);
  free_slots_.reserve(objects);
  added_.reserve(objects);
  added_boxes_.reserve(objects);
  pairs_.reserve(pairs);
  algorithm_->reserve(objects);
}

// A refused frame: its operations are forgotten (stamps of this frame stop
// counting once frame_ moves on), its additions undone.
void BroadPhase::drop_staged() {
  for (std::size_t k = added_.size(); k-- > 0;) {  // newest first: the free list as it was
    const Slot s = added_[k];
    slot_of_id_.erase(id_of_slot_[s]);
    state_[s] = SlotState::kFree;
    free_slots_.push_back(s);  // room reserved by update()
  }
  removed_.clear();
  moved_.clear();
  moved_boxes_.clear();
  added_.clear();
  added_boxes_.clear();
}

// After a failed frame: a new algorithm is given every object live after
// this frame as an addition, and reports every pair; the pair manager turns
// that into the exact delta against the previous frame.
void BroadPhase::apply_to_fresh_algorithm() {
  Options options = options_;
  if (pool_ != nullptr) options.tasks = pool_.get();
  std::unique_ptr<Algorithm> fresh = make_(options);
  if (fresh == nullptr) throw std::bad_alloc();  // the factory worked at create(): only memory can be short
  std::vector<Box3> boxes = box_of_slot_;
  for (std::size_t k = 0; k < moved_.size(); ++k) boxes[moved_[k]] = moved_boxes_[k];
  for (std::size_t k = 0; k < added_.size(); ++k) boxes[added_[k]] = added_boxes_[k];
  std::vector<bool> removed(id_of_slot_.size(), false);
  for (const Slot s : removed_) removed[s] = true;
  std::vector<Slot> live;
  std::vector<Box3> live_boxes;
  live.reserve(live_ + added_.size());
  live_boxes.reserve(live_ + added_.size());
  for (Slot s = 0; s < state_.size(); ++s) {
    if (state_[s] == SlotState::kFree || removed[s]) continue;
    live.push_back(s);
    live_boxes.push_back(boxes[s]);
  }
  // The old algorithm stays until the new one has succeeded: its accepts()
  // answers from its last successful update(), as the staged frame needs.
  pairs_.remove_all();
  fresh->update(FrameOps{{}, {}, {}, live, live_boxes}, id_of_slot_, pairs_);
  algorithm_ = std::move(fresh);
}

void BroadPhase::debug_draw(DebugDraw& draw) const {
  if (algorithm_ && !remake_algorithm_) algorithm_->debug_draw(draw);
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
  if (box_of_slot_.size() != slots) return false;
  // After a failed frame the algorithm's state is lost until the next update().
  return pairs_.validate() && (remake_algorithm_ || algorithm_->validate());
}

void BroadPhase::sorted_pairs(std::vector<Pair>& out) const {
  out.assign(pairs().begin(), pairs().end());
  std::sort(out.begin(), out.end());
}

bool BroadPhase::contains(Id id) const noexcept {
  const std::uint32_t s = slot_of_id_.find(id);
  return s != detail::IdIndex::kNotFound && state_[s] == SlotState::kLive;
}

std::size_t BroadPhase::memory_bytes() const noexcept {
  return sizeof(*this) + algorithm_->memory_bytes() + pairs_.memory_bytes() + slot_of_id_.memory_bytes() +
         id_of_slot_.capacity() * sizeof(Id) + state_.capacity() * sizeof(SlotState) +
         stamp_.capacity() * sizeof(std::uint64_t) + free_slots_.capacity() * sizeof(Slot) +
         box_of_slot_.capacity() * sizeof(Box3);
}

Status BroadPhase::query(const Box3& box, std::vector<Id>& out) const {
  out.clear();
  if (const BoxCheck check = check_input_box(box); !check) return Status::invalid_box(Operation::kQuery, 0, 0, check);
  answer_query(box, out);
  return {};
}

Status BroadPhase::query(const Box2& box, std::vector<Id>& out) const { return query(lift(box), out); }

Status BroadPhase::query(std::span<const Box3> boxes, std::vector<Id>& ids, std::vector<std::size_t>& offsets) const {
  ids.clear();
  offsets.clear();
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    if (const BoxCheck check = check_input_box(boxes[i]); !check) {
      return Status::invalid_box(Operation::kQuery, 0, i, check);
    }
  }
  offsets.reserve(boxes.size() + 1);
  offsets.push_back(0);
  std::vector<Id> one;
  for (const Box3& box : boxes) {
    answer_query(box, one);
    ids.insert(ids.end(), one.begin(), one.end());
    offsets.push_back(ids.size());
  }
  return {};
}

// The algorithm's answer, or every live box tested (also while a failed
// frame awaits the algorithm's rebuild: the boxes are the last frame's).
void BroadPhase::answer_query(const Box3& box, std::vector<Id>& out) const {
  out.clear();
  query_slots_.clear();
  if (remake_algorithm_ || !algorithm_->query(box, query_slots_)) {
    query_slots_.clear();
    for (Slot s = 0; s < state_.size(); ++s) {
      if (state_[s] == SlotState::kLive && overlaps(box_of_slot_[s], box)) query_slots_.push_back(s);
    }
  }
  out.reserve(query_slots_.size());
  for (const Slot s : query_slots_) out.push_back(id_of_slot_[s]);
  std::sort(out.begin(), out.end());
}

}  // namespace sapling
