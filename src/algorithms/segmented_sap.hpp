// segmented-sap: sweep and prune over segmented interval lists
// (segmented_sap.cpp teaches the method). Declared here for its tests.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "algorithms/segmented_list.hpp"
#include "sapling/algorithm.hpp"

namespace sapling::detail {

/// What segmented-sap is built with beyond Options.
struct SegmentedSapConfig {
  /// Endpoints a chunk holds at most (at least 2), or 0: chosen from the
  /// world's size, twice the square root of the endpoints per axis rounded
  /// up to a power of two (16 to 8192), whenever a batch fills an empty world
  /// (256 until then). The paper found about 25 best inside grid cells of
  /// ~300 objects, its authors' released code used 64; one list over a whole
  /// world wants larger chunks, since every chunk keeps the set of objects
  /// open at its edge. Measured: docs/algorithms/segmented-sap.md, "Chunk size".
  std::uint32_t chunk_capacity = 0;
  /// The chunk size for a world of `objects` boxes when chunk_capacity is 0.
  static std::uint32_t chunk_for(std::size_t objects);
};

/// Persistent sweep and prune whose axes are segmented interval lists
/// (Tracy, Buss and Woods 2009, section 3.2.2), checkpoints on x.
class SegmentedSap final : public Algorithm {
 public:
  explicit SegmentedSap(const Options& options, SegmentedSapConfig config = {});

  void update(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) override;
  void reserve(std::size_t objects) override;
  std::size_t memory_bytes() const override;
  bool validate() const override;

  /// The list of axis k (0 holds the checkpoints).
  const SegmentedList& list(int k) const noexcept { return lists_[k]; }

 private:
  void add_object(Slot s, const Box3& box, std::span<const Id> ids, PairManager& pairs);
  void build(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs);
  void remove_object(Slot s, std::span<const Id> ids, PairManager& pairs);
  void move_object(Slot s, const Box3& box, std::span<const Id> ids, PairManager& pairs);
  void give_back_memory();

  SegmentedSapConfig config_;
  int axes_;                           // lists kept: 2 for 2D input (z is always [0, 0])
  std::array<int, 3> cross_{1, 2, 0};  // each list's cross axis (2D: x and y each other's)
  std::array<SegmentedList, 3> lists_;
  std::vector<Box3> box_;  // by slot (live slots: lists_[0].contains())
  std::vector<Id> id_;     // by slot, for validate()
  std::size_t live_ = 0;
  std::size_t live_peak_ = 0;  // live objects at the last memory give-back, or most since
  std::vector<std::uint32_t> min_keys_, max_keys_, cross_mins_, cross_maxs_;  // scratch of build(), by slot
  PairFilter filter_;                                                         // the frame's (FrameOps::filter)
};

}  // namespace sapling::detail
