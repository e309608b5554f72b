// The query scenes' runner (runner.hpp, run_query_scene()): the world built
// by sapling and by the peer, the calls each answers the batch with, the
// check of their answers against sapling's, and the timed frames.
//
// Each world is built once per contender (untimed, its time printed); a
// first pass runs every call over the whole batch and compares its answers,
// query by query, with sapling's reference answers: the sorted ids of
// BroadPhase::query, and the hits of BroadPhase::ray_cast in (t, id) order;
// closest hits with the first of those. Then every frame runs each call over
// the batch, the calls in a rotating order; the figure is the median over
// the frames of (batch time / batch size), in nanoseconds per query.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "detail/aabb_tree.hpp"
#include "harness/report.hpp"
#include "harness/runner.hpp"
#include "harness/timing.hpp"
#include "sapling/broad_phase.hpp"

namespace sapling::bench {
namespace {

using sapling::detail::AabbTree;

// sapling's reference answers for a batch.
struct Answers {
  std::vector<Id> ids;
  std::vector<std::size_t> offsets;  // query k: ids[offsets[k], offsets[k + 1])
  std::vector<RayHit> hits;
  std::vector<std::size_t> hit_offsets;
};

// The queries a call answered differently on the checking pass: how many,
// and the first few (for brute force to arbitrate).
struct Mismatches {
  std::size_t count = 0;
  std::vector<std::size_t> first;
  void note(std::size_t k) {
    ++count;
    if (first.size() < 5) first.push_back(k);
  }
};

// One timed call: runs the whole batch and returns how many answers it gave
// (ids or hits); given the reference (the checking pass), it notes in
// `wrong` the queries whose answers differ.
using CallFn = std::function<std::size_t(const Answers* reference, Mismatches* wrong)>;

struct Call {
  QueryCallResult result;
  CallFn run;
  Mismatches mismatches;
  bool is_query = true;  // region queries (else rays)
};

void check(const Status& status) {
  if (!status) throw std::runtime_error(status.message());
}

Box2 flat(const Box3& b) { return Box2{{b.min[0], b.min[1]}, {b.max[0], b.max[1]}}; }

bool same_ids(std::vector<Id>& got, const Answers& ref, std::size_t k) {
  std::sort(got.begin(), got.end());
  return std::equal(got.begin(), got.end(), ref.ids.begin() + static_cast<std::ptrdiff_t>(ref.offsets[k]),
                    ref.ids.begin() + static_cast<std::ptrdiff_t>(ref.offsets[k + 1]));
}

bool same_hits(std::vector<RayHit>& got, const Answers& ref, std::size_t k) {
  std::sort(got.begin(), got.end());
  return std::equal(got.begin(), got.end(), ref.hits.begin() + static_cast<std::ptrdiff_t>(ref.hit_offsets[k]),
                    ref.hits.begin() + static_cast<std::ptrdiff_t>(ref.hit_offsets[k + 1]));
}

bool same_closest(bool found, const RayHit& hit, const Answers& ref, std::size_t k) {
  const bool any = ref.hit_offsets[k + 1] > ref.hit_offsets[k];
  return found == any && (!found || hit == ref.hits[ref.hit_offsets[k]]);
}

// What one query scene's run shares between its steps (as SceneRun does for
// a pair scene): the world, the batch, each contender's structure, the
// reference answers, the calls and the result being filled.
struct QueryRun {
  explicit QueryRun(const QuerySceneSpec& s)
      : spec(s), tiles(make_level_tiles(s.side, true, kLevelSeed)), batch(make_query_batch(s)) {}
  const QuerySceneSpec& spec;
  const std::vector<Box3> tiles;
  const QueryBatch batch;
  std::unique_ptr<BroadPhase> broad_phase;
  AabbTree tree;  // the static tiles alone (diagnosis)
  std::unique_ptr<QueryPeer> peer;
  Answers reference;
  std::vector<Call> calls;
  QuerySceneResult result;

