// segmented-sap: persistent sweep and prune whose sorted axes are segmented
// interval lists (Tracy, Buss and Woods 2009, section 3.2.2;
// segmented_list.hpp holds the structure). Plain SAP keeps each axis in one
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
//   mins before it in that chunk, and the mins between its min and max.
// A frame that adds into an empty world builds the lists by one radix sort
// and finds the pairs by box pruning (the paper's global path, section 4).
//
// Invariants (validate()): each list is valid (segmented_list.hpp), holds
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
// merges shift the chunk index once per ~chunk/2 insertions. Nothing else
// per frame. About 200 bytes per object (16-byte entries at ~3/4 fill,
// places, box) plus 12 per chunk edge an object spans (checkpoints).
// Choose it for large worlds at rest with a trickle of insertions and
// removals and no grid (multi-sap is faster still); sap for many additions
// at once (its batch merge) or many moving.
// Measurements and chunk size: docs/algorithms/segmented-sap.md.
#include "algorithms/segmented_sap.hpp"

#include <algorithm>
#include <cmath>

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
}

SegmentedSap::SegmentedSap(const Options& options, SegmentedSapConfig config)
    : config_(config),
      axes_(options.dims == 2 ? 2 : 3),
      lists_{SegmentedList(config.chunk_capacity ? config.chunk_capacity : kFirstChunk, true),
             SegmentedList(config.chunk_capacity ? config.chunk_capacity : kFirstChunk, false),
             SegmentedList(config.chunk_capacity ? config.chunk_capacity : kFirstChunk, false)} {
  if (axes_ == 2) cross_ = {1, 0, 0};
}

void SegmentedSap::update(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) {
  filter_ = ops.filter;
  for (const Slot s : ops.removed) remove_object(s, ids, pairs);
  for (std::size_t j = 0; j < ops.moved.size(); ++j) move_object(ops.moved[j], ops.moved_boxes[j], ids, pairs);
  if (live_ == 0 && ops.added.size() > 1) {
    build(ops, ids, pairs);
  } else {
    for (std::size_t j = 0; j < ops.added.size(); ++j) add_object(ops.added[j], ops.added_boxes[j], ids, pairs);
  }
  live_peak_ = std::max(live_peak_, live_);
  if (!ops.removed.empty()) give_back_memory();
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
    lists_[k].insert(s, float_key(box.min[k]), float_key(box.max[k]), float_key(box.min[cross_[k]]),
                     float_key(box.max[cross_[k]]));
  }
  ++live_;
  lists_[0].for_each_candidate(s, [&](Slot o) {
    if (overlaps(box, box_[o]) && filter_.accepts(s, o)) pairs.add(ids[s], ids[o]);
  });
}

// Into an empty world: every list by one sort, the pairs by box pruning
// (a sweep of the open objects at each x would cost n times the open set).
void SegmentedSap::build(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) {
  Slot top = 0;
  for (const Slot s : ops.added) top = std::max(top, s);
  if (top >= box_.size()) {
    box_.resize(std::size_t{top} + 1);
    id_.resize(std::size_t{top} + 1);
  }
  for (std::size_t j = 0; j < ops.added.size(); ++j) {
    box_[ops.added[j]] = ops.added_boxes[j];
    id_[ops.added[j]] = ids[ops.added[j]];
  }
  for (std::vector<std::uint32_t>* keys : {&min_keys_, &max_keys_, &cross_mins_, &cross_maxs_}) {
    keys->resize(std::size_t{top} + 1);
  }
  const std::uint32_t chunk = config_.chunk_capacity ? config_.chunk_capacity : config_.chunk_for(ops.added.size());
  for (int k = 0; k < axes_; ++k) {
    lists_[k].reset(chunk);
    for (const Slot s : ops.added) {
      min_keys_[s] = float_key(box_[s].min[k]);
      max_keys_[s] = float_key(box_[s].max[k]);
      cross_mins_[s] = float_key(box_[s].min[cross_[k]]);
      cross_maxs_[s] = float_key(box_[s].max[cross_[k]]);
    }
    lists_[k].build(ops.added, min_keys_, max_keys_, cross_mins_, cross_maxs_);
  }
  live_ = ops.added.size();
  std::vector<IndexPair> found;
  complete_pairs(ops.added_boxes, found);
  for (const IndexPair& p : found) {
    if (filter_.accepts(ops.added[p.i], ops.added[p.j])) pairs.add(ids[ops.added[p.i]], ids[ops.added[p.j]]);
  }
  for (std::vector<std::uint32_t>* keys : {&min_keys_, &max_keys_, &cross_mins_, &cross_maxs_}) free_storage(*keys);
}

