// Factories of the built-in algorithms, listed by the registry
// (src/core/registry.cpp). One line there adds an algorithm everywhere: the
// factory, `sapling algos`, and the differential tests.
#pragma once

#include <memory>

#include "sapling/algorithm.hpp"

namespace sapling::builtin {

std::unique_ptr<Algorithm> make_brute(const Options& options);
std::unique_ptr<Algorithm> make_sort_sweep(const Options& options);
std::unique_ptr<Algorithm> make_sap(const Options& options);
std::unique_ptr<Algorithm> make_box_pruning(const Options& options);
std::unique_ptr<Algorithm> make_unisize(const Options& options);
std::unique_ptr<Algorithm> make_dual_axis(const Options& options);

}  // namespace sapling::builtin
