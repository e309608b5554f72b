// The rule `auto` chooses its algorithm by (auto_select.cpp runs it): a pure
// function from a few figures of the workload to the name of a registered
// algorithm and the reason, in words, so that it can be tested and printed
// on its own. The measurements behind it: docs/algorithms/auto.md.
//
// sap adapts in place: it picks among walking its moves, pruning the
// changed boxes against its resting set and recomputing by box pruning,
// frame by frame, each within 1.3x of the best algorithm for that frame
// (multi-sap where few of a million boxes move, box-pruning where most
// move). A switch to another algorithm costs a build of the world (a
// handover over frames, or a frame that allocates everything anew), more
// than those margins save in the first hundreds of frames. So:
//
// - a new world starts on sap, whatever it holds (its first frame within
//   1.2x of the fastest first frame on every suite's scene);
// - in 3D it stays on sap;
// - in a plane (every box flat on z) where 35% of the world or more
//   changes every frame, a recomputing algorithm of its own is faster
//   than sap (unisize for boxes of one size, 1.0-1.2x box pruning;
//   dual-axis for mixed sizes), and is left again only below 25%
//   (hysteresis); but boxes of one size only up to rounding (not exact
//   translates of the first box in float: what a program moving its boxes
//   by float steps has) stay on sap, where unisize's sweep would take its
//   slower path (1.5-2x sap's frame);
// - a mass insertion on a recomputing algorithm stays recomputing.
//
// Not seen here: static objects (the BroadPhase keeps them apart, so the
// algorithm never meets them) and the spread of the world (costly to keep
// under removals; one size and flatness are kept exactly instead).
#pragma once

#include <cstddef>
#include <string_view>

#include "algorithms/auto/candidates.hpp"

