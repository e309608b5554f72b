// The algorithm registry: built-in algorithms first, then any registered by
// the user, in order.
#include <mutex>

#include "algorithms/builtin.hpp"
#include "sapling/broad_phase.hpp"

namespace sapling {
namespace {

std::vector<AlgorithmInfo>& registry() {
  static std::vector<AlgorithmInfo> list{
      {"brute", "all pairs, O(n^2) per frame: the reference every algorithm is checked against", builtin::make_brute},
      {"sort-sweep", "sort on x each frame (insertion sort while the order barely changes), sweep with an active list",
       builtin::make_sort_sweep},
      {"box-pruning",
       "one-shot box pruning each frame: radix-sorted sweep on the axis of largest spread, grid on the other two, "
       "SIMD tests",
       builtin::make_box_pruning},
  };
  return list;
}

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

std::span<const AlgorithmInfo> algorithms() {
  std::lock_guard lock(registry_mutex());
  return registry();
}

bool register_algorithm(AlgorithmInfo info) {
  std::lock_guard lock(registry_mutex());
  for (const AlgorithmInfo& existing : registry()) {
    if (existing.name == info.name) return false;
  }
  registry().push_back(std::move(info));
  return true;
}

}  // namespace sapling
