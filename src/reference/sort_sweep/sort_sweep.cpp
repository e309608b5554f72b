// sort-sweep: the classic sort and sweep of blog-sap-for-a-physics-engine
// ("The algorithm") and blog-broad-phase-sap-events, the baseline the other
// algorithms are measured against. Every frame with changes:
//   1. sort the live boxes by min.x. The order is kept from the previous
//      frame, so when boxes move a little (temporal coherence) an insertion
//      sort finishes in O(n + swaps). Teleports or mass insertion would make
//      it quadratic, so after a budget of shifts it gives up for std::sort.
//   2. sweep the sorted list keeping an "active list" of boxes whose x
//      interval may still reach the current one, testing y and z on each.
// Pairs are recomputed each frame and diffed by the pair manager.
//
// Invariants: after update(), order_ lists every live slot once, sorted by
// (min.x, slot), so the order depends on the current boxes only, not on the
// history that led to them (validate() checks it); in the sweep, a box whose
// max.x is below the current min.x can reach no later box either and leaves
// the active list, so every box left in it overlaps the current one on x.
//
// Cost: O(n + shifts) for the sort, O(n log n) at worst (the shift budget is
// 8n + 64); O(n + sum of active-list lengths) for the sweep: good when boxes
// are spread along x, quadratic when they are all stacked over one x
// interval (a flat world lying along x, a tower).
//
// Choose it as a small, readable baseline, or for modest scenes spread
// along x; box-pruning is an order of magnitude faster on every measured
// scene (docs/algorithms/sort-sweep.md).
#include <algorithm>

#include "algorithms/builtin.hpp"
#include "detail/settings.hpp"

namespace sapling::detail {
namespace {

class SortSweep final : public Algorithm {
 public:
  Reported update(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) override {
    for (const Slot s : ops.removed) live_[s] = 0;
    for (std::size_t k = 0; k < ops.moved.size(); ++k) boxes_[ops.moved[k]] = ops.moved_boxes[k];
    for (std::size_t k = 0; k < ops.added.size(); ++k) {
      const Slot s = ops.added[k];
      if (s >= boxes_.size()) {
        boxes_.resize(s + 1);
        live_.resize(s + 1, 0);
      }
      boxes_[s] = ops.added_boxes[k];
      live_[s] = 1;
    }
    refresh_order(ops);
    sort_order();
    sweep(ids, pairs, ops.filter);
    return Reported::kEveryPair;
  }

  // Invariant after update(): order_ lists every live slot once, with its
  // current min.x, sorted by (min.x, slot).
  bool validate() const override {
    std::vector<std::uint8_t> seen(live_.size(), 0);
    for (std::size_t k = 0; k < order_.size(); ++k) {
      const Entry& e = order_[k];
      if (e.slot >= live_.size() || !live_[e.slot] || seen[e.slot]++) return false;
      if (e.min_x != boxes_[e.slot].min[0] || (k > 0 && !(order_[k - 1] < e))) return false;
    }
    return static_cast<std::size_t>(std::count(live_.begin(), live_.end(), 1)) == order_.size();
  }

  std::size_t memory_bytes() const override {
    return boxes_.capacity() * sizeof(Box3) + live_.capacity() + order_.capacity() * sizeof(Entry) +
           active_.capacity() * sizeof(Slot);
  }

 private:
  struct Entry {
    float min_x;
    Slot slot;
    // Ties broken by slot: the order depends on the current boxes only, not
    // on the history that led to them.
    bool operator<(const Entry& o) const { return min_x < o.min_x || (min_x == o.min_x && slot < o.slot); }
  };

  // Drops removed objects, refreshes the keys, appends the new objects;
  // the previous frame's order is kept.
  void refresh_order(const FrameOps& ops) {
    std::size_t kept = 0;
    for (const Entry& e : order_) {
      if (live_[e.slot]) order_[kept++] = Entry{boxes_[e.slot].min[0], e.slot};
    }
    order_.resize(kept);
    for (const Slot s : ops.added) order_.push_back(Entry{boxes_[s].min[0], s});
  }

  void sort_order() {
    // Insertion sort while the order is nearly right; the budget keeps the
    // worst case at O(n log n).
    std::size_t budget = 8 * order_.size() + 64;
    for (std::size_t i = 1; i < order_.size(); ++i) {
      const Entry e = order_[i];
      std::size_t j = i;
      while (j > 0 && e < order_[j - 1]) {
        order_[j] = order_[j - 1];
        --j;
      }
      order_[j] = e;
      const std::size_t shifts = i - j;
      if (shifts > budget) {
        std::sort(order_.begin(), order_.end());
        return;
      }
      budget -= shifts;
    }
  }

  void sweep(std::span<const Id> ids, PairManager& pairs, PairFilter filter) {
    pairs.remove_all();
    active_.clear();
    for (const Entry& e : order_) {
      const Box3& b = boxes_[e.slot];
      for (std::size_t k = 0; k < active_.size();) {
        const Box3& o = boxes_[active_[k]];
        if (o.max[0] < b.min[0]) {  // o ends before b and every later box
          active_[k] = active_.back();
          active_.pop_back();
          continue;
        }
        if (o.min[1] <= b.max[1] && b.min[1] <= o.max[1] && o.min[2] <= b.max[2] && b.min[2] <= o.max[2] &&
            filter.accepts(active_[k], e.slot)) {
          pairs.add(ids[active_[k]], ids[e.slot]);
        }
        ++k;
      }
      active_.push_back(e.slot);
    }
  }

  std::vector<Box3> boxes_;         // by slot
  std::vector<std::uint8_t> live_;  // by slot
  std::vector<Entry> order_;        // live slots by (min.x, slot)
  std::vector<Slot> active_;        // the sweep's active list
};

}  // namespace

std::unique_ptr<Algorithm> make_sort_sweep(const Options& options) {
  no_settings(options);
  return std::make_unique<SortSweep>();
}

}  // namespace sapling::detail
