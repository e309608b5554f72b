// sap's single-pass batch update: Tracy, Buss and Woods 2009, section 3.2.1
// and Table 2. A frame's insertions, removals and moves are applied to each
// axis array in one pass, which copies the old array into the new one (the
// two swap, as merge_axis() does: the paper floats one array in a larger
// allocation instead) while it
//   - leaves out the removed boxes' entries (their records met in order),
//   - merges in the added boxes' entries, presorted (radix sort),
//   - gives each moved box's entries their new keys as they are read, and
//     insertion-sorts every kept entry backward into place, with the swap
//     rule of I.3 for the pairs of kept boxes: a min passing a max downward
//     starts an overlap on this axis (the pair is added if the boxes overlap
//     on the two other axes), a max passing a min stops one (the pair is
//     removed, if it can exist).
// Sweep sets, in the order entries are appended, do the rest (Table 2's
// "process sets"): SL holds the kept boxes open at the pass' point, SR the
// removed, SI the added. On the first axis, when a removed box closes, its
// pairs with SL and SR are removed, and when a kept box closes, its pairs
// with SR; on the last axis, when an added box closes, its pairs with SL and
// SI are added, and when a kept box closes, its pairs with SI. Each pair is
// met once, at its later close: no duplicates.
//
// Why this is exact. Appending in read order and sorting backward is an
// insertion sort of the read order, so the final order comes from it by
// adjacent swaps, each exchanging a min and a max of two boxes changing
// whether they interleave. Kept boxes: read order is the old sorted order,
// their pairs were exact for it, and the swaps apply the I.3 rule with
// every box at its new bounds ("remove" only where the pair existed before
// the frame or overlaps on the other axes now). Added boxes: on the last
// axis a pair with an added box is present iff the two interleave in the
// current order and overlap on the other axes; the sweep sets establish
// that when the pair's second box closes (an open box interleaves with the
// closing one), the swaps keep it; on earlier axes their swaps do nothing.
// Removed boxes never enter the new array, so no swap meets them; the
// first axis' read order is the old order, in which every pair of a
// removed box interleaves.
//
// Cost per axis: O(n) for the pass and the positions it rewrites, the
// swaps, the sort of the added entries, and per box closing, the open boxes
// of the sets it is checked against (on the first axis only with
// removals, on the last only with insertions).
#include <algorithm>

#include "algorithms/sap/sap_endpoints.hpp"
#include "algorithms/sap/sap_policy.hpp"
#include "algorithms/sap/sap_words.hpp"

