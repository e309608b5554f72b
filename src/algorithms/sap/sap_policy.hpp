// sap's policy: which path a frame of the sweep-and-prune takes (walk the
// moves, prune the changed boxes against the resting set, or recompute every
// pair), chosen by one function over the frame's counts and the last
// measurements, as in Tracy, Buss and Woods 2009, sections 3.2.1 and 4.
// The structures it drives: sap_endpoints.hpp (the walk) and
// resting_set.hpp; sap.cpp applies the choice.
//
// The model: each path's cost in nanoseconds, from the constants below, and
// the cheapest wins. The walk's swaps are predicted from the last walk's
// swaps per moved object (the mobility); a walk that runs over its budget
// stops and the frame takes the fallback. Stale endpoint arrays (after a
// frame not walked) are rebuilt only when that pays, or now and then to
// measure the mobility again (a probe), at growing intervals while probes
// fail. Pure arithmetic: no state, no allocation.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "sapling/box.hpp"

namespace sapling::detail {

// What the parts of a frame cost, in nanoseconds, as measured with
// `sapling run` on the tracy scene at 100k boxes (x86-64, one thread). Only
// their ratios matter: they pick the cheaper path for each frame.
// Where they come from and what they decide: docs/algorithms/sap.md, "Tuning".
constexpr double kSwapNs = 4;  ///< one swap of a walk
// What a walk costs per moved box besides its swaps: reading its box and
// the positions of its six endpoints, rewriting their keys, comparing each
// with its neighbours. Those are a dozen reads scattered over arrays of the
// whole world's endpoints, so the cost grows with the world (the arrays'
// size) and, less, with the share of it that moves (how many of those lines
// one frame touches): in a world of 100k cubes, 230 ns a move with 100 to
// 1,000 movers, 405 with 10,000, 580 with all of them moving; only in a
// world of a few thousand boxes does it fall to a recomputation's cost per
// box. The batch update pays less per moved box (its passes read the
// entries in order). Measured as the path's frame (bench/walk_cost.cpp;
// docs/algorithms/sap.md, "What a move costs"): with every box moving, on
// allmoving3d at speed 1 and 10 per mille, less box pruning's frame, plus
// its 46, less the swaps' share (kWalkNsPerMove, keyed by the world's
// size); with 1% of the boxes or fewer moving, on tracy at speed 1 per
// mille (a swap every few moves), the walk's frame over the moves
// (kWalkNsPerFewMoves). Interpolated in log(world) between the points, flat
// beyond, then between the two in log(moved share) from 1% to 100%.
struct CostPoint {
  double boxes, ns;
};
inline constexpr CostPoint kWalkNsPerMove[] = {{4096, 55},     {10'000, 100},  {30'000, 300},
                                               {100'000, 580}, {300'000, 580}, {1'000'000, 990}};
inline constexpr CostPoint kWalkNsPerFewMoves[] = {{4096, 55}, {10'000, 80}, {100'000, 230}, {1'000'000, 600}};
// The batch update's per moved box, keyed by the boxes moved (its passes
// read every entry in order whatever moves; a moved box's own are random).
inline constexpr CostPoint kBatchNsPerMove[] = {{10'000, 40}, {100'000, 115}, {1'000'000, 165}};
constexpr double kRecomputeNsPerBox = 46;   ///< box pruning of all boxes, and the pair manager's diff
constexpr double kRecomputeNsPerPair = 20;  ///< a current pair found again and diffed (46 + 20 x tracy's 0.2 = 50)
constexpr double kRestoreNsPerBox = 60;     ///< rebuilding the endpoint arrays
constexpr double kRebuildNsPerBox = 20;     ///< rebuilding the arrays after removals or additions
constexpr double kMergeNsPerNewBox = 300;   ///< a new box's endpoints sorted and merged, and its pairs found
constexpr double kBipartiteNsPerBox = 35;   ///< bipartite box pruning of new boxes, per old box
constexpr double kScanNsPerEntry = 1.5;     ///< scanning an array entry for a new box's pairs
constexpr double kPrepareNsPerBox = 25;     ///< laying out the resting set (sorting every box into a grid)
constexpr double kMergeNsPerBox = 10;       ///< laying it out again by merging into the last (update_prepared())
constexpr double kQueryNsPerBox = 104;      ///< a changed box: sorted into the grid, searched
/// A changed box's pair dropped and found again: in a world of 100k cubes at
/// 5% to 60% density (0.4 to 5 pairs a box), 60 ns a pair with 1,000 boxes
/// changed and 140 with 10,000 (the pair table out of cache).
constexpr double kQueryNsPerPair = 60;
constexpr double kRestingSweepNs = 5;       ///< a resting entry in a cell swept for the changed boxes
constexpr double kSparseQueryNs = 40;       ///< a changed box searching its cell's resting entries (sparse sweep)
constexpr double kActiveNsPerBox = 40;      ///< an active box not changed this frame, paired with the changed
constexpr double kPairScanNs = 1.5;         ///< a current pair, scanned for the changed boxes' pairs
constexpr double kDropSearchNsPerBox = 60;  ///< a removed or moved box searching the set for the pairs it had
constexpr double kOneSearchNsPerBox = 15;   ///< one search's extra per changed box over pair_changed()'s
// The single-pass batch update (3.2.1, sap_batch.cpp), measured the same
// way at 3,000 to 100k boxes (docs/algorithms/sap.md, "The single-pass batch
// update"): a pass over every axis array, the sweep sets on the first and
// last axes when boxes come or go (their bookkeeping per box, and per box
// removed or added a scan of the open boxes, ~n^(2/3) in a uniform world),
// and the insertion sort's swaps, counted per swap the walk would take.
/// The passes, and the positions they rewrite, per box, keyed by the
/// world's size: 12 ns in cache; out of it, with a few thousand to 10,000
/// boxes moving, 25 at 100k boxes and 35 at 1M (tracy at speed 1 per mille,
/// path=batch, the frame less its moves' share).
inline constexpr CostPoint kBatchNsPerBox[] = {{10'000, 12}, {100'000, 25}, {1'000'000, 35}};
constexpr double kBatchSweepNsPerBox = 30;    ///< the sweep sets' bookkeeping, in a frame with churn
constexpr double kBatchEventNs = 4;           ///< per box added or removed, per n^(2/3) of open boxes scanned
constexpr double kBatchSwapNs = 3;            ///< the insertion sort, per swap of the walk predicted
constexpr double kWalkSwapsPerBatchSwap = 2;  ///< the walk's swaps for one of the sort's, measured (tracy scene)
/// Frames over which a new resting set must pay for itself.
constexpr double kPrepareAmortization = 8;
/// Moved objects walked before their swaps are extrapolated to all.
constexpr std::size_t kProjectAfter = 32;
/// Recomputed frames in a row before the incremental path is retried; the
/// streak doubles after each failed retry, up to the maximum.
constexpr std::uint32_t kMinProbeInterval = 4;
constexpr std::uint32_t kMaxProbeInterval = 64;

/// Live boxes from which stale endpoint arrays are rebuilt a step a frame
/// (SapEndpoints::stage()) in the frames before a probe, instead of at once
/// in the probe's frame; below, a rebuild costs little either way.
constexpr std::size_t kStageMinBoxes = 8192;
/// A step of that rebuild (a pass over one axis' entries), per live box:
/// 1.0 to 1.6 ms at 100k boxes (tracy at 5% to 60% density), up to 4 where
/// it first touches the arrays' memory.
constexpr double kStageStepNsPerBox = 14;
/// The most a staged step may cost, in frames of the path it rides on:
/// where it would cost more, the arrays stay stale (no probe) and the
/// frames stay on that path.
constexpr double kStageStepFrames = 4;

/// The paths of a frame.
enum class SapPath : std::uint8_t {
  kWalk,       ///< walk the moves, merge the additions, compact the removals (valid arrays)
  kProbe,      ///< the same on stale arrays, rebuilt first, to measure the mobility again
  kResting,    ///< prune the changed boxes against the resting set
  kRecompute,  ///< find every pair again by box pruning
  kBatch,      ///< the single-pass batch update of 3.2.1 (valid arrays)
};

/// What sap measured in earlier frames, and its probe schedule.
struct SapHistory {
  double mobility = 0;                               ///< swaps per moved object, last walk
  double walk_displacement = 0;                      ///< how far those objects moved, on average (moved_by())
  bool measured = false;                             ///< whether a walk or a batch update has measured the mobility
  double scan_length = 0;                            ///< entries scanned per new object, last planned
  std::uint32_t recompute_streak = 0;                ///< frames in a row not walked with stale arrays
  std::uint32_t probe_interval = kMinProbeInterval;  ///< streak length after which a probe is due
};

/// A frame's counts, as they stand before the frame is applied.
struct SapFrameCounts {
  std::size_t kept = 0;                         ///< live boxes that stay (live minus removed)
  std::size_t added = 0;                        ///< boxes added
  std::size_t removed = 0;                      ///< boxes removed
  std::size_t moved = 0;                        ///< boxes moved
  std::size_t pairs = 0;                        ///< current pairs
  bool arrays_valid = true;                     ///< whether the endpoint arrays are up to date
  bool stages_rebuild = false;                  ///< whether stale arrays are rebuilt a step a frame (kStageMinBoxes)
  double stage_step_frames = kStageStepFrames;  ///< the most a staged step may cost, in frames of the path
  std::size_t active = 0;         ///< active boxes of the resting set (moved or added since it was laid out)
  std::size_t dead_resting = 0;   ///< laid-out boxes since moved or removed
  std::size_t resting = 0;        ///< boxes laid out in the resting set's grid
  std::size_t resting_cells = 0;  ///< that grid's cells
};

/// The choice for one frame.
struct SapChoice {
  SapPath path = SapPath::kWalk;           ///< the path to take
  SapPath fallback = SapPath::kRecompute;  ///< kResting or kRecompute: where a walk that stops goes
  bool stale = false;                      ///< stale arrays not worth rebuilding: counts toward the probe streak
  bool prepare = false;                    ///< the resting path lays out a new resting set first
  bool probe_may_pay =
      false;               ///< stale: a probe could be chosen when due (the churn alone costs less than the fallback)
  double swap_budget = 0;  ///< swaps the walk may spend before the fallback is cheaper
  double probe_budget_ns = 0;  ///< kProbe: what the probe's walk must stay under (walk_could_pay())
  double walk_fixed_ns = 0;    ///< kProbe: of that, what its moves cost besides their swaps (walk_ns_per_move())
};

/// One of the tables above at `boxes`, interpolated in log(boxes).
template <std::size_t N>
inline double cost_at(const CostPoint (&table)[N], double boxes) noexcept {
  if (boxes <= table[0].boxes) return table[0].ns;
  for (std::size_t k = 1; k < N; ++k) {
    if (boxes <= table[k].boxes) {
      const double t = std::log(boxes / table[k - 1].boxes) / std::log(table[k].boxes / table[k - 1].boxes);
      return table[k - 1].ns + t * (table[k].ns - table[k - 1].ns);
    }
  }
  return table[N - 1].ns;
}

/// What a walk costs per moved box besides its swaps, in a world of `live`
/// boxes of which `moved` move.
inline double walk_ns_per_move(double live, double moved) noexcept {
  const double few = cost_at(kWalkNsPerFewMoves, live), all = cost_at(kWalkNsPerMove, live);
  if (!(moved * 100 > live)) return few;
  const double t = std::min(1.0, std::log(moved * 100 / live) / std::log(100.0));
  return few + t * (all - few);
}

/// What laying out a new resting set costs per live box: a merge into the
/// last one where there is one (it declines only where the grid no longer
/// suits the boxes), else a layout from scratch.
inline double layout_ns_per_box(const SapFrameCounts& f) noexcept {
  return f.resting != 0 ? kMergeNsPerBox : kPrepareNsPerBox;
}

/// Whether the resting path should lay out a new resting set first: when the
/// active boxes that did not change this frame, paired again every frame,
/// and the dead entries, swept every frame, would soon cost more.
inline bool wants_preparation(const SapFrameCounts& f) noexcept {
  const std::size_t changed = f.moved + f.added, live = f.kept + f.added;
  const double idle = double(f.active - changed);
  const double waste = kActiveNsPerBox * idle + kRestingSweepNs * double(f.dead_resting);
  return waste * kPrepareAmortization > layout_ns_per_box(f) * double(live);
}

/// What dropping the pairs of the removed and moved boxes costs on the
/// resting path (ns): a scan of every pair, or each box searching the
/// resting set, the active boxes and the other changed boxes with its box
/// before the frame (RestingSet::drop_pairs()), whichever is cheaper.
inline double drop_search_cost(const SapFrameCounts& f) noexcept {
  return kDropSearchNsPerBox * double(f.moved + f.removed) + kActiveNsPerBox * double(f.active);
}
inline bool drops_by_search(const SapFrameCounts& f) noexcept {
  return drop_search_cost(f) < kPairScanNs * double(f.pairs);
}
/// What the drop costs where the frame may instead be one search of the
/// changed boxes (RestingSet::update_changed(): larger search boxes, and
/// each box met read and tested against the box now), and whether it is.
inline double one_search_cost(const SapFrameCounts& f) noexcept {
  return kOneSearchNsPerBox * double(f.moved + f.added + f.removed);
}
inline bool takes_one_search(const SapFrameCounts& f) noexcept {
  return one_search_cost(f) < std::min(kPairScanNs * double(f.pairs), drop_search_cost(f));
}

/// What the resting path would cost (ns).
inline double resting_cost(const SapFrameCounts& f) noexcept {
  const std::size_t changed = f.moved + f.added, live = f.kept + f.added;
  const double drop_ns = std::min(kPairScanNs * double(f.pairs), drop_search_cost(f));
  const double pairs_per_box = 2.0 * double(f.pairs) / double(std::max<std::size_t>(1, f.kept + f.removed));
  double ns = (kQueryNsPerBox + kQueryNsPerPair * pairs_per_box) * double(changed + f.removed);
  double resting = double(f.resting), cells = double(std::max<std::size_t>(1, f.resting_cells));
  if (wants_preparation(f)) {
    // The old pairs dropped first (one search needs the set as it was).
    ns += drop_ns;
    // The layout serves the frames after this one too: charged amortized,
    // so that a frame due for one does not turn to a walk or a probe.
    ns += layout_ns_per_box(f) * double(live - changed) / kPrepareAmortization;
    resting = double(live - changed);
    cells = std::max(1.0, resting / 256);  // a guess: the grid is not chosen yet
  } else {
    ns += kActiveNsPerBox * double(f.active - changed) + std::min(drop_ns, one_search_cost(f));
  }
  // The query boxes land in about one cell each, whose resting entries are
  // swept, or, where they are few, searched from each (the sparse sweep).
  return ns +
         std::min(kRestingSweepNs * resting * std::min(1.0, double(changed) / cells), kSparseQueryNs * double(changed));
}

/// What the single-pass batch update would cost (ns), on valid arrays: its
/// passes, and per moved box its entries rewritten and its swaps.
inline double batch_cost(const SapFrameCounts& f, const SapHistory& h) noexcept {
  const double n = double(f.kept + f.added), events = double(f.added + f.removed);
  const double per_move = cost_at(kBatchNsPerMove, double(f.moved));
  double ns = cost_at(kBatchNsPerBox, n) * n + (per_move + kBatchSwapNs * h.mobility) * double(f.moved);
  if (events > 0) ns += kBatchSweepNsPerBox * n + kBatchEventNs * events * std::cbrt(n * n);
  return ns;
}

/// Picks the frame's path: the cheapest of recomputing, the resting set,
/// the single-pass batch update (on valid arrays) and the walk (compaction, merging and pairing of the new boxes, and
/// the swaps predicted from the last measured mobility). With stale arrays the walk must also pay for rebuilding them
/// soon, else it is only a probe when one is due; the caller confirms a probe with walk_could_pay().
inline SapChoice choose_sap_path(const SapFrameCounts& f, const SapHistory& h) noexcept {
  const double n = double(f.kept);
  const double recompute_ns = kRecomputeNsPerBox * double(f.kept + f.added) + kRecomputeNsPerPair * double(f.pairs);
  const double resting_ns = resting_cost(f);
  // Leaving the walk with valid arrays makes them stale: a later walk pays
  // for rebuilding them, counted here spread over a few frames.
  const double stale_ns = f.arrays_valid ? kRestoreNsPerBox * n / kPrepareAmortization : 0.0;
  const double alternative_ns = std::min(recompute_ns, resting_ns) + stale_ns;
  double churn_ns = f.removed == 0 && f.added == 0 ? 0.0 : kRebuildNsPerBox * n;
  churn_ns += kMergeNsPerNewBox * double(f.added);
  if (f.added != 0) {
    const double scan_ns = kScanNsPerEntry * h.scan_length * double(f.added);
    churn_ns += std::min(kBipartiteNsPerBox * n, scan_ns);
  }
  const double walk_fixed_ns = walk_ns_per_move(double(f.kept + f.added), double(f.moved)) * double(f.moved);
  const double incremental_ns = churn_ns + walk_fixed_ns + kSwapNs * h.mobility * double(f.moved);

  SapChoice c;
  c.fallback = resting_ns <= recompute_ns ? SapPath::kResting : SapPath::kRecompute;
  c.path = incremental_ns <= alternative_ns ? SapPath::kWalk : c.fallback;
  c.prepare = wants_preparation(f);
  // The batch update only on a measured mobility: it cannot stop midway as
  // a walk does, and a frame of boxes thrown anywhere would sort them all.
  // With stale arrays it rebuilds them first, as a walk does.
  double sorted_ns = incremental_ns;  // the cheaper of the two on sorted arrays
  if (f.moved + f.added + f.removed != 0 && (h.measured || f.moved == 0)) {
    const double batch_ns = batch_cost(f, h);
    sorted_ns = std::min(sorted_ns, batch_ns);
    if (batch_ns < incremental_ns && batch_ns < alternative_ns) c.path = SapPath::kBatch;
  }
  if (!f.arrays_valid && sorted_ns + kRestoreNsPerBox * n > alternative_ns &&
      (sorted_ns > alternative_ns / 2 || !h.measured || f.stages_rebuild)) {
    // Stale arrays, and rebuilding them would not pay for itself soon (or
    // the mobility was never measured, as after a mass insertion, or the
    // world is large enough that a rebuild in one frame would be a spike,
    // dozens of its frames: it is staged instead): only now and then, to
    // measure the mobility again (a probe), and only when the swaps could
    // decide it.
    c.stale = true;
    const bool due = h.recompute_streak + 1 >= h.probe_interval;
    c.probe_may_pay = churn_ns + walk_fixed_ns < alternative_ns &&
                      (!f.stages_rebuild || kStageStepNsPerBox * n <= f.stage_step_frames * alternative_ns);
    c.path = due && f.moved != 0 && c.probe_may_pay ? SapPath::kProbe : c.fallback;
    c.probe_budget_ns = alternative_ns - churn_ns;
    c.walk_fixed_ns = walk_fixed_ns;
  }
  // Swaps the walk can afford before another path is cheaper.
  c.swap_budget = std::max(0.0, (alternative_ns - churn_ns - walk_fixed_ns) / kSwapNs);
  return c;
}

/// Whether a frame that added `added` of its `live` boxes inserted so many
/// that it lays out the endpoint arrays and the resting set for all of them
/// itself (a quarter or more of the boxes new): a cost in proportion to the
/// insertion, which the next frame would otherwise pay in one go.
inline bool lays_out_after_insertion(std::size_t added, std::size_t live) noexcept {
  return added != 0 && 4 * added >= live;
}

/// How far a box moved: the sum over axes of how far each bound moved.
inline double moved_by(const Box3& from, const Box3& to) noexcept {
  double d = 0;
  for (int k = 0; k < 3; ++k) {
    if (from.min[k] != to.min[k]) d += std::abs(double(to.min[k]) - double(from.min[k]));
    if (from.max[k] != to.max[k]) d += std::abs(double(to.max[k]) - double(from.max[k]));
  }
  return d;
}

/// Whether a probe's walk of `moved` objects, which moved `displacement` on
/// average (a sample), might spend less than `budget_ns` on swaps: the last walk's
/// swaps scaled by how far the objects move now against then, so that a
/// probe, which first rebuilds the arrays, is spent only when the motion has
/// calmed down.
inline bool walk_could_pay(const SapHistory& h, double displacement, std::size_t moved, double budget_ns) noexcept {
  if (!(h.walk_displacement > 0) || !std::isfinite(h.walk_displacement)) return true;  // nothing to scale
  const double swaps = h.mobility * displacement / h.walk_displacement;
  return std::isfinite(swaps) && kSwapNs * swaps * double(moved) < budget_ns;
}

/// Whether a probe is due whatever walk_could_pay() predicts: the probe schedule says so, and rebuilding the
/// arrays at once costs at most a quarter of the frame's alternative (`budget_ns`,
/// SapChoice::probe_budget_ns: a world where re-finding the pairs dominates, as in a stack or a pile), so that
/// the probe's frame costs little more than the others. The last walk may have been unlike the motion now
/// (the first after an insertion crosses every tie of a grid of equal bounds), and only a walk measures it.
inline bool probe_overdue(const SapHistory& h, std::size_t live, double budget_ns) noexcept {
  return h.recompute_streak >= h.probe_interval && 4 * kRestoreNsPerBox * double(live) <= budget_ns;
}

/// Whether a walk that has spent `swaps` on the first `done` of `moved`
/// objects stops: over its budget, or on course to be.
inline bool walk_over_budget(double swaps, std::size_t done, std::size_t moved, double budget) noexcept {
  return done < moved && (swaps > budget || (done >= kProjectAfter && swaps * double(moved) > budget * double(done)));
}

/// The probe interval after a probe: back to the minimum when its walk
/// finished, else doubled, up to the maximum.
inline std::uint32_t next_probe_interval(bool walked, std::uint32_t interval) noexcept {
  return walked ? kMinProbeInterval : std::min(2 * interval, kMaxProbeInterval);
}

/// Old boxes' worth of array entries that new boxes may scan for their
/// pairs before bipartite box pruning of them is cheaper.
inline double scan_budget_entries(std::size_t old_boxes) noexcept {
  return kBipartiteNsPerBox * double(old_boxes) / kScanNsPerEntry;
}

}  // namespace sapling::detail
