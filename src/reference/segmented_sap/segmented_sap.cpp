// segmented-sap: persistent sweep and prune whose sorted axes are segmented
// interval lists (Tracy, Buss and Woods 2009, section 3.2.2;
// segmented_axis.hpp holds the structure). Plain SAP keeps each axis in one
// array, so one insertion or removal shifts and swaps through O(n) entries
// (or a batch merge passes the whole array); here an axis is a chain of
// small chunks, and an insertion or removal costs a binary search, one
// chunk and the objects around it on x, not the whole axis.
//
// One frame (removals, moves, additions), object by object:
// - removal: the object's pairs are found first (the candidates of the x
//   list, boxes tested), then its endpoints leave their chunks;
// - move: each axis' two endpoints move by local sort, the one that keeps
//   min before max first; a min passing a max flips the pair: passing it
//   leftward (or a max rightward) adds it if the boxes overlap now, the
//   other way removes it;
// - addition: each axis' endpoints go in by binary search to the chunk and
//   insertion sort within it (a full chunk splits), then the new object's
//   pairs are the x list's candidates whose boxes overlap: the checkpoints
//   of its min's chunk (objects spanning that chunk's leading edge), the
//   mins before it in that chunk, and the mins between its min and max (or
//   the same from the next chunk's edge, when nearer).
// A frame whose local sort would cost more (a batch into an empty world,
// most objects moving, heavy churn; sorts_globally(), section 4's rule) is
// global: every list rebuilt by one radix sort, every pair by box pruning.
//
// Invariants (validate()): each list is valid (segmented_axis.hpp), holds
// exactly the live objects' endpoints with their boxes' keys, and the x
// list, the only one with checkpoints, has no fast movers between frames;
// the pair manager holds exactly the overlapping pairs of the live boxes.
// Closed intervals: words order a min before a max at equal keys, so two
// boxes overlap iff their endpoints interleave on every axis; any float but
// NaN is a valid coordinate (float_key).
//
// Cost: removal or addition O(log chunks + chunk + its candidates on x),
// the candidates being the objects open at it or starting inside it on x
// (~n^(2/3) in a uniform 3D world: thousands at 1M objects); a move
// O(endpoints passed), ~n^(2/3) per moving box as in any SAP; splits and
// merges shift the chunk index once per ~chunk/2 insertions; a global
// frame O(n + pairs), taken only when cheaper. About 200 bytes per object
// (16-byte entries at ~3/4 fill, places, box) plus 12 per chunk edge an
// object spans (checkpoints).
// Choose it for large worlds at rest with a trickle of insertions and
// removals and no grid (multi-sap is faster still); sap for many additions
// at once (its batch merge) or many moving.
// Measurements and chunk size: docs/algorithms/segmented-sap.md.
#include "reference/segmented_sap/segmented_sap.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "algorithms/builtin.hpp"
#include "detail/reserve.hpp"
#include "detail/settings.hpp"
#include "sapling/box_pruning.hpp"
#include "sapling/float_key.hpp"

