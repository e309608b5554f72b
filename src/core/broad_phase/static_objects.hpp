// Static objects and changes of filter: the pairs the algorithm cannot see.
//
// The algorithm is handed dynamic objects only (filter.hpp); the live static
// objects wait in a tree laid out once, and each dynamic object keeps the
// static objects near it (neighbour_cache.hpp). After the algorithm has
// applied a frame, pair_frame() sets the pairs that involve a static object
// in two steps: the dynamic objects that went, moved or came against the
// tree as it was; then the static objects that went, moved or came against
// the dynamic objects at the frame's end, and the tree follows them. Last,
// pair_refiltered() pairs each object whose filter changed anew with every
// object it overlaps. Each step sets a pair to what the frame's end state
// says (PairManager::add() and remove() are idempotent), so the order
// within a step does not matter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/broad_phase/object_table.hpp"
#include "core/broad_phase/staged_frame.hpp"
#include "detail/aabb_tree.hpp"
#include "detail/neighbour_cache.hpp"
#include "detail/slot_map.hpp"
#include "sapling/algorithm.hpp"
#include "sapling/pair_manager.hpp"
#include "sapling/task_system.hpp"

namespace sapling::detail {

/// The dynamic objects at a frame's end that overlap given boxes: on the
/// algorithm's structure where it answers region queries, else by testing
/// every dynamic box (a few boxes) or looking every dynamic box up in a
/// tree of the boxes (many).
class DynamicOverlaps {
 public:
  /// `algorithm` is null while its state cannot be trusted (a failed frame).
  DynamicOverlaps(const Algorithm* algorithm, const ObjectTable& objects, std::vector<Slot>& scratch) noexcept
      : algorithm_(algorithm), objects_(objects), scratch_(scratch) {}

  /// visit(i, slot) for every dynamic object overlapping boxes[i].
  template <class Visit>
  void for_each(std::span<const Box3> boxes, Visit&& visit) const;

 private:
  const Algorithm* algorithm_;
  const ObjectTable& objects_;
  std::vector<Slot>& scratch_;
};

class StaticObjects {
 public:
  /// The frame's pairs with static objects (see the opening).
  void pair_frame(const ObjectTable& objects, const StagedFrame& frame, Stamp stamp, const DynamicOverlaps& dynamics,
                  PairManager& pairs, TaskSystem* tasks);
  /// The objects whose filter changed this frame, paired anew.
  void pair_refiltered(const ObjectTable& objects, const StagedFrame& frame, const DynamicOverlaps& dynamics,
                       PairManager& pairs);
  /// A new tree of every static object live at the frame's end, each paired
  /// with the dynamic objects in `dynamics`; replaces this one's only
  /// through adopt(), so that a failure leaves this one as it was. The tree
  /// is laid out on `tasks` where given (the same tree without).
  static std::unique_ptr<AabbTree> build(const ObjectTable& objects, std::span<const Slot> statics,
                                         std::span<const Box3> boxes, std::span<const Slot> dynamics,
                                         PairManager& pairs, TaskSystem* tasks);
  void adopt(std::unique_ptr<AabbTree> tree) noexcept;

  /// The tree, or null before the first static object.
  const AabbTree* tree() const noexcept { return tree_.get(); }
  std::size_t memory_bytes() const noexcept;

 private:
  std::unique_ptr<AabbTree> tree_;
  std::unique_ptr<NeighbourCache> neighbours_;
  std::vector<Box3> regions_;  // scratch: the regions of a frame's static changes or refilters
  std::vector<Slot> changed_;  // scratch: the static objects a frame changes
  // Scratch of pair_frame(): the dynamic objects that walk the tree this
  // frame (with their index in the frame's moves, if moved, and whether the
  // walk makes their new list) and their query boxes.
  struct Walk {
    Slot object;
    std::uint32_t move;
    bool lists;
  };
  std::vector<Walk> walks_;
  std::vector<Box3> walk_boxes_;
  // The dynamic objects live at the last frame's end, so that a frame visits
  // them without a scan of every slot (a level of 1M static ones).
  SlotMap<> dynamics_;
  bool dynamics_known_ = false;

  void follow_dynamics(const ObjectTable& objects, const StagedFrame& frame);
};

/// A pair of two objects set to what the frame's end says: present when
/// they overlap and their filters accept each other, absent otherwise. A
/// pair with a static object is held (PairManager::add_held()): the
/// algorithm, which never sees static objects, cannot drop it.
inline void set_pair(const ObjectTable& objects, PairManager& pairs, Slot a, Slot b, bool overlapping) {
  if (overlapping && filters_accept(objects.filter_of(a), objects.filter_of(b))) {
    if (objects.is_static(a) || objects.is_static(b)) {
      pairs.add_held(objects.ids[a], objects.ids[b]);
    } else {
      pairs.add(objects.ids[a], objects.ids[b]);
    }
  } else {
    pairs.remove(objects.ids[a], objects.ids[b]);
  }
}

template <class Visit>
void DynamicOverlaps::for_each(std::span<const Box3> boxes, Visit&& visit) const {
  if (boxes.empty()) return;
  if (algorithm_ != nullptr) {
    scratch_.clear();
    if (algorithm_->query(boxes[0], scratch_)) {
      for (std::size_t i = 0; i < boxes.size(); ++i) {
        if (i > 0) {
          scratch_.clear();
          algorithm_->query(boxes[i], scratch_);
        }
        for (const Slot s : scratch_) visit(i, s);
      }
      return;
    }
  }
  constexpr std::size_t kFewBoxes = 8;
  if (boxes.size() <= kFewBoxes) {
    objects_.for_each_dynamic(true, [&](Slot s) {
      for (std::size_t i = 0; i < boxes.size(); ++i) {
        if (overlaps(objects_.boxes[s], boxes[i])) visit(i, s);
      }
    });
    return;
  }
  AabbTree tree;
  std::vector<AabbTree::Slot> index(boxes.size());
  for (std::size_t i = 0; i < boxes.size(); ++i) index[i] = static_cast<AabbTree::Slot>(i);
  tree.build(index, boxes);
  objects_.for_each_dynamic(true,
                            [&](Slot s) { tree.query(objects_.boxes[s], [&](AabbTree::Slot i) { visit(i, s); }); });
}

}  // namespace sapling::detail
