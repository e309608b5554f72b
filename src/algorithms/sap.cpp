// sap: the persistent, incremental sweep and prune of Terdiman 2007, part I
// (sections I.2-I.6, appendices A and B; batch insertion and removal, I.4b,
// I.4c, I.5b), with Tracy, Buss and Woods 2009's per-frame choice between
// walking and recomputing (sections 3.2.1 and 4), extended by a third path:
// box pruning of the changed boxes against a resting set kept sorted between
// frames (as PhysX's automatic box pruning keeps its sleeping boxes).
//
// State: per axis, an array of 16-byte entries between two sentinels (the
// endpoint word key << 32 | flag << 31 | owner, and the owner's bounds on the
// array's cross axis, so most overlap tests read only the entry); pos_, the
// index of each object's six endpoints; the pairs in the PairManager (I.6).
// Invariants:
// - each array is sorted by rank (key, flag), a min before a max at equal
//   keys, so a.min <= b.max iff index(a.min) < index(b.max): two boxes
//   overlap (closed) iff their endpoint indices interleave on every axis
//   (I.3). Keys come from float_key and the sentinels rank below and above
//   every float's, infinities included: any coordinate but NaN is valid;
// - the arrays stay sorted at every swap of a walk, so indices always
//   describe a real configuration and a swap needs no float comparison;
// - a removed box's entries carry cross bounds that overlap nothing until
//   their array is rebuilt;
// - after each frame the PairManager holds exactly the overlapping pairs.
//
// One frame (removals, moves, additions): removals tag entries and drop
// their pairs (I.5b); each moved box walks its endpoints by adjacent swaps,
// the outward one first, and a min passing a max flips the pair iff the
// boxes overlap on the two other axes (I.3); additions are radix-sorted,
// merged in one pass per axis and paired by box pruning or short scans
// (I.4b, I.4c). When many boxes move, the frame instead drops the changed
// boxes' pairs and finds them again against the resting set, or recomputes
// every pair; it estimates the three paths' costs and takes the cheapest.
//
// Cost: nothing when nothing moves; O(moved + swaps) for moves, ~n^(2/3)
// swaps per moving box in a uniform 3D world; O(n) per frame with additions
// or removals, so insert in batches; O(changed + active + resting entries in
// their cells + pairs) on the resting-set path; O(n + pairs) recomputed.
// About 500-600 bytes per object and ~73 per pair; no allocation once warm.
//
// Choose it for persistent worlds where a part of the objects moves each
// frame and objects come and go; box-pruning when nearly all move.
// The full method, measurements and tuning: docs/algorithms/sap.md.
#include "algorithms/sap.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>

#include "algorithms/builtin.hpp"
#include "detail/radix_sort.hpp"
#include "sapling/float_key.hpp"

