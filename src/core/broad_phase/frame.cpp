// The frame protocol (broad_phase.hpp): creation, the staging calls, and
// update(), which applies a frame in three steps: the algorithm applies the
// dynamic objects' operations (checking filters as it reports pairs); the
// static objects and the changes of filter follow (static_objects.hpp),
// and the reads' query tree if there is one (query_tree.hpp); the frame is
// committed and its sorted delta returned.
//
// Whatever can fail comes before the first change to the broad phase's own
// state, or is undone: a failed frame (std::bad_alloc) stays staged with the
// pairs as they were, and only the algorithm and the static tree, whose
// state is then lost, are rebuilt from the live objects by the next
// update(). A frame over the pair budget is refused and dropped.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "core/broad_phase/impl.hpp"
#include "detail/reserve.hpp"

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

BroadPhase::BroadPhase(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

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
  return std::unique_ptr<BroadPhase>(new BroadPhase(
      std::make_unique<Impl>(std::move(name), std::move(make), options, std::move(pool), std::move(algorithm))));
}

Status BroadPhase::add(std::span<const Id> ids, std::span<const Box3> boxes) {
  return add(ids, boxes, {}, Motion::kDynamic);
}

Status BroadPhase::add(std::span<const Id> ids, std::span<const Box2> boxes) {
  return add(ids, boxes, {}, Motion::kDynamic);
}

Status BroadPhase::add(std::span<const Id> ids, std::span<const Box3> boxes, std::span<const Filter> filters,
                       Motion motion) {
  return add(ids, boxes, filters, motion, {});
}

Status BroadPhase::add(std::span<const Id> ids, std::span<const Box2> boxes, std::span<const Filter> filters,
                       Motion motion) {
  return add(ids, boxes, filters, motion, {});
}

Status BroadPhase::add(std::span<const Id> ids, std::span<const Box3> boxes, std::span<const Filter> filters,
                       Motion motion, std::span<const float> contact_distances) {
  Impl& m = *impl_;
  return m.staged.add(m.objects, detail::frame_stamp(m.frame), ids, boxes, filters, contact_distances, motion,
                      *m.algorithm, m.options.dims);
}

Status BroadPhase::add(std::span<const Id> ids, std::span<const Box2> boxes, std::span<const Filter> filters,
                       Motion motion, std::span<const float> contact_distances) {
  impl_->lifted.resize(boxes.size());
  std::transform(boxes.begin(), boxes.end(), impl_->lifted.begin(), [](const Box2& b) { return lift(b); });
  return add(ids, std::span<const Box3>(impl_->lifted), filters, motion, contact_distances);
}

Status BroadPhase::set_filter(std::span<const Id> ids, std::span<const Filter> filters) {
  Impl& m = *impl_;
  return m.staged.change(m.objects, detail::frame_stamp(m.frame), Operation::kSetFilter, ids, {}, filters, {},
                         *m.algorithm, m.options.dims);
}

Status BroadPhase::move(std::span<const Id> ids, std::span<const Box3> boxes) { return move(ids, boxes, {}); }

Status BroadPhase::move(std::span<const Id> ids, std::span<const Box2> boxes) { return move(ids, boxes, {}); }

Status BroadPhase::move(std::span<const Id> ids, std::span<const Box3> boxes,
                        std::span<const float> contact_distances) {
  Impl& m = *impl_;
  return m.staged.change(m.objects, detail::frame_stamp(m.frame), Operation::kMove, ids, boxes, {}, contact_distances,
                         *m.algorithm, m.options.dims);
}

Status BroadPhase::move(std::span<const Id> ids, std::span<const Box2> boxes,
                        std::span<const float> contact_distances) {
  impl_->lifted.resize(boxes.size());
  std::transform(boxes.begin(), boxes.end(), impl_->lifted.begin(), [](const Box2& b) { return lift(b); });
  return move(ids, std::span<const Box3>(impl_->lifted), contact_distances);
}

Status BroadPhase::remove(std::span<const Id> ids) {
  Impl& m = *impl_;
  return m.staged.change(m.objects, detail::frame_stamp(m.frame), Operation::kRemove, ids, {}, {}, {}, *m.algorithm,
                         m.options.dims);
}

void BroadPhase::drop_staged() noexcept {
  impl_->staged.drop(impl_->objects);
  impl_->large.drop_staged();
}

