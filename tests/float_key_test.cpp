// The sortable float key must order exactly like float comparison (with
// -0.0 == +0.0) on every special value and on millions of random floats,
// and invert exactly.
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "sapling/float_key.hpp"

namespace sapling {
namespace {

std::vector<float> special_values() {
  const float inf = std::numeric_limits<float>::infinity();
  const float denorm_min = std::numeric_limits<float>::denorm_min();
  std::vector<float> base = {0.0f, -0.0f, inf,  -inf,  FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN, denorm_min,  -denorm_min,
                             1.0f, -1.0f, 0.5f, -0.5f, 1e-30f,  -1e-30f,  1e30f,   -1e30f,   16777216.0f, -16777216.0f};
  std::vector<float> values;
  for (const float v : base) {
    values.push_back(v);
    values.push_back(std::nextafter(v, inf));
    values.push_back(std::nextafter(v, -inf));
  }
  // The largest denormal and its neighbours, where the exponent field changes.
  const float max_denorm = std::bit_cast<float>(0x007fffffu);
  values.insert(values.end(), {max_denorm, -max_denorm, std::bit_cast<float>(0x00800000u)});
  return values;
}

void expect_same_order(float x, float y) {
  SCOPED_TRACE(testing::Message() << std::hexfloat << x << " vs " << y);
  EXPECT_EQ(x < y, float_key(x) < float_key(y));
  EXPECT_EQ(x == y, float_key(x) == float_key(y));
  EXPECT_EQ(x > y, float_key(x) > float_key(y));
}

TEST(FloatKey, SpecialValuesOrderLikeFloats) {
  const std::vector<float> values = special_values();
  for (const float x : values) {
    for (const float y : values) expect_same_order(x, y);
  }
}

TEST(FloatKey, SignedZerosAreEqual) {
  EXPECT_EQ(float_key(-0.0f), float_key(0.0f));
  EXPECT_EQ(float_key(0.0f), 0x80000000u);
  EXPECT_LT(float_key(-std::numeric_limits<float>::denorm_min()), float_key(-0.0f));
  EXPECT_GT(float_key(std::numeric_limits<float>::denorm_min()), float_key(-0.0f));
}

TEST(FloatKey, InfinitiesAreTheExtremes) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_LT(float_key(-inf), float_key(-FLT_MAX));
  EXPECT_GT(float_key(inf), float_key(FLT_MAX));
  // Keys of non-NaN floats leave room at both ends (useful for sentinels).
  EXPECT_GT(float_key(-inf), 0u);
  EXPECT_LT(float_key(inf), 0xffffffffu);
}

TEST(FloatKey, RoundTripsEveryStridedBitPattern) {
  // Every 251st bit pattern (a prime stride covers all exponents and many
  // mantissas), both signs; NaNs skipped.
  for (std::uint64_t bits = 0; bits <= 0xffffffffull; bits += 251) {
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    if (std::isnan(f)) continue;
    const float back = key_float(float_key(f));
    if (f == 0.0f) {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(back), 0u);
    } else {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(back), std::bit_cast<std::uint32_t>(f)) << std::hexfloat << f;
    }
  }
}

TEST(FloatKey, KeysIncreaseAlongTheOrderOfAllFloats) {
  // Every non-NaN float, by rank: -inf, ..., -denorm_min, -0, +0,
  // denorm_min, ..., +inf. Walking the ranks (strided, plus every rank near
  // the ends and around zero) the keys must strictly increase, except from
  // -0 to +0 where they are equal.
  constexpr std::uint64_t kHalf = 0x7f800001ull;  // -inf..-0 (and +0..+inf)
  auto float_of_rank = [](std::uint64_t rank) {
    const auto bits =
        rank < kHalf ? static_cast<std::uint32_t>(0xff800000ull - rank) : static_cast<std::uint32_t>(rank - kHalf);
    return std::bit_cast<float>(bits);
  };
  auto check_step = [&](std::uint64_t r0, std::uint64_t r1) {
    const float x = float_of_rank(r0), y = float_of_rank(r1);
    if (x == 0.0f && y == 0.0f) {
      ASSERT_EQ(float_key(x), float_key(y));
    } else {
      ASSERT_LT(float_key(x), float_key(y)) << std::hexfloat << x << " -> " << y;
    }
  };
  for (std::uint64_t r = 0; r + 61 < 2 * kHalf; r += 61) check_step(r, r + 61);
  for (std::uint64_t r = 0; r < 100000; ++r) check_step(r, r + 1);                          // from -inf
  for (std::uint64_t r = kHalf - 100000; r < kHalf + 100000; ++r) check_step(r, r + 1);     // around zero
  for (std::uint64_t r = 2 * kHalf - 100001; r + 1 < 2 * kHalf; ++r) check_step(r, r + 1);  // to +inf
}

TEST(FloatKey, MillionsOfRandomPairsOrderLikeFloats) {
  std::mt19937 rng(12345);
  std::uniform_int_distribution<std::uint32_t> any_bits;
  std::uniform_real_distribution<float> near(-4.0f, 4.0f);
  auto random_float = [&](int kind) {
    for (;;) {
      const float f = kind == 0 ? std::bit_cast<float>(any_bits(rng)) : near(rng);
      if (!std::isnan(f)) return f;
    }
  };
  for (int i = 0; i < 4'000'000; ++i) {
    const float x = random_float(i & 1);
    const float y = (i & 2) ? random_float(i & 1) : x * -1.0f;
    const std::uint32_t kx = float_key(x), ky = float_key(y);
    if ((x < y) != (kx < ky) || (x == y) != (kx == ky)) {
      FAIL() << std::hexfloat << x << " vs " << y;
    }
  }
}

}  // namespace
}  // namespace sapling
