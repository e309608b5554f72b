// The persistent broad phase: validation, id-to-slot mapping, staging of a
// frame's operations, and the frame's sorted delta (broad_phase.hpp).
//
// Invariants between calls (checked by the tests through the public API):
// - slot_of_id_ holds exactly the live and pending-add ids; state_ of their
//   slots is kLive or kPendingAdd, and id_of_slot_ maps back;
// - a slot is in free_slots_ iff its state is kFree;
// - stamp_[s] == frame_ + 1 iff slot s has an operation staged this frame;
// - statics_ holds exactly the live static objects, with their boxes; the
//   pair manager holds every pair of the pair rule (filter.hpp).
//
// A frame runs in three steps: the algorithm applies the dynamic objects'
// operations (checking filters as it reports pairs); the dynamic objects
// that moved, came or went are paired with the static tree, then the static
// objects that changed with the dynamic objects; last, the objects whose
// filter changed are paired anew with every object they overlap. Each step
// sets a pair to what the frame's end state says (PairManager::add() and
// remove() are idempotent), so their order within a step does not matter.
#include "sapling/broad_phase.hpp"

#include "detail/aabb_tree.hpp"
#include "detail/neighbour_cache.hpp"
#include "detail/reserve.hpp"
#include "sapling/box_pruning.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
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
  if (uses_filters_) filter_of_slot_.push_back(Filter{});
  if (uses_statics_) motion_of_slot_.push_back(Motion::kDynamic);
  return s;
}

Status BroadPhase::add(std::span<const Id> ids, std::span<const Box3> boxes) {
  return stage_add(ids, boxes, {}, Motion::kDynamic);
}

Status BroadPhase::add(std::span<const Id> ids, std::span<const Box2> boxes) {
  return add(ids, boxes, {}, Motion::kDynamic);
}

Status BroadPhase::add(std::span<const Id> ids, std::span<const Box3> boxes, std::span<const Filter> filters,
                       Motion motion) {
  return stage_add(ids, boxes, filters, motion);
}

Status BroadPhase::add(std::span<const Id> ids, std::span<const Box2> boxes, std::span<const Filter> filters,
                       Motion motion) {
  lifted_.resize(boxes.size());
  std::transform(boxes.begin(), boxes.end(), lifted_.begin(), [](const Box2& b) { return lift(b); });
  return stage_add(ids, lifted_, filters, motion);
}

