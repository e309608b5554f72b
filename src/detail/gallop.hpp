// A galloping search (exponential search, Bentley and Yao 1976) in a sorted
// run, from a guess: steps of 1, 2, 4, ... up or down from the guess until
// the answer is bracketed, then halving inside the bracket. It costs
// O(log d) reads for an answer d places from the guess, so a good guess (the
// last answer of a sorted batch of searches, or where the key would lie were
// the keys spread evenly) reads a few neighbouring lines where a binary
// search of the whole run reads one line per halving.
#pragma once

#include <algorithm>
#include <cstdint>

namespace sapling::detail {

/// The first i in [from, end) with key_at(i) >= key, or end if there is
/// none; key_at(i) must not decrease over [from, end), and is never read at
/// end. `guess` lies in [from, end].
template <class KeyAt, class Key>
std::uint32_t first_at_least(std::uint32_t from, std::uint32_t end, std::uint32_t guess, const KeyAt& key_at,
                             const Key& key) {
  std::uint32_t lo, hi;  // key_at(lo) < key <= key_at(hi), hi read only below end
  if (guess < end && key_at(guess) < key) {
    lo = guess;
    for (std::uint32_t step = 1;; step *= 2) {
      hi = end - lo > step ? lo + step : end;
      if (hi == end || !(key_at(hi) < key)) break;
      lo = hi;
    }
  } else {
    hi = guess;
    for (std::uint32_t step = 1;; step *= 2) {
      if (hi == from) return from;
      lo = hi - std::min(step, hi - from);
      if (key_at(lo) < key) break;
      hi = lo;
    }
  }
  while (hi - lo > 1) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    (key_at(mid) < key ? lo : hi) = mid;
  }
  return hi;
}

}  // namespace sapling::detail
