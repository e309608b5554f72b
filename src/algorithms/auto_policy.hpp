// The rule `auto` chooses its algorithm by (auto_select.cpp runs it): a pure
// function from a few figures of the workload to the name of a registered
// algorithm and the reason, in words, so that it can be tested and printed
// on its own. The thresholds come from the measurements of
// docs/algorithms/auto.md (and bench/results/persistent*.md, unisize*.md):
//
// - the first frame of a new world knows only its boxes: one size in a
//   plane is unisize's world (particles, crowds), anything else starts on
//   sap, the best start for a persistent world (a tracking algorithm built
//   later costs a handover); the next frame shows the motion, and a
//   recomputing choice is taken at once;
// - half of the world or more changing every frame: a recomputation wins
//   (unisize for one size in a plane, dual-axis for other flat worlds,
//   box-pruning in 3D); it is left again only below 30% (hysteresis);
// - a mass insertion (as many new objects as there were) is recomputed at
//   once: sap recomputes it itself, laying out its resting set in the same
//   pass (within 1.2x of box pruning, and the world stays ready for the
//   frames after); any other tracking algorithm hands it to box pruning;
// - a large world (50k objects or more) where 2% or fewer move and little
//   comes and goes: multi-sap, whose cost follows the movers;
// - otherwise sap.
//
// Not seen here: static objects (the BroadPhase keeps them apart, so the
// algorithm never meets them) and the spread of the world (costly to keep
// under removals; one size and flatness are kept exactly instead).
#pragma once

#include <cstddef>
#include <string_view>

namespace sapling::detail {

/// What `auto` knows of the workload after a frame's operations.
struct Workload {
  std::size_t live = 0;         ///< live objects after the frame
  double moved_share = 0;       ///< moved / live before, averaged over recent frames
  double churn_share = 0;       ///< (added + removed) / live before, averaged likewise
  bool one_size = false;        ///< every live box has the size of the reference box
  bool flat = false;            ///< every live box has a zero extent on z (a plane)
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
inline constexpr double kMostMove = 0.5;       // this share changing each frame: recompute
inline constexpr double kStillMostMove = 0.3;  // ... and stay recomputing down to this share
inline constexpr double kFewMove = 0.02;       // this share moving in a large world: multi-sap
inline constexpr double kLittleChurn = 0.01;   // ... with at most this share coming and going
inline constexpr std::size_t kLargeWorld = 50'000;
inline constexpr std::size_t kUnisizeWorld = 1024;   // below, one size is no reason for unisize
inline constexpr std::size_t kMassInsertion = 4096;  // the smallest mass insertion recomputed

/// A choice must hold this many frames in a row before auto switches (but
/// an urgent one, or the first frame's) to a recomputing algorithm ...
inline constexpr int kHoldFrames = 2;
/// ... and this many to a tracking one: handing it the world costs about
/// one insertion of the world (50 ms at 100k cubes), which its savings pay
/// back only over tens of frames (multi-sap saves 0.5-1 ms a frame on sap
/// there), so a short-lived workload is not worth it.
inline constexpr int kTrackingHoldFrames = 16;
/// ... and from sap to box-pruning this many: sap recomputes with box
/// pruning itself when most boxes move (its frame within 5% of
/// box-pruning's on allmoving3d at 10k and 100k and tracy-100k all moving),
/// while the switch's frame allocates every buffer of box pruning anew
/// (2.6x an ordinary frame at 1M cubes alone, up to 7x beside other worlds).
inline constexpr int kSapToBoxPruningHoldFrames = 16;
/// A tracking algorithm is handed the world in this many slices at most ...
inline constexpr std::size_t kHandoverFrames = 8;
/// ... of at least this many objects (a small world moves over in a frame).
inline constexpr std::size_t kMinSlice = 4096;

/// Whether `name` recomputes every pair each frame (PairManager::assign or
/// remove_all), so that it can take over a world at once, without being
/// handed the objects over several frames first.
inline bool recomputes(std::string_view name) {
  return name == "brute" || name == "sort-sweep" || name == "box-pruning" || name == "dual-axis" || name == "unisize";
}

/// Whether `current` already recomputes a frame the way `choice` would
/// (sap by box pruning, when most boxes move): switching then gains little
/// and costs the new algorithm's first allocation, so the choice holds long.
inline bool recomputes_alike(std::string_view current, std::string_view choice) {
  return current == "sap" && choice == "box-pruning";
}

/// Frames a choice must hold before auto switches from `current` to it.
inline int hold_frames(std::string_view current, std::string_view choice) {
  if (recomputes_alike(current, choice)) return kSapToBoxPruningHoldFrames;
  return recomputes(choice) ? kHoldFrames : kTrackingHoldFrames;
}

/// The algorithm for workload `w`, the one running now being `current`,
/// before the urgency of a new world (choose(), below).
inline Choice choose_by_figures(const Workload& w, std::string_view current) {
  const bool particles = w.one_size && w.flat && w.live >= kUnisizeWorld;
  if (w.first_frame) {
    if (particles) return {"unisize", "boxes of one size in a plane (particles, crowds, tiles)"};
    return {"sap", "a new world: sap, the best start for a persistent world, until motion is seen"};
  }
  if (w.mass_insertion && w.live >= kMassInsertion) {
    if (particles) return {"unisize", "a mass insertion of boxes of one size in a plane", true};
    if (current == "sap") return {"sap", "a mass insertion: sap lays it out in the pass that finds its pairs"};
    return {"box-pruning", "a mass insertion: recomputing builds it faster than inserting", true};
  }
  const double changing = w.moved_share + w.churn_share;
  const bool recomputing = recomputes(current);
  if (changing >= kMostMove || (recomputing && changing >= kStillMostMove)) {
    if (particles) return {"unisize", "most boxes move, all of one size in a plane"};
    if (w.flat) return {"dual-axis", "most boxes move, in a plane, of several sizes"};
    return {"box-pruning", "most boxes move every frame: recomputing beats tracking"};
  }
  if (w.live >= kLargeWorld && w.moved_share <= kFewMove && w.churn_share <= kLittleChurn) {
    return {"multi-sap", "a large world where few objects move: the cost follows the movers"};
  }
  return {"sap", "a persistent world where a part of the objects moves"};
}

/// The algorithm for workload `w`: the frame after a new world's first
/// takes a recomputing choice at once (its frame costs about one of its
/// own), unless it is box-pruning after sap, which holds
/// (hold_frames()).
inline Choice choose(const Workload& w, std::string_view current) {
  Choice choice = choose_by_figures(w, current);
  choice.urgent = choice.urgent || (w.new_world && recomputes(choice.name) && !recomputes_alike(current, choice.name));
  return choice;
}

}  // namespace sapling::detail
