// The recompute-and-diff adapter (algorithm.hpp): a one-shot complete
// algorithm made persistent. Boxes are kept dense (slot order is irrelevant
// to the one-shot query), so each frame is one query over a packed array.
#include <utility>

#include "algorithms/builtin.hpp"
#include "detail/slot_map.hpp"
#include "sapling/recompute.hpp"

namespace sapling {
namespace {

class Recompute final : public Algorithm {
 public:
  explicit Recompute(std::unique_ptr<OneShotComplete> one_shot) : one_shot_(std::move(one_shot)) {}

  Reported update(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) override {
    for (const Slot s : ops.removed) live_.erase(s);
    for (std::size_t k = 0; k < ops.moved.size(); ++k) live_.value<kBox>(ops.moved[k]) = ops.moved_boxes[k];
    for (std::size_t k = 0; k < ops.added.size(); ++k)
      live_.insert(ops.added[k], ops.added_boxes[k], ids[ops.added[k]]);

    found_.clear();
    one_shot_->complete(live_.values<kBox>(), found_);
    frame_pairs_.resize(found_.size());
    const std::vector<Id>& ids_of = live_.values<kId>();
    std::size_t kept = 0;
    for (const IndexPair& p : found_) {
      if (ops.filter.accepts(live_.slot(p.i), live_.slot(p.j)))
        frame_pairs_[kept++] = make_pair(ids_of[p.i], ids_of[p.j]);
    }
    frame_pairs_.resize(kept);
    pairs.assign(frame_pairs_);  // sorted and diffed in bulk
    return Reported::kEveryPair;
  }

  void reserve(std::size_t objects) override {
    live_.reserve_slots(objects);
    live_.reserve(objects);
  }

  // Invariant: live_ maps the live slots one-to-one to dense indices.
  bool validate() const override { return live_.valid(); }

  void debug_draw(DebugDraw& draw, std::span<const Id> /*ids*/) const override { one_shot_->debug_draw(draw); }

  OneShotComplete& one_shot() noexcept { return *one_shot_; }

  std::size_t memory_bytes() const override {
    return live_.memory_bytes() + found_.capacity() * sizeof(IndexPair) + frame_pairs_.capacity() * sizeof(Pair) +
           one_shot_->memory_bytes();
  }

 private:
  static constexpr std::size_t kBox = 0, kId = 1;

  std::unique_ptr<OneShotComplete> one_shot_;
  detail::SlotMap<Box3, Id> live_;  // dense live boxes and ids (one load per pair end, not two)
  std::vector<IndexPair> found_;
  std::vector<Pair> frame_pairs_;  // the frame's pairs as ids; swapped with the manager's old set
};

}  // namespace

std::unique_ptr<Algorithm> make_recompute(std::unique_ptr<OneShotComplete> one_shot) {
  return std::make_unique<Recompute>(std::move(one_shot));
}

namespace detail {

BoxPruner* held_pruner(Algorithm& algorithm) noexcept {
  auto* holder = dynamic_cast<PrunerHolder*>(&algorithm);
  if (auto* recompute = dynamic_cast<Recompute*>(&algorithm); recompute != nullptr)
    holder = dynamic_cast<PrunerHolder*>(&recompute->one_shot());
  return holder != nullptr ? &holder->pruner() : nullptr;
}

}  // namespace detail

}  // namespace sapling
