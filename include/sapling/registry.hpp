// The algorithm registry: what BroadPhase::create() builds by name, what
// `sapling algos` lists, and what the differential tests run against brute.
// Built-in algorithms come first; register_algorithm() adds your own.
#pragma once

#include <string>
#include <vector>

#include "sapling/broad_phase.hpp"
#include "sapling/status.hpp"

namespace sapling {

/// A registered algorithm: what `sapling algos` lists and create() builds.
struct AlgorithmInfo {
  std::string name;  ///< letters, digits, '-' and '_' only
  std::string description;
  AlgorithmFactory make;
  /// False for an algorithm made for some boxes only (e.g. `unisize`: boxes
  /// of one size); it refuses others with StatusCode::kUnsupported.
  bool accepts_any_box = true;
  /// Whether it finds every pair anew each frame (a recomputation) rather
  /// than tracking changes: `auto` hands a world to a recomputing
  /// algorithm at once, to a tracking one over several frames.
  bool recomputes = false;
  /// Part of the product line: `auto` itself and the algorithms it may run.
  /// False for the reference shelf (the seed papers' other systems and the
  /// baselines) and for algorithms registered by the user.
  bool product = false;
  /// When to choose it, in a line: README's algorithm tables and
  /// docs/algorithms/README.md show this text (a test checks them).
  std::string when = {};
};

/// Every registered algorithm, built-in ones first, in registration order:
/// a copy, unaffected by later registrations. Safe from any thread.
std::vector<AlgorithmInfo> algorithms();

/// Adds an algorithm to the registry (and so to create(), the command line
/// and the differential tests). Refused (kInvalidArgument, saying why) for a
/// name that is taken, empty, or has a character other than a letter, a
/// digit, '-' or '_', and for a registration without a factory.
Status register_algorithm(AlgorithmInfo info);

}  // namespace sapling