const FrameDelta& BroadPhase::update() {
  Impl& m = *impl_;
  m.created.clear();
  m.deleted.clear();
  m.delta = FrameDelta{};
  const bool shifting = m.large.shift_pending;
  if (!m.staged.empty() || shifting) {
    detail::reserve_geometric(m.objects.free_slots, m.objects.free_slots.size() + m.staged.removed.size());
    // An origin shift re-expresses the live boxes and rebuilds once from
    // them (large_world_frame.cpp); a failure below puts the boxes back. In
    // a world with no live object (the origin set before the first frame)
    // there is nothing to re-express: the frame's boxes are staged relative
    // to the new origin already.
    const bool reexpressing = shifting && m.objects.live != 0;
    if (reexpressing) {
      m.apply_shift();
      m.remake_algorithm = true;
    }
    bool filters_swapped = false, geometry_applied = false;
    const auto undo = [&]() noexcept {
      m.pairs.abandon_frame();
      m.query_tree.reset();  // it may have followed the frame: built again by the next read that needs it
      if (geometry_applied) m.staged.undo_geometry(m.objects);
      if (filters_swapped) m.staged.swap_filters(m.objects);
      geometry_applied = filters_swapped = false;
      m.remake_algorithm = true;
    };
    // The pair budget is on the pairs after the frame (Options::max_pairs).
    // When the pair manager's room (twice the budget) runs out first, the
    // frame may still end under budget (an incremental algorithm adds pairs
    // its removals cancel at the end): it is computed again from the live
    // boxes, which adds each pair once, so that running out of room then
    // proves it over.
    for (;;) {
      const bool rebuilding = m.remake_algorithm;
      bool over_budget = false;
      try {
        const FrameOps ops = m.staged.dynamic_ops(m.objects);
        m.staged.swap_filters(m.objects);  // the algorithm reports pairs under the frame's filters
        filters_swapped = true;
        if (rebuilding) {
          m.staged.apply_geometry(m.objects);
          geometry_applied = true;
          m.rebuild_from_live();
        } else {
          // What the algorithm reported matters not here: the pairs with
          // static objects are held (PairManager::add_held()) either way.
          if (!ops.empty()) static_cast<void>(m.algorithm->update(ops, m.objects.ids, m.pairs));
          m.staged.apply_geometry(m.objects);
          geometry_applied = true;
          const detail::DynamicOverlaps dynamics(m.algorithm.get(), m.objects, m.overlap_slots);
          m.statics.pair_frame(m.objects, m.staged, detail::frame_stamp(m.frame), dynamics, m.pairs,
                               m.options.tasks != nullptr ? m.options.tasks : m.pool.get());
          m.statics.pair_refiltered(m.objects, m.staged, dynamics, m.pairs);
          m.query_tree.follow(m.staged, m.objects);
        }
        over_budget = m.pairs.budget() != 0 && m.pairs.size_at_end() > m.pairs.budget();
        if (over_budget) throw PairBudgetExceeded();
        m.pairs.end_frame(m.created, m.deleted);
        break;
      } catch (const PairBudgetExceeded&) {
        undo();
        if (!over_budget && !rebuilding) continue;
        if (shifting) {  // the shift goes with the frame's operations
          if (reexpressing) m.undo_shift();
          m.large.shift_pending = false;
        }
        drop_staged();
        m.objects.advance(m.frame);
        m.delta.status = Status::pair_budget(m.pairs.budget());
        return m.delta;
      } catch (...) {
        undo();
        if (reexpressing) m.undo_shift();  // still pending: the next update() shifts again
        m.created.clear();
        m.deleted.clear();
        throw;
      }
    }
    m.remake_algorithm = false;
    if (shifting) {
      m.large.origin = m.large.staging_origin();
      m.large.shift_pending = false;
      detail::free_storage(m.before_shift);
      detail::free_storage(m.own_before_shift);
    }
    // A recomputed frame's lists come sorted out of PairManager::assign().
    if (!std::is_sorted(m.created.begin(), m.created.end())) std::sort(m.created.begin(), m.created.end());
    if (!std::is_sorted(m.deleted.begin(), m.deleted.end())) std::sort(m.deleted.begin(), m.deleted.end());
  }
  const bool changed = !m.staged.empty() || shifting;
  m.commit_frame();
  // With Options::exact_pairs the frame reports the exact pairs' delta. (It
  // may throw std::bad_alloc after the commit: the exact pairs are then the
  // previous frame's until a frame with operations.)
  if (m.options.exact_pairs && changed) m.keep_exact_pairs();
  m.delta = FrameDelta{m.created, m.deleted, {}};
  m.give_back_memory();
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
                 static_cast<unsigned long long>(m.frame - 1), m.name.c_str());
    std::abort();
  }
#endif
  return m.delta;
}

// The frame's operations become the broad phase's state; nothing here
// allocates (update() reserved the free list's room).
void BroadPhase::Impl::commit_frame() noexcept {
  large.commit(objects.exact, staged.moved);
  staged.commit(objects);
  objects.advance(frame);
}

// After a failed frame, or to renumber the slots: a new algorithm is given
// every dynamic object live at the frame's end (apply_geometry() has placed
// the boxes) as an addition, a new static tree every static one, and every
// pair is reported; the pair manager turns that into the exact delta
// against the previous frame. Both replace the old ones only once built:
// until then the old algorithm's accepts() answers for the staged frame.
void BroadPhase::Impl::rebuild_from_live() {
  Options fresh_options = options;
  if (pool != nullptr) fresh_options.tasks = pool.get();
  std::unique_ptr<Algorithm> fresh = make(fresh_options);
  if (fresh == nullptr) throw std::bad_alloc();  // the factory worked at create(): only memory can be short
  std::vector<Slot> dynamics, statics_live;
  std::vector<Box3> dynamic_boxes, static_boxes;
  for (Slot s = 0; s < objects.states.size(); ++s) {
    const detail::SlotState state = objects.states[s];
    if (state != detail::SlotState::kLive && state != detail::SlotState::kPendingAdd) continue;
    (objects.is_static(s) ? statics_live : dynamics).push_back(s);
    (objects.is_static(s) ? static_boxes : dynamic_boxes).push_back(objects.boxes[s]);
  }
  pairs.remove_all(PairManager::Held::kRemoved);
  fresh->update(
      FrameOps{{}, {}, {}, dynamics, dynamic_boxes, objects.boxes, PairFilter(objects.filters), &objects.boxes},
      objects.ids, pairs);
  std::unique_ptr<detail::AabbTree> tree;
  if (objects.uses_statics)
    tree = detail::StaticObjects::build(objects, statics_live, static_boxes, dynamics, pairs, fresh_options.tasks);
  algorithm = std::move(fresh);
  statics.adopt(std::move(tree));
  query_tree.reset();  // slots may have been renumbered: built again by the next read that needs it
}

}  // namespace sapling
