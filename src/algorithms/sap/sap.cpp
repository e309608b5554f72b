// sap: the persistent, incremental sweep and prune of Terdiman 2007, part I
// (sections I.2-I.6, appendices A and B; batch insertion and removal, I.4b,
// I.4c, I.5b), with Tracy, Buss and Woods 2009's per-frame choice between
// walking and recomputing (sections 3.2.1 and 4), their single-pass batch
// update (3.2.1, Table 2: sap_batch.cpp), and a path of ours: box pruning
// of the changed boxes against a resting set kept sorted between frames (as
// PhysX's automatic box pruning keeps its sleeping boxes).
// Structure and policy apart: the endpoint arrays (sap_endpoints.hpp), the
// resting set (resting_set.hpp), the path choice (sap_policy.hpp), the live
// boxes, read from the BroadPhase's store (live_boxes.hpp); this file
// applies the chosen path and reports the pairs.
//
// Invariants:
// - each axis array is sorted by rank (key, flag), a min before a max at
//   equal keys, so two boxes overlap (closed) iff their endpoint indices
//   interleave on every axis (I.3); sentinels rank below and above every
//   float's key, infinities included: any coordinate but NaN is valid;
// - the arrays stay sorted at every swap of a walk, so a swap needs no float
//   comparison; a removed box's entries overlap nothing until compacted;
// - after each frame the PairManager holds exactly the overlapping pairs.
//
// One frame (removals, moves, additions), by the path the policy picks:
// walk: removals tag entries and drop their pairs (I.5b), each moved box
// walks its endpoints by adjacent swaps and a min passing a max flips the
// pair iff the boxes overlap on the two other axes (I.3), additions are
// radix-sorted, merged in one pass per axis and paired by box pruning or
// short scans (I.4b, I.4c); batch: one pass per axis drops, merges and
// insertion-sorts, with sweep sets for the pairs of the boxes that come and
// go; resting: the changed boxes' pairs are dropped and found again against
// the resting set; recompute: every pair anew.
//
// Cost: nothing when nothing moves; O(moved + swaps) for moves, ~n^(2/3)
// swaps per moving box in a uniform 3D world; O(n) per frame with additions
// or removals, so insert in batches; O(changed + active + resting entries in
// their cells + pairs) on the resting-set path; O(n + pairs) recomputed.
// No frame pays a whole reorganisation where it can be spread: stale arrays
// are rebuilt a step a frame before a probe (SapEndpoints::stage()), a
// mass insertion lays out the arrays and the resting set for the frames
// after it, with room for a little more (reserve_geometric()), and the
// resting set is laid out again by merging into the last one, not sorted
// anew (docs/algorithms/sap.md, "Steady frames").
// About 500-600 bytes per object with the endpoint arrays, 95-120 at a
// million where the resting set serves alone, and ~73 per pair; no
// allocation once warm.
//
// Choose it for persistent worlds where a part of the objects moves each
// frame and objects come and go; box-pruning when nearly all move.
// The full method, measurements and tuning: docs/algorithms/sap.md.
#include "algorithms/sap/sap.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "algorithms/builtin.hpp"
#include "detail/reserve.hpp"
#include "detail/settings.hpp"

