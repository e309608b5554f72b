// The algorithms `auto` may run, with what it must know of each: handed to
// it by the registry (src/registry.cpp, where every algorithm's facts are
// written once), so that auto never looks an algorithm up by itself.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sapling/broad_phase.hpp"

namespace sapling::detail {

struct Candidate {
  std::string name;
  AlgorithmFactory make;
  bool recomputes = false;  // AlgorithmInfo::recomputes
};

class Candidates {
 public:
  Candidates() = default;
  explicit Candidates(std::vector<Candidate> list) : list_(std::move(list)) {}

  /// The candidate of that name, or null.
  const Candidate* find(std::string_view name) const noexcept {
    for (const Candidate& c : list_) {
      if (c.name == name) return &c;
    }
    return nullptr;
  }
  /// Whether `name` recomputes every pair each frame, so that it can take
  /// over a world at once, without being handed the objects over several
  /// frames first.
  bool recomputes(std::string_view name) const noexcept {
    const Candidate* c = find(name);
    return c != nullptr && c->recomputes;
  }

 private:
  std::vector<Candidate> list_;
};

/// The product line's algorithms other than auto, from the registry.
Candidates product_line();

}  // namespace sapling::detail