namespace sapling::detail {

/// What `auto` knows of the workload after a frame's operations.
struct Workload {
  std::size_t live = 0;         ///< live objects after the frame
  double moved_share = 0;       ///< moved / live before, averaged over recent frames
  double churn_share = 0;       ///< (added + removed) / live before, averaged likewise
  bool one_size = false;        ///< every live box has the size of the reference box
  bool exact_size = false;      ///< ... and is exactly [min, min + size] in float (unisize's fast path)
  bool flat = false;            ///< every live box has a zero extent on z (a plane)
  double pairs_per_box = 0;     ///< pairs before the frame / live objects before it
  bool first_frame = false;     ///< nothing was live before (no motion seen yet)
  bool mass_insertion = false;  ///< this frame adds at least as many objects as were live
  bool new_world = false;       ///< the frame after the first: motion seen for the first time
};

/// The algorithm to run, why, and whether to switch now, without waiting
/// for the choice to hold several frames (only ever to a recomputing one).
struct Choice {
  std::string_view name;
  std::string_view reason;
  bool urgent = false;
};

/// Thresholds of the rule (the measurements behind them: docs/algorithms/auto.md).
// In a plane of 131k unit squares with a share of them moving
// (bench/plane_crossover, medians of 20 frames): sap against the faster of
// unisize and dual-axis 0.20x at 5% moving, 0.35x at 10%, 0.60x at 20%,
// 0.92x at 30%, 1.25x at 40%, 1.04x at 50% (sap recomputes itself there)
// and 1.03x at 70%.
inline constexpr double kMostMove = 0.35;           // this share changing each frame in a plane: recompute
inline constexpr double kStillMostMove = 0.25;      // ... and stay recomputing down to this share
inline constexpr std::size_t kUnisizeWorld = 1024;  // below, one size is no reason for unisize
// Exact squares, all moving (bench/results/auto-unisize.md at 7c3eacc, 131k
// to 1M squares, medians): box-pruning's frame against unisize's 0.83-1.01x
// at 0.4 pairs a box (density 200 per mille; 0.83x at 1M), 0.95-1.05x at
// 0.8 (400), 1.01-1.21x at 1.2 (600), 1.06-1.14x at 1.6 (800).
// At a million squares unisize's ranks and tree leave the caches: box-pruning
// against unisize 0.83-0.95x at 0.4 and 0.8 pairs a box, 0.93-1.01x at 1.2,
// 1.06x at 1.6 (two runs of the suite, 7c3eacc and ea4d1a8).
inline constexpr double kUnisizeOverlaps = 0.6;       // pairs a box from which unisize takes one size
inline constexpr double kStillUnisizeOverlaps = 0.5;  // ... and keeps it down to this
inline constexpr std::size_t kLargePlane = 786'432;   // from this many squares ...
inline constexpr double kLargeUnisizeOverlaps = 1.0;  // ... unisize takes them from this many pairs a box
inline constexpr double kStillLargeUnisizeOverlaps = 0.9;
inline constexpr std::size_t kMassInsertion = 4096;  // the smallest mass insertion recomputed

/// A choice must hold this many frames in a row before auto switches (but
/// an urgent one) to a recomputing algorithm ...
inline constexpr int kHoldFrames = 2;
/// ... and this many to a tracking one: handing it the world costs about
/// one insertion of the world, which only a lasting workload pays back.
inline constexpr int kTrackingHoldFrames = 16;
/// A tracking algorithm is handed the world in this many slices at most ...
inline constexpr std::size_t kHandoverFrames = 8;
/// ... of at least this many objects (a small world moves over in a frame).
inline constexpr std::size_t kMinSlice = 4096;

/// Frames a choice must hold before auto switches to it.
inline int hold_frames(std::string_view choice, const Candidates& candidates) {
  return candidates.recomputes(choice) ? kHoldFrames : kTrackingHoldFrames;
}

/// The algorithm for workload `w`, the one running now being `current`,
/// before the urgency of a new world (choose(), below).
inline Choice choose_by_figures(const Workload& w, std::string_view current, const Candidates& candidates) {
  const bool particles = w.exact_size && w.flat && w.live >= kUnisizeWorld;
  const bool rounded_particles = w.one_size && !w.exact_size && w.flat && w.live >= kUnisizeWorld;
  if (w.first_frame) return {"sap", "a new world: sap, which adapts in place, until the motion is seen"};
  if (w.mass_insertion && w.live >= kMassInsertion) {
    if (particles) return {"unisize", "a mass insertion of boxes of one size in a plane", true};
    if (current == "sap") return {"sap", "a mass insertion: sap lays it out in the pass that finds its pairs"};
    return {"box-pruning", "a mass insertion: recomputing builds it faster than inserting", true};
  }
  const double changing = w.moved_share + w.churn_share;
  const bool recomputing = candidates.recomputes(current);
  if (w.flat && (changing >= kMostMove || (recomputing && changing >= kStillMostMove))) {
    const bool large = w.live >= kLargePlane;
    const double overlaps = current == "unisize" ? (large ? kStillLargeUnisizeOverlaps : kStillUnisizeOverlaps)
                                                 : (large ? kLargeUnisizeOverlaps : kUnisizeOverlaps);
    if (particles && w.pairs_per_box >= overlaps) {
      return {"unisize", "a third or more of the boxes move, all of one size in a plane, overlapping"};
    }
    if (particles) return {"box-pruning", "a third or more of the boxes move, of one size in a plane, sparse"};
    if (rounded_particles) {
      return {"box-pruning", "a third or more of the boxes move, of one size up to rounding in a plane"};
    }
    return {"dual-axis", "a third or more of the boxes move, in a plane, of several sizes"};
  }
  if (current == "box-pruning" && changing >= kStillMostMove) {
    return {"box-pruning", "most boxes move every frame: recomputing beats tracking"};
  }
  if (changing >= kMostMove) return {"sap", "most boxes move: sap recomputes them by box pruning itself"};
  return {"sap", "a persistent world: sap walks, prunes against its resting set or recomputes, frame by frame"};
}

/// The algorithm for workload `w`: the frame after a new world's first
/// takes a recomputing choice at once (its frame costs about one of its
/// own; the world has been sap's for one frame only).
inline Choice choose(const Workload& w, std::string_view current, const Candidates& candidates) {
  Choice choice = choose_by_figures(w, current, candidates);
  choice.urgent = choice.urgent || (w.new_world && candidates.recomputes(choice.name));
  return choice;
}

}  // namespace sapling::detail