namespace sapling::detail {

// Twice the square root of the endpoints per axis balances the two costs
// that follow the chunk size: the chunk scanned and shifted by an insertion
// (grows with it) and the checkpoint sets an object joins, one per chunk
// edge it spans (shrink with it). Measured: docs/algorithms/segmented-sap.md.
std::uint32_t SegmentedSapConfig::chunk_for(std::size_t objects) {
  const double target = 2.0 * std::sqrt(2.0 * static_cast<double>(objects));
  std::uint32_t c = 16;
  while (c < 8192 && c < target) c *= 2;
  return c;
}

namespace {
constexpr std::uint32_t kFirstChunk = 256;  // automatic size before any batch
// The automatic size's cap for the y and z lists, which keep no checkpoints.
// Measured: docs/algorithms/segmented-sap.md, "Chunk size".
constexpr std::uint32_t kPlainChunk = 256;
}  // namespace

SegmentedSap::SegmentedSap(const Options& options, SegmentedSapConfig config)
    : config_(config),
      axes_(options.dims == 2 ? 2 : 3),
      lists_{SegmentedAxis(config.chunk_capacity ? config.chunk_capacity : kFirstChunk, true),
             SegmentedAxis(config.chunk_capacity ? config.chunk_capacity : kFirstChunk, false),
             SegmentedAxis(config.chunk_capacity ? config.chunk_capacity : kFirstChunk, false)} {}

namespace {
// List k's filter of a box: its bounds on the two other axes (in 2D, one of
// them z, always [0, 0]).
SegmentedAxis::Filter filter_of(const Box3& b, int k) {
  const int p = (k + 1) % 3, q = (k + 2) % 3;
  return SegmentedAxis::make_filter(float_key(b.min[p]), float_key(b.max[p]), float_key(b.min[q]), float_key(b.max[q]));
}
}  // namespace

double open_estimate(std::size_t live, int axes) {
  return std::pow(static_cast<double>(live), axes == 2 ? 0.5 : 2.0 / 3.0);
}

bool sorts_globally(const SegmentedSapConfig& config, const SegmentedFrameCounts& counts) {
  if (config.global == GlobalSort::kAlways) return true;
  if (counts.removed == counts.live && counts.added > 1) return true;  // a batch into an empty world
  if (config.global == GlobalSort::kNever) return false;
  const double event_ns = kChurnNs + kQueryNsPerOpen * open_estimate(counts.live, counts.axes);
  const double local = kSwapNs * counts.swaps + kMoveNs * static_cast<double>(counts.moved) +
                       event_ns * static_cast<double>(counts.removed + counts.added);
  const auto after = static_cast<double>(counts.live - counts.removed + counts.added);
  const double global = after * (kGlobalNsPerBox + kGlobalNsGrowth * std::sqrt(after / 1e6));
  return local >= config.global_at * global;
}

Reported SegmentedSap::update(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) {
  filter_ = ops.filter;
  const double moved_by = config_.global == GlobalSort::kAuto ? displacement(ops) : 0;
  Reported reported = Reported::kChanges;
  if (sorts_globally(config_,
                     {live_, ops.removed.size(), ops.moved.size(), ops.added.size(), density_ * moved_by, axes_})) {
    sort_globally(ops, ids, pairs);
    reported = Reported::kEveryPair;
  } else {
    for (const Slot s : ops.removed) remove_object(s, ids, pairs);
    const std::uint64_t swaps_before = swaps_;
    for (std::size_t j = 0; j < ops.moved.size(); ++j) move_object(ops.moved[j], ops.moved_boxes[j], ids, pairs);
    if (moved_by > 0) {
      swept_ = swept_ / 2 + static_cast<double>(swaps_ - swaps_before);
      displaced_ = displaced_ / 2 + moved_by;
      density_ = swept_ / displaced_;
    }
    for (std::size_t j = 0; j < ops.added.size(); ++j) add_object(ops.added[j], ops.added_boxes[j], ids, pairs);
    give_back_scratch();
    last_global_ = false;
  }
  live_peak_ = std::max(live_peak_, live_);
  if (!ops.removed.empty()) give_back_memory();
  return reported;
}

// How far the moved objects' endpoints move, summed over the lists kept
// (infinite and NaN differences count for nothing).
double SegmentedSap::displacement(const FrameOps& ops) const {
  double sum = 0;
  for (std::size_t j = 0; j < ops.moved.size(); ++j) {
    const Box3& from = box_[ops.moved[j]];
    const Box3& to = ops.moved_boxes[j];
    for (int k = 0; k < axes_; ++k) {
      const float d = std::abs(to.min[k] - from.min[k]) + std::abs(to.max[k] - from.max[k]);
      if (d < std::numeric_limits<float>::infinity()) sum += d;
    }
  }
  return sum;
}

// Before any local frame has measured it: endpoints per unit length on each
// axis of the live boxes' extent (a uniform world's), averaged over the
// axes; none if the extent is infinite or empty.
void SegmentedSap::estimate_density() {
  if (live_ < 2) return;
  Box3 world = box_[live_slots_[0]];
  for (const Slot s : live_slots_) world = enclosing(world, box_[s]);
  double per_length = 0;
  for (int k = 0; k < axes_; ++k) {
    const float extent = world.max[k] - world.min[k];
    if (!(extent > 0 && extent < std::numeric_limits<float>::infinity())) return;
    per_length += 2 * static_cast<double>(live_) / extent;
  }
  density_ = per_length / axes_;
}

// Calls hit(o) for every object o of the x list's candidates for s whose box
// overlaps `box`. In a large world each box read is a cache and TLB miss:
// prefetched a batch at a time, the misses overlap instead of following one
// another (bench/results/segmented-sap.md, (a)).
template <class Hit>
void SegmentedSap::for_each_overlap(Slot s, const Box3& box, Hit&& hit) const {
  constexpr std::size_t kBatch = 16;
  std::array<Slot, kBatch> batch;
  std::size_t n = 0;
  const auto test = [&] {
    for (std::size_t i = 0; i < n; ++i) {
      if (overlaps(box, box_[batch[i]])) hit(batch[i]);
    }
    n = 0;
  };
  lists_[0].for_each_candidate(s, [&](Slot o) {
    const char* const at = reinterpret_cast<const char*>(&box_[o]);
    __builtin_prefetch(at);
    __builtin_prefetch(at + sizeof(Box3) - 1);
    batch[n++] = o;
    if (n == kBatch) test();
  });
  test();
}

void SegmentedSap::add_object(Slot s, const Box3& box, std::span<const Id> ids, PairManager& pairs) {
  if (s >= box_.size()) {
    reserve_geometric(box_, std::size_t{s} + 1);
    reserve_geometric(id_, std::size_t{s} + 1);
    box_.resize(std::size_t{s} + 1);
    id_.resize(std::size_t{s} + 1);
  }
  box_[s] = box;
  id_[s] = ids[s];
  for (int k = 0; k < axes_; ++k) {
    lists_[k].insert(s, float_key(box.min[k]), float_key(box.max[k]), filter_of(box, k));
  }
  ++live_;
  for_each_overlap(s, box, [&](Slot o) {
    if (filter_.accepts(s, o)) pairs.add(ids[s], ids[o]);
  });
}

// The global path: the frame's removals, moves and
// additions are applied to the boxes alone, every list is built again from
// the live boxes by one radix sort (SegmentedAxis::build(), chunks chosen
// again for the world's size), and every pair is found by box pruning and
// handed to the pair manager whole, which diffs it against the last frame's
// (PairManager::assign). A sweep of the rebuilt x list would cost each
// object the whole set open at it.
void SegmentedSap::sort_globally(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) {
  ++global_frames_;
  // Scratch and list storage are kept only through a run of global frames
  // over a populated world: a lone one, or one that fills, empties or
  // halves the world, keeps none and gives the lists' storage back.
  const std::size_t live_after = live_ - ops.removed.size() + ops.added.size();
  const bool streak = last_global_ && live_ > 0 && 2 * live_after >= live_;
  // The slots live after the frame: those live before and not removed
  // (ascending), then the added ones (a slot may be removed and added again).
  gone_.assign(box_.size(), 0);
  for (const Slot s : ops.removed) gone_[s] = 1;
  live_slots_.clear();
  for (Slot s = 0; s < box_.size(); ++s) {
    if (!gone_[s] && lists_[0].contains(s)) live_slots_.push_back(s);
  }
  for (std::size_t j = 0; j < ops.moved.size(); ++j) box_[ops.moved[j]] = ops.moved_boxes[j];
  Slot top = 0;
  for (const Slot s : ops.added) top = std::max(top, s);
  if (!ops.added.empty() && top >= box_.size()) {
    box_.resize(std::size_t{top} + 1);
    id_.resize(std::size_t{top} + 1);
  }
  for (std::size_t j = 0; j < ops.added.size(); ++j) {
    box_[ops.added[j]] = ops.added_boxes[j];
    id_[ops.added[j]] = ids[ops.added[j]];
    live_slots_.push_back(ops.added[j]);
  }
  live_ = live_slots_.size();

  for (std::vector<std::uint32_t>* keys : {&min_keys_, &max_keys_}) keys->resize(box_.size());
  filters_.resize(box_.size());
  const std::uint32_t chunk = config_.chunk_capacity ? config_.chunk_capacity
                              : live_ > 0            ? config_.chunk_for(live_)
                                                     : kFirstChunk;
  for (int k = 0; k < axes_; ++k) {
    // Lists without checkpoints pay nothing for small chunks but the index:
    // their chunks stay small, so an insertion or erasure shifts little.
    const std::uint32_t kc = k == 0 || config_.chunk_capacity ? chunk : std::min(chunk, kPlainChunk);
    if (streak) {
      lists_[k].clear(kc);
    } else {
      lists_[k].reset(kc);
      lists_[k].reserve(box_.size(), 2 * live_);  // build() fills chunks to 3/4: no regrowth
    }
    for (const Slot s : live_slots_) {
      min_keys_[s] = float_key(box_[s].min[k]);
      max_keys_[s] = float_key(box_[s].max[k]);
      filters_[s] = filter_of(box_[s], k);
    }
    lists_[k].build(live_slots_, min_keys_, max_keys_, filters_, true);
  }

  dense_boxes_.resize(live_);
  for (std::size_t i = 0; i < live_; ++i) dense_boxes_[i] = box_[live_slots_[i]];
  found_.clear();
  pruner_.complete(dense_boxes_, found_);
  frame_pairs_.resize(found_.size());
  std::size_t kept = 0;
  for (const IndexPair& p : found_) {
    const Slot a = live_slots_[p.i], b = live_slots_[p.j];
    if (filter_.accepts(a, b)) frame_pairs_[kept++] = make_pair(ids[a], ids[b]);
  }
  frame_pairs_.resize(kept);
  pairs.assign(frame_pairs_);  // diffed in bulk; frame_pairs_ now holds the old set's storage
  if (displaced_ == 0) estimate_density();
  if (!streak || live_ == 0) give_back_scratch();
  last_global_ = true;
}

// The global path's scratch is kept only while global frames follow each
// other: a world at rest keeps nothing for it.
void SegmentedSap::give_back_scratch() {
  if (live_slots_.capacity() == 0) return;
  for (int k = 0; k < axes_; ++k) lists_[k].give_back_scratch();
  free_storage(min_keys_);
  free_storage(max_keys_);
  free_storage(filters_);
  free_storage(gone_);
  free_storage(live_slots_);
  free_storage(dense_boxes_);
  free_storage(found_);
  free_storage(frame_pairs_);
  pruner_.release_buffers();
}

void SegmentedSap::remove_object(Slot s, std::span<const Id> ids, PairManager& pairs) {
  for_each_overlap(s, box_[s], [&](Slot o) { pairs.remove(ids[s], ids[o]); });
  for (int k = 0; k < axes_; ++k) lists_[k].erase(s);
  --live_;
}

// Local sort of each axis. The box is written first, so a test at any swap
// sees the new box on every axis: a swap that starts the overlap on one axis
// adds the pair iff the boxes overlap now; one that ends it removes the pair
// iff it was one, that is iff the old box overlapped (the pair set is exact
// before each move), a box test instead of a hash lookup. Each test looks
// at the entries' filters first (the two other axes) and reads a box only if
// they overlap.
void SegmentedSap::move_object(Slot s, const Box3& box, std::span<const Id> ids, PairManager& pairs) {
  const Box3 old = box_[s];
  box_[s] = box;
  std::uint64_t swaps = 0;
  for (int k = 0; k < axes_; ++k) {
    const SegmentedAxis::Filter now = filter_of(box, k);
    const SegmentedAxis::Filter now_probe = SegmentedAxis::probe(now),
                                old_probe = SegmentedAxis::probe(filter_of(old, k));
    const auto passed = [&](const SegmentedAxis::Entry& moving, const SegmentedAxis::Entry& other) {
      // Only a min passing a max matters: a max rightward or a min leftward
      // starts the overlap on this axis, the other way ends it. The filter
      // test (the new box's for a start, the old one's for an end) and the
      // kinds' test are branch-free, so the one branch below is rarely taken
      // and well predicted.
      constexpr SegmentedAxis::Endpoint kMax = SegmentedAxis::Endpoint{1} << 31;
      const bool starts = (moving.word > other.word) == SegmentedAxis::is_max(moving.word);
      const SegmentedAxis::Filter miss =
          SegmentedAxis::misses(starts ? now_probe : old_probe, other.filter) | (~(moving.word ^ other.word) & kMax);
      ++swaps;
      if (miss == 0) [[unlikely]]
        flip_pair(s, SegmentedAxis::owner(other.word), starts, box, old, ids, pairs);
    };
    lists_[k].move(s, float_key(box.min[k]), float_key(box.max[k]), now, passed);
  }
  swaps_ += swaps;
}

// A pair whose overlap on one axis starts or stops as s moves: added if the
// boxes now overlap (and the filters accept it), removed if they did.
// Apart from the walk's loop, which then keeps its few registers.
[[gnu::noinline]] void SegmentedSap::flip_pair(Slot s, Slot o, bool starts, const Box3& box, const Box3& old,
                                               std::span<const Id> ids, PairManager& pairs) {
  if (starts) {
    if (overlaps(box, box_[o]) && filter_.accepts(s, o)) pairs.add(ids[s], ids[o]);
  } else if (overlaps(old, box_[o])) {
    pairs.remove(ids[s], ids[o]);
  }
}

// After removals: once the live objects have fallen to a quarter of the
// most since the last give-back, the chunks and slot arrays are compacted.
void SegmentedSap::give_back_memory() {
  if (4 * live_ > live_peak_) return;
  std::size_t slots = box_.size();
  while (slots > 0 && !lists_[0].contains(static_cast<Slot>(slots - 1))) --slots;
  for (int k = 0; k < axes_; ++k) lists_[k].shrink_to_fit(slots);
  box_.resize(slots);
  box_.shrink_to_fit();
  id_.resize(slots);
  id_.shrink_to_fit();
  live_peak_ = live_;
}

void SegmentedSap::reserve(std::size_t objects) {
  if (objects > box_.size()) {
    box_.reserve(objects);
    id_.reserve(objects);
  }
  for (int k = 0; k < axes_; ++k) lists_[k].reserve(objects, 2 * objects);
}

std::size_t SegmentedSap::memory_bytes() const {
  std::size_t bytes = box_.capacity() * sizeof(Box3) + id_.capacity() * sizeof(Id);
  bytes += (min_keys_.capacity() + max_keys_.capacity()) * 4 + filters_.capacity() * sizeof(SegmentedAxis::Filter) +
           gone_.capacity() + live_slots_.capacity() * sizeof(Slot) + dense_boxes_.capacity() * sizeof(Box3) +
           found_.capacity() * sizeof(IndexPair) + frame_pairs_.capacity() * sizeof(Pair) + pruner_.memory_bytes();
  for (int k = 0; k < axes_; ++k) bytes += lists_[k].memory_bytes();
  return bytes;
}

bool SegmentedSap::validate() const {
  std::vector<Slot> live;
  for (Slot s = 0; s < box_.size(); ++s) {
    if (lists_[0].contains(s)) live.push_back(s);
  }
  if (live.size() != live_) return false;
  for (int k = 0; k < 3; ++k) {
    const SegmentedAxis& list = lists_[k];
    if (!list.validate()) return false;
    if (k >= axes_) {
      if (!list.empty()) return false;
      continue;
    }
    if (list.size() != 2 * live_) return false;
    for (const Slot s : live) {
      if (!list.contains(s)) return false;
      if (list.place(s, false).key != float_key(box_[s].min[k]) || list.place(s, true).key != float_key(box_[s].max[k]))
        return false;
      for (const bool is_max : {false, true}) {
        const SegmentedAxis::Entry& e = list.chunk_entries(list.place(s, is_max).chunk)[list.index_of(s, is_max)];
        if (e.filter != filter_of(box_[s], k)) return false;
      }
    }
    for (const std::uint32_t c : list.chunks()) {
      if (!list.fast_movers(c).empty()) return false;
    }
  }
  return true;
}

std::unique_ptr<Algorithm> make_segmented_sap(const Options& options) {
  SettingsReader settings(options.settings);
  SegmentedSapConfig config;
  config.chunk_capacity = static_cast<std::uint32_t>(
      settings.number("chunk", 0, 0, 1 << 20, "segmented-sap: chunk is 0 (chosen from the world) or 2..1048576"));
  if (config.chunk_capacity == 1) throw SettingError{"segmented-sap: chunk is 0 (chosen from the world) or 2..1048576"};
  config.global = static_cast<GlobalSort>(
      settings.choice("global", 0, {"auto", "never", "always"}, "segmented-sap: global is auto, never or always"));
  config.global_at =
      settings.number("global_at", config.global_at, 0, 1e9, "segmented-sap: global_at is a factor, 0 or more");
  settings.finish("segmented-sap: settings are chunk, global, global_at");
  return std::make_unique<SegmentedSap>(options, config);
}

std::unique_ptr<Algorithm> make_segmented_sap_with(const Options& options, const SegmentedSapConfig& config) {
  return std::make_unique<SegmentedSap>(options, config);
}

}  // namespace sapling::detail
