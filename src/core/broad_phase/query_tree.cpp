// The dynamic objects' tree for queries and rays (query_tree.hpp).
#include "core/broad_phase/query_tree.hpp"

#include "detail/reserve.hpp"

namespace sapling::detail {

void QueryTree::reserve_for(const StagedFrame& frame, std::size_t slots) {
  if (tree_ == nullptr) return;
  reserve_geometric(changes_, changes_.size() + frame.removed.size() + frame.moved.size() + frame.added.size());
  if (marked_.size() < slots) marked_.resize(slots, 0);
}

void QueryTree::note(const StagedFrame& frame, const ObjectTable& objects) noexcept {
  if (tree_ == nullptr) return;
  for (const std::vector<Slot>* list : {&frame.removed, &frame.moved, &frame.added}) {
    for (const Slot s : *list) {
      if (objects.is_static(s) || marked_[s]) continue;
      marked_[s] = 1;
      changes_.push_back(s);
    }
  }
}

const AabbTree& QueryTree::get(const ObjectTable& objects) {
  const auto rebuild = [&] {
    std::vector<Slot> slots;
    std::vector<Box3> boxes;
    objects.for_each_dynamic(false, [&](Slot s) { slots.push_back(s), boxes.push_back(objects.boxes[s]); });
    tree_->build(slots, boxes);
  };
  if (tree_ == nullptr) {
    tree_ = std::make_unique<AabbTree>();
    marked_.assign(objects.slots(), 0);
    rebuild();
  } else if (!changes_.empty()) {
    if (changes_.size() > tree_->size() / 8 + 64) {
      rebuild();
    } else {
      for (const Slot s : changes_) {
        const bool live = objects.states[s] == SlotState::kLive && !objects.is_static(s);
        if (!live) {
          if (tree_->contains(s)) tree_->remove(s);
        } else if (tree_->contains(s)) {
          tree_->move(s, objects.boxes[s]);
        } else {
          tree_->insert(s, objects.boxes[s]);
        }
      }
    }
  }
  for (const Slot s : changes_) marked_[s] = 0;
  changes_.clear();
  return *tree_;
}

void QueryTree::reset() noexcept {
  tree_.reset();
  free_storage(changes_);
  free_storage(marked_);
}

std::size_t QueryTree::memory_bytes() const noexcept {
  return tree_ == nullptr ? 0 : tree_->memory_bytes() + changes_.capacity() * sizeof(Slot) + marked_.capacity();
}

}  // namespace sapling::detail
