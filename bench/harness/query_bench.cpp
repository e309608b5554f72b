// The query benchmark (query_bench.hpp): worlds, batches, timing, checks.
//
// Each world is built once per contender (untimed, its time printed), then
// every frame runs each measured operation over the whole batch, the
// operations in a rotating order. An operation's answers on the first frame
// are compared, query by query, with sapling's reference answers: the sorted
// ids of BroadPhase::query, and the hits of BroadPhase::ray_cast in (t, id)
// order; closest hits with the first of those.
#include "harness/query_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <stdexcept>

#include "detail/aabb_tree.hpp"
#include "harness/scenes.hpp"
#include "sapling/box_pruning.hpp"
#include "sapling/broad_phase.hpp"
#include "scenarios/scenario.hpp"

namespace sapling::bench {

#if !SAPLING_BENCH_HAVE_BULLET
std::unique_ptr<QueryPeer> make_bullet_query_peer() { return nullptr; }
#endif
#if !SAPLING_BENCH_HAVE_BOX2D
std::unique_ptr<QueryPeer> make_box2d_query_peer() { return nullptr; }
#endif

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// One world: the level's tiles, how they are inserted, and the peer it is compared with.
struct World {
  std::string name;
  int dims = 3;
  bool as_static = true;
  std::string algorithm;  // sapling's BroadPhase algorithm (the dynamic objects' structure)
  std::size_t rays = 0;   // rays per batch (fewer where every ray tests every box)
  std::function<std::unique_ptr<QueryPeer>()> peer;
};

// The batch: region queries (centres over the level, half-widths 0.5..2 on x
// and y, the whole height on z) and rays (origins over the level at heights
// 0.2..2, directions of length 1 at a random heading, slope up to +-0.3,
// max_t 16), from scenario_math::Stream(kLevelSeed, 2^32 + k).
struct Batch {
  std::vector<Box3> boxes;
  std::vector<Ray3> rays;
};

Batch make_batch(std::size_t side, std::size_t queries, std::size_t rays, int dims) {
  Batch batch;
  const auto extent = static_cast<double>(side);
  for (std::size_t k = 0; k < queries; ++k) {
    scenario_math::Stream rng(kLevelSeed, (std::uint64_t{1} << 32) + k);
    const double cx = rng.u01() * extent, cy = rng.u01() * extent;
    const double hx = 0.5 + 1.5 * rng.u01(), hy = 0.5 + 1.5 * rng.u01();
    batch.boxes.push_back(Box3{{static_cast<float>(cx - hx), static_cast<float>(cy - hy), 0.0f},
                               {static_cast<float>(cx + hx), static_cast<float>(cy + hy), dims == 2 ? 0.0f : 2.5f}});
  }
  for (std::size_t k = 0; k < rays; ++k) {
    scenario_math::Stream rng(kLevelSeed, (std::uint64_t{1} << 33) + k);
    const double ox = rng.u01() * extent, oy = rng.u01() * extent, oz = 0.2 + 1.8 * rng.u01();
    const double heading = rng.u01() * 6.283185307179586, slope = (rng.u01() * 2 - 1) * 0.3;
    Ray3 r;
    r.origin = {static_cast<float>(ox), static_cast<float>(oy), dims == 2 ? 0.0f : static_cast<float>(oz)};
    r.direction = {static_cast<float>(std::cos(heading)), static_cast<float>(std::sin(heading)),
                   dims == 2 ? 0.0f : static_cast<float>(slope)};
    r.max_t = 16.0f;
    batch.rays.push_back(r);
  }
  return batch;
}

// sapling's reference answers for a batch.
struct Answers {
  std::vector<Id> ids;
  std::vector<std::size_t> offsets;  // query k: ids[offsets[k], offsets[k + 1])
  std::vector<RayHit> hits;
  std::vector<std::size_t> hit_offsets;
};

// One measured operation: runs the whole batch, returns how many answers it
// gave (ids or hits); on the checking pass it compares them with `reference`
// and counts the queries that differ.
struct Operation {
  std::string contender, call, note;
  std::size_t batch_size = 0;
  std::function<std::size_t(const Answers* reference, std::size_t* wrong)> run;
  std::vector<double> ns_per_query;  // one per frame
  std::size_t answers = 0, wrong = 0;
  std::vector<std::size_t> first_wrong;  // the first few queries answered differently
  bool checked = false;
  bool is_query = true;  // region queries (else rays)
};

// The checking pass counts differences in *wrong and keeps the first few
// query indices in wrong_queries (set before the pass).
std::vector<std::size_t>* wrong_queries = nullptr;
void note_wrong(std::size_t* wrong, std::size_t k) {
  ++*wrong;
  if (wrong_queries && wrong_queries->size() < 5) wrong_queries->push_back(k);
}

Operation make_op(std::string contender, std::string call, std::string note, std::size_t batch_size,
                  std::function<std::size_t(const Answers*, std::size_t*)> run) {
  Operation op;
  op.contender = std::move(contender);
  op.call = std::move(call);
  op.note = std::move(note);
  op.batch_size = batch_size;
  op.run = std::move(run);
  return op;
}

void check(const Status& status) {
  if (!status) throw std::runtime_error(status.message());
}

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

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string fixed(double x, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, x);
  return buffer;
}