Status BroadPhase::set_filter(std::span<const Id> ids, std::span<const Filter> filters) {
  return stage_change(Operation::kSetFilter, ids, {}, filters);
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

Status BroadPhase::stage_add(std::span<const Id> ids, std::span<const Box3> boxes, std::span<const Filter> filters,
                             Motion motion) {
  if (ids.size() != boxes.size()) return Status::size_mismatch(Operation::kAdd, ids.size(), boxes.size());
  if (!filters.empty() && filters.size() != ids.size()) {
    return Status::invalid_argument(Operation::kAdd, "filters must be empty or hold one filter per id");
  }
  if (motion != Motion::kDynamic && motion != Motion::kStatic) {
    return Status::invalid_argument(Operation::kAdd, "motion must be Motion::kDynamic or Motion::kStatic");
  }
  // The filter and motion tables come into being with the first object
  // that needs them (all defaults until then).
  if (!uses_filters_ && std::any_of(filters.begin(), filters.end(), [](Filter f) { return f != Filter{}; })) {
    filter_of_slot_.assign(id_of_slot_.size(), Filter{});
    uses_filters_ = true;
  }
  if (!uses_statics_ && motion == Motion::kStatic && !ids.empty()) {
    motion_of_slot_.assign(id_of_slot_.size(), Motion::kDynamic);
    uses_statics_ = true;
  }
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
  if (uses_filters_) detail::reserve_geometric(filter_of_slot_, slots);
  if (uses_statics_) detail::reserve_geometric(motion_of_slot_, slots);
  // The free list's room for every staged addition: undoing them (a refused
  // batch, drop_staged()) then cannot fail.
  detail::reserve_geometric(free_slots_, free_slots_.size() + staged_before + ids.size());
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
    if (uses_filters_) filter_of_slot_[s] = filters.empty() ? Filter{} : filters[i];
    if (uses_statics_) motion_of_slot_[s] = motion;
    added_.push_back(s);
    added_boxes_.push_back(boxes[i]);
  }
  if (refusal) {  // the algorithm's say comes last, on the whole batch; static objects never reach it
    const FrameOps staged{removed_, moved_, moved_boxes_, std::span(added_).first(staged_before),
                          std::span(added_boxes_).first(staged_before)};
    if (motion == Motion::kStatic) return refusal;
    if (refusal = algorithm_accepts(Operation::kAdd, ids, boxes, staged); refusal) return refusal;
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

Status BroadPhase::stage_change(Operation op, std::span<const Id> ids, std::span<const Box3> boxes,
                                std::span<const Filter> filters) {
  const bool is_move = op == Operation::kMove, is_filter = op == Operation::kSetFilter;
  if (is_move && ids.size() != boxes.size()) return Status::size_mismatch(op, ids.size(), boxes.size());
  if (is_filter && ids.size() != filters.size()) return Status::size_mismatch(op, ids.size(), filters.size());
  if (is_filter && !uses_filters_ &&
      std::any_of(filters.begin(), filters.end(), [](Filter f) { return f != Filter{}; })) {
    filter_of_slot_.assign(id_of_slot_.size(), Filter{});
    uses_filters_ = true;
  }
  std::vector<Slot>& staged = is_move ? moved_ : is_filter ? refiltered_ : removed_;
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
    if (stamp_[s] == stamp) {  // added, moved, removed or refiltered earlier this frame
      refusal = Status::id_error(StatusCode::kRepeatedId, op, id, i);
      break;
    }
    if (is_move) moved_boxes_.push_back(boxes[i]);
    if (is_filter) refilters_.push_back(filters[i]);
    old_stamps_.push_back(stamp_[s]);
    stamp_[s] = stamp;
    staged.push_back(s);
  }
  if (refusal && is_move) {  // the algorithm's say comes last, on the whole batch
    const FrameOps before{removed_, std::span(moved_).first(staged_before),
                          std::span(moved_boxes_).first(staged_before), added_, added_boxes_};
    refusal = algorithm_accepts(op, ids, boxes, before);
  }
  if (refusal) return refusal;
  for (std::size_t k = staged.size(); k-- > staged_before;) stamp_[staged[k]] = old_stamps_[k - staged_before];
  staged.resize(staged_before);
  if (is_move) moved_boxes_.resize(staged_before);
  if (is_filter) refilters_.resize(staged_before);
  return refusal;
}

// The algorithm is asked about its own objects only: the dynamic ones of
// the batch (a refusal names the element by its index in the whole batch).
Status BroadPhase::algorithm_accepts(Operation op, std::span<const Id> ids, std::span<const Box3> boxes,
                                     const FrameOps& staged) const {
  if (!uses_statics_) return algorithm_->accepts(op, ids, boxes, staged);
  std::vector<Slot> removed, moved, added;
  std::vector<Box3> moved_boxes, added_boxes;
  for (const Slot s : staged.removed) {
    if (!is_static(s)) removed.push_back(s);
  }
  for (std::size_t k = 0; k < staged.moved.size(); ++k) {
    if (!is_static(staged.moved[k])) moved.push_back(staged.moved[k]), moved_boxes.push_back(staged.moved_boxes[k]);
  }
  for (std::size_t k = 0; k < staged.added.size(); ++k) {
    if (!is_static(staged.added[k])) added.push_back(staged.added[k]), added_boxes.push_back(staged.added_boxes[k]);
  }
  const FrameOps dynamic_staged{removed, moved, moved_boxes, added, added_boxes};
  std::vector<Id> dynamic_ids;
  std::vector<Box3> dynamic_boxes;
  std::vector<std::size_t> index_of;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::uint32_t s = slot_of_id_.find(ids[i]);
    if (is_static(s)) continue;
    dynamic_ids.push_back(ids[i]);
    dynamic_boxes.push_back(boxes[i]);
    index_of.push_back(i);
  }
  const Status refusal = algorithm_->accepts(op, dynamic_ids, dynamic_boxes, dynamic_staged);
  if (refusal || refusal.code() != StatusCode::kUnsupported || refusal.index() >= index_of.size()) return refusal;
  return Status::unsupported(op, refusal.id(), index_of[refusal.index()], refusal.detail());
}

