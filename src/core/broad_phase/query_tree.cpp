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

const AabbTree& QueryTree::get(const ObjectTable& objects) const {
  if (const AabbTree* tree = current_.load(std::memory_order_acquire)) {
    // Written once per frame at most, so that readers on many cores do not
    // contend for the flag's cache line.
    if (!used_.load(std::memory_order_relaxed)) used_.store(true, std::memory_order_relaxed);
    return *tree;
  }
  std::lock_guard lock(build_mutex_);
  if (const AabbTree* tree = current_.load(std::memory_order_relaxed)) return *tree;
  tree_ = build(objects, false);
  used_.store(true, std::memory_order_relaxed);
  current_.store(tree_.get(), std::memory_order_release);
  return *tree_;
}

// A slot has at most one operation per frame, and a removed slot is not
// reused before the next frame: each changed slot is in one list, once.
void QueryTree::follow(const StagedFrame& frame, const ObjectTable& objects) {
  if (tree_ == nullptr) return;
  std::size_t changes = 0;
  for (const std::vector<Slot>* list : {&frame.removed, &frame.moved, &frame.added}) {
    for (const Slot s : *list) changes += !objects.is_static(s);
  }
  if (changes == 0) return;
  idle_frames_ = used_.exchange(false, std::memory_order_relaxed) ? 0 : idle_frames_ + 1;
  if (idle_frames_ >= kIdleFrames) return reset();
  try {
    if (changes > tree_->size() / 8 + 64) {
      tree_ = build(objects, true);
      current_.store(tree_.get(), std::memory_order_relaxed);  // no read runs during update()
      return;
    }
    for (const Slot s : frame.removed) {
      if (!objects.is_static(s)) tree_->remove(s);
    }
    for (const Slot s : frame.moved) {
      if (!objects.is_static(s)) tree_->move(s, objects.boxes[s]);
    }
    for (const Slot s : frame.added) {
      if (!objects.is_static(s)) tree_->insert(s, objects.boxes[s]);
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
  used_.store(false, std::memory_order_relaxed);
}

std::size_t QueryTree::memory_bytes() const noexcept {
  const AabbTree* tree = current_.load(std::memory_order_acquire);
  return tree == nullptr ? 0 : tree->memory_bytes();
}

}  // namespace sapling::detail