  void add_call(std::string contender, std::string call, std::string note, std::size_t batch_size, CallFn run) {
    Call& c = calls.emplace_back();
    c.result.contender = std::move(contender);
    c.result.call = std::move(call);
    c.result.note = std::move(note);
    c.result.batch_size = batch_size;
    c.run = std::move(run);
  }
  // sapling's single region query, in the world's dimensions.
  Status query(const Box3& box, std::vector<Id>& out) const {
    return spec.dims == 2 ? broad_phase->query(flat(box), out) : broad_phase->query(box, out);
  }
};

// sapling's world: the tiles added (static or dynamic) and one update(); its build line.
void build_sapling(QueryRun& run) {
  const QuerySceneSpec& spec = run.spec;
  Options options;
  options.dims = spec.dims;
  run.broad_phase = BroadPhase::create(spec.algorithm, options);
  if (!run.broad_phase) throw std::runtime_error("no algorithm " + spec.algorithm);
  std::vector<Id> ids(run.tiles.size());
  for (std::size_t k = 0; k < ids.size(); ++k) ids[k] = static_cast<Id>(k);
  const Motion motion = spec.as_static ? Motion::kStatic : Motion::kDynamic;
  const Clock::time_point start = Clock::now();
  if (spec.dims == 2) {
    std::vector<Box2> footprints(run.tiles.size());
    std::transform(run.tiles.begin(), run.tiles.end(), footprints.begin(), flat);
    check(run.broad_phase->add(ids, footprints, {}, motion));
  } else {
    check(run.broad_phase->add(ids, run.tiles, {}, motion));
  }
  run.broad_phase->update();
  run.result.build_lines.push_back(
      "sapling BroadPhase \"" + spec.algorithm + "\", " + (spec.as_static ? "Motion::kStatic" : "dynamic") +
      ": add + update " + fixed(ms_since(start) / 1000, 2) + " s, " + std::to_string(run.broad_phase->pairs().size()) +
      " pairs, " + fixed(static_cast<double>(run.broad_phase->memory_bytes()) / 1048576.0, 0) + " MiB");
}

// The reference answers: sapling's single queries and all-hit ray casts.
void find_reference(QueryRun& run) {
  Answers& ref = run.reference;
  std::vector<Id> out;
  ref.offsets.push_back(0);
  for (const Box3& box : run.batch.boxes) {
    check(run.query(box, out));
    ref.ids.insert(ref.ids.end(), out.begin(), out.end());
    ref.offsets.push_back(ref.ids.size());
  }
  std::vector<RayHit> hits;
  ref.hit_offsets.push_back(0);
  for (const Ray3& ray : run.batch.rays) {
    check(run.broad_phase->ray_cast(ray, hits));
    ref.hits.insert(ref.hits.end(), hits.begin(), hits.end());
    ref.hit_offsets.push_back(ref.hits.size());
  }
}

// sapling's calls: the batched query (3D), single queries, all-hit and closest-hit rays.
void add_sapling_calls(QueryRun& run) {
  const std::string name = "sapling " + run.spec.algorithm + (run.spec.as_static ? " (static)" : "");
  const BroadPhase& bp = *run.broad_phase;
  const QueryBatch& batch = run.batch;
  if (run.spec.dims == 3) {
    run.add_call(name, "query (batched)", "BroadPhase::query_many(boxes, ids, offsets)", batch.boxes.size(),
                 [&](const Answers* r, Mismatches* wrong) {
                   std::vector<Id> out;
                   std::vector<std::size_t> offsets;
                   check(bp.query_many(batch.boxes, out, offsets));
                   if (r && !(out == r->ids && offsets == r->offsets)) wrong->count = batch.boxes.size();
                   return out.size();
                 });
  }
  run.add_call(name, "query", "BroadPhase::query(box, out), ids ascending", batch.boxes.size(),
               [&](const Answers* r, Mismatches* wrong) {
                 std::vector<Id> out;
                 std::size_t total = 0;
                 for (std::size_t k = 0; k < batch.boxes.size(); ++k) {
                   check(run.query(batch.boxes[k], out));
                   total += out.size();
                   if (r && !same_ids(out, *r, k)) wrong->note(k);
                 }
                 return total;
               });
  run.add_call(name, "ray (all hits)", "BroadPhase::ray_cast, sorted by (t, id)", batch.rays.size(),
               [&](const Answers* r, Mismatches* wrong) {
                 std::vector<RayHit> hits;
                 std::size_t total = 0;
                 for (std::size_t k = 0; k < batch.rays.size(); ++k) {
                   check(bp.ray_cast(batch.rays[k], hits));
                   total += hits.size();
                   if (r && !same_hits(hits, *r, k)) wrong->note(k);
                 }
                 return total;
               });
  run.add_call(name, "ray (closest)", "BroadPhase::ray_cast_closest", batch.rays.size(),
               [&](const Answers* r, Mismatches* wrong) {
                 std::optional<RayHit> hit;
                 std::size_t total = 0;
                 for (std::size_t k = 0; k < batch.rays.size(); ++k) {
                   check(bp.ray_cast_closest(batch.rays[k], hit));
                   total += hit.has_value();
                   if (r && !same_closest(hit.has_value(), hit.value_or(RayHit{}), *r, k)) wrong->note(k);
                 }
                 return total;
               });
}

// Diagnosis, not a public API: the static objects' tree alone
// (sapling::detail::AabbTree, as the BroadPhase builds it), answering as
// answer_query and cast_ray do but without their pass over the dynamic
// slots: what the BroadPhase's static queries cost without that pass.
void add_tree_calls(QueryRun& run) {
  if (!run.spec.as_static) return;
  std::vector<AabbTree::Slot> slots(run.tiles.size());
  std::vector<Box3> lifted(run.tiles.begin(), run.tiles.end());
  for (std::size_t k = 0; k < slots.size(); ++k) {
    slots[k] = static_cast<AabbTree::Slot>(k);
    if (run.spec.dims == 2) lifted[k].min[2] = lifted[k].max[2] = 0.0f;
  }
  run.tree.build(slots, lifted);
  const std::string name = "sapling AabbTree alone (diagnosis)";
  const AabbTree& tree = run.tree;
  const QueryBatch& batch = run.batch;
  run.add_call(name, "query", "sapling::detail::AabbTree::query, ids sorted", batch.boxes.size(),
               [&](const Answers* r, Mismatches* wrong) {
                 std::vector<Id> out;
                 std::size_t total = 0;
                 for (std::size_t k = 0; k < batch.boxes.size(); ++k) {
                   out.clear();
                   tree.query(batch.boxes[k], [&](AabbTree::Slot s) { out.push_back(s); });
                   std::sort(out.begin(), out.end());
                   total += out.size();
                   if (r && !same_ids(out, *r, k)) wrong->note(k);
                 }
                 return total;
               });
  run.add_call(name, "ray (all hits)", "sapling::detail::AabbTree::ray, hits sorted", batch.rays.size(),
               [&](const Answers* r, Mismatches* wrong) {
                 std::vector<RayHit> hits;
                 std::size_t total = 0;
                 for (std::size_t k = 0; k < batch.rays.size(); ++k) {
                   hits.clear();
                   const Ray3& ray = batch.rays[k];
                   tree.ray(ray, [&](AabbTree::Slot s, float t) {
                     hits.push_back({s, t});
                     return ray.max_t;
                   });
                   std::sort(hits.begin(), hits.end());
                   total += hits.size();
                   if (r && !same_hits(hits, *r, k)) wrong->note(k);
                 }
                 return total;
               });
  run.add_call(name, "ray (closest)", "sapling::detail::AabbTree::ray, bound lowered", batch.rays.size(),
               [&](const Answers* r, Mismatches* wrong) {
                 std::size_t total = 0;
                 for (std::size_t k = 0; k < batch.rays.size(); ++k) {
                   bool found = false;
                   RayHit best;
                   tree.ray(batch.rays[k], [&](AabbTree::Slot s, float t) {
                     const RayHit hit{s, t};
                     if (!found || hit < best) best = hit;
                     found = true;
                     return best.t;
                   });
                   total += found;
                   if (r && !same_closest(found, best, *r, k)) wrong->note(k);
                 }
                 return total;
               });
}

// The peer, unless left out or not compiled in: its world built (the time in a build line) and its calls.
void add_peer_calls(QueryRun& run, const std::vector<std::string>& excluded) {
  run.peer = make_query_peer(run.spec.peer);
  if (!run.peer || std::find(excluded.begin(), excluded.end(), run.peer->name()) != excluded.end()) {
    run.peer = nullptr;
    return;
  }
  QueryPeer& peer = *run.peer;
  const Clock::time_point start = Clock::now();
  peer.build(run.tiles, run.spec.as_static);
  run.result.build_lines.push_back(peer.name() + ": build " + fixed(ms_since(start) / 1000, 2) + " s; " + peer.note());
  const QueryBatch& batch = run.batch;
  run.add_call(peer.name(), "query", "exact ids from the candidates", batch.boxes.size(),
               [&](const Answers* r, Mismatches* wrong) {
                 std::vector<Id> out;
                 std::size_t total = 0;
                 for (std::size_t k = 0; k < batch.boxes.size(); ++k) {
                   peer.query(batch.boxes[k], out);
                   total += out.size();
                   if (r && !same_ids(out, *r, k)) wrong->note(k);
                 }
                 return total;
               });
  run.add_call(peer.name(), "ray (all hits)", "exact hits from the candidates", batch.rays.size(),
               [&](const Answers* r, Mismatches* wrong) {
                 std::vector<RayHit> hits;
                 std::size_t total = 0;
                 for (std::size_t k = 0; k < batch.rays.size(); ++k) {
                   peer.ray(batch.rays[k], hits);
                   total += hits.size();
                   if (r && !same_hits(hits, *r, k)) wrong->note(k);
                 }
                 return total;
               });
  run.add_call(peer.name(), "ray (closest)", "the first exact hit", batch.rays.size(),
               [&](const Answers* r, Mismatches* wrong) {
                 RayHit hit;
                 std::size_t total = 0;
                 for (std::size_t k = 0; k < batch.rays.size(); ++k) {
                   const bool found = peer.ray_closest(batch.rays[k], hit);
                   total += found;
                   if (r && !same_closest(found, hit, *r, k)) wrong->note(k);
                 }
                 return total;
               });
}

bool is_sapling(const QueryCallResult& c) { return c.contender.rfind("sapling", 0) == 0; }

// The checking pass (untimed): every call over the batch, its answers compared with the reference.
void check_calls(QueryRun& run) {
  for (Call& c : run.calls) {
    c.is_query = c.result.call.rfind("query", 0) == 0;
    c.result.answers = c.run(&run.reference, &c.mismatches);
    c.result.wrong = c.mismatches.count;
  }
}

// Where a call differs from sapling, brute force arbitrates: every box
// tested (overlaps(), ray_entry()) for the first differing queries.
void arbitrate(QueryRun& run) {
  for (const Call& c : run.calls) {
    for (const std::size_t k : c.mismatches.first) {
      std::vector<Id> brute_ids;
      std::vector<RayHit> brute_hits;
      for (std::size_t b = 0; b < run.tiles.size(); ++b) {
        Box3 box = run.tiles[b];
        if (run.spec.dims == 2) box.min[2] = box.max[2] = 0.0f;
        float t = 0.0f;
        if (c.is_query && overlaps(box, run.batch.boxes[k])) brute_ids.push_back(static_cast<Id>(b));
        if (!c.is_query && ray_entry(run.batch.rays[k], box, t)) brute_hits.push_back({static_cast<Id>(b), t});
      }
      std::sort(brute_hits.begin(), brute_hits.end());
      const bool sapling_right =
          c.is_query ? same_ids(brute_ids, run.reference, k) : same_hits(brute_hits, run.reference, k);
      run.result.build_lines.push_back(c.result.contender + " " + c.result.call + " differs on " +
                                       (c.is_query ? "query " : "ray ") + std::to_string(k) + ": brute force " +
                                       (sapling_right ? "agrees with sapling" : "DISAGREES with sapling"));
      if (!sapling_right && !is_sapling(c.result)) run.result.sapling_wrong = true;
    }
    if (is_sapling(c.result) && c.mismatches.count != 0) run.result.sapling_wrong = true;
  }
}

// The timed frames: every call over the whole batch, in frame_order().
void time_calls(QueryRun& run, int frames) {
  for (int f = 0; f < frames; ++f) {
    for (const std::size_t i : frame_order(run.calls.size(), static_cast<std::size_t>(f))) {
      Call& c = run.calls[i];
      if (c.result.batch_size == 0) continue;
      const Clock::time_point start = Clock::now();
      c.run(nullptr, nullptr);
      c.result.ns_per_query.push_back(ms_since(start) * 1e6 / static_cast<double>(c.result.batch_size));
    }
  }
}

}  // namespace

QuerySceneResult run_query_scene(const QuerySceneSpec& spec, const RunOptions& options,
                                 const std::vector<std::string>& excluded) {
  QueryRun run(spec);
  run.result.name = spec.name;
  run.result.boxes = run.tiles.size();
  run.result.queries = run.batch.boxes.size();
  run.result.rays = run.batch.rays.size();
  run.result.frames = options.frames >= 0 ? options.frames : spec.frames;
  if (options.progress) std::fprintf(stderr, "  %s: %zu boxes\n", spec.name.c_str(), run.tiles.size());
  build_sapling(run);
  find_reference(run);
  add_sapling_calls(run);
  add_tree_calls(run);
  add_peer_calls(run, excluded);
  check_calls(run);
  arbitrate(run);
  time_calls(run, run.result.frames);
  if (run.peer) {
    run.result.build_lines.push_back(run.peer->name() + ": " + std::to_string(run.peer->candidates()) +
                                     " candidates reported in all (before the exact filter)");
  }
  for (Call& c : run.calls) run.result.calls.push_back(std::move(c.result));
  return std::move(run.result);
}

}  // namespace sapling::bench
