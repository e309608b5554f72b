// Static objects and changes of filter (static_objects.hpp).
#include "core/broad_phase/static_objects.hpp"

#include "detail/reserve.hpp"

namespace sapling::detail {

void StaticObjects::pair_frame(const ObjectTable& objects, const StagedFrame& frame, Stamp stamp,
                               const DynamicOverlaps& dynamics, PairManager& pairs, TaskSystem* tasks) {
  if (!objects.uses_statics) return;
  if (tree_ == nullptr) tree_ = std::make_unique<AabbTree>();
  if (neighbours_ == nullptr) neighbours_ = std::make_unique<NeighbourCache>();
  AabbTree& tree = *tree_;
  NeighbourCache& cache = *neighbours_;
  follow_dynamics(objects, frame);
  const auto for_each_dynamic = [&](auto&& visit) {
    for (const Slot d : dynamics_.slots()) visit(d);
  };
  const std::vector<Box3>& box_of = objects.boxes;
  const auto gone = [&](Slot s) { return objects.states[s] == SlotState::kPendingRemove; };
  const auto pair = [&](Slot a, Slot b, bool overlapping) { set_pair(objects, pairs, a, b, overlapping); };
  // Whether a static object changes this frame (then its pairs are set in
  // the second step whatever this one finds); none in most frames.
  const bool statics_change = frame.changes_statics(objects);
  const auto changing = [&](Slot s) { return statics_change && objects.stamps[s] == stamp && objects.is_static(s); };
  // A dynamic object's static neighbours: its cached list while it stays
  // in its fat box, visited at once; else the tree's answer around the new
  // fat box (and the old box), kept as the new list, once every such walk
  // of the step is queued (AabbTree::query_each() overlaps their waits on
  // memory). A pair changes where the exact boxes say so: was (the old box)
  // against now (the new one). `k` is the object's index in frame.moved, or
  // kArrives.
  constexpr std::uint32_t kArrives = ~std::uint32_t{0};
  walks_.clear();
  walk_boxes_.clear();
  using Neighbour = NeighbourCache::Neighbour;
  const auto neighbours = [&](Slot d, std::uint32_t k, auto&& visit) {
    const Box3& now = box_of[d];
    bool cached = false;
    for (const Neighbour& n : cache.lookup(d, now, cached)) visit(d, k, n);
    if (cached) return;
    const Box3 fat = NeighbourCache::fat_box(now);
    if (k == kArrives || overlaps(frame.moved_boxes[k], fat)) {
      walks_.push_back({d, k, true});
      walk_boxes_.push_back(k != kArrives ? enclosing(frame.moved_boxes[k], fat) : fat);
    } else {  // moved far (a teleport, an origin shift): the old box and the fat box apart, not all between
      walks_.push_back({d, k, false});
      walk_boxes_.push_back(frame.moved_boxes[k]);
      walks_.push_back({d, k, true});
      walk_boxes_.push_back(fat);
    }
  };
  const auto walk_queued = [&](auto&& visit) {
    tree.query_each(walk_boxes_, [&](std::size_t i, std::span<const AabbTree::Hit> hits) {
      const auto [d, k, lists] = walks_[i];
      const Box3 fat = NeighbourCache::fat_box(box_of[d]);
      cache.scratch().clear();
      for (const AabbTree::Hit& hit : hits) {
        const Slot s = hit.slot;
        // The tree has a changing one's old box.
        const Neighbour n{changing(s) ? box_of[s] : hit.box, s, objects.ids[s]};
        visit(d, k, n);
        if (lists && overlaps(n.box, fat)) cache.scratch().push_back(n);
      }
      if (lists) cache.store(d, fat, cache.scratch());
    });
  };
  // The pairs with static objects are held (set_pair()): whatever the
  // algorithm did this frame, recomputing or dropping the pairs of the
  // objects it moved, a pair changes only where the boxes say so.
  const auto change = [&](Slot d, const Neighbour& s, bool was, bool now) {
    if (now && !was) {
      if (filters_accept(objects.filter_of(d), objects.filter_of(s.slot))) pairs.add_held(objects.ids[d], s.id);
    } else if (was && !now) {
      pairs.remove(objects.ids[d], s.id);
    }
  };
  const auto arrives = [&](Slot d, std::uint32_t, const Neighbour& s) {
    change(d, s, false, overlaps(s.box, box_of[d]) && !gone(s.slot));
  };
  // A static object the frame changes is set by its current box here,
  // whatever the pair manager holds, and again in step two.
  const auto moves = [&](Slot d, std::uint32_t k, const Neighbour& s) {
    const Box3 &old = frame.moved_boxes[k], &now = box_of[d];
    if (changing(s.slot)) return pair(d, s.slot, !gone(s.slot) && overlaps(box_of[s.slot], now));
    change(d, s, overlaps(old, s.box), overlaps(now, s.box));
  };
  const auto arrives_or_moves = [&](Slot d, std::uint32_t k, const Neighbour& s) {
    if (k == kArrives) return arrives(d, k, s);
    moves(d, k, s);
  };
  // Step one: the dynamic objects that changed, against the tree as it was.
  if (tree.size() > 0) {
    for (const Slot d : frame.removed) {
      if (objects.is_static(d)) continue;
      bool cached = false;
      for (const Neighbour& n : cache.lookup(d, box_of[d], cached)) pairs.remove(objects.ids[d], n.id);
      if (!cached) tree.query(box_of[d], [&](Slot s) { pairs.remove(objects.ids[d], objects.ids[s]); });
      cache.forget(d);
    }
    // The lists are asked for ahead (NeighbourCache::prefetch_index()).
    const std::span<const Slot> moved = frame.moved;
    constexpr std::size_t kAhead = 16;
    for (std::size_t k = 0; k < moved.size(); ++k) {
      if (k + 3 * kAhead < moved.size()) cache.prefetch_index(moved[k + 3 * kAhead]);
      if (k + 2 * kAhead < moved.size()) cache.prefetch_list(moved[k + 2 * kAhead]);
      if (k + kAhead < moved.size()) cache.prefetch_neighbours(moved[k + kAhead]);
      const Slot d = moved[k];
      if (!objects.is_static(d)) neighbours(d, static_cast<std::uint32_t>(k), moves);
    }
    for (const Slot d : frame.added) {
      if (!objects.is_static(d)) neighbours(d, kArrives, arrives);
    }
    walk_queued(arrives_or_moves);
  }
  if (!statics_change) return;
  // Step two: the static objects that changed. Few changes: each asks the
  // dynamic objects around it (its region). Many (a level loading or
  // streamed out): every dynamic object asks the tree instead, before the
  // tree changes for the pairs that go, after for those that come; and a
  // mass change lays the tree out anew, so that neither the list of the
  // changes nor their regions is made (a level's worth of scratch).
  std::size_t changes = 0;
  for (const std::span<const Slot> slots : {frame.removed, frame.moved, frame.added}) {
    for (const Slot s : slots) changes += objects.is_static(s) ? 1 : 0;
  }
  const std::size_t statics_before = tree.size();
  const bool many = changes > dynamics_.size(), relayout = 2 * changes > statics_before;
  changed_.clear();
  regions_.clear();
  const bool listed = !many || !relayout;
  if (listed) {
    for (const Slot s : frame.removed) {
      if (objects.is_static(s)) changed_.push_back(s), regions_.push_back(box_of[s]);
    }
    // A static object moved far (a teleport, an origin shift) has its old
    // and new boxes as two regions, listed one after the other, rather than
    // the box enclosing both.
    for (std::size_t k = 0; k < frame.moved.size(); ++k) {
      const Slot s = frame.moved[k];
      if (!objects.is_static(s)) continue;
      const Box3 &old = frame.moved_boxes[k], &now = box_of[s];
      if (overlaps(old, now)) {
        changed_.push_back(s), regions_.push_back(enclosing(old, now));
      } else {
        changed_.push_back(s), regions_.push_back(old);
        changed_.push_back(s), regions_.push_back(now);
      }
    }
    for (const Slot s : frame.added) {
      if (objects.is_static(s)) changed_.push_back(s), regions_.push_back(box_of[s]);
    }
  }
  if (many) {
    for_each_dynamic([&](Slot d) {
      tree.query(box_of[d], [&](Slot s) {
        if (changing(s)) pairs.remove(objects.ids[d], objects.ids[s]);
      });
    });
  } else {
    dynamics.for_each(regions_, [&](std::size_t i, Slot d) {
      const Slot s = changed_[i];
      pair(s, d, !gone(s) && overlaps(box_of[s], box_of[d]));
    });
  }
  // The tree follows: laid out anew from the statics left, in bulk, after a
  // mass change; else changed in place, O(height) each. The neighbour lists
  // around the changes go stale.
  if (listed) {
    cache.invalidate_around(regions_);
  } else {
    cache.invalidate_all();
  }
  if (relayout) {
    std::vector<Slot> slots;
    std::vector<Box3> boxes;
    reserve_large(slots, statics_before + changes);  // at most: the statics before and those added
    reserve_large(boxes, statics_before + changes);
    for (Slot s = 0; s < objects.states.size(); ++s) {
      const SlotState state = objects.states[s];
      if ((state == SlotState::kLive || state == SlotState::kPendingAdd) && objects.is_static(s)) {
        slots.push_back(s);
        boxes.push_back(box_of[s]);
      }
    }
    tree.build(slots, boxes, AabbTree::Split::kSorted, tasks);
    if (tree.size() == 0) cache.release();  // an empty level holds no memory
    // Scratch the size of a level goes too: the next frame is unlikely to need it.
    free_storage(regions_);
    free_storage(changed_);
  } else {
    for (std::size_t k = 0; k < changed_.size(); ++k) {
      const Slot s = changed_[k];
      if (k > 0 && changed_[k - 1] == s) continue;  // its second region
      if (gone(s)) {
        tree.remove(s);
      } else if (objects.states[s] == SlotState::kPendingAdd) {
        tree.insert(s, box_of[s]);
      } else {
        tree.move(s, box_of[s]);
      }
    }
  }
  if (many) {  // each dynamic object's neighbour list is made anew on the way
    walks_.clear();
    walk_boxes_.clear();
    for_each_dynamic([&](Slot d) {
      walks_.push_back({d, kArrives, true});
      walk_boxes_.push_back(NeighbourCache::fat_box(box_of[d]));
    });
    tree.query_each(walk_boxes_, [&](std::size_t i, std::span<const AabbTree::Hit> hits) {
      const Slot d = walks_[i].object;
      cache.scratch().clear();
      for (const AabbTree::Hit& hit : hits) {  // the tree has every static object's current box now
        cache.scratch().push_back({hit.box, hit.slot, objects.ids[hit.slot]});
        if (changing(hit.slot) && overlaps(box_of[d], hit.box)) pair(d, hit.slot, true);
      }
      cache.store(d, walk_boxes_[i], cache.scratch());
    });
  }
}

// The dynamic objects live at the frame's end: the last frame's, less this
// one's removals, with its additions; found by a scan of every slot only
// after adopt() (or at the first static object).
void StaticObjects::follow_dynamics(const ObjectTable& objects, const StagedFrame& frame) {
  if (!dynamics_known_) {
    dynamics_ = {};
    objects.for_each_dynamic(true, [&](Slot d) { dynamics_.insert(d); });
    dynamics_known_ = true;
    return;
  }
  for (const Slot s : frame.removed) {
    if (!objects.is_static(s)) dynamics_.erase(s);
  }
  for (const Slot s : frame.added) {
    if (!objects.is_static(s)) dynamics_.insert(s);
  }
  if (dynamics_.empty()) dynamics_ = {};  // a world emptied holds no memory
}

// Objects whose filter changed (they have no other operation this frame):
// every object they overlap at the frame's end is paired anew.
void StaticObjects::pair_refiltered(const ObjectTable& objects, const StagedFrame& frame,
                                    const DynamicOverlaps& dynamics, PairManager& pairs) {
  if (frame.refiltered.empty()) return;
  if (tree_ != nullptr) {
    for (const Slot x : frame.refiltered) {
      if (!objects.is_static(x)) {
        tree_->query(objects.boxes[x], [&](Slot s) { set_pair(objects, pairs, x, s, true); });
      }
    }
  }
  regions_.clear();
  for (const Slot x : frame.refiltered) regions_.push_back(objects.boxes[x]);
  dynamics.for_each(regions_, [&](std::size_t i, Slot d) {
    if (d != frame.refiltered[i]) set_pair(objects, pairs, frame.refiltered[i], d, true);
  });
}

std::unique_ptr<AabbTree> StaticObjects::build(const ObjectTable& objects, std::span<const Slot> statics,
                                               std::span<const Box3> boxes, std::span<const Slot> dynamics,
                                               PairManager& pairs, TaskSystem* tasks) {
  auto tree = std::make_unique<AabbTree>();
  tree->build(statics, boxes, AabbTree::Split::kSorted, tasks);
  for (const Slot d : dynamics) {
    tree->query(objects.boxes[d], [&](Slot s) { set_pair(objects, pairs, d, s, true); });
  }
  return tree;
}

void StaticObjects::adopt(std::unique_ptr<AabbTree> tree) noexcept {
  tree_ = std::move(tree);
  if (neighbours_ != nullptr) neighbours_->clear();
  dynamics_known_ = false;  // slots may have been renumbered
  dynamics_ = {};
}

std::size_t StaticObjects::memory_bytes() const noexcept {
  return (tree_ == nullptr ? 0 : tree_->memory_bytes()) + (neighbours_ == nullptr ? 0 : neighbours_->memory_bytes()) +
         regions_.capacity() * sizeof(Box3) + changed_.capacity() * sizeof(Slot) + dynamics_.memory_bytes() +
         walks_.capacity() * sizeof(Walk) + walk_boxes_.capacity() * sizeof(Box3);
}

}  // namespace sapling::detail