namespace sapling::builtin {
namespace {

using Endpoint = SweepAndPrune::Endpoint;
using Entry = SweepAndPrune::Entry;

constexpr float kInf = std::numeric_limits<float>::infinity();

// ---------------------------------------------------------------------------
// Endpoint words: key << 32 | flag << 31 | owner.

constexpr Endpoint kMaxFlag = Endpoint{1} << 31;
constexpr Endpoint kOwnerMask = kMaxFlag - 1;

constexpr Endpoint make_endpoint(std::uint32_t key, Slot owner, bool is_max) noexcept {
  return (Endpoint{key} << 32) | (is_max ? kMaxFlag : 0) | owner;
}
constexpr std::uint32_t endpoint_key(Endpoint e) noexcept { return static_cast<std::uint32_t>(e >> 32); }
constexpr Slot endpoint_owner(Endpoint e) noexcept { return static_cast<Slot>(e & kOwnerMask); }
/// 0 for a min, 1 for a max.
constexpr std::uint32_t endpoint_kind(Endpoint e) noexcept { return static_cast<std::uint32_t>(e >> 31) & 1; }
/// Where pos_ keeps the index of this endpoint: 2 * owner + kind.
constexpr std::uint32_t pos_index(Endpoint e) noexcept { return std::rotl(static_cast<std::uint32_t>(e), 1); }
/// The smallest and largest words of e's rank (key, flag): comparing a word
/// with these compares ranks, whatever the owner bits.
constexpr Endpoint rank_floor(Endpoint e) noexcept { return e & ~kOwnerMask; }
constexpr Endpoint rank_ceiling(Endpoint e) noexcept { return e | kOwnerMask; }
constexpr bool rank_less(Endpoint a, Endpoint b) noexcept { return (a >> 31) < (b >> 31); }

// Sentinels (appendix B): ranks below and above every coordinate's, the
// infinities included, so the walks need no bounds checks.
constexpr Endpoint kLowSentinel = 0;
constexpr Endpoint kHighSentinel = ~Endpoint{0};
static_assert(float_key(-kInf) > 0);
static_assert(float_key(kInf) < 0xffffffffu);

/// Cross bounds that no live entry has (min above max): marks the entries
/// of removed boxes until their axis is compacted.
constexpr std::uint32_t kDeadCrossMin = 0xffffffffu;
constexpr std::uint32_t kDeadCrossMax = 0;

/// Whether entry e is a `kind` endpoint whose cross bounds overlap [lo, hi]
/// (closed: equal keys overlap). One branch for the caller: bit 63 collects
/// the borrows of e.cross_max - lo and hi - e.cross_min and a kind mismatch.
inline bool kind_and_cross_overlap(const Entry& e, std::uint32_t kind, std::uint32_t lo, std::uint32_t hi) noexcept {
  const std::uint64_t misses =
      (std::uint64_t{e.cross_max} - lo) | (std::uint64_t{hi} - e.cross_min) | (((e.word >> 31) ^ kind) << 63);
  return (misses >> 63) == 0;
}

/// Whether entry e's cross bounds overlap [lo, hi], either kind, with one
/// branch (half the entries of a scan lie below lo, half above hi: two
/// branches would mispredict).
inline bool cross_overlap(const Entry& e, std::uint32_t lo, std::uint32_t hi) noexcept {
  return (((std::uint64_t{e.cross_max} - lo) | (std::uint64_t{hi} - e.cross_min)) >> 63) == 0;
}

// ---------------------------------------------------------------------------
// Tuning: what the parts of a frame cost, in nanoseconds, as measured with
// `sapling run` on the tracy scene at 100k boxes (x86-64, one thread). Only
// their ratios matter: they pick the cheaper path for each frame.
// Where they come from and what they decide: docs/algorithms/sap.md, "Tuning".

constexpr double kSwapNs = 4;              ///< one swap of a walk
constexpr double kRecomputeNsPerBox = 50;  ///< box pruning of all boxes, and the pair manager's diff
constexpr double kRestoreNsPerBox = 60;    ///< rebuilding the endpoint arrays
constexpr double kRebuildNsPerBox = 20;    ///< rebuilding the arrays after removals or additions
constexpr double kMergeNsPerNewBox = 300;  ///< a new box's endpoints sorted and merged, and its pairs found
constexpr double kBipartiteNsPerBox = 35;  ///< bipartite box pruning of new boxes, per old box
constexpr double kScanNsPerEntry = 1.5;    ///< scanning an array entry for a new box's pairs
constexpr double kPrepareNsPerBox = 25;    ///< laying out the resting set
constexpr double kQueryNsPerBox = 110;     ///< a changed box: its pairs dropped, sorted into the grid, paired
constexpr double kRestingSweepNs = 5;      ///< a resting entry in a cell swept for the changed boxes
constexpr double kActiveNsPerBox = 40;     ///< an active box not changed this frame, paired with the changed
constexpr double kPairScanNs = 1.5;        ///< a current pair, scanned for the changed boxes' pairs
/// Frames over which a new resting set must pay for itself.
constexpr double kPrepareAmortization = 8;
/// Moved objects walked before their swaps are extrapolated to all.
constexpr std::size_t kProjectAfter = 32;
/// Recomputed frames in a row before the incremental path is retried; the
/// streak doubles after each failed retry, up to the maximum.
constexpr std::uint32_t kMinProbeInterval = 4;
constexpr std::uint32_t kMaxProbeInterval = 64;

// rest_state_ values.
constexpr std::uint8_t kGone = 0;     // a free slot
constexpr std::uint8_t kResting = 1;  // in the resting set, with its current bounds
constexpr std::uint8_t kActive = 2;   // moved or added since the resting set was laid out
constexpr std::uint8_t kChanged = 3;  // kActive, and moved or added this frame (during prune_changed)

// ---------------------------------------------------------------------------
// Numbers.

/// At least hi - lo, for lo <= hi: the largest extent a box can have.
double extent_of(float lo, float hi) noexcept {
  if (lo == hi) return 0;  // also two equal infinities
  return std::nextafter(double(hi) - double(lo), std::numeric_limits<double>::infinity());
}

/// At most x - e: no interval of extent at most e that reaches x starts
/// below it. -inf when that is all there is to say.
float reach_below(float x, double e) noexcept {
  constexpr double kFloatMax = std::numeric_limits<float>::max();
  const double lo = double(x) - e;
  if (!(lo > -kFloatMax)) return -kInf;  // also NaN: inf - inf
  if (lo > kFloatMax) return kInf;       // x = +inf and e finite: only +inf reaches it
  // Step below the subtraction's rounding, then round down to a float.
  const double below = std::nextafter(lo, -std::numeric_limits<double>::infinity());
  float f = static_cast<float>(below);
  if (double(f) > below) f = std::nextafter(f, -kInf);
  return f;
}

/// How far a box moved: the sum over axes of how far each bound moved.
double moved_by(const Box3& from, const Box3& to) noexcept {
  double d = 0;
  for (int k = 0; k < 3; ++k) {
    if (from.min[k] != to.min[k]) d += std::abs(double(to.min[k]) - double(from.min[k]));
    if (from.max[k] != to.max[k]) d += std::abs(double(to.max[k]) - double(from.max[k]));
  }
  return d;
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

SweepAndPrune::SweepAndPrune(const Options& options)
    : axes_(options.dims == 2 ? 2 : 3), probe_interval_(kMinProbeInterval), tasks_(options), pruner_(tasks_.get()) {
  if (axes_ == 2) cross_ = {1, 0, 0};
  for (std::vector<Entry>& a : axis_) a = {Entry{kLowSentinel}, Entry{kHighSentinel}};
}

SweepAndPrune::~SweepAndPrune() = default;

void SweepAndPrune::update(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) {
  pairs_ = &pairs;
  track_changes(ops);
  const std::size_t kept = live_.size() - ops.removed.size();
  const double n = double(kept);

  // What the frame costs (ns) recomputed, by pruning the changed boxes
  // against the resting ones, and incrementally: compaction, merging and
  // pairing of the new boxes, and the swaps predicted from the last
  // measured mobility.
  const double recompute_ns = kRecomputeNsPerBox * double(kept + ops.added.size());
  const double resting_ns = resting_cost(ops.moved.size() + ops.added.size(), kept + ops.added.size());
  // Leaving the walk with valid arrays makes them stale: a later walk pays
  // for rebuilding them, counted here spread over a few frames.
  const double stale_ns = arrays_valid_ ? kRestoreNsPerBox * n / kPrepareAmortization : 0.0;
  const double alternative_ns = std::min(recompute_ns, resting_ns) + stale_ns;
  double churn_ns = ops.removed.empty() && ops.added.empty() ? 0.0 : kRebuildNsPerBox * n;
  churn_ns += kMergeNsPerNewBox * double(ops.added.size());
  if (!ops.added.empty()) {
    const double scan_ns = kScanNsPerEntry * scan_length_ * double(ops.added.size());
    churn_ns += std::min(kBipartiteNsPerBox * n, scan_ns);
  }
  const double incremental_ns = churn_ns + kSwapNs * mobility_ * double(ops.moved.size());
  bool incremental = incremental_ns <= alternative_ns, probing = false;
  if (!arrays_valid_ && incremental_ns + kRestoreNsPerBox * n > alternative_ns && incremental_ns > alternative_ns / 2) {
    // Stale arrays, and rebuilding them would not pay for itself soon: only
    // now and then, to measure the mobility again (a probe), and only when
    // the swaps could decide it.
    probing = ++recompute_streak_ >= probe_interval_ && !ops.moved.empty() && churn_ns < alternative_ns &&
              walk_could_pay(ops, alternative_ns - churn_ns);
    incremental = probing;
  }
  // Swaps the incremental path can afford before another path is cheaper.
  double budget = std::max(0.0, (alternative_ns - churn_ns) / kSwapNs);
  if (walk_only_) {
    incremental = true, probing = false;
    budget = std::numeric_limits<double>::infinity();
  }

  const bool tagged = incremental && arrays_valid_ && !ops.removed.empty();
  drop_removed(ops.removed, tagged);
  std::size_t walked = 0;
  if (incremental) {
    if (!arrays_valid_) restore_arrays();
    walked = walk_moves(ops, budget);
    if (walked < ops.moved.size()) {
      incremental = false;
      ++counters_.aborted_walks;
    }
  }
  if (probing) {
    recompute_streak_ = 0;
    probe_interval_ = incremental ? kMinProbeInterval : std::min(2 * probe_interval_, kMaxProbeInterval);
  }

  if (incremental) {
    recompute_streak_ = 0;
    remove_pairs_of(ops.removed);
    const std::size_t first_new = live_.size();
    add_objects(ops.added, ops.added_boxes, ids);
    if (tagged || first_new < live_.size()) {
      for (int k = 0; k < axes_; ++k) rebuild_axis(k, first_new, tagged);
      if (tagged) counters_.compacted_boxes += ops.removed.size();
    }
    if (first_new < live_.size()) {
      counters_.merged_boxes += live_.size() - first_new;
      pair_added(first_new);
    }
    ++counters_.incremental_frames;
  } else if (resting_ns <= recompute_ns) {  // the walk's arrays, if valid, go stale either way
    prune_changed(ops, walked, ids);
    ++counters_.resting_frames;
  } else {
    recompute(ops, walked, ids);
    ++counters_.recomputed_frames;
  }
}

// ---------------------------------------------------------------------------
// Removals (I.5b).

// Marks the removed boxes dead and drops them from the dense list; with
// `tag`, also tags their entries in every axis array, which rebuild_axis()
// then leaves out. Until then the walks pass tagged entries like any other,
// but no overlap starts or stops with them: their cross bounds overlap
// nothing.
void SweepAndPrune::drop_removed(std::span<const Slot> removed, bool tag) {
  if (removed.empty()) return;
  if (tag) {
    for (int k = 0; k < axes_; ++k) {
      for (const Slot s : removed) {
        for (const std::uint32_t i : {pos_[k][2 * s], pos_[k][2 * s + 1]}) {
          axis_[k][i].cross_min = kDeadCrossMin;
          axis_[k][i].cross_max = kDeadCrossMax;
        }
      }
    }
  }
  for (const Slot s : removed) live_.erase(s);  // each replaced by the last one
}

void SweepAndPrune::remove_pairs_of(std::span<const Slot> removed) {
  if (removed.empty()) return;
  removed_ids_.reset(removed.size());
  for (const Slot s : removed) removed_ids_.insert(id_[s], 0);
  pairs_->remove_if_involves([this](Id id) { return removed_ids_.find(id) != detail::HashIndex::kNotFound; });
}

// ---------------------------------------------------------------------------
// Moves (I.3).

// Walks the moved boxes one by one. Returns how many were walked: all of
// them, or fewer when the swaps ran over `budget` or were on course to, in
// which case the caller recomputes the frame.
std::size_t SweepAndPrune::walk_moves(const FrameOps& ops, double budget) {
  const std::size_t m = ops.moved.size();
  std::uint64_t swaps = 0;
  std::size_t done = 0;
  double displacement = 0;
  while (done < m) {
    const Slot a = ops.moved[done];
    const Box3& box = ops.moved_boxes[done];
    displacement += moved_by(live_.value<kBox>(a), box);
    live_.value<kBox>(a) = box;
    widen_extent(box);
    if (axes_ == 3) {
      swaps += move_on_axis<0, 1>(a, box) + move_on_axis<1, 2>(a, box) + move_on_axis<2, 0>(a, box);
    } else {
      swaps += move_on_axis<0, 1>(a, box) + move_on_axis<1, 0>(a, box);
    }
    ++done;
    const double spent = double(swaps);
    if (done < m && (spent > budget || (done >= kProjectAfter && spent * double(m) > budget * double(done)))) break;
  }
  if (done > 0) {
    mobility_ = double(swaps) / double(done);
    walk_displacement_ = displacement / double(done);
  }
  counters_.swaps += swaps;
  return done;
}

// Moves box a's two endpoints on axis K (cross axis C) to the box's new
// bounds. The one that moves outward goes first, so the interval stays
// valid throughout.
template <int K, int C>
std::uint64_t SweepAndPrune::move_on_axis(Slot a, const Box3& box) {
  const std::uint32_t cross_min = float_key(box.min[C]), cross_max = float_key(box.max[C]);
  const Entry lo{make_endpoint(float_key(box.min[K]), a, false), cross_min, cross_max};
  const Entry hi{make_endpoint(float_key(box.max[K]), a, true), cross_min, cross_max};
  const std::uint32_t old_min_key = endpoint_key(axis_[K][pos_[K][2 * a]].word);
  if (endpoint_key(lo.word) > old_min_key) return walk<K, C, true>(a, hi) + walk<K, C, false>(a, lo);
  return walk<K, C, false>(a, lo) + walk<K, C, true>(a, hi);
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
std::uint32_t SweepAndPrune::walk(Slot a, Entry moving) {
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
  if (rank_ceiling(moving.word) < arr[i - 1].word) {
    do {  // down: the neighbour below moves up one place
      const Entry passed = arr[i - 1];
      arr[i] = passed;
      pos[pos_index(passed.word)] = i;
      if (kind_and_cross_overlap(passed, kOther, c_min, c_max)) [[unlikely]] {
        const Slot b = endpoint_owner(passed.word);
        if (overlaps_r(b)) {
          if constexpr (kMax) {
            pairs_->remove(id_[a], id_[b]);
          } else {
            pairs_->add(id_[a], id_[b]);
          }
        }
      }
      --i;
    } while (rank_ceiling(moving.word) < arr[i - 1].word);
  } else {
    while (arr[i + 1].word < rank_floor(moving.word)) {  // up: the neighbour above moves down
      const Entry passed = arr[i + 1];
      arr[i] = passed;
      pos[pos_index(passed.word)] = i;
      if (kind_and_cross_overlap(passed, kOther, c_min, c_max)) [[unlikely]] {
        const Slot b = endpoint_owner(passed.word);
        if (overlaps_r(b)) {
          if constexpr (kMax) {
            pairs_->add(id_[a], id_[b]);
          } else {
            pairs_->remove(id_[a], id_[b]);
          }
        }
      }
      ++i;
    }
  }
  arr[i] = moving;
  pos[2 * a + kMax] = i;
  return i > from ? i - from : from - i;
}

void SweepAndPrune::widen_extent(const Box3& box) {
  for (int k = 0; k < axes_; ++k) extent_[k] = std::max(extent_[k], extent_of(box.min[k], box.max[k]));
}

// ---------------------------------------------------------------------------
// Additions (I.4b, I.4c).

void SweepAndPrune::add_objects(std::span<const Slot> added, std::span<const Box3> boxes, std::span<const Id> ids) {
  std::size_t slots = id_.size();
  for (const Slot s : added) slots = std::max(slots, std::size_t{s} + 1);
  if (slots > id_.size()) {
    for (std::vector<std::uint32_t>& p : pos_) p.resize(2 * slots);
    id_.resize(slots);
    live_.reserve_slots(slots);
  }
  for (std::size_t j = 0; j < added.size(); ++j) {
    const Slot s = added[j];
    id_[s] = ids[s];
    pos_[2][2 * s] = 0;  // the z indices of 2D input: every box overlaps every other on z
    pos_[2][2 * s + 1] = 1;
    live_.insert(s, boxes[j]);
    widen_extent(boxes[j]);
  }
}

// The entry of the min or max on axis k of the box at dense index d.
SweepAndPrune::Entry SweepAndPrune::make_entry(int k, std::size_t d, bool is_max) const {
  const Box3& b = bounds()[d];
  const int c = cross_[k];
  return Entry{make_endpoint(float_key(is_max ? b.max[k] : b.min[k]), live_.slot(d), is_max), float_key(b.min[c]),
               float_key(b.max[c])};
}

// Brings axis k up to date after removals and additions (I.4b, I.5b): the
// new endpoints (dense indices from first_new on) are presorted, then one
// forward pass merges them with the old entries into the spare array,
// leaving the tagged entries out, and the arrays swap. Positions are written
// only for entries whose index changes. No overlap tests here.
void SweepAndPrune::rebuild_axis(int k, std::size_t first_new, bool tagged) {
  pending_.clear();
  for (std::size_t d = first_new; d < live_.size(); ++d) pending_.push_back(make_entry(k, d, false));
  for (std::size_t d = first_new; d < live_.size(); ++d) pending_.push_back(make_entry(k, d, true));
  sort_by_key(pending_, spare_);

  const std::vector<Entry>& old = axis_[k];
  rebuilt_.resize(2 * live_.size() + 2);
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

// The new boxes' pairs (I.4c): among themselves by complete box pruning;
// with the old boxes by scanning the arrays around each new box when that
// is short, else by bipartite box pruning.
void SweepAndPrune::pair_added(std::size_t first_new) {
  const std::span<const Box3> all(bounds());
  const std::span<const Box3> fresh = all.subspan(first_new);
  found_.clear();
  pruner_.complete(fresh, found_);
  add_found_pairs(first_new, first_new);
  if (first_new == 0) return;
  if (scan_added(first_new)) {
    ++counters_.scanned_batches;
    return;
  }
  found_.clear();
  pruner_.bipartite(fresh, all.first(first_new), found_);
  add_found_pairs(first_new, 0);
  ++counters_.pruned_batches;
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
bool SweepAndPrune::scan_added(std::size_t first_new) {
  const std::size_t m = live_.size() - first_new;
  const double budget = kBipartiteNsPerBox * double(first_new) / kScanNsPerEntry;
  double planned = 0;
  scan_plan_.clear();
  for (std::size_t d = first_new; d < live_.size(); ++d) {
    ScanPlan best{0, 0};
    std::uint32_t shortest = std::numeric_limits<std::uint32_t>::max();
    for (int k = 0; k < axes_; ++k) {
      const std::uint32_t from = scan_start(k, d);
      const std::uint32_t length = pos_[k][2 * live_.slot(d) + 1] - from;
      if (length < shortest) shortest = length, best = {k, from};
    }
    scan_plan_.push_back(best);
    planned += shortest;
    if (planned > budget) {
      scan_length_ = planned / double(scan_plan_.size());
      return false;
    }
  }
  scan_length_ = planned / double(m);
  for (std::size_t j = 0; j < m; ++j) scan_pairs(scan_plan_[j].axis, first_new + j, first_new, scan_plan_[j].from);
  return true;
}

// The first index on axis k from which scan_pairs() finds the old boxes
// overlapping the box at dense index d: its min's, or the lowest entry whose
// key is at least the box's max less extent_[k] if that is lower, found by
// galloping down from the box's min.
std::uint32_t SweepAndPrune::scan_start(int k, std::size_t d) const {
  const Entry* const arr = axis_[k].data();
  const std::uint32_t bound = float_key(reach_below(bounds()[d].max[k], extent_[k]));
  std::uint32_t hi = pos_[k][2 * live_.slot(d)], step = 1, lo = 0;
  if (endpoint_key(arr[hi].word) < bound) return hi;  // no longer box reaches below a's min
  while (step < hi && endpoint_key(arr[hi - step].word) >= bound) {
    hi -= step;
    step *= 2;
  }
  if (step < hi) lo = hi - step;  // else lo = 0: the low sentinel, below every bound
  while (hi - lo > 1) {           // key(arr[lo]) < bound <= key(arr[hi])
    const std::uint32_t mid = lo + (hi - lo) / 2;
    (endpoint_key(arr[mid].word) < bound ? lo : hi) = mid;
  }
  return hi;
}

// Scans axis k from `from` up to the max of the new box at dense index d and
// adds its pairs with the old boxes whose mins it meets.
void SweepAndPrune::scan_pairs(int k, std::size_t d, std::size_t first_new, std::uint32_t from) {
  const Slot a = live_.slot(d);
  const Box3& box = bounds()[d];
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
    if (live_.index(b) < first_new) pairs_->add(id_[a], id_[b]);  // new pairs come from complete pruning
  }
  // Inside a's interval: any min, and the maxes of boxes whose min is below a's.
  for (std::uint32_t i = a_min + 1; i < a_max; ++i) {
    const Entry& e = arr[i];
    if (!cross_overlap(e, c_min, c_max)) continue;
    const Slot b = endpoint_owner(e.word);
    if (!overlaps_r(b) || (endpoint_kind(e.word) == 1 && pos[2 * b] > a_min)) continue;
    if (live_.index(b) < first_new) pairs_->add(id_[a], id_[b]);
  }
}

void SweepAndPrune::add_found_pairs(std::size_t offset_i, std::size_t offset_j) {
  for (const IndexPair& p : found_) pairs_->add(id_[live_.slot(p.i + offset_i)], id_[live_.slot(p.j + offset_j)]);
}

// ---------------------------------------------------------------------------
// The global path (Tracy et al. section 4).

// Finishes the frame from scratch: the moves not walked yet and the
// additions are applied to the boxes, every pair is found by box pruning,
// and the pair manager diffs them against the previous frame. The endpoint
// arrays are left stale.
void SweepAndPrune::recompute(const FrameOps& ops, std::size_t moves_applied, std::span<const Id> ids) {
  for (std::size_t j = moves_applied; j < ops.moved.size(); ++j) live_.value<kBox>(ops.moved[j]) = ops.moved_boxes[j];
  add_objects(ops.added, ops.added_boxes, ids);
  found_.clear();
  pruner_.complete(bounds(), found_);
  frame_pairs_.resize(found_.size());
  for (std::size_t k = 0; k < found_.size(); ++k) {
    frame_pairs_[k] = make_pair(id_[live_.slot(found_[k].i)], id_[live_.slot(found_[k].j)]);
  }
  pairs_->assign(frame_pairs_);  // diffed in bulk (after walked moves: the general way)
  arrays_valid_ = false;
}

// ---------------------------------------------------------------------------
// Many moving: the resting set.

// Keeps the resting set's bookkeeping for the frame's operations, whatever
// path the frame takes: removed boxes leave it, moved ones leave it for the
// active list, added ones join the active list.
void SweepAndPrune::track_changes(const FrameOps& ops) {
  std::size_t slots = rest_state_.size();
  for (const Slot s : ops.added) slots = std::max(slots, std::size_t{s} + 1);
  if (slots > rest_state_.size()) rest_state_.resize(slots, kGone);
  for (const Slot s : ops.removed) {
    if (rest_state_[s] == kResting) ++dead_resting_;
    rest_state_[s] = kGone;
  }
  if (!ops.removed.empty()) std::erase_if(active_, [&](Slot s) { return rest_state_[s] != kActive; });
  for (const Slot s : ops.moved) {
    if (rest_state_[s] != kResting) continue;
    ++dead_resting_;
    rest_state_[s] = kActive;
    active_.push_back(s);
  }
  for (const Slot s : ops.added) {
    rest_state_[s] = kActive;
    active_.push_back(s);
  }
}

// Whether walking this frame's moves might cost less than `budget_ns`, by
// the swaps of the last walk scaled by how far the objects move now against
// then (a sample of the moves): so that a probe, which first rebuilds the
// arrays, is spent only when the motion has calmed down.
bool SweepAndPrune::walk_could_pay(const FrameOps& ops, double budget_ns) const {
  if (!(walk_displacement_ > 0) || !std::isfinite(walk_displacement_)) return true;  // nothing to scale
  const std::size_t sample = std::min<std::size_t>(ops.moved.size(), 64);
  double displacement = 0;
  for (std::size_t j = 0; j < sample; ++j)
    displacement += moved_by(bounds()[live_.index(ops.moved[j])], ops.moved_boxes[j]);
  const double swaps = mobility_ * (displacement / double(sample)) / walk_displacement_;
  return std::isfinite(swaps) && kSwapNs * swaps * double(ops.moved.size()) < budget_ns;
}

// Whether the frame should lay out a new resting set first: when the
// active boxes that did not change this frame, paired again every frame,
// and the dead entries, swept every frame, would soon cost more.
bool SweepAndPrune::wants_preparation(std::size_t changed, std::size_t live) const {
  const double idle = double(active_.size() - changed);
  const double waste = kActiveNsPerBox * idle + kRestingSweepNs * double(dead_resting_);
  return waste * kPrepareAmortization > kPrepareNsPerBox * double(live);
}

// What prune_changed() would cost (ns) with `changed` boxes moved or added
// and `live` boxes after the frame.
double SweepAndPrune::resting_cost(std::size_t changed, std::size_t live) const {
  double ns = kPairScanNs * double(pairs_->size()) + kQueryNsPerBox * double(changed);
  double resting = double(pruner_.prepared_size()), cells = double(std::max<std::size_t>(1, pruner_.prepared_cells()));
  if (wants_preparation(changed, live)) {
    ns += kPrepareNsPerBox * double(live - changed);
    resting = double(live - changed);
    cells = std::max(1.0, resting / 256);  // a guess: the grid is not chosen yet
  } else {
    ns += kActiveNsPerBox * double(active_.size() - changed);
  }
  // The query boxes land in about one cell each, whose resting entries are swept.
  return ns + kRestingSweepNs * resting * std::min(1.0, double(changed) / cells);
}

// Finishes the frame by pairing the boxes moved or added this frame (C)
// again: their pairs are dropped, then found anew against the resting set
// (its grid laid out already: only C is sorted), among themselves, and
// against the other active boxes. Pairs among unchanged boxes stand. The
// moves from `moves_applied` on are applied here; the endpoint arrays are
// left stale.
void SweepAndPrune::prune_changed(const FrameOps& ops, std::size_t moves_applied, std::span<const Id> ids) {
  removed_ids_.reset(ops.removed.size() + ops.moved.size());
  for (const Slot s : ops.removed) removed_ids_.insert(id_[s], 0);
  for (const Slot s : ops.moved) removed_ids_.insert(id_[s], 0);
  if (!ops.removed.empty() || !ops.moved.empty()) {
    pairs_->remove_if_involves([this](Id id) { return removed_ids_.find(id) != detail::HashIndex::kNotFound; });
  }
  for (std::size_t j = moves_applied; j < ops.moved.size(); ++j) live_.value<kBox>(ops.moved[j]) = ops.moved_boxes[j];
  add_objects(ops.added, ops.added_boxes, ids);

  const std::size_t changed = ops.moved.size() + ops.added.size();
  query_slots_.clear();
  query_boxes_.clear();
  for (const std::span<const Slot> list : {ops.moved, ops.added}) {
    for (const Slot s : list) {
      rest_state_[s] = kChanged;
      query_slots_.push_back(s);
      query_boxes_.push_back(live_.value<kBox>(s));
    }
  }
  if (wants_preparation(changed, live_.size())) prepare_resting();
  other_slots_.clear();
  other_boxes_.clear();
  for (const Slot s : active_) {
    if (rest_state_[s] != kActive) continue;
    other_slots_.push_back(s);
    other_boxes_.push_back(live_.value<kBox>(s));
  }

  const auto add_pairs = [&](std::span<const Slot> first, std::span<const Slot> second) {
    for (const IndexPair& p : found_) pairs_->add(id_[first[p.i]], id_[second[p.j]]);
  };
  found_.clear();
  if (pruner_.bipartite_prepared(query_boxes_, found_)) {
    for (const IndexPair& p : found_) {  // resting entries of boxes since moved or removed are stale
      const Slot t = resting_slot_[p.j];
      if (rest_state_[t] == kResting) pairs_->add(id_[query_slots_[p.i]], id_[t]);
    }
  } else {
    // Boxes too large for the resting grid: pair them with everything the plain way.
    for (const Slot s : resting_slot_) {
      if (rest_state_[s] != kResting) continue;
      other_slots_.push_back(s);
      other_boxes_.push_back(live_.value<kBox>(s));
    }
  }
  found_.clear();
  pruner_.complete(query_boxes_, found_);
  add_pairs(query_slots_, query_slots_);
  found_.clear();
  pruner_.bipartite(query_boxes_, other_boxes_, found_);
  add_pairs(query_slots_, other_slots_);

  for (const Slot s : query_slots_) rest_state_[s] = kActive;
  arrays_valid_ = false;
}

// Lays out every live box not changed this frame as the new resting set;
// the changed ones become the whole active list.
void SweepAndPrune::prepare_resting() {
  other_boxes_.clear();
  resting_slot_.clear();
  for (std::size_t d = 0; d < live_.size(); ++d) {
    const Slot s = live_.slot(d);
    if (rest_state_[s] == kChanged) continue;
    rest_state_[s] = kResting;
    resting_slot_.push_back(s);
    other_boxes_.push_back(bounds()[d]);
  }
  pruner_.prepare(other_boxes_);
  active_.assign(query_slots_.begin(), query_slots_.end());
  dead_resting_ = 0;
  ++counters_.preparations;
}

// Rebuilds every endpoint array from the live boxes: all mins, then all
// maxes, radix-sorted by key (so min before max at equal keys).
void SweepAndPrune::restore_arrays() {
  const std::size_t n = live_.size();
  extent_ = {};
  for (const Box3& b : bounds()) widen_extent(b);
  for (int k = 0; k < axes_; ++k) {
    pending_.clear();
    for (std::size_t d = 0; d < n; ++d) pending_.push_back(make_entry(k, d, false));
    for (std::size_t d = 0; d < n; ++d) pending_.push_back(make_entry(k, d, true));
    sort_by_key(pending_, spare_);
    std::vector<Entry>& arr = axis_[k];
    arr.clear();
    arr.push_back(Entry{kLowSentinel});
    arr.insert(arr.end(), pending_.begin(), pending_.end());
    arr.push_back(Entry{kHighSentinel});
    std::uint32_t* const pos = pos_[k].data();
    for (std::uint32_t i = 1; i + 1 < arr.size(); ++i) pos[pos_index(arr[i].word)] = i;
  }
  arrays_valid_ = true;
  ++counters_.restores;
}

// ---------------------------------------------------------------------------

std::size_t SweepAndPrune::memory_bytes() const {
  std::size_t bytes =
      id_.capacity() * sizeof(Id) + live_.memory_bytes() +
      (pending_.capacity() + spare_.capacity() + rebuilt_.capacity()) * sizeof(Entry) + removed_ids_.memory_bytes() +
      found_.capacity() * sizeof(IndexPair) + frame_pairs_.capacity() * sizeof(Pair) + rest_state_.capacity() +
      (active_.capacity() + resting_slot_.capacity() + query_slots_.capacity() + other_slots_.capacity()) *
          sizeof(Slot) +
      (query_boxes_.capacity() + other_boxes_.capacity()) * sizeof(Box3) + pruner_.memory_bytes();
  for (const std::vector<Entry>& a : axis_) bytes += a.capacity() * sizeof(Entry);
  for (const std::vector<std::uint32_t>& p : pos_) bytes += p.capacity() * sizeof(std::uint32_t);
  return bytes;
}

// Invariants after every update():
// (a) live_ maps the live slots one-to-one to dense indices (valid()).
// (b) With arrays_valid_, each axis k < axes_ holds kLowSentinel, the 2n
//     endpoints of the live boxes, kHighSentinel, with ranks (key, min before
//     max) never decreasing; each entry's key is the sortable key of its
//     box's bound, its cross bounds those of the box on axis cross_[k], and
//     pos_[k] points back to it. Hence each box's min index is below its max
//     index, and indices compare like closed-interval bounds. extent_[k] is
//     at least every live box's extent on k.
// (c) With 2D input, every live slot's z indices are (0, 1).
// (d) The pair manager holds exactly the overlapping pairs of the live boxes
//     (by brute force up to 4096 boxes, by box pruning beyond).
bool SweepAndPrune::validate() const {
  const std::size_t n = live_.size();
  if (!live_.valid()) return false;
  for (std::size_t d = 0; d < n; ++d) {
    const Slot s = live_.slot(d);
    if (axes_ == 2 && (pos_[2][2 * s] != 0 || pos_[2][2 * s + 1] != 1)) return false;
  }

  if (arrays_valid_) {
    for (int k = 0; k < axes_; ++k) {
      const std::vector<Entry>& arr = axis_[k];
      if (arr.size() != 2 * n + 2 || arr.front().word != kLowSentinel || arr.back().word != kHighSentinel) return false;
      const int c = cross_[k];
      for (std::uint32_t i = 1; i + 1 < arr.size(); ++i) {
        const Endpoint e = arr[i].word;
        if (rank_less(e, arr[i - 1].word) || !rank_less(kLowSentinel, e) || !rank_less(e, kHighSentinel)) return false;
        const Slot s = endpoint_owner(e);
        if (!live_.contains(s) || pos_[k][pos_index(e)] != i) return false;
        const Box3& b = bounds()[live_.index(s)];
        if (endpoint_key(e) != float_key(endpoint_kind(e) ? b.max[k] : b.min[k])) return false;
        if (arr[i].cross_min != float_key(b.min[c]) || arr[i].cross_max != float_key(b.max[c])) return false;
      }
      for (std::size_t d = 0; d < n; ++d) {
        const Slot s = live_.slot(d);
        if (pos_[k][2 * s] >= pos_[k][2 * s + 1]) return false;
        if (extent_of(bounds()[d].min[k], bounds()[d].max[k]) > extent_[k]) return false;
      }
    }
  }

  // (e) The resting set: free slots kGone, live ones kResting or kActive;
  //     active_ lists the kActive slots once each; every prepared box is a
  //     kResting slot's or counted dead.
  std::size_t resting = 0, active = 0;
  for (Slot s = 0; s < rest_state_.size(); ++s) {
    const bool live = live_.contains(s);
    if (live != (rest_state_[s] == kResting || rest_state_[s] == kActive)) return false;
    resting += rest_state_[s] == kResting;
    active += rest_state_[s] == kActive;
  }
  if (active != active_.size() || resting + dead_resting_ != resting_slot_.size()) return false;
  if (resting_slot_.size() != pruner_.prepared_size()) return false;
  for (const Slot s : active_) {
    if (s >= rest_state_.size() || rest_state_[s] != kActive) return false;
  }

  if (pairs_ == nullptr) return true;
  std::vector<Pair> expected;
  const auto id_of = [&](std::size_t d) { return id_[live_.slot(d)]; };
  if (n <= 4096) {
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = i + 1; j < n; ++j) {
        if (overlaps(bounds()[i], bounds()[j])) expected.push_back(make_pair(id_of(i), id_of(j)));
      }
    }
  } else {
    std::vector<IndexPair> found;
    complete_pairs(bounds(), found);
    for (const IndexPair& p : found) expected.push_back(make_pair(id_of(p.i), id_of(p.j)));
  }
  std::vector<Pair> actual(pairs_->pairs().begin(), pairs_->pairs().end());
  std::sort(expected.begin(), expected.end());
  std::sort(actual.begin(), actual.end());
  return expected == actual;
}

std::unique_ptr<Algorithm> make_sap(const Options& options) { return std::make_unique<SweepAndPrune>(options); }

}  // namespace sapling::builtin
