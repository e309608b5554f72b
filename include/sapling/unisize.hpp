// One-shot unisize sweep and prune (Capannini and Larsson, "Output Sensitive
// Collision Detection for Unisize Boxes", SIGRAD 2016, Algorithm 1): every
// overlapping pair among boxes that all have one size, from scratch, with no
// state kept between calls but buffers. The persistent algorithm "unisize"
// (BroadPhase::create("unisize")) runs the same sweep each frame and diffs
// the pairs; this class is the sweep alone, what the paper's Table 1 times.
//
// Input rule, exactly as for "unisize": boxes of one size up to float
// rounding. boxes[0] fixes the size: on each axis size = max - min rounded
// to the nearest float (it must not overflow). Every box must have finite
// coordinates and, on each axis,
//   |(max - min) - size| <= 2^-10 size + 2^-16 (M + M0),
// M the largest |coordinate| of the box on that axis and M0 that of
// boxes[0], evaluated in double. 2^-16 M is 128..256 ulps of M: it covers
// boxes built as centre +- half extent at any magnitude (at most 1 ulp off
// each, boxes[0] included) and boxes moved by adding a step to min and max
// for thousands of frames (their extents drift by a random walk of at most
// 1 ulp a frame, 0.4 ulp typical: 5 sigma stays under 128 ulps for about
// 4000 frames); 2^-10 size covers an extent itself computed with some
// error. Other input is refused with StatusCode::kUnsupported, nothing is
// appended, and the Status names the first offending box by index()
// (Operation::kNone, message "box I: ..."; no ids here, id() is 0).
//
// Exact all the same: when every box is exactly [min, min + size] in float
// (any translate {p, p + size} built in float, as in the paper's scenes)
// the sweep runs on the boxes themselves; otherwise on the boxes enlarged
// to [min, min + S], S per axis the least float at least every box's
// extent, and each pair found is tested on the real boxes before it is
// reported.
//
// Cost: O(n) radix sorts plus O((n + |C|) log64 n) for the sweep in 2D and
// flat 3D worlds (|C| = pairs); in 3D the third axis is tested per
// candidate. Closed intervals: touching boxes overlap.
//
// The invariant the sweep rests on (the paper's Claim 1): with intervals of
// one length none contains another, so b overlaps a on the sorted axis iff
// exactly one of b's endpoints lies between a's, and every active rank in
// a's range is a pair, reported once.
//
// Choose it over BoxPruner for many boxes of one size with many overlaps
// (crowds, particles, tiles; flat worlds above all), where its time stays
// flat as the density grows; BoxPruner for sparse scenes or mixed sizes.
// The method: src/algorithms/unisize/unisize.cpp; measurements:
// docs/algorithms/unisize.md.
#pragma once

#include <span>
#include <vector>

#include "sapling/box.hpp"
#include "sapling/pair.hpp"
#include "sapling/status.hpp"
#include "sapling/task_system.hpp"

namespace sapling {

/// The unisize sweep with reusable buffers: no allocation per call once
/// warm. Not thread-safe: one UnisizePruner per thread. With a task system
/// of more than one thread, the strips of the first axis are swept in
/// parallel (tasks of about 32k boxes); the pairs and their order do not
/// depend on the thread count.
class UnisizePruner {
 public:
  explicit UnisizePruner(TaskSystem* tasks = nullptr);
  ~UnisizePruner();
  UnisizePruner(UnisizePruner&&) noexcept;
  UnisizePruner& operator=(UnisizePruner&&) noexcept;

  /// Appends every pair {i, j} of overlapping boxes, i < j, once each, or
  /// refuses boxes not all of one size (see above) and appends nothing.
  /// Order: deterministic for a given input (by strip of the first sorted
  /// axis, then by the sweep of the second).
  Status complete(std::span<const Box3> boxes, std::vector<IndexPair>& out);

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace sapling
