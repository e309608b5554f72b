// One distributed frame (impl.hpp states the rule it rests on):
//
//   1. the directories check the frame's adds and removals across ranks;
//   2. every rank tells all its fault, if any, and its counts: a fault
//      anywhere refuses the frame everywhere, before anything changes;
//   3. the domains are drawn from samples of every rank's object centres,
//      and moved a step toward a new drawing when one rank holds 1.25x
//      the mean;
//   4. each owner sends each changed object to the ranks whose domain its
//      box meets now or met a frame ago (on a redraw, each unchanged one to
//      the ranks that gain or lose it); the owner's own share, most of
//      the changes, is applied where it is made, without a copy;
//   5. each rank applies what it received to its local broad phase, drops
//      the objects that left its domain a frame ago, and updates;
//   6. it keeps its share of the local delta: a created pair whose corner
//      (the least corner of the intersection) lies in its domain now and
//      that did not overlap a frame ago, a deleted pair whose corner a frame
//      ago lay in its domain then;
//   7. the owners' ledgers and the directories take the frame.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "detail/reserve.hpp"
#include "exchange.hpp"
#include "impl.hpp"

namespace sapling::mpi {

using detail::Before;
using detail::Claim;
using detail::Record;
using detail::Transfer;
using detail::Verdict;
using sapling::detail::IdIndex;
using sapling::detail::SlotState;

namespace {

// Redraw when the most loaded rank holds this many times the mean, at most
// once every kRedrawEvery frames, each cut moving past at most kRedrawStep
// of the objects on its two sides (bench/results/distributed.md, cluster).
constexpr double kRedrawImbalance = 1.25;
constexpr std::uint64_t kRedrawEvery = 4;
constexpr double kRedrawStep = 0.05;
// How far ahead a pass over scattered rows asks for them.
constexpr std::size_t kRowsAhead = 16;
// A mover's mark in `touched` when its box lies inside this rank's domain
// now and lay inside it a frame ago (Decomposition::holds()): it has no
// entry in `befores` (step 6 says why none is needed).
constexpr std::uint32_t kInside = sapling::detail::IdIndex::kNotFound - 1;

std::array<float, 3> corner(const Box3& a, const Box3& b) noexcept {
  return {std::max(a.min[0], b.min[0]), std::max(a.min[1], b.min[1]), std::max(a.min[2], b.min[2])};
}

[[noreturn]] void internal_error(const char* what, const Status& status) {
  std::fprintf(stderr, "sapling::mpi: internal error: the local broad phase refused %s: %s\n", what,
               status.message().c_str());
  std::abort();
}

void must(const Status& status, const char* what) {
  if (!status) internal_error(what, status);
}

}  // namespace

void detail::FrameScratch::clear(std::size_t ranks) {
  claims.resize(ranks);
  out.resize(ranks);
  for (auto& c : claims) c.clear();
  for (auto& o : out) o.clear();
  for (auto* v : {&removes, &moves, &refiltered, &adds, &static_adds, &leaving}) v->clear();
  for (auto* v : {&move_boxes, &add_boxes, &static_boxes}) v->clear();
  for (auto* v : {&refilters, &add_filters, &static_filters}) v->clear();
  told.clear();
  received.clear();
  befores.clear();
  inside_movers.clear();
}

const FrameDelta& DistributedBroadPhase::Impl::run_frame() {
  const double start = MPI_Wtime();
  created.clear();
  deleted.clear();
  delta = FrameDelta{};
  stats = FrameStats{};
  stats.ranks = ranks;
  if (ranks == 1) return run_alone(start);
  const sapling::detail::Stamp stamp = sapling::detail::frame_stamp(frame);
  std::size_t bytes = 0;
  const auto rank_count = static_cast<std::size_t>(ranks);

  // 1. The directories' check: removals first, then adds in rank order.
  detail::FrameScratch& x = scratch;
  x.clear(rank_count);
  std::vector<std::vector<Claim>>& claims = x.claims;
  for (std::size_t k = 0; k < staged.added.size(); ++k) {
    const Id id = objects.ids[staged.added[k]];
    claims[static_cast<std::size_t>(directory_rank(id))].push_back(Claim{id, static_cast<std::uint32_t>(k), 1});
  }
  for (const Slot s : staged.removed) {
    const Id id = objects.ids[s];
    claims[static_cast<std::size_t>(directory_rank(id))].push_back(Claim{id, 0, 0});
  }
  detail::exchange(comm, claims, x.told, x.send, bytes);
  const std::vector<Claim>& told = x.told;
  Verdict mine{0, 0, 0, 0, objects.live + staged.added.size() - staged.removed.size(), local->size()};
  {
    IdIndex &removing = x.removing, &adding = x.adding;  // (emptied below, their room kept)
    for (const Claim& c : told)
      if (!c.is_add) removing.insert(c.id, 0);
    for (const Claim& c : told) {
      if (!c.is_add) continue;
      StatusCode fault = StatusCode::kOk;
      if (adding.find(c.id) != IdIndex::kNotFound) {
        fault = StatusCode::kDuplicateId;  // added on two ranks this frame
      } else if (removing.find(c.id) != IdIndex::kNotFound) {
        fault = StatusCode::kRepeatedId;  // removed by its owner, added by another
      } else if (directory.find(c.id) != IdIndex::kNotFound) {
        fault = StatusCode::kDuplicateId;  // live on another rank
      }
      if (fault != StatusCode::kOk) {
        mine.code = static_cast<std::uint32_t>(fault);
        mine.op = static_cast<std::uint32_t>(Operation::kAdd);
        mine.id = c.id;
        mine.index = c.index;
        break;
      }
      adding.insert(c.id, 0);
    }
    for (const Claim& c : told) {
      IdIndex& claimed = c.is_add ? adding : removing;
      if (claimed.find(c.id) != IdIndex::kNotFound) claimed.erase(c.id);
    }
  }

  // 2. Every rank's verdict: the first fault, in rank order, refuses the frame.
  const std::vector<Verdict> verdicts = detail::all_gather(comm, std::vector<Verdict>{mine}, bytes);
  std::size_t total_owned = 0;
  for (const Verdict& v : verdicts) {
    stats.max_held = std::max<std::size_t>(stats.max_held, v.held);
    stats.total_held += v.held;
    total_owned += v.owned_after;
  }
  for (const Verdict& v : verdicts) {
    if (v.code == 0) continue;
    staged.drop(objects);
    forget_handovers();
    objects.advance(frame);
    stats.owned = objects.live;
    stats.held = local->size();
    stats.bytes_sent = bytes;
    stats.seconds = MPI_Wtime() - start;
    delta.status = Status::id_error(static_cast<StatusCode>(v.code), static_cast<Operation>(v.op), v.id, v.index);
    return delta;
  }
  sapling::detail::reserve_geometric(objects.free_slots, objects.free_slots.size() + staged.removed.size());
  const bool redraw =
      (planned.has_value() ||
       (total_owned > 0 && (!drawn || (stats.imbalance() > kRedrawImbalance && frame - drawn_at >= kRedrawEvery))));
  // The ledger takes the frame's boxes and filters: moved_boxes and
  // refilters now hold the old ones. The moved boxes wait for the records'
  // pass over their rows (step 4) unless the domains are drawn from them.
  staged.swap_filters(objects);
  const bool moves_placed = redraw;
  staged.apply_geometry(objects, moves_placed);

  // 3. The domains.
  before = now;
  if (planned) {
    now = *planned;
    planned.reset();
  } else if (redraw) {
    const std::size_t present = objects.live + staged.added.size() - staged.removed.size();
    const std::vector<detail::Sample> samples = detail::sample_centres(present, detail::kSamples, [&](auto&& visit) {
      for (Slot s = 0; s < objects.slots(); ++s) {
        const SlotState state = objects.states[s];
        if (state == SlotState::kLive || state == SlotState::kPendingAdd) visit(objects.boxes[s]);
      }
    });
    const std::vector<detail::Sample> all = detail::all_gather(comm, samples, bytes);
    // The first drawing is free; a redrawing moves each cut past at most
    // kRedrawStep of the objects beside it, so that a frame hands over
    // little, and the domains follow a drifting world over frames.
    now = drawn ? detail::Decomposition::shifted(now, all, options.dims, kRedrawStep)
                : detail::Decomposition::bisect(all, ranks, options.dims);
  }
  if (redraw) {
    drawn = true;
    drawn_at = frame;
    stats.redrawn = true;
  }

  // 4. The owners' records, and 5. the domain applies them. A record for
  // this rank is applied as it is made (in the order the exchange would
  // give it back); most changed objects lie inside this rank's domain now
  // and a frame ago, and go nowhere else.
  IdIndex& touched = x.touched;  // id -> its entry in `befores`, or kInside
  std::vector<Before>& befores = x.befores;
  std::vector<Id>& inside_movers = x.inside_movers;
  std::vector<Id>&removes = x.removes, &moves = x.moves, &refiltered = x.refiltered, &adds = x.adds,
  &static_adds = x.static_adds, &leaving = x.leaving;
  std::vector<Box3>&move_boxes = x.move_boxes, &add_boxes = x.add_boxes, &static_boxes = x.static_boxes;
  std::vector<Filter>&refilters = x.refilters, &add_filters = x.add_filters, &static_filters = x.static_filters;
  // `inside`: whether the record's boxes lie inside this domain, now and a
  // frame ago (send() knows; the few records from other ranks take the
  // general course).
  const auto apply = [&](const Record& r, bool inside) {
    if (inside && (r.flags & Record::kMoved) != 0) {
      touched.insert(r.id, kInside);
      inside_movers.push_back(r.id);
      moves.push_back(r.id), move_boxes.push_back(r.now);
      return;
    }
    // Held for sure when its box met this domain a frame ago; only the
    // others (adds, arrivals, last frame's leavers) need a lookup.
    const bool held = ((r.flags & Record::kLiveBefore) != 0 && before.meets(r.before, rank)) || local->contains(r.id);
    const bool live_now = (r.flags & Record::kLiveNow) != 0;
    touched.insert(r.id, static_cast<std::uint32_t>(befores.size()));
    befores.push_back(Before{r.id, r.before, r.filter_before, (r.flags & Record::kLiveBefore) != 0, !held && live_now});
    if (!live_now) {
      if (held) removes.push_back(r.id);
      return;
    }
    if (held) {  // (a record of an unchanged object, on a redraw, changes nothing here)
      if (r.flags & Record::kMoved) moves.push_back(r.id), move_boxes.push_back(r.now);
      if (r.flags & Record::kRefiltered) refiltered.push_back(r.id), refilters.push_back(r.filter_now);
    } else if (r.flags & Record::kStatic) {
      static_adds.push_back(r.id), static_boxes.push_back(r.now), static_filters.push_back(r.filter_now);
    } else {
      adds.push_back(r.id), add_boxes.push_back(r.now), add_filters.push_back(r.filter_now);
    }
    if (!now.meets(r.now, rank)) leaving.push_back(r.id);
  };
  std::vector<std::vector<Record>>& out = x.out;
  std::vector<int>&now_ranks = x.now_ranks, &before_ranks = x.before_ranks;
  const auto send = [&](const Record& r, const Box3* now_box, const Box3* before_box, bool changes_only) {
    const bool inside_now = now_box == nullptr || now.holds(*now_box, rank);
    const bool inside_before = before_box == nullptr || before.holds(*before_box, rank);
    if (inside_now && inside_before) {
      if (!(changes_only && now_box != nullptr && before_box != nullptr)) apply(r, true);
      return;
    }
    now_ranks.clear();
    before_ranks.clear();
    if (now_box != nullptr) now.for_each_rank(*now_box, [&](int q) { now_ranks.push_back(q); });
    if (before_box != nullptr) before.for_each_rank(*before_box, [&](int q) { before_ranks.push_back(q); });
    // Both lists ascend: a merge sends each rank one record (on a redraw,
    // an unchanged object goes only to the ranks in one list, not both).
    std::size_t i = 0, j = 0;
    while (i < now_ranks.size() || j < before_ranks.size()) {
      int q;
      bool both = false;
      if (j == before_ranks.size() || (i < now_ranks.size() && now_ranks[i] < before_ranks[j])) {
        q = now_ranks[i++];
      } else if (i == now_ranks.size() || before_ranks[j] < now_ranks[i]) {
        q = before_ranks[j++];
      } else {
        q = now_ranks[i++], ++j, both = true;
      }
      if (both && changes_only) continue;
      if (q == rank) {
        apply(r, false);
      } else {
        out[static_cast<std::size_t>(q)].push_back(r);
      }
    }
  };
  const auto record = [&](Slot s, std::uint32_t flags) {
    Record r{objects.ids[s], flags, objects.filter_of(s), objects.filter_of(s), objects.boxes[s], objects.boxes[s]};
    if (objects.is_static(s)) r.flags |= Record::kStatic;
    return r;
  };
  // The changes come in the user's order, their slots scattered: each loop
  // asks for the rows (and the id's entry in `touched`) ahead.
  const auto ask_rows_ahead = [&](std::span<const Slot> slots, std::size_t k) {
    if (k + kRowsAhead < slots.size()) {
      __builtin_prefetch(&objects.ids[slots[k + kRowsAhead]]);
      __builtin_prefetch(&objects.boxes[slots[k + kRowsAhead]]);
    }
    if (k + kRowsAhead / 2 < slots.size()) touched.prefetch(objects.ids[slots[k + kRowsAhead / 2]]);
  };
  for (std::size_t k = 0; k < staged.removed.size(); ++k) {
    ask_rows_ahead(staged.removed, k);
    const Record r = record(staged.removed[k], Record::kLiveBefore);
    send(r, nullptr, &r.before, false);
  }
  for (std::size_t k = 0; k < staged.moved.size(); ++k) {
    ask_rows_ahead(staged.moved, k);
    if (!moves_placed) staged.apply_move(objects, k);
    Record r = record(staged.moved[k], Record::kLiveNow | Record::kLiveBefore | Record::kMoved);
    r.before = staged.moved_boxes[k];
    send(r, &r.now, &r.before, false);
  }
  for (std::size_t k = 0; k < staged.added.size(); ++k) {
    ask_rows_ahead(staged.added, k);
    const Record r = record(staged.added[k], Record::kLiveNow);
    send(r, &r.now, nullptr, false);
  }
  for (std::size_t k = 0; k < staged.refiltered.size(); ++k) {
    Record r = record(staged.refiltered[k], Record::kLiveNow | Record::kLiveBefore | Record::kRefiltered);
    r.filter_before = staged.refilters[k];
    send(r, &r.now, &r.before, false);
  }
  if (redraw) {
    for (Slot s = 0; s < objects.slots(); ++s) {
      if (objects.states[s] != SlotState::kLive || objects.stamps[s] == stamp) continue;
      const Record r = record(s, Record::kLiveNow | Record::kLiveBefore);
      send(r, &r.now, &r.before, true);
    }
  }
  for (std::size_t q = 0; q < rank_count; ++q)
    if (static_cast<int>(q) != rank) stats.records_sent += out[q].size();
  detail::exchange(comm, out, x.received, x.send, bytes);
  for (const Record& r : x.received) apply(r, false);
  // ... and drops last frame's leavers.
  for (const Id id : departing) {
    if (touched.find(id) != IdIndex::kNotFound || !local->contains(id)) continue;
    touched.insert(id, static_cast<std::uint32_t>(befores.size()));
    befores.push_back(Before{id, *local->box(id), *local->filter(id), true, false});
    removes.push_back(id);
  }
  const double local_start = MPI_Wtime();
  must(local->remove(removes), "a removal");
  must(local->move(moves, move_boxes), "a move");
  must(local->set_filter(refiltered, refilters), "a filter");
  must(local->add(adds, add_boxes, add_filters, Motion::kDynamic), "an add");
  must(local->add(static_adds, static_boxes, static_filters, Motion::kStatic), "an add");
  const FrameDelta& local_delta = local->update();
  if (!local_delta.status) internal_error("a frame", local_delta.status);
  stats.local_seconds = MPI_Wtime() - local_start;

  // 6. This rank's share. A pair with a mover inside this domain (kInside)
  // is this rank's: its corner lies in that mover's box, which lies inside
  // the domain now and lay inside it a frame ago; and no object new to the
  // domain overlapped that box a frame ago (it would have been held). The
  // pairs come in id order, their entries in `touched` and `befores`
  // scattered: each pass asks for them ahead.
  const auto ask_ahead = [&](std::span<const Pair> pairs, std::size_t i) {
    if (i + kRowsAhead < pairs.size()) {
      touched.prefetch(pairs[i + kRowsAhead].a);
      touched.prefetch(pairs[i + kRowsAhead].b);
    }
    if (i + kRowsAhead / 2 < pairs.size()) {
      for (const Id id : {pairs[i + kRowsAhead / 2].a, pairs[i + kRowsAhead / 2].b})
        if (const std::uint32_t k = touched.find(id); k < kInside) __builtin_prefetch(&befores[k]);
    }
  };
  // An end's state a frame ago, from its entry `k` in `touched` (not kInside).
  const auto before_of = [&](Id id, std::uint32_t k) {
    if (k != IdIndex::kNotFound) return befores[k];
    return Before{id, *local->box(id), *local->filter(id), true, false};  // unchanged since a frame ago
  };
  for (std::size_t i = 0; i < local_delta.created.size(); ++i) {
    ask_ahead(local_delta.created, i);
    const Pair& p = local_delta.created[i];
    const std::uint32_t ka = touched.find(p.a), kb = touched.find(p.b);
    if (ka != kInside && kb != kInside) {
      if (now.rank_of(corner(*local->box(p.a), *local->box(p.b))) != rank) continue;
      // Both held a frame ago: the local broad phase judged that frame too.
      const bool fresh =
          (ka != IdIndex::kNotFound && befores[ka].fresh) || (kb != IdIndex::kNotFound && befores[kb].fresh);
      if (fresh) {
        const Before was_a = before_of(p.a, ka), was_b = before_of(p.b, kb);
        const bool overlapped = was_a.live && was_b.live &&
                                may_pair(was_a.filter, *local->motion(p.a), was_b.filter, *local->motion(p.b)) &&
                                overlaps(was_a.box, was_b.box);
        if (overlapped) continue;  // its corner crossed into this domain
      }
    }
    created.push_back(p);
  }
  for (std::size_t i = 0; i < local_delta.deleted.size(); ++i) {
    ask_ahead(local_delta.deleted, i);
    const Pair& p = local_delta.deleted[i];
    const std::uint32_t ka = touched.find(p.a), kb = touched.find(p.b);
    if (ka == kInside || kb == kInside ||
        before.rank_of(corner(before_of(p.a, ka).box, before_of(p.b, kb).box)) == rank)
      deleted.push_back(p);
  }

  // (The index stays allocated for the next frame.)
  for (const Before& b : befores) touched.erase(b.id);
  for (const Id id : inside_movers) touched.erase(id);

  // 7. The ledgers and directories take the frame.
  for (const Claim& c : told) {
    if (c.is_add) {
      directory.insert(c.id, 0);
    } else {
      directory.erase(c.id);
    }
  }
  staged.commit(objects);
  hand_over_objects(bytes);
  objects.advance(frame);
  departing.swap(leaving);  // (the old list becomes next frame's scratch)
  before = now;
  stats.owned = objects.live;
  stats.held = local->size();
  stats.bytes_sent = bytes;
  stats.seconds = MPI_Wtime() - start;
  delta = FrameDelta{created, deleted, {}};
  return delta;
}

void DistributedBroadPhase::Impl::hand_over_objects(std::size_t& bytes) {
  std::vector<std::vector<Transfer>>& out = scratch.transfers_out;
  out.resize(static_cast<std::size_t>(ranks));
  for (auto& o : out) o.clear();
  sapling::detail::reserve_geometric(objects.free_slots, objects.free_slots.size() + handed_ids.size());
  for (std::size_t k = 0; k < handed_ids.size(); ++k) {
    const Slot s = objects.slot_of_id.find(handed_ids[k]);
    out[static_cast<std::size_t>(handed_to[k])].push_back(
        Transfer{handed_ids[k], objects.is_static(s) ? 1u : 0u, objects.filter_of(s), objects.boxes[s]});
    objects.release(s, false);  // (a live object: its slot goes to the free list)
    --objects.live;
  }
  stats.handed_over = handed_ids.size();
  forget_handovers();
  detail::exchange(comm, out, scratch.transfers_in, scratch.send, bytes);
  const std::vector<Transfer>& in = scratch.transfers_in;
  objects.reserve_slots(objects.slots() + in.size());
  for (const Transfer& t : in) {
    objects.keep_filters_for({&t.filter, 1});
    objects.keep_motions_for(t.is_static ? Motion::kStatic : Motion::kDynamic);
    const Slot s = objects.allocate();
    objects.slot_of_id.insert(t.id, s);
    objects.ids[s] = t.id;
    objects.states[s] = SlotState::kLive;
    objects.stamps[s] = 0;
    objects.boxes[s] = t.box;
    if (objects.uses_filters) objects.filters[s] = t.filter;
    if (objects.uses_statics) objects.motions[s] = t.is_static ? Motion::kStatic : Motion::kDynamic;
    ++objects.live;
  }
}

// On one rank there is nothing to route: the staging calls went straight to
// the local broad phase (distributed_broad_phase.cpp), and its frame is the
// whole frame.
const FrameDelta& DistributedBroadPhase::Impl::run_alone(double start) {
  const double local_start = MPI_Wtime();
  const FrameDelta& whole = local->update();
  stats.local_seconds = MPI_Wtime() - local_start;
  created.assign(whole.created.begin(), whole.created.end());
  deleted.assign(whole.deleted.begin(), whole.deleted.end());
  forget_handovers();
  objects.advance(frame);
  stats.owned = stats.held = stats.max_held = stats.total_held = local->size();
  stats.seconds = MPI_Wtime() - start;
  delta = FrameDelta{created, deleted, whole.status};
  return delta;
}

}  // namespace sapling::mpi
