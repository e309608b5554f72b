// Large worlds (large_world.hpp).
#include "core/broad_phase/large_world.hpp"

#include <cfenv>
#include <cmath>
#include <type_traits>

#if !defined(SAPLING_SCALAR) && defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

#include "detail/reserve.hpp"

namespace sapling::detail {

#if !defined(SAPLING_SCALAR) && defined(__SSE2__)
namespace {

// The SSE unit rounding toward -inf, every exception masked, subnormals
// kept (no flush to zero, no denormals read as zero), for a loop of
// round_pair()s; the caller's mode and flags come back when it ends.
class RoundingDown {
 public:
  RoundingDown() noexcept : saved_(_mm_getcsr()) { _mm_setcsr(_MM_MASK_MASK | _MM_ROUND_DOWN); }
  ~RoundingDown() { _mm_setcsr(saved_); }
  RoundingDown(const RoundingDown&) = delete;
  RoundingDown& operator=(const RoundingDown&) = delete;

 private:
  unsigned saved_;
};

// Two differences a + b rounded to floats, min lanes down and max lanes up
// (`up`: the sign bit in a lane rounded up), in the two low lanes, under
// RoundingDown. A sum rounded toward -inf twice (to double, then to float)
// is the sum rounded toward -inf once: floats are doubles. A max lane is
// rounded up as -(-a - b) rounded down. An exact zero comes out -0 when
// rounded down; round_sum() (round to nearest) gives -0 only for -0 + -0,
// so a min lane's -0 becomes +0 unless both terms are -0 (a max lane's
// negations already give round_sum()'s sign). Bit for bit round_sum()
// (LargeWorld.OutwardRelativeIsRoundSumBitForBit).
inline __m128 round_pair(__m128d a, __m128d b, __m128d up) noexcept {
  const __m128d sign = _mm_set1_pd(-0.0);
  const __m128d s = _mm_add_pd(_mm_xor_pd(a, up), _mm_xor_pd(b, up));
  const __m128d stray_sign = _mm_and_pd(_mm_cmpeq_pd(s, _mm_setzero_pd()), _mm_andnot_pd(up, sign));
  const __m128d zero_fixed = _mm_andnot_pd(_mm_andnot_pd(_mm_and_pd(a, b), stray_sign), s);
  // The lanes' sign masks as the floats' (two low 32-bit lanes).
  const __m128 up32 = _mm_castsi128_ps(_mm_shuffle_epi32(_mm_castpd_si128(up), _MM_SHUFFLE(3, 3, 3, 1)));
  return _mm_xor_ps(_mm_cvtpd_ps(zero_fixed), up32);
}

}  // namespace
#endif

// The six differences two at a time where SSE2 is at hand, in the order the
// boxes keep their bounds: (min0, min1), (min2, max0), (max1, max2), with
// the rounding mode set once for the whole span. A million boxes, in
// cache: TwoSum on two lanes (the side chosen by comparisons) 10 ms, this
// 2.6 ms; out of memory both wait on it (48 MB read, 24 written).
void outward_relative(std::span<const Box3d> boxes, const std::array<double, 3>& origin, Box3* out) noexcept {
#if !defined(SAPLING_SCALAR) && defined(__SSE2__)
  static_assert(sizeof(Box3d) == 6 * sizeof(double) && sizeof(Box3) == 6 * sizeof(float));
  static_assert(std::is_trivially_copyable_v<Box3> && std::is_trivially_copyable_v<Box3d>);
  const __m128d sign = _mm_set1_pd(-0.0), down = _mm_setzero_pd();
  const __m128d up_low = _mm_move_sd(sign, down);  // (min2, max0): the second lane up
  const __m128d lows_b = _mm_set_pd(-origin[1], -origin[0]);
  const __m128d middle_b = _mm_set_pd(-origin[0], -origin[2]);
  const __m128d highs_b = _mm_set_pd(-origin[2], -origin[1]);
  const RoundingDown mode;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    const double* bounds = boxes[i].min.data();  // min0 min1 min2 max0 max1 max2
    const __m128 lows = round_pair(_mm_loadu_pd(bounds), lows_b, down);
    const __m128 middle = round_pair(_mm_loadu_pd(bounds + 2), middle_b, up_low);
    const __m128 highs = round_pair(_mm_loadu_pd(bounds + 4), highs_b, sign);
    // Two stores, 16 and 8 bytes, that a copy of the box reads back whole
    // (four smaller ones stalled its 16-byte read: no store forwarding).
    char* const bytes = static_cast<char*>(static_cast<void*>(out + i));
    _mm_storeu_ps(reinterpret_cast<float*>(bytes), _mm_movelh_ps(lows, middle));  // min0, min1, min2, max0
    _mm_storel_pi(reinterpret_cast<__m64*>(bytes + 4 * sizeof(float)), highs);
  }
#else
  // round_sum()'s TwoSum is exact under round-to-nearest only: that mode
  // for the span, whatever the caller's, which comes back after.
  const int callers = std::fegetround();
  std::fesetround(FE_TONEAREST);
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    for (int k = 0; k < 3; ++k) {
      out[i].min[k] = round_sum(boxes[i].min[k], -origin[k], false);  // box.hpp: exact, TwoSum
      out[i].max[k] = round_sum(boxes[i].max[k], -origin[k], true);
    }
  }
  std::fesetround(callers);
#endif
}

Box3 outward_relative(const Box3d& box, const std::array<double, 3>& origin) noexcept {
  Box3 f;
  outward_relative(std::span(&box, 1), origin, &f);
  return f;
}

void ExactBoxes::reserve_slots(std::size_t slots) {
  if (!in_use) return;
  reserve_geometric(boxes, slots);
  reserve_geometric(given, slots);
}

void LargeWorld::commit(ExactBoxes& table, std::span<const Slot> moved) noexcept {
  if (!table.in_use) return;
  if (staged_slots.size() != moved.size()) {  // some were given as float
    for (const Slot s : moved) table.given[s] = 0;
  }
  for (std::size_t k = 0; k < staged_slots.size(); ++k) {
    table.boxes[staged_slots[k]] = staged_boxes[k];
    table.given[staged_slots[k]] = 1;
  }
  drop_staged();
}

}  // namespace sapling::detail
