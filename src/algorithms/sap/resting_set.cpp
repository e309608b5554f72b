// sap's resting set (resting_set.hpp): the bookkeeping of resting and
// active boxes, and the pairing of a frame's changed boxes against them.
#include "algorithms/sap/resting_set.hpp"

#include <algorithm>
#include <cmath>

#include "detail/reserve.hpp"

namespace sapling::detail {
namespace {

// state_ values: what a slot is, in the low two bits,
constexpr std::uint8_t kGone = 0;     // a free slot
constexpr std::uint8_t kResting = 1;  // in the resting set, with its current bounds
constexpr std::uint8_t kActive = 2;   // moved or added since the resting set was laid out
constexpr std::uint8_t kChanged = 3;  // kActive, and moved or added this frame (during a frame's pairing)
constexpr std::uint8_t kKind = 3;
// and for a slot not resting, whether no prepared index names it
// (resting_slot_): an active one may then take a free entry in place
// (settle()). A slot is named by one index at most.
constexpr std::uint8_t kUnnamed = 4;

constexpr bool is_active(std::uint8_t state) { return (state & kKind) == kActive; }

}  // namespace

void RestingSet::track(const FrameOps& ops) {
  std::size_t slots = state_.size();
  for (const Slot s : ops.added) slots = std::max(slots, std::size_t{s} + 1);
  if (slots > state_.size()) {
    reserve_geometric(state_, slots);
    state_.resize(slots, kGone | kUnnamed);
  }
  for (const Slot s : ops.removed) {
    if (state_[s] == kResting) ++dead_;
    state_[s] = kGone | (state_[s] & kUnnamed);
  }
  if (!ops.removed.empty()) std::erase_if(active_, [&](Slot s) { return !is_active(state_[s]); });
  for (const Slot s : ops.moved) {
    if (state_[s] != kResting) continue;
    ++dead_;
    state_[s] = kActive;
    active_.push_back(s);
  }
  for (const Slot s : ops.added) {
    state_[s] = kActive | (state_[s] & kUnnamed);
    active_.push_back(s);
  }
}

void RestingSet::mark_changed(std::span<const Slot> slots) {
  for (const Slot s : slots) state_[s] = kChanged | (state_[s] & kUnnamed);
}

void RestingSet::unmark_changed(std::span<const Slot> slots) {
  for (const Slot s : slots) state_[s] = kActive | (state_[s] & kUnnamed);
}

// A box that was resting until this frame met its own entry (laid out with
// `laid_out`, its box before the frame): the entry is freed in place, and
// the box, named by no index now, may settle again.
void RestingSet::retire(std::uint32_t index, Slot s, const Box3& laid_out) {
  if (!pruner_.free_prepared(index, laid_out)) return;  // an entry older than the frame: it stays until the next layout
  resting_slot_[index] = kNoSlot;
  state_[s] |= kUnnamed;
  --dead_;
  ++freed_;
}

// The active boxes not changed this frame and named by no index take free
// entries near where they sort, in place (BoxPruner::insert_prepared()),
// while the changed boxes are marked kChanged, before the frame's search of
// the grid (their pairs stand: they did not move): a box at rest again joins
// the resting set at once, where the freed entries of boxes that woke lie,
// rather than waiting among the active ones for the next layout. One that
// finds none stays active, named from now on, so that it is not tried
// again before that layout.
void RestingSet::settle(const LiveBoxes& live) {
  // A box that finds no free entry near scans a few thousand: the tries
  // are bounded by the free entries (a burst of additions into a set with
  // few waits, unnamed still, for later frames or the next layout).
  const std::size_t tries = 2 * pruner_.free_entries() + 16;
  settling_.clear();
  for (const Slot s : active_) {
    if (settling_.size() == tries || pruner_.free_entries() == 0) break;
    if (state_[s] == (kActive | kUnnamed) && live.contains(s)) settling_.push_back(s);
  }
  // Each insertion reads at random places (the box, then where it sorts in
  // the grid's arrays): the reads run ahead in stages, as in
  // update_changed().
  // In sets small enough to stay in a core's caches, no staging.
  constexpr std::size_t kAhead = 4;
  const std::size_t n = settling_.size();
  const std::size_t ahead = live.size() < (std::size_t{1} << 16) ? 0 : n;
  const auto box_of = [&](std::size_t k) -> const Box3& { return live.box(settling_[k]); };
  for (std::size_t k = 0; k < n; ++k) {
    if (k + 3 * kAhead < ahead) live.prefetch_index(settling_[k + 3 * kAhead]);
    if (k + 2 * kAhead < ahead) __builtin_prefetch(&box_of(k + 2 * kAhead));
    if (k + kAhead < ahead) pruner_.prefetch_insertion(box_of(k + kAhead));
    const Slot s = settling_[k];
    std::uint32_t index = 0;
    if (!pruner_.insert_prepared(box_of(k), index)) {
      state_[s] = kActive;
      continue;
    }
    if (index == resting_slot_.size()) {
      resting_slot_.push_back(s);
    } else {
      resting_slot_[index] = s;
    }
    state_[s] = kResting;
    freed_ -= freed_ != 0;
    ++settled_;
  }
  if (n != 0) std::erase_if(active_, [&](Slot s) { return state_[s] == kResting; });
}

// After a layout only the resting boxes are named.
void RestingSet::unname_the_rest() {
  for (std::uint8_t& state : state_) {
    if (state != kResting) state |= kUnnamed;
  }
  freed_ = 0;
}

// Every pair a changed box had is between its box before the frame and the
// box before the frame of a resting box (its grid entry), of an active one
// (its live box, not yet moved), or of another changed box; pairs of boxes
// that are stale in the grid are met through the active list or among the
// changed boxes. One search each, the way pair_changed() finds the pairs
// that come.
bool RestingSet::drop_pairs(std::span<const Slot> removed, std::span<const Slot> moved, const LiveBoxes& live,
                            std::span<const Id> ids, PairManager& pairs, std::vector<IndexPair>& found) {
  query_slots_.clear();
  query_boxes_.clear();
  for (const std::span<const Slot> list : {removed, moved}) {
    for (const Slot s : list) {
      query_slots_.push_back(s);
      query_boxes_.push_back(live.box_before(s));
    }
  }
  found.clear();
  among_.clear();
  if (!pruner_.bipartite_prepared(query_boxes_, found, among_)) return false;
  for (const IndexPair& p : found) {
    const Slot t = resting_slot_[p.j];
    if (t == kNoSlot) continue;
    if (state_[t] == kResting) {
      pairs.remove(ids[query_slots_[p.i]], ids[t]);
    } else if (t == query_slots_[p.i]) {
      retire(p.j, t, live.box_before(t));
    }
  }
  for (const IndexPair& p : among_) pairs.remove(ids[query_slots_[p.i]], ids[query_slots_[p.j]]);
  // The other active boxes, at their boxes before the frame: not the moved
  // ones (met among the changed boxes, and a box is no pair of its own).
  mark_changed(moved);
  gather_idle_active(live);
  unmark_changed(moved);
  found.clear();
  pruner_.bipartite(query_boxes_, other_boxes_, found);
  for (const IndexPair& p : found) pairs.remove(ids[query_slots_[p.i]], ids[other_slots_[p.j]]);
  return true;
}

namespace {

// Whether a box moved from `from` to `to` searches with their union (one
// search box no more than about twice its size on any axis) or with both.
bool searches_with_union(const Box3& from, const Box3& to) {
  for (int k = 0; k < 3; ++k) {
    const float size = std::max(to.max[k] - to.min[k], from.max[k] - from.min[k]);
    if (!(std::abs(to.min[k] - from.min[k]) <= size)) return false;  // NaN-free: both boxes valid; inf: apart
  }
  return true;
}

}  // namespace

bool RestingSet::update_changed(std::span<const Slot> removed, std::span<const Slot> moved, std::span<const Slot> added,
                                const LiveBoxes& live, std::span<const Id> ids, PairManager& pairs,
                                std::vector<IndexPair>& found) {
  search_boxes_.clear();
  search_now_.clear();
  search_slots_.clear();
  search_live_.clear();
  const auto search = [&](Slot s, const Box3& box, const Box3* now) {
    search_boxes_.push_back(box);
    search_slots_.push_back(s);
    search_live_.push_back(now != nullptr);
    search_now_.push_back(now != nullptr ? *now : box);
  };
  for (const Slot s : removed) search(s, live.box_before(s), nullptr);
  for (const Slot s : moved) {
    const Box3& from = live.box_before(s);
    const Box3& to = live.box(s);
    if (searches_with_union(from, to)) {
      search(s, enclosing(from, to), &to);
    } else {
      search(s, from, &to);
      search(s, to, &to);
    }
  }
  for (const Slot s : added) search(s, live.box(s), &live.box(s));
  // The idle active boxes settle first: the search then meets them in the
  // grid, and few remain to be paired apart.
  mark_changed(moved);
  mark_changed(added);
  settle(live);
  found.clear();
  among_.clear();
  if (!pruner_.bipartite_prepared(search_boxes_, found, among_)) {
    unmark_changed(moved);
    unmark_changed(added);
    return false;
  }

  // A pair met is set by the boxes now; met twice (a box searching with
  // both of its boxes), it is set alike twice.
  const auto set = [&](std::size_t i, Slot t, const Box3& t_box) {
    const Slot s = search_slots_[i];
    if (search_live_[i] != 0 && overlaps(search_now_[i], t_box) && filter_.accepts(s, t)) {
      pairs.add(ids[s], ids[t]);
    } else {
      pairs.remove(ids[s], ids[t]);
    }
  };
  // Resting entries of boxes since moved or removed are stale. Each pair
  // reads at random places one after another (the entry's slot, then the
  // slot's state, id and dense index, then its box); the reads run ahead
  // in stages so that their waits overlap.
  // In sets small enough to stay in a core's caches (below 2^16 boxes)
  // the staging costs more than it saves.
  constexpr std::size_t kAhead = 8;
  const std::size_t ahead = live.size() < (std::size_t{1} << 16) ? 0 : found.size();
  const auto slot_of = [&](std::size_t n) { return resting_slot_[found[n].j]; };
  for (std::size_t n = 0; n < found.size(); ++n) {
    if (n + 3 * kAhead < ahead) __builtin_prefetch(&resting_slot_[found[n + 3 * kAhead].j]);
    if (n + 2 * kAhead < ahead) {
      if (const Slot u = slot_of(n + 2 * kAhead); u != kNoSlot) {
        __builtin_prefetch(&state_[u]);
        __builtin_prefetch(&ids[u]);
        live.prefetch_index(u);
      }
    }
    if (n + kAhead < ahead) {
      const Slot u = slot_of(n + kAhead);
      if (u != kNoSlot && state_[u] == kResting) live.prefetch_box(u);
    }
    const Slot t = slot_of(n);
    if (t == kNoSlot) continue;
    if (state_[t] == kResting) {
      set(found[n].i, t, live.box(t));
    } else if (t == search_slots_[found[n].i]) {
      retire(found[n].j, t, live.box_before(t));
    }
  }
  for (const IndexPair& p : among_) {
    const Slot t = search_slots_[p.j];
    if (search_slots_[p.i] == t) continue;  // a box's own two search boxes
    if (search_live_[p.j] != 0) {
      set(p.i, t, search_now_[p.j]);
    } else {
      pairs.remove(ids[search_slots_[p.i]], ids[t]);
    }
  }
  gather_idle_active(live);
  found.clear();
  pruner_.bipartite(search_boxes_, other_boxes_, found);
  for (const IndexPair& p : found) set(p.i, other_slots_[p.j], other_boxes_[p.j]);
  unmark_changed(moved);
  unmark_changed(added);
  return true;
}

// The changed boxes (C) are found anew against the resting set (its grid
// laid out already: only C is sorted), among themselves, and against the
// other active boxes.
void RestingSet::pair_changed(std::span<const Slot> moved, std::span<const Slot> added, bool prepare,
                              const LiveBoxes& live, std::span<const Id> ids, PairManager& pairs,
                              std::vector<IndexPair>& found) {
  query_slots_.clear();
  query_boxes_.clear();
  for (const std::span<const Slot> list : {moved, added}) {
    for (const Slot s : list) {
      state_[s] = kChanged | (state_[s] & kUnnamed);
      query_slots_.push_back(s);
      query_boxes_.push_back(live.box(s));
    }
  }
  if (prepare) {
    this->prepare(live);
  } else {
    settle(live);  // first: the search then meets the boxes settled
  }
  gather_idle_active(live);

  const auto add_pairs = [&](std::span<const Slot> first, std::span<const Slot> second) {
    for (const IndexPair& p : found) {
      if (filter_.accepts(first[p.i], second[p.j])) pairs.add(ids[first[p.i]], ids[second[p.j]]);
    }
  };
  found.clear();
  among_.clear();
  const bool prepared = pruner_.bipartite_prepared(query_boxes_, found, among_);
  const std::size_t used = std::max(found.size(), among_.size());  // the two lists trade places below
  if (prepared) {
    for (const IndexPair& p : found) {  // resting entries of boxes since moved or removed are stale
      const Slot t = resting_slot_[p.j];
      if (t != kNoSlot && state_[t] == kResting && filter_.accepts(query_slots_[p.i], t)) {
        pairs.add(ids[query_slots_[p.i]], ids[t]);
      }
    }
  } else {
    // Boxes too large for the resting grid: pair them with everything the plain way.
    for (const Slot s : resting_slot_) {
      if (s == kNoSlot || state_[s] != kResting) continue;
      other_slots_.push_back(s);
      other_boxes_.push_back(live.box(s));
    }
  }
  found.clear();
  if (prepared) {
    found.swap(among_);  // the changed boxes among themselves, from the same pass
  } else {
    pruner_.complete(query_boxes_, found);
  }
  add_pairs(query_slots_, query_slots_);
  found.clear();
  pruner_.bipartite(query_boxes_, other_boxes_, found);
  add_pairs(query_slots_, other_slots_);
  unmark_changed(query_slots_);
  // Room a frame with many more pairs left (a mass insertion's, a burst's)
  // goes back once the frames use less than half of it.
  give_back_unused(found, std::max(used, found.size()));
  give_back_unused(among_, used);
}

// Lays out every live box not changed this frame as the new resting set;
// the changed ones become the whole active list. Where the grid still suits
// the boxes, the entries still resting stay and the other active boxes are
// merged in (BoxPruner::update_prepared()), at a fraction of the cost of
// laying out all again.
void RestingSet::prepare(const LiveBoxes& live, std::vector<IndexPair>* pairs) {
  if (pairs == nullptr && merge_active(live)) return;
  // Nothing changed this frame (a mass insertion): the live boxes
  // themselves, in dense order, with no copy.
  const bool all = query_slots_.empty();
  resting_slot_.clear();
  reserve_geometric(resting_slot_, live.size());
  if (all) {
    resting_slot_.assign(live.slots().begin(), live.slots().end());
    for (const Slot s : resting_slot_) state_[s] = kResting;
  } else {
    other_boxes_.clear();
    reserve_geometric(other_boxes_, live.size());
    for (std::size_t d = 0; d < live.size(); ++d) {
      const Slot s = live.slot(d);
      if ((state_[s] & kKind) == kChanged) continue;
      state_[s] = kResting;
      resting_slot_.push_back(s);
      other_boxes_.push_back(live.box_at(d));
    }
  }
  const std::span<const Box3> boxes = all ? live.dense() : std::span<const Box3>(other_boxes_);
  if (pairs != nullptr) {
    pruner_.prepare(boxes, *pairs);
  } else {
    pruner_.prepare(boxes);
  }
  unname_the_rest();
  reset_active();
}

// The active boxes not changed this frame, and their boxes, into
// other_slots_ and other_boxes_ (not the frame's additions while they are
// not live yet: drop_pairs()).
void RestingSet::gather_idle_active(const LiveBoxes& live) {
  other_slots_.clear();
  other_boxes_.clear();
  for (const Slot s : active_) {
    if (!is_active(state_[s]) || !live.contains(s)) continue;
    other_slots_.push_back(s);
    other_boxes_.push_back(live.box(s));
  }
}

bool RestingSet::merge_active(const LiveBoxes& live) {
  keep_.resize(resting_slot_.size());
  for (std::size_t i = 0; i < resting_slot_.size(); ++i) {
    const Slot s = resting_slot_[i];
    keep_[i] = s != kNoSlot && state_[s] == kResting;
  }
  gather_idle_active(live);
  if (!pruner_.update_prepared(keep_, other_boxes_, merged_at_)) return false;
  for (std::size_t i = 0; i < resting_slot_.size(); ++i) {
    if (keep_[i] == 0) resting_slot_[i] = kNoSlot;
  }
  resting_slot_.resize(pruner_.prepared_size(), kNoSlot);
  for (std::size_t k = 0; k < other_slots_.size(); ++k) {
    resting_slot_[merged_at_[k]] = other_slots_[k];
    state_[other_slots_[k]] = kResting;
  }
  unname_the_rest();
  reset_active();
  if (keep_.size() >= kKeptRoom) {
    free_storage(keep_);  // a byte per prepared index, wanted again at the next merge
    // The pruner's buffers and ours were sized for the idle active boxes
    // merged; the next frames search with about this frame's changed boxes.
    if (other_slots_.size() > 8 * query_slots_.size()) {
      pruner_.release_buffers();
      free_storage(other_slots_);
      free_storage(other_boxes_);
      free_storage(merged_at_);
    }
  }
  ++merges_;
  return true;
}

// After a layout the active list is the frame's changed boxes alone; the
// room it had (a mass insertion's every box: 4 bytes each) goes.
void RestingSet::reset_active() {
  active_.assign(query_slots_.begin(), query_slots_.end());
  if (active_.capacity() >= kKeptRoom && active_.capacity() > 2 * active_.size()) active_.shrink_to_fit();
  dead_ = 0;
}

void RestingSet::lay_out_all(const LiveBoxes& live) {
  query_slots_.clear();  // nothing changed: prepare() keeps every box
  prepare(live);
}

// Every live box is laid out in dense order, so a prepared index is the
// box's dense index.
void RestingSet::lay_out_all(const LiveBoxes& live, std::vector<IndexPair>& pairs) {
  query_slots_.clear();
  prepare(live, &pairs);
}

bool RestingSet::forget_dead_grid() {
  if (resting_slot_.empty()) return false;
  for (const Slot s : resting_slot_) {
    if (s != kNoSlot && state_[s] == kResting) return false;  // in a world at rest, the first entry
  }
  free_storage(resting_slot_);
  unname_the_rest();  // no index names a slot now
  dead_ = 0;
  pruner_.forget_prepared();
  return true;
}

std::size_t RestingSet::memory_bytes() const {
  return state_.capacity() + keep_.capacity() + search_live_.capacity() +
         merged_at_.capacity() * sizeof(std::uint32_t) +
         (active_.capacity() + resting_slot_.capacity() + query_slots_.capacity() + other_slots_.capacity() +
          search_slots_.capacity() + settling_.capacity()) *
             sizeof(Slot) +
         (query_boxes_.capacity() + other_boxes_.capacity() + search_boxes_.capacity() + search_now_.capacity()) *
             sizeof(Box3) +
         among_.capacity() * sizeof(IndexPair);
}

// Free slots kGone, live ones kResting or kActive; active_ lists the kActive
// slots once each; every prepared index is a kResting slot's, counted dead
// or free (kNoSlot, left by a merge or freed in place); no index names an
// unnamed slot, nor two indices one slot.
bool RestingSet::validate(const LiveBoxes& live) const {
  std::size_t resting = 0, active = 0, free = 0;
  for (Slot s = 0; s < state_.size(); ++s) {
    const bool is_live = live.contains(s);
    if (is_live != (state_[s] == kResting || is_active(state_[s]))) return false;
    if (state_[s] == (kResting | kUnnamed) || (state_[s] & kKind) == kChanged) return false;
    resting += state_[s] == kResting;
    active += is_active(state_[s]);
  }
  std::vector<std::uint8_t> named(state_.size(), 0);
  for (const Slot s : resting_slot_) {
    if (s == kNoSlot) {
      ++free;
    } else if (s >= state_.size() || (state_[s] & kUnnamed) != 0 || named[s]++ != 0) {
      return false;
    }
  }
  if (active != active_.size() || resting + dead_ + free != resting_slot_.size()) return false;
  if (resting_slot_.size() != pruner_.prepared_size()) return false;
  for (const Slot s : active_) {
    if (s >= state_.size() || !is_active(state_[s])) return false;
  }
  return true;
}

}  // namespace sapling::detail