void SegmentedSap::remove_object(Slot s, std::span<const Id> ids, PairManager& pairs) {
  const Box3& box = box_[s];
  lists_[0].for_each_candidate(s, [&](Slot o) {
    if (overlaps(box, box_[o])) pairs.remove(ids[s], ids[o]);
  });
  for (int k = 0; k < axes_; ++k) lists_[k].erase(s);
  --live_;
}

// Local sort of each axis. The box is written first, so a test at any swap
// sees the new box on every axis: a swap that starts the overlap on one axis
// adds the pair iff the boxes overlap now; one that ends it removes the pair
// iff it was one, that is iff the old box overlapped (the pair set is exact
// before each move), a box test instead of a hash lookup. Each test looks
// at the entries' cross bounds first and reads a box only if they overlap.
void SegmentedSap::move_object(Slot s, const Box3& box, std::span<const Id> ids, PairManager& pairs) {
  const Box3 old = box_[s];
  box_[s] = box;
  for (int k = 0; k < axes_; ++k) {
    const int ck = cross_[k];
    const std::uint32_t old_lo = float_key(old.min[ck]), old_hi = float_key(old.max[ck]);
    const auto passed = [&](const SegmentedList::Entry& moving, const SegmentedList::Entry& other) {
      // Only a min passing a max matters: a max rightward or a min leftward
      // starts the overlap on this axis, the other way ends it. The test on
      // the cross axis (new bounds for a start, old for an end) is branch-
      // free, so the one branch below is rarely taken and well predicted.
      const bool moving_max = SegmentedList::is_max(moving.word);
      const bool starts = (moving.word > other.word) == moving_max;
      const std::uint32_t lo = starts ? moving.cross_min : old_lo, hi = starts ? moving.cross_max : old_hi;
      const bool hit = static_cast<unsigned>(SegmentedList::is_max(other.word) != moving_max) &
                       static_cast<unsigned>(other.cross_min <= hi) & static_cast<unsigned>(lo <= other.cross_max);
      if (!hit) return;
      const Slot o = SegmentedList::owner(other.word);
      if (starts) {
        if (overlaps(box, box_[o]) && filter_.accepts(s, o)) pairs.add(ids[s], ids[o]);
      } else if (overlaps(old, box_[o])) {
        pairs.remove(ids[s], ids[o]);
      }
    };
    lists_[k].move(s, float_key(box.min[k]), float_key(box.max[k]), float_key(box.min[ck]), float_key(box.max[ck]),
                   passed);
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
    const SegmentedList& list = lists_[k];
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
        const SegmentedList::Entry& e = list.chunk_entries(list.place(s, is_max).chunk)[list.index_of(s, is_max)];
        if (e.cross_min != float_key(box_[s].min[cross_[k]]) || e.cross_max != float_key(box_[s].max[cross_[k]]))
          return false;
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
  settings.finish("segmented-sap's only setting is chunk");
  return std::make_unique<SegmentedSap>(options, config);
}

std::unique_ptr<Algorithm> make_segmented_sap_with(const Options& options, const SegmentedSapConfig& config) {
  return std::make_unique<SegmentedSap>(options, config);
}

}  // namespace sapling::detail