namespace sapling::detail {

SweepAndPrune::SweepAndPrune(const Options& options)
    : endpoints_(options.dims), tasks_(options), pruner_(tasks_.get()), resting_(pruner_) {
  pruner_.set_framed(true);  // a mass insertion's layout leaves its staging to the next frame's recomputation
}

SweepAndPrune::~SweepAndPrune() = default;

Reported SweepAndPrune::update(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) {
  pairs_ = &pairs;
  id_ = ids;
  live_.begin_frame(ops);
  reported_ = Reported::kChanges;
  filter_ = ops.filter;
  endpoints_.set_filter(ops.filter);
  resting_.set_filter(ops.filter);
  resting_.track(ops);
  if (endpoints_.staging()) {
    for (const std::span<const Slot> list : {ops.removed, ops.moved, ops.added}) endpoints_.note_changed(list);
  }
  if (!history_.measured && !endpoints_.current() && !ops.moved.empty()) estimate_mobility(ops);
  SapChoice choice = choose_sap_path(frame_counts(ops), history_);
  if (choice.stale) ++history_.recompute_streak;
  // An overdue probe rebuilds the arrays at once: a staged rebuild never ends in a world where most boxes move.
  const bool overdue = probe_overdue(history_, live_.size(), choice.probe_budget_ns);
  // A probe waits for the staged rebuild of the arrays, in worlds large enough to stage it.
  if (choice.path == SapPath::kProbe && !overdue && stages_rebuild() && endpoints_.stage_steps_left() > 0) {
    choice.path = choice.fallback;
  }
  // Whether the objects move slowly enough for a probe to pay (before the moves are applied).
  const bool calm =
      choice.stale && choice.probe_may_pay &&
      (ops.moved.empty() || overdue || probe_could_pay(ops, choice.probe_budget_ns - choice.walk_fixed_ns));
  if (choice.path == SapPath::kProbe && !calm) choice.path = choice.fallback;
  // One reorganisation a frame: a probe, which puts the arrays right, leaves
  // a new resting set to the next frame.
  if (choice.path == SapPath::kProbe) choice.prepare = false;
  if (walk_only_) {
    choice.path = SapPath::kWalk;
    choice.swap_budget = std::numeric_limits<double>::infinity();
  }
  if (batch_only_) choice.path = SapPath::kBatch;
  if (search_only_) choice.path = SapPath::kResting;
  switch (choice.path) {
    case SapPath::kBatch:
      batch_frame(ops);
      break;
    case SapPath::kWalk:
    case SapPath::kProbe:
      walk_frame(ops, choice);
      break;
    case SapPath::kResting:  // the walk's arrays, if valid, go stale either way
      drop_removed(ops.removed, false);
      prune_changed(ops, 0, choice.prepare);
      break;
    case SapPath::kRecompute:
      drop_removed(ops.removed, false);
      recompute(ops, 0);
      break;
  }
  if (lays_out_after_insertion(ops.added.size(), live_.size())) {
    if (!std::exchange(laid_out_, false)) {
      lay_out_all();
    } else if (!stages_rebuild()) {  // a small world: the arrays cost little, and the walk may start at once
      endpoints_.restore(live_);
      ++counters_.restores;
    }
  } else if (calm && !endpoints_.current() && !(choice.prepare && choice.path == SapPath::kResting) &&
             choice.path != SapPath::kProbe) {
    stage_for_probe();
  }
  pruner_.end_frame();
  live_.end_frame();
  return reported_;
}

// Whether stale arrays are rebuilt a step at a time before a probe, rather
// than all at once in the probe's frame.
bool SweepAndPrune::stages_rebuild() const noexcept { return live_.size() >= stage_min_boxes_; }

// One step of the staged rebuild when a probe comes near and could pay (the
// objects move slowly enough, the churn alone costs less than the fallback): the steps left, one a frame, end by the
// frame the probe is due. A rebuild whose boxes changed by a quarter since
// it began starts over.
void SweepAndPrune::stage_for_probe() {
  if (!stages_rebuild()) return;
  if (4 * endpoints_.staged_changes() > live_.size()) endpoints_.drop_staged();
  const int left = endpoints_.stage_steps_left();
  if (left > 0 && history_.recompute_streak + std::uint32_t(left) + 1 >= history_.probe_interval) {
    endpoints_.stage(live_, 1);
    ++counters_.staged_steps;
  }
}

// Brings stale arrays up to date: the staged rebuild finished if complete,
// else rebuilt at once.
void SweepAndPrune::bring_arrays_up_to_date() {
  if (stages_rebuild() && endpoints_.stage_steps_left() == 0) {
    endpoints_.finish_staged(live_);
    ++counters_.staged_restores;
  } else {
    endpoints_.restore(live_);
    ++counters_.restores;
  }
}

// After a mass insertion (a level loaded in one batch): the next frames
// must find ready what they use, in the frame whose cost already grows with
// the insertion (issue 13: the first move frame after 2.1M boxes inserted
// took 533 ms against 8 ms for the next). A recomputed insertion frame lays
// out the resting set in the pass that finds its pairs and builds the pair
// index (recompute()); the endpoint arrays are rebuilt there only in a small
// world, and in a large one left stale for the resting path, to be rebuilt a
// step a frame if a probe could pay (estimate_mobility()). An insertion frame
// on another path lays out both here.
void SweepAndPrune::lay_out_all() {
  if (!endpoints_.current()) {
    endpoints_.restore(live_);
    ++counters_.restores;
  }
  resting_.lay_out_all(live_);
  live_.release_dense();  // a layout's frame is O(n) already: the next frames give nothing back
  ++counters_.preparations;
}

// The frame's counts for the policy, after the resting set tracked the frame.
SapFrameCounts SweepAndPrune::frame_counts(const FrameOps& ops) const {
  SapFrameCounts f;
  f.kept = live_.size() - ops.removed.size();
  f.added = ops.added.size();
  f.removed = ops.removed.size();
  f.moved = ops.moved.size();
  f.pairs = pairs_->size();
  f.arrays_valid = endpoints_.current();
  f.stages_rebuild = stages_rebuild();
  f.stage_step_frames = stage_step_frames_;
  f.active = resting_.active();
  f.dead_resting = resting_.dead();
  f.resting = resting_.size();
  f.resting_cells = resting_.cells();
  return f;
}

// Whether a probe's walk might pay, from how far a sample of the moves goes.
bool SweepAndPrune::probe_could_pay(const FrameOps& ops, double budget_ns) const {
  const std::size_t sample = std::min<std::size_t>(ops.moved.size(), 64);
  double displacement = 0;
  for (std::size_t j = 0; j < sample; ++j) displacement += moved_by(live_.box(ops.moved[j]), ops.moved_boxes[j]);
  return walk_could_pay(history_, displacement / double(sample), ops.moved.size(), budget_ns);
}

// With stale arrays and no walk yet to measure it (after a mass insertion),
// the mobility is estimated from samples instead: the endpoints of a sample
// of the live boxes that lie between a sampled move's old and new bounds,
// scaled to the whole world, are the swaps its walk would make. A walk
// measures it exactly when one is taken. The sample is large enough to see
// a slow world's few crossings: with 512 boxes and 32 moves, 1,000 movers
// among 100k cubes passing 43 endpoints each showed about 7 sampled
// crossings (±39%), read 24 a move, and sent the world into a probe that
// failed (docs/algorithms/auto.md, "What is left"); 256 moves see about
// 55 (±14%). Each moved bound's span is found in the sorted sample by
// binary search: about 0.1-0.2 ms, once per world.
void SweepAndPrune::estimate_mobility(const FrameOps& ops) {
  constexpr std::size_t kMovers = 256, kWorld = 512;
  const std::size_t n = live_.size(), moved = ops.moved.size();
  if (n == 0 || moved == 0) return;
  const std::size_t movers = std::min(moved, kMovers), mover_stride = moved / movers;
  const std::size_t stride = std::max<std::size_t>(1, n / kWorld);
  double crossed = 0, displacement = 0;
  std::vector<float>& ends = estimate_ends_;
  for (int k = 0; k < 3; ++k) {
    ends.clear();
    for (std::size_t d = 0; d < n; d += stride)
      ends.insert(ends.end(), {live_.box_at(d).min[k], live_.box_at(d).max[k]});
    std::sort(ends.begin(), ends.end());
    // The sampled endpoints strictly between a bound's old and new value: the ones it passes.
    const auto passed = [&ends](float a, float b) {
      const auto first = std::upper_bound(ends.begin(), ends.end(), std::min(a, b));
      return double(std::lower_bound(first, ends.end(), std::max(a, b)) - first);
    };
    for (std::size_t j = 0; j < movers; ++j) {
      const Box3& from = live_.box(ops.moved[j * mover_stride]);
      const Box3& to = ops.moved_boxes[j * mover_stride];
      crossed += passed(from.min[k], to.min[k]) + passed(from.max[k], to.max[k]);
    }
  }
  for (std::size_t j = 0; j < movers; ++j)
    displacement += moved_by(live_.box(ops.moved[j * mover_stride]), ops.moved_boxes[j * mover_stride]);
  const double sampled = double((n + stride - 1) / stride);
  history_.mobility = crossed * double(n) / sampled / double(movers);
  history_.walk_displacement = displacement / double(movers);
  history_.measured = true;
}

// ---------------------------------------------------------------------------
// The walk (I.3-I.5b).

// Tags the removals (on valid arrays), rebuilds stale arrays, walks the moves
// within the choice's budget and, if all were walked, merges the additions;
// a walk that stops midway leaves the frame, its walked moves applied, to
// the fallback.
void SweepAndPrune::walk_frame(const FrameOps& ops, const SapChoice& choice) {
  const bool tagged = endpoints_.current() && !ops.removed.empty();
  drop_removed(ops.removed, tagged);
  if (!endpoints_.current()) bring_arrays_up_to_date();
  const SapEndpoints::Walked w =
      endpoints_.walk_moves(ops.moved, ops.moved_boxes, choice.swap_budget, live_, id_, *pairs_);
  if (w.done > 0) {
    history_.mobility = double(w.swaps) / double(w.done);
    history_.measured = true;
    history_.walk_displacement = w.displacement / double(w.done);
  }
  counters_.swaps += w.swaps;
  const bool finished = w.done == ops.moved.size();
  if (choice.path == SapPath::kProbe) {
    history_.recompute_streak = 0;
    history_.probe_interval = next_probe_interval(finished, history_.probe_interval);
  }
  if (finished) {
    finish_walk(ops, tagged);
    return;
  }
  ++counters_.aborted_walks;
  if (choice.fallback == SapPath::kResting) {
    prune_changed(ops, w.done, choice.prepare);
  } else {
    recompute(ops, w.done);
  }
}

// Removals and additions after a complete walk: pairs dropped, arrays
// compacted and merged in one pass, the new boxes paired.
void SweepAndPrune::finish_walk(const FrameOps& ops, bool tagged) {
  history_.recompute_streak = 0;
  remove_pairs_of(ops.removed);
  const std::size_t first_new = live_.size();
  add_objects(ops.added, ops.added_boxes);
  if (tagged || first_new < live_.size()) {
    endpoints_.merge(live_, first_new, tagged);
    if (tagged) counters_.compacted_boxes += ops.removed.size();
  }
  if (first_new < live_.size()) {
    counters_.merged_boxes += live_.size() - first_new;
    pair_added(first_new);
  }
  ++counters_.incremental_frames;
}

// The single-pass batch update (Tracy et al. 3.2.1, sap_batch.cpp): the
// live boxes brought to the frame's end, then every axis array in one pass
// each, which also drops the removed boxes' pairs and finds the new ones'.
void SweepAndPrune::batch_frame(const FrameOps& ops) {
  if (!endpoints_.current()) bring_arrays_up_to_date();
  double displacement = 0;
  for (std::size_t j = 0; j < ops.moved.size(); ++j) {
    displacement += moved_by(live_.box(ops.moved[j]), ops.moved_boxes[j]);
    live_.move(j);
  }
  drop_removed(ops.removed, false);
  const std::size_t first_new = live_.size();
  add_objects(ops.added, ops.added_boxes);
  const std::uint64_t swaps =
      endpoints_.batch_update({ops.moved, ops.moved_boxes, ops.removed, first_new}, live_, id_, *pairs_);
  if (!ops.moved.empty()) {
    history_.mobility = kWalkSwapsPerBatchSwap * double(swaps) / double(ops.moved.size());
    history_.measured = true;
    history_.walk_displacement = displacement / double(ops.moved.size());
  }
  history_.recompute_streak = 0;
  counters_.swaps += swaps;
  counters_.merged_boxes += ops.added.size();
  counters_.compacted_boxes += ops.removed.size();
  ++counters_.batch_frames;
}

// Drops the removed boxes from the dense list (each replaced by the last
// one); with `tag`, first tags their entries in the endpoint arrays (I.5b).
void SweepAndPrune::drop_removed(std::span<const Slot> removed, bool tag) {
  if (removed.empty()) return;
  if (tag) endpoints_.tag(removed);
  for (const Slot s : removed) live_.erase(s);
}

void SweepAndPrune::remove_pairs_of(std::span<const Slot> removed) {
  if (removed.empty()) return;
  removed_ids_.reset(removed.size());
  for (const Slot s : removed) removed_ids_.insert(id_[s]);
  pairs_->remove_if_involves([this](Id id) { return removed_ids_.contains(id); });
}

// ---------------------------------------------------------------------------
// Additions (I.4b, I.4c).

void SweepAndPrune::add_objects(std::span<const Slot> added, std::span<const Box3> boxes) {
  endpoints_.add(added, boxes);
  live_.add_all();  // the frame's additions, which `added` and `boxes` are
}

// The new boxes' pairs (I.4c): among themselves by complete box pruning;
// with the old boxes by scanning the arrays around each new box when that
// is short, else by bipartite box pruning.
void SweepAndPrune::pair_added(std::size_t first_new) {
  const std::span<const Box3> fresh = live_.added_boxes();  // the boxes from first_new on
  found_.clear();
  pruner_.complete(fresh, found_);
  add_found_pairs(first_new, first_new);
  if (first_new == 0) return;
  if (endpoints_.scan_added(live_, first_new, scan_budget_entries(first_new), id_, *pairs_, history_.scan_length)) {
    ++counters_.scanned_batches;
    return;
  }
  found_.clear();
  pruner_.bipartite(fresh, live_.dense().first(first_new), found_);
  live_.release_dense();
  add_found_pairs(first_new, 0);
  ++counters_.pruned_batches;
}

void SweepAndPrune::add_found_pairs(std::size_t offset_i, std::size_t offset_j) {
  for (const IndexPair& p : found_) {
    const Slot a = live_.slot(p.i + offset_i), b = live_.slot(p.j + offset_j);
    if (filter_.accepts(a, b)) pairs_->add(id_[a], id_[b]);
  }
}

// ---------------------------------------------------------------------------
// The global path (Tracy et al. section 4).

// Finishes the frame from scratch: the moves not walked yet and the
// additions are applied to the boxes, every pair is found by box pruning,
// and the pair manager diffs them against the previous frame. The endpoint
// arrays are left stale.
void SweepAndPrune::recompute(const FrameOps& ops, std::size_t moves_applied) {
  endpoints_.set_stale();  // first: the additions then size no positions (a million boxes' first frame: 24 MB)
  for (std::size_t j = moves_applied; j < ops.moved.size(); ++j) live_.move(j);
  add_objects(ops.added, ops.added_boxes);
  found_.clear();
  // A mass insertion lays out the resting set for the next frames: its
  // pairs come from the same pass.
  laid_out_ = lays_out_after_insertion(ops.added.size(), live_.size());
  // A frame that moves every box and adds none: its list of moved boxes is
  // the world, pruned as it stands, with no gather (pair ends by the list).
  const bool moved_whole = ops.added.empty() && ops.moved.size() == live_.size();
  if (laid_out_) {
    resting_.lay_out_all(live_, found_);
    live_.release_dense();
    ++counters_.preparations;
  } else {
    counters_.forgotten_grids += resting_.forget_dead_grid();  // its arrays, in memory already, serve complete()
    pruner_.complete(moved_whole ? ops.moved_boxes : live_.dense(), found_);
  }
  frame_pairs_.resize(found_.size());
  std::size_t kept = 0;
  const auto slot_of = [&](std::uint32_t i) { return moved_whole ? ops.moved[i] : live_.slot(i); };
  for (const IndexPair& p : found_) {
    const Slot a = slot_of(p.i), b = slot_of(p.j);
    if (filter_.accepts(a, b)) frame_pairs_[kept++] = make_pair(id_[a], id_[b]);
  }
  frame_pairs_.resize(kept);
  // Every pair of a mass insertion: the resting frames after it find a few.
  if (laid_out_) free_storage(found_);
  pairs_->assign(frame_pairs_);  // diffed in bulk (after walked moves: the general way)
  reported_ = Reported::kEveryPair;
  // The next frames are the resting set's: their pair changes need the
  // hash index, built here where it costs a fraction of the frame, unless
  // the boxes overlap so much that it would not (a static level of
  // scenery, as often queried once as stepped: its first step pays it).
  if (laid_out_ && pairs_->size() <= live_.size()) pairs_->build_index();
  ++counters_.recomputed_frames;
}

// ---------------------------------------------------------------------------
// Many moving: the resting set.

// Finishes the frame by pairing the boxes moved or added this frame again:
// their pairs are dropped, then found anew by the resting set (laid out
// again first with `prepare`). Pairs among unchanged boxes stand. The moves
// from `moves_applied` on are applied here; the endpoint arrays are left
// stale.
void SweepAndPrune::prune_changed(const FrameOps& ops, std::size_t moves_applied, bool prepare) {
  // Where the set stays laid out, the walk moved nothing (its swaps
  // changed pairs the boxes before the frame do not show) and the pairs
  // far outnumber the changes, the frame is one search of the changed
  // boxes (RestingSet::update_changed()).
  const bool one_search = moves_applied == 0 && !prepare && (search_only_ || takes_one_search(frame_counts(ops)));
  if (!one_search) drop_changed_pairs(ops, moves_applied == 0);
  endpoints_.set_stale();  // before the additions: they then size no positions
  for (std::size_t j = moves_applied; j < ops.moved.size(); ++j) live_.move(j);
  add_objects(ops.added, ops.added_boxes);
  if (one_search && resting_.update_changed(ops.removed, ops.moved, ops.added, live_, id_, *pairs_, found_)) {
    ++counters_.one_search_frames;
  } else {
    if (one_search) drop_changed_pairs(ops, false);  // the grid declined the search boxes
    resting_.pair_changed(ops.moved, ops.added, prepare, live_, id_, *pairs_, found_);
  }
  if (prepare) ++counters_.preparations;
  counters_.merged_layouts = resting_.merges();
  counters_.settled_boxes = resting_.settled();
  ++counters_.resting_frames;
}

// The pairs of the frame's removed and moved boxes go, before their pairs
// are found anew: with `may_search` (the walk moved none of them, and
// `live_` still holds their boxes before the frame) found by searching the
// set with those boxes where that costs less than a scan of every pair,
// else by the scan.
void SweepAndPrune::drop_changed_pairs(const FrameOps& ops, bool may_search) {
  if (ops.removed.empty() && ops.moved.empty()) return;
  const bool search = may_search && (search_only_ || drops_by_search(frame_counts(ops))) &&
                      resting_.drop_pairs(ops.removed, ops.moved, live_, id_, *pairs_, found_);
  counters_.searched_drops += search;
  if (search) return;
  removed_ids_.reset(ops.removed.size() + ops.moved.size());
  for (const Slot s : ops.removed) removed_ids_.insert(id_[s]);
  for (const Slot s : ops.moved) removed_ids_.insert(id_[s]);
  pairs_->remove_if_involves([this](Id id) { return removed_ids_.contains(id); });
}

// ---------------------------------------------------------------------------

std::size_t SweepAndPrune::memory_bytes() const {
  return live_.memory_bytes() + endpoints_.memory_bytes() + removed_ids_.memory_bytes() +
         found_.capacity() * sizeof(IndexPair) + estimate_ends_.capacity() * sizeof(float) +
         frame_pairs_.capacity() * sizeof(Pair) + resting_.memory_bytes() + pruner_.memory_bytes();
}

// Invariants after every update(): live_ maps the live slots one-to-one to
// dense indices; the endpoint arrays (if current) and the resting set match
// the live boxes (their validate()). (That the pair manager holds exactly
// the pairs there are, BroadPhase::validate() checks.)
void SweepAndPrune::debug_draw(DebugDraw& draw, std::span<const Id> ids) const {
  draw.count("swaps", counters_.swaps);
  draw.text("paths", paths_text());
  endpoints_.debug_draw(draw, ids);
}

// The frames by path and the arrays' rebuilds, in words: what `sapling run`
// prints of sap.
std::string SweepAndPrune::paths_text() const {
  const SapCounters& c = counters_;
  const auto n = [](std::uint64_t v) { return std::to_string(v); };
  return n(c.incremental_frames) + " walked, " + n(c.batch_frames) + " by the batch update, " + n(c.resting_frames) +
         " on the resting set, " + n(c.recomputed_frames) + " recomputed; arrays rebuilt " + n(c.restores) +
         " at once, " + n(c.staged_restores) + " a step a frame (" + n(c.staged_steps) + " steps); " +
         n(c.aborted_walks) + " walks abandoned";
}

bool SweepAndPrune::validate() const {
  if (!live_.valid() || !endpoints_.validate(live_) || !resting_.validate(live_)) return false;

  return true;
}

std::unique_ptr<Algorithm> make_sap(const Options& options) {
  SettingsReader settings(options.settings);
  const std::size_t path =
      settings.choice("path", 0, {"auto", "walk", "batch", "search"}, "sap: path is auto, walk, batch or search");
  settings.finish("sap's only setting is path (auto, walk, batch or search)");
  auto sap = std::make_unique<SweepAndPrune>(options);
  sap->set_walk_only(path == 1);
  sap->set_batch_only(path == 2);
  sap->set_search_only(path == 3);
  return sap;
}

}  // namespace sapling::detail
