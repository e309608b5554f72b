// The algorithm registry: built-in algorithms first, then any registered by
// the user, in order.
#include <algorithm>
#include <mutex>

#include "algorithms/auto/candidates.hpp"
#include "algorithms/builtin.hpp"
#include "sapling/registry.hpp"

namespace sapling {
namespace {

std::vector<AlgorithmInfo>& registry() {
  static std::vector<AlgorithmInfo> list{
      {"brute", "all pairs, O(n^2) per frame: the reference every algorithm is checked against", detail::make_brute,
       /*accepts_any_box=*/true, /*recomputes=*/true, /*product=*/false,
       "tests and tiny scenes: the reference every other algorithm is checked against"},
      {"sort-sweep", "sort on x each frame (insertion sort while the order barely changes), sweep with an active list",
       detail::make_sort_sweep, /*accepts_any_box=*/true, /*recomputes=*/true, /*product=*/false,
       "a readable baseline; modest scenes spread along x"},
      {"sap",
       "persistent incremental sweep-and-prune: endpoints swapped into place as objects move, batch insertion and "
       "removal, box pruning of the whole frame when most objects move far",
       detail::make_sap, /*accepts_any_box=*/true, /*recomputes=*/false, /*product=*/true,
       "persistent worlds where a part of the objects moves and objects come and go; `auto`'s usual choice"},
      {"box-pruning",
       "one-shot box pruning each frame: radix-sorted sweep on the axis of largest spread, grid on the other two, "
       "SIMD tests",
       detail::make_box_pruning, /*accepts_any_box=*/true, /*recomputes=*/true, /*product=*/true,
       "everything moves every frame; one-shot complete and bipartite queries"},
      {"unisize",
       "boxes of one size only (Capannini & Larsson): radix-sorted ranks on one axis, sweep of the other with a "
       "succinct bit tree, O((n + pairs) log64 n) in 2D; refuses boxes of another size",
       detail::make_unisize, /*accepts_any_box=*/false, /*recomputes=*/true, /*product=*/true,
       "many boxes of one size with many overlaps: particles, crowds, tiles"},
      {"dual-axis",
       "any boxes: per cell of a grid, a sweep on x with the active boxes in a bitmap over their ranks on y, "
       "queried by a range widened by the largest y extent, the third axis tested per candidate; outsized boxes "
       "kept apart",
       detail::make_dual_axis, /*accepts_any_box=*/true, /*recomputes=*/true, /*product=*/true,
       "flat worlds (2D, or 3D spread over two axes) with boxes of any size"},
      {"multi-sap",
       "persistent grid of small sorted cells (Terdiman's multi-SAP): a frame touches only the cells of the boxes "
       "that changed; huge boxes kept apart; for large worlds where a minority moves",
       detail::make_multi_sap, /*accepts_any_box=*/true, /*recomputes=*/false, /*product=*/true,
       "large worlds where most objects rest and a few move: its cost follows the movers, not the world; `sap` is "
       "faster when a tenth of the world moves each frame, `box-pruning` when all of it does"},
      {"octree",
       "dynamic loose octree (the baseline of Tracy, Buss and Woods 2009): no world bounds, boxes in the smallest "
       "node that holds them, each changed box queries the tree; insensitive to churn, blind to coherence",
       detail::make_octree, /*accepts_any_box=*/true, /*recomputes=*/false, /*product=*/false,
       "a baseline of spatial subdivision: worlds where boxes come and go more than they move, sizes that vary widely; "
       "`multi-sap` or `sap` are faster wherever motion is coherent"},
      {"segmented-sap",
       "persistent sweep-and-prune over segmented interval lists (Tracy et al. 2009): axes as chains of sorted "
       "chunks with checkpoints, so an insertion or removal touches one chunk and the objects around it, not the "
       "whole axis; for large worlds at rest with a trickle of objects coming and going",
       detail::make_segmented_sap, /*accepts_any_box=*/true, /*recomputes=*/false, /*product=*/false,
       "a large world at rest with a trickle of insertions and removals, and no grid; `multi-sap` is faster still "
       "there, `sap` whenever many move or the world is small"},
      {"auto",
       "the default: watches the workload (objects, share moving, churn, one size, flatness) and runs the "
       "algorithm that suits it, switching as it changes; a tracking algorithm is handed the world over several "
       "frames, so a switch costs no frame spike",
       [](const Options& options) { return detail::make_auto(options, detail::product_line()); },
       /*accepts_any_box=*/true, /*recomputes=*/false, /*product=*/true,
       "anything: the default, and the one to use; naming another pays only where you know the workload and it never "
       "changes"},
  };
  return list;
}

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

std::unique_ptr<BroadPhase> BroadPhase::create(std::string_view name, const Options& options, Status* why) {
  // "NAME:SETTINGS", the command line's form, stands for NAME with
  // Options::settings = SETTINGS.
  const std::size_t colon = name.find(':');
  if (colon != std::string_view::npos) {
    if (colon + 1 == name.size()) {  // "sap:" is a slip, not a way to say the defaults
      if (why != nullptr)
        *why = Status::invalid_argument(Operation::kCreate, "no settings after the ':' (give NAME for the defaults)");
      return nullptr;
    }
    if (!options.settings.empty()) {
      if (why != nullptr)
        *why = Status::invalid_argument(Operation::kCreate, "settings given both after the name and in Options");
      return nullptr;
    }
    Options with = options;
    with.settings = name.substr(colon + 1);
    return create(name.substr(0, colon), with, why);
  }
  for (AlgorithmInfo& info : algorithms()) {
    if (info.name == name) return create(std::move(info.name), std::move(info.make), options, why);
  }
  if (why != nullptr)
    *why = Status::invalid_argument(Operation::kCreate, "no algorithm of that name (see algorithms())");
  return nullptr;
}

std::vector<AlgorithmInfo> algorithms() {
  std::lock_guard lock(registry_mutex());
  return registry();
}

Status register_algorithm(AlgorithmInfo info) {
  if (info.name.empty()) return Status::invalid_argument(Operation::kRegister, "the name is empty");
  const auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  };
  if (!std::all_of(info.name.begin(), info.name.end(), allowed)) {
    return Status::invalid_argument(Operation::kRegister, "a name has letters, digits, '-' and '_' only");
  }
  if (!info.make) return Status::invalid_argument(Operation::kRegister, "no factory (AlgorithmInfo::make)");
  std::lock_guard lock(registry_mutex());
  for (const AlgorithmInfo& existing : registry()) {
    if (existing.name == info.name) return Status::invalid_argument(Operation::kRegister, "the name is taken");
  }
  registry().push_back(std::move(info));
  return {};
}

namespace detail {

Candidates product_line() {
  std::vector<Candidate> list;
  for (const AlgorithmInfo& info : algorithms()) {
    if (info.product && info.name != "auto") list.push_back({info.name, info.make, info.recomputes});
  }
  return Candidates(std::move(list));
}

}  // namespace detail
}  // namespace sapling
