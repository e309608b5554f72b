// The box sampler (src/detail/axis_sampler.hpp): which boxes a strided
// sample reads, the sums it keeps for each kind of point, against a direct
// computation; non-finite boxes left out; and the roles of the axes chosen
// from the spread. A failure names the seed.
#include "detail/axis_sampler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace sapling::detail {
namespace {

std::vector<Box3> random_boxes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> pos(-100, 100), ext(0, 5);
  std::vector<Box3> boxes(n);
  for (Box3& b : boxes) {
    for (int k = 0; k < 3; ++k) {
      b.min[k] = pos(rng) * (k == 2 ? 0.01f : 1.0f);
      b.max[k] = b.min[k] + ext(rng);
    }
  }
  return boxes;
}

TEST(AxisSampler, Stride) {
  EXPECT_EQ(sample_stride(0, 4096), 1u);
  EXPECT_EQ(sample_stride(4096, 4096), 1u);
  EXPECT_EQ(sample_stride(8191, 4096), 1u);
  EXPECT_EQ(sample_stride(8192, 4096), 2u);
  EXPECT_EQ(sample_stride(1'000'000, 8192), 122u);
}

template <SamplePoint kPoint>
double point_of(const Box3& b, int k) {
  if constexpr (kPoint == SamplePoint::kCentre) return 0.5 * double(b.min[k]) + 0.5 * double(b.max[k]);
  if constexpr (kPoint == SamplePoint::kFloatCentre) return static_cast<float>(0.5f * b.min[k] + 0.5f * b.max[k]);
  return b.min[k];
}

template <SamplePoint kPoint>
void check_against_direct(std::uint64_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::vector<Box3> boxes = random_boxes(10'000 + seed * 37, seed);
  boxes[3].max[1] = std::numeric_limits<float>::infinity();  // left out wherever sampled
  boxes[0].min[0] = std::nanf("");
  const std::size_t stride = sample_stride(boxes.size(), 1000);
  AxisSample s;
  std::array<std::vector<double>, 3> extents;
  add_sample<kPoint, kAllSums>(s, boxes, stride, &extents);

  std::size_t count = 0;
  std::array<double, 3> lo{}, hi{}, sum{}, sum2{}, extent{};
  for (std::size_t i = 0; i < boxes.size(); i += stride) {
    const Box3& b = boxes[i];
    if (i == 0 || i == 3) continue;
    for (int k = 0; k < 3; ++k) {
      const double p = point_of<kPoint>(b, k);
      lo[k] = count == 0 ? p : std::min(lo[k], p);
      hi[k] = count == 0 ? p : std::max(hi[k], p);
      sum[k] += p;
      sum2[k] += p * p;
      extent[k] += double(b.max[k]) - double(b.min[k]);
    }
    ++count;
  }
  ASSERT_EQ(s.count, count);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(s.lo[k], lo[k]);
    EXPECT_EQ(s.hi[k], hi[k]);
    EXPECT_EQ(s.sum[k], sum[k]);
    EXPECT_EQ(s.sum2[k], sum2[k]);
    EXPECT_EQ(s.extent[k], extent[k]);
    EXPECT_EQ(extents[k].size(), count);
    EXPECT_DOUBLE_EQ(s.mean(k), sum[k] / double(count));
    EXPECT_DOUBLE_EQ(s.mean_extent(k), extent[k] / double(count));
    EXPECT_GE(s.variance(k), 0.0);
  }
}

TEST(AxisSampler, SumsMatchADirectComputation) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    check_against_direct<SamplePoint::kCentre>(seed);
    check_against_direct<SamplePoint::kFloatCentre>(seed);
    check_against_direct<SamplePoint::kMin>(seed);
  }
}

TEST(AxisSampler, TwoSpansShareOneStrideAndAnIndirectSampleReadsThroughIt) {
  const std::vector<Box3> a = random_boxes(5000, 7), b = random_boxes(3000, 8);
  const std::size_t stride = sample_stride(a.size() + b.size(), 512);
  AxisSample both;
  add_sample<SamplePoint::kMin, kAllSums>(both, a, stride);
  add_sample<SamplePoint::kMin, kAllSums>(both, b, stride);
  EXPECT_EQ(both.count, (a.size() + stride - 1) / stride + (b.size() + stride - 1) / stride);
  // Through an index list: the boxes of a in reverse order.
  std::vector<std::uint32_t> order(a.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint32_t>(a.size() - 1 - i);
  AxisSample indirect;
  add_sample<SamplePoint::kMin, kAllSums>(indirect, order.size(), 1,
                                          [&](std::size_t i) -> const Box3& { return a[order[i]]; });
  AxisSample direct;
  add_sample<SamplePoint::kMin, kAllSums>(direct, a, 1);
  EXPECT_EQ(indirect.count, direct.count);
  EXPECT_EQ(indirect.lo, direct.lo);
  EXPECT_EQ(indirect.hi, direct.hi);
}

TEST(AxisSampler, RangeOnlySumsNothing) {
  const std::vector<Box3> boxes = random_boxes(1000, 9);
  AxisSample range, all;
  add_sample<SamplePoint::kMin, kRangeOnly>(range, boxes, 1);
  add_sample<SamplePoint::kMin, kAllSums>(all, boxes, 1);
  EXPECT_EQ(range.count, all.count);
  EXPECT_EQ(range.lo, all.lo);
  EXPECT_EQ(range.hi, all.hi);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(range.sum[k] + range.sum2[k] + range.extent[k], 0.0);
}

TEST(AxisSampler, EmptyOrAllInfiniteSampleIsZero) {
  AxisSample s;
  const Box3 inf{{-std::numeric_limits<float>::infinity(), 0, 0}, {0, 0, 0}};
  add_sample<SamplePoint::kCentre, kAllSums>(s, std::vector<Box3>(10, inf), 1);
  EXPECT_EQ(s.count, 0u);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(s.mean(k), 0.0);
    EXPECT_EQ(s.variance(k), 0.0);
    EXPECT_EQ(s.mean_extent(k), 0.0);
    EXPECT_EQ(s.lo[k], 0.0);
    EXPECT_EQ(s.hi[k], 0.0);
  }
}

TEST(AxisSampler, RolesFromTheSpread) {
  AxisSample s;
  s.count = 1;
  s.lo = {0, 0, 0};
  s.hi = {10, 100, 1};  // z spreads least, y most
  AxisRoles r = axis_roles(s, {1, 1, 1});
  EXPECT_EQ(r.t, 2);
  EXPECT_EQ(r.x, 1);
  EXPECT_EQ(r.y, 0);
  r = axis_roles(s, {1, 1000, 1});  // in units: y spreads least, x most
  EXPECT_EQ(r.t, 1);
  EXPECT_EQ(r.x, 0);
  EXPECT_EQ(r.y, 2);
  s.hi = {0, 0, 0};  // no spread at all: the defaults
  r = axis_roles(s, {0, 0, 0});
  EXPECT_EQ(r.t, 2);
  EXPECT_EQ(r.x, 0);
  EXPECT_EQ(r.y, 1);
  s.hi = {5, 0, 0};  // a zero unit with spread: infinite spread, never t
  r = axis_roles(s, {0, 1, 1});
  EXPECT_NE(r.t, 0);
  EXPECT_EQ(r.x, 0);
}

}  // namespace
}  // namespace sapling::detail
