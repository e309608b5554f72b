// segmented-sap: sweep and prune over segmented interval lists
// (segmented_sap.cpp teaches the method). Declared here for its tests.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "reference/segmented_sap/segmented_axis.hpp"
#include "sapling/algorithm.hpp"
#include "sapling/box.hpp"
#include "sapling/box_pruning.hpp"
#include "sapling/pair.hpp"

namespace sapling::detail {

/// When a frame sorts every list again from the live boxes (the global
/// path) instead of moving, erasing and inserting object by object (local).
enum class GlobalSort : std::uint8_t {
  kAuto,    ///< when the local sort is predicted to cost more (sorts_globally())
  kNever,   ///< only a batch into an empty world (the build): every other frame local
  kAlways,  ///< every frame with changes
};

/// What segmented-sap is built with beyond Options.
struct SegmentedSapConfig {
  /// Endpoints a chunk holds at most (at least 2), or 0: chosen from the
  /// world's size, twice the square root of the endpoints per axis rounded
  /// up to a power of two (16 to 8192; at most 256 for the y and z lists,
  /// which keep no checkpoints), at every global frame (a batch into an
  /// empty world among them; 256 until the first). The paper found about
  /// 25 best inside grid cells of ~300 objects, its authors' released code
  /// used 64; one list over a whole world wants larger chunks, since every
  /// chunk keeps the set of objects open at its edge. Measured:
  /// docs/algorithms/segmented-sap.md, "Chunk size".
  std::uint32_t chunk_capacity = 0;
  /// When a frame takes the global path (setting `global=auto|never|always`).
  GlobalSort global = GlobalSort::kAuto;
  /// With kAuto, a frame sorts globally when its local sort is predicted to
  /// cost at least this many times the global one (setting `global_at=F`;
  /// above 1 favours local frames). The model: sorts_globally().
  double global_at = 1;
  /// The chunk size for a world of `objects` boxes when chunk_capacity is 0.
  static std::uint32_t chunk_for(std::size_t objects);
};

// What the parts of a frame cost, in nanoseconds, measured with
// segmented_sap_bench on the tracy scene at 3,000, 100k and 1M boxes
// (x86-64, one thread; bench/results/segmented-sap.md, (e)). Only
// their ratios matter: they choose the cheaper path for each frame.
constexpr double kSwapNs = 12;           ///< an endpoint passed by a local sort
constexpr double kMoveNs = 60;           ///< a moved object's local sort, beyond its swaps
constexpr double kChurnNs = 300;         ///< an insertion or removal, beyond its query
constexpr double kQueryNsPerOpen = 9;    ///< its query, per object open at it (open_estimate())
constexpr double kGlobalNsPerBox = 180;  ///< a live box in a global frame: sorts, box pruning, diff,
constexpr double kGlobalNsGrowth = 150;  ///< plus this times sqrt(live / 1M) (caches missed more)

/// The objects a uniform world of `live` boxes has open at a point of the
/// x list, which an insertion's or removal's query scans: the sweep line's
/// population, live^(2/3) in 3D, live^(1/2) in 2D.
double open_estimate(std::size_t live, int axes);

/// A frame's counts, as they stand before it is applied.
struct SegmentedFrameCounts {
  std::size_t live = 0;     ///< objects live before the frame
  std::size_t removed = 0;  ///< objects removed
  std::size_t moved = 0;    ///< objects moved
  std::size_t added = 0;    ///< objects added
  double swaps = 0;         ///< endpoints the local sort of the moves would pass (predicted)
  int axes = 3;             ///< lists kept (2 for 2D)
};

/// Whether a frame sorts globally (Tracy, Buss and Woods 2009, section 4:
/// when the frame's insertion, removal and update events pass a
/// threshold). With kAuto: a batch into an empty world, or a local frame
/// predicted to cost at least global_at times a global one (the constants
/// above).
bool sorts_globally(const SegmentedSapConfig& config, const SegmentedFrameCounts& counts);

/// Persistent sweep and prune whose axes are segmented interval lists
/// (Tracy, Buss and Woods 2009, section 3.2.2), checkpoints on x.
class SegmentedSap final : public Algorithm {
 public:
  explicit SegmentedSap(const Options& options, SegmentedSapConfig config = {});

  Reported update(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) override;
  void reserve(std::size_t objects) override;
  std::size_t memory_bytes() const override;
  bool validate() const override;

  /// The list of axis k (0 holds the checkpoints).
  const SegmentedAxis& list(int k) const noexcept { return lists_[k]; }
  /// Frames that took the global path so far.
  std::uint64_t global_frames() const noexcept { return global_frames_; }
  /// Endpoints passed by local sorts so far.
  std::uint64_t swaps() const noexcept { return swaps_; }

 private:
  void add_object(Slot s, const Box3& box, std::span<const Id> ids, PairManager& pairs);
  void sort_globally(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs);
  void remove_object(Slot s, std::span<const Id> ids, PairManager& pairs);
  void move_object(Slot s, const Box3& box, std::span<const Id> ids, PairManager& pairs);
  void flip_pair(Slot s, Slot o, bool starts, const Box3& box, const Box3& old, std::span<const Id> ids,
                 PairManager& pairs);
  void give_back_memory();
  template <class Hit>
  void for_each_overlap(Slot s, const Box3& box, Hit&& hit) const;

  SegmentedSapConfig config_;
  int axes_;  // lists kept: 2 for 2D input (z is always [0, 0])
  std::array<SegmentedAxis, 3> lists_;
  std::vector<Box3> box_;  // by slot (live slots: lists_[0].contains())
  std::vector<Id> id_;     // by slot, for validate()
  std::size_t live_ = 0;
  std::size_t live_peak_ = 0;        // live objects at the last memory give-back, or most since
  PairFilter filter_;                // the frame's (FrameOps::filter)
  std::uint64_t global_frames_ = 0;  // frames sorted globally (global_frames())
  std::uint64_t swaps_ = 0;          // endpoints passed by local sorts (swaps())
  // Endpoints passed per unit of displacement (the sum over the moved
  // objects and axes of how far each endpoint moved), from the local frames
  // (decayed sums) or, before any, from the world's extent: it predicts a
  // frame's swaps from its displacement.
  double swept_ = 0, displaced_ = 0, density_ = 0;
  double displacement(const FrameOps& ops) const;
  void estimate_density();
  bool last_global_ = false;  // whether the last frame was
  // Scratch of sort_globally(), kept while global frames follow each other.
  std::vector<std::uint32_t> min_keys_, max_keys_;  // by slot
  std::vector<SegmentedAxis::Filter> filters_;      // by slot
  std::vector<std::uint8_t> gone_;                  // by slot: removed this frame
  std::vector<Slot> live_slots_;                    // the live slots, after the frame
  std::vector<Box3> dense_boxes_;                   // their boxes, in that order
  std::vector<IndexPair> found_;                    // pairs of dense_boxes_
  std::vector<Pair> frame_pairs_;                   // the frame's pairs, for PairManager::assign
  BoxPruner pruner_;                                // finds found_ (its buffers counted, given back alike)
  void give_back_scratch();
};

}  // namespace sapling::detail
