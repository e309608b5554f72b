// Box validation and the closed-interval overlap test that defines sapling's
// semantics.
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "sapling/box.hpp"
#include "sapling/status.hpp"

namespace sapling {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNan = std::numeric_limits<float>::quiet_NaN();

TEST(Box, TouchingBoxesOverlap) {
  const Box3 a{{0, 0, 0}, {1, 1, 1}};
  EXPECT_TRUE(overlaps(a, Box3{{1, 0, 0}, {2, 1, 1}}));  // face
  EXPECT_TRUE(overlaps(a, Box3{{1, 1, 0}, {2, 2, 1}}));  // edge
  EXPECT_TRUE(overlaps(a, Box3{{1, 1, 1}, {2, 2, 2}}));  // corner
  EXPECT_FALSE(overlaps(a, Box3{{std::nextafter(1.0f, 2.0f), 0, 0}, {2, 1, 1}}));
}

TEST(Box, PointsAndSignedZeros) {
  const Box3 point{{0, 0, 0}, {0, 0, 0}};
  EXPECT_TRUE(overlaps(point, point));
  EXPECT_TRUE(overlaps(point, Box3{{-1, -1, -1}, {-0.0f, -0.0f, -0.0f}}));
  EXPECT_TRUE(overlaps(Box3{{-0.0f, 0, 0}, {1, 1, 1}}, Box3{{-1, 0, 0}, {0.0f, 1, 1}}));
}

TEST(Box, InfiniteBoxes) {
  const Box3 ground{{-kInf, -kInf, -1}, {kInf, kInf, 0}};
  EXPECT_TRUE(overlaps(ground, Box3{{1e30f, -1e30f, 0}, {1e30f, -1e30f, 0}}));
  EXPECT_FALSE(overlaps(ground, Box3{{0, 0, 1}, {1, 1, 2}}));
  const Box3 at_infinity{{kInf, 0, 0}, {kInf, 0, 0}};
  EXPECT_TRUE(check_box(at_infinity));
  EXPECT_TRUE(overlaps(at_infinity, Box3{{FLT_MAX, 0, 0}, {kInf, 0, 0}}));
  EXPECT_FALSE(overlaps(at_infinity, Box3{{-kInf, 0, 0}, {FLT_MAX, 0, 0}}));
}

TEST(Box, TwoDimensionsLiftExactly) {
  const Box2 a{{0, 0}, {1, 1}};
  const Box2 b{{1, 1}, {2, 2}};
  const Box2 c{{1.5f, 0}, {2, 0.5f}};
  EXPECT_EQ(overlaps(a, b), overlaps(lift(a), lift(b)));
  EXPECT_EQ(overlaps(a, c), overlaps(lift(a), lift(c)));
  EXPECT_TRUE(overlaps(a, b));
  EXPECT_FALSE(overlaps(a, c));
}

TEST(Box, ValidationNamesFaultAndAxis) {
  EXPECT_TRUE(check_box(Box3{{0, 0, 0}, {0, 0, 0}}));
  EXPECT_TRUE(check_box(Box3{{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}}));
  EXPECT_TRUE(check_box(Box3{{0.0f, 0, 0}, {-0.0f, 0, 0}}));  // -0 == +0
  const BoxCheck nan_min = check_box(Box3{{0, kNan, 0}, {1, 1, 1}});
  EXPECT_EQ(nan_min.fault, BoxFault::kNanMin);
  EXPECT_EQ(nan_min.axis, 1);
  const BoxCheck nan_max = check_box(Box3{{0, 0, 0}, {1, 1, kNan}});
  EXPECT_EQ(nan_max.fault, BoxFault::kNanMax);
  EXPECT_EQ(nan_max.axis, 2);
  const BoxCheck inverted = check_box(Box2{{2, 0}, {1, 1}});
  EXPECT_EQ(inverted.fault, BoxFault::kMinGreaterMax);
  EXPECT_EQ(inverted.axis, 0);
  EXPECT_EQ(check_box(Box3{{kInf, 0, 0}, {-kInf, 1, 1}}).fault, BoxFault::kMinGreaterMax);
}

TEST(Status, MessagesNameWhatAndWhy) {
  EXPECT_EQ(Status::invalid_box(Operation::kAdd, 7, 0, check_box(Box3{{0, 0, 0}, {1, -1, 1}})).message(),
            "add of id 7: invalid box: min.y > max.y");
  EXPECT_EQ(Status::invalid_box(Operation::kMove, 3, 2, check_box(Box3{{kNan, 0, 0}, {1, 1, 1}})).message(),
            "move of id 3: invalid box: min.x is NaN");
  EXPECT_EQ(Status::id_error(StatusCode::kUnknownId, Operation::kRemove, 9, 0).message(),
            "remove of id 9: id is not live");
  EXPECT_EQ(Status::id_error(StatusCode::kDuplicateId, Operation::kAdd, 4294967295u, 1).message(),
            "add of id 4294967295: id is already live");
  EXPECT_EQ(Status::size_mismatch(Operation::kAdd, 3, 2).message(), "add: 3 ids but 2 boxes");
  EXPECT_TRUE(Status().ok());
}

TEST(Box, EnclosingIsTheSmallestBoxHoldingBoth) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  const Box3 a{{0, -1, 2}, {1, 0, 3}}, b{{-inf, 0.5f, 2.5f}, {0.5f, 4, inf}};
  EXPECT_EQ(enclosing(a, b), (Box3{{-inf, -1, 2}, {1, 4, inf}}));
  EXPECT_EQ(enclosing(a, b), enclosing(b, a));
  EXPECT_EQ(enclosing(a, a), a);
  EXPECT_EQ(enclosing(Box2{{0, 0}, {1, 1}}, Box2{{2, -3}, {2, -3}}), (Box2{{0, -3}, {2, 1}}));
}