struct WorldResult {
  std::string name, description;
  std::size_t boxes = 0, queries = 0, rays = 0;
  std::vector<std::string> build_lines;
  std::vector<Operation> operations;
  bool sapling_wrong = false;  // a sapling answer differed from another's, or from brute force
};

WorldResult run_world(const World& world, const std::vector<Box3>& tiles, std::size_t side, std::size_t queries,
                      int frames, bool progress, const std::vector<std::string>& excluded) {
  WorldResult result;
  result.name = world.name;
  result.boxes = tiles.size();
  const Batch batch = make_batch(side, queries, world.rays, world.dims);
  result.queries = batch.boxes.size();
  result.rays = batch.rays.size();
  if (progress) std::fprintf(stderr, "  %s: %zu boxes\n", world.name.c_str(), tiles.size());

  // sapling.
  Options options;
  options.dims = world.dims;
  std::unique_ptr<BroadPhase> bp = BroadPhase::create(world.algorithm, options);
  if (!bp) throw std::runtime_error("no algorithm " + world.algorithm);
  std::vector<Id> ids(tiles.size());
  for (std::size_t k = 0; k < ids.size(); ++k) ids[k] = static_cast<Id>(k);
  Clock::time_point start = Clock::now();
  if (world.dims == 2) {
    std::vector<Box2> flat(tiles.size());
    for (std::size_t k = 0; k < tiles.size(); ++k) {
      flat[k] = Box2{{tiles[k].min[0], tiles[k].min[1]}, {tiles[k].max[0], tiles[k].max[1]}};
    }
    check(bp->add(ids, flat, {}, world.as_static ? Motion::kStatic : Motion::kDynamic));
  } else {
    check(bp->add(ids, tiles, {}, world.as_static ? Motion::kStatic : Motion::kDynamic));
  }
  bp->update();
  result.build_lines.push_back("sapling BroadPhase \"" + world.algorithm + "\", " +
                               (world.as_static ? "Motion::kStatic" : "dynamic") + ": add + update " +
                               fixed(seconds_since(start), 2) + " s, " + std::to_string(bp->pairs().size()) +
                               " pairs, " + fixed(static_cast<double>(bp->memory_bytes()) / 1048576.0, 0) + " MiB");

  // The reference answers: single queries and all-hit ray casts.
  Answers ref;
  {
    std::vector<Id> out;
    ref.offsets.push_back(0);
    for (const Box3& box : batch.boxes) {
      check(world.dims == 2 ? bp->query(Box2{{box.min[0], box.min[1]}, {box.max[0], box.max[1]}}, out)
                            : bp->query(box, out));
      ref.ids.insert(ref.ids.end(), out.begin(), out.end());
      ref.offsets.push_back(ref.ids.size());
    }
    std::vector<RayHit> hits;
    ref.hit_offsets.push_back(0);
    for (const Ray3& ray : batch.rays) {
      check(bp->ray_cast(ray, hits));
      ref.hits.insert(ref.hits.end(), hits.begin(), hits.end());
      ref.hit_offsets.push_back(ref.hits.size());
    }
  }

  std::vector<Operation> ops;
  const std::string sapling_name = "sapling " + world.algorithm + (world.as_static ? " (static)" : "");
  if (world.dims == 3) {
    ops.push_back(make_op(sapling_name, "query (batched)", "BroadPhase::query(boxes, ids, offsets)", batch.boxes.size(),
                          [&](const Answers* r, std::size_t* wrong) {
                            std::vector<Id> out;
                            std::vector<std::size_t> offsets;
                            check(bp->query(std::span<const Box3>(batch.boxes), out, offsets));
                            if (r) *wrong = out == r->ids && offsets == r->offsets ? 0 : batch.boxes.size();
                            return out.size();
                          }));
  }
  ops.push_back(make_op(sapling_name, "query", "BroadPhase::query(box, out), ids ascending", batch.boxes.size(),
                        [&](const Answers* r, std::size_t* wrong) {
                          std::vector<Id> out;
                          std::size_t total = 0;
                          for (std::size_t k = 0; k < batch.boxes.size(); ++k) {
                            const Box3& box = batch.boxes[k];
                            check(world.dims == 2
                                      ? bp->query(Box2{{box.min[0], box.min[1]}, {box.max[0], box.max[1]}}, out)
                                      : bp->query(box, out));
                            total += out.size();
                            if (r && !same_ids(out, *r, k)) note_wrong(wrong, k);
                          }
                          return total;
                        }));
  ops.push_back(make_op(sapling_name, "ray (all hits)", "BroadPhase::ray_cast, sorted by (t, id)", batch.rays.size(),
                        [&](const Answers* r, std::size_t* wrong) {
                          std::vector<RayHit> hits;
                          std::size_t total = 0;
                          for (std::size_t k = 0; k < batch.rays.size(); ++k) {
                            check(bp->ray_cast(batch.rays[k], hits));
                            total += hits.size();
                            if (r && !same_hits(hits, *r, k)) note_wrong(wrong, k);
                          }
                          return total;
                        }));
  ops.push_back(make_op(sapling_name, "ray (closest)", "BroadPhase::ray_cast_closest", batch.rays.size(),
                        [&](const Answers* r, std::size_t* wrong) {
                          std::optional<RayHit> hit;
                          std::size_t total = 0;
                          for (std::size_t k = 0; k < batch.rays.size(); ++k) {
                            check(bp->ray_cast_closest(batch.rays[k], hit));
                            total += hit.has_value();
                            if (r && !same_closest(hit.has_value(), hit.value_or(RayHit{}), *r, k))
                              note_wrong(wrong, k);
                          }
                          return total;
                        }));

  // Diagnosis, not a public API: the static objects' tree alone
  // (sapling::detail::AabbTree, as the BroadPhase builds it), answering as
  // answer_query and cast_ray do but without their pass over the dynamic
  // slots: what the BroadPhase's static queries cost without that pass.
  sapling::detail::AabbTree tree;
  if (world.as_static) {
    std::vector<sapling::detail::AabbTree::Slot> slots(tiles.size());
    std::vector<Box3> lifted(tiles.begin(), tiles.end());
    for (std::size_t k = 0; k < slots.size(); ++k) {
      slots[k] = static_cast<sapling::detail::AabbTree::Slot>(k);
      if (world.dims == 2) lifted[k].min[2] = lifted[k].max[2] = 0.0f;
    }
    tree.build(slots, lifted);
    const std::string tree_name = "sapling AabbTree alone (diagnosis)";
    ops.push_back(make_op(tree_name, "query", "sapling::detail::AabbTree::query, ids sorted", batch.boxes.size(),
                          [&](const Answers* r, std::size_t* wrong) {
                            std::vector<Id> out;
                            std::size_t total = 0;
                            for (std::size_t k = 0; k < batch.boxes.size(); ++k) {
                              out.clear();
                              tree.query(batch.boxes[k], [&](sapling::detail::AabbTree::Slot s) { out.push_back(s); });
                              std::sort(out.begin(), out.end());
                              total += out.size();
                              if (r && !same_ids(out, *r, k)) note_wrong(wrong, k);
                            }
                            return total;
                          }));
    ops.push_back(make_op(tree_name, "ray (all hits)", "sapling::detail::AabbTree::ray, hits sorted", batch.rays.size(),
                          [&](const Answers* r, std::size_t* wrong) {
                            std::vector<RayHit> hits;
                            std::size_t total = 0;
                            for (std::size_t k = 0; k < batch.rays.size(); ++k) {
                              hits.clear();
                              const Ray3& ray = batch.rays[k];
                              tree.ray(ray, [&](sapling::detail::AabbTree::Slot s, float t) {
                                hits.push_back({s, t});
                                return ray.max_t;
                              });
                              std::sort(hits.begin(), hits.end());
                              total += hits.size();
                              if (r && !same_hits(hits, *r, k)) note_wrong(wrong, k);
                            }
                            return total;
                          }));
    ops.push_back(make_op(tree_name, "ray (closest)", "sapling::detail::AabbTree::ray, bound lowered",
                          batch.rays.size(), [&](const Answers* r, std::size_t* wrong) {
                            std::size_t total = 0;
                            for (std::size_t k = 0; k < batch.rays.size(); ++k) {
                              bool found = false;
                              RayHit best;
                              tree.ray(batch.rays[k], [&](sapling::detail::AabbTree::Slot s, float t) {
                                const RayHit hit{s, t};
                                if (!found || hit < best) best = hit;
                                found = true;
                                return best.t;
                              });
                              total += found;
                              if (r && !same_closest(found, best, *r, k)) note_wrong(wrong, k);
                            }
                            return total;
                          }));
  }

  // The peer.
  std::unique_ptr<QueryPeer> peer = world.peer ? world.peer() : nullptr;
  if (peer && std::find(excluded.begin(), excluded.end(), peer->name()) != excluded.end()) peer = nullptr;
  if (peer) {
    start = Clock::now();
    peer->build(tiles, world.as_static);
    result.build_lines.push_back(peer->name() + ": build " + fixed(seconds_since(start), 2) + " s; " + peer->note());
    QueryPeer* p = peer.get();
    ops.push_back(make_op(p->name(), "query", "exact ids from the candidates", batch.boxes.size(),
                          [&, p](const Answers* r, std::size_t* wrong) {
                            std::vector<Id> out;
                            std::size_t total = 0;
                            for (std::size_t k = 0; k < batch.boxes.size(); ++k) {
                              p->query(batch.boxes[k], out);
                              total += out.size();
                              if (r && !same_ids(out, *r, k)) note_wrong(wrong, k);
                            }
                            return total;
                          }));
    ops.push_back(make_op(p->name(), "ray (all hits)", "exact hits from the candidates", batch.rays.size(),
                          [&, p](const Answers* r, std::size_t* wrong) {
                            std::vector<RayHit> hits;
                            std::size_t total = 0;
                            for (std::size_t k = 0; k < batch.rays.size(); ++k) {
                              p->ray(batch.rays[k], hits);
                              total += hits.size();
                              if (r && !same_hits(hits, *r, k)) note_wrong(wrong, k);
                            }
                            return total;
                          }));
    ops.push_back(make_op(p->name(), "ray (closest)", "the first exact hit", batch.rays.size(),
                          [&, p](const Answers* r, std::size_t* wrong) {
                            RayHit hit;
                            std::size_t total = 0;
                            for (std::size_t k = 0; k < batch.rays.size(); ++k) {
                              const bool found = p->ray_closest(batch.rays[k], hit);
                              total += found;
                              if (r && !same_closest(found, hit, *r, k)) note_wrong(wrong, k);
                            }
                            return total;
                          }));
  }

  for (Operation& op : ops) op.is_query = op.call.rfind("query", 0) == 0;
  // Frames: every operation over the whole batch, the order rotating; the
  // first frame also checks the answers (that pass is not timed).
  for (Operation& op : ops) {
    wrong_queries = &op.first_wrong;
    op.answers = op.run(&ref, &op.wrong);
    wrong_queries = nullptr;
    op.checked = true;
  }
  // Where a contender differs from sapling, brute force arbitrates: every
  // box tested (overlaps(), ray_entry()) for the first differing queries.
  for (const Operation& op : ops) {
    for (const std::size_t k : op.first_wrong) {
      std::vector<Id> brute_ids;
      std::vector<RayHit> brute_hits;
      for (std::size_t b = 0; b < tiles.size(); ++b) {
        Box3 box = tiles[b];
        if (world.dims == 2) box.min[2] = box.max[2] = 0.0f;
        float t = 0.0f;
        if (op.is_query && overlaps(box, batch.boxes[k])) brute_ids.push_back(static_cast<Id>(b));
        if (!op.is_query && ray_entry(batch.rays[k], box, t)) brute_hits.push_back({static_cast<Id>(b), t});
      }
      std::sort(brute_hits.begin(), brute_hits.end());
      const bool sapling_right = op.is_query ? same_ids(brute_ids, ref, k) : same_hits(brute_hits, ref, k);
      result.build_lines.push_back(op.contender + " " + op.call + " differs on " + (op.is_query ? "query " : "ray ") +
                                   std::to_string(k) + ": brute force " +
                                   (sapling_right ? "agrees with sapling" : "DISAGREES with sapling"));
      if (!sapling_right && op.contender.rfind("sapling", 0) != 0) result.sapling_wrong = true;
    }
    if (op.contender.rfind("sapling", 0) == 0 && op.wrong != 0) result.sapling_wrong = true;
  }
  for (int f = 0; f < frames; ++f) {
    for (std::size_t i = 0; i < ops.size(); ++i) {
      Operation& op = ops[(i + static_cast<std::size_t>(f)) % ops.size()];
      if (op.batch_size == 0) continue;
      start = Clock::now();
      op.run(nullptr, nullptr);
      op.ns_per_query.push_back(seconds_since(start) * 1e9 / static_cast<double>(op.batch_size));
    }
  }
  if (peer) {
    result.build_lines.push_back(peer->name() + ": " + std::to_string(peer->candidates()) +
                                 " candidates reported in all (before the exact filter)");
  }
  result.operations = std::move(ops);
  return result;
}

