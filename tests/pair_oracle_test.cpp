// The validation oracle (src/detail/pair_oracle.hpp) against the double
// loop of the definition (closed intervals) on random boxes of every kind
// that breaks a sweep: touching faces, identical boxes, points, flat boxes,
// infinite extents, signed zeros, one box spanning the world. A failure
// names the kind and the seed.
#include "detail/pair_oracle.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace sapling::detail {
namespace {

std::vector<Box3> make_boxes(const std::string& kind, std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> cell(0, 7);
  std::uniform_real_distribution<float> real(-10.0f, 10.0f);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::vector<Box3> boxes(n);
  for (std::size_t i = 0; i < n; ++i) {
    Box3& b = boxes[i];
    for (int k = 0; k < 3; ++k) {
      if (kind == "grid") {  // unit cubes on integer corners: faces touch
        b.min[k] = static_cast<float>(cell(rng));
        b.max[k] = b.min[k] + 1.0f;
      } else if (kind == "points") {
        b.min[k] = b.max[k] = static_cast<float>(cell(rng)) * (cell(rng) % 2 == 0 ? -0.0f : 1.0f);
      } else {
        const float a = real(rng), c = real(rng);
        b.min[k] = std::min(a, c);
        b.max[k] = std::max(a, c);
      }
    }
    if (kind == "identical" && i % 3 != 0) b = boxes[i - i % 3];
    if (kind == "infinite" && i % 5 == 0) b.min[i % 3] = -kInf, b.max[(i + 1) % 3] = kInf;
    if (kind == "spanning" && i == 0) b = Box3{{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}};
  }
  return boxes;
}

class PairOracle : public ::testing::TestWithParam<std::string> {};

TEST_P(PairOracle, FindsTheDefinitionsPairsOnce) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const std::vector<Box3> boxes = make_boxes(GetParam(), 40 + 10 * seed, seed);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> expected, found;
    for (std::uint32_t i = 0; i < boxes.size(); ++i) {
      for (std::uint32_t j = i + 1; j < boxes.size(); ++j) {
        if (overlaps(boxes[i], boxes[j])) expected.emplace_back(i, j);
      }
    }
    for_each_overlapping_pair(boxes, [&](std::uint32_t i, std::uint32_t j) {
      ASSERT_NE(i, j);
      found.emplace_back(std::min(i, j), std::max(i, j));
    });
    std::sort(found.begin(), found.end());
    EXPECT_EQ(found, expected) << GetParam() << ", seed " << seed;  // each once: duplicates would differ
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, PairOracle,
                         ::testing::Values("random", "grid", "points", "identical", "infinite", "spanning"));

}  // namespace
}  // namespace sapling::detail
