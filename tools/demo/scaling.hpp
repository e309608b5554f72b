// The blog's experiment (broad-phase time against object count, naive
// against sweep and prune) run on the demo's own scene: for each count, one
// world per algorithm stepped in lockstep (the same bodies, frame for frame:
// the physics does not depend on the algorithm), every frame's pairs
// checked equal across algorithms, and each algorithm's broad-phase time
// per frame recorded; the median per count goes to a JSON file that
// bench/plot_demo_scaling.py plots and fits.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "output.hpp"
#include "scenes.hpp"

namespace sapling::demo {

/// What the experiment runs.
struct ScalingSettings {
  std::string scene = "particles";                                                             ///< the demo's scene
  float moving = 1;                                                                            ///< fraction that moves
  std::vector<std::string> algorithms{"brute", "sort-sweep", "sap", "box-pruning"};            ///< contenders
  std::vector<std::size_t> sizes{10, 15, 20, 30, 50, 75, 100, 150, 200, 300, 500, 750, 1000};  ///< counts
  int warmup = 30;   ///< frames run before timing
  int frames = 200;  ///< frames timed per count
  std::string json;  ///< where the results go
};

/// Runs it, writing a table to `out` (standard output) and the JSON file
/// (opened first: a path that cannot be written stops it before the work).
/// 0 on success; 3 (the reason on stderr) if an algorithm does not support
/// the scene; 1 if an algorithm is unknown, reports other pairs, or an
/// output cannot be written.
int run_scaling(const ScalingSettings& settings, cli::Output& out);

}  // namespace sapling::demo
