// The demo's random numbers: splitmix64, so a seed gives the same scene on
// every platform (the standard distributions are not portable).
#pragma once

#include <cstdint>

namespace sapling::demo {

/// A small deterministic generator.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  /// The next 64 random bits.
  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [lo, hi).
  float uniform(float lo, float hi) noexcept {
    return lo + (hi - lo) * static_cast<float>(next() >> 40) * (1.0f / 16777216.0f);
  }

 private:
  std::uint64_t state_;
};

}  // namespace sapling::demo