const FrameDelta& BroadPhase::update() {
  created_.clear();
  deleted_.clear();
  delta_ = FrameDelta{};
  if (!removed_.empty() || !moved_.empty() || !added_.empty() || !refiltered_.empty()) {
    // Whatever can fail comes before the first change to the broad phase's
    // own state, or is undone: a failure leaves the frame staged and the
    // pairs as they were, and only the algorithm and the static tree, whose
    // state is then lost, are remade.
    detail::reserve_geometric(free_slots_, free_slots_.size() + removed_.size() + added_.size());
    if (dynamic_tree_ != nullptr) {
      detail::reserve_geometric(tree_changes_, tree_changes_.size() + removed_.size() + moved_.size() + added_.size());
      if (tree_change_mark_.size() < id_of_slot_.size()) tree_change_mark_.resize(id_of_slot_.size(), 0);
    }
    bool filters_swapped = false;
    const auto undo = [&]() noexcept {
      pairs_.abandon_frame();
      if (geometry_applied_) undo_geometry();
      if (filters_swapped) swap_filters();
      filters_swapped = false;
      remake_algorithm_ = true;
    };
    // The pair budget is on the pairs after the frame (Options::max_pairs).
    // When the pair manager's room (twice the budget) runs out first, the
    // frame may still end under budget (an incremental algorithm adds pairs
    // its removals cancel at the end): it is computed again from the live
    // boxes, which adds each pair once, so that running out of room then
    // proves it over.
    for (;;) {
      const bool rebuilding = remake_algorithm_;
      bool over_budget = false;
      try {
        const FrameOps ops = dynamic_ops();
        swap_filters();  // the algorithm reports pairs under the frame's filters
        filters_swapped = true;
        if (rebuilding) {
          apply_geometry();
          rebuild_from_live();
        } else {
          if (!ops.empty()) algorithm_->update(ops, id_of_slot_, pairs_);
          apply_geometry();
          pair_with_statics();
          pair_refiltered();
        }
        over_budget = pairs_.budget() != 0 && pairs_.size_at_end() > pairs_.budget();
        if (over_budget) throw PairBudgetExceeded();
        pairs_.end_frame(created_, deleted_);
        break;
      } catch (const PairBudgetExceeded&) {
        undo();
        if (!over_budget && !rebuilding) continue;
        drop_staged();
        ++frame_;
        delta_.status = Status::pair_budget(pairs_.budget());
        return delta_;
      } catch (...) {
        undo();
        created_.clear();
        deleted_.clear();
        throw;
      }
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

// The frame's operations on dynamic objects, the algorithm's share: the
// staged lists themselves while no object is static.
FrameOps BroadPhase::dynamic_ops() {
  const PairFilter filter(filter_of_slot_);
  if (!uses_statics_) return FrameOps{removed_, moved_, moved_boxes_, added_, added_boxes_, box_of_slot_, filter};
  dynamic_removed_.clear();
  dynamic_moved_.clear();
  dynamic_moved_boxes_.clear();
  dynamic_added_.clear();
  dynamic_added_boxes_.clear();
  for (const Slot s : removed_) {
    if (!is_static(s)) dynamic_removed_.push_back(s);
  }
  for (std::size_t k = 0; k < moved_.size(); ++k) {
    if (is_static(moved_[k])) continue;
    dynamic_moved_.push_back(moved_[k]);
    dynamic_moved_boxes_.push_back(moved_boxes_[k]);
  }
  for (std::size_t k = 0; k < added_.size(); ++k) {
    if (is_static(added_[k])) continue;
    dynamic_added_.push_back(added_[k]);
    dynamic_added_boxes_.push_back(added_boxes_[k]);
  }
  return FrameOps{dynamic_removed_, dynamic_moved_, dynamic_moved_boxes_, dynamic_added_, dynamic_added_boxes_,
                  box_of_slot_,     filter};
}

// Staged filters and the table trade places: the table gets the frame's
// filters and refilters_ the old ones (and back again, on failure).
void BroadPhase::swap_filters() noexcept {
  if (!uses_filters_) return;  // every filter, staged ones too, is the default
  for (std::size_t k = 0; k < refiltered_.size(); ++k) std::swap(filter_of_slot_[refiltered_[k]], refilters_[k]);
}

// The frame's boxes go into box_of_slot_, the moved objects' old boxes into
// moved_boxes_, and removed objects are marked, so that the static steps
// see the frame's end state; undo_geometry() takes it back.
void BroadPhase::apply_geometry() noexcept {
  for (std::size_t k = 0; k < moved_.size(); ++k) std::swap(box_of_slot_[moved_[k]], moved_boxes_[k]);
  for (std::size_t k = 0; k < added_.size(); ++k) box_of_slot_[added_[k]] = added_boxes_[k];
  for (const Slot s : removed_) state_[s] = SlotState::kPendingRemove;
  geometry_applied_ = true;
}

void BroadPhase::undo_geometry() noexcept {
  for (std::size_t k = 0; k < moved_.size(); ++k) std::swap(box_of_slot_[moved_[k]], moved_boxes_[k]);
  for (const Slot s : removed_) state_[s] = SlotState::kLive;
  geometry_applied_ = false;
}

// A pair of a static and a dynamic object, or of two objects one of which
// changed filter, set to what the frame's end state says.
void BroadPhase::set_pair(Slot a, Slot b, bool overlapping) {
  if (overlapping && filters_accept(filter_of(a), filter_of(b))) {
    pairs_.add(id_of_slot_[a], id_of_slot_[b]);
  } else {
    pairs_.remove(id_of_slot_[a], id_of_slot_[b]);
  }
}

// Every dynamic object live now, or at the frame's end while update()
// applies it (staged additions are seen then only).
template <class Visit>
void BroadPhase::for_each_dynamic_slot(Visit&& visit) const {
  const SlotState added = geometry_applied_ ? SlotState::kPendingAdd : SlotState::kLive;
  for (Slot s = 0; s < state_.size(); ++s) {
    const SlotState state = state_[s];
    if ((state == SlotState::kLive || state == added) && !is_static(s)) visit(s);
  }
}

// visit(i, slot) for every dynamic object overlapping boxes[i], on the
// algorithm's structure where it has one; else each box is tested against
// every dynamic box, or, for more than a few boxes, every dynamic box is
// looked up in a tree of the boxes.
template <class Visit>
void BroadPhase::for_each_dynamic_overlap(std::span<const Box3> boxes, Visit&& visit) const {
  if (boxes.empty()) return;
  if (!remake_algorithm_) {
    query_slots_.clear();
    if (algorithm_->query(boxes[0], query_slots_)) {
      for (std::size_t i = 0; i < boxes.size(); ++i) {
        if (i > 0) {
          query_slots_.clear();
          algorithm_->query(boxes[i], query_slots_);
        }
        for (const Slot s : query_slots_) visit(i, s);
      }
      return;
    }
  }
  constexpr std::size_t kFewBoxes = 8;
  if (boxes.size() <= kFewBoxes) {
    for_each_dynamic_slot([&](Slot s) {
      for (std::size_t i = 0; i < boxes.size(); ++i) {
        if (overlaps(box_of_slot_[s], boxes[i])) visit(i, s);
      }
    });
    return;
  }
  detail::AabbTree tree;
  std::vector<detail::AabbTree::Slot> index(boxes.size());
  for (std::size_t i = 0; i < boxes.size(); ++i) index[i] = static_cast<detail::AabbTree::Slot>(i);
  tree.build(index, boxes);
  for_each_dynamic_slot([&](Slot s) { tree.query(box_of_slot_[s], [&](detail::AabbTree::Slot i) { visit(i, s); }); });
}

// Static pairs, step by step (see the opening). First the dynamic objects
// that went, moved or came, against the static tree as it was; a static
// object that moves or goes this frame is set by its current box here and
// set again in the second step. Then the static objects that went, moved
// or came, against the dynamic objects at the frame's end; then the tree.
void BroadPhase::pair_with_statics() {
  if (!uses_statics_) return;
  if (statics_ == nullptr) statics_ = std::make_unique<detail::AabbTree>();
  if (static_neighbours_ == nullptr) static_neighbours_ = std::make_unique<detail::NeighbourCache>();
  detail::AabbTree& tree = *statics_;
  detail::NeighbourCache& cache = *static_neighbours_;
  const auto live_box_overlaps = [&](Slot s, const Box3& box) {
    return state_[s] != SlotState::kPendingRemove && overlaps(box_of_slot_[s], box);
  };
  // A dynamic object's static neighbours: its cached list while it stays
  // in its fat box, else the tree's answer around the new fat box (and the
  // old box), kept as the new list. A pair changes where the exact boxes
  // say so: was (the old box) against now (the new one).
  const auto neighbours = [&](Slot d, const Box3* old, const Box3& now, auto&& visit) {
    bool cached = false;
    for (const detail::NeighbourCache::Neighbour& n : cache.lookup(d, now, cached)) visit(n.slot, n.box);
    if (cached) return;
    const Box3 fat = detail::NeighbourCache::fat_box(now);
    cache.scratch().clear();
    tree.query(old != nullptr ? enclosing(*old, fat) : fat, [&](Slot s) {
      const Box3& box = box_of_slot_[s];
      visit(s, box);
      if (overlaps(box, fat)) cache.scratch().push_back({box, s});
    });
    cache.store(d, fat, cache.scratch());
  };
  // Whether a static object changes this frame (then its pairs are set in
  // the second step whatever this one finds); none in most frames.
  bool statics_change = false;
  for (const std::span<const Slot> list :
       {std::span<const Slot>(removed_), std::span<const Slot>(moved_), std::span<const Slot>(added_)}) {
    for (const Slot s : list) statics_change |= is_static(s);
  }
  const auto changing = [&](Slot s) { return statics_change && stamp_[s] == frame_ + 1 && is_static(s); };
  // A pair that goes on is asserted again: the algorithm may have dropped
  // every pair of an object it moved (PairManager::remove_if_involves()).
  const auto change = [&](Slot d, Slot s, bool was, bool now) {
    if (now) {
      if (filters_accept(filter_of(d), filter_of(s))) pairs_.add(id_of_slot_[d], id_of_slot_[s]);
    } else if (was) {
      pairs_.remove(id_of_slot_[d], id_of_slot_[s]);
    }
  };
  if (tree.size() > 0 && pairs_.replaced_all()) {
    // The algorithm began the frame anew (a recomputation): every dynamic
    // object meets its static neighbours again.
    for_each_dynamic_slot([&](Slot d) {
      const Box3& now = box_of_slot_[d];
      neighbours(d, nullptr, now, [&](Slot s, const Box3& s_box) {
        change(d, s, false, overlaps(s_box, now) && state_[s] != SlotState::kPendingRemove);
      });
    });
  } else if (tree.size() > 0) {
    for (const Slot d : removed_) {
      if (is_static(d)) continue;
      const Box3& old = box_of_slot_[d];
      bool cached = false;
      for (const detail::NeighbourCache::Neighbour& n : cache.lookup(d, old, cached)) {
        pairs_.remove(id_of_slot_[d], id_of_slot_[n.slot]);
      }
      if (!cached) tree.query(old, [&](Slot s) { pairs_.remove(id_of_slot_[d], id_of_slot_[s]); });
      cache.forget(d);
    }
    for (std::size_t k = 0; k < moved_.size(); ++k) {
      const Slot d = moved_[k];
      if (is_static(d)) continue;
      const Box3 &old = moved_boxes_[k], &now = box_of_slot_[d];
      neighbours(d, &old, now, [&](Slot s, const Box3& s_box) {
        // A static object the frame changes is set by its current box here,
        // whatever the pair manager holds, and again in step two.
        if (changing(s)) return set_pair(d, s, live_box_overlaps(s, now));
        change(d, s, overlaps(old, s_box), overlaps(now, s_box));
      });
    }
    for (const Slot d : added_) {
      if (is_static(d)) continue;
      const Box3& now = box_of_slot_[d];
      neighbours(d, nullptr, now, [&](Slot s, const Box3& s_box) {
        change(d, s, false, overlaps(s_box, now) && state_[s] != SlotState::kPendingRemove);
      });
    }
  }
  // The static objects that changed, and the region each touches.
  query_slots_.clear();
  query_boxes_.clear();
  std::size_t added_statics = 0;
  for (const Slot s : removed_) {
    if (is_static(s)) query_slots_.push_back(s), query_boxes_.push_back(box_of_slot_[s]);
  }
  for (std::size_t k = 0; k < moved_.size(); ++k) {
    const Slot s = moved_[k];
    if (is_static(s)) query_slots_.push_back(s), query_boxes_.push_back(enclosing(moved_boxes_[k], box_of_slot_[s]));
  }
  for (const Slot s : added_) {
    if (is_static(s)) query_slots_.push_back(s), query_boxes_.push_back(box_of_slot_[s]), ++added_statics;
  }
  if (query_slots_.empty()) return;
  const std::vector<Slot> changed = query_slots_;  // for_each_dynamic_overlap() uses query_slots_
  const std::vector<Box3> regions = query_boxes_;
  // Few changes: each asks the dynamic objects around it. Many (a level
  // loading or streamed out): every dynamic object asks the tree instead,
  // before the tree changes for the pairs that go, after for those that come.
  const std::size_t statics_before = tree.size();
  const std::size_t dynamics = live_ + added_.size() - removed_.size() - (statics_before + added_statics);
  const bool many = changed.size() > dynamics;
  if (many) {
    for_each_dynamic_slot([&](Slot d) {
      tree.query(box_of_slot_[d], [&](Slot s) {
        if (changing(s)) pairs_.remove(id_of_slot_[d], id_of_slot_[s]);
      });
    });
  } else {
    for_each_dynamic_overlap(regions, [&](std::size_t i, Slot d) {
      const Slot s = changed[i];
      set_pair(s, d, state_[s] != SlotState::kPendingRemove && overlaps(box_of_slot_[s], box_of_slot_[d]));
    });
  }
  // The tree follows: a mass insertion is laid out anew. The neighbour
  // lists around the changes go stale.
  cache.invalidate_around(regions);
  if (added_statics > statics_before) {
    std::vector<Slot> slots;
    std::vector<Box3> boxes;
    for (Slot s = 0; s < state_.size(); ++s) {
      if ((state_[s] == SlotState::kLive || state_[s] == SlotState::kPendingAdd) && is_static(s)) {
        slots.push_back(s);
        boxes.push_back(box_of_slot_[s]);
      }
    }
    tree.build(slots, boxes);
  } else {
    for (const Slot s : changed) {
      if (state_[s] == SlotState::kPendingRemove) {
        tree.remove(s);
      } else if (state_[s] == SlotState::kPendingAdd) {
        tree.insert(s, box_of_slot_[s]);
      } else {
        tree.move(s, box_of_slot_[s]);
      }
    }
  }
  if (many) {  // each dynamic object's neighbour list is made anew on the way
    for_each_dynamic_slot([&](Slot d) {
      const Box3& box = box_of_slot_[d];
      const Box3 fat = detail::NeighbourCache::fat_box(box);
      cache.scratch().clear();
      tree.query(fat, [&](Slot s) {
        cache.scratch().push_back({box_of_slot_[s], s});
        if (changing(s) && overlaps(box, box_of_slot_[s])) set_pair(d, s, true);
      });
      cache.store(d, fat, cache.scratch());
    });
  }
}

// Objects whose filter changed (they have no other operation this frame):
// every object they overlap at the frame's end is paired anew.
void BroadPhase::pair_refiltered() {
  if (refiltered_.empty()) return;
  if (statics_ != nullptr) {
    for (const Slot x : refiltered_) {
      if (!is_static(x)) statics_->query(box_of_slot_[x], [&](Slot s) { set_pair(x, s, true); });
    }
  }
  query_boxes_.clear();
  for (const Slot x : refiltered_) query_boxes_.push_back(box_of_slot_[x]);
  const std::vector<Box3> regions = query_boxes_;
  for_each_dynamic_overlap(regions, [&](std::size_t i, Slot d) {
    if (d != refiltered_[i]) set_pair(refiltered_[i], d, true);
  });
}

// The frame's operations become the broad phase's state (apply_geometry()
// has placed the boxes); nothing here allocates (update() reserved the
// free list).
void BroadPhase::commit_frame() {
  // Removed slots are freed only now, so no slot is reused within the frame
  // that freed it.
  for (const Slot s : removed_) {
    slot_of_id_.erase(id_of_slot_[s]);
    state_[s] = SlotState::kFree;
    free_slots_.push_back(s);
  }
  for (const Slot s : added_) state_[s] = SlotState::kLive;
  geometry_applied_ = false;
  if (dynamic_tree_ != nullptr) {  // the slots the query tree must see again (room reserved by update())
    for (const std::span<const Slot> list :
         {std::span<const Slot>(removed_), std::span<const Slot>(moved_), std::span<const Slot>(added_)}) {
      for (const Slot s : list) {
        if (is_static(s) || tree_change_mark_[s]) continue;
        tree_change_mark_[s] = 1;
        tree_changes_.push_back(s);
      }
    }
  }
  live_ = live_ + added_.size() - removed_.size();
  removed_.clear();
  moved_.clear();
  moved_boxes_.clear();
  added_.clear();
  added_boxes_.clear();
  refiltered_.clear();
  refilters_.clear();
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

// Renumbers the live objects 0..live-1 (in slot order) and rebuilds the
// algorithm and the static tree from them. The pairs found are the pairs
// there are, so the pair manager's frame changes nothing; the pairs() order
// may.
void BroadPhase::compact_slots() {
  const std::size_t n = live_;
  std::vector<Id> ids;
  std::vector<Box3> boxes;
  std::vector<Filter> filters;
  std::vector<Motion> motions;
  ids.reserve(n);
  boxes.reserve(n);
  if (uses_filters_) filters.reserve(n);
  if (uses_statics_) motions.reserve(n);
  for (Slot s = 0; s < state_.size(); ++s) {
    if (state_[s] != SlotState::kLive) continue;
    ids.push_back(id_of_slot_[s]);
    boxes.push_back(box_of_slot_[s]);
    if (uses_filters_) filters.push_back(filter_of_slot_[s]);
    if (uses_statics_) motions.push_back(motion_of_slot_[s]);
  }
  std::vector<SlotState> state(n, SlotState::kLive);
  std::vector<std::uint64_t> stamp(n, 0);
  detail::IdIndex slot_of_id;
  for (std::size_t k = 0; k < n; ++k) slot_of_id.insert(ids[k], static_cast<Slot>(k));
  const auto trade = [&]() noexcept {
    id_of_slot_.swap(ids);
    box_of_slot_.swap(boxes);
    filter_of_slot_.swap(filters);
    motion_of_slot_.swap(motions);
    state_.swap(state);
  };
  trade();
  std::vector<Pair> created, deleted;
  try {
    rebuild_from_live();
    pairs_.end_frame(created, deleted);
  } catch (...) {
    pairs_.abandon_frame();
    trade();
    throw;
  }
  stamp_.swap(stamp);
  slot_of_id_ = std::move(slot_of_id);
  // The staging room of the large frames goes too (delta_ still needs created_ and deleted_).
  detail::free_storage(free_slots_);
  detail::free_storage(removed_);
  detail::free_storage(moved_);
  detail::free_storage(added_);
  detail::free_storage(refiltered_);
  detail::free_storage(moved_boxes_);
  detail::free_storage(added_boxes_);
  detail::free_storage(refilters_);
  detail::free_storage(dynamic_removed_);
  detail::free_storage(dynamic_moved_);
  detail::free_storage(dynamic_added_);
  detail::free_storage(dynamic_moved_boxes_);
  detail::free_storage(dynamic_added_boxes_);
  detail::free_storage(lifted_);
  detail::free_storage(old_stamps_);
}

void BroadPhase::reserve(std::size_t objects, std::size_t pairs) {
  // Slots and pair positions are 32-bit: more cannot be held, which the
  // contract reports as memory that cannot be had (std::vector's
  // length_error is no part of it), before anything is asked of the system.
  constexpr std::size_t kMostHeld = std::numeric_limits<std::uint32_t>::max();
  if (objects > kMostHeld || pairs > kMostHeld) throw std::bad_alloc();
  id_of_slot_.reserve(objects);
  state_.reserve(objects);
  stamp_.reserve(objects);
  box_of_slot_.reserve(objects);
  free_slots_.reserve(objects);
  added_.reserve(objects);
  added_boxes_.reserve(objects);
  if (uses_filters_) filter_of_slot_.reserve(objects);
  if (uses_statics_) motion_of_slot_.reserve(objects);
  pairs_.reserve(pairs);
  algorithm_->reserve(objects);
}

// The staged operations forgotten: additions undone (newest first, so that
// the free list is as it was; add() reserved its room), the others' stamps
// cleared so that their ids may take an operation again this frame.
void BroadPhase::drop_staged() noexcept {
  for (std::size_t k = added_.size(); k-- > 0;) {
    const Slot s = added_[k];
    slot_of_id_.erase(id_of_slot_[s]);
    state_[s] = SlotState::kFree;
    stamp_[s] = 0;
    free_slots_.push_back(s);
  }
  for (const std::vector<Slot>* staged : {&removed_, &moved_, &refiltered_}) {
    for (const Slot s : *staged) stamp_[s] = 0;
  }
  removed_.clear();
  moved_.clear();
  moved_boxes_.clear();
  added_.clear();
  added_boxes_.clear();
  refiltered_.clear();
  refilters_.clear();
}

// After a failed frame, or to renumber the slots: a new algorithm is given
// every dynamic object live at the frame's end (apply_geometry() has placed
// the boxes) as an addition, a new static tree every static one, and every
// pair is reported; the pair manager turns that into the exact delta
// against the previous frame. Both replace the old ones only once built:
// until then the old algorithm's accepts() answers for the staged frame.
void BroadPhase::rebuild_from_live() {
  Options options = options_;
  if (pool_ != nullptr) options.tasks = pool_.get();
  std::unique_ptr<Algorithm> fresh = make_(options);
  if (fresh == nullptr) throw std::bad_alloc();  // the factory worked at create(): only memory can be short
  std::vector<Slot> dynamics, statics;
  std::vector<Box3> dynamic_boxes, static_boxes;
  for (Slot s = 0; s < state_.size(); ++s) {
    if (state_[s] != SlotState::kLive && state_[s] != SlotState::kPendingAdd) continue;
    (is_static(s) ? statics : dynamics).push_back(s);
    (is_static(s) ? static_boxes : dynamic_boxes).push_back(box_of_slot_[s]);
  }
  pairs_.remove_all();
  fresh->update(FrameOps{{}, {}, {}, dynamics, dynamic_boxes, box_of_slot_, PairFilter(filter_of_slot_)}, id_of_slot_,
                pairs_);
  std::unique_ptr<detail::AabbTree> tree;
  if (uses_statics_) {
    tree = std::make_unique<detail::AabbTree>();
    tree->build(statics, static_boxes);
    for (const Slot d : dynamics) tree->query(box_of_slot_[d], [&](Slot s) { set_pair(d, s, true); });
  }
  algorithm_ = std::move(fresh);
  statics_ = std::move(tree);
  if (static_neighbours_ != nullptr) static_neighbours_->clear();
  dynamic_tree_.reset();  // slots may have been renumbered: made again by the next query that needs it
  detail::free_storage(tree_changes_);
  detail::free_storage(tree_change_mark_);
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
      case SlotState::kPendingRemove:  // only while update() runs
        return false;
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
  if (uses_filters_ && filter_of_slot_.size() != slots) return false;
  if (uses_statics_ && motion_of_slot_.size() != slots) return false;
  if (refiltered_.size() != refilters_.size()) return false;
  // The tree holds the live static objects; no pair joins two static
  // objects or breaks a filter.
  std::size_t statics = 0;
  for (Slot s = 0; s < slots; ++s) statics += state_[s] == SlotState::kLive && is_static(s);
  if (!remake_algorithm_ && statics != (statics_ == nullptr ? 0 : statics_->size())) return false;
  if (statics_ != nullptr && !remake_algorithm_) {
    if (!statics_->validate()) return false;
    for (Slot s = 0; s < slots; ++s) {
      if ((state_[s] == SlotState::kLive && is_static(s)) != statics_->contains(s)) return false;
    }
  }
  if (!remake_algorithm_ && !holds_the_pairs_there_are()) return false;
  // After a failed frame the algorithm's state is lost until the next update().
  return pairs_.validate() && (remake_algorithm_ || algorithm_->validate());
}

// Whether the pair manager holds exactly the pairs of the pair rule among
// the live objects (filter.hpp): by brute force up to 256 objects, by box
// pruning beyond.
bool BroadPhase::holds_the_pairs_there_are() const {
  std::vector<Slot> live;
  std::vector<Box3> boxes;
  for (Slot s = 0; s < state_.size(); ++s) {
    if (state_[s] == SlotState::kLive) live.push_back(s), boxes.push_back(box_of_slot_[s]);
  }
  std::vector<Pair> expected;
  const auto consider = [&](Slot a, Slot b) {
    if (!(is_static(a) && is_static(b)) && filters_accept(filter_of(a), filter_of(b))) {
      expected.push_back(make_pair(id_of_slot_[a], id_of_slot_[b]));
    }
  };
  if (live.size() <= 256) {
    for (std::size_t i = 0; i < live.size(); ++i) {
      for (std::size_t j = i + 1; j < live.size(); ++j) {
        if (overlaps(boxes[i], boxes[j])) consider(live[i], live[j]);
      }
    }
  } else {
    std::vector<IndexPair> found;
    complete_pairs(boxes, found);
    for (const IndexPair& p : found) consider(live[p.i], live[p.j]);
  }
  std::vector<Pair> actual;
  sorted_pairs(actual);
  std::sort(expected.begin(), expected.end());
  return expected == actual;
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
         box_of_slot_.capacity() * sizeof(Box3) + filter_of_slot_.capacity() * sizeof(Filter) +
         motion_of_slot_.capacity() * sizeof(Motion) + (statics_ == nullptr ? 0 : statics_->memory_bytes()) +
         (static_neighbours_ == nullptr ? 0 : static_neighbours_->memory_bytes()) +
         (dynamic_tree_ == nullptr
              ? 0
              : dynamic_tree_->memory_bytes() + tree_changes_.capacity() * sizeof(Slot) + tree_change_mark_.capacity());
}

std::optional<Box3> BroadPhase::box(Id id) const noexcept {
  if (!contains(id)) return std::nullopt;
  return box_of_slot_[slot_of_id_.find(id)];
}

std::optional<Filter> BroadPhase::filter(Id id) const noexcept {
  if (!contains(id)) return std::nullopt;
  return filter_of(slot_of_id_.find(id));
}

std::optional<Motion> BroadPhase::motion(Id id) const noexcept {
  if (!contains(id)) return std::nullopt;
  return is_static(slot_of_id_.find(id)) ? Motion::kStatic : Motion::kDynamic;
}

Status BroadPhase::query(const Box3& box, std::vector<Id>& out, std::uint32_t mask) const {
  out.clear();
  if (const BoxCheck check = check_input_box(box); !check) return Status::invalid_box(Operation::kQuery, 0, 0, check);
  answer_query(box, out, mask);
  return {};
}

Status BroadPhase::query(const Box2& box, std::vector<Id>& out, std::uint32_t mask) const {
  return query(lift(box), out, mask);
}

Status BroadPhase::query(std::span<const Box3> boxes, std::vector<Id>& ids, std::vector<std::size_t>& offsets,
                         std::uint32_t mask) const {
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
    answer_query(box, one, mask);
    ids.insert(ids.end(), one.begin(), one.end());
    offsets.push_back(ids.size());
  }
  return {};
}

// Whether the static tree holds the static objects of the last update():
// a frame that failed may have changed it before it failed (an insertion,
// half a build), and the next update() makes it anew with the algorithm;
// until then the static objects are tested one by one
// (for_each_static_slot()), so that a query or a ray sees the broad phase
// as it was before the failed call.
bool BroadPhase::statics_trusted() const noexcept { return statics_ != nullptr && !remake_algorithm_; }

// visit(slot) for every static object live at the last update() (its
// removal may be staged; its addition, not yet).
template <class Visit>
void BroadPhase::for_each_static_slot(Visit&& visit) const {
  if (!uses_statics_) return;
  for (Slot s = 0; s < state_.size(); ++s) {
    if ((state_[s] == SlotState::kLive || state_[s] == SlotState::kPendingRemove) && is_static(s)) visit(s);
  }
}

// The static tree's answer and the algorithm's (or every dynamic box
// tested, also while a failed frame awaits the algorithm's rebuild: the
// boxes are the last frame's), kept by category.
void BroadPhase::answer_query(const Box3& box, std::vector<Id>& out, std::uint32_t mask) const {
  out.clear();
  const auto keep = [&](Slot s) {
    if ((filter_of(s).category & mask) != 0) out.push_back(id_of_slot_[s]);
  };
  if (statics_trusted()) {
    statics_->query(box, keep);
  } else {
    for_each_static_slot([&](Slot s) {
      if (overlaps(box, box_of_slot_[s])) keep(s);
    });
  }
  query_slots_.clear();
  if (!remake_algorithm_ && algorithm_->query(box, query_slots_)) {
    for (const Slot s : query_slots_) keep(s);
  } else {
    dynamic_tree().query(box, keep);
  }
  std::sort(out.begin(), out.end());
}

// The query tree of the dynamic objects, up to date: a few changes are
// applied one by one, many by building it anew.
const detail::AabbTree& BroadPhase::dynamic_tree() const {
  const auto rebuild = [&] {
    std::vector<Slot> slots;
    std::vector<Box3> boxes;
    for_each_dynamic_slot([&](Slot s) { slots.push_back(s), boxes.push_back(box_of_slot_[s]); });
    dynamic_tree_->build(slots, boxes);
  };
  if (dynamic_tree_ == nullptr) {
    dynamic_tree_ = std::make_unique<detail::AabbTree>();
    tree_change_mark_.assign(id_of_slot_.size(), 0);
    rebuild();
  } else if (!tree_changes_.empty()) {
    if (tree_changes_.size() > dynamic_tree_->size() / 8 + 64) {
      rebuild();
    } else {
      for (const Slot s : tree_changes_) {
        const bool live = state_[s] == SlotState::kLive && !is_static(s);
        if (!live) {
          if (dynamic_tree_->contains(s)) dynamic_tree_->remove(s);
        } else if (dynamic_tree_->contains(s)) {
          dynamic_tree_->move(s, box_of_slot_[s]);
        } else {
          dynamic_tree_->insert(s, box_of_slot_[s]);
        }
      }
    }
  }
  for (const Slot s : tree_changes_) tree_change_mark_[s] = 0;
  tree_changes_.clear();
  return *dynamic_tree_;
}

// What ray_cast() and ray_cast_closest() refuse: an invalid ray, and in a
// 2D broad phase one that leaves its plane.
Status BroadPhase::check_ray_here(const Ray3& ray) const {
  if (const RayCheck check = check_ray(ray); !check) return Status::invalid_ray(Operation::kRayCast, check);
  if (options_.dims == 2 && (ray.origin[2] != 0.0f || ray.direction[2] != 0.0f)) {
    return Status::invalid_argument(Operation::kRayCast, "the ray leaves the plane z = 0 of a 2D broad phase");
  }
  return {};
}

Status BroadPhase::ray_cast(const Ray3& ray, std::vector<RayHit>& hits, std::uint32_t mask) const {
  hits.clear();
  if (Status refusal = check_ray_here(ray); !refusal) return refusal;
  cast_ray(ray, hits, mask, false);
  return {};
}

Status BroadPhase::ray_cast(const Ray2& ray, std::vector<RayHit>& hits, std::uint32_t mask) const {
  if (const RayCheck check = check_ray(ray); !check) {
    hits.clear();
    return Status::invalid_ray(Operation::kRayCast, check);
  }
  return ray_cast(lift(ray), hits, mask);
}

Status BroadPhase::ray_cast_closest(const Ray3& ray, std::optional<RayHit>& hit, std::uint32_t mask) const {
  hit.reset();
  if (Status refusal = check_ray_here(ray); !refusal) return refusal;
  std::vector<RayHit> hits;
  cast_ray(ray, hits, mask, true);
  if (!hits.empty()) hit = hits.front();
  return {};
}

Status BroadPhase::ray_cast_closest(const Ray2& ray, std::optional<RayHit>& hit, std::uint32_t mask) const {
  if (const RayCheck check = check_ray(ray); !check) {
    hit.reset();
    return Status::invalid_ray(Operation::kRayCast, check);
  }
  return ray_cast_closest(lift(ray), hit, mask);
}

// Static objects through the tree, which culls by node; dynamic ones box by
// box. For the closest hit only the best so far is kept, and the tree skips
// what lies beyond it.
void BroadPhase::cast_ray(const Ray3& ray, std::vector<RayHit>& hits, std::uint32_t mask, bool closest) const {
  const auto better = [](const RayHit& x, const RayHit& y) { return x < y; };
  const auto consider = [&](Slot s, float t) {
    if ((filter_of(s).category & mask) == 0) return;
    const RayHit hit{id_of_slot_[s], t};
    if (!closest) {
      hits.push_back(hit);
    } else if (hits.empty()) {
      hits.push_back(hit);
    } else if (better(hit, hits.front())) {
      hits.front() = hit;
    }
  };
  if (statics_trusted()) {
    statics_->ray(ray, [&](Slot s, float t) {
      consider(s, t);
      return closest && !hits.empty() ? hits.front().t : ray.max_t;
    });
  } else {
    for_each_static_slot([&](Slot s) {
      if (float t = 0; ray_entry(ray, box_of_slot_[s], t)) consider(s, t);
    });
  }
  dynamic_tree().ray(ray, [&](Slot s, float t) {
    consider(s, t);
    return closest && !hits.empty() ? hits.front().t : ray.max_t;
  });
  if (!closest) std::sort(hits.begin(), hits.end());
}

}  // namespace sapling
