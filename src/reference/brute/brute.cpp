// brute: every pair tested, O(n^2) per frame (the naive method that
// blog-broad-phase-sap-events starts from). Deliberately the simplest code
// that can be right, because every other algorithm is checked against it:
// the closed-interval test of box.hpp on every unordered pair {i, j}, i < j.
// Made persistent by make_recompute, which diffs each frame's pairs against
// the previous frame's.
//
// Invariant: a pair is reported iff overlaps() says so, and nothing else is
// assumed, so it is the reference of the differential tests and the fuzzer.
// Cost: n(n - 1)/2 box tests per frame with changes; memory: the live boxes.
// Choose it for tests and scenes of a few hundred boxes, never for speed
// (docs/algorithms/brute.md).
#include "algorithms/builtin.hpp"
#include "detail/settings.hpp"

namespace sapling::detail {
namespace {

class BruteForce final : public OneShotComplete {
 public:
  void complete(std::span<const Box3> boxes, std::vector<IndexPair>& out) override {
    const auto n = static_cast<std::uint32_t>(boxes.size());
    for (std::uint32_t i = 0; i < n; ++i) {
      for (std::uint32_t j = i + 1; j < n; ++j) {
        if (overlaps(boxes[i], boxes[j])) out.push_back({i, j});
      }
    }
  }
};

}  // namespace

std::unique_ptr<Algorithm> make_brute(const Options& options) {
  no_settings(options);
  return make_recompute(std::make_unique<BruteForce>());
}

}  // namespace sapling::detail