namespace sapling::detail {
namespace {

using Entry = SapEndpoints::Entry;
using namespace sap_words;

// What the frame did to a slot (SapEndpoints::change_).
constexpr std::uint8_t kUnchanged = 0, kMoved = 1, kRemoved = 2, kAdded = 3;
enum Set : int { kRemovedSet = 0, kInserted = 1 };

bool overlap_on(const Box3& a, const Box3& b, int r) noexcept { return a.min[r] <= b.max[r] && b.min[r] <= a.max[r]; }

}  // namespace

// A box as the frame found it (an added one: as it comes).
const Box3& SapEndpoints::box_before(const LiveBoxes& live, Slot s) const noexcept {
  return change_[s] == kAdded ? live.box(s) : live.box_before(s);
}

std::uint64_t SapEndpoints::batch_update(const Batch& frame, const LiveBoxes& live, std::span<const Id> ids,
                                         PairManager& pairs) {
  const std::size_t slots = slots_;
  if (change_.size() < slots) {
    change_.resize(slots, kUnchanged);
    open_at_.resize(slots);
    open_bits_.resize((slots + 63) / 64);
  }
  const auto mark = [&](std::span<const Slot> list, std::uint8_t change) {
    for (const Slot s : list) change_[s] = change;
  };
  mark(frame.moved, kMoved);
  mark(frame.removed, kRemoved);
  mark(live.slots().subspan(frame.first_new), kAdded);
  for (const Box3& b : frame.moved_to) widen_extent(b);
  // The moved boxes' entries take their new keys where they stand, to be
  // sorted by the passes, and their new cross bounds on the axes whose
  // cross axis comes first (the bounds of the moment: see batch_axis()).
  for (std::size_t j = 0; j < frame.moved.size(); ++j) {
    const Slot s = frame.moved[j];
    const Box3& b = frame.moved_to[j];
    for (int k = 0; k < axes_; ++k) {
      const int c = cross_[k];
      for (const bool is_max : {false, true}) {
        Entry& e = axis_[k][pos_[k][2 * s + is_max]];
        e.word = make_endpoint(float_key(is_max ? b.max[k] : b.min[k]), s, is_max);
        if (c < k) e.cross_min = float_key(b.min[c]), e.cross_max = float_key(b.max[c]);
      }
    }
  }
  tag(frame.removed);  // their entries, left out by the passes, known by their cross bounds

  const bool removals = !frame.removed.empty(), insertions = frame.first_new < live.size();
  std::uint64_t swaps = 0;
  for (int k = 0; k < axes_; ++k) {
    const bool first = k == 0, last = k == axes_ - 1;
    if (first && removals) {
      swaps += batch_axis<true, false>(k, frame, live, ids, pairs);
    } else if (last && insertions) {
      swaps += batch_axis<false, true>(k, frame, live, ids, pairs);
    } else {
      swaps += batch_axis<false, false>(k, frame, live, ids, pairs);
    }
  }
  // The moved boxes' entries on axes whose cross axis came later still carry
  // the old cross bounds: brought up to date.
  for (int k = 0; k < axes_; ++k) {
    const int c = cross_[k];
    if (c < k) continue;
    for (std::size_t j = 0; j < frame.moved.size(); ++j) {
      const Slot s = frame.moved[j];
      for (const std::uint32_t i : {pos_[k][2 * s], pos_[k][2 * s + 1]}) {
        axis_[k][i].cross_min = float_key(frame.moved_to[j].min[c]);
        axis_[k][i].cross_max = float_key(frame.moved_to[j].max[c]);
      }
    }
  }
  for (const std::span<const Slot> list : {frame.moved, frame.removed, live.slots().subspan(frame.first_new)}) {
    for (const Slot s : list) change_[s] = kUnchanged;
  }
  current_ = true;
  return swaps;
}

// One axis' pass (Table 2): kRemovals on the first axis of a frame with
// removals, kInsertions on the last of a frame with insertions. SR and SI
// are small (the boxes removed or added that are open at one point); SL
// holds every kept box open there, so it is kept lazily: a kept box enters
// at its min, its bit in open_bits_ cleared at its max, and a scan drops
// the records of closed boxes; the scans run at the closes of removed or
// added boxes, and whenever SL has doubled.
// Positions are written once the axis is sorted, one per entry, not on
// every swap.
template <bool kRemovals, bool kInsertions>
std::uint64_t SapEndpoints::batch_axis(int k, const Batch& frame, const LiveBoxes& live, std::span<const Id> ids,
                                       PairManager& pairs) {
  const int c = cross_[k], r = 3 - k - c;
  const auto now = [&](Slot s) -> const Box3& { return live.box(s); };
  sort_new_entries(live, k, frame.first_new);
  for (std::vector<Open>& o : open_) o.clear();
  kept_open_.clear();
  std::size_t kept_limit = 64;

  const std::vector<Entry>& old = axis_[k];
  // SR and SI: exact, each box found through open_at_.
  const auto open = [&](Set set, const Entry& e) {
    open_at_[endpoint_owner(e.word)] = static_cast<std::uint32_t>(open_[set].size());
    open_[set].push_back({endpoint_owner(e.word), e.cross_min, e.cross_max});
  };
  const auto close = [&](Set set, Slot s) {
    std::vector<Open>& o = open_[set];
    const std::uint32_t at = open_at_[s];
    o[at] = o.back();
    open_at_[o[at].slot] = at;
    o.pop_back();
  };
  // SL: the records of closed kept boxes dropped.
  const auto is_open = [&](Slot a) { return (open_bits_[a / 64] >> (a % 64) & 1) != 0; };
  const auto compact_kept = [&] {
    std::size_t kept = 0;
    for (const Open& o : kept_open_) {
      if (is_open(o.slot)) kept_open_[kept++] = o;
    }
    kept_open_.resize(kept);
    kept_limit = std::max<std::size_t>(64, 2 * kept);
  };
  const auto close_kept = [&](Slot a) { open_bits_[a / 64] &= ~(std::uint64_t{1} << (a % 64)); };
  const auto open_kept = [&](const Entry& e) {
    const Slot a = endpoint_owner(e.word);
    open_bits_[a / 64] |= std::uint64_t{1} << (a % 64);
    kept_open_.push_back({a, e.cross_min, e.cross_max});
    if (kept_open_.size() > kept_limit) compact_kept();
  };
  // Box a (entry e, closing) against the open boxes of a set: each pair
  // removed where the boxes overlapped before the frame (first axis), or
  // added where they overlap now (last axis), on the axes but this one.
  // The cross axis from the records, the remaining one from the boxes.
  const auto against = [&](std::span<const Open> set, const Entry& e, bool remove, bool kept) {
    const Slot a = endpoint_owner(e.word);
    const Box3* box = nullptr;  // a's, looked up once needed
    for (const Open& o : set) {
      if (!(o.cross_min <= e.cross_max && e.cross_min <= o.cross_max) || (kept && !is_open(o.slot))) continue;
      if (box == nullptr) box = remove ? &box_before(live, a) : &now(a);
      if (remove) {
        if (overlap_on(*box, box_before(live, o.slot), r)) pairs.remove(ids[a], ids[o.slot]);
      } else if (overlap_on(*box, now(o.slot), r) && filter_.accepts(a, o.slot)) {
        pairs.add(ids[a], ids[o.slot]);
      }
    }
  };
  // The I.3 rule for kept entry e passing entry p downward, on the bounds
  // of the moment: new on the axes before k, old on those after (the cross
  // bounds the entries carry are of the moment too).
  const auto at_moment = [&](Slot s) -> const Box3& { return r < k ? now(s) : box_before(live, s); };
  const auto swap_rule = [&](const Entry& e, const Entry& p) {
    const Slot a = endpoint_owner(e.word), b = endpoint_owner(p.word);
    if (!kInsertions && change_[b] == kAdded) return;  // an added box's pairs are the last axis'
    if (!overlap_on(at_moment(a), at_moment(b), r)) return;
    if (endpoint_kind(e.word) == 1) {
      pairs.remove(ids[a], ids[b]);  // a's max below b's min: they stop overlapping
    } else if (filter_.accepts(a, b)) {
      pairs.add(ids[a], ids[b]);  // a's min below b's max: they start
    }
  };

  rebuilt_.resize(2 * live.size() + 2);
  const Entry* const in = old.data();
  const Entry* const fresh = pending_.data();
  Entry* const out = rebuilt_.data();
  const std::size_t last = old.size() - 1, m = pending_.size();  // old[last]: the high sentinel
  out[0] = in[0];
  std::size_t i = 1, j = 0, to = 1;
  std::uint64_t swaps = 0;
  for (;; ++i) {
    Entry e = in[i];
    if (i != last) {
      const Slot a = endpoint_owner(e.word);
      if (e.cross_min > e.cross_max) {  // a removed box's, left out
        if constexpr (kRemovals) {
          const Box3& gone = live.box_before(a);
          e.cross_min = float_key(gone.min[c]), e.cross_max = float_key(gone.max[c]);
          if (endpoint_kind(e.word) == 0) {
            open(kRemovedSet, e);
          } else {
            close(kRemovedSet, a);
            against(kept_open_, e, true, true);
            against(open_[kRemovedSet], e, true, false);
          }
        }
        continue;
      }
      if constexpr (kRemovals) {  // on the old bounds, as read
        if (endpoint_kind(e.word) == 0) {
          open_kept(e);
        } else {
          close_kept(a);
          against(open_[kRemovedSet], e, true, false);
        }
      }
    }
    // The added entries that come before e, appended as they are.
    for (; j < m && rank_less(fresh[j].word, e.word); ++j) {
      out[to++] = fresh[j];
      if constexpr (kInsertions) {
        if (endpoint_kind(fresh[j].word) == 0) {
          open(kInserted, fresh[j]);
        } else {
          close(kInserted, endpoint_owner(fresh[j].word));
          against(kept_open_, fresh[j], false, true);
          against(open_[kInserted], fresh[j], false, false);
        }
      }
    }
    if (i == last) break;
    if constexpr (kInsertions) {
      if (endpoint_kind(e.word) == 0) {
        open_kept(e);
      } else {
        close_kept(endpoint_owner(e.word));
        against(open_[kInserted], e, false, false);
      }
    }
    // e appended, then sorted backward into place.
    // Only a passed endpoint of the other kind whose box overlaps e's on
    // the cross axis can flip a pair.
    std::size_t t = to++;
    const std::uint32_t other = endpoint_kind(e.word) ^ 1;
    while (rank_less(e.word, out[t - 1].word)) {
      const Entry p = out[t - 1];
      out[t] = p;
      --t;
      ++swaps;
      if (kind_and_cross_overlap(p, other, e.cross_min, e.cross_max)) [[unlikely]]
        swap_rule(e, p);
    }
    out[t] = e;
  }
  out[to] = in[last];
  rebuilt_.resize(to + 1);
  std::uint32_t* const pos = pos_[k].data();
  for (std::size_t t = 1; t < to; ++t) pos[pos_index(out[t].word)] = static_cast<std::uint32_t>(t);
  axis_[k].swap(rebuilt_);
  return swaps;
}

}  // namespace sapling::detail
