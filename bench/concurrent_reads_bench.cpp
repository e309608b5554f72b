// Google Benchmark of reads on many threads (broad_phase.hpp, "Threads"):
// 100k region queries and 100k rays against a world of 100k or 1M boxes,
// answered by T threads at once, either
// - readers: T user threads, each calling query() / ray_cast_closest() /
//   ray_cast() on its share of the batch (what a job system does), or
// - batched: one call of query_many() / ray_cast_closest_many() /
//   ray_cast_many() on a broad phase created with Options::threads = T.
// The world: cubes of side 1 to 2, uniform in a cube sized for about one
// overlap per box (tracy's density); queries are cubes of side 4 placed like
// the boxes, rays start inside the world in random directions and end after
// 20 units. Algorithms: sap (rays and queries on the broad phase's query
// tree) and multi-sap (on its grid). The figure to read is the ratio of the
// T = 2 row to the T = 1 row of one kind, in one run (issue 31's target:
// 2 threads >= 1.8x one thread on two cores).
//
//   concurrent_reads_bench [--benchmark_filter=...] [--benchmark_repetitions=5]
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "sapling/broad_phase.hpp"

namespace sapling {
namespace {

constexpr std::size_t kReads = 100'000;

struct World {
  std::unique_ptr<BroadPhase> broad_phase;
  std::vector<Box3> queries;
  std::vector<Ray3> rays;
};

// One world per (algorithm, size, threads), made once per process.
World& world(const std::string& algorithm, std::size_t n, unsigned threads) {
  static std::vector<std::pair<std::string, std::unique_ptr<World>>> made;
  const std::string key = algorithm + "/" + std::to_string(n) + "/" + std::to_string(threads);
  for (auto& [k, w] : made) {
    if (k == key) return *w;
  }
  auto w = std::make_unique<World>();
  Options options;
  options.threads = threads;
  w->broad_phase = BroadPhase::create(algorithm, options);
  const float side = std::cbrt(static_cast<float>(n) * 8.0f);  // about one overlap per box
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> at(0.0f, side), size(1.0f, 2.0f), dir(-1.0f, 1.0f);
  std::vector<Id> ids(n);
  std::vector<Box3> boxes(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float x = at(rng), y = at(rng), z = at(rng), s = size(rng);
    ids[i] = static_cast<Id>(i);
    boxes[i] = Box3{{x, y, z}, {x + s, y + s, z + s}};
  }
  if (!w->broad_phase->add(ids, boxes).ok()) std::abort();
  w->broad_phase->update();
  for (std::size_t i = 0; i < kReads; ++i) {
    const float x = at(rng), y = at(rng), z = at(rng);
    w->queries.push_back(Box3{{x, y, z}, {x + 4, y + 4, z + 4}});
    w->rays.push_back(Ray3{{at(rng), at(rng), at(rng)}, {dir(rng), dir(rng), dir(rng) + 0.01f}, 20.0f});
  }
  // The first read builds the query tree where one is needed: not timed.
  std::vector<RayHit> hits;
  if (!w->broad_phase->ray_cast(w->rays[0], hits).ok()) std::abort();
  return *made.emplace_back(key, std::move(w)).second;
}

enum Kind { kQuery = 0, kRayClosest = 1, kRayAll = 2 };
const char* const kAlgorithms[] = {"sap", "multi-sap"};

// Reads [begin, end) of the batch one call at a time; the answers' sizes.
std::size_t read_share(const World& w, int kind, std::size_t begin, std::size_t end) {
  std::size_t found = 0;
  std::vector<Id> ids;
  std::vector<RayHit> hits;
  std::optional<RayHit> hit;
  for (std::size_t i = begin; i < end; ++i) {
    if (kind == kQuery) {
      (void)w.broad_phase->query(w.queries[i], ids);
      found += ids.size();
    } else if (kind == kRayClosest) {
      (void)w.broad_phase->ray_cast_closest(w.rays[i], hit);
      found += hit.has_value();
    } else {
      (void)w.broad_phase->ray_cast(w.rays[i], hits);
      found += hits.size();
    }
  }
  return found;
}

// args: algorithm, boxes, kind, threads.
void BM_Readers(benchmark::State& state) {
  const World& w = world(kAlgorithms[state.range(0)], static_cast<std::size_t>(state.range(1)), 1);
  const int kind = static_cast<int>(state.range(2));
  const auto threads = static_cast<std::size_t>(state.range(3));
  std::size_t found = 0;
  for (auto _ : state) {
    std::vector<std::size_t> counts(threads, 0);
    std::vector<std::thread> readers;
    for (std::size_t t = 1; t < threads; ++t) {
      readers.emplace_back(
          [&, t] { counts[t] = read_share(w, kind, kReads * t / threads, kReads * (t + 1) / threads); });
    }
    counts[0] = read_share(w, kind, 0, kReads / threads);
    for (std::thread& r : readers) r.join();
    found = 0;
    for (const std::size_t c : counts) found += c;
  }
  state.counters["ns_per_read"] =
      benchmark::Counter(static_cast<double>(kReads) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["found_per_read"] = static_cast<double>(found) / kReads;
}

void BM_Batched(benchmark::State& state) {
  const World& w = world(kAlgorithms[state.range(0)], static_cast<std::size_t>(state.range(1)),
                         static_cast<unsigned>(state.range(3)));
  const int kind = static_cast<int>(state.range(2));
  std::vector<Id> ids;
  std::vector<RayHit> hits;
  std::vector<std::size_t> offsets;
  std::size_t found = 0;
  for (auto _ : state) {
    if (kind == kQuery) {
      (void)w.broad_phase->query_many(w.queries, ids, offsets);
      found = ids.size();
    } else if (kind == kRayClosest) {
      (void)w.broad_phase->ray_cast_closest_many(w.rays, hits, offsets);
      found = hits.size();
    } else {
      (void)w.broad_phase->ray_cast_many(w.rays, hits, offsets);
      found = hits.size();
    }
  }
  state.counters["ns_per_read"] =
      benchmark::Counter(static_cast<double>(kReads) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["found_per_read"] = static_cast<double>(found) / kReads;
}

void arguments(benchmark::internal::Benchmark* b) {
  b->ArgNames({"algo", "boxes", "kind", "threads"});
  for (const std::int64_t algorithm : {0, 1}) {
    for (const std::int64_t boxes : {100'000, 1'000'000}) {
      for (const std::int64_t kind : {kQuery, kRayClosest, kRayAll}) {
        for (const std::int64_t threads : {1, 2}) b->Args({algorithm, boxes, kind, threads});
      }
    }
  }
  b->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.5);
}

BENCHMARK(BM_Readers)->Apply(arguments);
BENCHMARK(BM_Batched)->Apply(arguments);

}  // namespace
}  // namespace sapling

BENCHMARK_MAIN();
