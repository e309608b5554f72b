// The recompute-and-diff adapter (algorithm.hpp): a one-shot complete
// algorithm made persistent. Boxes are kept dense (slot order is irrelevant
// to the one-shot query), so each frame is one query over a packed array.
#include <utility>

#include "sapling/recompute.hpp"

namespace sapling {
namespace {

class Recompute final : public Algorithm {
 public:
  explicit Recompute(std::unique_ptr<OneShotComplete> one_shot) : one_shot_(std::move(one_shot)) {}

  void update(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) override {
    for (const Slot s : ops.removed) erase(s);
    for (std::size_t k = 0; k < ops.moved.size(); ++k) boxes_[dense_of_slot_[ops.moved[k]]] = ops.moved_boxes[k];
    for (std::size_t k = 0; k < ops.added.size(); ++k) insert(ops.added[k], ids[ops.added[k]], ops.added_boxes[k]);

    found_.clear();
    one_shot_->complete(boxes_, found_);
    frame_pairs_.resize(found_.size());
    for (std::size_t k = 0; k < found_.size(); ++k) {
      frame_pairs_[k] = make_pair(ids_[found_[k].i], ids_[found_[k].j]);
    }
    pairs.assign(frame_pairs_);  // sorted and diffed in bulk
  }

  // Invariant: boxes_, slots_ and ids_ are parallel and dense_of_slot_
  // inverts slots_.
  bool validate() const override {
    if (boxes_.size() != slots_.size() || ids_.size() != slots_.size()) return false;
    for (std::uint32_t d = 0; d < slots_.size(); ++d) {
      if (slots_[d] >= dense_of_slot_.size() || dense_of_slot_[slots_[d]] != d) return false;
    }
    return true;
  }

  std::size_t memory_bytes() const override {
    return boxes_.capacity() * sizeof(Box3) + slots_.capacity() * sizeof(Slot) + ids_.capacity() * sizeof(Id) +
           dense_of_slot_.capacity() * sizeof(std::uint32_t) + found_.capacity() * sizeof(IndexPair) +
           frame_pairs_.capacity() * sizeof(Pair);
  }

 private:
  void insert(Slot s, Id id, const Box3& box) {
    if (s >= dense_of_slot_.size()) dense_of_slot_.resize(s + 1);
    dense_of_slot_[s] = static_cast<std::uint32_t>(boxes_.size());
    boxes_.push_back(box);
    slots_.push_back(s);
    ids_.push_back(id);
  }

  void erase(Slot s) {  // swap with the last dense entry
    const std::uint32_t d = dense_of_slot_[s];
    boxes_[d] = boxes_.back();
    slots_[d] = slots_.back();
    ids_[d] = ids_.back();
    dense_of_slot_[slots_[d]] = d;
    boxes_.pop_back();
    slots_.pop_back();
    ids_.pop_back();
  }

  std::unique_ptr<OneShotComplete> one_shot_;
  std::vector<Box3> boxes_;                   // dense live boxes
  std::vector<Slot> slots_;                   // dense index -> slot
  std::vector<Id> ids_;                       // dense index -> id (one load per pair end, not two)
  std::vector<std::uint32_t> dense_of_slot_;  // slot -> dense index
  std::vector<IndexPair> found_;
  std::vector<Pair> frame_pairs_;  // the frame's pairs as ids; swapped with the manager's old set
};

}  // namespace

std::unique_ptr<Algorithm> make_recompute(std::unique_ptr<OneShotComplete> one_shot) {
  return std::make_unique<Recompute>(std::move(one_shot));
}

}  // namespace sapling
