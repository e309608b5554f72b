// Object ids and pairs of ids.
#pragma once

#include <compare>
#include <cstdint>

namespace sapling {

/// A user's name for an object: any 32-bit value, 0 and 2^32-1 included.
using Id = std::uint32_t;

/// An unordered pair of distinct ids, stored with `a < b`.
struct Pair {
  Id a = 0;
  Id b = 0;

  friend constexpr auto operator<=>(const Pair&, const Pair&) = default;
};

/// An index pair (i, j), i != j, into the box span given to a one-shot query.
struct IndexPair {
  std::uint32_t i = 0;
  std::uint32_t j = 0;
};

/// The pair {x, y} in canonical order; requires x != y.
constexpr Pair make_pair(Id x, Id y) noexcept { return x < y ? Pair{x, y} : Pair{y, x}; }

/// A 64-bit key that orders pairs like (a, b) does.
constexpr std::uint64_t pair_key(Pair p) noexcept { return (std::uint64_t{p.a} << 32) | p.b; }

}  // namespace sapling
