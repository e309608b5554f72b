// Google Benchmark of the static-object tree (src/detail/aabb_tree.hpp) at
// 1M boxes, for both of build()'s splits (binned SAH, median) and two scenes:
// - sparse: cubes of side 1 to 2 spread uniformly in a cube of side 1000;
// - dense: the same cubes in a cube of side 100 (about 3 overlaps each);
// - mixed: a level's mix, in the sparse world: sides log-uniform from 0.1 to
//   100, one box in a thousand a slab of 1000 x 1000 x 1 (floors, walls).
// The queries and rays are the sparse scene's in both sparse worlds.
// BM_Build: one build of the 1M boxes. BM_Query: 10k region queries (cubes
// like the scene's) per iteration; BM_QuerySized: the same on trees of 500
// to 100k boxes. BM_RayAll / BM_RayClosest: 10k rays from
// random points in random directions, without end, every hit or the
// closest. BM_MoveOne: one box moved to a random place (a removal and an
// insertion). Counters: bytes_per_leaf, height, area_ratio (the tree's SAH
// quality, AabbTree::area_ratio: lower is better), hits per query or ray.
//
//   aabb_tree_bench [Google Benchmark flags]
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "detail/aabb_tree.hpp"

namespace sapling::detail {
namespace {

constexpr std::size_t kBoxes = 1'000'000;
constexpr int kQueries = 10'000;

float world_side(int scene) { return scene == 1 ? 100.0f : 1000.0f; }

// A box of the mixed scene.
Box3 mixed_box(std::mt19937& rng) {
  std::uniform_real_distribution<float> at(0.0f, 1000.0f), log_side(std::log(0.1f), std::log(100.0f));
  Box3 b;
  if (std::uniform_int_distribution<int>(0, 999)(rng) == 0) {
    const int thin = std::uniform_int_distribution<int>(0, 2)(rng);
    for (int k = 0; k < 3; ++k) {
      b.min[k] = k == thin ? at(rng) : 0.0f;
      b.max[k] = k == thin ? b.min[k] + 1.0f : 1000.0f;
    }
    return b;
  }
  for (int k = 0; k < 3; ++k) b.min[k] = at(rng), b.max[k] = b.min[k] + std::exp(log_side(rng));
  return b;
}

Box3 random_cube(std::mt19937& rng, float world) {
  std::uniform_real_distribution<float> at(0.0f, world), side(1.0f, 2.0f);
  Box3 b;
  const float s = side(rng);
  for (int k = 0; k < 3; ++k) b.min[k] = at(rng), b.max[k] = b.min[k] + s;
  return b;
}

struct Scene {
  std::vector<AabbTree::Slot> slots;
  std::vector<Box3> boxes;
};

const Scene& scene_boxes(int scene) {
  static std::map<int, Scene> cache;
  auto [it, fresh] = cache.try_emplace(scene);
  if (fresh) {
    std::mt19937 rng(1 + scene);
    for (std::size_t i = 0; i < kBoxes; ++i) {
      it->second.slots.push_back(static_cast<AabbTree::Slot>(i));
      it->second.boxes.push_back(scene == 2 ? mixed_box(rng) : random_cube(rng, world_side(scene)));
    }
  }
  return it->second;
}

// One tree per (scene, split), built once and shared by the benchmarks.
AabbTree& built_tree(int scene, int split) {
  static std::map<std::pair<int, int>, std::unique_ptr<AabbTree>> cache;
  std::unique_ptr<AabbTree>& tree = cache[{scene, split}];
  if (!tree) {
    tree = std::make_unique<AabbTree>();
    const Scene& s = scene_boxes(scene);
    tree->build(s.slots, s.boxes, split == 0 ? AabbTree::Split::kBinnedSah : AabbTree::Split::kMedian);
  }
  return *tree;
}

void tree_counters(benchmark::State& state, const AabbTree& tree) {
  state.counters["bytes_per_leaf"] = static_cast<double>(tree.memory_bytes()) / static_cast<double>(tree.size());
  state.counters["height"] = tree.height();
  state.counters["area_ratio"] = tree.area_ratio();
}

void BM_Build(benchmark::State& state) {
  const Scene& s = scene_boxes(static_cast<int>(state.range(0)));
  const auto split = state.range(1) == 0 ? AabbTree::Split::kBinnedSah : AabbTree::Split::kMedian;
  AabbTree tree;
  for (auto _ : state) {
    tree.build(s.slots, s.boxes, split);
    benchmark::DoNotOptimize(tree.size());
  }
  tree_counters(state, tree);
}

// The region queries' timing, hits per query and the tree's counters.
void time_queries(benchmark::State& state, const AabbTree& tree, const std::vector<Box3>& queries) {
  std::size_t hits = 0;
  for (auto _ : state) {
    for (const Box3& q : queries) tree.query(q, [&](AabbTree::Slot) { ++hits; });
  }
  const auto asked = static_cast<double>(state.iterations()) * static_cast<double>(queries.size());
  state.SetItemsProcessed(static_cast<std::int64_t>(asked));
  state.counters["hits"] = static_cast<double>(hits) / asked;
  tree_counters(state, tree);
}

void BM_Query(benchmark::State& state) {
  const int scene = static_cast<int>(state.range(0));
  const AabbTree& tree = built_tree(scene, static_cast<int>(state.range(1)));
  std::mt19937 rng(99);
  std::vector<Box3> queries;
  for (int i = 0; i < kQueries; ++i) queries.push_back(random_cube(rng, world_side(scene)));
  time_queries(state, tree, queries);
}

// Region queries on smaller trees, where an engine's world sits (Jolt's
// scenes hold hundreds to thousands of bodies): n cubes of side 1 to 2 at
// the sparse scene's density of about one per 1000 units^3, cubes of side 2
// to 4 as queries. The tree stays in the caches; the walk's own work shows.
void BM_QuerySized(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const float world = std::cbrt(static_cast<float>(n) * 1000.0f);
  std::mt19937 rng(5);
  std::vector<AabbTree::Slot> slots;
  std::vector<Box3> boxes;
  for (std::size_t i = 0; i < n; ++i)
    slots.push_back(static_cast<AabbTree::Slot>(i)), boxes.push_back(random_cube(rng, world));
  AabbTree tree;
  tree.build(slots, boxes);
  std::vector<Box3> queries;
  for (int i = 0; i < kQueries; ++i) {
    Box3 q = random_cube(rng, world);
    for (int k = 0; k < 3; ++k) q.max[k] += q.max[k] - q.min[k];
    queries.push_back(q);
  }
  time_queries(state, tree, queries);
}

std::vector<Ray3> random_rays(int scene) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> at(0.0f, world_side(scene));
  std::normal_distribution<float> dir;
  std::vector<Ray3> rays;
  for (int i = 0; i < kQueries; ++i) {
    Ray3 r{{at(rng), at(rng), at(rng)}, {dir(rng), dir(rng), dir(rng)}, std::numeric_limits<float>::infinity()};
    const float len =
        std::sqrt(r.direction[0] * r.direction[0] + r.direction[1] * r.direction[1] + r.direction[2] * r.direction[2]);
    for (float& d : r.direction) d /= len;
    rays.push_back(r);
  }
  return rays;
}

void BM_RayAll(benchmark::State& state) {
  const int scene = static_cast<int>(state.range(0));
  const AabbTree& tree = built_tree(scene, static_cast<int>(state.range(1)));
  const std::vector<Ray3> rays = random_rays(scene);
  std::size_t hits = 0;
  for (auto _ : state) {
    for (const Ray3& r : rays) {
      tree.ray(r, [&](AabbTree::Slot, float) {
        ++hits;
        return r.max_t;
      });
    }
  }
  state.SetItemsProcessed(state.iterations() * kQueries);
  state.counters["hits"] = static_cast<double>(hits) / static_cast<double>(state.iterations() * kQueries);
}

void BM_RayClosest(benchmark::State& state) {
  const int scene = static_cast<int>(state.range(0));
  const AabbTree& tree = built_tree(scene, static_cast<int>(state.range(1)));
  const std::vector<Ray3> rays = random_rays(scene);
  std::size_t found = 0;
  for (auto _ : state) {
    for (const Ray3& r : rays) {
      float best_t = r.max_t;
      AabbTree::Slot best = ~AabbTree::Slot{0};
      tree.ray(r, [&](AabbTree::Slot s, float t) {
        if (t < best_t || (t == best_t && s < best)) best_t = t, best = s;
        return best_t;
      });
      found += best != ~AabbTree::Slot{0};
    }
  }
  state.SetItemsProcessed(state.iterations() * kQueries);
  state.counters["found"] = static_cast<double>(found) / static_cast<double>(state.iterations() * kQueries);
}

// Moves a random box to a random place in a private copy of the built tree.
void BM_MoveOne(benchmark::State& state) {
  const int scene = static_cast<int>(state.range(0));
  AabbTree tree = built_tree(scene, static_cast<int>(state.range(1)));
  std::mt19937 rng(5);
  std::uniform_int_distribution<AabbTree::Slot> slot(0, kBoxes - 1);
  for (auto _ : state) tree.move(slot(rng), random_cube(rng, world_side(scene)));
  tree_counters(state, tree);
}

// Args: scene (0 sparse, 1 dense, 2 mixed), split (0 binned SAH, 1 median).
void scenes_and_splits(benchmark::internal::Benchmark* b) {
  b->ArgNames({"scene", "median"});
  for (int scene : {0, 1, 2}) {
    for (int split : {0, 1}) b->Args({scene, split});
  }
  b->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Build)->Apply(scenes_and_splits)->Iterations(3);
BENCHMARK(BM_Query)->Apply(scenes_and_splits);
BENCHMARK(BM_QuerySized)->ArgName("n")->Arg(500)->Arg(5000)->Arg(100000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RayAll)->Apply(scenes_and_splits);
BENCHMARK(BM_RayClosest)->Apply(scenes_and_splits);
BENCHMARK(BM_MoveOne)->Apply(scenes_and_splits)->Unit(benchmark::kNanosecond);

}  // namespace
}  // namespace sapling::detail

BENCHMARK_MAIN();
