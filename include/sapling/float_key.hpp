// Sortable integer keys of floats (Terdiman 2007, appendix A).
//
// The IEEE-754 bit pattern of a float, read as an unsigned integer, sorts
// positive floats correctly but puts negatives after positives and in reverse
// order. Flipping the sign bit of positives and all bits of negatives fixes
// both ("fix the wrong place, fix the wrong order"), so that for any non-NaN
// floats a and b:  a < b  <=>  float_key(a) < float_key(b), and a == b <=>
// float_key(a) == float_key(b). The paper's version maps -0.0 and +0.0 to
// different keys; ours canonicalises -0.0 first, since the two are equal.
// NaN has no place in the order: callers validate boxes before keying them.
#pragma once

#include <bit>
#include <cstdint>

namespace sapling {

/// The order-preserving unsigned key of a non-NaN float.
constexpr std::uint32_t float_key(float value) noexcept {
  std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  bits = bits == 0x80000000u ? 0u : bits;  // -0.0 -> +0.0
  // Negative: invert every bit. Positive: set the sign bit.
  const std::uint32_t mask = static_cast<std::uint32_t>(static_cast<std::int32_t>(bits) >> 31) | 0x80000000u;
  return bits ^ mask;
}

/// The float whose key is `key` (+0.0 for the key of either zero).
constexpr float key_float(std::uint32_t key) noexcept {
  const std::uint32_t bits = (key & 0x80000000u) ? (key & 0x7fffffffu) : ~key;
  return std::bit_cast<float>(bits);
}

}  // namespace sapling