void write_tables(std::ostream& out, const std::vector<WorldResult>& results) {
  for (const WorldResult& w : results) {
    out << "\n### " << w.name << "\n\n"
        << w.boxes << " boxes; " << w.queries << " region queries and " << w.rays << " rays per frame.\n\n";
    for (const std::string& line : w.build_lines) out << "- " << line << "\n";
    out << "\n| contender | call | ns/query (median) | min | answers | checked |\n|---|---|---|---|---|---|\n";
    for (const Operation& op : w.operations) {
      if (op.batch_size == 0) continue;
      const double lo = op.ns_per_query.empty() ? 0 : *std::min_element(op.ns_per_query.begin(), op.ns_per_query.end());
      out << "| " << op.contender << " | " << op.call << " | " << fixed(median(op.ns_per_query), 0) << " | "
          << fixed(lo, 0) << " | " << op.answers << " | "
          << (op.wrong == 0 ? "same as sapling" : "DIFFERS on " + std::to_string(op.wrong)) << " |\n";
    }
  }
}

}  // namespace

int run_query_bench(const QueryBenchOptions& options, std::string& tables_text) {
  const std::size_t side = options.quick ? 100 : 1000;
  const std::size_t queries = options.quick ? 1000 : 10'000;
  const int frames = options.frames >= 0 ? options.frames : (options.quick ? 2 : 3);
  const std::vector<Box3> tiles = make_level_tiles(side, true, kLevelSeed);
  // Rays against dynamic objects test every box (BroadPhase::cast_ray): 100 of them.
  constexpr std::size_t kDynamicRays = 100;
  const std::vector<World> worlds{
      {"level-3d-static", 3, true, "sap", queries, make_bullet_query_peer},
      {"level-3d-dynamic", 3, false, "octree", kDynamicRays, make_bullet_query_peer},
      {"level-2d-static", 2, true, "sap", queries, make_box2d_query_peer},
  };
  std::vector<WorldResult> results;
  for (const World& world : worlds) {
    if (options.progress) std::fprintf(stderr, "sapling bench --suite queries: %s\n", world.name.c_str());
    results.push_back(run_world(world, tiles, side, queries, frames, options.progress, options.excluded));
  }
  std::ostringstream tables;
  tables << "## Queries and rays (" << side * side << " tiles of the dense static level, " << frames
         << " frames, median ns per query)\n\n";
  // The level's static-static overlaps (what the static suite's scenes never pair), dense and spread.
  for (const bool dense : {true, false}) {
    std::vector<IndexPair> overlaps;
    BoxPruner().complete(dense ? tiles : make_level_tiles(side, false, kLevelSeed), overlaps);
    tables << "Static-static overlaps among the " << (dense ? "dense" : "spread")
           << " level's tiles: " << overlaps.size() << "\n\n";
  }
  write_tables(tables, results);
  tables_text = std::move(tables).str();
  int status = 0;
  for (const WorldResult& w : results) status = w.sapling_wrong ? 4 : status;
  return status;
}

}  // namespace sapling::bench
