// sap's endpoint arrays (sap_endpoints.hpp): the walk, the merge, the
// scans for new boxes' pairs, the rebuild and the checks. Terdiman 2007,
// part I; the invariants are listed in sap.cpp and checked in validate().
#include "algorithms/sap/sap_endpoints.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <utility>

#include "algorithms/sap/sap_policy.hpp"
#include "algorithms/sap/sap_words.hpp"
#include "detail/float_bounds.hpp"
#include "detail/gallop.hpp"
#include "detail/radix_sort.hpp"
#include "detail/reserve.hpp"
#include "sapling/float_key.hpp"

namespace sapling::detail {
namespace {

using Entry = SapEndpoints::Entry;
using namespace sap_words;

/// Whether entry e's cross bounds overlap [lo, hi], either kind, with one
/// branch (half the entries of a scan lie below lo, half above hi: two
/// branches would mispredict).
inline bool cross_overlap(const Entry& e, std::uint32_t lo, std::uint32_t hi) noexcept {
  return (((std::uint64_t{e.cross_max} - lo) | (std::uint64_t{hi} - e.cross_min)) >> 63) == 0;
}

// ---------------------------------------------------------------------------
// Sorting new entries.

/// Sorts entries by key, stably: given all mins before all maxes, the
/// result is in rank order. LSD radix sort, 11-bit digits; insertion sort
/// for a few items.
void sort_by_key(std::vector<Entry>& items, std::vector<Entry>& scratch) {
  constexpr detail::RadixDigits kDigits{11, 3, 64};
  std::array<std::uint32_t, kDigits.counts()> counts;
  detail::radix_sort(
      items, scratch, [](const Entry& e) { return endpoint_key(e.word); }, kDigits, counts.data());
}

}  // namespace

// ---------------------------------------------------------------------------
// Moves (I.3).

// Walks the moved boxes one by one, each axis in turn.
SapEndpoints::Walked SapEndpoints::walk_moves(std::span<const Slot> moved, std::span<const Box3> boxes, double budget,
                                              LiveBoxes& live, std::span<const Id> ids, PairManager& pairs) {
  const std::size_t m = moved.size();
  Walked w;
  while (w.done < m) {
    const Slot a = moved[w.done];
    const Box3& box = boxes[w.done];
    w.displacement += moved_by(live.box(a), box);
    live.move(w.done);
    widen_extent(box);
    if (axes_ == 3) {
      w.swaps += move_on_axis<0, 1>(a, box, ids, pairs) + move_on_axis<1, 2>(a, box, ids, pairs) +
                 move_on_axis<2, 0>(a, box, ids, pairs);
    } else {
      w.swaps += move_on_axis<0, 1>(a, box, ids, pairs) + move_on_axis<1, 0>(a, box, ids, pairs);
    }
    ++w.done;
    if (walk_over_budget(double(w.swaps), w.done, m, budget)) break;
  }
  return w;
}

// Moves box a's two endpoints on axis K (cross axis C) to the box's new
// bounds. The one that moves outward goes first, so the interval stays
// valid throughout.
template <int K, int C>
std::uint64_t SapEndpoints::move_on_axis(Slot a, const Box3& box, std::span<const Id> ids, PairManager& pairs) {
  const std::uint32_t cross_min = float_key(box.min[C]), cross_max = float_key(box.max[C]);
  const Entry lo{make_endpoint(float_key(box.min[K]), a, false), cross_min, cross_max};
  const Entry hi{make_endpoint(float_key(box.max[K]), a, true), cross_min, cross_max};
  const std::uint32_t old_min_key = endpoint_key(axis_[K][pos_[K][2 * a]].word);
  if (endpoint_key(lo.word) > old_min_key)
    return walk<K, C, true>(a, hi, ids, pairs) + walk<K, C, false>(a, lo, ids, pairs);
  return walk<K, C, false>(a, lo, ids, pairs) + walk<K, C, true>(a, hi, ids, pairs);
}

// Moves one endpoint of box a on axis K to its new place, swapping it past
// its neighbours (I.3, "update rules"), and returns the swaps. On each swap
// with an endpoint of the other kind, of box b:
//   going down, a min passes a max: a and b start overlapping on K -> add
//               a max passes a min: they stop                      -> remove
//   going up,   a max passes a min: start -> add; a min passes a max: stop -> remove
// provided a and b overlap on the two other axes: on the cross axis C by the
// keys b's entry carries, on the remaining axis R by endpoint indices, read
// only when C passes. Either way the pair manager ends up exact: a pair
// removed did overlap, a pair added did not.
// The entry written at the end carries a's new bounds on C: no other box
// walks before all of a's axes are done.
template <int K, int C, bool kMax>
std::uint32_t SapEndpoints::walk(Slot a, Entry moving, std::span<const Id> ids, PairManager& pairs) {
  constexpr int R = 3 - K - C;
  constexpr std::uint32_t kOther = kMax ? 0 : 1;  // the kind whose passing flips overlap
  Entry* const arr = axis_[K].data();
  std::uint32_t* const pos = pos_[K].data();
  const std::uint32_t* const pos_r = pos_[R].data();
  // a's bounds on C and R as they stand now (walked or not yet): they do not
  // change while it walks on K.
  const std::uint32_t c_min = endpoint_key(axis_[C][pos_[C][2 * a]].word);
  const std::uint32_t c_max = endpoint_key(axis_[C][pos_[C][2 * a + 1]].word);
  const std::uint32_t r_min = pos_r[2 * a], r_max = pos_r[2 * a + 1];
  const auto overlaps_r = [&](Slot b) { return r_min < pos_r[2 * b + 1] && pos_r[2 * b] < r_max; };

  const std::uint32_t from = pos[2 * a + kMax];
  std::uint32_t i = from;
  // The neighbour at `at` takes place i; crossing it flips the pair
  // (`starts`: they start overlapping on K) if a and b overlap on C and R.
  const auto pass = [&](std::uint32_t at, bool starts) {
    const Entry passed = arr[at];
    arr[i] = passed;
    pos[pos_index(passed.word)] = i;
    if (kind_and_cross_overlap(passed, kOther, c_min, c_max)) [[unlikely]] {
      const Slot b = endpoint_owner(passed.word);
      if (overlaps_r(b)) {
        if (!starts) {
          pairs.remove(ids[a], ids[b]);
        } else if (filter_.accepts(a, b)) {
          pairs.add(ids[a], ids[b]);
        }
      }
    }
    i = at;
  };
  if (rank_ceiling(moving.word) < arr[i - 1].word) {
    do pass(i - 1, !kMax);  // down: the neighbour below moves up one place
    while (rank_ceiling(moving.word) < arr[i - 1].word);
  } else {
    while (arr[i + 1].word < rank_floor(moving.word)) pass(i + 1, kMax);  // up: the neighbour above moves down
  }
  arr[i] = moving;
  pos[2 * a + kMax] = i;
  return i > from ? i - from : from - i;
}

void SapEndpoints::widen_extent(const Box3& box) {
  for (int k = 0; k < axes_; ++k) {
    // extent_of() rounds the difference up by one step, so a difference
    // below the extent kept cannot raise it: skip its nextafter() call.
    if (double(box.max[k]) - double(box.min[k]) < extent_[k]) continue;
    extent_[k] = std::max(extent_[k], extent_of(box.min[k], box.max[k]));
  }
}

// The same for many boxes, rounded up once (extent_of_widest()).
void SapEndpoints::widen_extents(std::span<const Box3> boxes) {
  widen_extents_of(boxes.size(), [&](std::size_t i) -> const Box3& { return boxes[i]; });
}

void SapEndpoints::widen_extents(const LiveBoxes& live) {
  widen_extents_of(live.size(), [&](std::size_t d) -> const Box3& { return live.box_at(d); });
}

// ---------------------------------------------------------------------------
// Additions and removals (I.4b, I.4c, I.5b).

SapEndpoints::SapEndpoints(int dims) : axes_(dims == 2 ? 2 : 3) {
  if (axes_ == 2) cross_ = {1, 0, 0};
  for (std::vector<Entry>& a : axis_) a = {Entry{kLowSentinel}, Entry{kHighSentinel}};
}

void SapEndpoints::add(std::span<const Slot> added, std::span<const Box3> boxes) {
  for (const Slot s : added) slots_ = std::max(slots_, std::size_t{s} + 1);
  if (!current_) return;  // restore() and finish_staged() size and measure anew
  size_positions();
  widen_extents(boxes);
}

// The position arrays follow the slots only while the axis arrays are in
// use: a world served by the resting set alone never holds them (24 bytes
// per object), and restore() sizes them when a walk comes back.
void SapEndpoints::size_positions() {
  const std::size_t from = pos_[0].size(), to = 2 * slots_;
  if (to <= from) return;
  for (std::vector<std::uint32_t>& p : pos_) {
    reserve_geometric(p, to);
    p.resize(to);
  }
  for (std::size_t i = from; i < to; i += 2) {  // the z indices of 2D input: every box overlaps every other on z
    pos_[2][i] = 0;
    pos_[2][i + 1] = 1;
  }
}

// Tags the removed boxes' entries in every axis array, which merge_axis()
// then leaves out. Until then the walks pass tagged entries like any other,
// but no overlap starts or stops with them: their cross bounds overlap
// nothing.
void SapEndpoints::tag(std::span<const Slot> removed) {
  for (int k = 0; k < axes_; ++k) {
    for (const Slot s : removed) {
      for (const std::uint32_t i : {pos_[k][2 * s], pos_[k][2 * s + 1]}) {
        axis_[k][i].cross_min = kDeadCrossMin;
        axis_[k][i].cross_max = kDeadCrossMax;
      }
    }
  }
}

void SapEndpoints::merge(const LiveBoxes& live, std::size_t first_new, bool tagged) {
  for (int k = 0; k < axes_; ++k) merge_axis(live, k, first_new, tagged);
}

// The entry of the min or max on axis k of the box at dense index d.
SapEndpoints::Entry SapEndpoints::make_entry(const LiveBoxes& live, int k, std::size_t d, bool is_max) const {
  const Box3& b = live.box_at(d);
  const int c = cross_[k];
  return Entry{make_endpoint(float_key(is_max ? b.max[k] : b.min[k]), live.slot(d), is_max), float_key(b.min[c]),
               float_key(b.max[c])};
}

// The entries of the new boxes (dense indices from first_new on) on axis k,
// in rank order, into pending_.
void SapEndpoints::sort_new_entries(const LiveBoxes& live, int k, std::size_t first_new) {
  pending_.clear();
  for (std::size_t d = first_new; d < live.size(); ++d) pending_.push_back(make_entry(live, k, d, false));
  for (std::size_t d = first_new; d < live.size(); ++d) pending_.push_back(make_entry(live, k, d, true));
  sort_by_key(pending_, spare_);
}

// Brings axis k up to date after removals and additions (I.4b, I.5b): the
// new endpoints (dense indices from first_new on) are presorted, then one
// forward pass merges them with the old entries into the spare array,
// leaving the tagged entries out, and the arrays swap. Positions are written
// only for entries whose index changes. No overlap tests here.
void SapEndpoints::merge_axis(const LiveBoxes& live, int k, std::size_t first_new, bool tagged) {
  sort_new_entries(live, k, first_new);

  const std::vector<Entry>& old = axis_[k];
  rebuilt_.resize(2 * live.size() + 2);
  const Entry* const in = old.data();
  const Entry* const fresh = pending_.data();
  Entry* const out = rebuilt_.data();
  std::uint32_t* const pos = pos_[k].data();
  const std::size_t last = old.size() - 1, m = pending_.size();  // old[last]: the high sentinel
  out[0] = in[0];
  std::size_t i = 1, j = 0, to = 1;
  for (;;) {
    const Entry e = in[i];
    // A new endpoint goes before old ones of higher rank; every new rank is below the sentinel's.
    if (j < m && rank_less(fresh[j].word, e.word)) {
      out[to] = fresh[j++];
      pos[pos_index(out[to].word)] = static_cast<std::uint32_t>(to);
      ++to;
      continue;
    }
    if (i == last) break;
    ++i;
    if (tagged && e.cross_min > e.cross_max) continue;
    out[to] = e;
    if (to != i - 1) pos[pos_index(e.word)] = static_cast<std::uint32_t>(to);
    ++to;
  }
  out[to] = in[last];
  axis_[k].swap(rebuilt_);
}

// Pairs each new box with the old boxes it overlaps by scanning one axis
// array, the one where that is shortest, up to a's max. An old box b
// overlaps new box a on axis k iff (by indices) b's min lies inside a's
// interval, or b's min lies below a's min and b's max inside a's interval,
// or b's interval contains a's. In the last case b is longer than a, and as
// no box is longer than extent_[k], b's min lies above a's max less
// extent_[k]: the scan starts there, or at a's min if that is lower (for
// boxes of one size, at a's min). The two other axes are tested as in the
// walks. Declines (false, before pairing anything) when the scans would cost
// more than box pruning.
bool SapEndpoints::scan_added(const LiveBoxes& live, std::size_t first_new, double budget, std::span<const Id> ids,
                              PairManager& pairs, double& scan_length) {
  const std::size_t m = live.size() - first_new;
  double planned = 0;
  scan_plan_.clear();
  for (std::size_t d = first_new; d < live.size(); ++d) {
    ScanPlan best{0, 0};
    std::uint32_t shortest = std::numeric_limits<std::uint32_t>::max();
    for (int k = 0; k < axes_; ++k) {
      const std::uint32_t from = scan_start(live, k, d);
      const std::uint32_t length = pos_[k][2 * live.slot(d) + 1] - from;
      if (length < shortest) shortest = length, best = {k, from};
    }
    scan_plan_.push_back(best);
    planned += shortest;
    if (planned > budget) {
      scan_length = planned / double(scan_plan_.size());
      return false;
    }
  }
  scan_length = planned / double(m);
  for (std::size_t j = 0; j < m; ++j)
    scan_pairs(live, scan_plan_[j].axis, first_new + j, first_new, scan_plan_[j].from, ids, pairs);
  return true;
}

// The first index on axis k from which scan_pairs() finds the old boxes
// overlapping the box at dense index d: its min's, or the lowest entry whose
// key is at least the box's max less extent_[k] if that is lower, found by
// galloping down from the box's min.
std::uint32_t SapEndpoints::scan_start(const LiveBoxes& live, int k, std::size_t d) const {
  const Entry* const arr = axis_[k].data();
  const std::uint32_t bound = float_key(reach_below(live.box_at(d).max[k], extent_[k]));
  const std::uint32_t at_min = pos_[k][2 * live.slot(d)];
  // Entry 0, the low sentinel, is below every bound.
  return detail::first_at_least(
      0, at_min, at_min, [&](std::uint32_t i) { return endpoint_key(arr[i].word); }, bound);
}

// Scans axis k from `from` up to the max of the new box at dense index d and
// adds its pairs with the old boxes whose mins it meets.
void SapEndpoints::scan_pairs(const LiveBoxes& live, int k, std::size_t d, std::size_t first_new, std::uint32_t from,
                              std::span<const Id> ids, PairManager& pairs) const {
  const Slot a = live.slot(d);
  const Box3& box = live.box_at(d);
  const Entry* const arr = axis_[k].data();
  const std::uint32_t* const pos = pos_[k].data();
  const std::uint32_t a_min = pos[2 * a], a_max = pos[2 * a + 1];
  const int c = cross_[k], r = 3 - k - c;
  const std::uint32_t c_min = float_key(box.min[c]), c_max = float_key(box.max[c]);
  const std::uint32_t* const pos_r = pos_[r].data();
  const std::uint32_t r_min = pos_r[2 * a], r_max = pos_r[2 * a + 1];
  // Each candidate that passes the cross axis costs a few reads at random
  // places: the remaining axis first, the most selective.
  const auto overlaps_r = [&](Slot b) { return r_min < pos_r[2 * b + 1] && pos_r[2 * b] < r_max; };
  // Below a's min: mins of boxes that contain a's interval.
  for (std::uint32_t i = from; i < a_min; ++i) {
    if (!kind_and_cross_overlap(arr[i], 0, c_min, c_max)) continue;
    const Slot b = endpoint_owner(arr[i].word);
    if (!overlaps_r(b) || pos[2 * b + 1] < a_max) continue;
    if (live.index(b) < first_new && filter_.accepts(a, b))
      pairs.add(ids[a], ids[b]);  // new pairs come from complete pruning
  }
  // Inside a's interval: any min, and the maxes of boxes whose min is below a's.
  for (std::uint32_t i = a_min + 1; i < a_max; ++i) {
    const Entry& e = arr[i];
    if (!cross_overlap(e, c_min, c_max)) continue;
    const Slot b = endpoint_owner(e.word);
    if (!overlaps_r(b) || (endpoint_kind(e.word) == 1 && pos[2 * b] > a_min)) continue;
    if (live.index(b) < first_new && filter_.accepts(a, b)) pairs.add(ids[a], ids[b]);
  }
}

// Rebuilds every endpoint array from the live boxes: all mins, then all
// maxes, radix-sorted by key (so min before max at equal keys).
void SapEndpoints::restore(const LiveBoxes& live) {
  drop_staged();
  size_positions();
  const std::size_t n = live.size();
  extent_ = {};
  widen_extents(live);
  for (int k = 0; k < axes_; ++k) {
    pending_.clear();
    for (std::size_t d = 0; d < n; ++d) pending_.push_back(make_entry(live, k, d, false));
    for (std::size_t d = 0; d < n; ++d) pending_.push_back(make_entry(live, k, d, true));
    sort_by_key(pending_, spare_);
    std::vector<Entry>& arr = axis_[k];
    arr.clear();
    arr.push_back(Entry{kLowSentinel});
    arr.insert(arr.end(), pending_.begin(), pending_.end());
    arr.push_back(Entry{kHighSentinel});
    std::uint32_t* const pos = pos_[k].data();
    for (std::uint32_t i = 1; i + 1 < arr.size(); ++i) pos[pos_index(arr[i].word)] = i;
  }
  current_ = true;
}

// ---------------------------------------------------------------------------

// ---------------------------------------------------------------------------
// The staged rebuild.

// Step k * kStepsPerAxis + 0 gathers axis k's entries (mins, then maxes)
// into pending_; the next three sort them by one 11-bit digit of the key
// each, stably (LSD), the last also lays them out as the axis array.
void SapEndpoints::stage(const LiveBoxes& live, int steps) {
  for (; steps > 0 && stage_steps_left() > 0; --steps, ++stage_) {
    const int k = stage_ / kStepsPerAxis, step = stage_ % kStepsPerAxis;
    if (step == 0) {
      pending_.clear();
      for (std::size_t d = 0; d < live.size(); ++d) pending_.push_back(make_entry(live, k, d, false));
      for (std::size_t d = 0; d < live.size(); ++d) pending_.push_back(make_entry(live, k, d, true));
      continue;
    }
    const int shift = 11 * (step - 1);
    std::array<std::uint32_t, 2048> counts{};
    for (const Entry& e : pending_) ++counts[(endpoint_key(e.word) >> shift) & 2047];
    std::uint32_t sum = 0;
    for (std::uint32_t& c : counts) sum += std::exchange(c, sum);
    spare_.resize(pending_.size());
    for (const Entry& e : pending_) spare_[counts[(endpoint_key(e.word) >> shift) & 2047]++] = e;
    pending_.swap(spare_);
    if (step == kStepsPerAxis - 1) {
      std::vector<Entry>& arr = axis_[k];
      arr.clear();
      arr.push_back(Entry{kLowSentinel});
      arr.insert(arr.end(), pending_.begin(), pending_.end());
      arr.push_back(Entry{kHighSentinel});
    }
  }
}

void SapEndpoints::note_changed(std::span<const Slot> slots) {
  for (const Slot s : slots) {
    if (s >= changed_.size()) changed_.resize(std::size_t{s} + 1, 0);
    if (changed_[s] != 0) continue;
    changed_[s] = 1;
    changed_list_.push_back(s);
  }
}

// One pass per axis, as merge_axis(): the staged entries of changed boxes
// left out, the changed boxes still live sorted and merged in, every
// position written.
void SapEndpoints::finish_staged(const LiveBoxes& live) {
  size_positions();
  if (changed_.size() < slots_) changed_.resize(slots_, 0);
  extent_ = {};
  widen_extents(live);
  for (int k = 0; k < axes_; ++k) {
    pending_.clear();
    for (const Slot s : changed_list_) {
      if (live.contains(s)) pending_.push_back(make_entry(live, k, live.index(s), false));
    }
    for (const Slot s : changed_list_) {
      if (live.contains(s)) pending_.push_back(make_entry(live, k, live.index(s), true));
    }
    sort_by_key(pending_, spare_);
    const std::vector<Entry>& old = axis_[k];
    rebuilt_.resize(2 * live.size() + 2);
    const Entry* const fresh = pending_.data();
    Entry* const out = rebuilt_.data();
    std::uint32_t* const pos = pos_[k].data();
    const std::size_t last = old.size() - 1, m = pending_.size();
    out[0] = old[0];
    std::size_t i = 1, j = 0, to = 1;
    for (;;) {
      const Entry e = old[i];
      if (j < m && rank_less(fresh[j].word, e.word)) {
        out[to] = fresh[j++];
        pos[pos_index(out[to].word)] = static_cast<std::uint32_t>(to);
        ++to;
        continue;
      }
      if (i == last) break;
      ++i;
      if (changed_[endpoint_owner(e.word)] != 0) continue;
      out[to] = e;
      pos[pos_index(e.word)] = static_cast<std::uint32_t>(to);
      ++to;
    }
    out[to] = old[last];
    axis_[k].swap(rebuilt_);
  }
  drop_staged();
  current_ = true;
}

void SapEndpoints::drop_staged() noexcept {
  for (const Slot s : changed_list_) changed_[s] = 0;
  changed_list_.clear();
  stage_ = 0;
}

std::size_t SapEndpoints::memory_bytes() const {
  std::size_t bytes = (pending_.capacity() + spare_.capacity() + rebuilt_.capacity()) * sizeof(Entry) +
                      changed_.capacity() + changed_list_.capacity() * sizeof(Slot) + change_.capacity() +
                      open_at_.capacity() * sizeof(std::uint32_t) + scan_plan_.capacity() * sizeof(ScanPlan);
  for (const std::vector<Open>& o : open_) bytes += o.capacity() * sizeof(Open);
  bytes += kept_open_.capacity() * sizeof(Open) + open_bits_.capacity() * sizeof(std::uint64_t);
  for (const std::vector<Entry>& a : axis_) bytes += a.capacity() * sizeof(Entry);
  for (const std::vector<std::uint32_t>& p : pos_) bytes += p.capacity() * sizeof(std::uint32_t);
  return bytes;
}

// With current_, each axis k < axes_ holds kLowSentinel, the 2n endpoints
// of the live boxes, kHighSentinel, with ranks (key, min before max) never
// decreasing; each entry's key is the sortable key of its box's bound, its
// cross bounds those of the box on axis cross_[k], and pos_[k] points back
// to it. Hence each box's min index is below its max index, and indices
// compare like closed-interval bounds. extent_[k] is at least every live
// box's extent on k. With 2D input, every live slot's z indices are (0, 1).
// Stale, the position arrays may lag behind the slots (size_positions()).
void SapEndpoints::debug_draw(DebugDraw& draw, std::span<const Id> ids) const {
  if (!current_) return;
  const int cross = cross_[0];
  for (const Entry& e : axis_[0]) {
    if (e.word == kLowSentinel || e.word == kHighSentinel) continue;
    if (e.cross_min == kDeadCrossMin && e.cross_max == kDeadCrossMax) continue;  // tagged for removal
    DebugPoint a{}, b{};
    a[0] = b[0] = key_float(endpoint_key(e.word));
    a[cross] = key_float(e.cross_min);
    b[cross] = key_float(e.cross_max);
    draw.line(a, b, endpoint_kind(e.word) ? DebugCategory::kMaxEndpoint : DebugCategory::kMinEndpoint,
              ids[endpoint_owner(e.word)]);
  }
}

bool SapEndpoints::validate(const LiveBoxes& live) const {
  const std::size_t n = live.size();
  if (current_) {
    for (std::size_t d = 0; d < n; ++d) {
      const Slot s = live.slot(d);
      if (2 * s + 1 >= pos_[0].size()) return false;
      if (axes_ == 2 && (pos_[2][2 * s] != 0 || pos_[2][2 * s + 1] != 1)) return false;
    }
    for (int k = 0; k < axes_; ++k) {
      const std::vector<Entry>& arr = axis_[k];
      if (arr.size() != 2 * n + 2 || arr.front().word != kLowSentinel || arr.back().word != kHighSentinel) return false;
      const int c = cross_[k];
      for (std::uint32_t i = 1; i + 1 < arr.size(); ++i) {
        const Endpoint e = arr[i].word;
        if (rank_less(e, arr[i - 1].word) || !rank_less(kLowSentinel, e) || !rank_less(e, kHighSentinel)) return false;
        const Slot s = endpoint_owner(e);
        if (!live.contains(s) || pos_[k][pos_index(e)] != i) return false;
        const Box3& b = live.box(s);
        if (endpoint_key(e) != float_key(endpoint_kind(e) ? b.max[k] : b.min[k])) return false;
        if (arr[i].cross_min != float_key(b.min[c]) || arr[i].cross_max != float_key(b.max[c])) return false;
      }
      for (std::size_t d = 0; d < n; ++d) {
        const Slot s = live.slot(d);
        if (pos_[k][2 * s] >= pos_[k][2 * s + 1]) return false;
        if (extent_of(live.box_at(d).min[k], live.box_at(d).max[k]) > extent_[k]) return false;
      }
    }
  }
  return true;
}

}  // namespace sapling::detail