// Outward rounding and growth, checked through the defining property: the
// result holds the real value, and the next float inward does not.
TEST(Box, RoundingOutwardHoldsTheRealValueTightly) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(round_down(1.0), 1.0f);
  EXPECT_EQ(round_up(1.0), 1.0f);
  EXPECT_EQ(round_down(1.0 + 1e-12), 1.0f);
  EXPECT_EQ(round_up(1.0 + 1e-12), std::nextafter(1.0f, 2.0f));
  EXPECT_EQ(round_down(1e300), std::numeric_limits<float>::max());
  EXPECT_EQ(round_up(1e300), inf);
  EXPECT_EQ(round_down(-1e300), -inf);
  EXPECT_EQ(round_up(-1e300), -std::numeric_limits<float>::max());
  const Box3d planet{{6.371e6 + 0.1, -1e12, 0}, {6.371e6 + 0.2, 1e12 + 1e-3, 1e-40}};
  const Box3 f = outward(planet);
  for (int k = 0; k < 3; ++k) {
    EXPECT_LE(double(f.min[k]), planet.min[k]);
    EXPECT_GT(double(std::nextafter(f.min[k], inf)), planet.min[k]);
    EXPECT_GE(double(f.max[k]), planet.max[k]);
    EXPECT_LT(double(std::nextafter(f.max[k], -inf)), planet.max[k]);
  }
}

TEST(Box, StepFloatIsNextafter) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  const float max = std::numeric_limits<float>::max(), least = std::numeric_limits<float>::denorm_min();
  std::vector<float> values{0.0f, -0.0f, least, -least, 1.0f, -1.0f, max, -max, FLT_MIN, -FLT_MIN, 1e-40f, -1e-40f};
  std::mt19937 random(7);
  for (int i = 0; i < 100000; ++i) {
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(random()));
    if (!std::isnan(f)) values.push_back(f);
  }
  const auto bits = [](float f) { return std::bit_cast<std::uint32_t>(f); };
  for (const float f : values) {
    if (f != inf) {
      EXPECT_EQ(bits(step_float(f, true)), bits(std::nextafter(f, inf))) << f;
    }
    if (f != -inf) {
      EXPECT_EQ(bits(step_float(f, false)), bits(std::nextafter(f, -inf))) << f;
    }
  }
  EXPECT_EQ(step_float(inf, false), max);
  EXPECT_EQ(step_float(-inf, true), -max);
}

TEST(Box, GrownRoundsOutwardWhereTheDoubleRounds) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(grown(Box2{{0, 0}, {1, 1}}, 0.0f), (Box2{{0, 0}, {1, 1}}));
  EXPECT_EQ(grown(Box2{{0, 0}, {1, 1}}, 0.5f), (Box2{{-0.5f, -0.5f}, {1.5f, 1.5f}}));
  // 1 - 1e-30 is 1 in double: the error term says it lies below.
  const Box2 tiny = grown(Box2{{1, -inf}, {1, inf}}, 1e-30f);
  EXPECT_EQ(tiny.min[0], std::nextafter(1.0f, 0.0f));
  EXPECT_EQ(tiny.max[0], std::nextafter(1.0f, 2.0f));
  EXPECT_EQ(tiny.min[1], -inf);
  EXPECT_EQ(tiny.max[1], inf);
  // Exact sums stay exact; near the float range's edge the max goes to inf.
  EXPECT_EQ(grown(Box2{{0.25f, 0}, {0.75f, 0}}, 0.25f), (Box2{{0, -0.25f}, {1, 0.25f}}));
  EXPECT_EQ(grown(Box2{{0, 0}, {std::numeric_limits<float>::max(), 0}}, 1e38f).max[0], inf);
}

#if defined(__SIZEOF_FLOAT128__)
// round_sum() against the exact sum, in quadruple precision (113 bits: a sum
// of two doubles whose exponents differ by at most 60 is exact there): the
// float it gives is on the asked side of a + b and the next float toward a + b
// is not. Sums that land on floats, between them, and on a double that is a
// float while the real sum is not (a tiny b under a large a), on both sides.
TEST(Box, RoundSumIsTheDirectedRoundingOfTheExactSum) {
  using Quad = __float128;
  constexpr float inf = std::numeric_limits<float>::infinity();
  std::mt19937_64 random(41);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<int> scale(-40, 20);
  int exact_doubles = 0;
  for (int i = 0; i < 200000; ++i) {
    double a = std::ldexp(unit(random), scale(random) + 20);
    if (i % 3 == 0) a = static_cast<float>(a);  // on a float: the sum's double is often one too
    const double b = std::ldexp(unit(random), scale(random));
    const Quad sum = Quad(a) + Quad(b);
    const float up = round_sum(a, b, true), down = round_sum(a, b, false);
    ASSERT_GE(Quad(up), sum) << a << " + " << b;
    ASSERT_LT(Quad(std::nextafter(up, -inf)), sum) << a << " + " << b;
    ASSERT_LE(Quad(down), sum) << a << " + " << b;
    ASSERT_GT(Quad(std::nextafter(down, inf)), sum) << a << " + " << b;
    exact_doubles += double(float(a + b)) == a + b && Quad(a + b) != sum ? 1 : 0;
  }
  EXPECT_GT(exact_doubles, 1000);  // the case only TwoSum's error term decides was met
}
#endif

}  // namespace
}  // namespace sapling
