// Factories of the built-in algorithms, listed by the registry
// (src/registry.cpp). One line there adds an algorithm everywhere: the
// factory, `sapling algos`, and the differential tests.
#pragma once

#include <cstdint>
#include <memory>

#include "sapling/algorithm.hpp"
#include "sapling/box_pruning.hpp"
#include "sapling/recompute.hpp"
#include "sapling/task_system.hpp"

namespace sapling::detail {

/// The task system an algorithm runs its parallel work on: the engine's
/// (Options::tasks), else a pool of Options::threads threads of its own, or
/// none (serial) for one thread.
class OptionTasks {
 public:
  explicit OptionTasks(const Options& options)
      : pool_(options.tasks == nullptr && options.threads != 1 ? std::make_unique<ThreadPool>(options.threads)
                                                               : nullptr),
        tasks_(options.tasks != nullptr ? options.tasks : pool_.get()) {}
  TaskSystem* get() const noexcept { return tasks_; }

 private:
  std::unique_ptr<ThreadPool> pool_;
  TaskSystem* tasks_;
};

/// An algorithm (or a one-shot one under the recompute adapter) that runs
/// box pruning over its whole world, and so holds a BoxPruner whose buffers
/// fit the world: auto hands the old algorithm's to the new one at a switch
/// (BoxPruner::take_room()).
class PrunerHolder {
 public:
  virtual BoxPruner& pruner() noexcept = 0;

 protected:
  ~PrunerHolder() = default;
};

/// The BoxPruner `algorithm` holds (PrunerHolder), itself or under the
/// recompute adapter, or null.
BoxPruner* held_pruner(Algorithm& algorithm) noexcept;

std::unique_ptr<Algorithm> make_brute(const Options& options);
std::unique_ptr<Algorithm> make_sort_sweep(const Options& options);
std::unique_ptr<Algorithm> make_sap(const Options& options);
std::unique_ptr<Algorithm> make_box_pruning(const Options& options);
std::unique_ptr<Algorithm> make_unisize(const Options& options);
/// unisize with strips of `strip_members` own boxes (for tests).
std::unique_ptr<Algorithm> make_unisize_with_strips(const Options& options, std::uint32_t strip_members);
std::unique_ptr<Algorithm> make_dual_axis(const Options& options);
std::unique_ptr<Algorithm> make_multi_sap(const Options& options);
struct MultiSapConfig;
/// multi-sap with a given cell size, outsized threshold and the like (for
/// tests and measurements; multi_sap.hpp).
std::unique_ptr<Algorithm> make_multi_sap_with(const Options& options, const MultiSapConfig& config);
std::unique_ptr<Algorithm> make_octree(const Options& options);
struct OctreeConfig;
/// octree with a given leaf size, looseness and the like (for tests and
/// measurements; octree.hpp).
std::unique_ptr<Algorithm> make_octree_with(const Options& options, const OctreeConfig& config);
std::unique_ptr<Algorithm> make_segmented_sap(const Options& options);
struct SegmentedSapConfig;
/// segmented-sap with a given chunk size (for tests and measurements;
/// segmented_sap.hpp).
std::unique_ptr<Algorithm> make_segmented_sap_with(const Options& options, const SegmentedSapConfig& config);
/// auto: runs the candidate that suits the workload, switching as it
/// changes (auto_select.cpp, auto_policy.hpp); the registry hands it the
/// product line (product_line(), candidates.hpp).
class Candidates;
std::unique_ptr<Algorithm> make_auto(const Options& options, Candidates candidates);

}  // namespace sapling::detail
