// BroadPhase::validate(): every invariant of the broad phase (the object
// table's, the static tree's, the pair manager's, the algorithm's), and the
// pairs held checked against an oracle that shares no code with any
// algorithm (detail/pair_oracle.hpp) under the pair rule (filter.hpp).
#include <algorithm>

#include "core/broad_phase/impl.hpp"
#include "detail/pair_oracle.hpp"

namespace sapling {

bool BroadPhase::validate() const {
  const Impl& m = *impl_;
  const detail::ObjectTable& objects = m.objects;
  if (!objects.validate()) return false;
  for (const Pair& p : pairs()) {  // every pair joins two live objects
    if (!contains(p.a) || !contains(p.b)) return false;
  }
  if (m.staged.refiltered.size() != m.staged.refilters.size()) return false;
  // After a failed frame the algorithm's and the static tree's state is
  // lost until the next update().
  if (m.remake_algorithm) return m.pairs.validate();
  // The tree holds exactly the live static objects.
  const detail::AabbTree* tree = m.statics.tree();
  std::size_t statics = 0;
  for (Slot s = 0; s < objects.slots(); ++s) {
    const bool live_static = objects.states[s] == detail::SlotState::kLive && objects.is_static(s);
    statics += live_static;
    if (tree != nullptr && live_static != tree->contains(s)) return false;
  }
  if (statics != (tree == nullptr ? 0 : tree->size())) return false;
  if (tree != nullptr && !tree->validate()) return false;
  return m.holds_the_pairs_there_are() && m.pairs.validate() && m.algorithm->validate();
}

// Whether the pair manager holds exactly the pairs of the pair rule among
// the live objects: no pair of two static objects, none a filter refuses.
bool BroadPhase::Impl::holds_the_pairs_there_are() const {
  std::vector<Slot> live;
  std::vector<Box3> boxes;
  for (Slot s = 0; s < objects.slots(); ++s) {
    if (objects.states[s] == detail::SlotState::kLive) live.push_back(s), boxes.push_back(objects.boxes[s]);
  }
  std::vector<Pair> expected;
  detail::for_each_overlapping_pair(boxes, [&](std::uint32_t i, std::uint32_t j) {
    const Slot a = live[i], b = live[j];
    if (may_pair(objects.filter_of(a), objects.motion_of(a), objects.filter_of(b), objects.motion_of(b))) {
      expected.push_back(make_pair(objects.ids[a], objects.ids[b]));
    }
  });
  std::vector<Pair> actual(pairs.pairs().begin(), pairs.pairs().end());
  std::sort(actual.begin(), actual.end());
  std::sort(expected.begin(), expected.end());
  return expected == actual;
}

}  // namespace sapling
