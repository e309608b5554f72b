// Pair manager cost per operation at 10k and 1M live pairs (Terdiman 2007,
// I.6): add of a new pair, find of a present pair, remove of a present pair,
// and the persistent re-add of a pair that is already there (what a SAP does
// for every swap that confirms an overlap). Each benchmark keeps the live
// count constant so the figure is for that table size.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "sapling/pair_manager.hpp"

namespace sapling {
namespace {

std::vector<Pair> random_pairs(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<Pair> pairs;
  pairs.reserve(n);
  while (pairs.size() < n) {
    const Id x = rng(), y = rng();
    if (x != y) pairs.push_back(make_pair(x, y));
  }
  return pairs;
}

PairManager filled(const std::vector<Pair>& pairs) {
  PairManager pm;
  for (const Pair& p : pairs) pm.add(p.a, p.b);
  std::vector<Pair> created, deleted;
  pm.end_frame(created, deleted);
  return pm;
}

constexpr std::size_t kBatch = 4096;

// Add kBatch new pairs then remove them again (one frame each): reports the
// mean of add+end_frame and remove+end_frame per pair.
void BM_AddRemoveFrame(benchmark::State& state) {
  const auto live = static_cast<std::size_t>(state.range(0));
  const std::vector<Pair> base = random_pairs(live, 1);
  const std::vector<Pair> extra = random_pairs(kBatch, 2);
  PairManager pm = filled(base);
  std::vector<Pair> created, deleted;
  for (auto _ : state) {
    for (const Pair& p : extra) pm.add(p.a, p.b);
    pm.end_frame(created, deleted);
    for (const Pair& p : extra) pm.remove(p.a, p.b);
    pm.end_frame(created, deleted);
    created.clear();
    deleted.clear();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kBatch * 2));
}

void BM_Find(benchmark::State& state) {
  const auto live = static_cast<std::size_t>(state.range(0));
  const std::vector<Pair> base = random_pairs(live, 1);
  const PairManager pm = filled(base);
  std::mt19937 rng(3);
  std::vector<Pair> probes;
  for (std::size_t i = 0; i < kBatch; ++i) probes.push_back(base[rng() % base.size()]);
  for (auto _ : state) {
    std::size_t found = 0;
    for (const Pair& p : probes) found += pm.contains(p.a, p.b);
    benchmark::DoNotOptimize(found);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kBatch));
}

void BM_FindAbsent(benchmark::State& state) {
  const auto live = static_cast<std::size_t>(state.range(0));
  const PairManager pm = filled(random_pairs(live, 1));
  const std::vector<Pair> probes = random_pairs(kBatch, 4);
  for (auto _ : state) {
    std::size_t found = 0;
    for (const Pair& p : probes) found += pm.contains(p.a, p.b);
    benchmark::DoNotOptimize(found);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kBatch));
}

// Re-adding a live pair: a lookup and a flag update, nothing reported.
void BM_AddExisting(benchmark::State& state) {
  const auto live = static_cast<std::size_t>(state.range(0));
  const std::vector<Pair> base = random_pairs(live, 1);
  PairManager pm = filled(base);
  std::mt19937 rng(5);
  std::vector<Pair> probes;
  for (std::size_t i = 0; i < kBatch; ++i) probes.push_back(base[rng() % base.size()]);
  std::vector<Pair> created, deleted;
  for (auto _ : state) {
    for (const Pair& p : probes) pm.add(p.a, p.b);
  }
  pm.end_frame(created, deleted);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kBatch));
}

// A whole recompute-and-diff frame: remove_all, re-add every pair, end_frame.
void BM_RecomputeFrame(benchmark::State& state) {
  const auto live = static_cast<std::size_t>(state.range(0));
  const std::vector<Pair> base = random_pairs(live, 1);
  PairManager pm = filled(base);
  std::vector<Pair> created, deleted;
  for (auto _ : state) {
    pm.remove_all();
    for (const Pair& p : base) pm.add(p.a, p.b);
    pm.end_frame(created, deleted);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * live));
}

BENCHMARK(BM_AddRemoveFrame)->Arg(10'000)->Arg(1'000'000);
BENCHMARK(BM_Find)->Arg(10'000)->Arg(1'000'000);
BENCHMARK(BM_FindAbsent)->Arg(10'000)->Arg(1'000'000);
BENCHMARK(BM_AddExisting)->Arg(10'000)->Arg(1'000'000);
BENCHMARK(BM_RecomputeFrame)->Arg(10'000)->Arg(1'000'000);

}  // namespace
}  // namespace sapling

BENCHMARK_MAIN();
