// The inner loop of box pruning (Terdiman 2007, I.4c; the SIMD form follows
// the "SIMD test of the two other axes at once" step of his later series,
// see shared/NOTES-algorithms.md): given a box, scan the boxes that follow it
// in sweep order while their min key is not past its max key, and test the
// two other axes of each candidate.
//
// The two other axes a and b of a candidate are stored as
//   (max_a, max_b, -min_a, -min_b)
// and the scanning box forms the query (min_a, min_b, -max_a, -max_b): the
// boxes overlap on both axes iff query <= candidate in all four lanes, one
// SIMD compare. Negation is exact, infinities included.
//
// The instruction set is chosen at build time: AVX2 tests two candidates per
// compare, SSE2 (every x86-64) one, and a scalar loop serves other targets
// and the SAPLING_SCALAR build that tests it.
#pragma once

#include <cstdint>

#if !defined(SAPLING_SCALAR) && defined(__AVX2__)
#define SAPLING_PRUNE_AVX2 1
#include <immintrin.h>
#elif !defined(SAPLING_SCALAR) && defined(__SSE2__)
#define SAPLING_PRUNE_SSE2 1
#include <emmintrin.h>
#endif

namespace sapling::detail::prune {

struct alignas(16) CrossAxes {
  float v[4];
};

/// The candidate form of the two other axes of a box.
inline CrossAxes cross_axes(float min_a, float min_b, float max_a, float max_b) {
  return CrossAxes{{max_a, max_b, -min_a, -min_b}};
}
inline float min_a(const CrossAxes& c) { return -c.v[2]; }
inline float min_b(const CrossAxes& c) { return -c.v[3]; }

/// Calls hit(j) for each j >= from, in order, such that min_key[j] <=
/// max_key and cross[j] overlaps `self` on both other axes. The run must be
/// closed by a sentinel whose min key exceeds every max key, and, for the
/// AVX2 loop, cross[] must be readable one entry past the sentinel's
/// predecessor (the sentinel's own slot).
///
/// Hits are rare among candidates (a few percent) and unpredictable, so the
/// loop does not branch on them: every candidate's index is written to a
/// small buffer and the write position advances by the test's outcome; the
/// buffer goes to hit() when full and at the end.
template <class Hit>
inline void scan(const CrossAxes& self, std::uint32_t max_key, const std::uint32_t* min_key, const CrossAxes* cross,
                 std::uint32_t from, Hit&& hit) {
  constexpr std::uint32_t kBuffer = 64;
  std::uint32_t found[kBuffer];
  std::uint32_t n = 0;
  auto flush = [&] {
    for (std::uint32_t k = 0; k < n; ++k) hit(found[k]);
    n = 0;
  };
#if defined(SAPLING_PRUNE_AVX2)
  const __m128 x = _mm_load_ps(self.v);
  const __m128 q = _mm_xor_ps(_mm_shuffle_ps(x, x, _MM_SHUFFLE(1, 0, 3, 2)), _mm_set1_ps(-0.0f));
  const __m256 query = _mm256_set_m128(q, q);
  for (std::uint32_t j = from; min_key[j] <= max_key; j += 2) {
    // Two candidates per compare; j + 1 is at worst the sentinel.
    const int outside = _mm256_movemask_ps(_mm256_cmp_ps(query, _mm256_loadu_ps(cross[j].v), _CMP_GT_OQ));
    found[n] = j;
    n += (outside & 0xf) == 0;
    if (min_key[j + 1] > max_key) break;
    found[n] = j + 1;
    n += (outside >> 4) == 0;
    if (n >= kBuffer - 1) [[unlikely]]
      flush();
  }
#elif defined(SAPLING_PRUNE_SSE2)
  const __m128 x = _mm_load_ps(self.v);
  const __m128 query = _mm_xor_ps(_mm_shuffle_ps(x, x, _MM_SHUFFLE(1, 0, 3, 2)), _mm_set1_ps(-0.0f));
  for (std::uint32_t j = from; min_key[j] <= max_key; ++j) {
    found[n] = j;
    n += _mm_movemask_ps(_mm_cmpgt_ps(query, _mm_load_ps(cross[j].v))) == 0;
    if (n == kBuffer) [[unlikely]]
      flush();
  }
#else
  const float q0 = -self.v[2], q1 = -self.v[3], q2 = -self.v[0], q3 = -self.v[1];
  for (std::uint32_t j = from; min_key[j] <= max_key; ++j) {
    const float* c = cross[j].v;
    found[n] = j;
    n += (q0 <= c[0]) & (q1 <= c[1]) & (q2 <= c[2]) & (q3 <= c[3]);
    if (n == kBuffer) [[unlikely]]
      flush();
  }
#endif
  flush();
}

}  // namespace sapling::detail::prune
