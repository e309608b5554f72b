// The dynamic objects' tree for queries and rays (query_tree.hpp).
#include "core/broad_phase/query_tree.hpp"

#include <vector>

namespace sapling::detail {

std::unique_ptr<AabbTree> QueryTree::build(const ObjectTable& objects, bool frame_end) {
  std::vector<Slot> slots;
  std::vector<Box3> boxes;
  objects.for_each_dynamic(frame_end, [&](Slot s) { slots.push_back(s), boxes.push_back(objects.boxes[s]); });
  auto tree = std::make_unique<AabbTree>();
  tree->build(slots, boxes);
  return tree;
}

void QueryTree::rebuild(const ObjectTable& objects, bool frame_end) const {
  tree_ = build(objects, frame_end);
  built_quality_ = tree_->area_ratio();
}

const AabbTree& QueryTree::get(const ObjectTable& objects) const {
  if (const AabbTree* tree = current_.load(std::memory_order_acquire)) {
    // Written once per frame at most, so that readers on many cores do not
    // contend for the flag's cache line.
    if (!used_.load(std::memory_order_relaxed)) used_.store(true, std::memory_order_relaxed);
    return *tree;
  }
  std::lock_guard lock(build_mutex_);
  if (const AabbTree* tree = current_.load(std::memory_order_relaxed)) return *tree;
  rebuild(objects, false);
  used_.store(true, std::memory_order_relaxed);
  current_.store(tree_.get(), std::memory_order_release);
  return *tree_;
}

// A slot has at most one operation per frame, and a removed slot is not
// reused before the next frame: each changed slot is in one list, once.
void QueryTree::follow(const StagedFrame& frame, const ObjectTable& objects) {
  if (tree_ == nullptr) return;
  std::size_t comings_and_goings = 0;
  moved_slots_.clear();
  moved_boxes_.clear();
  for (const std::vector<Slot>* list : {&frame.removed, &frame.added}) {
    for (const Slot s : *list) comings_and_goings += !objects.is_static(s);
  }
  for (const Slot s : frame.moved) {
    if (!objects.is_static(s)) moved_slots_.push_back(s), moved_boxes_.push_back(objects.boxes[s]);
  }
  if (comings_and_goings + moved_slots_.size() == 0) return;
  idle_frames_ = used_.exchange(false, std::memory_order_relaxed) ? 0 : idle_frames_ + 1;
  if (idle_frames_ >= kIdleFrames) return reset();
  try {
    moved_since_build_ += moved_slots_.size();
    bool renew = comings_and_goings > tree_->size() / 8 + 64;
    if (!renew) {
      for (const Slot s : frame.removed) {
        if (!objects.is_static(s)) tree_->remove(s);
      }
      tree_->move_in_place(moved_slots_, moved_boxes_);
      for (const Slot s : frame.added) {
        if (!objects.is_static(s)) tree_->insert(s, objects.boxes[s]);
      }
      // Refits keep the shape while the boxes travel: now and then, see
      // whether the tree has lost half its quality (an O(n) look, paid for
      // by the n moves since the last).
      if (moved_since_build_ > tree_->size() + 64) {
        moved_since_build_ = 0;
        renew = tree_->area_ratio() > 1.5 * built_quality_;
      }
    }
    if (renew) {
      moved_since_build_ = 0;
      rebuild(objects, true);
      current_.store(tree_.get(), std::memory_order_relaxed);  // no read runs during update()
    }
  } catch (...) {
    reset();  // part-way: not to be trusted
    throw;
  }
}

void QueryTree::reset() noexcept {
  current_.store(nullptr, std::memory_order_relaxed);
  tree_.reset();
  idle_frames_ = 0;
  moved_since_build_ = 0;
  used_.store(false, std::memory_order_relaxed);
}

std::size_t QueryTree::memory_bytes() const noexcept {
  const AabbTree* tree = current_.load(std::memory_order_acquire);
  return tree == nullptr ? 0 : tree->memory_bytes();
}

}  // namespace sapling::detail
